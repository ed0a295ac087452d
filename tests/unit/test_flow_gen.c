/*
 * tests/unit/test_flow_gen.c - the traffic generator's library part (src/traffic/gen.h).
 *
 *   - the FlowTest CSV reader: the format's shapes accepted (header in any order, optional
 *     SRC_IP/DST_IP, negative and fractional times, comments, blank lines, spaces, CRLF,
 *     unsorted rows: sorted and rebased), every kind of bad row rejected with its line;
 *   - determinism: the same profile and seed give the same frames and flows (a digest of
 *     everything handed out), another seed different ones, for every built-in profile;
 *   - internal consistency: flows' packets and octets add up to the totals, every frame is
 *     counted once, timestamps strictly increase, statistical profiles give exactly the
 *     packets asked for;
 *   - unknown profiles and missing files are errors with a message.
 * End to end (files, the truth against an independent recount): tests/sh/test_flow_gen.sh.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "secho/dissect.h"
#include "secho/wire.h"
#include "traffic/gen.h"

static int read_csv(const char *text, struct secho_gen_csv_row **rows, size_t *n, char *err,
                    size_t errlen)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	if (!f)
		return -errno;
	int rc = secho_gen_csv_read(f, "p.csv", rows, n, err, errlen);
	fclose(f);
	return rc;
}

static void test_csv_accept(void)
{
	t_begin("flow gen: FlowTest CSV rows accepted");
	struct secho_gen_csv_row *r = NULL;
	size_t n = 0;
	char err[256] = "";
	/* The shapes of FlowTest's published profiles: unsorted rows, negative start times
	 * (flows older than the window), ICMP rows with ports, IPv6, comment lines. */
	const char *a = "# comment\n"
	                "START_TIME,END_TIME,L3_PROTO,L4_PROTO,SRC_PORT,DST_PORT,PACKETS,BYTES,"
	                "PACKETS_REV,BYTES_REV\n"
	                "64230,66230,4,1,0,0,3,252,0,0\n"
	                "-1,0,4,6,445,51572,2,316,2,281\n"
	                "\n"
	                "-3662,-3662,4,17,53,38176,1,84,1,68\n"
	                "0,28354,4,1,58428,1443,318,427066,100,134222\n"
	                "# another comment\n"
	                "-4729,24,6,58,0,0,1,72,1,64\n";
	int rc = read_csv(a, &r, &n, err, sizeof(err));
	T_CHECK(rc == 0, "rc %d: %s", rc, err);
	T_CHECK(n == 5, "rows %zu", n);
	if (rc == 0 && n == 5 && r) {
		/* Sorted by start, rebased on the earliest (-4729 ms). */
		T_CHECK(r[0].start_us == 0 && r[0].line == 9, "first row: %lld line %u",
		        (long long)r[0].start_us, r[0].line);
		T_CHECK(r[0].end_us == 4753000, "first end %lld", (long long)r[0].end_us);
		T_CHECK(r[1].line == 6 && r[2].line == 4 && r[3].line == 7 && r[4].line == 3,
		        "order %u %u %u %u", r[1].line, r[2].line, r[3].line, r[4].line);
		T_CHECK(r[4].start_us == (64230 + 4729) * 1000LL, "last start");
		T_CHECK(r[2].proto == 6 && r[2].sport == 445 && r[2].dport == 51572 &&
		                r[2].packets == 2 && r[2].bytes == 316 && r[2].packets_rev == 2 &&
		                r[2].bytes_rev == 281,
		        "row fields");
		T_CHECK(r[0].ip_version == 6 && r[0].proto == 58, "IPv6 row");
	}
	free(r);
	r = NULL;

	/* ft-generator's report shape as a profile: addresses first, fractional times; the
	 * header in another order, spaces, CRLF, an empty address = generated. */
	const char *b = "SRC_IP,DST_IP,START_TIME,END_TIME,L3_PROTO,L4_PROTO,SRC_PORT,DST_PORT,"
	                "PACKETS,BYTES,PACKETS_REV,BYTES_REV\r\n"
	                "198.51.100.1, 203.0.113.9 ,0.000,900314.000,4,1,0,0,17,25632,17,25632\r\n"
	                "2001:db8::1,,268465.125,273218.5,6,17,,53,1,72,1,72\r\n";
	rc = read_csv(b, &r, &n, err, sizeof(err));
	T_CHECK(rc == 0 && n == 2, "rc %d n %zu: %s", rc, n, err);
	if (rc == 0 && n == 2 && r) {
		T_CHECK(r[0].has_src && r[0].has_dst && r[0].src[0] == 198 && r[0].dst[3] == 9,
		        "IPv4 addresses");
		T_CHECK(r[1].has_src && !r[1].has_dst && r[1].src[0] == 0x20 && r[1].src[15] == 1,
		        "IPv6 address, generated peer");
		T_CHECK(r[1].start_us == 268465125 && r[1].end_us == 273218500,
		        "fractions %lld %lld", (long long)r[1].start_us, (long long)r[1].end_us);
		T_CHECK(r[1].sport == 0 && r[1].dport == 53, "empty port is 0");
	}
	free(r);
	t_end();
}

