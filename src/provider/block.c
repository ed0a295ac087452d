/*
 * src/provider/block.c - AES-128/192/256 in ECB, CBC and PCBC: the block modes, with
 * PKCS#7 padding (on by default), and CBC as a TLS 1.0-1.2 / DTLS record cipher.
 *
 * Buffering follows OpenSSL's default provider byte for byte (its generic block
 * update/final), so applications see the same output lengths after every call: input is
 * collected into whole blocks in buf; a full buffer goes out with the next call that
 * brings more input, except that while decrypting with padding the last whole block is
 * held back until final, which strips the padding. Final releases nothing when the
 * padding is malformed: the held-back block is wiped instead.
 *
 * An init without an IV puts the original IV back (CBC, PCBC), so that a context re-keyed
 * or restarted by an application never continues a chain by accident. A key without any
 * IV runs with an all-zero IV, as OpenSSL does.
 *
 * TLS records (tls-version set on a CBC context, by libssl for the TLS 1.0-1.2 CBC cipher
 * suites): each update is one whole record, in place. Encrypting appends the TLS padding
 * (n + 1 bytes of value n). Decrypting removes the explicit IV (TLS 1.1+, DTLS), the
 * padding and the MAC (tls-mac-size bytes, handed out as tls-mac) in constant time: the
 * padding check always reads the last 256 bytes and the MAC is copied out of a window that
 * covers every position the padding allows, so neither time nor memory addresses depend
 * on the padding length (the Lucky Thirteen timing attack, AlFardan and Paterson 2013).
 * A malformed padding yields a random MAC, so libssl's MAC check fails in the same time as
 * for a wrong MAC.
 *
 * Constant time otherwise: PKCS#7 padding is checked over the whole final block with
 * masks; the one branch is on the verdict.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "provider/prov.h"

#define BS 16 /* AES block */

/* TLS versions as libssl passes them (ssl/prov_ssl.h): with or without an explicit IV. */
enum {
	TLS1_0 = 0x0301,
	TLS1_1 = 0x0302,
	TLS1_2 = 0x0303,
	DTLS1_0 = 0xfeff,
	DTLS1_2 = 0xfefd,
	DTLS1_BAD = 0x0100,
};

struct block_ctx {
	struct sp_base b;
	alignas(16) uint8_t iv[BS]; /* chaining value: CBC the last C block, PCBC P ^ C */
	uint8_t oiv[BS];            /* the IV as last set */
	uint8_t buf[BS];            /* partial block, or the held-back last block */
	size_t bufsz;
	bool pad; /* PKCS#7 padding (default on) */
	bool iv_set;
	unsigned tls_version; /* 0: not a TLS record context */
	size_t tls_mac_size;
	uint8_t tls_mac[EVP_MAX_MD_SIZE]; /* the last record's MAC (decrypting) */
};

SP_FAMILY_DECLS(block)

static void *block_newctx(void *provctx, const struct sp_alg *alg)
{
	struct block_ctx *c = sp_ctx_alloc(provctx, alg, sizeof(*c));
	if (c)
		c->pad = true;
	return c;
}

static void block_freectx(void *vctx)
{
	sp_ctx_free(vctx, sizeof(struct block_ctx));
}

static void *block_dupctx(void *vctx)
{
	return sp_ctx_dup(vctx, sizeof(struct block_ctx));
}

/* Whole blocks through the library, in the context's direction; the chaining value in
 * c->iv advances. 1, or 0 with an error raised. */
