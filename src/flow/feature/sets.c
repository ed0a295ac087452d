/*
 * src/flow/feature/sets.c - the feature sets by name, their layout in the extension slot,
 * and the calls that go to every set that is on (src/flow/feature/sets.h).
 */
#include "flow/feature/sets.h"
#include "flow/feature/bstats.h"
#include "flow/feature/dns.h"
#include "flow/feature/http.h"
#include "flow/feature/phists.h"
#include "flow/feature/pstats.h"
#include "flow/feature/quic.h"
#include "flow/feature/tls.h"
#include "flow/feature/wg.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

static const char *const set_names[SECHO_FEAT_NSETS] = {
#define SECHO_FEAT_SET_X(name, id, text) id,
        SECHO_FEAT_SETS(SECHO_FEAT_SET_X)
#undef SECHO_FEAT_SET_X
};

static const char *const set_texts[SECHO_FEAT_NSETS] = {
#define SECHO_FEAT_SET_X(name, id, text) text,
        SECHO_FEAT_SETS(SECHO_FEAT_SET_X)
#undef SECHO_FEAT_SET_X
};

static const size_t set_sizes[SECHO_FEAT_NSETS] = {
        sizeof(struct secho_feat_tls),    sizeof(struct secho_feat_quic),
        sizeof(struct secho_feat_dns),    sizeof(struct secho_feat_http),
        sizeof(struct secho_feat_wg),     sizeof(struct secho_feat_pstats),
        sizeof(struct secho_feat_phists), sizeof(struct secho_feat_bstats),
};

/* What exporters read of each state: all but the scratch last in it ("Done states"). */
static const size_t set_keep[SECHO_FEAT_NSETS] = {
        offsetof(struct secho_feat_tls, buf), offsetof(struct secho_feat_quic, crypto),
        offsetof(struct secho_feat_dns, tcp), offsetof(struct secho_feat_http, d),
        sizeof(struct secho_feat_wg),         sizeof(struct secho_feat_pstats),
        sizeof(struct secho_feat_phists),     sizeof(struct secho_feat_bstats),
};

size_t secho_feat_set_export_size(unsigned set)
{
	return set < SECHO_FEAT_NSETS ? set_keep[set] : 0;
}

const char *secho_feat_set_name(unsigned set)
{
	return set < SECHO_FEAT_NSETS ? set_names[set] : NULL;
}

const char *secho_feat_set_text(unsigned set)
{
	return set < SECHO_FEAT_NSETS ? set_texts[set] : NULL;
}

size_t secho_feat_set_size(unsigned set)
{
	return set < SECHO_FEAT_NSETS ? set_sizes[set] : 0;
}

int secho_feat_parse(const char *list, uint32_t *sets, const char **bad, size_t *badlen)
{
	const char *p = list;
	uint32_t s = 0;

	for (;;) {
		size_t n = strcspn(p, ",");
		unsigned i = 0;
		if (n == 3 && !memcmp(p, "all", 3)) {
			s |= SECHO_FEAT_ALL;
		} else if (n == 13 && !memcmp(p, "pstats:zeroes", 13)) {
			s |= 1u << SECHO_FEAT_SET_PSTATS | SECHO_FEAT_OPT_PSTATS_ZEROES;
		} else {
			for (i = 0; i < SECHO_FEAT_NSETS; i++)
				if (strlen(set_names[i]) == n && !memcmp(p, set_names[i], n))
					break;
			if (!n || i == SECHO_FEAT_NSETS) {
				*bad = p;
				*badlen = n;
				return -EINVAL;
			}
			s |= 1u << i;
		}
		if (!p[n])
			break;
		p += n + 1;
	}
	*sets = s;
	return 0;
}

