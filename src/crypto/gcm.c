/*
 * src/crypto/gcm.c - AES-GCM (NIST SP 800-38D), generic layer over an implementation's
 * secho_gcm_impl table: argument and limit checks, the streaming state machine, partial
 * blocks, non-96-bit IVs, and the fallbacks for the optional fast paths.
 *
 * Streaming state (secho_gcm_ctx):
 *   y        GHASH accumulator, big-endian bytes as in SP 800-38D;
 *   buf      bytes of the current AAD or ciphertext block not yet GHASHed (buf_len);
 *   ctr, ks  next counter block, and the keystream block being consumed (ks_used; 16 =
 *            none left). During the text phase buf_len == ks_used % 16: both advance
 *            byte for byte over the same text.
 * The state field moves AAD -> ENC|DEC -> DONE; other values (zero, garbage, a wiped
 * context) are rejected with SECHO_ESTATE.
 *
 * Constant time: branches and indices depend on lengths, positions and the call order
 * only. The tag comparison OR-accumulates differences (secho_ct_diff). The one-shot open
 * on the generic path authenticates before decrypting, so on failure no plaintext is
 * ever written: out is zeroed instead.
 */
#include "crypto/inner.h"

enum {
	ST_AAD = 0x47434d41,  /* "GCMA": after init, AAD allowed */
	ST_ENC = 0x47434d45,  /* "GCME": encrypting */
	ST_DEC = 0x47434d44,  /* "GCMD": decrypting */
	ST_DONE = 0x47434d46, /* "GCMF": finished; only wipe or a new init */
};

static const uint8_t zero16[16];

static bool key_ok(const secho_gcm_key *k)
{
	return k && k->impl && k->aes.impl && k->impl->hinit && k->impl->ghash && k->impl->ctr32;
}

/* ---- key ---- */

/* SECHO_OK; EINVAL (NULL, key_len not 16/24/32, impl out of range) or EUNAVAIL, both
 * without writing k. */
int secho_gcm_key_init(secho_gcm_key *k, const uint8_t *key, size_t key_len, secho_impl_id impl)
{
	if (!k || !key || (key_len != 16 && key_len != 24 && key_len != 32) ||
	    (unsigned)impl >= SECHO_IMPL_COUNT)
		return SECHO_EINVAL;
	/* Resolve once, so the AES half and the GHASH half come from the same table even if
	 * secho_impl_force() runs concurrently. */
	secho_impl_id id = secho_impl_resolve(impl);
	const struct secho_gcm_impl *g = secho_gcm_impl_get(id);
	if (!g)
		return SECHO_EUNAVAIL;
	memset(k, 0, sizeof(*k));
	int rc = secho_aes_key_init(&k->aes, key, key_len, id);
	if (rc) {
		secho_gcm_key_wipe(k);
		return rc;
	}
	k->impl = g;
	g->hinit(k);
	return SECHO_OK;
}

/* Zero round keys, H and its powers. */
void secho_gcm_key_wipe(secho_gcm_key *k)
{
	if (k)
		secho_wipe(k, sizeof(*k));
}

secho_impl_id secho_gcm_key_impl(const secho_gcm_key *k)
{
	return k && k->impl ? k->impl->id : SECHO_IMPL_AUTO;
}

/* ---- internal helpers on a context (arguments already valid) ---- */

/* GHASH len bytes into y, carrying a partial block in buf. */
static void ghash_absorb(secho_gcm_ctx *c, const uint8_t *p, size_t len)
{
	const secho_gcm_key *k = c->key;
	if (c->buf_len) {
		size_t n = 16 - c->buf_len;
		if (n > len)
			n = len;
		memcpy(c->buf + c->buf_len, p, n);
		c->buf_len += (unsigned)n;
		p += n;
		len -= n;
		if (c->buf_len < 16)
			return;
		k->impl->ghash(k, c->y, c->buf, 1);
		c->buf_len = 0;
	}
	if (len >= 16) {
		k->impl->ghash(k, c->y, p, len / 16);
		p += len / 16 * 16;
		len %= 16;
	}
	if (len) {
		memcpy(c->buf, p, len);
		c->buf_len = (unsigned)len;
	}
}

