/*
 * src/io/capfile.c - pcap and pcapng files read through buffers (include/secho/capfile.h).
 *
 * A file is read with pread(2) into two buffers of BUF_BYTES per cursor, and a record is a
 * pointer into the buffer that holds it. When the next record is not wholly in the current
 * buffer, the bytes from the cursor on are copied to the start of the other buffer and more
 * of the file is read after them (the swap): FILL_BYTES in all, or the whole record when
 * it is longer. The records handed out from the first buffer stay as they are until the
 * swap after that. A pin (secho_capfile_pin) keeps every record handed
 * out since it: while pinned, a swap into a buffer that holds such a record is refused, and
 * the reading pauses (returns SECHO_CAP_PAUSED) until the caller pins again.
 *
 * Why not a mapping of the file, which this reader was until issue 24: on the machines
 * measured (virtual machines where a page fault is dear) the walk over a mapped file cost
 * 150-490 ns per record in faults and TLB misses, against 33-90 ns copied into two reused
 * buffers (docs/PERFORMANCE.md, "The latest: a quiet machine"); and a copy cannot fault when the
 * file shrinks under the reader, where a mapping raises SIGBUS.
 *
 * Why a fill of 256 KiB, not the whole buffer: the kernel's copy then lands in the core's
 * second-level cache (1 MiB a core on Zen 4 and Zen 5; the two buffers' filled parts take
 * half of it) and the walk reads the records from there, where 4 MiB fills went out to the
 * last level and came back: on Zen 5, 2M short-flow packets 0.63-0.65 -> 0.59 s, 3M light
 * 0.50-0.53 -> 0.44 s (docs/PERFORMANCE.md, "The capture reader's fill"). The buffers stay
 * BUF_BYTES for the records and blocks that are longer, and are in 4 KiB pages: a fill
 * touches 64 of them, and a fresh 2 MiB huge page cost up to 13 ms to fault in on the
 * virtual machines measured.
 *
 * Every length read from the file is checked against what is left of the file (its size
 * when opened: a file that grows is read to that size) before anything it covers is read.
 * A file that shrinks while it is read ends the reading with an error at the first byte
 * that is gone, after the records before it.
 *
 * pcap: 24-byte file header, then 16-byte record headers (ts_sec, ts_frac, caplen, len).
 * pcapng (draft-ietf-opsawg-pcapng): blocks of (type, total length, body, total length),
 * 32-bit aligned; the section header's byte-order magic says how to read the section.
 */
#include <secho/capfile.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PCAP_MAGIC_US 0xa1b2c3d4u
#define PCAP_MAGIC_NS 0xa1b23c4du
#define NG_SHB        0x0a0d0d0au
#define NG_IDB        0x00000001u
#define NG_SPB        0x00000003u
#define NG_EPB        0x00000006u
#define NG_BOM        0x1a2b3c4du
#define LINKTYPE_ETH  1
#define LINKTYPE_SLL  113 /* Linux cooked capture v1 (tcpdump -i any before libpcap 1.10) */

/* Each of a cursor's two buffers: well above the largest record a block may need in memory
 * (SECHO_CAP_MAX_RECORD and its headers; an interface description block up to this); and
 * what a swap fills of one (above), at most BUF_BYTES. */
#define BUF_BYTES  (4u << 20)
#define FILL_BYTES SECHO_CAP_FILL
_Static_assert(FILL_BYTES <= BUF_BYTES, "a fill fits a buffer");

/*
 * Linux cooked captures (LINKTYPE_LINUX_SLL) are handed out as Ethernet frames, here in the
 * io layer, so that the dissector (src/wire) keeps one link layer. The 16-byte cooked
 * header is packet type (2), ARPHRD type (2), address length (2), address (8), protocol
 * (2): its last 14 bytes, read as an Ethernet header, have the protocol where the
 * EtherType goes, and the 12 bytes before it stand where the MAC addresses go, which no
 * flow key uses. So the record simply starts 2 bytes in: nothing is copied or changed.
 * LINUX_SLL2 (276) has its protocol first and would need a copy: its
 * records are skipped and counted, as other link types are.
 */
static inline bool link_readable(uint32_t lt)
{
	return lt == LINKTYPE_ETH || lt == LINKTYPE_SLL;
}

