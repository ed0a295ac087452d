/*
 * src/host/hostkey.c - reading the run's key file. Contract: include/secho/host.h.
 *
 * Format (written by `secho keygen`): text lines
 *   key-id N        decimal 0..65535 (or 0x hex)
 *   key HEX64       the AES-256 key
 *   salt HEX8       the 4-byte IV salt
 * Blank lines and lines starting with '#' are ignored. The file must not be readable by
 * group or others: a key that anyone on the machine can read is refused, not used.
 * Errors name the line, never the key material.
 */
#include "secho/host.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Parses exactly 2*n hex digits from s into out; returns 0 or -1. */
static int unhex(const char *s, size_t slen, uint8_t *out, size_t n)
{
	if (slen != 2 * n)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int hi = hexval((unsigned char)s[2 * i]), lo = hexval((unsigned char)s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

void secho_host_key_wipe(struct secho_host_key *k)
{
	explicit_bzero(k, sizeof(*k));
}

int secho_host_key_load(const char *path, struct secho_host_key *k, char *err, size_t errlen)
{
	char buf[4096];
	struct stat st;
	ssize_t got;
	size_t total = 0;
	int fd, have = 0, lineno = 0, rc = -1;
	char *line, *save = NULL;

	memset(k, 0, sizeof(*k));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		goto out;
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		snprintf(err, errlen,
		         "%s: group or others can access it (mode %03o); run chmod 600 %s", path,
		         (unsigned)(st.st_mode & 0777), path);
		goto out;
	}
	while (total < sizeof(buf) - 1 &&
	       (got = read(fd, buf + total, sizeof(buf) - 1 - total)) > 0)
		total += (size_t)got;
	if (total >= sizeof(buf) - 1) {
		snprintf(err, errlen, "%s: too large for a key file", path);
		goto out;
	}
	buf[total] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *p = line, *word, *val, *end;
		size_t vlen;

		lineno++;
		while (isspace((unsigned char)*p))
			p++;
		if (*p == '\0' || *p == '#')
			continue;
		word = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		if (*p)
			*p++ = '\0';
		while (isspace((unsigned char)*p))
			p++;
		val = p;
		vlen = strlen(val);
		while (vlen && isspace((unsigned char)val[vlen - 1]))
			val[--vlen] = '\0';
		if (strcmp(word, "key-id") == 0) {
			unsigned long id;

			errno = 0;
			id = strtoul(val, &end, 0);
			if (errno || end == val || *end || id > 0xffff) {
				snprintf(err, errlen, "%s:%d: key-id must be 0..65535", path,
				         lineno);
				goto out;
			}
			k->key_id = (uint16_t)id;
			have |= 1;
		} else if (strcmp(word, "key") == 0) {
			if (unhex(val, vlen, k->key, 32) < 0) {
				snprintf(err, errlen, "%s:%d: key must be 64 hex digits", path,
				         lineno);
				goto out;
			}
			have |= 2;
		} else if (strcmp(word, "salt") == 0) {
			if (unhex(val, vlen, k->salt, 4) < 0) {
				snprintf(err, errlen, "%s:%d: salt must be 8 hex digits", path,
				         lineno);
				goto out;
			}
			have |= 4;
		}
		/* Other keywords (a comment field, a creation date) are tolerated. */
	}
	if (have != 7) {
		snprintf(err, errlen, "%s: missing %s%s%s", path, (have & 1) ? "" : "key-id ",
		         (have & 2) ? "" : "key ", (have & 4) ? "" : "salt");
		goto out;
	}
	rc = 0;
out:
	explicit_bzero(buf, sizeof(buf));
	close(fd);
	if (rc)
		secho_host_key_wipe(k);
	return rc;
}
