/*
 * tests/unit/test_gcm_kat.c - AES-GCM known answers through the public API, for every
 * implementation in turn.
 *
 * Source: D. McGrew and J. Viega, "The Galois/Counter Mode of Operation (GCM)", revised
 * submission to NIST (2005), Appendix B "AES Test Vectors", test cases 1-18
 * (AES-128: 1-6, AES-192: 7-12, AES-256: 13-18; cases 5/11/17 use an 8-byte IV and
 * 6/12/18 a 60-byte IV, which exercise the GHASHed J0 of SP 800-38D 7.1).
 *
 * Each case runs: one-shot seal and open, in place and out of place; open with a
 * corrupted tag, ciphertext and AAD (must return SECHO_EAUTH and zero the output);
 * streaming byte by byte (AAD and text) and in random splits (seed printed), encrypt
 * and decrypt; truncated tags (16, 15, 12, 8, 4 bytes); the batch API (96-bit IVs).
 */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "secho/gcm.h"

#define KF "feffe9928665731c6d6a8f9467308308"
#define P64                                                                                        \
	"d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"                         \
	"1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255"
#define P60                                                                                        \
	"d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"                         \
	"1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39"
#define A20  "feedfacedeadbeeffeedfacedeadbeefabaddad2"
#define IV96 "cafebabefacedbaddecaf888"
#define IV64 "cafebabefacedbad"
#define IV480                                                                                      \
	"9313225df88406e555909c5aff5269aa6a7a9538534f7da1e4c303d2a318a728"                         \
	"c3c0c95156809539fcf0e2429a6b525416aedbf5a0de6a57a637b39b"
#define Z96  "000000000000000000000000"
#define Z128 "00000000000000000000000000000000"

struct gkat {
	int tc;
	const char *key, *iv, *aad, *pt, *ct, *tag;
};

