/*
 * src/lab/wire.c - the virtual wire: names, the topology of lab.h built and removed, the
 * owner marks and the sweep of stale labs.
 *
 * iproute2 makes the namespaces, the veth pair, addresses and the neighbour entry (the
 * commands are the ones a reader would type). What needs to be inside a namespace and has
 * no ip command (the IPv6 sysctls, tx checksum offload, waiting for the link, listing the
 * processes in a namespace) is done here, by a forked child that enters the namespace
 * (setns), so neither sysctl nor ethtool nor a poll loop of ip runs are needed.
 */
#include "lab/lab.h"
#include "secho/proto.h"
#include "sys/owner.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STEP_MS 10000 /* one ip command's deadline */

/* Contract: lab.h. */
int secho_lab_init(struct secho_lab *lab, const char *tag, unsigned long id, char *err,
                   size_t errlen)
{
	size_t n = strlen(tag);

	memset(lab, 0, sizeof(*lab));
	if (n == 0 || n > SECHO_LAB_TAG_MAX || id > 9999999999ul) {
		snprintf(err, errlen,
		         "a lab's tag is 1..%d lower-case letters and its id at most "
		         "10 digits",
		         SECHO_LAB_TAG_MAX);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		if (tag[i] < 'a' || tag[i] > 'z') {
			snprintf(err, errlen, "a lab's tag is lower-case letters ('%s')", tag);
			return -EINVAL;
		}
	}
	/* Interface names: at most 15 characters (IFNAMSIZ): 3 + 1 + 10. */
	snprintf(lab->ns[SECHO_LAB_HOST], sizeof(lab->ns[0]), "secho-%sh-%lu", tag, id);
	snprintf(lab->ns[SECHO_LAB_EP], sizeof(lab->ns[0]), "secho-%se-%lu", tag, id);
	snprintf(lab->ifname[SECHO_LAB_HOST], sizeof(lab->ifname[0]), "%sh%lu", tag, id);
	snprintf(lab->ifname[SECHO_LAB_EP], sizeof(lab->ifname[0]), "%se%lu", tag, id);
	snprintf(lab->mark, sizeof(lab->mark), "%s/%s", SECHO_LAB_MARK_DIR,
	         lab->ns[SECHO_LAB_HOST]);
	lab->mtu = SECHO_LAB_MTU;
	lab->queues = SECHO_LAB_QUEUES;
	if (!secho_lab_find_tool(lab->ip_bin, sizeof(lab->ip_bin), "ip")) {
		snprintf(err, errlen, "iproute2's ip is not installed (scripts/deps.sh)");
		return -ENOENT;
	}
	return 0;
}

/* Contract: lab.h. */
size_t secho_lab_ns_argv(const struct secho_lab *lab, enum secho_lab_side side, char *const *args,
                         char **out, size_t cap)
{
	size_t n = 0;

	if (cap < 5)
		return 0;
	out[n++] = (char *)lab->ip_bin;
	out[n++] = "netns";
	out[n++] = "exec";
	out[n++] = (char *)lab->ns[side];
	for (size_t i = 0; args[i] && n < cap - 1; i++)
		out[n++] = args[i];
	out[n] = NULL;
	return n;
}

/* /run/netns/NS exists. */
static bool ns_exists(const char *ns)
{
	char path[64];

	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	return access(path, F_OK) == 0;
}

/* Contract: lab.h. */
bool secho_lab_exists(const struct secho_lab *lab)
{
	return ns_exists(lab->ns[0]) && ns_exists(lab->ns[1]);
}

/* Up to cap pids of the processes in namespace ns (what `ip netns pids` prints: every
 * /proc/PID whose ns/net is the namespace's inode), never our own. Returns how many. */
