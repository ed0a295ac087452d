/*
 * tests/fuzz/fuzz_wg.c - libFuzzer target over the wg feature set (src/flow/feature/wg.h):
 * the input as one message (whole and snapped) and as a flow of datagrams whose lengths and
 * directions come from the input.
 *
 * Invariants: a parsed type is 1-4 with its exact length; the state's conf is 0, 1 or 100;
 * new_session only with done; the JSON fits or says -ENOSPC.
 *
 *   make fuzz && build/fuzz/fuzz_wg -max_total_time=60 tests/fuzz/corpus-wg
 */
#include "fuzz.h"

#include "flow/feature/wg.h"

#include <errno.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct secho_wg_msg m;
	struct secho_feat_wg s;
	uint8_t *copy = malloc(size ? size : 1);
	CHECK(copy);
	memcpy(copy, data, size);

	int t = secho_wg_parse(copy, size, &m);
	CHECK(t >= 0 && t <= 4);
	if (t == 1)
		CHECK(size == 148);
	if (t == 2)
		CHECK(size == 92);
	if (t == 3)
		CHECK(size == 64);
	if (t == 4)
		CHECK(size >= 32);

	memset(&s, 0, sizeof(s));
	size_t pos = 0;
	unsigned step = 0;
	while (pos < size && step++ < 64) {
		size_t n = (size_t)copy[pos] * 2 + 1;
		if (n > size - pos)
			n = size - pos;
		struct secho_feat_pkt p = {.payload = copy + pos,
		                           .len = (uint32_t)n,
		                           .wire_len = (uint32_t)n + (copy[pos] & 1 ? 100 : 0),
		                           .proto = 17,
		                           .dir = (uint8_t)(step & 1)};
		secho_feat_wg_packet(&s, &p);
		CHECK(s.conf == 0 || s.conf == 1 || s.conf == 100);
		CHECK(!s.new_session || s.done);
		pos += n;
	}
	char js[128];
	int n = secho_feat_wg_json(&s, js, sizeof(js));
	CHECK(n >= 0);
	if (n > 0)
		CHECK(secho_feat_wg_json(&s, js, (size_t)n - 1) == -ENOSPC);
	free(copy);
	return 0;
}
