/*
 * tests/unit/test_seqstate.c - sequence numbers: unique across threads and increasing per
 * thread, resumed above the high-water mark after a restart, never reused after kill -9,
 * refused when the state cannot be kept (corrupt, checksum, key id, permissions, owner,
 * lock, unwritable, fsync failure, exhausted); with the reservation thread, the state is
 * never written by the taking thread and a failed reservation is sticky; a state restored
 * from a backup is seen (the lock file's hint) and numbering resumes above it; the states
 * of a shared key's instances are kept apart. The threads and kill -9 cases take their
 * numbers as the endpoint's workers do: each its own lease, refilled through
 * secho_seqlease_refill() while the reservation thread writes the windows ahead.
 *
 * The state record's CRC is checked against zlib's crc32() as an independent reference.
 */
#include "harness.h"

#include <secho/seqstate.h>

#include "endpoint/seqlease.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

static char dir[64];
static char spath[128];

static int quick(void)
{
	const char *q = getenv("SECHO_TEST_QUICK");
	return q && *q == '1';
}

static void reset_state(void)
{
	char p[160];
	unlink(spath);
	snprintf(p, sizeof(p), "%s.lock", spath);
	unlink(p);
	snprintf(p, sizeof(p), "%s.tmp", spath);
	unlink(p);
}

static int read_file(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t r = read(fd, buf, n - 1);
	close(fd);
	buf[r > 0 ? r : 0] = 0;
	return (int)r;
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	unlink(path);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return;
	if (write(fd, text, strlen(text)) < 0)
		perror("write");
	fchmod(fd, mode);
	close(fd);
}

