/*
 * src/wire/secure_header.c - the 16-byte secure header (docs/PROTOCOL.md, "Secure header").
 *
 *   0 version (1) | 1 flags | 2-3 key id | 4-7 salt | 8-15 sequence number, big-endian
 *
 * The whole header is the GCM AAD; bytes 4..15 are the 96-bit IV (SP 800-38D section 8.2.1,
 * deterministic construction: fixed field = salt, invocation field = sequence number).
 */
#include <secho/wire.h>

#include <errno.h>
#include <string.h>

void secho_shdr_build(uint8_t out[SECHO_SHDR_LEN], uint8_t flags, uint16_t key_id,
                      const uint8_t salt[SECHO_SALT_LEN], uint64_t seq)
{
	out[0] = SECHO_SHDR_VERSION;
	out[1] = flags;
	out[2] = (uint8_t)(key_id >> 8);
	out[3] = (uint8_t)key_id;
	memcpy(out + 4, salt, SECHO_SALT_LEN);
	for (int i = 0; i < 8; i++)
		out[8 + i] = (uint8_t)(seq >> (56 - 8 * i));
}

int secho_shdr_parse(const uint8_t in[SECHO_SHDR_LEN], struct secho_shdr *out)
{
	out->version = in[0];
	out->flags = in[1];
	out->key_id = (uint16_t)(in[2] << 8 | in[3]);
	memcpy(out->salt, in + 4, SECHO_SALT_LEN);
	uint64_t s = 0;
	for (int i = 0; i < 8; i++)
		s = s << 8 | in[8 + i];
	out->seq = s;
	if (in[0] != SECHO_SHDR_VERSION || (in[1] & ~SECHO_SHDR_F_MASK))
		return -EINVAL;
	return 0;
}

void secho_shdr_fixed(const uint8_t salt[SECHO_SALT_LEN], uint32_t instance,
                      uint8_t fixed[SECHO_SALT_LEN])
{
	for (int i = 0; i < SECHO_SALT_LEN; i++)
		fixed[i] = (uint8_t)(salt[i] ^ (instance >> (24 - 8 * i)));
}

void secho_shdr_iv(const uint8_t shdr[SECHO_SHDR_LEN], uint8_t iv[SECHO_IV_LEN])
{
	memcpy(iv, shdr + 4, SECHO_IV_LEN);
}

uint8_t secho_shdr_flags_for(enum secho_port_class cls)
{
	switch (cls) {
	case SECHO_PORT_OFFLOAD:
		return SECHO_SHDR_F_OFFLOAD;
	case SECHO_PORT_COUNTERS:
		return SECHO_SHDR_F_COUNTERS;
	case SECHO_PORT_STREAM:
	default:
		return 0;
	}
}
