/*
 * secho/wire.h - the endpoint's wire format: parse a request frame, rebuild the response.
 *
 * No I/O here: callers hand in a received frame and get a verdict; for an accepted frame
 * they build the response headers into an output buffer, encrypt into the ciphertext slot
 * and finalize the UDP checksum. The contract is docs/PROTOCOL.md.
 *
 *   request   Ethernet II (14) | IPv4, IHL 5 (20) | UDP (8) | plaintext (0..mtu-60)
 *   response  Ethernet II (14) | IPv4 (20) | UDP (8) | secure header (16) | ciphertext | tag (16)
 *
 * Byte order: every multi-byte field of the wire structs below is big-endian (network
 * order), marked by the secho_be16/secho_be32/secho_be64 types; convert with
 * ntohs()/htons() and friends. The structs are packed and used only through pointers into
 * frame buffers (no alignment is assumed: packed makes the compiler use unaligned loads).
 */
#ifndef SECHO_WIRE_H
#define SECHO_WIRE_H

#include "secho/proto.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Big-endian wire fields: plain integers, the name says the byte order. */
typedef uint16_t secho_be16;
typedef uint32_t secho_be32;
typedef uint64_t secho_be64;

/* The sizes, offsets, MTU limits, EtherTypes and ports: secho/proto.h. */

/* Ethernet II header. */
struct secho_eth_hdr {
	uint8_t dst[SECHO_ETH_ALEN];
	uint8_t src[SECHO_ETH_ALEN];
	secho_be16 type;
} __attribute__((packed));

/* IPv4 header without options (RFC 791 section 3.1). */
struct secho_ip4_hdr {
	uint8_t ver_ihl; /* version << 4 | IHL (32-bit words) */
	uint8_t tos;
	secho_be16 tot_len;
	secho_be16 id;
	secho_be16 frag; /* flags (3 bits: 0, DF, MF) << 13 | fragment offset (8-byte units) */
	uint8_t ttl;
	uint8_t proto;
	secho_be16 csum;
	secho_be32 saddr;
	secho_be32 daddr;
} __attribute__((packed));

/* UDP header (RFC 768). */
struct secho_udp_hdr {
	secho_be16 sport;
	secho_be16 dport;
	secho_be16 len;  /* header + data */
	secho_be16 csum; /* 0 = none (IPv4 only); a computed 0 is sent as 0xffff */
} __attribute__((packed));

/* Secure header: authenticated (AAD) but not encrypted. IV = bytes 4..15. */
struct secho_shdr_wire {
	uint8_t version; /* SECHO_SHDR_VERSION */
	uint8_t flags;   /* SECHO_SHDR_F_* */
	secho_be16 key_id;
	uint8_t salt[SECHO_SALT_LEN]; /* from the key file, as stored there */
	secho_be64 seq;
} __attribute__((packed));

/* ARP for IPv4 over Ethernet (RFC 826), after the Ethernet header. */
struct secho_arp_ip4 {
	secho_be16 htype; /* 1 */
	secho_be16 ptype; /* 0x0800 */
	uint8_t hlen;     /* 6 */
	uint8_t plen;     /* 4 */
	secho_be16 oper;  /* 1 request, 2 reply */
	uint8_t sha[SECHO_ETH_ALEN];
	uint8_t spa[4];
	uint8_t tha[SECHO_ETH_ALEN];
	uint8_t tpa[4];
} __attribute__((packed));

_Static_assert(sizeof(struct secho_eth_hdr) == SECHO_ETH_HLEN, "eth");
_Static_assert(sizeof(struct secho_ip4_hdr) == SECHO_IP4_HLEN, "ip4");
_Static_assert(sizeof(struct secho_udp_hdr) == SECHO_UDP_HLEN, "udp");
_Static_assert(sizeof(struct secho_shdr_wire) == SECHO_SHDR_LEN, "shdr");
_Static_assert(sizeof(struct secho_arp_ip4) == 28, "arp");

/* The endpoint's identity and limits. */
struct secho_wire_cfg {
	uint8_t mac[SECHO_ETH_ALEN];
	uint32_t ip;      /* network order */
	uint32_t netmask; /* network order; 0 = unknown (then no directed-broadcast check) */
	uint16_t port_stream, port_offload, port_counters; /* host order */
	unsigned mtu; /* IP MTU; payloads up to mtu - 60 are answered */
};

/* Fill cfg with the default ports and MTU 1500 (mac, ip, netmask left zero). */
void secho_wire_cfg_defaults(struct secho_wire_cfg *cfg);
/* 0 if cfg is usable (unicast non-zero MAC, usable IP, distinct non-zero ports, MTU in
 * range), else -EINVAL. */
int secho_wire_cfg_check(const struct secho_wire_cfg *cfg);

