/*
 * src/flow/meter/inner.h - what the meter's rooms share, private to src/flow/meter/.
 *
 * The meter (contract: meter.h) is five files, one per job:
 *   meter.c    set-up and the run, by phase: check, open, start, run, drain, report
 *   ring.c     waiting between threads (futex waitpoints) and the record rings from the
 *              workers to the export thread
 *   offline.c  a capture file: one worker in the calling thread, or several, each walking
 *              the whole file and metering its own share of the frames
 *   live.c     an interface: the sockets, and the live workers (read, dissect, meter)
 *   report.c   statistics, progress, the sinks' periodic tick and the totals they get
 *
 * Memory ordering of the record rings is described in ring.c; what the offline workers
 * share (their places in the file), in offline.c.
 */
#ifndef SECHO_FLOW_METER_INNER_H
#define SECHO_FLOW_METER_INNER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "flow/meter/meter.h"
#include "secho/capfile.h"
#include "secho/tsc.h"
#include "sys/clock.h"
#include "sys/latency.h"

#define BURST             32u
#define RING_RECORDS      (1u << 15)
#define RING_FEAT_RECORDS (1u << 11)  /* with feature sets on: each record carries KiBs */
#define SPIN_CHECKS       64u         /* looks before a thread with nothing to do sleeps */
#define SLEEP_NS          10000000ull /* the longest sleep of a waiting thread */
#define MAX_IO_PER_WKR    16
#define TIMED_BURSTS      3u /* every (TIMED_BURSTS + 1)th burst a table gets is timed */

/* Where one thread sleeps until another has something for it (futex; ring.c). */
struct waitpoint {
	uint32_t seq;     /* bumped by every wake */
	uint32_t waiting; /* the sleeper is (about to be) asleep */
};

/* A worker's records on their way to the export thread (ring.c). */
struct rec_ring {
	struct secho_flow_rec *r;
	uint8_t *feat; /* with feature sets on: each record's feature area (feat_len bytes
	                * per slot), copied from the table's slot during emit */
	size_t feat_len;
	uint64_t size; /* records: RING_RECORDS, RING_FEAT_RECORDS with feature sets on */
	uint64_t head; /* written by the worker (release) */
	char pad1[56];
	uint64_t tail; /* written by the export thread (release) */
	char pad2[56];
	struct waitpoint space; /* the worker waits here for room */
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
	struct secho_capfile cf; /* offline, workers > 1, not worker 0: its own cursor */
	bool direct;             /* records straight to the sinks (offline worker 0 of several:
	                          * the calling thread, which drains the rings) */
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
	struct secho_capfile cf; /* offline: the file, worker 0's cursor (the calling thread) */
	uint64_t frames_read;    /* offline: by the calling thread */
	uint64_t split_seed;
	uint64_t start_ns, start_mono, last_tick, last_stats, last_progress;
	uint64_t start_tsc; /* the TSC at start_mono: the table timings' clock rate (report.c) */
	uint64_t progress_frames;
	bool progress_shown;
	uint64_t now_ns;
	struct secho_flow_tier *tier; /* live with --offload: the XDP offload tier */
	unsigned resident;            /* live: tables made resident at the start */
};

static inline bool stopping(const struct meter *m)
{
	return (m->cfg->stop && *m->cfg->stop) || __atomic_load_n(&m->halt, __ATOMIC_RELAXED);
}

static inline void cpu_relax(void)
{
	__builtin_ia32_pause();
}

/*
 * Every (TIMED_BURSTS + 1)th burst a table takes is timed, and each of its packets counted
 * at the burst's cycles over its packets: burst_start returns the burst's start (TSC), or
 * 0 when it is not timed; burst_end records it.
 */
static inline uint64_t burst_start(struct worker *w)
{
	return (w->bursts++ & TIMED_BURSTS) ? 0 : secho_rdtsc();
}

static inline void burst_end(struct worker *w, uint64_t c0, unsigned n)
{
	if (c0)
		secho_lat_record_n(&w->lat, (secho_rdtsc() - c0) / n, n);
}

/* ---- ring.c ---- */

/*
 * The sleeper: wp_prepare(), then check its condition once more; if it holds,
 * wp_cancel(), else wp_sleep() (returns when woken, after a bounded time, or spuriously:
 * the caller checks again). The waker changes the state, then, if wp_waiting(), calls
 * wp_wake().
 */
uint32_t wp_prepare(struct waitpoint *w);
void wp_cancel(struct waitpoint *w);
void wp_sleep(struct waitpoint *w, uint32_t seq, uint64_t ns);
bool wp_waiting(struct waitpoint *w);
void wp_wake(struct waitpoint *w);

/* The tables' emit callback (ctx: the worker): to the sinks directly in one thread, else
 * into the worker's record ring, waiting while it is full (no record is ever dropped). */
void meter_on_record(void *ctx, const struct secho_flow_rec *rec);
/* Hand every record waiting in the rings to the sinks; returns how many. */
uint64_t meter_drain(struct meter *m);

/* ---- offline.c ---- */

/* One worker: read, prepare and meter everything in the calling thread. */
void meter_offline_one(struct meter *m);
/* Worker 0 of several, in the calling thread: walks the file, meters its share, and drains
 * every worker's records, until the end of the file or the stop. */
void meter_offline_first(struct meter *m);
/* Worker 1.. of several, offline: walks the file with its own cursor (w->cf) and meters its
 * share, until the end of the file or the stop. */
void meter_offline_worker(struct worker *w);

/* ---- live.c ---- */

/* Open the interface's sockets and spread them over the workers. 0, or -errno with err. */
int meter_live_open(struct meter *m, char *err, size_t errlen);
/* A live worker: read, dissect and meter until the stop or the interface goes away. */
void meter_live_worker(struct worker *w);

/* ---- report.c ---- */

/* All workers' counters, frames read and kernel drops (any thread). */
void meter_sum(const struct meter *m, struct secho_flow_counters *c, uint64_t *read,
               uint64_t *drops);
/* The totals the sinks get at ticks and at the close. */
void meter_totals(const struct meter *m, struct secho_flow_totals *t);
/* The banner (cfg->report, unless quiet). */
void meter_banner(const struct meter *m, size_t memlen);
/* The statistics: periodic (final false) or the summary. */
void meter_print_stats(const struct meter *m, bool final);
/* Offline progress on stderr (cfg->progress). */
void meter_progress(struct meter *m, uint64_t now_mono, bool last);
/* The export thread's periodic work: sink ticks, statistics, progress. */
void meter_housekeeping(struct meter *m);

#endif
