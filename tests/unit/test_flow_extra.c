/*
 * tests/unit/test_flow_extra.c - the record's L2-L4 fields (struct secho_flow_extra,
 * src/flow/core/record.h; the table's extension, src/flow/core/table.h): frames built here
 * byte by byte with known MACs, TTLs, ToS, IP flags, TCP windows and options, MPLS labels
 * and a VXLAN tunnel, metered, and the records' fields compared with what the frames said:
 *
 *   - a TCP handshake in a biflow: first-packet fields per direction (window, MSS, ToS,
 *     flags), min/max TTL and the option bitmap over every packet, the SYN's size, the
 *     forward direction's MACs; the same packets as uniflows (each record its own);
 *   - a record that starts again in the same entry (active timeout) has only its own
 *     packets' values; a biflow without reverse packets has zero reverse fields;
 *   - MPLS label stacks per direction; IPv6 traffic class and hop limit;
 *   - TCP options cut by a snap length: nothing past caplen is read;
 *   - VXLAN: outer addresses, bytes_outer, the inner frame's MACs, the inner TTL;
 *   - the outer pool (table.h): a plain record takes no part, a labelled one takes one at
 *     the first labelled packet of either direction and gives it back when it leaves;
 *   - the JSON and IPFIX encodings of such a record carry the same values.
 */
#include "harness.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow/core/table.h"
#include "flow/export/ipfix.h"
#include "flow/export/json.h"

#define S_NS 1000000000ull
#define T0   1767225600000000000ull /* 2026-01-01 */

struct recs {
	struct secho_flow_rec r[16];
	size_t n;
};

static void on_rec(void *ctx, const struct secho_flow_rec *r)
{
	struct recs *rs = ctx;
	if (rs->n < 16)
		rs->r[rs->n++] = *r;
}

struct tbl {
	struct secho_flow_table t;
	void *mem;
	struct recs out;
};

static int tbl_init(struct tbl *x, bool uniflow, uint64_t active_s)
{
	struct secho_flow_table_cfg cfg = {
	        .flows = 64,
	        .uniflow = uniflow,
	        .active_ns = active_s * S_NS,
	        .hash = SECHO_FLOW_HASH_DEFAULT,
	        .seed = t_rand64(),
	        .emit = on_rec,
	};
	memset(x, 0, sizeof(*x));
	cfg.ctx = &x->out;
	size_t len = secho_flow_table_mem_size(&cfg);
	if (!len || posix_memalign(&x->mem, 64, len))
		return -1;
	memset(x->mem, 0, len);
	return secho_flow_table_init(&x->t, &cfg, x->mem, len);
}

static void frame_in(struct tbl *x, const uint8_t *f, size_t len, uint64_t ts)
{
	struct secho_flow_frame fr = {.data = f, .wirelen = (uint32_t)len, .ts_ns = ts};

	fr.reason = secho_dissect(f, len, &fr.d);
	T_CHECK(fr.reason == SECHO_DISSECT_OK, "frame not described: %s",
	        secho_dissect_reason_name(fr.reason));
	secho_flow_table_burst(&x->t, &fr, 1);
}

/* ---- frames ---- */

static const uint8_t MAC_A[6] = {0x02, 0, 0, 0, 0, 0x0a}, MAC_B[6] = {0x02, 0, 0, 0, 0, 0x0b};
static const uint8_t MAC_C[6] = {0x02, 0, 0, 0, 0, 0x0c}, MAC_D[6] = {0x02, 0, 0, 0, 0, 0x0d};

static void wr16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static size_t eth(uint8_t *f, const uint8_t *dst, const uint8_t *src, unsigned type)
{
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	wr16(f + 12, type);
	return 14;
}

/* MPLS label stack entries (label 20 | TC 3 | S 1 | TTL 8), the last with S. */
static size_t mpls(uint8_t *p, const unsigned *labels, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		uint32_t e = labels[i] << 12 | (i + 1 == n ? 0x100u : 0) | 64;
		p[4 * i] = (uint8_t)(e >> 24);
		p[4 * i + 1] = (uint8_t)(e >> 16);
		p[4 * i + 2] = (uint8_t)(e >> 8);
		p[4 * i + 3] = (uint8_t)e;
	}
	return 4 * n;
}

