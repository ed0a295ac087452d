/*
 * src/flow/core/table.c - the flow table (contract: src/flow/core/table.h; design: docs/FLOW.md).
 *
 * A packet's way through it:
 *   1. its key, in canonical order for biflows (secho_flow_key_canon), and its hash: the
 *      high 32 bits pick the bucket (multiply-shift, any bucket count), the low 32 bits are
 *      the signature (0 is "free", so a zero signature is made 1)
 *   2. the first-level cache slot of that signature: a hit names the entry directly
 *   3. otherwise the bucket's 8 signatures, then the full key of each match
 *   4. found: if its time has come (min(start + active, last + inactive) <= packet time) or
 *      it is an ended TCP flow and this is a SYN, the record leaves and a new one starts in
 *      the same entry with this packet; then the packet is counted in its direction
 *   5. not found: a free slot of the bucket, or a victim (see pick_victim)
 *
 * Time: records keep ns; buckets keep 32-bit ticks of 2^20 ns (about 1 ms) as lower bounds
 * of each entry's end (due[]: what a full bucket's eviction reads first). Expiry is a
 * hashed timer wheel of bucket slots ("cells", bucket * 8 + slot), kept lazily: a cell is
 * put in the wheel at its bound when its slot is taken and it is not there already; a
 * packet never moves it (end times only grow: docs/FLOW.md, "Timeouts"), so the per-packet
 * path never touches the wheel. When a cell's wheel slot has passed, the cell is looked at:
 * a free one leaves the wheel, a record whose time has come is exported and leaves, any
 * other gets its exact bound and goes back in there. A cell is in the wheel at most once
 * (the bucket's `queued` bit), at or before its bound: a record started in a cell that is
 * still queued (its old record evicted or ended by a packet) keeps the old place, which is
 * no later than its own bound (both were at most the clock + the shorter timeout).
 */
#include "flow/core/table.h"

#include <errno.h>
#include <string.h>

#define TICK_SHIFT 20

/*
 * Two cache lines: the first is all a lookup reads (the signatures, and the entry each
 * used slot holds: an index into the entry pool), the second what the sweep and a new
 * flow use (the bounds). A bucket's entries are not beside it: they are taken from one
 * pool, densely, as flows come (entry_alloc), so that the memory a table touches (and the
 * kernel zeroes) grows with the flows it holds, not with its capacity: a million-flow
 * table holding 50,000 flows touches 6 MiB of entries, not 128 MiB.
 */
struct flow_bucket {
	uint32_t sig[SECHO_FLOW_BUCKET];
	uint32_t idx[SECHO_FLOW_BUCKET]; /* the entry of a used slot (sig != 0) */
	uint32_t due[SECHO_FLOW_BUCKET]; /* tick lower bound of the entry's end time */
	uint32_t queued;                 /* bit s: slot s is in the timer wheel */
	uint32_t pad[SECHO_FLOW_BUCKET - 1];
};
_Static_assert(sizeof(struct flow_bucket) == 128, "two cache lines");
_Static_assert(SECHO_FEAT_NSETS == SECHO_FLOW_REC_FEAT_SETS, "record.h counts the sets");

#define F_FWD_SWAPPED 0x01 /* biflow: forward (first packet) runs against the canonical key */
#define F_ENDED       0x02 /* a TCP FIN or RST was seen */
#define F_OFFLOADED   0x04 /* in the offload tier (cfg.offload): its counters are partly there */
#define F_NO_OFFLOAD  0x08 /* came back from the tier, or was refused: stays in the table */

struct flow_dir_state {
	uint64_t packets, octets, first, last;
};

/*
 * An entry holds no signature of its own (the bucket's sig[] has it): a cache slot names
 * only a live entry (slot_free clears the one that names it), so a cache hit is checked by
 * the key alone. The tier's last-seen time is beside the pool (t->seen, by entry index),
 * read only for an offloaded entry. Both left the entry when the key grew by its tunnel
 * fields (44 to 52 bytes): start_ns cannot be derived from the directions' first times
 * (it is the packet clock when the record started, d[].first the packets' own times, which
 * may be earlier when time goes backwards, and reclaimed offload counters can lower them).
 */
struct flow_entry {
	struct secho_flow_key key; /* canonical order (biflows) or as seen (uniflows) */
	uint8_t flags;             /* F_* */
	uint8_t tcp[2];            /* OR of the TCP flags: [0] forward, [1] reverse */
	uint8_t pad;
	uint64_t start_ns; /* the record's first packet */
	struct flow_dir_state d[2];
};
_Static_assert(sizeof(struct flow_entry) == 128, "two cache lines");

/* A record's tunnel and MPLS fields (record.h's of the same names), lent from the table's
 * outer pool to records whose packets carry them (table.h, struct secho_flow_xline). */
struct flow_outer {
	uint64_t bytes_outer[2];
	uint32_t tun_id;
	uint8_t tun_type, tun_flags, outer_ip_version;
	uint8_t nmpls[2];
	uint8_t outer_src[16], outer_dst[16];
	uint8_t mpls[2][SECHO_FLOW_MPLS_MAX][3];
	uint8_t pad[23];
};
_Static_assert(sizeof(struct flow_outer) == 128, "two cache lines");

/* A remembered first fragment: its lookup key (frag_key: a flow key whose ports hold the
 * IP id; IPv4: protocol too; IPv6 fragments are tied by addresses and id, RFC 8200 4.5),
 * kept field by field without the key's always-zero parts so that it fits a cache line
 * beside what the later fragments get (frag_match compares the two). */
struct flow_frag {
	uint8_t src[16], dst[16];
	uint32_t id; /* the lookup key's ports: the IP id */
	uint32_t tun_id;
	uint16_t vlan, vlan_inner;
	uint8_t ip_version, kproto, tun_type; /* kproto: the lookup key's protocol */
	uint8_t proto;                        /* the first fragment's transport protocol */
	uint16_t sport, dport, icmp;          /* what the later fragments' flow key gets */
	uint16_t used;
	uint64_t expires_ns;
};
_Static_assert(sizeof(struct flow_frag) == 64, "one cache line");
#define FRAG_WAYS 4

/*
 * The timer wheel (secho_flow_table_expire): SECHO_FLOW_WHEEL_SLOTS lists, one per period of
 * 2^SECHO_FLOW_WHEEL_SHIFT ns (period p in slot p mod SLOTS), of cells (bucket * 8 + slot)
 * in chunks of 15 from one pool: a list is read 15 cells to a cache line, and all but its
 * first chunk are full. Each cell is in the wheel at most once, so the lists hold at most
 * capacity cells: capacity / 15 full chunks and one part-filled per list are enough (the
 * cells being looked at are copied out of their chunks, which are freed first), two more
 * to spare (wheel_chunks).
 */
#define CHUNK_CELLS 15
struct flow_chunk {
	uint32_t cell[CHUNK_CELLS];
	uint32_t next; /* the next chunk + 1 (0: none) */
};
_Static_assert(sizeof(struct flow_chunk) == 64, "one cache line");

struct flow_wheel_slot {
	uint32_t head; /* the first chunk + 1 (0: empty); the only one that may be part-filled */
	uint32_t n;    /* cells in the first chunk */
};
#define WHEEL_MASK (SECHO_FLOW_WHEEL_SLOTS - 1)
_Static_assert((SECHO_FLOW_WHEEL_SLOTS & WHEEL_MASK) == 0, "a power of two");

/* ---- names ---- */

static const char *const cnt_names[] = {
#define SECHO_FLOW_CNT_X(name, id, text) [SECHO_FLOW_CNT_##name] = id,
        SECHO_FLOW_COUNTERS(SECHO_FLOW_CNT_X)
#undef SECHO_FLOW_CNT_X
};
static const char *const cnt_texts[] = {
#define SECHO_FLOW_CNT_X(name, id, text) [SECHO_FLOW_CNT_##name] = text,
        SECHO_FLOW_COUNTERS(SECHO_FLOW_CNT_X)
#undef SECHO_FLOW_CNT_X
};
static const char *const ign_names[] = {
#define SECHO_FLOW_IGN_X(name, id, text) [SECHO_FLOW_IGN_##name] = id,
        SECHO_FLOW_IGNORE_EXTRA(SECHO_FLOW_IGN_X)
#undef SECHO_FLOW_IGN_X
};
static const char *const ign_texts[] = {
#define SECHO_FLOW_IGN_X(name, id, text) [SECHO_FLOW_IGN_##name] = text,
        SECHO_FLOW_IGNORE_EXTRA(SECHO_FLOW_IGN_X)
#undef SECHO_FLOW_IGN_X
};

const char *secho_flow_counter_name(enum secho_flow_counter c)
{
	return (unsigned)c < SECHO_FLOW_CNT_COUNT ? cnt_names[c] : NULL;
}

const char *secho_flow_counter_text(enum secho_flow_counter c)
{
	return (unsigned)c < SECHO_FLOW_CNT_COUNT ? cnt_texts[c] : NULL;
}

const char *secho_flow_ignore_name(unsigned i)
{
	if (i == 0 || i >= SECHO_FLOW_IGN_COUNT)
		return NULL;
	if (i < SECHO_DISSECT_REASON_COUNT)
		return secho_dissect_reason_name((enum secho_dissect_reason)i);
	return ign_names[i];
}

const char *secho_flow_ignore_text(unsigned i)
{
	if (i == 0 || i >= SECHO_FLOW_IGN_COUNT)
		return NULL;
	if (i < SECHO_DISSECT_REASON_COUNT)
		return secho_dissect_reason_text((enum secho_dissect_reason)i);
	return ign_texts[i];
}

/* A table's counters are written by its worker alone and read meanwhile by the thread
 * that reports (secho_flow_counters_add: the periodic statistics and the sinks' ticks): a
 * relaxed atomic store (on x86-64 the same plain store) makes those reads well defined. */
static inline void cnt_add(uint64_t *c, uint64_t v)
{
	__atomic_store_n(c, *c + v, __ATOMIC_RELAXED);
}

