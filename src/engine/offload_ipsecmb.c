/*
 * src/engine/offload_ipsecmb.c - offload backend: Intel ipsec-mb, IMB_AES256_GCM_ENC.
 *
 * The multi-buffer manager is set up once for the best architecture the CPU offers and
 * the key expanded once (IMB_AES256_GCM_PRE: round keys and the powers of H); per packet
 * the direct single-call GCM API, its fastest path here (PLATFORM.md). The expanded key
 * and the GCM context live in pages from secho_secret_alloc() (locked, excluded from core
 * dumps); the manager holds no key material.
 */
#include "engine/offload_backend.h"

#include <intel-ipsec-mb.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "secho/aes.h"
#include "secho/keyfile.h"

struct imb_state {
	/* The library's AVX-512 code uses aligned loads on the expanded key: keep it first
	 * and 64-byte aligned (the allocation is too). */
	alignas(64) struct gcm_key_data kd;
	alignas(64) struct gcm_context_data ctx;
	IMB_MGR *mgr;
};

static int imb_probe(char *why, size_t whylen)
{
	IMB_MGR *m = alloc_mb_mgr(0);
	if (!m) {
		snprintf(why, whylen, "ipsec-mb: alloc_mb_mgr failed");
		return -1;
	}
	IMB_ARCH arch;
	init_mb_mgr_auto(m, &arch);
	int ok = imb_get_errno(m) == 0;
	if (!ok)
		snprintf(why, whylen, "ipsec-mb: %s", imb_get_strerror(imb_get_errno(m)));
	free_mb_mgr(m);
	return ok ? 0 : -1;
}

static void imb_fini(void *p)
{
	struct imb_state *s = p;
	if (!s)
		return;
	if (s->mgr)
		free_mb_mgr(s->mgr);
	secho_secret_free(s, sizeof(*s)); /* wipes */
}

static void *imb_init(const uint8_t key[32], uint32_t max_len, char *err, size_t errlen)
{
	(void)max_len;
	/* Page-aligned (the AVX-512 code wants the expanded key 64-byte aligned), zeroed. */
	struct imb_state *s = secho_secret_alloc(sizeof(*s), NULL);
	if (!s) {
		snprintf(err, errlen, "out of memory (locked key memory)");
		return NULL;
	}
	s->mgr = alloc_mb_mgr(0);
	if (!s->mgr) {
		snprintf(err, errlen, "ipsec-mb: alloc_mb_mgr failed");
		imb_fini(s);
		return NULL;
	}
	IMB_ARCH arch;
	init_mb_mgr_auto(s->mgr, &arch);
	if (imb_get_errno(s->mgr)) {
		snprintf(err, errlen, "ipsec-mb: %s", imb_get_strerror(imb_get_errno(s->mgr)));
		imb_fini(s);
		return NULL;
	}
	IMB_AES256_GCM_PRE(s->mgr, key, &s->kd);
	return s;
}

static int imb_seal(void *p, const uint8_t iv[12], const uint8_t *aad, size_t aad_len, uint8_t *buf,
                    size_t len, uint8_t tag[16])
{
	struct imb_state *s = p;
	IMB_AES256_GCM_ENC(s->mgr, &s->kd, &s->ctx, buf, buf, len, iv, aad, aad_len, tag, 16);
	return imb_get_errno(s->mgr) ? -1 : 0;
}

static size_t imb_key_state_bytes(const void *p)
{
	(void)p;
	return sizeof(struct gcm_key_data);
}

const struct secho_offload_ops secho_offload_ipsecmb_ops = {
        .name = "ipsec-mb",
        .probe = imb_probe,
        .init = imb_init,
        .seal = imb_seal,
        .key_state_bytes = imb_key_state_bytes,
        .fini = imb_fini,
};
