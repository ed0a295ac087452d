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

/*
 * The record's L2-L4 fields beyond the key and counters: what ipfixprobe's basic and basicplus
 * plugins and FlowTest's fields.yml call src_mac, dst_mac, ttl, tos, tcp_options, tcp_syn_size,
 * mpls_label_N, bytes_outer (docs/FLOW.md, "The record's L2-L4 fields"). [0] is the forward
 * direction, [1] the reverse (biflows; zero in uniflow mode and without reverse packets).
 * "First" fields are those of the direction's first packet of the record; the others are
 * updated by every packet the table counts.
 *
 * The table keeps these fields in less memory (table.h: struct secho_flow_xline, one line
 * per entry, and a part of the outer pool for the tunnel and MPLS fields of the records
 * that have them) and fills this struct when the record leaves. Values in host order;
 * MACs, label stack entries and outer addresses as on the wire.
 */
#define SECHO_FLOW_MPLS_MAX 8 /* label stack entries kept per direction (the dissector's depth) */

struct secho_flow_extra {
	/* -- updated by every packet -- */
	uint64_t tcp_options[2]; /* tcpOptions (209): bit 63 - k for option kind k < 64 (RFC 5102
	                          * numbering: kind 0 is the most significant bit), OR over the
	                          * direction's TCP packets */
	uint64_t bytes_outer[2]; /* sum of the outermost IP header's lengths of a tunnelled flow
	                          * (FlowTest's bytes_outer); 0 when not tunnelled */
	uint8_t ttl_min[2];      /* minimumTTL (52): IPv4 TTL / IPv6 hop limit */
	uint8_t ttl_max[2];      /* maximumTTL (53) */
	uint8_t tos[2];          /* ipClassOfService (5): first packet's ToS / traffic class */
	uint8_t ip_flags[2];     /* fragmentFlags (197): first packet's IPv4 flags (DF 0x40, MF
	                          * 0x20, as the header's top bits); IPv6: MF of a fragment header */
	uint16_t tcp_win[2];     /* tcpWindowSize (186): first TCP packet's window (unscaled) */
	uint16_t tcp_mss[2];     /* ipfixprobe 8057/900 (reverse 8057/901): MSS option of the
	                          * direction's first TCP packet (its SYN or SYN-ACK); 0 = none */
	uint16_t syn_size;       /* ipfixprobe 8057/902: IP length of the record's first packet when
	                          * it is a SYN without ACK; 0 otherwise */
	uint8_t nmpls[2];        /* label stack entries in mpls[dir] (first packet) */
	uint8_t seen;            /* bit dir: the direction had a packet in the record */
	uint8_t tun_type;        /* SECHO_TUN_* of the first packet (dissect.h); 0 = none */
	uint8_t tun_flags;       /* SECHO_TUN_F_* */
	uint8_t outer_ip_version; /* 4 or 6; 0 when not tunnelled */
	uint32_t feat_live;    /* the feature sets (1u << SECHO_FEAT_SET_*, src/flow/feature/sets.h)
	                        * that have their state in this record: wanted by its flow and
	                        * initialised; a set not live reads as its zero state */
	uint32_t feat_decided; /* the sets that have decided for this record (live or not
	                        * wanted); the others ask again at the next packet */
	/* -- written once per direction -- */
	uint8_t src_mac[6], dst_mac[6]; /* sourceMacAddress (56), destinationMacAddress (80): the
	                                 * innermost Ethernet header of the forward first packet
	                                 * (a tunnel's tenant frame when it carries one) */
	uint32_t tun_id;                /* VNI, GRE key, GTP-U TEID, ERSPAN session (tun_type) */
	uint8_t outer_src[16], outer_dst[16];    /* the outermost IP header's addresses (IPv4 in the
	                                          * first 4 bytes), forward first packet */
	uint8_t mpls[2][SECHO_FLOW_MPLS_MAX][3]; /* mplsTopLabelStackSection (70), then
	                                          * mplsLabelStackSection2.. (71-77): label 20 |
	                                          * TC 3 | S 1, as on the wire, top first */
	uint8_t pad1[32];                        /* a whole number of cache lines */
};
_Static_assert(sizeof(struct secho_flow_extra) == 192, "three cache lines");

struct secho_feat_layout;

/* The feature sets there are (SECHO_FEAT_NSETS, src/flow/feature/sets.h: table.c checks). */
#define SECHO_FLOW_REC_FEAT_SETS 8

struct secho_flow_rec {
	struct secho_flow_key key;
	struct secho_flow_dir fwd; /* packets from key.src to key.dst */
	struct secho_flow_dir rev; /* the reverse direction (biflows); all zero in uniflow mode */
	uint8_t end_reason;        /* flowEndReason (136): SECHO_FLOW_END_* */
	struct secho_flow_extra x; /* MACs, TTLs, TCP options, MPLS, tunnel (a copy: valid as
	                            * long as the record) */
	/* The feature sets' states (`--features`, src/flow/feature/sets.h): feat_sec[i] is set
	 * i's state (struct secho_feat_X) for each set i in feat_live, NULL for the others;
	 * valid during emit only (whoever keeps the record longer copies them: a ring lays them
	 * out as feat_layout's off[] says). Read them through secho_feat_sets_state(), which
	 * gives a set that is not live its zero state ("found nothing"). feat_layout is NULL
	 * when no set is on. */
	const uint8_t *feat_sec[SECHO_FLOW_REC_FEAT_SETS];
	const struct secho_feat_layout *feat_layout;
	uint32_t feat_live;
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
