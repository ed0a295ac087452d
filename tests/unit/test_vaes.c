/*
 * tests/unit/test_vaes.c - differential tests of the VAES/VPCLMULQDQ table entries
 * (src/crypto/aes_vaes.c, gcm_vaes.c), called through the table pointers, against
 * OpenSSL EVP and against a bit-by-bit GF(2^128) multiply (SP 800-38D 6.3, Algorithm 1)
 * written here.
 *
 * Output buffers carry a sentinel tail that must survive; chaining values handed back
 * (IV, counter, GHASH state) are checked too. UNAVAILABLE when the CPU lacks VAES.
 */
#include "crypto/inner.h"
#include "cryptoref.h"
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>

#define MAXB   4096
#define MAXMSG (64 * 1024)
#define SENT   32

static const struct secho_aes_impl *A;
static const struct secho_gcm_impl *G;
static int quick;

static uint8_t src[MAXMSG + SENT], dst[MAXMSG + SENT], ref[MAXMSG + SENT], tmp[MAXMSG + SENT];
static uint8_t aadb[128];
static const size_t key_lens[3] = {16, 24, 32};

/* nblocks schedule: every count 0..64, then random ones up to MAXB. */
static size_t nb_case(int i)
{
	return i <= 64 ? (size_t)i : t_randrange(65, MAXB);
}

static int nb_cases(void)
{
	return 65 + (quick ? 5 : 40);
}

static void test_ecb(void)
{
	t_begin("%s ecb enc/dec vs openssl (128/192/256, 0..64 and random blocks)", G->name);
	for (int ki = 0; ki < 3; ki++) {
		uint8_t key[32];
		secho_aes_key k;
		t_randbytes(key, sizeof(key));
		ref_mk_aes(&k, A, key, key_lens[ki]);
		for (int i = 0; i < nb_cases(); i++) {
			size_t nb = nb_case(i), n = 16 * nb;
			t_randbytes(src, n);
			for (int dec = 0; dec < 2; dec++) {
				memset(dst, 0xa5, n + SENT);
				T_CHECK(ref_evp('e', key, key_lens[ki], NULL, !dec, ref, src, n),
				        "openssl");
				(dec ? A->ecb_dec : A->ecb_enc)(&k, dst, src, nb);
				T_CHECK(!memcmp(dst, ref, n), "kl %zu nb %zu dec %d", key_lens[ki],
				        nb, dec);
				T_CHECK(ref_sentinel_ok(dst + n, SENT), "sentinel nb %zu", nb);
				/* in place */
				memcpy(tmp, src, n);
				(dec ? A->ecb_dec : A->ecb_enc)(&k, tmp, tmp, nb);
				T_CHECK(!memcmp(tmp, ref, n), "in place nb %zu dec %d", nb, dec);
			}
		}
	}
	t_end();
}

/* 128-bit big-endian add, for the expected counter. */
static void be128_add(uint8_t c[16], uint64_t n)
{
	uint64_t lo = secho_load_be64(c + 8), hi = secho_load_be64(c);
	uint64_t nlo = lo + n;
	hi += nlo < lo;
	secho_store_be64(c, hi);
	secho_store_be64(c + 8, nlo);
}

static void test_ctr128(void)
{
	t_begin("%s ctr128 vs openssl (carry across 64 bits, wrap at 2^128)", G->name);
	for (int ki = 0; ki < 3; ki++) {
		uint8_t key[32];
		secho_aes_key k;
		t_randbytes(key, sizeof(key));
		ref_mk_aes(&k, A, key, key_lens[ki]);
		for (int i = 0; i < nb_cases() + 20; i++) {
			size_t nb = i < nb_cases() ? nb_case(i) : t_randrange(1, 80);
			size_t n = 16 * nb;
			uint8_t ctr[16], c2[16];
			t_randbytes(ctr, 16);
			if (i >= nb_cases()) {
				/* low qword about to wrap; every other one also the high qword */
				memset(ctr + 8, 0xff, 8);
				ctr[15] = (uint8_t)(0x100 - t_randrange(1, 70));
				if (i & 1)
					memset(ctr, 0xff, 8);
			}
			memcpy(c2, ctr, 16);
			t_randbytes(src, n);
			memset(dst, 0xa5, n + SENT);
			T_CHECK(ref_evp('t', key, key_lens[ki], ctr, 1, ref, src, n), "openssl");
			A->ctr128(&k, c2, dst, src, nb);
			T_CHECK(!memcmp(dst, ref, n), "kl %zu nb %zu case %d", key_lens[ki], nb, i);
			T_CHECK(ref_sentinel_ok(dst + n, SENT), "sentinel");
			be128_add(ctr, nb);
			T_CHECK(!memcmp(ctr, c2, 16), "counter advanced by %zu", nb);
		}
	}
	t_end();
}