/* Which service a request is for, from its destination port. */
enum secho_port_class {
	SECHO_PORT_STREAM = 0,   /* streaming engine */
	SECHO_PORT_OFFLOAD = 1,  /* offload engine */
	SECHO_PORT_COUNTERS = 2, /* counters report */
};

/*
 * Verdicts, in the order the parser checks. Each drop has its own name so the caller can
 * count it; nothing is ever answered for a non-OK verdict (except that the caller may
 * answer SECHO_WIRE_ARP with secho_wire_arp_reply() when ARP is enabled).
 */
#define SECHO_WIRE_VERDICTS(X)                                                                     \
	X(OK, "ok", "ok")                                                                          \
	X(ETH_SHORT, "eth_short", "frame shorter than the Ethernet header")                        \
	X(VLAN, "vlan", "802.1Q/802.1ad VLAN-tagged frame")                                        \
	X(ARP, "arp", "ARP frame")                                                                 \
	X(NOT_IPV4, "not_ipv4", "EtherType is not IPv4")                                           \
	X(DST_MAC, "dst_mac", "destination MAC is not the endpoint's")                             \
	X(SRC_MAC, "src_mac", "source MAC is broadcast, multicast or zero")                        \
	X(IP_SHORT, "ip_short", "frame shorter than the IPv4 header")                              \
	X(IP_VERSION, "ip_version", "IP version is not 4")                                         \
	X(IP_IHL, "ip_ihl", "IPv4 header length is not 5 words (options)")                         \
	X(IP_TOTLEN, "ip_totlen", "IPv4 total length inconsistent with the frame")                 \
	X(IP_CSUM, "ip_csum", "bad IPv4 header checksum")                                          \
	X(IP_FRAGMENT, "ip_fragment", "IPv4 fragment (MF set or offset non-zero)")                 \
	X(IP_PROTO, "ip_proto", "IP protocol is not UDP")                                          \
	X(DST_IP, "dst_ip", "destination IP is not the endpoint's")                                \
	X(SRC_IP, "src_ip", "source IP is zero, broadcast or multicast")                           \
	X(UDP_SHORT, "udp_short", "IP payload shorter than the UDP header")                        \
	X(UDP_LEN_ZERO, "udp_len_zero", "UDP length field is zero")                                \
	X(UDP_LEN, "udp_len", "UDP length inconsistent with the IP payload")                       \
	X(UDP_CSUM, "udp_csum", "bad UDP checksum")                                                \
	X(DST_PORT, "dst_port", "destination port is not served")                                  \
	X(PAYLOAD_LONG, "payload_long", "payload longer than the MTU allows")

enum secho_wire_verdict {
#define SECHO_WIRE_X(name, id, text) SECHO_WIRE_##name,
	SECHO_WIRE_VERDICTS(SECHO_WIRE_X)
#undef SECHO_WIRE_X
	        SECHO_WIRE_VERDICT_COUNT
};

/* Short identifier ("ip_csum", ...) for counters; "unknown" when out of range. */
const char *secho_wire_verdict_name(enum secho_wire_verdict v);
/* One line of text for logs. */
const char *secho_wire_verdict_text(enum secho_wire_verdict v);

/* What the parser extracted from an accepted request. */
struct secho_wire_req {
	uint8_t src_mac[SECHO_ETH_ALEN];
	uint32_t src_ip;   /* network order */
	uint16_t src_port; /* host order */
	uint16_t dst_port; /* host order */
	enum secho_port_class cls;
	uint8_t tos;          /* echoed in the response */
	uint16_t payload_off; /* offset of the plaintext in the frame (always 42) */
	uint16_t payload_len; /* bytes of plaintext */
	uint16_t frame_len;   /* bytes of the frame that are the IPv4 packet + 14 (no padding) */
};

/*
 * Parse and validate one received frame (no FCS). Returns SECHO_WIRE_OK and fills *out,
 * or the first rule the frame broke (then *out is unspecified). Never reads outside
 * frame[0..len). Can't fail otherwise. Constant work per header; the UDP checksum, when
 * non-zero, is verified over the whole datagram.
 */
enum secho_wire_verdict secho_wire_parse(const struct secho_wire_cfg *cfg, const uint8_t *frame,
                                         size_t len, struct secho_wire_req *out);

/*
 * Write the response's Ethernet, IPv4 and UDP headers and the secure header `shdr` into
 * out[0..58), for a request parsed into *req. Returns the response frame length
 * (SECHO_RESP_LEN(req->payload_len)), or 0 when out_cap is smaller than that.
 *
 * The ciphertext goes to out + SECHO_RESP_PAYLOAD_OFF and the tag after it; then call
 * secho_wire_finalize(). When req_frame is non-NULL the request's plaintext is first moved
 * (memmove) from req_frame + req->payload_off to out + 58, so the engine can encrypt in
 * place there. In place (out == req_frame): the buffer needs SECHO_RESP_OVERHEAD (32)
 * bytes beyond the request's 42 + len, the plaintext moves 16 bytes up, and every field
 * of the request the response needs has already been copied into *req. Out of place,
 * pass req_frame = NULL and encrypt from the request buffer straight into the slot.
 *
 * ip_id is the IPv4 identification to use (host order; any fresh value, DF is set).
 * The IPv4 header checksum is complete on return; the UDP checksum is left zero.
 */
