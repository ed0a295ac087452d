/*
 * src/endpoint/serve.c - bring the endpoint up, run the data-path workers, bring it down.
 *
 * Set-up order (each step can refuse to start, with one line on stderr and exit 2):
 * process made non-dumpable; the offload backends' key state directed to locked, non-dumped
 * memory (before anything uses OpenSSL); key file loaded into locked, non-dumped memory; AES-GCM
 * key schedule; sequence state opened and a first window reserved durably; offload engine (backend
 * probed: AF_ALG says clearly when the kernel lacks it; one queue pair per worker); then per
 * worker, on the CPU it will run on when it is pinned (so that its memory is allocated
 * there): its I/O queue opened, its buffers. Then one thread per worker runs the loop: RX
 * burst through the stages, offload completions, wait when idle.
 *
 * The main thread supervises: SIGINT/SIGTERM, --seconds, a worker that stopped (end of the
 * pcap input, a failed I/O wait) or a failed reservation of sequence numbers (the state's
 * disk full, say: made in the background, see seqlease.h) stop every worker; each stops
 * receiving within one turn of its loop (at most its 100 ms poll), drains its offload queue
 * pair and sends the completions, flushes TX. Then the sequence state is flushed and a
 * summary printed. A failed reservation ends with the reason on stderr and exit status 1:
 * without durable numbers no request can be answered, and a supervisor must notice.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "endpoint/endpoint.h"
#include "endpoint/pipeline.h"
#include "endpoint/report.h"
#include "endpoint/seqlease.h"
#include "secho/cpu.h"
#include "secho/keyfile.h"
#include "secho/tsc.h"

/* One worker and its thread; cache-aligned, so that no two workers' data share a line. */
struct wthread {
	alignas(64) struct secho_worker w;
	pthread_t th;
	bool started;
	bool pinned;
	unsigned cpu, queue;
	int err;           /* -errno of a failed I/O wait (then the endpoint stops) */
	_Atomic int done;  /* the loop has ended (release: err is set) */
	_Atomic int *stop; /* set by the main thread: every worker stops */
};

static uint64_t high_water(void *arg)
{
	return secho_seqlease_high_water(arg);
}

static int refill(struct secho_worker *w)
{
	return secho_seqlease_refill(w->refill_arg, &w->lease);
}

