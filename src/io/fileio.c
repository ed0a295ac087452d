/*
 * src/io/fileio.c - whole-buffer reads and writes on a file descriptor (secho/fileio.h).
 */
#include "secho/fileio.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Contract: secho/fileio.h. */
int secho_write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t w = write(fd, b, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Contract: secho/fileio.h. */
int secho_read_all(int fd, uint8_t **buf, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	uint8_t *b = malloc(cap);

	*buf = NULL;
	*len = 0;
	if (!b)
		return -ENOMEM;
	for (;;) {
		if (n == cap) {
			uint8_t *nb = cap > SIZE_MAX / 2 ? NULL : realloc(b, cap * 2);

			if (!nb) {
				free(b);
				return -ENOMEM;
			}
			b = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, b + n, cap - n);

		if (r < 0) {
			int e = errno;

			if (e == EINTR)
				continue;
			free(b);
			return -e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*buf = b;
	*len = n;
	return 0;
}

/* Contract: secho/fileio.h. */
const char *secho_file_kind(mode_t mode)
{
	if (S_ISREG(mode))
		return "a regular file";
	if (S_ISLNK(mode))
		return "a symbolic link";
	if (S_ISCHR(mode) || S_ISBLK(mode))
		return "a device node";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISDIR(mode))
		return "a directory";
	return "not a regular file";
}

/* Contract: secho/fileio.h. */
int secho_file_check_target(const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (lstat(path, &st) != 0) {
		if (errno == ENOENT)
			return 0;
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	if (S_ISREG(st.st_mode))
		return 0;
	snprintf(err, errlen, "%s: is %s; only a new or a regular file is written%s", path,
	         secho_file_kind(st.st_mode),
	         S_ISLNK(st.st_mode) ? " (links are refused, not followed)" : "");
	return -EINVAL;
}
