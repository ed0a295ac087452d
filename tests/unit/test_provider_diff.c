/*
 * tests/unit/test_provider_diff.c - the secho provider against OpenSSL's default provider,
 * through EVP, on random work: what an application sees must not differ.
 *
 * Each random case draws a mode (ECB, CBC, CTR, CFB128, OFB, GCM), a key size (128, 192,
 * 256), a direction, a length (mostly short, some up to 64 KiB), the order in which key and
 * IV arrive (together, key then IV, IV then key, in separate inits), padding on or off (ECB,
 * CBC), in place or out of place, random update splits, and a point at which the context
 * is duplicated (the run continues on the copy). GCM adds random IV lengths (12, or 1..128,
 * the default provider's limit), AAD in random splits, tag lengths 4..16 set before the key
 * (as Python's cryptography does), after it or after the text, forgeries (one case in
 * four), and a second message on the same context after an init that gives only an IV.
 * Both providers run the same script; every call's success and output length, the bytes,
 * the updated IV and num after every update (chaining modes), the final and the tag must
 * be equal. Decryption gets real ciphertext (made by the default provider) three times in
 * four, random bytes otherwise (bad padding must fail alike).
 *
 * PCBC, which OpenSSL lacks, is checked against a reference built from the default
 * provider's ECB (C_i = E(P_i ^ V_i), V_(i+1) = P_i ^ C_i), with padding on and off.
 *
 * TLS record paths, as libssl drives them: GCM TLS 1.2 (tlsivfixed given the whole IV so
 * that both sides count the same nonces, tlsaad, in-place records): secho's records equal
 * the default provider's, each side opens the other's, a tampered record fails and leaves
 * zeros; CBC (tls-version TLS 1.0/1.1/1.2, tls-mac-size 0/20/32/48): encrypted records
 * equal, and decrypting well-formed and tampered records gives the same payload length,
 * and for well-formed ones the same MAC (tls-mac).
 *
 * 20,000 random cases (2,000 with SECHO_TEST_QUICK=1); the seed is printed and
 * SECHO_TEST_SEED=N replays a run. A failure prints the case.
 */
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "provtest.h"

enum mode { ECB, CBC, CTR, CFB, OFB, GCM, NMODES };
static const char *const mode_nm[NMODES] = {"ECB", "CBC", "CTR", "CFB", "OFB", "GCM"};

#define MAXPIECES 48
#define MAXLEN    65536

struct plan {
	enum mode m;
	int bits, enc, order, pad, inplace, dup_at, tag_when, second;
	uint8_t key[32], iv[128], iv2[128], tag[16];
	size_t ivlen, taglen;
	const uint8_t *in;
	size_t len, piece[MAXPIECES], npiece;
	uint8_t aad[512];
	size_t aadlen, apiece[8], napiece;
};

/* What one provider did: one entry per call of interest. */
struct trace {
	int fail_step; /* -1: ran to the end */
	int outl[MAXPIECES + 1];
	uint8_t uiv[MAXPIECES][16];
	unsigned num[MAXPIECES];
	uint8_t *out;
	size_t total;
	uint8_t tag[16], tag2[16];
	uint8_t *out2;
	size_t total2;
};

static struct pt_env env;
static EVP_CIPHER *ciphers[2][NMODES][3]; /* [secho, default][mode][key size] */

static EVP_CIPHER *cipher(int prov, enum mode m, int bits)
{
	return ciphers[prov][m][bits / 64 - 2];
}

/* Random data pieces summing to len: one call, bytes, or random sizes. */
static size_t split(size_t *p, size_t maxn, size_t len)
{
	size_t n = 0, kind = t_randrange(0, 3);
	for (size_t off = 0; off < len; n++) {
		size_t left = len - off, want;
		if (n == maxn - 1 || kind == 0)
			want = left;
		else if (kind == 1 && len <= maxn)
			want = 1;
		else
			want = t_randrange(0,
			                   left < 2 * len / maxn + 40 ? left : 2 * len / maxn + 40);
		p[n] = want;
		off += want;
	}
	if (!len && t_randrange(0, 1))
		p[n++] = 0; /* an empty update too */
	return n;
}

