/*
 * src/flow/feature/bstats.c - the bstats feature set (src/flow/feature/bstats.h).
 */
#include "flow/feature/bstats.h"
#include "flow/feature/fjson.h"

#include <string.h>

void secho_feat_bstats_init(struct secho_feat_bstats *s)
{
	for (unsigned i = 0; i < 2; i++) {
		s->d[i].count = 0;
		s->d[i].started = 0;
		memset(s->d[i].pad, 0, sizeof(s->d[i].pad));
	}
	s->done = 0;
	memset(s->pad, 0, sizeof(s->pad));
}

static void start(struct secho_bstats_dir *d, const struct secho_feat_pkt *p)
{
	d->pkts[d->count] = 1;
	d->bytes[d->count] = p->wire_len;
	d->start_ns[d->count] = p->ts_ns;
	d->stop_ns[d->count] = p->ts_ns;
	d->started = 1;
}

void secho_feat_bstats_packet(struct secho_feat_bstats *s, const struct secho_feat_pkt *p)
{
	struct secho_bstats_dir *d = &s->d[p->dir & 1];
	if (s->done || p->wire_len == 0 || d->count >= SECHO_BSTATS_MAX)
		return;
	if (!d->started) {
		start(d, p);
		return;
	}
	unsigned c = d->count;
	/* microseconds, as timevals: the gap is (now - last) < 1 s, strictly */
	uint64_t now_us = p->ts_ns / 1000u, last_us = d->stop_ns[c] / 1000u;
	if (now_us < last_us + SECHO_BSTATS_GAP_US) {
		d->pkts[c]++;
		d->bytes[c] += p->wire_len;
		d->stop_ns[c] = p->ts_ns;
		return;
	}
	if (d->pkts[c] >= SECHO_BSTATS_MIN_PKTS)
		d->count++;
	if (d->count < SECHO_BSTATS_MAX)
		start(d, p);
	if (s->d[0].count >= SECHO_BSTATS_MAX && s->d[1].count >= SECHO_BSTATS_MAX)
		s->done = 1;
}

unsigned secho_feat_bstats_count(const struct secho_feat_bstats *s, unsigned dir)
{
	const struct secho_bstats_dir *d = &s->d[dir & 1];
	unsigned c = d->count;
	if (c < SECHO_BSTATS_MAX && d->started && d->pkts[c] >= SECHO_BSTATS_MIN_PKTS)
		c++;
	return c;
}

bool secho_feat_bstats_keep(uint64_t packets)
{
	return packets > SECHO_BSTATS_MIN_PKTS;
}

int secho_feat_bstats_json(const struct secho_feat_bstats *s, char *buf, size_t cap)
{
	struct secho_fjson j;
	unsigned n[2] = {secho_feat_bstats_count(s, 0), secho_feat_bstats_count(s, 1)};
	secho_fjson_init(&j, buf, cap);
	if (!n[0] && !n[1])
		return secho_fjson_end(&j);
	static const char *const names[2][4] = {
	        {"sbi_brst_packets", "sbi_brst_bytes", "sbi_brst_time_start", "sbi_brst_time_stop"},
	        {"dbi_brst_packets", "dbi_brst_bytes", "dbi_brst_time_start", "dbi_brst_time_stop"},
	};
	for (unsigned dir = 0; dir < 2; dir++) {
		const struct secho_bstats_dir *d = &s->d[dir];
		secho_fjson_mem_list32(&j, names[dir][0], d->pkts, n[dir]);
		secho_fjson_mem_list32(&j, names[dir][1], d->bytes, n[dir]);
		secho_fjson_mem_list64(&j, names[dir][2], d->start_ns, n[dir]);
		secho_fjson_mem_list64(&j, names[dir][3], d->stop_ns, n[dir]);
	}
	return secho_fjson_end(&j);
}
