/*
 * src/flow/core/table.h - the flow table: the Connection Tracking Table's software twin.
 *
 * What goes in, one way for each use:
 *   live       a burst of frames src/wire's dissector described (secho_flow_table_burst):
 *              the table makes their keys and hashes
 *   offline    frames prepared where the file is read (secho_flow_table_prepare: key and
 *              hash, maybe in another thread), then metered in bursts where the table
 *              lives (secho_flow_table_burst_prepared)
 *   by key     a packet already reduced to its key (secho_flow_table_packet): the reference
 *              comparisons of the tests, which model flows, not frames
 * One frame at a time is a burst of one. What comes out: flow records
 * (src/flow/core/record.h), handed to the emit callback whenever a record leaves the table.
 * docs/FLOW.md describes the design; in short:
 *
 *   buckets     128 bytes each: 8 signatures (32-bit hash, 0 = free) and the entry each
 *               used slot holds, one cache line to find a flow; then 8 expiry lower
 *               bounds (ms ticks) and which slots the timer wheel holds
 *   entries     128 bytes each, as many as slots, in one pool handed out densely (the
 *               last freed first): the key (canonical order in biflow mode),
 *               per-direction counters, TCP state. The memory a table touches grows with
 *               the flows it holds, not with its capacity
 *   extension   per entry, a second pool parallel to the entries (entry i's is extra[i], same
 *               index, handed out and freed with it): the record's L2-L4 fields every flow
 *               has, one cache line (struct secho_flow_xline, below: what a packet updates
 *               and what its direction's first packet writes), then the feature sets' area.
 *               Kept apart so that the entry stays two cache lines and a lookup reads no
 *               more than before; the burst asks for the extension's line with the entry
 *               (see "The extension" below)
 *   outer       per entry, a record's tunnel and MPLS fields (128 bytes), lent to the
 *               records whose packets carry them and given back when they leave (the last
 *               given back first): plain traffic never touches it
 *   cache       a small direct-mapped array of (signature, entry) in front of the buckets,
 *               the recently used flows (the CTT's on-chip cache); hit rate counted
 *   fragments   a bounded set-associative table: (addresses, protocol, IP id) of a first
 *               fragment -> its ports, kept for a bounded time for the later fragments
 *   wheel       a hashed timer wheel of bucket slots by the end bound of their records:
 *               SECHO_FLOW_WHEEL_SLOTS lists of 2^SECHO_FLOW_WHEEL_SHIFT ns of packet time
 *               each, in chunks of 15 slot numbers from a pool sized by the capacity
 *
 * Timeouts run on packet time, exactly: a record ends at min(start + active, last +
 * inactive); a packet at or after that time starts a new record, and
 * secho_flow_table_expire exports the records whose time has come from the wheel, at most
 * one wheel slot (16.8 ms of packet time) late. The wheel is lazy: a packet never moves
 * its record; a record is put in the wheel when its slot of the bucket is taken, and when
 * its wheel slot comes due it leaves, or goes back in at its new end (a busy flow costs
 * one re-insertion per inactive timeout, not one per packet). End reasons:
 * SECHO_FLOW_END_* (record.h): a flow that saw a TCP
 * FIN or RST ends as "end of flow" whenever it leaves (timeout, end of input, or a SYN that
 * starts a new connection on its key); a full bucket evicts, in this order, a record whose
 * time has passed, a TCP flow that has ended (both: no information lost), or the least
 * recently used record ("lack of resources", counted).
 *
 * The extension, and what comes after it (issue 21, src/flow/feature/feature.h): the pool is
 * laid out as sections, each a fixed-size per-flow state, one after the other in a slot of
 * stride S bytes (a multiple of 64): struct secho_flow_xline at offset 0 (S = 64 without
 * feature sets), then the feature sets' sections: cfg gets the set of features on; init
 * computes each section's offset (its state's size rounded up to 8, the sets in a fixed
 * order, the stride rounded up to 64) and secho_flow_table_mem_size grows by (S' - 64) *
 * capacity; a section is made ready when its set takes its record, updated after the
 * counters (a set's packet function, given its section and the packet's direction), and
 * read when the record leaves (the record then carries pointers to the sections, valid
 * during emit, instead of a copy: the copy is for struct secho_flow_extra only). A set that
 * is off has no section and costs nothing; entries stay 128 bytes whatever is on.
 *
 * Memory: the caller's, sized by secho_flow_table_mem_size(), zeroed by the caller (fresh
 * anonymous mmap or calloc), never allocated or freed here. Nothing is allocated per
 * packet. One thread owns a table; the counters may be read by another thread while it
 * runs (each is a plain 64-bit store by the owner; a reader sees a value at most one packet
 * old).
 */
