/*
 * tests/unit/test_flow_tier.c - the flow table with an offload tier behind its hooks
 * (table.h, struct secho_flow_offload_hooks), against the same table without one.
 *
 * The tier here is a model of the XDP program and its map (src/flow/offload/offload_xdp.bpf.c):
 * a small array of offloaded keys with per-direction counters; a packet of an offloaded
 * key is counted there, except TCP SYN, FIN and RST and a packet that comes after the
 * record's active timeout or after the flow has been idle for the inactive timeout, which
 * go to the table, as do the packets of every other key. Scans (secho_flow_table_offload_seen) come
 * at random times, or never.
 *
 *   - random streams, biflow and uniflow, random thresholds, timeouts and map sizes
 *     (inserts refused), random sweeps, TCP flags (ends, SYN after FIN), gaps below, at
 *     and above the inactive timeout, active timeouts: the records are exactly those of
 *     the table without the tier (every key, counter, time, flag and end reason); the map
 *     is empty after the flush; every packet is in a record exactly once
 *   - a busy offloaded flow that no scan ever refreshes is never taken for idle (the table
 *     asks the tier first) and is one record
 *   - an active timeout of an offloaded flow: it comes back (counted), is not offloaded
 *     again, and the packets add up
 *   - a full bucket evicts an offloaded flow: its record takes the map's counters
 *   - a refused insert is not tried again
 */
#include "harness.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow/core/table.h"

#define S_NS 1000000000ull
#define T0   1767225600000000000ull /* 2026-01-01 */

/* ---- records ---- */

struct recs {
	struct secho_flow_rec *r;
	size_t n, cap;
};

static void on_rec(void *ctx, const struct secho_flow_rec *r)
{
	struct recs *rs = ctx;
	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? rs->cap * 2 : 64;
		rs->r = realloc(rs->r, rs->cap * sizeof(*rs->r));
		if (!rs->r)
			abort();
	}
	rs->r[rs->n++] = *r;
}

static int rec_order(const void *a, const void *b)
{
	const struct secho_flow_rec *x = a, *y = b;
	int c = memcmp(&x->key, &y->key, sizeof(x->key));
	if (c)
		return c;
	return (x->fwd.first_ns > y->fwd.first_ns) - (x->fwd.first_ns < y->fwd.first_ns);
}

static bool dir_same(const struct secho_flow_dir *a, const struct secho_flow_dir *b)
{
	return a->packets == b->packets && a->octets == b->octets && a->first_ns == b->first_ns &&
	       a->last_ns == b->last_ns && a->tcp_flags == b->tcp_flags;
}

static void rec_show(const char *tag, const struct secho_flow_rec *r)
{
	printf("  %s: proto %u ports %u>%u end %u | %llu pk %llu B %llu..%llu f%02x | %llu pk "
	       "%llu B %llu..%llu f%02x\n",
	       tag, r->key.proto, r->key.sport, r->key.dport, r->end_reason,
	       (unsigned long long)r->fwd.packets, (unsigned long long)r->fwd.octets,
	       (unsigned long long)((r->fwd.first_ns - T0) / 1000),
	       (unsigned long long)((r->fwd.last_ns - T0) / 1000), r->fwd.tcp_flags,
	       (unsigned long long)r->rev.packets, (unsigned long long)r->rev.octets,
	       (unsigned long long)(r->rev.first_ns ? (r->rev.first_ns - T0) / 1000 : 0),
	       (unsigned long long)(r->rev.last_ns ? (r->rev.last_ns - T0) / 1000 : 0),
	       r->rev.tcp_flags);
}

