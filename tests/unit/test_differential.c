/*
 * tests/unit/test_differential.c - randomised differential tests of the public API
 * against OpenSSL libcrypto (EVP), which is used here as a test-only oracle.
 *
 * For every implementation (portable, aesni, vaes; one not available prints UNAVAILABLE)
 * and every mode - ECB, CBC, PCBC, CTR, CFB128, OFB, GCM (one-shot and streaming) and
 * the GCM batch API - it runs:
 *   - every length 0..1024 with each key size (128/192/256; one size per length,
 *     rotating, under SECHO_TEST_QUICK=1); for the block modes a length that is not a
 *     multiple of 16 must return SECHO_ELEN and write nothing;
 *   - random cases (100,000 in all per run, 5,000 under SECHO_TEST_QUICK=1) with random
 *     key size, key, IV and length (mostly short, some up to 64 KiB).
 * Every case: random split points for the streaming APIs (CTR/CFB/OFB and GCM AAD and
 * text; block-aligned pieces for the resumable block modes), in place or out of place at
 * random, a canary before and after every output buffer, encrypt compared with the
 * oracle and decrypt compared with the plaintext. GCM: random IV lengths (12, or 1..64),
 * truncated tags (4..16), forgeries (tag, ciphertext or AAD bit flipped: SECHO_EAUTH
 * and the output zeroed). CTR IVs often end in 0xff bytes so the 128-bit counter carries
 * across words. PCBC has no OpenSSL mode: the reference below builds it from OpenSSL's
 * ECB following the definition (modes.h).
 *
 * The seed comes from the harness (printed; replay with SECHO_TEST_SEED=...). A failure
 * prints the case: implementation, mode, key size, length, split pattern, in place, and
 * the hex around the first differing byte.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cryptoref.h"
#include "harness.h"
#include "secho/gcm.h"
#include "secho/modes.h"

#define MAXLEN (64 * 1024)
#define GUARD  32
#define CANARY 0xc5

enum { M_ECB, M_CBC, M_PCBC, M_CTR, M_CFB, M_OFB, M_GCM, M_GCMB, M_COUNT };
static const char *const mname[M_COUNT] = {"ECB",    "CBC", "PCBC", "CTR",
                                           "CFB128", "OFB", "GCM",  "GCM-batch"};

static bool quick;

/* Buffers: plaintext, oracle output, and two guarded work areas. */
static uint8_t pt[MAXLEN], ref[MAXLEN], aad[2048];
static uint8_t area1[MAXLEN + 2 * GUARD], area2[MAXLEN + 2 * GUARD];
static uint8_t *const w1 = area1 + GUARD, *const w2 = area2 + GUARD;

/* Description of the current case, printed with any failure. */
static char cdesc[200];

/* ---- oracle ---- */

/* The oracle's letter for a mode (tests/unit/cryptoref.h); PCBC is built from ECB below. */
static char evp_mode(int mode)
{
	switch (mode) {
	case M_ECB:
	case M_PCBC:
		return 'e';
	case M_CBC:
		return 'c';
	case M_CTR:
		return 't';
	case M_CFB:
		return 'f';
	case M_OFB:
		return 'o';
	default:
		return 'g';
	}
}

/* Encrypt with OpenSSL (no padding); false if OpenSSL itself failed. */
static bool ossl_encrypt(int mode, const uint8_t *key, size_t kl, const uint8_t *iv, uint8_t *out,
                         const uint8_t *in, size_t len)
{
	return ref_evp(evp_mode(mode), key, kl, iv, 1, out, in, len);
}

/* PCBC reference from its definition, one OpenSSL ECB block at a time:
 * C_i = E(P_i ^ V_i), V_1 = IV, V_(i+1) = P_i ^ C_i. */
