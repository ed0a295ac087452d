/*
 * src/crypto/aes_ni.c - AES with the AES-NI instructions: key schedule, ECB, CTR (128-bit
 * counter), CBC, CFB128 decryption.
 *
 * Constant-time: yes. The hardware rounds take data-independent time; the key schedule
 * uses AESKEYGENASSIST for SubWord (no table); loops and branches depend only on the
 * public key length and block counts.
 *
 * Parallel modes work 8 blocks at a time (AESENC latency ~4 cycles, two per cycle here, so
 * 8 independent chains keep both units full); the remainder is done block by block, and
 * those iterations are independent, so the out-of-order core overlaps them too. Inputs are
 * loaded into registers before any output is stored, so out == in is safe.
 */
#include "crypto/aes_ni.h"

static bool ni_available(void)
{
	unsigned need = SECHO_CPU_AESNI | SECHO_CPU_PCLMUL | SECHO_CPU_SSE41;
	return (secho_cpu_features() & need) == need;
}

/* SubWord(w) and RotWord(SubWord(w)) of FIPS-197 5.2 on a little-endian word (byte 0 of
 * the word in the low 8 bits). AESKEYGENASSIST puts SubWord(X1) in dword 0 and
 * RotWord(SubWord(X1)) ^ rcon in dword 1; we pass rcon 0 and add it in the caller. */
SECHO_NI_TARGET static uint32_t sub_word(uint32_t w, bool rot)
{
	__m128i v = _mm_aeskeygenassist_si128(_mm_set1_epi32((int)w), 0);
	return (uint32_t)(rot ? _mm_extract_epi32(v, 1) : _mm_cvtsi128_si32(v));
}

/*
 * Key expansion, word by word as FIPS-197 5.2 (Nk = key_len / 4). This one loop serves
 * 128, 192 and 256-bit keys; the branches depend on the word index only. Then the
 * decryption keys for AESDEC: reversed order, InvMixColumns (AESIMC) on the middle ones.
 * Contract: k->rounds is set; fills k->u.rk[0] and k->u.rk[1]; the word buffer is wiped.
 */
SECHO_NI_TARGET static void ni_keysched(secho_aes_key *k, const uint8_t *key, size_t key_len)
{
	static const uint8_t rcon[10] = {0x01, 0x02, 0x04, 0x08, 0x10,
	                                 0x20, 0x40, 0x80, 0x1b, 0x36};
	uint32_t w[4 * (SECHO_AES_MAX_ROUNDS + 1)];
	unsigned nk = (unsigned)key_len / 4, nw = 4 * (k->rounds + 1);

	memcpy(w, key, key_len);
	for (unsigned i = nk; i < nw; i++) {
		uint32_t t = w[i - 1];
		if (i % nk == 0)
			t = sub_word(t, true) ^ rcon[i / nk - 1];
		else if (nk > 6 && i % nk == 4)
			t = sub_word(t, false);
		w[i] = w[i - nk] ^ t;
	}
	memcpy(k->u.rk[0], w, 4 * (size_t)nw);
	secho_wipe(w, sizeof(w));

	__m128i *e = (__m128i *)k->u.rk[0], *d = (__m128i *)k->u.rk[1];
	unsigned nr = k->rounds;
	d[0] = e[nr];
	for (unsigned r = 1; r < nr; r++)
		d[r] = _mm_aesimc_si128(e[nr - r]);
	d[nr] = e[0];
}

SECHO_NI_TARGET static void ni_ecb_enc(const secho_aes_key *k, uint8_t *out, const uint8_t *in,
                                       size_t nblocks)
{
	__m128i b[8];
	for (; nblocks >= 8; nblocks -= 8, in += 128, out += 128) {
		for (int i = 0; i < 8; i++)
			b[i] = ni_loadu(in + 16 * i);
		ni_enc_n(k, b, 8);
		for (int i = 0; i < 8; i++)
			ni_storeu(out + 16 * i, b[i]);
	}
	for (; nblocks; nblocks--, in += 16, out += 16)
		ni_storeu(out, ni_enc1(k, ni_loadu(in)));
}

SECHO_NI_TARGET static void ni_ecb_dec(const secho_aes_key *k, uint8_t *out, const uint8_t *in,
                                       size_t nblocks)
{
	__m128i b[8];
	for (; nblocks >= 8; nblocks -= 8, in += 128, out += 128) {
		for (int i = 0; i < 8; i++)
			b[i] = ni_loadu(in + 16 * i);
		ni_dec_n(k, b, 8);
		for (int i = 0; i < 8; i++)
			ni_storeu(out + 16 * i, b[i]);
	}
	for (; nblocks; nblocks--, in += 16, out += 16) {
		b[0] = ni_loadu(in);
		ni_dec_n(k, b, 1);
		ni_storeu(out, b[0]);
	}
}

/* Counter block hi:lo + j (mod 2^128) as 16 big-endian bytes in a register. The carry out
 * of the low half is computed without a branch (the counter is public anyway). */
SECHO_NI_INLINE __m128i ctr_block(uint64_t hi, uint64_t lo, uint64_t j)
{
	uint64_t l = lo + j;
	uint64_t h = hi + (l < lo);
	return _mm_set_epi64x((long long)__builtin_bswap64(l), (long long)__builtin_bswap64(h));
}

