/*
 * tests/unit/test_capfile.c - capture files read in place (include/secho/capfile.h): pcap
 * with microsecond and nanosecond timestamps in both byte orders, pcapng in both byte
 * orders with several sections and interfaces (if_tsresol in powers of 10 and of 2,
 * if_tsoffset, a Linux cooked v2 interface skipped, Linux cooked v1 read as Ethernet, simple packet
 * blocks, blocks to skip), snap lengths, and every way a file can be cut or lie about a length
 * (each one ends the reading with an error that says where, after the records before it), a
 * file that shrinks while it is read (the reading ends with an error), how long records stay
 * (pinned runs through the two buffers, clones with their own). The same records are also
 * checked against libpcap's reading of the same pcap files.
 */
#include "harness.h"

#include <errno.h>
#include <pcap/pcap.h>
#include <secho/capfile.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct buf {
	uint8_t *p;
	size_t n, cap;
	int swap; /* write multi-byte values in the other byte order */
};

static void put(struct buf *b, const void *p, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 1024;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			abort();
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

static void u16(struct buf *b, uint16_t v)
{
	if (b->swap)
		v = __builtin_bswap16(v);
	put(b, &v, 2);
}

static void u32(struct buf *b, uint32_t v)
{
	if (b->swap)
		v = __builtin_bswap32(v);
	put(b, &v, 4);
}

static void u64(struct buf *b, uint64_t v)
{
	if (b->swap)
		v = __builtin_bswap64(v);
	put(b, &v, 8);
}

static void pad4(struct buf *b)
{
	static const uint8_t z[4];
	put(b, z, (4 - b->n % 4) % 4);
}

/* The frames of every test file: frame i has i + 20 bytes, byte j = i + j. */
#define NFR 20
static void frame(unsigned i, uint8_t *f, size_t *len)
{
	*len = i + 20;
	for (size_t j = 0; j < *len; j++)
		f[j] = (uint8_t)(i + j);
}

static const uint64_t T0 = 1767225600ull * 1000000000ull;

static char *write_tmp(const struct buf *b)
{
	static char path[64];
	snprintf(path, sizeof(path), "/tmp/secho-capfile-XXXXXX");
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, b->p, b->n) != (ssize_t)b->n)
		abort();
	close(fd);
	return path;
}

/* pcap: nanos or micros, swapped or not, snap: caplen at most this (len stays) */
static void make_pcap(struct buf *b, int nanos, int swap, uint32_t snap)
{
	memset(b, 0, sizeof(*b));
	b->swap = swap;
	u32(b, nanos ? 0xa1b23c4d : 0xa1b2c3d4);
	u16(b, 2);
	u16(b, 4);
	u32(b, 0);
	u32(b, 0);
	u32(b, snap);
	u32(b, 1);
	for (unsigned i = 0; i < NFR; i++) {
		uint8_t f[64];
		size_t len;
		frame(i, f, &len);
		uint32_t cap = len < snap ? (uint32_t)len : snap;
		uint64_t t = T0 + i * 1001000ull + (nanos ? i : 0); /* ns when nanos */
		u32(b, (uint32_t)(t / 1000000000ull));
		u32(b, (uint32_t)(nanos ? t % 1000000000ull : t % 1000000000ull / 1000));
		u32(b, cap);
		u32(b, (uint32_t)len);
		put(b, f, cap);
	}
}

static void ng_block(struct buf *b, uint32_t type, const struct buf *body)
{
	uint32_t tot = (uint32_t)(12 + ((body->n + 3) & ~(size_t)3));
	u32(b, type);
	u32(b, tot);
	put(b, body->p, body->n);
	pad4(b);
	u32(b, tot);
}

static void ng_shb(struct buf *b)
{
	struct buf s = {.swap = b->swap};
	u32(&s, 0x1a2b3c4d);
	u16(&s, 1);
	u16(&s, 0);
	u64(&s, ~0ull);
	ng_block(b, 0x0a0d0d0a, &s);
	free(s.p);
}