/* Both sorted, then compared record by record; the first differences shown. */
static bool recs_same(struct recs *got, struct recs *want, const char *what)
{
	qsort(got->r, got->n, sizeof(*got->r), rec_order);
	qsort(want->r, want->n, sizeof(*want->r), rec_order);
	bool same = got->n == want->n;
	unsigned shown = 0;
	for (size_t i = 0; i < got->n && i < want->n; i++) {
		const struct secho_flow_rec *a = &got->r[i], *b = &want->r[i];
		if (!memcmp(&a->key, &b->key, sizeof(a->key)) && dir_same(&a->fwd, &b->fwd) &&
		    dir_same(&a->rev, &b->rev) && a->end_reason == b->end_reason)
			continue;
		same = false;
		if (shown++ < 3) {
			printf("  %s: record %zu differs\n", what, i);
			rec_show("got ", a);
			rec_show("want", b);
		}
	}
	if (got->n != want->n)
		printf("  %s: %zu records, want %zu\n", what, got->n, want->n);
	return same;
}

/* ---- the model of the tier: the program's map ---- */

#define MAP_MAX 64

struct tier {
	struct secho_flow_key key[MAP_MAX];
	struct secho_flow_dir d[MAP_MAX][2];
	bool used[MAP_MAX];
	uint64_t until[MAP_MAX], born[MAP_MAX]; /* the program's timeouts (offload_abi.h) */
	uint64_t clock;                         /* the latest packet's time: "now" */
	uint64_t inactive;
	unsigned cap;
	bool uniflow;
	uint64_t offload_calls, inserted, refused, peeks, reclaimed, missing, returned;
	uint64_t map_packets; /* given back to the table */
	uint64_t passed;      /* packets of offloaded flows passed for a timeout */
};

static int tier_find(const struct tier *m, const struct secho_flow_key *k)
{
	for (unsigned i = 0; i < m->cap; i++)
		if (m->used[i] && !memcmp(&m->key[i], k, sizeof(*k)))
			return (int)i;
	return -1;
}

static bool h_offload(void *ctx, const struct secho_flow_key *ck, uint64_t until_ns)
{
	struct tier *m = ctx;
	m->offload_calls++;
	if (tier_find(m, ck) >= 0)
		return false;
	for (unsigned i = 0; i < m->cap; i++)
		if (!m->used[i]) {
			m->used[i] = true;
			m->key[i] = *ck;
			memset(m->d[i], 0, sizeof(m->d[i]));
			m->until[i] = until_ns;
			m->born[i] = m->clock;
			m->inserted++;
			return true;
		}
	m->refused++;
	return false;
}

static int h_peek(void *ctx, const struct secho_flow_key *ck, uint64_t *last)
{
	struct tier *m = ctx;
	int i = tier_find(m, ck);
	m->peeks++;
	*last = 0;
	if (i < 0)
		return -2;
	for (int d = 0; d < 2; d++)
		if (m->d[i][d].packets && m->d[i][d].last_ns > *last)
			*last = m->d[i][d].last_ns;
	return 0;
}

static int h_reclaim(void *ctx, const struct secho_flow_key *ck, struct secho_flow_dir d[2])
{
	struct tier *m = ctx;
	int i = tier_find(m, ck);
	if (i < 0) {
		m->missing++;
		memset(d, 0, 2 * sizeof(*d));
		return -2;
	}
	d[0] = m->d[i][0];
	d[1] = m->d[i][1];
	m->used[i] = false;
	m->reclaimed++;
	m->map_packets += d[0].packets + d[1].packets;
	return 0;
}

static void h_returned(void *ctx)
{
	((struct tier *)ctx)->returned++;
}

static const struct secho_flow_offload_hooks hooks = {
        .offload = h_offload, .peek = h_peek, .reclaim = h_reclaim, .returned = h_returned};

/* The program: a packet of an offloaded key is counted in the map (true), but TCP
 * SYN/FIN/RST, and packets after the record's active timeout or after the flow was idle
 * for the inactive timeout; anything else is the table's (false). */
