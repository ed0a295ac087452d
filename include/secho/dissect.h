/*
 * secho/dissect.h - what a received frame is, from the Ethernet header to the transport
 * header: one L2-L4 parser for every part of secho that looks at packets (the endpoint's
 * request policy in src/wire/parse.c, the flow meter in src/flow/).
 *
 * It describes; it does not judge. Whether a frame is for us, whether a checksum holds,
 * whether an IPv4 header may carry options: those are policies of the callers. The
 * dissector only refuses what cannot be described, each refusal under a named reason
 * (SECHO_DISSECT_REASONS below), and never reads outside frame[0..caplen).
 *
 *   Ethernet II | up to two VLAN tags (TPID 0x8100, 0x88a8 or 0x9100, any order)
 *     | [MPLS label stack, 0x8847 / 0x8848, up to 8 labels, IPv4 or IPv6 after the
 *     |  bottom of stack | PPPoE session, 0x8864, PPP protocol 0x0021 / 0x0057]
 *     | IPv4 (options skipped)              | TCP, UDP, ICMP: ports / type+code / flags
 *     | IPv6 (+ hop-by-hop, routing,        | ICMPv6
 *     |   destination options, fragment,    | any other protocol: addresses and protocol
 *     |   AH, Mobility)                     |
 *     | anything else: the EtherType, nothing more (not an error)
 *
 * MPLS (RFC 3032; multicast RFC 5332): the label stack entries are walked to the one with
 * the bottom-of-stack bit, SECHO_DISSECT_MAX_MPLS of them at most; what follows is IPv4 or
 * IPv6 by its first nibble (RFC 4928), anything else (Ethernet over MPLS, a pseudowire
 * control word) is described as not IP. PPPoE (RFC 2516): the session header and PPP's
 * protocol field (RFC 1661): IPv4 (0x0021) and IPv6 (0x0057) are followed, any other PPP
 * protocol (LCP, IPCP...) is not IP. In both, ethertype stays the outer one (0x8847,
 * 0x8848, 0x8864), l3_off is the inner IP header, and the flags say which was crossed;
 * mpls_top is the top label stack entry, nmpls the entries.
 *
 * IPv6 extension headers (RFC 8200 section 4): hop-by-hop (0, only first), routing (43),
 * destination options (60), fragment (44, at most one), the Authentication Header (51, RFC
 * 4302: length in 4-octet units) and the Mobility header (135, RFC 6275: its Payload Proto
 * is the next header, normally 59) are followed, SECHO_DISSECT_MAX_EXT of them at most: the
 * flow's protocol is what follows them. ESP (50) and no next header (59) end the chain and
 * are the protocol; so does any other value.
 *
 * Fragments (RFC 791, RFC 8200 section 4.5): a first fragment (offset 0, more fragments)
 * carries the transport header and is dissected like a whole packet; a later fragment
 * (offset > 0) is not: its transport fields stay zero and frag_id, together with the
 * addresses and protocol, is what ties it to its first fragment. An IPv4 fragment with
 * offset 0 and MF clear is no fragment; an IPv6 atomic fragment (RFC 6946: offset 0, M
 * clear) is dissected as a whole packet and flagged.
 *
 * Lengths: caplen is what is in memory; wirelen is the frame's length on the wire (they
 * differ for captures taken with a snap length). The IP length must fit wirelen; headers
 * must fit caplen. Trailing bytes after the IP packet (Ethernet padding) are ignored.
 *
 * Tunnels (secho_dissect and secho_dissect_snap only; the endpoint's inline dissector in
 * src/wire/wire_inner.h follows none): GRE (IP protocol 47: IPv4, IPv6, Ethernet; ERSPAN
 * I/II/III), VXLAN (UDP 4789), Geneve (UDP 6081), GTP-U G-PDUs (UDP 2152), IP in IP (4,
 * 41), Ethernet over MPLS; SECHO_DISSECT_MAX_TUN deep at most (tun_depth). The IP fields
 * then describe the innermost packet, outer_* the outermost IP packet, tun_* the innermost
 * tunnel. A payload on a tunnel port that is not that tunnel's whole header is described as
 * the outer UDP packet; an outer fragment is not followed. docs/FLOW.md, "Tunnels".
 *
 * Cost: constant work per header; at most SECHO_DISSECT_MAX_EXT IPv6 extension headers.
 */
