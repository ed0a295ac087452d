/*
 * src/provider/provider.c - the OpenSSL 3 provider "secho": entry point, algorithm table,
 * provider parameters, counters and errors.
 *
 * Loaded as a module (build/secho.so): `openssl ... -provider-path build -provider secho`,
 * OPENSSL_MODULES, an OPENSSL_CONF that activates it, or `make install` into the
 * directory `openssl version -m` names (docs/PROVIDER.md). Every algorithm carries the
 * property "provider=secho", so `-propquery provider=secho` or EVP_CIPHER_fetch(ctx,
 * "AES-256-GCM", "provider=secho") selects it and `default_properties = ?provider=secho`
 * prefers it.
 *
 * Proof of use. The counters (SP_COUNTERS in prov.h, bytes per mode) can be read as the
 * provider parameters "secho-<name>" (OSSL_PROVIDER_get_params), and an unmodified program
 * can leave them behind: when the environment names a file in SECHO_PROVIDER_STATS
 * (ignored in set-uid programs: secure_getenv), the provider appends one line to it when
 * it is unloaded (OpenSSL's exit handler). Only this module writes that line and only its
 * own code paths count, so a connection served by another provider shows no records.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "provider/prov.h"

/* ---- algorithms ---- */

#define SP_ALG_DEF(sym, nm, md, kl, fam)                                                           \
	const struct sp_alg sp_alg_##sym = {nm, SP_##md, SP_EVP_##md, kl, SP_IV_##md, SP_BS_##md};
SP_ALGS(SP_ALG_DEF)

