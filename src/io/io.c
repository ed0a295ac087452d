/*
 * src/io/io.c - backend selection and the public entry points of include/secho/io.h.
 *
 * AUTO policy (measured on a veth pair here, see docs in PLATFORM.md):
 *   1. AF_XDP with zero-copy on the requested queue: the NIC writes frames straight into our
 *      UMEM, nothing beats it.
 *   2. otherwise AF_PACKET: in copy mode (the only mode veth offers) AF_XDP moved 0.6-0.8
 *      Mpps against >= 1.1 Mpps for AF_PACKET with a ring and qdisc bypass, and had twice
 *      the round trip, so copy-mode AF_XDP is only used when asked for by name.
 * The reason for the choice is kept in the description string.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <time.h>

#include "io/io_inner.h"
#include "sys/clock.h"

void secho_io_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized)
	va_end(ap);
}

bool secho_io_kind_parse(const char *s, enum secho_io_kind *kind)
{
	static const struct {
		const char *name;
		enum secho_io_kind kind;
	} names[] = {
	        {"auto", SECHO_IO_AUTO},        {"xdp", SECHO_IO_XDP},
	        {"af_xdp", SECHO_IO_XDP},       {"packet", SECHO_IO_PACKET},
	        {"af_packet", SECHO_IO_PACKET}, {"pcap", SECHO_IO_PCAP},
	};

	for (size_t i = 0; s && i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(s, names[i].name)) {
			*kind = names[i].kind;
			return true;
		}
	}
	return false;
}

const char *secho_io_kind_name(enum secho_io_kind kind)
{
	switch (kind) {
	case SECHO_IO_AUTO:
		return "auto";
	case SECHO_IO_XDP:
		return "xdp";
	case SECHO_IO_PACKET:
		return "packet";
	case SECHO_IO_PCAP:
		return "pcap";
	}
	return "?";
}

/* AUTO: zero-copy AF_XDP or AF_PACKET, saying why. Returns NULL with err on failure. */
static struct secho_io *open_auto(const struct secho_io_cfg *cfg, char *err, size_t errlen)
{
	char why[160] = "";
	struct secho_io *io;

	if (cfg->pcap_in || cfg->pcap_out)
		return secho_io_pcap_open(cfg, err, errlen);

	io = secho_io_xdp_open(cfg, true, why, sizeof(why));
	if (io)
		return io;

	io = secho_io_packet_open(cfg, err, errlen);
	if (!io)
		return NULL;
	/* Keep the backend's own description and append the reason it was chosen. */
	char base[sizeof(io->desc)];

	snprintf(base, sizeof(base), "%s", io->desc);
	if (snprintf(io->desc, sizeof(io->desc),
	             "%s; auto: %s, and copy-mode AF_XDP measured slower than AF_PACKET on "
	             "this kind of interface (veth: 0.6-0.8 vs >= 1.1 Mpps)",
	             base, why) >= (int)sizeof(io->desc))
		io->desc[sizeof(io->desc) - 1] = '\0'; /* truncated, still terminated */
	return io;
}

struct secho_io *secho_io_open(const struct secho_io_cfg *cfg, char *err, size_t errlen)
{
	secho_io_err(err, errlen, "no error");
	if (!cfg) {
		secho_io_err(err, errlen, "no configuration");
		errno = EINVAL;
		return NULL;
	}
	if (cfg->kind != SECHO_IO_PCAP && cfg->kind != SECHO_IO_AUTO && !cfg->ifname) {
		secho_io_err(err, errlen, "%s backend needs an interface name",
		             secho_io_kind_name(cfg->kind));
		errno = EINVAL;
		return NULL;
	}
	switch (cfg->kind) {
	case SECHO_IO_AUTO:
		if (!cfg->ifname && !cfg->pcap_in && !cfg->pcap_out) {
			secho_io_err(err, errlen, "auto needs an interface or pcap files");
			errno = EINVAL;
			return NULL;
		}
		return open_auto(cfg, err, errlen);
	case SECHO_IO_XDP:
		return secho_io_xdp_open(cfg, false, err, errlen);
	case SECHO_IO_PACKET:
		return secho_io_packet_open(cfg, err, errlen);
	case SECHO_IO_PCAP:
		return secho_io_pcap_open(cfg, err, errlen);
	}
	secho_io_err(err, errlen, "unknown backend kind %d", (int)cfg->kind);
	errno = EINVAL;
	return NULL;
}

void secho_io_close(struct secho_io *io)
{
	if (io)
		io->ops->close(io);
}

unsigned secho_io_rx_burst(struct secho_io *io, struct secho_io_pkt *pkts, unsigned max)
{
	unsigned n = io->ops->rx_burst(io, pkts, max);

	io->stats.rx += n;
	return n;
}

uint8_t *secho_io_tx_slot(struct secho_io *io, struct secho_io_pkt *rx, uint32_t len,
                          uint32_t front)
{
	uint8_t *p = io->ops->tx_slot(io, rx, len, front);

	if (!p)
		io->stats.ring_full++;
	return p;
}

uint8_t *secho_io_tx_slot_ahead(struct secho_io *io, unsigned k, uint32_t len)
{
	return io->ops->tx_slot_ahead ? io->ops->tx_slot_ahead(io, k, len) : NULL;
}

void secho_io_tx_commit(struct secho_io *io, struct secho_io_pkt *rx, uint32_t len)
{
	io->ops->tx_commit(io, rx, len);
}

void secho_io_tx_flush(struct secho_io *io)
{
	io->ops->tx_flush(io);
}

void secho_io_rx_release(struct secho_io *io, struct secho_io_pkt *pkts, unsigned n)
{
	io->ops->rx_release(io, pkts, n);
}

int secho_io_wait(struct secho_io *io, int timeout_ms)
{
	int r = io->ops->rx_ready(io);

	if (r != 0 || timeout_ms == 0 || io->fd < 0)
		return r;
	if (io->busy_poll) {
		/* Spin on the ring; read the clock only every 256 checks (~1 us). */
		uint64_t end = timeout_ms < 0 ? UINT64_MAX
		                              : secho_mono_ns() + (uint64_t)timeout_ms * 1000000u;

		for (unsigned i = 1;; i++) {
			r = io->ops->rx_ready(io);
			if (r)
				return r;
			if (!(i & 255) && secho_mono_ns() >= end)
				return 0;
			__builtin_ia32_pause();
		}
	}
	struct pollfd pfd = {.fd = io->fd, .events = POLLIN};

	io->stats.wakeups++;
	r = poll(&pfd, 1, timeout_ms);
	if (r < 0)
		return -errno;
	if (r > 0 && (pfd.revents & (POLLERR | POLLNVAL)))
		return -EIO;
	return r;
}

bool secho_io_eof(const struct secho_io *io)
{
	return io->eof;
}

const char *secho_io_input_error(const struct secho_io *io)
{
	return io->input_error[0] ? io->input_error : NULL;
}

bool secho_io_tx_in_place(const struct secho_io *io)
{
	return io->in_place;
}

void secho_io_get_stats(struct secho_io *io, struct secho_io_stats *st)
{
	if (io->ops->read_kernel_stats)
		io->ops->read_kernel_stats(io);
	*st = io->stats;
}

const char *secho_io_describe(const struct secho_io *io)
{
	return io->desc;
}

enum secho_io_kind secho_io_kind_of(const struct secho_io *io)
{
	return io->kind;
}

int secho_io_fd(const struct secho_io *io)
{
	return io->fd;
}

int secho_io_fanout_id(const struct secho_io *io)
{
	return io->fanout_id;
}
