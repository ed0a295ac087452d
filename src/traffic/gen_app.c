/*
 * src/traffic/gen_app.c - application payloads for the traffic generator (gen_app.h;
 * docs/FLOW.md, "Application payloads").
 *
 * Messages are written through struct wb, a bounded writer that remembers an overflow
 * instead of writing past its end; lengths are patched in when their contents are done.
 * QUIC Initials are protected here (RFC 9001 5): keys by HKDF through libcrypto's EVP_KDF,
 * the payload by secho's AES-128-GCM, the header by secho's AES-ECB.
 */
#include "traffic/gen_app.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/x509.h>

#include <secho/aes.h>
#include <secho/gcm.h>
#include <secho/modes.h>

/* ---- a seeded stream (splitmix64) ---- */

static uint64_t mix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t pick(uint64_t *x, uint32_t n)
{
	return (uint32_t)(mix(x) % n);
}

static void fill(uint64_t *x, uint8_t *p, size_t n)
{
	while (n) {
		uint64_t v = mix(x);
		for (int i = 0; i < 8 && n; i++, n--, v >>= 8)
			*p++ = (uint8_t)v;
	}
}

/* ---- vocabulary ---- */

#define NB(a) (sizeof(a) / sizeof((a)[0]))

static const char *const host_words[] = {"www",  "api",   "cdn", "static", "mail", "shop",
                                         "news", "video", "img", "login",  "docs", "m"};
static const char *const site_words[] = {"alpha",   "bravo", "charlie", "delta", "echo",
                                         "foxtrot", "golf",  "hotel",   "india", "juliet"};
static const char *const zones[] = {"example.com", "example.net", "example.org"};
static const char *const alpn_lists[] = {"h2,http/1.1", "http/1.1", "h2"};
static const char *const path_words[] = {"index", "search", "assets", "img",  "api",
                                         "news",  "login",  "cart",   "feed", "v1"};
static const char *const path_ext[] = {".html", ".js", ".css", ".png", ".json", ""};
static const char *const user_agents[] = {
        "Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0",
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/120.0.0.0",
        "curl/7.88.1", "Wget/1.21.3", "python-requests/2.28.1"};
/* text types only: the bodies are random letters, and tshark reads a body by its type */
static const char *const content_types[] = {"text/html; charset=utf-8", "text/plain", "text/css",
                                            "application/javascript", "application/octet-stream"};
static const char *const servers[] = {"nginx/1.22.1", "Apache/2.4.57 (Debian)", "lighttpd/1.4.69",
                                      "caddy"};
static const char *const issuers[] = {"Example Root CA R1", "Example TLS Issuing CA 2",
                                      "secho gen CA", "Example Web Server CA G3"};
static const struct {
	uint16_t code;
	const char *reason;
} statuses[] = {
        {200, "OK"}, {200, "OK"}, {200, "OK"}, {404, "Not Found"}, {503, "Service Unavailable"}};

const char *secho_gen_app_name(unsigned app)
{
	static const char *const names[] = {"none", "tls", "quic", "dns", "http"};
	return app < NB(names) ? names[app] : "none";
}

void secho_gen_app_draw(struct secho_gen_app *a, unsigned app, uint64_t seed)
{
	uint64_t x = seed;
	memset(a, 0, sizeof(*a));
	a->app = (uint8_t)app;
	a->seed = mix(&x);
	snprintf(a->name, sizeof(a->name), "%s.%s%" PRIu32 ".%s",
	         host_words[pick(&x, NB(host_words))], site_words[pick(&x, NB(site_words))],
	         pick(&x, 100), zones[pick(&x, NB(zones))]);
	a->alpn = (uint8_t)pick(&x, NB(alpn_lists));
	a->cipher = pick(&x, 4) ? 0x1301 : 0x1302;
	fill(&x, a->dcid, sizeof(a->dcid));
	fill(&x, a->scid, sizeof(a->scid));
	fill(&x, a->server_cid, sizeof(a->server_cid));
	a->dns_id = (uint16_t)mix(&x);
	a->qtype = pick(&x, 3) ? 1 : 28; /* A, AAAA */
	a->nans = (uint8_t)(1 + pick(&x, 3));
	a->ttl = 60 + pick(&x, 86400 - 60);
	for (unsigned i = 0; i < a->nans; i++) {
		uint8_t *d = a->addr[i];
		if (a->qtype == 1) { /* 192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24 */
			static const uint8_t nets[3][3] = {
			        {192, 0, 2}, {198, 51, 100}, {203, 0, 113}};
			memcpy(d, nets[pick(&x, 3)], 3);
			d[3] = (uint8_t)(1 + pick(&x, 254));
		} else { /* 2001:db8::/32 */
			d[0] = 0x20;
			d[1] = 0x01;
			d[2] = 0x0d;
			d[3] = 0xb8;
			fill(&x, d + 4, 4);
			d[15] = (uint8_t)(1 + pick(&x, 254));
		}
	}
	a->post = pick(&x, 4) == 0;
	snprintf(a->path, sizeof(a->path), "/%s/%s%" PRIu32 "%s",
	         path_words[pick(&x, NB(path_words))], path_words[pick(&x, NB(path_words))],
	         pick(&x, 1000), path_ext[pick(&x, NB(path_ext))]);
	a->ua = (uint8_t)pick(&x, NB(user_agents));
	a->status_i = (uint8_t)pick(&x, NB(statuses));
	a->ctype = (uint8_t)pick(&x, NB(content_types));
	a->server = (uint8_t)pick(&x, NB(servers));
	/* drawn last, so that what came before is as it was */
	if (app == SECHO_GEN_APP_TLS && pick(&x, 4) == 0) {
		static const uint16_t suites12[] = {0xc02b, 0xc02f, 0xc030, 0xcca8};
		a->tls12 = 1;
		a->cipher = suites12[pick(&x, NB(suites12))];
		a->ca = (uint8_t)pick(&x, NB(issuers));
		a->key448 = pick(&x, 4) == 0;
		a->not_before = 1735689600 + (int64_t)pick(&x, 365) * 86400; /* during 2025 */
		a->not_after = a->not_before + (pick(&x, 2) ? 90 : 398) * 86400 - 1;
	}
}