#ifndef SECHO_DISSECT_H
#define SECHO_DISSECT_H

#include "secho/proto.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* EtherTypes: secho/proto.h. */

#define SECHO_IPPROTO_HOPOPTS  0
#define SECHO_IPPROTO_ICMP     1
#define SECHO_IPPROTO_TCP      6
#define SECHO_IPPROTO_ROUTING  43
#define SECHO_IPPROTO_FRAGMENT 44
#define SECHO_IPPROTO_ESP      50
#define SECHO_IPPROTO_AH       51
#define SECHO_IPPROTO_ICMPV6   58
#define SECHO_IPPROTO_NONE     59
#define SECHO_IPPROTO_DSTOPTS  60
#define SECHO_IPPROTO_MOBILITY 135

#define SECHO_DISSECT_MAX_VLAN 2 /* a third tag is refused (vlan_depth) */
#define SECHO_DISSECT_MAX_EXT  8 /* IPv6 extension headers followed at most */
#define SECHO_DISSECT_MAX_MPLS 8 /* MPLS label stack entries followed at most (mpls_depth) */

/*
 * Why a frame could not be described, in the order the dissector checks; "ok" is success.
 * Every reason is a truncated or malformed header: never a frame of a kind that is merely
 * not IP (that is "ok" with ip_version 0).
 */
#define SECHO_DISSECT_REASONS(X)                                                                   \
	X(OK, "ok", "described")                                                                   \
	X(ETH_SHORT, "eth_short", "frame shorter than the Ethernet header")                        \
	X(VLAN_SHORT, "vlan_short", "frame ends inside a VLAN tag")                                \
	X(VLAN_DEPTH, "vlan_depth", "more than two VLAN tags")                                     \
	X(MPLS_SHORT, "mpls_short", "frame ends inside the MPLS label stack or right after it")    \
	X(MPLS_DEPTH, "mpls_depth", "no bottom of stack in the first 8 MPLS labels")               \
	X(PPPOE_SHORT, "pppoe_short", "frame ends inside the PPPoE session or PPP header")         \
	X(IP4_SHORT, "ip4_short", "fewer bytes than an IPv4 header after the Ethernet header")     \
	X(IP4_VERSION, "ip4_version", "EtherType IPv4 but the version field is not 4")             \
	X(IP4_IHL, "ip4_ihl", "IPv4 header length below 5 words")                                  \
	X(IP4_OPT_SHORT, "ip4_opt_short", "frame ends inside the IPv4 options")                    \
	X(IP4_TOTLEN, "ip4_totlen", "IPv4 total length smaller than the IPv4 header")              \
	X(IP6_SHORT, "ip6_short", "fewer bytes than an IPv6 header after the Ethernet header")     \
	X(IP6_VERSION, "ip6_version", "EtherType IPv6 but the version field is not 6")             \
	X(IP_TRUNC, "ip_trunc", "frame shorter than its IP length says")                           \
	X(IP6_EXT_SHORT, "ip6_ext_short", "packet ends inside an IPv6 extension header")           \
	X(IP6_HBH_ORDER, "ip6_hbh_order", "IPv6 hop-by-hop options header not first")              \
	X(IP6_EXT_DEPTH, "ip6_ext_depth", "more IPv6 extension headers than followed (8)")         \
	X(IP6_FRAG_TWICE, "ip6_frag_twice", "second IPv6 fragment header in one packet")           \
	X(FRAG_OVERFLOW, "frag_overflow", "fragment reaches beyond 65535 bytes of packet")         \
	X(TCP_SHORT, "tcp_short", "IP payload ends inside the TCP header")                         \
	X(TCP_DOFF, "tcp_doff", "TCP data offset below 5 words or past the IP payload")            \
	X(UDP_SHORT, "udp_short", "IP payload ends inside the UDP header")                         \
	X(ICMP_SHORT, "icmp_short", "IP payload ends inside the 8-byte ICMP/ICMPv6 header")        \
	X(GRE_SHORT, "gre_short", "packet ends inside the GRE header or the Ethernet after it")    \
	X(ERSPAN_SHORT, "erspan_short",                                                            \
	  "packet ends inside the ERSPAN header or the Ethernet after it")                         \
	X(VXLAN_SHORT, "vxlan_short",                                                              \
	  "frame ends inside the VXLAN header or the Ethernet after it")                           \
	X(GENEVE_SHORT, "geneve_short", "frame ends inside the Geneve header or what it carries")  \
	X(GTPU_SHORT, "gtpu_short", "frame ends inside the GTP-U header or its extension headers") \
	X(EOMPLS_SHORT, "eompls_short",                                                            \
	  "frame ends inside the pseudowire control word or the Ethernet after it")                \
	X(TUN_DEPTH, "tun_depth", "more encapsulations than followed (4)")

