/*
 * tests/unit/test_modes_kat.c - known-answer tests for the AES block cipher and the
 * modes of operation, through the public API, for every implementation in turn.
 *
 * Sources:
 *   FIPS-197 (Advanced Encryption Standard, 2001), Appendix C.1-C.3: one block with
 *     AES-128/192/256 (encrypt and decrypt).
 *   NIST SP 800-38A (2001), Appendix F: F.1 ECB, F.2 CBC, F.3.13-F.3.18 CFB128,
 *     F.4 OFB, F.5 CTR, each for AES-128, AES-192 and AES-256, encrypt and decrypt.
 * Each vector runs in one call, in place, block by block (block modes) and, for the
 * stream modes, byte by byte and in random splits (seed printed).
 */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "secho/modes.h"

enum { ECB, CBC, CFB, OFB, CTR };
static const char *const mode_name[] = {"ECB", "CBC", "CFB128", "OFB", "CTR"};

/* SP 800-38A F: the same four plaintext blocks for every mode. */
#define F_PT                                                                                       \
	"6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"                         \
	"30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710"
#define K128 "2b7e151628aed2a6abf7158809cf4f3c"
#define K192 "8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b"
#define K256 "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4"
#define IV   "000102030405060708090a0b0c0d0e0f"
#define CTR0 "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"

struct kat {
	const char *src;
	int mode;
	const char *key, *iv, *pt, *ct;
};

