/*
 * src/flow/feature/dns.c - the dns feature set (src/flow/feature/dns.h).
 *
 * Every offset is checked against the message's length before the byte is read; names are
 * decoded with a hop count and a wire-length bound, so a message of n bytes costs O(n)
 * work whatever its counts and pointers say (each record advances the cursor by at least
 * 11 bytes, each name by at least 1, and each name follows at most SECHO_DNS_MAX_HOPS
 * pointers over at most 255 bytes of labels).
 */
#include "flow/feature/dns.h"
#include "flow/feature/fjson.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Text written into a bounded buffer: what does not fit is dropped and remembered. */
struct text {
	char *out;
	size_t cap, n;
	bool cut;
};

static void text_put(struct text *t, const char *s, size_t n)
{
	size_t room = t->cap - t->n;
	if (n > room) {
		t->cut = true;
		n = room;
	}
	memcpy(t->out + t->n, s, n);
	t->n += n;
}

int secho_dns_name(const uint8_t *msg, size_t len, size_t off, char *out, size_t cap,
                   size_t *outlen, bool *cut, size_t *next)
{
	struct text t = {out, cap, 0, false};
	size_t pos = off, wire = 0;
	unsigned hops = 0;
	bool jumped = false, first = true;

	*outlen = 0;
	*cut = false;
	*next = 0;
	for (;;) {
		if (pos >= len)
			return -EBADMSG;
		uint8_t l = msg[pos];
		if ((l & 0xc0) == 0xc0) {
			/* a pointer (RFC 1035 4.1.4): only backwards, a bounded number of times */
			if (pos + 1 >= len)
				return -EBADMSG;
			size_t target = (size_t)(l & 0x3f) << 8 | msg[pos + 1];
			if (target >= pos || ++hops > SECHO_DNS_MAX_HOPS)
				return -EBADMSG;
			if (!jumped)
				*next = pos + 2;
			jumped = true;
			pos = target;
			continue;
		}
		if (l & 0xc0) /* 01 and 10: extended label types (RFC 6891 obsoleted them) */
			return -EBADMSG;
		wire += 1u + l;
		if (wire > 255)
			return -EBADMSG;
		if (l == 0) {
			if (!jumped)
				*next = pos + 1;
			break;
		}
		if (l > len - pos - 1)
			return -EBADMSG;
		if (!first)
			text_put(&t, ".", 1);
		text_put(&t, (const char *)msg + pos + 1, l);
		first = false;
		pos += 1u + l;
	}
	*outlen = t.n;
	*cut = t.cut;
	return 0;
}

/* The name at msg[off..) as text, its uncompressed part within msg[..end); *next after it. */
static void put_name_at(struct text *t, const uint8_t *msg, size_t len, size_t off, size_t end,
                        bool *ok, size_t *next)
{
	char tmp[256 + 64]; /* 255 bytes of wire name make at most 254 bytes of text */
	size_t n;
	bool cut;
	*ok = off < end && secho_dns_name(msg, len, off, tmp, sizeof(tmp), &n, &cut, next) == 0 &&
	      *next <= end;
	if (*ok)
		text_put(t, tmp, n);
}

static void put_hex(struct text *t, const uint8_t *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	for (size_t i = 0; i < n && !t->cut; i++) {
		char h[2] = {hex[p[i] >> 4], hex[p[i] & 15]};
		text_put(t, h, 2);
	}
}

