/*
 * tests/unit/test_feat_bstats.c - the bstats feature set (src/flow/feature/bstats.h): packet
 * sequences whose bursts are worked out by hand below (gaps just under, at and just over
 * one second, microsecond precision, a candidate too short, empty packets), the bound of
 * 15 bursts, the export rule, the JSON.
 */
#include "harness.h"

#include "flow/feature/bstats.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define US 1000ull    /* ns per us */
#define MS 1000000ull /* ns per ms */

static struct secho_feat_pkt pkt(uint64_t ts, uint32_t len, uint8_t dir)
{
	struct secho_feat_pkt p = {
	        .ts_ns = ts, .len = len, .wire_len = len, .proto = 6, .dir = dir};
	return p;
}

static void feed(struct secho_feat_bstats *s, const struct secho_feat_pkt *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		secho_feat_bstats_packet(s, &p[i]);
}

int main(void)
{
	static struct secho_feat_bstats s;
	char js[8192];
	const uint64_t t0 = 1700000000ull * 1000 * MS;

	t_begin("bstats: bursts worked out by hand");
	/* forward:
	 *   a  t0              100   candidate 1: a
	 *   b  t0 + 500 ms     100   +0.5 s: b joins
	 *   c  t0 + 1499.999   100   +0.999999 s: joins -> 3 packets
	 *   d  t0 + 2500       100   +1.000001 s: closes candidate 1 = burst 0 {3, 300, a, c};
	 *                            candidate 2: d
	 *   e  t0 + 3499.999   100   +0.999999 s: joins -> 2 packets
	 *   f  t0 + 4499.999   100   +1.000000 s exactly: not < 1 s; candidate 2 (2 packets)
	 *                            dropped; candidate 3: f
	 *   g  t0 + 4500.5     200   joins
	 *   h  t0 + 4501         0   empty: not counted
	 *   i  t0 + 4502       300   joins -> 3 packets: burst 1 at export {3, 600, f, i}
	 * reverse:
	 *   j  t0 + 0.0005      50   candidate 1
	 *   k  t0 + 1000.0004   50   1000000.4 us - 0.5 us = 0.9999999 s, but at microsecond
	 *                            precision 1000000 - 0 = 1 s: not a continuation
	 *   l  t0 + 1000.5      50   joins k -> 2 packets: no burst */
	const struct secho_feat_pkt f[] = {
	        pkt(t0, 100, 0),
	        pkt(t0 + 500 * MS, 100, 0),
	        pkt(t0 + 1499999 * US, 100, 0),
	        pkt(t0 + 2500 * MS, 100, 0),
	        pkt(t0 + 3499999 * US, 100, 0),
	        pkt(t0 + 4499999 * US, 100, 0),
	        pkt(t0 + 4500500 * US, 200, 0),
	        pkt(t0 + 4501 * MS, 0, 0),
	        pkt(t0 + 4502 * MS, 300, 0),
	        pkt(t0 + 500, 50, 1),
	        pkt(t0 + 1000000400, 50, 1),
	        pkt(t0 + 1000500 * US, 50, 1),
	};
	memset(&s, 0, sizeof(s));
	feed(&s, f, sizeof(f) / sizeof(f[0]));
	T_CHECK(s.d[0].count == 1 && secho_feat_bstats_count(&s, 0) == 2,
	        "forward: 1 closed, 2 at export");
	T_CHECK(secho_feat_bstats_count(&s, 1) == 0, "reverse: none");
	int jn = secho_feat_bstats_json(&s, js, sizeof(js));
	char want[1024];
	snprintf(want, sizeof(want),
	         ",\"sbi_brst_packets\":[3,3],\"sbi_brst_bytes\":[300,600],"
	         "\"sbi_brst_time_start\":[%llu,%llu],\"sbi_brst_time_stop\":[%llu,%llu],"
	         "\"dbi_brst_packets\":[],\"dbi_brst_bytes\":[],\"dbi_brst_time_start\":[],"
	         "\"dbi_brst_time_stop\":[]",
	         (unsigned long long)t0, (unsigned long long)(t0 + 4499999 * US),
	         (unsigned long long)(t0 + 1499999 * US), (unsigned long long)(t0 + 4502 * MS));
	T_CHECK(jn == (int)strlen(want) && !strcmp(js, want), "json\n%s\nwant\n%s", js, want);
	T_CHECK(secho_feat_bstats_json(&s, js, (size_t)jn - 1) == -ENOSPC, "-ENOSPC");
	t_end();

	t_begin("bstats: at most 15 bursts per direction, then done");
	memset(&s, 0, sizeof(s));
	/* 20 bursts of 3 packets 10 ms apart, 2 s between bursts, in each direction */
	for (unsigned b = 0; b < 20; b++)
		for (unsigned k = 0; k < 3; k++)
			for (uint8_t d = 0; d < 2; d++) {
				struct secho_feat_pkt p =
				        pkt(t0 + b * 2000 * MS + k * 10 * MS, 10 + b, d);
				secho_feat_bstats_packet(&s, &p);
			}
	T_CHECK(s.d[0].count == 15 && s.d[1].count == 15 && s.done, "15 each, done");
	T_CHECK(secho_feat_bstats_count(&s, 0) == 15 && s.d[0].bytes[14] == 3 * 24 &&
	                s.d[0].start_ns[14] == t0 + 14 * 2000 * MS,
	        "the 15th is burst 14");
	t_end();

	t_begin("bstats: export rule, nothing seen");
	memset(&s, 0, sizeof(s));
	T_CHECK(secho_feat_bstats_json(&s, js, sizeof(js)) == 0, "nothing written");
	feed(&s, f, 2);
	T_CHECK(secho_feat_bstats_count(&s, 0) == 0 &&
	                secho_feat_bstats_json(&s, js, sizeof(js)) == 0,
	        "2 packets: no burst");
	T_CHECK(!secho_feat_bstats_keep(3) && secho_feat_bstats_keep(4), "more than 3 packets");
	t_end();
	return t_exit();
}
