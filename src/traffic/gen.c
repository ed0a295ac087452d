/*
 * src/traffic/gen.c - the seeded traffic generator (contract: gen.h; docs/FLOW.md).
 *
 * Shape: connections (biflows) arrive in start-time order from the profile (a Poisson
 * process for the built-in statistical profiles, the sorted rows of a CSV profile, the
 * scripted cases of `conformance`); each live connection waits in a min-heap keyed by the
 * time of its next packet (ties broken by creation order, so the output never depends on
 * the heap's internals). secho_gen_next() pops the earliest, builds that one frame into a
 * buffer of the generator's own and puts the connection back or retires it; a retired
 * connection reports its one or two unidirectional flows. Memory is the heap of live
 * connections, never the packets.
 *
 * Times are kept in microseconds (the pcap resolution); a frame is stamped
 * max(planned, previous + 1 us), so timestamps strictly increase. Packet k of n of a
 * connection is planned at start + span * k / (n - 1) with a jitter of at most 0.3 of a slot
 * inside, which bounds every gap by 1.6 slots: spans are capped at 240 s and slots at 12 s
 * (gen.h's contract: no gap above 20 s, no span above 240 s).
 *
 * Payload bytes are zero: checksums then only cover headers (and stay correct), and a frame
 * costs its header writes plus one memset. With --app (cfg.apps), the first data packet of
 * each direction of a TCP or UDP connection carries its application's message instead
 * (gen_app.h; every packet of a DNS connection does), drawn from a stream of its own so that
 * the connections' shapes stay those of the profile.
 */
#include "traffic/gen.h"
#include "traffic/gen_app.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "secho/dissect.h"
#include "secho/wire.h"

/* ---- random numbers: xoshiro256** seeded through splitmix64 ---- */

struct rng {
	uint64_t s[4];
};

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void rng_seed(struct rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t rng_u64(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return res;
}

/* Uniform in [0, 1) with 53 bits. */
static double rng_unit(struct rng *r)
{
	return (double)(rng_u64(r) >> 11) * 0x1.0p-53;
}

/* Uniform in [lo, hi] (inclusive). */
static uint64_t rng_range(struct rng *r, uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return lo;
	return lo + rng_u64(r) % (hi - lo + 1);
}

/* ---- profiles ---- */

/* IP total lengths: weight, lowest, highest (uniform inside). */
struct size_bucket {
	double w;
	uint16_t lo, hi;
};

/*
 * FlowTest's published shares are Ethernet frame sizes without FCS (ft-generator subtracts
 * the 14-byte Ethernet header to get the IP length); the rest of the 100% is the 128-1023 B
 * band. Jumbo frames up to 9000 B of IP.
 */
static const struct size_bucket sizes_geant[] = {
        {7.9, 50, 50}, {28.4, 51, 113}, {4.2, 114, 1009}, {7.1, 1010, 1500}, {52.4, 1505, 8986}};
/* NIX flows are short: their handshakes and ends (about 13% of the packets, all frames of
 * 64 B or less) fill most of the 64 B share, so the data packets' weights are set to give
 * the published shares over all packets (measured, 300,000 packets: 17.1, 38.5, 12.1, 20.5, 11.8).
 */
static const struct size_bucket sizes_nix[] = {
        {4.3, 50, 50}, {43.4, 51, 113}, {14.3, 114, 1009}, {24.1, 1010, 1500}, {13.9, 1505, 8986}};
/* issue 10's benchmark: heavy about 1,000 B mean IP length, light about 290 B. */
static const struct size_bucket sizes_heavy[] = {
        {26.0, 40, 64}, {8.0, 65, 1000}, {66.0, 1400, 1500}};
static const struct size_bucket sizes_light[] = {
        {42.0, 40, 64}, {46.0, 65, 600}, {12.0, 1400, 1500}};

struct profile {
	const char *name;
	uint64_t def_packets;
	double pps;        /* nominal aggregate packet rate: sets the connection arrival rate */
	double alpha, xm;  /* Pareto packets per connection */
	uint64_t max_conn; /* cap on one connection's packets */
	double gap_lo_us;  /* mean gap inside a connection: log-uniform in [lo, hi] */
	double gap_hi_us;
	double v6, udp, icmp; /* shares of connections */
	const struct size_bucket *sizes;
	size_t nsizes;
	uint16_t max_ip;
};

#define NB(a) (sizeof(a) / sizeof((a)[0]))

static const struct profile profiles[] = {
        {"heavy", 3000000, 200000, 1.3, 720, 400000, 20, 2000, 0.1, 0.1, 0.01, sizes_heavy,
         NB(sizes_heavy), 1500},
        {"light", 3000000, 300000, 1.6, 5.6, 20000, 100, 100000, 0.1, 0.2, 0.03, sizes_light,
         NB(sizes_light), 1500},
        {"geant", 3000000, 200000, 1.2, 300, 600000, 20, 2000, 0.1, 0.1, 0.01, sizes_geant,
         NB(sizes_geant), 9000},
        {"nix", 3000000, 300000, 1.6, 7.5, 20000, 100, 100000, 0.1, 0.2, 0.03, sizes_nix,
         NB(sizes_nix), 9000},
        /* short flows: about 3 packets per connection (Pareto 2.5 from 2), a new one
         * every 3 packets, at 10,000 packets/s so that most end idle (30 s) inside the
         * capture: the flow table's worst case (issue 24's softflowd comparison) */
        {"short", 1000000, 10000, 2.5, 2.0, 1000, 100, 100000, 0.1, 0.3, 0.05, sizes_light,
         NB(sizes_light), 1500},
};

const struct secho_gen_profile_info secho_gen_profiles[] = {
        {"conformance", 0,
         "every case the meter's tests need, once (--packets N: repeated until N)"},
        {"encap", 0,
         "every encapsulation (--encap), tenants with the same inner key in two tunnels"},
        {"heavy", 3000000, "about 1,000 Pareto-sized connections, mean IP length about 1,000 B"},
        {"light", 3000000, "about 200,000 connections, mean IP length about 290 B"},
        {"geant", 3000000, "FlowTest GEANT morning sizes (52% jumbo), few very heavy flows"},
        {"nix", 3000000, "FlowTest NIX morning sizes, many light flows"},
        {"short", 1000000, "a new connection every 3 packets, most ending idle inside the capture"},
};
const size_t secho_gen_nprofiles = NB(secho_gen_profiles);

/* ---- connections ---- */

enum { K_TCP, K_UDP, K_ICMP, K_OTHER, K_RAW };
enum { TAG_NONE, TAG_1Q, TAG_QINQ_AD, TAG_QINQ_11 };
/* Encapsulations (--encap, the encap profile; encaps[] below) */
/* Room in front of the inner frame for the outer headers: two VLAN tags, IPv6, and the
 * longest tunnel header (UDP + Geneve with an option, 24 bytes) before an inner Ethernet
 * header, rounded up. */
#define ENC_ROOM 96u
_Static_assert(ENC_ROOM >= 22 + 40 + 24, "two tags, IPv6, UDP + Geneve with its option");
_Static_assert(SECHO_GEN_MAX_ENCAP >= 40 + 24 + 14, "IPv6, UDP + Geneve, inner Ethernet");
enum {
	E_NONE,
	E_MPLS,
	E_MPLS2,
	E_PPPOE,
	E_GRE,
	E_ERSPAN,
	E_VXLAN,
	E_GENEVE,
	E_GTPU,
	E_IPIP,
	E_IPIP4,
	E_IPIP6,
	E_EOMPLS,
	E_COUNT
};
enum { END_FIN, END_RST_F, END_RST_R, END_NONE };
enum { REUSE_NONE, REUSE_SYN, REUSE_IDLE };

/* Features of a connection's packets. */
#define F_IP4OPT 0x0001u /* IPv4 Router Alert option (IHL 6) */
#define F_IP4MAX 0x0002u /* IPv4 options to the maximum (IHL 15: record route) */
#define F_HBH    0x0004u /* IPv6 hop-by-hop options */
#define F_RT     0x0008u /* IPv6 routing header (segment routing, one segment) */
#define F_DST    0x0010u /* IPv6 destination options */
#define F_FRAG   0x0020u /* every datagram sent in fragments */
#define F_ATOMIC 0x0040u /* IPv6 atomic fragment (offset 0, M=0, RFC 6946) */
#define F_SNAP   0x0080u /* captured at 96 bytes (pcap caplen < len) */
#define F_ECN    0x0100u /* SYN with ECE|CWR, data with URG once */
#define F_EMBED  0x0200u /* ICMP error carrying an IPv4+UDP header of its own */

/* Raw one-off frames (K_RAW): what raw_what holds. */
enum { RAW_MALFORMED, RAW_ORPHAN4, RAW_ORPHAN6, RAW_ARP, RAW_UNKNOWN, RAW_8023 };

#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_RST 0x04
#define TCP_PSH 0x08
#define TCP_ACK 0x10
#define TCP_URG 0x20
#define TCP_ECE 0x40
#define TCP_CWR 0x80

struct conn {
	uint64_t next_us; /* heap key, then id */
	uint64_t id;
	struct secho_flow_key key; /* forward direction: client -> server */
	uint16_t icmp_rev;         /* reverse direction's type << 8 | code */
	uint8_t kind, tags, end, phase;
	uint16_t feat;
	uint16_t tag_tci[2]; /* outer, inner TCI */
	uint8_t raw_what, raw_reason;
	uint8_t csv; /* sizes from bytes_left (exact byte targets) */
	uint8_t reuse;
	uint64_t total[2];         /* packets (datagrams) this connection sends per direction */
	uint64_t sent[2];          /* of which sent */
	uint64_t ctl_left[2];      /* closing packets still reserved (FIN or RST) */
	uint64_t bytes_left[2];    /* csv: bytes still to send per direction */
	uint16_t size_lo, size_hi; /* conformance: data IP length (or datagram length) */
	uint16_t max_ip;
	uint64_t reuse_total[2];
	uint64_t start_us, span_us, k, n; /* packet k of n planned at start + span*k/(n-1) */
	/* fragment train of the current datagram */
	uint32_t fr_len; /* bytes of the fragmentable part (L4 header + payload) */
	uint32_t fr_off; /* bytes sent so far */
	uint32_t fr_id;  /* IPv4 identification or IPv6 fragment id */
	uint8_t fr_dir;
	uint8_t fr_flags; /* TCP flags of the datagram (L4 header in the first fragment) */
	uint16_t ipid[2];
	uint32_t seq[2];
	uint8_t mac[2][6];
	struct secho_flow_dir d[2];
	uint64_t bytes_outer[2]; /* encapsulated: the outer IP lengths per direction */
	const struct profile *prof;
	uint8_t enc, enc_has_id;  /* E_*: the encapsulation of every frame; an ID given */
	uint16_t enc_ipid[2];     /* outer IPv4 identification, GRE sequence (ERSPAN) */
	uint32_t enc_id;          /* label, session, key, VNI or TEID */
	struct secho_gen_app app; /* --app: its application (app.app NONE: none) */
	uint16_t app_len[2];      /* bytes of the first message sent each way (0: none yet) */
};

/* ---- key registry (CSV rows with addresses of their own) ---- */

struct reg_ent {
	uint64_t busy_until; /* 0 = empty slot */
	uint8_t k[40];
};

struct registry {
	struct reg_ent *t;
	size_t cap, used;
};

struct secho_gen {
	struct rng rng;
	const struct profile *prof; /* statistical profiles */
	int mode;                   /* M_STAT, M_CSV, M_CONF */
	uint64_t budget;            /* packets still to plan (stat), or to reach (conf) */
	uint64_t planned;
	uint64_t target;
	double arr_rate_per_us;
	uint64_t arr_next_us;
	bool arrivals_done;
	uint64_t next_id;
	uint64_t host_idx; /* address allocator */
	uint64_t last_us;
	bool started;
	/* heap */
	struct conn **heap;
	size_t nheap, capheap;
	struct conn *freelist;
	/* csv */
	struct secho_gen_csv_row *rows;
	size_t nrows, row_i;
	struct registry reg;
	/* conformance */
	uint64_t conf_round;
	size_t conf_i;
	struct conn conf_prev; /* the previous case (same_key takes its addresses) */
	/* output */
	secho_gen_flow_fn on_flow;
	void *ctx;
	struct secho_gen_totals tot;
	uint8_t enc, enc_has_id; /* --encap */
	uint32_t enc_id;
	bool tunnels;       /* flows in tunnels: the truth's tunnel columns */
	const uint8_t *out; /* the frame built (g->frame, or inside it after ENC_ROOM) */
	uint32_t outer_len; /* its outermost IP packet's length when encapsulated in IP */
	uint32_t enc_over;  /* bytes the encapsulation added to it */
	const struct case_spec *cases; /* conformance or encap */
	size_t ncases;
	unsigned apps;       /* --app: 1 << SECHO_GEN_APP_* of the applications drawn */
	struct rng app_rng;  /* --app: draws the applications (g->rng stays the profile's) */
	char app_json[4096]; /* the flow's features column while on_flow runs */
	uint8_t app_buf[SECHO_GEN_APP_MSG_MAX];
	uint8_t frame[SECHO_GEN_MAX_FRAME + 128];
};

enum { M_STAT, M_CSV, M_CONF };

/* ---- heap ---- */

static bool conn_before(const struct conn *a, const struct conn *b)
{
	return a->next_us < b->next_us || (a->next_us == b->next_us && a->id < b->id);
}

static int heap_push(struct secho_gen *g, struct conn *c)
{
	if (g->nheap == g->capheap) {
		size_t nc = g->capheap ? g->capheap * 2 : 1024;
		struct conn **nh = realloc(g->heap, nc * sizeof(struct conn *));
		if (!nh)
			return -ENOMEM;
		g->heap = nh;
		g->capheap = nc;
	}
	size_t i = g->nheap++;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!conn_before(c, g->heap[p]))
			break;
		g->heap[i] = g->heap[p];
		i = p;
	}
	g->heap[i] = c;
	return 0;
}