/* Close the AAD or the text: a partial block is padded with zeros and GHASHed. */
static void ghash_pad(secho_gcm_ctx *c)
{
	if (!c->buf_len)
		return;
	memset(c->buf + c->buf_len, 0, 16 - c->buf_len);
	c->key->impl->ghash(c->key, c->y, c->buf, 1);
	c->buf_len = 0;
}

/* GCTR: XOR len bytes with the keystream, carrying a partial keystream block in ks. */
static void gctr_xor(secho_gcm_ctx *c, uint8_t *out, const uint8_t *in, size_t len)
{
	const secho_gcm_key *k = c->key;
	while (c->ks_used < 16 && len) {
		*out++ = (uint8_t)(*in++ ^ c->ks[c->ks_used++]);
		len--;
	}
	if (len >= 16) {
		k->impl->ctr32(&k->aes, c->ctr, out, in, len / 16);
		out += len / 16 * 16;
		in += len / 16 * 16;
		len %= 16;
	}
	if (len) {
		k->impl->ctr32(&k->aes, c->ctr, c->ks, zero16, 1); /* ks = E(ctr), ctr++ */
		c->ks_used = 0;
		while (len--)
			*out++ = (uint8_t)(*in++ ^ c->ks[c->ks_used++]);
	}
}

/* J0 from the IV (SP 800-38D 7.1 step 2). */
static void make_j0(const secho_gcm_key *k, uint8_t j0[16], const uint8_t *iv, size_t iv_len)
{
	if (iv_len == 12) {
		memcpy(j0, iv, 12);
		secho_store_be32(j0 + 12, 1); /* IV || 0^31 || 1 */
		return;
	}
	/* J0 = GHASH_H(IV || 0^(s+64) || [len(IV)]_64) */
	alignas(16) uint8_t b[16];
	memset(j0, 0, 16);
	if (iv_len >= 16)
		k->impl->ghash(k, j0, iv, iv_len / 16);
	if (iv_len % 16) {
		memset(b, 0, 16);
		memcpy(b, iv + iv_len / 16 * 16, iv_len % 16);
		k->impl->ghash(k, j0, b, 1);
	}
	secho_store_be64(b, 0);
	secho_store_be64(b + 8, (uint64_t)iv_len * 8);
	k->impl->ghash(k, j0, b, 1);
}

/*
 * The full tag E(J0) ^ GHASH(A, C, lengths) (SP 800-38D 7.1 steps 5-6). The last partial
 * block (zero-padded) and the length block go through GHASH in one call, and E(J0) is one
 * block of the key's ECB: the per-message end costs two short calls into the
 * implementation, not a GCTR pass set up for a single block.
 */
static void compute_tag(secho_gcm_ctx *c, uint8_t t[16])
{
	const secho_gcm_key *k = c->key;
	alignas(16) uint8_t b[32];
	size_t n = 0;
	if (c->buf_len) {
		memcpy(b, c->buf, c->buf_len);
		memset(b + c->buf_len, 0, 16 - c->buf_len);
		c->buf_len = 0;
		n = 16;
	}
	secho_store_be64(b + n, c->aad_len * 8);
	secho_store_be64(b + n + 8, c->text_len * 8);
	k->impl->ghash(k, c->y, b, n / 16 + 1);
	k->aes.impl->ecb_enc(&k->aes, t, c->j0, 1); /* t = E(J0) */
	for (int i = 0; i < 16; i++)
		t[i] ^= c->y[i];
	secho_wipe(b, n);
}

/* y, j0, ctr, ks and buf, one after the other in the context (checked below). */
_Static_assert(offsetof(secho_gcm_ctx, buf) + 16 - offsetof(secho_gcm_ctx, y) == 5 * 16,
               "secho_gcm_ctx: the secret blocks are contiguous");