#ifndef SECHO_FLOW_TABLE_H
#define SECHO_FLOW_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flow/core/hash.h"
#include "flow/core/record.h"
#include "flow/feature/sets.h"
#include "secho/dissect.h"

#define SECHO_FLOW_BUCKET          8 /* entries per bucket */
#define SECHO_FLOW_MAX_FLOWS       (1u << 30)
#define SECHO_FLOW_CACHE_DEFAULT   4096u          /* first-level cache slots */
#define SECHO_FLOW_FRAGS_DEFAULT   4096u          /* remembered first fragments */
#define SECHO_FLOW_FRAG_TIMEOUT_NS 30000000000ull /* 30 s, as Linux's ipfrag_time */
/* The timer wheel: 4096 slots of 2^24 ns (16.8 ms) of packet time, 68.7 s a turn; a record
 * whose end is further away is looked at once a turn until it is near. */
#define SECHO_FLOW_WHEEL_SHIFT 24
#define SECHO_FLOW_WHEEL_SLOTS 4096u
/* Timeouts are kept below 2^30 ticks of 2^20 ns (13 days) so that 32-bit tick
 * comparisons never wrap; the command line allows up to one day. */
#define SECHO_FLOW_MAX_TIMEOUT_NS (86400ull * 1000000000ull)

/*
 * Why a frame is in no flow: the dissector's reasons (the frame could not be described),
 * then the meter's own. Index = the dissector's reason for 1..SECHO_DISSECT_REASON_COUNT-1.
 */
#define SECHO_FLOW_IGNORE_EXTRA(X)                                                                 \
	X(NOT_IP, "not_ip", "not an IPv4 or IPv6 packet (ARP, other EtherTypes)")                  \
	X(FRAG_ORPHAN, "frag_orphan", "later fragment whose first fragment is not remembered")

enum secho_flow_ignore {
	SECHO_FLOW_IGN_FIRST_EXTRA = SECHO_DISSECT_REASON_COUNT - 1,
#define SECHO_FLOW_IGN_X(name, id, text) SECHO_FLOW_IGN_##name,
	SECHO_FLOW_IGNORE_EXTRA(SECHO_FLOW_IGN_X)
#undef SECHO_FLOW_IGN_X
	        SECHO_FLOW_IGN_END
};
/* Slot 0 (the dissector's "ok") is unused. */
#define SECHO_FLOW_IGN_COUNT SECHO_FLOW_IGN_END

/* "ip4_ihl", ..., "not_ip", "frag_orphan"; NULL for 0 and out of range. */
const char *secho_flow_ignore_name(unsigned i);
const char *secho_flow_ignore_text(unsigned i);

