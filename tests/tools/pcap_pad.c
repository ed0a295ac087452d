/*
 * tests/tools/pcap_pad.c - copy a capture file, padding every record that was cut short
 * (captured length below the length on the wire) with zero bytes back to its length on
 * the wire, so that a replay sends the frame as long as it was. For the live flow tests:
 * a meter counts IP octets from the IP header, and a frame shorter than its IP length is
 * malformed on a real wire. Timestamps and every other record are copied as they are.
 *
 * usage: pcap_pad IN.pcap OUT.pcap
 * Prints "padded N of M records" and exits 0; 1 on a read or write error; 2 bad usage.
 */
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc != 3 || !strcmp(argv[1], "--help")) {
		fprintf(stderr, "usage: pcap_pad IN.pcap OUT.pcap\n");
		return 2;
	}
	char eb[PCAP_ERRBUF_SIZE];
	pcap_t *in =
	        pcap_open_offline_with_tstamp_precision(argv[1], PCAP_TSTAMP_PRECISION_NANO, eb);
	if (!in) {
		fprintf(stderr, "pcap_pad: %s\n", eb);
		return 1;
	}
	pcap_t *dead = pcap_open_dead_with_tstamp_precision(pcap_datalink(in), 262144,
	                                                    PCAP_TSTAMP_PRECISION_NANO);
	pcap_dumper_t *out = dead ? pcap_dump_open(dead, argv[2]) : NULL;
	if (!out) {
		fprintf(stderr, "pcap_pad: %s: %s\n", argv[2],
		        dead ? pcap_geterr(dead) : "no memory");
		pcap_close(in);
		return 1;
	}
	static uint8_t buf[262144];
	struct pcap_pkthdr *h;
	const u_char *d;
	unsigned long n = 0, padded = 0;
	int r;
	while ((r = pcap_next_ex(in, &h, &d)) == 1) {
		struct pcap_pkthdr o = *h;
		if (h->caplen < h->len && h->len <= sizeof(buf)) {
			memcpy(buf, d, h->caplen);
			memset(buf + h->caplen, 0, h->len - h->caplen);
			o.caplen = h->len;
			d = buf;
			padded++;
		}
		pcap_dump((u_char *)out, &o, d);
		n++;
	}
	int rc = 0;
	if (r == PCAP_ERROR) {
		fprintf(stderr, "pcap_pad: %s\n", pcap_geterr(in));
		rc = 1;
	}
	if (pcap_dump_flush(out)) {
		fprintf(stderr, "pcap_pad: %s: write error\n", argv[2]);
		rc = 1;
	}
	pcap_dump_close(out);
	pcap_close(dead);
	pcap_close(in);
	printf("padded %lu of %lu records\n", padded, n);
	return rc;
}