static bool ref_pcbc(const uint8_t *key, size_t kl, const uint8_t *iv0, uint8_t *out,
                     const uint8_t *in, size_t len)
{
	uint8_t v[16], x[16];
	memcpy(v, iv0, 16);
	for (size_t off = 0; off < len; off += 16) {
		for (int j = 0; j < 16; j++)
			x[j] = (uint8_t)(in[off + j] ^ v[j]);
		if (!ossl_encrypt(M_ECB, key, kl, NULL, out + off, x, 16))
			return false;
		for (int j = 0; j < 16; j++)
			v[j] = (uint8_t)(in[off + j] ^ out[off + j]);
	}
	return true;
}

static bool ossl_gcm_seal(const uint8_t *key, size_t kl, const uint8_t *iv, size_t ivl,
                          const uint8_t *a, size_t al, uint8_t *out, const uint8_t *in, size_t len,
                          uint8_t tag[16])
{
	return ref_evp_gcm_seal(key, kl, iv, ivl, a, al, out, in, len, tag);
}

/* ---- helpers ---- */

static size_t rand_len(void)
{
	uint64_t r = t_rand64() % 1000;
	if (r < 700)
		return t_randrange(0, 256);
	if (r < 930)
		return t_randrange(257, 4096);
	if (r < 990)
		return t_randrange(4097, 16384);
	return t_randrange(16385, MAXLEN);
}

static void fill_guards(uint8_t *w, size_t len)
{
	memset(w - GUARD, CANARY, GUARD);
	memset(w + len, CANARY, GUARD);
}

static bool guards_ok(const uint8_t *w, size_t len)
{
	for (size_t i = 0; i < GUARD; i++)
		if (w[-1 - (long)i] != CANARY || w[len + i] != CANARY)
			return false;
	return true;
}

/* Compare; on mismatch print the case and the bytes around the first difference. */
static void cmp(const char *what, const uint8_t *exp, const uint8_t *got, size_t n)
{
	size_t i = 0;
	while (i < n && exp[i] == got[i])
		i++;
	if (T_CHECK(i == n, "%s: %s differs at byte %zu of %zu", cdesc, what, i, n))
		return;
	if (t_case_failures() <= 3) {
		size_t lo = i >= 16 ? i - 16 : 0, m = n - lo < 48 ? n - lo : 48;
		printf("  (bytes from offset %zu)\n", lo);
		t_hexdump("expected", exp + lo, m);
		t_hexdump("got", got + lo, m);
	}
}

static void check_guards(const char *what, const uint8_t *w, size_t len)
{
	T_CHECK(guards_ok(w, len), "%s: %s wrote outside its output buffer", cdesc, what);
}

static void check_rc(const char *what, int rc, int want)
{
	T_CHECK(rc == want, "%s: %s returned %d (%s), want %d", cdesc, what, rc, secho_strerror(rc),
	        want);
}

/* Split patterns: 0 one call, 1 small random pieces, 2 random pieces of any size,
 * 3 byte by byte (short inputs only). */
static int pick_pattern(size_t len)
{
	int p = (int)t_randrange(0, 3);
	if (p == 3 && len > 300)
		p = 1;
	return p;
}

static size_t piece(int pat, size_t left, size_t unit)
{
	size_t n;
	switch (pat) {
	case 0:
		n = left;
		break;
	case 1:
		n = t_randrange(0, 40 / unit + 1) * unit;
		break;
	case 2:
		n = t_randrange(0, left / unit) * unit;
		break;
	default:
		n = unit;
		break;
	}
	return n < left ? n : left;
}

static bool is_zero(const uint8_t *p, size_t n)
{
	uint8_t acc = 0;
	for (size_t i = 0; i < n; i++)
		acc |= p[i];
	return acc == 0;
}

/* ---- block modes: ECB, CBC, PCBC ---- */

typedef int (*blockfn)(const secho_aes_key *, uint8_t *, uint8_t *, const uint8_t *, size_t);

static int ecb_enc_iv(const secho_aes_key *k, uint8_t *iv, uint8_t *o, const uint8_t *i, size_t n)
{
	(void)iv;
	return secho_ecb_encrypt(k, o, i, n);
}
static int ecb_dec_iv(const secho_aes_key *k, uint8_t *iv, uint8_t *o, const uint8_t *i, size_t n)
{
	(void)iv;
	return secho_ecb_decrypt(k, o, i, n);
}