static void test_csv_reject(void)
{
	t_begin("flow gen: bad CSV rows rejected with their line");
	static const char H[] = "START_TIME,END_TIME,L3_PROTO,L4_PROTO,SRC_PORT,DST_PORT,PACKETS,"
	                        "BYTES,PACKETS_REV,BYTES_REV\n";
	static const char OK[] = "0,10,4,6,1000,80,3,300,2,200\n";
	static const struct {
		const char *row; /* after the header and one good row: line 3 */
		const char *why; /* a piece of the message */
	} bad[] = {
	        {"0,10,4,6,1000,80,3,300,2\n", "9 fields, the header has 10"},
	        {"0,10,4,6,1000,80,3,300,2,200,7\n", "3: 11 fields, the header has 10"},
	        {"x,10,4,6,1000,80,3,300,2,200\n", "START_TIME 'x'"},
	        {"0,1e3,4,6,1000,80,3,300,2,200\n", "END_TIME '1e3'"},
	        {"10,5,4,6,1000,80,3,300,2,200\n", "before START_TIME"},
	        {"0,10,5,6,1000,80,3,300,2,200\n", "L3_PROTO '5'"},
	        {"0,10,4,256,1000,80,3,300,2,200\n", "L4_PROTO '256'"},
	        {"0,10,6,44,1000,80,3,300,2,200\n", "extension header"},
	        {"0,10,6,1,0,0,3,300,2,200\n", "does not go with"},
	        {"0,10,4,58,0,0,3,300,2,200\n", "does not go with"},
	        {"0,10,4,6,65536,80,3,300,2,200\n", "SRC_PORT '65536'"},
	        {"0,10,4,6,1000,-1,3,300,2,200\n", "DST_PORT '-1'"},
	        {"0,10,4,6,1000,80,0,300,2,200\n", "PACKETS is 0"},
	        {"0,10,4,6,1000,80,-3,300,2,200\n", "PACKETS '-3'"},
	        {"0,10,4,6,1000,80,3,3x0,2,200\n", "BYTES '3x0'"},
	        {"0,10,4,6,1000,80,3,300,two,200\n", "PACKETS_REV 'two'"},
	        {"0,10,4,6,1000,80,3,300,0,200\n", "BYTES_REV is 200 but PACKETS_REV is 0"},
	        {"0,10,4,6,1000,80,1000000000001,300,2,200\n", "PACKETS '1000000000001'"},
	};
	char text[1024], err[256];
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct secho_gen_csv_row *r = (void *)1;
		size_t n = 99;
		snprintf(text, sizeof(text), "%s%s%s%s", H, OK, bad[i].row, OK);
		err[0] = 0;
		int rc = read_csv(text, &r, &n, err, sizeof(err));
		T_CHECK(rc == -EINVAL, "case %zu: rc %d", i, rc);
		T_CHECK(!strncmp(err, "p.csv:3: ", 9), "case %zu: '%s' does not name line 3", i,
		        err);
		T_CHECK(strstr(err, bad[i].why) != NULL, "case %zu: '%s' lacks '%s'", i, err,
		        bad[i].why);
		T_CHECK(r == NULL && n == 0, "case %zu: rows left behind", i);
	}
	/* Addresses: wrong family, garbage; headers: unknown, twice, missing, none, no rows. */
	static const struct {
		const char *text, *why;
	} bad2[] = {
	        {"SRC_IP,START_TIME,END_TIME,L3_PROTO,L4_PROTO,SRC_PORT,DST_PORT,PACKETS,BYTES,"
	         "PACKETS_REV,BYTES_REV\n2001:db8::1,0,1,4,6,1,2,1,40,0,0\n",
	         "p.csv:2: SRC_IP '2001:db8::1' is not an IPv4 address"},
	        {"DST_IP,START_TIME,END_TIME,L3_PROTO,L4_PROTO,SRC_PORT,DST_PORT,PACKETS,BYTES,"
	         "PACKETS_REV,BYTES_REV\n# c\n\n10.0.0.300,0,1,4,6,1,2,1,40,0,0\n",
	         "p.csv:4: DST_IP '10.0.0.300'"},
	        {"START_TIME,END_TIME,L3_PROTO,L4_PROTO,SRC_PORT,DST_PORT,PACKETS,BYTES,"
	         "PACKETS_REV,BYTES_REV,FOO\n",
	         "p.csv:1: unknown column 'FOO'"},
	        {"# x\nSTART_TIME,START_TIME,L3_PROTO,L4_PROTO,SRC_PORT,DST_PORT,PACKETS,BYTES,"
	         "PACKETS_REV,BYTES_REV\n",
	         "p.csv:2: column START_TIME appears twice"},
	        {"START_TIME,END_TIME,L3_PROTO,L4_PROTO,SRC_PORT,DST_PORT,PACKETS,BYTES,"
	         "PACKETS_REV\n",
	         "p.csv:1: column BYTES_REV missing"},
	        {"# only a comment\n\n", "p.csv: no header line"},
	        {H, "p.csv: no flow rows"},
	};
	for (size_t i = 0; i < sizeof(bad2) / sizeof(bad2[0]); i++) {
		struct secho_gen_csv_row *r = NULL;
		size_t n = 0;
		err[0] = 0;
		int rc = read_csv(bad2[i].text, &r, &n, err, sizeof(err));
		T_CHECK(rc == -EINVAL && strstr(err, bad2[i].why), "header case %zu: rc %d '%s'", i,
		        rc, err);
		free(r);
	}
	t_end();
}

