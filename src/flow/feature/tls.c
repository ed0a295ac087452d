/*
 * src/flow/feature/tls.c - the tls feature set (tls.h; docs/FLOW.md, "Features: tls").
 *
 * Parsers read through struct rd, a cursor over [p, p + len) whose every read checks the
 * bytes left first: a length field is only ever used to make a narrower cursor, so a length
 * that lies (reaches past its container) is refused where it is read, and every loop over a
 * list consumes at least one byte per round.
 */
#include "tls.h"

#include "flow/feature/fjson.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <nettle/md5.h>
#include <nettle/sha2.h>
#include <openssl/obj_mac.h> /* NID_* numbers: secho_tls_oid_nid */

/* ---- bounded reader ---- */

struct rd {
	const uint8_t *p;
	size_t len, off;
};

static size_t rd_left(const struct rd *r)
{
	return r->len - r->off;
}

static int rd_u8(struct rd *r, uint8_t *v)
{
	if (rd_left(r) < 1)
		return -EINVAL;
	*v = r->p[r->off++];
	return 0;
}

static int rd_u16(struct rd *r, uint16_t *v)
{
	if (rd_left(r) < 2)
		return -EINVAL;
	*v = (uint16_t)(r->p[r->off] << 8 | r->p[r->off + 1]);
	r->off += 2;
	return 0;
}

static int rd_skip(struct rd *r, size_t n)
{
	if (rd_left(r) < n)
		return -EINVAL;
	r->off += n;
	return 0;
}

/* A vector with a width-byte length prefix (RFC 8446 3.4) as its own cursor. */
static int rd_vec(struct rd *r, unsigned width, struct rd *sub)
{
	size_t n = 0;
	for (unsigned i = 0; i < width; i++) {
		uint8_t b;
		if (rd_u8(r, &b))
			return -EINVAL;
		n = n << 8 | b;
	}
	if (rd_left(r) < n)
		return -EINVAL;
	sub->p = r->p + r->off;
	sub->len = n;
	sub->off = 0;
	r->off += n;
	return 0;
}

/* The body of handshake message msg of type want: -EINVAL for another type, -EAGAIN when
 * msg holds less than its length says. */
static int hs_body(const uint8_t *msg, size_t len, uint8_t want, struct rd *body)
{
	if (len < 4)
		return -EAGAIN;
	if (msg[0] != want)
		return -EINVAL;
	size_t n = (size_t)msg[1] << 16 | (size_t)msg[2] << 8 | msg[3];
	if (len - 4 < n)
		return -EAGAIN;
	body->p = msg + 4;
	body->len = n;
	body->off = 0;
	return 0;
}

static struct secho_tls_span span_of(const struct rd *r)
{
	struct secho_tls_span s = {r->p, (uint16_t)(r->len > 0xffff ? 0xffff : r->len)};
	return s;
}

/* ---- ClientHello ---- */

/* Append the 16-bit values left in l to v[n..max): the new count. Values past max are
 * dropped and set h->overflow. */
static unsigned keep16(struct secho_tls_hello *h, struct rd *l, uint16_t *v, unsigned n,
                       unsigned max)
{
	uint16_t x;
	while (rd_u16(l, &x) == 0) {
		if (n < max)
			v[n++] = x;
		else
			h->overflow = 1;
	}
	return n;
}

static int ch_ext(struct secho_tls_hello *h, uint16_t type, struct rd *e)
{
	struct rd l;
	uint8_t b;
	switch (type) {
	case SECHO_TLS_EXT_SERVER_NAME: /* RFC 6066 3 */
		h->has_sni = 1;
		if (rd_left(e) == 0) /* a server's empty echo; in a ClientHello, still present */
			return 0;
		if (rd_vec(e, 2, &l))
			return -EINVAL;
		while (rd_left(&l) > 0) {
			struct rd name;
			if (rd_u8(&l, &b) || rd_vec(&l, 2, &name))
				return -EINVAL;
			if (b == 0 && h->sni.p == NULL)
				h->sni = span_of(&name);
		}
		return 0;
	case SECHO_TLS_EXT_ALPN: /* RFC 7301 3.1 */
		h->has_alpn = 1;
		if (rd_vec(e, 2, &l))
			return -EINVAL;
		while (rd_left(&l) > 0) {
			struct rd name;
			if (rd_vec(&l, 1, &name))
				return -EINVAL;
			if (h->n_alpn < SECHO_TLS_MAX_ALPN)
				h->alpn[h->n_alpn++] = span_of(&name);
			else
				h->overflow = 1;
		}
		return 0;
	case SECHO_TLS_EXT_SUPPORTED_GROUPS: /* RFC 8446 4.2.7 */
		if (rd_vec(e, 2, &l) || (l.len & 1))
			return -EINVAL;
		h->n_groups = (uint16_t)keep16(h, &l, h->groups, h->n_groups, SECHO_TLS_MAX_GROUPS);
		return 0;
	case SECHO_TLS_EXT_EC_POINT_FORMATS: /* RFC 8422 5.1.2 */
		if (rd_vec(e, 1, &l))
			return -EINVAL;
		while (rd_u8(&l, &b) == 0) {
			if (h->n_pointfmt < SECHO_TLS_MAX_POINTFMT)
				h->pointfmt[h->n_pointfmt++] = b;
			else
				h->overflow = 1;
		}
		return 0;
	case SECHO_TLS_EXT_SIGNATURE_ALGS: /* RFC 8446 4.2.3 */
		if (rd_vec(e, 2, &l) || (l.len & 1))
			return -EINVAL;
		h->n_sigalgs =
		        (uint16_t)keep16(h, &l, h->sigalgs, h->n_sigalgs, SECHO_TLS_MAX_SIGALGS);
		return 0;
	case SECHO_TLS_EXT_SUPPORTED_VERSIONS: /* RFC 8446 4.2.1 */
		h->has_versions = 1;
		if (rd_vec(e, 1, &l) || (l.len & 1))
			return -EINVAL;
		h->n_versions =
		        (uint8_t)keep16(h, &l, h->versions, h->n_versions, SECHO_TLS_MAX_VERSIONS);
		return 0;
	case SECHO_TLS_EXT_QUIC_TP:
	case SECHO_TLS_EXT_QUIC_TP_DRAFT: /* RFC 9001 8.2: the raw body, for quic */
		if (!h->has_quic_tp || type == SECHO_TLS_EXT_QUIC_TP) {
			h->has_quic_tp = 1;
			h->quic_tp = span_of(e);
			h->quic_tp_type = type;
		}
		return 0;
	default:
		return 0;
	}
}

/* The highest non-GREASE supported_versions entry (TLS 1.3's drafts 0x7fNN rank as 1.3). */
static uint16_t rank_version(uint16_t v)
{
	return (v >> 8) == 0x7f ? 0x0304 : v;
}

