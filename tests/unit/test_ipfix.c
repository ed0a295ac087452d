/*
 * tests/unit/test_ipfix.c - the IPFIX encoder and exporter (src/flow/export/ipfix.h).
 *
 *   - template sets and one data record of each template (IPv4, IPv6, uniflow and RFC 5103
 *     biflow; tunnelled records of every tunnel type with Open vSwitch's elements, PEN
 *     6876) and the options template against bytes written out by hand from RFC 7011,
 *     RFC 5103, the IANA element list and OVS's element numbers;
 *   - every template variant (TCP, MPLS depth, tunnel shapes) parsed back: IDs distinct,
 *     256-1023 and not the options template's, each field where the template says;
 *   - messages (through a file: collector): the header, sequence numbers (data records
 *     before the message; template records not counted), every message within the MTU;
 *   - UDP with a clock of the test's own: templates before the first data, again after the
 *     refresh period and not before; the statistics (options) record on its period with
 *     the right counts; a part-filled message leaves after flush_ms;
 *   - UDP batches: finished messages leave 32 at a time (or at a tick), the last ones at
 *     close; the datagrams are, byte for byte and in order, what a file collector of the
 *     same exporter got; to a port nobody listens on, the refused messages are counted
 *     (sendmmsg() does not return an error after it sent others);
 *   - bad collector URLs and configurations.
 * End to end with nfcapd, tshark and a TCP collector: tests/sh/test_flow_ipfix.sh.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "flow/export/ipfix.h"
#include "harness.h"
#include "secho/dissect.h"

static uint64_t rd(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static void check_hex(const char *what, const uint8_t *got, size_t n, const char *hex)
{
	uint8_t want[512];
	char clean[1100];
	size_t c = 0;
	for (const char *h = hex; *h && c + 1 < sizeof(clean); h++)
		if (*h != ' ')
			clean[c++] = *h; /* the expected bytes are grouped by field with spaces */
	clean[c] = 0;
	long wl = t_unhex(clean, want, sizeof(want));
	T_CHECK(wl == (long)n, "%s: %zu bytes, expected %ld", what, n, wl);
	if (wl == (long)n && memcmp(got, want, n) != 0) {
		T_CHECK(0, "%s differs", what);
		t_hexdump("got", got, n);
		t_hexdump("want", want, n);
	}
}

/* A record with every field distinct. */
static struct secho_flow_rec sample(int ipv)
{
	struct secho_flow_rec r;
	memset(&r, 0, sizeof(r));
	r.key.ip_version = (uint8_t)ipv;
	r.key.proto = 17; /* not TCP: the plain templates (the TCP ones: test_variants) */
	r.key.vlan = 100;
	r.key.vlan_inner = 0;
	r.key.sport = 1024;
	r.key.dport = 443;
	if (ipv == 4) {
		inet_pton(AF_INET, "198.18.0.1", r.key.src);
		inet_pton(AF_INET, "198.19.255.7", r.key.dst);
	} else {
		inet_pton(AF_INET6, "2001:db8:1::1", r.key.src);
		inet_pton(AF_INET6, "2001:db8:ff::7", r.key.dst);
		r.key.proto = 58;
		r.key.sport = r.key.dport = 0;
		r.key.icmp_type_code = 128 << 8;
	}
	r.fwd = (struct secho_flow_dir){.packets = 3,
	                                .octets = 1500,
	                                .first_ns = 1767225600123456789ull,
	                                .last_ns = 1767225601999999999ull,
	                                .tcp_flags = 0x1b};
	r.rev = (struct secho_flow_dir){.packets = 2,
	                                .octets = 80,
	                                .first_ns = 1767225600500000000ull,
	                                .last_ns = 1767225601800000001ull,
	                                .tcp_flags = 0x12};
	r.end_reason = SECHO_FLOW_END_EOF;
	static const uint8_t sm[6] = {2, 0, 0, 0, 0, 1}, dm[6] = {2, 0, 0, 0, 0, 2};
	memcpy(r.x.src_mac, sm, 6);
	memcpy(r.x.dst_mac, dm, 6);
	r.x.ttl_min[0] = 63;
	r.x.ttl_max[0] = 64;
	r.x.tos[0] = 0x28;
	r.x.ip_flags[0] = 0x40;
	r.x.ttl_min[1] = 50;
	r.x.ttl_max[1] = 52;
	r.x.ip_flags[1] = 0x40;
	r.x.seen = 3;
	return r;
}

/* Field lists, written out: ID, length (reverse elements: ID | 0x8000, length, PEN). */
static void test_templates(void)
{
	t_begin("ipfix: template sets, byte for byte");
	uint8_t b[512];
	/* the key and counters, then sourceMacAddress 56, destinationMacAddress 80, minimumTTL
	 * 52, maximumTTL 53, ipClassOfService 5, fragmentFlags 197 */
	size_t n = secho_ipfix_template_set(false, 0, b);
	check_hex("uniflow IPv4 template set", b, n,
	          "0002005c"
	          "01000015"
	          "00080004000c00040007000200 0b000200040001003c0001003a000200f50002"
	          "0020000200060002000100040002000400980008009900080088 0001"
	          "00380006 00500006 00340001 00350001 00050001 00c50001");
	n = secho_ipfix_template_set(false, 1, b);
	check_hex("uniflow IPv6 template set", b, n,
	          "0002005c"
	          "01010015"
	          "001b0010001c00100007000200 0b000200040001003c0001003a000200f50002"
	          "008b000200060002000100040002000400980008009900080088 0001"
	          "00380006 00500006 00340001 00350001 00050001 00c50001");
	n = secho_ipfix_template_set(true, 0, b);
	check_hex("biflow IPv4 template set", b, n,
	          "000200ac"
	          "0102001f"
	          "80010004 00007279 80020004 00007279 80060002 00007279"
	          "80980008 00007279 80990008 00007279 80200002 00007279"
	          "80340001 00007279 80350001 00007279 80050001 00007279 80c50001 00007279"
	          "00080004000c00040007000200 0b000200040001003c0001003a000200f50002"
	          "0020000200060002000100040002000400980008009900080088 0001"
	          "00380006 00500006 00340001 00350001 00050001 00c50001");
	n = secho_ipfix_template_set(true, 1, b);
	check_hex("biflow IPv6 template set", b, n,
	          "000200ac"
	          "0103001f"
	          "80010004 00007279 80020004 00007279 80060002 00007279"
	          "80980008 00007279 80990008 00007279 808b0002 00007279"
	          "80340001 00007279 80350001 00007279 80050001 00007279 80c50001 00007279"
	          "001b0010001c00100007000200 0b000200040001003c0001003a000200f50002"
	          "008b000200060002000100040002000400980008009900080088 0001"
	          "00380006 00500006 00340001 00350001 00050001 00c50001");
	/* IPv4, TCP, two labels, VXLAN over IPv4 (variant 2 | 4 | 2 << 3 = 22, tunnel shape
	 * outer IPv4 1 | port and VNI 4 = 5: 22 + 72 * 5 = 382, template 641): tcpOptions 209,
	 * tcpWindowSize 186, ipfixprobe's MSS (8057/900) and SYN size (8057/902),
	 * mplsTopLabelStackSection 70, mplsLabelStackSection2 71, then Open vSwitch's tunnel
	 * elements under VMware's PEN 6876 (0x1adc): tunnelType 891, tunnelKey 892,
	 * tunnelProtocolIdentifier 895, tunnelSourceIPv4Address 893,
	 * tunnelDestinationIPv4Address 894, tunnelDestinationTransportPort 897; layer2SegmentId
	 * 351 */
	n = secho_ipfix_template_set(false, 382, b);
	check_hex("uniflow IPv4 TCP MPLS VXLAN-over-IPv4 template set", b, n,
	          "000200b0"
	          "02810022"
	          "00080004000c00040007000200 0b000200040001003c0001003a000200f50002"
	          "0020000200060002000100040002000400980008009900080088 0001"
	          "00380006 00500006 00340001 00350001 00050001 00c50001"
	          "00d10008 00ba0002 83840004 00001f79 83860002 00001f79"
	          "00460003 00470003"
	          "837b0001 00001adc 837c0004 00001adc 837f0001 00001adc"
	          "837d0004 00001adc 837e0004 00001adc 83810002 00001adc"
	          "015f0008");
	/* Biflow IPv6, GRE over IPv6 (variant 1 | 4 = 5, shape 0, template 264): the reverse
	 * elements, IPv6's, then tunnelType, tunnelKey, tunnelProtocolIdentifier only */
	n = secho_ipfix_template_set(true, 5, b);
	check_hex("biflow IPv6 tunnel (no outer IPv4, no port) template set", b, n,
	          "000200c4"
	          "01080022"
	          "80010004 00007279 80020004 00007279 80060002 00007279"
	          "80980008 00007279 80990008 00007279 808b0002 00007279"
	          "80340001 00007279 80350001 00007279 80050001 00007279 80c50001 00007279"
	          "001b0010001c00100007000200 0b000200040001003c0001003a000200f50002"
	          "008b000200060002000100040002000400980008009900080088 0001"
	          "00380006 00500006 00340001 00350001 00050001 00c50001"
	          "837b0001 00001adc 837c0004 00001adc 837f0001 00001adc");
	/* Uniflow IPv4, GTP-U over IPv4 (variant 4 + 72 * (1 | 2) = 220, template 479): the
	 * outer addresses and port, no layer2SegmentId */
	n = secho_ipfix_template_set(false, 220, b);
	check_hex("uniflow IPv4 GTP-U-over-IPv4 template set", b, n,
	          "0002008c"
	          "01df001b"
	          "00080004000c00040007000200 0b000200040001003c0001003a000200f50002"
	          "0020000200060002000100040002000400980008009900080088 0001"
	          "00380006 00500006 00340001 00350001 00050001 00c50001"
	          "837b0001 00001adc 837c0004 00001adc 837f0001 00001adc"
	          "837d0004 00001adc 837e0004 00001adc 83810002 00001adc");
	/* a tunnel shape without the tunnel bit is no variant */
	T_CHECK(secho_ipfix_template_set(false, 72, b) == 0 &&
	                secho_ipfix_template_set(true, 72 * 5 + 3, b) == 0,
	        "a tunnel shape without the tunnel part has a template");
	T_CHECK(secho_ipfix_template_set(false, SECHO_IPFIX_VARIANTS, b) == 0,
	        "a variant out of range has a template");
	n = secho_ipfix_options_template_set(b);
	check_hex("options template set", b, n,
	          "0003002e 01040009 0001"
	          "00950004 00290008 002a0008 00280008 00a30008 00a40008 00a50008 00a60008"
	          "00a00008");
	t_end();
}

