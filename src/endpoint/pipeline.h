/*
 * src/endpoint/pipeline.h - the data-path worker (private to src/endpoint).
 *
 * A worker owns one receive queue (its struct secho_io), one offload queue pair, its
 * sequence lease, its counters and histograms, its scratch buffers and IP ID. What it
 * shares with the other workers is only read on its path: the wire configuration, the
 * streaming engine's key schedule, the salt and flags. Its only writes to shared memory
 * are rare and lock-free: a refill of its lease (one compare-and-swap on the sequence
 * allocator per SECHO_SEQLEASE_BLOCK numbers), a wake-up of a sleeping offload engine, and,
 * for a request to the counters port only, the report's rate limiter (report.h).
 */
#ifndef SECHO_ENDPOINT_PIPELINE_H
#define SECHO_ENDPOINT_PIPELINE_H

#include "endpoint/endpoint.h"
#include "endpoint/seqlease.h"

#include <stdatomic.h>

struct secho_report_ctx;

/* What the worker remembers about an offload job while it is in flight. */
struct secho_pending {
	struct secho_wire_req req;
	uint64_t t_rx;
	uint16_t tci; /* the request's VLAN tag (with --vlan), echoed in the answer */
};

struct secho_worker {
	/* Set up by the caller. */
	struct secho_io *io;
	const struct secho_wire_cfg *wire;
	const secho_gcm_key *gk;
	struct secho_offload_queue *offq; /* this worker's queue pair of the offload engine */
	uint16_t key_id;
	uint8_t salt[SECHO_SALT_LEN]; /* the IV's fixed field: the salt, or salt ^ instance */
	uint8_t shdr_flags;           /* OR-ed into every header: SECHO_SHDR_F_INSTANCE or 0 */
	uint16_t vlan_id; /* --vlan: the one 802.1Q VLAN served (1..4094); 0: untagged only */
	bool arp;
	struct secho_report_ctx *report; /* counters report: shared by the workers */
	/* Sequence lease: refilled by refill() from the shared durable allocator (serve.c:
	 * secho_seqlease_refill(refill_arg, &w->lease)); refill returns 0, -EAGAIN (the next
	 * window is still being saved: the packet is dropped as SEQ_PENDING) or another -errno
	 * (dropped as SEQ_EXHAUSTED). Refill never waits for a disk. */
	struct secho_lease lease;
	int (*refill)(struct secho_worker *w);
	void *refill_arg;

	/* Owned by the worker. */
	uint16_t ip_id;
	struct secho_pending *pending; /* indexed by staging slot */
	uint8_t *scratch;              /* (SECHO_IO_BURST + 1) x frame_cap: out of place */
	unsigned frame_cap;            /* bytes of the longest frame (MTU + 18), rounded up */
	struct secho_counters ctr;
	/* Idle warm-up (secho_worker_warm_setup): a throwaway key and a canned request. */
	secho_gcm_key *warm_key;
	uint8_t *warm_frame;
	uint32_t warm_len;
};

/*
 * The reflection guard (docs/PROTOCOL.md, "Reflection"): true when a request from UDP source
 * port `port` must not be answered, because the answer would go to a service that answers
 * back: port 0, the well-known ports 1..1023 (echo, daytime, chargen, time, DNS, NTP, SNMP,
 * ...), the UDP services above them that answer unsolicited datagrams (SSDP 1900, ARMS 3283,
 * WS-Discovery 3702, mDNS 5353, CoAP 5683, memcached 11211), and the service ports of an
 * endpoint: cfg's three and the defaults 4000-4002 (another endpoint on the wire would
 * answer the answer, and the two would echo each other). Can't fail.
 */
bool secho_src_port_refused(const struct secho_wire_cfg *cfg, uint16_t port);

/* Allocate the worker's own buffers: the pending table sized for offload_ring slots, the
 * scratch frames for the longest frame of IP MTU mtu (0: 1500). 0 or -ENOMEM. */
int secho_worker_init(struct secho_worker *w, unsigned offload_ring, unsigned mtu);
void secho_worker_fini(struct secho_worker *w);

/*
 * Busy-poll only: after each burst, when no frame is waiting, run a canned request through
 * parse, the streaming engine (under a throwaway random key) and the checksum, into the
 * worker's own scratch, and prefetch the real key and the next TX slot (for writing):
 * the TX kick just ran the kernel's
 * transmit path on this core, which evicted the data path's code, data and branch history,
 * and the next packet would otherwise pay for bringing them back. Nothing is sent, no
 * sequence number is taken, no counter changes. Call after io, wire and gk are set.
 * 0, -ENOMEM, or -EINVAL if the canned request does not parse (a bug).
 */
int secho_worker_warm_setup(struct secho_worker *w);

/*
 * The worker's loop, in the thread that runs the worker: RX bursts through every stage,
 * offload completions, a wait when idle (AF_XDP/AF_PACKET: poll() of at most 100 ms, or
 * spinning with busy-poll), until *stop becomes non-zero, the input ends (pcap) or waiting
 * for I/O fails; then its offload queue pair is drained (every posted job sent; bounded:
 * 2 s) and TX flushed. Returns 0, or the -errno of the failed wait.
 */
int secho_worker_loop(struct secho_worker *w, const _Atomic int *stop);

/* One RX burst through every stage. Returns frames received (0 = none were ready). */
unsigned secho_worker_rx(struct secho_worker *w);
/* Send what the offload engine has completed. Returns responses sent. */
unsigned secho_worker_completions(struct secho_worker *w);

#endif
