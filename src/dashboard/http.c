/*
 * src/dashboard/http.c - the dashboard's HTTP server (libmicrohttpd): checks every request
 * before anything else sees it, serves the embedded page, hands /api and /metrics to api.c.
 *
 * Checks, in order (each refusal is a JSON {"error": ...} body):
 *   Host     must name us: our listen address, 127.0.0.1 or localhost, with our port.
 *            A page from another site that rebinds its DNS name to 127.0.0.1 sends its own
 *            name here, so it can't read the API (DNS rebinding) -> 403.
 *   Origin   on anything but GET/HEAD, when present, must be http://<one of those hosts>;
 *            Sec-Fetch-Site "cross-site" likewise -> 403 (cross-site POST).
 *   Type     a POST with a body must be Content-Type application/json -> 415 (a plain HTML
 *            form cannot send that type without a preflight we never answer).
 *   Size     bodies above DASH_MAX_BODY -> 413, refused on Content-Length before reading,
 *            or as soon as a chunked body passes the limit.
 *
 * Slow clients (slowloris): a connection must deliver each whole request (headers and
 * body) within DASH_REQUEST_DEADLINE_S of its start or of the end of its previous request,
 * however many bytes trickle in meanwhile; libmicrohttpd's idle timeout
 * (DASH_IDLE_TIMEOUT_S) only sees silence. A watchdog thread closes the late ones. Beyond
 * DASH_CONN_PER_IP connections from one address, or DASH_CONN_SOFT in all, a new
 * connection closes the one that has waited longest without delivering a request (of that
 * address, or of anyone): a flood of half-open connections thus only ever evicts itself,
 * and a client that sends its request at once is served. A hard per-address cap
 * (MHD_OPTION_PER_IP_CONNECTION_LIMIT) and a total one back this up while evicted
 * connections are still being closed. On loopback every local client shares one address,
 * so a hard per-address cap alone would lock the page out along with the flood.
 * Connections are closed by shutdown(2) on their socket, never close(2): libmicrohttpd
 * owns the descriptor, sees end of file and releases it itself.
 */
#include "dashboard/dashboard.h"
#include "sys/clock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

/* One open connection, from libmicrohttpd's NOTIFY_CONNECTION STARTED to CLOSED, in a
 * list oldest first (its socket_context). Guarded by dash_http.conn_lock. */
struct dconn {
	struct dconn *prev, *next;
	int fd;
	struct sockaddr_storage peer; /* address and port: the socket is checked to be still
	                               * this peer's before it is shut down */
	socklen_t peer_len;
	double since; /* CLOCK_MONOTONIC: connected, or its previous request answered */
	bool waiting; /* no whole request since `since` */
	bool evicted; /* shut down by us; libmicrohttpd has yet to notice */
};

struct dash_http {
	struct MHD_Daemon *d;
	struct dash_api *api;
	const struct dash_cfg *cfg;
	char hosts[3][96]; /* accepted Host values */
	char origins[3][112];
	pthread_mutex_t conn_lock;
	pthread_cond_t conn_cv; /* wakes the watchdog to stop */
	struct dconn *head, *tail;
	unsigned nconn;          /* connections in the list that are not evicted */
	unsigned long evictions; /* connections closed by the deadline or for room */
	bool stopping;
	pthread_t watchdog;
	bool have_watchdog;
};

struct conn {
	size_t len;
	bool too_big;
	char body[DASH_MAX_BODY + 1];
};

static void conn_mark(struct dash_http *h, struct MHD_Connection *c, bool waiting);

static const char csp[] = "default-src 'none'; script-src 'self'; style-src 'self'; "
                          "img-src 'self' data:; connect-src 'self'; base-uri 'none'; "
                          "form-action 'none'; frame-ancestors 'none'";

/* Queue r with the common security headers (frees r->body when must_free); logs one
 * line unless --quiet. Returns libmicrohttpd's verdict. */
