/*
 * src/cli/flow_replay.c - `secho flow replay`: a capture onto an interface, flat out or at a
 * rate, bounded in time and count (src/traffic/replay.h; docs/FLOW.md, "Replay").
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "traffic/replay.h"

static volatile sig_atomic_t replay_stop;

static void on_signal(int sig)
{
	(void)sig;
	replay_stop = 1;
}

static void replay_usage(FILE *f)
{
	fprintf(f,
	        "usage: secho flow replay --iface IF --pcap FILE [--pps N] [--seconds S]\n"
	        "                         [--count N] [--loop N] [--tx sendmmsg|ring]\n"
	        "                         [--frame-size B] [--json] [-q]\n"
	        "\n"
	        "Send the frames of a capture (pcap or pcapng, Ethernet) onto interface IF "
	        "through\n"
	        "an AF_PACKET socket, in file order, flat out or paced, and print what was sent.\n"
	        "Timestamps in the file are not followed. Stops at the end of the file (of the\n"
	        "last loop), after --count frames, after --seconds, or on SIGINT/SIGTERM.\n"
	        "\n"
	        "  -i, --iface IF        interface to send on (root or CAP_NET_RAW)\n"
	        "  -r, --pcap FILE       capture to send\n"
	        "  -p, --pps N           frames per second (default: flat out)\n"
	        "  -t, --seconds S       stop after S seconds (default 60, at most 86400)\n"
	        "  -n, --count N         stop after N frames (default: every frame)\n"
	        "  -l, --loop N          send the file N times (default 1)\n"
	        "      --tx MODE         sendmmsg (default: a copy per frame into the kernel's\n"
	        "                        packet) or ring (a TPACKET_V2 TX ring)\n"
	        "      --frame-size B    buffer bytes per frame, a power of 2 from 2048 to 65536\n"
	        "                        (default 16384 when the file's snap length is above\n"
	        "                        1900, else 2048); larger frames are counted, not sent,\n"
	        "                        and so are frames shorter than an Ethernet header\n"
	        "  -j, --json            one JSON object instead of the text line\n"
	        "  -q, --quiet           nothing on success\n"
	        "  -h, --help            this text\n"
	        "\n"
	        "Exit status: 0 sent, 1 could not send (file, interface), 2 bad arguments.\n");
}

int cmd_flow_replay(int argc, char *argv[])
{
	static const struct option opts[] = {
	        {"iface", required_argument, NULL, 'i'},
	        {"pcap", required_argument, NULL, 'r'},
	        {"pps", required_argument, NULL, 'p'},
	        {"seconds", required_argument, NULL, 't'},
	        {"count", required_argument, NULL, 'n'},
	        {"loop", required_argument, NULL, 'l'},
	        {"frame-size", required_argument, NULL, 'F'},
	        {"tx", required_argument, NULL, 'T'},
	        {"json", no_argument, NULL, 'j'},
	        {"quiet", no_argument, NULL, 'q'},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	const char *cmd = "flow replay";
	struct secho_flow_replay_cfg cfg = {.seconds = 60, .stop = &replay_stop};
	bool json = false, quiet = false;
	uint64_t v;
	int c;

	cli_getopt_reset();
	while ((c = getopt_long(argc, argv, ":i:r:p:t:n:l:jqh", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			cfg.ifname = optarg;
			break;
		case 'r':
			cfg.pcap = optarg;
			break;
		case 'p':
			if (!cli_parse_double(optarg, 1, 1e9, &cfg.pps))
				return cli_usage_err(cmd, "--pps '%s' is not a rate (1..1e9)",
				                     optarg);
			break;
		case 't':
			if (!cli_parse_double(optarg, 0.001, SECHO_REPLAY_MAX_SECONDS,
			                      &cfg.seconds))
				return cli_usage_err(cmd, "--seconds '%s' is not in 0.001..86400",
				                     optarg);
			break;
		case 'n':
			if (!cli_parse_u64(optarg, 1, UINT64_C(1) << 48, &cfg.count))
				return cli_usage_err(cmd, "--count '%s' is not a count (1..2^48)",
				                     optarg);
			break;
		case 'l':
			if (!cli_parse_u64(optarg, 1, 1000000, &v))
				return cli_usage_err(cmd, "--loop '%s' is not in 1..1000000",
				                     optarg);
			cfg.loops = (uint32_t)v;
			break;
		case 'F':
			if (!cli_parse_u64(optarg, 2048, 65536, &v) || (v & (v - 1)))
				return cli_usage_err(
				        cmd, "--frame-size '%s' is not a power of 2 in 2048..65536",
				        optarg);
			cfg.frame_size = (uint32_t)v;
			break;
		case 'T':
			if (strcmp(optarg, "ring") != 0 && strcmp(optarg, "sendmmsg") != 0)
				return cli_usage_err(cmd, "--tx '%s' is neither ring nor sendmmsg",
				                     optarg);
			cfg.tx_ring_mode = strcmp(optarg, "ring") == 0;
			break;
		case 'j':
			json = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			replay_usage(stdout);
			return CLI_OK;
		default:
			return cli_bad_option(cmd, c, argv);
		}
	}
	if (optind < argc)
		return cli_usage_err(cmd, "unexpected argument '%s'", argv[optind]);
	if (!cfg.ifname || !*cfg.ifname)
		return cli_usage_err(cmd, "--iface is required (see secho flow replay --help)");
	if (!cfg.pcap || !*cfg.pcap)
		return cli_usage_err(cmd, "--pcap is required (see secho flow replay --help)");

	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	struct secho_flow_replay_result res;
	char err[512] = "";
	int rc = secho_flow_replay_run(&cfg, &res, err, sizeof(err));
	if (rc && !res.frames)
		return cli_err(cmd, "%s", err);
	double pps = res.elapsed_s > 0 ? (double)res.frames / res.elapsed_s : 0;
	double gbps = res.elapsed_s > 0 ? (double)res.bytes * 8 / res.elapsed_s / 1e9 : 0;
	const char *stop = res.interrupted                                      ? "signal"
	                   : res.timed_out                                      ? "time"
	                   : rc                                                 ? "error"
	                   : cfg.count && res.frames + res.refused >= cfg.count ? "count"
	                                                                        : "end of file";
	if (json) {
		printf("{\"frames\":%" PRIu64 ",\"bytes\":%" PRIu64
		       ",\"seconds\":%.6f,\"pps\":%.0f,"
		       "\"gbps\":%.3f,\"target_pps\":%.0f,\"too_long\":%" PRIu64
		       ",\"too_short\":%" PRIu64 ",\"refused\":%" PRIu64 ",\"tx_errors\":%" PRIu64
		       ",\"ring_waits\":%" PRIu64 ",\"late_bursts\":%" PRIu64
		       ",\"loops\":%u,\"stopped_by\":\"%s\"}\n",
		       res.frames, res.bytes, res.elapsed_s, pps, gbps, cfg.pps, res.too_long,
		       res.too_short, res.refused, res.tx_errors, res.ring_waits, res.behind,
		       res.loops_done, stop);
	} else if (!quiet) {
		printf("sent %" PRIu64 " frames (%" PRIu64
		       " bytes) in %.3f s: %.0f pps, %.3f Gbit/s "
		       "(%s%s); stopped by %s\n",
		       res.frames, res.bytes, res.elapsed_s, pps, gbps,
		       cfg.pps > 0 ? "paced" : "flat out", res.behind ? ", fell behind" : "", stop);
		printf("refused by the kernel %" PRIu64 ", too long %" PRIu64 ", too short %" PRIu64
		       ", tx errors %" PRIu64 ", ring full waits %" PRIu64 "; %s\n",
		       res.refused, res.too_long, res.too_short, res.tx_errors, res.ring_waits,
		       res.io_desc);
	}
	if (rc)
		return cli_err(cmd, "%s", err);
	return CLI_OK;
}