static void test_records(void)
{
	t_begin("ipfix: one data record of each template, byte for byte");
	uint8_t b[256];
	uint16_t tid = 0;
	struct secho_flow_rec r4 = sample(4), r6 = sample(6);
	/* IPv4: addresses, ports, protocol 6, version 4, VLAN 100, inner 0, ICMP 0, flags
	 * 0x1b, 1500 octets, 3 packets (4 bytes each: reduced-size encoding), 1767225600123 ms,
	 * 1767225601999 ms, reason 3. */
	static const char v4[] = "c6120001 c613ff07 0400 01bb 11 04 0064 0000 0000 001b"
	                         "000005dc 00000003"
	                         "0000019b76daa87b 0000019b76daafcf 03"
	                         "020000000001 020000000002 3f 40 28 40";
	static const char v6[] = "20010db8000100000000000000000001 20010db800ff00000000000000000007"
	                         "0000 0000 3a 06 0064 0000 8000 001b"
	                         "000005dc 00000003"
	                         "0000019b76daa87b 0000019b76daafcf 03"
	                         "020000000001 020000000002 3f 40 28 40";
	/* Reverse (first in a biflow record): 80 octets, 2 packets, flags 0x12, 1767225600500
	 * ms, 1767225601800 ms, then the reverse ICMP type and code: none for TCP (IPv4), the
	 * echo reply 129.0 answering the forward's echo request (IPv6). */
	static const char rev[] = "00000050 00000002 0012"
	                          "0000019b76daa9f4 0000019b76daaf08";
	static const char rev_icmp4[] = "0000", rev_icmp6[] = "8100";
	static const char rev_l3[] = "32 34 00 40"; /* TTLs 50..52, ToS 0, DF */
	char hex[700];
	size_t n = secho_ipfix_encode(false, &r4, b, &tid);
	T_CHECK(tid == SECHO_IPFIX_TID_V4 && n == SECHO_IPFIX_REC_V4, "v4: tid %u len %zu", tid, n);
	check_hex("IPv4 uniflow record", b, n, v4);
	n = secho_ipfix_encode(false, &r6, b, &tid);
	T_CHECK(tid == SECHO_IPFIX_TID_V6 && n == SECHO_IPFIX_REC_V6, "v6: tid %u len %zu", tid, n);
	check_hex("IPv6 uniflow record", b, n, v6);
	n = secho_ipfix_encode(true, &r4, b, &tid);
	T_CHECK(tid == SECHO_IPFIX_TID_V4_BI && n == SECHO_IPFIX_REC_V4 + SECHO_IPFIX_REC_BI_EXTRA,
	        "v4 bi: tid %u len %zu", tid, n);
	snprintf(hex, sizeof(hex), "%s%s%s%s", rev, rev_icmp4, rev_l3, v4);
	check_hex("IPv4 biflow record", b, n, hex);
	n = secho_ipfix_encode(true, &r6, b, &tid);
	T_CHECK(tid == SECHO_IPFIX_TID_V6_BI && n == SECHO_IPFIX_REC_V6 + SECHO_IPFIX_REC_BI_EXTRA,
	        "v6 bi: tid %u len %zu", tid, n);
	snprintf(hex, sizeof(hex), "%s%s%s%s", rev, rev_icmp6, rev_l3, v6);
	check_hex("IPv6 biflow record", b, n, hex);
	/* Tunnelled records: the tunnel part after the rest (tunnelType, tunnelKey,
	 * tunnelProtocolIdentifier; the outer IPv4 addresses 192.0.2.1 -> 192.0.2.2 when the
	 * outer header is IPv4; the outer UDP port of a UDP tunnel; VXLAN's layer2SegmentId). */
	static const struct {
		int ipv, bi;
		uint8_t tun, outer;
		uint32_t id;
		uint16_t tid;
		const char *part;
	} tun[] = {
	        {4, 0, SECHO_TUN_VXLAN, 4, 0xabcdef, 259 + 4 + 72 * 5,
	         "01 00abcdef 11 c0000201 c0000202 12b5 0100000000abcdef"},
	        {4, 1, SECHO_TUN_GRE, 4, 7, 259 + 4 + 72 * 1, "02 00000007 2f c0000201 c0000202"},
	        {4, 0, SECHO_TUN_GTPU, 4, 0x1000, 259 + 4 + 72 * 3,
	         "00 00001000 11 c0000201 c0000202 0868"},
	        {4, 0, SECHO_TUN_GENEVE, 6, 301, 259 + 4 + 72 * 2, "07 0000012d 11 17c1"},
	        {4, 1, SECHO_TUN_ERSPAN, 4, 77, 259 + 4 + 72 * 1,
	         "00 0000004d 2f c0000201 c0000202"},
	        {4, 0, SECHO_TUN_IPIP, 4, 0, 259 + 4 + 72 * 1, "00 00000000 04 c0000201 c0000202"},
	        {6, 0, SECHO_TUN_IPIP, 6, 0, 259 + 5, "00 00000000 29"},
	        {4, 0, SECHO_TUN_EOMPLS, 0, 0, 259 + 4, "00 00000000 00"},
	};
	for (size_t i = 0; i < sizeof(tun) / sizeof(tun[0]); i++) {
		struct secho_flow_rec rt = sample(tun[i].ipv);
		char what[64];
		rt.key.tun_type = tun[i].tun;
		rt.key.tun_id = tun[i].id;
		rt.x.tun_type = tun[i].tun;
		rt.x.tun_id = tun[i].id;
		rt.x.outer_ip_version = tun[i].outer;
		if (tun[i].outer == 4) {
			inet_pton(AF_INET, "192.0.2.1", rt.x.outer_src);
			inet_pton(AF_INET, "192.0.2.2", rt.x.outer_dst);
		} else if (tun[i].outer == 6) {
			inet_pton(AF_INET6, "2001:db8:ff::1", rt.x.outer_src);
			inet_pton(AF_INET6, "2001:db8:ff::2", rt.x.outer_dst);
		}
		n = secho_ipfix_encode(tun[i].bi, &rt, b, &tid);
		snprintf(what, sizeof(what), "%s over IPv%u, %s record", secho_tun_name(tun[i].tun),
		         tun[i].outer, tun[i].bi ? "biflow" : "uniflow");
		T_CHECK(tid == tun[i].tid, "%s: template %u, want %u", what, tid, tun[i].tid);
		snprintf(hex, sizeof(hex), "%s%s%s%s%s", tun[i].bi ? rev : "",
		         tun[i].bi ? (tun[i].ipv == 4 ? rev_icmp4 : rev_icmp6) : "",
		         tun[i].bi ? rev_l3 : "", tun[i].ipv == 4 ? v4 : v6, tun[i].part);
		check_hex(what, b, n, hex);
	}
	/* A counter of 2^32 or more: the same record with 8-byte counters, under the wide
	 * variant's template (SECHO_IPFIX_TID_WIDE + its shape), in either direction. */
	struct secho_flow_rec w = r4;
	w.fwd.octets = 0x123456789ull;
	n = secho_ipfix_encode(false, &w, b, &tid);
	T_CHECK(tid == SECHO_IPFIX_TID_WIDE && n == SECHO_IPFIX_REC_V4 + SECHO_IPFIX_REC_WIDE,
	        "v4 wide: tid %u len %zu", tid, n);
	check_hex("IPv4 uniflow record, 8-byte counters", b, n,
	          "c6120001 c613ff07 0400 01bb 11 04 0064 0000 0000 001b"
	          "0000000123456789 0000000000000003"
	          "0000019b76daa87b 0000019b76daafcf 03"
	          "020000000001 020000000002 3f 40 28 40");
	w = r6;
	w.rev.packets = 1ull << 32;
	n = secho_ipfix_encode(false, &w, b, &tid);
	T_CHECK(tid == SECHO_IPFIX_TID_V6 && n == SECHO_IPFIX_REC_V6,
	        "v6 uniflow, a reverse count it does not carry: tid %u len %zu", tid, n);
	n = secho_ipfix_encode(true, &w, b, &tid);
	T_CHECK(tid == SECHO_IPFIX_TID_WIDE + 1 && n == SECHO_IPFIX_REC_V6 +
	                                                           SECHO_IPFIX_REC_BI_EXTRA +
	                                                           2 * SECHO_IPFIX_REC_WIDE,
	        "v6 bi wide: tid %u len %zu", tid, n);
	check_hex("IPv6 biflow record, 8-byte counters", b, n,
	          "0000000000000050 0000000100000000 0012 0000019b76daa9f4 0000019b76daaf08"
	          "8100 32 34 00 40"
	          "20010db8000100000000000000000001 20010db800ff00000000000000000007"
	          "0000 0000 3a 06 0064 0000 8000 001b"
	          "00000000000005dc 0000000000000003"
	          "0000019b76daa87b 0000019b76daafcf 03"
	          "020000000001 020000000002 3f 40 28 40");
	uint8_t t[512];
	n = secho_ipfix_template_set(true, SECHO_IPFIX_SHAPES + 1, t);
	check_hex("biflow IPv6 template set, 8-byte counters", t, n,
	          "000200ac"
	          "0801001f"
	          "80010008 00007279 80020008 00007279 80060002 00007279"
	          "80980008 00007279 80990008 00007279 808b0002 00007279"
	          "80340001 00007279 80350001 00007279 80050001 00007279 80c50001 00007279"
	          "001b0010001c00100007000200 0b000200040001003c0001003a000200f50002"
	          "008b000200060002000100080002000800980008009900080088 0001"
	          "00380006 00500006 00340001 00350001 00050001 00c50001");
	struct secho_flow_rec bad = r4;
	bad.key.ip_version = 5;
	T_CHECK(secho_ipfix_encode(false, &bad, b, &tid) == 0, "ip_version 5 encoded");
	t_end();
}