/* resol: if_tsresol byte (0 = leave the option out: microseconds); off: if_tsoffset */
static void ng_idb(struct buf *b, uint16_t linktype, uint8_t resol, int64_t off)
{
	struct buf s = {.swap = b->swap};
	u16(&s, linktype);
	u16(&s, 0);
	u32(&s, 0);
	if (resol) {
		u16(&s, 9);
		u16(&s, 1);
		put(&s, &resol, 1);
		pad4(&s);
	}
	if (off) {
		u16(&s, 14);
		u16(&s, 8);
		u64(&s, (uint64_t)off);
	}
	u16(&s, 0);
	u16(&s, 0);
	ng_block(b, 1, &s);
	free(s.p);
}

static void ng_epb(struct buf *b, uint32_t ifid, uint64_t ts, const uint8_t *f, uint32_t cap,
                   uint32_t len)
{
	struct buf s = {.swap = b->swap};
	u32(&s, ifid);
	u32(&s, (uint32_t)(ts >> 32));
	u32(&s, (uint32_t)ts);
	u32(&s, cap);
	u32(&s, len);
	put(&s, f, cap);
	pad4(&s);
	ng_block(b, 6, &s);
	free(s.p);
}

/* Two sections: the first with an Ethernet interface in ns (resol 9) and a Linux cooked
 * v2 one (skipped); the second (same byte order) with an interface in 2^-20 s units and an offset
 * of one day, then a simple packet block and a name resolution block to skip. */
static void make_ng(struct buf *b, int swap, uint64_t want_ts[NFR])
{
	memset(b, 0, sizeof(*b));
	b->swap = swap;
	ng_shb(b);
	ng_idb(b, 1, 9, 0);
	ng_idb(b, 276, 0, 0); /* Linux cooked v2: not read */
	unsigned i = 0;
	for (; i < 10; i++) {
		uint8_t f[64];
		size_t len;
		frame(i, f, &len);
		uint64_t t = T0 + i * 1000003ull;
		ng_epb(b, 0, t, f, (uint32_t)len, (uint32_t)len + 100);
		want_ts[i] = t;
		ng_epb(b, 1, t, f, (uint32_t)len, (uint32_t)len); /* cooked v2: skipped */
	}
	ng_shb(b);
	ng_idb(b, 1, 0x80 | 20, -86400);
	struct buf nrb = {.swap = swap};
	u16(&nrb, 0);
	u16(&nrb, 0);
	ng_block(b, 4, &nrb);
	free(nrb.p);
	for (; i < NFR - 1; i++) {
		uint8_t f[64];
		size_t len;
		frame(i, f, &len);
		/* a day after T0 in the interface's units: the offset brings it back */
		uint64_t sec = T0 / 1000000000ull + 86400 + i * 3 + 1;
		uint64_t units = sec << 20 | (uint64_t)(i * 12345);
		ng_epb(b, 0, units, f, (uint32_t)len, (uint32_t)len);
		uint64_t frac_ns = ((uint64_t)(i * 12345) * 1000000000ull) >> 20;
		want_ts[i] = (sec - 86400) * 1000000000ull + frac_ns;
	}
	/* the last frame as a simple packet block: the previous record's time */
	uint8_t f[64];
	size_t len;
	frame(i, f, &len);
	struct buf s = {.swap = swap};
	u32(&s, (uint32_t)len);
	put(&s, f, len);
	pad4(&s);
	ng_block(b, 3, &s);
	free(s.p);
	want_ts[i] = want_ts[i - 1];
}

