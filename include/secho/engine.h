/*
 * secho/engine.h - the two crypto engines of the endpoint.
 *
 * Streaming engine (UDP port 4000): our own AES-256-GCM (batch API), run in the data-path
 * thread, in place in the packet buffer - the analog of the seed's fully pipelined fabric
 * core. It needs no state of its own beyond the shared secho_gcm_key.
 *
 * Offload engine (UDP port 4001): a transaction-based service - the analog of the seed's
 * hardened PMC engine behind its bridge. The data path copies the payload into a staging
 * buffer (sized for the largest payload: 2048 bytes at MTU 1500, as the seed's BRAMs),
 * posts a job descriptor on a bounded ring to a separate engine thread, which runs a vetted
 * library backend (OpenSSL EVP, Intel ipsec-mb, or the kernel's AF_ALG gcm(aes)) and
 * returns the job on a completion ring; the data path then copies the ciphertext out,
 * rebuilds the frame and sends it. Same key, same IV scheme, same wire format:
 * byte-identical output to the streaming one.
 *
 * One engine serves several data-path workers through queue pairs, as a hardware engine
 * serves its host through several DMA queues: each worker owns one queue pair (a job ring,
 * a completion ring and the staging buffers behind them), which it alone produces into and
 * consumes from, so every ring has exactly one producer and one consumer and nothing on a
 * worker's path is shared with another worker. The engine thread takes jobs from every
 * queue pair in turn (up to 32 from each) and answers each on its own completion ring.
 * (A single ring with several producers would need a compare-and-swap on a shared index
 * per job, moving that cache line between the workers' CPUs for every packet, and the
 * completions would have to be sorted back to their workers.)
 */
#ifndef SECHO_ENGINE_H
#define SECHO_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SECHO_OFFLOAD_STAGING 2048u /* staging buffer bytes at MTU 1500 (as the seed's BRAMs) */

enum secho_offload_backend {
	SECHO_OFFLOAD_OPENSSL = 0,
	SECHO_OFFLOAD_IPSECMB = 1,
	SECHO_OFFLOAD_AFALG = 2,
};

/* "openssl", "ipsec-mb", "afalg". */
const char *secho_offload_backend_name(enum secho_offload_backend b);
int secho_offload_backend_parse(const char *s, enum secho_offload_backend *out);
/* Whether a backend can run here; when not, why (one line into why). */
bool secho_offload_backend_probe(enum secho_offload_backend b, char *why, size_t whylen);

/* A job descriptor: what crosses the "bridge". */
struct secho_offload_job {
	uint32_t slot;   /* staging buffer index (from secho_offload_slot_get) */
	uint32_t len;    /* payload bytes in the staging buffer, <= the engine's max_len */
	uint8_t hdr[16]; /* secure header: the AAD; IV = hdr[4..16) */
	uint8_t tag[16]; /* written by the engine */
	int status;      /* 0, or a negative error from the backend */
	uint64_t cookie; /* the caller's, returned unchanged */
};

struct secho_offload_stats {
	uint64_t jobs;          /* completed */
	uint64_t busy_cycles;   /* engine thread, from dequeue to completion post */
	uint64_t crypto_cycles; /* inside the backend's encrypt call */
	uint64_t wakeups;       /* times the engine thread was woken from sleep */
	uint64_t errors;
};

#define SECHO_OFFLOAD_MAX_QUEUES 64u

struct secho_offload_cfg {
	enum secho_offload_backend backend;
	unsigned queues; /* queue pairs, one per producing thread: 1..SECHO_OFFLOAD_MAX_QUEUES */
	unsigned
	        ring_size; /* jobs per queue pair: power of two, 2..4096; as many staging buffers */
	unsigned spin_us;  /* the engine thread polls its empty rings this long before it sleeps
	                    * (0: it sleeps at once) */
	uint32_t max_len;  /* payload bytes a staging buffer holds, 1..65535
	                    * (SECHO_OFFLOAD_STAGING - 16 suits MTU 1500) */
	bool pin;          /* pin the engine thread to `cpu` */
	unsigned cpu;
};

struct secho_offload;       /* the engine: its thread, backend, key and queue pairs */
struct secho_offload_queue; /* one queue pair: owned by one producing thread */

/*
 * Keep every backend's key state in locked memory excluded from core dumps, in this
 * process: OpenSSL EVP's contexts (their key schedules) come from a pool of such pages
 * (OpenSSL's allocator hooks, used only while a key is set up); ipsec-mb's expanded key
 * is always allocated there; AF_ALG's lies in the kernel. Call once, before anything in
 * the process uses OpenSSL (its hooks can only be set before its first allocation).
 * Returns 0 with *locked saying whether the pages could be locked (RLIMIT_MEMLOCK), -EBUSY
 * when OpenSSL has already allocated memory (its key state would be in the heap), or
 * -ENOMEM.
 */
int secho_offload_protect_keys(bool *locked);

/*
 * Start an engine thread as cfg says, with key (32 bytes; copied, wiped on destroy).
 * Returns NULL with a one-line reason in err on failure (a bad configuration, a backend
 * that cannot run here, a CPU that cannot be pinned to, no memory).
 */
struct secho_offload *secho_offload_create(const struct secho_offload_cfg *cfg,
                                           const uint8_t key[32], char *err, size_t errlen);
/* Drain (every posted job completes), stop the thread, wipe the key, free. NULL is ok. */
void secho_offload_destroy(struct secho_offload *o);
/* Queue pair i (0 <= i < cfg.queues); NULL when out of range. */
struct secho_offload_queue *secho_offload_queue(struct secho_offload *o, unsigned i);

/* Producer side: each queue pair is used by one thread only (its worker). */
/* A free staging slot of q, or -1 when all are in flight (the caller drops and counts). */
int secho_offload_slot_get(struct secho_offload_queue *q);
uint8_t *secho_offload_staging(struct secho_offload_queue *q, uint32_t slot);
/* Post a job (its slot filled) on q. 0, or -1 when the ring is full (cannot happen while
 * slots and ring entries are equal in number; checked anyway) or the job is longer than
 * max_len or names no slot of q. Wakes the engine when it sleeps. */
int secho_offload_post(struct secho_offload_queue *q, const struct secho_offload_job *job);
/* Jobs of q completed, up to max, in the order they were posted. The caller copies the
 * ciphertext out of the staging buffer and then returns the slot with
 * secho_offload_slot_put(). */
unsigned secho_offload_poll(struct secho_offload_queue *q, struct secho_offload_job *jobs,
                            unsigned max);
void secho_offload_slot_put(struct secho_offload_queue *q, uint32_t slot);
/* Jobs posted on q and not yet polled. */
unsigned secho_offload_inflight(const struct secho_offload_queue *q);

void secho_offload_stats(const struct secho_offload *o, struct secho_offload_stats *s);
/* Bytes of key state the backend holds, and of staging buffers + rings (all queue pairs). */
size_t secho_offload_key_state_bytes(const struct secho_offload *o);
size_t secho_offload_staging_bytes(const struct secho_offload *o);

#ifdef __cplusplus
}
#endif
#endif
