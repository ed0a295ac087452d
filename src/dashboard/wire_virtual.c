/*
 * src/dashboard/wire_virtual.c - the dashboard's wire: namespaces, key, endpoint process,
 * host tool runs (see dashboard.h).
 *
 * Virtual wire (default), the topology of tests/sh/netns.sh:
 *
 *   +------------- ns secho-dh-PID (host) -------+     +------ ns secho-de-PID (endpoint) ---+
 *   |  secho host paired|load|counters (raw)     |     |  secho serve --iface deP             |
 *   |  dhPID  192.0.2.1/24  02:00:00:00:00:01    |=====|  dePID  02:00:00:00:00:02            |
 *   |  neigh 192.0.2.2 -> 02:00:00:00:00:02      |veth |  no address: the endpoint answers    |
 *   +--------------------------------------------+     |  for 192.0.2.2 itself               |
 *                                                      +--------------------------------------+
 * One queue per direction, tx checksum offload and IPv6 off, as in netns.sh.
 *
 * --iface IF: no namespaces; `secho serve --iface IF --ip 192.0.2.2` runs in the
 * dashboard's own namespace and the host tool talks to 192.0.2.2 through the kernel (socket
 * mode), or raw on --host-iface with --dst-mac.
 *
 * Every program is started by fork/execve with an argument vector built here from fixed
 * strings and names derived from our PID and private directory; a request can only choose
 * numbers (count, size, seconds), which api.c has range-checked and formats itself.
 *
 * Children die with the dashboard: each sets PR_SET_PDEATHSIG after fork (SIGTERM for the
 * endpoint, which then drains and saves its sequence state; SIGKILL for the rest) and
 * exits at once if the dashboard is already gone (getppid() changed before the prctl).
 * The death signal follows the forking thread, so the endpoint is forked by the keeper
 * thread, which lives as long as the wire (dashboard.h); short-lived programs are forked
 * by the thread that waits for them.
 *
 * Leftovers: a dashboard killed by SIGKILL cannot remove its namespaces, its private
 * directory (with the endpoint's key) or, were a child to miss its death signal, its
 * processes. Each private directory therefore carries an owner mark, DIR/owner:
 *
 *   secho-dashboard 1
 *   pid PID                 the dashboard (also in the directory's name)
 *   start TICKS             its start time (/proc/PID/stat field 22: pid reuse shows)
 *   netns NS_HOST NS_EP     the namespaces it makes (virtual wire)
 *
 * held under flock(LOCK_EX) for the dashboard's whole life, and DIR/endpoint.pid
 * ("PID TICKS") while its endpoint runs. A new dashboard removes a directory
 * /tmp/secho-dash-PID.XXXXXX only when it is ours (a directory owned by this user, mode
 * 0700, not a link), its mark is well formed and names the PID of the directory's name,
 * the lock is free and that PID is not running with that start time: then it kills the
 * processes in the listed namespaces and the recorded endpoint (when it is the same
 * process), deletes the namespaces, overwrites the key and removes the directory.
 * Anything that cannot be proven stale is left alone.
 */
#include "dashboard/dashboard.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define OUT_CAP (8u << 20)

volatile sig_atomic_t dash_stopping;

static char *const fixed_env[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL};