void secho_flow_counters_add(struct secho_flow_counters *into,
                             const struct secho_flow_counters *from)
{
	/* from may be a table another thread is counting in (cnt_add): relaxed loads */
	for (unsigned i = 0; i < SECHO_FLOW_CNT_COUNT; i++)
		into->c[i] += __atomic_load_n(&from->c[i], __ATOMIC_RELAXED);
	for (unsigned i = 0; i < SECHO_FLOW_IGN_COUNT; i++)
		into->ignored[i] += __atomic_load_n(&from->ignored[i], __ATOMIC_RELAXED);
	into->active += __atomic_load_n(&from->active, __ATOMIC_RELAXED);
}

/* ---- layout ---- */

static bool cfg_ok(const struct secho_flow_table_cfg *cfg)
{
	uint32_t cs = cfg->cache_slots ? cfg->cache_slots : SECHO_FLOW_CACHE_DEFAULT;
	uint32_t fs = cfg->frag_slots ? cfg->frag_slots : SECHO_FLOW_FRAGS_DEFAULT;

	if (cfg->offload && (!cfg->offload_after || !cfg->offload->offload || !cfg->offload->peek ||
	                     !cfg->offload->reclaim || !cfg->offload->returned))
		return false;
	if (!cfg->offload && cfg->offload_after) /* a threshold without the tier's hooks */
		return false;
	return cfg->flows >= 1 && cfg->flows <= SECHO_FLOW_MAX_FLOWS &&
	       cfg->active_ns <= SECHO_FLOW_MAX_TIMEOUT_NS &&
	       cfg->inactive_ns <= SECHO_FLOW_MAX_TIMEOUT_NS &&
	       cfg->frag_timeout_ns <= SECHO_FLOW_MAX_TIMEOUT_NS && cs <= (1u << 24) &&
	       (cs & (cs - 1)) == 0 && fs <= (1u << 24) && fs % FRAG_WAYS == 0 && cfg->emit;
}

static uint32_t nbuckets_for(uint32_t flows)
{
	return (uint32_t)(((uint64_t)flows + SECHO_FLOW_BUCKET - 1) / SECHO_FLOW_BUCKET);
}

/* The wheel's chunks for nb buckets: every cell once, a part-filled first chunk per list,
 * and two to spare. */
static uint32_t wheel_chunks(uint32_t nb)
{
	uint64_t cells = (uint64_t)nb * SECHO_FLOW_BUCKET;
	return (uint32_t)((cells + CHUNK_CELLS - 1) / CHUNK_CELLS + SECHO_FLOW_WHEEL_SLOTS + 2);
}

size_t secho_flow_table_stride(uint32_t features)
{
	struct secho_feat_layout l;

	secho_feat_layout_make(features, &l);
	return ((size_t)SECHO_FLOW_EXTRA_BYTES + l.slot_bytes + 63) & ~(size_t)63;
}

/* The feature sets' pools for a table of nb buckets: a state of each large set per entry. */
static size_t pools_size(uint32_t features, size_t nb)
{
	struct secho_feat_layout l;

	secho_feat_layout_make(features, &l);
	return secho_feat_pools_size(&l, (uint32_t)(nb * SECHO_FLOW_BUCKET));
}

size_t secho_flow_table_ext_bytes(uint32_t features)
{
	struct secho_feat_layout l;

	secho_feat_layout_make(features, &l);
	/* the done pools hold a quarter of the entries: their share, over many entries */
	return secho_flow_table_stride(features) + sizeof(struct flow_outer) +
	       secho_feat_pools_size(&l, 4096) / 4096;
}

size_t secho_flow_table_mem_size(const struct secho_flow_table_cfg *cfg)
{
	if (!cfg_ok(cfg))
		return 0;
	size_t stride = secho_flow_table_stride(cfg->features);
	size_t nb = nbuckets_for(cfg->flows);
	/* each below 2^30 entries x 2^15 bytes: no overflow */
	size_t pools = pools_size(cfg->features, nb);
	if ((uint64_t)nb * SECHO_FLOW_BUCKET * stride + pools > SECHO_FLOW_EXT_MAX)
		return 0;
	size_t cs = cfg->cache_slots ? cfg->cache_slots : SECHO_FLOW_CACHE_DEFAULT;
	size_t fs = cfg->frag_slots ? cfg->frag_slots : SECHO_FLOW_FRAGS_DEFAULT;
	size_t cache = (cs * sizeof(uint64_t) + 63) & ~(size_t)63;

	size_t seen = (nb * SECHO_FLOW_BUCKET * sizeof(uint32_t) + 63) & ~(size_t)63;
	size_t wheel = SECHO_FLOW_WHEEL_SLOTS * sizeof(struct flow_wheel_slot);
	size_t chunks = (size_t)wheel_chunks((uint32_t)nb) * sizeof(struct flow_chunk);

	return nb * sizeof(struct flow_bucket) +
	       nb * SECHO_FLOW_BUCKET *
	               (sizeof(struct flow_entry) + stride + sizeof(struct flow_outer)) +
	       cache + fs * sizeof(struct flow_frag) + seen + wheel + chunks + pools;
}

int secho_flow_table_init(struct secho_flow_table *t, const struct secho_flow_table_cfg *cfg,
                          void *mem, size_t len)
{
	size_t need = secho_flow_table_mem_size(cfg);

	if (!need || len < need || ((uintptr_t)mem & 63))
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	int r = secho_flow_hasher_init(&t->hasher, cfg->hash, cfg->seed);
	if (r)
		return r;
	t->cfg = *cfg;
	if (!t->cfg.active_ns)
		t->cfg.active_ns = 300ull * 1000000000ull;
	if (!t->cfg.inactive_ns)
		t->cfg.inactive_ns = 30ull * 1000000000ull;
	if (!t->cfg.cache_slots)
		t->cfg.cache_slots = SECHO_FLOW_CACHE_DEFAULT;
	if (!t->cfg.frag_slots)
		t->cfg.frag_slots = SECHO_FLOW_FRAGS_DEFAULT;
	if (!t->cfg.frag_timeout_ns)
		t->cfg.frag_timeout_ns = SECHO_FLOW_FRAG_TIMEOUT_NS;
	t->nbuckets = nbuckets_for(cfg->flows);
	t->cache_mask = t->cfg.cache_slots - 1;
	t->nfragsets = t->cfg.frag_slots / FRAG_WAYS;
	uint8_t *p = mem;
	t->buckets = (struct flow_bucket *)p;
	p += (size_t)t->nbuckets * sizeof(struct flow_bucket);
	t->entries = (struct flow_entry *)p;
	p += (size_t)t->nbuckets * SECHO_FLOW_BUCKET * sizeof(struct flow_entry);
	secho_feat_layout_make(cfg->features, &t->feat);
	t->fstride = secho_flow_table_stride(cfg->features) - SECHO_FLOW_EXTRA_BYTES;
	t->extra = p; /* lines of 64 bytes */
	p += (size_t)t->nbuckets * SECHO_FLOW_BUCKET * SECHO_FLOW_EXTRA_BYTES;
	t->outer = (struct secho_feat_pool){.base = p, /* touched only as parts are lent */
	                                    .stride = sizeof(struct flow_outer),
	                                    .cap = t->nbuckets * SECHO_FLOW_BUCKET};
	p += (size_t)t->outer.cap * sizeof(struct flow_outer);
	t->cache = (uint64_t *)p;
	p += ((size_t)t->cfg.cache_slots * sizeof(uint64_t) + 63) & ~(size_t)63;
	t->frags = (struct flow_frag *)p;
	p += (size_t)t->nfragsets * FRAG_WAYS * sizeof(struct flow_frag);
	t->seen = (uint32_t *)p;
	p += ((size_t)t->nbuckets * SECHO_FLOW_BUCKET * sizeof(uint32_t) + 63) & ~(size_t)63;
	t->wheel = (struct flow_wheel_slot *)p;
	p += SECHO_FLOW_WHEEL_SLOTS * sizeof(struct flow_wheel_slot);
	t->chunks = (struct flow_chunk *)p;
	t->nchunks = wheel_chunks(t->nbuckets);
	p += (size_t)t->nchunks * sizeof(struct flow_chunk);
	/* the feature memory, after everything else: 64-byte aligned (every part above is) */
	t->feat_at = (size_t)(p - (uint8_t *)mem);
	t->farea = p;
	p += (size_t)t->nbuckets * SECHO_FLOW_BUCKET * t->fstride;
	secho_feat_pools_init(&t->feat_pools, &t->feat, p, t->nbuckets * SECHO_FLOW_BUCKET);
	return 0;
}

uint32_t secho_flow_table_capacity(const struct secho_flow_table *t)
{
	return t->nbuckets * SECHO_FLOW_BUCKET;
}

/* ---- time ---- */

static inline uint32_t tick(uint64_t ns)
{
	return (uint32_t)(ns >> TICK_SHIFT);
}

/* a <= b on the 32-bit tick circle (bounds are never 2^31 ticks from the clock). */
static inline bool tick_le(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) <= 0;
}

/* An offloaded entry's last-seen time from the tier, in ns (rounded up to a tick), or 0.
 * The tick is taken relative to the record's start, so that its 32 bits never wrap. */
static inline uint64_t entry_seen(const struct secho_flow_table *t, const struct flow_entry *e)
{
	uint32_t seen = t->seen[e - t->entries];
	int32_t since = (int32_t)(seen - tick(e->start_ns));

	if (!seen || since <= 0)
		return 0;
	return ((e->start_ns >> TICK_SHIFT) + (uint32_t)since) << TICK_SHIFT;
}

static inline uint64_t entry_last(const struct secho_flow_table *t, const struct flow_entry *e)
{
	uint64_t l = e->d[0].last > e->d[1].last ? e->d[0].last : e->d[1].last;

	/* only an offloaded entry has a last-seen time (offload_settle clears both) */
	if (e->flags & F_OFFLOADED) {
		uint64_t s = entry_seen(t, e);
		if (s > l)
			l = s;
	}
	return l;
}

