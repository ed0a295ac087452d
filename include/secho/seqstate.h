/*
 * secho/seqstate.h - sequence numbers that are never reused: per key id, across both
 * engines, all workers, restarts and crashes (docs/PROTOCOL.md, "Sequence numbers").
 *
 * The GCM IV is salt || sequence number, so a reused number under the same key breaks
 * GCM's confidentiality and authenticity (SP 800-38D section 8). Rules:
 *  - one shared counter per key id; workers take blocks of numbers from it
 *    (secho_seq_take(); the endpoint's workers through their leases, src/endpoint/seqlease.h),
 *    so numbers are unique across workers and increasing within each worker (not globally
 *    in send order);
 *  - the state file holds the reserved high-water mark H: every number ever handed out is
 *    <= H. A window of numbers is reserved (H raised, the file replaced durably: temporary
 *    file, fsync, rename, fsync of the directory) BEFORE any number from it is handed out;
 *  - on start the state is read and numbering begins ABOVE H (numbers reserved but unused
 *    before a crash are skipped, never reused), and never below the wall-clock floor
 *    (CLOCK_REALTIME in microseconds times 4096: a lost, restored or copied state cannot
 *    repeat numbers unless the clock was set back); the first window is reserved at open,
 *    so a state that cannot be written is found before the endpoint starts;
 *  - the lock file holds the last reserved record too (not synced: a hint); a state below
 *    it went backwards (restored from a backup, copied): open says so and starts above it;
 *  - with a shared key (several endpoints at once) each endpoint has its own instance id
 *    and its own state, which names the instance; another instance's state is refused;
 *  - usable numbers are 1 .. SECHO_SEQ_LAST; then the space is exhausted and the key must
 *    be replaced;
 *  - with secho_seq_reserve_ahead(), a thread of its own reserves the next window while
 *    half of the current one is still unused, so takers never wait for the disk: a taker
 *    that finds no durable number left gets -EAGAIN at once, never a number that is not on
 *    disk yet;
 *  - a process holds an exclusive flock on "<state>.lock" while it uses the state.
 *
 * State file: one line, "secho-seq 1 key-id K reserved H crc32 C\n" (for an instance of a
 * shared key "secho-seq 1 key-id K instance I reserved H crc32 C\n"), K, I and H decimal, C
 * the CRC-32 (IEEE 802.3, as zlib's crc32()) of the bytes before " crc32", 8 lower-case hex
 * digits. Mode 0600, owned by the running user.
 */
#ifndef SECHO_SEQSTATE_H
#define SECHO_SEQSTATE_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SECHO_SEQ_DEFAULT_DIR    "/var/lib/secho"
#define SECHO_SEQ_DEFAULT_WINDOW (1u << 20) /* ~1 state write per second at 1 Mpps */
#define SECHO_SEQ_LAST           (UINT64_MAX - 1)
#define SECHO_SEQ_PATH_MAX       4096

/* Shared allocator state. Caller-owned; the fields are private (but went_back_*, which
 * open sets for the caller to report). One per key id and instance. */
struct secho_seqstate {
	_Atomic uint64_t next;    /* next number to hand out */
	_Atomic uint64_t durable; /* H: reserved on disk; numbers <= H may be handed out */
	_Atomic int failed;       /* sticky -errno once a reservation failed */
	pthread_mutex_t lock;     /* serialises synchronous reservations (file writes) */
	_Atomic int kicked;       /* a taker asked the reservation thread for a window (futex) */
	_Atomic int stop;         /* the reservation thread must exit */
	pthread_t reserver;
	bool ahead; /* the reservation thread runs: takers never write the state */
	uint64_t window, low_water;
	uint64_t went_back_from, went_back_to; /* open: the state went backwards (0: it did not) */
	uint32_t instance;                     /* 0: the key is not shared */
	uint16_t key_id;
	int lock_fd, dir_fd;
	char path[SECHO_SEQ_PATH_MAX];
	char tmp[SECHO_SEQ_PATH_MAX + 8];
};

