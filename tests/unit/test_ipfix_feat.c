/*
 * tests/unit/test_ipfix_feat.c - the feature sets' IPFIX encoding (src/flow/export/ipfix_feat.h)
 * and the templates of records with features (ipfix.h, secho_ipfix_feat_template_set).
 *
 *   - every set's data from a state filled in by hand, against bytes written out by hand from
 *     ipfixprobe's element list (PEN 8057 and 39499, IDs, lengths), RFC 7011 section 7
 *     (variable-length strings) and RFC 6313 (basicList: 255, length, semantic 3, field ID with
 *     the enterprise bit, element length, PEN 8057, the values);
 *   - basicLists of 0, 1 and the most entries (pstats' 30), variable-length values of 0,
 *     254, 255 and 300 bytes (no set's field reaches 255 bytes: the writer they share);
 *   - which sets a record carries (ipfixprobe's rules: nothing found, a lone SYN, few packets);
 *   - the template set of a record with features, and the exporter through a file: a
 *     template of ID 1024 and up before the first record that needs it, the plain records'
 *     templates and bytes unchanged, sets left out from the last while a record would not fit
 *     the MTU; over UDP, the feature template again at every refresh.
 * End to end with tshark: tests/sh/test_flow_features.sh.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "flow/export/ipfix.h"
#include "flow/export/ipfix_feat.h"
#include "flow/feature/bstats.h"
#include "flow/feature/dns.h"
#include "flow/feature/http.h"
#include "flow/feature/phists.h"
#include "flow/feature/pstats.h"
#include "flow/feature/quic.h"
#include "flow/feature/sets.h"
#include "flow/feature/tls.h"
#include "flow/feature/wg.h"
#include "harness.h"

/* Expected bytes as hex, grouped by field with spaces. */
static void check_hex(const char *what, const uint8_t *got, size_t n, const char *hex)
{
	static uint8_t want[8192];
	static char clean[16384];
	size_t c = 0;
	for (const char *h = hex; *h && c + 1 < sizeof(clean); h++)
		if (*h != ' ')
			clean[c++] = *h;
	clean[c] = 0;
	long wl = t_unhex(clean, want, sizeof(want));
	T_CHECK(wl == (long)n, "%s: %zu bytes, expected %ld", what, n, wl);
	if (wl == (long)n && memcmp(got, want, n) != 0) {
		T_CHECK(0, "%s differs", what);
		t_hexdump("got", got, n);
		t_hexdump("want", want, n);
	}
}

static void set_str(char *dst, uint8_t *len, const char *s)
{
	*len = (uint8_t)strlen(s);
	memcpy(dst, s, *len);
}

/* ---- variable-length values ---- */

static void test_varlen(void)
{
	t_begin("ipfix feat: variable-length values (RFC 7011 7) of 0, 3, 254, 255, 300 bytes");
	static uint8_t in[300], out[400], want[400];
	for (unsigned i = 0; i < sizeof(in); i++)
		in[i] = (uint8_t)(i * 7 + 1);
	size_t n = secho_ipfix_varlen(out, in, 0);
	T_CHECK(n == 1 && out[0] == 0, "empty: %zu bytes, first %02x", n, out[0]);
	n = secho_ipfix_varlen(out, "abc", 3);
	check_hex("3 bytes", out, n, "03 616263");
	/* 254: one length byte; 255 and more: 255 then two length bytes */
	unsigned lens[3] = {254, 255, 300};
	for (unsigned k = 0; k < 3; k++) {
		unsigned l = lens[k], h = l < 255 ? 1 : 3;
		if (l < 255) {
			want[0] = (uint8_t)l;
		} else {
			want[0] = 0xff;
			want[1] = (uint8_t)(l >> 8);
			want[2] = (uint8_t)l;
		}
		memcpy(want + h, in, l);
		n = secho_ipfix_varlen(out, in, l);
		T_CHECK(n == h + l && !memcmp(out, want, n), "%u bytes: wrote %zu, want %u", l, n,
		        h + l);
	}
	t_end();
}

/* ---- each set ---- */

