/*
 * tests/unit/cryptoref.h - the references the crypto tests share: OpenSSL EVP as the
 * independent implementation (never ours), the bit-by-bit GHASH of SP 800-38D (the
 * deliberately naive one), keys set up directly through an implementation's tables (the
 * way aes.c and gcm.c do it, so a table can be tested without the dispatch), and the
 * sentinel bytes that must survive after every output buffer.
 *
 * Single-threaded: the EVP context is one static context, made on first use.
 */
#ifndef SECHO_TEST_CRYPTOREF_H
#define SECHO_TEST_CRYPTOREF_H

#include "crypto/inner.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REF_SENTINEL 0xa5 /* the byte every sentinel tail is filled with */

/*
 * One-shot AES in mode 'e' ECB, 'c' CBC, 't' CTR (128-bit big-endian counter), 'f' CFB128,
 * 'o' OFB through OpenSSL EVP, without padding; kl 16, 24 or 32; iv NULL for ECB. True when
 * OpenSSL did it (all len bytes written).
 */
bool ref_evp(char mode, const uint8_t *key, size_t kl, const uint8_t *iv, int enc, uint8_t *out,
             const uint8_t *in, size_t len);
/* AES-GCM seal through OpenSSL EVP: an IV of iv_len bytes (12 is the usual), a 16-byte tag
 * in its own buffer. True when OpenSSL did it. */
bool ref_evp_gcm_seal(const uint8_t *key, size_t kl, const uint8_t *iv, size_t iv_len,
                      const uint8_t *aad, size_t aad_len, uint8_t *out, const uint8_t *in,
                      size_t len, uint8_t tag[16]);

/* z = x * y in GF(2^128), SP 800-38D 6.3 Algorithm 1, one bit at a time. */
void ref_gf_mul(uint8_t z[16], const uint8_t x[16], const uint8_t y[16]);
/* y = GHASH_H(y, in[0..16*nblocks)) with ref_gf_mul. */
void ref_ghash(const uint8_t h[16], uint8_t y[16], const uint8_t *in, size_t nblocks);

/* Expand key into k through the AES table a (kl 16, 24, 32); no availability check. */
void ref_mk_aes(secho_aes_key *k, const struct secho_aes_impl *a, const uint8_t *key, size_t kl);
/* The same for a GCM key through the GCM table g (its AES table, then H). */
void ref_mk_gcm(secho_gcm_key *k, const struct secho_gcm_impl *g, const uint8_t *key, size_t kl);

/* Fill n sentinel bytes at p; true when all n are still there. */
void ref_sentinel_fill(uint8_t *p, size_t n);
bool ref_sentinel_ok(const uint8_t *p, size_t n);

#endif
