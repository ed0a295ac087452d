/*
 * src/provider/cipher.c - what every cipher context of the provider shares: allocation,
 * duplication, keys, and the algorithm-level parameters.
 *
 * Keys. A context holds a pointer to a refcounted struct sp_key: the expanded key
 * (round keys in the layout of the implementation AUTO resolved to, and for GCM the
 * GHASH key H with its powers). It is computed once per key: an init that gives only an
 * IV, or nothing, keeps it, and so does an init that gives the same key again (compared
 * in full with the bytes kept beside it; `openssl speed` and many applications pass the
 * key with every message). A duplicated context shares it (one more reference), which
 * also keeps valid the key pointers inside secho_gcm_ctx and secho_stream that the copy
 * carries. A new key is expanded in place when no other context holds the object, else
 * into a fresh one. Keys are immutable once expanded, so sharing across threads is safe;
 * the count is atomic. The memory is wiped before it is freed.
 */
#include <openssl/params.h>
#include <stdlib.h>
#include <string.h>

#include "provider/prov.h"

/* ---- keys ---- */

static struct sp_key *key_new(void)
{
	void *p = NULL;
	/* secho_gcm_key is 64-byte aligned (its round keys and powers of H). */
	if (posix_memalign(&p, 64, sizeof(struct sp_key)))
		return NULL;
	struct sp_key *k = p;
	memset(k, 0, sizeof(*k));
	atomic_init(&k->refs, 1);
	return k;
}

/* Drop one reference; the last one wipes and frees. NULL is a no-op. */
static void key_put(struct sp_key *k)
{
	/* acq_rel: every use of the key by other holders happens before the wipe. */
	if (k && atomic_fetch_sub_explicit(&k->refs, 1, memory_order_acq_rel) == 1) {
		secho_wipe(k, sizeof(*k));
		free(k);
	}
}

/* Is k already this key? Like any key of the library, it keeps the implementation it was
 * expanded with (secho_aes_key_impl). */
static bool key_same(const struct sp_key *k, const unsigned char *key, size_t len)
{
	return k && k->raw_len == len && sp_ct_equal(k->raw, key, len);
}

/* 1, or 0 with an error raised: key length not the algorithm's, no memory, or the
 * implementation refused (unavailable). */
int sp_set_key(struct sp_base *b, const unsigned char *key, size_t keylen)
{
	if (keylen != b->alg->key_len) {
		SP_ERR(b->prov, SP_PROV_R(PROV_R_INVALID_KEY_LENGTH),
		       "%s takes a %zu-byte key, got %zu bytes", b->alg->names, b->alg->key_len,
		       keylen);
		return 0;
	}
	if (key_same(b->key, key, keylen)) {
		SP_COUNT(b, key_reuses, 1);
		return 1;
	}
	struct sp_key *k = b->key;
	if (!k || atomic_load_explicit(&k->refs, memory_order_acquire) != 1) {
		k = key_new();
		if (!k) {
			SP_ERR(b->prov, SP_PROV_R(ERR_R_MALLOC_FAILURE), "no memory for a key");
			return 0;
		}
	}
	int rc = b->alg->mode == SP_GCM
	                 ? secho_gcm_key_init(&k->k, key, keylen, SECHO_IMPL_AUTO)
	                 : secho_aes_key_init(&k->k.aes, key, keylen, SECHO_IMPL_AUTO);
	if (rc) {
		if (k != b->key)
			key_put(k);
		SP_ERR(b->prov, SP_R_UNAVAILABLE, "key setup: %s", secho_strerror(rc));
		return 0;
	}
	memcpy(k->raw, key, keylen);
	k->raw_len = keylen;
	if (k != b->key) {
		key_put(b->key);
		b->key = k;
	}
	SP_COUNT(b, key_setups, 1);
	return 1;
}

/* ---- contexts ---- */

/* A zeroed context of `size` bytes (a family's struct, starting with struct sp_base), or
 * NULL with an error raised. */
void *sp_ctx_alloc(struct sp_prov *prov, const struct sp_alg *alg, size_t size)
{
	struct sp_base *b = calloc(1, size);
	if (!b) {
		SP_ERR(prov, SP_PROV_R(ERR_R_MALLOC_FAILURE), "no memory for a cipher context");
		return NULL;
	}
	b->prov = prov;
	b->alg = alg;
	b->enc = 1;
	SP_COUNT(b, contexts, 1);
	return b;
}

/* Add a context's counts to the provider's totals (relaxed: statistics). */
static void tally_flush(struct sp_base *b)
{
	struct sp_stats *s = &b->prov->stats;
#define SP_TALLY_ADD(name, text)                                                                   \
	if (b->tally.name)                                                                         \
		atomic_fetch_add_explicit(&s->name, b->tally.name, memory_order_relaxed);
	SP_COUNTERS(SP_TALLY_ADD)
#undef SP_TALLY_ADD
	if (b->tally.bytes)
		atomic_fetch_add_explicit(&s->bytes[b->alg->mode], b->tally.bytes,
		                          memory_order_relaxed);
	memset(&b->tally, 0, sizeof(b->tally));
}

