/*
 * src/wire/wire_inner.h - the L2-L4 dissector's body (private to src/wire/).
 *
 * One definition, two users: src/wire/dissect.c exports it (secho_dissect, for the flow
 * meter and anyone else), and src/wire/parse.c inlines it into the endpoint's request parse,
 * where the compiler keeps the description in registers and drops what the policy never
 * reads (the endpoint's parse is on its hot path). The contract is include/secho/dissect.h.
 */
#ifndef SECHO_WIRE_INNER_H
#define SECHO_WIRE_INNER_H

#include <string.h>

#include "secho/dissect.h"

static inline uint16_t dis_rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t dis_rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline int dis_is_vlan_tpid(uint16_t t)
{
	return t == SECHO_ETHERTYPE_VLAN || t == SECHO_ETHERTYPE_QINQ ||
	       t == SECHO_ETHERTYPE_QINQ_OLD;
}

/*
 * The transport header at d->l4_off (d->proto, d->l4_len set). avail = bytes of it in
 * memory and inside the IP packet. Only TCP, UDP and the ICMP of the packet's own IP
 * version are looked into; any other protocol is described by addresses and protocol.
 */
static inline enum secho_dissect_reason dis_l4(const uint8_t *l4, size_t avail,
                                               struct secho_dissect *d)
{
	switch (d->proto) {
	case SECHO_IPPROTO_UDP:
		if (avail < 8)
			return SECHO_DISSECT_UDP_SHORT;
		d->sport = dis_rd16(l4);
		d->dport = dis_rd16(l4 + 2);
		break;
	case SECHO_IPPROTO_TCP: {
		if (avail < 20)
			return SECHO_DISSECT_TCP_SHORT;
		unsigned doff = (unsigned)(l4[12] >> 4) * 4;
		/* The options may lie beyond a snap length, not beyond the packet. */
		if (doff < 20 || doff > d->l4_len)
			return SECHO_DISSECT_TCP_DOFF;
		d->sport = dis_rd16(l4);
		d->dport = dis_rd16(l4 + 2);
		d->tcp_flags = l4[13];
		d->tcp_doff = (uint8_t)doff;
		break;
	}
	case SECHO_IPPROTO_ICMP:
	case SECHO_IPPROTO_ICMPV6:
		/* ICMP in IPv6 or ICMPv6 in IPv4 is just another protocol. */
		if ((d->proto == SECHO_IPPROTO_ICMP) != (d->ip_version == 4))
			return SECHO_DISSECT_OK;
		if (avail < 8)
			return SECHO_DISSECT_ICMP_SHORT;
		d->icmp_type = l4[0];
		d->icmp_code = l4[1];
		break;
	default:
		return SECHO_DISSECT_OK;
	}
	d->flags |= SECHO_DISSECT_F_L4;
	return SECHO_DISSECT_OK;
}

/* IPv4 at f + d->l3_off; cap / wire = bytes from there in memory / on the wire. */
static inline enum secho_dissect_reason dis_ip4(const uint8_t *f, size_t cap, size_t wire,
                                                struct secho_dissect *d)
{
	const uint8_t *ip = f + d->l3_off;

	if (cap < 20)
		return SECHO_DISSECT_IP4_SHORT;
	if ((ip[0] >> 4) != 4)
		return SECHO_DISSECT_IP4_VERSION;
	d->ip_version = 4;
	size_t ihl = (size_t)(ip[0] & 0x0f) * 4;
	if (ihl < 20)
		return SECHO_DISSECT_IP4_IHL;
	if (ihl > cap)
		return SECHO_DISSECT_IP4_OPT_SHORT;
	size_t tot = dis_rd16(ip + 2);
	if (tot < ihl)
		return SECHO_DISSECT_IP4_TOTLEN;
	if (tot > wire)
		return SECHO_DISSECT_IP_TRUNC;
	d->addr_off = (uint16_t)(d->l3_off + 12);
	d->proto = ip[9];
	d->ip_len = (uint32_t)tot;
	d->l4_off = (uint16_t)(d->l3_off + ihl);
	d->l4_len = (uint32_t)(tot - ihl);
	if (ihl > 20)
		d->flags |= SECHO_DISSECT_F_IP4_OPTIONS;
	if (tot > cap)
		d->flags |= SECHO_DISSECT_F_SNAPPED;
	/* RFC 791: flags (reserved, DF, MF) | offset in 8-byte units. */
	uint16_t fr = dis_rd16(ip + 6);
	d->frag_id = dis_rd16(ip + 4);
	if (fr & 0x3fff) { /* MF or an offset */
		d->frag_off = (uint16_t)((fr & 0x1fff) << 3);
		if (fr & 0x2000)
			d->flags |= SECHO_DISSECT_F_FRAG_MF;
		if (d->frag_off) {
			d->frag = SECHO_FRAG_LATER;
			if (d->frag_off + d->l4_len > 65535)
				return SECHO_DISSECT_FRAG_OVERFLOW;
			return SECHO_DISSECT_OK;
		}
		d->frag = SECHO_FRAG_FIRST;
	}
	size_t avail = (tot < cap ? tot : cap) - ihl;
	return dis_l4(ip + ihl, avail, d);
}

