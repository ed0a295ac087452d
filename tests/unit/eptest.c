/* tests/unit/eptest.c - see eptest.h. */
#include "eptest.h"

#include <openssl/evp.h>
#include <string.h>

uint16_t ept_csum(const uint8_t *p, size_t n, uint32_t sum)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		sum += (uint32_t)(p[n - 1] << 8);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

size_t ept_request(uint8_t *f, const uint8_t dst_mac[6], const uint8_t src_mac[6], uint8_t src_host,
                   uint16_t sport, uint16_t dport, const uint8_t *pl, size_t len)
{
	memcpy(f, dst_mac, 6);
	memcpy(f + 6, src_mac, 6);
	f[12] = 0x08;
	f[13] = 0x00;
	uint8_t *ip = f + 14;
	memset(ip, 0, 20);
	ip[0] = 0x45;
	uint16_t tot = (uint16_t)(28 + len);
	ip[2] = (uint8_t)(tot >> 8);
	ip[3] = (uint8_t)tot;
	ip[6] = 0x40;
	ip[8] = 64;
	ip[9] = 17;
	uint8_t src[4] = {192, 0, 2, src_host}, dst[4] = {192, 0, 2, 2};
	memcpy(ip + 12, src, 4);
	memcpy(ip + 16, dst, 4);
	uint16_t c = ept_csum(ip, 20, 0);
	ip[10] = (uint8_t)(c >> 8);
	ip[11] = (uint8_t)c;
	uint8_t *u = ip + 20;
	u[0] = (uint8_t)(sport >> 8);
	u[1] = (uint8_t)sport;
	u[2] = (uint8_t)(dport >> 8);
	u[3] = (uint8_t)dport;
	uint16_t ul = (uint16_t)(8 + len);
	u[4] = (uint8_t)(ul >> 8);
	u[5] = (uint8_t)ul;
	u[6] = u[7] = 0;
	memcpy(u + 8, pl, len);
	/* pseudo header */
	uint32_t sum = 0;
	sum += (uint32_t)(src[0] << 8 | src[1]) + (uint32_t)(src[2] << 8 | src[3]);
	sum += (uint32_t)(dst[0] << 8 | dst[1]) + (uint32_t)(dst[2] << 8 | dst[3]);
	sum += 17 + ul;
	c = ept_csum(u, ul, sum);
	if (!c)
		c = 0xffff;
	u[6] = (uint8_t)(c >> 8);
	u[7] = (uint8_t)c;
	size_t n = 42 + len;
	if (n < 60) {
		memset(f + n, 0, 60 - n);
		n = 60;
	}
	return n;
}

int ept_gcm_open(const uint8_t key[32], const uint8_t *hdr, const uint8_t *ct, size_t len,
                 const uint8_t *tag, uint8_t *pt)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int l, ok = c != NULL;
	ok = ok && EVP_DecryptInit_ex(c, EVP_aes_256_gcm(), NULL, NULL, NULL);
	ok = ok && EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, 12, NULL);
	ok = ok && EVP_DecryptInit_ex(c, NULL, NULL, key, hdr + 4);
	ok = ok && EVP_DecryptUpdate(c, NULL, &l, hdr, 16);
	if (len)
		ok = ok && EVP_DecryptUpdate(c, pt, &l, ct, (int)len);
	ok = ok && EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, 16, (void *)tag);
	ok = ok && EVP_DecryptFinal_ex(c, pt + len, &l) > 0;
	EVP_CIPHER_CTX_free(c);
	return ok;
}

void ept_wire_cfg(struct secho_wire_cfg *wc, const uint8_t mac[6])
{
	static const uint8_t ip[4] = {192, 0, 2, 2};

	secho_wire_cfg_defaults(wc);
	memcpy(wc->mac, mac, 6);
	memcpy(&wc->ip, ip, 4);
}
