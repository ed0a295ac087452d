/*
 * src/engine/offload.c - the offload engine: queue pairs (staging buffers, job and
 * completion rings) and the engine thread (see secho/engine.h for the model).
 *
 * Every ring is single-producer/single-consumer: a queue pair's job ring is written by its
 * worker and read by the engine thread, its completion ring the other way round. Each
 * index is written by one side only; the producer publishes an entry with a release store
 * of its head after writing the entry, the consumer reads head with an acquire load before
 * reading the entry (so it sees the entry's bytes, and the staging buffer written before
 * the post), and returns the entry with a release store of its tail.
 *
 * Staging slots are owned by the queue pair's worker (a free stack touched by that thread
 * only); a slot is in flight from slot_get until slot_put. With as many ring entries as
 * slots, neither ring can overflow; a full ring is still checked and reported. A queue
 * pair's producer-side fields, each ring index and the engine's shared words sit on cache
 * lines of their own: two workers never write the same line.
 *
 * The engine thread visits the queue pairs in turn, taking up to 32 jobs from each, polls
 * them all for spin_us after its last job, then sleeps on a futex; a producer wakes it only
 * when it has said it is sleeping (seq_cst fences on both sides close the lost-wakeup
 * window: the sleeper re-checks every ring after announcing). The `sleeping` word is
 * written by the engine thread alone and only read by the workers while it is awake.
 */
#include "secho/engine.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine/offload_backend.h"
#include "secho/aes.h"
#include "secho/cpu.h"
#include "secho/tsc.h"

#define CACHE 64
#define BATCH 32u /* jobs taken from one queue pair per visit */

struct ring {
	alignas(CACHE) _Atomic uint32_t head; /* producer writes */
	alignas(CACHE) _Atomic uint32_t tail; /* consumer writes */
	alignas(CACHE) uint32_t mask;
	struct secho_offload_job *e;
};

struct secho_offload_queue {
	struct ring jobs, done;
	/* The worker's own (producer side), on their own line. */
	alignas(CACHE) uint32_t *free_slots;
	unsigned nfree;
	unsigned inflight;
	/* Read-only after create. */
	alignas(CACHE) struct secho_offload *o;
	uint8_t *staging; /* size * slot_bytes bytes */
};

struct secho_offload {
	const struct secho_offload_ops *ops;
	enum secho_offload_backend backend;
	void *st; /* backend state */
	unsigned size, nq;
	uint64_t spin_cycles;
	uint32_t max_len;              /* payload bytes a slot holds */
	size_t slot_bytes;             /* max_len rounded up to a cache line */
	struct secho_offload_queue *q; /* nq queue pairs */

	alignas(CACHE) _Atomic uint32_t futex_word;
	_Atomic int sleeping;
	_Atomic int stop;
	pthread_t thread;
	bool thread_started;

	/* Written by the engine thread, read by anyone (relaxed: statistics). */
	alignas(CACHE) _Atomic uint64_t s_jobs, s_busy, s_crypto, s_wakeups, s_errors;
};

static const struct secho_offload_ops *ops_of(enum secho_offload_backend b)
{
	switch (b) {
	case SECHO_OFFLOAD_OPENSSL:
		return &secho_offload_openssl_ops;
	case SECHO_OFFLOAD_IPSECMB:
		return &secho_offload_ipsecmb_ops;
	case SECHO_OFFLOAD_AFALG:
		return &secho_offload_afalg_ops;
	}
	return NULL;
}

const char *secho_offload_backend_name(enum secho_offload_backend b)
{
	const struct secho_offload_ops *o = ops_of(b);
	return o ? o->name : "unknown";
}

int secho_offload_backend_parse(const char *s, enum secho_offload_backend *out)
{
	static const enum secho_offload_backend all[] = {
	        SECHO_OFFLOAD_OPENSSL, SECHO_OFFLOAD_IPSECMB, SECHO_OFFLOAD_AFALG};
	for (unsigned i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if (s && strcmp(s, ops_of(all[i])->name) == 0) {
			*out = all[i];
			return 0;
		}
	}
	return -1;
}

bool secho_offload_backend_probe(enum secho_offload_backend b, char *why, size_t whylen)
{
	const struct secho_offload_ops *o = ops_of(b);
	if (!o) {
		snprintf(why, whylen, "unknown offload backend");
		return false;
	}
	return o->probe(why, whylen) == 0;
}

