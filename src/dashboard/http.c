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
 */
#include "dashboard/dashboard.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

struct dash_http {
	struct MHD_Daemon *d;
	struct dash_api *api;
	const struct dash_cfg *cfg;
	char hosts[3][96]; /* accepted Host values */
	char origins[3][112];
};

struct conn {
	size_t len;
	bool too_big;
	char body[DASH_MAX_BODY + 1];
};

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

/* Free the per-request body buffer. */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)c;
	(void)toe;
	free(*con_cls);
	*con_cls = NULL;
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

	h->d = MHD_start_daemon(
	        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, cfg->port, NULL, NULL,
	        on_request, h, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
	        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)4, MHD_OPTION_CONNECTION_LIMIT, (unsigned)64,
	        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
	        (size_t)65536, MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_END);
	if (!h->d) {
		snprintf(err, errlen, "cannot listen on %s:%u (in use, or not an address here)",
		         cfg->listen_ip, cfg->port);
		free(h);
		return NULL;
	}
	return h;
}

/* Contract: dashboard.h. Waits for the server threads. */
void dash_http_stop(struct dash_http *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->d);
	free(h);
}
