/*
 * src/provider/gcm.c - AES-128/192/256-GCM through EVP, and the TLS record paths.
 *
 * A message: an init with an IV (any length; 12 bytes is the library's fast path, set
 * the length first with "ivlen"), AAD as updates with no output buffer, text updates in
 * any split, then final: on encrypt it computes the tag (read it after final as "tag",
 * 4..16 bytes); on decrypt it verifies the tag set before it ("tag", 4..16 bytes) and
 * fails without raising an error when it does not match, as the default provider does
 * (Python's cryptography reads an empty error queue as InvalidTag). Decryption writes
 * plaintext as the updates come, like every streaming GCM: callers discard it when final
 * fails. Final has nothing to release in GCM, so a failed final releases nothing.
 *
 * Key and IV may come in any order and in separate inits (Python's cryptography sets the
 * tag, then the key and IV); the IV is kept and the message begins at the first update or
 * final (secho_gcm_init computes J0 then). An init with only an IV keeps the expanded key.
 * A message ends at final; another one needs a new IV (so no IV is used twice by
 * accident), and a new key abandons a running message.
 *
 * Short messages. EVP's message shape - init, AAD, one text update, final - is what
 * TLS 1.3 records, Python's AESGCM and `openssl speed` use. Through the library's
 * streaming context it costs several calls into the implementation per message (J0, AAD
 * padding, text, lengths, E(J0)); its one-shot seal/open does it all in one fused pass
 * (about 80 vs 200 TSC cycles at 64 bytes with VAES). So AAD up to AAD_INLINE bytes is
 * kept back, and a first text update of up to SPEC_MAX bytes with a 12-byte IV is done
 * one-shot: encrypting, the tag is computed then and handed out at final; decrypting
 * with the tag already set, it is verified then (the plaintext is written either way,
 * as streaming would). The update's input is kept in save[]. Should the message go on -
 * more text, a tag set or changed after the update - the streaming context is rebuilt
 * from IV, AAD and save[] (the text is run through it again into save[]) and continues.
 * The bytes and the verdict are the same either way; only the cost differs.
 *
 * TLS 1.3 uses the above per record. TLS 1.2 (RFC 5288) uses the record path: libssl
 * sets the 4-byte fixed IV ("tlsivfixed"; when encrypting, the 8-byte invocation field
 * starts random and counts up per record), then per record the 13-byte pseudo-header
 * ("tlsaad", whose length field is corrected for the explicit nonce and tag; "tlsaadpad"
 * = 16) and one in-place update over explicit nonce || text || tag. That update is the
 * library's one-shot seal/open (secho_gcm_seal/open: the fused 96-bit-IV path; open
 * zeroes the output on a wrong tag). "tlsivgen" / "tlsivinv" give and take the explicit
 * nonce for callers that frame records themselves.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "provider/prov.h"

#define TAG_MAX       16
#define TAG_MIN       4
#define TLS_AAD_LEN   13   /* seq_num(8) type(1) version(2) length(2) */
#define TLS_EXPLICIT  8    /* explicit nonce: the invocation field */
#define TLS_FIXED_MIN 4    /* fixed field: at least 4 bytes */
#define IV_INLINE     64   /* IVs up to this long live in the context */
#define AAD_INLINE    64   /* AAD kept back until the text begins */
#define SPEC_MAX      1024 /* the longest text update done one-shot */

enum iv_state {
	IV_UNSET = 0, /* no IV yet */
	IV_BUFFERED,  /* IV known, no text yet: AAD (if short) waits in aad[] */
	IV_SPEC,      /* one text update done one-shot (see "Short messages") */
	IV_LIVE,      /* message running in g (the library's streaming context) */
	IV_DONE,      /* message finished or abandoned: a new IV is needed */
};

