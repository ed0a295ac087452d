/*
 * tests/unit/test_feat_quic.c - the quic feature set (src/flow/feature/quic.h).
 *
 *   - RFC 9001 Appendix A and RFC 9369 Appendix A: the Initial keys derived from the
 *     published DCID are the published ones, and the published client Initial opens to a
 *     CRYPTO frame holding the published ClientHello (its random);
 *   - a round trip against an independent sealer: Initials built here with OpenSSL's own
 *     AES-128-GCM and AES-128-ECB (the default provider, not secho's), for v1, v2 and
 *     draft-29, over a ClientHello written here and split across two Initials (CRYPTO frames
 *     out of order, coalesced with other packets): the module gives back the same bytes; a
 *     corrupted tag is counted, not parsed; the JSON members parse and say the same;
 *   - the reassembly's bounds (holes, overlaps, the buffer's end);
 *   - with SECHO_QUIC_PCAP=path (tests/sh/test_feat_quic.sh): the UDP datagrams of a
 *     capture of one QUIC connection are fed to the module, and its JSON members are printed
 *     on one line ("json: {...}"), with the ClientHello's bytes in hex ("ch: ...").
 *
 *   test_feat_quic                    run the tests
 *   test_feat_quic --write-seeds DIR  write fuzz_quic's seed inputs (tests/fuzz/corpus-quic)
 */
#include "harness.h"

#include "flow/feature/quic.h"

#include <secho/dissect.h>

#include <errno.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- RFC 9001 Appendix A.2 and RFC 9369 Appendix A.2: the client's Initial ---- */

static const char rfc_dcid[] = "8394c8f03e515708";

static const char rfc9001_client[] =
        "c000000001088394c8f03e5157080000449e7b9aec34d1b1c98dd7689fb8ec11"
        "d242b123dc9bd8bab936b47d92ec356c0bab7df5976d27cd449f63300099f399"
        "1c260ec4c60d17b31f8429157bb35a1282a643a8d2262cad67500cadb8e7378c"
        "8eb7539ec4d4905fed1bee1fc8aafba17c750e2c7ace01e6005f80fcb7df6212"
        "30c83711b39343fa028cea7f7fb5ff89eac2308249a02252155e2347b63d58c5"
        "457afd84d05dfffdb20392844ae812154682e9cf012f9021a6f0be17ddd0c208"
        "4dce25ff9b06cde535d0f920a2db1bf362c23e596d11a4f5a6cf3948838a3aec"
        "4e15daf8500a6ef69ec4e3feb6b1d98e610ac8b7ec3faf6ad760b7bad1db4ba3"
        "485e8a94dc250ae3fdb41ed15fb6a8e5eba0fc3dd60bc8e30c5c4287e53805db"
        "059ae0648db2f64264ed5e39be2e20d82df566da8dd5998ccabdae053060ae6c"
        "7b4378e846d29f37ed7b4ea9ec5d82e7961b7f25a9323851f681d582363aa5f8"
        "9937f5a67258bf63ad6f1a0b1d96dbd4faddfcefc5266ba6611722395c906556"
        "be52afe3f565636ad1b17d508b73d8743eeb524be22b3dcbc2c7468d54119c74"
        "68449a13d8e3b95811a198f3491de3e7fe942b330407abf82a4ed7c1b311663a"
        "c69890f4157015853d91e923037c227a33cdd5ec281ca3f79c44546b9d90ca00"
        "f064c99e3dd97911d39fe9c5d0b23a229a234cb36186c4819e8b9c5927726632"
        "291d6a418211cc2962e20fe47feb3edf330f2c603a9d48c0fcb5699dbfe58964"
        "25c5bac4aee82e57a85aaf4e2513e4f05796b07ba2ee47d80506f8d2c25e50fd"
        "14de71e6c418559302f939b0e1abd576f279c4b2e0feb85c1f28ff18f58891ff"
        "ef132eef2fa09346aee33c28eb130ff28f5b766953334113211996d20011a198"
        "e3fc433f9f2541010ae17c1bf202580f6047472fb36857fe843b19f5984009dd"
        "c324044e847a4f4a0ab34f719595de37252d6235365e9b84392b061085349d73"
        "203a4a13e96f5432ec0fd4a1ee65accdd5e3904df54c1da510b0ff20dcc0c77f"
        "cb2c0e0eb605cb0504db87632cf3d8b4dae6e705769d1de354270123cb11450e"
        "fc60ac47683d7b8d0f811365565fd98c4c8eb936bcab8d069fc33bd801b03ade"
        "a2e1fbc5aa463d08ca19896d2bf59a071b851e6c239052172f296bfb5e724047"
        "90a2181014f3b94a4e97d117b438130368cc39dbb2d198065ae3986547926cd2"
        "162f40a29f0c3c8745c0f50fba3852e566d44575c29d39a03f0cda721984b6f4"
        "40591f355e12d439ff150aab7613499dbd49adabc8676eef023b15b65bfc5ca0"
        "6948109f23f350db82123535eb8a7433bdabcb909271a6ecbcb58b936a88cd4e"
        "8f2e6ff5800175f113253d8fa9ca8885c2f552e657dc603f252e1a8e308f76f0"
        "be79e2fb8f5d5fbbe2e30ecadd220723c8c0aea8078cdfcb3868263ff8f09400"
        "54da48781893a7e49ad5aff4af300cd804a6b6279ab3ff3afb64491c85194aab"
        "760d58a606654f9f4400e8b38591356fbf6425aca26dc85244259ff2b19c41b9"
        "f96f3ca9ec1dde434da7d2d392b905ddf3d1f9af93d1af5950bd493f5aa731b4"
        "056df31bd267b6b90a079831aaf579be0a39013137aac6d404f518cfd4684064"
        "7e78bfe706ca4cf5e9c5453e9f7cfd2b8b4c8d169a44e55c88d4a9a7f9474241"
        "e221af44860018ab0856972e194cd934";

