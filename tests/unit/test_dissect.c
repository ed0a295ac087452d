/*
 * tests/unit/test_dissect.c - the L2-L4 dissector (include/secho/dissect.h): every header
 * case it describes, every reason it refuses a frame for, truncation at every offset (from
 * exact-size heap copies, so ASan sees any read past the frame), snap lengths, and random
 * mutations against the contract's invariants.
 *
 *   test_dissect                     run the tests
 *   test_dissect --write-seeds DIR   write the dissector fuzzer's seed frames
 *                                    (tests/fuzz/corpus-dissect), exit
 */
#include "harness.h"

#include <secho/dissect.h>

#include "wire/wire_inner.h" /* the endpoint's dissector: secho_dissect_inline */

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a frame builder: headers appended in order, lengths fixed up at the end ---- */

struct fb {
	uint8_t b[4096];
	size_t n;
	size_t l3;  /* offset of the IP header */
	int ipv;    /* 4 or 6 */
	size_t pad; /* bytes of Ethernet padding after the packet (not in the IP length) */
	int no_fix; /* leave the IP length as written */
	/* tunnels: the outer IP headers and the tunnels' UDP headers, fixed up too */
	size_t outer_l3[8];
	int outer_v[8];
	unsigned nouter;
	size_t udp_at[8];
	unsigned nudp;
};

static void put(struct fb *f, const void *p, size_t n)
{
	memcpy(f->b + f->n, p, n);
	f->n += n;
}

static void put8(struct fb *f, unsigned v)
{
	f->b[f->n++] = (uint8_t)v;
}

static void put16(struct fb *f, unsigned v)
{
	put8(f, v >> 8);
	put8(f, v);
}

static void put32(struct fb *f, uint32_t v)
{
	put16(f, v >> 16);
	put16(f, v & 0xffff);
}

static void wr16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Ethernet with tags {tpid, tci} x ntags, then type. */
static void eth(struct fb *f, const uint16_t (*tags)[2], unsigned ntags, unsigned type)
{
	memset(f, 0, sizeof(*f));
	static const uint8_t macs[12] = {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1};
	put(f, macs, 12);
	for (unsigned i = 0; i < ntags; i++) {
		put16(f, tags[i][0]);
		put16(f, tags[i][1]);
	}
	put16(f, type);
}

/* A new IP header at f->n: the one before it (if any) becomes an outer one. */
static void new_l3(struct fb *f)
{
	if (f->ipv && f->nouter < 8) {
		f->outer_l3[f->nouter] = f->l3;
		f->outer_v[f->nouter++] = f->ipv;
	}
}

/* IPv4 198.18.0.1 -> 198.18.0.2, optlen bytes of options (NOP), fragment field fr, id. */
static void ip4(struct fb *f, unsigned proto, unsigned optlen, unsigned fr, unsigned id)
{
	new_l3(f);
	f->l3 = f->n;
	f->ipv = 4;
	put8(f, 0x40 | (5 + optlen / 4));
	put8(f, 0);
	put16(f, 0); /* total length: fixed up */
	put16(f, id);
	put16(f, fr);
	put8(f, 64);
	put8(f, proto);
	put16(f, 0);
	put32(f, 0xc6120001);
	put32(f, 0xc6120002);
	for (unsigned i = 0; i < optlen; i++)
		put8(f, 1);
}

/* IPv6 2001:db8::1 -> 2001:db8::2, next header nh. */
static void ip6(struct fb *f, unsigned nh)
{
	new_l3(f);
	f->l3 = f->n;
	f->ipv = 6;
	put32(f, 0x60000000);
	put16(f, 0); /* payload length: fixed up */
	put8(f, nh);
	put8(f, 64);
	uint8_t a[16];
	inet_pton(AF_INET6, "2001:db8::1", a);
	put(f, a, 16);
	inet_pton(AF_INET6, "2001:db8::2", a);
	put(f, a, 16);
}

/* A generic extension header (hop-by-hop, routing, destination options): (units+1)*8. */
static void ext(struct fb *f, unsigned nh, unsigned units)
{
	put8(f, nh);
	put8(f, units);
	for (unsigned i = 2; i < (units + 1) * 8; i++)
		put8(f, i == 2 ? 1 : 0); /* PadN-ish filler */
}

/* An Authentication Header (RFC 4302): next header, Payload Len (4-octet units minus 2),
 * reserved, SPI, sequence number, then ICV filler: (plen + 2) * 4 bytes in all. */
static void ah(struct fb *f, unsigned nh, unsigned plen)
{
	put8(f, nh);
	put8(f, plen);
	put16(f, 0);
	put32(f, 0x1000 + plen); /* SPI */
	for (unsigned i = 8; i < (plen + 2) * 4; i++)
		put8(f, 0xa0 + i);
}

/* A Mobility header (RFC 6275 6.1.1): Payload Proto, Header Len (8-octet units beyond 8),
 * MH Type, reserved, checksum, message data: (units + 1) * 8 bytes. */
static void mh(struct fb *f, unsigned nh, unsigned units)
{
	put8(f, nh);
	put8(f, units);
	put8(f, 5); /* Binding Update */
	put8(f, 0);
	put16(f, 0);
	for (unsigned i = 6; i < (units + 1) * 8; i++)
		put8(f, i);
}

/* An MPLS label stack entry (RFC 3032): label 20 | TC 3 | S 1 | TTL 8. */
static void mpls(struct fb *f, uint32_t label, int bottom)
{
	put32(f, label << 12 | 5u << 9 | (bottom ? 1u : 0u) << 8 | 64);
}

/* A PPPoE session header (RFC 2516: ver/type 0x11, code 0, session, length) and PPP's
 * protocol field (RFC 1661). */
static void pppoe(struct fb *f, unsigned sid, unsigned proto)
{
	put8(f, 0x11);
	put8(f, 0);
	put16(f, sid);
	put16(f, 0); /* length: not read */
	put16(f, proto);
}

static void frag6(struct fb *f, unsigned nh, unsigned off_bytes, int m, uint32_t id)
{
	put8(f, nh);
	put8(f, 0);
	put16(f, (off_bytes & 0xfff8) | (m ? 1 : 0));
	put32(f, id);
}

static void tcp(struct fb *f, unsigned sport, unsigned dport, unsigned flags, unsigned optlen)
{
	put16(f, sport);
	put16(f, dport);
	put32(f, 1000);
	put32(f, 0);
	put8(f, ((20 + optlen) / 4) << 4);
	put8(f, flags);
	put16(f, 65535);
	put16(f, 0);
	put16(f, 0);
	for (unsigned i = 0; i < optlen; i++)
		put8(f, 1);
}

static void udp(struct fb *f, unsigned sport, unsigned dport, unsigned len)
{
	put16(f, sport);
	put16(f, dport);
	put16(f, len);
	put16(f, 0);
}

static void icmp(struct fb *f, unsigned type, unsigned code)
{
	put8(f, type);
	put8(f, code);
	put16(f, 0);
	put32(f, 0x00010002);
}

static void data(struct fb *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		put8(f, (unsigned)(i * 13));
}

/* ---- tunnels ---- */

/* Set the source and destination of the IP header just written (host order IPv4, or the
 * last byte of 2001:db8::x). */
static void addrs(struct fb *f, uint32_t src, uint32_t dst)
{
	uint8_t *ip = f->b + f->l3;
	if (f->ipv == 4) {
		uint32_t s = htonl(src), d = htonl(dst);
		memcpy(ip + 12, &s, 4);
		memcpy(ip + 16, &d, 4);
	} else {
		ip[23] = (uint8_t)src;
		ip[39] = (uint8_t)dst;
	}
}

/* A tunnel's UDP header (length fixed up by done()). */
static void tudp(struct fb *f, unsigned sport, unsigned dport)
{
	if (f->nudp < 8)
		f->udp_at[f->nudp++] = f->n;
	udp(f, sport, dport, 0);
}

/* An inner Ethernet header: tags, then type; MACs 0x02... (or first byte mac0). */
static void ieth(struct fb *f, unsigned mac0, const uint16_t (*tags)[2], unsigned ntags,
                 unsigned type)
{
	put8(f, mac0);
	for (int i = 1; i < 12; i++)
		put8(f, (unsigned)i);
	for (unsigned i = 0; i < ntags; i++) {
		put16(f, tags[i][0]);
		put16(f, tags[i][1]);
	}
	put16(f, type);
}

#define GRE_C 0x8000
#define GRE_K 0x2000
#define GRE_S 0x1000

/* GRE (RFC 2784/2890) with the optional fields its flags name. */
static void gre(struct fb *f, unsigned flags, unsigned ptype, uint32_t key)
{
	put16(f, flags);
	put16(f, ptype);
	if (flags & GRE_C)
		put32(f, 0xabcd0000);
	if (flags & GRE_K)
		put32(f, key);
	if (flags & GRE_S)
		put32(f, 77);
}

/* ERSPAN type II (8 bytes, version 1) / III (12 bytes, version 2, sub-header with o). */
static void erspan2(struct fb *f, unsigned session)
{
	put16(f, 0x1000 | 5); /* version 1, VLAN 5 */
	put16(f, session & 0x3ff);
	put32(f, 0x42);
}

static void erspan3(struct fb *f, unsigned session, int o, unsigned ft)
{
	put16(f, 0x2000 | 5);
	put16(f, session & 0x3ff);
	put32(f, 0x12345678);                      /* timestamp */
	put16(f, 0);                               /* SGT */
	put16(f, (ft & 0x1f) << 10 | (o ? 1 : 0)); /* P FT HW ID D Gra O */
	if (o) {
		put32(f, 0x1000000);
		put32(f, 0x2000000);
	}
}

static void vxlan(struct fb *f, unsigned flags, uint32_t vni)
{
	put32(f, flags << 24);
	put32(f, vni << 8);
}

static void geneve(struct fb *f, unsigned optlen, unsigned ptype, uint32_t vni)
{
	put8(f, optlen / 4);
	put8(f, 0);
	put16(f, ptype);
	put32(f, vni << 8);
	for (unsigned i = 0; i < optlen; i++)
		put8(f, i == 0 ? 0x01 : 0x77);
}

/* GTP-U: flags byte (0x30: version 1, PT 1; | E S PN), message type, TEID; with E, S or
 * PN the 4 more bytes, then next (each extension header one 4-byte unit, types exts). */
static void gtpu(struct fb *f, unsigned flags, unsigned mt, uint32_t teid, const uint8_t *exts,
                 unsigned nexts)
{
	put8(f, flags);
	put8(f, mt);
	put16(f, 0); /* length: not read */
	put32(f, teid);
	if (flags & 7) {
		put16(f, 1);
		put8(f, 0);
		put8(f, nexts ? exts[0] : 0);
		for (unsigned i = 0; i < nexts; i++) {
			put8(f, 1);
			put16(f, 0x0909);
			put8(f, i + 1 < nexts ? exts[i + 1] : 0);
		}
	}
}

/* Fix the IP length to the bytes written after l3 (minus padding, appended now); so the
 * outer IP headers' and the tunnels' UDP headers. */
