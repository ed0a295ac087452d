/*
 * src/flow/feature/sets.h - the feature sets as the flow table and the exporters see them
 * (`secho flow --features LIST`; docs/FLOW.md, "Features"): their names, the layout of their
 * per-flow states in a slot of the table's extension pool, and one call per packet and per
 * record that goes to each set that is on.
 *
 * Layout: a slot's feature area (after the 64-byte struct secho_flow_xline in the slot)
 * holds the small sets' states (wg and the statistics sets) and, for each large set that is
 * on (tls, quic, dns, http: SECHO_FEAT_POOLED), a 4-byte handle into that set's pool: the
 * large states are lent from the pool when the set goes live for a record and given back
 * when the record has left (secho_feat_sets_release), so that memory follows the flows that
 * carry the set's protocol, not every flow in the table. A record's area (the copy a ring
 * keeps, what exporters read) lays every set that is on out in one block instead. Both in
 * one order (phists, pstats, then the others as enum secho_feat_set has them: sets.c,
 * secho_feat_layout_make), each state at an offset rounded up to 8. A set that is off has
 * no section.
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
#include <string.h>

/* X(NAME, "name", "what it gives"), in the order of their bits. */
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

/* Options of the sets, in the same word as the sets, above their bits: `--features
 * pstats:zeroes` is pstats recording packets without payload too (ipfixprobe's pstats
 * "includezeroes"; pstats.h, SECHO_PSTATS_INCLUDE_ZEROES). */
#define SECHO_FEAT_OPT_PSTATS_ZEROES (1u << 16)

/* "tls", ...; NULL out of range. */
const char *secho_feat_set_name(unsigned set);
const char *secho_feat_set_text(unsigned set);
/* The bytes of set's per-flow state (its struct), 0 out of range. */
size_t secho_feat_set_size(unsigned set);
/* The bytes of set's state that exporters read (its first part: "Done states" below), 0 out
 * of range. Whoever copies a record's state copies these. */
size_t secho_feat_set_export_size(unsigned set);

/* Parse a comma-separated list of names, "all" or "pstats:zeroes" (pstats with
 * SECHO_FEAT_OPT_PSTATS_ZEROES) into a bit set (1u << SECHO_FEAT_SET_*, and the options).
 * Returns 0, or -EINVAL with *bad pointing at the offending name in list (not terminated:
 * *badlen bytes). An empty list or empty name is refused. */
int secho_feat_parse(const char *list, uint32_t *sets, const char **bad, size_t *badlen);

/* The sets whose states are lent from a pool rather than kept in the slot (sets.h, above). */
#define SECHO_FEAT_POOLED                                                                          \
	(1u << SECHO_FEAT_SET_TLS | 1u << SECHO_FEAT_SET_QUIC | 1u << SECHO_FEAT_SET_DNS |         \
	 1u << SECHO_FEAT_SET_HTTP)

/* Where each set's state lies: in a record's area, and in a slot's feature area. */
struct secho_feat_layout {
	uint32_t sets;                   /* bit set of the sets on */
	uint32_t opts;                   /* SECHO_FEAT_OPT_* of the sets on */
	uint32_t bytes;                  /* a record's area: a multiple of 8, 0 when none */
	uint32_t off[SECHO_FEAT_NSETS];  /* offsets in a record's area (sets that are on) */
	uint32_t pooled;                 /* the sets on whose states are lent from pools */
	uint32_t slot_bytes;             /* a slot's feature area: a multiple of 8 */
	uint32_t soff[SECHO_FEAT_NSETS]; /* offsets in a slot's area: the state, or for a
	                                  * pooled set its handle (uint32_t: index + 1, 0
	                                  * none) */
};

/* The layout of sets, with their options (SECHO_FEAT_OPT_*; unknown bits ignored). Can't
 * fail. */
void secho_feat_layout_make(uint32_t sets, struct secho_feat_layout *l);

/* A pooled set's states (and the table's outer pool, table.h): cap slots of stride bytes;
 * the free ones in a list through their first 4 bytes, the last given back first (its
 * lines are likely still in cache). Slots are named by handles: index + 1. */
struct secho_feat_pool {
	uint8_t *base;
	uint32_t stride, cap;
	uint32_t used;  /* slots handed out at least once */
	uint32_t free;  /* the last slot given back, + 1 (0: none) */
	uint32_t lent;  /* slots lent now */
	uint64_t empty; /* times a set that wanted a record found the pool empty (below) */
};

/* The slot of handle h (1..cap). */
static inline uint8_t *secho_feat_pool_slot(const struct secho_feat_pool *pl, uint32_t h)
{
	return pl->base + (size_t)(h - 1) * pl->stride;
}

/* A slot from pl: its handle, or 0 when pl is empty (counted in empty). Its bytes are as
 * the last user left them. */