/* Run fn over len bytes from src into w (in place when inplace: src is copied to w
 * first), in block-aligned pieces. The final IV is left in iv. */
static int run_blocks(blockfn fn, const secho_aes_key *k, uint8_t iv[16], uint8_t *w,
                      const uint8_t *src, size_t len, bool inplace, int pat)
{
	fill_guards(w, len);
	const uint8_t *in = src;
	if (inplace) {
		memcpy(w, src, len);
		in = w;
	}
	int rc = SECHO_OK;
	for (size_t off = 0; off < len && !rc;) {
		size_t n = piece(pat, len - off, 16);
		rc = fn(k, iv, w + off, in + off, n);
		off += n;
	}
	if (len == 0)
		rc = fn(k, iv, w, in, 0);
	return rc;
}

static void block_case(int mode, const secho_aes_key *k, const uint8_t *key, size_t kl, size_t len)
{
	static const blockfn enc[] = {ecb_enc_iv, secho_cbc_encrypt, secho_pcbc_encrypt};
	static const blockfn dec[] = {ecb_dec_iv, secho_cbc_decrypt, secho_pcbc_decrypt};
	uint8_t iv0[16], iv[16], iv_before[16];
	t_randbytes(iv0, 16);
	t_randbytes(pt, len);
	bool inplace = t_rand64() & 1;
	int pat = pick_pattern(len);
	snprintf(cdesc, sizeof(cdesc), "%s AES-%zu len %zu pattern %d %s", mname[mode], kl * 8, len,
	         pat, inplace ? "in place" : "out of place");

	if (len % 16) {
		/* Not whole blocks: SECHO_ELEN, output and IV untouched. */
		memcpy(iv, iv0, 16);
		fill_guards(w1, len);
		memset(w1, CANARY, len);
		int rc = enc[mode](k, iv, w1, pt, len);
		check_rc("encrypt (partial block)", rc, SECHO_ELEN);
		rc = dec[mode](k, iv, w1, pt, len);
		check_rc("decrypt (partial block)", rc, SECHO_ELEN);
		bool untouched = true;
		for (size_t i = 0; i < len; i++)
			untouched &= w1[i] == CANARY;
		T_CHECK(untouched && guards_ok(w1, len) && !memcmp(iv, iv0, 16),
		        "%s: rejected call wrote output or changed the IV", cdesc);
		return;
	}
	bool ok = mode == M_PCBC
	                  ? ref_pcbc(key, kl, iv0, ref, pt, len)
	                  : ossl_encrypt(mode, key, kl, mode == M_ECB ? NULL : iv0, ref, pt, len);
	if (!T_CHECK(ok, "%s: OpenSSL reference failed", cdesc))
		return;
	memcpy(iv, iv0, 16);
	int rc = run_blocks(enc[mode], k, iv, w1, pt, len, inplace, pat);
	check_rc("encrypt", rc, SECHO_OK);
	cmp("ciphertext", ref, w1, len);
	check_guards("encrypt", w1, len);
	if (mode == M_CBC && len)
		cmp("CBC chaining value (last C block)", ref + len - 16, iv, 16);
	memcpy(iv_before, iv, 16);
	/* decrypt with an independent split and placement */
	memcpy(iv, iv0, 16);
	inplace = t_rand64() & 1;
	pat = pick_pattern(len);
	rc = run_blocks(dec[mode], k, iv, w2, ref, len, inplace, pat);
	check_rc("decrypt", rc, SECHO_OK);
	cmp("decrypted plaintext", pt, w2, len);
	check_guards("decrypt", w2, len);
	if (mode != M_ECB)
		cmp("chaining value after decrypt = after encrypt", iv_before, iv, 16);
}

/* ---- stream modes: CTR, CFB, OFB ---- */

static int stream_init(int mode, secho_stream *s, const secho_aes_key *k, const uint8_t *iv)
{
	return mode == M_CTR   ? secho_ctr_init(s, k, iv)
	       : mode == M_CFB ? secho_cfb_init(s, k, iv)
	                       : secho_ofb_init(s, k, iv);
}

