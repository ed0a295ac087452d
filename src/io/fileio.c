/*
 * src/io/fileio.c - whole-buffer reads and writes on a file descriptor (secho/fileio.h).
 */
#include "secho/fileio.h"

#include <errno.h>
#include <stdlib.h>
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
