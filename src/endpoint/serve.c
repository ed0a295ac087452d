/*
 * src/endpoint/serve.c - bring the endpoint up, run the data-path workers, bring it down.
 *
 * Set-up order (each step can refuse to start, with the reason for the caller to print: the
 * CLI's exit 2):
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
 * summary printed. A failed reservation ends the run with its reason (the CLI's exit 1):
 * without durable numbers no request can be answered, and a supervisor must notice.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
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
#include "sys/err.h"

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

static void print_engine(FILE *out, const char *name, const struct secho_engine_counters *e,
                         double hz)
{
	struct secho_lat_summary s;
	secho_lat_summary(&e->lat, &s);
	double ns = 1e9 / hz;
	fprintf(out,
	        "  %-9s %10" PRIu64 " packets %12" PRIu64 " bytes   latency ns min %.0f p50 %.0f "
	        "p99 %.0f max %.0f (p50 %.0f cycles)\n",
	        name, e->packets, e->bytes, s.min * ns, s.p50 * ns, s.p99 * ns, s.max * ns, s.p50);
}

static void print_summary(FILE *out, const struct secho_report_ctx *r, const struct wthread *ts)
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
	fprintf(out, "secho serve: summary\n");
	fprintf(out,
	        "  frames    rx %" PRIu64 "  tx %" PRIu64 "  reports %" PRIu64
	        "  kernel drops %" PRIu64 "\n",
	        c.rx_frames, c.tx_frames, c.reports, kdrops);
	print_engine(out, "streaming", &c.eng[SECHO_ENG_STREAM], r->tsc_hz);
	print_engine(out, "offload", &c.eng[SECHO_ENG_OFFLOAD], r->tsc_hz);
	uint64_t d = secho_counters_drops(&c);
	fprintf(out, "  drops     %" PRIu64 "%s", d, d ? ":" : "\n");
	if (d) {
		for (unsigned i = 1; i < SECHO_WIRE_VERDICT_COUNT; i++)
			if (i != SECHO_WIRE_ARP && c.verdict[i])
				fprintf(out, " %s=%" PRIu64, secho_wire_verdict_name(i),
				        c.verdict[i]);
		for (unsigned i = 0; i < SECHO_PIPE_DROP_COUNT; i++)
			if (c.drop[i])
				fprintf(out, " %s=%" PRIu64, secho_pipe_drop_name(i), c.drop[i]);
		fprintf(out, "\n");
	}
	for (unsigned i = 0; r->nworkers > 1 && i < r->nworkers; i++) {
		char cpu[16] = "any";
		if (ts[i].pinned)
			snprintf(cpu, sizeof(cpu), "%u", ts[i].cpu);
		fprintf(out,
		        "  worker %-2u CPU %-4s rx %" PRIu64 "  tx %" PRIu64 "  streaming %" PRIu64
		        "  offload %" PRIu64 "  drops %" PRIu64 "\n",
		        i, cpu, per[i].rx_frames, per[i].tx_frames,
		        per[i].packets[SECHO_ENG_STREAM], per[i].packets[SECHO_ENG_OFFLOAD],
		        per[i].drops);
	}
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
		             (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
		uint64_t ans = c.eng[SECHO_ENG_STREAM].packets + c.eng[SECHO_ENG_OFFLOAD].packets;
		fprintf(out, "  cpu       %.3f s (all threads), %.0f ns per answered packet\n", cpu,
		        ans ? cpu * 1e9 / (double)ans : 0.0);
	}
	fprintf(out, "  sequence  high-water %" PRIu64 "\n",
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
static void print_workers(FILE *out, const struct secho_endpoint_cfg *cfg, const struct wthread *ts,
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
	fprintf(out, "secho serve: workers: %u, one receive queue each (%s), CPUs %s%s\n", nw, how,
	        cpus, off);
}

/* ---- the run, by phase: check, open, start, run, drain, report, close ---- */

