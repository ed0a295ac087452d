/*
 * src/io/af_packet.c - AF_PACKET backend: mmap()ed RX ring, TX ring or sendmmsg().
 *
 * RX: one SOCK_RAW socket bound to the interface for ETH_P_ALL, with PACKET_IGNORE_OUTGOING
 * (frames sent on the interface by anyone are not seen) and PACKET_RESERVE headroom.
 *   TPACKET_V2: a ring of fixed frames, each handed to user space as soon as it is written
 *     (tp_status gets TP_STATUS_USER). Lowest latency.
 *   TPACKET_V3: a ring of blocks holding variable-size frames; a block is handed over when
 *     it is full or when its retire timer (>= 1 ms) fires. Fewer cache lines and wakeups
 *     per frame under load, but an idle round trip waits for the timer.
 * TX (default): a second socket with a TPACKET_V2 TX ring and PACKET_QDISC_BYPASS: frames
 *   are written into ring slots, flagged TP_STATUS_SEND_REQUEST, and one sendto() per burst
 *   makes the kernel send every flagged slot straight to the driver. The socket is bound
 *   with protocol 0 so it never receives.
 * TX (packet_sendmmsg): responses are built in place in the RX ring (headroom + tailroom)
 *   and one sendmmsg() per burst sends them from there, on the RX socket (qdisc bypass).
 *
 * Ownership protocol (both rings): a slot's tp_status (V2) or block_status (V3) says who
 * owns it. We read it with an acquire load: the kernel writes the frame, then its status
 * (with a write barrier), so after seeing TP_STATUS_USER the frame bytes are visible. We
 * give a slot back with a release store: all our reads and writes of its bytes happen
 * before the kernel can see the new status and reuse it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "io/io_inner.h"

#define PKT_RESERVE  64u        /* extra headroom in front of every RX frame */
#define PKT_BLOCK_V2 (1u << 16) /* V2 ring block: frames are packed in 64 KiB blocks */

#ifdef PACKET_FANOUT_FLAG_IGNORE_OUTGOING
#define FANOUT_IGNORE_OUTGOING PACKET_FANOUT_FLAG_IGNORE_OUTGOING
#else
#define FANOUT_IGNORE_OUTGOING 0x4000 /* linux/if_packet.h since 4.20; not in every libc's */
#endif

struct pkt_io {
	struct secho_io io;
	int rxfd;
	int txfd; /* == rxfd in sendmmsg mode */
	int version;
	bool sendmmsg_mode;
	bool vlan_restore;

	/* RX ring */
	uint8_t *rx_map;
	size_t rx_map_len;
	uint32_t frame_size, frame_nr; /* V2 */
	uint32_t block_size, block_nr; /* V2 and V3 */
	uint32_t rx_head;              /* V2: next frame; V3: block being read */
	/* V3 cursor */
	bool v3_open;     /* block rx_head is ours and being read */
	uint32_t v3_left; /* frames left in it */
	uint8_t *v3_pkt;  /* next frame header in it */
	uint8_t *v3_pref; /* its lines up to here were asked for (v3_rx_burst) */
	uint8_t *v3_end;  /* its end */
	uint32_t v3_done; /* exhausted blocks before rx_head awaiting release */

	/* TX ring */
	uint8_t *tx_map;
	size_t tx_map_len;
	uint32_t tx_frame_size, tx_frame_nr, tx_head, tx_pending;

	/* sendmmsg */
	uint8_t *mm_slot;
	unsigned nmsg;
	/* SECHO_IO_BURST x frame_size, one per queued message: standalone responses (rx ==
	 * NULL) and responses that do not fit in their RX frame */
	uint8_t *mm_buf;
	struct iovec iov[SECHO_IO_BURST];
	struct mmsghdr msgs[SECHO_IO_BURST];

	uint64_t kernel_drops;
	char ifname[IF_NAMESIZE];
};

/* Offset of frame data in a TX ring slot: the kernel takes it right after the header when
 * PACKET_TX_HAS_OFF is not set (tpacket_fill_skb, "tp_hdrlen - sizeof(struct sockaddr_ll)"). */
#define TX_DATA_OFF (TPACKET2_HDRLEN - sizeof(struct sockaddr_ll))

static inline struct tpacket2_hdr *v2_frame(const struct pkt_io *p, uint32_t i)
{
	/* block_size is a multiple of frame_size, so frames are contiguous. */
	return (struct tpacket2_hdr *)(p->rx_map + (size_t)i * p->frame_size);
}