static const char rfc9369_client[] =
        "d76b3343cf088394c8f03e5157080000449ea0c95e82ffe67b6abcdb4298b485"
        "dd04de806071bf03dceebfa162e75d6c96058bdbfb127cdfcbf903388e99ad04"
        "9f9a3dd4425ae4d0992cfff18ecf0fdb5a842d09747052f17ac2053d21f57c5d"
        "250f2c4f0e0202b70785b7946e992e58a59ac52dea6774d4f03b55545243cf1a"
        "12834e3f249a78d395e0d18f4d766004f1a2674802a747eaa901c3f10cda5500"
        "cb9122faa9f1df66c392079a1b40f0de1c6054196a11cbea40afb6ef5253cd68"
        "18f6625efce3b6def6ba7e4b37a40f7732e093daa7d52190935b8da58976ff33"
        "12ae50b187c1433c0f028edcc4c2838b6a9bfc226ca4b4530e7a4ccee1bfa2a3"
        "d396ae5a3fb512384b2fdd851f784a65e03f2c4fbe11a53c7777c023462239dd"
        "6f7521a3f6c7d5dd3ec9b3f233773d4b46d23cc375eb198c63301c21801f6520"
        "bcfb7966fc49b393f0061d974a2706df8c4a9449f11d7f3d2dcbb90c6b877045"
        "636e7c0c0fe4eb0f697545460c806910d2c355f1d253bc9d2452aaa549e27a1f"
        "ac7cf4ed77f322e8fa894b6a83810a34b361901751a6f5eb65a0326e07de7c12"
        "16ccce2d0193f958bb3850a833f7ae432b65bc5a53975c155aa4bcb4f7b2c4e5"
        "4df16efaf6ddea94e2c50b4cd1dfe06017e0e9d02900cffe1935e0491d77ffb4"
        "fdf85290fdd893d577b1131a610ef6a5c32b2ee0293617a37cbb08b847741c3b"
        "8017c25ca9052ca1079d8b78aebd47876d330a30f6a8c6d61dd1ab5589329de7"
        "14d19d61370f8149748c72f132f0fc99f34d766c6938597040d8f9e2bb522ff9"
        "9c63a344d6a2ae8aa8e51b7b90a4a806105fcbca31506c446151adfeceb51b91"
        "abfe43960977c87471cf9ad4074d30e10d6a7f03c63bd5d4317f68ff325ba3bd"
        "80bf4dc8b52a0ba031758022eb025cdd770b44d6d6cf0670f4e990b22347a7db"
        "848265e3e5eb72dfe8299ad7481a408322cac55786e52f633b2fb6b614eaed18"
        "d703dd84045a274ae8bfa73379661388d6991fe39b0d93debb41700b41f90a15"
        "c4d526250235ddcd6776fc77bc97e7a417ebcb31600d01e57f32162a8560cacc"
        "7e27a096d37a1a86952ec71bd89a3e9a30a2a26162984d7740f81193e8238e61"
        "f6b5b984d4d3dfa033c1bb7e4f0037febf406d91c0dccf32acf423cfa1e70710"
        "10d3f270121b493ce85054ef58bada42310138fe081adb04e2bd901f2f13458b"
        "3d6758158197107c14ebb193230cd1157380aa79cae1374a7c1e5bbcb80ee23e"
        "06ebfde206bfb0fcbc0edc4ebec309661bdd908d532eb0c6adc38b7ca7331dce"
        "8dfce39ab71e7c32d318d136b6100671a1ae6a6600e3899f31f0eed19e3417d1"
        "34b90c9058f8632c798d4490da4987307cba922d61c39805d072b589bd52fdf1"
        "e86215c2d54e6670e07383a27bbffb5addf47d66aa85a0c6f9f32e59d85a44dd"
        "5d3b22dc2be80919b490437ae4f36a0ae55edf1d0b5cb4e9a3ecabee93dfc6e3"
        "8d209d0fa6536d27a5d6fbb17641cde27525d61093f1b28072d111b2b4ae5f89"
        "d5974ee12e5cf7d5da4d6a31123041f33e61407e76cffcdcfd7e19ba58cf4b53"
        "6f4c4938ae79324dc402894b44faf8afbab35282ab659d13c93f70412e85cb19"
        "9a37ddec600545473cfb5a05e08d0b209973b2172b4d21fb69745a262ccde96b"
        "a18b2faa745b6fe189cf772a9f84cbfc";

/* Both appendices' ClientHello: 241 bytes, this random at offset 6. */
static const char rfc_random[] = "ebf8fa56f12939b9584a3896472ec40bb863cfd3e86804fe3a47f06a2b69484c";

struct rfc_case {
	const char *name;
	uint32_t version;
	const char *packet;
	const char *ckey, *civ, *chp, *skey, *siv, *shp;
};

static const struct rfc_case rfc_cases[] = {
        {"RFC 9001 A (v1)", SECHO_QUIC_V1, rfc9001_client, "1f369613dd76d5467730efcbe3b1a22d",
         "fa044b2f42a3fd3b46fb255c", "9f50449e04a0e810283a1e9933adedd2",
         "cf3a5331653c364c88f0f379b6067e37", "0ac1493ca1905853b0bba03e",
         "c206b8d9b9f0f37644430b490eeaa314"},
        {"RFC 9369 A (v2)", SECHO_QUIC_V2, rfc9369_client, "8b1a0bc121284290a29e0971b5cd045d",
         "91f73e2351d8fa91660e909f", "45b95e15235d6f45a6b19cbcb0294ba9",
         "82db637861d55e1d011f19ea71d5d2a7", "dd13c276499c0249d3310652",
         "edf6d05c83121201b436e16877593c3a"},
};

static int same_hex(const uint8_t *b, size_t n, const char *hex)
{
	uint8_t want[64];
	long w = t_unhex(hex, want, sizeof(want));
	return w == (long)n && memcmp(b, want, n) == 0;
}

static struct secho_feat_pkt pkt_of(const uint8_t *b, size_t n, uint8_t dir, uint16_t sport,
                                    uint16_t dport)
{
	struct secho_feat_pkt p;
	memset(&p, 0, sizeof(p));
	p.payload = b;
	p.len = p.wire_len = (uint32_t)n;
	p.proto = 17;
	p.dir = dir;
	p.sport = sport;
	p.dport = dport;
	return p;
}

static struct secho_feat_quic st; /* 4 KiB: not on the stack */