static inline void link_adjust(uint32_t lt, struct secho_cap_rec *r)
{
	if (lt == LINKTYPE_SLL) {
		uint32_t k = r->caplen < 2 ? r->caplen : 2;
		r->data += k;
		r->caplen -= k;
		r->wirelen -= k;
	}
}

static inline uint32_t bswap32(uint32_t v)
{
	return __builtin_bswap32(v);
}

static inline uint32_t rd32(const struct secho_capfile *c, const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return c->swapped ? bswap32(v) : v;
}

static inline uint16_t rd16(const struct secho_capfile *c, const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return c->swapped ? __builtin_bswap16(v) : v;
}

__attribute__((format(printf, 2, 3))) static int fail(struct secho_capfile *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	c->done = true;
	return 0;
}

/* ---- the buffers ---- */

/* Two buffers for a cursor over a file; -ENOMEM. */
static int bufs_alloc(struct secho_capfile *c)
{
	for (unsigned i = 0; i < 2; i++) {
		c->buf[i] = aligned_alloc(4096, BUF_BYTES);
		if (!c->buf[i]) {
			free(c->buf[0]);
			c->buf[0] = NULL;
			return -ENOMEM;
		}
		/* 4 KiB pages (above), where the system puts every large mapping in huge ones */
		madvise(c->buf[i], BUF_BYTES, MADV_NOHUGEPAGE);
	}
	c->cur = 0;
	c->win = c->buf[0];
	c->base = c->pos;
	c->have = 0;
	return 0;
}

/*
 * The swap: the bytes from the cursor on to the start of the other buffer, the rest of it
 * read from the file after them; n bytes from the cursor wanted. Returns 1, SECHO_CAP_PAUSED
 * when the other buffer holds records handed out since the pin (nothing changes), or 0
 * after an error (c->err).
 */
static int refill(struct secho_capfile *c, size_t n)
{
	if (c->pinned && c->kept[c->cur ^ 1u])
		return SECHO_CAP_PAUSED; /* it holds records handed out since the pin */
	uint8_t *nb = c->buf[c->cur ^ 1u];
	size_t keep = 0, end = c->base + c->have;

	if (c->pos < end) {
		keep = end - c->pos;
		memcpy(nb, c->win + (c->pos - c->base), keep);
	}
	/* keep < n <= BUF_BYTES: the cursor's bytes are not the n wanted */
	size_t want = (n > FILL_BYTES ? n : FILL_BYTES) - keep, left = c->size - c->pos - keep;
	if (want > left)
		want = left;
	size_t got = keep;
	while (got < keep + want) {
		ssize_t k = pread(c->fd, nb + got, keep + want - got, (off_t)(c->pos + got));
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return fail(c, "read at byte %zu: %s", c->pos + got, strerror(errno));
		if (!k)
			break; /* the file is shorter than it was */
		got += (size_t)k;
	}
	c->cur ^= 1u;
	c->win = nb;
	c->base = c->pos;
	c->have = got;
	c->kept[c->cur] = false;
	if (got < n)
		return fail(c, "the file shrank while it was read: byte %zu of its %zu is gone",
		            c->pos + got, c->size);
	return 1;
}

/* n bytes at the cursor in memory (n <= BUF_BYTES, and the caller has checked that the file
 * holds them): 1 with *p, SECHO_CAP_PAUSED, or 0 after an error. */
static inline int need(struct secho_capfile *c, size_t n, const uint8_t **p)
{
	if (c->pos + n > c->base + c->have) {
		int r = c->fd >= 0 ? refill(c, n) : fail(c, "internal: record outside the bytes");
		if (r != 1)
			return r;
	}
	*p = c->win + (c->pos - c->base);
	return 1;
}

/* Read a pcapng section header at c->pos; sets byte order, forgets the interfaces. Returns
 * 1, 0 when it is not one (or after an error: c->err), or SECHO_CAP_PAUSED. */
static int ng_section(struct secho_capfile *c)
{
	const uint8_t *p;
	uint32_t bom;

	if (c->size - c->pos < 28)
		return 0;
	int r = need(c, 28, &p);
	if (r != 1)
		return r;
	memcpy(&bom, p + 8, 4);
	if (bom == NG_BOM)
		c->swapped = false;
	else if (bom == bswap32(NG_BOM))
		c->swapped = true;
	else
		return 0;
	c->nifs = 0;
	return 1;
}

static int read_header(struct secho_capfile *c, const char *path, char *err, size_t errlen);

