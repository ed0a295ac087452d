/*
 * tests/unit/test_io_pcap.c - the pcap backend end to end, and the generic io.c layer.
 *
 * Writes a capture of random Ethernet frames, reads it back through secho_io_rx_burst
 * (bytes, lengths, head/tailroom), answers every frame with a response 32 bytes longer
 * (16 bytes in front, 16 behind, the endpoint's shape) both in place and in a scratch
 * buffer, reads --pcap-out back and compares frame by frame, timestamps included. Also the
 * end-of-input report, refused reservations, and the error paths of open.
 */
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "secho/io.h"

#define MAXF 1514u

struct frame {
	struct timeval ts;
	uint32_t len;
	uint8_t b[MAXF];
};

static char dir[64];

/* Write n random frames to path. Returns 0 or -1. */
static int write_capture(const char *path, struct frame *f, unsigned n, int linktype)
{
	pcap_t *dead = pcap_open_dead(linktype, 65535);
	pcap_dumper_t *d = dead ? pcap_dump_open(dead, path) : NULL;

	if (!d) {
		if (dead)
			pcap_close(dead);
		return -1;
	}
	for (unsigned i = 0; i < n; i++) {
		struct pcap_pkthdr h = {.ts = f[i].ts, .caplen = f[i].len, .len = f[i].len};

		pcap_dump((u_char *)d, &h, f[i].b);
	}
	pcap_dump_close(d);
	pcap_close(dead);
	return 0;
}

static void make_frames(struct frame *f, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		/* Sizes cover the minimum header, tiny and full frames. */
		f[i].len = i == 0 ? 14 : i == 1 ? MAXF : (uint32_t)t_randrange(14, MAXF);
		t_randbytes(f[i].b, f[i].len);
		f[i].ts.tv_sec = 1700000000 + (long)i;
		f[i].ts.tv_usec = (long)t_randrange(0, 999999);
	}
}

/* The response the test builds for a request: 16 x 0xA5, the request, 16 x 0x5A. */
static void expected_response(const struct frame *rq, uint8_t *out)
{
	memset(out, 0xa5, 16);
	memcpy(out + 16, rq->b, rq->len);
	memset(out + 16 + rq->len, 0x5a, 16);
}

static void round_trip(bool tx_copy, struct frame *f, unsigned n)
{
	char in[96], out[96];
	char err[256];
	struct secho_io_pkt pkts[SECHO_IO_BURST];
	unsigned got = 0, bursts = 0;
	bool data_ok = true, room_ok = true;

	t_begin("pcap round trip, responses %s (%u frames)", tx_copy ? "copied" : "in place", n);
	snprintf(in, sizeof(in), "%s/in.pcap", dir);
	snprintf(out, sizeof(out), "%s/out-%d.pcap", dir, tx_copy);
	T_CHECK(write_capture(in, f, n, DLT_EN10MB) == 0, "write %s", in);

	struct secho_io_cfg cfg = {
	        .kind = SECHO_IO_PCAP, .pcap_in = in, .pcap_out = out, .tx_copy = tx_copy};
	struct secho_io *io = secho_io_open(&cfg, err, sizeof(err));

	if (!T_CHECK(io != NULL, "open: %s", err)) {
		t_end();
		return;
	}
	T_CHECK(secho_io_tx_in_place(io) == !tx_copy, "in-place flag");
	T_CHECK(secho_io_fd(io) == -1, "pcap has no fd");
	T_CHECK(strstr(secho_io_describe(io), "pcap") != NULL, "description: %s",
	        secho_io_describe(io));
	while (!secho_io_eof(io) && bursts < 10000) {
		unsigned k = secho_io_rx_burst(io, pkts, SECHO_IO_BURST);

		bursts++;
		T_CHECK(k <= SECHO_IO_BURST, "burst of %u", k);
		for (unsigned i = 0; i < k && got + i < n; i++) {
			const struct frame *rq = &f[got + i];
			struct secho_io_pkt *p = &pkts[i];

			if (p->len != rq->len || memcmp(p->data, rq->b, rq->len) != 0)
				data_ok = false;
			if (p->headroom < 16 || p->tailroom < 32)
				room_ok = false;
			uint8_t *o = secho_io_tx_slot(io, p, p->len + 32, 16);

			if (!o) {
				T_CHECK(0, "tx_slot for frame %u", got + i);
				continue;
			}
			T_CHECK(tx_copy ? o != p->data - 16 : o == p->data - 16,
			        "slot position for frame %u", got + i);
			if (tx_copy)
				memcpy(o + 16, p->data, p->len);
			/* In place the request already sits at o + 16. */
			memset(o, 0xa5, 16);
			memset(o + 16 + p->len, 0x5a, 16);
			secho_io_tx_commit(io, p, p->len + 32);
		}
		secho_io_tx_flush(io);
		secho_io_rx_release(io, pkts, k);
		got += k;
		if (!k)
			T_CHECK(secho_io_wait(io, 100) == 0 || secho_io_eof(io), "wait at end");
	}
	T_CHECK(got == n, "read %u frames, wrote %u", got, n);
	T_CHECK(data_ok, "frames read back unchanged");
	T_CHECK(room_ok, "headroom >= 16 and tailroom >= 32");
	T_CHECK(secho_io_eof(io), "end of input reported");
	T_CHECK(secho_io_rx_burst(io, pkts, SECHO_IO_BURST) == 0, "nothing after the end");
	T_CHECK(secho_io_wait(io, 100) == 0, "wait returns 0 at the end");

	struct secho_io_stats st;

	secho_io_get_stats(io, &st);
	T_CHECK(st.rx == n && st.tx == n, "stats rx %llu tx %llu", (unsigned long long)st.rx,
	        (unsigned long long)st.tx);
	T_CHECK(st.ring_full == 0 && st.rx_dropped_by_kernel == 0, "no drops");
	secho_io_close(io);

	/* Read the output back. */
	char ebuf[PCAP_ERRBUF_SIZE];
	pcap_t *rd = pcap_open_offline(out, ebuf);
	unsigned m = 0;
	static uint8_t exp[MAXF + 32];

	if (T_CHECK(rd != NULL, "open %s: %s", out, ebuf)) {
		struct pcap_pkthdr *h;
		const u_char *d;

		T_CHECK(pcap_datalink(rd) == DLT_EN10MB, "output link type Ethernet");
		while (pcap_next_ex(rd, &h, &d) == 1) {
			if (m < n) {
				expected_response(&f[m], exp);
				T_CHECK(h->caplen == f[m].len + 32 && h->len == h->caplen,
				        "response %u length %u", m, h->caplen);
				T_CHECK(h->caplen != f[m].len + 32 || !memcmp(d, exp, h->caplen),
				        "response %u bytes", m);
				T_CHECK(h->ts.tv_sec == f[m].ts.tv_sec &&
				                h->ts.tv_usec == f[m].ts.tv_usec,
				        "response %u keeps the request's timestamp", m);
			}
			m++;
		}
		pcap_close(rd);
	}
	T_CHECK(m == n, "%u responses in pcap-out, want %u", m, n);
	unlink(out);
	unlink(in);
	t_end();
}

