/*
 * tests/unit/test_flow_features.c - the feature sets in the flow table (`--features`,
 * src/flow/feature/sets.h, src/flow/core/table.h "The extension"): the sections' layout and
 * the stride, the table's memory growing by (stride - 64) per entry, the record pointing at
 * its slot during emit, no set live when a record starts (new flow in a reused entry,
 * active-timeout continuation, SYN reuse) and the area left as it was, which sets a flow
 * makes live (dns only at port 53), records from slots full of an earlier record's bytes
 * identical to records from zeroed ones (generated application traffic), frames' payloads
 * reaching a set, and the list parser.
 *
 * Under valgrind (`valgrind --error-exitcode=1 build/tests/test_flow_features`), the table of
 * the reuse test leaves its feature areas as malloc gave them: a set that read its state
 * before its init or its init wrote it is an uninitialised read.
 */
#include "flow/core/table.h"
#include "flow/export/ipfix_feat.h"
#include "flow/export/json.h"
#include "flow/feature/http.h"
#include "flow/feature/phists.h"
#include "flow/feature/pstats.h"
#include "flow/feature/sets.h"
#include "harness.h"
#include "secho/dissect.h"
#include "traffic/gen.h"

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define SECHO_TEST_MEMCHECK 1
#endif
#endif
#ifndef SECHO_TEST_MEMCHECK
#define SECHO_TEST_MEMCHECK 0
#endif

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_NS 1000000000ull

struct seen {
	unsigned n;
	const uint8_t *sec[SECHO_FEAT_NSETS]; /* the last record's states */
	const struct secho_feat_layout *layout;
	uint32_t live;       /* the last record's live sets */
	uint8_t copy[16384]; /* its live states, copied during emit at their off[] (a ring's
	                      * area) */
	char json[4096];
	int json_n;
	/* every record's, up to 8: its JSON members, end reason, packets */
	char jsons[8][512];
	uint8_t reasons[8];
	uint64_t packets[8];
};

static void on_rec(void *ctx, const struct secho_flow_rec *r)
{
	struct seen *s = ctx;
	s->n++;
	memcpy(s->sec, r->feat_sec, sizeof(s->sec));
	s->layout = r->feat_layout;
	s->live = r->feat_live;
	if (r->feat_layout && r->feat_layout->bytes <= sizeof(s->copy))
		for (unsigned i = 0; i < SECHO_FEAT_NSETS; i++)
			if ((r->feat_live & (1u << i)) && r->feat_sec[i])
				memcpy(s->copy + r->feat_layout->off[i], r->feat_sec[i],
				       secho_feat_set_export_size(i));
	s->json_n = r->feat_layout
	                    ? secho_feat_sets_json(r->feat_layout, r->feat_sec, r->feat_live,
	                                           r->fwd.packets + r->rev.packets,
	                                           (uint8_t)(r->fwd.tcp_flags | r->rev.tcp_flags),
	                                           s->json, sizeof(s->json))
	                    : 0;
	if (s->n <= 8) {
		size_t jn = s->json_n > 0 ? (size_t)s->json_n : 0;
		if (jn >= sizeof(s->jsons[0]))
			jn = sizeof(s->jsons[0]) - 1;
		memcpy(s->jsons[s->n - 1], s->json, jn);
		s->jsons[s->n - 1][jn] = 0;
		s->reasons[s->n - 1] = r->end_reason;
		s->packets[s->n - 1] = r->fwd.packets + r->rev.packets;
	}
}

struct tbl {
	struct secho_flow_table t;
	void *mem;
	size_t len;
	struct seen out;
};

static int tbl_init(struct tbl *x, uint32_t features)
{
	struct secho_flow_table_cfg cfg = {
	        .flows = 64,
	        .active_ns = 10 * S_NS,
	        .inactive_ns = 5 * S_NS,
	        .hash = SECHO_FLOW_HASH_DEFAULT,
	        .seed = 12345,
	        .emit = on_rec,
	        .features = features,
	};
	memset(x, 0, sizeof(*x));
	cfg.ctx = &x->out;
	x->len = secho_flow_table_mem_size(&cfg);
	if (!x->len || posix_memalign(&x->mem, 64, x->len))
		return -1;
	memset(x->mem, 0, x->len);
	return secho_flow_table_init(&x->t, &cfg, x->mem, x->len);
}

static void key4(struct secho_flow_key *k, uint8_t proto, uint16_t sp, uint16_t dp)
{
	uint32_t s = htonl(0xc6120001), d = htonl(0xc6120002); /* 198.18.0.1 -> .2 */
	memset(k, 0, sizeof(*k));
	k->ip_version = 4;
	k->proto = proto;
	memcpy(k->src, &s, 4);
	memcpy(k->dst, &d, 4);
	k->sport = sp;
	k->dport = dp;
}

static void pkt(struct tbl *x, const struct secho_flow_key *k, uint64_t ts, uint8_t flags)
{
	struct secho_flow_pkt p = {.key = *k, .ts_ns = ts, .octets = 100, .tcp_flags = flags};
	secho_flow_table_packet(&x->t, &p);
}

static bool all_bytes(const uint8_t *p, size_t n, uint8_t v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return false;
	return true;
}

