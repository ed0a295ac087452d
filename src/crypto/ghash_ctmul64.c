/*
 * src/crypto/ghash_ctmul64.c - portable constant-time GHASH (NIST SP 800-38D 6.4) and the
 * GCM counter-mode keystream on top of the bitsliced AES of aes_ct64.c.
 *
 * Representation. A 16-byte block is read as a 128-bit big-endian integer X (first byte
 * most significant), held as two uint64_t halves (x1 = bytes 0..7, x0 = bytes 8..15). In
 * SP 800-38D the leftmost bit of the block is the coefficient of t^0, so bit 127 - i of X
 * is the coefficient of t^i: the field element is X "reflected".
 *
 * Multiplication. The carry-less product P = X (x) H of two reflected operands is the
 * reflection of the polynomial product, shifted by one bit: P << 1 is a 256-bit value whose
 * top 128 bits are the coefficients of t^0..t^127 (reflected) and whose bottom 128 bits,
 * L, are those of t^128..t^255. Reduction modulo g = t^128 + t^7 + t^2 + t + 1 uses
 * t^128 = 1 + t + t^2 + t^7; multiplying a reflected value by t^s is a right shift by s,
 * and the bits shifted out of the bottom are t^128 terms again, folded once more (they are
 * at most 7 bits, so a second fold never overflows):
 *	O = (L << 127) ^ (L << 126) ^ (L << 121)   (mod 2^128, only the top 7 bits)
 *	D = L ^ O,  result = top ^ D ^ (D >> 1) ^ (D >> 2) ^ (D >> 7).
 * The 128 x 128 product is Karatsuba over 64-bit halves: three 64 x 64 -> 128 products.
 *
 * 64 x 64 carry-less products with integer multiplication ("bmul64"). Each operand is
 * split into four masks x_i = x & (0x1111... << i) whose set bits are 4 apart. In the
 * integer product x_i * y_j every column k is the count of the pairs of set bits adding up
 * to k; those columns are congruent to i + j mod 4 and 4 bits apart, and a count below 16
 * fits in its 4-bit field, so no carry crosses into the next column of the same class. In
 * the low 64 bits a column k <= 59 has at most 15 pairs in one residue class; columns 60..63
 * may reach 16, but that carry leaves the 64-bit word. The parity of each column (bit k of
 * the class k mod 4) is then the carry-less product bit. This gives the low 64 bits of the
 * carry-less product; the high 64 bits are obtained from the bit-reversed operands:
 *	hi(x (x) y) = rev64(lo(rev64(x) (x) rev64(y))) >> 1.
 *
 * Why this is constant-time: no memory address and no branch depends on H, on the data or
 * on the accumulator; the only operations on them are AND, XOR, OR, shifts by constants
 * and 64-bit integer multiplication, which is assumed to run in data-independent time on
 * x86-64 (it does on every current core: MUL/IMUL latency does not depend on operands).
 * The keystream (ctr32) uses the bitsliced AES, itself table-free. Counter values are
 * public (they derive from the IV and the position) and may be branched on.
 */
#include "crypto/inner.h"

/* htab layout (as uint64_t, native order): h0, h1, rev(h0), rev(h1), h0^h1, rev(h0^h1). */
enum { HT_H0, HT_H1, HT_R0, HT_R1, HT_HX, HT_RX, HT_COUNT };

/* Low 64 bits of the carry-less product of x and y (see the file comment). */
static inline uint64_t bmul64(uint64_t x, uint64_t y)
{
	const uint64_t m0 = UINT64_C(0x1111111111111111);
	const uint64_t m1 = UINT64_C(0x2222222222222222);
	const uint64_t m2 = UINT64_C(0x4444444444444444);
	const uint64_t m3 = UINT64_C(0x8888888888888888);
	uint64_t x0 = x & m0, x1 = x & m1, x2 = x & m2, x3 = x & m3;
	uint64_t y0 = y & m0, y1 = y & m1, y2 = y & m2, y3 = y & m3;
	uint64_t z0 = (x0 * y0) ^ (x1 * y3) ^ (x2 * y2) ^ (x3 * y1); /* i + j = 0 mod 4 */
	uint64_t z1 = (x0 * y1) ^ (x1 * y0) ^ (x2 * y3) ^ (x3 * y2); /* 1 mod 4 */
	uint64_t z2 = (x0 * y2) ^ (x1 * y1) ^ (x2 * y0) ^ (x3 * y3); /* 2 mod 4 */
	uint64_t z3 = (x0 * y3) ^ (x1 * y2) ^ (x2 * y1) ^ (x3 * y0); /* 3 mod 4 */
	return (z0 & m0) | (z1 & m1) | (z2 & m2) | (z3 & m3);
}

/* Reverse the 64 bits of x. */
static inline uint64_t rev64(uint64_t x)
{
	x = ((x >> 1) & UINT64_C(0x5555555555555555)) | ((x & UINT64_C(0x5555555555555555)) << 1);
	x = ((x >> 2) & UINT64_C(0x3333333333333333)) | ((x & UINT64_C(0x3333333333333333)) << 2);
	x = ((x >> 4) & UINT64_C(0x0F0F0F0F0F0F0F0F)) | ((x & UINT64_C(0x0F0F0F0F0F0F0F0F)) << 4);
	return __builtin_bswap64(x);
}

