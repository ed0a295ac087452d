/*
 * src/cli/serve.c - `secho serve`: the secure endpoint.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <net/if.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/serve.h"
#include "endpoint/endpoint.h"
#include "secho/cpu.h"

static const char usage[] =
        "usage: secho serve --iface IF --ip ADDR --key FILE [options]\n"
        "       secho serve --pcap-in FILE [--pcap-out FILE] --ip ADDR --mac MAC --key FILE\n"
        "\n"
        "The secure endpoint: UDP frames to ADDR are answered with their payload encrypted\n"
        "(AES-256-GCM under a 16-byte authenticated secure header); port 4000 uses the\n"
        "streaming engine, 4001 the offload engine, 4002 returns the encrypted counters.\n"
        "\n"
        "  --iface IF           interface to serve on (its MAC unless --mac)\n"
        "  --ip ADDR[/PREFIX]   the endpoint's IPv4 address; with the prefix length, sources\n"
        "                       that are the subnet's broadcast address are dropped too\n"
        "  --key FILE           key file from `secho keygen` (must be mode 0600 or stricter)\n"
        "  --mac MAC            the endpoint's MAC address (default: the interface's)\n"
        "  --state FILE         sequence-number state (default /var/lib/secho/seq-<keyid>.state)\n"
        "  --seq-window N       sequence numbers reserved per state write, 256..2^32 (default\n"
        "                       1048576; up to N numbers are skipped at each restart)\n"
        "  --instance N         this endpoint's id among those sharing its key (1..2^32-1):\n"
        "                       required with a key file marked \"shared yes\", refused\n"
        "                       otherwise; it goes into the IV and the header, and the default\n"
        "                       state becomes /var/lib/secho/seq-<keyid>-<N>.state\n"
        "  --io KIND            auto|xdp|packet (default auto: says what it chose and why)\n"
        "  --offload BACKEND    openssl|ipsec-mb|afalg (default openssl)\n"
        "  --mtu N              IP MTU, 576..9000 (default: the interface's, else 1500);\n"
        "                       payloads up to N-60 bytes are answered, every buffer is sized\n"
        "                       for it (AF_XDP carries up to 3790 and refuses more)\n"
        "  --ports S,O,C        streaming, offload and counters ports (default 4000,4001,4002)\n"
        "  --arp                answer ARP requests for ADDR (default: ARP is ignored)\n"
        "  --vlan ID            serve the one 802.1Q VLAN ID (1..4094) of a trunk port:\n"
        "                       only frames tagged with it are answered, and the answers\n"
        "                       carry the same tag (default: untagged frames only)\n"
        "  --busy-poll          spin on the rings instead of sleeping (lowest latency; the\n"
        "                       offload engine thread then polls for 20 ms before sleeping;\n"
        "                       when the ring is empty after a burst, a canned request runs\n"
        "                       through the data path under a throwaway key to keep it in\n"
        "                       cache: nothing is sent, no sequence number is used)\n"
        "  --throughput         AF_PACKET TPACKET_V3 block ring (default: V2, lowest latency)\n"
        "  --queue N            interface queue for AF_XDP (default 0); with --workers W,\n"
        "                       queues N..N+W-1\n"
        "  --workers W          W data-path workers (1..64, default 1), each a thread with\n"
        "                       its own receive queue: AF_XDP one socket per interface queue\n"
        "                       (the interface needs that many: ethtool -L, or a veth made\n"
        "                       with numrxqueues), AF_PACKET one socket each in a fanout\n"
        "                       group by flow hash (a flow stays on one worker, in order);\n"
        "                       its own offload queue pair, sequence numbers, counters\n"
        "  --cpus LIST          pin worker i to the i-th CPU of LIST (\"0,2-3\"; one CPU per\n"
        "                       worker; without --workers, one worker per CPU listed)\n"
        "  --offload-cpu N      pin the offload engine's thread to CPU N (default: where the\n"
        "                       scheduler puts it; keep it off the workers' CPUs)\n"
        "  --xdp-mode M         native|skb|any (default any)\n"
        "  --packet-tx M        AF_PACKET transmit: ring (a TX ring, default) or sendmmsg (in\n"
        "                       place from the RX ring: no copy)\n"
        "  --pcap-in FILE       read frames from a capture file instead of an interface; a\n"
        "                       corrupt file (a truncated record, one longer than the\n"
        "                       file's snapshot length) ends the run with exit status 1\n"
        "  --pcap-out FILE      write every frame sent to a capture file (with --pcap-in)\n"
        "  --offload-ring N     offload jobs in flight / staging buffers (default 256)\n"
        "  --report-rate R      counters reports per second per source (default 2; burst\n"
        "                       2 x R, at least one; all sources together 8 x R)\n"
        "  --seconds S          stop after S seconds (default: run until SIGINT/SIGTERM)\n"
        "  --quiet              no banner or summary\n"
        "  -h, --help           this text\n"
        "\n"
        "Key and state files must be regular files (a FIFO or a device is refused at once).\n"
        "Exit status: 0 stopped cleanly, 1 the run failed (I/O, sequence state, corrupt\n"
        "capture), 2 bad usage or a refusal to start.\n";

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

__attribute__((format(printf, 1, 2))) static int bad(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "secho serve: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see secho serve --help)\n");
	return 2;
}

/* "S,O,C": three distinct ports 1..65535. */
static bool parse_ports(const char *s, uint16_t p[3])
{
	char items[3][CLI_ITEM_MAX];
	const char *why;
	uint64_t v;
	if (cli_parse_list(s, items, 3, &why) != 3)
		return false;
	for (int i = 0; i < 3; i++) {
		if (!cli_parse_u64(items[i], 1, 65535, &v))
			return false;
		p[i] = (uint16_t)v;
	}
	return p[0] != p[1] && p[1] != p[2] && p[0] != p[2];
}