static void done(struct fb *f)
{
	if (!f->no_fix && f->ipv == 4)
		wr16(f->b + f->l3 + 2, (unsigned)(f->n - f->l3));
	if (!f->no_fix && f->ipv == 6)
		wr16(f->b + f->l3 + 4, (unsigned)(f->n - f->l3 - 40));
	for (unsigned i = 0; i < f->nouter && !f->no_fix; i++) {
		if (f->outer_v[i] == 4)
			wr16(f->b + f->outer_l3[i] + 2, (unsigned)(f->n - f->outer_l3[i]));
		else
			wr16(f->b + f->outer_l3[i] + 4, (unsigned)(f->n - f->outer_l3[i] - 40));
	}
	for (unsigned i = 0; i < f->nudp; i++)
		wr16(f->b + f->udp_at[i] + 4, (unsigned)(f->n - f->udp_at[i]));
	for (size_t i = 0; i < f->pad; i++)
		put8(f, 0);
}

/* Dissect from an exact-size heap copy (ASan catches any read past it). */
static enum secho_dissect_reason dis(const uint8_t *p, size_t caplen, size_t wirelen,
                                     struct secho_dissect *d)
{
	uint8_t *h = malloc(caplen ? caplen : 1);
	if (!h)
		abort();
	memcpy(h, p, caplen);
	enum secho_dissect_reason r = wirelen == caplen ? secho_dissect(h, caplen, d)
	                                                : secho_dissect_snap(h, caplen, wirelen, d);
	free(h);
	return r;
}

#define R(x) SECHO_DISSECT_##x

/* ---- good frames: what each header case is described as ---- */

static void test_ip4(void)
{
	struct fb f;
	struct secho_dissect d;

	t_begin("dissect: IPv4 UDP, TCP (with options), ICMP, other protocols");
	eth(&f, NULL, 0, 0x0800);
	ip4(&f, 17, 0, 0x4000, 0x1234);
	udp(&f, 5353, 53, 8 + 20);
	data(&f, 20);
	done(&f);
	T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK), "udp ok");
	T_CHECK(d.ethertype == 0x0800 && d.nvlan == 0 && d.ip_version == 4 && d.l3_off == 14,
	        "l2/l3");
	T_CHECK(d.proto == 17 && d.sport == 5353 && d.dport == 53 && d.l4_off == 34 &&
	                d.l4_len == 28 && d.ip_len == 48,
	        "udp fields %u %u %u %u", d.sport, d.dport, d.l4_off, d.l4_len);
	T_CHECK(d.addr_off == 26 &&
	                !memcmp(f.b + d.addr_off, "\xc6\x12\x00\x01\xc6\x12\x00\x02", 8),
	        "addresses");
	T_CHECK(d.frag == SECHO_FRAG_NONE && d.frag_id == 0x1234 && d.frag_off == 0,
	        "DF alone is no fragment");
	T_CHECK(d.flags == SECHO_DISSECT_F_L4, "flags %#x", d.flags);

	eth(&f, NULL, 0, 0x0800);
	ip4(&f, 6, 0, 0, 7);
	tcp(&f, 40000, 443, 0x12, 12);
	data(&f, 5);
	done(&f);
	T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK), "tcp ok");
	T_CHECK(d.proto == 6 && d.sport == 40000 && d.dport == 443 && d.tcp_flags == 0x12 &&
	                d.tcp_doff == 32 && d.l4_len == 37,
	        "tcp fields");

	eth(&f, NULL, 0, 0x0800);
	ip4(&f, 1, 0, 0, 7);
	icmp(&f, 8, 0);
	data(&f, 56);
	done(&f);
	T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.proto == 1 && d.icmp_type == 8 &&
	                d.icmp_code == 0 && d.sport == 0 && d.dport == 0 &&
	                (d.flags & SECHO_DISSECT_F_L4),
	        "icmp echo request");
	eth(&f, NULL, 0, 0x0800);
	ip4(&f, 1, 0, 0, 7);
	icmp(&f, 3, 13);
	done(&f);
	T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.icmp_type == 3 && d.icmp_code == 13,
	        "icmp unreachable code 13");

	static const unsigned others[] = {46, 50, 51, 132, 89, 255, 58};
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		eth(&f, NULL, 0, 0x0800);
		ip4(&f, others[i], 0, 0, 7);
		data(&f, 3); /* too short for any transport header: not looked into */
		done(&f);
		T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.proto == others[i] &&
		                !(d.flags & SECHO_DISSECT_F_L4) && d.sport == 0 && d.l4_len == 3,
		        "protocol %u by addresses and protocol", others[i]);
	}
	t_end();

	t_begin("dissect: IPv4 options of every length are skipped");
	for (unsigned opt = 4; opt <= 40; opt += 4) {
		eth(&f, NULL, 0, 0x0800);
		ip4(&f, 17, opt, 0, 1);
		udp(&f, 1, 2, 8);
		done(&f);
		T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.l4_off == 34 + opt && d.sport == 1 &&
		                d.dport == 2 && (d.flags & SECHO_DISSECT_F_IP4_OPTIONS),
		        "options %u", opt);
	}
	t_end();

	t_begin("dissect: Ethernet padding after the packet is ignored");
	eth(&f, NULL, 0, 0x0800);
	ip4(&f, 17, 0, 0, 1);
	udp(&f, 1, 2, 8);
	f.pad = 18;
	done(&f);
	T_CHECK(f.n == 60 && dis(f.b, f.n, f.n, &d) == R(OK) && d.ip_len == 28 && d.l4_len == 8,
	        "padded");
	t_end();
}

static void test_vlan(void)
{
	struct fb f;
	struct secho_dissect d;
	static const uint16_t tpids[3] = {0x8100, 0x88a8, 0x9100};

	t_begin("dissect: 802.1Q, QinQ (0x8100 / 0x88a8 / 0x9100 in any order), VIDs and PCP");
	for (unsigned a = 0; a < 3; a++) {
		uint16_t one[1][2] = {{tpids[a], (uint16_t)(0xe000 | (100 + a))}};
		eth(&f, one, 1, 0x0800);
		ip4(&f, 17, 0, 0, 1);
		udp(&f, 7, 9, 8);
		done(&f);
		T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.nvlan == 1 &&
		                d.vlan_tpid[0] == tpids[a] &&
		                secho_vlan_vid(d.vlan_tci[0]) == 100 + a &&
		                d.vlan_tci[0] >> 13 == 7 && d.l3_off == 18 && d.sport == 7,
		        "one tag %#x", tpids[a]);
		for (unsigned b = 0; b < 3; b++) {
			uint16_t two[2][2] = {{tpids[a], 10}, {tpids[b], 4095}};
			eth(&f, two, 2, 0x86dd);
			ip6(&f, 17);
			udp(&f, 7, 9, 8);
			done(&f);
			T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.nvlan == 2 &&
			                d.vlan_tpid[0] == tpids[a] && d.vlan_tpid[1] == tpids[b] &&
			                secho_vlan_vid(d.vlan_tci[0]) == 10 &&
			                secho_vlan_vid(d.vlan_tci[1]) == 4095 && d.l3_off == 22 &&
			                d.ip_version == 6 && d.dport == 9,
			        "two tags %#x %#x", tpids[a], tpids[b]);
		}
	}
	uint16_t one[1][2] = {{0x8100, 5}};
	eth(&f, one, 1, 0x0806);
	data(&f, 28);
	done(&f);
	T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.ethertype == 0x0806 && d.ip_version == 0 &&
	                d.nvlan == 1,
	        "tagged ARP: described as not IP");
	t_end();

	t_begin("dissect: frames that are not IP are described, not refused");
	static const unsigned types[] = {0x0806, 0x88cc, 0x8863, 0x0040, 0x05dc, 0x88e5};
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		eth(&f, NULL, 0, types[i]);
		done(&f);
		T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.ethertype == types[i] &&
		                d.ip_version == 0 && d.l3_off == 14,
		        "ethertype %#x", types[i]);
	}
	t_end();
}