static int stream_run(int mode, bool enc, const secho_aes_key *k, const uint8_t *iv, uint8_t *w,
                      const uint8_t *src, size_t len, bool inplace, int pat)
{
	secho_stream s;
	fill_guards(w, len);
	const uint8_t *in = src;
	if (inplace) {
		memcpy(w, src, len);
		in = w;
	}
	int rc = stream_init(mode, &s, k, iv);
	size_t off = 0;
	do {
		size_t n = piece(pat, len - off, 1);
		if (rc)
			break;
		if (mode == M_CTR)
			rc = secho_ctr_update(&s, w + off, in + off, n);
		else if (mode == M_OFB)
			rc = secho_ofb_update(&s, w + off, in + off, n);
		else if (enc)
			rc = secho_cfb_encrypt(&s, w + off, in + off, n);
		else
			rc = secho_cfb_decrypt(&s, w + off, in + off, n);
		off += n;
	} while (off < len);
	secho_stream_wipe(&s);
	return rc;
}

static void stream_case(int mode, const secho_aes_key *k, const uint8_t *key, size_t kl, size_t len)
{
	uint8_t iv[16];
	t_randbytes(iv, 16);
	/* CTR: often end the counter in 0xff bytes, so it carries across 32/64-bit words */
	if (mode == M_CTR && (t_rand64() & 1)) {
		size_t nff = t_randrange(1, 16);
		memset(iv + 16 - nff, 0xff, nff);
	}
	t_randbytes(pt, len);
	bool inplace = t_rand64() & 1;
	int pat = pick_pattern(len);
	snprintf(cdesc, sizeof(cdesc), "%s AES-%zu len %zu pattern %d %s", mname[mode], kl * 8, len,
	         pat, inplace ? "in place" : "out of place");
	if (!T_CHECK(ossl_encrypt(mode, key, kl, iv, ref, pt, len), "%s: OpenSSL failed", cdesc))
		return;
	int rc = stream_run(mode, true, k, iv, w1, pt, len, inplace, pat);
	check_rc("encrypt", rc, SECHO_OK);
	cmp("ciphertext", ref, w1, len);
	check_guards("encrypt", w1, len);
	inplace = t_rand64() & 1;
	pat = pick_pattern(len);
	rc = stream_run(mode, false, k, iv, w2, ref, len, inplace, pat);
	check_rc("decrypt", rc, SECHO_OK);
	cmp("decrypted plaintext", pt, w2, len);
	check_guards("decrypt", w2, len);
}

/* ---- GCM ---- */

static int gcm_stream(bool enc, const secho_gcm_key *k, const uint8_t *iv, size_t ivl, size_t al,
                      uint8_t *w, const uint8_t *src, size_t len, bool inplace, int pat,
                      uint8_t *tag, size_t tl)
{
	secho_gcm_ctx c;
	fill_guards(w, len);
	const uint8_t *in = src;
	if (inplace) {
		memcpy(w, src, len);
		in = w;
	}
	int rc = secho_gcm_init(&c, k, iv, ivl);
	for (size_t off = 0; !rc && off < al;) {
		size_t n = piece(pat, al - off, 1);
		rc = secho_gcm_aad(&c, aad + off, n);
		off += n;
	}
	for (size_t off = 0; !rc && off < len;) {
		size_t n = piece(pat, len - off, 1);
		rc = enc ? secho_gcm_encrypt_update(&c, w + off, in + off, n)
		         : secho_gcm_decrypt_update(&c, w + off, in + off, n);
		off += n;
	}
	if (!rc)
		rc = enc ? secho_gcm_finish(&c, tag, tl) : secho_gcm_verify(&c, tag, tl);
	secho_gcm_ctx_wipe(&c);
	return rc;
}

