/*
 * tests/unit/test_feat_tls.c - the tls feature set (src/flow/feature/tls.h): ClientHello,
 * ServerHello and certificate parses on hand-built messages, JA3 and JA4 against FoxIO's
 * specification examples (technical_details/JA4.md) and an MD5 computed by md5sum, the
 * certificate walk against certificates libcrypto builds, every truncation and lying length,
 * and the per-flow state fed byte by byte, with gaps, retransmissions and snapped segments.
 *
 *   test_feat_tls                      run the built-in vectors
 *   SECHO_TLS_PCAP=FILE test_feat_tls  also feed FILE's TCP flows (Ethernet or Linux cooked,
 *                                      pcap) to the state and print one line per flow:
 *                                      "FLOW <client port> <server port> {<json>}"
 *   test_feat_tls --write-seeds DIR    write the fuzzer's seed messages, exit
 */
#include "harness.h"

#include "flow/feature/tls.h"

#include <secho/dissect.h>

#include <errno.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/x509.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a message builder: vectors opened and closed, lengths filled at close ---- */

struct mb {
	uint8_t b[8192];
	size_t n;
	size_t open[8]; /* offsets of open length fields */
	unsigned width[8];
	unsigned depth;
};

static void put8(struct mb *m, unsigned v)
{
	m->b[m->n++] = (uint8_t)v;
}

static void put16(struct mb *m, unsigned v)
{
	put8(m, v >> 8);
	put8(m, v & 0xff);
}

static void putn(struct mb *m, const void *p, size_t n)
{
	memcpy(m->b + m->n, p, n);
	m->n += n;
}

static void vopen(struct mb *m, unsigned width)
{
	m->open[m->depth] = m->n;
	m->width[m->depth++] = width;
	for (unsigned i = 0; i < width; i++)
		put8(m, 0);
}

static void vclose(struct mb *m)
{
	m->depth--;
	size_t at = m->open[m->depth], w = m->width[m->depth];
	size_t len = m->n - at - w;
	for (unsigned i = 0; i < w; i++)
		m->b[at + i] = (uint8_t)(len >> (8 * (w - 1 - i)));
}

/* What a test ClientHello holds. Extension types are written in order; those with content
 * here get it, others are empty. */
struct ch_spec {
	uint16_t legacy;
	const uint16_t *ciphers;
	unsigned n_ciphers;
	const uint16_t *exts;
	unsigned n_exts;
	const char *sni;
	const char *const *alpn; /* NULL-terminated */
	const uint8_t *alpn_raw; /* a single raw ALPN value instead (alpn_raw_len bytes) */
	unsigned alpn_raw_len;
	const uint16_t *sigalgs;
	unsigned n_sigalgs;
	const uint16_t *groups;
	unsigned n_groups;
	const uint16_t *versions;
	unsigned n_versions;
	unsigned pad_len; /* bytes of padding (0x0015) content */
	unsigned ks_len;  /* bytes of key_share (0x0033) content */
};

static void build_ch(struct mb *m, const struct ch_spec *c)
{
	memset(m, 0, sizeof(*m));
	put8(m, SECHO_TLS_HS_CLIENT_HELLO);
	vopen(m, 3);
	put16(m, c->legacy);
	for (unsigned i = 0; i < 32; i++)
		put8(m, i);
	vopen(m, 1); /* session id */
	for (unsigned i = 0; i < 32; i++)
		put8(m, 0xa0 + i);
	vclose(m);
	vopen(m, 2);
	for (unsigned i = 0; i < c->n_ciphers; i++)
		put16(m, c->ciphers[i]);
	vclose(m);
	put8(m, 1);
	put8(m, 0);
	vopen(m, 2);
	for (unsigned i = 0; i < c->n_exts; i++) {
		uint16_t t = c->exts[i];
		put16(m, t);
		vopen(m, 2);
		if (t == 0x0000 && c->sni) {
			vopen(m, 2);
			put8(m, 0);
			vopen(m, 2);
			putn(m, c->sni, strlen(c->sni));
			vclose(m);
			vclose(m);
		} else if (t == 0x0010 && (c->alpn || c->alpn_raw)) {
			vopen(m, 2);
			if (c->alpn_raw) {
				vopen(m, 1);
				putn(m, c->alpn_raw, c->alpn_raw_len);
				vclose(m);
			}
			for (const char *const *a = c->alpn; a && *a; a++) {
				vopen(m, 1);
				putn(m, *a, strlen(*a));
				vclose(m);
			}
			vclose(m);
		} else if (t == 0x000d && c->sigalgs) {
			vopen(m, 2);
			for (unsigned k = 0; k < c->n_sigalgs; k++)
				put16(m, c->sigalgs[k]);
			vclose(m);
		} else if (t == 0x000a && c->groups) {
			vopen(m, 2);
			for (unsigned k = 0; k < c->n_groups; k++)
				put16(m, c->groups[k]);
			vclose(m);
		} else if (t == 0x000b) {
			vopen(m, 1);
			put8(m, 0);
			vclose(m);
		} else if (t == 0x002b && c->versions) {
			vopen(m, 1);
			for (unsigned k = 0; k < c->n_versions; k++)
				put16(m, c->versions[k]);
			vclose(m);
		} else if (t == 0x0033) {
			for (unsigned k = 0; k < c->ks_len; k++)
				put8(m, k * 7);
		} else if (t == 0x0015) {
			for (unsigned k = 0; k < c->pad_len; k++)
				put8(m, 0);
		} else if (t == 0x0039) {
			putn(m, "\x01\x02\x47\xd0\x04\x04\x80\x10\x00\x00", 10);
		}
		vclose(m);
	}
	vclose(m);
	vclose(m);
}

/* The JA4 specification's example (technical_details/JA4.md), with GREASE added where
 * Chrome puts it: it must not change the fingerprint. */
