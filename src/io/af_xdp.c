/*
 * src/io/af_xdp.c - AF_XDP backend (libxdp's xsk API, Debian libxdp 1.3).
 *
 * One UMEM of nframes frames (frame_size bytes each, aligned mode) shared by one socket on
 * one interface queue. libxdp loads its default XDP program, which redirects every frame
 * arriving on a queue that has a socket in its XSKMAP to that socket.
 *
 * Frame life cycle (each frame is in exactly one place):
 *   free stack --(refill)--> FILL ring --(kernel writes a frame)--> RX ring --(rx_burst)-->
 *   owned by the data path --+-- rx_release: back to the free stack
 *                            +-- tx_commit (in place): TX ring --(kernel sends)-->
 *                                COMPLETION ring --(reap in tx_flush)--> free stack
 * Responses are built in the RX frame itself (moved towards the frame start by `front`
 * bytes of headroom), so no frame is ever copied in user space.
 *
 * Ring ordering (see the comments in <xdp/xsk.h> and the kernel's xsk_queue.h): consumer
 * peeks load the producer index with acquire (descriptor contents visible after it);
 * consumer releases and producer submits store with release (our reads of the entries,
 * and our writes of descriptors and frame bytes, happen before the kernel sees the index).
 *
 * Measured pitfalls (PLATFORM.md): ring structs are zeroed before xsk_umem__create (libxdp
 * 1.3 leaves two completion-ring fields unset); the fill ring is twice the frame count
 * because the kernel publishes its consumer index lazily; one TX kick per burst (a kick
 * cost 10-13 us here); veth offers copy mode only.
 *
 * Teardown is asynchronous in the kernel: closing the socket only schedules the release of
 * its buffer pool, and the pool stays registered on the queue until an RCU grace period has
 * passed and a work item has taken the RTNL lock (about 16 ms on an idle machine here, much
 * longer while other processes create or delete interfaces). A bind to the same queue in that
 * window fails with EBUSY, even after the closing process has exited. So close waits
 * (bounded) until the kernel reports the queue free (netdev generic netlink,
 * NETDEV_CMD_QUEUE_GET: the queue's NETDEV_A_QUEUE_XSK attribute, on kernels that have it,
 * as 6.18 here): when secho_io_close() returns, the next socket can bind. A kernel that
 * cannot report it is noticed at open (our own socket not shown) and not waited for.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/genetlink.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <linux/netlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <xdp/libxdp.h>
#include <xdp/xsk.h>

#include "io/io_inner.h"

struct xdp_io {
	struct secho_io io;
	/* Rings first: they are touched on every burst. */
	struct xsk_ring_cons rx;
	struct xsk_ring_prod tx;
	struct xsk_ring_prod fill;
	struct xsk_ring_cons comp;
	uint8_t *area;
	uint32_t frame_size;
	uint32_t tx_reserved; /* TX descriptors written, not yet submitted */
	uint32_t outstanding; /* submitted TX descriptors not yet completed */
	bool need_kick;       /* submitted frames the kernel may not have taken yet */
	uint64_t slot_addr;   /* UMEM address of the open tx_slot() reservation */
	uint32_t nfree;
	uint64_t *free; /* frame base addresses owned by us and unused */
	/* Frames kept out of the FILL ring for standalone responses (tx_slot with rx ==
	 * NULL): the top XDP_SOLO frames of the UMEM; completion returns them here. */
	uint64_t solo_base;
	uint32_t nsolo;
	uint64_t solo[64];

	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	size_t area_len;
	uint32_t nframes;
	uint32_t rx_frames; /* the RX ring's size (power of 2) */
	unsigned ifindex;
	uint32_t xdp_flags;
	uint32_t prog_before; /* XDP program id on the interface before we opened, 0 = none */
	uint32_t queue;
	bool external_prog; /* the caller's program redirects to us (cfg.xdp_external_prog) */
	bool zero_copy;
	bool sees_release; /* the kernel reports our queue's socket (queue_xsk_bound() == 1) */
	char ifname[IF_NAMESIZE];
};

