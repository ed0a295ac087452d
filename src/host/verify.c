/*
 * src/host/verify.c - the per-response checks. Contract: src/host/verify.h.
 *
 * Everything here is computed by the host itself from the bytes it received: checksums by
 * its own RFC 1071 sum, crypto by the nettle oracle. Nothing trusts a length or an offset
 * before it has been compared with the buffer it points into.
 */
#include "host/verify.h"
#include "sys/names.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const vfail_names[SECHO_VF_COUNT] = {
        [SECHO_VF_OK] = "ok",
        [SECHO_VF_TRUNCATED] = "truncated",
        [SECHO_VF_ETH_DST] = "eth-dst",
        [SECHO_VF_ETH_SRC] = "eth-src",
        [SECHO_VF_ETHERTYPE] = "ethertype",
        [SECHO_VF_IP_VERSION] = "ip-version-ihl",
        [SECHO_VF_IP_CSUM] = "ip-checksum",
        [SECHO_VF_IP_TTL] = "ip-ttl",
        [SECHO_VF_IP_DF] = "ip-df-fragment",
        [SECHO_VF_IP_PROTO] = "ip-protocol",
        [SECHO_VF_IP_SRC] = "ip-src",
        [SECHO_VF_IP_DST] = "ip-dst",
        [SECHO_VF_IP_LEN] = "ip-total-length",
        [SECHO_VF_TRAILING] = "trailing-bytes",
        [SECHO_VF_UDP_SPORT] = "udp-sport",
        [SECHO_VF_UDP_DPORT] = "udp-dport",
        [SECHO_VF_UDP_LEN] = "udp-length",
        [SECHO_VF_UDP_CSUM_ZERO] = "udp-checksum-zero",
        [SECHO_VF_UDP_CSUM] = "udp-checksum",
        [SECHO_VF_LENGTH] = "secure-length",
        [SECHO_VF_HDR_VERSION] = "hdr-version",
        [SECHO_VF_KEY_ID] = "key-id",
        [SECHO_VF_FLAG_ENGINE] = "flag-engine",
        [SECHO_VF_FLAG_COUNTERS] = "flag-counters",
        [SECHO_VF_FLAG_RESERVED] = "flag-reserved",
        [SECHO_VF_SALT] = "salt",
        [SECHO_VF_SEQ_REPEAT] = "seq-repeat",
        [SECHO_VF_DUPLICATE] = "duplicate",
        [SECHO_VF_PAYLOAD] = "payload-hash",
        [SECHO_VF_CIPHERTEXT] = "ciphertext-hash",
        [SECHO_VF_TAG] = "tag",
};

const char *secho_vfail_name(unsigned f)
{
	return SECHO_NAME_AT(vfail_names, f, "?");
}

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static void fail(struct secho_vresult *res, unsigned f)
{
	if (res->first == SECHO_VF_OK)
		res->first = f;
	res->mask |= UINT64_C(1) << f;
}