static void test_ip6(void)
{
	struct fb f;
	struct secho_dissect d;

	t_begin("dissect: IPv6 UDP, TCP, ICMPv6, and ICMP (v4) inside IPv6 is another protocol");
	eth(&f, NULL, 0, 0x86dd);
	ip6(&f, 6);
	tcp(&f, 1234, 80, 0x02, 0);
	done(&f);
	T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.ip_version == 6 && d.proto == 6 &&
	                d.sport == 1234 && d.dport == 80 && d.tcp_flags == 2 && d.l4_off == 54 &&
	                d.addr_off == 22 && d.ip_len == 60 && d.flags == SECHO_DISSECT_F_L4,
	        "tcp");
	eth(&f, NULL, 0, 0x86dd);
	ip6(&f, 58);
	icmp(&f, 128, 0);
	done(&f);
	T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.proto == 58 && d.icmp_type == 128 &&
	                d.icmp_code == 0,
	        "icmpv6 echo");
	eth(&f, NULL, 0, 0x86dd);
	ip6(&f, 1);
	icmp(&f, 8, 0);
	done(&f);
	T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.proto == 1 && d.icmp_type == 0 &&
	                !(d.flags & SECHO_DISSECT_F_L4),
	        "protocol 1 in IPv6");
	eth(&f, NULL, 0, 0x0800);
	ip4(&f, 58, 0, 0, 0);
	icmp(&f, 128, 0);
	done(&f);
	T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.proto == 58 && !(d.flags & SECHO_DISSECT_F_L4),
	        "protocol 58 in IPv4");
	t_end();

	t_begin("dissect: IPv6 extension header chains");
	/* hop-by-hop, routing, destination options, in a chain, to UDP */
	eth(&f, NULL, 0, 0x86dd);
	ip6(&f, 0);
	ext(&f, 43, 0);
	ext(&f, 60, 2);
	ext(&f, 17, 1);
	udp(&f, 11, 22, 8);
	done(&f);
	T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.proto == 17 && d.sport == 11 &&
	                d.dport == 22 && d.l4_off == 54 + 8 + 24 + 16 &&
	                (d.flags & SECHO_DISSECT_F_IP6_EXT),
	        "hbh+routing+dstopts+udp: off %u", d.l4_off);
	/* terminal: ESP, no next header */
	static const unsigned term[] = {50, 59};
	for (int i = 0; i < 2; i++) {
		eth(&f, NULL, 0, 0x86dd);
		ip6(&f, 60);
		ext(&f, term[i], 0);
		data(&f, 24);
		done(&f);
		T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.proto == term[i] && d.l4_off == 62 &&
		                !(d.flags & SECHO_DISSECT_F_L4) && d.l4_len == 24,
		        "terminal %u", term[i]);
	}
	eth(&f, NULL, 0, 0x86dd);
	ip6(&f, 59);
	done(&f);
	T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.proto == 59 && d.l4_len == 0, "bare 59");
	/* AH (RFC 4302) is followed: OSPF behind it, as in FlowTest's ipv6_auth_header */
	eth(&f, NULL, 0, 0x86dd);
	ip6(&f, 51);
	ah(&f, 89, 4);
	data(&f, 44);
	done(&f);
	T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.proto == 89 && d.l4_off == 54 + 24 &&
	                d.l4_len == 44 && (d.flags & SECHO_DISSECT_F_IP6_EXT) &&
	                !(d.flags & SECHO_DISSECT_F_L4),
	        "ah+ospf: proto %u off %u", d.proto, d.l4_off);
	/* AH with its shortest length (8 bytes), in a chain, to TCP: the ports are read */
	eth(&f, NULL, 0, 0x86dd);
	ip6(&f, 0);
	ext(&f, 51, 0);
	ah(&f, 60, 0);
	ext(&f, 51, 1);
	ah(&f, 6, 5); /* 28 bytes: a 4-byte multiple, not an 8-byte one */
	tcp(&f, 179, 40000, 0x18, 0);
	data(&f, 10);
	done(&f);
	T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.proto == 6 && d.sport == 179 &&
	                d.dport == 40000 && d.tcp_flags == 0x18 && d.l4_off == 54 + 8 + 8 + 16 + 28,
	        "hbh+ah+dstopts+ah+tcp: proto %u off %u", d.proto, d.l4_off);
	/* Mobility header: its Payload Proto (59, no next header) is the flow's protocol */
	eth(&f, NULL, 0, 0x86dd);
	ip6(&f, 135);
	mh(&f, 59, 1);
	done(&f);
	T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.proto == 59 && d.l4_off == 54 + 16 &&
	                d.l4_len == 0 && (d.flags & SECHO_DISSECT_F_IP6_EXT),
	        "mobility+59: proto %u off %u", d.proto, d.l4_off);
	eth(&f, NULL, 0, 0x86dd);
	ip6(&f, 60);
	ext(&f, 135, 0);
	mh(&f, 17, 2);
	udp(&f, 434, 434, 8 + 4);
	data(&f, 4);
	done(&f);
	T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.proto == 17 && d.sport == 434 &&
	                d.l4_off == 54 + 8 + 24,
	        "dstopts+mobility+udp: proto %u off %u", d.proto, d.l4_off);
	/* AH before a fragment header: a first fragment with its ports */
	eth(&f, NULL, 0, 0x86dd);
	ip6(&f, 51);
	ah(&f, 44, 4);
	frag6(&f, 17, 0, 1, 77);
	udp(&f, 9, 10, 100);
	data(&f, 16);
	done(&f);
	T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.frag == SECHO_FRAG_FIRST && d.proto == 17 &&
	                d.sport == 9 && d.frag_id == 77,
	        "ah+fragment: frag %u proto %u", d.frag, d.proto);
	/* AH and Mobility headers count towards the eight */
	eth(&f, NULL, 0, 0x86dd);
	ip6(&f, 51);
	for (int i = 0; i < 4; i++) {
		ah(&f, 135, 0);
		mh(&f, 51, 0);
	}
	ah(&f, 17, 0);
	udp(&f, 1, 2, 8);
	done(&f);
	T_CHECK(dis(f.b, f.n, f.n, &d) == R(IP6_EXT_DEPTH), "ninth header (ah): %s",
	        secho_dissect_reason_name(dis(f.b, f.n, f.n, &d)));
	/* a packet ending inside AH, or inside the Mobility header, is refused */
	eth(&f, NULL, 0, 0x86dd);
	ip6(&f, 51);
	ah(&f, 6, 4);
	done(&f);
	for (size_t cut = 54 + 1; cut < f.n; cut++) {
		wr16(f.b + 18, (unsigned)(cut - 54));
		T_CHECK(dis(f.b, cut, cut, &d) == R(IP6_EXT_SHORT), "ah cut at %zu: %s", cut,
		        secho_dissect_reason_name(dis(f.b, cut, cut, &d)));
	}
	eth(&f, NULL, 0, 0x86dd);
	ip6(&f, 135);
	mh(&f, 59, 2);
	done(&f);
	for (size_t cut = 54 + 1; cut < f.n; cut++) {
		wr16(f.b + 18, (unsigned)(cut - 54));
		T_CHECK(dis(f.b, cut, cut, &d) == R(IP6_EXT_SHORT), "mobility cut at %zu: %s", cut,
		        secho_dissect_reason_name(dis(f.b, cut, cut, &d)));
	}
	/* eight extension headers are followed */
	eth(&f, NULL, 0, 0x86dd);
	ip6(&f, 0);
	for (int i = 0; i < 7; i++)
		ext(&f, 60, 0);
	ext(&f, 6, 0);
	tcp(&f, 1, 2, 0x10, 0);
	done(&f);
	T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.proto == 6 && d.sport == 1 &&
	                d.l4_off == 54 + 64,
	        "eight extension headers");
	t_end();

	t_begin("dissect: IPv6 fragments: first, later, atomic, through extension headers");
	eth(&f, NULL, 0, 0x86dd);
	ip6(&f, 0);
	ext(&f, 44, 0);
	frag6(&f, 17, 0, 1, 0xdeadbeef);
	udp(&f, 500, 4500, 1000);
	data(&f, 16);
	done(&f);
	T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.frag == SECHO_FRAG_FIRST &&
	                d.frag_id == 0xdeadbeef && d.frag_off == 0 &&
	                (d.flags & SECHO_DISSECT_F_FRAG_MF) && d.sport == 500 && d.dport == 4500,
	        "first fragment has the ports");
	eth(&f, NULL, 0, 0x86dd);
	ip6(&f, 44);
	frag6(&f, 60, 1448, 1, 0xdeadbeef);
	data(&f, 100);
	done(&f);
	T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.frag == SECHO_FRAG_LATER &&
	                d.frag_off == 1448 && d.frag_id == 0xdeadbeef && d.proto == 60 &&
	                d.sport == 0 && !(d.flags & SECHO_DISSECT_F_L4) && d.l4_off == 62 &&
	                d.l4_len == 100,
	        "later fragment: the fragment header's next header, no ports");
	eth(&f, NULL, 0, 0x86dd);
	ip6(&f, 44);
	frag6(&f, 6, 0, 0, 77);
	tcp(&f, 9, 8, 0x01, 0);
	done(&f);
	T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.frag == SECHO_FRAG_NONE &&
	                (d.flags & SECHO_DISSECT_F_ATOMIC) && d.sport == 9 && d.tcp_flags == 1,
	        "atomic fragment is a whole packet");
	t_end();

	t_begin("dissect: IPv4 fragments: first, later, MF, offset, id");
	eth(&f, NULL, 0, 0x0800);
	ip4(&f, 17, 0, 0x2000, 0xbeef);
	udp(&f, 1, 2, 3000);
	data(&f, 1472);
	done(&f);
	T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.frag == SECHO_FRAG_FIRST &&
	                d.frag_id == 0xbeef && (d.flags & SECHO_DISSECT_F_FRAG_MF) &&
	                d.sport == 1 && d.dport == 2,
	        "first");
	eth(&f, NULL, 0, 0x0800);
	ip4(&f, 17, 0, 0x2000 | 185, 0xbeef);
	data(&f, 1480);
	done(&f);
	T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.frag == SECHO_FRAG_LATER &&
	                d.frag_off == 1480 && (d.flags & SECHO_DISSECT_F_FRAG_MF) && d.sport == 0 &&
	                !(d.flags & SECHO_DISSECT_F_L4) && d.proto == 17,
	        "middle");
	eth(&f, NULL, 0, 0x0800);
	ip4(&f, 6, 0, 370, 0xbeef);
	data(&f, 3); /* a later fragment's data is not a TCP header, however short */
	done(&f);
	T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.frag == SECHO_FRAG_LATER &&
	                d.frag_off == 2960 && !(d.flags & SECHO_DISSECT_F_FRAG_MF),
	        "last");
	t_end();
}

static void test_encap(void)
{
	struct fb f;
	struct secho_dissect d;
	uint16_t vl[1][2] = {{0x8100, 42}};

	t_begin("dissect: MPLS label stacks (1, 2, 8 labels, multicast) with IPv4 / IPv6 inside");
	eth(&f, NULL, 0, 0x8847);
	mpls(&f, 16, 1);
	ip4(&f, 17, 0, 0, 1);
	udp(&f, 5000, 53, 8 + 10);
	data(&f, 10);
	done(&f);
	T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.ip_version == 4 && d.ethertype == 0x8847 &&
	                (d.flags & SECHO_DISSECT_F_MPLS) && d.nmpls == 1 &&
	                d.mpls_top >> 12 == 16 && d.l3_off == 18 && d.addr_off == 30 &&
	                d.sport == 5000 && d.dport == 53 && d.ip_len == 38,
	        "one label: v%u off %u top %x", d.ip_version, d.l3_off, d.mpls_top);
	eth(&f, vl, 1, 0x8847);
	mpls(&f, 1000, 0);
	mpls(&f, 2000, 1);
	ip6(&f, 6);
	tcp(&f, 443, 50000, 0x10, 0);
	done(&f);
	T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.ip_version == 6 && d.nvlan == 1 &&
	                d.nmpls == 2 && d.mpls_top >> 12 == 1000 && d.l3_off == 26 &&
	                d.sport == 443 && d.tcp_flags == 0x10,
	        "VLAN, two labels, IPv6: off %u", d.l3_off);
	eth(&f, NULL, 0, 0x8848);
	for (int i = 0; i < 8; i++)
		mpls(&f, 100 + (unsigned)i, i == 7);
	ip4(&f, 1, 0, 0, 1);
	icmp(&f, 8, 0);
	done(&f);
	T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.nmpls == 8 && d.l3_off == 46 &&
	                d.icmp_type == 8 && d.ethertype == 0x8848,
	        "eight labels, multicast: %s", secho_dissect_reason_name(dis(f.b, f.n, f.n, &d)));
	eth(&f, NULL, 0, 0x8847);
	for (int i = 0; i < 9; i++)
		mpls(&f, 100 + (unsigned)i, i == 8);
	ip4(&f, 1, 0, 0, 1);
	icmp(&f, 8, 0);
	done(&f);
	T_CHECK(dis(f.b, f.n, f.n, &d) == R(MPLS_DEPTH) && d.ip_version == 0, "nine labels");
	/* Ethernet over MPLS with a control word (first nibble 0): not IP, not refused */
	eth(&f, NULL, 0, 0x8847);
	mpls(&f, 300, 1);
	put32(&f, 0); /* control word */
	put(&f, f.b, 12);
	put16(&f, 0x0800);
	ip4(&f, 17, 0, 0, 1);
	udp(&f, 1, 2, 8);
	done(&f);
	T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.ip_version == 4 && d.nmpls == 1 &&
	                d.ethertype == 0x8847 && (d.flags & SECHO_DISSECT_F_TUNNEL) &&
	                d.tun_type == SECHO_TUN_EOMPLS && d.l3_off == 18 + 4 + 14 && d.sport == 1 &&
	                d.dport == 2,
	        "pseudowire: v%u", d.ip_version);
	T_CHECK(secho_dissect_inline(f.b, f.n, f.n, &d) == R(OK) && d.ip_version == 0 &&
	                !(d.flags & SECHO_DISSECT_F_TUNNEL),
	        "pseudowire, the endpoint's dissector: not IP");
	/* truncated: inside the stack, right after it, inside the IP header */
	eth(&f, NULL, 0, 0x8847);
	mpls(&f, 16, 0);
	mpls(&f, 17, 1);
	ip4(&f, 6, 0, 0, 1);
	tcp(&f, 1, 2, 0x10, 0);
	done(&f);
	for (size_t cut = 14; cut < f.n; cut++) {
		enum secho_dissect_reason r = dis(f.b, cut, cut, &d);
		enum secho_dissect_reason want = cut < 23   ? R(MPLS_SHORT)
		                                 : cut < 42 ? R(IP4_SHORT)
		                                            : R(IP_TRUNC);
		T_CHECK(r == want, "mpls cut at %zu: %s", cut, secho_dissect_reason_name(r));
	}
	t_end();

	t_begin("dissect: PPPoE sessions with IPv4 / IPv6 inside; other PPP protocols");
	eth(&f, NULL, 0, 0x8864);
	pppoe(&f, 0x1234, 0x0021);
	ip4(&f, 6, 0, 0, 1);
	tcp(&f, 80, 40000, 0x18, 0);
	data(&f, 5);
	done(&f);
	T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.ip_version == 4 &&
	                (d.flags & SECHO_DISSECT_F_PPPOE) && d.pppoe_sid == 0x1234 &&
	                d.l3_off == 22 && d.sport == 80 && d.ip_len == 45,
	        "pppoe ipv4: off %u", d.l3_off);
	eth(&f, vl, 1, 0x8864);
	pppoe(&f, 7, 0x0057);
	ip6(&f, 17);
	udp(&f, 547, 546, 8);
	done(&f);
	T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.ip_version == 6 && d.l3_off == 26 &&
	                d.sport == 547,
	        "vlan, pppoe ipv6: off %u", d.l3_off);
	eth(&f, NULL, 0, 0x8864);
	pppoe(&f, 0x99, 0x0021);
	f.n -= 2;
	put8(&f, 0x57); /* compressed protocol field: IPv6 */
	ip6(&f, 17);
	udp(&f, 1, 2, 8);
	done(&f);
	T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.ip_version == 6 && d.l3_off == 21 &&
	                d.pppoe_sid == 0x99 && d.sport == 1,
	        "compressed protocol field: off %u", d.l3_off);
	eth(&f, NULL, 0, 0x8864);
	pppoe(&f, 7, 0xc021); /* LCP */
	data(&f, 20);
	T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.ip_version == 0, "lcp");
	for (size_t cut = 14; cut < 22; cut++)
		T_CHECK(dis(f.b, cut, cut, &d) == R(PPPOE_SHORT), "pppoe cut at %zu", cut);
	t_end();
}