/* Add the counts to the totals, release the key reference, wipe the context and free it.
 * NULL is a no-op. */
void sp_ctx_free(struct sp_base *b, size_t size)
{
	if (!b)
		return;
	tally_flush(b);
	key_put(b->key);
	secho_wipe(b, size);
	free(b);
}

/* A byte copy sharing the key (one more reference), or NULL with an error raised. The
 * family fixes up what it owns beyond the struct (a long GCM IV). */
void *sp_ctx_dup(const struct sp_base *b, size_t size)
{
	struct sp_base *d = malloc(size);
	if (!d) {
		SP_ERR(b->prov, SP_PROV_R(ERR_R_MALLOC_FAILURE), "no memory for a cipher context");
		return NULL;
	}
	memcpy(d, b, size);
	if (d->key)
		atomic_fetch_add_explicit(&d->key->refs, 1, memory_order_relaxed);
	memset(&d->tally, 0, sizeof(d->tally)); /* the copy counts only its own work */
	SP_COUNT(d, contexts, 1);
	return d;
}

bool sp_ct_equal(const uint8_t *a, const uint8_t *b, size_t n)
{
	uint64_t diff = 0, x, y;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) { /* 8 bytes at a time (keys are 16, 24 or 32 bytes) */
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		diff |= x ^ y;
	}
	for (; i < n; i++)
		diff |= (uint64_t)(a[i] ^ b[i]);
	__asm__ volatile("" : "+r"(diff)); /* the accumulation is not cut short */
	return diff == 0;
}

bool sp_overlap(const unsigned char *out, const unsigned char *in, size_t n)
{
	if (!n || out == in)
		return false;
	uintptr_t o = (uintptr_t)out, i = (uintptr_t)in;
	return o < i + n && i < o + n;
}

/* ---- parameters ---- */

static const OSSL_PARAM alg_gettable[] = {
        OSSL_PARAM_uint(OSSL_CIPHER_PARAM_MODE, NULL),
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_BLOCK_SIZE, NULL),
        OSSL_PARAM_int(OSSL_CIPHER_PARAM_AEAD, NULL),
        OSSL_PARAM_int(OSSL_CIPHER_PARAM_CUSTOM_IV, NULL),
        OSSL_PARAM_int(OSSL_CIPHER_PARAM_CTS, NULL),
        OSSL_PARAM_int(OSSL_CIPHER_PARAM_TLS1_MULTIBLOCK, NULL),
        OSSL_PARAM_int(OSSL_CIPHER_PARAM_HAS_RAND_KEY, NULL),
        OSSL_PARAM_END,
};

const OSSL_PARAM *sp_alg_gettable_params(void *provctx)
{
	(void)provctx;
	return alg_gettable;
}

/* The algorithm's constants. GCM is AEAD with a custom IV (any length, see gcm.c); no
 * algorithm here is CTS, multi-block or has its own key generator. 1, or 0 when a
 * requested value does not fit the caller's parameter. */
int sp_alg_get_params(const struct sp_alg *a, OSSL_PARAM params[])
{
	bool gcm = a->mode == SP_GCM;
	const struct {
		const char *key;
		uint64_t v;
	} vals[] = {
	        {OSSL_CIPHER_PARAM_MODE, a->evp_mode},
	        {OSSL_CIPHER_PARAM_KEYLEN, a->key_len},
	        {OSSL_CIPHER_PARAM_IVLEN, a->iv_len},
	        {OSSL_CIPHER_PARAM_BLOCK_SIZE, a->block_size},
	        {OSSL_CIPHER_PARAM_AEAD, gcm},
	        {OSSL_CIPHER_PARAM_CUSTOM_IV, gcm},
	        {OSSL_CIPHER_PARAM_CTS, 0},
	        {OSSL_CIPHER_PARAM_TLS1_MULTIBLOCK, 0},
	        {OSSL_CIPHER_PARAM_HAS_RAND_KEY, 0},
	};
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		OSSL_PARAM *p = sp_param_find_mut(params, vals[i].key);
		if (p && !sp_param_set_u64(p, vals[i].v))
			return 0;
	}
	return 1;
}

/* A parameter the caller asked for could not be written (type, size), or one it gave
 * could not be read: raise and return 0. */
int sp_param_bad_get(const struct sp_base *b, const OSSL_PARAM *p)
{
	SP_ERR(b->prov, SP_PROV_R(PROV_R_FAILED_TO_SET_PARAMETER), "%s", p->key);
	return 0;
}

int sp_param_bad_set(const struct sp_base *b, const OSSL_PARAM *p)
{
	SP_ERR(b->prov, SP_PROV_R(PROV_R_FAILED_TO_GET_PARAMETER), "%s", p->key);
	return 0;
}

/* "keylen" given to a context: only the algorithm's own length is accepted (the key
 * sizes are separate algorithms). */
int sp_bad_keylen(const struct sp_base *b)
{
	SP_ERR(b->prov, SP_PROV_R(PROV_R_INVALID_KEY_LENGTH), "%s has a %zu-byte key",
	       b->alg->names, b->alg->key_len);
	return 0;
}
