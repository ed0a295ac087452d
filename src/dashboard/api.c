/*
 * src/dashboard/api.c - the dashboard's JSON API (docs/API.md lists every route).
 *
 *   GET  /api                     route index
 *   GET  /api/endpoint            endpoint status
 *   POST /api/endpoint/start      bring the endpoint up (synchronous, about 1-3 s)
 *   POST /api/endpoint/stop       take it down
 *   POST /api/runs                start a run {count, size, load_seconds} -> 202 {id}
 *   GET  /api/runs                the runs kept (without their results)
 *   GET  /api/runs/ID             one run: state, phase, progress, results
 *   GET  /api/counters            the endpoint's verified, decrypted counters report
 *   GET  /metrics                 Prometheus text format
 *
 * Concurrency: libmicrohttpd calls us from a small thread pool. `lock` guards the run list
 * and the counters cache and is only held for bookkeeping, never across a child process;
 * `wire_busy` (under `lock`) serialises everything that touches the wire (start, stop, host
 * tool runs). It is a flag, not a mutex, because a run takes it in the request's thread and
 * releases it in its own. A run holds it for its whole length, so a second
 * run, a start or a stop during it is refused with 409 rather than queued.
 */
#include "dashboard/dashboard.h"
#include "sys/clock.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct run {
	unsigned id;
	const char *state; /* "running", "done", "failed" (static strings) */
	const char *phase; /* "endpoint", "paired", "load", "counters", "done" */
	double created, finished;
	double phase_t0, phase_expect, phase_lo, phase_hi; /* for the progress estimate */
	unsigned count, load_seconds;
	int size; /* -1: random */
	json_t *paired, *load, *counters, *summary;
	char error[512];
};

struct dash_api {
	struct dash_wire *w;
	pthread_mutex_t lock;
	bool wire_busy;
	struct run *runs[DASH_MAX_RUNS]; /* oldest first */
	unsigned nruns, next_id;
	struct run *active;
	pthread_t thread;
	bool joinable;
	json_t *counters; /* last verified report (the `secho host counters --json` object) */
	double counters_at;
	unsigned long runs_done, runs_failed;
};

/* Take the wire if nobody holds it; true when taken. */
static bool wire_try(struct dash_api *a)
{
	bool ok;

	pthread_mutex_lock(&a->lock);
	ok = !a->wire_busy;
	a->wire_busy = true;
	pthread_mutex_unlock(&a->lock);
	return ok;
}

/* Give the wire back. Can't fail. */
static void wire_release(struct dash_api *a)
{
	pthread_mutex_lock(&a->lock);
	a->wire_busy = false;
	pthread_mutex_unlock(&a->lock);
}