static bool tier_packet(struct tier *m, const struct secho_flow_pkt *p)
{
	m->clock = p->ts_ns;
	if (p->key.proto == 6 && (p->tcp_flags & 0x07))
		return false;
	struct secho_flow_key k = p->key;
	unsigned dir = 0;
	if (!m->uniflow)
		dir = secho_flow_key_canon(&p->key, &k) ? 1 : 0;
	int i = tier_find(m, &k);
	if (i < 0)
		return false;
	uint64_t last = m->born[i];
	for (int x = 0; x < 2; x++)
		if (m->d[i][x].packets && m->d[i][x].last_ns > last)
			last = m->d[i][x].last_ns;
	if ((m->until[i] && p->ts_ns >= m->until[i]) || p->ts_ns - last >= m->inactive) {
		m->passed++;
		return false;
	}
	struct secho_flow_dir *d = &m->d[i][dir];
	if (!d->packets)
		d->first_ns = p->ts_ns;
	d->packets++;
	d->octets += p->octets;
	d->last_ns = p->ts_ns;
	d->tcp_flags |= p->tcp_flags;
	return true;
}

static void tier_scan(struct tier *m, struct secho_flow_table *t)
{
	for (unsigned i = 0; i < m->cap; i++) {
		if (!m->used[i])
			continue;
		uint64_t last = 0;
		for (int d = 0; d < 2; d++)
			if (m->d[i][d].packets && m->d[i][d].last_ns > last)
				last = m->d[i][d].last_ns;
		if (last)
			secho_flow_table_offload_seen(t, &m->key[i], last);
	}
}

static unsigned tier_used(const struct tier *m)
{
	unsigned n = 0;
	for (unsigned i = 0; i < m->cap; i++)
		n += m->used[i];
	return n;
}

/* ---- tables ---- */

struct tbl {
	struct secho_flow_table t;
	void *mem;
	struct recs out;
};

