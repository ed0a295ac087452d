/*
 * bench/bare_echo.c - the I/O limit: a header-swap UDP echo without crypto.
 *
 * Every IPv4/UDP frame received is sent back with Ethernet, IPv4 and UDP source and
 * destination swapped; nothing else changes (both checksums stay valid: one's-complement
 * sums do not depend on the order of the words). Other frames are counted and dropped.
 * Runs the same loop as the endpoint (rx burst, tx slot/commit, one flush per burst,
 * release) so its packets/s and CPU time per packet bound what the endpoint can reach.
 *
 *   bare_echo --io auto|xdp|packet|pcap --iface IF [--seconds S] [--max-packets N]
 *             [--busy-poll] [--packet-version 2|3] [--v3-block BYTES] [--v3-retire MS]
 *             [--sendmmsg] [--xdp-mode any|native|skb] [--xdp-copy] [--queue Q]
 *             [--pcap-in F --pcap-out F] [--ready-file F] [--grow] [--quiet]
 *             [--workers N] [--cpus LIST]
 * --grow answers 32 bytes longer, shaped like the endpoint's response (see build_grown).
 * --workers N runs N echo loops in threads of their own, as `secho serve --workers` does:
 * each its own queue (AF_XDP: queues Q..Q+N-1; AF_PACKET: a PACKET_FANOUT_HASH group),
 * --cpus pins worker i to the i-th CPU of LIST (as secho serve --cpus: "0,2-3").
 * Bounded: exits after --seconds (default 10, at most 3600), --max-packets echoes, at end
 * of a pcap input, or on SIGINT/SIGTERM; the XDP program is detached on every exit path.
 */
#include "cli/cli.h"
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "secho/cpu.h"
#include "secho/io.h"
#include "secho/wire.h"
#include "sys/clock.h"

#define MAX_WORKERS 64

static _Atomic int stop; /* lock-free: set by the signal handler, read by every worker */

static void on_signal(int sig)
{
	(void)sig;
	atomic_store(&stop, 1);
}

static void usage(void)
{
	fprintf(stderr,
	        "usage: bare_echo --io auto|xdp|packet|pcap [--iface IF] [--queue Q]\n"
	        "       [--seconds S] [--max-packets N] [--busy-poll] [--packet-version 2|3]\n"
	        "       [--v3-block BYTES] [--v3-retire MS] [--sendmmsg]\n"
	        "       [--xdp-mode any|native|skb] [--xdp-copy] [--pcap-in FILE] [--pcap-out "
	        "FILE]\n"
	        "       [--tx-copy] [--ready-file FILE] [--grow] [--quiet]\n"
	        "       [--workers N] [--cpus LIST]\n");
}

/* --opt's value s, a whole unsigned decimal in [lo, hi] (cli_parse_u64, the one parser
 * every command uses); false with one line on stderr otherwise. */
static bool parse_u64(const char *opt, const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	if (!s) {
		fprintf(stderr, "bare_echo: %s needs a value\n", opt);
		return false;
	}
	if (!cli_parse_u64(s, lo, hi, out)) {
		fprintf(stderr, "bare_echo: %s: bad value '%s' (want %llu..%llu)\n", opt, s,
		        (unsigned long long)lo, (unsigned long long)hi);
		return false;
	}
	return true;
}

#define GROW 32u /* --grow: 16 bytes in front of the payload, 16 behind (endpoint shape) */

/* Length of Ethernet + IPv4 + UDP headers of the frame, or 0 if it is not IPv4/UDP. */
static uint32_t udp_header_len(const uint8_t *p, uint32_t len)
{
	if (len < 14 + 20 + 8 || p[12] != 0x08 || p[13] != 0x00)
		return 0;
	uint32_t ihl = (uint32_t)(p[14] & 0x0f) * 4;

	if ((p[14] >> 4) != 4 || ihl < 20 || len < 14 + ihl + 8 || p[14 + 9] != 17)
		return 0;
	return 14 + ihl + 8;
}

/*
 * --grow: build the response the endpoint would, without crypto: headers, 16 bytes of
 * 0xA5 (where the secure header goes), the payload, 16 bytes of 0x5A (where the tag goes),
 * lengths and checksums fixed. In place (out == in - 16) only the headers move: the
 * payload already sits at its new offset, as ciphertext will in the endpoint.
 */
