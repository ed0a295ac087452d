/*
 * tests/unit/test_feat_wg.c - the wg feature set (src/flow/feature/wg.h).
 *
 * Vectors: the four WireGuard messages built to the paper's layout (section 5.4: type,
 * 3 reserved zero bytes, little-endian indexes; 148, 92, 64 and 32+ bytes), every other
 * length of each, every non-zero reserved byte, the DNS look-alike; a session's messages in
 * both directions, a new session's initiation (the new-record rule), a flow that stops being
 * WireGuard, snapped datagrams. tests/sh/test_feat_wg.sh adds scapy's messages.
 *
 * With SECHO_FEAT_PCAP=file set, it prints one JSON line per record of that capture
 * instead, applying the new-record rule as the table will: a record ends where a new
 * session starts, and the next begins with that packet.
 */
#include "featcap.h"
#include "harness.h"

#include "flow/feature/wg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t msg(uint8_t *b, uint8_t type, size_t len, uint32_t a, uint32_t c)
{
	memset(b, 0x5a, len); /* ephemeral keys, MACs, ciphertext: opaque here */
	b[0] = type;
	b[1] = b[2] = b[3] = 0;
	for (unsigned i = 0; i < 4; i++) {
		b[4 + i] = (uint8_t)(a >> (8 * i));
		if (len >= 12)
			b[8 + i] = (uint8_t)(c >> (8 * i));
	}
	return len;
}

static struct secho_feat_pkt pkt(const uint8_t *b, size_t n, uint8_t dir)
{
	struct secho_feat_pkt p = {.payload = b,
	                           .len = (uint32_t)n,
	                           .wire_len = (uint32_t)n,
	                           .proto = 17,
	                           .dir = dir,
	                           .sport = 51820,
	                           .dport = 51820};
	return p;
}

static void test_parse(void)
{
	uint8_t b[300];
	struct secho_wg_msg m;
	static const struct {
		uint8_t type;
		size_t len;
	} ok[] = {{1, 148}, {2, 92}, {3, 64}, {4, 32}, {4, 48}, {4, 1440}};

	t_begin("wg: the four messages, their lengths, reserved bytes");
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		uint8_t big[1500];
		size_t n = msg(big, ok[i].type, ok[i].len, 0x11223344, 0x55667788);
		int t = secho_wg_parse(big, n, &m);
		T_CHECK(t == ok[i].type, "type %u len %zu: %d", ok[i].type, ok[i].len, t);
		if (ok[i].type == 1)
			T_CHECK(m.sender == 0x11223344 && m.receiver == 0, "initiation's sender");
		if (ok[i].type == 2)
			T_CHECK(m.sender == 0x11223344 && m.receiver == 0x55667788,
			        "response's indexes");
		if (ok[i].type >= 3)
			T_CHECK(m.receiver == 0x11223344 && m.sender == 0, "receiver");
		/* every reserved byte non-zero: refused */
		for (unsigned r = 1; r <= 3; r++) {
			big[r] = 1;
			T_CHECK(secho_wg_parse(big, n, &m) == 0, "type %u reserved byte %u",
			        ok[i].type, r);
			big[r] = 0;
		}
	}
	/* every other length of the fixed-length types, and short data */
	for (uint8_t type = 1; type <= 4; type++) {
		size_t want = type == 1 ? 148 : type == 2 ? 92 : type == 3 ? 64 : 0;
		for (size_t len = 0; len <= 200; len++) {
			msg(b, type, len < 12 ? 12 : len, 1, 2);
			int t = secho_wg_parse(b, len, &m);
			bool should = type == 4 ? len >= 32 : len == want;
			T_CHECK(should ? t == type : t == 0, "type %u len %zu: %d", type, len, t);
		}
	}
	for (unsigned type = 0; type < 256; type++) {
		if (type >= 1 && type <= 4)
			continue;
		msg(b, (uint8_t)type, 148, 1, 2);
		T_CHECK(secho_wg_parse(b, 148, &m) == 0, "type %u refused", type);
	}
	/* a DNS query with ID 0x0400 and all flags clear: "type 4" and three zero bytes, then
	 * 00 01 00 00 (QDCOUNT 1, ANCOUNT 0): WireGuard by its bytes, only "possible" */
	static const uint8_t dnsq[32] = {0x04, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00};
	T_CHECK(secho_wg_parse(dnsq, sizeof(dnsq), &m) == 4 && m.dns_like, "DNS look-alike");
	t_end();
}

