/*
 * tests/unit/test_provider_api.c - the secho provider's contract through EVP: what
 * applications rely on, case by case (the random comparison with the default provider is
 * test_provider_diff.c; published vectors are test_provider_vectors.c).
 *
 *   - algorithms: every name and alias fetches secho's implementation with
 *     "provider=secho"; mode, key and IV length, block size and AEAD flags equal the default
 *     provider's (PCBC: its own mode number, 16-byte IV and block);
 *   - keys expanded once: a key-only init then IV-only inits, and inits repeating the key,
 *     leave the provider's key_setups counter alone; a new key moves it (the counters
 *     reach the provider's totals when a context is freed);
 *   - GCM tags: read after final only, 4..16 bytes; set only when decrypting, 4..16 bytes;
 *     final without one fails (PROV_R_TAG_NOT_SET); a wrong one fails final with an empty
 *     error queue (as the default provider; Python's cryptography depends on it); a tag
 *     changed or set after a short one-shot update is honoured; a finished message takes
 *     no more text until a new IV;
 *   - GCM IVs of any length (1..300 bytes, also past the default provider's 128) against
 *     the library's one-shot seal;
 *   - AAD after text, partial overlap, wrong key length, bad padding: each fails with its
 *     reason in the error queue, through the core's upcalls (secho's own reasons carry
 *     secho's text; the ones the default provider also has are ERR_LIB_PROV's);
 *   - padding off leaves a partial block an error at final; bad padding releases nothing;
 *   - unknown context parameters are accepted; updated-iv is also handed out by address
 *     (OCTET_PTR, as EVP_CIPHER_CTX_iv() asks);
 *   - provider parameters: name, version, implementation, counters.
 */
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/proverr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "provtest.h"
#include "secho/gcm.h"

static struct pt_env env;

static EVP_CIPHER *fetch(const char *name, const char *prop)
{
	return EVP_CIPHER_fetch(env.libctx, name, prop);
}

static bool from_secho(const EVP_CIPHER *c)
{
	return c && !strcmp(OSSL_PROVIDER_get0_name(EVP_CIPHER_get0_provider(c)), "secho");
}

/* The reason of the most recent error, and the queue cleared; 0 when it was empty. */
static unsigned long last_error(void)
{
	unsigned long e = ERR_peek_last_error();
	ERR_clear_error();
	return e;
}

/* ---- algorithms ---- */