static inline struct tpacket_block_desc *v3_block(const struct pkt_io *p, uint32_t i)
{
	return (struct tpacket_block_desc *)(p->rx_map + (size_t)i * p->block_size);
}

static inline struct tpacket2_hdr *tx_frame(const struct pkt_io *p, uint32_t i)
{
	return (struct tpacket2_hdr *)(p->tx_map + (size_t)i * p->tx_frame_size);
}

/* The tag the kernel took off a frame, from its ring header: the receive path removes the
 * outer VLAN tag before packet sockets see the frame (skb_vlan_untag) and reports it beside
 * it; the frame's bytes are then untagged. TPID << 16 | TCI, 0 when there was none. */
static inline uint32_t vlan_of(uint32_t status, uint16_t tci, uint16_t tpid)
{
	if (!(status & TP_STATUS_VLAN_VALID))
		return 0;
	if (!(status & TP_STATUS_VLAN_TPID_VALID) || !tpid)
		tpid = 0x8100;
	return (uint32_t)tpid << 16 | tci;
}

/* The kernel took the outer VLAN tag out of the frame into the ring header (it always
 * does, skb_vlan_untag); put it back in front of the EtherType, 4 bytes into the headroom
 * (PACKET_RESERVE keeps 64), so the frame is as it was on the wire; k->vlan is then 0, as
 * for any frame that carries its tag. */
static void vlan_restore(struct secho_io_pkt *k, uint32_t status, uint16_t tci, uint16_t tpid)
{
	if (k->headroom < 4 || k->len < 12)
		return;
	if (!(status & TP_STATUS_VLAN_TPID_VALID) || !tpid)
		tpid = ETH_P_8021Q;
	memmove(k->data - 4, k->data, 12);
	k->data -= 4;
	k->headroom -= 4;
	k->len += 4;
	k->data[12] = (uint8_t)(tpid >> 8);
	k->data[13] = (uint8_t)tpid;
	k->data[14] = (uint8_t)(tci >> 8);
	k->data[15] = (uint8_t)tci;
	k->vlan = 0; /* the tag is in the frame's bytes again */
}

/* --- RX, TPACKET_V2 ---------------------------------------------------------------- */

static unsigned v2_rx_burst(struct pkt_io *p, struct secho_io_pkt *pkts, unsigned max)
{
	unsigned n = 0;

	if (max > p->frame_nr)
		max = p->frame_nr; /* never lap frames of this burst */
	while (n < max) {
		struct tpacket2_hdr *h = v2_frame(p, p->rx_head);
		/* acquire: pairs with the kernel's barrier before it sets TP_STATUS_USER */
		uint32_t st = __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);

		if (!(st & TP_STATUS_USER))
			break;
		uint8_t *base = (uint8_t *)h;
		struct secho_io_pkt *k = &pkts[n++];

		k->data = base + h->tp_mac;
		k->len = h->tp_snaplen;
		k->headroom = h->tp_mac - TPACKET2_HDRLEN;
		k->tailroom = p->frame_size - h->tp_mac - h->tp_snaplen;
		k->flags = h->tp_snaplen < h->tp_len ? SECHO_IO_PKT_TRUNCATED : 0;
		k->vlan = vlan_of(st, h->tp_vlan_tci, h->tp_vlan_tpid);
		k->handle = p->rx_head;
		k->ts_ns = (uint64_t)h->tp_sec * 1000000000ull + h->tp_nsec;
		if (p->vlan_restore && (st & TP_STATUS_VLAN_VALID))
			vlan_restore(k, st, h->tp_vlan_tci, h->tp_vlan_tpid);
		p->rx_head = p->rx_head + 1 == p->frame_nr ? 0 : p->rx_head + 1;
	}
	return n;
}

static void v2_rx_release(struct pkt_io *p, struct secho_io_pkt *pkts, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct tpacket2_hdr *h = v2_frame(p, (uint32_t)pkts[i].handle);

		/* release: our reads (and in-place sendmmsg, finished by now) come first */
		__atomic_store_n(&h->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
	}
}

/* --- RX, TPACKET_V3 ---------------------------------------------------------------- */

#define V3_PREFETCH_AHEAD 4096u