static bool ctrl(EVP_CIPHER_CTX *c, int cmd, int arg, void *ptr)
{
	return EVP_CIPHER_CTX_ctrl(c, cmd, arg, ptr) > 0;
}

/*
 * Run plan p on provider prov (0 secho, 1 default). The trace's fail_step is the step
 * that failed (numbered in order), -1 when all succeeded. Steps after a failure are not
 * run.
 */
static void run(const struct plan *p, int prov, struct trace *t)
{
	EVP_CIPHER *ciph = cipher(prov, p->m, p->bits);
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	bool gcm = p->m == GCM, dec = !p->enc;
	uint8_t *buf = calloc(1, p->len + 32), *inb = p->inplace ? buf : calloc(1, p->len + 1);
	int step = 0, outl;
	memset(t, 0, sizeof(*t));
	t->out = buf;
	memcpy(inb, p->in, p->len);
#define STEP(ok)                                                                                   \
	do {                                                                                       \
		step++;                                                                            \
		if (!(ok))                                                                         \
			goto fail;                                                                 \
	} while (0)
	STEP(c && EVP_CipherInit_ex2(c, ciph, NULL, NULL, p->enc, NULL));
	if (gcm && p->ivlen != 12)
		STEP(ctrl(c, EVP_CTRL_AEAD_SET_IVLEN, (int)p->ivlen, NULL));
	if (gcm && dec && p->tag_when == 0)
		STEP(ctrl(c, EVP_CTRL_AEAD_SET_TAG, (int)p->taglen, (void *)p->tag));
	const uint8_t *iv = p->m == ECB ? NULL : p->iv;
	if (p->order == 0) {
		STEP(EVP_CipherInit_ex2(c, NULL, p->key, iv, -1, NULL));
	} else if (p->order == 1) {
		STEP(EVP_CipherInit_ex2(c, NULL, p->key, NULL, -1, NULL));
		STEP(EVP_CipherInit_ex2(c, NULL, NULL, iv, -1, NULL));
	} else {
		STEP(EVP_CipherInit_ex2(c, NULL, NULL, iv, -1, NULL));
		STEP(EVP_CipherInit_ex2(c, NULL, p->key, NULL, -1, NULL));
	}
	STEP(EVP_CIPHER_CTX_set_padding(c, p->pad));
	if (gcm && dec && p->tag_when == 1)
		STEP(ctrl(c, EVP_CTRL_AEAD_SET_TAG, (int)p->taglen, (void *)p->tag));
	for (size_t i = 0, off = 0; gcm && i < p->napiece; off += p->apiece[i++])
		STEP(EVP_CipherUpdate(c, NULL, &outl, p->aad + off, (int)p->apiece[i]));
	size_t off = 0;
	for (size_t i = 0; i < p->npiece; i++) {
		if ((int)i == p->dup_at) {
			EVP_CIPHER_CTX *d = EVP_CIPHER_CTX_new();
			STEP(d && EVP_CIPHER_CTX_copy(d, c));
			EVP_CIPHER_CTX_free(c);
			c = d;
		}
		STEP(EVP_CipherUpdate(c, buf + t->total, &t->outl[i], inb + off, (int)p->piece[i]));
		off += p->piece[i];
		t->total += (size_t)t->outl[i];
		if (p->m != ECB && !gcm) {
			STEP(EVP_CIPHER_CTX_get_updated_iv(c, t->uiv[i], 16));
			t->num[i] = (unsigned)EVP_CIPHER_CTX_get_num(c);
		}
	}
	if (gcm && dec && p->tag_when == 2)
		STEP(ctrl(c, EVP_CTRL_AEAD_SET_TAG, (int)p->taglen, (void *)p->tag));
	STEP(EVP_CipherFinal_ex(c, buf + t->total, &t->outl[p->npiece]));
	t->total += (size_t)t->outl[p->npiece];
	if (gcm && p->enc)
		STEP(ctrl(c, EVP_CTRL_AEAD_GET_TAG, (int)p->taglen, t->tag));
	if (gcm && p->second) { /* another message: an init with only an IV keeps the key */
		int n1, n2;
		t->out2 = malloc(p->len + 32);
		STEP(t->out2 &&
		     EVP_CipherInit_ex2(c, NULL, NULL, p->enc ? p->iv2 : p->iv, -1, NULL));
		if (dec)
			STEP(ctrl(c, EVP_CTRL_AEAD_SET_TAG, (int)p->taglen, (void *)p->tag));
		STEP(EVP_CipherUpdate(c, NULL, &n1, p->aad, (int)p->aadlen));
		STEP(EVP_CipherUpdate(c, t->out2, &n1, p->in, (int)p->len));
		STEP(EVP_CipherFinal_ex(c, t->out2 + n1, &n2));
		t->total2 = (size_t)n1 + (size_t)n2;
		if (p->enc)
			STEP(ctrl(c, EVP_CTRL_AEAD_GET_TAG, (int)p->taglen, t->tag2));
	}
	t->fail_step = -1;
	goto done;
fail:
	t->fail_step = step;
done:
#undef STEP
	ERR_clear_error();
	EVP_CIPHER_CTX_free(c);
	if (inb != buf)
		free(inb);
}