enum secho_dissect_reason {
#define SECHO_DISSECT_X(name, id, text) SECHO_DISSECT_##name,
	SECHO_DISSECT_REASONS(SECHO_DISSECT_X)
#undef SECHO_DISSECT_X
	        SECHO_DISSECT_REASON_COUNT
};

/* What kind of fragment (frag). */
#define SECHO_FRAG_NONE  0 /* a whole packet (IPv6 atomic fragments too) */
#define SECHO_FRAG_FIRST 1 /* offset 0, more fragments follow: has the transport header */
#define SECHO_FRAG_LATER 2 /* offset > 0: no transport header */

/* flags */
#define SECHO_DISSECT_F_IP4_OPTIONS 0x01  /* IPv4 header longer than 20 bytes */
#define SECHO_DISSECT_F_IP6_EXT     0x02  /* IPv6 extension headers were followed */
#define SECHO_DISSECT_F_FRAG_MF     0x04  /* more-fragments bit set */
#define SECHO_DISSECT_F_ATOMIC      0x08  /* IPv6 fragment header with offset 0 and M clear */
#define SECHO_DISSECT_F_SNAPPED     0x10  /* the IP packet goes on beyond caplen */
#define SECHO_DISSECT_F_L4          0x20  /* the transport fields below were filled */
#define SECHO_DISSECT_F_MPLS        0x40  /* inside an MPLS label stack (mpls_top, nmpls) */
#define SECHO_DISSECT_F_PPPOE       0x80  /* inside a PPPoE session (pppoe_sid) */
#define SECHO_DISSECT_F_TUNNEL      0x100 /* inside a tunnel (ntun, tun_type, tun_id, outer_*) */

/* Tunnels the flow meter's dissector follows (tun_type; docs/FLOW.md, "The dissector"). */
#define SECHO_TUN_NONE   0
#define SECHO_TUN_GRE    1    /* GRE, RFC 2784/2890 (IPv4, IPv6 or Ethernet inside) */
#define SECHO_TUN_ERSPAN 2    /* ERSPAN type II or III over GRE (mirrored Ethernet inside) */
#define SECHO_TUN_VXLAN  3    /* VXLAN, RFC 7348, UDP 4789 */
#define SECHO_TUN_GENEVE 4    /* Geneve, RFC 8926, UDP 6081 */
#define SECHO_TUN_GTPU   5    /* GTP-U, 3GPP TS 29.281, UDP 2152 */
#define SECHO_TUN_IPIP   6    /* IP in IP: 4in4, 6in4, 4in6, 6in6 (RFC 2003, 4213, 2473) */
#define SECHO_TUN_EOMPLS 7    /* Ethernet over MPLS (RFC 4448), with or without control word */
#define SECHO_TUN_F_KEY  0x01 /* tun_id was present (a GRE key of 0 is a key) */

#define SECHO_DISSECT_MAX_TUN 4 /* encapsulations followed at most (tun_depth) */

/*
 * The description. Offsets are from the start of the frame; multi-byte values are in host
 * order. A field is valid once the dissector got past the header it comes from: on a
 * non-ok reason, everything before the refused header is filled in (callers that apply
 * their own checks in header order rely on that), the rest is zero.
 */
