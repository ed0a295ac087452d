/*
 * tests/unit/test_provider_vectors.c - published vectors through EVP and the secho
 * provider (build/secho.so), as an application sees it.
 *
 * 1. OpenSSL's own cipher vectors, ../shared/vectors/openssl/evpciph_aes_common.txt (the
 *    file OpenSSL's test/evp_test reads; Apache License 2.0, LICENSE.txt beside it),
 *    relative to the repository root ($SECHO_ROOT, else the current directory). A stanza
 *    reader takes its keywords (Cipher, Key, IV, Plaintext, Ciphertext, AAD, Tag,
 *    SetTagLate, Operation, Result, NextIV, Availablein; Title lines and comments) and runs
 *    every stanza whose algorithm secho offers, with "provider=secho" forced, the way
 *    evp_test does (padding off; tag before the key unless SetTagLate; IV length set when
 *    not the default; the expected error of Result), each direction the stanza allows, in
 *    four ways: whole and one byte at a time, in place and out of place (input and output
 *    misaligned by one byte), the byte-at-a-time runs on a duplicate of the context made
 *    after the key (dupctx). NextIV is checked against the updated IV (its presence only,
 *    for GCM, as evp_test does). Stanzas for algorithms secho does not offer (XTS, CCM) or
 *    for another provider only (Availablein = fips) are counted as not applicable and
 *    listed, never as passed. The reader checks itself first: every stanza through the
 *    default provider must give its expected result.
 * 2. Project Wycheproof aes_gcm_test.json (../shared/vectors/wycheproof/, Apache License
 *    2.0): all 316 cases through EVP and the provider, encrypt and decrypt, whole and in
 *    random splits (seed printed), the tag set before or after the text: valid ones must
 *    match, invalid ones must fail (a zero-length IV is refused, a wrong tag fails final).
 * A missing vector file is a failure, not a skip.
 */
#include <jansson.h>
#include <openssl/err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "harness.h"
#include "provtest.h"

/* ---- the stanza file ---- */

struct stanza {
	int line;
	char cipher[64], avail[32], result[64];
	uint8_t *key, *iv, *pt, *ct, *aad, *tag, *next_iv;
	size_t kl, ivl, ptl, ctl, aadl, tagl, nivl;
	bool has_iv, has_aad, has_tag, has_next_iv, tag_late;
	int op; /* -1 both directions, 1 encrypt only, 0 decrypt only */
};

static void stanza_free(struct stanza *s)
{
	free(s->key);
	free(s->iv);
	free(s->pt);
	free(s->ct);
	free(s->aad);
	free(s->tag);
	free(s->next_iv);
	memset(s, 0, sizeof(*s));
	s->op = -1;
}

static bool hexfield(const char *v, uint8_t **out, size_t *len)
{
	size_t n = strlen(v) / 2;
	*out = malloc(n + 1);
	long r = *out ? t_unhex(v, *out, n) : -1;
	*len = r < 0 ? 0 : (size_t)r;
	return r >= 0 && (size_t)r == n && strlen(v) % 2 == 0;
}

/* One "Keyword = value" line into s; false for a keyword the reader does not know. */
static bool stanza_line(struct stanza *s, const char *k, const char *v, int line)
{
	if (!s->line)
		s->line = line;
	if (!strcmp(k, "Cipher"))
		return snprintf(s->cipher, sizeof(s->cipher), "%s", v) < (int)sizeof(s->cipher);
	if (!strcmp(k, "Availablein"))
		return snprintf(s->avail, sizeof(s->avail), "%s", v) < (int)sizeof(s->avail);
	if (!strcmp(k, "Result"))
		return snprintf(s->result, sizeof(s->result), "%s", v) < (int)sizeof(s->result);
	if (!strcmp(k, "Operation")) {
		s->op = !strcmp(v, "ENCRYPT") ? 1 : !strcmp(v, "DECRYPT") ? 0 : -2;
		return s->op != -2;
	}
	if (!strcmp(k, "SetTagLate")) {
		s->tag_late = !strcasecmp(v, "TRUE");
		return true;
	}
	if (!strcmp(k, "Key"))
		return hexfield(v, &s->key, &s->kl);
	if (!strcmp(k, "IV"))
		return (s->has_iv = true) && hexfield(v, &s->iv, &s->ivl);
	if (!strcmp(k, "Plaintext"))
		return hexfield(v, &s->pt, &s->ptl);
	if (!strcmp(k, "Ciphertext"))
		return hexfield(v, &s->ct, &s->ctl);
	if (!strcmp(k, "AAD"))
		return (s->has_aad = true) && hexfield(v, &s->aad, &s->aadl);
	if (!strcmp(k, "Tag"))
		return (s->has_tag = true) && hexfield(v, &s->tag, &s->tagl);
	if (!strcmp(k, "NextIV"))
		return (s->has_next_iv = true) && hexfield(v, &s->next_iv, &s->nivl);
	return false;
}