size_t secho_dns_rdata(const uint8_t *msg, size_t len, size_t off, uint16_t type, uint16_t rdlen,
                       char *out, size_t cap, uint8_t *flags)
{
	struct text t = {out, cap, 0, false};
	size_t end = off + rdlen;
	const uint8_t *d = msg + off;
	char tmp[INET6_ADDRSTRLEN + 64];
	size_t next = 0;
	bool ok = false;

	if (off > len || rdlen > len - off)
		return 0;
	switch (type) {
	case SECHO_DNS_T_A:
		if (rdlen == 4) {
			int n = snprintf(tmp, sizeof(tmp), "%u.%u.%u.%u", d[0], d[1], d[2], d[3]);
			text_put(&t, tmp, (size_t)n);
			ok = true;
		}
		break;
	case SECHO_DNS_T_AAAA:
		if (rdlen == 16 && inet_ntop(AF_INET6, d, tmp, sizeof(tmp))) {
			text_put(&t, tmp, strlen(tmp));
			ok = true;
		}
		break;
	case SECHO_DNS_T_NS:
	case SECHO_DNS_T_CNAME:
	case SECHO_DNS_T_PTR:
		put_name_at(&t, msg, len, off, end, &ok, &next);
		ok = ok && next == end;
		break;
	case SECHO_DNS_T_MX:
		if (rdlen >= 3) {
			int n = snprintf(tmp, sizeof(tmp), "%u ", be16(d));
			text_put(&t, tmp, (size_t)n);
			put_name_at(&t, msg, len, off + 2, end, &ok, &next);
			ok = ok && next == end;
		}
		break;
	case SECHO_DNS_T_SRV:
		/* priority weight port target (RFC 2782), as FlowTest writes it */
		if (rdlen >= 7) {
			int n = snprintf(tmp, sizeof(tmp), "%u %u %u ", be16(d), be16(d + 2),
			                 be16(d + 4));
			text_put(&t, tmp, (size_t)n);
			put_name_at(&t, msg, len, off + 6, end, &ok, &next);
			ok = ok && next == end;
		}
		break;
	case SECHO_DNS_T_SOA: {
		/* mname rname serial refresh retry expire minimum (RFC 1035 3.3.13) */
		size_t mid;
		put_name_at(&t, msg, len, off, end, &ok, &mid);
		if (ok) {
			text_put(&t, " ", 1);
			put_name_at(&t, msg, len, mid, end, &ok, &next);
		}
		ok = ok && end - next == 20;
		if (ok) {
			const uint8_t *v = msg + next;
			int n = snprintf(tmp, sizeof(tmp), " %u %u %u %u %u", be32(v), be32(v + 4),
			                 be32(v + 8), be32(v + 12), be32(v + 16));
			text_put(&t, tmp, (size_t)n);
		}
		break;
	}
	case SECHO_DNS_T_TXT: {
		/* character-strings: a length byte, then that many bytes (RFC 1035 3.3.14) */
		size_t i = 0;
		ok = rdlen > 0;
		while (ok && i < rdlen) {
			size_t l = d[i];
			if (l > rdlen - i - 1) {
				ok = false;
				break;
			}
			if (i)
				text_put(&t, " ", 1);
			text_put(&t, (const char *)d + i + 1, l);
			i += 1 + l;
		}
		break;
	}
	default:
		break;
	}
	if (!ok) {
		t.n = 0;
		t.cut = false;
		put_hex(&t, d, rdlen);
		*flags |= SECHO_DNS_RR_DATA_HEX;
	}
	if (t.cut)
		*flags |= SECHO_DNS_RR_DATA_CUT;
	return t.n;
}

/* A resource record at msg[*pos..): its fixed fields into rr (when not NULL), the cursor past
 * it. Returns 0 or -EBADMSG (the record does not fit or its name is malformed). */
static int parse_rr(const uint8_t *msg, size_t len, size_t *pos, struct secho_dns_rr *rr,
                    uint16_t *type, uint16_t *rclass, uint32_t *ttl)
{
	char scratch[1];
	size_t n, next;
	bool cut;
	int r = rr ? secho_dns_name(msg, len, *pos, rr->name, sizeof(rr->name), &n, &cut, &next)
	           : secho_dns_name(msg, len, *pos, scratch, 0, &n, &cut, &next);
	if (r)
		return r;
	if (next > len || len - next < 10)
		return -EBADMSG;
	const uint8_t *f = msg + next;
	uint16_t rdlen = be16(f + 8);
	if (len - next - 10 < rdlen)
		return -EBADMSG;
	*type = be16(f);
	*rclass = be16(f + 2);
	*ttl = be32(f + 4);
	if (rr) {
		rr->name_len = (uint8_t)n;
		rr->flags = cut ? SECHO_DNS_RR_NAME_CUT : 0;
		rr->type = *type;
		rr->rclass = *rclass;
		rr->ttl = *ttl;
		rr->rdlength = rdlen;
		rr->data_len = (uint8_t)secho_dns_rdata(msg, len, next + 10, *type, rdlen, rr->data,
		                                        sizeof(rr->data), &rr->flags);
	}
	*pos = next + 10 + rdlen;
	return 0;
}

