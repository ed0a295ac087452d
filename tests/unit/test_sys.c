/*
 * tests/unit/test_sys.c - src/sys's small modules: process ownership (owner.h), the
 * X-macro name lookups (names.h), the error buffer (err.h), the clocks (clock.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "sys/clock.h"
#include "sys/err.h"
#include "sys/names.h"
#include "sys/owner.h"

static char dir[64];

/* A process that ended (reaped): its pid names nothing, or another process. */
static pid_t dead_child(unsigned long long *start)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		pause();
		_exit(0);
	}
	if (pid < 0 || secho_proc_start(pid, start) != 0)
		return -1;
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return pid;
}

static void test_owner(void)
{
	struct secho_owner self, other;
	unsigned long long start = 0;

	t_begin("owner: start time, alive, kill only the very process");
	T_CHECK(secho_owner_of(getpid(), &self) == 0 && self.start > 0, "own start time");
	T_CHECK(secho_owner_alive(&self), "we run");
	other = self;
	other.start++;
	T_CHECK(!secho_owner_alive(&other), "same pid, other start time: not us");
	T_CHECK(secho_owner_kill(&other, 0) == -ESRCH, "no signal to a process that is gone");
	other = (struct secho_owner){0, self.start};
	T_CHECK(!secho_owner_alive(&other), "pid 0 is nobody");
	pid_t pid = dead_child(&start);
	T_CHECK(pid > 0, "fork");
	other = (struct secho_owner){pid, start};
	T_CHECK(pid <= 0 || !secho_owner_alive(&other), "a reaped child is dead");
	T_CHECK(secho_proc_start(-5, &start) == -ESRCH, "no such pid");
	t_end();
}

static int visits;

/* Removes the files named "stale-*", as a sweep removes what a dead owner left. */
static bool visit(int dfd, const char *name, void *arg)
{
	(void)arg;
	visits++;
	return !strncmp(name, "stale-", 6) && unlinkat(dfd, name, 0) == 0;
}

static void test_sweep_and_marks(void)
{
	char path[128], text[64];
	int fd;

	t_begin("owner: the sweep visits every entry; marks are read only from plain files");
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s-%d", dir, i ? "stale" : "live", i);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		T_CHECK(fd >= 0 && write(fd, "mark\n", 5) == 5, "write %s", path);
		if (fd >= 0)
			close(fd);
	}
	snprintf(path, sizeof(path), "%s/link", dir);
	T_CHECK(symlink("live-0", path) == 0, "symlink");
	snprintf(path, sizeof(path), "%s/sub", dir);
	T_CHECK(mkdir(path, 0700) == 0, "mkdir");

	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	fd = secho_owner_mark_read(dfd, "live-0", text, sizeof(text));
	T_CHECK(fd >= 0 && !strcmp(text, "mark\n"), "a plain file of ours is read: '%s'", text);
	if (fd >= 0)
		close(fd);
	fd = secho_owner_mark_read(dfd, "link", text, 3);
	T_CHECK(fd < 0, "a link is not followed");
	fd = secho_owner_mark_read(dfd, "sub", text, sizeof(text));
	T_CHECK(fd == -EPERM, "a directory is not a mark (%d)", fd);
	fd = secho_owner_mark_read(dfd, "missing", text, sizeof(text));
	T_CHECK(fd == -ENOENT, "a missing mark: -ENOENT (%d)", fd);
	close(dfd);

	visits = 0;
	int removed = secho_owner_sweep(dir, visit, NULL);
	T_CHECK(removed == 2 && visits == 5, "removed %d of %d visited (want 2 of 5)", removed,
	        visits);
	T_CHECK(secho_owner_sweep("/nonexistent-secho-dir", visit, NULL) == 0, "no directory");
	t_end();
}

#define TEST_LIST(X)                                                                               \
	X(ONE, "one", "the first")                                                                 \
	X(TWO, "two", "the second")
enum { T_ONE, T_TWO, T_COUNT };

static void test_names_err_clock(void)
{
	static const char *const ids[] = {TEST_LIST(SECHO_X_ID)};
	static const char *const texts[] = {TEST_LIST(SECHO_X_TEXT)};
	char err[32] = "", safe[16];

	t_begin("names, error lines, clocks");
	T_CHECK(sizeof(ids) / sizeof(ids[0]) == T_COUNT, "one id per entry");
	T_CHECK(!strcmp(SECHO_NAME_AT(ids, T_TWO, "?"), "two"), "id of TWO");
	T_CHECK(!strcmp(SECHO_NAME_AT(texts, T_ONE, "?"), "the first"), "text of ONE");
	T_CHECK(!strcmp(SECHO_NAME_AT(ids, T_COUNT, "?"), "?"), "out of range");
	T_CHECK(!strcmp(SECHO_NAME_AT(ids, -1, "?"), "?"), "negative");

	secho_err_add(err, sizeof(err), "first %d", 1);
	secho_err_add(err, sizeof(err), "second");
	T_CHECK(!strcmp(err, "first 1\nsecond"), "two lines: '%s'", err);
	secho_err_add(err, sizeof(err), "a line too long to fit in what is left");
	T_CHECK(strlen(err) == sizeof(err) - 1, "truncated, terminated (%zu)", strlen(err));
	T_CHECK(!strcmp(secho_err_safe(safe, sizeof(safe), "a\\b\x1b"), "a\\\\b\\x1b"),
	        "escaped: '%s'", safe);
	T_CHECK(!strcmp(secho_err_safe(safe, 4, "abcdef"), "abc"), "cut at the cap: '%s'", safe);

	uint64_t a = secho_mono_ns(), b = secho_mono_ns();
	double s = secho_mono_s();
	T_CHECK(b >= a && a > 0, "monotonic");
	T_CHECK(s > 0 && (uint64_t)(s * 1e9) + 1000000000u > b, "seconds and ns agree");
	T_CHECK(secho_real_s() > 1.5e9 && secho_real_ns() > 1500000000ull * 1000000000ull,
	        "realtime after 2017");
	t_end();
}

int main(void)
{
	char cmd[128];

	t_seed_init("test_sys");
	snprintf(dir, sizeof(dir), "/tmp/secho-sys-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_owner();
	test_sweep_and_marks();
	test_names_err_clock();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return t_exit();
}
