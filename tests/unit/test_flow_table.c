/*
 * tests/unit/test_flow_table.c - the flow table (src/flow/core/table.h): each end reason,
 * timeouts on packet time, TCP end and SYN after FIN, lack of resources in a tiny table, a
 * flood of keys aimed at one bucket, biflows against uniflows, fragments, the first-level
 * cache, one worker against two, and a randomised differential against a deliberately
 * naive reference (a list searched linearly, the rules of docs/FLOW.md written out
 * plainly), WireGuard allowedips-selftest style; the key built in one step in canonical
 * order against the two steps it replaces, on random frames.
 *
 *   test_flow_table                     run the tests
 *   test_flow_table --write-seeds DIR   write the flow fuzzer's seeds (tests/fuzz/corpus-flow)
 */
#include "harness.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow/core/table.h"

#define S_NS 1000000000ull
#define T0   1767225600000000000ull /* 2026-01-01 */

/* ---- records collected from the table ---- */

struct recs {
	struct secho_flow_rec *r;
	size_t n, cap;
};

/* One frame at a time: a burst of one (src/flow/core/table.h). */
static void table_frame(struct secho_flow_table *t, const uint8_t *f, size_t len, uint64_t ts)
{
	struct secho_flow_frame x = {.data = f, .wirelen = (uint32_t)len, .ts_ns = ts};

	x.reason = secho_dissect(f, len, &x.d);
	secho_flow_table_burst(t, &x, 1);
}

static void rec_push(struct recs *rs, const struct secho_flow_rec *r)
{
	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? rs->cap * 2 : 64;
		rs->r = realloc(rs->r, rs->cap * sizeof(*rs->r));
		if (!rs->r)
			abort();
	}
	rs->r[rs->n++] = *r;
}

static void on_rec(void *ctx, const struct secho_flow_rec *r)
{
	rec_push(ctx, r);
}

static int rec_cmp(const void *a, const void *b)
{
	const struct secho_flow_rec *x = a, *y = b;
	int c = memcmp(&x->key, &y->key, sizeof(x->key));
	if (c)
		return c;
	uint64_t fx = x->fwd.packets ? x->fwd.first_ns : x->rev.first_ns;
	uint64_t fy = y->fwd.packets ? y->fwd.first_ns : y->rev.first_ns;
	return (fx > fy) - (fx < fy);
}

static bool dir_eq(const struct secho_flow_dir *a, const struct secho_flow_dir *b)
{
	return a->packets == b->packets && a->octets == b->octets && a->first_ns == b->first_ns &&
	       a->last_ns == b->last_ns && a->tcp_flags == b->tcp_flags;
}

static bool rec_eq(const struct secho_flow_rec *a, const struct secho_flow_rec *b)
{
	return !memcmp(&a->key, &b->key, sizeof(a->key)) && dir_eq(&a->fwd, &b->fwd) &&
	       dir_eq(&a->rev, &b->rev) && a->end_reason == b->end_reason;
}

static void rec_print(const char *tag, const struct secho_flow_rec *r)
{
	char s[64], d[64];
	inet_ntop(r->key.ip_version == 6 ? AF_INET6 : AF_INET, r->key.src, s, sizeof(s));
	inet_ntop(r->key.ip_version == 6 ? AF_INET6 : AF_INET, r->key.dst, d, sizeof(d));
	printf("  %s: %s:%u > %s:%u p%u v%u/%u | %llu pk %llu B %llu..%llu f%02x | %llu pk %llu B "
	       "%llu..%llu f%02x | end %u\n",
	       tag, s, r->key.sport, d, r->key.dport, r->key.proto, r->key.vlan, r->key.vlan_inner,
	       (unsigned long long)r->fwd.packets, (unsigned long long)r->fwd.octets,
	       (unsigned long long)(r->fwd.first_ns % 1000000000000ull),
	       (unsigned long long)(r->fwd.last_ns % 1000000000000ull), r->fwd.tcp_flags,
	       (unsigned long long)r->rev.packets, (unsigned long long)r->rev.octets,
	       (unsigned long long)(r->rev.first_ns % 1000000000000ull),
	       (unsigned long long)(r->rev.last_ns % 1000000000000ull), r->rev.tcp_flags,
	       r->end_reason);
}

/* Sort both and compare; print the first differences. */
static bool recs_same(struct recs *a, struct recs *b, const char *what)
{
	if (a->n)
		qsort(a->r, a->n, sizeof(*a->r), rec_cmp);
	if (b->n)
		qsort(b->r, b->n, sizeof(*b->r), rec_cmp);
	bool same = a->n == b->n;
	size_t shown = 0;
	for (size_t i = 0; i < a->n && i < b->n; i++) {
		if (!rec_eq(&a->r[i], &b->r[i])) {
			same = false;
			if (shown++ < 3) {
				printf("  %s: record %zu differs\n", what, i);
				rec_print("got ", &a->r[i]);
				rec_print("want", &b->r[i]);
			}
		}
	}
	if (a->n != b->n)
		printf("  %s: %zu records, want %zu\n", what, a->n, b->n);
	return same;
}

/* ---- a table in malloc'd memory ---- */

struct tbl {
	struct secho_flow_table t;
	void *mem;
	struct recs out;
};

