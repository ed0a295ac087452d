/*
 * src/lab/proc.c - the programs a lab runs: one-shot runs with captured output and a
 * deadline, the keeper thread for long-lived children, `secho lab run`'s exec; every
 * child with a parent-death signal (see lab.h).
 */
#include "lab/lab.h"
#include "sys/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define OUT_CAP (8u << 20)

volatile sig_atomic_t secho_lab_stopping;

static char *const fixed_env[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL};

/* Keep the last cap-1 bytes of a stream in buf (a tail of stderr for error messages). */
static void tail_append(char *buf, size_t cap, const char *p, size_t n)
{
	size_t have = strlen(buf);

	if (n >= cap - 1) {
		memcpy(buf, p + n - (cap - 1), cap - 1);
		buf[cap - 1] = '\0';
		return;
	}
	if (have + n >= cap) {
		size_t drop = have + n - (cap - 1);

		memmove(buf, buf + drop, have - drop + 1);
		have -= drop;
	}
	memcpy(buf + have, p, n);
	buf[have + n] = '\0';
}

/* Child side of a fork: only async-signal-safe calls until execve. The program starts with
 * default signal dispositions and an empty mask whatever thread forked it (a server thread
 * may block signals; a caller's SIGPIPE may be ignored), so `secho serve` sees our
 * SIGTERM. It gets deathsig when the forking thread ends, and does not start at all when
 * its parent died before the prctl took effect (it was reparented already). */
static void child_exec(char *const argv[], int in, int out, int err, int deathsig, pid_t parent)
{
	struct sigaction dfl;
	sigset_t none;

	if (prctl(PR_SET_PDEATHSIG, deathsig) != 0 || getppid() != parent)
		_exit(127);

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	(void)sigaction(SIGPIPE, &dfl, NULL);
	(void)sigaction(SIGINT, &dfl, NULL);
	(void)sigaction(SIGTERM, &dfl, NULL);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	(void)setpgid(0, 0); /* a terminal's ^C reaches the owner, which stops us in order */
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		_exit(127);
	execve(argv[0], argv, fixed_env);
	_exit(127);
}

/* Contract: lab.h. */
int secho_lab_status(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return -1;
}

/* Append r bytes of stdout to o (grown by doubling; over OUT_CAP they are dropped, and
 * whoever parses the output will say it is cut). */
static void out_append(struct secho_lab_out *o, size_t *cap, const char *buf, size_t r)
{
	if (o->out_len + r + 1 > OUT_CAP)
		return;
	if (o->out_len + r + 1 > *cap) {
		size_t ncap = *cap ? *cap * 2 : 65536;
		char *p;

		while (ncap < o->out_len + r + 1)
			ncap *= 2;
		p = realloc(o->out, ncap);
		if (!p)
			return;
		o->out = p;
		*cap = ncap;
	}
	memcpy(o->out + o->out_len, buf, r);
	o->out_len += r;
	o->out[o->out_len] = '\0';
}

/* Contract: lab.h. */
int secho_lab_run(char *const argv[], unsigned timeout_ms, struct secho_lab_out *o)
{
	int po[2] = {-1, -1}, pe[2] = {-1, -1}, nul, rc;
	size_t cap = 0;
	double deadline = secho_mono_s() + timeout_ms / 1000.0;
	pid_t pid, self = getpid();
	int st = 0;

	memset(o, 0, sizeof(*o));
	o->status = -1;
	nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (nul < 0 || pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0) {
		rc = -errno;
		snprintf(o->err, sizeof(o->err), "pipe: %s", strerror(errno));
		goto fail;
	}
	pid = fork();
	if (pid < 0) {
		rc = -errno;
		snprintf(o->err, sizeof(o->err), "fork: %s", strerror(errno));
		goto fail;
	}
	if (pid == 0)
		child_exec(argv, nul, po[1], pe[1], SIGKILL, self);
	close(po[1]);
	close(pe[1]);
	close(nul);
	po[1] = pe[1] = -1;

	struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
	int open_fds = 2;

	while (open_fds > 0) {
		double left = deadline - secho_mono_s();
		char buf[16384];

		if (left <= 0 || secho_lab_stopping) {
			o->timed_out = left <= 0;
			kill(pid, SIGKILL);
			break;
		}
		int n = poll(fds, 2, left > 0.2 ? 200 : (int)(left * 1000) + 1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		for (int i = 0; i < 2; i++) {
			if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			ssize_t r = read(fds[i].fd, buf, sizeof(buf));

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				close(fds[i].fd);
				fds[i].fd = -1;
				open_fds--;
				continue;
			}
			if (i == 1)
				tail_append(o->err, sizeof(o->err), buf, (size_t)r);
			else
				out_append(o, &cap, buf, (size_t)r);
		}
	}
	for (int i = 0; i < 2; i++)
		if (fds[i].fd >= 0)
			close(fds[i].fd);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	o->status = secho_lab_status(st);
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		if (po[i] >= 0)
			close(po[i]);
		if (pe[i] >= 0)
			close(pe[i]);
	}
	if (nul >= 0)
		close(nul);
	return rc;
}

