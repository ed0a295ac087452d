/*
 * secho/tsc.h - the time-stamp counter: the clock of per-packet timing (the endpoint's
 * latency, the offload engine's spin, the benchmarks). Implemented in src/sys/tsc.c, below
 * every layer that uses it.
 *
 * On x86-64 with an invariant TSC (2.096 GHz on Zen 5 machines of this kind, 2.596 GHz on
 * Zen 4), rdtsc is a ~20-cycle read of a constant-rate counter, cheap enough to take twice
 * per packet. secho_tsc_hz() calibrates it once against CLOCK_MONOTONIC_RAW (three 10 ms
 * windows, the median; first call only).
 */
#ifndef SECHO_TSC_H
#define SECHO_TSC_H

#include <stdint.h>

static inline uint64_t secho_rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/* Ordered reads around a timed region (benchmarks): begin waits for earlier instructions
 * and holds later ones back; end waits for the region (rdtscp) and holds later ones back. */
static inline uint64_t secho_tsc_begin(void)
{
	uint32_t lo, hi;
	__asm__ volatile("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi)::"memory");
	return ((uint64_t)hi << 32) | lo;
}

static inline uint64_t secho_tsc_end(void)
{
	uint32_t lo, hi, aux;
	__asm__ volatile("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi), "=c"(aux)::"memory");
	return ((uint64_t)hi << 32) | lo;
}

/* TSC ticks per second (calibrated once; thread-safe). */
double secho_tsc_hz(void);

#endif
