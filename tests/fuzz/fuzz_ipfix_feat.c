/*
 * tests/fuzz/fuzz_ipfix_feat.c - libFuzzer target over the feature sets' IPFIX encoding
 * (src/flow/export/ipfix_feat.h): the input as the packets of one flow (TCP or UDP by its
 * first byte; then a control byte a packet: direction, TCP flags, a gap in time, the
 * payload's length) fed to the state of every set, each set's state then encoded as its
 * data and walked against the field specifiers of its template.
 *
 * Invariants: a set's data is exactly what its template says, element by element (fixed
 * lengths; variable-length values whose length prefixes stay inside the data; basicLists of
 * semantic 3 whose member is an 8057 element with the enterprise bit and whose values are
 * whole entries), at most SECHO_IPFIX_FEAT_REC_MAX bytes for all sets together; a state made
 * ready over stale bytes (0xa5) encodes as one made ready over zeros: the encoder reads only
 * what the state's lengths and flags say was written.
 *
 *   make fuzz && build/fuzz/fuzz_ipfix_feat -max_total_time=60 tests/fuzz/corpus-ipfix-feat
 */
#include "fuzz.h"

#include "flow/export/ipfix_feat.h"
#include "flow/feature/bstats.h"
#include "flow/feature/dns.h"
#include "flow/feature/http.h"
#include "flow/feature/phists.h"
#include "flow/feature/pstats.h"
#include "flow/feature/quic.h"
#include "flow/feature/sets.h"
#include "flow/feature/tls.h"
#include "flow/feature/wg.h"

#include <string.h>

struct states {
	struct secho_feat_tls tls;
	struct secho_feat_quic quic;
	struct secho_feat_dns dns;
	struct secho_feat_http http;
	struct secho_feat_wg wg;
	struct secho_feat_pstats pstats;
	struct secho_feat_phists phists;
	struct secho_feat_bstats bstats;
};

static void ready(struct states *s, int fill)
{
	memset(s, fill, sizeof(*s));
	secho_feat_tls_init(&s->tls);
	secho_feat_quic_init(&s->quic);
	secho_feat_dns_init(&s->dns);
	secho_feat_http_init(&s->http);
	secho_feat_wg_init(&s->wg);
	secho_feat_pstats_init(&s->pstats);
	secho_feat_phists_init(&s->phists);
	secho_feat_bstats_init(&s->bstats);
}

static void feed(struct states *s, const struct secho_feat_pkt *p)
{
	secho_feat_tls_packet(&s->tls, p);
	secho_feat_quic_packet(&s->quic, p);
	secho_feat_dns_packet(&s->dns, p);
	secho_feat_http_packet(&s->http, p);
	secho_feat_wg_packet(&s->wg, p);
	secho_feat_pstats_packet(&s->pstats, p);
	secho_feat_phists_packet(&s->phists, p);
	secho_feat_bstats_packet(&s->bstats, p);
}

static const void *state_of(const struct states *s, unsigned set)
{
	const void *const st[SECHO_FEAT_NSETS] = {
	        [SECHO_FEAT_SET_TLS] = &s->tls,       [SECHO_FEAT_SET_QUIC] = &s->quic,
	        [SECHO_FEAT_SET_DNS] = &s->dns,       [SECHO_FEAT_SET_HTTP] = &s->http,
	        [SECHO_FEAT_SET_WG] = &s->wg,         [SECHO_FEAT_SET_PSTATS] = &s->pstats,
	        [SECHO_FEAT_SET_PHISTS] = &s->phists, [SECHO_FEAT_SET_BSTATS] = &s->bstats,
	};
	return st[set];
}