static void test_rfc(void)
{
	for (size_t c = 0; c < sizeof(rfc_cases) / sizeof(rfc_cases[0]); c++) {
		const struct rfc_case *rc = &rfc_cases[c];
		t_begin("quic %s: keys from the DCID, the client Initial opens", rc->name);
		uint8_t dcid[8], pkt[1200];
		T_CHECK(t_unhex(rfc_dcid, dcid, sizeof(dcid)) == 8, "dcid");
		long n = t_unhex(rc->packet, pkt, sizeof(pkt));
		T_CHECK(n == 1200, "the published packet is 1200 bytes (%ld)", n);

		struct secho_quic_keys k;
		T_CHECK(secho_quic_initial_keys(rc->version, dcid, 8, 0, &k) == 0, "client keys");
		T_CHECK(same_hex(k.key, 16, rc->ckey), "client key");
		T_CHECK(same_hex(k.iv, 12, rc->civ), "client iv");
		T_CHECK(same_hex(k.hp, 16, rc->chp), "client hp");
		struct secho_quic_keys sk;
		T_CHECK(secho_quic_initial_keys(rc->version, dcid, 8, 1, &sk) == 0, "server keys");
		T_CHECK(same_hex(sk.key, 16, rc->skey), "server key");
		T_CHECK(same_hex(sk.iv, 12, rc->siv), "server iv");
		T_CHECK(same_hex(sk.hp, 16, rc->shp), "server hp");

		struct secho_quic_hdr h;
		T_CHECK(secho_quic_parse_long(pkt, 1200, &h) == 0, "header parses");
		T_CHECK(h.version == rc->version && h.type == SECHO_QUIC_INITIAL,
		        "an Initial of %08x", h.version);
		T_CHECK(h.dcid_len == 8 && memcmp(h.dcid, dcid, 8) == 0 && h.scid_len == 0, "CIDs");
		T_CHECK(h.pkt_len == 1200 && h.length == 1182 && h.pn_off == 18,
		        "lengths %u %llu %u", h.pkt_len, (unsigned long long)h.length, h.pn_off);

		uint8_t pt[SECHO_QUIC_PT_MAX];
		size_t pt_len = 0;
		uint64_t pn = 0;
		int r = secho_quic_open_initial(&k, pkt, &h, 0, 0, pt, sizeof(pt), &pt_len, &pn);
		T_CHECK(r == 0, "opens (%d)", r);
		T_CHECK(pn == 2 && pt_len == 1162, "pn %llu, %zu bytes", (unsigned long long)pn,
		        pt_len);
		/* CRYPTO, offset 0, length 241 (0x40f1), then a ClientHello (type 1) */
		T_CHECK(pt[0] == 0x06 && pt[1] == 0x00 && pt[2] == 0x40 && pt[3] == 0xf1 &&
		                pt[4] == 1,
		        "a CRYPTO frame at offset 0 with a ClientHello");
		r = secho_quic_open_initial(&sk, pkt, &h, 0, 0, pt, sizeof(pt), &pt_len, &pn);
		T_CHECK(r == -EBADMSG, "the server's keys do not open the client's packet (%d)", r);

		memset(&st, 0, sizeof(st));
		struct secho_feat_pkt p = pkt_of(pkt, 1200, SECHO_FEAT_FWD, 50000, 443);
		secho_feat_quic_packet(&st, &p);
		size_t chl = 0;
		const uint8_t *ch = secho_feat_quic_client_hello(&st, &chl);
		T_CHECK(ch && chl == 241, "the ClientHello reassembled (%zu bytes)", chl);
		T_CHECK(ch && same_hex(ch + 6, 32, rfc_random), "the ClientHello's random");
		T_CHECK(st.version == rc->version && st.client_version == rc->version, "version");
		T_CHECK(st.initials == 1 && st.initials_failed == 0 && !st.done,
		        "one Initial, waiting for the server");
		T_CHECK(st.oscid_len == 8 && memcmp(st.oscid, dcid, 8) == 0 && st.occid_len == 0,
		        "oscid/occid");
		T_CHECK(st.server_port == 443, "server port");

		/* the same packet with one bit of its tag flipped: counted, nothing parsed */
		memset(&st, 0, sizeof(st));
		pkt[1199] ^= 0x01;
		secho_feat_quic_packet(&st, &p);
		T_CHECK(st.initials == 0 && st.initials_failed == 1, "a bad tag is counted");
		T_CHECK(secho_feat_quic_client_hello(&st, &chl) == NULL && st.crypto.nranges == 0,
		        "nothing of it parsed");
		t_end();
	}
}

/* ---- an independent sealer: OpenSSL's default provider ---- */

static size_t put_varint(uint8_t *b, uint64_t v)
{
	if (v < 64) {
		b[0] = (uint8_t)v;
		return 1;
	}
	if (v < 16384) {
		b[0] = (uint8_t)(0x40 | v >> 8), b[1] = (uint8_t)v;
		return 2;
	}
	b[0] = (uint8_t)(0x80 | v >> 24), b[1] = (uint8_t)(v >> 16), b[2] = (uint8_t)(v >> 8),
	b[3] = (uint8_t)v;
	return 4;
}

static int evp_run(const char *name, int gcm, const uint8_t *key, const uint8_t *iv,
                   const uint8_t *aad, size_t aad_len, const uint8_t *in, size_t len, uint8_t *out,
                   uint8_t *tag)
{
	EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, name, "provider=default");
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	int ok = c && x && EVP_EncryptInit_ex2(x, c, key, iv, NULL) == 1;
	int n = 0;
	if (ok && !gcm)
		ok = EVP_CIPHER_CTX_set_padding(x, 0) == 1;
	if (ok && gcm)
		ok = EVP_EncryptUpdate(x, NULL, &n, aad, (int)aad_len) == 1;
	if (ok)
		ok = EVP_EncryptUpdate(x, out, &n, in, (int)len) == 1 && (size_t)n == len;
	if (ok)
		ok = EVP_EncryptFinal_ex(x, out + n, &n) == 1;
	if (ok && gcm)
		ok = EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_GET_TAG, 16, tag) == 1;
	EVP_CIPHER_CTX_free(x);
	EVP_CIPHER_free(c);
	return ok ? 0 : -1;
}

/* Seal one Initial (type bits for the version) carrying payload[0..plen) under k, with a
 * 2-byte packet number: out gets the packet, its length is returned (0 on failure). */
