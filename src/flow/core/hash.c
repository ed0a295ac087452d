/*
 * src/flow/core/hash.c - the flow key hashes (src/flow/core/hash.h).
 *
 * XXH3 is compiled inline from Debian's xxhash.h (XXH_INLINE_ALL): for a 52-byte key of
 * known length it is a handful of multiplies, no call. CRC32-C uses the SSE4.2 instruction,
 * enabled for its one function (the rest of the tree builds for baseline x86-64). Toeplitz
 * is table-driven: for each key byte position and value, the XOR of the 32-bit key windows
 * its set bits select, so a hash is 52 table loads.
 */
#include "flow/core/hash.h"
#include "sys/names.h"

#include <errno.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cpuid.h>
#include <nmmintrin.h>

static const char *const hash_names[] = {SECHO_FLOW_HASHES(SECHO_X_ID)};

const char *secho_flow_hash_name(enum secho_flow_hash_kind kind)
{
	return SECHO_NAME_AT(hash_names, kind, NULL);
}

bool secho_flow_hash_parse(const char *s, enum secho_flow_hash_kind *kind)
{
	for (unsigned i = 0; i < SECHO_FLOW_HASH_COUNT; i++)
		if (!strcmp(s, hash_names[i])) {
			*kind = (enum secho_flow_hash_kind)i;
			return true;
		}
	return false;
}

static bool cpu_has_sse42(void)
{
	unsigned a, b, c, d;

	if (!__get_cpuid(1, &a, &b, &c, &d))
		return false;
	return (c & bit_SSE4_2) != 0;
}

/* Toeplitz: bit i of the input (MSB first) selects the 32-bit window of the key starting at
 * key bit i. The key is the 16-bit pattern k16 repeated, so a window depends only on i mod
 * 16, and fields that are multiples of 16 bits apart contribute alike wherever they sit. */
static uint32_t toeplitz_window(uint16_t k16, unsigned i)
{
	uint64_t pat = 0;

	for (int r = 0; r < 4; r++)
		pat = pat << 16 | k16;
	/* 64 bits of the periodic key starting at bit (i mod 16) of the pattern */
	unsigned s = i % 16;
	return (uint32_t)((pat << s) >> 32);
}

int secho_flow_hasher_init(struct secho_flow_hasher *h, enum secho_flow_hash_kind kind,
                           uint64_t seed)
{
	if ((unsigned)kind >= SECHO_FLOW_HASH_COUNT)
		return -EINVAL;
	if (kind == SECHO_FLOW_HASH_CRC32C && !cpu_has_sse42())
		return -ENOTSUP;
	h->kind = kind;
	h->seed = seed;
	if (kind != SECHO_FLOW_HASH_TOEPLITZ)
		return 0;
	uint16_t k16 = (uint16_t)(seed ^ seed >> 16 ^ seed >> 32 ^ seed >> 48);
	if (!k16)
		k16 = 0x6d5a; /* the well-known symmetric RSS pattern */
	for (unsigned pos = 0; pos < SECHO_FLOW_KEY_LEN; pos++) {
		uint32_t w[8];
		for (unsigned b = 0; b < 8; b++)
			w[b] = toeplitz_window(k16, pos * 8 + b);
		for (unsigned v = 0; v < 256; v++) {
			uint32_t x = 0;
			for (unsigned b = 0; b < 8; b++)
				if (v & (0x80u >> b))
					x ^= w[b];
			h->toeplitz[pos][v] = x;
		}
	}
	return 0;
}

__attribute__((target("sse4.2"))) static uint64_t crc32c_key(uint64_t seed, const uint8_t *p)
{
	uint64_t c = (uint32_t)seed, c2 = (uint32_t)(seed >> 32), w;

	/* 52 bytes: six 8-byte words and one 4-byte word; two independent chains give the
	 * 64 bits the table wants (bucket index and signature). */
	_Static_assert(SECHO_FLOW_KEY_LEN == 52, "crc32c_key reads 52 bytes");
	for (int i = 0; i < 6; i++) {
		memcpy(&w, p + 8 * i, 8);
		c = _mm_crc32_u64(c, w);
		c2 = _mm_crc32_u64(c2, w ^ 0x9e3779b97f4a7c15ull);
	}
	uint32_t t;
	memcpy(&t, p + 48, 4);
	c = _mm_crc32_u32((uint32_t)c, t);
	c2 = _mm_crc32_u32((uint32_t)c2, t);
	return c2 << 32 | c;
}

uint64_t secho_flow_hash(const struct secho_flow_hasher *h, const struct secho_flow_key *k)
{
	const uint8_t *p = (const uint8_t *)k;

	switch (h->kind) {
	case SECHO_FLOW_HASH_CRC32C:
		return crc32c_key(h->seed, p);
	case SECHO_FLOW_HASH_TOEPLITZ: {
		uint32_t x = 0;
		for (unsigned i = 0; i < SECHO_FLOW_KEY_LEN; i++)
			x ^= h->toeplitz[i][p[i]];
		/* 32 bits of hash: the bucket index takes the high half, the signature the
		 * low one; spread the one over both. */
		return (uint64_t)x << 32 | (uint32_t)(x * 0x9e3779b1u);
	}
	default:
		return XXH3_64bits_withSeed(p, SECHO_FLOW_KEY_LEN, h->seed);
	}
}
