/*
 * tests/fuzz/fuzz_flow.c - libFuzzer target over the flow update: a stream of frames, cut
 * from the input, goes through a tiny flow table (one or four buckets, short timeouts,
 * a four-way fragment table) one at a time and, in a second table, in bursts; with sweeps
 * between. Whatever the frames, the tables must not crash or read out of bounds, must
 * agree with each other record for record, and must account for every frame: frames =
 * packets + ignored, records started = records ended + records in the table, and the
 * records hold every packet and octet counted.
 *
 * Input: repeated [len (1 byte)] [time step (1 byte, in 100 ms units)] [len bytes of frame].
 *
 *   make fuzz && build/fuzz/fuzz_flow -max_total_time=10 CORPUS_DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow/core/table.h"

#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "invariant failed: %s (%s:%d)\n", #c, __FILE__, __LINE__); \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct sum {
	uint64_t records, packets, octets;
	uint64_t fold; /* order-independent digest of the records */
};

/* One frame at a time: a burst of one (src/flow/core/table.h). */
static void table_frame(struct secho_flow_table *t, const uint8_t *f, size_t len, uint64_t ts)
{
	struct secho_flow_frame x = {.data = f, .wirelen = (uint32_t)len, .ts_ns = ts};

	x.reason = secho_dissect(f, len, &x.d);
	secho_flow_table_burst(t, &x, 1);
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

static void on_rec(void *ctx, const struct secho_flow_rec *r)
{
	struct sum *s = ctx;
	CHECK(r->end_reason >= SECHO_FLOW_END_IDLE && r->end_reason <= SECHO_FLOW_END_RESOURCE);
	CHECK(r->fwd.packets > 0); /* a record starts with its forward packet */
	CHECK(r->fwd.first_ns <= r->fwd.last_ns);
	CHECK(!r->rev.packets || r->rev.first_ns <= r->rev.last_ns);
	CHECK(r->key.ip_version == 4 || r->key.ip_version == 6);
	if (r->key.proto != 6 && r->key.proto != 17)
		CHECK(r->key.sport == 0 && r->key.dport == 0);
	if (r->key.proto != 6)
		CHECK(r->fwd.tcp_flags == 0 && r->rev.tcp_flags == 0);
	s->records++;
	s->packets += r->fwd.packets + r->rev.packets;
	s->octets += r->fwd.octets + r->rev.octets;
	uint64_t h = 0;
	const uint8_t *p = (const uint8_t *)&r->key;
	for (size_t i = 0; i < sizeof(r->key); i++)
		h = h * 131 + p[i];
	h = mix(h ^ r->fwd.packets ^ r->rev.packets << 20 ^ r->fwd.octets << 7 ^ r->end_reason);
	s->fold += h;
}

static void check_counts(const struct secho_flow_table *t, const struct sum *s)
{
	const uint64_t *c = t->cnt.c;
	uint64_t ended = c[SECHO_FLOW_CNT_END_IDLE] + c[SECHO_FLOW_CNT_END_ACTIVE] +
	                 c[SECHO_FLOW_CNT_END_EOF] + c[SECHO_FLOW_CNT_END_FORCED] +
	                 c[SECHO_FLOW_CNT_END_RESOURCE];
	CHECK(c[SECHO_FLOW_CNT_FRAMES] == c[SECHO_FLOW_CNT_PACKETS] + c[SECHO_FLOW_CNT_IGNORED]);
	CHECK(c[SECHO_FLOW_CNT_FLOWS] == ended + t->cnt.active);
	CHECK(ended == s->records);
	CHECK(t->cnt.active <= secho_flow_table_capacity(t));
	uint64_t ign = 0;
	for (unsigned i = 1; i < SECHO_FLOW_IGN_COUNT; i++)
		ign += t->cnt.ignored[i];
	CHECK(ign == c[SECHO_FLOW_CNT_IGNORED]);
}

static void *table(struct secho_flow_table *t, uint32_t flows, bool uni, struct sum *s)
{
	struct secho_flow_table_cfg cfg = {
	        .flows = flows,
	        .uniflow = uni,
	        .active_ns = 3000000000ull,
	        .inactive_ns = 1000000000ull,
	        .frag_slots = 4,
	        .frag_timeout_ns = 2000000000ull,
	        .cache_slots = 4,
	        .hash = SECHO_FLOW_HASH_DEFAULT,
	        .seed = 7,
	        .emit = on_rec,
	        .ctx = s,
	};
	size_t len = secho_flow_table_mem_size(&cfg);
	void *mem = NULL;
	CHECK(len && !posix_memalign(&mem, 64, len));
	memset(mem, 0, len);
	CHECK(secho_flow_table_init(t, &cfg, mem, len) == 0);
	return mem;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct secho_flow_table a, b;
	struct sum sa = {0}, sb = {0};
	bool uni = size && (data[0] & 1);
	uint32_t flows = size && (data[0] & 2) ? 32 : 8;
	void *ma = table(&a, flows, uni, &sa), *mb = table(&b, flows, uni, &sb);
	struct secho_flow_frame burst[SECHO_FLOW_TABLE_BURST];
	uint8_t *bufs[SECHO_FLOW_TABLE_BURST];
	unsigned nb = 0;
	uint64_t ts = 1767225600000000000ull;
	size_t i = size ? 1 : 0;

	while (i + 2 <= size) {
		size_t len = data[i];
		ts += (uint64_t)data[i + 1] * 100000000ull;
		i += 2;
		if (len > size - i)
			len = size - i;
		/* an exact-size copy: ASan sees any read past the frame */
		uint8_t *f = malloc(len ? len : 1);
		CHECK(f != NULL);
		memcpy(f, data + i, len);
		i += len;
		table_frame(&a, f, len, ts);
		bufs[nb] = f;
		struct secho_flow_frame *x = &burst[nb++];
		x->data = f;
		x->wirelen = (uint32_t)len;
		x->ts_ns = ts;
		x->reason = secho_dissect(f, len, &x->d);
		if (nb == SECHO_FLOW_TABLE_BURST || (ts & 0x300000000ull) == 0) {
			secho_flow_table_burst(&b, burst, nb);
			for (unsigned k = 0; k < nb; k++)
				free(bufs[k]);
			nb = 0;
			/* the same sweeps in both, between the same frames */
			secho_flow_table_expire(&a, ts);
			secho_flow_table_expire(&b, ts);
			CHECK(sa.fold == sb.fold && sa.records == sb.records);
		}
		check_counts(&a, &sa);
	}
	secho_flow_table_burst(&b, burst, nb);
	for (unsigned k = 0; k < nb; k++)
		free(bufs[k]);
	secho_flow_table_expire(&a, ts);
	secho_flow_table_expire(&b, ts);
	secho_flow_table_flush(&a);
	secho_flow_table_flush(&b);
	check_counts(&a, &sa);
	check_counts(&b, &sb);
	CHECK(a.cnt.active == 0 && b.cnt.active == 0);
	CHECK(sa.packets == a.cnt.c[SECHO_FLOW_CNT_PACKETS]);
	CHECK(sa.octets == a.cnt.c[SECHO_FLOW_CNT_OCTETS]);
	CHECK(sa.records == sb.records && sa.fold == sb.fold && sa.packets == sb.packets);
	free(ma);
	free(mb);
	return 0;
}
