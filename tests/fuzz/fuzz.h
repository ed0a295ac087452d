/*
 * tests/fuzz/fuzz.h - what every libFuzzer target here shares: the entry point's
 * declaration and CHECK, which aborts (a crash libFuzzer keeps the input of) when an
 * invariant does not hold.
 */
#ifndef SECHO_FUZZ_H
#define SECHO_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "invariant failed: %s (%s:%d)\n", #c, __FILE__, __LINE__); \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
