/*
 * tests/fuzz/fuzz_quic.c - libFuzzer target over the quic feature set
 * (src/flow/feature/quic.h).
 *
 * The input is a flow: records of direction (1 byte, low bit), length (2 bytes, big-endian)
 * and that many datagram bytes (tests/fuzz/corpus-quic, written by test_feat_quic
 * --write-seeds: the RFC 9001/9369 client Initials and the round trip's datagrams). Each is
 * fed to secho_feat_quic_packet; the whole input also goes to the header and frame parsers
 * directly, and, sealed here as a v1 Initial's payload (secho's AES-GCM and AES-ECB, keys
 * from a fixed DCID), through the module, which must then open it: a packet sealed with
 * the right keys that does not open is a bug, not a count. After each step: the reassembly's
 * ranges sorted, disjoint and inside the bound; the ClientHello inside the buffer; the JSON
 * written whole or -ENOSPC, never past its buffer; a flow that is done stays done; the flow
 * fed to a state that started as 0xa5 made ready by secho_feat_quic_init (a reused slot)
 * writes the same JSON as from an all-zero start.
 *
 *   make fuzz && build/fuzz/fuzz_quic -max_total_time=60 tests/fuzz/corpus-quic
 */
#include "fuzz.h"

#include "flow/feature/quic.h"

#include <secho/gcm.h>
#include <secho/modes.h>

#include <errno.h>
#include <string.h>

static struct secho_feat_quic st, st2; /* st2: from a reused slot (0xa5 + init) */

static void invariants(const struct secho_feat_quic *s)
{
	const struct secho_quic_crypto *r = &s->crypto;
	CHECK(r->nranges <= SECHO_QUIC_RANGES);
	for (size_t i = 0; i < r->nranges; i++) {
		CHECK(r->start[i] < r->end[i] && r->end[i] <= SECHO_QUIC_CH_MAX);
		if (i)
			CHECK(r->end[i - 1] < r->start[i]); /* disjoint, not even adjacent */
	}
	size_t chl = 0;
	const uint8_t *ch = secho_feat_quic_client_hello(s, &chl);
	CHECK(!ch || (chl >= 4 && chl <= SECHO_QUIC_CH_MAX && chl <= secho_quic_crypto_prefix(r)));
	CHECK(s->oscid_len <= SECHO_QUIC_CID_MAX && s->occid_len <= SECHO_QUIC_CID_MAX);
	CHECK(s->scid_len <= SECHO_QUIC_CID_MAX && s->retry_scid_len <= SECHO_QUIC_CID_MAX);
	static char js[4096];
	memset(js, 0x7f, sizeof(js));
	int n = secho_feat_quic_json(s, js, 1024);
	CHECK(n == -ENOSPC || (n >= 0 && n < 1024 && strlen(js) == (size_t)n));
	CHECK(js[1024] == 0x7f); /* nothing past the buffer */
	n = secho_feat_quic_json(s, js, 17);
	CHECK(n == -ENOSPC || (n >= 0 && n < 17));
}

static void feed(const uint8_t *d, size_t len, uint8_t dir, uint32_t wire)
{
	struct secho_feat_pkt p;
	memset(&p, 0, sizeof(p));
	p.payload = d;
	p.len = (uint32_t)len;
	p.wire_len = wire > len ? wire : (uint32_t)len;
	p.proto = 17;
	p.dir = dir;
	p.sport = dir ? 443 : 50000;
	p.dport = dir ? 50000 : 443;
	int was_done = st.done;
	secho_feat_quic_packet(&st, &p);
	secho_feat_quic_packet(&st2, &p);
	CHECK(!was_done || st.done);
	invariants(&st);
}

