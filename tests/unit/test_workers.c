/*
 * tests/unit/test_workers.c - several data-path workers at once, offline: each worker a
 * thread running the production loop (secho_worker_loop) on a capture of its own, all of
 * them sharing what serve.c shares: one offload engine (a queue pair each), one sequence
 * allocator (a lease each, its reservation thread writing ahead), one counters report
 * (its rate limiter, and every report reading every worker's counters while they run).
 * Checked: every request answered once, by its own worker, each response opened by OpenSSL
 * to the request's payload; no sequence number twice across the workers; every report's
 * per-worker shares add up to its totals; at the end each worker's counters are its own
 * input's and the totals their sum. `make tsan` builds it with ThreadSanitizer as well.
 */
#include <jansson.h>
#include <pcap/pcap.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "endpoint/pipeline.h"
#include "endpoint/report.h"
#include "endpoint/seqlease.h"
#include "eptest.h"
#include "harness.h"

#define W 3 /* workers: more threads than this machine's two CPUs */

static const uint8_t EP_MAC[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x02};
static const uint8_t H_MAC[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};

struct req {
	uint16_t dport;
	uint16_t len;
	uint8_t pl[600];
	unsigned answered;
};

struct wt {
	struct secho_worker w;
	pthread_t th;
	const _Atomic int *stop;
	int rc;
};

static void *run(void *arg)
{
	struct wt *t = arg;
	t->rc = secho_worker_loop(&t->w, t->stop);
	return NULL;
}