/* Contract: lab.h. */
void secho_lab_out_free(struct secho_lab_out *o)
{
	free(o->out);
	o->out = NULL;
	o->out_len = 0;
}

/* Contract: lab.h. */
int secho_lab_run_ok(char *const argv[], unsigned timeout_ms, char *err, size_t errlen)
{
	struct secho_lab_out o;
	int rc = secho_lab_run(argv, timeout_ms, &o);

	if (rc == 0 && o.status != 0)
		rc = -EIO;
	if (rc < 0 && err) {
		char *nl;

		while ((nl = strrchr(o.err, '\n')) && nl[1] == '\0')
			*nl = '\0';
		snprintf(err, errlen, "%s %s %s: %s", argv[0], argv[1] ? argv[1] : "",
		         argv[1] && argv[2] ? argv[2] : "",
		         o.timed_out ? "timed out" : (o.err[0] ? o.err : "failed"));
	}
	secho_lab_out_free(&o);
	return rc;
}

/* ---- the keeper ---- */

static void *keeper_main(void *arg)
{
	struct secho_lab_keeper *k = arg;
	pid_t self = getpid();

	pthread_mutex_lock(&k->lock);
	for (;;) {
		while (!k->pending && !k->quit)
			pthread_cond_wait(&k->cv, &k->lock);
		if (!k->pending)
			break;
		k->pid = fork();
		k->err = errno;
		if (k->pid == 0)
			child_exec(k->argv, k->fds[0], k->fds[1], k->fds[2], k->deathsig, self);
		k->pending = false;
		pthread_cond_broadcast(&k->cv);
	}
	pthread_mutex_unlock(&k->lock);
	return NULL;
}

/* Contract: lab.h. */
int secho_lab_keeper_start(struct secho_lab_keeper *k)
{
	int e;

	memset(k, 0, sizeof(*k));
	pthread_mutex_init(&k->lock, NULL);
	pthread_cond_init(&k->cv, NULL);
	e = pthread_create(&k->thread, NULL, keeper_main, k);
	if (e != 0) {
		pthread_cond_destroy(&k->cv);
		pthread_mutex_destroy(&k->lock);
		return -e;
	}
	k->running = true;
	return 0;
}

/* Contract: lab.h. */
void secho_lab_keeper_stop(struct secho_lab_keeper *k)
{
	if (!k->running)
		return;
	pthread_mutex_lock(&k->lock);
	k->quit = true;
	pthread_cond_broadcast(&k->cv);
	pthread_mutex_unlock(&k->lock);
	pthread_join(k->thread, NULL);
	pthread_cond_destroy(&k->cv);
	pthread_mutex_destroy(&k->lock);
	k->running = false;
}

/* Contract: lab.h. */
pid_t secho_lab_spawn(struct secho_lab_keeper *k, char *const argv[], int in, int out, int err,
                      int deathsig)
{
	pid_t pid;
	int e;

	if (!k->running)
		return -EINVAL;
	pthread_mutex_lock(&k->lock);
	while (k->pending)
		pthread_cond_wait(&k->cv, &k->lock);
	k->argv = argv;
	k->fds[0] = in;
	k->fds[1] = out;
	k->fds[2] = err;
	k->deathsig = deathsig;
	k->pending = true;
	pthread_cond_broadcast(&k->cv);
	while (k->pending)
		pthread_cond_wait(&k->cv, &k->lock);
	pid = k->pid;
	e = k->err;
	pthread_mutex_unlock(&k->lock);
	return pid < 0 ? -e : pid;
}

/* Contract: lab.h. */
int secho_lab_exec(const struct secho_lab *lab, enum secho_lab_side side, char *const argv[],
                   int sig)
{
	char *v[256];
	pid_t parent = getppid();

	if (!argv[0])
		return -EINVAL;
	if (secho_lab_ns_argv(lab, side, argv, v, 256) == 0)
		return -EINVAL;
	/* The death signal survives execve (of a program that is not set-user-ID): first into
	 * ip, which enters the namespace and execs the program itself, so the program keeps
	 * our pid (a shell's $! names it). A parent gone before the prctl: do not start. */
	if (prctl(PR_SET_PDEATHSIG, sig) != 0)
		return -errno;
	if (getppid() != parent)
		return -ESRCH;
	execv(v[0], v);
	return -errno;
}

/* Contract: lab.h. */
bool secho_lab_find_tool(char *out, size_t cap, const char *name)
{
	static const char *const dirs[] = {"/usr/sbin", "/sbin", "/usr/bin", "/bin"};

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(out, cap, "%s/%s", dirs[i], name);
		if (access(out, X_OK) == 0)
			return true;
	}
	out[0] = '\0';
	return false;
}
