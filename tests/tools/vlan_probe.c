/*
 * tests/tools/vlan_probe.c - talk to an endpoint through one VLAN of a trunk, without the
 * kernel's VLAN devices: requests are sent with their tag in the frame (raw AF_PACKET),
 * and every response must come back with the same tag, in its bytes or reported by the
 * kernel beside it (PACKET_AUXDATA), and pass the host tool's verifier (nettle) once
 * untagged. With --arp, one tagged ARP request for the endpoint's address instead: the
 * reply must be tagged the same and say the endpoint's MAC.
 *
 * usage: vlan_probe IFACE KEYFILE DST_MAC SRC_IP DST_IP TPID VID COUNT [--arp]
 *   TPID 0x8100 (802.1Q) or 0x88a8 (802.1ad), VID 0..4095. Requests alternate between the
 *   streaming (4000) and offload (4001) ports, payloads of 0..1400 bytes.
 * Prints "sent N answered A tagged T verified V" (or "arp: ..."); exits 0 when every
 * request was answered, tagged and verified, 1 otherwise, 2 on bad usage or set-up error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "host/verify.h"
#include "secho/host.h"
#include "secho/wire.h"
#include "sys/clock.h"

#define MAXREQ 512

struct req {
	uint16_t sport, dport;
	size_t len;
	uint8_t pl[1400];
	bool done;
};

static struct req reqs[MAXREQ];
static uint8_t frame[2048], rbuf[9216 + 64];

static bool parse_mac(const char *s, uint8_t m[6])
{
	unsigned v[6];
	char tail;
	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
	           &tail) != 6)
		return false;
	for (int i = 0; i < 6; i++)
		m[i] = (uint8_t)v[i];
	return true;
}

static void wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* The tagged request frame for r into frame; returns its length. */
static size_t build(const struct secho_vpath *pa, uint16_t tpid, uint16_t vid, const struct req *r)
{
	uint8_t *f = frame;
	memcpy(f, pa->ep_mac, 6);
	memcpy(f + 6, pa->host_mac, 6);
	wr16(f + 12, tpid);
	wr16(f + 14, vid);
	wr16(f + 16, 0x0800);
	uint8_t *ip = f + 18, *u = ip + 20;
	memset(ip, 0, 20);
	ip[0] = 0x45;
	wr16(ip + 2, (uint16_t)(28 + r->len));
	wr16(ip + 6, 0x4000);
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, pa->host_ip, 4);
	memcpy(ip + 16, pa->ep_ip, 4);
	wr16(ip + 10, (uint16_t)~secho_inet_csum(ip, 20, 0));
	wr16(u, r->sport);
	wr16(u + 2, r->dport);
	wr16(u + 4, (uint16_t)(8 + r->len));
	wr16(u + 6, 0); /* no checksum */
	memcpy(u + 8, r->pl, r->len);
	size_t n = 18 + 28 + r->len;
	if (n < 64) {
		memset(f + n, 0, 64 - n);
		n = 64;
	}
	return n;
}

/* Receive one frame; *tag gets TPID << 16 | TCI of its tag (in its bytes, then removed, or
 * reported by the kernel), 0 if untagged. Returns the untagged frame's length, 0 if none
 * came within timeout_ms, -1 on error. */
static ssize_t recv_frame(int fd, int timeout_ms, uint32_t *tag)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	if (poll(&pfd, 1, timeout_ms) <= 0)
		return 0;
	union {
		char b[CMSG_SPACE(sizeof(struct tpacket_auxdata))];
		struct cmsghdr align;
	} cb;
	struct iovec iov = {rbuf, sizeof(rbuf)};
	struct msghdr mh = {.msg_iov = &iov,
	                    .msg_iovlen = 1,
	                    .msg_control = cb.b,
	                    .msg_controllen = sizeof(cb.b)};
	ssize_t n = recvmsg(fd, &mh, MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN ? 0 : -1;
	*tag = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_PACKET || c->cmsg_type != PACKET_AUXDATA)
			continue;
		struct tpacket_auxdata a;
		memcpy(&a, CMSG_DATA(c), sizeof(a));
		if (a.tp_status & TP_STATUS_VLAN_VALID)
			*tag = (uint32_t)((a.tp_status & TP_STATUS_VLAN_TPID_VALID) &&
			                                  a.tp_vlan_tpid
			                          ? a.tp_vlan_tpid
			                          : 0x8100)
			               << 16 |
			       a.tp_vlan_tci;
	}
	if (!*tag && n >= 18 && (rbuf[12] == 0x81 || rbuf[12] == 0x88) &&
	    (rbuf[13] == 0x00 || rbuf[13] == 0xa8)) {
		*tag = (uint32_t)(rbuf[12] << 24 | rbuf[13] << 16 | rbuf[14] << 8 | rbuf[15]);
		memmove(rbuf + 4, rbuf, 12);
		memmove(rbuf, rbuf + 4, (size_t)n - 4);
		n -= 4;
	}
	return n;
}

