/*
 * src/host/transport.h - how the host tool puts requests on the wire.
 *
 * Socket mode: an ordinary UDP socket; the kernel builds Ethernet/IPv4/UDP and does ARP,
 * and strips those headers from responses, so only the datagram's source address and
 * ports remain visible to the verifier.
 * Raw mode (--iface): an AF_PACKET socket on one interface; the tool builds every frame
 * itself (no ARP: the endpoint MAC is given) and receives whole frames, so every header
 * field of a response is verified.
 */
#ifndef SECHO_HOST_TRANSPORT_H
#define SECHO_HOST_TRANSPORT_H

#include "host/verify.h"
#include "sys/clock.h" /* secho_mono_ns: the host tool's deadlines */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum secho_xmode { SECHO_X_SOCKET, SECHO_X_RAW };

struct secho_xport_cfg {
	const char *iface;      /* NULL: socket mode */
	const uint8_t *dst_mac; /* raw mode, required: 6 bytes (NULL: none given) */
	const char *src_ip;     /* optional */
	const char *dst_ip;     /* NULL: 192.0.2.2 */
	bool allow_any_dst;
};

struct secho_xport {
	enum secho_xmode mode;
	int fd;
	int claim_fd; /* raw mode: a UDP socket holding our port so the kernel stack, which
	               * also sees the responses, neither answers them with ICMP nor reuses it */
	int ifindex;
	struct secho_vpath path; /* host and endpoint addresses */
	uint16_t sport;          /* our UDP port (requests' source, responses' destination) */
	uint16_t ip_id;
};

/* One received response, parsed just enough to route it (verification is verify.c's).
 * buf/cap are the caller's; the rest is filled by recv. */
struct secho_rxmsg {
	uint8_t *buf;
	size_t cap;
	size_t len;         /* bytes in buf: a whole frame (raw) or the UDP payload (socket) */
	uint64_t t_ns;      /* CLOCK_MONOTONIC when it was read */
	const uint8_t *udp; /* UDP payload inside buf */
	size_t udp_len;
	uint8_t src_ip[4];
	uint16_t sport, dport;
};

/* Parses cfg, applies the destination safety rule, opens the socket. Returns 0, or -errno
 * (-EINVAL a bad address, -EPERM a destination the rule refuses, -ENODEV no such
 * interface, or the failing call's) with the reason in err. */
int secho_xport_open(struct secho_xport *x, const struct secho_xport_cfg *cfg, char *err,
                     size_t errlen);
void secho_xport_close(struct secho_xport *x);

/* Builds (raw mode) and sends one request of len payload bytes to dport. Returns 0 or
 * -errno (-EAGAIN when the socket buffer is full). */
int secho_xport_send(struct secho_xport *x, uint16_t dport, const uint8_t *payload, size_t len);

/* Sends n requests in one sendmmsg; payloads[i]/lens[i]/dports[i]. Returns how many went
 * out (possibly fewer than n), or -errno if none. */
int secho_xport_send_batch(struct secho_xport *x, const uint16_t *dports,
                           const uint8_t *const *payloads, const size_t *lens, unsigned n);

/* Waits up to timeout_us for responses and reads at most n of them (recvmmsg). Frames
 * that are not for us (raw mode sees the whole interface) are skipped and not returned.
 * Returns the number read (0 on timeout) or -errno. */
int secho_xport_recv(struct secho_xport *x, struct secho_rxmsg *m, unsigned n, int64_t timeout_us);

/* Socket mode: 1 if the kernel has a usable neighbour entry for the endpoint IP (or it is
 * loopback), 0 if none, -errno if it cannot tell. */
int secho_xport_have_neigh(const struct secho_xport *x);

/* Formats an IPv4 address (network order) into buf (16 bytes). Returns buf. */
const char *secho_ip_str(const uint8_t ip[4], char buf[16]);
/* Formats a MAC into buf (18 bytes). Returns buf. */
const char *secho_mac_str(const uint8_t mac[6], char buf[18]);

#endif
