/*
 * tests/tools/ipfix_listen.c - a strict little IPFIX collector for tests: TCP on
 * 127.0.0.1, or an IPFIX file (RFC 5655). Parsed independently of src/flow/export/ipfix.c.
 *
 * Checks every message (version 10, lengths, set lengths, a template before any data that
 * uses it within the Transport Session, the sequence number = data records received
 * before it in the session, RFC 7011 section 3.1) and writes each flow record as truth
 * lines (src/traffic/gen.h's format; times in whole milliseconds; a biflow record gives its
 * forward line and, when it has reverse packets, the reverse line).
 *
 * usage: ipfix_listen --tcp PORT|0 [--port-file F] [--out F] [--max-seconds S]
 *        ipfix_listen --udp PORT|0 [--port-file F] [--out F] [--max-seconds S] [--raw F]
 *        ipfix_listen --file F [--out F]
 * TCP: connections one after the other until SIGTERM (what is readable then is still read)
 * or the time limit. UDP: one datagram is one message; a Transport Session per exporter
 * socket (source address and port: templates are kept, numbers run on across template
 * refreshes), until SIGTERM (the datagrams already queued are still read) or the time limit;
 * --raw F writes every datagram's bytes to F as it arrives, one after the other (what an
 * IPFIX file collector of the same exporter holds, when nothing was lost).
 * template_msgs counts the messages that carry a template set (UDP: the first and every
 * refresh). At the end one line on stdout:
 *   sessions=N messages=N records=N options=N templates=N seq_errors=N no_template=N
 *   malformed=N last_exported=N last_not_sent=N last_observed=N template_msgs=N
 * Exit 0 when nothing was malformed, out of sequence or without a template; 1 otherwise.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct tfield {
	uint16_t id, len;
	uint32_t pen;
};

struct tmpl {
	int n, scope;
	unsigned reclen;
	struct tfield f[64];
};

static struct tmpl *tmpls[65536];
static uint64_t sessions, messages, records, options, templates, seq_errors, no_template, malformed,
        last_exported, last_not_sent, last_observed, session_seq, template_msgs;
static FILE *out;
static volatile sig_atomic_t stop;

static uint64_t rd(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static void new_session(void)
{
	for (size_t i = 0; i < 65536; i++) {
		free(tmpls[i]);
		tmpls[i] = NULL;
	}
	sessions++;
	session_seq = 0;
}

static void parse_templates(const uint8_t *p, size_t len, int options_set)
{
	while (len >= 4) {
		uint16_t tid = (uint16_t)rd(p, 2), cnt = (uint16_t)rd(p + 2, 2), scope = 0;
		size_t o = 4;
		if (options_set) {
			if (len < 6) {
				malformed++;
				return;
			}
			scope = (uint16_t)rd(p + 4, 2);
			o = 6;
		}
		if (tid < 256 || cnt == 0 || cnt > 64) {
			malformed++;
			return;
		}
		struct tmpl *t = calloc(1, sizeof(*t));
		if (!t)
			exit(2);
		t->n = cnt;
		t->scope = scope;
		for (int i = 0; i < cnt; i++) {
			if (o + 4 > len) {
				malformed++;
				free(t);
				return;
			}
			uint16_t id = (uint16_t)rd(p + o, 2), fl = (uint16_t)rd(p + o + 2, 2);
			o += 4;
			t->f[i].id = id & 0x7fff;
			t->f[i].len = fl;
			if (id & 0x8000) {
				if (o + 4 > len) {
					malformed++;
					free(t);
					return;
				}
				t->f[i].pen = (uint32_t)rd(p + o, 4);
				o += 4;
			}
			if (fl == 0xffff) { /* variable length: not sent by our exporter */
				malformed++;
				free(t);
				return;
			}
			t->reclen += fl;
		}
		free(tmpls[tid]);
		tmpls[tid] = t;
		templates++;
		p += o;
		len -= o;
		if (len < 4) /* padding */
			return;
	}
}

static void put_line(int ipv, uint16_t vlan, uint16_t vin, uint8_t proto, const uint8_t *src,
                     const uint8_t *dst, uint16_t sp, uint16_t dp, uint16_t itc, uint64_t pk,
                     uint64_t oc, uint64_t t0, uint64_t t1, uint16_t fl)
{
	char s[64], d[64];
	int fam = ipv == 4 ? AF_INET : AF_INET6;
	inet_ntop(fam, src, s, sizeof(s));
	inet_ntop(fam, dst, d, sizeof(d));
	if (out)
		fprintf(out,
		        "%u,%u,%d,%u,%s,%s,%u,%u,%u,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		        ",%u\n",
		        vlan, vin, ipv, proto, s, d, sp, dp, itc >> 8, itc & 0xff, pk, oc,
		        t0 * 1000000u, t1 * 1000000u, fl);
}