static void algorithms(void)
{
	static const char *const modes[] = {"ECB", "CBC", "CTR", "CFB", "OFB", "GCM"};
	static const char *const aliases[][2] = {
	        {"AES128", "AES-128-CBC"},
	        {"aes256", "AES-256-CBC"},
	        {"id-aes256-GCM", "AES-256-GCM"},
	        {"2.16.840.1.101.3.4.1.46", "AES-256-GCM"},
	        {"2.16.840.1.101.3.4.1.2", "AES-128-CBC"},
	        {"aes-192-cfb", "AES-192-CFB"},
	};
	t_begin("algorithms: names, aliases and parameters as the default provider's");
	for (int bits = 128; bits <= 256; bits += 64) {
		for (size_t m = 0; m < 6; m++) {
			char name[32];
			snprintf(name, sizeof(name), "AES-%d-%s", bits, modes[m]);
			EVP_CIPHER *s = fetch(name, "provider=secho"),
			           *d = fetch(name, "provider=default");
			if (T_CHECK(from_secho(s) && d, "%s: not fetched from both", name)) {
				T_CHECK(EVP_CIPHER_get_mode(s) == EVP_CIPHER_get_mode(d) &&
				                EVP_CIPHER_get_key_length(s) ==
				                        EVP_CIPHER_get_key_length(d) &&
				                EVP_CIPHER_get_iv_length(s) ==
				                        EVP_CIPHER_get_iv_length(d) &&
				                EVP_CIPHER_get_block_size(s) ==
				                        EVP_CIPHER_get_block_size(d) &&
				                EVP_CIPHER_get_flags(s) == EVP_CIPHER_get_flags(d),
				        "%s: parameters differ (mode %d/%d, flags %#lx/%#lx)", name,
				        EVP_CIPHER_get_mode(s), EVP_CIPHER_get_mode(d),
				        EVP_CIPHER_get_flags(s), EVP_CIPHER_get_flags(d));
			}
			EVP_CIPHER_free(s);
			EVP_CIPHER_free(d);
		}
		char name[32];
		snprintf(name, sizeof(name), "AES-%d-PCBC", bits);
		EVP_CIPHER *p = fetch(name, "provider=secho");
		T_CHECK(from_secho(p) && EVP_CIPHER_get_mode(p) == 0x20001 &&
		                EVP_CIPHER_get_iv_length(p) == 16 &&
		                EVP_CIPHER_get_block_size(p) == 16 &&
		                EVP_CIPHER_get_key_length(p) == bits / 8,
		        "%s: parameters", name);
		EVP_CIPHER_free(p);
	}
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++) {
		EVP_CIPHER *c = fetch(aliases[i][0], "provider=secho");
		T_CHECK(from_secho(c) && EVP_CIPHER_is_a(c, aliases[i][1]), "alias %s",
		        aliases[i][0]);
		EVP_CIPHER_free(c);
	}
	/* not offered: no secho implementation, the default one stays */
	EVP_CIPHER *x = fetch("AES-128-XTS", "provider=secho");
	T_CHECK(!x, "AES-128-XTS fetched from secho");
	EVP_CIPHER_free(x);
	ERR_clear_error();
	t_end();
}

/* ---- keys expanded once ---- */

static bool gcm_message(EVP_CIPHER_CTX *c, const uint8_t *iv, uint8_t *out, uint8_t *tag)
{
	int n1, n2;
	static const uint8_t msg[40] = {1, 2, 3};
	return EVP_EncryptInit_ex2(c, NULL, NULL, iv, NULL) &&
	       EVP_EncryptUpdate(c, NULL, &n1, msg, 5) && EVP_EncryptUpdate(c, out, &n1, msg, 40) &&
	       EVP_EncryptFinal_ex(c, out + n1, &n2) &&
	       EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, 16, tag) > 0;
}

