/*
 * tests/unit/test_aes_block.c - AES block cipher and the implementation-table entries, for
 * every implementation (portable, aesni, vaes).
 *
 * Per implementation:
 *  - FIPS-197 Appendix C.1/C.2/C.3 (AES-128/192/256) encrypt and decrypt;
 *  - ecb_enc/ecb_dec for every nblocks 0..40 against the single-block functions, in place
 *    and out of place, with guard bytes around the output;
 *  - random keys (16/24/32 bytes) and blocks against OpenSSL EVP aes-*-ecb;
 *  - the optional table entries it provides: ctr128 (against a reference built from
 *    single blocks and against OpenSSL aes-*-ctr, counters crossing 2^64 and 2^128),
 *    cbc_dec and cfb_dec (against OpenSSL, split into calls), and the GCM table's ctr32
 *    (wrap modulo 2^32 leaving bytes 0..11 alone), ghash (against a bit-by-bit multiply
 *    from SP 800-38D Algorithm 1) and hinit/ghash/ctr32 composed into AES-GCM against
 *    OpenSSL;
 * and once: secho_aes_key_init argument errors and secho_aes_key_wipe.
 */
#include "crypto/inner.h"
#include "cryptoref.h"
#include "harness.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static int quick;

/* Scale a random-case count down for SECHO_TEST_QUICK=1 (never to zero). */
static unsigned reps(unsigned n)
{
	return quick ? (n / 10 ? n / 10 : 1) : n;
}

static void hex_or_die(const char *hex, uint8_t *out, size_t len)
{
	if (t_unhex(hex, out, len) != (long)len) {
		fprintf(stderr, "bad hex constant %s\n", hex);
		exit(2);
	}
}

/* ---- OpenSSL references ---- */

/* ---- GF(2^128) reference: SP 800-38D 6.3 Algorithm 1, bit by bit ---- */

/* ---- FIPS-197 Appendix C ---- */

static void test_fips197(secho_impl_id id)
{
	static const struct {
		const char *key, *ct;
	} v[] = {
	        {"000102030405060708090a0b0c0d0e0f", "69c4e0d86a7b0430d8cdb78070b4c55a"},
	        {"000102030405060708090a0b0c0d0e0f1011121314151617",
	         "dda97ca4864cdfe06eaf70a0ec0d7191"},
	        {"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
	         "8ea2b7ca516745bfeafc49904b496089"},
	};
	uint8_t pt[16], key[32], ct[16], out[16];
	hex_or_die("00112233445566778899aabbccddeeff", pt, 16);
	t_begin("aes fips197 C.1-C.3 %s", secho_impl_name(id));
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		size_t kl = strlen(v[i].key) / 2;
		secho_aes_key k;
		hex_or_die(v[i].key, key, kl);
		hex_or_die(v[i].ct, ct, 16);
		int rc = secho_aes_key_init(&k, key, kl, id);
		T_CHECK(rc == SECHO_OK, "key init %zu: %d", kl, rc);
		if (rc != SECHO_OK)
			continue;
		T_CHECK(secho_aes_key_impl(&k) == id, "key impl %d", (int)secho_aes_key_impl(&k));
		T_CHECK(k.rounds == kl / 4 + 6, "rounds %u", k.rounds);
		memset(out, 0, 16);
		T_CHECK(secho_aes_encrypt_block(&k, out, pt) == SECHO_OK, "encrypt rc");
		T_CHECK(memcmp(out, ct, 16) == 0, "AES-%zu encrypt mismatch", kl * 8);
		memset(out, 0, 16);
		T_CHECK(secho_aes_decrypt_block(&k, out, ct) == SECHO_OK, "decrypt rc");
		T_CHECK(memcmp(out, pt, 16) == 0, "AES-%zu decrypt mismatch", kl * 8);
		/* in place */
		memcpy(out, pt, 16);
		secho_aes_encrypt_block(&k, out, out);
		T_CHECK(memcmp(out, ct, 16) == 0, "AES-%zu in-place encrypt", kl * 8);
		secho_aes_decrypt_block(&k, out, out);
		T_CHECK(memcmp(out, pt, 16) == 0, "AES-%zu in-place decrypt", kl * 8);
		secho_aes_key_wipe(&k);
	}
	t_end();
}

