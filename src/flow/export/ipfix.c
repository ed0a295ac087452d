/*
 * src/flow/export/ipfix.c - the IPFIX exporter (contract: ipfix.h; docs/FLOW.md).
 *
 * Wire format (RFC 7011 section 3): a message is a 16-byte header (version 10, length,
 * export time, sequence number, observation domain) and sets; a set is a 4-byte header
 * (set ID, length) and records. Set ID 2 carries templates, 3 options templates, 256 and
 * up data records of that template. Every element here has a fixed length, so a data
 * record is its fields in network order, one after the other, as the template lists them.
 *
 * Per collector: one message under construction (up to the MTU), sets opened and closed as
 * the template changes; a full message, or one older than flush_ms at a tick, leaves.
 * UDP puts it in a batch of up to UDP_BATCH finished messages that leaves in one
 * sendmmsg(2) when it is full, at every tick, before a statistics record is made and at
 * close; a file writes it; TCP appends it to a queue of whole messages that
 * the socket drains without blocking. Queued messages stay until the peer has acknowledged
 * their last byte (SIOCOUTQ: bytes in the send queue not yet acknowledged); when the
 * connection breaks, the next one starts with the templates and sends the unacknowledged
 * messages again, renumbered for the new session.
 */
#include "flow/export/ipfix.h"
#include "flow/export/ipfix_feat.h"
#include "flow/export/put.h"
#include "flow/feature/sets.h"
#include "secho/dissect.h"
#include "sys/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { T_UDP, T_TCP, T_FILE };
enum { S_DOWN, S_CONNECTING, S_UP };
enum { M_TEMPLATE, M_DATA };

#define HDR_LEN 16
#define SET_HDR 4

/*
 * Template variants (docs/FLOW.md, "Templates and elements"): a record goes out under the
 * smallest template that carries what it has. The low part (0-71): bit 0 IPv6, bit 1 TCP
 * (the TCP fields), bit 2 the tunnel part, bits 3.. the depth of the MPLS label stacks
 * (0-8 sections). A tunnelled record's tunnel shape (0-5) adds 72 times itself: 1 the outer
 * IPv4 addresses, 2 the outer UDP destination port, 4 the port and a VXLAN VNI
 * (layer2SegmentId); a shape without bit 2 is no variant. Those 432 numbers have the packet
 * and octet counters in 4 bytes; the same + 432 (VAR_WIDE) in 8, for a record with a count
 * of 2^32 or more. The four plain ones are sent at the start of every stream; the others
 * when a record first needs them, and again with the base ones at every refresh or
 * reconnect.
 */
#define VAR_V6        1u
#define VAR_TCP       2u
#define VAR_TUN       4u
#define VAR_LOW       72u                /* variants without a tunnel shape */
#define VAR_WIDE      SECHO_IPFIX_SHAPES /* added: 8-byte counters (ipfix.h) */
#define VAR_SHAPE(v)  ((v) % VAR_WIDE)
#define VAR_DEPTH(v)  (((v) % VAR_LOW) >> 3)
#define VAR_OUTER4(v) (VAR_SHAPE(v) / VAR_LOW & 1u) /* tunnelSource/DestinationIPv4Address */
#define VAR_UDP(v)    (VAR_SHAPE(v) / VAR_LOW >> 1) /* 1 the port, 2 the port and l2SegmentId */
#define NVARIANTS     SECHO_IPFIX_VARIANTS
_Static_assert(VAR_WIDE % VAR_LOW == 0, "a wide variant's low bits and depth are its shape's");
_Static_assert(SECHO_IPFIX_TID_FEAT + SECHO_IPFIX_FEAT_TEMPLATES <= SECHO_IPFIX_TID_WIDE,
               "the feature templates' IDs end before the wide variants'");
#define NBASE 4u /* variants 0-3: sent at the start */
/* Every template a stream can use (504 valid variants, at most 368 bytes each), in
 * messages of at most the MTU: 147,868 bytes in biflow mode when each goes in a message of
 * its own, more than the smallest TCP queue (tcp_up). */
#define TBUF  262144u
#define FTBUF SECHO_IPFIX_FEAT_TSET_MAX /* a template set of a record with features */
/* A UDP collector's batch of finished messages, sent with one sendmmsg(2): at most
 * UDP_BATCH messages in a buffer of UDP_BATCH MTUs, at least 64 KiB - 1 (the longest
 * message the 16-bit length allows: a template longer than a small MTU goes alone) and at
 * most UDP_BATCH_MAX bytes. */
#define UDP_BATCH     32u
#define UDP_BATCH_MIN 65535u
#define UDP_BATCH_MAX (256u << 10)

struct ubatch {
	uint8_t *buf; /* the messages one after the other: used of cap bytes */
	size_t used, cap;
	unsigned n;
	uint32_t nflows[UDP_BATCH]; /* flow records in each: not delivered when it fails */
	struct iovec iov[UDP_BATCH];
	struct mmsghdr mm[UDP_BATCH];
};

/* One message in a TCP queue. */
struct qmsg {
	uint32_t len;
	uint32_t nflows; /* flow records in it */
	uint32_t ndata;  /* data records (flows and statistics) */
	uint8_t kind;
	uint8_t written; /* (part of) it went out on a connection */
};

struct coll {
	struct secho_ipfix_collector_stats st;
	int type, fd, state;
	struct sockaddr_storage addr;
	socklen_t alen;
	/* the message under construction */
	uint8_t *msg;
	size_t len, set_off;
	uint16_t set_tid;
	uint32_t nflows, ndata;
	uint64_t first_ns; /* when its first record went in */
	uint32_t seq;      /* data records sent before it in this session */
	bool templates_sent;
	uint64_t used[(NVARIANTS + 63) / 64];            /* template variants this stream has had */
	uint64_t fused[SECHO_IPFIX_FEAT_TEMPLATES / 64]; /* feature templates it has had */
	uint64_t tmpl_ns;                                /* when the templates last went out */
	/* UDP */
	struct ubatch *ub;
	/* TCP */
	uint8_t *q;
	size_t qhead, qlen, qcap; /* bytes q[qhead .. qhead+qlen) */
	struct qmsg *qm;
	size_t qmhead, nqm, qmcap;
	size_t qsent; /* bytes of the queue written on this connection */
	uint64_t next_try_ns;
	uint32_t backoff_ms;
	bool ever_up;
};

struct secho_ipfix {
	struct secho_ipfix_cfg cfg;
	struct secho_ipfix_meter_stats meter;
	struct coll *c[SECHO_IPFIX_MAX_COLLECTORS];
	unsigned nc;
	uint64_t init_ns; /* systemInitTimeMilliseconds: the first time seen */
	uint64_t next_stats_ns;
	uint64_t now_ns;
	uint8_t *tbuf; /* template messages being made: tcap bytes, TBUF and room for the
	                * feature templates (FTBUF each) */
	size_t tcap;
	size_t tlen[NVARIANTS + 2 + SECHO_IPFIX_FEAT_TEMPLATES];
	/* Templates of records with features (ipfix_feat.h): the nft allocated, ID
	 * SECHO_IPFIX_TID_FEAT + k for ft_key[k] = variant << SECHO_FEAT_NSETS | sets carried;
	 * ft_idx, open addressing on such keys, holds k + 1 (0: an empty slot). A table
	 * indexed by every key would be 432 << 8 slots (216 KiB) for the few a run uses. */
	unsigned nft;
	uint32_t ft_key[SECHO_IPFIX_FEAT_TEMPLATES];
	uint16_t ft_idx[2 * SECHO_IPFIX_FEAT_TEMPLATES];
};

/* ---- encoding ---- */

