/*
 * src/host/transport.c - socket and raw AF_PACKET transports. Contract:
 * src/host/transport.h.
 *
 * Safety: the destination must be in 192.0.2.0/24 (TEST-NET-1, the lab link of the
 * original design and of our namespaces) or 127.0.0.0/8 unless --allow-any-dst says this
 * is a real lab network. Every wait is bounded by the caller's timeout.
 */
#include "host/transport.h"
#include "secho/wire.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RAW_FRAME_MAX (SECHO_WIRE_MAX_MTU + SECHO_ETH_HLEN)
#define BATCH_MAX     64

const char *secho_ip_str(const uint8_t ip[4], char buf[16])
{
	snprintf(buf, 16, "%u.%u.%u.%u", ip[0], ip[1], ip[2], ip[3]);
	return buf;
}

const char *secho_mac_str(const uint8_t mac[6], char buf[18])
{
	snprintf(buf, 18, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4],
	         mac[5]);
	return buf;
}

static int parse_ip(const char *s, uint8_t ip[4])
{
	struct in_addr a;

	if (inet_pton(AF_INET, s, &a) != 1)
		return -EINVAL;
	memcpy(ip, &a.s_addr, 4);
	return 0;
}

static bool dst_allowed(const uint8_t ip[4])
{
	return (ip[0] == 192 && ip[1] == 0 && ip[2] == 2) || ip[0] == 127;
}

static void sock_bufs(int fd)
{
	int sz = 4 << 20;

	/* Best effort: a large receive buffer absorbs a window of responses in load mode. */
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
}

static int open_socket_mode(struct secho_xport *x, const struct secho_xport_cfg *cfg, char *err,
                            size_t errlen)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sa);

	x->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (x->fd < 0) {
		int e = errno;

		snprintf(err, errlen, "socket: %s", strerror(e));
		return -e;
	}
	sock_bufs(x->fd);
	if (cfg->src_ip)
		memcpy(&sa.sin_addr.s_addr, x->path.host_ip, 4);
	if (bind(x->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    getsockname(x->fd, (struct sockaddr *)&sa, &sl) < 0) {
		int e = errno;

		snprintf(err, errlen, "bind %s: %s", cfg->src_ip ? cfg->src_ip : "0.0.0.0",
		         strerror(e));
		return -e;
	}
	x->sport = ntohs(sa.sin_port);
	return 0;
}

