/*
 * include/secho/io.h - packet I/O: one interface, three backends.
 *
 *   AF_XDP    (src/io/af_xdp.c)    UMEM frames shared with the kernel; responses built in
 *                                  place in the RX frame and sent from it (no copy in user
 *                                  space; the kernel copies in copy mode, e.g. on veth).
 *   AF_PACKET (src/io/af_packet.c) an mmap()ed RX ring (TPACKET_V2 frame ring for latency,
 *                                  TPACKET_V3 block ring for throughput) and a TPACKET_V2 TX
 *                                  ring with qdisc bypass, or sendmmsg() from the RX ring.
 *   pcap      (src/io/pcap.c)      frames read from a capture file, every TX frame written to
 *                                  another; rx reports end of input so offline runs finish.
 *
 * The backend is chosen once at open (Redis ae.c style: a table of static functions per
 * backend, src/io/io_inner.h); the data path calls through it once per burst or per packet.
 *
 * One data-path thread owns one struct secho_io (one interface queue). Nothing here is
 * thread-safe; nothing allocates after open.
 *
 * The loop (bursts of up to SECHO_IO_BURST frames):
 *
 *	n = secho_io_rx_burst(io, pkts, SECHO_IO_BURST);     acquire n RX buffers
 *	for (i = 0; i < n; i++) {
 *		out = secho_io_tx_slot(io, &pkts[i], rlen, 16);   reserve room for a response
 *		if (!out) continue;                              no room: counted, dropped
 *		... build rlen bytes at out (may alias pkts[i].data, see tx_slot) ...
 *		secho_io_tx_commit(io, &pkts[i], rlen);          queue it (no syscall)
 *	}
 *	secho_io_tx_flush(io);                                 one kick for the burst
 *	secho_io_rx_release(io, pkts, n);                      give RX buffers back
 *	if (!n) secho_io_wait(io, 100);                         block or spin for more
 *
 * Ordering rule: rx_release() comes after tx_flush() for the same burst, because a backend
 * may transmit straight out of the RX buffers (AF_XDP, AF_PACKET with sendmmsg, pcap).
 */
#ifndef SECHO_IO_H
#define SECHO_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest burst the data path uses; backends accept any max, this is what they size for. */
#define SECHO_IO_BURST 32u

enum secho_io_kind {
	SECHO_IO_AUTO = 0, /* AF_XDP zero-copy if the NIC does it, else AF_PACKET (see io.c) */
	SECHO_IO_XDP,
	SECHO_IO_PACKET,
	SECHO_IO_PCAP,
};

/* What matters more: AF_PACKET picks its ring version from this unless told explicitly. */
enum secho_io_hint {
	SECHO_IO_LATENCY = 0, /* TPACKET_V2 frame ring: each frame handed over at once */
	SECHO_IO_THROUGHPUT,  /* TPACKET_V3 block ring: blocks handed over full or on timer */
};

enum secho_io_xdp_mode {
	SECHO_IO_XDP_ANY = 0, /* native (driver) XDP, falling back to generic (SKB) */
	SECHO_IO_XDP_NATIVE,
	SECHO_IO_XDP_SKB,
};