/* Template fields: IANA element ID (| 0x8000 with PEN 29305: reverse; | 0x4000: an element of
 * ipfixprobe's PEN 8057; | 0x2000: an element of VMware's PEN 6876, Open vSwitch's tunnel
 * elements), length. IANA's IDs are below 0x2000. */
struct field {
	uint16_t id, len;
};

#define PEN_IPFIXPROBE 8057u
#define PROBE(id)      ((uint16_t)((id) | 0x4000))

#define PEN_VMWARE 6876u
#define VMW(id)    ((uint16_t)((id) | 0x2000))

#define REV(id) ((uint16_t)((id) | 0x8000))

/* clang-format off */
static const struct field f_v4[] = {
	{8, 4},    /* sourceIPv4Address */
	{12, 4},   /* destinationIPv4Address */
	{7, 2},    /* sourceTransportPort */
	{11, 2},   /* destinationTransportPort */
	{4, 1},    /* protocolIdentifier */
	{60, 1},   /* ipVersion */
	{58, 2},   /* vlanId: the outer tag's VID */
	{245, 2},  /* dot1qCustomerVlanId: the inner tag's VID (QinQ) */
	{32, 2},   /* icmpTypeCodeIPv4 */
	{6, 2},    /* tcpControlBits (RFC 7125: 16 bits) */
	{1, 8},    /* octetDeltaCount */
	{2, 8},    /* packetDeltaCount */
	{152, 8},  /* flowStartMilliseconds */
	{153, 8},  /* flowEndMilliseconds */
	{136, 1},  /* flowEndReason */
};
static const struct field f_v6[] = {
	{27, 16},  /* sourceIPv6Address */
	{28, 16},  /* destinationIPv6Address */
	{7, 2}, {11, 2}, {4, 1}, {60, 1}, {58, 2}, {245, 2},
	{139, 2},  /* icmpTypeCodeIPv6 */
	{6, 2}, {1, 8}, {2, 8}, {152, 8}, {153, 8}, {136, 1},
};
/* RFC 5103 section 6.1: the reverse direction's counters, flags and times. They go first
 * in a biflow template, before the forward elements: nfdump 1.7 reads reverse flags and times
 * into the same fields as the forward ones (only the reverse octets and packets have their
 * own), so the element that comes last wins; with the reverse ones last, its records took
 * the reverse direction's times, and a one-way flow's zeros (dated 1970). */
static const struct field f_rev[] = {
	{REV(1), 8}, {REV(2), 8}, {REV(6), 2}, {REV(152), 8}, {REV(153), 8},
};
/* Then the reverse direction's ICMP type and code (its own version's element): the answer
 * to the forward's (key.h, secho_flow_icmp_answer), 0 without reverse packets. Before the
 * forward elements too, for the same reason. */
static const struct field f_rev_icmp4 = {REV(32), 2};  /* reverseIcmpTypeCodeIPv4 */
static const struct field f_rev_icmp6 = {REV(139), 2}; /* reverseIcmpTypeCodeIPv6 */
/* The statistics (RFC 7011 section 4): scope observationDomainId, then the counts. */
static const struct field f_opt[] = {
	{149, 4},  /* observationDomainId (scope) */
	{41, 8},   /* exportedMessageTotalCount */
	{42, 8},   /* exportedFlowRecordTotalCount */
	{40, 8},   /* exportedOctetTotalCount */
	{163, 8},  /* observedFlowTotalCount */
	{164, 8},  /* ignoredPacketTotalCount */
	{165, 8},  /* ignoredOctetTotalCount */
	{166, 8},  /* notSentFlowTotalCount */
	{160, 8},  /* systemInitTimeMilliseconds */
};
/* clang-format on */

#define NF(a) (sizeof(a) / sizeof((a)[0]))

static uint8_t *put_fields(uint8_t *p, const struct field *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		p = w16(p, (uint16_t)((f[i].id & 0x1fff) | ((f[i].id & 0xe000) ? 0x8000 : 0)));
		p = w16(p, f[i].len);
		if (f[i].id & 0x4000)
			p = w32(p, PEN_IPFIXPROBE);
		else if (f[i].id & 0x2000)
			p = w32(p, PEN_VMWARE);
		else if (f[i].id & 0x8000)
			p = w32(p, SECHO_IPFIX_PEN_REVERSE);
	}
	return p;
}

/* The record's L2-L4 fields (record.h, struct secho_flow_extra), after the base elements;
 * their reverse twins go before them, with the other reverse elements (see f_rev). */
/* clang-format off */
static const struct field f_l2l3[] = {
	{56, 6},   /* sourceMacAddress */
	{80, 6},   /* destinationMacAddress */
	{52, 1},   /* minimumTTL */
	{53, 1},   /* maximumTTL */
	{5, 1},    /* ipClassOfService */
	{197, 1},  /* fragmentFlags */
};
static const struct field f_rev_l3[] = {
	{REV(52), 1}, {REV(53), 1}, {REV(5), 1}, {REV(197), 1},
};
static const struct field f_tcp[] = {
	{209, 8},                  /* tcpOptions */
	{186, 2},                  /* tcpWindowSize */
	{PROBE(900), 4},           /* ipfixprobe TCP_MSS */
	{PROBE(902), 2},           /* ipfixprobe TCP_SYN_SIZE */
};
static const struct field f_rev_tcp[] = {
	{REV(209), 8}, {REV(186), 2},
	{PROBE(901), 4},           /* ipfixprobe TCP_MSS_REV */
};
/* The tunnel part: Open vSwitch's elements (PEN 6876; OVS has no reverse ones: the tunnel is
 * the same both ways, the outer addresses the forward first packet's). */
static const struct field f_tun[] = {
	{VMW(891), 1},             /* tunnelType: OVS's code (tun_code) */
	{VMW(892), 4},             /* tunnelKey: VNI, GRE key, TEID, ERSPAN session */
	{VMW(895), 1},             /* tunnelProtocolIdentifier: the outer header's protocol */
};
static const struct field f_tun_v4[] = {
	{VMW(893), 4},             /* tunnelSourceIPv4Address */
	{VMW(894), 4},             /* tunnelDestinationIPv4Address */
};
static const struct field f_tun_port = {VMW(897), 2}; /* tunnelDestinationTransportPort */
static const struct field f_l2seg = {351, 8}; /* layer2SegmentId (RFC 7133) */
/* clang-format on */

/* The template ID of variant v: the plain IPv4 and IPv6 ones keep the IDs they always had
 * (256-259), the other shapes are 261-690 (260 is the options template; IDs from 1024 to
 * 2047 are the feature sets'), those with 8-byte counters 2048-2479. */
static uint16_t variant_tid(bool biflow, unsigned v)
{
	if (v >= VAR_WIDE)
		return (uint16_t)(SECHO_IPFIX_TID_WIDE + VAR_SHAPE(v));
	if (v < 2)
		return (uint16_t)((biflow ? SECHO_IPFIX_TID_V4_BI : SECHO_IPFIX_TID_V4) + v);
	return (uint16_t)(SECHO_IPFIX_TID_OPTIONS - 1 + v);
}

