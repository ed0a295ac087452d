/*
 * src/traffic/gen_csv.c - FlowTest ft-generator profiles (CESNET/FlowTest, BSD-3; format in
 * its tools/ft-generator/README.md): one biflow per row.
 *
 *   header: the column names in any order, each once: START_TIME, END_TIME, L3_PROTO,
 *           L4_PROTO, SRC_PORT, DST_PORT, PACKETS, BYTES, PACKETS_REV, BYTES_REV, and
 *           optionally SRC_IP, DST_IP
 *   rows:   times in ms relative to the profile's time zero (negative for flows that began
 *           before it; a fraction of a ms is accepted, as ft-generator's reports write it),
 *           L3_PROTO 4 or 6, L4_PROTO an IANA protocol number, ports (empty = 0; ignored
 *           for protocols without ports), forward and reverse packets and bytes (IP total
 *           lengths), addresses (empty = generated)
 *   lines starting with '#' and empty lines are skipped; spaces around fields are ignored.
 *
 * The first bad line stops the read with "NAME:LINE: what is wrong". Contract: gen.h.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "traffic/gen.h"

enum {
	C_START,
	C_END,
	C_L3,
	C_L4,
	C_SPORT,
	C_DPORT,
	C_PKTS,
	C_BYTES,
	C_PKTS_REV,
	C_BYTES_REV,
	C_SRC_IP,
	C_DST_IP,
	C_COUNT,
	C_REQUIRED = C_SRC_IP
};

static const char *const col_names[C_COUNT] = {
        "START_TIME", "END_TIME", "L3_PROTO",    "L4_PROTO",  "SRC_PORT", "DST_PORT",
        "PACKETS",    "BYTES",    "PACKETS_REV", "BYTES_REV", "SRC_IP",   "DST_IP",
};

#define MAX_FIELDS 32

static char *trim(char *s)
{
	while (*s && isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
	return s;
}

/* Split s in place at commas into at most max fields (trimmed). Returns the count, or
 * max + 1 when there are more. */
static int split(char *s, char **f, int max)
{
	int n = 0;
	for (;;) {
		char *c = strchr(s, ',');
		if (c)
			*c = 0;
		if (n == max)
			return max + 1;
		f[n++] = trim(s);
		if (!c)
			return n;
		s = c + 1;
	}
}