/* Where element (id, pen) lies in a record of the template in set t (one template); -1 when
 * the template lacks it. *len its length; *total the record's length. */
static int elem_at(const uint8_t *t, uint16_t id, uint32_t pen, unsigned *len, unsigned *total)
{
	unsigned nf = (unsigned)rd(t + 2, 2), o = 4, at = 0;
	int found = -1;
	for (unsigned i = 0; i < nf; i++) {
		uint16_t fid = (uint16_t)rd(t + o, 2), fl = (uint16_t)rd(t + o + 2, 2);
		uint32_t fpen = 0;
		o += 4;
		if (fid & 0x8000) {
			fpen = (uint32_t)rd(t + o, 4);
			o += 4;
		}
		if ((fid & 0x7fff) == id && fpen == pen && found < 0) {
			found = (int)at;
			*len = fl;
		}
		at += fl;
	}
	*total = at;
	return found;
}

/* A record of variant v's kind (v: a valid variant): variant = IPv6 1 | TCP 2 | tunnel 4 |
 * depth << 3 (0-71), + 72 * the tunnel shape (outer IPv4 1, UDP port 2, port and VXLAN VNI
 * 4): GRE over IPv4 or EoMPLS, GTP-U or VXLAN over IPv4 or IPv6. */
static struct secho_flow_rec variant_rec(unsigned v)
{
	unsigned shape = v % SECHO_IPFIX_SHAPES / 72, outer4 = shape & 1, udp = shape >> 1,
	         depth = (v % 72) >> 3;
	struct secho_flow_rec r = sample((v & 1) ? 6 : 4);
	if (v >= SECHO_IPFIX_SHAPES) /* 8-byte counters: a forward count of 2^32 or more */
		r.fwd.packets = 5000000000ull;
	if (v & 2)
		r.key.proto = 6;
	if (v & 4) {
		r.key.tun_type = udp == 2   ? SECHO_TUN_VXLAN
		                 : udp == 1 ? SECHO_TUN_GTPU
		                 : outer4   ? SECHO_TUN_GRE
		                            : SECHO_TUN_EOMPLS;
		r.key.tun_id = 0xabcdef;
		r.x.tun_type = r.key.tun_type;
		r.x.tun_id = r.key.tun_id;
		r.x.outer_ip_version = outer4 ? 4 : (udp ? 6 : 0);
		static const uint8_t os[16] = {192, 0, 2, 1}, od[16] = {192, 0, 2, 2};
		memcpy(r.x.outer_src, os, 16);
		memcpy(r.x.outer_dst, od, 16);
	}
	r.x.nmpls[0] = (uint8_t)depth;
	r.x.nmpls[1] = (uint8_t)(depth ? depth - 1 : 0); /* the reverse: one fewer */
	for (unsigned i = 0; i < depth; i++) {
		r.x.mpls[0][i][0] = (uint8_t)(0x10 + i);
		r.x.mpls[0][i][2] = i + 1 == depth ? 0x01 : 0; /* bottom of stack */
		r.x.mpls[1][i][0] = (uint8_t)(0x20 + i);
	}
	r.x.tcp_options[0] = 0x2a00000000000000ull; /* kinds 2, 4, 6: bits 61, 59, 57 */
	r.x.tcp_options[1] = 0x0100000000000000ull;
	r.x.tcp_mss[0] = 1460;
	r.x.tcp_mss[1] = 1380;
	r.x.tcp_win[0] = 64240;
	r.x.syn_size = 60;
	return r;
}

