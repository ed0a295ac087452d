/*
 * src/flow/feature/quic.h - the quic feature set: a QUIC flow's client Initial packets
 * decrypted, their CRYPTO frames reassembled into the ClientHello, and the long headers'
 * versions and connection IDs (issue 21; docs/FLOW.md "Features: quic").
 *
 * What is read (RFC 9000 17.2, RFC 9001 5, RFC 9369 3):
 *   - every long-header packet of a datagram (coalesced packets, at most
 *     SECHO_QUIC_MAX_COALESCED), in either direction: version, connection IDs, type;
 *   - the client's Initial packets of QUIC v1, v2 and draft-29: header protection removed
 *     (AES-128-ECB), payload opened (AES-128-GCM), both with secho's own AES library; the
 *     keys from the destination connection ID of the client's first Initial (or of a later
 *     one, after a Retry) by HKDF (nettle's hkdf_extract and hkdf_expand, SHA-256) with
 *     the version's salt and labels;
 *   - the frames in them: PADDING, PING, ACK, CRYPTO, CONNECTION_CLOSE (0x1c); any other frame
 *     type ends that packet's parse (counted: frames_other). CRYPTO data is placed at its
 *     offset in a fixed buffer of SECHO_QUIC_CH_MAX bytes, across packets and datagrams, in
 *     any order (clients send it out of order on purpose), until the TLS handshake message
 *     at offset 0 (a ClientHello, type 1) is whole or the buffer is full (ch_truncated).
 * A packet that does not decrypt (bad tag, keys of another connection ID, cut by the
 * capture) is counted in initials_failed and nothing of it is used. The server's packets are
 * not decrypted: their headers give the version chosen and the server's connection ID.
 *
 * Fields (JSON name; IPFIX element as ipfixprobe's quic plugin exports it, PEN 8057; type;
 * bound). The names follow ipfixprobe's (FlowTest's conf/fields.yml has no QUIC fields).
 *
 *   quic_version        8057/892  uint32  the version of the last long-header packet that
 *                                         is not 0-RTT (the server's, once it answered)
 *   quic_client_version 8057/893  uint32  the version of the client's first Initial
 *   quic_token_length   8057/894  uint64  the token length of the client's first Initial
 *   quic_occid          8057/895  bytes   the client's first Initial's source CID (<= 20)
 *   quic_oscid          8057/896  bytes   the client's first Initial's destination CID (the
 *                                         original, the one the keys come from) (<= 20)
 *   quic_scid           8057/897  bytes   the server's first long header's source CID (<= 20)
 *   quic_retry_scid     8057/898  bytes   a Retry packet's source CID (<= 20)
 *   quic_zero_rtt       8057/889  uint8   0-RTT packets seen (saturates at 255)
 *   quic_server_port    8057/887  uint16  the destination port of the client's first Initial
 *   quic_sni            8057/890  string  server_name, cut at SECHO_QUIC_SNI (quic_sni_cut)
 *   quic_user_agent     8057/891  string  transport parameter 0x3129 (Google's) in the
 *                                         quic_transport_parameters extension (0x39), cut
 *                                         at SECHO_QUIC_UA (quic_user_agent_cut)
 *   quic_alpn           (none)    string  the client's ALPN list, comma separated, cut at
 *                                         SECHO_QUIC_ALPN (quic_alpn_cut)
 *   quic_ja4            (none)    string  JA4 with the `q` prefix (tls.h's secho_tls_ja4)
 *   quic_tls_ext_type   0/291 basicList of 8057/885  uint16[]  the ClientHello's extension
 *                                         types in order, first SECHO_QUIC_EXTS (quic_tls_ext_cut)
 *   quic_tls_ext_len    0/291 basicList of 8057/884  uint16[]  their lengths
 *   quic_ch_parsed      8057/886  uint8   1 when the ClientHello was whole and tls.h's parser
 *                                         took it
 *   quic_ch_length      (none)    uint32  bytes of the ClientHello reassembled (<= 4096,
 *                                         quic_ch_truncated when the message is longer)
 *   quic_initials       (none)    uint16  client Initial packets decrypted
 *   quic_initials_failed (none)   uint16  client Initial packets that did not decrypt
 *   quic_close_code     (none)    uint64  a CONNECTION_CLOSE's error code in a client Initial
 * The ClientHello's fields come from the tls feature set's parser (tls.h) over
 * secho_feat_quic_client_hello()'s bytes; ipfixprobe's QUIC_TLS_EXT (8057/883, raw extension
 * bytes), QUIC_PACKETS (8057/888) and QUIC_MULTIPLEXED (8057/899) are not kept.
 *
 * Per-flow state: 4,672 bytes, of which SECHO_QUIC_CH_MAX (4,096) are the reassembly
 * buffer, needed only until the ClientHello is whole. A table that wires this set should
 * lend those buffers from a bounded shared pool (QUIC flows whose Initial is in flight)
 * rather than keep one in every flow; this module keeps it inline so that it stays
 * pointer-free.
 */
