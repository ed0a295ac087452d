/*
 * secho/modes.h - AES modes of operation: ECB, CBC, PCBC, CTR, CFB128, OFB.
 *
 * Block modes (ECB, CBC, PCBC) take whole blocks only: a length that is not a multiple
 * of 16 returns SECHO_ELEN and writes nothing (no padding is invented). They are
 * resumable in whole blocks: the IV buffer is updated to the chaining value, so calling
 * twice on consecutive block-aligned pieces equals one call.
 *
 * Stream modes (CTR, CFB, OFB) take any length and keep their position in a small
 * context: any split of the input into calls gives the same bytes as one call.
 *
 * References: NIST SP 800-38A (ECB, CBC, CFB128, OFB, CTR with a 128-bit big-endian
 * counter incremented modulo 2^128); PCBC as the Linux kernel's pcbc template:
 *   C_i = E(P_i ^ V_i),  P_i = D(C_i) ^ V_i,  V_1 = IV,  V_(i+1) = P_i ^ C_i.
 *
 * `out` may equal `in`. NULL is accepted only with a zero length.
 */
#ifndef SECHO_MODES_H
#define SECHO_MODES_H

#include "secho/aes.h"

#ifdef __cplusplus
extern "C" {
#endif

int secho_ecb_encrypt(const secho_aes_key *k, uint8_t *out, const uint8_t *in, size_t len);
int secho_ecb_decrypt(const secho_aes_key *k, uint8_t *out, const uint8_t *in, size_t len);

/* iv: 16 bytes, updated to the last ciphertext block (the next call's IV). */
int secho_cbc_encrypt(const secho_aes_key *k, uint8_t iv[16], uint8_t *out, const uint8_t *in,
                      size_t len);
int secho_cbc_decrypt(const secho_aes_key *k, uint8_t iv[16], uint8_t *out, const uint8_t *in,
                      size_t len);

/* iv: 16 bytes, updated to P_n ^ C_n (the next call's chaining value). */
int secho_pcbc_encrypt(const secho_aes_key *k, uint8_t iv[16], uint8_t *out, const uint8_t *in,
                       size_t len);
int secho_pcbc_decrypt(const secho_aes_key *k, uint8_t iv[16], uint8_t *out, const uint8_t *in,
                       size_t len);

/* Stream-mode context. Fields are private. */
typedef struct secho_stream {
	const secho_aes_key *key;
	alignas(16) uint8_t reg[16]; /* CTR: next counter; CFB: last C block; OFB: last O */
	alignas(16) uint8_t ks[16];  /* current keystream block (CTR, OFB) / E(reg) (CFB) */
	unsigned used;               /* bytes of ks already consumed, 0..16 (16 = none left) */
	unsigned mode;               /* private tag: which mode the context was set up for */
} secho_stream;

/* CTR: iv is the initial 16-byte counter block. Encrypt and decrypt are the same. */
int secho_ctr_init(secho_stream *s, const secho_aes_key *k, const uint8_t iv[16]);
int secho_ctr_update(secho_stream *s, uint8_t *out, const uint8_t *in, size_t len);

/* CFB128. */
int secho_cfb_init(secho_stream *s, const secho_aes_key *k, const uint8_t iv[16]);
int secho_cfb_encrypt(secho_stream *s, uint8_t *out, const uint8_t *in, size_t len);
int secho_cfb_decrypt(secho_stream *s, uint8_t *out, const uint8_t *in, size_t len);

/* OFB. Encrypt and decrypt are the same. */
int secho_ofb_init(secho_stream *s, const secho_aes_key *k, const uint8_t iv[16]);
int secho_ofb_update(secho_stream *s, uint8_t *out, const uint8_t *in, size_t len);

/*
 * The mode's register at this point of the stream, the value OpenSSL reports as the
 * "updated IV" (and with num, its "num"): CTR the next counter block; OFB the current
 * output block O_i; CFB the last ciphertext block, or inside a block its ciphertext bytes
 * so far followed by the rest of E(previous ciphertext block). *num (num may be NULL)
 * gets the bytes of the current block already used, 0..15. SECHO_OK; EINVAL (NULL s or
 * iv); ESTATE (s not set up for CTR, CFB or OFB). Nothing is written on error.
 */
int secho_stream_get_iv(const secho_stream *s, uint8_t iv[16], unsigned *num);

void secho_stream_wipe(secho_stream *s);

#ifdef __cplusplus
}
#endif
#endif