struct gcm_ctx {
	struct sp_base b;
	uint8_t *iv; /* ivlen bytes: iv_inline, or the heap for longer IVs */
	size_t ivlen, iv_cap;
	enum iv_state iv_state;
	bool iv_gen; /* TLS 1.2: the fixed field is set, the invocation field counted here */
	bool tls_aad_set;
	uint8_t tls_aad[TLS_AAD_LEN];
	uint64_t tls_records; /* sealed under this key */
	size_t taglen;        /* 0: none set (decrypt) / not computed yet (encrypt) */
	uint8_t tag[TAG_MAX];
	size_t aad_len;            /* IV_BUFFERED, IV_SPEC: AAD bytes in aad[] */
	size_t save_len;           /* IV_SPEC: text bytes in save[] */
	uint8_t spec_tag[TAG_MAX]; /* IV_SPEC: the tag computed (enc) or verified (dec) */
	size_t spec_taglen;        /* IV_SPEC, decrypting: 0 = not verified */
	secho_gcm_ctx g;
	uint8_t iv_inline[IV_INLINE];
	uint8_t aad[AAD_INLINE];
	uint8_t save[SPEC_MAX]; /* IV_SPEC: the input of the one-shot update */
};

SP_FAMILY_DECLS(gcm)

static void *gcm_newctx(void *provctx, const struct sp_alg *alg)
{
	struct gcm_ctx *c = sp_ctx_alloc(provctx, alg, sizeof(*c));
	if (c) {
		c->iv = c->iv_inline;
		c->iv_cap = sizeof(c->iv_inline);
		c->ivlen = alg->iv_len;
	}
	return c;
}

static void gcm_freectx(void *vctx)
{
	struct gcm_ctx *c = vctx;
	if (c && c->iv != c->iv_inline) {
		secho_wipe(c->iv, c->iv_cap);
		free(c->iv);
	}
	sp_ctx_free(vctx, sizeof(struct gcm_ctx));
}

static void *gcm_dupctx(void *vctx)
{
	const struct gcm_ctx *c = vctx;
	struct gcm_ctx *d = sp_ctx_dup(&c->b, sizeof(*c));
	if (!d)
		return NULL;
	if (c->iv == c->iv_inline) {
		d->iv = d->iv_inline;
		return d;
	}
	d->iv = malloc(c->iv_cap);
	if (!d->iv) {
		d->iv = d->iv_inline; /* the free below must not touch c's IV */
		d->iv_cap = sizeof(d->iv_inline);
		gcm_freectx(d);
		SP_ERR(c->b.prov, SP_PROV_R(ERR_R_MALLOC_FAILURE), "no memory for the IV");
		return NULL;
	}
	memcpy(d->iv, c->iv, c->iv_cap);
	return d;
}

/* Make room for an n-byte IV (the old bytes are not kept). 1, or 0 with an error. */
static int iv_room(struct gcm_ctx *c, size_t n)
{
	if (n <= c->iv_cap)
		return 1;
	uint8_t *p = malloc(n);
	if (!p) {
		SP_ERR(c->b.prov, SP_PROV_R(ERR_R_MALLOC_FAILURE), "no memory for a %zu-byte IV",
		       n);
		return 0;
	}
	if (c->iv != c->iv_inline) {
		secho_wipe(c->iv, c->iv_cap);
		free(c->iv);
	}
	c->iv = p;
	c->iv_cap = n;
	return 1;
}

static int gcm_init(struct gcm_ctx *c, const unsigned char *key, size_t keylen,
                    const unsigned char *iv, size_t ivlen, const OSSL_PARAM params[], int enc)
{
	c->b.enc = enc;
	if (iv) {
		if (!ivlen) {
			SP_ERR(c->b.prov, SP_PROV_R(PROV_R_INVALID_IV_LENGTH),
			       "a GCM IV is at least 1 byte");
			return 0;
		}
		if (!iv_room(c, ivlen))
			return 0;
		memcpy(c->iv, iv, ivlen);
		c->ivlen = ivlen;
		c->iv_state = IV_BUFFERED;
		c->aad_len = 0;
		secho_wipe(c->save, c->save_len);
		c->save_len = 0;
		SP_COUNT(&c->b, iv_inits, 1);
	}
	if (key) {
		if (c->iv_state == IV_LIVE || c->iv_state == IV_SPEC)
			c->iv_state = IV_DONE; /* the running message was under the old key */
		if (!sp_set_key(&c->b, key, keylen))
			return 0;
		c->tls_records = 0;
	}
	return gcm_set_ctx_params(c, params);
}