const char *secho_gen_app_issuer(unsigned ca)
{
	return ca < NB(issuers) ? issuers[ca] : "";
}

/* ---- a bounded writer ---- */

struct wb {
	uint8_t *p;
	size_t n, cap;
	bool over;
};

static void put(struct wb *w, const void *b, size_t n)
{
	if (w->over || n > w->cap - w->n) {
		w->over = true;
		return;
	}
	if (n)
		memcpy(w->p + w->n, b, n);
	w->n += n;
}

static void put8(struct wb *w, unsigned v)
{
	uint8_t b = (uint8_t)v;
	put(w, &b, 1);
}

static void put16(struct wb *w, unsigned v)
{
	uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)v};
	put(w, b, 2);
}

static void putz(struct wb *w, size_t n)
{
	if (w->over || n > w->cap - w->n) {
		w->over = true;
		return;
	}
	memset(w->p + w->n, 0, n);
	w->n += n;
}

static void puts_(struct wb *w, const char *s)
{
	put(w, s, strlen(s));
}

/* A length field of width bytes now; its value (the bytes written after it) at len_end. */
static size_t len_begin(struct wb *w, unsigned width)
{
	size_t at = w->n;
	putz(w, width);
	return at;
}

static void len_end(struct wb *w, size_t at, unsigned width)
{
	if (w->over)
		return;
	size_t v = w->n - at - width;
	for (unsigned i = 0; i < width; i++)
		w->p[at + i] = (uint8_t)(v >> (8 * (width - 1 - i)));
}

/* QUIC variable-length integer (RFC 9000 16), the shortest form. */
static void putv(struct wb *w, uint64_t v)
{
	if (v < 64) {
		put8(w, (unsigned)v);
	} else if (v < 16384) {
		put16(w, (unsigned)(0x4000 | v));
	} else {
		uint8_t b[4] = {(uint8_t)(0x80 | v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8),
		                (uint8_t)v};
		put(w, b, 4);
	}
}

/* ---- TLS messages ---- */

#define MAX_EXT 24

/* The extensions of a ClientHello as a meter lists them. */
struct exts {
	uint16_t type[MAX_EXT], len[MAX_EXT];
	unsigned n;
};

static size_t ext_begin(struct wb *w, uint16_t type)
{
	put16(w, type);
	return len_begin(w, 2);
}

static void ext_end(struct wb *w, size_t at, uint16_t type, struct exts *x)
{
	len_end(w, at, 2);
	if (x && x->n < MAX_EXT && !w->over) {
		x->type[x->n] = type;
		x->len[x->n++] = (uint16_t)(w->n - at - 2);
	}
}

static void alpn_ext(struct wb *w, const char *list, struct exts *x)
{
	size_t e = ext_begin(w, 0x0010), l = len_begin(w, 2);
	for (const char *s = list; *s;) {
		const char *c = strchr(s, ',');
		size_t n = c ? (size_t)(c - s) : strlen(s);
		put8(w, (unsigned)n);
		put(w, s, n);
		s += n + (c ? 1 : 0);
	}
	len_end(w, l, 2);
	ext_end(w, e, 0x0010, x);
}

/*
 * A ClientHello handshake message (RFC 8446 4.1.2). quic: the QUIC profile (no session ID,
 * TLS 1.3 suites only, "h3", transport parameters). pad >= 0: a padding extension (RFC 7685)
 * of pad bytes at the end.
 */
static void client_hello(const struct secho_gen_app *a, bool quic, long pad, struct wb *w,
                         struct exts *x)
{
	uint64_t r = a->seed ^ 0x636c69656e74ull;
	uint8_t rnd[32], ks[32];
	put8(w, 1);
	size_t body = len_begin(w, 3);
	put16(w, 0x0303);
	fill(&r, rnd, sizeof(rnd));
	put(w, rnd, sizeof(rnd));
	if (quic) {
		put8(w, 0);
	} else {
		put8(w, 32); /* a legacy session ID (RFC 8446 D.4, middlebox compatibility) */
		fill(&r, rnd, sizeof(rnd));
		put(w, rnd, sizeof(rnd));
	}
	static const uint16_t suites_tcp[] = {0x1301, 0x1302, 0x1303, 0xc02b, 0xc02f,
	                                      0xc02c, 0xc030, 0xcca9, 0xcca8};
	static const uint16_t suites_quic[] = {0x1301, 0x1302, 0x1303};
	const uint16_t *su = quic ? suites_quic : suites_tcp;
	size_t ns = quic ? NB(suites_quic) : NB(suites_tcp);
	put16(w, (unsigned)(2 * ns));
	for (size_t i = 0; i < ns; i++)
		put16(w, su[i]);
	put8(w, 1); /* compression methods: null */
	put8(w, 0);
	size_t exts = len_begin(w, 2), e, l;

