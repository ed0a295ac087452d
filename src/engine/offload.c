/*
 * src/engine/offload.c - the offload engine: staging buffers, job and completion rings,
 * and the engine thread (see secho/engine.h for the model).
 *
 * Rings are single-producer/single-consumer: the job ring is written by the data-path
 * thread and read by the engine thread, the completion ring the other way round. Each
 * index is written by one side only; the producer publishes an entry with a release store
 * of its head after writing the entry, the consumer reads head with an acquire load before
 * reading the entry (so it sees the entry's bytes, and the staging buffer written before
 * the post), and returns the entry with a release store of its tail.
 *
 * Staging slots are owned by the data path (a free stack touched by that thread only);
 * a slot is in flight from slot_get until slot_put. With as many ring entries as slots,
 * neither ring can overflow; a full ring is still checked and reported.
 *
 * The engine thread polls for spin_us after its last job, then sleeps on a futex; the
 * producer wakes it only when it has said it is sleeping (seq_cst fences on both sides
 * close the lost-wakeup window: the sleeper re-checks the ring after announcing).
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
#include "secho/tsc.h"

#define CACHE 64

struct ring {
	alignas(CACHE) _Atomic uint32_t head; /* producer writes */
	alignas(CACHE) _Atomic uint32_t tail; /* consumer writes */
	alignas(CACHE) uint32_t mask;
	struct secho_offload_job *e;
};

struct secho_offload {
	const struct secho_offload_ops *ops;
	enum secho_offload_backend backend;
	void *st; /* backend state */
	unsigned size;
	uint64_t spin_cycles;

	struct ring jobs, done;
	uint8_t *staging;  /* size * slot_bytes bytes */
	uint32_t max_len;  /* payload bytes a slot holds */
	size_t slot_bytes; /* max_len rounded up to a cache line */
	uint32_t *free_slots;
	unsigned nfree;
	unsigned inflight; /* data-path thread only */

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

static void *engine_main(void *arg)
{
	struct secho_offload *o = arg;
	struct secho_offload_job batch[32];

	for (;;) {
		uint64_t t0 = secho_rdtsc();
		unsigned n = ring_pop(&o->jobs, batch, 32);
		if (n) {
			uint64_t crypto = 0, errors = 0;
			for (unsigned i = 0; i < n; i++) {
				struct secho_offload_job *j = &batch[i];
				uint8_t *buf = o->staging + (size_t)j->slot * o->slot_bytes;
				uint64_t c0 = secho_rdtsc();
				j->status = o->ops->seal(o->st, j->hdr + 4, j->hdr, 16, buf, j->len,
				                         j->tag);
				uint64_t c1 = secho_rdtsc();
				j->t_engine = c1 - c0;
				crypto += c1 - c0;
				errors += j->status != 0;
			}
			/* Cannot be full: as many entries as slots. Spin defensively if it is. */
			for (unsigned i = 0; i < n; i++)
				while (ring_push(&o->done, &batch[i]) < 0)
					__builtin_ia32_pause();
			uint64_t t1 = secho_rdtsc();
			/* Share the ring handling evenly among the batch's jobs. */
			atomic_fetch_add_explicit(&o->s_jobs, n, memory_order_relaxed);
			atomic_fetch_add_explicit(&o->s_busy, t1 - t0, memory_order_relaxed);
			atomic_fetch_add_explicit(&o->s_crypto, crypto, memory_order_relaxed);
			if (errors)
				atomic_fetch_add_explicit(&o->s_errors, errors,
				                          memory_order_relaxed);
			continue;
		}
		if (atomic_load_explicit(&o->stop, memory_order_acquire))
			break;
		/* Poll a while: a wake-up across CPUs costs several microseconds here. */
		uint64_t until = secho_rdtsc() + o->spin_cycles;
		while (ring_empty(&o->jobs) && secho_rdtsc() < until &&
		       !atomic_load_explicit(&o->stop, memory_order_relaxed))
			__builtin_ia32_pause();
		if (!ring_empty(&o->jobs))
			continue;
		uint32_t w = atomic_load(&o->futex_word);
		atomic_store(&o->sleeping, 1);
		atomic_thread_fence(memory_order_seq_cst);
		if (ring_empty(&o->jobs) && !atomic_load(&o->stop)) {
			futex_wait(&o->futex_word, w);
			atomic_fetch_add_explicit(&o->s_wakeups, 1, memory_order_relaxed);
		}
		atomic_store(&o->sleeping, 0);
	}
	return NULL;
}

static void kick(struct secho_offload *o)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&o->sleeping, memory_order_relaxed)) {
		atomic_fetch_add(&o->futex_word, 1);
		futex_wake(&o->futex_word);
	}
}

