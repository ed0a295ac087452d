/*
 * bench/offload_ops.c - what the XDP offload tier's map operations cost from user space
 * (src/flow/offload/offload.h): open (load, preallocate, attach native), insert, a whole-map batch
 * read, detach with the wait for running programs, remove.
 *
 *   offload_ops [FLOWS [MAP_SIZE [RUNS]]]     (defaults 100000, 1048576, 5)
 *
 * Runs in a network namespace of its own (unshare; needs root) on a veth pair it creates
 * there; nothing is sent. One line per run. Run it under `flock /tmp/secho-bench.lock`.
 */
#include "cli/cli.h"
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flow/offload/offload.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void key_of(uint32_t i, struct secho_flow_key *k)
{
	memset(k, 0, sizeof(*k));
	k->ip_version = 4;
	k->proto = 6;
	k->sport = (uint16_t)i;
	k->dport = (uint16_t)(i >> 16);
}

int main(int argc, char **argv)
{
	uint64_t flows = 100000, size = 1u << 20, runs = 5;

	if ((argc > 1 && !cli_parse_u64(argv[1], 1, SECHO_OFFLOAD_FLOWS_MAX, &flows)) ||
	    (argc > 2 && !cli_parse_u64(argv[2], 1, SECHO_OFFLOAD_FLOWS_MAX, &size)) ||
	    (argc > 3 && !cli_parse_u64(argv[3], 1, 100, &runs)) || argc > 4 || flows > size) {
		fprintf(stderr,
		        "usage: offload_ops [FLOWS [MAP_SIZE [RUNS]]] (FLOWS <= MAP_SIZE)\n");
		return 2;
	}
	if (unshare(CLONE_NEWNET)) {
		perror("offload_ops: unshare (needs root)");
		return 1;
	}
	if (system("ip link add b0 type veth peer name b1 && ip link set b0 up && "
	           "ip link set b1 up")) {
		fprintf(stderr, "offload_ops: could not create the veth pair\n");
		return 1;
	}
	printf("# %lu flows in a map of %lu; times per operation\n", flows, size);
	for (unsigned long run = 0; run < runs; run++) {
		struct secho_flow_offload *o;
		struct secho_flow_offload_cfg cfg = {
		        .ifname = "b1", .mode = SECHO_IO_XDP_NATIVE, .flows = (uint32_t)size};
		struct secho_flow_offload_counts c;
		struct secho_flow_key k;
		char err[300];
		double t0 = now();
		int r = secho_flow_offload_open(&o, &cfg, err, sizeof(err));
		double t1 = now();
		if (r) {
			fprintf(stderr, "offload_ops: %s\n", err);
			return 1;
		}
		for (uint32_t i = 0; i < flows; i++) {
			key_of(i, &k);
			if (secho_flow_offload_insert(o, &k)) {
				fprintf(stderr, "offload_ops: insert %u failed\n", i);
				return 1;
			}
		}
		double t2 = now();
		long n = secho_flow_offload_scan(o, NULL, NULL);
		double t3 = now();
		secho_flow_offload_detach(o);
		double t4 = now();
		for (uint32_t i = 0; i < flows; i++) {
			key_of(i, &k);
			secho_flow_offload_remove(o, &k, &c);
		}
		double t5 = now();
		secho_flow_offload_close(o);
		printf("open %.0f ms  insert %.2f us  scan %ld in %.1f ms (%.0f ns a flow)  "
		       "detach+wait %.1f ms  remove %.2f us\n",
		       (t1 - t0) * 1e3, (t2 - t1) * 1e6 / (double)flows, n, (t3 - t2) * 1e3,
		       n > 0 ? (t3 - t2) * 1e9 / (double)n : 0.0, (t4 - t3) * 1e3,
		       (t5 - t4) * 1e6 / (double)flows);
	}
	return 0;
}
