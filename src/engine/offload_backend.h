/*
 * src/engine/offload_backend.h - what an offload backend provides to the engine thread.
 * Each backend is one file (offload_openssl.c, offload_ipsecmb.c, offload_afalg.c).
 */
#ifndef SECHO_ENGINE_OFFLOAD_BACKEND_H
#define SECHO_ENGINE_OFFLOAD_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct secho_offload_ops {
	const char *name;
	/* Can it run here? When not, a one-line reason. */
	int (*probe)(char *why, size_t whylen);
	/* Per-key state for payloads of up to max_len bytes: returns an opaque pointer or NULL
	 * with a reason. All per-key work (key schedule, context, algorithm fetch, buffers)
	 * happens here, never per packet. */
	void *(*init)(const uint8_t key[32], uint32_t max_len, char *err, size_t errlen);
	/* AES-256-GCM encrypt buf[0..len) in place, len <= max_len, 12-byte iv, aad (at most
	 * 16 bytes), 16-byte tag. 0 or <0. */
	int (*seal)(void *st, const uint8_t iv[12], const uint8_t *aad, size_t aad_len,
	            uint8_t *buf, size_t len, uint8_t tag[16]);
	/* Bytes of key-dependent state it holds (for the cost table). */
	size_t (*key_state_bytes)(const void *st);
	/* Wipe and free. */
	void (*fini)(void *st);
};

/* OpenSSL's allocations of key state from locked, dump-excluded pages (offload_openssl.c;
 * see secho_offload_protect_keys). */
int secho_offload_openssl_protect(bool *locked);

extern const struct secho_offload_ops secho_offload_openssl_ops;
extern const struct secho_offload_ops secho_offload_ipsecmb_ops;
extern const struct secho_offload_ops secho_offload_afalg_ops;

#endif