/* ---- tunnels (the flow meter's dissector; the endpoint's follows none) ---- */

#define IN_SRC 0x0a000001u /* the inner packet: 10.0.0.1 -> 10.0.0.2 */
#define IN_DST 0x0a000002u

/* An inner IPv4 TCP packet 10.0.0.1:1111 -> 10.0.0.2:2222, or IPv6 ::a -> ::b UDP. */
static void inner4(struct fb *f)
{
	ip4(f, 6, 0, 0, 9);
	addrs(f, IN_SRC, IN_DST);
	tcp(f, 1111, 2222, 0x18, 0);
	data(f, 20);
}

static void inner6(struct fb *f)
{
	ip6(f, 17);
	addrs(f, 0xa, 0xb);
	udp(f, 3333, 4444, 8 + 10);
	data(f, 10);
}

/* Is d the inner packet of inner4 / inner6 (whole, ip_len as built) in tun_type/tun_id? */
static int is_inner(const struct fb *f, const struct secho_dissect *d, int v, unsigned ntun,
                    unsigned type, uint32_t id, unsigned tflags)
{
	int ok = (d->flags & SECHO_DISSECT_F_TUNNEL) && d->ntun == ntun && d->tun_type == type &&
	         d->tun_id == id && d->tun_flags == tflags && d->ip_version == v &&
	         (d->flags & SECHO_DISSECT_F_L4);
	if (v == 4)
		ok = ok && d->sport == 1111 && d->dport == 2222 && d->ip_len == 20 + 20 + 20 &&
		     f->b[d->addr_off + 3] == 1 && f->b[d->addr_off + 7] == 2 &&
		     f->b[d->addr_off] == 10;
	else
		ok = ok && d->sport == 3333 && d->dport == 4444 && d->ip_len == 40 + 18 &&
		     f->b[d->addr_off + 15] == 0xa && f->b[d->addr_off + 31] == 0xb;
	return ok;
}

/* The outer packet: IPv4 198.18.0.1 -> .2 (ip4()), at 14 unless told. */
static int outer_ok(const struct fb *f, const struct secho_dissect *d, unsigned off, int v)
{
	return d->outer_l3_off == off && d->outer_ip_version == v && d->outer_ip_len == f->n - off;
}

