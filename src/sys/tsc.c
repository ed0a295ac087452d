/* src/sys/tsc.c - TSC calibration (see secho/tsc.h). */
#include "secho/tsc.h"

#include <stdatomic.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double secho_tsc_hz(void)
{
	static _Atomic double cached;
	double hz = atomic_load(&cached);
	if (hz > 0)
		return hz;
	/* Median of three 10 ms windows: robust against one preempted window. */
	double r[3];
	for (int i = 0; i < 3; i++) {
		double t0 = now_s();
		uint64_t c0 = secho_tsc_begin();
		while (now_s() - t0 < 0.010)
			;
		double t1 = now_s();
		uint64_t c1 = secho_tsc_end();
		r[i] = (double)(c1 - c0) / (t1 - t0);
	}
	double a = r[0], b = r[1], c = r[2];
	hz = a > b ? (b > c ? b : (a > c ? c : a)) : (a > c ? a : (b > c ? c : b));
	atomic_store(&cached, hz);
	return hz;
}
