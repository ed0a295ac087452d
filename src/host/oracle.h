/*
 * src/host/oracle.h - the host tool's independent AES-256-GCM (nettle).
 *
 * The host verifies every response the endpoint sends against this oracle. It is built on
 * nettle on purpose: it shares no code with secho's own crypto library (src/crypto/, used by
 * the streaming engine) nor with OpenSSL / ipsec-mb (the offload engine's backends), so a
 * bug in either engine cannot hide behind the same bug in the checker.
 */
#ifndef SECHO_HOST_ORACLE_H
#define SECHO_HOST_ORACLE_H

#include "secho/proto.h"

#include <nettle/gcm.h>
#include <stddef.h>
#include <stdint.h>

#define SECHO_SHA256_LEN 32

/* One expanded AES-256 key and its GHASH key; reused for every message (set_iv resets the
 * per-message state, the key schedule stays). Not thread-safe: one oracle per thread. */
struct secho_oracle {
	struct gcm_aes256_ctx gcm;
};

/* Expands key (32 bytes). Can't fail. */
void secho_oracle_init(struct secho_oracle *o, const uint8_t key[SECHO_KEY_LEN]);
/* Wipes the expanded key. */
void secho_oracle_wipe(struct secho_oracle *o);

/* Encrypts n bytes of pt (ct may equal pt) under iv with aad, writes the 16-byte tag.
 * Can't fail. */
void secho_oracle_seal(struct secho_oracle *o, const uint8_t iv[SECHO_IV_LEN], const uint8_t *aad,
                       size_t aad_len, const uint8_t *pt, size_t n, uint8_t *ct,
                       uint8_t tag[SECHO_TAG_LEN]);

/* Decrypts n bytes of ct into pt and computes the tag; returns 1 when it equals tag
 * (compared in constant time), 0 otherwise. pt is written either way: callers that care
 * about unauthenticated plaintext must discard it on 0. */
int secho_oracle_open(struct secho_oracle *o, const uint8_t iv[SECHO_IV_LEN], const uint8_t *aad,
                      size_t aad_len, const uint8_t *ct, size_t n, uint8_t *pt,
                      const uint8_t tag[SECHO_TAG_LEN]);

/* Decrypts the first n bytes of ct without authenticating them (GCM's keystream does not
 * depend on the AAD): used only to read a response's request id before verifying it. */
void secho_oracle_peek(struct secho_oracle *o, const uint8_t iv[SECHO_IV_LEN], const uint8_t *ct,
                       size_t n, uint8_t *pt);

/* SHA-256 of n bytes (nettle). Can't fail. */
void secho_oracle_sha256(const uint8_t *p, size_t n, uint8_t out[SECHO_SHA256_LEN]);

#endif
