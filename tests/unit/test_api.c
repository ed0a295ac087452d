/*
 * tests/unit/test_api.c - the contract of the public crypto API (aes.h, modes.h, gcm.h)
 * beyond the known answers, for every implementation in turn:
 *   - canaries before and after every output buffer (data, IV, tag) of every mode and
 *     of GCM one-shot, streaming and batch, for lengths around block boundaries;
 *   - bad arguments return the documented error and write nothing: key lengths
 *     0/15/17/23/31/33, NULL key, IV length 0, NULL with a non-zero length (NULL with
 *     a zero length is accepted), block-mode lengths 1..15 and 17, tag_len 0..3 and 17,
 *     calls out of order, wiped or never-initialised keys and contexts, batch sizes,
 *     the GCM length limits;
 *   - open with a bad tag zeroes its output (96-bit and other IV lengths, in place too);
 *   - wipe functions leave zeros;
 *   - dispatch: the rule for the best implementation (read from CPUID here, apart from
 *     the library), secho_impl_force (an unavailable one: SECHO_EUNAVAIL), names, and the
 *     SECHO_IMPL environment variable, checked in child processes because it is read
 *     once per process.
 */
#include <cpuid.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "secho/gcm.h"
#include "secho/modes.h"

#define G      16   /* canary bytes on each side */
#define CAN    0x5a /* canary value */
#define BUFMAX 256

/* A guarded buffer: G canary bytes, n data bytes, G canary bytes. */
struct gbuf {
	uint8_t raw[G + BUFMAX + G];
	size_t n;
};

static uint8_t *gb_init(struct gbuf *b, size_t n)
{
	b->n = n;
	memset(b->raw, CAN, sizeof(b->raw));
	return b->raw + G;
}

/* Canaries intact (and, when untouched, the data too). */
static bool gb_ok(const struct gbuf *b, bool untouched)
{
	size_t end = untouched ? G + b->n + G : G;
	for (size_t i = 0; i < end; i++)
		if (b->raw[i] != CAN)
			return false;
	for (size_t i = G + b->n; i < 2 * G + b->n; i++)
		if (b->raw[i] != CAN)
			return false;
	return true;
}

static bool all_zero(const void *p, size_t n)
{
	const uint8_t *q = p;
	uint8_t acc = 0;
	for (size_t i = 0; i < n; i++)
		acc |= q[i];
	return acc == 0;
}

static const uint8_t key32[32] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16,
                                  17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31};
static uint8_t src[BUFMAX];

#define EXPECT(call, want, fmt, ...)                                                               \
	do {                                                                                       \
		int r_ = (call);                                                                   \
		T_CHECK(r_ == (want), "%s -> %d (%s), want %d: " fmt, #call, r_,                   \
		        secho_strerror(r_), (want), ##__VA_ARGS__);                                \
	} while (0)

/* ---- keys ---- */

static void test_keys(secho_impl_id id)
{
	secho_aes_key k;
	secho_gcm_key gk;
	static const size_t bad[] = {0, 1, 15, 17, 23, 25, 31, 33, 64};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&k, CAN, sizeof(k));
		EXPECT(secho_aes_key_init(&k, key32, bad[i], id), SECHO_EINVAL, "key_len %zu",
		       bad[i]);
		const uint8_t *kb = (const uint8_t *)&k;
		bool untouched = true;
		for (size_t j = 0; j < sizeof(k); j++)
			untouched &= kb[j] == CAN;
		T_CHECK(untouched, "aes key written on key_len %zu", bad[i]);
		memset(&gk, CAN, sizeof(gk));
		EXPECT(secho_gcm_key_init(&gk, key32, bad[i], id), SECHO_EINVAL, "gcm key_len %zu",
		       bad[i]);
		T_CHECK(((uint8_t *)&gk)[0] == CAN && ((uint8_t *)&gk)[sizeof(gk) - 1] == CAN,
		        "gcm key written on key_len %zu", bad[i]);
	}
	EXPECT(secho_aes_key_init(NULL, key32, 16, id), SECHO_EINVAL, "NULL key struct");
	EXPECT(secho_aes_key_init(&k, NULL, 16, id), SECHO_EINVAL, "NULL key bytes");
	EXPECT(secho_aes_key_init(&k, key32, 16, (secho_impl_id)99), SECHO_EINVAL, "impl 99");
	EXPECT(secho_aes_key_init(&k, key32, 16, SECHO_IMPL_COUNT), SECHO_EINVAL, "impl COUNT");
	EXPECT(secho_gcm_key_init(NULL, key32, 16, id), SECHO_EINVAL, "NULL gcm key struct");
	EXPECT(secho_gcm_key_init(&gk, NULL, 16, id), SECHO_EINVAL, "NULL gcm key bytes");
	EXPECT(secho_gcm_key_init(&gk, key32, 16, (secho_impl_id)99), SECHO_EINVAL, "impl 99");
	for (size_t kl = 16; kl <= 32; kl += 8) {
		EXPECT(secho_aes_key_init(&k, key32, kl, id), SECHO_OK, "key_len %zu", kl);
		T_CHECK(secho_aes_key_impl(&k) == id && k.key_len == kl && k.rounds == kl / 4 + 6,
		        "key_len %zu: impl %d rounds %u", kl, secho_aes_key_impl(&k), k.rounds);
		secho_aes_key_wipe(&k);
		T_CHECK(all_zero(&k, sizeof(k)), "aes key not zero after wipe");
		T_CHECK(secho_aes_key_impl(&k) == SECHO_IMPL_AUTO, "wiped key still has an impl");
		EXPECT(secho_gcm_key_init(&gk, key32, kl, id), SECHO_OK, "gcm key_len %zu", kl);
		T_CHECK(secho_gcm_key_impl(&gk) == id, "gcm key impl %d", secho_gcm_key_impl(&gk));
		secho_gcm_key_wipe(&gk);
		T_CHECK(all_zero(&gk, sizeof(gk)), "gcm key not zero after wipe");
	}
	secho_aes_key_wipe(NULL); /* must not crash */
	secho_gcm_key_wipe(NULL);
	T_CHECK(secho_aes_key_impl(NULL) == SECHO_IMPL_AUTO, "impl of NULL key");

	/* Wiped and never-initialised keys are refused. */
	uint8_t blk[16] = {0};
	memset(&k, 0, sizeof(k));
	EXPECT(secho_aes_encrypt_block(&k, blk, blk), SECHO_EINVAL, "zeroed key");
	EXPECT(secho_aes_decrypt_block(&k, blk, blk), SECHO_EINVAL, "zeroed key");
	EXPECT(secho_aes_encrypt_block(NULL, blk, blk), SECHO_EINVAL, "NULL key");
	EXPECT(secho_ecb_encrypt(&k, blk, blk, 16), SECHO_EINVAL, "zeroed key");
	uint8_t iv[16] = {0};
	EXPECT(secho_cbc_encrypt(&k, iv, blk, blk, 16), SECHO_EINVAL, "zeroed key");
	secho_stream s;
	EXPECT(secho_ctr_init(&s, &k, iv), SECHO_EINVAL, "zeroed key");
	memset(&gk, 0, sizeof(gk));
	uint8_t tag[16];
	EXPECT(secho_gcm_seal(&gk, iv, 12, NULL, 0, blk, blk, 16, tag, 16), SECHO_EINVAL,
	       "zeroed gcm key");
	EXPECT(secho_gcm_open(&gk, iv, 12, NULL, 0, blk, blk, 16, tag, 16), SECHO_EINVAL,
	       "zeroed gcm key");
	secho_gcm_ctx c;
	EXPECT(secho_gcm_init(&c, &gk, iv, 12), SECHO_EINVAL, "zeroed gcm key");
	EXPECT(secho_aes_key_init(&k, key32, 16, id), SECHO_OK, "");
	EXPECT(secho_aes_encrypt_block(&k, NULL, blk), SECHO_EINVAL, "NULL out");
	EXPECT(secho_aes_encrypt_block(&k, blk, NULL), SECHO_EINVAL, "NULL in");
	EXPECT(secho_aes_decrypt_block(&k, NULL, blk), SECHO_EINVAL, "NULL out");
	secho_aes_key_wipe(&k);
}

