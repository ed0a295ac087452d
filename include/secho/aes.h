/*
 * secho/aes.h - AES block cipher: key schedule, single blocks, implementation choice.
 *
 * Conventions for the whole secho crypto library (BearSSL-like):
 *  - the caller owns every context; nothing here allocates;
 *  - every length is an explicit size_t in bytes;
 *  - functions returning int return SECHO_OK (0) or a negative SECHO_E* code (never an
 *    -errno value: see below) and never
 *    have undefined behaviour on a bad argument (NULL with a non-zero length, bad key
 *    size, ...): they return SECHO_EINVAL instead;
 *  - `out` may equal `in` (in place); partial overlap is not supported;
 *  - key material is wiped by the matching *_wipe() function.
 */
#ifndef SECHO_AES_H
#define SECHO_AES_H

#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SECHO_AES_BLOCK      16
#define SECHO_AES_MAX_ROUNDS 14

/*
 * Error codes (negative). The rest of secho reports errors as -errno; these codes are kept
 * apart from those values so that an int that may hold either is never misread: every
 * code is below -SECHO_ERR_BASE, and no errno value reaches 4096 (the kernel's
 * MAX_ERRNO is 4095). secho_strerror() gives one line of text for each; a caller that
 * hands a result on in the -errno convention converts it with secho_crypto_errno().
 */
#define SECHO_ERR_BASE 4096
enum {
	SECHO_OK = 0,
	SECHO_EINVAL = -(SECHO_ERR_BASE + 1),   /* bad argument: NULL pointer, key/IV/tag size */
	SECHO_ELEN = -(SECHO_ERR_BASE + 2),     /* length not a multiple of the block size */
	SECHO_EAUTH = -(SECHO_ERR_BASE + 3),    /* GCM tag did not verify */
	SECHO_EUNAVAIL = -(SECHO_ERR_BASE + 4), /* implementation not available on this CPU */
	SECHO_ESTATE = -(SECHO_ERR_BASE + 5),   /* call out of order, or context unset */
	SECHO_ELIMIT = -(SECHO_ERR_BASE + 6),   /* over a limit of the standard (GCM lengths) */
};
/* One line of text for a code; "not a crypto library code" for anything else. */
const char *secho_strerror(int err);
/* The -errno value closest to a code: SECHO_EINVAL, SECHO_ELEN -EINVAL; SECHO_EAUTH
 * -EBADMSG; SECHO_EUNAVAIL -EOPNOTSUPP; SECHO_ESTATE -EPROTO; SECHO_ELIMIT -EMSGSIZE;
 * SECHO_OK 0. Anything else (an -errno value already, say) is returned unchanged. */
int secho_crypto_errno(int err);

/*
 * Implementations. PORTABLE is the constant-time bitsliced reference every other is
 * checked against; AESNI uses AES-NI + PCLMULQDQ; VAES uses VAES + VPCLMULQDQ on
 * 512-bit registers (AVX-512); VAES_SPLIT needs the same instructions and is scheduled
 * for cores that execute a 512-bit instruction as two 256-bit halves (AMD Zen 4). AUTO
 * resolves, in this order, to the implementation forced with secho_impl_force(), else
 * the one named by the environment variable SECHO_IMPL
 * (auto|portable|aesni|vaes|vaes-split, read once), else the best for this CPU
 * (secho_impl_best()).
 */
typedef enum secho_impl_id {
	SECHO_IMPL_AUTO = 0,
	SECHO_IMPL_PORTABLE = 1,
	SECHO_IMPL_AESNI = 2,
	SECHO_IMPL_VAES = 3,
	SECHO_IMPL_VAES_SPLIT = 4,
	SECHO_IMPL_COUNT
} secho_impl_id;

const char *secho_impl_name(secho_impl_id id);                  /* "portable", ... */
int secho_impl_from_name(const char *name, secho_impl_id *out); /* EINVAL if unknown */
bool secho_impl_available(secho_impl_id id);                    /* CPU check; AUTO: true */
/* The best implementation for this CPU: vaes-split on AMD family 19h (Zen 4) when
 * available, else the first available of vaes, aesni, portable. */
secho_impl_id secho_impl_best(void);
/* Make AUTO resolve to `id` (AUTO restores the default). EUNAVAIL if the CPU lacks it. */
int secho_impl_force(secho_impl_id id);
/* What `id` means now: AUTO resolved as above, others unchanged. */
secho_impl_id secho_impl_resolve(secho_impl_id id);

struct secho_aes_impl;

/*
 * Expanded key. The layout of `u` belongs to the implementation that made it
 * (round keys in byte order for the hardware ones, bitsliced words for the portable
 * one); treat the struct as opaque. Immutable after init: one key may be shared by
 * threads.
 */
typedef struct secho_aes_key {
	alignas(64) union {
		uint8_t rk[2][SECHO_AES_MAX_ROUNDS + 1][16];   /* enc, dec round keys */
		uint64_t ct64[(SECHO_AES_MAX_ROUNDS + 1) * 8]; /* bitsliced */
	} u;
	const struct secho_aes_impl *impl;
	unsigned rounds;  /* 10, 12 or 14 */
	unsigned key_len; /* 16, 24 or 32 */
} secho_aes_key;

/* key_len 16, 24 or 32 (else EINVAL); impl AUTO or a specific one (EUNAVAIL). */
int secho_aes_key_init(secho_aes_key *k, const uint8_t *key, size_t key_len, secho_impl_id impl);
void secho_aes_key_wipe(secho_aes_key *k);
/* The implementation a key was made with. */
secho_impl_id secho_aes_key_impl(const secho_aes_key *k);

/* One block. k must have been initialised (not checked beyond NULL). */
int secho_aes_encrypt_block(const secho_aes_key *k, uint8_t out[16], const uint8_t in[16]);
int secho_aes_decrypt_block(const secho_aes_key *k, uint8_t out[16], const uint8_t in[16]);

/* Wipe memory in a way the compiler may not remove. */
void secho_wipe(void *p, size_t n);

#ifdef __cplusplus
}
#endif
#endif
