/*
 * src/dashboard/runner.c - the programs the dashboard runs and where: the wire (the lab's
 * virtual wire or --iface), the key, the endpoint process and the host tool's runs, and
 * the sweep of what killed dashboards left (see dashboard.h).
 *
 * Virtual wire (default): the lab of src/lab/lab.h with tag "d" and our PID as its id
 * (namespaces secho-dh-PID and secho-de-PID, interfaces dhPID and dePID), the one topology
 * the tests and the demo use too; `secho serve` runs in the endpoint namespace and
 * `secho host` raw in the host namespace.
 *
 * --iface IF: no namespaces; `secho serve --iface IF --ip 192.0.2.2` runs in the
 * dashboard's own namespace and the host tool talks to 192.0.2.2 through the kernel (socket
 * mode), or raw on --host-iface with --dst-mac.
 *
 * Every program is started by fork/execve (src/lab/proc.c) with an argument vector built
 * here from fixed strings and names derived from our PID and private directory; a request
 * can only choose numbers (count, size, seconds), which api.c has range-checked and formats
 * itself.
 *
 * Children die with the dashboard: the lab gives each a parent-death signal (SIGTERM for
 * the endpoint, which then drains and saves its sequence state; SIGKILL for the rest). The
 * death signal follows the forking thread, so the endpoint is forked by the lab's keeper
 * thread, which lives as long as the wire; short-lived programs are forked by the thread
 * that waits for them.
 *
 * Leftovers: a dashboard killed by SIGKILL cannot remove its lab, its private directory
 * (with the endpoint's key) or, were a child to miss its death signal, its processes. Its
 * lab is marked as every lab is (lab.h: the next dashboard's secho_lab_sweep() removes
 * it), and each private directory carries an owner mark, DIR/owner:
 *
 *   secho-dashboard 1
 *   pid PID                 the dashboard (also in the directory's name)
 *   start TICKS             its start time (src/sys/owner.h: pid reuse shows)
 *   netns NS_HOST NS_EP     the namespaces it makes (virtual wire)
 *
 * held under flock(LOCK_EX) for the dashboard's whole life, and DIR/endpoint.pid
 * ("PID TICKS") while its endpoint runs. A new dashboard removes a directory
 * /tmp/secho-dash-PID.XXXXXX only when it is ours (a directory owned by this user, mode
 * 0700, not a link), its mark is well formed and names the PID of the directory's name,
 * the lock is free and that PID is not running with that start time: then it kills the
 * recorded endpoint (when it is the same process), overwrites the key and removes the
 * directory. Anything that cannot be proven stale is left alone.
 */
#include "dashboard/dashboard.h"
#include "secho/proto.h"
#include "sys/clock.h"
#include "sys/owner.h"

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

/* Copy at most cap-1 bytes of src and terminate (a truncating strcpy). */
static void scopy(char *dst, size_t cap, const char *src)
{
	size_t n = strnlen(src, cap - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
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

/* Remove one stale directory /tmp/NAME whose owner mark m was checked (lock free, owner
 * gone). dfd is the directory. */
static void sweep_one(const char *name, int dfd, const struct owner_mark *m)
{
	char buf[64] = "";
	int fd = openat(dfd, "endpoint.pid", O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	int pid;
	unsigned long long t;
	DIR *d;

	/* Its endpoint, should it have outlived the death signal: only the very process. */
	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);

		close(fd);
		buf[n > 0 ? n : 0] = '\0';
		if (sscanf(buf, "%d %llu", &pid, &t) == 2)
			(void)secho_owner_kill(&(struct secho_owner){pid, t}, SIGKILL);
	}
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

/* secho_owner_sweep's visit of /tmp/NAME: remove it when it is the private directory of a
 * dashboard that is gone. Best effort: what cannot be proven stale (see the top of the
 * file) is left alone. */
static bool sweep_visit(int tmp, const char *name, void *arg)
{
	char path[300], text[512];
	unsigned pid;
	int used = 0, dfd, ofd;
	struct stat st;
	struct owner_mark m;
	bool gone = false;

	(void)tmp;
	(void)arg;
	/* secho-dash-PID.XXXXXX, as mkdtemp made it */
	if (strncmp(name, "secho-dash-", 11) != 0 || name[11] < '1' || name[11] > '9' ||
	    sscanf(name, "secho-dash-%u.%*6[A-Za-z0-9]%n", &pid, &used) != 1 || !used ||
	    name[used] || pid == (unsigned)getpid())
		return false;
	snprintf(path, sizeof(path), "/tmp/%s", name);
	if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 07777) != 0700)
		return false;
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (dfd < 0)
		return false;
	ofd = secho_owner_mark_read(dfd, "owner", text, sizeof(text));
	/* no mark (not ours to judge), or its dashboard holds the lock: alive */
	if (ofd >= 0 && flock(ofd, LOCK_EX | LOCK_NB) == 0 && owner_parse(text, &m) &&
	    m.pid == pid && !secho_owner_alive(&(struct secho_owner){(pid_t)pid, m.start})) {
		sweep_one(path, dfd, &m);
		gone = true;
	}
	if (ofd >= 0)
		close(ofd); /* releases the lock */
	close(dfd);
	return gone;
}

