/*
 * tests/fuzz/fuzz_keyfile.c - libFuzzer target over secho_keyfile_parse(), the key file
 * parser (include/secho/keyfile.h, docs/PROTOCOL.md "Key file").
 *
 * Invariants, any violation aborts:
 *  - refused: the output struct is all zeros (wiped), the message is a NUL-terminated,
 *    non-empty line that quotes no key material (no run of 8 or more hex digits);
 *  - accepted: the canonical text of what was parsed ("secho-key 1", key-id, key, salt, in
 *    lower case) parses again to the same values.
 *
 *   make fuzz && build/fuzz/fuzz_keyfile -max_total_time=20 tests/fuzz/corpus-keyfile
 */
#include "fuzz.h"

#include <secho/keyfile.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest run of hex digits in s. */
static size_t hex_run(const char *s)
{
	size_t best = 0, cur = 0;

	for (; *s; s++) {
		cur = isxdigit((unsigned char)*s) ? cur + 1 : 0;
		if (cur > best)
			best = cur;
	}
	return best;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct secho_keyfile k, k2;
	static const struct secho_keyfile zero;
	char err[256], err2[256], text[256];
	int rc;

	if (size > SECHO_KEYFILE_MAX)
		return 0; /* load() refuses larger files before parsing */
	memset(err, 'x', sizeof(err));
	memset(&k, 0x5a, sizeof(k));
	rc = secho_keyfile_parse((const char *)data, size, &k, err, sizeof(err));
	CHECK(rc == 0 || rc < 0);
	if (rc < 0) {
		CHECK(memchr(err, '\0', sizeof(err)) != NULL);
		CHECK(err[0] != '\0' && strchr(err, '\n') == NULL);
		CHECK(hex_run(err) < 8);
		CHECK(memcmp(&k, &zero, sizeof(k)) == 0);
		return 0;
	}
	int n = snprintf(text, sizeof(text), "secho-key 1\nkey-id %u\nkey ", (unsigned)k.key_id);
	for (int i = 0; i < SECHO_KEY_LEN; i++)
		n += snprintf(text + n, sizeof(text) - (size_t)n, "%02x", k.key[i]);
	n += snprintf(text + n, sizeof(text) - (size_t)n, "\nsalt ");
	for (int i = 0; i < SECHO_SALT_LEN; i++)
		n += snprintf(text + n, sizeof(text) - (size_t)n, "%02x", k.salt[i]);
	n += snprintf(text + n, sizeof(text) - (size_t)n, "\n");
	CHECK(secho_keyfile_parse(text, (size_t)n, &k2, err2, sizeof(err2)) == 0);
	CHECK(k2.key_id == k.key_id && !memcmp(k2.key, k.key, sizeof(k.key)) &&
	      !memcmp(k2.salt, k.salt, sizeof(k.salt)));
	secho_keyfile_wipe(&k);
	secho_keyfile_wipe(&k2);
	return 0;
}
