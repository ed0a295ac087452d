/*
 * src/endpoint/report.c - the counters report: rate limit and JSON (see report.h).
 */
#include "endpoint/report.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "secho/engine.h"
#include "secho/tsc.h"

void secho_report_init(struct secho_report_ctx *r, double rate)
{
	memset(r, 0, sizeof(*r));
	atomic_flag_clear(&r->busy);
	r->rate = rate > 0 ? rate : 2;
	r->tsc_hz = secho_tsc_hz();
	r->start_tsc = secho_rdtsc();
}

/* Bring bucket b up to now: `rate` tokens per second, at most `burst`. A new bucket (last
 * == 0) starts full. A time before the bucket's own (another worker read the clock later
 * but decided first) adds nothing and leaves the bucket's time where it is: time never
 * counts twice. Can't fail. */
static void refill(struct secho_bucket *b, double rate, double burst, uint64_t now, double hz)
{
	if (b->last == 0) {
		b->tokens = burst;
		b->last = now;
	} else if (now > b->last) {
		b->tokens += (double)(now - b->last) / hz * rate;
		if (b->tokens > burst)
			b->tokens = burst;
		b->last = now;
	}
}

/* Burst of a bucket refilled at `rate`: `factor` seconds' worth, but never under one token,
 * or a rate under 1/factor per second would never allow anything at all. */
static double burst_of(double rate, double factor)
{
	return rate * factor < 1 ? 1 : rate * factor;
}

/* The decision itself, with the limiter held. */
static bool allow_locked(struct secho_report_ctx *r, uint32_t ip, uint64_t now)
{
	/* Fibonacci hash of the address; a colliding newcomer takes over the entry with a
	 * fresh (full) bucket only when the old one has been idle for ten seconds. */
	uint32_t h = (uint32_t)(ip * 2654435761u) >> 24;
	struct secho_bucket *b = &r->src[h % SECHO_REPORT_SOURCES];
	if (b->ip != ip) {
		if (b->ip && !(now > b->last && (double)(now - b->last) / r->tsc_hz >= 10.0))
			return false;
		b->ip = ip;
		b->last = 0;
	}
	/* The source's own bucket first: a source over its rate is refused without touching
	 * the global budget, so one flooding (or spoofed) source cannot spend it for the
	 * others. Then the global budget; a token is taken from both or from neither. */
	refill(b, r->rate, burst_of(r->rate, 2), now, r->tsc_hz);
	if (b->tokens < 1)
		return false;
	refill(&r->global, 8 * r->rate, burst_of(8 * r->rate, 2), now, r->tsc_hz);
	if (r->global.tokens < 1)
		return false;
	b->tokens -= 1;
	r->global.tokens -= 1;
	return true;
}

bool secho_report_allow(struct secho_report_ctx *r, uint32_t ip, uint64_t now)
{
	/* acquire/release: the buckets as the last holder left them. */
	if (atomic_flag_test_and_set_explicit(&r->busy, memory_order_acquire))
		return false; /* another worker is deciding now: refuse, never wait */
	bool ok = allow_locked(r, ip, now);
	atomic_flag_clear_explicit(&r->busy, memory_order_release);
	return ok;
}

void secho_report_collect(const struct secho_report_ctx *r, struct secho_counters *sum,
                          struct secho_counters_brief *per)
{
	memset(sum, 0, sizeof(*sum));
	for (unsigned i = 0; i < r->nworkers; i++)
		secho_counters_sum(sum, r->ctr[i], per ? &per[i] : NULL);
}

static json_t *lat_obj(const struct secho_lat_summary *s, double scale)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I}", "min", (json_int_t)(s->min * scale + 0.5), "mean",
	                 (json_int_t)(s->mean * scale + 0.5), "p50",
	                 (json_int_t)(s->p50 * scale + 0.5), "p99",
	                 (json_int_t)(s->p99 * scale + 0.5), "max",
	                 (json_int_t)(s->max * scale + 0.5));
}

static json_t *engine_obj(const struct secho_report_ctx *r, const struct secho_engine_counters *e,
                          double engine_cycles, size_t key_bytes, size_t staging_bytes)
{
	struct secho_lat_summary s;
	secho_lat_summary(&e->lat, &s);
	double ns = 1e9 / r->tsc_hz;
	double headroom = s.mean > 0 ? r->tsc_hz / s.mean : 0;
	double dp = e->packets ? (double)e->dp_cycles / (double)e->packets : 0;
	json_t *o = json_pack("{s:I,s:I,s:o,s:o,s:I,s:{s:I,s:I,s:I,s:I}}", "packets",
	                      (json_int_t)e->packets, "bytes", (json_int_t)e->bytes, "latency_ns",
	                      lat_obj(&s, ns), "latency_cycles", lat_obj(&s, 1.0), "headroom_pps",
	                      (json_int_t)(headroom + 0.5), "cost", "datapath_cycles_per_pkt",
	                      (json_int_t)(dp + 0.5), "engine_cycles_per_pkt",
	                      (json_int_t)(engine_cycles + 0.5), "key_state_bytes",
	                      (json_int_t)key_bytes, "staging_bytes", (json_int_t)staging_bytes);
	return o;
}