static void build_grown(uint8_t *out, bool in_place, const uint8_t *in, uint32_t len, uint32_t hl)
{
	uint32_t pl = len - hl, ihl = hl - 14 - 8;

	if (in_place) {
		memmove(out, in, hl);
	} else {
		memcpy(out, in, hl);
		memcpy(out + hl + GROW / 2, in + hl, pl);
	}
	memset(out + hl, 0xa5, GROW / 2);
	memset(out + hl + GROW / 2 + pl, 0x5a, GROW / 2);
	uint8_t *ip = out + 14, *u = out + 14 + ihl;
	uint32_t tot = ((uint32_t)ip[2] << 8 | ip[3]) + GROW, ul = 8 + GROW / 2 * 2 + pl;

	ip[2] = (uint8_t)(tot >> 8);
	ip[3] = (uint8_t)tot;
	ip[10] = ip[11] = 0;
	uint16_t c = secho_csum_fold(secho_csum_add(0, ip, ihl));

	ip[10] = (uint8_t)(c >> 8);
	ip[11] = (uint8_t)c;
	u[4] = (uint8_t)(ul >> 8);
	u[5] = (uint8_t)ul;
	u[6] = u[7] = 0;
	c = secho_csum_fold(secho_csum_add(secho_csum_add(0, ip + 12, 8) + 17 + ul, u, ul));
	if (!c)
		c = 0xffff;
	u[6] = (uint8_t)(c >> 8);
	u[7] = (uint8_t)c;
}

/* Swap the addresses of an IPv4/UDP frame whose headers are hl bytes. */
static void swap_headers(uint8_t *p, uint32_t hl)
{
	uint8_t t[6];
	uint32_t ihl = hl - 14 - 8;

	memcpy(t, p, 6);
	memcpy(p, p + 6, 6);
	memcpy(p + 6, t, 6);
	memcpy(t, p + 26, 4);
	memcpy(p + 26, p + 30, 4);
	memcpy(p + 30, t, 4);
	uint8_t *u = p + 14 + ihl;

	memcpy(t, u, 2);
	memcpy(u, u + 2, 2);
	memcpy(u + 2, t, 2);
}

/* One echo loop (a worker): its own queue, counts and activity times. */
struct echo {
	struct secho_io *io;
	pthread_t th;
	bool grow;
	double t_end;
	uint64_t max_packets;         /* over all workers; 0 = no limit */
	_Atomic uint64_t *echoed_all; /* every worker's echoes, for max_packets */
	uint64_t echoed, not_udp;
	double t_first, t_last;
	int err;
};

static void *echo_main(void *arg)
{
	struct echo *e = arg;
	struct secho_io *io = e->io;
	struct secho_io_pkt pkts[SECHO_IO_BURST];
	unsigned idle = 0;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		unsigned n = secho_io_rx_burst(io, pkts, SECHO_IO_BURST), done = 0;

		for (unsigned i = 0; i < n; i++) {
			struct secho_io_pkt *k = &pkts[i];
			uint32_t hl = udp_header_len(k->data, k->len);

			if (!hl) {
				e->not_udp++;
				continue;
			}
			uint32_t rlen = k->len + (e->grow ? GROW : 0),
			         front = e->grow ? GROW / 2 : 0;
			uint8_t *out = secho_io_tx_slot(io, k, rlen, front);

			if (!out)
				continue;
			if (e->grow)
				build_grown(out, out == k->data - front, k->data, k->len, hl);
			else if (out != k->data)
				memcpy(out, k->data, k->len);
			swap_headers(out, hl);
			secho_io_tx_commit(io, k, rlen);
			done++;
		}
		secho_io_tx_flush(io);
		secho_io_rx_release(io, pkts, n);
		e->echoed += done;
		if (n) {
			e->t_last = secho_mono_s();
			if (e->t_first == 0)
				e->t_first = e->t_last;
			if (e->max_packets &&
			    atomic_fetch_add_explicit(e->echoed_all, done, memory_order_relaxed) +
			                    done >=
			            e->max_packets) {
				atomic_store(&stop, 1);
				break;
			}
			if (++idle < 64)
				continue;
		}
		idle = 0;
		if (secho_io_eof(io))
			break;
		if (secho_mono_s() >= e->t_end)
			break;
		if (!n) {
			int r = secho_io_wait(io, 50);

			if (r < 0 && r != -EINTR) {
				e->err = r;
				break;
			}
		}
	}
	/* Let the last responses leave before the socket goes. */
	for (int i = 0; i < 4; i++)
		secho_io_tx_flush(io);
	return NULL;
}