/* ---- block modes ---- */

typedef int (*blockfn)(const secho_aes_key *, uint8_t *, uint8_t *, const uint8_t *, size_t);
static int ecb_e(const secho_aes_key *k, uint8_t *iv, uint8_t *o, const uint8_t *i, size_t n)
{
	(void)iv;
	return secho_ecb_encrypt(k, o, i, n);
}
static int ecb_d(const secho_aes_key *k, uint8_t *iv, uint8_t *o, const uint8_t *i, size_t n)
{
	(void)iv;
	return secho_ecb_decrypt(k, o, i, n);
}
static const struct {
	const char *name;
	blockfn fn;
	bool iv;
} bmodes[] = {
        {"ecb_encrypt", ecb_e, false},
        {"ecb_decrypt", ecb_d, false},
        {"cbc_encrypt", secho_cbc_encrypt, true},
        {"cbc_decrypt", secho_cbc_decrypt, true},
        {"pcbc_encrypt", secho_pcbc_encrypt, true},
        {"pcbc_decrypt", secho_pcbc_decrypt, true},
};

static void test_block_modes(secho_impl_id id)
{
	secho_aes_key k;
	EXPECT(secho_aes_key_init(&k, key32, 32, id), SECHO_OK, "");
	for (size_t m = 0; m < sizeof(bmodes) / sizeof(bmodes[0]); m++) {
		const char *nm = bmodes[m].name;
		struct gbuf ob, ivb;
		/* partial blocks: ELEN, nothing written (output, IV) */
		for (size_t len = 1; len <= 17; len++) {
			if (len == 16)
				continue;
			uint8_t *o = gb_init(&ob, len);
			uint8_t *iv = gb_init(&ivb, 16);
			EXPECT(bmodes[m].fn(&k, iv, o, src, len), SECHO_ELEN, "%s len %zu", nm,
			       len);
			T_CHECK(gb_ok(&ob, true) && gb_ok(&ivb, true),
			        "%s len %zu: rejected call wrote output or IV", nm, len);
		}
		EXPECT(bmodes[m].fn(&k, ivb.raw + G, ob.raw + G, src, 33), SECHO_ELEN, "%s 33", nm);
		/* NULL with a non-zero length; NULL with zero length is fine */
		uint8_t *o = gb_init(&ob, 32);
		uint8_t *iv = gb_init(&ivb, 16);
		EXPECT(bmodes[m].fn(&k, iv, NULL, src, 32), SECHO_EINVAL, "%s NULL out", nm);
		EXPECT(bmodes[m].fn(&k, iv, o, NULL, 32), SECHO_EINVAL, "%s NULL in", nm);
		EXPECT(bmodes[m].fn(NULL, iv, o, src, 32), SECHO_EINVAL, "%s NULL key", nm);
		if (bmodes[m].iv)
			EXPECT(bmodes[m].fn(&k, NULL, o, src, 32), SECHO_EINVAL, "%s NULL iv", nm);
		T_CHECK(gb_ok(&ob, true) && gb_ok(&ivb, true), "%s: rejected call wrote", nm);
		EXPECT(bmodes[m].fn(&k, iv, NULL, NULL, 0), SECHO_OK, "%s NULL, 0", nm);
		T_CHECK(gb_ok(&ivb, true), "%s: zero-length call changed the IV", nm);
		/* canaries around output and IV for whole-block lengths */
		for (size_t len = 16; len <= 16 * 12; len += 16) {
			o = gb_init(&ob, len);
			iv = gb_init(&ivb, 16);
			EXPECT(bmodes[m].fn(&k, iv, o, src, len), SECHO_OK, "%s len %zu", nm, len);
			T_CHECK(gb_ok(&ob, false) && gb_ok(&ivb, false),
			        "%s len %zu: wrote outside its output or IV buffer", nm, len);
			/* in place */
			memcpy(o, src, len);
			EXPECT(bmodes[m].fn(&k, iv, o, o, len), SECHO_OK, "%s in place", nm);
			T_CHECK(gb_ok(&ob, false) && gb_ok(&ivb, false),
			        "%s len %zu in place: canary overwritten", nm, len);
		}
	}
	/* resumable: two block-aligned calls equal one call */
	uint8_t iv1[16] = {9}, iv2[16] = {9}, a[96], b[96];
	secho_cbc_encrypt(&k, iv1, a, src, 96);
	secho_cbc_encrypt(&k, iv2, b, src, 32);
	secho_cbc_encrypt(&k, iv2, b + 32, src + 32, 64);
	T_CHECK(!memcmp(a, b, 96) && !memcmp(iv1, iv2, 16), "CBC split != whole");
	memset(iv1, 7, 16);
	memset(iv2, 7, 16);
	secho_pcbc_encrypt(&k, iv1, a, src, 96);
	secho_pcbc_encrypt(&k, iv2, b, src, 48);
	secho_pcbc_encrypt(&k, iv2, b + 48, src + 48, 48);
	T_CHECK(!memcmp(a, b, 96) && !memcmp(iv1, iv2, 16), "PCBC split != whole");
	/* PCBC round trip, and the chaining value is P_n ^ C_n */
	memset(iv1, 3, 16);
	memset(iv2, 3, 16);
	secho_pcbc_encrypt(&k, iv1, a, src, 96);
	for (int i = 0; i < 16; i++)
		b[i] = (uint8_t)(src[80 + i] ^ a[80 + i]);
	T_CHECK(!memcmp(iv1, b, 16), "PCBC chaining value is not P_n ^ C_n");
	secho_pcbc_decrypt(&k, iv2, b, a, 96);
	T_CHECK(!memcmp(b, src, 96) && !memcmp(iv1, iv2, 16), "PCBC round trip");
	secho_aes_key_wipe(&k);
}