/* Every stanza of the file, in order; NULL and a message when the file cannot be read
 * or holds a line the reader does not understand. */
static struct stanza *read_stanzas(const char *path, size_t *count, char *why, size_t cap)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(why, cap, "cannot open %.300s", path);
		return NULL;
	}
	size_t n = 0, room = 64;
	struct stanza *all = calloc(room, sizeof(*all)), cur;
	char line[8192];
	int lineno = 0;
	bool ok = all != NULL;
	memset(&cur, 0, sizeof(cur));
	cur.op = -1;
	while (ok) {
		char *got = fgets(line, sizeof(line), f);
		lineno++;
		if (got) {
			line[strcspn(line, "\r\n")] = '\0';
			if (line[0] == '#')
				continue;
		}
		if (!got || !line[0]) { /* end of a stanza */
			if (cur.line && cur.cipher[0]) {
				if (n == room) {
					struct stanza *m = realloc(all, 2 * room * sizeof(*all));
					ok = m != NULL;
					if (!ok)
						break;
					all = m;
					room *= 2;
				}
				all[n++] = cur;
				memset(&cur, 0, sizeof(cur));
				cur.op = -1;
			} else {
				stanza_free(&cur); /* a Title line alone */
			}
			if (!got)
				break;
			continue;
		}
		char *eq = strchr(line, '=');
		if (!eq) {
			snprintf(why, cap, "%.200s:%d: no '='", path, lineno);
			ok = false;
			break;
		}
		char *k = line, *v = eq + 1, *e = eq;
		while (e > k && e[-1] == ' ')
			e--;
		*e = '\0';
		while (*v == ' ')
			v++;
		for (char *t = v + strlen(v); t > v && t[-1] == ' ';)
			*--t = '\0';
		if (!strcmp(k, "Title"))
			continue;
		if (!stanza_line(&cur, k, v, lineno)) {
			snprintf(why, cap, "%.200s:%d: keyword %.40s = %.40s not understood", path,
			         lineno, k, v);
			ok = false;
		}
	}
	fclose(f);
	stanza_free(&cur);
	if (!ok) {
		for (size_t i = 0; i < n; i++)
			stanza_free(&all[i]);
		free(all);
		return NULL;
	}
	*count = n;
	return all;
}

/* ---- running a stanza the way evp_test does ---- */

enum { WHOLE = 0, BYTES = 1 };

/*
 * One direction of one stanza, one way. Returns NULL when the outcome is the one the
 * stanza expects, else what went wrong. The failure name of each step is evp_test's, so
 * that Result lines compare directly.
 */
