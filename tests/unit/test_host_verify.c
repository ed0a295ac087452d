/*
 * tests/unit/test_host_verify.c - the host tool's verifier, oracle and transports.
 *
 * The fixture builds responses its own way: OpenSSL EVP for AES-256-GCM (the test checks
 * the verifier, so its crypto must not be the verifier's nettle) and a checksum written
 * here. Cases:
 *  - oracle vs McGrew-Viega GCM test cases 13-16 and vs OpenSSL on random lengths;
 *  - a correct response is accepted; every single corruption (each header field, both
 *    checksums, flags, key id, salt, repeated sequence, a ciphertext byte, a tag byte,
 *    lengths) is rejected with its own named check;
 *  - socket-mode (datagram) checks; the counters report is decrypted;
 *  - key file permissions;
 *  - end to end over loopback UDP (127.0.0.1 only) against a fake responder thread:
 *    paired, counters and load pass; a responder that corrupts tags or repeats
 *    sequences makes paired fail with the right names;
 *  - raw AF_PACKET mode on lo against a raw fake responder (full L2/L3 checks; a wrong
 *    TTL is named). SECHO_TEST_SHOW=1 prints the reports.
 */
#include "harness.h"
#include "host/session.h"
#include "host/verify.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static const uint8_t K[32] = {0x10, 0x21, 0x32, 0x43, 0x54, 0x65, 0x76, 0x87, 0x98, 0xa9, 0xba,
                              0xcb, 0xdc, 0xed, 0xfe, 0x0f, 0x01, 0x12, 0x23, 0x34, 0x45, 0x56,
                              0x67, 0x78, 0x89, 0x9a, 0xab, 0xbc, 0xcd, 0xde, 0xef, 0xf0};
static const uint8_t SALT[4] = {0xa1, 0xb2, 0xc3, 0xd4};
#define KEY_ID 7

static bool quick(void)
{
	const char *q = getenv("SECHO_TEST_QUICK");

	return q && *q && *q != '0';
}

/* ---- fixture crypto (OpenSSL) ---- */

static void ossl_seal(const uint8_t key[32], const uint8_t iv[12], const uint8_t *aad, size_t alen,
                      const uint8_t *pt, size_t n, uint8_t *ct, uint8_t tag[16])
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int l;

	EVP_EncryptInit_ex(c, EVP_aes_256_gcm(), NULL, key, iv);
	if (alen)
		EVP_EncryptUpdate(c, NULL, &l, aad, (int)alen);
	if (n)
		EVP_EncryptUpdate(c, ct, &l, pt, (int)n);
	EVP_EncryptFinal_ex(c, ct + n, &l);
	EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, 16, tag);
	EVP_CIPHER_CTX_free(c);
}