/* When the record ends if no packet comes: the earlier of its two timeouts. */
static inline uint64_t entry_end(const struct secho_flow_table *t, const struct flow_entry *e)
{
	uint64_t a = e->start_ns + t->cfg.active_ns, i = entry_last(t, e) + t->cfg.inactive_ns;
	return a < i ? a : i;
}

/* The reason a record whose time has come ends with. */
static inline uint8_t timeout_reason(const struct secho_flow_table *t, const struct flow_entry *e)
{
	if (e->flags & F_ENDED)
		return SECHO_FLOW_END_EOF;
	if (e->start_ns + t->cfg.active_ns <= entry_last(t, e) + t->cfg.inactive_ns)
		return SECHO_FLOW_END_ACTIVE;
	return SECHO_FLOW_END_IDLE;
}

/* ---- the offload tier (cfg.offload) ---- */

/* Offload e, whose record has counted enough packets. */
static void offload_try(struct secho_flow_table *t, struct flow_entry *e)
{
	if (t->cfg.offload->offload(t->cfg.offload_ctx, &e->key, e->start_ns + t->cfg.active_ns))
		e->flags |= F_OFFLOADED;
	else
		e->flags |= F_NO_OFFLOAD;
}

/* Take offloaded e back from the tier and add the tier's counters to its own: its record
 * is whole again. It stays with the table from now on. */
static void offload_settle(struct secho_flow_table *t, struct flow_entry *e)
{
	struct secho_flow_dir m[2];

	e->flags = (uint8_t)((e->flags & ~F_OFFLOADED) | F_NO_OFFLOAD);
	t->seen[e - t->entries] = 0;
	memset(m, 0, sizeof(m));
	if (t->cfg.offload->reclaim(t->cfg.offload_ctx, &e->key, m))
		return;
	for (unsigned i = 0; i < 2; i++) {
		/* the tier's d[0] runs along the key; the entry's d[0] is the forward one */
		unsigned dir = i ^ ((e->flags & F_FWD_SWAPPED) ? 1u : 0u);
		struct flow_dir_state *d = &e->d[dir];
		if (!m[i].packets)
			continue;
		if (!d->packets || m[i].first_ns < d->first)
			d->first = m[i].first_ns;
		if (m[i].last_ns > d->last)
			d->last = m[i].last_ns;
		d->packets += m[i].packets;
		d->octets += m[i].octets;
		e->tcp[dir] |= m[i].tcp_flags;
	}
}

/* The tier saw offloaded e's latest packet at last_ns: e's last-seen time moves up to it
 * (rounded down to a tick: the table may think the flow idle up to a tick early, and then
 * asks the tier, never late). */
static void seen_raise(struct secho_flow_table *t, const struct flow_entry *e, uint64_t last_ns)
{
	uint32_t st = tick(last_ns);
	uint32_t *seen = &t->seen[e - t->entries];

	if (!last_ns)
		return;
	if (!*seen || tick_le(*seen, st))
		*seen = st ? st : 1;
}

/* Has e's time come by now? For an offloaded flow the table's last-seen time may be behind
 * (the tier's is read in batches): when it says yes, the tier is asked for the flow's
 * latest packet, and only a flow whose time has come by that is taken back (its record is
 * whole from then on); should a packet have come in between, it goes on in the table. */
static bool time_has_come(struct secho_flow_table *t, struct flow_entry *e, uint64_t now)
{
	uint64_t last;

	if (entry_end(t, e) > now)
		return false;
	if (!(e->flags & F_OFFLOADED))
		return true;
	if (!t->cfg.offload->peek(t->cfg.offload_ctx, &e->key, &last)) {
		uint64_t sw = e->d[0].last > e->d[1].last ? e->d[0].last : e->d[1].last;
		uint64_t l = last > sw ? last : sw, a = e->start_ns + t->cfg.active_ns;
		seen_raise(t, e, last);
		if (a > now && l + t->cfg.inactive_ns > now)
			return false; /* busy after all: it stays in the tier */
	}
	offload_settle(t, e);
	if (entry_end(t, e) <= now)
		return true;
	t->cfg.offload->returned(t->cfg.offload_ctx);
	return false;
}

/* ---- the extension (record.h, struct secho_flow_extra) ---- */

/* The kinds of the TCP options in the header at l4 (doff bytes, of which avail are in
 * memory) as tcpOptions bits (record.h: kind k is bit 63 - k; kinds of 64 and more have no
 * bit), and the MSS option's value (0 without one). At most 40 bytes are looked at; a
 * malformed option (length below 2 or past the header) ends the walk. Can't fail. */
static uint64_t tcp_options(const uint8_t *l4, unsigned doff, size_t avail, uint16_t *mss)
{
	unsigned end = doff < avail ? doff : (unsigned)avail;
	uint64_t bits = 0;

	*mss = 0;
	for (unsigned i = 20; i < end;) {
		unsigned kind = l4[i];
		if (kind < 64)
			bits |= 1ull << (63 - kind);
		if (kind == 0) /* end of option list */
			break;
		if (kind == 1) { /* no-operation */
			i++;
			continue;
		}
		if (i + 1 >= end)
			break;
		unsigned len = l4[i + 1];
		if (len < 2 || i + len > end)
			break;
		if (kind == 2 && len == 4)
			*mss = (uint16_t)(l4[i + 2] << 8 | l4[i + 3]);
		i += len;
	}
	return bits;
}

/* The TCP option kinds of prepared frame p (0 without TCP options): at most 40 bytes, none
 * at or beyond caplen. *mss: the MSS option's value, 0 without one. */
static inline uint64_t prep_tcp_options(const struct secho_flow_prep *p, uint16_t *mss)
{
	*mss = 0;
	if (p->tcp_doff <= 20)
		return 0;
	size_t avail = p->caplen > p->l4_off ? p->caplen - (size_t)p->l4_off : 0;
	return tcp_options(p->frame + p->l4_off, p->tcp_doff, avail, mss);
}

/* The TTL / hop limit of prepared frame p's innermost IP header (read by the dissector). */
static inline uint8_t prep_ttl(const struct secho_flow_prep *p)
{
	const uint8_t *ip = p->frame + p->l3_off;

	return p->key.ip_version == 4 ? ip[8] : ip[7];
}

/* The record's tunnel and MPLS part (table.h, struct secho_flow_xline's outer). */
static inline struct flow_outer *outer_of(const struct secho_flow_table *t, uint32_t h)
{
	return (struct flow_outer *)(void *)secho_feat_pool_slot(&t->outer, h);
}

/* x's part, lent (zeroed) if it has none; NULL only if the pool were empty, which it cannot
 * be: a part per entry, a record holds one, an entry one record. */
static struct flow_outer *outer_get(struct secho_flow_table *t, struct secho_flow_xline *x)
{
	if (x->outer)
		return outer_of(t, x->outer);
	uint32_t h = secho_feat_pool_take(&t->outer);
	if (!h)
		return NULL;
	x->outer = h;
	struct flow_outer *o = outer_of(t, h);
	memset(o, 0, sizeof(*o));
	return o;
}

/* x's part back to the pool (the record has left, or its entry starts another). */
static void outer_put(struct secho_flow_table *t, struct secho_flow_xline *x)
{
	if (!x->outer)
		return;
	secho_feat_pool_give(&t->outer, x->outer);
	x->outer = 0;
}

/* The direction's first packet of the record, prepared frame p (NULL: a packet known only
 * by its key, which has no L2-L4 fields: zeros): everything "first", and the accumulators
 * started; a tunnelled or labelled packet's part in the outer pool. Every header read here
 * was read by the dissector, so it lies within the frame's caplen; the TCP options are
 * bounded by it. Out of line: once per direction and record. */
static __attribute__((noinline)) void extra_first(struct secho_flow_table *t,
                                                  struct secho_flow_xline *x, unsigned dir,
                                                  const struct secho_flow_prep *p,
                                                  uint8_t tcp_flags, uint32_t octets)
{
	x->seen |= (uint8_t)(1u << dir);
	x->ttl_min[dir] = x->ttl_max[dir] = x->tos[dir] = x->ip_flags[dir] = 0;
	x->tcp_win[dir] = x->tcp_mss[dir] = 0;
	x->tcp_options[dir] = 0;
	if (!dir) {
		/* the forward direction: the record's own first packet */
		x->syn_size = (tcp_flags & 0x12) == 0x02
		                      ? (uint16_t)(octets > 65535 ? 65535 : octets)
		                      : 0;
		memset(x->src_mac, 0, 6);
		memset(x->dst_mac, 0, 6);
	}
	if (!p)
		return;
	const uint8_t *f = p->frame, *ip = f + p->l3_off;

	x->ttl_min[dir] = x->ttl_max[dir] = prep_ttl(p);
	if (p->key.ip_version == 4) {
		x->tos[dir] = ip[1];
		x->ip_flags[dir] = ip[6] & 0xe0; /* reserved, DF, MF: fragmentFlags (197) */
	} else {
		x->tos[dir] = (uint8_t)((ip[0] & 0x0f) << 4 | ip[1] >> 4);
		x->ip_flags[dir] = (p->dflags & SECHO_DISSECT_F_FRAG_MF) ? 0x20 : 0;
	}
	if (p->tcp_doff) {
		const uint8_t *l4 = f + p->l4_off;
		x->tcp_win[dir] = (uint16_t)(l4[14] << 8 | l4[15]);
		x->tcp_options[dir] = prep_tcp_options(p, &x->tcp_mss[dir]);
	}
	bool tunnel = !dir && (p->dflags & SECHO_DISSECT_F_TUNNEL);
	struct flow_outer *o = p->nmpls || p->outer_ip_len || tunnel ? outer_get(t, x) : NULL;
	if (o) {
		o->bytes_outer[dir] = p->outer_ip_len;
		o->nmpls[dir] = p->nmpls;
		for (unsigned i = 0; i < p->nmpls; i++)
			memcpy(o->mpls[dir][i], f + p->mpls_off + 4 * i, 3);
		if (tunnel) {
			const uint8_t *ol3 = f + p->outer_l3_off;
			o->tun_type = p->key.tun_type;
			o->tun_flags = p->tun_flags;
			o->tun_id = p->key.tun_id;
			o->outer_ip_version = p->outer_ip_version;
			if (p->outer_ip_version == 4) {
				memcpy(o->outer_src, ol3 + 12, 4);
				memcpy(o->outer_dst, ol3 + 16, 4);
			} else if (p->outer_ip_version == 6) {
				memcpy(o->outer_src, ol3 + 8, 16);
				memcpy(o->outer_dst, ol3 + 24, 16);
			}
		}
	}
	if (dir)
		return;
	/* the innermost Ethernet header: a tunnel's tenant frame when it carries one (what
	 * FlowTest's vxlan case expects: the underlay's MACs are the next hop's, not the
	 * flow's), else the frame's own */
	const uint8_t *l2 = f + p->inner_l2_off;
	memcpy(x->dst_mac, l2, 6);
	memcpy(x->src_mac, l2 + 6, 6);
}