static void ctx_clear_secrets(secho_gcm_ctx *c)
{
	secho_wipe(c->y, 5 * 16);
	c->buf_len = 0;
	c->ks_used = 16;
}

/* ---- streaming API ---- */

/* SECHO_OK; EINVAL (NULL c/k/iv, uninitialised key, iv_len 0); ELIMIT (IV longer than
 * 2^61 - 1 bytes, its bit length would not fit the 64-bit length field). */
int secho_gcm_init(secho_gcm_ctx *c, const secho_gcm_key *k, const uint8_t *iv, size_t iv_len)
{
	if (!c || !key_ok(k) || !iv || !iv_len)
		return SECHO_EINVAL;
	if ((uint64_t)iv_len > SECHO_GCM_MAX_AAD)
		return SECHO_ELIMIT;
	memset(c, 0, sizeof(*c));
	c->key = k;
	make_j0(k, c->j0, iv, iv_len);
	memcpy(c->ctr, c->j0, 16);
	secho_inc32(c->ctr);
	c->ks_used = 16;
	c->state = ST_AAD;
	return SECHO_OK;
}

static bool ctx_live(const secho_gcm_ctx *c)
{
	return (c->state == ST_AAD || c->state == ST_ENC || c->state == ST_DEC) && key_ok(c->key) &&
	       c->buf_len < 16 && c->ks_used <= 16;
}

/* SECHO_OK; EINVAL (NULL c, NULL aad with len); ESTATE (not initialised, or text already
 * started, or finished); ELIMIT (total AAD over 2^61 - 1 bytes). Nothing changes on
 * error. */
int secho_gcm_aad(secho_gcm_ctx *c, const uint8_t *aad, size_t len)
{
	if (!c || (len && !aad))
		return SECHO_EINVAL;
	if (!ctx_live(c) || c->state != ST_AAD)
		return SECHO_ESTATE;
	if ((uint64_t)len > SECHO_GCM_MAX_AAD - c->aad_len)
		return SECHO_ELIMIT;
	ghash_absorb(c, aad, len);
	c->aad_len += len;
	return SECHO_OK;
}

/* Shared checks and the AAD -> text transition. */
static int text_begin(secho_gcm_ctx *c, const uint8_t *out, const uint8_t *in, size_t len, int st)
{
	if (!c || (len && (!out || !in)))
		return SECHO_EINVAL;
	if (!ctx_live(c) || (c->state != ST_AAD && c->state != st))
		return SECHO_ESTATE;
	if ((uint64_t)len > SECHO_GCM_MAX_TEXT - c->text_len)
		return SECHO_ELIMIT;
	if (c->state == ST_AAD) {
		ghash_pad(c);
		c->state = st;
	}
	c->text_len += len;
	return SECHO_OK;
}

/*
 * GCTR and GHASH over a piece of text in either direction. GHASH always reads the
 * ciphertext: after GCTR when encrypting (it is the output), before GCTR when decrypting
 * (in place, GCTR overwrites it).
 */
static void text_piece(secho_gcm_ctx *c, uint8_t *out, const uint8_t *in, size_t n, bool enc)
{
	if (enc) {
		gctr_xor(c, out, in, n);
		ghash_absorb(c, out, n);
	} else {
		ghash_absorb(c, in, n);
		gctr_xor(c, out, in, n);
	}
}

