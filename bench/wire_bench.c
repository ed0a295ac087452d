/*
 * bench/wire_bench.c - TSC cycles per parse: the endpoint's request parse
 * (secho_wire_parse) and the L2-L4 dissector under it (secho_dissect); and per response
 * header written (secho_wire_rebuild, out of place, without the checksum finalize) and
 * per ARP reply (secho_wire_arp_reply).
 *
 *   wire_bench [--iters N] [--repeat R] [--json]
 *
 * Frames: a request to port 4000 with a 64-byte and a 1440-byte payload, valid IPv4 and
 * UDP checksums (the UDP checksum over the whole datagram is most of the 1440-byte parse);
 * for the dissector also an IPv6/TCP frame and a QinQ IPv4/UDP frame. Each figure is the
 * median over R runs of N back-to-back parses of the same frame (hot in cache: what the
 * parse itself costs, not the frame's first touch), in TSC cycles per parse.
 */
#include "cli/cli.h"
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "secho/dissect.h"
#include "secho/tsc.h"
#include "secho/wire.h"

static const char usage[] =
        "usage: wire_bench [--iters N] [--repeat R] [--json]\n"
        "\n"
        "TSC cycles per parse of one frame, parsed N times back to back; the median of R runs.\n"
        "  wire_parse 64 / 1440    the endpoint's request parse, 64- and 1440-byte payloads\n"
        "  dissect ...             the L2-L4 dissector alone on the same and other frames\n"
        "  rebuild, arp_reply      a response's headers written; an ARP request answered\n"
        "\n"
        "  --iters N     parses per run (default 200000, 1..100000000)\n"
        "  --repeat R    runs, median kept (default 9, 1..99)\n"
        "  --json        one JSON object instead of the table\n"
        "  -h, --help    this text\n";

static const uint8_t EP_MAC[6] = {0x02, 0, 0, 0, 0, 0x02};
static const uint8_t HOST_MAC[6] = {0x02, 0, 0, 0, 0, 0x01};

static void wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* A valid request to 192.0.2.2:4000 from 192.0.2.1:1234 with plen payload bytes. */
static size_t build_req(uint8_t *f, size_t plen)
{
	memcpy(f, EP_MAC, 6);
	memcpy(f + 6, HOST_MAC, 6);
	wr16(f + 12, SECHO_ETHERTYPE_IPV4);
	uint8_t *ip = f + 14, *udp = f + 34;
	memset(ip, 0, 28);
	ip[0] = 0x45;
	wr16(ip + 2, (uint16_t)(28 + plen));
	wr16(ip + 4, 0x1234);
	wr16(ip + 6, SECHO_IP4_DF);
	ip[8] = 64;
	ip[9] = SECHO_IPPROTO_UDP;
	inet_pton(AF_INET, "192.0.2.1", ip + 12);
	inet_pton(AF_INET, "192.0.2.2", ip + 16);
	wr16(udp, 1234);
	wr16(udp + 2, SECHO_PORT_STREAM_DEFAULT);
	wr16(udp + 4, (uint16_t)(8 + plen));
	for (size_t i = 0; i < plen; i++)
		f[42 + i] = (uint8_t)(i * 7);
	wr16(ip + 10, secho_ip4_csum(ip));
	uint32_t s, d;
	memcpy(&s, ip + 12, 4);
	memcpy(&d, ip + 16, 4);
	wr16(udp + 6, secho_udp4_csum(s, d, udp, 8 + plen));
	return 42 + plen;
}

/* IPv6 / TCP (20-byte header, no options) with plen payload bytes. */
static size_t build_ip6_tcp(uint8_t *f, size_t plen)
{
	memcpy(f, EP_MAC, 6);
	memcpy(f + 6, HOST_MAC, 6);
	wr16(f + 12, 0x86dd);
	uint8_t *ip = f + 14, *tcp = f + 54;
	memset(ip, 0, 60);
	ip[0] = 0x60;
	wr16(ip + 4, (uint16_t)(20 + plen));
	ip[6] = 6;
	ip[7] = 64;
	inet_pton(AF_INET6, "2001:db8::1", ip + 8);
	inet_pton(AF_INET6, "2001:db8::2", ip + 24);
	wr16(tcp, 40000);
	wr16(tcp + 2, 443);
	tcp[12] = 5 << 4;
	tcp[13] = 0x18;
	memset(f + 74, 0xab, plen);
	return 74 + plen;
}

