/*
 * src/endpoint/counters.h - what the endpoint counts, per worker, and the report.
 *
 * Each data-path worker owns one struct secho_counters and is its only writer: it adds
 * with secho_ctr_add(), a relaxed atomic store of the new value, which on x86-64 is the
 * plain load, add and store of an ordinary increment (no locked instruction, no fence),
 * and no other worker ever writes the same line. Readers in other threads (the counters
 * report, built by whichever worker a request reaches) sum every worker's copy with
 * secho_counters_sum(), relaxed atomic loads: a value is at most one packet old, never
 * torn, and there is no data race for the compiler or a race detector to find.
 */
#ifndef SECHO_ENDPOINT_COUNTERS_H
#define SECHO_ENDPOINT_COUNTERS_H

#include <stdint.h>

#include "secho/wire.h"
#include "sys/latency.h"

/* Drops the data path adds to the parser's verdicts, each its own named reason. */
#define SECHO_PIPE_DROPS(X)                                                                        \
	X(RX_TRUNCATED, "rx_truncated", "frame longer than the receive buffer (over the MTU)")     \
	X(SRC_PORT, "src_port", "source port of a service that answers back (reflection)")         \
	X(ARP_IGNORED, "arp_ignored", "ARP frame while --arp is off, or not for our IP")           \
	X(OFFLOAD_BUSY, "offload_busy", "offload engine: every staging buffer in flight")          \
	X(OFFLOAD_ERROR, "offload_error", "offload engine backend failed")                         \
	X(CRYPTO_ERROR, "crypto_error", "streaming engine failed")                                 \
	X(TX_FULL, "tx_full", "no room in the TX ring")                                            \
	X(REPORT_RATE, "report_rate_limited", "counters report refused by the rate limit")         \
	X(REPORT_TOO_BIG, "report_too_big", "counters report does not fit the MTU")                \
	X(SEQ_EXHAUSTED, "seq_unavailable", "no sequence number could be reserved durably")        \
	X(SEQ_PENDING, "seq_pending", "the next window of sequence numbers is still being saved")

enum secho_pipe_drop {
#define SECHO_PIPE_X(name, id, text) SECHO_DROP_##name,
	SECHO_PIPE_DROPS(SECHO_PIPE_X)
#undef SECHO_PIPE_X
	        SECHO_PIPE_DROP_COUNT
};

const char *secho_pipe_drop_name(enum secho_pipe_drop d);

enum secho_engine_id { SECHO_ENG_STREAM = 0, SECHO_ENG_OFFLOAD = 1, SECHO_ENG_COUNT };

struct secho_engine_counters {
	uint64_t packets, bytes; /* answered, payload bytes */
	uint64_t dp_cycles;      /* data-path thread cycles spent on these packets */
	struct secho_lat lat;    /* RX dequeue -> TX enqueue, TSC cycles */
};

struct secho_counters {
	uint64_t rx_frames, tx_frames, reports;
	uint64_t verdict[SECHO_WIRE_VERDICT_COUNT]; /* [SECHO_WIRE_OK] unused */
	uint64_t drop[SECHO_PIPE_DROP_COUNT];
	struct secho_engine_counters eng[SECHO_ENG_COUNT];
};

/* The owning worker's update of one of its counters (see the top of this file). */
static inline void secho_ctr_add(uint64_t *c, uint64_t n)
{
	__atomic_store_n(c, *c + n, __ATOMIC_RELAXED);
}

/* One worker's share of the totals, for the per-worker breakdown of the report and the
 * summary: frames in and out, answers per engine, drops (every reason together). */
struct secho_counters_brief {
	uint64_t rx_frames, tx_frames, packets[SECHO_ENG_COUNT], drops;
};

/* Add from (a worker's counters; the worker may be running) into into (the caller's own),
 * reading each counter once; when brief is not NULL, it receives from's share, taken from
 * the same reads, so that the shares of all workers add up to the totals exactly. */
void secho_counters_sum(struct secho_counters *into, const struct secho_counters *from,
                        struct secho_counters_brief *brief);
/* Every frame received was answered or dropped under a reason: rx == answered + drops +
 * in flight. Returns the sum of all drop counters. */
uint64_t secho_counters_drops(const struct secho_counters *c);

#endif
