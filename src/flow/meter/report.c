/*
 * src/flow/meter/report.c - what the meter tells: the banner, statistics (text or one JSON
 * object per line), offline progress, and the sinks' periodic tick with the totals they
 * put in their options records (src/flow/meter/inner.h). Runs in the export thread (the
 * calling thread); the workers' counters are read as they run (each a plain 64-bit store
 * by its owner, at most a packet old).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "flow/meter/inner.h"

#define TICK_NS     100000000ull /* the sinks: every 100 ms (IPFIX flushes part-filled messages) */
#define PROGRESS_NS 500000000ull

void meter_sum(const struct meter *m, struct secho_flow_counters *c, uint64_t *read,
               uint64_t *drops)
{
	memset(c, 0, sizeof(*c));
	*read = 0;
	*drops = 0;
	for (unsigned i = 0; i < m->n; i++) {
		const struct worker *w = &m->w[i];
		secho_flow_counters_add(c, &w->t.cnt);
		*read += __atomic_load_n(&w->frames_read, __ATOMIC_RELAXED);
	}
	if (m->cfg->pcap)
		*read = m->frames_read; /* the calling thread reads the file */
	for (unsigned i = 0; i < m->n; i++)
		*drops += __atomic_load_n(&m->w[i].kernel_drops, __ATOMIC_RELAXED);
}