int secho_offload_protect_keys(bool *locked)
{
	return secho_offload_openssl_protect(locked);
}

static int ring_init(struct ring *r, unsigned size)
{
	r->e = calloc(size, sizeof(*r->e));
	r->mask = size - 1;
	atomic_init(&r->head, 0);
	atomic_init(&r->tail, 0);
	return r->e ? 0 : -1;
}

/* Producer: 0, or -1 when full. */
static int ring_push(struct ring *r, const struct secho_offload_job *j)
{
	uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint32_t t = atomic_load_explicit(&r->tail, memory_order_acquire); /* slot free? */
	if (h - t > r->mask)
		return -1;
	r->e[h & r->mask] = *j;
	atomic_store_explicit(&r->head, h + 1, memory_order_release); /* publish entry */
	return 0;
}

/* Consumer: up to max entries. */
static unsigned ring_pop(struct ring *r, struct secho_offload_job *out, unsigned max)
{
	uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
	uint32_t h = atomic_load_explicit(&r->head, memory_order_acquire); /* see entries */
	unsigned n = h - t;
	if (n > max)
		n = max;
	for (unsigned i = 0; i < n; i++)
		out[i] = r->e[(t + i) & r->mask];
	if (n)
		atomic_store_explicit(&r->tail, t + n, memory_order_release); /* entries free */
	return n;
}

static bool ring_empty(struct ring *r)
{
	return atomic_load_explicit(&r->head, memory_order_acquire) ==
	       atomic_load_explicit(&r->tail, memory_order_relaxed);
}

static void futex_wait(_Atomic uint32_t *w, uint32_t expected)
{
	syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *w)
{
	syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Serve up to BATCH jobs of queue pair q: seal each in its staging buffer, return it on
 * q's completion ring. Returns the jobs served. */
static unsigned serve_queue(struct secho_offload *o, struct secho_offload_queue *q)
{
	struct secho_offload_job batch[BATCH];
	uint64_t t0 = secho_rdtsc();
	unsigned n = ring_pop(&q->jobs, batch, BATCH);
	if (!n)
		return 0;
	uint64_t crypto = 0, errors = 0;
	for (unsigned i = 0; i < n; i++) {
		struct secho_offload_job *j = &batch[i];
		uint8_t *buf = q->staging + (size_t)j->slot * o->slot_bytes;
		uint64_t c0 = secho_rdtsc();
		j->status = o->ops->seal(o->st, j->hdr + 4, j->hdr, 16, buf, j->len, j->tag);
		crypto += secho_rdtsc() - c0;
		errors += j->status != 0;
	}
	/* Cannot be full: as many entries as slots. Spin defensively if it is. */
	for (unsigned i = 0; i < n; i++)
		while (ring_push(&q->done, &batch[i]) < 0)
			__builtin_ia32_pause();
	uint64_t t1 = secho_rdtsc();
	atomic_fetch_add_explicit(&o->s_jobs, n, memory_order_relaxed);
	atomic_fetch_add_explicit(&o->s_busy, t1 - t0, memory_order_relaxed);
	atomic_fetch_add_explicit(&o->s_crypto, crypto, memory_order_relaxed);
	if (errors)
		atomic_fetch_add_explicit(&o->s_errors, errors, memory_order_relaxed);
	return n;
}

/* True when no queue pair has a job waiting. */
static bool all_empty(struct secho_offload *o)
{
	for (unsigned i = 0; i < o->nq; i++)
		if (!ring_empty(&o->q[i].jobs))
			return false;
	return true;
}

static void *engine_main(void *arg)
{
	struct secho_offload *o = arg;

	for (;;) {
		unsigned n = 0;
		for (unsigned i = 0; i < o->nq; i++)
			n += serve_queue(o, &o->q[i]);
		if (n)
			continue;
		/* A whole pass found nothing: every job posted before stop was served. */
		if (atomic_load_explicit(&o->stop, memory_order_acquire))
			break;
		/* Poll a while: a wake-up across CPUs costs several microseconds here. */
		uint64_t until = secho_rdtsc() + o->spin_cycles;
		while (all_empty(o) && secho_rdtsc() < until &&
		       !atomic_load_explicit(&o->stop, memory_order_relaxed))
			__builtin_ia32_pause();
		if (!all_empty(o))
			continue;
		uint32_t w = atomic_load(&o->futex_word);
		atomic_store(&o->sleeping, 1);
		atomic_thread_fence(memory_order_seq_cst);
		if (all_empty(o) && !atomic_load(&o->stop)) {
			futex_wait(&o->futex_word, w);
			atomic_fetch_add_explicit(&o->s_wakeups, 1, memory_order_relaxed);
		}
		atomic_store(&o->sleeping, 0);
	}
	return NULL;
}

/* Wake the engine thread if it sleeps (after a post: the fence orders the ring's head
 * store before the load of `sleeping`, against the sleeper's store and re-check). */
static void kick(struct secho_offload *o)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&o->sleeping, memory_order_relaxed)) {
		atomic_fetch_add(&o->futex_word, 1);
		futex_wake(&o->futex_word);
	}
}