static int gcm_einit(void *vctx, const unsigned char *key, size_t keylen, const unsigned char *iv,
                     size_t ivlen, const OSSL_PARAM params[])
{
	return gcm_init(vctx, key, keylen, iv, ivlen, params, 1);
}

static int gcm_dinit(void *vctx, const unsigned char *key, size_t keylen, const unsigned char *iv,
                     size_t ivlen, const OSSL_PARAM params[])
{
	return gcm_init(vctx, key, keylen, iv, ivlen, params, 0);
}

/* Can a message run: key, and an IV (or, encrypting, a TLS 1.2 generated one)? 1, or 0
 * with an error raised. */
static int ready(struct gcm_ctx *c)
{
	if (!c->b.key) {
		SP_ERR(c->b.prov, SP_PROV_R(PROV_R_NO_KEY_SET), "no key set");
		return 0;
	}
	if (c->iv_state == IV_UNSET && c->b.enc && c->iv_gen) {
		c->iv_state = IV_BUFFERED;
		c->aad_len = 0;
	}
	if (c->iv_state == IV_UNSET) {
		SP_ERR(c->b.prov, SP_R_STATE, "no IV set");
		return 0;
	}
	if (c->iv_state == IV_DONE) {
		SP_ERR(c->b.prov, SP_R_STATE, "the message is finished: set a new IV");
		return 0;
	}
	return 1;
}

static int lib_fail(struct gcm_ctx *c, int rc)
{
	SP_ERR(c->b.prov, rc == SECHO_ESTATE ? SP_R_STATE : SP_R_LIBRARY, "%s", secho_strerror(rc));
	return 0;
}

/* Bring the message into the library's streaming context (IV_LIVE): from IV_BUFFERED,
 * J0 and the kept AAD; from IV_SPEC, also the text of the one-shot update run again
 * (into save[], thrown away). 1, or 0 with an error raised (then IV_DONE). */
static int go_live(struct gcm_ctx *c)
{
	if (c->iv_state == IV_LIVE)
		return 1;
	if (!ready(c))
		return 0;
	int rc = secho_gcm_init(&c->g, &c->b.key->k, c->iv, c->ivlen);
	if (!rc)
		rc = secho_gcm_aad(&c->g, c->aad, c->aad_len);
	if (!rc && c->iv_state == IV_SPEC)
		rc = c->b.enc ? secho_gcm_encrypt_update(&c->g, c->save, c->save, c->save_len)
		              : secho_gcm_decrypt_update(&c->g, c->save, c->save, c->save_len);
	secho_wipe(c->save, c->save_len);
	c->save_len = 0;
	if (rc) {
		c->iv_state = IV_DONE;
		return lib_fail(c, rc);
	}
	c->iv_state = IV_LIVE;
	return 1;
}

/* The first text update of a short message, one-shot (see the top of the file). 1, or 0
 * with an error raised. */
