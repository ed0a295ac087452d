/*
 * src/flow/core/hash.h - the flow key hashes: which bucket a flow lives in, its signature, and
 * which worker meters it.
 *
 * Three functions, chosen by measurement (docs/FLOW.md, "The hash"): xxHash's XXH3 (Debian's
 * libxxhash-dev, inlined), CRC32-C (the SSE4.2 instruction) and Toeplitz (the RSS hash NICs
 * compute). Each is keyed by a seed the table draws at random, so that traffic crafted
 * without the seed cannot pile flows into one bucket (XXH3 is the one for which that holds
 * against an adversary who sees which flows collide: CRC32-C and Toeplitz are linear, a
 * collision found under one seed is a collision under every seed).
 *
 * Symmetric (biflows): the key is put in a canonical order first (the lower of (address,
 * port) first: secho_flow_key_canon, src/flow/core/key.h), so both directions of a
 * conversation hash alike. Toeplitz is symmetric by
 * itself when its key repeats with a 16-bit period (the "symmetric RSS" key): addresses and
 * ports sit at offsets that differ by multiples of 16 bits in struct secho_flow_key.
 */
#ifndef SECHO_FLOW_HASH_H
#define SECHO_FLOW_HASH_H

#include <stdbool.h>
#include <stdint.h>

#include "flow/core/key.h"

#define SECHO_FLOW_HASHES(X)                                                                       \
	X(XXH3, "xxh3", "xxHash XXH3 64-bit, seeded")                                              \
	X(CRC32C, "crc32c", "CRC32-C (SSE4.2), seeded initial value")                              \
	X(TOEPLITZ, "toeplitz", "Toeplitz with a 16-bit-periodic random key (symmetric RSS)")

enum secho_flow_hash_kind {
#define SECHO_FLOW_HASH_X(name, id, text) SECHO_FLOW_HASH_##name,
	SECHO_FLOW_HASHES(SECHO_FLOW_HASH_X)
#undef SECHO_FLOW_HASH_X
	        SECHO_FLOW_HASH_COUNT
};

#define SECHO_FLOW_HASH_DEFAULT SECHO_FLOW_HASH_XXH3

struct secho_flow_hasher {
	enum secho_flow_hash_kind kind;
	uint64_t seed;
	uint32_t toeplitz[SECHO_FLOW_KEY_LEN][256]; /* per byte position and value (52 KiB) */
};

/* Set up a hasher of kind with seed. Returns 0, or -EINVAL for an unknown kind and
 * -ENOTSUP for CRC32-C on a CPU without SSE4.2. */
int secho_flow_hasher_init(struct secho_flow_hasher *h, enum secho_flow_hash_kind kind,
                           uint64_t seed);

/* 64 bits of hash of *k exactly as given (uniflows). Can't fail. */
uint64_t secho_flow_hash(const struct secho_flow_hasher *h, const struct secho_flow_key *k);

/* "xxh3" ... ; NULL when out of range. */
const char *secho_flow_hash_name(enum secho_flow_hash_kind kind);
/* Parse a name; false when unknown. */
bool secho_flow_hash_parse(const char *s, enum secho_flow_hash_kind *kind);

#endif
