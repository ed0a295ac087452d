/*
 * src/engine/seqstate.c - durable, thread-safe sequence number allocation.
 *
 * Rules and file format: include/secho/seqstate.h. Memory ordering: `durable` is stored
 * with release after the file write has been synced and loaded with acquire by takers,
 * so a taker that sees durable >= its block's end knows the reservation is on disk.
 * `next` only needs atomicity (a CAS loop, so it can never wrap past SECHO_SEQ_LAST).
 *
 * Reserving ahead (secho_seq_reserve_ahead): the reservation thread sleeps on a futex until
 * a taker sets `kicked` (it does when fewer than low_water = window / 2 durable numbers
 * remain after its block, or when none remain for it), then raises H by a window at a time
 * until low_water numbers are free again. Takers then never advance `next` beyond H (the
 * CAS loop compares with the H it loaded), so a number is still never handed out before
 * its window is on disk. A kick is an atomic exchange and, once per window, a futex wake:
 * takers (the endpoint's workers) share no lock and wait for no disk. The thread clears
 * `kicked` before it looks at the counters, so a kick that arrives while it writes is not
 * lost. The mutex serialises the writes of takers without the thread (synchronous mode).
 */
#include <secho/seqstate.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int (*sync_hook)(int fd);

void secho_seq_set_sync_hook(int (*fn)(int fd))
{
	sync_hook = fn;
}

static int do_sync(int fd)
{
	return sync_hook ? sync_hook(fd) : fsync(fd);
}

/* Error text into the caller's buffer. A macro rather than a va_list function: clang-tidy
 * 14's va_list checker reports false positives across translation units. */
#define set_err(err, errlen, ...)                                                                  \
	do {                                                                                       \
		if ((err) && (errlen))                                                             \
			snprintf((err), (errlen), __VA_ARGS__);                                    \
	} while (0)

/* CRC-32, IEEE 802.3 polynomial (reflected 0xedb88320), init and final xor ~0. */
static uint32_t crc32_ieee(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint32_t c = 0xffffffffu;
	while (n--) {
		c ^= *b++;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
	}
	return ~c;
}

char *secho_seq_default_path(uint16_t key_id, char *buf, size_t n)
{
	return secho_seq_default_path_for(key_id, 0, buf, n);
}

char *secho_seq_default_path_for(uint16_t key_id, uint32_t instance, char *buf, size_t n)
{
	if (instance)
		snprintf(buf, n, "%s/seq-%u-%" PRIu32 ".state", SECHO_SEQ_DEFAULT_DIR,
		         (unsigned)key_id, instance);
	else
		snprintf(buf, n, "%s/seq-%u.state", SECHO_SEQ_DEFAULT_DIR, (unsigned)key_id);
	return buf;
}

/* Format the record for (key_id, instance, hwm) into buf; returns its length. */
static int format_record(char *buf, size_t n, uint16_t key_id, uint32_t instance, uint64_t hwm)
{
	int l = instance ? snprintf(buf, n,
	                            "secho-seq 1 key-id %u instance %" PRIu32 " reserved %" PRIu64,
	                            (unsigned)key_id, instance, hwm)
	                 : snprintf(buf, n, "secho-seq 1 key-id %u reserved %" PRIu64,
	                            (unsigned)key_id, hwm);
	uint32_t c = crc32_ieee(buf, (size_t)l);
	return l + snprintf(buf + l, n - (size_t)l, " crc32 %08" PRIx32 "\n", c);
}

/* Strict decimal (no sign, no leading zeros) at *p, advancing it. */
static bool parse_u64(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	if (s >= end || *s < '0' || *s > '9')
		return false;
	if (*s == '0' && s + 1 < end && s[1] >= '0' && s[1] <= '9')
		return false;
	while (s < end && *s >= '0' && *s <= '9') {
		unsigned d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
		s++;
	}
	*p = s;
	*out = v;
	return true;
}

static bool expect(const char **p, const char *end, const char *lit)
{
	size_t l = strlen(lit);
	if ((size_t)(end - *p) < l || memcmp(*p, lit, l) != 0)
		return false;
	*p += l;
	return true;
}

