/*
 * src/flow/meter/offline.c - the meter on a capture file (src/flow/meter/inner.h).
 *
 * The file is mapped once (include/secho/capfile.h) and walked in bursts of BURST records:
 * every frame is dissected, and the frames a worker owns are prepared (their key and hash:
 * secho_flow_table_prepare) and metered by it. One worker: everything in the calling
 * thread, records straight to the sinks.
 *
 * Several workers: every worker walks the whole file with a cursor of its own
 * (secho_capfile_clone) and dissects every frame, just to know whose it is
 * (secho_flow_worker_of, the symmetric address hash; frames in no flow are worker 0's),
 * then prepares and meters only its own. The calling thread is worker 0; between its
 * bursts it hands the other workers' records to the sinks (meter_drain) and its own go
 * straight to them. The walk and the dissection are done by every worker, but side by
 * side: nothing passes from one thread to another per frame, and on a machine with as
 * many CPUs as workers no third thread competes for them. The reader thread this replaced
 * dissected and prepared every frame for the workers, and was the limit: two workers were
 * no faster than one (docs/PERFORMANCE.md, "The meter, offline: one worker and two").
 *
 * Time: every worker reads every frame's time, so its packet clock (the latest time read
 * so far) is at every frame what one worker's is; each frame is judged at it (docs/FLOW.md,
 * "Time") and each table expires at it after every burst, as with one worker.
 *
 * The only thing the workers share while they walk is their places in the file: worker 0
 * owns the mapping and unmaps the pages behind its cursor, but not those up to 16 MiB
 * behind the slowest other cursor (secho_capfile_drop_hold). A worker stores its place
 * after each burst with a relaxed store; a stale place only keeps pages mapped longer, and
 * a page dropped all the same is mapped again from the page cache when read.
 */
#include "flow/meter/inner.h"
#include "secho/dissect.h"

/* A burst of prepared frames to a worker's table (secho_capfile_guarded's function). */
struct metering {
	struct worker *w;
	const struct secho_flow_prep *p;
	unsigned n;
};

static void meter_prepared(void *arg)
{
	const struct metering *a = arg;

	secho_flow_table_burst_prepared(&a->w->t, a->p, a->n);
}

/*
 * The worker's prepared frames to its table, the mapping guarded as when they were read: a
 * prepared frame points into the file, and the table reads the record's L2-L4 fields and
 * the feature sets' payload there (src/flow/core/table.h, struct secho_flow_prep), so a
 * file truncated between the reading and the metering faults here. The fault ends the
 * reading as one in the reader does (the cursor cf says why); the packet being metered then
 * may be counted without all its fields, and the frames after it in the burst are not
 * counted: the run ends with the error anyway, and a table never holds a frame's pointer
 * past its burst.
 */
static void table_burst_prepared(struct worker *w, struct secho_capfile *cf,
                                 const struct secho_flow_prep *p, unsigned n)
{
	if (!n)
		return;
	struct metering a = {.w = w, .p = p, .n = n};
	uint64_t c0 = burst_start(w);
	secho_capfile_guarded(cf, meter_prepared, &a);
	burst_end(w, c0, n);
}

/* A burst of the file's records: the worker's own frames, prepared for its table. */
struct burst {
	struct worker *w;
	struct secho_capfile *cf;
	struct secho_flow_prep p[BURST];
	/* stored after each frame is complete (secho_capfile_guarded) */
	volatile unsigned seen; /* frames read, every worker's */
	volatile unsigned n;    /* of them this worker's, in p */
	uint64_t clock;         /* the packet clock: the latest time read, across bursts */
};

