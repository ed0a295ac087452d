/*
 * tests/fuzz/fuzz_verify.c - libFuzzer target over the host tool's verifier
 * (src/host/verify.h): secho_verify_frame, secho_verify_dgram and secho_verify_peek read
 * frames from the wire, which anyone on it can forge.
 *
 * Byte 0 of the input chooses the mode:
 *  - even: the rest is a received frame, checked as the answer to a request whose port,
 *    size and payload come from bytes 1..4 (raw mode and, on its UDP payload, socket mode);
 *  - odd:  bytes 1..4 make a request, then a correct response to it is built (the
 *    verifier's own oracle seals it; the headers are written here) and it must verify;
 *    then, as byte 5 says, one byte of it is flipped (anywhere: it must now fail) or junk
 *    is appended after the IP packet (it must fail trailing-bytes, past 60 bytes).
 * Always: the result's first failed check is in its mask, the mask is empty exactly when
 * the first check is OK, a decrypted report fits its buffer, and nothing reads outside the
 * input (ASan). Each input gets a fresh verifier (sequence numbers seen are per run).
 *
 *   make fuzz && build/fuzz/fuzz_verify -max_total_time=20 tests/fuzz/corpus-verify
 */
#include "fuzz.h"
#include "host/verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct secho_vpath PATH = {
        .host_mac = {0x02, 0, 0, 0, 0, 1},
        .ep_mac = {0x02, 0, 0, 0, 0, 2},
        .host_ip = {192, 0, 2, 1},
        .ep_ip = {192, 0, 2, 2},
};
static const uint16_t SPORT = 40000;

static void check_result(const struct secho_vresult *res, unsigned got, size_t report_cap)
{
	CHECK(got == res->first && got < SECHO_VF_COUNT);
	CHECK((res->mask == 0) == (got == SECHO_VF_OK));
	CHECK(got == SECHO_VF_OK || (res->mask >> got & 1));
	CHECK(res->report_len <= report_cap);
}

static void wr16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* A correct response frame to r (payload r->payload) with sequence seq, in f (room for
 * it). Returns its length. */