static void data_record(const struct tmpl *t, const uint8_t *p)
{
	uint8_t src[16] = {0}, dst[16] = {0};
	uint64_t v[256] = {0}, rv[256] = {0};
	int ipv = 0;
	for (int i = 0; i < t->n; i++) {
		const struct tfield *f = &t->f[i];
		if (f->id == 8 || f->id == 12 || f->id == 27 || f->id == 28) {
			memcpy(f->id == 8 || f->id == 27 ? src : dst, p, f->len);
			ipv = f->len == 4 ? 4 : 6;
		} else if (f->id < 256) {
			if (f->pen == 29305)
				rv[f->id] = rd(p, f->len);
			else if (f->pen == 0)
				v[f->id] = rd(p, f->len);
		}
		p += f->len;
	}
	if (t->scope) {
		options++;
		last_exported = v[42];
		last_not_sent = v[166];
		last_observed = v[163];
		return;
	}
	records++;
	uint16_t itc = (uint16_t)(ipv == 4 ? v[32] : v[139]);
	put_line(ipv, (uint16_t)v[58], (uint16_t)v[245], (uint8_t)v[4], src, dst, (uint16_t)v[7],
	         (uint16_t)v[11], itc, v[2], v[1], v[152], v[153], (uint16_t)v[6]);
	/* the reverse direction's own ICMP type and code (reverseIcmpTypeCode) */
	uint16_t ritc = (uint16_t)(ipv == 4 ? rv[32] : rv[139]);
	if (rv[2])
		put_line(ipv, (uint16_t)v[58], (uint16_t)v[245], (uint8_t)v[4], dst, src,
		         (uint16_t)v[11], (uint16_t)v[7], ritc, rv[2], rv[1], rv[152], rv[153],
		         (uint16_t)rv[6]);
}

/* One whole message. */
static void message(const uint8_t *m, size_t len)
{
	messages++;
	if (len < 16 || rd(m, 2) != 10 || rd(m + 2, 2) != len) {
		malformed++;
		return;
	}
	if (rd(m + 8, 4) != (session_seq & 0xffffffffu))
		seq_errors++;
	size_t o = 16;
	bool has_template = false;
	while (o < len) {
		if (o + 4 > len) {
			malformed++;
			return;
		}
		uint16_t sid = (uint16_t)rd(m + o, 2), sl = (uint16_t)rd(m + o + 2, 2);
		if (sl < 4 || o + sl > len) {
			malformed++;
			return;
		}
		const uint8_t *s = m + o + 4;
		size_t n = sl - 4u;
		if (sid == 2 || sid == 3) {
			parse_templates(s, n, sid == 3);
			if (!has_template)
				template_msgs++;
			has_template = true;
		} else if (sid >= 256) {
			const struct tmpl *t = tmpls[sid];
			if (!t) {
				no_template++;
			} else {
				while (n >= t->reclen && t->reclen) {
					data_record(t, s);
					session_seq++;
					s += t->reclen;
					n -= t->reclen;
				}
			}
		} else {
			malformed++;
		}
		o += sl;
	}
}

/* Feed a byte stream; whole messages are parsed as they complete. */
struct stream {
	uint8_t buf[1 << 17];
	size_t len;
};

