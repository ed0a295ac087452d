/*
 * tests/unit/test_feat_dns.c - the dns feature set (src/flow/feature/dns.h).
 *
 * Vectors: messages written by real programs (dig 9.18 from Debian's bind9-dnsutils asking
 * dnsmasq 2.90 from dnsmasq-base, configured as tests/sh/test_feat_dns.sh configures it),
 * every one also parsed at every shorter length; hand-built hostile names (pointer loops,
 * forward pointers, long labels and names, reserved label types) and records whose lengths
 * lie; the per-flow state over UDP and over TCP split byte by byte, retransmitted and cut.
 *
 * With SECHO_FEAT_PCAP=file set, it instead prints one JSON line per flow of that capture
 * (the flow's first packet's ports, then the feature set's members) for the shell test.
 */
#include "featcap.h"
#include "harness.h"

#include "flow/feature/dns.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* dig a.secho.test A (ID 0x7134, RD AD, EDNS 1232 with a cookie) and dnsmasq's answer */
static const char *q_a = "713401200001000000000001016105736563686f0474657374000001000100002904d0"
                         "00000000000c000a0008909eecd2e8c59d9c";
static const char *r_a = "713485800001000100000001016105736563686f04746573740000010001c00c000100"
                         "01000000000004c612000a00002904d0000000000000";
static const char *r_aaaa =
        "8e7385800001000100000001016805736563686f047465737400001c0001c00c001c00010000000000"
        "1020010db800000000000000000000001100002904d0000000000000";
/* www -> CNAME h.secho.test (its "secho.test" a pointer into the CNAME's data) -> A */
static const char *r_cname =
        "4c7c858000010002000000010377777705736563686f04746573740000010001c00c0005000100000000"
        "000e016805736563686f047465737400c02c00010001000000000004c612000b00002904d0000000000000";
static const char *r_mx =
        "70b28580000100010000000105736563686f047465737400000f0001c00c000f0001000000000013000a"
        "046d61696c05736563686f04746573740000002904d0000000000000";
static const char *r_nx = "f55c81830001000000000001026e7805736563686f0474657374000001000100002904"
                          "d0000000000000";
/* _ldap._tcp.secho.test SRV: priority 1, weight 5, port 389, ldap.secho.test */
static const char *r_srv =
        "262785800001000100000001055f6c646170045f74637005736563686f04746573740000210001c00c0021"
        "0001000000000017000100050185046c64617005736563686f04746573740000002904d0000000000000";
/* over TCP: the 2-byte length prefix, then the message */
static const char *tq_txt = "0035489501200001000000000001017405736563686f047465737400001000010000"
                            "2904d000000000000c000a000894091c00af4d8f03";
static const char *tr_txt = "0045489585800001000100000001017405736563686f04746573740000100001c00c"
                            "001000010000000000100b68656c6c6f20776f726c640374776f00002904d00000"
                            "00000000";

static size_t unhex(const char *h, uint8_t *out, size_t cap)
{
	long n = t_unhex(h, out, cap);
	if (n < 0) {
		fprintf(stderr, "bad hex vector\n");
		exit(2);
	}
	return (size_t)n;
}

static int streq(const char *s, size_t n, const char *want)
{
	return n == strlen(want) && memcmp(s, want, n) == 0;
}