static void keys_once(void)
{
	static const char *const names[] = {"AES-256-GCM", "AES-128-CBC", "AES-192-CTR",
	                                    "AES-256-PCBC"};
	t_begin("a key is expanded once: IV-only inits and repeated keys keep it");
	uint8_t key[32] = {9, 8, 7}, key2[32] = {1}, iv[16] = {5}, out[64], tag[16];
	/* The counters reach the provider's totals when a context is freed: each phase runs
	 * on its own context. */
	for (size_t i = 0; i < 4; i++) {
		EVP_CIPHER *c = fetch(names[i], "provider=secho");
		bool gcm = strstr(names[i], "GCM") != NULL;
		uint64_t k0 = pt_counter(&env, "key_setups"), r0 = pt_counter(&env, "key_reuses"),
		         v0 = pt_counter(&env, "iv_inits");
		EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
		bool ok = EVP_EncryptInit_ex2(x, c, key, NULL, NULL);
		for (int j = 0; ok && j < 50; j++) {
			iv[0] = (uint8_t)j;
			if (gcm) {
				ok = gcm_message(x, iv, out, tag);
			} else {
				int n;
				ok = EVP_EncryptInit_ex2(x, NULL, NULL, iv, NULL) &&
				     EVP_EncryptUpdate(x, out, &n, key, 32);
			}
		}
		EVP_CIPHER_CTX_free(x);
		uint64_t k1 = pt_counter(&env, "key_setups"), v1 = pt_counter(&env, "iv_inits");
		T_CHECK(ok && k1 == k0 + 1 && v1 == v0 + 50,
		        "%s: 1 key + 50 IV-only inits: key_setups +%llu (want +1), iv_inits +%llu",
		        names[i], (unsigned long long)(k1 - k0), (unsigned long long)(v1 - v0));
		/* the same key again, with an IV: kept */
		x = EVP_CIPHER_CTX_new();
		ok = EVP_EncryptInit_ex2(x, c, key, NULL, NULL) &&
		     EVP_EncryptInit_ex2(x, NULL, key, iv, NULL);
		EVP_CIPHER_CTX_free(x);
		T_CHECK(ok && pt_counter(&env, "key_setups") == k1 + 1 &&
		                pt_counter(&env, "key_reuses") == r0 + 1,
		        "%s: the same key again was expanded again", names[i]);
		/* another key: expanded */
		x = EVP_CIPHER_CTX_new();
		ok = EVP_EncryptInit_ex2(x, c, key, NULL, NULL) &&
		     EVP_EncryptInit_ex2(x, NULL, key2, iv, NULL);
		EVP_CIPHER_CTX_free(x);
		T_CHECK(ok && pt_counter(&env, "key_setups") == k1 + 3,
		        "%s: a new key was not expanded", names[i]);
		EVP_CIPHER_free(c);
	}
	/* messages after IV-only inits are right: against a fresh context per message */
	EVP_CIPHER *g = fetch("AES-256-GCM", "provider=secho");
	EVP_CIPHER_CTX *a = EVP_CIPHER_CTX_new(), *b = EVP_CIPHER_CTX_new();
	uint8_t out2[64], tag2[16];
	bool ok = EVP_EncryptInit_ex2(a, g, key, NULL, NULL);
	for (int j = 0; ok && j < 20; j++) {
		iv[0] = (uint8_t)(100 + j);
		ok = gcm_message(a, iv, out, tag) && EVP_EncryptInit_ex2(b, g, key, NULL, NULL) &&
		     gcm_message(b, iv, out2, tag2) && !memcmp(out, out2, 40) &&
		     !memcmp(tag, tag2, 16);
	}
	T_CHECK(ok, "GCM messages after IV-only inits differ from fresh contexts");
	EVP_CIPHER_CTX_free(a);
	EVP_CIPHER_CTX_free(b);
	EVP_CIPHER_free(g);
	ERR_clear_error();
	t_end();
}

/* ---- GCM tags and message state ---- */

static EVP_CIPHER_CTX *gcm_ctx(const char *prop, int enc, const uint8_t *key, const uint8_t *iv)
{
	EVP_CIPHER *c = fetch("AES-128-GCM", prop);
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	if (!EVP_CipherInit_ex2(x, c, key, iv, enc, NULL)) {
		EVP_CIPHER_CTX_free(x);
		x = NULL;
	}
	EVP_CIPHER_free(c);
	return x;
}