static void test_chain(char mode)
{
	t_begin("%s %s vs openssl (iv chaining, in place)", G->name,
	        mode == 'c' ? "cbc enc/dec" : "cfb128 dec");
	for (int ki = 0; ki < 3; ki++) {
		uint8_t key[32];
		secho_aes_key k;
		t_randbytes(key, sizeof(key));
		ref_mk_aes(&k, A, key, key_lens[ki]);
		for (int i = 0; i < nb_cases(); i++) {
			size_t nb = nb_case(i), n = 16 * nb;
			uint8_t iv[16], iv2[16];
			t_randbytes(iv, 16);
			t_randbytes(src, n);
			for (int dec = mode == 'c' ? 0 : 1; dec < 2; dec++) {
				memcpy(iv2, iv, 16);
				memset(dst, 0xa5, n + SENT);
				T_CHECK(ref_evp(mode, key, key_lens[ki], iv, !dec, ref, src, n),
				        "openssl");
				void (*f)(const secho_aes_key *, uint8_t *, uint8_t *,
				          const uint8_t *, size_t) =
				        mode == 'c' ? (dec ? A->cbc_dec : A->cbc_enc) : A->cfb_dec;
				f(&k, iv2, dst, src, nb);
				T_CHECK(!memcmp(dst, ref, n), "kl %zu nb %zu dec %d", key_lens[ki],
				        nb, dec);
				T_CHECK(ref_sentinel_ok(dst + n, SENT), "sentinel");
				/* the next IV is the last ciphertext block (the input when
				 * decrypting) */
				const uint8_t *want = nb ? (dec ? src : ref) + n - 16 : iv;
				T_CHECK(!memcmp(iv2, want, 16), "iv out nb %zu dec %d", nb, dec);
				memcpy(tmp, src, n);
				memcpy(iv2, iv, 16);
				f(&k, iv2, tmp, tmp, nb);
				T_CHECK(!memcmp(tmp, ref, n), "in place nb %zu", nb);
			}
		}
	}
	t_end();
}

static void test_ghash(void)
{
	t_begin("%s ghash vs bit-by-bit multiply (0..64 and random blocks, chained y)", G->name);
	for (int ki = 0; ki < 3; ki++) {
		uint8_t key[32], h[16], zero[16] = {0};
		secho_gcm_key g;
		t_randbytes(key, sizeof(key));
		ref_mk_gcm(&g, G, key, key_lens[ki]);
		A->ecb_enc(&g.aes, h, zero, 1);
		int cases = 65 + (quick ? 3 : 12);
		for (int i = 0; i < cases; i++) {
			size_t nb = i <= 64 ? (size_t)i : t_randrange(65, 700);
			uint8_t y[16], y2[16];
			t_randbytes(y, 16);
			memcpy(y2, y, 16);
			t_randbytes(src, 16 * nb);
			ref_ghash(h, y, src, nb);
			G->ghash(&g, y2, src, nb);
			T_CHECK(!memcmp(y, y2, 16), "kl %zu nb %zu", key_lens[ki], nb);
		}
	}
	t_end();
}

/* Expected ctr32 stream via ECB of the counter blocks (inc32 by hand). */
static void ctr32_ref(const secho_aes_key *k, const uint8_t ctr[16], uint8_t *out,
                      const uint8_t *in, size_t nb)
{
	uint8_t c[16], ks[16];
	memcpy(c, ctr, 16);
	for (size_t i = 0; i < nb; i++) {
		A->ecb_enc(k, ks, c, 1);
		secho_xor16(out + 16 * i, in + 16 * i, ks);
		secho_store_be32(c + 12, secho_load_be32(c + 12) + 1);
	}
}

