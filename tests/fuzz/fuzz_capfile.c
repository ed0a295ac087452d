/*
 * tests/fuzz/fuzz_capfile.c - libFuzzer target over the capture file reader
 * (include/secho/capfile.h): pcap and pcapng headers, blocks, interface descriptions and
 * their options (if_tsresol, if_tsoffset), packet blocks, Linux cooked records.
 *
 * Invariants, any violation aborts (and ASan/UBSan abort on any out-of-bounds read or
 * undefined arithmetic, such as a timestamp or offset that overflows):
 *  - every record handed out lies inside the input, is at most 256 KiB, and its wire length
 *    is at least its captured length; every byte of it is read;
 *  - the reading ends (a bounded number of records), and when it ends early the error is a
 *    non-empty line;
 *  - a clone started at the beginning reads the same records.
 *
 *   make fuzz && build/fuzz/fuzz_capfile -max_total_time=20 tests/fuzz/corpus-capfile
 */
#include "fuzz.h"

#include <secho/capfile.h>

#include <string.h>

static volatile unsigned sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct secho_capfile c, d;
	struct secho_cap_rec r, r2;
	char err[256];
	unsigned sum = 0;
	uint64_t n = 0;

	if (secho_capfile_open_mem(&c, data, size, err, sizeof(err)) != 0) {
		CHECK(err[0] && !strchr(err, '\n'));
		return 0;
	}
	CHECK(secho_capfile_clone(&c, &d) == 0);
	while (secho_capfile_next(&c, &r) == 1) {
		CHECK(r.data >= data && r.caplen <= size && r.data + r.caplen <= data + size);
		CHECK(r.caplen <= SECHO_CAP_MAX_RECORD && r.wirelen >= r.caplen);
		for (uint32_t i = 0; i < r.caplen; i++)
			sum += r.data[i];
		CHECK(secho_capfile_next(&d, &r2) == 1);
		CHECK(r2.data == r.data && r2.caplen == r.caplen && r2.wirelen == r.wirelen &&
		      r2.ts_ns == r.ts_ns);
		n++;
		CHECK(n <= size); /* every record takes at least one byte of the input */
	}
	CHECK(secho_capfile_next(&d, &r2) == 0);
	const char *e = secho_capfile_error(&c);
	CHECK(!e || (e[0] && !strchr(e, '\n')));
	CHECK(secho_capfile_progress(&c) >= 0.0 && secho_capfile_progress(&c) <= 1.0);
	secho_capfile_close(&d);
	secho_capfile_close(&c);
	sink = sum; /* the bytes are read, not optimised away */
	return 0;
}