static int refill(struct secho_worker *w)
{
	return secho_seqlease_refill(w->refill_arg, &w->lease);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t jint(json_t *o, const char *k)
{
	return (uint64_t)json_integer_value(json_object_get(o, k));
}

static uint64_t jsum(json_t *a)
{
	uint64_t s = 0;
	size_t i;
	json_t *v;
	json_array_foreach(a, i, v) s += (uint64_t)json_integer_value(v);
	return s;
}

/* A report's own arithmetic: the workers' shares against its totals. */
static bool report_adds_up(json_t *r)
{
	json_t *ws = json_object_get(r, "workers"), *dr = json_object_get(r, "drops");
	json_t *eng = json_object_get(r, "engines");
	uint64_t drops = 0;
	const char *k;
	json_t *v;
	json_object_foreach(dr, k, v) drops += (uint64_t)json_integer_value(v);
	return jint(ws, "n") == W && json_array_size(json_object_get(ws, "rx_frames")) == W &&
	       jsum(json_object_get(ws, "rx_frames")) == jint(r, "rx_frames") &&
	       jsum(json_object_get(ws, "tx_frames")) == jint(r, "tx_frames") &&
	       jsum(json_object_get(ws, "streaming")) ==
	               jint(json_object_get(eng, "streaming"), "packets") &&
	       jsum(json_object_get(ws, "offload")) ==
	               jint(json_object_get(eng, "offload"), "packets") &&
	       jsum(json_object_get(ws, "drops")) == drops;
}

int main(void)
{
	t_seed_init("test_workers");
	unsigned per = getenv("SECHO_TEST_QUICK") ? 600 : 3000; /* requests per worker */
	char dir[] = "/tmp/secho-test-workers.XXXXXX", err[256];
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	t_begin("%d workers at once, one capture each, sharing the offload engine, the sequence "
	        "allocator and the report: %u requests each",
	        W, per);
	uint8_t key[32], salt[4];
	t_randbytes(key, sizeof(key));
	t_randbytes(salt, sizeof(salt));
	static struct req reqs[W][3000];
	char in[W][300], out[W][300], state[300];
	snprintf(state, sizeof(state), "%s/seq.state", dir);
	static uint8_t f[2048];
	unsigned nreports = 0;
	for (unsigned i = 0; i < W; i++) {
		snprintf(in[i], sizeof(in[i]), "%s/in%u.pcap", dir, i);
		snprintf(out[i], sizeof(out[i]), "%s/out%u.pcap", dir, i);
		pcap_t *dead = pcap_open_dead(DLT_EN10MB, 65535);
		pcap_dumper_t *d = pcap_dump_open(dead, in[i]);
		for (unsigned k = 0; k < per; k++) {
			struct req *r = &reqs[i][k];
			r->dport = (uint16_t)(k % 50 == 49 ? 4002 : 4000 + k % 2);
			nreports += r->dport == 4002;
			r->len = r->dport == 4002 ? 0 : (uint16_t)t_randrange(0, sizeof(r->pl));
			t_randbytes(r->pl, r->len);
			/* source 192.0.2.(10 + i), port 20000 + k: the answer names both */
			size_t n = ept_request(f, EP_MAC, H_MAC, (uint8_t)(10 + i),
			                       (uint16_t)(20000 + k), r->dport, r->pl, r->len);
			struct pcap_pkthdr h = {.caplen = (bpf_u_int32)n, .len = (bpf_u_int32)n};
			pcap_dump((u_char *)d, &h, f);
		}
		pcap_dump_close(d);
		pcap_close(dead);
	}

	struct secho_wire_cfg wc;
	ept_wire_cfg(&wc, EP_MAC);
	static secho_gcm_key gk;
	struct secho_offload_cfg oc = {.backend = SECHO_OFFLOAD_OPENSSL,
	                               .queues = W,
	                               .ring_size = 2048, /* a capture's offload requests, */
	                               .spin_us = 20,     /* all posted before any completes */
	                               .max_len = 1440};
	struct secho_offload *off = secho_offload_create(&oc, key, err, sizeof(err));
	struct secho_seqlease *seq = secho_seqlease_open(state, 7, 0, 0, err, sizeof(err));
	static struct secho_report_ctx rep;
	static struct wt ts[W];
	struct secho_counters *ctrs[W];
	_Atomic int stop = 0;
	if (!T_CHECK(off && seq && secho_gcm_key_init(&gk, key, 32, SECHO_IMPL_AUTO) == SECHO_OK,
	             "set-up: %s", err))
		goto out;
	secho_report_init(&rep, 1000); /* let reports through: they are what is tested */
	rep.ctr = ctrs;
	rep.nworkers = W;
	rep.off = off;
	rep.io_desc = "pcap";
	rep.offload_backend = "openssl";
	for (unsigned i = 0; i < W; i++) {
		struct secho_worker *w = &ts[i].w;
		struct secho_io_cfg ioc = {
		        .kind = SECHO_IO_PCAP, .pcap_in = in[i], .pcap_out = out[i]};
		w->io = secho_io_open(&ioc, err, sizeof(err));
		if (!T_CHECK(w->io && secho_worker_init(w, 2048, 1500) == 0, "worker %u: %s", i,
		             err))
			goto out;
		w->wire = &wc;
		w->gk = &gk;
		w->offq = secho_offload_queue(off, i);
		w->key_id = 7;
		memcpy(w->salt, salt, 4);
		w->report = &rep;
		w->refill = refill;
		w->refill_arg = seq;
		ctrs[i] = &w->ctr;
		ts[i].stop = &stop;
	}
	for (unsigned i = 0; i < W; i++)
		T_CHECK(pthread_create(&ts[i].th, NULL, run, &ts[i]) == 0, "thread %u", i);
	for (unsigned i = 0; i < W; i++) {
		pthread_join(ts[i].th, NULL);
		T_CHECK(ts[i].rc == 0, "worker %u loop: %d", i, ts[i].rc);
		secho_io_close(ts[i].w.io);
		ts[i].w.io = NULL;
	}

	/* Every response: from its own worker, opened by OpenSSL, the request's payload. */
	static uint64_t seqs[W * 3000];
	unsigned nseq = 0, bad = 0, wrong_worker = 0, reports = 0, reports_bad = 0;
	for (unsigned i = 0; i < W; i++) {
		pcap_t *rp = pcap_open_offline(out[i], err);
		struct pcap_pkthdr *h;
		const u_char *fr;
		while (rp && pcap_next_ex(rp, &h, &fr) == 1) {
			static uint8_t pt[1500];
			const uint8_t *hdr = fr + 42;
			size_t ctlen = h->caplen >= 74 ? h->caplen - 74 : 0;
			unsigned k = (unsigned)(fr[36] << 8 | fr[37]) - 20000u;
			if (h->caplen < 74 || k >= per || ctlen > sizeof(pt) - 1 ||
			    !ept_gcm_open(key, hdr, hdr + 16, ctlen, hdr + 16 + ctlen, pt)) {
				bad++;
				continue;
			}
			wrong_worker += fr[33] != 10 + i; /* answered to 192.0.2.(10 + i) */
			uint64_t s = 0;
			for (int b = 8; b < 16; b++)
				s = s << 8 | hdr[b];
			seqs[nseq++] = s;
			struct req *r = &reqs[i][k];
			r->answered++;
			if (r->dport == 4002) {
				reports++;
				pt[ctlen] = '\0';
				json_t *j = json_loads((const char *)pt, 0, NULL);
				reports_bad += !j || !report_adds_up(j);
				json_decref(j);
			} else {
				bad += ctlen != r->len || memcmp(pt, r->pl, ctlen) != 0 ||
				       hdr[1] != (r->dport == 4001);
			}
		}
		if (rp)
			pcap_close(rp);
	}
	unsigned once = 0, reports_asked = 0;
	for (unsigned i = 0; i < W; i++)
		for (unsigned k = 0; k < per; k++) {
			reports_asked += reqs[i][k].dport == 4002;
			once += reqs[i][k].dport == 4002 ? reqs[i][k].answered <= 1
			                                 : reqs[i][k].answered == 1;
		}
	T_CHECK(once == W * per, "%u of %u requests answered once (reports: at most once)", once,
	        W * per);
	T_CHECK(bad == 0 && wrong_worker == 0, "%u responses wrong, %u from another worker", bad,
	        wrong_worker);
	T_CHECK(reports > nreports / 2 && reports_bad == 0,
	        "%u of %u counters reports sent (rate limit 1000/s), %u not adding up", reports,
	        reports_asked, reports_bad);
	qsort(seqs, nseq, sizeof(seqs[0]), cmp_u64);
	unsigned dup = 0;
	for (unsigned k = 1; k < nseq; k++)
		dup += seqs[k] == seqs[k - 1];
	T_CHECK(dup == 0 && nseq > 0, "%u sequence numbers repeated across the workers (of %u)",
	        dup, nseq);

	/* The counters: each worker's are its own input's; the totals are their sum. */
	static struct secho_counters sum;
	struct secho_counters_brief sh[W];
	secho_report_collect(&rep, &sum, sh);
	uint64_t rx = 0, tx = 0;
	for (unsigned i = 0; i < W; i++) {
		T_CHECK(sh[i].rx_frames == per, "worker %u received %llu of its %u", i,
		        (unsigned long long)sh[i].rx_frames, per);
		T_CHECK(sh[i].rx_frames == sh[i].tx_frames + sh[i].drops,
		        "worker %u: rx %llu = tx %llu + drops %llu", i,
		        (unsigned long long)sh[i].rx_frames, (unsigned long long)sh[i].tx_frames,
		        (unsigned long long)sh[i].drops);
		rx += sh[i].rx_frames;
		tx += sh[i].tx_frames;
	}
	T_CHECK(sum.rx_frames == rx && sum.tx_frames == tx && rx == (uint64_t)W * per,
	        "totals %llu / %llu = the workers' sums", (unsigned long long)sum.rx_frames,
	        (unsigned long long)sum.tx_frames);
	printf("  %u responses, %u reports; %llu dropped:", nseq, reports,
	       (unsigned long long)secho_counters_drops(&sum));
	for (unsigned i = 0; i < SECHO_PIPE_DROP_COUNT; i++)
		if (sum.drop[i])
			printf(" %s %llu", secho_pipe_drop_name(i),
			       (unsigned long long)sum.drop[i]);
	printf("\n");
out:
	for (unsigned i = 0; i < W; i++) {
		secho_io_close(ts[i].w.io);
		secho_worker_fini(&ts[i].w);
		unlink(in[i]);
		unlink(out[i]);
	}
	secho_offload_destroy(off);
	if (seq)
		secho_seqlease_close(seq, err, sizeof(err));
	secho_gcm_key_wipe(&gk);
	char p[320];
	unlink(state);
	snprintf(p, sizeof(p), "%s.lock", state);
	unlink(p);
	rmdir(dir);
	t_end();
	return t_exit();
}