/* Copy at most cap-1 bytes of src and terminate (a truncating strcpy). */
static void scopy(char *dst, size_t cap, const char *src)
{
	size_t n = strnlen(src, cap - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* CLOCK_MONOTONIC in seconds (deadlines). */
static double now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CLOCK_REALTIME in seconds (shown to clients). */
static double now_real(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

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
 * may block signals; our SIGPIPE is ignored), so `secho serve` sees our SIGTERM. It gets
 * deathsig when the forking thread ends (the dashboard dies), and does not start at all
 * when the dashboard died before the prctl took effect (it was reparented already). */
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
	(void)setpgid(0, 0); /* a terminal's ^C reaches the dashboard, which stops us in order */
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		_exit(127);
	execve(argv[0], argv, fixed_env);
	_exit(127);
}

/* A waitpid status as exit code, 128+signal, or -1. */
static int decode_status(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return -1;
}

/* Contract: dashboard.h. */
int dash_run(char *const argv[], unsigned timeout_ms, struct dash_proc_out *o)
{
	int po[2] = {-1, -1}, pe[2] = {-1, -1}, nul;
	size_t cap = 0;
	double deadline = now_mono() + timeout_ms / 1000.0;
	pid_t pid;
	int st = 0;

	memset(o, 0, sizeof(*o));
	o->status = -1;
	nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (nul < 0 || pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0) {
		snprintf(o->err, sizeof(o->err), "pipe: %s", strerror(errno));
		goto fail;
	}
	pid_t self = getpid();

	pid = fork();
	if (pid < 0) {
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
		double left = deadline - now_mono();
		char buf[16384];

		if (left <= 0 || dash_stopping) {
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
			if (i == 1) {
				tail_append(o->err, sizeof(o->err), buf, (size_t)r);
				continue;
			}
			if (o->out_len + (size_t)r + 1 > OUT_CAP)
				continue; /* over the cap: drop, the JSON parse will say so */
			if (o->out_len + (size_t)r + 1 > cap) {
				size_t ncap = cap ? cap * 2 : 65536;
				char *p;

				while (ncap < o->out_len + (size_t)r + 1)
					ncap *= 2;
				p = realloc(o->out, ncap);
				if (!p)
					continue;
				o->out = p;
				cap = ncap;
			}
			memcpy(o->out + o->out_len, buf, (size_t)r);
			o->out_len += (size_t)r;
			o->out[o->out_len] = '\0';
		}
	}
	for (int i = 0; i < 2; i++)
		if (fds[i].fd >= 0)
			close(fds[i].fd);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	o->status = decode_status(st);
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
	return -1;
}

/* ---- the keeper: forks the endpoint (see dashboard.h) ---- */

static void *keeper_main(void *arg)
{
	struct dash_keeper *k = arg;
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
			child_exec(k->argv, k->fds[0], k->fds[1], k->fds[2], SIGTERM, self);
		k->pending = false;
		pthread_cond_broadcast(&k->cv);
	}
	pthread_mutex_unlock(&k->lock);
	return NULL;
}

static int keeper_start(struct dash_keeper *k)
{
	memset(k, 0, sizeof(*k));
	pthread_mutex_init(&k->lock, NULL);
	pthread_cond_init(&k->cv, NULL);
	if (pthread_create(&k->thread, NULL, keeper_main, k) != 0) {
		pthread_cond_destroy(&k->cv);
		pthread_mutex_destroy(&k->lock);
		return -1;
	}
	k->running = true;
	return 0;
}

static void keeper_stop(struct dash_keeper *k)
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

/* Fork and exec argv in the keeper thread (stdin, stdout, stderr from fds). Returns the
 * child's pid, or -1 with errno. */
static pid_t keeper_spawn(struct dash_keeper *k, char *const argv[], int in, int out, int err)
{
	pid_t pid;

	pthread_mutex_lock(&k->lock);
	while (k->pending)
		pthread_cond_wait(&k->cv, &k->lock);
	k->argv = argv;
	k->fds[0] = in;
	k->fds[1] = out;
	k->fds[2] = err;
	k->pending = true;
	pthread_cond_broadcast(&k->cv);
	while (k->pending)
		pthread_cond_wait(&k->cv, &k->lock);
	pid = k->pid;
	errno = k->err;
	pthread_mutex_unlock(&k->lock);
	return pid;
}

/* A process's start time in clock ticks since boot (/proc/PID/stat field 22); false when
 * there is no such process. With the pid, it names one process: pids are reused. */
static bool proc_start(pid_t pid, unsigned long long *ticks)
{
	char path[32], buf[1024];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* The name (field 2) may hold spaces and ')': fields 3.. follow its last ')'. */
	char *p = strrchr(buf, ')');

	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	return p && sscanf(p + 1, "%llu", ticks) == 1;
}

/* Contract: dashboard.h. */
void dash_proc_out_free(struct dash_proc_out *o)
{
	free(o->out);
	o->out = NULL;
	o->out_len = 0;
}

/* Run a set-up command; returns 0 when it exited 0, else -1 with its stderr in err. */
static int run_ok(char *const argv[], char *err, size_t errlen)
{
	struct dash_proc_out o;
	int rc = -1;

	if (dash_run(argv, 10000, &o) == 0 && o.status == 0) {
		rc = 0;
	} else if (err) {
		char *nl;

		while ((nl = strrchr(o.err, '\n')) && nl[1] == '\0')
			*nl = '\0';
		snprintf(err, errlen, "%s %s %s: %s", argv[0], argv[1] ? argv[1] : "",
		         argv[1] && argv[2] ? argv[2] : "",
		         o.timed_out ? "timed out" : (o.err[0] ? o.err : "failed"));
	}
	dash_proc_out_free(&o);
	return rc;
}

/* name in the fixed system directories; true with its path in out. */
static bool find_tool(char *out, size_t cap, const char *name)
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

/* Overwrite a key file (a regular file, not followed if a link) with zeros, then unlink
 * it. at/name as for openat. */