static void describe(const struct plan *p)
{
	printf("  case: %s-%d %s, %zu bytes in %zu pieces, order %d, pad %d, %s, dup at %d",
	       mode_nm[p->m], p->bits, p->enc ? "encrypt" : "decrypt", p->len, p->npiece, p->order,
	       p->pad, p->inplace ? "in place" : "out of place", p->dup_at);
	if (p->m == GCM)
		printf(", iv %zu, aad %zu in %zu, tag %zu set %d, second %d", p->ivlen, p->aadlen,
		       p->napiece, p->taglen, p->tag_when, p->second);
	printf("\n");
}

/* Both traces equal? Prints the first difference. */
static bool same(const struct plan *p, const struct trace *a, const struct trace *b)
{
	const char *what = NULL;
	size_t at = 0;
	if (a->fail_step != b->fail_step) {
		printf("  secho failed at step %d, default at step %d\n", a->fail_step,
		       b->fail_step);
		return false;
	}
	for (size_t i = 0; i < p->npiece + 1 && !what; i++)
		if (a->outl[i] != b->outl[i])
			what = "output length of an update/final", at = i;
	if (!what && (a->total != b->total || memcmp(a->out, b->out, a->total) != 0))
		what = "output bytes";
	if (!what && p->m != ECB && p->m != GCM)
		for (size_t i = 0; i < p->npiece && !what; i++)
			if (memcmp(a->uiv[i], b->uiv[i], 16) != 0 || a->num[i] != b->num[i])
				what = "updated IV or num", at = i;
	if (!what && p->m == GCM && p->enc && memcmp(a->tag, b->tag, p->taglen) != 0)
		what = "tag";
	if (!what && p->m == GCM && p->second && a->fail_step < 0 &&
	    (a->total2 != b->total2 || memcmp(a->out2, b->out2, a->total2) != 0 ||
	     (p->enc && memcmp(a->tag2, b->tag2, p->taglen) != 0)))
		what = "second message";
	if (what)
		printf("  differ: %s (piece %zu)\n", what, at);
	return !what;
}

static void trace_free(struct trace *t)
{
	free(t->out);
	free(t->out2);
}

