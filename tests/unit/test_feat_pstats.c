/*
 * tests/unit/test_feat_pstats.c - the pstats feature set (src/flow/feature/pstats.h): a TCP
 * flow's handshake, data both ways and its end, with the lists worked out by hand below;
 * the include-zeroes option, the bound of 30, the export rule, the JSON.
 *
 * With SECHO_FEAT_PCAP=file set, it instead prints one JSON line per flow of that capture
 * with the pstats, phists and bstats members (default options), for
 * tests/sh/test_feat_stats.sh, which compares them with its own computation from tshark.
 */
#include "featcap.h"
#include "harness.h"

#include "flow/feature/bstats.h"
#include "flow/feature/phists.h"
#include "flow/feature/pstats.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PC_FLOWS FEATCAP_MAX_FLOWS
static struct {
	struct secho_feat_pstats ps;
	struct secho_feat_phists ph;
	struct secho_feat_bstats bs;
	struct secho_feat_pkt first;
	unsigned pkts;
} pc[PC_FLOWS];

static void pc_fn(void *arg, unsigned f, const struct secho_feat_pkt *p)
{
	(void)arg;
	if (!pc[f].pkts++)
		pc[f].first = *p;
	secho_feat_pstats_packet(&pc[f].ps, p);
	secho_feat_phists_packet(&pc[f].ph, p);
	secho_feat_bstats_packet(&pc[f].bs, p);
}

static int pcap_mode(const char *path)
{
	char err[256];
	static char a[16384], b[4096], c[16384];
	int n = featcap_run(path, pc_fn, NULL, err, sizeof(err));
	if (n < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	for (int f = 0; f < n; f++) {
		if (secho_feat_pstats_json(&pc[f].ps, a, sizeof(a)) < 0 ||
		    secho_feat_phists_json(&pc[f].ph, b, sizeof(b)) < 0 ||
		    secho_feat_bstats_json(&pc[f].bs, c, sizeof(c)) < 0)
			return 1;
		printf("{\"flow\":%d,\"proto\":%u,\"sport\":%u,\"dport\":%u,\"packets\":%u%s%s%s}"
		       "\n",
		       f, pc[f].first.proto, pc[f].first.sport, pc[f].first.dport, pc[f].pkts, a, b,
		       c);
	}
	return 0;
}

#define S 1000000000ull /* ns per second */

static struct secho_feat_pkt tcp(uint64_t ts, uint32_t len, uint8_t dir, uint8_t flags)
{
	struct secho_feat_pkt p = {.ts_ns = ts,
	                           .len = len,
	                           .wire_len = len,
	                           .proto = 6,
	                           .dir = dir,
	                           .tcp_flags = flags};
	return p;
}

int main(void)
{
	const char *pcap = getenv("SECHO_FEAT_PCAP");
	if (pcap && *pcap)
		return pcap_mode(pcap);
	static struct secho_feat_pstats s;
	char js[8192];
	/* a connection: SYN, SYN-ACK, ACK (no payload), a request of 120 bytes (PSH ACK), its ACK,
	 * a response of 1448 + 300 bytes, FIN both ways */
	const struct secho_feat_pkt flow[] = {
	        tcp(10 * S + 0, 0, 0, 0x02),        tcp(10 * S + 1000, 0, 1, 0x12),
	        tcp(10 * S + 2000, 0, 0, 0x10),     tcp(10 * S + 3000, 120, 0, 0x18),
	        tcp(10 * S + 900000, 0, 1, 0x10),   tcp(10 * S + 950000, 1448, 1, 0x10),
	        tcp(10 * S + 950500, 300, 1, 0x18), tcp(11 * S, 0, 0, 0x11),
	        tcp(11 * S + 7, 0, 1, 0x11),
	};
	const size_t n = sizeof(flow) / sizeof(flow[0]);

	t_begin("pstats: a TCP connection, empty packets skipped (the default)");
	memset(&s, 0, sizeof(s));
	T_CHECK(secho_feat_pstats_json(&s, js, sizeof(js)) == 0,
	        "nothing recorded, nothing written");
	for (size_t i = 0; i < n; i++)
		secho_feat_pstats_packet(&s, &flow[i]);
	/* by hand: the request (fwd, 120, PSH ACK), the two response segments (rev) */
	T_CHECK(s.count == 3 && !s.done, "3 packets with payload: %u", s.count);
	int jn = secho_feat_pstats_json(&s, js, sizeof(js));
	const char *want = ",\"ppi_pkt_lengths\":[120,1448,300],"
	                   "\"ppi_pkt_times\":[10000003000,10000950000,10000950500],"
	                   "\"ppi_pkt_flags\":[24,16,24],\"ppi_pkt_directions\":[1,-1,-1]";
	T_CHECK(jn == (int)strlen(want) && !strcmp(js, want), "json\n%s\nwant\n%s", js, want);
	for (size_t cap = 0; cap < (size_t)jn; cap += 9)
		T_CHECK(secho_feat_pstats_json(&s, js, cap) == -ENOSPC, "cap %zu", cap);
	t_end();

	t_begin("pstats: include zeroes");
	memset(&s, 0, sizeof(s));
	for (size_t i = 0; i < n; i++)
		secho_feat_pstats_packet_opt(&s, &flow[i], SECHO_PSTATS_INCLUDE_ZEROES);
	T_CHECK(s.count == 9, "all 9: %u", s.count);
	jn = secho_feat_pstats_json(&s, js, sizeof(js));
	T_CHECK(jn > 0 && strstr(js, "\"ppi_pkt_lengths\":[0,0,0,120,0,1448,300,0,0]") &&
	                strstr(js, "\"ppi_pkt_flags\":[2,18,16,24,16,16,24,17,17]") &&
	                strstr(js, "\"ppi_pkt_directions\":[1,-1,1,1,-1,-1,-1,1,-1]"),
	        "json %s", js);
	t_end();

	t_begin("pstats: the first 30, then done; sizes and transports");
	memset(&s, 0, sizeof(s));
	for (unsigned i = 0; i < 40; i++) {
		struct secho_feat_pkt p = tcp(i * S, 100 + i, (uint8_t)(i % 3 == 2), 0x18);
		if (i == 5) {
			p.proto = 17;
			p.wire_len = 70000; /* more than a u16: clamped */
		}
		secho_feat_pstats_packet(&s, &p);
		T_CHECK(s.done == (i >= 29), "packet %u: done %u", i, s.done);
	}
	T_CHECK(s.count == SECHO_PSTATS_MAX && s.pkt[29].size == 129 &&
	                secho_pstats_ts(&s.pkt[29]) == 29 * S,
	        "30 kept, the 30th is packet 29");
	T_CHECK(s.pkt[5].size == 65535 && s.pkt[5].flags == 0, "UDP: 65535 at most, no flags");
	T_CHECK(s.pkt[2].dir == -1 && s.pkt[3].dir == 1, "directions");
	t_end();

	t_begin("pstats: the export rule (a lone SYN has none)");
	T_CHECK(!secho_feat_pstats_keep(1, 0x02) && !secho_feat_pstats_keep(0, 0x02), "lone SYN");
	T_CHECK(secho_feat_pstats_keep(2, 0x02) && secho_feat_pstats_keep(1, 0x10) &&
	                secho_feat_pstats_keep(1, 0),
	        "others kept");
	t_end();
	return t_exit();
}