static void wipe_file(int at, const char *name)
{
	int fd = openat(at, name, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	if (fd >= 0) {
		struct stat st;

		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
		    st.st_size < 65536) {
			char zero[4096] = {0};
			off_t left = st.st_size;

			while (left > 0) {
				size_t n = left > (off_t)sizeof(zero) ? sizeof(zero) : (size_t)left;

				if (write(fd, zero, n) <= 0)
					break;
				left -= (off_t)n;
			}
			(void)fsync(fd);
		}
		close(fd);
	}
	(void)unlinkat(at, name, 0);
}

/* ---- leftovers of killed dashboards (see the top of the file) ---- */

/* A dashboard's owner mark, as parsed. */
struct owner_mark {
	unsigned pid;
	unsigned long long start;
	char ns[2][32]; /* empty when none */
};

/* Parse DIR/owner's text (NUL-terminated); false unless it is well formed. The namespace
 * names must be the ones a dashboard with that pid makes. */
static bool owner_parse(const char *t, struct owner_mark *m)
{
	char want[2][32];
	int used = 0;

	memset(m, 0, sizeof(*m));
	if (sscanf(t, "secho-dashboard 1\npid %u\nstart %llu\n%n", &m->pid, &m->start, &used) !=
	            2 ||
	    !used)
		return false;
	t += used;
	if (!*t)
		return true; /* --iface: no namespaces */
	used = 0;
	if (sscanf(t, "netns %31s %31s\n%n", m->ns[0], m->ns[1], &used) != 2 || !used || t[used])
		return false;
	snprintf(want[0], sizeof(want[0]), "secho-dh-%u", m->pid);
	snprintf(want[1], sizeof(want[1]), "secho-de-%u", m->pid);
	return !strcmp(m->ns[0], want[0]) && !strcmp(m->ns[1], want[1]);
}

/* Kill every process in namespace ns and delete it (the veth goes with it), when it
 * exists. */
static void ns_kill_del(const char *ip_bin, const char *ns)
{
	char *del[] = {(char *)ip_bin, "netns", "del", (char *)ns, NULL};
	char *pids[] = {(char *)ip_bin, "netns", "pids", (char *)ns, NULL};
	char path[64];
	struct dash_proc_out o;

	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	if (access(path, F_OK) != 0)
		return;
	if (dash_run(pids, 5000, &o) == 0 && o.status == 0 && o.out) {
		char *save = NULL;

		for (char *t = strtok_r(o.out, " \n", &save); t; t = strtok_r(NULL, " \n", &save)) {
			long p = strtol(t, NULL, 10);

			if (p > 1 && p != getpid())
				kill((pid_t)p, SIGKILL);
		}
	}
	dash_proc_out_free(&o);
	(void)run_ok(del, NULL, 0);
}

/* Remove one stale directory /tmp/NAME whose owner mark m was checked (lock free, owner
 * gone). dfd is the directory. */
static void sweep_one(struct dash_wire *w, const char *name, int dfd, const struct owner_mark *m)
{
	char buf[64] = "";
	int fd = openat(dfd, "endpoint.pid", O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	int pid;
	unsigned long long t, now;
	DIR *d;

	/* Its endpoint, should it have outlived the death signal: only the very process. */
	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);

		close(fd);
		buf[n > 0 ? n : 0] = '\0';
		if (sscanf(buf, "%d %llu", &pid, &t) == 2 && pid > 1 && proc_start(pid, &now) &&
		    now == t)
			kill(pid, SIGKILL);
	}
	for (int i = 0; i < 2 && w->ip_bin[0]; i++)
		if (m->ns[i][0])
			ns_kill_del(w->ip_bin, m->ns[i]);
	wipe_file(dfd, "endpoint.key");
	d = fdopendir(dup(dfd));
	if (d) {
		struct dirent *e;

		while ((e = readdir(d)))
			if (e->d_type == DT_REG)
				(void)unlinkat(dfd, e->d_name, 0);
		closedir(d);
	}
	if (unlinkat(AT_FDCWD, name, AT_REMOVEDIR) == 0)
		fprintf(stderr,
		        "secho dashboard: removed what dashboard %u (no longer running) left: "
		        "%s%s%s%s\n",
		        m->pid, m->ns[0][0] ? "namespaces " : "", m->ns[0], m->ns[0][0] ? " " : "",
		        m->ns[1][0] ? m->ns[1] : "");
}

/* Sweep /tmp for the private directories of dashboards that are gone. Best effort: what
 * cannot be proven stale (see the top of the file) is left alone. */