struct secho_io_cfg {
	enum secho_io_kind kind;
	const char *ifname;   /* XDP, PACKET */
	uint32_t queue;       /* XDP: the queue the socket binds to (PACKET sees all) */
	const char *pcap_in;  /* PCAP: frames to read; NULL = no input (rx ends at once) */
	const char *pcap_out; /* PCAP: every TX frame written here; NULL = discarded */
	/* secho_io_wait() spins on the rings instead of sleeping. Pointless with TPACKET_V3:
	 * blocks still wait for the retire timer, whose softirq a spinning thread delays. */
	bool busy_poll;
	enum secho_io_hint hint;
	int packet_version;     /* PACKET: 2 or 3; 0 = from hint */
	uint32_t v3_block_size; /* PACKET V3: block bytes (power of 2); 0 = 64 KiB */
	uint32_t v3_retire_ms;  /* PACKET V3: block retire timer, ms (kernel minimum 1); 0 = 1 */
	bool packet_sendmmsg;   /* PACKET: sendmmsg() in place from the RX ring, not a TX ring */
	bool promisc;           /* PACKET: promiscuous mode (off by default) */
	const void *bpf;        /* PACKET: optional classic BPF (struct sock_filter[]) */
	uint16_t bpf_len;       /* number of instructions in bpf */
	uint32_t rx_ring;       /* frames (power of 2); 0 = 2048 */
	/* PACKET, XDP: with rx_ring 0, the receive ring sized in bytes instead: as many frames
	 * of the backend's frame size as fit (a power of 2, 256 to 2^20); 0 = rx_ring rules.
	 * A receive-only user that may be descheduled for tens of ms (the flow meter) needs
	 * its buffer in bytes, whatever the frame size. */
	uint64_t rx_ring_bytes;
	uint32_t tx_ring; /* frames (power of 2); 0 = 2048 */
	enum secho_io_xdp_mode xdp_mode;
	bool xdp_copy; /* XDP: do not try zero-copy */
	/* XDP: the caller's own XDP program is (or will be) attached and redirects to the
	 * socket through its XSKMAP xsk_map_fd (the flow meter's offload tier): no program is
	 * loaded or detached here, the socket is put in that map at its queue. */
	bool xdp_external_prog;
	int xsk_map_fd;
	uint32_t frame_size; /* XDP UMEM / PACKET frame bytes (power of 2); 0 = from max_frame */
	/* The longest frame to receive or send, from the Ethernet header on (no FCS): an IP MTU
	 * of M is M + 14, + 4 with a VLAN tag; 0 = 1518. Backends size their buffers for it
	 * (and for a response 32 bytes longer, built in place) or refuse it at open, saying
	 * why. With rx_ring/tx_ring 0, bigger frames mean fewer of them (same ring bytes). */
	uint32_t max_frame;
	bool tx_copy; /* PCAP: build responses in a scratch buffer, not in place */
	/* Receive-only users (the flow meter): */
	bool rx_only;      /* PACKET: no TX socket or ring */
	bool vlan_restore; /* PACKET: a VLAN tag the kernel took out of the frame (it always
	                    * takes the outer one) is put back in front of the EtherType,
	                    * in the headroom: the frame is as it was on the wire */
	/* Several workers on one interface (the flow meter's, the endpoint's): */
	bool fanout; /* PACKET: join PACKET_FANOUT_HASH group fanout_id: each socket of the
	              * group gets whole flows (the kernel's flow hash), and no frame before
	              * it has joined (a filter that accepts nothing until then) */
	uint16_t fanout_id;
	/* PACKET, with fanout: start a new group instead, under an id the kernel picks among
	 * those no group in the network namespace has (PACKET_FANOUT_FLAG_UNIQUEID; fanout_id
	 * is ignored), so that two processes' groups on one interface never meet (an id of
	 * the caller's own, such as its pid's low 16 bits, may be another's).
	 * secho_io_fanout_id() names it; the group's other sockets join it with fanout_id. */
	bool fanout_new;
};

/*
 * One received frame. data/len are the frame from the Ethernet header on. headroom and
 * tailroom are the writable bytes before data and after data + len in the same buffer,
 * which in-place backends let a response grow into. handle and flags belong to the backend.
 * vlan: the VLAN tag the kernel took off the frame and reported beside it (AF_PACKET:
 * TP_STATUS_VLAN_VALID), as TPID << 16 | TCI (TPID 0x8100 when the kernel does not say);
 * 0 when the frame had no tag or still carries it in its bytes (AF_XDP, pcap).
 */
struct secho_io_pkt {
	uint8_t *data;
	uint32_t len;
	uint32_t headroom;
	uint32_t tailroom;
	uint32_t flags; /* SECHO_IO_PKT_*; backend-owned but TRUNCATED */
	uint32_t vlan;  /* TPID << 16 | TCI of a tag the kernel removed, 0 = none */
	uint64_t handle;
	uint64_t ts_ns; /* receive time, ns since the epoch: AF_PACKET's ring time, the pcap
	                 * record's; 0 where the backend has none (AF_XDP: take the clock) */
};

#define SECHO_IO_PKT_SENT 0x1u /* tx_commit() sent this buffer itself; release skips it */
/* The frame was longer than the receive buffer and was cut short (len is what is left):
 * set by the backend, for the caller to drop and count. */
#define SECHO_IO_PKT_TRUNCATED 0x2u

struct secho_io_stats {
	uint64_t rx;                   /* frames returned by rx_burst */
	uint64_t tx;                   /* frames committed and handed to the kernel / file */
	uint64_t rx_dropped_by_kernel; /* PACKET_STATISTICS tp_drops / XDP_STATISTICS rx_dropped
	                                * + rx_ring_full + fill_ring_empty */
	uint64_t tx_errors;            /* failed kicks, send errors, pcap write errors */
	uint64_t ring_full;            /* tx_slot found no room (response dropped) */
	uint64_t kicks;                /* TX syscalls made */
	uint64_t wakeups;              /* wait() calls that slept in poll() */
};

struct secho_io;

/*
 * Open a backend as cfg says. Returns the handle, or NULL with a message in err (always
 * NUL-terminated when errlen > 0) and errno set. AUTO tries what io.c documents and says in
 * secho_io_describe() what it chose and why.
 */
struct secho_io *secho_io_open(const struct secho_io_cfg *cfg, char *err, size_t errlen);

/* Close and release everything; AF_XDP detaches the XDP program it attached. NULL is a no-op. */
void secho_io_close(struct secho_io *io);