static void test_layout(void)
{
	t_begin("flow features: layout, stride, pools and memory");
	struct secho_feat_layout l;
	secho_feat_layout_make(0, &l);
	T_CHECK(l.bytes == 0 && l.sets == 0 && l.slot_bytes == 0 && l.pooled == 0,
	        "no set: %u bytes", l.bytes);
	T_CHECK(secho_flow_table_stride(0) == SECHO_FLOW_EXTRA_BYTES, "stride without sets %zu",
	        secho_flow_table_stride(0));
	uint32_t sets =
	        1u << SECHO_FEAT_SET_TLS | 1u << SECHO_FEAT_SET_DNS | 1u << SECHO_FEAT_SET_WG;
	secho_feat_layout_make(sets, &l);
	size_t tls = (secho_feat_set_size(SECHO_FEAT_SET_TLS) + 7) & ~(size_t)7;
	size_t dns = (secho_feat_set_size(SECHO_FEAT_SET_DNS) + 7) & ~(size_t)7;
	size_t wg = (secho_feat_set_size(SECHO_FEAT_SET_WG) + 7) & ~(size_t)7;
	/* a record's area: every set in one block */
	T_CHECK(l.off[SECHO_FEAT_SET_TLS] == 0, "tls at %u", l.off[SECHO_FEAT_SET_TLS]);
	T_CHECK(l.off[SECHO_FEAT_SET_DNS] == tls, "dns at %u, want %zu", l.off[SECHO_FEAT_SET_DNS],
	        tls);
	T_CHECK(l.off[SECHO_FEAT_SET_WG] == tls + dns, "wg at %u", l.off[SECHO_FEAT_SET_WG]);
	T_CHECK(l.bytes == tls + dns + wg, "bytes %u", l.bytes);
	/* the slot: a handle for each large set, the small ones' states */
	T_CHECK(l.pooled == (1u << SECHO_FEAT_SET_TLS | 1u << SECHO_FEAT_SET_DNS), "pooled %#x",
	        l.pooled);
	T_CHECK(l.soff[SECHO_FEAT_SET_TLS] == 0 && l.soff[SECHO_FEAT_SET_DNS] == 8 &&
	                l.soff[SECHO_FEAT_SET_WG] == 16 && l.slot_bytes == 16 + wg,
	        "slot: tls %u dns %u wg %u, %u bytes", l.soff[SECHO_FEAT_SET_TLS],
	        l.soff[SECHO_FEAT_SET_DNS], l.soff[SECHO_FEAT_SET_WG], l.slot_bytes);
	size_t stride = secho_flow_table_stride(sets);
	T_CHECK(stride % 64 == 0 && stride >= SECHO_FLOW_EXTRA_BYTES + l.slot_bytes &&
	                stride < SECHO_FLOW_EXTRA_BYTES + l.slot_bytes + 64,
	        "stride %zu for %u bytes", stride, l.slot_bytes);
	for (unsigned i = 0; i < SECHO_FEAT_NSETS; i++)
		T_CHECK(l.off[i] % 8 == 0 && l.soff[i] % 8 == 0, "set %u at %u, %u", i, l.off[i],
		        l.soff[i]);
	size_t ptls = (secho_feat_set_size(SECHO_FEAT_SET_TLS) + 63) & ~(size_t)63;
	size_t pdns = (secho_feat_set_size(SECHO_FEAT_SET_DNS) + 63) & ~(size_t)63;
	/* the done pools: the first parts only, a state for a quarter of the entries (+ 1) */
	size_t dtls = (secho_feat_set_export_size(SECHO_FEAT_SET_TLS) + 63) & ~(size_t)63;
	size_t ddns = (secho_feat_set_export_size(SECHO_FEAT_SET_DNS) + 63) & ~(size_t)63;
	T_CHECK(dtls < ptls && ddns < pdns &&
	                secho_feat_set_export_size(SECHO_FEAT_SET_HTTP) ==
	                        offsetof(struct secho_feat_http, d) &&
	                secho_feat_set_export_size(SECHO_FEAT_SET_WG) ==
	                        secho_feat_set_size(SECHO_FEAT_SET_WG),
	        "export sizes: tls %zu of %zu, dns %zu of %zu", dtls, ptls, ddns, pdns);
	T_CHECK(secho_feat_pools_size(&l, 10) == 10 * (ptls + pdns) + 3 * (dtls + ddns),
	        "pools %zu", secho_feat_pools_size(&l, 10));

	struct tbl a, b;
	T_CHECK(tbl_init(&a, 0) == 0 && tbl_init(&b, sets) == 0, "tables");
	uint32_t cap = secho_flow_table_capacity(&a.t), dcap = cap / 4 + 1;
	T_CHECK(b.len - a.len == (stride - SECHO_FLOW_EXTRA_BYTES + ptls + pdns) * cap +
	                                 (dtls + ddns) * dcap,
	        "memory %zu vs %zu: grows by (%zu + %zu + %zu) x %u + (%zu + %zu) x %u", b.len,
	        a.len, stride - SECHO_FLOW_EXTRA_BYTES, ptls, pdns, cap, dtls, ddns, dcap);
	T_CHECK(secho_flow_table_slot(&b.t, 1) - secho_flow_table_slot(&b.t, 0) ==
	                        (long)SECHO_FLOW_EXTRA_BYTES &&
	                secho_flow_table_area(&b.t, 1) - secho_flow_table_area(&b.t, 0) ==
	                        (long)(stride - SECHO_FLOW_EXTRA_BYTES) &&
	                secho_flow_table_area(&b.t, 0) ==
	                        (uint8_t *)b.mem + secho_flow_table_feature_at(&b.t) &&
	                secho_flow_table_area(&b.t, 0) >=
	                        secho_flow_table_slot(&b.t, secho_flow_table_capacity(&b.t)),
	        "lines 64 bytes apart, feature areas (stride - 64) apart, after the lines");
	const struct secho_feat_pool *pt = &b.t.feat_pools.p[SECHO_FEAT_SET_TLS];
	const struct secho_feat_pool *pd = &b.t.feat_pools.p[SECHO_FEAT_SET_DNS];
	const struct secho_feat_pool *qt = &b.t.feat_pools.d[SECHO_FEAT_SET_TLS];
	const struct secho_feat_pool *qd = &b.t.feat_pools.d[SECHO_FEAT_SET_DNS];
	T_CHECK(pt->cap == cap && pd->cap == cap && pt->stride == ptls && pd->stride == pdns &&
	                qt->cap == dcap && qd->cap == dcap && qt->stride == dtls &&
	                qd->stride == ddns && qt->base == pt->base + ptls * cap &&
	                pd->base == qt->base + dtls * dcap && qd->base == pd->base + pdns * cap &&
	                ((uintptr_t)pt->base & 63) == 0 &&
	                qd->base + ddns * dcap == (uint8_t *)b.mem + b.len &&
	                b.t.feat_pools.p[SECHO_FEAT_SET_WG].base == NULL &&
	                b.t.feat_pools.d[SECHO_FEAT_SET_WG].base == NULL,
	        "the pools: one state per entry each and their done pools, at the end of the "
	        "table's memory");
	free(a.mem);
	free(b.mem);

	/* beyond the extension's bound: refused */
	struct secho_flow_table_cfg big = {
	        .flows = SECHO_FLOW_MAX_FLOWS, .emit = on_rec, .features = SECHO_FEAT_ALL};
	T_CHECK(secho_flow_table_mem_size(&big) == 0, "2^30 flows with every set accepted");
	t_end();
}

/* The feature area of the flow's entry (the table holds one flow: entry 0). */
static uint8_t *area0(struct tbl *x)
{
	return secho_flow_table_area(&x->t, 0);
}

/* The extension of the table's one flow (entry 0). */
static struct secho_flow_xline *x0(struct tbl *x)
{
	return (struct secho_flow_xline *)secho_flow_table_slot(&x->t, 0);
}