/* ---- stream modes ---- */

static int s_init(int m, secho_stream *s, const secho_aes_key *k, const uint8_t *iv)
{
	return m == 0   ? secho_ctr_init(s, k, iv)
	       : m == 1 ? secho_cfb_init(s, k, iv)
	                : secho_ofb_init(s, k, iv);
}
static int s_upd(int m, bool enc, secho_stream *s, uint8_t *o, const uint8_t *i, size_t n)
{
	if (m == 0)
		return secho_ctr_update(s, o, i, n);
	if (m == 2)
		return secho_ofb_update(s, o, i, n);
	return enc ? secho_cfb_encrypt(s, o, i, n) : secho_cfb_decrypt(s, o, i, n);
}

static void test_stream_modes(secho_impl_id id)
{
	static const char *const nm[] = {"CTR", "CFB", "OFB"};
	secho_aes_key k;
	secho_stream s;
	uint8_t iv[16] = {0xfe};
	EXPECT(secho_aes_key_init(&k, key32, 24, id), SECHO_OK, "");
	for (int m = 0; m < 3; m++) {
		struct gbuf ob;
		EXPECT(s_init(m, NULL, &k, iv), SECHO_EINVAL, "%s NULL ctx", nm[m]);
		EXPECT(s_init(m, &s, NULL, iv), SECHO_EINVAL, "%s NULL key", nm[m]);
		EXPECT(s_init(m, &s, &k, NULL), SECHO_EINVAL, "%s NULL iv", nm[m]);
		/* never initialised (zeroed) and wiped contexts */
		memset(&s, 0, sizeof(s));
		uint8_t *o = gb_init(&ob, 8);
		EXPECT(s_upd(m, true, &s, o, src, 8), SECHO_ESTATE, "%s zeroed ctx", nm[m]);
		EXPECT(s_init(m, &s, &k, iv), SECHO_OK, "%s", nm[m]);
		secho_stream_wipe(&s);
		T_CHECK(all_zero(&s, sizeof(s)), "%s: stream not zero after wipe", nm[m]);
		EXPECT(s_upd(m, true, &s, o, src, 8), SECHO_ESTATE, "%s wiped ctx", nm[m]);
		/* a context set up for another mode */
		EXPECT(s_init((m + 1) % 3, &s, &k, iv), SECHO_OK, "");
		EXPECT(s_upd(m, true, &s, o, src, 8), SECHO_ESTATE, "%s on a %s ctx", nm[m],
		       nm[(m + 1) % 3]);
		T_CHECK(gb_ok(&ob, true), "%s: rejected call wrote", nm[m]);
		/* NULL data */
		EXPECT(s_init(m, &s, &k, iv), SECHO_OK, "");
		EXPECT(s_upd(m, true, NULL, o, src, 8), SECHO_EINVAL, "%s NULL ctx", nm[m]);
		EXPECT(s_upd(m, true, &s, NULL, src, 8), SECHO_EINVAL, "%s NULL out", nm[m]);
		EXPECT(s_upd(m, false, &s, o, NULL, 8), SECHO_EINVAL, "%s NULL in", nm[m]);
		EXPECT(s_upd(m, true, &s, NULL, NULL, 0), SECHO_OK, "%s NULL, 0", nm[m]);
		T_CHECK(gb_ok(&ob, true), "%s: rejected call wrote", nm[m]);
		/* the rejected calls left the position alone: same bytes as a fresh context */
		{
			secho_stream f;
			uint8_t a[8], b[8];
			EXPECT(s_upd(m, true, &s, a, src, 8), SECHO_OK, "");
			EXPECT(s_init(m, &f, &k, iv), SECHO_OK, "");
			EXPECT(s_upd(m, true, &f, b, src, 8), SECHO_OK, "");
			T_CHECK(!memcmp(a, b, 8), "%s: rejected calls moved the stream", nm[m]);
			secho_stream_wipe(&f);
		}
		/* secho_stream_get_iv: argument and state checks write nothing */
		{
			uint8_t g[18];
			unsigned num = 99;
			memset(g, 0xa5, sizeof(g));
			EXPECT(secho_stream_get_iv(NULL, g + 1, &num), SECHO_EINVAL,
			       "%s get_iv NULL ctx", nm[m]);
			EXPECT(secho_stream_get_iv(&s, NULL, &num), SECHO_EINVAL,
			       "%s get_iv NULL iv", nm[m]);
			secho_stream z;
			memset(&z, 0, sizeof(z));
			EXPECT(secho_stream_get_iv(&z, g + 1, &num), SECHO_ESTATE,
			       "%s get_iv zeroed ctx", nm[m]);
			T_CHECK(g[0] == 0xa5 && g[1] == 0xa5 && g[16] == 0xa5 && g[17] == 0xa5 &&
			                num == 99,
			        "%s: rejected get_iv wrote", nm[m]);
			EXPECT(secho_stream_get_iv(&s, g + 1, NULL), SECHO_OK, "%s get_iv", nm[m]);
			T_CHECK(g[0] == 0xa5 && g[17] == 0xa5, "%s: get_iv wrote outside", nm[m]);
		}
		/* canaries, every length 0..80 as one call after a 0..17-byte prefix call */
		for (size_t pre = 0; pre <= 17; pre += 17) {
			for (size_t len = 0; len <= 80; len++) {
				uint8_t pbuf[17];
				EXPECT(s_init(m, &s, &k, iv), SECHO_OK, "");
				s_upd(m, true, &s, pbuf, src, pre);
				o = gb_init(&ob, len);
				EXPECT(s_upd(m, true, &s, o, src, len), SECHO_OK, "%s len %zu",
				       nm[m], len);
				T_CHECK(gb_ok(&ob, false),
				        "%s prefix %zu len %zu: canary overwritten", nm[m], pre,
				        len);
				EXPECT(s_init(m, &s, &k, iv), SECHO_OK, "");
				s_upd(m, false, &s, pbuf, src, pre);
				memcpy(o, src, len);
				EXPECT(s_upd(m, false, &s, o, o, len), SECHO_OK, "%s", nm[m]);
				T_CHECK(gb_ok(&ob, false),
				        "%s in place len %zu: canary overwritten", nm[m], len);
			}
		}
		secho_stream_wipe(&s);
	}
	secho_stream_wipe(NULL);
	secho_aes_key_wipe(&k);
}

