/*
 * tests/unit/test_feat_http.c - the http feature set (src/flow/feature/http.h).
 *
 * Vectors: heads written by real programs (curl 7.88 from Debian asking Python 3.11's
 * http.server with the handler tests/sh/test_feat_http.sh writes), fed whole, split at every
 * offset and retransmitted; hand-written variants (header names in any case, whitespace,
 * repeated fields, long lines and heads, status lines with and without a reason, HTTP/0.9
 * and HTTP/2 lines, other protocols' first bytes, gaps).
 *
 * With SECHO_FEAT_PCAP=file set, it prints one JSON line per flow of that capture instead
 * (tests/sh/test_feat_http.sh).
 */
#include "featcap.h"
#include "harness.h"

#include "flow/feature/http.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *req_get = "GET /index.html?q=1 HTTP/1.1\r\n"
                             "Host: 127.0.0.1:28080\r\n"
                             "User-Agent: secho-agent/2.5 (test)\r\n"
                             "Accept: */*\r\n"
                             "Referer: http://referer.secho.test/from\r\n"
                             "\r\n";
static const char *resp_200 = "HTTP/1.0 200 OK\r\n"
                              "Server: secho-test/1.0\r\n"
                              "Date: Fri, 04 Dec 2026 00:41:31 GMT\r\n"
                              "Content-Type: text/html; charset=utf-8\r\n"
                              "Content-Length: 13\r\n"
                              "\r\n"
                              "<p>secho</p>\n";
static const char *req_post = "POST /submit HTTP/1.1\r\n"
                              "Host: 127.0.0.1:28080\r\n"
                              "User-Agent: secho-poster/1\r\n"
                              "Accept: */*\r\n"
                              "Content-Type: application/json\r\n"
                              "Content-Length: 7\r\n"
                              "\r\n"
                              "{\"a\":1}";
static const char *resp_201 = "HTTP/1.0 201 Created\r\n"
                              "Server: secho-test/1.0\r\n"
                              "Date: Fri, 04 Dec 2026 00:41:31 GMT\r\n"
                              "Content-Type: application/json\r\n"
                              "Content-Length: 12\r\n"
                              "\r\n"
                              "{\"ok\":true}\n";

static const char *want_get =
        ",\"http_method\":\"GET\",\"http_url\":\"/"
        "index.html?q=1\",\"http_host\":\"127.0.0.1:28080\","
        "\"http_agent\":\"secho-agent/2.5 (test)\",\"http_referer\":\"http://referer.secho.test/"
        "from\",\"http_status_code\":200,\"http_content_type\":\"text/html; charset=utf-8\","
        "\"http_server\":\"secho-test/1.0\"";

static struct secho_feat_pkt pkt(const char *p, size_t n, uint8_t dir, uint32_t seq)
{
	struct secho_feat_pkt k = {.payload = (const uint8_t *)p,
	                           .len = (uint32_t)n,
	                           .wire_len = (uint32_t)n,
	                           .proto = 6,
	                           .dir = dir,
	                           .tcp_seq = seq,
	                           .sport = dir ? 80 : 40000,
	                           .dport = dir ? 40000 : 80};
	return k;
}

/* A flow: the request from the client (forward) at seq 1000, the response at 5000, each cut
 * in two at the given offsets. */
static void run_flow(struct secho_feat_http *s, const char *req, size_t cut_q, const char *resp,
                     size_t cut_r)
{
	size_t qn = strlen(req), rn = strlen(resp);
	memset(s, 0, sizeof(*s));
	struct secho_feat_pkt p = pkt(req, cut_q, SECHO_FEAT_FWD, 1000);
	secho_feat_http_packet(s, &p);
	p = pkt(req + cut_q, qn - cut_q, SECHO_FEAT_FWD, 1000 + (uint32_t)cut_q);
	secho_feat_http_packet(s, &p);
	p = pkt(resp, cut_r, SECHO_FEAT_REV, 5000);
	secho_feat_http_packet(s, &p);
	p = pkt(resp + cut_r, rn - cut_r, SECHO_FEAT_REV, 5000 + (uint32_t)cut_r);
	secho_feat_http_packet(s, &p);
}