void secho_feat_layout_make(uint32_t sets, struct secho_feat_layout *l)
{
	uint32_t off = 0, soff = 0;

	memset(l, 0, sizeof(*l));
	l->sets = sets & SECHO_FEAT_ALL;
	l->opts = l->sets & (1u << SECHO_FEAT_SET_PSTATS) ? sets & SECHO_FEAT_OPT_PSTATS_ZEROES : 0;
	l->pooled = l->sets & SECHO_FEAT_POOLED;
	/* phists first: its offset in a slot a whole number of lines (0), so that each
	 * direction's histograms are one line (phists.h); pstats after it, its count and
	 * first packets in the line of phists' last times; then the others */
	static const uint8_t order[SECHO_FEAT_NSETS] = {
	        SECHO_FEAT_SET_PHISTS, SECHO_FEAT_SET_PSTATS, SECHO_FEAT_SET_TLS,
	        SECHO_FEAT_SET_QUIC,   SECHO_FEAT_SET_DNS,    SECHO_FEAT_SET_HTTP,
	        SECHO_FEAT_SET_WG,     SECHO_FEAT_SET_BSTATS};
	for (unsigned k = 0; k < SECHO_FEAT_NSETS; k++) {
		unsigned i = order[k];
		if (!(l->sets & (1u << i)))
			continue;
		uint32_t size = (uint32_t)((set_sizes[i] + 7) & ~(size_t)7);
		l->off[i] = off;
		off += size;
		l->soff[i] = soff;
		soff += l->pooled & (1u << i) ? 8 : size; /* a handle, kept 8-aligned */
	}
	l->bytes = off;
	l->slot_bytes = soff;
}

/* A pooled state's slot: its size rounded up to whole lines. */
static uint32_t pool_stride(unsigned set)
{
	return (uint32_t)((set_sizes[set] + 63) & ~(size_t)63);
}

/* A done pool's slot (set_keep rounded up to whole lines), 0 when the set keeps all. */
static uint32_t done_stride(unsigned set)
{
	if (set_keep[set] == set_sizes[set])
		return 0;
	return (uint32_t)((set_keep[set] + 63) & ~(size_t)63);
}

/* A done pool's states for pools of cap. */
static uint32_t done_cap(uint32_t cap)
{
	return cap / 4 + 1;
}

size_t secho_feat_pools_size(const struct secho_feat_layout *l, uint32_t cap)
{
	size_t n = 0;

	for (uint32_t s = l->pooled; s; s &= s - 1) {
		unsigned i = (unsigned)__builtin_ctz(s);
		n += (size_t)pool_stride(i) * cap + (size_t)done_stride(i) * done_cap(cap);
	}
	return n;
}

void secho_feat_pools_init(struct secho_feat_pools *ps, const struct secho_feat_layout *l,
                           void *mem, uint32_t cap)
{
	uint8_t *p = mem;

	memset(ps, 0, sizeof(*ps));
	for (uint32_t s = l->pooled; s; s &= s - 1) {
		unsigned i = (unsigned)__builtin_ctz(s);
		ps->p[i].base = p;
		ps->p[i].stride = pool_stride(i);
		ps->p[i].cap = cap;
		p += (size_t)ps->p[i].stride * cap;
		if (!done_stride(i))
			continue;
		ps->d[i].base = p;
		ps->d[i].stride = done_stride(i);
		ps->d[i].cap = done_cap(cap);
		p += (size_t)ps->d[i].stride * ps->d[i].cap;
	}
}

/* A pooled set's handle in a slot's area. */
static inline uint32_t *handle(const struct secho_feat_layout *l, const uint8_t *area, unsigned i)
{
	return (uint32_t *)(void *)((uintptr_t)area + l->soff[i]);
}

/* A state from set i's pool into its handle: 0, or -1 when the pool is empty. */
static int borrow(const struct secho_feat_layout *l, struct secho_feat_pools *ps, uint8_t *area,
                  unsigned i)
{
	uint32_t h = secho_feat_pool_take(&ps->p[i]);

	if (!h)
		return -1;
	*handle(l, area, i) = h;
	return 0;
}

/* Set i's state, done and having found something, to the done pool: its first part only
 * (set_keep); left whole where it is when the done pool is empty. */
