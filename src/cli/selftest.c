/*
 * src/cli/selftest.c - `secho selftest`: known-answer tests for every implementation on
 * this CPU, then a cross-implementation consistency check on random messages.
 *
 * Vectors (hex, from the published documents):
 *   FIPS-197 Appendix C.1/C.2/C.3  AES-128/192/256 single block, encrypt and decrypt;
 *   NIST SP 800-38A F.5.5          CTR-AES256.Encrypt, four blocks;
 *   McGrew & Viega, "The Galois/Counter Mode of Operation", test cases 4 (AES-128) and
 *   16 (AES-256): 60-byte plaintext, 20-byte AAD, 96-bit IV.
 */
#include "cli/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "secho/gcm.h"
#include "secho/modes.h"

static const char *const CMD = "selftest";

static unsigned n_pass, n_fail, n_unavail;

static void report(bool ok, const char *what, const char *impl)
{
	printf("%-11s %-40s %s\n", ok ? "PASS" : "FAIL", what, impl);
	if (ok)
		n_pass++;
	else
		n_fail++;
}

/* Decode a compile-time hex constant; the vectors below are well formed. */
static size_t unhex(const char *s, uint8_t *out, size_t cap)
{
	uint8_t *b;
	size_t n;
	const char *why;
	if (!cli_parse_hex(s, &b, &n, &why) || n > cap) {
		free(b);
		return 0;
	}
	memcpy(out, b, n);
	free(b);
	return n;
}

static const struct {
	const char *name, *key, *pt, *ct;
} block_kats[] = {
        {"AES-128 block, FIPS-197 C.1", "000102030405060708090a0b0c0d0e0f",
         "00112233445566778899aabbccddeeff", "69c4e0d86a7b0430d8cdb78070b4c55a"},
        {"AES-192 block, FIPS-197 C.2", "000102030405060708090a0b0c0d0e0f1011121314151617",
         "00112233445566778899aabbccddeeff", "dda97ca4864cdfe06eaf70a0ec0d7191"},
        {"AES-256 block, FIPS-197 C.3",
         "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
         "00112233445566778899aabbccddeeff", "8ea2b7ca516745bfeafc49904b496089"},
};

static const char *const ctr_key =
        "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4";
static const char *const ctr_iv = "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";
static const char *const ctr_pt =
        "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
        "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710";
static const char *const ctr_ct =
        "601ec313775789a5b7a7f504bbf3d228f443e3ca4d62b59aca84e990cacaf5c5"
        "2b0930daa23de94ce87017ba2d84988ddfc9c58db67aada613c2dd08457941a6";

static const char *const mv_pt = "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
                                 "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39";
static const char *const mv_aad = "feedfacedeadbeeffeedfacedeadbeefabaddad2";
static const char *const mv_iv = "cafebabefacedbaddecaf888";
static const struct {
	const char *name, *key, *ct, *tag;
} gcm_kats[] = {
        {"AES-128-GCM, McGrew-Viega case 4", "feffe9928665731c6d6a8f9467308308",
         "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
         "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091",
         "5bc94fbc3221a5db94fae95ae7121a47"},
        {"AES-256-GCM, McGrew-Viega case 16",
         "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
         "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
         "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
         "76fc6ece0f4e1768cddf8853bb2d551b"},
};

