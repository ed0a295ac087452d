/*
 * src/flow/feature/quic.c - the quic feature set (quic.h; docs/FLOW.md "Features: quic").
 *
 * Crypto: HKDF from nettle (hkdf_extract, hkdf_expand over its HMAC-SHA256: contexts on the
 * stack, no allocation, no lock); AES-128-ECB for the header protection mask and AES-128-GCM for
 * the payload from secho's own library (include/secho/aes.h, modes.h, gcm.h). Initial keys are
 * derivable by anyone who sees the first packet (RFC 9001 5.2): they protect nothing secret, and
 * are kept in the flow's state so that HKDF runs once per connection ID, not once per packet.
 */
#include "flow/feature/quic.h"

#include "flow/feature/fjson.h"

#include <secho/aes.h>
#include <secho/gcm.h>
#include <secho/modes.h>

#include <nettle/hkdf.h>
#include <nettle/hmac.h>

#include <errno.h>
#include <stddef.h>
#include <string.h>

_Static_assert(sizeof(struct secho_feat_quic) == SECHO_FEAT_QUIC_BYTES,
               "struct secho_feat_quic: its size is stated in quic.h and docs/FLOW.md");
_Static_assert(SECHO_QUIC_CH_MAX <= UINT16_MAX, "crypto ranges are 16-bit offsets");

/* ---- versions (RFC 9001 5.2, RFC 9369 3.3.1-3.3.2, draft-ietf-quic-tls-29 5.2) ---- */

/* HKDF-Expand-Label labels, without "tls13 " (v1 and draft-29 share theirs) */
struct quic_labels {
	const char *key, *iv, *hp;
};

static const struct quic_labels labels_v1 = {"quic key", "quic iv", "quic hp"};
static const struct quic_labels labels_v2 = {"quicv2 key", "quicv2 iv", "quicv2 hp"};

struct quic_version {
	uint32_t version;
	uint8_t salt[20];
	const struct quic_labels *label;
	uint8_t type_bits[4]; /* the long header's type bits for each enum secho_quic_type */
};

static const struct quic_version versions[] = {
        {SECHO_QUIC_V1,
         {0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34, 0xb3, 0x4d, 0x17,
          0x9a, 0xe6, 0xa4, 0xc8, 0x0c, 0xad, 0xcc, 0xbb, 0x7f, 0x0a},
         &labels_v1,
         {0, 1, 2, 3}},
        {SECHO_QUIC_V2,
         {0x0d, 0xed, 0xe3, 0xde, 0xf7, 0x00, 0xa6, 0xdb, 0x81, 0x93,
          0x81, 0xbe, 0x6e, 0x26, 0x9d, 0xcb, 0xf9, 0xbd, 0x2e, 0xd9},
         &labels_v2,
         {1, 2, 3, 0}},
        {SECHO_QUIC_DRAFT29,
         {0xaf, 0xbf, 0xec, 0x28, 0x99, 0x93, 0xd2, 0x4c, 0x9e, 0x97,
          0x86, 0xf1, 0x9c, 0x61, 0x11, 0xe0, 0x43, 0x90, 0xa8, 0x99},
         &labels_v1,
         {0, 1, 2, 3}},
};

static const struct quic_version *version_find(uint32_t v)
{
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
		if (versions[i].version == v)
			return &versions[i];
	return NULL;
}

int secho_quic_version_known(uint32_t version)
{
	return version_find(version) != NULL;
}

/* ---- integers ---- */

size_t secho_quic_varint(const uint8_t *b, size_t len, uint64_t *v)
{
	if (len == 0)
		return 0;
	size_t n = (size_t)1 << (b[0] >> 6);
	if (n > len)
		return 0;
	uint64_t x = b[0] & 0x3f;
	for (size_t i = 1; i < n; i++)
		x = x << 8 | b[i];
	*v = x;
	return n;
}

