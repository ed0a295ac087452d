/*
 * src/host/oracle_nettle.c - AES-256-GCM and SHA-256 for the host's verifier, via nettle.
 * Contract: src/host/oracle.h. Independence from the engines is the point of this file: it
 * must not include any secho/ crypto header nor OpenSSL.
 */
#include "host/oracle.h"

#include <nettle/memops.h>
#include <nettle/sha2.h>
#include <string.h>

void secho_oracle_init(struct secho_oracle *o, const uint8_t key[SECHO_KEY_LEN])
{
	gcm_aes256_set_key(&o->gcm, key);
}

void secho_oracle_wipe(struct secho_oracle *o)
{
	/* explicit_bzero: the compiler may not drop it as a dead store. */
	explicit_bzero(o, sizeof(*o));
}

void secho_oracle_seal(struct secho_oracle *o, const uint8_t iv[SECHO_IV_LEN], const uint8_t *aad,
                       size_t aad_len, const uint8_t *pt, size_t n, uint8_t *ct,
                       uint8_t tag[SECHO_TAG_LEN])
{
	gcm_aes256_set_iv(&o->gcm, SECHO_IV_LEN, iv);
	if (aad_len)
		gcm_aes256_update(&o->gcm, aad_len, aad);
	if (n)
		gcm_aes256_encrypt(&o->gcm, n, ct, pt);
	gcm_aes256_digest(&o->gcm, SECHO_TAG_LEN, tag);
}

int secho_oracle_open(struct secho_oracle *o, const uint8_t iv[SECHO_IV_LEN], const uint8_t *aad,
                      size_t aad_len, const uint8_t *ct, size_t n, uint8_t *pt,
                      const uint8_t tag[SECHO_TAG_LEN])
{
	uint8_t want[SECHO_TAG_LEN];
	int ok;

	gcm_aes256_set_iv(&o->gcm, SECHO_IV_LEN, iv);
	if (aad_len)
		gcm_aes256_update(&o->gcm, aad_len, aad);
	if (n)
		gcm_aes256_decrypt(&o->gcm, n, pt, ct);
	gcm_aes256_digest(&o->gcm, SECHO_TAG_LEN, want);
	ok = memeql_sec(want, tag, SECHO_TAG_LEN);
	explicit_bzero(want, sizeof(want));
	return ok;
}

void secho_oracle_peek(struct secho_oracle *o, const uint8_t iv[SECHO_IV_LEN], const uint8_t *ct,
                       size_t n, uint8_t *pt)
{
	gcm_aes256_set_iv(&o->gcm, SECHO_IV_LEN, iv);
	if (n)
		gcm_aes256_decrypt(&o->gcm, n, pt, ct);
}

void secho_oracle_sha256(const uint8_t *p, size_t n, uint8_t out[SECHO_SHA256_LEN])
{
	struct sha256_ctx c;

	sha256_init(&c);
	sha256_update(&c, n, p);
	sha256_digest(&c, SECHO_SHA256_LEN, out);
}
