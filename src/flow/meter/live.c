/*
 * src/flow/meter/live.c - the meter on an interface (src/flow/meter/inner.h).
 *
 * Each worker reads its own sockets: AF_PACKET with PACKET_FANOUT_HASH (one socket per
 * worker, one group), or AF_XDP (one socket per interface queue, queue q to worker q mod
 * N). It dissects each burst and hands it to its table (which makes the keys and hashes:
 * secho_flow_table_burst). Timestamps are the ring's; timeouts are also enforced when no
 * frame comes (the wall clock, LIVE_GUARD_NS behind, so that frames still in a ring are
 * not overtaken). With the offload tier, the worker's loop also reads the tier's map in
 * slices (secho_flow_tier_poll).
 */
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "flow/meter/inner.h"
#include "secho/dissect.h"

#define LIVE_GUARD_NS 200000000ull /* the wall clock, minus this, is live time */
#define LIVE_POLL_MS  100
/* Live, a worker that emptied its sockets after reading frames naps this long before it
 * looks again, and polls only when a look found nothing: while traffic flows it wakes at
 * most every LIVE_NAP_NS, each time for all that came, instead of at every ring block
 * (TPACKET_V3 hands over a 64 KiB block: 7 jumbo frames). Capped at 5% of a CPU behind
 * the offload tier, the meter's CPU time fell by 20-35% (docs/FLOW.md, "Workers"); the
 * ring holds far more than a nap's worth, and the frames carry their receive times. */
#define LIVE_NAP_NS 1000000ull

/* A burst of frames to the table, some of them timed. Live the table canonicalises and
 * hashes the keys (in the time); offline the reader did (table_burst_prepared: the time
 * is the update alone), so the two p50s differ by the hash. */
static void table_burst(struct worker *w, const struct secho_flow_frame *fr, unsigned n)
{
	if (!n)
		return;
	uint64_t c0 = burst_start(w);
	secho_flow_table_burst(&w->t, fr, n);
	burst_end(w, c0, n);
}

/* The kernel's drop counters of this worker's sockets (read here, in the worker's own
 * thread: reading them resets them in the kernel, the io layer accumulates). */
static void live_drops(struct worker *w)
{
	uint64_t d = 0;
	for (unsigned q = 0; q < w->nio; q++) {
		struct secho_io_stats st;
		secho_io_get_stats(w->io[q], &st);
		d += st.rx_dropped_by_kernel;
	}
	__atomic_store_n(&w->kernel_drops, d, __ATOMIC_RELAXED);
}

/* A socket of the worker reported an error (POLLERR: the link went down, the interface
 * went away). Clears the error; false when the interface is gone, after a pause when it
 * is only down (no spinning on the error while it lasts). */
static bool socket_trouble(struct worker *w, const struct pollfd *pfd)
{
	bool trouble = false;

	for (unsigned q = 0; q < w->nio; q++) {
		if (!(pfd[q].revents & (POLLERR | POLLHUP | POLLNVAL)))
			continue;
		int e = 0;
		socklen_t l = sizeof(e);
		getsockopt(pfd[q].fd, SOL_SOCKET, SO_ERROR, &e, &l);
		trouble = true;
	}
	if (!trouble)
		return true;
	if (!if_nametoindex(w->m->cfg->iface)) {
		__atomic_store_n(&w->gone, 1, __ATOMIC_RELAXED);
		return false;
	}
	usleep(LIVE_POLL_MS * 1000);
	return true;
}

void meter_live_worker(struct worker *w)
{
	struct meter *m = w->m;
	struct secho_io_pkt pk[BURST];
	struct secho_flow_frame fr[BURST];
	struct pollfd pfd[MAX_IO_PER_WKR];
	uint64_t last_wall = 0, last_drops = 0;
	uint64_t since_sleep = 0; /* frames read since the last nap or poll */

	while (!stopping(m) && !__atomic_load_n(&w->gone, __ATOMIC_RELAXED)) {
		unsigned got = 0;
		uint64_t clock = 0;
		/* before the look: if it finds every ring empty, no frame stamped before this
		 * (less the guard, for one still on its way to the ring) is waiting */
		uint64_t look_wall = secho_real_ns();
		for (unsigned q = 0; q < w->nio; q++) {
			unsigned n = secho_io_rx_burst(w->io[q], pk, BURST);
			uint64_t now = 0;
			for (unsigned i = 0; i < n; i++) {
				struct secho_flow_frame *x = &fr[i];
				uint64_t ts = pk[i].ts_ns;
				if (!ts)
					ts = now ? now : (now = secho_real_ns());
				x->data = pk[i].data;
				x->wirelen = pk[i].len;
				x->ts_ns = ts;
				x->reason = secho_dissect(pk[i].data, pk[i].len, &x->d);
				if (ts > clock)
					clock = ts;
			}
			table_burst(w, fr, n);
			secho_io_rx_release(w->io[q], pk, n);
			got += n;
		}
		/* Offloaded flows' last-seen times, read in slices, before the sweeps. */
		int wait_ms = LIVE_POLL_MS;
		if (w->tier)
			wait_ms = (int)secho_flow_tier_poll(w->tier, secho_mono_ns());
		if (got) {
			secho_flow_table_expire(&w->t, clock);
			__atomic_store_n(&w->frames_read, w->frames_read + got, __ATOMIC_RELAXED);
			since_sleep += got;
		} else if (since_sleep) {
			struct timespec nap = {0, (long)LIVE_NAP_NS};
			nanosleep(&nap, NULL); /* a signal cuts it short: the loop looks at stop */
			since_sleep = 0;
		} else {
			for (unsigned q = 0; q < w->nio; q++) {
				pfd[q].fd = secho_io_fd(w->io[q]);
				pfd[q].events = POLLIN;
				pfd[q].revents = 0;
			}
			if (poll(pfd, w->nio, wait_ms) > 0 && !socket_trouble(w, pfd))
				break; /* the interface went away: export what there is */
		}
		/*
		 * Timeouts also when nothing comes: the wall clock, a little behind, but only
		 * when this look found every ring empty (docs/FLOW.md, "Time"). A meter that
		 * falls behind (descheduled, stopped, slower than the link) has frames
		 * waiting with older times: the wall clock would end their flows before they
		 * are read, and split them. Then timeouts follow packet time alone.
		 */
		if (!got && look_wall - last_wall >= LIVE_POLL_MS * 1000000ull) {
			secho_flow_table_expire(&w->t, look_wall - LIVE_GUARD_NS);
			last_wall = look_wall;
		}
		uint64_t wall = secho_mono_ns();
		if (wall - last_drops >= LIVE_POLL_MS * 1000000ull) {
			live_drops(w);
			last_drops = wall;
		}
	}
	live_drops(w);
	if (m->tier) /* the map's counters final before the last records take them */
		secho_flow_tier_stop(m->tier);
	secho_flow_table_flush(&w->t);
}

