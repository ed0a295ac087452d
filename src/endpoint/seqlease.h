/*
 * src/endpoint/seqlease.h - sequence numbers for the data path, on top of the durable
 * allocator in src/engine/seqstate.c.
 *
 * A worker holds a lease [next, end) of numbers it hands out in increasing order without
 * any synchronisation; when it runs out it refills from the shared allocator, which only
 * returns numbers that are covered by a window already reserved on disk (fsync'd). Every
 * worker has its own lease and refills from the same allocator (one atomic
 * compare-and-swap per SECHO_SEQLEASE_BLOCK numbers): no number is ever in two leases, so
 * none is used twice across workers, engines, restarts and crashes (docs/PROTOCOL.md,
 * "Sequence numbers").
 */
#ifndef SECHO_ENDPOINT_SEQLEASE_H
#define SECHO_ENDPOINT_SEQLEASE_H

#include <stddef.h>
#include <stdint.h>

struct secho_seqlease;

/* Numbers a lease holds after a refill: one refill per 256 packets per worker. */
#define SECHO_SEQLEASE_BLOCK 256

/* A worker's lease: numbers next .. end - 1 are its own. Start with {0, 0}. */
struct secho_lease {
	uint64_t next, end;
};

/* Open the state for key_id (and instance of a shared key; 0 when not shared) at path
 * (NULL: the default under /var/lib/secho/), reserving `window` numbers per state write (0:
 * SECHO_SEQ_DEFAULT_WINDOW), and start reserving ahead in the background (the data path
 * never waits for the disk). NULL with a reason in err when the state cannot be kept
 * safely. When the state was found to have gone backwards (restored from a backup), err
 * holds a warning on success (else it is empty). */
struct secho_seqlease *secho_seqlease_open(const char *path, uint16_t key_id, uint32_t instance,
                                           uint64_t window, char *err, size_t errlen);
/* Give l a new block of SECHO_SEQLEASE_BLOCK numbers. Thread-safe (each worker its own
 * lease). 0, -EAGAIN when the next window is not durable yet (nothing taken: the packet is
 * dropped, the reservation is under way), or the sticky -errno of a failed reservation.
 * Never waits. */
int secho_seqlease_refill(struct secho_seqlease *s, struct secho_lease *l);
/* 0 while the state can be advanced; once a reservation failed, its -errno and a
 * one-line reason (naming the file) in err. The endpoint must then stop. */
int secho_seqlease_failed(struct secho_seqlease *s, char *err, size_t errlen);
/* The next number the shared counter would hand out. */
uint64_t secho_seqlease_next(struct secho_seqlease *s);
/* The highest number reserved on disk (every number handed out is below it). */
uint64_t secho_seqlease_high_water(struct secho_seqlease *s);
/* Flush and close; 0 or -1 with a reason. */
int secho_seqlease_close(struct secho_seqlease *s, char *err, size_t errlen);

#endif