/* QinQ (0x88a8 then 0x8100) around the 64-byte request. */
static size_t build_qinq(uint8_t *f)
{
	uint8_t tmp[2048];
	size_t n = build_req(tmp, 64);
	memcpy(f, tmp, 12);
	wr16(f + 12, 0x88a8);
	wr16(f + 14, 100);
	wr16(f + 16, 0x8100);
	wr16(f + 18, 200);
	memcpy(f + 20, tmp + 12, n - 12);
	return n + 8;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static uint64_t iters = 200000, repeat = 9;
static volatile unsigned sink;

static double run_wire(const struct secho_wire_cfg *cfg, const uint8_t *f, size_t len)
{
	double v[99] = {0};
	for (uint64_t r = 0; r < repeat; r++) {
		struct secho_wire_req req;
		unsigned acc = 0;
		uint64_t t0 = secho_tsc_begin();
		for (uint64_t i = 0; i < iters; i++)
			acc += (unsigned)secho_wire_parse(cfg, f, len, &req) + req.payload_len;
		uint64_t t1 = secho_tsc_end();
		sink = acc;
		v[r] = (double)(t1 - t0) / (double)iters;
	}
	qsort(v, repeat, sizeof(v[0]), cmp_double);
	return v[repeat / 2];
}

static double run_dissect(const uint8_t *f, size_t len)
{
	double v[99] = {0};
	for (uint64_t r = 0; r < repeat; r++) {
		struct secho_dissect d;
		unsigned acc = 0;
		uint64_t t0 = secho_tsc_begin();
		for (uint64_t i = 0; i < iters; i++)
			acc += (unsigned)secho_dissect(f, len, &d) + d.l4_off;
		uint64_t t1 = secho_tsc_end();
		sink = acc;
		v[r] = (double)(t1 - t0) / (double)iters;
	}
	qsort(v, repeat, sizeof(v[0]), cmp_double);
	return v[repeat / 2];
}

/* Response headers for req into out (out of place: the payload is not moved). */
static double run_rebuild(const struct secho_wire_cfg *cfg, const struct secho_wire_req *req)
{
	static const uint8_t shdr[SECHO_SHDR_LEN] = {1};
	static uint8_t out[2048];
	double v[99] = {0};
	for (uint64_t r = 0; r < repeat; r++) {
		unsigned acc = 0;
		uint64_t t0 = secho_tsc_begin();
		for (uint64_t i = 0; i < iters; i++)
			acc += (unsigned)secho_wire_rebuild(cfg, req, NULL, shdr, (uint16_t)i, out,
			                                    sizeof(out));
		uint64_t t1 = secho_tsc_end();
		sink = acc + out[25];
		v[r] = (double)(t1 - t0) / (double)iters;
	}
	qsort(v, repeat, sizeof(v[0]), cmp_double);
	return v[repeat / 2];
}

/* An ARP request for cfg->ip from HOST_MAC, answered into another buffer. */
static double run_arp(const struct secho_wire_cfg *cfg)
{
	static const uint8_t req[42] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0,
	                                0x01, 0x08, 0x06, 0,    1,    0x08, 0,    6, 4, 0, 1,
	                                0x02, 0,    0,    0,    0,    0x01, 192,  0, 2, 1, 0,
	                                0,    0,    0,    0,    0,    192,  0,    2, 2};
	static uint8_t out[64];
	double v[99] = {0};
	if (secho_wire_arp_reply(cfg, req, sizeof(req), out, sizeof(out)) != SECHO_ETH_MIN_FRAME) {
		fprintf(stderr, "wire_bench: the benchmark ARP request is not answered\n");
		exit(1);
	}
	for (uint64_t r = 0; r < repeat; r++) {
		unsigned acc = 0;
		uint64_t t0 = secho_tsc_begin();
		for (uint64_t i = 0; i < iters; i++)
			acc += (unsigned)secho_wire_arp_reply(cfg, req, sizeof(req), out,
			                                      sizeof(out));
		uint64_t t1 = secho_tsc_end();
		sink = acc + out[21];
		v[r] = (double)(t1 - t0) / (double)iters;
	}
	qsort(v, repeat, sizeof(v[0]), cmp_double);
	return v[repeat / 2];
}

