/*
 * secho/gcm.h - AES-GCM (NIST SP 800-38D).
 *
 * A key (secho_gcm_key) holds everything computed once per key: the AES round keys and
 * the GHASH key H with whatever powers/tables the implementation wants. It is immutable
 * after init and may be shared by threads. Per-message state lives in secho_gcm_ctx
 * (streaming) or on the stack of the one-shot calls.
 *
 * Limits (SP 800-38D 5.2.1.1): plaintext at most 2^36 - 32 bytes, AAD at most
 * 2^61 - 1 bytes, IV at least 1 byte (12 bytes is the fast path: J0 = IV || 0^31 || 1;
 * other lengths are GHASHed). Tags: 16 bytes when sealing one-shot or via finish with
 * tag_len 16; tag_len 4..16 accepted by finish/verify/open (truncated tags, SP 800-38D
 * 5.2.1.2 - short tags weaken authenticity and are the caller's choice).
 *
 * Decryption verifies the tag in constant time. The one-shot secho_gcm_open() releases
 * no plaintext on failure: `out` is zeroed and SECHO_EAUTH returned. The streaming
 * decrypt necessarily writes plaintext before the tag is checked; callers must discard
 * it when secho_gcm_verify() fails.
 */
#ifndef SECHO_GCM_H
#define SECHO_GCM_H

#include "secho/aes.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SECHO_GCM_TAG_LEN    16
#define SECHO_GCM_IV_LEN     12
#define SECHO_GCM_MAX_TEXT   ((UINT64_C(1) << 36) - 32)
#define SECHO_GCM_MAX_AAD    ((UINT64_C(1) << 61) - 1)
#define SECHO_GCM_HTAB_BYTES 1024 /* room for the implementation's powers of H */

struct secho_gcm_impl;

typedef struct secho_gcm_key {
	secho_aes_key aes;
	/* GHASH key material; layout private to the implementation (H, H^2, ... H^n,
	 * possibly pre-split for Karatsuba). */
	alignas(64) uint8_t htab[SECHO_GCM_HTAB_BYTES];
	const struct secho_gcm_impl *impl;
} secho_gcm_key;

/* key_len 16, 24 or 32. impl AUTO or specific (EUNAVAIL when the CPU lacks it). */
int secho_gcm_key_init(secho_gcm_key *k, const uint8_t *key, size_t key_len, secho_impl_id impl);
void secho_gcm_key_wipe(secho_gcm_key *k);
secho_impl_id secho_gcm_key_impl(const secho_gcm_key *k);

/* ---- streaming API: init, aad*, (encrypt_update|decrypt_update)*, finish|verify ---- */
typedef struct secho_gcm_ctx {
	const secho_gcm_key *key;
	alignas(16) uint8_t y[16];   /* GHASH accumulator */
	alignas(16) uint8_t j0[16];  /* pre-counter block */
	alignas(16) uint8_t ctr[16]; /* next counter block */
	alignas(16) uint8_t ks[16];  /* keystream of the current partial block */
	alignas(16) uint8_t buf[16]; /* partial AAD or ciphertext block awaiting GHASH */
	uint64_t aad_len, text_len;  /* bytes so far */
	unsigned buf_len;            /* bytes in buf */
	unsigned ks_used;            /* bytes of ks consumed (16 = none left) */
	int state;                   /* private */
} secho_gcm_ctx;

int secho_gcm_init(secho_gcm_ctx *c, const secho_gcm_key *k, const uint8_t *iv, size_t iv_len);
int secho_gcm_aad(secho_gcm_ctx *c, const uint8_t *aad, size_t len);
int secho_gcm_encrypt_update(secho_gcm_ctx *c, uint8_t *out, const uint8_t *in, size_t len);
int secho_gcm_decrypt_update(secho_gcm_ctx *c, uint8_t *out, const uint8_t *in, size_t len);
/* Compute the tag (first tag_len bytes, 4..16). Ends the message. */
int secho_gcm_finish(secho_gcm_ctx *c, uint8_t *tag, size_t tag_len);
/* Compare against tag (tag_len 4..16) in constant time: SECHO_OK or SECHO_EAUTH. */
int secho_gcm_verify(secho_gcm_ctx *c, const uint8_t *tag, size_t tag_len);
void secho_gcm_ctx_wipe(secho_gcm_ctx *c);

/* ---- one-shot API ---- */
/* Encrypt len bytes in -> out, write the tag (tag_len 4..16). */
int secho_gcm_seal(const secho_gcm_key *k, const uint8_t *iv, size_t iv_len, const uint8_t *aad,
                   size_t aad_len, uint8_t *out, const uint8_t *in, size_t len, uint8_t *tag,
                   size_t tag_len);
/* Decrypt and verify. On SECHO_EAUTH, out[0..len) is zeroed. */
int secho_gcm_open(const secho_gcm_key *k, const uint8_t *iv, size_t iv_len, const uint8_t *aad,
                   size_t aad_len, uint8_t *out, const uint8_t *in, size_t len, const uint8_t *tag,
                   size_t tag_len);

/* ---- batch API: N independent messages under one key, 96-bit IVs, 16-byte tags ---- */
#define SECHO_GCM_BATCH_MAX 32

typedef struct secho_gcm_msg {
	const uint8_t *iv; /* 12 bytes */
	const uint8_t *aad;
	size_t aad_len;
	const uint8_t *in;
	uint8_t *out; /* may equal in */
	size_t len;
	uint8_t *tag; /* 16 bytes: written by seal, read by open */
	int status;   /* out: SECHO_OK, SECHO_EAUTH (open; out zeroed) or SECHO_EINVAL */
} secho_gcm_msg;

/* n in 0..SECHO_GCM_BATCH_MAX. Returns SECHO_OK if every message succeeded, else the
 * first non-zero status (each message's own status is in msgs[i].status). */
int secho_gcm_seal_batch(const secho_gcm_key *k, secho_gcm_msg *msgs, size_t n);
int secho_gcm_open_batch(const secho_gcm_key *k, secho_gcm_msg *msgs, size_t n);

#ifdef __cplusplus
}
#endif
#endif