static inline uint64_t frame_base(const struct xdp_io *x, uint64_t addr)
{
	return addr & ~(uint64_t)(x->frame_size - 1);
}

/* Move free frames into the FILL ring, as many as it takes. Can't fail. */
static void refill(struct xdp_io *x)
{
	uint32_t idx, n;

	if (!x->nfree)
		return;
	n = xsk_prod_nb_free(&x->fill, x->nfree);
	if (n > x->nfree)
		n = x->nfree;
	if (!n || xsk_ring_prod__reserve(&x->fill, n, &idx) != n)
		return;
	for (uint32_t i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(&x->fill, idx + i) = x->free[--x->nfree];
	/* release: the addresses are written before the kernel may consume them */
	xsk_ring_prod__submit(&x->fill, n);
}

/* Take completed TX frames back onto the free stack. Can't fail. */
static void reap_completions(struct xdp_io *x)
{
	uint32_t idx, n;

	while ((n = xsk_ring_cons__peek(&x->comp, SECHO_IO_BURST * 2, &idx)) > 0) {
		/* acquire (in peek): the kernel is done with these frames */
		for (uint32_t i = 0; i < n; i++) {
			uint64_t b = frame_base(x, *xsk_ring_cons__comp_addr(&x->comp, idx + i));
			if (b >= x->solo_base)
				x->solo[x->nsolo++] = b;
			else
				x->free[x->nfree++] = b;
		}
		xsk_ring_cons__release(&x->comp, n);
		x->outstanding -= n < x->outstanding ? n : x->outstanding;
	}
}

static unsigned xdp_rx_burst(struct secho_io *io, struct secho_io_pkt *pkts, unsigned max)
{
	struct xdp_io *x = (struct xdp_io *)io;
	uint32_t idx;
	unsigned n = xsk_ring_cons__peek(&x->rx, max, &idx);

	if (!n) {
		/* Drivers that need it are woken to refill (not needed in copy mode). */
		if (xsk_ring_prod__needs_wakeup(&x->fill)) {
			io->stats.kicks++;
			recvfrom(xsk_socket__fd(x->xsk), NULL, 0, MSG_DONTWAIT, NULL, NULL);
		}
		return 0;
	}
	for (unsigned i = 0; i < n; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&x->rx, idx + i);
		uint32_t off = (uint32_t)(d->addr & (x->frame_size - 1));

		pkts[i].data = x->area + d->addr;
		/* the frame's headers, which another CPU wrote: asked for now, read when the
		 * burst is dissected (frame by frame, each a miss otherwise) */
		__builtin_prefetch(pkts[i].data);
		__builtin_prefetch(pkts[i].data + 64);
		pkts[i].len = d->len;
		pkts[i].headroom = off;
		pkts[i].tailroom = x->frame_size - off - d->len;
		pkts[i].flags = 0;
		pkts[i].vlan = 0; /* XDP sees the frame's own bytes, tags included */
		pkts[i].handle = d->addr;
		pkts[i].ts_ns = 0;
	}
	/* The descriptors are copied out, so the RX ring slots go back now (release); the
	 * frames themselves stay ours until rx_release() or TX completion. */
	xsk_ring_cons__release(&x->rx, n);
	return n;
}

static uint8_t *xdp_tx_slot(struct secho_io *io, struct secho_io_pkt *rx, uint32_t len,
                            uint32_t front)
{
	struct xdp_io *x = (struct xdp_io *)io;

	if (!rx) {
		if (!x->nsolo)
			reap_completions(x);
		if (!x->nsolo || len > x->frame_size - XDP_PACKET_HEADROOM ||
		    xsk_prod_nb_free(&x->tx, 1) < 1)
			return NULL;
		x->slot_addr = x->solo[x->nsolo - 1] + XDP_PACKET_HEADROOM;
		return x->area + x->slot_addr;
	}
	if (front > rx->headroom || len > (uint64_t)front + rx->len + rx->tailroom)
		return NULL;
	/* Reserved-but-unsubmitted descriptors already count as used here. */
	if (xsk_prod_nb_free(&x->tx, 1) < 1)
		return NULL;
	x->slot_addr = rx->handle - front;
	return x->area + x->slot_addr;
}