static int run(struct block_ctx *c, uint8_t *out, const uint8_t *in, size_t len)
{
	const secho_aes_key *k = &c->b.key->k.aes;
	bool enc = c->b.enc;
	int rc;
	switch (c->b.alg->mode) {
	case SP_ECB:
		rc = enc ? secho_ecb_encrypt(k, out, in, len) : secho_ecb_decrypt(k, out, in, len);
		break;
	case SP_CBC:
		rc = enc ? secho_cbc_encrypt(k, c->iv, out, in, len)
		         : secho_cbc_decrypt(k, c->iv, out, in, len);
		break;
	default:
		rc = enc ? secho_pcbc_encrypt(k, c->iv, out, in, len)
		         : secho_pcbc_decrypt(k, c->iv, out, in, len);
		break;
	}
	if (rc) {
		SP_ERR(c->b.prov, SP_R_LIBRARY, "%s", secho_strerror(rc));
		return 0;
	}
	SP_COUNT(&c->b, bytes, len);
	return 1;
}

static int block_init(struct block_ctx *c, const unsigned char *key, size_t keylen,
                      const unsigned char *iv, size_t ivlen, const OSSL_PARAM params[], int enc)
{
	c->b.enc = enc;
	c->bufsz = 0;
	secho_wipe(c->buf, sizeof(c->buf));
	if (iv && c->b.alg->iv_len) {
		if (ivlen != BS) {
			SP_ERR(c->b.prov, SP_PROV_R(PROV_R_INVALID_IV_LENGTH),
			       "the IV is 16 bytes, got %zu", ivlen);
			return 0;
		}
		memcpy(c->oiv, iv, BS);
		memcpy(c->iv, iv, BS);
		c->iv_set = true;
		SP_COUNT(&c->b, iv_inits, 1);
	} else if (c->iv_set) {
		memcpy(c->iv, c->oiv, BS); /* restart the chain, never continue it */
	}
	if (key && !sp_set_key(&c->b, key, keylen))
		return 0;
	return block_set_ctx_params(c, params);
}

static int block_einit(void *vctx, const unsigned char *key, size_t keylen, const unsigned char *iv,
                       size_t ivlen, const OSSL_PARAM params[])
{
	return block_init(vctx, key, keylen, iv, ivlen, params, 1);
}

static int block_dinit(void *vctx, const unsigned char *key, size_t keylen, const unsigned char *iv,
                       size_t ivlen, const OSSL_PARAM params[])
{
	return block_init(vctx, key, keylen, iv, ivlen, params, 0);
}

/* ---- constant-time helpers (masks: all ones or zero; no branch on the values) ---- */

static inline size_t ct_barrier(size_t a)
{
	__asm__("" : "+r"(a)); /* keeps the compiler from turning masks into branches */
	return a;
}
static inline size_t ct_msb(size_t a)
{
	return ct_barrier(0 - (a >> (sizeof(a) * 8 - 1)));
}
static inline size_t ct_lt(size_t a, size_t b) /* a < b */
{
	return ct_msb(a ^ ((a ^ b) | ((a - b) ^ b)));
}
static inline size_t ct_ge(size_t a, size_t b)
{
	return ~ct_lt(a, b);
}
static inline size_t ct_eq(size_t a, size_t b)
{
	size_t x = a ^ b;
	return ct_msb(~x & (x - 1));
}

/* PKCS#7: the padding length of the final block (1..16), or 0 when it is malformed. Every
 * byte is checked whatever the padding says. */
static size_t unpad16(const uint8_t b[BS])
{
	size_t pad = b[BS - 1];
	size_t bad = ct_eq(pad, 0) | ct_lt(BS, pad);
	size_t diff = 0;
	for (size_t i = 0; i < BS; i++)
		diff |= (b[i] ^ pad) & ct_ge(i + pad, BS); /* byte i is padding */
	bad |= ~ct_eq(diff, 0);
	return pad & ~bad;
}

/* ---- update, final, cipher ---- */

static int no_key(const struct block_ctx *c)
{
	SP_ERR(c->b.prov, SP_PROV_R(PROV_R_NO_KEY_SET), "no key set");
	return 0;
}

static int too_small(const struct block_ctx *c, size_t need, size_t have)
{
	SP_ERR(c->b.prov, SP_PROV_R(PROV_R_OUTPUT_BUFFER_TOO_SMALL),
	       "output needs %zu bytes, room for %zu", need, have);
	return 0;
}