/* An IPv4 header: ToS, TTL, flags/fragment field, protocol, addresses, payload length. */
static size_t ip4(uint8_t *p, uint8_t tos, uint8_t ttl, unsigned frag, uint8_t proto, const char *s,
                  const char *d, size_t l4len)
{
	memset(p, 0, 20);
	p[0] = 0x45;
	p[1] = tos;
	wr16(p + 2, (unsigned)(20 + l4len));
	wr16(p + 6, frag);
	p[8] = ttl;
	p[9] = proto;
	inet_pton(AF_INET, s, p + 12);
	inet_pton(AF_INET, d, p + 16);
	return 20;
}

/* A TCP header with options opt[0..optlen) (optlen a multiple of 4). */
static size_t tcp(uint8_t *p, unsigned sp, unsigned dp, uint8_t flags, unsigned win,
                  const uint8_t *opt, size_t optlen)
{
	memset(p, 0, 20);
	wr16(p, sp);
	wr16(p + 2, dp);
	p[12] = (uint8_t)(((20 + optlen) / 4) << 4);
	p[13] = flags;
	wr16(p + 14, win);
	if (optlen)
		memcpy(p + 20, opt, optlen);
	return 20 + optlen;
}

/* Ethernet (from -> to), [labels], IPv4, TCP. */
static size_t tcp4(uint8_t *f, const uint8_t *from, const uint8_t *to, const unsigned *labels,
                   unsigned nl, uint8_t tos, uint8_t ttl, unsigned frag, const char *s, unsigned sp,
                   const char *d, unsigned dp, uint8_t flags, unsigned win, const uint8_t *opt,
                   size_t optlen)
{
	size_t n = eth(f, to, from, nl ? 0x8847 : 0x0800);
	n += mpls(f + n, labels, nl);
	size_t l4 = tcp(f + n + 20, sp, dp, flags, win, opt, optlen);
	n += ip4(f + n, tos, ttl, frag, 6, s, d, l4);
	return n + l4;
}

/* option kinds as tcpOptions bits (record.h: kind k is bit 63 - k) */
#define OPT(k) (1ull << (63 - (k)))

/* SYN options: MSS, SACK permitted, timestamps, NOP, window scale (20 bytes). */
static size_t syn_opts(uint8_t *o, unsigned mss)
{
	static const uint8_t rest[] = {4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7};
	o[0] = 2;
	o[1] = 4;
	wr16(o + 2, mss);
	memcpy(o + 4, rest, sizeof(rest));
	return 20;
}

/* Data options: NOP, NOP, timestamps (12 bytes). */
static size_t ts_opts(uint8_t *o)
{
	static const uint8_t b[] = {1, 1, 8, 10, 0, 0, 0, 2, 0, 0, 0, 1};
	memcpy(o, b, sizeof(b));
	return sizeof(b);
}

#define SYN_BITS (OPT(1) | OPT(2) | OPT(3) | OPT(4) | OPT(8))
#define TS_BITS  (OPT(1) | OPT(8))

/* A handshake and some data: forward 198.18.0.1:40000 -> 198.18.0.2:443 from MAC_A, TTLs
 * 64, 60, 62; reverse TTLs 50, 55. */
static void handshake(struct tbl *x, uint64_t t)
{
	uint8_t f[256], o[40];
	size_t on = syn_opts(o, 1460);
	frame_in(x, f,
	         tcp4(f, MAC_A, MAC_B, NULL, 0, 0x28, 64, 0x4000, "198.18.0.1", 40000, "198.18.0.2",
	              443, 0x02, 64240, o, on),
	         t);
	on = syn_opts(o, 1380);
	frame_in(x, f,
	         tcp4(f, MAC_B, MAC_A, NULL, 0, 0x00, 50, 0, "198.18.0.2", 443, "198.18.0.1", 40000,
	              0x12, 65160, o, on),
	         t + 1000);
	on = ts_opts(o);
	frame_in(x, f,
	         tcp4(f, MAC_A, MAC_B, NULL, 0, 0x00, 60, 0x4000, "198.18.0.1", 40000, "198.18.0.2",
	              443, 0x10, 502, o, on),
	         t + 2000);
	frame_in(x, f,
	         tcp4(f, MAC_B, MAC_A, NULL, 0, 0x00, 55, 0, "198.18.0.2", 443, "198.18.0.1", 40000,
	              0x10, 509, o, on),
	         t + 3000);
	frame_in(x, f,
	         tcp4(f, MAC_A, MAC_B, NULL, 0, 0x00, 62, 0x4000, "198.18.0.1", 40000, "198.18.0.2",
	              443, 0x18, 502, o, on),
	         t + 4000);
}

