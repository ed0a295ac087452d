/*
 * tests/unit/eptest.h - what the endpoint's tests share: requests built byte by byte with
 * their own checksum code, and AES-256-GCM opened with OpenSSL, both independent of the
 * code under test; and the endpoint's wire configuration they all use.
 */
#ifndef SECHO_TEST_EPTEST_H
#define SECHO_TEST_EPTEST_H

#include <stddef.h>
#include <stdint.h>

#include "secho/wire.h"

/* The Internet checksum of p[0..n) over the partial sum `sum` (folded and inverted): 0 over
 * a header that carries its correct checksum. */
uint16_t ept_csum(const uint8_t *p, size_t n, uint32_t sum);

/* An Ethernet/IPv4/UDP request dst_mac <- src_mac, 192.0.2.<src_host>:sport ->
 * 192.0.2.2:dport carrying len bytes of pl, both checksums valid, padded to 60 bytes, at f
 * (room for 42 + len, at least 60). Returns its length. */
size_t ept_request(uint8_t *f, const uint8_t dst_mac[6], const uint8_t src_mac[6], uint8_t src_host,
                   uint16_t sport, uint16_t dport, const uint8_t *pl, size_t len);

/* Open a response's secure part with OpenSSL: hdr is the 16-byte secure header (the AAD;
 * the IV is its bytes 4..15), ct the ciphertext of len bytes, tag 16 bytes. 1 with the
 * plaintext in pt when the tag verifies, else 0. */
int ept_gcm_open(const uint8_t key[32], const uint8_t *hdr, const uint8_t *ct, size_t len,
                 const uint8_t *tag, uint8_t *pt);

/* The wire configuration of the tests' endpoint: the defaults, MAC mac, 192.0.2.2. */
void ept_wire_cfg(struct secho_wire_cfg *wc, const uint8_t mac[6]);

#endif
