/*
 * tests/unit/test_wire.c - request parsing, response rebuild, checksums, ARP, the secure
 * header, the malformed-frame corpus and the worked example of docs/PROTOCOL.md.
 *
 * Checksums are checked against a deliberately naive reference (sum of big-endian 16-bit
 * words, folded at the end); GCM against OpenSSL.
 *
 *   test_wire                     run the tests
 *   test_wire --write-pcap FILE   write the malformed corpus to a pcap file for live tests
 *                                 (each frame's expected verdict is corpus_case()'s), exit
 *   test_wire --write-seeds DIR   write the fuzzer's seed frames (tests/fuzz/corpus), exit
 */
#include "harness.h"

#include <secho/wire.h>

#include <arpa/inet.h>
#include <openssl/evp.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const uint8_t EP_MAC[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x02};
static const uint8_t HOST_MAC[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
#define EP_IP   "192.0.2.2"
#define HOST_IP "192.0.2.1"

static int quick(void)
{
	const char *q = getenv("SECHO_TEST_QUICK");
	return q && *q == '1';
}

static void cfg_init(struct secho_wire_cfg *cfg)
{
	secho_wire_cfg_defaults(cfg);
	memcpy(cfg->mac, EP_MAC, 6);
	inet_pton(AF_INET, EP_IP, &cfg->ip);
	inet_pton(AF_INET, "255.255.255.0", &cfg->netmask);
}

/* ---- naive reference checksums ---- */

static uint16_t ref_sum(const uint8_t *p, size_t n, uint32_t start)
{
	uint64_t s = start;
	for (size_t i = 0; i < n; i += 2) {
		uint16_t w = (uint16_t)(p[i] << 8);
		if (i + 1 < n)
			w |= p[i + 1];
		s += w;
	}
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* 1 if the 20-byte header at ip sums (with its checksum) to 0xffff. */
static int ref_ip_ok(const uint8_t *ip)
{
	return ref_sum(ip, 20, 0) == 0xffff;
}

static uint16_t ref_udp_sum(const uint8_t *ip, const uint8_t *udp, size_t ulen)
{
	uint8_t ph[12];
	memcpy(ph, ip + 12, 8);
	ph[8] = 0;
	ph[9] = 17;
	ph[10] = (uint8_t)(ulen >> 8);
	ph[11] = (uint8_t)ulen;
	return ref_sum(udp, ulen, ref_sum(ph, 12, 0));
}

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* ---- a request builder with knobs for every way to break a frame ---- */

struct req_spec {
	const uint8_t *dmac, *smac;
	const char *saddr, *daddr;
	uint16_t sport, dport;
	uint16_t ethertype;
	size_t plen;
	uint8_t payload_byte; /* payload[i] = payload_byte + i */
	int no_udp_csum;      /* leave the UDP checksum 0 */
	size_t pad_to;        /* append zero padding up to this frame length */
};

static void spec_default(struct req_spec *s, size_t plen, uint16_t dport)
{
	memset(s, 0, sizeof(*s));
	s->dmac = EP_MAC;
	s->smac = HOST_MAC;
	s->saddr = HOST_IP;
	s->daddr = EP_IP;
	s->sport = 40000;
	s->dport = dport;
	s->ethertype = 0x0800;
	s->plen = plen;
	s->payload_byte = 0x41;
}

static void fix_ip_csum(uint8_t *f)
{
	uint8_t *ip = f + 14;
	wr16(ip + 10, 0);
	wr16(ip + 10, (uint16_t)~ref_sum(ip, 20, 0));
}

static void fix_udp_csum(uint8_t *f)
{
	uint8_t *ip = f + 14, *udp = f + 34;
	size_t ulen = rd16(udp + 4);
	wr16(udp + 6, 0);
	uint16_t c = (uint16_t)~ref_udp_sum(ip, udp, ulen);
	wr16(udp + 6, c ? c : 0xffff);
}

/* Writes a valid (per the spec) frame into f; returns its length. */
static size_t build_req(const struct req_spec *s, uint8_t *f)
{
	memcpy(f, s->dmac, 6);
	memcpy(f + 6, s->smac, 6);
	wr16(f + 12, s->ethertype);
	uint8_t *ip = f + 14, *udp = f + 34;
	memset(ip, 0, 28);
	ip[0] = 0x45;
	wr16(ip + 2, (uint16_t)(28 + s->plen));
	wr16(ip + 4, 0x1234);
	wr16(ip + 6, 0x4000);
	ip[8] = 64;
	ip[9] = 17;
	inet_pton(AF_INET, s->saddr, ip + 12);
	inet_pton(AF_INET, s->daddr, ip + 16);
	wr16(udp, s->sport);
	wr16(udp + 2, s->dport);
	wr16(udp + 4, (uint16_t)(8 + s->plen));
	for (size_t i = 0; i < s->plen; i++)
		f[42 + i] = (uint8_t)(s->payload_byte + i);
	fix_ip_csum(f);
	if (!s->no_udp_csum)
		fix_udp_csum(f);
	size_t len = 42 + s->plen;
	if (s->pad_to > len) {
		memset(f + len, 0, s->pad_to - len);
		len = s->pad_to;
	}
	return len;
}

/* ---- the malformed corpus ---- */

struct corpus_case {
	char name[64];
	uint8_t frame[1600];
	size_t len;
	enum secho_wire_verdict want;
};

/*
 * Fill c with malformed case number i (0-based). Returns 0 while there are cases, -1 past
 * the end. Each case starts from a valid 32-byte request to port 4000 and breaks exactly
 * one rule (fixing up checksums so only that rule is broken).
 */
static int corpus_case(unsigned i, struct corpus_case *c)
{
	struct req_spec s;
	spec_default(&s, 32, 4000);
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	static const uint8_t mcast[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01};
	static const uint8_t zero[6] = {0};
	static const uint8_t other[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x99};
	uint8_t *f = c->frame;
	uint8_t *ip = f + 14, *udp = f + 34;
	unsigned k = 0;
#define CASE(nm, verdict)                                                                          \
	if (i == k++ && (snprintf(c->name, sizeof(c->name), "%s", nm), c->want = verdict, 1))

	CASE("empty frame", SECHO_WIRE_ETH_SHORT)
	{
		c->len = 0;
		return 0;
	}
	CASE("vlan 802.1Q", SECHO_WIRE_VLAN)
	{
		s.ethertype = 0x8100;
		c->len = build_req(&s, f);
		return 0;
	}
	CASE("vlan 802.1ad", SECHO_WIRE_VLAN)
	{
		s.ethertype = 0x88a8;
		c->len = build_req(&s, f);
		return 0;
	}
	CASE("arp", SECHO_WIRE_ARP)
	{
		s.ethertype = 0x0806;
		c->len = build_req(&s, f);
		return 0;
	}
	CASE("ipv6 ethertype", SECHO_WIRE_NOT_IPV4)
	{
		s.ethertype = 0x86dd;
		c->len = build_req(&s, f);
		return 0;
	}
	CASE("802.3 length field", SECHO_WIRE_NOT_IPV4)
	{
		s.ethertype = 0x0040;
		c->len = build_req(&s, f);
		return 0;
	}
	CASE("dst mac other", SECHO_WIRE_DST_MAC)
	{
		s.dmac = other;
		c->len = build_req(&s, f);
		return 0;
	}
	CASE("dst mac broadcast", SECHO_WIRE_DST_MAC)
	{
		s.dmac = bcast;
		c->len = build_req(&s, f);
		return 0;
	}
	CASE("dst mac multicast", SECHO_WIRE_DST_MAC)
	{
		s.dmac = mcast;
		c->len = build_req(&s, f);
		return 0;
	}
	CASE("src mac broadcast", SECHO_WIRE_SRC_MAC)
	{
		s.smac = bcast;
		c->len = build_req(&s, f);
		return 0;
	}
	CASE("src mac multicast", SECHO_WIRE_SRC_MAC)
	{
		s.smac = mcast;
		c->len = build_req(&s, f);
		return 0;
	}
	CASE("src mac zero", SECHO_WIRE_SRC_MAC)
	{
		s.smac = zero;
		c->len = build_req(&s, f);
		return 0;
	}
	CASE("ethernet only", SECHO_WIRE_IP_SHORT)
	{
		c->len = build_req(&s, f);
		c->len = 14;
		return 0;
	}
	CASE("ip version 6", SECHO_WIRE_IP_VERSION)
	{
		c->len = build_req(&s, f);
		ip[0] = 0x65;
		fix_ip_csum(f);
		return 0;
	}
	CASE("ip version 0", SECHO_WIRE_IP_VERSION)
	{
		c->len = build_req(&s, f);
		ip[0] = 0x05;
		fix_ip_csum(f);
		return 0;
	}
	CASE("ip options ihl 6", SECHO_WIRE_IP_IHL)
	{
		c->len = build_req(&s, f);
		ip[0] = 0x46;
		fix_ip_csum(f);
		return 0;
	}
	CASE("ip ihl 15", SECHO_WIRE_IP_IHL)
	{
		c->len = build_req(&s, f);
		ip[0] = 0x4f;
		fix_ip_csum(f);
		return 0;
	}
	CASE("ip ihl 4", SECHO_WIRE_IP_IHL)
	{
		c->len = build_req(&s, f);
		ip[0] = 0x44;
		fix_ip_csum(f);
		return 0;
	}
	CASE("ip total length longer than frame", SECHO_WIRE_IP_TOTLEN)
	{
		c->len = build_req(&s, f);
		wr16(ip + 2, (uint16_t)(rd16(ip + 2) + 1));
		fix_ip_csum(f);
		return 0;
	}
	CASE("ip total length 65535", SECHO_WIRE_IP_TOTLEN)
	{
		c->len = build_req(&s, f);
		wr16(ip + 2, 0xffff);
		fix_ip_csum(f);
		return 0;
	}
	CASE("ip total length 19", SECHO_WIRE_IP_TOTLEN)
	{
		c->len = build_req(&s, f);
		wr16(ip + 2, 19);
		fix_ip_csum(f);
		return 0;
	}
	CASE("ip total length 0", SECHO_WIRE_IP_TOTLEN)
	{
		c->len = build_req(&s, f);
		wr16(ip + 2, 0);
		fix_ip_csum(f);
		return 0;
	}
	CASE("ip header checksum off by one", SECHO_WIRE_IP_CSUM)
	{
		c->len = build_req(&s, f);
		wr16(ip + 10, (uint16_t)(rd16(ip + 10) + 1));
		return 0;
	}
	CASE("ip header checksum zero", SECHO_WIRE_IP_CSUM)
	{
		c->len = build_req(&s, f);
		wr16(ip + 10, 0);
		return 0;
	}
	CASE("ip header bit flip in ttl", SECHO_WIRE_IP_CSUM)
	{
		c->len = build_req(&s, f);
		ip[8] ^= 0x10;
		return 0;
	}
	CASE("fragment MF", SECHO_WIRE_IP_FRAGMENT)
	{
		c->len = build_req(&s, f);
		wr16(ip + 6, 0x2000);
		fix_ip_csum(f);
		return 0;
	}
	CASE("fragment offset 1", SECHO_WIRE_IP_FRAGMENT)
	{
		c->len = build_req(&s, f);
		wr16(ip + 6, 0x0001);
		fix_ip_csum(f);
		return 0;
	}
	CASE("fragment offset max with DF", SECHO_WIRE_IP_FRAGMENT)
	{
		c->len = build_req(&s, f);
		wr16(ip + 6, 0x5fff);
		fix_ip_csum(f);
		return 0;
	}
	CASE("protocol tcp", SECHO_WIRE_IP_PROTO)
	{
		c->len = build_req(&s, f);
		ip[9] = 6;
		fix_ip_csum(f);
		return 0;
	}
	CASE("protocol icmp", SECHO_WIRE_IP_PROTO)
	{
		c->len = build_req(&s, f);
		ip[9] = 1;
		fix_ip_csum(f);
		return 0;
	}
	CASE("dst ip other host", SECHO_WIRE_DST_IP)
	{
		s.daddr = "192.0.2.3";
		c->len = build_req(&s, f);
		return 0;
	}
	CASE("dst ip broadcast", SECHO_WIRE_DST_IP)
	{
		s.daddr = "255.255.255.255";
		c->len = build_req(&s, f);
		return 0;
	}
	CASE("src ip zero", SECHO_WIRE_SRC_IP)
	{
		s.saddr = "0.0.0.0";
		c->len = build_req(&s, f);
		return 0;
	}
	CASE("src ip limited broadcast", SECHO_WIRE_SRC_IP)
	{
		s.saddr = "255.255.255.255";
		c->len = build_req(&s, f);
		return 0;
	}
	CASE("src ip directed broadcast", SECHO_WIRE_SRC_IP)
	{
		s.saddr = "192.0.2.255";
		c->len = build_req(&s, f);
		return 0;
	}
	CASE("src ip multicast", SECHO_WIRE_SRC_IP)
	{
		s.saddr = "224.0.0.1";
		c->len = build_req(&s, f);
		return 0;
	}
	CASE("src ip multicast 239", SECHO_WIRE_SRC_IP)
	{
		s.saddr = "239.255.255.250";
		c->len = build_req(&s, f);
		return 0;
	}
	CASE("src ip reserved 240", SECHO_WIRE_SRC_IP)
	{
		s.saddr = "240.0.0.1";
		c->len = build_req(&s, f);
		return 0;
	}
	CASE("ip payload shorter than udp header", SECHO_WIRE_UDP_SHORT)
	{
		c->len = build_req(&s, f);
		wr16(ip + 2, 27);
		fix_ip_csum(f);
		return 0;
	}
	CASE("ip packet header only", SECHO_WIRE_UDP_SHORT)
	{
		c->len = build_req(&s, f);
		wr16(ip + 2, 20);
		fix_ip_csum(f);
		c->len = 34;
		return 0;
	}
	CASE("udp length zero", SECHO_WIRE_UDP_LEN_ZERO)
	{
		c->len = build_req(&s, f);
		wr16(udp + 4, 0);
		fix_udp_csum(f);
		return 0;
	}
	CASE("udp length longer than ip payload", SECHO_WIRE_UDP_LEN)
	{
		c->len = build_req(&s, f);
		wr16(udp + 4, (uint16_t)(rd16(udp + 4) + 1));
		return 0;
	}
	CASE("udp length shorter than ip payload", SECHO_WIRE_UDP_LEN)
	{
		c->len = build_req(&s, f);
		wr16(udp + 4, (uint16_t)(rd16(udp + 4) - 1));
		fix_udp_csum(f);
		return 0;
	}
	CASE("udp length 7", SECHO_WIRE_UDP_LEN)
	{
		c->len = build_req(&s, f);
		wr16(udp + 4, 7);
		return 0;
	}
	CASE("udp length 65535", SECHO_WIRE_UDP_LEN)
	{
		c->len = build_req(&s, f);
		wr16(udp + 4, 0xffff);
		return 0;
	}
	CASE("udp checksum off by one", SECHO_WIRE_UDP_CSUM)
	{
		c->len = build_req(&s, f);
		wr16(udp + 6, (uint16_t)(rd16(udp + 6) + 1));
		return 0;
	}
	CASE("udp payload bit flip", SECHO_WIRE_UDP_CSUM)
	{
		c->len = build_req(&s, f);
		f[50] ^= 0x01;
		return 0;
	}
	CASE("udp source port changed", SECHO_WIRE_UDP_CSUM)
	{
		c->len = build_req(&s, f);
		wr16(udp, 40001);
		return 0;
	}
	CASE("dst port 3999", SECHO_WIRE_DST_PORT)
	{
		s.dport = 3999;
		c->len = build_req(&s, f);
		return 0;
	}
	CASE("dst port 4003", SECHO_WIRE_DST_PORT)
	{
		s.dport = 4003;
		c->len = build_req(&s, f);
		return 0;
	}
	CASE("dst port 0", SECHO_WIRE_DST_PORT)
	{
		s.dport = 0;
		c->len = build_req(&s, f);
		return 0;
	}
	CASE("payload 1441 bytes", SECHO_WIRE_PAYLOAD_LONG)
	{
		s.plen = 1441;
		c->len = build_req(&s, f);
		return 0;
	}
	CASE("payload 1472 bytes (full 1500 packet)", SECHO_WIRE_PAYLOAD_LONG)
	{
		s.plen = 1472;
		s.dport = 4001;
		c->len = build_req(&s, f);
		return 0;
	}
	CASE("payload 1441 to counters", SECHO_WIRE_PAYLOAD_LONG)
	{
		s.plen = 1441;
		s.dport = 4002;
		s.no_udp_csum = 1;
		c->len = build_req(&s, f);
		return 0;
	}
#undef CASE
	return -1;
}

/* ---- tests ---- */

static void test_csum(void)
{
	t_begin("csum: fast sum equals the naive reference (lengths, offsets, chaining)");
	static uint8_t buf[4096];
	t_randbytes(buf, sizeof(buf));
	for (size_t n = 0; n <= 2100; n++) {
		size_t off = t_randrange(0, 7);
		uint16_t ref = ref_sum(buf + off, n, 0);
		uint32_t s = secho_csum_add(0, buf + off, n);
		uint16_t folded = (uint16_t)~secho_csum_fold(s);
		/* 0 and 0xffff are the same one's-complement value */
		T_CHECK(folded == ref || (folded == 0xffff && ref == 0) ||
		                (folded == 0 && ref == 0xffff),
		        "n=%zu off=%zu fast %04x ref %04x", n, off, folded, ref);
		/* chained: an even first piece, the rest after */
		size_t cut = t_randrange(0, n) & ~(size_t)1;
		uint32_t c =
		        secho_csum_add(secho_csum_add(0, buf + off, cut), buf + off + cut, n - cut);
		T_CHECK(secho_csum_fold(c) == secho_csum_fold(s), "chain n=%zu cut=%zu", n, cut);
	}
	/* all-ones data: sums that carry many times */
	memset(buf, 0xff, sizeof(buf));
	T_CHECK(secho_csum_fold(secho_csum_add(0, buf, sizeof(buf))) == 0, "all ones");
	t_end();

	t_begin("csum: RFC 1624 incremental update equals recomputation");
	for (int i = 0; i < 2000; i++) {
		uint8_t h[20];
		t_randbytes(h, sizeof(h));
		wr16(h + 10, secho_ip4_csum(h));
		size_t field = t_randrange(0, 9) * 2;
		if (field == 10)
			field = 8;
		uint16_t old_v = rd16(h + field), new_v = (uint16_t)t_rand64();
		uint16_t upd = secho_csum_update16(rd16(h + 10), old_v, new_v);
		wr16(h + field, new_v);
		uint16_t full = secho_ip4_csum(h);
		/* equal as one's-complement values */
		T_CHECK(upd == full || (upd == 0xffff && full == 0) || (upd == 0 && full == 0xffff),
		        "field %zu upd %04x full %04x", field, upd, full);
		wr16(h + 10, upd);
		T_CHECK(ref_ip_ok(h), "updated header verifies");
	}
	t_end();
}

static void test_good_frames(const struct secho_wire_cfg *cfg)
{
	static const uint16_t ports[3] = {4000, 4001, 4002};
	static const enum secho_port_class cls[3] = {SECHO_PORT_STREAM, SECHO_PORT_OFFLOAD,
	                                             SECHO_PORT_COUNTERS};
	static uint8_t f[2048];
	t_begin("parse: good frames, payload 0..1440, each port, with/without UDP checksum");
	size_t step = quick() ? 7 : 1;
	for (int p = 0; p < 3; p++) {
		for (size_t n = 0; n <= 1440; n += (n < 64 || n > 1400) ? 1 : step) {
			struct req_spec s;
			spec_default(&s, n, ports[p]);
			s.no_udp_csum = (n % 3 == 0);
			s.sport = (uint16_t)(1024 + n);
			size_t len = build_req(&s, f);
			struct secho_wire_req r;
			enum secho_wire_verdict v = secho_wire_parse(cfg, f, len, &r);
			if (!T_CHECK(v == SECHO_WIRE_OK, "port %u len %zu: %s", ports[p], n,
			             secho_wire_verdict_name(v)))
				continue;
			T_CHECK(r.cls == cls[p], "class");
			T_CHECK(r.payload_off == 42 && r.payload_len == n, "payload %u/%u",
			        r.payload_off, r.payload_len);
			T_CHECK(r.src_port == 1024 + n && r.dst_port == ports[p], "ports");
			T_CHECK(memcmp(r.src_mac, HOST_MAC, 6) == 0, "src mac");
			T_CHECK(r.src_ip == htonl(0xc0000201), "src ip");
			T_CHECK(r.frame_len == 42 + n, "frame len");
		}
	}
	t_end();

	t_begin("parse: Ethernet padding after the packet is accepted and ignored");
	for (size_t n = 0; n <= 18; n++) {
		struct req_spec s;
		spec_default(&s, n, 4000);
		s.pad_to = 60;
		size_t len = build_req(&s, f);
		struct secho_wire_req r;
		T_CHECK(len == 60 && secho_wire_parse(cfg, f, len, &r) == SECHO_WIRE_OK &&
		                r.payload_len == n && r.frame_len == 42 + n,
		        "padded len %zu", n);
	}
	/* padding with a length that makes the checksummed range unaligned in memory */
	struct req_spec s;
	spec_default(&s, 33, 4001);
	s.pad_to = 200;
	size_t len = build_req(&s, f);
	struct secho_wire_req r;
	T_CHECK(secho_wire_parse(cfg, f, len, &r) == SECHO_WIRE_OK && r.payload_len == 33,
	        "long padding");
	t_end();

	t_begin("parse: configurable ports and MTU");
	struct secho_wire_cfg c2 = *cfg;
	c2.port_stream = 5000;
	c2.port_offload = 5001;
	c2.port_counters = 5002;
	c2.mtu = 1000;
	for (int p = 0; p < 3; p++) {
		spec_default(&s, 940, (uint16_t)(5000 + p));
		len = build_req(&s, f);
		T_CHECK(secho_wire_parse(&c2, f, len, &r) == SECHO_WIRE_OK && r.cls == cls[p],
		        "port %d", 5000 + p);
		spec_default(&s, 941, (uint16_t)(5000 + p));
		len = build_req(&s, f);
		T_CHECK(secho_wire_parse(&c2, f, len, &r) == SECHO_WIRE_PAYLOAD_LONG, "941 > mtu");
		spec_default(&s, 10, ports[p]);
		len = build_req(&s, f);
		T_CHECK(secho_wire_parse(&c2, f, len, &r) == SECHO_WIRE_DST_PORT, "old port");
	}
	T_CHECK(secho_wire_cfg_check(cfg) == 0, "cfg ok");
	c2.port_offload = 5000;
	T_CHECK(secho_wire_cfg_check(&c2) != 0, "duplicate ports refused");
	c2 = *cfg;
	c2.mac[0] = 0x01;
	T_CHECK(secho_wire_cfg_check(&c2) != 0, "multicast MAC refused");
	c2 = *cfg;
	c2.mtu = 100;
	T_CHECK(secho_wire_cfg_check(&c2) != 0, "tiny MTU refused");
	t_end();
}

static void test_malformed(const struct secho_wire_cfg *cfg)
{
	static struct corpus_case c;
	static uint8_t copy[1600];
	t_begin("parse: malformed corpus, each its own verdict");
	unsigned covered[SECHO_WIRE_VERDICT_COUNT] = {0};
	unsigned i;
	for (i = 0; corpus_case(i, &c) == 0; i++) {
		struct secho_wire_req r;
		/* parse from an exact-size heap copy so ASan sees any overread */
		uint8_t *h = malloc(c.len ? c.len : 1);
		memcpy(h, c.frame, c.len);
		enum secho_wire_verdict v = secho_wire_parse(cfg, h, c.len, &r);
		free(h);
		T_CHECK(v == c.want, "%s: got %s want %s", c.name, secho_wire_verdict_name(v),
		        secho_wire_verdict_name(c.want));
		covered[c.want]++;
	}
	T_CHECK(i >= 50, "corpus has %u cases", i);
	for (unsigned v = 1; v < SECHO_WIRE_VERDICT_COUNT; v++)
		T_CHECK(covered[v] > 0, "no case for verdict %s", secho_wire_verdict_name(v));
	t_end();

	t_begin("parse: a good frame truncated at every offset");
	static const size_t sizes[] = {0, 1, 17, 18, 100, 1440};
	for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		struct req_spec s;
		spec_default(&s, sizes[si], 4000);
		size_t len = build_req(&s, copy);
		for (size_t cut = 0; cut < len; cut++) {
			uint8_t *h = malloc(cut ? cut : 1);
			memcpy(h, copy, cut);
			struct secho_wire_req r;
			enum secho_wire_verdict v = secho_wire_parse(cfg, h, cut, &r);
			free(h);
			enum secho_wire_verdict want = cut < 14   ? SECHO_WIRE_ETH_SHORT
			                               : cut < 34 ? SECHO_WIRE_IP_SHORT
			                                          : SECHO_WIRE_IP_TOTLEN;
			T_CHECK(v == want, "plen %zu cut %zu: %s", sizes[si], cut,
			        secho_wire_verdict_name(v));
		}
	}
	t_end();

	t_begin("parse: verdict names are unique and non-empty");
	for (unsigned a = 0; a < SECHO_WIRE_VERDICT_COUNT; a++) {
		const char *na = secho_wire_verdict_name((enum secho_wire_verdict)a);
		T_CHECK(na && *na && strcmp(na, "unknown") != 0, "name %u", a);
		T_CHECK(*secho_wire_verdict_text((enum secho_wire_verdict)a), "text %u", a);
		for (unsigned b = a + 1; b < SECHO_WIRE_VERDICT_COUNT; b++)
			T_CHECK(strcmp(na, secho_wire_verdict_name((enum secho_wire_verdict)b)),
			        "dup %s", na);
	}
	T_CHECK(!strcmp(secho_wire_verdict_name(SECHO_WIRE_VERDICT_COUNT), "unknown"), "oob");
	t_end();
}

/* AES-256-GCM with OpenSSL: encrypt pt into ct, tag into tag. Returns 1 on success. */
static int ossl_gcm(int enc, const uint8_t key[32], const uint8_t iv[12], const uint8_t *aad,
                    size_t aadlen, const uint8_t *in, size_t n, uint8_t *out, uint8_t tag[16])
{
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	int ok = 1, l;
	ok &= EVP_CipherInit_ex(x, EVP_aes_256_gcm(), NULL, key, iv, enc);
	ok &= EVP_CipherUpdate(x, NULL, &l, aad, (int)aadlen);
	if (n)
		ok &= EVP_CipherUpdate(x, out, &l, in, (int)n);
	if (!enc)
		ok &= EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_SET_TAG, 16, tag);
	ok &= EVP_CipherFinal_ex(x, out + n, &l) > 0;
	if (enc)
		ok &= EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_GET_TAG, 16, tag);
	EVP_CIPHER_CTX_free(x);
	return ok == 1;
}