static unsigned be16(const uint8_t *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

/* Set set's data d[0..n) against its template's field specifiers. */
static void walk(unsigned set, const uint8_t *d, size_t n)
{
	uint8_t f[SECHO_IPFIX_FEAT_TMPL_MAX];
	unsigned nf;
	size_t fl = secho_ipfix_feat_fields(1u << set, f, &nf), i = 0, at = 0;
	CHECK(fl <= sizeof(f) && nf > 0);
	for (unsigned k = 0; k < nf; k++) {
		CHECK(i + 4 <= fl);
		unsigned id = be16(f + i), len = be16(f + i + 2);
		i += (id & 0x8000) ? 8 : 4;
		if (len != SECHO_IPFIX_VARLEN) {
			CHECK(len >= 1 && len <= 8 && at + len <= n);
			at += len;
			continue;
		}
		CHECK(at < n);
		size_t vl = d[at++];
		if (vl == 255) {
			CHECK(at + 2 <= n);
			vl = be16(d + at);
			at += 2;
		}
		CHECK(at + vl <= n);
		if (id == SECHO_IPFIX_IE_BASICLIST) { /* semantic, member ID, its length, PEN */
			CHECK(vl >= 9 && d[at] == 3 && (d[at + 1] & 0x80));
			unsigned elen = be16(d + at + 3);
			CHECK(elen >= 1 && elen <= 8 && (vl - 9) % elen == 0);
			CHECK(d[at + 5] == 0 && d[at + 6] == 0 && d[at + 7] == 0x1f &&
			      d[at + 8] == 0x79);
		}
		at += vl;
	}
	CHECK(i == fl && at == n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct states z, g;
	static uint8_t ez[SECHO_IPFIX_FEAT_REC_MAX], eg[SECHO_IPFIX_FEAT_REC_MAX];
	if (size < 1)
		return 0;
	uint8_t proto = (data[0] & 1) ? 17 : 6;
	uint16_t port[2] = {(uint16_t)(40000 + (data[0] >> 1)), 443};
	if (data[0] & 2)
		port[1] = 53;
	else if (data[0] & 4)
		port[1] = 80;
	ready(&z, 0);
	ready(&g, 0xa5);
	uint32_t seq[2] = {1000, 0xffffff00u};
	uint64_t ts = 1767225600000000000ull;
	size_t i = 1;
	while (i < size) {
		/* direction (bit 7), SYN/FIN/ACK flags (bits 6, 5), time gap (bit 5: 1.1 s, else
		 * 1 ms), a payload of (low 5 bits) * 48 bytes */
		uint8_t c = data[i++];
		unsigned d = c >> 7;
		size_t k = (size_t)(c & 31) * 48;
		if (k > size - i)
			k = size - i;
		ts += (c & 0x20) ? 1100000000ull : 1000000ull;
		struct secho_feat_pkt p = {
		        .payload = data + i,
		        .len = (uint32_t)k,
		        .wire_len = (uint32_t)k,
		        .ts_ns = ts,
		        .ip_len = (uint32_t)k + 40,
		        .tcp_seq = seq[d],
		        .sport = port[d],
		        .dport = port[d ^ 1],
		        .proto = proto,
		        .dir = (uint8_t)d,
		        .tcp_flags = (uint8_t)(proto == 6 ? 0x10 | ((c & 0x40) ? 0x02 : 0) |
		                                                    ((c & 0x20) ? 0x01 : 0)
		                                          : 0)};
		feed(&z, &p);
		feed(&g, &p);
		seq[d] += (uint32_t)k;
		i += k;
	}
	size_t total = 0;
	for (unsigned set = 0; set < SECHO_FEAT_NSETS; set++) {
		size_t nz = secho_ipfix_feat_set_encode(set, state_of(&z, set), ez);
		size_t ng = secho_ipfix_feat_set_encode(set, state_of(&g, set), eg);
		CHECK(nz <= sizeof(ez) && nz == ng && !memcmp(ez, eg, nz));
		walk(set, ez, nz);
		total += nz;
	}
	CHECK(total <= SECHO_IPFIX_FEAT_REC_MAX);
	return 0;
}