/* Read path; check every record against frame(i); ts from want (NULL: the pcap rule). */
static unsigned read_all(const char *path, const uint64_t *want, int nanos, uint32_t snap,
                         uint32_t extra_len, const char *what)
{
	struct secho_capfile c;
	char err[256];
	unsigned i = 0;
	if (!T_CHECK(secho_capfile_open(&c, path, err, sizeof(err)) == 0, "%s: open: %s", what,
	             err))
		return 0;
	struct secho_cap_rec r;
	while (secho_capfile_next(&c, &r) == 1) {
		uint8_t f[64];
		size_t len;
		frame(i, f, &len);
		uint32_t cap = len < snap ? (uint32_t)len : snap;
		uint64_t t = want ? want[i] : T0 + i * 1001000ull + (nanos ? i : 0);
		T_CHECK(r.caplen == cap && r.wirelen == len + extra_len && !memcmp(r.data, f, cap),
		        "%s: record %u bytes (%u/%u)", what, i, r.caplen, r.wirelen);
		T_CHECK(r.ts_ns == t, "%s: record %u time %llu want %llu", what, i,
		        (unsigned long long)r.ts_ns, (unsigned long long)t);
		i++;
	}
	T_CHECK(secho_capfile_error(&c) == NULL, "%s: error %s", what, secho_capfile_error(&c));
	T_CHECK(secho_capfile_progress(&c) == 1.0, "%s: all of it read", what);
	secho_capfile_close(&c);
	return i;
}

static void test_pcap(void)
{
	struct buf b;
	t_begin("capfile: pcap, microseconds and nanoseconds, both byte orders, snap length; "
	        "the same as libpcap reads");
	for (int nanos = 0; nanos < 2; nanos++)
		for (int swap = 0; swap < 2; swap++)
			for (int snapped = 0; snapped < 2; snapped++) {
				uint32_t snap = snapped ? 25 : 65535;
				make_pcap(&b, nanos, swap, snap);
				char *path = write_tmp(&b);
				char what[64];
				snprintf(what, sizeof(what), "pcap nanos %d swap %d snap %u", nanos,
				         swap, snap);
				T_CHECK(read_all(path, NULL, nanos, snap, 0, what) == NFR,
				        "%s: %d records", what, NFR);
				/* libpcap: the same records and times */
				char eb[PCAP_ERRBUF_SIZE];
				pcap_t *p = pcap_open_offline_with_tstamp_precision(
				        path, PCAP_TSTAMP_PRECISION_NANO, eb);
				struct secho_capfile c;
				char err[256];
				if (T_CHECK(p && !secho_capfile_open(&c, path, err, sizeof(err)),
				            "open")) {
					struct pcap_pkthdr *h;
					const u_char *d;
					struct secho_cap_rec r;
					while (pcap_next_ex(p, &h, &d) == 1) {
						T_CHECK(secho_capfile_next(&c, &r) == 1 &&
						                r.caplen == h->caplen &&
						                r.wirelen == h->len &&
						                !memcmp(r.data, d, r.caplen) &&
						                r.ts_ns ==
						                        (uint64_t)h->ts.tv_sec *
						                                        1000000000ull +
						                                (uint64_t)h->ts
						                                        .tv_usec,
						        "%s: as libpcap", what);
					}
					T_CHECK(secho_capfile_next(&c, &r) == 0, "%s: same end",
					        what);
					secho_capfile_close(&c);
				}
				if (p)
					pcap_close(p);
				unlink(path);
				free(b.p);
			}
	t_end();
}

static void test_pcapng(void)
{
	struct buf b;
	uint64_t want[NFR];
	t_begin("capfile: pcapng, two sections, ns and 2^-20 s units, an offset, a cooked "
	        "interface skipped, simple packet block, both byte orders");
	for (int swap = 0; swap < 2; swap++) {
		make_ng(&b, swap, want);
		char *path = write_tmp(&b);
		char what[32];
		snprintf(what, sizeof(what), "pcapng swap %d", swap);
		struct secho_capfile c;
		char err[256];
		unsigned n = 0;
		if (T_CHECK(secho_capfile_open(&c, path, err, sizeof(err)) == 0, "open: %s", err)) {
			struct secho_cap_rec r;
			while (secho_capfile_next(&c, &r) == 1) {
				uint8_t f[64];
				size_t len;
				frame(n, f, &len);
				uint32_t wl = n < 10 ? (uint32_t)len + 100 : (uint32_t)len;
				T_CHECK(r.caplen == len && r.wirelen == wl &&
				                !memcmp(r.data, f, len),
				        "%s: record %u", what, n);
				T_CHECK(r.ts_ns == want[n], "%s: record %u time %llu want %llu",
				        what, n, (unsigned long long)r.ts_ns,
				        (unsigned long long)want[n]);
				n++;
			}
			T_CHECK(!secho_capfile_error(&c), "%s: %s", what, secho_capfile_error(&c));
			T_CHECK(c.skipped == 10, "%s: 10 cooked records skipped (%llu)", what,
			        (unsigned long long)c.skipped);
			secho_capfile_close(&c);
		}
		T_CHECK(n == NFR, "%s: %u records", what, n);
		unlink(path);
		free(b.p);
	}
	t_end();
}

