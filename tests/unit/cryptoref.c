/*
 * tests/unit/cryptoref.c - the crypto tests' shared references (see cryptoref.h).
 */
#include "cryptoref.h"

#include <openssl/evp.h>
#include <string.h>

static EVP_CIPHER_CTX *ctx(void)
{
	static EVP_CIPHER_CTX *x;

	if (!x)
		x = EVP_CIPHER_CTX_new();
	return x;
}

/* The EVP cipher for mode and key length; NULL for anything else. */
static const EVP_CIPHER *cipher(char mode, size_t kl)
{
	int i = kl == 16 ? 0 : kl == 24 ? 1 : kl == 32 ? 2 : -1;

	if (i < 0)
		return NULL;
	switch (mode) {
	case 'e':
		return (const EVP_CIPHER *[]){EVP_aes_128_ecb(), EVP_aes_192_ecb(),
		                              EVP_aes_256_ecb()}[i];
	case 'c':
		return (const EVP_CIPHER *[]){EVP_aes_128_cbc(), EVP_aes_192_cbc(),
		                              EVP_aes_256_cbc()}[i];
	case 't':
		return (const EVP_CIPHER *[]){EVP_aes_128_ctr(), EVP_aes_192_ctr(),
		                              EVP_aes_256_ctr()}[i];
	case 'f':
		return (const EVP_CIPHER *[]){EVP_aes_128_cfb128(), EVP_aes_192_cfb128(),
		                              EVP_aes_256_cfb128()}[i];
	case 'o':
		return (const EVP_CIPHER *[]){EVP_aes_128_ofb(), EVP_aes_192_ofb(),
		                              EVP_aes_256_ofb()}[i];
	case 'g':
		return (const EVP_CIPHER *[]){EVP_aes_128_gcm(), EVP_aes_192_gcm(),
		                              EVP_aes_256_gcm()}[i];
	default:
		return NULL;
	}
}

/* Contract: cryptoref.h. */
bool ref_evp(char mode, const uint8_t *key, size_t kl, const uint8_t *iv, int enc, uint8_t *out,
             const uint8_t *in, size_t len)
{
	EVP_CIPHER_CTX *x = ctx();
	const EVP_CIPHER *c = cipher(mode, kl);
	uint8_t tail[16];
	int n1 = 0, n2 = 0;

	if (!x || !c || mode == 'g' || EVP_CipherInit_ex(x, c, NULL, key, iv, enc) != 1)
		return false;
	EVP_CIPHER_CTX_set_padding(x, 0);
	if (len && EVP_CipherUpdate(x, out, &n1, in, (int)len) != 1)
		return false;
	/* Nothing is left over without padding: the final call writes no byte. */
	if (EVP_CipherFinal_ex(x, tail, &n2) != 1 || n2 != 0)
		return false;
	return (size_t)n1 == len;
}

/* Contract: cryptoref.h. */
bool ref_evp_gcm_seal(const uint8_t *key, size_t kl, const uint8_t *iv, size_t iv_len,
                      const uint8_t *aad, size_t aad_len, uint8_t *out, const uint8_t *in,
                      size_t len, uint8_t tag[16])
{
	EVP_CIPHER_CTX *x = ctx();
	const EVP_CIPHER *c = cipher('g', kl);
	int n = 0;

	if (!x || !c || EVP_EncryptInit_ex(x, c, NULL, NULL, NULL) != 1 ||
	    EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_SET_IVLEN, (int)iv_len, NULL) != 1 ||
	    EVP_EncryptInit_ex(x, NULL, NULL, key, iv) != 1)
		return false;
	if (aad_len && EVP_EncryptUpdate(x, NULL, &n, aad, (int)aad_len) != 1)
		return false;
	if (len && EVP_EncryptUpdate(x, out, &n, in, (int)len) != 1)
		return false;
	if (EVP_EncryptFinal_ex(x, out + len, &n) != 1)
		return false;
	return EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_GET_TAG, 16, tag) == 1;
}

/* Contract: cryptoref.h. */
void ref_gf_mul(uint8_t z_out[16], const uint8_t x[16], const uint8_t y[16])
{
	uint8_t z[16] = {0}, v[16];

	memcpy(v, y, 16);
	for (int i = 0; i < 128; i++) {
		if ((x[i / 8] >> (7 - i % 8)) & 1) /* bit i of X, leftmost first */
			for (int j = 0; j < 16; j++)
				z[j] ^= v[j];
		int lsb = v[15] & 1; /* rightmost bit of V */
		for (int j = 15; j > 0; j--)
			v[j] = (uint8_t)((v[j] >> 1) | (v[j - 1] << 7));
		v[0] >>= 1;
		if (lsb)
			v[0] ^= 0xE1; /* R = 11100001 || 0^120 */
	}
	memcpy(z_out, z, 16);
}

/* Contract: cryptoref.h. */
void ref_ghash(const uint8_t h[16], uint8_t y[16], const uint8_t *in, size_t nblocks)
{
	for (size_t i = 0; i < nblocks; i++) {
		uint8_t t[16];

		secho_xor16(t, y, in + 16 * i);
		ref_gf_mul(y, t, h);
	}
}

/* Contract: cryptoref.h. */
void ref_mk_aes(secho_aes_key *k, const struct secho_aes_impl *a, const uint8_t *key, size_t kl)
{
	memset(k, 0, sizeof(*k));
	k->impl = a;
	k->key_len = (unsigned)kl;
	k->rounds = (unsigned)(kl / 4 + 6);
	a->keysched(k, key, kl);
}

/* Contract: cryptoref.h. */
void ref_mk_gcm(secho_gcm_key *k, const struct secho_gcm_impl *g, const uint8_t *key, size_t kl)
{
	memset(k, 0, sizeof(*k));
	ref_mk_aes(&k->aes, g->aes, key, kl);
	k->impl = g;
	g->hinit(k);
}

/* Contract: cryptoref.h. */
void ref_sentinel_fill(uint8_t *p, size_t n)
{
	memset(p, REF_SENTINEL, n);
}

/* Contract: cryptoref.h. */
bool ref_sentinel_ok(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != REF_SENTINEL)
			return false;
	return true;
}