static unsigned v3_rx_burst(struct pkt_io *p, struct secho_io_pkt *pkts, unsigned max)
{
	unsigned n = 0;

	while (n < max) {
		if (!p->v3_open) {
			/* Keep one block back so rx_head never laps blocks awaiting release. */
			if (p->v3_done + 1 >= p->block_nr)
				break;
			struct tpacket_block_desc *b = v3_block(p, p->rx_head);
			/* acquire: pairs with the kernel's barrier before it closes the block */
			uint32_t st = __atomic_load_n(&b->hdr.bh1.block_status, __ATOMIC_ACQUIRE);

			if (!(st & TP_STATUS_USER))
				break;
			p->v3_open = true;
			p->v3_left = b->hdr.bh1.num_pkts;
			p->v3_pkt = (uint8_t *)b + b->hdr.bh1.offset_to_first_pkt;
			p->v3_pref = (uint8_t *)((uintptr_t)p->v3_pkt & ~(uintptr_t)63);
			p->v3_end = (uint8_t *)b + p->block_size;
		}
		/* The frames' headers are a chain of dependent loads (each says where the next
		 * one is) over lines another CPU wrote: every line some way ahead is asked for,
		 * so that the walk does not wait for each header in turn (the capture reader
		 * does the same, src/io/capfile.c). */
		uint8_t *want = p->v3_pkt + V3_PREFETCH_AHEAD < p->v3_end
		                        ? p->v3_pkt + V3_PREFETCH_AHEAD
		                        : p->v3_end;
		for (; p->v3_pref < want; p->v3_pref += 64)
			__builtin_prefetch(p->v3_pref);
		if (!p->v3_left) {
			p->v3_open = false;
			p->v3_done++;
			p->rx_head = p->rx_head + 1 == p->block_nr ? 0 : p->rx_head + 1;
			continue;
		}
		struct tpacket3_hdr *h = (struct tpacket3_hdr *)p->v3_pkt;
		uint8_t *end = p->v3_left > 1 && h->tp_next_offset
		                       ? p->v3_pkt + h->tp_next_offset
		                       : (uint8_t *)v3_block(p, p->rx_head) + p->block_size;
		struct secho_io_pkt *k = &pkts[n++];

		k->data = p->v3_pkt + h->tp_mac;
		k->len = h->tp_snaplen;
		k->headroom = h->tp_mac - TPACKET3_HDRLEN;
		k->tailroom = (uint32_t)(end - (k->data + k->len));
		k->flags = h->tp_snaplen < h->tp_len ? SECHO_IO_PKT_TRUNCATED : 0;
		k->vlan = vlan_of(h->tp_status, (uint16_t)h->hv1.tp_vlan_tci, h->hv1.tp_vlan_tpid);
		k->handle = p->rx_head;
		k->ts_ns = (uint64_t)h->tp_sec * 1000000000ull + h->tp_nsec;
		if (p->vlan_restore && (h->tp_status & TP_STATUS_VLAN_VALID))
			vlan_restore(k, h->tp_status, h->hv1.tp_vlan_tci, h->hv1.tp_vlan_tpid);
		p->v3_pkt += h->tp_next_offset;
		p->v3_left--;
	}
	return n;
}

static void v3_rx_release(struct pkt_io *p)
{
	if (p->v3_open && !p->v3_left) {
		p->v3_open = false;
		p->v3_done++;
		p->rx_head = p->rx_head + 1 == p->block_nr ? 0 : p->rx_head + 1;
	}
	uint32_t b = (p->rx_head + p->block_nr - p->v3_done) % p->block_nr;

	for (; p->v3_done; p->v3_done--, b = b + 1 == p->block_nr ? 0 : b + 1) {
		/* release: every frame of the block was read (and sent) before this */
		__atomic_store_n(&v3_block(p, b)->hdr.bh1.block_status, TP_STATUS_KERNEL,
		                 __ATOMIC_RELEASE);
	}
}

/* --- ops --------------------------------------------------------------------------- */

static unsigned pkt_rx_burst(struct secho_io *io, struct secho_io_pkt *pkts, unsigned max)
{
	struct pkt_io *p = (struct pkt_io *)io;

	return p->version == 3 ? v3_rx_burst(p, pkts, max) : v2_rx_burst(p, pkts, max);
}

static void pkt_rx_release(struct secho_io *io, struct secho_io_pkt *pkts, unsigned n)
{
	struct pkt_io *p = (struct pkt_io *)io;

	if (p->version == 3)
		v3_rx_release(p);
	else
		v2_rx_release(p, pkts, n);
}