/* ---- ecb_enc / ecb_dec, every nblocks 0..40 ---- */

#define MAXB  40
#define GUARD 32

static void test_ecb_counts(secho_impl_id id, const struct secho_aes_impl *a)
{
	static const size_t kls[3] = {16, 24, 32};
	uint8_t key[32], in[MAXB * 16], exp[MAXB * 16], dec[MAXB * 16];
	uint8_t obuf[MAXB * 16 + 2 * GUARD];
	t_begin("aes ecb nblocks 0..40 %s", secho_impl_name(id));
	for (size_t ki = 0; ki < 3; ki++) {
		secho_aes_key k;
		t_randbytes(key, kls[ki]);
		if (secho_aes_key_init(&k, key, kls[ki], id) != SECHO_OK) {
			T_CHECK(0, "key init failed");
			continue;
		}
		for (size_t n = 0; n <= MAXB; n++) {
			t_randbytes(in, n * 16);
			for (size_t b = 0; b < n; b++) {
				secho_aes_encrypt_block(&k, exp + 16 * b, in + 16 * b);
				secho_aes_decrypt_block(&k, dec + 16 * b, in + 16 * b);
			}
			/* out of place, guards intact */
			memset(obuf, 0xA5, sizeof(obuf));
			a->ecb_enc(&k, obuf + GUARD, in, n);
			T_CHECK(memcmp(obuf + GUARD, exp, n * 16) == 0, "k%zu ecb_enc n=%zu",
			        kls[ki], n);
			int guards = 1;
			for (size_t i = 0; i < GUARD; i++)
				guards &= obuf[i] == 0xA5 && obuf[GUARD + n * 16 + i] == 0xA5;
			T_CHECK(guards, "k%zu ecb_enc n=%zu wrote outside the output", kls[ki], n);
			memset(obuf, 0xA5, sizeof(obuf));
			a->ecb_dec(&k, obuf + GUARD, in, n);
			T_CHECK(memcmp(obuf + GUARD, dec, n * 16) == 0, "k%zu ecb_dec n=%zu",
			        kls[ki], n);
			guards = 1;
			for (size_t i = 0; i < GUARD; i++)
				guards &= obuf[i] == 0xA5 && obuf[GUARD + n * 16 + i] == 0xA5;
			T_CHECK(guards, "k%zu ecb_dec n=%zu wrote outside the output", kls[ki], n);
			/* in place, and the round trip */
			memcpy(obuf, in, n * 16);
			a->ecb_enc(&k, obuf, obuf, n);
			T_CHECK(memcmp(obuf, exp, n * 16) == 0, "k%zu ecb_enc in place n=%zu",
			        kls[ki], n);
			a->ecb_dec(&k, obuf, obuf, n);
			T_CHECK(memcmp(obuf, in, n * 16) == 0, "k%zu ecb round trip n=%zu", kls[ki],
			        n);
		}
		secho_aes_key_wipe(&k);
	}
	t_end();
}

/* ---- random keys and blocks against OpenSSL ---- */

static void test_ecb_openssl(secho_impl_id id, const struct secho_aes_impl *a)
{
	static const size_t kls[3] = {16, 24, 32};
	uint8_t key[32], in[8 * 16], ours[8 * 16], ref[8 * 16];
	t_begin("aes ecb random vs openssl %s", secho_impl_name(id));
	for (size_t ki = 0; ki < 3; ki++) {
		unsigned nkeys = reps(2000);
		for (unsigned r = 0; r < nkeys; r++) {
			secho_aes_key k;
			size_t n = t_randrange(1, 8); /* 4.5 blocks per key on average */
			t_randbytes(key, kls[ki]);
			t_randbytes(in, n * 16);
			if (secho_aes_key_init(&k, key, kls[ki], id) != SECHO_OK) {
				T_CHECK(0, "key init failed");
				continue;
			}
			a->ecb_enc(&k, ours, in, n);
			int rc = ref_evp('e', key, kls[ki], NULL, 1, ref, in, n * 16) ? 0 : -1;
			T_CHECK(rc == 0 && memcmp(ours, ref, n * 16) == 0,
			        "k%zu encrypt case %u (n=%zu) differs from OpenSSL", kls[ki], r, n);
			a->ecb_dec(&k, ours, in, n);
			rc = ref_evp('e', key, kls[ki], NULL, 0, ref, in, n * 16) ? 0 : -1;
			T_CHECK(rc == 0 && memcmp(ours, ref, n * 16) == 0,
			        "k%zu decrypt case %u (n=%zu) differs from OpenSSL", kls[ki], r, n);
			secho_aes_key_wipe(&k);
		}
	}
	t_end();
}

