/*
 * src/crypto/gcm_vaes.h - private to gcm_vaes.c and gcm_vaes_split.c: the GHASH
 * arithmetic on 512-bit registers, the key's table of powers and the small pieces of a
 * whole message (J0, length block, tag) that both VAES implementations share.
 *
 * GHASH arithmetic. SP 800-38D uses a bit-reflected field; we compute it as POLYVAL
 * (RFC 8452, appendix A): with every block byte-reversed (so the 16 bytes read as one
 * big-endian 128-bit integer, held little-endian in a register) and H replaced by
 * K = mulX(ByteReverse(H)), GHASH becomes Y = (Y + X) . K with the POLYVAL product
 * a . b = a * b * x^-128 mod Q, Q = x^128 + x^127 + x^126 + x^121 + 1. The x^-128 is a
 * Montgomery reduction folded in two 64-bit steps with one carry-less multiply each by
 * c = x^63 + x^62 + x^57 (0xc200000000000000), since Q = x^128 + c * x^64 + 1.
 *
 * Aggregation: with K_1 = K and K_(i+1) = K_i . K, the product A . K_i equals
 * A * K^i * x^(-128 i), so n Horner steps collapse into sum_j X_j . K_(n-j+1): products are
 * summed unreduced and reduced once. htab holds K_32..K_1 (entry j = K_(32-j)), so four
 * consecutive entries are the powers for four consecutive blocks in one register.
 *
 * Every function here must be called from a function compiled for VAES_TARGET (see
 * aes_vaes.h). Constant-time: no table lookups, no branch or address depends on key,
 * text or tag; branches and addresses depend on lengths only (public).
 */
#ifndef SECHO_CRYPTO_GCM_VAES_H
#define SECHO_CRYPTO_GCM_VAES_H

#include "crypto/aes_vaes.h"

#define NPOW  32  /* powers of K in htab */
#define HKOFF 512 /* offset of the Karatsuba halves: K_i.lo ^ K_i.hi in both qwords */

/* K_i, i in 1..NPOW. */
static inline const uint8_t *kpow(const secho_gcm_key *k, size_t i)
{
	return k->htab + 16 * (NPOW - i);
}

/* ---- GF(2^128) arithmetic, POLYVAL representation ---- */

VAES_INLINE __m128i gf_red(__m128i lo, __m128i hi)
{
	const __m128i c = _mm_set_epi64x(0, (long long)0xc200000000000000ull);
	__m128i v = _mm_xor_si128(_mm_shuffle_epi32(lo, 0x4e), _mm_clmulepi64_si128(lo, c, 0x00));
	v = _mm_xor_si128(_mm_shuffle_epi32(v, 0x4e), _mm_clmulepi64_si128(v, c, 0x00));
	return _mm_xor_si128(hi, v);
}

VAES_INLINE __m128i gf_dot(__m128i a, __m128i b)
{
	__m128i lo = _mm_clmulepi64_si128(a, b, 0x00);
	__m128i hi = _mm_clmulepi64_si128(a, b, 0x11);
	__m128i mid =
	        _mm_xor_si128(_mm_clmulepi64_si128(a, b, 0x01), _mm_clmulepi64_si128(a, b, 0x10));
	lo = _mm_xor_si128(lo, _mm_slli_si128(mid, 8));
	hi = _mm_xor_si128(hi, _mm_srli_si128(mid, 8));
	return gf_red(lo, hi);
}

/* Unreduced sums of products, four lanes, Karatsuba: lo = sum x0 h0, hi = sum x1 h1,
 * mid = sum (x0 + x1)(h0 + h1); the true middle term is mid + lo + hi (gacc_final). */
struct gacc {
	__m512i lo, mid, hi;
};

VAES_INLINE void gacc_zero(struct gacc *a)
{
	a->lo = a->mid = a->hi = _mm512_setzero_si512();
}

VAES_INLINE void gacc_mul(struct gacc *a, __m512i x, __m512i h, __m512i hk)
{
	__m512i xk = _mm512_xor_si512(x, _mm512_shuffle_epi32(x, _MM_PERM_BADC));
	a->lo = _mm512_xor_si512(a->lo, _mm512_clmulepi64_epi128(x, h, 0x00));
	a->hi = _mm512_xor_si512(a->hi, _mm512_clmulepi64_epi128(x, h, 0x11));
	a->mid = _mm512_xor_si512(a->mid, _mm512_clmulepi64_epi128(xk, hk, 0x00));
}