static const uint16_t spec_ciphers[] = {0x1a1a, 0x1301, 0x1302, 0x1303, 0xc02b, 0xc02f,
                                        0xc02c, 0xc030, 0xcca9, 0xcca8, 0xc013, 0xc014,
                                        0x009c, 0x009d, 0x002f, 0x0035};
static const uint16_t spec_exts[] = {0x3a3a, 0x001b, 0x0000, 0x0033, 0x0010, 0x4469,
                                     0x0017, 0x002d, 0x000d, 0x0005, 0x0023, 0x0012,
                                     0x002b, 0xff01, 0x000b, 0x000a, 0x0015, 0x4a4a};
static const uint16_t spec_sigalgs[] = {0x0403, 0x0804, 0x0401, 0x0503,
                                        0x0805, 0x0501, 0x0806, 0x0601};
static const uint16_t spec_groups[] = {0x5a5a, 0x001d, 0x0017, 0x0018};
static const uint16_t spec_versions[] = {0x6a6a, 0x0304, 0x0303};
static const char *const spec_alpn[] = {"h2", "http/1.1", NULL};

static struct ch_spec spec_hello(void)
{
	struct ch_spec c = {
	        .legacy = 0x0303,
	        .ciphers = spec_ciphers,
	        .n_ciphers = sizeof(spec_ciphers) / 2,
	        .exts = spec_exts,
	        .n_exts = sizeof(spec_exts) / 2,
	        .sni = "example.com",
	        .alpn = spec_alpn,
	        .sigalgs = spec_sigalgs,
	        .n_sigalgs = sizeof(spec_sigalgs) / 2,
	        .groups = spec_groups,
	        .n_groups = sizeof(spec_groups) / 2,
	        .versions = spec_versions,
	        .n_versions = sizeof(spec_versions) / 2,
	        .pad_len = 1200,
	        .ks_len = 1216 + 4 + 32, /* a post-quantum key share's size (X25519MLKEM768) */
	};
	return c;
}

static int span_is(struct secho_tls_span s, const char *v)
{
	return s.p && s.len == strlen(v) && memcmp(s.p, v, s.len) == 0;
}

/* The certificate's public key algorithm: secho's dotted OID and NID equal libcrypto's
 * (OBJ_obj2txt with numbers only, OBJ_obj2nid) for the algorithm named name. */
static void check_oid(const struct secho_tls_cert *c, const char *name)
{
	char mine[64], want[64];
	ASN1_OBJECT *o = OBJ_txt2obj(name, 0);
	int wl = o ? OBJ_obj2txt(want, sizeof(want), o, 1) : -1;
	int ml = c->has_pk_alg
	                 ? secho_tls_oid_dotted(c->pk_alg.p, c->pk_alg.len, mine, sizeof(mine))
	                 : -1;
	uint16_t nid = c->has_pk_alg ? secho_tls_oid_nid(c->pk_alg.p, c->pk_alg.len) : 0;
	T_CHECK(wl > 0 && ml == wl && !strcmp(mine, want) && o && nid == OBJ_obj2nid(o) &&
	                nid != NID_undef,
	        "%s: %s NID %u, libcrypto %s NID %d", name, ml > 0 ? mine : "-", nid,
	        wl > 0 ? want : "-", o ? OBJ_obj2nid(o) : -1);
	ASN1_OBJECT_free(o);
}