static struct conn *heap_pop(struct secho_gen *g)
{
	struct conn *top = g->heap[0], *last = g->heap[--g->nheap];
	size_t i = 0, n = g->nheap;
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		const struct conn *best = last;
		if (l < n && conn_before(g->heap[l], best)) {
			m = l;
			best = g->heap[l];
		}
		if (l + 1 < n && conn_before(g->heap[l + 1], best))
			m = l + 1;
		if (m == i)
			break;
		g->heap[i] = g->heap[m];
		i = m;
	}
	if (n)
		g->heap[i] = last;
	return top;
}

static struct conn *conn_alloc(struct secho_gen *g)
{
	struct conn *c = g->freelist;
	if (c)
		g->freelist = *(struct conn **)c;
	else
		c = malloc(sizeof(*c));
	if (c) {
		memset(c, 0, sizeof(*c));
		c->id = g->next_id++;
	}
	return c;
}

static void conn_free(struct secho_gen *g, struct conn *c)
{
	*(struct conn **)c = g->freelist;
	g->freelist = c;
}

/* ---- addresses ---- */

/*
 * Every connection gets a client of its own: index i -> IPv4 client 198.18.0.0 + i % 130816
 * (198.18.0.0 - 198.19.254.255), "round" r = i / 130816 picks the client port
 * (1024 + r % 64512) for TCP and UDP and the server for protocols without ports, so that no
 * two connections share a key, in either direction, for the first 33 million connections.
 * Servers: 198.19.255.0/24 and 2001:db8:ff::/64. IPv6 clients: 2001:db8:1:R::i.
 * MACs are locally administered (02:...).
 */
#define V4_CLIENTS 130816u

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void addr_client(uint8_t *a, int ipv, uint64_t i)
{
	memset(a, 0, 16);
	uint32_t ci = (uint32_t)(i % V4_CLIENTS), r = (uint32_t)(i / V4_CLIENTS);
	if (ipv == 4) {
		put_be32(a, (198u << 24 | 18u << 16) + ci);
		return;
	}
	put_be32(a, 0x20010db8u);
	put_be16(a + 4, 1);
	put_be16(a + 6, (uint16_t)r);
	put_be32(a + 12, ci + 1);
}

static void addr_server(uint8_t *a, int ipv, uint32_t s)
{
	memset(a, 0, 16);
	if (ipv == 4) {
		put_be32(a, (198u << 24 | 19u << 16 | 255u << 8) + (s & 0xff));
		return;
	}
	put_be32(a, 0x20010db8u);
	put_be16(a + 4, 0xff);
	put_be16(a + 14, (uint16_t)(s & 0xff) + 1);
}

static void mac_for(uint8_t mac[6], const uint8_t *addr)
{
	uint32_t h = 2166136261u; /* FNV-1a of the address: a stable, locally administered MAC */
	for (int i = 0; i < 16; i++)
		h = (h ^ addr[i]) * 16777619u;
	mac[0] = 0x02;
	mac[1] = 0x5e;
	put_be32(mac + 2, h);
}

/* Fill key addresses and ports for connection index i (TCP/UDP: client port by round). */
static void conn_addresses(struct secho_gen *g, struct conn *c, int ipv, uint16_t dport)
{
	uint64_t i = g->host_idx++;
	uint32_t r = (uint32_t)(i / V4_CLIENTS);
	c->key.ip_version = (uint8_t)ipv;
	addr_client(c->key.src, ipv, i);
	if (c->kind == K_TCP || c->kind == K_UDP) {
		addr_server(c->key.dst, ipv, (uint32_t)rng_range(&g->rng, 0, 255));
		c->key.sport = (uint16_t)(1024 + r % 64512);
		c->key.dport = dport;
	} else {
		addr_server(c->key.dst, ipv, r);
	}
	mac_for(c->mac[0], c->key.src);
	mac_for(c->mac[1], c->key.dst);
}

/* ---- header sizes ---- */

static unsigned ip4_opt_len(const struct conn *c)
{
	return (c->feat & F_IP4MAX) ? 40 : (c->feat & F_IP4OPT) ? 4 : 0;
}

/* IPv6 extension headers before the fragment header / before L4. */
static unsigned ip6_ext_len(const struct conn *c)
{
	unsigned n = 0;
	if (c->feat & F_HBH)
		n += 8;
	if (c->feat & F_DST)
		n += 8;
	if (c->feat & F_RT)
		n += 24;
	if (c->feat & F_ATOMIC)
		n += 8;
	return n;
}

static unsigned ip_hdr_len(const struct conn *c)
{
	return c->key.ip_version == 4 ? 20 + ip4_opt_len(c) : 40 + ip6_ext_len(c);
}

static unsigned l4_hdr_len(const struct conn *c)
{
	switch (c->kind) {
	case K_TCP:
		return 20;
	case K_UDP:
		return 8;
	case K_ICMP:
		return (c->feat & F_EMBED) ? 8 + 28 : 8;
	default:
		switch (c->key.proto) {
		case 47: /* GRE: flags/version, protocol type */
			return 4;
		case 132: /* SCTP common header */
			return 12;
		case 50: /* ESP: SPI, sequence number */
			return 8;
		default:
			return 0;
		}
	}
}

static unsigned min_ip_len(const struct conn *c)
{
	return ip_hdr_len(c) + l4_hdr_len(c);
}

/* ---- frame building ---- */

/* What one packet of a connection is. */
struct pkt {
	const uint8_t *pay; /* application payload (--app), pay_len bytes after the L4 header */
	uint32_t pay_len;
	int dir;            /* 0 forward, 1 reverse */
	uint8_t flags;      /* TCP flags */
	uint32_t ip_len;    /* IP total length (IPv6: 40 + payload length) */
	bool frag;          /* a fragment (or atomic fragment) */
	uint32_t frag_off;  /* offset of this fragment's data in the fragmentable part */
	uint32_t frag_data; /* bytes of fragmentable part in this fragment */
	bool more;
	uint32_t l4_total; /* bytes of L4 header + payload of the whole datagram */
};

/* Ethernet header, with the connection's VLAN tags when tags (an encapsulated frame has
 * them outside only). */
static uint8_t *put_l2(const struct conn *c, int dir, uint8_t *p, uint16_t ethertype, bool tags)
{
	memcpy(p, c->mac[!dir], 6);
	memcpy(p + 6, c->mac[dir], 6);
	p += 12;
	if (!tags) {
	} else if (c->tags == TAG_1Q) {
		put_be16(p, 0x8100);
		put_be16(p + 2, c->tag_tci[0]);
		p += 4;
	} else if (c->tags == TAG_QINQ_AD || c->tags == TAG_QINQ_11) {
		put_be16(p, c->tags == TAG_QINQ_AD ? 0x88a8 : 0x8100);
		put_be16(p + 2, c->tag_tci[0]);
		put_be16(p + 4, 0x8100);
		put_be16(p + 6, c->tag_tci[1]);
		p += 8;
	}
	put_be16(p, ethertype);
	return p + 2;
}

/* One's-complement sum of an IPv4/IPv6 pseudo header (RFC 768, RFC 8200 section 8.1). */
static uint32_t pseudo_sum(const uint8_t *src, const uint8_t *dst, int ipv, uint8_t proto,
                           uint32_t len)
{
	uint8_t ph[40];
	size_t n;
	if (ipv == 4) {
		memcpy(ph, src, 4);
		memcpy(ph + 4, dst, 4);
		ph[8] = 0;
		ph[9] = proto;
		put_be16(ph + 10, (uint16_t)len);
		n = 12;
	} else {
		memcpy(ph, src, 16);
		memcpy(ph + 16, dst, 16);
		put_be32(ph + 32, len);
		ph[36] = ph[37] = ph[38] = 0;
		ph[39] = proto;
		n = 40;
	}
	return secho_csum_add(0, ph, n);
}

/*
 * Write the L4 header of a whole datagram at p (payload zero, l4_total bytes in all) with
 * its checksum, for direction dir. Returns the header length.
 */
static unsigned put_l4(struct conn *c, const struct pkt *k, uint8_t *p)
{
	const uint8_t *src = k->dir ? c->key.dst : c->key.src;
	const uint8_t *dst = k->dir ? c->key.src : c->key.dst;
	uint16_t sport = k->dir ? c->key.dport : c->key.sport;
	uint16_t dport = k->dir ? c->key.sport : c->key.dport;
	int ipv = c->key.ip_version;
	unsigned h = l4_hdr_len(c);
	memset(p, 0, h);
	switch (c->kind) {
	case K_TCP: {
		put_be16(p, sport);
		put_be16(p + 2, dport);
		put_be32(p + 4, c->seq[k->dir]);
		put_be32(p + 8, (k->flags & TCP_ACK) ? c->seq[!k->dir] : 0);
		p[12] = 5 << 4;
		p[13] = k->flags;
		put_be16(p + 14, 65535);
		uint32_t s = pseudo_sum(src, dst, ipv, 6, k->l4_total);
		put_be16(p + 16, secho_csum_fold(secho_csum_add(s, p, 20 + k->pay_len)));
		uint32_t adv = k->l4_total - 20 + ((k->flags & (TCP_SYN | TCP_FIN)) ? 1 : 0);
		c->seq[k->dir] += adv;
		break;
	}
	case K_UDP: {
		put_be16(p, sport);
		put_be16(p + 2, dport);
		put_be16(p + 4, (uint16_t)k->l4_total);
		uint32_t s = pseudo_sum(src, dst, ipv, 17, k->l4_total);
		uint16_t cs = secho_csum_fold(secho_csum_add(s, p, 8 + k->pay_len));
		put_be16(p + 6, cs ? cs : 0xffff);
		break;
	}
	case K_ICMP: {
		uint16_t tc = k->dir ? c->icmp_rev : c->key.icmp_type_code;
		put_be16(p, tc);
		if ((tc >> 8) == 135 && ipv == 6) {
			/* Neighbor Solicitation: reserved word, then the target address. */
		} else {
			put_be16(p + 4, (uint16_t)c->id); /* echo identifier */
			put_be16(p + 6, c->ipid[k->dir]); /* echo sequence */
		}
		if (c->feat & F_EMBED) {
			/* The offending datagram's IPv4 + UDP header, as an ICMP error carries it.
			 */
			uint8_t *e = p + 8;
			e[0] = 0x45;
			put_be16(e + 2, 28 + 100);
			e[8] = 64;
			e[9] = 17;
			memcpy(e + 12, dst, 4);
			put_be32(e + 16, 0xcb007101u); /* 203.0.113.1 */
			put_be16(e + 20, 40000);
			put_be16(e + 22, 33434);
			put_be16(e + 24, 108);
			put_be16(e + 10, secho_ip4_csum(e));
		}
		uint32_t s = ipv == 6 ? pseudo_sum(src, dst, 6, 58, k->l4_total) : 0;
		put_be16(p + 2, secho_csum_fold(secho_csum_add(s, p, h)));
		break;
	}
	default:
		if (c->key.proto == 47) {
			put_be16(p + 2, 0x6558); /* transparent Ethernet bridging */
		} else if (c->key.proto == 132) {
			put_be16(p, 5000 + (uint16_t)k->dir);
			put_be16(p + 2, 5001 - (uint16_t)k->dir);
			put_be32(p + 4, 0x5c7f0001u);
		} else if (c->key.proto == 50) {
			put_be32(p, 0x1000u + (uint32_t)k->dir);
			put_be32(p + 4, c->seq[k->dir]++);
		}
		break;
	}
	return h;
}

static uint32_t wrap(struct secho_gen *g, struct conn *c, int dir, uint8_t *in, uint32_t l2,
                     uint32_t ip_len);

/* Build the frame of packet k into g->frame (g->out: where it starts); returns the frame
 * length on the wire. */