size_t secho_wire_rebuild(const struct secho_wire_cfg *cfg, const struct secho_wire_req *req,
                          const uint8_t *req_frame, const uint8_t shdr[SECHO_SHDR_LEN],
                          uint16_t ip_id, uint8_t *out, size_t out_cap);

/*
 * Compute and store the UDP checksum of a response built by secho_wire_rebuild() once the
 * ciphertext and tag are in place (a computed 0 is stored as 0xffff). frame_len is the
 * value rebuild returned. Can't fail.
 */
void secho_wire_finalize(uint8_t *frame, size_t frame_len);

/*
 * ARP: when frame is an ARP request (Ethernet + 28-byte IPv4 ARP) asking for cfg->ip from
 * a valid unicast sender, write the reply (padded to 60 bytes) to out and return its
 * length; otherwise return 0 and write nothing. The caller answers only when ARP is
 * enabled (--arp).
 */
size_t secho_wire_arp_reply(const struct secho_wire_cfg *cfg, const uint8_t *frame, size_t len,
                            uint8_t *out, size_t out_cap);

/* ---- secure header (src/wire/secure_header.c) ---- */

/* Version and flags: secho/proto.h (SECHO_SHDR_VERSION, SECHO_SHDR_F_*). */

struct secho_shdr {
	uint8_t version;
	uint8_t flags;
	uint16_t key_id;
	uint8_t salt[SECHO_SALT_LEN];
	uint64_t seq;
};

/* Serialise: version 1, flags, key id, salt, sequence (big-endian). For a shared key, salt
 * is the IV's fixed field, the key's salt XOR the instance id (secho_shdr_fixed), and flags
 * carry SECHO_SHDR_F_INSTANCE. Can't fail. */
void secho_shdr_build(uint8_t out[SECHO_SHDR_LEN], uint8_t flags, uint16_t key_id,
                      const uint8_t salt[SECHO_SALT_LEN], uint64_t seq);
/* Parse; returns 0, or -EINVAL for a version other than 1 or reserved flag bits set
 * (*out is filled either way). */
int secho_shdr_parse(const uint8_t in[SECHO_SHDR_LEN], struct secho_shdr *out);
/* The IV's fixed field (header bytes 4..7) of an endpoint: the key's salt, or for a shared
 * key (instance != 0) the salt XOR the instance id in network byte order. Can't fail. */
void secho_shdr_fixed(const uint8_t salt[SECHO_SALT_LEN], uint32_t instance,
                      uint8_t fixed[SECHO_SALT_LEN]);
/* GCM IV = header bytes 4..15 (salt then sequence number). Can't fail. */
void secho_shdr_iv(const uint8_t shdr[SECHO_SHDR_LEN], uint8_t iv[SECHO_IV_LEN]);
/* Flags for a request of class cls (streaming 0x00, offload 0x01, counters 0x02). */
uint8_t secho_shdr_flags_for(enum secho_port_class cls);

/* ---- Internet checksum (RFC 1071), src/wire/csum.c ---- */

/*
 * Add n bytes at p to the running one's-complement sum `sum` (start with 0) and return the
 * new running sum (32-bit, not folded). Pieces may be chained; every piece but the last
 * must have an even length. p needs no alignment.
 */
uint32_t secho_csum_add(uint32_t sum, const void *p, size_t n);
/* Fold a running sum to 16 bits and complement: the value to store (host order). */
uint16_t secho_csum_fold(uint32_t sum);
/* RFC 1624 eqn. 3: update stored checksum `csum` (host order) when a 16-bit field changes
 * from old to new (host order). */
uint16_t secho_csum_update16(uint16_t csum, uint16_t old_v, uint16_t new_v);
/* IPv4 header checksum of a 20-byte header whose csum field is taken as zero. */
uint16_t secho_ip4_csum(const void *ip_hdr);
/* UDP checksum over the pseudo header and the datagram (udp_len bytes, csum field as
 * stored: pass it zeroed to compute). Returns the value to store (0 computed -> 0xffff).
 * saddr, daddr in network order. */
uint16_t secho_udp4_csum(uint32_t saddr, uint32_t daddr, const void *udp, size_t udp_len);
/* The same sum without the zero-to-0xffff mapping: over a received datagram, checksum
 * field included, it is 0 exactly when that checksum is right. */
uint16_t secho_udp4_sum(uint32_t saddr, uint32_t daddr, const void *udp, size_t udp_len);

#ifdef __cplusplus
}
#endif
#endif
