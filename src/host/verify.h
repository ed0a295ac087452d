/*
 * src/host/verify.h - checking one endpoint response against what the host sent.
 *
 * Wire contract (docs/HOST.md, the endpoint's spec): a response is
 *   Ethernet (dst = request's source MAC, src = endpoint MAC, type IPv4)
 *   IPv4 (IHL 5, addresses swapped, TTL 64, DF, no fragment, valid header checksum)
 *   UDP (ports swapped, length exact, checksum valid and non-zero)
 *   secure header (16 bytes, network byte order):
 *     0 version = 1 | 1 flags | 2-3 key id | 4-7 salt | 8-15 sequence
 *   ciphertext (request payload length) | GCM tag (16)
 * IV = our salt || the header's sequence (12 bytes); AAD = the 16 header bytes.
 * With a shared key (key file "shared yes"): flag 0x04 set, bytes 4-7 = our salt XOR the
 * endpoint's instance id (non-zero), and IV = header bytes 4-15; a response without the
 * flag, or with instance 0, fails the "salt" check (docs/PROTOCOL.md, "Shared keys").
 *
 * Every check has a name (secho_vfail_name). A response carries the mask of every check
 * that failed and the first one in the order of this enum (outer layers first), so a
 * corrupted key id is reported as "key-id" even though the tag then fails as well.
 */
#ifndef SECHO_HOST_VERIFY_H
#define SECHO_HOST_VERIFY_H

#include "host/oracle.h"
#include "secho/host.h"
#include "secho/proto.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Flag bits a response must not set: all but the engine and counters bits (and the
 * instance bit, secho/proto.h, with a shared key). */
#define SECHO_FLAG_RESERVED (0xff & ~(SECHO_SHDR_F_OFFLOAD | SECHO_SHDR_F_COUNTERS))

enum secho_vfail {
	SECHO_VF_OK = 0,
	SECHO_VF_TRUNCATED,     /* shorter than its own headers */
	SECHO_VF_ETH_DST,       /* Ethernet dst != request's source MAC */
	SECHO_VF_ETH_SRC,       /* Ethernet src != endpoint MAC */
	SECHO_VF_ETHERTYPE,     /* not IPv4 */
	SECHO_VF_IP_VERSION,    /* version 4, IHL 5 */
	SECHO_VF_IP_CSUM,       /* header checksum */
	SECHO_VF_IP_TTL,        /* TTL 64 */
	SECHO_VF_IP_DF,         /* DF set, MF clear, offset 0 */
	SECHO_VF_IP_PROTO,      /* UDP */
	SECHO_VF_IP_SRC,        /* source != request's destination */
	SECHO_VF_IP_DST,        /* destination != request's source */
	SECHO_VF_IP_LEN,        /* total length (an echo's follows from the request; any at
	                         * most SECHO_WIRE_MAX_MTU) */
	SECHO_VF_TRAILING,      /* bytes after the IP packet beyond Ethernet's minimum-frame
	                         * padding (frames of at most 60 bytes) */
	SECHO_VF_UDP_SPORT,     /* source port != request's destination port */
	SECHO_VF_UDP_DPORT,     /* destination port != request's source port */
	SECHO_VF_UDP_LEN,       /* UDP length */
	SECHO_VF_UDP_CSUM_ZERO, /* checksum absent (0) */
	SECHO_VF_UDP_CSUM,      /* checksum wrong */
	SECHO_VF_LENGTH,        /* secure part != 16 + request payload + 16 */
	SECHO_VF_HDR_VERSION,   /* header byte 0 */
	SECHO_VF_KEY_ID,        /* header bytes 2-3 */
	SECHO_VF_FLAG_ENGINE,   /* flag 0x01 does not match the request's port */
	SECHO_VF_FLAG_COUNTERS, /* flag 0x02 set iff the request went to the counters port */
	SECHO_VF_FLAG_RESERVED, /* flags 0xfc */
	SECHO_VF_SALT,          /* header bytes 4-7 */
	SECHO_VF_SEQ_REPEAT,    /* sequence seen before in this run */
	SECHO_VF_DUPLICATE,     /* a further answer to a request already answered (set by the
	                         * session, which matches responses to requests) */
	SECHO_VF_PAYLOAD,       /* decrypted payload hash != sent payload hash */
	SECHO_VF_CIPHERTEXT,    /* ciphertext hash != oracle's */
	SECHO_VF_TAG,           /* tag != oracle's */
	SECHO_VF_COUNT
};

/* Stable kebab-case name of a check ("ip-checksum", "tag", ...); "?" when out of range. */
const char *secho_vfail_name(unsigned f);

/* The addresses of a run: host side and endpoint side. IPv4 addresses in network order. */
struct secho_vpath {
	uint8_t host_mac[6], ep_mac[6];
	uint8_t host_ip[4], ep_ip[4];
};

