/*
 * tests/fuzz/fuzz_dns.c - libFuzzer target over the dns feature set (src/flow/feature/dns.h):
 * the message parse, the name decoder at every offset, and the per-flow state fed the input
 * as UDP datagrams and as a TCP stream cut into segments (in order, retransmitted, with
 * gaps), then written as JSON.
 *
 * Invariants: every length within its bound, a parsed name's next offset inside the message,
 * the JSON either fits or says -ENOSPC and holds no raw control byte, and a state that
 * started as 0xa5 made ready by secho_feat_dns_init (a reused slot) writes the same JSON as
 * one that started all zero. ASan catches reads
 * outside the input (each run parses a heap copy of exactly the input's length).
 *
 *   make fuzz && build/fuzz/fuzz_dns -max_total_time=60 tests/fuzz/corpus-dns
 */
#include "fuzz.h"

#include "flow/feature/dns.h"

#include <errno.h>
#include <string.h>

static void check_msg(const struct secho_dns_msg *m)
{
	CHECK(m->qname_len <= SECHO_DNS_NAME_MAX);
	CHECK(m->nrr <= SECHO_DNS_RR_MAX && m->nrr <= m->ancount);
	for (unsigned i = 0; i < m->nrr; i++) {
		CHECK(m->rr[i].name_len <= SECHO_DNS_RR_NAME_MAX);
		CHECK(m->rr[i].data_len <= SECHO_DNS_RDATA_MAX);
	}
}

static void check_json(const struct secho_feat_dns *s)
{
	static char js[16384];
	int n = secho_feat_dns_json(s, js, sizeof(js));
	CHECK(n >= 0 && (size_t)n < sizeof(js));
	for (int i = 0; i < n; i++)
		CHECK((unsigned char)js[i] >= 0x20 && (unsigned char)js[i] < 0x7f);
	if (n > 0)
		CHECK(secho_feat_dns_json(s, js, (size_t)n - 1) == -ENOSPC);
}

/* Two states fed the same packets write the same JSON. */
static void same_json(const struct secho_feat_dns *a, const struct secho_feat_dns *b)
{
	static char ja[16384], jb[16384];
	int na = secho_feat_dns_json(a, ja, sizeof(ja)),
	    nb = secho_feat_dns_json(b, jb, sizeof(jb));
	CHECK(na == nb && (na < 0 || !memcmp(ja, jb, (size_t)na)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct secho_dns_msg m;
	static struct secho_feat_dns s, g;
	uint8_t *copy = malloc(size ? size : 1);
	CHECK(copy);
	memcpy(copy, data, size);

	if (secho_dns_parse(copy, size, &m) == 0)
		check_msg(&m);
	for (size_t off = 0; off < size && off < 64; off++) {
		char out[SECHO_DNS_NAME_MAX];
		size_t ol, next;
		bool cut;
		if (secho_dns_name(copy, size, off, out, sizeof(out), &ol, &cut, &next) == 0)
			CHECK(ol <= sizeof(out) && next > off && next <= size);
	}

	/* UDP: the input as one datagram each way, then cut in two at its first byte's value;
	 * g: the same from a reused slot (0xa5, then secho_feat_dns_init) */
	memset(&s, 0, sizeof(s));
	memset(&g, 0xa5, sizeof(g));
	secho_feat_dns_init(&g);
	struct secho_feat_pkt p = {.payload = copy,
	                           .len = (uint32_t)size,
	                           .wire_len = (uint32_t)size + (size & 1),
	                           .proto = 17,
	                           .sport = 40000,
	                           .dport = 53};
	secho_feat_dns_packet(&s, &p);
	secho_feat_dns_packet(&g, &p);
	p.dir = SECHO_FEAT_REV;
	secho_feat_dns_packet(&s, &p);
	secho_feat_dns_packet(&g, &p);
	same_json(&s, &g);
	for (unsigned i = 0; i < 2; i++)
		if (s.seen & (1u << i))
			check_msg(&s.msg[i]);
	check_json(&s);

	/* TCP: segments whose lengths come from the input itself, some retransmitted */
	memset(&s, 0, sizeof(s));
	memset(&g, 0xa5, sizeof(g));
	secho_feat_dns_init(&g);
	uint32_t seq = size ? (uint32_t)data[0] << 24 : 0;
	size_t pos = 0;
	unsigned step = 0;
	while (pos < size && step++ < 64) {
		size_t n = 1 + (copy[pos] & 0x3f);
		if (n > size - pos)
			n = size - pos;
		struct secho_feat_pkt t = {.payload = copy + pos,
		                           .len = (uint32_t)n,
		                           .wire_len = (uint32_t)n,
		                           .proto = 6,
		                           .dir = (uint8_t)(step & 1),
		                           .tcp_seq = seq + (uint32_t)pos};
		if (copy[pos] & 0x80)
			t.tcp_seq += 3; /* a gap */
		secho_feat_dns_packet(&s, &t);
		secho_feat_dns_packet(&g, &t);
		if (copy[pos] & 0x40) {
			secho_feat_dns_packet(&s, &t); /* retransmitted */
			secho_feat_dns_packet(&g, &t);
		}
		pos += n;
	}
	for (unsigned i = 0; i < 2; i++)
		if (s.seen & (1u << i))
			check_msg(&s.msg[i]);
	check_json(&s);
	same_json(&s, &g);
	free(copy);
	return 0;
}