/* (y1:y0) = (y1:y0) * H in GF(2^128), SP 800-38D bit order; h is the htab array. */
static inline void gf_mul(uint64_t *y1p, uint64_t *y0p, const uint64_t h[HT_COUNT])
{
	uint64_t a = *y0p, b = *y1p, c = a ^ b;
	uint64_t ra = rev64(a), rb = rev64(b), rc = ra ^ rb;

	/* Karatsuba: z0 = a*h0, z1 = b*h1, z2 = (a^b)*(h0^h1); each lo and hi. */
	uint64_t z0l = bmul64(a, h[HT_H0]);
	uint64_t z1l = bmul64(b, h[HT_H1]);
	uint64_t z2l = bmul64(c, h[HT_HX]);
	uint64_t z0h = rev64(bmul64(ra, h[HT_R0])) >> 1;
	uint64_t z1h = rev64(bmul64(rb, h[HT_R1])) >> 1;
	uint64_t z2h = rev64(bmul64(rc, h[HT_RX])) >> 1;
	z2l ^= z0l ^ z1l;
	z2h ^= z0h ^ z1h;

	/* P = p3:p2:p1:p0 (255 bits), then P << 1. */
	uint64_t p0 = z0l, p1 = z0h ^ z2l, p2 = z1l ^ z2h, p3 = z1h;
	p3 = (p3 << 1) | (p2 >> 63);
	p2 = (p2 << 1) | (p1 >> 63);
	p1 = (p1 << 1) | (p0 >> 63);
	p0 <<= 1;

	/* Fold the low half L = p1:p0 into the high half. */
	uint64_t d1 = p1 ^ (p0 << 63) ^ (p0 << 62) ^ (p0 << 57);
	uint64_t d0 = p0;
	uint64_t r1 = d1 ^ (d1 >> 1) ^ (d1 >> 2) ^ (d1 >> 7);
	uint64_t r0 =
	        d0 ^ ((d0 >> 1) | (d1 << 63)) ^ ((d0 >> 2) | (d1 << 62)) ^ ((d0 >> 7) | (d1 << 57));
	*y1p = p3 ^ r1;
	*y0p = p2 ^ r0;
}

static void load_htab(const secho_gcm_key *k, uint64_t h[HT_COUNT])
{
	memcpy(h, k->htab, HT_COUNT * sizeof(uint64_t));
}

/* Contract: k->aes is initialised. Computes H = E_K(0^128) and stores the table above. */
static void ct64_hinit(secho_gcm_key *k)
{
	uint8_t zero[16] = {0}, hb[16];
	uint64_t h[HT_COUNT];
	k->aes.impl->ecb_enc(&k->aes, hb, zero, 1);
	h[HT_H1] = secho_load_be64(hb);
	h[HT_H0] = secho_load_be64(hb + 8);
	h[HT_R0] = rev64(h[HT_H0]);
	h[HT_R1] = rev64(h[HT_H1]);
	h[HT_HX] = h[HT_H0] ^ h[HT_H1];
	h[HT_RX] = h[HT_R0] ^ h[HT_R1];
	memcpy(k->htab, h, sizeof(h));
	secho_wipe(hb, sizeof(hb));
	secho_wipe(h, sizeof(h));
}

/* y = (...((y ^ X_1) H) ^ X_2) H ...) over nblocks blocks (SP 800-38D Algorithm 2). */
static void ct64_ghash(const secho_gcm_key *k, uint8_t y[16], const uint8_t *in, size_t nblocks)
{
	uint64_t h[HT_COUNT];
	load_htab(k, h);
	uint64_t y1 = secho_load_be64(y), y0 = secho_load_be64(y + 8);
	for (size_t i = 0; i < nblocks; i++, in += 16) {
		y1 ^= secho_load_be64(in);
		y0 ^= secho_load_be64(in + 8);
		gf_mul(&y1, &y0, h);
	}
	secho_store_be64(y, y1);
	secho_store_be64(y + 8, y0);
	secho_wipe(h, sizeof(h));
}

/*
 * GCTR keystream with inc32 (SP 800-38D 6.2, 6.5): counter blocks differ only in their
 * last 4 bytes, incremented big-endian modulo 2^32; bytes 0..11 never change. Four
 * counter blocks go through one bitsliced pass of the AES (ecb_enc on 4 blocks; the key
 * is a portable one, since this table's aes entry is secho_aes_ct64_impl).
 */
static void ct64_ctr32(const secho_aes_key *k, uint8_t ctr[16], uint8_t *out, const uint8_t *in,
                       size_t nblocks)
{
	uint8_t ks[64] = {0}; /* fully written before use; zeroed for the analysers */
	uint32_t c = secho_load_be32(ctr + 12);
	while (nblocks > 0) {
		size_t n = nblocks < 4 ? nblocks : 4;
		for (size_t i = 0; i < n; i++) {
			memcpy(ks + 16 * i, ctr, 12);
			secho_store_be32(ks + 16 * i + 12, c++);
		}
		k->impl->ecb_enc(k, ks, ks, n);
		for (size_t i = 0; i < 16 * n; i++)
			out[i] = (uint8_t)(in[i] ^ ks[i]);
		in += 16 * n;
		out += 16 * n;
		nblocks -= n;
	}
	secho_store_be32(ctr + 12, c);
	secho_wipe(ks, sizeof(ks));
}

const struct secho_gcm_impl secho_gcm_ct64_impl = {
        .name = "portable",
        .id = SECHO_IMPL_PORTABLE,
        .aes = &secho_aes_ct64_impl,
        .hinit = ct64_hinit,
        .ghash = ct64_ghash,
        .ctr32 = ct64_ctr32,
};