/* What the table counts (X(NAME, "name", "text")). */
#define SECHO_FLOW_COUNTERS(X)                                                                     \
	X(FRAMES, "frames", "frames handed to the table")                                          \
	X(PACKETS, "packets", "packets counted in a flow")                                         \
	X(OCTETS, "octets", "IP octets counted in flows (IP total lengths)")                       \
	X(IGNORED, "ignored", "frames in no flow (ignored_* says why)")                            \
	X(IGNORED_OCTETS, "ignored_octets", "bytes of the ignored frames as on the wire")          \
	X(FLOWS, "flows", "records started (new flows and active-timeout continuations)")          \
	X(END_IDLE, "end_idle", "records ended by the inactive timeout (reason 1)")                \
	X(END_ACTIVE, "end_active", "records ended by the active timeout (reason 2)")              \
	X(END_EOF, "end_eof", "records of TCP flows that saw FIN or RST (reason 3)")               \
	X(END_FORCED, "end_forced", "records ended by end of input or shutdown (reason 4)")        \
	X(END_RESOURCE, "end_resource", "records evicted from a full bucket (reason 5)")           \
	X(SYN_REUSE, "syn_reuse", "SYNs that started a new flow on a key that saw FIN/RST")        \
	X(CACHE_HITS, "cache_hits", "packets whose flow was found in the first-level cache")       \
	X(CACHE_MISSES, "cache_misses", "packets that went to the buckets")                        \
	X(FRAG_FIRST, "frag_first", "first fragments remembered for their later fragments")        \
	X(FRAG_JOINED, "frag_joined", "later fragments counted in their first fragment's flow")    \
	X(FRAG_REPLACED, "frag_replaced", "first fragments forgotten early (fragment table full)")

enum secho_flow_counter {
#define SECHO_FLOW_CNT_X(name, id, text) SECHO_FLOW_CNT_##name,
	SECHO_FLOW_COUNTERS(SECHO_FLOW_CNT_X)
#undef SECHO_FLOW_CNT_X
	        SECHO_FLOW_CNT_COUNT
};

const char *secho_flow_counter_name(enum secho_flow_counter c);
const char *secho_flow_counter_text(enum secho_flow_counter c);

struct secho_flow_counters {
	uint64_t c[SECHO_FLOW_CNT_COUNT];
	uint64_t ignored[SECHO_FLOW_IGN_COUNT];
	uint64_t active; /* records in the table now */
};

/* Add every counter of from to into. Can't fail. */
void secho_flow_counters_add(struct secho_flow_counters *into,
                             const struct secho_flow_counters *from);

typedef void (*secho_flow_emit_fn)(void *ctx, const struct secho_flow_rec *rec);

/*
 * The offload tier's hooks (src/flow/offload/offload_tier.h; docs/FLOW.md, "The meter with the
 * offload tier"). A flow whose record has counted cfg.offload_after packets (both
 * directions; not a TCP flow that saw FIN or RST) is handed to offload() once; from then
 * on the tier counts most of its packets (not those after the record's timeouts: the
 * table ends the record at them, as without a tier), and the table's idea of when it was last seen
 * comes from secho_flow_table_offload_seen() (the tier's batch reads). When that idea says
 * the flow's time may have come, the table asks peek() for its last-seen time in the tier
 * (the flow stays there if it was not idle after all). When its record leaves (for any
 * reason) the table calls reclaim(), which takes the flow out of the tier with the tier's
 * counters, and adds them to its own: the record is whole. A flow taken back while it
 * goes on (an active timeout cut its record) stays with the table for as long as it is
 * there (returned() counts it); a flow offload() refused too. Key ck: as the table keeps
 * it (canonical for biflows). In the tier's counters d[0] runs from ck.src to ck.dst.
 */
struct secho_flow_offload_hooks {
	/* true: offloaded. until_ns: the record's active timeout (start + active), after
	 * which the tier hands the flow's packets to the table again */
	bool (*offload)(void *ctx, const struct secho_flow_key *ck, uint64_t until_ns);
	/* 0 with *last_ns the flow's latest packet in the tier (0: none yet), or -errno */
	int (*peek)(void *ctx, const struct secho_flow_key *ck, uint64_t *last_ns);
	int (*reclaim)(void *ctx, const struct secho_flow_key *ck,
	               struct secho_flow_dir d[2]); /* 0, or -errno with d zeroed */
	void (*returned)(void *ctx);
};