static void check_fwd(const struct secho_flow_extra *x, const char *what)
{
	T_CHECK(!memcmp(x->src_mac, MAC_A, 6) && !memcmp(x->dst_mac, MAC_B, 6), "%s: MACs", what);
	T_CHECK(x->ttl_min[0] == 60 && x->ttl_max[0] == 64, "%s: TTL %u..%u, want 60..64", what,
	        x->ttl_min[0], x->ttl_max[0]);
	T_CHECK(x->tos[0] == 0x28 && x->ip_flags[0] == 0x40, "%s: ToS %#x flags %#x", what,
	        x->tos[0], x->ip_flags[0]);
	T_CHECK(x->tcp_win[0] == 64240 && x->tcp_mss[0] == 1460, "%s: window %u MSS %u", what,
	        x->tcp_win[0], x->tcp_mss[0]);
	T_CHECK(x->tcp_options[0] == (SYN_BITS | TS_BITS), "%s: options %#llx, want %#llx", what,
	        (unsigned long long)x->tcp_options[0], (unsigned long long)(SYN_BITS | TS_BITS));
	T_CHECK(x->syn_size == 60, "%s: SYN size %u, want 60", what, x->syn_size);
	T_CHECK(x->nmpls[0] == 0 && x->bytes_outer[0] == 0 && x->outer_ip_version == 0,
	        "%s: MPLS or tunnel fields in a plain flow", what);
}

static void test_handshake(void)
{
	t_begin("flow extra: a TCP handshake, biflow and uniflow");
	struct tbl x;
	if (tbl_init(&x, false, 300)) {
		t_unavailable("table init");
		return;
	}
	handshake(&x, T0);
	secho_flow_table_flush(&x.t);
	T_CHECK(x.out.n == 1, "%zu biflow records", x.out.n);
	if (x.out.n == 1) {
		const struct secho_flow_rec *r = &x.out.r[0];
		const struct secho_flow_extra *e = &r->x;
		T_CHECK(r->key.sport == 40000, "forward is the SYN's direction");
		check_fwd(e, "biflow forward");
		T_CHECK(e->ttl_min[1] == 50 && e->ttl_max[1] == 55, "reverse TTL %u..%u",
		        e->ttl_min[1], e->ttl_max[1]);
		T_CHECK(e->tos[1] == 0 && e->ip_flags[1] == 0 && e->tcp_win[1] == 65160 &&
		                e->tcp_mss[1] == 1380,
		        "reverse ToS %#x flags %#x window %u MSS %u", e->tos[1], e->ip_flags[1],
		        e->tcp_win[1], e->tcp_mss[1]);
		T_CHECK(e->tcp_options[1] == (SYN_BITS | TS_BITS), "reverse options %#llx",
		        (unsigned long long)e->tcp_options[1]);
	}
	free(x.mem);

	if (tbl_init(&x, true, 300)) {
		t_unavailable("table init");
		return;
	}
	handshake(&x, T0);
	secho_flow_table_flush(&x.t);
	T_CHECK(x.out.n == 2, "%zu uniflow records", x.out.n);
	for (size_t i = 0; i < x.out.n; i++) {
		const struct secho_flow_rec *r = &x.out.r[i];
		if (r->key.sport == 40000) {
			check_fwd(&r->x, "uniflow forward");
		} else {
			const struct secho_flow_extra *e = &r->x;
			T_CHECK(!memcmp(e->src_mac, MAC_B, 6) && !memcmp(e->dst_mac, MAC_A, 6),
			        "uniflow reverse: its own MACs");
			T_CHECK(e->ttl_min[0] == 50 && e->ttl_max[0] == 55 &&
			                e->tcp_mss[0] == 1380 && e->tcp_win[0] == 65160 &&
			                e->syn_size == 0,
			        "uniflow reverse: TTL %u..%u MSS %u window %u SYN size %u",
			        e->ttl_min[0], e->ttl_max[0], e->tcp_mss[0], e->tcp_win[0],
			        e->syn_size);
			T_CHECK(e->seen == 1 && e->ttl_max[1] == 0 && e->tcp_options[1] == 0,
			        "uniflow: reverse fields zero");
		}
	}
	free(x.mem);
	t_end();
}

