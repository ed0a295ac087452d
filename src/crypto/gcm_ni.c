/*
 * src/crypto/gcm_ni.c - AES-GCM (SP 800-38D) with AES-NI and PCLMULQDQ.
 *
 * Constant-time: yes. Carry-less multiplies and AES rounds run in data-independent time;
 * branches and table indices depend only on public lengths; the tag is compared with
 * PCMPEQB/PMOVMSKB over all tag_len bytes.
 *
 * GHASH representation. GCM numbers bits of a block from the most significant bit of byte
 * 0 (SP 800-38D 6.3): bit i is the coefficient of x^i. Reversing the 16 bytes (PSHUFB)
 * gives a 128-bit integer whose bit 127-i is that coefficient, i.e. the bit-reversed
 * polynomial. Write rev(a) for it. For such operands PCLMULQDQ computes
 *   clmul(rev(a), rev(b)) = rev256(a * b * x)      (the product is one bit short of 256),
 * and a 256-bit rev256(c) reduces to rev(c mod P), P = x^128 + x^7 + x^2 + x + 1, by a
 * Montgomery step in the reversed domain: there the modulus is the reciprocal polynomial
 * y^128 + y^127 + y^126 + y^121 + 1 and reducing means dividing by y^128. Two 64-bit folds
 * do it: with the low 64 bits m, add m * (that modulus), which clears them, and drop them;
 * the part of m * modulus that lands inside the kept bits is m * (y^57 + y^62 + y^63)
 * (one PCLMULQDQ by 0xc2 << 56) plus m moved up by 64 bits (a qword swap).
 * The extra factor x is cancelled once per key by storing H' = rev(H * x^-1 mod P):
 * rev(a) times H' then gives rev(a * H). Multiplying rev by x^-1 is a left shift by one,
 * with P folded in (the constant 0xc2000...01 = rev(x^127 + x^6 + x + 1)) when the bit
 * for x^0 falls out.
 *
 * htab layout (struct htab below): H'^1..H'^8 (each H'^i = rev(H^i * x^-1)), then for
 * each power the XOR of its two 64-bit halves in the low qword, for Karatsuba (three
 * PCLMULQDQ per block instead of four). Eight blocks are multiplied by H^8..H^1 and summed
 * unreduced, then reduced once (aggregated reduction).
 *
 * Counters: the GCM counter (inc32, SP 800-38D 6.2) is kept with its last four bytes
 * reversed (PSHUFB), so it is a little-endian dword 3 that PADDD increments modulo 2^32;
 * each counter block is shuffled back before AES.
 */
#include "crypto/aes_ni.h"

struct htab {
	__m128i h[8];  /* h[i] = H'^(i+1) */
	__m128i kh[8]; /* low qword: h[i].lo ^ h[i].hi */
};
_Static_assert(sizeof(struct htab) <= SECHO_GCM_HTAB_BYTES, "htab fits the key");

#define HT(k) ((const struct htab *)(const void *)(k)->htab)

/* Byte reversal of a block, and reversal of the last four bytes only. */
#define BSWAP_MASK _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
#define CTR_MASK   _mm_set_epi8(12, 13, 14, 15, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define POLY_LO    _mm_set_epi64x(0, (long long)0xc200000000000000ull)

/* Unreduced Karatsuba accumulator of sum x_i * h_i: lo, hi and middle products. */
struct acc {
	__m128i lo, mi, hi;
};

SECHO_NI_INLINE void acc_init(struct acc *a)
{
	a->lo = a->mi = a->hi = _mm_setzero_si128();
}

/* a += x * h (x reversed data, h a stored power, kh its Karatsuba half-sum). */
SECHO_NI_INLINE void acc_add(struct acc *a, __m128i x, __m128i h, __m128i kh)
{
	a->lo = _mm_xor_si128(a->lo, _mm_clmulepi64_si128(x, h, 0x00));
	a->hi = _mm_xor_si128(a->hi, _mm_clmulepi64_si128(x, h, 0x11));
	__m128i xs = _mm_xor_si128(x, _mm_shuffle_epi32(x, 0x4e));
	a->mi = _mm_xor_si128(a->mi, _mm_clmulepi64_si128(xs, kh, 0x00));
}

/* Power p (1..8) of H from the table. */
SECHO_NI_INLINE void acc_addp(struct acc *a, const struct htab *t, __m128i x, size_t p)
{
	acc_add(a, x, _mm_load_si128(&t->h[p - 1]), _mm_load_si128(&t->kh[p - 1]));
}

