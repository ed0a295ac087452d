/*
 * tests/unit/test_flow_gen_app.c - the generator's application payloads (src/traffic/
 * gen_app.h): every message, for many seeds and sizes, read back by the meter's own
 * parsers (the tls, quic and dns feature sets): the sizes asked for are met, the QUIC
 * Initials open under RFC 9001 keys derived by the quic set (both sides), and the names
 * are the ones drawn. tests/sh/test_flow_gen_app.sh holds the same messages to tshark.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow/feature/dns.h"
#include "flow/feature/quic.h"
#include "flow/feature/tls.h"
#include "harness.h"
#include "traffic/gen_app.h"

static const size_t wants[] = {0, 1, 40, 300, 517, 1200, 1300, 1460, 8960};

static void test_tls(void)
{
	static uint8_t b[SECHO_GEN_APP_MSG_MAX];
	unsigned tls12 = 0, ed448 = 0;
	t_begin("gen app: TLS ClientHello and ServerHello parse, sizes met; TLS 1.2 servers' "
	        "certificates");
	for (uint64_t seed = 0; seed < 100; seed++) {
		struct secho_gen_app a;
		secho_gen_app_draw(&a, SECHO_GEN_APP_TLS, seed);
		size_t min = secho_gen_app_msg(&a, 0, 0, b, sizeof(b));
		T_CHECK(min > 200 && min < 600, "seed %llu: smallest ClientHello %zu",
		        (unsigned long long)seed, min);
		for (size_t i = 0; i < sizeof(wants) / sizeof(wants[0]); i++) {
			size_t n = secho_gen_app_msg(&a, 0, wants[i], b, sizeof(b));
			T_CHECK(n == (wants[i] > min ? wants[i] : min), "want %zu: %zu", wants[i],
			        n);
			T_CHECK(n >= 9 && b[0] == 22 && (size_t)(b[3] << 8 | b[4]) == n - 5,
			        "record header");
			struct secho_tls_hello h;
			int rc = secho_tls_client_hello_parse(b + 5, n - 5, &h);
			T_CHECK(rc == 0 && h.has_sni && h.sni.len == strlen(a.name) &&
			                !memcmp(h.sni.p, a.name, h.sni.len),
			        "seed %llu want %zu: rc %d, SNI", (unsigned long long)seed,
			        wants[i], rc);
			T_CHECK(h.version == 0x0304 && h.n_alpn >= 1, "version %#x", h.version);
			n = secho_gen_app_msg(&a, 1, wants[i], b, sizeof(b));
			size_t rl = (size_t)(b[3] << 8 | b[4]);
			struct secho_tls_server_hello sh;
			rc = secho_tls_server_hello_parse(b + 5, rl, &sh);
			T_CHECK(rc == 0 && sh.version == (a.tls12 ? 0x0303 : 0x0304) &&
			                sh.cipher_suite == a.cipher,
			        "ServerHello: rc %d version %#x", rc, sh.version);
			if (a.tls12 && rc == 0) {
				/* ServerHello, then the Certificate in the same record */
				size_t at = 5 + 4 + (size_t)(b[6] << 16 | b[7] << 8 | b[8]);
				const uint8_t *der = NULL;
				size_t dl = 0;
				struct secho_tls_cert c;
				memset(&c, 0, sizeof(c));
				rc = at < 5 + rl ? secho_tls_certificate_first(b + at, 5 + rl - at,
				                                               &der, &dl)
				                 : -1;
				if (rc == 0)
					rc = secho_tls_cert_parse(der, dl, &c);
				const char *iss = secho_gen_app_issuer(a.ca);
				T_CHECK(rc == 0 && c.issuer_cn.len == strlen(iss) &&
				                !memcmp(c.issuer_cn.p, iss, c.issuer_cn.len) &&
				                c.subject_cn.len == strlen(a.name) &&
				                !memcmp(c.subject_cn.p, a.name, c.subject_cn.len) &&
				                c.not_before == a.not_before &&
				                c.not_after == a.not_after && c.pk_alg.len == 3 &&
				                c.pk_alg.p[2] == (a.key448 ? 0x71 : 0x70),
				        "seed %llu: certificate rc %d", (unsigned long long)seed,
				        rc);
				T_CHECK(b[at + 4 +
				          (size_t)(b[at + 1] << 16 | b[at + 2] << 8 | b[at + 3])] ==
				                14,
				        "ServerHelloDone after the Certificate");
			}
			T_CHECK(n >= wants[i] && (n == 5 + rl || b[5 + rl] == 23),
			        "server message %zu for %zu", n, wants[i]);
		}
		tls12 += a.tls12;
		ed448 += a.tls12 && a.key448;
	}
	/* a quarter drawn TLS 1.2, a quarter of those Ed448: both seen in 100 seeds */
	T_CHECK(tls12 >= 10 && tls12 <= 45 && ed448 >= 1, "%u TLS 1.2 servers, %u Ed448 keys",
	        tls12, ed448);
	t_end();
}