static void test_real(void)
{
	uint8_t b[600];
	struct secho_dns_msg m;
	size_t n;

	t_begin("dns: dig's query and dnsmasq's answers");
	n = unhex(q_a, b, sizeof(b));
	T_CHECK(secho_dns_parse(b, n, &m) == 0, "query parses");
	T_CHECK(m.id == 0x7134 && m.flags == 0x0120 && m.qdcount == 1 && m.arcount == 1, "header");
	T_CHECK(streq(m.qname, m.qname_len, "a.secho.test") && !m.qname_cut, "qname");
	T_CHECK(m.qtype == 1 && m.qclass == 1, "qtype %u qclass %u", m.qtype, m.qclass);
	T_CHECK(m.has_opt && m.psize == 1232 && m.dnssec_ok == 0, "OPT %u %u", m.psize,
	        m.dnssec_ok);
	T_CHECK(!m.truncated && m.nrr == 0, "no answers");

	n = unhex(r_a, b, sizeof(b));
	T_CHECK(secho_dns_parse(b, n, &m) == 0, "A response parses");
	T_CHECK(m.flags == 0x8580 && m.ancount == 1 && m.nrr == 1, "flags %04x", m.flags);
	T_CHECK(streq(m.rr[0].name, m.rr[0].name_len, "a.secho.test"), "A name (a pointer)");
	T_CHECK(m.rr[0].type == 1 && m.rr[0].rclass == 1 && m.rr[0].ttl == 0, "A rr");
	T_CHECK(streq(m.rr[0].data, m.rr[0].data_len, "198.18.0.10"), "A data %.*s",
	        m.rr[0].data_len, m.rr[0].data);

	n = unhex(r_aaaa, b, sizeof(b));
	T_CHECK(secho_dns_parse(b, n, &m) == 0 && m.nrr == 1, "AAAA response");
	T_CHECK(m.rr[0].type == 28 && streq(m.rr[0].data, m.rr[0].data_len, "2001:db8::11"),
	        "AAAA data %.*s", m.rr[0].data_len, m.rr[0].data);

	n = unhex(r_cname, b, sizeof(b));
	T_CHECK(secho_dns_parse(b, n, &m) == 0 && m.nrr == 2, "CNAME response: 2 answers");
	T_CHECK(streq(m.qname, m.qname_len, "www.secho.test"), "qname");
	T_CHECK(m.rr[0].type == 5 && streq(m.rr[0].data, m.rr[0].data_len, "h.secho.test"),
	        "CNAME data %.*s", m.rr[0].data_len, m.rr[0].data);
	T_CHECK(streq(m.rr[1].name, m.rr[1].name_len, "h.secho.test"),
	        "second answer's name through a pointer into the first's data: %.*s",
	        m.rr[1].name_len, m.rr[1].name);
	T_CHECK(streq(m.rr[1].data, m.rr[1].data_len, "198.18.0.11"), "its A");

	n = unhex(r_mx, b, sizeof(b));
	T_CHECK(secho_dns_parse(b, n, &m) == 0 && m.nrr == 1 && m.qtype == 15, "MX response");
	T_CHECK(streq(m.rr[0].data, m.rr[0].data_len, "10 mail.secho.test"), "MX data %.*s",
	        m.rr[0].data_len, m.rr[0].data);

	n = unhex(r_srv, b, sizeof(b));
	T_CHECK(secho_dns_parse(b, n, &m) == 0 && m.nrr == 1 && m.rr[0].type == 33, "SRV response");
	T_CHECK(streq(m.rr[0].data, m.rr[0].data_len, "1 5 389 ldap.secho.test"), "SRV data %.*s",
	        m.rr[0].data_len, m.rr[0].data);

	n = unhex(r_nx, b, sizeof(b));
	T_CHECK(secho_dns_parse(b, n, &m) == 0 && (m.flags & 0xf) == 3 && m.nrr == 0,
	        "NXDOMAIN: rcode 3, no answers");

	n = unhex(tr_txt, b, sizeof(b));
	T_CHECK(secho_dns_parse(b + 2, n - 2, &m) == 0 && m.nrr == 1 && m.rr[0].type == 16,
	        "TXT response (TCP)");
	T_CHECK(streq(m.rr[0].data, m.rr[0].data_len, "hello world two"), "TXT data %.*s",
	        m.rr[0].data_len, m.rr[0].data);
	t_end();

	/* Every shorter length: the header refused below 12 bytes, else what fits is kept and
	 * the rest is said to be missing. */
	t_begin("dns: every vector at every shorter length");
	const char *all[] = {q_a, r_a, r_aaaa, r_cname, r_mx, r_srv, r_nx};
	for (size_t v = 0; v < sizeof(all) / sizeof(all[0]); v++) {
		size_t full = unhex(all[v], b, sizeof(b));
		struct secho_dns_msg whole;
		T_CHECK(secho_dns_parse(b, full, &whole) == 0, "vector %zu", v);
		for (size_t l = 0; l < full; l++) {
			uint8_t cut[600];
			memcpy(cut, b, l); /* a copy of exactly l bytes: ASan sees any overread */
			int r = secho_dns_parse(cut, l, &m);
			if (l < SECHO_DNS_HDR_LEN) {
				T_CHECK(r == -EBADMSG, "vector %zu len %zu: header refused", v, l);
				continue;
			}
			T_CHECK(r == -EBADMSG || m.truncated,
			        "vector %zu len %zu: r %d truncated %u", v, l, r, m.truncated);
			T_CHECK(r != 0 || m.nrr <= whole.nrr, "vector %zu len %zu: answers", v, l);
		}
	}
	t_end();
}

