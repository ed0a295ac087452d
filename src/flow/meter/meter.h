/*
 * src/flow/meter/meter.h - the flow meter: input (a capture file, or an interface through the
 * io layer), workers each with a flow table of its own, and one export thread that hands
 * the records to the sinks and reports. Its rooms: src/flow/meter/inner.h.
 *
 *   offline   the file is read into reused buffers (include/secho/capfile.h). One worker:
 *             the calling thread dissects, prepares (key, hash) and meters each frame,
 *             records to the sinks directly. Several: every worker walks the whole file
 *             with a cursor and buffers of its own, dissects every frame to learn whose it
 *             is (secho_flow_worker_of, the symmetric address hash) and meters its own;
 *             every worker sees every frame's time, so every table keeps the same clock
 *             (src/flow/meter/offline.c).
 *   live      each worker reads its own sockets: AF_PACKET with PACKET_FANOUT_HASH (one
 *             socket per worker), or AF_XDP (one socket per interface queue, queue q to
 *             worker q mod N). Timestamps are the ring's; timeouts are also enforced when
 *             no frame comes (the wall clock, 200 ms behind, so that frames still in a ring
 *             are not overtaken) (src/flow/meter/live.c).
 *   export    workers > 1 or live: records go through a single-producer ring per worker
 *             to the calling thread, which calls the sinks, ticks them every 100 ms, and
 *             prints statistics (--stats) and progress (ring.c, report.c).
 *
 * Offload (live only, cfg->offload): the XDP offload tier (src/flow/offload/offload_tier.h) is
 * attached before the sockets are opened (AF_XDP sockets go into its XSKMAP); each worker's
 * table is set up behind it (secho_flow_tier_table_init), offloads its heavy flows through
 * the worker's own map handle and takes them back when they leave; at the stop the program is
 * detached before the tables are flushed.
 *
 * Timing: every 4th burst handed to a table is timed with the TSC; the statistics give the
 * per-packet cost (the burst's cycles over its packets, each packet counted) as p50/p99.
 *
 * Stop: when *cfg->stop becomes non-zero (a signal handler sets it) or the file ends, every
 * worker exports every flow still in its table (end of input: forced, or the timeout that
 * had already come), the sinks are closed, and run returns.
 */
#ifndef SECHO_FLOW_METER_H
#define SECHO_FLOW_METER_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "flow/core/table.h"
#include "flow/export/sink.h"
#include "flow/offload/offload_tier.h"
#include "secho/io.h"

#define SECHO_FLOW_MAX_WORKERS 64
/* A live socket's receive ring, MiB: what arrives while the meter is descheduled or
 * throttled waits there (at 5 Gbit/s, 64 MiB is about 100 ms). */
#define SECHO_FLOW_RING_MIB     64u
#define SECHO_FLOW_RING_MIB_MAX 2048u /* the io layer's most: 2^20 frames of 2 KiB (< 4 GiB) */
/* How long the sinks may take at the end to deliver what they hold (TCP: until the
 * collector acknowledged it, reconnecting with backoff if it must). */
#define SECHO_FLOW_CLOSE_TIMEOUT_MS 10000

struct secho_flow_meter_cfg {
	struct secho_flow_table_cfg table; /* flows: the total over all workers; seed, emit and
	                                    * ctx are set by the meter */
	unsigned workers;                  /* 1..SECHO_FLOW_MAX_WORKERS */
	const char *pcap;                  /* offline input, or NULL */
	const char *iface;                 /* live input (when pcap is NULL) */
	enum secho_io_kind io;             /* AUTO, XDP or PACKET */
	enum secho_io_xdp_mode xdp_mode;   /* AF_XDP sockets (without offload) */
	uint32_t ring_mib; /* live: each socket's receive ring, MiB (0: SECHO_FLOW_RING_MIB) */
	const struct secho_flow_tier_cfg *offload; /* live: the XDP offload tier, or NULL */
	struct secho_flow_sink *sinks;
	unsigned nsinks;
	double stats_s;  /* print statistics every stats_s seconds (0: only at the end) */
	bool json_stats; /* statistics as one JSON object per line */
	bool progress;   /* offline: a progress line on stderr */
	bool quiet;      /* no banner */
	FILE *report;    /* banner, statistics, summary */
	volatile sig_atomic_t *stop;
};

struct secho_flow_meter_result {
	struct secho_flow_counters cnt; /* all workers */
	uint64_t frames_read;           /* frames read from the input */
	uint64_t kernel_drops;          /* live: frames the kernel dropped */
	double elapsed_s;
	bool interrupted;      /* stopped by *stop before the end of the input */
	char input_error[200]; /* offline: why reading stopped early ("" when it did not) */
	bool sink_failed;      /* a sink could not deliver everything */
};

/*
 * Run the meter until the input ends or *cfg->stop is set. Returns 0 with *res filled
 * (even when the input or a sink failed part way: res says so), or -errno when it could
 * not start, with a one-line reason in err (nothing was read then).
 */
int secho_flow_meter_run(const struct secho_flow_meter_cfg *cfg,
                         struct secho_flow_meter_result *res, char *err, size_t errlen);

#endif