static void kat_impl(secho_impl_id id)
{
	const char *in = secho_impl_name(id);
	uint8_t key[32] = {0}, pt[64] = {0}, ct[64] = {0}, iv[16] = {0}, aad[20] = {0};
	uint8_t tag[16] = {0}, out[64] = {0}, t2[16] = {0};
	size_t kl, pl, cl;

	for (size_t i = 0; i < sizeof(block_kats) / sizeof(block_kats[0]); i++) {
		secho_aes_key k;
		kl = unhex(block_kats[i].key, key, sizeof(key));
		unhex(block_kats[i].pt, pt, sizeof(pt));
		unhex(block_kats[i].ct, ct, sizeof(ct));
		bool ok = secho_aes_key_init(&k, key, kl, id) == SECHO_OK &&
		          secho_aes_key_impl(&k) == id;
		ok = ok && secho_aes_encrypt_block(&k, out, pt) == SECHO_OK && !memcmp(out, ct, 16);
		ok = ok && secho_aes_decrypt_block(&k, out, ct) == SECHO_OK && !memcmp(out, pt, 16);
		secho_aes_key_wipe(&k);
		report(ok, block_kats[i].name, in);
	}

	{
		secho_aes_key k;
		secho_stream s;
		kl = unhex(ctr_key, key, sizeof(key));
		unhex(ctr_iv, iv, sizeof(iv));
		pl = unhex(ctr_pt, pt, sizeof(pt));
		unhex(ctr_ct, ct, sizeof(ct));
		bool ok = secho_aes_key_init(&k, key, kl, id) == SECHO_OK;
		/* whole message, then split 7 + rest to exercise the partial keystream block */
		ok = ok && secho_ctr_init(&s, &k, iv) == SECHO_OK &&
		     secho_ctr_update(&s, out, pt, pl) == SECHO_OK && !memcmp(out, ct, pl);
		ok = ok && secho_ctr_init(&s, &k, iv) == SECHO_OK &&
		     secho_ctr_update(&s, out, pt, 7) == SECHO_OK &&
		     secho_ctr_update(&s, out + 7, pt + 7, pl - 7) == SECHO_OK &&
		     !memcmp(out, ct, pl);
		secho_stream_wipe(&s);
		secho_aes_key_wipe(&k);
		report(ok, "CTR-AES256, SP 800-38A F.5.5", in);
	}

	for (size_t i = 0; i < sizeof(gcm_kats) / sizeof(gcm_kats[0]); i++) {
		secho_gcm_key k;
		kl = unhex(gcm_kats[i].key, key, sizeof(key));
		pl = unhex(mv_pt, pt, sizeof(pt));
		cl = unhex(gcm_kats[i].ct, ct, sizeof(ct));
		unhex(gcm_kats[i].tag, tag, sizeof(tag));
		unhex(mv_iv, iv, sizeof(iv));
		unhex(mv_aad, aad, sizeof(aad));
		bool ok = cl == pl && secho_gcm_key_init(&k, key, kl, id) == SECHO_OK;
		ok = ok && secho_gcm_seal(&k, iv, 12, aad, 20, out, pt, pl, t2, 16) == SECHO_OK &&
		     !memcmp(out, ct, pl) && !memcmp(t2, tag, 16);
		ok = ok && secho_gcm_open(&k, iv, 12, aad, 20, out, ct, pl, tag, 16) == SECHO_OK &&
		     !memcmp(out, pt, pl);
		/* a flipped tag bit must be refused and release nothing */
		tag[15] ^= 1;
		ok = ok && secho_gcm_open(&k, iv, 12, aad, 20, out, ct, pl, tag, 16) == SECHO_EAUTH;
		for (size_t j = 0; ok && j < pl; j++)
			ok = out[j] == 0;
		secho_gcm_key_wipe(&k);
		report(ok, gcm_kats[i].name, in);
	}
}

/* One mode over msg with impl id; result into out (len bytes, + 16 tag for GCM). */
static bool run_one(int mode, secho_impl_id id, const uint8_t *key, size_t kl, const uint8_t *iv,
                    const uint8_t *msg, size_t len, uint8_t *out)
{
	secho_aes_key k;
	secho_gcm_key g;
	secho_stream s;
	uint8_t chain[16];
	int r;
	memcpy(chain, iv, 16);
	if (mode == 0) {
		if (secho_gcm_key_init(&g, key, kl, id) != SECHO_OK)
			return false;
		r = secho_gcm_seal(&g, iv, 12, iv + 12, 4, out, msg, len, out + len, 16);
		secho_gcm_key_wipe(&g);
		return r == SECHO_OK;
	}
	if (secho_aes_key_init(&k, key, kl, id) != SECHO_OK)
		return false;
	switch (mode) {
	case 1:
		r = secho_ecb_encrypt(&k, out, msg, len);
		break;
	case 2:
		r = secho_cbc_encrypt(&k, chain, out, msg, len);
		break;
	case 3:
		r = secho_pcbc_encrypt(&k, chain, out, msg, len);
		break;
	case 4:
		r = secho_ctr_init(&s, &k, chain);
		r = r ? r : secho_ctr_update(&s, out, msg, len);
		break;
	case 5:
		r = secho_cfb_init(&s, &k, chain);
		r = r ? r : secho_cfb_encrypt(&s, out, msg, len);
		break;
	default:
		r = secho_ofb_init(&s, &k, chain);
		r = r ? r : secho_ofb_update(&s, out, msg, len);
		break;
	}
	secho_aes_key_wipe(&k);
	return r == SECHO_OK;
}

