/*
 * src/flow/feature/tls.h - the tls feature set: what a TLS handshake says in the clear
 * (ClientHello, ServerHello, the TLS 1.2 server Certificate), the JA3 and JA4 client
 * fingerprints, and the per-flow state that reassembles the handshake from TCP segments
 * (feature.h says the shape; docs/FLOW.md, "Features: tls").
 *
 * Two layers:
 *   pure parsers over one handshake message (type byte, 24-bit length, body; RFC 8446 4):
 *     secho_tls_client_hello_parse, secho_tls_server_hello_parse,
 *     secho_tls_certificate_first, secho_tls_cert_parse; and the fingerprints over a parsed
 *     ClientHello, secho_tls_ja3 and secho_tls_ja4. QUIC's CRYPTO frames carry the same
 *     ClientHello without the record layer and call the ClientHello parser directly.
 *   the per-flow state (struct secho_feat_tls) fed TCP payloads by secho_feat_tls_packet.
 *
 * Exported fields (JSON name as FlowTest's conf/fields.yml where it has one; IPFIX element
 * PEN/ID as ipfixprobe's tls plugin exports it, encoded by src/flow/export/ipfix_feat.c;
 * "-" where ipfixprobe has none: JSON-only):
 *
 *   JSON name                 IPFIX            type      bound / meaning
 *   tls_sni                   8057/808         string    server_name host_name, cut at
 *                                                        SECHO_FEAT_TLS_SNI bytes (tls_sni_cut)
 *   tls_client_version        39499/340 (*)    uint16    highest non-GREASE supported_versions
 *                                                        entry, else legacy_version
 *   tls_server_version        39499/333 (*)    uint16    ServerHello supported_versions, else
 *                                                        its legacy_version
 *   tls_cipher_suite          39499/336        uint16    the ServerHello's cipher suite
 *   tls_alpn                  39499/337        string    the ServerHello's ALPN protocol, cut
 *                                                        at SECHO_FEAT_TLS_ALPN bytes
 *   tls_alpn_offer            -                string    the ClientHello's ALPN list, comma
 *                                                        separated, cut at SECHO_FEAT_TLS_ALPN
 *   tls_ja3                   39499/357        16 bytes  MD5 of the JA3 string (JSON: hex)
 *   tls_ja4                   8057/809         string    36 characters (FoxIO JA4)
 *   tls_ext_type              0/291 of 8057/802 uint16[] the ClientHello's extension types in
 *                                                        order, GREASE included, first
 *                                                        SECHO_FEAT_TLS_EXTS (tls_ext_cut)
 *   tls_ext_len               0/291 of 8057/803 uint16[] their lengths, same bound
 *   tls_issuer_cn             39499/349        string    first certificate's issuer CN, cut at
 *                                                        SECHO_FEAT_TLS_CN (tls_cn_cut)
 *   tls_subject_cn            39499/350        string    its subject CN, same bound
 *   tls_validity_not_before   39499/352        int64     seconds since the epoch (UTC)
 *   tls_validity_not_after    39499/353        int64     seconds since the epoch (UTC)
 *   tls_public_key_alg        39499/355 (+)    string    subjectPublicKeyInfo algorithm's
 *                                                        OID, dotted (FlowTest's), cut at
 *                                                        SECHO_FEAT_TLS_PKA bytes
 *   (*) ipfixprobe exports one TLS_VERSION (39499/333): the client's legacy_version replaced
 *   by the server's supported_versions when it has one; secho keeps both sides apart (JSON)
 *   and exports the client's as Flowmon's tlsClientVersion (39499/340) beside it.
 *   (+) IPFIX: the OID's OpenSSL NID (unsigned16, as Flowmon's probe; secho_tls_oid_nid).
 *
 * Counted, never guessed: tls_gap (a direction stopped at a missing or out-of-order segment),
 * tls_snapped (captured bytes shorter than the wire's), tls_malformed (a message that does
 * not parse; a stream whose first record header is not TLS's is only stopped, not counted:
 * a flow that is not TLS exports nothing), tls_oversize (a hello whose kept bytes exceed
 * the reassembly buffer), tls_overflow (a ClientHello list longer than the parser's bounds: no
 * fingerprints).
 */