static void sweep_stale(struct dash_wire *w)
{
	DIR *tmp = opendir("/tmp");
	struct dirent *e;

	if (!tmp)
		return;
	while ((e = readdir(tmp))) {
		char path[300], text[512];
		unsigned pid;
		int used = 0, dfd, ofd;
		struct stat st;
		struct owner_mark m;
		unsigned long long now;
		ssize_t n;

		/* secho-dash-PID.XXXXXX, as mkdtemp made it */
		if (strncmp(e->d_name, "secho-dash-", 11) != 0 || e->d_name[11] < '1' ||
		    e->d_name[11] > '9' ||
		    sscanf(e->d_name, "secho-dash-%u.%*6[A-Za-z0-9]%n", &pid, &used) != 1 ||
		    !used || e->d_name[used] || pid == (unsigned)getpid())
			continue;
		snprintf(path, sizeof(path), "/tmp/%s", e->d_name);
		if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
		    (st.st_mode & 07777) != 0700)
			continue;
		dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (dfd < 0)
			continue;
		ofd = openat(dfd, "owner", O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		if (ofd < 0 || fstat(ofd, &st) != 0 || !S_ISREG(st.st_mode) ||
		    flock(ofd, LOCK_EX | LOCK_NB) != 0) {
			/* no mark (not ours to judge), or its dashboard holds the lock: alive */
			if (ofd >= 0)
				close(ofd);
			close(dfd);
			continue;
		}
		n = read(ofd, text, sizeof(text) - 1);
		text[n > 0 ? n : 0] = '\0';
		if (owner_parse(text, &m) && m.pid == pid &&
		    !(proc_start((pid_t)pid, &now) && now == m.start))
			sweep_one(w, path, dfd, &m);
		close(ofd); /* releases the lock */
		close(dfd);
	}
	closedir(tmp);
}