/* Acquire up to max received frames into pkts. Returns the number (0 = none now). Never
 * blocks. The buffers stay valid until secho_io_rx_release(), which must come before the
 * next rx_burst() (backends may reuse per-burst state). */
unsigned secho_io_rx_burst(struct secho_io *io, struct secho_io_pkt *pkts, unsigned max);

/*
 * Reserve room for a response of len bytes to rx. Returns where to build it, or NULL when
 * there is no room (counted in ring_full; the caller drops the response).
 * In-place backends (secho_io_tx_in_place()) return rx->data - front when
 * front <= rx->headroom and len - front <= rx->len + rx->tailroom: the response then
 * overlaps the request, so a response whose payload stays at the same offset can be
 * encrypted in place. Other backends return a separate buffer (a TX ring slot, a scratch
 * buffer) and ignore front; AF_PACKET in sendmmsg mode falls back to a per-burst buffer
 * when the frame has no room (TPACKET_V3 packs frames with only alignment gaps between).
 * Callers tell the cases apart by comparing the result with rx->data - front.
 * At most one reservation is open at a time; the next tx_slot without tx_commit reuses it.
 * rx may be NULL: a standalone response that answers no frame of the current burst (the
 * offload engine's completions arrive after their requests were released). It is built
 * in a TX buffer of the backend's own (AF_XDP: a UMEM frame reserved for this, returned
 * by TX completion; AF_PACKET: a TX ring slot or a scratch buffer sent by the next
 * flush; pcap: a scratch buffer) and committed with tx_commit(io, NULL, len).
 */
uint8_t *secho_io_tx_slot(struct secho_io *io, struct secho_io_pkt *rx, uint32_t len,
                          uint32_t front);

/*
 * Look ahead: the TX buffer that the k-th next secho_io_tx_slot(io, NULL or any rx, len, 0)
 * will return (k = 0: the next one), so that a burst's responses can be built in their
 * final place before they are committed. NULL when the backend has no such ring (only
 * AF_PACKET's TX ring mode has one), when k is past the ring, or when that slot is not free
 * yet. Reserves nothing: the responses must still be reserved and committed in order with
 * secho_io_tx_slot() / secho_io_tx_commit(), which then return the same buffers (callers
 * copy when they do not, e.g. after a response in between was dropped). Nothing else may
 * be committed between the look-ahead and those commits.
 */
uint8_t *secho_io_tx_slot_ahead(struct secho_io *io, unsigned k, uint32_t len);

/* Queue the reserved response with its final length (<= the reserved len). No syscall. */
void secho_io_tx_commit(struct secho_io *io, struct secho_io_pkt *rx, uint32_t len);

/* Hand queued responses to the kernel: at most one syscall, none when nothing is queued
 * (or, for AF_XDP, when the kernel needs no wakeup). Also reaps TX completions. */
void secho_io_tx_flush(struct secho_io *io);

/* Release RX buffers acquired by the last rx_burst(); call after tx_flush(). */
void secho_io_rx_release(struct secho_io *io, struct secho_io_pkt *pkts, unsigned n);

/*
 * Wait until frames may be ready or timeout_ms passes (0 = check once, < 0 = forever).
 * Busy-poll mode spins on the ring instead of sleeping. Returns > 0 ready, 0 timeout,
 * -EINTR on a signal, other -errno on error. PCAP: returns 1 until end of input, then 0.
 */
int secho_io_wait(struct secho_io *io, int timeout_ms);

/* True once a finite input (pcap) is exhausted and every frame was returned. */
bool secho_io_eof(const struct secho_io *io);

/* NULL, or why a finite input (pcap) ended early: the file is malformed (a truncated
 * record, a record longer than the file's snapshot length). eof() is true then; the frames
 * before the bad record were returned. An input error, not a drop: callers report it and
 * fail. */
const char *secho_io_input_error(const struct secho_io *io);

/* True when tx_slot() builds responses in the RX buffer itself. */
bool secho_io_tx_in_place(const struct secho_io *io);

/* Fill *st (kernel drop counters are read now). */
void secho_io_get_stats(struct secho_io *io, struct secho_io_stats *st);

/* What was opened and why, e.g. "AF_XDP copy mode, native XDP on veth0 queue 0 (zero-copy:
 * Operation not supported)". Valid until close. */
const char *secho_io_describe(const struct secho_io *io);

/* The file descriptor to poll, or -1 (pcap). */
int secho_io_fd(const struct secho_io *io);

/* The id of the fanout group the socket is in (AF_PACKET with cfg.fanout), or -1. */
int secho_io_fanout_id(const struct secho_io *io);

/* The backend that was opened (never SECHO_IO_AUTO: what AUTO chose). */
enum secho_io_kind secho_io_kind_of(const struct secho_io *io);

/* Parse "auto|xdp|packet|pcap"; returns false on anything else. */
bool secho_io_kind_parse(const char *s, enum secho_io_kind *kind);
const char *secho_io_kind_name(enum secho_io_kind kind);

#endif
