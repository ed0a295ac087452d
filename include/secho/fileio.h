/*
 * secho/fileio.h - whole-buffer reads and writes on a file descriptor, for the few places
 * that move a file or a stream at once (key files, flow records, `secho crypt`). Errors are
 * -errno, as everywhere outside the crypto library.
 */
#ifndef SECHO_FILEIO_H
#define SECHO_FILEIO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Write all n bytes at p to fd, retrying short writes and EINTR. Returns 0 or -errno. */
int secho_write_all(int fd, const void *p, size_t n);

/*
 * Read fd to its end into a malloc'd buffer (grown as needed; bounded by memory). Returns
 * 0 with *buf (never NULL: at least one byte is allocated, also for empty input) and *len,
 * or -errno on a read error or -ENOMEM (nothing allocated, *buf NULL). The caller frees
 * (and wipes, for secrets).
 */
int secho_read_all(int fd, uint8_t **buf, size_t *len);

/*
 * The one rule for a file the project writes (key files, generated captures): it is
 * created new or replaces a regular file; anything else at path (a symbolic link, which is
 * refused, not followed; a device node, a FIFO, a socket, a directory) is left alone.
 * Returns 0 when path does not exist or is a regular file, else -EINVAL (-errno when
 * lstat itself fails for another reason than ENOENT) with "PATH: is a ..." in err.
 */
int secho_file_check_target(const char *path, char *err, size_t errlen);

/* "a symbolic link", "a device node", "a FIFO", "a socket", "a directory", "a regular file"
 * for a stat mode. Can't fail. */
const char *secho_file_kind(mode_t mode);

#endif