static void read_prepare(void *arg)
{
	struct burst *b = arg;
	struct worker *w = b->w;
	struct meter *m = w->m;
	struct secho_cap_rec r;
	uint64_t clock = b->clock;
	unsigned seen = 0, n = 0;

	while (seen < BURST && secho_capfile_next(b->cf, &r) == 1) {
		struct secho_dissect d;
		enum secho_dissect_reason why = secho_dissect_snap(r.data, r.caplen, r.wirelen, &d);
		unsigned owner = why == SECHO_DISSECT_OK
		                         ? secho_flow_worker_of(r.data, &d, m->split_seed, m->n)
		                         : 0;
		/* the clock at this frame, here where the input is read: every worker judges
		 * the frame at the same time (docs/FLOW.md, "Time") */
		if (r.ts_ns > clock)
			clock = r.ts_ns;
		if (owner == w->id) {
			secho_flow_table_prepare(&w->t, r.data, r.caplen, why, &d, r.wirelen,
			                         r.ts_ns, &b->p[n]);
			b->p[n].clock_ns = clock;
			n++;
		}
		b->clock = clock;
		__asm__ volatile("" ::: "memory"); /* the frame's results before its count */
		b->n = n;
		b->seen = ++seen;
	}
}

/* Read up to BURST records of the file and prepare the worker's own (their key and hash,
 * src/flow/core/table.h), the mapping guarded: a file that shrinks under the reader ends
 * the reading after the last whole frame (secho_capfile_guarded). Returns the frames read
 * (all workers'; b->n of them are this worker's). */
static unsigned read_burst(struct burst *b)
{
	b->seen = 0;
	b->n = 0;
	secho_capfile_guarded(b->cf, read_prepare, b);
	return b->seen;
}

/* Worker 0's cursor keeps the pages the slowest other cursor still reads. */
static void hold_pages(struct meter *m)
{
	size_t low = SIZE_MAX;

	for (unsigned i = 1; i < m->n; i++) {
		size_t pos = __atomic_load_n(&m->w[i].pos, __ATOMIC_RELAXED);
		if (pos < low)
			low = pos;
	}
	secho_capfile_drop_hold(&m->cf, low);
}

/* Worker 0's walk over the file with the mapping's own cursor, in the calling thread. With
 * others (workers 1.. in their threads) it holds the pages they still read and hands their
 * records to the sinks every 8 bursts; alone, its records go straight to the sinks. */
static void walk_first(struct meter *m, bool others)
{
	struct worker *w = &m->w[0];
	struct burst b = {.w = w, .cf = &m->cf, .clock = 0};
	unsigned bursts = 0;

	while (!stopping(m)) {
		if (others)
			hold_pages(m);
		unsigned n = read_burst(&b);
		if (!n)
			break;
		m->frames_read += n;
		table_burst_prepared(w, b.cf, b.p, b.n);
		secho_flow_table_expire(&w->t, b.clock);
		bursts++;
		if (others && (bursts & 7) == 0)
			meter_drain(m);
		if ((bursts & 31) == 0)
			meter_housekeeping(m);
	}
	secho_flow_table_expire(&w->t, b.clock);
	secho_flow_table_flush(&w->t);
}

/* One worker: everything in the calling thread, records straight to the sinks. */
void meter_offline_one(struct meter *m)
{
	walk_first(m, false);
}

/* Worker 0 of several, in the calling thread: walks the file with the mapping's own cursor
 * and hands every worker's records to the sinks. */
void meter_offline_first(struct meter *m)
{
	walk_first(m, true);
}

/* Another worker of several, in its own thread: walks the file with its own cursor. */
void meter_offline_worker(struct worker *w)
{
	struct meter *m = w->m;
	struct burst b = {.w = w, .cf = &w->cf, .clock = 0};

	while (!stopping(m)) {
		unsigned n = read_burst(&b);
		if (!n)
			break;
		__atomic_store_n(&w->pos, w->cf.pos, __ATOMIC_RELAXED);
		table_burst_prepared(w, b.cf, b.p, b.n);
		secho_flow_table_expire(&w->t, b.clock);
	}
	__atomic_store_n(&w->pos, SIZE_MAX, __ATOMIC_RELAXED); /* holds no page any more */
	secho_flow_table_expire(&w->t, b.clock);
	secho_flow_table_flush(&w->t);
}