/* An active timeout cuts a record: the next one, in the same entry, has only its own
 * packets' values; a one-way biflow has no reverse values. */
static void test_restart(void)
{
	t_begin("flow extra: a record after an active timeout has its own values only");
	struct tbl x;
	if (tbl_init(&x, false, 10)) {
		t_unavailable("table init");
		return;
	}
	handshake(&x, T0);
	uint8_t f[256], o[40];
	size_t on = ts_opts(o);
	/* 11 s on: the first record ends (active 10 s), this packet starts the next */
	frame_in(&x, f,
	         tcp4(f, MAC_C, MAC_D, NULL, 0, 0x10, 99, 0, "198.18.0.1", 40000, "198.18.0.2", 443,
	              0x10, 777, o, on),
	         T0 + 11 * S_NS);
	secho_flow_table_flush(&x.t);
	T_CHECK(x.out.n == 2, "%zu records", x.out.n);
	if (x.out.n == 2) {
		const struct secho_flow_extra *e = &x.out.r[1].x;
		T_CHECK(x.out.r[0].end_reason == SECHO_FLOW_END_ACTIVE, "first ends active");
		T_CHECK(e->ttl_min[0] == 99 && e->ttl_max[0] == 99 && e->tos[0] == 0x10 &&
		                e->tcp_win[0] == 777 && e->tcp_mss[0] == 0 && e->syn_size == 0 &&
		                e->tcp_options[0] == TS_BITS,
		        "second record: TTL %u..%u ToS %#x window %u MSS %u SYN size %u options "
		        "%#llx",
		        e->ttl_min[0], e->ttl_max[0], e->tos[0], e->tcp_win[0], e->tcp_mss[0],
		        e->syn_size, (unsigned long long)e->tcp_options[0]);
		T_CHECK(!memcmp(e->src_mac, MAC_C, 6), "second record: its first packet's MACs");
		T_CHECK(e->ttl_max[1] == 0 && e->tcp_win[1] == 0 && e->tcp_mss[1] == 0 &&
		                e->tcp_options[1] == 0 && x.out.r[1].rev.packets == 0,
		        "second record: no reverse packets, no reverse values (not the first's)");
	}
	free(x.mem);
	t_end();
}

/* ICMP echo over MPLS: two labels forward (272, 305), one back (305), as FlowTest's
 * mpls_double capture; its JSON and IPFIX. */