static void test_tunnels(void)
{
	struct fb f;
	struct secho_dissect d;
	enum secho_dissect_reason r;
	uint16_t tag1[1][2] = {{0x8100, 42}};
	uint16_t two[2][2] = {{0x88a8, 7}, {0x8100, 8}};

	t_begin("dissect: GRE (keys, checksum, sequence; IPv4, IPv6, Ethernet) and ERSPAN "
	        "I/II/III");
	eth(&f, NULL, 0, 0x0800);
	ip4(&f, 47, 0, 0, 1);
	gre(&f, 0, 0x0800, 0);
	inner4(&f);
	done(&f);
	r = dis(f.b, f.n, f.n, &d);
	T_CHECK(r == R(OK) && is_inner(&f, &d, 4, 1, SECHO_TUN_GRE, 0, 0) &&
	                outer_ok(&f, &d, 14, 4) && d.l3_off == 14 + 20 + 4 && d.inner_l2_off == 0 &&
	                d.ethertype == 0x0800,
	        "GRE, IPv4: %s", secho_dissect_reason_name(r));
	T_CHECK(secho_dissect_inline(f.b, f.n, f.n, &d) == R(OK) && d.proto == 47 &&
	                d.ip_len == f.n - 14 && !(d.flags & SECHO_DISSECT_F_TUNNEL) && d.ntun == 0,
	        "the endpoint's dissector does not follow GRE");
	eth(&f, tag1, 1, 0x86dd);
	ip6(&f, 47);
	gre(&f, GRE_C | GRE_K | GRE_S, 0x86dd, 0);
	inner6(&f);
	done(&f);
	r = dis(f.b, f.n, f.n, &d);
	T_CHECK(r == R(OK) && is_inner(&f, &d, 6, 1, SECHO_TUN_GRE, 0, SECHO_TUN_F_KEY) &&
	                outer_ok(&f, &d, 18, 6) && d.l3_off == 18 + 40 + 16 && d.nvlan == 1,
	        "GRE with C, K (0), S; IPv6 in IPv6: %s", secho_dissect_reason_name(r));
	eth(&f, NULL, 0, 0x0800);
	ip4(&f, 47, 0, 0, 1);
	gre(&f, GRE_K, 0x6558, 0xdeadbeef);
	ieth(&f, 2, tag1, 1, 0x0800);
	inner4(&f);
	done(&f);
	r = dis(f.b, f.n, f.n, &d);
	T_CHECK(r == R(OK) && is_inner(&f, &d, 4, 1, SECHO_TUN_GRE, 0xdeadbeef, SECHO_TUN_F_KEY) &&
	                d.inner_l2_off == 14 + 20 + 8 && d.l3_off == 14 + 20 + 8 + 18,
	        "GRE Ethernet bridging, a VLAN tag inside: %s", secho_dissect_reason_name(r));
	eth(&f, NULL, 0, 0x0800);
	ip4(&f, 47, 0, 0, 1);
	gre(&f, GRE_S, 0x88be, 0);
	erspan2(&f, 0x155);
	ieth(&f, 2, NULL, 0, 0x0800);
	inner4(&f);
	done(&f);
	r = dis(f.b, f.n, f.n, &d);
	T_CHECK(r == R(OK) && is_inner(&f, &d, 4, 1, SECHO_TUN_ERSPAN, 0x155, SECHO_TUN_F_KEY) &&
	                d.inner_l2_off == 14 + 20 + 8 + 8,
	        "ERSPAN II: %s", secho_dissect_reason_name(r));
	eth(&f, NULL, 0, 0x0800);
	ip4(&f, 47, 0, 0, 1);
	gre(&f, 0, 0x88be, 0);
	ieth(&f, 2, two, 2, 0x86dd);
	inner6(&f);
	done(&f);
	r = dis(f.b, f.n, f.n, &d);
	T_CHECK(r == R(OK) && is_inner(&f, &d, 6, 1, SECHO_TUN_ERSPAN, 0, 0) &&
	                d.inner_l2_off == 14 + 20 + 4,
	        "ERSPAN I, QinQ inside: %s", secho_dissect_reason_name(r));
	for (int o = 0; o <= 1; o++) {
		eth(&f, NULL, 0, 0x0800);
		ip4(&f, 47, 0, 0, 1);
		gre(&f, GRE_S, 0x22eb, 0);
		erspan3(&f, 0x2aa, o, 0);
		ieth(&f, 2, NULL, 0, 0x0800);
		inner4(&f);
		done(&f);
		r = dis(f.b, f.n, f.n, &d);
		T_CHECK(r == R(OK) &&
		                is_inner(&f, &d, 4, 1, SECHO_TUN_ERSPAN, 0x2aa, SECHO_TUN_F_KEY) &&
		                d.inner_l2_off == 14 + 20 + 8 + 12 + (o ? 8 : 0),
		        "ERSPAN III, %s the platform sub-header: %s", o ? "with" : "without",
		        secho_dissect_reason_name(r));
	}
	/* not followed: the outer GRE flow */
	static const struct {
		unsigned flags, ptype;
		const char *what;
	} notf[] = {{0x0001, 0x880b, "version 1 (PPTP)"},
	            {0x4000, 0x0800, "routing present (RFC 1701)"},
	            {0, 0x8847, "MPLS over GRE"},
	            {0, 0x0000, "keepalive"}};
	for (size_t i = 0; i < sizeof(notf) / sizeof(notf[0]); i++) {
		eth(&f, NULL, 0, 0x0800);
		ip4(&f, 47, 0, 0, 1);
		gre(&f, notf[i].flags, notf[i].ptype, 0);
		inner4(&f);
		done(&f);
		r = dis(f.b, f.n, f.n, &d);
		T_CHECK(r == R(OK) && d.proto == 47 && d.ip_version == 4 && d.ntun == 0 &&
		                !(d.flags & SECHO_DISSECT_F_TUNNEL) && d.ip_len == f.n - 14,
		        "GRE %s: the outer flow (%s)", notf[i].what, secho_dissect_reason_name(r));
	}
	eth(&f, NULL, 0, 0x0800);
	ip4(&f, 47, 0, 0, 1);
	gre(&f, GRE_S, 0x22eb, 0);
	erspan3(&f, 1, 0, 2);
	inner4(&f);
	done(&f);
	T_CHECK(dis(f.b, f.n, f.n, &d) == R(OK) && d.proto == 47 && !d.ntun,
	        "ERSPAN III frame type IP: the outer flow");
	t_end();

	t_begin("dissect: VXLAN, Geneve (options; Ethernet, IPv4), GTP-U (extension headers)");
	eth(&f, NULL, 0, 0x0800);
	ip4(&f, 17, 0, 0x4000, 1);
	tudp(&f, 51000, 4789);
	vxlan(&f, 0x08, 0x123456);
	ieth(&f, 2, tag1, 1, 0x0800);
	inner4(&f);
	done(&f);
	r = dis(f.b, f.n, f.n, &d);
	T_CHECK(r == R(OK) && is_inner(&f, &d, 4, 1, SECHO_TUN_VXLAN, 0x123456, SECHO_TUN_F_KEY) &&
	                outer_ok(&f, &d, 14, 4) && d.inner_l2_off == 14 + 20 + 8 + 8,
	        "VXLAN: %s", secho_dissect_reason_name(r));
	T_CHECK(secho_dissect_inline(f.b, f.n, f.n, &d) == R(OK) && d.proto == 17 &&
	                d.dport == 4789 && !(d.flags & SECHO_DISSECT_F_TUNNEL),
	        "the endpoint's dissector does not follow VXLAN");
	eth(&f, NULL, 0, 0x86dd);
	ip6(&f, 17);
	tudp(&f, 51000, 4789);
	vxlan(&f, 0x08, 7);
	ieth(&f, 2, two, 2, 0x86dd);
	inner6(&f);
	done(&f);
	r = dis(f.b, f.n, f.n, &d);
	T_CHECK(r == R(OK) && is_inner(&f, &d, 6, 1, SECHO_TUN_VXLAN, 7, SECHO_TUN_F_KEY) &&
	                outer_ok(&f, &d, 14, 6),
	        "VXLAN over IPv6, QinQ inside: %s", secho_dissect_reason_name(r));
	eth(&f, NULL, 0, 0x0800);
	ip4(&f, 17, 0, 0, 1);
	tudp(&f, 51000, 4789);
	vxlan(&f, 0x08, 7);
	ieth(&f, 2, NULL, 0, 0x0806);
	data(&f, 28);
	done(&f);
	r = dis(f.b, f.n, f.n, &d);
	T_CHECK(r == R(OK) && d.ip_version == 4 && d.proto == 17 && d.dport == 4789 && !d.ntun &&
	                !(d.flags & SECHO_DISSECT_F_TUNNEL) && d.ip_len == f.n - 14,
	        "VXLAN carrying ARP: the outer UDP flow (%s)", secho_dissect_reason_name(r));
	for (unsigned optlen = 0; optlen <= 12; optlen += 12) {
		eth(&f, NULL, 0, 0x0800);
		ip4(&f, 17, 0, 0, 1);
		tudp(&f, 51000, 6081);
		geneve(&f, optlen, 0x6558, 0xabcdef);
		ieth(&f, 2, NULL, 0, 0x0800);
		inner4(&f);
		done(&f);
		r = dis(f.b, f.n, f.n, &d);
		T_CHECK(r == R(OK) &&
		                is_inner(&f, &d, 4, 1, SECHO_TUN_GENEVE, 0xabcdef,
		                         SECHO_TUN_F_KEY) &&
		                d.inner_l2_off == 14 + 20 + 8 + 8 + optlen,
		        "Geneve, %u bytes of options: %s", optlen, secho_dissect_reason_name(r));
	}
	eth(&f, NULL, 0, 0x0800);
	ip4(&f, 17, 0, 0, 1);
	tudp(&f, 51000, 6081);
	geneve(&f, 4, 0x86dd, 5);
	inner6(&f);
	done(&f);
	r = dis(f.b, f.n, f.n, &d);
	T_CHECK(r == R(OK) && is_inner(&f, &d, 6, 1, SECHO_TUN_GENEVE, 5, SECHO_TUN_F_KEY) &&
	                d.inner_l2_off == 0,
	        "Geneve carrying IPv6: %s", secho_dissect_reason_name(r));
	eth(&f, NULL, 0, 0x0800);
	ip4(&f, 17, 0, 0, 1);
	tudp(&f, 2152, 2152);
	gtpu(&f, 0x30, 255, 0x11223344, NULL, 0);
	inner4(&f);
	done(&f);
	r = dis(f.b, f.n, f.n, &d);
	T_CHECK(r == R(OK) && is_inner(&f, &d, 4, 1, SECHO_TUN_GTPU, 0x11223344, SECHO_TUN_F_KEY) &&
	                d.l3_off == 14 + 20 + 8 + 8,
	        "GTP-U: %s", secho_dissect_reason_name(r));
	static const uint8_t exts[3] = {0x85, 0x40, 0xc0};
	for (unsigned ne = 0; ne <= 3; ne++) {
		eth(&f, NULL, 0, 0x0800);
		ip4(&f, 17, 0, 0, 1);
		tudp(&f, 2152, 2152);
		gtpu(&f, ne ? 0x34 : 0x32, 255, 9, exts, ne);
		inner6(&f);
		done(&f);
		r = dis(f.b, f.n, f.n, &d);
		T_CHECK(r == R(OK) && is_inner(&f, &d, 6, 1, SECHO_TUN_GTPU, 9, SECHO_TUN_F_KEY) &&
		                d.l3_off == 14 + 20 + 8 + 12 + 4 * ne,
		        "GTP-U, %u extension headers: %s", ne, secho_dissect_reason_name(r));
	}
	/* on a tunnel port, not the tunnel: the outer UDP flow */
	struct {
		unsigned port, what;
	} nott[] = {{4789, 0}, {4789, 1}, {6081, 2}, {6081, 3}, {2152, 4}, {2152, 5}, {2152, 6}};
	for (size_t i = 0; i < sizeof(nott) / sizeof(nott[0]); i++) {
		eth(&f, NULL, 0, 0x0800);
		ip4(&f, 17, 0, 0, 1);
		tudp(&f, 40000, nott[i].port);
		switch (nott[i].what) {
		case 0: /* VXLAN without the I flag */
			vxlan(&f, 0, 1);
			ieth(&f, 2, NULL, 0, 0x0800);
			inner4(&f);
			break;
		case 1: /* too short for VXLAN and Ethernet */
			vxlan(&f, 0x08, 1);
			data(&f, 13);
			break;
		case 2: /* Geneve version 1 */
			geneve(&f, 0, 0x6558, 1);
			f.b[f.n - 8] |= 0x40;
			ieth(&f, 2, NULL, 0, 0x0800);
			inner4(&f);
			break;
		case 3: /* options longer than the packet */
			geneve(&f, 0, 0x6558, 1);
			f.b[f.n - 8] = 0x3f;
			data(&f, 40);
			break;
		case 4: /* GTP-U echo request */
			gtpu(&f, 0x32, 1, 0, NULL, 0);
			break;
		case 5: /* GTP' (PT 0) */
			gtpu(&f, 0x20, 255, 1, NULL, 0);
			inner4(&f);
			break;
		default: /* an extension header of length 0 */
			gtpu(&f, 0x34, 255, 1, exts, 1);
			f.b[f.n - 4] = 0;
			inner4(&f);
			break;
		}
		done(&f);
		r = dis(f.b, f.n, f.n, &d);
		T_CHECK(r == R(OK) && d.proto == 17 && d.dport == nott[i].port && !d.ntun &&
		                !(d.flags & SECHO_DISSECT_F_TUNNEL) && d.ip_len == f.n - 14,
		        "port %u, case %u: the outer UDP flow (%s)", nott[i].port, nott[i].what,
		        secho_dissect_reason_name(r));
	}
	t_end();

	t_begin("dissect: IP in IP (4in4, 6in4, 4in6, 6in6), nesting, depth, fragments");
	for (int ov = 4; ov <= 6; ov += 2)
		for (int iv = 4; iv <= 6; iv += 2) {
			eth(&f, NULL, 0, ov == 4 ? 0x0800 : 0x86dd);
			if (ov == 4)
				ip4(&f, iv == 4 ? 4 : 41, 0, 0, 1);
			else
				ip6(&f, iv == 4 ? 4 : 41);
			if (iv == 4)
				inner4(&f);
			else
				inner6(&f);
			done(&f);
			r = dis(f.b, f.n, f.n, &d);
			T_CHECK(r == R(OK) && is_inner(&f, &d, iv, 1, SECHO_TUN_IPIP, 0, 0) &&
			                outer_ok(&f, &d, 14, ov),
			        "%din%d: %s", iv, ov, secho_dissect_reason_name(r));
		}
	/* VXLAN in GRE (with a key) in IPv6: the innermost tunnel is the one described */
	eth(&f, NULL, 0, 0x86dd);
	ip6(&f, 47);
	gre(&f, GRE_K, 0x0800, 99);
	ip4(&f, 17, 0, 0, 1);
	tudp(&f, 1, 4789);
	vxlan(&f, 0x08, 0x777);
	ieth(&f, 2, NULL, 0, 0x0800);
	inner4(&f);
	done(&f);
	r = dis(f.b, f.n, f.n, &d);
	T_CHECK(r == R(OK) && is_inner(&f, &d, 4, 2, SECHO_TUN_VXLAN, 0x777, SECHO_TUN_F_KEY) &&
	                outer_ok(&f, &d, 14, 6),
	        "VXLAN in GRE in IPv6: %s", secho_dissect_reason_name(r));
	/* IP in IP, 4 deep (described), 5 deep (refused) */
	for (unsigned depth = 4; depth <= 5; depth++) {
		eth(&f, NULL, 0, 0x0800);
		for (unsigned i = 0; i < depth; i++)
			ip4(&f, 4, 0, 0, i);
		inner4(&f);
		done(&f);
		r = dis(f.b, f.n, f.n, &d);
		if (depth == 4)
			T_CHECK(r == R(OK) && is_inner(&f, &d, 4, 4, SECHO_TUN_IPIP, 0, 0) &&
			                outer_ok(&f, &d, 14, 4),
			        "four tunnels: %s", secho_dissect_reason_name(r));
		else
			T_CHECK(r == R(TUN_DEPTH) && d.ntun == 4, "five tunnels: %s",
			        secho_dissect_reason_name(r));
	}
	/* an outer first fragment is not followed; an inner later fragment is described */
	eth(&f, NULL, 0, 0x0800);
	ip4(&f, 47, 0, 0x2000, 5);
	gre(&f, GRE_K, 0x0800, 3);
	inner4(&f);
	done(&f);
	r = dis(f.b, f.n, f.n, &d);
	T_CHECK(r == R(OK) && d.proto == 47 && d.frag == SECHO_FRAG_FIRST && !d.ntun,
	        "outer first fragment: the outer flow (%s)", secho_dissect_reason_name(r));
	eth(&f, NULL, 0, 0x0800);
	ip4(&f, 47, 0, 0, 5);
	gre(&f, GRE_K, 0x0800, 3);
	ip4(&f, 6, 0, 0x0010, 6);
	data(&f, 30);
	done(&f);
	r = dis(f.b, f.n, f.n, &d);
	T_CHECK(r == R(OK) && d.ntun == 1 && d.tun_id == 3 && d.frag == SECHO_FRAG_LATER &&
	                d.frag_off == 128 && d.frag_id == 6 && d.proto == 6,
	        "inner later fragment: %s", secho_dissect_reason_name(r));
	/* the inner packet may not be longer than the outer one's payload */
	eth(&f, NULL, 0, 0x0800);
	ip4(&f, 4, 0, 0, 1);
	inner4(&f);
	done(&f);
	wr16(f.b + 14 + 2, 20 + 50);
	T_CHECK(dis(f.b, f.n, f.n, &d) == R(IP_TRUNC) && d.ntun == 1, "inner longer than outer");
	t_end();

	t_begin("dissect: Ethernet over MPLS (control word, none, IP-like MACs)");
	for (unsigned mac0 = 0x02; mac0 <= 0x46; mac0 += 0x44) {
		eth(&f, NULL, 0, 0x8847);
		mpls(&f, 500, 1);
		/* (a tag after MAC 02... would make a control word + Ethernet of it too) */
		ieth(&f, mac0, tag1, mac0 == 0x46, 0x0800);
		inner4(&f);
		done(&f);
		r = dis(f.b, f.n, f.n, &d);
		T_CHECK(r == R(OK) && is_inner(&f, &d, 4, 1, SECHO_TUN_EOMPLS, 0, 0) &&
		                d.outer_ip_version == 0 && d.inner_l2_off == 18 && d.nmpls == 1 &&
		                (d.flags & SECHO_DISSECT_F_MPLS),
		        "no control word, MAC %02x...: %s", mac0, secho_dissect_reason_name(r));
		r = secho_dissect_inline(f.b, f.n, f.n, &d);
		T_CHECK((r != R(OK) || d.ip_version == 0) && !d.ntun &&
		                !(d.flags & SECHO_DISSECT_F_TUNNEL),
		        "the endpoint's dissector: not IP or refused (%s)",
		        secho_dissect_reason_name(r));
	}
	eth(&f, NULL, 0, 0x8847);
	mpls(&f, 500, 0);
	mpls(&f, 501, 1);
	put32(&f, 0x00000017); /* control word, sequence 23 */
	ieth(&f, 2, NULL, 0, 0x86dd);
	inner6(&f);
	done(&f);
	r = dis(f.b, f.n, f.n, &d);
	T_CHECK(r == R(OK) && is_inner(&f, &d, 6, 1, SECHO_TUN_EOMPLS, 0, 0) &&
	                d.inner_l2_off == 22 + 4,
	        "control word: %s", secho_dissect_reason_name(r));
	/* IP after the labels stays IP; junk after the labels is not IP, not refused */
	eth(&f, NULL, 0, 0x8847);
	mpls(&f, 500, 1);
	inner4(&f);
	done(&f);
	r = dis(f.b, f.n, f.n, &d);
	T_CHECK(r == R(OK) && d.ip_version == 4 && !d.ntun && d.l3_off == 18 && d.sport == 1111,
	        "IPv4 after the labels: %s", secho_dissect_reason_name(r));
	eth(&f, NULL, 0, 0x8847);
	mpls(&f, 500, 1);
	put8(&f, 0x10);
	data(&f, 60);
	done(&f);
	r = dis(f.b, f.n, f.n, &d);
	T_CHECK(r == R(OK) && d.ip_version == 0 && !d.ntun, "junk after the labels: %s",
	        secho_dissect_reason_name(r));
	eth(&f, NULL, 0, 0x8847);
	mpls(&f, 500, 1);
	put32(&f, 0);
	ieth(&f, 2, NULL, 0, 0x0806);
	data(&f, 28);
	done(&f);
	r = dis(f.b, f.n, f.n, &d);
	T_CHECK(r == R(OK) && d.ip_version == 0 && d.ntun == 1 && d.tun_type == SECHO_TUN_EOMPLS,
	        "control word, ARP: not IP (%s)", secho_dissect_reason_name(r));
	eth(&f, NULL, 0, 0x8847);
	mpls(&f, 500, 1);
	ip4(&f, 6, 0, 0, 1);
	tcp(&f, 1, 2, 0x10, 0);
	done(&f);
	f.b[18 + 20 + 12] = 0x10; /* TCP data offset 4 words */
	r = dis(f.b, f.n, f.n, &d);
	T_CHECK(r == R(TCP_DOFF), "IPv4 refused after the labels, no Ethernet in it: %s",
	        secho_dissect_reason_name(r));
	t_end();
}