static int pkt_rx_ready(struct secho_io *io)
{
	struct pkt_io *p = (struct pkt_io *)io;

	if (p->version == 2)
		return !!(__atomic_load_n(&v2_frame(p, p->rx_head)->tp_status, __ATOMIC_ACQUIRE) &
		          TP_STATUS_USER);
	if (p->v3_open && p->v3_left)
		return 1;
	uint32_t b = p->rx_head;

	if (p->v3_open)
		b = b + 1 == p->block_nr ? 0 : b + 1;
	return !!(__atomic_load_n(&v3_block(p, b)->hdr.bh1.block_status, __ATOMIC_ACQUIRE) &
	          TP_STATUS_USER);
}

/* The TX ring slot k places after the head, if it is free for a len-byte frame; a slot
 * the kernel skipped as malformed is counted when it is reserved (count), not looked at. */
static uint8_t *ring_tx_slot_at(struct pkt_io *p, uint32_t k, uint32_t len, bool count)
{
	struct tpacket2_hdr *h = tx_frame(p, (p->tx_head + k) % p->tx_frame_nr);
	/* acquire: the kernel finished reading the slot before marking it available */
	uint32_t st = __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);

	if (len > p->tx_frame_size - TX_DATA_OFF)
		return NULL;
	if (st == TP_STATUS_WRONG_FORMAT) {
		/* With PACKET_LOSS the kernel skips a malformed slot; count it and reuse. */
		if (count)
			p->io.stats.tx_errors++;
	} else if (st != TP_STATUS_AVAILABLE) {
		return NULL;
	}
	return (uint8_t *)h + TX_DATA_OFF;
}

static uint8_t *ring_tx_slot(struct pkt_io *p, uint32_t len)
{
	return ring_tx_slot_at(p, 0, len, true);
}

static uint8_t *pkt_tx_slot_ahead(struct secho_io *io, unsigned k, uint32_t len)
{
	struct pkt_io *p = (struct pkt_io *)io;

	if (p->sendmmsg_mode || !p->tx_map || k >= p->tx_frame_nr)
		return NULL;
	return ring_tx_slot_at(p, k, len, false);
}

static uint8_t *pkt_tx_slot(struct secho_io *io, struct secho_io_pkt *rx, uint32_t len,
                            uint32_t front)
{
	struct pkt_io *p = (struct pkt_io *)io;

	if (!p->sendmmsg_mode)
		return p->tx_map ? ring_tx_slot(p, len) : NULL; /* no TX ring: receive only */
	/* nmsg < BURST here: commit flushes when the batch is full */
	if (rx && front <= rx->headroom && len <= (uint64_t)front + rx->len + rx->tailroom)
		p->mm_slot = rx->data - front;
	else if (len <= p->frame_size)
		p->mm_slot = p->mm_buf + (size_t)p->nmsg * p->frame_size; /* out of place */
	else
		return NULL;
	return p->mm_slot;
}

static void pkt_tx_flush(struct secho_io *io);

static void pkt_tx_commit(struct secho_io *io, struct secho_io_pkt *rx, uint32_t len)
{
	struct pkt_io *p = (struct pkt_io *)io;

	(void)rx;
	if (!p->sendmmsg_mode) {
		struct tpacket2_hdr *h = tx_frame(p, p->tx_head);

		h->tp_len = len;
		/* release: the frame bytes and tp_len are written before the kernel sees it */
		__atomic_store_n(&h->tp_status, TP_STATUS_SEND_REQUEST, __ATOMIC_RELEASE);
		p->tx_head = p->tx_head + 1 == p->tx_frame_nr ? 0 : p->tx_head + 1;
		p->tx_pending++;
	} else {
		unsigned i = p->nmsg;

		p->iov[i].iov_base = p->mm_slot;
		p->iov[i].iov_len = len;
		memset(&p->msgs[i], 0, sizeof(p->msgs[i]));
		p->msgs[i].msg_hdr.msg_iov = &p->iov[i];
		p->msgs[i].msg_hdr.msg_iovlen = 1;
		p->nmsg = i + 1;
	}
	io->stats.tx++;
	if (p->sendmmsg_mode && p->nmsg == SECHO_IO_BURST)
		pkt_tx_flush(io);
}