static void refusals(struct frame *f)
{
	char in[96], err[256];
	struct secho_io_pkt pkts[SECHO_IO_BURST];

	t_begin("pcap refusals and errors");
	snprintf(in, sizeof(in), "%s/one.pcap", dir);
	T_CHECK(write_capture(in, f, 3, DLT_EN10MB) == 0, "write");

	struct secho_io_cfg cfg = {.kind = SECHO_IO_PCAP, .pcap_in = in};
	struct secho_io *io = secho_io_open(&cfg, err, sizeof(err));

	if (T_CHECK(io != NULL, "open without output: %s", err)) {
		unsigned k = secho_io_rx_burst(io, pkts, 2);

		T_CHECK(k == 2, "burst limited to max (got %u)", k);
		T_CHECK(!secho_io_eof(io), "not at the end yet");
		T_CHECK(secho_io_tx_slot(io, &pkts[0], pkts[0].len + 32, pkts[0].headroom + 1) ==
		                NULL,
		        "front beyond headroom refused");
		T_CHECK(secho_io_tx_slot(io, &pkts[0], pkts[0].len + pkts[0].tailroom + 16 + 1,
		                         16) == NULL,
		        "length beyond tailroom refused");
		uint8_t *o = secho_io_tx_slot(io, &pkts[0], pkts[0].len, 0);

		T_CHECK(o == pkts[0].data, "front 0 in place is the frame itself");
		if (o)
			secho_io_tx_commit(io, &pkts[0], pkts[0].len); /* no output: discarded */
		secho_io_rx_release(io, pkts, k);
		k = secho_io_rx_burst(io, pkts, SECHO_IO_BURST);
		T_CHECK(k == 1, "last frame (got %u)", k);
		secho_io_rx_release(io, pkts, k);
		T_CHECK(secho_io_rx_burst(io, pkts, SECHO_IO_BURST) == 0 && secho_io_eof(io),
		        "end");
		struct secho_io_stats st;

		secho_io_get_stats(io, &st);
		T_CHECK(st.ring_full == 2, "two refused reservations counted (%llu)",
		        (unsigned long long)st.ring_full);
		secho_io_close(io);
	}

	/* Missing file, wrong link type. */
	char missing[96];

	snprintf(missing, sizeof(missing), "%s/does-not-exist.pcap", dir);
	cfg.pcap_in = missing;
	err[0] = 0;
	T_CHECK(secho_io_open(&cfg, err, sizeof(err)) == NULL, "missing input refused");
	T_CHECK(strstr(err, "does-not-exist") != NULL, "error names the file: %s", err);
	T_CHECK(write_capture(in, f, 1, DLT_RAW) == 0, "write raw-IP capture");
	cfg.pcap_in = in;
	T_CHECK(secho_io_open(&cfg, err, sizeof(err)) == NULL, "non-Ethernet capture refused");
	T_CHECK(strstr(err, "link type") != NULL, "error says link type: %s", err);
	unlink(in);

	/* No input at all: at the end immediately. */
	struct secho_io_cfg none = {.kind = SECHO_IO_PCAP};

	io = secho_io_open(&none, err, sizeof(err));
	if (T_CHECK(io != NULL, "open with no files: %s", err)) {
		T_CHECK(secho_io_eof(io), "no input is the end");
		T_CHECK(secho_io_rx_burst(io, pkts, SECHO_IO_BURST) == 0, "no frames");
		secho_io_close(io);
	}
	t_end();
}