/* Offsets where a record or block ends in a file we made (not swapped). */
static unsigned boundaries(const struct buf *b, int ng, size_t *at, unsigned max)
{
	unsigned n = 0;
	size_t pos = ng ? 0 : 24;
	at[n++] = pos;
	while (pos < b->n && n < max) {
		uint32_t len;
		if (ng) {
			memcpy(&len, b->p + pos + 4, 4);
			pos += len;
		} else {
			memcpy(&len, b->p + pos + 8, 4);
			pos += 16 + len;
		}
		at[n++] = pos;
	}
	return n;
}

/* The file cut at every byte: open fails (the header is cut) or reading stops, cleanly
 * when the cut falls between records or blocks, else with an error that says where. */
static void test_cuts(void)
{
	struct buf b;
	uint64_t want[NFR];
	size_t at[128];

	t_begin("capfile: files cut at every byte, lengths that lie: an error that says where");
	for (int ng = 0; ng < 2; ng++) {
		if (ng)
			make_ng(&b, 0, want);
		else
			make_pcap(&b, 0, 0, 65535);
		unsigned nat = boundaries(&b, ng, at, 128);
		size_t full = b.n;
		for (size_t cut = 0; cut < full; cut += 1) {
			b.n = cut;
			char *path = write_tmp(&b);
			struct secho_capfile c;
			char err[256];
			int r = secho_capfile_open(&c, path, err, sizeof(err));
			bool clean = false;
			for (unsigned i = 0; i < nat; i++)
				clean |= at[i] == cut;
			if (cut < 24) {
				T_CHECK(r < 0 && *err, "%s cut %zu: open refuses",
				        ng ? "ng" : "pcap", cut);
			} else if (ng && cut < 28) {
				T_CHECK(r < 0, "ng cut %zu: the section header is cut", cut);
			} else if (T_CHECK(r == 0, "%s cut %zu opens: %s", ng ? "ng" : "pcap", cut,
			                   err)) {
				struct secho_cap_rec rec;
				unsigned n = 0;
				while (secho_capfile_next(&c, &rec) == 1)
					n++;
				const char *e = secho_capfile_error(&c);
				T_CHECK(n <= NFR && clean == !e,
				        "%s cut %zu: %u records, error '%s'", ng ? "ng" : "pcap",
				        cut, n, e ? e : "");
				if (e)
					T_CHECK(strstr(e, "byte") != NULL, "error says where: %s",
					        e);
				secho_capfile_close(&c);
			}
			unlink(path);
		}
		b.n = full;
		free(b.p);
	}
	/* a record that claims more than the file has, and more than 256 KiB */
	make_pcap(&b, 0, 0, 65535);
	uint32_t big = 300000;
	memcpy(b.p + 24 + 8, &big, 4);
	char *path = write_tmp(&b);
	struct secho_capfile c;
	char err[256];
	struct secho_cap_rec rec;
	T_CHECK(secho_capfile_open(&c, path, err, sizeof(err)) == 0 &&
	                secho_capfile_next(&c, &rec) == 0 && secho_capfile_error(&c) &&
	                strstr(secho_capfile_error(&c), "256 KiB"),
	        "a 300000-byte record is refused");
	secho_capfile_close(&c);
	unlink(path);
	uint32_t lie = 60000;
	memcpy(b.p + 24 + 8, &lie, 4);
	path = write_tmp(&b);
	T_CHECK(secho_capfile_open(&c, path, err, sizeof(err)) == 0 &&
	                secho_capfile_next(&c, &rec) == 0 && secho_capfile_error(&c) &&
	                strstr(secho_capfile_error(&c), "truncated record at byte 24"),
	        "a record longer than the file: %s",
	        secho_capfile_error(&c) ? secho_capfile_error(&c) : "");
	secho_capfile_close(&c);
	unlink(path);
	/* not a capture, a cooked pcap, a directory, a missing file */
	memcpy(b.p, "GIF8", 4);
	path = write_tmp(&b);
	T_CHECK(secho_capfile_open(&c, path, err, sizeof(err)) < 0 && strstr(err, "not a pcap"),
	        "not a capture: %s", err);
	unlink(path);
	free(b.p);
	make_pcap(&b, 0, 0, 65535);
	uint32_t cooked = 276;
	memcpy(b.p + 20, &cooked, 4);
	path = write_tmp(&b);
	T_CHECK(secho_capfile_open(&c, path, err, sizeof(err)) < 0 && strstr(err, "link type 276"),
	        "cooked v2: %s", err);
	unlink(path);
	free(b.p);
	T_CHECK(secho_capfile_open(&c, "/tmp", err, sizeof(err)) < 0 && strstr(err, "regular"),
	        "directory: %s", err);
	T_CHECK(secho_capfile_open(&c, "/nonexistent/x.pcap", err, sizeof(err)) < 0 &&
	                strstr(err, "No such file"),
	        "missing: %s", err);
	t_end();
}

