/*
 * src/sys/err.h - the libraries' error messages (src/sys/err.c).
 *
 * One convention below src/cli: a function that can fail returns -errno (the crypto
 * library keeps its own codes) and, when the caller gave one, fills an error buffer
 * (char *err, size_t errlen) with the reason: plain text, no program name, no trailing
 * newline. Only src/cli prints it (after "secho CMD: ") and chooses the exit status. A
 * function that can meet several failures in one call (a run that drains several workers)
 * adds one line for each with secho_err_add(); the caller prints each line.
 */
#ifndef SECHO_SYS_ERR_H
#define SECHO_SYS_ERR_H

#include <stddef.h>

/* Append one line to err (a '\n' before it when err holds text already); truncated to
 * errlen, always terminated when errlen > 0. Can't fail. */
void secho_err_add(char *err, size_t errlen, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* Copy s into dst (cap bytes, terminated), with bytes outside printable ASCII and the
 * backslash escaped (\\xNN, \\\\): text that came from the network. Returns dst. */
char *secho_err_safe(char *dst, size_t cap, const char *s);

#endif