/* Every template variant: the record of a flow of its kind has the length its template says,
 * goes out under its ID, and carries each field where the template puts it. */
static void test_variants(void)
{
	t_begin("ipfix: template variants (TCP, MPLS depth 0-8, tunnel shapes), uniflow and "
	        "biflow");
	uint8_t t[512], b[SECHO_IPFIX_REC_MAX];
	static uint8_t tid_seen[2][4096];
	unsigned nvalid = 0;
	for (unsigned bi = 0; bi < 2; bi++)
		for (unsigned v = 0; v < SECHO_IPFIX_VARIANTS; v++) {
			/* variant = IPv6 1 | TCP 2 | tunnel 4 | depth << 3 (0-71), + 72 * the
			 * tunnel shape: outer IPv4 1, UDP port 2, port and VXLAN VNI 4; + 432
			 * (SECHO_IPFIX_SHAPES) with 8-byte counters */
			unsigned low = v % 72, shape = v % SECHO_IPFIX_SHAPES / 72,
			         outer4 = shape & 1, udp = shape >> 1,
			         wide = v >= SECHO_IPFIX_SHAPES;
			unsigned depth = low >> 3, len = 0, total = 0;
			if (shape && !(v & 4)) {
				T_CHECK(secho_ipfix_template_set(bi, v, t) == 0,
				        "variant %u (a shape without a tunnel) has a template", v);
				continue;
			}
			nvalid++;
			struct secho_flow_rec r = variant_rec(v);
			uint16_t tid = 0;
			size_t n = secho_ipfix_encode(bi, &r, b, &tid);
			size_t tn = secho_ipfix_template_set(bi, v, t);
			T_CHECK(tn > 8 && rd(t + 4, 2) == tid,
			        "variant %u bi %u: tid %u, template %llu", v, bi, tid,
			        tn > 8 ? (unsigned long long)rd(t + 4, 2) : 0ull);
			if (tn <= 8)
				continue;
			int mac = elem_at(t + 4, 56, 0, &len, &total);
			T_CHECK(total == n && n <= SECHO_IPFIX_REC_MAX,
			        "variant %u bi %u: record %zu bytes, template %u", v, bi, n, total);
			T_CHECK(mac >= 0 && len == 6 && !memcmp(b + mac, r.x.src_mac, 6),
			        "variant %u bi %u: sourceMacAddress", v, bi);
			int o = elem_at(t + 4, 209, 0, &len, &total);
			T_CHECK((v & 2) ? o >= 0 && rd(b + o, 8) == r.x.tcp_options[0] : o < 0,
			        "variant %u bi %u: tcpOptions", v, bi);
			o = elem_at(t + 4, 900, 8057, &len, &total);
			T_CHECK((v & 2) ? o >= 0 && rd(b + o, len) == 1460 : o < 0,
			        "variant %u bi %u: MSS (8057/900)", v, bi);
			o = elem_at(t + 4, 902, 8057, &len, &total);
			T_CHECK((v & 2) ? o >= 0 && rd(b + o, len) == 60 : o < 0,
			        "variant %u bi %u: SYN size (8057/902)", v, bi);
			o = elem_at(t + 4, 901, 8057, &len, &total);
			T_CHECK((v & 2) && bi ? o >= 0 && rd(b + o, len) == 1380 : o < 0,
			        "variant %u bi %u: reverse MSS (8057/901)", v, bi);
			o = elem_at(t + 4, 209, SECHO_IPFIX_PEN_REVERSE, &len, &total);
			T_CHECK((v & 2) && bi ? o >= 0 && rd(b + o, 8) == r.x.tcp_options[1]
			                      : o < 0,
			        "variant %u bi %u: reverse tcpOptions", v, bi);
			unsigned tid_i = tid < 4096 ? tid : 4095;
			T_CHECK((wide ? tid >= SECHO_IPFIX_TID_WIDE &&
			                         tid < SECHO_IPFIX_TID_WIDE + SECHO_IPFIX_SHAPES
			              : tid >= 256 && tid < 1024 &&
			                         tid != SECHO_IPFIX_TID_OPTIONS &&
			                         (tid < 258 || tid > 259 || bi) &&
			                         (tid > 257 || !bi)) &&
			                !tid_seen[bi][tid_i]++,
			        "variant %u bi %u: template ID %u taken, out of 256-1023 "
			        "(2048-2479 "
			        "with 8-byte counters) or the options template's",
			        v, bi, tid);
			/* the counters: 4 bytes each, 8 in the wide variants */
			o = elem_at(t + 4, 2, 0, &len, &total);
			T_CHECK(o >= 0 && len == (wide ? 8u : 4u) &&
			                rd(b + o, len) == r.fwd.packets,
			        "variant %u bi %u: packetDeltaCount", v, bi);
			o = elem_at(t + 4, 1, 0, &len, &total);
			T_CHECK(o >= 0 && len == (wide ? 8u : 4u) && rd(b + o, len) == r.fwd.octets,
			        "variant %u bi %u: octetDeltaCount", v, bi);
			o = elem_at(t + 4, 2, SECHO_IPFIX_PEN_REVERSE, &len, &total);
			T_CHECK(bi ? o >= 0 && len == (wide ? 8u : 4u) &&
			                        rd(b + o, len) == r.rev.packets
			           : o < 0,
			        "variant %u bi %u: reverse packetDeltaCount", v, bi);
			o = elem_at(t + 4, 351, 0, &len, &total);
			T_CHECK(udp == 2 ? o >= 0 && rd(b + o, 8) == (1ull << 56 | 0xabcdef)
			                 : o < 0,
			        "variant %u bi %u: layer2SegmentId", v, bi);
			/* the tunnel part: PEN 6876 */
			uint8_t code = r.key.tun_type == SECHO_TUN_VXLAN ? 1
			               : r.key.tun_type == SECHO_TUN_GRE ? 2
			                                                 : 0;
			uint8_t proto = r.key.tun_type == SECHO_TUN_GRE      ? 47
			                : r.key.tun_type == SECHO_TUN_EOMPLS ? 0
			                                                     : 17;
			o = elem_at(t + 4, 891, 6876, &len, &total);
			T_CHECK((v & 4) ? o >= 0 && len == 1 && b[o] == code : o < 0,
			        "variant %u bi %u: tunnelType", v, bi);
			o = elem_at(t + 4, 892, 6876, &len, &total);
			T_CHECK((v & 4) ? o >= 0 && len == 4 && rd(b + o, 4) == 0xabcdef : o < 0,
			        "variant %u bi %u: tunnelKey", v, bi);
			o = elem_at(t + 4, 895, 6876, &len, &total);
			T_CHECK((v & 4) ? o >= 0 && len == 1 && b[o] == proto : o < 0,
			        "variant %u bi %u: tunnelProtocolIdentifier", v, bi);
			o = elem_at(t + 4, 893, 6876, &len, &total);
			T_CHECK(outer4 ? o >= 0 && len == 4 && rd(b + o, 4) == 0xc0000201 : o < 0,
			        "variant %u bi %u: tunnelSourceIPv4Address", v, bi);
			o = elem_at(t + 4, 894, 6876, &len, &total);
			T_CHECK(outer4 ? o >= 0 && len == 4 && rd(b + o, 4) == 0xc0000202 : o < 0,
			        "variant %u bi %u: tunnelDestinationIPv4Address", v, bi);
			o = elem_at(t + 4, 897, 6876, &len, &total);
			T_CHECK(udp ? o >= 0 && len == 2 && rd(b + o, 2) == (udp == 2 ? 4789 : 2152)
			            : o < 0,
			        "variant %u bi %u: tunnelDestinationTransportPort", v, bi);
			T_CHECK(elem_at(t + 4, 896, 6876, &len, &total) < 0,
			        "variant %u bi %u: a source port", v, bi);
			for (unsigned i = 0; i <= 8; i++) {
				o = elem_at(t + 4, (uint16_t)(70 + i), 0, &len, &total);
				T_CHECK(i < depth ? o >= 0 && len == 3 && b[o] == 0x10 + i &&
				                            b[o + 2] == (i + 1 == depth ? 1 : 0)
				                  : o < 0,
				        "variant %u bi %u: label stack section %u", v, bi, i + 1);
				o = elem_at(t + 4, (uint16_t)(70 + i), SECHO_IPFIX_PEN_REVERSE,
				            &len, &total);
				/* the reverse stack is one shallower: its last section is zeros */
				T_CHECK(bi && i < depth
				                ? o >= 0 && b[o] == (i + 1 < depth ? 0x20 + i : 0)
				                : o < 0,
				        "variant %u bi %u: reverse label stack section %u", v, bi,
				        i + 1);
			}
		}
	/* 36 without a tunnel, 36 with each of the 6 tunnel shapes, each with 4- and 8-byte
	 * counters; both modes */
	T_CHECK(nvalid == 2 * 2 * (36 + 36 * 6), "%u variants", nvalid);
	t_end();
}