static void test_clone(void)
{
	struct buf b;
	t_begin("capfile: clones walk the same file independently");
	make_pcap(&b, 1, 0, 65535);
	char *path = write_tmp(&b);
	struct secho_capfile c, d;
	char err[256];
	if (T_CHECK(secho_capfile_open(&c, path, err, sizeof(err)) == 0, "open")) {
		T_CHECK(secho_capfile_clone(&c, &d) == 0 && d.buf[0] && d.buf[0] != c.buf[0],
		        "a clone with buffers of its own");
		struct secho_cap_rec r1, r2;
		unsigned n = 0;
		while (secho_capfile_next(&d, &r2) == 1)
			n++;
		T_CHECK(n == NFR && secho_capfile_next(&c, &r1) == 1 && r1.caplen == 20,
		        "the clone read everything, the original is still at its start");
		secho_capfile_close(&d); /* not the owner: the file stays open */
		T_CHECK(secho_capfile_next(&c, &r1) == 1 && r1.data[0] == 1,
		        "the original reads on");
		secho_capfile_close(&c);
	}
	unlink(path);
	free(b.p);
	t_end();
}

/* Record i of the pin test: FR bytes of (i & 0xff), its first four bytes i. */
static bool pin_rec_ok(const struct secho_cap_rec *r, uint32_t i, uint32_t fr)
{
	uint32_t v;
	memcpy(&v, r->data, 4);
	return r->caplen == fr && v == i && r->data[4] == (uint8_t)i &&
	       r->data[fr - 1] == (uint8_t)i;
}

/* How long records stay: 64 MiB of 4 KiB frames (256 fills, 16 times a buffer). Pinned runs read
 * until the reader pauses: every run holds records, every record of a run is intact at its end,
 * none is lost or repeated between runs; unpinned, a record is intact after the next call;
 * the original and a clone read in turns, each its own way. */