/* Contract: dashboard.h. */
int dash_wire_init(struct dash_wire *w, const struct dash_cfg *cfg, char *err, size_t errlen)
{
	unsigned pid = (unsigned)getpid();
	unsigned long long start = 0;
	int rc;

	memset(w, 0, sizeof(*w));
	w->cfg = cfg;
	w->last_exit = -1;
	w->owner_fd = -1;
	if (cfg->secho_bin) {
		if (!realpath(cfg->secho_bin, w->secho)) {
			rc = -errno;
			snprintf(err, errlen, "secho binary '%s': %s", cfg->secho_bin,
			         strerror(-rc));
			return rc;
		}
	} else {
		ssize_t n = readlink("/proc/self/exe", w->secho, sizeof(w->secho) - 1);

		if (n <= 0) {
			rc = n < 0 ? -errno : -ENOENT;
			snprintf(err, errlen, "cannot find our own binary: %s", strerror(-rc));
			return rc;
		}
		w->secho[n] = '\0';
	}
	if (access(w->secho, X_OK) != 0) {
		snprintf(err, errlen, "'%s' is not executable", w->secho);
		return -EACCES;
	}
	if (!cfg->iface) {
		/* The lab's names: tag "d", our PID (secho-dh-PID, secho-de-PID, dhPID, dePID). */
		rc = secho_lab_init(&w->lab, "d", pid, err, errlen);
		if (rc < 0)
			return rc;
	}
	/* What killed dashboards (and killed tests) left: their labs, then our directories. */
	(void)secho_lab_sweep("secho dashboard");
	(void)secho_owner_sweep("/tmp", sweep_visit, NULL);
	/* Named after our PID, and marked (DIR/owner), so that a later dashboard can clean up
	 * after a SIGKILL. */
	snprintf(w->dir, sizeof(w->dir), "/tmp/secho-dash-%u.XXXXXX", pid);
	if (!mkdtemp(w->dir)) {
		rc = -errno;
		snprintf(err, errlen, "cannot create a private directory: %s", strerror(-rc));
		w->dir[0] = '\0';
		return rc;
	}
	snprintf(w->key_path, sizeof(w->key_path), "%s/endpoint.key", w->dir);
	snprintf(w->state_path, sizeof(w->state_path), "%s/seq.state", w->dir);
	snprintf(w->log_path, sizeof(w->log_path), "%s/serve.log", w->dir);
	snprintf(w->owner_path, sizeof(w->owner_path), "%s/owner", w->dir);
	snprintf(w->eppid_path, sizeof(w->eppid_path), "%s/endpoint.pid", w->dir);
	w->owner_fd = open(w->owner_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (w->owner_fd < 0 || flock(w->owner_fd, LOCK_EX | LOCK_NB) != 0 ||
	    secho_proc_start((pid_t)pid, &start) < 0 ||
	    dprintf(w->owner_fd, "secho-dashboard 1\npid %u\nstart %llu\n", pid, start) < 0 ||
	    (!cfg->iface && dprintf(w->owner_fd, "netns %s %s\n", w->lab.ns[SECHO_LAB_HOST],
	                            w->lab.ns[SECHO_LAB_EP]) < 0)) {
		rc = errno ? -errno : -EIO;
		snprintf(err, errlen, "cannot mark the private directory %s: %s", w->dir,
		         strerror(-rc));
		dash_wire_fini(w);
		return rc;
	}
	rc = secho_lab_keeper_start(&w->keeper);
	if (rc < 0) {
		snprintf(err, errlen, "cannot start a thread: %s", strerror(-rc));
		dash_wire_fini(w);
		return rc;
	}
	return 0;
}

/* Overwrite the key file before unlinking it (it lives in our 0700 directory). */
static void key_remove(struct dash_wire *w)
{
	wipe_file(AT_FDCWD, w->key_path);
	unlink(w->state_path);
}

/* Start `secho serve` (in the endpoint namespace for the virtual wire), output to the
 * log file. Returns its pid, or -errno with a reason. */
static pid_t spawn_endpoint(struct dash_wire *w, char *err, size_t errlen)
{
	char *serve[] = {
	        w->secho,  "serve",
	        "--iface", (char *)(w->cfg->iface ? w->cfg->iface : w->lab.ifname[SECHO_LAB_EP]),
	        "--ip",    SECHO_LAB_EP_IP,
	        "--key",   w->key_path,
	        "--state", w->state_path,
	        NULL};
	char *argv[20];
	int log, nul;
	pid_t pid;

	if (w->cfg->iface) {
		memcpy(argv, serve, sizeof(serve));
	} else {
		(void)secho_lab_ns_argv(&w->lab, SECHO_LAB_EP, serve, argv, 20);
	}
	log = open(w->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (log < 0 || nul < 0) {
		int e = errno;

		snprintf(err, errlen, "endpoint log: %s", strerror(e));
		if (log >= 0)
			close(log);
		if (nul >= 0)
			close(nul);
		return -e;
	}
	pid = secho_lab_spawn(&w->keeper, argv, nul, log, log, SIGTERM);
	if (pid < 0)
		snprintf(err, errlen, "fork: %s", strerror((int)-pid));
	close(log);
	close(nul);
	if (pid > 0) {
		/* The mark a later dashboard needs to find this process should we be killed. */
		unsigned long long t;
		int fd = open(w->eppid_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		              0600);

		if (fd >= 0 && secho_proc_start(pid, &t) == 0)
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
		w->last_exit = secho_lab_status(st);
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
			w->last_exit = secho_lab_status(st);
			w->ep_pid = 0;
			unlink(w->eppid_path);
			return;
		}
		usleep(100000);
	}
	kill(w->ep_pid, SIGKILL);
	while (waitpid(w->ep_pid, &st, 0) < 0 && errno == EINTR)
		;
	w->last_exit = secho_lab_status(st);
	w->ep_pid = 0;
	unlink(w->eppid_path);
}

/* Contract: dashboard.h. */
void dash_wire_stop(struct dash_wire *w)
{
	endpoint_kill(w);
	if (w->lab.up)
		secho_lab_down(&w->lab);
	key_remove(w);
}

/* Contract: dashboard.h. */
int dash_wire_start(struct dash_wire *w, char *err, size_t errlen)
{
	char idbuf[16];
	double t0;
	pid_t pid;
	int rc = 0;

	if (dash_wire_running(w))
		return 0;
	dash_wire_stop(w); /* leftovers of an endpoint that died */
	w->last_exit = -1;
	if (!w->cfg->iface && (rc = secho_lab_up(&w->lab, getpid(), err, errlen)) < 0)
		goto fail;

	/* A fresh key per start: new key id, new sequence state. */
	w->key_id++;
	snprintf(idbuf, sizeof(idbuf), "%u", w->key_id % 65536);
	char *kg[] = {w->secho, "keygen", "--key-id", idbuf, "--out", w->key_path, NULL};

	if ((rc = secho_lab_run_ok(kg, 10000, err, errlen)) < 0)
		goto fail;

	pid = spawn_endpoint(w, err, errlen);
	if (pid < 0) {
		rc = (int)pid;
		goto fail;
	}
	w->ep_pid = pid;
	/* Ready when a counters report comes back verified (bounded: 10 s). */
	t0 = secho_mono_s();
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
			rc = -ECHILD;
			goto fail;
		}
		j = dash_wire_host(w, "counters", extra, 5, &st, e2, sizeof(e2));
		if (j) {
			json_decref(j);
			break;
		}
		if (secho_lab_stopping) {
			snprintf(err, errlen, "the dashboard is stopping");
			rc = -EINTR;
			goto fail;
		}
		if (secho_mono_s() - t0 > 10) {
			snprintf(err, errlen, "the endpoint did not answer within 10 s: %s", e2);
			rc = -ETIMEDOUT;
			goto fail;
		}
		usleep(200000);
	}
	w->started_at = secho_real_s();
	return 0;