static int iface_info(const char *ifname, uint8_t mac[6], unsigned *mtu)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	int rc = 0;
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0) {
		rc = -errno;
	} else {
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
		if (ioctl(fd, SIOCGIFMTU, &ifr) == 0)
			*mtu = (unsigned)ifr.ifr_mtu;
	}
	close(fd);
	return rc;
}

/* What the options give, beyond the endpoint's configuration. */
struct serve_args {
	struct secho_endpoint_cfg cfg;
	const char *ifname, *ip;
	bool have_mac, have_mtu;
};

/* Parse the options into a (its defaults set first). Returns -1 to go on, or the exit
 * status (0 after --help). */
enum serve_opt {
	O_STATE = 256,
	O_IO,
	O_OFFLOAD,
	O_MTU,
	O_PORTS,
	O_ARP,
	O_BUSY,
	O_TPUT,
	O_QUEUE,
	O_XDPMODE,
	O_PKTTX,
	O_PIN,
	O_POUT,
	O_RING,
	O_RATE,
	O_SECONDS,
	O_QUIET,
	O_MAC,
	O_SEQWIN,
	O_INSTANCE,
	O_VLAN,
	O_WORKERS,
	O_CPUS,
	O_OFFCPU
};
static const struct option serve_opts_table[] = {{"iface", required_argument, NULL, 'i'},
                                                 {"ip", required_argument, NULL, 'a'},
                                                 {"key", required_argument, NULL, 'k'},
                                                 {"mac", required_argument, NULL, O_MAC},
                                                 {"state", required_argument, NULL, O_STATE},
                                                 {"seq-window", required_argument, NULL, O_SEQWIN},
                                                 {"instance", required_argument, NULL, O_INSTANCE},
                                                 {"io", required_argument, NULL, O_IO},
                                                 {"offload", required_argument, NULL, O_OFFLOAD},
                                                 {"mtu", required_argument, NULL, O_MTU},
                                                 {"ports", required_argument, NULL, O_PORTS},
                                                 {"arp", no_argument, NULL, O_ARP},
                                                 {"vlan", required_argument, NULL, O_VLAN},
                                                 {"busy-poll", no_argument, NULL, O_BUSY},
                                                 {"throughput", no_argument, NULL, O_TPUT},
                                                 {"queue", required_argument, NULL, O_QUEUE},
                                                 {"xdp-mode", required_argument, NULL, O_XDPMODE},
                                                 {"packet-tx", required_argument, NULL, O_PKTTX},
                                                 {"pcap-in", required_argument, NULL, O_PIN},
                                                 {"pcap-out", required_argument, NULL, O_POUT},
                                                 {"offload-ring", required_argument, NULL, O_RING},
                                                 {"report-rate", required_argument, NULL, O_RATE},
                                                 {"seconds", required_argument, NULL, O_SECONDS},
                                                 {"quiet", no_argument, NULL, O_QUIET},
                                                 {"workers", required_argument, NULL, O_WORKERS},
                                                 {"cpus", required_argument, NULL, O_CPUS},
                                                 {"offload-cpu", required_argument, NULL, O_OFFCPU},
                                                 {"help", no_argument, NULL, 'h'},
                                                 {NULL, 0, NULL, 0}};

