/*
 * src/flow/meter/ring.c - waiting between the meter's threads, and the record rings from
 * the workers to the export thread (src/flow/meter/inner.h).
 *
 * Record rings (workers > 1, or live): one single-producer single-consumer ring of records
 * per worker. The worker writes the record, then publishes the new head with a release
 * store; the export thread reads the head with an acquire load (so the record's bytes are
 * visible), copies the record out, then publishes the tail with a release store (so the
 * worker may reuse the slot only after the copy). A full ring makes the worker wait: no
 * record is ever dropped between the table and the sinks. Offline, worker 0 of several
 * runs in the thread that drains the rings and hands its own records to the sinks
 * directly (its ring is unused).
 *
 * Waiting: a worker with a full record ring spins briefly, then sleeps on a futex (struct
 * waitpoint), woken by the export thread when it has drained the ring, with a bounded
 * sleep in any case.
 */
#include <limits.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "flow/feature/sets.h"
#include "flow/meter/inner.h"

/* ---- waiting ---- */

static void futex_wait(uint32_t *addr, uint32_t val, uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
	syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}

/* The sequentially consistent fences make the pair safe (Dekker): either the waker sees
 * waiting set, or the sleeper's second check sees the waker's change. */
uint32_t wp_prepare(struct waitpoint *w)
{
	uint32_t seq = __atomic_load_n(&w->seq, __ATOMIC_ACQUIRE);
	__atomic_store_n(&w->waiting, 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return seq;
}

void wp_cancel(struct waitpoint *w)
{
	__atomic_store_n(&w->waiting, 0, __ATOMIC_RELAXED);
}

void wp_sleep(struct waitpoint *w, uint32_t seq, uint64_t ns)
{
	futex_wait(&w->seq, seq, ns);
	__atomic_store_n(&w->waiting, 0, __ATOMIC_RELAXED);
}

/* Is someone asleep (or going to sleep) on w? After the waker's change (seq_cst fence). */
bool wp_waiting(struct waitpoint *w)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return __atomic_load_n(&w->waiting, __ATOMIC_RELAXED);
}

void wp_wake(struct waitpoint *w)
{
	__atomic_add_fetch(&w->seq, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &w->seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* ---- records ---- */

static void export_rec(struct meter *m, const struct secho_flow_rec *rec)
{
	for (unsigned i = 0; i < m->cfg->nsinks; i++) {
		const struct secho_flow_sink *s = &m->cfg->sinks[i];
		s->ops->record(s->ctx, rec, m->now_ns);
	}
}

void meter_on_record(void *ctx, const struct secho_flow_rec *rec)
{
	struct worker *w = ctx;
	struct meter *m = w->m;

	if (!m->threaded || w->direct) {
		export_rec(m, rec);
		return;
	}
	struct rec_ring *q = &w->ring;
	uint64_t head = q->head;
	/* acquire: the export thread finished copying the slot before it moved the tail */
	for (unsigned spin = 0; head - __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE) >= q->size;
	     spin++) {
		if (spin < SPIN_CHECKS) {
			cpu_relax();
			continue;
		}
		/* the ring is full: the export thread drains it and wakes this worker */
		uint32_t seq = wp_prepare(&q->space);
		if (head - __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE) < q->size)
			wp_cancel(&q->space);
		else
			wp_sleep(&q->space, seq, SLEEP_NS);
	}
	struct secho_flow_rec *r = &q->r[head & (q->size - 1)];
	*r = *rec;
	if (q->feat && rec->feat_layout) { /* the table's states are valid during emit only */
		/* the live sets' states only, at their places in the ring's area, and of each
		 * what exporters read (a done state may hold no more: sets.h, "Done states"):
		 * the others export as sets that found nothing (secho_feat_sets_state), and the
		 * whole area is kilobytes */
		uint8_t *dst = q->feat + (head & (q->size - 1)) * q->feat_len;
		const struct secho_feat_layout *l = rec->feat_layout;
		for (uint32_t s = rec->feat_live & l->sets; s; s &= s - 1) {
			unsigned i = (unsigned)__builtin_ctz(s);
			if (!rec->feat_sec[i])
				continue;
			memcpy(dst + l->off[i], rec->feat_sec[i], secho_feat_set_export_size(i));
			r->feat_sec[i] = dst + l->off[i];
		}
	}
	/* release: the record's bytes before the new head */
	__atomic_store_n(&q->head, head + 1, __ATOMIC_RELEASE);
}

uint64_t meter_drain(struct meter *m)
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
			/* its feature states point into the ring's area: read before the slot is
			 * given back */
			struct secho_flow_rec rec = q->r[tail & (q->size - 1)];
			export_rec(m, &rec);
			/* release: the record (and its feature copy) was read, the slot may be
			 * written again */
			__atomic_store_n(&q->tail, tail + 1, __ATOMIC_RELEASE);
			total++;
		}
		if (wp_waiting(&q->space))
			wp_wake(&q->space);
	}
	return total;
}
