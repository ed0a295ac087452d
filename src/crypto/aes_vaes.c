/*
 * src/crypto/aes_vaes.c - AES with VAES on 512-bit registers (AVX-512), four blocks per
 * register and eight registers in flight (vaesenc has a latency of about 4 cycles and
 * issues twice per cycle here, so eight independent chains keep the units busy).
 *
 * Key layout (shared with the AES-NI implementation): k->u.rk[0][0..rounds] are the
 * encryption round keys as 16 bytes each in FIPS-197 byte order; k->u.rk[1][0..rounds]
 * are the decryption round keys of the equivalent inverse cipher (FIPS-197 5.3.5) in the
 * order they are used: rk[1][0] = rk[0][rounds], rk[1][i] = InvMixColumns(rk[0][rounds-i]),
 * rk[1][rounds] = rk[0][0].
 *
 * Constant-time: only AES instructions and data-independent control flow.
 */
#include "crypto/aes_vaes.h"

bool secho_vaes_available(void)
{
	const unsigned need = SECHO_CPU_AESNI | SECHO_CPU_PCLMUL | SECHO_CPU_SSE41 |
	                      SECHO_CPU_AVX512F | SECHO_CPU_AVX512BW | SECHO_CPU_AVX512VL |
	                      SECHO_CPU_VAES | SECHO_CPU_VPCLMUL;
	return (secho_cpu_features() & need) == need;
}

/* SubWord (FIPS-197 5.2) of a little-endian word: with the word in all four columns,
 * ShiftRows leaves the state unchanged, so AESENCLAST with a zero key is SubBytes. */
VAES_TARGET static uint32_t sub_word(uint32_t w)
{
	__m128i x = _mm_set1_epi32((int)w);
	x = _mm_aesenclast_si128(x, _mm_setzero_si128());
	return (uint32_t)_mm_cvtsi128_si32(x);
}

/*
 * Key expansion, FIPS-197 5.2, on words held little-endian (byte 0 of the word in the
 * low bits, so RotWord is a right rotation by 8 and Rcon goes into the low byte). The
 * branches depend on the word index only. Then the decryption keys via AESIMC.
 */
VAES_TARGET static void vaes_keysched(secho_aes_key *k, const uint8_t *key, size_t key_len)
{
	uint32_t w[4 * (SECHO_AES_MAX_ROUNDS + 1)] = {0};
	/* key_len is 16, 24 or 32 (checked by the caller): nk is 4, 6 or 8 */
	const unsigned nk = key_len == 16 ? 4 : key_len == 24 ? 6 : 8, total = 4 * (k->rounds + 1);
	uint32_t rcon = 1;

	for (unsigned i = 0; i < nk; i++)
		w[i] = (uint32_t)key[4 * i] | ((uint32_t)key[4 * i + 1] << 8) |
		       ((uint32_t)key[4 * i + 2] << 16) | ((uint32_t)key[4 * i + 3] << 24);
	for (unsigned i = nk; i < total; i++) {
		uint32_t t = w[i - 1];
		if (i % nk == 0) {
			t = sub_word((t >> 8) | (t << 24)) ^ rcon;
			rcon = (rcon << 1) ^ (0x11bu & (0u - (rcon >> 7)));
		} else if (nk > 6 && i % nk == 4) {
			t = sub_word(t);
		}
		w[i] = w[i - nk] ^ t;
	}
	memcpy(k->u.rk[0], w, 16 * (k->rounds + 1));
	secho_wipe(w, sizeof(w));

	const unsigned nr = k->rounds;
	memcpy(k->u.rk[1][0], k->u.rk[0][nr], 16);
	for (unsigned i = 1; i < nr; i++) {
		__m128i x = _mm_load_si128((const __m128i *)k->u.rk[0][nr - i]);
		_mm_store_si128((__m128i *)k->u.rk[1][i], _mm_aesimc_si128(x));
	}
	memcpy(k->u.rk[1][nr], k->u.rk[0][0], 16);
}

/* ECB over whole blocks: 32 blocks per iteration, then single registers, then a masked
 * tail of 1..3 blocks. */
