/*
 * src/flow/offload/offload_tier.c - the offload tier as the meter uses it (contract:
 * src/flow/offload/offload_tier.h): the table's hooks on a worker's own map handle, the scans for
 * last-seen times, the statistics.
 */
#include "flow/offload/offload_tier.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flow/offload/offload_abi.h"

struct secho_flow_tier_worker {
	struct secho_flow_tier *tier;
	struct secho_flow_offload *h; /* this worker's handle */
	struct secho_flow_table *table;
	uint64_t inactive_ns;
	uint64_t next_scan_ns, period_ns; /* CLOCK_MONOTONIC */
	bool scanning;                    /* a scan is under way, at cur */
	struct secho_flow_offload_cursor cur;
	uint64_t scan_flows, scan_ns;       /* of the scan under way */
	uint64_t cnt[SECHO_TIER_CNT_COUNT]; /* relaxed atomic stores by the worker */
	char pad[64];
};

struct secho_flow_tier {
	struct secho_flow_offload *o; /* the owner: attached, detached by stop */
	uint32_t threshold;
	unsigned n;
	struct secho_flow_tier_worker *w;
	pthread_mutex_t stop_lock;
	bool stopped;
	int stop_result;
	char desc[400];
};

static const char *const names[] = {
#define SECHO_TIER_CNT_X(name, id, text) [SECHO_TIER_CNT_##name] = id,
        SECHO_TIER_COUNTERS(SECHO_TIER_CNT_X)
#undef SECHO_TIER_CNT_X
};
static const char *const texts[] = {
#define SECHO_TIER_CNT_X(name, id, text) [SECHO_TIER_CNT_##name] = text,
        SECHO_TIER_COUNTERS(SECHO_TIER_CNT_X)
#undef SECHO_TIER_CNT_X
};

const char *secho_flow_tier_counter_name(unsigned i)
{
	return i < SECHO_TIER_CNT_COUNT ? names[i] : NULL;
}

const char *secho_flow_tier_counter_text(unsigned i)
{
	return i < SECHO_TIER_CNT_COUNT ? texts[i] : NULL;
}

