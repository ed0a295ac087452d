/*
 * src/flow/meter.c - the flow meter's threads, input and reports (src/flow/meter.h).
 *
 * Record rings (workers > 1, or live): one single-producer single-consumer ring of records
 * per worker. The worker writes the record, then publishes the new head with a release
 * store; the export thread reads the head with an acquire load (so the record's bytes are
 * visible), copies the record out, then publishes the tail with a release store (so the
 * worker may reuse the slot only after the copy). A full ring makes the worker wait: no
 * record is ever dropped between the table and the sinks.
 *
 * Frame rings (offline, workers > 1): the calling thread reads the file once, dissects and
 * prepares every frame (key, hash: secho_flow_table_prepare) and writes it straight into
 * the ring of the worker that meters it, one single-producer single-consumer ring per
 * worker, published a burst at a time (the same release/acquire pairs as the record
 * rings). The workers never touch the file. After each burst the reader publishes the
 * packet clock (the latest frame time) with a release store after the heads: a worker that
 * loads the clock (acquire) and then a head has every frame read before that clock below
 * that head, so once it has metered them it may expire its table at that clock. The same
 * thread hands the records to the sinks between bursts.
 *
 * Waiting: a thread that finds nothing to do (a worker with an empty ring, the reader with
 * a full one, a worker with a full record ring) spins briefly, then sleeps on a futex
 * (struct waitpoint), woken by the other side when there is enough to do (a batch of
 * frames, half a ring of room, a drained record ring), with a bounded sleep in any case.
 * On a machine with as many cores as workers, the reader and the workers then share the
 * cores instead of spinning against each other.
 */
#include "flow/meter.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/futex.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "secho/capfile.h"
#include "secho/dissect.h"
#include "secho/tsc.h"
#include "sys/latency.h"

#define BURST          32u
#define RING_RECORDS   (1u << 15)
#define RING_FRAMES    (1u << 12)   /* prepared frames per worker (72 B each: 288 KiB) */
#define WAKE_FRAMES    256u         /* a sleeping worker is woken for this many frames */
#define SPIN_CHECKS    64u          /* looks before a thread with nothing to do sleeps */
#define SLEEP_NS       10000000ull  /* the longest sleep of a waiting thread */
#define LIVE_GUARD_NS  200000000ull /* the wall clock, minus this, is live time */
#define LIVE_POLL_MS   100
#define MAX_IO_PER_WKR 16
#define TICK_NS        100000000ull /* the sinks: every 100 ms (IPFIX flushes part-filled messages) */
#define PROGRESS_NS    500000000ull
#define TIMED_BURSTS   3u /* every (TIMED_BURSTS + 1)th burst a table gets is timed */
/* The export thread's nap when the rings are empty: 1 ms, doubling to 8 ms while they stay
 * empty (a ring of 32,768 records fills in no less than 8 ms at the meter's rates, and a
 * full ring only makes its worker wait). At 1 ms it took 3% of a CPU doing nothing. */
#define NAP_MIN_US 1000u
#define NAP_MAX_US 8000u
/* Live, a worker that emptied its sockets after reading frames naps this long before it
 * looks again, and polls only when a look found nothing: while traffic flows it wakes at
 * most every LIVE_NAP_NS, each time for all that came, instead of at every ring block
 * (TPACKET_V3 hands over a 64 KiB block: 7 jumbo frames). Capped at 5% of a CPU behind
 * the offload tier, the meter's CPU time fell by 20-35% (docs/FLOW.md, "Workers"); the
 * ring holds far more than a nap's worth, and the frames carry their receive times. */
#define LIVE_NAP_NS 1000000ull

/* Where one thread sleeps until another has something for it (futex). */
struct waitpoint {
	uint32_t seq;     /* bumped by every wake */
	uint32_t waiting; /* the sleeper is (about to be) asleep */
};

struct rec_ring {
	struct secho_flow_rec *r;
	uint64_t head; /* written by the worker (release) */
	char pad1[56];
	uint64_t tail; /* written by the export thread (release) */
	char pad2[56];
	struct waitpoint space; /* the worker waits here for room */
	char pad3[56];
};

struct frame_ring {
	struct secho_flow_prep *p;
	uint64_t head; /* written by the reader (release) */
	char pad1[56];
	uint64_t tail; /* written by the worker (release) */
	char pad2[56];
	struct waitpoint ready; /* the worker waits here for frames */
	char pad3[56];
};

struct meter;

struct worker {
	unsigned id;
	struct meter *m;
	struct secho_flow_table t;
	void *mem;
	size_t memlen;
	struct secho_io *io[MAX_IO_PER_WKR];
	unsigned nio;
	struct rec_ring ring;
	struct frame_ring frames; /* offline, workers > 1 */
	pthread_t th;
	bool started;
	uint64_t frames_read;  /* live: relaxed atomic stores, the export thread reads them */
	uint64_t kernel_drops; /* live: read by the worker itself (reading resets the kernel's) */
	int done;              /* release store once every record is in the ring */
	int gone;              /* live: the interface went away (the worker stopped) */
	struct secho_flow_tier_worker *tier; /* live with offload: this worker's part */
	unsigned bursts;                     /* bursts handed to the table (timing) */
	struct secho_lat lat; /* per-packet table cycles, sampled (read by reports: torn
	                       * reads make them a burst stale, no more) */
};

struct meter {
	const struct secho_flow_meter_cfg *cfg;
	unsigned n;
	bool threaded;
	int halt; /* the export thread tells the workers to stop (a worker did not start) */
	struct worker *w;
	struct secho_capfile cf; /* offline: the file, read by the calling thread */
	uint64_t frames_read;    /* offline: by the calling thread */
	uint64_t clock;          /* offline: latest frame time (release, after the heads) */
	char pad1[56];
	int eof; /* offline: the reader published its last frame (release) */
	char pad2[60];
	struct waitpoint reader; /* offline: the reader waits here for room in a ring */
	char pad3[56];
	uint64_t split_seed;
	uint64_t start_ns, start_mono, last_tick, last_stats, last_progress;
	uint64_t progress_frames;
	bool progress_shown;
	uint64_t now_ns;
	struct secho_flow_tier *tier; /* live with --offload: the XDP offload tier */
	unsigned resident;            /* live: tables made resident at the start */
};

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t random64(void)
{
	uint64_t v = 0;
	if (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v))
		v = clock_ns(CLOCK_REALTIME) * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
	return v;
}