/* Seal pt[0..n) as a v1 client Initial (DCID 8 bytes of 0x5a, pn 0) into out: its length. */
static size_t seal(const uint8_t *pt, size_t n, uint8_t *out)
{
	static const uint8_t dcid[8] = {0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a};
	struct secho_quic_keys k;
	CHECK(secho_quic_initial_keys(SECHO_QUIC_V1, dcid, 8, 0, &k) == 0);
	size_t o = 0;
	out[o++] = 0xc0; /* Initial, pn length 1 */
	out[o++] = 0, out[o++] = 0, out[o++] = 0, out[o++] = 1;
	out[o++] = 8;
	memcpy(out + o, dcid, 8), o += 8;
	out[o++] = 0; /* SCID */
	out[o++] = 0; /* token */
	size_t length = 1 + n + SECHO_GCM_TAG_LEN;
	out[o++] = (uint8_t)(0x40 | length >> 8), out[o++] = (uint8_t)length;
	size_t pn_off = o;
	out[o++] = 0;
	static secho_gcm_key gk;
	CHECK(secho_gcm_key_init(&gk, k.key, 16, SECHO_IMPL_AUTO) == SECHO_OK);
	CHECK(secho_gcm_seal(&gk, k.iv, 12, out, o, out + o, pt, n, out + o + n, 16) == SECHO_OK);
	secho_aes_key hp;
	uint8_t mask[16];
	CHECK(secho_aes_key_init(&hp, k.hp, 16, SECHO_IMPL_AUTO) == SECHO_OK);
	CHECK(secho_ecb_encrypt(&hp, mask, out + pn_off + 4, 16) == SECHO_OK);
	out[0] ^= mask[0] & 0x0f;
	out[pn_off] ^= mask[1];
	return o + n + SECHO_GCM_TAG_LEN;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* the input as a flow of datagrams; st2: the same from a reused slot (0xa5, then
	 * secho_feat_quic_init), which must write the same JSON */
	memset(&st, 0, sizeof(st));
	memset(&st2, 0xa5, sizeof(st2));
	secho_feat_quic_init(&st2);
	size_t off = 0;
	while (off + 3 <= size) {
		uint8_t dir = data[off] & 1;
		size_t n = (size_t)data[off + 1] << 8 | data[off + 2];
		off += 3;
		if (n > size - off)
			n = size - off;
		/* a byte of the direction says whether the capture cut the datagram */
		feed(data + off, n, dir, (data[off - 3] & 2) ? (uint32_t)n + 100 : (uint32_t)n);
		off += n;
	}
	{
		static char ja[4096], jb[4096];
		int na = secho_feat_quic_json(&st, ja, sizeof(ja));
		int nb = secho_feat_quic_json(&st2, jb, sizeof(jb));
		CHECK(na == nb && (na < 0 || !memcmp(ja, jb, (size_t)na)));
	}

	/* the pure parsers on the whole input */
	struct secho_quic_hdr h;
	int rc = secho_quic_parse_long(data, size, &h);
	CHECK(rc == 0 || rc == -EINVAL || rc == -ENOTSUP);
	if (rc == 0) {
		CHECK(h.pkt_len <= size && h.dcid_len <= 20 && h.scid_len <= 20);
		CHECK(h.type == SECHO_QUIC_RETRY || h.pn_off + h.length == h.pkt_len);
	}
	memset(&st, 0, sizeof(st));
	rc = secho_quic_frames(&st, data, size);
	CHECK(rc == 0 || rc == -EINVAL);
	invariants(&st);

	/* sealed as an Initial's payload: must open (payloads too short for a sample are
	 * padded with PADDING frames as a sender would) */
	static uint8_t pt[1400], pkt[1500];
	size_t n = size < sizeof(pt) ? size : sizeof(pt);
	memcpy(pt, data, n);
	if (n < 20) {
		memset(pt + n, 0, 20 - n);
		n = 20;
	}
	size_t plen = seal(pt, n, pkt);
	memset(&st, 0, sizeof(st));
	feed(pkt, plen, 0, (uint32_t)plen);
	CHECK(st.quic && st.initials == 1 && st.initials_failed == 0);
	return 0;
}
