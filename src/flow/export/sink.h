/*
 * src/flow/export/sink.h - where flow records go: the interface the meter calls for each exporter
 * (JSON lines: src/flow/export/json.c; IPFIX to collectors: src/flow/export/ipfix.c), all of them
 * from one thread, the meter's export thread (src/flow/meter/ring.c), so an exporter needs no
 * locks.
 *
 * For every record that leaves a flow table, record() is called on every sink, in the
 * order the records were emitted by each worker. tick() comes every 100 ms of
 * wall time (template refresh, periodic statistics, flushing buffers), close() once at the
 * end with the final totals (flush everything, wait up to timeout_ms for the transport to
 * acknowledge). stats() may be called at any time, also after close(). The sink's own
 * free function (secho_flow_json_free, secho_flow_ipfix_free) releases it.
 */
#ifndef SECHO_FLOW_SINK_H
#define SECHO_FLOW_SINK_H

#include <stdint.h>

#include "flow/core/record.h"

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

/* What a sink did, one row per destination (an IPFIX sink: one per collector). */
struct secho_flow_sink_stats {
	char name[160];         /* "json:FILE", "ipfix:udp://HOST:PORT" */
	uint64_t records;       /* records taken (IPFIX: handed to the transport) */
	uint64_t messages;      /* JSON: chunks written; IPFIX: messages sent */
	uint64_t errors;        /* write, send, connect and transport errors */
	uint64_t not_delivered; /* records taken but not delivered (lost with an error, or
	                         * still unacknowledged at close) */
	uint64_t reconnects;    /* TCP connections established after the first */
	/* UDP: nothing says whether a record arrived; records counts what was sent and
	 * not_delivered only what the network refused (a send error, an ICMP unreachable
	 * reported on the socket): the rest is sent, not known to be delivered. */
	bool delivery_unknown;
};

#define SECHO_FLOW_SINK_MAX_ROWS 8

struct secho_flow_sink_ops {
	/* 0, or -errno: the record could not be taken (counted by the sink). */
	int (*record)(void *ctx, const struct secho_flow_rec *rec, uint64_t now_ns);
	/* now_ns: the wall clock (CLOCK_REALTIME); tot: the meter's totals so far. */
	void (*tick)(void *ctx, uint64_t now_ns, const struct secho_flow_totals *tot);
	/* Flush, deliver, wait at most timeout_ms. 0 when everything was delivered, else
	 * -errno (the sink's stats say how much was not). Called once. */
	int (*close)(void *ctx, uint64_t now_ns, const struct secho_flow_totals *tot,
	             int timeout_ms);
	/* Up to max rows (at least 1); returns how many. After close(): the final counters.
	 * Can't fail. */
	unsigned (*stats)(void *ctx, struct secho_flow_sink_stats *rows, unsigned max);
};

struct secho_flow_sink {
	const struct secho_flow_sink_ops *ops;
	void *ctx;
	char name[160]; /* for the banner and errors: "json:FILE", "ipfix: 2 collectors" */
};

#endif