/* Finish Karatsuba, then the two Montgomery folds described at the top of the file. */
SECHO_NI_INLINE __m128i acc_reduce(const struct acc *a)
{
	__m128i mi = _mm_xor_si128(a->mi, _mm_xor_si128(a->lo, a->hi));
	__m128i lo = _mm_xor_si128(a->lo, _mm_slli_si128(mi, 8));
	__m128i hi = _mm_xor_si128(a->hi, _mm_srli_si128(mi, 8));
	__m128i t = _mm_clmulepi64_si128(lo, POLY_LO, 0x00);
	lo = _mm_xor_si128(_mm_shuffle_epi32(lo, 0x4e), t);
	t = _mm_clmulepi64_si128(lo, POLY_LO, 0x00);
	lo = _mm_xor_si128(_mm_shuffle_epi32(lo, 0x4e), t);
	return _mm_xor_si128(hi, lo);
}

SECHO_NI_INLINE __m128i gf_mul(__m128i x, __m128i h)
{
	struct acc a;
	acc_init(&a);
	acc_add(&a, x, h, _mm_xor_si128(h, _mm_shuffle_epi32(h, 0x4e)));
	return acc_reduce(&a);
}

SECHO_NI_INLINE __m128i load_rev(const uint8_t *p)
{
	return _mm_shuffle_epi8(ni_loadu(p), BSWAP_MASK);
}

/* Load r (1..15) bytes zero-padded / store r bytes, through a stack block. */
SECHO_NI_INLINE __m128i load_part(const uint8_t *p, size_t r)
{
	alignas(16) uint8_t b[16] = {0};
	memcpy(b, p, r);
	return _mm_load_si128((const __m128i *)(const void *)b);
}

SECHO_NI_INLINE void store_part(uint8_t *p, __m128i v, size_t r)
{
	alignas(16) uint8_t b[16];
	_mm_store_si128((__m128i *)(void *)b, v);
	memcpy(p, b, r);
}

/* Mask keeping the first r (0..16) bytes of a block; r is a public length. */
static const uint8_t keep_tab[32] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
SECHO_NI_INLINE __m128i keep_mask(size_t r)
{
	return ni_loadu(keep_tab + 16 - r);
}

/* Encrypt n blocks (1..8) with the AES chains side by side: one specialised body per n. */
SECHO_NI_TARGET static void enc_var(const secho_aes_key *k, __m128i *b, size_t n)
{
	switch (n) {
	case 1:
		ni_enc_n(k, b, 1);
		break;
	case 2:
		ni_enc_n(k, b, 2);
		break;
	case 3:
		ni_enc_n(k, b, 3);
		break;
	case 4:
		ni_enc_n(k, b, 4);
		break;
	case 5:
		ni_enc_n(k, b, 5);
		break;
	case 6:
		ni_enc_n(k, b, 6);
		break;
	case 7:
		ni_enc_n(k, b, 7);
		break;
	default:
		ni_enc_n(k, b, 8);
		break;
	}
}

/* Counter block j ahead of c (c in the shuffled form, see the top of the file). */
SECHO_NI_INLINE __m128i ctr_at(__m128i c, int j)
{
	return _mm_shuffle_epi8(_mm_add_epi32(c, _mm_set_epi32(j, 0, 0, 0)), CTR_MASK);
}

/* J0 = IV || 0^31 || 1 for a 96-bit IV (SP 800-38D 7.1 step 2), without reading past
 * the 12 IV bytes. */
SECHO_NI_INLINE __m128i j0_from_iv(const uint8_t iv[12])
{
	uint32_t w;
	memcpy(&w, iv + 8, 4);
	__m128i v = _mm_loadl_epi64((const __m128i *)(const void *)iv);
	v = _mm_insert_epi32(v, (int)w, 2);
	return _mm_insert_epi32(v, 0x01000000, 3);
}

/* Length block len(A) || len(C) in bits, already reversed: rev(block) has len(C) in the
 * low qword and len(A) in the high one. */
SECHO_NI_INLINE __m128i len_block(size_t aad_len, size_t len)
{
	uint64_t abits = (uint64_t)aad_len << 3, cbits = (uint64_t)len << 3;
	return _mm_set_epi64x((long long)abits, (long long)cbits);
}