static const struct kat kats[] = {
        /* FIPS-197 Appendix C: single blocks, run as one-block ECB. */
        {"FIPS-197 C.1 AES-128", ECB, "000102030405060708090a0b0c0d0e0f", NULL,
         "00112233445566778899aabbccddeeff", "69c4e0d86a7b0430d8cdb78070b4c55a"},
        {"FIPS-197 C.2 AES-192", ECB, "000102030405060708090a0b0c0d0e0f1011121314151617", NULL,
         "00112233445566778899aabbccddeeff", "dda97ca4864cdfe06eaf70a0ec0d7191"},
        {"FIPS-197 C.3 AES-256", ECB,
         "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", NULL,
         "00112233445566778899aabbccddeeff", "8ea2b7ca516745bfeafc49904b496089"},
        /* SP 800-38A F.1 ECB */
        {"SP 800-38A F.1.1/F.1.2 ECB-AES128", ECB, K128, NULL, F_PT,
         "3ad77bb40d7a3660a89ecaf32466ef97f5d3d58503b9699de785895a96fdbaaf"
         "43b1cd7f598ece23881b00e3ed0306887b0c785e27e8ad3f8223207104725dd4"},
        {"SP 800-38A F.1.3/F.1.4 ECB-AES192", ECB, K192, NULL, F_PT,
         "bd334f1d6e45f25ff712a214571fa5cc974104846d0ad3ad7734ecb3ecee4eef"
         "ef7afd2270e2e60adce0ba2face6444e9a4b41ba738d6c72fb16691603c18e0e"},
        {"SP 800-38A F.1.5/F.1.6 ECB-AES256", ECB, K256, NULL, F_PT,
         "f3eed1bdb5d2a03c064b5a7e3db181f8591ccb10d410ed26dc5ba74a31362870"
         "b6ed21b99ca6f4f9f153e7b1beafed1d23304b7a39f9f3ff067d8d8f9e24ecc7"},
        /* SP 800-38A F.2 CBC */
        {"SP 800-38A F.2.1/F.2.2 CBC-AES128", CBC, K128, IV, F_PT,
         "7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b2"
         "73bed6b8e3c1743b7116e69e222295163ff1caa1681fac09120eca307586e1a7"},
        {"SP 800-38A F.2.3/F.2.4 CBC-AES192", CBC, K192, IV, F_PT,
         "4f021db243bc633d7178183a9fa071e8b4d9ada9ad7dedf4e5e738763f69145a"
         "571b242012fb7ae07fa9baac3df102e008b0e27988598881d920a9e64f5615cd"},
        {"SP 800-38A F.2.5/F.2.6 CBC-AES256", CBC, K256, IV, F_PT,
         "f58c4c04d6e5f1ba779eabfb5f7bfbd69cfc4e967edb808d679f777bc6702c7d"
         "39f23369a9d9bacfa530e26304231461b2eb05e2c39be9fcda6c19078c6a9d1b"},
        /* SP 800-38A F.3 CFB128 */
        {"SP 800-38A F.3.13/F.3.14 CFB128-AES128", CFB, K128, IV, F_PT,
         "3b3fd92eb72dad20333449f8e83cfb4ac8a64537a0b3a93fcde3cdad9f1ce58b"
         "26751f67a3cbb140b1808cf187a4f4dfc04b05357c5d1c0eeac4c66f9ff7f2e6"},
        {"SP 800-38A F.3.15/F.3.16 CFB128-AES192", CFB, K192, IV, F_PT,
         "cdc80d6fddf18cab34c25909c99a417467ce7f7f81173621961a2b70171d3d7a"
         "2e1e8a1dd59b88b1c8e60fed1efac4c9c05f9f9ca9834fa042ae8fba584b09ff"},
        {"SP 800-38A F.3.17/F.3.18 CFB128-AES256", CFB, K256, IV, F_PT,
         "dc7e84bfda79164b7ecd8486985d386039ffed143b28b1c832113c6331e5407b"
         "df10132415e54b92a13ed0a8267ae2f975a385741ab9cef82031623d55b1e471"},
        /* SP 800-38A F.4 OFB */
        {"SP 800-38A F.4.1/F.4.2 OFB-AES128", OFB, K128, IV, F_PT,
         "3b3fd92eb72dad20333449f8e83cfb4a7789508d16918f03f53c52dac54ed825"
         "9740051e9c5fecf64344f7a82260edcc304c6528f659c77866a510d9c1d6ae5e"},
        {"SP 800-38A F.4.3/F.4.4 OFB-AES192", OFB, K192, IV, F_PT,
         "cdc80d6fddf18cab34c25909c99a4174fcc28b8d4c63837c09e81700c1100401"
         "8d9a9aeac0f6596f559c6d4daf59a5f26d9f200857ca6c3e9cac524bd9acc92a"},
        {"SP 800-38A F.4.5/F.4.6 OFB-AES256", OFB, K256, IV, F_PT,
         "dc7e84bfda79164b7ecd8486985d38604febdc6740d20b3ac88f6ad82a4fb08d"
         "71ab47a086e86eedf39d1c5bba97c4080126141d67f37be8538f5a8be740e484"},
        /* SP 800-38A F.5 CTR */
        {"SP 800-38A F.5.1/F.5.2 CTR-AES128", CTR, K128, CTR0, F_PT,
         "874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff"
         "5ae4df3edbd5d35e5b4f09020db03eab1e031dda2fbe03d1792170a0f3009cee"},
        {"SP 800-38A F.5.3/F.5.4 CTR-AES192", CTR, K192, CTR0, F_PT,
         "1abc932417521ca24f2b0459fe7e6e0b090339ec0aa6faefd5ccc2c6f4ce8e94"
         "1e36b26bd1ebc670d1bd1d665620abf74f78a7f6d29809585a97daec58c6b050"},
        {"SP 800-38A F.5.5/F.5.6 CTR-AES256", CTR, K256, CTR0, F_PT,
         "601ec313775789a5b7a7f504bbf3d228f443e3ca4d62b59aca84e990cacaf5c5"
         "2b0930daa23de94ce87017ba2d84988ddfc9c58db67aada613c2dd08457941a6"},
};

#define MAXLEN 64

/* Split patterns for the stream modes: 0 = one call, 1 = byte by byte, 2 = random. */
static size_t next_piece(int pattern, size_t left)
{
	if (pattern == 0)
		return left;
	if (pattern == 1)
		return 1;
	size_t n = t_randrange(0, 40); /* 0 exercises empty calls too */
	return n < left ? n : left;
}

/*
 * Run one mode over len bytes, in pieces chosen by `pattern` (block modes: pattern 1
 * means one block per call). Returns the first non-OK status. out may equal in.
 */