/* The accumulators as they are now, in registers: an empty asm the compiler cannot see
 * through, so that it adds each product as it comes instead of reassociating the sums
 * into a tree after all the products (which keeps every product alive at once and spills
 * them to the stack in the pipelined loops). */
VAES_INLINE void gacc_pin(struct gacc *a)
{
	__asm__("" : "+v"(a->lo), "+v"(a->mid), "+v"(a->hi));
}

/* x times the powers at p (a pointer into the K table; the halves are at p + HKOFF),
 * lanes selected by the qword mask m. */
VAES_INLINE void gacc_mulp(struct gacc *a, __m512i x, const uint8_t *p, __mmask8 m)
{
	gacc_mul(a, x, _mm512_maskz_loadu_epi64(m, p), _mm512_maskz_loadu_epi64(m, p + HKOFF));
}

/* Sum the four lanes and reduce: the POLYVAL sum of all accumulated products. */
VAES_INLINE __m128i gacc_final(const struct gacc *a)
{
	__m512i mid = _mm512_ternarylogic_epi64(a->mid, a->lo, a->hi, 0x96);
	__m512i lo = _mm512_xor_si512(a->lo, _mm512_bslli_epi128(mid, 8));
	__m512i hi = _mm512_xor_si512(a->hi, _mm512_bsrli_epi128(mid, 8));
	__m256i l4 = _mm256_xor_si256(_mm512_castsi512_si256(lo), _mm512_extracti64x4_epi64(lo, 1));
	__m256i h4 = _mm256_xor_si256(_mm512_castsi512_si256(hi), _mm512_extracti64x4_epi64(hi, 1));
	__m128i l2 = _mm_xor_si128(_mm256_castsi256_si128(l4), _mm256_extracti128_si256(l4, 1));
	__m128i h2 = _mm_xor_si128(_mm256_castsi256_si128(h4), _mm256_extracti128_si256(h4, 1));
	return gf_red(l2, h2);
}

/* Reduce each lane separately (four independent results). */
VAES_INLINE __m512i gacc_final4(const struct gacc *a)
{
	const __m512i c = _mm512_set1_epi64((long long)0xc200000000000000ull);
	__m512i mid = _mm512_ternarylogic_epi64(a->mid, a->lo, a->hi, 0x96);
	__m512i lo = _mm512_xor_si512(a->lo, _mm512_bslli_epi128(mid, 8));
	__m512i hi = _mm512_xor_si512(a->hi, _mm512_bsrli_epi128(mid, 8));
	/* The constant's high qword is never selected (imm 0x00), so a broadcast works. */
	__m512i v = _mm512_xor_si512(_mm512_shuffle_epi32(lo, _MM_PERM_BADC),
	                             _mm512_clmulepi64_epi128(lo, c, 0x00));
	v = _mm512_xor_si512(_mm512_shuffle_epi32(v, _MM_PERM_BADC),
	                     _mm512_clmulepi64_epi128(v, c, 0x00));
	return _mm512_xor_si512(hi, v);
}

VAES_INLINE __m128i bswap128(__m128i x)
{
	return _mm_shuffle_epi8(x,
	                        _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
}

/* Byte mask of the first n (0..64) bytes. */
VAES_INLINE __mmask64 bytemask64(size_t n)
{
	return n >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << n) - 1);
}

VAES_INLINE __mmask16 bytemask16(size_t n)
{
	return (__mmask16)(n >= 16 ? 0xffffu : ((1u << n) - 1));
}

/* ---- key setup ---- */

/*
 * H = E_K(0); K_1 = mulX(ByteReverse(H)) (RFC 8452 appendix A: multiply by x modulo Q,
 * i.e. shift left by one and fold the carried-out bit back as x^127 + x^126 + x^121 + 1);
 * K_(i+1) = K_i . K_1.
 */
VAES_INLINE __m128i ghash_k1(const secho_gcm_key *k)
{
	__m128i h = bswap128(vaes_enc1(&k->aes, _mm_setzero_si128()));
	__m128i carry = _mm_slli_si128(_mm_srli_epi64(h, 63), 8);
	__m128i top = _mm_shuffle_epi32(_mm_srai_epi32(h, 31), 0xff);
	__m128i k1 = _mm_or_si128(_mm_slli_epi64(h, 1), carry);
	return _mm_xor_si128(
	        k1, _mm_and_si128(top, _mm_set_epi64x((long long)0xc200000000000000ull, 1)));
}