/* Walk the messages of buf: check headers, return the data records counted. */
static void walk(const uint8_t *p, size_t len, uint32_t mtu, uint32_t odid, uint64_t *msgs,
                 uint64_t *data, uint64_t *flows, uint64_t *tmpl_msgs)
{
	uint64_t seq = 0;
	*msgs = *data = *flows = *tmpl_msgs = 0;
	while (len >= 16) {
		size_t ml = (size_t)rd(p + 2, 2);
		T_CHECK(rd(p, 2) == 10, "version %llu", (unsigned long long)rd(p, 2));
		T_CHECK(ml >= 16 && ml <= len && ml <= mtu, "message length %zu (mtu %u)", ml, mtu);
		if (ml < 16 || ml > len)
			return;
		T_CHECK(rd(p + 8, 4) == seq, "message %llu: sequence %llu, expected %llu",
		        (unsigned long long)*msgs, (unsigned long long)rd(p + 8, 4),
		        (unsigned long long)seq);
		T_CHECK(rd(p + 12, 4) == odid, "odid %llu", (unsigned long long)rd(p + 12, 4));
		size_t o = 16;
		while (o + 4 <= ml) {
			uint16_t sid = (uint16_t)rd(p + o, 2), sl = (uint16_t)rd(p + o + 2, 2);
			T_CHECK(sl >= 4 && o + sl <= ml, "set length %u", sl);
			if (sl < 4 || o + sl > ml)
				return;
			unsigned rl = sid == SECHO_IPFIX_TID_V4        ? SECHO_IPFIX_REC_V4
			              : sid == SECHO_IPFIX_TID_V6      ? SECHO_IPFIX_REC_V6
			              : sid == SECHO_IPFIX_TID_OPTIONS ? SECHO_IPFIX_REC_OPTIONS
			                                               : 0;
			if (sid == 2)
				(*tmpl_msgs)++;
			if (rl) {
				T_CHECK((sl - 4u) % rl == 0, "set %u: %u bytes of %u-byte records",
				        sid, sl - 4u, rl);
				seq += (sl - 4u) / rl;
				*data += (sl - 4u) / rl;
				if (sid != SECHO_IPFIX_TID_OPTIONS)
					*flows += (sl - 4u) / rl;
			}
			o += sl;
		}
		(*msgs)++;
		p += ml;
		len -= ml;
	}
	T_CHECK(len == 0, "%zu bytes after the last message", len);
}

static void test_messages_file(void)
{
	t_begin("ipfix: messages in a file: headers, sequence numbers, MTU");
	char path[] = "/tmp/secho-ipfix-test.XXXXXX";
	int fd = mkstemp(path);
	T_CHECK(fd >= 0, "mkstemp");
	if (fd < 0) {
		t_end();
		return;
	}
	close(fd);
	char url[64], err[256];
	snprintf(url, sizeof(url), "file:%s", path);
	struct secho_ipfix *x;
	struct secho_ipfix_cfg cfg = {.odid = 99, .mtu = 576};
	T_CHECK(secho_ipfix_new(&x, &cfg) == 0, "new");
	T_CHECK(secho_ipfix_add_collector(x, url, err, sizeof(err)) == 0, "add: %s", err);
	uint64_t now = 1800000000ull * 1000000000ull;
	for (int i = 0; i < 300; i++) {
		struct secho_flow_rec r = sample(i % 3 ? 4 : 6);
		r.key.sport = (uint16_t)(2000 + i);
		T_CHECK(secho_ipfix_record(x, &r, now) == 0, "record %d", i);
	}
	struct secho_ipfix_stats st;
	int rc = secho_ipfix_close(x, now, &st, 1000);
	T_CHECK(rc == 0, "close %d", rc);
	T_CHECK(st.ncollectors == 1 && st.c[0].records == 300 && st.c[0].stats_records == 1 &&
	                st.c[0].template_records == 5 && st.c[0].errors == 0,
	        "counters: records %llu stats %llu templates %llu errors %llu",
	        (unsigned long long)st.c[0].records, (unsigned long long)st.c[0].stats_records,
	        (unsigned long long)st.c[0].template_records, (unsigned long long)st.c[0].errors);
	FILE *f = fopen(path, "rb");
	static uint8_t buf[1 << 16];
	size_t n = f ? fread(buf, 1, sizeof(buf), f) : 0;
	if (f)
		fclose(f);
	unlink(path);
	uint64_t msgs, data, flows, tm;
	walk(buf, n, 576, 99, &msgs, &data, &flows, &tm);
	/* the four plain templates (IPv4, IPv6, each with and without TCP), a set each */
	T_CHECK(flows == 300 && data == 301 && tm == 4, "flows %llu data %llu template sets %llu",
	        (unsigned long long)flows, (unsigned long long)data, (unsigned long long)tm);
	T_CHECK(msgs == st.c[0].messages && n == st.c[0].bytes, "messages %llu/%llu bytes %zu/%llu",
	        (unsigned long long)msgs, (unsigned long long)st.c[0].messages, n,
	        (unsigned long long)st.c[0].bytes);
	/* The first message holds the templates and counts no data records. */
	T_CHECK(n > 20 && rd(buf + 16, 2) == 2 && rd(buf + 8, 4) == 0, "templates first");
	t_end();
}

