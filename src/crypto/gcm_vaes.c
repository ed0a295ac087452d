/*
 * src/crypto/gcm_vaes.c - AES-GCM with VAES + VPCLMULQDQ on 512-bit registers.
 *
 * The GHASH arithmetic (POLYVAL form, aggregated powers of K) is in gcm_vaes.h.
 *
 * Single messages process up to 32 blocks (8 registers) per reduction; short messages
 * (AAD <= 64 bytes, at most 27 text blocks) take one pass with a single reduction. The
 * batch engine puts one message per 128-bit lane (eight messages in two registers)
 * so that every lane of every instruction does useful work: see batch_group().
 *
 * Constant-time: no table lookups, no branch or address depends on key, text or tag;
 * branches and addresses depend on lengths only (public). Tags compare by OR of XORs.
 */
#include "crypto/gcm_vaes.h"

/* ---- key setup, bulk GHASH ---- */

VAES_TARGET static void vaes_hinit(secho_gcm_key *k)
{
	ghash_key_init(k);
}

VAES_TARGET static void vaes_ghash(const secho_gcm_key *k, uint8_t y[16], const uint8_t *in,
                                   size_t nblocks)
{
	__m128i s = bswap128(_mm_loadu_si128((const __m128i *)y));
	s = ghash_mem(k, s, in, nblocks);
	_mm_storeu_si128((__m128i *)y, bswap128(s));
}

/* ---- counter mode, inc32 ---- */

/*
 * One round of 32 blocks of GCTR at counter *c (out = in ^ keystream), software-pipelined
 * with the GHASH of the 32 blocks at gh (memory: the previous round's output when
 * encrypting, this round's input when decrypting), folded into the state s: the eight
 * multiplies are issued between the first eight AES rounds, so that the carry-less
 * multiplier and the AES unit work at the same time. The register that takes s (the first,
 * times K_32..K_29) goes last, so the previous round's reduction has the longest time to
 * finish. The text is read from memory only at the end and the hashed blocks are loaded
 * when used: only the eight AES states and the accumulators live across the rounds, which
 * leaves the round keys in registers. Returns the reduced GHASH when do_gh, else s.
 */
VAES_INLINE __m128i chunk32(const uint8_t *htab, const struct vaes_rk *r, __m512i *c, uint8_t *out,
                            const uint8_t *in, const uint8_t *gh, __m128i s, const int do_gh)
{
	const __m512i bs = vaes_bswap_mask(), four = ctr32_four();
	__m512i b[8];
	struct gacc a;
	gacc_zero(&a);
#pragma GCC unroll 8
	for (int j = 0; j < 8; j++) {
		b[j] = _mm512_xor_si512(_mm512_shuffle_epi8(*c, bs), r->k[0]);
		*c = _mm512_add_epi32(*c, four);
	}
#pragma GCC unroll 8
	for (int i = 1; i <= 8; i++) {
#pragma GCC unroll 8
		for (int j = 0; j < 8; j++)
			b[j] = _mm512_aesenc_epi128(b[j], r->k[i]);
		if (do_gh) {
			const int j = i & 7;
			__m512i g = _mm512_shuffle_epi8(_mm512_loadu_si512(gh + 64 * j), bs);
			if (j == 0)
				g = _mm512_xor_si512(g, _mm512_zextsi128_si512(s));
			gacc_mulp(&a, g, htab + 64 * j, 0xff);
			gacc_pin(&a);
		}
	}
#pragma GCC unroll 14
	for (unsigned i = 9; i < r->rounds; i++)
#pragma GCC unroll 8
		for (int j = 0; j < 8; j++)
			b[j] = _mm512_aesenc_epi128(b[j], r->k[i]);
#pragma GCC unroll 8
	for (int j = 0; j < 8; j++)
		_mm512_storeu_si512(
		        out + 64 * j,
		        _mm512_xor_si512(_mm512_aesenclast_epi128(b[j], r->k[r->rounds]),
		                         _mm512_loadu_si512(in + 64 * j)));
	return do_gh ? gacc_final(&a) : s;
}

/*
 * GCTR over nblocks whole blocks from counter register *c, optionally GHASHing (mode 1:
 * the output, i.e. encryption; mode 2: the input, decryption; mode 0: no GHASH). 32 blocks
 * per round of registers, one reduction each. k (the powers) is read only with GHASH
 * (NULL for mode 0).
 */