/* One request as the host sent it. */
struct secho_vreq {
	const uint8_t *payload; /* for a counters request: ignored */
	size_t len;
	uint16_t dport; /* request's destination port (selects the engine) */
	uint16_t sport; /* request's source port */
};

struct secho_vresult {
	unsigned first;    /* enum secho_vfail: first failed check, OK if none */
	uint64_t mask;     /* bit (1 << f) for every failed check */
	bool l2l3_checked; /* Ethernet/IPv4/UDP-checksum fields were visible and checked */
	bool crypto_checked;
	bool payload_match, ct_match, tag_match;
	uint8_t flags;
	uint16_t key_id;
	uint64_t seq;
	const uint8_t *secure; /* the UDP payload inside the checked buffer */
	size_t secure_len;
	size_t report_len; /* counters response: plaintext bytes written */
};

/* Set of sequence numbers seen in a run: pages of 4096 bits keyed by seq >> 12 in an
 * open-addressing table (dense, increasing sequences cost 1 bit each). Bounded: beyond
 * max_pages the set stops recording and says so (overflow) instead of growing. */
struct secho_seqpage {
	uint64_t key; /* (seq >> 12) + 1; 0 = empty slot */
	uint64_t bits[64];
};
struct secho_seqset {
	struct secho_seqpage *pages;
	size_t cap, used, max_pages;
	bool overflow;
};

/* Returns 0 when the set is ready, -ENOMEM. */
int secho_seqset_init(struct secho_seqset *s, size_t max_pages);
/* Returns 1 if seq is new (now recorded), 0 if seen before, -ENOSPC (or -ENOMEM) if it could not be
 * recorded (table full: repeats can no longer be detected). */
int secho_seqset_add(struct secho_seqset *s, uint64_t seq);
/* True if seq was recorded. Can't fail. */
bool secho_seqset_has(const struct secho_seqset *s, uint64_t seq);
void secho_seqset_free(struct secho_seqset *s);

struct secho_verifier {
	struct secho_oracle oracle;
	uint16_t key_id;
	uint8_t salt[4];
	bool shared; /* the key is shared: the IV's fixed field carries an instance id */
	uint16_t port_stream, port_offload, port_counters;
	struct secho_seqset seen;
	FILE *seq_log;   /* every sequence number seen, for checks across runs; may be NULL */
	int seq_log_err; /* first write error on seq_log (errno), 0 while none */
	uint8_t pt[SECHO_HOST_MAX_PAYLOAD]; /* decrypted response */
	uint8_t ct[SECHO_HOST_MAX_PAYLOAD]; /* oracle's ciphertext */
};

/* Prepares a verifier for one run (copies the key into the oracle). Returns 0 or
 * -ENOMEM. The caller wipes it with secho_verifier_free(). */
int secho_verifier_init(struct secho_verifier *v, const struct secho_host_key *k,
                        uint16_t port_stream, uint16_t port_offload, uint16_t port_counters);
void secho_verifier_free(struct secho_verifier *v);

/* Raw mode: checks a whole Ethernet frame f[0..n) answering request r on path p. n is
 * every byte received: bytes after the IP packet fail trailing-bytes unless the frame is
 * at most 60 bytes long (Ethernet pads shorter frames). A receive buffer larger than
 * 14 + SECHO_WIRE_MAX_MTU bytes thus also fails any frame it had to cut.
 * report/report_cap: for a counters request, where the decrypted report goes (may be NULL
 * otherwise). Returns res->first. */
unsigned secho_verify_frame(struct secho_verifier *v, const struct secho_vpath *p,
                            const struct secho_vreq *r, const uint8_t *f, size_t n, uint8_t *report,
                            size_t report_cap, struct secho_vresult *res);

/* Socket mode: the kernel consumed Ethernet/IPv4/UDP; checks what is still visible (the
 * datagram's source address and ports) and the secure part d[0..n). src_ip in network
 * order. Returns res->first. */
unsigned secho_verify_dgram(struct secho_verifier *v, const struct secho_vpath *p,
                            const struct secho_vreq *r, const uint8_t src_ip[4], uint16_t sport,
                            uint16_t dport, const uint8_t *d, size_t n, uint8_t *report,
                            size_t report_cap, struct secho_vresult *res);

/* Decrypts (without authenticating) up to out_cap leading plaintext bytes of the secure
 * part d[0..n), to find which request it answers. Returns bytes written, 0 if d is too
 * short to hold a header and tag. */
size_t secho_verify_peek(struct secho_verifier *v, const uint8_t *d, size_t n, uint8_t *out,
                         size_t out_cap);

/* Internet checksum (RFC 1071) of n bytes folded to 16 bits, added to an initial partial
 * sum. Exposed for the tests' fixtures. */
uint16_t secho_inet_csum(const uint8_t *p, size_t n, uint32_t sum);

#endif
