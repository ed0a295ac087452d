/*
 * src/cli/flow.c - `secho flow`: flow metering (docs/FLOW.md).
 *
 *   secho flow gen --profile NAME|FILE.csv [--packets N] [--seed S] -o OUT.pcap
 *
 * `secho flow gen` writes a seeded capture and its ground truth (src/flow/gen.h). Without
 * a subcommand, `secho flow` prints its usage and exits 2.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "flow/gen.h"

static void flow_usage(FILE *f)
{
	fprintf(f, "usage: secho flow gen --profile NAME|FILE.csv [--packets N] [--seed S] -o "
	           "OUT.pcap\n"
	           "       secho flow replay --iface IF --pcap FILE [--pps N] [--seconds S] ...\n"
	           "\n"
	           "Flow metering (docs/FLOW.md).\n"
	           "\n"
	           "  gen      write a seeded capture and its ground truth (secho flow gen "
	           "--help)\n"
	           "  replay   send a capture onto an interface (secho flow replay --help)\n");
}

static void gen_usage(FILE *f)
{
	fprintf(f, "usage: secho flow gen --profile NAME|FILE.csv [--packets N] [--seed S] -o "
	           "OUT.pcap\n"
	           "\n"
	           "Write a seeded capture (classic pcap, microsecond timestamps, Ethernet) and\n"
	           "its ground truth OUT.pcap.truth.csv: one line per unidirectional flow, as a\n"
	           "flow meter with the default timeouts (inactive 30 s, active 300 s) must\n"
	           "report it, then '# key=value' totals. The same arguments always give the\n"
	           "same bytes. Addresses are 198.18.0.0/15 and 2001:db8::/32 unless a profile\n"
	           "file gives its own; docs/FLOW.md describes the format.\n"
	           "\n"
	           "  -p, --profile NAME   built-in profile (below) or a FlowTest ft-generator\n"
	           "                       profile FILE.csv (one biflow per row)\n"
	           "  -n, --packets N      packets to generate (statistical profiles: exactly N;\n"
	           "                       conformance: rounds of every case until at least N;\n"
	           "                       a CSV profile: rows until at least N; default below)\n"
	           "  -s, --seed S         seed (default 1)\n"
	           "  -o, --out FILE       the capture to write (FILE.truth.csv beside it)\n"
	           "  -q, --quiet          no summary on stdout\n"
	           "  -h, --help           this text\n"
	           "\n"
	           "Profiles:\n");
	for (size_t i = 0; i < secho_gen_nprofiles; i++) {
		const struct secho_gen_profile_info *p = &secho_gen_profiles[i];
		char def[32] = "one round";
		if (p->default_packets)
			snprintf(def, sizeof(def), "%" PRIu64, p->default_packets);
		fprintf(f, "  %-12s %s (default: %s)\n", p->name, p->help, def);
	}
	fprintf(f, "  FILE.csv     every row of the file (default: all)\n");
}

static int cmd_flow_gen(int argc, char *argv[])
{
	static const struct option opts[] = {
	        {"profile", required_argument, NULL, 'p'},
	        {"packets", required_argument, NULL, 'n'},
	        {"seed", required_argument, NULL, 's'},
	        {"out", required_argument, NULL, 'o'},
	        {"quiet", no_argument, NULL, 'q'},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	const char *cmd = "flow gen";
	struct secho_gen_cfg cfg = {.seed = 1};
	const char *out = NULL;
	bool quiet = false;
	int c;

	cli_getopt_reset();
	while ((c = getopt_long(argc, argv, ":p:n:s:o:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			cfg.profile = optarg;
			break;
		case 'n':
			if (!cli_parse_u64(optarg, 1, UINT64_C(1) << 40, &cfg.packets))
				return cli_usage_err(cmd, "--packets '%s' is not a count (1..2^40)",
				                     optarg);
			break;
		case 's':
			if (!cli_parse_u64(optarg, 0, UINT64_MAX, &cfg.seed))
				return cli_usage_err(cmd, "--seed '%s' is not a number", optarg);
			break;
		case 'o':
			out = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			gen_usage(stdout);
			return CLI_OK;
		default:
			return cli_bad_option(cmd, c, argv);
		}
	}
	if (optind < argc)
		return cli_usage_err(cmd, "unexpected argument '%s'", argv[optind]);
	if (!cfg.profile)
		return cli_usage_err(cmd, "--profile is required (see secho flow gen --help)");
	if (!out || !*out)
		return cli_usage_err(cmd, "-o OUT.pcap is required (see secho flow gen --help)");

	size_t tl = strlen(out) + sizeof(".truth.csv");
	char *truth = malloc(tl);
	if (!truth)
		return cli_err(cmd, "out of memory");
	snprintf(truth, tl, "%s.truth.csv", out);
	char err[512];
	struct secho_gen_totals t;
	double t0 = cli_now();
	int rc = secho_gen_write(&cfg, out, truth, &t, err, sizeof(err));
	double dt = cli_now() - t0;
	if (rc) {
		free(truth);
		/* A bad profile (unknown name, bad CSV row) is a bad argument. */
		return rc == -EINVAL ? cli_usage_err(cmd, "%s", err) : cli_err(cmd, "%s", err);
	}
	if (!quiet)
		printf("wrote %s: %" PRIu64 " packets, %" PRIu64 " flows (%" PRIu64
		       " connections), %" PRIu64 " ignored (malformed %" PRIu64 ", non-IP %" PRIu64
		       ", orphan fragments %" PRIu64 "), mean IP length %.1f B, %.2f s\n"
		       "wrote %s\n",
		       out, t.packets, t.flows, t.connections,
		       t.malformed + t.non_ip + t.orphan_fragments, t.malformed, t.non_ip,
		       t.orphan_fragments,
		       t.flow_packets ? (double)t.flow_octets / (double)t.flow_packets : 0.0, dt,
		       truth);
	free(truth);
	return CLI_OK;
}

int cmd_flow(int argc, char *argv[])
{
	if (argc >= 2 && !strcmp(argv[1], "gen"))
		return cmd_flow_gen(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "replay"))
		return cmd_flow_replay(argc - 1, argv + 1);
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		flow_usage(stdout);
		return CLI_OK;
	}
	if (argc < 2) {
		flow_usage(stderr);
		return CLI_USAGE;
	}
	return cli_usage_err("flow", "unknown subcommand or option '%s' (see secho flow --help)",
	                     argv[1]);
}