static int tbl_init(struct tbl *x, uint32_t flows, bool uniflow, uint64_t active_s,
                    uint64_t inactive_s)
{
	struct secho_flow_table_cfg cfg = {
	        .flows = flows,
	        .uniflow = uniflow,
	        .active_ns = active_s * S_NS,
	        .inactive_ns = inactive_s * S_NS,
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

static void tbl_free(struct tbl *x)
{
	free(x->mem);
	free(x->out.r);
	x->mem = NULL;
	x->out.r = NULL;
}

static void key4(struct secho_flow_key *k, uint8_t proto, uint32_t s, uint16_t sp, uint32_t d,
                 uint16_t dp)
{
	memset(k, 0, sizeof(*k));
	k->ip_version = 4;
	k->proto = proto;
	s = htonl(s);
	d = htonl(d);
	memcpy(k->src, &s, 4);
	memcpy(k->dst, &d, 4);
	k->sport = sp;
	k->dport = dp;
}

static void pkt(struct tbl *x, const struct secho_flow_key *k, uint64_t ts, uint32_t octets,
                uint8_t flags)
{
	struct secho_flow_pkt p = {.key = *k, .ts_ns = ts, .octets = octets, .tcp_flags = flags};
	secho_flow_table_packet(&x->t, &p);
}

static void rev_of(const struct secho_flow_key *k, struct secho_flow_key *r)
{
	*r = *k;
	secho_flow_key_reverse(r);
}

#define A 0xc6120001u
#define B 0xc6120002u

static uint64_t counter(const struct tbl *x, enum secho_flow_counter c)
{
	return x->t.cnt.c[c];
}

static void check_invariants(const struct tbl *x, const char *what)
{
	const uint64_t *c = x->t.cnt.c;
	uint64_t ended = c[SECHO_FLOW_CNT_END_IDLE] + c[SECHO_FLOW_CNT_END_ACTIVE] +
	                 c[SECHO_FLOW_CNT_END_EOF] + c[SECHO_FLOW_CNT_END_FORCED] +
	                 c[SECHO_FLOW_CNT_END_RESOURCE];
	T_CHECK(c[SECHO_FLOW_CNT_FLOWS] == ended + x->t.cnt.active,
	        "%s: flows %llu = ended %llu + "
	        "active %llu",
	        what, (unsigned long long)c[SECHO_FLOW_CNT_FLOWS], (unsigned long long)ended,
	        (unsigned long long)x->t.cnt.active);
	T_CHECK(ended == x->out.n, "%s: %llu ended, %zu records", what, (unsigned long long)ended,
	        x->out.n);
	T_CHECK(c[SECHO_FLOW_CNT_FRAMES] == c[SECHO_FLOW_CNT_PACKETS] + c[SECHO_FLOW_CNT_IGNORED],
	        "%s: frames = packets + ignored", what);
	uint64_t pk = 0;
	for (size_t i = 0; i < x->out.n; i++)
		pk += x->out.r[i].fwd.packets + x->out.r[i].rev.packets;
	if (!x->t.cnt.active)
		T_CHECK(pk == c[SECHO_FLOW_CNT_PACKETS], "%s: records hold %llu packets of %llu",
		        what, (unsigned long long)pk,
		        (unsigned long long)c[SECHO_FLOW_CNT_PACKETS]);
}

/* ---- the end reasons, one by one ---- */

static void test_reasons(void)
{
	struct tbl x;
	struct secho_flow_key k, r;

	t_begin("table: inactive timeout on packet time (a packet 30 s later starts a new record)");
	T_CHECK(tbl_init(&x, 1024, false, 300, 30) == 0, "init");
	key4(&k, 17, A, 1000, B, 53);
	pkt(&x, &k, T0, 100, 0);
	pkt(&x, &k, T0 + 29 * S_NS, 100, 0); /* 29 s: same record */
	pkt(&x, &k, T0 + 59 * S_NS, 100, 0); /* exactly 30 s after the last: a new one */
	T_CHECK(x.out.n == 1 && x.out.r[0].end_reason == SECHO_FLOW_END_IDLE &&
	                x.out.r[0].fwd.packets == 2 && x.out.r[0].fwd.last_ns == T0 + 29 * S_NS,
	        "one idle record of 2 packets (%zu)", x.out.n);
	secho_flow_table_flush(&x.t);
	T_CHECK(x.out.n == 2 && x.out.r[1].end_reason == SECHO_FLOW_END_FORCED &&
	                x.out.r[1].fwd.packets == 1 && x.out.r[1].fwd.first_ns == T0 + 59 * S_NS,
	        "then forced at the end");
	check_invariants(&x, "idle");
	tbl_free(&x);
	t_end();

	t_begin("table: the sweep exports idle records on time, without a packet of theirs");
	T_CHECK(tbl_init(&x, 1024, false, 300, 30) == 0, "init");
	key4(&k, 17, A, 1000, B, 53);
	pkt(&x, &k, T0, 100, 0);
	secho_flow_table_expire(&x.t, T0);
	for (uint64_t ms = 0; ms <= 31000; ms += 100)
		secho_flow_table_expire(&x.t, T0 + ms * 1000000ull);
	T_CHECK(x.out.n == 1 && x.out.r[0].end_reason == SECHO_FLOW_END_IDLE,
	        "exported by 31 s (%zu records)", x.out.n);
	key4(&k, 17, A, 1001, B, 53);
	pkt(&x, &k, T0 + 40 * S_NS, 100, 0);
	secho_flow_table_expire(&x.t, T0 + 60 * S_NS); /* not yet: ends at 70 s */
	T_CHECK(x.out.n == 1, "not before its time");
	secho_flow_table_expire(&x.t, T0 + 30 * S_NS); /* the clock never goes back */
	T_CHECK(x.out.n == 1, "an earlier now is the latest packet time");
	secho_flow_table_expire(&x.t, T0 + 75 * S_NS);
	T_CHECK(x.out.n == 2 && x.out.r[1].end_reason == SECHO_FLOW_END_IDLE, "after a jump");
	check_invariants(&x, "sweep");
	tbl_free(&x);
	t_end();

	t_begin("table: active timeout: the flow goes on in a new record (forward = its first "
	        "packet)");
	T_CHECK(tbl_init(&x, 1024, false, 300, 30) == 0, "init");
	key4(&k, 17, A, 5000, B, 6000);
	rev_of(&k, &r);
	for (unsigned i = 0; i <= 40; i++) /* 0, 10, ..., 400 s */
		pkt(&x, (i % 2) ? &r : &k, T0 + i * 10 * S_NS, 200, 0);
	T_CHECK(x.out.n == 1 && x.out.r[0].end_reason == SECHO_FLOW_END_ACTIVE,
	        "one active record so far");
	if (x.out.n == 1) {
		const struct secho_flow_rec *a = &x.out.r[0];
		T_CHECK(a->fwd.packets == 15 && a->rev.packets == 15 && a->fwd.first_ns == T0 &&
		                a->rev.last_ns == T0 + 290 * S_NS,
		        "0..290 s in the first record (%llu/%llu)",
		        (unsigned long long)a->fwd.packets, (unsigned long long)a->rev.packets);
	}
	secho_flow_table_flush(&x.t);
	T_CHECK(x.out.n == 2 && !memcmp(&x.out.r[1].key, &k, sizeof(k)) &&
	                x.out.r[1].fwd.first_ns == T0 + 300 * S_NS && x.out.r[1].fwd.packets == 6 &&
	                x.out.r[1].rev.packets == 5,
	        "the continuation: 300..400 s");
	/* a continuation whose first packet runs the other way has that as its forward */
	for (unsigned i = 0; i <= 40; i++)
		pkt(&x, (i % 2) ? &k : &r, T0 + 1000 * S_NS + i * 10 * S_NS + (i == 30), 200, 0);
	secho_flow_table_flush(&x.t);
	T_CHECK(x.out.n == 4 && !memcmp(&x.out.r[2].key, &r, sizeof(r)) &&
	                !memcmp(&x.out.r[3].key, &r, sizeof(r)),
	        "forward of both records: the reverse key");
	check_invariants(&x, "active");
	tbl_free(&x);
	t_end();

	t_begin("table: TCP FIN/RST end the flow; a SYN after them starts a new one");
	T_CHECK(tbl_init(&x, 1024, false, 300, 30) == 0, "init");
	key4(&k, 6, A, 40000, B, 80);
	rev_of(&k, &r);
	uint64_t t = T0;
	pkt(&x, &k, t += 1000, 60, 0x02); /* SYN */
	pkt(&x, &r, t += 1000, 60, 0x12); /* SYN ACK */
	pkt(&x, &k, t += 1000, 52, 0x10); /* ACK */
	pkt(&x, &k, t += 1000, 52, 0x11); /* FIN ACK */
	pkt(&x, &r, t += 1000, 52, 0x11); /* FIN ACK */
	pkt(&x, &k, t += 1000, 52, 0x10); /* last ACK: same flow */
	T_CHECK(x.out.n == 0, "FIN does not end the record by itself");
	pkt(&x, &r, t += 1000, 60, 0x02); /* SYN from the other side, same key */
	T_CHECK(x.out.n == 1 && x.out.r[0].end_reason == SECHO_FLOW_END_EOF &&
	                x.out.r[0].fwd.packets == 4 && x.out.r[0].rev.packets == 2 &&
	                x.out.r[0].fwd.tcp_flags == 0x13 && x.out.r[0].rev.tcp_flags == 0x13,
	        "ended by the new SYN, flags ORed per direction");
	T_CHECK(counter(&x, SECHO_FLOW_CNT_SYN_REUSE) == 1, "syn_reuse counted");
	pkt(&x, &k, t += 1000, 40, 0x04); /* RST from the first side */
	secho_flow_table_expire(&x.t, t);
	secho_flow_table_expire(&x.t, t + 31 * S_NS);
	T_CHECK(x.out.n == 2 && x.out.r[1].end_reason == SECHO_FLOW_END_EOF &&
	                !memcmp(&x.out.r[1].key, &r, sizeof(r)) && x.out.r[1].rev.tcp_flags == 0x04,
	        "the new flow runs the other way; RST then idle: end of flow");
	key4(&k, 6, A, 40001, B, 80);
	pkt(&x, &k, t + 40 * S_NS, 60, 0x01);
	secho_flow_table_flush(&x.t);
	T_CHECK(x.out.n == 3 && x.out.r[2].end_reason == SECHO_FLOW_END_EOF,
	        "an ended flow at the end of input ends as end of flow");
	key4(&k, 6, A, 40002, B, 80);
	pkt(&x, &k, t + 50 * S_NS, 60, 0x10);
	secho_flow_table_flush(&x.t);
	T_CHECK(x.out.n == 4 && x.out.r[3].end_reason == SECHO_FLOW_END_FORCED, "others: forced");
	check_invariants(&x, "tcp");
	tbl_free(&x);
	t_end();

	t_begin("table: a tiny table (one bucket) evicts the least recently used: lack of "
	        "resources");
	T_CHECK(tbl_init(&x, 8, false, 300, 30) == 0, "init");
	T_CHECK(secho_flow_table_capacity(&x.t) == 8, "capacity 8");
	for (unsigned i = 0; i < 8; i++) {
		key4(&k, 17, A, (uint16_t)(100 + i), B, 53);
		pkt(&x, &k, T0 + i * S_NS, 100, 0);
	}
	key4(&k, 17, A, 100, B, 53);
	pkt(&x, &k, T0 + 8 * S_NS, 100, 0); /* port 100 used again: 101 is now the oldest */
	T_CHECK(x.out.n == 0 && x.t.cnt.active == 8, "full, nothing out");
	key4(&k, 17, A, 200, B, 53);
	pkt(&x, &k, T0 + 9 * S_NS, 100, 0);
	T_CHECK(x.out.n == 1 && x.out.r[0].end_reason == SECHO_FLOW_END_RESOURCE &&
	                x.out.r[0].key.sport == 101,
	        "port 101 evicted (%u)", x.out.n ? x.out.r[0].key.sport : 0);
	/* an ended TCP flow goes before any live one */
	key4(&k, 6, A, 300, B, 80);
	pkt(&x, &k, T0 + 10 * S_NS, 40, 0x02); /* evicts the LRU (102) */
	pkt(&x, &k, T0 + 11 * S_NS, 40, 0x01); /* FIN */
	key4(&k, 17, A, 201, B, 53);
	pkt(&x, &k, T0 + 12 * S_NS, 100, 0);
	T_CHECK(x.out.n == 3 && x.out.r[2].end_reason == SECHO_FLOW_END_EOF &&
	                x.out.r[2].key.sport == 300,
	        "the ended TCP flow made room, as end of flow");
	/* a record whose time has come goes first, with its timeout reason */
	key4(&k, 17, A, 202, B, 53);
	pkt(&x, &k, T0 + 41 * S_NS, 100, 0); /* 103.. idle since <= 11 s: ended by 41 s */
	T_CHECK(x.out.n == 4 && x.out.r[3].end_reason == SECHO_FLOW_END_IDLE,
	        "an idle record made room as idle");
	T_CHECK(counter(&x, SECHO_FLOW_CNT_END_RESOURCE) == 2, "2 evictions counted");
	secho_flow_table_flush(&x.t);
	check_invariants(&x, "tiny");
	tbl_free(&x);
	t_end();
}

/* ---- a flood aimed at one bucket ---- */

static void test_flood(void)
{
	struct tbl x;

	t_begin("table: 20000 keys aimed at one bucket: bounded, counted, nothing lost");
	T_CHECK(tbl_init(&x, 4096, false, 300, 30) == 0, "init");
	/* The attacker's best case: it knows the seed and the layout, and finds keys whose
	 * hash lands in bucket 0 (as table.c picks it: high 32 bits times the bucket count). */
	uint32_t nb = secho_flow_table_capacity(&x.t) / SECHO_FLOW_BUCKET;
	unsigned found = 0;
	uint64_t sent = 0;
	for (uint32_t i = 0; found < 20000 && i < 100000000u; i++) {
		struct secho_flow_key k, c;
		key4(&k, 17, A ^ (i >> 16), (uint16_t)i, B, 53);
		secho_flow_key_canon(&k, &c);
		uint64_t h = secho_flow_hash(&x.t.hasher, &c);
		if ((uint32_t)(((h >> 32) * nb) >> 32) != 0)
			continue;
		found++;
		pkt(&x, &k, T0 + found * 1000, 64, 0);
		sent++;
	}
	T_CHECK(found == 20000, "found %u keys", found);
	T_CHECK(x.t.cnt.active == SECHO_FLOW_BUCKET, "bucket full, %llu active",
	        (unsigned long long)x.t.cnt.active);
	T_CHECK(counter(&x, SECHO_FLOW_CNT_END_RESOURCE) == found - SECHO_FLOW_BUCKET,
	        "%llu evictions", (unsigned long long)counter(&x, SECHO_FLOW_CNT_END_RESOURCE));
	/* other flows still get their own buckets */
	struct secho_flow_key k;
	key4(&k, 6, B, 1, A, 2);
	pkt(&x, &k, T0 + 1 * S_NS, 40, 0x10);
	secho_flow_table_flush(&x.t);
	T_CHECK(x.out.n == found + 1, "every flow reported once (%zu)", x.out.n);
	check_invariants(&x, "flood");
	tbl_free(&x);
	t_end();
}

/* ---- biflows and uniflows ---- */

static void test_directions(void)
{
	struct tbl bi, uni;
	struct secho_flow_key k, r;

	t_begin("table: biflow (one record, forward = first packet) against uniflow (two)");
	T_CHECK(tbl_init(&bi, 1024, false, 300, 30) == 0 &&
	                tbl_init(&uni, 1024, true, 300, 30) == 0,
	        "init");
	key4(&k, 6, B, 443, A, 50000); /* first packet from the higher address */
	rev_of(&k, &r);
	for (unsigned i = 0; i < 10; i++) {
		const struct secho_flow_key *p = i % 3 ? &r : &k;
		pkt(&bi, p, T0 + i * 1000, 100 + i, 0x10);
		pkt(&uni, p, T0 + i * 1000, 100 + i, 0x10);
	}
	secho_flow_table_flush(&bi.t);
	secho_flow_table_flush(&uni.t);
	T_CHECK(bi.out.n == 1 && !memcmp(&bi.out.r[0].key, &k, sizeof(k)) &&
	                bi.out.r[0].fwd.packets == 4 && bi.out.r[0].rev.packets == 6 &&
	                bi.out.r[0].fwd.octets == 100 + 103 + 106 + 109 &&
	                bi.out.r[0].rev.first_ns == T0 + 1000,
	        "biflow");
	T_CHECK(uni.out.n == 2, "uniflow: %zu records", uni.out.n);
	for (size_t i = 0; i < uni.out.n; i++) {
		const struct secho_flow_rec *u = &uni.out.r[i];
		bool fw = !memcmp(&u->key, &k, sizeof(k));
		T_CHECK(u->rev.packets == 0 && u->fwd.packets == (fw ? 4u : 6u), "uniflow %zu", i);
		T_CHECK(fw || !memcmp(&u->key, &r, sizeof(r)), "uniflow key %zu", i);
	}
	check_invariants(&bi, "bi");
	check_invariants(&uni, "uni");
	tbl_free(&bi);
	tbl_free(&uni);
	t_end();

	t_begin("table: an ICMP query and its answer are one biflow; other ICMP types, VLANs "
	        "are part of the key");
	T_CHECK(tbl_init(&bi, 1024, false, 300, 30) == 0, "init");
	T_CHECK(tbl_init(&uni, 1024, true, 300, 30) == 0, "init");
	/* B echoes A (B > A: the request runs against the canonical order) */
	key4(&k, 1, B, 0, A, 0);
	k.icmp_type_code = 8 << 8;
	pkt(&bi, &k, T0, 84, 0);
	pkt(&uni, &k, T0, 84, 0);
	key4(&r, 1, A, 0, B, 0);
	r.icmp_type_code = 0; /* echo reply */
	pkt(&bi, &r, T0 + 1000, 84, 0);
	pkt(&uni, &r, T0 + 1000, 84, 0);
	/* A echoes B: its own biflow (request 8 from A) */
	r.icmp_type_code = 8 << 8;
	pkt(&bi, &r, T0 + 1500, 84, 0);
	/* destination unreachable both ways: one biflow, the same type each way */
	k.icmp_type_code = 3 << 8 | 1;
	r.icmp_type_code = 3 << 8 | 1;
	pkt(&bi, &k, T0 + 1600, 56, 0);
	pkt(&bi, &r, T0 + 1700, 56, 0);
	/* ICMPv6 echo to itself: request and reply are one biflow too */
	struct secho_flow_key s6;
	memset(&s6, 0, sizeof(s6));
	s6.ip_version = 6;
	s6.proto = 58;
	s6.src[0] = s6.dst[0] = 0x20;
	s6.icmp_type_code = 128 << 8;
	pkt(&bi, &s6, T0 + 1800, 64, 0);
	s6.icmp_type_code = 129 << 8;
	pkt(&bi, &s6, T0 + 1900, 64, 0);
	k.icmp_type_code = 8 << 8;
	k.vlan = 10;
	pkt(&bi, &k, T0 + 2000, 84, 0);
	k.vlan_inner = 20;
	pkt(&bi, &k, T0 + 3000, 84, 0);
	secho_flow_table_flush(&bi.t);
	secho_flow_table_flush(&uni.t);
	T_CHECK(bi.out.n == 6, "6 biflows (%zu)", bi.out.n);
	T_CHECK(uni.out.n == 2, "2 uniflows (%zu)", uni.out.n);
	unsigned seen = 0;
	for (size_t i = 0; i < bi.out.n; i++) {
		const struct secho_flow_rec *x = &bi.out.r[i];
		uint16_t rt = secho_flow_rec_rev_icmp(x);
		if (x->key.ip_version == 6) {
			T_CHECK(x->key.icmp_type_code == 128 << 8 && x->fwd.packets == 1 &&
			                x->rev.packets == 1 && rt == 129 << 8,
			        "v6 echo to itself: %04x/%04x", x->key.icmp_type_code, rt);
			seen |= 1;
		} else if (x->key.vlan) {
			T_CHECK(x->rev.packets == 0 && rt == 0, "vlan %u", x->key.vlan);
		} else if (x->key.icmp_type_code == 8 << 8 && !memcmp(x->key.src, k.src, 4)) {
			T_CHECK(x->fwd.packets == 1 && x->rev.packets == 1 && rt == 0 &&
			                x->rev.first_ns == T0 + 1000,
			        "B's echo: rev %llu, type %04x", (unsigned long long)x->rev.packets,
			        rt);
			seen |= 2;
		} else if (x->key.icmp_type_code == 8 << 8) {
			T_CHECK(x->fwd.packets == 1 && x->rev.packets == 0 && rt == 0, "A's echo");
			seen |= 4;
		} else {
			T_CHECK(x->key.icmp_type_code == (3 << 8 | 1) && x->rev.packets == 1 &&
			                rt == (3 << 8 | 1),
			        "unreachable: %04x/%04x", x->key.icmp_type_code, rt);
			seen |= 8;
		}
	}
	T_CHECK(seen == 15, "records seen: %x", seen);
	for (size_t i = 0; i < uni.out.n; i++)
		T_CHECK(uni.out.r[i].rev.packets == 0 &&
		                (uni.out.r[i].key.icmp_type_code == 8 << 8) ==
		                        !memcmp(uni.out.r[i].key.src, k.src, 4),
		        "uniflow %zu: its own type", i);
	check_invariants(&bi, "icmp");
	check_invariants(&uni, "icmp uni");
	tbl_free(&bi);
	tbl_free(&uni);
	t_end();
}

/* ---- frames: fragments, the cache, workers ---- */

static void wr16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* An Ethernet/IPv4 frame: proto, addresses, fragment field, id, L4 header bytes + payload. */
static size_t frame4(uint8_t *f, uint8_t proto, uint32_t s, uint32_t d, unsigned fr, unsigned id,
                     const uint8_t *l4, size_t l4len)
{
	memset(f, 0, 34);
	f[0] = 2;
	f[6] = 2;
	wr16(f + 12, 0x0800);
	uint8_t *ip = f + 14;
	ip[0] = 0x45;
	wr16(ip + 2, (unsigned)(20 + l4len));
	wr16(ip + 4, id);
	wr16(ip + 6, fr);
	ip[8] = 64;
	ip[9] = proto;
	s = htonl(s);
	d = htonl(d);
	memcpy(ip + 12, &s, 4);
	memcpy(ip + 16, &d, 4);
	memcpy(f + 34, l4, l4len);
	return 34 + l4len;
}

static size_t udp4(uint8_t *f, uint32_t s, uint16_t sp, uint32_t d, uint16_t dp, size_t plen)
{
	uint8_t l4[1500] = {0};
	wr16(l4, sp);
	wr16(l4 + 2, dp);
	wr16(l4 + 4, (unsigned)(8 + plen));
	return frame4(f, 17, s, d, 0x4000, 1, l4, 8 + plen);
}

static void test_fragments(void)
{
	struct tbl x;
	uint8_t f[2048], l4[1480];

	t_begin("table: later fragments join their first fragment's flow, orphans are counted");
	T_CHECK(tbl_init(&x, 1024, false, 300, 30) == 0, "init");
	memset(l4, 0xaa, sizeof(l4));
	wr16(l4, 5000);
	wr16(l4 + 2, 6000);
	size_t n = frame4(f, 17, A, B, 0x2000, 77, l4, 1480); /* first, id 77 */
	table_frame(&x.t, f, n, T0);
	n = frame4(f, 17, A, B, 0x2000 | 185, 77, l4, 1480); /* middle */
	table_frame(&x.t, f, n, T0 + 1000);
	n = frame4(f, 17, A, B, 370, 77, l4, 100); /* last */
	table_frame(&x.t, f, n, T0 + 2000);
	n = frame4(f, 17, A, B, 370, 78, l4, 100); /* id 78: never had a first fragment */
	table_frame(&x.t, f, n, T0 + 3000);
	n = frame4(f, 6, A, B, 370, 77, l4, 100); /* id 77 but TCP: another datagram */
	table_frame(&x.t, f, n, T0 + 4000);
	n = frame4(f, 17, A, B, 185, 77, l4, 100); /* 31 s later: forgotten */
	table_frame(&x.t, f, n, T0 + 31 * S_NS);
	T_CHECK(counter(&x, SECHO_FLOW_CNT_FRAG_FIRST) == 1 &&
	                counter(&x, SECHO_FLOW_CNT_FRAG_JOINED) == 2 &&
	                x.t.cnt.ignored[SECHO_FLOW_IGN_FRAG_ORPHAN] == 3,
	        "first 1, joined 2, orphans 3");
	secho_flow_table_flush(&x.t);
	T_CHECK(x.out.n == 1 && x.out.r[0].key.sport == 5000 && x.out.r[0].key.dport == 6000 &&
	                x.out.r[0].fwd.packets == 3 && x.out.r[0].fwd.octets == 1500 + 1500 + 120,
	        "one flow of 3 fragments");
	check_invariants(&x, "frag");
	tbl_free(&x);
	t_end();

	t_begin("table: the first-level cache serves repeated flows; frames that are not IP");
	T_CHECK(tbl_init(&x, 1024, false, 300, 30) == 0, "init");
	/* four flows in four different cache slots (two in one slot would push each other
	 * out: that is a direct-mapped cache) */
	uint16_t port[4] = {0}, used[4] = {0};
	unsigned np = 0;
	for (uint16_t p = 1; np < 4; p++) {
		struct secho_flow_key k, c;
		key4(&k, 17, A, p, B, 53);
		secho_flow_key_canon(&k, &c);
		uint64_t h = secho_flow_hash(&x.t.hasher, &c);
		uint32_t sig = (uint32_t)h ? (uint32_t)h : 1;
		uint16_t slot = (uint16_t)(sig & (SECHO_FLOW_CACHE_DEFAULT - 1));
		bool dup = false;
		for (unsigned j = 0; j < np; j++)
			dup |= used[j] == slot;
		if (!dup) {
			used[np] = slot;
			port[np++] = p;
		}
	}
	for (unsigned i = 0; i < 1000; i++) {
		n = udp4(f, A, port[i % 4], B, 53, 20);
		table_frame(&x.t, f, n, T0 + i);
	}
	T_CHECK(counter(&x, SECHO_FLOW_CNT_CACHE_HITS) == 996 &&
	                counter(&x, SECHO_FLOW_CNT_CACHE_MISSES) == 4,
	        "hits %llu misses %llu", (unsigned long long)counter(&x, SECHO_FLOW_CNT_CACHE_HITS),
	        (unsigned long long)counter(&x, SECHO_FLOW_CNT_CACHE_MISSES));
	wr16(f + 12, 0x0806);
	table_frame(&x.t, f, 60, T0 + 2000);
	table_frame(&x.t, f, 10, T0 + 2001);
	T_CHECK(x.t.cnt.ignored[SECHO_FLOW_IGN_NOT_IP] == 1 &&
	                x.t.cnt.ignored[SECHO_DISSECT_ETH_SHORT] == 1 &&
	                counter(&x, SECHO_FLOW_CNT_IGNORED_OCTETS) == 70,
	        "not_ip and eth_short counted");
	secho_flow_table_flush(&x.t);
	check_invariants(&x, "cache");
	tbl_free(&x);
	t_end();
}

/* A random frame stream over a few hosts: UDP, TCP, fragments; times strictly increasing. */
static size_t random_frame(uint8_t *f, uint64_t *ts)
{
	uint32_t s = A + (uint32_t)t_randrange(0, 15), d = A + (uint32_t)t_randrange(0, 15);
	uint16_t sp = (uint16_t)t_randrange(1, 6), dp = (uint16_t)t_randrange(1, 3);
	uint8_t l4[200] = {0};
	*ts += t_randrange(1, 2000000000);
	wr16(l4, sp);
	wr16(l4 + 2, dp);
	switch (t_randrange(0, 3)) {
	case 0:
		return udp4(f, s, sp, d, dp, t_randrange(0, 100));
	case 1:
		l4[12] = 0x50;
		l4[13] = (uint8_t)t_randrange(0, 0x3f);
		return frame4(f, 6, s, d, 0, 1, l4, 20 + t_randrange(0, 50));
	case 2:
		return frame4(f, 17, s, d, 0x2000, (unsigned)t_randrange(0, 3), l4, 48);
	default:
		return frame4(f, 17, s, d, 6, (unsigned)t_randrange(0, 3), l4, 48);
	}
}

/* The inner IPv4 packet (proto 17, s -> d, fragment field fr, id, l4) in GRE with key
 * `key`, from tunnel endpoint os to od. */
static size_t gre4(uint8_t *f, uint32_t key, uint32_t os, uint32_t od, uint32_t s, uint32_t d,
                   unsigned fr, unsigned id, const uint8_t *l4, size_t l4len)
{
	static uint8_t in[2048], pl[2048];
	size_t n = frame4(in, 17, s, d, fr, id, l4, l4len);
	wr16(pl, 0x2000); /* K */
	wr16(pl + 2, 0x0800);
	wr16(pl + 4, key >> 16);
	wr16(pl + 6, key & 0xffff);
	memcpy(pl + 8, in + 14, n - 14);
	return frame4(f, 47, os, od, 0, 1, pl, 8 + n - 14);
}

static void test_tunnels(void)
{
	struct tbl x;
	uint8_t f[2048], l4[1480];
	struct secho_dissect d;
	const uint32_t OA = 0xc0000201u, OB = 0xc0000202u; /* 192.0.2.1, .2 */

	t_begin("table: the same inner flow in two GRE keys is two flows, fragments and both "
	        "directions included; the worker is the same both ways and for every fragment");
	T_CHECK(tbl_init(&x, 1024, false, 300, 30) == 0, "init");
	memset(l4, 0xaa, sizeof(l4));
	wr16(l4, 5000);
	wr16(l4 + 2, 6000);
	uint64_t seed = t_rand64();
	unsigned wk[2][3];
	for (uint32_t key = 1; key <= 2; key++) {
		size_t n = gre4(f, key, OA, OB, A, B, 0x2000, 77, l4, 800); /* first fragment */
		table_frame(&x.t, f, n, T0 + key);
		T_CHECK(secho_dissect(f, n, &d) == SECHO_DISSECT_OK && d.tun_id == key &&
		                d.frag == SECHO_FRAG_FIRST,
		        "key %u: first fragment described", key);
		wk[key - 1][0] = secho_flow_worker_of(f, &d, seed, 2);
		n = gre4(f, key, OA, OB, A, B, 100, 77, l4, 100); /* later, same id */
		table_frame(&x.t, f, n, T0 + 10 + key);
		secho_dissect(f, n, &d);
		wk[key - 1][1] = secho_flow_worker_of(f, &d, seed, 2);
		uint8_t r4[8];
		wr16(r4, 6000);
		wr16(r4 + 2, 5000);
		wr16(r4 + 4, 8);
		wr16(r4 + 6, 0);
		n = gre4(f, key, OB, OA, B, A, 0, 9, r4, 8); /* the answer, back the other way */
		table_frame(&x.t, f, n, T0 + 20 + key);
		secho_dissect(f, n, &d);
		wk[key - 1][2] = secho_flow_worker_of(f, &d, seed, 2);
		T_CHECK(wk[key - 1][0] == wk[key - 1][1] && wk[key - 1][0] == wk[key - 1][2],
		        "key %u: workers %u %u %u", key, wk[key - 1][0], wk[key - 1][1],
		        wk[key - 1][2]);
	}
	T_CHECK(counter(&x, SECHO_FLOW_CNT_FRAG_FIRST) == 2 &&
	                counter(&x, SECHO_FLOW_CNT_FRAG_JOINED) == 2,
	        "two first fragments, two joined");
	secho_flow_table_flush(&x.t);
	qsort(x.out.r, x.out.n, sizeof(*x.out.r), rec_cmp);
	int ok = x.out.n == 2;
	for (size_t i = 0; ok && i < 2; i++) {
		const struct secho_flow_rec *r = &x.out.r[i];
		ok = r->key.tun_type == SECHO_TUN_GRE && r->key.tun_id == i + 1 &&
		     r->key.tun_rsvd[0] == 0 && r->key.sport == 5000 && r->key.dport == 6000 &&
		     r->fwd.packets == 2 && r->fwd.octets == 820 + 120 && r->rev.packets == 1 &&
		     r->rev.octets == 28;
	}
	T_CHECK(ok, "two records (%zu), each 2 + 1 packets in its own key", x.out.n);
	check_invariants(&x, "tunnels");
	tbl_free(&x);
	t_end();
}

static void test_workers(void)
{
	struct tbl one, w[2];
	uint8_t f[2048];

	t_begin("table: one worker and two (split by the symmetric address hash) give the same "
	        "records");
	T_CHECK(tbl_init(&one, 4096, false, 300, 30) == 0 &&
	                tbl_init(&w[0], 4096, false, 300, 30) == 0 &&
	                tbl_init(&w[1], 4096, false, 300, 30) == 0,
	        "init");
	uint64_t ts = T0, seed = t_rand64();
	unsigned per[2] = {0, 0};
	for (unsigned i = 0; i < 20000; i++) {
		size_t n = random_frame(f, &ts);
		table_frame(&one.t, f, n, ts);
		struct secho_dissect d;
		secho_dissect(f, n, &d);
		unsigned k = secho_flow_worker_of(f, &d, seed, 2);
		per[k]++;
		table_frame(&w[k].t, f, n, ts);
		if (i % 64 == 0) {
			secho_flow_table_expire(&one.t, ts);
			secho_flow_table_expire(&w[0].t, ts);
			secho_flow_table_expire(&w[1].t, ts);
		}
	}
	/* every worker saw the time of every frame (offline they walk the whole file) */
	secho_flow_table_expire(&one.t, ts);
	secho_flow_table_expire(&w[0].t, ts);
	secho_flow_table_expire(&w[1].t, ts);
	secho_flow_table_flush(&one.t);
	secho_flow_table_flush(&w[0].t);
	secho_flow_table_flush(&w[1].t);
	struct recs both = {0};
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < w[k].out.n; i++)
			rec_push(&both, &w[k].out.r[i]);
	T_CHECK(per[0] > 2000 && per[1] > 2000, "both workers got frames (%u, %u)", per[0], per[1]);
	T_CHECK(recs_same(&both, &one.out, "workers"), "same records");
	T_CHECK(one.out.n > 100, "%zu records", one.out.n);
	free(both.r);
	tbl_free(&one);
	tbl_free(&w[0]);
	tbl_free(&w[1]);
	t_end();
}

/* ---- the differential: the table against a naive reference ---- */

struct ref_flow {
	struct secho_flow_key key; /* forward */
	struct secho_flow_dir fwd, rev;
	uint64_t start;
	bool ended, open;
};

struct ref {
	struct ref_flow *f;
	size_t n, cap;
	size_t *open; /* indices of the open flows, in no order */
	size_t nopen;
	bool uniflow;
	uint64_t active, inactive, clock;
	struct recs out;
};

static uint64_t ref_last(const struct ref_flow *f)
{
	return f->fwd.last_ns > f->rev.last_ns ? f->fwd.last_ns : f->rev.last_ns;
}

static uint64_t ref_end(const struct ref *r, const struct ref_flow *f)
{
	uint64_t a = f->start + r->active, i = ref_last(f) + r->inactive;
	return a < i ? a : i;
}

static uint8_t ref_reason(const struct ref *r, const struct ref_flow *f)
{
	if (f->ended)
		return SECHO_FLOW_END_EOF;
	return f->start + r->active <= ref_last(f) + r->inactive ? SECHO_FLOW_END_ACTIVE
	                                                         : SECHO_FLOW_END_IDLE;
}

static void ref_close(struct ref *r, struct ref_flow *f, uint8_t reason)
{
	struct secho_flow_rec rec;
	memset(&rec, 0, sizeof(rec));
	rec.key = f->key;
	rec.fwd = f->fwd;
	rec.rev = f->rev;
	rec.end_reason = reason;
	rec_push(&r->out, &rec);
	f->open = false;
	size_t idx = (size_t)(f - r->f);
	for (size_t i = 0; i < r->nopen; i++)
		if (r->open[i] == idx) {
			r->open[i] = r->open[--r->nopen];
			break;
		}
}

static struct ref_flow *ref_new(struct ref *r, const struct secho_flow_key *key, uint64_t ts)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 256;
		r->f = realloc(r->f, r->cap * sizeof(*r->f));
		r->open = realloc(r->open, r->cap * sizeof(*r->open));
		if (!r->f || !r->open)
			abort();
	}
	r->open[r->nopen++] = r->n;
	struct ref_flow *f = &r->f[r->n++];
	memset(f, 0, sizeof(*f));
	f->key = *key;
	f->start = ts;
	f->open = true;
	return f;
}