/* RFC 1071 sum, written again here so the fixture does not use the verifier's. */
static uint16_t fx_csum(const uint8_t *p, size_t n, uint32_t s)
{
	while (n > 1) {
		s += (uint32_t)(p[0] << 8 | p[1]);
		p += 2;
		n -= 2;
	}
	if (n)
		s += (uint32_t)p[0] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

struct fx {
	uint8_t version, flags;
	uint16_t key_id;
	uint8_t salt[4];
	uint64_t seq;
	uint8_t ttl;
	uint16_t frag;
};

static const struct secho_vpath PATH = {
        .host_mac = {0x02, 0, 0, 0, 0, 1},
        .ep_mac = {0x02, 0, 0, 0, 0, 2},
        .host_ip = {192, 0, 2, 1},
        .ep_ip = {192, 0, 2, 2},
};

/* Secure part: header, ciphertext, tag. Returns its length. */
static size_t fx_secure(const struct fx *h, const uint8_t *pl, size_t n, uint8_t *d)
{
	uint8_t iv[12];

	d[0] = h->version;
	d[1] = h->flags;
	d[2] = (uint8_t)(h->key_id >> 8);
	d[3] = (uint8_t)h->key_id;
	memcpy(d + 4, h->salt, 4);
	for (int i = 0; i < 8; i++)
		d[8 + i] = (uint8_t)(h->seq >> (56 - 8 * i));
	memcpy(iv, d + 4, 12);
	ossl_seal(K, iv, d, 16, pl, n, d + 16, d + 16 + n);
	return 32 + n;
}

static void fx_fix_ip(uint8_t *f)
{
	f[24] = f[25] = 0;
	uint16_t c = fx_csum(f + 14, 20, 0);
	f[24] = (uint8_t)(c >> 8);
	f[25] = (uint8_t)c;
}

static void fx_fix_udp(uint8_t *f)
{
	uint8_t *ip = f + 14, *u = f + 34;
	uint16_t ulen = (uint16_t)(u[4] << 8 | u[5]);
	uint32_t ps = 17u + ulen;

	for (int i = 12; i < 20; i += 2)
		ps += (uint32_t)(ip[i] << 8 | ip[i + 1]);
	u[6] = u[7] = 0;
	uint16_t c = fx_csum(u, ulen, ps);
	if (!c)
		c = 0xffff;
	u[6] = (uint8_t)(c >> 8);
	u[7] = (uint8_t)c;
}

/* A whole response frame for request (sport -> dport) with header h. */
static size_t fx_frame(const struct fx *h, uint16_t req_sport, uint16_t req_dport,
                       const uint8_t *pl, size_t n, uint8_t *f)
{
	size_t sl = fx_secure(h, pl, n, f + 42);
	uint16_t tot = (uint16_t)(20 + 8 + sl);

	memcpy(f, PATH.host_mac, 6);
	memcpy(f + 6, PATH.ep_mac, 6);
	f[12] = 0x08;
	f[13] = 0x00;
	uint8_t *ip = f + 14;
	ip[0] = 0x45;
	ip[1] = 0;
	ip[2] = (uint8_t)(tot >> 8);
	ip[3] = (uint8_t)tot;
	ip[4] = 0x12;
	ip[5] = 0x34;
	ip[6] = (uint8_t)(h->frag >> 8);
	ip[7] = (uint8_t)h->frag;
	ip[8] = h->ttl;
	ip[9] = 17;
	memcpy(ip + 12, PATH.ep_ip, 4);
	memcpy(ip + 16, PATH.host_ip, 4);
	fx_fix_ip(f);
	uint8_t *u = f + 34;
	u[0] = (uint8_t)(req_dport >> 8);
	u[1] = (uint8_t)req_dport;
	u[2] = (uint8_t)(req_sport >> 8);
	u[3] = (uint8_t)req_sport;
	u[4] = (uint8_t)((8 + sl) >> 8);
	u[5] = (uint8_t)(8 + sl);
	fx_fix_udp(f);
	return 14 + (size_t)tot;
}

static struct fx fx_good(uint64_t seq, uint16_t dport)
{
	struct fx h = {.version = 1,
	               .flags = (uint8_t)(dport == 4001   ? 1
	                                  : dport == 4002 ? 2
	                                                  : 0),
	               .key_id = KEY_ID,
	               .seq = seq,
	               .ttl = 64,
	               .frag = 0x4000};

	memcpy(h.salt, SALT, 4);
	return h;
}

static void set_key(struct secho_host_key *k)
{
	memset(k, 0, sizeof(*k)); /* not shared (an unset bool is undefined behaviour) */
	k->key_id = KEY_ID;
	memcpy(k->key, K, 32);
	memcpy(k->salt, SALT, 4);
}

/* ---- oracle ---- */

static void test_oracle(void)
{
	static const struct {
		const char *k, *iv, *a, *p, *c, *t;
	} mv[] = {
	        /* McGrew & Viega, "The Galois/Counter Mode of Operation", test cases 13-16. */
	        {"0000000000000000000000000000000000000000000000000000000000000000",
	         "000000000000000000000000", "", "", "", "530f8afbc74536b9a963b4f1c4cb738b"},
	        {"0000000000000000000000000000000000000000000000000000000000000000",
	         "000000000000000000000000", "", "00000000000000000000000000000000",
	         "cea7403d4d606b6e074ec5d3baf39d18", "d0d1c8a799996bf0265b98b5d48ab919"},
	        {"feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
	         "cafebabefacedbaddecaf888", "",
	         "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
	         "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255",
	         "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
	         "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad",
	         "b094dac5d93471bdec1a502270e3cc6c"},
	        {"feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
	         "cafebabefacedbaddecaf888", "feedfacedeadbeeffeedfacedeadbeefabaddad2",
	         "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
	         "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
	         "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
	         "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
	         "76fc6ece0f4e1768cddf8853bb2d551b"},
	};
	struct secho_oracle o;
	uint8_t k[32], iv[12], a[64], p[128], c[128], t[16], oc[128], ot[16], op[128];
	long al, pl;

	t_begin("host oracle McGrew-Viega 13-16");
	for (size_t i = 0; i < sizeof(mv) / sizeof(mv[0]); i++) {
		t_unhex(mv[i].k, k, sizeof(k));
		t_unhex(mv[i].iv, iv, sizeof(iv));
		al = t_unhex(mv[i].a, a, sizeof(a));
		pl = t_unhex(mv[i].p, p, sizeof(p));
		t_unhex(mv[i].c, c, sizeof(c));
		t_unhex(mv[i].t, t, sizeof(t));
		secho_oracle_init(&o, k);
		secho_oracle_seal(&o, iv, a, (size_t)al, p, (size_t)pl, oc, ot);
		T_CHECK(memcmp(oc, c, (size_t)pl) == 0, "case %zu ciphertext", i + 13);
		T_CHECK(memcmp(ot, t, 16) == 0, "case %zu tag", i + 13);
		T_CHECK(secho_oracle_open(&o, iv, a, (size_t)al, c, (size_t)pl, op, t) == 1,
		        "case %zu open", i + 13);
		T_CHECK(memcmp(op, p, (size_t)pl) == 0, "case %zu plaintext", i + 13);
		t[0] ^= 1;
		T_CHECK(secho_oracle_open(&o, iv, a, (size_t)al, c, (size_t)pl, op, t) == 0,
		        "case %zu bad tag refused", i + 13);
		secho_oracle_wipe(&o);
	}
	t_end();

	t_begin("host oracle vs OpenSSL, lengths 0..1500");
	{
		static uint8_t pt[1600], c1[1616], c2[1616];
		uint8_t t1[16], t2[16], aad[16];
		unsigned step = quick() ? 37 : 1;

		t_randbytes(k, 32);
		secho_oracle_init(&o, k);
		for (size_t n = 0; n <= 1500; n += step) {
			t_randbytes(pt, n);
			t_randbytes(iv, 12);
			t_randbytes(aad, 16);
			secho_oracle_seal(&o, iv, aad, 16, pt, n, c1, t1);
			ossl_seal(k, iv, aad, 16, pt, n, c2, t2);
			T_CHECK(memcmp(c1, c2, n) == 0 && memcmp(t1, t2, 16) == 0, "length %zu", n);
		}
		secho_oracle_wipe(&o);
	}
	t_end();

	t_begin("host sha256 (FIPS 180-2 'abc')");
	{
		uint8_t h[32], want[32];

		secho_oracle_sha256((const uint8_t *)"abc", 3, h);
		t_unhex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", want,
		        32);
		T_CHECK(memcmp(h, want, 32) == 0, "sha256(abc)");
	}
	t_end();
}

/* ---- verifier ---- */

struct corruption {
	const char *what;
	unsigned want;
};

static struct secho_verifier *new_verifier(void)
{
	struct secho_verifier *v = malloc(sizeof(*v));
	struct secho_host_key k;

	set_key(&k);
	if (!v || secho_verifier_init(v, &k, 4000, 4001, 4002) < 0)
		abort();
	return v;
}

