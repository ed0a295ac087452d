/*
 * src/io/io_inner.h - what the packet I/O backends share (private to src/io/).
 *
 * Each backend (af_xdp.c, af_packet.c, pcap.c) defines a state struct whose first member is
 * struct secho_io, fills in a const table of its static functions (struct secho_io_ops) and
 * exports one open function. io.c picks the backend and forwards the public calls through
 * io->ops: one indirect call per burst on the ring paths, one per packet for tx_slot/commit.
 */
#ifndef SECHO_IO_INNER_H
#define SECHO_IO_INNER_H

#include <stdarg.h>
#include <stdio.h>

#include "secho/io.h"

struct secho_io_ops {
	void (*close)(struct secho_io *io);
	unsigned (*rx_burst)(struct secho_io *io, struct secho_io_pkt *pkts, unsigned max);
	uint8_t *(*tx_slot)(struct secho_io *io, struct secho_io_pkt *rx, uint32_t len,
	                    uint32_t front);
	/* Optional (NULL: no look-ahead): see secho_io_tx_slot_ahead(). */
	uint8_t *(*tx_slot_ahead)(struct secho_io *io, unsigned k, uint32_t len);
	void (*tx_commit)(struct secho_io *io, struct secho_io_pkt *rx, uint32_t len);
	void (*tx_flush)(struct secho_io *io);
	void (*rx_release)(struct secho_io *io, struct secho_io_pkt *pkts, unsigned n);
	/* Non-blocking: > 0 when rx_burst would return frames now (busy-poll spins on it). */
	int (*rx_ready)(struct secho_io *io);
	/* Add the kernel's drop counters to io->stats (may reset them in the kernel). */
	void (*read_kernel_stats)(struct secho_io *io);
};

struct secho_io {
	const struct secho_io_ops *ops;
	int fd;                /* polled for POLLIN by secho_io_wait(); -1 if none */
	bool busy_poll;        /* wait() spins on ops->rx_ready */
	bool in_place;         /* tx_slot() answers inside the RX buffer */
	bool eof;              /* finite input exhausted (pcap) */
	char input_error[256]; /* finite input malformed (pcap): why; eof is set with it */
	enum secho_io_kind kind;
	int fanout_id; /* PACKET: the fanout group joined; -1 = none (every backend sets it) */
	struct secho_io_stats stats;
	char desc[512];
};

/* Backend constructors: return the new handle, or NULL with err filled and errno set.
 * zc_only (AF_XDP): fail unless zero-copy binds, so AUTO can prefer AF_PACKET otherwise. */
struct secho_io *secho_io_xdp_open(const struct secho_io_cfg *cfg, bool zc_only, char *err,
                                   size_t errlen);
struct secho_io *secho_io_packet_open(const struct secho_io_cfg *cfg, char *err, size_t errlen);
struct secho_io *secho_io_pcap_open(const struct secho_io_cfg *cfg, char *err, size_t errlen);

/* snprintf into err when there is room; can't fail. */
void secho_io_err(char *err, size_t errlen, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

#define SECHO_IO_DEFAULT_FRAME 1518u /* MTU 1500 + Ethernet header + a VLAN tag */
#define SECHO_IO_RESP_GROWTH   32u   /* a response is this much longer than its request */

/* The frame length a backend must carry for cfg (see secho_io_cfg.max_frame). */
static inline uint32_t secho_io_max_frame(const struct secho_io_cfg *cfg)
{
	return cfg->max_frame ? cfg->max_frame : SECHO_IO_DEFAULT_FRAME;
}

/* Round up to a power of two (v >= 1, v <= 2^31). */
static inline uint32_t secho_io_pow2(uint32_t v)
{
	uint32_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

/* The ring length to use: cfg_frames when the caller gave it, else 2048 frames of 2 KiB
 * worth of bytes in frames of frame_size (at least 256), as a power of two. */
static inline uint32_t secho_io_ring_frames(uint32_t cfg_frames, uint32_t frame_size)
{
	if (cfg_frames)
		return secho_io_pow2(cfg_frames);
	uint32_t n = (uint32_t)((2048ull * 2048) / frame_size);
	return secho_io_pow2(n < 256 ? 256 : n);
}

/* Receive ring frames for cfg at frame_size: rx_ring, else rx_ring_bytes worth (rounded
 * down to a power of 2, at least 256, at most 2^20), else the default. */
static inline uint32_t secho_io_rx_frames(const struct secho_io_cfg *cfg, uint32_t frame_size)
{
	if (!cfg->rx_ring && cfg->rx_ring_bytes) {
		uint64_t n = cfg->rx_ring_bytes / frame_size;
		uint32_t p = 256;

		while (p < (1u << 20) && (uint64_t)p * 2 <= n)
			p <<= 1;
		return p;
	}
	return secho_io_ring_frames(cfg->rx_ring, frame_size);
}

#endif