/* Contract: dashboard.h. */
int dash_wire_init(struct dash_wire *w, const struct dash_cfg *cfg, char *err, size_t errlen)
{
	unsigned pid = (unsigned)getpid();
	unsigned long long start = 0;

	memset(w, 0, sizeof(*w));
	w->cfg = cfg;
	w->last_exit = -1;
	w->owner_fd = -1;
	if (cfg->secho_bin) {
		if (!realpath(cfg->secho_bin, w->secho)) {
			snprintf(err, errlen, "secho binary '%s': %s", cfg->secho_bin,
			         strerror(errno));
			return -1;
		}
	} else {
		ssize_t n = readlink("/proc/self/exe", w->secho, sizeof(w->secho) - 1);

		if (n <= 0) {
			snprintf(err, errlen, "cannot find our own binary: %s", strerror(errno));
			return -1;
		}
		w->secho[n] = '\0';
	}
	if (access(w->secho, X_OK) != 0) {
		snprintf(err, errlen, "'%s' is not executable", w->secho);
		return -1;
	}
	/* ip also removes a killed dashboard's namespaces, whichever wire we drive. */
	if (!find_tool(w->ip_bin, sizeof(w->ip_bin), "ip") && !cfg->iface) {
		snprintf(err, errlen, "iproute2's ip not found (scripts/deps.sh)");
		return -1;
	}
	if (!cfg->iface) {
		find_tool(w->ethtool_bin, sizeof(w->ethtool_bin), "ethtool");
		find_tool(w->sysctl_bin, sizeof(w->sysctl_bin), "sysctl");
		snprintf(w->ns_host, sizeof(w->ns_host), "secho-dh-%u", pid);
		snprintf(w->ns_ep, sizeof(w->ns_ep), "secho-de-%u", pid);
		snprintf(w->if_host, sizeof(w->if_host), "dh%u", pid);
		snprintf(w->if_ep, sizeof(w->if_ep), "de%u", pid);
	}
	sweep_stale(w);
	/* Named after our PID, and marked (DIR/owner), so that a later dashboard can clean up
	 * after a SIGKILL. */
	snprintf(w->dir, sizeof(w->dir), "/tmp/secho-dash-%u.XXXXXX", pid);
	if (!mkdtemp(w->dir)) {
		snprintf(err, errlen, "cannot create a private directory: %s", strerror(errno));
		w->dir[0] = '\0';
		return -1;
	}
	snprintf(w->key_path, sizeof(w->key_path), "%s/endpoint.key", w->dir);
	snprintf(w->state_path, sizeof(w->state_path), "%s/seq.state", w->dir);
	snprintf(w->log_path, sizeof(w->log_path), "%s/serve.log", w->dir);
	snprintf(w->owner_path, sizeof(w->owner_path), "%s/owner", w->dir);
	snprintf(w->eppid_path, sizeof(w->eppid_path), "%s/endpoint.pid", w->dir);
	w->owner_fd = open(w->owner_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (w->owner_fd < 0 || flock(w->owner_fd, LOCK_EX | LOCK_NB) != 0 ||
	    !proc_start((pid_t)pid, &start) ||
	    dprintf(w->owner_fd, "secho-dashboard 1\npid %u\nstart %llu\n", pid, start) < 0 ||
	    (!cfg->iface && dprintf(w->owner_fd, "netns %s %s\n", w->ns_host, w->ns_ep) < 0)) {
		snprintf(err, errlen, "cannot mark the private directory %s: %s", w->dir,
		         strerror(errno));
		dash_wire_fini(w);
		return -1;
	}
	if (keeper_start(&w->keeper) < 0) {
		snprintf(err, errlen, "cannot start a thread");
		dash_wire_fini(w);
		return -1;
	}
	return 0;
}

/* `ip netns exec NS ARGS...` into out (at most cap-1 arguments). */
static void in_ns(char **out, size_t cap, struct dash_wire *w, const char *ns, char *const *args)
{
	size_t n = 0;

	out[n++] = w->ip_bin;
	out[n++] = "netns";
	out[n++] = "exec";
	out[n++] = (char *)ns;
	for (size_t i = 0; args[i] && n < cap - 1; i++)
		out[n++] = args[i];
	out[n] = NULL;
}

/* Kill anything left in our namespaces and delete them (the veth goes with them).
 * Safe on a partial set-up. */
static void ns_remove(struct dash_wire *w)
{
	const char *ns[2] = {w->ns_ep, w->ns_host};

	if (!w->ip_bin[0] || !w->ns_host[0])
		return;
	for (int i = 0; i < 2; i++) {
		char *del[] = {w->ip_bin, "netns", "del", (char *)ns[i], NULL};
		char *pids[] = {w->ip_bin, "netns", "pids", (char *)ns[i], NULL};
		struct dash_proc_out o;

		/* Anything still running in the namespace (there should be nothing) goes too. */
		if (dash_run(pids, 5000, &o) == 0 && o.status == 0 && o.out) {
			char *save = NULL;

			for (char *t = strtok_r(o.out, " \n", &save); t;
			     t = strtok_r(NULL, " \n", &save)) {
				long p = strtol(t, NULL, 10);

				if (p > 1 && p != getpid())
					kill((pid_t)p, SIGKILL);
			}
		}
		dash_proc_out_free(&o);
		(void)run_ok(del, NULL, 0);
	}
	w->ns_up = false;
}

/* Build the topology at the top of the file and wait for the carrier. Returns 0, or -1
 * with the failing command's message (the caller removes what was made). */
static int ns_create(struct dash_wire *w, char *err, size_t errlen)
{
	char *ip = w->ip_bin, *h = w->ns_host, *e = w->ns_ep, *ih = w->if_host, *ie = w->if_ep;
	char *const cmds[][24] = {
	        {ip, "netns", "add", h, NULL},
	        {ip, "netns", "add", e, NULL},
	        {ip,  "link",        "add",  ih,     "netns", h,  "numtxqueues", "1", "numrxqueues",
	         "1", "type",        "veth", "peer", "name",  ie, "netns",       e,   "numtxqueues",
	         "1", "numrxqueues", "1",    NULL},
	        {ip, "-n", h, "link", "set", "dev", ih, "address", DASH_HOST_MAC, NULL},
	        {ip, "-n", e, "link", "set", "dev", ie, "address", DASH_EP_MAC, NULL},
	        /* Jumbo MTU: the counters report (about a kilobyte and a half once the
	         * counters have grown) must fit one frame; requests stay <= 1440 bytes. */
	        {ip, "-n", h, "link", "set", "dev", ih, "mtu", DASH_WIRE_MTU, NULL},
	        {ip, "-n", e, "link", "set", "dev", ie, "mtu", DASH_WIRE_MTU, NULL},
	        {ip, "-n", h, "addr", "add", DASH_HOST_CIDR, "dev", ih, NULL},
	        {ip, "-n", h, "link", "set", "dev", "lo", "up", NULL},
	        {ip, "-n", e, "link", "set", "dev", "lo", "up", NULL},
	        {ip, "-n", h, "link", "set", "dev", ih, "up", NULL},
	        {ip, "-n", e, "link", "set", "dev", ie, "up", NULL},
	        {ip, "-n", h, "neigh", "replace", DASH_EP_IP, "lladdr", DASH_EP_MAC, "dev", ih,
	         "nud", "permanent", NULL},
	};

	w->ns_up = true; /* from here on ns_remove() undoes a partial set-up */
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (run_ok(cmds[i], err, errlen) < 0)
			return -1;
		if (i == 6) {
			/* No IPv6 (no ND/MLD noise on the wire) and tx checksum offload off, so
			 * UDP checksums are filled in the frames the host's kernel sends. */
			const char *ns[2] = {h, e}, *ifs[2] = {ih, ie};

			for (int k = 0; k < 2; k++) {
				char *a6[] = {w->sysctl_bin, "-qw",
				              "net.ipv6.conf.all.disable_ipv6=1", NULL};
				char *d6[] = {w->sysctl_bin, "-qw",
				              "net.ipv6.conf.default.disable_ipv6=1", NULL};
				char *et[] = {w->ethtool_bin, "-K",  (char *)ifs[k],
				              "tx",           "off", NULL};
				char *v[12];

				if (w->sysctl_bin[0]) {
					in_ns(v, 12, w, ns[k], a6);
					(void)run_ok(v, NULL, 0);
					in_ns(v, 12, w, ns[k], d6);
					(void)run_ok(v, NULL, 0);
				}
				if (w->ethtool_bin[0]) {
					in_ns(v, 12, w, ns[k], et);
					(void)run_ok(v, NULL, 0);
				}
			}
		}
	}
	/* Wait (bounded, 5 s) for the carrier on both ends. */
	for (int t = 0; t < 50; t++) {
		char *sh[] = {ip, "-n", h, "-o", "link", "show", ih, NULL};
		char *se[] = {ip, "-n", e, "-o", "link", "show", ie, NULL};
		struct dash_proc_out a, b;
		bool up;

		(void)dash_run(sh, 5000, &a);
		(void)dash_run(se, 5000, &b);
		up = a.out && strstr(a.out, "LOWER_UP") && b.out && strstr(b.out, "LOWER_UP");
		dash_proc_out_free(&a);
		dash_proc_out_free(&b);
		if (up)
			return 0;
		usleep(100000);
	}
	snprintf(err, errlen, "the veth link did not come up within 5 s");
	return -1;
}