static void gcm_tags(void)
{
	t_begin("GCM tags: read after final, set when decrypting, 4..16 bytes; a wrong tag fails "
	        "final quietly");
	uint8_t key[16] = {1}, iv[12] = {2}, pt[100], ct[100], back[100], tag[16], t2[17];
	int n, n2;
	for (int i = 0; i < 100; i++)
		pt[i] = (uint8_t)i;
	EVP_CIPHER_CTX *e = gcm_ctx("provider=secho", 1, key, iv);
	T_CHECK(e && EVP_CIPHER_CTX_ctrl(e, EVP_CTRL_AEAD_GET_TAG, 16, tag) <= 0,
	        "tag read before final");
	T_CHECK(EVP_CIPHER_CTX_ctrl(e, EVP_CTRL_AEAD_SET_TAG, 16, tag) <= 0,
	        "a tag set when encrypting");
	ERR_clear_error();
	T_CHECK(EVP_EncryptUpdate(e, NULL, &n, pt, 7) && EVP_EncryptUpdate(e, ct, &n, pt, 100) &&
	                EVP_EncryptFinal_ex(e, ct + n, &n2) && n == 100 && n2 == 0,
	        "encrypt");
	T_CHECK(EVP_CIPHER_CTX_ctrl(e, EVP_CTRL_AEAD_GET_TAG, 16, tag) > 0 &&
	                EVP_CIPHER_CTX_ctrl(e, EVP_CTRL_AEAD_GET_TAG, 4, t2) > 0 &&
	                !memcmp(t2, tag, 4),
	        "tag after final, 16 and 4 bytes");
	T_CHECK(EVP_CIPHER_CTX_ctrl(e, EVP_CTRL_AEAD_GET_TAG, 3, t2) <= 0 &&
	                EVP_CIPHER_CTX_ctrl(e, EVP_CTRL_AEAD_GET_TAG, 17, t2) <= 0,
	        "a 3- or 17-byte tag read");
	ERR_clear_error();
	T_CHECK(!EVP_EncryptUpdate(e, ct, &n, pt, 10) && last_error() != 0,
	        "text after final without a new IV");
	T_CHECK(EVP_EncryptInit_ex2(e, NULL, NULL, iv, NULL) &&
	                EVP_EncryptUpdate(e, back, &n, pt, 10),
	        "a new IV starts a message");
	EVP_CIPHER_CTX_free(e);

	/* decrypting */
	EVP_CIPHER_CTX *d = gcm_ctx("provider=secho", 0, key, iv);
	T_CHECK(d && EVP_CIPHER_CTX_ctrl(d, EVP_CTRL_AEAD_SET_TAG, 3, tag) <= 0 &&
	                EVP_CIPHER_CTX_ctrl(d, EVP_CTRL_AEAD_SET_TAG, 17, t2) <= 0,
	        "3- or 17-byte tag set");
	ERR_clear_error();
	T_CHECK(EVP_DecryptUpdate(d, NULL, &n, pt, 7) && EVP_DecryptUpdate(d, back, &n, ct, 100) &&
	                !memcmp(back, pt, 100),
	        "decrypt");
	T_CHECK(!EVP_DecryptFinal_ex(d, back + n, &n2) &&
	                ERR_GET_REASON(last_error()) == PROV_R_TAG_NOT_SET,
	        "final without a tag: PROV_R_TAG_NOT_SET");
	memcpy(t2, tag, 16);
	t2[5] ^= 1;
	T_CHECK(EVP_CIPHER_CTX_ctrl(d, EVP_CTRL_AEAD_SET_TAG, 16, t2) > 0 &&
	                !EVP_DecryptFinal_ex(d, back + n, &n2) && ERR_peek_error() == 0,
	        "a wrong tag: final must fail and leave no error");
	EVP_CIPHER_CTX_free(d);

	/* the same through the default provider: the two agree on the quiet failure */
	d = gcm_ctx("provider=default", 0, key, iv);
	T_CHECK(d && EVP_CIPHER_CTX_ctrl(d, EVP_CTRL_AEAD_SET_TAG, 16, t2) > 0 &&
	                EVP_DecryptUpdate(d, NULL, &n, pt, 7) &&
	                EVP_DecryptUpdate(d, back, &n, ct, 100) &&
	                !EVP_DecryptFinal_ex(d, back + n, &n2) && ERR_peek_error() == 0,
	        "the default provider also fails a wrong tag quietly");
	EVP_CIPHER_CTX_free(d);
	ERR_clear_error();

	/* short messages go one-shot at the update: a tag changed after it is honoured */
	for (int way = 0; way < 4; way++) {
		d = gcm_ctx("provider=secho", 0, key, iv);
		bool early = way & 1, good_first = way & 2;
		if (early) /* tag before the text (verified at the update), maybe a wrong one */
			EVP_CIPHER_CTX_ctrl(d, EVP_CTRL_AEAD_SET_TAG, 16, good_first ? tag : t2);
		bool ok = EVP_DecryptUpdate(d, NULL, &n, pt, 7) &&
		          EVP_DecryptUpdate(d, back, &n, ct, 100) && !memcmp(back, pt, 100);
		/* then the other tag: the one final must check */
		EVP_CIPHER_CTX_ctrl(d, EVP_CTRL_AEAD_SET_TAG, 16, good_first ? t2 : tag);
		bool fin = EVP_DecryptFinal_ex(d, back + n, &n2);
		T_CHECK(ok && fin == !good_first,
		        "tag %s the update, %s tag first: final %d (want %d)",
		        early ? "before" : "after", good_first ? "good" : "wrong", fin,
		        !good_first);
		EVP_CIPHER_CTX_free(d);
		ERR_clear_error();
	}
	t_end();
}