static uint32_t build(struct secho_gen *g, struct conn *c, const struct pkt *k)
{
	bool enc = c->enc != E_NONE;
	uint8_t *f = g->frame + (enc ? ENC_ROOM : 0), *p;
	const uint8_t *src = k->dir ? c->key.dst : c->key.src;
	const uint8_t *dst = k->dir ? c->key.src : c->key.dst;
	int ipv = c->key.ip_version;
	uint8_t proto = c->key.proto;

	p = put_l2(c, k->dir, f, ipv == 4 ? 0x0800 : 0x86dd, !enc);
	uint8_t *ip = p;
	uint32_t l2 = (uint32_t)(ip - f);
	memset(ip, 0, k->ip_len);
	if (ipv == 4) {
		unsigned ol = ip4_opt_len(c);
		ip[0] = (uint8_t)(0x40 | (5 + ol / 4));
		put_be16(ip + 2, (uint16_t)k->ip_len);
		put_be16(ip + 4, k->frag ? (uint16_t)c->fr_id : c->ipid[k->dir]);
		uint16_t fr = 0;
		if (k->frag)
			fr = (uint16_t)((k->more ? SECHO_IP4_MF : 0) | (k->frag_off / 8));
		put_be16(ip + 6, fr);
		ip[8] = 64;
		ip[9] = proto;
		memcpy(ip + 12, src, 4);
		memcpy(ip + 16, dst, 4);
		if (ol == 4) {
			ip[20] = 0x94; /* Router Alert (RFC 2113) */
			ip[21] = 4;
		} else if (ol == 40) {
			ip[20] = 7; /* Record Route, 9 slots, then End of Options */
			ip[21] = 39;
			ip[22] = 4;
		}
		put_be16(ip + 10, secho_csum_fold(secho_csum_add(0, ip, 20 + ol)));
		p = ip + 20 + ol;
	} else {
		ip[0] = 0x60;
		put_be16(ip + 4, (uint16_t)(k->ip_len - 40));
		ip[7] = 64;
		memcpy(ip + 8, src, 16);
		memcpy(ip + 24, dst, 16);
		/* Chain: hop-by-hop, destination options, routing, fragment, L4. */
		uint8_t *nh = ip + 6;
		p = ip + 40;
		if (c->feat & F_HBH) {
			*nh = 0;
			nh = p;
			p[2] = 1; /* PadN, 4 bytes of padding */
			p[3] = 4;
			p += 8;
		}
		if (c->feat & F_DST) {
			*nh = 60;
			nh = p;
			p[2] = 1;
			p[3] = 4;
			p += 8;
		}
		if (c->feat & F_RT) {
			*nh = 43;
			nh = p;
			p[1] = 2; /* (2 + 1) * 8 = 24 bytes */
			p[2] = 4; /* segment routing header (RFC 8754) */
			p[3] = 0; /* segments left: this node is the last */
			p[4] = 0; /* last entry */
			memcpy(p + 8, dst, 16);
			p += 24;
		}
		if (k->frag || (c->feat & F_ATOMIC)) {
			*nh = 44;
			nh = p;
			uint16_t off = (uint16_t)((k->frag ? k->frag_off / 8 : 0) << 3);
			put_be16(p + 2, (uint16_t)(off | (k->more ? 1 : 0)));
			put_be32(p + 4, k->frag ? c->fr_id : c->ipid[k->dir]);
			p += 8;
		}
		*nh = proto;
	}
	if (k->pay_len)
		memcpy(p + l4_hdr_len(c), k->pay, k->pay_len); /* before its checksum */
	if (!k->frag || k->frag_off == 0)
		put_l4(c, k, p);
	uint32_t len = l2 + k->ip_len;
	g->out = f;
	g->outer_len = g->enc_over = 0;
	if (enc)
		len = wrap(g, c, k->dir, f, l2, k->ip_len);
	if (len < 60) {
		memset((uint8_t *)g->out + len, 0,
		       60 - len); /* Ethernet padding: behind the IP packet */
		len = 60;
	}
	return len;
}

/* ---- encapsulations (--encap, the encap profile) ---- */

struct encap_info {
	const char *name;
	uint8_t tun;    /* SECHO_TUN_* the meter keys it by (0: MPLS, PPPoE) */
	uint8_t eth_in; /* carries an Ethernet frame (else the IP packet) */
	uint8_t id_ok;  /* takes an ID */
	uint32_t def_id, min_id, max_id;
};

/* Indexed by E_*. */
static const struct encap_info encaps[E_COUNT] = {
        [E_NONE] = {"none", 0, 0, 0, 0, 0, 0},
        [E_MPLS] = {"mpls", 0, 0, 1, 16, 16, 0xffffe},
        [E_MPLS2] = {"mpls2", 0, 0, 1, 16, 16, 0xffffe},
        [E_PPPOE] = {"pppoe", 0, 0, 1, 1, 1, 0xfffe},
        [E_GRE] = {"gre", SECHO_TUN_GRE, 0, 1, 0, 0, UINT32_MAX},
        [E_ERSPAN] = {"erspan", SECHO_TUN_ERSPAN, 1, 1, 1, 0, 1023},
        [E_VXLAN] = {"vxlan", SECHO_TUN_VXLAN, 1, 1, 100, 0, 0xffffff},
        [E_GENEVE] = {"geneve", SECHO_TUN_GENEVE, 1, 1, 100, 0, 0xffffff},
        [E_GTPU] = {"gtpu", SECHO_TUN_GTPU, 0, 1, 1, 0, UINT32_MAX},
        [E_IPIP] = {"ipip", SECHO_TUN_IPIP, 0, 0, 0, 0, 0},
        [E_IPIP4] = {"ipip4", SECHO_TUN_IPIP, 0, 0, 0, 0, 0},
        [E_IPIP6] = {"ipip6", SECHO_TUN_IPIP, 0, 0, 0, 0, 0},
        [E_EOMPLS] = {"eompls", SECHO_TUN_EOMPLS, 1, 1, 16, 16, 0xfffff},
};

/* Parse KIND[:ID] into *kind, *id (the default without one), *has_id. */
static int encap_parse(const char *spec, uint8_t *kind, uint32_t *id, uint8_t *has_id, char *err,
                       size_t errlen)
{
	const char *colon = strchr(spec, ':');
	size_t nl = colon ? (size_t)(colon - spec) : strlen(spec);
	for (unsigned e = 1; e < E_COUNT; e++) {
		const struct encap_info *ei = &encaps[e];
		if (strlen(ei->name) != nl || strncmp(spec, ei->name, nl) != 0)
			continue;
		*kind = (uint8_t)e;
		*id = ei->def_id;
		*has_id = 0;
		if (!colon)
			return 0;
		char *end = NULL;
		errno = 0;
		unsigned long long v = strtoull(colon + 1, &end, 0);
		if (!ei->id_ok || !colon[1] || *end || errno || colon[1] == '-' || v < ei->min_id ||
		    v > ei->max_id) {
			if (ei->id_ok)
				snprintf(err, errlen,
				         "--encap '%s': the %s ID is %" PRIu32 "..%" PRIu32, spec,
				         ei->name, ei->min_id, ei->max_id);
			else
				snprintf(err, errlen, "--encap '%s': %s takes no ID", spec,
				         ei->name);
			return -EINVAL;
		}
		*id = (uint32_t)v;
		*has_id = 1;
		return 0;
	}
	snprintf(err, errlen,
	         "--encap '%s': unknown (mpls, mpls2, pppoe, gre, erspan, vxlan, geneve, gtpu, "
	         "ipip, ipip4, ipip6, eompls)",
	         spec);
	return -EINVAL;
}

int secho_gen_encap_check(const char *spec, char *err, size_t errlen)
{
	uint8_t k, h;
	uint32_t id;
	return encap_parse(spec, &k, &id, &h, err, errlen);
}

/* The connection's encapsulation, and the tunnel fields of its key (what the meter's key
 * holds: dissect.h's tun_type and tun_id; a GRE key only when present). */
static void conn_encap(struct conn *c, uint8_t kind, uint32_t id, uint8_t has_id)
{
	c->enc = kind;
	c->enc_id = id;
	c->enc_has_id = has_id;
	c->key.tun_type = encaps[kind].tun;
	c->key.tun_id = 0;
	if (kind == E_ERSPAN || kind == E_VXLAN || kind == E_GENEVE || kind == E_GTPU ||
	    (kind == E_GRE && has_id))
		c->key.tun_id = id;
}

/* Tunnel endpoints: 198.19.254.254 (client side) and 198.19.255.254, 2001:db8:fe::1 and
 * ::2. */
static void enc_addr(uint8_t *a, int ov, int side)
{
	memset(a, 0, 16);
	if (ov == 4) {
		put_be32(a, side ? 0xc613fffeu : 0xc613fefeu);
		return;
	}
	put_be32(a, 0x20010db8u);
	put_be16(a + 4, 0xfe);
	a[15] = (uint8_t)(1 + side);
}

/*
 * Wrap the frame at in (l2 bytes of Ethernet, then the IP packet of ip_len bytes) in c's
 * encapsulation for direction dir: the outer headers are written in front of it (in the
 * ENC_ROOM bytes before in), the inner Ethernet header dropped for the tunnels that carry
 * IP. Sets g->out, g->outer_len and g->enc_over; returns the frame's length.
 */
static uint32_t wrap(struct secho_gen *g, struct conn *c, int dir, uint8_t *in, uint32_t l2,
                     uint32_t ip_len)
{
	const struct encap_info *ei = &encaps[c->enc];
	const uint8_t *pl = ei->eth_in ? in : in + l2;
	uint32_t plen = ei->eth_in ? l2 + ip_len : ip_len;
	int iv = c->key.ip_version;
	int ov = c->enc == E_IPIP4 ? 4 : c->enc == E_IPIP6 ? 6 : iv;
	uint8_t th[32] = {0}, proto = 0;
	unsigned tl = 0;
	uint16_t etype = ov == 4 ? 0x0800 : 0x86dd;
	bool ip_outer = true;
	uint32_t id = c->enc_id;

	switch (c->enc) {
	case E_MPLS:
	case E_MPLS2:
	case E_EOMPLS: {
		/* RFC 3032: label 20 | TC 3 | S 1 | TTL 8; RFC 4448: a control word of zeros */
		unsigned nl = c->enc == E_MPLS2 ? 2 : 1;
		for (unsigned i = 0; i < nl; i++)
			put_be32(th + 4 * i, (id + i) << 12 | (i + 1 == nl ? 0x100u : 0) | 64u);
		tl = 4 * nl + (c->enc == E_EOMPLS ? 4 : 0);
		etype = 0x8847;
		ip_outer = false;
		break;
	}
	case E_PPPOE:
		/* RFC 2516 section 4: ver 1 | type 1, code 0 (session data), session ID, length
		 * (the PPP protocol and the packet); RFC 1332 / 5072: PPP protocol */
		th[0] = 0x11;
		put_be16(th + 2, (uint16_t)id);
		put_be16(th + 4, (uint16_t)(plen + 2));
		put_be16(th + 6, iv == 4 ? 0x0021 : 0x0057);
		tl = 8;
		etype = 0x8864;
		ip_outer = false;
		break;
	case E_GRE:
		/* RFC 2784/2890: K flag and the key when an ID was given */
		proto = 47;
		put_be16(th, c->enc_has_id ? 0x2000 : 0);
		put_be16(th + 2, iv == 4 ? 0x0800 : 0x86dd);
		tl = 4;
		if (c->enc_has_id) {
			put_be32(th + 4, id);
			tl = 8;
		}
		break;
	case E_ERSPAN:
		/* GRE with a sequence number, protocol 0x88BE; ERSPAN type II: version 1,
		 * VLAN 0, COS 0, En 0 (untagged), T 0, session ID, reserved, index 0 */
		proto = 47;
		put_be16(th, 0x1000);
		put_be16(th + 2, 0x88be);
		put_be32(th + 4, c->enc_ipid[dir]);
		th[8] = 0x10;
		put_be16(th + 10, (uint16_t)(id & 0x3ff));
		tl = 16;
		break;
	case E_VXLAN:
		/* UDP, then RFC 7348: flags (I), reserved, VNI, reserved */
		proto = 17;
		th[8] = 0x08;
		put_be32(th + 12, id << 8);
		tl = 16;
		break;
	case E_GENEVE:
		/* UDP, then RFC 8926: version 0, options 2 words, protocol 0x6558, VNI; one
		 * option of the experimental class 0xFF01, type 1, 4 bytes of data */
		proto = 17;
		th[8] = 0x02;
		put_be16(th + 10, 0x6558);
		put_be32(th + 12, id << 8);
		put_be16(th + 16, 0xff01);
		th[18] = 0x01;
		th[19] = 1;
		put_be32(th + 20, (uint32_t)c->id);
		tl = 24;
		break;
	case E_GTPU:
		/* UDP, then TS 29.281 5.1: version 1, PT 1, no optional fields; G-PDU (255);
		 * length (after the first 8 bytes); TEID */
		proto = 17;
		th[8] = 0x30;
		th[9] = 255;
		put_be16(th + 10, (uint16_t)plen);
		put_be32(th + 12, id);
		tl = 16;
		break;
	default: /* IP in IP */
		proto = iv == 4 ? 4 : 41;
		break;
	}
	unsigned ohl = ip_outer ? (ov == 4 ? 20u : 40u) : 0u;
	unsigned l2o = 14 + (c->tags == TAG_1Q ? 4 : c->tags ? 8 : 0);
	uint8_t *start = (uint8_t *)pl - tl - ohl - l2o, *ip = start + l2o;
	uint32_t olen = ohl + tl + plen;
	put_l2(c, dir, start, etype, true);
	memcpy(ip + ohl, th, tl);
	g->outer_len = 0;
	if (ip_outer) {
		uint8_t src[16], dst[16];
		enc_addr(src, ov, dir);
		enc_addr(dst, ov, !dir);
		memset(ip, 0, ohl);
		if (ov == 4) {
			ip[0] = 0x45;
			put_be16(ip + 2, (uint16_t)olen);
			put_be16(ip + 4, c->enc_ipid[dir]);
			ip[8] = 64;
			ip[9] = proto;
			memcpy(ip + 12, src, 4);
			memcpy(ip + 16, dst, 4);
			put_be16(ip + 10, secho_ip4_csum(ip));
		} else {
			ip[0] = 0x60;
			put_be16(ip + 4, (uint16_t)(olen - 40));
			ip[6] = proto;
			ip[7] = 64;
			memcpy(ip + 8, src, 16);
			memcpy(ip + 24, dst, 16);
		}
		if (proto == 17) {
			/* UDP: a source port per connection (a tunnel endpoint's flow entropy),
			 * the tunnel's port, the checksum over the whole datagram */
			uint8_t *u = ip + ohl;
			uint32_t ul = tl + plen;
			put_be16(u, c->enc == E_GTPU ? 2152 : (uint16_t)(49152 + c->id % 16384));
			put_be16(u + 2, c->enc == E_VXLAN    ? 4789
			                : c->enc == E_GENEVE ? 6081
			                                     : 2152);
			put_be16(u + 4, (uint16_t)ul);
			uint16_t cs = secho_csum_fold(
			        secho_csum_add(pseudo_sum(src, dst, ov, 17, ul), u, ul));
			put_be16(u + 6, cs ? cs : 0xffff);
		}
		g->outer_len = olen;
	}
	c->enc_ipid[dir]++;
	g->out = start;
	uint32_t len = (uint32_t)(pl + plen - start);
	g->enc_over = len - (l2 + ip_len);
	return len;
}