static uint32_t rd32(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* ---- long header (RFC 9000 17.2, 17.2.2, 17.2.5; RFC 8999 5.1 for unknown versions) ---- */

int secho_quic_parse_long(const uint8_t *b, size_t len, struct secho_quic_hdr *h)
{
	memset(h, 0, sizeof(*h));
	/* first byte, version, DCID length: the invariant part (RFC 8999) */
	if (len < 7 || !(b[0] & 0x80))
		return -EINVAL;
	h->version = rd32(b + 1);
	size_t off = 5;
	size_t dl = b[off++];
	if (dl > SECHO_QUIC_CID_MAX || off + dl + 1 > len) /* RFC 8999 allows 255: not ours */
		return -EINVAL;
	h->dcid_len = (uint8_t)dl;
	memcpy(h->dcid, b + off, dl);
	off += dl;
	size_t sl = b[off++];
	if (sl > SECHO_QUIC_CID_MAX || off + sl > len)
		return -EINVAL;
	h->scid_len = (uint8_t)sl;
	memcpy(h->scid, b + off, sl);
	off += sl;

	const struct quic_version *qv = version_find(h->version);
	if (!qv) {
		h->pkt_len = (uint32_t)len; /* unknown layout: the rest of the datagram */
		return -ENOTSUP;
	}
	/* the fixed bit (RFC 9000 17.2) is not checked: a peer that advertised
	 * grease_quic_bit gets packets with it clear (RFC 9287; ngtcp2 does this) */
	unsigned bits = (b[0] >> 4) & 3;
	for (uint8_t t = 0; t < 4; t++)
		if (qv->type_bits[t] == bits)
			h->type = t;
	if (h->type == SECHO_QUIC_RETRY) {
		h->pkt_len = (uint32_t)len; /* token and integrity tag fill the datagram */
		return 0;
	}
	size_t n;
	if (h->type == SECHO_QUIC_INITIAL) {
		n = secho_quic_varint(b + off, len - off, &h->token_len);
		if (n == 0 || h->token_len > len - off - n)
			return -EINVAL;
		off += n;
		h->token_off = (uint32_t)off;
		off += (size_t)h->token_len;
	}
	n = secho_quic_varint(b + off, len - off, &h->length);
	if (n == 0 || h->length > len - off - n)
		return -EINVAL;
	off += n;
	h->pn_off = (uint32_t)off;
	h->pkt_len = (uint32_t)(off + h->length);
	return 0;
}

/* ---- keys (RFC 9001 5.1-5.2; RFC 8446 7.1 HKDF-Expand-Label) ---- */

/*
 * HKDF with SHA-256 (RFC 5869) from nettle. It was OpenSSL 3's EVP_KDF "HKDF": each
 * derivation there allocates an HMAC context and fetches the digest by name under the
 * library's store locks (5 derivations a connection: a tenth of a run with --features quic
 * on light traffic with payloads). nettle's HMAC context is a plain struct on the stack; a
 * digest leaves it keyed for the next message, so the three labels under one secret share
 * one key setup.
 */
static void hkdf_expand_label(struct hmac_sha256_ctx *c, const char *label, uint8_t *out,
                              size_t len)
{
	uint8_t info[2 + 1 + 6 + 32 + 1];
	size_t ll = strlen(label), n = 0; /* labels: this file's constants, under 32 bytes */
	info[n++] = 0;
	info[n++] = (uint8_t)len;
	info[n++] = (uint8_t)(6 + ll);
	memcpy(info + n, "tls13 ", 6);
	n += 6;
	memcpy(info + n, label, ll);
	n += ll;
	info[n++] = 0; /* empty context */
	hkdf_expand(c, (nettle_hash_update_func *)hmac_sha256_update,
	            (nettle_hash_digest_func *)hmac_sha256_digest, SHA256_DIGEST_SIZE, n, info, len,
	            out);
}

int secho_quic_initial_keys(uint32_t version, const uint8_t *dcid, size_t dcid_len, int server,
                            struct secho_quic_keys *k)
{
	const struct quic_version *qv = version_find(version);
	if (!qv)
		return -ENOTSUP;
	uint8_t initial[SHA256_DIGEST_SIZE], secret[SHA256_DIGEST_SIZE];
	struct hmac_sha256_ctx c;
	hmac_sha256_set_key(&c, sizeof(qv->salt), qv->salt);
	hkdf_extract(&c, (nettle_hash_update_func *)hmac_sha256_update,
	             (nettle_hash_digest_func *)hmac_sha256_digest, SHA256_DIGEST_SIZE, dcid_len,
	             dcid, initial);
	hmac_sha256_set_key(&c, sizeof(initial), initial);
	hkdf_expand_label(&c, server ? "server in" : "client in", secret, sizeof(secret));
	hmac_sha256_set_key(&c, sizeof(secret), secret);
	hkdf_expand_label(&c, qv->label->key, k->key, sizeof(k->key));
	hkdf_expand_label(&c, qv->label->iv, k->iv, sizeof(k->iv));
	hkdf_expand_label(&c, qv->label->hp, k->hp, sizeof(k->hp));
	/* derivable by anyone who sees the packet (RFC 9001 5.2), wiped all the same */
	secho_wipe(&c, sizeof(c));
	secho_wipe(initial, sizeof(initial));
	secho_wipe(secret, sizeof(secret));
	return 0;
}

/* ---- packet protection (RFC 9001 5.3, 5.4; RFC 9000 A.3) ---- */

static uint64_t pn_decode(uint64_t largest, int have_largest, uint64_t truncated, unsigned bits)
{
	uint64_t expected = have_largest ? largest + 1 : 0;
	uint64_t win = (uint64_t)1 << bits, hwin = win / 2, mask = win - 1;
	uint64_t cand = (expected & ~mask) | truncated;
	if (cand + hwin <= expected && cand < ((uint64_t)1 << 62) - win)
		return cand + win;
	if (cand > expected + hwin && cand >= win)
		return cand - win;
	return cand;
}

int secho_quic_open_initial(const struct secho_quic_keys *k, const uint8_t *pkt,
                            const struct secho_quic_hdr *h, uint64_t largest_pn, int have_largest,
                            uint8_t *out, size_t cap, size_t *out_len, uint64_t *pn)
{
	/* the sample starts 4 bytes after the packet number's start (RFC 9001 5.4.2); the
	 * shortest packet number plus a tag must fit too */
	if (h->length < 4 + 16)
		return -EINVAL;
	const uint8_t *sample = pkt + h->pn_off + 4;
	uint8_t mask[16];
	secho_aes_key hp;
	if (secho_aes_key_init(&hp, k->hp, sizeof(k->hp), SECHO_IMPL_AUTO) != SECHO_OK)
		return -EIO;
	int rc = secho_ecb_encrypt(&hp, mask, sample, 16);
	secho_aes_key_wipe(&hp);
	if (rc != SECHO_OK)
		return -EIO;

	uint8_t first = pkt[0] ^ (mask[0] & 0x0f); /* long header: 4 bits masked */
	size_t pn_len = (size_t)(first & 3) + 1;
	uint8_t pnb[4];
	uint64_t trunc = 0;
	for (size_t i = 0; i < pn_len; i++) {
		pnb[i] = pkt[h->pn_off + i] ^ mask[1 + i];
		trunc = trunc << 8 | pnb[i];
	}
	size_t body = (size_t)h->length - pn_len; /* ciphertext + tag */
	if (body < SECHO_GCM_TAG_LEN)
		return -EINVAL;
	size_t ct_len = body - SECHO_GCM_TAG_LEN;
	if (ct_len > cap)
		return -EMSGSIZE;
	*pn = pn_decode(largest_pn, have_largest, trunc, (unsigned)(8 * pn_len));

	uint8_t nonce[12];
	memcpy(nonce, k->iv, sizeof(nonce));
	for (size_t i = 0; i < 8; i++)
		nonce[11 - i] ^= (uint8_t)(*pn >> (8 * i));

	/* AAD: the header with its protection removed, read in three pieces so that no
	 * copy of a long token is needed */
	secho_gcm_key gk;
	secho_gcm_ctx c;
	const uint8_t *ct = pkt + h->pn_off + pn_len;
	rc = secho_gcm_key_init(&gk, k->key, sizeof(k->key), SECHO_IMPL_AUTO);
	if (rc == SECHO_OK)
		rc = secho_gcm_init(&c, &gk, nonce, sizeof(nonce));
	if (rc == SECHO_OK)
		rc = secho_gcm_aad(&c, &first, 1);
	if (rc == SECHO_OK)
		rc = secho_gcm_aad(&c, pkt + 1, h->pn_off - 1);
	if (rc == SECHO_OK)
		rc = secho_gcm_aad(&c, pnb, pn_len);
	if (rc == SECHO_OK)
		rc = secho_gcm_decrypt_update(&c, out, ct, ct_len);
	if (rc == SECHO_OK)
		rc = secho_gcm_verify(&c, ct + ct_len, SECHO_GCM_TAG_LEN);
	secho_gcm_ctx_wipe(&c);
	secho_gcm_key_wipe(&gk);
	if (rc != SECHO_OK) {
		memset(out, 0, ct_len); /* the streaming decrypt wrote it before the tag check */
		return rc == SECHO_EAUTH ? -EBADMSG : -EIO;
	}
	*out_len = ct_len;
	return 0;
}

/* ---- CRYPTO reassembly ---- */

int secho_quic_crypto_add(struct secho_quic_crypto *r, uint64_t off, const uint8_t *data,
                          size_t len)
{
	if (len == 0)
		return 0;
	if (off >= SECHO_QUIC_CH_MAX) {
		r->truncated = 1;
		return 0;
	}
	size_t a = (size_t)off, b = a + len;
	if (len > SECHO_QUIC_CH_MAX - a) {
		r->truncated = 1;
		b = SECHO_QUIC_CH_MAX;
	}
	/* merge [a, b) with every range it touches; the rest stay sorted around it */
	uint16_t ns[SECHO_QUIC_RANGES + 1], ne[SECHO_QUIC_RANGES + 1];
	size_t n = 0, na = a, nb = b;
	int placed = 0;
	for (size_t i = 0; i < r->nranges; i++) {
		if (r->end[i] < a) {
			ns[n] = r->start[i], ne[n++] = r->end[i];
		} else if (r->start[i] > b) {
			if (!placed)
				ns[n] = (uint16_t)na, ne[n++] = (uint16_t)nb, placed = 1;
			ns[n] = r->start[i], ne[n++] = r->end[i];
		} else {
			na = r->start[i] < na ? r->start[i] : na;
			nb = r->end[i] > nb ? r->end[i] : nb;
		}
	}
	if (!placed)
		ns[n] = (uint16_t)na, ne[n++] = (uint16_t)nb;
	if (n > SECHO_QUIC_RANGES) {
		if (r->dropped < UINT16_MAX)
			r->dropped++;
		return -ENOSPC;
	}
	memcpy(r->buf + a, data, b - a);
	memcpy(r->start, ns, n * sizeof(ns[0]));
	memcpy(r->end, ne, n * sizeof(ne[0]));
	r->nranges = (uint8_t)n;
	return 0;
}

size_t secho_quic_crypto_prefix(const struct secho_quic_crypto *r)
{
	return r->nranges && r->start[0] == 0 ? r->end[0] : 0;
}

/* ---- frames (RFC 9000 19; 17.2.2: what an Initial may carry) ---- */

static void sat16(uint16_t *c)
{
	if (*c < UINT16_MAX)
		(*c)++;
}

int secho_quic_frames(struct secho_feat_quic *s, const uint8_t *pt, size_t len)
{
	size_t off = 0;
	while (off < len) {
		uint64_t type, a, b, c;
		size_t n = secho_quic_varint(pt + off, len - off, &type);
		if (n == 0)
			goto bad;
		off += n;
		switch (type) {
		case 0x00: /* PADDING: a client's Initial is padded to 1,200 bytes, so the run of
		            * zeros is most of many packets: passed over eight bytes at a time */
			while (len - off >= 8) {
				uint64_t w;
				memcpy(&w, pt + off, 8);
				if (w)
					break;
				off += 8;
			}
			while (off < len && pt[off] == 0)
				off++;
			break;
		case 0x01: /* PING */
			break;
		case 0x02: /* ACK */
		case 0x03: /* ACK with ECN counts */
		{
			uint64_t count = 0;
			/* largest acknowledged, delay, range count, first range */
			for (int i = 0; i < 4; i++) {
				n = secho_quic_varint(pt + off, len - off, i == 2 ? &count : &a);
				if (n == 0)
					goto bad;
				off += n;
			}
			/* each range is two varints of at least one byte each: the bytes left
			 * bound the loop whatever count says */
			if (count > (len - off) / 2)
				goto bad;
			for (uint64_t i = 0; i < 2 * count + (type == 0x03 ? 3 : 0); i++) {
				n = secho_quic_varint(pt + off, len - off, &a);
				if (n == 0)
					goto bad;
				off += n;
			}
			break;
		}
		case 0x06: /* CRYPTO: offset, length, data */
			n = secho_quic_varint(pt + off, len - off, &a);
			if (n == 0)
				goto bad;
			off += n;
			n = secho_quic_varint(pt + off, len - off, &b);
			if (n == 0 || b > len - off - n)
				goto bad;
			off += n;
			(void)secho_quic_crypto_add(&s->crypto, a, pt + off,
			                            (size_t)b); /* counted */
			off += (size_t)b;
			break;
		case 0x1c: /* CONNECTION_CLOSE (transport): code, frame type, reason */
			n = secho_quic_varint(pt + off, len - off, &a);
			if (n == 0)
				goto bad;
			off += n;
			n = secho_quic_varint(pt + off, len - off, &b);
			if (n == 0)
				goto bad;
			off += n;
			n = secho_quic_varint(pt + off, len - off, &c);
			if (n == 0 || c > len - off - n)
				goto bad;
			off += n + (size_t)c;
			s->close_code = a;
			s->close_seen = 1;
			break;
		default:
			sat16(&s->frames_other);
			return 0;
		}
	}
	return 0;
bad:
	sat16(&s->malformed);
	return -EINVAL;
}

/* ---- the per-flow state ---- */

/* Copy span to dst[0..cap): the bytes kept; *flags |= cut when it did not fit. */
static uint8_t keep(char *dst, size_t cap, const uint8_t *p, size_t len, uint16_t *flags,
                    uint16_t cut)
{
	if (len > cap) {
		len = cap;
		*flags |= cut;
	}
	memcpy(dst, p, len);
	return (uint8_t)len;
}

/* Google's user agent: transport parameter 0x3129 (RFC 9000 18: id and length varints) in
 * the quic_transport_parameters extension's body tp[0..len). */
static void tp_user_agent(struct secho_feat_quic *s, const uint8_t *tp, size_t len)
{
	size_t off = 0;
	while (off < len) {
		uint64_t id, vl;
		size_t n = secho_quic_varint(tp + off, len - off, &id);
		size_t m = n ? secho_quic_varint(tp + off + n, len - off - n, &vl) : 0;
		if (n == 0 || m == 0 || vl > len - off - n - m) {
			s->hello |= SECHO_QUIC_H_TP_BAD;
			return;
		}
		off += n + m;
		if (id == 0x3129 && !(s->hello & SECHO_QUIC_H_UA)) {
			s->hello |= SECHO_QUIC_H_UA;
			s->ua_len = keep(s->ua, sizeof(s->ua), tp + off, (size_t)vl, &s->hello,
			                 SECHO_QUIC_H_UA_CUT);
		}
		off += (size_t)vl;
	}
}

/* The reassembled ClientHello through the tls feature set's parser (tls.h): SNI, the
 * client's ALPN list, the user agent, JA4 with the 'q' prefix, the extension list. */
static void ch_fields(struct secho_feat_quic *s)
{
	struct secho_tls_hello h;
	if (s->ch_truncated || secho_tls_client_hello_parse(s->crypto.buf, s->ch_len, &h) != 0) {
		s->hello |= SECHO_QUIC_H_BAD;
		return;
	}
	s->hello |= SECHO_QUIC_H_PARSED;
	if (h.has_sni) {
		s->hello |= SECHO_QUIC_H_SNI;
		s->sni_len = keep(s->sni, sizeof(s->sni), h.sni.p, h.sni.len, &s->hello,
		                  SECHO_QUIC_H_SNI_CUT);
	}
	if (h.has_alpn) {
		size_t o = 0;
		s->hello |= SECHO_QUIC_H_ALPN;
		for (size_t i = 0; i < h.n_alpn; i++) {
			size_t need = (i ? 1 : 0) + h.alpn[i].len;
			if (o + need > sizeof(s->alpn)) {
				s->hello |= SECHO_QUIC_H_ALPN_CUT;
				break;
			}
			if (i)
				s->alpn[o++] = ',';
			memcpy(s->alpn + o, h.alpn[i].p, h.alpn[i].len);
			o += h.alpn[i].len;
		}
		s->alpn_len = (uint8_t)o;
	}
	if (h.has_quic_tp)
		tp_user_agent(s, h.quic_tp.p, h.quic_tp.len);
	char ja4[SECHO_TLS_JA4_LEN + 1];
	if (secho_tls_ja4(&h, 'q', ja4) == 0) {
		memcpy(s->ja4, ja4, SECHO_TLS_JA4_LEN);
		s->hello |= SECHO_QUIC_H_JA4;
	}
	size_t ne = h.n_exts;
	if (ne > SECHO_QUIC_EXTS || h.overflow) {
		s->hello |= SECHO_QUIC_H_EXT_CUT;
		ne = ne > SECHO_QUIC_EXTS ? SECHO_QUIC_EXTS : ne;
	}
	for (size_t i = 0; i < ne; i++) {
		s->ext_type[i] = h.ext_type[i];
		s->ext_len[i] = h.ext_len[i];
	}
	s->n_ext = (uint8_t)ne;
}

/* The ClientHello is whole when the handshake message at offset 0 is: type 1, its 24-bit
 * length (RFC 8446 4). A first message of another type is not a ClientHello: done. */
static void ch_check(struct secho_feat_quic *s)
{
	size_t have = secho_quic_crypto_prefix(&s->crypto);
	const uint8_t *m = s->crypto.buf;
	if (s->ch_done || have < 4)
		return;
	if (m[0] != 1) {
		s->done = 1;
		return;
	}
	size_t want = 4 + ((size_t)m[1] << 16 | (size_t)m[2] << 8 | m[3]);
	if (want > SECHO_QUIC_CH_MAX) {
		if (have < SECHO_QUIC_CH_MAX)
			return;
		s->ch_truncated = 1;
		want = SECHO_QUIC_CH_MAX;
	}
	if (have >= want) {
		s->ch_len = (uint32_t)want;
		s->ch_done = 1;
		ch_fields(s);
	}
}

static int keys_for(struct secho_feat_quic *s, uint32_t version, const uint8_t *dcid, size_t len)
{
	if (s->keys_set && s->keys_version == version && s->keys_dcid_len == len &&
	    memcmp(s->keys_dcid, dcid, len) == 0)
		return 0;
	s->keys_set = 0;
	int rc = secho_quic_initial_keys(version, dcid, len, 0, &s->keys);
	if (rc)
		return rc;
	memcpy(s->keys_dcid, dcid, len);
	s->keys_dcid_len = (uint8_t)len;
	s->keys_version = version;
	s->keys_set = 1;
	return 0;
}

/* A client Initial: keys from the original DCID (or, after a Retry, this packet's). */
static void client_initial(struct secho_feat_quic *s, const uint8_t *pkt,
                           const struct secho_quic_hdr *h)
{
	uint8_t pt[SECHO_QUIC_PT_MAX];
	size_t pt_len = 0;
	uint64_t pn = 0;
	int rc = -EBADMSG;
	const uint8_t *dcid = s->keys_set ? s->keys_dcid : h->dcid;
	size_t dlen = s->keys_set ? s->keys_dcid_len : h->dcid_len;
	if (keys_for(s, h->version, dcid, dlen) == 0)
		rc = secho_quic_open_initial(&s->keys, pkt, h, s->largest_pn, s->initials > 0, pt,
		                             sizeof(pt), &pt_len, &pn);
	/* this packet's own DCID (a Retry's SCID): adopted only when it opens the packet, so
	 * a forged Initial cannot push the connection's keys out */
	struct secho_quic_keys k2;
	if (rc == -EBADMSG && (h->dcid_len != dlen || memcmp(h->dcid, dcid, dlen) != 0) &&
	    secho_quic_initial_keys(h->version, h->dcid, h->dcid_len, 0, &k2) == 0) {
		rc = secho_quic_open_initial(&k2, pkt, h, s->largest_pn, s->initials > 0, pt,
		                             sizeof(pt), &pt_len, &pn);
		if (rc == 0) {
			s->keys = k2;
			memcpy(s->keys_dcid, h->dcid, h->dcid_len);
			s->keys_dcid_len = h->dcid_len;
			s->keys_version = h->version;
			s->keys_set = 1;
		}
	}
	if (rc != 0) {
		sat16(&s->initials_failed);
		return;
	}
	if (s->initials == 0 || pn > s->largest_pn)
		s->largest_pn = pn;
	sat16(&s->initials);
	(void)secho_quic_frames(s, pt, pt_len); /* counted in s */
	ch_check(s);
}

void secho_feat_quic_init(struct secho_feat_quic *s)
{
	struct secho_quic_crypto *r = &s->crypto;
	memset(r->start, 0, sizeof(r->start));
	memset(r->end, 0, sizeof(r->end));
	r->nranges = 0;
	r->truncated = 0;
	r->dropped = 0;
	/* keys_dcid_len .. retry_scid_len */
	memset(&s->keys_dcid_len, 0,
	       offsetof(struct secho_feat_quic, occid) -
	               offsetof(struct secho_feat_quic, keys_dcid_len));
	/* keys_version .. n_ext */
	memset(&s->keys_version, 0,
	       offsetof(struct secho_feat_quic, sni) -
	               offsetof(struct secho_feat_quic, keys_version));
}

void secho_feat_quic_packet(struct secho_feat_quic *s, const struct secho_feat_pkt *p)
{
	if (s->done)
		return;
	if (p->proto != 17 || ++s->dgrams > SECHO_QUIC_MAX_DGRAMS) {
		s->done = 1;
		return;
	}
	const uint8_t *d = p->payload;
	size_t len = p->len, off = 0;
	for (int i = 0; i < SECHO_QUIC_MAX_COALESCED && off < len; i++) {
		struct secho_quic_hdr h;
		const uint8_t *b = d + off;
		if (!(b[0] & 0x80)) {
			if (!s->quic)
				s->done = 1; /* a flow that does not start with a long header */
			break;               /* a short header, or padding after the last packet */
		}
		int rc = secho_quic_parse_long(b, len - off, &h);
		if (rc == -ENOTSUP) {
			if (!s->quic)
				s->done = 1; /* a flow that does not start as QUIC we know */
			break;
		}
		if (rc != 0) {
			/* a Length past the captured bytes of a snapped datagram is the capture's
			 * doing, not the sender's */
			sat16(p->len < p->wire_len ? &s->cut : &s->malformed);
			break;
		}
		int from_client;
		if (!s->quic) {
			if (h.type != SECHO_QUIC_INITIAL) {
				s->done = 1; /* a connection starts with a client Initial */
				return;
			}
			s->quic = 1;
			s->client_dir = p->dir;
			s->client_version = h.version;
			s->token_len = h.token_len;
			s->server_port = p->dport;
			memcpy(s->oscid, h.dcid, h.dcid_len);
			s->oscid_len = h.dcid_len;
			memcpy(s->occid, h.scid, h.scid_len);
			s->occid_len = h.scid_len;
		}
		from_client = p->dir == s->client_dir;
		if (h.type != SECHO_QUIC_0RTT)
			s->version = h.version;
		else if (s->zero_rtt < UINT8_MAX)
			s->zero_rtt++;
		if (!from_client && h.type == SECHO_QUIC_RETRY) {
			memcpy(s->retry_scid, h.scid, h.scid_len);
			s->retry_scid_len = h.scid_len;
		} else if (!from_client && !s->server_seen) {
			memcpy(s->scid, h.scid, h.scid_len);
			s->scid_len = h.scid_len;
			s->server_seen = 1;
		}
		if (from_client && h.type == SECHO_QUIC_INITIAL && !s->ch_done) {
			if (h.pkt_len > len - off)
				break; /* parse_long said otherwise: unreachable */
			client_initial(s, b, &h);
		}
		off += h.pkt_len;
	}
	if (s->ch_done && s->server_seen)
		s->done = 1;
}

const uint8_t *secho_feat_quic_client_hello(const struct secho_feat_quic *s, size_t *len)
{
	if (!s->ch_done) {
		*len = 0;
		return NULL;
	}
	*len = s->ch_len;
	return s->crypto.buf;
}

/* ---- JSON ---- */

int secho_feat_quic_json(const struct secho_feat_quic *s, char *buf, size_t cap)
{
	struct secho_fjson j;
	secho_fjson_init_bare(&j, buf, cap);
	if (!s->quic)
		return secho_fjson_end_cstr(&j);
	secho_fjson_mem_u(&j, "quic_version", s->version);
	secho_fjson_mem_u(&j, "quic_client_version", s->client_version);
	secho_fjson_mem_u(&j, "quic_token_length", s->token_len);
	secho_fjson_mem_hex(&j, "quic_occid", s->occid, s->occid_len);
	secho_fjson_mem_hex(&j, "quic_oscid", s->oscid, s->oscid_len);
	if (s->server_seen)
		secho_fjson_mem_hex(&j, "quic_scid", s->scid, s->scid_len);
	if (s->retry_scid_len)
		secho_fjson_mem_hex(&j, "quic_retry_scid", s->retry_scid, s->retry_scid_len);
	secho_fjson_mem_u(&j, "quic_zero_rtt", s->zero_rtt);
	secho_fjson_mem_u(&j, "quic_server_port", s->server_port);
	if (s->hello & SECHO_QUIC_H_SNI)
		secho_fjson_mem_s(&j, "quic_sni", s->sni, s->sni_len);
	if (s->hello & SECHO_QUIC_H_SNI_CUT)
		secho_fjson_mem_u(&j, "quic_sni_cut", 1);
	if (s->hello & SECHO_QUIC_H_ALPN)
		secho_fjson_mem_s(&j, "quic_alpn", s->alpn, s->alpn_len);
	if (s->hello & SECHO_QUIC_H_ALPN_CUT)
		secho_fjson_mem_u(&j, "quic_alpn_cut", 1);
	if (s->hello & SECHO_QUIC_H_UA)
		secho_fjson_mem_s(&j, "quic_user_agent", s->ua, s->ua_len);
	if (s->hello & SECHO_QUIC_H_UA_CUT)
		secho_fjson_mem_u(&j, "quic_user_agent_cut", 1);
	if (s->hello & SECHO_QUIC_H_JA4)
		secho_fjson_mem_s(&j, "quic_ja4", s->ja4, SECHO_TLS_JA4_LEN);
	if (s->hello & SECHO_QUIC_H_PARSED) {
		secho_fjson_mem_list16(&j, "quic_tls_ext_type", s->ext_type, s->n_ext);
		secho_fjson_mem_list16(&j, "quic_tls_ext_len", s->ext_len, s->n_ext);
	}
	if (s->hello & SECHO_QUIC_H_EXT_CUT)
		secho_fjson_mem_u(&j, "quic_tls_ext_cut", 1);
	secho_fjson_mem_u(&j, "quic_ch_parsed", (s->hello & SECHO_QUIC_H_PARSED) ? 1u : 0u);
	if (s->ch_done)
		secho_fjson_mem_u(&j, "quic_ch_length", s->ch_len);
	if (s->ch_truncated)
		secho_fjson_mem_u(&j, "quic_ch_truncated", 1);
	secho_fjson_mem_u(&j, "quic_initials", s->initials);
	secho_fjson_mem_u(&j, "quic_initials_failed", s->initials_failed);
	if (s->close_seen)
		secho_fjson_mem_u(&j, "quic_close_code", s->close_code);
	return secho_fjson_end_cstr(&j);
}