/* A record written by the test itself (zlib CRC). */
static void make_record(char *out, size_t n, unsigned kid, uint64_t h)
{
	char body[96];
	snprintf(body, sizeof(body), "secho-seq 1 key-id %u reserved %" PRIu64, kid, h);
	uLong c = crc32(0L, (const Bytef *)body, (uInt)strlen(body));
	snprintf(out, n, "%s crc32 %08lx\n", body, (unsigned long)c);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The next number of lease l, as a worker takes it: refilled from s when used up; while
 * the reservation thread is still writing the next window (-EAGAIN: a worker drops the
 * packet) wait a moment and ask again. 0 or the error. */
static int lease_next(struct secho_seqlease *s, struct secho_lease *l, uint64_t *out,
                      unsigned long *pending)
{
	while (l->next == l->end) {
		int rc = secho_seqlease_refill(s, l);
		if (rc != -EAGAIN && rc != 0)
			return rc;
		if (rc == -EAGAIN) {
			(*pending)++;
			sched_yield();
		}
	}
	*out = l->next++;
	return 0;
}

struct worker {
	struct secho_seqlease *s;
	uint64_t *out;
	size_t count;
	int err;
	unsigned long pending;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct secho_lease l = {0, 0};
	for (size_t i = 0; i < w->count; i++) {
		int rc = lease_next(w->s, &l, &w->out[i], &w->pending);
		if (rc) {
			w->err = rc;
			break;
		}
	}
	return NULL;
}

static void test_threads(void)
{
	enum { T = 4 };
	size_t per = quick() ? 20000 : 100000;
	char err[512];
	reset_state();
	t_begin("threads: %d workers with leases, numbers unique, increasing per worker, all "
	        "reserved",
	        T);
	struct secho_seqlease *s = secho_seqlease_open(spath, 9, 0, 4096, err, sizeof(err));
	T_CHECK(s != NULL, "open: %s", err);
	if (!s) {
		t_end();
		return;
	}
	struct worker w[T];
	pthread_t th[T];
	uint64_t *all = calloc(T * per, sizeof(uint64_t));
	for (int i = 0; i < T; i++) {
		w[i] = (struct worker){s, all + (size_t)i * per, per, 0, 0};
		pthread_create(&th[i], NULL, worker_main, &w[i]);
	}
	for (int i = 0; i < T; i++)
		pthread_join(th[i], NULL);
	int inc_ok = 1;
	for (int i = 0; i < T; i++) {
		T_CHECK(w[i].err == 0, "worker %d: %d", i, w[i].err);
		for (size_t j = 1; j < per; j++)
			inc_ok &= w[i].out[j] > w[i].out[j - 1];
	}
	T_CHECK(inc_ok, "increasing within each worker");
	uint64_t hwm = secho_seqlease_high_water(s);
	/* Closed first: its reservation thread may still be writing a window ahead. */
	T_CHECK(secho_seqlease_close(s, err, sizeof(err)) == 0, "close: %s", err);
	qsort(all, T * per, sizeof(uint64_t), cmp_u64);
	size_t dups = 0;
	for (size_t j = 1; j < T * per; j++)
		dups += all[j] == all[j - 1];
	T_CHECK(dups == 0, "%zu duplicates", dups);
	T_CHECK(all[0] >= 1 && all[T * per - 1] <= hwm,
	        "all in 1..H (max %" PRIu64 ", H %" PRIu64 ")", all[T * per - 1], hwm);
	char buf[256], want[256];
	unsigned long long fh = 0;
	read_file(spath, buf, sizeof(buf));
	T_CHECK(sscanf(buf, "secho-seq 1 key-id 9 reserved %llu ", &fh) == 1 && fh >= hwm,
	        "the file's mark %llu at or above H %" PRIu64, fh, hwm);
	make_record(want, sizeof(want), 9, fh);
	T_CHECK(strcmp(buf, want) == 0, "file is the documented record: %s", buf);
	struct stat st;
	T_CHECK(stat(spath, &st) == 0 && (st.st_mode & 07777) == 0600, "mode 0600");
	unsigned long pending = 0;
	for (int i = 0; i < T; i++)
		pending += w[i].pending;
	printf("  %zu numbers, %lu refills found the next window still being written\n",
	       (size_t)T * per, pending);
	free(all);
	t_end();
}

static void test_restart(void)
{
	struct secho_seqstate s;
	char err[512];
	reset_state();
	t_begin("restart: numbering resumes above the reserved high-water mark");
	uint64_t prev_h = 0, x = 0;
	for (int run = 0; run < 5; run++) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t floor_now = ((uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u)
		                     << 12;
		int rc = secho_seq_open(&s, spath, 3, 100, err, sizeof(err));
		if (!T_CHECK(rc == 0, "open run %d: %s", run, err))
			break;
		uint64_t first;
		T_CHECK(secho_seq_take(&s, 1, &first) == 0, "take");
		/* above the clock floor always (see seqstate.c), and above H after a restart */
		T_CHECK(first > floor_now, "run %d: first %" PRIu64 " above clock floor %" PRIu64,
		        run, first, floor_now);
		if (run > 0)
			T_CHECK(first > prev_h, "run %d first %" PRIu64 " after H %" PRIu64, run,
			        first, prev_h);
		for (int i = 0; i < run * 70; i++)
			T_CHECK(secho_seq_take(&s, 1, &x) == 0 && x > first, "take more");
		prev_h = secho_seq_high_water(&s);
		T_CHECK(prev_h >= x, "H covers what was handed out");
		secho_seq_close(&s);
	}
	/* a lost state (file deleted) must not restart numbering below what was used */
	T_CHECK(unlink(spath) == 0, "state deleted");
	T_CHECK(secho_seq_open(&s, spath, 3, 100, err, sizeof(err)) == 0, "reopen: %s", err);
	uint64_t again;
	T_CHECK(secho_seq_take(&s, 1, &again) == 0 && again > prev_h,
	        "after the state was lost: first %" PRIu64 " above every earlier number (%" PRIu64
	        ")",
	        again, prev_h);
	secho_seq_close(&s);
	/* lock: a second open while the first holds the state */
	T_CHECK(secho_seq_open(&s, spath, 3, 100, err, sizeof(err)) == 0, "open");
	struct secho_seqstate s2;
	int rc = secho_seq_open(&s2, spath, 3, 100, err, sizeof(err));
	T_CHECK(rc == -EBUSY && strstr(err, "in use"), "second open refused: %d %s", rc, err);
	secho_seq_close(&s);
	/* block larger than the window */
	T_CHECK(secho_seq_open(&s, spath, 3, 10, err, sizeof(err)) == 0, "open w10");
	uint64_t f1, f2;
	T_CHECK(secho_seq_take(&s, 1000, &f1) == 0 && secho_seq_high_water(&s) >= f1 + 999,
	        "big block reserved");
	T_CHECK(secho_seq_take(&s, 1, &f2) == 0 && f2 == f1 + 1000, "next after big block");
	T_CHECK(secho_seq_take(&s, 0, &f2) == -EINVAL, "n = 0 refused");
	secho_seq_close(&s);
	char dp[128];
	T_CHECK(strcmp(secho_seq_default_path(7, dp, sizeof(dp)), "/var/lib/secho/seq-7.state") ==
	                0,
	        "default path %s", dp);
	t_end();
}

/* Child: take numbers forever as a worker does (a lease, the reservation thread writing
 * ahead), sending each through the pipe once it is handed out. */
static void crash_child(int wfd, unsigned seed)
{
	char err[512];
	struct secho_seqlease *s =
	        secho_seqlease_open(spath, 5, 0, 256 + seed % 2048, err, sizeof(err));
	if (!s) {
		fprintf(stderr, "child open: %s\n", err);
		_exit(3);
	}
	struct secho_lease l = {0, 0};
	unsigned long pending = 0;
	for (;;) {
		uint64_t v;
		if (lease_next(s, &l, &v, &pending) != 0)
			_exit(4);
		if (write(wfd, &v, sizeof(v)) != sizeof(v))
			_exit(5);
	}
}

static void test_crash(void)
{
	int runs = quick() ? 12 : 60;
	reset_state();
	t_begin("crash: kill -9 mid-allocation %d times, no number ever handed out twice", runs);
	uint64_t max_seen = 0, total = 0;
	int bad_order = 0, bad_exit = 0, reused = 0;
	for (int r = 0; r < runs; r++) {
		int pfd[2];
		if (pipe(pfd) != 0)
			break;
		pid_t pid = fork();
		if (pid == 0) {
			close(pfd[0]);
			crash_child(pfd[1], (unsigned)t_rand64());
		}
		close(pfd[1]);
		/* once it hands out its first number (at most 5 s: a loaded machine, or a
		 * sanitizer build, may take long to get there; a fixed sleep alone killed every
		 * child of a run before its first number), let it run 0.2..15 ms more, then kill
		 * it wherever it is */
		struct pollfd pf = {.fd = pfd[0], .events = POLLIN};
		struct timespec ts = {0, (long)t_randrange(200, 15000) * 1000};
		uint64_t buf[512];
		uint64_t last = 0, first_of_run = 0;
		size_t got_run = 0;
		(void)poll(&pf, 1, 5000);
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
		for (;;) {
			ssize_t n = read(pfd[0], buf, sizeof(buf));
			if (n <= 0)
				break;
			for (size_t i = 0; i < (size_t)n / 8; i++) {
				if (got_run == 0)
					first_of_run = buf[i];
				else if (buf[i] <= last)
					bad_order++;
				if (buf[i] <= max_seen)
					reused++;
				last = buf[i];
				got_run++;
			}
		}
		close(pfd[0]);
		int st = 0;
		waitpid(pid, &st, 0);
		if (!(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL))
			bad_exit++;
		if (got_run) {
			if (first_of_run <= max_seen)
				reused++;
			max_seen = last;
		}
		total += got_run;
	}
	T_CHECK(bad_exit == 0, "%d children did not die by SIGKILL", bad_exit);
	T_CHECK(reused == 0, "%d numbers at or below an earlier run's", reused);
	T_CHECK(bad_order == 0, "%d out of order", bad_order);
	T_CHECK(total > 0, "numbers handed out: %" PRIu64, total);
	printf("  %" PRIu64 " numbers over %d killed runs, last %" PRIu64 "\n", total, runs,
	       max_seen);
	/* The state left behind still opens, above everything handed out. */
	struct secho_seqstate s;
	char err[512];
	T_CHECK(secho_seq_open(&s, spath, 5, 10, err, sizeof(err)) == 0, "reopen: %s", err);
	uint64_t f = 0;
	T_CHECK(secho_seq_take(&s, 1, &f) == 0 && f > max_seen, "resumes above %" PRIu64, max_seen);
	secho_seq_close(&s);
	t_end();
}

static int fail_sync(int fd)
{
	(void)fd;
	errno = EIO;
	return -1;
}

static void test_refusals(void)
{
	struct secho_seqstate s;
	char err[512], rec[128], p[160];
	int rc;
	t_begin("refusals: corrupt, checksum, key id, permissions, unwritable, fsync, exhausted");
	struct {
		const char *name;
		const char *text;
		int want_rc;
		const char *want;
	} bad[] = {
	        {"empty", "", -EINVAL, "empty file"},
	        {"garbage", "hello world\n", -EINVAL, "corrupt"},
	        {"no newline", "secho-seq 1 key-id 4 reserved 10 crc32 00000000", -EINVAL,
	         "corrupt"},
	        {"version 2", "secho-seq 2 key-id 4 reserved 10 crc32 00000000\n", -EINVAL,
	         "corrupt"},
	        {"overflow", "secho-seq 1 key-id 4 reserved 18446744073709551616 crc32 00000000\n",
	         -EINVAL, "corrupt"},
	        {"leading zero", "secho-seq 1 key-id 4 reserved 010 crc32 00000000\n", -EINVAL,
	         "corrupt"},
	        {"bad crc digits", "secho-seq 1 key-id 4 reserved 10 crc32 0000000G\n", -EINVAL,
	         "corrupt"},
	        {NULL, NULL, 0, NULL},
	};
	for (int i = 0; bad[i].name; i++) {
		reset_state();
		write_file(spath, bad[i].text, 0600);
		rc = secho_seq_open(&s, spath, 4, 10, err, sizeof(err));
		T_CHECK(rc == bad[i].want_rc && strstr(err, bad[i].want), "%s: %d %s", bad[i].name,
		        rc, err);
	}
	/* checksum mismatch: a valid record with one digit of the mark changed */
	reset_state();
	make_record(rec, sizeof(rec), 4, 123456);
	char *d = strstr(rec, "123456");
	d[0] = '9';
	write_file(spath, rec, 0600);
	rc = secho_seq_open(&s, spath, 4, 10, err, sizeof(err));
	T_CHECK(rc == -EINVAL && strstr(err, "checksum mismatch"), "crc: %d %s", rc, err);
	/* trailing data after a valid record */
	make_record(rec, sizeof(rec), 4, 10);
	strcat(rec, "x");
	write_file(spath, rec, 0600);
	rc = secho_seq_open(&s, spath, 4, 10, err, sizeof(err));
	T_CHECK(rc == -EINVAL && strstr(err, "corrupt"), "trailing: %d %s", rc, err);
	/* wrong key id */
	make_record(rec, sizeof(rec), 5, 10);
	write_file(spath, rec, 0600);
	rc = secho_seq_open(&s, spath, 4, 10, err, sizeof(err));
	T_CHECK(rc == -EINVAL && strstr(err, "key id 5"), "key id: %d %s", rc, err);
	/* a valid record opens and starts above it */
	make_record(rec, sizeof(rec), 4, 1000);
	write_file(spath, rec, 0600);
	rc = secho_seq_open(&s, spath, 4, 10, err, sizeof(err));
	uint64_t f = 0;
	T_CHECK(rc == 0 && secho_seq_take(&s, 1, &f) == 0 && f > 1000, "valid: %d", rc);
	if (rc == 0)
		secho_seq_close(&s);
	/* the example record of docs/PROTOCOL.md */
	make_record(rec, sizeof(rec), 7, 1048576);
	T_CHECK(strcmp(rec, "secho-seq 1 key-id 7 reserved 1048576 crc32 2f292d79\n") == 0,
	        "documented example: %s", rec);
	write_file(spath, rec, 0600);
	rc = secho_seq_open(&s, spath, 7, 10, err, sizeof(err));
	T_CHECK(rc == 0 && secho_seq_take(&s, 1, &f) == 0 && f > 1048576, "example opens: %s", err);
	if (rc == 0)
		secho_seq_close(&s);
	make_record(rec, sizeof(rec), 4, 1000);
	/* permissions too open */
	static const mode_t modes[] = {0620, 0602, 0666, 0622};
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		write_file(spath, rec, modes[i]);
		rc = secho_seq_open(&s, spath, 4, 10, err, sizeof(err));
		T_CHECK(rc == -EPERM && strstr(err, "too open"), "mode %o: %d %s",
		        (unsigned)modes[i], rc, err);
	}
	/* owner: a file owned by someone else (needs root to chown; without root this check
	 * is reported missing below, not passed) */
	write_file(spath, rec, 0600);
	bool owner_checked = false;
	if (geteuid() == 0) {
		T_CHECK(chown(spath, 65534, 65534) == 0, "chown: %s", strerror(errno));
		rc = secho_seq_open(&s, spath, 4, 10, err, sizeof(err));
		T_CHECK(rc == -EPERM && strstr(err, "owned by"), "owner: %d %s", rc, err);
		owner_checked = true;
	}
	/* symlink */
	write_file(spath, rec, 0600);
	snprintf(p, sizeof(p), "%s/link.state", dir);
	unlink(p);
	T_CHECK(symlink(spath, p) == 0, "symlink");
	rc = secho_seq_open(&s, p, 4, 10, err, sizeof(err));
	T_CHECK(rc != 0, "symlink refused: %s", err);
	unlink(p);
	snprintf(p, sizeof(p), "%s/link.state.lock", dir);
	unlink(p);
	/* missing directory; a path through a regular file */
	rc = secho_seq_open(&s, "/nonexistent-secho-dir/seq-1.state", 1, 10, err, sizeof(err));
	T_CHECK(rc == -ENOENT && strstr(err, "state directory"), "no dir: %d %s", rc, err);
	snprintf(p, sizeof(p), "%s/x.state", spath);
	rc = secho_seq_open(&s, p, 1, 10, err, sizeof(err));
	T_CHECK(rc == -ENOTDIR, "through a file: %d %s", rc, err);
	/* fsync failure at open, and later during a reservation (sticky) */
	reset_state();
	secho_seq_set_sync_hook(fail_sync);
	rc = secho_seq_open(&s, spath, 4, 10, err, sizeof(err));
	T_CHECK(rc == -EIO && strstr(err, "cannot save"), "fsync at open: %d %s", rc, err);
	secho_seq_set_sync_hook(NULL);
	rc = secho_seq_open(&s, spath, 4, 10, err, sizeof(err));
	T_CHECK(rc == 0, "open: %s", err);
	if (rc == 0) {
		int ok = 1;
		for (int i = 0; i < 10; i++)
			ok &= secho_seq_take(&s, 1, &f) == 0;
		T_CHECK(ok, "window used");
		secho_seq_set_sync_hook(fail_sync);
		T_CHECK(secho_seq_take(&s, 1, &f) == -EIO, "reservation fails");
		secho_seq_set_sync_hook(NULL);
		T_CHECK(secho_seq_take(&s, 1, &f) == -EIO, "stays failed");
		secho_seq_close(&s);
	}
	/* exhausted */
	make_record(rec, sizeof(rec), 4, SECHO_SEQ_LAST);
	reset_state();
	write_file(spath, rec, 0600);
	rc = secho_seq_open(&s, spath, 4, 10, err, sizeof(err));
	T_CHECK(rc == -ENOSPC && strstr(err, "exhausted"), "exhausted: %d %s", rc, err);
	make_record(rec, sizeof(rec), 4, SECHO_SEQ_LAST - 5);
	reset_state();
	write_file(spath, rec, 0600);
	rc = secho_seq_open(&s, spath, 4, 100, err, sizeof(err));
	T_CHECK(rc == 0, "near the end opens: %s", err);
	if (rc == 0) {
		T_CHECK(secho_seq_take(&s, 4, &f) == 0 && f == SECHO_SEQ_LAST - 4,
		        "last 5: %" PRIu64, f);
		T_CHECK(secho_seq_take(&s, 2, &f) == -ENOSPC, "2 more: ENOSPC");
		T_CHECK(secho_seq_take(&s, 1, &f) == 0 && f == SECHO_SEQ_LAST, "the last one");
		T_CHECK(secho_seq_take(&s, 1, &f) == -ENOSPC, "then none");
		T_CHECK(secho_seq_high_water(&s) == SECHO_SEQ_LAST, "H = last");
		secho_seq_close(&s);
		rc = secho_seq_open(&s, spath, 4, 100, err, sizeof(err));
		T_CHECK(rc == -ENOSPC, "refuses to start once exhausted: %d", rc);
	}
	t_end();
	if (!owner_checked) {
		t_begin("refusals: a state file owned by another user");
		t_unavailable("needs root (chown to another user)");
	}
}