static void xdp_tx_commit(struct secho_io *io, struct secho_io_pkt *rx, uint32_t len)
{
	struct xdp_io *x = (struct xdp_io *)io;
	struct xdp_desc *d;
	uint32_t idx;

	if (xsk_ring_prod__reserve(&x->tx, 1, &idx) != 1)
		return; /* cannot happen after tx_slot() said there was room */
	d = xsk_ring_prod__tx_desc(&x->tx, idx);
	d->addr = x->slot_addr;
	d->len = len;
	d->options = 0;
	x->tx_reserved++;
	if (rx)
		rx->flags |= SECHO_IO_PKT_SENT; /* the frame now belongs to the TX ring */
	else
		x->nsolo--; /* the solo frame belongs to the TX ring until completion */
	io->stats.tx++;
}

static void xdp_tx_flush(struct secho_io *io)
{
	struct xdp_io *x = (struct xdp_io *)io;

	if (x->tx_reserved) {
		/* release: descriptors and frame bytes are written before the kernel looks */
		xsk_ring_prod__submit(&x->tx, x->tx_reserved);
		x->outstanding += x->tx_reserved;
		x->tx_reserved = 0;
		x->need_kick = true;
	}
	if (x->need_kick) {
		if (xsk_ring_prod__needs_wakeup(&x->tx)) {
			io->stats.kicks++;
			/* Copy mode sends at most 32 frames per call and says EAGAIN when more
			 * are left; EBUSY/ENOBUFS are transient too: kick again next time. */
			if (sendto(xsk_socket__fd(x->xsk), NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 &&
			    errno != EAGAIN && errno != EBUSY && errno != ENOBUFS &&
			    errno != EINTR && errno != ENETDOWN)
				io->stats.tx_errors++;
		}
		/* Still unsent descriptors in the TX ring? Then kick again next flush. */
		x->need_kick = xsk_prod_nb_free(&x->tx, x->tx.size) < x->tx.size;
	}
	if (x->outstanding)
		reap_completions(x);
	refill(x);
}

static void xdp_rx_release(struct secho_io *io, struct secho_io_pkt *pkts, unsigned n)
{
	struct xdp_io *x = (struct xdp_io *)io;

	for (unsigned i = 0; i < n; i++)
		if (!(pkts[i].flags & SECHO_IO_PKT_SENT))
			x->free[x->nfree++] = frame_base(x, pkts[i].handle);
	refill(x);
}

static int xdp_rx_ready(struct secho_io *io)
{
	struct xdp_io *x = (struct xdp_io *)io;

	return xsk_cons_nb_avail(&x->rx, 1) > 0;
}

static void xdp_read_kernel_stats(struct secho_io *io)
{
	struct xdp_io *x = (struct xdp_io *)io;
	struct xdp_statistics st;
	socklen_t sl = sizeof(st);

	memset(&st, 0, sizeof(st));
	/* Cumulative counters (not reset by reading). */
	if (getsockopt(xsk_socket__fd(x->xsk), SOL_XDP, XDP_STATISTICS, &st, &sl) == 0) {
		io->stats.rx_dropped_by_kernel = st.rx_dropped + st.rx_ring_full;
	}
}

/* --- VLAN tags ----------------------------------------------------------------------- */

/* True when ifname's device takes VLAN tags off received frames before XDP runs: a NIC with
 * rx-vlan-offload on (ETHTOOL_GFLAGS ETH_FLAG_RXVLAN) strips them in hardware, and the tag
 * then reaches an XDP program only through driver metadata, never in the frame: an AF_XDP
 * socket would see tagged frames as untagged ones. veth (and the kernel's own path) leave
 * the tag in the frame for XDP and take it off later, whatever the flag says. Can't fail:
 * false when the device cannot be asked. */
static bool strips_vlan_before_xdp(const char *ifname)
{
	struct ethtool_value ev = {.cmd = ETHTOOL_GFLAGS};
	struct ethtool_drvinfo di = {.cmd = ETHTOOL_GDRVINFO};
	struct ifreq ifr;
	bool strips = false;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return false;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = (char *)&ev;
	if (ioctl(fd, SIOCETHTOOL, &ifr) == 0 && (ev.data & ETH_FLAG_RXVLAN)) {
		ifr.ifr_data = (char *)&di;
		strips = !(ioctl(fd, SIOCETHTOOL, &ifr) == 0 && !strcmp(di.driver, "veth"));
	}
	close(fd);
	return strips;
}

/* --- is an AF_XDP socket bound to the queue? (netdev generic netlink) ----------------- */

/* From the kernel's include/uapi/linux/netdev.h (Debian 12's headers predate it). */
#define NETDEV_FAMILY_NAME_STR "netdev"
#define NETDEV_CMD_QUEUE_GET_  10
#define NETDEV_A_QUEUE_ID_     1
#define NETDEV_A_QUEUE_IFINDEX 2
#define NETDEV_A_QUEUE_TYPE_   3
#define NETDEV_A_QUEUE_XSK_    7
#define NETDEV_QUEUE_TYPE_RX_  0

struct nl_msg {
	struct nlmsghdr n;
	struct genlmsghdr g;
	uint8_t attrs[64];
};

static void nl_put(struct nl_msg *m, uint16_t type, const void *data, uint16_t len)
{
	struct nlattr *a = (struct nlattr *)((uint8_t *)m + NLMSG_ALIGN(m->n.nlmsg_len));

	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	memcpy((uint8_t *)a + NLA_HDRLEN, data, len);
	m->n.nlmsg_len = NLMSG_ALIGN(m->n.nlmsg_len) + NLA_ALIGN(a->nla_len);
}

/* Send m on fd and receive the answer into resp. Returns the answer's attribute bytes
 * (after the generic netlink header) and their length in *alen, or NULL with -errno in
 * *alen (the kernel's error, or -EIO for a malformed answer). */
static const uint8_t *nl_call(int fd, struct nl_msg *m, uint8_t *resp, size_t cap, int *alen)
{
	static uint32_t seq;
	ssize_t r;

	m->n.nlmsg_flags = NLM_F_REQUEST;
	m->n.nlmsg_seq = ++seq;
	if (send(fd, m, m->n.nlmsg_len, 0) < 0) {
		*alen = -errno;
		return NULL;
	}
	do
		r = recv(fd, resp, cap, 0);
	while (r < 0 && errno == EINTR);
	const struct nlmsghdr *h = (const struct nlmsghdr *)resp;

	if (r < (ssize_t)sizeof(*h) || h->nlmsg_len > (size_t)r) {
		*alen = r < 0 ? -errno : -EIO;
		return NULL;
	}
	if (h->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(h);

		*alen = h->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) && e->error ? e->error : -EIO;
		return NULL;
	}
	if (h->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN)) {
		*alen = -EIO;
		return NULL;
	}
	*alen = (int)(h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN));
	return (const uint8_t *)NLMSG_DATA(h) + GENL_HDRLEN;
}