	e = ext_begin(w, 0x0000); /* server_name (RFC 6066 3) */
	l = len_begin(w, 2);
	put8(w, 0);
	put16(w, (unsigned)strlen(a->name));
	puts_(w, a->name);
	len_end(w, l, 2);
	ext_end(w, e, 0x0000, x);
	if (!quic) {
		e = ext_begin(w, 0x0017); /* extended_master_secret */
		ext_end(w, e, 0x0017, x);
		e = ext_begin(w, 0xff01); /* renegotiation_info */
		put8(w, 0);
		ext_end(w, e, 0xff01, x);
	}
	e = ext_begin(w, 0x000a); /* supported_groups: x25519, secp256r1, secp384r1 */
	put16(w, 6);
	put16(w, 0x001d);
	put16(w, 0x0017);
	put16(w, 0x0018);
	ext_end(w, e, 0x000a, x);
	if (!quic) {
		e = ext_begin(w, 0x000b); /* ec_point_formats: uncompressed */
		put8(w, 1);
		put8(w, 0);
		ext_end(w, e, 0x000b, x);
		e = ext_begin(w, 0x0023); /* session_ticket, empty */
		ext_end(w, e, 0x0023, x);
	}
	alpn_ext(w, quic ? "h3" : alpn_lists[a->alpn], x);
	if (!quic) {
		e = ext_begin(w, 0x0005); /* status_request: OCSP */
		put8(w, 1);
		put16(w, 0);
		put16(w, 0);
		ext_end(w, e, 0x0005, x);
	}
	static const uint16_t sigs[] = {0x0403, 0x0804, 0x0401, 0x0503,
	                                0x0805, 0x0501, 0x0806, 0x0601};
	e = ext_begin(w, 0x000d); /* signature_algorithms */
	put16(w, (unsigned)(2 * NB(sigs)));
	for (size_t i = 0; i < NB(sigs); i++)
		put16(w, sigs[i]);
	ext_end(w, e, 0x000d, x);
	if (!quic) {
		e = ext_begin(w, 0x0012); /* signed_certificate_timestamp */
		ext_end(w, e, 0x0012, x);
	}
	e = ext_begin(w, 0x0033); /* key_share: x25519 */
	l = len_begin(w, 2);
	put16(w, 0x001d);
	put16(w, 32);
	fill(&r, ks, sizeof(ks));
	put(w, ks, sizeof(ks));
	len_end(w, l, 2);
	ext_end(w, e, 0x0033, x);
	e = ext_begin(w, 0x002d); /* psk_key_exchange_modes: psk_dhe_ke */
	put8(w, 1);
	put8(w, 1);
	ext_end(w, e, 0x002d, x);
	e = ext_begin(w, 0x002b); /* supported_versions */
	if (quic) {
		put8(w, 2);
		put16(w, 0x0304);
	} else {
		put8(w, 4);
		put16(w, 0x0304);
		put16(w, 0x0303);
	}
	ext_end(w, e, 0x002b, x);
	if (quic) {
		/* quic_transport_parameters (RFC 9000 18.2): id, length, value */
		static const struct {
			uint8_t id;
			uint32_t v;
		} tp[] = {{0x01, 30000},  {0x03, 1472},   {0x04, 1048576}, {0x05, 262144},
		          {0x06, 262144}, {0x07, 262144}, {0x08, 100},     {0x09, 100}};
		e = ext_begin(w, 0x0039);
		for (size_t i = 0; i < NB(tp); i++) {
			uint8_t tmp[8];
			struct wb t = {tmp, 0, sizeof(tmp), false};
			putv(&t, tp[i].v);
			putv(w, tp[i].id);
			putv(w, t.n);
			put(w, tmp, t.n);
		}
		putv(w, 0x0f); /* initial_source_connection_id */
		putv(w, sizeof(a->scid));
		put(w, a->scid, sizeof(a->scid));
		ext_end(w, e, 0x0039, x);
	}
	if (pad >= 0) {
		e = ext_begin(w, 0x0015);
		putz(w, (size_t)pad);
		ext_end(w, e, 0x0015, x);
	}
	len_end(w, exts, 2);
	len_end(w, body, 3);
}

/* A TLS 1.3 ServerHello (RFC 8446 4.1.3): suite, supported_versions, key_share; the legacy
 * session ID echoed (32 bytes for TCP, none for QUIC). A TLS 1.2 server's (a->tls12, TCP)
 * has other extensions instead (below). */
static void server_hello(const struct secho_gen_app *a, bool quic, struct wb *w)
{
	uint64_t r = a->seed ^ 0x736572766572ull, c = a->seed ^ 0x636c69656e74ull;
	uint8_t b[32];
	put8(w, 2);
	size_t body = len_begin(w, 3);
	put16(w, 0x0303);
	fill(&r, b, sizeof(b));
	put(w, b, sizeof(b));
	if (quic) {
		put8(w, 0);
	} else {
		fill(&c, b, sizeof(b)); /* the client's random, then its session ID */
		fill(&c, b, sizeof(b));
		put8(w, 32);
		put(w, b, sizeof(b));
	}
	put16(w, a->cipher);
	put8(w, 0);
	size_t exts = len_begin(w, 2), e;
	if (!quic && a->tls12) {
		/* TLS 1.2: no supported_versions; renegotiation_info, extended_master_secret
		 * and the ALPN protocol chosen, the first the client offered */
		e = ext_begin(w, 0xff01);
		put8(w, 0);
		ext_end(w, e, 0xff01, NULL);
		e = ext_begin(w, 0x0017);
		ext_end(w, e, 0x0017, NULL);
		const char *alpn = alpn_lists[a->alpn];
		size_t n = strcspn(alpn, ",");
		e = ext_begin(w, 0x0010);
		size_t l = len_begin(w, 2);
		put8(w, (unsigned)n);
		put(w, alpn, n);
		len_end(w, l, 2);
		ext_end(w, e, 0x0010, NULL);
	} else {
		e = ext_begin(w, 0x002b);
		put16(w, 0x0304);
		ext_end(w, e, 0x002b, NULL);
		e = ext_begin(w, 0x0033);
		put16(w, 0x001d);
		put16(w, 32);
		fill(&r, b, sizeof(b));
		put(w, b, sizeof(b));
		ext_end(w, e, 0x0033, NULL);
	}
	len_end(w, exts, 2);
	len_end(w, body, 3);
}