/* A state that went backwards (a backup restored over it) above the clock floor, where
 * only the lock file's hint can show it; and the state of an instance of a shared key. */
static void test_backwards_and_instances(void)
{
	struct secho_seqstate s;
	char err[512], rec[128], backup[128], p[160];
	uint64_t f = 0, max_used = 0;
	int rc;
	t_begin("state restored from a backup is seen and skipped; instances keep their own");
	reset_state();
	/* A key numbered far above the clock (2^63), so the floor cannot hide a step back. */
	make_record(rec, sizeof(rec), 4, UINT64_C(1) << 63);
	write_file(spath, rec, 0600);
	snprintf(backup, sizeof(backup), "%s", rec);
	rc = secho_seq_open(&s, spath, 4, 100, err, sizeof(err));
	if (!T_CHECK(rc == 0, "open: %s", err)) {
		t_end();
		return;
	}
	T_CHECK(s.went_back_from == 0, "a state that did not go back is not reported");
	for (int i = 0; i < 1000; i++)
		if (secho_seq_take(&s, 1, &f) == 0)
			max_used = f;
	secho_seq_close(&s);
	T_CHECK(max_used > (UINT64_C(1) << 63) + 999, "1000 numbers used, up to %" PRIu64,
	        max_used);
	write_file(spath, backup, 0600); /* the backup restored */
	rc = secho_seq_open(&s, spath, 4, 100, err, sizeof(err));
	T_CHECK(rc == 0 && secho_seq_take(&s, 1, &f) == 0 && f > max_used,
	        "after the restore: first %" PRIu64 " above every number used (%" PRIu64 ")", f,
	        max_used);
	T_CHECK(s.went_back_from >= max_used && s.went_back_to == UINT64_C(1) << 63,
	        "reported: went back from %" PRIu64 " to %" PRIu64, s.went_back_from,
	        s.went_back_to);
	if (rc == 0)
		secho_seq_close(&s);

	/* Instances of a shared key: the record names its instance; another's is refused. */
	reset_state();
	rc = secho_seq_open_instance(&s, spath, 4, 3, 100, err, sizeof(err));
	T_CHECK(rc == 0, "instance 3 opens: %s", err);
	if (rc == 0)
		secho_seq_close(&s);
	T_CHECK(read_file(spath, rec, sizeof(rec)) > 0 && strstr(rec, "key-id 4 instance 3 "),
	        "record names the instance: %s", rec);
	rc = secho_seq_open_instance(&s, spath, 4, 5, 100, err, sizeof(err));
	T_CHECK(rc == -EINVAL && strstr(err, "instance 3"), "instance 5 refused: %s", err);
	rc = secho_seq_open(&s, spath, 4, 100, err, sizeof(err));
	T_CHECK(rc == -EINVAL && strstr(err, "instance 3"), "unshared key refused: %s", err);
	rc = secho_seq_open_instance(&s, spath, 4, 3, 100, err, sizeof(err));
	T_CHECK(rc == 0, "instance 3 reopens: %s", err);
	if (rc == 0)
		secho_seq_close(&s);
	reset_state();
	make_record(rec, sizeof(rec), 4, 1000);
	write_file(spath, rec, 0600);
	rc = secho_seq_open_instance(&s, spath, 4, 3, 100, err, sizeof(err));
	T_CHECK(rc == -EINVAL && strstr(err, "unshared key"), "unshared state refused: %s", err);
	T_CHECK(!strcmp(secho_seq_default_path_for(7, 12, p, sizeof(p)),
	                "/var/lib/secho/seq-7-12.state"),
	        "default path of an instance: %s", p);
	reset_state();
	t_end();
}