/*
 * The IPv6 extension headers the dissector walks (RFC 8200 section 4, IANA "IPv6 Extension
 * Header Types"): hop-by-hop (0), routing (43), fragment (44), AH (51), destination options
 * (60), all below 64, as a bit mask; and the Mobility header (135). ESP (50) is not: what
 * follows it is encrypted. HIP (139) and Shim6 (140) are not followed either (their
 * payloads are rare and their next header is usually 59).
 */
#define DIS_IP6_EXT_MASK                                                                           \
	(1ull << SECHO_IPPROTO_HOPOPTS | 1ull << SECHO_IPPROTO_ROUTING |                           \
	 1ull << SECHO_IPPROTO_FRAGMENT | 1ull << SECHO_IPPROTO_AH |                               \
	 1ull << SECHO_IPPROTO_DSTOPTS)

static inline int dis_ip6_is_ext(uint8_t nh)
{
	return nh < 64 ? (int)((DIS_IP6_EXT_MASK >> nh) & 1) : nh == SECHO_IPPROTO_MOBILITY;
}

/* IPv6 at f + d->l3_off, then its extension headers (RFC 8200 section 4). */
static inline enum secho_dissect_reason dis_ip6(const uint8_t *f, size_t cap, size_t wire,
                                                struct secho_dissect *d)
{
	const uint8_t *ip = f + d->l3_off;

	if (cap < 40)
		return SECHO_DISSECT_IP6_SHORT;
	if ((ip[0] >> 4) != 6)
		return SECHO_DISSECT_IP6_VERSION;
	d->ip_version = 6;
	size_t tot = 40 + (size_t)dis_rd16(ip + 4);
	if (tot > wire)
		return SECHO_DISSECT_IP_TRUNC;
	d->addr_off = (uint16_t)(d->l3_off + 8);
	d->ip_len = (uint32_t)tot;
	if (tot > cap)
		d->flags |= SECHO_DISSECT_F_SNAPPED;
	/* Extension headers must lie inside the packet and in memory. */
	size_t lim = tot < cap ? tot : cap;
	size_t h = 40;
	unsigned n = 0;
	int seen_frag = 0;
	uint8_t nh = ip[6];
	/* One test per header on the way out of the chain (TCP, UDP... are not in the mask). */
	while (dis_ip6_is_ext(nh)) {
		size_t len;
		if (nh == SECHO_IPPROTO_HOPOPTS || nh == SECHO_IPPROTO_ROUTING ||
		    nh == SECHO_IPPROTO_DSTOPTS || nh == SECHO_IPPROTO_MOBILITY) {
			/* RFC 8200 4.3: hop-by-hop only right after the IPv6 header. */
			if (nh == SECHO_IPPROTO_HOPOPTS && n)
				return SECHO_DISSECT_IP6_HBH_ORDER;
			if (n == SECHO_DISSECT_MAX_EXT)
				return SECHO_DISSECT_IP6_EXT_DEPTH;
			if (h + 8 > lim)
				return SECHO_DISSECT_IP6_EXT_SHORT;
			/* Hdr Ext Len: 8-octet units beyond the first 8 (the Mobility header's
			 * Header Len too, RFC 6275 6.1.1; its Payload Proto is the next header) */
			len = ((size_t)ip[h + 1] + 1) * 8;
		} else if (nh == SECHO_IPPROTO_AH) {
			if (n == SECHO_DISSECT_MAX_EXT)
				return SECHO_DISSECT_IP6_EXT_DEPTH;
			if (h + 8 > lim)
				return SECHO_DISSECT_IP6_EXT_SHORT;
			/* RFC 4302 2.2: Payload Len in 4-octet units, minus 2 */
			len = ((size_t)ip[h + 1] + 2) * 4;
		} else { /* SECHO_IPPROTO_FRAGMENT */
			if (n == SECHO_DISSECT_MAX_EXT)
				return SECHO_DISSECT_IP6_EXT_DEPTH;
			if (seen_frag)
				return SECHO_DISSECT_IP6_FRAG_TWICE;
			seen_frag = 1;
			if (h + 8 > lim)
				return SECHO_DISSECT_IP6_EXT_SHORT;
			len = 8;
			/* RFC 8200 4.5: next header, reserved, offset (13 bits) | res | M, id. */
			uint16_t fo = dis_rd16(ip + h + 2);
			d->frag_off = fo & 0xfff8;
			d->frag_id = dis_rd32(ip + h + 4);
			if (fo & 1)
				d->flags |= SECHO_DISSECT_F_FRAG_MF;
			if (d->frag_off) {
				d->frag = SECHO_FRAG_LATER;
			} else if (fo & 1) {
				d->frag = SECHO_FRAG_FIRST;
			} else {
				d->flags |= SECHO_DISSECT_F_ATOMIC;
			}
		}
		if (h + len > lim)
			return SECHO_DISSECT_IP6_EXT_SHORT;
		d->flags |= SECHO_DISSECT_F_IP6_EXT;
		nh = ip[h];
		h += len;
		n++;
		if (d->frag == SECHO_FRAG_LATER) {
			/* The rest is the middle of a packet: the next header is the one the
			 * fragment header names (not necessarily the transport protocol). */
			d->proto = nh;
			d->l4_off = (uint16_t)(d->l3_off + h);
			d->l4_len = (uint32_t)(tot - h);
			if (d->frag_off + d->l4_len > 65535)
				return SECHO_DISSECT_FRAG_OVERFLOW;
			return SECHO_DISSECT_OK;
		}
	}
	d->proto = nh;
	d->l4_off = (uint16_t)(d->l3_off + h);
	d->l4_len = (uint32_t)(tot - h);
	return dis_l4(ip + h, lim - h, d);
}