/* One option of the address, key, state and I/O group into a. Returns -1 to go on, -2 when c
 * is not of this group, or the exit status. */
static int serve_opt_wire(int c, struct serve_args *a)
{
	struct secho_endpoint_cfg *cfg = &a->cfg;
	uint64_t v;

	switch (c) {
	case 'i':
		a->ifname = optarg;
		break;
	case 'a':
		a->ip = optarg;
		break;
	case 'k':
		cfg->key_path = optarg;
		break;
	case O_MAC:
		if (!cli_parse_mac(optarg, cfg->wire.mac))
			return bad("--mac: '%s' is not a MAC address (aa:bb:cc:dd:ee:ff)", optarg);
		a->have_mac = true;
		break;
	case O_STATE:
		cfg->state_path = optarg;
		break;
	case O_INSTANCE:
		if (!cli_parse_u64(optarg, 1, UINT32_MAX, &v))
			return bad("--instance: '%s' is not a number in 1..4294967295", optarg);
		cfg->instance = (uint32_t)v;
		break;
	case O_SEQWIN:
		if (!cli_parse_u64(optarg, 256, 1ul << 32, &v))
			return bad("--seq-window: '%s' is not a number in 256..4294967296", optarg);
		cfg->seq_window = v;
		break;
	case O_IO:
		if (!secho_io_kind_parse(optarg, &cfg->io.kind) || cfg->io.kind == SECHO_IO_PCAP)
			return bad("--io: '%s' is not one of auto, xdp, packet", optarg);
		break;
	case O_OFFLOAD:
		if (secho_offload_backend_parse(optarg, &cfg->offload) != 0)
			return bad("--offload: '%s' is not one of openssl, ipsec-mb, afalg",
			           optarg);
		break;
	case O_MTU:
		if (!cli_parse_u64(optarg, SECHO_WIRE_MIN_MTU, SECHO_WIRE_MAX_MTU, &v))
			return bad("--mtu: '%s' is not a number in %d..%d", optarg,
			           SECHO_WIRE_MIN_MTU, SECHO_WIRE_MAX_MTU);
		cfg->wire.mtu = (unsigned)v;
		a->have_mtu = true;
		break;
	case O_PORTS: {
		uint16_t p[3];
		if (!parse_ports(optarg, p))
			return bad("--ports: '%s' is not three distinct ports S,O,C", optarg);
		cfg->wire.port_stream = p[0];
		cfg->wire.port_offload = p[1];
		cfg->wire.port_counters = p[2];
		break;
	}
	case O_ARP:
		cfg->arp = true;
		break;
	case O_VLAN:
		if (!cli_parse_u64(optarg, 1, 4094, &v))
			return bad("--vlan: '%s' is not a VLAN id in 1..4094", optarg);
		cfg->vlan = (uint16_t)v;
		break;
	case O_BUSY:
		cfg->io.busy_poll = true;
		break;
	case O_TPUT:
		cfg->io.hint = SECHO_IO_THROUGHPUT;
		break;
	case O_QUEUE:
		if (!cli_parse_u64(optarg, 0, 1023, &v))
			return bad("--queue: '%s' is not a queue number", optarg);
		cfg->io.queue = (uint32_t)v;
		break;
	case O_XDPMODE:
		if (!cli_parse_xdp_mode(optarg, &cfg->io.xdp_mode))
			return bad("--xdp-mode: '%s' is not one of native, skb, any", optarg);
		break;
	case O_PKTTX:
		if (!strcmp(optarg, "sendmmsg"))
			cfg->io.packet_sendmmsg = true;
		else if (strcmp(optarg, "ring") != 0)
			return bad("--packet-tx: '%s' is not one of ring, sendmmsg", optarg);
		break;
	default:
		return -2;
	}
	return -1;
}

/* One option of the capture, engine and run group into a. Returns -1 to go on, or the exit
 * status (a bad option too). */
