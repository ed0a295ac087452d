/*
 * src/engine/keyfile.c - key file generation, writing, loading; protected key memory.
 *
 * Format and rules: include/secho/keyfile.h and docs/PROTOCOL.md ("Key file"). Secrets
 * never reach an error message: messages name the line and the rule, not the value.
 * Hex decoding of the key is branch-free on the digit values (the parser's control flow
 * depends only on the file's layout, not on the key bytes).
 */
#include <secho/keyfile.h>

#include <secho/aes.h>
#include <secho/fileio.h>

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

/* Error text into the caller's buffer. A macro rather than a va_list function: clang-tidy
 * 14's va_list checker reports false positives across translation units. */
#define set_err(err, errlen, ...)                                                                  \
	do {                                                                                       \
		if ((err) && (errlen))                                                             \
			snprintf((err), (errlen), __VA_ARGS__);                                    \
	} while (0)

void secho_keyfile_wipe(struct secho_keyfile *k)
{
	secho_wipe(k, sizeof(*k));
}

int secho_keyfile_generate(struct secho_keyfile *k, uint16_t key_id)
{
	uint8_t buf[SECHO_KEY_LEN + SECHO_SALT_LEN];
	size_t got = 0;
	while (got < sizeof(buf)) {
		ssize_t r = getrandom(buf + got, sizeof(buf) - got, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			secho_wipe(buf, sizeof(buf));
			secho_keyfile_wipe(k);
			return -e;
		}
		got += (size_t)r;
	}
	k->key_id = key_id;
	memcpy(k->key, buf, SECHO_KEY_LEN);
	memcpy(k->salt, buf + SECHO_KEY_LEN, SECHO_SALT_LEN);
	secho_wipe(buf, sizeof(buf));
	return 0;
}

/* Constant-time hex digit value: 0..15, or -1 (returned as a flag, data-independent
 * arithmetic: every byte goes through the same operations). */
static int hexval_ct(unsigned c)
{
	/* masks are all-ones when c is in the range */
	int d = (int)c - '0', l = (int)(c | 0x20) - 'a';
	int md = ((d >> 8) | ((9 - d) >> 8)) ^ -1; /* 0 <= d <= 9 */
	int ml = ((l >> 8) | ((5 - l) >> 8)) ^ -1; /* 0 <= l <= 5 */
	return (d & md) | ((l + 10) & ml) | ~(md | ml);
}

/* Decode exactly 2*n hex digits from s into out. Returns 0, or -1 if any is not hex
 * (which one is not revealed). */
static int unhex_ct(const char *s, uint8_t *out, size_t n)
{
	int bad = 0;
	for (size_t i = 0; i < n; i++) {
		int hi = hexval_ct((unsigned char)s[2 * i]);
		int lo = hexval_ct((unsigned char)s[2 * i + 1]);
		bad |= (hi | lo) & 0x100; /* -1 has bit 8 set; 0..15 do not */
		out[i] = (uint8_t)(((unsigned)hi & 0x0f) << 4 | ((unsigned)lo & 0x0f));
	}
	return bad ? -1 : 0;
}

static void hex_encode(char *out, const uint8_t *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = 0;
}

