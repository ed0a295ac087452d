/*
 * src/flow/feature/pstats.c - the pstats feature set (src/flow/feature/pstats.h).
 */
#include "flow/feature/pstats.h"
#include "flow/feature/fjson.h"

#include <string.h>

void secho_feat_pstats_init(struct secho_feat_pstats *s)
{
	s->count = 0;
	s->done = 0;
	memset(s->pad, 0, sizeof(s->pad));
}

void secho_feat_pstats_packet_opt(struct secho_feat_pstats *s, const struct secho_feat_pkt *p,
                                  unsigned opts)
{
	if (s->done)
		return;
	if (p->wire_len == 0 && !(opts & SECHO_PSTATS_INCLUDE_ZEROES))
		return;
	struct secho_pstats_pkt *e = &s->pkt[s->count];
	secho_pstats_set_ts(e, p->ts_ns);
	e->size = (uint16_t)(p->wire_len > 0xffff ? 0xffff : p->wire_len);
	e->flags = p->proto == 6 ? p->tcp_flags : 0;
	e->dir = p->dir == SECHO_FEAT_FWD ? 1 : -1;
	s->count++;
	if (s->count == SECHO_PSTATS_MAX)
		s->done = 1;
}

void secho_feat_pstats_packet(struct secho_feat_pstats *s, const struct secho_feat_pkt *p)
{
	secho_feat_pstats_packet_opt(s, p, 0);
}

bool secho_feat_pstats_keep(uint64_t packets, uint8_t tcp_flags)
{
	return !(packets <= 1 && (tcp_flags & 0x02));
}

int secho_feat_pstats_json(const struct secho_feat_pstats *s, char *buf, size_t cap)
{
	struct secho_fjson j;
	secho_fjson_init(&j, buf, cap);
	if (!s->count)
		return secho_fjson_end(&j);
	static const char *const names[4] = {"ppi_pkt_lengths", "ppi_pkt_times", "ppi_pkt_flags",
	                                     "ppi_pkt_directions"};
	for (unsigned l = 0; l < 4; l++) {
		secho_fjson_raw(&j, ",\"");
		secho_fjson_raw(&j, names[l]);
		secho_fjson_raw(&j, "\":[");
		for (unsigned i = 0; i < s->count && i < SECHO_PSTATS_MAX; i++) {
			if (i)
				secho_fjson_raw(&j, ",");
			const struct secho_pstats_pkt *e = &s->pkt[i];
			if (l == 0)
				secho_fjson_u(&j, e->size);
			else if (l == 1)
				secho_fjson_u(&j, secho_pstats_ts(e));
			else if (l == 2)
				secho_fjson_u(&j, e->flags);
			else
				secho_fjson_i(&j, e->dir);
		}
		secho_fjson_raw(&j, "]");
	}
	return secho_fjson_end(&j);
}
