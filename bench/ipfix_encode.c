/*
 * bench/ipfix_encode.c - IPFIX encoding rate: secho's exporter against libfixbuf (CERT
 * NetSA, Debian's libfixbuf-dev), on the same records, one core. The measurement behind
 * docs/FLOW.md's choice of encoder.
 *
 *   secho encode   secho_ipfix_encode into a buffer (the record bytes only)
 *   secho export   secho_ipfix_record through a file: collector (messages, sets, headers,
 *                  one write(2) per message)
 *   fixbuf export  fBufAppend with an internal template equal to the export template,
 *                  to fbExporterAllocFile (stdio-buffered writes)
 * Both exporters write /dev/null (or FILE). libfixbuf's template is secho's biflow IPv4
 * template as it was when the encoder was chosen (RFC 5103 reverse elements under PEN
 * 29305, 8-byte counters); secho's records now carry more (MACs, TTLs, ToS, fragment flags,
 * TCP fields: docs/FLOW.md, "Templates and elements") in 4-byte counters, so the two encode
 * records of different sizes. Prints records per second, the median of RUNS runs.
 *
 * usage: ipfix_encode [RECORDS [RUNS [FILE]]]   (default 2000000 5 /dev/null)
 */
#include "cli/cli.h"
#include <fixbuf/public.h>
#include <glib.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flow/export/ipfix.h"
#include "sys/clock.h"

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static struct secho_flow_rec mkrec(uint32_t i)
{
	struct secho_flow_rec r;
	memset(&r, 0, sizeof(r));
	r.key.ip_version = 4;
	r.key.proto = 6;
	uint32_t s = htonl(0xc6120000u + (i & 0x1ffff)), d = htonl(0xc613ff00u + (i & 0xff));
	memcpy(r.key.src, &s, 4);
	memcpy(r.key.dst, &d, 4);
	r.key.sport = (uint16_t)(1024 + i % 60000);
	r.key.dport = 443;
	r.fwd = (struct secho_flow_dir){.packets = 10 + i % 100,
	                                .octets = 1000 + i,
	                                .first_ns = 1767225600000000000ull + i * 1000ull,
	                                .last_ns = 1767225601000000000ull + i * 1000ull,
	                                .tcp_flags = 0x1b};
	r.rev = r.fwd;
	r.end_reason = 3;
	return r;
}

/* The IPv4 biflow record in the template's order, packed: libfixbuf's internal record. */
struct __attribute__((packed)) fb_rec {
	uint32_t sip, dip;
	uint16_t sp, dp;
	uint8_t proto, ipver;
	uint16_t vlan, cvlan, icmp, flags;
	uint64_t oct, pkt, start, end;
	uint8_t reason;
	uint64_t roct, rpkt;
	uint16_t rflags;
	uint64_t rstart, rend;
	uint16_t ricmp;
};

static fbInfoElementSpec_t fb_spec[] = {
        {"sourceIPv4Address", 4, 0},
        {"destinationIPv4Address", 4, 0},
        {"sourceTransportPort", 2, 0},
        {"destinationTransportPort", 2, 0},
        {"protocolIdentifier", 1, 0},
        {"ipVersion", 1, 0},
        {"vlanId", 2, 0},
        {"dot1qCustomerVlanId", 2, 0},
        {"icmpTypeCodeIPv4", 2, 0},
        {"tcpControlBits", 2, 0},
        {"octetDeltaCount", 8, 0},
        {"packetDeltaCount", 8, 0},
        {"flowStartMilliseconds", 8, 0},
        {"flowEndMilliseconds", 8, 0},
        {"flowEndReason", 1, 0},
        {"reverseOctetDeltaCount", 8, 0},
        {"reversePacketDeltaCount", 8, 0},
        {"reverseTcpControlBits", 2, 0},
        {"reverseFlowStartMilliseconds", 8, 0},
        {"reverseFlowEndMilliseconds", 8, 0},
        {"reverseIcmpTypeCodeIPv4", 2, 0},
        FB_IESPEC_NULL,
};