static inline uint32_t secho_feat_pool_take(struct secho_feat_pool *pl)
{
	uint32_t h;

	if (pl->free) {
		h = pl->free;
		memcpy(&pl->free, secho_feat_pool_slot(pl, h), sizeof(pl->free));
	} else if (pl->used < pl->cap) {
		h = ++pl->used;
	} else {
		pl->empty++;
		return 0;
	}
	pl->lent++;
	return h;
}

/* Slot h back to pl. */
static inline void secho_feat_pool_give(struct secho_feat_pool *pl, uint32_t h)
{
	memcpy(secho_feat_pool_slot(pl, h), &pl->free, sizeof(pl->free));
	pl->free = h;
	pl->lent--;
}

/*
 * Done states: a pooled set's state that is done (it takes no more packets) and found
 * something is moved to the set's pool of done states, which keeps only the state's first
 * secho_feat_set_export_size() bytes: what the exporters read. The rest is the parser's
 * scratch, last in each struct (the TLS reassembly buffer, QUIC's CRYPTO stream, DNS's TCP
 * buffers, HTTP's line buffers). A done pool holds a state for a quarter of the entries; when it is
 * empty the state stays whole where it is. The handle of a done state has SECHO_FEAT_DONE_HANDLE
 * set.
 */
#define SECHO_FEAT_DONE_HANDLE 0x80000000u

struct secho_feat_pools {
	struct secho_feat_pool p[SECHO_FEAT_NSETS]; /* the pooled sets' (l->pooled) */
	struct secho_feat_pool d[SECHO_FEAT_NSETS]; /* their done states' (base NULL: none) */
};

/* Bytes of memory the pools of l take for cap states each, and their done pools (64-byte
 * aligned). */
size_t secho_feat_pools_size(const struct secho_feat_layout *l, uint32_t cap);

/* The pools of l over mem (secho_feat_pools_size(l, cap) bytes, 64-byte aligned; need not
 * be zeroed), cap states each. A table gives each pool as many states as it has entries:
 * a record holds at most one state of each set, so a pool is never empty when a set asks
 * (should it be, the set stays out of the record as one that found nothing, counted in
 * empty). Can't fail. */
void secho_feat_pools_init(struct secho_feat_pools *ps, const struct secho_feat_layout *l,
                           void *mem, uint32_t cap);

/* One packet of the flow (area: the slot's feature area, l->slot_bytes bytes; *live,
 * *decided and *done: the record's bit sets, all 0 when it starts): every set on that has
 * not decided decides (above; a pooled set that goes live borrows its state), and every
 * live set whose state is not done gets the packet. A set found done is added to *done,
 * and from then on its state is not read at all: most of a flow's packets come after its
 * application sets are done, and the state's line is a cache miss per set and packet on
 * many-flow traffic. Can't fail. */
void secho_feat_sets_packet(const struct secho_feat_layout *l, struct secho_feat_pools *ps,
                            uint8_t *area, uint32_t *live, uint32_t *decided, uint32_t *done,
                            const struct secho_feat_pkt *p);

/* Whether packet p, not counted yet, is to start a new record of its flow (a set that keeps
 * one record per session: wg, secho_feat_wg_new_session). Reads area only (live sets). */
bool secho_feat_sets_new_record(const struct secho_feat_layout *l, const uint8_t *area,
                                uint32_t live, const struct secho_feat_pkt *p);

/* The states of a record whose slot area is area and whose live sets are live: sec[i] for
 * every set i in live (the others NULL), valid until secho_feat_sets_release. */
void secho_feat_sets_sections(const struct secho_feat_layout *l, const struct secho_feat_pools *ps,
                              const uint8_t *area, uint32_t live,
                              const uint8_t *sec[SECHO_FEAT_NSETS]);

/* The record has left: its pooled states go back to their pools (the handles cleared).
 * Can't fail. */
void secho_feat_sets_release(const struct secho_feat_layout *l, struct secho_feat_pools *ps,
                             uint8_t *area, uint32_t live);

/* sec[i] = area + l->off[i] for every set on (a record's area in one block, as a ring's
 * copy or a test holds it). */
void secho_feat_sets_area(const struct secho_feat_layout *l, const uint8_t *area,
                          const uint8_t *sec[SECHO_FEAT_NSETS]);

/* Set's state in a record (struct secho_feat_X): sec[set] when the set is in live, else a
 * shared all-zero state (a set that found nothing). set must be on in l. */
const void *secho_feat_sets_state(const struct secho_feat_layout *l,
                                  const uint8_t *const sec[SECHO_FEAT_NSETS], uint32_t live,
                                  unsigned set);

/* Every set's JSON members (",\"name\":value", fjson.h) into buf[0..cap), for a record of
 * packets packets (both directions) whose TCP flags (both directions, ORed) are tcp_flags
 * and whose live sets are live: the statistics sets' export rules (secho_feat_X_keep) apply.
 * Bytes written, or -ENOSPC. */
int secho_feat_sets_json(const struct secho_feat_layout *l,
                         const uint8_t *const sec[SECHO_FEAT_NSETS], uint32_t live,
                         uint64_t packets, uint8_t tcp_flags, char *buf, size_t cap);

#endif
