/*
 * src/io/pcap.c - offline backend: frames from a capture file in, TX frames to another.
 *
 * rx_burst() reads up to the burst size from --pcap-in (DLT_EN10MB only) into slots that
 * keep PCAP_HEADROOM bytes in front and PCAP_TAILROOM behind each frame, so the endpoint's
 * in-place path runs exactly as on AF_XDP. With tx_copy, responses go to a separate scratch
 * slot instead (the AF_PACKET TX ring path). Every committed response is written to
 * --pcap-out at once with the timestamp of the request it answers, so output files are
 * reproducible. After the last frame, rx_burst returns 0 and secho_io_eof() turns true.
 *
 * A malformed file is an input error (secho_io_input_error), not a drop: a truncated
 * record, or one whose captured length exceeds the file's snapshot length. libpcap
 * reports the first and silently cuts the second to the snapshot length, so for classic
 * pcap files the file offset is compared with what the record's header announced. Valid
 * records longer than PCAP_MAXFRAME (no Ethernet interface the endpoint serves carries
 * them) are skipped and counted as drops.
 */
#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/io_inner.h"

#define PCAP_HEADROOM 256u
#define PCAP_TAILROOM 256u
#define PCAP_MAXFRAME 9216u /* jumbo frames at most; longer records are skipped */
#define PCAP_SLOT     (PCAP_HEADROOM + PCAP_MAXFRAME + PCAP_TAILROOM)

struct pcap_io {
	struct secho_io io;
	pcap_t *in;
	pcap_t *dead; /* pcap_dump needs a handle with the output link type */
	pcap_dumper_t *out;
	bool tx_copy;
	uint8_t *slot_open; /* reserved response buffer */
	uint64_t skipped;   /* valid records too long for any Ethernet MTU served */
	uint64_t records;   /* records read so far (numbered from 1 in messages) */
	FILE *file;         /* classic pcap: libpcap's stream, whose offset checks lengths */
	struct timeval ts[SECHO_IO_BURST];
	uint8_t rx[SECHO_IO_BURST][PCAP_SLOT];
	uint8_t tx[SECHO_IO_BURST][PCAP_SLOT];
	uint8_t solo[PCAP_SLOT]; /* standalone responses (tx_slot with rx == NULL) */
};

/* The input is done (end of file or an input error). */
static void in_close(struct pcap_io *p)
{
	pcap_close(p->in);
	p->in = NULL;
	p->file = NULL; /* libpcap's stream, closed with it */
}

static unsigned pcap_rx_burst(struct secho_io *io, struct secho_io_pkt *pkts, unsigned max)
{
	struct pcap_io *p = (struct pcap_io *)io;
	unsigned n = 0;

	if (max > SECHO_IO_BURST)
		max = SECHO_IO_BURST;
	while (p->in && n < max) {
		struct pcap_pkthdr *h;
		const u_char *d;
		long at = p->file ? ftell(p->file) : -1;
		int r = pcap_next_ex(p->in, &h, &d);

		if (r == PCAP_ERROR_BREAK) { /* end of file */
			in_close(p);
			break;
		}
		if (r == PCAP_ERROR) {
			secho_io_err(io->input_error, sizeof(io->input_error),
			             "pcap-in: record %llu: %s (the file is corrupt)",
			             (unsigned long long)p->records + 1, pcap_geterr(p->in));
			in_close(p);
			break;
		}
		if (r != 1)
			continue;
		p->records++;
		/* Classic pcap: a record is its 16-byte header and caplen bytes. More consumed
		 * means libpcap cut a record longer than the snapshot length. */
		if (at >= 0 && ftell(p->file) - at != 16 + (long)h->caplen) {
			secho_io_err(
			        io->input_error, sizeof(io->input_error),
			        "pcap-in: record %llu: captured length %ld bytes, more than the "
			        "file's snapshot length %d (the file is corrupt)",
			        (unsigned long long)p->records, ftell(p->file) - at - 16,
			        pcap_snapshot(p->in));
			in_close(p);
			break;
		}
		if (h->caplen > PCAP_MAXFRAME) {
			p->skipped++;
			continue;
		}
		uint8_t *buf = p->rx[n] + PCAP_HEADROOM;

		memcpy(buf, d, h->caplen);
		p->ts[n] = h->ts;
		pkts[n].data = buf;
		pkts[n].len = h->caplen;
		pkts[n].headroom = PCAP_HEADROOM;
		pkts[n].tailroom = PCAP_MAXFRAME - h->caplen + PCAP_TAILROOM;
		pkts[n].flags = 0;
		pkts[n].vlan = 0; /* a capture's frames carry their tags */
		pkts[n].handle = n;
		pkts[n].ts_ns =
		        (uint64_t)h->ts.tv_sec * 1000000000ull + (uint64_t)h->ts.tv_usec * 1000u;
		n++;
	}
	if (!p->in && !n)
		io->eof = true;
	return n;
}