static void ref_packet(struct ref *r, const struct secho_flow_key *pk, uint64_t ts, uint32_t octets,
                       uint8_t flags)
{
	struct secho_flow_key rk = *pk;
	secho_flow_key_reverse(&rk);
	struct ref_flow *f = NULL;
	bool rev = false;
	if (ts > r->clock)
		r->clock = ts;
	for (size_t j = 0; j < r->nopen && !f; j++) {
		struct ref_flow *o = &r->f[r->open[j]];
		if (!memcmp(&o->key, pk, sizeof(*pk))) {
			f = o;
		} else if (!r->uniflow && !memcmp(&o->key, &rk, sizeof(rk))) {
			f = o;
			rev = true;
		}
	}
	if (f && ts >= ref_end(r, f)) {
		/* its time has come: this packet starts the next record, and is its forward */
		ref_close(r, f, ref_reason(r, f));
		f = NULL;
		rev = false;
	} else if (f && f->ended && (flags & 0x02)) {
		ref_close(r, f, SECHO_FLOW_END_EOF);
		f = NULL;
		rev = false;
	}
	if (!f)
		f = ref_new(r, pk, ts);
	struct secho_flow_dir *d = rev ? &f->rev : &f->fwd;
	if (!d->packets)
		d->first_ns = ts;
	d->packets++;
	d->octets += octets;
	if (ts > d->last_ns)
		d->last_ns = ts;
	d->tcp_flags |= flags;
	if (flags & 0x05)
		f->ended = true;
}