/* Check every field of a response against its request; decrypt and compare plaintext. */
static void check_response(const struct secho_wire_cfg *cfg, const uint8_t *rq, size_t n,
                           uint16_t dport, const uint8_t *rs, size_t rlen, const uint8_t key[32],
                           uint8_t flags, uint64_t seq, uint16_t ipid)
{
	T_CHECK(rlen == 58 + n + 16, "response length %zu", rlen);
	T_CHECK(memcmp(rs, HOST_MAC, 6) == 0 && memcmp(rs + 6, cfg->mac, 6) == 0, "macs");
	T_CHECK(rd16(rs + 12) == 0x0800, "ethertype");
	const uint8_t *ip = rs + 14, *udp = rs + 34, *sh = rs + 42;
	T_CHECK(ip[0] == 0x45 && ip[1] == 0, "ver/ihl/tos %02x %02x", ip[0], ip[1]);
	T_CHECK(rd16(ip + 2) == 20 + 8 + 16 + n + 16, "ip total length");
	T_CHECK(rd16(ip + 4) == ipid, "ip id");
	T_CHECK(rd16(ip + 6) == 0x4000, "DF, no fragment");
	T_CHECK(ip[8] == 64 && ip[9] == 17, "ttl/proto");
	T_CHECK(memcmp(ip + 12, rq + 30, 4) == 0 && memcmp(ip + 16, rq + 26, 4) == 0,
	        "addresses swapped");
	T_CHECK(ref_ip_ok(ip), "ip header checksum (reference)");
	T_CHECK(rd16(udp) == dport && rd16(udp + 2) == rd16(rq + 34), "ports swapped");
	T_CHECK(rd16(udp + 4) == 8 + 16 + n + 16, "udp length");
	T_CHECK(rd16(udp + 6) != 0, "udp checksum non-zero");
	T_CHECK(ref_udp_sum(ip, udp, rd16(udp + 4)) == 0xffff, "udp checksum (reference)");
	struct secho_shdr h;
	T_CHECK(secho_shdr_parse(sh, &h) == 0, "secure header parses");
	T_CHECK(h.version == 1 && h.flags == flags && h.key_id == 7 && h.seq == seq,
	        "secure header fields v%u f%02x k%u s%llu", h.version, h.flags, h.key_id,
	        (unsigned long long)h.seq);
	T_CHECK(memcmp(h.salt, "\xde\xad\xbe\xef", 4) == 0, "salt");
	uint8_t iv[12], pt[1600], tag[16];
	secho_shdr_iv(sh, iv);
	memcpy(tag, rs + 58 + n, 16);
	T_CHECK(ossl_gcm(0, key, iv, sh, 16, rs + 58, n, pt, tag), "tag verifies");
	T_CHECK(memcmp(pt, rq + 42, n) == 0, "plaintext round trip");
}

