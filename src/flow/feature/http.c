/*
 * src/flow/feature/http.c - the http feature set (src/flow/feature/http.h).
 *
 * Each direction's stream is read in order (retransmitted bytes trimmed by sequence
 * number, a gap ends it), cut into lines in a buffer of SECHO_HTTP_LINE_MAX bytes, and each
 * line parsed when its LF arrives: work per packet is linear in its payload, and a head is
 * read for at most SECHO_HTTP_HEAD_MAX bytes.
 */
#include "flow/feature/http.h"
#include "flow/feature/fjson.h"

#include <errno.h>
#include <string.h>

#define PUT(str, src, n, was_cut)                                                                  \
	do {                                                                                       \
		size_t n_ = (n);                                                                   \
		(str).cut = (uint8_t)(n_ > sizeof((str).s) || (was_cut));                          \
		if (n_ > sizeof((str).s))                                                          \
			n_ = sizeof((str).s);                                                      \
		memcpy((str).s, (src), n_);                                                        \
		(str).len = (uint8_t)n_;                                                           \
	} while (0)

static bool is_upper(char c)
{
	return c >= 'A' && c <= 'Z';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static const char *find(const char *p, size_t n, char c)
{
	return n ? memchr(p, c, n) : NULL;
}

static bool status_line(const char *l, size_t n)
{
	/* HTTP/1.x SP 3DIGIT (SP reason)? (RFC 9112 4) */
	return n >= 12 && !memcmp(l, "HTTP/1.", 7) && is_digit(l[7]) && l[8] == ' ' &&
	       is_digit(l[9]) && is_digit(l[10]) && is_digit(l[11]) && (n == 12 || l[12] == ' ');
}

/* method SP target SP HTTP/ (RFC 9112 3); with cut, the line may end inside the target */
static bool request_line(const char *l, size_t n, bool cut, size_t *mlen, size_t *tlen)
{
	size_t m = 0;
	while (m < n && m <= SECHO_HTTP_METHOD_MAX &&
	       (is_upper(l[m]) || l[m] == '-' || l[m] == '_'))
		m++;
	if (m == 0 || m > SECHO_HTTP_METHOD_MAX || m >= n || l[m] != ' ')
		return false;
	const char *t = l + m + 1, *sp = find(t, n - m - 1, ' ');
	if (!sp) {
		if (!cut || n - m - 1 == 0)
			return false;
		*tlen = n - m - 1; /* the line was cut inside the target */
	} else {
		*tlen = (size_t)(sp - t);
		size_t rest = n - (size_t)(sp + 1 - l);
		if (*tlen == 0 || (rest < 5 && !cut) ||
		    memcmp(sp + 1, "HTTP/", rest < 5 ? rest : 5) != 0)
			return false;
	}
	*mlen = m;
	return true;
}

int secho_http_first_line(struct secho_http_fields *f, const char *line, size_t n, bool cut)
{
	size_t m, t;
	if (status_line(line, n)) {
		f->status = (uint16_t)((line[9] - '0') * 100 + (line[10] - '0') * 10 +
		                       (line[11] - '0'));
		f->have_resp = 1;
		return 2;
	}
	if (request_line(line, n, cut, &m, &t)) {
		PUT(f->method, line, m, false);
		PUT(f->url, line + m + 1, t, cut && m + 1 + t == n);
		f->have_req = 1;
		return 1;
	}
	return 0;
}

static bool name_is(const char *name, size_t n, const char *want)
{
	if (n != strlen(want))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c != want[i])
			return false;
	}
	return true;
}