static void ref_flush(struct ref *r)
{
	while (r->nopen) {
		struct ref_flow *f = &r->f[r->open[0]];
		if (ref_end(r, f) <= r->clock)
			ref_close(r, f, ref_reason(r, f));
		else
			ref_close(r, f, f->ended ? SECHO_FLOW_END_EOF : SECHO_FLOW_END_FORCED);
	}
}

static void test_differential(void)
{
	const char *q = getenv("SECHO_TEST_QUICK");
	unsigned rounds = q && *q == '1' ? 6 : 40;

	t_begin("table against the naive reference: %u random streams, biflow and uniflow, "
	        "random sweeps",
	        rounds);
	for (unsigned round = 0; round < rounds; round++) {
		bool uni = round % 2;
		uint64_t act = t_randrange(5, 400), inact = t_randrange(1, 60);
		struct tbl x;
		struct ref r = {.uniflow = uni, .active = act * S_NS, .inactive = inact * S_NS};
		if (!T_CHECK(tbl_init(&x, 65536, uni, act, inact) == 0, "init"))
			break;
		unsigned nkeys = (unsigned)t_randrange(1, 300);
		uint64_t ts = T0;
		unsigned npk = (unsigned)t_randrange(100, 20000);
		for (unsigned i = 0; i < npk; i++) {
			struct secho_flow_key k;
			unsigned id = (unsigned)t_randrange(0, nkeys - 1);
			uint8_t proto = id % 3 == 0 ? 6 : id % 3 == 1 ? 17 : 1;
			key4(&k, proto, A + id % 7, (uint16_t)(id / 7), B + id % 5, 80);
			if (proto == 1) {
				k.sport = k.dport = 0;
				k.icmp_type_code = (uint16_t)(id << 8);
			}
			if (t_randrange(0, 1))
				secho_flow_key_reverse(&k);
			/* mostly small steps, sometimes past a timeout; a sweep at any time
			 * between the last packet and this one (never ahead of a packet: time
			 * that has passed does not come back) */
			uint64_t step = t_randrange(0, 9) ? t_randrange(0, 2 * S_NS)
			                                  : t_randrange(0, 100 * S_NS);
			if (t_randrange(0, 20) == 0)
				secho_flow_table_expire(&x.t, ts + t_randrange(0, step));
			ts += step;
			uint8_t fl =
			        proto == 6
			                ? (uint8_t)(t_randrange(0, 7) ? 0x10 : t_randrange(0, 0x3f))
			                : 0;
			uint32_t oct = (uint32_t)t_randrange(20, 1500);
			pkt(&x, &k, ts, oct, fl);
			ref_packet(&r, &k, ts, oct, fl);
		}
		secho_flow_table_flush(&x.t);
		ref_flush(&r);
		T_CHECK(counter(&x, SECHO_FLOW_CNT_END_RESOURCE) == 0, "round %u: no eviction",
		        round);
		char what[64];
		snprintf(what, sizeof(what), "round %u (%s, active %llu s, inactive %llu s)", round,
		         uni ? "uniflow" : "biflow", (unsigned long long)act,
		         (unsigned long long)inact);
		T_CHECK(recs_same(&x.out, &r.out, what), "%s", what);
		check_invariants(&x, what);
		free(r.f);
		free(r.open);
		free(r.out.r);
		tbl_free(&x);
	}
	t_end();
}