struct secho_flow_table_cfg {
	uint32_t flows;           /* capacity: rounded up to whole buckets (>= 8) */
	bool uniflow;             /* one record per direction (default: RFC 5103 biflows) */
	uint64_t active_ns;       /* 0 = 300 s */
	uint64_t inactive_ns;     /* 0 = 30 s */
	uint32_t cache_slots;     /* power of two; 0 = SECHO_FLOW_CACHE_DEFAULT */
	uint32_t frag_slots;      /* multiple of 4; 0 = SECHO_FLOW_FRAGS_DEFAULT */
	uint64_t frag_timeout_ns; /* 0 = SECHO_FLOW_FRAG_TIMEOUT_NS */
	enum secho_flow_hash_kind hash;
	uint64_t seed;           /* the hash key: draw it at random */
	secho_flow_emit_fn emit; /* called for every record that leaves the table */
	void *ctx;
	/* The offload tier: NULL, or its hooks, their context, and the packets a record counts
	 * before its flow is offloaded (>= 1). */
	const struct secho_flow_offload_hooks *offload;
	void *offload_ctx;
	uint32_t offload_after;
	/* The feature sets on (1u << SECHO_FEAT_SET_*, src/flow/feature/sets.h; 0: none): each a
	 * section of the extension slot after the 64-byte struct secho_flow_xline */
	uint32_t features;
};

struct flow_bucket;
struct flow_entry;
struct flow_frag;
struct flow_chunk;
struct flow_wheel_slot;

/* The table's state. Fields are private (src/flow/core/table.c). */
struct secho_flow_table {
	struct secho_flow_table_cfg cfg;
	struct secho_flow_hasher hasher;
	struct flow_bucket *buckets;
	struct flow_entry *entries;
	uint8_t *extra;                     /* the extension: entry i's line (struct
	                                     * secho_flow_xline) at extra + i * 64
	                                     * (secho_flow_table_slot) */
	uint8_t *farea;                     /* with feature sets on, entry i's feature area
	                                     * at farea + i * fstride
	                                     * (secho_flow_table_area) */
	size_t fstride;                     /* the feature area, rounded up to 64; 0: none */
	struct secho_feat_pool outer;       /* a record's tunnel and MPLS part (struct
	                                     * flow_outer, table.c), one per entry */
	struct secho_feat_layout feat;      /* the feature sections (sets 0: none) */
	struct secho_feat_pools feat_pools; /* the large sets' states (sets.h), one per entry */
	size_t feat_at;                     /* the feature memory's offset in the table's memory
	                                     * (farea, then feat_pools: last) */
	uint64_t *cache;                    /* sig << 32 | (entry index + 1); 0 = empty */
	struct flow_frag *frags;
	uint32_t *seen; /* per entry: offloaded, the tier's last-seen time in ticks rounded
	                 * up (0 = none); free, the next free entry + 1 (0 = none) */
	struct flow_wheel_slot *wheel; /* SECHO_FLOW_WHEEL_SLOTS lists of chunks */
	struct flow_chunk *chunks;     /* the wheel's pool of chunks */
	uint32_t nbuckets, cache_mask, nfragsets;
	uint32_t pool_used;   /* entries handed out from the pool at least once */
	uint32_t free_head;   /* the last entry freed, + 1 (0: none) */
	uint32_t nchunks;     /* chunks in the pool */
	uint32_t chunks_used; /* chunks handed out from the pool at least once */
	uint32_t chunk_free;  /* the last chunk freed, + 1 (0: none) */
	bool wheel_on;        /* wheel_next is set */
	uint64_t clock_ns;    /* latest packet time seen */
	uint64_t wheel_next;  /* the first wheel period (time >> SECHO_FLOW_WHEEL_SHIFT) not
	                       * yet expired */
	struct secho_flow_counters cnt;
};

/* Bytes of caller memory for cfg (0 when cfg is out of range, also when the extension pool,
 * capacity x stride, with the feature sets' pools would be over SECHO_FLOW_EXT_MAX). */
size_t secho_flow_table_mem_size(const struct secho_flow_table_cfg *cfg);

/* The extension slot's stride for the feature sets features: 64 bytes of struct
 * secho_flow_xline, then the slot's feature area (sets.h: the small sets' states, the
 * large sets' handles), rounded up to 64. The outer pool and the large sets' pools come on
 * top. */
