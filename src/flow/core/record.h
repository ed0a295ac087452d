/*
 * src/flow/core/record.h - one flow record: what the flow table hands to the exporters (IPFIX to
 * collectors, JSON lines for people and scripts) when a flow leaves the table.
 *
 * The fields are what the records carry on the wire; the IPFIX information element each one
 * is exported as is named beside it (IANA "IP Flow Information Export (IPFIX) Entities";
 * reverse counters of a biflow under RFC 5103's reverse PEN 29305).
 *
 * Direction: the key is the forward direction, the one of the flow's first packet (RFC 5103
 * section 5.2). In uniflow mode every record has one direction and rev is all zero.
 *
 * Addresses are stored in network order, IPv4 in the first 4 bytes with the other 12 zero,
 * so that keys compare and hash as plain bytes. Ports and ICMP type/code in host order.
 */
#ifndef SECHO_FLOW_RECORD_H
#define SECHO_FLOW_RECORD_H

#include <stdint.h>

#include "flow/core/key.h"

/* flowEndReason (IE 136), RFC 7011 / IANA. */
#define SECHO_FLOW_END_IDLE     1 /* inactive timeout */
#define SECHO_FLOW_END_ACTIVE   2 /* active timeout: the flow goes on in a new record */
#define SECHO_FLOW_END_EOF      3 /* end of flow detected: TCP FIN or RST */
#define SECHO_FLOW_END_FORCED   4 /* forced end: end of input, shutdown */
#define SECHO_FLOW_END_RESOURCE 5 /* lack of resources: evicted from a full bucket */

struct secho_flow_dir {
	uint64_t packets;  /* packetDeltaCount (2) */
	uint64_t octets;   /* octetDeltaCount (1): IP total length, as ipfixprobe and nfdump */
	uint64_t first_ns; /* flowStartMilliseconds (152): packet time, ns since the epoch */
	uint64_t last_ns;  /* flowEndMilliseconds (153) */
	uint8_t tcp_flags; /* tcpControlBits (6): OR of the direction's packets */
};

struct secho_flow_rec {
	struct secho_flow_key key;
	struct secho_flow_dir fwd; /* packets from key.src to key.dst */
	struct secho_flow_dir rev; /* the reverse direction (biflows); all zero in uniflow mode */
	uint8_t end_reason;        /* flowEndReason (136): SECHO_FLOW_END_* */
};

/* The reverse direction's ICMP type << 8 | code: the answer to the forward's (key.h,
 * secho_flow_icmp_answer: every packet of a biflow's reverse direction carries it); 0
 * without reverse packets and for flows that are not ICMP. Can't fail. */
static inline uint16_t secho_flow_rec_rev_icmp(const struct secho_flow_rec *r)
{
	const struct secho_flow_key *k = &r->key;
	bool icmp = (k->ip_version == 4 && k->proto == 1) || (k->ip_version == 6 && k->proto == 58);

	if (!r->rev.packets || !icmp)
		return 0;
	return secho_flow_icmp_answer(k->ip_version, k->proto, k->icmp_type_code);
}

#endif
