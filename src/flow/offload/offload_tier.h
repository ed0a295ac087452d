/*
 * src/flow/offload/offload_tier.h - the offload tier as the meter uses it: the XDP program and its
 * map of offloaded flows (src/flow/offload/offload.h) behind the flow table's hooks (table.h,
 * struct secho_flow_offload_hooks). docs/FLOW.md, "The meter with the offload tier".
 *
 *   open     load and attach the program to the interface (one for the meter), and make
 *            one map handle per worker
 *   table    a worker's flow table set up behind the tier: its configuration gets the
 *            hooks, the worker's handle and the threshold, and the worker's scans update it
 *   poll     in the worker's loop: when the scan period has come, the map is read in
 *            batches and the table learns the last-seen time of each of its offloaded
 *            flows (what their inactive timeouts need); a scan goes in slices of at most
 *            1 ms, so that the worker's rings never wait long for it
 *   stop     detach the program and wait for its runs to finish: from then on the map's
 *            counters are final, so the tables' last reclaims make whole records. Any
 *            worker may call it, every worker must before it flushes; the first does it
 *   report   the program's counters, the tier's and the workers' in the meter's
 *            statistics (text lines, or members of its JSON object)
 *   close
 *
 * Threads: each worker uses its own handle (secho_flow_offload_share), never another's,
 * and its own counters (stored with relaxed atomics: the export thread reads them for
 * reports). The flows of different workers are different keys (the split is by flow), so
 * no two workers insert or remove the same entry; the kernel serialises the operations
 * on the map itself. Every worker reads the whole map when it scans and keeps what is its
 * own: N workers, N scans.
 *
 * The scan period, from what the operations cost here (docs/FLOW.md: a batch read about
 * 0.6 us per flow, a single read about 1.4 us): half the inactive timeout (at least 100
 * ms). A busy flow is then read at least once per half timeout, so the table never thinks
 * it idle; a flow that looks idle is read once more on its own (peek) before it is taken
 * back. Scanning twice per timeout costs 1.2 us per flow and timeout, less than the peek
 * every busy flow would cost without scans (1.4 us); scanning more often costs more and
 * changes no record; less often, and busy flows start to look idle and cost peeks too.
 */
#ifndef SECHO_FLOW_OFFLOAD_TIER_H
#define SECHO_FLOW_OFFLOAD_TIER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "flow/core/table.h"
#include "flow/offload/offload.h"

#define SECHO_TIER_THRESHOLD_DEFAULT 1000u        /* the ipfixprobe CTT plugin's default */
#define SECHO_TIER_SCAN_MIN_NS       100000000ull /* 100 ms */
#define SECHO_TIER_SCAN_SLICE_NS     1000000ull   /* a poll reads for at most 1 ms */

struct secho_flow_tier_cfg {
	struct secho_flow_offload_cfg ofl; /* interface, XDP mode, map size, uniflow */
	uint32_t threshold;                /* packets before a flow is offloaded; 0 = default */
};

/* What the meter's side of the tier counts, per worker (X(NAME, "name", "text")). */
#define SECHO_TIER_COUNTERS(X)                                                                     \
	X(OFFLOADED, "offloaded", "flows put in the map")                                          \
	X(INSERT_FULL, "insert_full", "flows refused by a full map: they stay in software")        \
	X(INSERT_FAILED, "insert_failed", "flows refused for another reason (stay in software)")   \
	X(PEEKS, "peeks", "single-flow reads: is a flow that looks idle idle?")                    \
	X(RECLAIMED, "reclaimed", "flows taken back from the map with their counters")             \
	X(RECLAIM_MISSING, "reclaim_missing", "flows to take back that the map did not have")      \
	X(RETURNED, "returned", "of them, flows that went on in software (not offloaded again)")   \
	X(MAP_PACKETS, "map_packets", "packets the map gave back into records")                    \
	X(MAP_OCTETS, "map_octets", "their IP octets")                                             \
	X(SCANS, "scans", "whole-map reads for last-seen times")                                   \
	X(SCAN_FLOWS, "scan_flows", "flows they read")                                             \
	X(SCAN_NS, "scan_ns", "time they took, ns")                                                \
	X(SCAN_ERRORS, "scan_errors", "scans a map read failed")

enum secho_tier_counter {
#define SECHO_TIER_CNT_X(name, id, text) SECHO_TIER_CNT_##name,
	SECHO_TIER_COUNTERS(SECHO_TIER_CNT_X)
#undef SECHO_TIER_CNT_X
	        SECHO_TIER_CNT_COUNT
};

struct secho_flow_tier;
struct secho_flow_tier_worker;

/*
 * Load and attach the program as cfg says, with one handle per worker (1..64). Returns 0
 * with *out set, or -errno with one line in err (the library's reasons: secho_flow_
 * offload_open).
 */
int secho_flow_tier_open(struct secho_flow_tier **out, const struct secho_flow_tier_cfg *cfg,
                         unsigned workers, char *err, size_t errlen);

/* "XDP offload native on eth1 (...)", threshold included. Valid until close. */
const char *secho_flow_tier_describe(const struct secho_flow_tier *t);
bool secho_flow_tier_native(const struct secho_flow_tier *t);
/* The program's XSKMAP for the meter's AF_XDP sockets (secho_io_cfg.xsk_map_fd). */
int secho_flow_tier_xsk_map_fd(const struct secho_flow_tier *t);

/* Worker i's part (i < workers). */
struct secho_flow_tier_worker *secho_flow_tier_worker(struct secho_flow_tier *t, unsigned i);

/*
 * Set up worker w's flow table behind the tier, in one step: secho_flow_table_init(table,
 * cfg, mem, len) with cfg's offload hooks, context and threshold set to w's (cfg itself is
 * not changed; its offload fields must be unset), and table made the one w's scans update.
 * mem and len as for secho_flow_table_init (the offload fields do not change the size).
 * Returns 0, or secho_flow_table_init's -errno.
 */
int secho_flow_tier_table_init(struct secho_flow_tier_worker *w, struct secho_flow_table *table,
                               const struct secho_flow_table_cfg *cfg, void *mem, size_t len);

/* Worker w's loop, every round (mono_ns: CLOCK_MONOTONIC): a slice of the scan when one
 * is due or under way. Returns how many ms the worker may wait for packets before the
 * next call (1 while a scan is under way, at most 100). Can't fail (a failed scan is
 * counted in scan_errors and tried again after 100 ms). */
unsigned secho_flow_tier_poll(struct secho_flow_tier_worker *w, uint64_t mono_ns);

/* Detach and wait for the program's runs (once; later calls wait for the first). 0 or the
 * first call's -errno. */
int secho_flow_tier_stop(struct secho_flow_tier *t);

/* The statistics: text lines (each starting with two spaces), or JSON members starting
 * with a comma (",\"offload\":{...}"). Any thread. */
void secho_flow_tier_report(struct secho_flow_tier *t, FILE *f, bool json);

/* Sum of the workers' counters (any thread). */
void secho_flow_tier_counters(struct secho_flow_tier *t, uint64_t c[SECHO_TIER_CNT_COUNT]);

const char *secho_flow_tier_counter_name(unsigned i);
const char *secho_flow_tier_counter_text(unsigned i);

/* Detach if needed, release everything. NULL is a no-op. */
void secho_flow_tier_close(struct secho_flow_tier *t);

#endif