/* An Ed25519 (or Ed448) key from 32 (57) bytes drawn from r. NULL on failure. */
static EVP_PKEY *drawn_key(uint64_t r, bool ed448)
{
	uint8_t k[57];
	size_t n = ed448 ? 57 : 32;
	fill(&r, k, n);
	EVP_PKEY *p =
	        EVP_PKEY_new_raw_private_key(ed448 ? EVP_PKEY_ED448 : EVP_PKEY_ED25519, NULL, k, n);
	memset(k, 0, sizeof(k));
	return p;
}

/* The TLS 1.2 server's certificate, DER, into out[0..cap): subject CN the server name,
 * issuer CN secho_gen_app_issuer(a->ca), validity a->not_before..not_after, the server's key
 * drawn from the seed, signed with its issuer's Ed25519 key (a signature that depends only
 * on its input: the same seed, the same bytes). Returns the length, 0 on failure. */
static size_t tls_cert(const struct secho_gen_app *a, uint8_t *out, size_t cap)
{
	EVP_PKEY *key = drawn_key(a->seed ^ 0x6b6579ull, a->key448);
	EVP_PKEY *ca = drawn_key(0x6361ull + a->ca, false);
	X509 *x = X509_new();
	size_t n = 0;
	if (key && ca && x && X509_set_version(x, 2) &&
	    ASN1_INTEGER_set_uint64(X509_get_serialNumber(x), a->seed >> 1) &&
	    ASN1_TIME_set(X509_getm_notBefore(x), (time_t)a->not_before) &&
	    ASN1_TIME_set(X509_getm_notAfter(x), (time_t)a->not_after) &&
	    X509_NAME_add_entry_by_txt(X509_get_issuer_name(x), "O", MBSTRING_ASC,
	                               (const unsigned char *)"Example", -1, -1, 0) &&
	    X509_NAME_add_entry_by_txt(X509_get_issuer_name(x), "CN", MBSTRING_ASC,
	                               (const unsigned char *)issuers[a->ca], -1, -1, 0) &&
	    X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_ASC,
	                               (const unsigned char *)a->name, -1, -1, 0) &&
	    X509_set_pubkey(x, key) && X509_sign(x, ca, NULL) > 0) {
		int len = i2d_X509(x, NULL);
		if (len > 0 && (size_t)len <= cap) {
			uint8_t *p = out;
			n = i2d_X509(x, &p) == len ? (size_t)len : 0;
		}
	}
	X509_free(x);
	EVP_PKEY_free(ca);
	EVP_PKEY_free(key);
	return n;
}

/* TLS over TCP: the client's first segment is one handshake record with the ClientHello,
 * grown to want by its padding extension. */
static size_t tls_client(const struct secho_gen_app *a, size_t want, struct wb *w, struct exts *x)
{
	struct wb probe = {w->p, 0, w->cap, false};
	put8(&probe, 22);
	put16(&probe, 0x0301);
	size_t rl = len_begin(&probe, 2);
	client_hello(a, false, 0, &probe, NULL);
	len_end(&probe, rl, 2);
	if (probe.over)
		return 0;
	long pad = want > probe.n ? (long)(want - probe.n) : 0;
	if (probe.n + (size_t)pad > 5 + 16384)
		pad = (long)(5 + 16384 - probe.n);
	put8(w, 22);
	put16(w, 0x0301);
	rl = len_begin(w, 2);
	client_hello(a, false, pad, w, x);
	len_end(w, rl, 2);
	return w->over ? 0 : w->n;
}

/* The server's first segment: the ServerHello record (TLS 1.2: ServerHello, Certificate
 * and ServerHelloDone in one record), then an application_data record (what would be its
 * encrypted flight) filling it to want. */
static size_t tls_server(const struct secho_gen_app *a, size_t want, struct wb *w)
{
	put8(w, 22);
	put16(w, 0x0303);
	size_t rl = len_begin(w, 2);
	if (a->tls12) {
		uint8_t der[1024];
		size_t dn = tls_cert(a, der, sizeof(der));
		if (!dn)
			return 0;
		server_hello(a, false, w);
		put8(w, 11); /* Certificate (RFC 5246 7.4.2): one certificate */
		size_t body = len_begin(w, 3), list = len_begin(w, 3);
		put8(w, 0);
		put16(w, (unsigned)dn);
		put(w, der, dn);
		len_end(w, list, 3);
		len_end(w, body, 3);
		put8(w, 14); /* ServerHelloDone */
		put8(w, 0);
		put16(w, 0);
	} else {
		server_hello(a, false, w);
	}
	len_end(w, rl, 2);
	if (w->over)
		return 0;
	size_t rest = want > w->n ? want - w->n : 0;
	if (rest) {
		size_t body = rest < 6 ? 1 : rest - 5;
		if (body > 16384)
			body = 16384;
		uint64_t r = a->seed ^ 0x617070ull;
		put8(w, 23);
		put16(w, 0x0303);
		put16(w, (unsigned)body);
		if (w->cap - w->n < body)
			w->over = true;
		else {
			fill(&r, w->p + w->n, body);
			w->n += body;
		}
	}
	return w->over ? 0 : w->n;
}

/* ---- QUIC Initials (RFC 9000 17.2.2, RFC 9001 5) ---- */