/* Parse a record for (key_id, instance). Returns 0, or -EINVAL with the reason in err. */
static int parse_record(const char *buf, size_t len, const char *path, uint16_t key_id,
                        uint32_t instance, uint64_t *hwm, char *err, size_t errlen)
{
	const char *p = buf, *end = buf + len;
	uint64_t kid, inst = 0, h;
	if (!expect(&p, end, "secho-seq 1 key-id ") || !parse_u64(&p, end, &kid) ||
	    (expect(&p, end, " instance ") &&
	     (!parse_u64(&p, end, &inst) || inst == 0 || inst > UINT32_MAX)) ||
	    !expect(&p, end, " reserved ") || !parse_u64(&p, end, &h)) {
		set_err(err, errlen, "%s: corrupt (not a secho sequence state record)", path);
		return -EINVAL;
	}
	size_t body = (size_t)(p - buf);
	unsigned long crc;
	char hex[9];
	if (!expect(&p, end, " crc32 ") || end - p != 9 || p[8] != '\n') {
		set_err(err, errlen, "%s: corrupt (bad checksum field or trailing data)", path);
		return -EINVAL;
	}
	memcpy(hex, p, 8);
	hex[8] = 0;
	for (int i = 0; i < 8; i++) {
		if (!((hex[i] >= '0' && hex[i] <= '9') || (hex[i] >= 'a' && hex[i] <= 'f'))) {
			set_err(err, errlen, "%s: corrupt (bad checksum digits)", path);
			return -EINVAL;
		}
	}
	crc = strtoul(hex, NULL, 16);
	if ((uint32_t)crc != crc32_ieee(buf, body)) {
		set_err(err, errlen,
		        "%s: checksum mismatch: the state is damaged; the reserved mark cannot "
		        "be trusted (generate a new key and start a new state)",
		        path);
		return -EINVAL;
	}
	if (kid != key_id) {
		set_err(err, errlen, "%s: belongs to key id %" PRIu64 ", not key id %u", path, kid,
		        (unsigned)key_id);
		return -EINVAL;
	}
	if (inst != instance) {
		/* Another endpoint's state (copied?): its numbers say nothing about ours. */
		set_err(err, errlen,
		        "%s: belongs to %s%" PRIu64 " of key id %u, not to %s%" PRIu32
		        " (a state copied from another endpoint?)",
		        path, inst ? "instance " : "the unshared key", inst ? inst : 0,
		        (unsigned)key_id, instance ? "instance " : "the unshared key",
		        instance ? instance : 0);
		return -EINVAL;
	}
	*hwm = h;
	return 0;
}

/* Contract: secho/seqstate.h. */
int secho_seq_parse(const char *buf, size_t len, const char *path, uint16_t key_id,
                    uint32_t instance, uint64_t *hwm, char *err, size_t errlen)
{
	return parse_record(buf, len, path, key_id, instance, hwm, err, errlen);
}

/* The hint: the same record in the lock file, rewritten (not synced) after every durable
 * reservation. A state file found below it went backwards (restored from a backup, copied
 * over); see secho_seq_open. Best effort: can't fail. */
static void write_hint(struct secho_seqstate *s, const char *rec, int n)
{
	if (pwrite(s->lock_fd, rec, (size_t)n, 0) == n)
		(void)!ftruncate(s->lock_fd, n);
}

/* Durably replace the state with hwm. Caller holds s->lock (or is open()). */
static int write_state(struct secho_seqstate *s, uint64_t hwm)
{
	char rec[128];
	int n = format_record(rec, sizeof(rec), s->key_id, s->instance, hwm);
	/* O_NONBLOCK: a FIFO planted at the temporary name fails (ENXIO) instead of waiting
	 * for a reader; anything but a regular file is refused. */
	int fd = open(s->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
	              0600);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	int rc = 0;
	ssize_t w;
	do
		w = write(fd, rec, (size_t)n);
	while (w < 0 && errno == EINTR);
	if (w != n)
		rc = w < 0 ? -errno : -EIO;
	if (!rc && fchmod(fd, 0600) != 0)
		rc = -errno;
	if (!rc && do_sync(fd) != 0)
		rc = errno ? -errno : -EIO;
	if (close(fd) != 0 && !rc)
		rc = -errno;
	if (!rc && rename(s->tmp, s->path) != 0)
		rc = -errno;
	if (!rc && do_sync(s->dir_fd) != 0)
		rc = errno ? -errno : -EIO;
	if (rc)
		unlink(s->tmp);
	else
		write_hint(s, rec, n);
	return rc;
}