static void test_client_hello(void)
{
	struct mb m;
	struct secho_tls_hello h;
	char ja3[2048], ja4[SECHO_TLS_JA4_LEN + 1];
	uint8_t md5[16];
	struct ch_spec c = spec_hello();

	t_begin("tls clienthello: fields");
	build_ch(&m, &c);
	T_CHECK(secho_tls_client_hello_parse(m.b, m.n, &h) == 0, "parse");
	T_CHECK(h.legacy_version == 0x0303 && h.version == 0x0304, "versions %04x %04x",
	        h.legacy_version, h.version);
	T_CHECK(h.n_ciphers == 16 && h.ciphers[0] == 0x1a1a && h.ciphers[15] == 0x0035, "ciphers");
	T_CHECK(h.n_exts == 18 && h.ext_type[2] == 0 && h.ext_len[16] == 1200, "extensions");
	T_CHECK(h.has_sni && span_is(h.sni, "example.com"), "sni");
	T_CHECK(h.has_alpn && h.n_alpn == 2 && span_is(h.alpn[0], "h2") &&
	                span_is(h.alpn[1], "http/1.1"),
	        "alpn");
	T_CHECK(h.n_groups == 4 && h.groups[1] == 0x001d, "groups");
	T_CHECK(h.n_pointfmt == 1 && h.pointfmt[0] == 0, "point formats");
	T_CHECK(h.n_sigalgs == 8 && h.sigalgs[0] == 0x0403, "sigalgs");
	T_CHECK(!h.has_quic_tp && !h.overflow, "no quic tp, no overflow");
	/* bytes after the message are not its own */
	m.b[m.n] = 0xee;
	T_CHECK(secho_tls_client_hello_parse(m.b, m.n + 1, &h) == 0, "trailing byte");
	t_end();

	t_begin("tls ja4: the specification's example");
	T_CHECK(secho_tls_client_hello_parse(m.b, m.n, &h) == 0, "parse");
	T_CHECK(secho_tls_ja4(&h, 't', ja4) == 0, "ja4");
	T_CHECK(!strcmp(ja4, "t13d1516h2_8daaf6152771_e5627efa2ab1"), "ja4 %s", ja4);
	T_CHECK(secho_tls_ja4(&h, 'q', ja4) == 0 && ja4[0] == 'q', "quic prefix");
	/* the specification's no-signature-algorithms string: 000d present and empty */
	c.n_sigalgs = 0;
	build_ch(&m, &c);
	T_CHECK(secho_tls_client_hello_parse(m.b, m.n, &h) == 0 && secho_tls_ja4(&h, 't', ja4) == 0,
	        "parse, ja4");
	T_CHECK(!strcmp(ja4 + 24, "6d807ffa2a79"), "ja4_c without signature algorithms %s", ja4);
	t_end();

	t_begin("tls ja3: string and md5 (md5sum of the string)");
	c = spec_hello();
	build_ch(&m, &c);
	T_CHECK(secho_tls_client_hello_parse(m.b, m.n, &h) == 0, "parse");
	int n = secho_tls_ja3(&h, ja3, sizeof(ja3), md5);
	static const char want3[] =
	        "771,4865-4866-4867-49195-49199-49196-49200-52393-52392-49171-"
	        "49172-156-157-47-53,27-0-51-16-17513-23-45-13-5-35-18-43-65281-"
	        "11-10-21,29-23-24,0";
	T_CHECK(n == (int)strlen(want3) && !strcmp(ja3, want3), "ja3 %s", ja3);
	uint8_t want_md5[16];
	T_CHECK(t_unhex("c000e2caf3a25423f9de6c8a4b12a975", want_md5, 16) == 16 &&
	                !memcmp(md5, want_md5, 16),
	        "md5");
	T_CHECK(secho_tls_ja3(&h, ja3, 20, md5) == -ENOSPC, "small buffer");
	t_end();

	t_begin("tls ja4: ALPN, counts and empty lists");
	static const struct {
		const char *hex, *want;
	} alpn[] = {{"ab", "ab"},   {"20", "20"},   {"abcd", "ad"},     {"2061", "21"},
	            {"30ab", "3b"}, {"6120", "60"}, {"3031abcd", "3d"}, {"30abcd31", "01"},
	            {"68", "hh"},   {"", "00"}};
	static const uint16_t only_alpn[] = {0x0010};
	for (unsigned i = 0; i < sizeof(alpn) / sizeof(alpn[0]); i++) {
		uint8_t raw[8];
		long rl = t_unhex(alpn[i].hex, raw, sizeof(raw));
		struct ch_spec a = {.legacy = 0x0301,
		                    .ciphers = spec_ciphers + 1,
		                    .n_ciphers = 1,
		                    .exts = only_alpn,
		                    .n_exts = 1,
		                    .alpn_raw = raw,
		                    .alpn_raw_len = (unsigned)rl};
		build_ch(&m, &a);
		T_CHECK(secho_tls_client_hello_parse(m.b, m.n, &h) == 0 &&
		                secho_tls_ja4(&h, 't', ja4) == 0,
		        "alpn %s: parse", alpn[i].hex);
		T_CHECK(ja4[8] == alpn[i].want[0] && ja4[9] == alpn[i].want[1], "alpn %s: %s",
		        alpn[i].hex, ja4);
		/* only ALPN: the sorted extension list is empty */
		T_CHECK(!strncmp(ja4, "t10i0101", 8) && !strcmp(ja4 + 24, "000000000000"), "%s",
		        ja4);
	}
	struct ch_spec e = {.legacy = 0x0300};
	build_ch(&m, &e);
	T_CHECK(secho_tls_client_hello_parse(m.b, m.n, &h) == 0 && secho_tls_ja4(&h, 't', ja4) == 0,
	        "empty hello");
	T_CHECK(!strcmp(ja4, "ts3i000000_000000000000_000000000000"), "empty: %s", ja4);
	/* an SSL 3.0 hello that ends after the compression methods */
	uint8_t old[4 + 2 + 32 + 1 + 4 + 2] = {1, 0, 0, 41, 3, 0};
	old[38] = 0;
	old[39] = 0;
	old[40] = 2;
	old[41] = 0;
	old[42] = 0x0a;
	old[43] = 1;
	old[44] = 0;
	T_CHECK(secho_tls_client_hello_parse(old, 45, &h) == 0 && h.n_ciphers == 1 &&
	                h.ciphers[0] == 0x000a && h.n_exts == 0,
	        "no extensions block");
	t_end();
}

/* Every truncation answers -EAGAIN (the header's length is not there) and every single-byte
 * change either parses or is refused: run under ASan, an exact-size heap copy each time. */
static void test_lies(void)
{
	struct mb m;
	struct secho_tls_hello h;
	struct ch_spec c = spec_hello();
	c.pad_len = 0;
	c.ks_len = 0;
	t_begin("tls clienthello: truncations and lying lengths");
	build_ch(&m, &c);
	for (size_t cut = 0; cut < m.n; cut++) {
		uint8_t *p = malloc(cut ? cut : 1);
		memcpy(p, m.b, cut);
		T_CHECK(secho_tls_client_hello_parse(p, cut, &h) == -EAGAIN, "cut at %zu", cut);
		free(p);
	}
	/* the inner lengths: each length byte raised by one is a lie the parse refuses */
	size_t lies = 0;
	for (size_t i = 4; i < m.n; i++) {
		uint8_t *p = malloc(m.n);
		memcpy(p, m.b, m.n);
		p[i] ^= 0xff;
		int rc = secho_tls_client_hello_parse(p, m.n, &h);
		T_CHECK(rc == 0 || rc == -EINVAL, "byte %zu: %d", i, rc);
		lies += rc == -EINVAL;
		free(p);
	}
	T_CHECK(lies > 20, "changed lengths refused: %zu", lies);
	/* the extensions block's length one more than there is */
	size_t ext_len_at = 4 + 2 + 32 + 1 + 32 + 2 + c.n_ciphers * 2 + 2;
	m.b[ext_len_at + 1]++;
	T_CHECK(secho_tls_client_hello_parse(m.b, m.n, &h) == -EINVAL, "extensions length + 1");
	/* a ServerHello is not a ClientHello */
	uint8_t sh[4] = {2, 0, 0, 0};
	T_CHECK(secho_tls_client_hello_parse(sh, 4, &h) == -EINVAL, "wrong type");
	t_end();
}