static void gcm_case(const secho_gcm_key *k, const uint8_t *key, size_t kl, size_t len)
{
	uint8_t iv[64], tag[16], rtag[16], bad[16];
	size_t ivl = (t_rand64() & 1) ? 12 : t_randrange(1, 64);
	size_t al = (t_rand64() % 8) ? t_randrange(0, 64) : t_randrange(0, sizeof(aad));
	size_t tl = (t_rand64() % 4) ? 16 : t_randrange(4, 16);
	t_randbytes(iv, ivl);
	t_randbytes(aad, al);
	t_randbytes(pt, len);
	bool inplace = t_rand64() & 1;
	int pat = pick_pattern(len > al ? len : al);
	snprintf(cdesc, sizeof(cdesc), "GCM AES-%zu len %zu aad %zu iv %zu tag %zu pattern %d %s",
	         kl * 8, len, al, ivl, tl, pat, inplace ? "in place" : "out of place");
	if (!T_CHECK(ossl_gcm_seal(key, kl, iv, ivl, aad, al, ref, pt, len, rtag),
	             "%s: OpenSSL failed", cdesc))
		return;

	/* one-shot seal */
	fill_guards(w1, len);
	const uint8_t *in = pt;
	if (inplace) {
		memcpy(w1, pt, len);
		in = w1;
	}
	memset(tag, CANARY, sizeof(tag));
	int rc = secho_gcm_seal(k, iv, ivl, aad, al, w1, in, len, tag, tl);
	check_rc("seal", rc, SECHO_OK);
	cmp("seal ciphertext", ref, w1, len);
	cmp("seal tag", rtag, tag, tl);
	T_CHECK(tl == 16 || tag[tl] == CANARY, "%s: seal wrote past tag_len", cdesc);
	check_guards("seal", w1, len);

	/* one-shot open */
	fill_guards(w2, len);
	in = ref;
	if (t_rand64() & 1) {
		memcpy(w2, ref, len);
		in = w2;
	}
	rc = secho_gcm_open(k, iv, ivl, aad, al, w2, in, len, rtag, tl);
	check_rc("open", rc, SECHO_OK);
	cmp("open plaintext", pt, w2, len);
	check_guards("open", w2, len);

	/* streaming, independent splits for seal and open */
	rc = gcm_stream(true, k, iv, ivl, al, w1, pt, len, inplace, pat, tag, tl);
	check_rc("streaming seal", rc, SECHO_OK);
	cmp("streaming ciphertext", ref, w1, len);
	cmp("streaming tag", rtag, tag, tl);
	check_guards("streaming seal", w1, len);
	rc = gcm_stream(false, k, iv, ivl, al, w2, ref, len, t_rand64() & 1, pick_pattern(len),
	                rtag, tl);
	check_rc("streaming open", rc, SECHO_OK);
	cmp("streaming plaintext", pt, w2, len);
	check_guards("streaming open", w2, len);

	/* a forgery in one in four cases: tag, ciphertext or AAD changed by one bit */
	if (t_rand64() % 4 == 0) {
		int what = (int)t_randrange(0, 2);
		memcpy(bad, rtag, 16);
		if (what == 1 && !len)
			what = 0;
		if (what == 2 && !al)
			what = 0;
		size_t pos = 0;
		if (what == 0) {
			pos = t_randrange(0, tl - 1);
			bad[pos] ^= (uint8_t)(1u << t_randrange(0, 7));
		} else if (what == 1) {
			pos = t_randrange(0, len - 1);
			ref[pos] ^= 0x01;
		} else {
			pos = t_randrange(0, al - 1);
			aad[pos] ^= 0x80;
		}
		fill_guards(w2, len);
		memset(w2, CANARY, len);
		rc = secho_gcm_open(k, iv, ivl, aad, al, w2, ref, len, bad, tl);
		T_CHECK(rc == SECHO_EAUTH && is_zero(w2, len) && guards_ok(w2, len),
		        "%s: forged %s (byte %zu) gave %d, output zeroed %d", cdesc,
		        what == 0   ? "tag"
		        : what == 1 ? "ciphertext"
		                    : "AAD",
		        pos, rc, is_zero(w2, len));
		rc = gcm_stream(false, k, iv, ivl, al, w2, ref, len, false, pick_pattern(len), bad,
		                tl);
		T_CHECK(rc == SECHO_EAUTH, "%s: streaming verify of a forgery gave %d", cdesc, rc);
	}
}

