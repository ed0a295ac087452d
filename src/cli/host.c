/*
 * src/cli/host.c - `secho host paired|counters|load`: option parsing only; the runs are
 * in src/host/ (include/secho/host.h). Exit status: 0 all verified, 1 a verification
 * failure or losses above --max-loss, 2 bad usage or setup error.
 */
#include "cli/host.h"
#include "cli/cli.h"
#include "secho/host.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

enum {
	O_KEY = 256,
	O_IFACE,
	O_DST_MAC,
	O_SRC_IP,
	O_DST_IP,
	O_ANY,
	O_PS,
	O_PO,
	O_PC,
	O_COUNT,
	O_SIZE,
	O_MTU,
	O_TIMEOUT,
	O_DEADLINE,
	O_MAXLOSS,
	O_JSON,
	O_SECONDS,
	O_RATE,
	O_PATH,
	O_WINDOW,
	O_SEED,
	O_QUIET,
	O_SEQLOG,
	O_HELP
};

static const struct option longopts[] = {
        {"key", required_argument, NULL, O_KEY},
        {"iface", required_argument, NULL, O_IFACE},
        {"dst-mac", required_argument, NULL, O_DST_MAC},
        {"src-ip", required_argument, NULL, O_SRC_IP},
        {"dst-ip", required_argument, NULL, O_DST_IP},
        {"allow-any-dst", no_argument, NULL, O_ANY},
        {"port-stream", required_argument, NULL, O_PS},
        {"port-offload", required_argument, NULL, O_PO},
        {"port-counters", required_argument, NULL, O_PC},
        {"count", required_argument, NULL, O_COUNT},
        {"size", required_argument, NULL, O_SIZE},
        {"mtu", required_argument, NULL, O_MTU},
        {"timeout", required_argument, NULL, O_TIMEOUT},
        {"deadline", required_argument, NULL, O_DEADLINE},
        {"max-loss", required_argument, NULL, O_MAXLOSS},
        {"json", no_argument, NULL, O_JSON},
        {"seconds", required_argument, NULL, O_SECONDS},
        {"rate", required_argument, NULL, O_RATE},
        {"path", required_argument, NULL, O_PATH},
        {"window", required_argument, NULL, O_WINDOW},
        {"seed", required_argument, NULL, O_SEED},
        {"quiet", no_argument, NULL, O_QUIET},
        {"seq-log", required_argument, NULL, O_SEQLOG},
        {"help", no_argument, NULL, O_HELP},
        {NULL, 0, NULL, 0},
};

static const char common_help[] =
        "  --key FILE            key file (secho keygen; must be mode 0600)\n"
        "  --dst-ip IP           endpoint address (default 192.0.2.2)\n"
        "  --src-ip IP           our address (socket mode: bind; raw mode: default the\n"
        "                        interface's, else 192.0.2.1)\n"
        "  --iface IF --dst-mac MAC\n"
        "                        raw mode: build frames ourselves on AF_PACKET (no ARP) and\n"
        "                        verify every Ethernet/IPv4/UDP field; without it the kernel\n"
        "                        UDP socket is used and only the secure part, source IP and\n"
        "                        ports can be checked\n"
        "  --allow-any-dst       permit a destination outside 192.0.2.0/24 and 127.0.0.0/8\n"
        "                        (only for a real lab network you own)\n"
        "  --port-stream N --port-offload N --port-counters N   (4000, 4001, 4002)\n"
        "  --timeout MS          per-packet answer timeout (default 200)\n"
        "  --json                machine-readable output\n"
        "  --seq-log FILE        append every sequence number seen to FILE (one per line),\n"
        "                        to check uniqueness across runs and endpoint restarts\n";