int secho_tls_client_hello_parse(const uint8_t *msg, size_t len, struct secho_tls_hello *out)
{
	struct rd b, l;
	uint16_t v;
	memset(out, 0, sizeof(*out));
	int rc = hs_body(msg, len, SECHO_TLS_HS_CLIENT_HELLO, &b);
	if (rc)
		return rc;
	if (rd_u16(&b, &out->legacy_version) || rd_skip(&b, 32)) /* version, random */
		return -EINVAL;
	out->version = out->legacy_version;
	if (rd_vec(&b, 1, &l) || l.len > 32) /* legacy_session_id */
		return -EINVAL;
	if (rd_vec(&b, 2, &l) || (l.len & 1)) /* cipher_suites */
		return -EINVAL;
	while (rd_u16(&l, &v) == 0) {
		if (out->n_ciphers < SECHO_TLS_MAX_CIPHERS)
			out->ciphers[out->n_ciphers++] = v;
		else
			out->overflow = 1;
	}
	if (rd_vec(&b, 1, &l)) /* legacy_compression_methods */
		return -EINVAL;
	if (rd_left(&b) == 0) /* SSL 3.0 / TLS 1.0 hellos may end here (RFC 5246 7.4.1.2) */
		return 0;
	if (rd_vec(&b, 2, &l))
		return -EINVAL;
	while (rd_left(&l) > 0) {
		struct rd e;
		uint16_t type;
		if (rd_u16(&l, &type) || rd_vec(&l, 2, &e))
			return -EINVAL;
		if (out->n_exts < SECHO_TLS_MAX_EXTS) {
			out->ext_type[out->n_exts] = type;
			out->ext_len[out->n_exts] = (uint16_t)e.len;
			out->n_exts++;
		} else {
			out->overflow = 1;
		}
		if (ch_ext(out, type, &e))
			return -EINVAL;
	}
	uint16_t best = 0;
	for (unsigned i = 0; i < out->n_versions; i++) {
		uint16_t x = out->versions[i];
		if (!secho_tls_is_grease(x) && (best == 0 || rank_version(x) > rank_version(best)))
			best = x;
	}
	if (best)
		out->version = best;
	return 0;
}

/* ---- fingerprints ---- */

struct sb {
	char *p;
	size_t cap, len;
	int err;
};

/* Room for n more characters and the NUL after them: a pointer to where they go, or NULL
 * (s->err set). */
static char *sb_room(struct sb *s, size_t n)
{
	if (s->err)
		return NULL;
	if (n >= s->cap - s->len) {
		s->err = -ENOSPC;
		return NULL;
	}
	char *d = s->p + s->len;
	s->len += n;
	d[n] = 0;
	return d;
}

/* b[0..n) and a NUL after it (as vsnprintf leaves the string). */
static void sb_put(struct sb *s, const char *b, size_t n)
{
	char *d = sb_room(s, n);
	if (d)
		memcpy(d, b, n);
}

/* sep (when not 0), then v in decimal: "%u" without printf, which cost a twentieth of a
 * run with --features tls on light traffic (a fingerprint is tens of numbers), written
 * in place (a copy through memcpy per number was a fortieth). */
static void sb_u(struct sb *s, char sep, unsigned v)
{
	unsigned nd = 1;
	for (unsigned t = v; t >= 10; t /= 10)
		nd++;
	char *d = sb_room(s, nd + (sep != 0));
	if (!d)
		return;
	if (sep)
		*d++ = sep;
	for (unsigned k = nd; k-- > 0; v /= 10)
		d[k] = (char)('0' + v % 10);
}

/* sep (when not 0), then v as four lowercase hex digits ("%04x"). */
static void sb_hex4(struct sb *s, char sep, uint16_t v)
{
	static const char hex[] = "0123456789abcdef";
	char *d = sb_room(s, 4 + (sep != 0));
	if (!d)
		return;
	if (sep)
		*d++ = sep;
	d[0] = hex[v >> 12];
	d[1] = hex[(v >> 8) & 15];
	d[2] = hex[(v >> 4) & 15];
	d[3] = hex[v & 15];
}

static void sb_list16(struct sb *s, const uint16_t *v, unsigned n, int skip_grease)
{
	int first = 1;
	for (unsigned i = 0; i < n; i++) {
		if (skip_grease && secho_tls_is_grease(v[i]))
			continue;
		sb_u(s, first ? 0 : '-', v[i]);
		first = 0;
	}
}

/* The digest of data[0..len) into out with MD5 (sha256 false) or SHA-256, from nettle:
 * contexts on the stack. (It was libcrypto's EVP_Digest, which allocates and frees a
 * context per digest: three digests a ClientHello, a twentieth of a --features tls run on
 * light traffic with payloads.) */
static void digest(bool sha256, const void *data, size_t len, uint8_t *out)
{
	if (sha256) {
		struct sha256_ctx c;
		sha256_init(&c);
		sha256_update(&c, len, data);
		sha256_digest(&c, SHA256_DIGEST_SIZE, out);
	} else {
		struct md5_ctx c;
		md5_init(&c);
		md5_update(&c, len, data);
		md5_digest(&c, MD5_DIGEST_SIZE, out);
	}
}

int secho_tls_ja3(const struct secho_tls_hello *h, char *str, size_t cap, uint8_t md5[16])
{
	if (h->overflow)
		return -EOVERFLOW;
	if (cap == 0)
		return -ENOSPC;
	struct sb s = {str, cap, 0, 0};
	sb_u(&s, 0, h->legacy_version);
	sb_put(&s, ",", 1);
	sb_list16(&s, h->ciphers, h->n_ciphers, 1);
	sb_put(&s, ",", 1);
	sb_list16(&s, h->ext_type, h->n_exts, 1);
	sb_put(&s, ",", 1);
	sb_list16(&s, h->groups, h->n_groups, 1);
	sb_put(&s, ",", 1);
	for (unsigned i = 0; i < h->n_pointfmt; i++)
		sb_u(&s, i ? '-' : 0, h->pointfmt[i]);
	if (s.err)
		return s.err;
	digest(false, str, s.len, md5);
	return (int)s.len;
}

/* v[0..n) in ascending order: an insertion sort (a hello's lists are tens of values, at
 * most SECHO_TLS_MAX_CIPHERS; qsort's calls through a comparison were a thirtieth of a
 * --features tls run). */