static const uint8_t quic_v1_salt[20] = {0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34,
                                         0xb3, 0x4d, 0x17, 0x9a, 0xe6, 0xa4, 0xc8,
                                         0x0c, 0xad, 0xcc, 0xbb, 0x7f, 0x0a};

static int hkdf(const char *mode, const uint8_t *key, size_t klen, const uint8_t *salt, size_t slen,
                const uint8_t *info, size_t ilen, uint8_t *out, size_t olen)
{
	EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
	EVP_KDF_CTX *c = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
	EVP_KDF_free(kdf);
	if (!c)
		return -EIO;
	OSSL_PARAM p[6];
	size_t i = 0;
	p[i++] = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_MODE, (char *)mode, 0);
	p[i++] = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA256", 0);
	p[i++] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)key, klen);
	if (salt)
		p[i++] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)salt, slen);
	if (info)
		p[i++] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)info, ilen);
	p[i] = OSSL_PARAM_construct_end();
	int rc = EVP_KDF_derive(c, out, olen, p) == 1 ? 0 : -EIO;
	EVP_KDF_CTX_free(c);
	return rc;
}

/* HKDF-Expand-Label(secret, label, "", n) (RFC 8446 7.1). */
static int expand(const uint8_t secret[32], const char *label, uint8_t *out, size_t n)
{
	uint8_t info[64];
	size_t ll = strlen(label), k = 0;
	info[k++] = 0;
	info[k++] = (uint8_t)n;
	info[k++] = (uint8_t)(6 + ll);
	memcpy(info + k, "tls13 ", 6);
	k += 6;
	memcpy(info + k, label, ll);
	k += ll;
	info[k++] = 0;
	return hkdf("EXPAND_ONLY", secret, 32, NULL, 0, info, k, out, n);
}

/*
 * Protect the Initial in pkt: its header up to pn_off, a 2-byte packet number (0), the
 * plaintext of pt_len bytes after it and 16 bytes of room for the tag. Keys: the client's
 * or the server's Initial keys of dcid.
 */
static int quic_protect(const uint8_t dcid[8], int server, uint8_t *pkt, size_t pn_off,
                        size_t pt_len)
{
	uint8_t initial[32], secret[32], key[16], iv[12], hpk[16];
	int rc = hkdf("EXTRACT_ONLY", dcid, 8, quic_v1_salt, sizeof(quic_v1_salt), NULL, 0, initial,
	              sizeof(initial));
	if (!rc)
		rc = expand(initial, server ? "server in" : "client in", secret, 32);
	if (!rc)
		rc = expand(secret, "quic key", key, 16);
	if (!rc)
		rc = expand(secret, "quic iv", iv, 12);
	if (!rc)
		rc = expand(secret, "quic hp", hpk, 16);
	if (rc)
		return rc;
	/* packet number 0: the nonce is the IV itself (RFC 9001 5.3) */
	const size_t pn_len = 2;
	uint8_t *pt = pkt + pn_off + pn_len;
	secho_gcm_key gk;
	if (secho_gcm_key_init(&gk, key, 16, SECHO_IMPL_AUTO) != SECHO_OK)
		return -EIO;
	rc = secho_gcm_seal(&gk, iv, 12, pkt, pn_off + pn_len, pt, pt, pt_len, pt + pt_len, 16);
	secho_gcm_key_wipe(&gk);
	if (rc != SECHO_OK)
		return -EIO;
	/* header protection (RFC 9001 5.4): the sample starts 4 bytes after the PN's start */
	secho_aes_key hp;
	uint8_t mask[16];
	if (secho_aes_key_init(&hp, hpk, 16, SECHO_IMPL_AUTO) != SECHO_OK)
		return -EIO;
	rc = secho_ecb_encrypt(&hp, mask, pkt + pn_off + 4, 16);
	secho_aes_key_wipe(&hp);
	if (rc != SECHO_OK)
		return -EIO;
	pkt[0] ^= mask[0] & 0x0f;
	for (size_t i = 0; i < pn_len; i++)
		pkt[pn_off + i] ^= mask[1 + i];
	return 0;
}

/*
 * A client (dir 0) or server Initial, padded (PADDING frames) to want bytes within
 * [the smallest, SECHO_GEN_APP_QUIC_MAX] (a client's at least 1200, RFC 9000 14.1); a
 * larger want is met with zero bytes after the packet, in the same datagram.
 */
static size_t quic_initial(const struct secho_gen_app *a, int dir, size_t want, struct wb *w,
                           struct exts *x)
{
	uint8_t frames[1400];
	struct wb f = {frames, 0, sizeof(frames), false};
	if (dir == 1) {
		put8(&f, 0x02); /* ACK: largest 0, delay 0, no more ranges, first range 0 */
		put8(&f, 0);
		put8(&f, 0);
		put8(&f, 0);
		put8(&f, 0);
	}
	uint8_t hs[1024];
	struct wb h = {hs, 0, sizeof(hs), false};
	if (dir == 0)
		client_hello(a, true, -1, &h, x);
	else
		server_hello(a, true, &h);
	if (h.over)
		return 0;
	put8(&f, 0x06); /* CRYPTO at offset 0 */
	putv(&f, 0);
	putv(&f, h.n);
	put(&f, hs, h.n);
	if (f.over)
		return 0;
	/* header: first byte, version, DCID, SCID, token (none), length (2-byte varint), PN */
	const uint8_t *dcid = dir == 0 ? a->dcid : a->scid;
	const uint8_t *scid = dir == 0 ? a->scid : a->server_cid;
	size_t hdr = 1 + 4 + 1 + 8 + 1 + 8 + 1 + 2 + 2, min = hdr + f.n + 16;
	size_t size = want > SECHO_GEN_APP_QUIC_MAX ? SECHO_GEN_APP_QUIC_MAX : want;
	if (dir == 0 && size < 1200)
		size = 1200;
	if (size < min)
		size = min;
	size_t at = w->n;
	put8(w, 0xc1); /* long header, fixed bit, Initial, 2-byte packet number */
	put16(w, 0);
	put16(w, 1);
	put8(w, 8);
	put(w, dcid, 8);
	put8(w, 8);
	put(w, scid, 8);
	put8(w, 0);
	size_t pt_len = size - hdr - 16;
	put16(w, (unsigned)(0x4000 | (2 + pt_len + 16)));
	size_t pn_off = w->n - at;
	put16(w, 0);
	put(w, frames, f.n);
	putz(w, pt_len - f.n + 16); /* PADDING frames, then room for the tag */
	if (w->over || quic_protect(a->dcid, dir, w->p + at, pn_off, pt_len))
		return 0;
	if (want > w->n - at)
		putz(w, want - (w->n - at));
	return w->over ? 0 : w->n;
}