static int serve_opt_run(int c, struct serve_args *a)
{
	struct secho_endpoint_cfg *cfg = &a->cfg;
	uint64_t v;

	switch (c) {
	case O_PIN:
		cfg->io.pcap_in = optarg;
		break;
	case O_POUT:
		cfg->io.pcap_out = optarg;
		break;
	case O_RING:
		if (!cli_parse_u64(optarg, 2, 4096, &v) || (v & (v - 1)))
			return bad("--offload-ring: '%s' is not a power of two in 2..4096", optarg);
		cfg->offload_ring = (unsigned)v;
		break;
	case O_RATE: {
		double r;
		if (!cli_parse_double(optarg, 0, 1000, &r) || !(r > 0))
			return bad("--report-rate: '%s' is not a rate in (0, 1000]", optarg);
		cfg->report_rate = r;
		break;
	}
	case O_SECONDS: {
		double s;
		if (!cli_parse_double(optarg, 0, 1e7, &s) || !(s > 0))
			return bad("--seconds: '%s' is not a positive number of seconds", optarg);
		cfg->run_seconds = s;
		break;
	}
	case O_QUIET:
		cfg->quiet = true;
		break;
	case O_WORKERS:
		if (!cli_parse_u64(optarg, 1, SECHO_EP_MAX_WORKERS, &v))
			return bad("--workers: '%s' is not a number in 1..%u", optarg,
			           (unsigned)SECHO_EP_MAX_WORKERS);
		cfg->workers = (unsigned)v;
		break;
	case O_CPUS: {
		const char *why;
		int n = cli_parse_cpus(optarg, cfg->cpus, SECHO_EP_MAX_WORKERS, &why);
		if (n < 0)
			return bad("--cpus: '%s': %s", optarg, why);
		cfg->ncpus = (unsigned)n;
		for (int i = 0; i < n; i++) {
			char have[64];
			if (!secho_cpu_usable(cfg->cpus[i]))
				return bad("--cpus: CPU %u is not available to this "
				           "process (it may use %s)",
				           (unsigned)cfg->cpus[i],
				           secho_cpu_usable_list(have, sizeof(have)));
		}
		break;
	}
	case O_OFFCPU: {
		char have[64];
		if (!cli_parse_u64(optarg, 0, SECHO_CPU_MAX, &v) || !secho_cpu_usable((unsigned)v))
			return bad("--offload-cpu: '%s' is not a CPU this process may use "
			           "(%s)",
			           optarg, secho_cpu_usable_list(have, sizeof(have)));
		cfg->offload_pin = true;
		cfg->offload_cpu = (unsigned)v;
		break;
	}
	default:
		fprintf(stderr, "secho serve: bad option (see secho serve --help)\n");
		return 2;
	}
	return -1;
}

/* Parse the options into a (its defaults set first). Returns -1 to go on, or the exit
 * status (0 after --help). */
static int serve_parse(int argc, char **argv, struct serve_args *a)
{
	struct secho_endpoint_cfg *cfg = &a->cfg;
	int c, rc;

	memset(a, 0, sizeof(*a));
	secho_wire_cfg_defaults(&cfg->wire);
	cfg->io.kind = SECHO_IO_AUTO;
	cfg->io.hint = SECHO_IO_LATENCY;
	cfg->offload = SECHO_OFFLOAD_OPENSSL;
	cfg->offload_ring = 256;
	cfg->offload_spin_us = 50;
	cfg->report_rate = 2;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", serve_opts_table, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage, stdout);
			return 0;
		}
		rc = serve_opt_wire(c, a);
		if (rc == -2)
			rc = serve_opt_run(c, a);
		if (rc >= 0)
			return rc;
	}
	return -1;
}

/* Check the options together, and complete the configuration from the interface. Returns
 * -1 to go on, or the exit status. */
