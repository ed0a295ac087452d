/*
 * tests/fuzz/fuzz_parse.c - libFuzzer target over secho_wire_parse(), the response rebuild
 * (out of place and in place) and the ARP reply.
 *
 * Every input is parsed twice: with the fixed endpoint of the seed corpus (tests/fuzz/
 * corpus: 02:00:00:00:00:02, 192.0.2.2) and with an endpoint that adopts the frame's own
 * destination MAC and IP, so mutations reach the deeper layers quickly. For an accepted
 * frame every rule of docs/PROTOCOL.md is re-checked here independently (naive checksum),
 * and the response built from it must be well formed. Any violation aborts.
 *
 *   make fuzz && build/fuzz/fuzz_parse -max_total_time=20 CORPUS_DIR
 */
#include "fuzz.h"

#include <secho/wire.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint16_t naive_sum(const uint8_t *p, size_t n, uint32_t start)
{
	uint64_t s = start;
	for (size_t i = 0; i < n; i += 2)
		s += (uint16_t)(p[i] << 8 | (i + 1 < n ? p[i + 1] : 0));
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

static uint16_t naive_udp_sum(const uint8_t *ip, const uint8_t *udp, size_t ulen)
{
	uint8_t ph[12];
	memcpy(ph, ip + 12, 8);
	ph[8] = 0;
	ph[9] = 17;
	ph[10] = (uint8_t)(ulen >> 8);
	ph[11] = (uint8_t)ulen;
	return naive_sum(udp, ulen, naive_sum(ph, 12, 0));
}

static int bad_src_ip(const uint8_t *a, uint32_t mask_be)
{
	uint32_t ip = (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3];
	const uint8_t *m = (const uint8_t *)&mask_be;
	uint32_t mask = (uint32_t)m[0] << 24 | (uint32_t)m[1] << 16 | (uint32_t)m[2] << 8 | m[3];
	if (ip == 0 || ip >= 0xe0000000u)
		return 1;
	return mask && mask != 0xffffffffu && (ip | mask) == 0xffffffffu;
}

/* Every rule an accepted request must satisfy, checked from scratch. */
static void check_accepted(const struct secho_wire_cfg *cfg, const uint8_t *f, size_t len,
                           const struct secho_wire_req *r)
{
	CHECK(len >= 42);
	CHECK(rd16(f + 12) == 0x0800);
	CHECK(memcmp(f, cfg->mac, 6) == 0);
	CHECK(!(f[6] & 1) && (f[6] | f[7] | f[8] | f[9] | f[10] | f[11]));
	const uint8_t *ip = f + 14, *udp = f + 34;
	CHECK(ip[0] == 0x45);
	size_t tot = rd16(ip + 2);
	CHECK(tot >= 28 && tot <= len - 14);
	CHECK((rd16(ip + 6) & 0x3fff) == 0);
	CHECK(naive_sum(ip, 20, 0) == 0xffff);
	CHECK(ip[9] == 17);
	CHECK(memcmp(ip + 16, &cfg->ip, 4) == 0);
	CHECK(!bad_src_ip(ip + 12, cfg->netmask));
	size_t ulen = rd16(udp + 4);
	CHECK(ulen == tot - 20 && ulen >= 8);
	CHECK(rd16(udp + 6) == 0 || naive_udp_sum(ip, udp, ulen) == 0xffff);
	uint16_t dp = rd16(udp + 2);
	CHECK((dp == cfg->port_stream && r->cls == SECHO_PORT_STREAM) ||
	      (dp == cfg->port_offload && r->cls == SECHO_PORT_OFFLOAD) ||
	      (dp == cfg->port_counters && r->cls == SECHO_PORT_COUNTERS));
	CHECK(r->payload_off == 42 && r->payload_len == ulen - 8);
	CHECK(r->payload_len <= cfg->mtu - 60);
	CHECK(r->frame_len == 14 + tot && r->frame_len <= len);
	CHECK(r->src_port == rd16(udp) && r->dst_port == dp);
	CHECK(memcmp(r->src_mac, f + 6, 6) == 0 && memcmp(&r->src_ip, ip + 12, 4) == 0);
}

static void check_response(const struct secho_wire_cfg *cfg, const struct secho_wire_req *r,
                           const uint8_t *o, size_t olen)
{
	size_t n = r->payload_len;
	CHECK(olen == 58 + n + 16);
	CHECK(memcmp(o, r->src_mac, 6) == 0 && memcmp(o + 6, cfg->mac, 6) == 0);
	const uint8_t *ip = o + 14, *udp = o + 34;
	CHECK(ip[0] == 0x45 && rd16(ip + 2) == olen - 14 && rd16(ip + 6) == 0x4000);
	CHECK(ip[8] == 64 && ip[9] == 17 && naive_sum(ip, 20, 0) == 0xffff);
	CHECK(memcmp(ip + 12, &cfg->ip, 4) == 0 && memcmp(ip + 16, &r->src_ip, 4) == 0);
	CHECK(rd16(udp) == r->dst_port && rd16(udp + 2) == r->src_port);
	CHECK(rd16(udp + 4) == olen - 34 && rd16(udp + 6) != 0);
	CHECK(naive_udp_sum(ip, udp, olen - 34) == 0xffff);
}

static void one(const struct secho_wire_cfg *cfg, const uint8_t *data, size_t size)
{
	struct secho_wire_req r;
	enum secho_wire_verdict v = secho_wire_parse(cfg, data, size, &r);
	CHECK((unsigned)v < SECHO_WIRE_VERDICT_COUNT);
	CHECK(strcmp(secho_wire_verdict_name(v), "unknown") != 0);

	uint8_t arp[SECHO_ETH_MIN_FRAME];
	size_t al = secho_wire_arp_reply(cfg, data, size, arp, sizeof(arp));
	CHECK(al == 0 || (al == 60 && v == SECHO_WIRE_ARP));
	if (v != SECHO_WIRE_OK)
		return;
	check_accepted(cfg, data, size, &r);

	uint8_t sh[SECHO_SHDR_LEN];
	static const uint8_t salt[4] = {1, 2, 3, 4};
	secho_shdr_build(sh, secho_shdr_flags_for(r.cls), 1, salt, size);
	size_t olen = SECHO_RESP_LEN(r.payload_len);

	/* out of place into an exact-size buffer; "ciphertext" = the plaintext copied */
	uint8_t *o = malloc(olen);
	CHECK(secho_wire_rebuild(cfg, &r, NULL, sh, 7, o, olen - 1) == 0);
	CHECK(secho_wire_rebuild(cfg, &r, NULL, sh, 7, o, olen) == olen);
	memcpy(o + SECHO_RESP_PAYLOAD_OFF, data + r.payload_off, r.payload_len);
	memset(o + SECHO_RESP_TAG_OFF(r.payload_len), 0xab, SECHO_TAG_LEN);
	secho_wire_finalize(o, olen);
	check_response(cfg, &r, o, olen);

	/* in place: the request's bytes plus exactly the documented 32 bytes of room */
	size_t cap = r.frame_len + SECHO_RESP_OVERHEAD;
	uint8_t *b = malloc(cap);
	memcpy(b, data, r.frame_len);
	CHECK(cap >= olen);
	CHECK(secho_wire_rebuild(cfg, &r, b, sh, 7, b, cap) == olen);
	memset(b + SECHO_RESP_TAG_OFF(r.payload_len), 0xab, SECHO_TAG_LEN);
	secho_wire_finalize(b, olen);
	CHECK(memcmp(b, o, olen) == 0);
	free(b);
	free(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct secho_wire_cfg cfg;
	secho_wire_cfg_defaults(&cfg);
	static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x02};
	memcpy(cfg.mac, mac, 6);
	{
		const uint8_t a[4] = {192, 0, 2, 2};
		memcpy(&cfg.ip, a, 4);
		const uint8_t m[4] = {255, 255, 255, 0};
		memcpy(&cfg.netmask, m, 4);
	}
	one(&cfg, data, size);

	/* an endpoint that is whatever the frame is addressed to */
	if (size >= 34) {
		memcpy(cfg.mac, data, 6);
		memcpy(&cfg.ip, data + 30, 4);
		cfg.netmask = 0;
		if (size & 1)
			cfg.mtu = 576 + (unsigned)(data[size - 1]) * 4;
		if (!(cfg.mac[0] & 1))
			one(&cfg, data, size);
	}
	return 0;
}
