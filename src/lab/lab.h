/*
 * src/lab/lab.h - the lab: the one definition of the virtual wire that the dashboard,
 * `make demo` (scripts/demo.sh) and the network tests (tests/sh/netns.sh) build, the
 * programs run on it, and the sweep of what a killed owner left. `secho lab` is its
 * command (src/cli/lab.c).
 *
 *   +------------- ns secho-TAGh-ID (host) ------+     +----- ns secho-TAGe-ID (endpoint) ---+
 *   |  secho host, udp_load, tcpreplay, ...      |     |  secho serve, bare_echo, secho flow  |
 *   |  TAGhID  192.0.2.1/24  02:00:00:00:00:01   |=====|  TAGeID  02:00:00:00:00:02          |
 *   |  neigh 192.0.2.2 -> 02:00:00:00:00:02      |veth |  no address: the endpoint answers    |
 *   |  (permanent)                               |     |  for 192.0.2.2 itself                |
 *   +--------------------------------------------+     +--------------------------------------+
 *
 * Both ends: `queues` RX and TX queues (default one: an AF_XDP socket sees only its own
 * queue), tx checksum offload off (so UDP checksums are filled in the frames on the wire),
 * IPv6 off (no ND/MLD noise), MTU SECHO_LAB_MTU unless asked otherwise. 192.0.2.2 is
 * deliberately not configured in the endpoint namespace: like the FPGA endpoint there is no
 * IP stack or ARP there, and the kernel must not answer (ICMP port unreachable) for the
 * program that owns the interface. Traffic never leaves the pair.
 *
 * The MTU is 1500, decided here once: it is Ethernet's, the endpoint's and the host tool's
 * default and the FPGA endpoint's wire, the only size at which every I/O backend runs on a
 * veth (native XDP on veth refuses an MTU above a page less its headroom, about 3500), and
 * the counters report fits it (the endpoint leaves the zero drop counters out when all of
 * them would not fit, and says so: PROTOCOL.md). A test about jumbo frames asks for its
 * own MTU (`secho lab up --mtu N`, or `ip link set ... mtu` for the steps that change it).
 *
 * Names carry a tag (a few lower-case letters: "d" the dashboard, "s" the shell tests and
 * the demo) and an id (the owner's PID), so concurrent labs never collide.
 *
 * Owners: every lab has one, a running process (the dashboard; the shell of a test). Its
 * mark, /run/secho-lab/NS_HOST:
 *
 *   secho-lab 1
 *   owner PID
 *   start TICKS      the owner's start time (/proc/PID/stat field 22: pid reuse shows)
 *   netns NS_HOST NS_EP
 *
 * is written before the namespaces are made and removed after they are gone. A lab whose
 * owner no longer runs (killed before its clean-up) is stale: secho_lab_sweep() kills the
 * processes in its namespaces and deletes them; `secho lab up` and the dashboard sweep
 * before they build their own. Anything that cannot be proven stale is left alone.
 *
 * Programs: secho_lab_run() runs one to completion with its output captured and a
 * deadline; a keeper thread forks the long-lived ones (the endpoint). Either way the child
 * gets a parent-death signal (PR_SET_PDEATHSIG) and does not start at all if its parent is
 * already gone. `secho lab run` does the same for a shell: the program dies with the
 * script that started it.
 *
 * Errors: functions return 0 or -errno, and where a reason helps, one line of text in the
 * caller's err buffer.
 */
#ifndef SECHO_LAB_H
#define SECHO_LAB_H

#include "secho/proto.h"

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The virtual wire's fixed addresses (192.0.2.0/24 is TEST-NET-1, RFC 5737). */
#define SECHO_LAB_HOST_IP    "192.0.2.1"
#define SECHO_LAB_EP_IP      "192.0.2.2"
#define SECHO_LAB_HOST_CIDR  "192.0.2.1/24"
#define SECHO_LAB_HOST_MAC   "02:00:00:00:00:01"
#define SECHO_LAB_EP_MAC     "02:00:00:00:00:02"
#define SECHO_LAB_MTU        SECHO_WIRE_DEFAULT_MTU /* 1500: see the top of the file */
#define SECHO_LAB_QUEUES     1
#define SECHO_LAB_MAX_QUEUES 16
#define SECHO_LAB_TAG_MAX    3 /* letters of a tag */
#define SECHO_LAB_MARK_DIR   "/run/secho-lab"

enum secho_lab_side { SECHO_LAB_HOST = 0, SECHO_LAB_EP = 1 };

/* One lab: names, shape, and what exists of it. Fill with secho_lab_init(). */
struct secho_lab {
	char ns[2][32]; /* [SECHO_LAB_HOST], [SECHO_LAB_EP] */
	char ifname[2][16];
	unsigned mtu;    /* SECHO_WIRE_MIN_MTU..SECHO_WIRE_MAX_MTU (secho/proto.h) */
	unsigned queues; /* RX and TX queues per end, 1..SECHO_LAB_MAX_QUEUES */
	char ip_bin[64]; /* iproute2's ip, at a fixed absolute location */
	char mark[96];   /* SECHO_LAB_MARK_DIR/NS_HOST */
	bool up;         /* secho_lab_up() succeeded and no secho_lab_down() since */
};