/* ---- ctr128 ---- */

/* Reference CTR from single blocks and secho_inc128 ... and an independent increment. */
static void inc128_ref(uint8_t c[16])
{
	unsigned carry = 1;
	for (int i = 15; i >= 0; i--) {
		unsigned v = c[i] + carry;
		c[i] = (uint8_t)v;
		carry = v >> 8;
	}
}

static void test_ctr128(secho_impl_id id, const struct secho_aes_impl *a)
{
	t_begin("aes ctr128 entry %s", secho_impl_name(id));
	if (!a->ctr128) {
		t_unavailable("%s has no ctr128 entry (the generic code composes it)",
		              secho_impl_name(id));
		return;
	}
	/* Starting counters: low word just below 2^64, whole counter just below 2^128. */
	static const char *const starts[] = {
	        "000102030405060708090a0b0c0d0e0f", "0102030405060708fffffffffffffffd",
	        "00000000000000fffffffffffffffffe", "fffffffffffffffffffffffffffffffd",
	        "ffffffffffffffffffffffffffffffff", "0000000000000000000000000000fffe",
	        "ffffffffffffffff0000000000000000",
	};
	static const size_t kls[3] = {16, 24, 32};
	uint8_t key[32], in[MAXB * 16], ours[MAXB * 16], ref[MAXB * 16], ossl[MAXB * 16];
	for (size_t s = 0; s < sizeof(starts) / sizeof(starts[0]); s++) {
		for (size_t ki = 0; ki < 3; ki++) {
			secho_aes_key k;
			uint8_t c0[16], c[16], cr[16];
			hex_or_die(starts[s], c0, 16);
			t_randbytes(key, kls[ki]);
			if (secho_aes_key_init(&k, key, kls[ki], id) != SECHO_OK) {
				T_CHECK(0, "key init failed");
				continue;
			}
			for (size_t n = 0; n <= 20; n++) {
				t_randbytes(in, n * 16);
				memcpy(cr, c0, 16);
				for (size_t b = 0; b < n; b++) {
					uint8_t ks[16];
					secho_aes_encrypt_block(&k, ks, cr);
					secho_xor16(ref + 16 * b, in + 16 * b, ks);
					inc128_ref(cr);
				}
				memcpy(c, c0, 16);
				a->ctr128(&k, c, ours, in, n);
				T_CHECK(memcmp(ours, ref, n * 16) == 0,
				        "start %zu k%zu n=%zu output", s, kls[ki], n);
				T_CHECK(memcmp(c, cr, 16) == 0,
				        "start %zu k%zu n=%zu counter after", s, kls[ki], n);
				int rc = ref_evp('t', key, kls[ki], c0, 1, ossl, in, n * 16) ? 0
				                                                             : -1;
				T_CHECK(rc == 0 && memcmp(ours, ossl, n * 16) == 0,
				        "start %zu k%zu n=%zu differs from OpenSSL", s, kls[ki], n);
				/* in place, in two calls */
				size_t n1 = n / 3;
				memcpy(ours, in, n * 16);
				memcpy(c, c0, 16);
				a->ctr128(&k, c, ours, ours, n1);
				a->ctr128(&k, c, ours + 16 * n1, ours + 16 * n1, n - n1);
				T_CHECK(memcmp(ours, ref, n * 16) == 0 && memcmp(c, cr, 16) == 0,
				        "start %zu k%zu n=%zu in place split %zu", s, kls[ki], n,
				        n1);
			}
			secho_aes_key_wipe(&k);
		}
	}
	t_end();
}