static size_t seal_initial(uint32_t version, const struct secho_quic_keys *k, const uint8_t *dcid,
                           size_t dl, const uint8_t *scid, size_t sl, uint64_t pn,
                           const uint8_t *payload, size_t plen, uint8_t *out)
{
	unsigned bits = version == SECHO_QUIC_V2 ? 1 : 0;
	size_t o = 0;
	out[o++] = (uint8_t)(0xc0 | bits << 4 | 0x01); /* pn length 2 */
	out[o++] = (uint8_t)(version >> 24), out[o++] = (uint8_t)(version >> 16);
	out[o++] = (uint8_t)(version >> 8), out[o++] = (uint8_t)version;
	out[o++] = (uint8_t)dl;
	memcpy(out + o, dcid, dl), o += dl;
	out[o++] = (uint8_t)sl;
	memcpy(out + o, scid, sl), o += sl;
	out[o++] = 0; /* no token */
	out[o++] = (uint8_t)(0x40 | (2 + plen + 16) >> 8);
	out[o++] = (uint8_t)(2 + plen + 16);
	size_t pn_off = o;
	out[o++] = (uint8_t)(pn >> 8), out[o++] = (uint8_t)pn;
	uint8_t nonce[12];
	memcpy(nonce, k->iv, 12);
	for (int i = 0; i < 8; i++)
		nonce[11 - i] ^= (uint8_t)(pn >> (8 * i));
	if (evp_run("AES-128-GCM", 1, k->key, nonce, out, o, payload, plen, out + o,
	            out + o + plen) != 0)
		return 0;
	size_t total = o + plen + 16;
	uint8_t mask[16];
	if (evp_run("AES-128-ECB", 0, k->hp, NULL, NULL, 0, out + pn_off + 4, 16, mask, NULL) != 0)
		return 0;
	out[0] ^= mask[0] & 0x0f;
	out[pn_off] ^= mask[1], out[pn_off + 1] ^= mask[2];
	return total;
}

/* A ClientHello written here: TLS 1.3, SNI, ALPN "h3", a hybrid key share as long as
 * X25519MLKEM768's (1216 bytes), and quic_transport_parameters with Google's user agent. */
static size_t make_client_hello(uint8_t *b, size_t cap)
{
	size_t o = 0, ext_len_at;
	uint8_t body[2048];
	size_t bo = 0;
	body[bo++] = 3, body[bo++] = 3;
	for (int i = 0; i < 32; i++)
		body[bo++] = (uint8_t)(0xa0 + i);
	body[bo++] = 0;                                                       /* session id */
	body[bo++] = 0, body[bo++] = 2, body[bo++] = 0x13, body[bo++] = 0x01; /* suites */
	body[bo++] = 1, body[bo++] = 0;                                       /* compression */
	ext_len_at = bo;
	bo += 2;
	/* server_name: quic.example.test */
	const char *sni = "quic.example.test";
	size_t sn = strlen(sni);
	body[bo++] = 0, body[bo++] = 0, body[bo++] = 0, body[bo++] = (uint8_t)(sn + 5);
	body[bo++] = 0, body[bo++] = (uint8_t)(sn + 3), body[bo++] = 0;
	body[bo++] = 0, body[bo++] = (uint8_t)sn;
	memcpy(body + bo, sni, sn), bo += sn;
	/* ALPN: h3 */
	body[bo++] = 0, body[bo++] = 16, body[bo++] = 0, body[bo++] = 5;
	body[bo++] = 0, body[bo++] = 3, body[bo++] = 2, body[bo++] = 'h', body[bo++] = '3';
	/* supported_versions: TLS 1.3 */
	body[bo++] = 0, body[bo++] = 43, body[bo++] = 0, body[bo++] = 3;
	body[bo++] = 2, body[bo++] = 3, body[bo++] = 4;
	/* key_share: group 0x11ec, 1216 bytes */
	body[bo++] = 0, body[bo++] = 51, body[bo++] = (1216 + 6) >> 8,
	body[bo++] = (1216 + 6) & 255;
	body[bo++] = (1216 + 4) >> 8, body[bo++] = (1216 + 4) & 255;
	body[bo++] = 0x11, body[bo++] = 0xec, body[bo++] = 1216 >> 8, body[bo++] = 1216 & 255;
	for (int i = 0; i < 1216; i++)
		body[bo++] = (uint8_t)(i * 7 + 1);
	/* quic_transport_parameters: user agent (id 0x3129, a 2-byte varint 0x71 0x29) */
	const char *ua = "secho-test/1";
	size_t un = strlen(ua);
	body[bo++] = 0, body[bo++] = 0x39, body[bo++] = 0, body[bo++] = (uint8_t)(un + 3);
	body[bo++] = 0x71, body[bo++] = 0x29, body[bo++] = (uint8_t)un;
	memcpy(body + bo, ua, un), bo += un;
	size_t ext_total = bo - ext_len_at - 2;
	body[ext_len_at] = (uint8_t)(ext_total >> 8), body[ext_len_at + 1] = (uint8_t)ext_total;
	b[o++] = 1;
	b[o++] = (uint8_t)(bo >> 16), b[o++] = (uint8_t)(bo >> 8), b[o++] = (uint8_t)bo;
	if (o + bo > cap)
		return 0;
	memcpy(b + o, body, bo);
	return o + bo;
}

/* The JA4 of make_client_hello's ClientHello (FoxIO's JA4.md), computed here with EVP's
 * SHA-256: QUIC, TLS 1.3, SNI, 1 cipher, 5 extensions, ALPN h3; the cipher "1301"; the
 * extensions but SNI and ALPN, sorted: "002b,0033,0039" (no signature algorithms: no "_"). */
static int ja4_expected(char out[40])
{
	static const char *in[2] = {"1301", "002b,0033,0039"};
	char h[2][13];
	for (int i = 0; i < 2; i++) {
		uint8_t md[32];
		unsigned int mdl = 0;
		if (EVP_Digest(in[i], strlen(in[i]), md, &mdl, EVP_sha256(), NULL) != 1 ||
		    mdl != 32)
			return -1;
		for (int b = 0; b < 6; b++)
			snprintf(h[i] + 2 * b, 3, "%02x", md[b]);
	}
	snprintf(out, 40, "q13d0105h3_%s_%s", h[0], h[1]);
	return 0;
}

/* CRYPTO frame [off, off + n) of ch into f: its length. */
static size_t crypto_frame(uint8_t *f, const uint8_t *ch, size_t off, size_t n)
{
	size_t o = 0;
	f[o++] = 0x06;
	o += put_varint(f + o, off);
	o += put_varint(f + o, n);
	memcpy(f + o, ch + off, n);
	return o + n;
}

struct trip {
	uint8_t d[3][1500]; /* client datagram 1, server datagram, client datagram 2 */
	size_t n[3];
	uint8_t ch[2048];
	size_t ch_len;
};

static const uint8_t t_dcid[] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99};
static const uint8_t t_scid[] = {0xc1, 0xc2, 0xc3, 0xc4};
static const uint8_t t_sscid[] = {0x5e, 0x5e, 0x5e, 0x5e, 0x5e, 0x5e, 0x5e, 0x5e};

