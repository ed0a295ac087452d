/*
 * src/engine/offload_afalg.c - offload backend: the Linux kernel's AF_ALG "gcm(aes)".
 *
 * A transaction in the truest sense: every packet crosses into the kernel (sendmsg with
 * the operation, IV and AAD length as control messages, AAD || plaintext as data) and
 * back (read of AAD || ciphertext || tag). Availability is probed at start: kernels built
 * without CONFIG_CRYPTO_USER_API_AEAD (this project's CI machine among them) refuse
 * socket(AF_ALG) with EAFNOSUPPORT, and the endpoint says so and refuses --offload afalg.
 */
#include "engine/offload_backend.h"

#include <errno.h>
#include <linux/if_alg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "secho/aes.h"

#ifndef SOL_ALG
#define SOL_ALG 279
#endif

struct afalg_state {
	int tfm, op;
	uint32_t max_len;
	uint8_t bounce[]; /* AAD (16) || text (max_len) || tag (16) */
};

static int afalg_open_tfm(char *why, size_t whylen)
{
	int fd = socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(why, whylen, "AF_ALG not offered by this kernel: socket(AF_ALG): %s",
		         strerror(errno));
		return -1;
	}
	struct sockaddr_alg sa = {.salg_family = AF_ALG};
	memcpy(sa.salg_type, "aead", 5);
	memcpy(sa.salg_name, "gcm(aes)", 9);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		snprintf(why, whylen, "AF_ALG: the kernel has no gcm(aes): bind: %s",
		         strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static int afalg_probe(char *why, size_t whylen)
{
	int fd = afalg_open_tfm(why, whylen);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static void afalg_fini(void *p)
{
	struct afalg_state *s = p;
	if (!s)
		return;
	if (s->op >= 0)
		close(s->op);
	if (s->tfm >= 0)
		close(s->tfm); /* the kernel frees (and zeroes) its copy of the key */
	secho_wipe(s, sizeof(*s) + 16 + (size_t)s->max_len + 16);
	free(s);
}

static void *afalg_init(const uint8_t key[32], uint32_t max_len, char *err, size_t errlen)
{
	struct afalg_state *s = calloc(1, sizeof(*s) + 16 + (size_t)max_len + 16);
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->max_len = max_len;
	s->op = -1;
	s->tfm = afalg_open_tfm(err, errlen);
	if (s->tfm < 0)
		goto fail;
	if (setsockopt(s->tfm, SOL_ALG, ALG_SET_KEY, key, 32) < 0 ||
	    setsockopt(s->tfm, SOL_ALG, ALG_SET_AEAD_AUTHSIZE, NULL, 16) < 0) {
		snprintf(err, errlen, "AF_ALG gcm(aes): setting key/tag size: %s", strerror(errno));
		goto fail;
	}
	s->op = accept4(s->tfm, NULL, 0, SOCK_CLOEXEC);
	if (s->op < 0) {
		snprintf(err, errlen, "AF_ALG gcm(aes): accept: %s", strerror(errno));
		goto fail;
	}
	return s;
fail:
	afalg_fini(s);
	return NULL;
}

static int afalg_seal(void *p, const uint8_t iv[12], const uint8_t *aad, size_t aad_len,
                      uint8_t *buf, size_t len, uint8_t tag[16])
{
	struct afalg_state *s = p;
	if (aad_len > 16 || len > s->max_len)
		return -1;
	union {
		char buf[CMSG_SPACE(sizeof(uint32_t)) + CMSG_SPACE(sizeof(struct af_alg_iv) + 12) +
		         CMSG_SPACE(sizeof(uint32_t))];
		struct cmsghdr align;
	} cbuf;
	memset(&cbuf, 0, sizeof(cbuf));
	struct iovec iov[2] = {{(void *)aad, aad_len}, {buf, len}};
	struct msghdr msg = {.msg_iov = iov,
	                     .msg_iovlen = 2,
	                     .msg_control = cbuf.buf,
	                     .msg_controllen = sizeof(cbuf.buf)};

	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_ALG;
	c->cmsg_type = ALG_SET_OP;
	c->cmsg_len = CMSG_LEN(sizeof(uint32_t));
	uint32_t v = ALG_OP_ENCRYPT;
	memcpy(CMSG_DATA(c), &v, sizeof(v));

	c = CMSG_NXTHDR(&msg, c);
	c->cmsg_level = SOL_ALG;
	c->cmsg_type = ALG_SET_IV;
	c->cmsg_len = CMSG_LEN(sizeof(struct af_alg_iv) + 12);
	struct af_alg_iv ivh = {.ivlen = 12};
	memcpy(CMSG_DATA(c), &ivh, sizeof(ivh));
	memcpy(CMSG_DATA(c) + sizeof(ivh), iv, 12);

	c = CMSG_NXTHDR(&msg, c);
	c->cmsg_level = SOL_ALG;
	c->cmsg_type = ALG_SET_AEAD_ASSOCLEN;
	c->cmsg_len = CMSG_LEN(sizeof(uint32_t));
	v = (uint32_t)aad_len;
	memcpy(CMSG_DATA(c), &v, sizeof(v));

	if (sendmsg(s->op, &msg, 0) != (ssize_t)(aad_len + len))
		return -1;
	size_t want = aad_len + len + 16;
	if (read(s->op, s->bounce, want) != (ssize_t)want)
		return -1;
	memcpy(buf, s->bounce + aad_len, len);
	memcpy(tag, s->bounce + aad_len + len, 16);
	secho_wipe(s->bounce, want);
	return 0;
}

static size_t afalg_key_state_bytes(const void *p)
{
	(void)p;
	return 32; /* our side holds none after set-up; the kernel's is not visible */
}

const struct secho_offload_ops secho_offload_afalg_ops = {
        .name = "afalg",
        .probe = afalg_probe,
        .init = afalg_init,
        .seal = afalg_seal,
        .key_state_bytes = afalg_key_state_bytes,
        .fini = afalg_fini,
};