int secho_keyfile_parse(const char *text, size_t len, struct secho_keyfile *k, char *err,
                        size_t errlen)
{
	bool seen_magic = false, seen_id = false, seen_key = false, seen_salt = false;
	bool seen_shared = false;
	unsigned line = 0;
	size_t pos = 0;
	int rc = -EINVAL;

	memset(k, 0, sizeof(*k));
	while (pos < len) {
		size_t start = pos;
		while (pos < len && text[pos] != '\n')
			pos++;
		size_t n = pos - start;
		const char *l = text + start;
		if (pos < len)
			pos++; /* the newline */
		line++;
		if (n && l[n - 1] == '\r')
			n--;
		if (memchr(l, 0, n)) {
			set_err(err, errlen, "line %u: NUL byte", line);
			goto fail;
		}
		if (n == 0 || l[0] == '#')
			continue;
		if (!seen_magic) {
			if (n != 11 || memcmp(l, "secho-key 1", 11) != 0) {
				set_err(err, errlen,
				        "line %u: expected \"secho-key 1\" (not a secho key file, "
				        "or "
				        "an unsupported version)",
				        line);
				goto fail;
			}
			seen_magic = true;
			continue;
		}
		if (n > 7 && memcmp(l, "key-id ", 7) == 0) {
			if (seen_id) {
				set_err(err, errlen, "line %u: key-id given twice", line);
				goto fail;
			}
			size_t dn = n - 7;
			unsigned long v = 0;
			bool ok = dn >= 1 && dn <= 5;
			for (size_t i = 0; ok && i < dn; i++) {
				char c = l[7 + i];
				ok = c >= '0' && c <= '9';
				v = v * 10 + (unsigned long)(c - '0');
			}
			if (!ok || (dn > 1 && l[7] == '0') || v > 65535) {
				set_err(err, errlen,
				        "line %u: key-id must be a decimal number in 0..65535",
				        line);
				goto fail;
			}
			k->key_id = (uint16_t)v;
			seen_id = true;
		} else if (n > 4 && memcmp(l, "key ", 4) == 0) {
			if (seen_key) {
				set_err(err, errlen, "line %u: key given twice", line);
				goto fail;
			}
			if (n - 4 != 2 * SECHO_KEY_LEN ||
			    unhex_ct(l + 4, k->key, SECHO_KEY_LEN) != 0) {
				set_err(err, errlen, "line %u: key must be exactly 64 hex digits",
				        line);
				goto fail;
			}
			seen_key = true;
		} else if (n > 5 && memcmp(l, "salt ", 5) == 0) {
			if (seen_salt) {
				set_err(err, errlen, "line %u: salt given twice", line);
				goto fail;
			}
			if (n - 5 != 2 * SECHO_SALT_LEN ||
			    unhex_ct(l + 5, k->salt, SECHO_SALT_LEN) != 0) {
				set_err(err, errlen, "line %u: salt must be exactly 8 hex digits",
				        line);
				goto fail;
			}
			seen_salt = true;
		} else if (n > 7 && memcmp(l, "shared ", 7) == 0) {
			if (seen_shared) {
				set_err(err, errlen, "line %u: shared given twice", line);
				goto fail;
			}
			if (n - 7 == 3 && memcmp(l + 7, "yes", 3) == 0) {
				k->shared = 1;
			} else if (!(n - 7 == 2 && memcmp(l + 7, "no", 2) == 0)) {
				set_err(err, errlen, "line %u: shared must be yes or no", line);
				goto fail;
			}
			seen_shared = true;
		} else {
			set_err(err, errlen,
			        "line %u: unknown field (expected key-id, key, salt or shared)",
			        line);
			goto fail;
		}
	}
	if (!seen_magic) {
		set_err(err, errlen, "empty file: expected \"secho-key 1\"");
		goto fail;
	}
	if (!seen_id || !seen_key || !seen_salt) {
		set_err(err, errlen, "missing field: %s",
		        !seen_id    ? "key-id"
		        : !seen_key ? "key"
		                    : "salt");
		goto fail;
	}
	return 0;
fail:
	secho_keyfile_wipe(k);
	return rc;
}