/* The sweep exports an idle flow without a flush whatever the date: the 32-bit tick of the
 * clock is below 2^31 on 2026-01-01 and above it on 2026-12-01 (a flow's first bound was
 * once taken from its empty entry, 2^31 ticks or more away, and never came due then). */
static void test_sweep_dates(void)
{
	static const uint64_t dates[] = {T0, 1796083200000000000ull /* 2026-12-01 */,
	                                 4102444800000000000ull /* 2100-01-01 */};

	t_begin("table: the sweep exports idle flows on any date, without a flush");
	for (size_t i = 0; i < sizeof(dates) / sizeof(dates[0]); i++) {
		struct tbl x;
		struct secho_flow_key k;
		if (!T_CHECK(tbl_init(&x, 4096, false, 300, 2) == 0, "init"))
			break;
		key4(&k, 17, A, 1000, B, 53);
		pkt(&x, &k, dates[i], 100, 0);
		for (unsigned step = 1; step <= 40 && !x.out.n; step++) /* 4 s in 100 ms */
			secho_flow_table_expire(&x.t, dates[i] + step * S_NS / 10);
		T_CHECK(x.out.n == 1 && x.out.r[0].end_reason == SECHO_FLOW_END_IDLE,
		        "date %zu: %zu records after 4 s of sweeps", i, x.out.n);
		tbl_free(&x);
	}
	t_end();
}

