/*
 * src/flow/core/key.c - the flow key (src/flow/core/key.h): from a dissected frame, in
 * canonical order, and the worker that meters it.
 */
#include "flow/core/key.h"

#include <string.h>

#include "secho/dissect.h"
#include "secho/proto.h"

/*
 * A key is built here in registers and stored once, as the 8-byte words the hash reads
 * (hash.c: six words and the last 4 bytes), so that nothing reads back fresh stores of a
 * different size: a load that spans several smaller stores waits until they leave the
 * store buffer (no forwarding), and the canonical order's compares and the hash read the
 * key at once. (Built field by field after a memset, the key's compares were 5-10% of a
 * light run's samples.) The layout, little-endian words: 0 version, protocol, VLAN, inner
 * VLAN, sport | 1 dport, ICMP type/code, src[0..3] | 2 src[4..11] | 3 src[12..15],
 * dst[0..3] | 4 dst[4..11] | 5 dst[12..15], tunnel type, 3 zero bytes | 48: tunnel id.
 */
/* Whether a key runs from the higher end to the lower (secho_flow_key_canon): addresses as
 * 16-byte big-endian numbers (high and low halves), then ports; both ends alike (a host
 * talking to itself), the lower of an ICMP query type and its answer's goes in the key, so
 * that a query and its answer still meet. */
static inline bool canon_swaps(uint64_t sh, uint64_t dh, uint64_t sl, uint64_t dl, uint16_t sport,
                               uint16_t dport, uint8_t ip_version, uint8_t proto, uint16_t icmp)
{
	return sh != dh         ? sh > dh
	       : sl != dl       ? sl > dl
	       : sport != dport ? sport > dport
	                        : secho_flow_icmp_answer(ip_version, proto, icmp) < icmp;
}

struct key_parts {
	uint64_t s0, s1, d0, d1; /* the addresses' bytes 0-7 and 8-15, loaded as words */
	uint16_t sport, dport, icmp;
};

static inline void key_parts_of(const uint8_t *frame, const struct secho_dissect *d,
                                struct key_parts *kp)
{
	const uint8_t *a = frame + d->addr_off;

	if (d->ip_version == 4) {
		uint32_t v;
		memcpy(&v, a, 4);
		kp->s0 = v;
		memcpy(&v, a + 4, 4);
		kp->d0 = v;
		kp->s1 = kp->d1 = 0;
	} else {
		memcpy(&kp->s0, a, 8);
		memcpy(&kp->s1, a + 8, 8);
		memcpy(&kp->d0, a + 16, 8);
		memcpy(&kp->d1, a + 24, 8);
	}
	kp->sport = kp->dport = kp->icmp = 0;
	if (d->flags & SECHO_DISSECT_F_L4) {
		if (d->proto == SECHO_IPPROTO_TCP || d->proto == SECHO_IPPROTO_UDP) {
			kp->sport = d->sport;
			kp->dport = d->dport;
		} else {
			kp->icmp = (uint16_t)(d->icmp_type << 8 | d->icmp_code);
		}
	}
}

static inline void key_store(const struct secho_dissect *d, const struct key_parts *kp,
                             struct secho_flow_key *k)
{
	uint64_t vlan = d->nvlan > 0 ? secho_vlan_vid(d->vlan_tci[0]) : 0;
	uint64_t vlan2 = d->nvlan > 1 ? secho_vlan_vid(d->vlan_tci[1]) : 0;
	bool tun = d->flags & SECHO_DISSECT_F_TUNNEL;
	uint64_t w[6];
	uint32_t tun_id = tun ? d->tun_id : 0;

	w[0] = (uint64_t)d->ip_version | (uint64_t)d->proto << 8 | vlan << 16 | vlan2 << 32 |
	       (uint64_t)kp->sport << 48;
	w[1] = (uint64_t)kp->dport | (uint64_t)kp->icmp << 16 | kp->s0 << 32;
	w[2] = kp->s0 >> 32 | kp->s1 << 32;
	w[3] = kp->s1 >> 32 | kp->d0 << 32;
	w[4] = kp->d0 >> 32 | kp->d1 << 32;
	w[5] = kp->d1 >> 32 | (uint64_t)(tun ? d->tun_type : 0) << 32;
	memcpy(k, w, sizeof(w));
	memcpy((uint8_t *)k + 48, &tun_id, 4);
}

