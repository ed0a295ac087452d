/*
 * src/wire/csum.c - Internet checksum (RFC 1071) and its incremental update (RFC 1624).
 *
 * The one's-complement sum is independent of byte order (RFC 1071 section 2(B)): each piece
 * is summed in the CPU's native order, 8 bytes per add with end-around carry, folded to 16
 * bits and only then byte-swapped into the "sum of big-endian 16-bit words" the API
 * carries between pieces. Not secret data: no constant-time requirement.
 */
#include <secho/wire.h>

#include <string.h>

static inline uint64_t load64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v)); /* unaligned-safe; compiles to one load */
	return v;
}

/* acc += v with the carry out of bit 63 added back in (one's-complement addition). */
static inline uint64_t add_ec(uint64_t acc, uint64_t v)
{
	acc += v;
	return acc + (acc < v);
}

uint32_t secho_csum_add(uint32_t sum, const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t acc = 0;

	/* Four independent accumulators: the end-around carry makes each add depend on the
	 * previous one, so a single chain runs at one add per two cycles; four chains overlap
	 * (measured on 1440 bytes: 202 -> 105 TSC cycles). */
	if (n >= 64) {
		uint64_t a1 = 0, a2 = 0, a3 = 0;
		do {
			acc = add_ec(acc, load64(b));
			a1 = add_ec(a1, load64(b + 8));
			a2 = add_ec(a2, load64(b + 16));
			a3 = add_ec(a3, load64(b + 24));
			acc = add_ec(acc, load64(b + 32));
			a1 = add_ec(a1, load64(b + 40));
			a2 = add_ec(a2, load64(b + 48));
			a3 = add_ec(a3, load64(b + 56));
			b += 64;
			n -= 64;
		} while (n >= 64);
		acc = add_ec(add_ec(acc, a1), add_ec(a2, a3));
	}
	while (n >= 32) {
		acc = add_ec(acc, load64(b));
		acc = add_ec(acc, load64(b + 8));
		acc = add_ec(acc, load64(b + 16));
		acc = add_ec(acc, load64(b + 24));
		b += 32;
		n -= 32;
	}
	while (n >= 8) {
		acc = add_ec(acc, load64(b));
		b += 8;
		n -= 8;
	}
	if (n >= 4) {
		uint32_t w;
		memcpy(&w, b, 4);
		acc = add_ec(acc, w);
		b += 4;
		n -= 4;
	}
	if (n >= 2) {
		uint16_t w;
		memcpy(&w, b, 2);
		acc = add_ec(acc, w);
		b += 2;
		n -= 2;
	}
	if (n) {
		/* A trailing odd byte is the high byte of a big-endian word, i.e. the byte at
		 * the lower address of a native 16-bit word. */
		uint16_t w = 0;
		memcpy(&w, b, 1);
		acc = add_ec(acc, w);
	}
	/* Fold 64 -> 16 bits (each step keeps the one's-complement value). */
	acc = (acc & 0xffffffffu) + (acc >> 32);
	acc = (acc & 0xffffffffu) + (acc >> 32);
	acc = (acc & 0xffffu) + (acc >> 16);
	acc = (acc & 0xffffu) + (acc >> 16);
	uint16_t s = (uint16_t)acc;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	s = (uint16_t)((s >> 8) | (s << 8));
#endif
	sum += s;
	return (sum & 0xffffu) + (sum >> 16);
}

uint16_t secho_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffffu) + (sum >> 16);
	return (uint16_t)~sum;
}

uint16_t secho_csum_update16(uint16_t csum, uint16_t old_v, uint16_t new_v)
{
	/* HC' = ~(~HC + ~m + m') */
	uint32_t s = (uint16_t)~csum;
	s += (uint16_t)~old_v;
	s += new_v;
	return secho_csum_fold(s);
}

uint16_t secho_ip4_csum(const void *ip_hdr)
{
	const uint8_t *h = ip_hdr;
	uint32_t s = secho_csum_add(0, h, 10); /* up to the checksum field */
	s = secho_csum_add(s, h + 12, 8);      /* addresses */
	return secho_csum_fold(s);
}

uint16_t secho_udp4_sum(uint32_t saddr, uint32_t daddr, const void *udp, size_t udp_len)
{
	/* Pseudo header (RFC 768): saddr, daddr, zero, protocol, UDP length. */
	uint8_t ph[12];
	memcpy(ph, &saddr, 4);
	memcpy(ph + 4, &daddr, 4);
	ph[8] = 0;
	ph[9] = SECHO_IPPROTO_UDP;
	ph[10] = (uint8_t)(udp_len >> 8);
	ph[11] = (uint8_t)udp_len;
	uint32_t s = secho_csum_add(0, ph, sizeof(ph));
	s = secho_csum_add(s, udp, udp_len);
	return secho_csum_fold(s);
}

uint16_t secho_udp4_csum(uint32_t saddr, uint32_t daddr, const void *udp, size_t udp_len)
{
	uint16_t c = secho_udp4_sum(saddr, daddr, udp, udp_len);
	return c ? c : 0xffff; /* RFC 768: a computed zero is transmitted as all ones */
}