static void pkt_tx_flush(struct secho_io *io)
{
	struct pkt_io *p = (struct pkt_io *)io;

	if (!p->sendmmsg_mode) {
		if (!p->tx_pending)
			return;
		io->stats.kicks++;
		/* MSG_DONTWAIT: send every SEND_REQUEST slot now, do not wait for completion. */
		if (sendto(p->txfd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 && errno != EAGAIN &&
		    errno != ENOBUFS && errno != EINTR) {
			io->stats.tx_errors++;
			return; /* keep pending: the next flush kicks again */
		}
		p->tx_pending = 0;
		return;
	}
	unsigned done = 0;

	while (done < p->nmsg) {
		io->stats.kicks++;
		int r = sendmmsg(p->txfd, p->msgs + done, p->nmsg - done, MSG_DONTWAIT);

		if (r <= 0) {
			/* ENOBUFS/EAGAIN included: the RX buffers are released next, so the
			 * unsent responses are dropped and counted, never retried later. */
			io->stats.tx_errors += p->nmsg - done;
			io->stats.tx -= p->nmsg - done;
			break;
		}
		done += (unsigned)r;
	}
	p->nmsg = 0;
}

static void pkt_read_kernel_stats(struct secho_io *io)
{
	struct pkt_io *p = (struct pkt_io *)io;
	struct tpacket_stats_v3 st3;
	socklen_t sl = p->version == 3 ? sizeof(st3) : sizeof(struct tpacket_stats);

	memset(&st3, 0, sizeof(st3));
	/* Reading PACKET_STATISTICS resets the kernel's counters: accumulate. */
	if (getsockopt(p->rxfd, SOL_PACKET, PACKET_STATISTICS, &st3, &sl) == 0)
		p->kernel_drops += st3.tp_drops;
	io->stats.rx_dropped_by_kernel = p->kernel_drops;
}

static void pkt_close(struct secho_io *io)
{
	struct pkt_io *p = (struct pkt_io *)io;

	if (p->tx_map)
		munmap(p->tx_map, p->tx_map_len);
	if (p->txfd >= 0 && p->txfd != p->rxfd)
		close(p->txfd);
	if (p->rx_map)
		munmap(p->rx_map, p->rx_map_len);
	if (p->rxfd >= 0)
		close(p->rxfd);
	free(p->mm_buf);
	free(p);
}

static const struct secho_io_ops pkt_ops = {
        .close = pkt_close,
        .rx_burst = pkt_rx_burst,
        .tx_slot = pkt_tx_slot,
        .tx_slot_ahead = pkt_tx_slot_ahead,
        .tx_commit = pkt_tx_commit,
        .tx_flush = pkt_tx_flush,
        .rx_release = pkt_rx_release,
        .rx_ready = pkt_rx_ready,
        .read_kernel_stats = pkt_read_kernel_stats,
};

/* --- setup ------------------------------------------------------------------------- */

static int setopt_int(int fd, int level, int name, int v)
{
	return setsockopt(fd, level, name, &v, sizeof(v)) ? -errno : 0;
}

/* Set up the RX ring on p->rxfd and map it. Returns 0 or -errno with err filled. */
static int setup_rx_ring(struct pkt_io *p, const struct secho_io_cfg *cfg, char *err, size_t errlen)
{
	uint32_t frames = secho_io_rx_frames(cfg, p->frame_size);
	int r;

	if ((r = setopt_int(p->rxfd, SOL_PACKET, PACKET_VERSION,
	                    p->version == 3 ? TPACKET_V3 : TPACKET_V2))) {
		secho_io_err(err, errlen, "PACKET_VERSION %d: %s", p->version, strerror(-r));
		return r;
	}
	if ((r = setopt_int(p->rxfd, SOL_PACKET, PACKET_RESERVE, PKT_RESERVE))) {
		secho_io_err(err, errlen, "PACKET_RESERVE: %s", strerror(-r));
		return r;
	}
	if (p->version == 2) {
		struct tpacket_req req = {0};

		p->block_size = PKT_BLOCK_V2 > p->frame_size ? PKT_BLOCK_V2 : p->frame_size;
		p->frame_nr = frames;
		p->block_nr = (uint32_t)(((uint64_t)frames * p->frame_size + p->block_size - 1) /
		                         p->block_size);
		p->frame_nr = p->block_nr * (p->block_size / p->frame_size);
		req.tp_block_size = p->block_size;
		req.tp_block_nr = p->block_nr;
		req.tp_frame_size = p->frame_size;
		req.tp_frame_nr = p->frame_nr;
		r = setsockopt(p->rxfd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)) ? -errno : 0;
	} else {
		struct tpacket_req3 req = {0};
		uint64_t bytes = (uint64_t)frames * p->frame_size;

		p->block_size = secho_io_pow2(cfg->v3_block_size ? cfg->v3_block_size : 1u << 16);
		if (p->block_size < 4096)
			p->block_size = 4096;
		if (p->block_size < p->frame_size) /* a block holds at least the largest frame */
			p->block_size = p->frame_size;
		p->block_nr = (uint32_t)((bytes + p->block_size - 1) / p->block_size);
		if (p->block_nr < 4)
			p->block_nr = 4;
		req.tp_block_size = p->block_size;
		req.tp_block_nr = p->block_nr;
		req.tp_frame_size = p->frame_size; /* only checked, V3 frames are variable */
		req.tp_frame_nr = (uint32_t)((uint64_t)p->block_size * p->block_nr / p->frame_size);
		req.tp_retire_blk_tov = cfg->v3_retire_ms ? cfg->v3_retire_ms : 1;
		r = setsockopt(p->rxfd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)) ? -errno : 0;
	}
	if (r) {
		secho_io_err(err, errlen, "PACKET_RX_RING (V%d): %s", p->version, strerror(-r));
		return r;
	}
	p->rx_map_len = (size_t)p->block_size * p->block_nr;
	void *m = mmap(NULL, p->rx_map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
	               p->rxfd, 0);

	if (m == MAP_FAILED) {
		r = -errno;
		secho_io_err(err, errlen, "mmap RX ring (%zu bytes): %s", p->rx_map_len,
		             strerror(-r));
		return r;
	}
	p->rx_map = m;
	return 0;
}

