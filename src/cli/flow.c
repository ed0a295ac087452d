/*
 * src/cli/flow.c - `secho flow`: flow metering (docs/FLOW.md).
 *
 *   secho flow (--pcap FILE | --iface IF [--io auto|xdp|packet]) [options]
 *   secho flow gen --profile NAME|FILE.csv [--packets N] [--seed S] -o OUT.pcap
 *
 * `secho flow` is the meter (src/flow/meter/meter.h): records as JSON lines
 * (src/flow/export/json.h) and IPFIX to collectors (src/flow/export/ipfix_sink.h). `secho flow gen`
 * writes a seeded capture and its ground truth (src/traffic/gen.h).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "flow/export/ipfix_sink.h"
#include "flow/export/json.h"
#include "flow/meter/meter.h"
#include "sys/clock.h"
#include "sys/mem.h"
#include "traffic/gen.h"

/* SIGINT and SIGTERM set it: the meter stops and exports, the generator removes its
 * temporary files. */
static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void gen_usage(FILE *f)
{
	fprintf(f, "usage: secho flow gen --profile NAME|FILE.csv [--packets N] [--seed S]\n"
	           "                     [--encap KIND[:ID]] [--app LIST] -o OUT.pcap\n"
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
	           "  -e, --encap KIND[:ID]  every flow's frames in one encapsulation: mpls,\n"
	           "                       mpls2 (two labels; ID the top label), pppoe (session),\n"
	           "                       gre (ID: the key; none without), erspan (type II,\n"
	           "                       session), vxlan, geneve (VNI), gtpu (TEID), ipip\n"
	           "                       (4in4, 6in6), ipip4, ipip6 (outer IPv4 / IPv6),\n"
	           "                       eompls (label); the truth gets tunnel_type,\n"
	           "                       tunnel_id and bytes_outer\n"
	           "  -a, --app LIST       application payloads, LIST of tls, quic, dns, http or\n"
	           "                       all: each TCP connection carries TLS (port 443: a\n"
	           "                       ClientHello with SNI and ALPN, a ServerHello; a\n"
	           "                       quarter TLS 1.2 with the certificate in clear) or\n"
	           "                       HTTP/1.1 (80: a request, a response), each UDP one\n"
	           "                       QUIC (443: Initials protected with the RFC 9001\n"
	           "                       keys) or DNS (53: a query, an answer), drawn from\n"
	           "                       the seed among those in LIST; the first packet each\n"
	           "                       way carries the message (grown to it when smaller);\n"
	           "                       the truth gets app and features (the fields a meter's\n"
	           "                       --features tls,quic,dns,http must report, JSON)\n"
	           "  -o, --out FILE       the capture to write (FILE.truth.csv beside it);\n"
	           "                       each must be new or a regular file (a device node,\n"
	           "                       a link, a FIFO or a directory is refused)\n"
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
	        {"encap", required_argument, NULL, 'e'},
	        {"app", required_argument, NULL, 'a'},
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
	while ((c = getopt_long(argc, argv, ":p:n:s:e:a:o:qh", opts, NULL)) != -1) {
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
		case 'e': {
			char eerr[200];
			if (secho_gen_encap_check(optarg, eerr, sizeof(eerr)))
				return cli_usage_err(cmd, "%s", eerr);
			cfg.encap = optarg;
			break;
		}
		case 'a': {
			char aerr[200];
			if (secho_gen_app_parse(optarg, &cfg.apps, aerr, sizeof(aerr)))
				return cli_usage_err(cmd, "%s", aerr);
			break;
		}
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
	cli_stop_signals(on_signal, true);
	cfg.stop = &stop_flag;
	double t0 = secho_mono_s();
	int rc = secho_gen_write(&cfg, out, truth, &t, err, sizeof(err));
	double dt = secho_mono_s() - t0;
	if (rc) {
		free(truth);
		/* A bad profile (unknown name, bad CSV row) or an output that is not a new or
		 * regular file is a bad argument. */
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

static const char usage[] =
        "usage: secho flow (--pcap FILE | --iface IF [--io auto|xdp|packet] [--ring MIB])\n"
        "                  [--collector URL]...\n"
        "                  [--uniflow] [--active S] [--inactive S] [--flows N] [--workers N]\n"
        "                  [--observation-domain ID] [--template-refresh S] [--mtu BYTES]\n"
        "                  [--json FILE|-]\n"
        "                  [--stats S] [--json-stats] [--features LIST]\n"
        "                  [--offload xdp [--offload-threshold N] [--offload-flows N]]\n"
        "                  [--xdp-mode native|skb|any]\n"
        "\n"
        "The flow meter: every packet is put in its flow (VLANs, IP version, protocol,\n"
        "addresses, ports or ICMP type and code); a flow's record (per direction: packets,\n"
        "IP octets, first and last time, TCP flags; then why it ended) leaves the table on\n"
        "the inactive or active timeout, at the end of a TCP connection, when its bucket is\n"
        "full, or at the end (docs/FLOW.md). Timeouts run on packet time.\n"
        "\n"
        "  --pcap FILE          meter a capture file (pcap or pcapng), as fast as it goes;\n"
        "                       at its end every flow is exported\n"
        "  --iface IF           meter an interface live (receive only) until SIGINT/SIGTERM,\n"
        "                       then export every flow\n"
        "  --io KIND            auto|xdp|packet (with --iface; default auto)\n"
        "  --ring MIB           (with --iface) each socket's receive ring, MiB (default 64;\n"
        "                       1-2048): what arrives while the meter is descheduled\n"
        "                       waits there; a full ring drops (kernel_drops)\n"
        "  --collector URL      IPFIX to udp://HOST[:PORT] or tcp://HOST[:PORT] (port 4739\n"
        "                       by default; IPv6 addresses in brackets), or into an IPFIX\n"
        "                       file (file:PATH, RFC 5655); repeatable, up to 8: each\n"
        "                       collector gets every record\n"
        "  --json FILE|-        one JSON object per flow record, one per line (- = stdout)\n"
        "  --uniflow            one record per direction (default: biflows, RFC 5103:\n"
        "                       forward = the direction of the flow's first packet)\n"
        "  --active S           active timeout: a flow older than S seconds is exported and\n"
        "                       goes on in a new record (default 300)\n"
        "  --inactive S         inactive timeout: a flow idle for S seconds ends (default 30)\n"
        "  --flows N            flow table entries, over all workers (default 1048576; 8 to\n"
        "                       1073741824; memory about 344 bytes per entry, printed)\n"
        "  --workers N          worker threads, each with its own table (default 1; 1-64):\n"
        "                       packets are split by a symmetric hash of their addresses\n"
        "                       (offline, every worker reads the file and meters\n"
        "                       its share of the packets)\n"
        "  --observation-domain ID   IPFIX observation domain (default 0)\n"
        "  --mtu BYTES          the largest IPFIX message (default 1400; 576-65507, the\n"
        "                       most a UDP datagram over IPv4 carries): over UDP keep it\n"
        "                       within the path's MTU less 28 (IP and UDP headers); a\n"
        "                       collector on this machine (loopback) takes 65507\n"
        "  --template-refresh S      IPFIX templates again every S seconds on UDP\n"
        "                            (default 60; 1-86400)\n"
        "  --stats S            print statistics every S seconds (default: at the end only)\n"
        "  --json-stats         statistics as one JSON object per line\n"
        "  --features LIST      application fields and packet statistics in each record\n"
        "                       (comma-separated sets, or all; none by default; the sets\n"
        "                       and what each costs per flow are listed below): JSON\n"
        "                       members, and IPFIX elements as ipfixprobe's plugins\n"
        "                       export them, then Flowmon's for TLS and DNS fields\n"
        "                       they lack (docs/FLOW.md); pstats:zeroes is pstats with\n"
        "                       packets without payload too (ipfixprobe's includezeroes)\n"
        "  --hash NAME          the flow key hash: xxh3 (default), crc32c or toeplitz (the\n"
        "                       three docs/FLOW.md compares)\n"
        "  --offload xdp        (with --iface) the XDP offload tier: a program on the\n"
        "                       interface counts the packets of heavy flows in a map and\n"
        "                       drops them before the meter; records stay whole\n"
        "  --offload-threshold N  offload a flow once its record has N packets\n"
        "                       (default 1000; 1-4294967295)\n"
        "  --offload-flows N    the map's size (default 65536; 8-16777216); when it is\n"
        "                       full, flows stay in software (counted)\n"
        "  --xdp-mode M         native|skb|any: the XDP mode of the offload program and of\n"
        "                       AF_XDP sockets (default any: native, else generic)\n"
        "  --quiet              no banner\n"
        "  -h, --help           this text\n"
        "\n"
        "secho flow gen writes a seeded capture and its ground truth (secho flow gen --help);\n"
        "secho flow replay sends a capture onto an interface (secho flow replay --help).\n"
        "\n"
        "Statistics and the summary go to stdout, or to stderr when records do (--json -);\n"
        "a progress line goes to stderr when it is a terminal. At the end the exporters\n"
        "get up to 10 s to deliver what they hold (TCP: until the collector has\n"
        "acknowledged it). Exit status: 0 when every record was delivered (UDP: sent;\n"
        "TCP: acknowledged), 1 when the input or an exporter failed part way, or a\n"
        "signal stopped the reading of a file before its end (what was read was\n"
        "metered and exported), 2 for bad usage.\n";

#define MAX_COLLECTORS 8

enum meter_opt {
	O_PCAP = 256,
	O_IFACE,
	O_IO,
	O_COLLECTOR,
	O_UNIFLOW,
	O_ACTIVE,
	O_INACTIVE,
	O_FLOWS,
	O_WORKERS,
	O_ODID,
	O_TREFRESH,
	O_MTU,
	O_JSON,
	O_STATS,
	O_JSTATS,
	O_HASH,
	O_QUIET,
	O_OFFLOAD,
	O_OFL_THRESHOLD,
	O_OFL_FLOWS,
	O_XDP_MODE,
	O_RING,
	O_FEATURES,
};
static const struct option meter_opts_table[] = {
        {"pcap", required_argument, NULL, O_PCAP},
        {"iface", required_argument, NULL, O_IFACE},
        {"io", required_argument, NULL, O_IO},
        {"collector", required_argument, NULL, O_COLLECTOR},
        {"uniflow", no_argument, NULL, O_UNIFLOW},
        {"active", required_argument, NULL, O_ACTIVE},
        {"inactive", required_argument, NULL, O_INACTIVE},
        {"flows", required_argument, NULL, O_FLOWS},
        {"workers", required_argument, NULL, O_WORKERS},
        {"observation-domain", required_argument, NULL, O_ODID},
        {"template-refresh", required_argument, NULL, O_TREFRESH},
        {"mtu", required_argument, NULL, O_MTU},
        {"json", required_argument, NULL, O_JSON},
        {"stats", required_argument, NULL, O_STATS},
        {"json-stats", no_argument, NULL, O_JSTATS},
        {"hash", required_argument, NULL, O_HASH},
        {"quiet", no_argument, NULL, O_QUIET},
        {"offload", required_argument, NULL, O_OFFLOAD},
        {"offload-threshold", required_argument, NULL, O_OFL_THRESHOLD},
        {"offload-flows", required_argument, NULL, O_OFL_FLOWS},
        {"xdp-mode", required_argument, NULL, O_XDP_MODE},
        {"ring", required_argument, NULL, O_RING},
        {"features", required_argument, NULL, O_FEATURES},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};

/* --mtu's largest: an IPv4 UDP datagram's payload (65535 - 20 - 8). */
#define MTU_MAX 65507u

/* `secho flow`'s options (meter mode), with their defaults. */
struct meter_opts {
	const char *pcap, *iface, *json, *io_s;
	const char *collectors[MAX_COLLECTORS];
	unsigned ncoll;
	bool uniflow, jstats, quiet;
	double active, inactive, stats_s;
	uint64_t flows, workers, odid, trefresh, ring, mtu;
	enum secho_io_kind io;
	enum secho_flow_hash_kind hash;
	bool offload;
	const char *ofl_opt; /* an --offload-* option given */
	uint64_t ofl_threshold, ofl_flows;
	enum secho_io_xdp_mode xdp_mode;
	uint32_t features; /* 1u << SECHO_FEAT_SET_* */
};

/* The feature sets, one line each, with what each costs per flow. */
static void features_help(FILE *f)
{
	fprintf(f,
	        "\nFeature sets (--features): the small ones are a section of every flow's\n"
	        "slot in the table (%u bytes without any, rounded up to 64); the large ones\n"
	        "(*) are lent from a pool to a flow when the set takes it (its protocol),\n"
	        "and given back when its record leaves, or as soon as the set is done\n"
	        "having found nothing.\n",
	        SECHO_FLOW_EXTRA_BYTES);
	for (unsigned i = 0; i < SECHO_FEAT_NSETS; i++)
		fprintf(f, "  %-8s %5zu B %s %s\n", secho_feat_set_name(i),
		        (secho_feat_set_size(i) + 7) & ~(size_t)7,
		        SECHO_FEAT_POOLED & (1u << i) ? "*" : " ", secho_feat_set_text(i));
	fprintf(f, "  all      %5zu B   the slot of every flow with all on\n",
	        secho_flow_table_stride(SECHO_FEAT_ALL));
}

/* Parse the options into m (defaults first). Returns -1 to go on, or the exit status. */
/* One option of the input, sinks and table group into m. Returns -1 to go on, -2 when c is
 * not of this group, or the exit status. */
static int meter_opt_input(int c, struct meter_opts *m)
{
	switch (c) {
	case O_PCAP:
		m->pcap = optarg;
		break;
	case O_IFACE:
		m->iface = optarg;
		break;
	case O_IO:
		m->io_s = optarg;
		if (!secho_io_kind_parse(optarg, &m->io) || m->io == SECHO_IO_PCAP)
			return cli_usage_err("flow", "--io: '%s' is not auto, xdp or packet",
			                     optarg);
		break;
	case O_COLLECTOR: {
		struct secho_ipfix_url url;
		char why[128];
		if (m->ncoll == MAX_COLLECTORS)
			return cli_usage_err("flow", "--collector: at most %d collectors",
			                     MAX_COLLECTORS);
		if (secho_ipfix_parse_url(optarg, &url, why, sizeof(why)) < 0)
			return cli_usage_err("flow", "--collector '%s': %s", optarg, why);
		m->collectors[m->ncoll++] = optarg;
		break;
	}
	case O_UNIFLOW:
		m->uniflow = true;
		break;
	case O_ACTIVE:
		if (!cli_parse_double(optarg, 0.001, 86400, &m->active))
			return cli_usage_err("flow", "--active: '%s' is not 0.001-86400 seconds",
			                     optarg);
		break;
	case O_INACTIVE:
		if (!cli_parse_double(optarg, 0.001, 86400, &m->inactive))
			return cli_usage_err("flow", "--inactive: '%s' is not 0.001-86400 seconds",
			                     optarg);
		break;
	case O_FLOWS:
		if (!cli_parse_u64(optarg, 8, SECHO_FLOW_MAX_FLOWS, &m->flows))
			return cli_usage_err("flow", "--flows: '%s' is not 8-%u", optarg,
			                     SECHO_FLOW_MAX_FLOWS);
		break;
	case O_WORKERS:
		if (!cli_parse_u64(optarg, 1, SECHO_FLOW_MAX_WORKERS, &m->workers))
			return cli_usage_err("flow", "--workers: '%s' is not 1-%d", optarg,
			                     SECHO_FLOW_MAX_WORKERS);
		break;
	case O_ODID:
		if (!cli_parse_u64(optarg, 0, 0xffffffffu, &m->odid))
			return cli_usage_err(
			        "flow", "--observation-domain: '%s' is not 0-4294967295", optarg);
		break;
	case O_TREFRESH:
		if (!cli_parse_u64(optarg, 1, 86400, &m->trefresh))
			return cli_usage_err(
			        "flow", "--template-refresh: '%s' is not 1-86400 (whole seconds)",
			        optarg);
		break;
	case O_MTU:
		if (!cli_parse_u64(optarg, 576, MTU_MAX, &m->mtu))
			return cli_usage_err("flow", "--mtu: '%s' is not 576-%u (bytes)", optarg,
			                     MTU_MAX);
		break;
	case O_FEATURES: {
		const char *bad;
		size_t badlen;
		if (secho_feat_parse(optarg, &m->features, &bad, &badlen)) {
			char valid[160];
			size_t vl = 0;
			for (unsigned i = 0; i < SECHO_FEAT_NSETS && vl < sizeof(valid); i++) {
				int w = snprintf(valid + vl, sizeof(valid) - vl, "%s, ",
				                 secho_feat_set_name(i));
				vl += w > 0 ? (size_t)w : 0;
			}
			if (vl < sizeof(valid))
				snprintf(valid + vl, sizeof(valid) - vl, "all, pstats:zeroes");
			return cli_usage_err("flow", "--features: '%.*s' is not a feature set (%s)",
			                     (int)badlen, bad, valid);
		}
		break;
	}
	case O_JSON:
		if (!*optarg)
			return cli_usage_err("flow", "--json: an empty file name");
		m->json = optarg;
		break;
	default:
		return -2;
	}
	return -1;
}

/* One option of the statistics, hash and offload group into m. Returns -1 to go on, or the
 * exit status (a bad option too). */
static int meter_opt_more(int c, char *argv[], struct meter_opts *m)
{
	switch (c) {
	case O_STATS:
		if (!cli_parse_double(optarg, 0.1, 86400, &m->stats_s))
			return cli_usage_err("flow", "--stats: '%s' is not 0.1-86400 seconds",
			                     optarg);
		break;
	case O_JSTATS:
		m->jstats = true;
		break;
	case O_HASH:
		if (!secho_flow_hash_parse(optarg, &m->hash))
			return cli_usage_err("flow", "--hash: '%s' is not xxh3, crc32c or toeplitz",
			                     optarg);
		break;
	case O_QUIET:
		m->quiet = true;
		break;
	case O_OFFLOAD:
		if (strcmp(optarg, "xdp") != 0)
			return cli_usage_err("flow", "--offload: '%s' is not xdp", optarg);
		m->offload = true;
		break;
	case O_OFL_THRESHOLD:
		m->ofl_opt = "--offload-threshold";
		if (!cli_parse_u64(optarg, 1, UINT32_MAX, &m->ofl_threshold))
			return cli_usage_err(
			        "flow", "--offload-threshold: '%s' is not 1-4294967295", optarg);
		break;
	case O_OFL_FLOWS:
		m->ofl_opt = "--offload-flows";
		if (!cli_parse_u64(optarg, 8, SECHO_OFFLOAD_FLOWS_MAX, &m->ofl_flows))
			return cli_usage_err("flow", "--offload-flows: '%s' is not 8-%u", optarg,
			                     SECHO_OFFLOAD_FLOWS_MAX);
		break;
	case O_XDP_MODE:
		if (!cli_parse_xdp_mode(optarg, &m->xdp_mode))
			return cli_usage_err("flow", "--xdp-mode: '%s' is not native, skb or any",
			                     optarg);
		break;
	case O_RING:
		if (!cli_parse_u64(optarg, 1, SECHO_FLOW_RING_MIB_MAX, &m->ring))
			return cli_usage_err("flow", "--ring: '%s' is not 1-%u (MiB)", optarg,
			                     SECHO_FLOW_RING_MIB_MAX);
		break;
	default:
		return cli_bad_option("flow", c, argv);
	}
	return -1;
}

static int meter_parse(int argc, char *argv[], struct meter_opts *m)
{
	int c;

	*m = (struct meter_opts){.active = 300,
	                         .inactive = 30,
	                         .flows = 1048576,
	                         .workers = 1,
	                         .trefresh = 60,
	                         .io = SECHO_IO_AUTO,
	                         .hash = SECHO_FLOW_HASH_DEFAULT,
	                         .ofl_threshold = SECHO_TIER_THRESHOLD_DEFAULT,
	                         .ofl_flows = SECHO_OFFLOAD_FLOWS_DEFAULT,
	                         .xdp_mode = SECHO_IO_XDP_ANY};
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", meter_opts_table, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage, stdout);
			features_help(stdout);
			return CLI_OK;
		}
		int rc = meter_opt_input(c, m);
		if (rc == -2)
			rc = meter_opt_more(c, argv, m);
		if (rc >= 0)
			return rc;
	}
	return -1;
}

/* Check the options together. Returns -1 to go on, or the exit status. */
static int meter_check(int argc, char *argv[], const struct meter_opts *m)
{
	if (optind < argc)
		return cli_usage_err("flow", "unexpected argument '%s' (see 'secho flow --help')",
		                     argv[optind]);
	if (!m->pcap == !m->iface)
		return cli_usage_err("flow", "give exactly one of --pcap FILE and --iface IF (see "
		                             "'secho flow --help')");
	if (m->io_s && !m->iface)
		return cli_usage_err("flow", "--io goes with --iface");
	if (m->ring && !m->iface)
		return cli_usage_err("flow", "--ring goes with --iface");
	if (m->offload && !m->iface)
		return cli_usage_err("flow", "--offload goes with --iface (a capture file has no "
		                             "receive path to offload)");
	if (m->xdp_mode != SECHO_IO_XDP_ANY && !m->iface)
		return cli_usage_err("flow", "--xdp-mode goes with --iface");
	if (m->ofl_opt && !m->offload)
		return cli_usage_err("flow", "%s goes with --offload xdp", m->ofl_opt);
	if (!*(m->pcap ? m->pcap : m->iface))
		return cli_usage_err("flow", "%s: an empty name", m->pcap ? "--pcap" : "--iface");
	if (m->flows < m->workers * SECHO_FLOW_BUCKET)
		return cli_usage_err("flow", "--flows %llu: fewer than 8 per worker",
		                     (unsigned long long)m->flows);
	return -1;
}

/* Stands in for the meter's callback where only a table's size is asked for
 * (secho_flow_table_mem_size wants a whole configuration); never called. */
static void size_only_emit(void *ctx, const struct secho_flow_rec *rec)
{
	(void)ctx;
	(void)rec;
}

/* The tables are allocated at start (live: made resident at once), and the kernel answers
 * a request it cannot meet with the OOM killer, not an error: refuse it here, with the
 * numbers (src/sys/mem.h). Returns -1 to go on, or the exit status. */
static int meter_memory(const struct meter_opts *m)
{
	struct secho_flow_table_cfg tc = {
	        .flows = (uint32_t)((m->flows + m->workers - 1) / m->workers),
	        .uniflow = m->uniflow,
	        .hash = m->hash,
	        .active_ns = (uint64_t)(m->active * 1e9),
	        .inactive_ns = (uint64_t)(m->inactive * 1e9),
	        .emit = size_only_emit,
	        .features = m->features,
	};
	uint64_t per_table = secho_flow_table_mem_size(&tc);
	uint64_t stride = secho_flow_table_ext_bytes(m->features);
	if (!per_table && m->features)
		return cli_err("flow",
		               "--flows %" PRIu64 " with --features: %" PRIu64
		               " bytes per flow (the slot and the sets' states), more than the "
		               "table's %" PRIu64
		               " GiB extension pool per worker allows; give fewer --flows or "
		               "fewer feature sets",
		               m->flows, stride, (uint64_t)(SECHO_FLOW_EXT_MAX >> 30));
	struct secho_mem_avail avail;

	secho_mem_available(&avail);
	if (per_table && per_table * m->workers > avail.bytes)
		return cli_err("flow",
		               "--flows %" PRIu64 " needs %" PRIu64 " MiB of flow tables (%" PRIu64
		               " x %" PRIu64 " MiB), more than the %" PRIu64
		               " MiB this process can have (%s; %" PRIu64
		               " bytes per flow in the extension and the feature sets' states); "
		               "give fewer "
		               "--flows",
		               m->flows, per_table * m->workers >> 20, m->workers, per_table >> 20,
		               avail.bytes >> 20, avail.source, stride);
	return -1;
}

/* Open the sinks (IPFIX collectors, JSON lines). Returns -1 to go on, or the exit status. */
static int meter_open_sinks(const struct meter_opts *m, struct secho_flow_sink sinks[2],
                            unsigned *nsinks_out, struct secho_flow_json **jx_out,
                            struct secho_flow_ipfix **ix_out)
{
	unsigned nsinks = 0;
	struct secho_flow_json *jx = NULL;
	struct secho_flow_ipfix *ix = NULL;
	char err[256];
	if (m->ncoll) {
		struct secho_ipfix_cfg icfg = {
		        .odid = (uint32_t)m->odid,
		        .biflow = !m->uniflow,
		        .template_refresh_s = (uint32_t)m->trefresh,
		        .mtu = (uint32_t)m->mtu,
		};
		int r = secho_flow_ipfix_open(&ix, &icfg, m->collectors, m->ncoll, &sinks[nsinks],
		                              err, sizeof(err));
		if (r == -EINVAL)
			return cli_usage_err("flow", "--collector %s", err);
		if (r)
			return cli_err("flow", "--collector %s", err);
		nsinks++;
	}
	if (m->json) {
		jx = secho_flow_json_open(m->json, m->uniflow, &sinks[nsinks], err, sizeof(err));
		if (!jx) {
			secho_flow_ipfix_free(ix);
			return cli_err("flow", "--json %s", err);
		}
		nsinks++;
	}

	*nsinks_out = nsinks;
	*jx_out = jx;
	*ix_out = ix;
	return -1;
}

/* Run the meter over the sinks, then report its failures. Returns the exit status. */
static int meter_run(const struct meter_opts *m, struct secho_flow_sink *sinks, unsigned nsinks,
                     struct secho_flow_json *jx, struct secho_flow_ipfix *ix)
{
	char err[256];

	cli_stop_signals(on_signal, true); /* a closed --json pipe is a write error, counted */

	struct secho_flow_meter_cfg cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.table.flows = (uint32_t)m->flows;
	cfg.table.uniflow = m->uniflow;
	cfg.table.active_ns = (uint64_t)(m->active * 1e9);
	cfg.table.inactive_ns = (uint64_t)(m->inactive * 1e9);
	cfg.table.hash = m->hash;
	cfg.table.features = m->features;
	cfg.workers = (unsigned)m->workers;
	cfg.pcap = m->pcap;
	cfg.iface = m->iface;
	cfg.io = m->io;
	cfg.xdp_mode = m->xdp_mode;
	cfg.ring_mib = (uint32_t)m->ring;
	struct secho_flow_tier_cfg tier = {.ofl = {.ifname = m->iface,
	                                           .mode = m->xdp_mode,
	                                           .flows = (uint32_t)m->ofl_flows,
	                                           .uniflow = m->uniflow},
	                                   .threshold = (uint32_t)m->ofl_threshold};
	cfg.offload = m->offload ? &tier : NULL;
	cfg.sinks = sinks;
	cfg.nsinks = nsinks;
	cfg.stats_s = m->stats_s;
	cfg.json_stats = m->jstats;
	cfg.progress = m->pcap && isatty(STDERR_FILENO);
	cfg.quiet = m->quiet;
	cfg.report = m->json && !strcmp(m->json, "-") ? stderr : stdout;
	cfg.stop = &stop_flag;

	struct secho_flow_meter_result res;
	int r = secho_flow_meter_run(&cfg, &res, err, sizeof(err));
	secho_flow_json_free(jx);
	secho_flow_ipfix_free(ix);
	if (r)
		return cli_err("flow", "%s", err);
	int rc = CLI_OK;
	if (res.input_error[0]) {
		fprintf(stderr, "secho flow: %s (what came before it was metered and exported)\n",
		        res.input_error);
		rc = CLI_FAIL;
	} else if (m->pcap && res.interrupted) {
		/* Live, a signal is how a run ends (exit 0); offline it cuts the file short. */
		fprintf(stderr,
		        "secho flow: %s: stopped by a signal after %" PRIu64
		        " frames: the file was not read to its end (what came before was "
		        "metered and exported)\n",
		        m->pcap, res.frames_read);
		rc = CLI_FAIL;
	}
	if (res.sink_failed) {
		fprintf(stderr, "secho flow: not every record was delivered (see the summary)\n");
		rc = CLI_FAIL;
	}
	return rc;
}

static int cmd_flow_meter(int argc, char *argv[])
{
	struct meter_opts m;
	struct secho_flow_sink sinks[2];
	unsigned nsinks = 0;
	struct secho_flow_json *jx = NULL;
	struct secho_flow_ipfix *ix = NULL;
	int rc = meter_parse(argc, argv, &m);

	if (rc < 0)
		rc = meter_check(argc, argv, &m);
	if (rc < 0)
		rc = meter_memory(&m);
	if (rc < 0)
		rc = meter_open_sinks(&m, sinks, &nsinks, &jx, &ix);
	if (rc >= 0)
		return rc;
	return meter_run(&m, sinks, nsinks, jx, ix);
}

int cmd_flow(int argc, char *argv[])
{
	if (argc >= 2 && !strcmp(argv[1], "gen"))
		return cmd_flow_gen(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "replay"))
		return cmd_flow_replay(argc - 1, argv + 1);
	if (argc < 2) { /* nothing at all: the usage, as a reminder */
		fputs(usage, stderr);
		return CLI_USAGE;
	}
	return cmd_flow_meter(argc, argv);
}
