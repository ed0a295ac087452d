/*
 * tests/fuzz/fuzz_http.c - libFuzzer target over the http feature set
 * (src/flow/feature/http.h): the input as one head, as its first and field lines, and as a
 * TCP flow cut into segments of both directions (in order, retransmitted, with gaps),
 * then written as JSON.
 *
 * Invariants: every string within its bound, a head read for at most SECHO_HTTP_HEAD_MAX
 * bytes, the JSON either fits or says -ENOSPC and holds no raw control byte; the flow fed to
 * a state that started as 0xa5 made ready by secho_feat_http_init (a reused slot) writes the
 * same JSON as from an all-zero start. ASan catches
 * reads outside the input (a heap copy of exactly its length).
 *
 *   make fuzz && build/fuzz/fuzz_http -max_total_time=60 tests/fuzz/corpus-http
 */
#include "fuzz.h"

#include "flow/feature/http.h"

#include <errno.h>
#include <string.h>

static void check_state(const struct secho_feat_http *s)
{
	const struct secho_http_fields *f = &s->f;
	CHECK(f->method.len <= SECHO_HTTP_METHOD_MAX && f->url.len <= SECHO_HTTP_URL_MAX);
	CHECK(f->host.len <= SECHO_HTTP_HOST_MAX && f->agent.len <= SECHO_HTTP_AGENT_MAX);
	CHECK(f->referer.len <= SECHO_HTTP_REFERER_MAX && f->ctype.len <= SECHO_HTTP_CTYPE_MAX);
	CHECK(f->server.len <= SECHO_HTTP_SERVER_MAX);
	CHECK(!f->have_resp || (f->status >= 100 && f->status <= 999) || f->status < 100);
	for (unsigned i = 0; i < 2; i++) {
		CHECK(s->d[i].head <= SECHO_HTTP_HEAD_MAX);
		CHECK(s->d[i].line_len <= SECHO_HTTP_LINE_MAX);
		CHECK(s->d[i].state <= SECHO_HTTP_S_REFUSED);
	}
	static char js[8192];
	int n = secho_feat_http_json(s, js, sizeof(js));
	CHECK(n >= 0 && (size_t)n < sizeof(js));
	for (int i = 0; i < n; i++)
		CHECK((unsigned char)js[i] >= 0x20 && (unsigned char)js[i] < 0x7f);
	if (n > 0)
		CHECK(secho_feat_http_json(s, js, (size_t)n - 1) == -ENOSPC);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct secho_feat_http s, g;
	uint8_t *copy = malloc(size ? size : 1);
	CHECK(copy);
	memcpy(copy, data, size);

	memset(&s, 0, sizeof(s));
	secho_http_parse_head(&s, copy, size);
	check_state(&s);
	memset(&s, 0, sizeof(s));
	(void)secho_http_first_line(&s.f, (const char *)copy, size, size & 1);
	(void)secho_http_field_line(&s.f, size & 2, (const char *)copy, size, size & 1);
	check_state(&s);

	memset(&s, 0, sizeof(s));
	memset(&g, 0xa5, sizeof(g)); /* a reused slot, made ready by its init */
	secho_feat_http_init(&g);
	uint32_t seq[2] = {size ? (uint32_t)data[0] << 24 : 0, 77};
	size_t pos[2] = {0, size / 2};
	unsigned step = 0;
	while ((pos[0] < size / 2 || pos[1] < size) && step++ < 128) {
		unsigned d = step & 1;
		size_t lim = d ? size : size / 2;
		if (pos[d] >= lim)
			continue;
		size_t n = 1 + (copy[pos[d]] & 0x3f);
		if (n > lim - pos[d])
			n = lim - pos[d];
		struct secho_feat_pkt t = {.payload = copy + pos[d],
		                           .len = (uint32_t)n,
		                           .wire_len =
		                                   (uint32_t)n + ((copy[pos[d]] & 0x81) == 0x81),
		                           .proto = 6,
		                           .dir = (uint8_t)d,
		                           .tcp_seq = seq[d] + (uint32_t)pos[d]};
		if ((copy[pos[d]] & 0xc0) == 0xc0)
			t.tcp_seq += 2; /* a gap */
		secho_feat_http_packet(&s, &t);
		secho_feat_http_packet(&g, &t);
		if (copy[pos[d]] & 0x40) {
			secho_feat_http_packet(&s, &t);
			secho_feat_http_packet(&g, &t);
		}
		pos[d] += n;
	}
	check_state(&s);
	static char js[8192], jg[8192];
	int ns = secho_feat_http_json(&s, js, sizeof(js)),
	    ng = secho_feat_http_json(&g, jg, sizeof(jg));
	CHECK(ns == ng && (ns < 0 || !memcmp(js, jg, (size_t)ns))); /* the same as from zero */
	free(copy);
	return 0;
}
