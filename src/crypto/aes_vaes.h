/*
 * src/crypto/aes_vaes.h - private to aes_vaes.c and gcm_vaes.c: inline AES round helpers
 * on 512-bit registers (VAES), four 16-byte blocks per register.
 *
 * Every function here must be called from a function compiled for VAES_TARGET; they are
 * always_inline so that the target of the caller applies and the round loops unroll into
 * the caller's register allocation.
 *
 * Constant-time: AES rounds are single instructions (vaesenc/vaesdec) whose timing does
 * not depend on data; no table lookups.
 */
#ifndef SECHO_CRYPTO_AES_VAES_H
#define SECHO_CRYPTO_AES_VAES_H

#include <immintrin.h>

#include "crypto/inner.h"

#define VAES_ISA    "vaes,vpclmulqdq,avx512f,avx512bw,avx512vl,aes,pclmul,sse4.1"
#define VAES_TARGET __attribute__((target(VAES_ISA)))
#define VAES_INLINE static inline __attribute__((always_inline, target(VAES_ISA)))

/* Run-time check shared by both tables: VAES + VPCLMULQDQ on ZMM, AVX-512 F/BW/VL, AES-NI. */
bool secho_vaes_available(void);

/* Round keys broadcast to all four lanes: rk[0..rounds]. */
struct vaes_rk {
	__m512i k[SECHO_AES_MAX_ROUNDS + 1];
	unsigned rounds;
};

VAES_INLINE void vaes_load_rk(struct vaes_rk *r, const secho_aes_key *k, int dec)
{
	r->rounds = k->rounds;
	for (unsigned i = 0; i <= k->rounds; i++)
		r->k[i] = _mm512_broadcast_i32x4(_mm_load_si128((const __m128i *)k->u.rk[dec][i]));
}

/* The same with the round count known at compile time (nr == k->rounds, or 0: k->rounds):
 * a constant unrolls the loads, so the keys stay in registers instead of going through an
 * array on the stack. */
VAES_INLINE void vaes_load_rk_nr(struct vaes_rk *r, const secho_aes_key *k, const unsigned nr)
{
	if (!nr) {
		vaes_load_rk(r, k, 0);
		return;
	}
	r->rounds = nr;
#pragma GCC unroll 15
	for (unsigned i = 0; i <= nr; i++)
		r->k[i] = _mm512_broadcast_i32x4(_mm_load_si128((const __m128i *)k->u.rk[0][i]));
}

/* Encrypt n (compile-time constant after inlining) registers in place with `rounds`
 * rounds (== r->rounds; a constant there unrolls the round loop); the round loop is
 * outermost so that the n independent vaesenc chains interleave and hide latency. */
VAES_INLINE void vaes_enc_nr(__m512i *b, int n, const struct vaes_rk *r, const unsigned rounds)
{
#pragma GCC unroll 16
	for (int j = 0; j < n; j++)
		b[j] = _mm512_xor_si512(b[j], r->k[0]);
#pragma GCC unroll 14
	for (unsigned i = 1; i < rounds; i++)
#pragma GCC unroll 16
		for (int j = 0; j < n; j++)
			b[j] = _mm512_aesenc_epi128(b[j], r->k[i]);
#pragma GCC unroll 16
	for (int j = 0; j < n; j++)
		b[j] = _mm512_aesenclast_epi128(b[j], r->k[rounds]);
}

VAES_INLINE void vaes_enc_n(__m512i *b, int n, const struct vaes_rk *r)
{
	vaes_enc_nr(b, n, r, r->rounds);
}

/* Same with the decryption round keys (equivalent inverse cipher, FIPS-197 5.3.5). */
VAES_INLINE void vaes_dec_n(__m512i *b, int n, const struct vaes_rk *r)
{
#pragma GCC unroll 16
	for (int j = 0; j < n; j++)
		b[j] = _mm512_xor_si512(b[j], r->k[0]);
	for (unsigned i = 1; i < r->rounds; i++)
#pragma GCC unroll 16
		for (int j = 0; j < n; j++)
			b[j] = _mm512_aesdec_epi128(b[j], r->k[i]);
#pragma GCC unroll 16
	for (int j = 0; j < n; j++)
		b[j] = _mm512_aesdeclast_epi128(b[j], r->k[r->rounds]);
}

/* One block in an XMM register with the encryption keys straight from the key. */
VAES_INLINE __m128i vaes_enc1(const secho_aes_key *k, __m128i x)
{
	x = _mm_xor_si128(x, _mm_load_si128((const __m128i *)k->u.rk[0][0]));
	for (unsigned i = 1; i < k->rounds; i++)
		x = _mm_aesenc_si128(x, _mm_load_si128((const __m128i *)k->u.rk[0][i]));
	return _mm_aesenclast_si128(x, _mm_load_si128((const __m128i *)k->u.rk[0][k->rounds]));
}

/* Qword mask selecting the first nb (0..4) blocks of a register, for masked loads. */
VAES_INLINE __mmask8 vaes_blkmask(size_t nb)
{
	return (__mmask8)((1u << (2 * nb)) - 1);
}

/* Byte order reversal inside each 128-bit lane (big-endian block <-> integer). */
VAES_INLINE __m512i vaes_bswap_mask(void)
{
	return _mm512_broadcast_i32x4(
	        _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
}

#endif