#ifndef SECHO_FLOW_FEATURE_TLS_H
#define SECHO_FLOW_FEATURE_TLS_H

#include <stddef.h>
#include <stdint.h>

#include "feature.h"

/* Handshake message types (RFC 8446 4, RFC 5246 7.4). */
#define SECHO_TLS_HS_CLIENT_HELLO 1
#define SECHO_TLS_HS_SERVER_HELLO 2
#define SECHO_TLS_HS_CERTIFICATE  11

/* Extension types this module reads (IANA TLS ExtensionType Values). */
#define SECHO_TLS_EXT_SERVER_NAME        0x0000
#define SECHO_TLS_EXT_SUPPORTED_GROUPS   0x000a
#define SECHO_TLS_EXT_EC_POINT_FORMATS   0x000b
#define SECHO_TLS_EXT_SIGNATURE_ALGS     0x000d
#define SECHO_TLS_EXT_ALPN               0x0010
#define SECHO_TLS_EXT_SUPPORTED_VERSIONS 0x002b
#define SECHO_TLS_EXT_QUIC_TP            0x0039 /* RFC 9001 8.2 */
#define SECHO_TLS_EXT_QUIC_TP_DRAFT      0xffa5 /* drafts 13 to 32 */

/* GREASE (RFC 8701 2): 0x0a0a, 0x1a1a, ... 0xfafa. */
static inline int secho_tls_is_grease(uint16_t v)
{
	return (v & 0x0f0f) == 0x0a0a && (v >> 8) == (v & 0xff);
}

/* Bounds of the ClientHello parser's lists: longer lists set overflow (the lists hold their
 * first entries; the fingerprints refuse to be computed from a cut list). */
#define SECHO_TLS_MAX_CIPHERS  128
#define SECHO_TLS_MAX_EXTS     64
#define SECHO_TLS_MAX_GROUPS   64
#define SECHO_TLS_MAX_POINTFMT 16
#define SECHO_TLS_MAX_SIGALGS  64
#define SECHO_TLS_MAX_VERSIONS 16
#define SECHO_TLS_MAX_ALPN     16

/* A view into the message the parser was given: valid while that message is. */
struct secho_tls_span {
	const uint8_t *p;
	uint16_t len;
};

/* A parsed ClientHello (RFC 8446 4.1.2; RFC 5246 7.4.1.2). Lists in wire order, GREASE
 * included; the has_* flags say an extension was present (even when empty). */
struct secho_tls_hello {
	uint16_t legacy_version;
	uint16_t version; /* highest non-GREASE supported_versions entry, else legacy_version */
	uint16_t n_ciphers, n_exts, n_groups, n_sigalgs;
	uint8_t n_pointfmt, n_versions, n_alpn;
	uint8_t has_sni, has_alpn, has_versions, has_quic_tp;
	uint8_t overflow; /* some list was longer than its bound */
	uint16_t ciphers[SECHO_TLS_MAX_CIPHERS];
	uint16_t ext_type[SECHO_TLS_MAX_EXTS];
	uint16_t ext_len[SECHO_TLS_MAX_EXTS];
	uint16_t groups[SECHO_TLS_MAX_GROUPS];
	uint16_t sigalgs[SECHO_TLS_MAX_SIGALGS];
	uint16_t versions[SECHO_TLS_MAX_VERSIONS];
	uint8_t pointfmt[SECHO_TLS_MAX_POINTFMT];
	struct secho_tls_span sni;                      /* the first host_name entry */
	struct secho_tls_span alpn[SECHO_TLS_MAX_ALPN]; /* protocol names, in order */
	struct secho_tls_span quic_tp;                  /* extension 0x39 (or 0xffa5): raw body */
	uint16_t quic_tp_type;
};

