/*
 * src/flow/feature/wg.h - the wg feature set: WireGuard recognised in a UDP flow by its
 * message types and exact lengths (the WireGuard paper, section 5.4: handshake initiation
 * 148 bytes, response 92, cookie reply 64, transport data 32 or more, each opening with a
 * type byte and three reserved zero bytes), and the peers' session indexes, as ipfixprobe's
 * wg plugin reports them. docs/FLOW.md "Features: wg".
 *
 * Fields (JSON name as FlowTest's conf/fields.yml; IPFIX element as ipfixprobe's wg plugin
 * exports it, PEN:ID):
 *
 *   JSON            IPFIX       type   from
 *   wg_conf_level   8057:1100   u8     100 when the last message read was WireGuard; 1 when
 *                                      its bytes 4..7 were 00 01 00 00 (a DNS query with ID
 *                                      0x0100..0x0400 and no flags looks like that:
 *                                      "possible"); 0 when a later
 *                                      packet of the flow was not WireGuard
 *   wg_src_peer     8057:1101   u32    the index the forward side chose for itself (its
 *                                      initiation's or response's sender index, or the
 *                                      receiver index the reverse side addresses it by)
 *   wg_dst_peer     8057:1102   u32    the same for the reverse side
 *   (indexes are little-endian on the wire and exported as numbers)
 *
 * A flow is looked at only if its first packet is a WireGuard message; from the first
 * packet that is not, the set stops (conf 0). Nothing is decrypted.
 *
 * A new record per WireGuard session (ipfixprobe's rule: its wg plugin flushes the flow
 * with reinsert): a handshake initiation whose sender index differs from the index already
 * recorded for its side starts a new session. Before such a packet is counted, the table
 * asks secho_feat_wg_new_session(); on yes it ends the record (flowEndReason 4, forced, as
 * ipfixprobe), starts a new one for the same flow key with zeroed states, and counts the
 * packet there. secho_feat_wg_packet() given such a packet anyway (a caller that does not
 * ask) leaves the state as it was and sets new_session and done.
 */
#ifndef SECHO_FLOW_FEATURE_WG_H
#define SECHO_FLOW_FEATURE_WG_H

#include "flow/feature/feature.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SECHO_WG_INITIATION 1
#define SECHO_WG_RESPONSE   2
#define SECHO_WG_COOKIE     3
#define SECHO_WG_DATA       4

#define SECHO_WG_LEN_INITIATION 148
#define SECHO_WG_LEN_RESPONSE   92
#define SECHO_WG_LEN_COOKIE     64
#define SECHO_WG_LEN_DATA_MIN   32 /* 16 bytes of header, an empty packet's 16-byte tag */

/* One message: its type and the indexes it carries (0 where it carries none). */
struct secho_wg_msg {
	uint8_t type;
	uint8_t dns_like;  /* bytes 4..7 are 00 01 00 00 */
	uint32_t sender;   /* initiation, response */
	uint32_t receiver; /* response, cookie reply, transport data */
};

/* Parse payload[0..len) as one WireGuard message. Returns its type (1-4), or 0 when it is
 * not one: too short, an unknown type, reserved bytes not zero, a length that is not its
 * type's. Never reads outside payload[0..len). */
int secho_wg_parse(const uint8_t *payload, size_t len, struct secho_wg_msg *m);

/* The per-flow state: made ready by secho_feat_wg_init when the set becomes live for a
 * record (sets.h, "Live sets"). */
struct secho_feat_wg {
	uint32_t src_peer, dst_peer;
	uint32_t messages;   /* WireGuard messages read */
	uint16_t types;      /* bit t: a message of type t was seen */
	uint8_t conf;        /* wg_conf_level */
	uint8_t seen;        /* the flow's first packet was WireGuard: the fields are set */
	uint8_t done;        /* nothing more wanted */
	uint8_t new_session; /* done because this packet starts a new session (see above) */
	uint8_t pad[2];
};
#define SECHO_FEAT_WG_SIZE 20
_Static_assert(sizeof(struct secho_feat_wg) == SECHO_FEAT_WG_SIZE, "wg state size");

/* Whether packet p starts a new WireGuard session in the flow whose state is s (see above):
 * the record is to end before p is counted. Reads s only. */
bool secho_feat_wg_new_session(const struct secho_feat_wg *s, const struct secho_feat_pkt *p);

/* Whether the wg set wants packet p's flow: UDP (sets.h, "Live sets"). */
static inline bool secho_feat_wg_wants(const struct secho_feat_pkt *p)
{
	return p->proto == 17;
}

/* Make s ready for a record (all of it zeroed). Can't fail. */
void secho_feat_wg_init(struct secho_feat_wg *s);

/* One packet of the flow. */
void secho_feat_wg_packet(struct secho_feat_wg *s, const struct secho_feat_pkt *p);

/* The fields, when the flow was WireGuard, as JSON members: bytes written, or -ENOSPC. */
int secho_feat_wg_json(const struct secho_feat_wg *s, char *buf, size_t cap);

#endif