static const char *run_stanza(EVP_CIPHER *ciph, const struct stanza *s, int enc, int frag,
                              bool inplace, bool dup, char *msg, size_t cap)
{
	const uint8_t *src = enc ? s->pt : s->ct, *exp = enc ? s->ct : s->pt;
	size_t inl = enc ? s->ptl : s->ctl, expl = enc ? s->ctl : s->ptl;
	bool aead = EVP_CIPHER_get_flags(ciph) & EVP_CIPH_FLAG_AEAD_CIPHER;
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new(), *d = NULL, *c = ctx;
	uint8_t *mem = calloc(1, 2 * inl + 2 * 32 + 2), *out, *tag = NULL;
	const uint8_t *in;
	const char *err = NULL;
	int outl = 0, total = 0;
	if (!ctx || !mem) {
		err = "no memory";
		goto done;
	}
	if (inplace) {
		in = out = mem;
		memcpy(mem, src, inl);
	} else { /* misaligned by one byte, input and output apart */
		uint8_t *ib = mem + 1 + inl + 32;
		memcpy(ib, src, inl);
		in = ib;
		out = mem + 1;
	}
	err = "INIT_ERROR";
	if (!EVP_CipherInit_ex2(ctx, ciph, NULL, NULL, enc, NULL))
		goto done;
	if (aead && s->has_iv && s->ivl != (size_t)EVP_CIPHER_get_iv_length(ciph)) {
		err = "INVALID_IV_LENGTH";
		if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, (int)s->ivl, NULL) <= 0)
			goto done;
	}
	/* GCM takes the tag before the key when decrypting; CCM (the default provider only,
	 * for the reader's own check) also wants the tag length when encrypting. */
	bool ccm = EVP_CIPHER_get_mode(ciph) == EVP_CIPH_CCM_MODE;
	if (aead && ((!enc && !s->tag_late) || ccm)) {
		err = "TAG_SET_ERROR";
		if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, (int)s->tagl,
		                        enc ? NULL : s->tag) <= 0)
			goto done;
	}
	err = "KEY_SET_ERROR";
	if (!EVP_CipherInit_ex2(ctx, NULL, s->key, s->has_iv ? s->iv : NULL, -1, NULL))
		goto done;
	EVP_CIPHER_CTX_set_padding(ctx, 0);
	if (dup) {
		err = "COPY_ERROR";
		d = EVP_CIPHER_CTX_new();
		if (!d || !EVP_CIPHER_CTX_copy(d, ctx))
			goto done;
		c = d;
	}
	if (ccm) { /* CCM is told the text length before the AAD */
		err = "CCM_LENGTH_ERROR";
		if (!EVP_CipherUpdate(c, NULL, &outl, NULL, (int)inl))
			goto done;
	}
	if (s->has_aad) {
		err = "AAD_SET_ERROR";
		if (frag == BYTES) {
			for (size_t i = 0; i < s->aadl; i++)
				if (!EVP_CipherUpdate(c, NULL, &outl, s->aad + i, 1))
					goto done;
		} else if (s->aadl && !EVP_CipherUpdate(c, NULL, &outl, s->aad, (int)s->aadl)) {
			goto done;
		}
	}
	err = "CIPHERUPDATE_ERROR";
	if (frag == BYTES) {
		for (size_t i = 0; i < inl; i++) {
			if (!EVP_CipherUpdate(c, out + total, &outl, in + i, 1))
				goto done;
			total += outl;
		}
	} else if (inl) {
		if (!EVP_CipherUpdate(c, out, &outl, in, (int)inl))
			goto done;
		total = outl;
	}
	if (aead && !enc && s->tag_late) {
		err = "TAG_SET_ERROR";
		if (EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, (int)s->tagl, s->tag) <= 0)
			goto done;
	}
	err = "CIPHERFINAL_ERROR";
	if (!EVP_CipherFinal_ex(c, out + total, &outl))
		goto done;
	total += outl;
	err = "VALUE_MISMATCH";
	if ((size_t)total != expl || memcmp(out, exp, expl) != 0)
		goto done;
	if (aead && enc) {
		err = "TAG_VALUE_MISMATCH";
		tag = malloc(s->tagl + 1);
		if (!tag || EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, (int)s->tagl, tag) <= 0 ||
		    memcmp(tag, s->tag, s->tagl) != 0)
			goto done;
	}
	if (s->has_next_iv) {
		uint8_t iv[128];
		err = "INVALID_NEXT_IV";
		if (!EVP_CIPHER_CTX_get_updated_iv(c, iv, sizeof(iv)) ||
		    (!(EVP_CIPHER_get_flags(ciph) & EVP_CIPH_CUSTOM_IV) &&
		     (s->nivl != s->ivl || memcmp(iv, s->next_iv, s->nivl) != 0)))
			goto done;
	}
	err = NULL;