static void test_verify_frames(void)
{
	static uint8_t f[2048], pl[1500];
	struct secho_verifier *v = new_verifier();
	struct secho_vresult res;
	struct secho_vreq r = {.payload = pl, .sport = 40000};
	uint64_t seq = 1000;
	size_t n;

	t_begin("host verify accepts correct responses (both engines, sizes 0..1440)");
	for (size_t len = 0; len <= 1440; len += quick() ? 97 : 13) {
		for (uint16_t dp = 4000; dp <= 4001; dp++) {
			struct fx h = fx_good(seq++, dp);

			t_randbytes(pl, len);
			r.len = len;
			r.dport = dp;
			n = fx_frame(&h, r.sport, dp, pl, len, f);
			unsigned got = secho_verify_frame(v, &PATH, &r, f, n, NULL, 0, &res);
			T_CHECK(got == SECHO_VF_OK && res.mask == 0 && res.payload_match &&
			                res.ct_match && res.tag_match && res.l2l3_checked,
			        "len %zu port %u: %s mask %llx", len, dp, secho_vfail_name(got),
			        (unsigned long long)res.mask);
		}
	}
	t_end();

	t_begin("host verify names every corruption");
	{
		const size_t len = 100;
		struct fx h;

		t_randbytes(pl, len);
		r.len = len;
		r.dport = 4000;
		for (int c = 0;; c++) {
			unsigned want;
			uint64_t extra = 0; /* bits that fail as a consequence */
			const char *what;

			h = fx_good(seq++, 4000);
			switch (c) {
			case 0:
				what = "ttl";
				h.ttl = 63;
				want = SECHO_VF_IP_TTL;
				break;
			case 1:
				what = "df clear";
				h.frag = 0;
				want = SECHO_VF_IP_DF;
				break;
			case 2:
				what = "mf set";
				h.frag = 0x6000;
				want = SECHO_VF_IP_DF;
				break;
			case 3:
				what = "version";
				h.version = 2;
				want = SECHO_VF_HDR_VERSION;
				break;
			case 4:
				what = "key id";
				h.key_id = KEY_ID + 1;
				want = SECHO_VF_KEY_ID;
				break;
			case 5:
				what = "engine flag";
				h.flags = 1;
				want = SECHO_VF_FLAG_ENGINE;
				break;
			case 6:
				what = "counters flag";
				h.flags = 2;
				want = SECHO_VF_FLAG_COUNTERS;
				break;
			case 7:
				what = "reserved flag";
				h.flags = 0x80;
				want = SECHO_VF_FLAG_RESERVED;
				break;
			case 8:
				what = "salt";
				h.salt[3] ^= 1;
				want = SECHO_VF_SALT;
				/* IV = our salt || seq: the sealed text no longer matches. */
				extra = 1ull << SECHO_VF_CIPHERTEXT | 1ull << SECHO_VF_PAYLOAD |
				        1ull << SECHO_VF_TAG;
				break;
			default:
				what = NULL;
				want = 0;
				break;
			}
			if (!what)
				break;
			n = fx_frame(&h, r.sport, r.dport, pl, len, f);
			unsigned got = secho_verify_frame(v, &PATH, &r, f, n, NULL, 0, &res);
			T_CHECK(got == want && res.mask == ((1ull << want) | extra),
			        "%s: got %s mask %llx, want %s", what, secho_vfail_name(got),
			        (unsigned long long)res.mask, secho_vfail_name(want));
		}

		/* Byte-level corruptions of a correct frame, checksums fixed or not as noted. */
		static const struct {
			const char *what;
			size_t off;
			uint8_t x;
			int fix; /* 0 none, 1 ip+udp checksums, 2 udp checksum only */
			unsigned want;
		} bc[] = {
		        {"eth dst", 0, 0x01, 0, SECHO_VF_ETH_DST},
		        {"eth src", 11, 0x01, 0, SECHO_VF_ETH_SRC},
		        {"ethertype", 13, 0x06, 0, SECHO_VF_ETHERTYPE},
		        {"ihl", 14, 0x01, 0, SECHO_VF_IP_VERSION},
		        {"ip checksum", 24, 0x01, 0, SECHO_VF_IP_CSUM},
		        {"ip header byte, checksum stale", 15, 0x04, 0, SECHO_VF_IP_CSUM},
		        {"protocol", 23, 0x01, 1, SECHO_VF_IP_PROTO},
		        {"ip src", 29, 0x01, 1, SECHO_VF_IP_SRC},
		        {"ip dst", 33, 0x01, 1, SECHO_VF_IP_DST},
		        {"ip total length", 17, 0x02, 1, SECHO_VF_IP_LEN},
		        {"udp sport", 35, 0x01, 2, SECHO_VF_UDP_SPORT},
		        {"udp dport", 37, 0x01, 2, SECHO_VF_UDP_DPORT},
		        {"udp length", 39, 0x01, 2, SECHO_VF_UDP_LEN},
		        {"udp checksum", 41, 0x01, 0, SECHO_VF_UDP_CSUM},
		        {"udp payload byte, checksum stale", 60, 0x01, 0, SECHO_VF_UDP_CSUM},
		        {"ciphertext byte", 42 + 16 + 50, 0x80, 2, SECHO_VF_CIPHERTEXT},
		        {"tag byte", 42 + 16 + 100 + 15, 0x01, 2, SECHO_VF_TAG},
		        /* High sequence byte: a new IV, so the oracle's text differs. */
		        {"header byte (seq)", 42 + 8, 0x40, 2, SECHO_VF_CIPHERTEXT},
		};
		for (size_t i = 0; i < sizeof(bc) / sizeof(bc[0]); i++) {
			h = fx_good(seq++, 4000);
			n = fx_frame(&h, r.sport, r.dport, pl, len, f);
			f[bc[i].off] ^= bc[i].x;
			if (bc[i].fix == 1)
				fx_fix_ip(f);
			if (bc[i].fix)
				fx_fix_udp(f);
			unsigned got = secho_verify_frame(v, &PATH, &r, f, n, NULL, 0, &res);
			T_CHECK(got == bc[i].want && (res.mask >> bc[i].want & 1),
			        "%s: got %s (mask %llx), want %s", bc[i].what,
			        secho_vfail_name(got), (unsigned long long)res.mask,
			        secho_vfail_name(bc[i].want));
		}

		/* UDP checksum zero (absent) is refused by name. */
		h = fx_good(seq++, 4000);
		n = fx_frame(&h, r.sport, r.dport, pl, len, f);
		f[40] = f[41] = 0;
		T_CHECK(secho_verify_frame(v, &PATH, &r, f, n, NULL, 0, &res) ==
		                SECHO_VF_UDP_CSUM_ZERO,
		        "udp checksum zero: %s", secho_vfail_name(res.first));

		/* A repeated sequence number: the second sighting fails, only that check. */
		h = fx_good(seq++, 4001);
		r.dport = 4001;
		n = fx_frame(&h, r.sport, r.dport, pl, len, f);
		T_CHECK(secho_verify_frame(v, &PATH, &r, f, n, NULL, 0, &res) == SECHO_VF_OK,
		        "first sighting ok: %s", secho_vfail_name(res.first));
		T_CHECK(secho_verify_frame(v, &PATH, &r, f, n, NULL, 0, &res) ==
		                        SECHO_VF_SEQ_REPEAT &&
		                res.mask == 1ull << SECHO_VF_SEQ_REPEAT,
		        "repeat: %s", secho_vfail_name(res.first));
		/* ... also across paths: the same sequence on the other engine. */
		h = fx_good(h.seq, 4000);
		r.dport = 4000;
		n = fx_frame(&h, r.sport, r.dport, pl, len, f);
		T_CHECK(secho_verify_frame(v, &PATH, &r, f, n, NULL, 0, &res) ==
		                SECHO_VF_SEQ_REPEAT,
		        "repeat across paths: %s", secho_vfail_name(res.first));

		/* Bytes after the IP packet: one, or 8.8 KB, fail trailing-bytes and nothing
		 * else (the IP and UDP headers describe the packet correctly). */
		{
			static uint8_t big[14 + 1500 + 8800];

			for (size_t junk = 1; junk <= 8800; junk = junk == 1 ? 8800 : 8801) {
				h = fx_good(seq++, 4000);
				r.dport = 4000;
				n = fx_frame(&h, r.sport, r.dport, pl, len, big);
				memset(big + n, 0xa5, junk);
				unsigned got = secho_verify_frame(v, &PATH, &r, big, n + junk, NULL,
				                                  0, &res);
				T_CHECK(got == SECHO_VF_TRAILING &&
				                res.mask == 1ull << SECHO_VF_TRAILING,
				        "%zu bytes after the packet: %s mask %llx", junk,
				        secho_vfail_name(got), (unsigned long long)res.mask);
			}
			/* Ethernet pads a frame shorter than 60 bytes: not trailing bytes. An
			 * IP packet of 40 bytes (too short for a response, which fails for
			 * that) in a padded 60-byte frame. */
			h = fx_good(seq++, 4000);
			(void)fx_frame(&h, r.sport, r.dport, pl, len, big);
			big[16] = 0;
			big[17] = 40;
			fx_fix_ip(big);
			secho_verify_frame(v, &PATH, &r, big, 60, NULL, 0, &res);
			T_CHECK(!(res.mask >> SECHO_VF_TRAILING & 1) && res.first != SECHO_VF_OK,
			        "padded short frame: %s mask %llx", secho_vfail_name(res.first),
			        (unsigned long long)res.mask);
			/* The same 40-byte packet with a 61st byte: trailing. */
			secho_verify_frame(v, &PATH, &r, big, 61, NULL, 0, &res);
			T_CHECK(res.mask >> SECHO_VF_TRAILING & 1, "61-byte frame: mask %llx",
			        (unsigned long long)res.mask);
		}

		/* Secure part of the wrong size, headers consistent. */
		h = fx_good(seq++, 4000);
		n = fx_frame(&h, r.sport, r.dport, pl, len - 1, f);
		T_CHECK(secho_verify_frame(v, &PATH, &r, f, n, NULL, 0, &res) == SECHO_VF_IP_LEN &&
		                (res.mask >> SECHO_VF_LENGTH & 1),
		        "short ciphertext: %s mask %llx", secho_vfail_name(res.first),
		        (unsigned long long)res.mask);
		/* Truncated frames never read past their end. */
		h = fx_good(seq++, 4000);
		n = fx_frame(&h, r.sport, r.dport, pl, len, f);
		for (size_t cut = 0; cut < n; cut += quick() ? 11 : 1) {
			unsigned got = secho_verify_frame(v, &PATH, &r, f, cut, NULL, 0, &res);
			T_CHECK(got == SECHO_VF_TRUNCATED, "cut at %zu: %s", cut,
			        secho_vfail_name(got));
		}
	}
	t_end();

	t_begin("host verify datagram (socket mode) and counters report");
	{
		static uint8_t d[1600], rep[256];
		const char *json = "{\"uptime_s\":1.5,\"engines\":{}}";
		struct fx h = fx_good(seq++, 4001);
		size_t sl;

		t_randbytes(pl, 64);
		r.len = 64;
		r.dport = 4001;
		sl = fx_secure(&h, pl, 64, d);
		T_CHECK(secho_verify_dgram(v, &PATH, &r, PATH.ep_ip, 4001, r.sport, d, sl, NULL, 0,
		                           &res) == SECHO_VF_OK &&
		                !res.l2l3_checked,
		        "dgram ok: %s", secho_vfail_name(res.first));
		T_CHECK(secho_verify_dgram(v, &PATH, &r, PATH.ep_ip, 4000, r.sport, d, sl, NULL, 0,
		                           &res) == SECHO_VF_UDP_SPORT,
		        "dgram sport: %s", secho_vfail_name(res.first));
		T_CHECK(secho_verify_dgram(v, &PATH, &r, PATH.host_ip, 4001, r.sport, d, sl, NULL,
		                           0, &res) == SECHO_VF_IP_SRC,
		        "dgram src ip: %s", secho_vfail_name(res.first));
		uint8_t idb[8];
		T_CHECK(secho_verify_peek(v, d, sl, idb, 8) == 8 && memcmp(idb, pl, 8) == 0,
		        "peek recovers the first 8 plaintext bytes");

		h = fx_good(seq++, 4002);
		r.dport = 4002;
		r.len = 0;
		sl = fx_secure(&h, (const uint8_t *)json, strlen(json), d);
		T_CHECK(secho_verify_dgram(v, &PATH, &r, PATH.ep_ip, 4002, r.sport, d, sl, rep,
		                           sizeof(rep), &res) == SECHO_VF_OK &&
		                res.report_len == strlen(json) &&
		                memcmp(rep, json, strlen(json)) == 0,
		        "report decrypted: %s len %zu", secho_vfail_name(res.first),
		        res.report_len);
		h = fx_good(seq++, 4002);
		sl = fx_secure(&h, (const uint8_t *)json, strlen(json), d);
		d[sl - 1] ^= 1;
		T_CHECK(secho_verify_dgram(v, &PATH, &r, PATH.ep_ip, 4002, r.sport, d, sl, rep,
		                           sizeof(rep), &res) == SECHO_VF_TAG,
		        "report bad tag: %s", secho_vfail_name(res.first));
		h = fx_good(seq++, 4000); /* echo flags on a report */
		h.flags = 0;
		sl = fx_secure(&h, (const uint8_t *)json, strlen(json), d);
		T_CHECK(secho_verify_dgram(v, &PATH, &r, PATH.ep_ip, 4002, r.sport, d, sl, rep,
		                           sizeof(rep), &res) == SECHO_VF_FLAG_COUNTERS,
		        "report without flag: %s", secho_vfail_name(res.first));
	}
	t_end();

	t_begin("host sequence set");
	{
		struct secho_seqset s;
		int ok = secho_seqset_init(&s, 1 << 12) == 0;
		unsigned bad = 0, n2 = quick() ? 20000 : 300000;

		for (uint64_t i = 0; ok && i < n2; i++)
			bad += secho_seqset_add(&s, UINT64_C(0xfffffffffff00000) + i) != 1;
		for (uint64_t i = 0; ok && i < n2; i += 7)
			bad += secho_seqset_add(&s, UINT64_C(0xfffffffffff00000) + i) != 0;
		T_CHECK(ok && bad == 0, "dense run: %u wrong answers", bad);
		bad = 0;
		for (unsigned i = 0; i < 5000; i++)
			if (secho_seqset_add(&s, t_rand64()) < 0)
				bad++;
		T_CHECK(bad > 0 && s.overflow, "sparse sequences overflow the bound and say so");
		secho_seqset_free(&s);
	}
	t_end();
	secho_verifier_free(v);
	free(v);
}

