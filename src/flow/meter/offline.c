/*
 * src/flow/meter/offline.c - the meter on a capture file (src/flow/meter/inner.h).
 *
 * The file is mapped once (include/secho/capfile.h) and read by the calling thread alone,
 * in bursts of BURST records: every frame is dissected and prepared (its key and hash:
 * secho_flow_table_prepare) once, then metered. One worker meters in the same thread;
 * with several, each prepared frame goes to the ring of the worker its symmetric address
 * hash names (secho_flow_worker_of), and the workers never touch the file.
 *
 * Frame rings (workers > 1): one single-producer single-consumer ring per worker,
 * published a burst at a time: the reader writes the frames, then the head with a release
 * store; the worker loads the head with an acquire load, meters, then moves the tail with a
 * release store (the slots may be written again). After each burst the reader publishes the
 * packet clock (the latest frame time) with a release store after the heads: a worker that
 * loads the clock (acquire) and then a head has every frame read before that clock below
 * that head, so once it has metered them it may expire its table at that clock. The same
 * thread hands the records to the sinks between bursts (meter_drain).
 */
#include "flow/meter/inner.h"
#include "secho/dissect.h"

static void table_burst_prepared(struct worker *w, const struct secho_flow_prep *p, unsigned n)
{
	if (!n)
		return;
	uint64_t c0 = burst_start(w);
	secho_flow_table_burst_prepared(&w->t, p, n);
	burst_end(w, c0, n);
}

static void prepare(struct meter *m, const struct secho_cap_rec *r, struct secho_flow_prep *p,
                    unsigned *owner)
{
	struct secho_dissect d;
	enum secho_dissect_reason why = secho_dissect_snap(r->data, r->caplen, r->wirelen, &d);

	/* every worker's table has the configuration of worker 0's, which is only read */
	secho_flow_table_prepare(&m->w[0].t, r->data, r->caplen, why, &d, r->wirelen, r->ts_ns, p);
	*owner = why == SECHO_DISSECT_OK ? secho_flow_worker_of(r->data, &d, m->split_seed, m->n)
	                                 : 0;
}

/* A burst of the file's records, prepared for the tables. */
struct burst {
	struct meter *m;
	struct secho_cap_rec recs[BURST];
	struct secho_flow_prep p[BURST];
	unsigned owner[BURST];
	volatile unsigned n; /* frames complete: stored after each (secho_capfile_guarded) */
	uint64_t clock;      /* the packet clock: the latest time read so far, across bursts */
};

static void read_prepare(void *arg)
{
	struct burst *b = arg;
	unsigned n = 0;

	while (n < BURST && secho_capfile_next(&b->m->cf, &b->recs[n]) == 1) {
		prepare(b->m, &b->recs[n], &b->p[n], &b->owner[n]);
		/* the clock at this frame, here where the input is read: every worker judges
		 * the frame at the same time (docs/FLOW.md, "Time") */
		if (b->recs[n].ts_ns > b->clock)
			b->clock = b->recs[n].ts_ns;
		b->p[n].clock_ns = b->clock;
		__asm__ volatile("" ::: "memory"); /* the frame's bytes before its count */
		b->n = ++n;
	}
}

/* Read up to BURST records of the file and prepare them for the tables (their key and
 * hash, src/flow/core/table.h), the mapping guarded: a file that shrinks under the reader
 * ends the reading after the last whole frame (secho_capfile_guarded). Returns how many. */
static unsigned read_burst(struct meter *m, struct burst *b)
{
	b->m = m;
	b->n = 0;
	secho_capfile_guarded(&m->cf, read_prepare, b);
	m->frames_read += b->n;
	return b->n;
}

/* One worker: everything in the calling thread, records straight to the sinks. */
void meter_offline_one(struct meter *m)
{
	struct worker *w = &m->w[0];
	struct burst b = {.clock = 0};
	uint64_t clock = 0;
	unsigned bursts = 0;

	while (!stopping(m)) {
		unsigned n = read_burst(m, &b);
		if (!n)
			break;
		for (unsigned i = 0; i < n; i++)
			if (b.recs[i].ts_ns > clock)
				clock = b.recs[i].ts_ns;
		table_burst_prepared(w, b.p, n);
		secho_flow_table_expire(&w->t, clock);
		if ((++bursts & 31) == 0)
			meter_housekeeping(m);
	}
	secho_flow_table_expire(&w->t, clock);
	secho_flow_table_flush(&w->t);
}

/* A worker of several, offline: meters what the reader puts in its ring. */
void meter_offline_worker(struct worker *w)
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
		meter_drain(m);
		meter_housekeeping(m);
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
void meter_offline_reader(struct meter *m)
{
	struct burst b = {.clock = 0};
	uint64_t head[SECHO_FLOW_MAX_WORKERS] = {0}, tail_seen[SECHO_FLOW_MAX_WORKERS] = {0};
	uint64_t clock = 0, last_tick = 0;
	unsigned bursts = 0;

	while (!stopping(m)) {
		unsigned n = read_burst(m, &b);
		if (!n)
			break;
		for (unsigned i = 0; i < n; i++) {
			unsigned owner = b.owner[i];
			if (head[owner] - tail_seen[owner] >= RING_FRAMES)
				reader_room(m, owner, head, clock, &tail_seen[owner]);
			m->w[owner].frames.p[head[owner]++ & (RING_FRAMES - 1)] = b.p[i];
			if (b.recs[i].ts_ns > clock)
				clock = b.recs[i].ts_ns;
		}
		publish(m, head, clock, WAKE_FRAMES);
		if ((++bursts & 7) == 0) {
			meter_drain(m);
			if ((bursts & 255) == 0) {
				meter_housekeeping(m);
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