size_t secho_flow_table_stride(uint32_t features);

/* Bytes per entry beyond the entry itself: the extension slot (its stride), the outer pool's
 * part and, for each large feature set on, a state in its pool and its share of the done
 * pool (sets.h, SECHO_FEAT_POOLED, "Done states"). */
size_t secho_flow_table_ext_bytes(uint32_t features);

/* The extension pool's largest size: 1 TiB (a bound that keeps every offset well inside
 * size_t and refuses a --flows x --features product no machine holds). */
#define SECHO_FLOW_EXT_MAX (1ull << 40)

/*
 * The first line of entry idx's extension slot: the record's L2-L4 fields that every flow
 * has (exported as struct secho_flow_extra, record.h, which table.c fills from it). What
 * only tunnelled or labelled traffic has (outer addresses and length, tunnel id, MPLS
 * label stacks: 105 bytes) is lent from the table's outer pool, one per entry, to the
 * records whose packets carry it: a plain flow's fields take one line of memory, not three
 * (on 10M packets of light traffic the three lines were 113 of the meter's 230 MB
 * resident, each page zeroed by the kernel at its first touch: docs/PERFORMANCE.md, "The
 * record's fields in one line").
 */
struct secho_flow_xline {
	uint64_t tcp_options[2]; /* record.h's fields of the same names */
	uint8_t ttl_min[2], ttl_max[2], tos[2], ip_flags[2];
	uint16_t tcp_win[2], tcp_mss[2];
	uint16_t syn_size;
	uint8_t seen;          /* bit dir: the direction's first packet was counted */
	uint8_t rsvd;          /* zero */
	uint32_t feat_live;    /* as record.h's */
	uint32_t feat_decided; /* as record.h's */
	uint8_t src_mac[6], dst_mac[6];
	uint32_t outer;     /* the record's tunnel and MPLS part in the outer pool, + 1; 0: none */
	uint32_t feat_done; /* the live sets that take no more packets (sets.h) */
};
_Static_assert(sizeof(struct secho_flow_xline) == 64, "one cache line");

/* Entry idx's extension line (struct secho_flow_xline). The lines are an array of their
 * own, the feature areas another (after every other part of the table, then the pools:
 * secho_flow_table_feature_at: the feature memory is one range, which a caller can map
 * apart from the table's own parts). */
#define SECHO_FLOW_EXTRA_BYTES 64u
static inline uint8_t *secho_flow_table_slot(const struct secho_flow_table *t, uint32_t idx)
{
	return t->extra + (size_t)idx * SECHO_FLOW_EXTRA_BYTES;
}

/* Entry idx's feature area (sets.h; t->fstride bytes; with no set on, none). */
static inline uint8_t *secho_flow_table_area(const struct secho_flow_table *t, uint32_t idx)
{
	return t->farea + (size_t)idx * t->fstride;
}

/*
 * Set up t over mem[0..len) (len >= secho_flow_table_mem_size(cfg), 64-byte aligned,
 * zeroed). Returns 0, or -EINVAL (cfg out of range, memory too small or misaligned),
 * -ENOTSUP (hash unavailable on this CPU).
 */
int secho_flow_table_init(struct secho_flow_table *t, const struct secho_flow_table_cfg *cfg,
                          void *mem, size_t len);

/* Entries the table holds (cfg.flows rounded up to whole buckets). */
uint32_t secho_flow_table_capacity(const struct secho_flow_table *t);

/* Where in the table's memory the feature memory starts: the entries' feature areas, then
 * the sets' pools, to its end (64-byte aligned; nothing a packet reads without sets on is
 * after it). */
static inline size_t secho_flow_table_feature_at(const struct secho_flow_table *t)
{
	return t->feat_at;
}

/* A dissected frame of a burst (secho_flow_table_burst). */
struct secho_flow_frame {
	const uint8_t *data;
	uint32_t wirelen; /* >= the caplen it was dissected with */
	enum secho_dissect_reason reason;
	uint64_t ts_ns;
	struct secho_dissect d;
};