/* ---- any IV length ---- */

static void gcm_iv_lengths(void)
{
	static const size_t lens[] = {1, 8, 12, 13, 16, 60, 64, 65, 128, 129, 257, 300};
	t_begin("GCM IVs of any length, against the library's one-shot seal");
	uint8_t key[32] = {3}, iv[300], pt[77], ct[77], want[77], tag[16], wtag[16];
	for (size_t i = 0; i < sizeof(iv); i++)
		iv[i] = (uint8_t)(i * 7);
	memset(pt, 0x5a, sizeof(pt));
	secho_gcm_key k;
	secho_gcm_key_init(&k, key, 32, SECHO_IMPL_AUTO);
	EVP_CIPHER *c = fetch("AES-256-GCM", "provider=secho");
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		size_t l = lens[i];
		EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
		int n, n2;
		bool ok = EVP_EncryptInit_ex2(x, c, NULL, NULL, NULL) &&
		          EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_IVLEN, (int)l, NULL) > 0 &&
		          EVP_CIPHER_CTX_get_iv_length(x) == (int)l &&
		          EVP_EncryptInit_ex2(x, NULL, key, iv, NULL) &&
		          EVP_EncryptUpdate(x, NULL, &n, key, 3) &&
		          EVP_EncryptUpdate(x, ct, &n, pt, sizeof(pt)) &&
		          EVP_EncryptFinal_ex(x, ct + n, &n2) &&
		          EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16, tag) > 0;
		secho_gcm_seal(&k, iv, l, key, 3, want, pt, sizeof(pt), wtag, 16);
		T_CHECK(ok && !memcmp(ct, want, sizeof(ct)) && !memcmp(tag, wtag, 16),
		        "%zu-byte IV", l);
		uint8_t got[128] = {0};
		/* the IV reads back whole (up to the caller's room) */
		T_CHECK(l > sizeof(got) ||
		                (EVP_CIPHER_CTX_get_original_iv(x, got, l) && !memcmp(got, iv, l)),
		        "%zu-byte IV read back", l);
		EVP_CIPHER_CTX *y = EVP_CIPHER_CTX_new();
		T_CHECK(EVP_CIPHER_CTX_copy(y, x) && EVP_CIPHER_CTX_get_iv_length(y) == (int)l,
		        "%zu-byte IV: dupctx", l);
		EVP_CIPHER_CTX_free(y);
		EVP_CIPHER_CTX_free(x);
	}
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	T_CHECK(EVP_EncryptInit_ex2(x, c, NULL, NULL, NULL) &&
	                EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_IVLEN, 0, NULL) <= 0,
	        "a zero-length IV accepted");
	EVP_CIPHER_CTX_free(x);
	EVP_CIPHER_free(c);
	secho_gcm_key_wipe(&k);
	ERR_clear_error();
	t_end();
}

/* ---- errors, through the core's upcalls ---- */