/* One packet in direction dir (prepared frame p, or NULL: see extra_first): a few compares
 * and stores in the slot's line, the TTL and TCP options read from the frame. */
static inline void extra_update(struct secho_flow_table *t, struct secho_flow_xline *x,
                                unsigned dir, const struct secho_flow_prep *p, uint8_t tcp_flags,
                                uint32_t octets)
{
	if (!(x->seen & (1u << dir))) {
		extra_first(t, x, dir, p, tcp_flags, octets);
		return;
	}
	if (!p)
		return;
	uint8_t ttl = prep_ttl(p);
	if (ttl < x->ttl_min[dir])
		x->ttl_min[dir] = ttl;
	if (ttl > x->ttl_max[dir])
		x->ttl_max[dir] = ttl;
	if (p->tcp_doff > 20) {
		uint16_t mss;
		x->tcp_options[dir] |= prep_tcp_options(p, &mss);
	}
	if (__builtin_expect(p->outer_ip_len != 0, 0)) {
		struct flow_outer *o = outer_get(t, x);
		if (o)
			o->bytes_outer[dir] += p->outer_ip_len;
	}
}

/* The record's struct secho_flow_extra from its slot's line x and its outer part: a
 * direction without packets in this record has only zeros (its fields in x may hold an
 * earlier record's values). */
static void extra_export(const struct secho_flow_table *t, struct secho_flow_extra *r,
                         const struct secho_flow_xline *x)
{
	const struct flow_outer *o = x->outer ? outer_of(t, x->outer) : NULL;

	memset(r, 0, sizeof(*r));
	r->seen = x->seen;
	r->feat_live = x->feat_live;
	r->feat_decided = x->feat_decided;
	for (unsigned dir = 0; dir < 2; dir++) {
		if (!(x->seen & (1u << dir)))
			continue;
		r->tcp_options[dir] = x->tcp_options[dir];
		r->ttl_min[dir] = x->ttl_min[dir];
		r->ttl_max[dir] = x->ttl_max[dir];
		r->tos[dir] = x->tos[dir];
		r->ip_flags[dir] = x->ip_flags[dir];
		r->tcp_win[dir] = x->tcp_win[dir];
		r->tcp_mss[dir] = x->tcp_mss[dir];
		if (o) {
			r->bytes_outer[dir] = o->bytes_outer[dir];
			r->nmpls[dir] = o->nmpls[dir];
			memcpy(r->mpls[dir], o->mpls[dir], sizeof(r->mpls[dir]));
		}
	}
	if (!(x->seen & 1u))
		return;
	r->syn_size = x->syn_size;
	memcpy(r->src_mac, x->src_mac, 6);
	memcpy(r->dst_mac, x->dst_mac, 6);
	if (o) {
		r->tun_type = o->tun_type;
		r->tun_flags = o->tun_flags;
		r->tun_id = o->tun_id;
		r->outer_ip_version = o->outer_ip_version;
		memcpy(r->outer_src, o->outer_src, 16);
		memcpy(r->outer_dst, o->outer_dst, 16);
	}
}

/* ---- the feature sets (src/flow/feature/sets.h) ---- */

/* A prepared packet as the feature sets see it, in direction dir of its record: the
 * innermost packet's TCP or UDP payload (its captured part, within caplen, and its length
 * on the wire; other protocols: none), read from the frame here. */
static void feat_pkt(const struct secho_flow_prep *fp, unsigned dir, uint64_t ts, uint32_t octets,
                     uint8_t tcp_flags, struct secho_feat_pkt *pp)
{
	struct secho_feat_pkt p = {
	        .ts_ns = ts,
	        .ip_len = octets,
	        .sport = fp->swapped ? fp->key.dport : fp->key.sport,
	        .dport = fp->swapped ? fp->key.sport : fp->key.dport,
	        .proto = fp->key.proto,
	        .dir = (uint8_t)dir,
	        .tcp_flags = tcp_flags,
	};
	uint32_t hdr = 0;

	if (fp->tcp_doff) {
		const uint8_t *l4 = fp->frame + fp->l4_off; /* the header lies within caplen */
		p.tcp_seq = (uint32_t)l4[4] << 24 | (uint32_t)l4[5] << 16 | (uint32_t)l4[6] << 8 |
		            l4[7];
		hdr = fp->tcp_doff;
	} else if (fp->key.proto == SECHO_IPPROTO_UDP && (fp->dflags & SECHO_DISSECT_F_L4)) {
		hdr = 8;
	}
	if (hdr && fp->l4_len >= hdr) {
		uint32_t off = (uint32_t)fp->l4_off + hdr;
		uint32_t avail = fp->caplen > off ? fp->caplen - off : 0;
		p.wire_len = fp->l4_len - hdr;
		p.payload = fp->frame + off;
		p.len = p.wire_len < avail ? p.wire_len : avail;
	}
	*pp = p;
}

/* One prepared packet to the feature sections of entry idx's record (x: its extension
 * line, which holds the record's live, decided and done sets), in direction dir (the
 * record's first packet's is forward). Out of line: the packet path without sets on only
 * tests t->feat.bytes. */
static __attribute__((noinline)) void feat_update(struct secho_flow_table *t, uint32_t idx,
                                                  struct secho_flow_xline *x,
                                                  const struct secho_flow_prep *fp, unsigned dir,
                                                  uint64_t ts, uint32_t octets, uint8_t tcp_flags)
{
	struct secho_feat_pkt p;

	feat_pkt(fp, dir, ts, octets, tcp_flags, &p);
	secho_feat_sets_packet(&t->feat, &t->feat_pools, secho_flow_table_area(t, idx),
	                       &x->feat_live, &x->feat_decided, &x->feat_done, &p);
}

/* Whether the packet, not counted yet, starts a new record of its flow for a feature set
 * (wg: a new WireGuard session, sets.h). Out of line, as feat_update. */
static __attribute__((noinline)) bool feat_new_record(struct secho_flow_table *t, uint32_t idx,
                                                      const struct secho_flow_prep *fp,
                                                      unsigned dir, uint64_t ts, uint32_t octets,
                                                      uint8_t tcp_flags)
{
	struct secho_feat_pkt p;
	uint32_t live = ((const struct secho_flow_xline *)secho_flow_table_slot(t, idx))->feat_live;

	if (!(t->feat.sets & live & 1u << SECHO_FEAT_SET_WG))
		return false;
	feat_pkt(fp, dir, ts, octets, tcp_flags, &p);
	return secho_feat_sets_new_record(&t->feat, secho_flow_table_area(t, idx), live, &p);
}

/* ---- records ---- */

static void emit(struct secho_flow_table *t, struct flow_entry *e, uint8_t reason)
{
	struct secho_flow_rec rec;

	if (e->flags & F_OFFLOADED)
		offload_settle(t, e);
	/* zeroed up to the extension (padding included: a record's bytes are the same for the
	 * same flow), which extra_export writes whole; the rest written member by member
	 * (without feature sets, feat_sec is not read: feat_layout NULL, record.h) */
	memset(&rec, 0, offsetof(struct secho_flow_rec, x));
	rec.key = e->key;
	if (e->flags & F_FWD_SWAPPED)
		secho_flow_key_reverse(&rec.key);
	rec.fwd.packets = e->d[0].packets;
	rec.fwd.octets = e->d[0].octets;
	rec.fwd.first_ns = e->d[0].first;
	rec.fwd.last_ns = e->d[0].last;
	rec.fwd.tcp_flags = e->tcp[0];
	rec.rev.packets = e->d[1].packets;
	rec.rev.octets = e->d[1].octets;
	rec.rev.first_ns = e->d[1].first;
	rec.rev.last_ns = e->d[1].last;
	rec.rev.tcp_flags = e->tcp[1];
	rec.end_reason = reason;
	uint32_t idx = (uint32_t)(e - t->entries);
	struct secho_flow_xline *x = (struct secho_flow_xline *)secho_flow_table_slot(t, idx);
	extra_export(t, &rec.x, x);
	rec.feat_layout = NULL;
	rec.feat_live = 0;
	if (t->feat.sets) {
		rec.feat_layout = &t->feat;
		rec.feat_live = x->feat_live;
		secho_feat_sets_sections(&t->feat, &t->feat_pools, secho_flow_table_area(t, idx),
		                         rec.feat_live, rec.feat_sec);
	}
	cnt_add(&t->cnt.c[SECHO_FLOW_CNT_END_IDLE + reason - SECHO_FLOW_END_IDLE], 1);
	t->cfg.emit(t->cfg.ctx, &rec);
	if (t->feat.pooled) /* the record has left: its large states go back to their pools */
		secho_feat_sets_release(&t->feat, &t->feat_pools, secho_flow_table_area(t, idx),
		                        rec.feat_live);
	outer_put(t, x);
}

/* A record starts in entry idx: its extension's fields are written by its first packets
 * (seen = 0), and no feature set is live or has decided: each section is made ready by its
 * set's init when the set wants the flow (src/flow/feature/sets.h, "Live sets"). Both are
 * in the line seen is in: the feature area is not touched here. */
