/*
 * tests/unit/test_wycheproof.c - Project Wycheproof AES-GCM vectors, through the public
 * API, for every implementation in turn.
 *
 * Source: ../shared/vectors/wycheproof/aes_gcm_test.json relative to the repository root
 * ($SECHO_ROOT when set, else the current directory), from Project Wycheproof
 * (github.com/google/wycheproof, testvectors/aes_gcm_test.json, Apache License 2.0; the
 * licence is next to the file). The file is not copied into this repository. A missing
 * or unreadable file is a failure, not a skip.
 *
 * Every one of the file's 316 cases is run:
 *   valid / acceptable: seal must give ct and tag exactly, open must give msg, both
 *     one-shot and streaming in random splits (seed printed);
 *   invalid: must be rejected - a modified tag by open/verify with SECHO_EAUTH (and the
 *     output zeroed), a zero-length IV by seal/open/init with SECHO_EINVAL.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "secho/gcm.h"

#define EXPECTED_CASES 316

struct tcase {
	int id;
	const char *result, *comment;
	bool zero_iv_flag;
	uint8_t *key, *iv, *aad, *msg, *ct, *tag;
	size_t kl, ivl, al, ml, cl, tl;
};

/* Decode a hex string member into a fresh buffer (at least 1 byte allocated). */
static uint8_t *hexdup(json_t *obj, const char *name, size_t *len, bool *ok)
{
	const char *s = json_string_value(json_object_get(obj, name));
	if (!s) {
		*ok = false;
		*len = 0;
		return calloc(1, 1);
	}
	size_t n = strlen(s) / 2;
	uint8_t *p = calloc(n + 1, 1);
	long r = p ? t_unhex(s, p, n) : -1;
	if (r < 0)
		*ok = false;
	*len = r < 0 ? 0 : (size_t)r;
	return p;
}

static bool is_zero(const uint8_t *p, size_t n)
{
	uint8_t acc = 0;
	for (size_t i = 0; i < n; i++)
		acc |= p[i];
	return acc == 0;
}

/* Streaming seal/open in random splits; returns the status of finish/verify or the first
 * failing call, and the output in out (tag in tag when sealing). */
static int stream_run(const secho_gcm_key *k, const struct tcase *t, bool enc, uint8_t *out,
                      uint8_t *tag)
{
	secho_gcm_ctx c;
	int rc = secho_gcm_init(&c, k, t->iv, t->ivl);
	for (size_t off = 0; !rc && off < t->al;) {
		size_t n = t_randrange(0, t->al - off);
		rc = secho_gcm_aad(&c, t->aad + off, n);
		off += n;
	}
	const uint8_t *in = enc ? t->msg : t->ct;
	for (size_t off = 0; !rc && off < t->ml;) {
		size_t n = t_randrange(0, t->ml - off < 40 ? t->ml - off : 40);
		rc = enc ? secho_gcm_encrypt_update(&c, out + off, in + off, n)
		         : secho_gcm_decrypt_update(&c, out + off, in + off, n);
		off += n;
	}
	if (!rc)
		rc = enc ? secho_gcm_finish(&c, tag, t->tl) : secho_gcm_verify(&c, t->tag, t->tl);
	secho_gcm_ctx_wipe(&c);
	return rc;
}

struct counts {
	unsigned total, valid_ok, invalid_rejected;
};