static int serve_check(int argc, char **argv, struct serve_args *a)
{
	struct secho_endpoint_cfg *cfg = &a->cfg;

	if (optind < argc)
		return bad("unexpected argument '%s'", argv[optind]);
	if (!cfg->workers)
		cfg->workers = cfg->ncpus ? cfg->ncpus : 1;
	if (cfg->ncpus && cfg->ncpus != cfg->workers)
		return bad("--cpus lists %u CPU%s for %u worker%s: one per worker", cfg->ncpus,
		           cfg->ncpus == 1 ? "" : "s", cfg->workers, cfg->workers == 1 ? "" : "s");
	/* Allowed (two CPUs may be all there is), but the engine then runs only when the worker
	 * yields: with --busy-poll that is every 20 us of waiting at best, a scheduler tick at
	 * worst (bench/endpoint_bench.sh --latency-only: offload p50 about 1 ms). */
	for (unsigned i = 0; cfg->offload_pin && i < cfg->ncpus; i++)
		if (cfg->cpus[i] == cfg->offload_cpu) {
			fprintf(stderr,
			        "secho serve: warning: --offload-cpu %u is worker %u's CPU too: "
			        "the "
			        "offload engine runs only when that worker yields (offload latency "
			        "up to a scheduler tick, more with --busy-poll)\n",
			        cfg->offload_cpu, i);
			break;
		}
	if (cfg->io.queue + cfg->workers - 1 > 1023)
		return bad("--queue %u with --workers %u: queues up to %u (at most 1023)",
		           cfg->io.queue, cfg->workers, cfg->io.queue + cfg->workers - 1);
	if (!cfg->key_path)
		return bad("%s", "--key FILE is required");
	if (!a->ip)
		return bad("%s", "--ip ADDR is required");
	{
		/* ADDR or ADDR/PREFIX: with a prefix, sources that are the subnet's broadcast
		 * address are dropped too. */
		char addr[32];
		const char *slash = strchr(a->ip, '/');
		size_t alen = slash ? (size_t)(slash - a->ip) : strlen(a->ip);
		uint64_t plen = 32;
		if (alen >= sizeof(addr) || (slash && !cli_parse_u64(slash + 1, 1, 32, &plen)))
			return bad("--ip: '%s' is not an IPv4 address (ADDR or ADDR/PREFIX)",
			           a->ip);
		memcpy(addr, a->ip, alen);
		addr[alen] = '\0';
		if (inet_pton(AF_INET, addr, &cfg->wire.ip) != 1)
			return bad("--ip: '%s' is not an IPv4 address (ADDR or ADDR/PREFIX)",
			           a->ip);
		cfg->wire.netmask =
		        slash ? htonl(plen == 32 ? 0xffffffffu : ~(0xffffffffu >> plen)) : 0;
	}
	if (cfg->io.pcap_in) {
		if (a->ifname)
			return bad("%s", "--pcap-in and --iface are exclusive");
		if (cfg->workers > 1)
			return bad("%s",
			           "--pcap-in is one input: one worker (no --workers above 1)");
		if (!a->have_mac)
			return bad("%s", "--pcap-in needs --mac (there is no interface to ask)");
		cfg->io.kind = SECHO_IO_PCAP;
	} else {
		if (cfg->io.pcap_out)
			return bad("%s", "--pcap-out needs --pcap-in");
		if (!a->ifname)
			return bad("%s", "--iface IF is required (or --pcap-in FILE)");
		uint8_t mac[6];
		unsigned mtu = 0;
		int rc = iface_info(a->ifname, mac, &mtu);
		if (rc < 0) {
			fprintf(stderr, "secho serve: interface '%s': %s\n", a->ifname,
			        strerror(-rc));
			return 2;
		}
		if (!a->have_mac)
			memcpy(cfg->wire.mac, mac, 6);
		if (!a->have_mtu && mtu >= SECHO_WIRE_MIN_MTU && mtu <= SECHO_WIRE_MAX_MTU)
			cfg->wire.mtu = mtu;
		cfg->io.ifname = a->ifname;
	}
	/* Busy-polling is about latency: the offload engine thread then keeps polling its
	 * ring for 20 ms after the last job instead of 50 us (a futex wake-up across CPUs
	 * costs tens of microseconds here), and sleeps only when traffic stops. */
	if (cfg->io.busy_poll)
		cfg->offload_spin_us = 20000;
	if (secho_wire_cfg_check(&cfg->wire) != 0)
		return bad("%s", "the address, MAC, ports or MTU are not usable (unicast MAC, "
		                 "unicast IP, distinct ports)");

	return -1;
}

/* The endpoint's set-up warnings (endpoint.h: cfg.warn). */
static void serve_warn(const char *msg)
{
	fprintf(stderr, "secho serve: warning: %s\n", msg);
}

int cmd_serve(int argc, char **argv)
{
	struct serve_args a;
	char err[2048];
	bool refused;
	int rc = serve_parse(argc, argv, &a);

	if (rc < 0)
		rc = serve_check(argc, argv, &a);
	if (rc >= 0)
		return rc;
	a.cfg.warn = serve_warn;
	a.cfg.out = stdout;

	cli_stop_signals(on_signal, true);
	rc = secho_endpoint_run(&a.cfg, &stop_flag, &refused, err, sizeof(err));
	if (rc == 0)
		return CLI_OK;
	cli_print_err("serve", err);
	return refused ? CLI_USAGE : CLI_FAIL;
}