static inline void x_start(struct secho_flow_table *t, uint32_t idx)
{
	struct secho_flow_xline *x = (struct secho_flow_xline *)secho_flow_table_slot(t, idx);

	x->seen = 0;
	outer_put(t, x); /* none: emit gave it back (a record is always emitted) */
	if (t->feat.bytes)
		x->feat_live = x->feat_decided = x->feat_done = 0;
}

/* A new record in e (which may have held one before): key ck, forward swapped or not. */
static void entry_start(struct secho_flow_table *t, struct flow_entry *e,
                        const struct secho_flow_key *ck, bool swapped, uint64_t ts)
{
	memset(e, 0, sizeof(*e));
	t->seen[e - t->entries] = 0;
	e->key = *ck;
	e->flags = swapped ? F_FWD_SWAPPED : 0;
	e->start_ns = ts;
	x_start(t, (uint32_t)(e - t->entries));
	cnt_add(&t->cnt.c[SECHO_FLOW_CNT_FLOWS], 1);
}

/* The same entry starts a new record with the packet at ts (after its old one was
 * emitted). Every record's forward direction is that of its own first packet, also after
 * an active timeout: the sweep may have exported and freed the entry before that packet
 * came, and the record must not depend on whether it did. */
static void entry_restart(struct secho_flow_table *t, struct flow_entry *e, bool swapped,
                          uint64_t ts)
{
	memset(e->tcp, 0, sizeof(e->tcp));
	memset(e->d, 0, sizeof(e->d));
	e->flags = swapped ? F_FWD_SWAPPED : 0;
	e->start_ns = ts;
	x_start(t, (uint32_t)(e - t->entries));
	cnt_add(&t->cnt.c[SECHO_FLOW_CNT_FLOWS], 1);
}

/* An entry from the pool: the last one freed (its lines are likely still in cache), else
 * the next never used. The pool holds as many entries as the buckets have slots, so a
 * table with a free slot always has a free entry. Can't fail. */
static uint32_t entry_alloc(struct secho_flow_table *t)
{
	if (t->free_head) {
		uint32_t idx = t->free_head - 1;
		t->free_head = t->seen[idx];
		return idx;
	}
	return t->pool_used++;
}

static void slot_free(struct secho_flow_table *t, uint32_t b, unsigned s)
{
	struct flow_bucket *bk = &t->buckets[b];
	uint32_t idx = bk->idx[s];
	uint64_t *c = &t->cache[bk->sig[s] & t->cache_mask];

	if ((uint32_t)*c == idx + 1)
		*c = 0;
	bk->sig[s] = 0;              /* no cache slot names it now */
	t->seen[idx] = t->free_head; /* a free entry's: the next free one, + 1 (0: none) */
	t->free_head = idx + 1;
	cnt_add(&t->cnt.active, (uint64_t)-1);
}

/* 52 bytes compared as six 64-bit words and one 32-bit word, inline (a library memcmp
 * call cost more than the compare on the per-packet path). */
static inline bool key_eq(const struct secho_flow_key *a, const struct secho_flow_key *b)
{
	const uint8_t *x = (const uint8_t *)a, *y = (const uint8_t *)b;
	uint64_t d = 0, u, v;
	uint32_t u4, v4;

	_Static_assert(SECHO_FLOW_KEY_LEN == 52, "key_eq compares 52 bytes");
	for (unsigned i = 0; i < 48; i += 8) {
		memcpy(&u, x + i, 8);
		memcpy(&v, y + i, 8);
		d |= u ^ v;
	}
	memcpy(&u4, x + 48, 4);
	memcpy(&v4, y + 48, 4);
	return !(d | (u4 ^ v4));
}

/* ---- the timer wheel ---- */

/* A chunk from the wheel's pool: the last one freed, else the next never used (so that the
 * memory the wheel touches grows with the flows, as the entries'). 0 when none is left,
 * which wheel_chunks rules out. */
static uint32_t chunk_alloc(struct secho_flow_table *t)
{
	if (t->chunk_free) {
		uint32_t c = t->chunk_free;
		t->chunk_free = t->chunks[c - 1].next;
		return c;
	}
	return t->chunks_used < t->nchunks ? ++t->chunks_used : 0;
}

/* Put cell (bucket * 8 + slot) in the wheel at the period of end_ns, or at the first period
 * not yet expired if that is later. Returns false, the cell not put in, only if the pool is
 * empty (it never is: wheel_chunks). */
static bool wheel_add(struct secho_flow_table *t, uint32_t cell, uint64_t end_ns)
{
	uint64_t p = end_ns >> SECHO_FLOW_WHEEL_SHIFT;

	if (!t->wheel_on) {
		t->wheel_on = true;
		t->wheel_next = t->clock_ns >> SECHO_FLOW_WHEEL_SHIFT;
	}
	if (p < t->wheel_next)
		p = t->wheel_next;
	struct flow_wheel_slot *w = &t->wheel[p & WHEEL_MASK];
	if (!w->head || w->n == CHUNK_CELLS) {
		uint32_t c = chunk_alloc(t);
		if (!c)
			return false;
		t->chunks[c - 1].next = w->head;
		w->head = c;
		w->n = 0;
	}
	t->chunks[w->head - 1].cell[w->n++] = cell;
	return true;
}

/*
 * A full bucket must give up one entry for a new flow at time ts. In order of preference:
 * a record whose time has come (it leaves with its timeout reason, as the sweep would have
 * exported it), a TCP flow that saw FIN/RST (it leaves as ended), else the least recently
 * used (lack of resources). The first two lose nothing, so the choice is the same however
 * far the sweep has got: records do not depend on when it ran. Returns the slot, emptied.
 *
 * The bucket's bounds (due[], its second line) say which entries may have timed out: only
 * those are read first, and the first whose time has come leaves (any of them would: each
 * such record is final, and the sweep exports the others unchanged), so that a bucket of
 * short flows waiting for the sweep costs one or two entry reads, not eight. A bound that
 * passed for a flow still alive is raised to its exact end on the way. Only when none of
 * those has timed out are all eight read, as before: an entry whose bound had not passed
 * may still have timed out when packet times went backwards (its bound was taken at the
 * packet clock, its last packet is earlier), then the ended and least recently used.
 */
static unsigned evict(struct secho_flow_table *t, uint32_t b, uint64_t ts)
{
	struct flow_bucket *bk = &t->buckets[b];
	uint32_t nt = tick(ts);

	for (unsigned s = 0; s < SECHO_FLOW_BUCKET; s++) {
		if (!tick_le(bk->due[s], nt))
			continue;
		struct flow_entry *e = &t->entries[bk->idx[s]];
		if (time_has_come(t, e, ts)) {
			emit(t, e, timeout_reason(t, e));
			slot_free(t, b, s);
			return s;
		}
		bk->due[s] = tick(entry_end(t, e));
	}
	unsigned best = 0, best_class = 3;
	uint64_t best_last = UINT64_MAX;

	for (unsigned s = 0; s < SECHO_FLOW_BUCKET; s++) {
		struct flow_entry *e = &t->entries[bk->idx[s]];
		unsigned cls = time_has_come(t, e, ts) ? 0 : (e->flags & F_ENDED) ? 1 : 2;
		uint64_t last = entry_last(t, e);

		if (cls < best_class || (cls == best_class && last < best_last)) {
			best = s;
			best_class = cls;
			best_last = last;
		}
	}
	struct flow_entry *v = &t->entries[bk->idx[best]];
	emit(t, v,
	     best_class == 0   ? timeout_reason(t, v)
	     : best_class == 1 ? SECHO_FLOW_END_EOF
	                       : SECHO_FLOW_END_RESOURCE);
	slot_free(t, b, best);
	return best;
}

/* Find or make the entry of ck (hash h); *fresh when a new record was started for it. */
static struct flow_entry *lookup(struct secho_flow_table *t, const struct secho_flow_key *ck,
                                 uint64_t h, bool swapped, uint64_t ts, bool *fresh)
{
	uint32_t sig = (uint32_t)h ? (uint32_t)h : 1;
	uint32_t b = (uint32_t)(((h >> 32) * t->nbuckets) >> 32);
	uint64_t *cs = &t->cache[sig & t->cache_mask];
	struct flow_bucket *bk = &t->buckets[b];

	*fresh = false;
	if ((uint32_t)(*cs >> 32) == sig && (uint32_t)*cs) {
		struct flow_entry *e = &t->entries[(uint32_t)*cs - 1];
		if (key_eq(&e->key, ck)) {
			cnt_add(&t->cnt.c[SECHO_FLOW_CNT_CACHE_HITS], 1);
			return e;
		}
	}
	cnt_add(&t->cnt.c[SECHO_FLOW_CNT_CACHE_MISSES], 1);
	int free_slot = -1;
	for (unsigned s = 0; s < SECHO_FLOW_BUCKET; s++) {
		uint32_t bs = bk->sig[s];
		if (bs == sig) {
			uint32_t idx = bk->idx[s];
			struct flow_entry *e = &t->entries[idx];
			if (key_eq(&e->key, ck)) {
				*cs = (uint64_t)sig << 32 | (idx + 1);
				return e;
			}
		} else if (!bs && free_slot < 0) {
			free_slot = (int)s;
		}
	}
	unsigned s = free_slot >= 0 ? (unsigned)free_slot : evict(t, b, ts);
	uint32_t idx = entry_alloc(t);
	struct flow_entry *e = &t->entries[idx];

	entry_start(t, e, ck, swapped, ts);
	bk->sig[s] = sig;
	bk->idx[s] = idx;
	/* The packet is not counted yet (no last time): its own time is the last. Taken from
	 * an empty entry, the bound would be 2^31 ticks or more from the clock, and the 32-bit
	 * comparison would put it in the future (as it does from late 2026 on). */
	uint64_t end = ts + (t->cfg.active_ns < t->cfg.inactive_ns ? t->cfg.active_ns
	                                                           : t->cfg.inactive_ns);
	bk->due[s] = tick(end);
	/* Into the wheel, unless the slot is there already (an earlier record's, at or before
	 * this end: table.c's head comment) */
	if (!(bk->queued & (1u << s)) && wheel_add(t, b * SECHO_FLOW_BUCKET + s, end))
		bk->queued |= 1u << s;
	cnt_add(&t->cnt.active, 1);
	*cs = (uint64_t)sig << 32 | (idx + 1);
	*fresh = true;
	return e;
}

