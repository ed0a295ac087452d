/*
 * bench/flow_hash.c - the three flow key hashes the table can use (src/flow/core/hash.h),
 * measured the way the table uses them: the key put in canonical order (biflows), then
 * hashed; the high 32 bits pick one of the buckets, the low 32 are the signature.
 *
 *   flow_hash [--keys N] [--repeat R] [--json]
 *
 * For each hash: TSC cycles per key (median of R runs of N hashes over 1024 keys that
 * stay in cache), and how evenly realistic keys spread over the 8-entry buckets of a table of N
 * entries holding N/2 of them (half full): the largest bucket, and how many keys land in
 * a bucket that already holds 8 (those would evict a flow). Three key sets: random IPv4,
 * IPv4 with one client address and sequential source ports (a scan, or NAT), and IPv6
 * with addresses that differ in one byte.
 */
#include "cli/cli.h"
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow/core/hash.h"
#include "secho/tsc.h"

static const char usage[] =
        "usage: flow_hash [--keys N] [--repeat R] [--json]\n"
        "\n"
        "TSC cycles per flow key (canonical order + hash) for xxh3, crc32c and toeplitz, and\n"
        "how evenly each spreads realistic keys over a half-full table's 8-entry buckets.\n"
        "\n"
        "  --keys N      keys per set (default 1000000, 1000..100000000)\n"
        "  --repeat R    timed runs, median kept (default 7, 1..99)\n"
        "  --json        one JSON object per hash instead of the table\n"
        "  -h, --help    this text\n";