static void test_tls(void)
{
	t_begin("ipfix feat: tls as ipfixprobe's TLS plugin (39499/333, 8057/808, 39499/337, "
	        "39499/357, 8057/809, basicLists of 8057/802-803), then Flowmon's 39499/340, 336, "
	        "349, 350, 352, 353, 355");
	static struct secho_feat_tls s;
	uint8_t out[1024];
	memset(&s, 0, sizeof(s));
	s.flags = SECHO_FEAT_TLS_F_CH | SECHO_FEAT_TLS_F_SH | SECHO_FEAT_TLS_F_SNI |
	          SECHO_FEAT_TLS_F_SALPN | SECHO_FEAT_TLS_F_JA3 | SECHO_FEAT_TLS_F_JA4;
	s.client_legacy_version = 0x0303;
	s.client_version = 0x0304;
	s.server_version = 0x0304;
	set_str(s.sni, &s.sni_len, "a.b");
	set_str(s.alpn, &s.alpn_len, "h2");
	set_str(s.alpn_offer, &s.alpn_offer_len, "h2,http/1.1"); /* JSON only */
	for (unsigned i = 0; i < 16; i++)
		s.ja3[i] = (uint8_t)i;
	memcpy(s.ja4, "t13d1516h2_8daaf6152771_e5627efa2ab1", SECHO_TLS_JA4_LEN);
	s.n_ext = 2;
	s.ext_type[0] = 0x0000;
	s.ext_type[1] = 0x002b;
	s.ext_len[0] = 7;
	s.ext_len[1] = 3;
	s.cipher_suite = 0x1302;
	/* certificate fields without F_CERT (TLS 1.3: encrypted, never read) go out empty */
	set_str(s.issuer_cn, &s.issuer_cn_len, "CA");
	s.pk_nid = 6;
	size_t n = secho_ipfix_feat_set_encode(SECHO_FEAT_SET_TLS, &s, out);
	check_hex("tls, both hellos", out, n,
	          "0304 "                                /* the ServerHello's version */
	          "03 612e62 "                           /* SNI */
	          "02 6832 "                             /* the server's ALPN */
	          "10 000102030405060708090a0b0c0d0e0f " /* JA3: 16-byte MD5 */
	          "24 743133643135313668325f3864616166363135323737315f653536323765666132616231 "
	          "ff 000d 03 8322 0002 00001f79 0000 002b " /* extension types */
	          "ff 000d 03 8323 0002 00001f79 0007 0003 " /* their lengths */
	          "0304 1302 "                               /* client version, cipher suite */
	          "00 00 0000000000000000 0000000000000000 0000"); /* no certificate */
	/* TLS 1.2 with the server's certificate: its CNs, dates (signed seconds) and NID */
	s.flags |= SECHO_FEAT_TLS_F_CERT | SECHO_FEAT_TLS_F_VALIDITY;
	s.client_version = s.server_version = 0x0303;
	s.cipher_suite = 0xc02f;
	set_str(s.subject_cn, &s.subject_cn_len, "a.b");
	s.not_before = 1480291200;
	s.not_after = -1; /* a date before 1970 */
	n = secho_ipfix_feat_set_encode(SECHO_FEAT_SET_TLS, &s, out);
	T_CHECK(n > 29, "length %zu", n);
	check_hex("tls 1.2 with a certificate, its last 29 bytes", out + n - 29, 29,
	          "0303 c02f 02 4341 03 612e62 00000000583b7380 ffffffffffffffff 0006");
	/* a ClientHello only, no fingerprints: the client's legacy_version, empty strings, a zero
	 * JA3 (ipfixprobe's 16 bytes always), empty lists */
	memset(&s, 0, sizeof(s));
	s.flags = SECHO_FEAT_TLS_F_CH;
	s.client_legacy_version = 0x0301;
	s.client_version = 0x0303;
	n = secho_ipfix_feat_set_encode(SECHO_FEAT_SET_TLS, &s, out);
	check_hex("tls, ClientHello only", out, n,
	          "0301 00 00 10 00000000000000000000000000000000 00 "
	          "ff 0009 03 8322 0002 00001f79 ff 0009 03 8323 0002 00001f79 "
	          "0303 0000 00 00 0000000000000000 0000000000000000 0000");
	t_end();
}

static void test_quic(void)
{
	t_begin("ipfix feat: quic as ipfixprobe's QUIC plugin (8057/884-898)");
	static struct secho_feat_quic s;
	uint8_t out[1024];
	memset(&s, 0, sizeof(s));
	s.quic = 1;
	s.hello = SECHO_QUIC_H_PARSED | SECHO_QUIC_H_SNI | SECHO_QUIC_H_UA;
	set_str(s.sni, &s.sni_len, "q.t");
	set_str(s.ua, &s.ua_len, "ua");
	s.version = 1;
	s.client_version = 0x6b3343cf;
	s.token_len = 5;
	s.occid_len = 2;
	s.occid[0] = 0xaa;
	s.occid[1] = 0xbb;
	s.oscid_len = 4;
	memcpy(s.oscid, "\x01\x02\x03\x04", 4);
	s.server_seen = 1;
	s.scid_len = 1;
	s.scid[0] = 0xcc;
	s.zero_rtt = 2;
	s.server_port = 443;
	s.n_ext = 1;
	s.ext_type[0] = 0x39;
	s.ext_len[0] = 0x40;
	size_t n = secho_ipfix_feat_set_encode(SECHO_FEAT_SET_QUIC, &s, out);
	check_hex("quic", out, n,
	          "03 712e74 02 7561 "            /* SNI, user agent */
	          "00000001 6b3343cf "            /* version, client version */
	          "0000000000000005 "             /* token length */
	          "02 aabb 04 01020304 01 cc 00 " /* OCCID, OSCID, SCID, retry SCID */
	          "02 01bb 01 "                   /* 0-RTT, server port, ClientHello parsed */
	          "ff 000b 03 8375 0002 00001f79 0039 "
	          "ff 000b 03 8374 0002 00001f79 0040");
	t_end();
}