/* ---- the timer wheel ---- */

/* Records with the table's clock when each left (the wheel's lateness). */
struct timed {
	struct secho_flow_table *t;
	uint64_t active, inactive, slack, worst;
	size_t n, late, timed_out;
};

static void on_timed(void *ctx, const struct secho_flow_rec *r)
{
	struct timed *w = ctx;
	uint64_t last = r->fwd.last_ns > r->rev.last_ns ? r->fwd.last_ns : r->rev.last_ns;
	uint64_t start = r->fwd.first_ns; /* time only goes forward here: the record's start */
	uint64_t end =
	        start + w->active < last + w->inactive ? start + w->active : last + w->inactive;

	w->n++;
	if (r->end_reason != SECHO_FLOW_END_IDLE && r->end_reason != SECHO_FLOW_END_ACTIVE)
		return;
	w->timed_out++;
	uint64_t late = w->t->clock_ns > end ? w->t->clock_ns - end : 0;
	if (late > w->worst)
		w->worst = late;
	if (late > w->slack)
		w->late++;
}

/* A table in malloc'd memory whose records go to on_timed. */
static int timed_init(struct secho_flow_table *t, void **mem, struct timed *w, uint32_t flows,
                      uint64_t active_ns, uint64_t inactive_ns)
{
	struct secho_flow_table_cfg cfg = {
	        .flows = flows,
	        .active_ns = active_ns,
	        .inactive_ns = inactive_ns,
	        .hash = SECHO_FLOW_HASH_DEFAULT,
	        .seed = t_rand64(),
	        .emit = on_timed,
	        .ctx = w,
	};
	size_t len = secho_flow_table_mem_size(&cfg);

	memset(w, 0, sizeof(*w));
	w->t = t;
	w->active = active_ns;
	w->inactive = inactive_ns;
	if (!len || posix_memalign(mem, 64, len))
		return -1;
	memset(*mem, 0, len);
	return secho_flow_table_init(t, &cfg, *mem, len);
}

