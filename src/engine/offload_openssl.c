/*
 * src/engine/offload_openssl.c - offload backend: OpenSSL EVP AES-256-GCM.
 *
 * The cipher is fetched and the key set once (per-key work); per packet only the IV is
 * set (EVP_EncryptInit_ex with NULL cipher and key keeps both), which is the honest fast
 * use of EVP (PLATFORM.md: a new context per packet costs ~850-1000 cycles more).
 *
 * Key state in locked memory: EVP keeps the key schedule in contexts it allocates itself
 * (the EVP_CIPHER_CTX and the provider's GCM context), from the ordinary heap, where it can
 * be swapped out and would be in a core file. secho_offload_protect_keys() gives OpenSSL
 * allocator hooks (CRYPTO_set_mem_functions, possible only before OpenSSL's first
 * allocation) that serve every allocation made while a key is being set up (a thread-local
 * flag, raised only around the context's creation and key setting in ossl_init) from a
 * pool of pages from secho_secret_alloc(): locked and excluded from core dumps. Every
 * other allocation goes to malloc, and a free is routed by address. The pool is a small
 * first-fit allocator (a handful of blocks per key, made and freed at start and stop only);
 * a freed block is wiped.
 */
#include "engine/offload_backend.h"

#include <errno.h>
#include <malloc.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "secho/aes.h"
#include "secho/keyfile.h"

/* --- the locked pool behind OpenSSL's allocations of key state ---------------------- */

#define POOL_BYTES (64u * 1024) /* one key's contexts take about 2 KiB */
#define POOL_ALIGN 16u

struct pool_blk {
	size_t size; /* payload bytes after this header */
	size_t used;
};

static uint8_t *pool;    /* secho_secret_alloc(POOL_BYTES), set once */
static bool pool_locked; /* mlock succeeded */
static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local bool key_setup; /* allocations now hold key state */

static bool in_pool(const void *p)
{
	return pool && (const uint8_t *)p >= pool && (const uint8_t *)p < pool + POOL_BYTES;
}

/* First fit; splits a block when the rest can hold a header and 32 bytes. NULL when full.
 * Caller holds pool_mu. */
static void *pool_get(size_t n)
{
	n = (n + POOL_ALIGN - 1) & ~(size_t)(POOL_ALIGN - 1);
	for (uint8_t *q = pool; q < pool + POOL_BYTES;) {
		struct pool_blk *b = (struct pool_blk *)q;
		if (!b->used && b->size >= n) {
			if (b->size - n >= sizeof(*b) + 32) {
				struct pool_blk *r = (struct pool_blk *)(q + sizeof(*b) + n);
				r->size = b->size - n - sizeof(*b);
				r->used = 0;
				b->size = n;
			}
			b->used = 1;
			return q + sizeof(*b);
		}
		q += sizeof(*b) + b->size;
	}
	return NULL;
}

/* Wipe and release a block, merging free neighbours. Caller holds pool_mu. */
static void pool_put(void *p)
{
	struct pool_blk *b = (struct pool_blk *)((uint8_t *)p - sizeof(*b));
	secho_wipe(p, b->size);
	b->used = 0;
	for (uint8_t *q = pool; q < pool + POOL_BYTES;) {
		struct pool_blk *c = (struct pool_blk *)q;
		uint8_t *nx = q + sizeof(*c) + c->size;
		if (!c->used && nx < pool + POOL_BYTES && !((struct pool_blk *)nx)->used) {
			c->size += sizeof(*c) + ((struct pool_blk *)nx)->size;
			continue; /* merge again with what follows */
		}
		q = nx;
	}
}

static size_t pool_size_of(const void *p)
{
	return ((const struct pool_blk *)((const uint8_t *)p - sizeof(struct pool_blk)))->size;
}

static void *hook_malloc(size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	if (!key_setup)
		return malloc(n);
	pthread_mutex_lock(&pool_mu);
	void *p = pool_get(n ? n : 1);
	pthread_mutex_unlock(&pool_mu);
	return p;
}

static void hook_free(void *p, const char *file, int line)
{
	(void)file;
	(void)line;
	if (!in_pool(p)) {
		free(p);
		return;
	}
	pthread_mutex_lock(&pool_mu);
	pool_put(p);
	pthread_mutex_unlock(&pool_mu);
}

static void *hook_realloc(void *p, size_t n, const char *file, int line)
{
	if (!p)
		return hook_malloc(n, file, line);
	if (!in_pool(p) && !key_setup)
		return realloc(p, n);
	/* Into or within the pool: a new block, the contents copied, the old one wiped. */
	size_t old = in_pool(p) ? pool_size_of(p) : malloc_usable_size(p);
	void *q = hook_malloc(n, file, line);
	if (!q)
		return NULL;
	memcpy(q, p, old < n ? old : n);
	if (!in_pool(p))
		secho_wipe(p, old);
	hook_free(p, file, line);
	return q;
}