static const struct gkat kats[] = {
        {1, Z128, Z96, "", "", "", "58e2fccefa7e3061367f1d57a4e7455a"},
        {2, Z128, Z96, "", Z128, "0388dace60b6a392f328c2b971b2fe78",
         "ab6e47d42cec13bdf53a67b21257bddf"},
        {3, KF, IV96, "", P64,
         "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
         "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985",
         "4d5c2af327cd64a62cf35abd2ba6fab4"},
        {4, KF, IV96, A20, P60,
         "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
         "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091",
         "5bc94fbc3221a5db94fae95ae7121a47"},
        {5, KF, IV64, A20, P60,
         "61353b4c2806934a777ff51fa22a4755699b2a714fcdc6f83766e5f97b6c7423"
         "73806900e49f24b22b097544d4896b424989b5e1ebac0f07c23f4598",
         "3612d2e79e3b0785561be14aaca2fccb"},
        {6, KF, IV480, A20, P60,
         "8ce24998625615b603a033aca13fb894be9112a5c3a211a8ba262a3cca7e2ca7"
         "01e4a9a4fba43c90ccdcb281d48c7c6fd62875d2aca417034c34aee5",
         "619cc5aefffe0bfa462af43c1699d050"},
        {7, Z128 "0000000000000000", Z96, "", "", "", "cd33b28ac773f74ba00ed1f312572435"},
        {8, Z128 "0000000000000000", Z96, "", Z128, "98e7247c07f0fe411c267e4384b0f600",
         "2ff58d80033927ab8ef4d4587514f0fb"},
        {9, KF "feffe9928665731c", IV96, "", P64,
         "3980ca0b3c00e841eb06fac4872a2757859e1ceaa6efd984628593b40ca1e19c"
         "7d773d00c144c525ac619d18c84a3f4718e2448b2fe324d9ccda2710acade256",
         "9924a7c8587336bfb118024db8674a14"},
        {10, KF "feffe9928665731c", IV96, A20, P60,
         "3980ca0b3c00e841eb06fac4872a2757859e1ceaa6efd984628593b40ca1e19c"
         "7d773d00c144c525ac619d18c84a3f4718e2448b2fe324d9ccda2710",
         "2519498e80f1478f37ba55bd6d27618c"},
        {11, KF "feffe9928665731c", IV64, A20, P60,
         "0f10f599ae14a154ed24b36e25324db8c566632ef2bbb34f8347280fc4507057"
         "fddc29df9a471f75c66541d4d4dad1c9e93a19a58e8b473fa0f062f7",
         "65dcc57fcf623a24094fcca40d3533f8"},
        {12, KF "feffe9928665731c", IV480, A20, P60,
         "d27e88681ce3243c4830165a8fdcf9ff1de9a1d8e6b447ef6ef7b79828666e45"
         "81e79012af34ddd9e2f037589b292db3e67c036745fa22e7e9b7373b",
         "dcf566ff291c25bbb8568fc3d376a6d9"},
        {13, Z128 Z128, Z96, "", "", "", "530f8afbc74536b9a963b4f1c4cb738b"},
        {14, Z128 Z128, Z96, "", Z128, "cea7403d4d606b6e074ec5d3baf39d18",
         "d0d1c8a799996bf0265b98b5d48ab919"},
        {15, KF KF, IV96, "", P64,
         "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
         "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad",
         "b094dac5d93471bdec1a502270e3cc6c"},
        {16, KF KF, IV96, A20, P60,
         "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
         "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
         "76fc6ece0f4e1768cddf8853bb2d551b"},
        {17, KF KF, IV64, A20, P60,
         "c3762df1ca787d32ae47c13bf19844cbaf1ae14d0b976afac52ff7d79bba9de0"
         "feb582d33934a4f0954cc2363bc73f7862ac430e64abe499f47c9b1f",
         "3a337dbf46a792c45e454913fe2ea8f2"},
        {18, KF KF, IV480, A20, P60,
         "5a8def2f0c9e53f1f75d7853659e2a20eeb2b22aafde6419a058ab4f6f746bf4"
         "0fc0c3b780f244452da3ebf1c5d82cdea2418997200ef82e44ae7e3f",
         "a44a8266ee1c8eb0c8b5d4cf5ae9f19a"},
};

struct vec {
	uint8_t key[32], iv[64], aad[32], pt[64], ct[64], tag[16];
	size_t kl, ivl, al, len;
};

static bool is_zero(const uint8_t *p, size_t n)
{
	uint8_t acc = 0;
	for (size_t i = 0; i < n; i++)
		acc |= p[i];
	return acc == 0;
}

static void cmp(int tc, const char *what, const uint8_t *exp, const uint8_t *got, size_t n)
{
	if (!T_CHECK(memcmp(exp, got, n) == 0, "test case %d: %s mismatch", tc, what)) {
		t_hexdump("expected", exp, n);
		t_hexdump("got", got, n);
	}
}

/* Piece length for the split patterns: 0 = all at once, 1 = byte by byte, 2 = random. */
static size_t piece(int pat, size_t left)
{
	if (pat == 0)
		return left;
	if (pat == 1)
		return left ? 1 : 0;
	size_t n = t_randrange(0, 33);
	return n < left ? n : left;
}