static int tls_record(struct block_ctx *c, unsigned char *out, size_t *outl, size_t outsize,
                      const unsigned char *in, size_t inl);

static int block_update(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
                        const unsigned char *in, size_t inl)
{
	struct block_ctx *c = vctx;
	if (!c->b.key)
		return no_key(c);
	if (c->tls_version)
		return tls_record(c, out, outl, outsize, in, inl);
	if (inl && (!in || !out)) {
		SP_ERR(c->b.prov, SP_PROV_R(PROV_R_CIPHER_OPERATION_FAILED), "NULL buffer");
		return 0;
	}
	size_t done = 0;
	if (c->bufsz) { /* top up the partial block */
		size_t n = BS - c->bufsz < inl ? BS - c->bufsz : inl;
		memcpy(c->buf + c->bufsz, in, n);
		c->bufsz += n;
		in += n;
		inl -= n;
	}
	size_t next = inl & ~(size_t)(BS - 1);
	/* A full buffer goes out now, unless it may be the padded last block of a
	 * decryption (no more input in this call). */
	if (c->bufsz == BS && (c->b.enc || inl > 0 || !c->pad)) {
		if (outsize < BS)
			return too_small(c, BS, outsize);
		if (!run(c, out, c->buf, BS))
			return 0;
		c->bufsz = 0;
		done = BS;
		out += BS;
	}
	if (next && !c->b.enc && c->pad && next == inl)
		next -= BS; /* hold the last block back for final */
	if (next) {
		if (outsize < done + next)
			return too_small(c, done + next, outsize);
		if (sp_overlap(out, in, next)) {
			SP_ERR(c->b.prov, SP_R_OVERLAP, "input and output overlap partially");
			return 0;
		}
		if (!run(c, out, in, next))
			return 0;
		in += next;
		inl -= next;
	}
	if (inl) { /* under a block, or the held-back one: c->bufsz is 0 here */
		memcpy(c->buf + c->bufsz, in, inl);
		c->bufsz += inl;
	}
	*outl = done + next;
	return 1;
}

static int block_final(void *vctx, unsigned char *out, size_t *outl, size_t outsize)
{
	struct block_ctx *c = vctx;
	if (!c->b.key)
		return no_key(c);
	if (c->tls_version) {
		SP_ERR(c->b.prov, SP_PROV_R(PROV_R_CIPHER_OPERATION_FAILED),
		       "a TLS record context has no final");
		return 0;
	}
	if (c->b.enc) {
		if (c->pad) {
			size_t n = BS - c->bufsz; /* 1..16 bytes of value n */
			memset(c->buf + c->bufsz, (int)n, n);
			c->bufsz = BS;
		} else if (c->bufsz == 0) {
			*outl = 0;
			return 1;
		}
		if (c->bufsz != BS) {
			SP_ERR(c->b.prov, SP_PROV_R(PROV_R_WRONG_FINAL_BLOCK_LENGTH),
			       "%zu bytes left over, not a whole block (padding is off)", c->bufsz);
			return 0;
		}
		if (outsize < BS)
			return too_small(c, BS, outsize);
		if (!run(c, out, c->buf, BS))
			return 0;
		secho_wipe(c->buf, sizeof(c->buf));
		c->bufsz = 0;
		*outl = BS;
		return 1;
	}
	if (c->bufsz != BS) {
		if (c->bufsz == 0 && !c->pad) {
			*outl = 0;
			return 1;
		}
		SP_ERR(c->b.prov, SP_PROV_R(PROV_R_WRONG_FINAL_BLOCK_LENGTH),
		       "the ciphertext is not a whole number of blocks%s",
		       c->pad ? " (or empty: padding expects at least one block)" : "");
		return 0;
	}
	if (!run(c, c->buf, c->buf, BS))
		return 0;
	size_t n = BS;
	if (c->pad) {
		size_t pad = unpad16(c->buf);
		if (!pad) {
			secho_wipe(c->buf, sizeof(c->buf));
			c->bufsz = 0;
			SP_COUNT(&c->b, bad_padding, 1);
			SP_ERR(c->b.prov, SP_PROV_R(PROV_R_BAD_DECRYPT), "bad padding");
			return 0;
		}
		n -= pad;
	}
	if (outsize < n)
		return too_small(c, n, outsize);
	memcpy(out, c->buf, n);
	secho_wipe(c->buf, sizeof(c->buf));
	c->bufsz = 0;
	*outl = n;
	return 1;
}