static void to_done(const struct secho_feat_layout *l, struct secho_feat_pools *ps, uint8_t *area,
                    unsigned i)
{
	uint32_t *hp = handle(l, area, i);
	struct secho_feat_pool *dp = &ps->d[i];

	if (!dp->base || (*hp & SECHO_FEAT_DONE_HANDLE))
		return;
	uint32_t h = secho_feat_pool_take(dp);
	if (!h)
		return;
	memcpy(secho_feat_pool_slot(dp, h), secho_feat_pool_slot(&ps->p[i], *hp), set_keep[i]);
	secho_feat_pool_give(&ps->p[i], *hp);
	*hp = h | SECHO_FEAT_DONE_HANDLE;
}

void secho_feat_sets_release(const struct secho_feat_layout *l, struct secho_feat_pools *ps,
                             uint8_t *area, uint32_t live)
{
	for (uint32_t s = live & l->pooled; s; s &= s - 1) {
		unsigned i = (unsigned)__builtin_ctz(s);
		uint32_t *hp = handle(l, area, i), h = *hp;
		if (!h)
			continue;
		if (h & SECHO_FEAT_DONE_HANDLE)
			secho_feat_pool_give(&ps->d[i], h & ~SECHO_FEAT_DONE_HANDLE);
		else
			secho_feat_pool_give(&ps->p[i], h);
		*hp = 0;
	}
}

/* Set i's state for a record in which it is live. */
static inline uint8_t *state_of(const struct secho_feat_layout *l,
                                const struct secho_feat_pools *ps, const uint8_t *area, unsigned i)
{
	if (l->pooled & (1u << i)) {
		uint32_t h = *handle(l, area, i);
		if (h & SECHO_FEAT_DONE_HANDLE)
			return secho_feat_pool_slot(&ps->d[i], h & ~SECHO_FEAT_DONE_HANDLE);
		return secho_feat_pool_slot(&ps->p[i], h);
	}
	return (uint8_t *)(uintptr_t)area + l->soff[i];
}

void secho_feat_sets_sections(const struct secho_feat_layout *l, const struct secho_feat_pools *ps,
                              const uint8_t *area, uint32_t live,
                              const uint8_t *sec[SECHO_FEAT_NSETS])
{
	for (unsigned i = 0; i < SECHO_FEAT_NSETS; i++)
		sec[i] = NULL;
	for (uint32_t s = live & l->sets; s; s &= s - 1) {
		unsigned i = (unsigned)__builtin_ctz(s);
		sec[i] = state_of(l, ps, area, i);
	}
}

void secho_feat_sets_area(const struct secho_feat_layout *l, const uint8_t *area,
                          const uint8_t *sec[SECHO_FEAT_NSETS])
{
	for (unsigned i = 0; i < SECHO_FEAT_NSETS; i++)
		sec[i] = l->sets & (1u << i) ? area + l->off[i] : NULL;
}

/* One set's state in a slot's area (a live set). */
#define STATE(type, l, ps, area, i) ((type *)(void *)state_of(l, ps, area, i))

/* What a set that is not live reads: every set's zero state ("found nothing"). */
static const union {
	struct secho_feat_tls tls;
	struct secho_feat_quic quic;
	struct secho_feat_dns dns;
	struct secho_feat_http http;
	struct secho_feat_wg wg;
	struct secho_feat_pstats pstats;
	struct secho_feat_phists phists;
	struct secho_feat_bstats bstats;
} zero_state;

const void *secho_feat_sets_state(const struct secho_feat_layout *l,
                                  const uint8_t *const sec[SECHO_FEAT_NSETS], uint32_t live,
                                  unsigned set)
{
	if (set < SECHO_FEAT_NSETS && (live & l->sets & 1u << set) && sec[set])
		return sec[set];
	return &zero_state;
}

/* Set i's state in a record whose live sets are live: the zero state when i is not live. */
#define LSTATE(type, l, sec, live, i) ((const type *)secho_feat_sets_state(l, sec, live, i))

bool secho_feat_sets_new_record(const struct secho_feat_layout *l, const uint8_t *area,
                                uint32_t live, const struct secho_feat_pkt *p)
{
	if (!(l->sets & live & 1u << SECHO_FEAT_SET_WG))
		return false;
	return secho_feat_wg_new_session(
	        (const struct secho_feat_wg *)(const void *)(area + l->soff[SECHO_FEAT_SET_WG]), p);
}