#ifndef SECHO_FLOW_FEATURE_QUIC_H
#define SECHO_FLOW_FEATURE_QUIC_H

#include "flow/feature/feature.h"
#include "flow/feature/tls.h"

#include <stddef.h>
#include <stdint.h>

#define SECHO_QUIC_V1      0x00000001u /* RFC 9000 */
#define SECHO_QUIC_V2      0x6b3343cfu /* RFC 9369 */
#define SECHO_QUIC_DRAFT29 0xff00001du /* draft-ietf-quic-transport-29 */

#define SECHO_QUIC_CID_MAX       20   /* RFC 9000 17.2: v1 and v2 connection IDs */
#define SECHO_QUIC_CH_MAX        4096 /* reassembled ClientHello bound */
#define SECHO_QUIC_RANGES        8    /* disjoint CRYPTO ranges held while reassembling */
#define SECHO_QUIC_MAX_COALESCED 4    /* long-header packets read per datagram */
#define SECHO_QUIC_MAX_DGRAMS    32   /* datagrams looked at per flow, then done */
#define SECHO_QUIC_PT_MAX        4096 /* a packet's plaintext bound (larger: counted) */

#define SECHO_QUIC_SNI  64 /* bytes of server name kept */
#define SECHO_QUIC_ALPN 32 /* bytes of the client's ALPN list kept */
#define SECHO_QUIC_UA   64 /* bytes of user agent kept */
#define SECHO_QUIC_EXTS 30 /* TLS extension types/lengths kept (as ipfixprobe) */

/* hello flags */
#define SECHO_QUIC_H_PARSED   0x0001 /* the ClientHello parsed (tls.h) */
#define SECHO_QUIC_H_SNI      0x0002
#define SECHO_QUIC_H_SNI_CUT  0x0004
#define SECHO_QUIC_H_ALPN     0x0008
#define SECHO_QUIC_H_ALPN_CUT 0x0010
#define SECHO_QUIC_H_UA       0x0020 /* transport parameter 0x3129 present */
#define SECHO_QUIC_H_UA_CUT   0x0040
#define SECHO_QUIC_H_JA4      0x0080
#define SECHO_QUIC_H_EXT_CUT  0x0100 /* more than SECHO_QUIC_EXTS extensions */
#define SECHO_QUIC_H_BAD      0x0200 /* the reassembled bytes are no ClientHello tls.h takes */
#define SECHO_QUIC_H_TP_BAD   0x0400 /* the transport parameters lie about a length */

/* Long-header packet types, the same numbers for every version (the bits differ). */
enum secho_quic_type {
	SECHO_QUIC_INITIAL = 0,
	SECHO_QUIC_0RTT = 1,
	SECHO_QUIC_HANDSHAKE = 2,
	SECHO_QUIC_RETRY = 3,
};

/* Initial keys of one direction (RFC 9001 5.1-5.2). */
struct secho_quic_keys {
	uint8_t key[16]; /* AEAD_AES_128_GCM */
	uint8_t iv[12];
	uint8_t hp[16]; /* header protection, AES-128-ECB */
};