/* y (reversed) absorbs n whole blocks: groups of 8 with one reduction each. */
SECHO_NI_TARGET static __m128i ghash_rev(const struct htab *t, __m128i y, const uint8_t *in,
                                         size_t n)
{
	struct acc a;
	for (; n >= 8; n -= 8, in += 128) {
		acc_init(&a);
		acc_addp(&a, t, _mm_xor_si128(y, load_rev(in)), 8);
		for (size_t i = 1; i < 8; i++)
			acc_addp(&a, t, load_rev(in + 16 * i), 8 - i);
		y = acc_reduce(&a);
	}
	if (n) {
		acc_init(&a);
		acc_addp(&a, t, _mm_xor_si128(y, load_rev(in)), n);
		for (size_t i = 1; i < n; i++)
			acc_addp(&a, t, load_rev(in + 16 * i), n - i);
		y = acc_reduce(&a);
	}
	return y;
}

/*
 * One group of 8 CTR blocks with, stitched into its AES rounds, the GHASH of 8 other
 * blocks at g (when gh): one Karatsuba multiply per round 1..8, the reduction in round 9
 * (every key size has at least 10 rounds). AESENC and PCLMULQDQ compete for the same
 * vector pipes here; interleaving them in one instruction stream lets the scheduler fill
 * both instead of running a burst of AES and then a burst of multiplies. For encryption
 * g is the previous group's ciphertext (already stored to out, re-read from L1); for
 * decryption it is this group's input, read before any output is stored (in place is
 * safe). Returns the new y; *c advances by 8.
 */
SECHO_NI_INLINE __m128i group8(const secho_gcm_key *k, __m128i *c, __m128i y, uint8_t *out,
                               const uint8_t *in, const uint8_t *g, bool gh)
{
	const struct htab *t = HT(k);
	const __m128i *rk = (const __m128i *)k->aes.u.rk[0];
	__m128i b[8], key = _mm_load_si128(rk);
	struct acc a;

	acc_init(&a);
#pragma GCC unroll 8
	for (int i = 0; i < 8; i++)
		b[i] = _mm_xor_si128(ctr_at(*c, i), key);
	*c = _mm_add_epi32(*c, _mm_set_epi32(8, 0, 0, 0));
#pragma GCC unroll 13
	for (unsigned r = 1; r < 14; r++) {
		if (r >= k->aes.rounds)
			break;
		key = _mm_load_si128(rk + r);
#pragma GCC unroll 8
		for (int i = 0; i < 8; i++)
			b[i] = _mm_aesenc_si128(b[i], key);
		if (gh && r <= 8) {
			__m128i x = load_rev(g + 16 * (r - 1));
			if (r == 1)
				x = _mm_xor_si128(x, y);
			acc_addp(&a, t, x, 9 - r);
		}
		if (gh && r == 9)
			y = acc_reduce(&a);
	}
	key = _mm_load_si128(rk + k->aes.rounds);
#pragma GCC unroll 8
	for (int i = 0; i < 8; i++)
		b[i] = _mm_aesenclast_si128(b[i], key);
#pragma GCC unroll 8
	for (int i = 0; i < 8; i++)
		ni_storeu(out + 16 * i, _mm_xor_si128(b[i], ni_loadu(in + 16 * i)));
	return y;
}

/*
 * The fused bulk: n whole blocks of CTR (counter c in shuffled form, advanced) with the
 * ciphertext absorbed into y (reversed). Encryption is software-pipelined by one group
 * (group i's AES carries group i-1's GHASH); the last group and a tail of 1..7 blocks are
 * hashed after their AES.
 */