/* ---- cbc_dec and cfb_dec against OpenSSL, in one call and split ---- */

typedef void (*chain_fn)(const secho_aes_key *k, uint8_t iv[16], uint8_t *out, const uint8_t *in,
                         size_t nblocks);

static void test_chain_dec(secho_impl_id id, const char *what, chain_fn fn, char mode)
{
	t_begin("aes %s entry %s", what, secho_impl_name(id));
	if (!fn) {
		t_unavailable("%s has no %s entry (the generic code composes it)",
		              secho_impl_name(id), what);
		return;
	}
	static const size_t kls[3] = {16, 24, 32};
	uint8_t key[32], iv0[16], in[MAXB * 16], ours[MAXB * 16], ref[MAXB * 16];
	for (size_t ki = 0; ki < 3; ki++) {
		unsigned rounds = reps(60);
		for (unsigned r = 0; r < rounds; r++) {
			secho_aes_key k;
			uint8_t iv[16];
			size_t n = r <= MAXB ? r : t_randrange(0, MAXB);
			t_randbytes(key, kls[ki]);
			t_randbytes(iv0, 16);
			t_randbytes(in, n * 16);
			if (secho_aes_key_init(&k, key, kls[ki], id) != SECHO_OK) {
				T_CHECK(0, "key init failed");
				continue;
			}
			int rc = ref_evp(mode, key, kls[ki], iv0, 0, ref, in, n * 16) ? 0 : -1;
			memcpy(iv, iv0, 16);
			fn(&k, iv, ours, in, n);
			T_CHECK(rc == 0 && memcmp(ours, ref, n * 16) == 0,
			        "k%zu n=%zu differs from OpenSSL", kls[ki], n);
			const uint8_t *want_iv = n ? in + 16 * (n - 1) : iv0;
			T_CHECK(memcmp(iv, want_iv, 16) == 0,
			        "k%zu n=%zu iv not advanced to last C", kls[ki], n);
			/* in place, split at a random point */
			size_t n1 = t_randrange(0, n);
			memcpy(ours, in, n * 16);
			memcpy(iv, iv0, 16);
			fn(&k, iv, ours, ours, n1);
			fn(&k, iv, ours + 16 * n1, ours + 16 * n1, n - n1);
			T_CHECK(memcmp(ours, ref, n * 16) == 0 && memcmp(iv, want_iv, 16) == 0,
			        "k%zu n=%zu in place split %zu", kls[ki], n, n1);
			secho_aes_key_wipe(&k);
		}
	}
	t_end();
}

/* ---- GCM table: ctr32, ghash, composed GCM ---- */

/* Set up a GCM key by hand through the table (independent of gcm.c). */
static int gcm_key_setup(secho_gcm_key *gk, const struct secho_gcm_impl *g, secho_impl_id id,
                         const uint8_t *key, size_t kl)
{
	memset(gk, 0, sizeof(*gk));
	if (secho_aes_key_init(&gk->aes, key, kl, id) != SECHO_OK)
		return -1;
	gk->impl = g;
	g->hinit(gk);
	return 0;
}