static void test_dns(void)
{
	t_begin("ipfix feat: dns as ipfixprobe's DNS plugin (8057/1-10, 14), then Flowmon's "
	        "dnsFlagsCodes (39499/111)");
	static struct secho_feat_dns s;
	uint8_t out[1024];
	memset(&s, 0, sizeof(s));
	s.seen = 3;
	struct secho_dns_msg *q = &s.msg[0], *r = &s.msg[1];
	q->id = 0x1234;
	q->flags = 0x0120;
	q->has_question = 1;
	set_str(q->qname, &q->qname_len, "ab.c");
	q->qtype = 1;
	q->qclass = 1;
	q->has_opt = 1;
	q->psize = 1232;
	q->dnssec_ok = 1;
	r->id = 0x1234;
	r->flags = 0x8183;
	r->ancount = 2;
	r->nrr = 1;
	r->rr[0].ttl = 300;
	set_str(r->rr[0].data, &r->rr[0].data_len, "1.2.3.4");
	size_t n = secho_ipfix_feat_set_encode(SECHO_FEAT_SET_DNS, &s, out);
	check_hex("dns", out, n,
	          "0002 03 0001 0001 0000012c 0007 04d0 01 1234 " /* answers .. ID */
	          "04 61622e63 07 312e322e332e34 "                /* name, rdata */
	          "0120");                                        /* the query's flags */
	/* a query only */
	s.seen = 1;
	n = secho_ipfix_feat_set_encode(SECHO_FEAT_SET_DNS, &s, out);
	check_hex("dns, query only", out, n,
	          "0000 00 0001 0001 00000000 0000 04d0 01 1234 "
	          "04 61622e63 00 0120");
	/* a response only (a uniflow record of the server's direction): its flags */
	s.seen = 2;
	n = secho_ipfix_feat_set_encode(SECHO_FEAT_SET_DNS, &s, out);
	T_CHECK(n >= 2 && out[n - 2] == 0x81 && out[n - 1] == 0x83, "response only: flags %02x%02x",
	        n >= 2 ? out[n - 2] : 0, n >= 2 ? out[n - 1] : 0);
	t_end();
}

static void test_http_wg(void)
{
	t_begin("ipfix feat: http (39499/1-3, 10, 12, 20; 8057/200-201) and wg (8057/1100-1102)");
	static struct secho_feat_http h;
	uint8_t out[1024];
	memset(&h, 0, sizeof(h));
	h.f.have_req = h.f.have_resp = 1;
	set_str(h.f.method.s, &h.f.method.len, "GET");
	set_str(h.f.url.s, &h.f.url.len, "/x");
	set_str(h.f.host.s, &h.f.host.len, "h");
	set_str(h.f.agent.s, &h.f.agent.len, "ua/1");
	h.f.status = 200;
	set_str(h.f.ctype.s, &h.f.ctype.len, "t/p");
	set_str(h.f.server.s, &h.f.server.len, "s");
	size_t n = secho_ipfix_feat_set_encode(SECHO_FEAT_SET_HTTP, &h, out);
	check_hex("http", out, n,
	          "04 75612f31 03 474554 01 68 00 02 2f78 " /* agent, method, host, referer, URI */
	          "03 742f70 01 73 00c8");                  /* content type, server, status */
	struct secho_feat_wg w;
	memset(&w, 0, sizeof(w));
	w.seen = 1;
	w.conf = 100;
	w.src_peer = 0x01020304;
	w.dst_peer = 0xa0b0c0d0;
	n = secho_ipfix_feat_set_encode(SECHO_FEAT_SET_WG, &w, out);
	check_hex("wg", out, n, "64 01020304 a0b0c0d0");
	t_end();
}