static void test_pin(void)
{
	enum { FR = 4080, NREC = 16384 };
	struct buf b;
	t_begin("capfile: pinned runs keep their records, the reader pauses between them");
	memset(&b, 0, sizeof(b));
	u32(&b, 0xa1b2c3d4);
	u16(&b, 2);
	u16(&b, 4);
	u32(&b, 0);
	u32(&b, 0);
	u32(&b, 65535);
	u32(&b, 1);
	static uint8_t f[FR];
	for (uint32_t i = 0; i < NREC; i++) {
		memset(f, (int)(i & 0xff), sizeof(f));
		memcpy(f, &i, 4);
		u32(&b, 1767225600u + i);
		u32(&b, 0);
		u32(&b, FR);
		u32(&b, FR);
		put(&b, f, FR);
	}
	char *path = write_tmp(&b);
	free(b.p);
	struct secho_capfile c, d;
	char err[256];
	if (T_CHECK(secho_capfile_open(&c, path, err, sizeof(err)) == 0, "open: %s", err)) {
		static struct secho_cap_rec run[NREC];
		uint32_t next = 0, runs = 0, bad = 0, empty = 0, longest = 0;
		for (;;) {
			uint32_t n = 0;
			int rc;
			secho_capfile_pin(&c);
			while ((rc = secho_capfile_next(&c, &run[n])) == 1)
				n++;
			if (!n && rc == 0)
				break;
			empty += !n;
			for (uint32_t k = 0; k < n; k++)
				bad += !pin_rec_ok(&run[k], next + k, FR);
			next += n;
			runs++;
			longest = n > longest ? n : longest;
			if (rc == 0 || runs > NREC)
				break;
		}
		T_CHECK(next == NREC && !bad && !empty && !secho_capfile_error(&c),
		        "pinned: %u records in %u runs, %u damaged, %u empty runs", next, runs, bad,
		        empty);
		/* a run ends when the next record needs the buffer its first ones are in: at
		 * most two fills' worth is kept, and at least about one */
		uint64_t total = (uint64_t)NREC * (FR + 16);
		T_CHECK(runs >= total / (2 * SECHO_CAP_FILL) &&
		                runs <= total / SECHO_CAP_FILL + 2 &&
		                longest <= 2 * SECHO_CAP_FILL / (FR + 16),
		        "%u runs, the longest %u records", runs, longest);
		secho_capfile_close(&c);
	}
	if (T_CHECK(secho_capfile_open(&c, path, err, sizeof(err)) == 0, "open: %s", err) &&
	    T_CHECK(secho_capfile_clone(&c, &d) == 0, "clone")) {
		struct secho_cap_rec prev, r, rd;
		uint32_t n = 0, bad = 0, nd = 0;
		while (secho_capfile_next(&c, &r) == 1) {
			if (n && !pin_rec_ok(&prev, n - 1, FR))
				bad++; /* the previous record after the next call */
			if (!pin_rec_ok(&r, n, FR))
				bad++;
			prev = r;
			n++;
			if ((n & 1) &&
			    secho_capfile_next(&d, &rd) == 1) /* the clone, half as fast */
				bad += !pin_rec_ok(&rd, nd++, FR);
		}
		while (secho_capfile_next(&d, &rd) == 1)
			bad += !pin_rec_ok(&rd, nd++, FR);
		T_CHECK(n == NREC && nd == NREC && !bad, "unpinned: %u and %u records, %u damaged",
		        n, nd, bad);
		secho_capfile_close(&d);
		secho_capfile_close(&c);
	}
	unlink(path);
	t_end();
}

/* A capture of one interface of link type lt: classic pcap (microseconds, snap length
 * snap) or pcapng (a section and one interface description). */
static void cap_begin(struct buf *b, int ng, uint16_t lt, uint32_t snap)
{
	if (ng) {
		ng_shb(b);
		ng_idb(b, lt, 0, 0);
		return;
	}
	u32(b, 0xa1b2c3d4);
	u16(b, 2);
	u16(b, 4);
	u32(b, 0);
	u32(b, 0);
	u32(b, snap);
	u32(b, lt);
}

/* Record i of such a capture: len bytes of f, whole, at T0 + i us. */
static void cap_rec(struct buf *b, int ng, uint32_t i, const uint8_t *f, uint32_t len)
{
	if (ng) {
		ng_epb(b, 0, T0 / 1000 + i, f, len, len);
		return;
	}
	u32(b, (uint32_t)(T0 / 1000000000ull));
	u32(b, i);
	u32(b, len);
	u32(b, len);
	put(b, f, len);
}

/* Record i of the long-record test: its length (the longest a record may be, a little
 * under and over a fill, and short ones between), its bytes i * 7 + k. */