/* Variant v's fields into f (room for 64); returns how many. */
static size_t variant_fields(bool biflow, unsigned v, struct field *f)
{
	size_t n = 0;
	unsigned depth = VAR_DEPTH(v);

#define ADD(a, na)                                                                                 \
	do {                                                                                       \
		memcpy(f + n, a, (na) * sizeof(*f));                                               \
		n += (na);                                                                         \
	} while (0)
	if (biflow) { /* first: see f_rev */
		ADD(f_rev, NF(f_rev));
		ADD((v & VAR_V6) ? &f_rev_icmp6 : &f_rev_icmp4, 1);
		ADD(f_rev_l3, NF(f_rev_l3));
		if (v & VAR_TCP)
			ADD(f_rev_tcp, NF(f_rev_tcp));
		for (unsigned i = 0; i < depth; i++) /* mplsTopLabelStackSection, ...Section2.. */
			f[n++] = (struct field){REV(70 + i), 3};
	}
	if (v & VAR_V6)
		ADD(f_v6, NF(f_v6));
	else
		ADD(f_v4, NF(f_v4));
	ADD(f_l2l3, NF(f_l2l3));
	if (v & VAR_TCP)
		ADD(f_tcp, NF(f_tcp));
	for (unsigned i = 0; i < depth; i++)
		f[n++] = (struct field){(uint16_t)(70 + i), 3};
	if (v & VAR_TUN) {
		ADD(f_tun, NF(f_tun));
		if (VAR_OUTER4(v))
			ADD(f_tun_v4, NF(f_tun_v4));
		if (VAR_UDP(v))
			ADD(&f_tun_port, 1);
		if (VAR_UDP(v) == 2)
			ADD(&f_l2seg, 1);
	}
#undef ADD
	if (v < VAR_WIDE) /* the counters in 4 bytes (reduced-size encoding) */
		for (size_t i = 0; i < n; i++)
			if (f[i].id == 1 || f[i].id == 2 || f[i].id == REV(1) || f[i].id == REV(2))
				f[i].len = 4;
	return n;
}

/* One template set holding variant v's template. */
static size_t variant_template_set(bool biflow, unsigned v, uint8_t *out)
{
	struct field f[64];
	size_t n = variant_fields(biflow, v, f);
	uint8_t *p = out + SET_HDR;

	p = w16(p, variant_tid(biflow, v));
	p = w16(p, (uint16_t)n);
	p = put_fields(p, f, n);
	w16(out, 2);
	w16(out + 2, (uint16_t)(p - out));
	return (size_t)(p - out);
}

/* A variant some record goes out under: a tunnel shape only with the tunnel part. */
static bool variant_valid(unsigned v)
{
	return v < NVARIANTS && (VAR_SHAPE(v) < VAR_LOW || (v & VAR_TUN));
}

/* One template set: variant v's elements, then those of the feature sets in carried
 * (ipfix_feat.h), under template ID tid. */
static size_t feat_template_set(bool biflow, unsigned v, uint32_t carried, uint16_t tid,
                                uint8_t *out)
{
	struct field f[64];
	size_t n = variant_fields(biflow, v, f);
	unsigned nf;
	uint8_t *p = out + SET_HDR, *count;

	p = w16(p, tid);
	count = p;
	p += 2;
	p = put_fields(p, f, n);
	p += secho_ipfix_feat_fields(carried, p, &nf);
	w16(count, (uint16_t)(n + nf));
	w16(out, 2);
	w16(out + 2, (uint16_t)(p - out));
	return (size_t)(p - out);
}

size_t secho_ipfix_template_set(bool biflow, unsigned variant, uint8_t *out)
{
	return variant_valid(variant) ? variant_template_set(biflow, variant, out) : 0;
}

/* The outer UDP destination port of a UDP tunnel (the dissector knows these tunnels by it
 * alone, wire_inner.h), else 0. */
static uint16_t tun_port(unsigned tun_type)
{
	switch (tun_type) {
	case SECHO_TUN_VXLAN:
		return 4789;
	case SECHO_TUN_GENEVE:
		return 6081;
	case SECHO_TUN_GTPU:
		return 2152;
	default:
		return 0;
	}
}

/* tunnelType: Open vSwitch's code where it has one (VXLAN 1, GRE 2, Geneve 7), else 0
 * ("unknown": ERSPAN, GTP-U, IP in IP, Ethernet over MPLS; the protocol and port tell
 * them apart). */
static uint8_t tun_code(unsigned tun_type)
{
	switch (tun_type) {
	case SECHO_TUN_VXLAN:
		return 0x01;
	case SECHO_TUN_GRE:
		return 0x02;
	case SECHO_TUN_GENEVE:
		return 0x07;
	default:
		return 0x00;
	}
}

/* tunnelProtocolIdentifier: the IP protocol that carries the innermost tunnel (UDP 17, GRE
 * 47, IPv4 in IP 4, IPv6 in IP 41); 0 for Ethernet over MPLS, which no IP header carries. */
static uint8_t tun_proto(const struct secho_flow_key *k)
{
	switch (k->tun_type) {
	case SECHO_TUN_GRE:
	case SECHO_TUN_ERSPAN:
		return 47;
	case SECHO_TUN_VXLAN:
	case SECHO_TUN_GENEVE:
	case SECHO_TUN_GTPU:
		return 17;
	case SECHO_TUN_IPIP:
		return k->ip_version == 6 ? 41 : 4;
	default:
		return 0;
	}
}

/* The variant record r goes out under. */
static unsigned rec_variant(bool biflow, const struct secho_flow_rec *r)
{
	unsigned depth = r->x.nmpls[0];

	if (biflow && r->x.nmpls[1] > depth)
		depth = r->x.nmpls[1];
	if (depth > SECHO_FLOW_MPLS_MAX)
		depth = SECHO_FLOW_MPLS_MAX;
	unsigned v = (r->key.ip_version == 6 ? VAR_V6 : 0) | (r->key.proto == 6 ? VAR_TCP : 0) |
	             depth << 3;
	if (r->key.tun_type) {
		unsigned shape = r->x.outer_ip_version == 4 ? 1 : 0;
		if (tun_port(r->key.tun_type))
			shape += r->key.tun_type == SECHO_TUN_VXLAN ? 4 : 2;
		v |= VAR_TUN;
		v += VAR_LOW * shape;
	}
	uint64_t big = r->fwd.octets | r->fwd.packets;
	if (biflow)
		big |= r->rev.octets | r->rev.packets;
	if (big >> 32)
		v += VAR_WIDE;
	return v;
}

/* Direction dir's label stack, depth sections (zeros below its own). */
static uint8_t *put_mpls(uint8_t *p, const struct secho_flow_extra *x, unsigned dir, unsigned depth)
{
	for (unsigned i = 0; i < depth; i++, p += 3) {
		if (i < x->nmpls[dir])
			memcpy(p, x->mpls[dir][i], 3);
		else
			memset(p, 0, 3);
	}
	return p;
}

size_t secho_ipfix_options_template_set(uint8_t *out)
{
	uint8_t *p = out + SET_HDR;
	p = w16(p, SECHO_IPFIX_TID_OPTIONS);
	p = w16(p, (uint16_t)NF(f_opt));
	p = w16(p, 1); /* scope field count */
	p = put_fields(p, f_opt, NF(f_opt));
	w16(out, 3);
	w16(out + 2, (uint16_t)(p - out));
	return (size_t)(p - out);
}

/* A packet or octet counter: 8 bytes in a wide variant, else 4 (rec_variant chose it). */
static inline uint8_t *counter(uint8_t *p, uint64_t v, bool wide)
{
	return wide ? w64(p, v) : w32(p, (uint32_t)v);
}

static uint64_t ms(uint64_t ns)
{
	return ns / 1000000u;
}