int main(int argc, char **argv)
{
	struct secho_io_cfg cfg = {.kind = SECHO_IO_AUTO};
	const char *ready_file = NULL;
	uint64_t seconds = 10, max_packets = 0, v, nw = 1;
	uint64_t echoed = 0, not_udp = 0;
	bool quiet = false, grow = false;
	unsigned ncpus = 0;
	uint16_t cpus[MAX_WORKERS];
	char err[256];

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!a)
			break;

		if (!strcmp(a, "--io")) {
			if (!val || !secho_io_kind_parse(val, &cfg.kind)) {
				fprintf(stderr, "bare_echo: --io: bad value '%s'\n",
				        val ? val : "");
				return 2;
			}
			i++;
		} else if (!strcmp(a, "--iface") && val) {
			cfg.ifname = val;
			i++;
		} else if (!strcmp(a, "--queue")) {
			if (!parse_u64(a, val, 0, 1023, &v))
				return 2;
			cfg.queue = (uint32_t)v;
			i++;
		} else if (!strcmp(a, "--seconds")) {
			if (!parse_u64(a, val, 1, 3600, &seconds))
				return 2;
			i++;
		} else if (!strcmp(a, "--max-packets")) {
			if (!parse_u64(a, val, 1, UINT64_MAX / 2, &max_packets))
				return 2;
			i++;
		} else if (!strcmp(a, "--busy-poll")) {
			cfg.busy_poll = true;
		} else if (!strcmp(a, "--packet-version")) {
			if (!parse_u64(a, val, 2, 3, &v))
				return 2;
			cfg.packet_version = (int)v;
			i++;
		} else if (!strcmp(a, "--v3-block")) {
			if (!parse_u64(a, val, 4096, 1u << 22, &v))
				return 2;
			cfg.v3_block_size = (uint32_t)v;
			i++;
		} else if (!strcmp(a, "--v3-retire")) {
			if (!parse_u64(a, val, 1, 1000, &v))
				return 2;
			cfg.v3_retire_ms = (uint32_t)v;
			i++;
		} else if (!strcmp(a, "--throughput")) {
			cfg.hint = SECHO_IO_THROUGHPUT;
		} else if (!strcmp(a, "--sendmmsg")) {
			cfg.packet_sendmmsg = true;
		} else if (!strcmp(a, "--xdp-mode") && val) {
			if (!strcmp(val, "native"))
				cfg.xdp_mode = SECHO_IO_XDP_NATIVE;
			else if (!strcmp(val, "skb"))
				cfg.xdp_mode = SECHO_IO_XDP_SKB;
			else if (!strcmp(val, "any"))
				cfg.xdp_mode = SECHO_IO_XDP_ANY;
			else {
				fprintf(stderr, "bare_echo: --xdp-mode: bad value '%s'\n", val);
				return 2;
			}
			i++;
		} else if (!strcmp(a, "--xdp-copy")) {
			cfg.xdp_copy = true;
		} else if (!strcmp(a, "--tx-copy")) {
			cfg.tx_copy = true;
		} else if (!strcmp(a, "--pcap-in") && val) {
			cfg.pcap_in = val;
			i++;
		} else if (!strcmp(a, "--pcap-out") && val) {
			cfg.pcap_out = val;
			i++;
		} else if (!strcmp(a, "--ready-file") && val) {
			ready_file = val;
			i++;
		} else if (!strcmp(a, "--grow")) {
			grow = true;
		} else if (!strcmp(a, "--quiet")) {
			quiet = true;
		} else if (!strcmp(a, "--workers")) {
			if (!parse_u64(a, val, 1, MAX_WORKERS, &nw))
				return 2;
			i++;
		} else if (!strcmp(a, "--cpus") && val) {
			/* the CPU list of secho serve --cpus (cli_parse_cpus: "0,2-3") */
			const char *why;
			int n = cli_parse_cpus(val, cpus, MAX_WORKERS, &why);
			if (n < 0) {
				fprintf(stderr, "bare_echo: --cpus: '%s': %s\n", val, why);
				return 2;
			}
			for (ncpus = 0; ncpus < (unsigned)n; ncpus++)
				if (!secho_cpu_usable(cpus[ncpus])) {
					fprintf(stderr, "bare_echo: --cpus: CPU %u not usable\n",
					        (unsigned)cpus[ncpus]);
					return 2;
				}
			i++;
		} else {
			fprintf(stderr, "bare_echo: unknown or incomplete option '%s'\n", a);
			usage();
			return 2;
		}
	}

	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	if (ncpus && ncpus != nw) {
		fprintf(stderr, "bare_echo: --cpus lists %u CPUs for %u workers\n", ncpus,
		        (unsigned)nw);
		return 2;
	}
	if (nw > 1 && (cfg.pcap_in || cfg.pcap_out)) {
		fprintf(stderr, "bare_echo: pcap is one input: one worker\n");
		return 2;
	}
	static struct echo ws[MAX_WORKERS];
	static _Atomic uint64_t echoed_all;
	double t_end = secho_mono_s() + (double)seconds;
	uint32_t queue0 = cfg.queue;
	int rc = 0;

	/* The workers' queues, as secho serve opens them: AUTO decides for the first, the
	 * others take the same backend; AF_XDP queue Q + i, AF_PACKET one fanout group (a new
	 * one, its id the kernel's, which the others join). */
	cfg.fanout = nw > 1;
	cfg.fanout_new = true;
	for (unsigned i = 0; i < nw; i++) {
		cfg.queue = queue0 + i;
		ws[i].io = secho_io_open(&cfg, err, sizeof(err));
		if (!ws[i].io) {
			fprintf(stderr, "bare_echo: %s%s\n", nw > 1 ? "worker: " : "", err);
			rc = errno == EOPNOTSUPP || errno == EPROTONOSUPPORT ? 3 : 1;
			goto out;
		}
		cfg.kind = secho_io_kind_of(ws[i].io);
		cfg.fanout_new = false;
		if (secho_io_fanout_id(ws[i].io) >= 0)
			cfg.fanout_id = (uint16_t)secho_io_fanout_id(ws[i].io);
		ws[i].grow = grow;
		ws[i].t_end = t_end;
		ws[i].max_packets = max_packets;
		ws[i].echoed_all = &echoed_all;
	}
	printf("bare_echo: %s%s\n", secho_io_describe(ws[0].io),
	       nw > 1 ? (cfg.kind == SECHO_IO_XDP ? " (and the next queues)" : " (fanout group)")
	              : "");
	if (nw > 1)
		printf("bare_echo: %u workers\n", (unsigned)nw);
	fflush(stdout);
	if (ready_file) {
		FILE *f = fopen(ready_file, "w");

		if (f) {
			fprintf(f, "%s\n", secho_io_describe(ws[0].io));
			fclose(f);
		}
	}

	struct rusage ru0, ru1;

	getrusage(RUSAGE_SELF, &ru0);
	for (unsigned i = 0; i < nw; i++) {
		pthread_attr_t attr;

		pthread_attr_init(&attr);
		if (ncpus) {
			cpu_set_t one;

			CPU_ZERO(&one);
			CPU_SET(cpus[i], &one);
			pthread_attr_setaffinity_np(&attr, sizeof(one), &one);
		}
		if (pthread_create(&ws[i].th, &attr, echo_main, &ws[i]) != 0) {
			fprintf(stderr, "bare_echo: worker thread: %s\n", strerror(errno));
			atomic_store(&stop, 1);
			nw = i;
			rc = 1;
		}
		pthread_attr_destroy(&attr);
	}
	double t_first = 0, t_last = 0;

	for (unsigned i = 0; i < nw; i++) {
		pthread_join(ws[i].th, NULL);
		if (ws[i].err)
			fprintf(stderr, "bare_echo: wait: %s\n", strerror(-ws[i].err));
		echoed += ws[i].echoed;
		not_udp += ws[i].not_udp;
		if (ws[i].t_first && (!t_first || ws[i].t_first < t_first))
			t_first = ws[i].t_first;
		if (ws[i].t_last > t_last)
			t_last = ws[i].t_last;
	}
	getrusage(RUSAGE_SELF, &ru1);

	struct secho_io_stats st, sum = {0};

	for (unsigned i = 0; i < nw; i++) {
		secho_io_get_stats(ws[i].io, &st);
		sum.rx += st.rx;
		sum.tx += st.tx;
		sum.rx_dropped_by_kernel += st.rx_dropped_by_kernel;
		sum.ring_full += st.ring_full;
		sum.tx_errors += st.tx_errors;
		sum.kicks += st.kicks;
		sum.wakeups += st.wakeups;
	}
	double cpu = (double)(ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec) +
	             (double)(ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec) * 1e-6;
	double sys = (double)(ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) +
	             (double)(ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec) * 1e-6;
	double active = t_last > t_first ? t_last - t_first : 0;

	printf("bare_echo: rx %llu tx %llu echoed %llu not_udp %llu kernel_drops %llu "
	       "ring_full %llu tx_errors %llu kicks %llu sleeps %llu\n",
	       (unsigned long long)sum.rx, (unsigned long long)sum.tx, (unsigned long long)echoed,
	       (unsigned long long)not_udp, (unsigned long long)sum.rx_dropped_by_kernel,
	       (unsigned long long)sum.ring_full, (unsigned long long)sum.tx_errors,
	       (unsigned long long)sum.kicks, (unsigned long long)sum.wakeups);
	if (nw > 1) {
		printf("bare_echo: echoed per worker:");
		for (unsigned i = 0; i < nw; i++)
			printf(" %llu", (unsigned long long)ws[i].echoed);
		printf("\n");
	}
	if (!quiet)
		printf("bare_echo: active %.3f s, %.0f pps; cpu %.3f user + %.3f sys s = %.0f ns "
		       "per packet\n",
		       active, active > 0 ? (double)echoed / active : 0.0, cpu, sys,
		       echoed ? (cpu + sys) * 1e9 / (double)echoed : 0.0);
out:
	/* In reverse: the first AF_XDP socket's program goes with the last to close. */
	for (unsigned i = MAX_WORKERS; i-- > 0;)
		secho_io_close(ws[i].io);
	return rc;
}
