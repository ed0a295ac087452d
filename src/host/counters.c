/*
 * src/host/counters.c - `secho host counters`: fetch the endpoint's counters report (a
 * request to the counters port answered with flag 0x02), verify and decrypt it, print it.
 *
 * The report is written by the endpoint and grows over time: every lookup here tolerates
 * extra fields and prints a missing one as "-".
 */
#include "host/session.h"
#include "sys/err.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

json_t *secho_report_parse(const struct secho_sess *s, char *err, size_t errlen)
{
	json_error_t e;
	json_t *j = json_loadb((const char *)s->report, s->report_len, 0, &e);

	if (!j || !json_is_object(j)) {
		/* jansson's message may quote the report: escaped like any text from it. */
		char safe[4 * JSON_ERROR_TEXT_LENGTH + 1];
		secho_err_add(err, errlen, "counters report is not a JSON object: %s",
		              secho_err_safe(safe, sizeof(safe), j ? "other JSON type" : e.text));
		json_decref(j);
		return NULL;
	}
	return j;
}

void secho_fputs_safe(FILE *out, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '\\')
			fputs("\\\\", out);
		else if (*p >= 0x20 && *p < 0x7f)
			fputc(*p, out);
		else
			fprintf(out, "\\x%02x", *p);
	}
}

/* A report string field, escaped, or "-" when it is absent or not a string. */
static void put_str(FILE *out, const json_t *j)
{
	secho_fputs_safe(out, json_is_string(j) ? json_string_value(j) : "-");
}

double secho_report_num(const json_t *root, const char *path)
{
	char key[64];
	const json_t *j = root;
	const char *p = path;

	while (j && *p) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);

		if (n >= sizeof(key))
			return NAN;
		memcpy(key, p, n);
		key[n] = '\0';
		j = json_is_object(j) ? json_object_get(j, key) : NULL;
		p = dot ? dot + 1 : p + n;
	}
	return j && json_is_number(j) ? json_number_value(j) : NAN;
}

void secho_print_num(FILE *out, int width, int prec, double v)
{
	if (isnan(v))
		fprintf(out, "%*s", width, "-");
	else
		fprintf(out, "%*.*f", width, prec, v);
}

static void print_stat5(FILE *out, const json_t *rep, const char *eng, const char *what, int prec)
{
	static const char *const f[] = {"min", "mean", "p50", "p99", "max"};
	char path[128];

	for (int i = 0; i < 5; i++) {
		snprintf(path, sizeof(path), "engines.%s.%s.%s", eng, what, f[i]);
		secho_print_num(out, 10, prec, secho_report_num(rep, path));
	}
}

/* An endpoint with several workers: each one's share, one row per worker (the report's
 * "workers" arrays); only their number when the report left the arrays out (too long for
 * the MTU). Nothing for one worker. */
static void print_workers(FILE *out, const json_t *ws)
{
	static const char *const col[] = {"rx_frames", "tx_frames", "streaming", "offload",
	                                  "drops"};
	const json_t *n = json_object_get(ws, "n");
	if (!json_is_integer(n))
		return;
	const json_t *first = json_object_get(ws, col[0]);
	if (!json_is_array(first)) {
		fprintf(out, "workers: %lld (the per-worker counts did not fit in the report)\n",
		        (long long)json_integer_value(n));
		return;
	}
	fprintf(out, "%-10s", "worker");
	for (unsigned c = 0; c < 5; c++)
		fprintf(out, " %12s", col[c]);
	fputc('\n', out);
	for (size_t i = 0; i < json_array_size(first) && i < 1024; i++) {
		fprintf(out, "%-10zu", i);
		for (unsigned c = 0; c < 5; c++) {
			const json_t *v = json_array_get(json_object_get(ws, col[c]), i);
			fputc(' ', out);
			secho_print_num(out, 12, 0, json_is_number(v) ? json_number_value(v) : NAN);
		}
		fputc('\n', out);
	}
}