static void test_rebuild(const struct secho_wire_cfg *cfg)
{
	static uint8_t rq[2048], rs[2048], inplace[2048];
	uint8_t key[32], salt[4] = {0xde, 0xad, 0xbe, 0xef};
	t_randbytes(key, sizeof(key));
	static const uint16_t ports[3] = {4000, 4001, 4002};
	t_begin("rebuild: out of place and in place, every field, checksums, GCM round trip");
	size_t step = quick() ? 37 : 3;
	uint64_t seq = 1000;
	for (int p = 0; p < 3; p++) {
		for (size_t n = 0; n <= 1440; n += (n < 20 || n > 1420) ? 1 : step) {
			struct req_spec s;
			spec_default(&s, n, ports[p]);
			s.payload_byte = (uint8_t)t_rand64();
			size_t len = build_req(&s, rq);
			struct secho_wire_req r;
			if (!T_CHECK(secho_wire_parse(cfg, rq, len, &r) == SECHO_WIRE_OK, "parse"))
				continue;
			uint8_t flags = secho_shdr_flags_for(r.cls);
			uint8_t sh[16], iv[12];
			secho_shdr_build(sh, flags, 7, salt, ++seq);
			secho_shdr_iv(sh, iv);

			/* out of place: encrypt from the request straight into the slot */
			memset(rs, 0xa5, sizeof(rs));
			size_t rl = secho_wire_rebuild(cfg, &r, NULL, sh, (uint16_t)seq, rs,
			                               SECHO_RESP_LEN(n));
			ossl_gcm(1, key, iv, rs + 42, 16, rq + 42, n, rs + SECHO_RESP_PAYLOAD_OFF,
			         rs + SECHO_RESP_TAG_OFF(n));
			secho_wire_finalize(rs, rl);
			check_response(cfg, rq, n, ports[p], rs, rl, key, flags, seq,
			               (uint16_t)seq);
			T_CHECK(rs[rl] == 0xa5, "no write past the response");
			T_CHECK(secho_wire_rebuild(cfg, &r, NULL, sh, 1, rs, rl - 1) == 0,
			        "short buffer refused");

			/* in place: the request buffer with 32 bytes of room */
			memcpy(inplace, rq, len);
			size_t rl2 = secho_wire_rebuild(cfg, &r, inplace, sh, (uint16_t)seq,
			                                inplace, len + SECHO_RESP_OVERHEAD);
			T_CHECK(rl2 == rl, "in place length");
			T_CHECK(memcmp(inplace + 58, rq + 42, n) == 0, "plaintext moved to slot");
			ossl_gcm(1, key, iv, inplace + 42, 16, inplace + 58, n, inplace + 58,
			         inplace + 58 + n);
			secho_wire_finalize(inplace, rl2);
			T_CHECK(memcmp(inplace, rs, rl) == 0, "in place == out of place");
			/* a finalized frame re-finalizes to itself */
			secho_wire_finalize(inplace, rl2);
			T_CHECK(memcmp(inplace, rs, rl) == 0, "finalize idempotent");
		}
	}
	t_end();

	t_begin("rebuild: DSCP echoed, ECN cleared; computed UDP checksum 0 sent as 0xffff");
	struct req_spec s;
	spec_default(&s, 4, 4000);
	size_t len = build_req(&s, rq);
	rq[15] = 0xb9; /* DSCP 46, ECN 01 */
	fix_ip_csum(rq);
	struct secho_wire_req r;
	T_CHECK(secho_wire_parse(cfg, rq, len, &r) == SECHO_WIRE_OK, "parse tos");
	uint8_t sh[16];
	secho_shdr_build(sh, 0, 7, salt, 1);
	size_t rl = secho_wire_rebuild(cfg, &r, NULL, sh, 9, rs, sizeof(rs));
	T_CHECK(rs[15] == 0xb8 && ref_ip_ok(rs + 14), "tos %02x", rs[15]);
	/* Choose ciphertext bytes so the datagram's checksum computes to 0: set the tag's
	 * last word so the total sum (with checksum 0) is 0xffff. */
	memset(rs + 58, 0, 4 + 16);
	rs[34 + 6] = rs[34 + 7] = 0;
	uint16_t sum = ref_udp_sum(rs + 14, rs + 34, rl - 34);
	wr16(rs + rl - 2, (uint16_t)~sum);
	T_CHECK(ref_udp_sum(rs + 14, rs + 34, rl - 34) == 0xffff, "constructed sum");
	secho_wire_finalize(rs, rl);
	T_CHECK(rd16(rs + 40) == 0xffff, "checksum %04x", rd16(rs + 40));
	T_CHECK(ref_udp_sum(rs + 14, rs + 34, rl - 34) == 0xffff, "0xffff verifies");
	t_end();
}