static void test_flow(void)
{
	uint8_t b[4][1500];
	struct secho_feat_wg s;
	char js[256];

	t_begin("wg: a session's messages both ways");
	memset(&s, 0, sizeof(s));
	struct secho_feat_pkt p[6] = {
	        pkt(b[0], msg(b[0], 1, 148, 0xaaaa0001, 0), SECHO_FEAT_FWD),
	        pkt(b[1], msg(b[1], 2, 92, 0xbbbb0002, 0xaaaa0001), SECHO_FEAT_REV),
	        pkt(b[2], msg(b[2], 4, 96, 0xbbbb0002, 7), SECHO_FEAT_FWD),
	        pkt(b[3], msg(b[3], 4, 128, 0xaaaa0001, 9), SECHO_FEAT_REV),
	};
	for (int i = 0; i < 4; i++)
		secho_feat_wg_packet(&s, &p[i]);
	T_CHECK(s.seen && !s.done && s.messages == 4 && s.conf == 100, "four messages");
	T_CHECK(s.src_peer == 0xaaaa0001 && s.dst_peer == 0xbbbb0002, "peers %08x %08x", s.src_peer,
	        s.dst_peer);
	T_CHECK(s.types == (1u << 1 | 1u << 2 | 1u << 4), "types %x", s.types);
	int n = secho_feat_wg_json(&s, js, sizeof(js));
	T_CHECK(n > 0 && !strcmp(js, ",\"wg_conf_level\":100,\"wg_src_peer\":2863267841,"
	                             "\"wg_dst_peer\":3149594626"),
	        "json %s", js);
	T_CHECK(secho_feat_wg_json(&s, js, (size_t)n - 1) == -ENOSPC, "-ENOSPC");
	/* the same initiator index again (a retransmitted initiation): same session */
	secho_feat_wg_packet(&s, &p[0]);
	T_CHECK(!s.done && !s.new_session, "same index, same session");
	/* a new initiation with another index: the record ends, nothing updated */
	uint8_t ni[148];
	struct secho_feat_pkt np = pkt(ni, msg(ni, 1, 148, 0xcccc0003, 0), SECHO_FEAT_FWD);
	secho_feat_wg_packet(&s, &np);
	T_CHECK(s.done && s.new_session && s.src_peer == 0xaaaa0001, "new session");
	/* the new record's state, given the same packet */
	memset(&s, 0, sizeof(s));
	secho_feat_wg_packet(&s, &np);
	T_CHECK(s.seen && s.src_peer == 0xcccc0003 && s.dst_peer == 0, "new record");
	/* the responder re-keys: its initiation from the reverse side, another index */
	memset(&s, 0, sizeof(s));
	secho_feat_wg_packet(&s, &p[0]);
	secho_feat_wg_packet(&s, &p[1]);
	uint8_t ri[148];
	np = pkt(ri, msg(ri, 1, 148, 0xdddd0004, 0), SECHO_FEAT_REV);
	secho_feat_wg_packet(&s, &np);
	T_CHECK(s.new_session && s.dst_peer == 0xbbbb0002, "reverse side's new session");
	t_end();

	t_begin("wg: flows that are not, or stop being, WireGuard; snapped datagrams");
	memset(&s, 0, sizeof(s));
	struct secho_feat_pkt q = pkt((const uint8_t *)"hello, not wireguard at all, no.", 32, 0);
	secho_feat_wg_packet(&s, &q);
	T_CHECK(s.done && !s.seen && secho_feat_wg_json(&s, js, sizeof(js)) == 0,
	        "first packet not WireGuard: nothing");
	memset(&s, 0, sizeof(s));
	secho_feat_wg_packet(&s, &p[0]);
	secho_feat_wg_packet(&s, &q);
	n = secho_feat_wg_json(&s, js, sizeof(js));
	T_CHECK(n > 0 && s.done && s.seen && s.conf == 0 && strstr(js, "\"wg_conf_level\":0"),
	        "then not: conf 0, %s", js);
	memset(&s, 0, sizeof(s));
	q = p[0];
	q.proto = 6;
	secho_feat_wg_packet(&s, &q);
	T_CHECK(s.done && !s.seen, "TCP: not looked at");
	/* snapped: an initiation captured for 64 of its 148 bytes is one; a 147-byte one not */
	memset(&s, 0, sizeof(s));
	q = p[0];
	q.len = 64;
	secho_feat_wg_packet(&s, &q);
	T_CHECK(s.seen && s.src_peer == 0xaaaa0001, "snapped initiation");
	memset(&s, 0, sizeof(s));
	q.wire_len = 147;
	secho_feat_wg_packet(&s, &q);
	T_CHECK(!s.seen, "snapped, wrong wire length");
	memset(&s, 0, sizeof(s));
	q = p[3];
	q.len = 8;
	q.wire_len = 1400;
	secho_feat_wg_packet(&s, &q);
	T_CHECK(s.seen && s.src_peer == 0xaaaa0001, "snapped data message");
	t_end();
}

/* The capture mode: records, the new-record rule applied. */
#define PC_FLOWS FEATCAP_MAX_FLOWS
static struct secho_feat_wg pc_state[PC_FLOWS];
static struct secho_feat_pkt pc_first[PC_FLOWS];
static unsigned pc_pkts[PC_FLOWS], pc_rec[PC_FLOWS];

static void pc_print(unsigned f)
{
	char js[256];
	int jn = secho_feat_wg_json(&pc_state[f], js, sizeof(js));
	printf("{\"flow\":%u,\"record\":%u,\"sport\":%u,\"dport\":%u,\"packets\":%u,"
	       "\"messages\":%u,\"types\":%u%s}\n",
	       f, pc_rec[f], pc_first[f].sport, pc_first[f].dport, pc_pkts[f], pc_state[f].messages,
	       pc_state[f].types, jn > 0 ? js : "");
}

static void pc_fn(void *arg, unsigned f, const struct secho_feat_pkt *p)
{
	(void)arg;
	if (!pc_pkts[f])
		pc_first[f] = *p;
	secho_feat_wg_packet(&pc_state[f], p);
	if (pc_state[f].new_session) {
		pc_print(f);
		pc_rec[f]++;
		pc_pkts[f] = 0;
		memset(&pc_state[f], 0, sizeof(pc_state[f]));
		secho_feat_wg_packet(&pc_state[f], p);
	}
	pc_pkts[f]++;
}

static int pcap_mode(const char *path)
{
	char err[256];
	int n = featcap_run(path, pc_fn, NULL, err, sizeof(err));
	if (n < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	for (int f = 0; f < n; f++)
		pc_print((unsigned)f);
	return 0;
}

int main(void)
{
	const char *pcap = getenv("SECHO_FEAT_PCAP");
	if (pcap && *pcap)
		return pcap_mode(pcap);
	test_parse();
	test_flow();
	return t_exit();
}