#define SECHO_FLOW_TABLE_BURST 32u

/*
 * Meter up to SECHO_FLOW_TABLE_BURST frames, with the same result as one at a time
 * (bursts of one, in order), but with the memory the burst needs requested
 * ahead: every packet's cache slot as soon as its hash is known, the entry it names (or
 * else its bucket, then the entry matched there) some packets before its update, the
 * updates in order, so that the cache misses of different packets overlap. Can't fail.
 */
void secho_flow_table_burst(struct secho_flow_table *t, const struct secho_flow_frame *f,
                            unsigned n);

/*
 * A frame reduced to what the table needs of every packet (secho_flow_table_prepare): made
 * where the frame is read, metered where the table lives (secho_flow_table_burst_prepared),
 * maybe by another thread (the offline workers each prepare and meter their own frames:
 * src/flow/meter/offline.c).
 */
#define SECHO_FLOW_PREP_PLAIN      0 /* a packet of a flow */
#define SECHO_FLOW_PREP_FRAG_FIRST 1 /* a first fragment: a packet of a flow, remembered */
#define SECHO_FLOW_PREP_FRAG_LATER 2 /* a later fragment: joins its first fragment's flow */
#define SECHO_FLOW_PREP_IGNORED    3 /* in no flow */

/*
 * The frame itself is not copied: the record's L2-L4 fields (struct secho_flow_extra,
 * record.h) and the feature sets' payload are read from it when the packet is metered,
 * through frame and the dissector's offsets kept here, and only what a packet needs: TTL,
 * the TCP option kinds and the outer length per packet; MACs, ToS, flags, window, MSS, MPLS
 * stack and outer addresses only for the direction's first packet of its record. A copy of
 * them (96 bytes) in every prepared frame cost 4-8% on many-flow traffic
 * (docs/PERFORMANCE.md, "What plain traffic pays for tunnels, the record's L2-L4 fields and
 * --features").
 *
 * Lifetime: the frame (frame[0..caplen)) must stay in memory and unchanged from
 * secho_flow_table_prepare until the prepared frame has been metered. Who guarantees it:
 *   - secho_flow_table_burst prepares and meters within the call (live: the frames are in
 *     the ring, handed back to the kernel only after it returns);
 *   - offline (src/flow/meter/offline.c), each worker reads a burst with its reader pinned
 *     (secho_capfile_pin: the burst's frames stay in the reader's buffers until the next
 *     pin) and meters it before it reads on;
 *   - a caller of secho_flow_table_burst_prepared of its own keeps the frames as long.
 * Reads of the frame at metering stay within caplen, as the prepare's did: the headers the
 * dissector read, the TCP options bounded by caplen.
 */
struct secho_flow_prep {
	struct secho_flow_key key; /* PLAIN, FRAG_FIRST: as the table keeps it (canonical order
	                            * for biflows); FRAG_LATER: the packet's own direction,
	                            * without ports */
	uint32_t octets;           /* the IP length; IGNORED: the frame's length on the wire */
	uint64_t h;                /* PLAIN, FRAG_FIRST: the hash of key */
	uint64_t ts_ns;            /* packet time */
	uint64_t clock_ns;         /* the packet clock at this packet: the latest time of the
	                            * input up to it (the reader raises it from ts_ns; the table
	                            * judges the packet's timeouts at it, docs/FLOW.md "Time") */
	uint32_t frag_id;          /* fragments: the IP identification */
	uint8_t kind;              /* SECHO_FLOW_PREP_* */
	uint8_t swapped;           /* key runs against the packet (biflows) */
	uint8_t tcp_flags;         /* TCP with its header, else 0 */
	uint8_t why;               /* IGNORED: the index of its ignored counter */
	/* Not IGNORED: where the rest is read when the packet is metered (see above) */
	const uint8_t *frame;
	uint32_t caplen;          /* bytes at frame that may be read */
	uint32_t outer_ip_len;    /* tunnelled: the outermost IP packet's length, else 0 */
	uint32_t l4_len;          /* the dissector's: bytes from l4_off to the IP packet's end */
	uint16_t l3_off, l4_off;  /* the dissector's offsets (innermost packet) */
	uint16_t inner_l2_off;    /* the innermost Ethernet header (0: the frame's own) */
	uint16_t mpls_off;        /* the top label stack entry (nmpls > 0) */
	uint16_t outer_l3_off;    /* the outermost IP header (outer_ip_version != 0) */
	uint16_t dflags;          /* the dissector's SECHO_DISSECT_F_* */
	uint8_t tcp_doff;         /* TCP with its header (not a later fragment), else 0 */
	uint8_t nmpls;            /* label stack entries kept, <= SECHO_FLOW_MPLS_MAX */
	uint8_t tun_flags;        /* tunnelled: SECHO_TUN_F_* */
	uint8_t outer_ip_version; /* tunnelled: 4 or 6, else 0 */
};
_Static_assert(sizeof(struct secho_flow_prep) <= 128, "one per frame: two cache lines at most");