static void test_shdr(void)
{
	t_begin("secure header: layout, IV, parse checks");
	uint8_t h[16], iv[12];
	const uint8_t salt[4] = {0x11, 0x22, 0x33, 0x44};
	secho_shdr_build(h, 0x03, 0xabcd, salt, 0x0102030405060708ull);
	static const uint8_t want[16] = {1,    3,    0xab, 0xcd, 0x11, 0x22, 0x33, 0x44,
	                                 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08};
	T_CHECK(memcmp(h, want, 16) == 0, "bytes");
	secho_shdr_iv(h, iv);
	T_CHECK(memcmp(iv, want + 4, 12) == 0, "iv = bytes 4..15");
	struct secho_shdr p;
	T_CHECK(secho_shdr_parse(h, &p) == 0 && p.key_id == 0xabcd && p.flags == 3 &&
	                p.seq == 0x0102030405060708ull && !memcmp(p.salt, salt, 4),
	        "parse");
	h[0] = 2;
	T_CHECK(secho_shdr_parse(h, &p) != 0, "version 2 refused");
	h[0] = 1;
	h[1] = 0x04;
	T_CHECK(secho_shdr_parse(h, &p) == 0, "instance flag (shared key) accepted");
	h[1] = 0x08;
	T_CHECK(secho_shdr_parse(h, &p) != 0, "reserved flag refused");
	uint8_t fixed[4];
	secho_shdr_fixed(salt, 0x01020304u, fixed);
	T_CHECK(fixed[0] == 0x10 && fixed[1] == 0x20 && fixed[2] == 0x30 && fixed[3] == 0x40,
	        "fixed field = salt XOR instance (big-endian)");
	secho_shdr_fixed(salt, 0, fixed);
	T_CHECK(!memcmp(fixed, salt, 4), "no instance: the salt itself");
	T_CHECK(secho_shdr_flags_for(SECHO_PORT_STREAM) == 0 &&
	                secho_shdr_flags_for(SECHO_PORT_OFFLOAD) == 1 &&
	                secho_shdr_flags_for(SECHO_PORT_COUNTERS) == 2,
	        "flags per class");
	t_end();
}

