/*
 * bench/udp_load.c - bounded UDP load generator and reply checker (host side of the tests).
 *
 *   udp_load [--mode udp|packet] [--iface IF] [--dst 192.0.2.2] [--port 4000]
 *            [--src-port 40000] [--flows N] [--size 64] [--count 1000] [--seconds 10] [--rate PPS]
 *            [--window W] [--timeout-ms 200] [--busy-poll] [--dst-mac MAC] [--src-mac MAC]
 *            [--min-replies N] [--echo-check|--no-check] [--grow] [--secho-key FILE]
 *
 * Sends --count UDP datagrams of --size payload bytes (stopping after --seconds whatever
 * happens), keeping at most --window unanswered (1 = ping-pong, for round trips; 0 = no
 * limit, for throughput), optionally paced at --rate. Each payload carries a magic, a
 * sequence number and the send time, then a pattern derived from the sequence number.
 * Replies are matched by sequence number; with --echo-check (default) a reply must carry
 * the request's payload unchanged and come from dst:port to our address and port (and, in
 * packet mode, MACs swapped and IPv4/UDP checksums valid). --grow expects replies 32 bytes longer:
 * 16 x 0xA5, the payload, 16 x 0x5A (bare_echo --grow). Prints pps and RTT p50/p99. udp:    a
 * connected kernel UDP socket, sendmmsg/recvmmsg. packet: raw Ethernet frames through the AF_PACKET
 * backend (src/io) on --iface. The frames use --src-mac (default 02:00:00:00:01:01, not the
 * interface's), so the replies are seen by the packet ring but ignored by the host's IP stack.
 * --secho-key FILE: the replies are secho responses (secure header, ciphertext, tag) under
 * that key: the first 20 plaintext bytes (magic, sequence, send time) are recovered with
 * the GCM keystream (counter blocks IV || 2 and IV || 3) to match replies and time them;
 * --flows N (packet mode): request k goes from source port --src-port + k mod N, so that N
 * flows spread over the workers of an endpoint that steers by flow hash;
 * nothing else is checked (that is `secho host`'s job), so this stays a cheap generator.
 * Safety: refuses destinations outside 192.0.2.0/24 (TEST-NET-1) and 127.0.0.0/8.
 * Exit status: 0, or 1 when fewer than --min-replies replies or any bad reply, 2 on usage.
 */
#include "cli/cli.h"
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "secho/aes.h"
#include "secho/io.h"
#include "secho/keyfile.h"
#include "secho/wire.h"
#include "sys/clock.h"

#define MAGIC       0x48434553u /* "SECH" little-endian */
#define HDR         20u         /* magic 4, seq 8, send time 8 */
#define MAX_PAYLOAD 1472u
#define MAX_COUNT   100000000ull
#define MAX_SAMPLES (1u << 22)
#define BATCH       32u

struct load {
	bool packet_mode, busy_poll, check, grow, secho;
	secho_aes_key key; /* --secho-key: AES-256 key schedule for the keystream */
	uint32_t size, window, timeout_ms;
	uint64_t count, rate, min_replies;
	double seconds;
	struct in_addr src, dst;
	uint16_t sport, dport;
	uint16_t flows; /* source ports sport .. sport + flows - 1 */
	uint8_t smac[6], dmac[6];
	int fd;
	struct secho_io *io;

	uint64_t sent, replies, bad, dup, late_or_unknown;
	uint8_t *seen; /* one bit per sequence number */
	uint64_t *rtt_ns;
	uint64_t nrtt;
	uint64_t t_first_send, t_last_reply, t_last_event;
};

/* --opt's value s, a whole unsigned decimal in [lo, hi] (cli_parse_u64, the one parser
 * every command uses); false with one line on stderr otherwise. */
static bool parse_u64(const char *opt, const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	if (!s) {
		fprintf(stderr, "udp_load: %s needs a value\n", opt);
		return false;
	}
	if (!cli_parse_u64(s, lo, hi, out)) {
		fprintf(stderr, "udp_load: %s: bad value '%s' (want %llu..%llu)\n", opt, s,
		        (unsigned long long)lo, (unsigned long long)hi);
		return false;
	}
	return true;
}