static void test_start(void)
{
	t_begin("flow features: no set live when a record starts, the area left as it was, the "
	        "record points at it");
	struct tbl x;
	/* two small sets, kept in the slot (their sections there are what a record's area
	 * holds: the same offsets) */
	uint32_t sets = 1u << SECHO_FEAT_SET_PSTATS | 1u << SECHO_FEAT_SET_PHISTS;
	T_CHECK(tbl_init(&x, sets) == 0, "table");
	uint32_t fb = x.t.feat.bytes;
	struct secho_flow_key k;
	key4(&k, 6, 40000, 80);

	pkt(&x, &k, 1 * S_NS, 0x02);
	memset(area0(&x), 0xaa, fb); /* what this record's sets "saw" */
	x0(&x)->feat_live = x0(&x)->feat_decided = sets;
	/* the active timeout (10 s): the record leaves with its area, the next starts with
	 * nothing live */
	pkt(&x, &k, 4 * S_NS, 0x10);
	pkt(&x, &k, 8 * S_NS, 0x10);
	pkt(&x, &k, 12 * S_NS, 0x10);
	T_CHECK(x.out.n == 1, "%u records after the active timeout", x.out.n);
	T_CHECK(x.t.feat.pooled == 0 && x.t.feat.slot_bytes == fb, "in the slot: %u of %u bytes",
	        x.t.feat.slot_bytes, fb);
	T_CHECK(x.out.sec[SECHO_FEAT_SET_PHISTS] == area0(&x) &&
	                x.out.sec[SECHO_FEAT_SET_PSTATS] ==
	                        area0(&x) + x.t.feat.soff[SECHO_FEAT_SET_PSTATS] &&
	                x.out.sec[SECHO_FEAT_SET_TLS] == NULL && x.out.layout == &x.t.feat &&
	                x.out.live == sets,
	        "the record points at its slot's sections and the table's layout, live %#x",
	        x.out.live);
	T_CHECK(all_bytes(x.out.copy, fb, 0xaa), "the record carried its own area");
	T_CHECK(x0(&x)->feat_live == 0 && x0(&x)->feat_decided == 0 &&
	                all_bytes(area0(&x), fb, 0xaa),
	        "continuation: nothing live (%#x, decided %#x), the area not written",
	        x0(&x)->feat_live, x0(&x)->feat_decided);

	/* SYN reuse: FIN, then a SYN on the same key */
	x0(&x)->feat_live = x0(&x)->feat_decided = sets;
	memset(area0(&x), 0xbb, fb);
	pkt(&x, &k, 13 * S_NS, 0x11);
	pkt(&x, &k, 14 * S_NS, 0x02);
	T_CHECK(x.out.n == 2, "%u records after SYN reuse", x.out.n);
	T_CHECK(all_bytes(x.out.copy, fb, 0xbb), "the ended record carried its area");
	T_CHECK(x0(&x)->feat_live == 0 && x0(&x)->feat_decided == 0, "SYN reuse: nothing live");

	/* a new flow in the freed entry (the last freed first) */
	memset(area0(&x), 0xcc, fb);
	secho_flow_table_flush(&x.t);
	T_CHECK(x.out.n == 3 && x.out.sec[SECHO_FEAT_SET_PSTATS] == NULL, "flush: %u records",
	        x.out.n);
	T_CHECK(x.out.live == 0 && x.out.json_n == 0,
	        "a record whose sets saw nothing: live %#x, no members: %d (%s)", x.out.live,
	        x.out.json_n, x.out.json);
	struct secho_flow_key k2;
	key4(&k2, 17, 5353, 53);
	x0(&x)->feat_live = x0(&x)->feat_decided = sets;
	pkt(&x, &k2, 20 * S_NS, 0);
	T_CHECK(x0(&x)->feat_live == 0 && x0(&x)->feat_decided == 0,
	        "a new flow in a used entry: nothing live");
	/* the key-only path gives the sets nothing */
	pkt(&x, &k2, 21 * S_NS, 0);
	T_CHECK(x0(&x)->feat_live == 0 && x0(&x)->feat_decided == 0 &&
	                all_bytes(area0(&x), fb, 0xcc),
	        "packets by key: the sets see nothing, decide nothing");
	secho_flow_table_flush(&x.t);
	T_CHECK(x.out.json_n == 0, "no members for a flow whose sets saw nothing: %d (%s)",
	        x.out.json_n, x.out.json);
	free(x.mem);

	/* without sets: no area, no pointer */
	T_CHECK(tbl_init(&x, 0) == 0, "table without sets");
	pkt(&x, &k, 1 * S_NS, 0);
	secho_flow_table_flush(&x.t);
	T_CHECK(x.out.n == 1 && x.out.layout == NULL && x.t.fstride == 0,
	        "no sets: no layout, feature area %zu bytes", x.t.fstride);
	free(x.mem);
	t_end();
}

/* An Ethernet + IPv4 + UDP frame with plen bytes of payload (v). */
static size_t udp_frame(uint8_t *f, uint16_t sp, uint16_t dp, size_t plen, uint8_t v)
{
	memset(f, 0, 42 + plen);
	f[12] = 0x08;
	uint8_t *ip = f + 14;
	ip[0] = 0x45;
	ip[2] = (uint8_t)((20 + 8 + plen) >> 8);
	ip[3] = (uint8_t)(20 + 8 + plen);
	ip[8] = 64;
	ip[9] = 17;
	ip[12] = 198, ip[13] = 18, ip[14] = 0, ip[15] = 1;
	ip[16] = 198, ip[17] = 18, ip[18] = 0, ip[19] = 2;
	uint8_t *u = ip + 20;
	u[0] = (uint8_t)(sp >> 8), u[1] = (uint8_t)sp;
	u[2] = (uint8_t)(dp >> 8), u[3] = (uint8_t)dp;
	u[4] = (uint8_t)((8 + plen) >> 8), u[5] = (uint8_t)(8 + plen);
	memset(u + 8, v, plen);
	return 42 + plen;
}

static void test_frames(void)
{
	t_begin("flow features: frames' payloads reach the sets, per direction");
	struct tbl x;
	T_CHECK(tbl_init(&x, 1u << SECHO_FEAT_SET_PSTATS) == 0, "table");
	static const size_t lens[3] = {11, 222, 33};
	uint8_t buf[3][600];
	struct secho_flow_frame fr[3];
	for (unsigned i = 0; i < 3; i++) {
		/* the second packet is the answer (reverse direction) */
		size_t n = i == 1 ? udp_frame(buf[i], 53, 3333, lens[i], (uint8_t)i)
		                  : udp_frame(buf[i], 3333, 53, lens[i], (uint8_t)i);
		if (i == 1) { /* swap the addresses too */
			uint8_t t4[4];
			memcpy(t4, buf[i] + 26, 4);
			memcpy(buf[i] + 26, buf[i] + 30, 4);
			memcpy(buf[i] + 30, t4, 4);
		}
		memset(&fr[i], 0, sizeof(fr[i]));
		fr[i].data = buf[i];
		fr[i].wirelen = (uint32_t)n;
		fr[i].ts_ns = (1 + i) * S_NS;
		fr[i].reason = secho_dissect_snap(buf[i], n, n, &fr[i].d);
		T_CHECK(fr[i].reason == SECHO_DISSECT_OK, "frame %u dissected: %d", i,
		        fr[i].reason);
	}
	secho_flow_table_burst(&x.t, fr, 3);
	secho_flow_table_flush(&x.t);
	T_CHECK(x.out.n == 1, "%u records", x.out.n);
	T_CHECK(x.out.json_n > 0 && strstr(x.out.json, "\"ppi_pkt_lengths\":[11,222,33]") &&
	                strstr(x.out.json, "\"ppi_pkt_directions\":[1,-1,1]"),
	        "pstats: %s", x.out.json);
	free(x.mem);
	t_end();
}

/* A WireGuard message of type ty in frame f: sender and receiver indexes where the type has
 * them, padded to the type's length (data: 48 bytes); rev: the responder's direction. */
static size_t wg_frame(uint8_t *f, uint8_t ty, uint32_t sender, uint32_t receiver, bool rev)
{
	static const size_t lens[5] = {0, 148, 92, 64, 48};
	size_t n = rev ? udp_frame(f, 51820, 40000, lens[ty], 0)
	               : udp_frame(f, 40000, 51820, lens[ty], 0);
	uint8_t *w = f + 42;
	if (rev) {
		uint8_t t4[4];
		memcpy(t4, f + 26, 4);
		memcpy(f + 26, f + 30, 4);
		memcpy(f + 30, t4, 4);
	}
	w[0] = ty;
	uint32_t a = ty == 3 || ty == 4 ? receiver : sender, b = receiver;
	for (unsigned i = 0; i < 4; i++) {
		w[4 + i] = (uint8_t)(a >> (8 * i)); /* little-endian, as WireGuard */
		if (ty == 2)
			w[8 + i] = (uint8_t)(b >> (8 * i));
	}
	return n;
}