static bool stopping(const struct meter *m)
{
	return (m->cfg->stop && *m->cfg->stop) || __atomic_load_n(&m->halt, __ATOMIC_RELAXED);
}

/* ---- waiting ---- */

static void futex_wait(uint32_t *addr, uint32_t val, uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
	syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}

/*
 * The sleeper: wp_prepare(), then check its condition once more; if it holds,
 * wp_cancel(), else wp_sleep() (returns when woken, after a bounded time, or spuriously:
 * the caller checks again). The waker changes the state, then calls wp_wake(). The
 * sequentially consistent fences make the pair safe (Dekker): either the waker sees
 * waiting set, or the sleeper's second check sees the waker's change.
 */
static uint32_t wp_prepare(struct waitpoint *w)
{
	uint32_t seq = __atomic_load_n(&w->seq, __ATOMIC_ACQUIRE);
	__atomic_store_n(&w->waiting, 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return seq;
}

static void wp_cancel(struct waitpoint *w)
{
	__atomic_store_n(&w->waiting, 0, __ATOMIC_RELAXED);
}

static void wp_sleep(struct waitpoint *w, uint32_t seq, uint64_t ns)
{
	futex_wait(&w->seq, seq, ns);
	__atomic_store_n(&w->waiting, 0, __ATOMIC_RELAXED);
}

/* Is someone asleep (or going to sleep) on w? After the waker's change (seq_cst fence). */
static bool wp_waiting(struct waitpoint *w)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return __atomic_load_n(&w->waiting, __ATOMIC_RELAXED);
}

static void wp_wake(struct waitpoint *w)
{
	__atomic_add_fetch(&w->seq, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &w->seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static inline void cpu_relax(void)
{
	__builtin_ia32_pause();
}

/* ---- export ---- */

static void export_rec(struct meter *m, const struct secho_flow_rec *rec)
{
	for (unsigned i = 0; i < m->cfg->nsinks; i++) {
		const struct secho_flow_sink *s = &m->cfg->sinks[i];
		s->ops->record(s->ctx, rec, m->now_ns);
	}
}

static void on_record(void *ctx, const struct secho_flow_rec *rec)
{
	struct worker *w = ctx;
	struct meter *m = w->m;

	if (!m->threaded) {
		export_rec(m, rec);
		return;
	}
	struct rec_ring *q = &w->ring;
	uint64_t head = q->head;
	/* acquire: the export thread finished copying the slot before it moved the tail */
	for (unsigned spin = 0; head - __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE) >= RING_RECORDS;
	     spin++) {
		if (spin < SPIN_CHECKS) {
			cpu_relax();
			continue;
		}
		/* the ring is full: ask the export thread to drain it (offline it may be
		 * asleep, waiting for room in this worker's frame ring), then sleep */
		if (wp_waiting(&m->reader))
			wp_wake(&m->reader);
		uint32_t seq = wp_prepare(&q->space);
		if (head - __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE) < RING_RECORDS)
			wp_cancel(&q->space);
		else
			wp_sleep(&q->space, seq, SLEEP_NS);
	}
	q->r[head & (RING_RECORDS - 1)] = *rec;
	/* release: the record's bytes before the new head */
	__atomic_store_n(&q->head, head + 1, __ATOMIC_RELEASE);
}

/* Hand every record waiting in the rings to the sinks; returns how many. */
static uint64_t drain(struct meter *m)
{
	uint64_t total = 0;

	for (unsigned i = 0; i < m->n; i++) {
		struct rec_ring *q = &m->w[i].ring;
		uint64_t tail = q->tail;
		/* acquire: pairs with the worker's release of the head */
		uint64_t head = __atomic_load_n(&q->head, __ATOMIC_ACQUIRE);
		if (tail == head)
			continue;
		for (; tail != head; tail++) {
			struct secho_flow_rec rec = q->r[tail & (RING_RECORDS - 1)];
			/* release: the copy is done, the slot may be written again */
			__atomic_store_n(&q->tail, tail + 1, __ATOMIC_RELEASE);
			export_rec(m, &rec);
			total++;
		}
		if (wp_waiting(&q->space))
			wp_wake(&q->space);
	}
	return total;
}

/* ---- statistics ---- */

static void sum_counters(const struct meter *m, struct secho_flow_counters *c, uint64_t *read,
                         uint64_t *drops)
{
	memset(c, 0, sizeof(*c));
	*read = 0;
	*drops = 0;
	for (unsigned i = 0; i < m->n; i++) {
		const struct worker *w = &m->w[i];
		secho_flow_counters_add(c, &w->t.cnt);
		*read += __atomic_load_n(&w->frames_read, __ATOMIC_RELAXED);
	}
	if (m->cfg->pcap)
		*read = m->frames_read; /* the calling thread reads the file */
	for (unsigned i = 0; i < m->n; i++)
		*drops += __atomic_load_n(&m->w[i].kernel_drops, __ATOMIC_RELAXED);
}

