/*
 * src/cli/lab.c - `secho lab`: the virtual wire of src/lab/lab.h for scripts (make demo,
 * the network tests): up, down, run a program in it, print its names, sweep stale labs.
 */
#include "lab/lab.h"
#include "cli/cli.h"
#include "secho/proto.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
        "Usage: secho lab up    [--id N] [--tag T] [--mtu N] [--queues N] [--owner PID]\n"
        "       secho lab down  [--id N] [--tag T]\n"
        "       secho lab run   [--id N] [--tag T] host|endpoint PROGRAM [ARGS...]\n"
        "       secho lab env   [--id N] [--tag T]\n"
        "       secho lab sweep\n"
        "\n"
        "The virtual wire the demo, the network tests and the dashboard use: two network\n"
        "namespaces, secho-TAGh-ID (host, TAGhID 192.0.2.1/24 02:00:00:00:00:01, a\n"
        "permanent neighbour entry for 192.0.2.2) and secho-TAGe-ID (endpoint, TAGeID\n"
        "02:00:00:00:00:02, no address), joined by a veth pair; IPv6 and tx checksum\n"
        "offload off on both ends. Needs root.\n"
        "\n"
        "  up      build it (first removing the labs of owners that no longer run) and wait\n"
        "          until both ends are running; its owner is recorded in\n"
        "          " SECHO_LAB_MARK_DIR "/secho-TAGh-ID\n"
        "  down    stop what runs in it (SIGTERM, SIGKILL after 2 s) and remove it\n"
        "  run     replace this command with PROGRAM in the host or endpoint namespace\n"
        "          (same pid); it gets SIGTERM when the caller (a script) dies\n"
        "  env     print the names and addresses as shell assignments (NS_H NS_E IF_H\n"
        "          IF_E IP_H IP_E MAC_H MAC_E LAB_MTU)\n"
        "  sweep   remove the labs whose owner no longer runs (a killed test, a killed\n"
        "          dashboard), saying which\n"
        "\n"
        "  --id N        the lab's number, 0..9999999999 (default: the caller's pid)\n"
        "  --tag T       1..3 lower-case letters in its names (default s)\n"
        "  --mtu N       both ends' MTU, 576..9000 (default 1500: see src/lab/lab.h)\n"
        "  --queues N    RX and TX queues per end, 1..16 (default 1)\n"
        "  --owner PID   the process the lab belongs to (default: the caller); when it no\n"
        "                longer runs, the next `up` or `sweep` removes the lab\n"
        "  -h, --help    this text\n"
        "\n"
        "Exit status: 0 done, 1 failed (the reason on stderr), 2 bad usage.\n";

/* One of the subcommands above. */
static bool verb_known(const char *v)
{
	static const char *const verbs[] = {"up", "down", "run", "env", "sweep"};

	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (!strcmp(v, verbs[i]))
			return true;
	return false;
}