static size_t ns_pids(const char *ns, pid_t *pids, size_t cap)
{
	char path[300];
	struct stat want, st;
	struct dirent *e;
	size_t n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	if (stat(path, &want) != 0)
		return 0;
	d = opendir("/proc");
	if (!d)
		return 0;
	while ((e = readdir(d)) && n < cap) {
		char *end;
		long p = strtol(e->d_name, &end, 10);

		if (*end || p <= 1 || p == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/ns/net", p);
		if (stat(path, &st) == 0 && st.st_ino == want.st_ino && st.st_dev == want.st_dev)
			pids[n++] = (pid_t)p;
	}
	closedir(d);
	return n;
}

/* Stop every process in the namespaces: SIGTERM, then (bounded: 2 s) SIGKILL for what is
 * left, and wait (1 s) for them to go. */
static void ns_stop_all(char ns[][32], size_t nns)
{
	pid_t pids[256];
	struct timespec tick = {0, 20 * 1000000};

	for (int round = 0; round < 150; round++) {
		size_t total = 0;

		for (size_t i = 0; i < nns; i++) {
			size_t n;

			if (!ns[i][0])
				continue;
			n = ns_pids(ns[i], pids, sizeof(pids) / sizeof(pids[0]));
			total += n;
			for (size_t k = 0; k < n; k++)
				if (round == 0 || round == 100)
					kill(pids[k], round == 0 ? SIGTERM : SIGKILL);
		}
		if (total == 0)
			return;
		nanosleep(&tick, NULL);
	}
}

/* Delete the namespaces that exist (after stopping their processes). */
static void ns_remove(const char *ip_bin, char ns[][32], size_t nns)
{
	ns_stop_all(ns, nns);
	for (size_t i = 0; i < nns; i++) {
		char *del[] = {(char *)ip_bin, "netns", "del", ns[i], NULL};

		if (ns[i][0] && ns_exists(ns[i]))
			(void)secho_lab_run_ok(del, STEP_MS, NULL, 0);
	}
}

/* What a child does inside a namespace (see in_ns()). */
enum ns_job { NS_PREPARE, NS_WAIT_RUNNING };

/* Write text to a sysctl file under /proc/sys. 0 or -errno. */
static int sysctl_write(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int rc = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		rc = -EIO;
	close(fd);
	return rc;
}

/* The child's work, in the namespace already: returns its exit status (0 ok, 1..3 which
 * step failed). Only async-signal-safe calls and plain syscalls (we are a fork of a
 * possibly threaded process). */
static int ns_job_run(enum ns_job job, const char *ifname)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		return 3;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, ifname, strnlen(ifname, IFNAMSIZ - 1));
	if (job == NS_PREPARE) {
		/* No IPv6 (no ND/MLD noise on the wire): /proc/sys/net is the namespace's. */
		if (sysctl_write("/proc/sys/net/ipv6/conf/all/disable_ipv6", "1") < 0 ||
		    sysctl_write("/proc/sys/net/ipv6/conf/default/disable_ipv6", "1") < 0)
			return 1;
		/* tx checksum offload off (`ethtool -K IF tx off`), so UDP checksums are
		 * filled in the frames the kernel sends instead of being left to a NIC that
		 * a veth does not have. */
		struct ethtool_value ev = {.cmd = ETHTOOL_STXCSUM, .data = 0};

		ifr.ifr_data = (char *)&ev;
		if (ioctl(s, SIOCETHTOOL, &ifr) != 0)
			return 2;
		return 0;
	}
	/* Up with carrier (ip's LOWER_UP; SIOCGIFFLAGS cannot show it: its flags are 16
	 * bits). A veth's queueing is attached by then: the end that comes up second is
	 * activated as it opens, the other by the kernel's link watch at once (a veth's
	 * carrier change is an urgent event). Bounded: 5 s. */
	for (int i = 0; i < 500; i++) {
		struct timespec tick = {0, 10 * 1000000};
		struct ethtool_value link = {.cmd = ETHTOOL_GLINK};

		ifr.ifr_data = (char *)&link;
		if (ioctl(s, SIOCETHTOOL, &ifr) == 0 && link.data &&
		    ioctl(s, SIOCGIFFLAGS, &ifr) == 0 && (ifr.ifr_flags & IFF_UP))
			return 0;
		nanosleep(&tick, NULL);
	}
	return 3;
}

/* Run job in the lab's side namespace, in a child process (setns changes the calling
 * thread's namespace: the caller's own must stay as it is). 0 or -errno, reason in err. */
