/* src/sys/latency.c - see latency.h. */
#include "sys/latency.h"

#include <string.h>

static inline uint64_t ld(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

void secho_lat_merge(struct secho_lat *into, const struct secho_lat *from)
{
	uint64_t count = ld(&from->count);
	if (!count)
		return;
	uint64_t mn = ld(&from->min), mx = ld(&from->max);
	if (!into->count || mn < into->min)
		into->min = mn;
	if (mx > into->max)
		into->max = mx;
	into->count += count;
	into->sum += ld(&from->sum);
	for (unsigned i = 0; i < SECHO_LAT_BUCKETS; i++)
		into->bucket[i] += ld(&from->bucket[i]);
}

double secho_lat_quantile(const struct secho_lat *h, double q)
{
	if (!h->count)
		return 0;
	if (q <= 0)
		return (double)h->min;
	if (q >= 1)
		return (double)h->max;
	/* The smallest value with at least ceil(q * count) values at or below it. */
	uint64_t rank = (uint64_t)(q * (double)h->count);
	if ((double)rank < q * (double)h->count)
		rank++;
	if (rank == 0)
		rank = 1;
	uint64_t seen = 0;
	for (unsigned b = 0; b < SECHO_LAT_BUCKETS; b++) {
		seen += h->bucket[b];
		if (seen >= rank) {
			uint64_t lo, w;
			secho_lat_bucket_range(b, &lo, &w);
			double mid = (double)lo + (double)(w - 1) / 2.0;
			if (mid < (double)h->min)
				mid = (double)h->min;
			if (mid > (double)h->max)
				mid = (double)h->max;
			return mid;
		}
	}
	return (double)h->max;
}

void secho_lat_summary(const struct secho_lat *h, struct secho_lat_summary *s)
{
	memset(s, 0, sizeof(*s));
	if (!h->count)
		return;
	s->count = h->count;
	s->min = (double)h->min;
	s->max = (double)h->max;
	s->mean = (double)h->sum / (double)h->count;
	s->p50 = secho_lat_quantile(h, 0.50);
	s->p99 = secho_lat_quantile(h, 0.99);
}