/* One long-header packet's header, as sent (still protected: packet number not read). */
struct secho_quic_hdr {
	uint32_t version;
	uint8_t type; /* enum secho_quic_type; only for the known versions */
	uint8_t dcid_len, scid_len;
	uint8_t dcid[SECHO_QUIC_CID_MAX];
	uint8_t scid[SECHO_QUIC_CID_MAX];
	uint64_t token_len; /* Initial only */
	uint32_t token_off; /* Initial only: where the token starts */
	uint32_t pn_off;    /* Initial, 0-RTT, Handshake: where the packet number starts */
	uint32_t pkt_len;   /* bytes of this packet in the datagram (Retry: the rest) */
	uint64_t length;    /* the Length field: packet number + payload */
};

/* The client's CRYPTO stream at the Initial level, reassembled (RFC 9000 19.6). */
struct secho_quic_crypto {
	uint8_t buf[SECHO_QUIC_CH_MAX];
	uint16_t start[SECHO_QUIC_RANGES], end[SECHO_QUIC_RANGES]; /* sorted, disjoint */
	uint8_t nranges;
	uint8_t truncated; /* data was offered past SECHO_QUIC_CH_MAX */
	uint16_t dropped;  /* frames not placed: more than SECHO_QUIC_RANGES holes */
};

struct secho_feat_quic {
	struct secho_quic_keys keys; /* the client's, for keys_dcid and keys_version */
	uint8_t keys_dcid[SECHO_QUIC_CID_MAX];
	uint8_t keys_dcid_len;
	uint8_t keys_set;
	uint8_t occid_len, oscid_len, scid_len, retry_scid_len;
	uint8_t occid[SECHO_QUIC_CID_MAX], oscid[SECHO_QUIC_CID_MAX];
	uint8_t scid[SECHO_QUIC_CID_MAX], retry_scid[SECHO_QUIC_CID_MAX];
	uint32_t keys_version;
	uint32_t version, client_version;
	uint64_t token_len;
	uint64_t largest_pn; /* of the client's Initials, valid when initials > 0 */
	uint64_t close_code; /* CONNECTION_CLOSE error code, when close_seen */
	uint32_t ch_len;     /* the ClientHello's bytes in crypto.buf once ch_done */
	uint16_t server_port;
	uint16_t initials, initials_failed; /* client Initials opened / not (saturating) */
	uint16_t frames_other;              /* packets whose parse ended at a frame not read here */
	uint16_t malformed;                 /* long headers or frames that lie about a length */
	uint16_t dgrams;                    /* datagrams looked at */
	uint8_t zero_rtt;                   /* 0-RTT packets (saturating) */
	uint8_t client_dir;   /* SECHO_FEAT_FWD/REV: the direction of the first Initial */
	uint8_t quic;         /* a long header of a known version was seen */
	uint8_t server_seen;  /* a long header came from the server */
	uint8_t ch_done;      /* the ClientHello is whole (or cut at the bound) */
	uint8_t ch_truncated; /* ... cut at SECHO_QUIC_CH_MAX */
	uint8_t close_seen;   /* a CONNECTION_CLOSE frame in a client Initial */
	uint8_t done;         /* nothing more to learn: stop feeding this flow */
	uint16_t cut;         /* datagrams cut by the capture inside a long header */
	uint16_t hello;       /* SECHO_QUIC_H_*: what the ClientHello gave */
	/* the ClientHello's fields (tls.h's parser), once ch_done */
	uint8_t sni_len, alpn_len, ua_len, n_ext;
	char sni[SECHO_QUIC_SNI];
	char alpn[SECHO_QUIC_ALPN]; /* the client's list, comma separated */
	char ua[SECHO_QUIC_UA];
	char ja4[SECHO_TLS_JA4_LEN];
	uint16_t ext_type[SECHO_QUIC_EXTS], ext_len[SECHO_QUIC_EXTS];
	/* last: the parser's scratch, which no exporter reads (a done state may be kept
	 * without it: src/flow/feature/sets.h, "Done states") */
	struct secho_quic_crypto crypto;
};

/* The state's size, asserted in quic.c. */
#define SECHO_FEAT_QUIC_BYTES 4672