/* ---- GCM ---- */

static void test_gcm(secho_impl_id id)
{
	secho_gcm_key k;
	secho_gcm_ctx c;
	uint8_t iv[64] = {1, 2, 3}, tag[16], t2[16];
	struct gbuf ob, tb;
	EXPECT(secho_gcm_key_init(&k, key32, 16, id), SECHO_OK, "");

	/* seal/open argument checks: nothing written */
	uint8_t *o = gb_init(&ob, 40);
	uint8_t *t = gb_init(&tb, 16);
	EXPECT(secho_gcm_seal(&k, iv, 0, NULL, 0, o, src, 40, t, 16), SECHO_EINVAL, "iv_len 0");
	EXPECT(secho_gcm_seal(&k, NULL, 12, NULL, 0, o, src, 40, t, 16), SECHO_EINVAL, "NULL iv");
	EXPECT(secho_gcm_seal(&k, iv, 12, NULL, 5, o, src, 40, t, 16), SECHO_EINVAL, "NULL aad");
	EXPECT(secho_gcm_seal(&k, iv, 12, NULL, 0, NULL, src, 40, t, 16), SECHO_EINVAL, "NULL out");
	EXPECT(secho_gcm_seal(&k, iv, 12, NULL, 0, o, NULL, 40, t, 16), SECHO_EINVAL, "NULL in");
	EXPECT(secho_gcm_seal(&k, iv, 12, NULL, 0, o, src, 40, NULL, 16), SECHO_EINVAL, "NULL tag");
	EXPECT(secho_gcm_seal(NULL, iv, 12, NULL, 0, o, src, 40, t, 16), SECHO_EINVAL, "NULL key");
	EXPECT(secho_gcm_open(&k, iv, 0, NULL, 0, o, src, 40, t, 16), SECHO_EINVAL, "iv_len 0");
	EXPECT(secho_gcm_open(&k, iv, 12, NULL, 0, NULL, src, 40, t, 16), SECHO_EINVAL, "NULL out");
	EXPECT(secho_gcm_open(&k, iv, 12, NULL, 0, o, src, 40, NULL, 16), SECHO_EINVAL, "NULL tag");
	static const size_t badtl[] = {0, 1, 2, 3, 17, 32};
	for (size_t i = 0; i < sizeof(badtl) / sizeof(badtl[0]); i++) {
		EXPECT(secho_gcm_seal(&k, iv, 12, NULL, 0, o, src, 40, t, badtl[i]), SECHO_EINVAL,
		       "seal tag_len %zu", badtl[i]);
		EXPECT(secho_gcm_open(&k, iv, 12, NULL, 0, o, src, 40, t, badtl[i]), SECHO_EINVAL,
		       "open tag_len %zu", badtl[i]);
		EXPECT(secho_gcm_seal(&k, iv, 7, NULL, 0, o, src, 40, t, badtl[i]), SECHO_EINVAL,
		       "seal iv 7 tag_len %zu", badtl[i]);
	}
	T_CHECK(gb_ok(&ob, true) && gb_ok(&tb, true), "rejected seal/open wrote output or tag");
	/* limits (rejected before any byte is touched) */
	EXPECT(secho_gcm_seal(&k, iv, 12, NULL, 0, o, src, (size_t)SECHO_GCM_MAX_TEXT + 1, t, 16),
	       SECHO_ELIMIT, "text over 2^36-32");
	EXPECT(secho_gcm_open(&k, iv, 12, NULL, 0, o, src, (size_t)SECHO_GCM_MAX_TEXT + 1, t, 16),
	       SECHO_ELIMIT, "text over 2^36-32");
	EXPECT(secho_gcm_seal(&k, iv, 12, src, (size_t)SECHO_GCM_MAX_AAD + 1, o, src, 0, t, 16),
	       SECHO_ELIMIT, "aad over 2^61-1");
	T_CHECK(gb_ok(&ob, true) && gb_ok(&tb, true), "rejected seal/open wrote output or tag");
	/* NULL with zero lengths is fine */
	EXPECT(secho_gcm_seal(&k, iv, 12, NULL, 0, NULL, NULL, 0, tag, 16), SECHO_OK, "empty");
	EXPECT(secho_gcm_open(&k, iv, 12, NULL, 0, NULL, NULL, 0, tag, 16), SECHO_OK, "empty");

	/* canaries: lengths 0..80, IV 12 and 13, tag_len 4..16 */
	for (size_t ivl = 12; ivl <= 13; ivl++) {
		for (size_t len = 0; len <= 80; len++) {
			size_t tl = 4 + len % 13;
			o = gb_init(&ob, len);
			t = gb_init(&tb, tl);
			EXPECT(secho_gcm_seal(&k, iv, ivl, src, 5, o, src, len, t, tl), SECHO_OK,
			       "seal len %zu", len);
			T_CHECK(gb_ok(&ob, false) && gb_ok(&tb, false),
			        "seal iv %zu len %zu tag %zu: canary overwritten", ivl, len, tl);
			struct gbuf pb;
			uint8_t *p = gb_init(&pb, len);
			EXPECT(secho_gcm_open(&k, iv, ivl, src, 5, p, o, len, t, tl), SECHO_OK,
			       "open len %zu", len);
			T_CHECK(gb_ok(&pb, false) && !memcmp(p, src, len),
			        "open iv %zu len %zu: canary or plaintext", ivl, len);
			/* bad tag: EAUTH, output zeroed (not the canaries) */
			t[0] ^= 1;
			memset(p, 0x77, len);
			EXPECT(secho_gcm_open(&k, iv, ivl, src, 5, p, o, len, t, tl), SECHO_EAUTH,
			       "bad tag len %zu", len);
			T_CHECK(gb_ok(&pb, false) && all_zero(p, len),
			        "bad tag iv %zu len %zu: output not zeroed", ivl, len);
			/* in place, bad tag: the ciphertext is zeroed too */
			EXPECT(secho_gcm_open(&k, iv, ivl, src, 5, o, o, len, t, tl), SECHO_EAUTH,
			       "bad tag in place len %zu", len);
			T_CHECK(gb_ok(&ob, false) && all_zero(o, len),
			        "bad tag in place iv %zu len %zu: output not zeroed", ivl, len);
			/* streaming: canaries on output and tag */
			o = gb_init(&ob, len);
			t = gb_init(&tb, tl);
			EXPECT(secho_gcm_init(&c, &k, iv, ivl), SECHO_OK, "");
			EXPECT(secho_gcm_aad(&c, src, 3), SECHO_OK, "");
			EXPECT(secho_gcm_aad(&c, src + 3, 2), SECHO_OK, "");
			EXPECT(secho_gcm_encrypt_update(&c, o, src, len / 3), SECHO_OK, "");
			EXPECT(secho_gcm_encrypt_update(&c, o + len / 3, src + len / 3,
			                                len - len / 3),
			       SECHO_OK, "");
			EXPECT(secho_gcm_finish(&c, t, tl), SECHO_OK, "");
			T_CHECK(gb_ok(&ob, false) && gb_ok(&tb, false),
			        "streaming iv %zu len %zu tag %zu: canary overwritten", ivl, len,
			        tl);
			T_CHECK(all_zero(c.y, 16) && all_zero(c.ks, 16) && all_zero(c.buf, 16) &&
			                all_zero(c.j0, 16) && all_zero(c.ctr, 16),
			        "finish left secrets in the context");
		}
	}

	/* streaming argument and order checks */
	EXPECT(secho_gcm_init(NULL, &k, iv, 12), SECHO_EINVAL, "NULL ctx");
	EXPECT(secho_gcm_init(&c, NULL, iv, 12), SECHO_EINVAL, "NULL key");
	EXPECT(secho_gcm_init(&c, &k, NULL, 12), SECHO_EINVAL, "NULL iv");
	EXPECT(secho_gcm_init(&c, &k, iv, 0), SECHO_EINVAL, "iv_len 0");
	memset(&c, 0, sizeof(c));
	o = gb_init(&ob, 16);
	t = gb_init(&tb, 16);
	EXPECT(secho_gcm_aad(&c, src, 4), SECHO_ESTATE, "aad before init");
	EXPECT(secho_gcm_encrypt_update(&c, o, src, 16), SECHO_ESTATE, "update before init");
	EXPECT(secho_gcm_decrypt_update(&c, o, src, 16), SECHO_ESTATE, "update before init");
	EXPECT(secho_gcm_finish(&c, t, 16), SECHO_ESTATE, "finish before init");
	EXPECT(secho_gcm_verify(&c, t, 16), SECHO_ESTATE, "verify before init");
	T_CHECK(gb_ok(&ob, true) && gb_ok(&tb, true), "out-of-order call wrote");

	EXPECT(secho_gcm_init(&c, &k, iv, 12), SECHO_OK, "");
	EXPECT(secho_gcm_aad(NULL, src, 4), SECHO_EINVAL, "NULL ctx");
	EXPECT(secho_gcm_aad(&c, NULL, 4), SECHO_EINVAL, "NULL aad");
	EXPECT(secho_gcm_aad(&c, NULL, 0), SECHO_OK, "NULL aad, 0");
	EXPECT(secho_gcm_aad(&c, src, (size_t)SECHO_GCM_MAX_AAD + 1), SECHO_ELIMIT, "aad limit");
	EXPECT(secho_gcm_aad(&c, src, 4), SECHO_OK, "");
	EXPECT(secho_gcm_encrypt_update(&c, NULL, src, 4), SECHO_EINVAL, "NULL out");
	EXPECT(secho_gcm_encrypt_update(&c, o, NULL, 4), SECHO_EINVAL, "NULL in");
	EXPECT(secho_gcm_encrypt_update(&c, NULL, NULL, 0), SECHO_OK, "NULL, 0");
	EXPECT(secho_gcm_encrypt_update(&c, o, src, 16), SECHO_OK, "");
	EXPECT(secho_gcm_encrypt_update(&c, o, src, (size_t)SECHO_GCM_MAX_TEXT - 15), SECHO_ELIMIT,
	       "cumulative text limit");
	EXPECT(secho_gcm_aad(&c, src, 4), SECHO_ESTATE, "aad after data");
	EXPECT(secho_gcm_decrypt_update(&c, o, src, 4), SECHO_ESTATE, "decrypt after encrypt");
	for (size_t i = 0; i < sizeof(badtl) / sizeof(badtl[0]); i++) {
		EXPECT(secho_gcm_finish(&c, t, badtl[i]), SECHO_EINVAL, "finish tag_len %zu",
		       badtl[i]);
		EXPECT(secho_gcm_verify(&c, t, badtl[i]), SECHO_EINVAL, "verify tag_len %zu",
		       badtl[i]);
	}
	EXPECT(secho_gcm_finish(&c, NULL, 16), SECHO_EINVAL, "NULL tag");
	EXPECT(secho_gcm_finish(&c, t2, 16), SECHO_OK, "finish");
	EXPECT(secho_gcm_finish(&c, t2, 16), SECHO_ESTATE, "finish twice");
	EXPECT(secho_gcm_verify(&c, t2, 16), SECHO_ESTATE, "verify after finish");
	EXPECT(secho_gcm_encrypt_update(&c, o, src, 4), SECHO_ESTATE, "update after finish");
	EXPECT(secho_gcm_aad(&c, src, 4), SECHO_ESTATE, "aad after finish");
	/* the streamed tag equals the one-shot tag */
	uint8_t oo[16];
	EXPECT(secho_gcm_seal(&k, iv, 12, src, 4, oo, src, 16, tag, 16), SECHO_OK, "");
	T_CHECK(!memcmp(tag, t2, 16), "streaming tag != one-shot tag");
	EXPECT(secho_gcm_init(&c, &k, iv, 12), SECHO_OK, "");
	EXPECT(secho_gcm_decrypt_update(&c, o, src, 4), SECHO_OK, "");
	EXPECT(secho_gcm_encrypt_update(&c, o, src, 4), SECHO_ESTATE, "encrypt after decrypt");
	secho_gcm_ctx_wipe(&c);
	T_CHECK(all_zero(&c, sizeof(c)), "gcm ctx not zero after wipe");
	EXPECT(secho_gcm_aad(&c, src, 4), SECHO_ESTATE, "aad on a wiped ctx");
	EXPECT(secho_gcm_finish(&c, t2, 16), SECHO_ESTATE, "finish on a wiped ctx");
	secho_gcm_ctx_wipe(NULL);
	/* a fresh init restarts a finished context */
	EXPECT(secho_gcm_init(&c, &k, iv, 12), SECHO_OK, "re-init");
	EXPECT(secho_gcm_aad(&c, src, 4), SECHO_OK, "");
	EXPECT(secho_gcm_encrypt_update(&c, o, src, 16), SECHO_OK, "");
	EXPECT(secho_gcm_verify(&c, tag, 16), SECHO_OK, "verify of an encryption");
	secho_gcm_ctx_wipe(&c);

	/* batch */
	secho_gcm_msg m[SECHO_GCM_BATCH_MAX + 1];
	uint8_t bo[4][64], bt[4][16];
	for (int i = 0; i < 4; i++)
		m[i] = (secho_gcm_msg){.iv = iv, .in = src, .out = bo[i], .len = 64, .tag = bt[i]};
	EXPECT(secho_gcm_seal_batch(&k, NULL, 1), SECHO_EINVAL, "NULL msgs");
	EXPECT(secho_gcm_seal_batch(NULL, m, 1), SECHO_EINVAL, "NULL key");
	EXPECT(secho_gcm_seal_batch(&k, m, SECHO_GCM_BATCH_MAX + 1), SECHO_EINVAL, "n 33");
	EXPECT(secho_gcm_open_batch(&k, m, SECHO_GCM_BATCH_MAX + 1), SECHO_EINVAL, "n 33");
	EXPECT(secho_gcm_seal_batch(&k, m, 0), SECHO_OK, "n 0");
	EXPECT(secho_gcm_seal_batch(&k, NULL, 0), SECHO_OK, "NULL, 0");
	m[1].iv = NULL;
	m[2].tag = NULL;
	memset(bo, CAN, sizeof(bo));
	EXPECT(secho_gcm_seal_batch(&k, m, 4), SECHO_EINVAL, "batch with bad members");
	T_CHECK(m[0].status == SECHO_OK && m[1].status == SECHO_EINVAL &&
	                m[2].status == SECHO_EINVAL && m[3].status == SECHO_OK,
	        "batch statuses %d %d %d %d", m[0].status, m[1].status, m[2].status, m[3].status);
	T_CHECK(bo[1][0] == CAN && bo[2][0] == CAN, "rejected batch member was written");
	EXPECT(secho_gcm_seal(&k, iv, 12, NULL, 0, oo, src, 16, tag, 16), SECHO_OK, "");
	T_CHECK(!memcmp(bo[0], oo, 16) && !memcmp(bo[3], oo, 16), "batch ciphertext");
	m[1].iv = iv;
	m[2].tag = bt[2];
	EXPECT(secho_gcm_seal_batch(&k, m, 4), SECHO_OK, "");
	for (int i = 0; i < 4; i++)
		m[i].in = bo[i]; /* open in place */
	bt[3][15] ^= 0x80;
	EXPECT(secho_gcm_open_batch(&k, m, 4), SECHO_EAUTH, "one forged member");
	T_CHECK(m[0].status == SECHO_OK && m[3].status == SECHO_EAUTH && all_zero(bo[3], 64) &&
	                !memcmp(bo[0], src, 64),
	        "open_batch statuses %d %d, forged output zeroed %d", m[0].status, m[3].status,
	        all_zero(bo[3], 64));
	secho_gcm_key_wipe(&k);
}