void secho_report_table(FILE *out, const json_t *rep)
{
	static const char *const eng[] = {"streaming", "offload"};
	static const char *const cost[] = {"datapath_cycles_per_pkt", "engine_cycles_per_pkt",
	                                   "key_state_bytes", "staging_bytes"};
	const json_t *io = json_object_get(rep, "io"), *drops = json_object_get(rep, "drops");
	char path[128];

	fprintf(out, "endpoint: uptime_s ");
	secho_print_num(out, 0, 1, secho_report_num(rep, "uptime_s"));
	fprintf(out, "  rx_frames ");
	secho_print_num(out, 0, 0, secho_report_num(rep, "rx_frames"));
	fprintf(out, "  tx_frames ");
	secho_print_num(out, 0, 0, secho_report_num(rep, "tx_frames"));
	fprintf(out, "  seq_high_water ");
	secho_print_num(out, 0, 0, secho_report_num(rep, "seq_high_water"));
	fprintf(out, "  io ");
	put_str(out, io);
	fputc('\n', out);

	fprintf(out, "%-10s %10s %12s %12s  backend\n", "engine", "packets", "bytes",
	        "headroom_pps");
	for (int e = 0; e < 2; e++) {
		const json_t *be = json_object_get(
		        json_object_get(json_object_get(rep, "engines"), eng[e]), "backend");

		fprintf(out, "%-10s ", eng[e]);
		snprintf(path, sizeof(path), "engines.%s.packets", eng[e]);
		secho_print_num(out, 10, 0, secho_report_num(rep, path));
		fprintf(out, " ");
		snprintf(path, sizeof(path), "engines.%s.bytes", eng[e]);
		secho_print_num(out, 12, 0, secho_report_num(rep, path));
		fprintf(out, " ");
		snprintf(path, sizeof(path), "engines.%s.headroom_pps", eng[e]);
		secho_print_num(out, 12, 0, secho_report_num(rep, path));
		fprintf(out, "  ");
		put_str(out, be);
		fputc('\n', out);
	}
	fprintf(out, "endpoint latency   %10s%10s%10s%10s%10s\n", "min", "mean", "p50", "p99",
	        "max");
	for (int e = 0; e < 2; e++) {
		fprintf(out, "%-9s ns     ", eng[e]);
		print_stat5(out, rep, eng[e], "latency_ns", 0);
		fprintf(out, "\n%-9s cycles ", eng[e]);
		print_stat5(out, rep, eng[e], "latency_cycles", 0);
		fprintf(out, "\n");
	}
	fprintf(out, "cost per engine    %26s%24s%18s%16s\n", cost[0], cost[1], cost[2], cost[3]);
	for (int e = 0; e < 2; e++) {
		static const int w[] = {26, 24, 18, 16};

		fprintf(out, "%-18s ", eng[e]);
		for (int c = 0; c < 4; c++) {
			snprintf(path, sizeof(path), "engines.%s.cost.%s", eng[e], cost[c]);
			secho_print_num(out, w[c], 0, secho_report_num(rep, path));
		}
		fprintf(out, "\n");
	}
	print_workers(out, json_object_get(rep, "workers"));
	fprintf(out, "drops:");
	if (json_is_object(drops) && json_object_size(drops)) {
		const char *k;
		json_t *val;

		json_object_foreach((json_t *)drops, k, val)
		{
			fputc(' ', out);
			secho_fputs_safe(out, k);
			fputc(' ', out);
			secho_print_num(out, 0, 0,
			                json_is_number(val) ? json_number_value(val) : NAN);
		}
		fprintf(out, "\n");
	} else {
		fprintf(out, " %s\n", drops ? "none" : "-");
	}
}

int secho_host_counters(const struct secho_host_opts *o, FILE *out, char *err, size_t errlen)
{
	struct secho_sess *s = malloc(sizeof(*s));
	json_t *rep = NULL;
	int rc = 1;

	if (errlen)
		err[0] = '\0';
	if (!s) {
		secho_err_add(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = secho_sess_open(s, o, 4, false, err, errlen);
	if (rc < 0) {
		free(s);
		return rc;
	}
	rc = 1;
	if (secho_sess_fetch_counters(s) < 0) {
		(void)secho_sess_close_log(s, err, errlen);
		if (s->have_report)
			secho_err_add(err, errlen, "counters report failed verification: %s",
			              secho_vfail_name(s->report_res.first));
		else
			secho_err_add(err, errlen,
			              "no counters report from port %u within %u ms "
			              "(3 tries)",
			              o->port_counters, o->timeout_ms);
		goto out;
	}
	rep = secho_report_parse(s, err, errlen);
	if (secho_sess_close_log(s, err, errlen) < 0 || !rep)
		goto out;
	if (o->json) {
		json_t *wrap = json_pack("{s:b,s:I,s:s,s:O}", "verified", 1, "seq",
		                         (json_int_t)s->report_res.seq, "sealed_by",
		                         (s->report_res.flags & SECHO_SHDR_F_OFFLOAD) ? "offload"
		                                                                      : "streaming",
		                         "report", rep);

		json_dumpf(wrap, out, JSON_INDENT(2) | JSON_ENSURE_ASCII);
		fputc('\n', out);
		json_decref(wrap);
	} else {
		fprintf(out,
		        "counters report verified (tag ok, key id %u, seq %llu, sealed by the %s "
		        "engine)\n",
		        (unsigned)s->report_res.key_id, (unsigned long long)s->report_res.seq,
		        (s->report_res.flags & SECHO_SHDR_F_OFFLOAD) ? "offload" : "streaming");
		secho_report_table(out, rep);
	}
	rc = 0;
out:
	json_decref(rep);
	secho_sess_close(s);
	free(s);
	return rc;
}