static void test_quic(void)
{
	static uint8_t b[SECHO_GEN_APP_MSG_MAX], pt[4096];
	t_begin("gen app: QUIC Initials open with RFC 9001 keys (client and server)");
	for (uint64_t seed = 0; seed < 60; seed++) {
		struct secho_gen_app a;
		secho_gen_app_draw(&a, SECHO_GEN_APP_QUIC, seed);
		for (size_t i = 0; i < sizeof(wants) / sizeof(wants[0]); i++) {
			for (int dir = 0; dir < 2; dir++) {
				size_t n = secho_gen_app_msg(&a, dir, wants[i], b, sizeof(b));
				struct secho_quic_hdr h;
				int rc = secho_quic_parse_long(b, n, &h);
				T_CHECK(rc == 0 && h.type == SECHO_QUIC_INITIAL && h.version == 1,
				        "seed %llu dir %d: header rc %d", (unsigned long long)seed,
				        dir, rc);
				if (rc)
					continue;
				size_t initial = h.pkt_len;
				T_CHECK(dir == 1 || (initial >= 1200 && initial <= 1400),
				        "client Initial of %zu bytes", initial);
				T_CHECK(n == (wants[i] > initial ? wants[i] : initial),
				        "datagram %zu for %zu", n, wants[i]);
				T_CHECK(!memcmp(h.dcid, dir ? a.scid : a.dcid, 8), "DCID");
				struct secho_quic_keys k;
				rc = secho_quic_initial_keys(1, a.dcid, 8, dir, &k);
				size_t pl = 0;
				uint64_t pn = 9;
				if (!rc)
					rc = secho_quic_open_initial(&k, b, &h, 0, 0, pt,
					                             sizeof(pt), &pl, &pn);
				T_CHECK(rc == 0 && pn == 0, "seed %llu dir %d: open rc %d",
				        (unsigned long long)seed, dir, rc);
				if (rc)
					continue;
				/* client: CRYPTO first; server: ACK then CRYPTO */
				size_t off = dir ? 5 : 0;
				T_CHECK(pt[off] == 0x06 && pt[off + 1] == 0, "CRYPTO frame");
				size_t cl = (size_t)((pt[off + 2] & 0x3f) << 8 | pt[off + 3]);
				const uint8_t *m = pt + off + 4;
				if (dir == 0) {
					struct secho_tls_hello th;
					rc = secho_tls_client_hello_parse(m, cl, &th);
					T_CHECK(rc == 0 && th.has_sni &&
					                th.sni.len == strlen(a.name) &&
					                !memcmp(th.sni.p, a.name, th.sni.len) &&
					                th.has_quic_tp,
					        "ClientHello in the Initial: rc %d", rc);
				} else {
					struct secho_tls_server_hello sh;
					rc = secho_tls_server_hello_parse(m, cl, &sh);
					T_CHECK(rc == 0 && sh.cipher_suite == a.cipher,
					        "ServerHello in the Initial: rc %d", rc);
				}
				/* the other side's keys must not open it */
				struct secho_quic_keys o;
				if (secho_quic_initial_keys(1, a.dcid, 8, !dir, &o) == 0)
					T_CHECK(secho_quic_open_initial(&o, b, &h, 0, 0, pt,
					                                sizeof(pt), &pl, &pn) != 0,
					        "opened with the wrong side's keys");
			}
		}
	}
	t_end();
}