static void test_ctr32_fused(void)
{
	t_begin("%s ctr32 (wrap mod 2^32) and fused enc_blocks/dec_blocks", G->name);
	for (int ki = 0; ki < 3; ki++) {
		uint8_t key[32], h[16], zero[16] = {0};
		secho_gcm_key g;
		t_randbytes(key, sizeof(key));
		ref_mk_gcm(&g, G, key, key_lens[ki]);
		A->ecb_enc(&g.aes, h, zero, 1);
		for (int i = 0; i < nb_cases(); i++) {
			size_t nb = nb_case(i), n = 16 * nb;
			uint8_t ctr[16], c2[16], y[16], y2[16];
			t_randbytes(ctr, 16);
			if (i & 1) /* near the 32-bit wrap; the upper 96 bits must not change */
				secho_store_be32(ctr + 12,
				                 0xffffffffu - (uint32_t)t_randrange(0, 70));
			t_randbytes(src, n);
			ctr32_ref(&g.aes, ctr, ref, src, nb);
			memcpy(c2, ctr, 16);
			memset(dst, 0xa5, n + SENT);
			G->ctr32(&g.aes, c2, dst, src, nb);
			T_CHECK(!memcmp(dst, ref, n), "ctr32 kl %zu nb %zu", key_lens[ki], nb);
			T_CHECK(ref_sentinel_ok(dst + n, SENT), "sentinel");
			uint8_t want[16];
			memcpy(want, ctr, 16);
			secho_store_be32(want + 12, secho_load_be32(want + 12) + (uint32_t)nb);
			T_CHECK(!memcmp(c2, want, 16), "ctr32 counter out nb %zu", nb);

			/* fused encrypt: ciphertext as ctr32, y = GHASH of the ciphertext */
			t_randbytes(y, 16);
			memcpy(y2, y, 16);
			memcpy(c2, ctr, 16);
			memset(dst, 0xa5, n + SENT);
			G->enc_blocks(&g, c2, y2, dst, src, nb);
			ref_ghash(h, y, ref, nb);
			T_CHECK(!memcmp(dst, ref, n), "enc_blocks text nb %zu", nb);
			T_CHECK(!memcmp(y, y2, 16), "enc_blocks ghash nb %zu", nb);
			T_CHECK(!memcmp(c2, want, 16), "enc_blocks counter nb %zu", nb);
			T_CHECK(ref_sentinel_ok(dst + n, SENT), "sentinel");
			/* fused decrypt, in place: back to src, GHASH over the ciphertext */
			memcpy(tmp, ref, n);
			memcpy(c2, ctr, 16);
			t_randbytes(y, 16);
			memcpy(y2, y, 16);
			G->dec_blocks(&g, c2, y2, tmp, tmp, nb);
			ref_ghash(h, y, ref, nb);
			T_CHECK(!memcmp(tmp, src, n), "dec_blocks text nb %zu", nb);
			T_CHECK(!memcmp(y, y2, 16), "dec_blocks ghash nb %zu", nb);
			T_CHECK(!memcmp(c2, want, 16), "dec_blocks counter nb %zu", nb);
		}
	}
	t_end();
}

/* One seal96/open96 case against OpenSSL; in place when inplace. */
static void gcm_case(const secho_gcm_key *g, const uint8_t *key, size_t kl, size_t len,
                     size_t aad_len, int inplace)
{
	uint8_t iv[12], tag[16], rtag[16];
	size_t tl = t_randrange(0, 3) ? 16 : t_randrange(4, 16);
	t_randbytes(iv, 12);
	t_randbytes(aadb, aad_len);
	t_randbytes(src, len);
	T_CHECK(ref_evp_gcm_seal(key, kl, iv, 12, aadb, aad_len, ref, src, len, rtag),
	        "openssl gcm");
	uint8_t *o = inplace ? tmp : dst;
	if (inplace)
		memcpy(tmp, src, len);
	memset(o + len, 0xa5, SENT);
	memset(tag, 0xee, 16);
	int rc = G->seal96(g, iv, aadb, aad_len, o, inplace ? tmp : src, len, tag, tl);
	T_CHECK(rc == SECHO_OK, "seal rc %d", rc);
	T_CHECK(!memcmp(o, ref, len), "seal text kl %zu len %zu aad %zu inplace %d", kl, len,
	        aad_len, inplace);
	T_CHECK(!memcmp(tag, rtag, tl), "seal tag kl %zu len %zu aad %zu tl %zu", kl, len, aad_len,
	        tl);
	for (size_t i = tl; i < 16; i++)
		T_CHECK(tag[i] == 0xee, "tag written past tag_len %zu", tl);
	T_CHECK(ref_sentinel_ok(o + len, SENT), "seal sentinel len %zu", len);

	/* open: good tag -> plaintext; in place when asked */
	uint8_t *p = inplace ? tmp : dst;
	const uint8_t *c = inplace ? tmp : ref;
	memset(p + len, 0xa5, SENT);
	rc = G->open96(g, iv, aadb, aad_len, p, c, len, rtag, tl);
	T_CHECK(rc == SECHO_OK, "open rc %d len %zu aad %zu", rc, len, aad_len);
	T_CHECK(!memcmp(p, src, len), "open text len %zu", len);
	T_CHECK(ref_sentinel_ok(p + len, SENT), "open sentinel");

	/* tamper one bit of the tag (or of the text/AAD) -> EAUTH and zeroed output */
	uint8_t bad[16];
	memcpy(bad, rtag, 16);
	int what = (int)t_randrange(0, 2);
	if (what == 1 && len)
		ref[t_randrange(0, len - 1)] ^= (uint8_t)(1u << t_randrange(0, 7));
	else if (what == 2 && aad_len)
		aadb[t_randrange(0, aad_len - 1)] ^= 0x01;
	else
		bad[t_randrange(0, tl - 1)] ^= (uint8_t)(1u << t_randrange(0, 7));
	memset(dst, 0x5a, len);
	memset(dst + len, 0xa5, SENT);
	rc = G->open96(g, iv, aadb, aad_len, dst, ref, len, bad, tl);
	T_CHECK(rc == SECHO_EAUTH, "tampered open rc %d len %zu what %d", rc, len, what);
	int zero = 1;
	for (size_t i = 0; i < len; i++)
		zero &= dst[i] == 0;
	T_CHECK(zero, "tampered output zeroed len %zu", len);
	T_CHECK(ref_sentinel_ok(dst + len, SENT), "tampered sentinel");
}