/*
 * Parse a ClientHello handshake message msg[0..len): its 4-byte header (type 1, 24-bit
 * length) and body, as carried in TLS records or in QUIC CRYPTO frames (RFC 9001 4.1.3).
 * Bytes after the message are ignored. Returns 0, -EINVAL when msg is not a ClientHello or a
 * length inside it lies (reaches past its container), or -EAGAIN when msg holds less than
 * the header's length says. *out points into msg (spans) and is filled as far as parsed.
 */
int secho_tls_client_hello_parse(const uint8_t *msg, size_t len, struct secho_tls_hello *out);

/*
 * JA3 of a parsed ClientHello (the string tshark's tls.handshake.ja3_full shows:
 * legacy_version,ciphers,extensions,groups,point formats, decimal, '-' separated, GREASE
 * left out of the first three lists) into str[0..cap) with its NUL, and its MD5 into md5.
 * Returns the string's length, -ENOSPC when cap is too small, -EOVERFLOW when the hello's
 * lists were cut (h->overflow). MD5 and SHA-256 (JA4): nettle's.
 */
int secho_tls_ja3(const struct secho_tls_hello *h, char *str, size_t cap, uint8_t md5[16]);

#define SECHO_TLS_JA4_LEN 36 /* "t13d1516h2_8daaf6152771_e5627efa2ab1" */

/*
 * JA4 (FoxIO's specification, technical_details/JA4.md) of a parsed ClientHello into
 * out[0..SECHO_TLS_JA4_LEN] with its NUL; proto is 't' (TLS over TCP), 'q' (QUIC) or 'd'
 * (DTLS). Returns 0, -EOVERFLOW when the hello's lists were cut (-EIO when a list would not
 * fit its buffer, which is sized for the longest).
 */
int secho_tls_ja4(const struct secho_tls_hello *h, char proto, char out[SECHO_TLS_JA4_LEN + 1]);

/* A parsed ServerHello (RFC 8446 4.1.3). */
struct secho_tls_server_hello {
	uint16_t legacy_version;
	uint16_t version; /* supported_versions' selected version, else legacy_version */
	uint16_t cipher_suite;
	uint8_t has_alpn, hrr; /* hrr: a HelloRetryRequest (RFC 8446 4.1.3's special random) */
	struct secho_tls_span alpn;
};

/* Parse a ServerHello message (header and body) msg[0..len). Returns 0, -EINVAL or -EAGAIN
 * as secho_tls_client_hello_parse. */
int secho_tls_server_hello_parse(const uint8_t *msg, size_t len,
                                 struct secho_tls_server_hello *out);

/*
 * The first certificate of a TLS 1.2 (or older) Certificate message (RFC 5246 7.4.2) of
 * which msg[0..len) holds the first len bytes (header included; the message may go on).
 * Sets *der to the certificate's DER and *der_len to how much of it msg holds (maybe less
 * than the whole). Returns 0 or -EINVAL (not a Certificate, or lengths that lie).
 */
int secho_tls_certificate_first(const uint8_t *msg, size_t len, const uint8_t **der,
                                size_t *der_len);

/* What is read from an X.509 certificate (RFC 5280 4.1). */
struct secho_tls_cert {
	struct secho_tls_span issuer_cn, subject_cn; /* the first commonName of each */
	struct secho_tls_span pk_alg;                /* the algorithm's OID contents */
	int64_t not_before, not_after;               /* seconds since the epoch */
	uint8_t has_issuer, has_validity, has_subject, has_pk_alg;
};

/*
 * Walk der[0..len) (a certificate, or the first len bytes of one) as far as the
 * subjectPublicKeyInfo's algorithm, without allocating: a bounded DER walk (definite lengths
 * only, nesting fixed by RFC 5280's structure). Returns 0 when the walk reached the
 * algorithm, -EAGAIN when der ended first (what was reached is filled in), -EINVAL when the
 * DER is not a certificate.
 */
int secho_tls_cert_parse(const uint8_t *der, size_t len, struct secho_tls_cert *out);