done:
	ERR_clear_error();
	EVP_CIPHER_CTX_free(d);
	EVP_CIPHER_CTX_free(ctx);
	free(mem);
	free(tag);
	/* Compare with what the stanza expects. */
	const char *want = s->result[0] ? s->result : NULL;
	if ((!err && !want) || (err && want && !strcmp(err, want)))
		return NULL;
	snprintf(msg, cap, "got %s, want %s", err ? err : "success", want ? want : "success");
	return msg;
}

/* All directions and ways of one stanza; false when any went wrong (checks recorded). */
static bool run_all_ways(EVP_CIPHER *ciph, const struct stanza *s, const char *prov, bool quick)
{
	static const struct {
		int frag;
		bool inplace, dup;
		const char *name;
	} ways[] = {
	        {WHOLE, false, false, "whole, out of place"},
	        {WHOLE, true, false, "whole, in place"},
	        {BYTES, false, true, "byte by byte, out of place, dupctx"},
	        {BYTES, true, true, "byte by byte, in place, dupctx"},
	};
	bool ok = true;
	for (int enc = 1; enc >= 0; enc--) {
		if (s->op != -1 && s->op != enc)
			continue;
		for (size_t w = 0; w < (quick ? 1 : sizeof(ways) / sizeof(ways[0])); w++) {
			char msg[128];
			const char *bad = run_stanza(ciph, s, enc, ways[w].frag, ways[w].inplace,
			                             ways[w].dup, msg, sizeof(msg));
			ok &= T_CHECK(!bad, "line %d %s %s via %s (%s): %s", s->line, s->cipher,
			              enc ? "encrypt" : "decrypt", prov, ways[w].name, bad);
		}
	}
	return ok;
}

static void evp_vectors(struct pt_env *e)
{
	char path[4096], why[512];
	size_t n = 0;
	pt_vector_path("openssl/evpciph_aes_common.txt", path, sizeof(path));
	struct stanza *all = read_stanzas(path, &n, why, sizeof(why));

	t_begin("evpciph_aes_common.txt: the reader, through the default provider");
	if (!all) {
		T_CHECK(0, "%s (run from the repository root or set SECHO_ROOT)", why);
		t_end();
		return;
	}
	printf("# vectors: %s (%zu stanzas)\n", path, n);
	size_t ran_default = 0, elsewhere = 0;
	for (size_t i = 0; i < n; i++) {
		const struct stanza *s = &all[i];
		if (s->avail[0] && strcmp(s->avail, "default") != 0) {
			elsewhere++; /* evp_test runs it only where that provider is loaded */
			continue;
		}
		EVP_CIPHER *c = EVP_CIPHER_fetch(e->libctx, s->cipher, "provider=default");
		if (T_CHECK(c != NULL, "line %d: default provider has no %s", s->line, s->cipher)) {
			run_all_ways(c, s, "default", true);
			ran_default++;
		}
		EVP_CIPHER_free(c);
	}
	ERR_clear_error();
	T_CHECK(ran_default + elsewhere == n, "the reader ran %zu of %zu stanzas", ran_default, n);
	t_end();

	t_begin("evpciph_aes_common.txt through secho (whole / byte by byte, in place / out "
	        "of place, dupctx)");
	size_t ran = 0, stanzas_ok = 0, na = 0;
	char na_list[1024] = "";
	struct {
		char name[64];
		unsigned n;
	} nas[32];
	size_t nnas = 0;
	for (size_t i = 0; i < n; i++) {
		const struct stanza *s = &all[i];
		EVP_CIPHER *c = EVP_CIPHER_fetch(e->libctx, s->cipher, "provider=secho");
		ERR_clear_error();
		if (!c || (s->avail[0] && strcmp(s->avail, "default") != 0)) {
			char nm[64];
			snprintf(nm, sizeof(nm), "%s%s%s", s->cipher, c ? " (Availablein=" : "",
			         c ? s->avail : "");
			if (c)
				strncat(nm, ")", sizeof(nm) - strlen(nm) - 1);
			size_t j = 0;
			while (j < nnas && strcasecmp(nas[j].name, nm) != 0)
				j++;
			if (j == nnas && nnas < 32)
				snprintf(nas[nnas++].name, sizeof(nas[0].name), "%s", nm);
			if (j < 32)
				nas[j].n++;
			na++;
			EVP_CIPHER_free(c);
			continue;
		}
		ran++;
		if (run_all_ways(c, s, "secho", false))
			stanzas_ok++;
		EVP_CIPHER_free(c);
	}
	for (size_t j = 0; j < nnas; j++) {
		char one[96];
		snprintf(one, sizeof(one), "%s%.64s %u", j ? ", " : "", nas[j].name, nas[j].n);
		strncat(na_list, one, sizeof(na_list) - strlen(na_list) - 1);
	}
	printf("# secho: %zu stanzas run, %zu passed in every way; %zu not applicable (not "
	       "counted as passed): %s\n",
	       ran, stanzas_ok, na, na_list);
	T_CHECK(ran + na == n && ran > 0, "%zu run + %zu not applicable != %zu stanzas", ran, na,
	        n);
	/* Everything the file has for ECB, CBC, CFB128, OFB, CTR and GCM ran: only XTS, CCM
	 * and the FIPS-only stanza may be left over. */
	for (size_t j = 0; j < nnas; j++)
		T_CHECK(strcasestr(nas[j].name, "xts") || strcasestr(nas[j].name, "ccm") ||
		                strstr(nas[j].name, "Availablein"),
		        "%s not applicable, but it is one secho offers", nas[j].name);
	t_end();
	for (size_t i = 0; i < n; i++)
		stanza_free(&all[i]);
	free(all);
}