SECHO_NI_INLINE void crypt_blocks(const secho_gcm_key *k, __m128i *cp, __m128i *yp, uint8_t *out,
                                  const uint8_t *in, size_t n, bool dec)
{
	const struct htab *t = HT(k);
	__m128i c = *cp, y = *yp, b[8], x[8];
	struct acc a;

	if (dec) {
		for (; n >= 8; n -= 8, in += 128, out += 128)
			y = group8(k, &c, y, out, in, in, true);
	} else if (n >= 8) {
		const uint8_t *prev = out;
		group8(k, &c, y, out, in, NULL, false);
		for (n -= 8, in += 128, out += 128; n >= 8; n -= 8, in += 128, out += 128) {
			y = group8(k, &c, y, out, in, prev, true);
			prev = out;
		}
		y = ghash_rev(t, y, prev, 8);
	}
	if (n) {
		for (size_t i = 0; i < n; i++)
			b[i] = ctr_at(c, (int)i);
		c = _mm_add_epi32(c, _mm_set_epi32((int)n, 0, 0, 0));
		if (dec)
			for (size_t i = 0; i < n; i++)
				x[i] = ni_loadu(in + 16 * i);
		enc_var(&k->aes, b, n);
		for (size_t i = 0; i < n; i++) {
			if (dec) {
				ni_storeu(out + 16 * i, _mm_xor_si128(b[i], x[i]));
			} else {
				x[i] = _mm_xor_si128(b[i], ni_loadu(in + 16 * i));
				ni_storeu(out + 16 * i, x[i]);
			}
		}
		acc_init(&a);
		acc_addp(&a, t, _mm_xor_si128(y, _mm_shuffle_epi8(x[0], BSWAP_MASK)), n);
		for (size_t i = 1; i < n; i++)
			acc_addp(&a, t, _mm_shuffle_epi8(x[i], BSWAP_MASK), n - i);
		y = acc_reduce(&a);
	}
	*cp = c;
	*yp = y;
}

/* ---- table entries ---- */

/* H = E_K(0^128); H' = rev(H) * x^-1 (shift left, fold P on carry, without a branch);
 * then the powers: the product of stored H'^i and H'^j is H'^(i+j) (the x of the multiply
 * cancels one of the two x^-1, see the top of the file). */
SECHO_NI_TARGET static void ni_hinit(secho_gcm_key *k)
{
	struct htab *t = (struct htab *)(void *)k->htab;
	__m128i h = _mm_shuffle_epi8(ni_enc1(&k->aes, _mm_setzero_si128()), BSWAP_MASK);
	__m128i carry = _mm_srai_epi32(_mm_shuffle_epi32(h, 0xff), 31); /* all ones if bit 127 */
	__m128i sh = _mm_or_si128(_mm_slli_epi64(h, 1), _mm_srli_epi64(_mm_slli_si128(h, 8), 63));
	__m128i poly = _mm_set_epi64x((long long)0xc200000000000000ull, 1);
	h = _mm_xor_si128(sh, _mm_and_si128(carry, poly));

	/* Depth 3 instead of 7: H^2; then H^3, H^4; then H^5..H^8 = H^4 * H^1..H^4. */
	t->h[0] = h;
	t->h[1] = gf_mul(h, h);
	t->h[2] = gf_mul(t->h[1], h);
	t->h[3] = gf_mul(t->h[1], t->h[1]);
	for (int i = 4; i < 8; i++)
		t->h[i] = gf_mul(t->h[3], t->h[i - 4]);
	for (int i = 0; i < 8; i++)
		t->kh[i] = _mm_xor_si128(t->h[i], _mm_shuffle_epi32(t->h[i], 0x4e));
}

SECHO_NI_TARGET static void ni_ghash(const secho_gcm_key *k, uint8_t y[16], const uint8_t *in,
                                     size_t nblocks)
{
	__m128i v = load_rev(y);
	v = ghash_rev(HT(k), v, in, nblocks);
	ni_storeu(y, _mm_shuffle_epi8(v, BSWAP_MASK));
}

SECHO_NI_TARGET static void ni_ctr32(const secho_aes_key *k, uint8_t ctr[16], uint8_t *out,
                                     const uint8_t *in, size_t nblocks)
{
	__m128i c = _mm_shuffle_epi8(ni_loadu(ctr), CTR_MASK), b[8];
	for (; nblocks >= 8; nblocks -= 8, in += 128, out += 128) {
		for (int i = 0; i < 8; i++)
			b[i] = ctr_at(c, i);
		c = _mm_add_epi32(c, _mm_set_epi32(8, 0, 0, 0));
		ni_enc_n(k, b, 8);
		for (int i = 0; i < 8; i++)
			ni_storeu(out + 16 * i, _mm_xor_si128(b[i], ni_loadu(in + 16 * i)));
	}
	if (nblocks) {
		for (size_t i = 0; i < nblocks; i++)
			b[i] = ctr_at(c, (int)i);
		c = _mm_add_epi32(c, _mm_set_epi32((int)nblocks, 0, 0, 0));
		enc_var(k, b, nblocks);
		for (size_t i = 0; i < nblocks; i++)
			ni_storeu(out + 16 * i, _mm_xor_si128(b[i], ni_loadu(in + 16 * i)));
	}
	ni_storeu(ctr, _mm_shuffle_epi8(c, CTR_MASK));
}