size_t secho_ipfix_encode(bool biflow, const struct secho_flow_rec *r, uint8_t *out, uint16_t *tid)
{
	const struct secho_flow_key *k = &r->key;
	const struct secho_flow_extra *x = &r->x;
	uint8_t *p = out;
	if (k->ip_version != 4 && k->ip_version != 6)
		return 0;
	unsigned v = rec_variant(biflow, r), depth = VAR_DEPTH(v);
	*tid = variant_tid(biflow, v);
	bool wide = v >= VAR_WIDE;
	if (biflow) { /* first: see f_rev; in the order of variant_fields */
		p = counter(p, r->rev.octets, wide);
		p = counter(p, r->rev.packets, wide);
		p = w16(p, r->rev.tcp_flags);
		p = w64(p, ms(r->rev.first_ns));
		p = w64(p, ms(r->rev.last_ns));
		p = w16(p, secho_flow_rec_rev_icmp(r));
		*p++ = x->ttl_min[1];
		*p++ = x->ttl_max[1];
		*p++ = x->tos[1];
		*p++ = x->ip_flags[1];
		if (v & VAR_TCP) {
			p = w64(p, x->tcp_options[1]);
			p = w16(p, x->tcp_win[1]);
			p = w32(p, x->tcp_mss[1]);
		}
		p = put_mpls(p, x, 1, depth);
	}
	if (k->ip_version == 4) {
		memcpy(p, k->src, 4);
		memcpy(p + 4, k->dst, 4);
		p += 8;
	} else {
		memcpy(p, k->src, 16);
		memcpy(p + 16, k->dst, 16);
		p += 32;
	}
	p = w16(p, k->sport);
	p = w16(p, k->dport);
	*p++ = k->proto;
	*p++ = k->ip_version;
	p = w16(p, k->vlan);
	p = w16(p, k->vlan_inner);
	p = w16(p, k->icmp_type_code);
	p = w16(p, r->fwd.tcp_flags);
	p = counter(p, r->fwd.octets, wide);
	p = counter(p, r->fwd.packets, wide);
	p = w64(p, ms(r->fwd.first_ns));
	p = w64(p, ms(r->fwd.last_ns));
	*p++ = r->end_reason;
	memcpy(p, x->src_mac, 6);
	memcpy(p + 6, x->dst_mac, 6);
	p += 12;
	*p++ = x->ttl_min[0];
	*p++ = x->ttl_max[0];
	*p++ = x->tos[0];
	*p++ = x->ip_flags[0];
	if (v & VAR_TCP) {
		p = w64(p, x->tcp_options[0]);
		p = w16(p, x->tcp_win[0]);
		p = w32(p, x->tcp_mss[0]);
		p = w16(p, x->syn_size);
	}
	p = put_mpls(p, x, 0, depth);
	if (v & VAR_TUN) { /* in the order of variant_fields */
		*p++ = tun_code(k->tun_type);
		p = w32(p, k->tun_id);
		*p++ = tun_proto(k);
		if (VAR_OUTER4(v)) {
			memcpy(p, x->outer_src, 4);
			memcpy(p + 4, x->outer_dst, 4);
			p += 8;
		}
		if (VAR_UDP(v))
			p = w16(p, tun_port(k->tun_type));
		if (VAR_UDP(v) == 2) /* RFC 7133 section 4.9: segment type 0x01 (VXLAN) on top */
			p = w64(p, 1ull << 56 | k->tun_id);
	}
	return (size_t)(p - out);
}

/* Contract: ipfix.h. */
size_t secho_ipfix_feat_template_set(bool biflow, const struct secho_flow_rec *rec,
                                     uint32_t carried, uint16_t tid, uint8_t *out)
{
	return feat_template_set(biflow, rec_variant(biflow, rec), carried, tid, out);
}

/* ---- messages ---- */

static void msg_reset(struct coll *c)
{
	c->len = HDR_LEN;
	c->set_tid = 0;
	c->nflows = c->ndata = 0;
}

static void set_close(struct coll *c)
{
	if (c->set_tid)
		w16(c->msg + c->set_off + 2, (uint16_t)(c->len - c->set_off));
	c->set_tid = 0;
}

/* ---- transports ---- */

static void tcp_fail(struct secho_ipfix *x, struct coll *c);
static void tcp_pump(struct secho_ipfix *x, struct coll *c);
static void tcp_acked(struct coll *c);

/* ---- UDP ---- */

/* Count message i of the batch as one the transport refused (as a failed send(2)). */
static void udp_failed(struct coll *c, unsigned i)
{
	c->st.errors++;
	c->st.not_delivered += c->ub->nflows[i];
}

/* Send the batch, in order, with sendmmsg(2); each message is counted as send(2) counted
 * it: a message the socket did not take whole is an error and its flows are not
 * delivered. sendmmsg() reports an error only when it sent nothing; when it stops after
 * k messages, message k met an error that the kernel does not return (ECONNREFUSED from
 * an ICMP unreachable is consumed by the message that meets it, which is not sent, as
 * with send()): that message is counted as failed and the rest go on. (One case differs
 * from send(): a signal that interrupts a send waiting for room in a full send buffer,
 * after the call sent others, also fails that message where send() would retry it.) */
static void udp_flush(struct coll *c)
{
	struct ubatch *b = c->ub;
	unsigned i = 0;

	while (i < b->n) {
		int r = sendmmsg(c->fd, b->mm + i, b->n - i, 0);
		if (r < 0 && errno == EINTR)
			continue;
		for (int j = 0; j < r; j++, i++)
			if (b->mm[i].msg_len != b->iov[i].iov_len)
				udp_failed(c, i);
		if (i < b->n)
			udp_failed(c, i++); /* r < 0: its error; r < n: an error not returned */
	}
	b->n = 0;
	b->used = 0;
}

/* Add a finished message to the batch (counted as sent, as send(2) would have: messages,
 * bytes); send the batch first when the message does not fit, and at once when full. */
static void udp_queue(struct coll *c, const uint8_t *m, size_t len, uint32_t nflows)
{
	struct ubatch *b = c->ub;

	if (b->n && b->used + len > b->cap)
		udp_flush(c);
	memcpy(b->buf + b->used, m, len);
	b->iov[b->n] = (struct iovec){.iov_base = b->buf + b->used, .iov_len = len};
	b->mm[b->n] = (struct mmsghdr){.msg_hdr = {.msg_iov = &b->iov[b->n], .msg_iovlen = 1}};
	b->nflows[b->n++] = nflows;
	b->used += len;
	c->st.messages++;
	c->st.bytes += len;
	if (b->n == UDP_BATCH)
		udp_flush(c);
}

static int q_reserve(struct coll *c, size_t len)
{
	if (c->qhead && c->qhead + c->qlen + len > c->qcap) {
		memmove(c->q, c->q + c->qhead, c->qlen);
		c->qhead = 0;
	}
	if (c->qlen + len > c->qcap)
		return -ENOBUFS;
	if (c->qmhead && c->qmhead + c->nqm == c->qmcap) {
		memmove(c->qm, c->qm + c->qmhead, c->nqm * sizeof(*c->qm));
		c->qmhead = 0;
	}
	if (c->qmhead + c->nqm == c->qmcap) {
		size_t n = c->qmcap ? c->qmcap * 2 : 256;
		struct qmsg *m = realloc(c->qm, n * sizeof(*m));
		if (!m)
			return -ENOMEM;
		c->qm = m;
		c->qmcap = n;
	}
	return 0;
}

static void q_push(struct coll *c, const uint8_t *msg, size_t len, int kind, uint32_t nflows,
                   uint32_t ndata)
{
	memcpy(c->q + c->qhead + c->qlen, msg, len);
	c->qlen += len;
	c->qm[c->qmhead + c->nqm++] = (struct qmsg){
	        .len = (uint32_t)len, .nflows = nflows, .ndata = ndata, .kind = (uint8_t)kind};
}

/* Hand a finished message to the transport. */
static void deliver(struct secho_ipfix *x, struct coll *c, const uint8_t *m, size_t len, int kind,
                    uint32_t nflows, uint32_t ndata)
{
	if (c->type == T_TCP) {
		int rc = q_reserve(c, len);
		if (rc) {
			c->st.errors++;
			c->st.not_delivered += nflows;
			return;
		}
		q_push(c, m, len, kind, nflows, ndata);
		if (c->state == S_UP)
			tcp_pump(x, c);
		return;
	}
	if (c->type == T_UDP) {
		udp_queue(c, m, len, nflows);
		return;
	}
	ssize_t n;
	do {
		n = write(c->fd, m, len);
	} while (n < 0 && errno == EINTR);
	c->st.messages++;
	c->st.bytes += len;
	if (n != (ssize_t)len) {
		c->st.errors++;
		c->st.not_delivered += nflows;
	}
}