/* ---- tunnels (the flow meter's dissector only: dis_frame's tunnels) ---- */

#define DIS_UDP_VXLAN    4789 /* RFC 7348 */
#define DIS_UDP_GENEVE   6081 /* RFC 8926 */
#define DIS_UDP_GTPU     2152 /* 3GPP TS 29.281 */
#define DIS_GTPU_MAX_EXT 8    /* GTP-U extension headers followed at most */

/* IP protocols that may carry a tunnel: IPv4 (4), UDP (17), IPv6 (41), GRE (47). */
#define DIS_TUN_PROTO_MASK (1ull << 4 | 1ull << 17 | 1ull << 41 | 1ull << 47)

/* Is the IP packet just described one whose payload may be a tunnel? One test for most
 * packets (TCP is not in the mask); UDP by its destination port. Fragments (of the
 * outer packet) are not followed: a later one holds no tunnel header. */
static inline int dis_tun_candidate(const struct secho_dissect *d)
{
	if (d->proto >= 64 || !((DIS_TUN_PROTO_MASK >> d->proto) & 1))
		return 0;
	if (d->frag != SECHO_FRAG_NONE)
		return 0;
	if (d->proto != SECHO_IPPROTO_UDP)
		return 1;
	return (d->flags & SECHO_DISSECT_F_L4) &&
	       (d->dport == DIS_UDP_VXLAN || d->dport == DIS_UDP_GENEVE ||
	        d->dport == DIS_UDP_GTPU);
}

#define DIS_IN_ETH 1 /* what a tunnel carries: an Ethernet frame, an IPv4 or IPv6 packet */
#define DIS_IN_IP4 4
#define DIS_IN_IP6 6

/*
 * The packet a tunnel carries at f + off, of kind DIS_IN_*: cend / pend = where the
 * enclosing packet ends in memory / on the wire (the inner one must fit it). The IP
 * fields are described afresh; the layer 2 fields, MPLS, PPPoE and tunnel fields stay.
 * The caller checked that an Ethernet header fits cend.
 */
static inline enum secho_dissect_reason dis_inner(const uint8_t *f, size_t cend, size_t pend,
                                                  size_t off, unsigned kind,
                                                  struct secho_dissect *d)
{
	d->ip_version = 0;
	d->addr_off = 0;
	d->proto = 0;
	d->frag = 0;
	d->flags &= SECHO_DISSECT_F_MPLS | SECHO_DISSECT_F_PPPOE | SECHO_DISSECT_F_TUNNEL;
	d->ip_len = 0;
	d->l4_off = 0;
	d->frag_off = 0;
	d->l4_len = 0;
	d->frag_id = 0;
	d->sport = 0;
	d->dport = 0;
	d->icmp_type = 0;
	d->icmp_code = 0;
	d->tcp_flags = 0;
	d->tcp_doff = 0;
	d->inner_l2_off = 0;
	if (kind == DIS_IN_ETH) {
		d->inner_l2_off = (uint16_t)off;
		uint16_t type = dis_rd16(f + off + 12);
		off += 14;
		for (unsigned n = 0; dis_is_vlan_tpid(type); n++) {
			if (n == SECHO_DISSECT_MAX_VLAN)
				return SECHO_DISSECT_VLAN_DEPTH;
			if (off + 4 > cend)
				return SECHO_DISSECT_VLAN_SHORT;
			type = dis_rd16(f + off + 2);
			off += 4;
		}
		if (type == SECHO_ETHERTYPE_IPV4)
			kind = DIS_IN_IP4;
		else if (type == SECHO_ETHERTYPE_IPV6)
			kind = DIS_IN_IP6;
		else
			return SECHO_DISSECT_OK; /* ARP and the like: not IP */
	}
	d->l3_off = (uint16_t)off;
	if (kind == DIS_IN_IP4)
		return dis_ip4(f, cend - off, pend - off, d);
	return dis_ip6(f, cend - off, pend - off, d);
}