static int rx_queues(const char *ifname)
{
	char path[128];
	int n = 0;

	for (int q = 0; q < 256; q++) {
		snprintf(path, sizeof(path), "/sys/class/net/%s/queues/rx-%d", ifname, q);
		if (access(path, F_OK))
			break;
		n++;
	}
	return n ? n : 1;
}

int meter_live_open(struct meter *m, char *err, size_t errlen)
{
	const struct secho_flow_meter_cfg *cfg = m->cfg;
	struct secho_io_cfg ic;
	char e[256];

	if (!m->n)
		return -EINVAL;
	memset(&ic, 0, sizeof(ic));
	ic.kind = cfg->io;
	ic.ifname = cfg->iface;
	ic.hint = SECHO_IO_THROUGHPUT; /* AF_PACKET: TPACKET_V3 blocks */
	ic.rx_only = true;
	ic.vlan_restore = true;
	ic.promisc = true;
	ic.rx_ring_bytes = (uint64_t)(cfg->ring_mib ? cfg->ring_mib : SECHO_FLOW_RING_MIB) << 20;
	ic.tx_ring = 64; /* AF_XDP: nothing is sent, the least UMEM for it */
	/* AF_PACKET, several workers: one fanout group, under an id the kernel gives the first
	 * socket (no other group on the interface has it); the others join it */
	ic.fanout = m->n > 1;
	ic.fanout_new = m->n > 1;
	ic.queue = 0;
	ic.xdp_mode = cfg->xdp_mode;
	if (m->tier) { /* AF_XDP sockets behind the offload program, in its mode */
		ic.xdp_external_prog = true;
		ic.xsk_map_fd = secho_flow_tier_xsk_map_fd(m->tier);
		ic.xdp_mode =
		        secho_flow_tier_native(m->tier) ? SECHO_IO_XDP_NATIVE : SECHO_IO_XDP_SKB;
	}
	struct secho_io *first = secho_io_open(&ic, e, sizeof(e));
	if (!first) {
		snprintf(err, errlen, "%s", e);
		return -(errno ? errno : EIO);
	}
	m->w[0].io[m->w[0].nio++] = first;
	/* AUTO chose one of the two; the other sockets are of the same kind */
	ic.kind = strncmp(secho_io_describe(first), "AF_XDP", 6) == 0 ? SECHO_IO_XDP
	                                                              : SECHO_IO_PACKET;
	if (ic.kind == SECHO_IO_XDP) {
		/* one socket per queue: a queue without one is not seen at all */
		int nq = rx_queues(cfg->iface);
		if (nq > (int)(MAX_IO_PER_WKR * m->n))
			nq = (int)(MAX_IO_PER_WKR * m->n);
		for (int q = 1; q < nq; q++) {
			ic.queue = (uint32_t)q;
			struct secho_io *io = secho_io_open(&ic, e, sizeof(e));
			if (!io) {
				snprintf(err, errlen, "queue %d: %s", q, e);
				return -(errno ? errno : EIO);
			}
			struct worker *w = &m->w[(unsigned)q % m->n];
			w->io[w->nio++] = io;
		}
	} else {
		ic.fanout_new = false;
		if (secho_io_fanout_id(first) >= 0)
			ic.fanout_id = (uint16_t)secho_io_fanout_id(first);
		for (unsigned i = 1; i < m->n; i++) {
			struct secho_io *io = secho_io_open(&ic, e, sizeof(e));
			if (!io) {
				snprintf(err, errlen, "worker %u: %s", i, e);
				return -(errno ? errno : EIO);
			}
			m->w[i].io[m->w[i].nio++] = io;
		}
	}
	for (unsigned i = 0; i < m->n; i++)
		if (!m->w[i].nio) {
			snprintf(err, errlen,
			         "%s has %d receive queue(s) for AF_XDP: fewer than %u workers",
			         cfg->iface, rx_queues(cfg->iface), m->n);
			return -EINVAL;
		}
	return 0;
}