/* `secho lab`: 0 done, 1 failed, 2 bad usage (see usage_text). */
int cmd_lab(int argc, char *argv[])
{
	enum { O_ID = 256, O_TAG, O_MTU, O_QUEUES, O_OWNER };
	static const struct option opts[] = {
	        {"id", required_argument, NULL, O_ID},
	        {"tag", required_argument, NULL, O_TAG},
	        {"mtu", required_argument, NULL, O_MTU},
	        {"queues", required_argument, NULL, O_QUEUES},
	        {"owner", required_argument, NULL, O_OWNER},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	uint64_t id = (uint64_t)getppid(), mtu = SECHO_LAB_MTU, queues = SECHO_LAB_QUEUES;
	uint64_t owner = (uint64_t)getppid();
	bool have_mtu = false, have_q = false, have_owner = false;
	const char *tag = "s", *verb;
	struct secho_lab lab;
	char err[512];
	int c, rc;

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(usage_text, stdout);
		return CLI_OK;
	}
	if (argc < 2)
		return cli_usage_err("lab", "which: up, down, run, env or sweep (see 'secho lab "
		                            "--help')");
	verb = argv[1];
	if (!verb_known(verb))
		return cli_usage_err("lab", "unknown subcommand '%s' (see 'secho lab --help')",
		                     verb);
	argc--;
	argv++;
	cli_getopt_reset();
	/* '+': stop at the first word that is not an option (run's side and program). */
	while ((c = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
		switch (c) {
		case O_ID:
			if (!cli_parse_u64(optarg, 0, 9999999999ull, &id))
				return cli_usage_err("lab", "--id '%s': not a number 0..9999999999",
				                     optarg);
			break;
		case O_TAG:
			tag = optarg;
			break;
		case O_MTU:
			if (!cli_parse_u64(optarg, SECHO_WIRE_MIN_MTU, SECHO_WIRE_MAX_MTU, &mtu))
				return cli_usage_err("lab", "--mtu '%s': not a number %d..%d",
				                     optarg, SECHO_WIRE_MIN_MTU,
				                     SECHO_WIRE_MAX_MTU);
			have_mtu = true;
			break;
		case O_QUEUES:
			if (!cli_parse_u64(optarg, 1, SECHO_LAB_MAX_QUEUES, &queues))
				return cli_usage_err("lab", "--queues '%s': not a number 1..%d",
				                     optarg, SECHO_LAB_MAX_QUEUES);
			have_q = true;
			break;
		case O_OWNER:
			if (!cli_parse_u64(optarg, 2, 4194304, &owner))
				return cli_usage_err("lab", "--owner '%s': not a pid", optarg);
			have_owner = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return CLI_OK;
		default:
			return cli_bad_option("lab", c, argv);
		}
	}
	if ((have_mtu || have_q || have_owner) && strcmp(verb, "up") != 0)
		return cli_usage_err("lab", "--mtu, --queues and --owner go with 'up' only");
	if (!strcmp(verb, "sweep")) {
		if (optind < argc)
			return cli_usage_err("lab", "unexpected argument '%s'", argv[optind]);
		int n = secho_lab_sweep("secho lab");

		printf("secho lab: %d stale lab%s removed\n", n, n == 1 ? "" : "s");
		return CLI_OK;
	}
	rc = secho_lab_init(&lab, tag, (unsigned long)id, err, sizeof(err));
	if (rc == -EINVAL)
		return cli_usage_err("lab", "--tag '%s': %s", tag, err);
	if (!strcmp(verb, "env")) {
		if (optind < argc)
			return cli_usage_err("lab", "unexpected argument '%s'", argv[optind]);
		printf("NS_H=%s\nNS_E=%s\nIF_H=%s\nIF_E=%s\nIP_H=%s\nIP_E=%s\nMAC_H=%s\nMAC_E=%s\n"
		       "LAB_MTU=%d\n",
		       lab.ns[SECHO_LAB_HOST], lab.ns[SECHO_LAB_EP], lab.ifname[SECHO_LAB_HOST],
		       lab.ifname[SECHO_LAB_EP], SECHO_LAB_HOST_IP, SECHO_LAB_EP_IP,
		       SECHO_LAB_HOST_MAC, SECHO_LAB_EP_MAC, SECHO_LAB_MTU);
		return CLI_OK;
	}
	if (!strcmp(verb, "run")) {
		enum secho_lab_side side;

		if (optind >= argc)
			return cli_usage_err("lab", "run: which side, host or endpoint?");
		if (!strcmp(argv[optind], "host"))
			side = SECHO_LAB_HOST;
		else if (!strcmp(argv[optind], "endpoint"))
			side = SECHO_LAB_EP;
		else
			return cli_usage_err("lab", "run: '%s' is not host or endpoint",
			                     argv[optind]);
		if (optind + 1 >= argc)
			return cli_usage_err("lab", "run: which program?");
		if (rc < 0)
			return cli_err("lab", "%s", err);
		rc = secho_lab_exec(&lab, side, argv + optind + 1, SIGTERM);
		return cli_err("lab", "run %s: %s", argv[optind + 1], strerror(-rc));
	}
	if (optind < argc)
		return cli_usage_err("lab", "unexpected argument '%s'", argv[optind]);
	if (rc < 0)
		return cli_err("lab", "%s", err);
	if (!strcmp(verb, "down")) {
		secho_lab_down(&lab);
		return CLI_OK;
	}
	lab.mtu = (unsigned)mtu;
	lab.queues = (unsigned)queues;
	rc = secho_lab_up(&lab, (pid_t)owner, err, sizeof(err));
	if (rc < 0)
		return cli_err("lab", "up: %s", err);
	return CLI_OK;
}