static uint32_t long_len(uint32_t i)
{
	static const uint32_t l[] = {
	        SECHO_CAP_MAX_RECORD,     60, SECHO_CAP_FILL - 16,   SECHO_CAP_FILL - 15, 1500,
	        SECHO_CAP_MAX_RECORD - 1, 61, SECHO_CAP_FILL / 2 + 3};
	return l[i % (sizeof(l) / sizeof(l[0]))];
}

static bool long_ok(const struct secho_cap_rec *r, uint32_t i)
{
	if (r->caplen != long_len(i))
		return false;
	for (uint32_t k = 0; k < r->caplen; k++)
		if (r->data[k] != (uint8_t)(i * 7 + k))
			return false;
	return true;
}

/* Records as long as a fill and longer (up to SECHO_CAP_MAX_RECORD) are read whole, among
 * short ones, pinned (a run per record at worst) and unpinned, in pcap and pcapng. */
static void test_long(void)
{
	enum { NREC = 40 };
	t_begin("capfile: records longer than a fill are read whole");
	static uint8_t f[SECHO_CAP_MAX_RECORD];
	for (int ng = 0; ng < 2; ng++) {
		struct buf b = {0};
		cap_begin(&b, ng, 1, SECHO_CAP_MAX_RECORD);
		for (uint32_t i = 0; i < NREC; i++) {
			uint32_t len = long_len(i);
			for (uint32_t k = 0; k < len; k++)
				f[k] = (uint8_t)(i * 7 + k);
			cap_rec(&b, ng, i, f, len);
		}
		char *path = write_tmp(&b);
		free(b.p);
		for (int pinned = 0; pinned < 2; pinned++) {
			struct secho_capfile c;
			char err[256];
			if (!T_CHECK(secho_capfile_open(&c, path, err, sizeof(err)) == 0,
			             "open: %s", err))
				continue;
			static struct secho_cap_rec run[NREC];
			uint32_t next = 0, bad = 0, runs = 0;
			int rc = 1;
			while (rc != 0 && runs <= NREC) {
				uint32_t n = 0;
				if (pinned)
					secho_capfile_pin(&c);
				while (n < NREC && (rc = secho_capfile_next(&c, &run[n])) == 1) {
					if (!pinned)
						bad += !long_ok(&run[n], next + n);
					n++;
				}
				for (uint32_t k = 0; pinned && k < n; k++)
					bad += !long_ok(&run[k], next + k);
				next += n;
				runs++;
			}
			T_CHECK(next == NREC && !bad && !secho_capfile_error(&c),
			        "%s, %s: %u records of %u, %u damaged, %u runs (%s)",
			        ng ? "pcapng" : "pcap", pinned ? "pinned" : "unpinned", next, NREC,
			        bad, runs,
			        secho_capfile_error(&c) ? secho_capfile_error(&c) : "no error");
			secho_capfile_close(&c);
		}
		unlink(path);
	}
	t_end();
}

/* A Linux cooked (v1) frame around frame(i): packet type 0, ARPHRD_ETHER, address
 * length 6, the address padded to 8, protocol 0x0800, then frame(i)'s bytes. */
static size_t sll_frame(unsigned i, uint8_t *o)
{
	static const uint8_t h[16] = {0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0, 0x08, 0x00};
	size_t len;
	memcpy(o, h, 16);
	frame(i, o + 16, &len);
	return 16 + len;
}

/* Linux cooked captures (113), as classic pcap and in a pcapng interface: each record is
 * handed out as the Ethernet frame the dissector reads (14 bytes ending with the protocol
 * as the EtherType, then the payload), 2 bytes shorter than the cooked record. */