int secho_keyfile_load(const char *path, struct secho_keyfile *k, char *err, size_t errlen)
{
	char buf[SECHO_KEYFILE_MAX + 1];
	size_t len = 0;
	int rc;

	memset(k, 0, sizeof(*k));
	/* O_NONBLOCK: opening a FIFO (or a device) must not wait for a writer; whatever it
	 * is, fstat below refuses it. A regular file ignores the flag. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		rc = -errno;
		struct stat lst;
		/* O_NOFOLLOW's ELOOP ("Too many levels of symbolic links") means a link */
		if (rc == -ELOOP && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode))
			set_err(err, errlen,
			        "%s: is a symbolic link; a key file is read only from a regular "
			        "file "
			        "(links are refused, not followed)",
			        path);
		else
			set_err(err, errlen, "%s: cannot open: %s", path, strerror(-rc));
		return rc;
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		rc = -errno;
		set_err(err, errlen, "%s: fstat: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		set_err(err, errlen, "%s: not a regular file", path);
		goto out;
	}
	if (st.st_mode & 077) {
		rc = -EPERM;
		set_err(err, errlen,
		        "%s: permissions %04o are too open (group or others have access); "
		        "run chmod 600 on it",
		        path, (unsigned)(st.st_mode & 07777));
		goto out;
	}
	if (st.st_size > SECHO_KEYFILE_MAX) {
		rc = -EFBIG;
		set_err(err, errlen, "%s: larger than %d bytes: not a key file", path,
		        SECHO_KEYFILE_MAX);
		goto out;
	}
	for (;;) {
		ssize_t r = read(fd, buf + len, sizeof(buf) - len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			set_err(err, errlen, "%s: read: %s", path, strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		len += (size_t)r;
		if (len > SECHO_KEYFILE_MAX) {
			rc = -EFBIG;
			set_err(err, errlen, "%s: larger than %d bytes: not a key file", path,
			        SECHO_KEYFILE_MAX);
			goto out;
		}
	}
	char perr[200];
	rc = secho_keyfile_parse(buf, len, k, perr, sizeof(perr));
	if (rc)
		set_err(err, errlen, "%s: %s", path, perr);
out:
	secho_wipe(buf, sizeof(buf));
	close(fd);
	if (rc)
		secho_keyfile_wipe(k);
	return rc;
}

/* Write all of p to fd. Returns 0 or -errno. */
/* fsync the directory holding path, so a create or rename survives a crash. */
static int fsync_parent(const char *path)
{
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	int dfd = open(dirname(tmp), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	int rc = fsync(dfd) ? -errno : 0;
	close(dfd);
	return rc;
}

int secho_keyfile_write(const char *path, const struct secho_keyfile *k, bool force, char *err,
                        size_t errlen)
{
	char text[160];
	char keyhex[2 * SECHO_KEY_LEN + 1], salthex[2 * SECHO_SALT_LEN + 1];
	char tmp[PATH_MAX];
	const char *target = path;
	int rc = 0, fd;

	hex_encode(keyhex, k->key, SECHO_KEY_LEN);
	hex_encode(salthex, k->salt, SECHO_SALT_LEN);
	int n = snprintf(text, sizeof(text), "secho-key 1\nkey-id %u\nkey %s\nsalt %s\n%s",
	                 (unsigned)k->key_id, keyhex, salthex, k->shared ? "shared yes\n" : "");
	secho_wipe(keyhex, sizeof(keyhex));

	if (force) {
		/* Replace atomically: never truncate a key file in place. */
		rc = secho_file_check_target(path, err, errlen);
		if (rc)
			goto out;
		if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >=
		    (int)sizeof(tmp)) {
			rc = -ENAMETOOLONG;
			set_err(err, errlen, "%s: path too long", path);
			goto out;
		}
		target = tmp;
	}
	fd = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		rc = -errno;
		if (errno == EEXIST && !force)
			set_err(err, errlen, "%s: already exists (use --force to replace it)",
			        path);
		else
			set_err(err, errlen, "%s: cannot create: %s", target, strerror(errno));
		goto out;
	}
	/* The umask could only remove bits; make sure no group/other bit is set either. */
	if (fchmod(fd, 0600) != 0 || (rc = secho_write_all(fd, text, (size_t)n)) != 0 ||
	    fsync(fd) != 0) {
		rc = rc ? rc : -errno;
		set_err(err, errlen, "%s: write: %s", target, strerror(-rc));
		close(fd);
		unlink(target);
		goto out;
	}
	close(fd);
	if (force && rename(tmp, path) != 0) {
		rc = -errno;
		set_err(err, errlen, "%s: rename: %s", path, strerror(errno));
		unlink(tmp);
		goto out;
	}
	rc = fsync_parent(path);
	if (rc)
		set_err(err, errlen, "%s: fsync of the directory: %s", path, strerror(-rc));
out:
	secho_wipe(text, sizeof(text));
	return rc;
}

int secho_secret_process_protect(void)
{
	return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0 ? 0 : -errno;
}

static size_t page_round(size_t n)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	return (n + pg - 1) / pg * pg;
}

void *secho_secret_alloc(size_t n, bool *locked)
{
	if (locked)
		*locked = false;
	if (n == 0) {
		errno = EINVAL;
		return NULL;
	}
	size_t sz = page_round(n);
	void *p = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	(void)madvise(p, sz, MADV_DONTDUMP); /* best effort: keep keys out of core files */
	if (mlock(p, sz) == 0 && locked)
		*locked = true;
	return p;
}

void secho_secret_free(void *p, size_t n)
{
	if (!p)
		return;
	size_t sz = page_round(n);
	secho_wipe(p, sz);
	munlock(p, sz);
	munmap(p, sz);
}
