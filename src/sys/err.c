/*
 * src/sys/err.c - the libraries' error messages (contract: src/sys/err.h).
 */
#include "sys/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Contract: err.h. */
void secho_err_add(char *err, size_t errlen, const char *fmt, ...)
{
	size_t used;
	va_list ap;

	if (!err || !errlen)
		return;
	used = strnlen(err, errlen);
	if (used + 1 >= errlen)
		return;
	if (used)
		err[used++] = '\n';
	va_start(ap, fmt);
	vsnprintf(err + used, errlen - used, fmt, ap);
	va_end(ap);
}

/* Contract: err.h. */
char *secho_err_safe(char *dst, size_t cap, const char *s)
{
	size_t n = 0;

	if (!cap)
		return dst;
	for (const unsigned char *p = (const unsigned char *)s; *p && n + 1 < cap; p++) {
		char one[5];
		int w;

		if (*p == '\\')
			w = snprintf(one, sizeof(one), "\\\\");
		else if (*p >= 0x20 && *p < 0x7f)
			w = snprintf(one, sizeof(one), "%c", *p);
		else
			w = snprintf(one, sizeof(one), "\\x%02x", *p);
		if (n + (size_t)w >= cap)
			break;
		memcpy(dst + n, one, (size_t)w);
		n += (size_t)w;
	}
	dst[n] = '\0';
	return dst;
}