/* The attribute of the given type in a[0..len), or NULL. */
static const struct nlattr *nl_find(const uint8_t *a, int len, uint16_t type)
{
	while (len >= NLA_HDRLEN) {
		const struct nlattr *at = (const struct nlattr *)a;

		if (at->nla_len < NLA_HDRLEN || at->nla_len > len)
			return NULL;
		if ((at->nla_type & NLA_TYPE_MASK) == type)
			return at;
		len -= NLA_ALIGN(at->nla_len);
		a += NLA_ALIGN(at->nla_len);
	}
	return NULL;
}

/* 1 when the kernel has an AF_XDP buffer pool registered on RX queue `queue` of ifindex (a
 * socket is bound there, or one was closed and its release has not finished), 0 when not,
 * -EOPNOTSUPP when the kernel cannot tell (no netdev family or no queue query), other
 * -errno on error. A kernel that answers the query but predates NETDEV_A_QUEUE_XSK always
 * says 0: callers ask once while bound (secho_io_xdp_open) to learn whether it can tell. */
static int queue_xsk_bound(unsigned ifindex, uint32_t queue)
{
	uint8_t resp[4096];
	struct nl_msg m;
	int fd, alen, rc;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		return -errno;
	/* The family id of "netdev". */
	memset(&m, 0, sizeof(m));
	m.n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	m.n.nlmsg_type = GENL_ID_CTRL;
	m.g.cmd = CTRL_CMD_GETFAMILY;
	m.g.version = 1;
	nl_put(&m, CTRL_ATTR_FAMILY_NAME, NETDEV_FAMILY_NAME_STR, sizeof(NETDEV_FAMILY_NAME_STR));
	const uint8_t *a = nl_call(fd, &m, resp, sizeof(resp), &alen);
	const struct nlattr *id = a ? nl_find(a, alen, CTRL_ATTR_FAMILY_ID) : NULL;

	if (!id || id->nla_len < NLA_HDRLEN + sizeof(uint16_t)) {
		close(fd);
		return -EOPNOTSUPP;
	}
	uint16_t family;
	uint32_t v;

	memcpy(&family, (const uint8_t *)id + NLA_HDRLEN, sizeof(family));
	memset(&m, 0, sizeof(m));
	m.n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	m.n.nlmsg_type = family;
	m.g.cmd = NETDEV_CMD_QUEUE_GET_;
	m.g.version = 1;
	v = ifindex;
	nl_put(&m, NETDEV_A_QUEUE_IFINDEX, &v, sizeof(v));
	v = queue;
	nl_put(&m, NETDEV_A_QUEUE_ID_, &v, sizeof(v));
	v = NETDEV_QUEUE_TYPE_RX_;
	nl_put(&m, NETDEV_A_QUEUE_TYPE_, &v, sizeof(v));
	a = nl_call(fd, &m, resp, sizeof(resp), &alen);
	close(fd);
	if (!a)
		rc = alen == -EOPNOTSUPP || alen == -EINVAL ? -EOPNOTSUPP : alen;
	else
		rc = nl_find(a, alen, NETDEV_A_QUEUE_XSK_) != NULL;
	return rc;
}