static void test_wg_sessions(void)
{
	t_begin("flow features: wg, a new record per WireGuard session (forced end, reinsert)");
	struct tbl x;
	T_CHECK(tbl_init(&x, 1u << SECHO_FEAT_SET_WG) == 0, "table");
	/* initiation A, response B->A, data to B, initiation A again (a retransmission: same
	 * session), initiation C (a new session), response D->C, data to D */
	static const struct {
		uint8_t ty;
		uint32_t s, r;
		bool rev;
	} m[7] = {{1, 0xa, 0, false}, {2, 0xb, 0xa, true}, {4, 0, 0xb, false}, {1, 0xa, 0, false},
	          {1, 0xc, 0, false}, {2, 0xd, 0xc, true}, {4, 0, 0xd, false}};
	uint8_t buf[7][256];
	struct secho_flow_frame fr[7];
	for (unsigned i = 0; i < 7; i++) {
		size_t n = wg_frame(buf[i], m[i].ty, m[i].s, m[i].r, m[i].rev);
		memset(&fr[i], 0, sizeof(fr[i]));
		fr[i].data = buf[i];
		fr[i].wirelen = (uint32_t)n;
		fr[i].ts_ns = (1 + i) * S_NS / 10;
		fr[i].reason = secho_dissect_snap(buf[i], n, n, &fr[i].d);
		T_CHECK(fr[i].reason == SECHO_DISSECT_OK, "frame %u dissected: %d", i,
		        fr[i].reason);
	}
	secho_flow_table_burst(&x.t, fr, 7);
	secho_flow_table_flush(&x.t);
	T_CHECK(x.out.n == 2, "%u records (two sessions)", x.out.n);
	T_CHECK(x.out.reasons[0] == SECHO_FLOW_END_FORCED && x.out.packets[0] == 4,
	        "the first session's record: reason %u, %llu packets", x.out.reasons[0],
	        (unsigned long long)x.out.packets[0]);
	T_CHECK(strstr(x.out.jsons[0], "\"wg_src_peer\":10,") &&
	                strstr(x.out.jsons[0], "\"wg_dst_peer\":11"),
	        "first: %s", x.out.jsons[0]);
	T_CHECK(x.out.reasons[1] == SECHO_FLOW_END_FORCED && x.out.packets[1] == 3,
	        "the second session's record starts with its initiation: reason %u, %llu packets",
	        x.out.reasons[1], (unsigned long long)x.out.packets[1]);
	T_CHECK(strstr(x.out.jsons[1], "\"wg_conf_level\":100") &&
	                strstr(x.out.jsons[1], "\"wg_src_peer\":12,") &&
	                strstr(x.out.jsons[1], "\"wg_dst_peer\":13"),
	        "second: %s", x.out.jsons[1]);
	free(x.mem);
	/* without the wg set, the same frames are one record */
	T_CHECK(tbl_init(&x, 1u << SECHO_FEAT_SET_PSTATS) == 0, "table");
	secho_flow_table_burst(&x.t, fr, 7);
	secho_flow_table_flush(&x.t);
	T_CHECK(x.out.n == 1 && x.out.packets[0] == 7, "without wg: %u record(s)", x.out.n);
	free(x.mem);
	t_end();
}

/* An Ethernet + IPv4 + TCP frame (no options) with flags, seq and plen bytes of payload. */
static size_t tcp_frame(uint8_t *f, uint16_t sp, uint16_t dp, uint8_t flags, uint32_t seq,
                        const uint8_t *payload, size_t plen)
{
	memset(f, 0, 54 + plen);
	f[12] = 0x08;
	uint8_t *ip = f + 14;
	ip[0] = 0x45;
	ip[2] = (uint8_t)((20 + 20 + plen) >> 8);
	ip[3] = (uint8_t)(20 + 20 + plen);
	ip[8] = 64;
	ip[9] = 6;
	ip[12] = 198, ip[13] = 18, ip[14] = 0, ip[15] = 1;
	ip[16] = 198, ip[17] = 18, ip[18] = 0, ip[19] = 2;
	uint8_t *t = ip + 20;
	t[0] = (uint8_t)(sp >> 8), t[1] = (uint8_t)sp;
	t[2] = (uint8_t)(dp >> 8), t[3] = (uint8_t)dp;
	for (unsigned i = 0; i < 4; i++)
		t[4 + i] = (uint8_t)(seq >> (24 - 8 * i));
	t[12] = 5 << 4;
	t[13] = flags;
	t[14] = 0xff;
	if (plen)
		memcpy(t + 20, payload, plen);
	return 54 + plen;
}

/* One frame of n bytes in buf through the table (a burst of one). */
static void feed1(struct tbl *x, const uint8_t *buf, size_t n, uint64_t ts)
{
	struct secho_flow_frame fr;
	memset(&fr, 0, sizeof(fr));
	fr.data = buf;
	fr.wirelen = (uint32_t)n;
	fr.ts_ns = ts;
	fr.reason = secho_dissect_snap(buf, n, n, &fr.d);
	T_CHECK(fr.reason == SECHO_DISSECT_OK, "frame dissected: %d", fr.reason);
	secho_flow_table_burst(&x->t, &fr, 1);
}

#define SB(s) (1u << SECHO_FEAT_SET_##s)