VAES_TARGET static void ecb_run(const secho_aes_key *k, uint8_t *out, const uint8_t *in,
                                size_t nblocks, int dec)
{
	struct vaes_rk r;
	vaes_load_rk(&r, k, dec);
	for (; nblocks >= 32; nblocks -= 32, in += 512, out += 512) {
		__m512i b[8];
		for (int j = 0; j < 8; j++)
			b[j] = _mm512_loadu_si512(in + 64 * j);
		if (dec)
			vaes_dec_n(b, 8, &r);
		else
			vaes_enc_n(b, 8, &r);
		for (int j = 0; j < 8; j++)
			_mm512_storeu_si512(out + 64 * j, b[j]);
	}
	while (nblocks) {
		size_t nb = nblocks < 4 ? nblocks : 4;
		__mmask8 m = vaes_blkmask(nb);
		__m512i b = _mm512_maskz_loadu_epi64(m, in);
		if (dec)
			vaes_dec_n(&b, 1, &r);
		else
			vaes_enc_n(&b, 1, &r);
		_mm512_mask_storeu_epi64(out, m, b);
		in += 16 * nb;
		out += 16 * nb;
		nblocks -= nb;
	}
}

/*
 * Fewer than four blocks fill no 512-bit register: the AES-NI code does them with less
 * set-up (its round keys have exactly this layout, and VAES implies AES-NI). This is what
 * the serial modes (CBC/PCBC/CFB encryption, OFB) call, one block at a time: measured 5-20%
 * slower than AES-NI through the 512-bit path.
 */
VAES_TARGET static void vaes_ecb_enc(const secho_aes_key *k, uint8_t *out, const uint8_t *in,
                                     size_t nblocks)
{
	if (nblocks < 4)
		secho_aes_ni_impl.ecb_enc(k, out, in, nblocks);
	else
		ecb_run(k, out, in, nblocks, 0);
}

VAES_TARGET static void vaes_ecb_dec(const secho_aes_key *k, uint8_t *out, const uint8_t *in,
                                     size_t nblocks)
{
	if (nblocks < 4)
		secho_aes_ni_impl.ecb_dec(k, out, in, nblocks);
	else
		ecb_run(k, out, in, nblocks, 1);
}

/*
 * Add a small value to four 128-bit counters held as little-endian integers (qword 0 low,
 * qword 1 high, per lane): add to the low qwords, then carry into the high qword of the
 * lanes whose low qword wrapped. The high qword wraps modulo 2^64, so the counter wraps
 * modulo 2^128 (SP 800-38A B.1).
 */
VAES_INLINE __m512i add128(__m512i v, __m512i inc_lo)
{
	__m512i s = _mm512_add_epi64(v, inc_lo);
	__mmask8 c = (__mmask8)(_mm512_cmplt_epu64_mask(s, v) & 0x55);
	return _mm512_mask_add_epi64(s, (__mmask8)(c << 1), s, _mm512_set1_epi64(1));
}

/*
 * CTR keystream with a 128-bit big-endian counter (SP 800-38A 6.5); ctr is not updated
 * here (vaes_ctr128_run does it). Each register's counters are the round's base plus a
 * constant, so the eight registers of a round do not wait on one another; when the low
 * 64 bits cannot wrap during the call (public data: the counter and the block count) the
 * additions need no carry handling at all.
 */
VAES_INLINE void ctr128_blocks(const struct vaes_rk *r, __m512i c, uint8_t *out, const uint8_t *in,
                               size_t nblocks, const int carry)
{
	const __m512i bs = vaes_bswap_mask();
	const __m512i four = _mm512_set_epi64(0, 4, 0, 4, 0, 4, 0, 4);
	const __m512i step = _mm512_set_epi64(0, 32, 0, 32, 0, 32, 0, 32);

	for (; nblocks >= 32; nblocks -= 32, in += 512, out += 512) {
		__m512i b[8];
#pragma GCC unroll 8
		for (int j = 0; j < 8; j++) {
			const __m512i off =
			        _mm512_set_epi64(0, 4 * j, 0, 4 * j, 0, 4 * j, 0, 4 * j);
			b[j] = _mm512_shuffle_epi8(
			        carry ? add128(c, off) : _mm512_add_epi64(c, off), bs);
		}
		c = carry ? add128(c, step) : _mm512_add_epi64(c, step);
		vaes_enc_n(b, 8, r);
#pragma GCC unroll 8
		for (int j = 0; j < 8; j++)
			_mm512_storeu_si512(
			        out + 64 * j,
			        _mm512_xor_si512(b[j], _mm512_loadu_si512(in + 64 * j)));
	}
	while (nblocks) {
		size_t nb = nblocks < 4 ? nblocks : 4;
		__mmask8 m = vaes_blkmask(nb);
		__m512i b = _mm512_shuffle_epi8(c, bs);
		c = carry ? add128(c, four) : _mm512_add_epi64(c, four);
		vaes_enc_n(&b, 1, r);
		_mm512_mask_storeu_epi64(out, m,
		                         _mm512_xor_si512(b, _mm512_maskz_loadu_epi64(m, in)));
		in += 16 * nb;
		out += 16 * nb;
		nblocks -= nb;
	}
}

