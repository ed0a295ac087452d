/*
 * src/flow/feature/sets.h - the feature sets as the flow table and the exporters see them
 * (`secho flow --features LIST`; docs/FLOW.md, "Features"): their names, the layout of their
 * per-flow states in a slot of the table's extension pool, and one call per packet and per
 * record that goes to each set that is on.
 *
 * Layout: the sets that are on, in the fixed order of enum secho_feat_set, each state at an
 * offset rounded up to 8 from the start of the feature area (which follows the 192-byte
 * struct secho_flow_extra in the slot). A set that is off has no section.
 *
 * Live sets: a section holds its record's state only once the set is live for that record.
 * When a record starts, only two bit sets are cleared (live and decided: the table keeps them
 * in the extension's first line, record.h); the sections keep whatever an earlier record
 * left. At each packet, a set that has not decided asks whether it wants the flow (its
 * protocol and ports, as ipfixprobe's plugins decide: tls and http TCP, quic and wg UDP, dns
 * port 53 at either end over UDP or TCP, the statistics sets every flow). A set that wants
 * it is initialised by its secho_feat_X_init (its fixed part zeroed; its large buffers are
 * not: every reader keeps within the lengths that govern them) and becomes live; one that
 * does not is decided and never sees the record. A set whose zero state would not change on
 * a packet without payload (dns, http, the statistics sets; tls unless the packet is a SYN)
 * waits for the first packet that would change it before it decides, so that a flow that
 * never carries one costs it nothing. A set that is not live reads as its zero state: it
 * exports exactly what a set that found nothing exports (secho_feat_sets_state).
 */
#ifndef SECHO_FLOW_FEATURE_SETS_H
#define SECHO_FLOW_FEATURE_SETS_H

#include "flow/feature/feature.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* X(NAME, "name", "what it gives") in layout order. */
#define SECHO_FEAT_SETS(X)                                                                         \
	X(TLS, "tls", "TLS ClientHello/ServerHello: SNI, ALPN, versions, JA3/JA4")                 \
	X(QUIC, "quic", "QUIC Initial: version, SNI, ALPN, user agent (client Initials opened)")   \
	X(DNS, "dns", "DNS over UDP and TCP: question, answers, response code")                    \
	X(HTTP, "http", "HTTP/1.x: method, Host, path, User-Agent, status, Content-Type")          \
	X(WG, "wg", "WireGuard: message type, peer indexes")                                       \
	X(PSTATS, "pstats", "the first packets: sizes, times, TCP flags, directions")              \
	X(PHISTS, "phists", "histograms of packet sizes and inter-packet times per direction")     \
	X(BSTATS, "bstats", "bursts of packets per direction: packets, bytes, start, end")

enum secho_feat_set {
#define SECHO_FEAT_SET_X(name, id, text) SECHO_FEAT_SET_##name,
	SECHO_FEAT_SETS(SECHO_FEAT_SET_X)
#undef SECHO_FEAT_SET_X
	        SECHO_FEAT_NSETS
};
#define SECHO_FEAT_ALL ((1u << SECHO_FEAT_NSETS) - 1)

/* "tls", ...; NULL out of range. */
const char *secho_feat_set_name(unsigned set);
const char *secho_feat_set_text(unsigned set);
/* The bytes of set's per-flow state (its struct), 0 out of range. */
size_t secho_feat_set_size(unsigned set);

/* Parse a comma-separated list of names or "all" into a bit set (1u << SECHO_FEAT_SET_*).
 * Returns 0, or -EINVAL with *bad pointing at the offending name in list (not terminated:
 * *badlen bytes). An empty list or empty name is refused. */
int secho_feat_parse(const char *list, uint32_t *sets, const char **bad, size_t *badlen);

/* Where each set's state lies in the feature area. */
struct secho_feat_layout {
	uint32_t sets;                  /* bit set of the sets on */
	uint32_t bytes;                 /* the feature area: a multiple of 8, 0 when none */
	uint32_t off[SECHO_FEAT_NSETS]; /* offsets in the area (sets that are on) */
};

/* The layout of sets (unknown bits ignored). Can't fail. */
void secho_feat_layout_make(uint32_t sets, struct secho_feat_layout *l);

/* One packet of the flow (area: l->bytes bytes; *live and *decided: the record's bit sets,
 * both 0 when it starts): every set on that has not decided decides (above), and every live
 * set whose state is not done gets the packet. Can't fail. */
void secho_feat_sets_packet(const struct secho_feat_layout *l, uint8_t *area, uint32_t *live,
                            uint32_t *decided, const struct secho_feat_pkt *p);

/* Whether packet p, not counted yet, is to start a new record of its flow (a set that keeps
 * one record per session: wg, secho_feat_wg_new_session). Reads area only (live sets). */
bool secho_feat_sets_new_record(const struct secho_feat_layout *l, const uint8_t *area,
                                uint32_t live, const struct secho_feat_pkt *p);

/* Set's state in a record (struct secho_feat_X): its section in area when the set is in
 * live, else a shared all-zero state (a set that found nothing). set must be on in l. */
const void *secho_feat_sets_state(const struct secho_feat_layout *l, const uint8_t *area,
                                  uint32_t live, unsigned set);

/* Every set's JSON members (",\"name\":value", fjson.h) into buf[0..cap), for a record of
 * packets packets (both directions) whose TCP flags (both directions, ORed) are tcp_flags
 * and whose live sets are live: the statistics sets' export rules (secho_feat_X_keep) apply.
 * Bytes written, or -ENOSPC. */
int secho_feat_sets_json(const struct secho_feat_layout *l, const uint8_t *area, uint32_t live,
                         uint64_t packets, uint8_t tcp_flags, char *buf, size_t cap);

#endif
