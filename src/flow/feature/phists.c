/*
 * src/flow/feature/phists.c - the phists feature set (src/flow/feature/phists.h).
 */
#include "flow/feature/phists.h"
#include "flow/feature/fjson.h"

#include <string.h>

unsigned secho_phists_bin(uint32_t v)
{
	if (v < 16)
		return 0;
	if (v > 1023)
		return SECHO_PHISTS_BINS - 1;
	/* 16..1023: floor(log2 v) is 4..9, bins 1..6 */
	return (unsigned)(31 - __builtin_clz(v)) - 3;
}

void secho_feat_phists_init(struct secho_feat_phists *s)
{
	memset(s, 0, sizeof(*s));
}

static void bump(uint32_t *c)
{
	if (*c != UINT32_MAX)
		(*c)++;
}

void secho_feat_phists_packet_opt(struct secho_feat_phists *s, const struct secho_feat_pkt *p,
                                  unsigned opts)
{
	if (p->wire_len == 0 && !(opts & SECHO_PHISTS_INCLUDE_ZEROES))
		return;
	unsigned d = p->dir & 1;
	bump(&s->d[d].size[secho_phists_bin(p->wire_len)]);
	uint64_t ms = p->ts_ns / 1000000u;
	if (s->have_last[d]) {
		uint64_t diff = ms > s->last_ms[d] ? ms - s->last_ms[d] : 0;
		bump(&s->d[d].ipt[secho_phists_bin(diff > UINT32_MAX ? UINT32_MAX
		                                                     : (uint32_t)diff)]);
	}
	s->last_ms[d] = ms;
	s->have_last[d] = 1;
	s->counted = 1;
}

void secho_feat_phists_packet(struct secho_feat_phists *s, const struct secho_feat_pkt *p)
{
	secho_feat_phists_packet_opt(s, p, 0);
}

bool secho_feat_phists_keep(uint64_t packets, uint8_t tcp_flags)
{
	return !(packets <= 1 && (tcp_flags & 0x02));
}

int secho_feat_phists_json(const struct secho_feat_phists *s, char *buf, size_t cap)
{
	struct secho_fjson j;
	secho_fjson_init(&j, buf, cap);
	if (s->counted) {
		secho_fjson_mem_list32(&j, "s_phists_sizes", s->d[0].size, SECHO_PHISTS_BINS);
		secho_fjson_mem_list32(&j, "s_phists_ipt", s->d[0].ipt, SECHO_PHISTS_BINS);
		secho_fjson_mem_list32(&j, "d_phists_sizes", s->d[1].size, SECHO_PHISTS_BINS);
		secho_fjson_mem_list32(&j, "d_phists_ipt", s->d[1].ipt, SECHO_PHISTS_BINS);
	}
	return secho_fjson_end(&j);
}