/* ---- Wycheproof AES-GCM ---- */

struct wcase {
	int id;
	const char *result, *comment;
	uint8_t *key, *iv, *aad, *msg, *ct, *tag;
	size_t kl, ivl, al, ml, cl, tl;
};

static uint8_t *hexdup(json_t *obj, const char *name, size_t *len, bool *ok)
{
	const char *s = json_string_value(json_object_get(obj, name));
	uint8_t *p = NULL;
	if (!s || !hexfield(s, &p, len))
		*ok = false;
	return p ? p : calloc(1, 1);
}

/* Feed len bytes in random pieces (0..40 bytes; 0 = one call when whole). */
static bool feed(EVP_CIPHER_CTX *c, uint8_t *out, int *total, const uint8_t *in, size_t len,
                 bool whole)
{
	int outl;
	for (size_t off = 0; off < len;) {
		size_t n = whole ? len - off : t_randrange(0, len - off < 40 ? len - off : 40);
		if (!EVP_CipherUpdate(c, out ? out + *total : NULL, &outl, in + off, (int)n))
			return false;
		if (out)
			*total += outl;
		off += n;
	}
	return true;
}

/* One direction: 1 when every call succeeded (output in out, tag in tag when
 * encrypting), 0 when one failed, -1 when the IV length was refused. */
static int wy_run(EVP_CIPHER *ciph, const struct wcase *t, int enc, bool whole, bool tag_late,
                  uint8_t *out, uint8_t *tag)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int ok = 0, total = 0, outl;
	if (!c || !EVP_CipherInit_ex2(c, ciph, NULL, NULL, enc, NULL))
		goto done;
	if (EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_IVLEN, (int)t->ivl, NULL) <= 0) {
		ok = -1;
		goto done;
	}
	if (!enc && !tag_late &&
	    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, (int)t->tl, t->tag) <= 0)
		goto done;
	if (!EVP_CipherInit_ex2(c, NULL, t->key, t->iv, -1, NULL))
		goto done;
	if (!feed(c, NULL, &total, t->aad, t->al, whole) ||
	    !feed(c, out, &total, enc ? t->msg : t->ct, t->ml, whole))
		goto done;
	if (!enc && tag_late &&
	    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, (int)t->tl, t->tag) <= 0)
		goto done;
	if (!EVP_CipherFinal_ex(c, out + total, &outl))
		goto done;
	if (enc && EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, (int)t->tl, tag) <= 0)
		goto done;
	ok = (size_t)total + (size_t)outl == t->ml;
done:
	ERR_clear_error();
	EVP_CIPHER_CTX_free(c);
	return ok;
}