static int in_ns(const struct secho_lab *lab, enum secho_lab_side side, enum ns_job job, char *err,
                 size_t errlen)
{
	static const char *const what[2][4] = {
	        {"", "IPv6 sysctls", "tx checksum offload off", "socket"},
	        {"", "", "", "the link did not come up within 5 s"},
	};
	char path[64];
	int fd, st = 0;
	pid_t pid;

	snprintf(path, sizeof(path), "/run/netns/%s", lab->ns[side]);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(fd);
		snprintf(err, errlen, "fork: %s", strerror(e));
		return -e;
	}
	if (pid == 0) {
		if (setns(fd, CLONE_NEWNET) != 0)
			_exit(4);
		_exit(ns_job_run(job, lab->ifname[side]));
	}
	close(fd);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	st = secho_lab_status(st);
	if (st == 0)
		return 0;
	snprintf(err, errlen, "%s in %s (%s): %s", job == NS_PREPARE ? "preparing" : "waiting for",
	         lab->ifname[side], lab->ns[side],
	         st >= 1 && st <= 3 ? what[job][st] : "cannot enter the namespace");
	return -EIO;
}

/* ---- owner marks ---- */

/* A namespace name a lab makes: "secho-" then letters, digits and '-' (nothing a path or
 * an option could be made of). */
static bool lab_ns_name_ok(const char *s)
{
	if (strncmp(s, "secho-", 6) != 0 || !s[6] || strlen(s) >= 32)
		return false;
	for (const char *p = s + 6; *p; p++)
		if (!islower((unsigned char)*p) && !isdigit((unsigned char)*p) && *p != '-')
			return false;
	return true;
}

struct lab_mark {
	long owner;
	unsigned long long start;
	char ns[2][32];
};

/* Parse a mark's text; false unless it is well formed. */
static bool mark_parse(const char *t, struct lab_mark *m)
{
	int used = 0;

	memset(m, 0, sizeof(*m));
	if (sscanf(t, "secho-lab 1\nowner %ld\nstart %llu\nnetns %31s %31s\n%n", &m->owner,
	           &m->start, m->ns[0], m->ns[1], &used) != 4 ||
	    !used || t[used])
		return false;
	return m->owner > 1 && lab_ns_name_ok(m->ns[0]) && lab_ns_name_ok(m->ns[1]);
}

/* Read the mark at dfd/name when it is a plain file of ours. */
static bool mark_read(int dfd, const char *name, struct lab_mark *m)
{
	char text[256];
	int fd = secho_owner_mark_read(dfd, name, text, sizeof(text));

	if (fd < 0)
		return false;
	close(fd);
	return mark_parse(text, m) && !strcmp(m->ns[0], name);
}

struct sweep_ctx {
	const char *prog, *ip_bin;
};

/* secho_owner_sweep's visit: remove the lab of a mark whose owner is gone. */
static bool sweep_visit(int dfd, const char *name, void *arg)
{
	const struct sweep_ctx *c = arg;
	struct lab_mark m;

	if (name[0] == '.' || !mark_read(dfd, name, &m) ||
	    secho_owner_alive(&(struct secho_owner){(pid_t)m.owner, m.start}))
		return false;
	ns_remove(c->ip_bin, m.ns, 2);
	if (unlinkat(dfd, name, 0) != 0)
		return false;
	if (c->prog)
		fprintf(stderr,
		        "%s: removed the lab %s %s (its owner, pid %ld, no longer "
		        "runs)\n",
		        c->prog, m.ns[0], m.ns[1], m.owner);
	return true;
}

/* Contract: lab.h. */
int secho_lab_sweep(const char *prog)
{
	char ip_bin[64];
	struct sweep_ctx c = {prog, ip_bin};

	if (!secho_lab_find_tool(ip_bin, sizeof(ip_bin), "ip"))
		return 0;
	return secho_owner_sweep(SECHO_LAB_MARK_DIR, sweep_visit, &c);
}

/* Write the mark for owner (O_EXCL). -EEXIST when a mark of a live owner is there; a stale
 * one is removed first (its lab too). */