/* ---- key file ---- */

static char keypath[64];

static int write_key(const char *path, mode_t mode)
{
	FILE *f;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || !(f = fdopen(fd, "w")))
		return -1;
	fprintf(f, "secho-key 1\nkey-id %d\nkey ", KEY_ID);
	for (int i = 0; i < 32; i++)
		fprintf(f, "%02x", K[i]);
	fprintf(f, "\nsalt %02x%02x%02x%02x\n", SALT[0], SALT[1], SALT[2], SALT[3]);
	fclose(f);
	return chmod(path, mode);
}

static void test_keyfile(void)
{
	struct secho_host_key k;
	char err[256];

	t_begin("host key file");
	snprintf(keypath, sizeof(keypath), "/tmp/secho-host-test-%d.key", (int)getpid());
	T_CHECK(write_key(keypath, 0644) == 0, "write");
	T_CHECK(secho_host_key_load(keypath, &k, err, sizeof(err)) < 0, "0644 refused");
	T_CHECK(chmod(keypath, 0600) == 0, "chmod");
	T_CHECK(secho_host_key_load(keypath, &k, err, sizeof(err)) == 0 && k.key_id == KEY_ID &&
	                memcmp(k.key, K, 32) == 0 && memcmp(k.salt, SALT, 4) == 0,
	        "0600 loads: %s", err);
	t_end();
}

