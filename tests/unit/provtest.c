/* tests/unit/provtest.c - see provtest.h. */
#include "provtest.h"

#include <libgen.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int pt_open(struct pt_env *e, char *why, size_t cap)
{
	memset(e, 0, sizeof(*e));
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		snprintf(why, cap, "cannot read /proc/self/exe");
		return -1;
	}
	exe[n] = '\0';
	/* <tree>/tests/<binary> -> <tree> */
	snprintf(e->dir, sizeof(e->dir), "%s", dirname(dirname(exe)));
	e->libctx = OSSL_LIB_CTX_new();
	if (!e->libctx || !OSSL_PROVIDER_set_default_search_path(e->libctx, e->dir)) {
		snprintf(why, cap, "no library context");
		return -1;
	}
	e->deflt = OSSL_PROVIDER_load(e->libctx, "default");
	e->secho = OSSL_PROVIDER_load(e->libctx, "secho");
	if (!e->deflt || !e->secho) {
		char err[512];
		snprintf(why, cap, "cannot load %s from %s: %s", e->secho ? "default" : "secho.so",
		         e->dir, pt_errors(err, sizeof(err)));
		pt_close(e);
		return -1;
	}
	return 0;
}

void pt_close(struct pt_env *e)
{
	if (e->secho)
		OSSL_PROVIDER_unload(e->secho);
	if (e->deflt)
		OSSL_PROVIDER_unload(e->deflt);
	OSSL_LIB_CTX_free(e->libctx);
	memset(e, 0, sizeof(*e));
}

uint64_t pt_counter(const struct pt_env *e, const char *name)
{
	char key[64];
	uint64_t v = 0;
	snprintf(key, sizeof(key), "secho-%s", name);
	OSSL_PARAM p[] = {OSSL_PARAM_construct_uint64(key, &v), OSSL_PARAM_construct_end()};
	if (!OSSL_PROVIDER_get_params(e->secho, p) || !OSSL_PARAM_modified(p))
		return UINT64_MAX;
	return v;
}

const char *pt_vector_path(const char *rel, char *buf, size_t cap)
{
	const char *root = getenv("SECHO_ROOT");
	snprintf(buf, cap, "%s/../shared/vectors/%s", root && *root ? root : ".", rel);
	return buf;
}

const char *pt_errors(char *buf, size_t cap)
{
	size_t n = 0;
	unsigned long e;
	const char *file, *data;
	int line, flags;
	buf[0] = '\0';
	while ((e = ERR_get_error_all(&file, &line, NULL, &data, &flags)) != 0) {
		char one[256];
		ERR_error_string_n(e, one, sizeof(one));
		int w = snprintf(buf + n, n < cap ? cap - n : 0, "%s%s%s%s", n ? "; " : "", one,
		                 (flags & ERR_TXT_STRING) && data && *data ? ": " : "",
		                 (flags & ERR_TXT_STRING) && data ? data : "");
		if (w > 0)
			n += (size_t)w;
		if (n >= cap)
			n = cap - 1;
	}
	return buf;
}