static int tbl_init(struct tbl *x, uint32_t flows, bool uniflow, uint64_t active_ns,
                    uint64_t inactive_ns, struct tier *m, uint32_t after)
{
	struct secho_flow_table_cfg cfg = {
	        .flows = flows,
	        .uniflow = uniflow,
	        .active_ns = active_ns,
	        .inactive_ns = inactive_ns,
	        .hash = SECHO_FLOW_HASH_DEFAULT,
	        .seed = t_rand64(),
	        .emit = on_rec,
	        .offload = m ? &hooks : NULL,
	        .offload_ctx = m,
	        .offload_after = m ? after : 0,
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
	memset(x, 0, sizeof(*x));
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

/* One packet to both: the plain table, and the tier or the table behind it. */
static void both(struct tbl *ref, struct tbl *x, struct tier *m, const struct secho_flow_pkt *p)
{
	secho_flow_table_packet(&ref->t, p);
	if (!tier_packet(m, p))
		secho_flow_table_packet(&x->t, p);
}

static uint64_t rec_packets(const struct recs *rs)
{
	uint64_t n = 0;
	for (size_t i = 0; i < rs->n; i++)
		n += rs->r[i].fwd.packets + rs->r[i].rev.packets;
	return n;
}

#define A 0xc6120001u
#define B 0xc6120002u

/* ---- random streams against the table without the tier ---- */

static void test_random(void)
{
	const char *q = getenv("SECHO_TEST_QUICK");
	unsigned rounds = q && *q == '1' ? 8 : 60;

	struct tier all = {0}; /* what happened over all rounds */

	t_begin("tier: %u random streams give the records of the table without it", rounds);
	/* Past `rounds`, up to 60, until the streams have exercised every path (a quick run's
	 * few streams may all miss one of them, an active timeout of an offloaded flow say). */
	for (unsigned round = 0; round < 60; round++) {
		if (round >= rounds && all.inserted && all.refused && all.peeks && all.passed &&
		    all.returned && all.map_packets)
			break;
		bool uni = round % 2;
		uint64_t inact = t_randrange(2, 20) * S_NS, act = t_randrange(5, 120) * S_NS;
		struct tier m = {.cap = (unsigned)t_randrange(1, MAP_MAX),
		                 .uniflow = uni,
		                 .inactive = inact};
		uint32_t after = (uint32_t)t_randrange(1, 12);
		bool scans = round % 3 != 0;
		struct tbl ref, x;
		if (!T_CHECK(tbl_init(&ref, 65536, uni, act, inact, NULL, 0) == 0 &&
		                     tbl_init(&x, 65536, uni, act, inact, &m, after) == 0,
		             "init"))
			break;
		unsigned nkeys = (unsigned)t_randrange(1, 80);
		uint64_t ts = T0;
		unsigned npk = (unsigned)t_randrange(200, 6000), sent = 0;
		for (unsigned i = 0; i < npk; i++) {
			unsigned id = (unsigned)t_randrange(0, nkeys - 1);
			/* mostly small steps, sometimes past a timeout, sometimes exactly to
			 * one (a packet at a flow's end time starts a new record) */
			uint64_t step = t_randrange(0, 200) ? t_randrange(0, S_NS / 20)
			                                    : t_randrange(0, 3 * inact);
			if (t_randrange(0, 50) == 0)
				step = inact;
			ts += step;
			if (t_randrange(0, 10) == 0) {
				secho_flow_table_expire(&ref.t, ts);
				secho_flow_table_expire(&x.t, ts);
			}
			if (scans && t_randrange(0, 40) == 0)
				tier_scan(&m, &x.t);
			struct secho_flow_pkt p = {.ts_ns = ts,
			                           .octets = (uint32_t)t_randrange(40, 1500)};
			uint8_t proto = id % 4 == 3 ? 17 : 6;
			key4(&p.key, proto, A + id % 5, (uint16_t)(1000 + id), B + id % 3, 443);
			if (t_randrange(0, 1))
				secho_flow_key_reverse(&p.key);
			if (proto == 6) {
				unsigned r = (unsigned)t_randrange(0, 99);
				p.tcp_flags = r < 2 ? 0x02 : r < 3 ? 0x11 : r < 4 ? 0x04 : 0x18;
			}
			both(&ref, &x, &m, &p);
			sent++;
		}
		secho_flow_table_flush(&ref.t);
		secho_flow_table_flush(&x.t);
		char what[96];
		snprintf(what, sizeof(what),
		         "round %u (%s, active %llu s, inactive %llu s, threshold %u, map %u, %s)",
		         round, uni ? "uniflow" : "biflow", (unsigned long long)(act / S_NS),
		         (unsigned long long)(inact / S_NS), after, m.cap,
		         scans ? "scans" : "no scans");
		T_CHECK(recs_same(&x.out, &ref.out, what), "%s", what);
		T_CHECK(tier_used(&m) == 0 && m.reclaimed == m.inserted && !m.missing,
		        "%s: map left %u, inserted %llu, reclaimed %llu, missing %llu", what,
		        tier_used(&m), (unsigned long long)m.inserted,
		        (unsigned long long)m.reclaimed, (unsigned long long)m.missing);
		T_CHECK(rec_packets(&x.out) == sent &&
		                x.t.cnt.c[SECHO_FLOW_CNT_PACKETS] + m.map_packets == sent,
		        "%s: %llu packets in records, table %llu + map %llu, sent %u", what,
		        (unsigned long long)rec_packets(&x.out),
		        (unsigned long long)x.t.cnt.c[SECHO_FLOW_CNT_PACKETS],
		        (unsigned long long)m.map_packets, sent);
		T_CHECK(m.offload_calls == m.inserted + m.refused, "%s: offload calls", what);
		all.inserted += m.inserted;
		all.refused += m.refused;
		all.peeks += m.peeks;
		all.map_packets += m.map_packets;
		all.passed += m.passed;
		all.returned += m.returned;
		all.offload_calls += sent; /* packets, here */
		if (t_case_failures())
			printf("  %s: %u packets, %llu offloaded, %llu refused, %llu peeks, %llu "
			       "of "
			       "the packets in the map, %llu passed at a timeout, %llu returned\n",
			       what, sent, (unsigned long long)m.inserted,
			       (unsigned long long)m.refused, (unsigned long long)m.peeks,
			       (unsigned long long)m.map_packets, (unsigned long long)m.passed,
			       (unsigned long long)m.returned);
		tbl_free(&ref);
		tbl_free(&x);
		if (t_case_failures())
			break;
	}
	printf("  all rounds: %llu packets, %llu flows offloaded, %llu refused, %llu peeks, %llu "
	       "packets counted in the map, %llu passed at a timeout, %llu flows returned\n",
	       (unsigned long long)all.offload_calls, (unsigned long long)all.inserted,
	       (unsigned long long)all.refused, (unsigned long long)all.peeks,
	       (unsigned long long)all.map_packets, (unsigned long long)all.passed,
	       (unsigned long long)all.returned);
	/* the streams must have exercised what they are for */
	T_CHECK(all.inserted && all.refused && all.peeks && all.passed && all.returned &&
	                all.map_packets,
	        "streams too tame");
	t_end();
}

/* ---- the cases one by one ---- */

static void test_stale(void)
{
	struct tier m = {.cap = 4, .inactive = 2 * S_NS};
	struct tbl ref, x;

	t_begin("tier: a busy offloaded flow no scan refreshes is not taken for idle");
	T_CHECK(tbl_init(&ref, 1024, false, 300 * S_NS, 2 * S_NS, NULL, 0) == 0 &&
	                tbl_init(&x, 1024, false, 300 * S_NS, 2 * S_NS, &m, 3) == 0,
	        "init");
	struct secho_flow_pkt p = {.octets = 100};
	key4(&p.key, 17, A, 5000, B, 53);
	for (unsigned i = 0; i < 40; i++) { /* 20 s, a packet every 0.5 s */
		p.ts_ns = T0 + i * S_NS / 2;
		both(&ref, &x, &m, &p);
		secho_flow_table_expire(&ref.t, p.ts_ns + S_NS / 4);
		secho_flow_table_expire(&x.t, p.ts_ns + S_NS / 4);
	}
	T_CHECK(x.out.n == 0 && tier_used(&m) == 1, "exported while busy: %zu records", x.out.n);
	T_CHECK(m.peeks > 0, "the table asked the tier (%llu peeks)", (unsigned long long)m.peeks);
	secho_flow_table_expire(&ref.t, p.ts_ns + 5 * S_NS);
	secho_flow_table_expire(&x.t, p.ts_ns + 5 * S_NS);
	T_CHECK(x.out.n == 1 && x.out.r[0].end_reason == SECHO_FLOW_END_IDLE && tier_used(&m) == 0,
	        "idle: %zu records, map %u", x.out.n, tier_used(&m));
	T_CHECK(recs_same(&x.out, &ref.out, "stale"), "the record");
	T_CHECK(m.returned == 0 && m.map_packets == 37, "returned %llu, map packets %llu",
	        (unsigned long long)m.returned, (unsigned long long)m.map_packets);
	tbl_free(&ref);
	tbl_free(&x);
	t_end();
}

static void test_active(void)
{
	struct tier m = {.cap = 4, .inactive = 5 * S_NS};
	struct tbl x;

	t_begin("tier: an active timeout brings an offloaded flow back, for good");
	T_CHECK(tbl_init(&x, 1024, false, 10 * S_NS, 5 * S_NS, &m, 5) == 0, "init");
	struct secho_flow_pkt p = {.octets = 100};
	key4(&p.key, 17, B, 5000, A, 53); /* forward against the canonical order */
	unsigned sent = 0;
	for (unsigned i = 0; i < 250; i++) { /* 25 s, both directions */
		p.ts_ns = T0 + i * S_NS / 10;
		secho_flow_key_reverse(&p.key);
		if (!tier_packet(&m, &p))
			secho_flow_table_packet(&x.t, &p);
		sent++;
		secho_flow_table_expire(&x.t, p.ts_ns);
	}
	secho_flow_table_flush(&x.t);
	T_CHECK(m.inserted == 1 && m.offload_calls == 1, "offloaded %llu times (%llu calls)",
	        (unsigned long long)m.inserted, (unsigned long long)m.offload_calls);
	T_CHECK(m.returned == 1 && tier_used(&m) == 0, "returned %llu, map %u",
	        (unsigned long long)m.returned, tier_used(&m));
	T_CHECK(x.out.n >= 2 && x.out.r[0].end_reason == SECHO_FLOW_END_ACTIVE,
	        "%zu records, the first ended %u", x.out.n, x.out.n ? x.out.r[0].end_reason : 0);
	T_CHECK(rec_packets(&x.out) == sent, "%llu packets in records of %u",
	        (unsigned long long)rec_packets(&x.out), sent);
	/* the first record: forward is its first packet's direction (A -> B) */
	T_CHECK(x.out.n && x.out.r[0].fwd.packets >= x.out.r[0].rev.packets &&
	                x.out.r[0].fwd.first_ns == T0 && x.out.r[0].rev.first_ns == T0 + S_NS / 10,
	        "directions of the first record");
	tbl_free(&x);
	t_end();
}

static void test_evict(void)
{
	struct tier m = {.cap = 16, .inactive = 30 * S_NS};
	struct tbl ref, x;

	t_begin("tier: a full bucket evicts an offloaded flow with its map counters");
	/* one bucket of 8: the ninth flow evicts the least recently used */
	T_CHECK(tbl_init(&ref, 8, false, 300 * S_NS, 30 * S_NS, NULL, 0) == 0 &&
	                tbl_init(&x, 8, false, 300 * S_NS, 30 * S_NS, &m, 2) == 0,
	        "init");
	uint64_t ts = T0;
	for (unsigned f = 0; f < 9; f++)
		for (unsigned i = 0; i < 10; i++) {
			struct secho_flow_pkt p = {.octets = 60 + f, .ts_ns = ts += 1000};
			key4(&p.key, 17, A, (uint16_t)(100 + f), B, 53);
			both(&ref, &x, &m, &p);
		}
	T_CHECK(x.out.n == 1 && x.out.r[0].end_reason == SECHO_FLOW_END_RESOURCE,
	        "%zu records evicted", x.out.n);
	secho_flow_table_flush(&ref.t);
	secho_flow_table_flush(&x.t);
	T_CHECK(recs_same(&x.out, &ref.out, "evict"), "records");
	T_CHECK(tier_used(&m) == 0 && m.inserted == 9, "map %u, inserted %llu", tier_used(&m),
	        (unsigned long long)m.inserted);
	tbl_free(&ref);
	tbl_free(&x);
	t_end();
}

static void test_refused(void)
{
	struct tier m = {.cap = 1, .inactive = 30 * S_NS};
	struct tbl ref, x;

	t_begin("tier: a refused insert leaves the flow in the table, not tried again");
	T_CHECK(tbl_init(&ref, 1024, false, 300 * S_NS, 30 * S_NS, NULL, 0) == 0 &&
	                tbl_init(&x, 1024, false, 300 * S_NS, 30 * S_NS, &m, 3) == 0,
	        "init");
	uint64_t ts = T0;
	for (unsigned i = 0; i < 100; i++) {
		struct secho_flow_pkt p = {.octets = 500, .ts_ns = ts += 1000};
		key4(&p.key, 17, A, (uint16_t)(100 + i % 2), B, 53);
		both(&ref, &x, &m, &p);
	}
	T_CHECK(m.inserted == 1 && m.refused == 1 && m.offload_calls == 2,
	        "inserted %llu, refused %llu, calls %llu", (unsigned long long)m.inserted,
	        (unsigned long long)m.refused, (unsigned long long)m.offload_calls);
	T_CHECK(x.t.cnt.c[SECHO_FLOW_CNT_PACKETS] == 50 + 3, "table counted %llu",
	        (unsigned long long)x.t.cnt.c[SECHO_FLOW_CNT_PACKETS]);
	secho_flow_table_flush(&ref.t);
	secho_flow_table_flush(&x.t);
	T_CHECK(recs_same(&x.out, &ref.out, "refused"), "records");
	tbl_free(&ref);
	tbl_free(&x);
	t_end();
}

int main(void)
{
	t_seed_init("test_flow_tier");
	test_random();
	test_stale();
	test_active();
	test_evict();
	test_refused();
	return t_exit();
}