/* Two client Initials over the ClientHello (the second half first, each half in two
 * CRYPTO frames out of order with PING and an ACK between them), a server Initial, and the
 * second Initial coalesced with a Handshake packet; each client datagram 1200+ bytes. */
static int build_trip(uint32_t version, struct trip *t)
{
	struct secho_quic_keys k;
	if (secho_quic_initial_keys(version, t_dcid, sizeof(t_dcid), 0, &k) != 0)
		return -1;
	t->ch_len = make_client_hello(t->ch, sizeof(t->ch));
	size_t half = t->ch_len / 2, q = half / 2;
	uint8_t pl[1400];
	size_t o;

	/* Initial pn 0: the CH's second half, [half + q, end) then PING then [half, half + q) */
	o = crypto_frame(pl, t->ch, half + q, t->ch_len - half - q);
	pl[o++] = 0x01;
	o += crypto_frame(pl + o, t->ch, half, q);
	memset(pl + o, 0, 1150 - o), o = 1150; /* PADDING */
	t->n[0] = seal_initial(version, &k, t_dcid, sizeof(t_dcid), t_scid, sizeof(t_scid), 0, pl,
	                       o, t->d[0]);

	/* the server's Initial: its header is what is read (keys it would use are not) */
	struct secho_quic_keys sk;
	if (secho_quic_initial_keys(version, t_dcid, sizeof(t_dcid), 1, &sk) != 0)
		return -1;
	o = 0;
	pl[o++] = 0x02, pl[o++] = 0, pl[o++] = 0, pl[o++] = 0, pl[o++] = 0; /* ACK of pn 0 */
	memset(pl + o, 0, 100 - o), o = 100;
	t->n[1] = seal_initial(version, &sk, t_scid, sizeof(t_scid), t_sscid, sizeof(t_sscid), 0,
	                       pl, o, t->d[1]);

	/* Initial pn 1: [0, q) second, [q, half) first, an ACK, then a Handshake packet */
	o = crypto_frame(pl, t->ch, q, half - q);
	pl[o++] = 0x02, pl[o++] = 0, pl[o++] = 0, pl[o++] = 0, pl[o++] = 0;
	o += crypto_frame(pl + o, t->ch, 0, q);
	memset(pl + o, 0, 1100 - o), o = 1100;
	t->n[2] = seal_initial(version, &k, t_sscid, sizeof(t_sscid), t_scid, sizeof(t_scid), 1, pl,
	                       o, t->d[2]);
	if (!t->n[0] || !t->n[1] || !t->n[2])
		return -1;
	/* a Handshake packet coalesced after it (opaque bytes: not decrypted) */
	uint8_t *hs = t->d[2] + t->n[2];
	size_t ho = 0;
	hs[ho++] = (uint8_t)(0xc0 | (version == SECHO_QUIC_V2 ? 3 : 2) << 4 | 1);
	hs[ho++] = (uint8_t)(version >> 24), hs[ho++] = (uint8_t)(version >> 16);
	hs[ho++] = (uint8_t)(version >> 8), hs[ho++] = (uint8_t)version;
	hs[ho++] = sizeof(t_sscid);
	memcpy(hs + ho, t_sscid, sizeof(t_sscid)), ho += sizeof(t_sscid);
	hs[ho++] = sizeof(t_scid);
	memcpy(hs + ho, t_scid, sizeof(t_scid)), ho += sizeof(t_scid);
	hs[ho++] = 0x40, hs[ho++] = 40;
	memset(hs + ho, 0x5a, 40), ho += 40;
	t->n[2] += ho;
	return 0;
}

static void feed_trip(struct secho_feat_quic *s, const struct trip *t)
{
	struct secho_feat_pkt p0 = pkt_of(t->d[0], t->n[0], SECHO_FEAT_FWD, 40000, 4433);
	struct secho_feat_pkt p1 = pkt_of(t->d[1], t->n[1], SECHO_FEAT_REV, 4433, 40000);
	struct secho_feat_pkt p2 = pkt_of(t->d[2], t->n[2], SECHO_FEAT_FWD, 40000, 4433);
	secho_feat_quic_packet(s, &p0);
	secho_feat_quic_packet(s, &p1);
	secho_feat_quic_packet(s, &p2);
}

static struct trip trip;

/* A string member of j, or "" when it is missing or not a string. */
static const char *jstr_of(const json_t *j, const char *name)
{
	const char *v = json_string_value(json_object_get(j, name));
	return v ? v : "";
}