static void test_arp(const struct secho_wire_cfg *cfg)
{
	t_begin("arp: reply to a request for our IP, nothing otherwise");
	uint8_t f[64], out[64];
	memset(f, 0, sizeof(f));
	memset(f, 0xff, 6);
	memcpy(f + 6, HOST_MAC, 6);
	f[12] = 0x08;
	f[13] = 0x06;
	static const uint8_t hdr[8] = {0, 1, 8, 0, 6, 4, 0, 1};
	memcpy(f + 14, hdr, 8);
	memcpy(f + 22, HOST_MAC, 6);
	inet_pton(AF_INET, HOST_IP, f + 28);
	inet_pton(AF_INET, EP_IP, f + 38);
	struct secho_wire_req r;
	T_CHECK(secho_wire_parse(cfg, f, 60, &r) == SECHO_WIRE_ARP, "parser says ARP");
	size_t n = secho_wire_arp_reply(cfg, f, 60, out, sizeof(out));
	T_CHECK(n == 60, "reply length %zu", n);
	T_CHECK(!memcmp(out, HOST_MAC, 6) && !memcmp(out + 6, EP_MAC, 6), "eth");
	T_CHECK(rd16(out + 12) == 0x0806 && rd16(out + 20) == 2, "arp reply op");
	T_CHECK(!memcmp(out + 22, EP_MAC, 6) && !memcmp(out + 28, &cfg->ip, 4), "sender = us");
	T_CHECK(!memcmp(out + 32, HOST_MAC, 6) && !memcmp(out + 38, f + 28, 4), "target");
	/* in place */
	uint8_t g[64];
	memcpy(g, f, 64);
	T_CHECK(secho_wire_arp_reply(cfg, g, 60, g, sizeof(g)) == 60 && !memcmp(g, out, 60),
	        "in place");
	/* not for us / malformed */
	uint8_t b[64];
	memcpy(b, f, 64);
	inet_pton(AF_INET, "192.0.2.9", b + 38);
	T_CHECK(secho_wire_arp_reply(cfg, b, 60, out, sizeof(out)) == 0, "other IP");
	memcpy(b, f, 64);
	b[21] = 2;
	T_CHECK(secho_wire_arp_reply(cfg, b, 60, out, sizeof(out)) == 0, "a reply");
	memcpy(b, f, 64);
	b[22] = 0x01;
	T_CHECK(secho_wire_arp_reply(cfg, b, 60, out, sizeof(out)) == 0, "multicast sender");
	memcpy(b, f, 64);
	b[7] = 0x77;
	T_CHECK(secho_wire_arp_reply(cfg, b, 60, out, sizeof(out)) == 0, "eth src != sha");
	for (size_t cut = 0; cut < 42; cut++)
		T_CHECK(secho_wire_arp_reply(cfg, f, cut, out, sizeof(out)) == 0, "short %zu", cut);
	T_CHECK(secho_wire_arp_reply(cfg, f, 60, out, 59) == 0, "small out");
	t_end();
}