static int run_mode(const secho_aes_key *k, int mode, bool enc, const uint8_t *iv0, uint8_t *out,
                    const uint8_t *in, size_t len, int pattern)
{
	uint8_t iv[16] = {0};
	secho_stream s;
	int rc = SECHO_OK;
	if (iv0)
		memcpy(iv, iv0, 16);
	if (mode == ECB || mode == CBC) {
		size_t step = pattern == 0 ? len : 16;
		for (size_t off = 0; off < len && !rc; off += step) {
			size_t n = len - off < step ? len - off : step;
			if (mode == ECB)
				rc = enc ? secho_ecb_encrypt(k, out + off, in + off, n)
				         : secho_ecb_decrypt(k, out + off, in + off, n);
			else
				rc = enc ? secho_cbc_encrypt(k, iv, out + off, in + off, n)
				         : secho_cbc_decrypt(k, iv, out + off, in + off, n);
		}
		return rc;
	}
	if (mode == CTR)
		rc = secho_ctr_init(&s, k, iv);
	else if (mode == CFB)
		rc = secho_cfb_init(&s, k, iv);
	else
		rc = secho_ofb_init(&s, k, iv);
	size_t off = 0;
	while (!rc && off < len) {
		size_t n = next_piece(pattern, len - off);
		if (mode == CTR)
			rc = secho_ctr_update(&s, out + off, in + off, n);
		else if (mode == OFB)
			rc = secho_ofb_update(&s, out + off, in + off, n);
		else if (enc)
			rc = secho_cfb_encrypt(&s, out + off, in + off, n);
		else
			rc = secho_cfb_decrypt(&s, out + off, in + off, n);
		off += n;
	}
	secho_stream_wipe(&s);
	return rc;
}

static void check_bytes(const char *what, const struct kat *v, const uint8_t *exp,
                        const uint8_t *got, size_t n)
{
	if (!T_CHECK(memcmp(exp, got, n) == 0, "%s: %s mismatch", v->src, what)) {
		t_hexdump("expected", exp, n);
		t_hexdump("got", got, n);
	}
}