/* Draw a case. src holds MAXLEN random bytes; ct a buffer for real ciphertext. */
static void draw(struct plan *p, const uint8_t *src, uint8_t *ct)
{
	memset(p, 0, sizeof(*p));
	p->m = (enum mode)t_randrange(0, NMODES - 1);
	p->bits = 128 + 64 * (int)t_randrange(0, 2);
	p->enc = (int)t_randrange(0, 1);
	p->order = (int)t_randrange(0, 2);
	p->pad = p->m == ECB || p->m == CBC ? (int)t_randrange(0, 1) : 1;
	p->inplace = (int)t_randrange(0, 1);
	t_randbytes(p->key, sizeof(p->key));
	t_randbytes(p->iv, sizeof(p->iv));
	memcpy(p->iv2, p->iv, sizeof(p->iv2));
	p->iv2[0] ^= 1;
	size_t r = t_randrange(0, 99);
	p->len = r < 70   ? t_randrange(0, 256)
	         : r < 95 ? t_randrange(0, 4096)
	                  : t_randrange(0, MAXLEN);
	if (!p->pad && t_randrange(0, 3))
		p->len &= ~(size_t)15; /* mostly whole blocks when padding is off */
	if (p->m == CTR) {             /* counters that carry across words */
		memset(p->iv + 16 - t_randrange(0, 9), 0xff, 16);
	}
	if (p->m == GCM) {
		r = t_randrange(0, 9);
		p->ivlen = r < 7 ? 12 : t_randrange(1, 128);
		p->aadlen = t_randrange(0, 3) ? t_randrange(0, 80) : t_randrange(0, sizeof(p->aad));
		t_randbytes(p->aad, p->aadlen);
		p->napiece = split(p->apiece, 8, p->aadlen);
		p->taglen = t_randrange(0, 1) ? 16 : t_randrange(4, 16);
		p->tag_when = (int)t_randrange(0, 2);
		p->second = (int)t_randrange(0, 1);
	}
	p->in = src;
	if (!p->enc && t_randrange(0, 3)) {
		/* real ciphertext, made by the default provider */
		struct plan e = *p;
		struct trace tr;
		e.enc = 1;
		e.npiece = 1;
		e.piece[0] = e.len;
		e.dup_at = -1;
		e.second = 0;
		e.taglen = 16;
		if (!e.pad) /* a length padding-off encryption accepts */
			e.len = e.piece[0] = e.len & ~(size_t)15;
		run(&e, 1, &tr);
		if (tr.fail_step < 0) {
			memcpy(ct, tr.out, tr.total);
			p->in = ct;
			p->len = tr.total;
			memcpy(p->tag, tr.tag, 16);
			if (p->m == GCM && t_randrange(0, 3) == 0) { /* a forgery */
				size_t k = t_randrange(0, 2);
				if (k == 0 || !p->len)
					p->tag[t_randrange(0, p->taglen - 1)] ^= 1;
				else if (k == 1)
					ct[t_randrange(0, p->len - 1)] ^= 0x80;
				else if (p->aadlen)
					p->aad[t_randrange(0, p->aadlen - 1)] ^= 4;
				else
					p->tag[0] ^= 1;
			}
		}
		trace_free(&tr);
	} else if (p->m == GCM && !p->enc) {
		t_randbytes(p->tag, sizeof(p->tag));
	}
	p->npiece = split(p->piece, MAXPIECES, p->len);
	p->dup_at = t_randrange(0, 2) ? -1 : (int)t_randrange(0, p->npiece ? p->npiece - 1 : 0);
}

static void random_cases(unsigned n)
{
	uint8_t *src = malloc(MAXLEN), *ct = malloc(MAXLEN + 32);
	unsigned per[NMODES][2] = {{0}}, completed = 0, failed_alike = 0;
	t_randbytes(src, MAXLEN);
	t_begin("random differential against the default provider (%u cases: every mode and "
	        "key size, both directions, random splits, key/IV order, dupctx)",
	        n);
	for (unsigned i = 0; i < n; i++) {
		struct plan p;
		struct trace a, b;
		draw(&p, src, ct);
		run(&p, 0, &a);
		run(&p, 1, &b);
		bool ok = same(&p, &a, &b);
		if (!T_CHECK(ok, "case %u differs", i))
			describe(&p);
		per[p.m][p.enc]++;
		if (a.fail_step < 0)
			completed++;
		else
			failed_alike += ok;
		trace_free(&a);
		trace_free(&b);
		if (t_case_failures() > 10)
			break;
	}
	printf("# cases per mode (encrypt/decrypt):");
	for (int m = 0; m < NMODES; m++)
		printf(" %s %u/%u", mode_nm[m], per[m][1], per[m][0]);
	printf("\n# outcomes: %u cases ran to the end on both, %u failed at the same step on both "
	       "(forgeries, bad padding, partial blocks without padding)\n",
	       completed, failed_alike);
	/* the script must mostly succeed, or the comparison says little */
	T_CHECK(completed > n / 2, "only %u of %u cases ran to the end", completed, n);
	t_end();
	free(src);
	free(ct);
}