static void test_mpls(void)
{
	t_begin("flow extra: MPLS label stacks per direction, in JSON and IPFIX");
	struct tbl x;
	if (tbl_init(&x, false, 300)) {
		t_unavailable("table init");
		return;
	}
	static const unsigned l2[] = {272, 305}, l1[] = {305};
	uint8_t f[256], icmp[16] = {8, 0, 0, 0, 0, 1, 0, 1};
	size_t n = eth(f, MAC_B, MAC_A, 0x8847);
	n += mpls(f + n, l2, 2);
	n += ip4(f + n, 0, 64, 0, 1, "198.18.1.1", "198.18.5.5", 16);
	memcpy(f + n, icmp, 16);
	frame_in(&x, f, n + 16, T0);
	icmp[0] = 0;
	n = eth(f, MAC_A, MAC_B, 0x8847);
	n += mpls(f + n, l1, 1);
	n += ip4(f + n, 0, 61, 0, 1, "198.18.5.5", "198.18.1.1", 16);
	memcpy(f + n, icmp, 16);
	frame_in(&x, f, n + 16, T0 + 1000);
	secho_flow_table_flush(&x.t);
	T_CHECK(x.out.n == 1, "%zu records", x.out.n);
	if (x.out.n != 1) {
		free(x.mem);
		t_end();
		return;
	}
	const struct secho_flow_rec *r = &x.out.r[0];
	const struct secho_flow_extra *e = &r->x;
	T_CHECK(e->nmpls[0] == 2 && e->nmpls[1] == 1, "depths %u, %u", e->nmpls[0], e->nmpls[1]);
	/* 272 << 4 = 0x01100, TC 0, S 0; 305 << 4 = 0x01310, S 1 */
	static const uint8_t want0[2][3] = {{0x00, 0x11, 0x00}, {0x00, 0x13, 0x11}};
	T_CHECK(!memcmp(e->mpls[0], want0, 6) && !memcmp(e->mpls[1][0], want0[1], 3),
	        "label stack entries");
	T_CHECK(e->ttl_min[1] == 61 && e->ttl_min[0] == 64, "TTLs inside the labels");

	char js[SECHO_FLOW_JSON_MAX];
	size_t jl = secho_flow_json_format(r, false, js, sizeof(js));
	js[jl < sizeof(js) ? jl : sizeof(js) - 1] = 0;
	T_CHECK(jl && strstr(js, "\"mpls_label_1\":272,\"mpls_label_2\":305") &&
	                strstr(js, "\"rev_mpls_label_1\":305") && !strstr(js, "rev_mpls_label_2") &&
	                !strstr(js, "tcp_options") &&
	                strstr(js, "\"src_mac\":\"02:00:00:00:00:0a\""),
	        "JSON: %s", js);

	uint8_t b[SECHO_IPFIX_REC_MAX], t[512];
	uint16_t tid;
	size_t bl = secho_ipfix_encode(true, r, b, &tid);
	/* variant: IPv4, not TCP, depth 2: 16; its template: 275 */
	size_t tl = secho_ipfix_template_set(true, 16, t);
	T_CHECK(bl && tl && tid == 275 && t[4] == 0x01 && t[5] == 0x13, "template %u", tid);
	/* reverse stack right after the reverse TTLs, ToS, flags (28 + 4: the counters in 4
	 * bytes each); forward at the end */
	T_CHECK(bl >= 38 && !memcmp(b + 32, want0[1], 3) && !memcmp(b + 35, "\0\0\0", 3) &&
	                !memcmp(b + bl - 6, want0, 6),
	        "IPFIX label stack sections");
	free(x.mem);
	t_end();
}

/* IPv6: traffic class and hop limit. */
static void test_ipv6(void)
{
	t_begin("flow extra: IPv6 traffic class and hop limit");
	struct tbl x;
	if (tbl_init(&x, false, 300)) {
		t_unavailable("table init");
		return;
	}
	uint8_t f[128] = {0};
	size_t n = eth(f, MAC_B, MAC_A, 0x86dd);
	uint8_t *ip = f + n;
	ip[0] = 0x6b; /* version 6, traffic class 0xb8 (EF) */
	ip[1] = 0x80;
	wr16(ip + 4, 8);
	ip[6] = 17;
	ip[7] = 33;
	inet_pton(AF_INET6, "2001:db8::1", ip + 8);
	inet_pton(AF_INET6, "2001:db8::2", ip + 24);
	wr16(ip + 40, 5000);
	wr16(ip + 42, 53);
	wr16(ip + 44, 8);
	frame_in(&x, f, n + 48, T0);
	ip[7] = 40;
	frame_in(&x, f, n + 48, T0 + 1);
	secho_flow_table_flush(&x.t);
	T_CHECK(x.out.n == 1 && x.out.r[0].x.tos[0] == 0xb8 && x.out.r[0].x.ttl_min[0] == 33 &&
	                x.out.r[0].x.ttl_max[0] == 40 && x.out.r[0].x.ip_flags[0] == 0,
	        "records %zu: traffic class %#x, hop limit %u..%u", x.out.n, x.out.r[0].x.tos[0],
	        x.out.r[0].x.ttl_min[0], x.out.r[0].x.ttl_max[0]);
	free(x.mem);
	t_end();
}

/* One frame of which caplen bytes are given, prepared and metered as the offline meter
 * does, then its record alone (the table flushed) in x->out.r[0]. */
static void snapped_in(struct tbl *x, const uint8_t *f, uint32_t caplen,
                       enum secho_dissect_reason why, const struct secho_dissect *d,
                       uint32_t wirelen)
{
	struct secho_flow_prep p;

	x->out.n = 0;
	secho_flow_table_prepare(&x->t, f, caplen, why, d, wirelen, T0, &p);
	secho_flow_table_burst_prepared(&x->t, &p, 1);
	secho_flow_table_flush(&x->t);
}

/* A snapped frame: the options past caplen are not read (there, bytes that would say
 * option kind 30 and an MSS). */