static void test_pstats(void)
{
	t_begin("ipfix feat: pstats basicLists of 0, 1, 2 and 30 entries (8057/1013-1016)");
	static struct secho_feat_pstats s;
	static uint8_t out[2048], want[2048];
	memset(&s, 0, sizeof(s));
	size_t n = secho_ipfix_feat_set_encode(SECHO_FEAT_SET_PSTATS, &s, out);
	check_hex("pstats, no packet", out, n,
	          "ff 0009 03 83f5 0002 00001f79 ff 0009 03 83f6 0008 00001f79 "
	          "ff 0009 03 83f7 0001 00001f79 ff 0009 03 83f8 0001 00001f79");
	s.count = 1;
	s.pkt[0].size = 100;
	secho_pstats_set_ts(&s.pkt[0], 1700000000123456789ull);
	s.pkt[0].flags = 0x02;
	s.pkt[0].dir = 1;
	n = secho_ipfix_feat_set_encode(SECHO_FEAT_SET_PSTATS, &s, out);
	check_hex("pstats, one packet", out, n,
	          "ff 000b 03 83f5 0002 00001f79 0064 "
	          "ff 0011 03 83f6 0008 00001f79 0000018bcfe5687b " /* ms, floored */
	          "ff 000a 03 83f7 0001 00001f79 02 "
	          "ff 000a 03 83f8 0001 00001f79 01");
	s.count = 2;
	s.pkt[1].size = 0x1234;
	secho_pstats_set_ts(&s.pkt[1], 1700000000124999999ull);
	s.pkt[1].flags = 0x12;
	s.pkt[1].dir = -1;
	n = secho_ipfix_feat_set_encode(SECHO_FEAT_SET_PSTATS, &s, out);
	check_hex("pstats, two packets", out, n,
	          "ff 000d 03 83f5 0002 00001f79 0064 1234 "
	          "ff 0019 03 83f6 0008 00001f79 0000018bcfe5687b 0000018bcfe5687c "
	          "ff 000b 03 83f7 0001 00001f79 02 12 "
	          "ff 000b 03 83f8 0001 00001f79 01 ff");
	/* the most: 30 of each; the expected bytes laid out here field by field */
	s.count = SECHO_PSTATS_MAX;
	for (unsigned i = 0; i < SECHO_PSTATS_MAX; i++) {
		s.pkt[i].size = (uint16_t)(1000 + i);
		secho_pstats_set_ts(&s.pkt[i], (uint64_t)(5000 + i) * 1000000u + 999999u);
		s.pkt[i].flags = (uint8_t)(0x10 | i);
		s.pkt[i].dir = (int8_t)(i & 1 ? -1 : 1);
	}
	uint8_t *p = want;
	const uint16_t ids[4] = {0x83f5, 0x83f6, 0x83f7, 0x83f8}, el[4] = {2, 8, 1, 1};
	for (unsigned l = 0; l < 4; l++) {
		unsigned len = 9 + 30 * el[l];
		*p++ = 0xff;
		*p++ = (uint8_t)(len >> 8);
		*p++ = (uint8_t)len;
		*p++ = 3;
		*p++ = (uint8_t)(ids[l] >> 8);
		*p++ = (uint8_t)ids[l];
		*p++ = 0;
		*p++ = (uint8_t)el[l];
		*p++ = 0;
		*p++ = 0;
		*p++ = 0x1f;
		*p++ = 0x79;
		for (unsigned i = 0; i < 30; i++) {
			if (l == 0) {
				*p++ = (uint8_t)((1000 + i) >> 8);
				*p++ = (uint8_t)(1000 + i);
			} else if (l == 1) {
				memset(p, 0, 6);
				p[6] = (uint8_t)((5000 + i) >> 8);
				p[7] = (uint8_t)(5000 + i);
				p += 8;
			} else if (l == 2) {
				*p++ = (uint8_t)(0x10 | i);
			} else {
				*p++ = i & 1 ? 0xff : 0x01;
			}
		}
	}
	n = secho_ipfix_feat_set_encode(SECHO_FEAT_SET_PSTATS, &s, out);
	T_CHECK(n == (size_t)(p - want) && !memcmp(out, want, n),
	        "pstats, 30 packets: %zu bytes, want %zu (4 x 12 + 30 x 12)", n,
	        (size_t)(p - want));
	t_end();
}

static void test_phists_bstats(void)
{
	t_begin("ipfix feat: phists (8057/1060-1063, ipfixprobe's order) and bstats "
	        "(8057/1050-1057)");
	static struct secho_feat_phists h;
	static struct secho_feat_bstats b;
	static uint8_t out[2048];
	memset(&h, 0, sizeof(h));
	h.counted = 1;
	for (unsigned i = 0; i < SECHO_PHISTS_BINS; i++) {
		h.d[0].size[i] = i + 1;
		h.d[1].size[i] = 0x10 + i;
		h.d[0].ipt[i] = 0x20 + i;
		h.d[1].ipt[i] = 0x30 + i;
	}
	size_t n = secho_ipfix_feat_set_encode(SECHO_FEAT_SET_PHISTS, &h, out);
	check_hex("phists", out, n,
	          "ff 0029 03 8424 0004 00001f79 00000001 00000002 00000003 00000004 00000005 "
	          "00000006 00000007 00000008 "
	          "ff 0029 03 8426 0004 00001f79 00000010 00000011 00000012 00000013 00000014 "
	          "00000015 00000016 00000017 "
	          "ff 0029 03 8425 0004 00001f79 00000020 00000021 00000022 00000023 00000024 "
	          "00000025 00000026 00000027 "
	          "ff 0029 03 8427 0004 00001f79 00000030 00000031 00000032 00000033 00000034 "
	          "00000035 00000036 00000037");
	memset(&b, 0, sizeof(b));
	/* forward: one closed burst, and a candidate of 2 packets (not a burst) */
	b.d[0].count = 1;
	b.d[0].pkts[0] = 5;
	b.d[0].bytes[0] = 1000;
	b.d[0].start_ns[0] = 2000000000ull;
	b.d[0].stop_ns[0] = 3500000001ull;
	b.d[0].started = 1;
	b.d[0].pkts[1] = 2;
	/* reverse: no closed burst, a candidate of 3 packets (a burst at export) */
	b.d[1].started = 1;
	b.d[1].pkts[0] = 3;
	b.d[1].bytes[0] = 90;
	b.d[1].start_ns[0] = 4000000000ull;
	b.d[1].stop_ns[0] = 4500999999ull;
	n = secho_ipfix_feat_set_encode(SECHO_FEAT_SET_BSTATS, &b, out);
	check_hex("bstats", out, n,
	          "ff 000d 03 841a 0004 00001f79 00000005 "
	          "ff 000d 03 841b 0004 00001f79 000003e8 "
	          "ff 0011 03 841c 0008 00001f79 00000000000007d0 "
	          "ff 0011 03 841d 0008 00001f79 0000000000000dac "
	          "ff 000d 03 841e 0004 00001f79 00000003 "
	          "ff 000d 03 841f 0004 00001f79 0000005a "
	          "ff 0011 03 8420 0008 00001f79 0000000000000fa0 "
	          "ff 0011 03 8421 0008 00001f79 0000000000001194");
	t_end();
}

/* ---- records: carried sets, templates, the exporter ---- */