void secho_flow_key_from(const uint8_t *frame, const struct secho_dissect *d,
                         struct secho_flow_key *k)
{
	struct key_parts kp;

	key_parts_of(frame, d, &kp);
	key_store(d, &kp, k);
}

bool secho_flow_key_canon_from(const uint8_t *frame, const struct secho_dissect *d,
                               struct secho_flow_key *k)
{
	struct key_parts kp;

	key_parts_of(frame, d, &kp);
	bool swap = canon_swaps(__builtin_bswap64(kp.s0), __builtin_bswap64(kp.d0),
	                        __builtin_bswap64(kp.s1), __builtin_bswap64(kp.d1), kp.sport,
	                        kp.dport, d->ip_version, d->proto, kp.icmp);
	if (swap) {
		uint64_t t0 = kp.s0, t1 = kp.s1;
		uint16_t p = kp.sport;
		kp.s0 = kp.d0;
		kp.s1 = kp.d1;
		kp.d0 = t0;
		kp.d1 = t1;
		kp.sport = kp.dport;
		kp.dport = p;
		kp.icmp = secho_flow_icmp_answer(d->ip_version, d->proto, kp.icmp);
	}
	key_store(d, &kp, k);
	return swap;
}

/* ---- biflows ---- */

/* Addresses compared as 16-byte big-endian numbers: the order memcmp gives, in two
 * compares of 64-bit words. */
static inline uint64_t be64_at(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return __builtin_bswap64(v);
}

bool secho_flow_key_canon(const struct secho_flow_key *k, struct secho_flow_key *out)
{
	bool swap = canon_swaps(be64_at(k->src), be64_at(k->dst), be64_at(k->src + 8),
	                        be64_at(k->dst + 8), k->sport, k->dport, k->ip_version, k->proto,
	                        k->icmp_type_code);

	*out = *k;
	if (swap)
		secho_flow_key_reverse(out);
	return swap;
}

void secho_flow_key_reverse(struct secho_flow_key *k)
{
	uint8_t a[16];
	uint16_t p = k->sport;

	memcpy(a, k->src, 16);
	memcpy(k->src, k->dst, 16);
	memcpy(k->dst, a, 16);
	k->sport = k->dport;
	k->dport = p;
	k->icmp_type_code = secho_flow_icmp_answer(k->ip_version, k->proto, k->icmp_type_code);
}

/* ---- workers ---- */

static inline uint64_t mix64(uint64_t x)
{
	/* splitmix64's finalizer */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static inline uint64_t fold_addr(const uint8_t *a, size_t len)
{
	uint64_t x = 0, w;

	if (len == 4) {
		uint32_t v;
		memcpy(&v, a, 4);
		return v;
	}
	memcpy(&w, a, 8);
	x = w;
	memcpy(&w, a + 8, 8);
	return x ^ (w * 0x9e3779b97f4a7c15ull);
}

unsigned secho_flow_worker_of(const uint8_t *frame, const struct secho_dissect *d, uint64_t seed,
                              unsigned n)
{
	if (n <= 1 || !d->ip_version)
		return 0;
	size_t al = d->ip_version == 4 ? 4 : 16;
	/* XOR of the two ends: symmetric, so both directions go to the same worker. */
	uint64_t x = fold_addr(frame + d->addr_off, al) ^ fold_addr(frame + d->addr_off + al, al);
	uint64_t v = (uint64_t)(d->nvlan ? d->vlan_tci[0] & 0xfff : 0) << 12 |
	             (d->nvlan > 1 ? d->vlan_tci[1] & 0xfff : 0);
	/* the tunnel: the same both ways, spread over the word (a VNI's low bits alike) */
	uint64_t tn = 0;
	if (d->flags & SECHO_DISSECT_F_TUNNEL)
		tn = ((uint64_t)d->tun_type << 32 | d->tun_id) * 0x9e3779b97f4a7c15ull;
	uint64_t h = mix64(x ^ v << 40 ^ tn ^ seed);
	return (unsigned)(((h >> 32) * n) >> 32);
}
