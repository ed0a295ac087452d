/*
 * src/endpoint/report.h - the counters report (UDP port 4002) and its rate limit.
 *
 * The report is a compact JSON object (docs/PROTOCOL.md lists the fields), encrypted like
 * any response under a secure header with the counters flag (0x02). A request of a few
 * bytes gets a response of about a kilobyte, so reports are rate-limited per source IP
 * (token bucket, `rate` per second, burst of 2 x rate) and overall (8 x rate, burst 16 x
 * rate): the port cannot be used to amplify traffic towards a spoofed victim. A request is
 * checked against its source's bucket first, so the requests one source has refused do not
 * spend the global budget of the others; bursts are never under one token, so any rate > 0
 * lets reports through.
 *
 * Several workers share one limiter (a per-worker one would give a source whose requests
 * one worker receives only its share of the rate): secho_report_allow() takes it with a
 * test-and-set and, when another worker holds it at that moment, refuses the request
 * instead of waiting (the safe side of a rate limit; the lock is held for a few hundred
 * nanoseconds, and only requests to the counters port ever touch it).
 */
#ifndef SECHO_ENDPOINT_REPORT_H
#define SECHO_ENDPOINT_REPORT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "endpoint/counters.h"

struct secho_offload;

#define SECHO_REPORT_SOURCES 256

struct secho_bucket {
	uint32_t ip; /* network order; 0 = free */
	double tokens;
	uint64_t last; /* TSC */
};

struct secho_report_ctx {
	double rate, tsc_hz;
	uint64_t start_tsc;
	atomic_flag busy; /* held by the worker deciding on a request (see above) */
	struct secho_bucket src[SECHO_REPORT_SOURCES];
	struct secho_bucket global;
	/* Filled by the endpoint at start-up, read when a report is built. */
	struct secho_counters *const *ctr; /* each worker's counters */
	unsigned nworkers;
	const char *io_desc;
	const char *offload_backend;
	size_t stream_key_bytes, offload_key_bytes, offload_staging_bytes, stream_staging_bytes;
	uint64_t (*seq_high_water)(void *arg);
	void *seq_arg;
	uint64_t seq_final; /* the high-water mark at shutdown, once the state is closed */
	const struct secho_offload *off;
};

void secho_report_init(struct secho_report_ctx *r, double rate);
/* True when a report to `ip` may be sent at TSC time `now`: its source's bucket and then the
 * global one both hold a token, and one is taken from each (none when refused). Any worker
 * may call it; false also when another worker is deciding at the same moment. */
bool secho_report_allow(struct secho_report_ctx *r, uint32_t ip, uint64_t now);
/* Sum of every worker's counters into sum; when per is not NULL, each worker's share into
 * per[0 .. nworkers) (from the same reads: the shares add up to sum exactly). */
void secho_report_collect(const struct secho_report_ctx *r, struct secho_counters *sum,
                          struct secho_counters_brief *per);
/* Write the JSON report (NUL-terminated) into out; returns its length (without NUL), or 0
 * when it does not fit. Compact (no spaces) so it fits a 1500-byte MTU: when it would not,
 * the zero drop counters and then the per-worker breakdown are left out (docs/PROTOCOL.md).
 * Any worker may call it while the others run. */
size_t secho_report_json(const struct secho_report_ctx *r, char *out, size_t cap);

#endif