/* htab for gcm_vaes.c: K_32..K_1 and their Karatsuba halves. */
VAES_INLINE void ghash_key_init(secho_gcm_key *k)
{
	const __m128i k1 = ghash_k1(k);
	__m128i p = k1;
	for (unsigned i = 1; i <= NPOW; i++) {
		_mm_storeu_si128((__m128i *)kpow(k, i), p);
		__m128i hk = _mm_xor_si128(p, _mm_shuffle_epi32(p, 0x4e));
		_mm_storeu_si128((__m128i *)(kpow(k, i) + HKOFF), hk);
		p = gf_dot(p, k1);
	}
}

/* ---- bulk GHASH ---- */

/* s = GHASH state (POLYVAL form) after absorbing nblocks blocks from memory. */
VAES_INLINE __m128i ghash_mem(const secho_gcm_key *k, __m128i s, const uint8_t *in, size_t nblocks)
{
	const __m512i bs = vaes_bswap_mask();
	while (nblocks) {
		size_t m = nblocks < NPOW ? nblocks : NPOW;
		const uint8_t *t = kpow(k, m);
		struct gacc a;
		gacc_zero(&a);
		for (size_t g = 0; 4 * g < m; g++) {
			size_t nb = m - 4 * g < 4 ? m - 4 * g : 4;
			__mmask8 msk = vaes_blkmask(nb);
			__m512i x =
			        _mm512_shuffle_epi8(_mm512_maskz_loadu_epi64(msk, in + 64 * g), bs);
			if (g == 0)
				x = _mm512_xor_si512(x, _mm512_zextsi128_si512(s));
			gacc_mulp(&a, x, t + 64 * g, msk);
		}
		s = gacc_final(&a);
		in += 16 * m;
		nblocks -= m;
	}
	return s;
}

/* ---- counter mode, inc32 ---- */

/*
 * Counters are kept byte-reversed per lane, where the GCM 32-bit counter (the last four
 * bytes, big-endian) is dword 0: a 32-bit add there is inc32 modulo 2^32 (SP 800-38D 6.2)
 * and never touches the other 96 bits. c holds blocks ctr+0..ctr+3.
 */
VAES_INLINE __m512i ctr32_first(__m128i ctr_be)
{
	__m512i c = _mm512_broadcast_i32x4(bswap128(ctr_be));
	return _mm512_add_epi32(c,
	                        _mm512_set_epi32(0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0));
}

VAES_INLINE __m512i ctr32_four(void)
{
	return _mm512_set_epi32(0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4);
}

/* ---- whole messages, 96-bit IV ---- */

/* J0 = IV || 0^31 || 1 (SP 800-38D 7.1 step 2), as bytes in a register. */
VAES_INLINE __m128i j0_of(const uint8_t iv[12])
{
	__m128i j = _mm_maskz_loadu_epi8(0x0fff, iv);
	return _mm_insert_epi32(j, 0x01000000, 3);
}

/* The length block len(A) || len(C) in bits, byte-reversed: qword 1 = AAD bits. */
VAES_INLINE __m128i lenblk(size_t aad_len, size_t len)
{
	const uint64_t abits = (uint64_t)aad_len << 3, cbits = (uint64_t)len << 3;
	return _mm_set_epi64x((long long)abits, (long long)cbits);
}

/*
 * Tag output: seal stores tag_len bytes and returns OK; open compares tag_len bytes in
 * constant time and on mismatch zeroes out[0..len) and returns SECHO_EAUTH.
 */
VAES_INLINE int tag_out(__m128i t, int enc, uint8_t *tag, size_t tag_len, uint8_t *out, size_t len)
{
	__mmask16 tm = bytemask16(tag_len);
	if (enc) {
		_mm_mask_storeu_epi8(tag, tm, t);
		return SECHO_OK;
	}
	__m128i d = _mm_maskz_mov_epi8(tm, _mm_xor_si128(t, _mm_maskz_loadu_epi8(tm, tag)));
	if (!_mm_testz_si128(d, d)) {
		secho_wipe(out, len);
		return SECHO_EAUTH;
	}
	return SECHO_OK;
}

#endif