static void test_ctr32(secho_impl_id id, const struct secho_gcm_impl *g)
{
	static const char *const starts[] = {
	        "000102030405060708090aff00000001", "cafebabefacedbaddecaf8ffffffffff",
	        "ffffffffffffffffffffffffffffffff", "000000000000000000000000fffffff0",
	        "0102030405060708090a0bfffffffffd",
	};
	uint8_t key[32], in[MAXB * 16], ours[MAXB * 16], ref[MAXB * 16];
	t_begin("gcm ctr32 entry %s", secho_impl_name(id));
	for (size_t s = 0; s < sizeof(starts) / sizeof(starts[0]); s++) {
		for (size_t kl = 16; kl <= 32; kl += 8) {
			secho_aes_key k;
			uint8_t c0[16], c[16], cr[16];
			hex_or_die(starts[s], c0, 16);
			t_randbytes(key, kl);
			if (secho_aes_key_init(&k, key, kl, id) != SECHO_OK) {
				T_CHECK(0, "key init failed");
				continue;
			}
			for (size_t n = 0; n <= 24; n++) {
				t_randbytes(in, n * 16);
				memcpy(cr, c0, 16);
				for (size_t b = 0; b < n; b++) {
					uint8_t ks[16];
					secho_aes_encrypt_block(&k, ks, cr);
					secho_xor16(ref + 16 * b, in + 16 * b, ks);
					/* inc32 by hand: bytes 12..15 only */
					for (int i = 15; i >= 12; i--)
						if (++cr[i] != 0)
							break;
				}
				memcpy(c, c0, 16);
				g->ctr32(&k, c, ours, in, n);
				T_CHECK(memcmp(ours, ref, n * 16) == 0,
				        "start %zu k%zu n=%zu output", s, kl, n);
				T_CHECK(memcmp(c, cr, 16) == 0,
				        "start %zu k%zu n=%zu counter after", s, kl, n);
				T_CHECK(memcmp(c, c0, 12) == 0,
				        "start %zu k%zu n=%zu bytes 0..11 moved", s, kl, n);
				size_t n1 = t_randrange(0, n);
				memcpy(ours, in, n * 16);
				memcpy(c, c0, 16);
				g->ctr32(&k, c, ours, ours, n1);
				g->ctr32(&k, c, ours + 16 * n1, ours + 16 * n1, n - n1);
				T_CHECK(memcmp(ours, ref, n * 16) == 0 && memcmp(c, cr, 16) == 0,
				        "start %zu k%zu n=%zu in place split %zu", s, kl, n, n1);
			}
			secho_aes_key_wipe(&k);
		}
	}
	t_end();
}

static void test_ghash(secho_impl_id id, const struct secho_gcm_impl *g)
{
	uint8_t key[32], h[16], zero[16] = {0}, in[MAXB * 16];
	t_begin("gcm ghash entry vs bit-by-bit %s", secho_impl_name(id));
	unsigned nkeys = reps(40);
	for (unsigned r = 0; r < nkeys; r++) {
		secho_gcm_key gk;
		size_t kl = 16 + 8 * (r % 3);
		t_randbytes(key, kl);
		if (gcm_key_setup(&gk, g, id, key, kl) != 0) {
			T_CHECK(0, "key setup failed");
			continue;
		}
		secho_aes_encrypt_block(&gk.aes, h, zero); /* H = E_K(0^128) */
		for (unsigned t = 0; t < 12; t++) {
			uint8_t y[16], yr[16];
			size_t n = t_randrange(0, 20);
			t_randbytes(y, 16);
			t_randbytes(in, n * 16);
			if (t == 0) { /* sparse and dense edge patterns */
				memset(y, 0xFF, 16);
				memset(in, 0xFF, n * 16);
			} else if (t == 1) {
				memset(y, 0, 16);
				for (size_t i = 0; i < n * 16; i++)
					in[i] = (i % 16 == 15) ? 1 : (i % 16 == 0 ? 0x80 : 0);
			}
			memcpy(yr, y, 16);
			ref_ghash(h, yr, in, n);
			g->ghash(&gk, y, in, n);
			T_CHECK(memcmp(y, yr, 16) == 0, "key %u case %u n=%zu", r, t, n);
			/* split: same result in two calls */
			size_t n1 = t_randrange(0, n);
			uint8_t y2[16];
			t_randbytes(y2, 16);
			memcpy(yr, y2, 16);
			ref_ghash(h, yr, in, n);
			g->ghash(&gk, y2, in, n1);
			g->ghash(&gk, y2, in + 16 * n1, n - n1);
			T_CHECK(memcmp(y2, yr, 16) == 0, "key %u case %u n=%zu split %zu", r, t, n,
			        n1);
		}
		secho_wipe(&gk, sizeof(gk));
	}
	/* Single products: GHASH of one block X from y = 0 is X * H. */
	unsigned nprod = reps(2000);
	secho_gcm_key gk;
	for (unsigned r = 0; r < nprod; r++) {
		uint8_t x[16], y[16] = {0}, yr[16];
		if (r % 100 == 0) {
			t_randbytes(key, 16);
			if (gcm_key_setup(&gk, g, id, key, 16) != 0) {
				T_CHECK(0, "key setup failed");
				return;
			}
			secho_aes_encrypt_block(&gk.aes, h, zero);
		}
		t_randbytes(x, 16);
		if (r % 7 == 0) /* a single set bit, walks every position */
			for (int i = 0; i < 16; i++)
				x[i] = (r / 7) % 128 / 8 == (unsigned)i
				               ? (uint8_t)(0x80 >> ((r / 7) % 8))
				               : 0;
		ref_gf_mul(yr, x, h);
		g->ghash(&gk, y, x, 1);
		T_CHECK(memcmp(y, yr, 16) == 0, "product %u", r);
	}
	secho_wipe(&gk, sizeof(gk));
	t_end();
}