/* ---- DNS (RFC 1035 4.1; EDNS(0), RFC 6891; Padding, RFC 7830) ---- */

static void dns_name(struct wb *w, const char *name)
{
	for (const char *s = name; *s;) {
		const char *d = strchr(s, '.');
		size_t n = d ? (size_t)(d - s) : strlen(s);
		put8(w, (unsigned)n);
		put(w, s, n);
		s += n + (d ? 1 : 0);
	}
	put8(w, 0);
}

static void dns_msg(const struct secho_gen_app *a, int dir, long pad, struct wb *w)
{
	put16(w, a->dns_id);
	put16(w, dir ? 0x8180 : 0x0100); /* RD; QR, RD, RA, NOERROR */
	put16(w, 1);
	put16(w, dir ? a->nans : 0);
	put16(w, 0);
	put16(w, 1);
	dns_name(w, a->name);
	put16(w, a->qtype);
	put16(w, 1);
	for (unsigned i = 0; dir && i < a->nans; i++) {
		put16(w, 0xc00c); /* the question's name */
		put16(w, a->qtype);
		put16(w, 1);
		put16(w, (unsigned)(a->ttl >> 16));
		put16(w, (unsigned)(a->ttl & 0xffff));
		unsigned n = a->qtype == 1 ? 4 : 16;
		put16(w, n);
		put(w, a->addr[i], n);
	}
	put8(w, 0); /* OPT: root, type 41, 1232-byte UDP payload, no flags */
	put16(w, 41);
	put16(w, 1232);
	put16(w, 0);
	put16(w, 0);
	put16(w, (unsigned)(4 + pad));
	put16(w, 12);
	put16(w, (unsigned)pad);
	putz(w, (size_t)pad);
}

static size_t dns(const struct secho_gen_app *a, int dir, size_t want, struct wb *w)
{
	struct wb probe = {w->p, 0, w->cap, false};
	dns_msg(a, dir, 0, &probe);
	if (probe.over)
		return 0;
	long pad = want > probe.n ? (long)(want - probe.n) : 0;
	if (pad > 60000)
		pad = 60000;
	dns_msg(a, dir, pad, w);
	return w->over ? 0 : w->n;
}

/* ---- HTTP/1.1 (RFC 9112) ---- */

static unsigned digits(size_t v)
{
	unsigned d = 1;
	while (v >= 10) {
		v /= 10;
		d++;
	}
	return d;
}

static size_t http(const struct secho_gen_app *a, int dir, size_t want, struct wb *w)
{
	char head[512];
	int hn;
	if (dir == 0)
		hn = snprintf(head, sizeof(head),
		              "%s %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: %s\r\nAccept: */*\r\n",
		              a->post ? "POST" : "GET", a->path, a->name, user_agents[a->ua]);
	else
		hn = snprintf(head, sizeof(head),
		              "HTTP/1.1 %u %s\r\nServer: %s\r\nContent-Type: %s\r\n",
		              statuses[a->status_i].code, statuses[a->status_i].reason,
		              servers[a->server], content_types[a->ctype]);
	if (hn < 0 || (size_t)hn >= sizeof(head))
		return 0;
	uint64_t r = a->seed ^ 0x68747470ull;
	put(w, head, (size_t)hn);
	if (dir == 0 && !a->post) {
		/* GET: a Cookie of hex digits fills the head to want */
		const char *ck = "Cookie: id=";
		size_t fixed = (size_t)hn + strlen(ck) + 2 + 2;
		if (want > (size_t)hn + 2) {
			size_t n = want > fixed ? want - fixed : 1; /* grown to a 1-digit Cookie */
			puts_(w, ck);
			while (n--)
				put8(w, "0123456789abcdef"[mix(&r) & 15]);
			puts_(w, "\r\n");
		}
		puts_(w, "\r\n");
		return w->over ? 0 : w->n;
	}
	/* POST and responses: Content-Length, then a body that fills want */
	const char *cl = dir == 0 ? "Content-Type: application/x-www-form-urlencoded\r\n"
	                            "Content-Length: "
	                          : "Content-Length: ";
	/* the body's length in digits changes the head's: where no count fits (want - fixed
	 * of 11, 102, ...), one more space before it does (optional whitespace, RFC 9110 5.6.3) */
	size_t fixed = (size_t)hn + strlen(cl) + 2 + 2, body = 0;
	unsigned space = 0;
	for (unsigned sp = 0; sp < 2; sp++) {
		unsigned d;
		for (d = 1; d <= 6; d++) {
			size_t b = want > fixed + sp + d ? want - fixed - sp - d : 0;
			if (digits(b) == d || b == 0) {
				body = b;
				space = sp;
				break;
			}
		}
		if (d <= 6)
			break;
	}
	char num[24];
	snprintf(num, sizeof(num), "%s%zu", space ? " " : "", body);
	puts_(w, cl);
	puts_(w, num);
	puts_(w, "\r\n\r\n");
	for (size_t i = 0; i < body; i++)
		put8(w, dir == 0 ? (i == 0   ? 'q'
		                    : i == 1 ? '='
		                             : "abcdefghij"[mix(&r) % 10])
		                 : "abcdefghijklmnopqrstuvwxyz <>/\n"[mix(&r) % 31]);
	return w->over ? 0 : w->n;
}

