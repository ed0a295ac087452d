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

/*
 * What an MPLS label stack or a PPPoE session at f + off (type: its EtherType) carries
 * (include/secho/dissect.h): the IP packet inside, or not IP. Out of line and after the
 * plain EtherTypes, so that plain IP pays nothing for it.
 */
static inline enum secho_dissect_reason dis_encap(const uint8_t *f, size_t caplen, size_t wirelen,
                                                  size_t off, uint16_t type,
                                                  struct secho_dissect *d)
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
		v = f[off] >> 4; /* RFC 4928: IPv4 4, IPv6 6; 0 a control word (not IP) */
		if (v != 4 && v != 6)
			return SECHO_DISSECT_OK;
	}
	d->l3_off = (uint16_t)off;
	if (v == 4)
		return dis_ip4(f, caplen - off, wirelen - off, d);
	return dis_ip6(f, caplen - off, wirelen - off, d);
}

/* The dissector (include/secho/dissect.h); wirelen >= caplen. */
static inline __attribute__((always_inline)) enum secho_dissect_reason
secho_dissect_inline(const uint8_t *f, size_t caplen, size_t wirelen, struct secho_dissect *d)
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
	if (type == SECHO_ETHERTYPE_IPV4)
		return dis_ip4(f, caplen - off, wirelen - off, d);
	if (type == SECHO_ETHERTYPE_IPV6)
		return dis_ip6(f, caplen - off, wirelen - off, d);
	if (type == SECHO_ETHERTYPE_MPLS || type == SECHO_ETHERTYPE_MPLS_MC ||
	    type == SECHO_ETHERTYPE_PPPOE)
		return dis_encap(f, caplen, wirelen, off, type, d);
	return SECHO_DISSECT_OK;
}

#endif