/* Read every datagram waiting on fd into msgs; returns how many. */
static int drain(int fd, uint8_t (*m)[65536], size_t *len, int max)
{
	int n = 0;
	while (n < max) {
		ssize_t r = recv(fd, m[n], sizeof(m[n]), MSG_DONTWAIT);
		if (r <= 0)
			break;
		len[n++] = (size_t)r;
	}
	return n;
}

static int count_set(const uint8_t *m, size_t len, uint16_t want)
{
	int c = 0;
	for (size_t o = 16; o + 4 <= len;) {
		uint16_t sid = (uint16_t)rd(m + o, 2), sl = (uint16_t)rd(m + o + 2, 2);
		if (sl < 4)
			break;
		c += sid == want;
		o += sl;
	}
	return c;
}

/* A UDP socket bound to a free port on 127.0.0.1 (its number in *port); -1 when there is
 * none. */
static int udp_rx(unsigned *port)
{
	int rx = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t al = sizeof(a);
	if (rx < 0 || bind(rx, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(rx, (struct sockaddr *)&a, &al)) {
		if (rx >= 0)
			close(rx);
		return -1;
	}
	*port = ntohs(a.sin_port);
	return rx;
}

static void test_udp_timers(void)
{
	t_begin("ipfix: UDP template refresh, statistics record, flush timer");
	unsigned port;
	int rx = udp_rx(&port);
	if (rx < 0) {
		t_unavailable("no UDP socket on 127.0.0.1");
		return;
	}
	int big = 1 << 20;
	setsockopt(rx, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	char url[64], err[256];
	snprintf(url, sizeof(url), "udp://127.0.0.1:%u", port);
	struct secho_ipfix *x;
	struct secho_ipfix_cfg cfg = {
	        .odid = 5, .biflow = true, .template_refresh_s = 10, .stats_interval_s = 25};
	T_CHECK(secho_ipfix_new(&x, &cfg) == 0, "new");
	T_CHECK(secho_ipfix_add_collector(x, url, err, sizeof(err)) == 0, "add: %s", err);
	static uint8_t m[64][65536];
	size_t len[64];
	const uint64_t S = 1000000000ull, t0 = 1800000000ull * S;
	struct secho_flow_rec r = sample(4);
	struct secho_ipfix_meter_stats ms = {.observed_flows = 77,
	                                     .ignored_packets = 5,
	                                     .ignored_octets = 321,
	                                     .not_sent_flows = 2};
	secho_ipfix_set_meter_stats(x, &ms);

	/* t0: the first record: its templates wait in the UDP batch until the tick, the record
	 * in its message. */
	secho_ipfix_record(x, &r, t0);
	int n = drain(rx, m, len, 64);
	T_CHECK(n == 0, "t0: %d messages before the tick, want none (the batch waits)", n);
	secho_ipfix_tick(x, t0, NULL);
	n = drain(rx, m, len, 64);
	T_CHECK(n == 1 && count_set(m[0], len[0], 2) == 4 && count_set(m[0], len[0], 3) == 1,
	        "t0: %d messages, want the template message", n);
	/* t0 + 0.4 s: not yet flushed; t0 + 0.6 s: flushed (flush_ms 500). */
	secho_ipfix_tick(x, t0 + 400000000ull, NULL);
	T_CHECK(drain(rx, m, len, 64) == 0, "flushed before flush_ms");
	secho_ipfix_tick(x, t0 + 600000000ull, NULL);
	n = drain(rx, m, len, 64);
	T_CHECK(n == 1 && count_set(m[0], len[0], SECHO_IPFIX_TID_V4_BI) == 1 &&
	                rd(m[0] + 8, 4) == 0,
	        "t0+0.6: %d messages (want one data message with sequence 0)", n);
	/* t0 + 9 s: a record; no refresh yet. t0 + 10 s: refresh before the next data. */
	secho_ipfix_record(x, &r, t0 + 9 * S);
	secho_ipfix_tick(x, t0 + 9 * S + 600000000ull, NULL);
	n = drain(rx, m, len, 64);
	T_CHECK(n == 1 && count_set(m[0], len[0], 2) == 0 && rd(m[0] + 8, 4) == 1,
	        "t0+9: %d messages, want one data message, sequence 1", n);
	secho_ipfix_record(x, &r, t0 + 10 * S);
	secho_ipfix_tick(x, t0 + 10 * S, NULL);
	n = drain(rx, m, len, 64);
	T_CHECK(n == 1 && count_set(m[0], len[0], 2) == 4 && rd(m[0] + 8, 4) == 2,
	        "t0+10: %d messages, want the templates again (sequence 2: template records do "
	        "not count)",
	        n);
	/* t0 + 25 s: the statistics record (with a template refresh before it, 15 s on). */
	secho_ipfix_tick(x, t0 + 25 * S, NULL);
	n = drain(rx, m, len, 64);
	int opt = -1;
	for (int i = 0; i < n; i++)
		if (count_set(m[i], len[i], SECHO_IPFIX_TID_OPTIONS))
			opt = i;
	T_CHECK(opt >= 0, "t0+25: no statistics record in %d messages", n);
	if (opt >= 0) {
		/* The options set: scope odid 5, messages, flows 3, octets, observed 77,
		 * ignored 5 / 321, not sent 2 (meter), init time t0 in ms. */
		const uint8_t *o = m[opt] + 16 + 4;
		T_CHECK(rd(o, 4) == 5, "scope odid %llu", (unsigned long long)rd(o, 4));
		T_CHECK(rd(o + 12, 8) == 3, "exportedFlowRecordTotalCount %llu",
		        (unsigned long long)rd(o + 12, 8));
		T_CHECK(rd(o + 28, 8) == 77 && rd(o + 36, 8) == 5 && rd(o + 44, 8) == 321 &&
		                rd(o + 52, 8) == 2,
		        "observed/ignored/not sent: %llu %llu %llu %llu",
		        (unsigned long long)rd(o + 28, 8), (unsigned long long)rd(o + 36, 8),
		        (unsigned long long)rd(o + 44, 8), (unsigned long long)rd(o + 52, 8));
		T_CHECK(rd(o + 60, 8) == t0 / 1000000u, "systemInitTimeMilliseconds");
		T_CHECK(rd(m[opt] + 8, 4) == 3, "statistics message sequence %llu",
		        (unsigned long long)rd(m[opt] + 8, 4));
		T_CHECK(rd(m[opt] + 4, 4) == (t0 + 25 * S) / S, "export time");
	}
	/* A data record after the statistics record: its message counts that one too. */
	secho_ipfix_record(x, &r, t0 + 26 * S);
	secho_ipfix_tick(x, t0 + 27 * S, NULL);
	n = drain(rx, m, len, 64);
	T_CHECK(n == 1 && rd(m[0] + 8, 4) == 4,
	        "t0+27: %d messages, sequence %llu (want 4: 3 flows and 1 statistics record)", n,
	        n ? (unsigned long long)rd(m[0] + 8, 4) : 0ull);
	struct secho_ipfix_stats st;
	int rc = secho_ipfix_close(x, t0 + 28 * S, &st, 100);
	T_CHECK(rc == 0 && st.c[0].records == 4 && st.c[0].stats_records == 2 &&
	                st.c[0].errors == 0 && st.c[0].template_records == 5 * 3,
	        "close %d: records %llu stats %llu templates %llu", rc,
	        (unsigned long long)st.c[0].records, (unsigned long long)st.c[0].stats_records,
	        (unsigned long long)st.c[0].template_records);
	close(rx);
	t_end();
}

/* Append every datagram waiting on fd to buf (at *n of cap bytes); returns how many. */
static unsigned drain_into(int fd, uint8_t *buf, size_t *n, size_t cap)
{
	unsigned k = 0;
	for (;;) {
		ssize_t r = recv(fd, buf + *n, cap - *n, MSG_DONTWAIT);
		if (r <= 0)
			break;
		*n += (size_t)r;
		k++;
	}
	return k;
}

static void test_udp_batch(void)
{
	t_begin("ipfix: UDP batches: whole, in order, byte for byte the file's messages; the last "
	        "batch at close");
	unsigned port;
	int rx = udp_rx(&port);
	if (rx < 0) {
		t_unavailable("no UDP socket on 127.0.0.1");
		return;
	}
	char path[] = "/tmp/secho-ipfix-batch.XXXXXX";
	int fd = mkstemp(path);
	T_CHECK(fd >= 0, "mkstemp");
	if (fd < 0) {
		close(rx);
		t_end();
		return;
	}
	close(fd);
	/* Two collectors of one exporter get the same messages: a file (one write per
	 * message, as it leaves) and UDP (batched). */
	char fu[64], uu[64], err[256];
	snprintf(fu, sizeof(fu), "file:%s", path);
	snprintf(uu, sizeof(uu), "udp://127.0.0.1:%u", port);
	struct secho_ipfix *x;
	struct secho_ipfix_cfg cfg = {.odid = 7};
	T_CHECK(secho_ipfix_new(&x, &cfg) == 0, "new");
	T_CHECK(secho_ipfix_add_collector(x, fu, err, sizeof(err)) == 0, "add: %s", err);
	T_CHECK(secho_ipfix_add_collector(x, uu, err, sizeof(err)) == 0, "add: %s", err);
	static uint8_t got[1 << 20], want[1 << 20];
	size_t gn = 0;
	unsigned dgrams = 0, odd = 0;
	uint64_t now = 1800000000ull * 1000000000ull;
	struct secho_ipfix_stats st;
	const int nrec = 3000;
	for (int i = 0; i < nrec; i++) {
		struct secho_flow_rec r = sample(i % 3 ? 4 : 6);
		r.key.sport = (uint16_t)(2000 + i);
		r.fwd.packets = (uint64_t)i + 1;
		T_CHECK(secho_ipfix_record(x, &r, now) == 0, "record %d", i);
		/* Without a tick, messages leave 32 at a time. */
		dgrams += drain_into(rx, got, &gn, sizeof(got));
		odd += dgrams % 32 != 0;
	}
	secho_ipfix_get_stats(x, &st);
	uint64_t msgs = st.c[1].messages;
	T_CHECK(odd == 0 && msgs % 32 != 0 && dgrams == msgs - msgs % 32,
	        "before close: %u datagrams (%u times not a whole batch), %llu messages made "
	        "(want the whole batches only)",
	        dgrams, odd, (unsigned long long)msgs);
	int rc = secho_ipfix_close(x, now, &st, 1000);
	T_CHECK(rc == 0 && st.c[1].errors == 0 && st.c[1].not_delivered == 0 &&
	                st.c[1].records == (uint64_t)nrec && st.c[1].messages == msgs + 1,
	        "close %d: errors %llu, not delivered %llu, records %llu, messages %llu", rc,
	        (unsigned long long)st.c[1].errors, (unsigned long long)st.c[1].not_delivered,
	        (unsigned long long)st.c[1].records, (unsigned long long)st.c[1].messages);
	/* The last, part-filled batch (with the statistics record) after close. */
	dgrams += drain_into(rx, got, &gn, sizeof(got));
	T_CHECK(dgrams == st.c[1].messages && gn == st.c[1].bytes,
	        "%u datagrams of %llu messages, %zu of %llu bytes", dgrams,
	        (unsigned long long)st.c[1].messages, gn, (unsigned long long)st.c[1].bytes);
	FILE *f = fopen(path, "rb");
	size_t wn = f ? fread(want, 1, sizeof(want), f) : 0;
	if (f)
		fclose(f);
	unlink(path);
	T_CHECK(wn == gn && memcmp(got, want, gn) == 0,
	        "the datagrams (%zu bytes) are not the file's messages (%zu bytes)", gn, wn);
	uint64_t m, data, flows, tm;
	walk(got, gn, 1400, 7, &m, &data, &flows, &tm);
	T_CHECK(m == dgrams && flows == (uint64_t)nrec && data == (uint64_t)nrec + 1,
	        "messages %llu flows %llu data %llu", (unsigned long long)m,
	        (unsigned long long)flows, (unsigned long long)data);
	close(rx);
	t_end();
}

/* A UDP collector where nothing listens: a message that meets the error (the ICMP
 * unreachable an earlier one brought back) is counted, as with one send(2) each, also when
 * sendmmsg() stopped at it after sending others and did not return the error. On loopback
 * the ICMP comes back within the send that caused it, so one send(2) each fails every
 * second message; sending again from the message where sendmmsg() stopped would count
 * about one in thirty (the error is consumed, the retry goes out). */
static void test_udp_refused(void)
{
	t_begin("ipfix: UDP batches to a port nobody listens on: refused messages counted");
	unsigned port;
	int rx = udp_rx(&port);
	if (rx < 0) {
		t_unavailable("no UDP socket on 127.0.0.1");
		return;
	}
	close(rx); /* now nothing listens there */
	char url[64], err[256];
	snprintf(url, sizeof(url), "udp://127.0.0.1:%u", port);
	struct secho_ipfix *x;
	struct secho_ipfix_cfg cfg = {.odid = 8};
	T_CHECK(secho_ipfix_new(&x, &cfg) == 0, "new");
	T_CHECK(secho_ipfix_add_collector(x, url, err, sizeof(err)) == 0, "add: %s", err);
	uint64_t now = 1800000000ull * 1000000000ull;
	for (int i = 0; i < 3000; i++) {
		struct secho_flow_rec r = sample(4);
		r.key.sport = (uint16_t)(2000 + i);
		secho_ipfix_record(x, &r, now);
		if (i % 500 == 499)
			secho_ipfix_tick(x, now, NULL);
	}
	struct secho_ipfix_stats st;
	int rc = secho_ipfix_close(x, now, &st, 1000);
	const struct secho_ipfix_collector_stats *c = &st.c[0];
	T_CHECK(rc == -ETIMEDOUT && c->errors >= c->messages / 4 && c->errors < c->messages &&
	                c->not_delivered >= c->records / 4 && c->not_delivered < c->records,
	        "close %d: %llu messages, %llu errors, %llu of %llu records not delivered", rc,
	        (unsigned long long)c->messages, (unsigned long long)c->errors,
	        (unsigned long long)c->not_delivered, (unsigned long long)c->records);
	t_end();
}

static void test_bad(void)
{
	t_begin("ipfix: bad collectors and configurations");
	struct secho_ipfix *x;
	char err[256];
	struct secho_ipfix_cfg bad = {.mtu = 100};
	T_CHECK(secho_ipfix_new(&x, &bad) == -EINVAL, "mtu 100 accepted");
	struct secho_ipfix_cfg cfg = {0};
	T_CHECK(secho_ipfix_new(&x, &cfg) == 0, "new");
	static const char *urls[] = {"udp:/127.0.0.1",
	                             "http://127.0.0.1",
	                             "udp://127.0.0.1:0",
	                             "udp://127.0.0.1:70000",
	                             "udp://:4739",
	                             "tcp://[::1",
	                             "udp://::1:4739",
	                             "file:",
	                             "file:/nonexistent/dir/x"};
	for (size_t i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
		err[0] = 0;
		int rc = secho_ipfix_add_collector(x, urls[i], err, sizeof(err));
		T_CHECK(rc < 0 && err[0], "'%s' accepted (rc %d)", urls[i], rc);
	}
	T_CHECK(secho_ipfix_add_collector(x, "udp://127.0.0.1", err, sizeof(err)) == 0,
	        "default port: %s", err);
	T_CHECK(secho_ipfix_add_collector(x, "udp://[::1]:4739", err, sizeof(err)) == 0 ||
	                strstr(err, "::1"),
	        "IPv6 in brackets: %s", err);
	secho_ipfix_close(x, 0, NULL, 0);
	t_end();
}

/* The collector URL grammar (secho_ipfix_parse_url): the forms `secho flow --collector`
 * accepts, and a reason for each it refuses. */
static void test_url(void)
{
	static const struct {
		const char *url, *host, *port, *path;
		enum secho_ipfix_transport t;
	} good[] = {
	        {"udp://127.0.0.1", "127.0.0.1", "4739", NULL, SECHO_IPFIX_UDP},
	        {"tcp://collector.example:9995", "collector.example", "9995", NULL,
	         SECHO_IPFIX_TCP},
	        {"udp://[2001:db8::1]:4740", "2001:db8::1", "4740", NULL, SECHO_IPFIX_UDP},
	        {"tcp://[::1]", "::1", "4739", NULL, SECHO_IPFIX_TCP},
	        {"udp://my_host-1:65535", "my_host-1", "65535", NULL, SECHO_IPFIX_UDP},
	        {"udp://h:0004739", "h", "4739", NULL, SECHO_IPFIX_UDP},
	        {"file:/tmp/x.ipfix", "", "", "/tmp/x.ipfix", SECHO_IPFIX_FILE},
	};
	static const char *const bad[] = {"ftp://h:1",
	                                  "udp://",
	                                  "udp://h:0",
	                                  "tcp://h:65536",
	                                  "udp://[::1",
	                                  "udp://a b:9",
	                                  "file:",
	                                  "udp://h:",
	                                  "udp://h:+5",
	                                  "udp://::1:4739",
	                                  "udp://[]:1",
	                                  "udp://[::1]x",
	                                  "udp:/h",
	                                  "UDP://h",
	                                  "udp://[fe80::1%eth0]",
	                                  "udp://h:1x",
	                                  "tcp://h:99999999999999999999"};
	struct secho_ipfix_url u;
	char err[128];

	t_begin("collector URLs: one grammar");
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		int rc = secho_ipfix_parse_url(good[i].url, &u, err, sizeof(err));
		T_CHECK(rc == 0 && u.transport == good[i].t && !strcmp(u.host, good[i].host) &&
		                (good[i].t == SECHO_IPFIX_FILE || !strcmp(u.port, good[i].port)) &&
		                (!good[i].path || (u.path && !strcmp(u.path, good[i].path))),
		        "'%s': rc %d host '%s' port '%s'", good[i].url, rc, u.host, u.port);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		int rc = secho_ipfix_parse_url(bad[i], &u, err, sizeof(err));
		T_CHECK(rc == -EINVAL && err[0] && !strchr(err, '\n'), "'%s' accepted (rc %d)",
		        bad[i], rc);
	}
	t_end();
}

/* A TCP connection that comes up after the stream used every variant: all 253 templates
 * (about 70 KB in biflow mode at an MTU of 576: more than the smallest queue, 64 KiB) go
 * first, whole, in messages of at most the MTU; the data that no longer fits is counted as
 * not delivered, never written past the queue. */
static void test_tcp_all_templates(void)
{
	t_begin("ipfix: TCP: every variant's template on a new connection, beyond the queue size");
	int ls = socket(AF_INET, SOCK_STREAM, 0), fd = -1;
	struct sockaddr_in a = {.sin_family = AF_INET};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t al = sizeof(a);
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 1) ||
	    getsockname(ls, (struct sockaddr *)&a, &al)) {
		if (ls >= 0)
			close(ls);
		t_unavailable("no TCP socket on 127.0.0.1");
		return;
	}
	char url[64], err[256];
	snprintf(url, sizeof(url), "tcp://127.0.0.1:%u", ntohs(a.sin_port));
	struct secho_ipfix *x;
	struct secho_ipfix_cfg cfg = {
	        .odid = 3, .biflow = true, .mtu = 576, .tcp_queue_bytes = 65536};
	T_CHECK(secho_ipfix_new(&x, &cfg) == 0, "new");
	T_CHECK(secho_ipfix_add_collector(x, url, err, sizeof(err)) == 0, "add: %s", err);
	const uint64_t t0 = 1800000000ull * 1000000000ull;
	uint8_t t[512];
	unsigned nv = 0;
	/* every variant's record while the connection is still being made */
	for (unsigned v = 0; v < SECHO_IPFIX_VARIANTS; v++) {
		if (!secho_ipfix_template_set(true, v, t))
			continue;
		struct secho_flow_rec r = variant_rec(v);
		secho_ipfix_record(x, &r, t0);
		nv++;
	}
	/* connect, send, read: bounded (at most 2000 rounds of 1 ms; done after 50 rounds
	 * without data once some came) */
	static uint8_t in[1 << 18];
	size_t got = 0;
	for (int i = 0, idle = 0; i < 2000 && got < sizeof(in) && idle < 50; i++) {
		secho_ipfix_tick(x, t0 + (uint64_t)i * 1000000u, NULL);
		if (fd < 0) {
			struct pollfd p = {.fd = ls, .events = POLLIN};
			if (poll(&p, 1, 0) == 1)
				fd = accept(ls, NULL, NULL);
		}
		ssize_t n = fd >= 0 ? recv(fd, in + got, sizeof(in) - got, MSG_DONTWAIT) : -1;
		if (n > 0) {
			got += (size_t)n;
			idle = 0;
			continue;
		}
		idle += got > 0;
		usleep(1000);
	}
	/* walk the stream: whole messages within the MTU; count the templates */
	unsigned tmpl = 0, opts = 0, msgs = 0;
	size_t o = 0;
	while (o + 16 <= got) {
		size_t ml = (size_t)rd(in + o + 2, 2);
		if (rd(in + o, 2) != 10 || ml < 16 || ml > 576 || o + ml > got)
			break;
		tmpl += (unsigned)count_set(in + o, ml, 2);
		opts += (unsigned)count_set(in + o, ml, 3);
		msgs++;
		o += ml;
	}
	T_CHECK(o == got && got > 65536, "%zu bytes read, %zu of them whole messages", got, o);
	T_CHECK(nv == 504 && tmpl == nv && opts == 1,
	        "%u templates and %u options templates in %u messages, want %u and 1", tmpl, opts,
	        msgs, nv);
	struct secho_ipfix_stats st;
	secho_ipfix_get_stats(x, &st);
	T_CHECK(st.c[0].template_records == nv + 1 && st.c[0].connected,
	        "template_records %llu, connected %d", (unsigned long long)st.c[0].template_records,
	        st.c[0].connected);
	secho_ipfix_close(x, t0 + 3000000000ull, &st, 100);
	if (fd >= 0)
		close(fd);
	close(ls);
	t_end();
}

int main(void)
{
	test_url();
	test_templates();
	test_records();
	test_variants();
	test_messages_file();
	test_udp_timers();
	test_udp_batch();
	test_udp_refused();
	test_tcp_all_templates();
	test_bad();
	return t_exit();
}