struct digest {
	uint64_t h, flows, pkts, octets;
};

static void mix(struct digest *d, const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		d->h = (d->h ^ b[i]) * 1099511628211ull;
}

static void on_flow(void *ctx, const struct secho_gen_flow *fl)
{
	struct digest *d = ctx;
	char line[256];
	secho_gen_truth_line(line, sizeof(line), fl);
	mix(d, line, strlen(line));
	d->flows++;
	d->pkts += fl->dir.packets;
	d->octets += fl->dir.octets;
}

/* Run a generator to the end; digest of every frame and flow. Returns 0 or -errno. */
static int run(const char *profile, uint64_t packets, uint64_t seed, struct digest *d,
               struct secho_gen_totals *t, int *mono_ok)
{
	struct secho_gen_cfg cfg = {
	        .profile = profile, .packets = packets, .seed = seed, .on_flow = on_flow, .ctx = d};
	struct secho_gen *g;
	char err[256];
	memset(d, 0, sizeof(*d));
	memset(t, 0, sizeof(*t));
	d->h = 1469598103934665603ull;
	int rc = secho_gen_new(&g, &cfg, err, sizeof(err));
	if (rc)
		return rc;
	struct secho_gen_frame f;
	uint64_t last = 0, n = 0;
	*mono_ok = 1;
	while ((rc = secho_gen_next(g, &f)) == 1) {
		if ((n++ && f.ts_ns <= last) || f.ts_ns % 1000 || f.caplen > f.len ||
		    f.len > SECHO_GEN_MAX_FRAME)
			*mono_ok = 0;
		last = f.ts_ns;
		mix(d, &f.ts_ns, sizeof(f.ts_ns));
		mix(d, &f.len, sizeof(f.len));
		mix(d, f.data, f.caplen);
	}
	secho_gen_get_totals(g, t);
	secho_gen_free(g);
	return rc;
}

