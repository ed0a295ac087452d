/*
 * src/crypto/aes_ni.h - private to aes_ni.c and gcm_ni.c: AES-NI round helpers.
 *
 * Every function here is static inline and carries SECHO_NI_TARGET, so it is compiled for
 * AES-NI/PCLMULQDQ/SSE4.1 without any global -m flag; only code reached after the run-time
 * check in secho_aes_ni_impl.available() may call it.
 *
 * Round keys live in k->u.rk[0] (encryption, FIPS-197 order) and k->u.rk[1] (the
 * equivalent inverse cipher of FIPS-197 5.3.5: reversed, middle keys through InvMixColumns,
 * as AESDEC expects). Both are 16-byte aligned (the union is alignas(64)).
 *
 * Constant time: AESENC/AESDEC/PCLMULQDQ run in data-independent time; no branch or
 * address below depends on key or data, only on the public round count and block counts.
 */
#ifndef SECHO_CRYPTO_AES_NI_H
#define SECHO_CRYPTO_AES_NI_H

#include <immintrin.h>

#include "crypto/inner.h"

#define SECHO_NI_TARGET __attribute__((target("aes,pclmul,sse4.1,ssse3")))
#define SECHO_NI_INLINE static inline __attribute__((always_inline)) SECHO_NI_TARGET

/* Encrypt n independent blocks in b[] (n a compile-time constant after inlining, 1..8).
 * Each round key is loaded once and applied to all n blocks, so the n AESENC chains run
 * side by side (latency ~4, two per cycle: 8 chains keep both units busy). */
SECHO_NI_INLINE void ni_enc_n(const secho_aes_key *k, __m128i *b, int n)
{
	const __m128i *rk = (const __m128i *)k->u.rk[0];
	__m128i t = _mm_load_si128(rk);
#pragma GCC unroll 8
	for (int i = 0; i < n; i++)
		b[i] = _mm_xor_si128(b[i], t);
#pragma GCC unroll 13
	for (unsigned r = 1; r < 14; r++) {
		if (r >= k->rounds) /* public: 10, 12 or 14 */
			break;
		t = _mm_load_si128(rk + r);
#pragma GCC unroll 8
		for (int i = 0; i < n; i++)
			b[i] = _mm_aesenc_si128(b[i], t);
	}
	t = _mm_load_si128(rk + k->rounds);
#pragma GCC unroll 8
	for (int i = 0; i < n; i++)
		b[i] = _mm_aesenclast_si128(b[i], t);
}

/* Decrypt n independent blocks with the inverse-cipher keys. */
SECHO_NI_INLINE void ni_dec_n(const secho_aes_key *k, __m128i *b, int n)
{
	const __m128i *rk = (const __m128i *)k->u.rk[1];
	__m128i t = _mm_load_si128(rk);
#pragma GCC unroll 8
	for (int i = 0; i < n; i++)
		b[i] = _mm_xor_si128(b[i], t);
#pragma GCC unroll 13
	for (unsigned r = 1; r < 14; r++) {
		if (r >= k->rounds)
			break;
		t = _mm_load_si128(rk + r);
#pragma GCC unroll 8
		for (int i = 0; i < n; i++)
			b[i] = _mm_aesdec_si128(b[i], t);
	}
	t = _mm_load_si128(rk + k->rounds);
#pragma GCC unroll 8
	for (int i = 0; i < n; i++)
		b[i] = _mm_aesdeclast_si128(b[i], t);
}

SECHO_NI_INLINE __m128i ni_enc1(const secho_aes_key *k, __m128i x)
{
	ni_enc_n(k, &x, 1);
	return x;
}

SECHO_NI_INLINE __m128i ni_loadu(const uint8_t *p)
{
	return _mm_loadu_si128((const __m128i *)(const void *)p);
}

SECHO_NI_INLINE void ni_storeu(uint8_t *p, __m128i v)
{
	_mm_storeu_si128((__m128i *)(void *)p, v);
}

#endif