static int text_update(secho_gcm_ctx *c, uint8_t *out, const uint8_t *in, size_t len, bool enc)
{
	int rc = text_begin(c, out, in, len, enc ? ST_ENC : ST_DEC);
	if (rc)
		return rc;
	const secho_gcm_key *k = c->key;
	/* Head: finish the partial block. */
	if (c->ks_used < 16 && len) {
		size_t n = 16 - c->ks_used;
		if (n > len)
			n = len;
		text_piece(c, out, in, n, enc);
		in += n;
		out += n;
		len -= n;
	}
	/* Body: whole blocks, block aligned (ks_used == 16, buf_len == 0 here). */
	size_t nb = len / 16;
	if (nb) {
		void (*fused)(const secho_gcm_key *, uint8_t *, uint8_t *, uint8_t *,
		              const uint8_t *, size_t) =
		        enc ? k->impl->enc_blocks : k->impl->dec_blocks;
		if (fused) {
			fused(k, c->ctr, c->y, out, in, nb);
		} else if (enc) {
			k->impl->ctr32(&k->aes, c->ctr, out, in, nb);
			k->impl->ghash(k, c->y, out, nb);
		} else {
			k->impl->ghash(k, c->y, in, nb);
			k->impl->ctr32(&k->aes, c->ctr, out, in, nb);
		}
		in += nb * 16;
		out += nb * 16;
		len %= 16;
	}
	if (len)
		text_piece(c, out, in, len, enc);
	return SECHO_OK;
}

/* SECHO_OK; EINVAL; ESTATE (not initialised, decrypting, finished); ELIMIT (total text
 * over 2^36 - 32 bytes). Nothing is written on error. */
int secho_gcm_encrypt_update(secho_gcm_ctx *c, uint8_t *out, const uint8_t *in, size_t len)
{
	return text_update(c, out, in, len, true);
}

/* SECHO_OK; EINVAL; ESTATE (not initialised, encrypting, finished); ELIMIT. Plaintext is
 * written before the tag is checked: discard it unless secho_gcm_verify() succeeds. */
int secho_gcm_decrypt_update(secho_gcm_ctx *c, uint8_t *out, const uint8_t *in, size_t len)
{
	return text_update(c, out, in, len, false);
}

static bool tag_len_ok(size_t tag_len)
{
	return tag_len >= 4 && tag_len <= 16;
}

/* SECHO_OK; EINVAL (NULL tag, tag_len not 4..16); ESTATE (not initialised, finished).
 * Writes tag_len bytes of the tag and ends the message (secrets cleared). */
int secho_gcm_finish(secho_gcm_ctx *c, uint8_t *tag, size_t tag_len)
{
	if (!c || !tag || !tag_len_ok(tag_len))
		return SECHO_EINVAL;
	if (!ctx_live(c))
		return SECHO_ESTATE;
	alignas(16) uint8_t t[16];
	compute_tag(c, t);
	memcpy(tag, t, tag_len);
	secho_wipe(t, sizeof(t));
	ctx_clear_secrets(c);
	c->state = ST_DONE;
	return SECHO_OK;
}

/* SECHO_OK (first tag_len bytes match, compared in constant time) or SECHO_EAUTH;
 * EINVAL, ESTATE as finish. Ends the message either way. */
int secho_gcm_verify(secho_gcm_ctx *c, const uint8_t *tag, size_t tag_len)
{
	if (!c || !tag || !tag_len_ok(tag_len))
		return SECHO_EINVAL;
	if (!ctx_live(c))
		return SECHO_ESTATE;
	alignas(16) uint8_t t[16];
	compute_tag(c, t);
	unsigned d = secho_ct_diff(t, tag, tag_len);
	secho_wipe(t, sizeof(t));
	ctx_clear_secrets(c);
	c->state = ST_DONE;
	return d ? SECHO_EAUTH : SECHO_OK;
}

/* Zero the whole context; later calls get SECHO_ESTATE. */
void secho_gcm_ctx_wipe(secho_gcm_ctx *c)
{
	if (c)
		secho_wipe(c, sizeof(*c));
}

/* ---- one-shot API ---- */