static void test_determinism(void)
{
	static const struct {
		const char *p;
		uint64_t n;
	} cases[] = {{"conformance", 0}, {"conformance", 2000}, {"heavy", 20000},
	             {"light", 20000},   {"geant", 20000},      {"nix", 20000}};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		t_begin("flow gen: %s (%llu packets) deterministic and consistent", cases[i].p,
		        (unsigned long long)cases[i].n);
		struct digest a, b, c;
		struct secho_gen_totals ta, tb, tc;
		int ma = 0, mb = 0, mc = 0;
		int ra = run(cases[i].p, cases[i].n, 42, &a, &ta, &ma);
		int rb = run(cases[i].p, cases[i].n, 42, &b, &tb, &mb);
		int rcc = run(cases[i].p, cases[i].n, 43, &c, &tc, &mc);
		T_CHECK(ra == 0 && rb == 0 && rcc == 0, "rc %d %d %d", ra, rb, rcc);
		T_CHECK(a.h == b.h && a.flows == b.flows, "same seed, different output");
		T_CHECK(a.h != c.h, "another seed, same output");
		T_CHECK(ma && mb && mc, "timestamps not strictly increasing whole microseconds");
		T_CHECK(a.flows == ta.flows && a.pkts == ta.flow_packets &&
		                a.octets == ta.flow_octets,
		        "flows %llu/%llu packets %llu/%llu octets %llu/%llu",
		        (unsigned long long)a.flows, (unsigned long long)ta.flows,
		        (unsigned long long)a.pkts, (unsigned long long)ta.flow_packets,
		        (unsigned long long)a.octets, (unsigned long long)ta.flow_octets);
		uint64_t mal = 0;
		for (int m = 0; m < SECHO_GEN_MAL_COUNT; m++)
			mal += ta.malformed_by[m];
		T_CHECK(mal == ta.malformed, "malformed by reason %llu vs %llu",
		        (unsigned long long)mal, (unsigned long long)ta.malformed);
		T_CHECK(ta.packets ==
		                ta.flow_packets + ta.malformed + ta.non_ip + ta.orphan_fragments,
		        "frames %llu != flow packets + ignored", (unsigned long long)ta.packets);
		if (strcmp(cases[i].p, "conformance") != 0) {
			T_CHECK(ta.packets == cases[i].n, "asked %llu, got %llu",
			        (unsigned long long)cases[i].n, (unsigned long long)ta.packets);
		} else {
			T_CHECK(ta.packets >= cases[i].n, "conformance: fewer than asked");
			T_CHECK(ta.malformed >= SECHO_GEN_MAL_COUNT && ta.orphan_fragments >= 2 &&
			                ta.non_ip >= 3 && ta.fragments > 0 && ta.snap_truncated > 0,
			        "conformance lacks a case");
			for (int m = 0; m < SECHO_GEN_MAL_COUNT; m++)
				T_CHECK(ta.malformed_by[m] > 0, "no malformed %s",
				        secho_gen_malformed_name((unsigned)m));
		}
		t_end();
	}
}

static void test_errors(void)
{
	t_begin("flow gen: unknown profile, missing file");
	struct secho_gen *g = (void *)1;
	char err[256] = "";
	struct secho_gen_cfg cfg = {.profile = "frobnicate"};
	int rc = secho_gen_new(&g, &cfg, err, sizeof(err));
	T_CHECK(rc == -EINVAL && g == NULL && strstr(err, "frobnicate"), "rc %d '%s'", rc, err);
	cfg.profile = "/nonexistent/dir/p.csv";
	rc = secho_gen_new(&g, &cfg, err, sizeof(err));
	T_CHECK(rc == -ENOENT && strstr(err, "/nonexistent/dir/p.csv"), "rc %d '%s'", rc, err);
	t_end();
}

/*
 * --encap: the same seed with and without an encapsulation gives the same frames, one for
 * one; every flow frame the dissector describes plainly (the one-off frames are not
 * wrapped) it describes in the tunnel as the
 * same inner packet (addresses, ports, protocol, IP length), with the tunnel type and ID
 * the key must get, an outer IPv4 checksum that verifies, and no more than
 * SECHO_GEN_MAX_ENCAP bytes more.
 */