/* Overwrite the key file before unlinking it (it lives in our 0700 directory). */
static void key_remove(struct dash_wire *w)
{
	wipe_file(AT_FDCWD, w->key_path);
	unlink(w->state_path);
}

/* Start `secho serve` (in the endpoint namespace for the virtual wire), output to the
 * log file. Returns its pid, or -1 with a reason. */
static pid_t spawn_endpoint(struct dash_wire *w, char *err, size_t errlen)
{
	char *serve[] = {w->secho,  "serve",
	                 "--iface", (char *)(w->cfg->iface ? w->cfg->iface : w->if_ep),
	                 "--ip",    DASH_EP_IP,
	                 "--key",   w->key_path,
	                 "--state", w->state_path,
	                 NULL};
	char *argv[20];
	int log, nul;
	pid_t pid;

	if (w->cfg->iface) {
		memcpy(argv, serve, sizeof(serve));
	} else {
		in_ns(argv, 20, w, w->ns_ep, serve);
	}
	log = open(w->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (log < 0 || nul < 0) {
		snprintf(err, errlen, "endpoint log: %s", strerror(errno));
		if (log >= 0)
			close(log);
		if (nul >= 0)
			close(nul);
		return -1;
	}
	pid = keeper_spawn(&w->keeper, argv, nul, log, log);
	if (pid < 0)
		snprintf(err, errlen, "fork: %s", strerror(errno));
	close(log);
	close(nul);
	if (pid > 0) {
		/* The mark a later dashboard needs to find this process should we be killed. */
		unsigned long long t;
		int fd = open(w->eppid_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		              0600);

		if (fd >= 0 && proc_start(pid, &t))
			dprintf(fd, "%d %llu\n", (int)pid, t);
		if (fd >= 0)
			close(fd);
	}
	return pid;
}

/* The endpoint log's last line (for a start failure). */
static void log_tail(struct dash_wire *w, char *out, size_t cap)
{
	char buf[2048];
	int fd = open(w->log_path, O_RDONLY | O_CLOEXEC);
	ssize_t n = 0;
	off_t sz;

	out[0] = '\0';
	if (fd < 0)
		return;
	sz = lseek(fd, 0, SEEK_END);
	if (sz > (off_t)sizeof(buf) - 1)
		(void)lseek(fd, sz - (off_t)sizeof(buf) + 1, SEEK_SET);
	else
		(void)lseek(fd, 0, SEEK_SET);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		buf[--n] = '\0';
	char *nl = strrchr(buf, '\n');

	scopy(out, cap, nl ? nl + 1 : buf);
}

/* Contract: dashboard.h. */
bool dash_wire_running(struct dash_wire *w)
{
	int st;

	if (w->ep_pid <= 0)
		return false;
	if (waitpid(w->ep_pid, &st, WNOHANG) == w->ep_pid) {
		w->last_exit = decode_status(st);
		w->ep_pid = 0;
		unlink(w->eppid_path);
		return false;
	}
	return true;
}

/* SIGTERM (the endpoint drains and flushes its sequence state), SIGKILL after 3 s;
 * records the exit status. */
static void endpoint_kill(struct dash_wire *w)
{
	int st;

	if (w->ep_pid <= 0)
		return;
	kill(w->ep_pid, SIGTERM);
	for (int i = 0; i < 30; i++) {
		if (waitpid(w->ep_pid, &st, WNOHANG) == w->ep_pid) {
			w->last_exit = decode_status(st);
			w->ep_pid = 0;
			unlink(w->eppid_path);
			return;
		}
		usleep(100000);
	}
	kill(w->ep_pid, SIGKILL);
	while (waitpid(w->ep_pid, &st, 0) < 0 && errno == EINTR)
		;
	w->last_exit = decode_status(st);
	w->ep_pid = 0;
	unlink(w->eppid_path);
}

/* Contract: dashboard.h. */
void dash_wire_stop(struct dash_wire *w)
{
	endpoint_kill(w);
	if (w->ns_up)
		ns_remove(w);
	key_remove(w);
}

/* Contract: dashboard.h. */
int dash_wire_start(struct dash_wire *w, char *err, size_t errlen)
{
	char idbuf[16];
	double t0;

	if (dash_wire_running(w))
		return 0;
	dash_wire_stop(w); /* leftovers of an endpoint that died */
	w->last_exit = -1;
	if (!w->cfg->iface && ns_create(w, err, errlen) < 0)
		goto fail;

	/* A fresh key per start: new key id, new sequence state. */
	w->key_id++;
	snprintf(idbuf, sizeof(idbuf), "%u", w->key_id % 65536);
	char *kg[] = {w->secho, "keygen", "--key-id", idbuf, "--out", w->key_path, NULL};

	if (run_ok(kg, err, errlen) < 0)
		goto fail;

	w->ep_pid = spawn_endpoint(w, err, errlen);
	if (w->ep_pid < 0) {
		w->ep_pid = 0;
		goto fail;
	}
	/* Ready when a counters report comes back verified (bounded: 10 s). */
	t0 = now_mono();
	for (;;) {
		static const char *const extra[] = {"--timeout", "200", NULL};
		char e2[256];
		int st;
		json_t *j;

		if (!dash_wire_running(w)) {
			char tail[512];

			log_tail(w, tail, sizeof(tail));
			snprintf(err, errlen, "the endpoint exited (status %d): %s", w->last_exit,
			         tail[0] ? tail : "no output");
			goto fail;
		}
		j = dash_wire_host(w, "counters", extra, 5, &st, e2, sizeof(e2));
		if (j) {
			json_decref(j);
			break;
		}
		if (dash_stopping) {
			snprintf(err, errlen, "the dashboard is stopping");
			goto fail;
		}
		if (now_mono() - t0 > 10) {
			snprintf(err, errlen, "the endpoint did not answer within 10 s: %s", e2);
			goto fail;
		}
		usleep(200000);
	}
	w->started_at = now_real();
	return 0;
fail:
	dash_wire_stop(w);
	return -1;
}

/* Contract: dashboard.h. */
json_t *dash_wire_status(struct dash_wire *w)
{
	bool run = dash_wire_running(w);
	json_t *j = json_object();
	char tail[512];

	json_object_set_new(j, "running", json_boolean(run));
	json_object_set_new(j, "wire", json_string(w->cfg->iface ? "interface" : "virtual"));
	if (w->cfg->iface) {
		json_object_set_new(j, "iface", json_string(w->cfg->iface));
	} else {
		json_object_set_new(j, "host_ns", json_string(w->ns_host));
		json_object_set_new(j, "endpoint_ns", json_string(w->ns_ep));
		json_object_set_new(j, "host_iface", json_string(w->if_host));
		json_object_set_new(j, "endpoint_iface", json_string(w->if_ep));
		json_object_set_new(j, "host_mac", json_string(DASH_HOST_MAC));
		json_object_set_new(j, "endpoint_mac", json_string(DASH_EP_MAC));
		json_object_set_new(j, "namespaces_up", json_boolean(w->ns_up));
	}
	json_object_set_new(j, "host_ip", json_string(DASH_HOST_IP));
	json_object_set_new(j, "endpoint_ip", json_string(DASH_EP_IP));
	json_object_set_new(j, "pid", run ? json_integer(w->ep_pid) : json_null());
	json_object_set_new(j, "key_id", w->key_id ? json_integer(w->key_id % 65536) : json_null());
	json_object_set_new(j, "started_at", run ? json_real(w->started_at) : json_null());
	json_object_set_new(j, "uptime_s",
	                    run ? json_real(now_real() - w->started_at) : json_null());
	json_object_set_new(j, "last_exit",
	                    w->last_exit >= 0 ? json_integer(w->last_exit) : json_null());
	log_tail(w, tail, sizeof(tail));
	json_object_set_new(j, "log_tail", json_string(tail));
	return j;
}

/* An interface's MTU from sysfs as decimal text, clamped to the host tool's 576..9000;
 * "1500" when it cannot be read. */
static void iface_mtu(const char *ifname, char *out, size_t cap)
{
	char path[64], buf[16] = "";
	long v = 1500;
	int fd;

	snprintf(path, sizeof(path), "/sys/class/net/%s/mtu", ifname);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);

		if (n > 0) {
			buf[n] = '\0';
			v = strtol(buf, NULL, 10);
		}
		close(fd);
	}
	if (v < 576)
		v = 576;
	if (v > 9000)
		v = 9000;
	snprintf(out, cap, "%ld", v);
}