int secho_capfile_open(struct secho_capfile *c, const char *path, char *err, size_t errlen)
{
	struct stat st;
	int fd, r;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
		close(fd);
		return r;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file (a capture is read by offset)", path);
		close(fd);
		return -EINVAL;
	}
	if (st.st_size < 24) {
		snprintf(err, errlen, "%s: %s", path,
		         st.st_size ? "too short for a pcap or pcapng header" : "empty file");
		close(fd);
		return -EBADMSG;
	}
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL); /* a hint: larger read-ahead */
	c->fd = fd;
	c->owner = true;
	c->size = (size_t)st.st_size;
	if (bufs_alloc(c)) {
		snprintf(err, errlen, "%s: out of memory for the read buffers", path);
		secho_capfile_close(c);
		return -ENOMEM;
	}
	return read_header(c, path, err, errlen);
}

/* Contract: secho/capfile.h. */
int secho_capfile_open_mem(struct secho_capfile *c, const uint8_t *p, size_t n, char *err,
                           size_t errlen)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	if (n < 24) {
		snprintf(err, errlen, "too short for a pcap or pcapng header");
		return -EBADMSG;
	}
	c->win = p; /* all of it, always */
	c->have = n;
	c->size = n;
	return read_header(c, "capture", err, errlen);
}

/* The file header of the capture at the start (size >= 24); path names it in err. On
 * failure c is closed. */
static int read_header(struct secho_capfile *c, const char *path, char *err, size_t errlen)
{
	const uint8_t *h;
	uint32_t magic;

	if (need(c, 24, &h) != 1) {
		snprintf(err, errlen, "%s: %s", path, c->err);
		secho_capfile_close(c);
		return -EIO;
	}
	memcpy(&magic, h, 4);
	if (magic == NG_SHB) {
		c->pcapng = true;
		if (ng_section(c) != 1) {
			snprintf(err, errlen, "%s: %s", path,
			         c->err[0] ? c->err
			                   : "pcapng section header without a byte-order magic");
			secho_capfile_close(c);
			return -EBADMSG;
		}
		return 0;
	}
	if (magic == PCAP_MAGIC_US || magic == PCAP_MAGIC_NS) {
		c->swapped = false;
	} else if (magic == bswap32(PCAP_MAGIC_US) || magic == bswap32(PCAP_MAGIC_NS)) {
		c->swapped = true;
		magic = bswap32(magic);
	} else {
		snprintf(err, errlen, "%s: not a pcap or pcapng file (magic %08x)", path, magic);
		secho_capfile_close(c);
		return -EBADMSG;
	}
	c->nanos = magic == PCAP_MAGIC_NS;
	c->snaplen = rd32(c, h + 16);
	uint32_t lt = rd32(c, h + 20) & 0x0fffffffu; /* high bits: FCS length info */
	if (!link_readable(lt)) {
		snprintf(err, errlen,
		         "%s: link type %u is neither Ethernet (1) nor Linux cooked (113)", path,
		         lt);
		secho_capfile_close(c);
		return -ENOTSUP;
	}
	c->linktype = lt;
	c->pos = 24;
	return 0;
}

static int pcap_next(struct secho_capfile *c, struct secho_cap_rec *r)
{
	const uint8_t *h;
	int k;

	if (c->pos == c->size) {
		c->done = true;
		return 0;
	}
	if (c->size - c->pos < 16)
		return fail(c, "truncated record header at byte %zu", c->pos);
	if ((k = need(c, 16, &h)) != 1)
		return k;
	uint32_t sec = rd32(c, h), frac = rd32(c, h + 4), cap = rd32(c, h + 8),
	         len = rd32(c, h + 12);
	if (cap > SECHO_CAP_MAX_RECORD)
		return fail(c, "record at byte %zu longer than 256 KiB", c->pos);
	if (c->size - c->pos - 16 < cap)
		return fail(c, "truncated record at byte %zu (the file ends inside it)", c->pos);
	if ((k = need(c, 16 + (size_t)cap, &h)) != 1)
		return k;
	r->data = h + 16;
	r->caplen = cap;
	r->wirelen = len < cap ? cap : len;
	r->ts_ns = (uint64_t)sec * 1000000000ull + (c->nanos ? frac : (uint64_t)frac * 1000u);
	c->pos += 16 + (size_t)cap;
	link_adjust(c->linktype, r);
	return 1;
}