size_t secho_gen_app_msg(const struct secho_gen_app *a, int dir, size_t want, uint8_t *out,
                         size_t cap)
{
	struct wb w = {out, 0, cap, false};
	switch (a->app) {
	case SECHO_GEN_APP_TLS:
		return dir == 0 ? tls_client(a, want, &w, NULL) : tls_server(a, want, &w);
	case SECHO_GEN_APP_QUIC:
		return quic_initial(a, dir, want, &w, NULL);
	case SECHO_GEN_APP_DNS:
		return dns(a, dir, want, &w);
	case SECHO_GEN_APP_HTTP:
		return http(a, dir, want, &w);
	default:
		return 0;
	}
}

size_t secho_gen_app_filler(const struct secho_gen_app *a, int dir, uint64_t n, size_t want,
                            uint8_t *out, size_t cap)
{
	if (a->app != SECHO_GEN_APP_QUIC)
		return 0;
	/* a 1-RTT packet (RFC 9000 17.3.1): header form 0, fixed bit, the peer's CID, then
	 * what would be the protected packet number, payload and tag */
	if (want < SECHO_GEN_APP_QUIC_SHORT_MIN)
		want = SECHO_GEN_APP_QUIC_SHORT_MIN;
	if (want > cap)
		return 0;
	uint64_t r = a->seed ^ (0x73686f7274ull + ((uint64_t)dir << 40) + n);
	fill(&r, out, want);
	out[0] = (uint8_t)(0x40 | (out[0] & 0x3f));
	memcpy(out + 1, dir == 0 ? a->server_cid : a->scid, 8);
	return want;
}

/* ---- the truth ---- */

struct js {
	char *p;
	size_t n, cap;
	bool over, first;
};

static void js_raw(struct js *j, const char *s)
{
	size_t l = strlen(s);
	if (j->over || l >= j->cap - j->n) {
		j->over = true;
		return;
	}
	memcpy(j->p + j->n, s, l + 1);
	j->n += l;
}

static void js_key(struct js *j, const char *k)
{
	js_raw(j, j->first ? "\"" : ",\"");
	j->first = false;
	js_raw(j, k);
	js_raw(j, "\":");
}

/* The strings written here are ours: printable ASCII without quotes or backslashes. */
static void js_s(struct js *j, const char *k, const char *v)
{
	js_key(j, k);
	js_raw(j, "\"");
	js_raw(j, v);
	js_raw(j, "\"");
}

static void js_u(struct js *j, const char *k, uint64_t v)
{
	char b[24];
	snprintf(b, sizeof(b), "%" PRIu64, v);
	js_key(j, k);
	js_raw(j, b);
}

static void js_i(struct js *j, const char *k, int64_t v)
{
	char b[24];
	snprintf(b, sizeof(b), "%" PRId64, v);
	js_key(j, k);
	js_raw(j, b);
}

static void js_hex(struct js *j, const char *k, const uint8_t *v, size_t n)
{
	char b[2 * 32 + 1];
	for (size_t i = 0; i < n && i < 32; i++)
		snprintf(b + 2 * i, 3, "%02x", v[i]);
	b[2 * (n < 32 ? n : 32)] = 0;
	js_s(j, k, b);
}

static void js_list(struct js *j, const char *k, const uint16_t *v, unsigned n)
{
	char b[16];
	js_key(j, k);
	js_raw(j, "[");
	for (unsigned i = 0; i < n; i++) {
		snprintf(b, sizeof(b), "%s%u", i ? "," : "", v[i]);
		js_raw(j, b);
	}
	js_raw(j, "]");
}

static void addr_text(const struct secho_gen_app *a, unsigned i, char *b, size_t n)
{
	inet_ntop(a->qtype == 1 ? AF_INET : AF_INET6, a->addr[i], b, (socklen_t)n);
}

/* DNS members for a record that saw the query (q) and/or the answer (r). */
static void dns_members(const struct secho_gen_app *a, struct js *j, bool q, bool r)
{
	if (!q && !r)
		return;
	js_u(j, "dns_id", a->dns_id);
	if (q)
		js_u(j, "dns_flags", 0x0100);
	if (r)
		js_u(j, "rev_dns_flags", 0x8180);
	js_s(j, "dns_req_query_name", a->name);
	js_u(j, "dns_req_query_type", a->qtype);
	js_u(j, "dns_req_query_class", 1);
	if (r) {
		char b[64];
		js_u(j, "dns_resp_rcode", 0);
		js_u(j, "dns_answers", a->nans);
		js_key(j, "dns_resp_rr");
		js_raw(j, "[");
		for (unsigned i = 0; i < a->nans; i++) {
			addr_text(a, i, b, sizeof(b));
			js_raw(j, i ? ",{" : "{");
			j->first = true;
			js_s(j, "name", a->name);
			js_u(j, "type", a->qtype);
			js_u(j, "class", 1);
			js_u(j, "ttl", a->ttl);
			js_s(j, "data", b);
			js_raw(j, "}");
		}
		js_raw(j, "]");
		j->first = false;
		addr_text(a, 0, b, sizeof(b));
		js_u(j, "dns_rr_ttl", a->ttl);
		js_u(j, "dns_rlength", strlen(b));
		js_s(j, "dns_rdata", b);
	}
	js_u(j, "dns_psize", 1232);
	js_u(j, "dns_do", 0);
}