/* One more tunnel crossed (type, id, flags): refused past SECHO_DISSECT_MAX_TUN. The
 * outermost IP packet is the one d describes now, if IP and the first. */
static inline enum secho_dissect_reason dis_tun_enter(struct secho_dissect *d, uint8_t type,
                                                      uint32_t id, uint8_t tflags)
{
	if (d->ntun == SECHO_DISSECT_MAX_TUN)
		return SECHO_DISSECT_TUN_DEPTH;
	if (!d->outer_ip_version && d->ip_version) {
		d->outer_l3_off = d->l3_off;
		d->outer_ip_version = d->ip_version;
		d->outer_ip_len = d->ip_len;
	}
	d->ntun++;
	d->tun_type = type;
	d->tun_id = id;
	d->tun_flags = tflags;
	d->flags |= SECHO_DISSECT_F_TUNNEL;
	return SECHO_DISSECT_OK;
}

/* How a tunnel header at the start of an IP payload turned out. */
#define DIS_TUN_NOT  0 /* not this tunnel (or not one followed): the outer packet's flow */
#define DIS_TUN_OK   1 /* *hl, *kind, *type, *id, *tflags set */
#define DIS_TUN_FAIL 2 /* *why set */

/*
 * The tunnel header at p (the IP payload: plen bytes in the packet, cap of them in
 * memory) of the IP packet d describes (dis_tun_candidate). GRE (RFC 2784, 2890) and the
 * ERSPAN it carries are named by the IP protocol: a header that does not fit is refused.
 * VXLAN, Geneve and GTP-U are only guessed by a UDP port: a payload that is not a whole
 * header of theirs (a wrong version or flag, too short for the packet) is taken for some
 * other application on that port, and the packet is the outer UDP flow; one that is, but
 * goes on beyond the captured bytes, is refused.
 */