/* Standalone responses (rx == NULL), as the offload engine's completions send them. */
static void standalone(void)
{
	char out[96], err[256], ebuf[PCAP_ERRBUF_SIZE];
	uint8_t want[3][200];
	unsigned m = 0;

	t_begin("pcap standalone responses (tx_slot without a request)");
	snprintf(out, sizeof(out), "%s/solo.pcap", dir);
	struct secho_io_cfg cfg = {.kind = SECHO_IO_PCAP, .pcap_out = out};
	struct secho_io *io = secho_io_open(&cfg, err, sizeof(err));

	if (!T_CHECK(io != NULL, "open: %s", err)) {
		t_end();
		return;
	}
	for (unsigned i = 0; i < 3; i++) {
		uint32_t len = 60 + 50 * i;
		uint8_t *o = secho_io_tx_slot(io, NULL, len, 16);

		if (!o) {
			T_CHECK(0, "standalone slot %u", i);
			continue;
		}
		t_randbytes(want[i], len);
		memcpy(o, want[i], len);
		secho_io_tx_commit(io, NULL, len);
	}
	secho_io_tx_flush(io);
	T_CHECK(secho_io_tx_slot(io, NULL, 1u << 20, 0) == NULL, "oversized standalone refused");
	secho_io_close(io);
	pcap_t *rd = pcap_open_offline(out, ebuf);

	if (T_CHECK(rd != NULL, "open %s: %s", out, ebuf)) {
		struct pcap_pkthdr *h;
		const u_char *d;

		while (pcap_next_ex(rd, &h, &d) == 1) {
			if (m < 3)
				T_CHECK(h->caplen == 60 + 50 * m && !memcmp(d, want[m], h->caplen),
				        "standalone frame %u", m);
			m++;
		}
		pcap_close(rd);
	}
	T_CHECK(m == 3, "%u standalone frames written, want 3", m);
	unlink(out);
	t_end();
}

static void generic(void)
{
	enum secho_io_kind k = SECHO_IO_PCAP;
	char err[256];

	t_begin("io kind names and open arguments");
	T_CHECK(secho_io_kind_parse("auto", &k) && k == SECHO_IO_AUTO, "auto");
	T_CHECK(secho_io_kind_parse("xdp", &k) && k == SECHO_IO_XDP, "xdp");
	T_CHECK(secho_io_kind_parse("packet", &k) && k == SECHO_IO_PACKET, "packet");
	T_CHECK(secho_io_kind_parse("pcap", &k) && k == SECHO_IO_PCAP, "pcap");
	T_CHECK(!secho_io_kind_parse("dpdk", &k) && !secho_io_kind_parse("", &k) &&
	                !secho_io_kind_parse(NULL, &k),
	        "unknown names refused");
	T_CHECK(!strcmp(secho_io_kind_name(SECHO_IO_PACKET), "packet"), "name");
	T_CHECK(secho_io_open(NULL, err, sizeof(err)) == NULL, "NULL cfg");

	struct secho_io_cfg c = {.kind = SECHO_IO_PACKET};

	T_CHECK(secho_io_open(&c, err, sizeof(err)) == NULL && strstr(err, "interface"),
	        "packet without interface: %s", err);
	c.kind = SECHO_IO_XDP;
	c.ifname = "nosuchif0";
	T_CHECK(secho_io_open(&c, err, sizeof(err)) == NULL && strstr(err, "nosuchif0"),
	        "xdp on a missing interface: %s", err);
	c.kind = SECHO_IO_AUTO;
	c.ifname = NULL;
	T_CHECK(secho_io_open(&c, err, sizeof(err)) == NULL, "auto with nothing");
	c.pcap_out = "/nonexistent-dir/x.pcap";
	T_CHECK(secho_io_open(&c, err, sizeof(err)) == NULL && strstr(err, "pcap-out"),
	        "auto with an unwritable pcap: %s", err);
	secho_io_close(NULL);
	t_end();
}

int main(void)
{
	static struct frame f[300];
	unsigned n = getenv("SECHO_TEST_QUICK") ? 70 : 300;

	t_seed_init("test_io_pcap");
	snprintf(dir, sizeof(dir), "/tmp/secho-io-pcap.XXXXXX");
	if (!mkdtemp(dir)) {
		t_unavailable("cannot create a temporary directory");
		return t_exit();
	}
	make_frames(f, n);
	round_trip(false, f, n);
	round_trip(true, f, n);
	refusals(f);
	standalone();
	generic();
	rmdir(dir);
	return t_exit();
}