static uint8_t *pcap_tx_slot(struct secho_io *io, struct secho_io_pkt *rx, uint32_t len,
                             uint32_t front)
{
	struct pcap_io *p = (struct pcap_io *)io;

	if (!rx) {
		if (len > PCAP_SLOT)
			return NULL;
		p->slot_open = p->solo;
		return p->slot_open;
	}
	if (rx->handle >= SECHO_IO_BURST)
		return NULL;
	if (p->tx_copy) {
		if (len > PCAP_SLOT)
			return NULL;
		p->slot_open = p->tx[rx->handle];
		return p->slot_open;
	}
	if (front > rx->headroom || len > (uint64_t)front + rx->len + rx->tailroom)
		return NULL;
	p->slot_open = rx->data - front;
	return p->slot_open;
}

static void pcap_tx_commit(struct secho_io *io, struct secho_io_pkt *rx, uint32_t len)
{
	struct pcap_io *p = (struct pcap_io *)io;
	struct pcap_pkthdr h;

	io->stats.tx++;
	if (!p->out || !p->slot_open)
		return;
	memset(&h, 0, sizeof(h));
	h.ts = p->ts[rx && rx->handle < SECHO_IO_BURST ? rx->handle : 0];
	h.caplen = len;
	h.len = len;
	pcap_dump((u_char *)p->out, &h, p->slot_open);
	p->slot_open = NULL;
}

static void pcap_tx_flush(struct secho_io *io)
{
	(void)io; /* written at commit; pcap_dump_flush at close */
}

static void pcap_rx_release(struct secho_io *io, struct secho_io_pkt *pkts, unsigned n)
{
	(void)io;
	(void)pkts;
	(void)n; /* slots are reused by the next burst */
}

static int pcap_rx_ready(struct secho_io *io)
{
	struct pcap_io *p = (struct pcap_io *)io;

	return p->in ? 1 : 0;
}

static void pcap_io_close(struct secho_io *io)
{
	struct pcap_io *p = (struct pcap_io *)io;

	if (p->out) {
		pcap_dump_flush(p->out);
		pcap_dump_close(p->out);
	}
	if (p->dead)
		pcap_close(p->dead);
	if (p->in)
		pcap_close(p->in);
	free(p);
}

static void pcap_read_kernel_stats(struct secho_io *io)
{
	struct pcap_io *p = (struct pcap_io *)io;

	/* No kernel here: count records we could not deliver as dropped. */
	io->stats.rx_dropped_by_kernel = p->skipped;
}

static const struct secho_io_ops pcap_ops = {
        .close = pcap_io_close,
        .rx_burst = pcap_rx_burst,
        .tx_slot = pcap_tx_slot,
        .tx_commit = pcap_tx_commit,
        .tx_flush = pcap_tx_flush,
        .rx_release = pcap_rx_release,
        .rx_ready = pcap_rx_ready,
        .read_kernel_stats = pcap_read_kernel_stats,
};

struct secho_io *secho_io_pcap_open(const struct secho_io_cfg *cfg, char *err, size_t errlen)
{
	char ebuf[PCAP_ERRBUF_SIZE] = "";
	struct pcap_io *p = calloc(1, sizeof(*p));
	int r;

	if (!p) {
		secho_io_err(err, errlen, "pcap: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	p->io.ops = &pcap_ops;
	p->io.kind = SECHO_IO_PCAP;
	p->io.fd = -1;
	p->io.fanout_id = -1;
	p->io.in_place = !cfg->tx_copy;
	p->tx_copy = cfg->tx_copy;
	if (cfg->pcap_in) {
		p->in = pcap_open_offline(cfg->pcap_in, ebuf);
		if (!p->in) {
			secho_io_err(err, errlen, "pcap-in %s: %s", cfg->pcap_in, ebuf);
			r = -ENOENT;
			goto fail_free;
		}
		/* Classic pcap leaves the stream right after its 24-byte file header (pcapng
		 * after its section header block, whose records carry their own lengths). */
		p->file = pcap_file(p->in);
		if (p->file && ftell(p->file) != 24)
			p->file = NULL;
		if (pcap_datalink(p->in) != DLT_EN10MB) {
			secho_io_err(err, errlen, "pcap-in %s: link type %d, want Ethernet (%d)",
			             cfg->pcap_in, pcap_datalink(p->in), DLT_EN10MB);
			r = -EPROTONOSUPPORT;
			goto fail_in;
		}
	}
	if (cfg->pcap_out) {
		p->dead = pcap_open_dead(DLT_EN10MB, 65535);
		if (!p->dead) {
			secho_io_err(err, errlen, "pcap: pcap_open_dead failed");
			r = -ENOMEM;
			goto fail_in;
		}
		p->out = pcap_dump_open(p->dead, cfg->pcap_out);
		if (!p->out) {
			secho_io_err(err, errlen, "pcap-out %s: %s", cfg->pcap_out,
			             pcap_geterr(p->dead));
			r = -EIO;
			goto fail_dead;
		}
	}
	snprintf(p->io.desc, sizeof(p->io.desc), "pcap: in %s, out %s, responses %s",
	         cfg->pcap_in ? cfg->pcap_in : "(none)", cfg->pcap_out ? cfg->pcap_out : "(none)",
	         cfg->tx_copy ? "in a scratch buffer" : "in place");
	if (!p->in)
		p->io.eof = true;
	return &p->io;

fail_dead:
	pcap_close(p->dead);
fail_in:
	if (p->in)
		pcap_close(p->in);
fail_free:
	free(p);
	errno = -r;
	return NULL;
}