/* ---- dispatch ---- */

static char self_path[4096];

/* Run this program as a child with SECHO_IMPL=env (NULL: unset) and an optional forced
 * implementation; return the name it resolves AUTO to, and its stderr in err. */
static bool child_resolve(const char *env, const char *force, char *out, size_t outn, char *err,
                          size_t errn)
{
	char cmd[8192];
	snprintf(cmd, sizeof(cmd), "%s%s%s '%s' --resolve-child %s 2>/tmp/secho-api-err.%d",
	         env ? "SECHO_IMPL='" : "env -u SECHO_IMPL", env ? env : "", env ? "'" : "",
	         self_path, force ? force : "-", (int)getpid());
	FILE *p = popen(cmd, "r");
	if (!p)
		return false;
	out[0] = 0;
	if (!fgets(out, (int)outn, p))
		out[0] = 0;
	out[strcspn(out, "\n")] = 0;
	int st = pclose(p);
	char ep[64];
	snprintf(ep, sizeof(ep), "/tmp/secho-api-err.%d", (int)getpid());
	FILE *e = fopen(ep, "r");
	err[0] = 0;
	if (e) {
		size_t n = fread(err, 1, errn - 1, e);
		err[n] = 0;
		fclose(e);
	}
	unlink(ep);
	return st == 0;
}