/* Wait, at most timeout_ms, until the kernel has released the queue's AF_XDP buffer pool.
 * Returns 0 when released (or when the kernel cannot tell), -ETIMEDOUT. */
static int wait_queue_released(const struct xdp_io *x, unsigned timeout_ms)
{
	struct timespec ts = {0, 1000000}; /* 1 ms between queries */

	for (unsigned waited = 0; waited <= timeout_ms; waited++) {
		if (queue_xsk_bound(x->ifindex, x->queue) <= 0)
			return 0;
		nanosleep(&ts, NULL);
	}
	return -ETIMEDOUT;
}

/* Detach the XDP program libxdp attached for us, if it is still there: without a bpffs
 * mount (as here) libxdp cannot count the program's users and leaves it attached. Only a
 * program that was not there before we opened is removed. Can't fail. */
static void detach_prog(struct xdp_io *x, uint32_t mode_flags)
{
	uint32_t id = 0;

	if (x->external_prog)
		return;
	if (bpf_xdp_query_id((int)x->ifindex, (int)mode_flags, &id) || !id || id == x->prog_before)
		return;
	bpf_xdp_detach((int)x->ifindex, (int)mode_flags, NULL);
}

/* Delete socket and UMEM, then the XDP program. */
static void xdp_teardown(struct xdp_io *x, uint32_t mode_flags)
{
	if (x->xsk)
		xsk_socket__delete(x->xsk);
	x->xsk = NULL;
	if (x->umem)
		xsk_umem__delete(x->umem);
	x->umem = NULL;
	detach_prog(x, mode_flags);
}

static void xdp_close(struct secho_io *io)
{
	struct xdp_io *x = (struct xdp_io *)io;

	xdp_teardown(x, x->xdp_flags);
	/* Return only once the queue can be bound again (see the top of this file); bounded,
	 * since a release held up for seconds means something else is wrong. */
	if (x->sees_release)
		(void)wait_queue_released(x, 5000);
	if (x->area)
		munmap(x->area, x->area_len);
	free(x->free);
	free(x);
}