/* Finish the message under construction (header, last set) and send it. */
static void flush(struct secho_ipfix *x, struct coll *c, uint64_t now_ns)
{
	if (c->len == HDR_LEN)
		return;
	set_close(c);
	uint8_t *h = c->msg;
	w16(h, 10);
	w16(h + 2, (uint16_t)c->len);
	w32(h + 4, (uint32_t)(now_ns / 1000000000u));
	w32(h + 8, c->seq);
	w32(h + 12, x->cfg.odid);
	c->seq += c->ndata;
	c->st.records += c->nflows;
	c->st.stats_records += c->ndata - c->nflows;
	deliver(x, c, c->msg, c->len, M_DATA, c->nflows, c->ndata);
	msg_reset(c);
}

/* Append one record of template tid (a data record when data, counted as a flow when
 * flow), opening sets and messages as needed. */
static void append(struct secho_ipfix *x, struct coll *c, uint16_t tid, const uint8_t *rec,
                   size_t len, bool flow, uint64_t now_ns)
{
	size_t mtu = x->cfg.mtu;
	if (c->set_tid != tid) {
		if (c->len + SET_HDR + len > mtu)
			flush(x, c, now_ns);
		set_close(c);
		c->set_off = c->len;
		w16(c->msg + c->len, tid);
		c->len += SET_HDR;
		c->set_tid = tid;
	} else if (c->len + len > mtu) {
		flush(x, c, now_ns);
		c->set_off = c->len;
		w16(c->msg + c->len, tid);
		c->len += SET_HDR;
		c->set_tid = tid;
	}
	if (c->len == HDR_LEN + SET_HDR)
		c->first_ns = now_ns;
	memcpy(c->msg + c->len, rec, len);
	c->len += len;
	c->ndata++;
	c->nflows += flow;
}

static void msg_header(struct secho_ipfix *x, struct coll *c, uint8_t *m, size_t n, uint64_t now_ns)
{
	w16(m, 10);
	w16(m + 2, (uint16_t)n);
	w32(m + 4, (uint32_t)(now_ns / 1000000000u));
	w32(m + 8, c->seq);
	w32(m + 12, x->cfg.odid);
}

static bool variant_used(const struct coll *c, unsigned v)
{
	return (c->used[v / 64] >> (v % 64)) & 1;
}

static bool feat_used(const struct coll *c, unsigned k)
{
	return (c->fused[k / 64] >> (k % 64)) & 1;
}

/* Messages with the options template and the template of every variant c has used, each
 * at most the MTU, one after the other in x->tbuf, their lengths in x->tlen (sequence
 * number: the data records sent so far; template records do not count). Returns how many
 * messages; *ntmpl the templates. */
static unsigned template_msgs(struct secho_ipfix *x, struct coll *c, uint64_t now_ns,
                              unsigned *ntmpl)
{
	uint8_t one[FTBUF];
	size_t off = 0, len = 0; /* the message being made: x->tbuf[off..off+len) */
	unsigned nm = 0;

	*ntmpl = 0;
	for (unsigned v = 0; v <= NVARIANTS + x->nft; v++) {
		size_t tl;
		unsigned k = v - NVARIANTS - 1; /* a feature template's index, after the options */
		if (v == NVARIANTS)
			tl = secho_ipfix_options_template_set(one);
		else if (v < NVARIANTS && variant_used(c, v))
			tl = variant_template_set(x->cfg.biflow, v, one);
		else if (v > NVARIANTS && feat_used(c, k))
			tl = feat_template_set(x->cfg.biflow, x->ft_key[k] >> SECHO_FEAT_NSETS,
			                       x->ft_key[k] & SECHO_FEAT_ALL,
			                       (uint16_t)(SECHO_IPFIX_TID_FEAT + k), one);
		else
			continue;
		if (len && len + tl > x->cfg.mtu) {
			msg_header(x, c, x->tbuf + off, len, now_ns);
			x->tlen[nm++] = len;
			off += len;
			len = 0;
		}
		if (!len)
			len = HDR_LEN;
		memcpy(x->tbuf + off + len, one, tl);
		len += tl;
		++*ntmpl;
	}
	msg_header(x, c, x->tbuf + off, len, now_ns);
	x->tlen[nm++] = len;
	return nm;
}

static void send_templates(struct secho_ipfix *x, struct coll *c, uint64_t now_ns)
{
	unsigned nt, nm;
	size_t off = 0;

	flush(x, c, now_ns); /* data before, in order */
	nm = template_msgs(x, c, now_ns, &nt);
	c->st.template_records += nt;
	for (unsigned i = 0; i < nm; i++) {
		deliver(x, c, x->tbuf + off, x->tlen[i], M_TEMPLATE, 0, 0);
		off += x->tlen[i];
	}
	c->templates_sent = true;
	c->tmpl_ns = now_ns;
}

/* Variant v's template, the first time c's stream needs it (a TCP stream that is down
 * gets it with all the others when it comes up). */
static void variant_due(struct secho_ipfix *x, struct coll *c, unsigned v, uint64_t now_ns)
{
	uint8_t m[HDR_LEN + 512];

	if (variant_used(c, v))
		return;
	c->used[v / 64] |= 1ull << (v % 64);
	if (c->type == T_TCP && c->state != S_UP)
		return;
	flush(x, c, now_ns); /* data before, in order */
	size_t n = HDR_LEN + variant_template_set(x->cfg.biflow, v, m + HDR_LEN);
	msg_header(x, c, m, n, now_ns);
	c->st.template_records++;
	deliver(x, c, m, n, M_TEMPLATE, 0, 0);
}

/* Feature template k's, the first time c's stream needs it (as variant_due). */
static void feat_due(struct secho_ipfix *x, struct coll *c, unsigned k, uint64_t now_ns)
{
	uint8_t m[HDR_LEN + FTBUF];

	if (feat_used(c, k))
		return;
	c->fused[k / 64] |= 1ull << (k % 64);
	if (c->type == T_TCP && c->state != S_UP)
		return;
	flush(x, c, now_ns); /* data before, in order */
	size_t n = HDR_LEN + feat_template_set(x->cfg.biflow, x->ft_key[k] >> SECHO_FEAT_NSETS,
	                                       x->ft_key[k] & SECHO_FEAT_ALL,
	                                       (uint16_t)(SECHO_IPFIX_TID_FEAT + k), m + HDR_LEN);
	msg_header(x, c, m, n, now_ns);
	c->st.template_records++;
	deliver(x, c, m, n, M_TEMPLATE, 0, 0);
}

/* The index of the feature template of variant v with the sets in carried, allocated on first
 * use; -1 when every ID is taken or memory ran out (the record then goes out without its
 * features). */
static int feat_template(struct secho_ipfix *x, unsigned v, uint32_t carried)
{
	const uint32_t mask = 2 * SECHO_IPFIX_FEAT_TEMPLATES - 1;
	uint32_t key = v << SECHO_FEAT_NSETS | carried;
	uint32_t i = (key * 0x9e3779b1u) >> 16 & mask;
	/* at most half full: an empty slot ends every probe */
	while (x->ft_idx[i]) {
		if (x->ft_key[x->ft_idx[i] - 1] == key)
			return x->ft_idx[i] - 1;
		i = (i + 1) & mask;
	}
	if (x->nft == SECHO_IPFIX_FEAT_TEMPLATES)
		return -1;
	/* room for it in every template message series: one more template and header */
	uint8_t *nb = realloc(x->tbuf, x->tcap + HDR_LEN + FTBUF);
	if (!nb)
		return -1;
	x->tbuf = nb;
	x->tcap += HDR_LEN + FTBUF;
	x->ft_key[x->nft] = key;
	x->ft_idx[i] = (uint16_t)(++x->nft);
	return (int)x->nft - 1;
}