static bool parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		unsigned d = (unsigned)(*s - '0');
		if (v > (max - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

/* Milliseconds, optionally negative, with up to three decimals: to microseconds. */
static bool parse_ms(const char *s, int64_t *us)
{
	bool neg = *s == '-';
	if (neg || *s == '+')
		s++;
	char ip[24];
	const char *dot = strchr(s, '.');
	size_t il = dot ? (size_t)(dot - s) : strlen(s);
	if (il == 0 || il >= 16)
		return false;
	memcpy(ip, s, il);
	ip[il] = 0;
	uint64_t ms, frac = 0;
	if (!parse_u64(ip, 999999999999999ull, &ms))
		return false;
	if (dot) {
		const char *d = dot + 1;
		size_t dl = strlen(d);
		if (dl == 0 || dl > 9)
			return false;
		uint64_t v;
		if (!parse_u64(d, UINT64_MAX, &v))
			return false;
		/* Keep microseconds: scale the fraction to 3 digits (truncating). */
		for (size_t i = dl; i < 3; i++)
			v *= 10;
		for (size_t i = 3; i < dl; i++)
			v /= 10;
		frac = v;
	}
	int64_t v = (int64_t)(ms * 1000 + frac);
	*us = neg ? -v : v;
	return true;
}

/* Protocol numbers that are IPv6 extension headers (RFC 8200, IANA): a meter walks them,
 * so they cannot be the upper-layer protocol of a flow. */
static bool is_ext_header(uint64_t p)
{
	return p == 0 || p == 43 || p == 44 || p == 51 || p == 60 || p == 135 || p == 139 ||
	       p == 140;
}

static int row_cmp(const void *a, const void *b)
{
	const struct secho_gen_csv_row *x = a, *y = b;
	if (x->start_us != y->start_us)
		return x->start_us < y->start_us ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

#define BAD(...)                                                                                   \
	do {                                                                                       \
		int o_ = snprintf(err, errlen, "%s:%u: ", name, lineno);                           \
		if (o_ >= 0 && (size_t)o_ < errlen)                                                \
			snprintf(err + o_, errlen - (size_t)o_, __VA_ARGS__);                      \
		rc = -EINVAL;                                                                      \
		goto out;                                                                          \
	} while (0)

int secho_gen_csv_read(FILE *f, const char *name, struct secho_gen_csv_row **rows, size_t *nrows,
                       char *err, size_t errlen)
{
	char *line = NULL, *fld[MAX_FIELDS + 1];
	size_t cap = 0, n = 0, rcap = 0;
	struct secho_gen_csv_row *r = NULL;
	int col[C_COUNT], ncols = 0, rc = 0;
	unsigned lineno = 0;
	bool have_header = false;
	ssize_t got;

	*rows = NULL;
	*nrows = 0;
	for (int i = 0; i < C_COUNT; i++)
		col[i] = -1;
	while ((got = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (memchr(line, 0, (size_t)got))
			BAD("a NUL byte (not a text file)");
		char *s = trim(line);
		if (!*s || *s == '#')
			continue;
		int nf = split(s, fld, MAX_FIELDS);
		if (!have_header) {
			if (nf > C_COUNT)
				BAD("header has %d columns, at most %d are known", nf, C_COUNT);
			for (int i = 0; i < nf; i++) {
				int c = -1;
				for (int j = 0; j < C_COUNT; j++)
					if (!strcmp(fld[i], col_names[j]))
						c = j;
				if (c < 0)
					BAD("unknown column '%s' in the header", fld[i]);
				if (col[c] >= 0)
					BAD("column %s appears twice in the header", fld[i]);
				col[c] = i;
			}
			for (int j = 0; j < C_REQUIRED; j++)
				if (col[j] < 0)
					BAD("column %s missing from the header", col_names[j]);
			ncols = nf;
			have_header = true;
			continue;
		}
		if (nf != ncols)
			/* split() counts up to MAX_FIELDS + 1: only then is the count a floor */
			BAD("%s%d fields, the header has %d", nf > MAX_FIELDS ? "more than " : "",
			    nf > MAX_FIELDS ? MAX_FIELDS : nf, ncols);
		struct secho_gen_csv_row w;
		memset(&w, 0, sizeof(w));
		w.line = lineno;
		uint64_t v;
		if (!parse_ms(fld[col[C_START]], &w.start_us))
			BAD("START_TIME '%s' is not a time in milliseconds", fld[col[C_START]]);
		if (!parse_ms(fld[col[C_END]], &w.end_us))
			BAD("END_TIME '%s' is not a time in milliseconds", fld[col[C_END]]);
		if (w.end_us < w.start_us)
			BAD("END_TIME %s is before START_TIME %s", fld[col[C_END]],
			    fld[col[C_START]]);
		if (!parse_u64(fld[col[C_L3]], 255, &v) || (v != 4 && v != 6))
			BAD("L3_PROTO '%s' is neither 4 nor 6", fld[col[C_L3]]);
		w.ip_version = (uint8_t)v;
		if (!parse_u64(fld[col[C_L4]], 255, &v))
			BAD("L4_PROTO '%s' is not a protocol number (0-255)", fld[col[C_L4]]);
		if (is_ext_header(v))
			BAD("L4_PROTO %s is an IPv6 extension header, not an upper-layer protocol",
			    fld[col[C_L4]]);
		if ((v == 1 && w.ip_version == 6) || (v == 58 && w.ip_version == 4))
			BAD("L4_PROTO %s (%s) does not go with L3_PROTO %u", fld[col[C_L4]],
			    v == 1 ? "ICMP" : "ICMPv6", w.ip_version);
		w.proto = (uint8_t)v;
		const char *ps = fld[col[C_SPORT]], *pd = fld[col[C_DPORT]];
		if (*ps && !parse_u64(ps, 65535, &v))
			BAD("SRC_PORT '%s' is not a port (0-65535)", ps);
		w.sport = *ps ? (uint16_t)v : 0;
		if (*pd && !parse_u64(pd, 65535, &v))
			BAD("DST_PORT '%s' is not a port (0-65535)", pd);
		w.dport = *pd ? (uint16_t)v : 0;
		/* At most 10^12 packets a direction: beyond is no profile, and sums stay far
		 * from 64-bit overflow. */
		static const uint64_t MAXP = 1000000000000ull;
		if (!parse_u64(fld[col[C_PKTS]], MAXP, &w.packets))
			BAD("PACKETS '%s' is not a count (0-10^12)", fld[col[C_PKTS]]);
		if (!w.packets)
			BAD("PACKETS is 0: a flow's forward direction has its first packet");
		if (!parse_u64(fld[col[C_BYTES]], MAXP * 10000, &w.bytes))
			BAD("BYTES '%s' is not a count", fld[col[C_BYTES]]);
		if (!parse_u64(fld[col[C_PKTS_REV]], MAXP, &w.packets_rev))
			BAD("PACKETS_REV '%s' is not a count (0-10^12)", fld[col[C_PKTS_REV]]);
		if (!parse_u64(fld[col[C_BYTES_REV]], MAXP * 10000, &w.bytes_rev))
			BAD("BYTES_REV '%s' is not a count", fld[col[C_BYTES_REV]]);
		if (!w.packets_rev && w.bytes_rev)
			BAD("BYTES_REV is %s but PACKETS_REV is 0", fld[col[C_BYTES_REV]]);
		for (int a = 0; a < 2; a++) {
			int ci = col[a ? C_DST_IP : C_SRC_IP];
			if (ci < 0 || !*fld[ci])
				continue;
			uint8_t *dst = a ? w.dst : w.src;
			int fam = w.ip_version == 4 ? AF_INET : AF_INET6;
			if (inet_pton(fam, fld[ci], dst) != 1)
				BAD("%s '%s' is not an IPv%u address", a ? "DST_IP" : "SRC_IP",
				    fld[ci], w.ip_version);
			if (a)
				w.has_dst = 1;
			else
				w.has_src = 1;
		}
		if (n == rcap) {
			size_t nc = rcap ? rcap * 2 : 256;
			struct secho_gen_csv_row *nr = realloc(r, nc * sizeof(*nr));
			if (!nr) {
				snprintf(err, errlen, "%s: out of memory at line %u", name, lineno);
				rc = -ENOMEM;
				goto out;
			}
			r = nr;
			rcap = nc;
		}
		r[n++] = w;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "%s: read error after line %u", name, lineno);
		rc = -EIO;
		goto out;
	}
	if (!have_header) {
		snprintf(err, errlen, "%s: no header line (START_TIME,END_TIME,...)", name);
		rc = -EINVAL;
		goto out;
	}
	if (!n) {
		snprintf(err, errlen, "%s: no flow rows after the header", name);
		rc = -EINVAL;
		goto out;
	}
	qsort(r, n, sizeof(*r), row_cmp);
	int64_t base = r[0].start_us;
	for (size_t i = 0; i < n; i++) {
		r[i].start_us -= base;
		r[i].end_us -= base;
	}
	*rows = r;
	*nrows = n;
	r = NULL;
out:
	free(line);
	free(r);
	return rc;
}