static void totals_of(const struct meter *m, struct secho_flow_totals *t)
{
	struct secho_flow_counters c;
	uint64_t read, drops;

	sum_counters(m, &c, &read, &drops);
	memset(t, 0, sizeof(*t));
	t->observed_flows = c.c[SECHO_FLOW_CNT_FLOWS];
	t->observed_packets = c.c[SECHO_FLOW_CNT_PACKETS];
	t->observed_octets = c.c[SECHO_FLOW_CNT_OCTETS];
	t->ignored_packets = c.c[SECHO_FLOW_CNT_IGNORED];
	t->ignored_octets = c.c[SECHO_FLOW_CNT_IGNORED_OCTETS];
	t->dropped_packets = drops;
	t->start_ns = m->start_ns;
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

/* The workers' table timings, per packet, in ns. */
static void table_timing(const struct meter *m, struct secho_lat_summary *s)
{
	struct secho_lat all;
	double ns = 1e9 / secho_tsc_hz();

	memset(&all, 0, sizeof(all));
	for (unsigned i = 0; i < m->n; i++)
		secho_lat_merge(&all, &m->w[i].lat);
	secho_lat_summary(&all, s);
	s->min *= ns;
	s->mean *= ns;
	s->p50 *= ns;
	s->p99 *= ns;
	s->max *= ns;
}

static void print_stats(const struct meter *m, bool final)
{
	FILE *f = m->cfg->report;
	struct secho_flow_counters c;
	uint64_t read, drops;
	double el = (double)(clock_ns(CLOCK_MONOTONIC) - m->start_mono) / 1e9;
	uint64_t cap = (uint64_t)secho_flow_table_capacity(&m->w[0].t) * m->n;

	sum_counters(m, &c, &read, &drops);
	uint64_t lookups = c.c[SECHO_FLOW_CNT_CACHE_HITS] + c.c[SECHO_FLOW_CNT_CACHE_MISSES];
	if (!f)
		return;
	struct secho_lat_summary lat;
	table_timing(m, &lat);
	if (m->cfg->json_stats) {
		fprintf(f,
		        "{\"final\":%s,\"elapsed_s\":%.3f,\"frames_read\":%" PRIu64
		        ",\"frames_per_s\":%.0f,\"kernel_drops\":%" PRIu64,
		        final ? "true" : "false", el, read, el > 0 ? (double)read / el : 0.0,
		        drops);
		for (unsigned i = 0; i < SECHO_FLOW_CNT_COUNT; i++)
			fprintf(f, ",\"%s\":%" PRIu64,
			        secho_flow_counter_name((enum secho_flow_counter)i), c.c[i]);
		fprintf(f,
		        ",\"active\":%" PRIu64 ",\"capacity\":%" PRIu64
		        ",\"occupancy\":%.4f,\"cache_hit_rate\":%.4f",
		        c.active, cap, cap ? (double)c.active / (double)cap : 0.0,
		        lookups ? (double)c.c[SECHO_FLOW_CNT_CACHE_HITS] / (double)lookups : 0.0);
		fprintf(f,
		        ",\"table_timed\":%" PRIu64 ",\"table_ns_p50\":%.1f,\"table_ns_p99\":%.1f"
		        ",\"table_ns_mean\":%.1f",
		        lat.count, lat.p50, lat.p99, lat.mean);
		if (m->tier)
			secho_flow_tier_report(m->tier, f, true);
		fprintf(f, ",\"ignored_by\":{");
		for (unsigned i = 1, first = 1; i < SECHO_FLOW_IGN_COUNT; i++, first = 0)
			fprintf(f, "%s\"%s\":%" PRIu64, first ? "" : ",", secho_flow_ignore_name(i),
			        c.ignored[i]);
		fprintf(f, "},\"sinks\":[");
		unsigned nrow = 0;
		for (unsigned i = 0; i < m->cfg->nsinks; i++) {
			struct secho_flow_sink_stats st[SECHO_FLOW_SINK_MAX_ROWS];
			const struct secho_flow_sink *s = &m->cfg->sinks[i];
			unsigned nr = s->ops->stats(s->ctx, st, SECHO_FLOW_SINK_MAX_ROWS);
			for (unsigned j = 0; j < nr; j++, nrow++)
				fprintf(f,
				        "%s{\"name\":\"%s\",\"records\":%" PRIu64
				        ",\"messages\":%" PRIu64 ",\"errors\":%" PRIu64
				        ",\"not_delivered\":%" PRIu64 ",\"reconnects\":%" PRIu64
				        "}",
				        nrow ? "," : "", st[j].name, st[j].records, st[j].messages,
				        st[j].errors, st[j].not_delivered, st[j].reconnects);
		}
		fprintf(f, "]}\n");
		fflush(f);
		return;
	}
	fprintf(f, "%s%.1f s: %" PRIu64 " frames read (%.0f per second)%s\n",
	        final ? "secho flow: " : "", el, read, el > 0 ? (double)read / el : 0.0,
	        final ? "" : ", so far");
	fprintf(f, "  %-16s %14" PRIu64 "   %s\n", "packets", c.c[SECHO_FLOW_CNT_PACKETS],
	        "counted in flows");
	fprintf(f, "  %-16s %14" PRIu64 "   %s\n", "octets", c.c[SECHO_FLOW_CNT_OCTETS],
	        "IP octets in flows");
	fprintf(f, "  %-16s %14" PRIu64 "   %s\n", "ignored", c.c[SECHO_FLOW_CNT_IGNORED],
	        "frames in no flow:");
	for (unsigned i = 1; i < SECHO_FLOW_IGN_COUNT; i++)
		if (c.ignored[i])
			fprintf(f, "    %-14s %14" PRIu64 "   %s\n", secho_flow_ignore_name(i),
			        c.ignored[i], secho_flow_ignore_text(i));
	if (!m->cfg->pcap)
		fprintf(f, "  %-16s %14" PRIu64 "   %s\n", "kernel_drops", drops,
		        "dropped before the meter saw them");
	fprintf(f, "  %-16s %14" PRIu64 "   %s\n", "flows", c.c[SECHO_FLOW_CNT_FLOWS],
	        "records started");
	for (unsigned i = SECHO_FLOW_CNT_END_IDLE; i <= SECHO_FLOW_CNT_END_RESOURCE; i++)
		fprintf(f, "    %-14s %14" PRIu64 "   %s\n",
		        secho_flow_counter_name((enum secho_flow_counter)i), c.c[i],
		        secho_flow_counter_text((enum secho_flow_counter)i));
	fprintf(f, "  %-16s %14" PRIu64 "   of %" PRIu64 " entries (%.1f%% occupied)\n", "active",
	        c.active, cap, pct(c.active, cap));
	fprintf(f, "  %-16s %14.1f%%  %" PRIu64 " hits of %" PRIu64 " lookups\n", "cache_hit_rate",
	        pct(c.c[SECHO_FLOW_CNT_CACHE_HITS], lookups), c.c[SECHO_FLOW_CNT_CACHE_HITS],
	        lookups);
	for (unsigned i = SECHO_FLOW_CNT_SYN_REUSE; i < SECHO_FLOW_CNT_COUNT; i++)
		if (i != SECHO_FLOW_CNT_CACHE_HITS && i != SECHO_FLOW_CNT_CACHE_MISSES)
			fprintf(f, "  %-16s %14" PRIu64 "   %s\n",
			        secho_flow_counter_name((enum secho_flow_counter)i), c.c[i],
			        secho_flow_counter_text((enum secho_flow_counter)i));
	fprintf(f,
	        "  %-16s %14.1f   ns per packet, p50 (p99 %.1f, mean %.1f; %" PRIu64
	        " packets timed)\n",
	        "table_update", lat.p50, lat.p99, lat.mean, lat.count);
	if (m->tier)
		secho_flow_tier_report(m->tier, f, false);
	for (unsigned i = 0; i < m->cfg->nsinks; i++) {
		struct secho_flow_sink_stats st[SECHO_FLOW_SINK_MAX_ROWS];
		const struct secho_flow_sink *s = &m->cfg->sinks[i];
		unsigned nr = s->ops->stats(s->ctx, st, SECHO_FLOW_SINK_MAX_ROWS);
		for (unsigned j = 0; j < nr; j++)
			fprintf(f,
			        "  %s: %" PRIu64 " records, %" PRIu64 " messages, %" PRIu64
			        " errors, %" PRIu64 " not delivered, %" PRIu64 " reconnects\n",
			        st[j].name, st[j].records, st[j].messages, st[j].errors,
			        st[j].not_delivered, st[j].reconnects);
	}
	fflush(f);
}

static void show_progress(struct meter *m, uint64_t now_mono, bool last)
{
	if (!m->cfg->progress || !m->cfg->pcap)
		return;
	uint64_t read = m->frames_read, pos = m->cf.pos;
	double dt = (double)(now_mono - m->last_progress) / 1e9;
	double rate = dt > 0 ? (double)(read - m->progress_frames) / dt : 0.0;
	fprintf(stderr, "\r  %5.1f%% of %s, %" PRIu64 " frames, %.2f M frames/s   ",
	        m->cf.size ? 100.0 * (double)pos / (double)m->cf.size : 100.0, m->cfg->pcap, read,
	        rate / 1e6);
	if (last)
		fputc('\n', stderr);
	m->progress_shown = true;
	m->progress_frames = read;
	m->last_progress = now_mono;
}

/* The export thread's periodic work: sink ticks, statistics, progress. */
static void housekeeping(struct meter *m)
{
	uint64_t mono = clock_ns(CLOCK_MONOTONIC);

	m->now_ns = clock_ns(CLOCK_REALTIME);
	if (mono - m->last_tick >= TICK_NS) {
		struct secho_flow_totals tot;
		totals_of(m, &tot);
		for (unsigned i = 0; i < m->cfg->nsinks; i++)
			m->cfg->sinks[i].ops->tick(m->cfg->sinks[i].ctx, m->now_ns, &tot);
		m->last_tick = mono;
	}
	if (m->cfg->stats_s > 0 && (double)(mono - m->last_stats) >= m->cfg->stats_s * 1e9) {
		if (m->progress_shown)
			fputc('\n', stderr);
		m->progress_shown = false;
		print_stats(m, false);
		m->last_stats = mono;
	}
	if (mono - m->last_progress >= PROGRESS_NS)
		show_progress(m, mono, false);
}

/* ---- workers ---- */

/* Every (TIMED_BURSTS + 1)th burst the table takes is timed, and each of its packets
 * counted at the burst's cycles over its packets: returns the burst's start (TSC), or 0
 * when it is not timed. */
static inline uint64_t burst_start(struct worker *w)
{
	return (w->bursts++ & TIMED_BURSTS) ? 0 : secho_rdtsc();
}

static inline void burst_end(struct worker *w, uint64_t c0, unsigned n)
{
	if (c0)
		secho_lat_record_n(&w->lat, (secho_rdtsc() - c0) / n, n);
}

/* A burst of frames to the table, some of them timed. Live the table canonicalises and
 * hashes the keys (in the time); offline the reader did (table_burst_prepared: the time
 * is the update alone), so the two p50s differ by the hash. */
static void table_burst(struct worker *w, const struct secho_flow_frame *fr, unsigned n)
{
	if (!n)
		return;
	uint64_t c0 = burst_start(w);
	secho_flow_table_burst(&w->t, fr, n);
	burst_end(w, c0, n);
}

static void table_burst_prepared(struct worker *w, const struct secho_flow_prep *p, unsigned n)
{
	if (!n)
		return;
	uint64_t c0 = burst_start(w);
	secho_flow_table_burst_prepared(&w->t, p, n);
	burst_end(w, c0, n);
}

/* Read up to BURST records of the file and prepare them for the tables (their key and
 * hash, src/flow/table.h); the packet clock follows. Returns how many. */
static unsigned read_burst(struct meter *m, struct secho_cap_rec *recs)
{
	unsigned n = 0;

	while (n < BURST && secho_capfile_next(&m->cf, &recs[n]) == 1)
		n++;
	m->frames_read += n;
	return n;
}

static void prepare(struct meter *m, const struct secho_cap_rec *r, struct secho_flow_prep *p,
                    unsigned *owner)
{
	struct secho_dissect d;
	enum secho_dissect_reason why = secho_dissect_snap(r->data, r->caplen, r->wirelen, &d);

	/* every worker's table has the configuration of worker 0's, which is only read */
	secho_flow_table_prepare(&m->w[0].t, r->data, why, &d, r->wirelen, r->ts_ns, p);
	*owner = why == SECHO_DISSECT_OK ? secho_flow_worker_of(r->data, &d, m->split_seed, m->n)
	                                 : 0;
}

/* One worker: everything in the calling thread, records straight to the sinks. */
static void run_offline_one(struct meter *m)
{
	struct worker *w = &m->w[0];
	struct secho_cap_rec recs[BURST];
	struct secho_flow_prep p[BURST];
	uint64_t clock = 0;
	unsigned bursts = 0, owner;

	while (!stopping(m)) {
		unsigned n = read_burst(m, recs);
		if (!n)
			break;
		for (unsigned i = 0; i < n; i++) {
			prepare(m, &recs[i], &p[i], &owner);
			if (recs[i].ts_ns > clock)
				clock = recs[i].ts_ns;
		}
		table_burst_prepared(w, p, n);
		secho_flow_table_expire(&w->t, clock);
		if ((++bursts & 31) == 0)
			housekeeping(m);
	}
	secho_flow_table_expire(&w->t, clock);
	secho_flow_table_flush(&w->t);
}

/* A worker of several, offline: meters what the reader puts in its ring. */
static void run_offline_worker(struct worker *w)
{
	struct meter *m = w->m;
	struct frame_ring *q = &w->frames;
	uint64_t tail = q->tail;

	for (;;) {
		/* acquire: the clock after the heads (see the top of this file) */
		uint64_t clock = __atomic_load_n(&m->clock, __ATOMIC_ACQUIRE);
		int eof = __atomic_load_n(&m->eof, __ATOMIC_ACQUIRE);
		uint64_t head = __atomic_load_n(&q->head, __ATOMIC_ACQUIRE);
		if (head == tail) {
			if (eof)
				break; /* eof was stored after the last head: nothing more comes */
			bool more = false;
			for (unsigned spin = 0; spin < SPIN_CHECKS && !more; spin++) {
				cpu_relax();
				more = __atomic_load_n(&q->head, __ATOMIC_ACQUIRE) != tail ||
				       __atomic_load_n(&m->eof, __ATOMIC_ACQUIRE);
			}
			if (more)
				continue;
			secho_flow_table_expire(&w->t, clock);
			uint32_t seq = wp_prepare(&q->ready);
			if (__atomic_load_n(&q->head, __ATOMIC_ACQUIRE) != tail ||
			    __atomic_load_n(&m->eof, __ATOMIC_ACQUIRE))
				wp_cancel(&q->ready);
			else
				wp_sleep(&q->ready, seq, SLEEP_NS);
			continue;
		}
		while (tail != head) {
			uint32_t at = (uint32_t)(tail & (RING_FRAMES - 1));
			uint64_t n = head - tail;
			if (n > BURST)
				n = BURST;
			if (n > RING_FRAMES - at)
				n = RING_FRAMES - at; /* up to the end of the ring, the rest next */
			table_burst_prepared(w, &q->p[at], (unsigned)n);
			tail += n;
			/* release: the frames are metered, their slots may be written again */
			__atomic_store_n(&q->tail, tail, __ATOMIC_RELEASE);
		}
		secho_flow_table_expire(&w->t, clock);
		/* the reader waits for half a ring of room (or for the end) */
		if (wp_waiting(&m->reader) &&
		    __atomic_load_n(&q->head, __ATOMIC_RELAXED) - tail <= RING_FRAMES / 2)
			wp_wake(&m->reader);
	}
	secho_flow_table_expire(&w->t, __atomic_load_n(&m->clock, __ATOMIC_ACQUIRE));
	secho_flow_table_flush(&w->t);
}

/* The reader's heads and clock, published; a sleeping worker woken when it has at least
 * min frames waiting. */
static void publish(struct meter *m, const uint64_t *head, uint64_t clock, uint64_t min)
{
	for (unsigned i = 0; i < m->n; i++)
		/* release: the frames' bytes before the head */
		__atomic_store_n(&m->w[i].frames.head, head[i], __ATOMIC_RELEASE);
	/* release, after the heads: see the top of this file */
	__atomic_store_n(&m->clock, clock, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < m->n; i++) {
		struct frame_ring *q = &m->w[i].frames;
		if (wp_waiting(&q->ready) &&
		    head[i] - __atomic_load_n(&q->tail, __ATOMIC_RELAXED) >= min)
			wp_wake(&q->ready);
	}
}

/* The reader, with room for one more frame in worker k's ring. Until there is, the
 * records are drained and the reader sleeps (woken by the worker). */
static void reader_room(struct meter *m, unsigned k, const uint64_t *head, uint64_t clock,
                        uint64_t *tail_seen)
{
	struct frame_ring *q = &m->w[k].frames;

	*tail_seen = __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE);
	if (head[k] - *tail_seen < RING_FRAMES)
		return;
	publish(m, head, clock, 1); /* every worker has all there is */
	for (;;) {
		drain(m);
		housekeeping(m);
		*tail_seen = __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE);
		if (head[k] - *tail_seen < RING_FRAMES)
			return;
		uint32_t seq = wp_prepare(&m->reader);
		*tail_seen = __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE);
		if (head[k] - *tail_seen < RING_FRAMES) {
			wp_cancel(&m->reader);
			return;
		}
		wp_sleep(&m->reader, seq, SLEEP_NS / 10);
	}
}

