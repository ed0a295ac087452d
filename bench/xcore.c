/*
 * bench/xcore.c - what one cache line costs to move between two CPUs of this machine.
 *
 * Two threads, pinned to CPU A and CPU B, pass a counter back and forth in one cache line:
 * each waits until the line holds the value the other wrote, then writes the next. One
 * round trip is two line transfers, so half of it is the one-way cost of a line written on
 * one core and read on the other. That is the floor under the endpoint's in-endpoint
 * latency on a veth pair: the kernel writes each received frame into the RX ring from the
 * sending core (veth delivers in the sender's softirq), and the endpoint's first read of
 * the frame pays at least this transfer before any of its own work.
 *
 *   xcore [--cpus A,B] [--rounds N] [--repeat R] [--json]
 *
 * Prints the median over R runs of N round trips each (defaults: CPUs 0,1; 200000; 5) in
 * TSC cycles and ns, after 1000 untimed round trips. Bounded: every wait gives up after
 * 1 s without progress (exit 1).
 */
#include "cli/cli.h"
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "secho/cpu.h"
#include "secho/tsc.h"

static const char usage[] =
        "usage: xcore [--cpus A,B] [--rounds N] [--repeat R] [--json]\n"
        "\n"
        "One cache line passed back and forth between a thread on CPU A and one on CPU B;\n"
        "prints the one-way transfer cost (half a round trip), median of R runs of N\n"
        "round trips, in TSC cycles and ns.\n"
        "\n"
        "  --cpus A,B    the two CPUs (default 0,1)\n"
        "  --rounds N    round trips per run (default 200000, 1..100000000)\n"
        "  --repeat R    runs, median kept (default 5, 1..99)\n"
        "  --json        one JSON object instead of the text line\n"
        "  -h, --help    this text\n";

static struct {
	alignas(64) volatile uint64_t v;
	char pad[56];
} line;

#define WARMUP 1000 /* untimed round trips first: both threads running, the line hot */

static uint64_t rounds;
static volatile int failed, pin_failed;
static uint64_t spin_limit; /* TSC cycles without progress before giving up */

/* Pin the calling thread (src/sys/cpu.c). 0 or -errno. */
static int pin(int cpu)
{
	return cpu < 0 ? -EINVAL : secho_cpu_pin(pthread_self(), (unsigned)cpu);
}

/* Wait until the line holds want; false after spin_limit cycles without it. */
static int wait_for(uint64_t want)
{
	uint64_t t0 = secho_rdtsc();
	while (line.v != want) {
		if (failed)
			return 0;
		if (secho_rdtsc() - t0 > spin_limit) {
			failed = 1;
			return 0;
		}
		__builtin_ia32_pause();
	}
	return 1;
}

static void *echo_thread(void *arg)
{
	if (pin(*(int *)arg) != 0) {
		pin_failed = failed = 1;
		return NULL;
	}
	for (uint64_t i = 1; i < 2 * (rounds + WARMUP); i += 2) {
		if (!wait_for(i))
			return NULL;
		line.v = i + 1;
	}
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int cpus[2] = {0, 1}, json = 0;
	uint64_t repeat = 5;
	rounds = 200000;
	static const struct option lo[] = {
	        {"cpus", required_argument, NULL, 'c'},   {"rounds", required_argument, NULL, 'n'},
	        {"repeat", required_argument, NULL, 'r'}, {"json", no_argument, NULL, 'j'},
	        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
	for (int c; (c = getopt_long(argc, argv, "h", lo, NULL)) != -1;) {
		switch (c) {
		case 'c': {
			char items[2][CLI_ITEM_MAX];
			const char *why;
			uint64_t a = 0, b = 0;
			if (cli_parse_list(optarg, items, 2, &why) != 2 ||
			    !cli_parse_u64(items[0], 0, CPU_SETSIZE - 1, &a) ||
			    !cli_parse_u64(items[1], 0, CPU_SETSIZE - 1, &b) || a == b) {
				fprintf(stderr,
				        "xcore: --cpus wants two different CPU numbers A,B\n");
				return 2;
			}
			cpus[0] = (int)a;
			cpus[1] = (int)b;
			break;
		}
		case 'n':
			if (!cli_parse_u64(optarg, 1, 100000000, &rounds)) {
				fprintf(stderr, "xcore: --rounds wants 1..100000000\n");
				return 2;
			}
			break;
		case 'r':
			if (!cli_parse_u64(optarg, 1, 99, &repeat)) {
				fprintf(stderr, "xcore: --repeat wants 1..99\n");
				return 2;
			}
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "xcore: unexpected argument %s (see --help)\n", argv[optind]);
		return 2;
	}
	double hz = secho_tsc_hz();
	spin_limit = (uint64_t)hz; /* 1 s */
	if (pin(cpus[0]) != 0) {
		fprintf(stderr, "xcore: cannot run on CPU %d\n", cpus[0]);
		return 2;
	}
	double one_way[99] = {0};
	for (uint64_t r = 0; r < repeat; r++) {
		pthread_t t;
		line.v = 0;
		int e = pthread_create(&t, NULL, echo_thread, &cpus[1]);
		if (e) {
			fprintf(stderr, "xcore: pthread_create: %s\n", strerror(e));
			return 1;
		}
		uint64_t t0 = 0;
		for (uint64_t i = 0; i < 2 * (rounds + WARMUP) && !failed; i += 2) {
			if (i == 2 * WARMUP)
				t0 = secho_rdtsc();
			line.v = i + 1;
			if (!wait_for(i + 2))
				break;
		}
		uint64_t t1 = secho_rdtsc();
		pthread_join(t, NULL);
		if (pin_failed) {
			fprintf(stderr, "xcore: cannot run on CPU %d\n", cpus[1]);
			return 2;
		}
		if (failed) {
			fprintf(stderr, "xcore: no progress for 1 s (is CPU %d available?)\n",
			        cpus[1]);
			return 1;
		}
		one_way[r] = (double)(t1 - t0) / (double)rounds / 2;
	}
	qsort(one_way, repeat, sizeof(one_way[0]), cmp_double);
	double med = one_way[repeat / 2], lo_v = one_way[0], hi_v = one_way[repeat - 1];
	if (json)
		printf("{\"cpus\":[%d,%d],\"one_way_cycles\":%.1f,\"one_way_ns\":%.1f,"
		       "\"min_cycles\":%.1f,\"max_cycles\":%.1f,\"tsc_hz\":%.0f}\n",
		       cpus[0], cpus[1], med, med / hz * 1e9, lo_v, hi_v, hz);
	else
		printf("xcore: CPU %d <-> %d: one cache-line transfer %.0f TSC cycles (%.0f ns), "
		       "median of %u runs (%.0f..%.0f)\n",
		       cpus[0], cpus[1], med, med / hz * 1e9, (unsigned)repeat, lo_v, hi_v);
	return 0;
}
