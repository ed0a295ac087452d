/*
 * tests/unit/test_report.c - the counters report's rate limit (src/endpoint/report.c):
 * per source first, then the global budget; a burst of at least one token at any rate.
 * Time is simulated: TSC values at 1 GHz handed to secho_report_allow(). Several workers
 * asking at once never get more than the budget (and, built with ThreadSanitizer by
 * `make tsan`, the limiter's state is never touched by two of them at a time).
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "endpoint/report.h"
#include "harness.h"

#define HZ 1e9

static struct secho_report_ctx rep;

static void init(double rate)
{
	secho_report_init(&rep, rate);
	rep.tsc_hz = HZ;
}

static uint64_t at(double seconds)
{
	return (uint64_t)(HZ + seconds * HZ); /* never 0: 0 marks a fresh bucket */
}

static uint32_t ip4(unsigned a, unsigned b, unsigned c, unsigned d)
{
	return htonl(a << 24 | b << 16 | c << 8 | d);
}

/* One source floods at 50 requests per second (the spoofed source) while another
 * asks once a second: the other must get every report. */
static void test_flood_does_not_starve(void)
{
	t_begin("report rate: a source flooding at 50/s does not starve another source at 1/s");
	init(2);
	uint32_t flood = ip4(192, 0, 2, 66), other = ip4(192, 0, 2, 1);
	unsigned flood_ok = 0, other_ok = 0, other_asked = 0, when = 0;
	for (unsigned ms = 0; ms < 20000; ms++) {
		if (ms % 1000 == 0) /* the other source asks once in each second, at random */
			when = ms + 1 + (unsigned)t_randrange(0, 997);
		if (ms % 20 == 0)
			flood_ok += secho_report_allow(&rep, flood, at(ms / 1000.0));
		if (ms == when) {
			other_asked++;
			other_ok += secho_report_allow(&rep, other, at(ms / 1000.0));
		}
	}
	T_CHECK(other_ok == other_asked, "other source: %u of %u reports allowed", other_ok,
	        other_asked);
	/* 2 per second plus the burst of 4: the flood is still limited to its own rate. */
	T_CHECK(flood_ok >= 40 && flood_ok <= 45, "flooding source: %u allowed in 20 s", flood_ok);
	t_end();
}

/* Many sources together stay within the global budget (8 x rate, burst 16 x rate). */
static void test_global_budget(void)
{
	t_begin("report rate: all sources together stay within 8 x rate");
	init(2);
	unsigned ok = 0;
	for (unsigned s = 0; s < 10; s++)
		for (unsigned i = 0; i < 100; i++)
			ok += secho_report_allow(&rep, ip4(192, 0, 2, 10 + i), at(s + i / 100.0));
	/* burst 32, then 16 per second for about 9.99 s */
	T_CHECK(ok >= 32 + 150 && ok <= 32 + 161, "%u allowed in 10 s from 100 sources", ok);
	t_end();
}

/* A rate under 0.5 per second gave a burst under one token: the port was off. */
static void test_low_rate(void)
{
	t_begin("report rate: --report-rate 0.4 and 0.01 still allow reports (burst >= 1)");
	init(0.4);
	uint32_t a = ip4(192, 0, 2, 1);
	unsigned ok = 0;
	for (unsigned i = 0; i < 100; i++)
		ok += secho_report_allow(&rep, a, at(i * 0.1)); /* 10 s, 10 per second */
	T_CHECK(ok >= 4 && ok <= 5, "rate 0.4: %u allowed in 10 s (expected 1 + 4)", ok);
	init(0.01);
	T_CHECK(secho_report_allow(&rep, a, at(0)), "rate 0.01: first report allowed");
	T_CHECK(!secho_report_allow(&rep, a, at(50)), "rate 0.01: none 50 s later");
	T_CHECK(secho_report_allow(&rep, a, at(100.5)), "rate 0.01: one 100 s later");
	t_end();
}

/* Several workers at once: each asks for its own source and for one all of them share, as
 * fast as it can, over 2 simulated seconds. */
enum { THREADS = 4, CALLS = 20000 };
static _Atomic uint64_t clock_ns; /* the simulated TSC, advanced by every call */
static unsigned own_ok[THREADS];

static void *asker(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;
	uint32_t own = ip4(192, 0, 2, 100 + id), shared = ip4(192, 0, 2, 99);
	for (unsigned i = 0; i < CALLS; i++) {
		/* 25 ns of simulated time per call: 4 x 20000 calls = 2 s */
		uint64_t now = at(atomic_fetch_add(&clock_ns, 25) / 1e9);
		own_ok[id] += secho_report_allow(&rep, i % 2 ? own : shared, now);
	}
	return NULL;
}

static void test_concurrent(void)
{
	t_begin("report rate: %d workers asking at once stay within the budget", THREADS);
	init(10);
	pthread_t th[THREADS];
	for (unsigned i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, asker, (void *)(uintptr_t)i);
	unsigned total = 0;
	for (unsigned i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		total += own_ok[i];
	}
	/* 5 sources (4 own + the shared one) at 10/s with a burst of 20 each, and the global
	 * budget of 80/s with a burst of 160, over 2 s: at most 5 x (20 + 20) = 200 from the
	 * sources' buckets (and at most 320 globally). */
	T_CHECK(total <= 200, "%u reports allowed, at most 200", total);
	T_CHECK(total >= 20, "%u reports allowed: the limiter still lets some through", total);
	t_end();
}

int main(void)
{
	t_seed_init("test_report");
	test_flood_does_not_starve();
	test_global_budget();
	test_low_rate();
	test_concurrent();
	return t_exit();
}