/* The members of a record that saw the client's first message (c, c_len bytes) and/or
 * the server's (s); uni_rev: a uniflow record of the server's direction alone. */
static void members(const struct secho_gen_app *a, struct js *j, bool c, size_t c_len, bool s,
                    bool uni_rev, uint16_t sport, uint16_t dport)
{
	uint8_t buf[SECHO_GEN_APP_MSG_MAX];
	struct exts x = {0};
	struct wb w = {buf, 0, sizeof(buf), false};
	switch (a->app) {
	case SECHO_GEN_APP_TLS:
		if (c && tls_client(a, c_len, &w, &x)) {
			js_s(j, "tls_sni", a->name);
			js_u(j, "tls_client_version", 0x0304);
			js_s(j, "tls_alpn_offer", alpn_lists[a->alpn]);
			js_list(j, "tls_ext_type", x.type, x.n);
			js_list(j, "tls_ext_len", x.len, x.n);
		}
		if (s && !a->tls12) {
			js_u(j, "tls_server_version", 0x0304);
			js_u(j, "tls_cipher_suite", a->cipher);
		} else if (s) {
			const char *alpn = alpn_lists[a->alpn];
			char chosen[16];
			snprintf(chosen, sizeof(chosen), "%.*s", (int)strcspn(alpn, ","), alpn);
			js_u(j, "tls_server_version", 0x0303);
			js_u(j, "tls_cipher_suite", a->cipher);
			js_s(j, "tls_alpn", chosen);
			js_s(j, "tls_issuer_cn", issuers[a->ca]);
			js_s(j, "tls_subject_cn", a->name);
			js_i(j, "tls_validity_not_before", a->not_before);
			js_i(j, "tls_validity_not_after", a->not_after);
			js_s(j, "tls_public_key_alg", a->key448 ? "1.3.101.113" : "1.3.101.112");
		}
		break;
	case SECHO_GEN_APP_QUIC:
		if (uni_rev) {
			/* a record that starts with the server's Initial: the meter takes it for
			 * a client's and cannot open it with the keys of its DCID */
			js_u(j, "quic_version", 1);
			js_u(j, "quic_client_version", 1);
			js_u(j, "quic_token_length", 0);
			js_hex(j, "quic_occid", a->server_cid, 8);
			js_hex(j, "quic_oscid", a->scid, 8);
			js_u(j, "quic_zero_rtt", 0);
			js_u(j, "quic_server_port", sport);
			js_u(j, "quic_ch_parsed", 0);
			js_u(j, "quic_initials", 0);
			js_u(j, "quic_initials_failed", 1);
			break;
		}
		if (!c)
			break;
		{
			uint8_t hs[1024];
			struct wb h = {hs, 0, sizeof(hs), false};
			client_hello(a, true, -1, &h, &x);
			js_u(j, "quic_version", 1);
			js_u(j, "quic_client_version", 1);
			js_u(j, "quic_token_length", 0);
			js_hex(j, "quic_occid", a->scid, 8);
			js_hex(j, "quic_oscid", a->dcid, 8);
			if (s)
				js_hex(j, "quic_scid", a->server_cid, 8);
			js_u(j, "quic_zero_rtt", 0);
			js_u(j, "quic_server_port", dport);
			js_s(j, "quic_sni", a->name);
			js_s(j, "quic_alpn", "h3");
			js_list(j, "quic_tls_ext_type", x.type, x.n);
			js_list(j, "quic_tls_ext_len", x.len, x.n);
			js_u(j, "quic_ch_parsed", 1);
			js_u(j, "quic_ch_length", h.n);
			js_u(j, "quic_initials", 1);
			js_u(j, "quic_initials_failed", 0);
		}
		break;
	case SECHO_GEN_APP_DNS:
		dns_members(a, j, c, s);
		break;
	case SECHO_GEN_APP_HTTP:
		if (c) {
			js_s(j, "http_method", a->post ? "POST" : "GET");
			js_s(j, "http_url", a->path);
			js_s(j, "http_host", a->name);
			js_s(j, "http_agent", user_agents[a->ua]);
		}
		if (s) {
			js_u(j, "http_status_code", statuses[a->status_i].code);
			js_s(j, "http_content_type", content_types[a->ctype]);
			js_s(j, "http_server", servers[a->server]);
		}
		break;
	default:
		break;
	}
}

int secho_gen_app_truth(const struct secho_gen_app *a, const uint16_t len[2], uint16_t sport,
                        uint16_t dport, int dir, char *buf, size_t cap)
{
	struct js j = {buf, 0, cap, false, true};
	if (!cap)
		return -ENOSPC;
	buf[0] = 0;
	js_raw(&j, "{\"uni\":{");
	if (dir == 0)
		members(a, &j, len[0] > 0, len[0], false, false, sport, dport);
	else
		members(a, &j, false, 0, len[1] > 0, len[1] > 0, sport, dport);
	js_raw(&j, "}");
	if (dir == 0) {
		js_raw(&j, ",\"bi\":{");
		j.first = true;
		members(a, &j, len[0] > 0, len[0], len[1] > 0, false, sport, dport);
		js_raw(&j, "}");
	}
	js_raw(&j, "}");
	return j.over ? -ENOSPC : 0;
}
