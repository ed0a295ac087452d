/*
 * src/flow/core/key.h - the flow key: what makes two packets one flow, how it is read from
 * a dissected frame, put in a canonical order for biflows, and which worker it goes to.
 *
 * Fields in the order they are hashed (the whole struct, SECHO_FLOW_KEY_LEN bytes, no
 * padding: src/flow/core/hash.h), each named by the IPFIX information element it is exported
 * as (IANA). Addresses in network order, IPv4 in the first 4 bytes with the other 12 zero,
 * so that keys compare and hash as plain bytes; ports and ICMP type/code in host order.
 * Freestanding (only <stdint.h> and <stdbool.h>): the XDP offload program
 * (src/flow/offload/offload_xdp.bpf.c) keys flows with the same struct.
 */
#ifndef SECHO_FLOW_KEY_H
#define SECHO_FLOW_KEY_H

#include <stdbool.h>
#include <stdint.h>

struct secho_flow_key {
	uint8_t ip_version;       /* ipVersion (60): 4 or 6 */
	uint8_t proto;            /* protocolIdentifier (4) */
	uint16_t vlan;            /* vlanId (58): VID of the outer tag; 0 = untagged */
	uint16_t vlan_inner;      /* VID of the inner tag of a QinQ frame; 0 = none */
	uint16_t sport;           /* sourceTransportPort (7); 0 without ports (ICMP...) */
	uint16_t dport;           /* destinationTransportPort (11); 0 without ports */
	uint16_t icmp_type_code;  /* icmpTypeCodeIPv4 (32) / IPv6 (139): type << 8 | code */
	uint8_t src[16], dst[16]; /* sourceIPv4Address (8) / sourceIPv6Address (27), ... */
	/* The tunnel the packet came in (innermost; docs/FLOW.md, "The flow key"): tenants'
	 * address spaces overlap, so the same inner addresses in two VXLAN VNIs, GRE keys or
	 * GTP-U TEIDs are two flows. MPLS labels and outer addresses are not in the key. */
	uint8_t tun_type;    /* SECHO_TUN_* (secho/dissect.h); 0 = not tunnelled */
	uint8_t tun_rsvd[3]; /* zero */
	uint32_t tun_id;     /* VNI, GRE key, GTP-U TEID, ERSPAN session ID; 0 for IP in IP,
	                      * GRE without a key, Ethernet over MPLS */
};

/*
 * ICMP queries and their answers in biflows: the key's ICMP type and code are those its
 * src end sends, so the two ends of an echo differ in type (request 8, reply 0). To make a
 * query and its answer one biflow, the answer's type is what the key's other end sends:
 * reversing a key (secho_flow_key_reverse, and so secho_flow_key_canon) swaps a query
 * type with its answer's. The pairs: ICMP (RFC 792, 950) echo 8/0, timestamp 13/14,
 * information 15/16, address mask 17/18; ICMPv6 (RFC 4443, 4620) echo 128/129, node
 * information 139/140. Every other type (errors, neighbour discovery, which is mostly
 * multicast) is its own answer: both ends of its biflow send the same type and code. The
 * code is kept. Returns tc unchanged for keys that are not ICMP of their IP version.
 * Freestanding (the XDP program uses it). Can't fail.
 */
static inline uint16_t secho_flow_icmp_answer(uint8_t ip_version, uint8_t proto, uint16_t tc)
{
	unsigned t = tc >> 8, a = t;

	if (ip_version == 4 && proto == 1) {
		if (t == 8 || t == 0)
			a = t ^ 8;
		else if (t >= 13 && t <= 18)
			a = (t & 1) ? t + 1 : t - 1; /* 13/14, 15/16, 17/18 */
	} else if (ip_version == 6 && proto == 58) {
		if (t == 128 || t == 129 || t == 139 || t == 140)
			a = t ^ 1;
	}
	return (uint16_t)(a << 8 | (tc & 0xff));
}

/* Key bytes hashed: the whole struct secho_flow_key (52 bytes, no padding). */
#define SECHO_FLOW_KEY_LEN 52
_Static_assert(sizeof(struct secho_flow_key) == SECHO_FLOW_KEY_LEN, "flow key has no padding");
_Static_assert(__builtin_offsetof(struct secho_flow_key, tun_id) == 48, "tun_id at word 12");

struct secho_dissect;

/*
 * Put *k in canonical order into *out: the lower of (src, sport) and (dst, dport) first
 * (addresses compared as bytes, then ports). Returns true when that swapped the two ends,
 * i.e. when *k runs from the higher end to the lower. A swap reverses the key
 * (secho_flow_key_reverse: an ICMP query type becomes its answer's); VLANs, version,
 * protocol and the tunnel fields are left as they are. Can't fail.
 */
bool secho_flow_key_canon(const struct secho_flow_key *k, struct secho_flow_key *out);

/* Swap the two ends of *k in place: addresses, ports, and an ICMP query type with its
 * answer's (secho_flow_icmp_answer). Can't fail. */
void secho_flow_key_reverse(struct secho_flow_key *k);

/* Which worker of n meters a frame: a symmetric hash of its VLANs, (innermost) addresses
 * and tunnel (type and ID, the same both ways), not its ports: later fragments have none
 * and must meet their first fragment (a tunnelled packet's inner later fragments come in
 * the same tunnel). 0 for frames that are not IP. Can't fail. */
unsigned secho_flow_worker_of(const uint8_t *frame, const struct secho_dissect *d, uint64_t seed,
                              unsigned n);

/* Build the key of a dissected IP packet in its own direction (a later fragment gets no
 * ports: the caller looks them up). Can't fail. */
void secho_flow_key_from(const uint8_t *frame, const struct secho_dissect *d,
                         struct secho_flow_key *k);

/* The key of a dissected IP packet in canonical order (secho_flow_key_from, then
 * secho_flow_key_canon, in one: the same bytes, the same return). Can't fail. */
bool secho_flow_key_canon_from(const uint8_t *frame, const struct secho_dissect *d,
                               struct secho_flow_key *k);

#endif