/* A batch of 1..32 short messages (12-byte IVs, full tags), one possibly forged. */
static void gcm_batch_case(const secho_gcm_key *k, const uint8_t *key, size_t kl)
{
	enum { MAXM = 1024 };
	static uint8_t bpt[SECHO_GCM_BATCH_MAX][MAXM], bct[SECHO_GCM_BATCH_MAX][MAXM];
	static uint8_t bout[SECHO_GCM_BATCH_MAX][MAXM + GUARD], baad[SECHO_GCM_BATCH_MAX][32];
	static uint8_t biv[SECHO_GCM_BATCH_MAX][12], btag[SECHO_GCM_BATCH_MAX][16];
	static uint8_t rtag[SECHO_GCM_BATCH_MAX][16];
	secho_gcm_msg m[SECHO_GCM_BATCH_MAX];
	size_t n = t_randrange(1, SECHO_GCM_BATCH_MAX);
	bool inplace = t_rand64() & 1;
	snprintf(cdesc, sizeof(cdesc), "GCM batch AES-%zu n %zu %s", kl * 8, n,
	         inplace ? "in place" : "out of place");
	for (size_t i = 0; i < n; i++) {
		size_t len = (t_rand64() % 4) ? t_randrange(0, 128) : t_randrange(0, MAXM);
		size_t al = t_randrange(0, 32);
		t_randbytes(bpt[i], len);
		t_randbytes(baad[i], al);
		t_randbytes(biv[i], 12);
		if (!T_CHECK(ossl_gcm_seal(key, kl, biv[i], 12, baad[i], al, bct[i], bpt[i], len,
		                           rtag[i]),
		             "%s: OpenSSL failed", cdesc))
			return;
		memset(bout[i], CANARY, sizeof(bout[i]));
		if (inplace)
			memcpy(bout[i], bpt[i], len);
		m[i] = (secho_gcm_msg){.iv = biv[i],
		                       .aad = baad[i],
		                       .aad_len = al,
		                       .in = inplace ? bout[i] : bpt[i],
		                       .out = bout[i],
		                       .len = len,
		                       .tag = btag[i],
		                       .status = 12345};
	}
	int rc = secho_gcm_seal_batch(k, m, n);
	check_rc("seal_batch", rc, SECHO_OK);
	for (size_t i = 0; i < n; i++) {
		T_CHECK(m[i].status == SECHO_OK, "%s: message %zu status %d", cdesc, i,
		        m[i].status);
		cmp("batch ciphertext", bct[i], bout[i], m[i].len);
		cmp("batch tag", rtag[i], btag[i], 16);
		T_CHECK(bout[i][m[i].len] == CANARY, "%s: message %zu overrun", cdesc, i);
	}
	/* open: in place on the sealed output, one message forged half the time */
	size_t forged = (t_rand64() & 1) ? t_randrange(0, n - 1) : SIZE_MAX;
	if (forged != SIZE_MAX)
		btag[forged][t_randrange(0, 15)] ^= 0x04;
	for (size_t i = 0; i < n; i++) {
		m[i].in = bout[i];
		m[i].status = 12345;
	}
	rc = secho_gcm_open_batch(k, m, n);
	check_rc("open_batch", rc, forged == SIZE_MAX ? SECHO_OK : SECHO_EAUTH);
	for (size_t i = 0; i < n; i++) {
		if (i == forged) {
			T_CHECK(m[i].status == SECHO_EAUTH && is_zero(bout[i], m[i].len),
			        "%s: forged message %zu status %d", cdesc, i, m[i].status);
		} else {
			T_CHECK(m[i].status == SECHO_OK, "%s: message %zu status %d", cdesc, i,
			        m[i].status);
			cmp("batch plaintext", bpt[i], bout[i], m[i].len);
		}
		T_CHECK(bout[i][m[i].len] == CANARY, "%s: message %zu overrun", cdesc, i);
	}
}

/* ---- driver ---- */

