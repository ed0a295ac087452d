/*
 * src/provider/prov.h - private to the OpenSSL 3 provider (build/secho.so): the provider
 * context, the cipher context families, counters, errors and OSSL_PARAM helpers.
 *
 * The module links no OpenSSL library. A process can hold two libcrypto copies (Python
 * wheels bundle their own), and the one that loaded us is reachable only through the
 * core's dispatch table: errors go through its upcalls (sp_raise), parameters are read
 * and written here (params.c), memory comes from libc. Only OpenSSL's headers are used,
 * for the ABI (OSSL_DISPATCH, OSSL_PARAM, function ids, names and constants).
 *
 * Layers: provider.c (entry point, algorithm table, provider parameters, counters, errors)
 * -> cipher.c (what every cipher context shares: keys, init, parameters) -> block.c (ECB,
 * CBC, PCBC), stream.c (CTR, CFB128, OFB), gcm.c (GCM and the TLS record paths), each
 * calling the crypto library (include/secho/) for all cryptography.
 */
#ifndef SECHO_PROVIDER_PROV_H
#define SECHO_PROVIDER_PROV_H

#include <openssl/core.h>
#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/proverr.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "secho/gcm.h"
#include "secho/modes.h"

#define SP_NAME    "secho"
#define SP_VERSION "0.1.0" /* the project's version, as `secho --version` prints it */

/* ---- modes ---- */
#define SP_MODES(X)                                                                                \
	X(ECB, "ecb")                                                                              \
	X(CBC, "cbc")                                                                              \
	X(PCBC, "pcbc")                                                                            \
	X(CTR, "ctr")                                                                              \
	X(CFB, "cfb")                                                                              \
	X(OFB, "ofb")                                                                              \
	X(GCM, "gcm")
enum sp_mode {
#define SP_MODE_ENUM(id, name) SP_##id,
	SP_MODES(SP_MODE_ENUM)
#undef SP_MODE_ENUM
	        SP_MODE_COUNT
};

/*
 * OpenSSL has no PCBC: its mode number is ours. The value lies inside EVP_CIPH_MODE
 * (0xF0007) and clear of every mode OpenSSL defines (1..7, 0x10001..0x10005), so
 * EVP_CIPHER_get_mode() returns it unchanged and no OpenSSL code mistakes it for another.
 */
#define SP_EVP_PCBC_MODE 0x20001

/* ---- counters (provider parameters "secho-<name>", and the stats line) ---- */
#define SP_COUNTERS(X)                                                                             \
	X(contexts, "cipher contexts made (new and dup)")                                          \
	X(key_setups, "keys expanded (round keys, and for GCM the GHASH key and its powers)")      \
	X(key_reuses, "inits given the key already expanded in the context: kept")                 \
	X(iv_inits, "inits that set an IV or nonce")                                               \
	X(gcm_sealed, "GCM messages sealed through update/final (final on encrypt)")               \
	X(gcm_opened, "GCM messages opened through update/final, tag verified")                    \
	X(gcm_rejected, "GCM messages whose tag did not verify (final failed)")                    \
	X(tls12_sealed, "TLS 1.2 GCM records sealed (tlsaad, explicit nonce)")                     \
	X(tls12_opened, "TLS 1.2 GCM records opened, tag verified")                                \
	X(tls12_rejected, "TLS 1.2 GCM records rejected (tag), plaintext zeroed")                  \
	X(tls_cbc_sealed, "TLS CBC records encrypted (tls-version set: padding added)")            \
	X(tls_cbc_opened, "TLS CBC records decrypted (padding and MAC taken off)")                 \
	X(bad_padding, "CBC/ECB/PCBC finals rejected for bad PKCS#7 padding")

/* The provider's totals (atomic: contexts in any thread add to them). */
struct sp_stats {
#define SP_COUNTER_FIELD(name, text) _Atomic uint64_t name;
	SP_COUNTERS(SP_COUNTER_FIELD)
#undef SP_COUNTER_FIELD
	_Atomic uint64_t bytes[SP_MODE_COUNT]; /* text bytes through each mode, both ways */
};

/* A context's own counts, plain: an atomic add on every update or message costs more than
 * a short message's AES. They join the provider's totals when the context is freed
 * (sp_ctx_free), so the totals cover every context freed so far. */
struct sp_tally {
#define SP_TALLY_FIELD(name, text) uint64_t name;
	SP_COUNTERS(SP_TALLY_FIELD)
#undef SP_TALLY_FIELD
	uint64_t bytes;
};
#define SP_COUNT(b, name, n) ((b)->tally.name += (uint64_t)(n))

