/*
 * src/dashboard/dashboard.h - `secho dashboard`: a local web page and JSON API that drive an
 * endpoint and the host tool, the twin of the original's dashboard at localhost:8765.
 *
 * Three layers, one file each:
 *   http.c          libmicrohttpd glue: request checks (Host, Origin, body size), routing
 *                   of the static page, hand-off of /api and /metrics to api.c
 *   api.c           the JSON API: endpoint control, runs (one at a time, in a worker
 *                   thread), counters, Prometheus metrics
 *   runner.c        runs the programs on the "wire": the lab's virtual wire (src/lab/lab.h:
 *                   two network namespaces joined by a veth pair) or a real interface
 *                   (--iface), a fresh key, the endpoint process (`secho serve`) and the
 *                   host tool (`secho host`), every program started by fork/execve from a
 *                   fixed argument vector; children die with the dashboard, and a new
 *                   dashboard removes what a killed one left behind (src/sys/owner.h)
 *
 * Nothing a request carries ever becomes a path or a command: paths derive from a private
 * directory (mkdtemp, mode 0700) and the programs are the running binary itself and
 * iproute2's ip found at a fixed absolute location.
 */
#ifndef SECHO_DASHBOARD_H
#define SECHO_DASHBOARD_H

#include "lab/lab.h"

#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define DASH_DEFAULT_PORT 8765
#define DASH_MAX_BODY     4096 /* request bodies above this are refused with 413 */
#define DASH_MAX_RUNS     16   /* runs kept in memory (oldest dropped first) */

/* Connections (http.c: slow clients). A connection must deliver each whole request within
 * DASH_REQUEST_DEADLINE_S of connecting or of its previous answer; silence for
 * DASH_IDLE_TIMEOUT_S closes it too. Past DASH_CONN_PER_IP connections from one address
 * or DASH_CONN_SOFT in all, a new one closes the longest-waiting one; DASH_CONN_PER_IP_MAX
 * and DASH_CONN_MAX are libmicrohttpd's hard caps behind that. */
#define DASH_REQUEST_DEADLINE_S 10
#define DASH_IDLE_TIMEOUT_S     10
#define DASH_CONN_PER_IP        64
#define DASH_CONN_PER_IP_MAX    128
#define DASH_CONN_SOFT          192
#define DASH_CONN_MAX           256

/* Validated ranges of POST /api/runs (docs/API.md). */
#define DASH_COUNT_MAX  10000
#define DASH_SIZE_MAX   1440
#define DASH_LOAD_MAX_S 30

struct dash_cfg {
	char listen_ip[64]; /* IPv4 literal */
	uint16_t port;
	bool allow_remote;
	const char *iface;      /* NULL: virtual wire; else the endpoint serves on this interface */
	const char *host_iface; /* --iface mode: host tool raw mode on this interface (optional) */
	const char *dst_mac;    /* --iface mode with --host-iface: the endpoint's MAC */
	const char *secho_bin;  /* the secho binary to run (default: this one) */
	bool quiet;
};

/* ---- runner.c ---- */

struct dash_wire {
	const struct dash_cfg *cfg;
	char secho[4096]; /* absolute path of the secho binary */
	char dir[64];     /* private directory: key and sequence state, endpoint log, owner mark */
	char key_path[128], state_path[128], log_path[128];
	char owner_path[128];           /* DIR/owner: who made DIR (see runner.c, "Leftovers") */
	char eppid_path[128];           /* DIR/endpoint.pid: the endpoint while it runs */
	int owner_fd;                   /* DIR/owner, flock()ed for the dashboard's whole life */
	struct secho_lab_keeper keeper; /* forks the endpoint (a death signal it keeps) */
	struct secho_lab lab;           /* the virtual wire (unused with --iface) */
	pid_t ep_pid;                   /* endpoint process, 0 when none */
	unsigned key_id;                /* of the current key (one fresh key per start) */
	double started_at;              /* CLOCK_REALTIME seconds of the last successful start */
	int last_exit; /* the endpoint's exit status when it ended by itself, or -1 */
};

/* Remove what dashboards killed before their clean-up left (namespaces, processes, key
 * directories that their owner mark proves to be theirs), resolve the binaries, create the
 * private directory and its owner mark, start the keeper. Returns 0, or -errno with a
 * reason in err. */
int dash_wire_init(struct dash_wire *w, const struct dash_cfg *cfg, char *err, size_t errlen);
/* Bring the endpoint up (namespaces and veth for the virtual wire, fresh key, `secho serve`,
 * wait for the link and for a verified counters report). Idempotent: 0 when it already runs.
 * On failure everything started is removed again; returns -errno with a reason in err. */
int dash_wire_start(struct dash_wire *w, char *err, size_t errlen);
/* Stop the endpoint (SIGTERM, then SIGKILL after 3 s), remove namespaces and key. Can't
 * fail; safe to call when nothing runs. */
void dash_wire_stop(struct dash_wire *w);
/* True while the endpoint process runs (reaps it, and records its status, if it ended). */
bool dash_wire_running(struct dash_wire *w);
/* Status object for GET /api/endpoint. */
json_t *dash_wire_status(struct dash_wire *w);
/* Run `secho host SUB --key K <transport options> EXTRA... --json` where the host side lives
 * and parse its JSON. Returns the object (caller decrefs) or NULL with a reason in err;
 * *status gets the exit status (1 = ran but something did not verify). */
json_t *dash_wire_host(struct dash_wire *w, const char *sub, const char *const *extra,
                       unsigned timeout_s, int *status, char *err, size_t errlen);
/* Stop everything and remove the private directory. */
void dash_wire_fini(struct dash_wire *w);

/* ---- api.c ---- */

struct dash_api;

/* A reply: status, body (malloc'd), content type; allow is the Allow header for 405. */
struct dash_reply {
	unsigned status;
	char *body;
	size_t len;
	const char *ctype;
	const char *allow;
};

struct dash_api *dash_api_new(struct dash_wire *w);
/* Waits for a running run to finish (bounded by its own timeouts), then frees. */
void dash_api_free(struct dash_api *a);
/* Handle one /api/... or /metrics request whose headers already passed http.c's checks.
 * Always fills r (404/405/400/409/... with a JSON {"error": ...} body on refusal). */
void dash_api_handle(struct dash_api *a, const char *method, const char *url, const char *body,
                     size_t len, struct dash_reply *r);
/* Fill r with a JSON error body {"error": msg}. */
void dash_reply_error(struct dash_reply *r, unsigned status, const char *msg);

/* ---- http.c ---- */

struct dash_http;

/* Start serving on cfg->listen_ip:port. Returns NULL with a reason in err. */
struct dash_http *dash_http_start(const struct dash_cfg *cfg, struct dash_api *api, char *err,
                                  size_t errlen);
void dash_http_stop(struct dash_http *h);

/* ---- static assets (generated from src/dashboard/static/ by scripts/embed_static.sh) ---- */

struct dash_asset {
	const char *name; /* "index.html", "app.js", "style.css" */
	const unsigned char *data;
	size_t len;
};
extern const struct dash_asset dash_assets[];
extern const size_t dash_nassets;

#endif