static void test_snapped(void)
{
	t_begin("flow extra: TCP options cut by a snap length");
	struct tbl x;
	if (tbl_init(&x, false, 300)) {
		t_unavailable("table init");
		return;
	}
	uint8_t f[256], o[20] = {1, 1, 1, 1, 30, 4, 0, 0, 2, 4, 5, 0xb4, 0, 0, 0, 0};
	size_t n = tcp4(f, MAC_A, MAC_B, NULL, 0, 0, 64, 0, "198.18.0.1", 1000, "198.18.0.2", 80,
	                0x02, 1000, o, 16);
	size_t cap = 14 + 20 + 20 + 4; /* the four NOPs only */
	struct secho_dissect d;
	enum secho_dissect_reason why = secho_dissect_snap(f, cap, n, &d);
	T_CHECK(why == SECHO_DISSECT_OK && (d.flags & SECHO_DISSECT_F_SNAPPED), "dissect %s",
	        secho_dissect_reason_name(why));
	const struct secho_flow_extra *r = &x.out.r[0].x;
	snapped_in(&x, f, (uint32_t)cap, why, &d, (uint32_t)n);
	T_CHECK(x.out.n == 1 && r->tcp_options[0] == OPT(1) && r->tcp_mss[0] == 0 &&
	                r->tcp_win[0] == 1000,
	        "records %zu: options %#llx MSS %u window %u", x.out.n,
	        (unsigned long long)r->tcp_options[0], r->tcp_mss[0], r->tcp_win[0]);
	snapped_in(&x, f, (uint32_t)n, why, &d, (uint32_t)n);
	T_CHECK(x.out.n == 1 && r->tcp_options[0] == (OPT(1) | OPT(30) | OPT(2) | OPT(0)) &&
	                r->tcp_mss[0] == 1460, /* the zeros after the MSS: end of option list */
	        "whole: options %#llx MSS %u", (unsigned long long)r->tcp_options[0],
	        r->tcp_mss[0]);
	/* a malformed option (length 0) ends the walk */
	o[5] = 0;
	n = tcp4(f, MAC_A, MAC_B, NULL, 0, 0, 64, 0, "198.18.0.1", 1000, "198.18.0.2", 80, 0x02,
	         1000, o, 16);
	why = secho_dissect(f, n, &d);
	snapped_in(&x, f, (uint32_t)n, why, &d, (uint32_t)n);
	T_CHECK(x.out.n == 1 && r->tcp_options[0] == (OPT(1) | OPT(30)) && r->tcp_mss[0] == 0,
	        "malformed: options %#llx MSS %u", (unsigned long long)r->tcp_options[0],
	        r->tcp_mss[0]);
	free(x.mem);
	t_end();
}

/* VXLAN (UDP 4789, VNI 123): outer 192.0.2.1 -> 192.0.2.2 from MAC_A; inner ICMP echo
 * from MAC_C, TTL 33. */
static size_t vxlan_frame(uint8_t *f, bool back)
{
	uint8_t inner[128];
	uint8_t icmp[16] = {back ? 0 : 8, 0, 0, 0, 0, 1, 0, 1};
	size_t in = eth(inner, back ? MAC_C : MAC_D, back ? MAC_D : MAC_C, 0x0800);
	in += ip4(inner + in, 0, 33, 0, 1, back ? "198.18.0.2" : "198.18.0.1",
	          back ? "198.18.0.1" : "198.18.0.2", 16);
	memcpy(inner + in, icmp, 16);
	in += 16;
	size_t n = eth(f, back ? MAC_A : MAC_B, back ? MAC_B : MAC_A, 0x0800);
	n += ip4(f + n, 0, 64, 0x4000, 17, back ? "192.0.2.2" : "192.0.2.1",
	         back ? "192.0.2.1" : "192.0.2.2", 8 + 8 + in);
	uint8_t *u = f + n;
	wr16(u, back ? 50001 : 50000);
	wr16(u + 2, 4789);
	wr16(u + 4, (unsigned)(8 + 8 + in));
	wr16(u + 6, 0);
	memset(u + 8, 0, 8);
	u[8] = 0x08;    /* VNI present */
	u[8 + 6] = 123; /* VNI 123 in bytes 4..6 */
	memcpy(u + 16, inner, in);
	return n + 16 + in;
}

