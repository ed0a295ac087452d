/*
 * tests/unit/test_feat_phists.c - the phists feature set (src/flow/feature/phists.h):
 * the bin edges, then a flow whose histograms are worked out by hand below (times floored
 * to milliseconds before they are subtracted, a time going backwards, empty packets),
 * saturation, the export rule, the JSON.
 */
#include "harness.h"

#include "flow/feature/phists.h"

#include <errno.h>
#include <string.h>

#define MS 1000000ull /* ns per ms */

static struct secho_feat_pkt pkt(uint64_t ts, uint32_t len, uint8_t dir)
{
	struct secho_feat_pkt p = {
	        .ts_ns = ts, .len = len, .wire_len = len, .proto = 17, .dir = dir};
	return p;
}

int main(void)
{
	static struct secho_feat_phists s;
	char js[4096];

	t_begin("phists: bin edges (ipfixprobe's)");
	static const struct {
		uint32_t v;
		unsigned bin;
	} e[] = {{0, 0},   {15, 0},   {16, 1},   {31, 1},    {32, 2},        {63, 2},
	         {64, 3},  {127, 3},  {128, 4},  {255, 4},   {256, 5},       {511, 5},
	         {512, 6}, {1023, 6}, {1024, 7}, {65535, 7}, {UINT32_MAX, 7}};
	for (size_t i = 0; i < sizeof(e) / sizeof(e[0]); i++)
		T_CHECK(secho_phists_bin(e[i].v) == e[i].bin, "%u: bin %u, want %u", e[i].v,
		        secho_phists_bin(e[i].v), e[i].bin);
	t_end();

	t_begin("phists: a flow worked out by hand");
	memset(&s, 0, sizeof(s));
	const uint64_t t0 = 1000000 * MS; /* 1000 s */
	/*  forward                          size bin   ipt (ms)         ipt bin
	 *  t0 + 0        0 bytes  skipped
	 *  t0 + 0       15                  0          (first)
	 *  t0 + 10      16                  1          10               0
	 *  t0 + 30      31                  1          20               1
	 *  t0 + 94      64                  3          64               3
	 *  t0 + 193.9 1023                  6          193 - 94 = 99    3   (floored first)
	 *  t0 + 2000  1024                  7          2000 - 193 = 1807 7
	 *  t0 + 1500   100                  3          backwards: 0     0
	 * reverse
	 *  t0 + 0.9999 1500                 7          (first)
	 *  t0 + 1.0001   40                 2          1 - 0 = 1         0   (0.0002 ms apart)
	 *  t0 + 17       0 bytes  skipped
	 */
	const struct secho_feat_pkt f[] = {
	        pkt(t0, 0, 0),
	        pkt(t0, 15, 0),
	        pkt(t0 + 10 * MS, 16, 0),
	        pkt(t0 + 30 * MS, 31, 0),
	        pkt(t0 + 94 * MS, 64, 0),
	        pkt(t0 + 193 * MS + 900000, 1023, 0),
	        pkt(t0 + 2000 * MS, 1024, 0),
	        pkt(t0 + 1500 * MS, 100, 0),
	        pkt(t0 + 999900, 1500, 1),
	        pkt(t0 + 1000100, 40, 1),
	        pkt(t0 + 17 * MS, 0, 1),
	};
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		secho_feat_phists_packet(&s, &f[i]);
	int jn = secho_feat_phists_json(&s, js, sizeof(js));
	const char *want =
	        ",\"s_phists_sizes\":[1,2,0,2,0,0,1,1],\"s_phists_ipt\":[2,1,0,2,0,0,0,1],"
	        "\"d_phists_sizes\":[0,0,1,0,0,0,0,1],\"d_phists_ipt\":[1,0,0,0,0,0,0,0]";
	T_CHECK(jn == (int)strlen(want) && !strcmp(js, want), "json\n%s\nwant\n%s", js, want);
	T_CHECK(secho_feat_phists_json(&s, js, (size_t)jn - 1) == -ENOSPC, "-ENOSPC");
	T_CHECK(!s.done, "never done");
	/* with zeroes: the two empty packets counted in bin 0, and their times taken */
	memset(&s, 0, sizeof(s));
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		secho_feat_phists_packet_opt(&s, &f[i], SECHO_PHISTS_INCLUDE_ZEROES);
	T_CHECK(s.d[0].size[0] == 2 && s.d[1].size[0] == 1, "zeroes counted");
	/* forward: the extra first packet adds an ipt of 0 (t0 to t0): bin 0 three times */
	T_CHECK(s.d[0].ipt[0] == 3, "forward ipt bin 0: %u", s.d[0].ipt[0]);
	/* reverse: 17 - 1 = 16 ms: bin 1 */
	T_CHECK(s.d[1].ipt[1] == 1 && s.d[1].ipt[0] == 1, "reverse ipt");
	t_end();

	t_begin("phists: saturation, export rule, nothing counted");
	memset(&s, 0, sizeof(s));
	T_CHECK(secho_feat_phists_json(&s, js, sizeof(js)) == 0,
	        "nothing counted, nothing written");
	s.d[0].size[7] = UINT32_MAX - 1;
	struct secho_feat_pkt big = pkt(0, 5000, 0);
	secho_feat_phists_packet(&s, &big);
	secho_feat_phists_packet(&s, &big);
	T_CHECK(s.d[0].size[7] == UINT32_MAX, "saturates");
	T_CHECK(!secho_feat_phists_keep(1, 0x02) && secho_feat_phists_keep(2, 0x02), "lone SYN");
	t_end();
	return t_exit();
}