SECHO_NI_TARGET static void ni_enc_blocks(const secho_gcm_key *k, uint8_t ctr[16], uint8_t y[16],
                                          uint8_t *out, const uint8_t *in, size_t nblocks)
{
	__m128i c = _mm_shuffle_epi8(ni_loadu(ctr), CTR_MASK), v = load_rev(y);
	crypt_blocks(k, &c, &v, out, in, nblocks, false);
	ni_storeu(ctr, _mm_shuffle_epi8(c, CTR_MASK));
	ni_storeu(y, _mm_shuffle_epi8(v, BSWAP_MASK));
}

SECHO_NI_TARGET static void ni_dec_blocks(const secho_gcm_key *k, uint8_t ctr[16], uint8_t y[16],
                                          uint8_t *out, const uint8_t *in, size_t nblocks)
{
	__m128i c = _mm_shuffle_epi8(ni_loadu(ctr), CTR_MASK), v = load_rev(y);
	crypt_blocks(k, &c, &v, out, in, nblocks, true);
	ni_storeu(ctr, _mm_shuffle_epi8(c, CTR_MASK));
	ni_storeu(y, _mm_shuffle_epi8(v, BSWAP_MASK));
}

/*
 * Short messages: when AAD blocks + text blocks + the length block number at most 8, the
 * whole GHASH is one aggregated sum (block i of t times H^(t-i)) with a single reduction,
 * and E(J0) rides in the same AES batch as the keystream. The AAD products do not depend
 * on the AES, so they overlap it. Returns the tag block (E(J0) ^ S) in byte order.
 */
SECHO_NI_INLINE __m128i short_msg(const secho_gcm_key *k, __m128i j0, const uint8_t *aad,
                                  size_t aad_len, uint8_t *out, const uint8_t *in, size_t len,
                                  size_t na, size_t nc, bool dec)
{
	const struct htab *t = HT(k);
	size_t p = na + nc + 1, r = len & 15, nf = len >> 4;
	__m128i b[8], c = _mm_shuffle_epi8(j0, CTR_MASK);
	struct acc a;

	/* Every index into b[] below is a constant after unrolling, so the blocks stay in
	 * registers; the branches test public lengths only. */
	b[0] = j0;
#pragma GCC unroll 7
	for (int i = 1; i < 8; i++)
		b[i] = ctr_at(c, i);

	acc_init(&a);
	for (size_t i = 0; i < aad_len >> 4; i++)
		acc_addp(&a, t, load_rev(aad + 16 * i), p--);
	if (aad_len & 15)
		acc_addp(&a, t,
		         _mm_shuffle_epi8(load_part(aad + (aad_len & ~(size_t)15), aad_len & 15),
		                          BSWAP_MASK),
		         p--);

	/* Exactly nc + 1 chains: back-to-back packets are bound by AES throughput. */
	switch (nc) {
	case 0:
		ni_enc_n(&k->aes, b, 1);
		break;
	case 1:
		ni_enc_n(&k->aes, b, 2);
		break;
	case 2:
		ni_enc_n(&k->aes, b, 3);
		break;
	case 3:
		ni_enc_n(&k->aes, b, 4);
		break;
	case 4:
		ni_enc_n(&k->aes, b, 5);
		break;
	case 5:
		ni_enc_n(&k->aes, b, 6);
		break;
	case 6:
		ni_enc_n(&k->aes, b, 7);
		break;
	default:
		ni_enc_n(&k->aes, b, 8);
		break;
	}

#pragma GCC unroll 7
	for (int i = 0; i < 7; i++) {
		if ((size_t)i < nf) {
			__m128i x = ni_loadu(in + 16 * i);
			__m128i o = _mm_xor_si128(x, b[i + 1]);
			ni_storeu(out + 16 * i, o);
			acc_addp(&a, t, _mm_shuffle_epi8(dec ? x : o, BSWAP_MASK), p--);
		} else {
			if (r) {
				__m128i x = load_part(in + 16 * i, r);
				__m128i o = _mm_and_si128(_mm_xor_si128(x, b[i + 1]), keep_mask(r));
				store_part(out + 16 * i, o, r);
				acc_addp(&a, t, _mm_shuffle_epi8(dec ? x : o, BSWAP_MASK), p--);
			}
			break;
		}
	}
	acc_addp(&a, t, len_block(aad_len, len), 1);
	return _mm_xor_si128(b[0], _mm_shuffle_epi8(acc_reduce(&a), BSWAP_MASK));
}