static void sort_u16(uint16_t *v, unsigned n)
{
	for (unsigned i = 1; i < n; i++) {
		uint16_t x = v[i];
		unsigned j = i;
		for (; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/* The first 12 hex characters of SHA-256(str), or twelve zeros when the list was empty. */
static void ja4_hash(const char *str, size_t len, int empty, char out[12])
{
	static const char hex[] = "0123456789abcdef";
	uint8_t md[32];
	if (empty) {
		memset(out, '0', 12);
		return;
	}
	digest(true, str, len, md);
	for (unsigned i = 0; i < 6; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
}

static int is_alnum(uint8_t c)
{
	return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static const char *ja4_version(uint16_t v)
{
	switch (v) {
	case 0x0304:
		return "13";
	case 0x0303:
		return "12";
	case 0x0302:
		return "11";
	case 0x0301:
		return "10";
	case 0x0300:
		return "s3";
	case 0x0002:
		return "s2";
	case 0xfeff:
		return "d1";
	case 0xfefd:
		return "d2";
	case 0xfefc:
		return "d3";
	default:
		return "00";
	}
}

int secho_tls_ja4(const struct secho_tls_hello *h, char proto, char out[SECHO_TLS_JA4_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";
	uint16_t sorted[SECHO_TLS_MAX_CIPHERS > SECHO_TLS_MAX_EXTS ? SECHO_TLS_MAX_CIPHERS
	                                                           : SECHO_TLS_MAX_EXTS];
	/* 5 bytes per list entry ("xxxx,") and per signature algorithm, plus the '_' */
	char list[(SECHO_TLS_MAX_CIPHERS + SECHO_TLS_MAX_SIGALGS) * 5 + 2];
	unsigned n, nc = 0, ne = 0;
	if (h->overflow)
		return -EOVERFLOW;

	/* a: protocol, version, SNI, counts, ALPN */
	uint16_t version = h->legacy_version;
	if (h->has_versions) {
		uint16_t best = 0;
		for (unsigned i = 0; i < h->n_versions; i++)
			if (!secho_tls_is_grease(h->versions[i]) && h->versions[i] > best)
				best = h->versions[i];
		if (best)
			version = best;
	}
	for (unsigned i = 0; i < h->n_ciphers; i++)
		nc += !secho_tls_is_grease(h->ciphers[i]);
	for (unsigned i = 0; i < h->n_exts; i++)
		ne += !secho_tls_is_grease(h->ext_type[i]);
	char alpn[2] = {'0', '0'};
	if (h->n_alpn > 0 && h->alpn[0].len > 0) {
		uint8_t f = h->alpn[0].p[0], l = h->alpn[0].p[h->alpn[0].len - 1];
		if (is_alnum(f) && is_alnum(l)) {
			alpn[0] = (char)f;
			alpn[1] = (char)l;
		} else {
			alpn[0] = hex[f >> 4];
			alpn[1] = hex[l & 15];
		}
	}
	const char *ver = ja4_version(version);
	out[0] = proto;
	out[1] = ver[0];
	out[2] = ver[1];
	out[3] = h->has_sni ? 'd' : 'i';
	out[4] = (char)('0' + (nc > 99 ? 99 : nc) / 10);
	out[5] = (char)('0' + (nc > 99 ? 99 : nc) % 10);
	out[6] = (char)('0' + (ne > 99 ? 99 : ne) / 10);
	out[7] = (char)('0' + (ne > 99 ? 99 : ne) % 10);
	out[8] = alpn[0];
	out[9] = alpn[1];
	out[10] = '_';
	out[23] = '_';
	out[36] = 0;

	/* b: sorted ciphers */
	n = 0;
	for (unsigned i = 0; i < h->n_ciphers; i++)
		if (!secho_tls_is_grease(h->ciphers[i]))
			sorted[n++] = h->ciphers[i];
	sort_u16(sorted, n);
	struct sb s = {list, sizeof(list), 0, 0};
	for (unsigned i = 0; i < n; i++)
		sb_hex4(&s, i ? ',' : 0, sorted[i]);
	if (s.err)
		return -EIO;
	ja4_hash(list, s.len, n == 0, out + 11);

	/* c: sorted extensions without SNI and ALPN, then signature algorithms in order */
	n = 0;
	for (unsigned i = 0; i < h->n_exts; i++) {
		uint16_t t = h->ext_type[i];
		if (!secho_tls_is_grease(t) && t != SECHO_TLS_EXT_SERVER_NAME &&
		    t != SECHO_TLS_EXT_ALPN)
			sorted[n++] = t;
	}
	sort_u16(sorted, n);
	s.len = 0;
	for (unsigned i = 0; i < n; i++)
		sb_hex4(&s, i ? ',' : 0, sorted[i]);
	int first = 1;
	for (unsigned i = 0; i < h->n_sigalgs; i++) {
		if (secho_tls_is_grease(h->sigalgs[i]))
			continue;
		sb_hex4(&s, first ? '_' : ',', h->sigalgs[i]);
		first = 0;
	}
	if (s.err)
		return -EIO;
	ja4_hash(list, s.len, n == 0, out + 24);
	return 0;
}

/* ---- ServerHello ---- */

/* RFC 8446 4.1.3: a ServerHello with this random is a HelloRetryRequest. */
static const uint8_t hrr_random[32] = {0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11,
                                       0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
                                       0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e,
                                       0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c};

int secho_tls_server_hello_parse(const uint8_t *msg, size_t len, struct secho_tls_server_hello *out)
{
	struct rd b, l;
	uint8_t comp;
	memset(out, 0, sizeof(*out));
	int rc = hs_body(msg, len, SECHO_TLS_HS_SERVER_HELLO, &b);
	if (rc)
		return rc;
	if (rd_u16(&b, &out->legacy_version) || rd_left(&b) < 32)
		return -EINVAL;
	out->version = out->legacy_version;
	out->hrr = memcmp(b.p + b.off, hrr_random, 32) == 0;
	if (rd_skip(&b, 32) || rd_vec(&b, 1, &l) || l.len > 32 || rd_u16(&b, &out->cipher_suite) ||
	    rd_u8(&b, &comp))
		return -EINVAL;
	if (rd_left(&b) == 0)
		return 0;
	if (rd_vec(&b, 2, &l))
		return -EINVAL;
	while (rd_left(&l) > 0) {
		struct rd e, names, name;
		uint16_t type;
		if (rd_u16(&l, &type) || rd_vec(&l, 2, &e))
			return -EINVAL;
		if (type == SECHO_TLS_EXT_SUPPORTED_VERSIONS) { /* the selected version */
			if (rd_u16(&e, &out->version) || rd_left(&e))
				return -EINVAL;
		} else if (type == SECHO_TLS_EXT_ALPN) { /* exactly one name (RFC 7301 3.1) */
			if (rd_vec(&e, 2, &names) || rd_vec(&names, 1, &name))
				return -EINVAL;
			out->has_alpn = 1;
			out->alpn = span_of(&name);
		}
	}
	return 0;
}

/* ---- Certificate ---- */

static uint32_t u24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

int secho_tls_certificate_first(const uint8_t *msg, size_t len, const uint8_t **der,
                                size_t *der_len)
{
	/* header (4), certificate_list length (3), first certificate's length (3) */
	if (len < 10 || msg[0] != SECHO_TLS_HS_CERTIFICATE)
		return -EINVAL;
	uint32_t mlen = u24(msg + 1), llen = u24(msg + 4), clen = u24(msg + 7);
	if (llen + 3 != mlen || clen + 3 > llen || clen == 0)
		return -EINVAL;
	*der = msg + 10;
	*der_len = len - 10 < clen ? len - 10 : clen;
	return 0;
}

/*
 * One DER element header (X.690 8.1) at r: single-byte tags only, definite lengths of up to
 * four bytes. *clen is the declared content length, which must fit in the container
 * (r->len is the container's declared end); whether the content is in memory is the
 * caller's concern (avail). Returns 0, -EAGAIN when the header itself is past avail,
 * -EINVAL otherwise.
 */
static int der_hdr(struct rd *r, size_t avail, uint8_t *tag, size_t *clen)
{
	size_t end = r->len < avail ? r->len : avail;
	if (r->off + 2 > end)
		return r->off + 2 > r->len ? -EINVAL : -EAGAIN;
	*tag = r->p[r->off];
	uint8_t l0 = r->p[r->off + 1];
	if ((*tag & 0x1f) == 0x1f)
		return -EINVAL;
	r->off += 2;
	size_t n = l0;
	if (l0 & 0x80) {
		unsigned k = l0 & 0x7f;
		if (k == 0 || k > 4)
			return -EINVAL;
		if (r->off + k > end)
			return r->off + k > r->len ? -EINVAL : -EAGAIN;
		n = 0;
		for (unsigned i = 0; i < k; i++)
			n = n << 8 | r->p[r->off++];
	}
	if (n > r->len - r->off)
		return -EINVAL;
	*clen = n;
	return 0;
}

/* The next element, whole: its content as a cursor. */
static int der_whole(struct rd *r, size_t avail, uint8_t want, struct rd *sub)
{
	uint8_t tag;
	size_t n;
	int rc = der_hdr(r, avail, &tag, &n);
	if (rc)
		return rc;
	if (tag != want)
		return -EINVAL;
	if (r->off + n > avail)
		return -EAGAIN;
	sub->p = r->p + r->off;
	sub->len = n;
	sub->off = 0;
	r->off += n;
	return 0;
}

/* Enter a constructed element whose content may run past avail: the cursor keeps the
 * declared end, reads check avail. */
static int der_enter(struct rd *r, size_t avail, uint8_t want, struct rd *sub, size_t *sub_avail)
{
	uint8_t tag;
	size_t n;
	int rc = der_hdr(r, avail, &tag, &n);
	if (rc)
		return rc;
	if (tag != want)
		return -EINVAL;
	sub->p = r->p + r->off;
	sub->len = n;
	sub->off = 0;
	*sub_avail = avail - r->off;
	r->off += n;
	return 0;
}

/* The first commonName (2.5.4.3) of a Name (RFC 5280 4.1.2.4): RDNSequence of SETs of
 * AttributeTypeAndValue. */
static int der_cn(struct rd name, struct secho_tls_span *cn)
{
	static const uint8_t oid_cn[3] = {0x55, 0x04, 0x03};
	while (rd_left(&name) > 0) {
		struct rd set, atv, oid;
		if (der_whole(&name, name.len, 0x31, &set))
			return -EINVAL;
		while (rd_left(&set) > 0) {
			uint8_t tag;
			size_t n;
			if (der_whole(&set, set.len, 0x30, &atv) ||
			    der_whole(&atv, atv.len, 0x06, &oid) ||
			    der_hdr(&atv, atv.len, &tag, &n) || n > rd_left(&atv))
				return -EINVAL;
			if (cn->p == NULL && oid.len == 3 && memcmp(oid.p, oid_cn, 3) == 0) {
				cn->p = atv.p + atv.off;
				cn->len = (uint16_t)(n > 0xffff ? 0xffff : n);
			}
		}
	}
	return 0;
}

static int digits(const uint8_t *p, unsigned n, int *v)
{
	*v = 0;
	for (unsigned i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -EINVAL;
		*v = *v * 10 + (p[i] - '0');
	}
	return 0;
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian; era arithmetic over 400-year
 * cycles, which makes March the year's first month so February's length comes last). */
static int64_t days_from_civil(int y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* UTCTime YYMMDDHHMMSSZ or GeneralizedTime YYYYMMDDHHMMSSZ (RFC 5280 4.1.2.5). */
static int der_time(struct rd *r, int64_t *t)
{
	uint8_t tag;
	size_t n;
	if (der_hdr(r, r->len, &tag, &n) || n > rd_left(r))
		return -EINVAL;
	const uint8_t *p = r->p + r->off;
	r->off += n;
	int y, mo, d, h, mi, s;
	if (tag == 0x17 && n == 13) {
		if (digits(p, 2, &y))
			return -EINVAL;
		y += y >= 50 ? 1900 : 2000;
		p += 2;
	} else if (tag == 0x18 && n == 15) {
		if (digits(p, 4, &y))
			return -EINVAL;
		p += 4;
	} else {
		return -EINVAL;
	}
	if (digits(p, 2, &mo) || digits(p + 2, 2, &d) || digits(p + 4, 2, &h) ||
	    digits(p + 6, 2, &mi) || digits(p + 8, 2, &s) || p[10] != 'Z' || mo < 1 || mo > 12 ||
	    d < 1 || d > 31 || h > 23 || mi > 59 || s > 60)
		return -EINVAL;
	*t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
	return 0;
}

int secho_tls_cert_parse(const uint8_t *der, size_t len, struct secho_tls_cert *out)
{
	struct rd top = {der, len, 0}, cert, tbs, x;
	size_t cert_avail, tbs_avail, spki_avail, alg_avail;
	uint8_t tag;
	size_t n;
	int rc;
	memset(out, 0, sizeof(*out));
	/* the outer SEQUENCE's declared end may lie past len: let der_hdr see it as the
	 * container (top.len = SIZE_MAX would do; the certificate cannot exceed 2^24) */
	top.len = (size_t)1 << 24;
	if ((rc = der_enter(&top, len, 0x30, &cert, &cert_avail)))
		return rc;
	if ((rc = der_enter(&cert, cert_avail, 0x30, &tbs, &tbs_avail)))
		return rc;
	/* version [0] EXPLICIT, optional */
	if (tbs.off + 1 > tbs_avail)
		return -EAGAIN;
	if (tbs.p[tbs.off] == 0xa0 && (rc = der_whole(&tbs, tbs_avail, 0xa0, &x)))
		return rc;
	if ((rc = der_whole(&tbs, tbs_avail, 0x02, &x))) /* serialNumber */
		return rc;
	if ((rc = der_whole(&tbs, tbs_avail, 0x30, &x))) /* signature */
		return rc;
	if ((rc = der_whole(&tbs, tbs_avail, 0x30, &x))) /* issuer */
		return rc;
	if (der_cn(x, &out->issuer_cn))
		return -EINVAL;
	out->has_issuer = 1;
	if ((rc = der_whole(&tbs, tbs_avail, 0x30, &x))) /* validity */
		return rc;
	if (der_time(&x, &out->not_before) || der_time(&x, &out->not_after))
		return -EINVAL;
	out->has_validity = 1;
	if ((rc = der_whole(&tbs, tbs_avail, 0x30, &x))) /* subject */
		return rc;
	if (der_cn(x, &out->subject_cn))
		return -EINVAL;
	out->has_subject = 1;
	struct rd spki, alg, oid;
	if ((rc = der_enter(&tbs, tbs_avail, 0x30, &spki, &spki_avail)))
		return rc;
	if ((rc = der_enter(&spki, spki_avail, 0x30, &alg, &alg_avail)))
		return rc;
	if ((rc = der_whole(&alg, alg_avail, 0x06, &oid)))
		return rc;
	(void)tag;
	(void)n;
	out->pk_alg = span_of(&oid);
	out->has_pk_alg = 1;
	return 0;
}

/* The public key algorithms secho_tls_oid_nid knows: contents octets, OpenSSL NID. */
static const struct {
	uint16_t nid;
	uint8_t len;
	uint8_t oid[9];
} pk_algs[] = {
        {NID_rsaEncryption, 9, {0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01}},
        {NID_rsassaPss, 9, {0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0a}},
        {NID_X9_62_id_ecPublicKey, 7, {0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01}},
        {NID_dsa, 7, {0x2a, 0x86, 0x48, 0xce, 0x38, 0x04, 0x01}},
        {NID_X25519, 3, {0x2b, 0x65, 0x6e}},
        {NID_X448, 3, {0x2b, 0x65, 0x6f}},
        {NID_ED25519, 3, {0x2b, 0x65, 0x70}},
        {NID_ED448, 3, {0x2b, 0x65, 0x71}},
};

uint16_t secho_tls_oid_nid(const uint8_t *oid, size_t len)
{
	for (size_t i = 0; i < sizeof(pk_algs) / sizeof(pk_algs[0]); i++)
		if (pk_algs[i].len == len && memcmp(pk_algs[i].oid, oid, len) == 0)
			return pk_algs[i].nid;
	return NID_undef;
}

int secho_tls_oid_dotted(const uint8_t *oid, size_t len, char *buf, size_t cap)
{
	if (cap == 0)
		return 0;
	/* X.690 8.19: the first subidentifier holds two arcs */
	struct sb s = {buf, cap, 0, 0};
	uint64_t arc = 0;
	int first = 1;
	for (size_t i = 0; i < len && !s.err; i++) {
		if (arc >> 56) /* an arc past 2^63: not an OID this exports */
			break;
		arc = arc << 7 | (oid[i] & 0x7f);
		if (oid[i] & 0x80)
			continue;
		if (first) {
			unsigned a = arc < 40 ? 0 : arc < 80 ? 1 : 2;
			sb_u(&s, 0, a);
			sb_u(&s, '.', (unsigned)(arc - 40u * a));
			first = 0;
		} else {
			sb_u(&s, '.', (unsigned)arc);
		}
		arc = 0;
	}
	buf[s.len] = 0;
	return (int)s.len;
}

/* ---- the per-flow state ---- */

static uint8_t sat_inc(uint8_t c)
{
	return c == 0xff ? c : (uint8_t)(c + 1);
}

static int is_tls13(uint16_t v)
{
	return v == 0x0304 || (v >> 8) == 0x7f;
}

/* Copy a span into a fixed field, cut at cap bytes; returns the length kept. */
static uint8_t keep(char *dst, size_t cap, const uint8_t *p, size_t len, uint16_t *flags,
                    uint16_t cut_flag)
{
	if (len > cap) {
		len = cap;
		*flags |= cut_flag;
	}
	if (len)
		memcpy(dst, p, len);
	return (uint8_t)len;
}

static void dir_stop(struct secho_feat_tls *s, unsigned d)
{
	s->dir[d].state = SECHO_FEAT_TLS_DIR_DONE;
	if (s->buf_owner == d + 1) {
		s->buf_owner = 0;
		s->buf_len = 0;
	}
	if (s->dir[0].state == SECHO_FEAT_TLS_DIR_DONE &&
	    s->dir[1].state == SECHO_FEAT_TLS_DIR_DONE)
		s->flags |= SECHO_FEAT_TLS_F_DONE;
}

static void got_client_hello(struct secho_feat_tls *s, const struct secho_tls_hello *h)
{
	char ja3[2048];
	s->flags |= SECHO_FEAT_TLS_F_CH;
	s->client_version = h->version;
	s->client_legacy_version = h->legacy_version;
	if (h->has_sni) {
		s->flags |= SECHO_FEAT_TLS_F_SNI;
		s->sni_len = keep(s->sni, sizeof(s->sni), h->sni.p, h->sni.len, &s->flags,
		                  SECHO_FEAT_TLS_F_SNI_CUT);
	}
	size_t o = 0;
	for (unsigned i = 0; i < h->n_alpn; i++) {
		size_t need = h->alpn[i].len + (i ? 1u : 0u);
		if (o + need > sizeof(s->alpn_offer)) {
			s->flags |= SECHO_FEAT_TLS_F_ALPN_CUT;
			break;
		}
		if (i)
			s->alpn_offer[o++] = ',';
		memcpy(s->alpn_offer + o, h->alpn[i].p, h->alpn[i].len);
		o += h->alpn[i].len;
	}
	s->alpn_offer_len = (uint8_t)o;
	/* ext_type and ext_len (the true lengths) were filled by hello_walk */
	if (h->n_exts > SECHO_FEAT_TLS_EXTS || h->overflow)
		s->flags |= SECHO_FEAT_TLS_F_EXT_CUT;
	if (h->overflow) {
		s->overflow = sat_inc(s->overflow);
		return;
	}
	if (secho_tls_ja3(h, ja3, sizeof(ja3), s->ja3) >= 0)
		s->flags |= SECHO_FEAT_TLS_F_JA3;
	char ja4[SECHO_TLS_JA4_LEN + 1];
	if (secho_tls_ja4(h, 't', ja4) == 0) {
		memcpy(s->ja4, ja4, SECHO_TLS_JA4_LEN);
		s->flags |= SECHO_FEAT_TLS_F_JA4;
	}
}

/* A whole message (or a Certificate's first SECHO_FEAT_TLS_BUF bytes) is in buf. */
static void message_done(struct secho_feat_tls *s, unsigned d)
{
	const uint8_t *m = s->buf;
	size_t len = s->buf_len;
	uint8_t type = m[0];
	s->buf_owner = 0;
	s->buf_len = 0;
	if (type == SECHO_TLS_HS_CLIENT_HELLO) {
		struct secho_tls_hello h;
		if (secho_tls_client_hello_parse(m, len, &h)) {
			s->malformed = sat_inc(s->malformed);
		} else {
			got_client_hello(s, &h);
		}
		dir_stop(s, d); /* the client says nothing more in the clear that is kept */
	} else if (type == SECHO_TLS_HS_SERVER_HELLO) {
		struct secho_tls_server_hello sh;
		if (secho_tls_server_hello_parse(m, len, &sh)) {
			s->malformed = sat_inc(s->malformed);
			dir_stop(s, d);
			return;
		}
		s->flags |= SECHO_FEAT_TLS_F_SH;
		s->server_version = sh.version;
		s->cipher_suite = sh.cipher_suite;
		if (sh.has_alpn) {
			s->flags |= SECHO_FEAT_TLS_F_SALPN;
			s->alpn_len = keep(s->alpn, sizeof(s->alpn), sh.alpn.p, sh.alpn.len,
			                   &s->flags, SECHO_FEAT_TLS_F_ALPN_CUT);
		}
		if (is_tls13(sh.version)) /* the rest of the server's flight is encrypted */
			dir_stop(s, d);
	} else if (type == SECHO_TLS_HS_CERTIFICATE) {
		const uint8_t *der;
		size_t der_len;
		struct secho_tls_cert c;
		memset(&c, 0, sizeof(c));
		int rc = secho_tls_certificate_first(m, len, &der, &der_len);
		if (rc == 0)
			rc = secho_tls_cert_parse(der, der_len, &c);
		if (rc == -EINVAL) {
			s->malformed = sat_inc(s->malformed);
		} else {
			/* 0, or -EAGAIN: the fields reached before the buffer ended */
			if (c.has_issuer)
				s->issuer_cn_len =
				        keep(s->issuer_cn, sizeof(s->issuer_cn), c.issuer_cn.p,
				             c.issuer_cn.len, &s->flags, SECHO_FEAT_TLS_F_CN_CUT);
			if (c.has_subject)
				s->subject_cn_len =
				        keep(s->subject_cn, sizeof(s->subject_cn), c.subject_cn.p,
				             c.subject_cn.len, &s->flags, SECHO_FEAT_TLS_F_CN_CUT);
			if (c.has_validity) {
				s->flags |= SECHO_FEAT_TLS_F_VALIDITY;
				s->not_before = c.not_before;
				s->not_after = c.not_after;
			}
			if (c.has_pk_alg) {
				s->pk_alg_len = (uint8_t)secho_tls_oid_dotted(
				        c.pk_alg.p, c.pk_alg.len, s->pk_alg, sizeof(s->pk_alg));
				s->pk_nid = secho_tls_oid_nid(c.pk_alg.p, c.pk_alg.len);
			}
			s->flags |= SECHO_FEAT_TLS_F_CERT;
		}
		dir_stop(s, d);
	}
}

/*
 * The hello being buffered is compacted as it arrives: extensions whose contents no field
 * reads (key shares, padding, tickets, pre-shared keys, ECH, ...) keep their 4-byte header,
 * with a length of 0, and their contents are not copied; their true lengths go straight to
 * the state's ext_len. So a post-quantum key share (X25519MLKEM768: 1,216 bytes in the
 * ClientHello, 1,120 in the ServerHello) costs 4 bytes of buffer. The lengths around them
 * (the message's, the extension block's) are lowered by what was left out when the message
 * ends (hello_close). The walk below follows RFC 8446 4.1.2/4.1.3's layout over the bytes
 * kept; where a length would cross its container it stops walking and copies the rest as
 * it is, for the parser to refuse.
 */
static int ext_read(uint8_t type, uint16_t ext)
{
	if (type == SECHO_TLS_HS_SERVER_HELLO)
		return ext == SECHO_TLS_EXT_SUPPORTED_VERSIONS || ext == SECHO_TLS_EXT_ALPN;
	switch (ext) {
	case SECHO_TLS_EXT_SERVER_NAME:
	case SECHO_TLS_EXT_SUPPORTED_GROUPS:
	case SECHO_TLS_EXT_EC_POINT_FORMATS:
	case SECHO_TLS_EXT_SIGNATURE_ALGS:
	case SECHO_TLS_EXT_ALPN:
	case SECHO_TLS_EXT_SUPPORTED_VERSIONS:
	case SECHO_TLS_EXT_QUIC_TP:
	case SECHO_TLS_EXT_QUIC_TP_DRAFT:
		return 1;
	default:
		return 0;
	}
}

#define M_STOP 0xff /* walk over: copy as is */

/* Bytes were added to buf: advance the walk while the bytes it needs are there. Returns
 * the length buf must reach before the walk can go on (a walk over or stopped: SIZE_MAX,
 * the rest is copied as is); the bytes before it are kept whatever they are, so the caller
 * copies up to there at once. */
static size_t hello_walk(struct secho_feat_tls *s)
{
	const uint8_t type = s->buf[0];
	for (;;) {
		size_t at = s->m_next, have = s->buf_len;
		switch (s->m_step) {
		case 0: /* header, legacy_version, random */
			s->m_next = 4 + 2 + 32;
			s->m_step = 1;
			continue;
		case 1: /* legacy_session_id */
		case 3: /* ClientHello: legacy_compression_methods; ServerHello: cipher + method */
			if (type == SECHO_TLS_HS_SERVER_HELLO && s->m_step == 3) {
				s->m_next = (uint32_t)(at + 3);
				s->m_step = 4;
				continue;
			}
			if (have < at + 1)
				return at + 1;
			s->m_next = (uint32_t)(at + 1 + s->buf[at]);
			s->m_step++;
			continue;
		case 2: /* ClientHello: cipher_suites; ServerHello: straight to its step 3 */
			if (type == SECHO_TLS_HS_SERVER_HELLO) {
				s->m_step = 3;
				continue;
			}
			if (have < at + 2)
				return at + 2;
			s->m_next = (uint32_t)(at + 2 + (s->buf[at] << 8 | s->buf[at + 1]));
			s->m_step = 3;
			continue;
		case 4: /* the extension block's length */
			if (have < at + 2)
				return at + 2;
			s->m_ext_at = (uint32_t)at;
			s->m_ext_total = (uint32_t)(s->buf[at] << 8 | s->buf[at + 1]);
			s->m_next = (uint32_t)(at + 2);
			s->m_step = 5;
			continue;
		case 5: { /* one extension's header */
			/* the block's end in buf's coordinates: what was left out is not there */
			size_t end = (size_t)s->m_ext_at + 2 + s->m_ext_total - s->m_cut;
			if (at >= end || at + 4 > end) {
				s->m_step = M_STOP;
				return SIZE_MAX;
			}
			if (have < at + 4)
				return at + 4;
			uint16_t ext = (uint16_t)(s->buf[at] << 8 | s->buf[at + 1]);
			uint16_t len = (uint16_t)(s->buf[at + 2] << 8 | s->buf[at + 3]);
			if (at + 4 + len > end) {
				s->m_step = M_STOP;
				return SIZE_MAX;
			}
			if (type == SECHO_TLS_HS_CLIENT_HELLO && s->n_ext < SECHO_FEAT_TLS_EXTS) {
				s->ext_type[s->n_ext] = ext;
				s->ext_len[s->n_ext++] = len;
			}
			if (ext_read(type, ext) || len == 0) {
				s->m_next = (uint32_t)(at + 4 + len);
			} else {
				s->buf[at + 2] = 0;
				s->buf[at + 3] = 0;
				s->m_skip = len;
				s->m_cut += len;
				s->m_next = (uint32_t)(at + 4);
			}
			continue;
		}
		default:
			return SIZE_MAX;
		}
	}
}

/* The hello is whole: its lengths lowered by what was left out. Returns 0, or -EINVAL when
 * an extension claimed more than the message had (the parse of the uncompacted message
 * would have refused it). */
static int hello_close(struct secho_feat_tls *s)
{
	if (s->m_skip)
		return -EINVAL;
	uint32_t body = (uint32_t)s->buf_len - 4;
	s->buf[1] = (uint8_t)(body >> 16);
	s->buf[2] = (uint8_t)(body >> 8);
	s->buf[3] = (uint8_t)body;
	if (s->m_cut && s->m_ext_at + 2 <= s->buf_len) {
		uint16_t t = (uint16_t)(s->m_ext_total - s->m_cut);
		s->buf[s->m_ext_at] = (uint8_t)(t >> 8);
		s->buf[s->m_ext_at + 1] = (uint8_t)t;
	}
	return 0;
}

/* Handshake bytes of direction d (record bodies of content type 22, concatenated). */
static void hs_feed(struct secho_feat_tls *s, unsigned d, const uint8_t *b, size_t n)
{
	struct secho_feat_tls_dir *st = &s->dir[d];
	while (n > 0 && st->state == SECHO_FEAT_TLS_DIR_RUN) {
		if (st->hs_have < 4) {
			st->hs_hdr[st->hs_have++] = *b++;
			n--;
			if (st->hs_have < 4)
				continue;
			uint8_t type = st->hs_hdr[0];
			st->hs_len = st->hs_left = u24(st->hs_hdr + 1);
			int want = (type == SECHO_TLS_HS_CLIENT_HELLO &&
			            !(s->flags & SECHO_FEAT_TLS_F_CH)) ||
			           (type == SECHO_TLS_HS_SERVER_HELLO &&
			            !(s->flags & SECHO_FEAT_TLS_F_SH)) ||
			           (type == SECHO_TLS_HS_CERTIFICATE &&
			            !(s->flags & SECHO_FEAT_TLS_F_CERT));
			if (type == 14 || type == 16) { /* ServerHelloDone, ClientKeyExchange: the
				                            clear part of the handshake is over */
				dir_stop(s, d);
				return;
			}
			if (want) {
				if (s->buf_owner != 0 && s->buf_owner != d + 1) {
					/* the other side is mid-message: not a handshake order TLS
					 * has */
					s->malformed = sat_inc(s->malformed);
					dir_stop(s, d);
					return;
				}
				s->buf_owner = (uint8_t)(d + 1);
				memcpy(s->buf, st->hs_hdr, 4);
				s->buf_len = 4;
				s->m_step = type == SECHO_TLS_HS_CERTIFICATE ? M_STOP : 0;
				s->m_next = s->m_ext_at = s->m_ext_total = s->m_cut = s->m_skip = 0;
				if (type == SECHO_TLS_HS_CLIENT_HELLO)
					s->n_ext = 0;
				(void)hello_walk(s);
			}
		} else {
			size_t take = n < st->hs_left ? n : st->hs_left;
			if (s->buf_owner == d + 1 && st->hs_hdr[0] == SECHO_TLS_HS_CERTIFICATE) {
				/* a prefix is all the fields need */
				size_t room = SECHO_FEAT_TLS_BUF - s->buf_len;
				size_t c = take < room ? take : room;
				memcpy(s->buf + s->buf_len, b, c);
				s->buf_len = (uint16_t)(s->buf_len + c);
			} else if (s->buf_owner ==
			           d + 1) { /* a hello: compacted, whole or nothing */
				size_t i = 0;
				while (i < take) {
					/* the walk (which may start a skip) over what is in buf;
					 * the bytes up to where it looks next are kept as they
					 * are, so they are copied at once */
					size_t need = hello_walk(s);
					if (s->m_skip) {
						size_t k =
						        take - i < s->m_skip ? take - i : s->m_skip;
						s->m_skip -= (uint32_t)k;
						i += k;
						continue;
					}
					if (s->buf_len == SECHO_FEAT_TLS_BUF) {
						s->oversize = sat_inc(s->oversize);
						dir_stop(s, d);
						return;
					}
					size_t c = take - i,
					       room = (size_t)SECHO_FEAT_TLS_BUF - s->buf_len;
					if (c > room)
						c = room;
					if (c > need - s->buf_len) /* need > buf_len: hello_walk */
						c = need - s->buf_len;
					memcpy(s->buf + s->buf_len, b + i, c);
					s->buf_len = (uint16_t)(s->buf_len + c);
					i += c;
				}
				(void)hello_walk(s);
			}
			st->hs_left -= (uint32_t)take;
			b += take;
			n -= take;
		}
		if (st->hs_have == 4 && s->buf_owner == d + 1 && st->hs_left == 0 &&
		    st->hs_hdr[0] != SECHO_TLS_HS_CERTIFICATE && hello_close(s)) {
			s->malformed = sat_inc(s->malformed);
			dir_stop(s, d);
			return;
		}
		if (st->hs_have == 4 && s->buf_owner == d + 1 &&
		    (st->hs_left == 0 || s->buf_len == SECHO_FEAT_TLS_BUF))
			message_done(s, d);
		if (st->hs_have == 4 && st->hs_left == 0)
			st->hs_have = 0;
	}
}

/* In-order bytes of direction d's TCP stream: TLS records (RFC 8446 5.1). */
static void rec_feed(struct secho_feat_tls *s, unsigned d, const uint8_t *b, size_t n)
{
	struct secho_feat_tls_dir *st = &s->dir[d];
	while (n > 0 && st->state == SECHO_FEAT_TLS_DIR_RUN) {
		if (st->rec_have < 5) {
			st->rec_hdr[st->rec_have++] = *b++;
			n--;
			if (st->rec_have < 5)
				continue;
			uint8_t type = st->rec_hdr[0];
			uint16_t rlen = (uint16_t)(st->rec_hdr[3] << 8 | st->rec_hdr[4]);
			/* content types 20..23, version 3.x, at most 2^14 + 2048 (RFC 5246 6.2.3)
			 */
			if (type < 20 || type > 23 || st->rec_hdr[1] != 3 || rlen > 16384 + 2048) {
				if (st->records) /* a TLS stream gone wrong; else not TLS at all */
					s->malformed = sat_inc(s->malformed);
				dir_stop(s, d);
				return;
			}
			if (type !=
			    22) { /* ChangeCipherSpec, alert, data: no more clear handshake */
				dir_stop(s, d);
				return;
			}
			st->records = sat_inc(st->records);
			st->rec_type = type;
			st->rec_left = rlen;
			if (rlen == 0)
				st->rec_have = 0;
			continue;
		}
		size_t take = n < st->rec_left ? n : st->rec_left;
		hs_feed(s, d, b, take);
		b += take;
		n -= take;
		st->rec_left = (uint16_t)(st->rec_left - take);
		if (st->rec_left == 0)
			st->rec_have = 0;
	}
}

void secho_feat_tls_init(struct secho_feat_tls *s)
{
	/* flags .. m_step, not_before and not_after: the fixed fields (the dates are read
	 * under F_VALIDITY only, but they sit here) */
	memset(s, 0, offsetof(struct secho_feat_tls, ja3));
	memset(s->dir, 0, sizeof(s->dir));
}

void secho_feat_tls_packet(struct secho_feat_tls *s, const struct secho_feat_pkt *p)
{
	if ((s->flags & SECHO_FEAT_TLS_F_DONE) || p->proto != 6)
		return;
	unsigned d = p->dir & 1;
	struct secho_feat_tls_dir *st = &s->dir[d];
	if (st->state == SECHO_FEAT_TLS_DIR_DONE)
		return;
	uint32_t seq = p->tcp_seq;
	if (p->tcp_flags & 0x02) { /* SYN: the stream starts at ISN + 1 */
		seq++;
		if (st->state == SECHO_FEAT_TLS_DIR_IDLE || st->state == SECHO_FEAT_TLS_DIR_SYN) {
			st->next_seq = seq;
			st->state = SECHO_FEAT_TLS_DIR_SYN;
		}
	}
	uint32_t wire = p->wire_len > p->len ? p->wire_len : p->len;
	if (wire == 0)
		return;
	if (st->state == SECHO_FEAT_TLS_DIR_IDLE) /* no SYN seen: start at the first payload */
		st->next_seq = seq;
	st->state = SECHO_FEAT_TLS_DIR_RUN;
	const uint8_t *b = p->payload;
	uint32_t n = p->len;
	int32_t delta = (int32_t)(seq - st->next_seq);
	if (delta > 0) { /* bytes missing before this segment: never guessed */
		s->gap = sat_inc(s->gap);
		dir_stop(s, d);
		return;
	}
	if (delta < 0) { /* retransmission, maybe with new bytes after the old */
		uint32_t old = (uint32_t)-delta;
		if (old >= wire)
			return;
		if (old >= n) {
			s->snapped = sat_inc(s->snapped);
			dir_stop(s, d);
			return;
		}
		b += old;
		n -= old;
		wire -= old;
	}
	st->next_seq += wire;
	rec_feed(s, d, b, n);
	if (wire > n && st->state != SECHO_FEAT_TLS_DIR_DONE) {
		s->snapped = sat_inc(s->snapped);
		dir_stop(s, d);
	}
}

/* ---- JSON ---- */

int secho_feat_tls_json(const struct secho_feat_tls *s, char *buf, size_t cap)
{
	struct secho_fjson j;
	secho_fjson_init_bare(&j, buf, cap);
	if (s->flags & SECHO_FEAT_TLS_F_CH) {
		if (s->flags & SECHO_FEAT_TLS_F_SNI)
			secho_fjson_mem_s(&j, "tls_sni", s->sni, s->sni_len);
		if (s->flags & SECHO_FEAT_TLS_F_SNI_CUT)
			secho_fjson_mem_u(&j, "tls_sni_cut", 1);
		secho_fjson_mem_u(&j, "tls_client_version", s->client_version);
		if (s->alpn_offer_len)
			secho_fjson_mem_s(&j, "tls_alpn_offer", s->alpn_offer, s->alpn_offer_len);
		if (s->flags & SECHO_FEAT_TLS_F_JA3)
			secho_fjson_mem_hex(&j, "tls_ja3", s->ja3, sizeof(s->ja3));
		if (s->flags & SECHO_FEAT_TLS_F_JA4)
			secho_fjson_mem_s(&j, "tls_ja4", s->ja4, SECHO_TLS_JA4_LEN);
		secho_fjson_mem_list16(&j, "tls_ext_type", s->ext_type, s->n_ext);
		secho_fjson_mem_list16(&j, "tls_ext_len", s->ext_len, s->n_ext);
		if (s->flags & SECHO_FEAT_TLS_F_EXT_CUT)
			secho_fjson_mem_u(&j, "tls_ext_cut", 1);
	}
	if (s->flags & SECHO_FEAT_TLS_F_SH) {
		secho_fjson_mem_u(&j, "tls_server_version", s->server_version);
		secho_fjson_mem_u(&j, "tls_cipher_suite", s->cipher_suite);
		if (s->flags & SECHO_FEAT_TLS_F_SALPN)
			secho_fjson_mem_s(&j, "tls_alpn", s->alpn, s->alpn_len);
	}
	if (s->flags & SECHO_FEAT_TLS_F_ALPN_CUT)
		secho_fjson_mem_u(&j, "tls_alpn_cut", 1);
	if (s->flags & SECHO_FEAT_TLS_F_CERT) {
		if (s->issuer_cn_len)
			secho_fjson_mem_s(&j, "tls_issuer_cn", s->issuer_cn, s->issuer_cn_len);
		if (s->subject_cn_len)
			secho_fjson_mem_s(&j, "tls_subject_cn", s->subject_cn, s->subject_cn_len);
		if (s->flags & SECHO_FEAT_TLS_F_CN_CUT)
			secho_fjson_mem_u(&j, "tls_cn_cut", 1);
		if (s->flags & SECHO_FEAT_TLS_F_VALIDITY) {
			secho_fjson_mem_i(&j, "tls_validity_not_before", s->not_before);
			secho_fjson_mem_i(&j, "tls_validity_not_after", s->not_after);
		}
		if (s->pk_alg_len)
			secho_fjson_mem_s(&j, "tls_public_key_alg", s->pk_alg, s->pk_alg_len);
	}
	if (s->gap)
		secho_fjson_mem_u(&j, "tls_gap", s->gap);
	if (s->snapped)
		secho_fjson_mem_u(&j, "tls_snapped", s->snapped);
	if (s->malformed)
		secho_fjson_mem_u(&j, "tls_malformed", s->malformed);
	if (s->oversize)
		secho_fjson_mem_u(&j, "tls_oversize", s->oversize);
	if (s->overflow)
		secho_fjson_mem_u(&j, "tls_overflow", s->overflow);
	return secho_fjson_end_cstr(&j);
}