int secho_dns_parse(const uint8_t *msg, size_t len, struct secho_dns_msg *m)
{
	memset(m, 0, sizeof(*m));
	if (len < SECHO_DNS_HDR_LEN)
		return -EBADMSG;
	m->id = be16(msg);
	m->flags = be16(msg + 2);
	m->qdcount = be16(msg + 4);
	m->ancount = be16(msg + 6);
	m->nscount = be16(msg + 8);
	m->arcount = be16(msg + 10);

	size_t pos = SECHO_DNS_HDR_LEN;
	for (unsigned i = 0; i < m->qdcount; i++) {
		char scratch[1];
		size_t n, next;
		bool cut;
		int r = i == 0 ? secho_dns_name(msg, len, pos, m->qname, sizeof(m->qname), &n, &cut,
		                                &next)
		               : secho_dns_name(msg, len, pos, scratch, 0, &n, &cut, &next);
		if (r || next > len || len - next < 4) {
			if (i == 0)
				return -EBADMSG;
			m->truncated = 1;
			return 0;
		}
		if (i == 0) {
			m->qname_len = (uint8_t)n;
			m->qname_cut = cut;
			m->qtype = be16(msg + next);
			m->qclass = be16(msg + next + 2);
			m->has_question = 1;
		}
		pos = next + 4;
	}

	unsigned total = (unsigned)m->ancount + m->nscount + m->arcount;
	for (unsigned i = 0; i < total; i++) {
		bool answer = i < m->ancount, additional = i >= (unsigned)m->ancount + m->nscount;
		struct secho_dns_rr *rr =
		        answer && m->nrr < SECHO_DNS_RR_MAX ? &m->rr[m->nrr] : NULL;
		uint16_t type, rclass;
		uint32_t ttl;
		if (parse_rr(msg, len, &pos, rr, &type, &rclass, &ttl)) {
			if (rr)
				memset(rr, 0, sizeof(*rr));
			m->truncated = 1;
			return 0;
		}
		if (rr)
			m->nrr++;
		if (additional && type == SECHO_DNS_T_OPT && !m->has_opt) {
			/* RFC 6891 6.1.2-6.1.3: CLASS is the UDP payload size, TTL holds
			 * extended RCODE 8 | version 8 | DO 1 | Z 15 */
			m->has_opt = 1;
			m->psize = rclass;
			m->dnssec_ok = (uint8_t)(ttl >> 15 & 1);
		}
	}
	return 0;
}

bool secho_feat_dns_wants(const struct secho_feat_pkt *p)
{
	return (p->proto == 6 || p->proto == 17) &&
	       (p->sport == SECHO_DNS_PORT || p->dport == SECHO_DNS_PORT);
}

void secho_feat_dns_init(struct secho_feat_dns *s)
{
	s->seen = 0;
	s->done = 0;
	s->pad = 0;
	s->messages = s->refused = s->extra = 0;
	for (unsigned d = 0; d < 2; d++) {
		struct secho_dns_tcp *t = &s->tcp[d];
		t->next_seq = 0;
		t->have = 0;
		t->started = 0;
		t->state = 0;
	}
}

static void check_done(struct secho_feat_dns *s, uint8_t proto)
{
	if (s->seen == 3 || s->refused >= SECHO_DNS_REFUSE_MAX)
		s->done = 1;
	if (proto == 6 && s->tcp[0].state && s->tcp[1].state)
		s->done = 1;
}

/* One whole (or, when cut, the start of one) DNS message. */
static void deliver(struct secho_feat_dns *s, const uint8_t *msg, size_t len, bool cut)
{
	if (len < SECHO_DNS_HDR_LEN) {
		s->refused++;
		return;
	}
	unsigned slot = (msg[2] & 0x80) ? 1 : 0; /* QR */
	if (s->seen & (1u << slot)) {
		s->extra++;
		return;
	}
	if (secho_dns_parse(msg, len, &s->msg[slot])) {
		memset(&s->msg[slot], 0, sizeof(s->msg[slot]));
		s->refused++;
		return;
	}
	if (cut)
		s->msg[slot].truncated = 1;
	s->seen |= (uint8_t)(1u << slot);
	s->messages++;
}

/* The message in t->buf, whole or as far as it came (cut). */
static void tcp_deliver(struct secho_feat_dns *s, struct secho_dns_tcp *t, bool cut)
{
	size_t l = be16(t->buf);
	size_t have = (size_t)t->have - 2;
	deliver(s, t->buf + 2, have < l ? have : l, cut || have < l);
	t->state = 1;
}

static void tcp_feed(struct secho_feat_dns *s, const struct secho_feat_pkt *p)
{
	struct secho_dns_tcp *t = &s->tcp[p->dir & 1];
	const uint8_t *data = p->payload;
	uint32_t n = p->len;

	if (t->state || n == 0)
		return;
	if (!t->started) {
		t->started = 1;
		t->next_seq = p->tcp_seq;
	}
	int32_t delta = (int32_t)(p->tcp_seq - t->next_seq);
	if (delta > 0) {
		/* a gap: what is buffered is all this direction will give */
		if (t->have >= 2 + SECHO_DNS_HDR_LEN)
			tcp_deliver(s, t, true);
		else
			s->refused++;
		t->state = 2;
		return;
	}
	uint32_t skip = (uint32_t)-delta; /* bytes already taken (a retransmission) */
	if (skip >= n)
		return;
	data += skip;
	n -= skip;
	uint32_t room = SECHO_DNS_TCP_BUF - t->have, take = n < room ? n : room;
	memcpy(t->buf + t->have, data, take);
	t->have = (uint16_t)(t->have + take);
	t->next_seq += take;
	if (t->have < 2)
		return;
	size_t l = be16(t->buf);
	if ((size_t)t->have >= 2 + l)
		tcp_deliver(s, t, false);
	else if (t->have == SECHO_DNS_TCP_BUF)
		tcp_deliver(s, t, true); /* longer than the bound: its start */
	else if (p->len < p->wire_len) {
		/* the capture cut this segment: the stream has a gap from here */
		if (t->have >= 2 + SECHO_DNS_HDR_LEN)
			tcp_deliver(s, t, true);
		t->state = 2;
	}
}