int main(int argc, char **argv)
{
	if (argc < 9 || argc > 10 || (argc == 10 && strcmp(argv[9], "--arp") != 0)) {
		fprintf(stderr, "usage: vlan_probe IFACE KEYFILE DST_MAC SRC_IP DST_IP TPID VID "
		                "COUNT [--arp]\n");
		return 2;
	}
	bool arp = argc == 10;
	struct secho_vpath pa;
	uint16_t tpid = (uint16_t)strtoul(argv[6], NULL, 0), vid = (uint16_t)atoi(argv[7]);
	int count = atoi(argv[8]);
	if (!parse_mac(argv[3], pa.ep_mac) || inet_pton(AF_INET, argv[4], pa.host_ip) != 1 ||
	    inet_pton(AF_INET, argv[5], pa.ep_ip) != 1 || (tpid != 0x8100 && tpid != 0x88a8) ||
	    vid > 4095 || count < 1 || count > MAXREQ) {
		fprintf(stderr, "vlan_probe: bad argument\n");
		return 2;
	}
	char err[256];
	static struct secho_host_key k;
	static struct secho_verifier v;
	if (secho_host_key_load(argv[2], &k, err, sizeof(err)) < 0 ||
	    secho_verifier_init(&v, &k, 4000, 4001, 4002) < 0) {
		fprintf(stderr, "vlan_probe: key: %s\n", err);
		return 2;
	}
	secho_host_key_wipe(&k);
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	unsigned ifindex = if_nametoindex(argv[1]);
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", argv[1]);
	int one = 1;
	struct sockaddr_ll sll = {.sll_family = AF_PACKET,
	                          .sll_protocol = htons(ETH_P_ALL),
	                          .sll_ifindex = (int)ifindex,
	                          .sll_halen = 6};
	if (fd < 0 || !ifindex || ioctl(fd, SIOCGIFHWADDR, &ifr) < 0 ||
	    setsockopt(fd, SOL_PACKET, PACKET_AUXDATA, &one, sizeof(one)) < 0 ||
	    setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		fprintf(stderr, "vlan_probe: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	memcpy(pa.host_mac, ifr.ifr_hwaddr.sa_data, 6);
	memcpy(sll.sll_addr, pa.ep_mac, 6);
	uint32_t want = (uint32_t)tpid << 16;

	if (arp) {
		/* who-has ep_ip tell host_ip, to broadcast, tagged */
		static const uint8_t bc[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
		uint8_t *f = frame;
		memcpy(f, bc, 6);
		memcpy(f + 6, pa.host_mac, 6);
		wr16(f + 12, tpid);
		wr16(f + 14, vid);
		wr16(f + 16, 0x0806);
		static const uint8_t hdr[8] = {0, 1, 8, 0, 6, 4, 0, 1};
		memcpy(f + 18, hdr, 8);
		memcpy(f + 26, pa.host_mac, 6);
		memcpy(f + 32, pa.host_ip, 4);
		memset(f + 36, 0, 6);
		memcpy(f + 42, pa.ep_ip, 4);
		memset(f + 46, 0, 18);
		memcpy(sll.sll_addr, bc, 6);
		if (sendto(fd, f, 64, 0, (struct sockaddr *)&sll, sizeof(sll)) != 64) {
			fprintf(stderr, "vlan_probe: send: %s\n", strerror(errno));
			return 2;
		}
		double until = secho_mono_s() + 2;
		while (secho_mono_s() < until) {
			uint32_t tag;
			ssize_t n = recv_frame(fd, 100, &tag);
			if (n < 42 || rbuf[12] != 0x08 || rbuf[13] != 0x06 || rbuf[21] != 2 ||
			    memcmp(rbuf + 28, pa.ep_ip, 4) != 0)
				continue;
			bool ok = (tag >> 16) == tpid && (tag & 0xfff) == vid &&
			          !memcmp(rbuf + 22, pa.ep_mac, 6) && !memcmp(rbuf, pa.host_mac, 6);
			printf("arp: reply tagged %04x/%u, %s\n", tag >> 16, tag & 0xfff,
			       ok ? "ok" : "wrong");
			return ok ? 0 : 1;
		}
		printf("arp: no reply\n");
		return 1;
	}

	unsigned seed = (unsigned)getpid();
	for (int i = 0; i < count; i++) {
		struct req *r = &reqs[i];
		r->sport = (uint16_t)(40000 + i);
		r->dport = (uint16_t)(4000 + i % 2);
		r->len = (size_t)(rand_r(&seed) % 1401);
		for (size_t b = 0; b < r->len; b++)
			r->pl[b] = (uint8_t)rand_r(&seed);
		size_t n = build(&pa, tpid, vid, r);
		if (sendto(fd, frame, n, 0, (struct sockaddr *)&sll, sizeof(sll)) != (ssize_t)n) {
			fprintf(stderr, "vlan_probe: send: %s\n", strerror(errno));
			return 2;
		}
		usleep(200);
	}
	int answered = 0, tagged = 0, verified = 0;
	double until = secho_mono_s() + 3; /* all sent: 3 s for the answers (a shared machine) */
	while (answered < count && secho_mono_s() < until) {
		uint32_t tag;
		ssize_t n = recv_frame(fd, 100, &tag);
		if (n < 42 || memcmp(rbuf, pa.host_mac, 6) != 0 ||
		    memcmp(rbuf + 6, pa.ep_mac, 6) != 0)
			continue;
		unsigned i = (unsigned)(rbuf[36] << 8 | rbuf[37]) - 40000u;
		if (i >= (unsigned)count || reqs[i].done)
			continue;
		reqs[i].done = true;
		answered++;
		tagged += (tag >> 16) == (want >> 16) && (tag & 0xfff) == vid;
		struct secho_vreq vr = {.payload = reqs[i].pl,
		                        .len = reqs[i].len,
		                        .dport = reqs[i].dport,
		                        .sport = reqs[i].sport};
		struct secho_vresult res;
		unsigned f = secho_verify_frame(&v, &pa, &vr, rbuf, (size_t)n, NULL, 0, &res);
		verified += f == SECHO_VF_OK;
		if (f != SECHO_VF_OK)
			fprintf(stderr, "vlan_probe: response %u: %s\n", i, secho_vfail_name(f));
	}
	secho_verifier_free(&v);
	close(fd);
	printf("sent %d answered %d tagged %d verified %d\n", count, answered, tagged, verified);
	return answered == count && tagged == count && verified == count ? 0 : 1;
}