static int resolve_child(const char *force)
{
	if (strcmp(force, "-") != 0) {
		secho_impl_id id;
		if (secho_impl_from_name(force, &id) || secho_impl_force(id))
			return 2;
	}
	secho_aes_key k;
	if (secho_aes_key_init(&k, key32, 16, SECHO_IMPL_AUTO))
		return 3;
	printf("%s %s\n", secho_impl_name(secho_impl_resolve(SECHO_IMPL_AUTO)),
	       secho_impl_name(secho_aes_key_impl(&k)));
	secho_aes_key_wipe(&k);
	return 0;
}

/* The documented rule (docs/CRYPTO.md), from CPUID: vaes-split on AMD family 19h when it
 * is available, otherwise the first available of vaes, aesni, portable. */
static secho_impl_id rule_best(void)
{
	unsigned a = 0, b = 0, c = 0, d = 0, family = 0;
	bool amd = false;
	if (__get_cpuid(0, &a, &b, &c, &d))
		amd = !memcmp(&b, "Auth", 4) && !memcmp(&d, "enti", 4) && !memcmp(&c, "cAMD", 4);
	if (__get_cpuid(1, &a, &b, &c, &d)) {
		family = (a >> 8) & 0xf;
		if (family == 0xf)
			family += (a >> 20) & 0xff;
	}
	if (amd && family == 0x19 && secho_impl_available(SECHO_IMPL_VAES_SPLIT))
		return SECHO_IMPL_VAES_SPLIT;
	static const secho_impl_id order[] = {SECHO_IMPL_VAES, SECHO_IMPL_AESNI};
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (secho_impl_available(order[i]))
			return order[i];
	return SECHO_IMPL_PORTABLE;
}