/* CTR, SP 800-38A 6.5 with the B.1 standard increment over all 128 bits. */
SECHO_NI_TARGET static void ni_ctr128(const secho_aes_key *k, uint8_t ctr[16], uint8_t *out,
                                      const uint8_t *in, size_t nblocks)
{
	uint64_t hi = secho_load_be64(ctr), lo = secho_load_be64(ctr + 8);
	__m128i b[8];

	for (; nblocks >= 8; nblocks -= 8, in += 128, out += 128) {
		for (int i = 0; i < 8; i++)
			b[i] = ctr_block(hi, lo, (uint64_t)i);
		hi += (lo + 8 < lo);
		lo += 8;
		ni_enc_n(k, b, 8);
		for (int i = 0; i < 8; i++)
			ni_storeu(out + 16 * i, _mm_xor_si128(b[i], ni_loadu(in + 16 * i)));
	}
	for (; nblocks; nblocks--, in += 16, out += 16) {
		b[0] = ni_enc1(k, ctr_block(hi, lo, 0));
		hi += (lo + 1 < lo);
		lo += 1;
		ni_storeu(out, _mm_xor_si128(b[0], ni_loadu(in)));
	}
	secho_store_be64(ctr, hi);
	secho_store_be64(ctr + 8, lo);
}

/* CBC encryption is inherently serial: C_i = E(P_i ^ C_(i-1)). */
SECHO_NI_TARGET static void ni_cbc_enc(const secho_aes_key *k, uint8_t iv[16], uint8_t *out,
                                       const uint8_t *in, size_t nblocks)
{
	__m128i c = ni_loadu(iv);
	for (; nblocks; nblocks--, in += 16, out += 16) {
		c = ni_enc1(k, _mm_xor_si128(c, ni_loadu(in)));
		ni_storeu(out, c);
	}
	ni_storeu(iv, c);
}

/*
 * The serial feedback modes keep the chain in a register (as CBC encryption above): going
 * through ecb_enc one block at a time added a call and a store-to-load round trip of the
 * chaining value to every block's dependency chain.
 */
/* CFB128 encryption: C_i = E(C_(i-1)) ^ P_i. */
SECHO_NI_TARGET static void ni_cfb_enc(const secho_aes_key *k, uint8_t iv[16], uint8_t *out,
                                       const uint8_t *in, size_t nblocks)
{
	__m128i c = ni_loadu(iv);
	for (; nblocks; nblocks--, in += 16, out += 16) {
		c = _mm_xor_si128(ni_enc1(k, c), ni_loadu(in));
		ni_storeu(out, c);
	}
	ni_storeu(iv, c);
}

/* OFB: O_i = E(O_(i-1)), out = in ^ O_i. */
SECHO_NI_TARGET static void ni_ofb(const secho_aes_key *k, uint8_t iv[16], uint8_t *out,
                                   const uint8_t *in, size_t nblocks)
{
	__m128i o = ni_loadu(iv);
	for (; nblocks; nblocks--, in += 16, out += 16) {
		o = ni_enc1(k, o);
		ni_storeu(out, _mm_xor_si128(o, ni_loadu(in)));
	}
	ni_storeu(iv, o);
}

/* CBC decryption in parallel: P_i = D(C_i) ^ C_(i-1); all C are loaded first. */
SECHO_NI_TARGET static void ni_cbc_dec(const secho_aes_key *k, uint8_t iv[16], uint8_t *out,
                                       const uint8_t *in, size_t nblocks)
{
	__m128i prev = ni_loadu(iv), c[8], b[8];
	for (; nblocks >= 8; nblocks -= 8, in += 128, out += 128) {
		for (int i = 0; i < 8; i++)
			b[i] = c[i] = ni_loadu(in + 16 * i);
		ni_dec_n(k, b, 8);
		ni_storeu(out, _mm_xor_si128(b[0], prev));
		for (int i = 1; i < 8; i++)
			ni_storeu(out + 16 * i, _mm_xor_si128(b[i], c[i - 1]));
		prev = c[7];
	}
	for (; nblocks; nblocks--, in += 16, out += 16) {
		b[0] = c[0] = ni_loadu(in);
		ni_dec_n(k, b, 1);
		ni_storeu(out, _mm_xor_si128(b[0], prev));
		prev = c[0];
	}
	ni_storeu(iv, prev);
}

/* CFB128 decryption in parallel: P_i = C_i ^ E(C_(i-1)), C_0 = IV. */
SECHO_NI_TARGET static void ni_cfb_dec(const secho_aes_key *k, uint8_t iv[16], uint8_t *out,
                                       const uint8_t *in, size_t nblocks)
{
	__m128i prev = ni_loadu(iv), c[8], b[8];
	for (; nblocks >= 8; nblocks -= 8, in += 128, out += 128) {
		for (int i = 0; i < 8; i++)
			c[i] = ni_loadu(in + 16 * i);
		b[0] = prev;
		for (int i = 1; i < 8; i++)
			b[i] = c[i - 1];
		ni_enc_n(k, b, 8);
		for (int i = 0; i < 8; i++)
			ni_storeu(out + 16 * i, _mm_xor_si128(b[i], c[i]));
		prev = c[7];
	}
	for (; nblocks; nblocks--, in += 16, out += 16) {
		c[0] = ni_loadu(in);
		ni_storeu(out, _mm_xor_si128(ni_enc1(k, prev), c[0]));
		prev = c[0];
	}
	ni_storeu(iv, prev);
}

const struct secho_aes_impl secho_aes_ni_impl = {
        .name = "aesni",
        .id = SECHO_IMPL_AESNI,
        .available = ni_available,
        .keysched = ni_keysched,
        .ecb_enc = ni_ecb_enc,
        .ecb_dec = ni_ecb_dec,
        .ctr128 = ni_ctr128,
        .cbc_enc = ni_cbc_enc,
        .cbc_dec = ni_cbc_dec,
        .cfb_dec = ni_cfb_dec,
        .cfb_enc = ni_cfb_enc,
        .ofb = ni_ofb,
};