/* An OID (contents octets) in its dotted form into buf, as FlowTest's tls_public_key_alg has
 * it ("1.2.840.113549.1.1.1"; X.690 8.19). Returns the length written (cut to cap - 1;
 * an arc past 2^63 ends the string). */
int secho_tls_oid_dotted(const uint8_t *oid, size_t len, char *buf, size_t cap);

/* The OpenSSL NID of a public key algorithm's OID (contents octets), as Flowmon's
 * tlsPublicKeyAlg (39499/355) carries it: rsaEncryption 6, RSASSA-PSS 912, id-ecPublicKey
 * 408, DSA 116, X25519 1034, X448 1035, ED25519 1087, ED448 1088 (<openssl/obj_mac.h>);
 * 0 (NID_undef) for any other OID. */
uint16_t secho_tls_oid_nid(const uint8_t *oid, size_t len);

/* ---- the per-flow state ---- */

#define SECHO_FEAT_TLS_SNI  64 /* bytes of server name kept */
#define SECHO_FEAT_TLS_ALPN 32 /* bytes of ALPN kept (server's choice; client's list) */
#define SECHO_FEAT_TLS_CN   64 /* bytes of each commonName kept */
#define SECHO_FEAT_TLS_PKA  24 /* bytes of the public key algorithm's name */
#define SECHO_FEAT_TLS_EXTS 30 /* extension types/lengths kept (ipfixprobe keeps 30) */
/*
 * The reassembly buffer: one handshake message at a time (the ClientHello is whole before
 * the server answers it, so both directions share it). A hello is kept compacted: the
 * contents of extensions no field reads (key shares, padding, tickets, ECH, ...) are left
 * out as they arrive (tls.c, hello_walk), so a post-quantum key share costs nothing and a
 * browser's hello needs some 400-700 bytes; a hello whose kept bytes exceed the buffer is
 * counted (tls_oversize). Of a Certificate message only its first bytes are kept: the
 * first certificate's fields sit in its first few hundred bytes.
 */
#define SECHO_FEAT_TLS_BUF 1024

/* One direction's record-stream position. */
struct secho_feat_tls_dir {
	uint32_t next_seq;  /* TCP sequence number of the next byte expected */
	uint32_t hs_left;   /* bytes of the current handshake message still to come */
	uint32_t hs_len;    /* its length (header excluded) */
	uint16_t rec_left;  /* bytes of the current record's body still to come */
	uint8_t state;      /* SECHO_FEAT_TLS_DIR_* */
	uint8_t rec_type;   /* the current record's content type */
	uint8_t rec_have;   /* bytes of the record header gathered */
	uint8_t rec_hdr[5]; /* type, version, length */
	uint8_t hs_have;    /* bytes of the handshake header gathered */
	uint8_t hs_hdr[4];  /* type, length */
	uint8_t records;    /* record headers accepted (saturating) */
	uint8_t pad[2];
};

#define SECHO_FEAT_TLS_DIR_IDLE 0 /* no payload yet */
#define SECHO_FEAT_TLS_DIR_RUN  1 /* following records */
#define SECHO_FEAT_TLS_DIR_DONE 2 /* has given all it will (or gave up: see counters) */
#define SECHO_FEAT_TLS_DIR_SYN  3 /* SYN seen, next_seq known, no payload yet */

/* flags */
#define SECHO_FEAT_TLS_F_CH       0x0001 /* ClientHello parsed */
#define SECHO_FEAT_TLS_F_SH       0x0002 /* ServerHello parsed */
#define SECHO_FEAT_TLS_F_CERT     0x0004 /* Certificate fields read */
#define SECHO_FEAT_TLS_F_SNI      0x0008 /* an SNI was present */
#define SECHO_FEAT_TLS_F_SNI_CUT  0x0010
#define SECHO_FEAT_TLS_F_ALPN_CUT 0x0020 /* either ALPN string cut */
#define SECHO_FEAT_TLS_F_CN_CUT   0x0040
#define SECHO_FEAT_TLS_F_EXT_CUT  0x0080 /* more than SECHO_FEAT_TLS_EXTS extensions */
#define SECHO_FEAT_TLS_F_JA3      0x0100 /* ja3 valid */
#define SECHO_FEAT_TLS_F_JA4      0x0200 /* ja4 valid */
#define SECHO_FEAT_TLS_F_VALIDITY 0x0400
#define SECHO_FEAT_TLS_F_SALPN    0x0800 /* the server chose an ALPN protocol */
#define SECHO_FEAT_TLS_F_DONE     0x8000 /* both directions done: stop feeding */

