/*
 * src/flow/feature/phists.h - the phists feature set: per direction, histograms of packet
 * sizes and inter-packet times in 8 log2 bins, as ipfixprobe's phists plugin counts them.
 * docs/FLOW.md "Features: phists".
 *
 * Bins (both histograms, ipfixprobe's edges): [0,15] [16,31] [32,63] [64,127] [128,255]
 * [256,511] [512,1023] [1024,inf). Sizes: the transport payload's length on the wire
 * (p->wire_len). Inter-packet times: milliseconds between a packet and the previous counted
 * packet of the same direction, each time first floored to whole milliseconds since the epoch
 * (as ipfixprobe does: 0.9999 s and 1.0001 s are 1 ms apart); a time that goes backwards
 * counts as 0; a direction's first packet has none. Counters saturate at 2^32-1.
 *
 * Fields (JSON name: ipfixprobe's UniRec name in lower case; IPFIX: the basicList
 * (RFC 6313, element 291) member ipfixprobe exports, PEN:ID), each a u32[8]:
 *
 *   s_phists_sizes   8057:1060      forward packet sizes
 *   s_phists_ipt     8057:1061      forward inter-packet times
 *   d_phists_sizes   8057:1062      reverse packet sizes
 *   d_phists_ipt     8057:1063      reverse inter-packet times
 *
 * Packets without payload are not counted unless SECHO_PHISTS_INCLUDE_ZEROES is given
 * (ipfixprobe's "includezeroes"). Export rule (ipfixprobe's): a flow of one packet whose
 * flags include SYN has no phists (secho_feat_phists_keep). Every packet is wanted: the set
 * is never done.
 */
#ifndef SECHO_FLOW_FEATURE_PHISTS_H
#define SECHO_FLOW_FEATURE_PHISTS_H

#include "flow/feature/feature.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SECHO_PHISTS_BINS           8
#define SECHO_PHISTS_INCLUDE_ZEROES 0x1

/* A direction's two histograms: one cache line (a packet updates its direction's line and
 * the last one; phists comes first in a slot, at offset 0: sets.c). */
struct secho_phists_dir {
	uint32_t size[SECHO_PHISTS_BINS]; /* [bin] */
	uint32_t ipt[SECHO_PHISTS_BINS];
};
_Static_assert(sizeof(struct secho_phists_dir) == 64, "one cache line");

/* The per-flow state: made ready by secho_feat_phists_init when the set becomes live for a
 * record (sets.h, "Live sets"). */
struct secho_feat_phists {
	struct secho_phists_dir d[2]; /* [direction] */
	uint64_t last_ms[2]; /* the direction's previous counted packet, ms since the epoch */
	uint8_t have_last[2];
	uint8_t counted; /* a packet was counted: the fields are set */
	uint8_t done;    /* always 0 */
	uint8_t pad[4];
};
#define SECHO_FEAT_PHISTS_SIZE 152
_Static_assert(sizeof(struct secho_feat_phists) == SECHO_FEAT_PHISTS_SIZE, "phists state size");

/* The bin of a size or a time in ms. Can't fail. */
unsigned secho_phists_bin(uint32_t v);

/* Make s ready for a record (all of it zeroed: the counters accumulate). Can't fail. */
void secho_feat_phists_init(struct secho_feat_phists *s);

void secho_feat_phists_packet_opt(struct secho_feat_phists *s, const struct secho_feat_pkt *p,
                                  unsigned opts);
void secho_feat_phists_packet(struct secho_feat_phists *s, const struct secho_feat_pkt *p);
bool secho_feat_phists_keep(uint64_t packets, uint8_t tcp_flags);
int secho_feat_phists_json(const struct secho_feat_phists *s, char *buf, size_t cap);

#endif