/* GCM from the table entries (12-byte IV): J0 = IV || 0^31 || 1, C = GCTR(inc32(J0), P),
 * S = GHASH(A || 0 || C || 0 || len64(A) || len64(C)), T = E(J0) ^ S. */
static void gcm_compose(const secho_gcm_key *gk, const struct secho_gcm_impl *g,
                        const uint8_t iv[12], const uint8_t *aad, size_t aad_len, uint8_t *out,
                        const uint8_t *in, size_t len, uint8_t tag[16])
{
	uint8_t j0[16], ctr[16], y[16] = {0}, blk[16], ks[16];
	memcpy(j0, iv, 12);
	secho_store_be32(j0 + 12, 1);
	memcpy(ctr, j0, 16);
	secho_inc32(ctr);
	size_t full = len / 16, rem = len % 16;
	g->ctr32(&gk->aes, ctr, out, in, full);
	if (rem) {
		memset(blk, 0, 16);
		memcpy(blk, in + 16 * full, rem);
		g->ctr32(&gk->aes, ctr, blk, blk, 1);
		memcpy(out + 16 * full, blk, rem);
	}
	g->ghash(gk, y, aad, aad_len / 16);
	if (aad_len % 16) {
		memset(blk, 0, 16);
		memcpy(blk, aad + aad_len / 16 * 16, aad_len % 16);
		g->ghash(gk, y, blk, 1);
	}
	g->ghash(gk, y, out, full);
	if (rem) {
		memset(blk, 0, 16);
		memcpy(blk, out + 16 * full, rem);
		g->ghash(gk, y, blk, 1);
	}
	secho_store_be64(blk, (uint64_t)aad_len * 8);
	secho_store_be64(blk + 8, (uint64_t)len * 8);
	g->ghash(gk, y, blk, 1);
	secho_aes_encrypt_block(&gk->aes, ks, j0);
	secho_xor16(tag, ks, y);
}

static void test_gcm_compose(secho_impl_id id, const struct secho_gcm_impl *g)
{
	enum { MAXT = 300, MAXA = 70 };
	uint8_t key[32], iv[12], aad[MAXA], in[MAXT], ours[MAXT], ref[MAXT + 16];
	uint8_t tag[16], rtag[16];
	t_begin("gcm hinit+ghash+ctr32 vs openssl aes-gcm %s", secho_impl_name(id));

	/* Known answer: the GCM specification's test case 2 (K = 0^128, IV = 0^96,
	 * P = 0^128). */
	{
		secho_gcm_key gk;
		uint8_t c2[16], t2[16];
		memset(key, 0, 16);
		memset(iv, 0, 12);
		memset(in, 0, 16);
		hex_or_die("0388dace60b6a392f328c2b971b2fe78", c2, 16);
		hex_or_die("ab6e47d42cec13bdf53a67b21257bddf", t2, 16);
		if (gcm_key_setup(&gk, g, id, key, 16) == 0) {
			gcm_compose(&gk, g, iv, NULL, 0, ours, in, 16, tag);
			T_CHECK(memcmp(ours, c2, 16) == 0, "test case 2 ciphertext");
			T_CHECK(memcmp(tag, t2, 16) == 0, "test case 2 tag");
		} else {
			T_CHECK(0, "key setup failed");
		}
		secho_wipe(&gk, sizeof(gk));
	}
	unsigned n = reps(300);
	for (unsigned r = 0; r < n; r++) {
		secho_gcm_key gk;
		size_t kl = 16 + 8 * (r % 3);
		size_t len = t_randrange(0, MAXT), aad_len = t_randrange(0, MAXA);
		t_randbytes(key, kl);
		t_randbytes(iv, 12);
		t_randbytes(aad, aad_len);
		t_randbytes(in, len);
		if (gcm_key_setup(&gk, g, id, key, kl) != 0) {
			T_CHECK(0, "key setup failed");
			continue;
		}
		gcm_compose(&gk, g, iv, aad, aad_len, ours, in, len, tag);
		int rc = ref_evp_gcm_seal(key, kl, iv, 12, aad, aad_len, ref, in, len, rtag) ? 0
		                                                                             : -1;
		T_CHECK(rc == 0 && memcmp(ours, ref, len) == 0 && memcmp(tag, rtag, 16) == 0,
		        "case %u k%zu len %zu aad %zu differs from OpenSSL", r, kl, len, aad_len);
		secho_wipe(&gk, sizeof(gk));
	}
	t_end();
}