static const struct secho_io_ops xdp_ops = {
        .close = xdp_close,
        .rx_burst = xdp_rx_burst,
        .tx_slot = xdp_tx_slot,
        .tx_commit = xdp_tx_commit,
        .tx_flush = xdp_tx_flush,
        .rx_release = xdp_rx_release,
        .rx_ready = xdp_rx_ready,
        .read_kernel_stats = xdp_read_kernel_stats,
};

/* libbpf and libxdp log to stderr by default (e.g. "No bpffs found", which is expected
 * here); keep them quiet unless SECHO_IO_DEBUG is set. */
static int quiet_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	return getenv("SECHO_IO_DEBUG") ? vfprintf(stderr, fmt, ap) : 0;
}

static int quiet_libxdp(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	return getenv("SECHO_IO_DEBUG") ? vfprintf(stderr, fmt, ap) : 0;
}

/* One complete attempt: UMEM + socket with these flags. Returns 0 or -errno; on failure
 * nothing is left behind (a failed bind leaves the rings set on the UMEM's socket, so a
 * retry needs a fresh UMEM). */
static int try_bind(struct xdp_io *x, const struct secho_io_cfg *cfg, uint32_t xdp_flags,
                    uint16_t bind_flags)
{
	struct xsk_umem_config ucfg = {
	        .fill_size = secho_io_pow2(x->nframes * 2),
	        .comp_size = secho_io_pow2(x->nframes),
	        .frame_size = x->frame_size,
	        .frame_headroom = 0,
	        .flags = 0,
	};
	struct xsk_socket_config scfg = {
	        .rx_size = x->rx_frames,
	        .tx_size = secho_io_pow2(cfg->tx_ring ? cfg->tx_ring : 2048),
	        .libxdp_flags = cfg->xdp_external_prog ? XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD : 0,
	        .xdp_flags = xdp_flags,
	        .bind_flags = bind_flags,
	};
	int r;

	memset(&x->fill, 0, sizeof(x->fill));
	memset(&x->comp, 0, sizeof(x->comp));
	memset(&x->rx, 0, sizeof(x->rx));
	memset(&x->tx, 0, sizeof(x->tx));
	r = xsk_umem__create(&x->umem, x->area, x->area_len, &x->fill, &x->comp, &ucfg);
	if (r) {
		x->umem = NULL;
		return r < 0 ? r : -r;
	}
	r = xsk_socket__create(&x->xsk, x->ifname, cfg->queue, x->umem, &x->rx, &x->tx, &scfg);
	if (r) {
		x->xsk = NULL;
		xdp_teardown(x, xdp_flags);
		/* libxdp binds before it attaches the XDP program: when the attach failed (a
		 * veth whose MTU is too large for XDP, say), a socket was bound and closed,
		 * and the next attempt would meet its queue still registered (EBUSY). */
		(void)wait_queue_released(x, 2000);
		return r < 0 ? r : -r;
	}
	/* The caller's program finds the socket at its queue in the caller's XSKMAP (the
	 * kernel takes it out again when the socket closes). */
	if (cfg->xdp_external_prog) {
		r = xsk_socket__update_xskmap(x->xsk, cfg->xsk_map_fd);
		if (r) {
			xdp_teardown(x, xdp_flags);
			return r < 0 ? r : -r;
		}
	}
	return 0;
}