/* ---- PCBC against a reference from the default provider's ECB ---- */

static void ecb_ref(int bits, int enc, const uint8_t *key, uint8_t *out, const uint8_t *in,
                    size_t len)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int n1 = 0, n2 = 0;
	EVP_CipherInit_ex2(c, cipher(1, ECB, bits), key, NULL, enc, NULL);
	EVP_CIPHER_CTX_set_padding(c, 0);
	EVP_CipherUpdate(c, out, &n1, in, (int)len);
	EVP_CipherFinal_ex(c, out + n1, &n2);
	EVP_CIPHER_CTX_free(c);
}

static void pcbc_cases(unsigned n)
{
	t_begin("PCBC through secho against a reference built on the default provider's ECB "
	        "(%u cases)",
	        n);
	uint8_t key[32], iv[16], *pt = calloc(1, 4096 + 16), *ref = calloc(1, 4096 + 32),
	                         *got = calloc(1, 4096 + 32), *back = calloc(1, 4096 + 32);
	for (unsigned i = 0; i < n; i++) {
		int bits = 128 + 64 * (int)t_randrange(0, 2), pad = (int)t_randrange(0, 1);
		size_t len = t_randrange(0, 4096), plen;
		if (!pad)
			len &= ~(size_t)15;
		t_randbytes(key, sizeof(key));
		t_randbytes(iv, sizeof(iv));
		t_randbytes(pt, len);
		/* reference: PKCS#7 pad, then C_i = E(P_i ^ V_i), V_(i+1) = P_i ^ C_i */
		memcpy(ref, pt, len);
		plen = len;
		if (pad) {
			size_t k = 16 - len % 16;
			memset(ref + len, (int)k, k);
			plen += k;
		}
		uint8_t v[16], x[16], chain[16];
		memcpy(v, iv, 16);
		for (size_t o = 0; o < plen; o += 16) {
			for (int j = 0; j < 16; j++)
				x[j] = ref[o + j] ^ v[j];
			ecb_ref(bits, 1, key, x, x, 16);
			for (int j = 0; j < 16; j++)
				v[j] = ref[o + j] ^ x[j];
			memcpy(ref + o, x, 16);
		}
		memcpy(chain, v, 16);
		/* secho, random splits */
		char name[32];
		snprintf(name, sizeof(name), "AES-%d-PCBC", bits);
		EVP_CIPHER *c = EVP_CIPHER_fetch(env.libctx, name, "provider=secho");
		int total = 0, outl = 0;
		bool ok = c != NULL;
		for (int enc = 1; enc >= 0 && ok; enc--) {
			EVP_CIPHER_CTX *x2 = EVP_CIPHER_CTX_new();
			const uint8_t *in = enc ? pt : ref;
			size_t inl = enc ? len : plen;
			uint8_t *o = enc ? got : back;
			total = 0;
			ok = EVP_CipherInit_ex2(x2, c, key, iv, enc, NULL) &&
			     EVP_CIPHER_CTX_set_padding(x2, pad);
			for (size_t off = 0; ok && off < inl;) {
				size_t k = t_randrange(0, inl - off < 40 ? inl - off : 40);
				ok = EVP_CipherUpdate(x2, o + total, &outl, in + off, (int)k);
				total += outl;
				off += k;
			}
			ok = ok && EVP_CipherFinal_ex(x2, o + total, &outl);
			total += outl;
			uint8_t u[16];
			ok = ok && EVP_CIPHER_CTX_get_updated_iv(x2, u, 16) &&
			     !memcmp(u, chain, 16);
			ok = ok && (size_t)total == (enc ? plen : len) &&
			     !memcmp(o, enc ? ref : pt, (size_t)total);
			EVP_CIPHER_CTX_free(x2);
		}
		T_CHECK(ok, "PCBC-%d case %u (%zu bytes, pad %d): mismatch or failure", bits, i,
		        len, pad);
		EVP_CIPHER_free(c);
		ERR_clear_error();
	}
	free(pt);
	free(ref);
	free(got);
	free(back);
	t_end();
}