static void errors(void)
{
	t_begin("errors: the right reason in the queue, secho's text for secho's own");
	uint8_t key[32] = {0}, iv[16] = {0}, buf[64] = {0};
	int n;
	ERR_clear_error();
	/* wrong key length: the default provider's reason */
	EVP_CIPHER *c = fetch("AES-128-CBC", "provider=secho");
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	T_CHECK(EVP_EncryptInit_ex2(x, c, NULL, NULL, NULL) &&
	                !EVP_CIPHER_CTX_set_key_length(x, 24),
	        "a 24-byte key accepted for AES-128");
	unsigned long e = last_error();
	T_CHECK(ERR_GET_LIB(e) == ERR_LIB_PROV && ERR_GET_REASON(e) == PROV_R_INVALID_KEY_LENGTH,
	        "wrong key length: error %#lx", e);
	/* partial overlap: secho's reason and text */
	T_CHECK(EVP_EncryptInit_ex2(x, NULL, key, iv, NULL) &&
	                !EVP_EncryptUpdate(x, buf + 1, &n, buf, 32),
	        "partially overlapping buffers accepted");
	e = last_error();
	const char *txt = ERR_reason_error_string(e);
	T_CHECK(e && ERR_GET_LIB(e) != ERR_LIB_PROV && txt && strstr(txt, "secho") &&
	                strstr(txt, "overlap"),
	        "overlap: error %#lx (%s)", e, txt ? txt : "no text");
	/* in place is fine */
	T_CHECK(EVP_EncryptInit_ex2(x, NULL, NULL, iv, NULL) &&
	                EVP_EncryptUpdate(x, buf, &n, buf, 32),
	        "in place refused");
	/* bad padding: nothing released */
	uint8_t junk[32];
	memset(junk, 0x33, sizeof(junk));
	int n2 = -1;
	T_CHECK(EVP_DecryptInit_ex2(x, NULL, key, iv, NULL) &&
	                EVP_DecryptUpdate(x, buf, &n, junk, 32) && n == 16 &&
	                !EVP_DecryptFinal_ex(x, buf + 16, &n2) && n2 <= 0,
	        "bad padding: final %d bytes", n2);
	e = last_error();
	T_CHECK(ERR_GET_LIB(e) == ERR_LIB_PROV && ERR_GET_REASON(e) == PROV_R_BAD_DECRYPT,
	        "bad padding: error %#lx", e);
	/* padding off: a partial block is an error at final */
	T_CHECK(EVP_EncryptInit_ex2(x, NULL, NULL, iv, NULL) && EVP_CIPHER_CTX_set_padding(x, 0) &&
	                EVP_EncryptUpdate(x, buf, &n, junk, 20) && n == 16 &&
	                !EVP_EncryptFinal_ex(x, buf + 16, &n2),
	        "padding off, 20 bytes: final succeeded");
	e = last_error();
	T_CHECK(ERR_GET_REASON(e) == PROV_R_WRONG_FINAL_BLOCK_LENGTH, "partial block: error %#lx",
	        e);
	/* TLS records are CBC's only */
	EVP_CIPHER *ecb = fetch("AES-128-ECB", "provider=secho");
	EVP_CIPHER_CTX *y = EVP_CIPHER_CTX_new();
	int ver = 0x0303;
	OSSL_PARAM tp[] = {OSSL_PARAM_construct_int(OSSL_CIPHER_PARAM_TLS_VERSION, &ver),
	                   OSSL_PARAM_construct_end()};
	T_CHECK(EVP_EncryptInit_ex2(y, ecb, key, NULL, NULL) && !EVP_CIPHER_CTX_set_params(y, tp),
	        "tls-version accepted by ECB");
	ERR_clear_error();
	EVP_CIPHER_CTX_free(y);
	EVP_CIPHER_free(ecb);
	EVP_CIPHER_CTX_free(x);
	EVP_CIPHER_free(c);
	/* GCM: AAD after text */
	x = gcm_ctx("provider=secho", 1, key, iv);
	T_CHECK(x && EVP_EncryptUpdate(x, buf, &n, junk, 32) &&
	                !EVP_EncryptUpdate(x, NULL, &n, junk, 4),
	        "AAD after text accepted");
	e = last_error();
	txt = ERR_reason_error_string(e);
	T_CHECK(txt && strstr(txt, "secho") && strstr(txt, "order"), "AAD after text: %#lx (%s)", e,
	        txt ? txt : "no text");
	EVP_CIPHER_CTX_free(x);
	t_end();
}