/* Any length: AAD, fused bulk, partial tail, length block, each reduced on its own. */
SECHO_NI_INLINE __m128i long_msg(const secho_gcm_key *k, __m128i j0, const uint8_t *aad,
                                 size_t aad_len, uint8_t *out, const uint8_t *in, size_t len,
                                 bool dec)
{
	const struct htab *t = HT(k);
	__m128i c = _mm_shuffle_epi8(j0, CTR_MASK), y = _mm_setzero_si128();
	size_t r = len & 15, nf = len >> 4;
	__m128i ek0 = ni_enc1(&k->aes, j0);

	y = ghash_rev(t, y, aad, aad_len >> 4);
	if (aad_len & 15) {
		__m128i x = load_part(aad + (aad_len & ~(size_t)15), aad_len & 15);
		y = gf_mul(_mm_xor_si128(y, _mm_shuffle_epi8(x, BSWAP_MASK)), t->h[0]);
	}
	c = _mm_add_epi32(c, _mm_set_epi32(1, 0, 0, 0));
	crypt_blocks(k, &c, &y, out, in, nf, dec);
	struct acc a;
	acc_init(&a);
	if (r) {
		__m128i x = load_part(in + 16 * nf, r);
		__m128i ks = ni_enc1(&k->aes, _mm_shuffle_epi8(c, CTR_MASK));
		__m128i o = _mm_and_si128(_mm_xor_si128(x, ks), keep_mask(r));
		store_part(out + 16 * nf, o, r);
		acc_addp(&a, t, _mm_xor_si128(y, _mm_shuffle_epi8(dec ? x : o, BSWAP_MASK)), 2);
		acc_addp(&a, t, len_block(aad_len, len), 1);
	} else {
		acc_addp(&a, t, _mm_xor_si128(y, len_block(aad_len, len)), 1);
	}
	return _mm_xor_si128(ek0, _mm_shuffle_epi8(acc_reduce(&a), BSWAP_MASK));
}

SECHO_NI_INLINE __m128i whole_msg(const secho_gcm_key *k, const uint8_t iv[12], const uint8_t *aad,
                                  size_t aad_len, uint8_t *out, const uint8_t *in, size_t len,
                                  bool dec)
{
	__m128i j0 = j0_from_iv(iv);
	size_t na = (aad_len + 15) >> 4, nc = (len + 15) >> 4;
	if (na + nc < 8)
		return short_msg(k, j0, aad, aad_len, out, in, len, na, nc, dec);
	return long_msg(k, j0, aad, aad_len, out, in, len, dec);
}

SECHO_NI_TARGET static int ni_seal96(const secho_gcm_key *k, const uint8_t iv[12],
                                     const uint8_t *aad, size_t aad_len, uint8_t *out,
                                     const uint8_t *in, size_t len, uint8_t *tag, size_t tag_len)
{
	__m128i s = whole_msg(k, iv, aad, aad_len, out, in, len, false);
	if (tag_len == 16)
		ni_storeu(tag, s);
	else
		store_part(tag, s, tag_len);
	return SECHO_OK;
}

/* The tag is compared over all tag_len bytes at once (PCMPEQB, PMOVMSKB); only the
 * verdict is branched on. On failure the released plaintext is zeroed. */
SECHO_NI_TARGET static int ni_open96(const secho_gcm_key *k, const uint8_t iv[12],
                                     const uint8_t *aad, size_t aad_len, uint8_t *out,
                                     const uint8_t *in, size_t len, const uint8_t *tag,
                                     size_t tag_len)
{
	__m128i s = whole_msg(k, iv, aad, aad_len, out, in, len, true);
	__m128i g = tag_len == 16 ? ni_loadu(tag) : load_part(tag, tag_len);
	unsigned eq = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(s, g));
	unsigned want = (1u << tag_len) - 1;
	if ((eq & want) != want) {
		if (len)
			memset(out, 0, len);
		return SECHO_EAUTH;
	}
	return SECHO_OK;
}

const struct secho_gcm_impl secho_gcm_ni_impl = {
        .name = "aesni",
        .id = SECHO_IMPL_AESNI,
        .aes = &secho_aes_ni_impl,
        .hinit = ni_hinit,
        .ghash = ni_ghash,
        .ctr32 = ni_ctr32,
        .enc_blocks = ni_enc_blocks,
        .dec_blocks = ni_dec_blocks,
        .seal96 = ni_seal96,
        .open96 = ni_open96,
};
