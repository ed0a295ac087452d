/*
 * src/crypto/inner.h - private to the crypto library: implementation tables and
 * constant-time helpers. Nothing here is part of the public API.
 *
 * An implementation is a pair of tables: secho_aes_impl (block cipher and the modes it
 * accelerates) and secho_gcm_impl (GHASH and GCM bulk work). Optional entries may be
 * NULL: the generic code in modes.c / gcm.c then composes them from the required ones.
 * All entries are called with arguments already validated by the public functions
 * (non-NULL pointers, whole blocks where stated, nblocks may be 0).
 */
#ifndef SECHO_CRYPTO_INNER_H
#define SECHO_CRYPTO_INNER_H

#include <string.h>

#include "secho/aes.h"
#include "secho/gcm.h"
#include "secho/modes.h"

struct secho_aes_impl {
	const char *name;
	secho_impl_id id;
	bool (*available)(void); /* CPU has what this needs */

	/* Required. key_len is 16, 24 or 32; k->rounds and k->key_len are already set.
	 * Fills k->u for both directions; must not touch k->impl. */
	void (*keysched)(secho_aes_key *k, const uint8_t *key, size_t key_len);
	void (*ecb_enc)(const secho_aes_key *k, uint8_t *out, const uint8_t *in, size_t nblocks);
	void (*ecb_dec)(const secho_aes_key *k, uint8_t *out, const uint8_t *in, size_t nblocks);

	/* Optional accelerations (NULL = generic composition from ecb_enc/ecb_dec). */
	/* CTR with a 128-bit big-endian counter; ctr is advanced by nblocks. */
	void (*ctr128)(const secho_aes_key *k, uint8_t ctr[16], uint8_t *out, const uint8_t *in,
	               size_t nblocks);
	void (*cbc_enc)(const secho_aes_key *k, uint8_t iv[16], uint8_t *out, const uint8_t *in,
	                size_t nblocks);
	void (*cbc_dec)(const secho_aes_key *k, uint8_t iv[16], uint8_t *out, const uint8_t *in,
	                size_t nblocks);
	/* CFB128 decryption of whole blocks (parallel); iv advanced to the last C block. */
	void (*cfb_dec)(const secho_aes_key *k, uint8_t iv[16], uint8_t *out, const uint8_t *in,
	                size_t nblocks);
	/* CFB128 encryption of whole blocks (serial: C_i = E(C_(i-1)) ^ P_i); iv advanced to
	 * the last C block. In place allowed. */
	void (*cfb_enc)(const secho_aes_key *k, uint8_t iv[16], uint8_t *out, const uint8_t *in,
	                size_t nblocks);
	/* OFB over whole blocks (serial: O_i = E(O_(i-1)), out = in ^ O_i); iv advanced to
	 * the last O block. In place allowed. */
	void (*ofb)(const secho_aes_key *k, uint8_t iv[16], uint8_t *out, const uint8_t *in,
	            size_t nblocks);
};

struct secho_gcm_impl {
	const char *name;
	secho_impl_id id;
	const struct secho_aes_impl *aes;

	/* Required. Called after k->aes is set up: compute H = E_K(0^128) and fill k->htab. */
	void (*hinit)(secho_gcm_key *k);
	/* Required. y = (y ^ X_1) * H ... over nblocks 16-byte blocks; y is big-endian bytes as
	 * in SP 800-38D. */
	void (*ghash)(const secho_gcm_key *k, uint8_t y[16], const uint8_t *in, size_t nblocks);
	/* Required. GCTR keystream XOR with inc32 (last 4 bytes big-endian, mod 2^32);
	 * ctr advanced by nblocks. */
	void (*ctr32)(const secho_aes_key *k, uint8_t ctr[16], uint8_t *out, const uint8_t *in,
	              size_t nblocks);

	/* Optional fused bulk: encrypt nblocks with ctr32 and GHASH the ciphertext into y.
	 * NULL = ctr32 then ghash. */
	void (*enc_blocks)(const secho_gcm_key *k, uint8_t ctr[16], uint8_t y[16], uint8_t *out,
	                   const uint8_t *in, size_t nblocks);
	void (*dec_blocks)(const secho_gcm_key *k, uint8_t ctr[16], uint8_t y[16], uint8_t *out,
	                   const uint8_t *in, size_t nblocks);