VAES_INLINE __m128i gctr_ghash(const secho_gcm_key *k, const struct vaes_rk *r, __m512i *c,
                               __m128i s, uint8_t *out, const uint8_t *in, size_t nblocks, int mode)
{
	const uint8_t *htab = mode ? k->htab : NULL;
	const __m512i bs = vaes_bswap_mask();
	const uint8_t *prev = NULL; /* mode 1: the round whose GHASH is still due */
	for (; nblocks >= 32; nblocks -= 32, in += 512, out += 512) {
		if (mode == 2)
			s = chunk32(htab, r, c, out, in, in, s, 1);
		else if (prev)
			s = chunk32(htab, r, c, out, in, prev, s, 1);
		else
			s = chunk32(htab, r, c, out, in, NULL, s, 0);
		if (mode == 1)
			prev = out;
	}
	if (prev)
		s = ghash_mem(k, s, prev, 32);
	if (nblocks) {
		const size_t m = nblocks;
		const uint8_t *t = mode ? htab + 16 * (NPOW - m) : NULL;
		struct gacc a;
		gacc_zero(&a);
		for (size_t g = 0; 4 * g < m; g++) {
			size_t nb = m - 4 * g < 4 ? m - 4 * g : 4;
			__mmask8 msk = vaes_blkmask(nb);
			__m512i b = _mm512_shuffle_epi8(*c, bs);
			/* advance by the blocks used: the caller continues from *c */
			*c = _mm512_add_epi32(*c, _mm512_maskz_set1_epi32(0x1111, (int)nb));
			vaes_enc_n(&b, 1, r);
			__m512i x = _mm512_maskz_loadu_epi64(msk, in + 64 * g);
			b = _mm512_maskz_xor_epi64(msk, b, x);
			_mm512_mask_storeu_epi64(out + 64 * g, msk, b);
			if (mode) {
				__m512i y = _mm512_shuffle_epi8(mode == 1 ? b : x, bs);
				if (g == 0)
					y = _mm512_xor_si512(y, _mm512_zextsi128_si512(s));
				gacc_mulp(&a, y, t + 64 * g, msk);
			}
		}
		if (mode)
			s = gacc_final(&a);
	}
	return s;
}

VAES_TARGET static void vaes_ctr32(const secho_aes_key *k, uint8_t ctr[16], uint8_t *out,
                                   const uint8_t *in, size_t nblocks)
{
	struct vaes_rk r;
	vaes_load_rk(&r, k, 0);
	__m512i c = ctr32_first(_mm_loadu_si128((const __m128i *)ctr));
	(void)gctr_ghash(NULL, &r, &c, _mm_setzero_si128(), out, in, nblocks, 0);
	secho_store_be32(ctr + 12, secho_load_be32(ctr + 12) + (uint32_t)nblocks);
}

VAES_TARGET static void vaes_enc_blocks(const secho_gcm_key *k, uint8_t ctr[16], uint8_t y[16],
                                        uint8_t *out, const uint8_t *in, size_t nblocks)
{
	struct vaes_rk r;
	vaes_load_rk(&r, &k->aes, 0);
	__m512i c = ctr32_first(_mm_loadu_si128((const __m128i *)ctr));
	__m128i s = bswap128(_mm_loadu_si128((const __m128i *)y));
	s = gctr_ghash(k, &r, &c, s, out, in, nblocks, 1);
	_mm_storeu_si128((__m128i *)y, bswap128(s));
	secho_store_be32(ctr + 12, secho_load_be32(ctr + 12) + (uint32_t)nblocks);
}

VAES_TARGET static void vaes_dec_blocks(const secho_gcm_key *k, uint8_t ctr[16], uint8_t y[16],
                                        uint8_t *out, const uint8_t *in, size_t nblocks)
{
	struct vaes_rk r;
	vaes_load_rk(&r, &k->aes, 0);
	__m512i c = ctr32_first(_mm_loadu_si128((const __m128i *)ctr));
	__m128i s = bswap128(_mm_loadu_si128((const __m128i *)y));
	s = gctr_ghash(k, &r, &c, s, out, in, nblocks, 2);
	_mm_storeu_si128((__m128i *)y, bswap128(s));
	secho_store_be32(ctr + 12, secho_load_be32(ctr + 12) + (uint32_t)nblocks);
}

/* ---- whole messages, 96-bit IV ---- */

/*
 * Short messages in one pass: nz = ceil(len / 16 / 4) text registers (0..7) plus one for
 * E(J0) go through the rounds together; AAD (<= 4 blocks), text and length blocks are
 * multiplied by K_n..K_1 (n = total blocks <= 32) and reduced once.
 */
