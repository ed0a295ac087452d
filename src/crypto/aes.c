/*
 * src/crypto/aes.c - public AES key and block functions: argument checks, then the
 * implementation table the key was made with.
 */
#include "crypto/inner.h"

void secho_wipe(void *p, size_t n)
{
	if (p && n)
		explicit_bzero(p, n); /* glibc: not removed by dead-store elimination */
}

int secho_aes_key_init(secho_aes_key *k, const uint8_t *key, size_t key_len, secho_impl_id impl)
{
	if (!k || !key || (key_len != 16 && key_len != 24 && key_len != 32) ||
	    (unsigned)impl >= SECHO_IMPL_COUNT)
		return SECHO_EINVAL;
	const struct secho_aes_impl *a = secho_aes_impl_get(impl);
	if (!a)
		return SECHO_EUNAVAIL;
	memset(k, 0, sizeof(*k));
	k->impl = a;
	k->key_len = (unsigned)key_len;
	k->rounds = (unsigned)(key_len / 4 + 6);
	a->keysched(k, key, key_len);
	return SECHO_OK;
}

void secho_aes_key_wipe(secho_aes_key *k)
{
	secho_wipe(k, sizeof(*k));
}

secho_impl_id secho_aes_key_impl(const secho_aes_key *k)
{
	return k && k->impl ? k->impl->id : SECHO_IMPL_AUTO;
}

int secho_aes_encrypt_block(const secho_aes_key *k, uint8_t out[16], const uint8_t in[16])
{
	if (!k || !k->impl || !out || !in)
		return SECHO_EINVAL;
	k->impl->ecb_enc(k, out, in, 1);
	return SECHO_OK;
}

int secho_aes_decrypt_block(const secho_aes_key *k, uint8_t out[16], const uint8_t in[16])
{
	if (!k || !k->impl || !out || !in)
		return SECHO_EINVAL;
	k->impl->ecb_dec(k, out, in, 1);
	return SECHO_OK;
}