VAES_TARGET static void vaes_ctr128(const secho_aes_key *k, uint8_t ctr[16], uint8_t *out,
                                    const uint8_t *in, size_t nblocks)
{
	const __m512i bs = vaes_bswap_mask();
	struct vaes_rk r;
	vaes_load_rk(&r, k, 0);

	/* c = [ctr, ctr+1, ctr+2, ctr+3] as little-endian integers. */
	__m512i c = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)ctr));
	c = add128(_mm512_shuffle_epi8(c, bs), _mm512_set_epi64(0, 3, 0, 2, 0, 1, 0, 0));
	/* Rounded up to whole registers: the last one computes up to three spare counters. */
	const uint64_t lo = secho_load_be64(ctr + 8);
	if (lo + ((uint64_t)nblocks + 3) >= lo && nblocks < (1ull << 60))
		ctr128_blocks(&r, c, out, in, nblocks, 0);
	else
		ctr128_blocks(&r, c, out, in, nblocks, 1);
}

/* ctr += n as a 128-bit big-endian integer (public data). */
static void ctr128_add(uint8_t ctr[16], uint64_t n)
{
	uint64_t lo = secho_load_be64(ctr + 8), hi = secho_load_be64(ctr);
	uint64_t nlo = lo + n;
	hi += nlo < lo;
	secho_store_be64(ctr, hi);
	secho_store_be64(ctr + 8, nlo);
}

VAES_TARGET static void vaes_ctr128_run(const secho_aes_key *k, uint8_t ctr[16], uint8_t *out,
                                        const uint8_t *in, size_t nblocks)
{
	vaes_ctr128(k, ctr, out, in, nblocks);
	ctr128_add(ctr, nblocks);
}

/* CFB encryption and OFB are serial too: the AES-NI code (VAES implies AES-NI). */
static void vaes_cfb_enc(const secho_aes_key *k, uint8_t iv[16], uint8_t *out, const uint8_t *in,
                         size_t nblocks)
{
	secho_aes_ni_impl.cfb_enc(k, iv, out, in, nblocks);
}

static void vaes_ofb(const secho_aes_key *k, uint8_t iv[16], uint8_t *out, const uint8_t *in,
                     size_t nblocks)
{
	secho_aes_ni_impl.ofb(k, iv, out, in, nblocks);
}

/* CBC encryption is inherently serial: one block at a time in an XMM register. */
VAES_TARGET static void vaes_cbc_enc(const secho_aes_key *k, uint8_t iv[16], uint8_t *out,
                                     const uint8_t *in, size_t nblocks)
{
	__m128i rk[SECHO_AES_MAX_ROUNDS + 1];
	const unsigned nr = k->rounds;
	for (unsigned i = 0; i <= nr; i++)
		rk[i] = _mm_load_si128((const __m128i *)k->u.rk[0][i]);
	__m128i v = _mm_loadu_si128((const __m128i *)iv);
	for (size_t b = 0; b < nblocks; b++) {
		__m128i x = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(in + 16 * b)), v);
		x = _mm_xor_si128(x, rk[0]);
		for (unsigned i = 1; i < nr; i++)
			x = _mm_aesenc_si128(x, rk[i]);
		v = _mm_aesenclast_si128(x, rk[nr]);
		_mm_storeu_si128((__m128i *)(out + 16 * b), v);
	}
	_mm_storeu_si128((__m128i *)iv, v);
}

/*
 * CBC decryption and CFB128 decryption are parallel: every output needs the previous
 * ciphertext block, which is input. prev = the register holding the blocks before the
 * current register's: valignq shifts [prev lane 3, cur lanes 0..2] into place. All
 * ciphertext of a round of registers is loaded before any output is stored, so in-place
 * operation is safe.
 */
