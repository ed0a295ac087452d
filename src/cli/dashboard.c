/*
 * src/cli/dashboard.c - `secho dashboard`: the web page and JSON API (src/dashboard/,
 * docs/API.md). Option parsing and the process's life: listen, wait for SIGINT/SIGTERM,
 * then stop the server, let a running run end (its programs are killed), remove the wire.
 */
#include "dashboard/dashboard.h"
#include "cli/cli.h"

#include <arpa/inet.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
        "Usage: secho dashboard [--listen ADDR[:PORT]] [--virtual | --iface IF] [options]\n"
        "\n"
        "Serve the dashboard page and its JSON API (docs/API.md) on http://ADDR:PORT/.\n"
        "The page's Run button starts the endpoint, runs verified echo traffic down both\n"
        "paths (secho host paired, then secho host load) and fetches the encrypted\n"
        "counters report (secho host counters).\n"
        "\n"
        "  --listen ADDR[:PORT]  IPv4 address and port (default 127.0.0.1:8765)\n"
        "  --allow-remote        permit a --listen address outside 127.0.0.0/8 (the API\n"
        "                        has no authentication: only on a network you trust)\n"
        "  --virtual             (default) the endpoint in its own network namespace, joined\n"
        "                        to a host namespace by a veth pair: 192.0.2.1 <-> 192.0.2.2.\n"
        "                        Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN)\n"
        "  --iface IF            a real interface instead: the endpoint serves 192.0.2.2 on\n"
        "                        IF in this namespace; the host tool reaches it through the\n"
        "                        kernel (socket mode), or raw with --host-iface\n"
        "  --host-iface IF --dst-mac MAC\n"
        "                        with --iface: run the host tool raw (AF_PACKET) on IF\n"
        "                        towards the endpoint's MAC\n"
        "  --secho-bin PATH      the secho binary to run for keygen/serve/host (default:\n"
        "                        this one; for tests)\n"
        "  --quiet               no request log on stderr\n"
        "  -h, --help            this text\n";

/* SIGINT/SIGTERM: only set the flag (async-signal-safe); main and dash_run() poll it
 * (secho_lab_run). */
static void on_signal(int sig)
{
	(void)sig;
	secho_lab_stopping = 1;
}

/* "A.B.C.D" or "A.B.C.D:PORT" into cfg. False (with a message) on anything else. */
static bool parse_listen(const char *s, struct dash_cfg *cfg)
{
	const char *colon = strrchr(s, ':');
	size_t n = colon ? (size_t)(colon - s) : strlen(s);
	struct in_addr a;
	uint64_t port = DASH_DEFAULT_PORT;

	if (n == 0 || n >= sizeof(cfg->listen_ip))
		return false;
	memcpy(cfg->listen_ip, s, n);
	cfg->listen_ip[n] = '\0';
	if (inet_pton(AF_INET, cfg->listen_ip, &a) != 1)
		return false;
	if (colon && !cli_parse_u64(colon + 1, 1, 65535, &port))
		return false;
	cfg->port = (uint16_t)port;
	return true;
}

/* `secho dashboard`: returns 0 after a clean stop, 1 when it could not start, 2 on bad
 * usage. */