/*
 * Fill lab with the names for tag and id and the default shape (MTU SECHO_LAB_MTU, one
 * queue). tag: 1..SECHO_LAB_TAG_MAX lower-case letters. Returns 0, -EINVAL for a bad tag,
 * or -ENOENT when iproute2's ip is not installed (reason in err). Creates nothing.
 */
int secho_lab_init(struct secho_lab *lab, const char *tag, unsigned long id, char *err,
                   size_t errlen);

/*
 * Sweep stale labs, write the mark for owner (a running process), build the topology at
 * the top of the file and wait (bounded, 5 s) until both ends are running. Returns 0, or
 * -errno with the failing step in err (-EEXIST: a lab of these names is up already);
 * what was made is removed again on failure.
 */
int secho_lab_up(struct secho_lab *lab, pid_t owner, char *err, size_t errlen);

/*
 * Stop what runs in the lab's namespaces (SIGTERM, SIGKILL for what is left after 2 s),
 * delete them (the veth pair goes with them) and remove the mark. Safe on a partial
 * set-up and when nothing exists. Can't fail.
 */
void secho_lab_down(struct secho_lab *lab);

/* True when both namespaces exist. */
bool secho_lab_exists(const struct secho_lab *lab);

/*
 * Remove every stale lab (see the top of the file). Each removal is reported on stderr
 * with prog as prefix unless prog is NULL. Returns how many were removed. Can't fail.
 */
int secho_lab_sweep(const char *prog);

/*
 * `ip netns exec NS args...` for the lab's side into out[0..cap) (NULL-terminated; at most
 * cap-1 entries, args cut short to fit). Returns the number of entries.
 */
size_t secho_lab_ns_argv(const struct secho_lab *lab, enum secho_lab_side side, char *const *args,
                         char **out, size_t cap);

/* ---- programs (src/lab/proc.c) ---- */

/* Set from a signal handler: secho_lab_run() kills its child and returns, so a ^C tears
 * everything down within a second. */
extern volatile sig_atomic_t secho_lab_stopping;

/* Captured output of one program run. */
struct secho_lab_out {
	char *out; /* stdout, NUL-terminated, malloc'd (NULL when nothing) */
	size_t out_len;
	char err[1024]; /* the last line(s) of stderr, NUL-terminated */
	int status;     /* exit status, 128+signal, or -1 when it could not run */
	bool timed_out;
};

/*
 * Run argv[0] (an absolute path) with argv, a fixed environment (PATH of the system
 * directories, LC_ALL=C), stdin from /dev/null, stdout captured (at most 8 MiB) and
 * stderr's tail kept; killed after timeout_ms, when secho_lab_stopping is set, and by the
 * kernel (SIGKILL) if the calling thread ends first. Returns 0 when it ran (whatever its
 * exit status, in o->status), or -errno when it could not be started (reason in o->err).
 * Free o with secho_lab_out_free() either way.
 */
int secho_lab_run(char *const argv[], unsigned timeout_ms, struct secho_lab_out *o);
void secho_lab_out_free(struct secho_lab_out *o);

/*
 * secho_lab_run() for a set-up step: 0 when it exited 0, else -EIO (-errno when it could
 * not run) with "PROG ARG1 ARG2: its stderr" in err (when err is not NULL).
 */
int secho_lab_run_ok(char *const argv[], unsigned timeout_ms, char *err, size_t errlen);

/*
 * The keeper: a thread that forks long-lived children. A child's parent-death signal
 * fires when the thread that forked it ends, not the process: forked from a short-lived
 * thread (a request's, a run's), the child would die with it. The keeper lives as long as
 * whoever owns the children.
 */
struct secho_lab_keeper {
	pthread_t thread;
	bool running;
	pthread_mutex_t lock;
	pthread_cond_t cv;
	bool pending, quit; /* a request is posted / the thread is to end */
	char *const *argv;  /* the request: program and the descriptors for 0, 1, 2 */
	int fds[3];
	int deathsig;
	pid_t pid; /* the answer: the child, or -1 with err */
	int err;
};

/* Start the keeper thread. Returns 0 or -errno. */
int secho_lab_keeper_start(struct secho_lab_keeper *k);
/* End it (its children then get their death signal). Safe when it never started. */
void secho_lab_keeper_stop(struct secho_lab_keeper *k);
/* Fork and exec argv (absolute argv[0], the fixed environment) in the keeper thread with
 * stdin, stdout, stderr from in, out, err and deathsig as its parent-death signal.
 * Returns the child's pid, or -errno. */
pid_t secho_lab_spawn(struct secho_lab_keeper *k, char *const argv[], int in, int out, int err,
                      int deathsig);

/*
 * Replace this process with argv[0] (searched in PATH) run in the lab's side namespace,
 * with sig as its parent-death signal (the parent being the caller's parent): the
 * program dies when the shell that started it does. Returns only on failure, -errno.
 */
int secho_lab_exec(const struct secho_lab *lab, enum secho_lab_side side, char *const argv[],
                   int sig);

/* A waitpid() status as the exit code, 128+signal, or -1. */
int secho_lab_status(int wstatus);

/* name in the fixed system directories (/usr/sbin, /sbin, /usr/bin, /bin): true with its
 * path in out, else false with out empty. */
bool secho_lab_find_tool(char *out, size_t cap, const char *name);

#endif
