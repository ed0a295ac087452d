/*
 * src/crypto/impl.c - implementation registry and run-time dispatch.
 *
 * AUTO resolves to: the id forced by secho_impl_force(), else the SECHO_IMPL environment
 * variable (read once; an unknown or unavailable name is reported on stderr once and
 * ignored), else the best implementation for the CPU: vaes-split where the cores split
 * 512-bit instructions into two 256-bit halves (SECHO_CPU_SPLIT512: AMD family 19h) and
 * it is available, otherwise vaes > aesni > portable.
 */
#include "crypto/inner.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

/*
 * Every table is referenced strongly: a weak reference would not pull it out of the
 * static library. The tables are declared in inner.h.
 */

static const char *const names[SECHO_IMPL_COUNT] = {"auto", "portable", "aesni", "vaes",
                                                    "vaes-split"};

static const struct secho_gcm_impl *table(secho_impl_id id)
{
	switch (id) {
	case SECHO_IMPL_PORTABLE:
		return &secho_gcm_ct64_impl;
	case SECHO_IMPL_AESNI:
		return &secho_gcm_ni_impl;
	case SECHO_IMPL_VAES:
		return &secho_gcm_vaes_impl;
	case SECHO_IMPL_VAES_SPLIT:
		return &secho_gcm_vaes_split_impl;
	default:
		return NULL;
	}
}

const char *secho_impl_name(secho_impl_id id)
{
	return (unsigned)id < SECHO_IMPL_COUNT ? names[id] : "unknown";
}

int secho_impl_from_name(const char *name, secho_impl_id *out)
{
	if (!name || !out)
		return SECHO_EINVAL;
	for (unsigned i = 0; i < SECHO_IMPL_COUNT; i++) {
		if (strcasecmp(name, names[i]) == 0) {
			*out = (secho_impl_id)i;
			return SECHO_OK;
		}
	}
	return SECHO_EINVAL;
}

bool secho_impl_available(secho_impl_id id)
{
	if (id == SECHO_IMPL_AUTO)
		return true;
	const struct secho_gcm_impl *g = table(id);
	return g && g->aes && g->aes->available();
}

secho_impl_id secho_impl_best(void)
{
	if ((secho_cpu_features() & SECHO_CPU_SPLIT512) &&
	    secho_impl_available(SECHO_IMPL_VAES_SPLIT))
		return SECHO_IMPL_VAES_SPLIT;
	/* Everywhere else: the widest available, in the order the ids were added. */
	for (int i = SECHO_IMPL_VAES; i > SECHO_IMPL_AUTO; i--)
		if (secho_impl_available((secho_impl_id)i))
			return (secho_impl_id)i;
	return SECHO_IMPL_PORTABLE;
}

static _Atomic int forced = SECHO_IMPL_AUTO;

int secho_impl_force(secho_impl_id id)
{
	if ((unsigned)id >= SECHO_IMPL_COUNT)
		return SECHO_EINVAL;
	if (!secho_impl_available(id))
		return SECHO_EUNAVAIL;
	atomic_store(&forced, (int)id);
	return SECHO_OK;
}

/* The environment's choice, computed once: AUTO when unset or unusable. */
static secho_impl_id env_choice(void)
{
	static _Atomic int cached = -1;
	int c = atomic_load(&cached);
	if (c >= 0)
		return (secho_impl_id)c;
	secho_impl_id id = SECHO_IMPL_AUTO;
	const char *s = getenv("SECHO_IMPL");
	if (s && *s) {
		if (secho_impl_from_name(s, &id) != SECHO_OK) {
			fprintf(stderr,
			        "secho: SECHO_IMPL=%s is not one of auto, portable, aesni, vaes,"
			        " vaes-split; ignored\n",
			        s);
			id = SECHO_IMPL_AUTO;
		} else if (!secho_impl_available(id)) {
			fprintf(stderr,
			        "secho: SECHO_IMPL=%s is not available on this CPU; ignored\n", s);
			id = SECHO_IMPL_AUTO;
		}
	}
	int expected = -1;
	if (!atomic_compare_exchange_strong(&cached, &expected, (int)id))
		id = (secho_impl_id)expected; /* another thread won (and maybe printed) */
	return id;
}

secho_impl_id secho_impl_resolve(secho_impl_id id)
{
	if (id != SECHO_IMPL_AUTO)
		return id;
	int f = atomic_load(&forced);
	if (f != SECHO_IMPL_AUTO)
		return (secho_impl_id)f;
	secho_impl_id e = env_choice();
	return e != SECHO_IMPL_AUTO ? e : secho_impl_best();
}

const struct secho_gcm_impl *secho_gcm_impl_get(secho_impl_id id)
{
	if ((unsigned)id >= SECHO_IMPL_COUNT)
		return NULL;
	id = secho_impl_resolve(id);
	return secho_impl_available(id) ? table(id) : NULL;
}

const struct secho_aes_impl *secho_aes_impl_get(secho_impl_id id)
{
	const struct secho_gcm_impl *g = secho_gcm_impl_get(id);
	return g ? g->aes : NULL;
}

const char *secho_strerror(int err)
{
	switch (err) {
	case SECHO_OK:
		return "success";
	case SECHO_EINVAL:
		return "invalid argument";
	case SECHO_ELEN:
		return "length is not a multiple of the 16-byte block size";
	case SECHO_EAUTH:
		return "authentication tag mismatch";
	case SECHO_EUNAVAIL:
		return "implementation not available on this CPU";
	case SECHO_ESTATE:
		return "call out of order for this context";
	case SECHO_ELIMIT:
		return "length exceeds the limit of the standard";
	default:
		return "not a crypto library code";
	}
}

int secho_crypto_errno(int err)
{
	switch (err) {
	case SECHO_EINVAL:
	case SECHO_ELEN:
		return -EINVAL;
	case SECHO_EAUTH:
		return -EBADMSG;
	case SECHO_EUNAVAIL:
		return -EOPNOTSUPP;
	case SECHO_ESTATE:
		return -EPROTO;
	case SECHO_ELIMIT:
		return -EMSGSIZE;
	default:
		return err;
	}
}