void meter_totals(const struct meter *m, struct secho_flow_totals *t)
{
	struct secho_flow_counters c;
	uint64_t read, drops;

	meter_sum(m, &c, &read, &drops);
	memset(t, 0, sizeof(*t));
	t->observed_flows = c.c[SECHO_FLOW_CNT_FLOWS];
	t->observed_packets = c.c[SECHO_FLOW_CNT_PACKETS];
	t->observed_octets = c.c[SECHO_FLOW_CNT_OCTETS];
	t->ignored_packets = c.c[SECHO_FLOW_CNT_IGNORED];
	t->ignored_octets = c.c[SECHO_FLOW_CNT_IGNORED_OCTETS];
	t->dropped_packets = drops;
	t->start_ns = m->start_ns;
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

/* ns per TSC cycle, measured over the run so far: no calibration before it (secho_tsc_hz
 * spins for 30 ms, 5% of a run on a million short-flow packets), unless the run is younger
 * than a millisecond. */
static double tsc_ns(const struct meter *m)
{
	uint64_t mono = secho_mono_ns(), c = secho_rdtsc();

	if (mono - m->start_mono >= 1000000u && c > m->start_tsc)
		return (double)(mono - m->start_mono) / (double)(c - m->start_tsc);
	return 1e9 / secho_tsc_hz();
}

/* The workers' table timings, per packet, in ns. */
static void table_timing(const struct meter *m, struct secho_lat_summary *s)
{
	struct secho_lat all;
	double ns = tsc_ns(m);

	memset(&all, 0, sizeof(all));
	for (unsigned i = 0; i < m->n; i++)
		secho_lat_merge(&all, &m->w[i].lat);
	secho_lat_summary(&all, s);
	s->min *= ns;
	s->mean *= ns;
	s->p50 *= ns;
	s->p99 *= ns;
	s->max *= ns;
}

void meter_print_stats(const struct meter *m, bool final)
{
	FILE *f = m->cfg->report;
	struct secho_flow_counters c;
	uint64_t read, drops;
	double el = (double)(secho_mono_ns() - m->start_mono) / 1e9;
	uint64_t cap = (uint64_t)secho_flow_table_capacity(&m->w[0].t) * m->n;

	meter_sum(m, &c, &read, &drops);
	uint64_t lookups = c.c[SECHO_FLOW_CNT_CACHE_HITS] + c.c[SECHO_FLOW_CNT_CACHE_MISSES];
	if (!f)
		return;
	struct secho_lat_summary lat;
	table_timing(m, &lat);
	if (m->cfg->json_stats) {
		fprintf(f,
		        "{\"final\":%s,\"elapsed_s\":%.3f,\"frames_read\":%" PRIu64
		        ",\"frames_per_s\":%.0f,\"kernel_drops\":%" PRIu64,
		        final ? "true" : "false", el, read, el > 0 ? (double)read / el : 0.0,
		        drops);
		if (m->cfg->pcap)
			fprintf(f, ",\"records_skipped\":%" PRIu64, m->cf.skipped);
		for (unsigned i = 0; i < SECHO_FLOW_CNT_COUNT; i++)
			fprintf(f, ",\"%s\":%" PRIu64,
			        secho_flow_counter_name((enum secho_flow_counter)i), c.c[i]);
		fprintf(f,
		        ",\"active\":%" PRIu64 ",\"capacity\":%" PRIu64
		        ",\"occupancy\":%.4f,\"cache_hit_rate\":%.4f",
		        c.active, cap, cap ? (double)c.active / (double)cap : 0.0,
		        lookups ? (double)c.c[SECHO_FLOW_CNT_CACHE_HITS] / (double)lookups : 0.0);
		fprintf(f,
		        ",\"table_timed\":%" PRIu64 ",\"table_ns_p50\":%.1f,\"table_ns_p99\":%.1f"
		        ",\"table_ns_mean\":%.1f",
		        lat.count, lat.p50, lat.p99, lat.mean);
		if (m->tier)
			secho_flow_tier_report(m->tier, f, true);
		fprintf(f, ",\"ignored_by\":{");
		for (unsigned i = 1, first = 1; i < SECHO_FLOW_IGN_COUNT; i++, first = 0)
			fprintf(f, "%s\"%s\":%" PRIu64, first ? "" : ",", secho_flow_ignore_name(i),
			        c.ignored[i]);
		fprintf(f, "},\"sinks\":[");
		unsigned nrow = 0;
		for (unsigned i = 0; i < m->cfg->nsinks; i++) {
			struct secho_flow_sink_stats st[SECHO_FLOW_SINK_MAX_ROWS];
			const struct secho_flow_sink *s = &m->cfg->sinks[i];
			unsigned nr = s->ops->stats(s->ctx, st, SECHO_FLOW_SINK_MAX_ROWS);
			for (unsigned j = 0; j < nr; j++, nrow++)
				fprintf(f,
				        "%s{\"name\":\"%s\",\"records\":%" PRIu64
				        ",\"messages\":%" PRIu64 ",\"errors\":%" PRIu64
				        ",\"not_delivered\":%" PRIu64 ",\"reconnects\":%" PRIu64
				        ",\"delivery_known\":%s}",
				        nrow ? "," : "", st[j].name, st[j].records, st[j].messages,
				        st[j].errors, st[j].not_delivered, st[j].reconnects,
				        st[j].delivery_unknown ? "false" : "true");
		}
		fprintf(f, "]}\n");
		fflush(f);
		return;
	}
	fprintf(f, "%s%.1f s: %" PRIu64 " frames read (%.0f per second)%s\n",
	        final ? "secho flow: " : "", el, read, el > 0 ? (double)read / el : 0.0,
	        final ? "" : ", so far");
	fprintf(f, "  %-16s %14" PRIu64 "   %s\n", "packets", c.c[SECHO_FLOW_CNT_PACKETS],
	        "counted in flows");
	fprintf(f, "  %-16s %14" PRIu64 "   %s\n", "octets", c.c[SECHO_FLOW_CNT_OCTETS],
	        "IP octets in flows");
	fprintf(f, "  %-16s %14" PRIu64 "   %s\n", "ignored", c.c[SECHO_FLOW_CNT_IGNORED],
	        "frames in no flow:");
	for (unsigned i = 1; i < SECHO_FLOW_IGN_COUNT; i++)
		if (c.ignored[i])
			fprintf(f, "    %-14s %14" PRIu64 "   %s\n", secho_flow_ignore_name(i),
			        c.ignored[i], secho_flow_ignore_text(i));
	if (!m->cfg->pcap)
		fprintf(f, "  %-16s %14" PRIu64 "   %s\n", "kernel_drops", drops,
		        "dropped before the meter saw them");
	else
		fprintf(f, "  %-16s %14" PRIu64 "   %s\n", "records_skipped", m->cf.skipped,
		        "capture records of interfaces neither Ethernet nor Linux cooked");
	fprintf(f, "  %-16s %14" PRIu64 "   %s\n", "flows", c.c[SECHO_FLOW_CNT_FLOWS],
	        "records started");
	for (unsigned i = SECHO_FLOW_CNT_END_IDLE; i <= SECHO_FLOW_CNT_END_RESOURCE; i++)
		fprintf(f, "    %-14s %14" PRIu64 "   %s\n",
		        secho_flow_counter_name((enum secho_flow_counter)i), c.c[i],
		        secho_flow_counter_text((enum secho_flow_counter)i));
	fprintf(f, "  %-16s %14" PRIu64 "   of %" PRIu64 " entries (%.1f%% occupied)\n", "active",
	        c.active, cap, pct(c.active, cap));
	fprintf(f, "  %-16s %14.1f%%  %" PRIu64 " hits of %" PRIu64 " lookups\n", "cache_hit_rate",
	        pct(c.c[SECHO_FLOW_CNT_CACHE_HITS], lookups), c.c[SECHO_FLOW_CNT_CACHE_HITS],
	        lookups);
	for (unsigned i = SECHO_FLOW_CNT_SYN_REUSE; i < SECHO_FLOW_CNT_COUNT; i++)
		if (i != SECHO_FLOW_CNT_CACHE_HITS && i != SECHO_FLOW_CNT_CACHE_MISSES)
			fprintf(f, "  %-16s %14" PRIu64 "   %s\n",
			        secho_flow_counter_name((enum secho_flow_counter)i), c.c[i],
			        secho_flow_counter_text((enum secho_flow_counter)i));
	fprintf(f,
	        "  %-16s %14.1f   ns per packet, p50 (p99 %.1f, mean %.1f; %" PRIu64
	        " packets timed)\n",
	        "table_update", lat.p50, lat.p99, lat.mean, lat.count);
	if (m->tier)
		secho_flow_tier_report(m->tier, f, false);
	for (unsigned i = 0; i < m->cfg->nsinks; i++) {
		struct secho_flow_sink_stats st[SECHO_FLOW_SINK_MAX_ROWS];
		const struct secho_flow_sink *s = &m->cfg->sinks[i];
		unsigned nr = s->ops->stats(s->ctx, st, SECHO_FLOW_SINK_MAX_ROWS);
		for (unsigned j = 0; j < nr; j++) {
			if (st[j].delivery_unknown) { /* UDP: sent is all that can be known */
				fprintf(f,
				        "  %s: %" PRIu64 " records sent, %" PRIu64
				        " refused by the network, %" PRIu64 " messages, %" PRIu64
				        " errors (UDP: whether the rest arrived cannot be known)\n",
				        st[j].name,
				        st[j].records > st[j].not_delivered
				                ? st[j].records - st[j].not_delivered
				                : 0,
				        st[j].not_delivered, st[j].messages, st[j].errors);
				continue;
			}
			fprintf(f,
			        "  %s: %" PRIu64 " records, %" PRIu64 " messages, %" PRIu64
			        " errors, %" PRIu64 " not delivered, %" PRIu64 " reconnects\n",
			        st[j].name, st[j].records, st[j].messages, st[j].errors,
			        st[j].not_delivered, st[j].reconnects);
		}
	}
	fflush(f);
}

void meter_progress(struct meter *m, uint64_t now_mono, bool last)
{
	if (!m->cfg->progress || !m->cfg->pcap)
		return;
	uint64_t read = m->frames_read, pos = m->cf.pos;
	double dt = (double)(now_mono - m->last_progress) / 1e9;
	double rate = dt > 0 ? (double)(read - m->progress_frames) / dt : 0.0;
	fprintf(stderr, "\r  %5.1f%% of %s, %" PRIu64 " frames, %.2f M frames/s   ",
	        m->cf.size ? 100.0 * (double)pos / (double)m->cf.size : 100.0, m->cfg->pcap, read,
	        rate / 1e6);
	if (last)
		fputc('\n', stderr);
	m->progress_shown = true;
	m->progress_frames = read;
	m->last_progress = now_mono;
}

/* The export thread's periodic work: sink ticks, statistics, progress. */
void meter_housekeeping(struct meter *m)
{
	uint64_t mono = secho_mono_ns();

	m->now_ns = secho_real_ns();
	if (mono - m->last_tick >= TICK_NS) {
		struct secho_flow_totals tot;
		meter_totals(m, &tot);
		for (unsigned i = 0; i < m->cfg->nsinks; i++)
			m->cfg->sinks[i].ops->tick(m->cfg->sinks[i].ctx, m->now_ns, &tot);
		m->last_tick = mono;
	}
	if (m->cfg->stats_s > 0 && (double)(mono - m->last_stats) >= m->cfg->stats_s * 1e9) {
		if (m->progress_shown)
			fputc('\n', stderr);
		m->progress_shown = false;
		meter_print_stats(m, false);
		m->last_stats = mono;
	}
	if (mono - m->last_progress >= PROGRESS_NS)
		meter_progress(m, mono, false);
}

void meter_banner(const struct meter *m, size_t memlen)
{
	const struct secho_flow_meter_cfg *cfg = m->cfg;
	FILE *f = cfg->report;

	if (!f || cfg->quiet)
		return;
	fprintf(f,
	        "secho flow: %s %s, %u worker%s, flow table %u x %u entries (%u-entry buckets, "
	        "%u-slot cache), %.1f MiB each, %s%s\n",
	        cfg->pcap ? "reading" : "metering", cfg->pcap ? cfg->pcap : cfg->iface, m->n,
	        m->n == 1 ? "" : "s", m->n, secho_flow_table_capacity(&m->w[0].t),
	        (unsigned)SECHO_FLOW_BUCKET, m->w[0].t.cfg.cache_slots, (double)memlen / 1048576.0,
	        cfg->table.uniflow ? "uniflows" : "biflows",
	        cfg->table.hash == SECHO_FLOW_HASH_DEFAULT ? "" : ", hash set by hand");
	if (!cfg->pcap && m->resident == m->n)
		fprintf(f, "  flow tables resident from the start (transparent huge "
		           "pages where the kernel gives them)\n");
	else if (!cfg->pcap)
		fprintf(f,
		        "  flow tables: %u of %u resident, the rest faulted in as used "
		        "(the kernel refused MADV_POPULATE_WRITE)\n",
		        m->resident, m->n);
	if (!cfg->pcap)
		for (unsigned i = 0; i < m->n; i++)
			for (unsigned q = 0; q < m->w[i].nio; q++)
				fprintf(f, "  worker %u: %s\n", i,
				        secho_io_describe(m->w[i].io[q]));
	if (m->tier)
		fprintf(f, "  %s\n", secho_flow_tier_describe(m->tier));
	fflush(f);
}