/* ---- sizes ---- */

static uint32_t draw_size(struct secho_gen *g, const struct profile *pf)
{
	double tot = 0, x;
	for (size_t i = 0; i < pf->nsizes; i++)
		tot += pf->sizes[i].w;
	x = rng_unit(&g->rng) * tot;
	for (size_t i = 0; i < pf->nsizes; i++) {
		if (x < pf->sizes[i].w || i + 1 == pf->nsizes)
			return (uint32_t)rng_range(&g->rng, pf->sizes[i].lo, pf->sizes[i].hi);
		x -= pf->sizes[i].w;
	}
	return pf->sizes[0].lo;
}

/* IP length (or, for fragmented datagrams, L4 length) of the next packet in dir. */
static uint32_t next_size(struct secho_gen *g, struct conn *c, int dir, bool control)
{
	uint32_t lo = min_ip_len(c), hi = c->max_ip, s;
	if (c->feat & F_FRAG)
		return (uint32_t)rng_range(&g->rng, c->size_lo, c->size_hi);
	if (c->csv) {
		/* Spread the row's bytes over its packets: about the mean, with the rest kept
		 * feasible (every later packet between the minimum and the maximum). */
		uint64_t left = c->total[dir] - c->sent[dir]; /* this one included */
		uint64_t b = c->bytes_left[dir];
		uint64_t rest_min = (left - 1) * lo, rest_max = (left - 1) * hi;
		uint64_t mn = b > rest_max ? b - rest_max : 0, mx = b > rest_min ? b - rest_min : 0;
		if (mn < lo)
			mn = lo;
		if (mx > hi)
			mx = hi;
		if (mn > mx) /* infeasible row: counted once when the connection was made */
			return b / left < lo ? lo : hi;
		uint64_t mean = b / left, j = mean / 4;
		uint64_t a = mean > j ? mean - j : 0, z = mean + j;
		if (a < mn)
			a = mn;
		if (z > mx)
			z = mx;
		if (a > z)
			a = z = (mean < mn ? mn : mx);
		return (uint32_t)(left == 1 ? (b < mn   ? mn
		                               : b > mx ? mx
		                                        : b)
		                            : rng_range(&g->rng, a, z));
	}
	if (control || (!c->size_lo && !c->prof))
		return lo;
	if (c->size_lo)
		s = (uint32_t)rng_range(&g->rng, c->size_lo, c->size_hi);
	else
		s = draw_size(g, c->prof);
	return s < lo ? lo : s > hi ? hi : s;
}

/* ---- scheduling ---- */

static uint64_t planned_time(struct secho_gen *g, const struct conn *c)
{
	if (c->n <= 1 || c->k == 0)
		return c->start_us;
	if (c->k >= c->n - 1)
		return c->start_us + c->span_us;
	double slot = (double)c->span_us / (double)(c->n - 1);
	double t = (double)c->k * slot + (rng_unit(&g->rng) - 0.5) * 0.6 * slot;
	return c->start_us + (uint64_t)(t < 0 ? 0 : t);
}

/*
 * Set the span for n packets over the wanted span, within gen.h's contract. Directions
 * interleave in proportion to their packet counts (conn_next_pkt), so a direction of m
 * packets sends about every span/m: a two-way connection spans at most 8 s per packet of
 * its sparser direction, a one-way one 11 s per packet (with the jitter of 0.3 slot, no
 * key then waits more than about 18 s), and none more than 240 s.
 * Returns true when the span had to be shortened.
 */
#define SPAN_MAX_US      240000000ull
#define SLOT_MAX_US      11000000ull
#define SLOT_MAX_2WAY_US 8000000ull
static bool conn_plan_time(struct conn *c, uint64_t start_us, uint64_t span_us)
{
	bool adj = false;
	c->n = c->total[0] + c->total[1];
	c->k = 0;
	c->start_us = start_us;
	if (c->n <= 1) {
		c->span_us = 0;
		return span_us != 0;
	}
	uint64_t cap = SLOT_MAX_US * (c->n - 1);
	uint64_t m = c->total[0] < c->total[1] ? c->total[0] : c->total[1];
	if (m >= 2 && SLOT_MAX_2WAY_US * (m - 1) < cap)
		cap = SLOT_MAX_2WAY_US * (m - 1);
	if (m == 1 && c->n > 2 && SLOT_MAX_2WAY_US * (c->n - 1) / 2 < cap)
		cap = SLOT_MAX_2WAY_US * (c->n - 1) / 2; /* the lone packet's key has no gap */
	if (cap > SPAN_MAX_US)
		cap = SPAN_MAX_US;
	if (span_us > cap) {
		span_us = cap;
		adj = true;
	}
	if (span_us < c->n - 1)
		span_us = c->n - 1;
	c->span_us = span_us;
	return adj;
}

/* Reserve the closing packets (TCP FIN/RST) of each direction. */
static void conn_reserve(struct conn *c)
{
	c->ctl_left[0] = c->ctl_left[1] = 0;
	c->phase = 0;
	c->sent[0] = c->sent[1] = 0;
	if (c->kind != K_TCP)
		return;
	if ((c->end == END_FIN || c->end == END_RST_F) && c->total[0] >= 2)
		c->ctl_left[0] = 1;
	if ((c->end == END_FIN || c->end == END_RST_R) && c->total[1] >= 2)
		c->ctl_left[1] = 1;
}

/* ---- application payloads (--app) ---- */

/*
 * Give c its application: TCP draws TLS (port 443) or HTTP (80), UDP QUIC (443) or DNS (53),
 * among those asked for; the server port becomes the application's. same: the previous
 * case whose key c shares (conformance): its application, so its port. Fragmented and
 * snap-truncated connections, and the rest, carry none; a UDP one on port 53 moves to
 * port 9 (discard), where no meter reads its zero bytes as DNS. A client port of 53, 80 or
 * 443 (FlowTest rows) moves to 49152 + port.
 */
static void app_assign(struct secho_gen *g, struct conn *c, const struct conn *same)
{
	if (!g->apps || (c->kind != K_TCP && c->kind != K_UDP))
		return;
	uint64_t seed = rng_u64(&g->app_rng);
	unsigned cand[2], n = 0;
	static const uint16_t port[SECHO_GEN_APP_COUNT] = {0, 443, 443, 53, 80};
	unsigned first = c->kind == K_TCP ? SECHO_GEN_APP_TLS : SECHO_GEN_APP_QUIC;
	unsigned second = c->kind == K_TCP ? SECHO_GEN_APP_HTTP : SECHO_GEN_APP_DNS;
	if (g->apps & (1u << first))
		cand[n++] = first;
	if (g->apps & (1u << second))
		cand[n++] = second;
	unsigned app = n ? cand[rng_range(&g->app_rng, 0, n - 1)] : SECHO_GEN_APP_NONE;
	if (same)
		app = same->app.app;
	else if (app)
		c->key.dport = port[app];
	if (c->feat & (F_FRAG | F_SNAP))
		app = SECHO_GEN_APP_NONE;
	if (!same) {
		/* a client port of a FlowTest row that is an application's port (53, 80, 443)
		 * would make the other end look like the client: moved to 49152 + port */
		uint16_t sp = c->key.sport;
		if (sp == 53 || sp == 80 || sp == 443)
			c->key.sport = (uint16_t)(49152 + sp);
		if (!app && c->kind == K_UDP && c->key.dport == 53)
			c->key.dport = 9;
	}
	secho_gen_app_draw(&c->app, app, seed);
}

/*
 * The packet of sz bytes (IP) in dir is c's first data packet that way (every one, DNS):
 * put the application's message in it, grown to the message when that is longer (within
 * the connection's largest IP packet); a later one gets the application's filler, if it
 * has one (QUIC: short-header packets). Returns the packet's IP length.
 */
static uint32_t app_payload(struct secho_gen *g, struct conn *c, int dir, uint32_t sz,
                            struct pkt *k)
{
	uint32_t hdr = ip_hdr_len(c) + l4_hdr_len(c);
	uint32_t room = c->max_ip > hdr ? c->max_ip - hdr : 0;
	uint32_t want = sz > hdr ? sz - hdr : 0;
	size_t cap = room < sizeof(g->app_buf) ? room : sizeof(g->app_buf), n;
	if (want > room)
		want = room;
	if (c->app_len[dir] && c->app.app != SECHO_GEN_APP_DNS) {
		n = secho_gen_app_filler(&c->app, dir, c->sent[dir], want, g->app_buf, cap);
		if (!n)
			return sz;
		k->pay = g->app_buf;
		k->pay_len = (uint32_t)n;
		return hdr + (uint32_t)n;
	}
	n = secho_gen_app_msg(&c->app, dir, want, g->app_buf, cap);
	if (!n)
		return sz; /* no room: the direction keeps its filler */
	k->pay = g->app_buf;
	k->pay_len = (uint32_t)n;
	if (!c->app_len[dir])
		c->app_len[dir] = (uint16_t)n;
	return hdr + (uint32_t)n;
}

/* Decide the next packet of c (direction, flags, size) and account it. */
static void conn_next_pkt(struct secho_gen *g, struct conn *c, struct pkt *k)
{
	memset(k, 0, sizeof(*k));
	if (c->fr_len) {
		k->dir = c->fr_dir;
		k->flags = c->fr_flags;
		goto fragment;
	}
	int dir;
	bool control = false;
	uint8_t flags = 0;
	uint64_t data_left[2];
	for (int d = 0; d < 2; d++) {
		uint64_t reserved =
		        c->ctl_left[d] +
		        ((c->kind == K_TCP && c->sent[d] == 0 && c->total[d] > 0) ? 1 : 0);
		uint64_t left = c->total[d] - c->sent[d];
		data_left[d] = left > reserved ? left - reserved : 0;
	}
	if (c->kind == K_TCP && c->sent[0] == 0) {
		dir = 0;
		flags = TCP_SYN | ((c->feat & F_ECN) ? TCP_ECE | TCP_CWR : 0);
		control = true;
	} else if (c->kind == K_TCP && c->sent[1] == 0 && c->total[1] > 0) {
		dir = 1;
		control = true;
		if (c->total[1] == 1 && c->end == END_RST_R)
			flags = TCP_RST | TCP_ACK; /* connection refused */
		else
			flags = TCP_SYN | TCP_ACK | ((c->feat & F_ECN) ? TCP_ECE : 0);
	} else if (data_left[0] + data_left[1] > 0) {
		if (c->sent[0] == 0 || !data_left[1]) {
			dir = data_left[0] ? 0
			                   : 1; /* the forward direction is the first packet's */
		} else if (!data_left[0]) {
			dir = 1;
		} else {
			/* In proportion: the direction further behind its share goes next (a little
			 * jitter), so both keys' packets spread over the whole span. */
			double j0 = (rng_unit(&g->rng) - 0.5) * 0.6,
			       j1 = (rng_unit(&g->rng) - 0.5) * 0.6;
			double p0 = ((double)c->sent[0] + 0.5 + j0) / (double)c->total[0];
			double p1 = ((double)c->sent[1] + 0.5 + j1) / (double)c->total[1];
			dir = p1 < p0;
		}
		if (c->kind == K_TCP) {
			flags = TCP_ACK;
			if ((c->feat & F_ECN) && c->sent[dir] == 1)
				flags |= TCP_URG | TCP_PSH;
		}
	} else {
		dir = c->ctl_left[0] ? 0 : 1;
		c->ctl_left[dir] = 0;
		control = true;
		bool rst = (dir == 0 && c->end == END_RST_F) || (dir == 1 && c->end == END_RST_R);
		flags = (uint8_t)((rst ? TCP_RST : TCP_FIN) | TCP_ACK);
	}
	k->dir = dir;
	k->flags = flags;
	uint32_t sz = next_size(g, c, dir, control);
	/* a control packet has no payload, but for a FlowTest row's (c->csv) sizes: a SYN
	 * then carries data as with TCP Fast Open, and the message goes there */
	if (c->app.app && !(c->feat & F_FRAG) && (!control || sz > min_ip_len(c)))
		sz = app_payload(g, c, dir, sz, k);
	c->sent[dir]++;
	if (!(c->feat & F_FRAG)) {
		k->ip_len = sz;
		k->l4_total = sz - ip_hdr_len(c);
		if (c->csv)
			c->bytes_left[dir] = c->bytes_left[dir] > sz ? c->bytes_left[dir] - sz : 0;
		if (c->feat & F_ATOMIC)
			k->frag = false;
		return;
	}
	/* A datagram of sz bytes (L4 header + payload) sent as fragments. */
	c->fr_len = sz;
	c->fr_off = 0;
	c->fr_dir = (uint8_t)dir;
	c->fr_flags = flags;
	c->fr_id = (uint32_t)(c->id << 8) + c->ipid[dir];
fragment:;
	/* Fragment data: multiples of 8 bytes, 1500-byte packets (IPv6: 40 + 8 + data). */
	unsigned hdr = ip_hdr_len(c) + (c->key.ip_version == 6 ? 8 : 0);
	uint32_t room = ((1500 - hdr) / 8) * 8, left = c->fr_len - c->fr_off;
	uint32_t data = left > room ? room : left;
	k->frag = true;
	k->frag_off = c->fr_off;
	k->frag_data = data;
	k->more = c->fr_off + data < c->fr_len;
	k->ip_len = hdr + data;
	k->l4_total = c->fr_len;
	c->fr_off += data;
	g->tot.fragments++;
	if (!k->more)
		c->fr_len = 0;
}