/* ---- parameters ---- */

static void parameters(void)
{
	static const char *const names[] = {"AES-128-ECB", "AES-128-CBC", "AES-128-PCBC",
	                                    "AES-128-CTR", "AES-128-CFB", "AES-128-OFB",
	                                    "AES-128-GCM"};
	t_begin("parameters: unknown ones accepted, updated-iv by address, provider parameters");
	uint8_t key[16] = {7}, iv[16] = {8}, buf[40] = {0};
	int n;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		EVP_CIPHER *c = fetch(names[i], "provider=secho");
		EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
		int v = 5;
		OSSL_PARAM p[] = {OSSL_PARAM_construct_int("secho-no-such-parameter", &v),
		                  OSSL_PARAM_construct_int(OSSL_CIPHER_PARAM_TLS_MAC_SIZE + 4, &v),
		                  OSSL_PARAM_construct_end()};
		T_CHECK(EVP_EncryptInit_ex2(x, c, key, iv, NULL) && EVP_CIPHER_CTX_set_params(x, p),
		        "%s: unknown parameters refused", names[i]);
		if (strstr(names[i], "ECB") == NULL && strstr(names[i], "GCM") == NULL) {
			const unsigned char *ptr = NULL;
			uint8_t copy[16];
			OSSL_PARAM q[] = {OSSL_PARAM_construct_octet_ptr(
			                          OSSL_CIPHER_PARAM_UPDATED_IV, (void **)&ptr, 16),
			                  OSSL_PARAM_construct_end()};
			T_CHECK(EVP_EncryptUpdate(x, buf, &n, buf, 37) &&
			                EVP_CIPHER_CTX_get_params(x, q) && ptr &&
			                EVP_CIPHER_CTX_get_updated_iv(x, copy, 16) &&
			                !memcmp(ptr, copy, 16),
			        "%s: updated-iv by address", names[i]);
		}
		EVP_CIPHER_CTX_free(x);
		EVP_CIPHER_free(c);
	}
	const char *name = NULL, *ver = NULL, *impl = NULL;
	OSSL_PARAM pp[] = {OSSL_PARAM_construct_utf8_ptr(OSSL_PROV_PARAM_NAME, (char **)&name, 0),
	                   OSSL_PARAM_construct_utf8_ptr(OSSL_PROV_PARAM_VERSION, (char **)&ver, 0),
	                   OSSL_PARAM_construct_utf8_ptr("secho-impl", (char **)&impl, 0),
	                   OSSL_PARAM_construct_end()};
	T_CHECK(OSSL_PROVIDER_get_params(env.secho, pp) && name && strstr(name, "secho") && ver &&
	                impl &&
	                (!strcmp(impl, secho_impl_name(secho_impl_resolve(SECHO_IMPL_AUTO)))),
	        "provider name/version/impl: %s / %s / %s", name ? name : "-", ver ? ver : "-",
	        impl ? impl : "-");
	T_CHECK(pt_counter(&env, "contexts") > 0 && pt_counter(&env, "bytes-gcm") > 0 &&
	                pt_counter(&env, "gcm_sealed") > 0,
	        "counters");
	ERR_clear_error();
	t_end();
}

int main(void)
{
	char why[1024];
	if (pt_open(&env, why, sizeof(why))) {
		t_begin("provider API");
		T_CHECK(0, "%s", why);
		t_end();
		return t_exit();
	}
	algorithms();
	keys_once();
	gcm_tags();
	gcm_iv_lengths();
	errors();
	parameters();
	pt_close(&env);
	return t_exit();
}
