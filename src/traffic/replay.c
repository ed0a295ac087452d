/*
 * src/traffic/replay.c - capture replay onto an interface (contract: src/traffic/replay.h).
 */
#include "traffic/replay.h"

#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "secho/io.h"

static double mono_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static pcap_t *open_capture(const char *path, char *err, size_t errlen)
{
	char perr[PCAP_ERRBUF_SIZE] = "";
	pcap_t *p = pcap_open_offline(path, perr);

	if (!p) {
		snprintf(err, errlen, "%s: %s", path, perr);
		return NULL;
	}
	if (pcap_datalink(p) != DLT_EN10MB) {
		snprintf(err, errlen, "%s: link type %d, not Ethernet", path, pcap_datalink(p));
		pcap_close(p);
		return NULL;
	}
	return p;
}

/* The next frame of the capture, reopening it for the next loop. Returns 1 with *h and *d
 * set, 0 at the end of the last loop, -EIO when the file cannot be read (err filled). */
static int next_frame(pcap_t **p, const struct secho_flow_replay_cfg *cfg, uint32_t loops,
                      struct secho_flow_replay_result *res, struct pcap_pkthdr **h,
                      const u_char **d, char *err, size_t errlen)
{
	for (;;) {
		int r = pcap_next_ex(*p, h, d);
		if (r == 1)
			return 1;
		if (r == PCAP_ERROR) {
			snprintf(err, errlen, "%s: %s", cfg->pcap, pcap_geterr(*p));
			return -EIO;
		}
		if (r != PCAP_ERROR_BREAK)
			continue;
		/* end of this pass */
		res->loops_done++;
		if (res->loops_done >= loops)
			return 0;
		pcap_close(*p);
		*p = open_capture(cfg->pcap, err, errlen);
		if (!*p)
			return -EIO;
	}
}

int secho_flow_replay_run(const struct secho_flow_replay_cfg *cfg,
                          struct secho_flow_replay_result *res, char *err, size_t errlen)
{
	uint32_t loops = cfg->loops ? cfg->loops : 1;
	int rc = 0;

	memset(res, 0, sizeof(*res));
	if (!cfg->ifname || !cfg->pcap || cfg->pps < 0 || !(cfg->seconds > 0) ||
	    cfg->seconds > SECHO_REPLAY_MAX_SECONDS) {
		snprintf(err, errlen, "replay: bad configuration");
		return -EINVAL;
	}
	pcap_t *p = open_capture(cfg->pcap, err, errlen);
	if (!p)
		return -ENOENT;
	uint32_t fs = cfg->frame_size;
	if (!fs)
		fs = pcap_snapshot(p) > 1900 ? 16384 : 2048;
	struct secho_io_cfg ic = {
	        .kind = SECHO_IO_PACKET,
	        .ifname = cfg->ifname,
	        .hint = SECHO_IO_THROUGHPUT,
	        .packet_version = 2,
	        .rx_ring = 16, /* nothing is received: the smallest ring */
	        .tx_ring = cfg->tx_ring ? cfg->tx_ring : 1024,
	        .frame_size = fs,
	        .packet_sendmmsg = !cfg->tx_ring_mode,
	};
	struct secho_io *io = secho_io_open(&ic, err, errlen);
	if (!io) {
		rc = -errno;
		pcap_close(p);
		return rc ? rc : -EIO;
	}
	snprintf(res->io_desc, sizeof(res->io_desc), "%s", secho_io_describe(io));

	double t0 = mono_now(), now = t0, deadline = t0 + cfg->seconds;
	uint64_t last_tx = 0;
	bool done = false;
	while (!done) {
		if (cfg->stop && *cfg->stop) {
			res->interrupted = true;
			break;
		}
		if (now >= deadline) {
			res->timed_out = true;
			break;
		}
		uint64_t budget = SECHO_IO_BURST;
		if (cfg->pps > 0) {
			/* frames allowed by now, whole ones */
			uint64_t offered = res->frames + res->refused;
			uint64_t allowed = (uint64_t)((now - t0) * cfg->pps) + 1;
			if (allowed <= offered) {
				/* early: wait for the next frame's time (spin below 50 us) */
				double wait = t0 + (double)offered / cfg->pps - now;
				if (wait > 50e-6) {
					struct timespec ts = {0, (long)((wait - 20e-6) * 1e9)};
					nanosleep(&ts, NULL);
				}
				now = mono_now();
				continue;
			}
			if (allowed - offered > 4 * SECHO_IO_BURST)
				res->behind++;
			if (allowed - offered < budget)
				budget = allowed - offered;
		}
		if (cfg->count && cfg->count - res->frames - res->refused < budget)
			budget = cfg->count - res->frames - res->refused;
		uint32_t lens[SECHO_IO_BURST] = {0};
		unsigned n = 0;
		for (uint64_t i = 0; i < budget; i++) {
			struct pcap_pkthdr *h;
			const u_char *d;
			int r = next_frame(&p, cfg, loops, res, &h, &d, err, errlen);
			if (r <= 0) {
				rc = r;
				done = true;
				break;
			}
			/* a slot keeps its header (tens of bytes) in front of the frame */
			if (h->caplen + 64 > fs) {
				res->too_long++;
				continue;
			}
			/* the kernel refuses a frame without a whole Ethernet header (and
			 * sendmmsg would give up the rest of the burst with it) */
			if (h->caplen < 14) {
				res->too_short++;
				continue;
			}
			uint8_t *slot = secho_io_tx_slot(io, NULL, h->caplen, 0);
			if (!slot) {
				/* the ring is full: kick until the kernel has sent some */
				res->ring_waits++;
				while (!(slot = secho_io_tx_slot(io, NULL, h->caplen, 0))) {
					secho_io_tx_flush(io);
					if (mono_now() >= deadline)
						break;
				}
				if (!slot) {
					res->timed_out = true;
					done = true;
					break;
				}
			}
			memcpy(slot, d, h->caplen);
			secho_io_tx_commit(io, NULL, h->caplen);
			lens[n++] = h->caplen;
		}
		secho_io_tx_flush(io);
		/* What the kernel took: sendmmsg stops at a frame it refuses (a full queue on
		 * the way), and the io layer counts the rest of the burst as errors. */
		struct secho_io_stats st;
		secho_io_get_stats(io, &st);
		uint64_t took = st.tx - last_tx;
		last_tx = st.tx;
		if (took > n)
			took = n;
		for (unsigned i = 0; i < took; i++)
			res->bytes += lens[i];
		res->frames += took;
		res->refused += n - took;
		if (cfg->count && res->frames + res->refused >= cfg->count)
			done = true;
		now = mono_now();
	}
	res->elapsed_s = mono_now() - t0;
	struct secho_io_stats st;
	secho_io_get_stats(io, &st);
	res->tx_errors = st.tx_errors;
	secho_io_close(io);
	if (p)
		pcap_close(p);
	return rc;
}