/* Whether the quic set wants packet p's flow: UDP (sets.h, "Live sets"). */
static inline int secho_feat_quic_wants(const struct secho_feat_pkt *p)
{
	return p->proto == 17;
}

/* Make s ready for a record: the CRYPTO ranges, the lengths, flags and counters zeroed; the
 * reassembly buffer (read within its ranges), the keys (read when keys_set), the connection
 * IDs and strings (read within their lengths), JA4 and the extension lists (read under the
 * hello flags and n_ext) are not. Can't fail. */
void secho_feat_quic_init(struct secho_feat_quic *s);

/* One packet of the flow (feature.h's contract). Never fails; what it cannot read is
 * counted. */
void secho_feat_quic_packet(struct secho_feat_quic *s, const struct secho_feat_pkt *p);

/* The reassembled ClientHello (TLS handshake header included) and its length, or NULL
 * while it is not whole. The bytes live in s's CRYPTO scratch: a whole state's (a parser's
 * own, a test's), not a record's done state, which keeps only what exporters read
 * (sets.h, "Done states"). */
const uint8_t *secho_feat_quic_client_hello(const struct secho_feat_quic *s, size_t *len);

/* The state's fields as JSON members ("name":value,... with no braces and no trailing
 * comma) into buf: bytes written (a NUL follows, not counted), or -ENOSPC. Nothing is
 * written for a flow where no QUIC long header was seen. */
int secho_feat_quic_json(const struct secho_feat_quic *s, char *buf, size_t cap);

/* ---- the pure parts, over byte buffers (tests and fuzzers call them) ---- */

/* 1 for v1, v2 and draft-29 (the versions whose Initials this module opens), else 0. */
int secho_quic_version_known(uint32_t version);

/* RFC 9000 16 variable-length integer at b[0..len): bytes used, or 0 when cut short. */
size_t secho_quic_varint(const uint8_t *b, size_t len, uint64_t *v);

/* Parse the long header at b[0..len): 0, or -EINVAL when b is not a long header or lies
 * (lengths past the end, connection IDs over 20 bytes for a known version), -ENOTSUP for a
 * version this module does not know (h->version, the CIDs and pkt_len = len filled; 0 is
 * Version Negotiation). */
int secho_quic_parse_long(const uint8_t *b, size_t len, struct secho_quic_hdr *h);

/* The Initial keys of a version for a destination connection ID (server 0: the client's,
 * 1: the server's). 0, or -ENOTSUP for an unknown version. */
int secho_quic_initial_keys(uint32_t version, const uint8_t *dcid, size_t dcid_len, int server,
                            struct secho_quic_keys *k);

/* Open the Initial packet pkt[0..h->pkt_len) whose header is h: header protection removed,
 * packet number recovered against largest_pn (none when have_largest is 0: RFC 9000 A.3),
 * payload opened into out[0..cap). 0 with *out_len and *pn set; -EBADMSG when the tag does
 * not verify (out is zeroed), -EMSGSIZE when the payload is over cap, -EINVAL when the
 * packet is too short to hold a sample. */
int secho_quic_open_initial(const struct secho_quic_keys *k, const uint8_t *pkt,
                            const struct secho_quic_hdr *h, uint64_t largest_pn, int have_largest,
                            uint8_t *out, size_t cap, size_t *out_len, uint64_t *pn);

/* Place CRYPTO data [off, off + len) in r. 0, or -ENOSPC when it could not be placed
 * (counted in r->dropped); data past SECHO_QUIC_CH_MAX is cut (r->truncated). */
int secho_quic_crypto_add(struct secho_quic_crypto *r, uint64_t off, const uint8_t *data,
                          size_t len);
/* Bytes reassembled from offset 0 without a hole. */
size_t secho_quic_crypto_prefix(const struct secho_quic_crypto *r);

/* Read the frames of an opened client Initial's payload pt[0..len) into s (CRYPTO into
 * s->crypto, CONNECTION_CLOSE's code): 0, or -EINVAL when a frame lies about a length
 * (counted in s->malformed); a frame type not read here ends the parse (counted). */
int secho_quic_frames(struct secho_feat_quic *s, const uint8_t *pt, size_t len);

#endif