/* Contract: dashboard.h. */
json_t *dash_wire_host(struct dash_wire *w, const char *sub, const char *const *extra,
                       unsigned timeout_s, int *status, char *err, size_t errlen)
{
	char *base[32], *argv[40];
	size_t n = 0;
	struct dash_proc_out o;
	json_error_t je;
	json_t *j;

	char mtu[16];

	if (w->cfg->iface)
		iface_mtu(w->cfg->host_iface ? w->cfg->host_iface : w->cfg->iface, mtu,
		          sizeof(mtu));
	else
		snprintf(mtu, sizeof(mtu), "%s", DASH_WIRE_MTU);
	base[n++] = w->secho;
	base[n++] = "host";
	base[n++] = (char *)sub;
	base[n++] = "--key";
	base[n++] = w->key_path;
	if (!w->cfg->iface) {
		base[n++] = "--iface";
		base[n++] = w->if_host;
		base[n++] = "--dst-mac";
		base[n++] = DASH_EP_MAC;
	} else if (w->cfg->host_iface) {
		base[n++] = "--iface";
		base[n++] = (char *)w->cfg->host_iface;
		base[n++] = "--dst-mac";
		base[n++] = (char *)w->cfg->dst_mac;
	}
	base[n++] = "--dst-ip";
	base[n++] = DASH_EP_IP;
	/* The counters report can be larger than a 1500-byte frame holds; the endpoint sizes
	 * it by its interface's MTU, so fetch it with the same (jumbo on the virtual wire). */
	if (!strcmp(sub, "counters")) {
		base[n++] = "--mtu";
		base[n++] = mtu;
	}
	for (size_t i = 0; extra && extra[i] && n < 28; i++)
		base[n++] = (char *)extra[i];
	base[n++] = "--json";
	base[n] = NULL;
	if (!w->cfg->iface)
		in_ns(argv, 40, w, w->ns_host, base);
	else
		memcpy(argv, base, (n + 1) * sizeof(char *));

	*status = -1;
	if (dash_run(argv, timeout_s * 1000, &o) < 0) {
		snprintf(err, errlen, "cannot run secho host: %s", o.err);
		return NULL;
	}
	*status = o.status;
	j = o.out ? json_loadb(o.out, o.out_len, 0, &je) : NULL;
	if (!j || !json_is_object(j)) {
		char *nl;

		while ((nl = strrchr(o.err, '\n')) && nl[1] == '\0')
			*nl = '\0';
		nl = strrchr(o.err, '\n');
		snprintf(err, errlen, "secho host %s %s (status %d): %s", sub,
		         o.timed_out ? "timed out" : "gave no JSON", o.status,
		         nl ? nl + 1 : (o.err[0] ? o.err : "no message"));
		json_decref(j);
		j = NULL;
	}
	dash_proc_out_free(&o);
	return j;
}

/* Contract: dashboard.h. */
void dash_wire_fini(struct dash_wire *w)
{
	DIR *d;

	dash_wire_stop(w);
	keeper_stop(&w->keeper);
	if (!w->dir[0])
		return;
	/* Whatever the programs left in our directory (log, the state file's lock): only
	 * plain files directly inside it, never following a link. */
	d = opendir(w->dir);
	if (d) {
		struct dirent *e;

		while ((e = readdir(d)))
			if (e->d_type == DT_REG)
				(void)unlinkat(dirfd(d), e->d_name, 0);
		closedir(d);
	}
	rmdir(w->dir);
	if (w->owner_fd >= 0)
		close(w->owner_fd); /* the mark is gone: releasing the lock last changes nothing */
	w->owner_fd = -1;
	w->dir[0] = '\0';
}