static void usage(const char *sub, FILE *f)
{
	if (!sub || !strcmp(sub, "host")) {
		fprintf(f,
		        "Usage: secho host paired|counters|load [options]   (each takes --help)\n"
		        "  paired    alternate streaming/offload requests, verify each against an\n"
		        "            independent AES-256-GCM, then compare endpoint latencies\n"
		        "  counters  fetch, verify and print the endpoint's counters report\n"
		        "  load      sustained verified traffic, per-second rates per path\n");
		return;
	}
	if (!strcmp(sub, "paired"))
		fprintf(f,
		        "Usage: secho host paired --key FILE [options]\n"
		        "  --count N             packets per path (default 500)\n"
		        "  --size N              payload bytes, 0..MTU-60 (default random per "
		        "packet)\n"
		        "  --mtu N               576..9000 (default 1500)\n"
		        "  --max-loss N          losses tolerated before failing (default 0)\n"
		        "  --deadline S          bound on the whole run (default 120)\n"
		        "  --seed N              payload generator seed (default from the clock)\n"
		        "  --quiet               no progress on stderr\n");
	else if (!strcmp(sub, "counters"))
		fprintf(f, "Usage: secho host counters --key FILE [options]\n");
	else
		fprintf(f, "Usage: secho host load --key FILE [options]\n"
		           "  --seconds D           duration, 1..60 (default 5)\n"
		           "  --rate PPS            total offered packets per second (default flat "
		           "out)\n"
		           "  --path stream|offload|both   (default both)\n"
		           "  --size N --mtu N      as for paired\n"
		           "  --window N            outstanding requests at most (default 256)\n"
		           "  --max-loss N          losses tolerated before failing (default 0)\n");
	fputs(common_help, f);
}

static int bad(const char *sub, const char *opt, const char *val, const char *why)
{
	fprintf(stderr, "secho host %s: %s '%s': %s\n", sub, opt, val ? val : "", why);
	return 2;
}

/* The library's warnings and paired's progress (secho/host.h). */
static void host_warn(const char *msg)
{
	fprintf(stderr, "secho host: %s\n", msg);
}

static void host_progress(unsigned done, unsigned total)
{
	if (total)
		fprintf(stderr, "\r  %u/%u", done, total);
	else
		fprintf(stderr, "\r");
}