/* Several workers: this thread reads, prepares and hands out the frames, and hands the
 * workers' records to the sinks. */
static void run_reader(struct meter *m)
{
	struct secho_cap_rec recs[BURST];
	uint64_t head[SECHO_FLOW_MAX_WORKERS] = {0}, tail_seen[SECHO_FLOW_MAX_WORKERS] = {0};
	uint64_t clock = 0, last_tick = 0;
	unsigned bursts = 0, owner;

	while (!stopping(m)) {
		unsigned n = read_burst(m, recs);
		if (!n)
			break;
		for (unsigned i = 0; i < n; i++) {
			struct secho_flow_prep p;
			prepare(m, &recs[i], &p, &owner);
			if (head[owner] - tail_seen[owner] >= RING_FRAMES)
				reader_room(m, owner, head, clock, &tail_seen[owner]);
			m->w[owner].frames.p[head[owner]++ & (RING_FRAMES - 1)] = p;
			if (recs[i].ts_ns > clock)
				clock = recs[i].ts_ns;
		}
		publish(m, head, clock, WAKE_FRAMES);
		if ((++bursts & 7) == 0) {
			drain(m);
			if ((bursts & 255) == 0) {
				housekeeping(m);
				/* now and then, every sleeping worker moves to the clock */
				if (m->last_tick != last_tick) {
					last_tick = m->last_tick;
					publish(m, head, clock, 0);
				}
			}
		}
	}
	publish(m, head, clock, 0);
	/* release: after the last heads and the final clock */
	__atomic_store_n(&m->eof, 1, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < m->n; i++)
		if (wp_waiting(&m->w[i].frames.ready))
			wp_wake(&m->w[i].frames.ready);
}