/* ---- reporting ---- */

static void report_dir(struct secho_gen *g, const struct conn *c, int dir)
{
	const struct secho_flow_dir *d = &c->d[dir];
	if (!d->packets)
		return;
	struct secho_gen_flow fl = {.key = c->key, .dir = *d, .bytes_outer = c->bytes_outer[dir]};
	if (dir) {
		memcpy(fl.key.src, c->key.dst, 16);
		memcpy(fl.key.dst, c->key.src, 16);
		fl.key.sport = c->key.dport;
		fl.key.dport = c->key.sport;
		fl.key.icmp_type_code = c->icmp_rev;
	}
	if (g->apps) {
		fl.app = c->app.app;
		fl.app_json = g->app_json;
		if (secho_gen_app_truth(&c->app, c->app_len, c->key.sport, c->key.dport, dir,
		                        g->app_json, sizeof(g->app_json)))
			snprintf(g->app_json, sizeof(g->app_json), "{\"uni\":{}}");
	}
	g->tot.flows++;
	g->tot.flow_packets += d->packets;
	g->tot.flow_octets += d->octets;
	if (g->on_flow)
		g->on_flow(g->ctx, &fl);
}

/* ---- connection makers ---- */

static uint16_t service_port(struct secho_gen *g, int kind)
{
	static const uint16_t tcp[] = {443, 443, 443, 80, 22, 993, 8080, 25};
	static const uint16_t udp[] = {53, 443, 123, 4789, 5060, 514};
	if (kind == K_TCP)
		return tcp[rng_range(&g->rng, 0, NB(tcp) - 1)];
	return udp[rng_range(&g->rng, 0, NB(udp) - 1)];
}

/* A statistical profile's next connection, starting at start_us with n packets. */
static struct conn *make_stat_conn(struct secho_gen *g, uint64_t start_us, uint64_t n)
{
	const struct profile *pf = g->prof;
	struct conn *c = conn_alloc(g);
	if (!c)
		return NULL;
	c->prof = pf;
	c->max_ip = pf->max_ip;
	double u = rng_unit(&g->rng);
	int ipv = rng_unit(&g->rng) < pf->v6 ? 6 : 4;
	if (u < pf->icmp) {
		c->kind = K_ICMP;
		c->key.proto = ipv == 4 ? 1 : 58;
		c->key.icmp_type_code = ipv == 4 ? 8 << 8 : 128 << 8;
		c->icmp_rev = ipv == 4 ? 0 : 129 << 8;
	} else if (u < pf->icmp + pf->udp) {
		c->kind = K_UDP;
		c->key.proto = 17;
	} else {
		c->kind = K_TCP;
		c->key.proto = 6;
		double e = rng_unit(&g->rng);
		c->end = e < 0.85   ? END_FIN
		         : e < 0.92 ? END_RST_R
		         : e < 0.97 ? END_RST_F
		                    : END_NONE;
	}
	conn_addresses(g, c, ipv, service_port(g, c->kind));
	/* Directions: TCP and echo both ways (forward a bit more often for one-packet ends);
	 * UDP one-way a third of the time. */
	bool oneway = c->kind == K_UDP && rng_unit(&g->rng) < 0.33;
	if (n == 1 || oneway) {
		c->total[0] = n;
	} else {
		c->total[0] = (n + 1) / 2;
		uint64_t j = n / 8;
		c->total[0] =
		        rng_range(&g->rng, c->total[0] > j ? c->total[0] - j : 1, c->total[0] + j);
		if (c->total[0] >= n)
			c->total[0] = n - 1;
		if (c->total[0] == 0)
			c->total[0] = 1;
		c->total[1] = n - c->total[0];
	}
	double lg =
	        log(pf->gap_lo_us) + rng_unit(&g->rng) * (log(pf->gap_hi_us) - log(pf->gap_lo_us));
	double span = exp(lg) * (double)(n > 1 ? n - 1 : 0);
	conn_reserve(c);
	conn_plan_time(c, start_us, (uint64_t)span);
	c->ipid[0] = (uint16_t)rng_u64(&g->rng);
	c->ipid[1] = (uint16_t)rng_u64(&g->rng);
	c->seq[0] = (uint32_t)rng_u64(&g->rng);
	c->seq[1] = (uint32_t)rng_u64(&g->rng);
	app_assign(g, c, NULL);
	c->next_us = c->start_us;
	return c;
}

static uint64_t pareto(struct secho_gen *g, double alpha, double xm, uint64_t max)
{
	double u = 1.0 - rng_unit(&g->rng); /* (0, 1] */
	double x = xm / pow(u, 1.0 / alpha);
	uint64_t n = x >= (double)max ? max : (uint64_t)x;
	return n ? n : 1;
}

/* ---- registry ---- */

static void reg_key(const struct conn *c, uint8_t k[40])
{
	/* Canonical (direction-free) key: the smaller endpoint first. Protocols without
	 * ports clash on addresses alone. */
	const uint8_t *a = c->key.src, *b = c->key.dst;
	uint16_t pa = c->key.sport, pb = c->key.dport;
	if (memcmp(a, b, 16) > 0 || (memcmp(a, b, 16) == 0 && pa > pb)) {
		const uint8_t *t = a;
		a = b;
		b = t;
		uint16_t tp = pa;
		pa = pb;
		pb = tp;
	}
	memset(k, 0, 40);
	memcpy(k, a, 16);
	memcpy(k + 16, b, 16);
	put_be16(k + 32, pa);
	put_be16(k + 34, pb);
	k[36] = c->key.proto;
	k[37] = c->key.ip_version;
}

static size_t reg_hash(const uint8_t k[40])
{
	uint64_t h = 1469598103934665603ull;
	for (int i = 0; i < 40; i++)
		h = (h ^ k[i]) * 1099511628211ull;
	return (size_t)(h ^ (h >> 29));
}

/* Slot of key k, or of where it would go. */
static struct reg_ent *reg_find(struct registry *r, const uint8_t k[40])
{
	size_t m = r->cap - 1, i = reg_hash(k) & m;
	while (r->t[i].busy_until && memcmp(r->t[i].k, k, 40) != 0)
		i = (i + 1) & m;
	return &r->t[i];
}

static int reg_grow(struct registry *r, uint64_t now)
{
	size_t live = 0;
	for (size_t i = 0; i < r->cap; i++)
		live += r->t[i].busy_until > now;
	size_t cap = r->cap ? r->cap : 1024;
	while (live * 4 > cap)
		cap *= 2;
	struct reg_ent *old = r->t;
	size_t ocap = r->cap;
	r->t = calloc(cap, sizeof(*r->t));
	if (!r->t) {
		r->t = old;
		return -ENOMEM;
	}
	r->cap = cap;
	r->used = 0;
	for (size_t i = 0; i < ocap; i++) {
		if (old[i].busy_until > now) {
			*reg_find(r, old[i].k) = old[i];
			r->used++;
		}
	}
	free(old);
	return 0;
}

/* ---- CSV connections ---- */

#define REUSE_IDLE_US 45000000ull

static struct conn *make_csv_conn(struct secho_gen *g, const struct secho_gen_csv_row *row)
{
	struct conn *c = conn_alloc(g);
	if (!c)
		return NULL;
	c->csv = 1;
	int ipv = row->ip_version;
	c->key.proto = row->proto;
	c->kind = row->proto == 6                         ? K_TCP
	          : row->proto == 17                      ? K_UDP
	          : (row->proto == 1 || row->proto == 58) ? K_ICMP
	                                                  : K_OTHER;
	if (c->kind == K_ICMP) {
		c->key.icmp_type_code = ipv == 4 ? 8 << 8 : 128 << 8;
		c->icmp_rev = ipv == 4 ? 0 : 129 << 8;
	}
	conn_addresses(g, c, ipv, row->dport);
	if (c->kind == K_TCP || c->kind == K_UDP) {
		c->key.sport = row->sport;
		c->key.dport = row->dport;
		if (!row->has_src && !row->has_dst) {
			/* Generated addresses: the client port stays the row's, so the key is
			 * unique through the client address alone: use the round's address. */
		}
	}
	if (row->has_src)
		memcpy(c->key.src, row->src, 16);
	if (row->has_dst)
		memcpy(c->key.dst, row->dst, 16);
	mac_for(c->mac[0], c->key.src);
	mac_for(c->mac[1], c->key.dst);
	c->max_ip = 1500;
	c->total[0] = row->packets;
	c->total[1] = row->packets_rev;
	c->bytes_left[0] = row->bytes;
	c->bytes_left[1] = row->bytes_rev;
	uint64_t mx = 0;
	for (int d = 0; d < 2; d++)
		if (c->total[d] && c->bytes_left[d] / c->total[d] > mx)
			mx = c->bytes_left[d] / c->total[d];
	if (mx > 1500)
		c->max_ip = 9000;
	c->end = END_FIN;
	conn_reserve(c);
	uint32_t lo = min_ip_len(c);
	bool bad = false;
	for (int d = 0; d < 2; d++)
		if (c->bytes_left[d] < c->total[d] * lo ||
		    c->bytes_left[d] > c->total[d] * c->max_ip)
			bad = true;
	g->tot.csv_bytes_adjusted += bad;
	uint64_t span = (uint64_t)(row->end_us - row->start_us);
	g->tot.csv_time_adjusted += conn_plan_time(c, (uint64_t)row->start_us, span);
	c->ipid[0] = (uint16_t)rng_u64(&g->rng);
	c->ipid[1] = (uint16_t)rng_u64(&g->rng);
	c->seq[0] = (uint32_t)rng_u64(&g->rng);
	c->seq[1] = (uint32_t)rng_u64(&g->rng);
	app_assign(g, c, NULL);
	c->next_us = c->start_us;
	return c;
}

/*
 * Rows with addresses of their own may clash with a live key (or one that ended less than
 * 45 s ago): move to the next free source port (TCP, UDP), or start later (others).
 */
static int csv_claim(struct secho_gen *g, struct conn *c)
{
	uint8_t k[40];
	if (g->reg.used * 2 >= g->reg.cap) {
		int rc = reg_grow(&g->reg, c->start_us);
		if (rc)
			return rc;
	}
	bool moved = false;
	for (unsigned tries = 0;; tries++) {
		reg_key(c, k);
		struct reg_ent *e = reg_find(&g->reg, k);
		if (!e->busy_until || e->busy_until <= c->start_us) {
			if (!e->busy_until)
				g->reg.used++;
			memcpy(e->k, k, 40);
			e->busy_until = c->start_us + c->span_us + REUSE_IDLE_US + 1000000;
			break;
		}
		moved = true;
		if ((c->kind == K_TCP || c->kind == K_UDP) && tries < 1000) {
			c->key.sport = (uint16_t)(c->key.sport == 65535 ? 1024 : c->key.sport + 1);
		} else {
			c->start_us = e->busy_until;
			c->next_us = c->start_us;
		}
	}
	g->tot.csv_key_adjusted += moved;
	return 0;
}

/* ---- conformance ---- */

struct case_spec {
	uint16_t at_ms; /* start inside the round */
	uint8_t kind, ipv, proto, tags, end, reuse;
	uint16_t feat;
	uint16_t nf, nr;         /* packets (datagrams) per direction */
	uint16_t lo, hi;         /* data IP length (F_FRAG: datagram L4 length) */
	uint32_t gap_ms;         /* mean gap (slot) */
	uint16_t icmp_f, icmp_r; /* type << 8 | code */
	uint16_t vid, vid_inner;
	uint16_t rf, rr;  /* reuse: the second connection's packets */
	uint8_t same_key; /* reuse the previous case's addresses and ports */
	uint8_t raw, reason;
	uint8_t enc, enc_key; /* E_*; enc_id given (else the kind's default) */
	uint32_t enc_id;
};

