/*
 * src/traffic/gen_app.h - application payloads for the traffic generator (`secho flow gen
 * --app`, docs/FLOW.md "Application payloads"): a connection's application is drawn from a
 * 64-bit seed (secho_gen_app_draw), its first message each way is built to a wanted size
 * (secho_gen_app_msg), and the feature fields a meter must report for it are written as
 * JSON (secho_gen_app_truth).
 *
 *   TLS   TCP 443: a TLS 1.3 ClientHello (SNI, ALPN, supported_versions, key_share, a
 *         browser-like extension set, a padding extension to the wanted size); the server's
 *         ServerHello (TLS 1.3, cipher suite, key_share), then an application_data record;
 *         or, a quarter of the servers, TLS 1.2: ServerHello (a TLS 1.2 suite, the ALPN
 *         chosen), Certificate (X.509 built by libcrypto: subject CN the server name, one
 *         of four issuers, a drawn validity, an Ed25519 or Ed448 key; signed with Ed25519,
 *         deterministic) and ServerHelloDone in the clear, then the application_data.
 *   QUIC  UDP 443: a version 1 client Initial (RFC 9000 17.2.2) carrying a ClientHello in a
 *         CRYPTO frame, padded to at least 1200 bytes, protected with the RFC 9001 5.2
 *         Initial keys of its DCID (AES-128-GCM, AES-ECB header protection); the server's
 *         Initial (ACK, CRYPTO with a ServerHello) under the server's Initial keys.
 *   DNS   UDP 53: a query (A or AAAA) and its answer (1 to 3 addresses, a TTL), both with
 *         an EDNS(0) OPT record whose Padding option (RFC 7830) fills the wanted size.
 *   HTTP  TCP 80: an HTTP/1.1 GET (a Cookie fills the size) or POST (a form body) with
 *         Host and User-Agent; the response with status, Server, Content-Type and a body.
 *
 * Everything is a pure function of the seed and the arguments: the same inputs give the
 * same bytes (QUIC's keys come from the DCID, which comes from the seed).
 */
#ifndef SECHO_TRAFFIC_GEN_APP_H
#define SECHO_TRAFFIC_GEN_APP_H

#include <stddef.h>
#include <stdint.h>

enum {
	SECHO_GEN_APP_NONE,
	SECHO_GEN_APP_TLS,
	SECHO_GEN_APP_QUIC,
	SECHO_GEN_APP_DNS,
	SECHO_GEN_APP_HTTP,
	SECHO_GEN_APP_COUNT
};

/* "none", "tls", "quic", "dns", "http" */
const char *secho_gen_app_name(unsigned app);

/* The most bytes a first message takes when its wanted size is small (QUIC's 1200-byte
 * Initial plus room); messages grow to the wanted size up to the packet's room. */
#define SECHO_GEN_APP_MSG_MAX 9100u
/* A QUIC Initial is padded to at most this many bytes; a larger datagram carries zeros
 * after it (the meter opens at most 4096 bytes of plaintext). */
#define SECHO_GEN_APP_QUIC_MAX 1400u

/* What one connection's application says, drawn from its seed. */
struct secho_gen_app {
	uint8_t app;           /* SECHO_GEN_APP_* */
	uint64_t seed;         /* the rest (randoms, key shares) is drawn from it when built */
	char name[64];         /* SNI, DNS question, HTTP Host */
	uint8_t alpn;          /* index of the ALPN list offered (TLS) */
	uint16_t cipher;       /* the server's cipher suite (TLS, QUIC) */
	uint8_t dcid[8];       /* QUIC: the client's DCID (the Initial keys' input) */
	uint8_t scid[8];       /* QUIC: the client's SCID */
	uint8_t server_cid[8]; /* QUIC: the server's SCID */
	uint16_t dns_id, qtype;
	uint8_t nans; /* DNS answers, 1..3 */
	uint32_t ttl;
	uint8_t addr[3][16];
	uint8_t post; /* HTTP: POST (else GET) */
	char path[48];
	uint8_t ua, status_i, ctype, server;
	/* TLS: a TLS 1.2 server (cipher then a TLS 1.2 suite) and its certificate: the issuer
	 * (secho_gen_app_issuer), the key (0 Ed25519, 1 Ed448), the validity (s since 1970) */
	uint8_t tls12, ca, key448;
	int64_t not_before, not_after;
};

/* The certificates' issuer CN of index ca (0..3). */
const char *secho_gen_app_issuer(unsigned ca);

/* Draw connection's application app (SECHO_GEN_APP_*) from seed. */
void secho_gen_app_draw(struct secho_gen_app *a, unsigned app, uint64_t seed);

/*
 * Build the first message of direction dir (0: client, 1: server) into out[0..cap):
 * want bytes when the message can be padded to that, else its smallest size (never below
 * it). Returns the length, or 0 when cap is too small or the keys could not be derived.
 */
size_t secho_gen_app_msg(const struct secho_gen_app *a, int dir, size_t want, uint8_t *out,
                         size_t cap);

/* The smallest QUIC 1-RTT packet the filler writes: first byte, an 8-byte CID, a 1-byte
 * packet number, a byte of payload, a 16-byte tag. */
#define SECHO_GEN_APP_QUIC_SHORT_MIN 27u

/*
 * The filler of a connection's later packets where zero bytes would not be its protocol:
 * QUIC's are 1-RTT (short header) packets to the peer's CID with random protected bytes,
 * want bytes (at least SECHO_GEN_APP_QUIC_SHORT_MIN). n numbers the packet (its bytes).
 * Returns the length, or 0: zero bytes do (the other applications), or no room.
 */
size_t secho_gen_app_filler(const struct secho_gen_app *a, int dir, uint64_t n, size_t want,
                            uint8_t *out, size_t cap);

/*
 * The truth's features column for direction dir of a connection whose first messages
 * were len[0] and len[1] bytes (0: that direction sent none) between client port sport
 * and server port dport: a JSON object {"uni":{...}} with the members a uniflow meter
 * reports for that flow and, on the forward line (dir 0), "bi":{...} with the members of
 * the connection's biflow record. JA3 and JA4 are left out. Returns 0, or -ENOSPC.
 */
int secho_gen_app_truth(const struct secho_gen_app *a, const uint16_t len[2], uint16_t sport,
                        uint16_t dport, int dir, char *buf, size_t cap);

#endif