/* Templates first on a stream that has not had them; UDP again every refresh period. */
static void templates_due(struct secho_ipfix *x, struct coll *c, uint64_t now_ns)
{
	if (c->type == T_TCP)
		return; /* sent at each connection's start (tcp_up) */
	if (!c->templates_sent ||
	    (c->type == T_UDP &&
	     now_ns - c->tmpl_ns >= (uint64_t)x->cfg.template_refresh_s * 1000000000u))
		send_templates(x, c, now_ns);
}

/* ---- TCP ---- */

static void tcp_connect(struct secho_ipfix *x, struct coll *c, uint64_t now_ns)
{
	(void)x;
	int fd = socket(c->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		c->st.errors++;
		c->next_try_ns = now_ns + (uint64_t)c->backoff_ms * 1000000u;
		return;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->fd = fd;
	if (connect(fd, (struct sockaddr *)&c->addr, c->alen) == 0 || errno == EINPROGRESS) {
		c->state = S_CONNECTING;
		return;
	}
	c->st.errors++;
	close(fd);
	c->fd = -1;
	c->state = S_DOWN;
	c->next_try_ns = now_ns + (uint64_t)c->backoff_ms * 1000000u;
	c->backoff_ms = c->backoff_ms * 2 > x->cfg.backoff_max_ms ? x->cfg.backoff_max_ms
	                                                          : c->backoff_ms * 2;
}

/* A new connection (a new Transport Session): templates first, then every queued data
 * message not yet acknowledged, renumbered from 0. */
static void tcp_up(struct secho_ipfix *x, struct coll *c, uint64_t now_ns)
{
	c->state = S_UP;
	c->backoff_ms = x->cfg.backoff_min_ms;
	if (c->ever_up)
		c->st.reconnects++;
	c->ever_up = true;
	c->st.connected = true;
	/* Rebuild the queue: templates, then the data messages with new sequence numbers. */
	uint8_t *old = c->q + c->qhead;
	struct qmsg *oqm = c->qm + c->qmhead;
	size_t onqm = c->nqm, tbytes = 0;
	unsigned nt, ntm = template_msgs(x, c, now_ns, &nt);
	for (unsigned i = 0; i < ntm; i++)
		tbytes += x->tlen[i];
	/* The templates always go: a stream that used many variants may have more of them than
	 * the queue holds (the data after them then waits for room, as when the queue is full). */
	uint8_t *nq = malloc(tbytes > c->qcap ? tbytes : c->qcap);
	struct qmsg *nqm = malloc((onqm + ntm) * sizeof(*nqm));
	if (!nq || !nqm) {
		free(nq);
		free(nqm);
		tcp_fail(x, c);
		return;
	}
	c->seq = 0; /* the template messages were numbered before: they carry no data records */
	size_t len = 0, n = 0, off = 0;
	c->st.template_records += nt;
	for (unsigned i = 0; i < ntm; i++) {
		memcpy(nq + len, x->tbuf + len, x->tlen[i]);
		w32(nq + len + 8, 0);
		nqm[n++] = (struct qmsg){.len = (uint32_t)x->tlen[i], .kind = M_TEMPLATE};
		len += x->tlen[i];
	}
	for (size_t i = 0; i < onqm; i++) {
		const struct qmsg *m = &oqm[i];
		if (m->kind == M_DATA && len + m->len <= c->qcap) {
			memcpy(nq + len, old + off, m->len);
			w32(nq + len + 8, c->seq);
			c->seq += m->ndata;
			if (m->written)
				c->st.retransmitted += m->nflows;
			nqm[n] = *m;
			nqm[n++].written = 0;
			len += m->len;
		} else if (m->kind == M_DATA) {
			c->st.not_delivered += m->nflows;
		}
		off += m->len;
	}
	free(c->q);
	free(c->qm);
	c->q = nq;
	c->qhead = 0;
	c->qlen = len;
	c->qm = nqm;
	c->qmhead = 0;
	c->nqm = n;
	c->qmcap = onqm + ntm;
	c->qsent = 0;
	c->templates_sent = true;
	tcp_pump(x, c);
}

static void tcp_fail(struct secho_ipfix *x, struct coll *c)
{
	/* What the peer acknowledged before the failure is delivered: not sent again. */
	if (c->fd >= 0 && c->state == S_UP)
		tcp_acked(c);
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->st.errors++;
	c->st.connected = false;
	c->state = S_DOWN;
	c->next_try_ns = x->now_ns + (uint64_t)c->backoff_ms * 1000000u;
	c->backoff_ms = c->backoff_ms * 2 > x->cfg.backoff_max_ms ? x->cfg.backoff_max_ms
	                                                          : c->backoff_ms * 2;
	c->qsent = 0;
}

/* Drop the messages the peer has acknowledged. */
static void tcp_acked(struct coll *c)
{
	int outq = 0;
	if (ioctl(c->fd, SIOCOUTQ, &outq) < 0)
		return;
	size_t acked = c->qsent > (size_t)outq ? c->qsent - (size_t)outq : 0;
	while (c->nqm && c->qm[c->qmhead].len <= acked) {
		size_t l = c->qm[c->qmhead].len;
		acked -= l;
		c->qsent -= l;
		c->qhead += l;
		c->qlen -= l;
		c->qmhead++;
		c->nqm--;
	}
	if (!c->qlen)
		c->qhead = 0;
	if (!c->nqm)
		c->qmhead = 0;
}

/* Write what the socket takes; count messages as they go out whole. */
static void tcp_pump(struct secho_ipfix *x, struct coll *c)
{
	while (c->state == S_UP && c->qsent < c->qlen) {
		ssize_t n = send(c->fd, c->q + c->qhead + c->qsent, c->qlen - c->qsent,
		                 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			tcp_fail(x, c);
			return;
		}
		/* Mark the messages this write reached; count those it completed. */
		size_t before = c->qsent, at = 0;
		c->qsent += (size_t)n;
		for (size_t i = 0; i < c->nqm && at < c->qsent; i++) {
			struct qmsg *m = &c->qm[c->qmhead + i];
			if (at + m->len > before)
				m->written = 1;
			if (at + m->len > before && at + m->len <= c->qsent) {
				c->st.messages++;
				c->st.bytes += m->len;
			}
			at += m->len;
		}
	}
	if (c->state == S_UP)
		tcp_acked(c);
}

/* Connection state: finish connecting, notice a peer that went away, reconnect. */
static void tcp_tick(struct secho_ipfix *x, struct coll *c, uint64_t now_ns)
{
	if (c->state == S_DOWN && now_ns >= c->next_try_ns)
		tcp_connect(x, c, now_ns);
	if (c->state == S_CONNECTING) {
		struct pollfd p = {.fd = c->fd, .events = POLLOUT};
		if (poll(&p, 1, 0) == 1) {
			int e = 0;
			socklen_t el = sizeof(e);
			getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &e, &el);
			if (e) {
				tcp_fail(x, c);
				return;
			}
			tcp_up(x, c, now_ns);
		}
		return;
	}
	if (c->state != S_UP)
		return;
	struct pollfd p = {.fd = c->fd, .events = POLLIN};
	if (poll(&p, 1, 0) == 1) {
		uint8_t junk[512];
		ssize_t n = recv(c->fd, junk, sizeof(junk), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR) ||
		    (p.revents & (POLLERR | POLLHUP))) {
			tcp_fail(x, c); /* the collector closed or reset the connection */
			return;
		}
	}
	tcp_pump(x, c);
}

/* ---- statistics ---- */