VAES_TARGET static void chain_dec(const secho_aes_key *k, uint8_t iv[16], uint8_t *out,
                                  const uint8_t *in, size_t nblocks, int cfb)
{
	struct vaes_rk r;
	vaes_load_rk(&r, k, cfb ? 0 : 1);
	/* Lane 3 of `last` is the previous ciphertext block. */
	__m512i last = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)iv));

	for (; nblocks >= 32; nblocks -= 32, in += 512, out += 512) {
		__m512i c[8], sh[8], b[8];
		for (int j = 0; j < 8; j++)
			c[j] = _mm512_loadu_si512(in + 64 * j);
		for (int j = 0; j < 8; j++)
			sh[j] = _mm512_alignr_epi64(c[j], j ? c[j - 1] : last, 6);
		if (cfb) {
			for (int j = 0; j < 8; j++)
				b[j] = sh[j];
			vaes_enc_n(b, 8, &r);
			for (int j = 0; j < 8; j++)
				_mm512_storeu_si512(out + 64 * j, _mm512_xor_si512(b[j], c[j]));
		} else {
			for (int j = 0; j < 8; j++)
				b[j] = c[j];
			vaes_dec_n(b, 8, &r);
			for (int j = 0; j < 8; j++)
				_mm512_storeu_si512(out + 64 * j, _mm512_xor_si512(b[j], sh[j]));
		}
		last = c[7];
	}
	while (nblocks) {
		size_t nb = nblocks < 4 ? nblocks : 4;
		__mmask8 m = vaes_blkmask(nb);
		__m512i c = _mm512_maskz_loadu_epi64(m, in);
		__m512i sh = _mm512_alignr_epi64(c, last, 6), b;
		if (cfb) {
			b = sh;
			vaes_enc_n(&b, 1, &r);
			b = _mm512_xor_si512(b, c);
		} else {
			b = c;
			vaes_dec_n(&b, 1, &r);
			b = _mm512_xor_si512(b, sh);
		}
		_mm512_mask_storeu_epi64(out, m, b);
		/* Move the last real ciphertext block of c into lane 3. */
		last = _mm512_permutexvar_epi64(
		        _mm512_add_epi64(_mm512_set1_epi64((long long)(2 * nb - 2)),
		                         _mm512_set_epi64(1, 0, 1, 0, 1, 0, 1, 0)),
		        c);
		in += 16 * nb;
		out += 16 * nb;
		nblocks -= nb;
	}
	_mm_storeu_si128((__m128i *)iv, _mm512_extracti32x4_epi32(last, 3));
}

VAES_TARGET static void vaes_cbc_dec(const secho_aes_key *k, uint8_t iv[16], uint8_t *out,
                                     const uint8_t *in, size_t nblocks)
{
	chain_dec(k, iv, out, in, nblocks, 0);
}

VAES_TARGET static void vaes_cfb_dec(const secho_aes_key *k, uint8_t iv[16], uint8_t *out,
                                     const uint8_t *in, size_t nblocks)
{
	chain_dec(k, iv, out, in, nblocks, 1);
}

const struct secho_aes_impl secho_aes_vaes_impl = {
        .name = "vaes",
        .id = SECHO_IMPL_VAES,
        .available = secho_vaes_available,
        .keysched = vaes_keysched,
        .ecb_enc = vaes_ecb_enc,
        .ecb_dec = vaes_ecb_dec,
        .ctr128 = vaes_ctr128_run,
        .cbc_enc = vaes_cbc_enc,
        .cbc_dec = vaes_cbc_dec,
        .cfb_dec = vaes_cfb_dec,
        .cfb_enc = vaes_cfb_enc,
        .ofb = vaes_ofb,
};

/* The vaes-split implementation (gcm_vaes_split.c) has its own GCM code and shares every
 * block-mode entry with vaes: the same functions under its own name and id. */
const struct secho_aes_impl secho_aes_vaes_split_impl = {
        .name = "vaes-split",
        .id = SECHO_IMPL_VAES_SPLIT,
        .available = secho_vaes_available,
        .keysched = vaes_keysched,
        .ecb_enc = vaes_ecb_enc,
        .ecb_dec = vaes_ecb_dec,
        .ctr128 = vaes_ctr128_run,
        .cbc_enc = vaes_cbc_enc,
        .cbc_dec = vaes_cbc_dec,
        .cfb_dec = vaes_cfb_dec,
        .cfb_enc = vaes_cfb_enc,
        .ofb = vaes_ofb,
};
