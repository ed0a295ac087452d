/*
 * src/host/load.c - `secho host load`: sustained traffic per path with every answer
 * verified. A bounded window of outstanding requests (--window) keeps the endpoint busy
 * without flooding it; requests go out in sendmmsg batches and answers come back in
 * recvmmsg batches. Optional pacing (--rate, packets per second over all paths) by a
 * send budget computed from the elapsed time. The run lasts --seconds (at most 60), plus
 * one --timeout to collect the last answers.
 */
#include "host/session.h"
#include "sys/err.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct snap {
	uint64_t sent, answered, verified, lost;
};

static void take(const struct secho_sess *s, struct snap sn[2])
{
	for (int p = 0; p < 2; p++) {
		sn[p].sent = s->ps[p].sent;
		sn[p].answered = s->ps[p].answered;
		sn[p].verified = s->ps[p].verified;
		sn[p].lost = s->ps[p].lost;
	}
}

int secho_host_load(const struct secho_host_opts *o, FILE *out, char *err, size_t errlen)
{
	struct secho_sess *s = malloc(sizeof(*s));
	struct snap prev[2], cur[2];
	uint64_t t0, t_end, t_next, tmo, sent_total = 0, rr = 0, exp_at;
	unsigned sec = 0, lo = o->path == SECHO_PATH_OFFLOAD ? 1 : 0,
	         hi = o->path == SECHO_PATH_STREAM ? 0 : 1;
	json_t *j = NULL, *secs = NULL;
	unsigned long lost = 0, failed = 0;
	int rc;

	if (errlen)
		err[0] = '\0';
	if (!s) {
		secho_err_add(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (o->seconds < 1 || o->seconds > SECHO_HOST_MAX_SECONDS) {
		secho_err_add(err, errlen, "--seconds %u outside 1..%d", o->seconds,
		              SECHO_HOST_MAX_SECONDS);
		free(s);
		return -EINVAL;
	}
	if (o->window < 1 || o->window > 65536) {
		secho_err_add(err, errlen, "--window %u outside 1..65536", o->window);
		free(s);
		return -EINVAL;
	}
	rc = secho_sess_open(s, o, o->window, false, err, errlen);
	if (rc < 0) {
		free(s);
		return rc;
	}
	if (o->json) {
		j = json_object();
		secs = json_array();
	} else {
		fprintf(out, "%4s %-10s %10s %10s %10s %10s   (packets per second)\n", "sec",
		        "path", "offered", "answered", "verified", "lost");
	}
	tmo = (uint64_t)o->timeout_ms * 1000000u;
	t0 = secho_mono_ns();
	t_end = t0 + (uint64_t)o->seconds * 1000000000u;
	t_next = t0 + 1000000000u;
	exp_at = t0 + 1000000u;
	take(s, prev);

	for (;;) {
		uint64_t now = secho_mono_ns();
		bool sending = now < t_end;

		if (sending) {
			uint8_t paths[SECHO_RXBATCH];
			size_t lens[SECHO_RXBATCH];
			uint64_t budget = SECHO_RXBATCH;
			int n;

			if (o->rate) {
				uint64_t due =
				        (uint64_t)((double)(now - t0) * 1e-9 * (double)o->rate) + 1;

				budget = due > sent_total ? due - sent_total : 0;
				if (budget > SECHO_RXBATCH)
					budget = SECHO_RXBATCH;
			}
			if (budget > s->wcap - s->outstanding)
				budget = s->wcap - s->outstanding;
			for (unsigned i = 0; i < budget; i++) {
				paths[i] = (uint8_t)(lo == hi ? lo : lo + (rr++ & 1));
				lens[i] = secho_sess_size(s);
			}
			n = budget ? secho_sess_send_batch(s, paths, lens, (unsigned)budget) : 0;
			if (n > 0)
				sent_total += (uint64_t)n;
			/* Busy-poll while sending; block briefly when nothing could go out. */
			if (secho_sess_poll(s, n > 0 ? 0 : 200) < 0)
				break;
		} else {
			if (!s->outstanding || now >= t_end + tmo)
				break;
			if (secho_sess_poll(s, 1000) < 0)
				break;
		}
		now = secho_mono_ns();
		if (now >= exp_at) {
			secho_sess_expire(s, tmo);
			exp_at = now + 1000000u;
		}
		if (now >= t_next && sec < o->seconds) {
			take(s, cur);
			sec++;
			for (unsigned p = lo; p <= hi; p++) {
				struct snap d = {cur[p].sent - prev[p].sent,
				                 cur[p].answered - prev[p].answered,
				                 cur[p].verified - prev[p].verified,
				                 cur[p].lost - prev[p].lost};

				if (j)
					json_array_append_new(
					        secs,
					        json_pack("{s:i,s:s,s:I,s:I,s:I,s:I}", "second",
					                  (int)sec, "path", secho_path_names[p],
					                  "offered", (json_int_t)d.sent, "answered",
					                  (json_int_t)d.answered, "verified",
					                  (json_int_t)d.verified, "lost",
					                  (json_int_t)d.lost));
				else
					fprintf(out, "%4u %-10s %10llu %10llu %10llu %10llu\n", sec,
					        secho_path_names[p], (unsigned long long)d.sent,
					        (unsigned long long)d.answered,
					        (unsigned long long)d.verified,
					        (unsigned long long)d.lost);
			}
			memcpy(prev, cur, sizeof(prev));
			t_next += 1000000000u;
		}
	}
	/* Whatever is still outstanding after the final timeout is lost. */
	secho_sess_expire(s, 0);
	for (unsigned p = lo; p <= hi; p++) {
		lost += s->ps[p].lost;
		failed += s->ps[p].failed;
	}
	rc = (failed || lost > o->max_loss) ? 1 : 0;
	if (secho_sess_close_log(s, err, errlen) < 0)
		rc = 1;
	if (j) {
		json_t *tot = json_object();

		for (unsigned p = lo; p <= hi; p++) {
			const struct secho_pathstats *ps = &s->ps[p];
			json_t *f = json_object();

			for (unsigned k = 1; k < SECHO_VF_COUNT; k++)
				if (ps->fail_by[k])
					json_object_set_new(
					        f, secho_vfail_name(k),
					        json_integer((json_int_t)ps->fail_by[k]));
			json_object_set_new(
			        tot, secho_path_names[p],
			        json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:f,s:o}", "sent",
			                  (json_int_t)ps->sent, "answered",
			                  (json_int_t)ps->answered, "verified",
			                  (json_int_t)ps->verified, "lost", (json_int_t)ps->lost,
			                  "failed", (json_int_t)ps->failed, "late",
			                  (json_int_t)ps->late, "verified_pps",
			                  (double)ps->verified / o->seconds, "failures", f));
		}
		json_object_set_new(j, "mode",
		                    json_string(s->x.mode == SECHO_X_RAW ? "raw" : "socket"));
		json_object_set_new(j, "seconds", json_integer(o->seconds));
		json_object_set_new(j, "rate", json_integer((json_int_t)o->rate));
		json_object_set_new(j, "window", json_integer(s->wcap));
		json_object_set_new(j, "per_second", secs);
		json_object_set_new(j, "totals", tot);
		json_object_set_new(j, "unmatched", json_integer((json_int_t)s->unmatched));
		json_object_set_new(j, "pass", json_boolean(rc == 0));
		json_dumpf(j, out, JSON_INDENT(2) | JSON_ENSURE_ASCII);
		fputc('\n', out);
		json_decref(j);
	} else {
		fprintf(out, "totals over %u s (window %u, %s mode):\n", o->seconds, s->wcap,
		        s->x.mode == SECHO_X_RAW ? "raw" : "socket");
		for (unsigned p = lo; p <= hi; p++) {
			const struct secho_pathstats *ps = &s->ps[p];

			fprintf(out,
			        "  %-10s sent %llu answered %llu verified %llu (%.0f/s) lost %llu "
			        "failed %llu late %llu\n",
			        secho_path_names[p], (unsigned long long)ps->sent,
			        (unsigned long long)ps->answered, (unsigned long long)ps->verified,
			        (double)ps->verified / o->seconds, (unsigned long long)ps->lost,
			        (unsigned long long)ps->failed, (unsigned long long)ps->late);
			for (unsigned k = 1; k < SECHO_VF_COUNT; k++)
				if (ps->fail_by[k])
					fprintf(out, "    failed check %-20s %llu\n",
					        secho_vfail_name(k),
					        (unsigned long long)ps->fail_by[k]);
		}
		if (s->first_fail[0])
			fprintf(out, "first failure: %s\n", s->first_fail);
		fprintf(out, "%s: %lu failed, %lu lost (max %lu)\n", rc ? "FAIL" : "PASS", failed,
		        lost, o->max_loss);
	}
	secho_sess_close(s);
	free(s);
	return rc;
}