static void append_stats(struct secho_ipfix *x, struct coll *c, uint64_t now_ns)
{
	uint8_t r[SECHO_IPFIX_REC_OPTIONS], *p = r;
	if (c->type == T_UDP)
		udp_flush(c); /* the counters below as they were when each message was a send */
	p = w32(p, x->cfg.odid);
	p = w64(p, c->st.messages);
	/* exported: this message's flows too, less those the transport refused or dropped
	 * (they are in notSentFlowTotalCount below, never in both). Over UDP, exported says
	 * sent: whether a datagram arrived is not known to the exporter. */
	uint64_t all = c->st.records + c->nflows;
	p = w64(p, all > c->st.not_delivered ? all - c->st.not_delivered : 0);
	p = w64(p, c->st.bytes);
	p = w64(p, x->meter.observed_flows);
	p = w64(p, x->meter.ignored_packets);
	p = w64(p, x->meter.ignored_octets);
	p = w64(p, c->st.not_delivered + x->meter.not_sent_flows);
	p = w64(p, ms(x->init_ns));
	templates_due(x, c, now_ns);
	append(x, c, SECHO_IPFIX_TID_OPTIONS, r, (size_t)(p - r), false, now_ns);
}

/* ---- public ---- */

int secho_ipfix_new(struct secho_ipfix **out, const struct secho_ipfix_cfg *cfg)
{
	*out = NULL;
	struct secho_ipfix *x = calloc(1, sizeof(*x));
	if (!x || !(x->tbuf = malloc(TBUF))) {
		free(x);
		return -ENOMEM;
	}
	x->tcap = TBUF;
	x->cfg = *cfg;
	if (!x->cfg.mtu)
		x->cfg.mtu = 1400;
	if (!x->cfg.template_refresh_s)
		x->cfg.template_refresh_s = 60;
	if (!x->cfg.stats_interval_s)
		x->cfg.stats_interval_s = 60;
	if (!x->cfg.flush_ms)
		x->cfg.flush_ms = 500;
	if (!x->cfg.tcp_queue_bytes)
		x->cfg.tcp_queue_bytes = 4u << 20;
	if (!x->cfg.backoff_min_ms)
		x->cfg.backoff_min_ms = 100;
	if (!x->cfg.backoff_max_ms)
		x->cfg.backoff_max_ms = 10000;
	if (x->cfg.mtu < 576 || x->cfg.mtu > 65535 || x->cfg.tcp_queue_bytes < 65536 ||
	    x->cfg.backoff_min_ms > x->cfg.backoff_max_ms) {
		free(x->tbuf);
		free(x);
		return -EINVAL;
	}
	*out = x;
	return 0;
}

/* Set err to the reason, return -EINVAL (secho_ipfix_parse_url's refusals). */
static int url_bad(char *err, size_t errlen, const char *why)
{
	snprintf(err, errlen, "%s", why);
	return -EINVAL;
}