/* Streaming seal or open of v with split pattern pat (AAD and text split alike). */
static void streaming(const secho_gcm_key *k, const struct gkat *g, const struct vec *v, int pat,
                      bool enc)
{
	secho_gcm_ctx c;
	uint8_t out[64], tag[16];
	const uint8_t *in = enc ? v->pt : v->ct;
	memset(out, 0xa5, sizeof(out));
	int rc = secho_gcm_init(&c, k, v->iv, v->ivl);
	T_CHECK(rc == SECHO_OK, "test case %d: init %d", g->tc, rc);
	for (size_t off = 0; off < v->al;) {
		size_t n = piece(pat, v->al - off);
		rc = secho_gcm_aad(&c, v->aad + off, n);
		T_CHECK(rc == SECHO_OK, "test case %d: aad %d", g->tc, rc);
		off += n;
	}
	for (size_t off = 0; off < v->len;) {
		size_t n = piece(pat, v->len - off);
		rc = enc ? secho_gcm_encrypt_update(&c, out + off, in + off, n)
		         : secho_gcm_decrypt_update(&c, out + off, in + off, n);
		T_CHECK(rc == SECHO_OK, "test case %d: update %d", g->tc, rc);
		off += n;
	}
	char what[80];
	snprintf(what, sizeof(what), "streaming %s (split pattern %d)", enc ? "seal" : "open", pat);
	cmp(g->tc, what, enc ? v->ct : v->pt, out, v->len);
	if (enc) {
		rc = secho_gcm_finish(&c, tag, 16);
		T_CHECK(rc == SECHO_OK, "test case %d: finish %d", g->tc, rc);
		cmp(g->tc, "streaming tag", v->tag, tag, 16);
	} else {
		rc = secho_gcm_verify(&c, v->tag, 16);
		T_CHECK(rc == SECHO_OK, "test case %d: %s verify %d", g->tc, what, rc);
	}
	secho_gcm_ctx_wipe(&c);
}