static void test_round_trip(void)
{
	static const uint32_t vs[] = {SECHO_QUIC_V1, SECHO_QUIC_V2, SECHO_QUIC_DRAFT29};
	for (size_t v = 0; v < 3; v++) {
		t_begin("quic round trip %08x: Initials sealed by OpenSSL, ClientHello over two",
		        vs[v]);
		memset(&trip, 0, sizeof(trip));
		int r = build_trip(vs[v], &trip);
		T_CHECK(r == 0, "built");
		T_CHECK(trip.ch_len > 1200, "the ClientHello needs two Initials (%zu)",
		        trip.ch_len);
		memset(&st, 0, sizeof(st));
		/* the first Initial alone: half the ClientHello, in two ranges, not whole */
		struct secho_feat_pkt p0 =
		        pkt_of(trip.d[0], trip.n[0], SECHO_FEAT_FWD, 40000, 4433);
		secho_feat_quic_packet(&st, &p0);
		size_t chl = 0;
		T_CHECK(st.initials == 1 && secho_feat_quic_client_hello(&st, &chl) == NULL,
		        "not whole after one Initial");
		T_CHECK(secho_quic_crypto_prefix(&st.crypto) == 0 && st.crypto.nranges == 1,
		        "one range, not from 0");

		memset(&st, 0, sizeof(st));
		feed_trip(&st, &trip);
		const uint8_t *ch = secho_feat_quic_client_hello(&st, &chl);
		T_CHECK(ch && chl == trip.ch_len && memcmp(ch, trip.ch, chl) == 0,
		        "the same ClientHello back (%zu of %zu bytes)", chl, trip.ch_len);
		T_CHECK(st.initials == 2 && st.initials_failed == 0 && st.malformed == 0,
		        "two Initials opened (%u, failed %u, malformed %u)", st.initials,
		        st.initials_failed, st.malformed);
		T_CHECK(st.version == vs[v] && st.client_version == vs[v], "version");
		T_CHECK(st.oscid_len == sizeof(t_dcid) &&
		                memcmp(st.oscid, t_dcid, sizeof(t_dcid)) == 0,
		        "oscid: the first DCID");
		T_CHECK(st.occid_len == sizeof(t_scid) &&
		                memcmp(st.occid, t_scid, sizeof(t_scid)) == 0,
		        "occid");
		T_CHECK(st.scid_len == sizeof(t_sscid) &&
		                memcmp(st.scid, t_sscid, sizeof(t_sscid)) == 0 && st.server_seen,
		        "scid: the server's");
		T_CHECK(st.done && st.ch_done && !st.ch_truncated, "done");
		T_CHECK(st.server_port == 4433 && st.zero_rtt == 0, "port");

		/* the ClientHello's fields (tls.h's parser): what make_client_hello wrote */
		T_CHECK(st.hello & SECHO_QUIC_H_PARSED, "the ClientHello parsed (%#x)", st.hello);
		T_CHECK(st.sni_len == 17 && memcmp(st.sni, "quic.example.test", 17) == 0, "SNI");
		T_CHECK(st.alpn_len == 2 && memcmp(st.alpn, "h3", 2) == 0, "ALPN");
		T_CHECK(st.ua_len == 12 && memcmp(st.ua, "secho-test/1", 12) == 0, "user agent");
		char ja4[40];
		T_CHECK(ja4_expected(ja4) == 0 && (st.hello & SECHO_QUIC_H_JA4) &&
		                memcmp(st.ja4, ja4, SECHO_TLS_JA4_LEN) == 0,
		        "JA4 %.36s, computed here %s", st.ja4, ja4);
		T_CHECK(st.n_ext == 5 && st.ext_type[0] == 0 && st.ext_type[4] == 0x39 &&
		                st.ext_len[3] == 1216 + 6,
		        "extension list");

		char js[1024];
		int jn = secho_feat_quic_json(&st, js, sizeof(js));
		T_CHECK(jn > 0 && (size_t)jn == strlen(js), "json written (%d)", jn);
		char wrapped[1100];
		snprintf(wrapped, sizeof(wrapped), "{%s}", js);
		json_t *j = json_loads(wrapped, 0, NULL);
		T_CHECK(j != NULL, "json parses: %s", wrapped);
		if (j) {
			T_CHECK(json_integer_value(json_object_get(j, "quic_version")) == vs[v],
			        "json version");
			T_CHECK(strcmp(jstr_of(j, "quic_oscid"), "112233445566778899") == 0,
			        "json oscid");
			T_CHECK(json_integer_value(json_object_get(j, "quic_ch_length")) ==
			                (json_int_t)trip.ch_len,
			        "json ch length");
			T_CHECK(json_integer_value(json_object_get(j, "quic_ch_parsed")) == 1,
			        "parsed");
			T_CHECK(strcmp(jstr_of(j, "quic_sni"), "quic.example.test") == 0,
			        "json sni");
			T_CHECK(strcmp(jstr_of(j, "quic_user_agent"), "secho-test/1") == 0,
			        "json user agent");
			T_CHECK(json_array_size(json_object_get(j, "quic_tls_ext_type")) == 5,
			        "json extension types");
			json_decref(j);
		}
		T_CHECK(secho_feat_quic_json(&st, js, 40) == -ENOSPC, "a short buffer: -ENOSPC");

		/* the second Initial's tag corrupted: counted, its half never placed */
		memset(&st, 0, sizeof(st));
		struct trip *t = &trip;
		size_t tag_end =
		        t->n[2] - (1 + 4 + 1 + 8 + 1 + 4 + 2 + 40); /* before the Handshake */
		t->d[2][tag_end - 1] ^= 0x80;
		feed_trip(&st, t);
		T_CHECK(st.initials == 1 && st.initials_failed == 1,
		        "one opened, one counted (%u %u)", st.initials, st.initials_failed);
		T_CHECK(secho_feat_quic_client_hello(&st, &chl) == NULL && !st.done,
		        "no ClientHello, still waiting");
		T_CHECK(secho_quic_crypto_prefix(&st.crypto) == 0, "nothing of the bad one placed");
		t->d[2][tag_end - 1] ^= 0x80;

		/* snapped: the second datagram cut by the capture */
		memset(&st, 0, sizeof(st));
		struct secho_feat_pkt p2 = pkt_of(t->d[2], 300, SECHO_FEAT_FWD, 40000, 4433);
		p2.wire_len = (uint32_t)t->n[2];
		secho_feat_quic_packet(&st, &p0);
		secho_feat_quic_packet(&st, &p2);
		T_CHECK(st.cut == 1 && st.initials == 1 && st.malformed == 0,
		        "a cut datagram: cut");
		t_end();
	}

	t_begin("quic: a Retry, then an Initial keyed from the Retry's connection ID");
	{
		static uint8_t d0[1500], retry[64], d1[1500], pl[1300];
		static const uint8_t rscid[] = {0x77, 0x66, 0x55, 0x44, 0x33};
		struct secho_quic_keys ka, kb;
		size_t chl = 0, o;
		T_CHECK(build_trip(SECHO_QUIC_V1, &trip) == 0, "built");
		T_CHECK(secho_quic_initial_keys(SECHO_QUIC_V1, t_dcid, sizeof(t_dcid), 0, &ka) ==
		                        0 &&
		                secho_quic_initial_keys(SECHO_QUIC_V1, rscid, sizeof(rscid), 0,
		                                        &kb) == 0,
		        "keys");
		/* Initial 0 (DCID t_dcid): the ClientHello's first 100 bytes only */
		o = crypto_frame(pl, trip.ch, 0, 100);
		memset(pl + o, 0, 1150 - o);
		size_t n0 = seal_initial(SECHO_QUIC_V1, &ka, t_dcid, sizeof(t_dcid), t_scid,
		                         sizeof(t_scid), 0, pl, 1150, d0);
		/* the server's Retry: SCID rscid, a token, a (not checked) integrity tag */
		size_t r = 0;
		retry[r++] = 0xf0, retry[r++] = 0, retry[r++] = 0, retry[r++] = 0, retry[r++] = 1;
		retry[r++] = sizeof(t_scid);
		memcpy(retry + r, t_scid, sizeof(t_scid)), r += sizeof(t_scid);
		retry[r++] = sizeof(rscid);
		memcpy(retry + r, rscid, sizeof(rscid)), r += sizeof(rscid);
		memset(retry + r, 0xee, 24), r += 24;
		/* Initial 1 (DCID rscid, keyed from it): the rest, up to the end */
		o = crypto_frame(pl, trip.ch, 100,
		                 trip.ch_len - 100 > 1100 ? 1100 : trip.ch_len - 100);
		size_t n1 = seal_initial(SECHO_QUIC_V1, &kb, rscid, sizeof(rscid), t_scid,
		                         sizeof(t_scid), 1, pl, o, d1);
		T_CHECK(n0 && n1, "sealed");
		memset(&st, 0, sizeof(st));
		struct secho_feat_pkt p = pkt_of(d0, n0, SECHO_FEAT_FWD, 40000, 443);
		secho_feat_quic_packet(&st, &p);
		p = pkt_of(retry, r, SECHO_FEAT_REV, 443, 40000);
		secho_feat_quic_packet(&st, &p);
		p = pkt_of(d1, n1, SECHO_FEAT_FWD, 40000, 443);
		secho_feat_quic_packet(&st, &p);
		T_CHECK(st.retry_scid_len == sizeof(rscid) &&
		                memcmp(st.retry_scid, rscid, sizeof(rscid)) == 0,
		        "the Retry's SCID");
		T_CHECK(st.initials == 2 && st.initials_failed == 0,
		        "both Initials opened (%u, %u)", st.initials, st.initials_failed);
		T_CHECK(st.oscid_len == sizeof(t_dcid) && !st.server_seen,
		        "oscid the first DCID; a Retry is not the server's Initial");
		T_CHECK(secho_quic_crypto_prefix(&st.crypto) == 1200 ||
		                secho_feat_quic_client_hello(&st, &chl) != NULL,
		        "the ClientHello's bytes from both keys (prefix %zu)",
		        secho_quic_crypto_prefix(&st.crypto));
		/* a long header with the fixed bit clear (RFC 9287 greasing) still parses */
		struct secho_quic_hdr h;
		d1[0] &= (uint8_t)~0x40;
		T_CHECK(secho_quic_parse_long(d1, n1, &h) == 0 && h.type == SECHO_QUIC_INITIAL,
		        "a greased fixed bit parses");
	}
	t_end();

	t_begin("quic: JSON strings escaped");
	{
		memset(&st, 0, sizeof(st));
		st.quic = 1;
		st.hello = SECHO_QUIC_H_PARSED | SECHO_QUIC_H_SNI | SECHO_QUIC_H_UA;
		static const char sni[] = "a\"b\\c\x01\x7f\xc3\xa9";
		st.sni_len = sizeof(sni) - 1;
		memcpy(st.sni, sni, st.sni_len);
		st.ua_len = 3;
		memcpy(st.ua, "x\ny", 3);
		char js[1024], w[1100];
		int jn = secho_feat_quic_json(&st, js, sizeof(js));
		snprintf(w, sizeof(w), "{%s}", js);
		json_t *j = jn > 0 ? json_loads(w, 0, NULL) : NULL;
		T_CHECK(j != NULL, "parses: %s", w);
		T_CHECK(strstr(js, "\"quic_sni\":\"a\\\"b\\\\c\\u0001\\u007f\\u00c3\\u00a9\"") !=
		                NULL,
		        "escaped: %s", js);
		T_CHECK(j && strcmp(jstr_of(j, "quic_user_agent"), "x\ny") == 0, "a newline");
		json_decref(j);
	}
	t_end();

	t_begin("quic: not QUIC, or not from its start");
	memset(&st, 0, sizeof(st));
	uint8_t junk[64] = {0x16, 3, 1};
	struct secho_feat_pkt pj = pkt_of(junk, sizeof(junk), SECHO_FEAT_FWD, 1, 2);
	secho_feat_quic_packet(&st, &pj);
	T_CHECK(st.done && !st.quic, "a short-header first packet: done");
	char js[64];
	T_CHECK(secho_feat_quic_json(&st, js, sizeof(js)) == 0 && js[0] == 0, "no members");
	memset(&st, 0, sizeof(st));
	uint8_t vn[] = {0xc0, 0x1a, 0x2a, 0x3a, 0x4a, 0, 0, 0, 0};
	pj = pkt_of(vn, sizeof(vn), SECHO_FEAT_FWD, 1, 2);
	secho_feat_quic_packet(&st, &pj);
	T_CHECK(st.done && !st.quic, "an unknown version first: done");
	memset(&st, 0, sizeof(st));
	pj.proto = 6;
	secho_feat_quic_packet(&st, &pj);
	T_CHECK(st.done, "TCP: done");
	t_end();
}