struct secho_dissect {
	uint16_t ethertype;                         /* after the VLAN tags */
	uint8_t nvlan;                              /* VLAN tags, outermost first */
	uint8_t ip_version;                         /* 4 or 6; 0 = not IP (see ethertype) */
	uint16_t vlan_tpid[SECHO_DISSECT_MAX_VLAN]; /* 0x8100, 0x88a8 or 0x9100 */
	uint16_t vlan_tci[SECHO_DISSECT_MAX_VLAN];  /* PCP 3 | DEI 1 | VID 12 */
	uint16_t l3_off;                            /* the IP header */
	uint16_t addr_off;  /* source address (4 or 16 bytes); the destination follows it */
	uint8_t proto;      /* IPv4 protocol; IPv6: the header that ended the chain */
	uint8_t frag;       /* SECHO_FRAG_* */
	uint16_t flags;     /* SECHO_DISSECT_F_* */
	uint32_t ip_len;    /* IPv4 total length; IPv6 40 + payload length */
	uint16_t l4_off;    /* the transport header (a later fragment: its data) */
	uint16_t frag_off;  /* fragment offset in bytes */
	uint32_t l4_len;    /* bytes from l4_off to the end of the IP packet */
	uint32_t frag_id;   /* IPv4 identification (16 bits) / IPv6 fragment identification */
	uint16_t sport;     /* TCP, UDP */
	uint16_t dport;     /* TCP, UDP */
	uint8_t icmp_type;  /* ICMP (IPv4), ICMPv6 */
	uint8_t icmp_code;  /* ICMP (IPv4), ICMPv6 */
	uint8_t tcp_flags;  /* TCP: CWR ECE URG ACK PSH RST SYN FIN (the low 8 bits) */
	uint8_t tcp_doff;   /* TCP header length in bytes */
	uint8_t nmpls;      /* MPLS label stack entries (SECHO_DISSECT_F_MPLS) */
	uint16_t pppoe_sid; /* PPPoE session ID (SECHO_DISSECT_F_PPPOE) */
	uint32_t mpls_top;  /* the top label stack entry: label 20 | TC 3 | S 1 | TTL 8 */
	uint16_t mpls_off;  /* the top label stack entry's offset (SECHO_DISSECT_F_MPLS) */
	/* Tunnels (SECHO_DISSECT_F_TUNNEL): the IP fields above describe the innermost
	 * packet; these say what it came in. */
	uint8_t ntun;             /* encapsulations crossed, 1..SECHO_DISSECT_MAX_TUN */
	uint8_t tun_type;         /* the innermost one: SECHO_TUN_* */
	uint32_t tun_id;          /* its tenant: VNI, GRE key, GTP-U TEID, ERSPAN session; 0 */
	uint16_t outer_l3_off;    /* the outermost IP header */
	uint8_t outer_ip_version; /* 4 or 6 */
	uint8_t tun_flags;        /* SECHO_TUN_F_* */
	uint32_t outer_ip_len;    /* the outermost IP packet's length (FlowTest's bytes_outer) */
	uint16_t inner_l2_off;    /* the innermost tunnel's Ethernet header; 0 = none (IP inside) */
};

/*
 * Describe frame[0..len) (a whole frame: caplen = wirelen = len). Returns SECHO_DISSECT_OK
 * or the first reason the frame could not be described; *d is filled as far as the
 * dissector got (see struct secho_dissect). Can't fail otherwise.
 */
enum secho_dissect_reason secho_dissect(const uint8_t *frame, size_t len, struct secho_dissect *d);

/* The same for a captured frame of which caplen bytes are in memory out of wirelen on the
 * wire (wirelen < caplen is taken as caplen). */
enum secho_dissect_reason secho_dissect_snap(const uint8_t *frame, size_t caplen, size_t wirelen,
                                             struct secho_dissect *d);

/* Short identifier ("tcp_doff", ...) for counters; "unknown" when out of range. */
const char *secho_dissect_reason_name(enum secho_dissect_reason r);
/* One line of text for logs. */
const char *secho_dissect_reason_text(enum secho_dissect_reason r);

/* Short name of a tunnel type ("gre", "vxlan", ...; SECHO_TUN_*): "none" for 0, "unknown"
 * when out of range. */
const char *secho_tun_name(unsigned tun_type);

/* The VID of a tag control information field. */
static inline uint16_t secho_vlan_vid(uint16_t tci)
{
	return tci & 0x0fff;
}

#ifdef __cplusplus
}
#endif
#endif