static uint64_t rng = 88172645463325252ull;
static uint64_t xr(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void set_keys(struct secho_flow_key *k, size_t n, int set)
{
	for (size_t i = 0; i < n; i++) {
		memset(&k[i], 0, sizeof(k[i]));
		uint64_t r = xr();
		switch (set) {
		case 0: /* random IPv4 TCP/UDP */
			k[i].ip_version = 4;
			k[i].proto = (r & 1) ? 6 : 17;
			memcpy(k[i].src, &r, 4);
			r = xr();
			memcpy(k[i].dst, &r, 4);
			k[i].sport = (uint16_t)(r >> 32);
			k[i].dport = (uint16_t)(r >> 48);
			break;
		case 1: /* one client, sequential source ports, a few servers */
			k[i].ip_version = 4;
			k[i].proto = 6;
			k[i].src[0] = 198, k[i].src[1] = 18, k[i].src[3] = 1;
			k[i].dst[0] = 198, k[i].dst[1] = 19, k[i].dst[3] = (uint8_t)(i >> 16);
			k[i].sport = (uint16_t)(1024 + (i & 0xffff));
			k[i].dport = 443;
			break;
		default: /* IPv6 addresses differing in one byte */
			k[i].ip_version = 6;
			k[i].proto = 17;
			k[i].src[0] = 0x20, k[i].src[1] = 0x01, k[i].src[2] = 0x0d,
			k[i].src[3] = 0xb8;
			memcpy(k[i].dst, k[i].src, 16);
			k[i].src[15] = (uint8_t)i;
			k[i].dst[14] = (uint8_t)(i >> 8);
			k[i].dst[15] = (uint8_t)(i >> 16);
			k[i].sport = 53;
			k[i].dport = (uint16_t)(1024 + (i >> 24));
			break;
		}
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static volatile uint64_t sink;

#define HOT_KEYS 1024u /* 44 KiB of keys: in L1/L2 while timed */

int main(int argc, char **argv)
{
	uint64_t nkeys = 1000000, repeat = 7;
	int json = 0;
	static const struct option lo[] = {{"keys", required_argument, NULL, 'n'},
	                                   {"repeat", required_argument, NULL, 'r'},
	                                   {"json", no_argument, NULL, 'j'},
	                                   {"help", no_argument, NULL, 'h'},
	                                   {NULL, 0, NULL, 0}};
	for (int c; (c = getopt_long(argc, argv, "h", lo, NULL)) != -1;) {
		switch (c) {
		case 'n':
			if (!cli_parse_u64(optarg, 1000, 100000000, &nkeys)) {
				fprintf(stderr, "flow_hash: --keys wants 1000..100000000\n");
				return 2;
			}
			break;
		case 'r':
			if (!cli_parse_u64(optarg, 1, 99, &repeat)) {
				fprintf(stderr, "flow_hash: --repeat wants 1..99\n");
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
		fprintf(stderr, "flow_hash: unexpected argument %s (see --help)\n", argv[optind]);
		return 2;
	}
	struct secho_flow_key *keys = malloc(nkeys * sizeof(*keys));
	uint32_t nb = (uint32_t)(nkeys / 8); /* nkeys entries, nkeys / 2 keys: half full */
	uint8_t *load = malloc(nb);
	static struct secho_flow_hasher h;
	if (!keys || !load) {
		fprintf(stderr, "flow_hash: out of memory\n");
		free(keys);
		free(load);
		return 1;
	}
	if (!json)
		printf("flow key hashes, %llu keys per set, table of %u buckets x 8 (half full)\n"
		       "%-9s %9s   %-26s %-26s %-26s\n",
		       (unsigned long long)nkeys, nb, "hash", "cycles", "random IPv4: max/over",
		       "scan IPv4: max/over", "IPv6: max/over");
	for (int kind = 0; kind < SECHO_FLOW_HASH_COUNT; kind++) {
		if (secho_flow_hasher_init(&h, (enum secho_flow_hash_kind)kind, xr()) != 0) {
			printf("%-9s unavailable on this CPU\n",
			       secho_flow_hash_name((enum secho_flow_hash_kind)kind));
			continue;
		}
		double cyc[99] = {0};
		unsigned maxload[3], over[3];
		/* timed on the first HOT_KEYS keys over and over: what hashing costs, not
		 * what fetching a key from memory costs */
		set_keys(keys, nkeys, 0);
		for (uint64_t r = 0; r < repeat; r++) {
			uint64_t acc = 0, t0 = secho_tsc_begin();
			for (uint64_t i = 0; i < nkeys; i++) {
				struct secho_flow_key c;
				secho_flow_key_canon(&keys[i & (HOT_KEYS - 1)], &c);
				acc += secho_flow_hash(&h, &c);
			}
			uint64_t t1 = secho_tsc_end();
			sink = acc;
			cyc[r] = (double)(t1 - t0) / (double)nkeys;
		}
		qsort(cyc, repeat, sizeof(cyc[0]), cmp_double);
		for (int set = 0; set < 3; set++) {
			set_keys(keys, nkeys, set);
			memset(load, 0, nb);
			maxload[set] = over[set] = 0;
			for (uint64_t i = 0; i < nkeys / 2; i++) {
				struct secho_flow_key c;
				secho_flow_key_canon(&keys[i], &c);
				uint64_t v = secho_flow_hash(&h, &c);
				uint32_t b = (uint32_t)(((v >> 32) * nb) >> 32);
				if (load[b] >= 8)
					over[set]++;
				if (load[b] < 255)
					load[b]++;
				if (load[b] > maxload[set])
					maxload[set] = load[b];
			}
		}
		const char *name = secho_flow_hash_name((enum secho_flow_hash_kind)kind);
		if (json) {
			printf("{\"hash\":\"%s\",\"cycles_per_key\":%.1f,\"keys\":%llu,\"buckets\":"
			       "%u,"
			       "\"max_random\":%u,\"over_random\":%u,\"max_scan\":%u,\"over_scan\":"
			       "%u,"
			       "\"max_ipv6\":%u,\"over_ipv6\":%u}\n",
			       name, cyc[repeat / 2], (unsigned long long)nkeys, nb, maxload[0],
			       over[0], maxload[1], over[1], maxload[2], over[2]);
		} else {
			char a[3][32];
			for (int s = 0; s < 3; s++)
				snprintf(a[s], sizeof(a[s]), "%u / %u", maxload[s], over[s]);
			printf("%-9s %9.1f   %-26s %-26s %-26s\n", name, cyc[repeat / 2], a[0],
			       a[1], a[2]);
		}
	}
	free(keys);
	free(load);
	return 0;
}
