/*
 * src/flow/feature/pstats.h - the pstats feature set: the size, time, TCP flags and direction
 * of a flow's first SECHO_PSTATS_MAX packets, as ipfixprobe's pstats plugin records them.
 * docs/FLOW.md "Features: pstats".
 *
 * Fields (JSON name: ipfixprobe's UniRec name in lower case; IPFIX element: the basicList
 * (RFC 6313, element 291) member ipfixprobe exports, PEN:ID):
 *
 *   JSON                 IPFIX list of   type        from
 *   ppi_pkt_lengths      8057:1013       u16[]       the transport payload's length on the
 *                                                    wire (p->wire_len, 65535 at most)
 *   ppi_pkt_times        8057:1014       time[]      packet time; JSON: ns since the epoch
 *                                                    (ipfixprobe's IPFIX: milliseconds)
 *   ppi_pkt_flags        8057:1015       u8[]        TCP flags (0 for other transports)
 *   ppi_pkt_directions   8057:1016       i8[]        1 forward, -1 reverse
 *   (at most SECHO_PSTATS_MAX entries each, the same count in all four)
 *
 * Packets without payload are skipped unless SECHO_PSTATS_INCLUDE_ZEROES is given
 * (ipfixprobe's "includezeroes"). ipfixprobe's "skipdup" (TCP retransmissions recognised by
 * sequence and acknowledgement numbers) is not offered: the packet view has no ACK number.
 * Export rule (ipfixprobe's): a flow of one packet whose flags include SYN has no pstats
 * (secho_feat_pstats_keep).
 */
#ifndef SECHO_FLOW_FEATURE_PSTATS_H
#define SECHO_FLOW_FEATURE_PSTATS_H

#include "flow/feature/feature.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SECHO_PSTATS_MAX            30
#define SECHO_PSTATS_INCLUDE_ZEROES 0x1 /* option: empty packets recorded too */

/* One packet: 12 bytes, its time in two 32-bit halves (no padding), so that a packet writes
 * one place and a flow of a few packets a line or two, the count's among them. */
struct secho_pstats_pkt {
	uint32_t ts_lo, ts_hi; /* ns since the epoch: secho_pstats_ts */
	uint16_t size;
	uint8_t flags;
	int8_t dir; /* 1 forward, -1 reverse */
};

/* The per-flow state: made ready by secho_feat_pstats_init when the set becomes live for a
 * record (sets.h, "Live sets"). */
struct secho_feat_pstats {
	uint8_t count;
	uint8_t done;   /* SECHO_PSTATS_MAX recorded */
	uint8_t pad[6]; /* a multiple of 8 bytes, as a layout places it */
	struct secho_pstats_pkt pkt[SECHO_PSTATS_MAX];
};
#define SECHO_FEAT_PSTATS_SIZE 368
_Static_assert(sizeof(struct secho_feat_pstats) == SECHO_FEAT_PSTATS_SIZE, "pstats state size");

/* A packet's time, ns since the epoch. */
static inline uint64_t secho_pstats_ts(const struct secho_pstats_pkt *e)
{
	return (uint64_t)e->ts_hi << 32 | e->ts_lo;
}

static inline void secho_pstats_set_ts(struct secho_pstats_pkt *e, uint64_t ts_ns)
{
	e->ts_lo = (uint32_t)ts_ns;
	e->ts_hi = (uint32_t)(ts_ns >> 32);
}

/* Make s ready for a record: count and done zeroed; the lists (read up to count) are not.
 * Can't fail. */
void secho_feat_pstats_init(struct secho_feat_pstats *s);

/* One packet, with options SECHO_PSTATS_* (0: ipfixprobe's default). */
void secho_feat_pstats_packet_opt(struct secho_feat_pstats *s, const struct secho_feat_pkt *p,
                                  unsigned opts);
/* One packet, default options. */
void secho_feat_pstats_packet(struct secho_feat_pstats *s, const struct secho_feat_pkt *p);

/* Whether a record of packets packets whose TCP flags (both directions OR-ed) are
 * tcp_flags carries pstats: not a lone SYN. */
bool secho_feat_pstats_keep(uint64_t packets, uint8_t tcp_flags);

/* The lists as JSON members (",\"ppi_pkt_lengths\":[...]..."), nothing when no packet was
 * recorded: bytes written, or -ENOSPC. */
int secho_feat_pstats_json(const struct secho_feat_pstats *s, char *buf, size_t cap);

#endif