static void test_seal96(void)
{
	t_begin("%s seal96/open96 vs openssl (len 0..1024, random to 64 KiB, AAD 0..64)", G->name);
	for (int ki = 0; ki < 3; ki++) {
		uint8_t key[32];
		secho_gcm_key g;
		t_randbytes(key, sizeof(key));
		ref_mk_gcm(&g, G, key, key_lens[ki]);
		size_t step = quick ? 7 : 1;
		for (size_t len = 0; len <= 1024; len += step)
			gcm_case(&g, key, key_lens[ki], len, t_randrange(0, 64), (int)(len & 1));
		for (size_t aad = 0; aad <= 64; aad++)
			gcm_case(&g, key, key_lens[ki], t_randrange(0, 100), aad, (int)(aad & 1));
		int nrand = quick ? 10 : 60;
		for (int i = 0; i < nrand; i++)
			gcm_case(&g, key, key_lens[ki], t_randrange(0, MAXMSG),
			         t_randrange(0, 8) ? t_randrange(0, 64) : t_randrange(65, 128),
			         i & 1);
	}
	t_end();
}

/*
 * vaes-split cuts AES-256 messages into groups and GHASH windows by length (make_plan()
 * in gcm_vaes_split.c): every length 1025..2112 (one to three windows, the last group in
 * the last window or not, the AAD in the first window or hashed apart) and every 61st up
 * to 17 KiB, with AAD lengths that move the AAD in and out of the windows.
 */
static void test_split_plans(void)
{
	t_begin("%s seal96/open96 vs openssl, AES-256 (len 1025..2112, every 61st to 17 KiB, "
	        "AAD 0..80)",
	        G->name);
	static const size_t aads[] = {0, 1, 16, 17, 64, 65, 80};
	uint8_t key[32];
	secho_gcm_key g;
	t_randbytes(key, sizeof(key));
	ref_mk_gcm(&g, G, key, 32);
	size_t step = quick ? 5 : 1, i = 0;
	for (size_t len = 1025; len <= 2112; len += step, i++)
		gcm_case(&g, key, 32, len, aads[i % 7], (int)(len & 1));
	for (size_t len = 2113; len <= 17 * 1024; len += quick ? 305 : 61, i++)
		gcm_case(&g, key, 32, len, aads[i % 7], (int)(len & 1));
	t_end();
}

/* Every test above for the tables of one implementation (vaes or vaes-split: the same
 * instructions, scheduled for different cores; both run on any CPU with them). */
static void run_impl(secho_impl_id id)
{
	G = secho_gcm_impl_get(id);
	A = secho_aes_impl_get(id);
	const char *names[] = {"ecb",   "ctr128",          "cbc",           "cfb",
	                       "ghash", "ctr32 and fused", "seal96/open96", "plans (split)"};
	if (!G || !A) {
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			if (i == 7 && id != SECHO_IMPL_VAES_SPLIT)
				continue; /* that one is vaes-split's only */
			t_begin("%s %s", secho_impl_name(id), names[i]);
			t_impl_unavailable(secho_impl_name(id));
		}
		return;
	}
	test_ecb();
	test_ctr128();
	test_chain('c');
	test_chain('f');
	test_ghash();
	test_ctr32_fused();
	test_seal96();
	if (id == SECHO_IMPL_VAES_SPLIT)
		test_split_plans();
}

int main(void)
{
	t_seed_init("test_vaes");
	const char *qe = getenv("SECHO_TEST_QUICK");
	quick = qe && atoi(qe);
	memset(src, 0, sizeof(src));
	run_impl(SECHO_IMPL_VAES);
	run_impl(SECHO_IMPL_VAES_SPLIT);
	return t_exit();
}
