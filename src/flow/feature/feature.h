/*
 * src/flow/feature/feature.h - what the flow meter's feature sets see of a packet, and the
 * shape every feature set has (issue: `secho flow --features LIST`; docs/FLOW.md).
 *
 * A feature set is application fields (tls, quic, dns, http, wg) or per-packet statistics
 * (pstats, phists, bstats) taken from a flow's packets. Each one, in src/flow/feature/X.{h,c}:
 *
 *   struct secho_feat_X         its per-flow state: fixed size (its bytes are in its header),
 *                               no pointers out of it; what is exported is read from it when
 *                               the record leaves. All zero is the state of a set that found
 *                               nothing (what a set not live in a record reads, sets.h)
 *   secho_feat_X_wants(p)       whether the set reads p's flow (protocol, ports): cheap; the
 *                               statistics sets read every flow and have none
 *   secho_feat_X_init(s)        the state made ready for a record when the set becomes live:
 *                               its fixed part zeroed, its large buffers left as they are
 *                               (an earlier record's bytes): every reader of a buffer keeps
 *                               within the length (or under the flag) that governs it, so a
 *                               record's fields are those of an all-zero start
 *   secho_feat_X_packet(s, p)   one packet of the flow (struct secho_feat_pkt below), in
 *                               packet order per direction; bounded work, no allocation, never
 *                               reads outside p->payload[0..p->len); a set that has what it
 *                               wants stops looking (its state says so)
 *   its fields                  each with its JSON name and IPFIX element (enterprise number
 *                               and ID as ipfixprobe exports it), documented in its header
 *
 * Parsers describe what the bytes say and never guess: a field that was not seen, or was cut
 * short by a bound, says so (a length of 0, a truncated flag). This room includes only the
 * layers below it (src/crypto through include/secho, src/sys); the table and the exporters call
 * into it, never the other way round.
 */
#ifndef SECHO_FLOW_FEATURE_H
#define SECHO_FLOW_FEATURE_H

#include <stdint.h>

/* Directions within a flow: the forward one is its first packet's (RFC 5103). */
#define SECHO_FEAT_FWD 0
#define SECHO_FEAT_REV 1

/* One packet of a flow, as a feature set sees it. */
struct secho_feat_pkt {
	const uint8_t *payload; /* the transport payload (TCP or UDP data): captured bytes */
	uint32_t len;           /* bytes at payload */
	uint32_t wire_len;      /* the payload's length on the wire (> len for snapped captures) */
	uint64_t ts_ns;         /* packet time, ns since the epoch */
	uint32_t ip_len;        /* the IP packet's length (IPv4 total length, IPv6 40 + payload) */
	uint32_t tcp_seq;       /* TCP sequence number (proto 6) */
	uint16_t sport, dport;  /* in the packet's own direction (host order) */
	uint8_t proto;          /* protocolIdentifier: 6 TCP, 17 UDP, ... */
	uint8_t dir;            /* SECHO_FEAT_FWD or SECHO_FEAT_REV */
	uint8_t tcp_flags;      /* TCP: CWR ECE URG ACK PSH RST SYN FIN */
	uint8_t pad;
};

#endif