static void cross_check(const secho_impl_id *ids, size_t nids)
{
	static const char *const names[] = {"gcm", "ecb", "cbc", "pcbc", "ctr", "cfb", "ofb"};
	enum { MSGS = 8, MAXLEN = 4096 };
	uint8_t *msg = malloc(MAXLEN), *ref = malloc(MAXLEN + 16), *got = malloc(MAXLEN + 16);
	uint8_t key[32], iv[16];
	char what[80];
	if (!msg || !ref || !got) {
		report(false, "cross-implementation check: out of memory", "");
		goto out;
	}
	for (int mode = 0; mode < 7; mode++) {
		bool ok = true;
		for (int m = 0; m < MSGS && ok; m++) {
			size_t len = 0, kl = 16 + 8 * (size_t)(m % 3);
			uint16_t r16;
			if (getrandom(&r16, sizeof(r16), 0) != (ssize_t)sizeof(r16) ||
			    getrandom(key, sizeof(key), 0) != (ssize_t)sizeof(key) ||
			    getrandom(iv, sizeof(iv), 0) != (ssize_t)sizeof(iv) ||
			    getrandom(msg, MAXLEN, 0) != (ssize_t)MAXLEN) {
				ok = false;
				break;
			}
			len = r16 % MAXLEN;
			if (m == 0)
				len = 0;
			if (mode >= 1 && mode <= 3)
				len &= ~(size_t)15;
			size_t olen = len + (mode == 0 ? 16 : 0);
			ok = run_one(mode, SECHO_IMPL_PORTABLE, key, kl, iv, msg, len, ref);
			for (size_t i = 0; ok && i < nids; i++) {
				if (ids[i] == SECHO_IMPL_PORTABLE)
					continue;
				memset(got, 0xa5, olen);
				ok = run_one(mode, ids[i], key, kl, iv, msg, len, got) &&
				     !memcmp(got, ref, olen);
			}
		}
		snprintf(what, sizeof(what), "%s: %d random messages agree", names[mode], MSGS);
		report(ok, what, "all impls vs portable");
	}
out:
	free(msg);
	free(ref);
	free(got);
}

static void help(void)
{
	printf("Usage: secho selftest [--impl auto|portable|aesni|vaes|vaes-split]\n\n"
	       "Run known-answer tests (FIPS-197 C.1-C.3, SP 800-38A F.5.5 CTR-AES256,\n"
	       "McGrew-Viega GCM cases 4 and 16) on each implementation (or only on --impl),\n"
	       "then check that every available implementation agrees with the portable one\n"
	       "on random messages in every mode. One line per check, then a summary.\n"
	       "An implementation the CPU lacks is reported UNAVAILABLE (not passed).\n\n"
	       "Exit status: 0 all checks passed, 1 a check failed, 2 bad usage.\n");
}

int cmd_selftest(int argc, char *argv[])
{
	static const struct option opts[] = {
	        {"impl", required_argument, NULL, 'I'},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	bool one = false;
	secho_impl_id only = SECHO_IMPL_AUTO;
	int c;
	while ((c = getopt_long(argc, argv, ":I:h", opts, NULL)) != -1) {
		switch (c) {
		case 'I':
			if (!cli_parse_impl(CMD, optarg, &only))
				return CLI_USAGE;
			only = secho_impl_resolve(only);
			one = true;
			break;
		case 'h':
			help();
			return CLI_OK;
		default:
			return cli_bad_option(CMD, c, argv);
		}
	}
	if (optind < argc)
		return cli_usage_err(CMD, "unexpected argument '%.64s'", argv[optind]);

	n_pass = n_fail = n_unavail = 0;
	size_t navail = 0;
	for (int i = SECHO_IMPL_PORTABLE; i < SECHO_IMPL_COUNT; i++) {
		secho_impl_id id = (secho_impl_id)i;
		if (one && id != only)
			continue;
		if (!secho_impl_available(id)) {
			printf("%-11s %-40s %s\n", "UNAVAILABLE", "all known-answer tests",
			       secho_impl_name(id));
			n_unavail++;
			continue;
		}
		navail++;
		kat_impl(id);
	}
	if (secho_impl_available(SECHO_IMPL_PORTABLE)) {
		if (navail > 1 || (one && only != SECHO_IMPL_PORTABLE)) {
			secho_impl_id ids[SECHO_IMPL_COUNT];
			size_t n = 0;
			for (int i = SECHO_IMPL_AESNI; i < SECHO_IMPL_COUNT; i++)
				if ((!one || i == (int)only) &&
				    secho_impl_available((secho_impl_id)i))
					ids[n++] = (secho_impl_id)i;
			cross_check(ids, n);
		} else {
			printf("%-11s %-40s %s\n", "UNAVAILABLE", "cross-implementation check",
			       "only one implementation to compare");
			n_unavail++;
		}
	} else {
		printf("%-11s %-40s %s\n", "UNAVAILABLE", "cross-implementation check",
		       "the portable reference is not built in");
		n_unavail++;
	}
	printf("\nselftest: %u passed, %u failed, %u unavailable\n", n_pass, n_fail, n_unavail);
	return n_fail || n_pass == 0 ? CLI_FAIL : CLI_OK;
}