static int spec_update(struct gcm_ctx *c, unsigned char *out, const unsigned char *in, size_t n)
{
	const secho_gcm_key *k = &c->b.key->k;
	int rc;
	memcpy(c->save, in, n); /* before out is written: it may be in */
	c->save_len = n;
	c->iv_state = IV_SPEC;
	if (c->b.enc) {
		rc = secho_gcm_seal(k, c->iv, c->ivlen, c->aad, c->aad_len, out, in, n, c->spec_tag,
		                    TAG_MAX);
		if (rc) {
			c->iv_state = IV_DONE;
			return lib_fail(c, rc);
		}
		return 1;
	}
	rc = secho_gcm_open(k, c->iv, c->ivlen, c->aad, c->aad_len, out, in, n, c->tag, c->taglen);
	if (rc == SECHO_OK) {
		memcpy(c->spec_tag, c->tag, c->taglen);
		c->spec_taglen = c->taglen;
		return 1;
	}
	if (rc != SECHO_EAUTH) {
		c->iv_state = IV_DONE;
		return lib_fail(c, rc);
	}
	/* Not authentic as it stands (more text may follow): out was zeroed. Go on as
	 * streaming would, decrypting save[] into out. */
	rc = secho_gcm_init(&c->g, k, c->iv, c->ivlen);
	if (!rc)
		rc = secho_gcm_aad(&c->g, c->aad, c->aad_len);
	if (!rc)
		rc = secho_gcm_decrypt_update(&c->g, out, c->save, n);
	secho_wipe(c->save, n);
	c->save_len = 0;
	c->iv_state = rc ? IV_DONE : IV_LIVE;
	return rc ? lib_fail(c, rc) : 1;
}

/* ---- TLS 1.2 records ---- */

/* The invocation field (the IV's last 8 bytes) as a 64-bit big-endian counter. */
static void next_nonce(struct gcm_ctx *c)
{
	for (size_t i = c->ivlen; i > c->ivlen - TLS_EXPLICIT;)
		if (++c->iv[--i])
			break;
}

/* One record, in place: explicit nonce (8) || text || tag (16). *outl: the whole record
 * when sealing, the text when opening (libssl skips the nonce itself). */
static int tls_record(struct gcm_ctx *c, unsigned char *out, size_t *outl, const unsigned char *in,
                      size_t len)
{
	int ok = 0;
	size_t plen = 0;
	const size_t over = TLS_EXPLICIT + TAG_MAX;
	if (!c->b.key || !c->iv_gen || out != in || len < over) {
		SP_ERR(c->b.prov, SP_PROV_R(PROV_R_CIPHER_OPERATION_FAILED),
		       "a TLS record is sealed in place, after tlsivfixed, with room for nonce and "
		       "tag");
		goto done;
	}
	if (c->b.enc && ++c->tls_records == 0) {
		SP_ERR(c->b.prov, SP_PROV_R(PROV_R_TOO_MANY_RECORDS), "2^64 records under one key");
		goto done;
	}
	uint8_t *nonce = c->iv + c->ivlen - TLS_EXPLICIT;
	size_t n = len - over;
	int rc;
	if (c->b.enc) {
		memcpy(out, nonce, TLS_EXPLICIT);
		rc = secho_gcm_seal(&c->b.key->k, c->iv, c->ivlen, c->tls_aad, TLS_AAD_LEN,
		                    out + TLS_EXPLICIT, in + TLS_EXPLICIT, n,
		                    out + TLS_EXPLICIT + n, TAG_MAX);
		next_nonce(c);
	} else {
		memcpy(nonce, in, TLS_EXPLICIT);
		rc = secho_gcm_open(&c->b.key->k, c->iv, c->ivlen, c->tls_aad, TLS_AAD_LEN,
		                    out + TLS_EXPLICIT, in + TLS_EXPLICIT, n, in + TLS_EXPLICIT + n,
		                    TAG_MAX);
	}
	SP_COUNT(&c->b, bytes, n);
	if (rc == SECHO_EAUTH) { /* output zeroed by the library; no error, as for final */
		SP_COUNT(&c->b, tls12_rejected, 1);
		goto done;
	}
	if (rc) {
		SP_ERR(c->b.prov, SP_R_LIBRARY, "%s", secho_strerror(rc));
		goto done;
	}
	if (c->b.enc)
		SP_COUNT(&c->b, tls12_sealed, 1);
	else
		SP_COUNT(&c->b, tls12_opened, 1);
	plen = c->b.enc ? len : n;
	ok = 1;
done:
	c->iv_state = IV_DONE;
	c->tls_aad_set = false;
	*outl = plen;
	return ok;
}