/*
 * The worked example of docs/PROTOCOL.md. Key 00 01 .. 1f, salt a1 b2 c3 d4, key id 1,
 * sequence 1, IP ID 0x0001 on the response; request "hello, secho" from 192.0.2.1:40000
 * (02:00:00:00:00:01) to 192.0.2.2:4000 (02:00:00:00:00:02), IP ID 0x1234.
 */
static const char EX_REQ[] = "020000000002020000000001080045000028123440004011a48dc0000201c000"
                             "02029c400fa000149d9d68656c6c6f2c20736563686f";
static const char EX_RESP[] = "020000000001020000000002080045000048000140004011b6a0c0000202c000"
                              "02010fa09c40003474eb01000001a1b2c3d40000000000000001374a2d06d6b2"
                              "0dff2fd33d4bb3b686c68234011353effb6263c0cd34";

static void test_example(const struct secho_wire_cfg *cfg, int print)
{
	t_begin("worked example of docs/PROTOCOL.md (checked with OpenSSL)");
	uint8_t key[32], salt[4] = {0xa1, 0xb2, 0xc3, 0xd4}, rq[128], rs[160], sh[16], iv[12];
	for (int i = 0; i < 32; i++)
		key[i] = (uint8_t)i;
	struct req_spec s;
	spec_default(&s, 12, 4000);
	size_t len = build_req(&s, rq);
	/* NOLINTNEXTLINE(bugprone-not-null-terminated-result): 12 bytes of payload */
	memcpy(rq + 42, "hello, secho", 12);
	fix_udp_csum(rq);
	struct secho_wire_req r;
	T_CHECK(secho_wire_parse(cfg, rq, len, &r) == SECHO_WIRE_OK, "request parses");
	secho_shdr_build(sh, 0, 1, salt, 1);
	secho_shdr_iv(sh, iv);
	size_t rl = secho_wire_rebuild(cfg, &r, NULL, sh, 1, rs, sizeof(rs));
	T_CHECK(ossl_gcm(1, key, iv, sh, 16, rq + 42, 12, rs + 58, rs + 70), "encrypt");
	secho_wire_finalize(rs, rl);
	if (print) {
		t_hexdump("request", rq, len);
		t_hexdump("response", rs, rl);
	}
	uint8_t want[256];
	long wl = t_unhex(EX_REQ, want, sizeof(want));
	T_CHECK(wl == (long)len && !memcmp(want, rq, len), "request bytes as documented");
	wl = t_unhex(EX_RESP, want, sizeof(want));
	T_CHECK(wl == (long)rl && !memcmp(want, rs, rl), "response bytes as documented");
	t_end();
}