static void build_sh(struct mb *m, uint16_t legacy, uint16_t sv, uint16_t cipher, const char *alpn,
                     int hrr)
{
	static const uint8_t hrr_random[32] = {0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11,
	                                       0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
	                                       0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e,
	                                       0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c};
	memset(m, 0, sizeof(*m));
	put8(m, SECHO_TLS_HS_SERVER_HELLO);
	vopen(m, 3);
	put16(m, legacy);
	if (hrr)
		putn(m, hrr_random, 32);
	else
		for (unsigned i = 0; i < 32; i++)
			put8(m, 0x40 + i);
	vopen(m, 1);
	vclose(m);
	put16(m, cipher);
	put8(m, 0);
	vopen(m, 2);
	put16(m, 0xff01);
	vopen(m, 2);
	put8(m, 0);
	vclose(m);
	if (sv) {
		put16(m, 0x002b);
		vopen(m, 2);
		put16(m, sv);
		vclose(m);
	}
	if (alpn) {
		put16(m, 0x0010);
		vopen(m, 2);
		vopen(m, 2);
		vopen(m, 1);
		putn(m, alpn, strlen(alpn));
		vclose(m);
		vclose(m);
		vclose(m);
	}
	vclose(m);
	vclose(m);
}

static void test_server_hello(void)
{
	struct mb m;
	struct secho_tls_server_hello sh;
	t_begin("tls serverhello");
	build_sh(&m, 0x0303, 0x0304, 0x1302, "h2", 0);
	T_CHECK(secho_tls_server_hello_parse(m.b, m.n, &sh) == 0, "parse");
	T_CHECK(sh.legacy_version == 0x0303 && sh.version == 0x0304 && sh.cipher_suite == 0x1302 &&
	                sh.has_alpn && span_is(sh.alpn, "h2") && !sh.hrr,
	        "fields");
	build_sh(&m, 0x0302, 0, 0xc014, NULL, 0);
	T_CHECK(secho_tls_server_hello_parse(m.b, m.n, &sh) == 0 && sh.version == 0x0302 &&
	                !sh.has_alpn && sh.cipher_suite == 0xc014,
	        "tls 1.1");
	build_sh(&m, 0x0303, 0x0304, 0x1301, NULL, 1);
	T_CHECK(secho_tls_server_hello_parse(m.b, m.n, &sh) == 0 && sh.hrr, "hrr");
	for (size_t cut = 0; cut < m.n; cut++)
		T_CHECK(secho_tls_server_hello_parse(m.b, cut, &sh) == -EAGAIN, "cut %zu", cut);
	t_end();
}

/* ---- certificates built by libcrypto ---- */

static size_t make_cert(uint8_t *out, size_t cap, const char *issuer, const char *subject, long nb,
                        long na, int ec)
{
	EVP_PKEY *k = ec ? EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256")
	                 : EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	X509 *x = X509_new();
	X509_NAME *in = X509_NAME_new(), *sn = X509_NAME_new();
	size_t n = 0;
	if (!k || !x || !in || !sn)
		goto out;
	X509_NAME_add_entry_by_txt(in, "C", MBSTRING_ASC, (const unsigned char *)"CZ", -1, -1, 0);
	X509_NAME_add_entry_by_txt(in, "O", MBSTRING_ASC, (const unsigned char *)"Test", -1, -1, 0);
	X509_NAME_add_entry_by_txt(in, "CN", MBSTRING_UTF8, (const unsigned char *)issuer, -1, -1,
	                           0);
	X509_NAME_add_entry_by_txt(sn, "CN", MBSTRING_UTF8, (const unsigned char *)subject, -1, -1,
	                           0);
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 12345);
	X509_set_issuer_name(x, in);
	X509_set_subject_name(x, sn);
	ASN1_TIME_set(X509_getm_notBefore(x), nb);
	ASN1_TIME_set(X509_getm_notAfter(x), na);
	X509_set_pubkey(x, k);
	if (X509_sign(x, k, ec ? EVP_sha256() : NULL) <= 0)
		goto out;
	int len = i2d_X509(x, NULL);
	if (len > 0 && (size_t)len <= cap) {
		unsigned char *p = out;
		n = (size_t)i2d_X509(x, &p);
	}
out:
	X509_NAME_free(in);
	X509_NAME_free(sn);
	X509_free(x);
	EVP_PKEY_free(k);
	return n;
}

