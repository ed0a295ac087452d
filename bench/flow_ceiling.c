/*
 * bench/flow_ceiling.c - how far the flow meter is from what the machine can do on a
 * capture file: three walks of the same file (in the page cache), in one process,
 * alternating round by round so that a drifting machine affects all three alike.
 *
 *   flow_ceiling --pcap FILE [--pcap FILE ...] [--rounds R] [--flows N] [--json]
 *
 *   reader   the reader secho uses (include/secho/capfile.h: the file mapped, records in
 *            place, pages dropped behind the cursor) and src/wire's dissector on every
 *            frame: the ceiling of anything that looks at each packet's headers
 *   bare     the same, plus each IP packet's flow key (src/flow/core/key.h, canonical
 *            order) hashed with the table's hash (XXH3) into a bare open-addressing table
 *            (linear probing, 2N slots of key + packets + octets, no timeouts, no records,
 *            no export): the ceiling of a flow table
 *   secho    the meter itself (src/flow/meter/meter.h): one worker, no sinks, N flows
 *            (default 1048576, `secho flow`'s), records made and discarded
 *
 * Per file: the median packets per second of each over R rounds (default 5), and secho's
 * as a share of the reader's and of the bare table's. The bare table's flows (distinct
 * keys) are printed beside, as a check that it saw what secho saw. Pin it to one CPU
 * (taskset -c 0) and run it under `flock /tmp/secho-bench.lock`.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cli/cli.h"
#include "flow/core/hash.h"
#include "flow/core/key.h"
#include "flow/meter/meter.h"
#include "secho/capfile.h"
#include "secho/dissect.h"
#include "sys/clock.h"

static const char usage[] =
        "usage: flow_ceiling --pcap FILE [--pcap FILE ...] [--rounds R] [--flows N] [--json]\n"
        "\n"
        "Packets per second of three walks of each capture, alternating: the reader secho\n"
        "uses with the dissector (reader), plus a bare hash table of flows (bare), and the\n"
        "flow meter itself with one worker and no export (secho); secho's share of each.\n"
        "\n"
        "  --pcap FILE   a capture (pcap or pcapng); up to 16\n"
        "  --rounds R    rounds, the median kept (default 5, 1..99)\n"
        "  --flows N     secho's flow table entries (default 1048576, 8..1073741824)\n"
        "  --json        one JSON object per file instead of the table\n"
        "  -h, --help    this text\n";

#define MAX_FILES 16

/* ---- reader ---- */

/* Walk the file, dissecting every frame; *sink keeps the compiler from dropping the work.
 * Returns the frames read, or 0 with err. */
static uint64_t walk(const char *path, uint64_t *sink, char *err, size_t errlen)
{
	struct secho_capfile cf;
	struct secho_cap_rec r;
	uint64_t n = 0, acc = 0;

	memset(&cf, 0, sizeof(cf));
	if (secho_capfile_open(&cf, path, err, errlen))
		return 0;
	while (secho_capfile_next(&cf, &r) == 1) {
		struct secho_dissect d;
		enum secho_dissect_reason why = secho_dissect_snap(r.data, r.caplen, r.wirelen, &d);
		acc += (uint64_t)why + d.ip_len + d.sport + d.proto;
		n++;
	}
	secho_capfile_close(&cf);
	*sink += acc;
	return n;
}

/* ---- bare table ---- */

struct bare_slot {
	struct secho_flow_key key;
	uint32_t used;
	uint64_t packets, octets;
};

struct bare {
	struct bare_slot *s;
	size_t mask, flows;
	struct secho_flow_hasher h;
};