struct secho_offload *secho_offload_create(enum secho_offload_backend backend,
                                           const uint8_t key[32], unsigned ring_size,
                                           unsigned spin_us, uint32_t max_len, char *err,
                                           size_t errlen)
{
	const struct secho_offload_ops *ops = ops_of(backend);
	if (!ops || !key || ring_size < 2 || ring_size > 4096 || (ring_size & (ring_size - 1)) ||
	    max_len < 1 || max_len > 65535) {
		snprintf(err, errlen,
		         "offload: bad backend, ring size %u (power of two, 2..4096) or payload "
		         "size %u (1..65535)",
		         ring_size, (unsigned)max_len);
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
	o->backend = backend;
	o->size = ring_size;
	o->spin_cycles = (uint64_t)(secho_tsc_hz() * 1e-6 * spin_us);
	o->max_len = max_len;
	o->slot_bytes = ((size_t)max_len + CACHE - 1) & ~(size_t)(CACHE - 1);
	size_t sbytes = (size_t)ring_size * o->slot_bytes;
	o->staging = mmap(NULL, sbytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (o->staging == MAP_FAILED) {
		o->staging = NULL;
		snprintf(err, errlen, "offload: staging buffers: %s", strerror(errno));
		goto fail;
	}
	/* Staging holds plaintext: keep it out of core dumps. */
	madvise(o->staging, sbytes, MADV_DONTDUMP);
	o->free_slots = calloc(ring_size, sizeof(uint32_t));
	if (!o->free_slots || ring_init(&o->jobs, ring_size) || ring_init(&o->done, ring_size)) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (unsigned i = 0; i < ring_size; i++)
		o->free_slots[i] = ring_size - 1 - i;
	o->nfree = ring_size;
	o->st = ops->init(key, max_len, err, errlen);
	if (!o->st)
		goto fail;
	int rc = pthread_create(&o->thread, NULL, engine_main, o);
	if (rc) {
		snprintf(err, errlen, "offload: engine thread: %s", strerror(rc));
		goto fail;
	}
	o->thread_started = true;
	pthread_setname_np(o->thread, "secho-offload");
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
	if (o->staging) {
		secho_wipe(o->staging, (size_t)o->size * o->slot_bytes);
		munmap(o->staging, (size_t)o->size * o->slot_bytes);
	}
	if (o->jobs.e)
		secho_wipe(o->jobs.e, o->size * sizeof(*o->jobs.e));
	if (o->done.e)
		secho_wipe(o->done.e, o->size * sizeof(*o->done.e));
	free(o->jobs.e);
	free(o->done.e);
	free(o->free_slots);
	free(o);
}

int secho_offload_slot_get(struct secho_offload *o)
{
	return o->nfree ? (int)o->free_slots[--o->nfree] : -1;
}

void secho_offload_slot_put(struct secho_offload *o, uint32_t slot)
{
	if (o->nfree < o->size)
		o->free_slots[o->nfree++] = slot;
}

uint8_t *secho_offload_staging(struct secho_offload *o, uint32_t slot)
{
	return o->staging + (size_t)slot * o->slot_bytes;
}

int secho_offload_post(struct secho_offload *o, const struct secho_offload_job *job)
{
	if (job->slot >= o->size || job->len > o->max_len)
		return -1;
	if (ring_push(&o->jobs, job) < 0)
		return -1;
	o->inflight++;
	kick(o);
	return 0;
}

unsigned secho_offload_poll(struct secho_offload *o, struct secho_offload_job *jobs, unsigned max)
{
	if (!o->inflight)
		return 0;
	unsigned n = ring_pop(&o->done, jobs, max);
	o->inflight -= n;
	return n;
}

uint32_t secho_offload_max_len(const struct secho_offload *o)
{
	return o->max_len;
}

unsigned secho_offload_inflight(const struct secho_offload *o)
{
	return o->inflight;
}

void secho_offload_stats(const struct secho_offload *o, struct secho_offload_stats *s)
{
	s->jobs = atomic_load_explicit(&o->s_jobs, memory_order_relaxed);
	s->busy_cycles = atomic_load_explicit(&o->s_busy, memory_order_relaxed);
	s->crypto_cycles = atomic_load_explicit(&o->s_crypto, memory_order_relaxed);
	s->wakeups = atomic_load_explicit(&o->s_wakeups, memory_order_relaxed);
	s->errors = atomic_load_explicit(&o->s_errors, memory_order_relaxed);
}

enum secho_offload_backend secho_offload_backend_of(const struct secho_offload *o)
{
	return o->backend;
}

size_t secho_offload_key_state_bytes(const struct secho_offload *o)
{
	return o->ops->key_state_bytes(o->st);
}

size_t secho_offload_staging_bytes(const struct secho_offload *o)
{
	return (size_t)o->size * o->slot_bytes + 2 * (size_t)o->size * sizeof(*o->jobs.e) +
	       (size_t)o->size * sizeof(uint32_t);
}