/* ---- every reason, each from a frame that breaks that one thing ---- */

struct bad_case {
	const char *name;
	enum secho_dissect_reason want;
	struct fb f;
	size_t caplen, wirelen; /* 0 = f.n */
};

static int bad_case(unsigned i, struct bad_case *c)
{
	struct fb *f = &c->f;
	uint16_t tags3[3][2] = {{0x88a8, 1}, {0x8100, 2}, {0x8100, 3}};
	uint16_t tag1[1][2] = {{0x8100, 1}};
	c->caplen = c->wirelen = 0;
	unsigned k = 0;
#define CASE(nm, w) if (i == k++ && (c->name = nm, c->want = R(w), 1))
	CASE("empty", ETH_SHORT)
	{
		memset(f, 0, sizeof(*f));
		return 0;
	}
	CASE("13 bytes", ETH_SHORT)
	{
		eth(f, NULL, 0, 0x0800);
		f->n = 13;
		return 0;
	}
	CASE("tag cut", VLAN_SHORT)
	{
		eth(f, tag1, 1, 0x0800);
		f->n = 17;
		return 0;
	}
	CASE("inner tag cut", VLAN_SHORT)
	{
		eth(f, tags3, 2, 0x0800);
		f->n = 21;
		return 0;
	}
	CASE("three tags", VLAN_DEPTH)
	{
		eth(f, tags3, 3, 0x0800);
		ip4(f, 17, 0, 0, 0);
		udp(f, 1, 2, 8);
		done(f);
		return 0;
	}
	CASE("ipv4 19 bytes", IP4_SHORT)
	{
		eth(f, NULL, 0, 0x0800);
		ip4(f, 17, 0, 0, 0);
		done(f);
		f->n = 14 + 19;
		return 0;
	}
	CASE("ipv4 version 6", IP4_VERSION)
	{
		eth(f, NULL, 0, 0x0800);
		ip4(f, 17, 0, 0, 0);
		udp(f, 1, 2, 8);
		done(f);
		f->b[14] = 0x65;
		return 0;
	}
	CASE("ihl 4", IP4_IHL)
	{
		eth(f, NULL, 0, 0x0800);
		ip4(f, 17, 0, 0, 0);
		udp(f, 1, 2, 8);
		done(f);
		f->b[14] = 0x44;
		return 0;
	}
	CASE("ihl 0", IP4_IHL)
	{
		eth(f, NULL, 0, 0x0800);
		ip4(f, 17, 0, 0, 0);
		udp(f, 1, 2, 8);
		done(f);
		f->b[14] = 0x40;
		return 0;
	}
	CASE("options cut", IP4_OPT_SHORT)
	{
		eth(f, NULL, 0, 0x0800);
		ip4(f, 17, 40, 0, 0);
		done(f);
		f->n = 14 + 59;
		return 0;
	}
	CASE("ihl 15, 40 bytes of frame", IP4_OPT_SHORT)
	{
		eth(f, NULL, 0, 0x0800);
		ip4(f, 17, 0, 0, 0);
		udp(f, 1, 2, 8);
		data(f, 12);
		done(f);
		f->b[14] = 0x4f;
		return 0;
	}
	CASE("total length 19", IP4_TOTLEN)
	{
		eth(f, NULL, 0, 0x0800);
		ip4(f, 17, 0, 0, 0);
		udp(f, 1, 2, 8);
		done(f);
		wr16(f->b + 16, 19);
		return 0;
	}
	CASE("total length below options", IP4_TOTLEN)
	{
		eth(f, NULL, 0, 0x0800);
		ip4(f, 17, 8, 0, 0);
		udp(f, 1, 2, 8);
		done(f);
		wr16(f->b + 16, 24);
		return 0;
	}
	CASE("ipv4 total length past the frame", IP_TRUNC)
	{
		eth(f, NULL, 0, 0x0800);
		ip4(f, 17, 0, 0, 0);
		udp(f, 1, 2, 8);
		done(f);
		wr16(f->b + 16, 29);
		return 0;
	}
	CASE("ipv4 total length past the wire length", IP_TRUNC)
	{
		eth(f, NULL, 0, 0x0800);
		ip4(f, 17, 0, 0, 0);
		udp(f, 1, 2, 8);
		data(f, 100);
		done(f);
		c->caplen = 60;
		c->wirelen = f->n - 1;
		return 0;
	}
	CASE("ipv6 39 bytes", IP6_SHORT)
	{
		eth(f, NULL, 0, 0x86dd);
		ip6(f, 59);
		done(f);
		f->n = 14 + 39;
		return 0;
	}
	CASE("ipv6 version 4", IP6_VERSION)
	{
		eth(f, NULL, 0, 0x86dd);
		ip6(f, 59);
		done(f);
		f->b[14] = 0x40;
		return 0;
	}
	CASE("ipv6 payload length past the frame", IP_TRUNC)
	{
		eth(f, NULL, 0, 0x86dd);
		ip6(f, 17);
		udp(f, 1, 2, 8);
		done(f);
		wr16(f->b + 18, 9);
		return 0;
	}
	CASE("extension header cut by the frame", IP6_EXT_SHORT)
	{
		eth(f, NULL, 0, 0x86dd);
		ip6(f, 60);
		ext(f, 17, 3);
		f->no_fix = 1;
		done(f);
		f->n -= 8;
		wr16(f->b + 18, (unsigned)(f->n - 54));
		return 0;
	}
	CASE("extension header longer than the payload", IP6_EXT_SHORT)
	{
		eth(f, NULL, 0, 0x86dd);
		ip6(f, 43);
		ext(f, 17, 1);
		udp(f, 1, 2, 8);
		done(f);
		wr16(f->b + 18, 12); /* the packet ends inside the routing header */
		return 0;
	}
	CASE("fewer than 8 bytes for an extension header", IP6_EXT_SHORT)
	{
		eth(f, NULL, 0, 0x86dd);
		ip6(f, 0);
		data(f, 4);
		done(f);
		return 0;
	}
	CASE("fragment header cut", IP6_EXT_SHORT)
	{
		eth(f, NULL, 0, 0x86dd);
		ip6(f, 44);
		data(f, 6);
		done(f);
		return 0;
	}
	CASE("hop-by-hop second", IP6_HBH_ORDER)
	{
		eth(f, NULL, 0, 0x86dd);
		ip6(f, 60);
		ext(f, 0, 0);
		ext(f, 17, 0);
		udp(f, 1, 2, 8);
		done(f);
		return 0;
	}
	CASE("nine extension headers", IP6_EXT_DEPTH)
	{
		eth(f, NULL, 0, 0x86dd);
		ip6(f, 60);
		for (int j = 0; j < 8; j++)
			ext(f, 60, 0);
		ext(f, 17, 0);
		udp(f, 1, 2, 8);
		done(f);
		return 0;
	}
	CASE("two fragment headers", IP6_FRAG_TWICE)
	{
		eth(f, NULL, 0, 0x86dd);
		ip6(f, 44);
		frag6(f, 44, 0, 1, 5);
		frag6(f, 17, 0, 1, 5);
		udp(f, 1, 2, 8);
		done(f);
		return 0;
	}
	CASE("ipv4 fragment past 65535", FRAG_OVERFLOW)
	{
		eth(f, NULL, 0, 0x0800);
		ip4(f, 17, 0, 0x1fff, 0);
		data(f, 100);
		done(f);
		return 0;
	}
	CASE("ipv6 fragment past 65535", FRAG_OVERFLOW)
	{
		eth(f, NULL, 0, 0x86dd);
		ip6(f, 44);
		frag6(f, 17, 65528, 0, 9);
		data(f, 16);
		done(f);
		return 0;
	}
	CASE("tcp header cut", TCP_SHORT)
	{
		eth(f, NULL, 0, 0x0800);
		ip4(f, 6, 0, 0, 0);
		tcp(f, 1, 2, 2, 0);
		f->n -= 1;
		done(f);
		return 0;
	}
	CASE("tcp first fragment too short for its header", TCP_SHORT)
	{
		eth(f, NULL, 0, 0x0800);
		ip4(f, 6, 0, 0x2000, 0);
		data(f, 8);
		done(f);
		return 0;
	}
	CASE("tcp data offset 4", TCP_DOFF)
	{
		eth(f, NULL, 0, 0x0800);
		ip4(f, 6, 0, 0, 0);
		tcp(f, 1, 2, 2, 0);
		done(f);
		f->b[34 + 12] = 0x40;
		return 0;
	}
	CASE("tcp data offset past the packet", TCP_DOFF)
	{
		eth(f, NULL, 0, 0x86dd);
		ip6(f, 6);
		tcp(f, 1, 2, 2, 0);
		data(f, 4);
		done(f);
		f->b[54 + 12] = 0x70; /* 28 bytes, 24 in the packet */
		return 0;
	}
	CASE("udp header cut", UDP_SHORT)
	{
		eth(f, NULL, 0, 0x86dd);
		ip6(f, 17);
		data(f, 7);
		done(f);
		return 0;
	}
	CASE("udp cut by the ip length, padding after", UDP_SHORT)
	{
		eth(f, NULL, 0, 0x0800);
		ip4(f, 17, 0, 0, 0);
		data(f, 4);
		f->pad = 30;
		done(f);
		return 0;
	}
	CASE("icmp header cut", ICMP_SHORT)
	{
		eth(f, NULL, 0, 0x0800);
		ip4(f, 1, 0, 0, 0);
		data(f, 4);
		done(f);
		return 0;
	}
	CASE("icmpv6 header cut", ICMP_SHORT)
	{
		eth(f, NULL, 0, 0x86dd);
		ip6(f, 58);
		data(f, 7);
		done(f);
		return 0;
	}
	CASE("mpls label cut", MPLS_SHORT)
	{
		eth(f, tag1, 1, 0x8847);
		mpls(f, 16, 0);
		put16(f, 17);
		return 0;
	}
	CASE("mpls nothing after the bottom", MPLS_SHORT)
	{
		eth(f, NULL, 0, 0x8848);
		mpls(f, 16, 0);
		mpls(f, 17, 1);
		return 0;
	}
	CASE("mpls nine labels", MPLS_DEPTH)
	{
		eth(f, NULL, 0, 0x8847);
		for (int j = 0; j < 9; j++)
			mpls(f, 16 + (unsigned)j, j == 8);
		ip4(f, 17, 0, 0, 0);
		udp(f, 1, 2, 8);
		done(f);
		return 0;
	}
	CASE("pppoe header cut", PPPOE_SHORT)
	{
		eth(f, NULL, 0, 0x8864);
		pppoe(f, 1, 0x0021);
		f->n -= 1;
		return 0;
	}
	CASE("pppoe ipv4 cut", IP4_SHORT)
	{
		eth(f, NULL, 0, 0x8864);
		pppoe(f, 1, 0x0021);
		ip4(f, 17, 0, 0, 0);
		done(f);
		f->n = 22 + 19;
		return 0;
	}
	CASE("mpls ipv6 truncated", IP_TRUNC)
	{
		eth(f, NULL, 0, 0x8847);
		mpls(f, 16, 1);
		ip6(f, 17);
		udp(f, 1, 2, 8);
		data(f, 10);
		done(f);
		f->n -= 5;
		return 0;
	}
	CASE("gre header cut", GRE_SHORT)
	{
		eth(f, NULL, 0, 0x0800);
		ip4(f, 47, 0, 0, 0);
		put16(f, 0);
		done(f);
		return 0;
	}
	CASE("gre key cut", GRE_SHORT)
	{
		eth(f, NULL, 0, 0x86dd);
		ip6(f, 47);
		put16(f, GRE_K);
		put16(f, 0x0800);
		put16(f, 1);
		done(f);
		return 0;
	}
	CASE("gre ethernet cut", GRE_SHORT)
	{
		eth(f, NULL, 0, 0x0800);
		ip4(f, 47, 0, 0, 0);
		gre(f, 0, 0x6558, 0);
		data(f, 13);
		done(f);
		return 0;
	}
	CASE("erspan ii header cut", ERSPAN_SHORT)
	{
		eth(f, NULL, 0, 0x0800);
		ip4(f, 47, 0, 0, 0);
		gre(f, GRE_S, 0x88be, 0);
		put32(f, 0x10000001);
		done(f);
		return 0;
	}
	CASE("erspan iii sub-header cut", ERSPAN_SHORT)
	{
		eth(f, NULL, 0, 0x0800);
		ip4(f, 47, 0, 0, 0);
		gre(f, GRE_S, 0x22eb, 0);
		erspan3(f, 3, 1, 0);
		f->n -= 4;
		done(f);
		return 0;
	}
	CASE("vxlan snapped inside its header", VXLAN_SHORT)
	{
		eth(f, NULL, 0, 0x0800);
		ip4(f, 17, 0, 0, 0);
		tudp(f, 1, 4789);
		vxlan(f, 0x08, 1);
		ieth(f, 2, NULL, 0, 0x0800);
		inner4(f);
		done(f);
		c->caplen = 14 + 20 + 8 + 4;
		c->wirelen = f->n;
		return 0;
	}
	CASE("geneve snapped inside its options", GENEVE_SHORT)
	{
		eth(f, NULL, 0, 0x0800);
		ip4(f, 17, 0, 0, 0);
		tudp(f, 1, 6081);
		geneve(f, 16, 0x6558, 1);
		ieth(f, 2, NULL, 0, 0x0800);
		inner4(f);
		done(f);
		c->caplen = 14 + 20 + 8 + 8 + 10;
		c->wirelen = f->n;
		return 0;
	}
	CASE("gtp-u snapped inside its extension headers", GTPU_SHORT)
	{
		static const uint8_t x[2] = {0x85, 0x40};
		eth(f, NULL, 0, 0x0800);
		ip4(f, 17, 0, 0, 0);
		tudp(f, 2152, 2152);
		gtpu(f, 0x34, 255, 1, x, 2);
		inner4(f);
		done(f);
		c->caplen = 14 + 20 + 8 + 12 + 6;
		c->wirelen = f->n;
		return 0;
	}
	CASE("eompls control word, ethernet cut", EOMPLS_SHORT)
	{
		eth(f, NULL, 0, 0x8847);
		mpls(f, 16, 1);
		put32(f, 0);
		data(f, 13);
		return 0;
	}
	CASE("five tunnels", TUN_DEPTH)
	{
		eth(f, NULL, 0, 0x0800);
		for (unsigned j = 0; j < 5; j++)
			ip4(f, 4, 0, 0, j);
		inner4(f);
		done(f);
		return 0;
	}
	CASE("4in4 carrying IPv6", IP4_VERSION)
	{
		eth(f, NULL, 0, 0x0800);
		ip4(f, 4, 0, 0, 0);
		inner6(f);
		done(f);
		return 0;
	}
#undef CASE
	return -1;
}