int cmd_host(int argc, char *argv[])
{
	struct secho_host_opts o;
	const char *sub;
	uint64_t v;
	int c;
	char **av;

	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage("host", argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	sub = argv[1];
	if (strcmp(sub, "paired") != 0 && strcmp(sub, "counters") != 0 &&
	    strcmp(sub, "load") != 0) {
		fprintf(stderr, "secho host: unknown subcommand '%s' (paired, counters, load)\n",
		        sub);
		return 2;
	}
	secho_host_opts_default(&o);
	av = argv + 1; /* av[0] = the subcommand, as getopt expects a program name */

	optind = 0; /* glibc: full re-initialisation */
	opterr = 0;
	while ((c = getopt_long(argc - 1, av, ":", longopts, NULL)) != -1) {
		const char *a = optarg;

		switch (c) {
		case O_HELP:
			usage(sub, stdout);
			return 0;
		case O_KEY:
			o.key_path = a;
			break;
		case O_IFACE:
			o.iface = a;
			break;
		case O_DST_MAC:
			if (!cli_parse_mac(a, o.dst_mac))
				return bad(sub, "--dst-mac", a,
				           "not a MAC address (aa:bb:cc:dd:ee:ff)");
			o.dst_mac_set = true;
			break;
		case O_SRC_IP:
			o.src_ip = a;
			break;
		case O_DST_IP:
			o.dst_ip = a;
			break;
		case O_ANY:
			o.allow_any_dst = true;
			break;
		case O_PS:
		case O_PO:
		case O_PC:
			if (!cli_parse_u64(a, 1, 65535, &v))
				return bad(sub, "port", a, "must be 1..65535");
			if (c == O_PS)
				o.port_stream = (uint16_t)v;
			else if (c == O_PO)
				o.port_offload = (uint16_t)v;
			else
				o.port_counters = (uint16_t)v;
			break;
		case O_COUNT:
			if (!cli_parse_u64(a, 1, 1000000, &v))
				return bad(sub, "--count", a, "must be 1..1000000");
			o.count = (unsigned)v;
			break;
		case O_SIZE:
			if (!strcmp(a, "random")) {
				o.size = -1;
				break;
			}
			if (!cli_parse_u64(a, 0, SECHO_HOST_MAX_PAYLOAD, &v))
				return bad(sub, "--size", a, "must be 0..MTU-60 or 'random'");
			o.size = (int)v;
			break;
		case O_MTU:
			if (!cli_parse_u64(a, SECHO_WIRE_MIN_MTU, SECHO_WIRE_MAX_MTU, &v))
				return bad(sub, "--mtu", a, "must be 576..9000");
			o.mtu = (unsigned)v;
			break;
		case O_TIMEOUT:
			if (!cli_parse_u64(a, 1, 10000, &v))
				return bad(sub, "--timeout", a, "must be 1..10000 ms");
			o.timeout_ms = (unsigned)v;
			break;
		case O_DEADLINE:
			if (!cli_parse_u64(a, 1, 3600, &v))
				return bad(sub, "--deadline", a, "must be 1..3600 s");
			o.deadline_s = (unsigned)v;
			break;
		case O_MAXLOSS:
			if (!cli_parse_u64(a, 0, UINT64_MAX, &v))
				return bad(sub, "--max-loss", a, "must be a count");
			o.max_loss = v;
			break;
		case O_JSON:
			o.json = true;
			break;
		case O_SEQLOG:
			o.seq_log = a;
			break;
		case O_QUIET:
			o.quiet = true;
			break;
		case O_SECONDS:
			if (!cli_parse_u64(a, 1, SECHO_HOST_MAX_SECONDS, &v))
				return bad(sub, "--seconds", a, "must be 1..60");
			o.seconds = (unsigned)v;
			break;
		case O_RATE:
			if (!cli_parse_u64(a, 0, 100000000, &v))
				return bad(sub, "--rate", a,
				           "must be packets per second (0: flat out)");
			o.rate = v;
			break;
		case O_PATH:
			if (!strcmp(a, "stream") || !strcmp(a, "streaming"))
				o.path = SECHO_PATH_STREAM;
			else if (!strcmp(a, "offload"))
				o.path = SECHO_PATH_OFFLOAD;
			else if (!strcmp(a, "both"))
				o.path = SECHO_PATH_BOTH;
			else
				return bad(sub, "--path", a, "must be stream, offload or both");
			break;
		case O_WINDOW:
			if (!cli_parse_u64(a, 1, 65536, &v))
				return bad(sub, "--window", a, "must be 1..65536");
			o.window = (unsigned)v;
			break;
		case O_SEED:
			if (!cli_parse_u64(a, 1, UINT64_MAX, &v))
				return bad(sub, "--seed", a, "must be a positive integer");
			o.seed = v;
			break;
		case ':':
			return bad(sub, "option", av[optind - 1], "needs a value");
		default:
			return bad(sub, "option", av[optind - 1], "unknown (see --help)");
		}
	}
	if (optind < argc - 1)
		return bad(sub, "argument", av[optind], "unexpected");
	if (!o.key_path) {
		fprintf(stderr, "secho host %s: --key FILE is required (see --help)\n", sub);
		return 2;
	}
	if (o.port_stream == o.port_offload || o.port_stream == o.port_counters ||
	    o.port_offload == o.port_counters) {
		fprintf(stderr,
		        "secho host %s: --port-stream %u, --port-offload %u and --port-counters %u "
		        "must be three different ports (each selects an engine)\n",
		        sub, o.port_stream, o.port_offload, o.port_counters);
		return 2;
	}
	if (o.iface && !o.dst_mac_set) {
		fprintf(stderr, "secho host %s: --iface needs --dst-mac (the endpoint's MAC)\n",
		        sub);
		return 2;
	}
	o.warn = host_warn;
	o.progress = host_progress;
	char err[1024];
	int rc = !strcmp(sub, "paired")     ? secho_host_paired(&o, stdout, err, sizeof(err))
	         : !strcmp(sub, "counters") ? secho_host_counters(&o, stdout, err, sizeof(err))
	                                    : secho_host_load(&o, stdout, err, sizeof(err));
	/* -errno: it could not run (2), 1: FAIL, 0: PASS. */
	cli_print_err("host", err);
	return rc < 0 ? CLI_USAGE : rc ? CLI_FAIL : CLI_OK;
}