/* A worker's thread: its loop (pipeline.h) until the main thread says stop. */
static void *worker_main(void *arg)
{
	struct wthread *t = arg;
	t->err = secho_worker_loop(&t->w, t->stop);
	atomic_store_explicit(&t->done, 1, memory_order_release);
	return NULL;
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

static void print_summary(const struct secho_report_ctx *r, const struct wthread *ts)
{
	struct secho_counters c;
	struct secho_counters_brief per[SECHO_EP_MAX_WORKERS];
	secho_report_collect(r, &c, per);
	uint64_t kdrops = 0;
	for (unsigned i = 0; i < r->nworkers; i++) {
		struct secho_io_stats st;
		secho_io_get_stats(ts[i].w.io, &st);
		kdrops += st.rx_dropped_by_kernel;
	}
	printf("secho serve: summary\n");
	printf("  frames    rx %" PRIu64 "  tx %" PRIu64 "  reports %" PRIu64
	       "  kernel drops %" PRIu64 "\n",
	       c.rx_frames, c.tx_frames, c.reports, kdrops);
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
	for (unsigned i = 0; r->nworkers > 1 && i < r->nworkers; i++) {
		char cpu[16] = "any";
		if (ts[i].pinned)
			snprintf(cpu, sizeof(cpu), "%u", ts[i].cpu);
		printf("  worker %-2u CPU %-4s rx %" PRIu64 "  tx %" PRIu64 "  streaming %" PRIu64
		       "  offload %" PRIu64 "  drops %" PRIu64 "\n",
		       i, cpu, per[i].rx_frames, per[i].tx_frames, per[i].packets[SECHO_ENG_STREAM],
		       per[i].packets[SECHO_ENG_OFFLOAD], per[i].drops);
	}
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
		             (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
		uint64_t ans = c.eng[SECHO_ENG_STREAM].packets + c.eng[SECHO_ENG_OFFLOAD].packets;
		printf("  cpu       %.3f s (all threads), %.0f ns per answered packet\n", cpu,
		       ans ? cpu * 1e9 / (double)ans : 0.0);
	}
	printf("  sequence  high-water %" PRIu64 "\n",
	       r->seq_high_water ? r->seq_high_water(r->seq_arg) : r->seq_final);
}

/* Receive queues of ifname (/sys/class/net/IF/queues/rx-N), 0 when it cannot be told. */
static unsigned rx_queues(const char *ifname)
{
	char path[128];
	unsigned n = 0;
	while (n < 4096) {
		snprintf(path, sizeof(path), "/sys/class/net/%s/queues/rx-%u", ifname, n);
		if (access(path, F_OK) != 0)
			break;
		n++;
	}
	return n;
}

/* Open worker i's I/O queue (AF_XDP: queue io.queue + i; AF_PACKET: a fanout group when
 * there are several) with `kind` (what the first worker's AUTO chose); first: worker 0's
 * queue (NULL for worker 0 itself). NULL with err. */
static struct secho_io *open_queue(const struct secho_endpoint_cfg *cfg, unsigned nw, unsigned i,
                                   enum secho_io_kind kind, const struct secho_io *first, char *err,
                                   size_t errlen)
{
	struct secho_io_cfg ioc = cfg->io;
	ioc.kind = kind;
	ioc.max_frame = SECHO_ETH_HLEN + SECHO_VLAN_HLEN + cfg->wire.mtu;
	ioc.queue = cfg->io.queue + i;
	/* One group per endpoint process, under an id the kernel gives worker 0's socket (no
	 * other endpoint's group on the interface has it); the kernel spreads the interface's
	 * frames over its sockets by flow hash, so a flow keeps one worker and its order. */
	ioc.fanout = nw > 1;
	ioc.fanout_new = !first;
	if (first && secho_io_fanout_id(first) >= 0)
		ioc.fanout_id = (uint16_t)secho_io_fanout_id(first);
	return secho_io_open(&ioc, err, errlen);
}

/* The workers line of the banner (several workers, or pinned ones). */
static void print_workers(const struct secho_endpoint_cfg *cfg, const struct wthread *ts,
                          unsigned nw, enum secho_io_kind kind)
{
	char how[96] = "", cpus[160] = "", off[48] = "";
	if (kind == SECHO_IO_XDP)
		snprintf(how, sizeof(how), "AF_XDP queues %u-%u", cfg->io.queue,
		         cfg->io.queue + nw - 1);
	else if (kind == SECHO_IO_PACKET && nw > 1)
		snprintf(how, sizeof(how), "AF_PACKET fanout group %d by flow hash",
		         secho_io_fanout_id(ts[0].w.io));
	else
		snprintf(how, sizeof(how), "%s", secho_io_kind_name(kind));
	size_t u = 0;
	for (unsigned i = 0; i < nw && u < sizeof(cpus); i++) {
		int w = ts[i].pinned ? snprintf(cpus + u, sizeof(cpus) - u, "%s%u", i ? "," : "",
		                                ts[i].cpu)
		                     : snprintf(cpus + u, sizeof(cpus) - u, "%sany", i ? "," : "");
		if (w < 0)
			break;
		u += (size_t)w;
	}
	if (cfg->offload_pin)
		snprintf(off, sizeof(off), "; offload engine on CPU %u", cfg->offload_cpu);
	printf("secho serve: workers: %u, one receive queue each (%s), CPUs %s%s\n", nw, how, cpus,
	       off);
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
	struct secho_report_ctx *rep = NULL;
	struct secho_counters *ctrs[SECHO_EP_MAX_WORKERS];
	unsigned nw = cfg->workers ? cfg->workers : 1, nopen = 0;
	_Atomic int stop_workers = 0;
	cpu_set_t main_cpus;
	bool moved = false;
	enum secho_io_kind kind = cfg->io.kind;
	size_t tsz = (sizeof(struct wthread) * nw + 63) & ~(size_t)63;
	struct wthread *ts = nw <= SECHO_EP_MAX_WORKERS ? aligned_alloc(64, tsz) : NULL;

	if (!ts || (cfg->ncpus && cfg->ncpus != nw)) {
		fprintf(stderr, "secho serve: %s\n",
		        ts ? "one CPU per worker" : "too many workers, or out of memory");
		free(ts);
		return 2;
	}
	memset(ts, 0, tsz);
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
	struct secho_offload_cfg oc = {.backend = cfg->offload,
	                               .queues = nw,
	                               .ring_size = cfg->offload_ring,
	                               .spin_us = cfg->offload_spin_us,
	                               .max_len = (uint32_t)SECHO_WIRE_MAX_PAYLOAD(cfg->wire.mtu),
	                               .pin = cfg->offload_pin,
	                               .cpu = cfg->offload_cpu};
	off = secho_offload_create(&oc, key->key, err, sizeof(err));
	if (!off) {
		fprintf(stderr, "secho serve: offload engine: %s\n", err);
		goto out;
	}
	rep = calloc(1, sizeof(*rep));
	if (!rep) {
		fprintf(stderr, "secho serve: out of memory\n");
		goto out;
	}
	/* Each worker's queue and memory, allocated on the CPU it will run on (first touch
	 * places pages on that CPU's memory node); the main thread moves back afterwards. */
	if (cfg->ncpus)
		moved = secho_cpu_save(&main_cpus) == 0;
	for (; nopen < nw; nopen++) {
		struct wthread *t = &ts[nopen];
		struct secho_worker *w = &t->w;
		t->pinned = cfg->ncpus > 0;
		t->cpu = t->pinned ? cfg->cpus[nopen] : 0;
		t->queue = cfg->io.queue + nopen;
		if (t->pinned && moved && (e = secho_cpu_pin(pthread_self(), t->cpu)) != 0) {
			fprintf(stderr, "secho serve: worker %u: CPU %u: %s\n", nopen, t->cpu,
			        strerror(-e));
			goto out;
		}
		w->io = open_queue(cfg, nw, nopen, kind, nopen ? ts[0].w.io : NULL, err,
		                   sizeof(err));
		if (!w->io) {
			if (nw > 1)
				fprintf(stderr, "secho serve: I/O (MTU %u), worker %u of %u: %s\n",
				        cfg->wire.mtu, nopen, nw, err);
			else
				fprintf(stderr, "secho serve: I/O (MTU %u): %s\n", cfg->wire.mtu,
				        err);
			goto out;
		}
		/* AUTO chose for the first; the others open the same kind. */
		kind = secho_io_kind_of(w->io);
		if (nopen == 0 && kind == SECHO_IO_XDP && cfg->io.ifname) {
			unsigned nq = rx_queues(cfg->io.ifname);
			if (nq && cfg->io.queue + nw > nq) {
				secho_io_close(w->io);
				w->io = NULL;
				fprintf(stderr,
				        "secho serve: AF_XDP: %s has %u receive queue%s: %u "
				        "worker%s need%s queues %u-%u, one socket on each (more "
				        "queues: ethtool -L %s combined N; a veth: numrxqueues)\n",
				        cfg->io.ifname, nq, nq == 1 ? "" : "s", nw,
				        nw == 1 ? "" : "s", nw == 1 ? "s" : "", cfg->io.queue,
				        cfg->io.queue + nw - 1, cfg->io.ifname);
				goto out;
			}
			if (nq > nw)
				fprintf(stderr,
				        "secho serve: warning: AF_XDP sees only the queues it is "
				        "bound to: %s has %u receive queues, frames arriving on "
				        "queues other than %u-%u are not served\n",
				        cfg->io.ifname, nq, cfg->io.queue, cfg->io.queue + nw - 1);
		}
		if (secho_worker_init(w, cfg->offload_ring, cfg->wire.mtu) != 0) {
			fprintf(stderr, "secho serve: out of memory\n");
			goto out;
		}
		ctrs[nopen] = &w->ctr;
	}
	if (moved)
		secho_cpu_restore(&main_cpus);
	secho_report_init(rep, cfg->report_rate);
	rep->ctr = ctrs;
	rep->nworkers = nw;
	/* The report carries the short form (what was opened, not why): it must fit the MTU. */
	char io_short[48];
	const char *desc = secho_io_describe(ts[0].w.io);
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

	double hz = secho_tsc_hz();
	uint8_t salt[SECHO_SALT_LEN];
	secho_shdr_fixed(key->salt, cfg->instance, salt);
	for (unsigned i = 0; i < nw; i++) {
		struct wthread *t = &ts[i];
		struct secho_worker *w = &t->w;
		w->wire = &cfg->wire;
		w->gk = gk;
		w->offq = secho_offload_queue(off, i);
		w->key_id = key->key_id;
		memcpy(w->salt, salt, sizeof(salt));
		w->shdr_flags = cfg->instance ? SECHO_SHDR_F_INSTANCE : 0;
		w->arp = cfg->arp;
		w->vlan_id = cfg->vlan;
		w->report = rep;
		w->refill = refill;
		w->refill_arg = seq;
		w->ip_id = (uint16_t)(secho_rdtsc() + 16381u * i);
		t->stop = &stop_workers;
		if (cfg->io.busy_poll && (rc = secho_worker_warm_setup(w)) != 0) {
			fprintf(stderr, "secho serve: data-path warm-up: %s\n",
			        rc == -ENOMEM ? "out of memory"
			                      : "canned request rejected (a bug)");
			rc = 1;
			goto out;
		}
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
		printf("secho serve: io: %s\n", desc);
		if (nw > 1 || cfg->ncpus || cfg->offload_pin)
			print_workers(cfg, ts, nw, kind);
		printf("secho serve: streaming engine: secho %s; offload engine: %s (ring %u)\n",
		       secho_impl_name(secho_gcm_key_impl(gk)),
		       secho_offload_backend_name(cfg->offload), cfg->offload_ring);
		char inst[48] = "";
		if (cfg->instance)
			snprintf(inst, sizeof(inst), " (shared, instance %" PRIu32 ")",
			         cfg->instance);
		printf("secho serve: key id %u%s, sequence numbers from %" PRIu64 "%s\n",
		       ts[0].w.key_id, inst, secho_seqlease_next(seq),
		       locked ? "" : " (key memory not locked)");
		fflush(stdout);
	}

	/* The workers' threads: the signals the CLI handles are left to this thread (the
	 * data path never runs a handler), and each starts on its CPU when pinned. */
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	rc = 0;
	for (unsigned i = 0; i < nw; i++) {
		struct wthread *t = &ts[i];
		pthread_attr_t attr;
		pthread_attr_init(&attr);
		if (t->pinned) {
			cpu_set_t one;
			CPU_ZERO(&one);
			CPU_SET(t->cpu, &one);
			pthread_attr_setaffinity_np(&attr, sizeof(one), &one);
		}
		e = pthread_create(&t->th, &attr, worker_main, t);
		pthread_attr_destroy(&attr);
		if (e) {
			fprintf(stderr, "secho serve: worker %u thread: %s\n", i, strerror(e));
			rc = 1;
			break;
		}
		t->started = true;
		char name[16];
		snprintf(name, sizeof(name), "secho-dp%u", i % SECHO_EP_MAX_WORKERS);
		pthread_setname_np(t->th, name);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);

	/* Supervise: every 20 ms (a signal ends the sleep early). */
	uint64_t deadline = cfg->run_seconds > 0 ? secho_rdtsc() + (uint64_t)(cfg->run_seconds * hz)
	                                         : UINT64_MAX;
	while (rc == 0 && !*stop) {
		if (secho_rdtsc() > deadline)
			break;
		if (secho_seqlease_failed(seq, err, sizeof(err))) {
			fprintf(stderr, "secho serve: stopping: sequence state: %s\n", err);
			rc = 1;
			break;
		}
		bool ended = false;
		for (unsigned i = 0; i < nw && !ended; i++)
			ended = atomic_load_explicit(&ts[i].done, memory_order_acquire);
		if (ended)
			break; /* the pcap input ended, or a worker's I/O failed: all stop */
		struct timespec tick = {0, 20 * 1000 * 1000};
		nanosleep(&tick, NULL);
	}
	atomic_store_explicit(&stop_workers, 1, memory_order_relaxed);
	for (unsigned i = 0; i < nw; i++) {
		if (!ts[i].started)
			continue;
		pthread_join(ts[i].th, NULL);
		ts[i].started = false;
		if (ts[i].err) {
			fprintf(stderr, "secho serve: I/O wait%s: %s\n",
			        nw > 1 ? " (a worker)" : "", strerror(-ts[i].err));
			rc = 1;
		}
		if (secho_io_input_error(ts[i].w.io)) {
			/* A malformed capture: what came before it was answered, but the input
			 * is bad and the run must say so (exit 1), not pass as a drop. */
			fprintf(stderr, "secho serve: %s\n", secho_io_input_error(ts[i].w.io));
			rc = 1;
		}
	}
	rep->seq_final = secho_seqlease_high_water(seq);
	rep->seq_high_water = NULL; /* the lease is gone after close: report seq_final */
	if (secho_seqlease_close(seq, err, sizeof(err)) != 0 && rc == 0) {
		fprintf(stderr, "secho serve: sequence state: %s\n", err);
		rc = 1;
	}
	seq = NULL;
	if (!cfg->quiet)
		print_summary(rep, ts);
out:
	if (moved)
		secho_cpu_restore(&main_cpus);
	atomic_store_explicit(&stop_workers, 1, memory_order_relaxed);
	for (unsigned i = 0; i < nw; i++)
		if (ts[i].started)
			pthread_join(ts[i].th, NULL);
	/* In reverse: AF_XDP's first socket loaded the XDP program, and the last to go
	 * removes it. */
	for (unsigned i = nw; i-- > 0;) {
		secho_worker_fini(&ts[i].w);
		secho_io_close(ts[i].w.io);
	}
	free(ts);
	free(rep);
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