/* TEST-NET-1 or loopback only: this tool must never load anything else. */
static bool allowed_dst(struct in_addr a)
{
	uint32_t h = ntohl(a.s_addr);

	return (h & 0xffffff00u) == 0xc0000200u || (h & 0xff000000u) == 0x7f000000u;
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void fill_payload(uint8_t *p, uint32_t size, uint64_t seq, uint64_t t)
{
	uint32_t m = MAGIC;

	memcpy(p, &m, 4);
	put64(p + 4, seq);
	put64(p + 12, t);
	for (uint32_t i = HDR; i < size; i++)
		p[i] = (uint8_t)(seq * 31u + i);
}

/* Account one reply payload. */
static void on_reply(struct load *L, const uint8_t *p, uint32_t len, bool addr_ok)
{
	uint32_t magic;
	uint64_t seq, t, now = secho_mono_ns();
	bool shape_ok = true;

	uint8_t clear[HDR];
	if (L->secho) {
		/* secure header (16) | ciphertext | tag (16): decrypt the first HDR bytes and go
		 * on with them as the payload (its remaining bytes are not checked: that is
		 * `secho host`'s job) */
		if (len < 32 + HDR) {
			L->late_or_unknown++;
			return;
		}
		uint8_t ctr[16], ks[32];
		memcpy(ctr, p + 4, 12);
		ctr[12] = ctr[13] = ctr[14] = 0;
		ctr[15] = 2;
		secho_aes_encrypt_block(&L->key, ks, ctr);
		ctr[15] = 3;
		secho_aes_encrypt_block(&L->key, ks + 16, ctr);
		for (uint32_t i = 0; i < HDR; i++)
			clear[i] = p[16 + i] ^ ks[i];
		p = clear;
		len -= 32;
	}
	if (L->grow) {
		/* 16 x 0xA5, the request payload, 16 x 0x5A (bare_echo --grow) */
		if (len < 32 + HDR) {
			L->late_or_unknown++;
			return;
		}
		for (uint32_t i = 0; i < 16; i++)
			shape_ok &= p[i] == 0xa5 && p[len - 16 + i] == 0x5a;
		p += 16;
		len -= 32;
	}
	memcpy(&magic, p, 4);
	if (len < HDR || magic != MAGIC) {
		L->late_or_unknown++;
		return;
	}
	seq = get64(p + 4);
	t = get64(p + 12);
	if (seq >= L->sent) {
		L->late_or_unknown++;
		return;
	}
	if (L->seen[seq >> 3] & (1u << (seq & 7))) {
		L->dup++;
		return;
	}
	L->seen[seq >> 3] |= (uint8_t)(1u << (seq & 7));
	bool ok = addr_ok && shape_ok && len == L->size;

	/* The byte-by-byte payload comparison only when checking: with --no-check the
	 * generator's own cost per reply stays small (benchmarks). */
	for (uint32_t i = HDR; L->check && !L->secho && ok && i < len; i++)
		ok = p[i] == (uint8_t)(seq * 31u + i);
	if (L->check && !ok) {
		if (L->bad < 5)
			fprintf(stderr, "udp_load: bad reply seq %llu (len %u, addresses %s)\n",
			        (unsigned long long)seq, len, addr_ok ? "ok" : "wrong");
		L->bad++;
	}
	L->replies++;
	if (L->nrtt < MAX_SAMPLES && now >= t)
		L->rtt_ns[L->nrtt++] = now - t;
	L->t_last_reply = now;
	L->t_last_event = now;
}

/* --- UDP socket mode --------------------------------------------------------------- */

static int udp_open(struct load *L)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};

	L->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (L->fd < 0)
		return -errno;
	int one = 1, buf = 4 << 20;

	setsockopt(L->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(L->fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	setsockopt(L->fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	sa.sin_port = htons(L->sport);
	if (bind(L->fd, (struct sockaddr *)&sa, sizeof(sa)))
		return -errno;
	sa.sin_addr = L->dst;
	sa.sin_port = htons(L->dport);
	if (connect(L->fd, (struct sockaddr *)&sa, sizeof(sa)))
		return -errno;
	return 0;
}

static unsigned udp_send(struct load *L, unsigned n)
{
	static uint8_t bufs[BATCH][MAX_PAYLOAD];
	struct mmsghdr m[BATCH];
	struct iovec iov[BATCH];
	uint64_t t = secho_mono_ns();

	memset(m, 0, sizeof(m));
	for (unsigned i = 0; i < n; i++) {
		fill_payload(bufs[i], L->size, L->sent + i, t);
		iov[i].iov_base = bufs[i];
		iov[i].iov_len = L->size;
		m[i].msg_hdr.msg_iov = &iov[i];
		m[i].msg_hdr.msg_iovlen = 1;
	}
	int r = sendmmsg(L->fd, m, n, MSG_DONTWAIT);

	return r > 0 ? (unsigned)r : 0;
}

static unsigned udp_recv(struct load *L)
{
	static uint8_t bufs[BATCH][2048];
	struct mmsghdr m[BATCH];
	struct iovec iov[BATCH];
	struct sockaddr_in from[BATCH];

	memset(m, 0, sizeof(m));
	memset(from, 0, sizeof(from));
	for (unsigned i = 0; i < BATCH; i++) {
		iov[i].iov_base = bufs[i];
		iov[i].iov_len = sizeof(bufs[i]);
		m[i].msg_hdr.msg_iov = &iov[i];
		m[i].msg_hdr.msg_iovlen = 1;
		m[i].msg_hdr.msg_name = &from[i];
		m[i].msg_hdr.msg_namelen = sizeof(from[i]);
	}
	int r = recvmmsg(L->fd, m, BATCH, MSG_DONTWAIT, NULL);

	if (r <= 0)
		return 0;
	for (int i = 0; i < r; i++) {
		/* The socket is connected: the kernel delivers only dst:port -> our port. */
		bool addr_ok = from[i].sin_addr.s_addr == L->dst.s_addr &&
		               from[i].sin_port == htons(L->dport);

		on_reply(L, bufs[i], m[i].msg_len, addr_ok);
	}
	return (unsigned)r;
}

/* --- AF_PACKET mode ---------------------------------------------------------------- */

/* Build Ethernet + IPv4 + UDP + payload at f. Returns the frame length. */
static uint32_t build_frame(struct load *L, uint8_t *f, uint64_t seq, uint64_t t)
{
	uint32_t ulen = 8 + L->size, tot = 20 + ulen;
	uint8_t *ip = f + 14, *u = ip + 20;

	memcpy(f, L->dmac, 6);
	memcpy(f + 6, L->smac, 6);
	f[12] = 0x08;
	f[13] = 0x00;
	memset(ip, 0, 20);
	ip[0] = 0x45;
	ip[2] = (uint8_t)(tot >> 8);
	ip[3] = (uint8_t)tot;
	ip[4] = (uint8_t)(seq >> 8);
	ip[5] = (uint8_t)seq;
	ip[6] = 0x40; /* DF */
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, &L->src, 4);
	memcpy(ip + 16, &L->dst, 4);
	uint16_t c = secho_csum_fold(secho_csum_add(0, ip, 20));

	ip[10] = (uint8_t)(c >> 8);
	ip[11] = (uint8_t)c;
	uint16_t sport = (uint16_t)(L->sport + seq % L->flows);

	u[0] = (uint8_t)(sport >> 8);
	u[1] = (uint8_t)sport;
	u[2] = (uint8_t)(L->dport >> 8);
	u[3] = (uint8_t)L->dport;
	u[4] = (uint8_t)(ulen >> 8);
	u[5] = (uint8_t)ulen;
	u[6] = u[7] = 0;
	fill_payload(u + 8, L->size, seq, t);
	/* UDP checksum over the pseudo-header (RFC 768) and the datagram. */
	uint32_t s = secho_csum_add(0, ip + 12, 8) + 17 + ulen;

	c = secho_csum_fold(secho_csum_add(s, u, ulen));
	if (!c)
		c = 0xffff;
	u[6] = (uint8_t)(c >> 8);
	u[7] = (uint8_t)c;
	return 14 + tot;
}

static unsigned pkt_send(struct load *L, unsigned n)
{
	struct secho_io_pkt none = {0};
	uint64_t t = secho_mono_ns();
	unsigned i;

	for (i = 0; i < n; i++) {
		uint8_t *f = secho_io_tx_slot(L->io, &none, 14 + 28 + L->size, 0);

		if (!f)
			break;
		secho_io_tx_commit(L->io, &none, build_frame(L, f, L->sent + i, t));
	}
	secho_io_tx_flush(L->io);
	return i;
}

static unsigned pkt_recv(struct load *L)
{
	struct secho_io_pkt k[BATCH];
	unsigned n = secho_io_rx_burst(L->io, k, BATCH), got = 0;

	for (unsigned i = 0; i < n; i++) {
		const uint8_t *f = k[i].data;

		if (k[i].len < 42 || f[12] != 0x08 || f[13] != 0 || f[14] != 0x45 || f[23] != 17)
			continue;
		const uint8_t *u = f + 34;

		if (((uint32_t)u[2] << 8 | u[3]) - L->sport >= L->flows)
			continue;
		bool addr_ok = !memcmp(f, L->smac, 6) && !memcmp(f + 6, L->dmac, 6) &&
		               !memcmp(f + 26, &L->dst, 4) && !memcmp(f + 30, &L->src, 4) &&
		               ((uint32_t)u[0] << 8 | u[1]) == L->dport;
		uint32_t ulen = (uint32_t)u[4] << 8 | u[5];

		if (ulen < 8 || 42 + ulen - 8 > k[i].len) {
			L->late_or_unknown++;
			continue;
		}
		/* Both checksums must verify (a sum over a correct header folds to 0). */
		if (secho_csum_fold(secho_csum_add(0, f + 14, 20)) != 0 ||
		    ((u[6] | u[7]) &&
		     secho_csum_fold(secho_csum_add(secho_csum_add(0, f + 26, 8) + 17 + ulen, u,
		                                    ulen)) != 0)) {
			if (L->bad < 5)
				fprintf(stderr, "udp_load: reply with a bad checksum\n");
			addr_ok = false;
		}
		on_reply(L, u + 8, ulen - 8, addr_ok);
		got++;
	}
	secho_io_rx_release(L->io, k, n);
	return got;
}

/* dst MAC from the neighbour table (/proc/net/arp) of the current namespace. */
static bool arp_lookup(struct in_addr ip, uint8_t mac[6])
{
	FILE *f = fopen("/proc/net/arp", "r");
	char line[256], ipbuf[64], hw[64];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		struct in_addr a;

		if (sscanf(line, "%63s %*s %*s %63s", ipbuf, hw) == 2 && inet_aton(ipbuf, &a) &&
		    a.s_addr == ip.s_addr && cli_parse_mac(hw, mac))
			found = true;
	}
	fclose(f);
	return found;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int run(struct load *L)
{
	uint64_t start = secho_mono_ns(), deadline = start + (uint64_t)(L->seconds * 1e9);
	uint64_t timeout = (uint64_t)L->timeout_ms * 1000000u, lost_marked = 0;
	double gap = L->rate ? 1e9 / (double)L->rate : 0;

	L->t_last_event = start;
	while (1) {
		uint64_t now = secho_mono_ns();
		uint64_t inflight = L->sent - L->replies - lost_marked;

		/* Past the deadline: send no more, collect what is in flight for at most one
		 * more timeout (the run lasts at most seconds + timeout). */
		if (now >= deadline) {
			if (L->count > L->sent)
				L->count = L->sent;
			if (now >= deadline + timeout)
				break;
		}
		if (L->sent >= L->count && (inflight == 0 || now - L->t_last_event > timeout))
			break;
		if (inflight && now - L->t_last_event > timeout) {
			lost_marked += inflight; /* give up on these; keep sending */
			L->t_last_event = now;
			inflight = 0;
		}
		unsigned want = BATCH;

		if (L->count - L->sent < want)
			want = (unsigned)(L->count - L->sent);
		if (L->window && inflight + want > L->window)
			want = inflight >= L->window ? 0 : (unsigned)(L->window - inflight);
		if (L->rate && want) {
			uint64_t due = (uint64_t)((double)L->sent * gap);

			if (now - start < due)
				want = 0;
			else if (want > 1 + (now - start - due) / (gap > 0 ? gap : 1))
				want = 1 + (unsigned)((double)(now - start - due) / gap);
		}
		if (want) {
			unsigned s = L->packet_mode ? pkt_send(L, want) : udp_send(L, want);

			if (s && !L->t_first_send)
				L->t_first_send = now;
			if (s)
				L->t_last_event = now;
			L->sent += s;
		}
		unsigned r = L->packet_mode ? pkt_recv(L) : udp_recv(L);

		if (!r && !want && !L->busy_poll) {
			/* Nothing to send now and nothing received: sleep until a reply. */
			if (L->packet_mode) {
				secho_io_wait(L->io, 1);
			} else {
				struct pollfd p = {.fd = L->fd, .events = POLLIN};

				poll(&p, 1, 1);
			}
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct load L;
	const char *iface = NULL, *dst = "192.0.2.2", *src = "192.0.2.1";
	const char *dmac = NULL, *smac = "02:00:00:00:01:01";
	uint64_t v;
	char err[256];

	L.size = 64;
	L.count = 1000;
	L.seconds = 10;
	L.window = 1;
	L.timeout_ms = 200;
	L.sport = 40000;
	L.flows = 1;
	L.dport = 4000;
	L.check = true;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!a)
			break;
		bool takes = true;

		if (!strcmp(a, "--mode") && val) {
			if (!strcmp(val, "packet"))
				L.packet_mode = true;
			else if (strcmp(val, "udp") != 0) {
				fprintf(stderr, "udp_load: --mode: bad value '%s'\n", val);
				return 2;
			}
		} else if (!strcmp(a, "--iface") && val) {
			iface = val;
		} else if (!strcmp(a, "--dst") && val) {
			dst = val;
		} else if (!strcmp(a, "--src") && val) {
			src = val;
		} else if (!strcmp(a, "--dst-mac") && val) {
			dmac = val;
		} else if (!strcmp(a, "--src-mac") && val) {
			smac = val;
		} else if (!strcmp(a, "--port")) {
			if (!parse_u64(a, val, 1, 65535, &v))
				return 2;
			L.dport = (uint16_t)v;
		} else if (!strcmp(a, "--src-port")) {
			if (!parse_u64(a, val, 1, 65535, &v))
				return 2;
			L.sport = (uint16_t)v;
		} else if (!strcmp(a, "--flows")) {
			if (!parse_u64(a, val, 1, 4096, &v))
				return 2;
			L.flows = (uint16_t)v;
		} else if (!strcmp(a, "--size")) {
			if (!parse_u64(a, val, HDR, MAX_PAYLOAD, &v))
				return 2;
			L.size = (uint32_t)v;
		} else if (!strcmp(a, "--count")) {
			if (!parse_u64(a, val, 1, MAX_COUNT, &L.count))
				return 2;
		} else if (!strcmp(a, "--seconds")) {
			if (!parse_u64(a, val, 1, 600, &v))
				return 2;
			L.seconds = (double)v;
		} else if (!strcmp(a, "--rate")) {
			if (!parse_u64(a, val, 0, 100000000, &L.rate))
				return 2;
		} else if (!strcmp(a, "--window")) {
			if (!parse_u64(a, val, 0, 1u << 20, &v))
				return 2;
			L.window = (uint32_t)v;
		} else if (!strcmp(a, "--timeout-ms")) {
			if (!parse_u64(a, val, 1, 10000, &v))
				return 2;
			L.timeout_ms = (uint32_t)v;
		} else if (!strcmp(a, "--secho-key") && val) {
			struct secho_keyfile kf;
			if (secho_keyfile_load(val, &kf, err, sizeof(err)) != 0 ||
			    secho_aes_key_init(&L.key, kf.key, 32, SECHO_IMPL_AUTO) != SECHO_OK) {
				fprintf(stderr, "udp_load: --secho-key %s: %s\n", val, err);
				secho_keyfile_wipe(&kf);
				return 2;
			}
			secho_keyfile_wipe(&kf);
			L.secho = true;
		} else if (!strcmp(a, "--min-replies")) {
			if (!parse_u64(a, val, 0, MAX_COUNT, &L.min_replies))
				return 2;
		} else {
			takes = false;
			if (!strcmp(a, "--busy-poll"))
				L.busy_poll = true;
			else if (!strcmp(a, "--echo-check"))
				L.check = true;
			else if (!strcmp(a, "--grow"))
				L.grow = true;
			else if (!strcmp(a, "--no-check"))
				L.check = false;
			else {
				fprintf(stderr, "udp_load: unknown or incomplete option '%s'\n", a);
				return 2;
			}
		}
		if (takes)
			i++;
	}
	if (!inet_aton(dst, &L.dst) || !inet_aton(src, &L.src)) {
		fprintf(stderr, "udp_load: bad IPv4 address\n");
		return 2;
	}
	if ((L.flows > 1 && !L.packet_mode) || L.sport + L.flows - 1 > 65535) {
		fprintf(stderr, "udp_load: --flows needs --mode packet and source ports up to "
		                "65535\n");
		return 2;
	}
	if (!allowed_dst(L.dst)) {
		fprintf(stderr,
		        "udp_load: refusing destination %s: only 192.0.2.0/24 and "
		        "127.0.0.0/8 are allowed\n",
		        dst);
		return 2;
	}
	L.seen = calloc((size_t)(L.count + 7) / 8, 1);
	L.rtt_ns = calloc(L.count < MAX_SAMPLES ? L.count : MAX_SAMPLES, sizeof(uint64_t));
	if (!L.seen || !L.rtt_ns) {
		fprintf(stderr, "udp_load: out of memory\n");
		return 1;
	}
	if (L.packet_mode) {
		struct secho_io_cfg cfg = {.kind = SECHO_IO_PACKET,
		                           .ifname = iface,
		                           .busy_poll = L.busy_poll,
		                           .packet_version = 2};

		if (!iface) {
			fprintf(stderr, "udp_load: packet mode needs --iface\n");
			return 2;
		}
		if (!cli_parse_mac(smac, L.smac)) {
			fprintf(stderr, "udp_load: --src-mac: bad value '%s'\n", smac);
			return 2;
		}
		if (dmac && !cli_parse_mac(dmac, L.dmac)) {
			fprintf(stderr, "udp_load: --dst-mac: bad value '%s' (aa:bb:cc:dd:ee:ff)\n",
			        dmac);
			return 2;
		}
		if (!dmac && !arp_lookup(L.dst, L.dmac)) {
			fprintf(stderr, "udp_load: no MAC for %s (give --dst-mac)\n", dst);
			return 2;
		}
		L.io = secho_io_open(&cfg, err, sizeof(err));
		if (!L.io) {
			fprintf(stderr, "udp_load: %s\n", err);
			return 1;
		}
	} else {
		int r = udp_open(&L);

		if (r) {
			fprintf(stderr, "udp_load: UDP socket: %s\n", strerror(-r));
			return 1;
		}
	}
	run(&L);
	if (L.io) {
		struct secho_io_stats st;

		secho_io_get_stats(L.io, &st);
		if (st.rx_dropped_by_kernel)
			printf("udp_load: receive ring dropped %llu\n",
			       (unsigned long long)st.rx_dropped_by_kernel);
		secho_io_close(L.io);
	} else {
		close(L.fd);
	}
	double el = L.t_last_reply > L.t_first_send
	                    ? (double)(L.t_last_reply - L.t_first_send) * 1e-9
	                    : 0;
	double p50 = 0, p99 = 0, pmax = 0;

	if (L.nrtt) {
		qsort(L.rtt_ns, L.nrtt, sizeof(uint64_t), cmp_u64);
		size_t i50 = L.nrtt / 2, i99 = L.nrtt * 99 / 100;

		p50 = (double)L.rtt_ns[i50] / 1e3;
		p99 = (double)L.rtt_ns[i99] / 1e3;
		pmax = (double)L.rtt_ns[L.nrtt - 1] / 1e3;
	}
	printf("udp_load: sent %llu replies %llu lost %llu bad %llu dup %llu other %llu size %u "
	       "window %u\n",
	       (unsigned long long)L.sent, (unsigned long long)L.replies,
	       (unsigned long long)(L.sent - L.replies), (unsigned long long)L.bad,
	       (unsigned long long)L.dup, (unsigned long long)L.late_or_unknown, L.size, L.window);
	printf("udp_load: %.3f s, %.0f replies/s, rtt p50 %.1f us p99 %.1f us max %.1f us\n", el,
	       el > 0 ? (double)L.replies / el : 0.0, p50, p99, pmax);
	free(L.seen);
	free(L.rtt_ns);
	if (L.replies < L.min_replies || (L.check && L.bad))
		return 1;
	return 0;
}