static int feed(struct stream *s, const uint8_t *p, size_t n)
{
	if (s->len + n > sizeof(s->buf))
		return -1;
	memcpy(s->buf + s->len, p, n);
	s->len += n;
	while (s->len >= 4) {
		size_t ml = (size_t)rd(s->buf + 2, 2);
		if (ml < 16) {
			malformed++;
			return -1;
		}
		if (s->len < ml)
			break;
		message(s->buf, ml);
		memmove(s->buf, s->buf + ml, s->len - ml);
		s->len -= ml;
	}
	return 0;
}

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static int summary(void)
{
	printf("sessions=%" PRIu64 " messages=%" PRIu64 " records=%" PRIu64 " options=%" PRIu64
	       " templates=%" PRIu64 " seq_errors=%" PRIu64 " no_template=%" PRIu64
	       " malformed=%" PRIu64 " last_exported=%" PRIu64 " last_not_sent=%" PRIu64
	       " last_observed=%" PRIu64 " template_msgs=%" PRIu64 "\n",
	       sessions, messages, records, options, templates, seq_errors, no_template, malformed,
	       last_exported, last_not_sent, last_observed, template_msgs);
	if (out)
		fclose(out);
	return (seq_errors || no_template || malformed) ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *file = NULL, *port_file = NULL;
	FILE *raw = NULL;
	long port = -1, max_s = 60;
	bool udp = false;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--tcp") || !strcmp(argv[i], "--udp")) {
			port = atol(argv[i + 1]);
			udp = argv[i][2] == 'u';
		} else if (!strcmp(argv[i], "--file"))
			file = argv[i + 1];
		else if (!strcmp(argv[i], "--port-file"))
			port_file = argv[i + 1];
		else if (!strcmp(argv[i], "--out"))
			out = fopen(argv[i + 1], "a");
		else if (!strcmp(argv[i], "--max-seconds"))
			max_s = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--raw")) {
			raw = fopen(argv[i + 1], "wb");
			if (!raw) {
				perror(argv[i + 1]);
				return 2;
			}
		} else {
			fprintf(stderr, "ipfix_listen: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	static struct stream st;
	if (file) {
		FILE *f = fopen(file, "rb");
		if (!f) {
			perror(file);
			return 2;
		}
		uint8_t b[4096];
		size_t n;
		new_session();
		while ((n = fread(b, 1, sizeof(b), f)) > 0)
			if (feed(&st, b, n))
				break;
		fclose(f);
		if (st.len)
			malformed++;
		return summary();
	}
	if (port < 0 || port > 65535) {
		fprintf(stderr, "usage: ipfix_listen --tcp|--udp PORT|0 [...] | --file F [...]\n");
		return 2;
	}
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	int ls = socket(AF_INET, (udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC, 0), one = 1;
	int rcvbuf = 8 << 20;
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (udp) /* root: beyond rmem_max, as nfcapd -B does */
		setsockopt(ls, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t al = sizeof(a);
	if (bind(ls, (struct sockaddr *)&a, sizeof(a)) || (!udp && listen(ls, 4)) ||
	    getsockname(ls, (struct sockaddr *)&a, &al)) {
		perror("ipfix_listen");
		return 2;
	}
	if (port_file) {
		FILE *pf = fopen(port_file, "w");
		if (!pf)
			return 2;
		fprintf(pf, "%u\n", ntohs(a.sin_port));
		fclose(pf);
	}
	time_t t_end = time(NULL) + max_s;
	if (udp) {
		struct sockaddr_in from = {0}, last = {0};
		while (time(NULL) < t_end) {
			struct pollfd p = {.fd = ls, .events = POLLIN};
			int r = poll(&p, 1, stop ? 0 : 100);
			if (stop && r <= 0)
				break; /* nothing more queued */
			if (r <= 0)
				continue;
			static uint8_t b[65536];
			socklen_t fl = sizeof(from);
			ssize_t n = recvfrom(ls, b, sizeof(b), 0, (struct sockaddr *)&from, &fl);
			if (n <= 0)
				continue;
			if (from.sin_port != last.sin_port ||
			    from.sin_addr.s_addr != last.sin_addr.s_addr)
				new_session(); /* another exporter socket: another Transport Session
				                */
			last = from;
			if (raw)
				fwrite(b, 1, (size_t)n, raw);
			if (n < 4 || rd(b + 2, 2) != (uint64_t)n)
				malformed++;
			else
				message(b, (size_t)n);
		}
		close(ls);
		if (raw && fclose(raw))
			malformed++; /* the copy is not whole: say so in the exit status */
		return summary();
	}
	int cs = -1;
	while (time(NULL) < t_end) {
		struct pollfd p = {.fd = cs >= 0 ? cs : ls, .events = POLLIN};
		int r = poll(&p, 1, 100);
		if (stop && (r <= 0 || cs < 0))
			break; /* nothing more readable */
		if (r <= 0)
			continue;
		if (cs < 0) {
			cs = accept(ls, NULL, NULL);
			if (cs >= 0) {
				new_session();
				st.len = 0;
			}
			continue;
		}
		uint8_t b[65536];
		ssize_t n = recv(cs, b, sizeof(b), 0);
		if (n <= 0) {
			if (st.len)
				malformed++;
			close(cs);
			cs = -1;
			continue;
		}
		if (feed(&st, b, (size_t)n)) {
			close(cs);
			cs = -1;
		}
	}
	if (cs >= 0)
		close(cs);
	close(ls);
	return summary();
}