void secho_feat_dns_packet(struct secho_feat_dns *s, const struct secho_feat_pkt *p)
{
	if (s->done)
		return;
	if (p->proto == 17) {
		if (p->len)
			deliver(s, p->payload, p->len, p->len < p->wire_len);
	} else if (p->proto == 6) {
		tcp_feed(s, p);
	} else {
		s->done = 1;
		return;
	}
	check_done(s, p->proto);
}

static void json_rr(struct secho_fjson *j, const struct secho_dns_rr *rr)
{
	secho_fjson_raw(j, "{\"name\":");
	secho_fjson_str(j, (const uint8_t *)rr->name, rr->name_len);
	secho_fjson_mem_u(j, "type", rr->type);
	secho_fjson_mem_u(j, "class", rr->rclass);
	secho_fjson_mem_u(j, "ttl", rr->ttl);
	secho_fjson_mem_s(j, "data", rr->data, rr->data_len);
	if (rr->flags & SECHO_DNS_RR_DATA_HEX) {
		secho_fjson_mem_b(j, "data_hex", true);
		secho_fjson_mem_u(j, "rdlength", rr->rdlength);
	}
	if (rr->flags & (SECHO_DNS_RR_NAME_CUT | SECHO_DNS_RR_DATA_CUT))
		secho_fjson_mem_b(j, "cut", true);
	secho_fjson_raw(j, "}");
}

int secho_feat_dns_json(const struct secho_feat_dns *s, char *buf, size_t cap)
{
	struct secho_fjson j;
	const struct secho_dns_msg *q = (s->seen & 1) ? &s->msg[0] : NULL;
	const struct secho_dns_msg *r = (s->seen & 2) ? &s->msg[1] : NULL;
	const struct secho_dns_msg *first = q ? q : r;

	secho_fjson_init(&j, buf, cap);
	if (!first)
		return secho_fjson_end(&j);
	secho_fjson_mem_u(&j, "dns_id", first->id);
	if (q)
		secho_fjson_mem_u(&j, "dns_flags", q->flags);
	if (r)
		secho_fjson_mem_u(&j, "rev_dns_flags", r->flags);
	const struct secho_dns_msg *qs = q && q->has_question ? q : r && r->has_question ? r : NULL;
	if (qs) {
		secho_fjson_mem_s(&j, "dns_req_query_name", qs->qname, qs->qname_len);
		if (qs->qname_cut)
			secho_fjson_mem_b(&j, "dns_qname_cut", true);
		secho_fjson_mem_u(&j, "dns_req_query_type", qs->qtype);
		secho_fjson_mem_u(&j, "dns_req_query_class", qs->qclass);
	}
	if (r) {
		secho_fjson_mem_u(&j, "dns_resp_rcode", r->flags & 0xf);
		secho_fjson_mem_u(&j, "dns_answers", r->ancount);
		secho_fjson_raw(&j, ",\"dns_resp_rr\":[");
		for (unsigned i = 0; i < r->nrr; i++) {
			if (i)
				secho_fjson_raw(&j, ",");
			json_rr(&j, &r->rr[i]);
		}
		secho_fjson_raw(&j, "]");
		if (r->nrr) {
			secho_fjson_mem_u(&j, "dns_rr_ttl", r->rr[0].ttl);
			secho_fjson_mem_u(&j, "dns_rlength", r->rr[0].data_len);
			secho_fjson_mem_s(&j, "dns_rdata", r->rr[0].data, r->rr[0].data_len);
		}
	}
	const struct secho_dns_msg *o = q && q->has_opt ? q : r && r->has_opt ? r : NULL;
	if (o) {
		secho_fjson_mem_u(&j, "dns_psize", o->psize);
		secho_fjson_mem_u(&j, "dns_do", o->dnssec_ok);
	}
	if ((q && q->truncated) || (r && r->truncated))
		secho_fjson_mem_b(&j, "dns_truncated", true);
	return secho_fjson_end(&j);
}