static enum MHD_Result send_reply(struct dash_http *h, struct MHD_Connection *c, const char *method,
                                  const char *url, struct dash_reply *r, bool must_free)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(
	        r->len, r->body, must_free ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ok;

	if (!resp) {
		if (must_free)
			free(r->body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", r->ctype ? r->ctype : "application/json");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "X-Frame-Options", "DENY");
	MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(resp, "Content-Security-Policy", csp);
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	if (r->allow)
		MHD_add_response_header(resp, "Allow", r->allow);
	ok = MHD_queue_response(c, r->status, resp);
	MHD_destroy_response(resp);
	if (!h->cfg->quiet) {
		time_t t = time(NULL);
		struct tm tm;
		char ts[32];

		gmtime_r(&t, &tm);
		strftime(ts, sizeof(ts), "%H:%M:%S", &tm);
		fprintf(stderr, "%s %s %s %u\n", ts, method, url, r->status);
	}
	return ok;
}

/* Queue a JSON error reply. */
static enum MHD_Result refuse(struct dash_http *h, struct MHD_Connection *c, const char *method,
                              const char *url, unsigned status, const char *msg)
{
	struct dash_reply r;

	memset(&r, 0, sizeof(r));
	dash_reply_error(&r, status, msg);
	return send_reply(h, c, method, url, &r, true);
}

/* Host header names us (case-insensitive, port included); false when absent. */
static bool host_ok(const struct dash_http *h, const char *host)
{
	if (!host)
		return false;
	for (int i = 0; i < 3; i++)
		if (h->hosts[i][0] && !strcasecmp(host, h->hosts[i]))
			return true;
	return false;
}

/* Origin is exactly http://<an accepted host>. */
static bool origin_ok(const struct dash_http *h, const char *origin)
{
	for (int i = 0; i < 3; i++)
		if (h->origins[i][0] && !strcasecmp(origin, h->origins[i]))
			return true;
	return false;
}

/* The embedded file for a URL ("/" is index.html), or NULL: only exact names match, so
 * no URL can reach anything outside the embedded set. */
static const struct dash_asset *asset_find(const char *url)
{
	const char *name = !strcmp(url, "/") ? "index.html" : url + 1;

	if (url[0] != '/')
		return NULL;
	for (size_t i = 0; i < dash_nassets; i++)
		if (!strcmp(dash_assets[i].name, name))
			return &dash_assets[i];
	return NULL;
}

/* Content-Type by extension. */
static const char *asset_type(const char *name)
{
	const char *dot = strrchr(name, '.');

	if (dot && !strcmp(dot, ".html"))
		return "text/html; charset=utf-8";
	if (dot && !strcmp(dot, ".js"))
		return "text/javascript; charset=utf-8";
	if (dot && !strcmp(dot, ".css"))
		return "text/css; charset=utf-8";
	if (dot && !strcmp(dot, ".svg"))
		return "image/svg+xml";
	return "application/octet-stream";
}

/* Content-Type is application/json, with or without parameters. */
static bool body_is_json(struct MHD_Connection *c)
{
	const char *t = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");

	return t && !strncasecmp(t, "application/json", 16) &&
	       (t[16] == '\0' || t[16] == ';' || t[16] == ' ');
}

/* GET or HEAD. */
static bool is_get(const char *m)
{
	return !strcmp(m, "GET") || !strcmp(m, "HEAD");
}

/* Request checks that need only the headers (see the top of the file). Returns 0 when
 * the request may go on, else the status it was refused with (already queued). */
static unsigned check_headers(struct dash_http *h, struct MHD_Connection *c, const char *method,
                              const char *url, enum MHD_Result *res)
{
	const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
	const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
	const char *site = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sec-Fetch-Site");
	const char *clen = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");

	if (!host_ok(h, host)) {
		*res = refuse(h, c, method, url, 403,
		              "Host header does not name this dashboard (DNS rebinding guard); use "
		              "http://127.0.0.1:PORT/ or http://localhost:PORT/");
		return 403;
	}
	if (!is_get(method)) {
		if (origin && !origin_ok(h, origin)) {
			*res = refuse(
			        h, c, method, url, 403,
			        "cross-origin request refused (Origin is not this dashboard)");
			return 403;
		}
		if (site && !strcasecmp(site, "cross-site")) {
			*res = refuse(h, c, method, url, 403,
			              "cross-site request refused (Sec-Fetch-Site)");
			return 403;
		}
	}
	if (clen) {
		char *end;
		unsigned long long n = strtoull(clen, &end, 10);

		if (*end || n > DASH_MAX_BODY) {
			char msg[96];

			snprintf(msg, sizeof(msg), "request body too large (limit %d bytes)",
			         DASH_MAX_BODY);
			*res = refuse(h, c, method, url, 413, msg);
			return 413;
		}
	}
	return 0;
}

/* libmicrohttpd's access handler: called once with the headers (checks, then
 * allocate the body buffer), once per body chunk, once more at the end (dispatch). */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
	struct dash_http *h = cls;
	struct conn *k = *con_cls;
	enum MHD_Result res = MHD_NO;

	(void)version;
	if (!k) {
		if (check_headers(h, c, method, url, &res))
			return res;
		k = calloc(1, sizeof(*k));
		if (!k)
			return MHD_NO;
		*con_cls = k;
		return MHD_YES;
	}
	if (*upload_data_size) {
		if (!k->too_big && k->len + *upload_data_size <= DASH_MAX_BODY) {
			memcpy(k->body + k->len, upload_data, *upload_data_size);
			k->len += *upload_data_size;
		} else {
			k->too_big = true;
		}
		*upload_data_size = 0;
		return MHD_YES;
	}
	conn_mark(h, c, false); /* the whole request is in: no deadline while we answer */
	if (k->too_big) {
		char msg[96];

		snprintf(msg, sizeof(msg), "request body too large (limit %d bytes)",
		         DASH_MAX_BODY);
		return refuse(h, c, method, url, 413, msg);
	}
	k->body[k->len] = '\0';
	if (k->len && !body_is_json(c)) {
		return refuse(h, c, method, url, 415,
		              "a request body must be Content-Type: application/json");
	}

	if (!strcmp(url, "/metrics") || !strcmp(url, "/api") || !strncmp(url, "/api/", 5)) {
		struct dash_reply r;

		dash_api_handle(h->api, method, url, k->body, k->len, &r);
		return send_reply(h, c, method, url, &r, true);
	}
	const struct dash_asset *as = asset_find(url);

	if (!as)
		return refuse(h, c, method, url, 404, "not found");
	if (!is_get(method)) {
		struct dash_reply r;

		memset(&r, 0, sizeof(r));
		dash_reply_error(&r, 405, "method not allowed here (allowed: GET, HEAD)");
		r.allow = "GET, HEAD";
		return send_reply(h, c, method, url, &r, true);
	}
	struct dash_reply r = {200, (char *)as->data, as->len, asset_type(as->name), NULL};

	return send_reply(h, c, method, url, &r, false);
}

/* Free the per-request body buffer; the connection waits for its next request from now
 * (its deadline starts again). */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
	(void)toe;
	free(*con_cls);
	*con_cls = NULL;
	conn_mark(cls, c, true);
}