/* ---- TLS record paths ---- */

/* A TLS 1.2 GCM record context as libssl makes one, the whole IV given (tlsivfixed with
 * -1) so that both providers count the same nonces. */
static EVP_CIPHER_CTX *tls_gcm_ctx(int prov, int bits, int enc, const uint8_t *key, uint8_t iv[12])
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	if (c && EVP_CipherInit_ex2(c, cipher(prov, GCM, bits), key, NULL, enc, NULL) &&
	    ctrl(c, EVP_CTRL_GCM_SET_IV_FIXED, -1, iv))
		return c;
	EVP_CIPHER_CTX_free(c);
	return NULL;
}

/* One record in place, as libssl does it: the pseudo-header's length field is nonce +
 * text when sealing and the whole record (nonce + text + tag) when opening. Returns the
 * output length, or -1. */
static int tls_gcm_record(EVP_CIPHER_CTX *c, uint8_t *rec, size_t textlen, uint64_t seq)
{
	uint8_t aad[13];
	size_t reclen = 8 + textlen + 16;
	size_t field = EVP_CIPHER_CTX_is_encrypting(c) ? 8 + textlen : reclen;
	for (int i = 0; i < 8; i++)
		aad[i] = (uint8_t)(seq >> (56 - 8 * i));
	aad[8] = 23;
	aad[9] = 3;
	aad[10] = 3;
	aad[11] = (uint8_t)(field >> 8);
	aad[12] = (uint8_t)field;
	int pad = EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_TLS1_AAD, 13, aad);
	int outl;
	if (pad != 16 || !EVP_CipherUpdate(c, rec, &outl, rec, (int)reclen))
		return -1;
	return outl;
}

static void tls_gcm(unsigned n)
{
	t_begin("TLS 1.2 GCM records (tlsivfixed, tlsaad, explicit nonce) against the default "
	        "provider (%u records)",
	        n);
	uint8_t key[32], iv[12], *a = malloc(16384 + 64), *b = malloc(16384 + 64),
	                         *x = malloc(16384 + 64);
	for (unsigned i = 0; i < n; i += 8) {
		int bits = 128 + 64 * (int)t_randrange(0, 2);
		t_randbytes(key, sizeof(key));
		t_randbytes(iv, sizeof(iv));
		EVP_CIPHER_CTX *es = tls_gcm_ctx(0, bits, 1, key, iv),
		               *ed = tls_gcm_ctx(1, bits, 1, key, iv),
		               *ds = tls_gcm_ctx(0, bits, 0, key, iv),
		               *dd = tls_gcm_ctx(1, bits, 0, key, iv);
		if (!T_CHECK(es && ed && ds && dd, "TLS GCM contexts")) {
			printf("  %s\n", pt_errors((char[512]){0}, 512));
			break;
		}
		for (uint64_t seq = 0; seq < 8; seq++) {
			size_t len =
			        t_randrange(0, 3) ? t_randrange(0, 300) : t_randrange(0, 16384);
			t_randbytes(a + 8, len);
			memcpy(b + 8, a + 8, len);
			int la = tls_gcm_record(es, a, len, seq),
			    lb = tls_gcm_record(ed, b, len, seq);
			T_CHECK(la == (int)(len + 24) && la == lb && !memcmp(a, b, (size_t)la),
			        "bits %d record %llu (%zu bytes): sealed records differ (%d, %d)",
			        bits, (unsigned long long)seq, len, la, lb);
			/* each opens the other's */
			memcpy(x, b, len + 24);
			int oa = tls_gcm_record(ds, b, len, seq),
			    ob = tls_gcm_record(dd, a, len, seq);
			T_CHECK(oa == (int)len && ob == (int)len && !memcmp(a + 8, b + 8, len),
			        "bits %d record %llu: opened lengths %d, %d", bits,
			        (unsigned long long)seq, oa, ob);
			/* a tampered record fails on both, and secho leaves zeros */
			x[t_randrange(0, len + 23)] ^= 0x20;
			memcpy(b, x, len + 24);
			oa = tls_gcm_record(ds, x, len, seq);
			ob = tls_gcm_record(dd, b, len, seq);
			bool zero = true;
			for (size_t k = 0; k < len; k++)
				zero &= x[8 + k] == 0;
			T_CHECK(oa == -1 && ob == -1 && zero,
			        "bits %d record %llu: tampered record: secho %d (zeroed %d), "
			        "default %d",
			        bits, (unsigned long long)seq, oa, zero, ob);
		}
		EVP_CIPHER_CTX_free(es);
		EVP_CIPHER_CTX_free(ed);
		EVP_CIPHER_CTX_free(ds);
		EVP_CIPHER_CTX_free(dd);
		ERR_clear_error();
	}
	free(a);
	free(b);
	free(x);
	t_end();
}