static void test_live(void)
{
	t_begin("flow features: the sets a flow makes live (dns: port 53 only; tls, http: TCP; "
	        "quic, wg: UDP; statistics: every flow), each at its first packet that counts; "
	        "a large set's state lent, given back when it found nothing or the record left");
	/* a DNS query, ID 0x1234, for a.example, type A */
	static const uint8_t q[] = {0x12, 0x34, 0x01, 0x00, 0,   1,   0,   0,   0, 0, 0, 0, 1, 'a',
	                            7,    'e',  'x',  'a',  'm', 'p', 'l', 'e', 0, 0, 1, 0, 1};
	static const struct {
		uint16_t sp, dp;
		bool dns;
	} c[3] = {{40000, 5000, false}, {40000, 53, true}, {53, 40000, true}};
	uint8_t buf[256];
	for (unsigned i = 0; i < 3; i++) {
		struct tbl x;
		T_CHECK(tbl_init(&x, SECHO_FEAT_ALL) == 0, "table");
		size_t n = udp_frame(buf, c[i].sp, c[i].dp, sizeof(q), 0);
		memcpy(buf + 42, q, sizeof(q));
		feed1(&x, buf, n, S_NS);
		/* quic took the datagram, found it was not QUIC and is done: its state went
		 * back at once, and the set is out of the record */
		const struct secho_feat_pool *pq = &x.t.feat_pools.p[SECHO_FEAT_SET_QUIC];
		const struct secho_feat_pool *pd = &x.t.feat_pools.p[SECHO_FEAT_SET_DNS];
		T_CHECK(pq->used == 1 && pq->lent == 0 && pq->free == 1 &&
		                pd->lent == (c[i].dns ? 1u : 0u),
		        "UDP %u -> %u: quic lent %u (used %u), dns lent %u", c[i].sp, c[i].dp,
		        pq->lent, pq->used, pd->lent);
		secho_flow_table_flush(&x.t);
		T_CHECK(pd->lent == 0 && pd->used == (c[i].dns ? 1u : 0u),
		        "UDP %u -> %u: after the record, dns lent %u", c[i].sp, c[i].dp, pd->lent);
		uint32_t want =
		        SB(WG) | SB(PSTATS) | SB(PHISTS) | SB(BSTATS) | (c[i].dns ? SB(DNS) : 0);
		T_CHECK(x.out.n == 1 && x.out.live == want, "UDP %u -> %u: live %#x, want %#x",
		        c[i].sp, c[i].dp, x.out.live, want);
		bool id = strstr(x.out.json, "\"dns_id\":4660") != NULL;
		bool any = strstr(x.out.json, "dns_") != NULL;
		T_CHECK(id == c[i].dns && any == c[i].dns, "UDP %u -> %u: dns members %s: %s",
		        c[i].sp, c[i].dp, c[i].dns ? "expected" : "unexpected", x.out.json);
		free(x.mem);
	}

	/* TCP to port 80: the SYN decides tls (its sequence number counts), quic, wg and dns
	 * (no); http and the statistics sets wait for the first payload */
	struct tbl x;
	T_CHECK(tbl_init(&x, SECHO_FEAT_ALL) == 0, "table");
	static const uint8_t get[] = "GET / HTTP/1.1\r\nHost: h.example\r\n\r\n";
	size_t n = tcp_frame(buf, 40000, 80, 0x02, 1000, NULL, 0);
	feed1(&x, buf, n, S_NS);
	T_CHECK(x0(&x)->feat_live == SB(TLS) &&
	                x0(&x)->feat_decided == (SB(TLS) | SB(QUIC) | SB(DNS) | SB(WG)),
	        "after the SYN: live %#x, decided %#x", x0(&x)->feat_live, x0(&x)->feat_decided);
	n = tcp_frame(buf, 40000, 80, 0x10, 1001, NULL, 0);
	feed1(&x, buf, n, 2 * S_NS);
	T_CHECK(x0(&x)->feat_live == SB(TLS), "after an empty ACK: live %#x", x0(&x)->feat_live);
	n = tcp_frame(buf, 40000, 80, 0x18, 1001, get, sizeof(get) - 1);
	feed1(&x, buf, n, 3 * S_NS);
	uint32_t want = SB(TLS) | SB(HTTP) | SB(PSTATS) | SB(PHISTS) | SB(BSTATS);
	T_CHECK(x0(&x)->feat_live == want && x0(&x)->feat_decided == SECHO_FEAT_ALL,
	        "after the request: live %#x, decided %#x", x0(&x)->feat_live,
	        x0(&x)->feat_decided);
	const struct secho_feat_pools *ps = &x.t.feat_pools;
	T_CHECK(ps->p[SECHO_FEAT_SET_TLS].lent == 1 && ps->p[SECHO_FEAT_SET_HTTP].lent == 1 &&
	                ps->p[SECHO_FEAT_SET_QUIC].used == 0 && ps->p[SECHO_FEAT_SET_DNS].used == 0,
	        "states lent: tls %u, http %u", ps->p[SECHO_FEAT_SET_TLS].lent,
	        ps->p[SECHO_FEAT_SET_HTTP].lent);
	/* the record's handles name them */
	const uint8_t *area = area0(&x);
	uint32_t ht, hh;
	memcpy(&ht, area + x.t.feat.soff[SECHO_FEAT_SET_TLS], 4);
	memcpy(&hh, area + x.t.feat.soff[SECHO_FEAT_SET_HTTP], 4);
	T_CHECK(ht == 1 && hh == 1, "handles tls %u, http %u", ht, hh);
	secho_flow_table_flush(&x.t);
	T_CHECK(x.out.sec[SECHO_FEAT_SET_HTTP] == ps->p[SECHO_FEAT_SET_HTTP].base &&
	                x.out.sec[SECHO_FEAT_SET_TLS] == ps->p[SECHO_FEAT_SET_TLS].base,
	        "the record's tls and http states are the pools' first");
	memcpy(&ht, area + x.t.feat.soff[SECHO_FEAT_SET_TLS], 4);
	memcpy(&hh, area + x.t.feat.soff[SECHO_FEAT_SET_HTTP], 4);
	T_CHECK(ps->p[SECHO_FEAT_SET_TLS].lent == 0 && ps->p[SECHO_FEAT_SET_HTTP].lent == 0 &&
	                ps->p[SECHO_FEAT_SET_TLS].free == 1 && ht == 0 && hh == 0,
	        "after the record: given back (lent %u, %u; handles %u, %u)",
	        ps->p[SECHO_FEAT_SET_TLS].lent, ps->p[SECHO_FEAT_SET_HTTP].lent, ht, hh);
	T_CHECK(strstr(x.out.json, "\"http_host\":\"h.example\"") && !strstr(x.out.json, "dns_") &&
	                strstr(x.out.json, "\"ppi_pkt_lengths\":[35]"),
	        "TCP 80: %s", x.out.json);
	free(x.mem);
	t_end();
}

/* A done HTTP state (request and response heads read) moves to the done pool, which keeps
 * it without the parser's line buffers, and the record exports the same fields. */
static void test_http_done(void)
{
	t_begin("flow features: a done HTTP state moves to the done pool without its line "
	        "buffers, and its record exports the same fields");
	static const uint8_t req[] = "GET /a HTTP/1.1\r\nHost: h.example\r\n\r\n";
	static const uint8_t resp[] = "HTTP/1.1 404 Not Found\r\nServer: s.example\r\n\r\n";
	uint8_t buf[256];
	struct tbl x;
	if (tbl_init(&x, SB(HTTP)) != 0) {
		t_unavailable("table init");
		return;
	}
	const struct secho_feat_pool *p = &x.t.feat_pools.p[SECHO_FEAT_SET_HTTP];
	const struct secho_feat_pool *d = &x.t.feat_pools.d[SECHO_FEAT_SET_HTTP];
	size_t n = tcp_frame(buf, 40000, 80, 0x18, 1000, req, sizeof(req) - 1);
	feed1(&x, buf, n, S_NS);
	T_CHECK(p->lent == 1 && d->base && d->lent == 0, "the request: lent %u, done %u", p->lent,
	        d->lent);
	n = tcp_frame(buf, 80, 40000, 0x18, 5000, resp, sizeof(resp) - 1);
	uint8_t a[4];
	memcpy(a, buf + 14 + 12, 4); /* the reverse direction: addresses swapped */
	memcpy(buf + 14 + 12, buf + 14 + 16, 4);
	memcpy(buf + 14 + 16, a, 4);
	feed1(&x, buf, n, 2 * S_NS);
	T_CHECK(p->lent == 0 && d->lent == 1 &&
	                d->stride == ((offsetof(struct secho_feat_http, d) + 63) & ~(size_t)63) &&
	                d->stride < p->stride,
	        "the response: done, moved (lent %u, done %u; %u of %u bytes)", p->lent, d->lent,
	        d->stride, p->stride);
	secho_flow_table_flush(&x.t);
	T_CHECK(x.out.n == 1 && strstr(x.out.json, "\"http_host\":\"h.example\"") &&
	                strstr(x.out.json, "\"http_url\":\"/a\"") &&
	                strstr(x.out.json, "\"http_status_code\":404") &&
	                strstr(x.out.json, "\"http_server\":\"s.example\""),
	        "the record: %s", x.out.json);
	T_CHECK(d->lent == 0, "given back after the record: %u", d->lent);
	free(x.mem);
	t_end();
}

