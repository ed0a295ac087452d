/*
 * tests/unit/test_gcm_batch.c - the public batch API (secho_gcm_seal_batch/open_batch) for
 * every implementation, against the single-message API and OpenSSL EVP.
 *
 * Per implementation: every batch size 1..32 with random mixes of text lengths 0..2048 and
 * AAD lengths 0..64 (mostly short, as packets are), in place and out of place; open with
 * some messages tampered (exactly those fail, zeroed, the others decrypt); n = 0 is OK,
 * n = 33 is EINVAL; a NULL IV or tag makes only that message EINVAL.
 */
#include "crypto/inner.h"
#include "cryptoref.h"
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>

#define MAXLEN 2048
#define SENT   16
#define NB     SECHO_GCM_BATCH_MAX

static int quick;

struct slot {
	uint8_t iv[12], aad[64], tag[16], rtag[16];
	uint8_t in[MAXLEN + SENT], out[MAXLEN + SENT], ref[MAXLEN];
	size_t len, aad_len;
};
static struct slot S[NB + 1];
static secho_gcm_msg M[NB + 1];

/* Text length: mostly packet-like, sometimes anything up to MAXLEN, sometimes none. */
static size_t rand_len(int mix)
{
	switch (mix) {
	case 0:
		return 64; /* the key case: all equal */
	case 1:
		return t_randrange(0, 256);
	case 3:
		return 0; /* no text at all (GMAC): E(J0) is the only AES work */
	default:
		return t_randrange(0, 3) ? t_randrange(0, 600) : t_randrange(0, MAXLEN);
	}
}

/* Fill n slots with fresh messages and the OpenSSL reference. */
static void fill(const uint8_t *key, size_t n, int mix, int inplace)
{
	for (size_t i = 0; i < n; i++) {
		struct slot *s = &S[i];
		s->len = rand_len(mix);
		s->aad_len = mix == 0            ? 16
		             : t_randrange(0, 4) ? t_randrange(0, 20)
		                                 : t_randrange(0, 64);
		t_randbytes(s->iv, 12);
		t_randbytes(s->aad, s->aad_len);
		t_randbytes(s->in, s->len);
		memset(s->in + s->len, 0xa5, SENT);
		memset(s->out, 0xa5, sizeof(s->out));
		T_CHECK(ref_evp_gcm_seal(key, 32, s->iv, 12, s->aad, s->aad_len, s->ref, s->in,
		                         s->len, s->rtag),
		        "openssl");
		M[i] = (secho_gcm_msg){.iv = s->iv,
		                       .aad = s->aad_len ? s->aad : NULL,
		                       .aad_len = s->aad_len,
		                       .in = s->in,
		                       .out = inplace ? s->in : s->out,
		                       .len = s->len,
		                       .tag = s->tag,
		                       .status = 12345};
	}
}

static int tail_ok(const uint8_t *p)
{
	for (int i = 0; i < SENT; i++)
		if (p[i] != 0xa5)
			return 0;
	return 1;
}

static int all_zero(const uint8_t *p, size_t n)
{
	uint8_t a = 0;
	for (size_t i = 0; i < n; i++)
		a |= p[i];
	return a == 0;
}