static void run_one(secho_impl_id id, const struct tcase *t, struct counts *cnt)
{
	secho_gcm_key k;
	int rc = secho_gcm_key_init(&k, t->key, t->kl, id);
	cnt->total++;
	if (!T_CHECK(rc == SECHO_OK, "tcId %d: key init (%zu bytes): %d", t->id, t->kl, rc))
		return;
	size_t n = t->ml;
	uint8_t *out = malloc(n + 1), *out2 = malloc(n + 1);
	uint8_t tag[16];
	bool valid = strcmp(t->result, "invalid") != 0;
	unsigned fails0 = (unsigned)t_case_failures();

	if (valid) {
		memset(out, 0xa5, n + 1);
		rc = secho_gcm_seal(&k, t->iv, t->ivl, t->aad, t->al, out, t->msg, n, tag, t->tl);
		T_CHECK(rc == SECHO_OK, "tcId %d (%s): seal %d", t->id, t->comment, rc);
		if (!T_CHECK(t->cl == n && memcmp(out, t->ct, n) == 0 &&
		                     memcmp(tag, t->tag, t->tl) == 0,
		             "tcId %d (%s): seal ct/tag mismatch", t->id, t->comment)) {
			t_hexdump("expected ct", t->ct, t->cl);
			t_hexdump("got ct", out, n);
			t_hexdump("expected tag", t->tag, t->tl);
			t_hexdump("got tag", tag, t->tl);
		}
		memset(out, 0xa5, n + 1);
		rc = secho_gcm_open(&k, t->iv, t->ivl, t->aad, t->al, out, t->ct, n, t->tag, t->tl);
		T_CHECK(rc == SECHO_OK && memcmp(out, t->msg, n) == 0, "tcId %d (%s): open %d",
		        t->id, t->comment, rc);
		memset(out2, 0xa5, n + 1);
		rc = stream_run(&k, t, true, out2, tag);
		T_CHECK(rc == SECHO_OK && memcmp(out2, t->ct, n) == 0 &&
		                memcmp(tag, t->tag, t->tl) == 0,
		        "tcId %d: streaming seal: %d", t->id, rc);
		rc = stream_run(&k, t, false, out2, tag);
		T_CHECK(rc == SECHO_OK && memcmp(out2, t->msg, n) == 0,
		        "tcId %d: streaming open: %d", t->id, rc);
		if (t_case_failures() == fails0)
			cnt->valid_ok++;
	} else if (t->ivl == 0) {
		/* SP 800-38D requires len(IV) >= 1: every entry point refuses it. */
		secho_gcm_ctx c;
		memset(out, 0xa5, n + 1);
		memset(tag, 0xa5, sizeof(tag));
		int r1 = secho_gcm_seal(&k, t->iv, 0, t->aad, t->al, out, t->msg, n, tag, t->tl);
		int r2 = secho_gcm_open(&k, t->iv, 0, t->aad, t->al, out, t->ct, n, t->tag, t->tl);
		int r3 = secho_gcm_init(&c, &k, t->iv, 0);
		T_CHECK(r1 == SECHO_EINVAL && r2 == SECHO_EINVAL && r3 == SECHO_EINVAL,
		        "tcId %d (%s): zero-length IV: seal %d, open %d, init %d (want %d)", t->id,
		        t->comment, r1, r2, r3, SECHO_EINVAL);
		T_CHECK(out[0] == 0xa5 && tag[0] == 0xa5, "tcId %d: rejected call wrote output",
		        t->id);
		if (t_case_failures() == fails0)
			cnt->invalid_rejected++;
	} else {
		memset(out, 0xa5, n + 1);
		rc = secho_gcm_open(&k, t->iv, t->ivl, t->aad, t->al, out, t->ct, n, t->tag, t->tl);
		T_CHECK(rc == SECHO_EAUTH, "tcId %d (%s): invalid case opened with %d (want %d)",
		        t->id, t->comment, rc, SECHO_EAUTH);
		T_CHECK(is_zero(out, n) && out[n] == 0xa5,
		        "tcId %d: output not zeroed (or overrun) after a failed open", t->id);
		rc = stream_run(&k, t, false, out2, tag);
		T_CHECK(rc == SECHO_EAUTH, "tcId %d: streaming verify %d (want %d)", t->id, rc,
		        SECHO_EAUTH);
		if (t_case_failures() == fails0)
			cnt->invalid_rejected++;
	}
	free(out);
	free(out2);
	secho_gcm_key_wipe(&k);
}