/*
 * Units of an interface's timestamps to ns since the epoch, its if_tsoffset (seconds,
 * signed) added. The arithmetic is 128-bit: a timestamp of up to 2^64 units times 10^9,
 * or an offset of +-2^63 s times 10^9, cannot overflow it. Returns false when the result
 * is not a uint64_t of ns (before 1970 or after 2554): such a time cannot be represented,
 * and a wrapped one would put the packet half a millennium away from its neighbours.
 */
static bool ng_ts(const struct secho_cap_if *i, uint64_t t, uint64_t *out)
{
	__int128 ns;

	if (i->pow2) {
		unsigned k = i->res;
		if (k >= 64) {
			ns = 0;
		} else {
			unsigned __int128 sec = t >> k, frac = k ? t & ((1ull << k) - 1) : 0;
			/* frac < 2^k < 2^64: frac * 1e9 fits in 128 bits */
			ns = (__int128)(sec * 1000000000u + ((frac * 1000000000u) >> k));
		}
	} else {
		static const uint64_t p10[] = {1ull,         10ull,        100ull,     1000ull,
		                               10000ull,     100000ull,    1000000ull, 10000000ull,
		                               100000000ull, 1000000000ull};
		if (i->res <= 9)
			ns = (__int128)((unsigned __int128)t * p10[9 - i->res]);
		else if (i->res <= 18)
			ns = t / p10[i->res - 9];
		else
			ns = 0;
	}
	ns += (__int128)i->tsoff * 1000000000;
	if (ns < 0 || ns > (__int128)UINT64_MAX)
		return false;
	*out = (uint64_t)ns;
	return true;
}

/* Interface description block body at b (blen bytes of body). */
static void ng_idb(struct secho_capfile *c, const uint8_t *b, size_t blen)
{
	if (c->nifs == SECHO_CAP_MAX_IFS)
		return; /* records of further interfaces are skipped */
	struct secho_cap_if *i = &c->ifs[c->nifs++];
	memset(i, 0, sizeof(*i));
	if (blen < 8) {
		i->linktype = 0xffff; /* unreadable: its records are skipped */
		return;
	}
	i->linktype = rd16(c, b);
	i->res = 6; /* microseconds unless told */
	size_t o = 8;
	while (o + 4 <= blen) {
		uint16_t code = rd16(c, b + o), olen = rd16(c, b + o + 2);
		if (code == 0 || o + 4 + olen > blen)
			break;
		if (code == 9 && olen >= 1) { /* if_tsresol */
			i->pow2 = b[o + 4] & 0x80;
			i->res = b[o + 4] & 0x7f;
		} else if (code == 14 && olen >= 8) { /* if_tsoffset */
			uint64_t v;
			memcpy(&v, b + o + 4, 8);
			i->tsoff = (int64_t)(c->swapped ? __builtin_bswap64(v) : v);
		}
		o += 4 + (((size_t)olen + 3) & ~(size_t)3);
	}
}