#define IC(t, c) ((uint16_t)((t) << 8 | (c)))
#define MAL(r)   SECHO_GEN_MAL_##r

/* clang-format off */
static const struct case_spec conf_cases[] = {
	/* TCP: handshakes, FIN and RST ends, refused, a lone SYN, ECN and URG, port reuse */
	{.at_ms = 0,   .kind = K_TCP, .ipv = 4, .proto = 6, .nf = 10, .nr = 12, .lo = 40, .hi = 1500, .gap_ms = 2},
	{.at_ms = 3,   .kind = K_TCP, .ipv = 4, .proto = 6, .end = END_RST_R, .nf = 6, .nr = 5, .lo = 100, .hi = 600, .gap_ms = 3},
	{.at_ms = 5,   .kind = K_TCP, .ipv = 4, .proto = 6, .end = END_RST_F, .nf = 4, .nr = 4, .lo = 60, .hi = 300, .gap_ms = 1},
	{.at_ms = 7,   .kind = K_TCP, .ipv = 4, .proto = 6, .end = END_RST_R, .nf = 1, .nr = 1, .gap_ms = 1},
	{.at_ms = 9,   .kind = K_TCP, .ipv = 4, .proto = 6, .end = END_NONE, .nf = 1, .nr = 0},
	{.at_ms = 11,  .kind = K_TCP, .ipv = 6, .proto = 6, .nf = 8, .nr = 8, .lo = 60, .hi = 1500, .gap_ms = 2},
	{.at_ms = 13,  .kind = K_TCP, .ipv = 4, .proto = 6, .feat = F_ECN, .nf = 5, .nr = 5, .lo = 40, .hi = 900, .gap_ms = 2},
	{.at_ms = 15,  .kind = K_TCP, .ipv = 4, .proto = 6, .reuse = REUSE_SYN, .nf = 5, .nr = 5, .lo = 40, .hi = 500, .gap_ms = 2, .rf = 4, .rr = 4},
	{.at_ms = 17,  .kind = K_TCP, .ipv = 6, .proto = 6, .end = END_NONE, .nf = 3, .nr = 0, .lo = 60, .hi = 200, .gap_ms = 2},
	/* long flows: ~215 s (under the 300 s active timeout), gaps of several seconds (more
	 * than a live poll, less than the 30 s idle timeout); one-way, up to ~17 s gaps */
	{.at_ms = 19,  .kind = K_TCP, .ipv = 4, .proto = 6, .nf = 30, .nr = 28, .lo = 40, .hi = 200, .gap_ms = 3800},
	{.at_ms = 20,  .kind = K_UDP, .ipv = 4, .proto = 17, .nf = 20, .nr = 0, .lo = 60, .hi = 200, .gap_ms = 11000},
	/* UDP one-way and two-way, idle reuse of a key after 45 s */
	{.at_ms = 21,  .kind = K_UDP, .ipv = 4, .proto = 17, .nf = 1, .nr = 1, .lo = 60, .hi = 300},
	{.at_ms = 23,  .kind = K_UDP, .ipv = 4, .proto = 17, .nf = 20, .nr = 0, .lo = 80, .hi = 1400, .gap_ms = 5},
	{.at_ms = 25,  .kind = K_UDP, .ipv = 6, .proto = 17, .nf = 3, .nr = 3, .lo = 48, .hi = 1500, .gap_ms = 4},
	{.at_ms = 27,  .kind = K_UDP, .ipv = 4, .proto = 17, .reuse = REUSE_IDLE, .nf = 3, .nr = 0, .lo = 40, .hi = 100, .gap_ms = 10, .rf = 2, .rr = 1},
	/* ICMP and ICMPv6: echo both ways, errors (one with an embedded header), NS */
	{.at_ms = 29,  .kind = K_ICMP, .ipv = 4, .proto = 1, .nf = 4, .nr = 4, .lo = 84, .hi = 84, .gap_ms = 200, .icmp_f = IC(8, 0), .icmp_r = IC(0, 0)},
	{.at_ms = 31,  .kind = K_ICMP, .ipv = 4, .proto = 1, .feat = F_EMBED, .nf = 1, .nr = 0, .icmp_f = IC(3, 3)},
	{.at_ms = 33,  .kind = K_ICMP, .ipv = 4, .proto = 1, .nf = 2, .nr = 0, .lo = 56, .hi = 56, .gap_ms = 1, .icmp_f = IC(11, 0)},
	{.at_ms = 35,  .kind = K_ICMP, .ipv = 6, .proto = 58, .nf = 3, .nr = 3, .lo = 104, .hi = 104, .gap_ms = 100, .icmp_f = IC(128, 0), .icmp_r = IC(129, 0)},
	{.at_ms = 37,  .kind = K_ICMP, .ipv = 6, .proto = 58, .nf = 1, .nr = 0, .lo = 96, .hi = 96, .icmp_f = IC(1, 4)},
	{.at_ms = 39,  .kind = K_ICMP, .ipv = 6, .proto = 58, .nf = 1, .nr = 0, .lo = 72, .hi = 72, .icmp_f = IC(135, 0)},
	/* IPv6 extension headers */
	{.at_ms = 41,  .kind = K_UDP, .ipv = 6, .proto = 17, .feat = F_HBH | F_DST | F_RT, .nf = 4, .nr = 4, .lo = 100, .hi = 1200, .gap_ms = 3},
	{.at_ms = 43,  .kind = K_TCP, .ipv = 6, .proto = 6, .feat = F_HBH, .nf = 5, .nr = 5, .lo = 68, .hi = 1500, .gap_ms = 3},
	{.at_ms = 45,  .kind = K_UDP, .ipv = 6, .proto = 17, .feat = F_ATOMIC, .nf = 2, .nr = 2, .lo = 60, .hi = 400, .gap_ms = 3},
	/* fragments: IPv6 UDP and ICMPv6, IPv4 UDP and ICMP (the first carries the ports) */
	{.at_ms = 47,  .kind = K_UDP, .ipv = 6, .proto = 17, .feat = F_FRAG, .nf = 3, .nr = 1, .lo = 2000, .hi = 4000, .gap_ms = 5},
	{.at_ms = 49,  .kind = K_UDP, .ipv = 6, .proto = 17, .feat = F_FRAG | F_HBH, .nf = 1, .nr = 0, .lo = 3000, .hi = 3000},
	{.at_ms = 51,  .kind = K_ICMP, .ipv = 6, .proto = 58, .feat = F_FRAG, .nf = 1, .nr = 1, .lo = 2008, .hi = 2008, .gap_ms = 1, .icmp_f = IC(128, 0), .icmp_r = IC(129, 0)},
	{.at_ms = 53,  .kind = K_UDP, .ipv = 4, .proto = 17, .feat = F_FRAG, .nf = 2, .nr = 2, .lo = 1600, .hi = 5000, .gap_ms = 5},
	{.at_ms = 55,  .kind = K_ICMP, .ipv = 4, .proto = 1, .feat = F_FRAG, .nf = 1, .nr = 1, .lo = 3008, .hi = 3008, .gap_ms = 1, .icmp_f = IC(8, 0), .icmp_r = IC(0, 0)},
	/* IPv4 options */
	{.at_ms = 59,  .kind = K_UDP, .ipv = 4, .proto = 17, .feat = F_IP4OPT, .nf = 3, .nr = 3, .lo = 60, .hi = 500, .gap_ms = 2},
	{.at_ms = 61,  .kind = K_TCP, .ipv = 4, .proto = 6, .feat = F_IP4MAX, .nf = 4, .nr = 4, .lo = 80, .hi = 700, .gap_ms = 2},
	/* VLANs: the same addresses and ports untagged, on VLAN 200 and in QinQ 300/301 are
	 * three keys; 802.1ad and 802.1Q-in-802.1Q; a priority tag (VID 0 = untagged) */
	{.at_ms = 63,  .kind = K_UDP, .ipv = 4, .proto = 17, .nf = 3, .nr = 3, .lo = 60, .hi = 300, .gap_ms = 2},
	{.at_ms = 64,  .kind = K_UDP, .ipv = 4, .proto = 17, .tags = TAG_1Q, .vid = 200, .nf = 2, .nr = 2, .lo = 60, .hi = 300, .gap_ms = 2, .same_key = 1},
	{.at_ms = 65,  .kind = K_UDP, .ipv = 4, .proto = 17, .tags = TAG_QINQ_AD, .vid = 300, .vid_inner = 301, .nf = 2, .nr = 1, .lo = 60, .hi = 300, .gap_ms = 2, .same_key = 1},
	{.at_ms = 67,  .kind = K_TCP, .ipv = 4, .proto = 6, .tags = TAG_1Q, .vid = 100, .nf = 5, .nr = 5, .lo = 40, .hi = 1500, .gap_ms = 2},
	{.at_ms = 69,  .kind = K_TCP, .ipv = 6, .proto = 6, .tags = TAG_QINQ_11, .vid = 10, .vid_inner = 20, .nf = 4, .nr = 4, .lo = 60, .hi = 1500, .gap_ms = 2},
	{.at_ms = 71,  .kind = K_UDP, .ipv = 4, .proto = 17, .tags = TAG_1Q, .vid = 0, .nf = 2, .nr = 2, .lo = 60, .hi = 200, .gap_ms = 2},
	/* other IP protocols: addresses and protocol only */
	{.at_ms = 73,  .kind = K_OTHER, .ipv = 4, .proto = 47, .nf = 3, .nr = 3, .lo = 60, .hi = 1400, .gap_ms = 2},
	{.at_ms = 75,  .kind = K_OTHER, .ipv = 4, .proto = 132, .nf = 2, .nr = 2, .lo = 60, .hi = 400, .gap_ms = 2},
	{.at_ms = 77,  .kind = K_OTHER, .ipv = 6, .proto = 50, .nf = 3, .nr = 0, .lo = 100, .hi = 1400, .gap_ms = 2},
	{.at_ms = 79,  .kind = K_OTHER, .ipv = 6, .proto = 47, .nf = 2, .nr = 2, .lo = 80, .hi = 600, .gap_ms = 2},
	/* frames captured at 96 bytes: the IP total length still counts */
	{.at_ms = 81,  .kind = K_UDP, .ipv = 4, .proto = 17, .feat = F_SNAP, .nf = 2, .nr = 2, .lo = 500, .hi = 1500, .gap_ms = 2},
	{.at_ms = 83,  .kind = K_TCP, .ipv = 6, .proto = 6, .feat = F_SNAP, .nf = 4, .nr = 4, .lo = 200, .hi = 1500, .gap_ms = 2},
	/* later fragments whose first never comes */
	{.at_ms = 85,  .kind = K_RAW, .raw = RAW_ORPHAN4},
	{.at_ms = 86,  .kind = K_RAW, .raw = RAW_ORPHAN6},
	/* malformed frames, one per reason, and frames of other EtherTypes */
	{.at_ms = 87,  .kind = K_RAW, .raw = RAW_MALFORMED, .reason = MAL(eth_short)},
	{.at_ms = 88,  .kind = K_RAW, .raw = RAW_MALFORMED, .reason = MAL(vlan_short)},
	{.at_ms = 89,  .kind = K_RAW, .raw = RAW_MALFORMED, .reason = MAL(ip4_short)},
	{.at_ms = 90,  .kind = K_RAW, .raw = RAW_MALFORMED, .reason = MAL(ip4_version)},
	{.at_ms = 91,  .kind = K_RAW, .raw = RAW_MALFORMED, .reason = MAL(ip4_ihl)},
	{.at_ms = 92,  .kind = K_RAW, .raw = RAW_MALFORMED, .reason = MAL(ip4_ihl_long)},
	{.at_ms = 93,  .kind = K_RAW, .raw = RAW_MALFORMED, .reason = MAL(ip4_len_short)},
	{.at_ms = 94,  .kind = K_RAW, .raw = RAW_MALFORMED, .reason = MAL(ip4_len_long)},
	{.at_ms = 95,  .kind = K_RAW, .raw = RAW_MALFORMED, .reason = MAL(ip6_short)},
	{.at_ms = 96,  .kind = K_RAW, .raw = RAW_MALFORMED, .reason = MAL(ip6_len_long)},
	{.at_ms = 97,  .kind = K_RAW, .raw = RAW_MALFORMED, .reason = MAL(ip6_ext_long)},
	{.at_ms = 98,  .kind = K_RAW, .raw = RAW_MALFORMED, .reason = MAL(tcp_short)},
	{.at_ms = 99,  .kind = K_RAW, .raw = RAW_MALFORMED, .reason = MAL(tcp_doff)},
	{.at_ms = 100, .kind = K_RAW, .raw = RAW_MALFORMED, .reason = MAL(udp_short)},
	{.at_ms = 101, .kind = K_RAW, .raw = RAW_ARP},
	{.at_ms = 102, .kind = K_RAW, .raw = RAW_UNKNOWN},
	{.at_ms = 103, .kind = K_RAW, .raw = RAW_8023},
};
/* clang-format on */

/* The encap profile: every encapsulation, IPv4 and IPv6 inside, and tenants with the same
 * inner key in two VXLAN VNIs, Geneve VNIs, GRE keys and GTP-U TEIDs (two flows each, and
 * a third without a tunnel); fragments and a snap length inside a tunnel. */