/* ---- loopback end to end: a fake responder thread ---- */

/* F_DUP: every request answered three times, the same response (same sequence number);
 * F_ESC: the counters report's text fields carry terminal escape sequences. */
enum fault { F_NONE, F_TAG, F_SEQ, F_DUP, F_ESC };

struct responder {
	int fd[3];
	uint16_t port[3];
	atomic_int stop;
	enum fault fault;
	uint64_t seq;
	unsigned long served;
};

static void *responder_main(void *arg)
{
	struct responder *rp = arg;
	static uint8_t in[2048], out[2048];

	/* Bounded: stops on request or after 120 s. */
	for (int iter = 0; !atomic_load(&rp->stop) && iter < 1200000; iter++) {
		struct pollfd p[3];

		for (int i = 0; i < 3; i++)
			p[i] = (struct pollfd){.fd = rp->fd[i], .events = POLLIN};
		if (poll(p, 3, 100) <= 0)
			continue;
		for (int i = 0; i < 3; i++) {
			for (int burst = 0; burst < 64 && (p[i].revents & POLLIN); burst++) {
				struct sockaddr_in from;
				socklen_t fl = sizeof(from);
				ssize_t n = recvfrom(rp->fd[i], in, sizeof(in), MSG_DONTWAIT,
				                     (struct sockaddr *)&from, &fl);
				struct fx h;
				size_t sl;

				if (n < 0)
					break;
				h = fx_good(rp->seq++, (uint16_t)(4000 + i));
				if (rp->fault == F_SEQ && rp->served % 5 == 4)
					h.seq = rp->seq - 2; /* repeat the previous one */
				if (i == 2) {
					char js[512];
					int jl = snprintf(
					        js, sizeof(js),
					        "{\"uptime_s\":2.5,\"seq_high_water\":%llu,"
					        "\"engines\":{\"streaming\":{\"packets\":%lu,"
					        "\"latency_ns\":{\"min\":900,\"mean\":1000,\"p50\":"
					        "1000,"
					        "\"p99\":1500,\"max\":2000},\"headroom_pps\":"
					        "767000},"
					        "\"offload\":{\"packets\":1,\"backend\":"
					        "\"openssl\","
					        "\"latency_ns\":{\"mean\":14700},\"extra\":[1,2]}},"
					        "\"drops\":{\"bad_checksum\":3%s},\"rx_frames\":1,"
					        "\"io\":\"%s\",\"future_field\":true}",
					        (unsigned long long)rp->seq, rp->served,
					        rp->fault == F_ESC ? ",\"x\\u001b[31m\":1" : "",
					        rp->fault == F_ESC ? "socket\\u001b[2K\\rPASS "
					                             "\\u009b1A\\u0007"
					                           : "socket");
					sl = fx_secure(&h, (const uint8_t *)js, (size_t)jl, out);
				} else {
					sl = fx_secure(&h, in, (size_t)n, out);
				}
				if (rp->fault == F_TAG && i < 2 && rp->served % 7 == 3)
					out[sl - 1] ^= 0x40;
				rp->served++;
				for (int copy = 0; copy < (rp->fault == F_DUP ? 3 : 1); copy++)
					(void)sendto(rp->fd[i], out, sl, 0,
					             (struct sockaddr *)&from, fl);
			}
		}
	}
	return NULL;
}