static const size_t key_lens[3] = {16, 24, 32};

static void one_case(int mode, secho_impl_id id, size_t kl, size_t len)
{
	uint8_t key[32];
	t_randbytes(key, kl);
	if (mode == M_GCM || mode == M_GCMB) {
		secho_gcm_key k;
		int rc = secho_gcm_key_init(&k, key, kl, id);
		if (!T_CHECK(rc == SECHO_OK, "gcm key init %d", rc))
			return;
		if (mode == M_GCM)
			gcm_case(&k, key, kl, len);
		else
			gcm_batch_case(&k, key, kl);
		secho_gcm_key_wipe(&k);
	} else {
		secho_aes_key k;
		int rc = secho_aes_key_init(&k, key, kl, id);
		if (!T_CHECK(rc == SECHO_OK, "aes key init %d", rc))
			return;
		if (mode <= M_PCBC)
			block_case(mode, &k, key, kl, len);
		else
			stream_case(mode, &k, key, kl, len);
		secho_aes_key_wipe(&k);
	}
}

int main(void)
{
	static const secho_impl_id ids[] = {SECHO_IMPL_PORTABLE, SECHO_IMPL_AESNI, SECHO_IMPL_VAES,
	                                    SECHO_IMPL_VAES_SPLIT};
	const char *q = getenv("SECHO_TEST_QUICK");
	quick = q && *q && strcmp(q, "0") != 0;
	t_seed_init("test_differential");
	unsigned navail = 0;
	const size_t nids = sizeof(ids) / sizeof(ids[0]);
	for (size_t i = 0; i < nids; i++)
		navail += secho_impl_available(ids[i]);
	unsigned long total_random = quick ? 5000 : 100000;
	unsigned long per = navail ? (total_random + navail * M_COUNT - 1) / (navail * M_COUNT) : 0;
	unsigned long grand = 0, grand_random = 0;
	printf("# %s: %lu random cases per mode and implementation (%u available)\n",
	       quick ? "quick" : "normal", per, navail);

	for (size_t ii = 0; ii < nids; ii++) {
		secho_impl_id id = ids[ii];
		for (int mode = 0; mode < M_COUNT; mode++) {
			t_begin("differential vs OpenSSL %s %s", mname[mode], secho_impl_name(id));
			if (!secho_impl_available(id)) {
				t_impl_unavailable(secho_impl_name(id));
				continue;
			}
			struct timespec t0, t1;
			clock_gettime(CLOCK_MONOTONIC, &t0);
			unsigned long cases = 0, rnd = 0;
			/* every length 0..1024 (the batch mode has its own lengths: 64 batches
			 * per key size instead) */
			if (mode == M_GCMB) {
				for (unsigned i = 0; i < (quick ? 32u : 64u * 3); i++, cases++)
					one_case(mode, id, key_lens[i % 3], 0);
			} else {
				for (size_t len = 0; len <= 1024; len++) {
					for (size_t ki = 0; ki < 3; ki++) {
						if (quick && ki != len % 3)
							continue;
						one_case(mode, id, key_lens[ki], len);
						cases++;
					}
				}
			}
			for (unsigned long r = 0; r < per; r++, rnd++) {
				size_t len = rand_len();
				if (mode <= M_PCBC && (t_rand64() % 16))
					len &= ~(size_t)15; /* mostly whole blocks */
				one_case(mode, id, key_lens[t_randrange(0, 2)], len);
			}
			cases += rnd;
			clock_gettime(CLOCK_MONOTONIC, &t1);
			double dt =
			        (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
			printf("# %-9s %-8s %7lu cases (%lu random) in %.2f s\n", mname[mode],
			       secho_impl_name(id), cases, rnd, dt);
			grand += cases;
			grand_random += rnd;
			t_end();
		}
	}
	printf("# total: %lu cases, %lu of them random\n", grand, grand_random);
	if (navail) {
		t_begin("differential random case count");
		T_CHECK(grand_random >= total_random, "ran %lu random cases, want at least %lu",
		        grand_random, total_random);
		t_end();
	}
	return t_exit();
}