/* EVP_Cipher(): whole blocks straight through, no buffering or padding. */
static int block_cipher(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
                        const unsigned char *in, size_t inl)
{
	struct block_ctx *c = vctx;
	if (!c->b.key)
		return no_key(c);
	if (outsize < inl)
		return too_small(c, inl, outsize);
	if (inl % BS) {
		SP_ERR(c->b.prov, SP_PROV_R(PROV_R_INVALID_INPUT_LENGTH),
		       "%zu bytes is not a whole number of blocks", inl);
		return 0;
	}
	if (sp_overlap(out, in, inl)) {
		SP_ERR(c->b.prov, SP_R_OVERLAP, "input and output overlap partially");
		return 0;
	}
	if (inl && !run(c, out, in, inl))
		return 0;
	*outl = inl;
	return 1;
}

/* ---- TLS records (CBC) ---- */

/*
 * After decryption: drop the explicit IV, check and strip the padding and take the MAC
 * out, in constant time (see the top of the file). rec/len: the decrypted record. On
 * return *len is the payload length (after the explicit IV, without padding and MAC) and
 * c->tls_mac holds the MAC, random when the padding was malformed. 0 only when the
 * record is publicly too short, or (no MAC: encrypt-then-MAC, already verified) when
 * the padding is malformed.
 */
static int tls_unpad(struct block_ctx *c, const uint8_t *rec, size_t *len)
{
	size_t n = *len, m = c->tls_mac_size;
	if (c->tls_version != TLS1_0) { /* explicit IV block */
		if (n < BS)
			return 0;
		rec += BS;
		n -= BS;
	}
	if (n < 1 + m)
		return 0;
	const size_t whole = n; /* public */
	size_t pad = rec[n - 1];
	size_t good = ct_ge(n, 1 + m + pad);
	/* The last 256 bytes (all the padding can cover), whatever pad is: byte i from the
	 * end is padding when i <= pad, and must then equal pad. */
	size_t check = n < 256 ? n : 256;
	for (size_t i = 0; i < check; i++)
		good &= ~(ct_ge(pad, i) & (pad ^ rec[n - 1 - i]));
	good = ct_eq(good & 0xff, 0xff);
	n -= good & (pad + 1);
	if (!m) {
		*len = n;
		return good != 0; /* MAC already verified (encrypt-then-MAC): may branch */
	}
	/* The MAC is rec[n - m .. n). Copy it out of a window that covers every place it can
	 * be, rotated by its start modulo m, then rotate back; both loops run in full. */
	uint8_t rot[EVP_MAX_MD_SIZE] = {0}, rnd[EVP_MAX_MD_SIZE];
	size_t mac_start = n - m, in_mac = 0, off = 0, j = 0;
	size_t start = whole > m + 256 ? whole - (m + 256) : 0;
	for (size_t i = start; i < whole; i++) {
		size_t begins = ct_eq(i, mac_start);
		in_mac = (in_mac | begins) & ct_lt(i, n);
		off |= j & begins;
		rot[j] |= rec[i] & (uint8_t)in_mac;
		j = (j + 1) & ct_lt(j + 1, m);
	}
	if (getrandom(rnd, m, 0) != (ssize_t)m) {
		SP_ERR(c->b.prov, SP_R_RANDOM, "getrandom failed");
		return 0;
	}
	for (size_t k = 0; k < m; k++) {
		size_t at = off + k; /* rot index of mac[k]: (off + k) mod m */
		at -= m & ct_ge(at, m);
		uint8_t v = 0;
		for (size_t q = 0; q < m; q++)
			v |= rot[q] & (uint8_t)ct_eq(q, at);
		c->tls_mac[k] = (uint8_t)((v & good) | (rnd[k] & ~good));
	}
	secho_wipe(rot, sizeof(rot));
	*len = n - m;
	return 1;
}