/* A packet's key as the table keeps it: canonical (biflows) and its hash. */
struct keyed {
	struct secho_flow_key ck;
	uint64_t h;
	bool swapped;
};

static inline void key_prepare(const struct secho_flow_table *t, const struct secho_flow_key *pk,
                               struct keyed *k)
{
	if (t->cfg.uniflow) {
		k->ck = *pk;
		k->swapped = false;
	} else {
		k->swapped = secho_flow_key_canon(pk, &k->ck);
	}
	k->h = secho_flow_hash(&t->hasher, &k->ck);
}

/* Count one packet of key ck (as the table keeps it; hash h; swapped: it runs against
 * ck) at ts in its flow. */
/*
 * Time going backwards (docs/FLOW.md, "Time"): a packet is judged at the packet clock, the
 * latest packet time of the input so far (clock: the input's, computed where it is read,
 * so that every worker judges a packet at the same time; at least this table's own), never
 * at its own earlier time: timeouts are decided on the clock, as the sweep decides them,
 * so whether a late packet joins its flow does not depend on how far the sweep has got or
 * how the packets were split among workers. The record keeps the packets' own times: first
 * the earliest, last the latest.
 */
static void update_keyed(struct secho_flow_table *t, const struct secho_flow_key *ck, uint64_t h,
                         bool swapped, uint64_t ts, uint64_t clock, uint32_t octets,
                         uint8_t tcp_flags, const struct secho_flow_prep *fp, bool feat)
{
	if (ts > t->clock_ns)
		t->clock_ns = ts;
	if (clock > t->clock_ns)
		t->clock_ns = clock;
	uint64_t now = t->clock_ns;
	bool fresh;
	struct flow_entry *e = lookup(t, ck, h, swapped, now, &fresh);

	if (!fresh) {
		bool was_offloaded = e->flags & F_OFFLOADED;
		if (time_has_come(t, e, now)) {
			uint8_t reason = timeout_reason(t, e);
			/* after an active timeout the flow goes on in the same entry: one that came
			 * back from the tier (or was refused) stays here */
			bool stay = reason == SECHO_FLOW_END_ACTIVE &&
			            (e->flags & (F_OFFLOADED | F_NO_OFFLOAD));
			emit(t, e, reason);
			entry_restart(t, e, swapped, now);
			if (stay)
				e->flags |= F_NO_OFFLOAD;
			if (stay && was_offloaded)
				t->cfg.offload->returned(t->cfg.offload_ctx);
		} else if ((e->flags & F_ENDED) && (tcp_flags & 0x02)) {
			/* A SYN on a flow that saw FIN/RST: a new connection on the same key. */
			emit(t, e, SECHO_FLOW_END_EOF);
			cnt_add(&t->cnt.c[SECHO_FLOW_CNT_SYN_REUSE], 1);
			entry_restart(t, e, swapped, now);
		}
	}
	unsigned dir = (swapped != !!(e->flags & F_FWD_SWAPPED)) ? 1 : 0;
	if (__builtin_expect(t->feat.bytes != 0, 0) && fp && !fresh &&
	    feat_new_record(t, (uint32_t)(e - t->entries), fp, dir, ts, octets, tcp_flags)) {
		/* a feature set keeps one record per session (wg): the old one ends here, as
		 * ipfixprobe's flush with reinsert (forced), and this packet starts the next */
		emit(t, e, SECHO_FLOW_END_FORCED);
		entry_restart(t, e, swapped, now);
		dir = 0;
	}
	struct flow_dir_state *d = &e->d[dir];

	if (!d->packets || ts < d->first)
		d->first = ts;
	d->packets++;
	d->octets += octets;
	if (ts > d->last)
		d->last = ts;
	e->tcp[dir] |= tcp_flags;
	uint32_t idx = (uint32_t)(e - t->entries);
	struct secho_flow_xline *x = (struct secho_flow_xline *)secho_flow_table_slot(t, idx);
	extra_update(t, x, dir, fp, tcp_flags, octets);
	/* to the sets when one has not decided or one live set takes more packets: a flow
	 * whose sets are all done (or found nothing) is not looked at again */
	if (__builtin_expect(t->feat.bytes != 0, 0) && feat &&
	    ((t->feat.sets & ~x->feat_decided) | (x->feat_live & ~x->feat_done)))
		feat_update(t, idx, x, fp, dir, ts, octets, tcp_flags);
	if (tcp_flags & 0x05) /* FIN, RST */
		e->flags |= F_ENDED;
	cnt_add(&t->cnt.c[SECHO_FLOW_CNT_PACKETS], 1);
	cnt_add(&t->cnt.c[SECHO_FLOW_CNT_OCTETS], octets);
	if (t->cfg.offload_after && !(e->flags & (F_OFFLOADED | F_NO_OFFLOAD | F_ENDED)) &&
	    e->d[0].packets + e->d[1].packets >= t->cfg.offload_after)
		offload_try(t, e);
}

static void update(struct secho_flow_table *t, const struct secho_flow_key *pk, uint64_t ts,
                   uint32_t octets, uint8_t tcp_flags, const struct secho_flow_prep *fp)
{
	struct keyed k;

	key_prepare(t, pk, &k);
	update_keyed(t, &k.ck, k.h, k.swapped, ts, 0, octets, tcp_flags, fp, false);
}

void secho_flow_table_packet(struct secho_flow_table *t, const struct secho_flow_pkt *p)
{
	cnt_add(&t->cnt.c[SECHO_FLOW_CNT_FRAMES], 1);
	update(t, &p->key, p->ts_ns, p->octets,
	       p->key.proto == SECHO_IPPROTO_TCP ? p->tcp_flags : 0, NULL);
}

/* ---- frames ---- */

static void ignore(struct secho_flow_table *t, unsigned why, size_t wirelen)
{
	cnt_add(&t->cnt.c[SECHO_FLOW_CNT_IGNORED], 1);
	cnt_add(&t->cnt.c[SECHO_FLOW_CNT_IGNORED_OCTETS], wirelen);
	cnt_add(&t->cnt.ignored[why], 1);
}

/* The lookup key of a fragment: addresses, VLANs, version, IP id in the port fields, the
 * protocol for IPv4 (RFC 791 reassembles by src, dst, protocol, id) and 0 for IPv6 (RFC
 * 8200: src, dst, id; a later fragment's next header need not be the transport's). */
static void frag_key(const struct secho_flow_key *k, uint32_t frag_id, struct secho_flow_key *fk)
{
	*fk = *k;
	fk->proto = k->ip_version == 4 ? k->proto : 0;
	fk->sport = (uint16_t)(frag_id >> 16);
	fk->dport = (uint16_t)frag_id;
	fk->icmp_type_code = 0;
}

static void frag_store(struct flow_frag *w, const struct secho_flow_key *fk)
{
	memcpy(w->src, fk->src, 16);
	memcpy(w->dst, fk->dst, 16);
	w->id = (uint32_t)fk->sport << 16 | fk->dport;
	w->tun_id = fk->tun_id;
	w->vlan = fk->vlan;
	w->vlan_inner = fk->vlan_inner;
	w->ip_version = fk->ip_version;
	w->kproto = fk->proto;
	w->tun_type = fk->tun_type;
}

/* Does w hold lookup key fk (every field frag_key leaves in it)? */
static bool frag_match(const struct flow_frag *w, const struct secho_flow_key *fk)
{
	_Static_assert(SECHO_FLOW_KEY_LEN == 52, "frag_store/frag_match know every key field");
	return w->used && w->id == ((uint32_t)fk->sport << 16 | fk->dport) &&
	       w->kproto == fk->proto && w->ip_version == fk->ip_version && w->vlan == fk->vlan &&
	       w->vlan_inner == fk->vlan_inner && w->tun_type == fk->tun_type &&
	       w->tun_id == fk->tun_id && !memcmp(w->src, fk->src, 16) &&
	       !memcmp(w->dst, fk->dst, 16);
}

static struct flow_frag *frag_set(struct secho_flow_table *t, const struct secho_flow_key *fk)
{
	uint64_t h = secho_flow_hash(&t->hasher, fk);
	return &t->frags[(size_t)(((h >> 32) * t->nfragsets) >> 32) * FRAG_WAYS];
}

/* A first fragment of key k (its own direction, with its ports) and IP id frag_id. */
static void frag_remember(struct secho_flow_table *t, const struct secho_flow_key *k,
                          uint32_t frag_id, uint64_t ts)
{
	struct secho_flow_key fk;
	frag_key(k, frag_id, &fk);
	struct flow_frag *set = frag_set(t, &fk), *w = NULL;

	for (unsigned i = 0; i < FRAG_WAYS && !w; i++)
		if (frag_match(&set[i], &fk))
			w = &set[i];
	for (unsigned i = 0; i < FRAG_WAYS && !w; i++)
		if (!set[i].used || set[i].expires_ns <= ts)
			w = &set[i];
	if (!w) {
		w = &set[0];
		for (unsigned i = 1; i < FRAG_WAYS; i++)
			if (set[i].expires_ns < w->expires_ns)
				w = &set[i];
		cnt_add(&t->cnt.c[SECHO_FLOW_CNT_FRAG_REPLACED], 1);
	}
	frag_store(w, &fk);
	w->sport = k->sport;
	w->dport = k->dport;
	w->icmp = k->icmp_type_code;
	w->proto = k->proto;
	w->used = 1;
	w->expires_ns = ts + t->cfg.frag_timeout_ns;
	cnt_add(&t->cnt.c[SECHO_FLOW_CNT_FRAG_FIRST], 1);
}