static void test_dispatch(void)
{
	static const char *const names[] = {"auto", "portable", "aesni", "vaes", "vaes-split"};
	secho_impl_id id;
	for (int i = 0; i < SECHO_IMPL_COUNT; i++) {
		T_CHECK(!strcmp(secho_impl_name((secho_impl_id)i), names[i]), "name %d", i);
		EXPECT(secho_impl_from_name(names[i], &id), SECHO_OK, "%s", names[i]);
		T_CHECK(id == (secho_impl_id)i, "from_name %s -> %d", names[i], id);
	}
	EXPECT(secho_impl_from_name("PortAble", &id), SECHO_OK, "case-insensitive");
	EXPECT(secho_impl_from_name("bogus", &id), SECHO_EINVAL, "unknown name");
	EXPECT(secho_impl_from_name(NULL, &id), SECHO_EINVAL, "NULL name");
	EXPECT(secho_impl_from_name("aesni", NULL), SECHO_EINVAL, "NULL out");
	T_CHECK(!strcmp(secho_impl_name((secho_impl_id)42), "unknown"), "name of 42");
	T_CHECK(secho_impl_available(SECHO_IMPL_AUTO), "AUTO is always available");
	secho_impl_id best = secho_impl_best();
	T_CHECK(secho_impl_available(best) && best != SECHO_IMPL_AUTO, "best %d", best);
	T_CHECK(best == rule_best(), "best is %s, the rule says %s", names[best],
	        names[rule_best()]);
	T_CHECK(secho_impl_resolve(SECHO_IMPL_PORTABLE) == SECHO_IMPL_PORTABLE, "resolve id");
	EXPECT(secho_impl_force((secho_impl_id)99), SECHO_EINVAL, "force 99");
	EXPECT(secho_impl_force(SECHO_IMPL_COUNT), SECHO_EINVAL, "force COUNT");

	/* force each available implementation: AUTO keys follow it */
	for (int i = SECHO_IMPL_PORTABLE; i < SECHO_IMPL_COUNT; i++) {
		secho_impl_id want = (secho_impl_id)i;
		if (!secho_impl_available(want))
			continue; /* test_force_unavailable() */
		EXPECT(secho_impl_force(want), SECHO_OK, "force %s", names[i]);
		T_CHECK(secho_impl_resolve(SECHO_IMPL_AUTO) == want, "AUTO -> %s after force",
		        names[secho_impl_resolve(SECHO_IMPL_AUTO)]);
		secho_aes_key k;
		secho_gcm_key gk;
		EXPECT(secho_aes_key_init(&k, key32, 16, SECHO_IMPL_AUTO), SECHO_OK, "");
		EXPECT(secho_gcm_key_init(&gk, key32, 16, SECHO_IMPL_AUTO), SECHO_OK, "");
		T_CHECK(secho_aes_key_impl(&k) == want && secho_gcm_key_impl(&gk) == want,
		        "AUTO keys made with %s/%s, forced %s", names[secho_aes_key_impl(&k)],
		        names[secho_gcm_key_impl(&gk)], names[i]);
		secho_aes_key_wipe(&k);
		secho_gcm_key_wipe(&gk);
	}
	EXPECT(secho_impl_force(SECHO_IMPL_AUTO), SECHO_OK, "restore AUTO");

	/* SECHO_IMPL in child processes (read once per process) */
	char out[128], err[1024], want[64];
	bool ok = child_resolve(NULL, NULL, out, sizeof(out), err, sizeof(err));
	snprintf(want, sizeof(want), "%s %s", names[best], names[best]);
	T_CHECK(ok && !strcmp(out, want) && !err[0], "unset: child said '%s' (want '%s'), '%s'",
	        out, want, err);
	for (int i = SECHO_IMPL_PORTABLE; i < SECHO_IMPL_COUNT; i++) {
		ok = child_resolve(names[i], NULL, out, sizeof(out), err, sizeof(err));
		bool av = secho_impl_available((secho_impl_id)i);
		snprintf(want, sizeof(want), "%s %s", av ? names[i] : names[best],
		         av ? names[i] : names[best]);
		T_CHECK(ok && !strcmp(out, want), "SECHO_IMPL=%s: child said '%s' (want '%s')",
		        names[i], out, want);
		T_CHECK(av ? !err[0] : strstr(err, "not available") != NULL,
		        "SECHO_IMPL=%s (%s): stderr '%s'", names[i],
		        av ? "available" : "unavailable", err);
	}
	ok = child_resolve("bogus", NULL, out, sizeof(out), err, sizeof(err));
	snprintf(want, sizeof(want), "%s %s", names[best], names[best]);
	T_CHECK(ok && !strcmp(out, want) && strstr(err, "bogus"),
	        "SECHO_IMPL=bogus: child said '%s', stderr '%s'", out, err);
	/* secho_impl_force wins over the environment */
	ok = child_resolve("aesni", "portable", out, sizeof(out), err, sizeof(err));
	T_CHECK(ok && !strcmp(out, "portable portable"), "force over env: child said '%s'", out);
}

