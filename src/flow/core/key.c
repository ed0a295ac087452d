/*
 * src/flow/core/key.c - the flow key (src/flow/core/key.h): from a dissected frame, in
 * canonical order, and the worker that meters it.
 */
#include "flow/core/key.h"

#include <string.h>

#include "secho/dissect.h"
#include "secho/proto.h"

void secho_flow_key_from(const uint8_t *frame, const struct secho_dissect *d,
                         struct secho_flow_key *k)
{
	memset(k, 0, sizeof(*k));
	k->ip_version = d->ip_version;
	k->proto = d->proto;
	if (d->nvlan > 0)
		k->vlan = secho_vlan_vid(d->vlan_tci[0]);
	if (d->nvlan > 1)
		k->vlan_inner = secho_vlan_vid(d->vlan_tci[1]);
	size_t al = d->ip_version == 4 ? 4 : 16;
	memcpy(k->src, frame + d->addr_off, al);
	memcpy(k->dst, frame + d->addr_off + al, al);
	if (d->flags & SECHO_DISSECT_F_L4) {
		if (d->proto == SECHO_IPPROTO_TCP || d->proto == SECHO_IPPROTO_UDP) {
			k->sport = d->sport;
			k->dport = d->dport;
		} else {
			k->icmp_type_code = (uint16_t)(d->icmp_type << 8 | d->icmp_code);
		}
	}
	if (d->flags & SECHO_DISSECT_F_TUNNEL) {
		k->tun_type = d->tun_type;
		k->tun_id = d->tun_id;
	}
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
	uint64_t sh = be64_at(k->src), dh = be64_at(k->dst);
	uint64_t sl = be64_at(k->src + 8), dl = be64_at(k->dst + 8);
	/* Both ends alike (a host talking to itself): the lower of an ICMP query type and its
	 * answer's goes in the key, so that a query and its answer still meet. */
	bool swap = sh != dh   ? sh > dh
	            : sl != dl ? sl > dl
	            : k->sport != k->dport
	                    ? k->sport > k->dport
	                    : secho_flow_icmp_answer(k->ip_version, k->proto, k->icmp_type_code) <
	                              k->icmp_type_code;

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
