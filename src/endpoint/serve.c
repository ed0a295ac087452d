/*
 * src/endpoint/serve.c - bring the endpoint up, run the data path, bring it down.
 *
 * Set-up order (each step can refuse to start, with one line on stderr and exit 2):
 * process made non-dumpable; the offload backends' key state directed to locked, non-dumped
 * memory (before anything uses OpenSSL); key file loaded into locked, non-dumped memory; AES-GCM
 * key schedule; sequence state opened and a first window reserved durably; offload engine (backend
 * probed: AF_ALG says clearly when the kernel lacks it); I/O opened. Then the loop: RX burst
 * through the stages, offload completions, wait when idle. SIGINT/SIGTERM (or end of the pcap
 * input, or --seconds) stops RX; the offload engine is drained and its completions sent, TX
 * flushed, the sequence state flushed, and a summary printed. A failed reservation of sequence
 * numbers (the state's disk full, say: made in the background, see seqlease.h) stops the endpoint
 * the same way within one loop turn (at most the 100 ms poll), with the reason on stderr and exit
 * status 1: without durable numbers no request can be answered, and a supervisor must notice.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "endpoint/endpoint.h"
#include "endpoint/pipeline.h"
#include "endpoint/seqlease.h"
#include "secho/keyfile.h"
#include "secho/tsc.h"

static uint64_t high_water(void *arg)
{
	return secho_seqlease_high_water(arg);
}

static int refill(struct secho_worker *w)
{
	return secho_seqlease_refill(w->refill_arg, &w->seq_next, &w->seq_end);
}

static void print_engine(const char *name, const struct secho_engine_counters *e, double hz)
{
	struct secho_lat_summary s;
	secho_lat_summary(&e->lat, &s);
	double ns = 1e9 / hz;
	printf("  %-9s %10" PRIu64 " packets %12" PRIu64 " bytes   latency ns min %.0f p50 %.0f "
	       "p99 %.0f max %.0f (p50 %.0f cycles)\n",
	       name, e->packets, e->bytes, s.min * ns, s.p50 * ns, s.p99 * ns, s.max * ns, s.p50);
}

static void print_summary(const struct secho_report_ctx *r, struct secho_io *io)
{
	struct secho_counters c;
	secho_report_collect(r, &c);
	struct secho_io_stats st;
	secho_io_get_stats(io, &st);
	printf("secho serve: summary\n");
	printf("  frames    rx %" PRIu64 "  tx %" PRIu64 "  reports %" PRIu64
	       "  kernel drops %" PRIu64 "\n",
	       c.rx_frames, c.tx_frames, c.reports, st.rx_dropped_by_kernel);
	print_engine("streaming", &c.eng[SECHO_ENG_STREAM], r->tsc_hz);
	print_engine("offload", &c.eng[SECHO_ENG_OFFLOAD], r->tsc_hz);
	uint64_t d = secho_counters_drops(&c);
	printf("  drops     %" PRIu64 "%s", d, d ? ":" : "\n");
	if (d) {
		for (unsigned i = 1; i < SECHO_WIRE_VERDICT_COUNT; i++)
			if (i != SECHO_WIRE_ARP && c.verdict[i])
				printf(" %s=%" PRIu64, secho_wire_verdict_name(i), c.verdict[i]);
		for (unsigned i = 0; i < SECHO_PIPE_DROP_COUNT; i++)
			if (c.drop[i])
				printf(" %s=%" PRIu64, secho_pipe_drop_name(i), c.drop[i]);
		printf("\n");
	}
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
		             (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
		uint64_t ans = c.eng[SECHO_ENG_STREAM].packets + c.eng[SECHO_ENG_OFFLOAD].packets;
		printf("  cpu       %.3f s (both threads), %.0f ns per answered packet\n", cpu,
		       ans ? cpu * 1e9 / (double)ans : 0.0);
	}
	printf("  sequence  high-water %" PRIu64 "\n",
	       r->seq_high_water ? r->seq_high_water(r->seq_arg) : r->seq_final);
}

int secho_endpoint_run(const struct secho_endpoint_cfg *cfg, volatile sig_atomic_t *stop)
{
	char err[512];
	int rc = 2;
	struct secho_keyfile *key = NULL;
	secho_gcm_key *gk = NULL;
	bool locked = false;
	struct secho_seqlease *seq = NULL;
	struct secho_offload *off = NULL;
	struct secho_io *io = NULL;
	struct secho_worker w;
	struct secho_report_ctx *rep = NULL;
	memset(&w, 0, sizeof(w));

	if (secho_secret_process_protect() != 0)
		fprintf(stderr, "secho serve: warning: could not make the process non-dumpable\n");
	bool off_locked = false;
	int pe = secho_offload_protect_keys(&off_locked);
	if (pe == -ENOMEM || (pe && cfg->offload == SECHO_OFFLOAD_OPENSSL)) {
		fprintf(stderr,
		        "secho serve: cannot keep the offload engine's key state in locked memory: "
		        "%s\n",
		        pe == -EBUSY ? "OpenSSL was used before its allocator could be set"
		                     : strerror(-pe));
		goto out;
	}
	bool key_locked = false, gk_locked = false;
	key = secho_secret_alloc(sizeof(*key), &key_locked);
	gk = secho_secret_alloc(sizeof(*gk), &gk_locked);
	locked = key_locked && gk_locked && off_locked;
	if (!key || !gk) {
		fprintf(stderr, "secho serve: cannot allocate protected key memory: %s\n",
		        strerror(errno));
		goto out;
	}
	if (secho_keyfile_load(cfg->key_path, key, err, sizeof(err)) != 0) {
		fprintf(stderr, "secho serve: key file: %s\n", err); /* err names the file */
		goto out;
	}
	int e = secho_gcm_key_init(gk, key->key, SECHO_KEY_LEN, SECHO_IMPL_AUTO);
	if (e != SECHO_OK) {
		fprintf(stderr, "secho serve: AES-GCM key set-up: %s\n", secho_strerror(e));
		goto out;
	}
	/* A shared key: every endpoint using it folds its own instance id into its IVs
	 * (docs/PROTOCOL.md, "Shared keys"); an unshared one keeps the plain format. */
	if (key->shared && !cfg->instance) {
		fprintf(stderr,
		        "secho serve: key file %s: key id %u is shared by several endpoints: give "
		        "this one its own --instance N (1..4294967295), unique among them\n",
		        cfg->key_path, (unsigned)key->key_id);
		goto out;
	}
	if (!key->shared && cfg->instance) {
		fprintf(stderr,
		        "secho serve: --instance: key id %u is not marked shared in %s (an "
		        "instance id changes the IV and the header; see secho keygen --shared)\n",
		        (unsigned)key->key_id, cfg->key_path);
		goto out;
	}
	seq = secho_seqlease_open(cfg->state_path, key->key_id, cfg->instance, cfg->seq_window, err,
	                          sizeof(err));
	if (!seq) {
		fprintf(stderr, "secho serve: refusing to start: sequence state: %s\n", err);
		goto out;
	}
	if (err[0])
		fprintf(stderr, "secho serve: warning: sequence state: %s\n", err);
	if (!secho_offload_backend_probe(cfg->offload, err, sizeof(err))) {
		fprintf(stderr, "secho serve: offload backend %s unavailable: %s\n",
		        secho_offload_backend_name(cfg->offload), err);
		goto out;
	}
	/* Every buffer is sized from the MTU: the offload engine's staging for the largest
	 * payload, the I/O backend's frames (or its refusal, with the reason) and the data
	 * path's scratch for the longest frame, a VLAN tag included. */
	off = secho_offload_create(cfg->offload, key->key, cfg->offload_ring, cfg->offload_spin_us,
	                           (uint32_t)SECHO_WIRE_MAX_PAYLOAD(cfg->wire.mtu), err,
	                           sizeof(err));
	if (!off) {
		fprintf(stderr, "secho serve: offload engine: %s\n", err);
		goto out;
	}
	struct secho_io_cfg ioc = cfg->io;
	ioc.max_frame = SECHO_ETH_HLEN + 4 + cfg->wire.mtu;
	io = secho_io_open(&ioc, err, sizeof(err));
	if (!io) {
		fprintf(stderr, "secho serve: I/O (MTU %u): %s\n", cfg->wire.mtu, err);
		goto out;
	}

	rep = calloc(1, sizeof(*rep));
	if (!rep || secho_worker_init(&w, cfg->offload_ring, cfg->wire.mtu) != 0) {
		fprintf(stderr, "secho serve: out of memory\n");
		goto out;
	}
	struct secho_worker *workers[1] = {&w};
	secho_report_init(rep, cfg->report_rate);
	rep->workers = workers;
	rep->nworkers = 1;
	/* The report carries the short form (what was opened, not why): it must fit the MTU. */
	char io_short[48];
	const char *desc = secho_io_describe(io);
	size_t dl = strcspn(desc, "(;,");
	while (dl && desc[dl - 1] == ' ')
		dl--;
	snprintf(io_short, sizeof(io_short), "%.*s", (int)dl, desc);
	rep->io_desc = io_short;
	rep->offload_backend = secho_offload_backend_name(cfg->offload);
	rep->off = off;
	rep->stream_key_bytes = sizeof(*gk);
	rep->stream_staging_bytes = 0; /* in place in the packet buffer */
	rep->offload_key_bytes = secho_offload_key_state_bytes(off);
	rep->offload_staging_bytes = secho_offload_staging_bytes(off);
	rep->seq_high_water = high_water;
	rep->seq_arg = seq;

	w.io = io;
	w.wire = &cfg->wire;
	w.gk = gk;
	w.off = off;
	w.key_id = key->key_id;
	secho_shdr_fixed(key->salt, cfg->instance, w.salt);
	w.shdr_flags = cfg->instance ? SECHO_SHDR_F_INSTANCE : 0;
	w.arp = cfg->arp;
	w.vlan_id = cfg->vlan;
	w.report = rep;
	w.refill = refill;
	w.refill_arg = seq;
	w.ip_id = (uint16_t)secho_rdtsc();
	if (cfg->io.busy_poll && (rc = secho_worker_warm_setup(&w)) != 0) {
		fprintf(stderr, "secho serve: data-path warm-up: %s\n",
		        rc == -ENOMEM ? "out of memory" : "canned request rejected (a bug)");
		rc = 1;
		goto out;
	}
	secho_keyfile_wipe(key); /* the engines hold their own schedules now */

	if (!cfg->quiet) {
		char ip[16];
		const uint8_t *a = (const uint8_t *)&cfg->wire.ip, *m = cfg->wire.mac;
		snprintf(ip, sizeof(ip), "%u.%u.%u.%u", a[0], a[1], a[2], a[3]);
		char vl[24] = ", untagged";
		if (cfg->vlan)
			snprintf(vl, sizeof(vl), ", VLAN %u", (unsigned)cfg->vlan);
		printf("secho serve: %s %02x:%02x:%02x:%02x:%02x:%02x, ports %u/%u/%u, MTU %u%s\n",
		       ip, m[0], m[1], m[2], m[3], m[4], m[5], cfg->wire.port_stream,
		       cfg->wire.port_offload, cfg->wire.port_counters, cfg->wire.mtu, vl);
		printf("secho serve: io: %s\n", secho_io_describe(io));
		printf("secho serve: streaming engine: secho %s; offload engine: %s (ring %u)\n",
		       secho_impl_name(secho_gcm_key_impl(gk)),
		       secho_offload_backend_name(cfg->offload), cfg->offload_ring);
		char inst[48] = "";
		if (cfg->instance)
			snprintf(inst, sizeof(inst), " (shared, instance %" PRIu32 ")",
			         cfg->instance);
		printf("secho serve: key id %u%s, sequence numbers from %" PRIu64 "%s\n", w.key_id,
		       inst, secho_seqlease_next(seq), locked ? "" : " (key memory not locked)");
		fflush(stdout);
	}

	double hz = secho_tsc_hz();
	uint64_t deadline = cfg->run_seconds > 0 ? secho_rdtsc() + (uint64_t)(cfg->run_seconds * hz)
	                                         : UINT64_MAX;
	rc = 0;
	while (!*stop) {
		unsigned got = secho_worker_rx(&w);
		secho_worker_completions(&w);
		if (secho_rdtsc() > deadline)
			break;
		if (secho_seqlease_failed(seq, err, sizeof(err))) {
			fprintf(stderr, "secho serve: stopping: sequence state: %s\n", err);
			rc = 1;
			break;
		}
		if (got)
			continue;
		if (secho_offload_inflight(off)) {
			secho_io_wait(io, 0); /* completions pending: keep polling */
			continue;
		}
		if (secho_io_eof(io))
			break;
		int wr = secho_io_wait(io, 100);
		if (wr < 0 && wr != -EINTR) {
			fprintf(stderr, "secho serve: I/O wait: %s\n", strerror(-wr));
			rc = 1;
			break;
		}
	}
	if (secho_io_input_error(io)) {
		/* A malformed capture: what came before it was answered, but the input is
		 * bad and the run must say so (exit 1), not pass as a drop. */
		fprintf(stderr, "secho serve: %s\n", secho_io_input_error(io));
		rc = 1;
	}
	/* Drain: every posted job completes and is sent (bounded: 2 s). */
	uint64_t until = secho_rdtsc() + (uint64_t)(2 * hz);
	while (secho_offload_inflight(off) && secho_rdtsc() < until)
		secho_worker_completions(&w);
	secho_io_tx_flush(io);
	rep->seq_final = secho_seqlease_high_water(seq);
	rep->seq_high_water = NULL; /* the lease is gone after close: report seq_final */
	if (secho_seqlease_close(seq, err, sizeof(err)) != 0 && rc == 0) {
		fprintf(stderr, "secho serve: sequence state: %s\n", err);
		rc = 1;
	}
	seq = NULL;
	if (!cfg->quiet)
		print_summary(rep, io);
out:
	secho_worker_fini(&w);
	free(rep);
	secho_io_close(io);
	secho_offload_destroy(off);
	if (seq)
		secho_seqlease_close(seq, err, sizeof(err));
	if (gk) {
		secho_gcm_key_wipe(gk);
		secho_secret_free(gk, sizeof(*gk));
	}
	if (key)
		secho_secret_free(key, sizeof(*key));
	return rc;
}