/*
 * Prepare one frame, described by r and *d (secho_dissect_snap of frame[0..caplen); wirelen
 * its length on the wire), for a table of t's configuration (mode, hash and seed): t is only
 * read, and may be another thread's table of the same configuration. Keeps frame and caplen
 * in *p (the lifetime rule above); neither here nor when *p is metered is a byte of frame at
 * or beyond caplen read (TCP options past a snap length are not seen). Can't fail.
 */
void secho_flow_table_prepare(const struct secho_flow_table *t, const uint8_t *frame,
                              uint32_t caplen, enum secho_dissect_reason r,
                              const struct secho_dissect *d, uint32_t wirelen, uint64_t ts_ns,
                              struct secho_flow_prep *p);

/*
 * Meter up to SECHO_FLOW_TABLE_BURST prepared frames, with the same result as one at a time,
 * their memory requested ahead as in secho_flow_table_burst (the cache slots 16 packets
 * before their updates). Can't fail.
 */
void secho_flow_table_burst_prepared(struct secho_flow_table *t, const struct secho_flow_prep *p,
                                     unsigned n);

/* A packet reduced to what the table keeps (unit tests, the reference comparison). */
struct secho_flow_pkt {
	struct secho_flow_key key; /* the packet's own direction */
	uint64_t ts_ns;
	uint32_t octets;
	uint8_t tcp_flags; /* 0 unless key.proto is TCP */
};

/* Meter one packet. Can't fail. */
void secho_flow_table_packet(struct secho_flow_table *t, const struct secho_flow_pkt *p);

/*
 * Time is now_ns (packet time offline, also of frames another worker meters; the clock
 * live): the table's clock moves to it (never back), and the records whose time has come
 * are exported: those in the wheel slots whose time has wholly passed (a record whose end
 * is in the current 16.8 ms slot waits for the next call after it). Costs the records it
 * looks at, not the table's size. Cheap to call often (per burst). Can't fail.
 */
void secho_flow_table_expire(struct secho_flow_table *t, uint64_t now_ns);

/*
 * End of input or shutdown: first every record whose time has come by the table's clock
 * (the latest packet or secho_flow_table_expire time) is exported with its timeout reason (an exact
 * full sweep), then every other record with SECHO_FLOW_END_FORCED (or END_EOF for a TCP flow that
 * saw FIN/RST). The table is empty afterwards and may be used again. Can't fail.
 */
void secho_flow_table_flush(struct secho_flow_table *t);

/*
 * The offload tier read flow ck (as the table keys it) in its map with last_ns the latest
 * of its packets there: the table's idea of when the flow was last seen moves up to it, so
 * that its inactive timeout waits for it. Returns true when ck is an offloaded flow of this
 * table. Can't fail.
 */
bool secho_flow_table_offload_seen(struct secho_flow_table *t, const struct secho_flow_key *ck,
                                   uint64_t last_ns);

#endif
