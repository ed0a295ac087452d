/*
 * src/sys/clock.h - the system clocks, read one way everywhere: CLOCK_MONOTONIC for
 * deadlines, intervals and rates; CLOCK_REALTIME for what is shown or exported as a time of
 * day (IPFIX export times, the dashboard's timestamps). Per-packet timing uses the TSC
 * (secho/tsc.h), not these.
 *
 * Inline: each is one vDSO call and a multiply. Can't fail (clock_gettime cannot fail for
 * these two clocks on Linux).
 */
#ifndef SECHO_SYS_CLOCK_H
#define SECHO_SYS_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Clock `id` in nanoseconds. */
static inline uint64_t secho_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Clock `id` in seconds. */
static inline double secho_clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline uint64_t secho_mono_ns(void)
{
	return secho_clock_ns(CLOCK_MONOTONIC);
}

static inline uint64_t secho_real_ns(void)
{
	return secho_clock_ns(CLOCK_REALTIME);
}

static inline double secho_mono_s(void)
{
	return secho_clock_s(CLOCK_MONOTONIC);
}

static inline double secho_real_s(void)
{
	return secho_clock_s(CLOCK_REALTIME);
}

#endif