static uint64_t area[(SECHO_FEAT_TLS_SIZE + SECHO_FEAT_QUIC_BYTES + SECHO_FEAT_DNS_SIZE +
                      SECHO_FEAT_HTTP_SIZE + SECHO_FEAT_WG_SIZE + SECHO_FEAT_PSTATS_SIZE +
                      SECHO_FEAT_PHISTS_SIZE + SECHO_FEAT_BSTATS_SIZE + 64) /
                     8];
static struct secho_feat_layout lay;

static void *st(unsigned set)
{
	return (uint8_t *)area + lay.off[set];
}

/* An IPv4 UDP uniflow record with the sets in sets on, all states zero. */
static struct secho_flow_rec rec_with(uint32_t sets)
{
	struct secho_flow_rec r;
	memset(&r, 0, sizeof(r));
	memset(area, 0, sizeof(area));
	secho_feat_layout_make(sets, &lay);
	r.key.ip_version = 4;
	r.key.proto = 17;
	memcpy(r.key.src, "\xc0\x00\x02\x01", 4);
	memcpy(r.key.dst, "\xc0\x00\x02\x02", 4);
	r.key.sport = 5353;
	r.key.dport = 53;
	r.fwd.packets = 2;
	r.fwd.octets = 120;
	r.fwd.first_ns = 1700000000000000000ull;
	r.fwd.last_ns = 1700000000500000000ull;
	r.end_reason = 1;
	secho_feat_sets_area(&lay, (const uint8_t *)area, r.feat_sec);
	r.feat_layout = &lay;
	r.feat_live = sets;
	return r;
}

#define B(s) (1u << SECHO_FEAT_SET_##s)

static void test_carried(void)
{
	t_begin("ipfix feat: the sets a record carries (ipfixprobe: nothing found, lone SYN, "
	        "few packets)");
	struct secho_flow_rec r = rec_with(SECHO_FEAT_ALL);
	/* nothing found: only the statistics sets, by their rules (2 packets, no SYN) */
	T_CHECK(secho_ipfix_feat_carried(&r) == (B(PSTATS) | B(PHISTS)), "empty states: %#x",
	        secho_ipfix_feat_carried(&r));
	((struct secho_feat_dns *)st(SECHO_FEAT_SET_DNS))->seen = 2;
	((struct secho_feat_wg *)st(SECHO_FEAT_SET_WG))->seen = 1;
	((struct secho_feat_quic *)st(SECHO_FEAT_SET_QUIC))->quic = 1;
	((struct secho_feat_http *)st(SECHO_FEAT_SET_HTTP))->f.have_resp = 1;
	/* a ServerHello without the ClientHello: ipfixprobe adds no TLS record */
	((struct secho_feat_tls *)st(SECHO_FEAT_SET_TLS))->flags = SECHO_FEAT_TLS_F_SH;
	r.fwd.packets = 4;
	T_CHECK(secho_ipfix_feat_carried(&r) == (SECHO_FEAT_ALL & ~B(TLS)),
	        "4 packets, no ClientHello: %#x", secho_ipfix_feat_carried(&r));
	((struct secho_feat_tls *)st(SECHO_FEAT_SET_TLS))->flags |= SECHO_FEAT_TLS_F_CH;
	T_CHECK(secho_ipfix_feat_carried(&r) == SECHO_FEAT_ALL, "4 packets, all: %#x",
	        secho_ipfix_feat_carried(&r));
	/* a lone SYN: no pstats, no phists, no bstats */
	r.key.proto = 6;
	r.fwd.packets = 1;
	r.fwd.tcp_flags = 0x02;
	T_CHECK(secho_ipfix_feat_carried(&r) ==
	                (SECHO_FEAT_ALL & ~(B(PSTATS) | B(PHISTS) | B(BSTATS))),
	        "lone SYN: %#x", secho_ipfix_feat_carried(&r));
	/* sets that are off are never carried; no feature area, nothing */
	r = rec_with(B(DNS));
	((struct secho_feat_dns *)st(SECHO_FEAT_SET_DNS))->seen = 1;
	T_CHECK(secho_ipfix_feat_carried(&r) == B(DNS), "dns only: %#x",
	        secho_ipfix_feat_carried(&r));
	r.feat_layout = NULL;
	T_CHECK(secho_ipfix_feat_carried(&r) == 0, "no area: %#x", secho_ipfix_feat_carried(&r));
	/* sets on but not live in the record: their sections hold an earlier record's bytes,
	 * which are not read; they export as sets that found nothing (the statistics sets:
	 * empty lists, by their rules) */
	r = rec_with(SECHO_FEAT_ALL);
	r.fwd.packets = 4;
	memset(area, 0xa5, sizeof(area));
	r.feat_live = 0;
	T_CHECK(secho_ipfix_feat_carried(&r) == (B(PSTATS) | B(PHISTS) | B(BSTATS)),
	        "nothing live: %#x", secho_ipfix_feat_carried(&r));
	uint8_t enc[SECHO_IPFIX_FEAT_REC_MAX];
	size_t en = secho_ipfix_feat_encode(&r, B(PSTATS), enc);
	check_hex("pstats not live", enc, en,
	          "ff 0009 03 83f5 0002 00001f79 ff 0009 03 83f6 0008 00001f79 "
	          "ff 0009 03 83f7 0001 00001f79 ff 0009 03 83f8 0001 00001f79");
	r.feat_live = B(DNS);
	((struct secho_feat_dns *)st(SECHO_FEAT_SET_DNS))->seen = 0;
	T_CHECK(secho_ipfix_feat_carried(&r) == (B(PSTATS) | B(PHISTS) | B(BSTATS)),
	        "dns live, found nothing: %#x", secho_ipfix_feat_carried(&r));
	((struct secho_feat_dns *)st(SECHO_FEAT_SET_DNS))->seen = 1;
	T_CHECK(secho_ipfix_feat_carried(&r) == (B(DNS) | B(PSTATS) | B(PHISTS) | B(BSTATS)),
	        "dns live, found a query: %#x", secho_ipfix_feat_carried(&r));
	t_end();
}