/* ---- slow clients: see the top of the file ---- */

/* Same address (not port) of two peers. */
static bool same_addr(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		               &((const struct sockaddr_in6 *)b)->sin6_addr, 16);
	return false;
}

/* Close k's connection: shutdown(2) its socket after checking that the descriptor still
 * belongs to k's peer (libmicrohttpd may have closed it, and the number be reused, between
 * its last event and the CLOSED notification). Caller holds conn_lock. */
static void evict(struct dash_http *h, struct dconn *k)
{
	struct sockaddr_storage now;
	socklen_t len = sizeof(now);

	if (k->evicted)
		return;
	k->evicted = true;
	h->nconn--;
	h->evictions++;
	if (getpeername(k->fd, (struct sockaddr *)&now, &len) == 0 && len == k->peer_len &&
	    !memcmp(&now, &k->peer, len))
		(void)shutdown(k->fd, SHUT_RDWR);
}

/* The connection that has waited longest for a request: of peer's address when peer is
 * not NULL, else of anyone. NULL when none waits. Caller holds conn_lock. */
static struct dconn *oldest_waiting(struct dash_http *h, const struct sockaddr_storage *peer)
{
	for (struct dconn *k = h->head; k; k = k->next)
		if (k->waiting && !k->evicted && (!peer || same_addr(&k->peer, peer)))
			return k;
	return NULL;
}

/* libmicrohttpd's connection notifications: track every connection, make room. */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
	struct dash_http *h = cls;
	struct dconn *k = *socket_context;

	pthread_mutex_lock(&h->conn_lock);
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *fd =
		        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		const union MHD_ConnectionInfo *ad =
		        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

		k = calloc(1, sizeof(*k));
		if (k && fd && ad && ad->client_addr) {
			unsigned same = 0;

			k->fd = fd->connect_fd;
			k->peer_len = ad->client_addr->sa_family == AF_INET6
			                      ? sizeof(struct sockaddr_in6)
			                      : sizeof(struct sockaddr_in);
			memcpy(&k->peer, ad->client_addr, k->peer_len);
			k->since = secho_mono_s();
			k->waiting = true;
			k->prev = h->tail;
			if (h->tail)
				h->tail->next = k;
			else
				h->head = k;
			h->tail = k;
			h->nconn++;
			*socket_context = k;
			for (struct dconn *o = h->head; o; o = o->next)
				same += !o->evicted && same_addr(&o->peer, &k->peer);
			if (same > DASH_CONN_PER_IP) {
				struct dconn *v = oldest_waiting(h, &k->peer);

				if (v && v != k)
					evict(h, v);
			}
			if (h->nconn > DASH_CONN_SOFT) {
				struct dconn *v = oldest_waiting(h, NULL);

				if (v && v != k)
					evict(h, v);
			}
		} else {
			free(k); /* untracked: the hard limits still apply */
		}
	} else if (k) {
		if (!k->evicted)
			h->nconn--;
		if (k->prev)
			k->prev->next = k->next;
		else
			h->head = k->next;
		if (k->next)
			k->next->prev = k->prev;
		else
			h->tail = k->prev;
		free(k);
		*socket_context = NULL;
	}
	pthread_mutex_unlock(&h->conn_lock);
}