int secho_seq_open(struct secho_seqstate *s, const char *path, uint16_t key_id, uint64_t window,
                   char *err, size_t errlen)
{
	return secho_seq_open_instance(s, path, key_id, 0, window, err, errlen);
}

/* The wall-clock floor: CLOCK_REALTIME in microseconds times 4096 (0 if the clock is
 * unreadable). See secho_seq_open_instance. */
static uint64_t clock_floor(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_REALTIME, &ts) != 0 || ts.tv_sec <= 0)
		return 0;
	return ((uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u) << 12;
}

int secho_seq_open_instance(struct secho_seqstate *s, const char *path, uint16_t key_id,
                            uint32_t instance, uint64_t window, char *err, size_t errlen)
{
	char dflt[SECHO_SEQ_PATH_MAX], dbuf[SECHO_SEQ_PATH_MAX], lockp[SECHO_SEQ_PATH_MAX + 8];
	int rc;

	memset(s, 0, sizeof(*s));
	s->lock_fd = s->dir_fd = -1;
	s->instance = instance;
	if (!path)
		path = secho_seq_default_path_for(key_id, instance, dflt, sizeof(dflt));
	if (!*path || strlen(path) >= sizeof(s->path) - 1) {
		set_err(err, errlen, "sequence state path is empty or too long");
		return -ENAMETOOLONG;
	}
	s->window = window ? window : SECHO_SEQ_DEFAULT_WINDOW;
	s->key_id = key_id;
	snprintf(s->path, sizeof(s->path), "%s", path);
	snprintf(s->tmp, sizeof(s->tmp), "%s.tmp", path);
	snprintf(lockp, sizeof(lockp), "%s.lock", path);
	snprintf(dbuf, sizeof(dbuf), "%s", path);
	const char *dir = dirname(dbuf);

	s->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->dir_fd < 0) {
		rc = -errno;
		set_err(err, errlen, "%s: cannot open the state directory %s: %s", path, dir,
		        strerror(errno));
		goto fail;
	}
	s->lock_fd = open(lockp, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
	if (s->lock_fd < 0) {
		rc = -errno;
		set_err(err, errlen, "%s: cannot create the lock file %s: %s", path, lockp,
		        strerror(errno));
		goto fail;
	}
	if (flock(s->lock_fd, LOCK_EX | LOCK_NB) != 0) {
		rc = errno == EWOULDBLOCK ? -EBUSY : -errno;
		set_err(err, errlen, "%s: in use by another process (lock %s is held)", path,
		        lockp);
		goto fail;
	}

	uint64_t hwm = 0;
	/* O_NONBLOCK: opening a FIFO must not wait for a writer (fstat refuses it below). */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0 && errno != ENOENT) {
		rc = -errno;
		set_err(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		goto fail;
	}
	if (fd >= 0) {
		struct stat st;
		char buf[256];
		ssize_t n;
		if (fstat(fd, &st) != 0) {
			rc = -errno;
			close(fd);
			set_err(err, errlen, "%s: fstat: %s", path, strerror(-rc));
			goto fail;
		}
		if (!S_ISREG(st.st_mode)) {
			close(fd);
			rc = -EINVAL;
			set_err(err, errlen, "%s: not a regular file", path);
			goto fail;
		}
		if (st.st_mode & 022) {
			close(fd);
			rc = -EPERM;
			set_err(err, errlen,
			        "%s: permissions %04o are too open (group or others may write and "
			        "roll the counter back); run chmod 600 on it",
			        path, (unsigned)(st.st_mode & 07777));
			goto fail;
		}
		if (st.st_uid != geteuid()) {
			close(fd);
			rc = -EPERM;
			set_err(err, errlen, "%s: owned by uid %u, not by this user (uid %u)", path,
			        (unsigned)st.st_uid, (unsigned)geteuid());
			goto fail;
		}
		do
			n = read(fd, buf, sizeof(buf));
		while (n < 0 && errno == EINTR);
		close(fd);
		if (n < 0) {
			rc = -errno;
			set_err(err, errlen, "%s: read: %s", path, strerror(errno));
			goto fail;
		}
		if (n == 0 || (size_t)n == sizeof(buf)) {
			rc = -EINVAL;
			set_err(err, errlen, "%s: corrupt (%s)", path,
			        n ? "too long for a state record" : "empty file");
			goto fail;
		}
		rc = parse_record(buf, (size_t)n, path, key_id, instance, &hwm, err, errlen);
		if (rc)
			goto fail;
	}
	if (hwm >= SECHO_SEQ_LAST) {
		rc = -ENOSPC;
		set_err(err, errlen,
		        "%s: the sequence space of key id %u is exhausted; generate a new key",
		        path, (unsigned)key_id);
		goto fail;
	}
	/* The lock file's hint: the mark of the last reservation made in this directory. A
	 * state below it went backwards (a backup restored, a copy from elsewhere, a lost
	 * file): numbering from it would repeat numbers. Say so, and start above the hint. */
	{
		char hb[256];
		ssize_t hn;
		uint64_t hint = 0;
		do
			hn = pread(s->lock_fd, hb, sizeof(hb), 0);
		while (hn < 0 && errno == EINTR);
		if (hn > 0 && (size_t)hn < sizeof(hb) &&
		    parse_record(hb, (size_t)hn, lockp, key_id, instance, &hint, NULL, 0) == 0 &&
		    hint > hwm) {
			s->went_back_from = hint;
			s->went_back_to = hwm;
			hwm = hint < SECHO_SEQ_LAST ? hint : SECHO_SEQ_LAST - 1;
		}
	}
	/* Never below the wall-clock floor: with no state (a new key, or a state lost for a
	 * key already used), or a state that went back without the hint to show it (the
	 * whole directory restored), numbering from H + 1 would repeat numbers. A key used
	 * before started at its own, earlier, clock value (times 4096) or above, and could
	 * only have caught up with the clock by handing out more than 4096 numbers per
	 * microsecond (4 x 10^9 per second) ever since. 2^64 / 4096 us is 142 years of
	 * clock. This assumes the clock was not set back. */
	uint64_t fl = clock_floor();
	if (fl > hwm && fl < SECHO_SEQ_LAST)
		hwm = fl;
	/* Begin above that and reserve the first window now, before anything is handed out:
	 * a state that cannot be kept refuses the start instead of failing under load. */
	uint64_t first = hwm + 1;
	uint64_t target = SECHO_SEQ_LAST - hwm < s->window ? SECHO_SEQ_LAST : hwm + s->window;
	rc = write_state(s, target);
	if (rc) {
		set_err(err, errlen, "%s: cannot save the sequence state: %s", path, strerror(-rc));
		goto fail;
	}
	rc = pthread_mutex_init(&s->lock, NULL);
	if (rc) {
		rc = -rc;
		set_err(err, errlen, "mutex: %s", strerror(-rc));
		goto fail;
	}
	s->low_water = s->window / 2;
	atomic_store(&s->next, first);
	atomic_store(&s->durable, target);
	atomic_store(&s->failed, 0);
	return 0;
fail:
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	if (s->dir_fd >= 0)
		close(s->dir_fd);
	s->lock_fd = s->dir_fd = -1;
	return rc;
}