#define SP_ALG_ENTRY(sym, nm, md, kl, fam)                                                         \
	{nm, "provider=" SP_NAME, sp_dispatch_##sym, "secho AES (" #sym ")"},
/* The list macro expands to the entries, commas included. */
/* clang-format off */
static const OSSL_ALGORITHM ciphers[] = {
	SP_ALGS(SP_ALG_ENTRY)
	{NULL, NULL, NULL, NULL},
};
/* clang-format on */

static const OSSL_ALGORITHM *query_operation(void *provctx, int operation_id, int *no_cache)
{
	(void)provctx;
	*no_cache = 0;
	return operation_id == OSSL_OP_CIPHER ? ciphers : NULL;
}

/* ---- errors ---- */

static const OSSL_ITEM reasons[] = {
        {SP_R_UNAVAILABLE, "secho: the AES implementation refused the key"},
        {SP_R_OVERLAP, "secho: input and output overlap partially"},
        {SP_R_RANDOM, "secho: no random bytes"},
        {SP_R_LIBRARY, "secho: crypto library error"},
        {SP_R_STATE, "secho: call out of order"},
        {SP_R_NOT_SUPPORTED, "secho: parameter value not supported"},
        {0, NULL},
};

static const OSSL_ITEM *get_reason_strings(void *provctx)
{
	(void)provctx;
	return reasons;
}

/* Raise an error in the loading libcrypto's queue. Can't fail; a no-op when the core
 * gave no error functions. */
void sp_raise(const struct sp_prov *p, uint32_t reason, const char *file, int line,
              const char *func, const char *fmt, ...)
{
	if (!p || !p->new_error || !p->vset_error)
		return;
	va_list ap;
	va_start(ap, fmt);
	p->new_error(p->handle);
	if (p->set_error_debug)
		p->set_error_debug(p->handle, file, line, func);
	p->vset_error(p->handle, reason, fmt, ap);
	va_end(ap);
}

/* ---- provider parameters and counters ---- */

static const char *const mode_names[SP_MODE_COUNT] = {
#define SP_MODE_NAME(id, name) name,
        SP_MODES(SP_MODE_NAME)
#undef SP_MODE_NAME
};

/* "name=value" for every counter, then bytes_<mode>, space-separated. */
size_t sp_stats_line(const struct sp_prov *p, char *buf, size_t cap)
{
	size_t n = 0;
#define SP_COUNTER_PRINT(name, text)                                                               \
	n += (size_t)snprintf(buf + (n < cap ? n : cap), n < cap ? cap - n : 0, " %s=%llu", #name, \
	                      (unsigned long long)atomic_load(&p->stats.name));
	SP_COUNTERS(SP_COUNTER_PRINT)
#undef SP_COUNTER_PRINT
	for (int m = 0; m < SP_MODE_COUNT; m++)
		n += (size_t)snprintf(buf + (n < cap ? n : cap), n < cap ? cap - n : 0,
		                      " bytes_%s=%llu", mode_names[m],
		                      (unsigned long long)atomic_load(&p->stats.bytes[m]));
	return n;
}

#define SP_PARAM_PREFIX "secho-"

static const OSSL_PARAM prov_gettable[] = {
        OSSL_PARAM_utf8_ptr(OSSL_PROV_PARAM_NAME, NULL, 0),
        OSSL_PARAM_utf8_ptr(OSSL_PROV_PARAM_VERSION, NULL, 0),
        OSSL_PARAM_utf8_ptr(OSSL_PROV_PARAM_BUILDINFO, NULL, 0),
        OSSL_PARAM_int(OSSL_PROV_PARAM_STATUS, NULL),
        OSSL_PARAM_utf8_ptr(SP_PARAM_PREFIX "impl", NULL, 0),
#define SP_COUNTER_PARAM(name, text) OSSL_PARAM_uint64(SP_PARAM_PREFIX #name, NULL),
        SP_COUNTERS(SP_COUNTER_PARAM)
#undef SP_COUNTER_PARAM
#define SP_BYTES_PARAM(id, name) OSSL_PARAM_uint64(SP_PARAM_PREFIX "bytes-" name, NULL),
                SP_MODES(SP_BYTES_PARAM)
#undef SP_BYTES_PARAM
                        OSSL_PARAM_END,
};

static const OSSL_PARAM *gettable_params(void *provctx)
{
	(void)provctx;
	return prov_gettable;
}

static int get_params(void *provctx, OSSL_PARAM params[])
{
	struct sp_prov *prov = provctx;
	OSSL_PARAM *p;
	if ((p = sp_param_find_mut(params, OSSL_PROV_PARAM_NAME)) &&
	    !sp_param_set_utf8(p, "secho AES provider"))
		return 0;
	if ((p = sp_param_find_mut(params, OSSL_PROV_PARAM_VERSION)) &&
	    !sp_param_set_utf8(p, SP_VERSION))
		return 0;
	if ((p = sp_param_find_mut(params, OSSL_PROV_PARAM_BUILDINFO)) &&
	    !sp_param_set_utf8(p, "secho " SP_VERSION " (" __DATE__ ")"))
		return 0;
	if ((p = sp_param_find_mut(params, OSSL_PROV_PARAM_STATUS)) && !sp_param_set_u64(p, 1))
		return 0;
	/* What a key made now gets: AUTO resolved (SECHO_IMPL, else the best the CPU has). */
	if ((p = sp_param_find_mut(params, SP_PARAM_PREFIX "impl")) &&
	    !sp_param_set_utf8(p, secho_impl_name(secho_impl_resolve(SECHO_IMPL_AUTO))))
		return 0;
#define SP_COUNTER_GET(name, text)                                                                 \
	if ((p = sp_param_find_mut(params, SP_PARAM_PREFIX #name)) &&                              \
	    !sp_param_set_u64(p, atomic_load(&prov->stats.name)))                                  \
		return 0;
	SP_COUNTERS(SP_COUNTER_GET)
#undef SP_COUNTER_GET
	for (int m = 0; m < SP_MODE_COUNT; m++) {
		char key[32];
		snprintf(key, sizeof(key), SP_PARAM_PREFIX "bytes-%s", mode_names[m]);
		if ((p = sp_param_find_mut(params, key)) &&
		    !sp_param_set_u64(p, atomic_load(&prov->stats.bytes[m])))
			return 0;
	}
	return 1;
}

/* Append the stats line to $SECHO_PROVIDER_STATS, in one write (O_APPEND: lines of
 * concurrent processes do not mix). Errors are ignored: this runs at exit. */
static void write_stats(const struct sp_prov *p)
{
	const char *path = secure_getenv("SECHO_PROVIDER_STATS");
	if (!path || !*path)
		return;
	char exe[256] = "?", line[1024];
	ssize_t r = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (r > 0)
		exe[r] = '\0';
	int n = snprintf(line, sizeof(line), "secho-provider pid=%ld exe=%s impl=%s",
	                 (long)getpid(), exe, secho_impl_name(secho_impl_resolve(SECHO_IMPL_AUTO)));
	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	size_t len = (size_t)n;
	len += sp_stats_line(p, line + len, sizeof(line) - len);
	if (len >= sizeof(line) - 1)
		return;
	line[len++] = '\n';
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (write(fd, line, len) != (ssize_t)len) {
		/* nothing to do about it at exit */
	}
	close(fd);
}

static void teardown(void *provctx)
{
	struct sp_prov *prov = provctx;
	if (!prov)
		return;
	write_stats(prov);
	free(prov);
}

static const OSSL_DISPATCH provider_dispatch[] = {
        {OSSL_FUNC_PROVIDER_TEARDOWN, (void (*)(void))teardown},
        {OSSL_FUNC_PROVIDER_GETTABLE_PARAMS, (void (*)(void))gettable_params},
        {OSSL_FUNC_PROVIDER_GET_PARAMS, (void (*)(void))get_params},
        {OSSL_FUNC_PROVIDER_QUERY_OPERATION, (void (*)(void))query_operation},
        {OSSL_FUNC_PROVIDER_GET_REASON_STRINGS, (void (*)(void))get_reason_strings},
        {0, NULL},
};

/*
 * The module's one exported symbol. Takes the core's error functions from `in`; returns
 * 1 with *provctx set, or 0 (no memory). The crypto library's CPU dispatch is resolved
 * per key (SECHO_IMPL in the environment chooses, as for every secho program).
 */
__attribute__((visibility("default"))) OSSL_provider_init_fn OSSL_provider_init;
int OSSL_provider_init(const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in,
                       const OSSL_DISPATCH **out, void **provctx)
{
	struct sp_prov *prov = calloc(1, sizeof(*prov));
	if (!prov)
		return 0;
	prov->handle = handle;
	for (; in && in->function_id; in++) {
		switch (in->function_id) {
		case OSSL_FUNC_CORE_NEW_ERROR:
			prov->new_error = OSSL_FUNC_core_new_error(in);
			break;
		case OSSL_FUNC_CORE_SET_ERROR_DEBUG:
			prov->set_error_debug = OSSL_FUNC_core_set_error_debug(in);
			break;
		case OSSL_FUNC_CORE_VSET_ERROR:
			prov->vset_error = OSSL_FUNC_core_vset_error(in);
			break;
		default:
			break;
		}
	}
	*out = provider_dispatch;
	*provctx = prov;
	return 1;
}