/* ---- the provider context (one per library context that loads us) ---- */
struct sp_prov {
	const OSSL_CORE_HANDLE *handle;
	OSSL_FUNC_core_new_error_fn *new_error;
	OSSL_FUNC_core_set_error_debug_fn *set_error_debug;
	OSSL_FUNC_core_vset_error_fn *vset_error;
	struct sp_stats stats;
};

/* ---- errors ----
 * Where the default provider has a reason for the same condition, we raise that one
 * (ERR_LIB_PROV), so applications matching on it behave the same; the rest are ours,
 * with the text get_reason_strings gives. */
enum {
	SP_R_UNAVAILABLE = 1, /* the crypto library refused the key (implementation) */
	SP_R_OVERLAP,         /* input and output overlap partially */
	SP_R_RANDOM,          /* no random bytes for a TLS 1.2 nonce */
	SP_R_LIBRARY,         /* the crypto library returned an error */
	SP_R_STATE,           /* call out of order (no IV, message finished, ...) */
	SP_R_NOT_SUPPORTED,   /* a parameter value this provider does not support */
};
void sp_raise(const struct sp_prov *p, uint32_t reason, const char *file, int line,
              const char *func, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
#define SP_ERR(p, reason, ...) sp_raise((p), (reason), __FILE__, __LINE__, __func__, __VA_ARGS__)
/* A reason of the default provider (openssl/proverr.h) for sp_raise: the library bits
 * make the core file it under ERR_LIB_PROV instead of our own library number. */
#define SP_PROV_R(r) ((uint32_t)ERR_PACK(ERR_LIB_PROV, 0, (r)))

/* ---- keys: expanded once, shared by duplicated contexts (refcounted) ---- */
struct sp_key {
	secho_gcm_key k; /* GCM: all of it; other modes use k.aes only */
	uint8_t raw[32]; /* the key as given: an init with the same key keeps k */
	size_t raw_len;
	_Atomic unsigned refs;
};

/* ---- algorithms ----
 * symbol, OpenSSL's names and aliases (':'-separated, as the default provider lists
 * them, so that both providers' names map to the same algorithm), mode, key bytes, family
 * (block.c, stream.c, gcm.c). The EVP mode number, default IV length and block size
 * follow from the mode (SP_EVP_*, SP_IV_*, SP_BS_*). */
#define SP_ALGS(X)                                                                                 \
	X(aes_128_ecb, "AES-128-ECB:2.16.840.1.101.3.4.1.1", ECB, 16, block)                       \
	X(aes_192_ecb, "AES-192-ECB:2.16.840.1.101.3.4.1.21", ECB, 24, block)                      \
	X(aes_256_ecb, "AES-256-ECB:2.16.840.1.101.3.4.1.41", ECB, 32, block)                      \
	X(aes_128_cbc, "AES-128-CBC:AES128:2.16.840.1.101.3.4.1.2", CBC, 16, block)                \
	X(aes_192_cbc, "AES-192-CBC:AES192:2.16.840.1.101.3.4.1.22", CBC, 24, block)               \
	X(aes_256_cbc, "AES-256-CBC:AES256:2.16.840.1.101.3.4.1.42", CBC, 32, block)               \
	X(aes_128_pcbc, "AES-128-PCBC", PCBC, 16, block)                                           \
	X(aes_192_pcbc, "AES-192-PCBC", PCBC, 24, block)                                           \
	X(aes_256_pcbc, "AES-256-PCBC", PCBC, 32, block)                                           \
	X(aes_128_ctr, "AES-128-CTR", CTR, 16, stream)                                             \
	X(aes_192_ctr, "AES-192-CTR", CTR, 24, stream)                                             \
	X(aes_256_ctr, "AES-256-CTR", CTR, 32, stream)                                             \
	X(aes_128_cfb, "AES-128-CFB:2.16.840.1.101.3.4.1.4", CFB, 16, stream)                      \
	X(aes_192_cfb, "AES-192-CFB:2.16.840.1.101.3.4.1.24", CFB, 24, stream)                     \
	X(aes_256_cfb, "AES-256-CFB:2.16.840.1.101.3.4.1.44", CFB, 32, stream)                     \
	X(aes_128_ofb, "AES-128-OFB:2.16.840.1.101.3.4.1.3", OFB, 16, stream)                      \
	X(aes_192_ofb, "AES-192-OFB:2.16.840.1.101.3.4.1.23", OFB, 24, stream)                     \
	X(aes_256_ofb, "AES-256-OFB:2.16.840.1.101.3.4.1.43", OFB, 32, stream)                     \
	X(aes_128_gcm, "AES-128-GCM:id-aes128-GCM:2.16.840.1.101.3.4.1.6", GCM, 16, gcm)           \
	X(aes_192_gcm, "AES-192-GCM:id-aes192-GCM:2.16.840.1.101.3.4.1.26", GCM, 24, gcm)          \
	X(aes_256_gcm, "AES-256-GCM:id-aes256-GCM:2.16.840.1.101.3.4.1.46", GCM, 32, gcm)

#define SP_EVP_ECB  EVP_CIPH_ECB_MODE
#define SP_EVP_CBC  EVP_CIPH_CBC_MODE
#define SP_EVP_PCBC SP_EVP_PCBC_MODE
#define SP_EVP_CTR  EVP_CIPH_CTR_MODE
#define SP_EVP_CFB  EVP_CIPH_CFB_MODE
#define SP_EVP_OFB  EVP_CIPH_OFB_MODE
#define SP_EVP_GCM  EVP_CIPH_GCM_MODE
#define SP_IV_ECB   0
#define SP_IV_CBC   16
#define SP_IV_PCBC  16
#define SP_IV_CTR   16
#define SP_IV_CFB   16
#define SP_IV_OFB   16
#define SP_IV_GCM   12 /* the default; any length can be set */
#define SP_BS_ECB   16
#define SP_BS_CBC   16
#define SP_BS_PCBC  16
#define SP_BS_CTR   1
#define SP_BS_CFB   1
#define SP_BS_OFB   1
#define SP_BS_GCM   1

struct sp_alg {
	const char *names;
	enum sp_mode mode;
	unsigned evp_mode;
	size_t key_len;
	size_t iv_len; /* default; 0 for ECB */
	size_t block_size;
};
#define SP_ALG_DECL(sym, names, mode, kl, fam)                                                     \
	extern const struct sp_alg sp_alg_##sym;                                                   \
	extern const OSSL_DISPATCH sp_dispatch_##sym[];
SP_ALGS(SP_ALG_DECL)
#undef SP_ALG_DECL

/* ---- what every cipher context starts with ---- */
struct sp_base {
	struct sp_prov *prov;
	const struct sp_alg *alg;
	struct sp_key *key; /* NULL until a key is set */
	int enc;            /* 1 encrypt, 0 decrypt: set by every init */
	struct sp_tally tally;
};

/* cipher.c */
void *sp_ctx_alloc(struct sp_prov *prov, const struct sp_alg *alg, size_t size);
void sp_ctx_free(struct sp_base *b, size_t size);
void *sp_ctx_dup(const struct sp_base *b, size_t size);
/* Expand `key` for b (GCM: with the GHASH key), reusing b's key object when no other
 * context shares it. 1, or 0 with an error raised (length, implementation). */
int sp_set_key(struct sp_base *b, const unsigned char *key, size_t keylen);
/* Algorithm parameters ("mode", "keylen", "ivlen", "blocksize", flags). */
int sp_alg_get_params(const struct sp_alg *alg, OSSL_PARAM params[]);
const OSSL_PARAM *sp_alg_gettable_params(void *provctx);
/* Error helpers for the families' parameter loops (raise, return 0). */
int sp_param_bad_get(const struct sp_base *b, const OSSL_PARAM *p);
int sp_param_bad_set(const struct sp_base *b, const OSSL_PARAM *p);
int sp_bad_keylen(const struct sp_base *b);
/* a[0..n) == b[0..n), every byte compared (no early exit: the time says nothing about
 * where they differ). */
bool sp_ct_equal(const uint8_t *a, const uint8_t *b, size_t n);
/* Partial overlap of out[0..n) and in[0..n) (out == in is in place: fine). */
bool sp_overlap(const unsigned char *out, const unsigned char *in, size_t n);
/* The stats line of the provider's counters (no newline); returns its length. */
size_t sp_stats_line(const struct sp_prov *p, char *buf, size_t cap);

/*
 * One dispatch table per algorithm. The core's newctx and get_params take no algorithm
 * argument, so each algorithm gets two small wrappers; everything else is the family's
 * (fam##_einit, fam##_update, ...). A family file expands SP_ALGS with its own entries
 * only (SP_DISPATCH_<family> defined, the others empty).
 */
#define SP_CIPHER_DISPATCH(sym, fam)                                                               \
	static void *sym##_newctx(void *provctx)                                                   \
	{                                                                                          \
		return fam##_newctx(provctx, &sp_alg_##sym);                                       \
	}                                                                                          \
	static int sym##_get_params(OSSL_PARAM params[])                                           \
	{                                                                                          \
		return sp_alg_get_params(&sp_alg_##sym, params);                                   \
	}                                                                                          \
	const OSSL_DISPATCH sp_dispatch_##sym[] = {                                                \
	        {OSSL_FUNC_CIPHER_NEWCTX, (void (*)(void))sym##_newctx},                           \
	        {OSSL_FUNC_CIPHER_FREECTX, (void (*)(void))fam##_freectx},                         \
	        {OSSL_FUNC_CIPHER_DUPCTX, (void (*)(void))fam##_dupctx},                           \
	        {OSSL_FUNC_CIPHER_ENCRYPT_INIT, (void (*)(void))fam##_einit},                      \
	        {OSSL_FUNC_CIPHER_DECRYPT_INIT, (void (*)(void))fam##_dinit},                      \
	        {OSSL_FUNC_CIPHER_UPDATE, (void (*)(void))fam##_update},                           \
	        {OSSL_FUNC_CIPHER_FINAL, (void (*)(void))fam##_final},                             \
	        {OSSL_FUNC_CIPHER_CIPHER, (void (*)(void))fam##_cipher},                           \
	        {OSSL_FUNC_CIPHER_GET_PARAMS, (void (*)(void))sym##_get_params},                   \
	        {OSSL_FUNC_CIPHER_GETTABLE_PARAMS, (void (*)(void))sp_alg_gettable_params},        \
	        {OSSL_FUNC_CIPHER_GET_CTX_PARAMS, (void (*)(void))fam##_get_ctx_params},           \
	        {OSSL_FUNC_CIPHER_SET_CTX_PARAMS, (void (*)(void))fam##_set_ctx_params},           \
	        {OSSL_FUNC_CIPHER_GETTABLE_CTX_PARAMS, (void (*)(void))fam##_gettable_ctx_params}, \
	        {OSSL_FUNC_CIPHER_SETTABLE_CTX_PARAMS, (void (*)(void))fam##_settable_ctx_params}, \
	        {0, NULL}};
/* The family functions, declared with the core's own types so that a signature that
 * does not match the dispatch slot fails to compile. */
#define SP_FAMILY_DECLS(fam)                                                                       \
	static OSSL_FUNC_cipher_freectx_fn fam##_freectx;                                          \
	static OSSL_FUNC_cipher_dupctx_fn fam##_dupctx;                                            \
	static OSSL_FUNC_cipher_encrypt_init_fn fam##_einit;                                       \
	static OSSL_FUNC_cipher_decrypt_init_fn fam##_dinit;                                       \
	static OSSL_FUNC_cipher_update_fn fam##_update;                                            \
	static OSSL_FUNC_cipher_final_fn fam##_final;                                              \
	static OSSL_FUNC_cipher_cipher_fn fam##_cipher;                                            \
	static OSSL_FUNC_cipher_get_ctx_params_fn fam##_get_ctx_params;                            \
	static OSSL_FUNC_cipher_set_ctx_params_fn fam##_set_ctx_params;                            \
	static OSSL_FUNC_cipher_gettable_ctx_params_fn fam##_gettable_ctx_params;                  \
	static OSSL_FUNC_cipher_settable_ctx_params_fn fam##_settable_ctx_params;

/* params.c: OSSL_PARAM access without libcrypto (the same rules as OSSL_PARAM_get_* and
 * OSSL_PARAM_set_*: native-endian integers of 1, 2, 4 or 8 bytes, signed or not; a set
 * with data == NULL only reports the size in return_size). */
int sp_param_index(const char *key, const char *const *names, uint32_t firsts);
#define SP_FIRST(c) (1u << ((c) - 'a'))
const OSSL_PARAM *sp_param_find(const OSSL_PARAM *p, const char *key);
OSSL_PARAM *sp_param_find_mut(OSSL_PARAM *p, const char *key);
bool sp_param_get_u64(const OSSL_PARAM *p, uint64_t *v);
bool sp_param_get_size(const OSSL_PARAM *p, size_t *v);
bool sp_param_set_u64(OSSL_PARAM *p, uint64_t v);
bool sp_param_get_octets(const OSSL_PARAM *p, const unsigned char **data, size_t *len);
/* OCTET_STRING (copied) or OCTET_PTR (pointer handed out: data must stay valid). */
bool sp_param_set_octets(OSSL_PARAM *p, const void *data, size_t len);
bool sp_param_set_utf8(OSSL_PARAM *p, const char *s);

#endif