/*
 * The wheel exports every record whose time has come within one wheel slot (2^24 ns) and
 * one expire step of its end, without a packet of its own, in a large table holding a few
 * flows (the wheel's cost follows the records, not the table) and in a small full one
 * (evictions, slots taken again while still in the wheel); and it forgets no record: once
 * the clock is past every end, the table is empty without a flush. Time also jumps by
 * more than a turn of the wheel (68.7 s) and by more than 2^30 ticks.
 */
static void test_wheel(void)
{
	t_begin("table: the timer wheel exports each record within one wheel slot of its end, "
	        "and forgets none");
	for (unsigned round = 0; round < 6; round++) {
		struct secho_flow_table t;
		struct timed w;
		void *mem = NULL;
		bool small = round % 2;
		uint64_t act = t_randrange(1, 300) * S_NS / 4,
		         inact = t_randrange(1, 40) * S_NS / 4;
		uint64_t step = t_randrange(1, 50) * 1000000ull; /* expire every 1-50 ms */
		if (!T_CHECK(timed_init(&t, &mem, &w, small ? 64 : 65536, act, inact) == 0, "init"))
			break;
		w.slack = (1ull << SECHO_FLOW_WHEEL_SHIFT) + step;
		unsigned nkeys = small ? 500 : (unsigned)t_randrange(10, 5000);
		uint64_t ts = T0 + t_randrange(0, 1000) * S_NS, next = ts + step;
		for (unsigned i = 0; i < 20000; i++) {
			struct secho_flow_key k;
			unsigned id = (unsigned)t_randrange(0, nkeys - 1);
			key4(&k, 17, A + id % 11, (uint16_t)(id / 11), B, 53);
			uint64_t gap = t_randrange(0, 99) ? t_randrange(0, 3 * step)
			                                  : t_randrange(0, 100) * S_NS;
			ts += gap;
			for (; next < ts;
			     next += step) /* every step of time, between packets too */
				secho_flow_table_expire(&t, next);
			struct secho_flow_pkt p = {.key = k, .ts_ns = ts, .octets = 100};
			secho_flow_table_packet(&t, &p);
		}
		uint64_t end = ts + (act > inact ? act : inact) + 2 * w.slack;
		for (; next <= end; next += step)
			secho_flow_table_expire(&t, next);
		T_CHECK(w.late == 0,
		        "round %u (%s table, active %llu ms, inactive %llu ms, step "
		        "%llu ms): %zu of %zu timed-out records late, the latest by %llu us",
		        round, small ? "full" : "large", (unsigned long long)(act / 1000000),
		        (unsigned long long)(inact / 1000000), (unsigned long long)(step / 1000000),
		        w.late, w.timed_out, (unsigned long long)(w.worst / 1000));
		T_CHECK(t.cnt.active == 0 && w.n == t.cnt.c[SECHO_FLOW_CNT_FLOWS],
		        "round %u: every record left without a flush (%llu still in the table)",
		        round, (unsigned long long)t.cnt.active);
		/* a jump past 2^30 ticks (13 days): the bounds wrap, every entry is looked at */
		struct secho_flow_key k;
		key4(&k, 6, A, 1, B, 2);
		struct secho_flow_pkt p = {.key = k, .ts_ns = end + S_NS, .octets = 60};
		secho_flow_table_packet(&t, &p);
		secho_flow_table_expire(&t, end + S_NS + (1ull << 50));
		T_CHECK(t.cnt.active == 0, "round %u: exported after a jump of 13 days", round);
		free(mem);
	}
	t_end();
}