static void test_reassembly(void)
{
	t_begin("quic CRYPTO reassembly: holes, overlaps, the bound");
	static struct secho_quic_crypto r;
	uint8_t d[SECHO_QUIC_CH_MAX + 100];
	for (size_t i = 0; i < sizeof(d); i++)
		d[i] = (uint8_t)(i * 13);
	memset(&r, 0, sizeof(r));
	/* 8 disjoint ranges fit, a 9th does not */
	for (int i = 0; i < SECHO_QUIC_RANGES; i++)
		T_CHECK(secho_quic_crypto_add(&r, 100 + 20 * (uint64_t)i, d + 100 + 20 * i, 10) ==
		                0,
		        "range %d", i);
	T_CHECK(r.nranges == SECHO_QUIC_RANGES, "8 ranges");
	T_CHECK(secho_quic_crypto_add(&r, 1000, d + 1000, 5) == -ENOSPC && r.dropped == 1,
	        "a ninth hole: dropped");
	/* a range that bridges them all: one range */
	T_CHECK(secho_quic_crypto_add(&r, 0, d, 300) == 0 && r.nranges == 1, "merged");
	T_CHECK(secho_quic_crypto_prefix(&r) == 300 && memcmp(r.buf, d, 300) == 0, "prefix 300");
	/* adjacent and overlapping */
	T_CHECK(secho_quic_crypto_add(&r, 300, d + 300, 50) == 0 &&
	                secho_quic_crypto_prefix(&r) == 350,
	        "adjacent extends");
	T_CHECK(secho_quic_crypto_add(&r, 340, d + 340, 20) == 0 &&
	                secho_quic_crypto_prefix(&r) == 360,
	        "overlap extends");
	T_CHECK(secho_quic_crypto_add(&r, 10, d + 10, 5) == 0 && r.nranges == 1,
	        "inside: nothing new");
	/* the bound */
	T_CHECK(secho_quic_crypto_add(&r, SECHO_QUIC_CH_MAX - 10, d + SECHO_QUIC_CH_MAX - 10, 50) ==
	                        0 &&
	                r.truncated && r.end[r.nranges - 1] == SECHO_QUIC_CH_MAX,
	        "cut at the bound");
	T_CHECK(secho_quic_crypto_add(&r, (uint64_t)1 << 40, d, 5) == 0 && r.nranges == 2,
	        "far past the bound: ignored");
	t_end();

	t_begin("quic: a ClientHello longer than the bound is cut and flagged");
	memset(&st, 0, sizeof(st));
	uint8_t f[SECHO_QUIC_CH_MAX + 32];
	size_t o = 0;
	f[o++] = 0x06, f[o++] = 0, f[o++] = 0x40 | (SECHO_QUIC_CH_MAX + 8) >> 8;
	f[o++] = (uint8_t)(SECHO_QUIC_CH_MAX + 8);
	f[o++] = 1, f[o++] = 0, f[o++] = (uint8_t)((SECHO_QUIC_CH_MAX + 4) >> 8);
	f[o++] = (uint8_t)(SECHO_QUIC_CH_MAX + 4);
	memset(f + o, 0xab, SECHO_QUIC_CH_MAX + 4), o += SECHO_QUIC_CH_MAX + 4;
	T_CHECK(secho_quic_frames(&st, f, o) == 0, "frames read");
	T_CHECK(secho_quic_crypto_prefix(&st.crypto) == SECHO_QUIC_CH_MAX && st.crypto.truncated,
	        "the buffer full");
	/* lies: a CRYPTO length past the end; an ACK range count past the end */
	uint8_t lie[] = {0x06, 0x00, 0x44, 0x00, 1, 2, 3};
	T_CHECK(secho_quic_frames(&st, lie, sizeof(lie)) == -EINVAL && st.malformed == 1,
	        "CRYPTO lies");
	uint8_t ack[] = {0x02, 0x05, 0x00, 0x3f, 0x00, 1, 1};
	T_CHECK(secho_quic_frames(&st, ack, sizeof(ack)) == -EINVAL && st.malformed == 2,
	        "ACK lies");
	uint8_t other[] = {0x01, 0x08, 0x00, 0x06};
	T_CHECK(secho_quic_frames(&st, other, sizeof(other)) == 0 && st.frames_other == 1,
	        "a STREAM frame ends the parse");
	uint8_t cc[] = {0x1c, 0x0a, 0x06, 0x02, 'n', 'o'};
	T_CHECK(secho_quic_frames(&st, cc, sizeof(cc)) == 0 && st.close_seen && st.close_code == 10,
	        "CONNECTION_CLOSE");
	t_end();
}