static void run_kat(secho_impl_id id, const struct kat *v)
{
	uint8_t key[32], iv[16], pt[MAXLEN], ct[MAXLEN], buf[MAXLEN];
	long kl = t_unhex(v->key, key, sizeof(key));
	long pl = t_unhex(v->pt, pt, sizeof(pt));
	long cl = t_unhex(v->ct, ct, sizeof(ct));
	if (v->iv)
		t_unhex(v->iv, iv, sizeof(iv));
	if (!T_CHECK(kl > 0 && pl > 0 && pl == cl, "%s: bad vector text", v->src))
		return;
	size_t len = (size_t)pl;
	secho_aes_key k;
	int rc = secho_aes_key_init(&k, key, (size_t)kl, id);
	if (!T_CHECK(rc == SECHO_OK, "%s: key init: %d", v->src, rc))
		return;
	T_CHECK(secho_aes_key_impl(&k) == id, "%s: key made with %s, asked for %s", v->src,
	        secho_impl_name(secho_aes_key_impl(&k)), secho_impl_name(id));
	const uint8_t *ivp = v->iv ? iv : NULL;
	int patterns = v->mode == ECB || v->mode == CBC ? 2 : 8; /* 2..7: random splits */
	for (int p = 0; p < patterns; p++) {
		int pat = p < 2 ? p : 2;
		char what[64];
		/* encrypt, out of place */
		memset(buf, 0xa5, sizeof(buf));
		rc = run_mode(&k, v->mode, true, ivp, buf, pt, len, pat);
		snprintf(what, sizeof(what), "%s encrypt (split pattern %d)", mode_name[v->mode],
		         p);
		T_CHECK(rc == SECHO_OK, "%s: %s returned %d", v->src, what, rc);
		check_bytes(what, v, ct, buf, len);
		/* decrypt, out of place */
		memset(buf, 0xa5, sizeof(buf));
		rc = run_mode(&k, v->mode, false, ivp, buf, ct, len, pat);
		snprintf(what, sizeof(what), "%s decrypt (split pattern %d)", mode_name[v->mode],
		         p);
		T_CHECK(rc == SECHO_OK, "%s: %s returned %d", v->src, what, rc);
		check_bytes(what, v, pt, buf, len);
		/* in place, both directions */
		memcpy(buf, pt, len);
		rc = run_mode(&k, v->mode, true, ivp, buf, buf, len, pat);
		snprintf(what, sizeof(what), "%s encrypt in place (pattern %d)", mode_name[v->mode],
		         p);
		T_CHECK(rc == SECHO_OK, "%s: %s returned %d", v->src, what, rc);
		check_bytes(what, v, ct, buf, len);
		rc = run_mode(&k, v->mode, false, ivp, buf, buf, len, pat);
		snprintf(what, sizeof(what), "%s decrypt in place (pattern %d)", mode_name[v->mode],
		         p);
		T_CHECK(rc == SECHO_OK, "%s: %s returned %d", v->src, what, rc);
		check_bytes(what, v, pt, buf, len);
	}
	/* The stream register after every prefix (secho_stream_get_iv), by the definitions in
	 * modes.h, from the vector's own blocks: with q whole blocks and r more bytes done,
	 * CTR: IV + q + (r > 0); OFB: O_(q + (r > 0)) = P ^ C of that block; CFB: C_q when
	 * r == 0, else C_(q+1)[0..r) then E(C_q)[r..16) = (P ^ C)_(q+1)[r..16). */
	if (v->mode == CTR || v->mode == CFB || v->mode == OFB) {
		secho_stream s;
		uint8_t o[MAXLEN], exp[16], got[16];
		rc = v->mode == CTR   ? secho_ctr_init(&s, &k, iv)
		     : v->mode == CFB ? secho_cfb_init(&s, &k, iv)
		                      : secho_ofb_init(&s, &k, iv);
		for (size_t n = 0; n <= len && !rc; n++) {
			size_t q = n / 16, r = n % 16, b = q + (r > 0); /* blocks touched */
			unsigned num = 99;
			rc = secho_stream_get_iv(&s, got, &num);
			if (v->mode == CTR) {
				memcpy(exp, iv, 16);
				for (size_t i = 0; i < b; i++)
					for (int j = 15; j >= 0 && ++exp[j] == 0; j--)
						;
			} else if (v->mode == OFB) {
				for (int j = 0; j < 16; j++)
					exp[j] = b ? (uint8_t)(pt[16 * (b - 1) + j] ^
					                       ct[16 * (b - 1) + j])
					           : iv[j];
			} else {
				for (int j = 0; j < 16; j++) {
					size_t at = 16 * q + (size_t)j;
					if (!r)
						exp[j] = q ? ct[at - 16] : iv[j];
					else
						exp[j] = (size_t)j < r ? ct[at]
						                       : (uint8_t)(pt[at] ^ ct[at]);
				}
			}
			T_CHECK(rc == SECHO_OK && num == r, "%s: get_iv after %zu bytes: %d num %u",
			        v->src, n, rc, num);
			check_bytes("stream register (secho_stream_get_iv)", v, exp, got, 16);
			if (n < len)
				rc = v->mode == CTR   ? secho_ctr_update(&s, o + n, pt + n, 1)
				     : v->mode == CFB ? secho_cfb_encrypt(&s, o + n, pt + n, 1)
				                      : secho_ofb_update(&s, o + n, pt + n, 1);
		}
		T_CHECK(rc == SECHO_OK, "%s: byte-by-byte run for get_iv: %d", v->src, rc);
		secho_stream_wipe(&s);
	}
	/* The chaining value handed back by CBC is the last ciphertext block. */
	if (v->mode == CBC) {
		uint8_t civ[16];
		memcpy(civ, iv, 16);
		secho_cbc_encrypt(&k, civ, buf, pt, len);
		check_bytes("CBC IV out (last C block)", v, ct + len - 16, civ, 16);
	}
	/* Single-block functions (every ECB vector is a sequence of independent blocks). */
	if (v->mode == ECB) {
		for (size_t off = 0; off < len; off += 16) {
			uint8_t b[16];
			rc = secho_aes_encrypt_block(&k, b, pt + off);
			T_CHECK(rc == SECHO_OK, "%s: encrypt_block %d", v->src, rc);
			check_bytes("encrypt_block", v, ct + off, b, 16);
			rc = secho_aes_decrypt_block(&k, b, ct + off);
			T_CHECK(rc == SECHO_OK, "%s: decrypt_block %d", v->src, rc);
			check_bytes("decrypt_block", v, pt + off, b, 16);
		}
	}
	secho_aes_key_wipe(&k);
}

int main(void)
{
	static const secho_impl_id ids[] = {SECHO_IMPL_PORTABLE, SECHO_IMPL_AESNI, SECHO_IMPL_VAES,
	                                    SECHO_IMPL_VAES_SPLIT};
	t_seed_init("test_modes_kat");
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		t_begin("modes KAT (FIPS-197 C, SP 800-38A F) %s", secho_impl_name(ids[i]));
		if (!secho_impl_available(ids[i])) {
			t_impl_unavailable(secho_impl_name(ids[i]));
			continue;
		}
		for (size_t j = 0; j < sizeof(kats) / sizeof(kats[0]); j++)
			run_kat(ids[i], &kats[j]);
		t_end();
	}
	return t_exit();
}