int secho_http_field_line(struct secho_http_fields *f, bool req, const char *line, size_t n,
                          bool cut)
{
	const char *colon = find(line, n, ':');
	if (!colon || colon == line)
		return -EBADMSG;
	size_t nl = (size_t)(colon - line);
	if (find(line, nl, ' ') || find(line, nl, '\t'))
		return -EBADMSG;
	const char *v = colon + 1, *end = line + n;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (!cut && end > v && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	size_t vl = (size_t)(end - v);
	/* the first occurrence of each field is kept */
	if (req) {
		if (name_is(line, nl, "host") && !f->host.len && !f->host.cut)
			PUT(f->host, v, vl, cut);
		else if (name_is(line, nl, "user-agent") && !f->agent.len && !f->agent.cut)
			PUT(f->agent, v, vl, cut);
		else if (name_is(line, nl, "referer") && !f->referer.len && !f->referer.cut)
			PUT(f->referer, v, vl, cut);
	} else {
		if (name_is(line, nl, "content-type") && !f->ctype.len && !f->ctype.cut)
			PUT(f->ctype, v, vl, cut);
		else if (name_is(line, nl, "server") && !f->server.len && !f->server.cut)
			PUT(f->server, v, vl, cut);
	}
	return 0;
}

static void line_done(struct secho_feat_http *s, struct secho_http_dir *d)
{
	size_t n = d->line_len;
	bool cut = d->line_cut;
	if (!cut && n && d->line[n - 1] == '\r')
		n--;
	if (d->state == SECHO_HTTP_S_START) {
		if (n == 0 && !cut)
			return; /* empty lines before a request line are ignored (RFC 9112 2.2) */
		size_t m, t;
		bool resp = status_line(d->line, n);
		bool req = !resp && request_line(d->line, n, cut, &m, &t);
		if (!resp && !req) {
			d->state = SECHO_HTTP_S_REFUSED;
			s->refused++;
		} else if ((req && s->f.have_req) || (resp && s->f.have_resp)) {
			d->state = SECHO_HTTP_S_DONE;
			s->extra++;
		} else {
			secho_http_first_line(&s->f, d->line, n, cut);
			d->state = req ? SECHO_HTTP_S_REQ : SECHO_HTTP_S_RESP;
		}
		return;
	}
	if (n == 0 && !cut) {
		d->state = SECHO_HTTP_S_DONE; /* the empty line ending the head */
		return;
	}
	(void)secho_http_field_line(&s->f, d->state == SECHO_HTTP_S_REQ, d->line, n, cut);
}

static bool reading(const struct secho_http_dir *d)
{
	return d->state < SECHO_HTTP_S_DONE;
}

/* Bytes of one direction's stream, in order. */
static void feed(struct secho_feat_http *s, struct secho_http_dir *d, const uint8_t *p, size_t n)
{
	while (n && reading(d)) {
		if (d->head >= SECHO_HTTP_HEAD_MAX) {
			d->state = SECHO_HTTP_S_DONE; /* a head this long: what was read is kept */
			break;
		}
		/* the first byte of a head: a letter (a method or "HTTP"), CR or LF */
		if (d->state == SECHO_HTTP_S_START && d->line_len == 0 && !d->line_cut &&
		    !is_upper((char)p[0]) && p[0] != '\r' && p[0] != '\n') {
			d->state = SECHO_HTTP_S_REFUSED;
			s->refused++;
			break;
		}
		size_t room = (size_t)SECHO_HTTP_HEAD_MAX - d->head;
		size_t span = n < room ? n : room;
		const uint8_t *lf = memchr(p, '\n', span);
		size_t take = lf ? (size_t)(lf - p) : span;
		size_t space = SECHO_HTTP_LINE_MAX - d->line_len;
		size_t copy = take < space ? take : space;
		memcpy(d->line + d->line_len, p, copy);
		d->line_len = (uint16_t)(d->line_len + copy);
		if (take > copy)
			d->line_cut = 1;
		size_t used = take + (lf ? 1 : 0);
		d->head = (uint16_t)(d->head + used);
		p += used;
		n -= used;
		if (lf) {
			line_done(s, d);
			d->line_len = 0;
			d->line_cut = 0;
		}
	}
}

int secho_http_parse_head(struct secho_feat_http *s, const uint8_t *buf, size_t len)
{
	struct secho_http_dir *d = &s->d[0];
	feed(s, d, buf, len);
	return d->state;
}

static void check_done(struct secho_feat_http *s)
{
	if (!reading(&s->d[0]) && !reading(&s->d[1]))
		s->done = 1;
}

#define CLEAR(str) ((str).len = 0, (str).cut = 0)

void secho_feat_http_init(struct secho_feat_http *s)
{
	struct secho_http_fields *f = &s->f;
	CLEAR(f->method);
	CLEAR(f->url);
	CLEAR(f->host);
	CLEAR(f->agent);
	CLEAR(f->referer);
	CLEAR(f->ctype);
	CLEAR(f->server);
	f->status = 0;
	f->have_req = f->have_resp = 0;
	for (unsigned i = 0; i < 2; i++) {
		struct secho_http_dir *d = &s->d[i];
		d->next_seq = 0;
		d->head = d->line_len = 0;
		d->started = d->state = d->line_cut = d->pad = 0;
	}
	s->done = 0;
	memset(s->pad, 0, sizeof(s->pad));
	s->refused = s->extra = 0;
}

void secho_feat_http_packet(struct secho_feat_http *s, const struct secho_feat_pkt *p)
{
	if (s->done)
		return;
	if (p->proto != 6) {
		s->done = 1;
		return;
	}
	struct secho_http_dir *d = &s->d[p->dir & 1];
	if (!reading(d) || p->len == 0)
		return;
	if (!d->started) {
		d->started = 1;
		d->next_seq = p->tcp_seq;
	}
	int32_t delta = (int32_t)(p->tcp_seq - d->next_seq);
	if (delta > 0) {
		d->state = SECHO_HTTP_S_REFUSED; /* a gap: this direction's head is lost */
		s->refused++;
		check_done(s);
		return;
	}
	uint32_t skip = (uint32_t)-delta;
	if (skip >= p->len)
		return; /* all of it seen already */
	uint32_t n = p->len - skip;
	d->next_seq += n;
	feed(s, d, p->payload + skip, n);
	if (reading(d) && p->len < p->wire_len) {
		d->state = SECHO_HTTP_S_REFUSED; /* the capture cut the segment: a gap */
		s->refused++;
	}
	check_done(s);
}

static void mem(struct secho_fjson *j, const char *name, const char *cutname, const char *s,
                uint8_t len, uint8_t cut)
{
	if (!len && !cut)
		return;
	secho_fjson_mem_s(j, name, s, len);
	if (cut)
		secho_fjson_mem_b(j, cutname, true);
}

int secho_feat_http_json(const struct secho_feat_http *s, char *buf, size_t cap)
{
	struct secho_fjson j;
	const struct secho_http_fields *f = &s->f;
	secho_fjson_init(&j, buf, cap);
	if (f->have_req) {
		mem(&j, "http_method", "http_method_cut", f->method.s, f->method.len,
		    f->method.cut);
		mem(&j, "http_url", "http_url_cut", f->url.s, f->url.len, f->url.cut);
		mem(&j, "http_host", "http_host_cut", f->host.s, f->host.len, f->host.cut);
		mem(&j, "http_agent", "http_agent_cut", f->agent.s, f->agent.len, f->agent.cut);
		mem(&j, "http_referer", "http_referer_cut", f->referer.s, f->referer.len,
		    f->referer.cut);
	}
	if (f->have_resp) {
		secho_fjson_mem_u(&j, "http_status_code", f->status);
		mem(&j, "http_content_type", "http_content_type_cut", f->ctype.s, f->ctype.len,
		    f->ctype.cut);
		mem(&j, "http_server", "http_server_cut", f->server.s, f->server.len,
		    f->server.cut);
	}
	return secho_fjson_end(&j);
}