static void test_vxlan(void)
{
	t_begin("flow extra: VXLAN: outer addresses, bytes_outer, inner MACs, inner TTL");
	struct tbl x;
	if (tbl_init(&x, false, 300)) {
		t_unavailable("table init");
		return;
	}
	uint8_t f[256];
	size_t n = vxlan_frame(f, false);
	struct secho_dissect d;
	if (secho_dissect(f, n, &d) != SECHO_DISSECT_OK || !(d.flags & SECHO_DISSECT_F_TUNNEL)) {
		t_unavailable("the dissector does not follow VXLAN in this build");
		free(x.mem);
		return;
	}
	frame_in(&x, f, n, T0);
	frame_in(&x, f, n, T0 + 1000);
	size_t nb = vxlan_frame(f, true);
	frame_in(&x, f, nb, T0 + 2000);
	secho_flow_table_flush(&x.t);
	T_CHECK(x.out.n == 1, "%zu records", x.out.n);
	if (x.out.n == 1) {
		const struct secho_flow_rec *r = &x.out.r[0];
		const struct secho_flow_extra *e = &r->x;
		uint8_t o1[4], o2[4];
		inet_pton(AF_INET, "192.0.2.1", o1);
		inet_pton(AF_INET, "192.0.2.2", o2);
		uint32_t outer = (uint32_t)(n - 14);
		T_CHECK(r->key.tun_type == SECHO_TUN_VXLAN && r->key.tun_id == 123,
		        "key: tunnel %u id %u", r->key.tun_type, r->key.tun_id);
		T_CHECK(e->outer_ip_version == 4 && !memcmp(e->outer_src, o1, 4) &&
		                !memcmp(e->outer_dst, o2, 4),
		        "outer addresses");
		T_CHECK(e->bytes_outer[0] == 2 * outer && e->bytes_outer[1] == outer,
		        "bytes_outer %llu/%llu, want %u/%u", (unsigned long long)e->bytes_outer[0],
		        (unsigned long long)e->bytes_outer[1], 2 * outer, outer);
		T_CHECK(r->fwd.octets == 2 * 36, "octets are the inner packets' (%llu)",
		        (unsigned long long)r->fwd.octets);
		T_CHECK(!memcmp(e->src_mac, MAC_C, 6) && !memcmp(e->dst_mac, MAC_D, 6),
		        "MACs of the inner Ethernet header (the tenant's frame)");
		T_CHECK(e->ttl_min[0] == 33 && e->ttl_max[0] == 33, "inner TTL %u", e->ttl_min[0]);
		char js[SECHO_FLOW_JSON_MAX];
		size_t jl = secho_flow_json_format(r, false, js, sizeof(js));
		js[jl < sizeof(js) ? jl : sizeof(js) - 1] = 0;
		char want[96];
		snprintf(want, sizeof(want), "\"bytes_outer\":%u,\"rev_bytes_outer\":%u", 2 * outer,
		         outer);
		T_CHECK(jl && strstr(js, "\"vxlan_id\":123") && strstr(js, want) &&
		                strstr(js, "\"outer_src\":\"192.0.2.1\""),
		        "JSON: %s", js);
		uint8_t b[SECHO_IPFIX_REC_MAX];
		uint16_t tid;
		size_t bl = secho_ipfix_encode(true, r, b, &tid);
		/* the tunnel part last (docs/FLOW.md, "Templates and elements"), what the JSON
		 * says: tunnelType VXLAN (1), tunnelKey 123, tunnelProtocolIdentifier UDP,
		 * the outer addresses, tunnelDestinationTransportPort 4789, then
		 * layer2SegmentId: VXLAN (0x01) << 56 | 123 */
		static const uint8_t part[24] = {0x01, 0, 0,   0, 0x7b, 17, 192,  0,
		                                 2,    1, 192, 0, 2,    2,  0x12, 0xb5,
		                                 0x01, 0, 0,   0, 0,    0,  0,    0x7b};
		T_CHECK(bl >= 24 && !memcmp(b + bl - 24, part, 24), "IPFIX tunnel part");
	}
	free(x.mem);
	t_end();
}

/* The tunnel and MPLS part of a record is lent from the table's outer pool: plain records
 * take none, a record takes one at its first labelled packet (the reverse direction's too)
 * and gives it back when it is exported; the next record in the entry starts without. */
