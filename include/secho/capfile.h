/*
 * secho/capfile.h - capture files (pcap and pcapng) read through two reused buffers per
 * cursor (pread(2), 256 KiB at a time): every record handed out points into a buffer.
 * Nothing is allocated per record, and nothing is mapped, so no page faults on the walk
 * (src/io/capfile.c says why).
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
 * before was handed out). Several threads can walk one file: secho_capfile_clone() gives
 * another cursor with buffers of its own.
 *
 * How long a record's bytes stay: until the second buffer swap after it (at least until
 * the next call of secho_capfile_next). To keep a run of records, pin the cursor
 * (secho_capfile_pin): every record handed out since the pin then stays until the next pin
 * or the close, and when the next record would need room the pinned ones hold,
 * secho_capfile_next returns SECHO_CAP_PAUSED instead: use the records, pin again, go on.
 * A pinned run holds at least one record, and up to two fills' worth (SECHO_CAP_FILL: what
 * the reader reads at a time; a longer record is read whole).
 */
#ifndef SECHO_CAPFILE_H
#define SECHO_CAPFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SECHO_CAP_MAX_RECORD (256u * 1024u)
#define SECHO_CAP_MAX_IFS    64             /* pcapng interfaces per section */
#define SECHO_CAP_FILL       (256u * 1024u) /* bytes read from the file at a time */

struct secho_cap_rec {
	const uint8_t *data; /* caplen bytes, in the reader's buffer (or the memory given) */
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

#define SECHO_CAP_PAUSED 2 /* secho_capfile_next: the pinned records fill the buffers */

/* The reader's state; fields private by convention (src/io/capfile.c). */
struct secho_capfile {
	int fd;             /* the file, read by offset; -1: bytes in memory (open_mem) */
	bool owner;         /* closes fd (clones share it) */
	uint8_t *buf[2];    /* a file's two buffers (this cursor's own) */
	const uint8_t *win; /* the bytes at file offset base: buf[cur], or open_mem's */
	unsigned cur;
	size_t base, have; /* win holds the file's bytes [base, base + have) */
	bool pinned;       /* secho_capfile_pin: records since it are kept */
	bool kept[2];      /* buf[i] holds a record handed out since the pin */
	size_t size;       /* the file's size when opened */
	size_t pos;        /* the next record or block */
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
 * Open path and read its header. Returns 0, or -errno with a one-line reason in err: the
 * file cannot be opened or read, is not a regular file, is empty, is neither pcap nor
 * pcapng (-EBADMSG), a pcap's link type is neither Ethernet nor Linux cooked (-ENOTSUP), or
 * no memory for the buffers (-ENOMEM).
 */
int secho_capfile_open(struct secho_capfile *c, const char *path, char *err, size_t errlen);

/* The same over n bytes at p, which stay the caller's (fuzzing, tests): records point into
 * them and stay as long as they do; errors as above (-EBADMSG, -ENOTSUP), with "capture"
 * for the path. */
int secho_capfile_open_mem(struct secho_capfile *c, const uint8_t *p, size_t n, char *err,
                           size_t errlen);

/*
 * The next record: 1 with *r filled; SECHO_CAP_PAUSED (pinned cursors only, see above);
 * 0 at the end of the file or after an error (then secho_capfile_error() says what). Never
 * reads outside the file. Can't fail otherwise.
 */
int secho_capfile_next(struct secho_capfile *c, struct secho_cap_rec *r);

/* Keep every record handed out from now on until the next pin or the close. Can't fail. */
void secho_capfile_pin(struct secho_capfile *c);

/* NULL, or why reading stopped before the end of the file. */
const char *secho_capfile_error(const struct secho_capfile *c);

/* Fraction of the file read so far (0..1). */
double secho_capfile_progress(const struct secho_capfile *c);

/* *copy = a cursor at the same place over the same file, with buffers of its own, not
 * pinned; close it before the original. Returns 0, or -ENOMEM (*copy then needs no close). */
int secho_capfile_clone(const struct secho_capfile *c, struct secho_capfile *copy);

/* Free the buffers, and close the file (the original, not a clone). Can't fail; a zeroed
 * struct is fine. */
void secho_capfile_close(struct secho_capfile *c);

#endif