/* Seeds for tests/fuzz/fuzz_flow.c: frame streams in its input format, [len] [time step in
 * 100 ms] [frame], from random_frame() and a TCP connection with fragments after it. */
static int write_seeds(const char *dir)
{
	uint8_t f[2048];
	int rc = 0;
	for (unsigned s = 0; s < 8; s++) {
		uint8_t out[4096];
		size_t n = 0;
		uint64_t ts = T0;
		out[n++] = (uint8_t)s; /* uniflow bit, table size bit */
		for (unsigned k = 0; k < 24; k++) {
			size_t len = random_frame(f, &ts);
			if (len > 255)
				len = 255;
			if (n + 2 + len > sizeof(out))
				break;
			out[n++] = (uint8_t)len;
			out[n++] = (uint8_t)(k % 5 ? 0 : 3 + s);
			memcpy(out + n, f, len);
			n += len;
		}
		char path[512];
		snprintf(path, sizeof(path), "%s/flow-%u", dir, s);
		FILE *fp = fopen(path, "wb");
		if (!fp || fwrite(out, 1, n, fp) != n) {
			perror(path);
			rc = 1;
		}
		if (fp && fclose(fp))
			rc = 1;
	}
	return rc;
}

/* A random frame for the key tests: [VXLAN outer headers,] Ethernet, 0-2 VLAN tags,
 * IPv4 or IPv6, TCP, UDP, ICMP or ICMPv6 (or another protocol), with often equal
 * addresses, ports and ICMP query types. Returns its length. */
static size_t key_frame(uint8_t *f)
{
	static const uint8_t icmp4[] = {0, 8, 13, 14, 15, 16, 17, 18, 3, 11};
	static const uint8_t icmp6[] = {128, 129, 139, 140, 1, 135};
	size_t n = 0;
	bool v6 = t_randrange(0, 1), vx = t_randrange(0, 3) == 0;

	memset(f, 0, 256);
	if (vx) { /* outer Ethernet, IPv4, UDP to 4789, VXLAN with a random VNI */
		f[12] = 0x08;
		f[14] = 0x45;
		f[15 + 8] = 17;   /* protocol, at IPv4 byte 9 */
		f[14 + 8] = 64;   /* TTL */
		f[14 + 12] = 192; /* 192.0.2.1 -> 192.0.2.2 */
		f[14 + 14] = 2;
		f[14 + 15] = 1;
		f[14 + 16] = 192;
		f[14 + 18] = 2;
		f[14 + 19] = 2;
		f[34 + 2] = 0x12; /* dport 4789 */
		f[34 + 3] = 0xb5;
		f[42] = 0x08; /* VXLAN: I flag, VNI */
		t_randbytes(f + 46, 3);
		n = 50;
	}
	size_t eth = n;
	t_randbytes(f + n, 12);
	n += 12;
	unsigned nv = (unsigned)t_randrange(0, 2);
	for (unsigned i = 0; i < nv; i++) {
		f[n] = i + 1 < nv ? 0x88 : 0x81;
		f[n + 1] = i + 1 < nv ? 0xa8 : 0x00;
		t_randbytes(f + n + 2, 2);
		n += 4;
	}
	f[n] = v6 ? 0x86 : 0x08;
	f[n + 1] = v6 ? 0xdd : 0x00;
	n += 2;
	size_t l3 = n, al = v6 ? 16 : 4, hl = v6 ? 40 : 20;
	unsigned pick = (unsigned)t_randrange(0, 9);
	uint8_t proto = pick < 4 ? 6 : pick < 7 ? 17 : pick < 9 ? (v6 ? 58 : 1) : 47 + 42;
	uint8_t *src = f + l3 + (v6 ? 8 : 12), *dst = src + al;
	t_randbytes(src, al);
	if (t_randrange(0, 2) == 0) { /* equal addresses, or equal in their first 8 bytes */
		memcpy(dst, src, al);
		if (v6 && t_randrange(0, 1))
			t_randbytes(dst + 8, 8);
	} else {
		t_randbytes(dst, al);
	}
	size_t l4len = 20;
	if (v6) {
		f[l3] = 0x60;
		f[l3 + 4] = 0;
		f[l3 + 5] = (uint8_t)l4len;
		f[l3 + 6] = proto;
		f[l3 + 7] = 64;
	} else {
		f[l3] = 0x45;
		f[l3 + 3] = (uint8_t)(20 + l4len);
		f[l3 + 8] = 64;
		f[l3 + 9] = proto;
	}
	uint8_t *l4 = f + l3 + hl;
	t_randbytes(l4, 4);
	if (t_randrange(0, 2) == 0)
		memcpy(l4 + 2, l4, 2); /* equal ports */
	if (proto == 6)
		l4[12] = 0x50;
	if (proto == 1 || proto == 58) {
		l4[0] = proto == 1 ? icmp4[t_randrange(0, sizeof(icmp4) - 1)]
		                   : icmp6[t_randrange(0, sizeof(icmp6) - 1)];
		l4[1] = (uint8_t)t_randrange(0, 1);
	}
	if (vx) { /* the outer lengths */
		size_t inner = l3 + hl + l4len - eth;
		f[14 + 3] = (uint8_t)(20 + 8 + 8 + inner);
		f[14 + 2] = (uint8_t)((20 + 8 + 8 + inner) >> 8);
		f[34 + 5] = (uint8_t)(8 + 8 + inner);
		f[34 + 4] = (uint8_t)((8 + 8 + inner) >> 8);
	}
	return l3 + hl + l4len;
}

/* secho_flow_key_canon_from against secho_flow_key_from and secho_flow_key_canon: the same
 * 52 bytes and the same direction, on frames with every kind of tie. */
static void test_key_canon_from(void)
{
	t_begin("table: the key built in canonical order in one step equals key_from + canon");
	uint8_t f[256];
	unsigned frames = 0, bad = 0, swaps = 0, ties = 0, tunnels = 0;

	for (unsigned i = 0; i < 20000; i++) {
		size_t n = key_frame(f);
		struct secho_dissect d;
		if (secho_dissect(f, n, &d) != SECHO_DISSECT_OK || !d.ip_version)
			continue;
		frames++;
		struct secho_flow_key own, want, got;
		secho_flow_key_from(f, &d, &own);
		bool ws = secho_flow_key_canon(&own, &want);
		memset(&got, 0xa5, sizeof(got));
		bool gs = secho_flow_key_canon_from(f, &d, &got);
		swaps += ws;
		ties += !memcmp(own.src, own.dst, 16);
		tunnels += own.tun_type != 0;
		if (ws != gs || memcmp(&want, &got, sizeof(got)) != 0) {
			if (bad++ < 3)
				T_CHECK(0, "frame %u (%zu bytes): swapped %d/%d, keys differ", i, n,
				        ws, gs);
		}
	}
	T_CHECK(bad == 0, "%u of %u keys differ", bad, frames);
	T_CHECK(frames > 15000 && swaps > frames / 4 && ties > frames / 10 && tunnels > frames / 8,
	        "coverage: %u frames, %u swapped, %u with equal addresses, %u tunnelled", frames,
	        swaps, ties, tunnels);
	t_end();
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--write-seeds")) {
		t_seed_init("test_flow_table");
		return write_seeds(argv[2]);
	}
	if (argc != 1) {
		fprintf(stderr, "usage: test_flow_table [--write-seeds DIR]\n");
		return 2;
	}
	t_seed_init("test_flow_table");
	test_reasons();
	test_flood();
	test_directions();
	test_fragments();
	test_tunnels();
	test_workers();
	test_differential();
	test_sweep_dates();
	test_wheel();
	test_key_canon_from();
	return t_exit();
}