/* Everything one run holds; ep_close() releases what was opened, whatever the phase. */
struct ep {
	const struct secho_endpoint_cfg *cfg;
	char *err; /* the caller's buffer: reasons, one line each */
	size_t errlen;
	bool *refused; /* set-up refused (the CLI's exit 2), else a failure (exit 1) */
	unsigned nw, nopen;
	struct wthread *ts;
	size_t tsz;
	struct secho_keyfile *key;
	secho_gcm_key *gk;
	bool locked;
	struct secho_seqlease *seq;
	struct secho_offload *off;
	struct secho_report_ctx *rep;
	struct secho_counters *ctrs[SECHO_EP_MAX_WORKERS];
	_Atomic int stop_workers;
	cpu_set_t main_cpus;
	bool moved;
	enum secho_io_kind kind;
	const char *desc; /* the I/O's description (worker 0's) */
	char io_short[48];
	double hz;
};

/* Append one line to the caller's error buffer (sys/err.h). */
#define ep_err(r, ...) secho_err_add((r)->err, (r)->errlen, __VA_ARGS__)

/* A warning: to the caller's cfg->warn, when it gave one. */
__attribute__((format(printf, 2, 3))) static void ep_warn(struct ep *r, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (!r->cfg->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	r->cfg->warn(line);
}

/* Check: the configuration's shape, and the worker array. */
static int ep_check(struct ep *r)
{
	r->tsz = (sizeof(struct wthread) * r->nw + 63) & ~(size_t)63;
	r->ts = r->nw <= SECHO_EP_MAX_WORKERS ? aligned_alloc(64, r->tsz) : NULL;
	if (!r->ts || (r->cfg->ncpus && r->cfg->ncpus != r->nw)) {
		ep_err(r, "%s",
		       r->ts ? "one CPU per worker" : "too many workers, or out of memory");
		free(r->ts);
		r->ts = NULL;
		return -EINVAL;
	}
	memset(r->ts, 0, r->tsz);
	return 0;
}

/* Open the secrets: the process and the offload backends' key state protected, the key
 * file in locked memory, the AES-GCM schedule, the key's sharing checked. */
static int ep_open_keys(struct ep *r)
{
	const struct secho_endpoint_cfg *cfg = r->cfg;
	char err[512];

	if (secho_secret_process_protect() != 0)
		ep_warn(r, "could not make the process non-dumpable");
	bool off_locked = false;
	int pe = secho_offload_protect_keys(&off_locked);
	if (pe == -ENOMEM || (pe && cfg->offload == SECHO_OFFLOAD_OPENSSL)) {
		ep_err(r, "cannot keep the offload engine's key state in locked memory: %s",
		       pe == -EBUSY ? "OpenSSL was used before its allocator could be set"
		                    : strerror(-pe));
		return pe;
	}
	bool key_locked = false, gk_locked = false;
	r->key = secho_secret_alloc(sizeof(*r->key), &key_locked);
	r->gk = secho_secret_alloc(sizeof(*r->gk), &gk_locked);
	r->locked = key_locked && gk_locked && off_locked;
	if (!r->key || !r->gk) {
		int e = errno ? -errno : -ENOMEM;
		ep_err(r, "cannot allocate protected key memory: %s", strerror(-e));
		return e;
	}
	if (secho_keyfile_load(cfg->key_path, r->key, err, sizeof(err)) != 0) {
		ep_err(r, "key file: %s", err); /* err names the file */
		return -EINVAL;
	}
	int e = secho_gcm_key_init(r->gk, r->key->key, SECHO_KEY_LEN, SECHO_IMPL_AUTO);
	if (e != SECHO_OK) {
		ep_err(r, "AES-GCM key set-up: %s", secho_strerror(e));
		return -EINVAL;
	}
	/* A shared key: every endpoint using it folds its own instance id into its IVs
	 * (docs/PROTOCOL.md, "Shared keys"); an unshared one keeps the plain format. */
	if (r->key->shared && !cfg->instance) {
		ep_err(r,
		       "key file %s: key id %u is shared by several endpoints: give "
		       "this one its own --instance N (1..4294967295), unique among them",
		       cfg->key_path, (unsigned)r->key->key_id);
		return -EINVAL;
	}
	if (!r->key->shared && cfg->instance) {
		ep_err(r,
		       "--instance: key id %u is not marked shared in %s (an "
		       "instance id changes the IV and the header; see secho keygen --shared)",
		       (unsigned)r->key->key_id, cfg->key_path);
		return -EINVAL;
	}
	return 0;
}

/* Open the sequence state (a first window reserved durably) and the offload engine. */
static int ep_open_engines(struct ep *r)
{
	const struct secho_endpoint_cfg *cfg = r->cfg;
	char err[512];

	r->seq = secho_seqlease_open(cfg->state_path, r->key->key_id, cfg->instance,
	                             cfg->seq_window, err, sizeof(err));
	if (!r->seq) {
		ep_err(r, "refusing to start: sequence state: %s", err);
		return -EINVAL;
	}
	if (err[0])
		ep_warn(r, "sequence state: %s", err);
	if (!secho_offload_backend_probe(cfg->offload, err, sizeof(err))) {
		ep_err(r, "offload backend %s unavailable: %s",
		       secho_offload_backend_name(cfg->offload), err);
		return -ENOTSUP;
	}
	/* Every buffer is sized from the MTU: the offload engine's staging for the largest
	 * payload, the I/O backend's frames (or its refusal, with the reason) and the data
	 * path's scratch for the longest frame, a VLAN tag included. */
	struct secho_offload_cfg oc = {.backend = cfg->offload,
	                               .queues = r->nw,
	                               .ring_size = cfg->offload_ring,
	                               .spin_us = cfg->offload_spin_us,
	                               .max_len = (uint32_t)SECHO_WIRE_MAX_PAYLOAD(cfg->wire.mtu),
	                               .pin = cfg->offload_pin,
	                               .cpu = cfg->offload_cpu};
	r->off = secho_offload_create(&oc, r->key->key, err, sizeof(err));
	if (!r->off) {
		ep_err(r, "offload engine: %s", err);
		return -EINVAL;
	}
	r->rep = calloc(1, sizeof(*r->rep));
	if (!r->rep) {
		ep_err(r, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* AF_XDP binds one socket per receive queue: refuse when the interface has too few for the
 * workers, warn when it has more (frames on the others are not seen). */
static int ep_check_xdp_queues(struct ep *r, struct secho_worker *w)
{
	const struct secho_endpoint_cfg *cfg = r->cfg;
	unsigned nw = r->nw, nq = rx_queues(cfg->io.ifname);

	if (nq && cfg->io.queue + nw > nq) {
		secho_io_close(w->io);
		w->io = NULL;
		ep_err(r,
		       "AF_XDP: %s has %u receive queue%s: %u "
		       "worker%s need%s queues %u-%u, one socket on each (more "
		       "queues: ethtool -L %s combined N; a veth: numrxqueues)",
		       cfg->io.ifname, nq, nq == 1 ? "" : "s", nw, nw == 1 ? "" : "s",
		       nw == 1 ? "s" : "", cfg->io.queue, cfg->io.queue + nw - 1, cfg->io.ifname);
		return -EINVAL;
	}
	if (nq > nw)
		ep_warn(r,
		        "AF_XDP sees only the queues it is "
		        "bound to: %s has %u receive queues, frames arriving on "
		        "queues other than %u-%u are not served",
		        cfg->io.ifname, nq, cfg->io.queue, cfg->io.queue + nw - 1);
	return 0;
}

/* Open the workers: each one's queue and memory, allocated on the CPU it will run on (first
 * touch places pages on that CPU's memory node); the main thread moves back afterwards. */
static int ep_open_workers(struct ep *r)
{
	const struct secho_endpoint_cfg *cfg = r->cfg;
	unsigned nw = r->nw;
	char err[512];
	int e;

	if (cfg->ncpus)
		r->moved = secho_cpu_save(&r->main_cpus) == 0;
	for (; r->nopen < nw; r->nopen++) {
		unsigned i = r->nopen;
		struct wthread *t = &r->ts[i];
		struct secho_worker *w = &t->w;
		t->pinned = cfg->ncpus > 0;
		t->cpu = t->pinned ? cfg->cpus[i] : 0;
		t->queue = cfg->io.queue + i;
		if (t->pinned && r->moved && (e = secho_cpu_pin(pthread_self(), t->cpu)) != 0) {
			ep_err(r, "worker %u: CPU %u: %s", i, t->cpu, strerror(-e));
			return e;
		}
		w->io = open_queue(cfg, nw, i, r->kind, i ? r->ts[0].w.io : NULL, err, sizeof(err));
		if (!w->io) {
			if (nw > 1)
				ep_err(r, "I/O (MTU %u), worker %u of %u: %s", cfg->wire.mtu, i, nw,
				       err);
			else
				ep_err(r, "I/O (MTU %u): %s", cfg->wire.mtu, err);
			return -EIO;
		}
		/* AUTO chose for the first; the others open the same kind. */
		r->kind = secho_io_kind_of(w->io);
		if (i == 0 && r->kind == SECHO_IO_XDP && cfg->io.ifname &&
		    (e = ep_check_xdp_queues(r, w)) < 0)
			return e;
		if (secho_worker_init(w, cfg->offload_ring, cfg->wire.mtu) != 0) {
			ep_err(r, "out of memory");
			return -ENOMEM;
		}
		r->ctrs[i] = &w->ctr;
	}
	if (r->moved)
		secho_cpu_restore(&r->main_cpus);
	return 0;
}

/* The counters report's context, then each worker's share of the engines. */
static int ep_wire_workers(struct ep *r)
{
	const struct secho_endpoint_cfg *cfg = r->cfg;
	struct secho_report_ctx *rep = r->rep;

	secho_report_init(rep, cfg->report_rate);
	rep->ctr = r->ctrs;
	rep->nworkers = r->nw;
	/* The report carries the short form (what was opened, not why): it must fit the MTU. */
	r->desc = secho_io_describe(r->ts[0].w.io);
	size_t dl = strcspn(r->desc, "(;,");
	while (dl && r->desc[dl - 1] == ' ')
		dl--;
	snprintf(r->io_short, sizeof(r->io_short), "%.*s", (int)dl, r->desc);
	rep->io_desc = r->io_short;
	rep->offload_backend = secho_offload_backend_name(cfg->offload);
	rep->off = r->off;
	rep->stream_key_bytes = sizeof(*r->gk);
	rep->stream_staging_bytes = 0; /* in place in the packet buffer */
	rep->offload_key_bytes = secho_offload_key_state_bytes(r->off);
	rep->offload_staging_bytes = secho_offload_staging_bytes(r->off);
	rep->seq_high_water = high_water;
	rep->seq_arg = r->seq;

	r->hz = secho_tsc_hz();
	uint8_t salt[SECHO_SALT_LEN];
	secho_shdr_fixed(r->key->salt, cfg->instance, salt);
	for (unsigned i = 0; i < r->nw; i++) {
		struct wthread *t = &r->ts[i];
		struct secho_worker *w = &t->w;
		int rc;
		w->wire = &cfg->wire;
		w->gk = r->gk;
		w->offq = secho_offload_queue(r->off, i);
		w->key_id = r->key->key_id;
		memcpy(w->salt, salt, sizeof(salt));
		w->shdr_flags = cfg->instance ? SECHO_SHDR_F_INSTANCE : 0;
		w->arp = cfg->arp;
		w->vlan_id = cfg->vlan;
		w->report = rep;
		w->refill = refill;
		w->refill_arg = r->seq;
		w->ip_id = (uint16_t)(secho_rdtsc() + 16381u * i);
		t->stop = &r->stop_workers;
		if (cfg->io.busy_poll && (rc = secho_worker_warm_setup(w)) != 0) {
			ep_err(r, "data-path warm-up: %s",
			       rc == -ENOMEM ? "out of memory" : "canned request rejected (a bug)");
			*r->refused = false;
			return rc < 0 ? rc : -EINVAL;
		}
	}
	secho_keyfile_wipe(r->key); /* the engines hold their own schedules now */
	return 0;
}

/* The banner on stdout (unless quiet). */
static void ep_banner(const struct ep *r)
{
	const struct secho_endpoint_cfg *cfg = r->cfg;
	char ip[16];
	const uint8_t *a = (const uint8_t *)&cfg->wire.ip, *m = cfg->wire.mac;

	FILE *out = cfg->out ? cfg->out : stdout;

	if (cfg->quiet)
		return;
	snprintf(ip, sizeof(ip), "%u.%u.%u.%u", a[0], a[1], a[2], a[3]);
	char vl[24] = ", untagged";
	if (cfg->vlan)
		snprintf(vl, sizeof(vl), ", VLAN %u", (unsigned)cfg->vlan);
	fprintf(out, "secho serve: %s %02x:%02x:%02x:%02x:%02x:%02x, ports %u/%u/%u, MTU %u%s\n",
	        ip, m[0], m[1], m[2], m[3], m[4], m[5], cfg->wire.port_stream,
	        cfg->wire.port_offload, cfg->wire.port_counters, cfg->wire.mtu, vl);
	fprintf(out, "secho serve: io: %s\n", r->desc);
	if (r->nw > 1 || cfg->ncpus || cfg->offload_pin)
		print_workers(out, cfg, r->ts, r->nw, r->kind);
	fprintf(out, "secho serve: streaming engine: secho %s; offload engine: %s (ring %u)\n",
	        secho_impl_name(secho_gcm_key_impl(r->gk)),
	        secho_offload_backend_name(cfg->offload), cfg->offload_ring);
	char inst[48] = "";
	if (cfg->instance)
		snprintf(inst, sizeof(inst), " (shared, instance %" PRIu32 ")", cfg->instance);
	fprintf(out, "secho serve: key id %u%s, sequence numbers from %" PRIu64 "%s\n",
	        r->ts[0].w.key_id, inst, secho_seqlease_next(r->seq),
	        r->locked ? "" : " (key memory not locked)");
	fflush(out);
}

/* Start the workers' threads: the signals the CLI handles are left to this thread (the data
 * path never runs a handler), and each starts on its CPU when pinned. */
static int ep_start(struct ep *r)
{
	sigset_t block, old;
	int rc = 0;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	for (unsigned i = 0; i < r->nw; i++) {
		struct wthread *t = &r->ts[i];
		pthread_attr_t attr;
		pthread_attr_init(&attr);
		if (t->pinned) {
			cpu_set_t one;
			CPU_ZERO(&one);
			CPU_SET(t->cpu, &one);
			pthread_attr_setaffinity_np(&attr, sizeof(one), &one);
		}
		int e = pthread_create(&t->th, &attr, worker_main, t);
		pthread_attr_destroy(&attr);
		if (e) {
			ep_err(r, "worker %u thread: %s", i, strerror(e));
			rc = -e;
			break;
		}
		t->started = true;
		char name[16];
		snprintf(name, sizeof(name), "secho-dp%u", i % SECHO_EP_MAX_WORKERS);
		pthread_setname_np(t->th, name);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

/* Run: supervise every 20 ms (a signal ends the sleep early) until a stop, the deadline, a
 * failed reservation of sequence numbers or a worker that ended. */
static int ep_run(struct ep *r, volatile sig_atomic_t *stop)
{
	char err[512];
	uint64_t deadline = r->cfg->run_seconds > 0
	                            ? secho_rdtsc() + (uint64_t)(r->cfg->run_seconds * r->hz)
	                            : UINT64_MAX;

	while (!*stop) {
		if (secho_rdtsc() > deadline)
			break;
		if (secho_seqlease_failed(r->seq, err, sizeof(err))) {
			ep_err(r, "stopping: sequence state: %s", err);
			return -EIO;
		}
		bool ended = false;
		for (unsigned i = 0; i < r->nw && !ended; i++)
			ended = atomic_load_explicit(&r->ts[i].done, memory_order_acquire);
		if (ended)
			break; /* the pcap input ended, or a worker's I/O failed: all stop */
		struct timespec tick = {0, 20 * 1000 * 1000};
		nanosleep(&tick, NULL);
	}
	return 0;
}

/* Drain: stop every worker (each drains its offload queue pair and flushes TX), collect
 * their failures, flush and close the sequence state. rc: the run's result so far. */
static int ep_drain(struct ep *r, int rc)
{
	char err[512];

	atomic_store_explicit(&r->stop_workers, 1, memory_order_relaxed);
	for (unsigned i = 0; i < r->nw; i++) {
		struct wthread *t = &r->ts[i];
		if (!t->started)
			continue;
		pthread_join(t->th, NULL);
		t->started = false;
		if (t->err) {
			ep_err(r, "I/O wait%s: %s", r->nw > 1 ? " (a worker)" : "",
			       strerror(-t->err));
			rc = t->err;
		}
		if (secho_io_input_error(t->w.io)) {
			/* A malformed capture: what came before it was answered, but the input
			 * is bad and the run must say so (exit 1), not pass as a drop. */
			ep_err(r, "%s", secho_io_input_error(t->w.io));
			rc = -EINVAL;
		}
	}
	r->rep->seq_final = secho_seqlease_high_water(r->seq);
	r->rep->seq_high_water = NULL; /* the lease is gone after close: report seq_final */
	if (secho_seqlease_close(r->seq, err, sizeof(err)) != 0 && rc == 0) {
		ep_err(r, "sequence state: %s", err);
		rc = -EIO;
	}
	r->seq = NULL;
	return rc;
}

/* Close: release whatever the phases opened, in reverse. */
static void ep_close(struct ep *r)
{
	char err[512];

	if (r->moved)
		secho_cpu_restore(&r->main_cpus);
	atomic_store_explicit(&r->stop_workers, 1, memory_order_relaxed);
	for (unsigned i = 0; r->ts && i < r->nw; i++)
		if (r->ts[i].started)
			pthread_join(r->ts[i].th, NULL);
	/* In reverse: AF_XDP's first socket loaded the XDP program, and the last to go
	 * removes it. */
	for (unsigned i = r->ts ? r->nw : 0; i-- > 0;) {
		secho_worker_fini(&r->ts[i].w);
		secho_io_close(r->ts[i].w.io);
	}
	free(r->ts);
	free(r->rep);
	secho_offload_destroy(r->off);
	if (r->seq)
		secho_seqlease_close(r->seq, err, sizeof(err));
	if (r->gk) {
		secho_gcm_key_wipe(r->gk);
		secho_secret_free(r->gk, sizeof(*r->gk));
	}
	if (r->key)
		secho_secret_free(r->key, sizeof(*r->key));
}

/* Contract: endpoint.h. */
int secho_endpoint_run(const struct secho_endpoint_cfg *cfg, volatile sig_atomic_t *stop,
                       bool *refused, char *err, size_t errlen)
{
	struct ep r = {.cfg = cfg,
	               .err = err,
	               .errlen = errlen,
	               .refused = refused,
	               .nw = cfg->workers ? cfg->workers : 1,
	               .kind = cfg->io.kind};
	int rc;

	if (errlen)
		err[0] = '\0';
	*refused = true;
	rc = ep_check(&r);
	if (rc == 0)
		rc = ep_open_keys(&r);
	if (rc == 0)
		rc = ep_open_engines(&r);
	if (rc == 0)
		rc = ep_open_workers(&r);
	if (rc == 0)
		rc = ep_wire_workers(&r);
	if (rc == 0) {
		*refused = false;
		ep_banner(&r);
		rc = ep_start(&r);
		if (rc == 0)
			rc = ep_run(&r, stop);
		rc = ep_drain(&r, rc);
		if (!cfg->quiet)
			print_summary(cfg->out ? cfg->out : stdout, r.rep, r.ts);
	}
	ep_close(&r);
	return rc;
}