static void test_cert(void)
{
	uint8_t der[4096];
	struct secho_tls_cert c;
	char name[64];
	t_begin("tls certificate: libcrypto-built certificates");
	/* 1999-12-31T23:59:59Z (UTCTime) and 2051-01-01T00:00:00Z (GeneralizedTime) */
	size_t n = make_cert(der, sizeof(der), "Secho Test CA", "www.example.test", 946684799L,
	                     2556143999L + 1, 1);
	T_CHECK(n > 0, "certificate built");
	T_CHECK(secho_tls_cert_parse(der, n, &c) == 0, "parse");
	T_CHECK(span_is(c.issuer_cn, "Secho Test CA") && span_is(c.subject_cn, "www.example.test"),
	        "CNs");
	T_CHECK(c.not_before == 946684799 && c.not_after == 2556144000LL, "validity %lld %lld",
	        (long long)c.not_before, (long long)c.not_after);
	/* the OID dotted and its NID, as libcrypto has them (OBJ_obj2txt, OBJ_obj2nid) */
	check_oid(&c, "id-ecPublicKey");
	/* every prefix: -EAGAIN, with what was reached kept */
	int reached_cn = 0;
	for (size_t cut = 0; cut < n; cut++) {
		uint8_t *p = malloc(cut ? cut : 1);
		memcpy(p, der, cut);
		int rc = secho_tls_cert_parse(p, cut, &c);
		int pk_done = rc == 0; /* the walk stops at the algorithm: the rest is not needed */
		T_CHECK(rc == -EAGAIN || pk_done, "cut %zu: %d", cut, rc);
		reached_cn |= c.has_subject && span_is(c.subject_cn, "www.example.test");
		free(p);
	}
	T_CHECK(reached_cn, "a prefix reaches the subject");
	n = make_cert(der, sizeof(der), "I", "S", 0, 86400, 0);
	T_CHECK(n > 0 && secho_tls_cert_parse(der, n, &c) == 0, "ed25519 parse");
	T_CHECK(c.not_before == 0 && c.not_after == 86400, "ed25519 validity");
	check_oid(&c, "ED25519");
	static const uint8_t oid[] = {0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x63};
	T_CHECK(secho_tls_oid_dotted(oid, sizeof(oid), name, sizeof(name)) > 0 &&
	                !strcmp(name, "1.2.840.113549.1.1.99") &&
	                secho_tls_oid_nid(oid, sizeof(oid)) == 0,
	        "dotted %s, NID %u (want 0: not known)", name, secho_tls_oid_nid(oid, sizeof(oid)));
	/* every algorithm of the table against libcrypto's NID of its dotted form */
	static const char *const algs[] = {"rsaEncryption", "RSASSA-PSS", "id-ecPublicKey",
	                                   "dsaEncryption", "X25519",     "X448",
	                                   "ED25519",       "ED448"};
	for (size_t i = 0; i < sizeof(algs) / sizeof(algs[0]); i++) {
		ASN1_OBJECT *o = OBJ_txt2obj(algs[i], 0);
		uint8_t *b = NULL;
		int bl = o ? i2d_ASN1_OBJECT(o, &b) : -1; /* 06 len contents */
		T_CHECK(bl > 2 && b && b[1] == bl - 2 &&
		                secho_tls_oid_nid(b + 2, (size_t)bl - 2) == OBJ_obj2nid(o) &&
		                OBJ_obj2nid(o) != NID_undef,
		        "%s: NID %u, libcrypto's %d", algs[i],
		        bl > 2 && b ? secho_tls_oid_nid(b + 2, (size_t)bl - 2) : 0,
		        o ? OBJ_obj2nid(o) : -1);
		OPENSSL_free(b);
		ASN1_OBJECT_free(o);
	}
	/* flip each byte: refused or parsed, never read past */
	for (size_t i = 0; i < n; i++) {
		uint8_t *p = malloc(n);
		memcpy(p, der, n);
		p[i] ^= 0x80;
		int rc = secho_tls_cert_parse(p, n, &c);
		T_CHECK(rc == 0 || rc == -EINVAL || rc == -EAGAIN, "flip %zu: %d", i, rc);
		free(p);
	}
	t_end();
}

/* ---- the per-flow state ---- */

/* Wrap a handshake message stream in records of at most rec_max bytes. */
static size_t records(uint8_t *out, const uint8_t *hs, size_t n, size_t rec_max, uint16_t rv)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i += rec_max) {
		size_t k = n - i < rec_max ? n - i : rec_max;
		out[o++] = 22;
		out[o++] = (uint8_t)(rv >> 8);
		out[o++] = (uint8_t)rv;
		out[o++] = (uint8_t)(k >> 8);
		out[o++] = (uint8_t)k;
		memcpy(out + o, hs + i, k);
		o += k;
	}
	return o;
}

/* Feed stream[0..n) as direction dir's segments of seg bytes from sequence number isn+1. */
static void feed(struct secho_feat_tls *s, unsigned dir, uint32_t isn, const uint8_t *stream,
                 size_t n, size_t seg)
{
	struct secho_feat_pkt p = {
	        .proto = 6, .dir = (uint8_t)dir, .tcp_flags = 0x02, .tcp_seq = isn};
	secho_feat_tls_packet(s, &p); /* the SYN */
	for (size_t i = 0; i < n; i += seg) {
		size_t k = n - i < seg ? n - i : seg;
		uint8_t *copy = malloc(k);
		memcpy(copy, stream + i, k);
		p.payload = copy;
		p.len = p.wire_len = (uint32_t)k;
		p.tcp_seq = isn + 1 + (uint32_t)i;
		p.tcp_flags = 0x18;
		secho_feat_tls_packet(s, &p);
		free(copy);
	}
}

static void server_flight(uint8_t *srv, size_t *srv_n, size_t rec_max)
{
	struct mb sh, cert;
	uint8_t der[2048], hs[8192];
	size_t dn = make_cert(der, sizeof(der), "Flight CA", "flight.test", 1700000000L,
	                      1800000000L, 1);
	build_sh(&sh, 0x0303, 0, 0xc02f, "http/1.1", 0);
	memset(&cert, 0, sizeof(cert));
	put8(&cert, SECHO_TLS_HS_CERTIFICATE);
	vopen(&cert, 3);
	vopen(&cert, 3);
	vopen(&cert, 3);
	putn(&cert, der, dn);
	vclose(&cert);
	vopen(&cert, 3); /* a second certificate: only the first is read */
	putn(&cert, der, dn);
	vclose(&cert);
	vclose(&cert);
	vclose(&cert);
	size_t n = 0;
	memcpy(hs, sh.b, sh.n);
	n += sh.n;
	memcpy(hs + n, cert.b, cert.n);
	n += cert.n;
	static const uint8_t done[4] = {14, 0, 0, 0};
	memcpy(hs + n, done, 4);
	n += 4;
	*srv_n = records(srv, hs, n, rec_max, 0x0303);
}

