/*
 * secho/proto.h - the protocol's numbers, in one place: header sizes, the secure header's
 * and GCM's lengths, MTU limits, EtherTypes and IP protocols, default ports. Everything
 * that builds, parses or checks a frame (wire/, the dissector, the host tool's transport
 * and verifier, the key file, the commands' option ranges) takes them from here. The
 * contract they come from is docs/PROTOCOL.md. No code, no types: safe to include from
 * anywhere, also from the host tool's independent checker.
 *
 *   request   Ethernet II (14) | IPv4, IHL 5 (20) | UDP (8) | plaintext (0..mtu-60)
 *   response  Ethernet II (14) | IPv4 (20) | UDP (8) | secure header (16) | ciphertext | tag (16)
 */
#ifndef SECHO_PROTO_H
#define SECHO_PROTO_H

/* ---- headers ---- */
#define SECHO_ETH_ALEN      6
#define SECHO_ETH_HLEN      14
#define SECHO_VLAN_HLEN     4 /* one 802.1Q tag */
#define SECHO_IP4_HLEN      20
#define SECHO_UDP_HLEN      8
#define SECHO_HDRS_LEN      (SECHO_ETH_HLEN + SECHO_IP4_HLEN + SECHO_UDP_HLEN) /* 42 */
#define SECHO_ETH_MIN_FRAME 60 /* without FCS; shorter frames are padded on transmit */

/* ---- the secure header and the cryptography (AES-256-GCM) ---- */
#define SECHO_SHDR_LEN 16 /* secure header: the GCM AAD */
#define SECHO_TAG_LEN  16 /* GCM tag */
#define SECHO_IV_LEN   12 /* salt (4) || sequence (8): the secure header's bytes 4..15 */
#define SECHO_SALT_LEN 4
#define SECHO_KEY_LEN  32 /* AES-256 */

#define SECHO_SHDR_VERSION    1
#define SECHO_SHDR_F_OFFLOAD  0x01 /* engine: 0 streaming, 1 offload */
#define SECHO_SHDR_F_COUNTERS 0x02 /* plaintext is the counters report (JSON) */
#define SECHO_SHDR_F_INSTANCE 0x04 /* shared key: bytes 4..7 are salt XOR the instance id */
#define SECHO_SHDR_F_MASK     0x07 /* other bits must be zero */

/* ---- responses ---- */
#define SECHO_REQ_PAYLOAD_OFF   SECHO_HDRS_LEN                    /* 42 */
#define SECHO_RESP_SHDR_OFF     SECHO_HDRS_LEN                    /* 42 */
#define SECHO_RESP_PAYLOAD_OFF  (SECHO_HDRS_LEN + SECHO_SHDR_LEN) /* 58: ciphertext slot */
#define SECHO_RESP_TAG_OFF(len) (SECHO_RESP_PAYLOAD_OFF + (size_t)(len))
/* A response is this much longer than its request (secure header + tag). */
#define SECHO_RESP_OVERHEAD (SECHO_SHDR_LEN + SECHO_TAG_LEN) /* 32 */
#define SECHO_RESP_LEN(len) (SECHO_RESP_PAYLOAD_OFF + (size_t)(len) + SECHO_TAG_LEN)

/* ---- MTU: the IP total length of a response = 20 + 8 + 16 + len + 16 = len + 60 <= mtu ---- */
#define SECHO_WIRE_DEFAULT_MTU      1500
#define SECHO_WIRE_MIN_MTU          576 /* IPv4 minimum reassembly size; smaller is refused */
#define SECHO_WIRE_MAX_MTU          9000
#define SECHO_WIRE_OVERHEAD_IP      (SECHO_IP4_HLEN + SECHO_UDP_HLEN + SECHO_RESP_OVERHEAD) /* 60 */
#define SECHO_WIRE_MAX_PAYLOAD(mtu) ((mtu)-SECHO_WIRE_OVERHEAD_IP) /* 1440 at 1500 */

/* ---- EtherTypes and IP protocols ---- */
#define SECHO_ETHERTYPE_IPV4     0x0800
#define SECHO_ETHERTYPE_ARP      0x0806
#define SECHO_ETHERTYPE_VLAN     0x8100 /* 802.1Q */
#define SECHO_ETHERTYPE_IPV6     0x86dd
#define SECHO_ETHERTYPE_QINQ     0x88a8 /* 802.1ad service tag */
#define SECHO_ETHERTYPE_QINQ_OLD 0x9100 /* pre-standard QinQ */
#define SECHO_ETHERTYPE_MPLS     0x8847 /* MPLS unicast (RFC 3032) */
#define SECHO_ETHERTYPE_MPLS_MC  0x8848 /* MPLS multicast (RFC 5332) */
#define SECHO_ETHERTYPE_PPPOE    0x8864 /* PPPoE session stage (RFC 2516) */

#define SECHO_IPPROTO_UDP  17
#define SECHO_IP4_DF       0x4000
#define SECHO_IP4_MF       0x2000
#define SECHO_IP4_OFF_MASK 0x1fff
#define SECHO_IP4_TTL      64

/* ---- ports ---- */
#define SECHO_PORT_STREAM_DEFAULT   4000
#define SECHO_PORT_OFFLOAD_DEFAULT  4001
#define SECHO_PORT_COUNTERS_DEFAULT 4002

#endif