/* Contract: ipfix.h. */
int secho_ipfix_parse_url(const char *url, struct secho_ipfix_url *u, char *err, size_t errlen)
{
	const char *h, *port = NULL;
	size_t hl;

	memset(u, 0, sizeof(*u));
	if (!strncmp(url, "udp://", 6) || !strncmp(url, "tcp://", 6)) {
		u->transport = url[0] == 'u' ? SECHO_IPFIX_UDP : SECHO_IPFIX_TCP;
		h = url + 6;
	} else if (!strncmp(url, "file:", 5)) {
		if (!url[5])
			return url_bad(err, errlen, "no file name after 'file:'");
		u->transport = SECHO_IPFIX_FILE;
		u->path = url + 5;
		return 0;
	} else {
		return url_bad(err, errlen, "the scheme is not udp://, tcp:// or file:");
	}
	if (*h == '[') {
		const char *close = strchr(h, ']');
		if (!close || close == h + 1)
			return url_bad(err, errlen, "an IPv6 address needs its closing ']'");
		hl = (size_t)(close - h - 1);
		if (hl >= 64)
			return url_bad(err, errlen, "the IPv6 address is too long");
		if (strspn(h + 1, "0123456789abcdefABCDEF:.") < hl)
			return url_bad(err, errlen, "not an IPv6 address between the brackets");
		memcpy(u->host, h + 1, hl);
		if (close[1] == ':')
			port = close + 2;
		else if (close[1])
			return url_bad(err, errlen, "something after the ']' that is not ':PORT'");
	} else {
		const char *colon = strchr(h, ':');
		hl = colon ? (size_t)(colon - h) : strlen(h);
		if (colon)
			port = colon + 1;
		if (!hl)
			return url_bad(err, errlen, "no host");
		if (strspn(h, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") <
		    hl)
			return url_bad(err, errlen,
			               "the host is not a name or an address (IPv6: use [ADDR])");
		if (hl >= sizeof(u->host))
			return url_bad(err, errlen, "the host name is too long");
		memcpy(u->host, h, hl);
	}
	if (!port) {
		snprintf(u->port, sizeof(u->port), "%d", SECHO_IPFIX_PORT);
		return 0;
	}
	/* Decimal digits only (no sign, no white space), 1-65535. */
	size_t pl = strlen(port);
	unsigned long p = 0;
	if (!pl || strspn(port, "0123456789") != pl)
		return url_bad(err, errlen, "the port is not 1-65535");
	for (size_t i = 0; i < pl && p <= 65535; i++)
		p = p * 10 + (unsigned long)(port[i] - '0');
	if (p < 1 || p > 65535)
		return url_bad(err, errlen, "the port is not 1-65535");
	snprintf(u->port, sizeof(u->port), "%lu", p);
	return 0;
}

/* Resolve a parsed UDP/TCP collector. */
static int resolve(const struct secho_ipfix_url *u, int socktype, struct sockaddr_storage *ss,
                   socklen_t *len, char *err, size_t errlen)
{
	struct addrinfo hints = {.ai_socktype = socktype}, *ai = NULL;
	int rc = getaddrinfo(u->host, u->port, &hints, &ai);
	if (rc || !ai) {
		snprintf(err, errlen, "'%s': %s", u->host, gai_strerror(rc));
		return -EINVAL;
	}
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*len = ai->ai_addrlen;
	freeaddrinfo(ai);
	return 0;
}

int secho_ipfix_add_collector(struct secho_ipfix *x, const char *url, char *err, size_t errlen)
{
	if (x->nc == SECHO_IPFIX_MAX_COLLECTORS) {
		snprintf(err, errlen, "at most %d collectors", SECHO_IPFIX_MAX_COLLECTORS);
		return -E2BIG;
	}
	struct coll *c = calloc(1, sizeof(*c));
	if (!c || !(c->msg = malloc(x->cfg.mtu))) {
		free(c);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	snprintf(c->st.url, sizeof(c->st.url), "%s", url);
	c->fd = -1;
	c->used[0] = (1u << NBASE) - 1; /* the plain variants: every stream starts with them */
	msg_reset(c);
	struct secho_ipfix_url u;
	char why[128];
	int rc = secho_ipfix_parse_url(url, &u, why, sizeof(why));
	if (rc) {
		snprintf(err, errlen, "'%s': %s", url, why);
		goto fail;
	}
	if (u.transport != SECHO_IPFIX_FILE) {
		c->type = u.transport == SECHO_IPFIX_UDP ? T_UDP : T_TCP;
		rc = resolve(&u, c->type == T_UDP ? SOCK_DGRAM : SOCK_STREAM, &c->addr, &c->alen,
		             err, errlen);
		if (rc)
			goto fail;
	} else {
		c->type = T_FILE;
		c->fd = open(u.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (c->fd < 0) {
			rc = -errno;
			snprintf(err, errlen, "%s: %s", u.path, strerror(-rc));
			goto fail;
		}
	}
	if (c->type == T_UDP) {
		/* A connected socket: one destination, and ICMP errors come back as send
		 * errors (counted). A large send buffer absorbs a burst of messages. */
		int sz = 4 << 20;
		size_t cap = (size_t)UDP_BATCH * x->cfg.mtu;
		if (cap < UDP_BATCH_MIN)
			cap = UDP_BATCH_MIN;
		if (cap > UDP_BATCH_MAX)
			cap = UDP_BATCH_MAX;
		if (!(c->ub = calloc(1, sizeof(*c->ub))) || !(c->ub->buf = malloc(cap))) {
			rc = -ENOMEM;
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
		c->ub->cap = cap;
		c->fd = socket(c->addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (c->fd >= 0)
			setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
		if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&c->addr, c->alen) < 0) {
			rc = -errno;
			snprintf(err, errlen, "%s: %s", url, strerror(-rc));
			goto fail;
		}
	}
	if (c->type == T_TCP) {
		c->qcap = x->cfg.tcp_queue_bytes;
		c->q = malloc(c->qcap);
		if (!c->q) {
			rc = -ENOMEM;
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
		c->backoff_ms = x->cfg.backoff_min_ms;
		c->state = S_DOWN;
		tcp_connect(x, c, x->now_ns);
	} else {
		c->st.connected = true;
	}
	x->c[x->nc++] = c;
	return 0;
fail:
	if (c->fd >= 0)
		close(c->fd);
	if (c->ub)
		free(c->ub->buf);
	free(c->ub);
	free(c->msg);
	free(c->q);
	free(c);
	return rc;
}

void secho_ipfix_set_meter_stats(struct secho_ipfix *x, const struct secho_ipfix_meter_stats *m)
{
	x->meter = *m;
}

static void see_time(struct secho_ipfix *x, uint64_t now_ns)
{
	if (!x->init_ns) {
		x->init_ns = now_ns;
		x->next_stats_ns = now_ns + (uint64_t)x->cfg.stats_interval_s * 1000000000u;
	}
	x->now_ns = now_ns;
}

/* The feature sets rec carries after the len bytes of its plain record in r: appended, with
 * the template ID of its variant v and those sets. Sets are left out from the last one on
 * while the record would not fit in a message of the MTU. Returns the feature template's
 * index, or -1 when it goes out plain. */
static int feat_append(struct secho_ipfix *x, const struct secho_flow_rec *rec, unsigned v,
                       uint8_t *r, size_t *len, uint16_t *tid)
{
	uint32_t carried = secho_ipfix_feat_carried(rec);
	while (carried) {
		size_t fl = secho_ipfix_feat_encode(rec, carried, r + *len);
		if (HDR_LEN + SET_HDR + *len + fl <= x->cfg.mtu) {
			int k = feat_template(x, v, carried);
			if (k < 0)
				return -1;
			*len += fl;
			*tid = (uint16_t)(SECHO_IPFIX_TID_FEAT + k);
			return k;
		}
		carried &= ~(1u << (31 - __builtin_clz(carried)));
	}
	return -1;
}

int secho_ipfix_record(struct secho_ipfix *x, const struct secho_flow_rec *rec, uint64_t now_ns)
{
	uint8_t r[SECHO_IPFIX_REC_MAX + SECHO_IPFIX_FEAT_REC_MAX];
	uint16_t tid;
	size_t len = secho_ipfix_encode(x->cfg.biflow, rec, r, &tid);
	if (!len)
		return -EINVAL;
	unsigned v = rec_variant(x->cfg.biflow, rec);
	int k = rec->feat_layout ? feat_append(x, rec, v, r, &len, &tid) : -1;
	see_time(x, now_ns);
	for (unsigned i = 0; i < x->nc; i++) {
		templates_due(x, x->c[i], now_ns);
		if (k >= 0)
			feat_due(x, x->c[i], (unsigned)k, now_ns);
		else
			variant_due(x, x->c[i], v, now_ns);
		append(x, x->c[i], tid, r, len, true, now_ns);
	}
	return 0;
}

void secho_ipfix_get_stats(const struct secho_ipfix *x, struct secho_ipfix_stats *st)
{
	if (!st)
		return;
	memset(st, 0, sizeof(*st));
	st->ncollectors = x->nc;
	for (unsigned i = 0; i < x->nc; i++) {
		st->c[i] = x->c[i]->st;
		st->c[i].queued_bytes = x->c[i]->qlen;
	}
}

int secho_ipfix_tick(struct secho_ipfix *x, uint64_t now_ns, struct secho_ipfix_stats *st)
{
	see_time(x, now_ns);
	bool stats_due = now_ns >= x->next_stats_ns;
	if (stats_due)
		x->next_stats_ns = now_ns + (uint64_t)x->cfg.stats_interval_s * 1000000000u;
	for (unsigned i = 0; i < x->nc; i++) {
		struct coll *c = x->c[i];
		templates_due(x, c, now_ns);
		if (stats_due) {
			append_stats(x, c, now_ns);
			flush(x, c, now_ns);
		}
		if (c->len > HDR_LEN &&
		    now_ns - c->first_ns >= (uint64_t)x->cfg.flush_ms * 1000000u)
			flush(x, c, now_ns);
		if (c->type == T_UDP)
			udp_flush(c); /* a finished message waits at most a tick */
		if (c->type == T_TCP)
			tcp_tick(x, c, now_ns);
	}
	secho_ipfix_get_stats(x, st);
	return 0;
}

int secho_ipfix_close(struct secho_ipfix *x, uint64_t now_ns, struct secho_ipfix_stats *final,
                      int timeout_ms)
{
	int rc = 0;
	see_time(x, now_ns);
	for (unsigned i = 0; i < x->nc; i++) {
		struct coll *c = x->c[i];
		append_stats(x, c, now_ns);
		flush(x, c, now_ns);
		if (c->type == T_UDP)
			udp_flush(c);
	}
	/* Wait, on the monotonic clock: TCP until every queued byte is acknowledged, UDP until
	 * the socket has handed every datagram on (SIOCOUTQ: bytes still charged to it). */
	uint64_t t0 = secho_mono_ns(),
	         deadline = t0 + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000u;
	for (;;) {
		bool pending = false;
		uint64_t t = secho_mono_ns();
		for (unsigned i = 0; i < x->nc; i++) {
			struct coll *c = x->c[i];
			if (c->type == T_UDP) {
				int outq = 0;
				if (ioctl(c->fd, SIOCOUTQ, &outq) == 0 && outq > 0)
					pending = true;
				continue;
			}
			if (c->type != T_TCP)
				continue;
			x->now_ns = now_ns + (t - t0);
			tcp_tick(x, c, x->now_ns);
			if (c->nqm)
				pending = true;
		}
		if (!pending || t >= deadline)
			break;
		struct timespec sl = {0, 5000000};
		nanosleep(&sl, NULL);
	}
	for (unsigned i = 0; i < x->nc; i++) {
		struct coll *c = x->c[i];
		if (c->type == T_TCP) {
			for (size_t j = 0; j < c->nqm; j++)
				c->st.not_delivered += c->qm[c->qmhead + j].nflows;
			c->st.connected = false;
		}
		if (c->nqm || c->st.not_delivered)
			rc = -ETIMEDOUT;
	}
	secho_ipfix_get_stats(x, final);
	for (unsigned i = 0; i < x->nc; i++) {
		struct coll *c = x->c[i];
		if (c->fd >= 0) {
			if (c->type == T_TCP)
				shutdown(c->fd, SHUT_WR);
			close(c->fd);
		}
		if (c->ub)
			free(c->ub->buf);
		free(c->ub);
		free(c->msg);
		free(c->q);
		free(c->qm);
		free(c);
	}
	free(x->tbuf);
	free(x);
	return rc;
}