static void check_full(struct secho_feat_tls *s, const char *what)
{
	T_CHECK(s->flags & SECHO_FEAT_TLS_F_CH, "%s: clienthello", what);
	T_CHECK(s->sni_len == 11 && !memcmp(s->sni, "example.com", 11), "%s: sni", what);
	T_CHECK(s->client_version == 0x0304 && s->client_legacy_version == 0x0303, "%s: cver",
	        what);
	T_CHECK(!strncmp(s->ja4, "t13d1516h2_8daaf6152771_e5627efa2ab1", 36), "%s: ja4", what);
	T_CHECK(s->alpn_offer_len == 11 && !memcmp(s->alpn_offer, "h2,http/1.1", 11), "%s: offer",
	        what);
	T_CHECK(s->n_ext == 18 && s->ext_type[0] == 0x3a3a && s->ext_len[16] == 1200, "%s: exts",
	        what);
	T_CHECK(s->flags & SECHO_FEAT_TLS_F_SH, "%s: serverhello", what);
	T_CHECK(s->server_version == 0x0303 && s->cipher_suite == 0xc02f, "%s: sver, cipher", what);
	T_CHECK(s->alpn_len == 8 && !memcmp(s->alpn, "http/1.1", 8), "%s: alpn", what);
	T_CHECK((s->flags & SECHO_FEAT_TLS_F_CERT) && s->issuer_cn_len == 9 &&
	                !memcmp(s->issuer_cn, "Flight CA", 9) && s->subject_cn_len == 11 &&
	                !memcmp(s->subject_cn, "flight.test", 11),
	        "%s: cert CNs", what);
	T_CHECK(s->not_before == 1700000000 && s->not_after == 1800000000, "%s: validity", what);
	T_CHECK(s->pk_alg_len == 17 && !memcmp(s->pk_alg, "1.2.840.10045.2.1", 17) &&
	                s->pk_nid == NID_X9_62_id_ecPublicKey,
	        "%s: pk %.*s NID %u", what, s->pk_alg_len, s->pk_alg, s->pk_nid);
	T_CHECK(secho_feat_tls_done(s), "%s: done", what);
	T_CHECK(!s->gap && !s->snapped && !s->malformed && !s->oversize, "%s: no counters", what);
}