static void run_impl(secho_impl_id id)
{
	t_begin("gcm batch %s: sizes 1..32, mixed lengths, vs single and openssl",
	        secho_impl_name(id));
	uint8_t key[32];
	t_randbytes(key, sizeof(key));
	secho_gcm_key k;
	int rc = secho_gcm_key_init(&k, key, 32, id);
	if (rc == SECHO_EUNAVAIL) {
		t_impl_unavailable(secho_impl_name(id));
		return;
	}
	T_CHECK(rc == SECHO_OK, "key init %d", rc);
	if (rc)
		return t_end();

	int rounds = quick ? 1 : 3;
	for (int rep = 0; rep < rounds; rep++) {
		for (size_t n = 1; n <= NB; n++) {
			int mix = (int)((n + (size_t)rep) % 4), inplace = (int)((n / 3 + rep) & 1);
			fill(key, n, mix, inplace);
			rc = secho_gcm_seal_batch(&k, M, n);
			T_CHECK(rc == SECHO_OK, "seal_batch n %zu rc %d", n, rc);
			for (size_t i = 0; i < n; i++) {
				struct slot *s = &S[i];
				const uint8_t *o = inplace ? s->in : s->out;
				T_CHECK(M[i].status == SECHO_OK, "n %zu msg %zu status %d", n, i,
				        M[i].status);
				T_CHECK(!memcmp(o, s->ref, s->len),
				        "n %zu msg %zu len %zu aad %zu text", n, i, s->len,
				        s->aad_len);
				T_CHECK(!memcmp(s->tag, s->rtag, 16),
				        "n %zu msg %zu len %zu aad %zu tag", n, i, s->len,
				        s->aad_len);
				T_CHECK(tail_ok(o + s->len), "n %zu msg %zu sentinel", n, i);
			}
			/* the single-message API agrees: open the batch output, seal it again */
			for (size_t i = 0; i < n; i++) {
				struct slot *s = &S[i];
				uint8_t one[MAXLEN], pt[MAXLEN], t1[16];
				const uint8_t *o = inplace ? s->in : s->out;
				/* decrypt the batch output with the single open to get
				 * plaintext */
				rc = secho_gcm_open(&k, s->iv, 12, M[i].aad, s->aad_len, pt, o,
				                    s->len, s->tag, 16);
				T_CHECK(rc == SECHO_OK, "single open of batch output n %zu msg %zu",
				        n, i);
				rc = secho_gcm_seal(&k, s->iv, 12, M[i].aad, s->aad_len, one, pt,
				                    s->len, t1, 16);
				T_CHECK(rc == SECHO_OK && !memcmp(one, o, s->len) &&
				                !memcmp(t1, s->tag, 16),
				        "single seal agrees n %zu msg %zu", n, i);
			}

			/* open the batch output: tamper with some, in place or not */
			unsigned tam = (unsigned)t_rand64();
			for (size_t i = 0; i < n; i++) {
				struct slot *s = &S[i];
				if (!inplace)
					memcpy(s->in, s->out, s->len); /* ciphertext as input */
				M[i].in = s->in;
				M[i].out = inplace ? s->in : s->out;
				memset(s->out, 0x5a, s->len);
				memset(s->out + s->len, 0xa5, SENT);
				M[i].status = 12345;
				if ((tam >> (i % 32)) & 1 && (i % 4) != 0) {
					int what = (int)t_randrange(0, 2);
					if (what == 0 || (!s->len && !s->aad_len))
						s->tag[t_randrange(0, 15)] ^=
						        (uint8_t)(1u << t_randrange(0, 7));
					else if (what == 1 && s->len)
						s->in[t_randrange(0, s->len - 1)] ^= 0x80;
					else if (s->aad_len)
						s->aad[t_randrange(0, s->aad_len - 1)] ^= 0x01;
					else
						s->tag[0] ^= 1;
				} else {
					tam &= ~(1u << (i % 32));
				}
			}
			rc = secho_gcm_open_batch(&k, M, n);
			int any = 0;
			for (size_t i = 0; i < n; i++) {
				struct slot *s = &S[i];
				int bad = (tam >> (i % 32)) & 1;
				const uint8_t *p = inplace ? s->in : s->out;
				any |= bad;
				if (bad) {
					T_CHECK(M[i].status == SECHO_EAUTH,
					        "n %zu msg %zu tampered status %d", n, i,
					        M[i].status);
					T_CHECK(all_zero(p, s->len), "n %zu msg %zu zeroed", n, i);
				} else {
					T_CHECK(M[i].status == SECHO_OK, "n %zu msg %zu status %d",
					        n, i, M[i].status);
					/* plaintext = the original input, whose OpenSSL ct
					 * is ref */
					uint8_t ct[MAXLEN], t2[16];
					T_CHECK(ref_evp_gcm_seal(key, 32, s->iv, 12, s->aad,
					                         s->aad_len, ct, p, s->len, t2) &&
					                !memcmp(ct, s->ref, s->len) &&
					                !memcmp(t2, s->rtag, 16),
					        "n %zu msg %zu plaintext round trip", n, i);
				}
				T_CHECK(tail_ok(p + s->len), "open sentinel n %zu msg %zu", n, i);
			}
			T_CHECK(any ? rc == SECHO_EAUTH : rc == SECHO_OK, "open_batch rc %d", rc);
		}
	}

	/* edge cases */
	T_CHECK(secho_gcm_seal_batch(&k, M, 0) == SECHO_OK, "n = 0 seal");
	T_CHECK(secho_gcm_open_batch(&k, M, 0) == SECHO_OK, "n = 0 open");
	fill(key, NB + 1, 1, 0);
	T_CHECK(secho_gcm_seal_batch(&k, M, NB + 1) == SECHO_EINVAL, "n = 33 seal");
	T_CHECK(secho_gcm_open_batch(&k, M, NB + 1) == SECHO_EINVAL, "n = 33 open");
	fill(key, 8, 1, 0);
	M[2].iv = NULL;
	M[5].tag = NULL;
	rc = secho_gcm_seal_batch(&k, M, 8);
	T_CHECK(rc == SECHO_EINVAL, "NULL iv/tag batch rc %d", rc);
	for (size_t i = 0; i < 8; i++) {
		int want = (i == 2 || i == 5) ? SECHO_EINVAL : SECHO_OK;
		T_CHECK(M[i].status == want, "NULL iv/tag msg %zu status %d", i, M[i].status);
		if (want == SECHO_OK)
			T_CHECK(!memcmp(S[i].out, S[i].ref, S[i].len) &&
			                !memcmp(S[i].tag, S[i].rtag, 16),
			        "NULL iv/tag: msg %zu still sealed", i);
	}
	for (size_t i = 0; i < 8; i++) {
		memcpy(S[i].in, S[i].ref, S[i].len);
		memcpy(S[i].tag, S[i].rtag, 16);
	}
	rc = secho_gcm_open_batch(&k, M, 8);
	T_CHECK(rc == SECHO_EINVAL, "NULL iv/tag open rc %d", rc);
	for (size_t i = 0; i < 8; i++) {
		int want = (i == 2 || i == 5) ? SECHO_EINVAL : SECHO_OK;
		T_CHECK(M[i].status == want, "NULL iv/tag open msg %zu status %d", i, M[i].status);
	}
	secho_gcm_key_wipe(&k);
	t_end();
}

int main(void)
{
	t_seed_init("test_gcm_batch");
	const char *qe = getenv("SECHO_TEST_QUICK");
	quick = qe && atoi(qe);
	run_impl(SECHO_IMPL_PORTABLE);
	run_impl(SECHO_IMPL_AESNI);
	run_impl(SECHO_IMPL_VAES);
	run_impl(SECHO_IMPL_VAES_SPLIT);
	return t_exit();
}