static inline unsigned dis_tun_header(const uint8_t *p, size_t plen, size_t cap,
                                      const struct secho_dissect *d, size_t *hl, unsigned *kind,
                                      uint8_t *type, uint32_t *id, uint8_t *tflags,
                                      enum secho_dissect_reason *why)
{
	*tflags = 0;
	*id = 0;
	if (d->proto == 4 || d->proto == 41) { /* IP in IP: RFC 2003, 4213, 2473 */
		*hl = 0;
		*kind = d->proto == 4 ? DIS_IN_IP4 : DIS_IN_IP6;
		*type = SECHO_TUN_IPIP;
		return DIS_TUN_OK;
	}
	size_t lim = plen < cap ? plen : cap, h;
	if (d->proto == 47) {
		/* RFC 2784/2890: C | R | K | S | s | recur 3 | flags 5 | version 3, protocol type;
		 * then checksum + reserved (C), key (K), sequence number (S), 4 bytes each. */
		*why = SECHO_DISSECT_GRE_SHORT;
		if (lim < 4)
			return DIS_TUN_FAIL;
		uint16_t fl = dis_rd16(p), pt = dis_rd16(p + 2);
		if ((fl & 0x0007) || (fl & 0x4000)) /* version 1 (PPTP), RFC 1701 routing */
			return DIS_TUN_NOT;
		h = 4 + ((fl & 0x8000) ? 4 : 0);
		if (fl & 0x2000) {
			if (lim < h + 4)
				return DIS_TUN_FAIL;
			*id = dis_rd32(p + h);
			*tflags = SECHO_TUN_F_KEY;
			h += 4;
		}
		if (fl & 0x1000)
			h += 4;
		*type = SECHO_TUN_GRE;
		if (pt == SECHO_ETHERTYPE_IPV4 || pt == SECHO_ETHERTYPE_IPV6) {
			if (lim < h)
				return DIS_TUN_FAIL;
			*hl = h;
			*kind = pt == SECHO_ETHERTYPE_IPV4 ? DIS_IN_IP4 : DIS_IN_IP6;
			return DIS_TUN_OK;
		}
		*kind = DIS_IN_ETH;
		if (pt == 0x6558) { /* transparent Ethernet bridging */
			if (lim < h + 14)
				return DIS_TUN_FAIL;
			*hl = h;
			return DIS_TUN_OK;
		}
		if (pt != 0x88be && pt != 0x22eb)
			return DIS_TUN_NOT; /* MPLS, WCCP, keepalives...: the GRE flow */
		/* ERSPAN: type I (0x88BE without sequence number: Ethernet right after GRE),
		 * type II (0x88BE: 8 bytes, version 1), type III (0x22EB: 12 bytes, version 2,
		 * and an 8-byte platform specific sub-header when its O bit is set). */
		*why = SECHO_DISSECT_ERSPAN_SHORT;
		*type = SECHO_TUN_ERSPAN;
		*id = 0;
		*tflags = 0;
		if (lim < h)
			return DIS_TUN_FAIL;
		if (pt == 0x88be && !(fl & 0x1000)) {
			if (lim < h + 14)
				return DIS_TUN_FAIL;
			*hl = h;
			return DIS_TUN_OK;
		}
		size_t eh = pt == 0x88be ? 8 : 12;
		if (lim < h + eh)
			return DIS_TUN_FAIL;
		/* type II's version is 1 (some writers leave it 0), type III's 2 */
		if ((p[h] >> 4) != (pt == 0x88be ? 1 : 2) && (pt != 0x88be || (p[h] >> 4)))
			return DIS_TUN_NOT;
		*id = dis_rd16(p + h + 2) & 0x03ff; /* session ID */
		*tflags = SECHO_TUN_F_KEY;
		if (pt == 0x22eb) {
			/* SGT 16 | P 1 | FT 5 | HW ID 6 | D 1 | Gra 2 | O 1 */
			if ((dis_rd16(p + h + 10) >> 10) & 0x1f) /* frame type: not Ethernet */
				return DIS_TUN_NOT;
			if (p[h + 11] & 1)
				eh += 8;
		}
		h += eh;
		if (lim < h + 14)
			return DIS_TUN_FAIL;
		*hl = h;
		return DIS_TUN_OK;
	}
	/* UDP: p is the UDP header; the tunnel header follows it. */
	p += 8;
	plen -= 8;
	cap = cap > 8 ? cap - 8 : 0;
	if (d->dport == DIS_UDP_VXLAN) {
		/* RFC 7348: flags (I = 0x08) 8, reserved 24, VNI 24, reserved 8; Ethernet. */
		*why = SECHO_DISSECT_VXLAN_SHORT;
		if (plen < 8 + 14)
			return DIS_TUN_NOT;
		if (cap < 1)
			return DIS_TUN_FAIL;
		if (!(p[0] & 0x08))
			return DIS_TUN_NOT;
		if (cap < 8 + 14)
			return DIS_TUN_FAIL;
		*type = SECHO_TUN_VXLAN;
		*id = dis_rd32(p + 4) >> 8;
		*tflags = SECHO_TUN_F_KEY;
		*hl = 8 + 8;
		*kind = DIS_IN_ETH;
		return DIS_TUN_OK;
	}
	if (d->dport == DIS_UDP_GENEVE) {
		/* RFC 8926: Ver 2 | Opt Len 6 (4-byte units) | O | C | Rsvd 6, Protocol Type 16,
		 * VNI 24, reserved 8, options; then an Ethernet frame (0x6558) or IP. */
		*why = SECHO_DISSECT_GENEVE_SHORT;
		if (plen < 8)
			return DIS_TUN_NOT;
		if (cap < 8)
			return DIS_TUN_FAIL;
		if (p[0] >> 6)
			return DIS_TUN_NOT;
		uint16_t pt = dis_rd16(p + 2);
		h = 8 + (size_t)(p[0] & 0x3f) * 4;
		size_t need;
		if (pt == 0x6558) {
			*kind = DIS_IN_ETH;
			need = h + 14;
		} else if (pt == SECHO_ETHERTYPE_IPV4 || pt == SECHO_ETHERTYPE_IPV6) {
			*kind = pt == SECHO_ETHERTYPE_IPV4 ? DIS_IN_IP4 : DIS_IN_IP6;
			need = h;
		} else {
			return DIS_TUN_NOT;
		}
		if (plen < need)
			return DIS_TUN_NOT;
		if (cap < need)
			return DIS_TUN_FAIL;
		*type = SECHO_TUN_GENEVE;
		*id = dis_rd32(p + 4) >> 8;
		*tflags = SECHO_TUN_F_KEY;
		*hl = 8 + h;
		return DIS_TUN_OK;
	}
	/* GTP-U (3GPP TS 29.281 5.1): version 3 (1) | PT 1 (1) | spare | E | S | PN, message
	 * type (255: G-PDU, a user packet), length, TEID; with E, S or PN: sequence number
	 * 16, N-PDU number 8, next extension header type 8; each extension header: length
	 * in 4-byte units, contents, next type (0: none). */
	*why = SECHO_DISSECT_GTPU_SHORT;
	if (plen < 8)
		return DIS_TUN_NOT;
	if (cap < 8)
		return DIS_TUN_FAIL;
	if ((p[0] >> 4) != 0x3 || p[1] != 255) /* not GTPv1 (PT 1), not a G-PDU */
		return DIS_TUN_NOT;
	h = 8;
	if (p[0] & 0x07) {
		if (plen < 12)
			return DIS_TUN_NOT;
		if (cap < 12)
			return DIS_TUN_FAIL;
		uint8_t next = (p[0] & 0x04) ? p[11] : 0;
		h = 12;
		for (unsigned n = 0; next; n++) {
			if (n == DIS_GTPU_MAX_EXT || plen < h + 4)
				return DIS_TUN_NOT;
			if (cap < h + 1)
				return DIS_TUN_FAIL;
			size_t el = (size_t)p[h] * 4;
			if (!el || plen < h + el)
				return DIS_TUN_NOT;
			if (cap < h + el)
				return DIS_TUN_FAIL;
			next = p[h + el - 1];
			h += el;
		}
	}
	if (plen < h + 1)
		return DIS_TUN_NOT; /* an empty G-PDU */
	if (cap < h + 1)
		return DIS_TUN_FAIL;
	unsigned v = p[h] >> 4;
	if (v != 4 && v != 6)
		return DIS_TUN_NOT; /* an Ethernet or unstructured PDU session */
	*type = SECHO_TUN_GTPU;
	*id = dis_rd32(p + 4);
	*tflags = SECHO_TUN_F_KEY;
	*kind = v == 4 ? DIS_IN_IP4 : DIS_IN_IP6;
	*hl = 8 + h;
	return DIS_TUN_OK;
}

