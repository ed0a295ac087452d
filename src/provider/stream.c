/*
 * src/provider/stream.c - AES-128/192/256 in CTR (128-bit counter), CFB128 and OFB: any
 * length, any split into updates, through the library's secho_stream.
 *
 * An init follows OpenSSL's default provider, so that restarting a context gives the same
 * bytes: a new IV starts there; without one, CFB and OFB go back to the IV as set (never
 * continuing a keystream by accident), while CTR carries on from its next counter block
 * (the rest of a partly used keystream block is dropped); a key without any IV runs from
 * an all-zero IV. updated-iv and num are the stream's register and position
 * (secho_stream_get_iv).
 */
#include <string.h>

#include "provider/prov.h"

struct stream_ctx {
	struct sp_base b;
	uint8_t oiv[16];   /* the IV as set */
	uint8_t start[16]; /* where the stream (re)starts once a key is there */
	uint8_t upd[16];   /* updated-iv, handed out by address (OCTET_PTR) */
	secho_stream s;
	bool iv_set, live; /* live: s is set up with the current key */
};

SP_FAMILY_DECLS(stream)

static void *stream_newctx(void *provctx, const struct sp_alg *alg)
{
	return sp_ctx_alloc(provctx, alg, sizeof(struct stream_ctx));
}

static void stream_freectx(void *vctx)
{
	sp_ctx_free(vctx, sizeof(struct stream_ctx));
}

/* The copy's secho_stream points at the shared key object: still valid. */
static void *stream_dupctx(void *vctx)
{
	return sp_ctx_dup(vctx, sizeof(struct stream_ctx));
}

static int lib_error(const struct stream_ctx *c, int rc)
{
	SP_ERR(c->b.prov, SP_R_LIBRARY, "%s", secho_strerror(rc));
	return 0;
}

static int stream_init(struct stream_ctx *c, const unsigned char *key, size_t keylen,
                       const unsigned char *iv, size_t ivlen, const OSSL_PARAM params[], int enc)
{
	c->b.enc = enc;
	if (iv) {
		if (ivlen != 16) {
			SP_ERR(c->b.prov, SP_PROV_R(PROV_R_INVALID_IV_LENGTH),
			       "the IV is 16 bytes, got %zu", ivlen);
			return 0;
		}
		memcpy(c->oiv, iv, 16);
		memcpy(c->start, iv, 16);
		c->iv_set = true;
		SP_COUNT(&c->b, iv_inits, 1);
	} else if (c->iv_set && c->b.alg->mode != SP_CTR) {
		memcpy(c->start, c->oiv, 16);
	} else if (c->live) {
		int rc = secho_stream_get_iv(&c->s, c->start, NULL);
		if (rc)
			return lib_error(c, rc);
	}
	if (key && !sp_set_key(&c->b, key, keylen))
		return 0;
	if (c->b.key) {
		const secho_aes_key *k = &c->b.key->k.aes;
		int rc = c->b.alg->mode == SP_CTR   ? secho_ctr_init(&c->s, k, c->start)
		         : c->b.alg->mode == SP_CFB ? secho_cfb_init(&c->s, k, c->start)
		                                    : secho_ofb_init(&c->s, k, c->start);
		if (rc)
			return lib_error(c, rc);
		c->live = true;
	}
	return stream_set_ctx_params(c, params);
}

static int stream_einit(void *vctx, const unsigned char *key, size_t keylen,
                        const unsigned char *iv, size_t ivlen, const OSSL_PARAM params[])
{
	return stream_init(vctx, key, keylen, iv, ivlen, params, 1);
}

static int stream_dinit(void *vctx, const unsigned char *key, size_t keylen,
                        const unsigned char *iv, size_t ivlen, const OSSL_PARAM params[])
{
	return stream_init(vctx, key, keylen, iv, ivlen, params, 0);
}

static int stream_update(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
                         const unsigned char *in, size_t inl)
{
	struct stream_ctx *c = vctx;
	if (!c->live) {
		SP_ERR(c->b.prov, SP_PROV_R(PROV_R_NO_KEY_SET), "no key set");
		return 0;
	}
	if (!inl) {
		*outl = 0;
		return 1;
	}
	if (outsize < inl) {
		SP_ERR(c->b.prov, SP_PROV_R(PROV_R_OUTPUT_BUFFER_TOO_SMALL),
		       "output needs %zu bytes, room for %zu", inl, outsize);
		return 0;
	}
	if (sp_overlap(out, in, inl)) {
		SP_ERR(c->b.prov, SP_R_OVERLAP, "input and output overlap partially");
		return 0;
	}
	int rc;
	switch (c->b.alg->mode) {
	case SP_CTR:
		rc = secho_ctr_update(&c->s, out, in, inl);
		break;
	case SP_OFB:
		rc = secho_ofb_update(&c->s, out, in, inl);
		break;
	default:
		rc = c->b.enc ? secho_cfb_encrypt(&c->s, out, in, inl)
		              : secho_cfb_decrypt(&c->s, out, in, inl);
		break;
	}
	if (rc)
		return lib_error(c, rc);
	SP_COUNT(&c->b, bytes, inl);
	*outl = inl;
	return 1;
}