static void test_template(void)
{
	t_begin("ipfix feat: template set = the plain variant's elements, then each set's");
	struct secho_flow_rec r = rec_with(B(DNS) | B(WG));
	uint8_t plain[1024], t[1024], f[1024];
	unsigned nf;
	size_t pl = secho_ipfix_template_set(false, 0, plain); /* IPv4, not TCP: variant 0 */
	size_t tl = secho_ipfix_feat_template_set(false, &r, B(DNS) | B(WG), 1030, t);
	T_CHECK(pl > 8 && tl > pl, "lengths %zu, %zu", pl, tl);
	/* header: set ID 2, length, template ID, field count = plain + 12 + 3 */
	T_CHECK(t[0] == 0 && t[1] == 2 && (size_t)(t[2] << 8 | t[3]) == tl, "set header");
	T_CHECK((t[4] << 8 | t[5]) == 1030, "template ID %u", t[4] << 8 | t[5]);
	T_CHECK((t[6] << 8 | t[7]) == (plain[6] << 8 | plain[7]) + 15, "field count %u, plain %u",
	        t[6] << 8 | t[7], plain[6] << 8 | plain[7]);
	T_CHECK(!memcmp(t + 8, plain + 8, pl - 8), "the plain template's fields first");
	check_hex("dns and wg field specifiers", t + pl, tl - pl,
	          "800e 0002 00001f79 8001 0001 00001f79 8003 0002 00001f79 "
	          "8004 0002 00001f79 8005 0004 00001f79 8006 0002 00001f79 "
	          "8008 0002 00001f79 8009 0001 00001f79 800a 0002 00001f79 "
	          "8002 ffff 00001f79 8007 ffff 00001f79 806f 0002 00009a4b "
	          "844c 0001 00001f79 844d 0004 00001f79 844e 0004 00001f79");
	/* biflow: the biflow variant's elements (template 258's), then the same sets' */
	pl = secho_ipfix_template_set(true, 0, plain);
	size_t bl = secho_ipfix_feat_template_set(true, &r, B(DNS) | B(WG), 1031, t);
	T_CHECK(bl == pl + 15 * 8 && !memcmp(t + 8, plain + 8, pl - 8) &&
	                (t[6] << 8 | t[7]) == (plain[6] << 8 | plain[7]) + 15,
	        "biflow: %zu bytes, want the plain biflow template's %zu and 120", bl, pl);
	size_t fl = secho_ipfix_feat_fields(B(TLS) | B(PSTATS), f, &nf);
	T_CHECK(nf == 18, "tls + pstats: %u fields", nf);
	check_hex("tls and pstats field specifiers", f, fl,
	          "814d 0002 00009a4b 8328 ffff 00001f79 8151 ffff 00009a4b "
	          "8165 ffff 00009a4b 8329 ffff 00001f79 0123 ffff 0123 ffff "
	          "8154 0002 00009a4b 8150 0002 00009a4b 815d ffff 00009a4b "
	          "815e ffff 00009a4b 8160 0008 00009a4b 8161 0008 00009a4b "
	          "8163 0002 00009a4b "
	          "0123 ffff 0123 ffff 0123 ffff 0123 ffff");
	fl = secho_ipfix_feat_fields(SECHO_FEAT_ALL, f, &nf);
	T_CHECK(nf == 67 && fl <= SECHO_IPFIX_FEAT_TMPL_MAX, "all: %u fields, %zu bytes", nf, fl);
	/* the largest template set of a record with features fits the exporter's buffer */
	size_t most = 0;
	for (int bi = 0; bi < 2; bi++)
		for (unsigned v = 0; v < SECHO_IPFIX_VARIANTS; v++) {
			size_t n = secho_ipfix_template_set(bi, v, plain);
			most = n > most ? n : most;
		}
	T_CHECK(most + fl <= SECHO_IPFIX_FEAT_TSET_MAX,
	        "a plain template set of %zu bytes and %zu of "
	        "every set's specifiers: over %d",
	        most, fl, SECHO_IPFIX_FEAT_TSET_MAX);
	t_end();
}

/* The sets of an IPFIX file: calls fn(set id, body, length, ctx) for each. */
struct seen {
	unsigned tmpl_1024, data_1024, tmpl_1025, data_1025, data_256, tmpl_256;
	size_t len_1024, len_1025, len_256;
	uint8_t rec_1024[4096];
	size_t msgs_over_mtu;
};