static void test_reasons(void)
{
	static struct bad_case c;
	struct secho_dissect d;
	unsigned covered[SECHO_DISSECT_REASON_COUNT] = {0};

	t_begin("dissect: every reason, each from a frame that breaks one thing");
	unsigned i;
	for (i = 0; bad_case(i, &c) == 0; i++) {
		size_t cap = c.caplen ? c.caplen : c.f.n, wire = c.wirelen ? c.wirelen : c.f.n;
		enum secho_dissect_reason r = dis(c.f.b, cap, wire, &d);
		T_CHECK(r == c.want, "%s: got %s want %s", c.name, secho_dissect_reason_name(r),
		        secho_dissect_reason_name(c.want));
		covered[c.want]++;
	}
	T_CHECK(i >= 30, "%u cases", i);
	for (unsigned r = 1; r < SECHO_DISSECT_REASON_COUNT; r++)
		T_CHECK(covered[r], "no case for %s",
		        secho_dissect_reason_name((enum secho_dissect_reason)r));
	for (unsigned a = 0; a < SECHO_DISSECT_REASON_COUNT; a++) {
		const char *na = secho_dissect_reason_name((enum secho_dissect_reason)a);
		T_CHECK(*na && strcmp(na, "unknown") != 0 &&
		                *secho_dissect_reason_text((enum secho_dissect_reason)a),
		        "name %u", a);
		for (unsigned b = a + 1; b < SECHO_DISSECT_REASON_COUNT; b++)
			T_CHECK(strcmp(na, secho_dissect_reason_name(
			                           (enum secho_dissect_reason)b)) != 0,
			        "duplicate name %s", na);
	}
	T_CHECK(!strcmp(secho_dissect_reason_name(SECHO_DISSECT_REASON_COUNT), "unknown"),
	        "out of range");
	t_end();

	t_begin("dissect: a refused frame keeps what came before the refused header");
	uint16_t tag1[1][2] = {{0x9100, 33}};
	eth(&c.f, tag1, 1, 0x0800);
	ip4(&c.f, 6, 0, 0, 0x4242);
	data(&c.f, 10);
	done(&c.f);
	T_CHECK(dis(c.f.b, c.f.n, c.f.n, &d) == R(TCP_SHORT) && d.nvlan == 1 &&
	                secho_vlan_vid(d.vlan_tci[0]) == 33 && d.ip_version == 4 && d.proto == 6 &&
	                d.frag_id == 0x4242 && d.l4_off == 38 && d.sport == 0,
	        "tcp_short after a tag");
	t_end();
}

/* ---- truncation at every offset; snap lengths ---- */