static int open_raw_mode(struct secho_xport *x, const struct secho_xport_cfg *cfg, char *err,
                         size_t errlen)
{
	struct sockaddr_ll ll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_IP)};
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sa);
	struct ifreq ifr;
	int one = 1, small = 4096;

	if (!cfg->dst_mac) {
		snprintf(err, errlen, "raw mode needs --dst-mac aa:bb:cc:dd:ee:ff");
		return -EINVAL;
	}
	memcpy(x->path.ep_mac, cfg->dst_mac, sizeof(x->path.ep_mac));
	if (strlen(cfg->iface) >= IFNAMSIZ || !(x->ifindex = (int)if_nametoindex(cfg->iface))) {
		snprintf(err, errlen, "interface '%s': no such interface", cfg->iface);
		return -ENODEV;
	}
	x->fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(ETH_P_IP));
	if (x->fd < 0) {
		int e = errno;

		snprintf(err, errlen, "AF_PACKET socket: %s (raw mode needs CAP_NET_RAW)",
		         strerror(e));
		return -e;
	}
	sock_bufs(x->fd);
	ll.sll_ifindex = x->ifindex;
	if (bind(x->fd, (struct sockaddr *)&ll, sizeof(ll)) < 0) {
		int e = errno;

		snprintf(err, errlen, "bind to %s: %s", cfg->iface, strerror(e));
		return -e;
	}
	/* Our own requests would otherwise come back to us as PACKET_OUTGOING copies. */
	(void)setsockopt(x->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
	(void)setsockopt(x->fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one));

	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, cfg->iface, strlen(cfg->iface));
	if (ioctl(x->fd, SIOCGIFHWADDR, &ifr) < 0) {
		int e = errno;

		snprintf(err, errlen, "%s: cannot read its MAC: %s", cfg->iface, strerror(e));
		return -e;
	}
	memcpy(x->path.host_mac, ifr.ifr_hwaddr.sa_data, 6);
	if (!cfg->src_ip) {
		memset(&ifr.ifr_addr, 0, sizeof(ifr.ifr_addr));
		ifr.ifr_addr.sa_family = AF_INET;
		if (ioctl(x->fd, SIOCGIFADDR, &ifr) == 0)
			memcpy(x->path.host_ip,
			       &((struct sockaddr_in *)(void *)&ifr.ifr_addr)->sin_addr.s_addr, 4);
		else
			(void)parse_ip("192.0.2.1", x->path.host_ip);
	}

	/* Claim a UDP port: the kernel then delivers its own copy of each response to this
	 * (never read, tiny) socket instead of answering port-unreachable. */
	x->claim_fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (x->claim_fd < 0 || bind(x->claim_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    getsockname(x->claim_fd, (struct sockaddr *)&sa, &sl) < 0) {
		int e = errno;

		snprintf(err, errlen, "claiming a UDP port: %s", strerror(e));
		return -e;
	}
	(void)setsockopt(x->claim_fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	x->sport = ntohs(sa.sin_port);
	return 0;
}

int secho_xport_open(struct secho_xport *x, const struct secho_xport_cfg *cfg, char *err,
                     size_t errlen)
{
	const char *dst = cfg->dst_ip ? cfg->dst_ip : "192.0.2.2";
	char b[16];
	int rc;

	memset(x, 0, sizeof(*x));
	x->fd = x->claim_fd = -1;
	x->mode = cfg->iface ? SECHO_X_RAW : SECHO_X_SOCKET;
	if (parse_ip(dst, x->path.ep_ip) < 0) {
		snprintf(err, errlen, "--dst-ip '%s' is not an IPv4 address", dst);
		return -EINVAL;
	}
	if (cfg->src_ip && parse_ip(cfg->src_ip, x->path.host_ip) < 0) {
		snprintf(err, errlen, "--src-ip '%s' is not an IPv4 address", cfg->src_ip);
		return -EINVAL;
	}
	if (!cfg->allow_any_dst && !dst_allowed(x->path.ep_ip)) {
		snprintf(err, errlen,
		         "refusing destination %s: outside 192.0.2.0/24 and 127.0.0.0/8 "
		         "(--allow-any-dst for a real lab network)",
		         secho_ip_str(x->path.ep_ip, b));
		return -EPERM;
	}
	rc = x->mode == SECHO_X_RAW ? open_raw_mode(x, cfg, err, errlen)
	                            : open_socket_mode(x, cfg, err, errlen);
	if (rc < 0)
		secho_xport_close(x);
	x->ip_id = (uint16_t)(secho_mono_ns() >> 10);
	return rc;
}

void secho_xport_close(struct secho_xport *x)
{
	if (x->fd >= 0)
		close(x->fd);
	if (x->claim_fd >= 0)
		close(x->claim_fd);
	x->fd = x->claim_fd = -1;
}

/* The 16-bit sum of a 4-byte address in network order (a piece of the UDP pseudo header). */
static uint32_t addr_sum(const uint8_t a[4])
{
	return (uint32_t)(a[0] << 8 | a[1]) + (uint32_t)(a[2] << 8 | a[3]);
}

/* Ethernet II / IPv4 (IHL 5, DF, TTL 64) / UDP with both checksums, written through the
 * packed wire structs of secho/wire.h (the checksums are the host tool's own: it shares no
 * code with the endpoint it checks); returns frame bytes. */
static size_t build_frame(struct secho_xport *x, uint8_t *f, uint16_t dport, const uint8_t *pl,
                          size_t len)
{
	struct secho_eth_hdr *eth = (struct secho_eth_hdr *)f;
	struct secho_ip4_hdr *ip = (struct secho_ip4_hdr *)(f + SECHO_ETH_HLEN);
	struct secho_udp_hdr *udp = (struct secho_udp_hdr *)(f + SECHO_ETH_HLEN + SECHO_IP4_HLEN);
	uint16_t ulen = (uint16_t)(SECHO_UDP_HLEN + len), cs;
	uint32_t pseudo;

	memcpy(eth->dst, x->path.ep_mac, SECHO_ETH_ALEN);
	memcpy(eth->src, x->path.host_mac, SECHO_ETH_ALEN);
	eth->type = htons(SECHO_ETHERTYPE_IPV4);
	ip->ver_ihl = 0x45;
	ip->tos = 0;
	ip->tot_len = htons((uint16_t)(SECHO_IP4_HLEN + ulen));
	ip->id = htons(x->ip_id++);
	ip->frag = htons(SECHO_IP4_DF);
	ip->ttl = SECHO_IP4_TTL;
	ip->proto = SECHO_IPPROTO_UDP;
	ip->csum = 0;
	memcpy(&ip->saddr, x->path.host_ip, 4);
	memcpy(&ip->daddr, x->path.ep_ip, 4);
	ip->csum = htons((uint16_t)~secho_inet_csum((const uint8_t *)ip, SECHO_IP4_HLEN, 0));
	udp->sport = htons(x->sport);
	udp->dport = htons(dport);
	udp->len = htons(ulen);
	udp->csum = 0;
	memcpy(f + SECHO_HDRS_LEN, pl, len);
	/* Pseudo header (RFC 768): source, destination, protocol, UDP length. */
	pseudo = addr_sum(x->path.host_ip) + addr_sum(x->path.ep_ip) + SECHO_IPPROTO_UDP + ulen;
	cs = (uint16_t)~secho_inet_csum((const uint8_t *)udp, ulen, pseudo);
	udp->csum = htons(cs ? cs : 0xffff); /* 0 means "no checksum" (RFC 768) */
	return SECHO_ETH_HLEN + SECHO_IP4_HLEN + (size_t)ulen;
}

int secho_xport_send(struct secho_xport *x, uint16_t dport, const uint8_t *payload, size_t len)
{
	const uint8_t *pl[1] = {payload};
	int rc = secho_xport_send_batch(x, &dport, pl, &len, 1);

	return rc == 1 ? 0 : rc < 0 ? rc : -EAGAIN;
}

int secho_xport_send_batch(struct secho_xport *x, const uint16_t *dports,
                           const uint8_t *const *payloads, const size_t *lens, unsigned n)
{
	static _Thread_local uint8_t frames[BATCH_MAX][RAW_FRAME_MAX];
	struct mmsghdr mm[BATCH_MAX];
	struct iovec iov[BATCH_MAX];
	struct sockaddr_in sa[BATCH_MAX];
	int rc;

	if (n > BATCH_MAX)
		n = BATCH_MAX;
	memset(mm, 0, sizeof(mm[0]) * n);
	for (unsigned i = 0; i < n; i++) {
		if (lens[i] > SECHO_HOST_MAX_PAYLOAD)
			return -EMSGSIZE;
		if (x->mode == SECHO_X_RAW) {
			iov[i].iov_base = frames[i];
			iov[i].iov_len = build_frame(x, frames[i], dports[i], payloads[i], lens[i]);
		} else {
			iov[i].iov_base = (void *)(uintptr_t)payloads[i];
			iov[i].iov_len = lens[i];
			memset(&sa[i], 0, sizeof(sa[i]));
			sa[i].sin_family = AF_INET;
			sa[i].sin_port = htons(dports[i]);
			memcpy(&sa[i].sin_addr.s_addr, x->path.ep_ip, 4);
			mm[i].msg_hdr.msg_name = &sa[i];
			mm[i].msg_hdr.msg_namelen = sizeof(sa[i]);
		}
		mm[i].msg_hdr.msg_iov = &iov[i];
		mm[i].msg_hdr.msg_iovlen = 1;
	}
	rc = sendmmsg(x->fd, mm, n, MSG_DONTWAIT);
	return rc < 0 ? -errno : rc;
}

/* Raw mode: is this frame a UDP datagram for our port from the endpoint (by IP or MAC)?
 * Sets the routing fields. Malformed frames for our port still pass when their outer
 * layers allow finding the UDP header, so the verifier can name what is wrong. */
static bool raw_ours(const struct secho_xport *x, struct secho_rxmsg *m)
{
	const struct secho_eth_hdr *eth = (const struct secho_eth_hdr *)m->buf;
	const struct secho_ip4_hdr *ip = (const struct secho_ip4_hdr *)(m->buf + SECHO_ETH_HLEN);
	const struct secho_udp_hdr *udp;
	size_t ihl, ulen;

	if (m->len < SECHO_HDRS_LEN || eth->type != htons(SECHO_ETHERTYPE_IPV4) ||
	    (ip->ver_ihl >> 4) != 4 || ip->proto != SECHO_IPPROTO_UDP)
		return false;
	ihl = (size_t)(ip->ver_ihl & 15) * 4;
	if (ihl < SECHO_IP4_HLEN || SECHO_ETH_HLEN + ihl + SECHO_UDP_HLEN > m->len)
		return false;
	udp = (const struct secho_udp_hdr *)((const uint8_t *)ip + ihl);
	if (ntohs(udp->dport) != x->sport)
		return false;
	if (memcmp(&ip->saddr, x->path.ep_ip, 4) != 0 &&
	    memcmp(eth->src, x->path.ep_mac, SECHO_ETH_ALEN) != 0)
		return false;
	memcpy(m->src_ip, &ip->saddr, 4);
	m->sport = ntohs(udp->sport);
	m->dport = ntohs(udp->dport);
	ulen = ntohs(udp->len);
	m->udp = (const uint8_t *)udp + SECHO_UDP_HLEN;
	m->udp_len = (ulen >= SECHO_UDP_HLEN && SECHO_ETH_HLEN + ihl + ulen <= m->len)
	                     ? ulen - SECHO_UDP_HLEN
	                     : m->len - SECHO_ETH_HLEN - ihl - SECHO_UDP_HLEN;
	return true;
}

int secho_xport_recv(struct secho_xport *x, struct secho_rxmsg *m, unsigned n, int64_t timeout_us)
{
	struct mmsghdr mm[BATCH_MAX];
	struct iovec iov[BATCH_MAX];
	struct sockaddr_in sa[BATCH_MAX];
	uint64_t end = secho_mono_ns() + (uint64_t)(timeout_us > 0 ? timeout_us : 0) * 1000u;
	unsigned got = 0;

	if (n > BATCH_MAX)
		n = BATCH_MAX;
	for (;;) {
		struct pollfd pfd = {.fd = x->fd, .events = POLLIN};
		uint64_t now;
		int rc, ms;

		memset(mm, 0, sizeof(mm[0]) * n);
		for (unsigned i = 0; i < n; i++) {
			iov[i].iov_base = m[i].buf;
			iov[i].iov_len = m[i].cap;
			mm[i].msg_hdr.msg_iov = &iov[i];
			mm[i].msg_hdr.msg_iovlen = 1;
			if (x->mode == SECHO_X_SOCKET) {
				mm[i].msg_hdr.msg_name = &sa[i];
				mm[i].msg_hdr.msg_namelen = sizeof(sa[i]);
			}
		}
		rc = recvmmsg(x->fd, mm, n, MSG_DONTWAIT, NULL);
		if (rc < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return -errno;
		now = secho_mono_ns();
		for (int i = 0; i < rc; i++) {
			struct secho_rxmsg *r = &m[got];

			/* Keep the buffers paired with their message when compacting. */
			if ((unsigned)i != got) {
				uint8_t *tb = r->buf;
				size_t tc = r->cap;

				r->buf = m[i].buf;
				r->cap = m[i].cap;
				m[i].buf = tb;
				m[i].cap = tc;
			}
			r->len = mm[i].msg_len;
			r->t_ns = now;
			if (x->mode == SECHO_X_SOCKET) {
				if (mm[i].msg_hdr.msg_flags & MSG_TRUNC)
					continue;
				memcpy(r->src_ip, &sa[i].sin_addr.s_addr, 4);
				r->sport = ntohs(sa[i].sin_port);
				r->dport = x->sport;
				r->udp = r->buf;
				r->udp_len = r->len;
			} else if (!raw_ours(x, r)) {
				continue;
			}
			got++;
		}
		if (got)
			return (int)got;
		if (now >= end)
			return 0;
		ms = (int)((end - now + 999999) / 1000000);
		rc = poll(&pfd, 1, ms);
		if (rc < 0 && errno != EINTR)
			return -errno;
		if (rc == 0 && secho_mono_ns() >= end)
			return 0;
	}
}

int secho_xport_have_neigh(const struct secho_xport *x)
{
	char line[256], want[16], ip[64], hw[64], flags[32];
	FILE *f;
	int found = 0;

	if (x->path.ep_ip[0] == 127)
		return 1;
	secho_ip_str(x->path.ep_ip, want);
	f = fopen("/proc/net/arp", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %*s %31s %63s", ip, flags, hw) != 3)
			continue;
		/* Flags 0x0 is an incomplete (unresolved) entry. */
		if (strcmp(ip, want) == 0 && strcmp(flags, "0x0") != 0)
			found = 1;
	}
	fclose(f);
	return found;
}
