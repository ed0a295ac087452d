/*
 * src/flow/meter/meter.c - the meter's set-up and run, by phase (contract:
 * src/flow/meter/meter.h; the rooms: src/flow/meter/inner.h).
 *
 *   check    the configuration (workers), the split and table seeds
 *   tables   the offload tier (live), then one table per worker in memory of its own
 *   input    the capture file, or the interface's sockets; the rings
 *   run      one worker offline: everything in this thread; otherwise the workers'
 *            threads (offline: from worker 1, this thread is worker 0), and this thread
 *            exports the records
 *   drain    wait for the workers, hand their last records to the sinks
 *   report   close the sinks with the totals, fill the result, print the summary
 */
#include "flow/meter/meter.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include "flow/meter/inner.h"

/* The export thread's nap when the rings are empty: 1 ms, doubling to 8 ms while they stay
 * empty (a ring of 32,768 records fills in no less than 8 ms at the meter's rates, and a
 * full ring only makes its worker wait). At 1 ms it took 3% of a CPU doing nothing. */
#define NAP_MIN_US 1000u
#define NAP_MAX_US 8000u

static uint64_t random64(void)
{
	uint64_t v = 0;
	if (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v))
		v = secho_real_ns() * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
	return v;
}

/* ---- check ---- */

static int check(struct meter *m, const struct secho_flow_meter_cfg *cfg, char *err, size_t errlen)
{
	m->cfg = cfg;
	m->n = cfg->workers ? cfg->workers : 1;
	if (m->n > SECHO_FLOW_MAX_WORKERS) {
		snprintf(err, errlen, "at most %d workers", SECHO_FLOW_MAX_WORKERS);
		return -EINVAL;
	}
	/* live, the export thread keeps ticking while the workers wait */
	m->threaded = m->n > 1 || !cfg->pcap;
	m->split_seed = random64();
	m->w = calloc(m->n, sizeof(*m->w));
	if (!m->w) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* ---- tables ---- */

/* Each worker's share of the table configuration; the size of its memory (0: out of
 * range). */
static size_t table_cfg(const struct meter *m, struct secho_flow_table_cfg *tc)
{
	*tc = m->cfg->table;
	tc->flows = (uint32_t)(((uint64_t)m->cfg->table.flows + m->n - 1) / m->n);
	tc->emit = meter_on_record;
	tc->seed = random64();
	return secho_flow_table_mem_size(tc);
}

/*
 * Anonymous memory, zero. Live: in transparent huge pages where the kernel gives them, and
 * made resident here, so that no first touch (a page fault; a huge page's: milliseconds of
 * compaction and zeroing) is on the packet path, and a table of 137 MiB costs no TLB miss
 * per new flow (the NIX-like capture at 200,000 packets per second: table update p50
 * 206-268 ns in huge pages against 379-391 ns in 4 KiB pages faulted in as used;
 * docs/FLOW.md, "Workers"). When the kernel refuses, the table is faulted in as it is used.
 *
 * Offline: in 4 KiB pages (MADV_NOHUGEPAGE), faulted in as the table touches them (a
 * capture of a few flows touches a few pages). In a virtual machine whose host takes back
 * the guest's free memory (free page reporting: the 2 MiB blocks freed a few seconds
 * before go back to the host), a huge page touched first costs the host's faults over all
 * of it, about 13 ms, and huge pages are made of exactly those blocks, while small pages
 * come mostly from memory the host still backs: light 3M, 3 s after the previous run,
 * 0.54-0.75 s wall in huge pages against 0.34-0.36 in small ones, light 8M 1.29-1.50 against
 * 0.76-0.80; back to back 0.33-0.34 against 0.35 and 0.71-0.88 against 0.79-0.84 (the
 * entries are one dense pool: their TLB misses no longer decide, docs/PERFORMANCE.md,
 * "Huge pages offline, again"). A run offline is one start: it pays the cold cost.
 */
static int table_mem(struct meter *m, struct worker *w, size_t memlen, char *err, size_t errlen)
{
	w->memlen = memlen;
	w->mem = mmap(NULL, w->memlen, PROT_READ | PROT_WRITE,
	              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (w->mem == MAP_FAILED) {
		w->mem = NULL;
		snprintf(err, errlen, "flow table: %zu bytes: %s", memlen, strerror(errno));
		return -ENOMEM;
	}
	if (m->cfg->pcap) {
		(void)madvise(w->mem, w->memlen, MADV_NOHUGEPAGE);
	} else {
		(void)madvise(w->mem, w->memlen, MADV_HUGEPAGE);
		m->resident += madvise(w->mem, w->memlen, MADV_POPULATE_WRITE) == 0;
	}
	return 0;
}

static int open_tables(struct meter *m, size_t *memlen, char *err, size_t errlen)
{
	const struct secho_flow_meter_cfg *cfg = m->cfg;
	struct secho_flow_table_cfg tc;
	int r;

	*memlen = table_cfg(m, &tc);
	if (!*memlen) {
		snprintf(err, errlen, "flow table configuration out of range");
		return -EINVAL;
	}
	if (cfg->offload && !cfg->pcap) {
		struct secho_flow_tier_cfg oc = *cfg->offload;
		/* the program hands idle flows' packets back at the table's timeout */
		oc.ofl.inactive_ns = tc.inactive_ns ? tc.inactive_ns : 30000000000ull;
		r = secho_flow_tier_open(&m->tier, &oc, m->n, err, errlen);
		if (r)
			return r;
	}
	for (unsigned i = 0; i < m->n; i++) {
		struct worker *w = &m->w[i];
		w->id = i;
		w->m = m;
		r = table_mem(m, w, *memlen, err, errlen);
		if (r)
			return r;
		tc.ctx = w;
		if (m->tier) {
			w->tier = secho_flow_tier_worker(m->tier, i);
			r = secho_flow_tier_table_init(w->tier, &w->t, &tc, w->mem, *memlen);
		} else {
			r = secho_flow_table_init(&w->t, &tc, w->mem, *memlen);
		}
		if (r) {
			snprintf(err, errlen, "flow table: %s",
			         r == -ENOTSUP ? "hash not supported by this CPU" : strerror(-r));
			return r;
		}
	}
	return 0;
}

/* ---- input ---- */

static int open_input(struct meter *m, char *err, size_t errlen)
{
	const struct secho_flow_meter_cfg *cfg = m->cfg;
	int r;

	if (cfg->pcap) {
		r = secho_capfile_open(&m->cf, cfg->pcap, err, errlen);
		if (r)
			return r;
		/* several workers: each walks the file with buffers of its own
		 * (src/flow/meter/offline.c) */
		for (unsigned i = 1; i < m->n; i++) {
			r = secho_capfile_clone(&m->cf, &m->w[i].cf);
			if (r) {
				snprintf(err, errlen, "%s: out of memory for worker %u's buffers",
				         cfg->pcap, i);
				while (--i >= 1)
					secho_capfile_close(&m->w[i].cf);
				secho_capfile_close(&m->cf);
				return r;
			}
		}
		m->w[0].direct = m->n > 1;
	} else {
		r = meter_live_open(m, err, errlen);
		if (r)
			return r;
	}
	if (m->threaded)
		for (unsigned i = 0; i < m->n; i++) {
			struct rec_ring *q = &m->w[i].ring;
			q->feat_len = m->w[i].t.feat.bytes;
			q->size = q->feat_len ? RING_FEAT_RECORDS : RING_RECORDS;
			q->r = malloc(q->size * sizeof(struct secho_flow_rec));
			if (q->feat_len)
				q->feat = malloc(q->size * q->feat_len);
			if (!q->r || (q->feat_len && !q->feat)) {
				snprintf(err, errlen, "out of memory");
				return -ENOMEM;
			}
		}
	return 0;
}

/* ---- run ---- */

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	if (w->m->cfg->pcap)
		meter_offline_worker(w);
	else
		meter_live_worker(w);
	/* release: every record of this worker is in its ring */
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Start the workers' threads (offline, worker 0 is the calling thread's). When one cannot
 * start, the others are told to stop (they export what they have) and -errno is returned
 * with err; the run goes on to drain. */
static int start(struct meter *m, char *err, size_t errlen)
{
	for (unsigned i = m->cfg->pcap ? 1 : 0; i < m->n; i++) {
		int e = pthread_create(&m->w[i].th, NULL, worker_main, &m->w[i]);
		if (e) {
			snprintf(err, errlen, "pthread_create: %s", strerror(e));
			__atomic_store_n(&m->halt, 1, __ATOMIC_RELAXED);
			return -e;
		}
		m->w[i].started = true;
	}
	return 0;
}

/* ---- drain ---- */

/* Export the workers' records until every worker is done and its ring empty; join them. */
static void drain_workers(struct meter *m)
{
	unsigned nap_us = NAP_MIN_US;

	for (;;) {
		unsigned done = 0;
		for (unsigned i = 0; i < m->n; i++)
			done += !m->w[i].started ||
			        __atomic_load_n(&m->w[i].done, __ATOMIC_ACQUIRE);
		uint64_t got = meter_drain(m);
		if (done == m->n && !got) {
			meter_drain(m);
			break;
		}
		meter_housekeeping(m);
		if (got) {
			nap_us = NAP_MIN_US;
		} else {
			usleep(nap_us);
			nap_us = nap_us * 2 > NAP_MAX_US ? NAP_MAX_US : nap_us * 2;
		}
	}
	for (unsigned i = 0; i < m->n; i++)
		if (m->w[i].started)
			pthread_join(m->w[i].th, NULL);
	meter_drain(m);
}

/* ---- report ---- */

static void finish(struct meter *m, struct secho_flow_meter_result *res)
{
	const struct secho_flow_meter_cfg *cfg = m->cfg;

	if (m->progress_shown || (cfg->progress && cfg->pcap))
		meter_progress(m, secho_mono_ns(), true);

	/* close the sinks with the final totals */
	struct secho_flow_totals tot;
	meter_totals(m, &tot);
	m->now_ns = secho_real_ns();
	for (unsigned i = 0; i < cfg->nsinks; i++)
		if (cfg->sinks[i].ops->close(cfg->sinks[i].ctx, m->now_ns, &tot,
		                             SECHO_FLOW_CLOSE_TIMEOUT_MS))
			res->sink_failed = true;
	meter_sum(m, &res->cnt, &res->frames_read, &res->kernel_drops);
	res->elapsed_s = (double)(secho_mono_ns() - m->start_mono) / 1e9;
	res->interrupted = stopping(m);
	if (cfg->pcap) {
		const char *e = secho_capfile_error(&m->cf);
		/* another worker's cursor may have met what worker 0's did not (a file
		 * shrinking under them) */
		for (unsigned i = 1; !e && i < m->n; i++)
			e = secho_capfile_error(&m->w[i].cf);
		if (e)
			snprintf(res->input_error, sizeof(res->input_error), "%s: %s", cfg->pcap,
			         e);
		else if (!res->frames_read && m->cf.skipped)
			snprintf(res->input_error, sizeof(res->input_error),
			         "%s: no frame read: all its %" PRIu64
			         " records came from interfaces whose link type is neither "
			         "Ethernet nor Linux cooked",
			         cfg->pcap, m->cf.skipped);
		res->interrupted = res->interrupted && !m->cf.done;
	} else {
		for (unsigned i = 0; i < m->n; i++)
			if (__atomic_load_n(&m->w[i].gone, __ATOMIC_RELAXED))
				snprintf(res->input_error, sizeof(res->input_error),
				         "%s: the interface went away", cfg->iface);
	}
	meter_print_stats(m, true);
}

static void teardown(struct meter *m)
{
	if (!m->w)
		return;
	for (unsigned i = 0; i < m->n; i++) {
		struct worker *w = &m->w[i];
		for (unsigned q = 0; q < w->nio; q++)
			secho_io_close(w->io[q]);
		if (w->mem)
			munmap(w->mem, w->memlen);
		free(w->ring.r);
		free(w->ring.feat);
		if (i)
			secho_capfile_close(&w->cf); /* a clone: before the original */
	}
	free(m->w);
	m->w = NULL;
	secho_flow_tier_close(m->tier); /* after the sockets: they leave its XSKMAP first */
	m->tier = NULL;
	secho_capfile_close(&m->cf);
}

int secho_flow_meter_run(const struct secho_flow_meter_cfg *cfg,
                         struct secho_flow_meter_result *res, char *err, size_t errlen)
{
	struct meter mm, *m = &mm;
	size_t memlen = 0;

	memset(m, 0, sizeof(*m));
	memset(res, 0, sizeof(*res));
	int r = check(m, cfg, err, errlen);
	if (!r)
		r = open_tables(m, &memlen, err, errlen);
	if (!r)
		r = open_input(m, err, errlen);
	if (r) {
		teardown(m);
		return r;
	}
	meter_banner(m, memlen);

	m->start_ns = secho_real_ns();
	m->start_mono = m->last_tick = m->last_stats = m->last_progress = secho_mono_ns();
	m->start_tsc = secho_rdtsc();
	m->now_ns = m->start_ns;
	if (!m->threaded) {
		meter_offline_one(m);
	} else {
		r = start(m, err, errlen);
		/* offline: worker 0 (when a worker did not start, the others are stopping) */
		if (m->cfg->pcap && !r)
			meter_offline_first(m);
		drain_workers(m);
	}
	finish(m, res);
	teardown(m);
	return r;
}