static int responder_start(struct responder *rp, pthread_t *th, enum fault fault)
{
	memset(rp, 0, sizeof(*rp));
	rp->fault = fault;
	rp->seq = 1u << 20;
	for (int i = 0; i < 3; i++) {
		struct sockaddr_in a = {.sin_family = AF_INET,
		                        .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		socklen_t al = sizeof(a);

		rp->fd[i] = socket(AF_INET, SOCK_DGRAM, 0);
		if (rp->fd[i] < 0 || bind(rp->fd[i], (struct sockaddr *)&a, sizeof(a)) < 0 ||
		    getsockname(rp->fd[i], (struct sockaddr *)&a, &al) < 0)
			return -1;
		rp->port[i] = ntohs(a.sin_port);
	}
	return pthread_create(th, NULL, responder_main, rp);
}

static void responder_stop(struct responder *rp, pthread_t th)
{
	atomic_store(&rp->stop, 1);
	pthread_join(th, NULL);
	for (int i = 0; i < 3; i++)
		close(rp->fd[i]);
}

static void loop_opts(struct secho_host_opts *o, const struct responder *rp)
{
	secho_host_opts_default(o);
	o->key_path = keypath;
	o->dst_ip = "127.0.0.1";
	o->port_stream = rp->port[0];
	o->port_offload = rp->port[1];
	o->port_counters = rp->port[2];
	o->quiet = true;
	o->timeout_ms = 2000; /* a loaded 2-core machine stalls for hundreds of ms */
	o->deadline_s = 60;
}

/* Runs fn with output captured in buf; returns its exit code. */
/* Run fn with its report in *buf; returns the exit status `secho host` gives for it (a
 * run that could not start, -errno, is 2, and must say why in err). */
static int capture(int (*fn)(const struct secho_host_opts *, FILE *, char *, size_t),
                   const struct secho_host_opts *o, char **buf)
{
	size_t len;
	char err[1024];
	FILE *f = open_memstream(buf, &len);
	int rc = fn(o, f, err, sizeof(err));

	fclose(f);
	return rc < 0 ? (err[0] ? 2 : -1) : rc;
}

/* True when s holds a control character other than newline, or a byte outside ASCII. */
static bool has_ctl(const char *s)
{
	for (; *s; s++)
		if ((*s < 0x20 && *s != '\n') || (unsigned char)*s >= 0x7f)
			return true;
	return false;
}

static void test_loopback(void)
{
	struct responder rp;
	struct secho_host_opts o;
	pthread_t th;
	char *out = NULL;
	int rc;

	t_begin("host loopback paired/counters/load against a fake responder");
	if (responder_start(&rp, &th, F_NONE) != 0) {
		t_unavailable("cannot bind UDP sockets on 127.0.0.1: %s", strerror(errno));
		return;
	}
	loop_opts(&o, &rp);
	o.count = quick() ? 50 : 500;
	rc = capture(secho_host_paired, &o, &out);
	T_CHECK(rc == 0 && strstr(out, "PASS") && strstr(out, "14.7x") &&
	                strstr(out, "socket mode"),
	        "paired rc %d:\n%s", rc, out);
	free(out);

	o.json = true;
	o.count = 20;
	o.size = 7; /* below 8 bytes: matched by (port, size, order) */
	rc = capture(secho_host_paired, &o, &out);
	T_CHECK(rc == 0 && strstr(out, "\"verified\": 20") && strstr(out, "\"pass\": true"),
	        "paired json, 7-byte payloads, rc %d:\n%s", rc, out);
	free(out);
	o.size = 0;
	o.json = false;
	rc = capture(secho_host_paired, &o, &out);
	T_CHECK(rc == 0, "paired, empty payloads, rc %d:\n%s", rc, out);
	free(out);

	o.size = -1;
	rc = capture(secho_host_counters, &o, &out);
	if (getenv("SECHO_TEST_SHOW"))
		fputs(out, stderr);
	T_CHECK(rc == 0 && strstr(out, "bad_checksum 3") && strstr(out, "767000") &&
	                strstr(out, "openssl"),
	        "counters rc %d:\n%s", rc, out);
	free(out);
	o.json = true;
	rc = capture(secho_host_counters, &o, &out);
	T_CHECK(rc == 0 && strstr(out, "\"future_field\": true"), "counters json rc %d:\n%s", rc,
	        out);
	free(out);
	o.json = false;

	o.seconds = 1;
	o.window = 64;
	o.size = 200;
	o.max_loss = 1000000; /* a loaded 2-core machine may drop; verification must hold */
	o.timeout_ms = 500;   /* losses are allowed: no need to wait for stragglers */
	rc = capture(secho_host_load, &o, &out);
	T_CHECK(rc == 0 && strstr(out, "PASS") && !strstr(out, "failed check"), "load rc %d:\n%s",
	        rc, out);
	free(out);
	responder_stop(&rp, th);

	/* --seq-log that cannot be written: the run fails although every answer verified. */
	if (T_CHECK(responder_start(&rp, &th, F_NONE) == 0, "responder for --seq-log")) {
		loop_opts(&o, &rp);
		o.count = 20;
		o.seq_log = "/dev/full";
		rc = capture(secho_host_paired, &o, &out);
		T_CHECK(rc == 1 && strstr(out, "FAIL"), "--seq-log /dev/full rc %d:\n%s", rc, out);
		free(out);
		o.json = true;
		o.seconds = 1;
		o.window = 64;
		o.max_loss = 1000000; /* verification and the log decide, not losses */
		o.timeout_ms = 500;   /* losses are allowed: no need to wait for stragglers */
		rc = capture(secho_host_load, &o, &out);
		T_CHECK(rc == 1 && strstr(out, "\"pass\": false") && strstr(out, "\"failed\": 0"),
		        "load --seq-log /dev/full rc %d:\n%s", rc, out);
		free(out);
		rc = capture(secho_host_counters, &o, &out);
		T_CHECK(rc == 1, "counters --seq-log /dev/full rc %d", rc);
		free(out);
		o.json = false;
		o.seq_log = NULL;
		responder_stop(&rp, th);
	}
	/* Faulty responders: the run fails and names the check. A responder that cannot
	 * start is a failure, not a skipped check. */
	if (T_CHECK(responder_start(&rp, &th, F_TAG) == 0, "responder (corrupt tags)")) {
		loop_opts(&o, &rp);
		o.count = 30;
		rc = capture(secho_host_paired, &o, &out);
		T_CHECK(rc == 1 && strstr(out, "failed check tag") && strstr(out, "FAIL"),
		        "corrupted tags rc %d:\n%s", rc, out);
		free(out);
		responder_stop(&rp, th);
	}
	if (T_CHECK(responder_start(&rp, &th, F_SEQ) == 0, "responder (repeated sequences)")) {
		loop_opts(&o, &rp);
		o.count = 30;
		rc = capture(secho_host_paired, &o, &out);
		T_CHECK(rc == 1 && strstr(out, "failed check seq-repeat"),
		        "repeated sequences rc %d:\n%s", rc, out);
		free(out);
		responder_stop(&rp, th);
	}
	/* Every request answered three times at once: duplicates are failures, not "late",
	 * whether the payload carries the request id (100 bytes), or is matched by its
	 * content (7 bytes) or by order alone (empty). */
	if (T_CHECK(responder_start(&rp, &th, F_DUP) == 0, "responder (duplicates)")) {
		static const int sizes[] = {100, 7, 0};

		for (int i = 0; i < 3; i++) {
			loop_opts(&o, &rp);
			o.count = 20;
			o.size = sizes[i];
			o.json = true;
			rc = capture(secho_host_paired, &o, &out);
			/* Per path: each verified answer's two copies are duplicates (an answer
			 * that came after --timeout on a busy machine is late, copies and all). */
			json_t *j = json_loads(out, 0, NULL);
			for (int p = 0; p < 2; p++) {
				json_t *ps = json_object_get(json_object_get(j, "paths"),
				                             secho_path_names[p]);
				json_int_t v = json_integer_value(json_object_get(ps, "verified"));
				json_int_t d = json_integer_value(json_object_get(
				        json_object_get(ps, "failures"), "duplicate"));

				T_CHECK(rc == 1 && v > 0 && d >= 2 * v,
				        "answers in triplicate, %d-byte payloads, %s: %lld "
				        "verified, "
				        "%lld duplicates, rc %d:\n%s",
				        sizes[i], secho_path_names[p], (long long)v, (long long)d,
				        rc, out);
			}
			json_decref(j);
			free(out);
		}
		o.json = false;
		o.size = 100;
		rc = capture(secho_host_paired, &o, &out);
		T_CHECK(rc == 1 && strstr(out, "failed check duplicate") &&
		                strstr(out, "first failure: ") && strstr(out, "FAIL"),
		        "triplicate, text report rc %d:\n%s", rc, out);
		free(out);
		o.seconds = 1;
		o.window = 64;
		o.max_loss = 1000000;
		o.timeout_ms = 500; /* losses are allowed: no need to wait for stragglers */
		rc = capture(secho_host_load, &o, &out);
		T_CHECK(rc == 1 && strstr(out, "failed check duplicate"),
		        "load, triplicate rc %d:\n%s", rc, out);
		free(out);
		responder_stop(&rp, th);
	}
	/* Text from the report is printed escaped: no escape sequence reaches the terminal. */
	if (T_CHECK(responder_start(&rp, &th, F_ESC) == 0, "responder (escape sequences)")) {
		loop_opts(&o, &rp);
		rc = capture(secho_host_counters, &o, &out);
		if (getenv("SECHO_TEST_SHOW"))
			fputs(out, stderr);
		T_CHECK(rc == 0 && !has_ctl(out) &&
		                strstr(out, "socket\\x1b[2K\\x0dPASS \\xc2\\x9b1A\\x07") &&
		                strstr(out, "x\\x1b[31m 1"),
		        "escaped report text, rc %d:\n%s", rc, out);
		free(out);
		o.json = true;
		rc = capture(secho_host_counters, &o, &out);
		T_CHECK(rc == 0 && !has_ctl(out) && strstr(out, "\\u001B[2K") &&
		                strstr(out, "\\u009B"),
		        "JSON report escaped, rc %d:\n%s", rc, out);
		free(out);
		o.json = false;
		responder_stop(&rp, th);
	}
	/* Nobody listening: every packet lost, run fails, bounded by the timeout. */
	loop_opts(&o, &rp);
	o.count = 3;
	o.timeout_ms = 20;
	rc = capture(secho_host_paired, &o, &out);
	T_CHECK(rc == 1 && strstr(out, "no answer"), "no responder rc %d:\n%s", rc, out);
	free(out);
	/* Safety: a destination outside the test and loopback nets is refused. */
	o.dst_ip = "198.51.100.7";
	rc = capture(secho_host_paired, &o, &out);
	T_CHECK(rc == 2, "outside destination refused, rc %d", rc);
	free(out);
	t_end();
}

/* ---- raw mode over lo: an AF_PACKET responder thread ---- */

#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>

/* lo is shared with every other test on the machine, and other runs of this one answer
 * what they see there: each run takes its own endpoint MAC and ports from its pid (the
 * responder ignores other MACs), or their responders would answer ours too. Nothing binds
 * the ports: the kernel drops the requests it sees. */
static uint16_t raw_port0;    /* requests to raw_port0 .. raw_port0 + 2 */
static uint8_t raw_ep_mac[6]; /* 02:5e:PID:.. (locally administered) */

static void raw_addresses(void)
{
	unsigned pid = (unsigned)getpid();

	raw_port0 = (uint16_t)(20000 + (pid % 13000) * 3);
	raw_ep_mac[0] = 0x02;
	raw_ep_mac[1] = 0x5e;
	for (int i = 0; i < 4; i++)
		raw_ep_mac[2 + i] = (uint8_t)(pid >> (24 - 8 * i));
}

struct rawresp {
	int fd;
	atomic_int stop;
	bool bad_ttl;
	size_t junk; /* bytes appended after each response's IP packet */
	uint64_t seq;
	unsigned long served;
};

static void *rawresp_main(void *arg)
{
	struct rawresp *rp = arg;
	static uint8_t in[2048], out[2048 + 9000];
	const uint8_t *ep_mac = raw_ep_mac;

	for (int iter = 0; !atomic_load(&rp->stop) && iter < 1200000; iter++) {
		struct pollfd p = {.fd = rp->fd, .events = POLLIN};

		if (poll(&p, 1, 100) <= 0)
			continue;
		for (int burst = 0; burst < 64; burst++) {
			ssize_t n = recv(rp->fd, in, sizeof(in), MSG_DONTWAIT);
			uint8_t *ip = in + 14, *u = in + 34;
			uint16_t dport, sport, ulen;
			struct fx h;
			size_t sl;

			if (n < 0)
				break;
			if (n < 42 || in[12] != 0x08 || in[13] != 0 || ip[0] != 0x45 ||
			    ip[9] != 17 || memcmp(in, ep_mac, 6) != 0)
				continue;
			dport = (uint16_t)(u[2] << 8 | u[3]);
			sport = (uint16_t)(u[0] << 8 | u[1]);
			ulen = (uint16_t)(u[4] << 8 | u[5]);
			if (dport < raw_port0 || dport > raw_port0 + 2 || ulen < 8 ||
			    34 + (size_t)ulen > (size_t)n)
				continue;
			h = fx_good(rp->seq++, (uint16_t)(4000 + dport - raw_port0));
			if (dport == raw_port0 + 2) {
				static const char js[] =
				        "{\"engines\":{\"streaming\":{\"latency_ns\":"
				        "{\"mean\":1000}},\"offload\":{\"latency_ns\":"
				        "{\"mean\":2000}}}}";
				sl = fx_secure(&h, (const uint8_t *)js, sizeof(js) - 1, out + 42);
			} else {
				sl = fx_secure(&h, u + 8, (size_t)ulen - 8, out + 42);
			}
			/* Swap every address, as the endpoint does. */
			memcpy(out, in + 6, 6);
			memcpy(out + 6, ep_mac, 6);
			out[12] = 0x08;
			out[13] = 0;
			uint8_t *oip = out + 14, *ou = out + 34;
			uint16_t tot = (uint16_t)(28 + sl);
			memset(oip, 0, 20);
			oip[0] = 0x45;
			oip[2] = (uint8_t)(tot >> 8);
			oip[3] = (uint8_t)tot;
			oip[6] = 0x40;
			oip[8] = (rp->bad_ttl && rp->served % 5 == 2) ? 63 : 64;
			oip[9] = 17;
			memcpy(oip + 12, ip + 16, 4);
			memcpy(oip + 16, ip + 12, 4);
			fx_fix_ip(out);
			ou[0] = (uint8_t)(dport >> 8);
			ou[1] = (uint8_t)dport;
			ou[2] = (uint8_t)(sport >> 8);
			ou[3] = (uint8_t)sport;
			ou[4] = (uint8_t)((8 + sl) >> 8);
			ou[5] = (uint8_t)(8 + sl);
			fx_fix_udp(out);
			rp->served++;
			memset(out + 14 + tot, 0x5a, rp->junk);
			(void)send(rp->fd, out, 14 + (size_t)tot + rp->junk, 0);
		}
	}
	return NULL;
}

static int rawresp_start(struct rawresp *rp, pthread_t *th, bool bad_ttl, size_t junk)
{
	struct sockaddr_ll ll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_IP)};
	int one = 1;

	memset(rp, 0, sizeof(*rp));
	rp->bad_ttl = bad_ttl;
	rp->junk = junk;
	rp->seq = 5000;
	rp->fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_IP));
	if (rp->fd < 0)
		return -1;
	ll.sll_ifindex = (int)if_nametoindex("lo");
	if (bind(rp->fd, (struct sockaddr *)&ll, sizeof(ll)) < 0) {
		close(rp->fd);
		return -1;
	}
	(void)setsockopt(rp->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
	return pthread_create(th, NULL, rawresp_main, rp);
}