/* The kernel's drop counters of this worker's sockets (read here, in the worker's own
 * thread: reading them resets them in the kernel, the io layer accumulates). */
static void live_drops(struct worker *w)
{
	uint64_t d = 0;
	for (unsigned q = 0; q < w->nio; q++) {
		struct secho_io_stats st;
		secho_io_get_stats(w->io[q], &st);
		d += st.rx_dropped_by_kernel;
	}
	__atomic_store_n(&w->kernel_drops, d, __ATOMIC_RELAXED);
}

/* A socket of the worker reported an error (POLLERR: the link went down, the interface
 * went away). Clears the error; false when the interface is gone, after a pause when it
 * is only down (no spinning on the error while it lasts). */
static bool socket_trouble(struct worker *w, const struct pollfd *pfd)
{
	bool trouble = false;

	for (unsigned q = 0; q < w->nio; q++) {
		if (!(pfd[q].revents & (POLLERR | POLLHUP | POLLNVAL)))
			continue;
		int e = 0;
		socklen_t l = sizeof(e);
		getsockopt(pfd[q].fd, SOL_SOCKET, SO_ERROR, &e, &l);
		trouble = true;
	}
	if (!trouble)
		return true;
	if (!if_nametoindex(w->m->cfg->iface)) {
		__atomic_store_n(&w->gone, 1, __ATOMIC_RELAXED);
		return false;
	}
	usleep(LIVE_POLL_MS * 1000);
	return true;
}