/* "/var/lib/secho/seq-<key_id>.state" into buf. Returns buf. */
char *secho_seq_default_path(uint16_t key_id, char *buf, size_t n);
/* The same for an instance of a shared key: ".../seq-<key_id>-<instance>.state" (instance 0:
 * as secho_seq_default_path). Returns buf. */
char *secho_seq_default_path_for(uint16_t key_id, uint32_t instance, char *buf, size_t n);

/*
 * Open (or create, when the file does not exist but its directory does) the state at path
 * (NULL: the default path) for key_id, take its lock, and reserve the first window
 * (window numbers; 0 means SECHO_SEQ_DEFAULT_WINDOW). Returns 0, or -errno with a clear
 * message in err: the file is corrupt or its checksum does not match (-EINVAL), belongs to
 * another key id (-EINVAL), is writable by group/others or owned by someone else (-EPERM),
 * is locked by another process (-EBUSY), the space is exhausted (-ENOSPC), or the state
 * cannot be written and synced (the errno of the failing call).
 */
int secho_seq_open(struct secho_seqstate *s, const char *path, uint16_t key_id, uint64_t window,
                   char *err, size_t errlen);
/* secho_seq_open for instance `instance` (1..2^32-1) of a shared key (0: not shared, as
 * secho_seq_open): the record names the instance, and a record of another instance (or of
 * the unshared key) is refused (-EINVAL). After either open, s->went_back_from is non-zero
 * when the state was found below the lock file's hint (then numbering starts above the
 * hint, and went_back_to holds the state's mark, 0 when there was no state). */
int secho_seq_open_instance(struct secho_seqstate *s, const char *path, uint16_t key_id,
                            uint32_t instance, uint64_t window, char *err, size_t errlen);

/*
 * Start the reservation thread (call once, after open): from now on the next window is
 * reserved in the background whenever fewer than half a window of durable numbers is left,
 * and secho_seq_take() never writes the state itself. A reservation that fails stops the
 * thread and makes every later take fail (sticky; secho_seq_failed() says so). Returns 0,
 * or -errno when the thread cannot be created (then takes keep reserving themselves).
 */
int secho_seq_reserve_ahead(struct secho_seqstate *s);

/*
 * Take a block of n >= 1 consecutive numbers: *first .. *first + n - 1, all durably
 * reserved. Thread-safe; blocks taken by one thread are increasing. Returns 0, -ENOSPC
 * (space exhausted), -EINVAL (n == 0), or the sticky -errno of a failed reservation: once
 * the state could not be saved, every later call fails and the endpoint must stop.
 * Without the reservation thread, a block beyond the reserved window reserves the next
 * one first (the caller waits for the write). With it, the call never waits: when the
 * numbers reserved so far are used up it returns -EAGAIN (nothing taken; the thread is
 * already writing the next window).
 */
int secho_seq_take(struct secho_seqstate *s, uint64_t n, uint64_t *first);

/* The sticky -errno of a failed reservation, 0 while none has failed. Cheap (one atomic
 * load): the run loop polls it to stop promptly. */
int secho_seq_failed(struct secho_seqstate *s);

/* The reserved high-water mark H (durable on disk). */
uint64_t secho_seq_high_water(struct secho_seqstate *s);
/* The next number the shared counter would hand out. */
uint64_t secho_seq_peek_next(struct secho_seqstate *s);

/* Stop the reservation thread, release the lock and descriptors. Numbers reserved but
 * unused are skipped next time. */
void secho_seq_close(struct secho_seqstate *s);

/* Parse the text of a state file (len bytes, the format above) for key_id and instance (0:
 * an unshared key), as open() does: returns 0 with the reserved mark in *hwm, or -EINVAL
 * with the reason (naming path) in err. Exposed for the parser's fuzz target. */
int secho_seq_parse(const char *buf, size_t len, const char *path, uint16_t key_id,
                    uint32_t instance, uint64_t *hwm, char *err, size_t errlen);

/* Fault injection for tests: the function used instead of fsync(2) (NULL: fsync). */
void secho_seq_set_sync_hook(int (*fn)(int fd));

#ifdef __cplusplus
}
#endif
#endif
