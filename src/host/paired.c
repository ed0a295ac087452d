/*
 * src/host/paired.c - `secho host paired`: the original's measurement. Requests alternate
 * between the streaming and offload ports in one run, one in flight at a time, every
 * response verified against the nettle oracle; then the endpoint's counters report gives
 * its own per-engine latency, from which the offload/streaming ratio is computed (14.7x on
 * the original hardware).
 */
#include "host/session.h"
#include "sys/err.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct rtt_summary {
	double min, mean, p50, p99, max;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Nearest-rank percentiles of the path's round trips (sorted in place); NAN when empty. */
static struct rtt_summary summarize(struct secho_pathstats *ps)
{
	struct rtt_summary r = {NAN, NAN, NAN, NAN, NAN};
	double sum = 0;
	size_t n = ps->nrtt;

	if (!n)
		return r;
	qsort(ps->rtt_us, n, sizeof(double), cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += ps->rtt_us[i];
	r.min = ps->rtt_us[0];
	r.max = ps->rtt_us[n - 1];
	r.mean = sum / (double)n;
	r.p50 = ps->rtt_us[(size_t)ceil(0.50 * (double)n) - 1];
	r.p99 = ps->rtt_us[(size_t)ceil(0.99 * (double)n) - 1];
	return r;
}

static json_t *jnum(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

static json_t *fails_json(const struct secho_pathstats *ps)
{
	json_t *f = json_object();

	for (unsigned i = 1; i < SECHO_VF_COUNT; i++)
		if (ps->fail_by[i])
			json_object_set_new(f, secho_vfail_name(i),
			                    json_integer((json_int_t)ps->fail_by[i]));
	return f;
}

static const char *const stat5[] = {"min", "mean", "p50", "p99", "max"};

static json_t *endpoint_json(const json_t *rep, const char *eng)
{
	json_t *o = json_object();
	char path[128];

	for (int w = 0; w < 2; w++) {
		const char *what = w ? "latency_cycles" : "latency_ns";
		json_t *l = json_object();

		for (int i = 0; i < 5; i++) {
			snprintf(path, sizeof(path), "engines.%s.%s.%s", eng, what, stat5[i]);
			json_object_set_new(l, stat5[i], jnum(secho_report_num(rep, path)));
		}
		json_object_set_new(o, what, l);
	}
	snprintf(path, sizeof(path), "engines.%s.headroom_pps", eng);
	json_object_set_new(o, "headroom_pps", jnum(secho_report_num(rep, path)));
	return o;
}

/*
 * The round trips as a histogram of log-spaced buckets, ten per decade from 1 us: every
 * sample counted in the first bucket whose upper edge `le` (us) is at or above it; only
 * non-empty buckets are listed, in increasing order.
 */
static json_t *rtt_histogram(const struct secho_pathstats *ps)
{
	enum { NB = 80 }; /* 1 us .. 10^8 us */
	uint64_t cnt[NB + 1] = {0};
	for (size_t i = 0; i < ps->nrtt; i++) {
		double v = ps->rtt_us[i];
		int b = v <= 1.0 ? 0 : (int)ceil(10.0 * log10(v) - 1e-9);
		cnt[b < 0 ? 0 : b > NB ? NB : b]++;
	}
	json_t *a = json_array();
	for (int b = 0; b <= NB; b++)
		if (cnt[b])
			json_array_append_new(a, json_pack("{s:f,s:I}", "le", pow(10.0, b / 10.0),
			                                   "count", (json_int_t)cnt[b]));
	return a;
}

/* One paired run, by phase: open, run, collect, report. */
struct paired {
	const struct secho_host_opts *o;
	struct secho_sess *s;
	struct rtt_summary rs[2];
	unsigned long lost, failed;
	json_t *rep;
	bool deadline_hit, counters_ok;
	double ratio;
	int rc;
};

/* Run: alternate the paths packet by packet so both see the same host and link state. */
static void paired_run(struct paired *p)
{
	const struct secho_host_opts *o = p->o;
	struct secho_sess *s = p->s;
	uint64_t tmo = (uint64_t)o->timeout_ms * 1000000u,
	         deadline = secho_mono_ns() + (uint64_t)o->deadline_s * 1000000000u;
	bool show = o->progress && !o->quiet && !o->json;

	for (unsigned i = 0; i < 2 * o->count; i++) {
		unsigned path = i & 1;
		uint64_t end;

		if (secho_mono_ns() >= deadline) {
			p->deadline_hit = true;
			break;
		}
		if (secho_sess_send(s, path, secho_sess_size(s)) < 0) {
			/* Socket buffer full or a send error: wait a little, count it lost. */
			s->ps[path].sent++;
			s->ps[path].lost++;
			(void)secho_sess_poll(s, 1000);
			continue;
		}
		end = secho_mono_ns() + tmo;
		while (s->outstanding && secho_mono_ns() < end) {
			int64_t left = (int64_t)(end - secho_mono_ns()) / 1000;

			if (secho_sess_poll(s, left > 0 ? left : 0) < 0)
				break;
		}
		secho_sess_expire(s, tmo);
		if (show && (i + 1) % 200 == 0)
			o->progress(i + 1, 2 * o->count);
	}
	if (show)
		o->progress(0, 0);
}

/* Collect: the endpoint's counters report, the summaries, the verdict. */
static void paired_collect(struct paired *p, char *err, size_t errlen)
{
	struct secho_sess *s = p->s;

	if (secho_sess_fetch_counters(s) == 0) {
		p->rep = secho_report_parse(s, err, errlen);
		p->counters_ok = p->rep != NULL;
	}
	for (int i = 0; i < 2; i++) {
		p->rs[i] = summarize(&s->ps[i]);
		p->lost += s->ps[i].lost;
		p->failed += s->ps[i].failed;
	}
	if (p->rep) {
		double a = secho_report_num(p->rep, "engines.offload.latency_ns.mean"),
		       b = secho_report_num(p->rep, "engines.streaming.latency_ns.mean");

		if (!isnan(a) && !isnan(b) && b > 0)
			p->ratio = a / b;
	}
	p->rc = (p->failed || p->lost > p->o->max_loss || p->deadline_hit) ? 1 : 0;
	if (s->have_report && s->report_res.first != SECHO_VF_OK)
		p->rc = 1;
	if (secho_sess_close_log(s, err, errlen) < 0)
		p->rc = 1;
}

/* Report, as JSON. */
static void paired_json(const struct paired *pr, FILE *out)
{
	json_t *j = json_object(), *paths = json_object();

	json_object_set_new(j, "mode",
	                    json_string(pr->s->x.mode == SECHO_X_RAW ? "raw" : "socket"));
	json_object_set_new(j, "l2l3_verified", json_boolean(pr->s->x.mode == SECHO_X_RAW));
	for (int p = 0; p < 2; p++) {
		struct secho_pathstats *ps = &pr->s->ps[p];
		json_t *pj = json_object(), *r = json_object();

		json_object_set_new(pj, "port", json_integer(pr->s->ports[p]));
		json_object_set_new(pj, "sent", json_integer((json_int_t)ps->sent));
		json_object_set_new(pj, "answered", json_integer((json_int_t)ps->answered));
		json_object_set_new(pj, "verified", json_integer((json_int_t)ps->verified));
		json_object_set_new(pj, "payload_hash_match",
		                    json_integer((json_int_t)ps->payload_ok));
		json_object_set_new(pj, "ciphertext_hash_match",
		                    json_integer((json_int_t)ps->ct_ok));
		json_object_set_new(pj, "tag_match", json_integer((json_int_t)ps->tag_ok));
		json_object_set_new(pj, "lost", json_integer((json_int_t)ps->lost));
		json_object_set_new(pj, "late", json_integer((json_int_t)ps->late));
		json_object_set_new(pj, "failed", json_integer((json_int_t)ps->failed));
		json_object_set_new(pj, "failures", fails_json(ps));
		json_object_set_new(r, "min", jnum(pr->rs[p].min));
		json_object_set_new(r, "mean", jnum(pr->rs[p].mean));
		json_object_set_new(r, "p50", jnum(pr->rs[p].p50));
		json_object_set_new(r, "p99", jnum(pr->rs[p].p99));
		json_object_set_new(r, "max", jnum(pr->rs[p].max));
		json_object_set_new(r, "histogram", rtt_histogram(ps));
		json_object_set_new(pj, "host_rtt_us", r);
		if (pr->rep)
			json_object_set_new(pj, "endpoint",
			                    endpoint_json(pr->rep, secho_path_names[p]));
		json_object_set_new(paths, secho_path_names[p], pj);
	}
	json_object_set_new(j, "paths", paths);
	json_object_set_new(j, "unmatched", json_integer((json_int_t)pr->s->unmatched));
	json_object_set_new(j, "seq_check_complete", json_boolean(!pr->s->v->seen.overflow));
	json_object_set_new(j, "counters_verified", json_boolean(pr->counters_ok));
	json_object_set_new(j, "offload_streaming_latency_ratio", jnum(pr->ratio));
	json_object_set_new(j, "deadline_hit", json_boolean(pr->deadline_hit));
	json_object_set_new(j, "pass", json_boolean(pr->rc == 0));
	if (pr->rep)
		json_object_set(j, "counters", pr->rep);
	json_dumpf(j, out, JSON_INDENT(2) | JSON_ENSURE_ASCII);
	fputc('\n', out);
	json_decref(j);
}

/* Report, as text. */
static void paired_text(const struct paired *pr, FILE *out)
{
	if (pr->s->x.mode == SECHO_X_RAW)
		fprintf(out,
		        "raw mode: every Ethernet, IPv4 and UDP field of each response verified\n");
	else
		fprintf(out,
		        "socket mode: the kernel strips Ethernet/IPv4/UDP headers, so MACs, IP "
		        "checksum, TTL, DF and lengths are NOT verified here\n(visible and "
		        "verified: "
		        "source IP, UDP ports, secure header, ciphertext, tag; use --iface for "
		        "full "
		        "checks)\n");
	fprintf(out, "%-10s %6s %6s %8s %8s %8s %8s %6s %6s %6s\n", "path", "port", "sent",
	        "answered", "verified", "payload", "cipher", "tag", "lost", "failed");
	for (int p = 0; p < 2; p++) {
		const struct secho_pathstats *ps = &pr->s->ps[p];

		fprintf(out, "%-10s %6u %6llu %8llu %8llu %8llu %8llu %6llu %6llu %6llu\n",
		        secho_path_names[p], pr->s->ports[p], (unsigned long long)ps->sent,
		        (unsigned long long)ps->answered, (unsigned long long)ps->verified,
		        (unsigned long long)ps->payload_ok, (unsigned long long)ps->ct_ok,
		        (unsigned long long)ps->tag_ok, (unsigned long long)ps->lost,
		        (unsigned long long)ps->failed);
		for (unsigned f = 1; f < SECHO_VF_COUNT; f++)
			if (ps->fail_by[f])
				fprintf(out, "    failed check %-20s %llu\n", secho_vfail_name(f),
				        (unsigned long long)ps->fail_by[f]);
	}
	if (pr->s->first_fail[0])
		fprintf(out, "first failure: %s\n", pr->s->first_fail);
	if (pr->s->unmatched || pr->s->ps[0].late || pr->s->ps[1].late)
		fprintf(out, "responses matching no request: %llu; late (after --timeout): %llu\n",
		        (unsigned long long)pr->s->unmatched,
		        (unsigned long long)pr->s->ps[0].late + pr->s->ps[1].late);
	if (pr->s->v->seen.overflow)
		fprintf(out, "warning: sequence set full, repeats not checked for every packet\n");
	fprintf(out, "host RTT (us)   %10s%10s%10s%10s%10s\n", "min", "mean", "p50", "p99", "max");
	for (int p = 0; p < 2; p++) {
		fprintf(out, "%-15s ", secho_path_names[p]);
		secho_print_num(out, 10, 1, pr->rs[p].min);
		secho_print_num(out, 10, 1, pr->rs[p].mean);
		secho_print_num(out, 10, 1, pr->rs[p].p50);
		secho_print_num(out, 10, 1, pr->rs[p].p99);
		secho_print_num(out, 10, 1, pr->rs[p].max);
		fprintf(out, "\n");
	}
	if (pr->rep) {
		fprintf(out, "endpoint (counters report verified, seq %llu):\n",
		        (unsigned long long)pr->s->report_res.seq);
		fprintf(out, "%-26s%10s%10s%10s%10s%10s %12s\n", "latency", "min", "mean", "p50",
		        "p99", "max", "headroom_pps");
		for (int p = 0; p < 2; p++) {
			char path[128];

			for (int w = 0; w < 2; w++) {
				const char *what = w ? "latency_cycles" : "latency_ns";

				fprintf(out, "%-10s %-15s", secho_path_names[p],
				        w ? "TSC cycles" : "ns");
				for (int i = 0; i < 5; i++) {
					snprintf(path, sizeof(path), "engines.%s.%s.%s",
					         secho_path_names[p], what, stat5[i]);
					secho_print_num(out, 10, 0,
					                secho_report_num(pr->rep, path));
				}
				if (!w) {
					snprintf(path, sizeof(path), "engines.%s.headroom_pps",
					         secho_path_names[p]);
					fprintf(out, " ");
					secho_print_num(out, 12, 0,
					                secho_report_num(pr->rep, path));
				}
				fprintf(out, "\n");
			}
		}
		fprintf(out, "offload/streaming endpoint latency ratio (mean): ");
		if (isnan(pr->ratio))
			fprintf(out, "-\n");
		else
			fprintf(out, "%.1fx\n", pr->ratio);
	} else if (pr->s->have_report) {
		fprintf(out, "counters report FAILED verification: %s\n",
		        secho_vfail_name(pr->s->report_res.first));
	} else {
		fprintf(out, "counters report: no answer from port %u\n", pr->s->ports[2]);
	}
	if (pr->deadline_hit)
		fprintf(out, "overall deadline of %u s reached before all packets were sent\n",
		        pr->o->deadline_s);
	fprintf(out, "%s: %llu verified, %lu failed, %lu lost (max %lu)\n",
	        pr->rc ? "FAIL" : "PASS",
	        (unsigned long long)pr->s->ps[0].verified + pr->s->ps[1].verified, pr->failed,
	        pr->lost, pr->o->max_loss);
}

int secho_host_paired(const struct secho_host_opts *o, FILE *out, char *err, size_t errlen)
{
	struct paired p = {.o = o, .ratio = NAN};
	int rc;

	if (errlen)
		err[0] = '\0';
	p.s = malloc(sizeof(*p.s));
	if (!p.s) {
		secho_err_add(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (o->count == 0 || o->count > 1000000) {
		secho_err_add(err, errlen, "--count %u outside 1..1000000", o->count);
		free(p.s);
		return -EINVAL;
	}
	rc = secho_sess_open(p.s, o, 8, true, err, errlen);
	if (rc < 0) {
		free(p.s);
		return rc;
	}
	paired_run(&p);
	paired_collect(&p, err, errlen);
	if (o->json)
		paired_json(&p, out);
	else
		paired_text(&p, out);
	json_decref(p.rep);
	secho_sess_close(p.s);
	free(p.s);
	return p.rc;
}