/* Checks common to seal and open (and to each batch message): EINVAL or ELIMIT. */
static int oneshot_args(const uint8_t *iv, size_t iv_len, const uint8_t *aad, size_t aad_len,
                        const uint8_t *out, const uint8_t *in, size_t len, const uint8_t *tag,
                        size_t tag_len)
{
	if (!iv || !iv_len || (aad_len && !aad) || (len && (!out || !in)) || !tag ||
	    !tag_len_ok(tag_len))
		return SECHO_EINVAL;
	if ((uint64_t)len > SECHO_GCM_MAX_TEXT || (uint64_t)aad_len > SECHO_GCM_MAX_AAD ||
	    (uint64_t)iv_len > SECHO_GCM_MAX_AAD)
		return SECHO_ELIMIT;
	return SECHO_OK;
}

/* Generic seal through the streaming code (any IV length). */
static int seal_generic(const secho_gcm_key *k, const uint8_t *iv, size_t iv_len,
                        const uint8_t *aad, size_t aad_len, uint8_t *out, const uint8_t *in,
                        size_t len, uint8_t *tag, size_t tag_len)
{
	secho_gcm_ctx c;
	int rc = secho_gcm_init(&c, k, iv, iv_len);
	if (!rc)
		rc = secho_gcm_aad(&c, aad, aad_len);
	if (!rc)
		rc = secho_gcm_encrypt_update(&c, out, in, len);
	if (!rc)
		rc = secho_gcm_finish(&c, tag, tag_len);
	secho_gcm_ctx_wipe(&c);
	return rc;
}

/* Generic open: authenticate first (GHASH over the ciphertext), decrypt only when the
 * tag matched. On failure out is zeroed and no plaintext byte was ever written. */
static int open_generic(const secho_gcm_key *k, const uint8_t *iv, size_t iv_len,
                        const uint8_t *aad, size_t aad_len, uint8_t *out, const uint8_t *in,
                        size_t len, const uint8_t *tag, size_t tag_len)
{
	secho_gcm_ctx c;
	alignas(16) uint8_t t[16];
	int rc = secho_gcm_init(&c, k, iv, iv_len);
	if (!rc)
		rc = secho_gcm_aad(&c, aad, aad_len);
	if (rc) {
		secho_gcm_ctx_wipe(&c);
		return rc;
	}
	ghash_pad(&c);
	ghash_absorb(&c, in, len);
	c.text_len = len;
	compute_tag(&c, t);
	unsigned d = secho_ct_diff(t, tag, tag_len);
	secho_wipe(t, sizeof(t));
	if (d) {
		if (len)
			memset(out, 0, len);
		rc = SECHO_EAUTH;
	} else if (len) {
		gctr_xor(&c, out, in, len); /* c.ctr is still inc32(J0): GCTR untouched */
	}
	secho_gcm_ctx_wipe(&c);
	return rc;
}

/* SECHO_OK; EINVAL (NULL/uninitialised key, NULL iv, iv_len 0, NULL data with a length,
 * NULL tag, tag_len not 4..16); ELIMIT. Nothing is written on error. */
int secho_gcm_seal(const secho_gcm_key *k, const uint8_t *iv, size_t iv_len, const uint8_t *aad,
                   size_t aad_len, uint8_t *out, const uint8_t *in, size_t len, uint8_t *tag,
                   size_t tag_len)
{
	if (!key_ok(k))
		return SECHO_EINVAL;
	int rc = oneshot_args(iv, iv_len, aad, aad_len, out, in, len, tag, tag_len);
	if (rc)
		return rc;
	if (iv_len == 12 && k->impl->seal96)
		return k->impl->seal96(k, iv, aad, aad_len, out, in, len, tag, tag_len);
	return seal_generic(k, iv, iv_len, aad, aad_len, out, in, len, tag, tag_len);
}

/* SECHO_OK; SECHO_EAUTH (out[0..len) zeroed); EINVAL, ELIMIT as seal (nothing written). */
int secho_gcm_open(const secho_gcm_key *k, const uint8_t *iv, size_t iv_len, const uint8_t *aad,
                   size_t aad_len, uint8_t *out, const uint8_t *in, size_t len, const uint8_t *tag,
                   size_t tag_len)
{
	if (!key_ok(k))
		return SECHO_EINVAL;
	int rc = oneshot_args(iv, iv_len, aad, aad_len, out, in, len, tag, tag_len);
	if (rc)
		return rc;
	if (iv_len == 12 && k->impl->open96) {
		rc = k->impl->open96(k, iv, aad, aad_len, out, in, len, tag, tag_len);
		if (rc && len)
			memset(out, 0, len); /* the table's contract already; cheap to enforce */
		return rc;
	}
	return open_generic(k, iv, iv_len, aad, aad_len, out, in, len, tag, tag_len);
}