/* The worker's own counter: only it writes, the export thread reads. */
static inline void add(struct secho_flow_tier_worker *w, enum secho_tier_counter c, uint64_t v)
{
	__atomic_store_n(&w->cnt[c], w->cnt[c] + v, __ATOMIC_RELAXED);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- the table's hooks ---- */

static bool hook_offload(void *ctx, const struct secho_flow_key *ck, uint64_t until_ns)
{
	struct secho_flow_tier_worker *w = ctx;
	int r = secho_flow_offload_insert_until(w->h, ck, until_ns);

	if (!r) {
		add(w, SECHO_TIER_CNT_OFFLOADED, 1);
		return true;
	}
	/* -EEXIST: another worker's table has the key (a flow the kernel split between
	 * workers); its entry counts the packets, this one stays in software. */
	add(w, r == -E2BIG ? SECHO_TIER_CNT_INSERT_FULL : SECHO_TIER_CNT_INSERT_FAILED, 1);
	return false;
}

static int hook_reclaim(void *ctx, const struct secho_flow_key *ck, struct secho_flow_dir d[2])
{
	struct secho_flow_tier_worker *w = ctx;
	struct secho_flow_offload_counts c;
	int r = secho_flow_offload_remove(w->h, ck, &c);

	if (r) {
		add(w, SECHO_TIER_CNT_RECLAIM_MISSING, 1);
		memset(d, 0, 2 * sizeof(*d));
		return r;
	}
	add(w, SECHO_TIER_CNT_RECLAIMED, 1);
	add(w, SECHO_TIER_CNT_MAP_PACKETS, c.d[0].packets + c.d[1].packets);
	add(w, SECHO_TIER_CNT_MAP_OCTETS, c.d[0].octets + c.d[1].octets);
	d[0] = c.d[0];
	d[1] = c.d[1];
	return 0;
}

static int hook_peek(void *ctx, const struct secho_flow_key *ck, uint64_t *last_ns)
{
	struct secho_flow_tier_worker *w = ctx;
	struct secho_flow_offload_counts c;
	int r = secho_flow_offload_lookup(w->h, ck, &c);

	*last_ns = 0;
	add(w, SECHO_TIER_CNT_PEEKS, 1);
	if (r)
		return r;
	for (int d = 0; d < 2; d++)
		if (c.d[d].packets && c.d[d].last_ns > *last_ns)
			*last_ns = c.d[d].last_ns;
	return 0;
}

static void hook_returned(void *ctx)
{
	add(ctx, SECHO_TIER_CNT_RETURNED, 1);
}

static const struct secho_flow_offload_hooks hooks = {
        .offload = hook_offload,
        .peek = hook_peek,
        .reclaim = hook_reclaim,
        .returned = hook_returned,
};

/* ---- open / close ---- */

int secho_flow_tier_open(struct secho_flow_tier **out, const struct secho_flow_tier_cfg *cfg,
                         unsigned workers, char *err, size_t errlen)
{
	struct secho_flow_tier *t;
	int r;

	*out = NULL;
	if (!workers || workers > 64) {
		snprintf(err, errlen, "XDP offload: %u workers (1 to 64)", workers);
		return -EINVAL;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->w = calloc(workers, sizeof(*t->w));
	if (!t->w) {
		free(t);
		return -ENOMEM;
	}
	t->n = workers;
	t->threshold = cfg->threshold ? cfg->threshold : SECHO_TIER_THRESHOLD_DEFAULT;
	pthread_mutex_init(&t->stop_lock, NULL);
	r = secho_flow_offload_open(&t->o, &cfg->ofl, err, errlen);
	if (r) {
		secho_flow_tier_close(t);
		return r;
	}
	for (unsigned i = 0; i < workers; i++) {
		struct secho_flow_tier_worker *w = &t->w[i];
		w->tier = t;
		w->period_ns = SECHO_TIER_SCAN_MIN_NS;
		r = secho_flow_offload_share(t->o, &w->h);
		if (r) {
			snprintf(err, errlen, "XDP offload: %s", strerror(-r));
			secho_flow_tier_close(t);
			return r;
		}
	}
	snprintf(t->desc, sizeof(t->desc), "%s, offloading flows at %u packets",
	         secho_flow_offload_describe(t->o), t->threshold);
	*out = t;
	return 0;
}

void secho_flow_tier_close(struct secho_flow_tier *t)
{
	if (!t)
		return;
	if (t->w)
		for (unsigned i = 0; i < t->n; i++)
			secho_flow_offload_close(t->w[i].h);
	secho_flow_offload_close(t->o);
	pthread_mutex_destroy(&t->stop_lock);
	free(t->w);
	free(t);
}

const char *secho_flow_tier_describe(const struct secho_flow_tier *t)
{
	return t->desc;
}

bool secho_flow_tier_native(const struct secho_flow_tier *t)
{
	return secho_flow_offload_native(t->o);
}

int secho_flow_tier_xsk_map_fd(const struct secho_flow_tier *t)
{
	return secho_flow_offload_xsk_map_fd(t->o);
}

struct secho_flow_tier_worker *secho_flow_tier_worker(struct secho_flow_tier *t, unsigned i)
{
	return i < t->n ? &t->w[i] : NULL;
}

int secho_flow_tier_table_init(struct secho_flow_tier_worker *w, struct secho_flow_table *table,
                               const struct secho_flow_table_cfg *cfg, void *mem, size_t len)
{
	struct secho_flow_table_cfg tc = *cfg;

	tc.offload = &hooks;
	tc.offload_ctx = w;
	tc.offload_after = w->tier->threshold;
	int r = secho_flow_table_init(table, &tc, mem, len);
	if (r)
		return r;
	w->inactive_ns = tc.inactive_ns ? tc.inactive_ns : 30000000000ull;
	w->period_ns = w->inactive_ns / 2 > SECHO_TIER_SCAN_MIN_NS ? w->inactive_ns / 2
	                                                           : SECHO_TIER_SCAN_MIN_NS;
	w->table = table;
	return 0;
}

/* ---- scans ---- */

struct scan_ctx {
	struct secho_flow_tier_worker *w;
};

static void scan_one(void *ctx, const struct secho_flow_key *key,
                     const struct secho_flow_offload_counts *c)
{
	struct scan_ctx *s = ctx;
	uint64_t last = 0;

	for (int d = 0; d < 2; d++)
		if (c->d[d].packets && c->d[d].last_ns > last)
			last = c->d[d].last_ns;
	if (last)
		secho_flow_table_offload_seen(s->w->table, key, last);
}

/* Offloaded flows of w still in the map. */
static uint64_t in_map(const struct secho_flow_tier_worker *w)
{
	return w->cnt[SECHO_TIER_CNT_OFFLOADED] - w->cnt[SECHO_TIER_CNT_RECLAIMED] -
	       w->cnt[SECHO_TIER_CNT_RECLAIM_MISSING];
}

unsigned secho_flow_tier_poll(struct secho_flow_tier_worker *w, uint64_t now)
{
	if (!w->table)
		return 100;
	if (!w->scanning) {
		if (now < w->next_scan_ns) {
			uint64_t ms = (w->next_scan_ns - now) / 1000000 + 1;
			return ms < 100 ? (unsigned)ms : 100;
		}
		if (!in_map(w)) { /* nothing of ours there: nothing to learn */
			w->next_scan_ns = now + SECHO_TIER_SCAN_MIN_NS;
			return 100;
		}
		memset(&w->cur, 0, sizeof(w->cur));
		w->scanning = true;
		w->scan_flows = w->scan_ns = 0;
		/* the period counts from the start of a scan */
		w->next_scan_ns = now + w->period_ns;
	}
	struct scan_ctx s = {.w = w};
	uint64_t t = now, until = now + SECHO_TIER_SCAN_SLICE_NS;
	long n = 0;
	do {
		n = secho_flow_offload_scan_step(w->h, &w->cur, scan_one, &s);
		if (n > 0)
			w->scan_flows += (uint64_t)n;
		t = mono_ns();
	} while (n >= 0 && !w->cur.done && t < until);
	w->scan_ns += t > now ? t - now : 0;
	if (n >= 0 && !w->cur.done)
		return 1; /* more next time, soon */
	w->scanning = false;
	add(w, SECHO_TIER_CNT_SCANS, 1);
	add(w, SECHO_TIER_CNT_SCAN_FLOWS, w->scan_flows);
	add(w, SECHO_TIER_CNT_SCAN_NS, w->scan_ns);
	if (n < 0) { /* counted as a scan of what it read; again after the shortest period */
		add(w, SECHO_TIER_CNT_SCAN_ERRORS, 1);
		w->next_scan_ns = t + SECHO_TIER_SCAN_MIN_NS;
	}
	return 100;
}

int secho_flow_tier_stop(struct secho_flow_tier *t)
{
	pthread_mutex_lock(&t->stop_lock);
	if (!t->stopped) {
		t->stop_result = secho_flow_offload_detach(t->o);
		t->stopped = true;
	}
	int r = t->stop_result;
	pthread_mutex_unlock(&t->stop_lock);
	return r;
}

/* ---- statistics ---- */

void secho_flow_tier_counters(struct secho_flow_tier *t, uint64_t c[SECHO_TIER_CNT_COUNT])
{
	memset(c, 0, SECHO_TIER_CNT_COUNT * sizeof(*c));
	for (unsigned i = 0; i < t->n; i++)
		for (unsigned k = 0; k < SECHO_TIER_CNT_COUNT; k++)
			c[k] += __atomic_load_n(&t->w[i].cnt[k], __ATOMIC_RELAXED);
}

void secho_flow_tier_report(struct secho_flow_tier *t, FILE *f, bool json)
{
	uint64_t p[SECHO_OFFLOAD_CNT_COUNT], c[SECHO_TIER_CNT_COUNT], runs = 0, run_ns = 0;
	uint64_t period = 0;

	if (secho_flow_offload_read_counters(t->o, p))
		memset(p, 0, sizeof(p));
	secho_flow_offload_prog_stats(t->o, &runs, &run_ns);
	secho_flow_tier_counters(t, c);
	for (unsigned i = 0; i < t->n; i++) {
		uint64_t x = t->w[i].period_ns; /* set at bind, before the workers run */
		period = x > period ? x : period;
	}
	uint64_t seen = 0; /* every frame the program saw is counted once among these */
	for (unsigned i = 0; i < SECHO_OFFLOAD_CNT_COUNT; i++)
		if (i != SECHO_OFFLOAD_CNT_HIT_OCTETS && i != SECHO_OFFLOAD_CNT_XSK)
			seen += p[i];
	uint64_t inmap = c[SECHO_TIER_CNT_OFFLOADED] - c[SECHO_TIER_CNT_RECLAIMED] -
	                 c[SECHO_TIER_CNT_RECLAIM_MISSING];
	/* Packets the program counted that no record has got yet: those of flows still in
	 * the map; after the end, those lost to a removal that raced them (offload.h). */
	uint64_t hit = p[SECHO_OFFLOAD_CNT_HIT], back = c[SECHO_TIER_CNT_MAP_PACKETS];
	uint64_t unaccounted = hit > back ? hit - back : 0;
	double share = seen ? (double)hit / (double)seen : 0.0;
	double mean_run = runs ? (double)run_ns / (double)runs : 0.0;

	if (json) {
		fprintf(f,
		        ",\"offload\":{\"native\":%s,\"threshold\":%u,\"capacity\":%u,"
		        "\"seen\":%" PRIu64 ",\"share\":%.6f",
		        secho_flow_offload_native(t->o) ? "true" : "false", t->threshold,
		        secho_flow_offload_capacity(t->o), seen, share);
		for (unsigned i = 0; i < SECHO_OFFLOAD_CNT_COUNT; i++)
			fprintf(f, ",\"%s\":%" PRIu64, secho_flow_offload_counter_name(i), p[i]);
		for (unsigned i = 0; i < SECHO_TIER_CNT_COUNT; i++)
			fprintf(f, ",\"%s\":%" PRIu64, names[i], c[i]);
		fprintf(f,
		        ",\"in_map\":%" PRIu64 ",\"unaccounted\":%" PRIu64
		        ",\"scan_period_ms\":%.1f,\"prog_runs\":%" PRIu64
		        ",\"prog_run_ns\":%" PRIu64 ",\"prog_ns_per_run\":%.1f}",
		        inmap, unaccounted, (double)period / 1e6, runs, run_ns, mean_run);
		return;
	}
	fprintf(f, "  offload          %s\n", t->desc);
	fprintf(f, "    %-14s %14" PRIu64 "   frames the program saw; %.1f%% kept in the map\n",
	        "seen", seen, 100.0 * share);
	for (unsigned i = 0; i < SECHO_OFFLOAD_CNT_COUNT; i++)
		if (p[i] || i <= SECHO_OFFLOAD_CNT_MISS)
			fprintf(f, "    %-14s %14" PRIu64 "   %s\n",
			        secho_flow_offload_counter_name(i), p[i],
			        secho_flow_offload_counter_text(i));
	for (unsigned i = 0; i < SECHO_TIER_CNT_COUNT; i++)
		fprintf(f, "    %-14s %14" PRIu64 "   %s\n", names[i], c[i], texts[i]);
	fprintf(f, "    %-14s %14" PRIu64 "   flows in the map now\n", "in_map", inmap);
	fprintf(f,
	        "    %-14s %14" PRIu64
	        "   packets of the program's in no record yet (at the end: lost)\n",
	        "unaccounted", unaccounted);
	fprintf(f, "    %-14s %14.1f   ms between scans (the latest choice)\n", "scan_period",
	        (double)period / 1e6);
	if (runs)
		fprintf(f, "    %-14s %14.1f   ns per run of the program (%" PRIu64 " runs)\n",
		        "prog_run", mean_run, runs);
	else
		fprintf(f, "    %-14s %14s   (kernel.bpf_stats_enabled is 0)\n", "prog_run", "-");
}
