/*
 * src/sys/latency.h - log-linear latency histograms in TSC cycles.
 *
 * A value v < 32 has its own bucket; above, each power of two [2^e, 2^(e+1)) is split into
 * 32 equal sub-buckets, so a reported percentile is within 1/32 (3.1%) of the true value
 * (it is the sub-bucket's midpoint, clamped to the exact min and max). Recording is a few
 * instructions and no allocation: one histogram per engine per worker, written by that
 * worker's thread alone with relaxed atomic stores (plain stores on x86-64, see
 * secho_ctr_add() in counters.h); readers in other threads sum them with secho_lat_merge()
 * (relaxed atomic loads), so a report built while the worker runs is at most a packet
 * stale, never torn, and the program has no data race.
 */
#ifndef SECHO_ENDPOINT_LATENCY_H
#define SECHO_ENDPOINT_LATENCY_H

#include <stdint.h>

#define SECHO_LAT_SUB_BITS 5
#define SECHO_LAT_SUB      (1u << SECHO_LAT_SUB_BITS)
#define SECHO_LAT_BUCKETS  (SECHO_LAT_SUB + (64 - SECHO_LAT_SUB_BITS) * SECHO_LAT_SUB)

struct secho_lat {
	uint64_t count, sum, min, max;
	uint64_t bucket[SECHO_LAT_BUCKETS];
};

struct secho_lat_summary {
	uint64_t count;
	double min, mean, p50, p99, max; /* cycles */
};

/* Add from (its owner may be recording into it) into into (the caller's own). Can't fail. */
void secho_lat_merge(struct secho_lat *into, const struct secho_lat *from);
/* Summary of h; all zeros when h is empty. */
void secho_lat_summary(const struct secho_lat *h, struct secho_lat_summary *s);
/* Value at quantile q (0..1), in cycles; 0 when empty. */
double secho_lat_quantile(const struct secho_lat *h, double q);

static inline unsigned secho_lat_bucket(uint64_t v)
{
	if (v < SECHO_LAT_SUB)
		return (unsigned)v;
	unsigned e = 63u - (unsigned)__builtin_clzll(v); /* >= SUB_BITS */
	unsigned shift = e - SECHO_LAT_SUB_BITS;
	return SECHO_LAT_SUB + shift * SECHO_LAT_SUB +
	       (unsigned)((v >> shift) & (SECHO_LAT_SUB - 1));
}

/* Lower bound and width of bucket b. */
static inline void secho_lat_bucket_range(unsigned b, uint64_t *lo, uint64_t *width)
{
	if (b < SECHO_LAT_SUB) {
		*lo = b;
		*width = 1;
		return;
	}
	unsigned shift = (b - SECHO_LAT_SUB) / SECHO_LAT_SUB;
	uint64_t sub = (b - SECHO_LAT_SUB) % SECHO_LAT_SUB;
	*lo = (SECHO_LAT_SUB + sub) << shift;
	*width = (uint64_t)1 << shift;
}

/* Record n samples of value v into h (n >= 1; a burst timed as a whole counts each of
 * its n packets at its time over n); only h's owner may call this (see the top of this
 * file). */
static inline void secho_lat_record_n(struct secho_lat *h, uint64_t v, uint64_t n)
{
	if (h->count == 0 || v < h->min)
		__atomic_store_n(&h->min, v, __ATOMIC_RELAXED);
	if (v > h->max)
		__atomic_store_n(&h->max, v, __ATOMIC_RELAXED);
	__atomic_store_n(&h->count, h->count + n, __ATOMIC_RELAXED);
	__atomic_store_n(&h->sum, h->sum + v * n, __ATOMIC_RELAXED);
	uint64_t *b = &h->bucket[secho_lat_bucket(v)];
	__atomic_store_n(b, *b + n, __ATOMIC_RELAXED);
}

/* Record v into h; only h's owner may call this (see the top of this file). */
static inline void secho_lat_record(struct secho_lat *h, uint64_t v)
{
	secho_lat_record_n(h, v, 1);
}

#endif