static void rawresp_stop(struct rawresp *rp, pthread_t th)
{
	atomic_store(&rp->stop, 1);
	pthread_join(th, NULL);
	close(rp->fd);
}

static void test_raw_lo(void)
{
	struct rawresp rp;
	struct secho_host_opts o;
	pthread_t th;
	char *out = NULL;
	int rc;

	t_begin("host raw AF_PACKET mode on lo against a fake responder");
	raw_addresses();
	if (rawresp_start(&rp, &th, false, 0) != 0) {
		t_unavailable("AF_PACKET on lo: %s (needs CAP_NET_RAW)", strerror(errno));
		return;
	}
	secho_host_opts_default(&o);
	o.key_path = keypath;
	o.iface = "lo";
	memcpy(o.dst_mac, raw_ep_mac, sizeof(o.dst_mac));
	o.dst_mac_set = true;
	o.dst_ip = "127.0.0.2";
	o.port_stream = raw_port0;
	o.port_offload = raw_port0 + 1;
	o.port_counters = raw_port0 + 2;
	o.quiet = true;
	o.timeout_ms = 2000;
	o.count = quick() ? 40 : 200;
	rc = capture(secho_host_paired, &o, &out);
	if (getenv("SECHO_TEST_SHOW"))
		fputs(out, stderr);
	T_CHECK(rc == 0 && strstr(out, "raw mode") && strstr(out, "2.0x"), "raw paired rc %d:\n%s",
	        rc, out);
	free(out);
	o.seconds = 1;
	o.size = 64;
	o.max_loss = 1000000;
	o.timeout_ms = 500; /* losses are allowed: no need to wait for stragglers */
	rc = capture(secho_host_load, &o, &out);
	if (getenv("SECHO_TEST_SHOW"))
		fputs(out, stderr);
	T_CHECK(rc == 0 && strstr(out, "raw mode") && !strstr(out, "failed check"),
	        "raw load rc %d:\n%s", rc, out);
	free(out);
	rawresp_stop(&rp, th);
	o.timeout_ms = 2000;

	if (T_CHECK(rawresp_start(&rp, &th, true, 0) == 0, "raw responder (bad TTL)")) {
		o.count = 20;
		o.max_loss = 0;
		o.size = -1;
		rc = capture(secho_host_paired, &o, &out);
		T_CHECK(rc == 1 && strstr(out, "failed check ip-ttl"), "raw bad TTL rc %d:\n%s", rc,
		        out);
		free(out);
		rawresp_stop(&rp, th);
	}
	/* Junk after the IP packet, 1 byte or 8.8 KB (then the frame is longer than the
	 * receive buffer, too): every response fails trailing-bytes. */
	for (size_t junk = 1; junk <= 8800; junk = junk == 1 ? 8800 : 8801) {
		if (!T_CHECK(rawresp_start(&rp, &th, false, junk) == 0, "raw responder (junk)"))
			break;
		o.count = 20;
		o.max_loss = 0;
		o.size = -1;
		o.json = true;
		rc = capture(secho_host_paired, &o, &out);
		/* Every answer, on both paths, failed trailing-bytes (a busy machine may lose
		 * one or two: they are not answers). */
		json_t *j = json_loads(out, 0, NULL);
		for (int p = 0; p < 2; p++) {
			json_t *ps =
			        json_object_get(json_object_get(j, "paths"), secho_path_names[p]);
			json_int_t ans = json_integer_value(json_object_get(ps, "answered"));
			json_int_t tb = json_integer_value(
			        json_object_get(json_object_get(ps, "failures"), "trailing-bytes"));

			T_CHECK(rc == 1 && ans > 0 && tb == ans &&
			                json_integer_value(json_object_get(ps, "verified")) == 0,
			        "raw, %zu bytes after each packet, %s: %lld answered, %lld failed "
			        "trailing-bytes, rc %d:\n%s",
			        junk, secho_path_names[p], (long long)ans, (long long)tb, rc, out);
		}
		json_decref(j);
		o.json = false;
		free(out);
		rawresp_stop(&rp, th);
	}
	t_end();
}

int main(void)
{
	t_seed_init("test_host_verify");
	test_oracle();
	test_verify_frames();
	test_keyfile();
	test_loopback();
	test_raw_lo();
	unlink(keypath);
	return t_exit();
}