/* ---- update, final, cipher ---- */

static int gcm_update(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
                      const unsigned char *in, size_t inl)
{
	struct gcm_ctx *c = vctx;
	if (!inl) {
		*outl = 0;
		return 1;
	}
	if (outsize < inl) {
		SP_ERR(c->b.prov, SP_PROV_R(PROV_R_OUTPUT_BUFFER_TOO_SMALL),
		       "output needs %zu bytes, room for %zu", inl, outsize);
		return 0;
	}
	if (c->tls_aad_set)
		return tls_record(c, out, outl, in, inl);
	if (!ready(c))
		return 0;
	int rc;
	if (!out) { /* AAD */
		if (c->iv_state == IV_BUFFERED && inl <= AAD_INLINE - c->aad_len) {
			memcpy(c->aad + c->aad_len, in, inl);
			c->aad_len += inl;
			*outl = inl;
			return 1;
		}
		if (c->iv_state == IV_SPEC) {
			SP_ERR(c->b.prov, SP_R_STATE, "AAD after text");
			return 0;
		}
		if (!go_live(c))
			return 0;
		rc = secho_gcm_aad(&c->g, in, inl);
	} else if (sp_overlap(out, in, inl)) {
		SP_ERR(c->b.prov, SP_R_OVERLAP, "input and output overlap partially");
		return 0;
	} else if (c->iv_state == IV_BUFFERED && inl <= SPEC_MAX && c->ivlen == SECHO_GCM_IV_LEN &&
	           (c->b.enc || c->taglen)) {
		rc = spec_update(c, out, in, inl) ? SECHO_OK : SECHO_EINVAL;
		if (rc)
			return 0; /* error raised */
	} else {
		if (!go_live(c))
			return 0;
		rc = c->b.enc ? secho_gcm_encrypt_update(&c->g, out, in, inl)
		              : secho_gcm_decrypt_update(&c->g, out, in, inl);
	}
	if (rc)
		return lib_fail(c, rc);
	if (out)
		SP_COUNT(&c->b, bytes, inl);
	*outl = inl;
	return 1;
}

/* Encrypting: the tag of the message so far, now complete. Decrypting: verify the tag
 * set; on a mismatch return 0 without raising an error, as the default provider does. */
static int gcm_final(void *vctx, unsigned char *out, size_t *outl, size_t outsize)
{
	struct gcm_ctx *c = vctx;
	(void)out;
	(void)outsize;
	if (c->tls_aad_set) {
		SP_ERR(c->b.prov, SP_PROV_R(PROV_R_CIPHER_OPERATION_FAILED),
		       "a TLS record is one update, without final");
		return 0;
	}
	if (!c->b.enc && !c->taglen) {
		SP_ERR(c->b.prov, SP_PROV_R(PROV_R_TAG_NOT_SET), "set the tag before final");
		return 0;
	}
	if (!ready(c))
		return 0;
	const secho_gcm_key *k = &c->b.key->k;
	int rc;
	if (c->iv_state == IV_BUFFERED) { /* no text: AAD only */
		rc = c->b.enc ? secho_gcm_seal(k, c->iv, c->ivlen, c->aad, c->aad_len, NULL, NULL,
		                               0, c->tag, TAG_MAX)
		              : secho_gcm_open(k, c->iv, c->ivlen, c->aad, c->aad_len, NULL, NULL,
		                               0, c->tag, c->taglen);
	} else if (c->iv_state == IV_SPEC && c->b.enc) {
		memcpy(c->tag, c->spec_tag, TAG_MAX);
		rc = SECHO_OK;
	} else if (c->iv_state == IV_SPEC && c->spec_taglen == c->taglen &&
	           sp_ct_equal(c->spec_tag, c->tag, c->taglen)) {
		rc = SECHO_OK; /* verified at the update, with this very tag */
	} else {
		if (!go_live(c))
			return 0;
		rc = c->b.enc ? secho_gcm_finish(&c->g, c->tag, TAG_MAX)
		              : secho_gcm_verify(&c->g, c->tag, c->taglen);
	}
	secho_wipe(c->save, c->save_len);
	c->save_len = 0;
	c->aad_len = 0;
	c->iv_state = IV_DONE;
	if (c->b.enc)
		c->taglen = TAG_MAX;
	if (rc == SECHO_EAUTH) {
		SP_COUNT(&c->b, gcm_rejected, 1);
		return 0;
	}
	if (rc)
		return lib_fail(c, rc);
	if (c->b.enc)
		SP_COUNT(&c->b, gcm_sealed, 1);
	else
		SP_COUNT(&c->b, gcm_opened, 1);
	*outl = 0;
	return 1;
}