/* Forcing (or asking a key for) an implementation the CPU lacks: SECHO_EUNAVAIL, and AUTO
 * keeps resolving as before. Returns false when every implementation is available. */
static bool test_force_unavailable(void)
{
	static const char *const names[] = {"auto", "portable", "aesni", "vaes", "vaes-split"};
	int u = 0;
	for (int i = SECHO_IMPL_PORTABLE; i < SECHO_IMPL_COUNT && !u; i++)
		if (!secho_impl_available((secho_impl_id)i))
			u = i;
	if (!u)
		return false;
	secho_impl_id before = secho_impl_resolve(SECHO_IMPL_AUTO);
	EXPECT(secho_impl_force((secho_impl_id)u), SECHO_EUNAVAIL, "force %s", names[u]);
	T_CHECK(secho_impl_resolve(SECHO_IMPL_AUTO) == before, "failed force changed AUTO");
	secho_aes_key k;
	secho_gcm_key gk;
	memset(&gk, CAN, sizeof(gk));
	EXPECT(secho_aes_key_init(&k, key32, 16, (secho_impl_id)u), SECHO_EUNAVAIL, "%s", names[u]);
	EXPECT(secho_gcm_key_init(&gk, key32, 16, (secho_impl_id)u), SECHO_EUNAVAIL, "%s",
	       names[u]);
	T_CHECK(((uint8_t *)&gk)[0] == CAN, "gcm key written on EUNAVAIL");
	return true;
}

static void test_strerror(void)
{
	static const int codes[] = {SECHO_OK,       SECHO_EINVAL, SECHO_ELEN,  SECHO_EAUTH,
	                            SECHO_EUNAVAIL, SECHO_ESTATE, SECHO_ELIMIT};
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		const char *s = secho_strerror(codes[i]);
		if (!s)
			s = "";
		T_CHECK(*s && strcmp(s, "not a crypto library code") != 0, "strerror(%d)",
		        codes[i]);
		for (size_t j = 0; j < i; j++) {
			const char *o = secho_strerror(codes[j]);
			T_CHECK(!o || strcmp(s, o) != 0, "strerror %d == %d", codes[i], codes[j]);
		}
	}
	T_CHECK(!strcmp(secho_strerror(-100), "not a crypto library code"), "strerror(-100)");
	T_CHECK(!strcmp(secho_strerror(-(SECHO_ERR_BASE + 100)), "not a crypto library code"),
	        "strerror(-(SECHO_ERR_BASE + 100))");
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--resolve-child"))
		return resolve_child(argv[2]);
	static const secho_impl_id ids[] = {SECHO_IMPL_PORTABLE, SECHO_IMPL_AESNI, SECHO_IMPL_VAES,
	                                    SECHO_IMPL_VAES_SPLIT};
	t_seed_init("test_api");
	t_randbytes(src, sizeof(src));
	ssize_t n = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);
	self_path[n > 0 ? n : 0] = 0;

	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		static const char *const parts[] = {"keys", "block modes", "stream modes", "GCM"};
		for (int p = 0; p < 4; p++) {
			t_begin("api %s %s", parts[p], secho_impl_name(ids[i]));
			if (!secho_impl_available(ids[i])) {
				t_impl_unavailable(secho_impl_name(ids[i]));
				continue;
			}
			if (p == 0)
				test_keys(ids[i]);
			else if (p == 1)
				test_block_modes(ids[i]);
			else if (p == 2)
				test_stream_modes(ids[i]);
			else
				test_gcm(ids[i]);
			t_end();
		}
	}
	t_begin("api dispatch (force, names, SECHO_IMPL)");
	test_dispatch();
	t_end();
	t_begin("api force an unavailable implementation");
	if (test_force_unavailable())
		t_end();
	else
		t_unavailable("every implementation is available on this CPU, none to refuse");
	t_begin("api strerror");
	test_strerror();
	t_end();
	return t_exit();
}
