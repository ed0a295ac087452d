/*
 * tests/unit/provtest.h - what the provider tests (test_provider_*.c) share: a library
 * context with OpenSSL's default provider and secho loaded from this build tree, the
 * provider's counters, and the vector directory.
 *
 * The module is the secho.so of the build tree the test binary belongs to
 * (<tree>/tests/test_x -> <tree>/secho.so: build/ for the normal run, build/asan/ for the
 * sanitizer run), so each run tests the module built with it.
 */
#ifndef SECHO_TEST_PROVTEST_H
#define SECHO_TEST_PROVTEST_H

#include <openssl/evp.h>
#include <openssl/provider.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pt_env {
	OSSL_LIB_CTX *libctx;
	OSSL_PROVIDER *secho, *deflt;
	char dir[4096]; /* where secho.so was loaded from */
};

/* A fresh library context with "default" and "secho" loaded (no configuration file is
 * read). 0, or -1 with the reason in why. */
int pt_open(struct pt_env *e, char *why, size_t cap);
void pt_close(struct pt_env *e);
/* A provider counter ("secho-<name>"); UINT64_MAX when it cannot be read. */
uint64_t pt_counter(const struct pt_env *e, const char *name);
/* ../shared/vectors/<rel> from the repository root ($SECHO_ROOT, else the current
 * directory), into buf. */
const char *pt_vector_path(const char *rel, char *buf, size_t cap);
/* All OpenSSL errors queued, as one line (for messages), and the queue cleared. */
const char *pt_errors(char *buf, size_t cap);

#endif