/* ---- key API ---- */

static void test_key_api(void)
{
	static const size_t bad_lens[] = {0, 1, 8, 15, 17, 20, 23, 25, 31, 33, 48, 64};
	uint8_t key[64];
	secho_aes_key k;
	t_randbytes(key, sizeof(key));
	t_begin("aes key init errors and wipe");
	for (size_t i = 0; i < sizeof(bad_lens) / sizeof(bad_lens[0]); i++)
		T_CHECK(secho_aes_key_init(&k, key, bad_lens[i], SECHO_IMPL_AUTO) == SECHO_EINVAL,
		        "key_len %zu accepted", bad_lens[i]);
	T_CHECK(secho_aes_key_init(NULL, key, 16, SECHO_IMPL_AUTO) == SECHO_EINVAL, "NULL key");
	T_CHECK(secho_aes_key_init(&k, NULL, 16, SECHO_IMPL_AUTO) == SECHO_EINVAL,
	        "NULL key bytes");
	T_CHECK(secho_aes_key_init(&k, key, 16, SECHO_IMPL_COUNT) == SECHO_EINVAL,
	        "impl id out of range");
	T_CHECK(secho_aes_key_init(&k, key, 16, (secho_impl_id)99) == SECHO_EINVAL, "impl id 99");
	for (int id = SECHO_IMPL_PORTABLE; id < SECHO_IMPL_COUNT; id++) {
		int rc = secho_aes_key_init(&k, key, 16, (secho_impl_id)id);
		if (secho_impl_available((secho_impl_id)id))
			T_CHECK(rc == SECHO_OK, "%s: init %d", secho_impl_name(id), rc);
		else
			T_CHECK(rc == SECHO_EUNAVAIL, "%s unavailable: init returned %d",
			        secho_impl_name(id), rc);
	}
	uint8_t blk[16] = {0};
	T_CHECK(secho_aes_key_init(&k, key, 32, SECHO_IMPL_PORTABLE) == SECHO_OK, "init");
	T_CHECK(secho_aes_encrypt_block(NULL, blk, blk) == SECHO_EINVAL, "encrypt NULL key");
	T_CHECK(secho_aes_encrypt_block(&k, NULL, blk) == SECHO_EINVAL, "encrypt NULL out");
	T_CHECK(secho_aes_decrypt_block(&k, blk, NULL) == SECHO_EINVAL, "decrypt NULL in");
	for (size_t kl = 16; kl <= 32; kl += 8) {
		for (int id = SECHO_IMPL_PORTABLE; id < SECHO_IMPL_COUNT; id++) {
			if (!secho_impl_available((secho_impl_id)id))
				continue;
			memset(&k, 0x5A, sizeof(k));
			T_CHECK(secho_aes_key_init(&k, key, kl, (secho_impl_id)id) == SECHO_OK,
			        "init");
			secho_aes_key_wipe(&k);
			const uint8_t *p = (const uint8_t *)&k;
			size_t nz = 0;
			for (size_t i = 0; i < sizeof(k); i++)
				nz += p[i] != 0;
			T_CHECK(nz == 0, "%s k%zu: %zu bytes non-zero after wipe",
			        secho_impl_name(id), kl, nz);
		}
	}
	/* Wiping NULL is a no-op: run it in a child, which must exit normally (a crash
	 * would end it with a signal). */
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		secho_aes_key_wipe(NULL);
		_exit(0);
	}
	int st = -1;
	bool waited = pid > 0 && waitpid(pid, &st, 0) == pid;
	T_CHECK(waited && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	        "secho_aes_key_wipe(NULL): child status %#x", (unsigned)st);
	t_end();
}