/* EVP_Cipher(): an update, or with no input the final. */
static int gcm_cipher(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
                      const unsigned char *in, size_t inl)
{
	if (!in)
		return gcm_final(vctx, out, outl, outsize);
	return gcm_update(vctx, out, outl, outsize, in, inl);
}

/* ---- parameters ---- */

static const OSSL_PARAM gettable[] = {
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_TAGLEN, NULL),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_IV, NULL, 0),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_UPDATED_IV, NULL, 0),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, NULL, 0),
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD, NULL),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_GET_IV_GEN, NULL, 0),
        OSSL_PARAM_END,
};
static const OSSL_PARAM settable[] = {
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_IVLEN, NULL),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, NULL, 0),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_AAD, NULL, 0),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED, NULL, 0),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_SET_IV_INV, NULL, 0),
        OSSL_PARAM_END,
};

static const OSSL_PARAM *gcm_gettable_ctx_params(void *cctx, void *provctx)
{
	(void)cctx;
	(void)provctx;
	return gettable;
}

static const OSSL_PARAM *gcm_settable_ctx_params(void *cctx, void *provctx)
{
	(void)cctx;
	(void)provctx;
	return settable;
}

/* "tlsivgen": begin a message with the current IV, hand out its last bytes (the explicit
 * nonce; all of it when olen is 0 or longer than the IV), count the field up. */
static int iv_gen(struct gcm_ctx *c, OSSL_PARAM *p)
{
	if (!c->iv_gen || !c->b.key || p->data_type != OSSL_PARAM_OCTET_STRING || !p->data) {
		SP_ERR(c->b.prov, SP_R_STATE, "tlsivgen needs a key and tlsivfixed");
		return 0;
	}
	c->iv_state = IV_BUFFERED; /* with the invocation field as it stands: a fresh nonce */
	c->aad_len = 0;
	if (!go_live(c))
		return 0;
	size_t olen = p->data_size;
	if (!olen || olen > c->ivlen)
		olen = c->ivlen;
	memcpy(p->data, c->iv + c->ivlen - olen, olen);
	p->return_size = olen;
	next_nonce(c);
	return 1;
}

enum {
	P_KEYLEN,
	P_IVLEN,
	P_TAGLEN,
	P_IV,
	P_UPDATED_IV,
	P_TAG,
	P_TLS_AAD_PAD,
	P_TLS_IV_GEN,
	P_TLS_AAD,
	P_TLS_IV_FIXED,
	P_TLS_IV_INV
};
static const char *const names[] = {
        OSSL_CIPHER_PARAM_KEYLEN,
        OSSL_CIPHER_PARAM_IVLEN, /* = OSSL_CIPHER_PARAM_AEAD_IVLEN */
        OSSL_CIPHER_PARAM_AEAD_TAGLEN,
        OSSL_CIPHER_PARAM_IV,
        OSSL_CIPHER_PARAM_UPDATED_IV,
        OSSL_CIPHER_PARAM_AEAD_TAG,
        OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD,
        OSSL_CIPHER_PARAM_AEAD_TLS1_GET_IV_GEN,
        OSSL_CIPHER_PARAM_AEAD_TLS1_AAD,
        OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED,
        OSSL_CIPHER_PARAM_AEAD_TLS1_SET_IV_INV,
        NULL,
};
#define FIRSTS                                                                                     \
	(SP_FIRST('k') | SP_FIRST('i') | SP_FIRST('t') |                                           \
	 SP_FIRST('u')) /* the first letters of names */