/* Create the TX socket with its ring and map it. Returns 0 or -errno with err filled. */
static int setup_tx_ring(struct pkt_io *p, const struct secho_io_cfg *cfg, unsigned ifindex,
                         char *err, size_t errlen)
{
	struct tpacket_req req = {0};
	struct sockaddr_ll sll = {0};
	int r;

	p->txfd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (p->txfd < 0) {
		r = -errno;
		secho_io_err(err, errlen, "TX socket: %s", strerror(-r));
		return r;
	}
	if ((r = setopt_int(p->txfd, SOL_PACKET, PACKET_VERSION, TPACKET_V2)) ||
	    (r = setopt_int(p->txfd, SOL_PACKET, PACKET_LOSS, 1)) ||
	    (r = setopt_int(p->txfd, SOL_PACKET, PACKET_QDISC_BYPASS, 1))) {
		secho_io_err(err, errlen, "TX socket options: %s", strerror(-r));
		return r;
	}
	p->tx_frame_size = p->frame_size;
	p->tx_frame_nr = secho_io_ring_frames(cfg->tx_ring, p->tx_frame_size);
	req.tp_block_size = PKT_BLOCK_V2 > p->tx_frame_size ? PKT_BLOCK_V2 : p->tx_frame_size;
	req.tp_block_nr =
	        (uint32_t)(((uint64_t)p->tx_frame_nr * p->tx_frame_size + req.tp_block_size - 1) /
	                   req.tp_block_size);
	p->tx_frame_nr = req.tp_block_nr * (req.tp_block_size / p->tx_frame_size);
	req.tp_frame_size = p->tx_frame_size;
	req.tp_frame_nr = p->tx_frame_nr;
	if (setsockopt(p->txfd, SOL_PACKET, PACKET_TX_RING, &req, sizeof(req))) {
		r = -errno;
		secho_io_err(err, errlen, "PACKET_TX_RING: %s", strerror(-r));
		return r;
	}
	p->tx_map_len = (size_t)req.tp_block_size * req.tp_block_nr;
	void *m = mmap(NULL, p->tx_map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
	               p->txfd, 0);

	if (m == MAP_FAILED) {
		r = -errno;
		secho_io_err(err, errlen, "mmap TX ring: %s", strerror(-r));
		return r;
	}
	p->tx_map = m;
	/* Protocol 0: the TX socket is attached to the device but receives nothing. */
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = 0;
	sll.sll_ifindex = (int)ifindex;
	if (bind(p->txfd, (struct sockaddr *)&sll, sizeof(sll))) {
		r = -errno;
		secho_io_err(err, errlen, "bind TX socket to %s: %s", p->ifname, strerror(-r));
		return r;
	}
	return 0;
}

/* Classic BPF that accepts no frame (a zero snap length drops it). */
static const struct sock_filter drop_all[] = {BPF_STMT(BPF_RET | BPF_K, 0)};

/* Attach (or replace) the classic BPF filter of fd: n instructions at insns. 0 or -errno. */
static int attach_filter(int fd, const void *insns, uint16_t n)
{
	struct sock_fprog prog = {.len = n, .filter = (struct sock_filter *)(uintptr_t)insns};

	return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) ? -errno : 0;
}