uint16_t secho_inet_csum(const uint8_t *p, size_t n, uint32_t sum)
{
	uint64_t s = sum;

	/* Big-endian 16-bit words; an odd last byte is padded with zero (RFC 1071 4.1). */
	for (; n >= 2; p += 2, n -= 2)
		s += rd16(p);
	if (n)
		s += (uint32_t)p[0] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* ---- sequence set ---- */

int secho_seqset_init(struct secho_seqset *s, size_t max_pages)
{
	s->cap = 64;
	s->used = 0;
	s->max_pages = max_pages;
	s->overflow = false;
	s->pages = calloc(s->cap, sizeof(*s->pages));
	return s->pages ? 0 : -ENOMEM;
}

void secho_seqset_free(struct secho_seqset *s)
{
	free(s->pages);
	s->pages = NULL;
	s->cap = s->used = 0;
}

static size_t page_hash(uint64_t key, size_t cap)
{
	/* Fibonacci hashing; cap is a power of two. */
	return (size_t)((key * UINT64_C(0x9e3779b97f4a7c15)) >> 32) & (cap - 1);
}

static struct secho_seqpage *page_slot(struct secho_seqpage *pages, size_t cap, uint64_t key)
{
	size_t i = page_hash(key, cap);

	while (pages[i].key && pages[i].key != key)
		i = (i + 1) & (cap - 1);
	return &pages[i];
}

static int seqset_grow(struct secho_seqset *s)
{
	size_t ncap = s->cap * 2;
	struct secho_seqpage *np = calloc(ncap, sizeof(*np));

	if (!np)
		return -ENOMEM;
	for (size_t i = 0; i < s->cap; i++)
		if (s->pages[i].key)
			*page_slot(np, ncap, s->pages[i].key) = s->pages[i];
	free(s->pages);
	s->pages = np;
	s->cap = ncap;
	return 0;
}

int secho_seqset_add(struct secho_seqset *s, uint64_t seq)
{
	uint64_t key = (seq >> 12) + 1; /* +1 keeps 0 free as the empty mark; seq >> 12 < 2^52 */
	unsigned bit = (unsigned)(seq & 4095);
	struct secho_seqpage *pg = page_slot(s->pages, s->cap, key);

	if (!pg->key) {
		/* Keep the table at most half full. */
		if (s->used + 1 > s->cap / 2) {
			if (s->used + 1 > s->max_pages || seqset_grow(s) < 0) {
				s->overflow = true;
				return -ENOSPC;
			}
			pg = page_slot(s->pages, s->cap, key);
		}
		pg->key = key;
		s->used++;
	}
	if (pg->bits[bit >> 6] >> (bit & 63) & 1)
		return 0;
	pg->bits[bit >> 6] |= UINT64_C(1) << (bit & 63);
	return 1;
}

bool secho_seqset_has(const struct secho_seqset *s, uint64_t seq)
{
	const struct secho_seqpage *pg = page_slot(s->pages, s->cap, (seq >> 12) + 1);
	unsigned bit = (unsigned)(seq & 4095);

	return pg->key && (pg->bits[bit >> 6] >> (bit & 63) & 1);
}

/* ---- verifier ---- */

int secho_verifier_init(struct secho_verifier *v, const struct secho_host_key *k,
                        uint16_t port_stream, uint16_t port_offload, uint16_t port_counters)
{
	memset(v, 0, sizeof(*v));
	secho_oracle_init(&v->oracle, k->key);
	v->key_id = k->key_id;
	memcpy(v->salt, k->salt, 4);
	v->shared = k->shared;
	v->port_stream = port_stream;
	v->port_offload = port_offload;
	v->port_counters = port_counters;
	/* 65536 pages = 256 Mi dense sequence numbers, ~34 MB at most. */
	if (secho_seqset_init(&v->seen, 65536) < 0) {
		secho_oracle_wipe(&v->oracle);
		return -ENOMEM;
	}
	return 0;
}

void secho_verifier_free(struct secho_verifier *v)
{
	secho_seqset_free(&v->seen);
	secho_oracle_wipe(&v->oracle);
	explicit_bzero(v->pt, sizeof(v->pt));
	explicit_bzero(v->salt, sizeof(v->salt));
}

static void make_iv(const struct secho_verifier *v, const uint8_t *hdr, uint8_t iv[SECHO_IV_LEN])
{
	/* IV = our salt || the response's 8-byte sequence (header bytes 8..15); with a shared
	 * key the fixed field is the header's (salt XOR the endpoint's instance, checked in
	 * verify_secure), authenticated as part of the AAD like every header byte. */
	memcpy(iv, v->shared ? hdr + 4 : v->salt, SECHO_SALT_LEN);
	memcpy(iv + SECHO_SALT_LEN, hdr + 8, SECHO_IV_LEN - SECHO_SALT_LEN);
}

size_t secho_verify_peek(struct secho_verifier *v, const uint8_t *d, size_t n, uint8_t *out,
                         size_t out_cap)
{
	uint8_t iv[SECHO_IV_LEN];
	size_t len;

	if (n < SECHO_SHDR_LEN + SECHO_TAG_LEN)
		return 0;
	len = n - SECHO_SHDR_LEN - SECHO_TAG_LEN;
	if (len > out_cap)
		len = out_cap;
	make_iv(v, d, iv);
	secho_oracle_peek(&v->oracle, iv, d + SECHO_SHDR_LEN, len, out);
	return len;
}

/* The secure header and the crypto: shared by both modes. */
static void verify_secure(struct secho_verifier *v, const struct secho_vreq *r, const uint8_t *d,
                          size_t n, uint8_t *report, size_t report_cap, struct secho_vresult *res)
{
	const bool is_report = r->dport == v->port_counters;
	uint8_t flags, iv[SECHO_IV_LEN], tag[SECHO_TAG_LEN], h1[SECHO_SHA256_LEN],
	        h2[SECHO_SHA256_LEN];
	size_t len;
	int rc;

	res->secure = d;
	res->secure_len = n;
	if (n < SECHO_SHDR_LEN + SECHO_TAG_LEN ||
	    (!is_report && n != SECHO_SHDR_LEN + r->len + SECHO_TAG_LEN) ||
	    n - SECHO_SHDR_LEN - SECHO_TAG_LEN > SECHO_HOST_MAX_PAYLOAD) {
		fail(res, SECHO_VF_LENGTH);
		if (n < SECHO_SHDR_LEN + SECHO_TAG_LEN)
			return;
	}
	len = n - SECHO_SHDR_LEN - SECHO_TAG_LEN;
	flags = d[1];
	res->flags = flags;
	res->key_id = rd16(d + 2);
	res->seq = rd64(d + 8);

	if (d[0] != SECHO_SHDR_VERSION)
		fail(res, SECHO_VF_HDR_VERSION);
	if (res->key_id != v->key_id)
		fail(res, SECHO_VF_KEY_ID);
	/* Engine bit: 0 for the streaming port, 1 for the offload port; either for a report
	 * (it says which engine sealed the report). */
	if ((r->dport == v->port_stream && (flags & SECHO_SHDR_F_OFFLOAD)) ||
	    (r->dport == v->port_offload && !(flags & SECHO_SHDR_F_OFFLOAD)))
		fail(res, SECHO_VF_FLAG_ENGINE);
	if (!!(flags & SECHO_SHDR_F_COUNTERS) != is_report)
		fail(res, SECHO_VF_FLAG_COUNTERS);
	if (flags &
	    (v->shared ? SECHO_FLAG_RESERVED & ~SECHO_SHDR_F_INSTANCE : SECHO_FLAG_RESERVED))
		fail(res, SECHO_VF_FLAG_RESERVED);
	if (v->shared) {
		/* bytes 4-7 = salt XOR instance: an instance flag and a non-zero instance */
		if (!(flags & SECHO_SHDR_F_INSTANCE) || memcmp(d + 4, v->salt, 4) == 0)
			fail(res, SECHO_VF_SALT);
	} else if (memcmp(d + 4, v->salt, 4) != 0) {
		fail(res, SECHO_VF_SALT);
	}
	/* Unrecordable (set full) is not a repeat; the caller sees seen.overflow. */
	if (secho_seqset_add(&v->seen, res->seq) == 0)
		fail(res, SECHO_VF_SEQ_REPEAT);
	if (v->seq_log && fprintf(v->seq_log, "%llu\n", (unsigned long long)res->seq) < 0 &&
	    !v->seq_log_err)
		v->seq_log_err = errno ? errno : EIO;

	if (len > SECHO_HOST_MAX_PAYLOAD)
		return;
	make_iv(v, d, iv);
	res->crypto_checked = true;
	if (is_report) {
		/* The plaintext is the endpoint's own: only the tag can be checked. */
		rc = secho_oracle_open(&v->oracle, iv, d, SECHO_SHDR_LEN, d + SECHO_SHDR_LEN, len,
		                       v->pt, d + SECHO_SHDR_LEN + len);
		res->tag_match = rc == 1;
		res->payload_match = res->ct_match = res->tag_match;
		if (!res->tag_match) {
			fail(res, SECHO_VF_TAG);
		} else if (report && report_cap >= len) {
			memcpy(report, v->pt, len);
			res->report_len = len;
		}
		explicit_bzero(v->pt, len);
		return;
	}
	if (res->mask & (UINT64_C(1) << SECHO_VF_LENGTH)) {
		fail(res, SECHO_VF_CIPHERTEXT);
		fail(res, SECHO_VF_PAYLOAD);
		fail(res, SECHO_VF_TAG);
		return;
	}
	/* Three separate comparisons, as the original host tool reports them:
	 *  payload: SHA-256(oracle-decrypt(received ciphertext)) vs SHA-256(sent payload)
	 *  ciphertext: SHA-256(received ciphertext) vs SHA-256(oracle-encrypt(sent payload))
	 *  tag: received tag vs the oracle's tag, byte for byte.
	 * A flipped ciphertext byte thus fails the first two and leaves the tag matching (the
	 * tag is the oracle's over what we sent); a flipped tag fails only the third. */
	(void)secho_oracle_open(&v->oracle, iv, d, SECHO_SHDR_LEN, d + SECHO_SHDR_LEN, len, v->pt,
	                        d + SECHO_SHDR_LEN + len);
	secho_oracle_sha256(v->pt, len, h1);
	secho_oracle_sha256(r->payload, len, h2);
	res->payload_match = memcmp(h1, h2, sizeof(h1)) == 0;
	secho_oracle_seal(&v->oracle, iv, d, SECHO_SHDR_LEN, r->payload, len, v->ct, tag);
	secho_oracle_sha256(d + SECHO_SHDR_LEN, len, h1);
	secho_oracle_sha256(v->ct, len, h2);
	res->ct_match = memcmp(h1, h2, sizeof(h1)) == 0;
	res->tag_match = memcmp(tag, d + SECHO_SHDR_LEN + len, SECHO_TAG_LEN) == 0;
	if (!res->ct_match)
		fail(res, SECHO_VF_CIPHERTEXT);
	if (!res->payload_match)
		fail(res, SECHO_VF_PAYLOAD);
	if (!res->tag_match)
		fail(res, SECHO_VF_TAG);
}

unsigned secho_verify_dgram(struct secho_verifier *v, const struct secho_vpath *p,
                            const struct secho_vreq *r, const uint8_t src_ip[4], uint16_t sport,
                            uint16_t dport, const uint8_t *d, size_t n, uint8_t *report,
                            size_t report_cap, struct secho_vresult *res)
{
	memset(res, 0, sizeof(*res));
	if (memcmp(src_ip, p->ep_ip, 4) != 0)
		fail(res, SECHO_VF_IP_SRC);
	if (sport != r->dport)
		fail(res, SECHO_VF_UDP_SPORT);
	if (dport != r->sport)
		fail(res, SECHO_VF_UDP_DPORT);
	verify_secure(v, r, d, n, report, report_cap, res);
	return res->first;
}

unsigned secho_verify_frame(struct secho_verifier *v, const struct secho_vpath *p,
                            const struct secho_vreq *r, const uint8_t *f, size_t n, uint8_t *report,
                            size_t report_cap, struct secho_vresult *res)
{
	const uint8_t *ip = f + SECHO_ETH_HLEN, *udp = f + SECHO_ETH_HLEN + SECHO_IP4_HLEN;
	uint16_t tot, ulen, frag;
	uint32_t pseudo;
	size_t want;

	memset(res, 0, sizeof(*res));
	res->l2l3_checked = true;
	if (n < SECHO_HDRS_LEN) {
		fail(res, SECHO_VF_TRUNCATED);
		return res->first;
	}
	if (memcmp(f, p->host_mac, SECHO_ETH_ALEN) != 0)
		fail(res, SECHO_VF_ETH_DST);
	if (memcmp(f + SECHO_ETH_ALEN, p->ep_mac, SECHO_ETH_ALEN) != 0)
		fail(res, SECHO_VF_ETH_SRC);
	if (rd16(f + 12) != SECHO_ETHERTYPE_IPV4)
		fail(res, SECHO_VF_ETHERTYPE);
	if (ip[0] != 0x45) {
		/* With another IHL the UDP header is elsewhere: nothing below can be trusted. */
		fail(res, SECHO_VF_IP_VERSION);
		return res->first;
	}
	if (secho_inet_csum(ip, SECHO_IP4_HLEN, 0) != 0xffff)
		fail(res, SECHO_VF_IP_CSUM);
	if (ip[8] != SECHO_IP4_TTL)
		fail(res, SECHO_VF_IP_TTL);
	frag = rd16(ip + 6);
	if (frag != SECHO_IP4_DF) /* DF, not MF, offset 0 */
		fail(res, SECHO_VF_IP_DF);
	if (ip[9] != SECHO_IPPROTO_UDP) {
		fail(res, SECHO_VF_IP_PROTO);
		return res->first;
	}
	if (memcmp(ip + 12, p->ep_ip, 4) != 0)
		fail(res, SECHO_VF_IP_SRC);
	if (memcmp(ip + 16, p->host_ip, 4) != 0)
		fail(res, SECHO_VF_IP_DST);
	tot = rd16(ip + 2);
	/* A report's length is the endpoint's choice; an echo's follows from the request. */
	want = r->dport == v->port_counters ? tot : SECHO_WIRE_OVERHEAD_IP + r->len;
	if (tot != want || tot < SECHO_IP4_HLEN + SECHO_UDP_HLEN || tot > SECHO_WIRE_MAX_MTU)
		fail(res, SECHO_VF_IP_LEN);
	if (tot < SECHO_IP4_HLEN + SECHO_UDP_HLEN || (size_t)tot + SECHO_ETH_HLEN > n) {
		fail(res, SECHO_VF_TRUNCATED);
		return res->first;
	}
	/* After the IP packet only Ethernet's padding may follow, in a frame of the minimum
	 * size (60 bytes without the FCS, IEEE 802.3 clause 3.2.8); anything else was added
	 * on the way and is not what the endpoint is supposed to send. */
	if (n > (size_t)tot + SECHO_ETH_HLEN && n > SECHO_ETH_MIN_FRAME)
		fail(res, SECHO_VF_TRAILING);
	if (rd16(udp) != r->dport)
		fail(res, SECHO_VF_UDP_SPORT);
	if (rd16(udp + 2) != r->sport)
		fail(res, SECHO_VF_UDP_DPORT);
	ulen = rd16(udp + 4);
	if (ulen != tot - SECHO_IP4_HLEN) {
		fail(res, SECHO_VF_UDP_LEN);
		if (ulen < SECHO_UDP_HLEN || ulen > tot - SECHO_IP4_HLEN)
			return res->first;
	}
	if (rd16(udp + 6) == 0) {
		fail(res, SECHO_VF_UDP_CSUM_ZERO);
	} else {
		/* Pseudo header (RFC 768): source, destination, zero, protocol, UDP length. */
		pseudo = (uint32_t)rd16(ip + 12) + rd16(ip + 14) + rd16(ip + 16) + rd16(ip + 18) +
		         SECHO_IPPROTO_UDP + ulen;
		if (secho_inet_csum(udp, ulen, pseudo) != 0xffff)
			fail(res, SECHO_VF_UDP_CSUM);
	}
	verify_secure(v, r, udp + SECHO_UDP_HLEN, (size_t)ulen - SECHO_UDP_HLEN, report, report_cap,
	              res);
	return res->first;
}