/* A message: header with qdcount 1 and the given name bytes as the question's name. */
static size_t msg_with_name(uint8_t *b, const uint8_t *name, size_t nl)
{
	static const uint8_t h[12] = {0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0};
	memcpy(b, h, 12);
	memcpy(b + 12, name, nl);
	b[12 + nl] = 0;
	b[13 + nl] = 1;
	b[14 + nl] = 0;
	b[15 + nl] = 1;
	return 16 + nl;
}

static void test_hostile(void)
{
	uint8_t b[2048], name[1024];
	struct secho_dns_msg m;
	char out[300];
	size_t ol, next;
	bool cut;

	t_begin("dns: names that loop, point forward or run long");
	/* a pointer to itself (offset 12) */
	size_t n = msg_with_name(b, (const uint8_t *)"\xc0\x0c", 2);
	T_CHECK(secho_dns_parse(b, n, &m) == -EBADMSG, "self pointer refused");
	/* a pointer forward (to 14, after itself) */
	n = msg_with_name(b, (const uint8_t *)"\xc0\x0e\x01\x61\x00", 5);
	T_CHECK(secho_dns_parse(b, n, &m) == -EBADMSG, "forward pointer refused");
	/* a label "a", then a pointer back to that label: a loop through a backward pointer */
	n = msg_with_name(b, (const uint8_t *)"\x01\x61\xc0\x0c", 4);
	T_CHECK(secho_dns_parse(b, n, &m) == -EBADMSG, "label-pointer loop refused");
	/* SECHO_DNS_MAX_HOPS backward pointers in a chain end at the root: accepted; one more
	 * is refused */
	for (unsigned hops = SECHO_DNS_MAX_HOPS; hops <= SECHO_DNS_MAX_HOPS + 1; hops++) {
		memset(b, 0, sizeof(b));
		b[12] = 0; /* offset 12: the root name */
		for (unsigned i = 1; i <= hops; i++) {
			size_t at = 12 + 1 + 2 * (i - 1), to = i == 1 ? 12 : at - 2;
			b[at] = (uint8_t)(0xc0 | to >> 8);
			b[at + 1] = (uint8_t)to;
		}
		size_t last = 12 + 1 + 2 * (hops - 1);
		int r = secho_dns_name(b, last + 2, last, out, sizeof(out), &ol, &cut, &next);
		T_CHECK(hops <= SECHO_DNS_MAX_HOPS ? r == 0 && ol == 0 && next == last + 2
		                                   : r == -EBADMSG,
		        "%u hops: r %d", hops, r);
	}
	/* a 64-byte label; a 0x40 and a 0x80 label type */
	name[0] = 64;
	memset(name + 1, 'x', 64);
	name[65] = 0;
	n = msg_with_name(b, name, 66);
	T_CHECK(secho_dns_parse(b, n, &m) == -EBADMSG, "64-byte label refused");
	n = msg_with_name(b, (const uint8_t *)"\x41\x61\x00", 3);
	T_CHECK(secho_dns_parse(b, n, &m) == -EBADMSG, "label type 01 refused");
	n = msg_with_name(b, (const uint8_t *)"\x81\x61\x00", 3);
	T_CHECK(secho_dns_parse(b, n, &m) == -EBADMSG, "label type 10 refused");
	/* 255 bytes of wire name accepted (and its text cut at the bound), 257 refused */
	for (unsigned labels = 4; labels <= 5; labels++) {
		/* labels of 63 bytes: 4 of them + a last label + root */
		size_t p = 0;
		for (unsigned i = 0; i < 4; i++) {
			name[p++] = 63;
			memset(name + p, 'a' + (int)i, 63);
			p += 63;
		}
		/* 4*64 = 256 already; use a shorter last label to land on 255 or 257 */
		p -= 64;
		size_t last =
		        labels == 4 ? 61 : 63; /* 192 + 1+61 + 1 = 255; 192 + 1+63 + 1 = 257 */
		name[p++] = (uint8_t)last;
		memset(name + p, 'z', last);
		p += last;
		name[p++] = 0;
		n = msg_with_name(b, name, p);
		int r = secho_dns_parse(b, n, &m);
		if (labels == 4)
			T_CHECK(r == 0 && m.qname_cut && m.qname_len == SECHO_DNS_NAME_MAX,
			        "255-byte name: r %d cut %u len %u", r, m.qname_cut, m.qname_len);
		else
			T_CHECK(r == -EBADMSG, "257-byte name refused: r %d", r);
	}
	t_end();

	t_begin("dns: records whose lengths lie, data not decoded");
	/* the A response, rdlength 4 -> 0x40: past the end */
	n = unhex(r_a, b, sizeof(b));
	b[12 + 18 + 12 - 2] = 0x00;
	b[12 + 18 + 12 - 1] = 0x40;
	T_CHECK(secho_dns_parse(b, n, &m) == 0 && m.truncated && m.nrr == 0,
	        "rdlength past the end: truncated, no answer kept");
	/* ancount 65535 with one answer present */
	n = unhex(r_a, b, sizeof(b));
	b[6] = 0xff;
	b[7] = 0xff;
	T_CHECK(secho_dns_parse(b, n, &m) == 0 && m.truncated && m.nrr == 2 && m.ancount == 65535 &&
	                m.rr[1].type == SECHO_DNS_T_OPT && !m.has_opt,
	        "ancount larger than the message: the OPT read as a second answer, then the end");
	/* an A record with 5 bytes of data: hex */
	static const uint8_t rd5[5] = {1, 2, 3, 4, 5};
	uint8_t fl = 0;
	size_t tl = secho_dns_rdata(rd5, 5, 0, SECHO_DNS_T_A, 5, out, sizeof(out), &fl);
	T_CHECK(streq(out, tl, "0102030405") && (fl & SECHO_DNS_RR_DATA_HEX), "bad A as hex");
	/* TXT whose string length runs past its data */
	static const uint8_t txt[4] = {5, 'a', 'b', 'c'};
	fl = 0;
	tl = secho_dns_rdata(txt, 4, 0, SECHO_DNS_T_TXT, 4, out, sizeof(out), &fl);
	T_CHECK(streq(out, tl, "05616263") && (fl & SECHO_DNS_RR_DATA_HEX), "bad TXT as hex");
	/* a type not decoded (65280, private use), long: hex cut at the bound */
	uint8_t big[200];
	memset(big, 0xab, sizeof(big));
	fl = 0;
	tl = secho_dns_rdata(big, sizeof(big), 0, 65280, 200, out, SECHO_DNS_RDATA_MAX, &fl);
	T_CHECK(tl == SECHO_DNS_RDATA_MAX && (fl & SECHO_DNS_RR_DATA_CUT) &&
	                (fl & SECHO_DNS_RR_DATA_HEX),
	        "long hex cut: %zu", tl);
	/* SOA (RFC 1035 3.3.13), hand-built: ns1.x. hostmaster.x. then five numbers */
	static const uint8_t soa[] = {3,    'n',  's',  '1',  1,    'x',  0,    10,   'h',  'o',
	                              's',  't',  'm',  'a',  's',  't',  'e',  'r',  0xc0, 4,
	                              0x77, 0xed, 0x54, 0x41, 0,    0,    0x70, 0x80, 0,    0,
	                              0x1c, 0x20, 0,    9,    0x3a, 0x80, 0,    1,    0x51, 0x80};
	fl = 0;
	tl = secho_dns_rdata(soa, sizeof(soa), 0, SECHO_DNS_T_SOA, sizeof(soa), out, sizeof(out),
	                     &fl);
	T_CHECK(streq(out, tl, "ns1.x hostmaster.x 2012042305 28800 7200 604800 86400") && !fl,
	        "SOA: %.*s", (int)tl, out);
	fl = 0;
	tl = secho_dns_rdata(soa, sizeof(soa) - 1, 0, SECHO_DNS_T_SOA, sizeof(soa) - 1, out,
	                     sizeof(out), &fl);
	T_CHECK((fl & SECHO_DNS_RR_DATA_HEX) && tl == 2 * (sizeof(soa) - 1), "short SOA as hex");
	/* a CNAME whose name ends before its data does: hex */
	static const uint8_t cn[] = {1, 'a', 0, 0xff};
	fl = 0;
	tl = secho_dns_rdata(cn, sizeof(cn), 0, SECHO_DNS_T_CNAME, sizeof(cn), out, sizeof(out),
	                     &fl);
	T_CHECK(streq(out, tl, "016100ff") && (fl & SECHO_DNS_RR_DATA_HEX), "CNAME with a tail");
	fl = 0;
	tl = secho_dns_rdata(cn, sizeof(cn), 0, SECHO_DNS_T_CNAME, 3, out, sizeof(out), &fl);
	T_CHECK(streq(out, tl, "a") && !fl, "CNAME");
	/* data claimed past the buffer: nothing */
	fl = 0;
	T_CHECK(secho_dns_rdata(big, 10, 8, 1, 4, out, sizeof(out), &fl) == 0, "rdata past end");
	t_end();
}

