/*
 * src/flow/feature/bstats.h - the bstats feature set: a flow's bursts per direction, as
 * ipfixprobe's bstats plugin finds them. docs/FLOW.md "Features: bstats".
 *
 * A burst (ipfixprobe's definition): at least SECHO_BSTATS_MIN_PKTS packets with payload
 * in one direction, each less than SECHO_BSTATS_GAP_US microseconds after the previous one
 * of that direction (times compared at microsecond precision, as ipfixprobe's timevals
 * are). Per direction, packets are gathered into a candidate; a packet too late for it
 * closes it, and the candidate becomes a burst when it has enough packets (else it is
 * dropped), and the late packet starts the next candidate. At most SECHO_BSTATS_MAX bursts
 * per direction; from the SECHO_BSTATS_MAX-th the direction stops. The last candidate
 * counts if it is a burst (secho_feat_bstats_count, ipfixprobe's pre_export). Packets
 * without payload are never counted.
 *
 * Fields (JSON name: ipfixprobe's UniRec name in lower case; IPFIX: the basicList
 * (RFC 6313, element 291) member ipfixprobe exports, PEN:ID), lists of the bursts:
 *
 *   sbi_brst_packets     8057:1050   u32[]   forward: packets in each burst
 *   sbi_brst_bytes       8057:1051   u32[]   forward: payload bytes (p->wire_len summed)
 *   sbi_brst_time_start  8057:1052   time[]  forward: the first packet's time (JSON: ns)
 *   sbi_brst_time_stop   8057:1053   time[]  forward: the last packet's time (JSON: ns)
 *   dbi_brst_*           8057:1054-1057      the same for the reverse direction
 *
 * Export rule (ipfixprobe's): a flow of SECHO_BSTATS_MIN_PKTS packets or fewer has no
 * bstats (secho_feat_bstats_keep).
 */
#ifndef SECHO_FLOW_FEATURE_BSTATS_H
#define SECHO_FLOW_FEATURE_BSTATS_H

#include "flow/feature/feature.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SECHO_BSTATS_MAX      15
#define SECHO_BSTATS_MIN_PKTS 3
#define SECHO_BSTATS_GAP_US   1000000u /* 1000 ms */

struct secho_bstats_dir {
	uint32_t pkts[SECHO_BSTATS_MAX];
	uint32_t bytes[SECHO_BSTATS_MAX];
	uint64_t start_ns[SECHO_BSTATS_MAX];
	uint64_t stop_ns[SECHO_BSTATS_MAX];
	uint16_t count;  /* closed bursts */
	uint8_t started; /* a candidate exists at [count] */
	uint8_t pad[5];
};

/* The per-flow state: made ready by secho_feat_bstats_init when the set becomes live for a
 * record (sets.h, "Live sets"). */
struct secho_feat_bstats {
	struct secho_bstats_dir d[2];
	uint8_t done; /* both directions have SECHO_BSTATS_MAX bursts */
	uint8_t pad[7];
};
#define SECHO_FEAT_BSTATS_SIZE 744
_Static_assert(sizeof(struct secho_feat_bstats) == SECHO_FEAT_BSTATS_SIZE, "bstats state size");

/* Make s ready for a record: each direction's burst count and candidate flag, and done,
 * zeroed; the lists (read below the count, and the candidate's entry once started) are
 * not. Can't fail. */
void secho_feat_bstats_init(struct secho_feat_bstats *s);

void secho_feat_bstats_packet(struct secho_feat_bstats *s, const struct secho_feat_pkt *p);

/* Bursts of direction dir at export: the closed ones, and the last candidate if it is one. */
unsigned secho_feat_bstats_count(const struct secho_feat_bstats *s, unsigned dir);

/* Whether a record of packets packets (both directions) carries bstats. */
bool secho_feat_bstats_keep(uint64_t packets);

/* The lists as JSON members, nothing when neither direction has a burst: bytes written, or
 * -ENOSPC. */
int secho_feat_bstats_json(const struct secho_feat_bstats *s, char *buf, size_t cap);

#endif