static int bare_init(struct bare *b, size_t flows)
{
	size_t n = 1;
	while (n < 2 * flows)
		n <<= 1;
	b->s = mmap(NULL, n * sizeof(*b->s), PROT_READ | PROT_WRITE,
	            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (b->s == MAP_FAILED)
		return -ENOMEM;
	/* huge pages where the kernel gives them: a TLB miss per packet is not the ceiling */
	(void)madvise(b->s, n * sizeof(*b->s), MADV_HUGEPAGE);
	b->mask = n - 1;
	b->flows = 0;
	return secho_flow_hasher_init(&b->h, SECHO_FLOW_HASH_XXH3, 0x5eed);
}

static void bare_free(struct bare *b)
{
	munmap(b->s, (b->mask + 1) * sizeof(*b->s));
}

static void bare_count(struct bare *b, const struct secho_flow_key *k, uint32_t octets)
{
	size_t i = (size_t)secho_flow_hash(&b->h, k) & b->mask;

	for (;;) {
		struct bare_slot *s = &b->s[i];
		if (!s->used) {
			if (b->flows > b->mask / 2 + b->mask / 4)
				return; /* 3/4 full: count no new flow (never reached at --flows) */
			s->key = *k;
			s->used = 1;
			b->flows++;
		}
		if (!memcmp(&s->key, k, sizeof(*k))) {
			s->packets++;
			s->octets += octets;
			return;
		}
		i = (i + 1) & b->mask;
	}
}

static uint64_t walk_bare(const char *path, size_t flows, uint64_t *nflows, char *err,
                          size_t errlen)
{
	struct secho_capfile cf;
	struct secho_cap_rec r;
	struct bare b;
	uint64_t n = 0;

	if (bare_init(&b, flows)) {
		snprintf(err, errlen, "bare table: out of memory");
		return 0;
	}
	memset(&cf, 0, sizeof(cf));
	if (secho_capfile_open(&cf, path, err, errlen)) {
		bare_free(&b);
		return 0;
	}
	while (secho_capfile_next(&cf, &r) == 1) {
		struct secho_dissect d;
		n++;
		if (secho_dissect_snap(r.data, r.caplen, r.wirelen, &d) != SECHO_DISSECT_OK ||
		    !d.ip_version)
			continue;
		struct secho_flow_key k, ck;
		secho_flow_key_from(r.data, &d, &k);
		secho_flow_key_canon(&k, &ck);
		bare_count(&b, &ck, d.ip_len);
	}
	secho_capfile_close(&cf);
	*nflows = b.flows;
	bare_free(&b);
	return n;
}

/* ---- secho ---- */

static uint64_t walk_secho(const char *path, uint32_t flows, double *elapsed, char *err,
                           size_t errlen)
{
	struct secho_flow_meter_cfg cfg;
	struct secho_flow_meter_result res;

	memset(&cfg, 0, sizeof(cfg));
	cfg.table.flows = flows;
	cfg.workers = 1;
	cfg.pcap = path;
	cfg.quiet = true;
	if (secho_flow_meter_run(&cfg, &res, err, errlen))
		return 0;
	if (res.input_error[0]) {
		snprintf(err, errlen, "%s", res.input_error);
		return 0;
	}
	*elapsed = res.elapsed_s;
	return res.frames_read;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	const char *files[MAX_FILES];
	unsigned nfiles = 0, rounds = 5;
	uint32_t flows = 1048576;
	bool json = false;
	static const struct option opts[] = {
	        {"pcap", required_argument, NULL, 'p'},  {"rounds", required_argument, NULL, 'r'},
	        {"flows", required_argument, NULL, 'f'}, {"json", no_argument, NULL, 'j'},
	        {"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0}};
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (nfiles == MAX_FILES)
				return cli_usage_err("flow_ceiling", "at most %d --pcap",
				                     MAX_FILES);
			files[nfiles++] = optarg;
			break;
		case 'r': {
			uint64_t v;
			if (!cli_parse_u64(optarg, 1, 99, &v))
				return cli_usage_err("flow_ceiling", "--rounds: '%s' is not 1-99",
				                     optarg);
			rounds = (unsigned)v;
			break;
		}
		case 'f': {
			uint64_t f;
			if (!cli_parse_u64(optarg, 8, SECHO_FLOW_MAX_FLOWS, &f))
				return cli_usage_err("flow_ceiling", "--flows: '%s' is not 8-%u",
				                     optarg, SECHO_FLOW_MAX_FLOWS);
			flows = (uint32_t)f;
			break;
		}
		case 'j':
			json = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind < argc)
		return cli_usage_err("flow_ceiling", "unexpected argument '%s'", argv[optind]);
	if (!nfiles)
		return cli_usage_err("flow_ceiling", "--pcap FILE is required");

	if (!json)
		printf("%-28s %12s %12s %12s %8s %8s %10s\n", "capture", "reader pps", "bare pps",
		       "secho pps", "/reader", "/bare", "bare flows");
	for (unsigned fi = 0; fi < nfiles; fi++) {
		double rd[99] = {0}, br[99] = {0}, se[99] = {0};
		uint64_t frames = 0, nflows = 0, sink = 0;
		char err[256];
		for (unsigned r = 0; r < rounds; r++) {
			double t0 = secho_mono_s();
			uint64_t n = walk(files[fi], &sink, err, sizeof(err));
			double t1 = secho_mono_s();
			uint64_t nb = walk_bare(files[fi], flows, &nflows, err, sizeof(err));
			double t2 = secho_mono_s(), el = 0;
			uint64_t ns =
			        n && nb ? walk_secho(files[fi], flows, &el, err, sizeof(err)) : 0;
			if (!n || !nb || !ns || n != nb || n != ns) {
				fprintf(stderr, "flow_ceiling: %s: %s\n", files[fi],
				        n && nb && ns ? "the walks read different frame counts"
				                      : err);
				return 1;
			}
			frames = n;
			rd[r] = (double)n / (t1 - t0);
			br[r] = (double)n / (t2 - t1);
			se[r] = (double)n / el;
		}
		double mr = median(rd, rounds), mb = median(br, rounds), ms = median(se, rounds);
		if (json)
			printf("{\"capture\":\"%s\",\"frames\":%" PRIu64
			       ",\"rounds\":%u,\"reader_pps\":%.0f,\"bare_pps\":%.0f,\"secho_pps\":"
			       "%.0f,"
			       "\"secho_of_reader\":%.3f,\"secho_of_bare\":%.3f,\"bare_flows\":"
			       "%" PRIu64 ",\"check\":%" PRIu64 "}\n",
			       files[fi], frames, rounds, mr, mb, ms, ms / mr, ms / mb, nflows,
			       sink & 1);
		else
			printf("%-28s %12.0f %12.0f %12.0f %7.0f%% %7.0f%% %10" PRIu64 "\n",
			       files[fi], mr, mb, ms, 100 * ms / mr, 100 * ms / mb, nflows);
		fflush(stdout);
	}
	return 0;
}