static int mark_write(struct secho_lab *lab, pid_t owner, char *err, size_t errlen)
{
	unsigned long long start;
	int fd, rc = 0;

	if (secho_proc_start(owner, &start) < 0) {
		snprintf(err, errlen, "the owner, pid %d, does not run", (int)owner);
		return -ESRCH;
	}
	if (mkdir(SECHO_LAB_MARK_DIR, 0700) != 0 && errno != EEXIST) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", SECHO_LAB_MARK_DIR, strerror(errno));
		return rc;
	}
	fd = open(lab->mark, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", lab->mark,
		         rc == -EEXIST ? "a lab of that name is up (secho lab down removes it)"
		                       : strerror(errno));
		return rc;
	}
	if (dprintf(fd, "secho-lab 1\nowner %d\nstart %llu\nnetns %s %s\n", (int)owner, start,
	            lab->ns[0], lab->ns[1]) < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", lab->mark, strerror(errno));
	}
	close(fd);
	if (rc < 0)
		unlink(lab->mark);
	return rc;
}

/* Contract: lab.h. */
int secho_lab_up(struct secho_lab *lab, pid_t owner, char *err, size_t errlen)
{
	char *ip = lab->ip_bin, *h = lab->ns[0], *e = lab->ns[1];
	char *ih = lab->ifname[0], *ie = lab->ifname[1];
	char mtu[16], q[16];
	int rc;

	if (lab->mtu < SECHO_WIRE_MIN_MTU || lab->mtu > SECHO_WIRE_MAX_MTU || lab->queues < 1 ||
	    lab->queues > SECHO_LAB_MAX_QUEUES) {
		snprintf(err, errlen, "MTU %u or %u queues out of range", lab->mtu, lab->queues);
		return -EINVAL;
	}
	snprintf(mtu, sizeof(mtu), "%u", lab->mtu);
	snprintf(q, sizeof(q), "%u", lab->queues);
	(void)secho_lab_sweep("secho lab");
	rc = mark_write(lab, owner, err, errlen);
	if (rc < 0)
		return rc;

	char *const create[][24] = {
	        {ip, "netns", "add", h, NULL},
	        {ip, "netns", "add", e, NULL},
	        {ip,     "link", "add",  ih, "netns", h, "numtxqueues", q, "numrxqueues", q, "type",
	         "veth", "peer", "name", ie, "netns", e, "numtxqueues", q, "numrxqueues", q, NULL},
	};
	char *const config[][24] = {
	        {ip, "-n", h, "addr", "add", SECHO_LAB_HOST_CIDR, "dev", ih, NULL},
	        {ip, "-n", h, "link", "set", "dev", "lo", "up", NULL},
	        {ip, "-n", e, "link", "set", "dev", "lo", "up", NULL},
	        {ip, "-n", h, "link", "set", "dev", ih, "address", SECHO_LAB_HOST_MAC, "mtu", mtu,
	         "up", NULL},
	        {ip, "-n", e, "link", "set", "dev", ie, "address", SECHO_LAB_EP_MAC, "mtu", mtu,
	         "up", NULL},
	        {ip, "-n", h, "neigh", "replace", SECHO_LAB_EP_IP, "lladdr", SECHO_LAB_EP_MAC,
	         "dev", ih, "nud", "permanent", NULL},
	};

	for (size_t i = 0; i < sizeof(create) / sizeof(create[0]); i++)
		if ((rc = secho_lab_run_ok(create[i], STEP_MS, err, errlen)) < 0)
			goto fail;
	/* Before the links go up: no IPv6 address is ever made, no checksum left undone. */
	for (int s = 0; s < 2; s++)
		if ((rc = in_ns(lab, (enum secho_lab_side)s, NS_PREPARE, err, errlen)) < 0)
			goto fail;
	for (size_t i = 0; i < sizeof(config) / sizeof(config[0]); i++)
		if ((rc = secho_lab_run_ok(config[i], STEP_MS, err, errlen)) < 0)
			goto fail;
	for (int s = 0; s < 2; s++)
		if ((rc = in_ns(lab, (enum secho_lab_side)s, NS_WAIT_RUNNING, err, errlen)) < 0)
			goto fail;
	lab->up = true;
	return 0;
fail:
	secho_lab_down(lab);
	return rc;
}

/* Contract: lab.h. */
void secho_lab_down(struct secho_lab *lab)
{
	if (!lab->ip_bin[0])
		return;
	ns_remove(lab->ip_bin, lab->ns, 2);
	(void)unlink(lab->mark); /* named after the namespaces: this lab's whoever made it */
	lab->up = false;
}
