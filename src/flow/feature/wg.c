/*
 * src/flow/feature/wg.c - the wg feature set (src/flow/feature/wg.h).
 */
#include "flow/feature/wg.h"
#include "flow/feature/fjson.h"

#include <string.h>

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int secho_wg_parse(const uint8_t *p, size_t len, struct secho_wg_msg *m)
{
	memset(m, 0, sizeof(*m));
	if (len < SECHO_WG_LEN_DATA_MIN || p[1] || p[2] || p[3])
		return 0;
	switch (p[0]) {
	case SECHO_WG_INITIATION:
		if (len != SECHO_WG_LEN_INITIATION)
			return 0;
		m->sender = le32(p + 4);
		break;
	case SECHO_WG_RESPONSE:
		if (len != SECHO_WG_LEN_RESPONSE)
			return 0;
		m->sender = le32(p + 4);
		m->receiver = le32(p + 8);
		break;
	case SECHO_WG_COOKIE:
		if (len != SECHO_WG_LEN_COOKIE)
			return 0;
		m->receiver = le32(p + 4);
		break;
	case SECHO_WG_DATA:
		m->receiver = le32(p + 4);
		break;
	default:
		return 0;
	}
	m->type = p[0];
	m->dns_like = p[4] == 0 && p[5] == 1 && p[6] == 0 && p[7] == 0;
	return m->type;
}

/* The message p carries (its type, 0 when none). A snapped datagram: its type's length is
 * checked against the wire length, its indexes read from the captured bytes (zeros past
 * them). */
static int read_msg(const struct secho_feat_pkt *p, struct secho_wg_msg *m)
{
	int t;
	if (p->len < p->wire_len) {
		uint8_t hdr[SECHO_WG_LEN_INITIATION];
		memset(hdr, 0, sizeof(hdr));
		memcpy(hdr, p->payload, p->len < sizeof(hdr) ? p->len : sizeof(hdr));
		size_t wl = p->wire_len < sizeof(hdr) ? p->wire_len : sizeof(hdr);
		t = p->len >= 8 ? secho_wg_parse(hdr, wl, m) : 0;
		if (t && t != SECHO_WG_DATA && p->wire_len > sizeof(hdr))
			t = 0;
	} else {
		t = secho_wg_parse(p->payload, p->len, m);
	}
	return t;
}

void secho_feat_wg_init(struct secho_feat_wg *s)
{
	memset(s, 0, sizeof(*s));
}

bool secho_feat_wg_new_session(const struct secho_feat_wg *s, const struct secho_feat_pkt *p)
{
	struct secho_wg_msg m;
	if (s->done || !s->seen || p->proto != 17 || read_msg(p, &m) != SECHO_WG_INITIATION)
		return false;
	uint32_t own = p->dir == SECHO_FEAT_FWD ? s->src_peer : s->dst_peer;
	return own != 0 && own != m.sender;
}

void secho_feat_wg_packet(struct secho_feat_wg *s, const struct secho_feat_pkt *p)
{
	struct secho_wg_msg m;
	if (s->done)
		return;
	if (p->proto != 17) {
		s->done = 1;
		return;
	}
	int t = read_msg(p, &m);
	bool fwd = p->dir == SECHO_FEAT_FWD;
	if (!t) {
		if (s->seen)
			s->conf = 0; /* the flow is not (only) WireGuard: stop */
		s->done = 1;
		return;
	}
	switch (t) {
	case SECHO_WG_INITIATION: {
		uint32_t *own = fwd ? &s->src_peer : &s->dst_peer;
		if (*own != 0 && *own != m.sender) {
			s->new_session = 1;
			s->done = 1;
			return;
		}
		*own = m.sender;
		break;
	}
	case SECHO_WG_RESPONSE:
		/* the responder's own index, and the initiator's it answers */
		s->src_peer = fwd ? m.sender : m.receiver;
		s->dst_peer = fwd ? m.receiver : m.sender;
		break;
	default:
		/* cookie reply and data name the other side's index */
		if (fwd)
			s->dst_peer = m.receiver;
		else
			s->src_peer = m.receiver;
		break;
	}
	s->seen = 1;
	s->messages++;
	s->types = (uint16_t)(s->types | 1u << t);
	s->conf = m.dns_like ? 1 : 100;
}

int secho_feat_wg_json(const struct secho_feat_wg *s, char *buf, size_t cap)
{
	struct secho_fjson j;
	secho_fjson_init(&j, buf, cap);
	if (s->seen) {
		secho_fjson_mem_u(&j, "wg_conf_level", s->conf);
		secho_fjson_mem_u(&j, "wg_src_peer", s->src_peer);
		secho_fjson_mem_u(&j, "wg_dst_peer", s->dst_peer);
	}
	return secho_fjson_end(&j);
}