static void test_state(void)
{
	static uint8_t cli[32768], srv[32768]; /* records of 1 byte: 6 bytes each */
	struct mb m;
	struct ch_spec c = spec_hello();
	struct secho_feat_tls *s = malloc(sizeof(*s));
	size_t cn, sn;
	build_ch(&m, &c);

	t_begin("tls state: whole, byte by byte, split records");
	static const size_t segs[] = {1, 2, 3, 7, 100, 1448, 65535};
	static const size_t recs[] = {16384, 1, 5, 300};
	for (unsigned r = 0; r < sizeof(recs) / sizeof(recs[0]); r++) {
		cn = records(cli, m.b, m.n, recs[r], 0x0301);
		server_flight(srv, &sn, recs[r]);
		for (unsigned i = 0; i < sizeof(segs) / sizeof(segs[0]); i++) {
			char what[64];
			snprintf(what, sizeof(what), "records of %zu, segments of %zu", recs[r],
			         segs[i]);
			memset(s, 0, sizeof(*s));
			feed(s, SECHO_FEAT_FWD, 1000, cli, cn, segs[i]);
			feed(s, SECHO_FEAT_REV, 0xfffffff0u, srv, sn, segs[i]); /* seq wraps */
			check_full(s, what);
		}
	}
	t_end();

	t_begin("tls state: gaps, retransmissions, snaps, oversize");
	cn = records(cli, m.b, m.n, 16384, 0x0301);
	/* a retransmitted first segment, then the rest */
	memset(s, 0, sizeof(*s));
	struct secho_feat_pkt p = {.proto = 6, .dir = 0, .tcp_flags = 0x18, .tcp_seq = 5000};
	p.payload = cli;
	p.len = p.wire_len = 100;
	secho_feat_tls_packet(s, &p);
	secho_feat_tls_packet(s, &p);
	p.len = p.wire_len = 150; /* overlaps the first and brings 50 new bytes */
	secho_feat_tls_packet(s, &p);
	p.payload = cli + 150;
	p.tcp_seq = 5150;
	p.len = p.wire_len = (uint32_t)(cn - 150);
	secho_feat_tls_packet(s, &p);
	T_CHECK((s->flags & SECHO_FEAT_TLS_F_CH) && s->sni_len == 11 && !s->gap,
	        "retransmissions: clienthello");
	/* a missing segment: the direction stops, counted */
	memset(s, 0, sizeof(*s));
	p.payload = cli;
	p.tcp_seq = 5000;
	p.len = p.wire_len = 100;
	secho_feat_tls_packet(s, &p);
	p.payload = cli + 200;
	p.tcp_seq = 5200;
	p.len = p.wire_len = (uint32_t)(cn - 200);
	secho_feat_tls_packet(s, &p);
	T_CHECK(!(s->flags & SECHO_FEAT_TLS_F_CH) && s->gap == 1 &&
	                s->dir[0].state == SECHO_FEAT_TLS_DIR_DONE,
	        "gap counted, nothing guessed");
	/* a snapped segment */
	memset(s, 0, sizeof(*s));
	p.payload = cli;
	p.tcp_seq = 5000;
	p.len = 100;
	p.wire_len = (uint32_t)cn;
	secho_feat_tls_packet(s, &p);
	T_CHECK(!(s->flags & SECHO_FEAT_TLS_F_CH) && s->snapped == 1, "snapped counted");
	/* a hello whose kept bytes (here its cipher suites) exceed the buffer */
	static uint16_t many[SECHO_FEAT_TLS_BUF / 2];
	for (unsigned i = 0; i < SECHO_FEAT_TLS_BUF / 2; i++)
		many[i] = (uint16_t)(0x0100 + i);
	struct ch_spec big = c;
	big.ciphers = many;
	big.n_ciphers = SECHO_FEAT_TLS_BUF / 2;
	build_ch(&m, &big);
	cn = records(cli, m.b, m.n, 16384, 0x0301);
	memset(s, 0, sizeof(*s));
	feed(s, 0, 1, cli, cn, 1448);
	T_CHECK(!(s->flags & SECHO_FEAT_TLS_F_CH) && s->oversize == 1, "oversize counted");
	/* a hello whose message ends inside an extension left out of the buffer: the message
	 * and extension-block lengths lowered alike; refused as the whole message would be */
	build_ch(&m, &c);
	T_CHECK(m.n > 2 * SECHO_FEAT_TLS_BUF, "the hello (%zu bytes) exceeds the buffer", m.n);
	size_t cut = m.n - 100;
	m.b[1] = (uint8_t)((cut - 4) >> 16);
	m.b[2] = (uint8_t)((cut - 4) >> 8);
	m.b[3] = (uint8_t)(cut - 4);
	cn = records(cli, m.b, cut, 16384, 0x0301);
	memset(s, 0, sizeof(*s));
	feed(s, 0, 1, cli, cn, 1448);
	T_CHECK(!(s->flags & SECHO_FEAT_TLS_F_CH) && s->malformed == 1,
	        "ends inside a left-out extension: refused");
	/* not TLS: refused at the first record header */
	memset(s, 0, sizeof(*s));
	feed(s, 0, 1, (const uint8_t *)"GET / HTTP/1.1\r\n\r\n", 18, 18);
	T_CHECK(s->malformed == 0 && s->dir[0].state == SECHO_FEAT_TLS_DIR_DONE, "not tls");
	/* a TLS stream whose second record header is not TLS's: counted */
	memset(s, 0, sizeof(*s));
	static const uint8_t broken[12] = {0x16, 3, 1, 0, 2, 1, 0, 'G', 'E', 'T', ' ', '/'};
	memcpy(cli, broken, sizeof(broken));
	feed(s, 0, 1, cli, 12, 12);
	T_CHECK(s->malformed == 1 && s->dir[0].state == SECHO_FEAT_TLS_DIR_DONE, "broken tls");
	/* TLS 1.3: the server direction ends after the ServerHello */
	memset(s, 0, sizeof(*s));
	struct mb sh;
	build_sh(&sh, 0x0303, 0x0304, 0x1301, "h2", 0);
	sn = records(srv, sh.b, sh.n, 16384, 0x0303);
	static const uint8_t ccs_app[] = {20, 3, 3, 0, 1, 1, 23, 3, 3, 0, 2, 0xaa, 0xbb};
	memcpy(srv + sn, ccs_app, sizeof(ccs_app));
	sn += sizeof(ccs_app);
	c.pad_len = 10;
	build_ch(&m, &c);
	cn = records(cli, m.b, m.n, 16384, 0x0301);
	feed(s, 0, 1, cli, cn, 1448);
	feed(s, 1, 7, srv, sn, 1448);
	T_CHECK(s->server_version == 0x0304 && s->cipher_suite == 0x1301 && s->alpn_len == 2 &&
	                secho_feat_tls_done(s) && !(s->flags & SECHO_FEAT_TLS_F_CERT),
	        "tls 1.3 server");
	t_end();

	t_begin("tls state: json");
	char buf[4096];
	int n = secho_feat_tls_json(s, buf, sizeof(buf));
	T_CHECK(n > 0 && (size_t)n == strlen(buf), "written %d", n);
	T_CHECK(strstr(buf, "\"tls_sni\":\"example.com\"") && strstr(buf, "\"tls_alpn\":\"h2\"") &&
	                strstr(buf, "\"tls_server_version\":772") &&
	                strstr(buf, "\"tls_cipher_suite\":4865") &&
	                strstr(buf, "\"tls_ja4\":\"t13d1516h2_8daaf6152771_e5627efa2ab1\"") &&
	                strstr(buf, "\"tls_ext_type\":[14906,27,0,51,16,"),
	        "members: %s", buf);
	T_CHECK(!strstr(buf, "tls_issuer_cn"), "no certificate fields when none was seen");
	for (size_t cap = 0; cap < (size_t)n + 1; cap++)
		T_CHECK(secho_feat_tls_json(s, buf, cap) == -ENOSPC, "cap %zu", cap);
	T_CHECK(secho_feat_tls_json(s, buf, (size_t)n + 1) == n, "exact cap");
	memset(s, 0, sizeof(*s));
	s->flags = SECHO_FEAT_TLS_F_CH | SECHO_FEAT_TLS_F_SNI;
	memcpy(s->sni, "a\"b\\c\x01\xff", 7);
	s->sni_len = 7;
	T_CHECK(secho_feat_tls_json(s, buf, sizeof(buf)) > 0 &&
	                strstr(buf, "\"tls_sni\":\"a\\\"b\\\\c\\u0001\\u00ff\""),
	        "escaped: %s", buf);
	/* an empty string member: nothing is written past cap, whatever cap is */
	s->sni_len = 0;
	n = secho_feat_tls_json(s, buf, sizeof(buf));
	T_CHECK(n > 0 && strstr(buf, "\"tls_sni\":\"\""), "empty sni: %s", buf);
	for (size_t cap = 0; cap < (size_t)n + 2; cap++) {
		memset(buf, 0x7f, sizeof(buf));
		int r = secho_feat_tls_json(s, buf, cap);
		T_CHECK(buf[cap] == 0x7f && (cap > (size_t)n ? r == n : r == -ENOSPC),
		        "cap %zu: %d, byte past cap %02x", cap, r, (unsigned char)buf[cap]);
	}
	memset(s, 0, sizeof(*s));
	T_CHECK(secho_feat_tls_json(s, buf, sizeof(buf)) == 0 && buf[0] == 0, "empty state");
	t_end();
	free(s);
}

/* ---- a capture's flows ---- */

struct pflow {
	uint8_t addr[2][16];
	uint16_t port[2];
	int alen;
	struct secho_feat_tls st;
};