/* Mark c's connection as having delivered a whole request (waiting false), or as waiting
 * again for its next one from now (waiting true). */
static void conn_mark(struct dash_http *h, struct MHD_Connection *c, bool waiting)
{
	const union MHD_ConnectionInfo *ci =
	        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct dconn *k = ci ? ci->socket_context : NULL;

	if (!k)
		return;
	pthread_mutex_lock(&h->conn_lock);
	k->waiting = waiting;
	k->since = secho_mono_s();
	pthread_mutex_unlock(&h->conn_lock);
}

/* Watchdog: every 250 ms, close the connections that have waited longer than
 * DASH_REQUEST_DEADLINE_S for a whole request. */
static void *watchdog_main(void *arg)
{
	struct dash_http *h = arg;

	pthread_mutex_lock(&h->conn_lock);
	while (!h->stopping) {
		struct timespec ts;
		double now = secho_mono_s();

		for (struct dconn *k = h->head; k; k = k->next)
			if (k->waiting && !k->evicted && now - k->since > DASH_REQUEST_DEADLINE_S)
				evict(h, k);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += 250000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		(void)pthread_cond_timedwait(&h->conn_cv, &h->conn_lock, &ts);
	}
	pthread_mutex_unlock(&h->conn_lock);
	return NULL;
}

/* Contract: dashboard.h. */
struct dash_http *dash_http_start(const struct dash_cfg *cfg, struct dash_api *api, char *err,
                                  size_t errlen)
{
	struct dash_http *h = calloc(1, sizeof(*h));
	struct sockaddr_in sa;

	if (!h) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	h->api = api;
	h->cfg = cfg;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(cfg->port);
	if (inet_pton(AF_INET, cfg->listen_ip, &sa.sin_addr) != 1) {
		snprintf(err, errlen, "'%s' is not an IPv4 address", cfg->listen_ip);
		free(h);
		return NULL;
	}
	const char *names[3] = {cfg->listen_ip, "localhost", "127.0.0.1"};

	for (int i = 0; i < 3; i++) {
		snprintf(h->hosts[i], sizeof(h->hosts[i]), "%s:%u", names[i], cfg->port);
		snprintf(h->origins[i], sizeof(h->origins[i]), "http://%s:%u", names[i], cfg->port);
	}

	pthread_mutex_init(&h->conn_lock, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&h->conn_cv, &ca);
		pthread_condattr_destroy(&ca);
	}
	/* epoll (MHD_USE_AUTO picks it on Linux): select() could not watch DASH_CONN_MAX
	 * sockets beside the process's own descriptors. */
	h->d = MHD_start_daemon(
	        MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG, cfg->port, NULL, NULL, on_request,
	        h, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_THREAD_POOL_SIZE,
	        (unsigned)4, MHD_OPTION_CONNECTION_LIMIT, (unsigned)DASH_CONN_MAX,
	        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)DASH_CONN_PER_IP_MAX,
	        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)DASH_IDLE_TIMEOUT_S,
	        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)65536, MHD_OPTION_NOTIFY_COMPLETED,
	        on_completed, h, MHD_OPTION_NOTIFY_CONNECTION, on_connection, h, MHD_OPTION_END);
	if (!h->d) {
		snprintf(err, errlen, "cannot listen on %s:%u (in use, or not an address here)",
		         cfg->listen_ip, cfg->port);
		pthread_cond_destroy(&h->conn_cv);
		pthread_mutex_destroy(&h->conn_lock);
		free(h);
		return NULL;
	}
	h->have_watchdog = pthread_create(&h->watchdog, NULL, watchdog_main, h) == 0;
	if (!h->have_watchdog) {
		snprintf(err, errlen, "cannot start the connection watchdog thread");
		dash_http_stop(h);
		return NULL;
	}
	return h;
}

/* Contract: dashboard.h. Waits for the server threads. */
void dash_http_stop(struct dash_http *h)
{
	if (!h)
		return;
	if (h->have_watchdog) {
		pthread_mutex_lock(&h->conn_lock);
		h->stopping = true;
		pthread_cond_signal(&h->conn_cv);
		pthread_mutex_unlock(&h->conn_lock);
		pthread_join(h->watchdog, NULL);
	}
	MHD_stop_daemon(h->d); /* every connection's CLOSED notification empties the list */
	pthread_cond_destroy(&h->conn_cv);
	pthread_mutex_destroy(&h->conn_lock);
	free(h);
}