static int gcm_get_ctx_params(void *vctx, OSSL_PARAM params[])
{
	struct gcm_ctx *c = vctx;
	for (OSSL_PARAM *p = params; p && p->key; p++) {
		bool ok = true;
		switch (sp_param_index(p->key, names, FIRSTS)) {
		case P_KEYLEN:
			ok = sp_param_set_u64(p, c->b.alg->key_len);
			break;
		case P_IVLEN:
			ok = sp_param_set_u64(p, c->ivlen);
			break;
		case P_TAGLEN:
			ok = sp_param_set_u64(p, c->taglen ? c->taglen : TAG_MAX);
			break;
		case P_TLS_AAD_PAD:
			ok = sp_param_set_u64(p, TAG_MAX);
			break;
		case P_IV:
		case P_UPDATED_IV:
			ok = c->iv_state != IV_UNSET && sp_param_set_octets(p, c->iv, c->ivlen);
			break;
		case P_TAG: {
			size_t sz = p->data_size;
			if (!c->b.enc || c->taglen != TAG_MAX || sz < TAG_MIN || sz > TAG_MAX ||
			    !sp_param_set_octets(p, c->tag, sz)) {
				SP_ERR(c->b.prov, SP_PROV_R(PROV_R_INVALID_TAG),
				       "the tag is read after final on encrypt, 4..16 bytes (asked "
				       "%zu)",
				       sz);
				return 0;
			}
			break;
		}
		case P_TLS_IV_GEN:
			if (!iv_gen(c, p))
				return 0;
			break;
		default:
			break;
		}
		if (!ok)
			return sp_param_bad_get(&c->b, p);
	}
	return 1;
}

/* "tlsaad": keep the pseudo-header, its length field made the text's (RFC 5288: the
 * record length less the explicit nonce, and when opening less the tag). */
static int tls_aad(struct gcm_ctx *c, const unsigned char *aad, size_t len)
{
	if (len != TLS_AAD_LEN)
		return 0;
	size_t n = (size_t)aad[TLS_AAD_LEN - 2] << 8 | aad[TLS_AAD_LEN - 1];
	size_t less = TLS_EXPLICIT + (c->b.enc ? 0 : TAG_MAX);
	if (n < less)
		return 0;
	n -= less;
	memcpy(c->tls_aad, aad, TLS_AAD_LEN);
	c->tls_aad[TLS_AAD_LEN - 2] = (uint8_t)(n >> 8);
	c->tls_aad[TLS_AAD_LEN - 1] = (uint8_t)n;
	c->tls_aad_set = true;
	return 1;
}

/* "tlsivfixed": the fixed field (>= 4 bytes, leaving >= 8 for the invocation field),
 * which when encrypting starts at a random value; a size of SIZE_MAX
 * (EVP_CTRL_GCM_SET_IV_FIXED with -1) gives the whole IV instead. */
static int iv_fixed(struct gcm_ctx *c, const OSSL_PARAM *p)
{
	if (p->data_type != OSSL_PARAM_OCTET_STRING || !p->data)
		return 0;
	size_t len = p->data_size;
	if (len == SIZE_MAX) {
		memcpy(c->iv, p->data, c->ivlen);
	} else {
		if (len < TLS_FIXED_MIN || len > c->ivlen || c->ivlen - len < TLS_EXPLICIT)
			return 0;
		memcpy(c->iv, p->data, len);
		size_t r = c->ivlen - len;
		if (c->b.enc && getrandom(c->iv + len, r, 0) != (ssize_t)r) {
			SP_ERR(c->b.prov, SP_R_RANDOM, "getrandom failed");
			return 0;
		}
	}
	c->iv_gen = true;
	c->iv_state = IV_BUFFERED;
	c->aad_len = 0;
	return 1;
}