static EVP_CIPHER_CTX *tls_cbc_ctx(int prov, int bits, int enc, const uint8_t *key,
                                   const uint8_t *iv, int version, size_t macsize)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	OSSL_PARAM p[] = {OSSL_PARAM_construct_int(OSSL_CIPHER_PARAM_TLS_VERSION, &version),
	                  OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_TLS_MAC_SIZE, &macsize),
	                  OSSL_PARAM_construct_end()};
	if (c && EVP_CipherInit_ex2(c, cipher(prov, CBC, bits), key, iv, enc, NULL) &&
	    EVP_CIPHER_CTX_set_params(c, p))
		return c;
	EVP_CIPHER_CTX_free(c);
	return NULL;
}

static bool tls_mac(EVP_CIPHER_CTX *c, uint8_t *mac, size_t m)
{
	unsigned char *ptr = NULL;
	OSSL_PARAM p[] = {
	        OSSL_PARAM_construct_octet_ptr(OSSL_CIPHER_PARAM_TLS_MAC, (void **)&ptr, m),
	        OSSL_PARAM_construct_end()};
	if (!EVP_CIPHER_CTX_get_params(c, p) || !ptr)
		return false;
	memcpy(mac, ptr, m);
	return true;
}

static void tls_cbc(unsigned n)
{
	static const int versions[] = {0x0301, 0x0302, 0x0303};
	static const size_t macs[] = {0, 20, 32, 48};
	t_begin("TLS CBC records (tls-version, tls-mac-size, tls-mac; constant-time unpadding) "
	        "against the default provider (%u records)",
	        n);
	uint8_t key[32], iv[16], *a = malloc(17000), *b = malloc(17000);
	unsigned good = 0, tampered = 0;
	for (unsigned i = 0; i < n; i++) {
		int bits = 128 + 64 * (int)t_randrange(0, 2);
		int ver = versions[t_randrange(0, 2)];
		size_t m = macs[t_randrange(0, 3)],
		       len = t_randrange(0, 3) ? t_randrange(0, 200) : t_randrange(0, 16000);
		size_t head = ver == 0x0301 ? 0 : 16; /* explicit IV block */
		len += head;
		t_randbytes(key, sizeof(key));
		t_randbytes(iv, sizeof(iv));
		t_randbytes(a, len);
		memcpy(b, a, len);
		/* encrypt: the record (explicit IV, payload and MAC) gets TLS padding */
		EVP_CIPHER_CTX *es = tls_cbc_ctx(0, bits, 1, key, iv, ver, m),
		               *ed = tls_cbc_ctx(1, bits, 1, key, iv, ver, m);
		int la = -1, lb = -2;
		if (!T_CHECK(es && ed, "TLS CBC contexts"))
			break;
		bool ok = EVP_CipherUpdate(es, a, &la, a, (int)len) &&
		          EVP_CipherUpdate(ed, b, &lb, b, (int)len);
		T_CHECK(ok && la == lb && !memcmp(a, b, (size_t)la),
		        "v%#x mac %zu len %zu: encrypted records differ (%d, %d)", ver, m, len, la,
		        lb);
		EVP_CIPHER_CTX_free(es);
		EVP_CIPHER_CTX_free(ed);
		/* decrypt it, or a tampered copy (last two blocks: padding and MAC) */
		bool tamper = t_randrange(0, 2) == 0 && la >= 32;
		if (tamper) {
			a[la - 1 - (int)t_randrange(0, 31)] ^= (uint8_t)(1u << t_randrange(0, 7));
			tampered++;
		} else {
			good++;
		}
		memcpy(b, a, (size_t)la);
		EVP_CIPHER_CTX *ds = tls_cbc_ctx(0, bits, 0, key, iv, ver, m),
		               *dd = tls_cbc_ctx(1, bits, 0, key, iv, ver, m);
		int oa = -1, ob = -1;
		bool ra = EVP_CipherUpdate(ds, a, &oa, a, la),
		     rb = EVP_CipherUpdate(dd, b, &ob, b, lb);
		uint8_t ma[64], mb[64];
		T_CHECK(ra == rb && (!ra || oa == ob),
		        "v%#x mac %zu len %zu%s: decrypt %d/%d lengths %d/%d", ver, m, len,
		        tamper ? " tampered" : "", ra, rb, oa, ob);
		if (ra && rb && !tamper && len >= head + m) { /* a well-formed record */
			T_CHECK((size_t)oa == len - head - m &&
			                !memcmp(a + head, b + head, (size_t)oa),
			        "v%#x mac %zu len %zu: payload", ver, m, len);
			if (m)
				T_CHECK(tls_mac(ds, ma, m) && tls_mac(dd, mb, m) &&
				                !memcmp(ma, mb, m),
				        "v%#x mac %zu len %zu: MACs differ", ver, m, len);
		}
		EVP_CIPHER_CTX_free(ds);
		EVP_CIPHER_CTX_free(dd);
		ERR_clear_error();
	}
	printf("# TLS CBC: %u well-formed and %u tampered records decrypted\n", good, tampered);
	free(a);
	free(b);
	t_end();
}

