/*
 * src/flow/meter/offline.c - the meter on a capture file (src/flow/meter/inner.h).
 *
 * The file is read (include/secho/capfile.h) and walked in bursts of BURST records:
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
 * The workers share nothing while they walk: each reads the file into buffers of its own
 * (secho_capfile_clone), pinned per burst (secho_capfile_pin), so that a burst's frames,
 * which the prepared frames point into, stay until it is metered.
 */
#include "flow/meter/inner.h"
#include "secho/dissect.h"

/* The worker's prepared frames to its table: a prepared frame points into the reader's
 * buffer, where the table reads the record's L2-L4 fields and the feature sets' payload
 * (src/flow/core/table.h, struct secho_flow_prep); the burst was read pinned
 * (read_burst), so its frames are all there until the next burst is read. */
static void table_burst_prepared(struct worker *w, const struct secho_flow_prep *p, unsigned n)
{
	if (!n)
		return;
	uint64_t c0 = burst_start(w);
	secho_flow_table_burst_prepared(&w->t, p, n);
	burst_end(w, c0, n);
}

/* A burst of the file's records: the worker's own frames, prepared for its table. */
struct burst {
	struct worker *w;
	struct secho_capfile *cf;
	struct secho_flow_prep p[BURST];
	unsigned seen;  /* frames read, every worker's */
	unsigned n;     /* of them this worker's, in p */
	uint64_t clock; /* the packet clock: the latest time read, across bursts */
};

/* Read up to BURST records of the file and prepare the worker's own (their key and hash,
 * src/flow/core/table.h), pinned: the frames stay in the buffers until the next burst is
 * read. Fewer when the buffers are full of them (SECHO_CAP_PAUSED), none only at the end
 * of the file or after an error. Returns the frames read (all workers'; b->n of them are
 * this worker's). */
static unsigned read_burst(struct burst *b)
{
	struct worker *w = b->w;
	struct meter *m = w->m;
	struct secho_cap_rec r;
	uint64_t clock = b->clock;
	unsigned seen = 0, n = 0;

	secho_capfile_pin(b->cf);
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
		seen++;
	}
	b->clock = clock;
	b->n = n;
	b->seen = seen;
	return seen;
}

/* Worker 0's walk over the file with the original cursor, in the calling thread. With
 * others (workers 1.. in their threads) it hands their records to the sinks every 8
 * bursts; alone, its records go straight to the sinks. */
static void walk_first(struct meter *m, bool others)
{
	struct worker *w = &m->w[0];
	struct burst b = {.w = w, .cf = &m->cf, .clock = 0};
	unsigned bursts = 0;

	while (!stopping(m)) {
		unsigned n = read_burst(&b);
		if (!n)
			break;
		m->frames_read += n;
		table_burst_prepared(w, b.p, b.n);
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

/* Worker 0 of several, in the calling thread: walks the file with the original cursor and
 * hands every worker's records to the sinks. */
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
		table_burst_prepared(w, b.p, b.n);
		secho_flow_table_expire(&w->t, b.clock);
	}
	secho_flow_table_expire(&w->t, b.clock);
	secho_flow_table_flush(&w->t);
}