static void walk(const uint8_t *b, size_t n, size_t mtu, struct seen *s)
{
	size_t o = 0;
	while (o + 16 <= n) {
		size_t ml = (size_t)(b[o + 2] << 8 | b[o + 3]);
		if (ml < 16 || o + ml > n)
			break;
		if (ml > mtu)
			s->msgs_over_mtu++;
		for (size_t so = o + 16; so + 4 <= o + ml;) {
			unsigned id = (unsigned)(b[so] << 8 | b[so + 1]);
			size_t sl = (size_t)(b[so + 2] << 8 | b[so + 3]);
			if (sl < 4)
				break;
			if (id == 2) {
				for (size_t t = so + 4;
				     t + 4 <= so + sl;) { /* each template record */
					unsigned tid = (unsigned)(b[t] << 8 | b[t + 1]);
					unsigned nf = (unsigned)(b[t + 2] << 8 | b[t + 3]);
					s->tmpl_1024 += tid == 1024;
					s->tmpl_1025 += tid == 1025;
					s->tmpl_256 += tid == 256;
					t += 4;
					for (unsigned i = 0; i < nf; i++)
						t += (b[t] & 0x80) ? 8 : 4;
				}
			} else if (id == 1024) {
				s->data_1024++;
				s->len_1024 = sl - 4;
				if (sl - 4 <= sizeof(s->rec_1024))
					memcpy(s->rec_1024, b + so + 4, sl - 4);
			} else if (id == 1025) {
				s->data_1025++;
				s->len_1025 = sl - 4;
			} else if (id == 256) {
				s->data_256++;
				s->len_256 = sl - 4;
			}
			so += sl;
		}
		o += ml;
	}
}

static size_t run_export(uint32_t mtu, const struct secho_flow_rec *recs, unsigned n, uint8_t *buf,
                         size_t cap)
{
	char path[] = "/tmp/secho-ipfix-feat.XXXXXX", url[64], err[256];
	int fd = mkstemp(path);
	if (fd < 0)
		return 0;
	close(fd);
	snprintf(url, sizeof(url), "file:%s", path);
	struct secho_ipfix *x;
	struct secho_ipfix_cfg cfg = {.odid = 7, .mtu = mtu};
	size_t got = 0;
	if (secho_ipfix_new(&x, &cfg) == 0 &&
	    secho_ipfix_add_collector(x, url, err, sizeof(err)) == 0) {
		for (unsigned i = 0; i < n; i++)
			T_CHECK(secho_ipfix_record(x, &recs[i], 1700000000000000000ull) == 0,
			        "record %u", i);
		secho_ipfix_close(x, 1700000000000000000ull, NULL, 100);
		FILE *f = fopen(path, "rb");
		if (f) {
			got = fread(buf, 1, cap, f);
			fclose(f);
		}
	}
	unlink(path);
	return got;
}

static void test_export(void)
{
	t_begin("ipfix feat: the exporter: templates from 1024, plain records unchanged, MTU");
	static uint8_t buf[1 << 16], plain[512], feat[4096];
	static struct secho_flow_rec recs[3];
	uint16_t tid;
	struct seen s;

	/* one record with dns, one without features, one with dns and wg carried */
	recs[0] = rec_with(B(DNS) | B(WG));
	struct secho_feat_dns *d = st(SECHO_FEAT_SET_DNS);
	d->seen = 1;
	d->msg[0].id = 0x4242;
	d->msg[0].flags = 0x0100;
	d->msg[0].has_question = 1;
	set_str(d->msg[0].qname, &d->msg[0].qname_len, "x.y");
	size_t pl = secho_ipfix_encode(false, &recs[0], plain, &tid);
	size_t fl = secho_ipfix_feat_encode(&recs[0], B(DNS), feat);
	recs[1] = recs[0];
	recs[1].feat_layout = NULL;
	size_t n = run_export(1400, recs, 2, buf, sizeof(buf));
	memset(&s, 0, sizeof(s));
	walk(buf, n, 1400, &s);
	T_CHECK(s.tmpl_1024 == 1 && s.data_1024 == 1, "template 1024 %u times, its data %u",
	        s.tmpl_1024, s.data_1024);
	T_CHECK(s.len_1024 == pl + fl && !memcmp(s.rec_1024, plain, pl) &&
	                !memcmp(s.rec_1024 + pl, feat, fl),
	        "record 1024: %zu bytes, want the plain %zu and the features %zu", s.len_1024, pl,
	        fl);
	check_hex("dns of the exported record", s.rec_1024 + pl, fl,
	          "0000 00 0000 0000 00000000 0000 0000 00 4242 03 782e79 00 0100");
	T_CHECK(s.tmpl_256 == 1 && s.data_256 == 1 && s.len_256 == pl,
	        "the featureless record: template 256 (%u), one record (%u) of %zu bytes",
	        s.tmpl_256, s.data_256, s.len_256);

	/* the same sets on, but another record carrying other sets: a second template */
	struct secho_feat_dns dcopy = *d;
	recs[0] = rec_with(B(DNS) | B(WG));
	*(struct secho_feat_dns *)st(SECHO_FEAT_SET_DNS) = dcopy;
	static uint64_t area2[sizeof(area) / 8];
	memcpy(area2, area, sizeof(area));
	secho_feat_sets_area(&lay, (const uint8_t *)area2, recs[0].feat_sec);
	recs[2] = recs[0];
	((struct secho_feat_wg *)st(SECHO_FEAT_SET_WG))->seen = 1;
	secho_feat_sets_area(&lay, (const uint8_t *)area, recs[2].feat_sec);
	recs[1] = recs[0];
	n = run_export(1400, recs, 3, buf, sizeof(buf));
	memset(&s, 0, sizeof(s));
	walk(buf, n, 1400, &s);
	T_CHECK(s.tmpl_1024 == 1 && s.data_1024 == 1 && s.tmpl_1025 == 1 && s.data_1025 == 1,
	        "dns then dns+wg: templates 1024 x%u 1025 x%u, data sets %u, %u", s.tmpl_1024,
	        s.tmpl_1025, s.data_1024, s.data_1025);
	T_CHECK(s.len_1024 == 2 * (pl + fl), "two dns records in one set: %zu bytes", s.len_1024);
	T_CHECK(s.len_1025 == pl + fl + 9, "dns+wg: %zu bytes", s.len_1025);

	/* MTU: every set at its bound does not fit 576 bytes; the last sets are left out */
	recs[0] = rec_with(SECHO_FEAT_ALL);
	recs[0].fwd.packets = 100;
	struct secho_feat_bstats *b = st(SECHO_FEAT_SET_BSTATS);
	for (unsigned dir = 0; dir < 2; dir++)
		b->d[dir].count = SECHO_BSTATS_MAX;
	((struct secho_feat_pstats *)st(SECHO_FEAT_SET_PSTATS))->count = SECHO_PSTATS_MAX;
	size_t all = secho_ipfix_feat_encode(
	        &recs[0], SECHO_FEAT_ALL & ~(B(TLS) | B(QUIC) | B(DNS) | B(HTTP) | B(WG)), feat);
	T_CHECK(all == 408 + 176 + 816, "pstats+phists+bstats at their bounds: %zu bytes", all);
	n = run_export(576, recs, 1, buf, sizeof(buf));
	memset(&s, 0, sizeof(s));
	walk(buf, n, 576, &s);
	T_CHECK(s.msgs_over_mtu == 0, "%zu messages over the MTU", s.msgs_over_mtu);
	/* pstats (408) fits with the plain record, phists after it does not */
	fl = secho_ipfix_feat_encode(&recs[0], B(PSTATS), feat);
	T_CHECK(s.data_1024 == 1 && s.len_1024 == pl + fl,
	        "MTU 576: one record of %zu bytes, want plain + pstats %zu", s.len_1024, pl + fl);
	t_end();
}