	/* Optional whole-message fast paths for 96-bit IVs (arguments validated, lengths
	 * within limits, tag_len 4..16). NULL = generic. open must zero out on failure and
	 * compare in constant time. */
	int (*seal96)(const secho_gcm_key *k, const uint8_t iv[12], const uint8_t *aad,
	              size_t aad_len, uint8_t *out, const uint8_t *in, size_t len, uint8_t *tag,
	              size_t tag_len);
	int (*open96)(const secho_gcm_key *k, const uint8_t iv[12], const uint8_t *aad,
	              size_t aad_len, uint8_t *out, const uint8_t *in, size_t len,
	              const uint8_t *tag, size_t tag_len);
	/* Optional batch (messages validated, n 1..SECHO_GCM_BATCH_MAX). NULL = loop. */
	void (*seal_batch)(const secho_gcm_key *k, secho_gcm_msg *msgs, size_t n);
	void (*open_batch)(const secho_gcm_key *k, secho_gcm_msg *msgs, size_t n);
};

/* Implementation tables; each file defines its own. */
extern const struct secho_aes_impl secho_aes_ct64_impl;       /* aes_ct64.c   */
extern const struct secho_gcm_impl secho_gcm_ct64_impl;       /* ghash_ctmul64.c */
extern const struct secho_aes_impl secho_aes_ni_impl;         /* aes_ni.c     */
extern const struct secho_gcm_impl secho_gcm_ni_impl;         /* gcm_ni.c     */
extern const struct secho_aes_impl secho_aes_vaes_impl;       /* aes_vaes.c   */
extern const struct secho_gcm_impl secho_gcm_vaes_impl;       /* gcm_vaes.c   */
extern const struct secho_aes_impl secho_aes_vaes_split_impl; /* aes_vaes.c    */
extern const struct secho_gcm_impl secho_gcm_vaes_split_impl; /* gcm_vaes_split.c */

/* impl.c: table for an id (AUTO resolved); NULL if unavailable. */
const struct secho_aes_impl *secho_aes_impl_get(secho_impl_id id);
const struct secho_gcm_impl *secho_gcm_impl_get(secho_impl_id id);

/* cpu.c: feature bits, detected once (CPUID + XGETBV for OS-enabled state). */
enum {
	SECHO_CPU_AESNI = 1u << 0,
	SECHO_CPU_PCLMUL = 1u << 1,
	SECHO_CPU_SSE41 = 1u << 2,
	SECHO_CPU_AVX2 = 1u << 3,
	SECHO_CPU_AVX512F = 1u << 4,
	SECHO_CPU_AVX512BW = 1u << 5,
	SECHO_CPU_AVX512VL = 1u << 6,
	SECHO_CPU_VAES = 1u << 7,
	SECHO_CPU_VPCLMUL = 1u << 8,
	/* Not an instruction set: the core executes 512-bit instructions as two 256-bit
	 * halves (AMD family 19h; cpu.c says how it is decided). Steers secho_impl_best(). */
	SECHO_CPU_SPLIT512 = 1u << 9,
};
unsigned secho_cpu_features(void);

/* ---- constant-time helpers (contract: no branch and no memory index depends on the
 * values compared; the compiler barrier keeps the accumulation from being shortcut) ---- */

/* 0 when a[0..n) == b[0..n), non-zero otherwise. Time depends on n only. */
static inline unsigned secho_ct_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
	unsigned acc = 0;
	for (size_t i = 0; i < n; i++)
		acc |= (unsigned)(a[i] ^ b[i]);
	__asm__ volatile("" : "+r"(acc));
	return acc;
}

/* Byte helpers (no alignment assumed). */
static inline uint32_t secho_load_be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}
static inline void secho_store_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}
static inline uint64_t secho_load_be64(const uint8_t *p)
{
	return ((uint64_t)secho_load_be32(p) << 32) | secho_load_be32(p + 4);
}
static inline void secho_store_be64(uint8_t *p, uint64_t v)
{
	secho_store_be32(p, (uint32_t)(v >> 32));
	secho_store_be32(p + 4, (uint32_t)v);
}
static inline void secho_xor16(uint8_t *d, const uint8_t *a, const uint8_t *b)
{
	for (int i = 0; i < 16; i++)
		d[i] = (uint8_t)(a[i] ^ b[i]);
}
/* 128-bit big-endian counter increment (SP 800-38A B.1, modulo 2^128). Public data. */
static inline void secho_inc128(uint8_t c[16])
{
	for (int i = 15; i >= 0; i--)
		if (++c[i] != 0)
			break;
}
/* GCM inc32: last 32 bits, big-endian, modulo 2^32. */
static inline void secho_inc32(uint8_t c[16])
{
	secho_store_be32(c + 12, secho_load_be32(c + 12) + 1);
}

#endif
