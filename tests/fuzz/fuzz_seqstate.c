/*
 * tests/fuzz/fuzz_seqstate.c - libFuzzer target over secho_seq_parse(), the sequence state
 * file parser (include/secho/seqstate.h).
 *
 * The format admits exactly one text per (key id, reserved mark): an accepted input must be
 * byte for byte the record this target formats itself from what was parsed, with its own
 * CRC-32 (bit by bit, IEEE 802.3). A refused one must come with a non-empty message.
 * The key id expected is 1 (the seed corpus's) or, so that mutations reach the mismatch
 * check too, the first byte of the input.
 *
 *   make fuzz && build/fuzz/fuzz_seqstate -max_total_time=20 tests/fuzz/corpus-seqstate
 */
#include "fuzz.h"

#include <secho/seqstate.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t naive_crc32(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	for (size_t i = 0; i < n; i++)
		for (int b = 0; b < 8; b++) {
			uint32_t bit = (c ^ (uint32_t)(p[i] >> b)) & 1u;
			c = (c >> 1) ^ (bit ? 0xedb88320u : 0);
		}
	return ~c;
}

static void one(const uint8_t *data, size_t size, uint16_t key_id)
{
	char err[512], rec[160];
	uint64_t hwm = 0;
	int rc;

	err[0] = '\0';
	rc = secho_seq_parse((const char *)data, size, "state", key_id, 0, &hwm, err, sizeof(err));
	CHECK(rc == 0 || rc < 0);
	if (rc < 0) {
		CHECK(err[0] != '\0');
		return;
	}
	int n = snprintf(rec, sizeof(rec), "secho-seq 1 key-id %u reserved %" PRIu64,
	                 (unsigned)key_id, hwm);
	n += snprintf(rec + n, sizeof(rec) - (size_t)n, " crc32 %08" PRIx32 "\n",
	              naive_crc32((const uint8_t *)rec, (size_t)n));
	CHECK((size_t)n == size && memcmp(rec, data, size) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 256)
		return 0; /* open() refuses a longer record before parsing */
	one(data, size, 1);
	if (size)
		one(data, size, data[0]);
	return 0;
}
