/*
 * tests/fuzz/fuzz_tls.c - libFuzzer target over the tls feature set (src/flow/feature/tls.h):
 * the ClientHello, ServerHello, Certificate and DER parses, the fingerprints, and the
 * per-flow state fed the input as TCP segments of both directions.
 *
 * The first byte picks: 0 ClientHello (+ JA3, JA4), 1 ServerHello, 2 certificate DER,
 * 3 Certificate message, anything else the per-flow state (the input, cut into segments
 * whose sizes and directions the bytes themselves choose, with gaps and retransmissions).
 * Invariants, any violation aborts:
 *  - results are 0 or the documented negative errors; lists within their bounds; every span
 *    inside the input;
 *  - a ClientHello that parses and is not cut gives a JA3 whose MD5 matches its string's
 *    length and a JA4 of 36 characters in its fixed shape;
 *  - the state's lengths within their fields; its JSON fits a 4 KiB buffer, is
 *    NUL-terminated and its length is what was returned; a state said done stays done;
 *  - a state filled with 0xa5 and made ready by secho_feat_tls_init (a reused slot) gives
 *    the same JSON as one that started all zero.
 * ASan catches any read outside the input (an exact-size copy).
 *
 *   make fuzz && build/fuzz/fuzz_tls -max_total_time=60 tests/fuzz/corpus-tls
 */
#include "fuzz.h"

#include "flow/feature/tls.h"

#include <errno.h>
#include <string.h>

static int inside(struct secho_tls_span s, const uint8_t *p, size_t n)
{
	return s.p == NULL || (s.p >= p && s.p + s.len <= p + n);
}

static void client_hello(const uint8_t *p, size_t n)
{
	static struct secho_tls_hello h;
	char ja3[2048], ja4[SECHO_TLS_JA4_LEN + 1];
	uint8_t md5[16];
	int rc = secho_tls_client_hello_parse(p, n, &h);
	CHECK(rc == 0 || rc == -EINVAL || rc == -EAGAIN);
	CHECK(h.n_ciphers <= SECHO_TLS_MAX_CIPHERS && h.n_exts <= SECHO_TLS_MAX_EXTS &&
	      h.n_groups <= SECHO_TLS_MAX_GROUPS && h.n_sigalgs <= SECHO_TLS_MAX_SIGALGS &&
	      h.n_pointfmt <= SECHO_TLS_MAX_POINTFMT && h.n_versions <= SECHO_TLS_MAX_VERSIONS &&
	      h.n_alpn <= SECHO_TLS_MAX_ALPN);
	CHECK(inside(h.sni, p, n) && inside(h.quic_tp, p, n));
	for (unsigned i = 0; i < h.n_alpn; i++)
		CHECK(inside(h.alpn[i], p, n));
	if (rc != 0)
		return;
	int l = secho_tls_ja3(&h, ja3, sizeof(ja3), md5);
	CHECK(h.overflow ? l == -EOVERFLOW : (l > 0 && (size_t)l == strlen(ja3)));
	rc = secho_tls_ja4(&h, 't', ja4);
	CHECK(h.overflow ? rc == -EOVERFLOW : rc == 0);
	if (rc == 0)
		CHECK(strlen(ja4) == SECHO_TLS_JA4_LEN && ja4[0] == 't' && ja4[10] == '_' &&
		      ja4[23] == '_' && (ja4[3] == 'd' || ja4[3] == 'i'));
}

static void feed_state(const uint8_t *p, size_t n)
{
	static struct secho_feat_tls s, g;
	char json[4096], gjson[4096];
	uint32_t seq[2] = {1000, 0xffffff00u};
	memset(&s, 0, sizeof(s));
	memset(&g, 0xa5, sizeof(g));
	secho_feat_tls_init(&g);
	size_t i = 0;
	while (i < n) {
		/* one control byte: direction (bit 7), a retransmission (bit 6), a gap (bit 5),
		 * a segment of 1 + (low 5 bits) * 16 bytes */
		uint8_t c = p[i++];
		unsigned d = c >> 7;
		size_t k = 1 + (size_t)(c & 31) * 16;
		if (k > n - i)
			k = n - i;
		struct secho_feat_pkt pk = {.proto = 6, .dir = (uint8_t)d, .tcp_flags = 0x18};
		pk.payload = p + i;
		pk.len = pk.wire_len = (uint32_t)k;
		pk.tcp_seq =
		        seq[d] - ((c & 0x40) ? 8u : 0u) + ((c & 0x20) && !(c & 0x40) ? 3u : 0u);
		int was_done = secho_feat_tls_done(&s);
		secho_feat_tls_packet(&s, &pk);
		secho_feat_tls_packet(&g, &pk);
		CHECK(!was_done || secho_feat_tls_done(&s));
		seq[d] += (uint32_t)k;
		i += k;
	}
	CHECK(s.sni_len <= SECHO_FEAT_TLS_SNI && s.alpn_len <= SECHO_FEAT_TLS_ALPN &&
	      s.alpn_offer_len <= SECHO_FEAT_TLS_ALPN && s.issuer_cn_len <= SECHO_FEAT_TLS_CN &&
	      s.subject_cn_len <= SECHO_FEAT_TLS_CN && s.pk_alg_len < SECHO_FEAT_TLS_PKA &&
	      s.n_ext <= SECHO_FEAT_TLS_EXTS && s.buf_len <= SECHO_FEAT_TLS_BUF);
	int l = secho_feat_tls_json(&s, json, sizeof(json));
	CHECK(l >= 0 && (size_t)l == strlen(json));
	int gl = secho_feat_tls_json(&g, gjson, sizeof(gjson));
	CHECK(gl == l && !memcmp(json, gjson, (size_t)l));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const uint8_t *p = data + 1;
	size_t n = size - 1;
	switch (data[0]) {
	case 0:
		client_hello(p, n);
		break;
	case 1: {
		struct secho_tls_server_hello sh;
		int rc = secho_tls_server_hello_parse(p, n, &sh);
		CHECK(rc == 0 || rc == -EINVAL || rc == -EAGAIN);
		CHECK(inside(sh.alpn, p, n));
		break;
	}
	case 2: {
		struct secho_tls_cert c;
		char name[64];
		int rc = secho_tls_cert_parse(p, n, &c);
		CHECK(rc == 0 || rc == -EINVAL || rc == -EAGAIN);
		CHECK(inside(c.issuer_cn, p, n) && inside(c.subject_cn, p, n) &&
		      inside(c.pk_alg, p, n));
		if (c.has_pk_alg) {
			int l = secho_tls_oid_dotted(c.pk_alg.p, c.pk_alg.len, name, sizeof(name));
			CHECK(l >= 0 && (size_t)l == strlen(name) && l < (int)sizeof(name));
			uint16_t nid = secho_tls_oid_nid(c.pk_alg.p, c.pk_alg.len);
			CHECK(nid == 0 || c.pk_alg.len == 3 || c.pk_alg.len == 7 ||
			      c.pk_alg.len == 9);
		}
		break;
	}
	case 3: {
		const uint8_t *der = NULL;
		size_t dl = 0;
		int rc = secho_tls_certificate_first(p, n, &der, &dl);
		CHECK(rc == 0 || rc == -EINVAL);
		if (rc == 0)
			CHECK(der >= p && der + dl <= p + n);
		break;
	}
	default:
		feed_state(p, n);
		break;
	}
	return 0;
}