static void run_case(secho_impl_id id, const struct gkat *g)
{
	struct vec v;
	long kl = t_unhex(g->key, v.key, sizeof(v.key));
	long ivl = t_unhex(g->iv, v.iv, sizeof(v.iv));
	long al = t_unhex(g->aad, v.aad, sizeof(v.aad));
	long pl = t_unhex(g->pt, v.pt, sizeof(v.pt));
	long cl = t_unhex(g->ct, v.ct, sizeof(v.ct));
	long tl = t_unhex(g->tag, v.tag, sizeof(v.tag));
	if (!T_CHECK(kl > 0 && ivl > 0 && al >= 0 && pl >= 0 && pl == cl && tl == 16,
	             "test case %d: bad vector text", g->tc))
		return;
	v.kl = (size_t)kl, v.ivl = (size_t)ivl, v.al = (size_t)al, v.len = (size_t)pl;

	secho_gcm_key k;
	int rc = secho_gcm_key_init(&k, v.key, v.kl, id);
	if (!T_CHECK(rc == SECHO_OK, "test case %d: key init %d", g->tc, rc))
		return;
	T_CHECK(secho_gcm_key_impl(&k) == id, "test case %d: key impl %s", g->tc,
	        secho_impl_name(secho_gcm_key_impl(&k)));

	uint8_t out[80], tag[16];
	/* one-shot seal, out of place and in place */
	memset(out, 0xa5, sizeof(out));
	rc = secho_gcm_seal(&k, v.iv, v.ivl, v.aad, v.al, out, v.pt, v.len, tag, 16);
	T_CHECK(rc == SECHO_OK, "test case %d: seal %d", g->tc, rc);
	cmp(g->tc, "seal ciphertext", v.ct, out, v.len);
	cmp(g->tc, "seal tag", v.tag, tag, 16);
	memcpy(out, v.pt, v.len);
	rc = secho_gcm_seal(&k, v.iv, v.ivl, v.aad, v.al, out, out, v.len, tag, 16);
	T_CHECK(rc == SECHO_OK, "test case %d: seal in place %d", g->tc, rc);
	cmp(g->tc, "seal in place ciphertext", v.ct, out, v.len);
	cmp(g->tc, "seal in place tag", v.tag, tag, 16);

	/* one-shot open, out of place and in place */
	memset(out, 0xa5, sizeof(out));
	rc = secho_gcm_open(&k, v.iv, v.ivl, v.aad, v.al, out, v.ct, v.len, v.tag, 16);
	T_CHECK(rc == SECHO_OK, "test case %d: open %d", g->tc, rc);
	cmp(g->tc, "open plaintext", v.pt, out, v.len);
	memcpy(out, v.ct, v.len);
	rc = secho_gcm_open(&k, v.iv, v.ivl, v.aad, v.al, out, out, v.len, v.tag, 16);
	T_CHECK(rc == SECHO_OK, "test case %d: open in place %d", g->tc, rc);
	cmp(g->tc, "open in place plaintext", v.pt, out, v.len);

	/* truncated tags: prefix of the full tag, accepted by open and produced by finish */
	static const size_t tls[] = {15, 12, 8, 4};
	for (size_t i = 0; i < 4; i++) {
		uint8_t t2[16];
		memset(t2, 0, sizeof(t2));
		rc = secho_gcm_seal(&k, v.iv, v.ivl, v.aad, v.al, out, v.pt, v.len, t2, tls[i]);
		T_CHECK(rc == SECHO_OK && memcmp(t2, v.tag, tls[i]) == 0 &&
		                is_zero(t2 + tls[i], 16 - tls[i]),
		        "test case %d: seal with tag_len %zu (rc %d)", g->tc, tls[i], rc);
		rc = secho_gcm_open(&k, v.iv, v.ivl, v.aad, v.al, out, v.ct, v.len, v.tag, tls[i]);
		T_CHECK(rc == SECHO_OK, "test case %d: open with tag_len %zu: %d", g->tc, tls[i],
		        rc);
	}

	/* forgeries: one bit of the tag, the ciphertext, the AAD, the IV */
	uint8_t bad[64];
	memcpy(bad, v.tag, 16);
	bad[t_randrange(0, 15)] ^= (uint8_t)(1u << t_randrange(0, 7));
	memset(out, 0xa5, sizeof(out));
	rc = secho_gcm_open(&k, v.iv, v.ivl, v.aad, v.al, out, v.ct, v.len, bad, 16);
	T_CHECK(rc == SECHO_EAUTH && is_zero(out, v.len) && out[v.len] == 0xa5,
	        "test case %d: open with a flipped tag bit: rc %d, output zeroed %d", g->tc, rc,
	        is_zero(out, v.len));
	if (v.len) {
		memcpy(bad, v.ct, v.len);
		bad[t_randrange(0, v.len - 1)] ^= 0x01;
		memset(out, 0xa5, sizeof(out));
		rc = secho_gcm_open(&k, v.iv, v.ivl, v.aad, v.al, out, bad, v.len, v.tag, 16);
		T_CHECK(rc == SECHO_EAUTH && is_zero(out, v.len),
		        "test case %d: open with a flipped ciphertext bit: rc %d", g->tc, rc);
	}
	if (v.al) {
		memcpy(bad, v.aad, v.al);
		bad[t_randrange(0, v.al - 1)] ^= 0x80;
		rc = secho_gcm_open(&k, v.iv, v.ivl, bad, v.al, out, v.ct, v.len, v.tag, 16);
		T_CHECK(rc == SECHO_EAUTH, "test case %d: open with a flipped AAD bit: %d", g->tc,
		        rc);
	}
	memcpy(bad, v.iv, v.ivl);
	bad[0] ^= 0x01;
	rc = secho_gcm_open(&k, bad, v.ivl, v.aad, v.al, out, v.ct, v.len, v.tag, 16);
	T_CHECK(rc == SECHO_EAUTH, "test case %d: open with a changed IV: %d", g->tc, rc);

	/* streaming: whole, byte by byte, random splits */
	for (int p = 0; p < 6; p++) {
		streaming(&k, g, &v, p < 2 ? p : 2, true);
		streaming(&k, g, &v, p < 2 ? p : 2, false);
	}
	/* streaming finish with short tags, verify rejects a bad one */
	{
		secho_gcm_ctx c;
		uint8_t t8[16] = {0};
		secho_gcm_init(&c, &k, v.iv, v.ivl);
		secho_gcm_aad(&c, v.aad, v.al);
		secho_gcm_encrypt_update(&c, out, v.pt, v.len);
		rc = secho_gcm_finish(&c, t8, 8);
		T_CHECK(rc == SECHO_OK && memcmp(t8, v.tag, 8) == 0 && is_zero(t8 + 8, 8),
		        "test case %d: finish tag_len 8", g->tc);
		secho_gcm_init(&c, &k, v.iv, v.ivl);
		secho_gcm_aad(&c, v.aad, v.al);
		secho_gcm_decrypt_update(&c, out, v.ct, v.len);
		memcpy(bad, v.tag, 16);
		bad[3] ^= 0x10;
		rc = secho_gcm_verify(&c, bad, 4);
		T_CHECK(rc == SECHO_EAUTH, "test case %d: verify tag_len 4 flipped: %d", g->tc, rc);
		secho_gcm_ctx_wipe(&c);
	}

	/* batch API: 96-bit IVs only; one message, then a full batch of the same vector
	 * in place with one forged member. */
	if (v.ivl == 12) {
		static uint8_t bufs[SECHO_GCM_BATCH_MAX][64], tags[SECHO_GCM_BATCH_MAX][16];
		secho_gcm_msg m[SECHO_GCM_BATCH_MAX];
		size_t n = SECHO_GCM_BATCH_MAX;
		for (size_t i = 0; i < n; i++) {
			memcpy(bufs[i], v.pt, v.len);
			memset(tags[i], 0, 16);
			m[i] = (secho_gcm_msg){.iv = v.iv,
			                       .aad = v.aad,
			                       .aad_len = v.al,
			                       .in = bufs[i],
			                       .out = bufs[i],
			                       .len = v.len,
			                       .tag = tags[i],
			                       .status = 99};
		}
		rc = secho_gcm_seal_batch(&k, m, n);
		T_CHECK(rc == SECHO_OK, "test case %d: seal_batch %d", g->tc, rc);
		for (size_t i = 0; i < n; i++) {
			T_CHECK(m[i].status == SECHO_OK, "test case %d: batch msg %zu status %d",
			        g->tc, i, m[i].status);
			cmp(g->tc, "seal_batch ciphertext", v.ct, bufs[i], v.len);
			cmp(g->tc, "seal_batch tag", v.tag, tags[i], 16);
		}
		size_t forged = t_randrange(0, n - 1);
		tags[forged][0] ^= 1;
		rc = secho_gcm_open_batch(&k, m, n);
		T_CHECK(rc == SECHO_EAUTH, "test case %d: open_batch with a forged member: %d",
		        g->tc, rc);
		for (size_t i = 0; i < n; i++) {
			if (i == forged) {
				T_CHECK(m[i].status == SECHO_EAUTH && is_zero(bufs[i], v.len),
				        "test case %d: forged batch msg %zu: status %d", g->tc, i,
				        m[i].status);
			} else {
				T_CHECK(m[i].status == SECHO_OK, "test case %d: batch msg %zu: %d",
				        g->tc, i, m[i].status);
				cmp(g->tc, "open_batch plaintext", v.pt, bufs[i], v.len);
			}
		}
	}
	secho_gcm_key_wipe(&k);
}

int main(void)
{
	static const secho_impl_id ids[] = {SECHO_IMPL_PORTABLE, SECHO_IMPL_AESNI, SECHO_IMPL_VAES,
	                                    SECHO_IMPL_VAES_SPLIT};
	t_seed_init("test_gcm_kat");
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		t_begin("GCM KAT (McGrew-Viega test cases 1-18) %s", secho_impl_name(ids[i]));
		if (!secho_impl_available(ids[i])) {
			t_impl_unavailable(secho_impl_name(ids[i]));
			continue;
		}
		for (size_t j = 0; j < sizeof(kats) / sizeof(kats[0]); j++)
			run_case(ids[i], &kats[j]);
		t_end();
	}
	return t_exit();
}