static void build_good(unsigned which, struct fb *f)
{
	uint16_t two[2][2] = {{0x88a8, 7}, {0x8100, 8}};
	switch (which) {
	case 0:
		eth(f, NULL, 0, 0x0800);
		ip4(f, 17, 0, 0, 1);
		udp(f, 1, 2, 108);
		data(f, 100);
		break;
	case 1:
		eth(f, two, 2, 0x0800);
		ip4(f, 6, 12, 0, 1);
		tcp(f, 1, 2, 0x18, 12);
		data(f, 50);
		break;
	case 2:
		eth(f, NULL, 0, 0x86dd);
		ip6(f, 0);
		ext(f, 44, 1);
		frag6(f, 60, 0, 1, 3);
		ext(f, 6, 0);
		tcp(f, 1, 2, 0x18, 0);
		data(f, 40);
		break;
	case 3:
		eth(f, NULL, 0, 0x86dd);
		ip6(f, 58);
		icmp(f, 1, 4);
		data(f, 48);
		break;
	case 4:
		eth(f, NULL, 0, 0x86dd);
		ip6(f, 51);
		ah(f, 6, 4);
		tcp(f, 179, 40000, 0x18, 0);
		data(f, 19);
		break;
	case 6:
		eth(f, NULL, 0, 0x8847);
		mpls(f, 1000, 0);
		mpls(f, 2000, 1);
		ip4(f, 6, 4, 0, 9);
		tcp(f, 22, 50000, 0x18, 0);
		data(f, 30);
		break;
	case 7:
		eth(f, two, 2, 0x8848);
		mpls(f, 77, 1);
		ip6(f, 17);
		udp(f, 9, 10, 8 + 30);
		data(f, 30);
		break;
	case 8:
		eth(f, NULL, 0, 0x8864);
		pppoe(f, 3, 0x0021);
		ip4(f, 1, 0, 0, 1);
		icmp(f, 8, 0);
		data(f, 20);
		break;
	case 9:
		eth(f, two, 1, 0x8864);
		pppoe(f, 4, 0x0057);
		ip6(f, 6);
		tcp(f, 443, 50001, 0x10, 0);
		data(f, 3);
		break;
	case 10:
		/* PPP protocol field compressed (RFC 1661 6.5): one byte, 0x21 */
		eth(f, NULL, 0, 0x8864);
		pppoe(f, 5, 0x0021);
		f->n -= 2;
		put8(f, 0x21);
		ip4(f, 17, 0, 0, 1);
		udp(f, 67, 68, 8 + 12);
		data(f, 12);
		break;
	case 11:
		eth(f, NULL, 0, 0x0800);
		ip4(f, 17, 0, 0, 1);
		tudp(f, 50000, 4789);
		vxlan(f, 0x08, 0x10203);
		ieth(f, 2, two, 1, 0x0800);
		inner4(f);
		break;
	case 12:
		eth(f, two, 2, 0x86dd);
		ip6(f, 47);
		gre(f, GRE_C | GRE_K, 0x86dd, 5);
		inner6(f);
		break;
	case 13: {
		static const uint8_t x[2] = {0x85, 0x40};
		eth(f, NULL, 0, 0x0800);
		ip4(f, 17, 0, 0, 1);
		tudp(f, 2152, 2152);
		gtpu(f, 0x34, 255, 0xfeed, x, 2);
		inner4(f);
		break;
	}
	case 14:
		eth(f, NULL, 0, 0x8847);
		mpls(f, 900, 1);
		put32(f, 0);
		ieth(f, 2, NULL, 0, 0x0800);
		inner4(f);
		break;
	case 15:
		eth(f, NULL, 0, 0x86dd);
		ip6(f, 17);
		tudp(f, 50000, 6081);
		geneve(f, 8, 0x86dd, 77);
		inner6(f);
		break;
	case 16:
		eth(f, NULL, 0, 0x0800);
		ip4(f, 47, 0, 0, 1);
		gre(f, GRE_S, 0x22eb, 0);
		erspan3(f, 0x99, 1, 0);
		ieth(f, 2, NULL, 0, 0x86dd);
		inner6(f);
		break;
	case 17:
		eth(f, NULL, 0, 0x0800);
		ip4(f, 41, 0, 0, 1);
		inner6(f);
		break;
	case 18:
		eth(f, NULL, 0, 0x0800);
		ip4(f, 47, 0, 0, 1);
		gre(f, GRE_S, 0x88be, 0);
		erspan2(f, 0x31);
		ieth(f, 2, NULL, 0, 0x0800);
		inner4(f);
		break;
	case 19:
		eth(f, NULL, 0, 0x86dd);
		ip6(f, 47);
		gre(f, GRE_K, 0x6558, 0x5555);
		ieth(f, 2, two, 1, 0x0800);
		inner4(f);
		break;
	case 20:
		eth(f, NULL, 0, 0x86dd);
		ip6(f, 4);
		inner4(f);
		break;
	default:
		eth(f, two, 1, 0x86dd);
		ip6(f, 135);
		mh(f, 17, 1);
		udp(f, 434, 434, 8 + 12);
		data(f, 12);
		break;
	}
	done(f);
}
#define NGOOD 21 /* frames build_good() makes (11 and on: tunnels) */

static void test_truncation(void)
{
	struct fb f;
	struct secho_dissect d;

	t_begin("dissect: good frames cut at every offset (whole frames and snapped captures)");
	for (unsigned w = 0; w < NGOOD; w++) {
		build_good(w, &f);
		struct secho_dissect full;
		T_CHECK(dis(f.b, f.n, f.n, &full) == R(OK) && (full.flags & SECHO_DISSECT_F_L4),
		        "frame %u whole", w);
		size_t hdr_end = full.l4_off + (full.proto == 6 ? full.tcp_doff : 8);
		for (size_t cut = 0; cut < f.n; cut++) {
			/* A whole frame that short: the IP length is past its end. */
			enum secho_dissect_reason r = dis(f.b, cut, cut, &d);
			T_CHECK(r != R(OK), "frame %u cut %zu accepted", w, cut);
			if (cut >= full.l3_off + (full.ip_version == 4 ? 20u : 40u))
				T_CHECK(r == R(IP_TRUNC) || r == R(IP4_OPT_SHORT),
				        "frame %u cut %zu: %s", w, cut,
				        secho_dissect_reason_name(r));
			/* A snapped capture: fine once the transport header is in memory (TCP:
			 * its fixed part), with everything equal to the whole frame's. */
			r = dis(f.b, cut, f.n, &d);
			size_t need = full.l4_off + (full.proto == 6 ? 20 : 8);
			if (cut >= need) {
				T_CHECK(r == R(OK) && (d.flags & SECHO_DISSECT_F_SNAPPED) &&
				                d.sport == full.sport && d.dport == full.dport &&
				                d.icmp_type == full.icmp_type &&
				                d.tcp_flags == full.tcp_flags &&
				                d.ip_len == full.ip_len && d.l4_len == full.l4_len,
				        "frame %u snapped at %zu: %s", w, cut,
				        secho_dissect_reason_name(r));
			} else {
				T_CHECK(r != R(OK) && r != R(IP_TRUNC),
				        "frame %u snapped at %zu: %s", w, cut,
				        secho_dissect_reason_name(r));
			}
		}
		(void)hdr_end;
	}
	t_end();
}

/* ---- random mutations against the contract's invariants ---- */

static void test_random(void)
{
	struct fb f;
	struct secho_dissect d;
	unsigned long ok = 0, n = 0;
	unsigned seen[SECHO_DISSECT_REASON_COUNT] = {0};
	const char *q = getenv("SECHO_TEST_QUICK");
	unsigned iters = q && *q == '1' ? 20000 : 200000;

	t_begin("dissect: %u mutated frames keep the contract's invariants", iters);
	for (unsigned it = 0; it < iters; it++) {
		unsigned w = (unsigned)t_randrange(0, 5);
		build_good(w < 4 ? w : (unsigned)t_randrange(11, NGOOD - 1), &f);
		size_t len = f.n;
		unsigned m = (unsigned)t_randrange(1, 4);
		for (unsigned j = 0; j < m; j++) {
			size_t pos = t_randrange(0, len > 80 ? 80 : len - 1);
			switch (t_randrange(0, 2)) {
			case 0:
				f.b[pos] ^= (uint8_t)(1u << t_randrange(0, 7));
				break;
			case 1:
				f.b[pos] = (uint8_t)t_rand64();
				break;
			default:
				len = t_randrange(0, len);
				break;
			}
			if (!len)
				break;
		}
		size_t wire = len + (t_randrange(0, 3) == 0 ? t_randrange(0, 200) : 0);
		enum secho_dissect_reason r = dis(f.b, len, wire, &d);
		n++;
		if ((unsigned)r >= SECHO_DISSECT_REASON_COUNT) {
			T_CHECK(0, "reason %d out of range", r);
			continue;
		}
		seen[r]++;
		if (r != R(OK))
			continue;
		ok++;
		if (d.ip_version == 0)
			continue;
		int good = d.ip_version == 4 || d.ip_version == 6;
		good &= d.l3_off + d.ip_len <= wire;
		good &= d.addr_off + (d.ip_version == 4 ? 8u : 32u) <= len;
		good &= d.l4_off >= d.l3_off + (d.ip_version == 4 ? 20u : 40u);
		good &= (size_t)d.l4_off + d.l4_len == (size_t)d.l3_off + d.ip_len;
		if (d.flags & SECHO_DISSECT_F_L4) {
			size_t hl = d.proto == 6 ? 20 : 8;
			good &= d.l4_off + hl <= len && hl <= d.l4_len &&
			        d.frag != SECHO_FRAG_LATER;
		} else {
			good &= d.sport == 0 && d.dport == 0 && d.tcp_flags == 0 &&
			        d.icmp_type == 0;
		}
		good &= !!(d.flags & SECHO_DISSECT_F_SNAPPED) == (d.l3_off + d.ip_len > len);
		T_CHECK(good, "iteration %u: invariants (v%u off %u/%u len %u/%u)", it,
		        d.ip_version, d.l3_off, d.l4_off, d.ip_len, d.l4_len);
	}
	T_CHECK(ok > n / 10, "%lu of %lu described", ok, n);
	t_end();
}

static int write_one(const char *dir, const char *name, const uint8_t *p, size_t n)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *fp = fopen(path, "wb");
	if (!fp || fwrite(p, 1, n, fp) != n) {
		perror(path);
		if (fp)
			fclose(fp);
		return -1;
	}
	return fclose(fp) ? -1 : 0;
}

/* The good frames of build_good() and one frame per bad case. */
static int write_seeds(const char *dir)
{
	static struct bad_case c;
	struct fb f;
	char name[64];
	int rc = 0;
	for (unsigned w = 0; w < NGOOD; w++) {
		build_good(w, &f);
		snprintf(name, sizeof(name), "dis-good-%u", w);
		rc |= write_one(dir, name, f.b, f.n);
	}
	for (unsigned i = 0; bad_case(i, &c) == 0; i++) {
		snprintf(name, sizeof(name), "dis-bad-%02u", i);
		rc |= write_one(dir, name, c.f.b, c.caplen ? c.caplen : c.f.n);
	}
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--write-seeds"))
		return write_seeds(argv[2]);
	if (argc != 1) {
		fprintf(stderr, "usage: test_dissect [--write-seeds DIR]\n");
		return 2;
	}
	t_seed_init("test_dissect");
	test_ip4();
	test_vlan();
	test_ip6();
	test_encap();
	test_tunnels();
	test_reasons();
	test_truncation();
	test_random();
	return t_exit();
}