/* Reserving ahead: the state is written by the reservation thread, never by the thread
 * that takes numbers (the data path), which gets -EAGAIN instead of waiting when the disk
 * is slow; a number is still never handed out before its window is durable; a failed
 * reservation is sticky and reported. The sync hook stands in for the disk: it records
 * which thread called it, and blocks (until released) when `hold` is set. */
static pthread_t taker;
static atomic_int sync_on_taker, sync_calls, hold, holding, sync_fail;
static _Atomic uint64_t durable_seen; /* H when the hook ran: what is about to be durable */

static int probe_sync(int fd)
{
	(void)fd;
	atomic_fetch_add(&sync_calls, 1);
	if (pthread_equal(pthread_self(), taker)) {
		atomic_fetch_add(&sync_on_taker, 1);
		return 0; /* never block the taker: that would hang the test on a regression */
	}
	atomic_store(&holding, 1);
	for (int i = 0; i < 5000 && atomic_load(&hold); i++) /* at most 5 s */
		usleep(1000);
	atomic_store(&holding, 0);
	if (atomic_load(&sync_fail)) {
		errno = ENOSPC;
		return -1;
	}
	return 0;
}

static void test_reserve_ahead(void)
{
	struct secho_seqstate s;
	char err[512];
	uint64_t f, prev = 0;
	t_begin("reserve ahead: the data path never writes the state nor waits for it");
	reset_state();
	taker = pthread_self();
	atomic_store(&sync_on_taker, 0);
	atomic_store(&hold, 0);
	atomic_store(&sync_fail, 0);
	int rc = secho_seq_open(&s, spath, 8, 256, err, sizeof(err));
	if (!T_CHECK(rc == 0, "open: %s", err)) {
		t_end();
		return;
	}
	T_CHECK(secho_seq_reserve_ahead(&s) == 0, "reservation thread started");
	secho_seq_set_sync_hook(probe_sync);
	/* 1. Takes across many windows: every number is at most H, and the taker never
	 * syncs. A take that finds the next window still being saved gets -EAGAIN at once;
	 * it tries again a little later (bounded: 20 s in all). */
	unsigned taken = 0, again = 0, bad = 0;
	for (unsigned i = 0; i < 100000 && taken < 2000; i++) {
		rc = secho_seq_take(&s, 4, &f);
		if (rc == -EAGAIN) {
			again++;
			usleep(200);
			continue;
		}
		if (rc)
			break;
		bad += f <= prev || f + 3 > secho_seq_high_water(&s);
		prev = f + 3;
		taken++;
	}
	T_CHECK(taken == 2000, "2000 blocks of 4 taken across windows of 256 (rc %d)", rc);
	T_CHECK(bad == 0, "%u blocks not increasing or beyond the durable mark", bad);
	T_CHECK(atomic_load(&sync_calls) > 0, "the state was written (%d syncs)",
	        atomic_load(&sync_calls));
	T_CHECK(atomic_load(&sync_on_taker) == 0, "%d of %d state syncs ran in the taking thread",
	        atomic_load(&sync_on_taker), atomic_load(&sync_calls));
	printf("  %u takes, %u answered -EAGAIN (window still being saved)\n", taken, again);

	/* 2. The disk stalls: takes go on until the durable numbers run out, then -EAGAIN at
	 * once; nothing beyond H is ever handed out. */
	atomic_store(&hold, 1);
	unsigned got = 0;
	for (unsigned i = 0; i < 1000; i++) {
		rc = secho_seq_take(&s, 1, &f);
		if (rc)
			break;
		got++;
		bad += f > secho_seq_high_water(&s);
	}
	T_CHECK(rc == -EAGAIN, "with the disk stalled: -EAGAIN after %u numbers (rc %d)", got, rc);
	T_CHECK(got < 1000 && bad == 0, "%u numbers beyond the durable mark", bad);
	for (int i = 0; i < 1000 && !atomic_load(&holding); i++)
		usleep(1000);
	T_CHECK(atomic_load(&holding), "the reservation thread is the one waiting for the disk");
	durable_seen = secho_seq_high_water(&s);
	atomic_store(&hold, 0);
	for (int i = 0; i < 2000 && (rc = secho_seq_take(&s, 1, &f)) == -EAGAIN; i++)
		usleep(1000);
	T_CHECK(rc == 0 && f <= secho_seq_high_water(&s) && secho_seq_high_water(&s) > durable_seen,
	        "numbers again once the disk is back (rc %d)", rc);

	/* 3. The disk fails (ENOSPC): the failure is sticky and reported, takes fail with it. */
	atomic_store(&sync_fail, 1);
	for (unsigned i = 0; i < 100000 && (rc = secho_seq_take(&s, 1, &f)) != -ENOSPC; i++)
		if (rc == -EAGAIN)
			usleep(200);
	T_CHECK(rc == -ENOSPC, "takes fail with the reservation's error (rc %d)", rc);
	T_CHECK(secho_seq_failed(&s) == -ENOSPC, "secho_seq_failed: %d", secho_seq_failed(&s));
	atomic_store(&sync_fail, 0);
	T_CHECK(secho_seq_take(&s, 1, &f) == -ENOSPC, "sticky");
	secho_seq_set_sync_hook(NULL);
	secho_seq_close(&s);
	t_end();
}