static void wy_one(struct pt_env *e, const struct wcase *t, unsigned *good)
{
	char name[32];
	snprintf(name, sizeof(name), "AES-%zu-GCM", t->kl * 8);
	EVP_CIPHER *ciph = EVP_CIPHER_fetch(e->libctx, name, "provider=secho");
	if (!T_CHECK(ciph != NULL, "tcId %d: no %s in secho", t->id, name))
		return;
	uint8_t *out = calloc(1, t->ml + 1), tag[16];
	unsigned f0 = (unsigned)t_case_failures();
	bool valid = strcmp(t->result, "invalid") != 0;
	for (int way = 0; way < 2; way++) {
		bool whole = way == 0, late = way == 1;
		if (valid) {
			int r = wy_run(ciph, t, 1, whole, false, out, tag);
			T_CHECK(r == 1 && !memcmp(out, t->ct, t->ml) && !memcmp(tag, t->tag, t->tl),
			        "tcId %d (%s): encrypt %s: %d or mismatch", t->id, t->comment,
			        whole ? "whole" : "split", r);
			r = wy_run(ciph, t, 0, whole, late, out, tag);
			T_CHECK(r == 1 && !memcmp(out, t->msg, t->ml),
			        "tcId %d (%s): decrypt %s: %d", t->id, t->comment,
			        whole ? "whole" : "split, tag late", r);
		} else {
			int r = wy_run(ciph, t, 0, whole, late, out, tag);
			T_CHECK(r != 1, "tcId %d (%s): invalid case decrypted", t->id, t->comment);
			T_CHECK(t->ivl || r == -1, "tcId %d: zero-length IV not refused (%d)",
			        t->id, r);
		}
	}
	if (t_case_failures() == f0)
		(*good)++;
	free(out);
	EVP_CIPHER_free(ciph);
}

static void wycheproof(struct pt_env *e)
{
	char path[4096];
	pt_vector_path("wycheproof/aes_gcm_test.json", path, sizeof(path));
	t_begin("wycheproof AES-GCM through EVP and secho (whole, random splits, tag late)");
	json_error_t jerr;
	json_t *doc = json_load_file(path, 0, &jerr);
	if (!T_CHECK(doc != NULL, "cannot load %s: %s", path, jerr.text)) {
		t_end();
		return;
	}
	unsigned total = 0, good = 0;
	size_t gi, ti;
	json_t *g, *tj;
	json_array_foreach(json_object_get(doc, "testGroups"), gi, g)
	{
		json_array_foreach(json_object_get(g, "tests"), ti, tj)
		{
			struct wcase t = {0};
			bool ok = true;
			t.id = (int)json_integer_value(json_object_get(tj, "tcId"));
			t.result = json_string_value(json_object_get(tj, "result"));
			t.comment = json_string_value(json_object_get(tj, "comment"));
			t.key = hexdup(tj, "key", &t.kl, &ok);
			t.iv = hexdup(tj, "iv", &t.ivl, &ok);
			t.aad = hexdup(tj, "aad", &t.al, &ok);
			t.msg = hexdup(tj, "msg", &t.ml, &ok);
			t.ct = hexdup(tj, "ct", &t.cl, &ok);
			t.tag = hexdup(tj, "tag", &t.tl, &ok);
			if (!t.comment)
				t.comment = "";
			total++;
			if (T_CHECK(ok && t.result && t.cl == t.ml, "tcId %d: malformed", t.id))
				wy_one(e, &t, &good);
			free(t.key);
			free(t.iv);
			free(t.aad);
			free(t.msg);
			free(t.ct);
			free(t.tag);
		}
	}
	long declared = (long)json_integer_value(json_object_get(doc, "numberOfTests"));
	printf("# wycheproof: %u cases, %u behaved (file declares %ld)\n", total, good, declared);
	T_CHECK(total == 316 && declared == 316, "%u cases run, expected 316", total);
	json_decref(doc);
	t_end();
}

int main(void)
{
	struct pt_env e;
	char why[1024];
	t_seed_init("test_provider_vectors");
	if (pt_open(&e, why, sizeof(why))) {
		t_begin("provider vectors");
		T_CHECK(0, "%s", why);
		t_end();
		return t_exit();
	}
	evp_vectors(&e);
	wycheproof(&e);
	pt_close(&e);
	return t_exit();
}