fail:
	dash_wire_stop(w);
	return rc;
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
		json_object_set_new(j, "host_ns", json_string(w->lab.ns[SECHO_LAB_HOST]));
		json_object_set_new(j, "endpoint_ns", json_string(w->lab.ns[SECHO_LAB_EP]));
		json_object_set_new(j, "host_iface", json_string(w->lab.ifname[SECHO_LAB_HOST]));
		json_object_set_new(j, "endpoint_iface", json_string(w->lab.ifname[SECHO_LAB_EP]));
		json_object_set_new(j, "host_mac", json_string(SECHO_LAB_HOST_MAC));
		json_object_set_new(j, "endpoint_mac", json_string(SECHO_LAB_EP_MAC));
		json_object_set_new(j, "namespaces_up", json_boolean(w->lab.up));
	}
	json_object_set_new(j, "host_ip", json_string(SECHO_LAB_HOST_IP));
	json_object_set_new(j, "endpoint_ip", json_string(SECHO_LAB_EP_IP));
	json_object_set_new(j, "pid", run ? json_integer(w->ep_pid) : json_null());
	json_object_set_new(j, "key_id", w->key_id ? json_integer(w->key_id % 65536) : json_null());
	json_object_set_new(j, "started_at", run ? json_real(w->started_at) : json_null());
	json_object_set_new(j, "uptime_s",
	                    run ? json_real(secho_real_s() - w->started_at) : json_null());
	json_object_set_new(j, "last_exit",
	                    w->last_exit >= 0 ? json_integer(w->last_exit) : json_null());
	log_tail(w, tail, sizeof(tail));
	json_object_set_new(j, "log_tail", json_string(tail));
	return j;
}