/* A later fragment: fill in its first fragment's protocol and ports; false if unknown. */
static bool frag_join(struct secho_flow_table *t, struct secho_flow_key *k, uint32_t frag_id,
                      uint64_t ts)
{
	struct secho_flow_key fk;
	frag_key(k, frag_id, &fk);
	struct flow_frag *set = frag_set(t, &fk);

	for (unsigned i = 0; i < FRAG_WAYS; i++) {
		struct flow_frag *w = &set[i];
		if (w->expires_ns > ts && frag_match(w, &fk)) {
			k->proto = w->proto;
			k->sport = w->sport;
			k->dport = w->dport;
			k->icmp_type_code = w->icmp;
			return true;
		}
	}
	return false;
}

void secho_flow_table_prepare(const struct secho_flow_table *t, const uint8_t *frame,
                              uint32_t caplen, enum secho_dissect_reason r,
                              const struct secho_dissect *d, uint32_t wirelen, uint64_t ts_ns,
                              struct secho_flow_prep *p)
{
	p->ts_ns = ts_ns;
	p->clock_ns = ts_ns;
	p->swapped = 0;
	p->tcp_flags = 0;
	if (r != SECHO_DISSECT_OK || !d->ip_version) {
		p->kind = SECHO_FLOW_PREP_IGNORED;
		p->why = r != SECHO_DISSECT_OK ? (uint8_t)r : (uint8_t)SECHO_FLOW_IGN_NOT_IP;
		p->octets = wirelen;
		return;
	}
	p->octets = d->ip_len;
	p->frag_id = d->frag_id;
	/* where the record's L2-L4 fields are read when the packet is metered (table.h) */
	p->frame = frame;
	p->caplen = caplen;
	p->l3_off = d->l3_off;
	p->l4_off = d->l4_off;
	p->l4_len = d->l4_len;
	p->inner_l2_off = d->inner_l2_off;
	p->dflags = d->flags;
	p->tcp_doff = 0;
	if (d->proto == SECHO_IPPROTO_TCP && (d->flags & SECHO_DISSECT_F_L4)) {
		p->tcp_flags = d->tcp_flags;
		if (d->frag != SECHO_FRAG_LATER)
			p->tcp_doff = d->tcp_doff;
	}
	p->nmpls = 0;
	p->mpls_off = d->mpls_off;
	if (d->flags & SECHO_DISSECT_F_MPLS)
		p->nmpls =
		        (uint8_t)(d->nmpls < SECHO_FLOW_MPLS_MAX ? d->nmpls : SECHO_FLOW_MPLS_MAX);
	p->outer_ip_len = 0;
	p->outer_ip_version = 0;
	p->tun_flags = 0;
	p->outer_l3_off = d->outer_l3_off;
	if (d->flags & SECHO_DISSECT_F_TUNNEL) {
		p->outer_ip_len = d->outer_ip_len;
		p->outer_ip_version = d->outer_ip_version;
		p->tun_flags = d->tun_flags;
	}
	if (d->frag == SECHO_FRAG_LATER) {
		p->kind = SECHO_FLOW_PREP_FRAG_LATER;
		secho_flow_key_from(frame, d, &p->key);
		return;
	}
	p->kind = d->frag == SECHO_FRAG_FIRST ? SECHO_FLOW_PREP_FRAG_FIRST : SECHO_FLOW_PREP_PLAIN;
	if (t->cfg.uniflow) {
		secho_flow_key_from(frame, d, &p->key);
	} else {
		p->swapped = secho_flow_key_canon_from(frame, d, &p->key);
	}
	p->h = secho_flow_hash(&t->hasher, &p->key);
}

/* Meter one prepared frame (its memory may have been asked for already). */
static void metered(struct secho_flow_table *t, const struct secho_flow_prep *p)
{
	cnt_add(&t->cnt.c[SECHO_FLOW_CNT_FRAMES], 1);
	switch (p->kind) {
	case SECHO_FLOW_PREP_IGNORED:
		ignore(t, p->why, p->octets);
		return;
	case SECHO_FLOW_PREP_FRAG_LATER: {
		struct secho_flow_key k = p->key;
		if (!frag_join(t, &k, p->frag_id, p->ts_ns)) {
			ignore(t, SECHO_FLOW_IGN_FRAG_ORPHAN, p->octets);
			return;
		}
		cnt_add(&t->cnt.c[SECHO_FLOW_CNT_FRAG_JOINED], 1);
		update(t, &k, p->ts_ns, p->octets, 0, p);
		return;
	}
	case SECHO_FLOW_PREP_FRAG_FIRST: {
		struct secho_flow_key own = p->key;
		if (p->swapped)
			secho_flow_key_reverse(&own);
		frag_remember(t, &own, p->frag_id, p->ts_ns);
		break;
	}
	default:
		break;
	}
	update_keyed(t, &p->key, p->h, p->swapped, p->ts_ns, p->clock_ns, p->octets, p->tcp_flags,
	             p, true);
}

/*
 * The burst's memory requests. The helpers are always inlined: GCC 12 (-O2) finds a helper
 * whose only effect is __builtin_prefetch free of side effects (ipa-modref) and deletes
 * its calls as dead, and for a while no prefetch instruction was left in the bursts.
 * tests/sh/test_flow_codegen.sh looks for them in the object file.
 */
#define PREFETCH_FN static inline __attribute__((always_inline))

/*
 * How far ahead of its update a packet's memory is requested, in packets: its cache slot
 * 16 before; 12 before, the entry the slot names, or, when it names none, the bucket; 6
 * before, for those, the entry of the bucket's first signature match. The bucket is not
 * asked for when the cache names the flow (most packets): on NIX-like traffic the wasted
 * requests filled the queue of misses the core can have in flight, and the table update's
 * p50 fell from 100-118 to 90-98 ns without them. docs/PERFORMANCE.md, "The table's memory
 * requests".
 */
#define SLOT_AHEAD   16u
#define NAMED_AHEAD  12u
#define BUCKET_AHEAD 6u

/* Packet h's cache slot. */
PREFETCH_FN void prefetch_slot(const struct secho_flow_table *t, uint64_t h)
{
	uint32_t sig = (uint32_t)h ? (uint32_t)h : 1;

	__builtin_prefetch(&t->cache[sig & t->cache_mask]);
}

/* Both lines of the entry packet h's cache slot names (true), or else its bucket. A hint:
 * an update in between may change what the slot names. */
PREFETCH_FN bool prefetch_named(const struct secho_flow_table *t, uint64_t h)
{
	uint32_t sig = (uint32_t)h ? (uint32_t)h : 1;
	uint64_t c = t->cache[sig & t->cache_mask];

	if ((uint32_t)(c >> 32) == sig && (uint32_t)c) {
		const struct flow_entry *e = &t->entries[(uint32_t)c - 1];
		__builtin_prefetch(e, 1);
		__builtin_prefetch((const char *)e + 64, 1);
		/* the line a packet updates */
		__builtin_prefetch(secho_flow_table_slot(t, (uint32_t)c - 1), 1);
		return true;
	}
	__builtin_prefetch(&t->buckets[(uint32_t)(((h >> 32) * t->nbuckets) >> 32)]);
	return false;
}

/* Both lines of the entry of the first signature match in packet h's bucket, if any. */
PREFETCH_FN void prefetch_matched(const struct secho_flow_table *t, uint64_t h)
{
	uint32_t sig = (uint32_t)h ? (uint32_t)h : 1;
	uint32_t b = (uint32_t)(((h >> 32) * t->nbuckets) >> 32);
	const struct flow_bucket *bk = &t->buckets[b];

	for (unsigned s = 0; s < SECHO_FLOW_BUCKET; s++)
		if (bk->sig[s] == sig) {
			const struct flow_entry *e = &t->entries[bk->idx[s]];
			__builtin_prefetch(e, 1);
			__builtin_prefetch((const char *)e + 64, 1);
			__builtin_prefetch(secho_flow_table_slot(t, bk->idx[s]), 1);
			return;
		}
}

static inline bool keyed_kind(uint8_t kind)
{
	return kind == SECHO_FLOW_PREP_PLAIN || kind == SECHO_FLOW_PREP_FRAG_FIRST;
}

/* A burst's updates in order, as one at a time would, each packet's memory requested ahead
 * (SLOT_AHEAD, NAMED_AHEAD, BUCKET_AHEAD): step i asks for packet i's cache slot (unless the
 * caller has), goes on with the packets NAMED_AHEAD and BUCKET_AHEAD behind it, and updates
 * packet i - SLOT_AHEAD. */
static void burst_pipelined(struct secho_flow_table *t, const struct secho_flow_prep *p, unsigned n,
                            bool slots_requested)
{
	const unsigned named = SLOT_AHEAD - NAMED_AHEAD, bucket = SLOT_AHEAD - BUCKET_AHEAD;
	/* in_bucket[k]: packet k's slot named no entry, its bucket was asked for */
	bool in_bucket[SECHO_FLOW_TABLE_BURST] = {0};

	for (unsigned i = 0; i < n + SLOT_AHEAD; i++) {
		if (!slots_requested && i < n && keyed_kind(p[i].kind))
			prefetch_slot(t, p[i].h);
		if (i >= named && i - named < n)
			in_bucket[i - named] =
			        keyed_kind(p[i - named].kind) && !prefetch_named(t, p[i - named].h);
		if (i >= bucket && i - bucket < n && in_bucket[i - bucket])
			prefetch_matched(t, p[i - bucket].h);
		if (i >= SLOT_AHEAD)
			metered(t, &p[i - SLOT_AHEAD]);
	}
}

void secho_flow_table_burst_prepared(struct secho_flow_table *t, const struct secho_flow_prep *p,
                                     unsigned n)
{
	if (n > SECHO_FLOW_TABLE_BURST)
		n = SECHO_FLOW_TABLE_BURST;
	burst_pipelined(t, p, n, false);
}