/* Allocate queue pair q's rings, free stack and staging. 0 or -1 (errno set). */
static int queue_init(struct secho_offload *o, struct secho_offload_queue *q)
{
	size_t sbytes = (size_t)o->size * o->slot_bytes;
	q->o = o;
	q->staging = mmap(NULL, sbytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (q->staging == MAP_FAILED) {
		q->staging = NULL;
		return -1;
	}
	/* Staging holds plaintext: keep it out of core dumps. */
	madvise(q->staging, sbytes, MADV_DONTDUMP);
	q->free_slots = calloc(o->size, sizeof(uint32_t));
	if (!q->free_slots || ring_init(&q->jobs, o->size) || ring_init(&q->done, o->size)) {
		errno = ENOMEM;
		return -1;
	}
	for (unsigned i = 0; i < o->size; i++)
		q->free_slots[i] = o->size - 1 - i;
	q->nfree = o->size;
	return 0;
}

static void queue_fini(struct secho_offload *o, struct secho_offload_queue *q)
{
	if (q->staging) {
		secho_wipe(q->staging, (size_t)o->size * o->slot_bytes);
		munmap(q->staging, (size_t)o->size * o->slot_bytes);
	}
	if (q->jobs.e)
		secho_wipe(q->jobs.e, o->size * sizeof(*q->jobs.e));
	if (q->done.e)
		secho_wipe(q->done.e, o->size * sizeof(*q->done.e));
	free(q->jobs.e);
	free(q->done.e);
	free(q->free_slots);
}

struct secho_offload *secho_offload_create(const struct secho_offload_cfg *cfg,
                                           const uint8_t key[32], char *err, size_t errlen)
{
	const struct secho_offload_ops *ops = ops_of(cfg->backend);
	unsigned rs = cfg->ring_size;
	if (!ops || !key || rs < 2 || rs > 4096 || (rs & (rs - 1)) || cfg->max_len < 1 ||
	    cfg->max_len > 65535 || cfg->queues < 1 || cfg->queues > SECHO_OFFLOAD_MAX_QUEUES) {
		snprintf(err, errlen,
		         "offload: bad backend, ring size %u (power of two, 2..4096), payload "
		         "size %u (1..65535) or %u queue pairs (1..%u)",
		         rs, (unsigned)cfg->max_len, cfg->queues, SECHO_OFFLOAD_MAX_QUEUES);
		return NULL;
	}
	if (cfg->pin && !secho_cpu_usable(cfg->cpu)) {
		char cpus[64];
		snprintf(err, errlen, "offload: CPU %u is not available to this process (%s)",
		         cfg->cpu, secho_cpu_usable_list(cpus, sizeof(cpus)));
		return NULL;
	}
	if (ops->probe(err, errlen) != 0)
		return NULL;
	struct secho_offload *o =
	        aligned_alloc(CACHE, (sizeof(*o) + CACHE - 1) & ~(size_t)(CACHE - 1));
	if (!o) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	memset(o, 0, sizeof(*o));
	o->ops = ops;
	o->backend = cfg->backend;
	o->size = rs;
	o->spin_cycles = (uint64_t)(secho_tsc_hz() * 1e-6 * cfg->spin_us);
	o->max_len = cfg->max_len;
	o->slot_bytes = ((size_t)cfg->max_len + CACHE - 1) & ~(size_t)(CACHE - 1);
	size_t qbytes = (sizeof(*o->q) * cfg->queues + CACHE - 1) & ~(size_t)(CACHE - 1);
	o->q = aligned_alloc(CACHE, qbytes);
	if (!o->q) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	memset(o->q, 0, qbytes);
	for (o->nq = 0; o->nq < cfg->queues; o->nq++) {
		if (queue_init(o, &o->q[o->nq]) != 0) {
			snprintf(err, errlen, "offload: queue pair %u: %s", o->nq, strerror(errno));
			o->nq++; /* partly set up: freed by destroy */
			goto fail;
		}
	}
	o->st = ops->init(key, cfg->max_len, err, errlen);
	if (!o->st)
		goto fail;
	int rc = pthread_create(&o->thread, NULL, engine_main, o);
	if (rc) {
		snprintf(err, errlen, "offload: engine thread: %s", strerror(rc));
		goto fail;
	}
	o->thread_started = true;
	pthread_setname_np(o->thread, "secho-offload");
	if (cfg->pin && (rc = secho_cpu_pin(o->thread, cfg->cpu)) != 0) {
		snprintf(err, errlen, "offload: cannot pin the engine thread to CPU %u: %s",
		         cfg->cpu, strerror(-rc));
		goto fail;
	}
	return o;
fail:
	secho_offload_destroy(o);
	return NULL;
}

void secho_offload_destroy(struct secho_offload *o)
{
	if (!o)
		return;
	if (o->thread_started) {
		/* The engine finishes every posted job before it looks at stop. */
		atomic_store_explicit(&o->stop, 1, memory_order_release);
		atomic_fetch_add(&o->futex_word, 1);
		futex_wake(&o->futex_word);
		pthread_join(o->thread, NULL);
	}
	if (o->st)
		o->ops->fini(o->st);
	for (unsigned i = 0; o->q && i < o->nq; i++)
		queue_fini(o, &o->q[i]);
	free(o->q);
	free(o);
}

struct secho_offload_queue *secho_offload_queue(struct secho_offload *o, unsigned i)
{
	return i < o->nq ? &o->q[i] : NULL;
}

int secho_offload_slot_get(struct secho_offload_queue *q)
{
	return q->nfree ? (int)q->free_slots[--q->nfree] : -1;
}

void secho_offload_slot_put(struct secho_offload_queue *q, uint32_t slot)
{
	if (q->nfree < q->o->size)
		q->free_slots[q->nfree++] = slot;
}

uint8_t *secho_offload_staging(struct secho_offload_queue *q, uint32_t slot)
{
	return q->staging + (size_t)slot * q->o->slot_bytes;
}

int secho_offload_post(struct secho_offload_queue *q, const struct secho_offload_job *job)
{
	if (job->slot >= q->o->size || job->len > q->o->max_len)
		return -1;
	if (ring_push(&q->jobs, job) < 0)
		return -1;
	q->inflight++;
	kick(q->o);
	return 0;
}

unsigned secho_offload_poll(struct secho_offload_queue *q, struct secho_offload_job *jobs,
                            unsigned max)
{
	if (!q->inflight)
		return 0;
	unsigned n = ring_pop(&q->done, jobs, max);
	q->inflight -= n;
	return n;
}

unsigned secho_offload_inflight(const struct secho_offload_queue *q)
{
	return q->inflight;
}

void secho_offload_stats(const struct secho_offload *o, struct secho_offload_stats *s)
{
	s->jobs = atomic_load_explicit(&o->s_jobs, memory_order_relaxed);
	s->busy_cycles = atomic_load_explicit(&o->s_busy, memory_order_relaxed);
	s->crypto_cycles = atomic_load_explicit(&o->s_crypto, memory_order_relaxed);
	s->wakeups = atomic_load_explicit(&o->s_wakeups, memory_order_relaxed);
	s->errors = atomic_load_explicit(&o->s_errors, memory_order_relaxed);
}

size_t secho_offload_key_state_bytes(const struct secho_offload *o)
{
	return o->ops->key_state_bytes(o->st);
}

size_t secho_offload_staging_bytes(const struct secho_offload *o)
{
	size_t per = (size_t)o->size * o->slot_bytes + 2 * (size_t)o->size * sizeof(*o->q->jobs.e) +
	             (size_t)o->size * sizeof(uint32_t);
	return per * o->nq;
}