/* Ask the reservation thread for the next window: one futex wake per window (the flag
 * stays set until the thread has looked); no lock, never waits. */
static void kick(struct secho_seqstate *s)
{
	if (atomic_exchange(&s->kicked, 1)) /* seq_cst: see take_ahead */
		return;
	syscall(SYS_futex, (int *)&s->kicked, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* The reservation thread: see the top of this file. */
static void *reserver_main(void *arg)
{
	struct secho_seqstate *s = arg;
	for (;;) {
		/* Sleeps only while kicked is still 0: a kick set before the wait is not lost. */
		while (!atomic_load(&s->kicked) && !atomic_load(&s->stop))
			syscall(SYS_futex, (int *)&s->kicked, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
		if (atomic_load(&s->stop))
			break;
		atomic_store(&s->kicked, 0);
		int rc = 0;
		for (;;) {
			uint64_t d = atomic_load(&s->durable);
			uint64_t nx = atomic_load(&s->next);
			/* Takers never pass H here, so nx <= d + 1. */
			if (d >= SECHO_SEQ_LAST || (nx <= d && d - nx >= s->low_water))
				break;
			uint64_t t =
			        SECHO_SEQ_LAST - d < s->window ? SECHO_SEQ_LAST : d + s->window;
			rc = write_state(s, t);
			if (rc) {
				atomic_store_explicit(&s->failed, rc, memory_order_release);
				break;
			}
			atomic_store_explicit(&s->durable, t, memory_order_release);
		}
		if (rc)
			break; /* sticky: every take fails from now on, nothing left to do */
	}
	return NULL;
}

int secho_seq_reserve_ahead(struct secho_seqstate *s)
{
	if (s->ahead)
		return 0;
	atomic_store(&s->stop, 0);
	atomic_store(&s->kicked, 0);
	int rc = pthread_create(&s->reserver, NULL, reserver_main, s);
	if (rc)
		return -rc;
	pthread_setname_np(s->reserver, "secho-seqstate");
	s->ahead = true;
	/* The window opened at start may already be half used (it is not, normally). */
	kick(s);
	return 0;
}

int secho_seq_failed(struct secho_seqstate *s)
{
	return atomic_load_explicit(&s->failed, memory_order_relaxed);
}

/* secho_seq_take() with the reservation thread running: never writes, never waits. */
static int take_ahead(struct secho_seqstate *s, uint64_t n, uint64_t *first)
{
	uint64_t cur = atomic_load_explicit(&s->next, memory_order_relaxed), d;
	do {
		if (cur > SECHO_SEQ_LAST || n > SECHO_SEQ_LAST - cur + 1)
			return -ENOSPC;
		/* acquire: a taker that sees H knows the window up to H is on disk */
		d = atomic_load_explicit(&s->durable, memory_order_acquire);
		if (cur + n - 1 > d) {
			kick(s);
			int f = atomic_load_explicit(&s->failed, memory_order_acquire);
			return f ? f : -EAGAIN;
		}
		/* seq_cst (the same locked instruction on x86): a kick this taker finds already
		 * pending is one the thread has not cleared yet, and after clearing it the thread
		 * loads `next` (seq_cst too) and sees this block. */
	} while (!atomic_compare_exchange_weak_explicit(
	        &s->next, &cur, cur + n, memory_order_seq_cst, memory_order_relaxed));
	if (d - (cur + n - 1) <= s->low_water)
		kick(s);
	*first = cur;
	return 0;
}

int secho_seq_take(struct secho_seqstate *s, uint64_t n, uint64_t *first)
{
	if (n == 0)
		return -EINVAL;
	int f = atomic_load_explicit(&s->failed, memory_order_acquire);
	if (f)
		return f;
	if (s->ahead)
		return take_ahead(s, n, first);
	uint64_t cur = atomic_load_explicit(&s->next, memory_order_relaxed);
	do {
		if (cur > SECHO_SEQ_LAST || n > SECHO_SEQ_LAST - cur + 1)
			return -ENOSPC;
	} while (!atomic_compare_exchange_weak_explicit(
	        &s->next, &cur, cur + n, memory_order_relaxed, memory_order_relaxed));
	uint64_t last = cur + n - 1;
	if (last > atomic_load_explicit(&s->durable, memory_order_acquire)) {
		pthread_mutex_lock(&s->lock);
		int rc = 0;
		for (;;) {
			uint64_t d = atomic_load_explicit(&s->durable, memory_order_relaxed);
			rc = atomic_load_explicit(&s->failed, memory_order_relaxed);
			if (rc || last <= d)
				break;
			/* Reserve at least a window, and at least up to this block's end. */
			uint64_t t =
			        SECHO_SEQ_LAST - d < s->window ? SECHO_SEQ_LAST : d + s->window;
			if (t < last)
				t = last;
			rc = write_state(s, t);
			if (rc) {
				atomic_store_explicit(&s->failed, rc, memory_order_release);
				break;
			}
			atomic_store_explicit(&s->durable, t, memory_order_release);
		}
		pthread_mutex_unlock(&s->lock);
		if (rc)
			return rc;
	}
	*first = cur;
	return 0;
}

uint64_t secho_seq_high_water(struct secho_seqstate *s)
{
	return atomic_load_explicit(&s->durable, memory_order_acquire);
}

uint64_t secho_seq_peek_next(struct secho_seqstate *s)
{
	return atomic_load_explicit(&s->next, memory_order_relaxed);
}

void secho_seq_close(struct secho_seqstate *s)
{
	if (s->lock_fd < 0)
		return;
	if (s->ahead) {
		atomic_store(&s->stop, 1);
		atomic_store(&s->kicked, 1); /* ends a wait that began before the store of stop */
		syscall(SYS_futex, (int *)&s->kicked, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
		pthread_join(s->reserver, NULL);
		s->ahead = false;
	}
	pthread_mutex_destroy(&s->lock);
	close(s->lock_fd); /* releases the flock */
	close(s->dir_fd);
	s->lock_fd = s->dir_fd = -1;
}