VAES_INLINE int short_msg(const secho_gcm_key *k, const uint8_t iv[12], const uint8_t *aad,
                          size_t aad_len, uint8_t *out, const uint8_t *in, size_t len, uint8_t *tag,
                          size_t tag_len, int enc, const int nz, const unsigned nr)
{
	const __m512i bs = vaes_bswap_mask();
	struct vaes_rk r;
	vaes_load_rk_nr(&r, &k->aes, nr); /* nr == k->aes.rounds: the rounds unroll */
	/* At most 27 text blocks: the counters 2..29 change the last byte only, so every
	 * counter block is the IV OR-ed with a constant (no carries, no byte swaps). */
	const __m512i ivb = _mm512_broadcast_i32x4(_mm_maskz_loadu_epi8(0x0fff, iv));
	__m512i b[9];
#pragma GCC unroll 8
	for (int j = 0; j < nz; j++)
		b[j] = _mm512_or_si512(ivb, _mm512_set_epi32((5 + 4 * j) << 24, 0, 0, 0,
		                                             (4 + 4 * j) << 24, 0, 0, 0,
		                                             (3 + 4 * j) << 24, 0, 0, 0,
		                                             (2 + 4 * j) << 24, 0, 0, 0));
	b[nz] = _mm512_or_si512(ivb, _mm512_set4_epi32(1 << 24, 0, 0, 0));
	vaes_enc_n(b, nz + 1, &r);

	const size_t na = (aad_len + 15) / 16, nc = (len + 15) / 16, n = na + nc + 1;
	const uint8_t *t = kpow(k, n);
	struct gacc a;
	gacc_zero(&a);
	if (na) {
		__m512i x = _mm512_maskz_loadu_epi8(bytemask64(aad_len), aad);
		gacc_mulp(&a, _mm512_shuffle_epi8(x, bs), t, vaes_blkmask(na));
		t += 16 * na;
	}
#pragma GCC unroll 8
	for (int j = 0; j < nz; j++) {
		__mmask64 bm = bytemask64(len - 64 * (size_t)j);
		size_t nb = nc - 4 * (size_t)j < 4 ? nc - 4 * (size_t)j : 4;
		__m512i x = _mm512_maskz_loadu_epi8(bm, in + 64 * j);
		__m512i y = _mm512_maskz_mov_epi8(bm, _mm512_xor_si512(b[j], x));
		_mm512_mask_storeu_epi8(out + 64 * j, bm, y);
		gacc_mulp(&a, _mm512_shuffle_epi8(enc ? y : x, bs), t + 64 * j, vaes_blkmask(nb));
	}
	gacc_mulp(&a, _mm512_zextsi128_si512(lenblk(aad_len, len)), kpow(k, 1), 0x03);
	__m128i s = gacc_final(&a);
	__m128i tg = _mm_xor_si128(bswap128(s), _mm512_castsi512_si128(b[nz]));
	return tag_out(tg, enc, tag, tag_len, out, len);
}

/*
 * The end of a long message: GHASH of the last full round at prev (encryption, when
 * prev is not NULL), then tbytes (0..511) of text in nz registers (the last block possibly
 * partial, masked) and the length block under one reduction (32 blocks + length: a
 * separate last multiply).
 */
VAES_INLINE __m128i end_group(const secho_gcm_key *k, const struct vaes_rk *r, __m512i c, __m128i s,
                              const uint8_t *prev, uint8_t *out, const uint8_t *in, size_t tbytes,
                              size_t aad_len, size_t len, int enc, const int nz)
{
	const __m512i bs = vaes_bswap_mask(), four = ctr32_four();
	const size_t tb = (tbytes + 15) / 16;
	const int fold_len = tb <= 31;
	const size_t n = tb + (size_t)fold_len;
	__m512i ks[9];
#pragma GCC unroll 8
	for (int g = 0; g < nz; g++) {
		ks[g] = _mm512_shuffle_epi8(c, bs);
		c = _mm512_add_epi32(c, four);
	}
	vaes_enc_n(ks, nz, r);
	if (prev)
		s = ghash_mem(k, s, prev, 32);
	struct gacc a;
	gacc_zero(&a);
	const uint8_t *t = kpow(k, n ? n : 1);
	__m512i sx = _mm512_zextsi128_si512(s);
#pragma GCC unroll 8
	for (int g = 0; g < nz; g++) {
		size_t nb = tb - 4 * (size_t)g < 4 ? tb - 4 * (size_t)g : 4;
		__mmask64 bm = bytemask64(tbytes - 64 * (size_t)g);
		__m512i x = _mm512_maskz_loadu_epi8(bm, in + 64 * g);
		__m512i y = _mm512_maskz_mov_epi8(bm, _mm512_xor_si512(ks[g], x));
		_mm512_mask_storeu_epi8(out + 64 * g, bm, y);
		__m512i h = _mm512_shuffle_epi8(enc ? y : x, bs);
		if (g == 0) {
			h = _mm512_xor_si512(h, sx);
			sx = _mm512_setzero_si512();
		}
		gacc_mulp(&a, h, t + 64 * g, vaes_blkmask(nb));
	}
	__m128i lb = lenblk(aad_len, len);
	if (fold_len) {
		gacc_mulp(&a, _mm512_xor_si512(_mm512_zextsi128_si512(lb), sx), kpow(k, 1), 0x03);
		return gacc_final(&a);
	}
	s = gacc_final(&a);
	return gf_dot(_mm_xor_si128(s, lb), _mm_loadu_si128((const __m128i *)kpow(k, 1)));
}