static void test_real(void)
{
	static struct secho_feat_http s;
	char js[4096];

	t_begin("http: curl's requests and http.server's responses");
	run_flow(&s, req_get, 0, resp_200, 0);
	int n = secho_feat_http_json(&s, js, sizeof(js));
	T_CHECK(n == (int)strlen(want_get) && !strcmp(js, want_get), "GET:\n%s\nwant\n%s", js,
	        want_get);
	T_CHECK(s.done && s.refused == 0 && s.extra == 0, "done");
	for (size_t cap = 0; cap < (size_t)n; cap += 5)
		T_CHECK(secho_feat_http_json(&s, js, cap) == -ENOSPC, "cap %zu", cap);
	run_flow(&s, req_post, 0, resp_201, 0);
	n = secho_feat_http_json(&s, js, sizeof(js));
	T_CHECK(n > 0 && !strcmp(js,
	                         ",\"http_method\":\"POST\",\"http_url\":\"/submit\","
	                         "\"http_host\":\"127.0.0.1:28080\",\"http_agent\":\"secho-poster/"
	                         "1\",\"http_status_code\":201,\"http_content_type\":\"application/"
	                         "json\",\"http_server\":\"secho-test/1.0\""),
	        "POST: %s (the request's Content-Type is not the response's)", js);
	t_end();

	t_begin("http: every split point, and retransmissions, give the same fields");
	for (size_t c = 0; c <= strlen(req_get); c++) {
		run_flow(&s, req_get, c, resp_200, c < strlen(resp_200) ? c : strlen(resp_200));
		n = secho_feat_http_json(&s, js, sizeof(js));
		T_CHECK(n > 0 && !strcmp(js, want_get) && s.done, "split at %zu: %s", c, js);
	}
	/* byte by byte, each byte sent twice and every 7th a segment of 3 starting 2 back */
	memset(&s, 0, sizeof(s));
	size_t qn = strlen(req_get), rn = strlen(resp_200);
	for (size_t i = 0; i < qn; i++) {
		struct secho_feat_pkt p =
		        pkt(req_get + i, 1, SECHO_FEAT_FWD, (uint32_t)(0xfffffff0u + i));
		secho_feat_http_packet(&s, &p);
		secho_feat_http_packet(&s, &p);
		if (i % 7 == 6 && i + 1 < qn) {
			p = pkt(req_get + i - 2, 4, SECHO_FEAT_FWD,
			        (uint32_t)(0xfffffff0u + i - 2));
			secho_feat_http_packet(&s, &p);
			i++;
		}
	}
	struct secho_feat_pkt p = pkt(resp_200, rn, SECHO_FEAT_REV, 7);
	secho_feat_http_packet(&s, &p);
	n = secho_feat_http_json(&s, js, sizeof(js));
	T_CHECK(n > 0 && !strcmp(js, want_get), "byte by byte, retransmitted: %s", js);
	t_end();
}

/* One head into a fresh state, as the forward direction. */
static int head(struct secho_feat_http *s, const char *h)
{
	memset(s, 0, sizeof(*s));
	return secho_http_parse_head(s, (const uint8_t *)h, strlen(h));
}

static int streq(const char *s, size_t n, const char *want)
{
	return n == strlen(want) && memcmp(s, want, n) == 0;
}

