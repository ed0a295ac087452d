/*
 * secho/capfile.h - capture files (pcap and pcapng) read in place: the file is mapped and
 * every record handed out points into the mapping. Nothing is copied or allocated per
 * record, so a reader costs a few loads per record however large the frames are.
 *
 * Formats:
 *   pcap     (tcpdump's): magic a1b2c3d4 (microseconds) or a1b23c4d (nanoseconds), either
 *            byte order; link type Ethernet (1) or Linux cooked (113)
 *   pcapng   sections (SHB) in either byte order, interfaces (IDB: link type, if_tsresol,
 *            if_tsoffset), enhanced packet blocks (EPB) and simple packet blocks (SPB: no
 *            time of their own, they get the previous record's); every other block is
 *            skipped. Records of interfaces that are neither Ethernet nor Linux cooked
 *            (113) are skipped and counted (skipped).
 * Linux cooked records (`tcpdump -i any`) are handed out as Ethernet frames: the record
 * starts 2 bytes into the cooked header, where 14 bytes end with its protocol field as an
 * EtherType (the bytes where MAC addresses would be are the cooked header's). Linux
 * cooked v2 (276) is not read.
 *
 * A record running past the end of the file, a block whose length is inconsistent, a
 * record longer than 256 KiB, or a pcapng time that is not a uint64_t of ns since the
 * epoch once its interface's if_tsoffset is added (before 1970, after 2554) end the
 * reading with an error that says where (what came
 * before was handed out). Readers of one mapping: secho_capfile_clone() gives another
 * cursor over it (the clone never unmaps), so several threads can walk one file.
 */
#ifndef SECHO_CAPFILE_H
#define SECHO_CAPFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SECHO_CAP_MAX_RECORD (256u * 1024u)
#define SECHO_CAP_MAX_IFS    64 /* pcapng interfaces per section */

struct secho_cap_rec {
	const uint8_t *data; /* caplen bytes, inside the mapping */
	uint32_t caplen;     /* bytes captured */
	uint32_t wirelen;    /* bytes on the wire (>= caplen) */
	uint64_t ts_ns;      /* ns since the epoch */
};

struct secho_cap_if {
	uint16_t linktype;
	bool pow2;     /* if_tsresol: 2^-res seconds per unit, else 10^-res */
	uint8_t res;   /* the exponent */
	int64_t tsoff; /* if_tsoffset, seconds */
};

/* The reader's state; fields private by convention (src/io/capfile.c). */
struct secho_capfile {
	const uint8_t *map;
	size_t size;
	size_t pos;        /* the next record or block */
	size_t touched;    /* pages up to here were touched (mapped) */
	size_t prefetched; /* lines up to here were asked for */
	size_t dropped;    /* pages before this were unmapped (drop_behind) */
	bool owner;        /* unmaps on close */
	bool drop_behind;  /* unmap pages far behind the cursor */
	bool held;         /* drop_behind: nothing dropped at or after hold - 16 MiB */
	size_t hold;       /* another cursor's place (secho_capfile_drop_hold) */
	bool touch_set;    /* touch_ahead set (secho_capfile_touch_ahead), else 256 KiB */
	size_t touch_ahead;
	bool pcapng;
	bool swapped; /* the file's byte order is not ours */
	bool nanos;   /* pcap: nanosecond timestamps */
	uint32_t snaplen;
	uint32_t linktype; /* pcap: the file's (Ethernet or Linux cooked) */
	unsigned nifs;
	struct secho_cap_if ifs[SECHO_CAP_MAX_IFS];
	uint64_t last_ts_ns;
	uint64_t records; /* handed out */
	uint64_t skipped; /* records of interfaces neither Ethernet nor Linux cooked */
	bool done;        /* end of file reached or an error */
	char err[160];    /* the error, "" when none */
};

/*
 * Map path and read its header. Returns 0, or -errno with a one-line reason in err: the
 * file cannot be opened or mapped, is not a regular file, is empty, is neither pcap nor
 * pcapng (-EBADMSG), or a pcap's link type is neither Ethernet nor Linux cooked (-ENOTSUP).
 */
int secho_capfile_open(struct secho_capfile *c, const char *path, char *err, size_t errlen);

/* The same over n bytes at p, which stay the caller's (fuzzing, tests): nothing is mapped
 * or unmapped; errors as above (-EBADMSG, -ENOTSUP), with "capture" for the path. */
int secho_capfile_open_mem(struct secho_capfile *c, const uint8_t *p, size_t n, char *err,
                           size_t errlen);

/*
 * The next record: 1 with *r filled, 0 at the end of the file or after an error (then
 * secho_capfile_error() says what). Never reads outside the mapping. Can't fail otherwise.
 */
int secho_capfile_next(struct secho_capfile *c, struct secho_cap_rec *r);

/*
 * Run fn(arg), which reads c's records (secho_capfile_next, or a clone's) and the bytes
 * they point to, guarded against the file shrinking under the mapping (a rotating capture
 * truncated while it is read): an access past the file's new end raises SIGBUS, and the
 * handler (installed process-wide on the first call; it acts only on a fault inside the
 * mapping this thread is guarding, any other SIGBUS keeps its default action) abandons fn
 * at that access. Reading then ends with an error saying so (secho_capfile_error) and this
 * returns -EIO; else 0. Since fn can be left at any access to the mapping, it must hold no
 * lock and allocate nothing there, and what its caller uses afterwards must be written to
 * memory before the next access (a volatile count of the frames it completed, say).
 * A file that grows is read to the size it had when opened.
 */
int secho_capfile_guarded(struct secho_capfile *c, void (*fn)(void *arg), void *arg);

/* NULL, or why reading stopped before the end of the file. */
const char *secho_capfile_error(const struct secho_capfile *c);

/* Fraction of the file read so far (0..1). */
double secho_capfile_progress(const struct secho_capfile *c);

/* *copy = a cursor at the same place over the same mapping; it does not own it (close the
 * original last). Can't fail. */
void secho_capfile_clone(const struct secho_capfile *c, struct secho_capfile *copy);

/* From now on, unmap the pages more than 16 MiB behind the cursor as it moves (the page
 * cache keeps them): a long file does not fill the resident set. Records handed out
 * more than 16 MiB before the cursor must not be used any more. The owner only (clones
 * never unmap, and the owner's clones must then not lag behind). Can't fail. */
void secho_capfile_drop_behind(struct secho_capfile *c);

/* With drop_behind: another cursor over the mapping (a clone) is at pos, so the pages up to
 * 16 MiB behind pos are kept too (called again as that cursor moves). Pages dropped are
 * mapped again from the page cache if a cursor comes back to them, so a lagging cursor is
 * slower, never wrong. Can't fail. */
void secho_capfile_drop_hold(struct secho_capfile *c, size_t pos);

/* Map the pages this far ahead of the cursor (default 256 KiB; 0: nothing ahead of it,
 * each page is mapped when the cursor reaches it: a second cursor behind the one that
 * maps, so that two threads do not fault the same pages in at once). Can't fail. */
void secho_capfile_touch_ahead(struct secho_capfile *c, size_t bytes);

/* Unmap (the owner only). Can't fail; a zeroed struct is fine. */
void secho_capfile_close(struct secho_capfile *c);

#endif