static int ng_next(struct secho_capfile *c, struct secho_cap_rec *r)
{
	for (;;) {
		const uint8_t *p;
		int k;
		if (c->pos == c->size) {
			c->done = true;
			return 0;
		}
		if (c->size - c->pos < 12)
			return fail(c, "truncated block header at byte %zu", c->pos);
		if ((k = need(c, 12, &p)) != 1)
			return k;
		uint32_t type, tot;
		memcpy(&type, p, 4);
		if (type == NG_SHB) { /* byte order may change: read the magic first */
			if ((k = ng_section(c)) != 1)
				return k == SECHO_CAP_PAUSED || c->done
				               ? k
				               : fail(c, "bad section header at byte %zu", c->pos);
			if ((k = need(c, 12, &p)) != 1)
				return k;
		} else {
			type = rd32(c, p);
		}
		tot = rd32(c, p + 4);
		if (tot < 12 || (tot & 3) || tot > c->size - c->pos)
			return fail(
			        c,
			        "block at byte %zu has a bad length (or the file ends inside it)",
			        c->pos);
		/* what is read of each kind: the whole of an interface description, the
		 * headers and the captured bytes of a packet block, nothing of the others */
		size_t blen = tot - 12, at = c->pos, in = 0;
		if (type == NG_IDB) {
			if (tot > BUF_BYTES)
				return fail(c,
				            "interface description block at byte %zu longer than "
				            "4 MiB",
				            at);
			in = tot;
		} else if (type == NG_EPB) {
			if (blen < 20)
				return fail(c, "enhanced packet block at byte %zu too short", at);
			if ((k = need(c, 28, &p)) != 1)
				return k;
			uint32_t cap = rd32(c, p + 20);
			if (cap > SECHO_CAP_MAX_RECORD || cap > blen - 20)
				return fail(
				        c, "enhanced packet block at byte %zu: bad captured length",
				        at);
			in = 28 + (size_t)cap;
		} else if (type == NG_SPB) {
			if (blen < 4)
				return fail(c, "simple packet block at byte %zu too short", at);
			uint32_t len = rd32(c, p + 8);
			uint32_t cap = len < blen - 4 ? len : (uint32_t)(blen - 4);
			if (cap > SECHO_CAP_MAX_RECORD)
				return fail(c, "simple packet block at byte %zu: bad length", at);
			in = 12 + (size_t)cap;
		}
		if (in && (k = need(c, in, &p)) != 1)
			return k;
		const uint8_t *b = p + 8;
		c->pos += tot;
		if (type == NG_IDB) {
			ng_idb(c, b, blen);
		} else if (type == NG_EPB) {
			uint32_t ifid = rd32(c, b), hi = rd32(c, b + 4), lo = rd32(c, b + 8);
			uint32_t cap = rd32(c, b + 12), len = rd32(c, b + 16);
			if (ifid >= c->nifs || ifid >= SECHO_CAP_MAX_IFS ||
			    !link_readable(c->ifs[ifid].linktype)) {
				c->skipped++;
				continue;
			}
			r->data = b + 20;
			r->caplen = cap;
			r->wirelen = len < cap ? cap : len;
			if (!ng_ts(&c->ifs[ifid], (uint64_t)hi << 32 | lo, &r->ts_ns))
				return fail(c,
				            "enhanced packet block at byte %zu: its time (units "
				            "%" PRIu64 ", interface %u's if_tsoffset %" PRId64
				            " s) is before 1970 or after 2554",
				            at, (uint64_t)hi << 32 | lo, ifid, c->ifs[ifid].tsoff);
			c->last_ts_ns = r->ts_ns;
			link_adjust(c->ifs[ifid].linktype, r);
			return 1;
		} else if (type == NG_SPB) {
			uint32_t len = rd32(c, b);
			uint32_t cap = len < blen - 4 ? len : (uint32_t)(blen - 4);
			if (c->nifs < 1 || !link_readable(c->ifs[0].linktype)) {
				c->skipped++;
				continue;
			}
			r->data = b + 4;
			r->caplen = cap;
			r->wirelen = len < cap ? cap : len;
			r->ts_ns = c->last_ts_ns;
			link_adjust(c->ifs[0].linktype, r);
			return 1;
		}
		/* anything else (name resolution, statistics, custom, obsolete): skipped */
	}
}

int secho_capfile_next(struct secho_capfile *c, struct secho_cap_rec *r)
{
	if (c->done)
		return 0;
	int n = c->pcapng ? ng_next(c, r) : pcap_next(c, r);
	if (n == 1) {
		c->records++;
		c->kept[c->cur] = c->pinned;
	}
	return n;
}

void secho_capfile_pin(struct secho_capfile *c)
{
	c->pinned = true;
	c->kept[0] = c->kept[1] = false;
}

const char *secho_capfile_error(const struct secho_capfile *c)
{
	return c->err[0] ? c->err : NULL;
}

double secho_capfile_progress(const struct secho_capfile *c)
{
	return c->size ? (double)c->pos / (double)c->size : 1.0;
}

int secho_capfile_clone(const struct secho_capfile *c, struct secho_capfile *copy)
{
	*copy = *c;
	copy->owner = false;
	copy->pinned = false;
	if (c->fd < 0)
		return 0; /* bytes in memory: the same window */
	copy->buf[0] = copy->buf[1] = NULL;
	return bufs_alloc(copy);
}

void secho_capfile_close(struct secho_capfile *c)
{
	if (c->fd >= 0) {
		free(c->buf[0]);
		free(c->buf[1]);
		if (c->owner)
			close(c->fd);
	}
	c->buf[0] = c->buf[1] = NULL;
	c->win = NULL;
	c->fd = -1;
	c->size = c->pos = c->base = c->have = 0;
	c->owner = false;
	c->done = true;
}