/* ---- reused slots: an earlier record's bytes never reach a record ---- */

/* How a reuse table's feature areas are left when a record leaves (and at the start). */
enum reuse_mode {
	REUSE_ZERO,   /* zeroed: every record starts from all zero, as before live sets */
	REUSE_POISON, /* 0xa5 everywhere */
	REUSE_UNDEF,  /* undefined to valgrind's memcheck (zero otherwise) */
};

#define REUSE_MAX_RECS 32768

struct reuse {
	struct secho_flow_table t;
	void *mem;
	enum reuse_mode mode;
	unsigned n;
	uint64_t h[REUSE_MAX_RECS]; /* each record's digest: key, counters, JSON, IPFIX */
	unsigned with[5];           /* records with tls_sni, quic_sni, dns_id, http_host, pstats */
	unsigned done_states;       /* states records carried from a done pool */
};

static void undefine(void *p, size_t n)
{
#if SECHO_TEST_MEMCHECK
	VALGRIND_MAKE_MEM_UNDEFINED(p, n);
#else
	(void)p;
	(void)n;
#endif
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

static void leave(struct reuse *u, uint8_t *area, size_t n)
{
	if (u->mode == REUSE_POISON)
		memset(area, 0xa5, n);
	else
		memset(area, 0, n);
	if (u->mode == REUSE_UNDEF)
		undefine(area, n);
}

static void on_reuse_rec(void *ctx, const struct secho_flow_rec *r)
{
	static char js[SECHO_FLOW_JSON_FEAT_MAX];
	static uint8_t ipfix[SECHO_IPFIX_FEAT_REC_MAX];
	static const char *const names[5] = {"\"tls_sni\"", "\"quic_sni\"", "\"dns_id\"",
	                                     "\"http_host\"", "\"ppi_pkt_lengths\""};
	struct reuse *u = ctx;
	uint64_t packets = r->fwd.packets + r->rev.packets;
	int jn = secho_feat_sets_json(r->feat_layout, r->feat_sec, r->feat_live, packets,
	                              (uint8_t)(r->fwd.tcp_flags | r->rev.tcp_flags), js,
	                              sizeof(js));
	uint32_t carried = secho_ipfix_feat_carried(r);
	size_t in = secho_ipfix_feat_encode(r, carried, ipfix);
	uint64_t h = 1469598103934665603ull;
	h = fnv(h, &r->key, sizeof(r->key));
	h = fnv(h, &packets, sizeof(packets));
	h = fnv(h, &jn, sizeof(jn));
	if (jn > 0)
		h = fnv(h, js, (size_t)jn);
	h = fnv(h, &carried, sizeof(carried));
	h = fnv(h, ipfix, in);
	if (u->n < REUSE_MAX_RECS)
		u->h[u->n] = h;
	u->n++;
	for (unsigned i = 0; i < 5; i++)
		if (jn > 0 && strstr(js, names[i]))
			u->with[i]++;
	/* the test's hook: what the next record to hold these states finds (in the slot, or
	 * lent again from a pool) */
	for (unsigned i = 0; i < SECHO_FEAT_NSETS; i++) {
		if (!(r->feat_live & (1u << i)) || !r->feat_sec[i])
			continue;
		/* a done state (sets.h, "Done states") is only its first part */
		const struct secho_feat_pool *d = &u->t.feat_pools.d[i];
		bool done = d->base && r->feat_sec[i] >= d->base &&
		            r->feat_sec[i] < d->base + (size_t)d->stride * d->cap;
		u->done_states += done;
		leave(u, (uint8_t *)(uintptr_t)r->feat_sec[i],
		      done ? secho_feat_set_export_size(i) : secho_feat_set_size(i));
	}
}

static int reuse_init(struct reuse *u, enum reuse_mode mode)
{
	struct secho_flow_table_cfg cfg = {
	        .flows = 64, /* few entries: the slots are reused again and again */
	        .active_ns = 10 * S_NS,
	        .inactive_ns = 2 * S_NS,
	        .hash = SECHO_FLOW_HASH_DEFAULT,
	        .seed = 777,
	        .emit = on_reuse_rec,
	        .ctx = u,
	        .features = SECHO_FEAT_ALL,
	};
	memset(u, 0, sizeof(*u));
	u->mode = mode;
	size_t len = secho_flow_table_mem_size(&cfg);
	if (!len || posix_memalign(&u->mem, 64, len))
		return -1;
	memset(u->mem, 0, len);
	int rc = secho_flow_table_init(&u->t, &cfg, u->mem, len);
	if (rc)
		return rc;
	/* every state's bytes before first use: the small sets' sections in the slots (not
	 * the large sets' handles), and the whole of every pool */
	const struct secho_feat_layout *l = &u->t.feat;
	for (uint32_t i = 0; i < secho_flow_table_capacity(&u->t); i++)
		for (unsigned k = 0; k < SECHO_FEAT_NSETS; k++)
			if ((l->sets & ~l->pooled) & (1u << k))
				leave(u, secho_flow_table_area(&u->t, i) + l->soff[k],
				      secho_feat_set_size(k));
	for (unsigned k = 0; k < SECHO_FEAT_NSETS; k++) {
		if (!(l->pooled & (1u << k)))
			continue;
		const struct secho_feat_pool *p = &u->t.feat_pools.p[k], *d = &u->t.feat_pools.d[k];
		leave(u, p->base, (size_t)p->stride * p->cap);
		if (d->base)
			leave(u, d->base, (size_t)d->stride * d->cap);
	}
	return 0;
}

static void test_reuse(void)
{
	t_begin("flow features: records from slots holding an earlier record's bytes (0xa5, "
	        "undefined) equal records from zeroed slots (light, every application)");
	static struct reuse u[3];
	unsigned apps = 0;
	char err[256];
	T_CHECK(secho_gen_app_parse("all", &apps, err, sizeof(err)) == 0, "apps: %s", err);
	struct secho_gen_cfg gc = {.profile = "light", .packets = 20000, .seed = 21, .apps = apps};
	struct secho_gen *g = NULL;
	int rc = secho_gen_new(&g, &gc, err, sizeof(err));
	T_CHECK(rc == 0, "generator: %s", err);
	for (unsigned m = 0; m < 3; m++)
		T_CHECK(reuse_init(&u[m], (enum reuse_mode)m) == 0, "table %u", m);
	struct secho_gen_frame f;
	unsigned frames = 0;
	while (rc == 0 && secho_gen_next(g, &f) == 1) {
		struct secho_flow_frame fr;
		memset(&fr, 0, sizeof(fr));
		fr.data = f.data;
		fr.wirelen = f.len;
		fr.ts_ns = f.ts_ns;
		fr.reason = secho_dissect_snap(f.data, f.caplen, f.len, &fr.d);
		for (unsigned m = 0; m < 3; m++)
			secho_flow_table_burst(&u[m].t, &fr, 1);
		frames++;
	}
	for (unsigned m = 0; m < 3; m++)
		secho_flow_table_flush(&u[m].t);
	if (g)
		secho_gen_free(g);
	T_CHECK(frames == 20000 && u[0].n > 500 && u[0].n <= REUSE_MAX_RECS,
	        "%u frames, %u records", frames, u[0].n);
	for (unsigned i = 0; i < 5; i++)
		T_CHECK(u[0].with[i] > 10, "records with member %u: %u", i, u[0].with[i]);
	T_CHECK(u[0].done_states > 10, "states carried from a done pool: %u", u[0].done_states);
	for (unsigned m = 1; m < 3; m++) {
		T_CHECK(u[m].n == u[0].n, "table %u: %u records, want %u", m, u[m].n, u[0].n);
		unsigned diff = 0, first = 0;
		for (unsigned i = 0; i < u[0].n && i < u[m].n && i < REUSE_MAX_RECS; i++)
			if (u[m].h[i] != u[0].h[i] && !diff++)
				first = i;
		T_CHECK(diff == 0,
		        "table %u: %u records differ from the zeroed table's (first: %u)", m, diff,
		        first);
	}
	for (unsigned m = 0; m < 3; m++)
		free(u[m].mem);
	t_end();
}

static void test_parse(void)
{
	t_begin("flow features: the list parser");
	uint32_t s = 0;
	const char *bad = NULL;
	size_t bl = 0;
	T_CHECK(secho_feat_parse("all", &s, &bad, &bl) == 0 && s == SECHO_FEAT_ALL, "all");
	T_CHECK(secho_feat_parse("dns,http,tls,pstats", &s, &bad, &bl) == 0 &&
	                s == (1u << SECHO_FEAT_SET_DNS | 1u << SECHO_FEAT_SET_HTTP |
	                      1u << SECHO_FEAT_SET_TLS | 1u << SECHO_FEAT_SET_PSTATS),
	        "a list: %#x", s);
	T_CHECK(secho_feat_parse("wg", &s, &bad, &bl) == 0 && s == 1u << SECHO_FEAT_SET_WG, "one");
	T_CHECK(secho_feat_parse("dns,nope", &s, &bad, &bl) == -EINVAL && bl == 4 &&
	                !strncmp(bad, "nope", 4),
	        "unknown name");
	T_CHECK(secho_feat_parse("", &s, &bad, &bl) == -EINVAL, "empty");
	T_CHECK(secho_feat_parse("tls,", &s, &bad, &bl) == -EINVAL, "trailing comma");
	T_CHECK(secho_feat_parse("TLS", &s, &bad, &bl) == -EINVAL, "case matters");
	T_CHECK(secho_feat_parse("tls,pstats:zeroes", &s, &bad, &bl) == 0 &&
	                s == (1u << SECHO_FEAT_SET_TLS | 1u << SECHO_FEAT_SET_PSTATS |
	                      SECHO_FEAT_OPT_PSTATS_ZEROES),
	        "pstats:zeroes: %#x", s);
	T_CHECK(secho_feat_parse("pstats:zero", &s, &bad, &bl) == -EINVAL && bl == 11 &&
	                secho_feat_parse("tls:zeroes", &s, &bad, &bl) == -EINVAL && bl == 10 &&
	                secho_feat_parse("pstats:", &s, &bad, &bl) == -EINVAL,
	        "options: pstats:zeroes only");
	struct secho_feat_layout l;
	secho_feat_layout_make(1u << SECHO_FEAT_SET_PSTATS | SECHO_FEAT_OPT_PSTATS_ZEROES, &l);
	T_CHECK(l.opts == SECHO_FEAT_OPT_PSTATS_ZEROES && l.sets == 1u << SECHO_FEAT_SET_PSTATS,
	        "the layout keeps the option: %#x", l.opts);
	secho_feat_layout_make(1u << SECHO_FEAT_SET_TLS | SECHO_FEAT_OPT_PSTATS_ZEROES, &l);
	T_CHECK(l.opts == 0, "no option without its set: %#x", l.opts);
	for (unsigned i = 0; i < SECHO_FEAT_NSETS; i++)
		T_CHECK(secho_feat_set_name(i) && secho_feat_set_text(i) && secho_feat_set_size(i),
		        "set %u named", i);
	T_CHECK(!secho_feat_set_name(SECHO_FEAT_NSETS), "out of range");
	t_end();
}

/* The forward direction's packets counted in phists' size histogram. */
static uint32_t phists_sizes(const struct secho_feat_phists *ph)
{
	uint32_t n = 0;
	for (unsigned b = 0; b < SECHO_PHISTS_BINS; b++)
		n += ph->d[0].size[b];
	return n;
}

/* A set found done goes into the record's done set, and the dispatcher does not read its
 * state again: pstats after its SECHO_PSTATS_MAX packets, its state then made to look as
 * if it took more; the next packet must leave it as it is (before the done set, the state's
 * own flag was read for every packet). */
static void test_done_not_read(void)
{
	t_begin("flow features: a set that is done is in the done set and its state is not "
	        "read again");
	static const uint8_t data[10];
	struct secho_feat_layout l;
	struct secho_feat_pools ps;
	secho_feat_layout_make(1u << SECHO_FEAT_SET_PSTATS | 1u << SECHO_FEAT_SET_PHISTS, &l);
	secho_feat_pools_init(&ps, &l, NULL, 0);
	static uint64_t a[128];
	memset(a, 0, sizeof(a));
	uint32_t live = 0, decided = 0, done = 0;
	struct secho_feat_pkt p = {.ts_ns = S_NS,
	                           .ip_len = 50,
	                           .sport = 40000,
	                           .dport = 80,
	                           .proto = 6,
	                           .tcp_flags = 0x18,
	                           .payload = data,
	                           .len = sizeof(data),
	                           .wire_len = sizeof(data)};
	unsigned before_done = 0;
	for (unsigned i = 0; i < SECHO_PSTATS_MAX; i++) {
		before_done += (done & (1u << SECHO_FEAT_SET_PSTATS)) == 0;
		secho_feat_sets_packet(&l, &ps, (uint8_t *)a, &live, &decided, &done, &p);
		p.ts_ns += S_NS / 1000;
	}
	T_CHECK(before_done == SECHO_PSTATS_MAX && done == 1u << SECHO_FEAT_SET_PSTATS &&
	                live == (1u << SECHO_FEAT_SET_PSTATS | 1u << SECHO_FEAT_SET_PHISTS),
	        "done %#x after %u packets (not before: %u), live %#x", done, SECHO_PSTATS_MAX,
	        before_done, live);
	const uint8_t *sec[SECHO_FEAT_NSETS];
	secho_feat_sets_sections(&l, &ps, (uint8_t *)a, live, sec);
	struct secho_feat_pstats *st =
	        (struct secho_feat_pstats *)(uintptr_t)sec[SECHO_FEAT_SET_PSTATS];
	const struct secho_feat_phists *ph =
	        (const struct secho_feat_phists *)sec[SECHO_FEAT_SET_PHISTS];
	if (!st || !ph) {
		T_CHECK(0, "no pstats or phists section");
		t_end();
		return;
	}
	T_CHECK(st->count == SECHO_PSTATS_MAX && st->done, "pstats full: %u", st->count);
	st->count = 3; /* a state that would take the next packet, were it read */
	st->done = 0;
	uint32_t sizes = phists_sizes(ph);
	secho_feat_sets_packet(&l, &ps, (uint8_t *)a, &live, &decided, &done, &p);
	uint32_t sizes2 = phists_sizes(ph);
	T_CHECK(st->count == 3 && !st->done, "pstats not read after done: count %u, done %u",
	        st->count, st->done);
	T_CHECK(sizes2 == sizes + 1, "phists (never done) still counts: %u then %u", sizes, sizes2);
	t_end();
}

/* pstats:zeroes through the sets' calls: a SYN makes pstats live at once and is recorded;
 * without the option it waits for the first payload. */
static void test_pstats_zeroes(void)
{
	t_begin("flow features: pstats:zeroes records packets without payload, and decides at "
	        "the first packet");
	static const uint8_t data[10];
	for (unsigned z = 0; z < 2; z++) {
		struct secho_feat_layout l;
		struct secho_feat_pools ps;
		secho_feat_layout_make(
		        1u << SECHO_FEAT_SET_PSTATS | (z ? SECHO_FEAT_OPT_PSTATS_ZEROES : 0), &l);
		secho_feat_pools_init(&ps, &l, NULL, 0);
		static uint64_t a[64];
		memset(a, 0, sizeof(a));
		uint32_t live = 0, decided = 0, done = 0;
		struct secho_feat_pkt p = {.ts_ns = S_NS,
		                           .ip_len = 40,
		                           .sport = 40000,
		                           .dport = 80,
		                           .proto = 6,
		                           .tcp_flags = 0x02};
		secho_feat_sets_packet(&l, &ps, (uint8_t *)a, &live, &decided, &done, &p);
		T_CHECK(live == (z ? 1u << SECHO_FEAT_SET_PSTATS : 0u),
		        "%s: after the SYN live %#x", z ? "zeroes" : "default", live);
		p.tcp_flags = 0x18;
		p.payload = data;
		p.len = p.wire_len = sizeof(data);
		p.ts_ns += S_NS;
		secho_feat_sets_packet(&l, &ps, (uint8_t *)a, &live, &decided, &done, &p);
		const uint8_t *sec[SECHO_FEAT_NSETS];
		secho_feat_sets_sections(&l, &ps, (uint8_t *)a, live, sec);
		const struct secho_feat_pstats *st =
		        secho_feat_sets_state(&l, sec, live, SECHO_FEAT_SET_PSTATS);
		if (z)
			T_CHECK(st->count == 2 && st->pkt[0].size == 0 &&
			                st->pkt[0].flags == 0x02 && st->pkt[1].size == 10,
			        "zeroes: %u packets recorded", st->count);
		else
			T_CHECK(st->count == 1 && st->pkt[0].size == 10 && st->pkt[0].flags == 0x18,
			        "default: %u packets recorded", st->count);
	}
	t_end();
}

/* The sets' calls without a table: pools of one state each, two flows' slot areas. */
static void test_pool_empty(void)
{
	t_begin("flow features: a pool without a state left: the set stays out of the record "
	        "(counted), the next record gets the state given back");
	struct secho_feat_layout l;
	struct secho_feat_pools ps;
	uint32_t sets = 1u << SECHO_FEAT_SET_DNS | 1u << SECHO_FEAT_SET_PSTATS;
	secho_feat_layout_make(sets, &l);
	size_t n = secho_feat_pools_size(&l, 1);
	void *mem = NULL;
	T_CHECK(posix_memalign(&mem, 64, n) == 0, "pool memory");
	memset(mem, 0xa5, n); /* need not be zeroed */
	secho_feat_pools_init(&ps, &l, mem, 1);
	static uint64_t a0[64], a1[64];
	uint8_t *area[2] = {(uint8_t *)a0, (uint8_t *)a1};
	uint32_t live[2] = {0, 0}, decided[2] = {0, 0}, done[2] = {0, 0};
	/* a DNS query, ID 0x1234, for a.example, type A */
	static const uint8_t q[] = {0x12, 0x34, 0x01, 0x00, 0,   1,   0,   0,   0, 0, 0, 0, 1, 'a',
	                            7,    'e',  'x',  'a',  'm', 'p', 'l', 'e', 0, 0, 1, 0, 1};
	struct secho_feat_pkt p = {.payload = q,
	                           .len = sizeof(q),
	                           .wire_len = sizeof(q),
	                           .ts_ns = S_NS,
	                           .ip_len = 28 + sizeof(q),
	                           .sport = 40000,
	                           .dport = 53,
	                           .proto = 17};
	for (unsigned f = 0; f < 2; f++)
		secho_feat_sets_packet(&l, &ps, area[f], &live[f], &decided[f], &done[f], &p);
	const struct secho_feat_pool *pd = &ps.p[SECHO_FEAT_SET_DNS];
	T_CHECK(live[0] == sets && decided[0] == sets, "first flow: live %#x", live[0]);
	T_CHECK(live[1] == (1u << SECHO_FEAT_SET_PSTATS) && decided[1] == sets && pd->empty == 1 &&
	                pd->lent == 1,
	        "second flow: live %#x, decided %#x, empty %" PRIu64 ", lent %u", live[1],
	        decided[1], pd->empty, pd->lent);
	const uint8_t *sec[SECHO_FEAT_NSETS];
	secho_feat_sets_sections(&l, &ps, area[1], live[1], sec);
	char js[2048];
	int jn = secho_feat_sets_json(&l, sec, live[1], 1, 0, js, sizeof(js));
	T_CHECK(jn > 0 && !strstr(js, "dns_") && strstr(js, "ppi_pkt_lengths"),
	        "second flow exports dns as a set that found nothing: %s", js);
	secho_feat_sets_sections(&l, &ps, area[0], live[0], sec);
	jn = secho_feat_sets_json(&l, sec, live[0], 1, 0, js, sizeof(js));
	T_CHECK(jn > 0 && strstr(js, "\"dns_id\":4660"), "first flow: %s", js);
	/* the first record leaves: its state goes back, a third flow gets it */
	secho_feat_sets_release(&l, &ps, area[0], live[0]);
	T_CHECK(pd->lent == 0 && pd->free == 1, "given back: lent %u", pd->lent);
	live[0] = decided[0] = done[0] = 0;
	secho_feat_sets_packet(&l, &ps, area[0], &live[0], &decided[0], &done[0], &p);
	T_CHECK(live[0] == sets && pd->lent == 1 && pd->empty == 1 && pd->used == 1,
	        "third flow: live %#x, the same state", live[0]);
	free(mem);
	t_end();
}

int main(void)
{
	test_layout();
	test_pool_empty();
	test_pstats_zeroes();
	test_done_not_read();
	test_start();
	test_live();
	test_http_done();
	test_reuse();
	test_frames();
	test_wg_sessions();
	test_parse();
	return t_exit();
}