/* UDP: the feature template goes out before its first record, and again with the others at
 * every refresh. */
static void test_udp_refresh(void)
{
	t_begin("ipfix feat: UDP: template 1024 before its first record and at every refresh");
	int rx = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t al = sizeof(a);
	if (rx < 0 || bind(rx, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(rx, (struct sockaddr *)&a, &al)) {
		if (rx >= 0)
			close(rx);
		t_unavailable("no UDP socket on 127.0.0.1");
		return;
	}
	char url[64], err[256];
	snprintf(url, sizeof(url), "udp://127.0.0.1:%u", ntohs(a.sin_port));
	struct secho_ipfix *x;
	struct secho_ipfix_cfg cfg = {.odid = 5, .template_refresh_s = 10};
	const uint64_t S = 1000000000ull, t0 = 1800000000ull * S;
	struct secho_flow_rec r = rec_with(B(WG));
	((struct secho_feat_wg *)st(SECHO_FEAT_SET_WG))->seen = 1;
	static uint8_t m[65536];
	unsigned per_step[3][2]; /* template 1024 records, data sets 1024 */
	T_CHECK(secho_ipfix_new(&x, &cfg) == 0, "new");
	T_CHECK(secho_ipfix_add_collector(x, url, err, sizeof(err)) == 0, "add: %s", err);
	const uint64_t when[3] = {t0, t0 + 5 * S, t0 + 11 * S};
	for (unsigned k = 0; k < 3; k++) {
		struct seen s;
		memset(&s, 0, sizeof(s));
		secho_ipfix_record(x, &r, when[k]);
		secho_ipfix_tick(x, when[k] + S, NULL); /* flush */
		for (;;) {
			ssize_t n = recv(rx, m, sizeof(m), MSG_DONTWAIT);
			if (n <= 0)
				break;
			walk(m, (size_t)n, 1400, &s);
		}
		per_step[k][0] = s.tmpl_1024;
		per_step[k][1] = s.data_1024;
	}
	T_CHECK(per_step[0][0] == 1 && per_step[0][1] == 1, "t0: template %u, data %u",
	        per_step[0][0], per_step[0][1]);
	T_CHECK(per_step[1][0] == 0 && per_step[1][1] == 1, "t0+5 s: template %u, data %u",
	        per_step[1][0], per_step[1][1]);
	T_CHECK(per_step[2][0] == 1 && per_step[2][1] == 1,
	        "t0+11 s (refresh): template %u, data %u", per_step[2][0], per_step[2][1]);
	secho_ipfix_close(x, t0 + 12 * S, NULL, 100);
	close(rx);
	t_end();
}

int main(void)
{
	test_varlen();
	test_tls();
	test_quic();
	test_dns();
	test_http_wg();
	test_pstats();
	test_phists_bstats();
	test_carried();
	test_template();
	test_export();
	test_udp_refresh();
	return t_exit();
}