static double run_fixbuf(const char *path, uint32_t n)
{
	GError *err = NULL;
	fbInfoModel_t *model = fbInfoModelAlloc();
	fbSession_t *sess = fbSessionAlloc(model);
	fbExporter_t *ex = fbExporterAllocFile(path);
	fBuf_t *buf = fBufAllocForExport(sess, ex);
	fbTemplate_t *t = fbTemplateAlloc(model);
	if (!fbTemplateAppendSpecArray(t, fb_spec, 0xffffffff, &err) ||
	    !fbSessionAddTemplate(sess, TRUE, 258, t, &err) ||
	    !fbSessionAddTemplate(sess, FALSE, 258, t, &err) ||
	    !fbSessionExportTemplates(sess, &err) || !fBufSetInternalTemplate(buf, 258, &err) ||
	    !fBufSetExportTemplate(buf, 258, &err)) {
		fprintf(stderr, "libfixbuf: %s\n", err ? err->message : "?");
		exit(1);
	}
	fbSessionSetDomain(sess, 7);
	double t0 = secho_mono_s();
	for (uint32_t i = 0; i < n; i++) {
		struct secho_flow_rec r = mkrec(i);
		struct fb_rec f;
		memcpy(&f.sip, r.key.src, 4);
		f.sip = ntohl(f.sip); /* libfixbuf takes addresses in host order */
		memcpy(&f.dip, r.key.dst, 4);
		f.dip = ntohl(f.dip);
		f.sp = r.key.sport;
		f.dp = r.key.dport;
		f.proto = r.key.proto;
		f.ipver = 4;
		f.vlan = f.cvlan = f.icmp = 0;
		f.flags = r.fwd.tcp_flags;
		f.oct = r.fwd.octets;
		f.pkt = r.fwd.packets;
		f.start = r.fwd.first_ns / 1000000;
		f.end = r.fwd.last_ns / 1000000;
		f.reason = r.end_reason;
		f.roct = r.rev.octets;
		f.rpkt = r.rev.packets;
		f.rflags = r.rev.tcp_flags;
		f.rstart = r.rev.first_ns / 1000000;
		f.rend = r.rev.last_ns / 1000000;
		f.ricmp = secho_flow_rec_rev_icmp(&r);
		if (!fBufAppend(buf, (uint8_t *)&f, sizeof(f), &err)) {
			fprintf(stderr, "libfixbuf: %s\n", err->message);
			exit(1);
		}
	}
	fBufEmit(buf, &err);
	double dt = secho_mono_s() - t0;
	fBufFree(buf);
	fbInfoModelFree(model);
	return n / dt;
}

static double run_secho(const char *path, uint32_t n)
{
	struct secho_ipfix *x;
	struct secho_ipfix_cfg cfg = {.odid = 7, .biflow = true};
	char url[512], err[256];
	snprintf(url, sizeof(url), "file:%s", path);
	if (secho_ipfix_new(&x, &cfg) || secho_ipfix_add_collector(x, url, err, sizeof(err))) {
		fprintf(stderr, "secho: %s\n", err);
		exit(1);
	}
	uint64_t now = 1800000000ull * 1000000000ull;
	double t0 = secho_mono_s();
	for (uint32_t i = 0; i < n; i++) {
		struct secho_flow_rec r = mkrec(i);
		secho_ipfix_record(x, &r, now);
	}
	secho_ipfix_close(x, now, NULL, 0);
	return n / (secho_mono_s() - t0);
}

static volatile uint8_t sink;

static double run_encode(uint32_t n)
{
	uint8_t b[SECHO_IPFIX_REC_MAX];
	uint16_t tid;
	double t0 = secho_mono_s();
	for (uint32_t i = 0; i < n; i++) {
		struct secho_flow_rec r = mkrec(i);
		secho_ipfix_encode(true, &r, b, &tid);
		sink ^= b[i & 63];
	}
	return n / (secho_mono_s() - t0);
}

int main(int argc, char **argv)
{
	uint64_t n64 = 2000000, runs64 = 5;
	const char *path = argc > 3 ? argv[3] : "/dev/null";
	if ((argc > 1 && !cli_parse_u64(argv[1], 1, UINT32_MAX, &n64)) ||
	    (argc > 2 && !cli_parse_u64(argv[2], 1, 99, &runs64)) || argc > 4) {
		fprintf(stderr, "usage: ipfix_encode [RECORDS [RUNS [FILE]]]\n");
		return 2;
	}
	uint32_t n = (uint32_t)n64;
	int runs = (int)runs64;
	double a[99] = {0}, b[99] = {0}, c[99] = {0};
	for (int r = 0; r < runs; r++) {
		a[r] = run_encode(n);
		b[r] = run_secho(path, n);
		c[r] = run_fixbuf(path, n);
	}
	qsort(a, (size_t)runs, sizeof(double), dcmp);
	qsort(b, (size_t)runs, sizeof(double), dcmp);
	qsort(c, (size_t)runs, sizeof(double), dcmp);
	printf("IPv4 biflow records, %u per run, median of %d runs (records per second)\n", n,
	       runs);
	printf("secho encode   %12.0f\n", a[runs / 2]);
	printf("secho export   %12.0f\n", b[runs / 2]);
	printf("fixbuf export  %12.0f\n", c[runs / 2]);
	printf("secho/fixbuf   %12.2fx\n", b[runs / 2] / c[runs / 2]);
	return 0;
}