/* ---- a capture's datagrams (tests/sh/test_feat_quic.sh) ---- */

static int run_pcap(const char *path)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline(path, err);
	if (!pc) {
		fprintf(stderr, "test_feat_quic: %s: %s\n", path, err);
		return 2;
	}
	memset(&st, 0, sizeof(st));
	struct pcap_pkthdr *ph;
	const u_char *data;
	uint16_t cport = 0, sport = 0;
	unsigned fed = 0;
	while (pcap_next_ex(pc, &ph, &data) == 1) {
		struct secho_dissect d;
		if (secho_dissect_snap(data, ph->caplen, ph->len, &d) != SECHO_DISSECT_OK ||
		    d.proto != 17 || !(d.flags & SECHO_DISSECT_F_L4))
			continue;
		size_t at = (size_t)d.l4_off + 8;
		if (at > ph->caplen || d.l4_len < 8)
			continue;
		size_t wire = d.l4_len - 8, cap = ph->caplen - at;
		if (cap > wire)
			cap = wire;
		if (!cport)
			cport = d.sport, sport = d.dport;
		uint8_t dir;
		if (d.sport == cport && d.dport == sport)
			dir = SECHO_FEAT_FWD;
		else if (d.sport == sport && d.dport == cport)
			dir = SECHO_FEAT_REV;
		else
			continue; /* another flow */
		struct secho_feat_pkt p = pkt_of(data + at, cap, dir, d.sport, d.dport);
		p.wire_len = (uint32_t)wire;
		secho_feat_quic_packet(&st, &p);
		fed++;
	}
	pcap_close(pc);
	char js[2048];
	int n = secho_feat_quic_json(&st, js, sizeof(js));
	printf("datagrams: %u\njson: {%s}\n", fed, n >= 0 ? js : "");
	size_t chl = 0;
	const uint8_t *ch = secho_feat_quic_client_hello(&st, &chl);
	printf("ch: ");
	for (size_t i = 0; ch && i < chl; i++)
		printf("%02x", ch[i]);
	printf("\n");
	return n >= 0 ? 0 : 1;
}

/* ---- fuzz seeds: fuzz_quic's input is records of dir(1) len(2, big-endian) bytes ---- */

static int write_seed(const char *dir, const char *name, const uint8_t *const *d, const size_t *n,
                      const uint8_t *dirs, size_t count)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	for (size_t i = 0; i < count; i++) {
		uint8_t h[3] = {dirs[i], (uint8_t)(n[i] >> 8), (uint8_t)n[i]};
		if (fwrite(h, 1, 3, f) != 3 || fwrite(d[i], 1, n[i], f) != n[i]) {
			fclose(f);
			return -1;
		}
	}
	return fclose(f) == 0 ? 0 : -1;
}

static int write_seeds(const char *dir)
{
	static uint8_t rfc[2][1200];
	for (int c = 0; c < 2; c++)
		if (t_unhex(rfc_cases[c].packet, rfc[c], 1200) != 1200)
			return 1;
	const uint8_t *d[3] = {rfc[0]};
	size_t n[3] = {1200};
	uint8_t dirs[3] = {0, 1, 0};
	int rc = write_seed(dir, "rfc9001-client", d, n, dirs, 1);
	d[0] = rfc[1];
	rc |= write_seed(dir, "rfc9369-client", d, n, dirs, 1);
	static const uint32_t vs[] = {SECHO_QUIC_V1, SECHO_QUIC_V2, SECHO_QUIC_DRAFT29};
	static const char *names[] = {"trip-v1", "trip-v2", "trip-draft29"};
	for (int v = 0; v < 3; v++) {
		if (build_trip(vs[v], &trip) != 0)
			return 1;
		for (int i = 0; i < 3; i++)
			d[i] = trip.d[i], n[i] = trip.n[i];
		rc |= write_seed(dir, names[v], d, n, dirs, 3);
	}
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--write-seeds") == 0)
		return write_seeds(argv[2]);
	const char *pcap = getenv("SECHO_QUIC_PCAP");
	if (pcap && *pcap)
		return run_pcap(pcap);
	test_rfc();
	test_round_trip();
	test_reassembly();
	return t_exit();
}