/* The library's codes never equal an -errno value, each has its own text, and each
 * converts to the -errno the header names; -errno values pass through unchanged. */
static void test_error_codes(void)
{
	static const struct {
		int code, err;
	} codes[] = {
	        {SECHO_EINVAL, -EINVAL},       {SECHO_ELEN, -EINVAL},   {SECHO_EAUTH, -EBADMSG},
	        {SECHO_EUNAVAIL, -EOPNOTSUPP}, {SECHO_ESTATE, -EPROTO}, {SECHO_ELIMIT, -EMSGSIZE},
	};
	const size_t n = sizeof(codes) / sizeof(codes[0]);
	t_begin("error codes apart from -errno, text and conversion");
	T_CHECK(secho_crypto_errno(SECHO_OK) == 0, "SECHO_OK converts to 0");
	for (size_t i = 0; i < n; i++) {
		T_CHECK(codes[i].code < -4095, "code %d is in errno's range (-1..-4095)",
		        codes[i].code);
		T_CHECK(strcmp(secho_strerror(codes[i].code), "not a crypto library code") != 0,
		        "code %d has no text", codes[i].code);
		T_CHECK(secho_crypto_errno(codes[i].code) == codes[i].err, "code %d -> %d, want %d",
		        codes[i].code, secho_crypto_errno(codes[i].code), codes[i].err);
		for (size_t j = 0; j < i; j++)
			T_CHECK(codes[i].code != codes[j].code, "codes %zu and %zu equal", i, j);
	}
	for (int e = 1; e < 4096; e++) {
		if (secho_crypto_errno(-e) != -e ||
		    strcmp(secho_strerror(-e), "not a crypto library code") != 0) {
			T_CHECK(0, "-errno %d taken for a crypto library code", -e);
			break;
		}
	}
	t_end();
}

int main(void)
{
	const char *q = getenv("SECHO_TEST_QUICK");
	quick = q && *q && strcmp(q, "0") != 0;
	t_seed_init("test_aes_block");

	/* The portable tables are always built: reference them directly so they link. */
	t_begin("portable tables registered");
	T_CHECK(secho_gcm_impl_get(SECHO_IMPL_PORTABLE) == &secho_gcm_ct64_impl,
	        "gcm table for portable");
	T_CHECK(secho_aes_impl_get(SECHO_IMPL_PORTABLE) == &secho_aes_ct64_impl,
	        "aes table for portable");
	T_CHECK(strcmp(secho_aes_ct64_impl.name, "portable") == 0 &&
	                secho_aes_ct64_impl.id == SECHO_IMPL_PORTABLE &&
	                secho_gcm_ct64_impl.id == SECHO_IMPL_PORTABLE,
	        "names and ids");
	t_end();

	for (int i = SECHO_IMPL_PORTABLE; i < SECHO_IMPL_COUNT; i++) {
		secho_impl_id id = (secho_impl_id)i;
		const struct secho_gcm_impl *g = secho_gcm_impl_get(id);
		const struct secho_aes_impl *a = secho_aes_impl_get(id);
		if (!secho_impl_available(id) || !g || !a) {
			t_begin("aes block %s", secho_impl_name(id));
			t_impl_unavailable(secho_impl_name(id));
			continue;
		}
		test_fips197(id);
		test_ecb_counts(id, a);
		test_ecb_openssl(id, a);
		test_ctr128(id, a);
		test_chain_dec(id, "cbc_dec", a->cbc_dec, 'c');
		test_chain_dec(id, "cfb_dec", a->cfb_dec, 'f');
		test_ctr32(id, g);
		test_ghash(id, g);
		test_gcm_compose(id, g);
	}
	test_key_api();
	test_error_codes();
	return t_exit();
}