#define ENC(e) .enc = E_##e
/* clang-format off */
static const struct case_spec enc_cases[] = {
	{.at_ms = 0,  .kind = K_TCP, .ipv = 4, .proto = 6, .nf = 6, .nr = 6, .lo = 40, .hi = 1500, .gap_ms = 2, ENC(MPLS)},
	{.at_ms = 2,  .kind = K_UDP, .ipv = 6, .proto = 17, .nf = 3, .nr = 3, .lo = 60, .hi = 1400, .gap_ms = 2, ENC(MPLS2), .enc_key = 1, .enc_id = 1000},
	{.at_ms = 4,  .kind = K_TCP, .ipv = 6, .proto = 6, .nf = 5, .nr = 5, .lo = 60, .hi = 1492, .gap_ms = 2, ENC(PPPOE)},
	{.at_ms = 6,  .kind = K_UDP, .ipv = 4, .proto = 17, .tags = TAG_1Q, .vid = 300, .nf = 3, .nr = 2, .lo = 60, .hi = 1492, .gap_ms = 2, ENC(PPPOE), .enc_key = 1, .enc_id = 0x1234},
	{.at_ms = 8,  .kind = K_TCP, .ipv = 4, .proto = 6, .nf = 6, .nr = 6, .lo = 40, .hi = 1476, .gap_ms = 2, ENC(GRE)},
	{.at_ms = 10, .kind = K_UDP, .ipv = 6, .proto = 17, .nf = 3, .nr = 3, .lo = 60, .hi = 1400, .gap_ms = 2, ENC(GRE), .enc_key = 1, .enc_id = 7},
	{.at_ms = 12, .kind = K_TCP, .ipv = 4, .proto = 6, .nf = 5, .nr = 5, .lo = 40, .hi = 1400, .gap_ms = 2, ENC(ERSPAN), .enc_key = 1, .enc_id = 5},
	{.at_ms = 14, .kind = K_UDP, .ipv = 4, .proto = 17, .nf = 3, .nr = 3, .lo = 60, .hi = 1400, .gap_ms = 2, ENC(VXLAN), .enc_key = 1, .enc_id = 100},
	{.at_ms = 15, .kind = K_UDP, .ipv = 4, .proto = 17, .nf = 2, .nr = 3, .lo = 60, .hi = 1400, .gap_ms = 2, .same_key = 1, ENC(VXLAN), .enc_key = 1, .enc_id = 200},
	{.at_ms = 16, .kind = K_UDP, .ipv = 4, .proto = 17, .nf = 2, .nr = 1, .lo = 60, .hi = 1400, .gap_ms = 2, .same_key = 1},
	{.at_ms = 17, .kind = K_TCP, .ipv = 6, .proto = 6, .nf = 5, .nr = 5, .lo = 60, .hi = 1400, .gap_ms = 2, ENC(VXLAN), .enc_key = 1, .enc_id = 300},
	{.at_ms = 19, .kind = K_UDP, .ipv = 4, .proto = 17, .nf = 3, .nr = 3, .lo = 60, .hi = 1400, .gap_ms = 2, ENC(GENEVE), .enc_key = 1, .enc_id = 10},
	{.at_ms = 20, .kind = K_UDP, .ipv = 4, .proto = 17, .nf = 3, .nr = 2, .lo = 60, .hi = 1400, .gap_ms = 2, .same_key = 1, ENC(GENEVE), .enc_key = 1, .enc_id = 11},
	{.at_ms = 22, .kind = K_TCP, .ipv = 4, .proto = 6, .nf = 5, .nr = 5, .lo = 40, .hi = 1400, .gap_ms = 2, ENC(GTPU), .enc_key = 1, .enc_id = 1000},
	{.at_ms = 23, .kind = K_TCP, .ipv = 4, .proto = 6, .nf = 4, .nr = 4, .lo = 40, .hi = 1400, .gap_ms = 2, .same_key = 1, ENC(GTPU), .enc_key = 1, .enc_id = 1001},
	{.at_ms = 25, .kind = K_UDP, .ipv = 6, .proto = 17, .nf = 3, .nr = 3, .lo = 60, .hi = 1400, .gap_ms = 2, ENC(GTPU), .enc_key = 1, .enc_id = 5},
	{.at_ms = 27, .kind = K_TCP, .ipv = 4, .proto = 6, .nf = 4, .nr = 4, .lo = 40, .hi = 1400, .gap_ms = 2, ENC(GRE), .enc_key = 1, .enc_id = 1},
	{.at_ms = 28, .kind = K_TCP, .ipv = 4, .proto = 6, .nf = 4, .nr = 4, .lo = 40, .hi = 1400, .gap_ms = 2, .same_key = 1, ENC(GRE), .enc_key = 1, .enc_id = 2},
	{.at_ms = 30, .kind = K_UDP, .ipv = 4, .proto = 17, .nf = 3, .nr = 3, .lo = 60, .hi = 1480, .gap_ms = 2, ENC(IPIP)},
	{.at_ms = 32, .kind = K_UDP, .ipv = 6, .proto = 17, .nf = 3, .nr = 3, .lo = 60, .hi = 1460, .gap_ms = 2, ENC(IPIP)},
	{.at_ms = 34, .kind = K_TCP, .ipv = 6, .proto = 6, .nf = 4, .nr = 4, .lo = 60, .hi = 1480, .gap_ms = 2, ENC(IPIP4)},
	{.at_ms = 36, .kind = K_TCP, .ipv = 4, .proto = 6, .nf = 4, .nr = 4, .lo = 40, .hi = 1460, .gap_ms = 2, ENC(IPIP6)},
	{.at_ms = 38, .kind = K_UDP, .ipv = 4, .proto = 17, .nf = 3, .nr = 3, .lo = 60, .hi = 1500, .gap_ms = 2, ENC(EOMPLS)},
	{.at_ms = 40, .kind = K_TCP, .ipv = 6, .proto = 6, .nf = 4, .nr = 4, .lo = 60, .hi = 1500, .gap_ms = 2, ENC(EOMPLS), .enc_key = 1, .enc_id = 4000},
	{.at_ms = 42, .kind = K_ICMP, .ipv = 4, .proto = 1, .nf = 3, .nr = 3, .lo = 84, .hi = 84, .gap_ms = 20, .icmp_f = IC(8, 0), .icmp_r = IC(0, 0), ENC(VXLAN), .enc_key = 1, .enc_id = 100},
	{.at_ms = 44, .kind = K_ICMP, .ipv = 6, .proto = 58, .nf = 2, .nr = 2, .lo = 104, .hi = 104, .gap_ms = 20, .icmp_f = IC(128, 0), .icmp_r = IC(129, 0), ENC(GTPU), .enc_key = 1, .enc_id = 9},
	{.at_ms = 46, .kind = K_UDP, .ipv = 4, .proto = 17, .feat = F_FRAG, .nf = 2, .nr = 1, .lo = 1600, .hi = 4000, .gap_ms = 5, ENC(GRE), .enc_key = 1, .enc_id = 3},
	{.at_ms = 48, .kind = K_UDP, .ipv = 6, .proto = 17, .feat = F_FRAG, .nf = 1, .nr = 1, .lo = 2000, .hi = 3000, .gap_ms = 5, ENC(VXLAN), .enc_key = 1, .enc_id = 400},
	{.at_ms = 50, .kind = K_UDP, .ipv = 4, .proto = 17, .feat = F_SNAP, .nf = 2, .nr = 2, .lo = 500, .hi = 1400, .gap_ms = 2, ENC(GENEVE)},
	{.at_ms = 52, .kind = K_TCP, .ipv = 4, .proto = 6, .tags = TAG_QINQ_AD, .vid = 40, .vid_inner = 41, .nf = 4, .nr = 4, .lo = 40, .hi = 1400, .gap_ms = 2, ENC(VXLAN), .enc_key = 1, .enc_id = 100},
};
/* clang-format on */

#define CONF_ROUND_US 1000000ull /* rounds start 1 s apart (every case starts within 0.11 s) */

static struct conn *make_conf_conn(struct secho_gen *g, const struct case_spec *s,
                                   const struct conn *prev)
{
	struct conn *c = conn_alloc(g);
	if (!c)
		return NULL;
	c->kind = s->kind;
	c->key.proto = s->proto;
	c->key.ip_version = s->ipv ? s->ipv : 4;
	c->raw_what = s->raw;
	c->raw_reason = s->reason;
	c->feat = s->feat;
	c->tags = s->tags;
	c->tag_tci[0] = s->vid;
	c->tag_tci[1] = s->vid_inner;
	c->key.vlan = s->vid;
	c->key.vlan_inner = s->vid_inner;
	c->end = s->end;
	c->reuse = s->reuse;
	c->key.icmp_type_code = s->icmp_f;
	c->icmp_rev = s->icmp_r;
	c->size_lo = s->lo;
	c->size_hi = s->hi;
	c->max_ip = 1500;
	c->total[0] = s->nf;
	c->total[1] = s->nr;
	c->reuse_total[0] = s->rf;
	c->reuse_total[1] = s->rr;
	static const uint16_t ports[] = {443, 80, 53, 123, 8443, 5201};
	uint16_t dport = ports[c->id % NB(ports)];
	if (c->kind == K_RAW)
		c->key.ip_version = c->raw_what == RAW_ORPHAN6 ? 6 : 4;
	if (s->same_key) {
		memcpy(c->key.src, prev->key.src, 16);
		memcpy(c->key.dst, prev->key.dst, 16);
		c->key.sport = prev->key.sport;
		c->key.dport = prev->key.dport;
		memcpy(c->mac, prev->mac, sizeof(c->mac));
	} else {
		conn_addresses(g, c, c->key.ip_version, dport);
	}
	if (s->enc)
		conn_encap(c, s->enc, s->enc_key ? s->enc_id : encaps[s->enc].def_id, s->enc_key);
	c->ipid[0] = (uint16_t)rng_u64(&g->rng);
	c->ipid[1] = (uint16_t)rng_u64(&g->rng);
	c->seq[0] = (uint32_t)rng_u64(&g->rng);
	c->seq[1] = (uint32_t)rng_u64(&g->rng);
	conn_reserve(c);
	uint64_t start = g->conf_round * CONF_ROUND_US + (uint64_t)s->at_ms * 1000;
	uint64_t n = c->total[0] + c->total[1];
	conn_plan_time(c, start,
	               n > 1 ? (uint64_t)(s->gap_ms ? s->gap_ms : 1) * 1000 * (n - 1) : 0);
	if (c->kind == K_RAW)
		c->n = 1;
	app_assign(g, c, s->same_key ? prev : NULL);
	c->next_us = c->start_us;
	return c;
}

/* ---- raw frames ---- */

static uint32_t build_raw(struct secho_gen *g, struct conn *c, uint32_t *caplen)
{
	uint8_t *f = g->frame;
	struct pkt k = {.dir = 0};
	uint32_t len;
	memset(f, 0, 128);
	memcpy(f, c->mac[1], 6);
	memcpy(f + 6, c->mac[0], 6);
	switch (c->raw_what) {
	case RAW_ARP:
		put_be16(f + 12, 0x0806);
		put_be16(f + 14, 1);
		put_be16(f + 16, 0x0800);
		f[18] = 6;
		f[19] = 4;
		put_be16(f + 20, 1);
		memcpy(f + 22, c->mac[0], 6);
		memcpy(f + 28, c->key.src, 4);
		memcpy(f + 38, c->key.dst, 4);
		memset(f, 0xff, 6);
		*caplen = 60;
		return 60;
	case RAW_UNKNOWN:
		put_be16(f + 12, 0x88b5); /* IEEE 802 local experimental EtherType */
		*caplen = 60;
		return 60;
	case RAW_8023:
		put_be16(f + 12, 46); /* an 802.3 length, not an EtherType; LLC follows */
		f[14] = 0x42;
		f[15] = 0x42;
		f[16] = 0x03;
		*caplen = 60;
		return 60;
	case RAW_ORPHAN4:
	case RAW_ORPHAN6:
		/* A last fragment at offset 1480 (1448 for IPv6) of a UDP datagram whose first
		 * fragment is never sent. */
		c->kind = K_UDP;
		c->key.proto = 17;
		k.frag = true;
		k.frag_off = c->raw_what == RAW_ORPHAN4 ? 1480 : 1448;
		k.frag_data = 400;
		k.more = false;
		k.ip_len = (c->raw_what == RAW_ORPHAN4 ? 20 : 48) + 400;
		c->fr_id = 0x0bad0000u + (uint32_t)c->id;
		len = build(g, c, &k);
		c->kind = K_RAW;
		*caplen = len;
		return len;
	default:
		break;
	}
	/* Malformed: a sound UDP or TCP packet first, then broken where the reason says. */
	c->kind = K_UDP;
	c->key.proto = 17;
	if (c->raw_reason == SECHO_GEN_MAL_tcp_short || c->raw_reason == SECHO_GEN_MAL_tcp_doff) {
		c->kind = K_TCP;
		c->key.proto = 6;
		k.flags = TCP_ACK;
	}
	bool v6 = c->raw_reason == SECHO_GEN_MAL_ip6_short ||
	          c->raw_reason == SECHO_GEN_MAL_ip6_len_long ||
	          c->raw_reason == SECHO_GEN_MAL_ip6_ext_long;
	if (v6) {
		c->key.ip_version = 6;
		addr_client(c->key.src, 6, c->id + 0x10000);
		addr_server(c->key.dst, 6, 7);
	}
	k.ip_len = (v6 ? 40 : 20) + (c->kind == K_TCP ? 20 : 8) + 32;
	k.l4_total = k.ip_len - (v6 ? 40 : 20);
	len = build(g, c, &k);
	c->kind = K_RAW;
	*caplen = len;
	uint8_t *ip = f + 14;
	switch (c->raw_reason) {
	case SECHO_GEN_MAL_eth_short:
		len = *caplen = 10;
		break;
	case SECHO_GEN_MAL_vlan_short:
		put_be16(f + 12, 0x8100);
		put_be16(f + 14, 0x0064);
		len = *caplen = 16;
		break;
	case SECHO_GEN_MAL_ip4_short:
		len = *caplen = 14 + 12;
		break;
	case SECHO_GEN_MAL_ip4_version:
		ip[0] = 0x65;
		break;
	case SECHO_GEN_MAL_ip4_ihl:
		ip[0] = 0x44;
		break;
	case SECHO_GEN_MAL_ip4_ihl_long:
		ip[0] = 0x4f; /* 60 bytes of header in a 40-byte packet */
		put_be16(ip + 2, 40);
		break;
	case SECHO_GEN_MAL_ip4_len_short:
		put_be16(ip + 2, 16);
		break;
	case SECHO_GEN_MAL_ip4_len_long:
		put_be16(ip + 2, 1400);
		break;
	case SECHO_GEN_MAL_ip6_short:
		len = *caplen = 14 + 30;
		break;
	case SECHO_GEN_MAL_ip6_len_long:
		put_be16(ip + 4, 1000);
		break;
	case SECHO_GEN_MAL_ip6_ext_long:
		ip[6] = 0; /* hop-by-hop header claiming 88 bytes in a 40-byte payload */
		ip[40] = 17;
		ip[41] = 10;
		break;
	case SECHO_GEN_MAL_tcp_short:
		put_be16(ip + 2, 20 + 10);
		len = *caplen = 60;
		break;
	case SECHO_GEN_MAL_tcp_doff:
		ip[20 + 12] = 4 << 4;
		break;
	case SECHO_GEN_MAL_udp_short:
		put_be16(ip + 2, 20 + 4);
		len = *caplen = 60;
		break;
	default:
		break;
	}
	if (ip[0] >> 4 == 4 && c->raw_reason != SECHO_GEN_MAL_ip4_short && len >= 34) {
		put_be16(ip + 10, 0);
		put_be16(ip + 10, secho_ip4_csum(ip));
	}
	return len;
}