static int write_pcap(const struct secho_wire_cfg *cfg, const char *path)
{
	pcap_t *pd = pcap_open_dead(DLT_EN10MB, 65535);
	if (!pd)
		return -1;
	pcap_dumper_t *d = pcap_dump_open(pd, path);
	if (!d) {
		fprintf(stderr, "pcap: %s\n", pcap_geterr(pd));
		pcap_close(pd);
		return -1;
	}
	static struct corpus_case c;
	unsigned n = 0;
	for (unsigned i = 0; corpus_case(i, &c) == 0; i++, n++) {
		struct pcap_pkthdr ph = {.ts = {.tv_sec = (time_t)i},
		                         .caplen = (bpf_u_int32)c.len,
		                         .len = (bpf_u_int32)c.len};
		pcap_dump((u_char *)d, &ph, c.frame);
	}
	(void)cfg;
	pcap_dump_close(d);
	pcap_close(pd);
	return (int)n;
}

static void test_pcap(const struct secho_wire_cfg *cfg)
{
	t_begin("pcap: the malformed corpus written and read back, verdicts kept");
	char path[] = "/tmp/secho-corpus-XXXXXX";
	int fd = mkstemp(path);
	T_CHECK(fd >= 0, "mkstemp");
	if (fd >= 0)
		close(fd);
	int n = write_pcap(cfg, path);
	T_CHECK(n > 0, "written %d", n);
	char eb[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(path, eb);
	T_CHECK(p != NULL, "open: %s", p ? "" : eb);
	static struct corpus_case c;
	int got = 0;
	if (p) {
		struct pcap_pkthdr *ph;
		const u_char *data;
		while (pcap_next_ex(p, &ph, &data) == 1) {
			if (corpus_case((unsigned)got, &c) != 0)
				break;
			struct secho_wire_req r;
			T_CHECK(ph->caplen == c.len &&
			                secho_wire_parse(cfg, data, ph->caplen, &r) == c.want,
			        "frame %d (%s)", got, c.name);
			got++;
		}
		pcap_close(p);
	}
	T_CHECK(got == n, "read %d of %d", got, n);
	unlink(path);
	t_end();
}

static int write_one(const char *dir, const char *name, const uint8_t *f, size_t len)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *fp = fopen(path, "wb");
	if (!fp || fwrite(f, 1, len, fp) != len) {
		perror(path);
		if (fp)
			fclose(fp);
		return -1;
	}
	return fclose(fp) ? -1 : 0;
}