/*
 * The tunnels inside the IP packet d describes (dis_tun_candidate), as deep as they go:
 * d then describes the innermost packet. Out of line: plain traffic never comes here.
 */
static __attribute__((noinline, unused)) enum secho_dissect_reason
dis_tunnels(const uint8_t *f, size_t caplen, struct secho_dissect *d)
{
	enum secho_dissect_reason r = SECHO_DISSECT_OK, why = SECHO_DISSECT_OK;

	/* Bounded: each round enters one tunnel or returns, and dis_tun_enter refuses the
	 * (SECHO_DISSECT_MAX_TUN + 1)th. */
	while (r == SECHO_DISSECT_OK && d->ip_version && dis_tun_candidate(d)) {
		size_t pend = (size_t)d->l4_off + d->l4_len; /* the IP packet's end on the wire */
		size_t cend = pend < caplen ? pend : caplen;
		size_t cap = cend > d->l4_off ? cend - d->l4_off : 0, hl = 0;
		unsigned kind = 0;
		uint8_t type = 0, tflags = 0;
		uint32_t id = 0;
		unsigned t = dis_tun_header(f + d->l4_off, d->l4_len, cap, d, &hl, &kind, &type,
		                            &id, &tflags, &why);
		if (t == DIS_TUN_NOT)
			return SECHO_DISSECT_OK;
		if (t == DIS_TUN_FAIL)
			return why;
		size_t off = (size_t)d->l4_off + hl;
		/* An Ethernet frame inside that is not IP (ARP, junk): the packet is the outer
		 * one's flow (as a tunnel not followed), so its traffic is not lost. */
		struct secho_dissect outer;
		if (kind == DIS_IN_ETH)
			outer = *d;
		r = dis_tun_enter(d, type, id, tflags);
		if (r == SECHO_DISSECT_OK)
			r = dis_inner(f, cend, pend, off, kind, d);
		if (kind == DIS_IN_ETH && r == SECHO_DISSECT_OK && !d->ip_version) {
			*d = outer;
			return SECHO_DISSECT_OK;
		}
	}
	return r;
}