static int tls_record(struct block_ctx *c, unsigned char *out, size_t *outl, size_t outsize,
                      const unsigned char *in, size_t inl)
{
	if (!in || in != out || outsize < inl || !c->pad) {
		SP_ERR(c->b.prov, SP_PROV_R(PROV_R_CIPHER_OPERATION_FAILED),
		       "a TLS record is processed in place, with padding on");
		return 0;
	}
	size_t len = inl;
	if (c->b.enc) {
		size_t n = BS - inl % BS; /* n bytes of value n - 1 (RFC 5246 6.2.3.2) */
		if (outsize < inl + n)
			return too_small(c, inl + n, outsize);
		memset(out + inl, (int)(n - 1), n);
		len += n;
	}
	if (len % BS) {
		SP_ERR(c->b.prov, SP_PROV_R(PROV_R_WRONG_FINAL_BLOCK_LENGTH),
		       "a %zu-byte record is not a whole number of blocks", len);
		return 0;
	}
	if (!run(c, out, out, len))
		return 0;
	if (!c->b.enc && !tls_unpad(c, out, &len)) {
		SP_ERR(c->b.prov, SP_PROV_R(PROV_R_CIPHER_OPERATION_FAILED), "bad record");
		return 0;
	}
	if (c->b.enc)
		SP_COUNT(&c->b, tls_cbc_sealed, 1);
	else
		SP_COUNT(&c->b, tls_cbc_opened, 1);
	*outl = len;
	return 1;
}

/* ---- parameters ---- */

static const OSSL_PARAM gettable[] = {
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),
        OSSL_PARAM_uint(OSSL_CIPHER_PARAM_PADDING, NULL),
        OSSL_PARAM_uint(OSSL_CIPHER_PARAM_NUM, NULL),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_IV, NULL, 0),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_UPDATED_IV, NULL, 0),
        OSSL_PARAM_octet_ptr(OSSL_CIPHER_PARAM_TLS_MAC, NULL, 0),
        OSSL_PARAM_END,
};
static const OSSL_PARAM settable[] = {
        OSSL_PARAM_uint(OSSL_CIPHER_PARAM_PADDING, NULL),
        OSSL_PARAM_uint(OSSL_CIPHER_PARAM_NUM, NULL),
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
        OSSL_PARAM_uint(OSSL_CIPHER_PARAM_TLS_VERSION, NULL),
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_TLS_MAC_SIZE, NULL),
        OSSL_PARAM_END,
};

static const OSSL_PARAM *block_gettable_ctx_params(void *cctx, void *provctx)
{
	(void)cctx;
	(void)provctx;
	return gettable;
}

static const OSSL_PARAM *block_settable_ctx_params(void *cctx, void *provctx)
{
	(void)cctx;
	(void)provctx;
	return settable;
}

enum {
	P_KEYLEN,
	P_IVLEN,
	P_PADDING,
	P_NUM,
	P_IV,
	P_UPDATED_IV,
	P_TLS_MAC,
	P_TLS_VERSION,
	P_TLS_MAC_SIZE
};
static const char *const names[] = {
        OSSL_CIPHER_PARAM_KEYLEN,       OSSL_CIPHER_PARAM_IVLEN,
        OSSL_CIPHER_PARAM_PADDING,      OSSL_CIPHER_PARAM_NUM,
        OSSL_CIPHER_PARAM_IV,           OSSL_CIPHER_PARAM_UPDATED_IV,
        OSSL_CIPHER_PARAM_TLS_MAC,      OSSL_CIPHER_PARAM_TLS_VERSION,
        OSSL_CIPHER_PARAM_TLS_MAC_SIZE, NULL,
};
#define FIRSTS                                                                                     \
	(SP_FIRST('k') | SP_FIRST('i') | SP_FIRST('p') | SP_FIRST('n') | SP_FIRST('u') |           \
	 SP_FIRST('t')) /* the first letters of names */

