/*
 * tests/unit/test_io_fanout.c - AF_PACKET fanout groups (secho_io_cfg.fanout, fanout_new).
 *
 * In a network namespace of its own (unshare, root), on its loopback: two sockets that
 * each start a new group (two endpoints on one interface) get different group ids from the
 * kernel, and a third joins the first's group by that id; then frames of 64 flows sent on
 * the interface reach the first group once each (split between its two sockets) and the
 * second group once each. With an id of the process's own (its pid's low 16 bits, as
 * before), both groups were one, and the frames were split over all three sockets. Frames
 * the host sends through the qdisc reach each group once, as they reach a socket in no
 * group (PACKET_FANOUT_FLAG_IGNORE_OUTGOING; without it, twice).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "secho/io.h"

#define NFRAMES 64

/* Bring lo up in this namespace. Returns 0 or -errno. */
static int lo_up(void)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r = 0;

	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) != 0)
		r = -errno;
	ifr.ifr_flags |= IFF_UP;
	if (!r && ioctl(fd, SIOCSIFFLAGS, &ifr) != 0)
		r = -errno;
	close(fd);
	return r;
}

static struct secho_io *open_lo(bool fanout, bool fanout_new, uint16_t id, char *err, size_t n)
{
	struct secho_io_cfg c = {
	        .kind = SECHO_IO_PACKET,
	        .ifname = "lo",
	        .rx_only = true,
	        .fanout = fanout,
	        .fanout_new = fanout_new,
	        .fanout_id = id,
	};
	return secho_io_open(&c, err, n);
}

/* NFRAMES Ethernet/IPv4/UDP frames of as many flows (source port 1000 + i) sent on lo,
 * past the qdisc (bypass: as the endpoint sends) or through it, where the taps see each
 * frame leave as well as arrive: a socket that ignores outgoing frames, and a fanout group
 * that says so, see it once. Returns the number sent. */
static int send_frames(bool bypass)
{
	struct sockaddr_ll sll = {
	        .sll_family = AF_PACKET, .sll_ifindex = (int)if_nametoindex("lo"), .sll_halen = 6};
	uint8_t f[14 + 20 + 8 + 16] = {0};
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0), sent = 0, one = 1;

	if (fd < 0)
		return 0;
	if (bypass && setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one)) != 0) {
		close(fd);
		return 0;
	}
	f[12] = 0x08; /* IPv4 */
	f[14] = 0x45;
	f[16] = 0;
	f[17] = 20 + 8 + 16;
	f[22] = 64;
	f[23] = 17; /* UDP */
	memcpy(f + 26, (const uint8_t[]){198, 18, 0, 1, 198, 18, 0, 2}, 8);
	for (int i = 0; i < NFRAMES; i++) {
		f[34] = (uint8_t)((1000 + i) >> 8);
		f[35] = (uint8_t)(1000 + i);
		f[36] = 0x0f;
		f[37] = 0xa0; /* port 4000 */
		f[39] = 8 + 16;
		if (sendto(fd, f, sizeof(f), 0, (struct sockaddr *)&sll, sizeof(sll)) ==
		    (ssize_t)sizeof(f))
			sent++;
	}
	close(fd);
	return sent;
}

/* Frames of ours (UDP destination port 4000) io has received, waiting up to ms. */
static unsigned drain(struct secho_io *io, int ms)
{
	struct secho_io_pkt pk[64];
	unsigned got = 0;

	for (int t = 0; t < ms; t += 10) {
		unsigned n = secho_io_rx_burst(io, pk, 64);
		for (unsigned i = 0; i < n; i++)
			if (pk[i].len >= 38 && pk[i].data[36] == 0x0f && pk[i].data[37] == 0xa0)
				got++;
		secho_io_rx_release(io, pk, n);
		if (!n)
			secho_io_wait(io, 10);
	}
	return got;
}

int main(void)
{
	char err[256] = "";
	struct secho_io *a = NULL, *b = NULL, *c = NULL, *plain = NULL;

	t_begin("io fanout: a new group's id is the kernel's, unique on the interface");
	if (unshare(CLONE_NEWNET) != 0) {
		t_unavailable("a network namespace of its own: %s (needs root)", strerror(errno));
		return t_exit();
	}
	int r = lo_up();
	if (r) {
		T_CHECK(0, "lo up in the new namespace: %s", strerror(-r));
		t_end();
		return t_exit();
	}
	a = open_lo(true, true, 0, err, sizeof(err));
	T_CHECK(a != NULL, "first new group: %s", err);
	b = open_lo(true, true, 0, err, sizeof(err));
	T_CHECK(b != NULL, "second new group: %s", err);
	int ida = a ? secho_io_fanout_id(a) : -1, idb = b ? secho_io_fanout_id(b) : -1;
	T_CHECK(ida >= 0 && ida <= 0xffff && idb >= 0 && idb <= 0xffff, "ids %d and %d", ida, idb);
	T_CHECK(ida != idb, "two new groups on lo share id %d", ida);
	if (ida >= 0) {
		c = open_lo(true, false, (uint16_t)ida, err, sizeof(err));
		T_CHECK(c != NULL, "joining group %d by its id: %s", ida, err);
		T_CHECK(c && secho_io_fanout_id(c) == ida, "joined group %d, want %d",
		        c ? secho_io_fanout_id(c) : -1, ida);
	}
	plain = open_lo(false, false, 0, err, sizeof(err));
	T_CHECK(plain && secho_io_fanout_id(plain) == -1, "a socket in no group: id %d",
	        plain ? secho_io_fanout_id(plain) : -2);
	t_end();

	t_begin("io fanout: each group gets every frame once, split within the group");
	if (a && b && c) {
		int sent = send_frames(true);
		unsigned na = drain(a, 300), nc = drain(c, 300), nb = drain(b, 300);
		T_CHECK(sent == NFRAMES, "sent %d of %d frames", sent, NFRAMES);
		T_CHECK(na + nc == (unsigned)sent, "the first group received %u + %u, want %d", na,
		        nc, sent);
		T_CHECK(na > 0 && nc > 0, "the first group's flows not split: %u and %u", na, nc);
		T_CHECK(nb == (unsigned)sent, "the second group received %u, want %d", nb, sent);
	} else {
		T_CHECK(0, "the groups were not opened");
	}
	t_end();

	/* The host's own frames, through the qdisc: the taps see each leave, then arrive
	 * (lo). A group that did not ignore outgoing frames counted each twice. */
	t_begin("io fanout: a group does not see the frames the host sends, as one socket");
	if (a && b && c && plain) {
		drain(plain, 50);
		int sent = send_frames(false);
		unsigned na = drain(a, 300), nc = drain(c, 300), nb = drain(b, 300);
		unsigned np = drain(plain, 300);
		T_CHECK(sent == NFRAMES, "sent %d of %d frames", sent, NFRAMES);
		T_CHECK(np == (unsigned)sent, "a socket in no group received %u, want %d", np,
		        sent);
		T_CHECK(na + nc == (unsigned)sent, "the first group received %u + %u, want %d", na,
		        nc, sent);
		T_CHECK(nb == (unsigned)sent, "the second group received %u, want %d", nb, sent);
	} else {
		T_CHECK(0, "the sockets were not opened");
	}
	t_end();

	secho_io_close(plain);
	secho_io_close(c);
	secho_io_close(b);
	secho_io_close(a);
	return t_exit();
}