struct secho_feat_tls {
	uint16_t flags;
	uint16_t client_version, client_legacy_version, server_version, cipher_suite;
	uint8_t sni_len, alpn_len, alpn_offer_len, issuer_cn_len, subject_cn_len, pk_alg_len;
	uint8_t n_ext;
	/* counters (saturating) */
	uint8_t gap, snapped, malformed, oversize, overflow;
	uint8_t buf_owner; /* direction + 1 holding buf, 0 when free */
	uint16_t buf_len;
	/* the walk over the hello in buf (tls.c, hello_walk) */
	uint32_t m_next, m_ext_at, m_ext_total, m_cut, m_skip;
	uint8_t m_step;
	uint16_t pk_nid; /* the public key algorithm's OpenSSL NID (0: none, or not known) */
	int64_t not_before, not_after;
	uint8_t ja3[16];
	char ja4[SECHO_TLS_JA4_LEN];
	char sni[SECHO_FEAT_TLS_SNI];
	char alpn[SECHO_FEAT_TLS_ALPN];
	char alpn_offer[SECHO_FEAT_TLS_ALPN];
	char issuer_cn[SECHO_FEAT_TLS_CN];
	char subject_cn[SECHO_FEAT_TLS_CN];
	char pk_alg[SECHO_FEAT_TLS_PKA];
	uint16_t ext_type[SECHO_FEAT_TLS_EXTS];
	uint16_t ext_len[SECHO_FEAT_TLS_EXTS];
	struct secho_feat_tls_dir dir[2];
	/* last: the reassembly buffer, which no exporter reads (a done state may be kept
	 * without it: src/flow/feature/sets.h, "Done states") */
	uint8_t buf[SECHO_FEAT_TLS_BUF];
};

/* 592 bytes of fields and stream state, plus the reassembly buffer: 1,616 bytes a flow. */
#define SECHO_FEAT_TLS_SIZE (592 + SECHO_FEAT_TLS_BUF)
_Static_assert(sizeof(struct secho_feat_tls) == SECHO_FEAT_TLS_SIZE, "tls state size");

/* Whether the tls set wants packet p's flow: TCP (sets.h, "Live sets"). */
static inline int secho_feat_tls_wants(const struct secho_feat_pkt *p)
{
	return p->proto == 6;
}

/* Make s ready for a record: everything the parser and the exporters read before it is
 * written is zeroed (flags, versions, lengths, counters, the reassembly's positions); the
 * strings, the fingerprints, the extension lists and the reassembly buffer are not: each is
 * read only within its length or under the flag that says it was written. Can't fail. */
void secho_feat_tls_init(struct secho_feat_tls *s);

/* Feed one packet of the flow (struct secho_feat_pkt; TCP payloads in tcp_seq order per
 * direction; others are ignored). s starts as secho_feat_tls_init (or all zero) leaves it. Bounded
 * work (one pass over the payload plus at most one message parse per direction), no
 * allocation (the fingerprints' digests: nettle, contexts on the stack). */
void secho_feat_tls_packet(struct secho_feat_tls *s, const struct secho_feat_pkt *p);

static inline int secho_feat_tls_done(const struct secho_feat_tls *s)
{
	return (s->flags & SECHO_FEAT_TLS_F_DONE) != 0;
}

/* Write the fields seen as JSON members ("name":value, comma separated, no braces) into
 * buf[0..cap). Returns the bytes written (NUL not counted) or -ENOSPC. */
int secho_feat_tls_json(const struct secho_feat_tls *s, char *buf, size_t cap);

#endif