static int stream_final(void *vctx, unsigned char *out, size_t *outl, size_t outsize)
{
	struct stream_ctx *c = vctx;
	(void)out;
	(void)outsize;
	if (!c->live) {
		SP_ERR(c->b.prov, SP_PROV_R(PROV_R_NO_KEY_SET), "no key set");
		return 0;
	}
	*outl = 0;
	return 1;
}

static int stream_cipher(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
                         const unsigned char *in, size_t inl)
{
	return stream_update(vctx, out, outl, outsize, in, inl);
}

/* ---- parameters ---- */

static const OSSL_PARAM gettable[] = {
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),
        OSSL_PARAM_uint(OSSL_CIPHER_PARAM_PADDING, NULL),
        OSSL_PARAM_uint(OSSL_CIPHER_PARAM_NUM, NULL),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_IV, NULL, 0),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_UPDATED_IV, NULL, 0),
        OSSL_PARAM_END,
};
static const OSSL_PARAM settable[] = {
        OSSL_PARAM_uint(OSSL_CIPHER_PARAM_PADDING, NULL),
        OSSL_PARAM_uint(OSSL_CIPHER_PARAM_NUM, NULL),
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
        OSSL_PARAM_END,
};

static const OSSL_PARAM *stream_gettable_ctx_params(void *cctx, void *provctx)
{
	(void)cctx;
	(void)provctx;
	return gettable;
}

static const OSSL_PARAM *stream_settable_ctx_params(void *cctx, void *provctx)
{
	(void)cctx;
	(void)provctx;
	return settable;
}

/* The register and position: from the live stream, else where it will start. */
static void position(struct stream_ctx *c, unsigned *num)
{
	*num = 0;
	if (!c->live || secho_stream_get_iv(&c->s, c->upd, num) != SECHO_OK)
		memcpy(c->upd, c->start, 16);
}

enum { P_KEYLEN, P_IVLEN, P_PADDING, P_NUM, P_IV, P_UPDATED_IV };
static const char *const names[] = {
        OSSL_CIPHER_PARAM_KEYLEN,
        OSSL_CIPHER_PARAM_IVLEN,
        OSSL_CIPHER_PARAM_PADDING,
        OSSL_CIPHER_PARAM_NUM,
        OSSL_CIPHER_PARAM_IV,
        OSSL_CIPHER_PARAM_UPDATED_IV,
        NULL,
};
#define FIRSTS                                                                                     \
	(SP_FIRST('k') | SP_FIRST('i') | SP_FIRST('p') | SP_FIRST('n') |                           \
	 SP_FIRST('u')) /* the first letters of names */

static int stream_get_ctx_params(void *vctx, OSSL_PARAM params[])
{
	struct stream_ctx *c = vctx;
	unsigned num;
	position(c, &num);
	for (OSSL_PARAM *p = params; p && p->key; p++) {
		bool ok = true;
		switch (sp_param_index(p->key, names, FIRSTS)) {
		case P_KEYLEN:
			ok = sp_param_set_u64(p, c->b.alg->key_len);
			break;
		case P_IVLEN:
			ok = sp_param_set_u64(p, 16);
			break;
		case P_PADDING:
			ok = sp_param_set_u64(p, 0);
			break;
		case P_NUM:
			ok = sp_param_set_u64(p, num);
			break;
		case P_IV:
			ok = sp_param_set_octets(p, c->oiv, 16);
			break;
		case P_UPDATED_IV:
			ok = sp_param_set_octets(p, c->upd, 16);
			break;
		default:
			break;
		}
		if (!ok)
			return sp_param_bad_get(&c->b, p);
	}
	return 1;
}

/* padding means nothing to a stream mode and is accepted (EVP_CIPHER_CTX_set_padding
 * sends it to every cipher); num can only be confirmed, not moved. */
static int stream_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
	struct stream_ctx *c = vctx;
	for (const OSSL_PARAM *p = params; p && p->key; p++) {
		int id = sp_param_index(p->key, names, FIRSTS);
		uint64_t v;
		unsigned num;
		if (id != P_KEYLEN && id != P_PADDING && id != P_NUM)
			continue;
		if (!sp_param_get_u64(p, &v))
			return sp_param_bad_set(&c->b, p);
		if (id == P_KEYLEN && v != c->b.alg->key_len)
			return sp_bad_keylen(&c->b);
		if (id == P_NUM) {
			position(c, &num);
			if (v != num) {
				SP_ERR(c->b.prov, SP_R_NOT_SUPPORTED,
				       "num: only the current position (%u) can be set", num);
				return 0;
			}
		}
	}
	return 1;
}

#define SP_DISPATCH_block(sym)
#define SP_DISPATCH_stream(sym) SP_CIPHER_DISPATCH(sym, stream)
#define SP_DISPATCH_gcm(sym)
#define SP_GEN(sym, names, mode, kl, fam) SP_DISPATCH_##fam(sym)
SP_ALGS(SP_GEN)