/* ---- arrivals ---- */

static int arrivals(struct secho_gen *g)
{
	/* Admit every connection that starts before the earliest queued packet. */
	for (;;) {
		uint64_t top = g->nheap ? g->heap[0]->next_us : UINT64_MAX;
		struct conn *c = NULL;
		if (g->arrivals_done)
			return 0;
		if (g->mode == M_STAT) {
			if (!g->budget) {
				g->arrivals_done = true;
				return 0;
			}
			if (g->arr_next_us > top)
				return 0;
			uint64_t n = pareto(g, g->prof->alpha, g->prof->xm, g->prof->max_conn);
			if (n > g->budget)
				n = g->budget;
			g->budget -= n;
			c = make_stat_conn(g, g->arr_next_us, n);
			double e = -log(1.0 - rng_unit(&g->rng)) / g->arr_rate_per_us;
			g->arr_next_us += (uint64_t)e + 1;
		} else if (g->mode == M_CSV) {
			if (g->row_i == g->nrows || (g->target && g->planned >= g->target)) {
				g->arrivals_done = true;
				return 0;
			}
			const struct secho_gen_csv_row *r = &g->rows[g->row_i];
			if ((uint64_t)r->start_us > top)
				return 0;
			g->row_i++;
			c = make_csv_conn(g, r);
			if (c) {
				int rc = csv_claim(g, c);
				if (rc) {
					conn_free(g, c);
					return rc;
				}
			}
			if (c)
				g->planned += c->total[0] + c->total[1];
		} else {
			if (g->conf_i == g->ncases) {
				if (g->planned >= g->target) {
					g->arrivals_done = true;
					return 0;
				}
				g->conf_i = 0;
				g->conf_round++;
			}
			const struct case_spec *s = &g->cases[g->conf_i];
			uint64_t at = g->conf_round * CONF_ROUND_US + (uint64_t)s->at_ms * 1000;
			if (at > top)
				return 0;
			c = make_conf_conn(g, s, &g->conf_prev);
			g->conf_i++;
			if (c)
				g->conf_prev = *c;
			if (c)
				g->planned += c->kind == K_RAW ? 1 : c->total[0] + c->total[1];
		}
		if (!c)
			return -ENOMEM;
		if (g->enc && c->kind != K_RAW)
			conn_encap(c, g->enc, g->enc_id, g->enc_has_id);
		g->tot.connections += c->kind != K_RAW;
		int rc = heap_push(g, c);
		if (rc) {
			conn_free(g, c);
			return rc;
		}
	}
}

/* ---- the generator ---- */

int secho_gen_next(struct secho_gen *g, struct secho_gen_frame *f)
{
	int rc = arrivals(g);
	if (rc)
		return rc;
	if (!g->nheap)
		return 0;
	struct conn *c = heap_pop(g);
	uint64_t t = c->next_us;
	if (g->started && t <= g->last_us)
		t = g->last_us + 1;
	g->started = true;
	g->last_us = t;
	uint32_t len, caplen;
	bool done;
	g->out = g->frame;
	if (c->kind == K_RAW) {
		len = build_raw(g, c, &caplen);
		if (c->raw_what == RAW_MALFORMED) {
			g->tot.malformed++;
			g->tot.malformed_by[c->raw_reason]++;
		} else if (c->raw_what == RAW_ORPHAN4 || c->raw_what == RAW_ORPHAN6) {
			g->tot.orphan_fragments++;
		} else {
			g->tot.non_ip++;
		}
		done = true;
	} else {
		struct pkt k;
		conn_next_pkt(g, c, &k);
		len = caplen = build(g, c, &k);
		if (c->feat & F_SNAP) {
			/* the same inner bytes as without the encapsulation */
			uint32_t snap = 96 + g->enc_over;
			caplen = snap < len ? snap : len;
			g->tot.snap_truncated += caplen < len;
		}
		struct secho_flow_dir *d = &c->d[k.dir];
		uint64_t ns = SECHO_GEN_EPOCH_NS + t * 1000;
		if (!d->packets)
			d->first_ns = ns;
		d->last_ns = ns;
		d->packets++;
		d->octets += k.ip_len;
		c->bytes_outer[k.dir] += g->outer_len;
		d->tcp_flags |= c->kind == K_TCP ? k.flags : 0;
		if (!k.frag || !k.more)
			c->ipid[k.dir]++;
		if (c->fr_len) {
			c->next_us = t + 3; /* the next fragment of this datagram */
			done = false;
		} else {
			c->k++;
			done = c->sent[0] == c->total[0] && c->sent[1] == c->total[1];
			if (!done)
				c->next_us = planned_time(g, c);
		}
	}
	f->ts_ns = SECHO_GEN_EPOCH_NS + t * 1000;
	f->data = g->out;
	f->len = len;
	f->caplen = caplen;
	g->tot.packets++;
	g->tot.frame_bytes += len;
	if (done && c->kind != K_RAW) {
		report_dir(g, c, 0);
		report_dir(g, c, 1);
		if (c->reuse != REUSE_NONE) {
			/* The same key again: after the FINs, a new connection (SYN) one second
			 * later; after an idle flow, 45 s later (past the inactive timeout). */
			uint64_t wait = c->reuse == REUSE_SYN ? 1000000 : REUSE_IDLE_US;
			c->reuse = REUSE_NONE;
			c->total[0] = c->reuse_total[0];
			c->total[1] = c->reuse_total[1];
			memset(c->d, 0, sizeof(c->d));
			memset(c->bytes_outer, 0, sizeof(c->bytes_outer));
			memset(c->app_len, 0, sizeof(c->app_len));
			if (c->app.app) /* a new connection: new names, new keys */
				secho_gen_app_draw(&c->app, c->app.app, rng_u64(&g->app_rng));
			conn_reserve(c);
			uint64_t n = c->total[0] + c->total[1];
			conn_plan_time(c, t + wait, 2000 * (n - 1));
			c->next_us = c->start_us;
			c->id = g->next_id++;
			g->tot.connections++;
			done = false;
		}
	}
	if (done) {
		conn_free(g, c);
	} else {
		rc = heap_push(g, c);
		if (rc)
			return rc;
	}
	return 1;
}

int secho_gen_has_tunnels(const struct secho_gen *g)
{
	return g->tunnels;
}

int secho_gen_has_apps(const struct secho_gen *g)
{
	return g->apps != 0;
}

int secho_gen_app_parse(const char *list, unsigned *apps, char *err, size_t errlen)
{
	*apps = 0;
	const char *s = list;
	for (;;) {
		const char *comma = strchr(s, ',');
		size_t n = comma ? (size_t)(comma - s) : strlen(s);
		unsigned a;
		if (n == 3 && !strncmp(s, "all", 3)) {
			*apps |= (1u << SECHO_GEN_APP_COUNT) - 2u;
		} else {
			for (a = 1; a < SECHO_GEN_APP_COUNT; a++)
				if (strlen(secho_gen_app_name(a)) == n &&
				    !strncmp(s, secho_gen_app_name(a), n))
					break;
			if (a == SECHO_GEN_APP_COUNT) {
				snprintf(err, errlen,
				         "--app '%s': unknown application '%.*s' (tls, quic, dns, "
				         "http or all)",
				         list, (int)(n > 40 ? 40 : n), s);
				return -EINVAL;
			}
			*apps |= 1u << a;
		}
		if (!comma)
			return 0;
		s = comma + 1;
	}
}

void secho_gen_get_totals(const struct secho_gen *g, struct secho_gen_totals *t)
{
	*t = g->tot;
}

const char *secho_gen_malformed_name(unsigned id)
{
	static const char *const names[] = {
#define X(n, h) #n,
	        SECHO_GEN_MALFORMED(X)
#undef X
	};
	return id < SECHO_GEN_MAL_COUNT ? names[id] : "unknown";
}

static bool ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

int secho_gen_new(struct secho_gen **out, const struct secho_gen_cfg *cfg, char *err, size_t errlen)
{
	*out = NULL;
	struct secho_gen *g = calloc(1, sizeof(*g));
	if (!g) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rng_seed(&g->rng, cfg->seed);
	rng_seed(&g->app_rng, cfg->seed ^ 0x6170706c69636174ull);
	g->apps = cfg->apps & ((1u << SECHO_GEN_APP_COUNT) - 2u);
	g->on_flow = cfg->on_flow;
	g->ctx = cfg->ctx;
	const char *name = cfg->profile ? cfg->profile : "";
	if (cfg->encap) {
		int rc = encap_parse(cfg->encap, &g->enc, &g->enc_id, &g->enc_has_id, err, errlen);
		if (!rc && !strcmp(name, "encap")) {
			snprintf(err, errlen,
			         "--encap: the encap profile has its own encapsulations");
			rc = -EINVAL;
		}
		if (rc) {
			free(g);
			return rc;
		}
		g->tunnels = true;
	}
	if (!strcmp(name, "conformance") || !strcmp(name, "encap")) {
		g->mode = M_CONF;
		g->target = cfg->packets;
		g->cases = conf_cases;
		g->ncases = NB(conf_cases);
		if (!strcmp(name, "encap")) {
			g->cases = enc_cases;
			g->ncases = NB(enc_cases);
			g->tunnels = true;
		}
	} else if (ends_with(name, ".csv")) {
		g->mode = M_CSV;
		g->target = cfg->packets;
		FILE *f = fopen(name, "r");
		if (!f) {
			int e = errno;
			snprintf(err, errlen, "%s: %s", name, strerror(e));
			free(g);
			return -e;
		}
		int rc = secho_gen_csv_read(f, name, &g->rows, &g->nrows, err, errlen);
		fclose(f);
		if (rc) {
			free(g);
			return rc;
		}
		g->tot.csv_rows = g->nrows;
		if (reg_grow(&g->reg, 0)) {
			secho_gen_free(g);
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
	} else {
		for (size_t i = 0; i < NB(profiles); i++)
			if (!strcmp(name, profiles[i].name))
				g->prof = &profiles[i];
		if (!g->prof) {
			snprintf(err, errlen,
			         "unknown profile '%s' (conformance, encap, heavy, light, geant, "
			         "nix, "
			         "short or a "
			         "FILE.csv)",
			         name);
			free(g);
			return -EINVAL;
		}
		g->mode = M_STAT;
		g->budget = cfg->packets ? cfg->packets : g->prof->def_packets;
		double mean_n = g->prof->alpha * g->prof->xm / (g->prof->alpha - 1.0);
		g->arr_rate_per_us = g->prof->pps / mean_n / 1e6;
	}
	*out = g;
	return 0;
}

void secho_gen_free(struct secho_gen *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->nheap; i++)
		free(g->heap[i]);
	free(g->heap);
	while (g->freelist) {
		struct conn *n = *(struct conn **)g->freelist;
		free(g->freelist);
		g->freelist = n;
	}
	free(g->rows);
	free(g->reg.t);
	free(g);
}