enum { NO, YES, LATER };

/*
 * Whether set i wants packet p's flow: NO (it never will: its protocol or ports are not the
 * set's), YES (from this packet on), or LATER (it would, but p would not change its zero
 * state: ask again at the next packet). What each set does with a packet without payload
 * decides which may wait: dns, http, pstats, phists and bstats skip such packets (the
 * statistics sets as ipfixprobe's without "includezeroes"; pstats with it, `--features
 * pstats:zeroes`, records them and decides at the first packet); tls records a SYN's sequence
 * number (the stream starts after it: a later first segment is a gap), nothing else; quic
 * counts an empty datagram towards its bound of datagrams, and wg takes one as "not
 * WireGuard": both decide at the first packet.
 */
static unsigned decide(const struct secho_feat_layout *l, unsigned i,
                       const struct secho_feat_pkt *p)
{
	bool data = p->len || p->wire_len;

	switch (i) {
	case SECHO_FEAT_SET_TLS:
		if (!secho_feat_tls_wants(p))
			return NO;
		return data || (p->tcp_flags & 0x02) ? YES : LATER;
	case SECHO_FEAT_SET_QUIC:
		return secho_feat_quic_wants(p) ? YES : NO;
	case SECHO_FEAT_SET_DNS:
		if (!secho_feat_dns_wants(p))
			return NO;
		return data ? YES : LATER;
	case SECHO_FEAT_SET_HTTP:
		if (!secho_feat_http_wants(p))
			return NO;
		return data ? YES : LATER;
	case SECHO_FEAT_SET_WG:
		return secho_feat_wg_wants(p) ? YES : NO;
	case SECHO_FEAT_SET_PSTATS: /* every flow; its empty packets too with pstats:zeroes */
		return data || (l->opts & SECHO_FEAT_OPT_PSTATS_ZEROES) ? YES : LATER;
	case SECHO_FEAT_SET_PHISTS:
	case SECHO_FEAT_SET_BSTATS:
		return data ? YES : LATER; /* every flow */
	default:
		return NO;
	}
}

/* Set i's state made ready for a record: its fixed part zeroed (its init). */
static void init(const struct secho_feat_layout *l, const struct secho_feat_pools *ps,
                 uint8_t *area, unsigned i)
{
	switch (i) {
	case SECHO_FEAT_SET_TLS:
		secho_feat_tls_init(STATE(struct secho_feat_tls, l, ps, area, i));
		break;
	case SECHO_FEAT_SET_QUIC:
		secho_feat_quic_init(STATE(struct secho_feat_quic, l, ps, area, i));
		break;
	case SECHO_FEAT_SET_DNS:
		secho_feat_dns_init(STATE(struct secho_feat_dns, l, ps, area, i));
		break;
	case SECHO_FEAT_SET_HTTP:
		secho_feat_http_init(STATE(struct secho_feat_http, l, ps, area, i));
		break;
	case SECHO_FEAT_SET_WG:
		secho_feat_wg_init(STATE(struct secho_feat_wg, l, ps, area, i));
		break;
	case SECHO_FEAT_SET_PSTATS:
		secho_feat_pstats_init(STATE(struct secho_feat_pstats, l, ps, area, i));
		break;
	case SECHO_FEAT_SET_PHISTS:
		secho_feat_phists_init(STATE(struct secho_feat_phists, l, ps, area, i));
		break;
	case SECHO_FEAT_SET_BSTATS:
		secho_feat_bstats_init(STATE(struct secho_feat_bstats, l, ps, area, i));
		break;
	default:
		break;
	}
}

/* The sets that have not decided decide on packet p (out of line: once or a few times a
 * record). */
