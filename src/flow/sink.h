/*
 * src/flow/sink.h - where flow records go: the interface the meter calls for each exporter
 * (JSON lines: src/flow/json.c; IPFIX to collectors: src/flow/ipfix.c), all of them from
 * one thread, the meter's export thread (src/flow/meter.c), so an exporter needs no locks.
 *
 * For every record that leaves a flow table, record() is called on every sink, in the
 * order the records were emitted by each worker. tick() comes every 100 ms of
 * wall time (template refresh, periodic statistics, flushing buffers), close() once at the
 * end with the final totals (flush everything, wait up to timeout_ms for the transport to
 * acknowledge, release). stats() may be called at any time between.
 */
#ifndef SECHO_FLOW_SINK_H
#define SECHO_FLOW_SINK_H

#include <stdint.h>

#include "flow/record.h"

/* The meter's totals, for an exporter's own statistics (the IPFIX options template:
 * observedFlowTotalCount, ignoredPacketTotalCount, ...). */
struct secho_flow_totals {
	uint64_t observed_flows;   /* records started */
	uint64_t observed_packets; /* packets counted in flows */
	uint64_t observed_octets;  /* their IP octets */
	uint64_t ignored_packets;  /* frames in no flow (malformed, not IP, orphan fragments) */
	uint64_t ignored_octets;   /* their bytes as on the wire */
	uint64_t dropped_packets;  /* frames the kernel dropped before the meter saw them */
	uint64_t start_ns;         /* when metering started (wall clock, ns since the epoch) */
};

/* What one sink did; not_sent: records it accepted but could not deliver. */
struct secho_flow_sink_stats {
	uint64_t records, messages, errors, not_sent;
};

struct secho_flow_sink_ops {
	/* 0, or -errno: the record could not be taken (counted by the sink). */
	int (*record)(void *ctx, const struct secho_flow_rec *rec, uint64_t now_ns);
	void (*tick)(void *ctx, uint64_t now_ns, const struct secho_flow_totals *tot);
	/* 0 when everything was delivered, else -errno (the sink's stats say how much). */
	int (*close)(void *ctx, const struct secho_flow_totals *tot, int timeout_ms);
	void (*stats)(void *ctx, struct secho_flow_sink_stats *st);
};

struct secho_flow_sink {
	const struct secho_flow_sink_ops *ops;
	void *ctx;
	char name[160]; /* for the summary: "json:FILE", "ipfix:udp://host:port" */
};

#endif