static size_t build(struct secho_verifier *v, const struct secho_vreq *r, uint64_t seq,
                    const uint8_t *report, size_t report_len, uint8_t *f)
{
	const bool rep = r->dport == v->port_counters;
	const size_t len = rep ? report_len : r->len;
	uint8_t *ip = f + 14, *udp = f + 34, *d = f + 42, iv[12];
	size_t tot = 20 + 8 + SECHO_SHDR_LEN + len + SECHO_TAG_LEN;
	uint32_t sum;

	memcpy(f, PATH.host_mac, 6);
	memcpy(f + 6, PATH.ep_mac, 6);
	wr16(f + 12, 0x0800);
	memset(ip, 0, 20);
	ip[0] = 0x45;
	wr16(ip + 2, (unsigned)tot);
	wr16(ip + 6, 0x4000);
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, PATH.ep_ip, 4);
	memcpy(ip + 16, PATH.host_ip, 4);
	wr16(ip + 10, (uint16_t)~secho_inet_csum(ip, 20, 0));
	wr16(udp, r->dport);
	wr16(udp + 2, r->sport);
	wr16(udp + 4, (unsigned)(tot - 20));
	wr16(udp + 6, 0);
	d[0] = SECHO_SHDR_VERSION;
	d[1] = (uint8_t)((r->dport == v->port_offload ? SECHO_SHDR_F_OFFLOAD : 0) |
	                 (rep ? SECHO_SHDR_F_COUNTERS : 0));
	wr16(d + 2, v->key_id);
	memcpy(d + 4, v->salt, 4);
	for (int i = 0; i < 8; i++)
		d[8 + i] = (uint8_t)(seq >> (56 - 8 * i));
	memcpy(iv, v->salt, 4);
	memcpy(iv + 4, d + 8, 8);
	secho_oracle_seal(&v->oracle, iv, d, SECHO_SHDR_LEN, rep ? report : r->payload, len,
	                  d + SECHO_SHDR_LEN, d + SECHO_SHDR_LEN + len);
	sum = (uint32_t)(ip[12] << 8 | ip[13]) + (uint32_t)(ip[14] << 8 | ip[15]) +
	      (uint32_t)(ip[16] << 8 | ip[17]) + (uint32_t)(ip[18] << 8 | ip[19]) + 17 +
	      (uint32_t)(tot - 20);
	uint16_t cs = (uint16_t)~secho_inet_csum(udp, tot - 20, sum);

	wr16(udp + 6, cs ? cs : 0xffff);
	return 14 + tot;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t payload[SECHO_HOST_MAX_PAYLOAD], report[SECHO_HOST_MAX_PAYLOAD],
	        frame[14 + SECHO_WIRE_MAX_MTU + 64 + 64];
	static const struct secho_host_key key = {
	        .key_id = 7,
	        .salt = {0xa1, 0xb2, 0xc3, 0xd4},
	        .key = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16,
	                17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32},
	};
	struct secho_verifier *v;
	struct secho_vresult res;
	struct secho_vreq r;
	unsigned got;

	if (size < 5)
		return 0;
	v = malloc(sizeof(*v));
	if (!v || secho_verifier_init(v, &key, 4000, 4001, 4002) < 0) {
		free(v);
		return 0;
	}
	r.dport = (uint16_t)(4000 + data[1] % 3);
	r.sport = SPORT;
	r.len = (size_t)((data[2] << 8 | data[3]) % (SECHO_HOST_MAX_PAYLOAD + 1));
	memset(payload, data[4], r.len);
	r.payload = payload;

	if (!(data[0] & 1)) {
		const uint8_t *f = data + 5;
		size_t n = size - 5;
		uint8_t out[8];

		got = secho_verify_frame(v, &PATH, &r, f, n, report, sizeof(report), &res);
		check_result(&res, got, sizeof(report));
		if (got == SECHO_VF_OK) /* nothing after the packet, bar Ethernet's padding */
			CHECK(n <= 60 || n == 14 + (size_t)(f[16] << 8 | f[17]));
		got = secho_verify_dgram(v, &PATH, &r, PATH.ep_ip, r.dport, SPORT, f, n, report,
		                         sizeof(report), &res);
		check_result(&res, got, sizeof(report));
		CHECK(secho_verify_peek(v, f, n, out, sizeof(out)) <= sizeof(out));
	} else {
		const size_t rlen = size > 16 ? size - 16 : 0; /* a report: the input's tail */
		uint64_t seq = 0;
		size_t n;

		if (r.dport == 4002 && rlen > SECHO_HOST_MAX_PAYLOAD - 100)
			goto out;
		for (size_t i = 5; i < 13 && i < size; i++)
			seq = seq << 8 | data[i];
		if (r.dport == 4002)
			r.len = 0;
		n = build(v, &r, seq, data + 16, rlen, frame);
		got = secho_verify_frame(v, &PATH, &r, frame, n, report, sizeof(report), &res);
		CHECK(got == SECHO_VF_OK && res.payload_match && res.ct_match && res.tag_match);
		if (r.dport == 4002)
			CHECK(res.report_len == rlen && !memcmp(report, data + 16, rlen));
		if (size > 15) {
			/* A fresh verifier: the sequence number was seen by the first one. */
			secho_verifier_free(v);
			if (secho_verifier_init(v, &key, 4000, 4001, 4002) < 0)
				goto out;
			size_t at = (size_t)(data[13] << 8 | data[14]);

			if (data[15] & 0x80) {
				size_t junk = 1 + (at % 64);

				memset(frame + n, data[15], junk);
				got = secho_verify_frame(v, &PATH, &r, frame, n + junk, report,
				                         sizeof(report), &res);
				check_result(&res, got, sizeof(report));
				CHECK(got != SECHO_VF_OK && (res.mask >> SECHO_VF_TRAILING & 1));
			} else {
				frame[at % n] ^= (uint8_t)(data[15] | 1);
				got = secho_verify_frame(v, &PATH, &r, frame, n, report,
				                         sizeof(report), &res);
				check_result(&res, got, sizeof(report));
				CHECK(got != SECHO_VF_OK);
			}
		}
	}
out:
	secho_verifier_free(v);
	free(v);
	return 0;
}