static __attribute__((noinline)) void decide_all(const struct secho_feat_layout *l,
                                                 struct secho_feat_pools *ps, uint8_t *area,
                                                 uint32_t *live, uint32_t *decided,
                                                 uint32_t undecided, const struct secho_feat_pkt *p)
{
	while (undecided) {
		unsigned i = (unsigned)__builtin_ctz(undecided);
		undecided &= undecided - 1;
		unsigned d = decide(l, i, p);
		if (d == LATER)
			continue;
		*decided |= 1u << i;
		if (d == YES) {
			/* a pooled set without a state (its pool empty: never, as the table sizes
			 * it) stays out, as a set that found nothing */
			if ((l->pooled & (1u << i)) && borrow(l, ps, area, i))
				continue;
			init(l, ps, area, i);
			*live |= 1u << i;
		}
	}
}

/*
 * Whether a pooled set that is done found nothing: its state exports exactly what its zero
 * state exports (JSON: no member, secho_feat_X_json; IPFIX: not carried,
 * secho_ipfix_feat_carried). Such a state is given back at once, the set no longer live in
 * the record (it reads as its zero state from then on): a TCP flow that is HTTP holds no
 * TLS state for the rest of its record, nor a TLS flow an HTTP one, nor a UDP flow that is
 * not QUIC a QUIC one. quic: nothing without a QUIC packet (s->quic); dns: without a
 * message (seen); http: without a request or response head; tls: without a hello, a
 * certificate or a counter (gap, snapped, malformed, oversize, overflow: JSON writes them).
 */
static bool tls_empty(const struct secho_feat_tls *s)
{
	return !(s->flags & (SECHO_FEAT_TLS_F_CH | SECHO_FEAT_TLS_F_SH | SECHO_FEAT_TLS_F_ALPN_CUT |
	                     SECHO_FEAT_TLS_F_CERT)) &&
	       !(s->gap | s->snapped | s->malformed | s->oversize | s->overflow);
}

/* Pooled set i's state is done: back to its pool and the set out of the record when it
 * found nothing (empty), else to the done pool ("Done states", sets.h). */
static void now_done(const struct secho_feat_layout *l, struct secho_feat_pools *ps, uint8_t *area,
                     uint32_t *live, unsigned i, bool empty)
{
	if (empty) {
		secho_feat_sets_release(l, ps, area, 1u << i);
		*live &= ~(1u << i);
	} else {
		to_done(l, ps, area, i);
	}
}

void secho_feat_sets_packet(const struct secho_feat_layout *l, struct secho_feat_pools *ps,
                            uint8_t *area, uint32_t *live, uint32_t *decided, uint32_t *done,
                            const struct secho_feat_pkt *p)
{
	uint32_t undecided = l->sets & ~*decided;

	if (undecided)
		decide_all(l, ps, area, live, decided, undecided, p);
	uint32_t sets = *live & l->sets & ~*done;
	while (sets) {
		unsigned i = (unsigned)__builtin_ctz(sets);
		uint32_t bit = 1u << i;
		sets &= sets - 1;
		switch (i) {
		case SECHO_FEAT_SET_TLS: {
			struct secho_feat_tls *s = STATE(struct secho_feat_tls, l, ps, area, i);
			if (!secho_feat_tls_done(s))
				secho_feat_tls_packet(s, p);
			if (secho_feat_tls_done(s)) {
				*done |= bit;
				now_done(l, ps, area, live, i, tls_empty(s));
			}
			break;
		}
		case SECHO_FEAT_SET_QUIC: {
			struct secho_feat_quic *s = STATE(struct secho_feat_quic, l, ps, area, i);
			if (!s->done)
				secho_feat_quic_packet(s, p);
			if (s->done) {
				*done |= bit;
				now_done(l, ps, area, live, i, !s->quic);
			}
			break;
		}
		case SECHO_FEAT_SET_DNS: {
			struct secho_feat_dns *s = STATE(struct secho_feat_dns, l, ps, area, i);
			if (!s->done)
				secho_feat_dns_packet(s, p);
			if (s->done) {
				*done |= bit;
				now_done(l, ps, area, live, i, !s->seen);
			}
			break;
		}
		case SECHO_FEAT_SET_HTTP: {
			struct secho_feat_http *s = STATE(struct secho_feat_http, l, ps, area, i);
			if (!s->done)
				secho_feat_http_packet(s, p);
			if (s->done) {
				*done |= bit;
				now_done(l, ps, area, live, i, !s->f.have_req && !s->f.have_resp);
			}
			break;
		}
		case SECHO_FEAT_SET_WG: {
			struct secho_feat_wg *s = STATE(struct secho_feat_wg, l, ps, area, i);
			if (!s->done)
				secho_feat_wg_packet(s, p);
			if (s->done)
				*done |= bit;
			break;
		}
		case SECHO_FEAT_SET_PSTATS: {
			struct secho_feat_pstats *s =
			        STATE(struct secho_feat_pstats, l, ps, area, i);
			if (!s->done)
				secho_feat_pstats_packet_opt(s, p,
				                             l->opts & SECHO_FEAT_OPT_PSTATS_ZEROES
				                                     ? SECHO_PSTATS_INCLUDE_ZEROES
				                                     : 0);
			if (s->done)
				*done |= bit;
			break;
		}
		case SECHO_FEAT_SET_PHISTS:
			/* never done: every packet counts */
			secho_feat_phists_packet(STATE(struct secho_feat_phists, l, ps, area, i),
			                         p);
			break;
		case SECHO_FEAT_SET_BSTATS: {
			struct secho_feat_bstats *s =
			        STATE(struct secho_feat_bstats, l, ps, area, i);
			if (!s->done)
				secho_feat_bstats_packet(s, p);
			if (s->done)
				*done |= bit;
			break;
		}
		default:
			break;
		}
	}
}