/* The per-worker breakdown (several workers only): {"n":N, and with `arrays` one array
 * per quantity, worker i's share at index i}. */
static json_t *workers_obj(const struct secho_counters_brief *per, unsigned n, bool arrays)
{
	json_t *o = json_pack("{s:I}", "n", (json_int_t)n);
	if (!o || !arrays)
		return o;
	static const char *const names[] = {"rx_frames", "tx_frames", "streaming", "offload",
	                                    "drops"};
	for (unsigned k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		json_t *a = json_array();
		for (unsigned i = 0; i < n; i++) {
			const struct secho_counters_brief *b = &per[i];
			uint64_t v = k == 0   ? b->rx_frames
			             : k == 1 ? b->tx_frames
			             : k == 2 ? b->packets[SECHO_ENG_STREAM]
			             : k == 3 ? b->packets[SECHO_ENG_OFFLOAD]
			                      : b->drops;
			json_array_append_new(a, json_integer((json_int_t)v));
		}
		json_object_set_new(o, names[k], a);
	}
	return o;
}

static size_t report_json(const struct secho_report_ctx *r, const struct secho_counters *c,
                          const struct secho_counters_brief *per, char *out, size_t cap,
                          bool all_drops, bool per_worker);

size_t secho_report_json(const struct secho_report_ctx *r, char *out, size_t cap)
{
	/* One snapshot of every worker's counters for all the tries: totals and shares add up.
	 * (struct secho_counters holds two histograms: 31 KB, too much for a stack here.) */
	struct secho_counters *c = malloc(sizeof(*c));
	struct secho_counters_brief *per = calloc(r->nworkers ? r->nworkers : 1, sizeof(*per));
	size_t n = 0;
	if (c && per) {
		secho_report_collect(r, c, per);
		/* Every drop counter by name; when the counts have grown too long for one MTU,
		 * the zero ones are left out (drops_all: false says so; the names are in
		 * PROTOCOL.md), and then the per-worker arrays (workers: {"n"} only). */
		n = report_json(r, c, per, out, cap, true, true);
		if (!n)
			n = report_json(r, c, per, out, cap, false, true);
		if (!n && r->nworkers > 1)
			n = report_json(r, c, per, out, cap, false, false);
	}
	free(c);
	free(per);
	return n;
}

static size_t report_json(const struct secho_report_ctx *r, const struct secho_counters *c,
                          const struct secho_counters_brief *per, char *out, size_t cap,
                          bool all_drops, bool per_worker)
{
	uint64_t now = secho_rdtsc();

	double off_engine = 0;
	if (r->off) {
		struct secho_offload_stats st;
		secho_offload_stats(r->off, &st);
		off_engine = st.jobs ? (double)st.busy_cycles / (double)st.jobs : 0;
	}
	json_t *drops = json_object();
	for (unsigned i = 1; i < SECHO_WIRE_VERDICT_COUNT; i++)
		if (i != SECHO_WIRE_ARP && (all_drops || c->verdict[i]))
			json_object_set_new(drops, secho_wire_verdict_name(i),
			                    json_integer((json_int_t)c->verdict[i]));
	for (unsigned i = 0; i < SECHO_PIPE_DROP_COUNT; i++)
		if (all_drops || c->drop[i])
			json_object_set_new(drops, secho_pipe_drop_name(i),
			                    json_integer((json_int_t)c->drop[i]));

	json_t *streaming = engine_obj(r, &c->eng[SECHO_ENG_STREAM], 0, r->stream_key_bytes,
	                               r->stream_staging_bytes);
	json_t *offload = engine_obj(r, &c->eng[SECHO_ENG_OFFLOAD], off_engine,
	                             r->offload_key_bytes, r->offload_staging_bytes);
	json_object_set_new(offload, "backend",
	                    json_string(r->offload_backend ? r->offload_backend : "none"));
	json_t *root = json_pack(
	        "{s:i,s:I,s:I,s:I,s:I,s:I,s:I,s:s,s:{s:o,s:o},s:o}", "v", 1, "uptime_s",
	        (json_int_t)((double)(now - r->start_tsc) / r->tsc_hz), "tsc_hz",
	        (json_int_t)r->tsc_hz, "seq_high_water",
	        (json_int_t)(r->seq_high_water ? r->seq_high_water(r->seq_arg) : r->seq_final),
	        "rx_frames", (json_int_t)c->rx_frames, "tx_frames", (json_int_t)c->tx_frames,
	        "arp_answered", (json_int_t)c->verdict[SECHO_WIRE_ARP], "io",
	        r->io_desc ? r->io_desc : "", "engines", "streaming", streaming, "offload", offload,
	        "drops", drops);
	if (!root)
		return 0;
	json_object_set_new(root, "drops_all", json_boolean(all_drops));
	if (r->nworkers > 1)
		json_object_set_new(root, "workers", workers_obj(per, r->nworkers, per_worker));
	size_t n = json_dumpb(root, out, cap, JSON_COMPACT);
	json_decref(root);
	if (n == 0 || n >= cap)
		return 0;
	out[n] = '\0';
	return n;
}