/* Ethernet over MPLS at f + off (the caller checked 14 bytes are in memory). */
static inline enum secho_dissect_reason dis_eompls(const uint8_t *f, size_t caplen, size_t wirelen,
                                                   size_t off, struct secho_dissect *d)
{
	enum secho_dissect_reason r = dis_tun_enter(d, SECHO_TUN_EOMPLS, 0, 0);
	if (r == SECHO_DISSECT_OK)
		r = dis_inner(f, caplen, wirelen, off, DIS_IN_ETH, d);
	return r;
}

/*
 * Ethernet over MPLS (RFC 4448) after the bottom of the label stack at f + off (a byte of
 * it is in memory), for the flow meter; the endpoint's dissector stops at the labels. The
 * rule, which never misreads an IP packet the dissector would describe:
 *   - first nibble 4 or 6: IP (RFC 4928) when the dissector describes it as such;
 *   - first nibble 0: the pseudowire control word (RFC 4385), then Ethernet, when that
 *     holds an IP packet the dissector describes;
 *   - else Ethernet right after the labels (no control word; a destination MAC may start
 *     with any nibble) when that holds an IP packet the dissector describes;
 *   - else, after a control word: what the Ethernet after it was (not IP, or its
 *     refusal); after IP's nibble: the IP refusal; otherwise not IP.
 * So an IP packet is only taken for Ethernet when the dissector would refuse it as IP,
 * and Ethernet only when it holds IP that is described whole.
 */
/* d as dis_encap left it after the label stack, before anything after it was read: layer
 * 2 and the labels (l3_off is where the labels start, as for a frame that is not IP). */
static inline void dis_mpls_rewind(struct secho_dissect *d)
{
	struct secho_dissect z = {0};

	z.ethertype = d->ethertype;
	z.nvlan = d->nvlan;
	for (unsigned i = 0; i < SECHO_DISSECT_MAX_VLAN; i++) {
		z.vlan_tpid[i] = d->vlan_tpid[i];
		z.vlan_tci[i] = d->vlan_tci[i];
	}
	z.flags = SECHO_DISSECT_F_MPLS;
	z.nmpls = d->nmpls;
	z.mpls_top = d->mpls_top;
	z.mpls_off = d->mpls_off;
	z.l3_off = d->mpls_off;
	*d = z;
}

static __attribute__((noinline, unused)) enum secho_dissect_reason
dis_mpls_payload(const uint8_t *f, size_t caplen, size_t wirelen, size_t off,
                 struct secho_dissect *d)
{
	unsigned v = f[off] >> 4;
	struct secho_dissect first;
	enum secho_dissect_reason r = SECHO_DISSECT_OK, e;

	if (v == 4 || v == 6) {
		d->l3_off = (uint16_t)off;
		r = v == 4 ? dis_ip4(f, caplen - off, wirelen - off, d)
		           : dis_ip6(f, caplen - off, wirelen - off, d);
		if (r == SECHO_DISSECT_OK)
			return r;
	} else if (v == 0) {
		if (caplen < off + 4 + 14)
			return SECHO_DISSECT_EOMPLS_SHORT;
		r = dis_eompls(f, caplen, wirelen, off + 4, d);
		if (r == SECHO_DISSECT_OK && d->ip_version)
			return r;
	}
	/* the first reading did not hold: from here on the rare frames only */
	first = *d;
	dis_mpls_rewind(d);
	if (caplen >= off + 14) {
		e = dis_eompls(f, caplen, wirelen, off, d);
		if (e == SECHO_DISSECT_OK && d->ip_version)
			return e;
	}
	if (v == 4 || v == 6 || v == 0) {
		*d = first;
		return r;
	}
	dis_mpls_rewind(d);
	return SECHO_DISSECT_OK;
}

/*
 * What an MPLS label stack or a PPPoE session at f + off (type: its EtherType) carries
 * (include/secho/dissect.h): the IP packet inside, or not IP (tunnels: Ethernet over MPLS
 * too, dis_mpls_payload). Out of line and after the plain EtherTypes, so that plain IP
 * pays nothing for it.
 */
static inline enum secho_dissect_reason dis_encap(const uint8_t *f, size_t caplen, size_t wirelen,
                                                  size_t off, uint16_t type,
                                                  struct secho_dissect *d, const int tunnels)
{
	unsigned v;