struct secho_io *secho_io_xdp_open(const struct secho_io_cfg *cfg, bool zc_only, char *err,
                                   size_t errlen)
{
	static const struct {
		uint32_t flags;
		const char *name;
	} modes[] = {{XDP_FLAGS_DRV_MODE, "native XDP"}, {XDP_FLAGS_SKB_MODE, "SKB XDP"}};
	char zc_why[96] = "", drv_why[96] = "";
	struct xdp_io *x;
	int r = -EINVAL;
	unsigned m0 = 0, m1 = 1;

	if (!cfg->ifname || strlen(cfg->ifname) >= IF_NAMESIZE) {
		secho_io_err(err, errlen, "AF_XDP: bad interface name");
		errno = EINVAL;
		return NULL;
	}
	libbpf_set_print(quiet_libbpf);
	libxdp_set_print(quiet_libxdp);
	x = calloc(1, sizeof(*x));
	if (!x) {
		secho_io_err(err, errlen, "AF_XDP: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	x->io.ops = &xdp_ops;
	x->io.kind = SECHO_IO_XDP;
	x->io.fanout_id = -1;
	x->io.busy_poll = cfg->busy_poll;
	x->io.in_place = true;
	snprintf(x->ifname, sizeof(x->ifname), "%s", cfg->ifname);
	x->queue = cfg->queue;
	x->ifindex = if_nametoindex(cfg->ifname);
	x->external_prog = cfg->xdp_external_prog;
	if (!x->ifindex) {
		r = -errno;
		secho_io_err(err, errlen, "AF_XDP: interface %s: %s", cfg->ifname, strerror(-r));
		goto fail_free;
	}
	if (strips_vlan_before_xdp(cfg->ifname)) {
		secho_io_err(err, errlen,
		             "AF_XDP on %s: the device takes VLAN tags off before XDP sees the "
		             "frame (rx-vlan-offload on), so tagged frames would look untagged: "
		             "turn it off (ethtool -K %s rxvlan off) or use AF_PACKET",
		             cfg->ifname, cfg->ifname);
		r = -EOPNOTSUPP;
		goto fail_free;
	}
	if (bpf_xdp_query_id((int)x->ifindex, 0, &x->prog_before))
		x->prog_before = 0;
	/* A UMEM frame holds the kernel's XDP headroom, the longest frame and a response 32
	 * bytes longer built in place. It is at most a page: a longer frame would need
	 * multi-buffer AF_XDP (XDP_USE_SG), and with it an XDP program that accepts frags,
	 * which libxdp 1.3's default program is not (a veth with such a program attached
	 * refuses an MTU above about 3.5 KB anyway). */
	uint32_t need = XDP_PACKET_HEADROOM + secho_io_max_frame(cfg) + SECHO_IO_RESP_GROWTH;
	x->frame_size = secho_io_pow2(cfg->frame_size > need ? cfg->frame_size : need);
	if (x->frame_size < 2048)
		x->frame_size = 2048;
	if (x->frame_size > 4096) {
		secho_io_err(
		        err, errlen,
		        "AF_XDP: frames of up to %u bytes do not fit one UMEM frame (at most "
		        "4096 bytes, of which %u are the kernel's headroom and %u room for the "
		        "longer response; multi-buffer AF_XDP is not available with this "
		        "XDP program): AF_XDP carries frames of up to %u bytes (an MTU of %u), "
		        "use AF_PACKET for more",
		        secho_io_max_frame(cfg), XDP_PACKET_HEADROOM, SECHO_IO_RESP_GROWTH,
		        4096 - XDP_PACKET_HEADROOM - SECHO_IO_RESP_GROWTH,
		        4096 - XDP_PACKET_HEADROOM - SECHO_IO_RESP_GROWTH - 18);
		r = -EMSGSIZE;
		goto fail_free;
	}
	x->rx_frames = cfg->rx_ring || !cfg->rx_ring_bytes
	                       ? secho_io_pow2(cfg->rx_ring ? cfg->rx_ring : 2048)
	                       : secho_io_rx_frames(cfg, x->frame_size);
	x->nframes = x->rx_frames + secho_io_pow2(cfg->tx_ring ? cfg->tx_ring : 2048);
	x->area_len = (size_t)x->nframes * x->frame_size;
	x->free = calloc(x->nframes, sizeof(*x->free));
	if (!x->free) {
		secho_io_err(err, errlen, "AF_XDP: out of memory");
		r = -ENOMEM;
		goto fail_free;
	}
	void *area = mmap(NULL, x->area_len, PROT_READ | PROT_WRITE,
	                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (area == MAP_FAILED) {
		r = -errno;
		secho_io_err(err, errlen, "AF_XDP: UMEM mmap (%zu bytes): %s", x->area_len,
		             strerror(-r));
		goto fail_list;
	}
	x->area = area;

	if (cfg->xdp_mode == SECHO_IO_XDP_SKB)
		m0 = 1;
	if (cfg->xdp_mode != SECHO_IO_XDP_ANY || cfg->xdp_external_prog)
		m1 = m0; /* with the caller's program the mode is not ours to choose */
	unsigned m;

	for (m = m0; m <= m1; m++) {
		uint32_t fl = modes[m].flags;

		if (!cfg->xdp_copy) {
			r = try_bind(x, cfg, fl, XDP_USE_NEED_WAKEUP | XDP_ZEROCOPY);
			if (!r) {
				x->zero_copy = true;
				break;
			}
			snprintf(zc_why, sizeof(zc_why), "zero-copy: %s", strerror(-r));
			if (zc_only)
				continue;
		}
		r = try_bind(x, cfg, fl, XDP_USE_NEED_WAKEUP | XDP_COPY);
		if (!r)
			break;
		if (m == 0)
			snprintf(drv_why, sizeof(drv_why), "native XDP: %s", strerror(-r));
	}
	if (r) {
		/* EBUSY: the kernel has a buffer pool on this queue: a live socket of another
		 * process, or one closed without waiting for its release (a killed process). */
		const char *busy = r == -EBUSY
		                           ? ": the queue already has an AF_XDP socket (another "
		                             "process, or one closed moments ago that the "
		                             "kernel has not finished releasing)"
		                           : "";

		if (zc_only)
			secho_io_err(err, errlen, "AF_XDP on %s queue %u: %s%s", cfg->ifname,
			             cfg->queue, zc_why, busy);
		else
			secho_io_err(err, errlen, "AF_XDP on %s queue %u: %s%s%s%s%s", cfg->ifname,
			             cfg->queue, strerror(-r), busy, zc_why[0] ? " (" : "", zc_why,
			             zc_why[0] ? ")" : "");
		goto fail_map;
	}
	x->xdp_flags = modes[m].flags;
	x->io.fd = xsk_socket__fd(x->xsk);
	/* Can the kernel show when our queue is released? It can if it shows it bound now. */
	x->sees_release = queue_xsk_bound(x->ifindex, x->queue) == 1;
	/* Every frame starts on the free stack; refill hands them all to the FILL ring,
	 * which has room for twice as many. */
	uint32_t nsolo = x->nframes / 8 < 64 ? x->nframes / 8 : 64;
	x->solo_base = (uint64_t)(x->nframes - nsolo) * x->frame_size;
	for (uint32_t i = 0; i < nsolo; i++)
		x->solo[x->nsolo++] = x->solo_base + (uint64_t)i * x->frame_size;
	for (uint32_t i = nsolo; i < x->nframes; i++)
		x->free[x->nfree++] = (uint64_t)(x->nframes - 1 - i) * x->frame_size;
	refill(x);
	if (x->nfree) {
		secho_io_err(err, errlen, "AF_XDP: fill ring took only %u of %u frames",
		             x->nframes - x->nfree, x->nframes);
		r = -ENOSPC;
		goto fail_sock;
	}
	if (snprintf(x->io.desc, sizeof(x->io.desc),
	             "AF_XDP %s, %s on %s queue %u (%u frames x %u B, RX ring %u)%s%s%s%s%s",
	             x->zero_copy ? "zero-copy" : "copy mode",
	             x->external_prog ? "the caller's XDP program" : modes[m].name, cfg->ifname,
	             cfg->queue, x->nframes, x->frame_size, x->rx_frames,
	             zc_why[0] || drv_why[0] ? " (" : "", zc_why,
	             zc_why[0] && drv_why[0] ? "; " : "", drv_why,
	             zc_why[0] || drv_why[0] ? ")" : "") >= (int)sizeof(x->io.desc))
		x->io.desc[sizeof(x->io.desc) - 1] = '\0';
	return &x->io;

fail_sock:
	xdp_teardown(x, x->xdp_flags);
	if (x->sees_release)
		(void)wait_queue_released(x, 5000);
fail_map:
	munmap(x->area, x->area_len);
fail_list:
	free(x->free);
fail_free:
	free(x);
	errno = -r;
	return NULL;
}