int main(void)
{
	char why[1024];
	t_seed_init("test_provider_diff");
	const char *q = getenv("SECHO_TEST_QUICK");
	bool quick = q && atoi(q);
	if (pt_open(&env, why, sizeof(why))) {
		t_begin("provider differential");
		T_CHECK(0, "%s", why);
		t_end();
		return t_exit();
	}
	for (int prov = 0; prov < 2; prov++)
		for (int m = 0; m < NMODES; m++)
			for (int k = 0; k < 3; k++) {
				char name[32];
				snprintf(name, sizeof(name), "AES-%d-%s", 128 + 64 * k, mode_nm[m]);
				ciphers[prov][m][k] = EVP_CIPHER_fetch(env.libctx, name,
				                                       prov ? "provider=default"
				                                            : "provider=secho");
			}
	bool all = true;
	for (int prov = 0; prov < 2; prov++)
		for (int m = 0; m < NMODES; m++)
			for (int k = 0; k < 3; k++)
				all &= ciphers[prov][m][k] != NULL;
	if (all) {
		random_cases(quick ? 2000 : 20000);
		pcbc_cases(quick ? 100 : 1000);
		tls_gcm(quick ? 200 : 2000);
		tls_cbc(quick ? 500 : 5000);
	} else {
		t_begin("provider differential");
		T_CHECK(0, "a cipher could not be fetched from one of the providers");
		t_end();
	}
	for (int prov = 0; prov < 2; prov++)
		for (int m = 0; m < NMODES; m++)
			for (int k = 0; k < 3; k++)
				EVP_CIPHER_free(ciphers[prov][m][k]);
	pt_close(&env);
	return t_exit();
}