/* An interface's MTU from sysfs as decimal text, clamped to the host tool's range
 * (SECHO_WIRE_MIN_MTU..SECHO_WIRE_MAX_MTU); the default MTU when it cannot be read. */
static void iface_mtu(const char *ifname, char *out, size_t cap)
{
	char path[64], buf[16] = "";
	long v = SECHO_WIRE_DEFAULT_MTU;
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
	if (v < SECHO_WIRE_MIN_MTU)
		v = SECHO_WIRE_MIN_MTU;
	if (v > SECHO_WIRE_MAX_MTU)
		v = SECHO_WIRE_MAX_MTU;
	snprintf(out, cap, "%ld", v);
}

/* Contract: dashboard.h. */
json_t *dash_wire_host(struct dash_wire *w, const char *sub, const char *const *extra,
                       unsigned timeout_s, int *status, char *err, size_t errlen)
{
	char *base[32], *argv[40];
	size_t n = 0;
	struct secho_lab_out o;
	json_error_t je;
	json_t *j;

	char mtu[16];

	if (w->cfg->iface)
		iface_mtu(w->cfg->host_iface ? w->cfg->host_iface : w->cfg->iface, mtu,
		          sizeof(mtu));
	else
		snprintf(mtu, sizeof(mtu), "%u", w->lab.mtu);
	base[n++] = w->secho;
	base[n++] = "host";
	base[n++] = (char *)sub;
	base[n++] = "--key";
	base[n++] = w->key_path;
	if (!w->cfg->iface) {
		base[n++] = "--iface";
		base[n++] = w->lab.ifname[SECHO_LAB_HOST];
		base[n++] = "--dst-mac";
		base[n++] = SECHO_LAB_EP_MAC;
	} else if (w->cfg->host_iface) {
		base[n++] = "--iface";
		base[n++] = (char *)w->cfg->host_iface;
		base[n++] = "--dst-mac";
		base[n++] = (char *)w->cfg->dst_mac;
	}
	base[n++] = "--dst-ip";
	base[n++] = SECHO_LAB_EP_IP;
	/* The endpoint sizes the counters report by its interface's MTU: fetch it with the
	 * same. */
	if (!strcmp(sub, "counters")) {
		base[n++] = "--mtu";
		base[n++] = mtu;
	}
	for (size_t i = 0; extra && extra[i] && n < 28; i++)
		base[n++] = (char *)extra[i];
	base[n++] = "--json";
	base[n] = NULL;
	if (!w->cfg->iface)
		(void)secho_lab_ns_argv(&w->lab, SECHO_LAB_HOST, base, argv, 40);
	else
		memcpy(argv, base, (n + 1) * sizeof(char *));

	*status = -1;
	if (secho_lab_run(argv, timeout_s * 1000, &o) < 0) {
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
	secho_lab_out_free(&o);
	return j;
}

/* Contract: dashboard.h. */
void dash_wire_fini(struct dash_wire *w)
{
	DIR *d;

	dash_wire_stop(w);
	secho_lab_keeper_stop(&w->keeper);
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
