/*
 * tests/tools/ipfix_export.c - export the flows of a generator truth file through the
 * IPFIX exporter (src/flow/export/ipfix.h), as the meter would: each truth line a record
 * (--uniflow), or each forward line with its reverse line one biflow record (the
 * reverse line: the reverse key, an ICMP query's answer type, starting later, within 30 s
 * of the forward's end).
 * End reason: end of flow (3) when the line saw FIN or RST, else forced end (4).
 *
 * usage: ipfix_export [options] TRUTH.csv URL...
 *   --uniflow           one record per line
 *   --mtu N  --refresh S  --stats S  --odid N  --flush-ms N
 *   --rate R            records per second (paced on the clock), default: flat out
 *   --pause-after N     after N records, wait until every TCP byte is acknowledged,
 *   --pause-ms MS       print "paused" on stdout, tick for MS, then go on
 *   --close-ms MS       close timeout (default 10000)
 * Prints one line of counters per collector; exits 0 when close() says everything was
 * delivered, 1 otherwise, 2 on bad usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flow/export/ipfix.h"
#include "sys/clock.h"

struct line {
	struct secho_flow_key k;
	struct secho_flow_dir d;
	int used;
};

static int parse_line(char *s, struct line *l)
{
	char *f[16];
	int n = 0;
	for (char *t = strtok(s, ","); t && n < 16; t = strtok(NULL, ","))
		f[n++] = t;
	if (n != 15)
		return -1;
	memset(l, 0, sizeof(*l));
	l->k.vlan = (uint16_t)atoi(f[0]);
	l->k.vlan_inner = (uint16_t)atoi(f[1]);
	l->k.ip_version = (uint8_t)atoi(f[2]);
	l->k.proto = (uint8_t)atoi(f[3]);
	int fam = l->k.ip_version == 4 ? AF_INET : AF_INET6;
	if (inet_pton(fam, f[4], l->k.src) != 1 || inet_pton(fam, f[5], l->k.dst) != 1)
		return -1;
	l->k.sport = (uint16_t)atoi(f[6]);
	l->k.dport = (uint16_t)atoi(f[7]);
	l->k.icmp_type_code = (uint16_t)(atoi(f[8]) << 8 | atoi(f[9]));
	l->d.packets = strtoull(f[10], NULL, 10);
	l->d.octets = strtoull(f[11], NULL, 10);
	l->d.first_ns = strtoull(f[12], NULL, 10);
	l->d.last_ns = strtoull(f[13], NULL, 10);
	l->d.tcp_flags = (uint8_t)atoi(f[14]);
	return 0;
}

static int is_reverse(const struct secho_flow_key *a, const struct secho_flow_key *b)
{
	return a->ip_version == b->ip_version && a->proto == b->proto && a->vlan == b->vlan &&
	       a->vlan_inner == b->vlan_inner && !memcmp(a->src, b->dst, 16) &&
	       !memcmp(a->dst, b->src, 16) && a->sport == b->dport && a->dport == b->sport &&
	       secho_flow_icmp_answer(a->ip_version, a->proto, a->icmp_type_code) ==
	               b->icmp_type_code;
}

/* Direction-free order: lines of one connection end up next to each other. */
static int canon_cmp(const void *pa, const void *pb)
{
	const struct line *a = pa, *b = pb;
	const uint8_t *a1 = a->k.src, *a2 = a->k.dst, *b1 = b->k.src, *b2 = b->k.dst;
	if (memcmp(a1, a2, 16) > 0) {
		a1 = a->k.dst;
		a2 = a->k.src;
	}
	if (memcmp(b1, b2, 16) > 0) {
		b1 = b->k.dst;
		b2 = b->k.src;
	}
	int c = memcmp(a1, b1, 16);
	if (!c)
		c = memcmp(a2, b2, 16);
	if (!c)
		c = (int)a->k.proto - (int)b->k.proto;
	if (!c)
		c = (int)(a->k.vlan ^ a->k.vlan_inner << 12) -
		    (int)(b->k.vlan ^ b->k.vlan_inner << 12);
	if (!c)
		c = (int)(a->k.sport + a->k.dport) - (int)(b->k.sport + b->k.dport);
	if (!c)
		c = a->d.first_ns < b->d.first_ns ? -1 : a->d.first_ns > b->d.first_ns;
	return c;
}

static uint8_t end_of(const struct line *l)
{
	return (l->k.proto == 6 && (l->d.tcp_flags & 0x05)) ? SECHO_FLOW_END_EOF
	                                                    : SECHO_FLOW_END_FORCED;
}