static void test_dns(void)
{
	static uint8_t b[SECHO_GEN_APP_MSG_MAX];
	t_begin("gen app: DNS query and answer parse, padded to the size");
	for (uint64_t seed = 0; seed < 200; seed++) {
		struct secho_gen_app a;
		secho_gen_app_draw(&a, SECHO_GEN_APP_DNS, seed);
		for (size_t i = 0; i < sizeof(wants) / sizeof(wants[0]); i++) {
			for (int dir = 0; dir < 2; dir++) {
				size_t min = secho_gen_app_msg(&a, dir, 0, b, sizeof(b));
				size_t n = secho_gen_app_msg(&a, dir, wants[i], b, sizeof(b));
				T_CHECK(n == (wants[i] > min ? wants[i] : min), "size %zu for %zu",
				        n, wants[i]);
				struct secho_dns_msg m;
				int rc = secho_dns_parse(b, n, &m);
				T_CHECK(rc == 0 && !m.truncated && m.has_question &&
				                m.qname_len == strlen(a.name) &&
				                !memcmp(m.qname, a.name, m.qname_len) &&
				                m.qtype == a.qtype && m.id == a.dns_id &&
				                m.has_opt && m.psize == 1232,
				        "seed %llu dir %d: rc %d", (unsigned long long)seed, dir,
				        rc);
				T_CHECK(m.ancount == (dir ? a.nans : 0) && m.nrr == m.ancount,
				        "answers %u", m.ancount);
				for (unsigned r = 0; r < m.nrr; r++)
					T_CHECK(m.rr[r].ttl == a.ttl && m.rr[r].type == a.qtype,
					        "answer %u", r);
			}
		}
	}
	t_end();
}

static void test_http(void)
{
	static uint8_t b[SECHO_GEN_APP_MSG_MAX + 1];
	t_begin("gen app: HTTP request and response heads, sizes met");
	for (uint64_t seed = 0; seed < 40; seed++) {
		struct secho_gen_app a;
		secho_gen_app_draw(&a, SECHO_GEN_APP_HTTP, seed);
		/* every size up to 1,200 (the body's count crosses 1, 2 and 3 digits), then
		 * jumbo */
		for (size_t want = 0; want <= 9000; want += want < 1200 ? 1 : 1900) {
			for (int dir = 0; dir < 2; dir++) {
				size_t min = secho_gen_app_msg(&a, dir, 0, b, sizeof(b) - 1);
				size_t n = secho_gen_app_msg(&a, dir, want, b, sizeof(b) - 1);
				/* a GET grows by a Cookie of 14 bytes at least */
				T_CHECK(n == (want > min ? want : min) ||
				                (want > min && want < min + 14 && n == min + 14),
				        "size %zu for %zu (min %zu)", n, want, min);
				b[n] = 0;
				const char *s = (const char *)b, *end = strstr(s, "\r\n\r\n");
				T_CHECK(end != NULL, "no end of head");
				if (dir == 0) {
					char host[80];
					snprintf(host, sizeof(host), "\r\nHost: %s\r\n", a.name);
					T_CHECK(!strncmp(s, a.post ? "POST " : "GET ",
					                 a.post ? 5 : 4) &&
					                strstr(s, host) &&
					                strstr(s, "\r\nUser-Agent: "),
					        "request head");
				} else {
					T_CHECK(!strncmp(s, "HTTP/1.1 ", 9) &&
					                strstr(s, "\r\nServer: "),
					        "response head");
				}
				const char *cl = strstr(s, "Content-Length: ");
				if (cl && end)
					T_CHECK(strtoul(cl + 16, NULL, 10) ==
					                n - (size_t)(end + 4 - s),
					        "Content-Length");
			}
		}
	}
	t_end();
}

int main(void)
{
	test_tls();
	test_quic();
	test_dns();
	test_http();
	return t_exit();
}