static void test_outer_pool(void)
{
	t_begin("flow extra: the outer pool lends the MPLS and tunnel part to the records that "
	        "need it, and gets it back");
	struct tbl x;
	if (tbl_init(&x, false, 10)) {
		t_unavailable("table init");
		return;
	}
	uint8_t f[256];
	static const unsigned l305[] = {305}, l1617[] = {16, 17};

	handshake(&x, T0);
	T_CHECK(x.t.outer.lent == 0 && x.t.outer.used == 0, "plain: %u lent, %u used",
	        x.t.outer.lent, x.t.outer.used);
	/* forward plain, reverse labelled */
	frame_in(&x, f,
	         tcp4(f, MAC_C, MAC_D, NULL, 0, 0, 64, 0, "198.18.0.5", 1000, "198.18.0.6", 80,
	              0x02, 100, NULL, 0),
	         T0 + S_NS);
	T_CHECK(x.t.outer.lent == 0, "plain forward: %u lent", x.t.outer.lent);
	frame_in(&x, f,
	         tcp4(f, MAC_D, MAC_C, l305, 1, 0, 64, 0, "198.18.0.6", 80, "198.18.0.5", 1000,
	              0x12, 100, NULL, 0),
	         T0 + S_NS + 1000);
	T_CHECK(x.t.outer.lent == 1, "labelled reverse: %u lent", x.t.outer.lent);
	/* a labelled flow whose record an active timeout cuts: the next starts plain */
	frame_in(&x, f,
	         tcp4(f, MAC_A, MAC_B, l1617, 2, 0, 64, 0, "198.18.0.7", 2000, "198.18.0.8", 80,
	              0x10, 100, NULL, 0),
	         T0 + 2 * S_NS);
	T_CHECK(x.t.outer.lent == 2 && x.t.outer.used == 2, "two labelled records: %u lent",
	        x.t.outer.lent);
	frame_in(&x, f,
	         tcp4(f, MAC_A, MAC_B, NULL, 0, 0, 64, 0, "198.18.0.7", 2000, "198.18.0.8", 80,
	              0x10, 100, NULL, 0),
	         T0 + 13 * S_NS);
	T_CHECK(x.t.outer.lent == 1,
	        "after the active timeout: %u lent (the reverse-labelled record's)",
	        x.t.outer.lent);
	secho_flow_table_flush(&x.t);
	T_CHECK(x.t.outer.lent == 0 && x.t.outer.used == 2, "after the flush: %u lent, %u used",
	        x.t.outer.lent, x.t.outer.used);
	unsigned seen = 0;
	for (size_t i = 0; i < x.out.n; i++) {
		const struct secho_flow_rec *r = &x.out.r[i];
		const struct secho_flow_extra *e = &r->x;
		if (r->key.sport == 1000 || r->key.dport == 1000) {
			seen |= 1;
			/* 305 << 4 | S: 00 13 11 */
			T_CHECK(e->nmpls[0] == 0 && e->nmpls[1] == 1 && e->mpls[1][0][0] == 0x00 &&
			                e->mpls[1][0][1] == 0x13 && e->mpls[1][0][2] == 0x11,
			        "reverse-labelled: %u and %u labels, reverse %02x%02x%02x",
			        e->nmpls[0], e->nmpls[1], e->mpls[1][0][0], e->mpls[1][0][1],
			        e->mpls[1][0][2]);
		} else if (r->key.sport == 2000 || r->key.dport == 2000) {
			if (r->end_reason == SECHO_FLOW_END_ACTIVE) {
				seen |= 2;
				/* 17 << 4 | S: 00 01 11 */
				T_CHECK(e->nmpls[0] == 2 && e->mpls[0][1][1] == 0x01 &&
				                e->mpls[0][1][2] == 0x11,
				        "labelled: %u labels", e->nmpls[0]);
			} else {
				seen |= 4;
				T_CHECK(e->nmpls[0] == 0 && e->mpls[0][0][0] == 0 &&
				                e->mpls[0][0][1] == 0,
				        "its next record: %u labels, none of the first's",
				        e->nmpls[0]);
			}
		}
	}
	T_CHECK(seen == 7, "the three records (%#x)", seen);
	free(x.mem);
	t_end();
}

int main(void)
{
	test_handshake();
	test_restart();
	test_mpls();
	test_ipv6();
	test_snapped();
	test_vxlan();
	test_outer_pool();
	return t_exit();
}