int main(int argc, char **argv)
{
	struct secho_ipfix_cfg cfg = {.odid = 7, .biflow = true};
	uint64_t pause_after = 0, pause_ms = 0, rate = 0;
	int close_ms = 10000, i = 1;
	for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
		const char *o = argv[i];
		if (!strcmp(o, "--uniflow")) {
			cfg.biflow = false;
			continue;
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "ipfix_export: %s needs a value\n", o);
			return 2;
		}
		uint64_t v = strtoull(argv[++i], NULL, 10);
		if (!strcmp(o, "--mtu"))
			cfg.mtu = (uint32_t)v;
		else if (!strcmp(o, "--refresh"))
			cfg.template_refresh_s = (uint32_t)v;
		else if (!strcmp(o, "--stats"))
			cfg.stats_interval_s = (uint32_t)v;
		else if (!strcmp(o, "--odid"))
			cfg.odid = (uint32_t)v;
		else if (!strcmp(o, "--flush-ms"))
			cfg.flush_ms = (uint32_t)v;
		else if (!strcmp(o, "--rate"))
			rate = v;
		else if (!strcmp(o, "--pause-after"))
			pause_after = v;
		else if (!strcmp(o, "--pause-ms"))
			pause_ms = v;
		else if (!strcmp(o, "--close-ms"))
			close_ms = (int)v;
		else {
			fprintf(stderr, "ipfix_export: unknown option %s\n", o);
			return 2;
		}
	}
	if (argc - i < 2) {
		fprintf(stderr, "usage: ipfix_export [options] TRUTH.csv URL...\n");
		return 2;
	}
	FILE *f = fopen(argv[i], "r");
	if (!f) {
		perror(argv[i]);
		return 2;
	}
	struct line *L = NULL;
	size_t n = 0, cap = 0, ln = 0;
	char buf[512];
	while (fgets(buf, sizeof(buf), f)) {
		if (ln++ == 0 || buf[0] == '#')
			continue;
		buf[strcspn(buf, "\r\n")] = 0;
		if (n == cap) {
			cap = cap ? cap * 2 : 1024;
			struct line *nl = realloc(L, cap * sizeof(*L));
			if (!nl)
				return 2;
			L = nl;
		}
		if (parse_line(buf, &L[n])) {
			fprintf(stderr, "ipfix_export: %s:%zu: not a truth line\n", argv[i], ln);
			free(L);
			fclose(f);
			return 2;
		}
		n++;
	}
	fclose(f);
	if (n)
		qsort(L, n, sizeof(*L), canon_cmp);

	struct secho_ipfix *x;
	if (secho_ipfix_new(&x, &cfg)) {
		fprintf(stderr, "ipfix_export: bad configuration\n");
		return 2;
	}
	char err[256];
	for (int u = i + 1; u < argc; u++) {
		if (secho_ipfix_add_collector(x, argv[u], err, sizeof(err))) {
			fprintf(stderr, "ipfix_export: %s\n", err);
			return 2;
		}
	}
	uint64_t sent = 0, t_start = secho_real_ns(), observed = 0;
	struct secho_ipfix_stats st;
	for (size_t a = 0; a < n; a++) {
		if (L[a].used)
			continue;
		struct secho_flow_rec r = {
		        .key = L[a].k, .fwd = L[a].d, .end_reason = end_of(&L[a])};
		if (cfg.biflow) {
			for (size_t b = a + 1; b < n && b < a + 8; b++) {
				if (!L[b].used && is_reverse(&L[a].k, &L[b].k) &&
				    L[b].d.first_ns > L[a].d.first_ns &&
				    L[b].d.first_ns <= L[a].d.last_ns + 30000000000ull) {
					r.rev = L[b].d;
					L[b].used = 1;
					if (end_of(&L[b]) == SECHO_FLOW_END_EOF)
						r.end_reason = SECHO_FLOW_END_EOF;
					break;
				}
			}
		}
		L[a].used = 1;
		observed++;
		struct secho_ipfix_meter_stats ms = {.observed_flows = observed};
		secho_ipfix_set_meter_stats(x, &ms);
		if (rate) {
			uint64_t due = t_start + sent * 1000000000u / rate;
			while (secho_real_ns() < due) {
				struct timespec sl = {0, 1000000};
				nanosleep(&sl, NULL);
				secho_ipfix_tick(x, secho_real_ns(), NULL);
			}
		}
		if (secho_ipfix_record(x, &r, secho_real_ns())) {
			fprintf(stderr, "ipfix_export: record refused\n");
			return 1;
		}
		sent++;
		if ((sent & 63) == 0)
			secho_ipfix_tick(x, secho_real_ns(), NULL);
		if (pause_after && sent == pause_after) {
			/* Everything out and acknowledged, then tell the test and wait. */
			uint64_t t0 = secho_real_ns();
			for (;;) {
				secho_ipfix_tick(x, secho_real_ns(), &st);
				int busy = 0;
				for (unsigned c = 0; c < st.ncollectors; c++)
					busy |= st.c[c].queued_bytes != 0;
				if (!busy || secho_real_ns() - t0 > 5000000000ull)
					break;
				struct timespec sl = {0, 2000000};
				nanosleep(&sl, NULL);
			}
			printf("paused\n");
			fflush(stdout);
			t0 = secho_real_ns();
			while (secho_real_ns() - t0 < pause_ms * 1000000u) {
				secho_ipfix_tick(x, secho_real_ns(), NULL);
				struct timespec sl = {0, 5000000};
				nanosleep(&sl, NULL);
			}
		}
	}
	/* Let a part-filled message leave and timers run once more before closing. */
	secho_ipfix_tick(x, secho_real_ns(), NULL);
	int rc = secho_ipfix_close(x, secho_real_ns(), &st, close_ms);
	for (unsigned c = 0; c < st.ncollectors; c++) {
		const struct secho_ipfix_collector_stats *s = &st.c[c];
		printf("collector %s", s->url);
#define X(nm, h) printf(" %s=%" PRIu64, #nm, s->nm);
		SECHO_IPFIX_COUNTERS(X)
#undef X
		printf("\n");
	}
	printf("exported %" PRIu64 " records from %zu lines\n", sent, n);
	free(L);
	return rc ? 1 : 0;
}
