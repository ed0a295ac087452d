/*
 * secho/keyfile.h - the endpoint's key file and protected memory for key material.
 *
 * Key file (docs/PROTOCOL.md, "Key file"): text, mode 0600, one field per line:
 *
 *   secho-key 1
 *   key-id 7
 *   key 000102...1f        (64 hex digits: the AES-256 key)
 *   salt a1b2c3d4          (8 hex digits: the 4 salt bytes of the IV, in this order)
 *   shared yes             (optional: several endpoints use this key; "no" is the default)
 *
 * Blank lines and lines starting with '#' are ignored; the first other line must be
 * "secho-key 1"; key-id, key and salt appear exactly once, shared at most once. Errors
 * name the line, never its value. A shared key makes each endpoint fold its own instance
 * id into the IV's fixed field (docs/PROTOCOL.md, "Shared keys").
 */
#ifndef SECHO_KEYFILE_H
#define SECHO_KEYFILE_H

#include "secho/proto.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* SECHO_KEY_LEN and SECHO_SALT_LEN: secho/proto.h. */
#define SECHO_KEYFILE_MAX 4096 /* larger files are refused */

struct secho_keyfile {
	uint16_t key_id;
	uint8_t key[SECHO_KEY_LEN];
	uint8_t salt[SECHO_SALT_LEN];
	uint8_t shared;   /* 1: "shared yes", used by several endpoints (each its instance id) */
	uint8_t reserved; /* 0: the struct has no padding (it is compared and wiped as bytes) */
};

/*
 * Fill k with key_id and a fresh key and salt from getrandom(2), not shared. Returns 0 or
 * -errno (getrandom failure; k is wiped then).
 */
int secho_keyfile_generate(struct secho_keyfile *k, uint16_t key_id);

/*
 * Write k to path, created with O_CREAT|O_EXCL and mode 0600, then fsync. With force, an
 * existing regular file is replaced (written to a temporary file in the same directory,
 * then renamed over it). Returns 0 or -errno with a message (no key bytes) in err.
 */
int secho_keyfile_write(const char *path, const struct secho_keyfile *k, bool force, char *err,
                        size_t errlen);

/*
 * Load path into k. Refuses (-EPERM) a file any group or other permission bit is set on
 * (checked with fstat on the opened descriptor), a non-regular file (-EINVAL), a file
 * larger than SECHO_KEYFILE_MAX (-EFBIG), and a malformed one (-EINVAL, err names the
 * line). Returns 0 or -errno; on error k is wiped. The read buffer is wiped before return.
 */
int secho_keyfile_load(const char *path, struct secho_keyfile *k, char *err, size_t errlen);

/* Parse the text of a key file (same rules and errors as load). */
int secho_keyfile_parse(const char *text, size_t len, struct secho_keyfile *k, char *err,
                        size_t errlen);

/* Wipe k (secho_wipe). */
void secho_keyfile_wipe(struct secho_keyfile *k);

/*
 * Make the process non-dumpable (prctl PR_SET_DUMPABLE 0: no core files, no ptrace by
 * other users). Returns 0 or -errno.
 */
int secho_secret_process_protect(void);

/*
 * Memory for key material: whole pages from mmap, locked with mlock where allowed
 * (RLIMIT_MEMLOCK may refuse: then *locked is false and the memory is still usable),
 * excluded from core dumps with MADV_DONTDUMP. Returns the zeroed memory or NULL (errno
 * set). Free with secho_secret_free(p, n), which wipes, unlocks and unmaps.
 */
void *secho_secret_alloc(size_t n, bool *locked);
void secho_secret_free(void *p, size_t n);

#ifdef __cplusplus
}
#endif
#endif