static int block_get_ctx_params(void *vctx, OSSL_PARAM params[])
{
	struct block_ctx *c = vctx;
	size_t ivlen = c->b.alg->iv_len;
	for (OSSL_PARAM *p = params; p && p->key; p++) {
		bool ok = true;
		switch (sp_param_index(p->key, names, FIRSTS)) {
		case P_KEYLEN:
			ok = sp_param_set_u64(p, c->b.alg->key_len);
			break;
		case P_IVLEN:
			ok = sp_param_set_u64(p, ivlen);
			break;
		case P_PADDING:
			ok = sp_param_set_u64(p, c->pad);
			break;
		case P_NUM:
			ok = sp_param_set_u64(p, 0);
			break;
		case P_IV:
			ok = sp_param_set_octets(p, c->oiv, ivlen);
			break;
		case P_UPDATED_IV:
			ok = sp_param_set_octets(p, c->iv, ivlen);
			break;
		case P_TLS_MAC:
			ok = sp_param_set_octets(p, c->tls_mac, c->tls_mac_size);
			break;
		default:
			break; /* not ours to answer */
		}
		if (!ok)
			return sp_param_bad_get(&c->b, p);
	}
	return 1;
}

static bool tls_version_ok(uint64_t v)
{
	return v == 0 || v == TLS1_0 || v == TLS1_1 || v == TLS1_2 || v == DTLS1_0 ||
	       v == DTLS1_2 || v == DTLS1_BAD;
}

/* Unknown parameters are ignored (OpenSSL's rule); a known one with a bad value fails
 * the call with an error. */
static int block_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
	struct block_ctx *c = vctx;
	for (const OSSL_PARAM *p = params; p && p->key; p++) {
		int id = sp_param_index(p->key, names, FIRSTS);
		uint64_t v;
		if (id < 0)
			continue;
		if (!sp_param_get_u64(p, &v))
			return sp_param_bad_set(&c->b, p);
		switch (id) {
		case P_KEYLEN:
			if (v != c->b.alg->key_len)
				return sp_bad_keylen(&c->b);
			break;
		case P_PADDING:
			c->pad = v != 0;
			break;
		case P_NUM:
			if (v) {
				SP_ERR(c->b.prov, SP_R_NOT_SUPPORTED,
				       "num: the block modes have no position");
				return 0;
			}
			break;
		case P_TLS_VERSION:
			if (!tls_version_ok(v) || (v && c->b.alg->mode != SP_CBC)) {
				SP_ERR(c->b.prov, SP_R_NOT_SUPPORTED,
				       "TLS records: CBC with TLS 1.0-1.2 or DTLS only (%#llx)",
				       (unsigned long long)v);
				return 0;
			}
			c->tls_version = (unsigned)v;
			break;
		case P_TLS_MAC_SIZE:
			if (v > EVP_MAX_MD_SIZE)
				return sp_param_bad_set(&c->b, p);
			c->tls_mac_size = (size_t)v;
			break;
		default:
			break; /* gettable only */
		}
	}
	return 1;
}

#define SP_DISPATCH_block(sym) SP_CIPHER_DISPATCH(sym, block)
#define SP_DISPATCH_stream(sym)
#define SP_DISPATCH_gcm(sym)
#define SP_GEN(sym, names, mode, kl, fam) SP_DISPATCH_##fam(sym)
SP_ALGS(SP_GEN)