static void test_cooked(void)
{
	t_begin("capfile: Linux cooked captures read as Ethernet (pcap and pcapng)");
	for (int ng = 0; ng < 2; ng++) {
		struct buf b = {0};
		cap_begin(&b, ng, 113, 65535);
		for (unsigned i = 0; i < NFR; i++) {
			uint8_t f[96];
			uint32_t len = (uint32_t)sll_frame(i, f);
			cap_rec(&b, ng, i, f, len);
		}
		char *path = write_tmp(&b);
		struct secho_capfile c;
		char err[256];
		unsigned n = 0;
		if (T_CHECK(secho_capfile_open(&c, path, err, sizeof(err)) == 0, "open: %s", err)) {
			struct secho_cap_rec r;
			while (secho_capfile_next(&c, &r) == 1) {
				uint8_t f[96];
				size_t len = sll_frame(n, f);
				T_CHECK(r.caplen == len - 2 && r.wirelen == len - 2 &&
				                !memcmp(r.data, f + 2, len - 2) &&
				                r.data[12] == 0x08 && r.data[13] == 0x00,
				        "%s: record %u: caplen %u", ng ? "pcapng" : "pcap", n,
				        r.caplen);
				n++;
			}
			T_CHECK(!secho_capfile_error(&c) && c.skipped == 0, "%s: %s, %llu skipped",
			        ng ? "pcapng" : "pcap",
			        secho_capfile_error(&c) ? secho_capfile_error(&c) : "no error",
			        (unsigned long long)c.skipped);
			secho_capfile_close(&c);
		}
		T_CHECK(n == NFR, "%s: %u records", ng ? "pcapng" : "pcap", n);
		unlink(path);
		free(b.p);
	}
	t_end();
}

/* A file truncated while it is read: the reading ends with an error at the first byte that
 * is gone; the records before it (read into the buffers before the truncation, or after it
 * from what is left) are whole. */
static void test_shrink(void)
{
	enum { N = 40000, LEN = 200 };
	struct buf b = {0};
	t_begin("capfile: a file that shrinks while it is read ends the reading");
	u32(&b, 0xa1b2c3d4);
	u16(&b, 2);
	u16(&b, 4);
	u32(&b, 0);
	u32(&b, 0);
	u32(&b, 65535);
	u32(&b, 1);
	uint8_t f[LEN];
	memset(f, 1, sizeof(f));
	for (unsigned i = 0; i < N; i++) {
		u32(&b, (uint32_t)(T0 / 1000000000ull) + i);
		u32(&b, 0);
		u32(&b, LEN);
		u32(&b, LEN);
		put(&b, f, LEN);
	}
	char *path = write_tmp(&b);
	struct secho_capfile c;
	char err[256];
	struct secho_cap_rec r;
	if (T_CHECK(secho_capfile_open(&c, path, err, sizeof(err)) == 0, "open: %s", err)) {
		unsigned n = 0, sum = 0;
		while (secho_capfile_next(&c, &r) == 1) {
			for (uint32_t i = 0; i < r.caplen; i++)
				sum += r.data[i];
			n++;
		}
		T_CHECK(n == N && sum == N * LEN && !secho_capfile_error(&c),
		        "a sound file: %u records", n);
		secho_capfile_close(&c);
	}
	if (T_CHECK(secho_capfile_open(&c, path, err, sizeof(err)) == 0, "open: %s", err)) {
		for (unsigned i = 0; i < 10; i++)
			secho_capfile_next(&c, &r);
		T_CHECK(truncate(path, 1000000) == 0, "truncate");
		unsigned n = 0, sum = 0;
		while (secho_capfile_next(&c, &r) == 1) {
			for (uint32_t i = 0; i < r.caplen; i++)
				sum += r.data[i]; /* every byte of the record, as a dissector may */
			n++;
		}
		const char *e = secho_capfile_error(&c);
		T_CHECK(e && strstr(e, "shrank"), "error %s", e ? e : "(none)");
		/* at most what the first buffer held before the truncation */
		unsigned most = (4u << 20) / (16 + LEN) + 1;
		T_CHECK(n > 0 && n < N - 10 && n <= most && sum == n * LEN,
		        "%u records read after the truncation (at most %u), all whole", n, most);
		T_CHECK(secho_capfile_next(&c, &r) == 0, "the reading has ended");
		secho_capfile_close(&c);
	}
	unlink(path);
	free(b.p);
	t_end();
}

int main(void)
{
	t_seed_init("test_capfile");
	test_pcap();
	test_pcapng();
	test_cuts();
	test_clone();
	test_pin();
	test_long();
	test_cooked();
	test_shrink();
	return t_exit();
}