static void test_variants(void)
{
	static struct secho_feat_http s;
	char js[4096];

	t_begin("http: header names in any case, whitespace, repeated fields");
	T_CHECK(head(&s, "\r\nGET / HTTP/1.1\r\nhOsT:\t  a.test \t\r\nUSER-AGENT:x\r\nHost: b\r\n"
	                 "Server: not-a-request-field\r\nReferer:\r\n\r\n") == SECHO_HTTP_S_DONE,
	        "parsed (a leading empty line ignored)");
	T_CHECK(streq(s.f.host.s, s.f.host.len, "a.test"), "host trimmed, the first kept: %.*s",
	        s.f.host.len, s.f.host.s);
	T_CHECK(streq(s.f.agent.s, s.f.agent.len, "x") && s.f.server.len == 0 &&
	                s.f.referer.len == 0,
	        "agent; a response field in a request ignored; an empty referer not seen");
	int n = secho_feat_http_json(&s, js, sizeof(js));
	T_CHECK(n > 0 && !strstr(js, "http_referer") && !strstr(js, "http_status_code"), "json: %s",
	        js);
	T_CHECK(head(&s, "GET / HTTP/1.1\r\nHost : a\r\nBad line\r\n\r\n") == SECHO_HTTP_S_DONE &&
	                s.f.host.len == 0,
	        "a name followed by a space is not a field (RFC 9112 5.1)");
	/* LF-only line ends */
	T_CHECK(head(&s, "GET /x HTTP/1.0\nHost: h\n\n") == SECHO_HTTP_S_DONE &&
	                streq(s.f.host.s, s.f.host.len, "h"),
	        "bare LF line ends");
	t_end();

	t_begin("http: first lines that are and are not HTTP/1.x");
	static const struct {
		const char *h;
		int state;
		unsigned status;
	} v[] = {
	        {"HTTP/1.1 404 Not Found\r\n\r\n", SECHO_HTTP_S_DONE, 404},
	        {"HTTP/1.1 204\r\n\r\n", SECHO_HTTP_S_DONE, 204},
	        {"HTTP/1.1 20x OK\r\n\r\n", SECHO_HTTP_S_REFUSED, 0},
	        {"HTTP/2.0 200 OK\r\n\r\n", SECHO_HTTP_S_REFUSED, 0},
	        {"HTTP/1.1 2000 OK\r\n\r\n", SECHO_HTTP_S_REFUSED, 0},
	        {"GET /\r\n", SECHO_HTTP_S_REFUSED, 0},          /* HTTP/0.9 */
	        {"GET  HTTP/1.1\r\n", SECHO_HTTP_S_REFUSED, 0},  /* no target */
	        {"get / HTTP/1.1\r\n", SECHO_HTTP_S_REFUSED, 0}, /* methods are case-sensitive */
	        {"SSH-2.0-OpenSSH_9.2\r\n", SECHO_HTTP_S_REFUSED, 0},
	        {"\x16\x03\x01\x02\x00\x01", SECHO_HTTP_S_REFUSED, 0}, /* TLS: at its first byte */
	        {"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", SECHO_HTTP_S_DONE,
	         0}, /* h2c preface: a request line */
	        {"ABCDEFGHIJKLMNOP / HTTP/1.1\r\n", SECHO_HTTP_S_REFUSED, 0}, /* 16-letter method */
	        {"M-SEARCH * HTTP/1.1\r\n\r\n", SECHO_HTTP_S_DONE, 0},
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		int st = head(&s, v[i].h);
		T_CHECK(st == v[i].state && s.f.status == v[i].status, "%zu: state %d status %u", i,
		        st, s.f.status);
	}
	T_CHECK(head(&s, "\x16\x03\x01") == SECHO_HTTP_S_REFUSED && s.d[0].head == 0,
	        "refused before reading a byte");
	t_end();

	t_begin("http: bounds: long lines, long heads");
	static char big[SECHO_HTTP_HEAD_MAX + 4096];
	char *b = big;
	b += sprintf(b, "GET /");
	memset(b, 'u', 300);
	b += 300;
	b += sprintf(b, " HTTP/1.1\r\nUser-Agent: ");
	memset(b, 'a', 300);
	b += 300;
	b += sprintf(b, "\r\nHost: h\r\n");
	while ((size_t)(b - big) < SECHO_HTTP_HEAD_MAX + 100)
		b += sprintf(b, "X-Filler: %040d\r\n", 0);
	sprintf(b, "Referer: too-late\r\n\r\n");
	T_CHECK(head(&s, big) == SECHO_HTTP_S_DONE && s.d[0].head == SECHO_HTTP_HEAD_MAX,
	        "read for %u bytes", s.d[0].head);
	T_CHECK(s.f.url.cut && s.f.url.len == SECHO_HTTP_URL_MAX && s.f.url.s[0] == '/' &&
	                s.f.url.s[1] == 'u',
	        "url cut at %u", s.f.url.len);
	T_CHECK(s.f.agent.cut && s.f.agent.len == SECHO_HTTP_AGENT_MAX, "agent cut");
	T_CHECK(streq(s.f.host.s, s.f.host.len, "h") && s.f.referer.len == 0,
	        "the field after the long lines kept, the one after the bound not read");
	int n2 = secho_feat_http_json(&s, js, sizeof(js));
	T_CHECK(n2 > 0 && strstr(js, "\"http_url_cut\":true") &&
	                strstr(js, "\"http_agent_cut\":true"),
	        "cut flags in JSON");
	/* a request line cut inside its target by the line buffer: the method and target's
	 * start kept */
	memset(big, 0, sizeof(big));
	b = big + sprintf(big, "GET /");
	memset(b, 'v', 2 * SECHO_HTTP_LINE_MAX);
	strcpy(b + 2 * SECHO_HTTP_LINE_MAX, " HTTP/1.1\r\n\r\n");
	T_CHECK(head(&s, big) == SECHO_HTTP_S_DONE && streq(s.f.method.s, s.f.method.len, "GET") &&
	                s.f.url.cut,
	        "request line longer than the line buffer");
	t_end();

	t_begin("http: gaps, other transports, escaping");
	memset(&s, 0, sizeof(s));
	struct secho_feat_pkt p = pkt(req_get, 10, SECHO_FEAT_FWD, 100);
	secho_feat_http_packet(&s, &p);
	p = pkt(req_get + 20, 30, SECHO_FEAT_FWD, 120);
	secho_feat_http_packet(&s, &p);
	T_CHECK(s.d[0].state == SECHO_HTTP_S_REFUSED && s.refused == 1, "a gap ends the direction");
	p = pkt(resp_200, strlen(resp_200), SECHO_FEAT_REV, 1);
	p.wire_len = p.len + 100;
	secho_feat_http_packet(&s, &p);
	T_CHECK(s.done && s.f.status == 200, "a snapped segment after a whole head: done");
	memset(&s, 0, sizeof(s));
	p = pkt(req_get, 20, SECHO_FEAT_FWD, 1);
	p.proto = 17;
	secho_feat_http_packet(&s, &p);
	T_CHECK(s.done && !s.f.have_req, "UDP: not looked at");
	head(&s, "GET /\"\\\x01\x80 HTTP/1.1\r\n\r\n");
	n = secho_feat_http_json(&s, js, sizeof(js));
	T_CHECK(n > 0 && strstr(js, "\"http_url\":\"/\\\"\\\\\\u0001\\u0080\""), "escaped: %s", js);
	/* a second request (in the other direction) counted, not read */
	memset(&s, 0, sizeof(s));
	p = pkt(req_get, strlen(req_get), SECHO_FEAT_FWD, 1);
	secho_feat_http_packet(&s, &p);
	p = pkt(req_post, strlen(req_post), SECHO_FEAT_REV, 1);
	secho_feat_http_packet(&s, &p);
	T_CHECK(s.extra == 1 && streq(s.f.method.s, s.f.method.len, "GET") && s.done,
	        "second request counted");
	t_end();
}

FEATCAP_SET(http)

int main(void)
{
	const char *pcap = getenv("SECHO_FEAT_PCAP");
	if (pcap && *pcap)
		return featcap_print(pcap, pc_fn, pc_members);
	test_real();
	test_variants();
	return t_exit();
}