	if (type == SECHO_ETHERTYPE_PPPOE) {
		/* RFC 2516 section 4: ver/type, code, session ID, length; RFC 1661: protocol,
		 * 2 bytes, or 1 when compressed (section 6.5: an odd first byte). */
		if (caplen < off + 7)
			return SECHO_DISSECT_PPPOE_SHORT;
		unsigned ppp = f[off + 6];
		size_t hl = 7;
		if (!(ppp & 1)) {
			if (caplen < off + 8)
				return SECHO_DISSECT_PPPOE_SHORT;
			ppp = dis_rd16(f + off + 6);
			hl = 8;
		}
		d->flags |= SECHO_DISSECT_F_PPPOE;
		d->pppoe_sid = dis_rd16(f + off + 2);
		off += hl;
		if (ppp == 0x0021)
			v = 4;
		else if (ppp == 0x0057)
			v = 6;
		else
			return SECHO_DISSECT_OK; /* LCP, IPCP...: not IP */
	} else {
		/* RFC 3032 section 2.1: label 20 | TC 3 | S 1 | TTL 8, down to S = 1. */
		unsigned n = 0;
		uint32_t e;
		do {
			if (n == SECHO_DISSECT_MAX_MPLS)
				return SECHO_DISSECT_MPLS_DEPTH;
			if (caplen < off + 4)
				return SECHO_DISSECT_MPLS_SHORT;
			e = dis_rd32(f + off);
			if (!n) {
				d->mpls_top = e;
				d->mpls_off = (uint16_t)off;
			}
			d->nmpls = (uint8_t)++n;
			off += 4;
		} while (!(e & 0x100));
		d->flags |= SECHO_DISSECT_F_MPLS;
		if (caplen < off + 1)
			return SECHO_DISSECT_MPLS_SHORT;
		if (tunnels)
			return dis_mpls_payload(f, caplen, wirelen, off, d);
		v = f[off] >> 4; /* RFC 4928: IPv4 4, IPv6 6; 0 a control word (not IP) */
		if (v != 4 && v != 6)
			return SECHO_DISSECT_OK;
	}
	d->l3_off = (uint16_t)off;
	if (v == 4)
		return dis_ip4(f, caplen - off, wirelen - off, d);
	return dis_ip6(f, caplen - off, wirelen - off, d);
}

/*
 * The dissector (include/secho/dissect.h); wirelen >= caplen. tunnels (a constant at
 * every call): follow tunnels (the flow meter's secho_dissect) or not (the endpoint's
 * request parse, which the compiler then builds without a trace of them).
 */
static inline __attribute__((always_inline)) enum secho_dissect_reason
dis_frame(const uint8_t *f, size_t caplen, size_t wirelen, struct secho_dissect *d,
          const int tunnels)
{
	*d = (struct secho_dissect){0};
	if (caplen < 14)
		return SECHO_DISSECT_ETH_SHORT;
	size_t off = 12; /* the EtherType or TPID */
	uint16_t type = dis_rd16(f + off);
	/* Unrolled, with constant indices, so that a caller inlining this keeps *d in
	 * registers (a variable index would pin it to the stack). */
	if (dis_is_vlan_tpid(type)) {
		if (caplen < 18) /* TPID, TCI, the next EtherType */
			return SECHO_DISSECT_VLAN_SHORT;
		d->vlan_tpid[0] = type;
		d->vlan_tci[0] = dis_rd16(f + 14);
		d->nvlan = 1;
		off = 16;
		type = dis_rd16(f + off);
		if (dis_is_vlan_tpid(type)) {
			if (caplen < 22)
				return SECHO_DISSECT_VLAN_SHORT;
			d->vlan_tpid[1] = type;
			d->vlan_tci[1] = dis_rd16(f + 18);
			d->nvlan = 2;
			off = 20;
			type = dis_rd16(f + off);
			if (dis_is_vlan_tpid(type))
				return SECHO_DISSECT_VLAN_DEPTH;
		}
	}
	d->ethertype = type;
	off += 2;
	d->l3_off = (uint16_t)off;
	enum secho_dissect_reason r;
	if (type == SECHO_ETHERTYPE_IPV4)
		r = dis_ip4(f, caplen - off, wirelen - off, d);
	else if (type == SECHO_ETHERTYPE_IPV6)
		r = dis_ip6(f, caplen - off, wirelen - off, d);
	else if (type == SECHO_ETHERTYPE_MPLS || type == SECHO_ETHERTYPE_MPLS_MC ||
	         type == SECHO_ETHERTYPE_PPPOE)
		r = dis_encap(f, caplen, wirelen, off, type, d, tunnels);
	else
		return SECHO_DISSECT_OK;
	if (tunnels && r == SECHO_DISSECT_OK && d->ip_version && dis_tun_candidate(d))
		return dis_tunnels(f, caplen, d);
	return r;
}

/* The endpoint's dissector: no tunnels followed (include/secho/dissect.h). */
static inline __attribute__((always_inline)) enum secho_dissect_reason
secho_dissect_inline(const uint8_t *f, size_t caplen, size_t wirelen, struct secho_dissect *d)
{
	return dis_frame(f, caplen, wirelen, d, 0);
}

#endif