int secho_feat_sets_json(const struct secho_feat_layout *l,
                         const uint8_t *const sec[SECHO_FEAT_NSETS], uint32_t live,
                         uint64_t packets, uint8_t tcp_flags, char *buf, size_t cap)
{
	size_t used = 0;
	uint32_t sets = l->sets;

	if (cap)
		buf[0] = 0;
	while (sets) {
		unsigned i = (unsigned)__builtin_ctz(sets);
		sets &= sets - 1;
		char *b = buf + used;
		size_t c = cap - used;
		int n = 0;
		switch (i) {
		case SECHO_FEAT_SET_TLS: /* tls and quic write "name":value,... without the
		                          * leading comma the others write: it goes first */
			if (c < 2)
				return -ENOSPC;
			*b = ',';
			n = secho_feat_tls_json(LSTATE(struct secho_feat_tls, l, sec, live, i),
			                        b + 1, c - 1);
			n = n > 0 ? n + 1 : n;
			break;
		case SECHO_FEAT_SET_QUIC:
			if (c < 2)
				return -ENOSPC;
			*b = ',';
			n = secho_feat_quic_json(LSTATE(struct secho_feat_quic, l, sec, live, i),
			                         b + 1, c - 1);
			n = n > 0 ? n + 1 : n;
			break;
		case SECHO_FEAT_SET_DNS:
			n = secho_feat_dns_json(LSTATE(struct secho_feat_dns, l, sec, live, i), b,
			                        c);
			break;
		case SECHO_FEAT_SET_HTTP:
			n = secho_feat_http_json(LSTATE(struct secho_feat_http, l, sec, live, i), b,
			                         c);
			break;
		case SECHO_FEAT_SET_WG:
			n = secho_feat_wg_json(LSTATE(struct secho_feat_wg, l, sec, live, i), b, c);
			break;
		case SECHO_FEAT_SET_PSTATS:
			if (secho_feat_pstats_keep(packets, tcp_flags))
				n = secho_feat_pstats_json(
				        LSTATE(struct secho_feat_pstats, l, sec, live, i), b, c);
			break;
		case SECHO_FEAT_SET_PHISTS:
			if (secho_feat_phists_keep(packets, tcp_flags))
				n = secho_feat_phists_json(
				        LSTATE(struct secho_feat_phists, l, sec, live, i), b, c);
			break;
		case SECHO_FEAT_SET_BSTATS:
			if (secho_feat_bstats_keep(packets))
				n = secho_feat_bstats_json(
				        LSTATE(struct secho_feat_bstats, l, sec, live, i), b, c);
			break;
		default:
			break;
		}
		if (n < 0)
			return n;
		used += (size_t)n;
	}
	return (int)used;
}