static void run_live(struct worker *w)
{
	struct meter *m = w->m;
	struct secho_io_pkt pk[BURST];
	struct secho_flow_frame fr[BURST];
	struct pollfd pfd[MAX_IO_PER_WKR];
	uint64_t last_wall = 0;
	uint64_t since_sleep = 0; /* frames read since the last nap or poll */

	while (!stopping(m) && !__atomic_load_n(&w->gone, __ATOMIC_RELAXED)) {
		unsigned got = 0;
		uint64_t clock = 0;
		for (unsigned q = 0; q < w->nio; q++) {
			unsigned n = secho_io_rx_burst(w->io[q], pk, BURST);
			uint64_t now = 0;
			for (unsigned i = 0; i < n; i++) {
				struct secho_flow_frame *x = &fr[i];
				uint64_t ts = pk[i].ts_ns;
				if (!ts)
					ts = now ? now : (now = clock_ns(CLOCK_REALTIME));
				x->data = pk[i].data;
				x->wirelen = pk[i].len;
				x->ts_ns = ts;
				x->reason = secho_dissect(pk[i].data, pk[i].len, &x->d);
				if (ts > clock)
					clock = ts;
			}
			table_burst(w, fr, n);
			secho_io_rx_release(w->io[q], pk, n);
			got += n;
		}
		/* Offloaded flows' last-seen times, read in slices, before the sweeps. */
		int wait_ms = LIVE_POLL_MS;
		if (w->tier)
			wait_ms = (int)secho_flow_tier_poll(w->tier, clock_ns(CLOCK_MONOTONIC));
		if (got) {
			secho_flow_table_expire(&w->t, clock);
			__atomic_store_n(&w->frames_read, w->frames_read + got, __ATOMIC_RELAXED);
			since_sleep += got;
		} else if (since_sleep) {
			struct timespec nap = {0, (long)LIVE_NAP_NS};
			nanosleep(&nap, NULL); /* a signal cuts it short: the loop looks at stop */
			since_sleep = 0;
		} else {
			for (unsigned q = 0; q < w->nio; q++) {
				pfd[q].fd = secho_io_fd(w->io[q]);
				pfd[q].events = POLLIN;
				pfd[q].revents = 0;
			}
			if (poll(pfd, w->nio, wait_ms) > 0 && !socket_trouble(w, pfd))
				break; /* the interface went away: export what there is */
		}
		/* Timeouts also when nothing comes: the wall clock, a little behind. */
		uint64_t wall = clock_ns(CLOCK_REALTIME);
		if (wall - last_wall >= LIVE_POLL_MS * 1000000ull) {
			secho_flow_table_expire(&w->t, wall - LIVE_GUARD_NS);
			last_wall = wall;
			live_drops(w);
		}
	}
	live_drops(w);
	if (m->tier) /* the map's counters final before the last records take them */
		secho_flow_tier_stop(m->tier);
	secho_flow_table_flush(&w->t);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	if (w->m->cfg->pcap)
		run_offline_worker(w);
	else
		run_live(w);
	/* release: every record of this worker is in its ring */
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* ---- setup ---- */

static int rx_queues(const char *ifname)
{
	char path[128];
	int n = 0;

	for (int q = 0; q < 256; q++) {
		snprintf(path, sizeof(path), "/sys/class/net/%s/queues/rx-%d", ifname, q);
		if (access(path, F_OK))
			break;
		n++;
	}
	return n ? n : 1;
}

static int open_live(struct meter *m, char *err, size_t errlen)
{
	const struct secho_flow_meter_cfg *cfg = m->cfg;
	struct secho_io_cfg ic;
	char e[256];

	if (!m->n)
		return -EINVAL;
	memset(&ic, 0, sizeof(ic));
	ic.kind = cfg->io;
	ic.ifname = cfg->iface;
	ic.hint = SECHO_IO_THROUGHPUT; /* AF_PACKET: TPACKET_V3 blocks */
	ic.rx_only = true;
	ic.vlan_restore = true;
	ic.promisc = true;
	ic.rx_ring_bytes = (uint64_t)(cfg->ring_mib ? cfg->ring_mib : SECHO_FLOW_RING_MIB) << 20;
	ic.tx_ring = 64; /* AF_XDP: nothing is sent, the least UMEM for it */
	/* AF_PACKET, several workers: one fanout group, under an id the kernel gives the first
	 * socket (no other group on the interface has it); the others join it */
	ic.fanout = m->n > 1;
	ic.fanout_new = m->n > 1;
	ic.queue = 0;
	ic.xdp_mode = cfg->xdp_mode;
	if (m->tier) { /* AF_XDP sockets behind the offload program, in its mode */
		ic.xdp_external_prog = true;
		ic.xsk_map_fd = secho_flow_tier_xsk_map_fd(m->tier);
		ic.xdp_mode =
		        secho_flow_tier_native(m->tier) ? SECHO_IO_XDP_NATIVE : SECHO_IO_XDP_SKB;
	}
	struct secho_io *first = secho_io_open(&ic, e, sizeof(e));
	if (!first) {
		snprintf(err, errlen, "%s", e);
		return -(errno ? errno : EIO);
	}
	m->w[0].io[m->w[0].nio++] = first;
	/* AUTO chose one of the two; the other sockets are of the same kind */
	ic.kind = strncmp(secho_io_describe(first), "AF_XDP", 6) == 0 ? SECHO_IO_XDP
	                                                              : SECHO_IO_PACKET;
	if (ic.kind == SECHO_IO_XDP) {
		/* one socket per queue: a queue without one is not seen at all */
		int nq = rx_queues(cfg->iface);
		if (nq > (int)(MAX_IO_PER_WKR * m->n))
			nq = (int)(MAX_IO_PER_WKR * m->n);
		for (int q = 1; q < nq; q++) {
			ic.queue = (uint32_t)q;
			struct secho_io *io = secho_io_open(&ic, e, sizeof(e));
			if (!io) {
				snprintf(err, errlen, "queue %d: %s", q, e);
				return -(errno ? errno : EIO);
			}
			struct worker *w = &m->w[(unsigned)q % m->n];
			w->io[w->nio++] = io;
		}
	} else {
		ic.fanout_new = false;
		if (secho_io_fanout_id(first) >= 0)
			ic.fanout_id = (uint16_t)secho_io_fanout_id(first);
		for (unsigned i = 1; i < m->n; i++) {
			struct secho_io *io = secho_io_open(&ic, e, sizeof(e));
			if (!io) {
				snprintf(err, errlen, "worker %u: %s", i, e);
				return -(errno ? errno : EIO);
			}
			m->w[i].io[m->w[i].nio++] = io;
		}
	}
	for (unsigned i = 0; i < m->n; i++)
		if (!m->w[i].nio) {
			snprintf(err, errlen,
			         "%s has %d receive queue(s) for AF_XDP: fewer than %u workers",
			         cfg->iface, rx_queues(cfg->iface), m->n);
			return -EINVAL;
		}
	return 0;
}

static void teardown(struct meter *m)
{
	if (!m->w)
		return;
	for (unsigned i = 0; i < m->n; i++) {
		struct worker *w = &m->w[i];
		for (unsigned q = 0; q < w->nio; q++)
			secho_io_close(w->io[q]);
		if (w->mem)
			munmap(w->mem, w->memlen);
		free(w->ring.r);
		free(w->frames.p);
	}
	free(m->w);
	m->w = NULL;
	secho_flow_tier_close(m->tier); /* after the sockets: they leave its XSKMAP first */
	m->tier = NULL;
	secho_capfile_close(&m->cf);
}

int secho_flow_meter_run(const struct secho_flow_meter_cfg *cfg,
                         struct secho_flow_meter_result *res, char *err, size_t errlen)
{
	struct meter mm, *m = &mm;
	int r = 0;

	memset(m, 0, sizeof(*m));
	memset(res, 0, sizeof(*res));
	m->cfg = cfg;
	m->n = cfg->workers ? cfg->workers : 1;
	if (m->n > SECHO_FLOW_MAX_WORKERS) {
		snprintf(err, errlen, "at most %d workers", SECHO_FLOW_MAX_WORKERS);
		return -EINVAL;
	}
	m->threaded = m->n > 1;
	m->split_seed = random64();
	m->w = calloc(m->n, sizeof(*m->w));
	if (!m->w) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	struct secho_flow_table_cfg tc = cfg->table;
	tc.flows = (uint32_t)(((uint64_t)cfg->table.flows + m->n - 1) / m->n);
	tc.emit = on_record;
	tc.seed = random64();
	if (cfg->offload && !cfg->pcap) {
		struct secho_flow_tier_cfg oc = *cfg->offload;
		/* the program hands idle flows' packets back at the table's timeout */
		oc.ofl.inactive_ns = tc.inactive_ns ? tc.inactive_ns : 30000000000ull;
		r = secho_flow_tier_open(&m->tier, &oc, m->n, err, errlen);
		if (r)
			goto out;
	}
	if (m->tier) /* for the size check; each worker binds its own part below */
		secho_flow_tier_bind(secho_flow_tier_worker(m->tier, 0), &tc);
	size_t memlen = secho_flow_table_mem_size(&tc);
	if (!memlen) {
		snprintf(err, errlen, "flow table configuration out of range");
		r = -EINVAL;
		goto out;
	}
	for (unsigned i = 0; i < m->n; i++) {
		struct worker *w = &m->w[i];
		w->id = i;
		w->m = m;
		/* Anonymous memory: zero. Offline only the pages the table touches are used
		 * (huge pages made the whole table resident, 137 MiB by default, for no gain
		 * in user time on the light profile and a loss on heavy: docs/PERFORMANCE.md).
		 * Live the table is made resident here, in transparent huge pages where the
		 * kernel gives them: on the packet path a first touch costs a page fault (a
		 * huge page's: milliseconds of compaction and zeroing), and a table in 4 KiB
		 * pages a TLB miss on almost every new flow (docs/FLOW.md, "Workers"). When the
		 * kernel refuses, the table is faulted in as it is used. */
		w->memlen = memlen;
		w->mem = mmap(NULL, w->memlen, PROT_READ | PROT_WRITE,
		              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (w->mem == MAP_FAILED) {
			w->mem = NULL;
			snprintf(err, errlen, "flow table: %zu bytes: %s", memlen, strerror(errno));
			r = -ENOMEM;
			goto out;
		}
		if (!cfg->pcap) {
			(void)madvise(w->mem, w->memlen, MADV_HUGEPAGE);
			m->resident += madvise(w->mem, w->memlen, MADV_POPULATE_WRITE) == 0;
		}
		tc.ctx = w;
		if (m->tier) {
			w->tier = secho_flow_tier_worker(m->tier, i);
			secho_flow_tier_bind(w->tier, &tc);
		}
		r = secho_flow_table_init(&w->t, &tc, w->mem, memlen);
		if (r) {
			snprintf(err, errlen, "flow table: %s",
			         r == -ENOTSUP ? "hash not supported by this CPU" : strerror(-r));
			goto out;
		}
		if (w->tier)
			secho_flow_tier_table(w->tier, &w->t);
	}
	if (cfg->pcap) {
		r = secho_capfile_open(&m->cf, cfg->pcap, err, errlen);
		if (r)
			goto out;
		secho_capfile_drop_behind(&m->cf); /* frames are not used once prepared */
		for (unsigned i = 0; m->n > 1 && i < m->n; i++) {
			m->w[i].frames.p =
			        aligned_alloc(64, RING_FRAMES * sizeof(struct secho_flow_prep));
			if (!m->w[i].frames.p) {
				snprintf(err, errlen, "out of memory");
				r = -ENOMEM;
				goto out;
			}
		}
	} else {
		m->threaded = true; /* the export thread keeps ticking while workers wait */
		r = open_live(m, err, errlen);
		if (r)
			goto out;
	}
	if (m->threaded)
		for (unsigned i = 0; i < m->n; i++) {
			m->w[i].ring.r = malloc(RING_RECORDS * sizeof(struct secho_flow_rec));
			if (!m->w[i].ring.r) {
				snprintf(err, errlen, "out of memory");
				r = -ENOMEM;
				goto out;
			}
		}
	if (cfg->report && !cfg->quiet) {
		fprintf(cfg->report,
		        "secho flow: %s %s, %u worker%s, flow table %u x %u entries (%u-entry "
		        "buckets, "
		        "%u-slot cache), %.1f MiB each, %s%s\n",
		        cfg->pcap ? "reading" : "metering", cfg->pcap ? cfg->pcap : cfg->iface,
		        m->n, m->n == 1 ? "" : "s", m->n, secho_flow_table_capacity(&m->w[0].t),
		        (unsigned)SECHO_FLOW_BUCKET, m->w[0].t.cfg.cache_slots,
		        (double)memlen / 1048576.0, cfg->table.uniflow ? "uniflows" : "biflows",
		        cfg->table.hash == SECHO_FLOW_HASH_DEFAULT ? "" : ", hash set by hand");
		if (!cfg->pcap && m->resident == m->n)
			fprintf(cfg->report,
			        "  flow tables resident from the start (transparent huge "
			        "pages where the kernel gives them)\n");
		else if (!cfg->pcap)
			fprintf(cfg->report,
			        "  flow tables: %u of %u resident, the rest faulted in as used "
			        "(the kernel refused MADV_POPULATE_WRITE)\n",
			        m->resident, m->n);
		if (!cfg->pcap)
			for (unsigned i = 0; i < m->n; i++)
				for (unsigned q = 0; q < m->w[i].nio; q++)
					fprintf(cfg->report, "  worker %u: %s\n", i,
					        secho_io_describe(m->w[i].io[q]));
		if (m->tier)
			fprintf(cfg->report, "  %s\n", secho_flow_tier_describe(m->tier));
		fflush(cfg->report);
	}

	(void)secho_tsc_hz(); /* calibrated now, not in the first report */
	m->start_ns = clock_ns(CLOCK_REALTIME);
	m->start_mono = m->last_tick = m->last_stats = m->last_progress = clock_ns(CLOCK_MONOTONIC);
	m->now_ns = m->start_ns;
	if (!m->threaded) {
		run_offline_one(m);
	} else {
		for (unsigned i = 0; i < m->n; i++) {
			int e = pthread_create(&m->w[i].th, NULL, worker_main, &m->w[i]);
			if (e) {
				/* stop the ones started, let them export what they have */
				snprintf(err, errlen, "pthread_create: %s", strerror(e));
				r = -e;
				break;
			}
			m->w[i].started = true;
		}
		if (r) /* a worker did not start: the others stop and export what they have */
			__atomic_store_n(&m->halt, 1, __ATOMIC_RELAXED);
		if (cfg->pcap && !r) {
			run_reader(m);
		} else if (cfg->pcap) {
			__atomic_store_n(&m->eof, 1, __ATOMIC_RELEASE);
			for (unsigned i = 0; i < m->n; i++)
				wp_wake(&m->w[i].frames.ready);
		}
		unsigned nap_us = NAP_MIN_US;
		for (;;) {
			unsigned done = 0;
			for (unsigned i = 0; i < m->n; i++)
				done += !m->w[i].started ||
				        __atomic_load_n(&m->w[i].done, __ATOMIC_ACQUIRE);
			uint64_t got = drain(m);
			if (done == m->n && !got) {
				drain(m);
				break;
			}
			housekeeping(m);
			if (got) {
				nap_us = NAP_MIN_US;
			} else {
				usleep(nap_us);
				nap_us = nap_us * 2 > NAP_MAX_US ? NAP_MAX_US : nap_us * 2;
			}
		}
		for (unsigned i = 0; i < m->n; i++)
			if (m->w[i].started)
				pthread_join(m->w[i].th, NULL);
		drain(m);
	}
	if (m->progress_shown || (cfg->progress && cfg->pcap))
		show_progress(m, clock_ns(CLOCK_MONOTONIC), true);

	/* close the sinks with the final totals */
	struct secho_flow_totals tot;
	totals_of(m, &tot);
	m->now_ns = clock_ns(CLOCK_REALTIME);
	for (unsigned i = 0; i < cfg->nsinks; i++)
		if (cfg->sinks[i].ops->close(cfg->sinks[i].ctx, m->now_ns, &tot,
		                             SECHO_FLOW_CLOSE_TIMEOUT_MS))
			res->sink_failed = true;
	sum_counters(m, &res->cnt, &res->frames_read, &res->kernel_drops);
	res->elapsed_s = (double)(clock_ns(CLOCK_MONOTONIC) - m->start_mono) / 1e9;
	res->interrupted = stopping(m);
	if (cfg->pcap) {
		const char *e = secho_capfile_error(&m->cf);
		if (e)
			snprintf(res->input_error, sizeof(res->input_error), "%s: %s", cfg->pcap,
			         e);
		res->interrupted = res->interrupted && !m->cf.done;
	} else {
		for (unsigned i = 0; i < m->n; i++)
			if (__atomic_load_n(&m->w[i].gone, __ATOMIC_RELAXED))
				snprintf(res->input_error, sizeof(res->input_error),
				         "%s: the interface went away", cfg->iface);
	}
	print_stats(m, true);
out:
	teardown(m);
	return r;
}