void secho_flow_table_burst(struct secho_flow_table *t, const struct secho_flow_frame *f,
                            unsigned n)
{
	struct secho_flow_prep p[SECHO_FLOW_TABLE_BURST];

	if (n > SECHO_FLOW_TABLE_BURST)
		n = SECHO_FLOW_TABLE_BURST;
	/* each cache slot requested as soon as its hash is known */
	for (unsigned i = 0; i < n; i++) {
		/* the caplen a frame was dissected with is not kept: an IP packet that is not
		 * snapped lies within it (and within wirelen); of a snapped one, only the headers
		 * the dissector read are known to be there (no TCP options) */
		uint32_t cap = (f[i].d.flags & SECHO_DISSECT_F_SNAPPED) ? 0 : f[i].wirelen;
		secho_flow_table_prepare(t, f[i].data, cap, f[i].reason, &f[i].d, f[i].wirelen,
		                         f[i].ts_ns, &p[i]);
		if (keyed_kind(p[i].kind))
			prefetch_slot(t, p[i].h);
	}
	burst_pipelined(t, p, n, true);
}

/* ---- expiry ---- */

/* Look at bucket b's records at time now: export those whose time has come (the flush's
 * exact look at every entry). */
static void sweep_bucket(struct secho_flow_table *t, uint32_t b, uint64_t now)
{
	struct flow_bucket *bk = &t->buckets[b];

	for (unsigned s = 0; s < SECHO_FLOW_BUCKET; s++) {
		if (!bk->sig[s])
			continue;
		struct flow_entry *e = &t->entries[bk->idx[s]];
		if (time_has_come(t, e, now)) {
			emit(t, e, timeout_reason(t, e));
			slot_free(t, b, s);
			continue;
		}
		bk->due[s] = tick(entry_end(t, e));
	}
}

/* A cell taken out of a wheel slot whose period has passed, at time now (nt its tick): a
 * free slot leaves the wheel; a record whose bound has passed (every one when exact) is
 * exported and leaves if its time has come, else gets its exact bound and goes back in
 * there; a record whose bound was raised since it went in (by a full bucket's evict) goes
 * back in at it. */
static void wheel_cell(struct secho_flow_table *t, uint32_t cell, uint64_t now, uint32_t nt,
                       bool exact)
{
	uint32_t b = cell / SECHO_FLOW_BUCKET;
	unsigned s = cell % SECHO_FLOW_BUCKET;
	struct flow_bucket *bk = &t->buckets[b];
	uint64_t end;

	if (!bk->sig[s]) {
		bk->queued &= ~(1u << s);
		return;
	}
	if (!exact && !tick_le(bk->due[s], nt)) {
		/* the bound, within 2^31 ticks after the clock, in ns */
		end = ((now >> TICK_SHIFT) + (uint32_t)(bk->due[s] - nt)) << TICK_SHIFT;
	} else {
		struct flow_entry *e = &t->entries[bk->idx[s]];
		if (time_has_come(t, e, now)) {
			emit(t, e, timeout_reason(t, e));
			slot_free(t, b, s);
			bk->queued &= ~(1u << s);
			return;
		}
		end = entry_end(t, e);
		bk->due[s] = tick(end);
	}
	if (!wheel_add(t, cell, end))
		bk->queued &= ~(1u << s);
}

/* How far ahead of a cell's look its memory is asked for, in cells: its bucket's two
 * lines CELL_AHEAD before; CELL_AHEAD - ENTRY_AHEAD before (the bucket read by then), when
 * its bound has passed, the entry's two lines and its extension's line (struct
 * secho_flow_xline), which emit copies into the record. */
#define CELL_AHEAD  8u
#define ENTRY_AHEAD 4u

/* Cells taken out of a wheel slot, looked at in order (wheel_cell) with their memory asked
 * for ahead, so that the misses of different cells overlap. */
static void wheel_cells(struct secho_flow_table *t, const uint32_t *cells, unsigned n, uint64_t now,
                        bool exact)
{
	const unsigned bucket = CELL_AHEAD - ENTRY_AHEAD;
	uint32_t nt = tick(now);

	for (unsigned i = 0; i < n + CELL_AHEAD; i++) {
		if (i < n) {
			const struct flow_bucket *bk = &t->buckets[cells[i] / SECHO_FLOW_BUCKET];
			__builtin_prefetch(bk, 1);
			__builtin_prefetch((const char *)bk + 64, 1); /* the bounds */
		}
		if (i >= bucket && i - bucket < n) {
			uint32_t c = cells[i - bucket];
			const struct flow_bucket *bk = &t->buckets[c / SECHO_FLOW_BUCKET];
			unsigned s = c % SECHO_FLOW_BUCKET;
			if (bk->sig[s] && (exact || tick_le(bk->due[s], nt))) {
				const char *e = (const char *)&t->entries[bk->idx[s]];
				__builtin_prefetch(e, 1);
				__builtin_prefetch(e + 64, 1);
				__builtin_prefetch(secho_flow_table_slot(t, bk->idx[s]));
			}
		}
		if (i >= CELL_AHEAD)
			wheel_cell(t, cells[i - CELL_AHEAD], now, nt, exact);
	}
}

/* Cells taken out of a list at a time: whole chunks, up to four */
#define WHEEL_BATCH (4 * CHUNK_CELLS)

/* Take out the cells of wheel slot w and look at them (wheel_cells), up to four chunks at a
 * time: their cells copied out and the chunks freed first, so that cells that go back in
 * can use them. */
static void wheel_slot_expire(struct secho_flow_table *t, struct flow_wheel_slot *w, uint64_t now,
                              bool exact)
{
	uint32_t c = w->head, n = w->n;

	w->head = 0;
	w->n = 0;
	while (c) {
		uint32_t cells[WHEEL_BATCH];
		unsigned got = 0;
		while (c && got + n <= WHEEL_BATCH) {
			struct flow_chunk *ch = &t->chunks[c - 1];
			uint32_t next = ch->next;
			if (next)
				__builtin_prefetch(&t->chunks[next - 1]);
			memcpy(cells + got, ch->cell, n * sizeof(cells[0]));
			got += n;
			ch->next = t->chunk_free;
			t->chunk_free = c;
			c = next;
			n = CHUNK_CELLS;
		}
		wheel_cells(t, cells, got, now, exact);
	}
}

void secho_flow_table_expire(struct secho_flow_table *t, uint64_t now_ns)
{
	if (now_ns < t->clock_ns)
		now_ns = t->clock_ns;
	t->clock_ns = now_ns; /* time has passed, with or without packets of this table */
	uint64_t k = now_ns >> SECHO_FLOW_WHEEL_SHIFT;
	if (!t->wheel_on) {
		t->wheel_on = true;
		t->wheel_next = k;
		return;
	}
	if (k <= t->wheel_next)
		return;
	uint64_t from = t->wheel_next;
	/* After a jump of 2^30 ticks or more the bounds may have wrapped: look at every entry. */
	bool exact = ((k - from) << (SECHO_FLOW_WHEEL_SHIFT - TICK_SHIFT)) >= (1ull << 30);
	if (k - from > SECHO_FLOW_WHEEL_SLOTS)
		from = k - SECHO_FLOW_WHEEL_SLOTS; /* every slot once */
	/* first: cells that go back in go to period k or later, never to one being expired */
	t->wheel_next = k;
	for (uint64_t p = from; p < k; p++)
		wheel_slot_expire(t, &t->wheel[p & WHEEL_MASK], now_ns, exact);
}

void secho_flow_table_flush(struct secho_flow_table *t)
{
	/* The end of input is the latest packet of all, also one the tier counted and the
	 * table never saw (the tier is stopped by now: its times are final). offload_after
	 * is set only with the tier's hooks, and F_OFFLOADED only through them. */
	if (t->cfg.offload_after)
		for (size_t i = 0; i < (size_t)t->nbuckets * SECHO_FLOW_BUCKET; i++) {
			const struct flow_bucket *bk = &t->buckets[i / SECHO_FLOW_BUCKET];
			const struct flow_entry *e = &t->entries[bk->idx[i % SECHO_FLOW_BUCKET]];
			uint64_t last;
			if (bk->sig[i % SECHO_FLOW_BUCKET] && (e->flags & F_OFFLOADED) &&
			    !t->cfg.offload->peek(t->cfg.offload_ctx, &e->key, &last) &&
			    last > t->clock_ns)
				t->clock_ns = last;
		}
	for (uint32_t b = 0; b < t->nbuckets; b++)
		sweep_bucket(t, b, t->clock_ns);
	for (uint32_t b = 0; b < t->nbuckets; b++) {
		struct flow_bucket *bk = &t->buckets[b];
		bk->queued = 0;
		for (unsigned s = 0; s < SECHO_FLOW_BUCKET; s++) {
			if (!bk->sig[s])
				continue;
			struct flow_entry *e = &t->entries[bk->idx[s]];
			emit(t, e,
			     (e->flags & F_ENDED) ? SECHO_FLOW_END_EOF : SECHO_FLOW_END_FORCED);
			slot_free(t, b, s);
		}
	}
	/* every entry is free: the pool starts again from its first, as when new; so do the
	 * wheel and its chunks */
	t->free_head = 0;
	t->pool_used = 0;
	memset(t->wheel, 0, SECHO_FLOW_WHEEL_SLOTS * sizeof(struct flow_wheel_slot));
	t->chunks_used = 0;
	t->chunk_free = 0;
	t->wheel_on = false;
	memset(t->frags, 0, (size_t)t->nfragsets * FRAG_WAYS * sizeof(struct flow_frag));
}

bool secho_flow_table_offload_seen(struct secho_flow_table *t, const struct secho_flow_key *ck,
                                   uint64_t last_ns)
{
	uint64_t h = secho_flow_hash(&t->hasher, ck);
	uint32_t sig = (uint32_t)h ? (uint32_t)h : 1;
	uint32_t b = (uint32_t)(((h >> 32) * t->nbuckets) >> 32);
	const struct flow_bucket *bk = &t->buckets[b];

	for (unsigned s = 0; s < SECHO_FLOW_BUCKET; s++) {
		if (bk->sig[s] != sig)
			continue;
		struct flow_entry *e = &t->entries[bk->idx[s]];
		if (!key_eq(&e->key, ck))
			continue;
		if (!(e->flags & F_OFFLOADED))
			return false;
		seen_raise(t, e, last_ns);
		return true;
	}
	return false;
}
