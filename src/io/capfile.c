/*
 * src/io/capfile.c - pcap and pcapng files read in place (include/secho/capfile.h).
 *
 * The file is mapped read-only (MADV_SEQUENTIAL: the kernel reads ahead and drops pages
 * behind); a record is a pointer into the mapping. Every length read from the file is
 * checked against what is left of the mapping before anything it covers is touched.
 *
 * pcap: 24-byte file header, then 16-byte record headers (ts_sec, ts_frac, caplen, len).
 * pcapng (draft-ietf-opsawg-pcapng): blocks of (type, total length, body, total length),
 * 32-bit aligned; the section header's byte-order magic says how to read the section.
 *
 * A file that shrinks while it is mapped (a rotating capture truncated under the reader)
 * turns the next access past its new end into SIGBUS. secho_capfile_guarded() catches
 * that one signal for the mapping it guards (a sigsetjmp per burst of records, no system
 * call: the cost of a few stores) instead of paying a system call per window to look at
 * the size, which could still be outrun by a truncate between the look and the access.
 */
#include <secho/capfile.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
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

/*
 * Linux cooked captures (LINKTYPE_LINUX_SLL) are handed out as Ethernet frames, here in the
 * io layer, so that the dissector (src/wire) keeps one link layer. The 16-byte cooked
 * header is packet type (2), ARPHRD type (2), address length (2), address (8), protocol
 * (2): its last 14 bytes, read as an Ethernet header, have the protocol where the
 * EtherType goes, and the 12 bytes before it stand where the MAC addresses go, which no
 * flow key uses. So the record simply starts 2 bytes in: nothing is copied, the mapping
 * stays read-only. LINUX_SLL2 (276) has its protocol first and would need a copy: its
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

/* Read a pcapng section header at c->pos; sets byte order, forgets the interfaces. */
static bool ng_section(struct secho_capfile *c)
{
	const uint8_t *p = c->map + c->pos;
	uint32_t bom;

	if (c->size - c->pos < 28)
		return false;
	memcpy(&bom, p + 8, 4);
	if (bom == NG_BOM)
		c->swapped = false;
	else if (bom == bswap32(NG_BOM))
		c->swapped = true;
	else
		return false;
	c->nifs = 0;
	return true;
}

static int read_header(struct secho_capfile *c, const char *path, char *err, size_t errlen);

int secho_capfile_open(struct secho_capfile *c, const char *path, char *err, size_t errlen)
{
	struct stat st;
	int fd, r;

	memset(c, 0, sizeof(*c));
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
		snprintf(err, errlen, "%s: not a regular file (a capture file is mapped)", path);
		close(fd);
		return -EINVAL;
	}
	if (st.st_size < 24) {
		snprintf(err, errlen, "%s: %s", path,
		         st.st_size ? "too short for a pcap or pcapng header" : "empty file");
		close(fd);
		return -EBADMSG;
	}
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	r = -errno;
	close(fd);
	if (m == MAP_FAILED) {
		snprintf(err, errlen, "%s: mmap: %s", path, strerror(-r));
		return r;
	}
	madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
	c->map = m;
	c->size = (size_t)st.st_size;
	c->owner = true;
	return read_header(c, path, err, errlen);
}

/* Contract: secho/capfile.h. */
int secho_capfile_open_mem(struct secho_capfile *c, const uint8_t *p, size_t n, char *err,
                           size_t errlen)
{
	memset(c, 0, sizeof(*c));
	if (n < 24) {
		snprintf(err, errlen, "too short for a pcap or pcapng header");
		return -EBADMSG;
	}
	c->map = p;
	c->size = n;
	return read_header(c, "capture", err, errlen);
}

/* The file header of the capture at c->map (size >= 24); path names it in err. On
 * failure c is closed (unmapped when it owns the mapping). */