/*
 * General path: AAD first, then the text 32 blocks at a time, pipelined (encryption
 * hashes round i - 1 while computing round i; decryption hashes the input of the round it
 * computes), then a last group of at most 31 blocks (the partial block masked) together
 * with the length block under one reduction. nr as in short_msg.
 */
VAES_INLINE int long_msg(const secho_gcm_key *k, const uint8_t iv[12], const uint8_t *aad,
                         size_t aad_len, uint8_t *out, const uint8_t *in, size_t len, uint8_t *tag,
                         size_t tag_len, int enc, const unsigned nr)
{
	const __m128i k1 = _mm_loadu_si128((const __m128i *)kpow(k, 1));
	struct vaes_rk r;
	vaes_load_rk_nr(&r, &k->aes, nr); /* nr == k->aes.rounds: the rounds unroll */
	const __m128i j0 = j0_of(iv);
	const __m128i ej0 = vaes_enc1(&k->aes, j0);
	__m512i c = _mm512_add_epi32(
	        ctr32_first(j0), _mm512_set_epi32(0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1));
	__m128i s = ghash_mem(k, _mm_setzero_si128(), aad, aad_len / 16);
	if (aad_len % 16) {
		__m128i x = _mm_maskz_loadu_epi8(bytemask16(aad_len % 16), aad + aad_len / 16 * 16);
		s = gf_dot(_mm_xor_si128(s, bswap128(x)), k1);
	}

	/* Whole rounds of 32 blocks; the end keeps the 0..511 bytes after them. */
	const size_t nch = len / 512;
	const uint8_t *prev = NULL; /* encryption: the round whose GHASH is still due */
	uint8_t *const out0 = out;
	for (size_t ch = 0; ch < nch; ch++, in += 512, out += 512) {
		if (!enc)
			s = chunk32(kpow(k, 32), &r, &c, out, in, in, s, 1);
		else if (prev)
			s = chunk32(kpow(k, 32), &r, &c, out, in, prev, s, 1);
		else
			s = chunk32(kpow(k, 32), &r, &c, out, in, NULL, s, 0);
		if (enc)
			prev = out;
	}

	/* The end: 0..511 bytes, nz = 0..8 registers, instantiated per register count. */
	const size_t tbytes = len - 512 * nch;
	switch ((tbytes + 63) / 64) {
	case 0:
		s = end_group(k, &r, c, s, prev, out, in, tbytes, aad_len, len, enc, 0);
		break;
	case 1:
		s = end_group(k, &r, c, s, prev, out, in, tbytes, aad_len, len, enc, 1);
		break;
	case 2:
		s = end_group(k, &r, c, s, prev, out, in, tbytes, aad_len, len, enc, 2);
		break;
	case 3:
		s = end_group(k, &r, c, s, prev, out, in, tbytes, aad_len, len, enc, 3);
		break;
	case 4:
		s = end_group(k, &r, c, s, prev, out, in, tbytes, aad_len, len, enc, 4);
		break;
	case 5:
		s = end_group(k, &r, c, s, prev, out, in, tbytes, aad_len, len, enc, 5);
		break;
	case 6:
		s = end_group(k, &r, c, s, prev, out, in, tbytes, aad_len, len, enc, 6);
		break;
	case 7:
		s = end_group(k, &r, c, s, prev, out, in, tbytes, aad_len, len, enc, 7);
		break;
	default:
		s = end_group(k, &r, c, s, prev, out, in, tbytes, aad_len, len, enc, 8);
		break;
	}
	return tag_out(_mm_xor_si128(bswap128(s), ej0), enc, tag, tag_len, out0, len);
}