/* ---- batch API ---- */

static int msg_args(const secho_gcm_msg *m)
{
	return oneshot_args(m->iv, SECHO_GCM_IV_LEN, m->aad, m->aad_len, m->out, m->in, m->len,
	                    m->tag, SECHO_GCM_TAG_LEN);
}

/*
 * Validate every message (status EINVAL/ELIMIT for a bad one, which is then left alone),
 * hand the valid ones to the table's batch entry (compacted into a local array when some
 * were rejected), else process them one by one. Returns the first non-zero status in
 * message order, SECHO_OK if none; EINVAL for a NULL/uninitialised key, NULL msgs with
 * n > 0, or n > SECHO_GCM_BATCH_MAX (then no message is touched).
 */
static int batch_run(const secho_gcm_key *k, secho_gcm_msg *msgs, size_t n, bool seal)
{
	if (!key_ok(k) || (n && !msgs) || n > SECHO_GCM_BATCH_MAX)
		return SECHO_EINVAL;
	size_t nvalid = 0;
	for (size_t i = 0; i < n; i++) {
		msgs[i].status = msg_args(&msgs[i]);
		if (!msgs[i].status)
			nvalid++;
	}
	void (*bulk)(const secho_gcm_key *, secho_gcm_msg *, size_t) =
	        seal ? k->impl->seal_batch : k->impl->open_batch;
	if (bulk && nvalid == n && n) {
		bulk(k, msgs, n);
	} else if (bulk && nvalid) {
		secho_gcm_msg v[SECHO_GCM_BATCH_MAX];
		size_t idx[SECHO_GCM_BATCH_MAX] = {0}, j = 0;
		for (size_t i = 0; i < n; i++)
			if (!msgs[i].status) {
				idx[j] = i;
				v[j++] = msgs[i];
			}
		bulk(k, v, j);
		for (size_t i = 0; i < j; i++)
			msgs[idx[i]].status = v[i].status;
	} else {
		for (size_t i = 0; i < n; i++) {
			secho_gcm_msg *m = &msgs[i];
			if (m->status)
				continue;
			m->status = seal ? secho_gcm_seal(k, m->iv, SECHO_GCM_IV_LEN, m->aad,
			                                  m->aad_len, m->out, m->in, m->len, m->tag,
			                                  SECHO_GCM_TAG_LEN)
			                 : secho_gcm_open(k, m->iv, SECHO_GCM_IV_LEN, m->aad,
			                                  m->aad_len, m->out, m->in, m->len, m->tag,
			                                  SECHO_GCM_TAG_LEN);
		}
	}
	int first = SECHO_OK;
	for (size_t i = 0; i < n; i++) {
		if (!seal && msgs[i].status == SECHO_EAUTH && msgs[i].len)
			memset(msgs[i].out, 0, msgs[i].len); /* enforce the table's contract */
		if (msgs[i].status && !first)
			first = msgs[i].status;
	}
	return first;
}

/* See batch_run. Each valid message: out = ciphertext, tag = its 16-byte tag. */
int secho_gcm_seal_batch(const secho_gcm_key *k, secho_gcm_msg *msgs, size_t n)
{
	return batch_run(k, msgs, n, true);
}

/* See batch_run. A message whose tag fails gets SECHO_EAUTH and a zeroed out. */
int secho_gcm_open_batch(const secho_gcm_key *k, secho_gcm_msg *msgs, size_t n)
{
	return batch_run(k, msgs, n, false);
}