static int read_header(struct secho_capfile *c, const char *path, char *err, size_t errlen)
{
	uint32_t magic;
	memcpy(&magic, c->map, 4);
	if (magic == NG_SHB) {
		c->pcapng = true;
		if (!ng_section(c)) {
			snprintf(err, errlen,
			         "%s: pcapng section header without a byte-order magic", path);
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
	c->snaplen = rd32(c, c->map + 16);
	uint32_t lt = rd32(c, c->map + 20) & 0x0fffffffu; /* high bits: FCS length info */
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

/*
 * Ahead of the cursor: the pages are mapped by touching one byte per 64 KiB some way
 * ahead (each page fault maps the whole 64 KiB window around it from the page cache, the
 * kernel's fault-around, at less cost than MADV_POPULATE_READ's page-by-page walk), then
 * every cache line up to PREFETCH_AHEAD past the cursor is asked for: the record headers
 * form a chain of dependent loads (each length says where the next header is), so their
 * lines must be on their way before the walk gets there, and a prefetch into a page not
 * yet mapped would be dropped. Behind the cursor, when asked to, the pages more than
 * DROP_BEHIND back (and back from the other cursor's place: secho_capfile_drop_hold) are
 * unmapped (the page cache keeps them): the resident set stays small
 * and the unmapping costs what the final munmap would have.
 */
#define TOUCH_STEP     (64u << 10)
#define TOUCH_AHEAD    (256u << 10)
#define PREFETCH_AHEAD (16u << 10)
#define DROP_BEHIND    (16u << 20)

static inline void read_ahead(struct secho_capfile *c)
{
	size_t ahead = c->touch_set ? c->touch_ahead : TOUCH_AHEAD;
	if (c->touched < c->pos + ahead && c->touched < c->size) {
		size_t want = c->pos + ahead < c->size ? c->pos + ahead : c->size;
		if (c->touched < c->pos)
			c->touched = c->pos & ~(size_t)(TOUCH_STEP - 1);
		for (; c->touched < want; c->touched += TOUCH_STEP)
			(void)*(const volatile uint8_t *)(c->map + c->touched);
		size_t upto = c->held && c->hold < c->pos ? c->hold : c->pos;
		if (c->drop_behind && upto > c->dropped + 2 * (size_t)DROP_BEHIND) {
			size_t to = (upto - DROP_BEHIND) & ~(size_t)4095;
			madvise((void *)(uintptr_t)(c->map + c->dropped), to - c->dropped,
			        MADV_DONTNEED);
			c->dropped = to;
		}
	}
	size_t want = c->pos + PREFETCH_AHEAD < c->size ? c->pos + PREFETCH_AHEAD : c->size;
	if (c->prefetched < c->pos)
		c->prefetched = c->pos & ~(size_t)63;
	for (; c->prefetched < want; c->prefetched += 64)
		__builtin_prefetch(c->map + c->prefetched);
}

static int pcap_next(struct secho_capfile *c, struct secho_cap_rec *r)
{
	if (c->pos == c->size) {
		c->done = true;
		return 0;
	}
	if (c->size - c->pos < 16)
		return fail(c, "truncated record header at byte %zu", c->pos);
	read_ahead(c);
	const uint8_t *h = c->map + c->pos;
	uint32_t sec = rd32(c, h), frac = rd32(c, h + 4), cap = rd32(c, h + 8),
	         len = rd32(c, h + 12);
	if (cap > SECHO_CAP_MAX_RECORD)
		return fail(c, "record at byte %zu longer than 256 KiB", c->pos);
	if (c->size - c->pos - 16 < cap)
		return fail(c, "truncated record at byte %zu (the file ends inside it)", c->pos);
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
		if (c->pos == c->size) {
			c->done = true;
			return 0;
		}
		if (c->size - c->pos < 12)
			return fail(c, "truncated block header at byte %zu", c->pos);
		read_ahead(c);
		const uint8_t *p = c->map + c->pos;
		uint32_t type, tot;
		memcpy(&type, p, 4);
		if (type == NG_SHB) { /* byte order may change: read the magic first */
			if (!ng_section(c))
				return fail(c, "bad section header at byte %zu", c->pos);
		} else {
			type = rd32(c, p);
		}
		tot = rd32(c, p + 4);
		if (tot < 12 || (tot & 3) || tot > c->size - c->pos)
			return fail(
			        c,
			        "block at byte %zu has a bad length (or the file ends inside it)",
			        c->pos);
		const uint8_t *b = p + 8;
		size_t blen = tot - 12;
		size_t at = c->pos;
		c->pos += tot;
		if (type == NG_IDB) {
			ng_idb(c, b, blen);
		} else if (type == NG_EPB) {
			if (blen < 20)
				return fail(c, "enhanced packet block at byte %zu too short", at);
			uint32_t ifid = rd32(c, b), hi = rd32(c, b + 4), lo = rd32(c, b + 8);
			uint32_t cap = rd32(c, b + 12), len = rd32(c, b + 16);
			if (cap > SECHO_CAP_MAX_RECORD || cap > blen - 20)
				return fail(
				        c, "enhanced packet block at byte %zu: bad captured length",
				        at);
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
			if (blen < 4)
				return fail(c, "simple packet block at byte %zu too short", at);
			uint32_t len = rd32(c, b);
			uint32_t cap = len < blen - 4 ? len : (uint32_t)(blen - 4);
			if (cap > SECHO_CAP_MAX_RECORD)
				return fail(c, "simple packet block at byte %zu: bad length", at);
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

/* The guarded mapping of this thread, while secho_capfile_guarded runs. */
struct guard {
	sigjmp_buf env;
	const uint8_t *lo, *hi;
	const uint8_t *volatile at; /* the access that faulted */
};
static __thread struct guard *volatile cur_guard;
static pthread_once_t bus_once = PTHREAD_ONCE_INIT;
static int bus_err;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	struct guard *g = cur_guard;
	const uint8_t *a = si->si_addr;

	(void)uc;
	if (si->si_code > 0 && g && a >= g->lo && a < g->hi) {
		g->at = a;
		/* SA_NODEFER: SIGBUS is not blocked in here, so the jump (which leaves the
		 * signal mask alone: sigsetjmp(env, 0)) leaves it unblocked */
		siglongjmp(g->env, 1);
	}
	/* Not ours: the default action. A fault is taken again when the access is
	 * retried on return; a signal sent by kill(2) is sent again. */
	signal(sig, SIG_DFL);
	if (si->si_code <= 0)
		raise(sig);
}

static void install_sigbus(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	bus_err = sigaction(SIGBUS, &sa, NULL) ? -errno : 0;
}

/* Contract: secho/capfile.h. */
int secho_capfile_guarded(struct secho_capfile *c, void (*fn)(void *arg), void *arg)
{
	struct guard g;

	pthread_once(&bus_once, install_sigbus);
	if (bus_err || !c->map) {
		fn(arg); /* unguarded, as before */
		return 0;
	}
	g.lo = c->map;
	g.hi = c->map + c->size;
	g.at = NULL;
	if (sigsetjmp(g.env, 0)) {
		cur_guard = NULL;
		fail(c, "the file shrank while it was read: byte %zu of its %zu is gone",
		     (size_t)(g.at - g.lo), c->size);
		return -EIO;
	}
	cur_guard = &g;
	fn(arg);
	cur_guard = NULL;
	return 0;
}

int secho_capfile_next(struct secho_capfile *c, struct secho_cap_rec *r)
{
	if (c->done)
		return 0;
	int n = c->pcapng ? ng_next(c, r) : pcap_next(c, r);
	c->records += (unsigned)n;
	return n;
}

const char *secho_capfile_error(const struct secho_capfile *c)
{
	return c->err[0] ? c->err : NULL;
}

double secho_capfile_progress(const struct secho_capfile *c)
{
	return c->size ? (double)c->pos / (double)c->size : 1.0;
}

void secho_capfile_clone(const struct secho_capfile *c, struct secho_capfile *copy)
{
	*copy = *c;
	copy->owner = false;
	copy->drop_behind = false;
}

void secho_capfile_drop_behind(struct secho_capfile *c)
{
	c->drop_behind = c->owner;
}

void secho_capfile_touch_ahead(struct secho_capfile *c, size_t bytes)
{
	c->touch_set = true;
	c->touch_ahead = bytes;
}

void secho_capfile_drop_hold(struct secho_capfile *c, size_t pos)
{
	c->held = true;
	c->hold = pos;
}

void secho_capfile_close(struct secho_capfile *c)
{
	if (c->owner && c->map)
		munmap((void *)(uintptr_t)c->map, c->size);
	c->map = NULL;
	c->size = c->pos = 0;
	c->owner = false;
	c->done = true;
}