int cmd_dashboard(int argc, char **argv)
{
	enum { O_LISTEN = 256, O_REMOTE, O_VIRTUAL, O_IFACE, O_HIF, O_MAC, O_BIN, O_QUIET };
	static const struct option opts[] = {
	        {"listen", required_argument, NULL, O_LISTEN},
	        {"allow-remote", no_argument, NULL, O_REMOTE},
	        {"virtual", no_argument, NULL, O_VIRTUAL},
	        {"iface", required_argument, NULL, O_IFACE},
	        {"host-iface", required_argument, NULL, O_HIF},
	        {"dst-mac", required_argument, NULL, O_MAC},
	        {"secho-bin", required_argument, NULL, O_BIN},
	        {"quiet", no_argument, NULL, O_QUIET},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	static struct dash_cfg cfg; /* outlives the server threads */
	static struct dash_wire wire;
	bool virt = false;
	char err[512];
	int c;

	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.listen_ip, sizeof(cfg.listen_ip), "127.0.0.1");
	cfg.port = DASH_DEFAULT_PORT;
	cli_getopt_reset();
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case O_LISTEN:
			if (!parse_listen(optarg, &cfg))
				return cli_usage_err("dashboard",
				                     "--listen '%s': not ADDR or ADDR:PORT (IPv4, "
				                     "port 1..65535)",
				                     optarg);
			break;
		case O_REMOTE:
			cfg.allow_remote = true;
			break;
		case O_VIRTUAL:
			virt = true;
			break;
		case O_IFACE:
			if (!*optarg || strlen(optarg) >= 16 || strchr(optarg, '/'))
				return cli_usage_err("dashboard",
				                     "--iface '%s': not an interface name", optarg);
			cfg.iface = optarg;
			break;
		case O_HIF:
			if (!*optarg || strlen(optarg) >= 16 || strchr(optarg, '/'))
				return cli_usage_err("dashboard",
				                     "--host-iface '%s': not an interface name",
				                     optarg);
			cfg.host_iface = optarg;
			break;
		case O_MAC: {
			uint8_t mac[6];

			if (!cli_parse_mac(optarg, mac))
				return cli_usage_err("dashboard",
				                     "--dst-mac '%s': not a MAC address "
				                     "(aa:bb:cc:dd:ee:ff)",
				                     optarg);
			cfg.dst_mac = optarg;
			break;
		}
		case O_BIN:
			cfg.secho_bin = optarg;
			break;
		case O_QUIET:
			cfg.quiet = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return CLI_OK;
		default:
			return cli_bad_option("dashboard", c, argv);
		}
	}
	if (optind < argc)
		return cli_usage_err("dashboard", "unexpected argument '%s'", argv[optind]);
	if (virt && cfg.iface)
		return cli_usage_err("dashboard", "--virtual and --iface are exclusive");
	if ((cfg.host_iface || cfg.dst_mac) && !cfg.iface)
		return cli_usage_err("dashboard", "--host-iface and --dst-mac go with --iface");
	if (!cfg.host_iface != !cfg.dst_mac)
		return cli_usage_err("dashboard", "--host-iface and --dst-mac go together");
	if (!strcmp(cfg.listen_ip, "0.0.0.0"))
		return cli_usage_err("dashboard",
		                     "--listen 0.0.0.0: give the address browsers will use (the "
		                     "Host header is checked against it)");
	if (strncmp(cfg.listen_ip, "127.", 4) != 0 && !cfg.allow_remote)
		return cli_usage_err("dashboard",
		                     "--listen %s is not a loopback address; the API has no "
		                     "authentication, add --allow-remote to mean it",
		                     cfg.listen_ip);

	if (dash_wire_init(&wire, &cfg, err, sizeof(err)) < 0)
		return cli_err("dashboard", "%s", err);
	if (!cfg.iface && geteuid() != 0)
		fprintf(stderr, "secho dashboard: warning: not root; the virtual wire (network "
		                "namespaces) will fail to start\n");

	cli_stop_signals(on_signal, true);

	struct dash_api *api = dash_api_new(&wire);
	struct dash_http *http = api ? dash_http_start(&cfg, api, err, sizeof(err)) : NULL;

	if (!http) {
		dash_api_free(api);
		dash_wire_fini(&wire);
		return cli_err("dashboard", "%s", api ? err : "out of memory");
	}
	if (cfg.iface)
		printf("secho dashboard: http://%s:%u/  (endpoint on interface %s)\n",
		       cfg.listen_ip, cfg.port, cfg.iface);
	else
		printf("secho dashboard: http://%s:%u/  (virtual wire: namespaces %s <-> %s)\n",
		       cfg.listen_ip, cfg.port, wire.lab.ns[SECHO_LAB_HOST],
		       wire.lab.ns[SECHO_LAB_EP]);
	fflush(stdout);

	while (!secho_lab_stopping)
		usleep(100000); /* signals may land on a server thread: poll the flag */

	fprintf(stderr, "secho dashboard: stopping\n");
	dash_http_stop(http);
	dash_api_free(api);
	/* Nothing runs any more: let the tear-down's own commands (ip netns del) run. */
	secho_lab_stopping = 0;
	dash_wire_fini(&wire);
	return CLI_OK;
}