static void free_case(struct tcase *t)
{
	free(t->key);
	free(t->iv);
	free(t->aad);
	free(t->msg);
	free(t->ct);
	free(t->tag);
}

static void run_file(json_t *root, secho_impl_id id)
{
	struct counts cnt = {0};
	unsigned nvalid = 0, ninvalid = 0;
	json_t *groups = json_object_get(root, "testGroups");
	size_t gi;
	json_t *g;
	json_array_foreach(groups, gi, g)
	{
		size_t ti;
		json_t *tj;
		json_t *tests = json_object_get(g, "tests");
		long tag_bits = (long)json_integer_value(json_object_get(g, "tagSize"));
		json_array_foreach(tests, ti, tj)
		{
			struct tcase t = {0};
			bool ok = true;
			t.id = (int)json_integer_value(json_object_get(tj, "tcId"));
			t.result = json_string_value(json_object_get(tj, "result"));
			t.comment = json_string_value(json_object_get(tj, "comment"));
			if (!t.comment)
				t.comment = "";
			t.key = hexdup(tj, "key", &t.kl, &ok);
			t.iv = hexdup(tj, "iv", &t.ivl, &ok);
			t.aad = hexdup(tj, "aad", &t.al, &ok);
			t.msg = hexdup(tj, "msg", &t.ml, &ok);
			t.ct = hexdup(tj, "ct", &t.cl, &ok);
			t.tag = hexdup(tj, "tag", &t.tl, &ok);
			if (T_CHECK(ok && t.result && t.tl * 8 == (size_t)tag_bits && t.tl >= 4 &&
			                    t.tl <= 16 && t.cl == t.ml,
			            "tcId %d: malformed entry", t.id)) {
				if (strcmp(t.result, "invalid") == 0)
					ninvalid++;
				else
					nvalid++;
				run_one(id, &t, &cnt);
			}
			free_case(&t);
		}
	}
	long declared = (long)json_integer_value(json_object_get(root, "numberOfTests"));
	printf("# %s: %u cases: %u valid matched (of %u), %u invalid rejected (of %u)\n",
	       secho_impl_name(id), cnt.total, cnt.valid_ok, nvalid, cnt.invalid_rejected,
	       ninvalid);
	T_CHECK(cnt.total == EXPECTED_CASES && declared == EXPECTED_CASES,
	        "ran %u cases, file declares %ld, expected exactly %d", cnt.total, declared,
	        EXPECTED_CASES);
	T_CHECK(cnt.valid_ok == nvalid && cnt.invalid_rejected == ninvalid,
	        "%u of %u valid and %u of %u invalid cases behaved", cnt.valid_ok, nvalid,
	        cnt.invalid_rejected, ninvalid);
}

int main(void)
{
	static const secho_impl_id ids[] = {SECHO_IMPL_PORTABLE, SECHO_IMPL_AESNI, SECHO_IMPL_VAES,
	                                    SECHO_IMPL_VAES_SPLIT};
	char path[4096];
	const char *root = getenv("SECHO_ROOT");
	snprintf(path, sizeof(path), "%s/../shared/vectors/wycheproof/aes_gcm_test.json",
	         root && *root ? root : ".");
	t_seed_init("test_wycheproof");
	json_error_t err;
	json_t *doc = json_load_file(path, 0, &err);
	if (!doc) {
		t_begin("wycheproof aes_gcm_test.json");
		T_CHECK(0,
		        "cannot load %s: %s (line %d); run from the repository root or set "
		        "SECHO_ROOT",
		        path, err.text, err.line);
		t_end();
		return t_exit();
	}
	printf("# vectors: %s\n", path);
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		t_begin("wycheproof AES-GCM %s", secho_impl_name(ids[i]));
		if (!secho_impl_available(ids[i])) {
			t_impl_unavailable(secho_impl_name(ids[i]));
			continue;
		}
		run_file(doc, ids[i]);
		t_end();
	}
	json_decref(doc);
	return t_exit();
}