/* Unwritable state directory: as an unprivileged user in a child (root ignores modes). */
static void test_unwritable(void)
{
	t_begin("refusals: state directory not writable");
	char sub[128], p[160], rec[128];
	snprintf(sub, sizeof(sub), "%s/ro", dir);
	mkdir(sub, 0700);
	snprintf(p, sizeof(p), "%s/seq-4.state", sub);
	make_record(rec, sizeof(rec), 4, 50);
	write_file(p, rec, 0600);
	char lockp[192];
	snprintf(lockp, sizeof(lockp), "%s.lock", p);
	write_file(lockp, "", 0600);
	uid_t uid = geteuid();
	if (uid == 0) {
		if (chown(sub, 65534, 65534) || chown(p, 65534, 65534) ||
		    chown(lockp, 65534, 65534)) {
			t_unavailable("chown failed");
			return;
		}
		chmod(dir, 0755);
	}
	chmod(sub, 0500);
	pid_t pid = fork();
	if (pid == 0) {
		if (uid == 0 && (setgid(65534) || setuid(65534)))
			_exit(10);
		struct secho_seqstate s;
		char err[512];
		int rc = secho_seq_open(&s, p, 4, 10, err, sizeof(err));
		printf("  unwritable: %s\n", err);
		fflush(stdout);
		_exit(rc == -EACCES && strstr(err, "cannot save") ? 0 : 1);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "refused (status %d)", st);
	chmod(sub, 0700);
	chmod(dir, 0700);
	unlink(p);
	unlink(lockp);
	snprintf(p, sizeof(p), "%s/seq-4.state.tmp", sub);
	unlink(p);
	rmdir(sub);
	t_end();
}

int main(void)
{
	t_seed_init("test_seqstate");
	snprintf(dir, sizeof(dir), "/tmp/secho-seq-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(spath, sizeof(spath), "%s/seq.state", dir);
	test_threads();
	test_restart();
	test_crash();
	test_refusals();
	test_reserve_ahead();
	test_backwards_and_instances();
	test_unwritable();
	reset_state();
	rmdir(dir);
	return t_exit();
}