static int run_pcap(const char *path)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline(path, err);
	if (!pc) {
		fprintf(stderr, "%s: %s\n", path, err);
		return 1;
	}
	int dlt = pcap_datalink(pc);
	enum { MAXF = 64 };
	struct pflow *f = calloc(MAXF, sizeof(*f));
	unsigned nf = 0;
	struct pcap_pkthdr *ph;
	const u_char *data;
	while (pcap_next_ex(pc, &ph, &data) == 1) {
		uint8_t frame[65536];
		const uint8_t *fr = data;
		size_t cap = ph->caplen, wire = ph->len;
		if (dlt == DLT_LINUX_SLL) { /* 16-byte cooked header: rebuild an Ethernet one */
			if (cap < 16 || cap - 16 + 14 > sizeof(frame))
				continue;
			memset(frame, 0, 12);
			memcpy(frame + 12, data + 14, 2);
			memcpy(frame + 14, data + 16, cap - 16);
			fr = frame;
			cap = cap - 16 + 14;
			wire = wire - 16 + 14;
		} else if (dlt != DLT_EN10MB) {
			fprintf(stderr, "%s: link type %d not read here\n", path, dlt);
			break;
		}
		struct secho_dissect d;
		if (secho_dissect_snap(fr, cap, wire, &d) != 0 || d.proto != 6 ||
		    !(d.flags & SECHO_DISSECT_F_L4))
			continue;
		int alen = d.ip_version == 4 ? 4 : 16;
		const uint8_t *src = fr + d.addr_off, *dst = src + alen;
		unsigned i, dir = 0;
		for (i = 0; i < nf; i++) {
			if (f[i].alen == alen && !memcmp(f[i].addr[0], src, alen) &&
			    !memcmp(f[i].addr[1], dst, alen) && f[i].port[0] == d.sport &&
			    f[i].port[1] == d.dport) {
				dir = 0;
				break;
			}
			if (f[i].alen == alen && !memcmp(f[i].addr[1], src, alen) &&
			    !memcmp(f[i].addr[0], dst, alen) && f[i].port[1] == d.sport &&
			    f[i].port[0] == d.dport) {
				dir = 1;
				break;
			}
		}
		if (i == nf) {
			if (nf == MAXF)
				continue;
			memcpy(f[nf].addr[0], src, alen);
			memcpy(f[nf].addr[1], dst, alen);
			f[nf].port[0] = d.sport;
			f[nf].port[1] = d.dport;
			f[nf].alen = alen;
			nf++;
		}
		const uint8_t *l4 = fr + d.l4_off;
		size_t hdr = d.tcp_doff, plen_wire = d.l4_len - hdr;
		size_t have = cap > d.l4_off + hdr ? cap - d.l4_off - hdr : 0;
		struct secho_feat_pkt p = {
		        .payload = l4 + hdr,
		        .len = (uint32_t)(have < plen_wire ? have : plen_wire),
		        .wire_len = (uint32_t)plen_wire,
		        .ip_len = d.ip_len,
		        .tcp_seq = (uint32_t)l4[4] << 24 | (uint32_t)l4[5] << 16 |
		                   (uint32_t)l4[6] << 8 | l4[7],
		        .sport = d.sport,
		        .dport = d.dport,
		        .proto = 6,
		        .dir = (uint8_t)dir,
		        .tcp_flags = d.tcp_flags,
		};
		secho_feat_tls_packet(&f[i].st, &p);
	}
	pcap_close(pc);
	for (unsigned i = 0; i < nf; i++) {
		char buf[4096];
		int n = secho_feat_tls_json(&f[i].st, buf, sizeof(buf));
		printf("FLOW %u %u {%s}\n", f[i].port[0], f[i].port[1], n >= 0 ? buf : "");
	}
	free(f);
	return 0;
}

static int write_seeds(const char *dir)
{
	struct mb m;
	struct ch_spec c = spec_hello();
	char path[512];
	c.pad_len = 20;
	build_ch(&m, &c);
	struct {
		const char *name;
		uint8_t sel;
		const uint8_t *p;
		size_t n;
	} seeds[3];
	static uint8_t ch[8192], sh[512], cert[4096];
	memcpy(ch, m.b, m.n);
	seeds[0].name = "clienthello";
	seeds[0].sel = 0;
	seeds[0].p = ch;
	seeds[0].n = m.n;
	build_sh(&m, 0x0303, 0x0304, 0x1301, "h2", 0);
	memcpy(sh, m.b, m.n);
	seeds[1].name = "serverhello";
	seeds[1].sel = 1;
	seeds[1].p = sh;
	seeds[1].n = m.n;
	size_t dn = make_cert(cert, sizeof(cert), "Seed CA", "seed.test", 0, 86400, 1);
	seeds[2].name = "certificate";
	seeds[2].sel = 2;
	seeds[2].p = cert;
	seeds[2].n = dn;
	/* the per-flow state: both directions' record streams as segments of 497 bytes, each
	 * after its control byte (fuzz_tls.c: direction in bit 7, size in the low 5 bits) */
	static uint8_t st[24576], cli[8192], srv[16384];
	size_t cn = records(cli, ch, seeds[0].n, 300, 0x0301), sn, o = 0;
	server_flight(srv, &sn, 16384);
	st[o++] = 4;
	for (size_t i = 0; i < cn; i += 497) {
		st[o++] = 0x1f;
		memcpy(st + o, cli + i, cn - i < 497 ? cn - i : 497);
		o += cn - i < 497 ? cn - i : 497;
	}
	for (size_t i = 0; i < sn; i += 497) {
		st[o++] = 0x9f;
		memcpy(st + o, srv + i, sn - i < 497 ? sn - i : 497);
		o += sn - i < 497 ? sn - i : 497;
	}
	snprintf(path, sizeof(path), "%s/state", dir);
	FILE *sf = fopen(path, "wb");
	if (!sf || fwrite(st, 1, o, sf) != o || fclose(sf) != 0) {
		perror(path);
		return 1;
	}
	for (unsigned i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, seeds[i].name);
		FILE *fp = fopen(path, "wb");
		if (!fp || fwrite(&seeds[i].sel, 1, 1, fp) != 1 ||
		    fwrite(seeds[i].p, 1, seeds[i].n, fp) != seeds[i].n || fclose(fp) != 0) {
			perror(path);
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--write-seeds"))
		return write_seeds(argv[2]);
	test_client_hello();
	test_lies();
	test_server_hello();
	test_cert();
	test_state();
	const char *pcap = getenv("SECHO_TLS_PCAP");
	if (pcap && *pcap && run_pcap(pcap))
		return 1;
	return t_exit();
}