static void test_encap(void)
{
	static const struct {
		const char *spec;
		uint8_t tun;
		uint32_t id;
		int outer_ip; /* 4, 6, 0 (none), -1 (the inner version) */
	} cases[] = {
	        {"mpls", 0, 0, 0},
	        {"mpls2:100", 0, 0, 0},
	        {"pppoe:7", 0, 0, 0},
	        {"gre", SECHO_TUN_GRE, 0, -1},
	        {"gre:5", SECHO_TUN_GRE, 5, -1},
	        {"erspan:9", SECHO_TUN_ERSPAN, 9, -1},
	        {"vxlan", SECHO_TUN_VXLAN, 100, -1},
	        {"vxlan:16777215", SECHO_TUN_VXLAN, 16777215, -1},
	        {"geneve:43", SECHO_TUN_GENEVE, 43, -1},
	        {"gtpu:4294967295", SECHO_TUN_GTPU, 4294967295u, -1},
	        {"ipip", SECHO_TUN_IPIP, 0, -1},
	        {"ipip4", SECHO_TUN_IPIP, 0, 4},
	        {"ipip6", SECHO_TUN_IPIP, 0, 6},
	        {"eompls:99", SECHO_TUN_EOMPLS, 0, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		t_begin("flow gen: --encap %s wraps the same frames", cases[i].spec);
		struct secho_gen_cfg pc = {.profile = "conformance", .packets = 1500, .seed = 7};
		struct secho_gen_cfg ec = pc;
		ec.encap = cases[i].spec;
		struct secho_gen *gp = NULL, *ge = NULL;
		char err[256];
		int rc = secho_gen_new(&gp, &pc, err, sizeof(err));
		T_CHECK(rc == 0, "plain: %s", err);
		rc = secho_gen_new(&ge, &ec, err, sizeof(err));
		T_CHECK(rc == 0, "encap: %s", err);
		if (!gp || !ge) {
			secho_gen_free(gp);
			secho_gen_free(ge);
			t_end();
			continue;
		}
		T_CHECK(secho_gen_has_tunnels(ge) && !secho_gen_has_tunnels(gp), "has_tunnels");
		struct secho_gen_frame fp, fe;
		unsigned compared = 0, bad = 0;
		while (secho_gen_next(gp, &fp) == 1 && secho_gen_next(ge, &fe) == 1) {
			struct secho_dissect dp, de;
			if (secho_dissect_snap(fp.data, fp.caplen, fp.len, &dp) !=
			            SECHO_DISSECT_OK ||
			    !dp.ip_version || (dp.flags & SECHO_DISSECT_F_TUNNEL) ||
			    fp.caplen < fp.len)
				continue;
			/* the one-off frames (orphan fragments) are never wrapped */
			if (fe.caplen == fp.caplen && !memcmp(fe.data, fp.data, fp.caplen))
				continue;
			compared++;
			enum secho_dissect_reason r =
			        secho_dissect_snap(fe.data, fe.caplen, fe.len, &de);
			size_t al = dp.ip_version == 4 ? 8 : 32;
			bool ok = r == SECHO_DISSECT_OK && fe.ts_ns == fp.ts_ns &&
			          de.ip_version == dp.ip_version && de.proto == dp.proto &&
			          de.ip_len == dp.ip_len && de.sport == dp.sport &&
			          de.dport == dp.dport &&
			          !memcmp(fe.data + de.addr_off, fp.data + dp.addr_off, al) &&
			          fe.len <= fp.len + SECHO_GEN_MAX_ENCAP &&
			          fe.len <= SECHO_GEN_MAX_FRAME;
			if (cases[i].tun)
				ok = ok && (de.flags & SECHO_DISSECT_F_TUNNEL) &&
				     de.tun_type == cases[i].tun && de.tun_id == cases[i].id;
			else
				ok = ok && !(de.flags & SECHO_DISSECT_F_TUNNEL);
			int ov = cases[i].outer_ip < 0 ? dp.ip_version : cases[i].outer_ip;
			if (cases[i].tun && ov)
				ok = ok && de.outer_ip_version == ov && de.outer_ip_len > de.ip_len;
			if (ok && cases[i].tun && ov == 4)
				ok = secho_csum_fold(
				             secho_csum_add(0, fe.data + de.outer_l3_off, 20)) == 0;
			if (!ok && bad++ < 3)
				T_CHECK(0,
				        "frame %u: reason %d, tun %u id %u, outer v%u len %u; "
				        "proto %u/%u len %u/%u ports %u/%u",
				        compared, (int)r, de.tun_type, de.tun_id,
				        de.outer_ip_version, de.outer_ip_len, dp.proto, de.proto,
				        dp.ip_len, de.ip_len, dp.sport, de.sport);
		}
		T_CHECK(bad == 0, "%u of %u frames wrong", bad, compared);
		T_CHECK(compared > 500, "only %u frames compared", compared);
		secho_gen_free(gp);
		secho_gen_free(ge);
		t_end();
	}
	t_begin("flow gen: bad --encap arguments");
	static const char *const bad[] = {
	        "frob",   "vxlan:16777216", "ipip:3",   "mpls:15", "gtpu:-1",
	        "vxlan:", "erspan:1024",    "gre:0x1g", ""};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char err[256] = "";
		T_CHECK(secho_gen_encap_check(bad[i], err, sizeof(err)) == -EINVAL && err[0],
		        "'%s' accepted", bad[i]);
	}
	char err[256];
	T_CHECK(secho_gen_encap_check("gre:0xffffffff", err, sizeof(err)) == 0, "%s", err);
	t_end();
}

int main(void)
{
	test_csv_accept();
	test_csv_reject();
	test_determinism();
	test_errors();
	test_encap();
	return t_exit();
}