int main(int argc, char **argv)
{
	int json = 0;
	static const struct option lo[] = {{"iters", required_argument, NULL, 'n'},
	                                   {"repeat", required_argument, NULL, 'r'},
	                                   {"json", no_argument, NULL, 'j'},
	                                   {"help", no_argument, NULL, 'h'},
	                                   {NULL, 0, NULL, 0}};
	for (int c; (c = getopt_long(argc, argv, "h", lo, NULL)) != -1;) {
		switch (c) {
		case 'n':
			if (!cli_parse_u64(optarg, 1, 100000000, &iters)) {
				fprintf(stderr, "wire_bench: --iters wants 1..100000000\n");
				return 2;
			}
			break;
		case 'r':
			if (!cli_parse_u64(optarg, 1, 99, &repeat)) {
				fprintf(stderr, "wire_bench: --repeat wants 1..99\n");
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
		fprintf(stderr, "wire_bench: unexpected argument %s (see --help)\n", argv[optind]);
		return 2;
	}
	struct secho_wire_cfg cfg;
	secho_wire_cfg_defaults(&cfg);
	memcpy(cfg.mac, EP_MAC, 6);
	inet_pton(AF_INET, "192.0.2.2", &cfg.ip);
	cfg.netmask = htonl(0xffffff00u);

	static uint8_t f64[2048], f1440[2048], f6[2048], fq[2048];
	size_t n64 = build_req(f64, 64), n1440 = build_req(f1440, 1440);
	size_t n6 = build_ip6_tcp(f6, 64), nq = build_qinq(fq);
	struct secho_wire_req req;
	if (secho_wire_parse(&cfg, f64, n64, &req) != SECHO_WIRE_OK ||
	    secho_wire_parse(&cfg, f1440, n1440, &req) != SECHO_WIRE_OK) {
		fprintf(stderr, "wire_bench: the benchmark requests do not parse\n");
		return 1;
	}
	double w64 = run_wire(&cfg, f64, n64), w1440 = run_wire(&cfg, f1440, n1440);
	double d64 = run_dissect(f64, n64), d1440 = run_dissect(f1440, n1440);
	double d6 = run_dissect(f6, n6), dq = run_dissect(fq, nq);
	(void)secho_wire_parse(&cfg, f64, n64, &req);
	double rb = run_rebuild(&cfg, &req), arp = run_arp(&cfg);
	if (json) {
		printf("{\"wire_parse_64\":%.1f,\"wire_parse_1440\":%.1f,\"dissect_ip4_udp_64\":%."
		       "1f,"
		       "\"dissect_ip4_udp_1440\":%.1f,\"dissect_ip6_tcp\":%.1f,"
		       "\"dissect_qinq\":%.1f,\"rebuild\":%.1f,\"arp_reply\":%.1f,\"iters\":%llu,"
		       "\"repeat\":%llu}\n",
		       w64, w1440, d64, d1440, d6, dq, rb, arp, (unsigned long long)iters,
		       (unsigned long long)repeat);
		return 0;
	}
	printf("TSC cycles per parse (median of %llu runs of %llu parses)\n",
	       (unsigned long long)repeat, (unsigned long long)iters);
	printf("  wire_parse  request, 64 B payload     %8.1f\n", w64);
	printf("  wire_parse  request, 1440 B payload   %8.1f\n", w1440);
	printf("  dissect     IPv4/UDP, 64 B payload    %8.1f\n", d64);
	printf("  dissect     IPv4/UDP, 1440 B payload  %8.1f\n", d1440);
	printf("  dissect     IPv6/TCP, 64 B payload    %8.1f\n", d6);
	printf("  dissect     QinQ IPv4/UDP, 64 B       %8.1f\n", dq);
	printf("  rebuild     response headers          %8.1f\n", rb);
	printf("  arp_reply   request answered          %8.1f\n", arp);
	return 0;
}