/* "tlsivinv" (decrypting): the explicit nonce of the record to open; begins it. */
static int iv_inv(struct gcm_ctx *c, const OSSL_PARAM *p)
{
	const unsigned char *d;
	size_t len;
	if (!c->iv_gen || !c->b.key || c->b.enc || !sp_param_get_octets(p, &d, &len) ||
	    len > c->ivlen)
		return 0;
	memcpy(c->iv + c->ivlen - len, d, len);
	c->iv_state = IV_BUFFERED;
	c->aad_len = 0;
	return go_live(c);
}

static int set_tag(struct gcm_ctx *c, const OSSL_PARAM *p)
{
	const unsigned char *d;
	size_t len;
	if (!sp_param_get_octets(p, &d, &len) || !d || len < TAG_MIN || len > TAG_MAX || c->b.enc) {
		SP_ERR(c->b.prov, SP_PROV_R(PROV_R_INVALID_TAG),
		       "a tag is set when decrypting, 4..16 bytes");
		return 0;
	}
	memcpy(c->tag, d, len);
	c->taglen = len;
	return 1;
}

static int set_ivlen(struct gcm_ctx *c, const OSSL_PARAM *p)
{
	size_t n;
	if (!sp_param_get_size(p, &n) || !n) {
		SP_ERR(c->b.prov, SP_PROV_R(PROV_R_INVALID_IV_LENGTH),
		       "a GCM IV is at least 1 byte");
		return 0;
	}
	if (n != c->ivlen) {
		if (!iv_room(c, n))
			return 0;
		if (c->iv_state != IV_UNSET)
			c->iv_state = IV_DONE; /* the IV set before is void now */
		c->ivlen = n;
	}
	return 1;
}

/* Unknown parameters are ignored (OpenSSL's rule: EVP_CIPHER_CTX_set_padding and libssl's
 * tls-version reach every cipher); a known one with a bad value fails with an error. */
static int gcm_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
	struct gcm_ctx *c = vctx;
	for (const OSSL_PARAM *p = params; p && p->key; p++) {
		const unsigned char *d;
		size_t len;
		switch (sp_param_index(p->key, names, FIRSTS)) {
		case P_KEYLEN:
			if (!sp_param_get_size(p, &len))
				return sp_param_bad_set(&c->b, p);
			if (len != c->b.alg->key_len)
				return sp_bad_keylen(&c->b);
			break;
		case P_IVLEN:
			if (!set_ivlen(c, p))
				return 0;
			break;
		case P_TAG:
			if (!set_tag(c, p))
				return 0;
			break;
		case P_TLS_AAD:
			if (!sp_param_get_octets(p, &d, &len) || !tls_aad(c, d, len)) {
				SP_ERR(c->b.prov, SP_PROV_R(PROV_R_INVALID_INPUT_LENGTH),
				       "tlsaad: a 13-byte TLS 1.2 pseudo-header whose record "
				       "length "
				       "covers nonce and tag");
				return 0;
			}
			break;
		case P_TLS_IV_FIXED:
			if (!iv_fixed(c, p)) {
				SP_ERR(c->b.prov, SP_PROV_R(PROV_R_INVALID_IV_LENGTH),
				       "tlsivfixed: at least 4 bytes, leaving 8 of the IV");
				return 0;
			}
			break;
		case P_TLS_IV_INV:
			if (!iv_inv(c, p)) {
				SP_ERR(c->b.prov, SP_R_STATE,
				       "tlsivinv: decrypting, after key and tlsivfixed");
				return 0;
			}
			break;
		default:
			break;
		}
	}
	return 1;
}

#define SP_DISPATCH_block(sym)
#define SP_DISPATCH_stream(sym)
#define SP_DISPATCH_gcm(sym)              SP_CIPHER_DISPATCH(sym, gcm)
#define SP_GEN(sym, names, mode, kl, fam) SP_DISPATCH_##fam(sym)
SP_ALGS(SP_GEN)