/* Dispatch on size; the short path is instantiated once per register count. */
VAES_INLINE int short_nr(const secho_gcm_key *k, const uint8_t iv[12], const uint8_t *aad,
                         size_t aad_len, uint8_t *out, const uint8_t *in, size_t len, uint8_t *tag,
                         size_t tag_len, int enc, const unsigned nr)
{
	switch ((len + 63) / 64) {
	case 0:
		return short_msg(k, iv, aad, aad_len, out, in, len, tag, tag_len, enc, 0, nr);
	case 1:
		return short_msg(k, iv, aad, aad_len, out, in, len, tag, tag_len, enc, 1, nr);
	case 2:
		return short_msg(k, iv, aad, aad_len, out, in, len, tag, tag_len, enc, 2, nr);
	case 3:
		return short_msg(k, iv, aad, aad_len, out, in, len, tag, tag_len, enc, 3, nr);
	case 4:
		return short_msg(k, iv, aad, aad_len, out, in, len, tag, tag_len, enc, 4, nr);
	case 5:
		return short_msg(k, iv, aad, aad_len, out, in, len, tag, tag_len, enc, 5, nr);
	case 6:
		return short_msg(k, iv, aad, aad_len, out, in, len, tag, tag_len, enc, 6, nr);
	default:
		return short_msg(k, iv, aad, aad_len, out, in, len, tag, tag_len, enc, 7, nr);
	}
}

VAES_INLINE int msg96(const secho_gcm_key *k, const uint8_t iv[12], const uint8_t *aad,
                      size_t aad_len, uint8_t *out, const uint8_t *in, size_t len, uint8_t *tag,
                      size_t tag_len, int enc)
{
	if (aad_len <= 64 && len <= 27 * 16) {
		/* AES-256 (the endpoint's cipher) gets fully unrolled rounds */
		if (k->aes.rounds == 14)
			return short_nr(k, iv, aad, aad_len, out, in, len, tag, tag_len, enc, 14);
		return short_nr(k, iv, aad, aad_len, out, in, len, tag, tag_len, enc, 0);
	}
	if (k->aes.rounds == 14)
		return long_msg(k, iv, aad, aad_len, out, in, len, tag, tag_len, enc, 14);
	return long_msg(k, iv, aad, aad_len, out, in, len, tag, tag_len, enc, 0);
}

VAES_TARGET static int vaes_seal96(const secho_gcm_key *k, const uint8_t iv[12], const uint8_t *aad,
                                   size_t aad_len, uint8_t *out, const uint8_t *in, size_t len,
                                   uint8_t *tag, size_t tag_len)
{
	return msg96(k, iv, aad, aad_len, out, in, len, tag, tag_len, 1);
}

VAES_TARGET static int vaes_open96(const secho_gcm_key *k, const uint8_t iv[12], const uint8_t *aad,
                                   size_t aad_len, uint8_t *out, const uint8_t *in, size_t len,
                                   const uint8_t *tag, size_t tag_len)
{
	return msg96(k, iv, aad, aad_len, out, in, len, (uint8_t *)(uintptr_t)tag, tag_len, 0);
}

/* ---- batch engine (gcm_vaes_batch.h: lane_ok() and msg96() first) ---- */

/* A message goes into a lane when all its blocks fit the 32 powers of K. */
static int lane_ok(const secho_gcm_msg *m)
{
	return m->aad_len <= 16 * NPOW && m->len <= 16 * NPOW &&
	       (m->aad_len + 15) / 16 + (m->len + 15) / 16 + 1 <= NPOW;
}

#define GCM_BATCH_NP NPOW
#include "crypto/gcm_vaes_batch.h"

VAES_TARGET static void vaes_seal_batch(const secho_gcm_key *k, secho_gcm_msg *msgs, size_t n)
{
	batch(k, msgs, n, 1);
}

VAES_TARGET static void vaes_open_batch(const secho_gcm_key *k, secho_gcm_msg *msgs, size_t n)
{
	batch(k, msgs, n, 0);
}

const struct secho_gcm_impl secho_gcm_vaes_impl = {
        .name = "vaes",
        .id = SECHO_IMPL_VAES,
        .aes = &secho_aes_vaes_impl,
        .hinit = vaes_hinit,
        .ghash = vaes_ghash,
        .ctr32 = vaes_ctr32,
        .enc_blocks = vaes_enc_blocks,
        .dec_blocks = vaes_dec_blocks,
        .seal96 = vaes_seal96,
        .open96 = vaes_open96,
        .seal_batch = vaes_seal_batch,
        .open_batch = vaes_open_batch,
};