int secho_offload_openssl_protect(bool *locked)
{
	if (pool) {
		*locked = pool_locked;
		return 0;
	}
	uint8_t *pl = secho_secret_alloc(POOL_BYTES, &pool_locked);
	if (!pl)
		return -ENOMEM;
	struct pool_blk *b = (struct pool_blk *)pl;
	b->size = POOL_BYTES - sizeof(*b);
	b->used = 0;
	/* Fails once OpenSSL has allocated anything: its earlier blocks would be freed here. */
	if (!CRYPTO_set_mem_functions(hook_malloc, hook_realloc, hook_free)) {
		secho_secret_free(pl, POOL_BYTES);
		pool_locked = false;
		return -EBUSY;
	}
	pool = pl;
	*locked = pool_locked;
	return 0;
}

struct ossl_state {
	EVP_CIPHER *cipher;
	EVP_CIPHER_CTX *ctx;
};

static int ossl_probe(char *why, size_t whylen)
{
	EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, "AES-256-GCM", NULL);
	if (!c) {
		snprintf(why, whylen, "OpenSSL has no AES-256-GCM");
		return -1;
	}
	EVP_CIPHER_free(c);
	return 0;
}

static void ossl_fini(void *p)
{
	struct ossl_state *s = p;
	if (!s)
		return;
	EVP_CIPHER_CTX_free(s->ctx); /* clears the key schedule it holds */
	EVP_CIPHER_free(s->cipher);
	free(s);
}

/* The context for key (NULL on failure): created, sized for a 12-byte IV, keyed. */
static EVP_CIPHER_CTX *ctx_for(const EVP_CIPHER *cipher, const uint8_t key[32])
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	if (c && EVP_EncryptInit_ex(c, cipher, NULL, NULL, NULL) &&
	    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, 12, NULL) &&
	    EVP_EncryptInit_ex(c, NULL, NULL, key, NULL))
		return c;
	EVP_CIPHER_CTX_free(c);
	return NULL;
}

static void *ossl_init(const uint8_t key[32], uint32_t max_len, char *err, size_t errlen)
{
	(void)max_len;
	struct ossl_state *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->cipher = EVP_CIPHER_fetch(NULL, "AES-256-GCM", NULL);
	if (s->cipher && pool) {
		/* A throwaway context first, outside the pool: what OpenSSL sets up once per
		 * process on first use (caches, per-thread state) then stays out of it. */
		uint8_t k0[32];
		EVP_CIPHER_CTX *c0 =
		        RAND_bytes(k0, sizeof(k0)) == 1 ? ctx_for(s->cipher, k0) : NULL;
		EVP_CIPHER_CTX_free(c0);
		secho_wipe(k0, sizeof(k0));
	}
	if (s->cipher) {
		key_setup = true; /* the context and its key schedule: from the locked pool */
		s->ctx = ctx_for(s->cipher, key);
		key_setup = false;
	}
	if (!s->cipher || !s->ctx) {
		snprintf(err, errlen, "OpenSSL EVP AES-256-GCM set-up failed%s",
		         pool ? " (or its locked key memory is full)" : "");
		ossl_fini(s);
		return NULL;
	}
	return s;
}

static int ossl_seal(void *p, const uint8_t iv[12], const uint8_t *aad, size_t aad_len,
                     uint8_t *buf, size_t len, uint8_t tag[16])
{
	struct ossl_state *s = p;
	int outl;
	if (!EVP_EncryptInit_ex(s->ctx, NULL, NULL, NULL, iv))
		return -1;
	if (aad_len && !EVP_EncryptUpdate(s->ctx, NULL, &outl, aad, (int)aad_len))
		return -1;
	if (len && !EVP_EncryptUpdate(s->ctx, buf, &outl, buf, (int)len))
		return -1;
	if (!EVP_EncryptFinal_ex(s->ctx, buf + len, &outl))
		return -1;
	if (!EVP_CIPHER_CTX_ctrl(s->ctx, EVP_CTRL_GCM_GET_TAG, 16, tag))
		return -1;
	return 0;
}

static size_t ossl_key_state_bytes(const void *p)
{
	(void)p;
	/* The provider's GCM context (key schedule, H table) is opaque; report the size of
	 * what we can account for: the schedule (15 round keys) and the 16-entry H table that
	 * OpenSSL's GHASH keeps, 240 + 256 bytes, plus the 32-byte key itself. */
	return 240 + 256 + 32;
}

const struct secho_offload_ops secho_offload_openssl_ops = {
        .name = "openssl",
        .probe = ossl_probe,
        .init = ossl_init,
        .seal = ossl_seal,
        .key_state_bytes = ossl_key_state_bytes,
        .fini = ossl_fini,
};