struct secho_io *secho_io_packet_open(const struct secho_io_cfg *cfg, char *err, size_t errlen)
{
	struct sockaddr_ll sll = {0};
	struct pkt_io *p;
	unsigned ifindex;
	bool ignore_outgoing = true;
	int r;

	if (!cfg->ifname || strlen(cfg->ifname) >= IF_NAMESIZE) {
		secho_io_err(err, errlen, "AF_PACKET: bad interface name");
		errno = EINVAL;
		return NULL;
	}
	ifindex = if_nametoindex(cfg->ifname);
	if (!ifindex) {
		r = -errno;
		secho_io_err(err, errlen, "AF_PACKET: interface %s: %s", cfg->ifname, strerror(-r));
		errno = -r;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		secho_io_err(err, errlen, "AF_PACKET: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	p->io.ops = &pkt_ops;
	p->io.kind = SECHO_IO_PACKET;
	p->io.fanout_id = -1;
	p->io.busy_poll = cfg->busy_poll;
	p->txfd = -1;
	snprintf(p->ifname, sizeof(p->ifname), "%s", cfg->ifname);
	p->version = cfg->packet_version ? cfg->packet_version
	                                 : (cfg->hint == SECHO_IO_THROUGHPUT ? 3 : 2);
	if (p->version != 2 && p->version != 3) {
		secho_io_err(err, errlen, "AF_PACKET: version %d (want 2 or 3)",
		             cfg->packet_version);
		r = -EINVAL;
		goto fail_free;
	}
	/* Frames hold the ring's header, our reserve, the longest frame and a response 32
	 * bytes longer built in place (TPACKET_V3's header is the longer one). */
	uint32_t need = (uint32_t)(TPACKET_ALIGN(TPACKET3_HDRLEN) + 16 + PKT_RESERVE) +
	                secho_io_max_frame(cfg) + SECHO_IO_RESP_GROWTH;
	p->frame_size = secho_io_pow2(cfg->frame_size > need ? cfg->frame_size : need);
	if (p->frame_size < 2048)
		p->frame_size = 2048;
	p->sendmmsg_mode = cfg->packet_sendmmsg && !cfg->rx_only;
	p->vlan_restore = cfg->vlan_restore;

	/* Protocol 0 until bind: no frames from other interfaces slip into the ring. */
	p->rxfd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (p->rxfd < 0) {
		r = -errno;
		secho_io_err(err, errlen, "AF_PACKET socket: %s", strerror(-r));
		goto fail_free;
	}
	if ((r = setup_rx_ring(p, cfg, err, errlen)))
		goto fail_rx;
	/* Available since Linux 4.20; older kernels show our own TX (not with qdisc bypass). */
	if (setopt_int(p->rxfd, SOL_PACKET, PACKET_IGNORE_OUTGOING, 1))
		ignore_outgoing = false;
	if (p->sendmmsg_mode) {
		if ((r = setopt_int(p->rxfd, SOL_PACKET, PACKET_QDISC_BYPASS, 1))) {
			secho_io_err(err, errlen, "PACKET_QDISC_BYPASS: %s", strerror(-r));
			goto fail_rx;
		}
		p->txfd = p->rxfd;
		p->mm_buf = malloc((size_t)SECHO_IO_BURST * p->frame_size);
		if (!p->mm_buf) {
			secho_io_err(err, errlen, "AF_PACKET: out of memory");
			r = -ENOMEM;
			goto fail_rx;
		}
	}
	/* A socket joins its fanout group only once it is bound, and in between it receives
	 * every frame of the interface, frames the group's members receive as well (answered
	 * or counted twice). Until it has joined, a filter that accepts nothing keeps them out;
	 * the caller's filter, or none, replaces it after the join. */
	if (cfg->fanout && (r = attach_filter(p->rxfd, drop_all, 1)) != 0) {
		secho_io_err(err, errlen, "SO_ATTACH_FILTER: %s", strerror(-r));
		goto fail_rx;
	}
	if (!cfg->fanout && cfg->bpf && cfg->bpf_len &&
	    (r = attach_filter(p->rxfd, cfg->bpf, cfg->bpf_len)) != 0) {
		secho_io_err(err, errlen, "SO_ATTACH_FILTER: %s", strerror(-r));
		goto fail_rx;
	}
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = (int)ifindex;
	if (bind(p->rxfd, (struct sockaddr *)&sll, sizeof(sll))) {
		r = -errno;
		secho_io_err(err, errlen, "bind AF_PACKET to %s: %s", cfg->ifname, strerror(-r));
		goto fail_rx;
	}
	if (cfg->fanout) {
		/* After bind: the group spreads the interface's frames over its sockets. A new
		 * group asks the kernel for an id no other group has (the id given must be 0),
		 * then reads it back; the flag is the first socket's alone, not the group's. */
		int fo = cfg->fanout_new ? (PACKET_FANOUT_HASH | PACKET_FANOUT_FLAG_UNIQUEID) << 16
		                         : (int)cfg->fanout_id | (PACKET_FANOUT_HASH << 16);
		socklen_t fl = sizeof(fo);

		/* The group's hook does not take the socket's PACKET_IGNORE_OUTGOING: the group
		 * must say it (Linux 4.20; an older kernel refuses the flag, and its groups see
		 * the frames the host sends as well). Every socket of a group gives it. */
		r = setopt_int(p->rxfd, SOL_PACKET, PACKET_FANOUT,
		               fo | FANOUT_IGNORE_OUTGOING << 16);
		if (r == -EINVAL)
			r = setopt_int(p->rxfd, SOL_PACKET, PACKET_FANOUT, fo);
		if (r) {
			if (cfg->fanout_new)
				secho_io_err(err, errlen, "PACKET_FANOUT (a new group): %s",
				             strerror(-r));
			else
				secho_io_err(err, errlen, "PACKET_FANOUT (group %u): %s",
				             cfg->fanout_id, strerror(-r));
			goto fail_rx;
		}
		if (getsockopt(p->rxfd, SOL_PACKET, PACKET_FANOUT, &fo, &fl)) {
			r = -errno;
			secho_io_err(err, errlen, "PACKET_FANOUT: the group's id: %s",
			             strerror(-r));
			goto fail_rx;
		}
		p->io.fanout_id = fo & 0xffff;
		if (cfg->bpf && cfg->bpf_len)
			r = attach_filter(p->rxfd, cfg->bpf, cfg->bpf_len);
		else if (setopt_int(p->rxfd, SOL_SOCKET, SO_DETACH_FILTER, 0)) /* an int: */
			r = -errno; /* the kernel refuses a shorter option (EINVAL) */
		if (r) {
			secho_io_err(err, errlen, "filter after PACKET_FANOUT: %s", strerror(-r));
			goto fail_rx;
		}
	}
	if (cfg->promisc) {
		struct packet_mreq mr = {.mr_ifindex = (int)ifindex, .mr_type = PACKET_MR_PROMISC};

		if (setsockopt(p->rxfd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr))) {
			r = -errno;
			secho_io_err(err, errlen, "promiscuous mode: %s", strerror(-r));
			goto fail_rx;
		}
	}
	if (!p->sendmmsg_mode && !cfg->rx_only && (r = setup_tx_ring(p, cfg, ifindex, err, errlen)))
		goto fail_tx;

	p->io.fd = p->rxfd;
	p->io.in_place = p->sendmmsg_mode;
	const char *tx_desc = cfg->rx_only       ? "none (receive only)"
	                      : p->sendmmsg_mode ? "sendmmsg in place from the RX ring"
	                                         : "TPACKET_V2 TX ring";
	const char *tx_more = cfg->rx_only      ? ""
	                      : ignore_outgoing ? ", qdisc bypass"
	                                        : ", qdisc bypass, own TX not ignored";
	if (p->version == 2)
		snprintf(p->io.desc, sizeof(p->io.desc),
		         "AF_PACKET TPACKET_V2 frame ring (%u x %u B) on %s%s, TX: %s%s",
		         p->frame_nr, p->frame_size, cfg->ifname,
		         cfg->packet_version ? ""
		                             : " (latency hint: each frame handed over at once)",
		         tx_desc, tx_more);
	else
		snprintf(p->io.desc, sizeof(p->io.desc),
		         "AF_PACKET TPACKET_V3 block ring (%u x %u KiB, retire %u ms) on %s%s, TX: "
		         "%s%s",
		         p->block_nr, p->block_size / 1024,
		         cfg->v3_retire_ms ? cfg->v3_retire_ms : 1, cfg->ifname,
		         cfg->packet_version ? "" : " (throughput hint)", tx_desc, tx_more);
	return &p->io;

fail_tx:
	if (p->tx_map)
		munmap(p->tx_map, p->tx_map_len);
	if (p->txfd >= 0 && p->txfd != p->rxfd)
		close(p->txfd);
fail_rx:
	free(p->mm_buf);
	if (p->rx_map)
		munmap(p->rx_map, p->rx_map_len);
	close(p->rxfd);
fail_free:
	free(p);
	errno = -r;
	return NULL;
}