static struct secho_feat_pkt pkt(const uint8_t *p, size_t n, uint8_t proto, uint8_t dir,
                                 uint32_t seq)
{
	struct secho_feat_pkt k = {.payload = p,
	                           .len = (uint32_t)n,
	                           .wire_len = (uint32_t)n,
	                           .proto = proto,
	                           .dir = dir,
	                           .tcp_seq = seq,
	                           .sport = dir ? 53 : 40000,
	                           .dport = dir ? 40000 : 53};
	return k;
}

static void test_flow(void)
{
	static struct secho_feat_dns s;
	uint8_t q[600], r[600];
	char js[2048];
	size_t qn, rn;

	t_begin("dns: a UDP flow's query and response, as JSON");
	memset(&s, 0, sizeof(s));
	qn = unhex(q_a, q, sizeof(q));
	rn = unhex(r_cname, r, sizeof(r));
	struct secho_feat_pkt p = pkt(q, qn, 17, SECHO_FEAT_FWD, 0);
	T_CHECK(secho_feat_dns_wants(&p), "port 53 wanted");
	p.dport = 5353;
	T_CHECK(!secho_feat_dns_wants(&p), "port 5353 not");
	p.dport = 53;
	T_CHECK(secho_feat_dns_json(&s, js, sizeof(js)) == 0, "nothing seen, nothing written");
	secho_feat_dns_packet(&s, &p);
	T_CHECK(!s.done && s.seen == 1, "query seen");
	secho_feat_dns_packet(&s, &p);
	T_CHECK(s.extra == 1, "a second query is counted, not kept");
	p = pkt(r, rn, 17, SECHO_FEAT_REV, 0);
	secho_feat_dns_packet(&s, &p);
	T_CHECK(s.done && s.seen == 3 && s.messages == 2, "done after the response");
	int jn = secho_feat_dns_json(&s, js, sizeof(js));
	const char *want =
	        ",\"dns_id\":28980,\"dns_flags\":288,\"rev_dns_flags\":34176,"
	        "\"dns_req_query_name\":\"a.secho.test\",\"dns_req_query_type\":1,"
	        "\"dns_req_query_class\":1,\"dns_resp_rcode\":0,\"dns_answers\":2,\"dns_resp_rr\":["
	        "{\"name\":\"www.secho.test\",\"type\":5,\"class\":1,\"ttl\":0,\"data\":\"h.secho."
	        "test\"},"
	        "{\"name\":\"h.secho.test\",\"type\":1,\"class\":1,\"ttl\":0,\"data\":\"198.18.0."
	        "11\"}],"
	        "\"dns_rr_ttl\":0,\"dns_rlength\":12,\"dns_rdata\":\"h.secho.test\","
	        "\"dns_psize\":1232,\"dns_do\":0";
	T_CHECK(jn == (int)strlen(want) && strcmp(js, want) == 0, "json:\n%s\nwant:\n%s", js, want);
	for (size_t cap = 0; cap < (size_t)jn; cap += 7)
		T_CHECK(secho_feat_dns_json(&s, js, cap) == -ENOSPC, "cap %zu: -ENOSPC", cap);
	t_end();

	t_begin("dns: data not decoded, in JSON");
	memset(&s, 0, sizeof(s));
	/* the A response with its answer's type changed to 99 (SPF): its 4 bytes as hex */
	rn = unhex(r_a, r, sizeof(r));
	r[12 + 18 + 2 + 1] = 99;
	p = pkt(r, rn, 17, SECHO_FEAT_REV, 0);
	secho_feat_dns_packet(&s, &p);
	jn = secho_feat_dns_json(&s, js, sizeof(js));
	T_CHECK(jn > 0 && strstr(js, "{\"name\":\"a.secho.test\",\"type\":99,\"class\":1,"
	                             "\"ttl\":0,\"data\":\"c612000a\",\"data_hex\":true,"
	                             "\"rdlength\":4}"),
	        "hex answer: %s", js);
	T_CHECK(strstr(js, "\"dns_id\":28980") && !strstr(js, "\"dns_flags\"") &&
	                strstr(js, "\"rev_dns_flags\":34176"),
	        "a response alone: its ID, no query flags");
	t_end();

	t_begin("dns: names escaped in JSON");
	memset(&s, 0, sizeof(s));
	uint8_t b[64];
	size_t n = msg_with_name(b, (const uint8_t *)"\x04\x22\\\x01\xff\x00", 6);
	p = pkt(b, n, 17, SECHO_FEAT_FWD, 0);
	secho_feat_dns_packet(&s, &p);
	jn = secho_feat_dns_json(&s, js, sizeof(js));
	T_CHECK(jn > 0 && strstr(js, "\"dns_req_query_name\":\"\\\"\\\\\\u0001\\u00ff\""),
	        "escaped: %s", js);
	t_end();

	t_begin("dns: a TCP flow, byte by byte, retransmitted, cut");
	uint8_t tq[200], tr[200];
	size_t tqn = unhex(tq_txt, tq, sizeof(tq)), trn = unhex(tr_txt, tr, sizeof(tr));
	memset(&s, 0, sizeof(s));
	uint32_t seq0 = 0xfffffff0u; /* wraps inside the message */
	for (size_t i = 0; i < tqn; i++) {
		p = pkt(tq + i, 1, 6, SECHO_FEAT_FWD, seq0 + (uint32_t)i);
		secho_feat_dns_packet(&s, &p);
		if (i == 5) { /* a retransmission of bytes 0..5, and one overlapping 4..7 */
			p = pkt(tq, 6, 6, SECHO_FEAT_FWD, seq0);
			secho_feat_dns_packet(&s, &p);
			p = pkt(tq + 4, 4, 6, SECHO_FEAT_FWD, seq0 + 4);
			secho_feat_dns_packet(&s, &p);
			i = 7;
		}
	}
	T_CHECK(s.seen == 1 && s.msg[0].qtype == 16 && !s.msg[0].truncated,
	        "query reassembled: seen %u qtype %u", s.seen, s.msg[0].qtype);
	p = pkt(tr, 30, 6, SECHO_FEAT_REV, 1000);
	secho_feat_dns_packet(&s, &p);
	p = pkt(tr + 30, trn - 30, 6, SECHO_FEAT_REV, 1030);
	secho_feat_dns_packet(&s, &p);
	T_CHECK(s.done && s.seen == 3 && s.msg[1].nrr == 1, "response reassembled");
	T_CHECK(streq(s.msg[1].rr[0].data, s.msg[1].rr[0].data_len, "hello world two"), "TXT");

	/* a gap in the response: its first 34 bytes (prefix, header, question) are what there is */
	memset(&s, 0, sizeof(s));
	p = pkt(tr, 34, 6, SECHO_FEAT_REV, 1000);
	secho_feat_dns_packet(&s, &p);
	p = pkt(tr + 40, trn - 40, 6, SECHO_FEAT_REV, 1040);
	secho_feat_dns_packet(&s, &p);
	T_CHECK(s.seen == 2 && s.msg[1].truncated && s.msg[1].nrr == 0 &&
	                streq(s.msg[1].qname, s.msg[1].qname_len, "t.secho.test"),
	        "gap: the start (header, question) kept, truncated");
	/* a message longer than the bound: its start, truncated */
	memset(&s, 0, sizeof(s));
	static uint8_t longm[SECHO_DNS_TCP_BUF + 100];
	memset(longm, 0, sizeof(longm));
	memcpy(longm, tq, tqn);
	longm[0] = (uint8_t)((sizeof(longm) - 2) >> 8);
	longm[1] = (uint8_t)(sizeof(longm) - 2);
	p = pkt(longm, sizeof(longm), 6, SECHO_FEAT_FWD, 7);
	secho_feat_dns_packet(&s, &p);
	T_CHECK(s.seen == 1 && s.msg[0].truncated && s.msg[0].qtype == 16, "over the bound");
	/* not DNS at all: given up after SECHO_DNS_REFUSE_MAX payloads */
	memset(&s, 0, sizeof(s));
	for (unsigned i = 0; i < SECHO_DNS_REFUSE_MAX; i++) {
		p = pkt((const uint8_t *)"hello", 5, 17, SECHO_FEAT_FWD, 0);
		secho_feat_dns_packet(&s, &p);
	}
	T_CHECK(s.done && s.refused == SECHO_DNS_REFUSE_MAX && s.seen == 0, "non-DNS given up");
	t_end();
}

/* The shell test's mode: one JSON line per flow of a capture. */
FEATCAP_SET(dns)

int main(void)
{
	const char *pcap = getenv("SECHO_FEAT_PCAP");
	if (pcap && *pcap)
		return featcap_print(pcap, pc_fn, pc_members);
	test_real();
	test_hostile();
	test_flow();
	return t_exit();
}