/* Serialise j (consumed) into r; a 500 with a fixed body when out of memory. */
static void reply_json(struct dash_reply *r, unsigned status, json_t *j)
{
	r->status = status;
	r->body = json_dumps(j, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
	r->len = r->body ? strlen(r->body) : 0;
	r->ctype = "application/json";
	json_decref(j);
	if (!r->body) {
		r->status = 500;
		r->body = strdup("{\"error\": \"out of memory\"}");
		r->len = r->body ? strlen(r->body) : 0;
	}
}

/* Contract: dashboard.h. */
void dash_reply_error(struct dash_reply *r, unsigned status, const char *msg)
{
	reply_json(r, status, json_pack("{s:s}", "error", msg));
}

/* ---- runs ---- */

/* Free a run and its results; NULL is fine. */
static void run_free(struct run *run)
{
	if (!run)
		return;
	json_decref(run->paired);
	json_decref(run->load);
	json_decref(run->counters);
	json_decref(run->summary);
	free(run);
}

/* Enter a phase occupying [lo, hi] of the progress bar, expected to last expect_s. */
static void set_phase(struct dash_api *a, struct run *run, const char *phase, double lo, double hi,
                      double expect_s)
{
	pthread_mutex_lock(&a->lock);
	run->phase = phase;
	run->phase_t0 = secho_real_s();
	run->phase_lo = lo;
	run->phase_hi = hi;
	run->phase_expect = expect_s > 0.1 ? expect_s : 0.1;
	pthread_mutex_unlock(&a->lock);
}

/* Progress 0..1: the phase's share, interpolated by elapsed over expected time (capped
 * below the phase's end: only its completion moves past it). */
static double run_progress(const struct run *run)
{
	double f;

	if (run->state[0] != 'r')
		return 1.0;
	f = (secho_real_s() - run->phase_t0) / run->phase_expect;
	if (f > 0.95)
		f = 0.95;
	return run->phase_lo + (run->phase_hi - run->phase_lo) * f;
}

/* o.a or o.a.b; NULL when absent (jansson accepts NULL everywhere below). */
static json_t *num_at(json_t *o, const char *a, const char *b)
{
	json_t *x = json_object_get(o, a);

	return b ? json_object_get(x, b) : x;
}

/* o.a[.b] as an integer, 0 when absent or not an integer. */
static json_int_t int_at(json_t *o, const char *a, const char *b)
{
	json_t *x = num_at(o, a, b);

	return json_is_integer(x) ? json_integer_value(x) : 0;
}

/* The headline numbers of a paired run: verified of sent, per path and overall. */
static json_t *summarize(const struct run *run)
{
	static const char *const paths[] = {"streaming", "offload"};
	json_t *s = json_object(), *pp = json_object();
	json_t *p = json_object_get(run->paired, "paths");
	json_int_t vt = 0, st = 0;
	char text[96];

	for (int i = 0; i < 2; i++) {
		json_t *x = json_object_get(p, paths[i]);
		json_int_t v = int_at(x, "verified", NULL), n = int_at(x, "sent", NULL);

		vt += v;
		st += n;
		snprintf(text, sizeof(text), "%lld of %lld verified", (long long)v, (long long)n);
		json_object_set_new(pp, paths[i],
		                    json_pack("{s:I,s:I,s:I,s:I,s:s}", "verified", v, "sent", n,
		                              "lost", int_at(x, "lost", NULL), "failed",
		                              int_at(x, "failed", NULL), "text", text));
	}
	snprintf(text, sizeof(text), "%lld of %lld verified", (long long)vt, (long long)st);
	json_object_set_new(s, "verified", json_integer(vt));
	json_object_set_new(s, "sent", json_integer(st));
	json_object_set_new(s, "text", json_string(text));
	json_object_set_new(s, "paths", pp);
	/* pass: the paired run (every response verified, none lost). A flat-out load run
	 * loses packets by design once an engine saturates; it has its own flag. */
	json_object_set_new(s, "pass",
	                    json_boolean(json_is_true(json_object_get(run->paired, "pass"))));
	json_object_set_new(s, "load_pass",
	                    run->load
	                            ? json_boolean(json_is_true(json_object_get(run->load, "pass")))
	                            : json_null());
	/* Offload/streaming endpoint latency: the paired run's own figure when its counters
	 * fetch succeeded, else from the report fetched at the end of the run. */
	json_t *ratio = json_object_get(run->paired, "offload_streaming_latency_ratio");

	if (json_is_number(ratio)) {
		json_object_set(s, "latency_ratio", ratio);
	} else {
		json_t *e = json_object_get(json_object_get(run->counters, "report"), "engines");
		json_t *o = num_at(num_at(e, "offload", "latency_ns"), "mean", NULL);
		json_t *sm = num_at(num_at(e, "streaming", "latency_ns"), "mean", NULL);

		json_object_set_new(
		        s, "latency_ratio",
		        json_is_number(o) && json_is_number(sm) && json_number_value(sm) > 0
		                ? json_real(json_number_value(o) / json_number_value(sm))
		                : json_null());
	}
	return s;
}

/* Mark the run failed with a reason (shown as "error"). */
static void run_fail(struct dash_api *a, struct run *run, const char *why)
{
	pthread_mutex_lock(&a->lock);
	snprintf(run->error, sizeof(run->error), "%s", why);
	run->state = "failed";
	run->finished = secho_real_s();
	a->runs_failed++;
	pthread_mutex_unlock(&a->lock);
}

/* The run thread: endpoint, paired, load, counters (see the table at the top). Always
 * releases the wire and clears a->active before returning. */
static void *run_main(void *arg)
{
	struct dash_api *a = arg;
	struct run *run = a->active;
	char err[512], cnt[16], sz[16], secs[16];
	const char *extra[16];
	int st;
	json_t *j;

	/* The wire was taken for us by the request that created the run. */
	snprintf(cnt, sizeof(cnt), "%u", run->count);
	if (run->size < 0)
		snprintf(sz, sizeof(sz), "random");
	else
		snprintf(sz, sizeof(sz), "%d", run->size);
	snprintf(secs, sizeof(secs), "%u", run->load_seconds);

	if (!dash_wire_running(a->w)) {
		set_phase(a, run, "endpoint", 0, 0.15, 2.0);
		if (dash_wire_start(a->w, err, sizeof(err)) < 0) {
			run_fail(a, run, err);
			goto out;
		}
	}
	/* One packet in flight at a time: about 0.1-0.3 ms a round trip on a veth. */
	set_phase(a, run, "paired", 0.15, run->load_seconds ? 0.45 : 0.9,
	          0.3 + run->count * 2 * 0.0002);
	extra[0] = "--count", extra[1] = cnt, extra[2] = "--size", extra[3] = sz;
	extra[4] = "--deadline", extra[5] = "120", extra[6] = "--quiet", extra[7] = NULL;
	j = dash_wire_host(a->w, "paired", extra, 150, &st, err, sizeof(err));
	if (!j) {
		run_fail(a, run, err);
		goto out;
	}
	pthread_mutex_lock(&a->lock);
	run->paired = j;
	pthread_mutex_unlock(&a->lock);

	if (run->load_seconds) {
		set_phase(a, run, "load", 0.45, 0.9, run->load_seconds + 0.5);
		extra[0] = "--seconds", extra[1] = secs, extra[2] = "--size", extra[3] = sz;
		extra[4] = "--quiet", extra[5] = NULL;
		j = dash_wire_host(a->w, "load", extra, run->load_seconds + 30, &st, err,
		                   sizeof(err));
		if (!j) {
			run_fail(a, run, err);
			goto out;
		}
		pthread_mutex_lock(&a->lock);
		run->load = j;
		pthread_mutex_unlock(&a->lock);
	}
	set_phase(a, run, "counters", 0.9, 1.0, 0.3);
	extra[0] = NULL;
	j = dash_wire_host(a->w, "counters", extra, 10, &st, err, sizeof(err));
	pthread_mutex_lock(&a->lock);
	if (j) {
		run->counters = json_incref(j);
		json_decref(a->counters);
		a->counters = j;
		a->counters_at = secho_real_s();
	} else {
		/* The report is rate-limited at the endpoint; a run still stands without it. */
		snprintf(run->error, sizeof(run->error), "counters: %.480s", err);
	}
	run->summary = summarize(run);
	run->phase = "done";
	run->state = "done";
	run->finished = secho_real_s();
	a->runs_done++;
	pthread_mutex_unlock(&a->lock);
out:
	pthread_mutex_lock(&a->lock);
	a->active = NULL;
	a->wire_busy = false;
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

/* A run as JSON (caller holds a->lock); results only when full. */
static json_t *run_json(const struct run *run, bool full)
{
	json_t *j = json_pack("{s:I,s:s,s:s,s:f,s:f}", "id", (json_int_t)run->id, "state",
	                      run->state, "phase", run->phase, "progress", run_progress(run),
	                      "created", run->created);

	json_object_set_new(j, "finished",
	                    run->finished > 0 ? json_real(run->finished) : json_null());
	json_object_set_new(
	        j, "params",
	        json_pack("{s:I,s:o,s:I}", "count", (json_int_t)run->count, "size",
	                  run->size < 0 ? json_string("random") : json_integer(run->size),
	                  "load_seconds", (json_int_t)run->load_seconds));
	json_object_set_new(j, "error", run->error[0] ? json_string(run->error) : json_null());
	json_object_set(j, "summary", run->summary ? run->summary : json_null());
	if (full)
		json_object_set_new(j, "results",
		                    json_pack("{s:O?,s:O?,s:O?}", "paired", run->paired, "load",
		                              run->load, "counters", run->counters));
	return j;
}

/* Parse and range-check a run request. Returns NULL with a message in why. */
static struct run *run_parse(const char *body, size_t len, char *why, size_t whylen)
{
	struct run *run = calloc(1, sizeof(*run));
	json_error_t je;
	json_t *j = NULL, *v;
	const char *k;

	if (!run) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	run->count = 500;
	run->size = -1;
	run->load_seconds = 3;
	if (len == 0)
		return run;
	j = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
	if (!j) {
		snprintf(why, whylen, "body is not valid JSON: %s (line %d, column %d)", je.text,
		         je.line, je.column);
		goto bad;
	}
	if (!json_is_object(j)) {
		snprintf(why, whylen, "body must be a JSON object");
		goto bad;
	}
	json_object_foreach(j, k, v)
	{
		if (!strcmp(k, "count")) {
			if (!json_is_integer(v) || json_integer_value(v) < 1 ||
			    json_integer_value(v) > DASH_COUNT_MAX) {
				snprintf(why, whylen,
				         "count must be an integer 1..%d (packets per path)",
				         DASH_COUNT_MAX);
				goto bad;
			}
			run->count = (unsigned)json_integer_value(v);
		} else if (!strcmp(k, "size")) {
			if (json_is_string(v) && !strcmp(json_string_value(v), "random")) {
				run->size = -1;
			} else if (json_is_integer(v) && json_integer_value(v) >= 0 &&
			           json_integer_value(v) <= DASH_SIZE_MAX) {
				run->size = (int)json_integer_value(v);
			} else {
				snprintf(why, whylen,
				         "size must be an integer 0..%d (payload bytes) or "
				         "\"random\"",
				         DASH_SIZE_MAX);
				goto bad;
			}
		} else if (!strcmp(k, "load_seconds")) {
			if (!json_is_integer(v) || json_integer_value(v) < 0 ||
			    json_integer_value(v) > DASH_LOAD_MAX_S) {
				snprintf(why, whylen,
				         "load_seconds must be an integer 0..%d (0: no load run)",
				         DASH_LOAD_MAX_S);
				goto bad;
			}
			run->load_seconds = (unsigned)json_integer_value(v);
		} else {
			char kq[40];

			snprintf(kq, sizeof(kq), "%s", k);
			snprintf(why, whylen,
			         "unknown field \"%s\" (accepted: count, size, load_seconds)", kq);
			goto bad;
		}
	}
	json_decref(j);
	return run;
bad:
	json_decref(j);
	free(run);
	return NULL;
}

/* POST /api/runs: 400 on a bad body, 409 when the wire is busy, else 202 and a thread. */
static void post_run(struct dash_api *a, const char *body, size_t len, struct dash_reply *r)
{
	char why[256];
	struct run *run = run_parse(body, len, why, sizeof(why));

	if (!run) {
		dash_reply_error(r, 400, why);
		return;
	}
	if (!wire_try(a)) {
		free(run);
		dash_reply_error(r, 409,
		                 "a run or an endpoint start/stop is in progress; one at a "
		                 "time");
		return;
	}
	pthread_mutex_lock(&a->lock);
	if (a->joinable) {
		/* The previous run's thread has released the wire: it is finishing. */
		pthread_join(a->thread, NULL);
		a->joinable = false;
	}
	run->id = ++a->next_id;
	run->state = "running";
	run->phase = "queued";
	run->created = secho_real_s();
	run->phase_t0 = run->created;
	run->phase_expect = 1;
	if (a->nruns == DASH_MAX_RUNS) {
		run_free(a->runs[0]);
		memmove(&a->runs[0], &a->runs[1], (DASH_MAX_RUNS - 1) * sizeof(struct run *));
		a->nruns--;
	}
	a->runs[a->nruns++] = run;
	a->active = run;
	if (pthread_create(&a->thread, NULL, run_main, a) != 0) {
		snprintf(run->error, sizeof(run->error), "cannot start a thread: %s",
		         strerror(errno));
		run->state = "failed";
		a->active = NULL;
		a->wire_busy = false;
		pthread_mutex_unlock(&a->lock);
		dash_reply_error(r, 500, "cannot start a thread");
		return;
	}
	a->joinable = true;
	json_t *j = run_json(run, false);

	json_object_set_new(j, "href", json_sprintf("/api/runs/%u", run->id));
	pthread_mutex_unlock(&a->lock);
	reply_json(r, 202, j);
}

/* The kept run with this id, or NULL (caller holds a->lock). */
static struct run *run_find(struct dash_api *a, unsigned long id)
{
	for (unsigned i = 0; i < a->nruns; i++)
		if (a->runs[i]->id == id)
			return a->runs[i];
	return NULL;
}

/* ---- endpoint ---- */

/* GET /api/endpoint (and the answer to start/stop). */
static void endpoint_status(struct dash_api *a, struct dash_reply *r, unsigned status)
{
	json_t *j;

	/* The status reads fields the wire lock's holder may be changing; a start or a run
	 * holds it for seconds, so take it only when free and say "busy" otherwise. */
	if (wire_try(a)) {
		j = dash_wire_status(a->w);
		wire_release(a);
		json_object_set_new(j, "busy", json_false());
	} else {
		j = json_pack("{s:b}", "busy", 1);
		pthread_mutex_lock(&a->lock);
		json_object_set_new(j, "running", json_boolean(a->active != NULL));
		pthread_mutex_unlock(&a->lock);
	}
	reply_json(r, status, j);
}

/* POST /api/endpoint/start: 200 and the status, 409 busy, 500 with the reason. */
static void endpoint_start(struct dash_api *a, struct dash_reply *r)
{
	char err[512];

	if (!wire_try(a)) {
		dash_reply_error(r, 409, "a run or another start/stop is in progress");
		return;
	}
	int rc = dash_wire_start(a->w, err, sizeof(err));

	wire_release(a);
	if (rc < 0) {
		dash_reply_error(r, 500, err);
		return;
	}
	endpoint_status(a, r, 200);
}

/* POST /api/endpoint/stop: 200 and the status, 409 busy. */
static void endpoint_stop(struct dash_api *a, struct dash_reply *r)
{
	if (!wire_try(a)) {
		dash_reply_error(r, 409, "a run or another start/stop is in progress");
		return;
	}
	dash_wire_stop(a->w);
	wire_release(a);
	endpoint_status(a, r, 200);
}

/* ---- counters ---- */

/* A fresh report when the wire is free and the cache is older than a second (the endpoint
 * rate-limits reports to 2 per second per source); else the cached one. Returns a new
 * reference or NULL; *live says whether it came from a running endpoint just now. */
static json_t *counters_get(struct dash_api *a, bool *live, double *at)
{
	json_t *j = NULL;

	*live = false;
	if (wire_try(a)) {
		pthread_mutex_lock(&a->lock);
		bool stale = secho_real_s() - a->counters_at > 1.0;
		pthread_mutex_unlock(&a->lock);

		if (stale && dash_wire_running(a->w)) {
			static const char *const extra[] = {"--timeout", "300", NULL};
			char err[256];
			int st;
			json_t *f =
			        dash_wire_host(a->w, "counters", extra, 5, &st, err, sizeof(err));

			if (f) {
				pthread_mutex_lock(&a->lock);
				json_decref(a->counters);
				a->counters = f;
				a->counters_at = secho_real_s();
				pthread_mutex_unlock(&a->lock);
				*live = true;
			}
		} else if (!stale && dash_wire_running(a->w)) {
			*live = true;
		}
		wire_release(a);
	}
	pthread_mutex_lock(&a->lock);
	if (a->counters)
		j = json_incref(a->counters);
	*at = a->counters_at;
	pthread_mutex_unlock(&a->lock);
	return j;
}

/* GET /api/counters: the report plus live/fetched_at, 503 when there never was one. */
static void get_counters(struct dash_api *a, struct dash_reply *r)
{
	bool live;
	double at;
	json_t *c = counters_get(a, &live, &at);

	if (!c) {
		dash_reply_error(r, 503,
		                 "no counters report yet: start the endpoint "
		                 "(POST /api/endpoint/start) or run (POST /api/runs)");
		return;
	}
	json_t *j = json_deep_copy(c);

	json_decref(c);
	json_object_set_new(j, "live", json_boolean(live));
	json_object_set_new(j, "fetched_at", json_real(at));
	reply_json(r, 200, j);
}

/* ---- metrics ---- */

struct buf {
	char *p;
	size_t n, cap;
	bool oom;
};

__attribute__((format(printf, 2, 3))) static void bprintf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		size_t room = b->cap - b->n;

		va_start(ap, fmt);
		n = vsnprintf(b->p + b->n, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if ((size_t)n < room) {
			b->n += (size_t)n;
			return;
		}
		size_t ncap = b->cap * 2 + (size_t)n;
		char *q = realloc(b->p, ncap);

		if (!q) {
			b->oom = true;
			return;
		}
		b->p = q;
		b->cap = ncap;
	}
}

/* A JSON number as double, NaN when absent. */
static double jnum(json_t *j)
{
	return json_is_number(j) ? json_number_value(j) : NAN;
}

/* Prometheus sample value: NaN is spelled "NaN" by the text format. */
static void sample(struct buf *b, const char *name, const char *labels, double v)
{
	if (isnan(v))
		bprintf(b, "%s%s NaN\n", name, labels);
	else
		bprintf(b, "%s%s %.17g\n", name, labels, v);
}

/* The # HELP and # TYPE lines of one metric family. */
static void help(struct buf *b, const char *name, const char *type, const char *text)
{
	bprintf(b, "# HELP %s %s\n# TYPE %s %s\n", name, text, name, type);
}

/*
 * The endpoint's data-path workers: secho_workers (1 when the report has no "workers": one
 * worker), and, when the report carries each worker's share (docs/PROTOCOL.md, "Counters
 * report"), one series per worker, labelled worker="i", from the report's arrays. The
 * shares come from the same reading as the totals: they add up to them exactly.
 */
static void worker_metrics(struct buf *b, json_t *wk)
{
	static const char *const arr[][3] = {
	        {"rx_frames", "secho_worker_rx_frames_total", "Frames received, by worker."},
	        {"tx_frames", "secho_worker_tx_frames_total", "Frames sent, by worker."},
	        {"drops", "secho_worker_drops_total", "Frames dropped (every reason), by worker."},
	};
	static const char *const eng[] = {"streaming", "offload"};
	json_t *n = json_object_get(wk, "n");
	char lab[64];

	help(b, "secho_workers", "gauge", "Data-path workers of the endpoint.");
	sample(b, "secho_workers", "", json_is_integer(n) ? (double)json_integer_value(n) : 1);
	if (!json_is_array(json_object_get(wk, "rx_frames")))
		return; /* one worker, or a report that left the shares out to fit the MTU */
	for (int k = 0; k < 3; k++) {
		json_t *a = json_object_get(wk, arr[k][0]), *v;
		size_t i;

		help(b, arr[k][1], "counter", arr[k][2]);
		json_array_foreach(a, i, v)
		{
			snprintf(lab, sizeof(lab), "{worker=\"%zu\"}", i);
			sample(b, arr[k][1], lab, jnum(v));
		}
	}
	help(b, "secho_worker_packets_total", "counter", "Packets answered, by worker and engine.");
	for (int e = 0; e < 2; e++) {
		json_t *v;
		size_t i;

		json_array_foreach(json_object_get(wk, eng[e]), i, v)
		{
			snprintf(lab, sizeof(lab), "{worker=\"%zu\",engine=\"%s\"}", i, eng[e]);
			sample(b, "secho_worker_packets_total", lab, jnum(v));
		}
	}
}

/* GET /metrics: Prometheus text format 0.0.4 from the counters report and our state. */
static void get_metrics(struct dash_api *a, struct dash_reply *r)
{
	static const char *const eng[] = {"streaming", "offload"};
	static const char *const q[] = {"min", "p50", "p99", "max"};
	static const char *const qv[] = {"0", "0.5", "0.99", "1"};
	struct buf b = {malloc(8192), 0, 8192, false};
	bool live;
	double at;
	json_t *c = counters_get(a, &live, &at), *rep = json_object_get(c, "report");
	json_t *engines = json_object_get(rep, "engines");
	char lab[160];

	if (!b.p) {
		json_decref(c);
		dash_reply_error(r, 500, "out of memory");
		return;
	}
	b.p[0] = '\0';
	help(&b, "secho_endpoint_up", "gauge", "1 while the endpoint process runs.");
	pthread_mutex_lock(&a->lock);
	bool busy = a->active != NULL;
	unsigned long done = a->runs_done, failed = a->runs_failed;
	json_t *last = NULL;

	for (unsigned i = a->nruns; i-- > 0;)
		if (a->runs[i]->summary) {
			last = json_incref(a->runs[i]->summary);
			break;
		}
	pthread_mutex_unlock(&a->lock);
	sample(&b, "secho_endpoint_up", "", live || busy ? 1 : 0);
	help(&b, "secho_counters_report_age_seconds", "gauge",
	     "Age of the counters report these metrics come from.");
	sample(&b, "secho_counters_report_age_seconds", "", c ? secho_real_s() - at : NAN);
	help(&b, "secho_dashboard_runs_total", "counter", "Runs finished, by outcome.");
	sample(&b, "secho_dashboard_runs_total", "{state=\"done\"}", (double)done);
	sample(&b, "secho_dashboard_runs_total", "{state=\"failed\"}", (double)failed);
	help(&b, "secho_dashboard_run_active", "gauge", "1 while a run is in progress.");
	sample(&b, "secho_dashboard_run_active", "", busy);

	if (rep) {
		help(&b, "secho_rx_frames_total", "counter", "Frames the endpoint received.");
		sample(&b, "secho_rx_frames_total", "", jnum(json_object_get(rep, "rx_frames")));
		help(&b, "secho_tx_frames_total", "counter", "Frames the endpoint sent.");
		sample(&b, "secho_tx_frames_total", "", jnum(json_object_get(rep, "tx_frames")));
		help(&b, "secho_uptime_seconds", "gauge", "Endpoint uptime.");
		sample(&b, "secho_uptime_seconds", "", jnum(json_object_get(rep, "uptime_s")));
		help(&b, "secho_seq_high_water", "gauge",
		     "Highest sequence number reserved durably.");
		sample(&b, "secho_seq_high_water", "",
		       jnum(json_object_get(rep, "seq_high_water")));
		help(&b, "secho_packets_total", "counter", "Packets answered, by engine.");
		for (int e = 0; e < 2; e++) {
			snprintf(lab, sizeof(lab), "{engine=\"%s\"}", eng[e]);
			sample(&b, "secho_packets_total", lab,
			       jnum(num_at(engines, eng[e], "packets")));
		}
		help(&b, "secho_bytes_total", "counter", "Payload bytes answered, by engine.");
		for (int e = 0; e < 2; e++) {
			snprintf(lab, sizeof(lab), "{engine=\"%s\"}", eng[e]);
			sample(&b, "secho_bytes_total", lab,
			       jnum(num_at(engines, eng[e], "bytes")));
		}
		help(&b, "secho_endpoint_latency_ns", "summary",
		     "Endpoint latency, RX dequeue to TX enqueue, by engine.");
		for (int e = 0; e < 2; e++) {
			json_t *l = num_at(json_object_get(engines, eng[e]), "latency_ns", NULL);
			double n = jnum(num_at(engines, eng[e], "packets"));

			for (int i = 0; i < 4; i++) {
				snprintf(lab, sizeof(lab), "{engine=\"%s\",quantile=\"%s\"}",
				         eng[e], qv[i]);
				sample(&b, "secho_endpoint_latency_ns", lab,
				       jnum(json_object_get(l, q[i])));
			}
			snprintf(lab, sizeof(lab), "{engine=\"%s\"}", eng[e]);
			sample(&b, "secho_endpoint_latency_ns_sum", lab,
			       jnum(json_object_get(l, "mean")) * n);
			sample(&b, "secho_endpoint_latency_ns_count", lab, n);
		}
		help(&b, "secho_headroom_pps", "gauge",
		     "Packets per second one engine could sustain at its mean latency.");
		for (int e = 0; e < 2; e++) {
			snprintf(lab, sizeof(lab), "{engine=\"%s\"}", eng[e]);
			sample(&b, "secho_headroom_pps", lab,
			       jnum(num_at(engines, eng[e], "headroom_pps")));
		}
		static const char *const cost[][2] = {
		        {"datapath_cycles_per_pkt", "secho_datapath_cycles_per_packet"},
		        {"engine_cycles_per_pkt", "secho_engine_cycles_per_packet"},
		        {"key_state_bytes", "secho_key_state_bytes"},
		        {"staging_bytes", "secho_staging_bytes"},
		};
		for (int k = 0; k < 4; k++) {
			help(&b, cost[k][1], "gauge",
			     "Cost per engine (the counters report's cost).");
			for (int e = 0; e < 2; e++) {
				snprintf(lab, sizeof(lab), "{engine=\"%s\"}", eng[e]);
				sample(&b, cost[k][1], lab,
				       jnum(num_at(num_at(engines, eng[e], "cost"), cost[k][0],
				                   NULL)));
			}
		}
		help(&b, "secho_drops_total", "counter", "Frames dropped, by reason.");
		const char *k;
		json_t *v;

		json_object_foreach(json_object_get(rep, "drops"), k, v)
		{
			char key[64];
			size_t i;

			/* Label values are the report's own names; keep only [a-z0-9_]. */
			for (i = 0; i < sizeof(key) - 1 && k[i]; i++)
				key[i] = (char)(((k[i] >= 'a' && k[i] <= 'z') ||
				                 (k[i] >= '0' && k[i] <= '9'))
				                        ? k[i]
				                        : '_');
			key[i] = '\0';
			snprintf(lab, sizeof(lab), "{reason=\"%s\"}", key);
			sample(&b, "secho_drops_total", lab, jnum(v));
		}
		worker_metrics(&b, json_object_get(rep, "workers"));
	}
	if (last) {
		help(&b, "secho_last_run_verified", "gauge",
		     "Responses verified by the host tool in the last run, by path.");
		for (int e = 0; e < 2; e++) {
			snprintf(lab, sizeof(lab), "{path=\"%s\"}", eng[e]);
			sample(&b, "secho_last_run_verified", lab,
			       jnum(num_at(num_at(last, "paths", eng[e]), "verified", NULL)));
		}
		help(&b, "secho_last_run_sent", "gauge",
		     "Requests sent by the host tool in the last run, by path.");
		for (int e = 0; e < 2; e++) {
			snprintf(lab, sizeof(lab), "{path=\"%s\"}", eng[e]);
			sample(&b, "secho_last_run_sent", lab,
			       jnum(num_at(num_at(last, "paths", eng[e]), "sent", NULL)));
		}
	}
	json_decref(last);
	json_decref(c);
	if (b.oom) {
		free(b.p);
		dash_reply_error(r, 500, "out of memory");
		return;
	}
	r->status = 200;
	r->body = b.p;
	r->len = b.n;
	r->ctype = "text/plain; version=0.0.4; charset=utf-8";
}

/* ---- routing ---- */

/* GET or HEAD (libmicrohttpd drops the body of a HEAD answer). */
static bool is_get(const char *m)
{
	return !strcmp(m, "GET") || !strcmp(m, "HEAD");
}

/* 405 with an Allow header. */
static void method_not_allowed(struct dash_reply *r, const char *allow)
{
	char msg[96];

	snprintf(msg, sizeof(msg), "method not allowed here (allowed: %s)", allow);
	dash_reply_error(r, 405, msg);
	r->allow = allow;
}

/* A POST to a control route may carry no body or an empty JSON object. */
static bool empty_body_ok(const char *body, size_t len, struct dash_reply *r)
{
	json_error_t je;
	json_t *j;

	if (len == 0)
		return true;
	j = json_loadb(body, len, 0, &je);
	if (!j) {
		char msg[256];

		snprintf(msg, sizeof(msg), "body is not valid JSON: %s", je.text);
		dash_reply_error(r, 400, msg);
		return false;
	}
	if (!json_is_object(j) || json_object_size(j)) {
		json_decref(j);
		dash_reply_error(r, 400, "this route takes no parameters (send no body or {})");
		return false;
	}
	json_decref(j);
	return true;
}

/* GET /api: the route list. */
static void index_json(struct dash_reply *r)
{
	static const char *const routes[][3] = {
	        {"GET", "/api/endpoint", "endpoint status"},
	        {"POST", "/api/endpoint/start", "start the endpoint (fresh key)"},
	        {"POST", "/api/endpoint/stop", "stop the endpoint, remove the wire"},
	        {"POST", "/api/runs", "start a run {count, size, load_seconds} -> 202 {id}"},
	        {"GET", "/api/runs", "runs kept, newest first"},
	        {"GET", "/api/runs/ID", "one run: state, phase, progress, results"},
	        {"GET", "/api/counters", "the verified, decrypted counters report"},
	        {"GET", "/metrics", "Prometheus text format"},
	};
	json_t *arr = json_array();

	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
		json_array_append_new(arr, json_pack("{s:s,s:s,s:s}", "method", routes[i][0],
		                                     "path", routes[i][1], "what", routes[i][2]));
	reply_json(r, 200, json_pack("{s:o}", "routes", arr));
}

/* Dispatch by path, then method: unknown path 404, known path and wrong method 405. */
static void route(struct dash_api *a, const char *method, const char *url, const char *body,
                  size_t len, struct dash_reply *r)
{
	if (!strcmp(url, "/api") || !strcmp(url, "/api/")) {
		if (!is_get(method)) {
			method_not_allowed(r, "GET, HEAD");
			return;
		}
		index_json(r);
		return;
	}
	if (!strcmp(url, "/api/endpoint")) {
		if (!is_get(method)) {
			method_not_allowed(r, "GET, HEAD");
			return;
		}
		endpoint_status(a, r, 200);
		return;
	}
	if (!strcmp(url, "/api/endpoint/start") || !strcmp(url, "/api/endpoint/stop")) {
		if (strcmp(method, "POST") != 0) {
			method_not_allowed(r, "POST");
			return;
		}
		if (!empty_body_ok(body, len, r))
			return;
		if (!strcmp(url, "/api/endpoint/start")) {
			endpoint_start(a, r);
			return;
		}
		endpoint_stop(a, r);
		return;
	}
	if (!strcmp(url, "/api/runs")) {
		if (!strcmp(method, "POST")) {
			post_run(a, body, len, r);
			return;
		}
		if (!is_get(method)) {
			method_not_allowed(r, "GET, HEAD, POST");
			return;
		}
		json_t *arr = json_array();

		pthread_mutex_lock(&a->lock);
		for (unsigned i = a->nruns; i-- > 0;)
			json_array_append_new(arr, run_json(a->runs[i], false));
		pthread_mutex_unlock(&a->lock);
		reply_json(r, 200, json_pack("{s:o}", "runs", arr));
		return;
	}
	if (!strncmp(url, "/api/runs/", 10)) {
		const char *id = url + 10;
		size_t n = strspn(id, "0123456789");

		if (n == 0 || n > 9 || id[n] != '\0') {
			dash_reply_error(r, 404, "no such run (ids are decimal numbers)");
			return;
		}
		if (!is_get(method)) {
			method_not_allowed(r, "GET, HEAD");
			return;
		}
		pthread_mutex_lock(&a->lock);
		struct run *run = run_find(a, strtoul(id, NULL, 10));
		json_t *j = run ? run_json(run, true) : NULL;

		pthread_mutex_unlock(&a->lock);
		if (!j) {
			dash_reply_error(r, 404, "no such run (GET /api/runs lists them)");
			return;
		}
		reply_json(r, 200, j);
		return;
	}
	if (!strcmp(url, "/api/counters")) {
		if (!is_get(method)) {
			method_not_allowed(r, "GET, HEAD");
			return;
		}
		get_counters(a, r);
		return;
	}
	if (!strcmp(url, "/metrics")) {
		if (!is_get(method)) {
			method_not_allowed(r, "GET, HEAD");
			return;
		}
		get_metrics(a, r);
		return;
	}
	dash_reply_error(r, 404, "no such route (GET /api lists them)");
}

/* Contract: dashboard.h. */
void dash_api_handle(struct dash_api *a, const char *method, const char *url, const char *body,
                     size_t len, struct dash_reply *r)
{
	memset(r, 0, sizeof(*r));
	route(a, method, url, body, len, r);
}

/* Contract: dashboard.h. NULL when out of memory. */
struct dash_api *dash_api_new(struct dash_wire *w)
{
	struct dash_api *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->w = w;
	pthread_mutex_init(&a->lock, NULL);
	return a;
}

/* Contract: dashboard.h. */
void dash_api_free(struct dash_api *a)
{
	if (!a)
		return;
	if (a->joinable)
		pthread_join(a->thread, NULL);
	for (unsigned i = 0; i < a->nruns; i++)
		run_free(a->runs[i]);
	json_decref(a->counters);
	pthread_mutex_destroy(&a->lock);
	free(a);
}
