/*
 * src/endpoint/seqlease.h - sequence numbers for the data path, on top of the durable
 * allocator in src/engine/seqstate.c.
 *
 * A worker holds a lease [next, end) of numbers it hands out in increasing order without
 * any synchronisation; when it runs out it refills from the shared allocator, which only
 * returns numbers that are covered by a window already reserved on disk (fsync'd).
 */
#ifndef SECHO_ENDPOINT_SEQLEASE_H
#define SECHO_ENDPOINT_SEQLEASE_H

#include <stddef.h>
#include <stdint.h>

struct secho_seqlease;

/* Open the state for key_id (and instance of a shared key; 0 when not shared) at path
 * (NULL: the default under /var/lib/secho/), reserving `window` numbers per state write (0:
 * SECHO_SEQ_DEFAULT_WINDOW), and start reserving ahead in the background (the data path
 * never waits for the disk). NULL with a reason in err when the state cannot be kept
 * safely. When the state was found to have gone backwards (restored from a backup), err
 * holds a warning on success (else it is empty). */
struct secho_seqlease *secho_seqlease_open(const char *path, uint16_t key_id, uint32_t instance,
                                           uint64_t window, char *err, size_t errlen);
/* A new lease; 0, -EAGAIN when the next window is not durable yet (the packet is dropped,
 * the reservation is under way), or the sticky -errno of a failed reservation. Never
 * waits. */
int secho_seqlease_refill(struct secho_seqlease *s, uint64_t *next, uint64_t *end);
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