/* Seed frames for the fuzzer: good requests to each port, a padded one, ARP, and a few
 * malformed ones. */
static int write_seeds(const char *dir)
{
	static uint8_t f[2048];
	static const uint16_t ports[3] = {4000, 4001, 4002};
	static const size_t sizes[3] = {0, 12, 100};
	char name[64];
	int rc = 0;
	for (int p = 0; p < 3; p++) {
		for (int i = 0; i < 3; i++) {
			struct req_spec s;
			spec_default(&s, sizes[i], ports[p]);
			s.no_udp_csum = (i == 2);
			size_t len = build_req(&s, f);
			snprintf(name, sizeof(name), "good-%u-%zu", ports[p], sizes[i]);
			rc |= write_one(dir, name, f, len);
		}
	}
	struct req_spec s;
	spec_default(&s, 3, 4000);
	s.pad_to = 60;
	size_t len = build_req(&s, f);
	rc |= write_one(dir, "good-padded", f, len);
	spec_default(&s, 1440, 4001);
	len = build_req(&s, f);
	rc |= write_one(dir, "good-1440", f, len);
	/* ARP request for the endpoint */
	memset(f, 0, 60);
	memset(f, 0xff, 6);
	memcpy(f + 6, HOST_MAC, 6);
	static const uint8_t arp[8] = {0x08, 0x06, 0, 1, 8, 0, 6, 4};
	memcpy(f + 12, arp, 8);
	f[21] = 1;
	memcpy(f + 22, HOST_MAC, 6);
	inet_pton(AF_INET, HOST_IP, f + 28);
	inet_pton(AF_INET, EP_IP, f + 38);
	rc |= write_one(dir, "arp-request", f, 60);
	static struct corpus_case c;
	static const char *const pick[] = {"vlan 802.1Q", "ip options ihl 6", "fragment MF",
	                                   "udp length zero", "udp checksum off by one"};
	for (unsigned i = 0; corpus_case(i, &c) == 0; i++) {
		for (size_t k = 0; k < sizeof(pick) / sizeof(pick[0]); k++) {
			if (strcmp(c.name, pick[k]) != 0)
				continue;
			snprintf(name, sizeof(name), "bad-%u", i);
			rc |= write_one(dir, name, c.frame, c.len);
		}
	}
	return rc;
}

int main(int argc, char **argv)
{
	struct secho_wire_cfg cfg;
	cfg_init(&cfg);
	if (argc == 3 && !strcmp(argv[1], "--write-pcap")) {
		int n = write_pcap(&cfg, argv[2]);
		if (n < 0)
			return 1;
		printf("wrote %d frames to %s\n", n, argv[2]);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "--write-seeds"))
		return write_seeds(argv[2]) ? 1 : 0;
	t_seed_init("test_wire");
	test_csum();
	test_good_frames(&cfg);
	test_malformed(&cfg);
	test_rebuild(&cfg);
	test_shdr();
	test_arp(&cfg);
	test_example(&cfg, argc == 2 && !strcmp(argv[1], "--print-example"));
	test_pcap(&cfg);
	return t_exit();
}
