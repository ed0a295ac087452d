/*
 * src/crypto/gcm_vaes_split.c - AES-GCM with VAES + VPCLMULQDQ on 512-bit registers,
 * scheduled for cores that execute a 512-bit instruction as two 256-bit halves (AMD
 * Zen 4). Same instructions and GHASH arithmetic (gcm_vaes.h) as gcm_vaes.c, which was
 * tuned on Zen 5; a different key layout and a different order of the work.
 *
 * Measured on Zen 4 (family 19h model 11h), in core cycles: a 512-bit VAESENC issues once
 * per cycle (a 256- or 128-bit one twice per cycle), latency 4; a VPCLMULQDQ of any width
 * issues once every two cycles, latency 4, and takes AES issue slots too (about 1.5 per
 * 512-bit one among AES rounds); one 32-block round of AES-256 rounds plus the GHASH
 * products of 32 blocks costs about 140 cycles, and each reduction about 14 more. So:
 *
 *  - htab holds K_64..K_1 (entry j = K_(64-j)) and no Karatsuba halves (hk_of() makes
 *    them from K with two cheap operations): a GHASH window of 64 blocks is summed
 *    unreduced and reduced once. A message of up to 64 blocks with its AAD and length
 *    block (up to 992 bytes of text after 16 bytes of AAD) is one window, one reduction;
 *    longer ones are cut into windows of up to 64 blocks from the end (make_plan()).
 *  - The text goes in groups of registers; each group's GHASH products are issued in the
 *    next group's AES rounds, one register per round, so that the multiplier and the AES
 *    unit work side by side (the out-of-order window does not reach from one group's
 *    rounds to the next). The last group is small (two registers) and E(J0) goes with
 *    it: after the last AES round only its six products and one reduction remain.
 *  - Counter blocks are made big-endian by adding to the counter's last byte while it does
 *    not wrap within the group (no byte swap per register).
 *  - AES-256 messages of up to 1536 bytes (24 registers) do not go in groups: each
 *    register starts its rounds two rounds after the one before it and its GHASH products
 *    go in the rounds of the registers after it (skew_msg()), one reduction per message.
 *    Measured against the groups, single calls: 64 B 85 against 103 TSC cycles, 256 B
 *    122 against 145, 512 B 178 against 221, 1024 B 290 against 344, 1472 B 385 against
 *    487 (medians of 3 runs, one after the other in one lock, machine shared).
 *
 * Constant-time: as gcm_vaes.c; branches and addresses depend on lengths and counter
 * values only (public). Tags compare by OR of XORs (tag_out()).
 */
#include "crypto/gcm_vaes.h"

#define NP64 64 /* powers of K in htab */

/* K_i, i in 1..64. */
static inline const uint8_t *kpow64(const secho_gcm_key *k, size_t i)
{
	return k->htab + 16 * (NP64 - i);
}

/* K.lo ^ K.hi in both qwords of every lane (the Karatsuba middle operand), from K. */
VAES_INLINE __m512i hk_of(__m512i h)
{
	return _mm512_xor_si512(h, _mm512_shuffle_epi32(h, _MM_PERM_BADC));
}

/* x times the powers at p, lanes selected by the qword mask m. */
VAES_INLINE void gmulp(struct gacc *a, __m512i x, const uint8_t *p, __mmask8 m)
{
	__m512i h = _mm512_maskz_loadu_epi64(m, p);
	gacc_mul(a, x, h, hk_of(h));
}

/* ---- key setup, bulk GHASH ---- */

/* K_1 (gcm_vaes.h), then K_2..K_64. */
VAES_TARGET static void split_hinit(secho_gcm_key *k)
{
	const __m128i k1 = ghash_k1(k);
	__m128i p = k1;
	for (unsigned i = 1; i <= NP64; i++) {
		_mm_storeu_si128((__m128i *)kpow64(k, i), p);
		p = gf_dot(p, k1);
	}
}

/* s = GHASH state (POLYVAL form) after absorbing nblocks blocks from memory: ghash_mem()
 * (gcm_vaes.h) on this layout, 64 blocks per reduction. Written again rather than shared:
 * a version of ghash_mem() taking the layout compiled gcm_vaes.c differently. */
VAES_INLINE __m128i ghash64(const secho_gcm_key *k, __m128i s, const uint8_t *in, size_t nblocks)
{
	const __m512i bs = vaes_bswap_mask();
	while (nblocks) {
		size_t m = nblocks < NP64 ? nblocks : NP64;
		const uint8_t *t = kpow64(k, m);
		struct gacc a;
		gacc_zero(&a);
		for (size_t g = 0; 4 * g < m; g++) {
			size_t nb = m - 4 * g < 4 ? m - 4 * g : 4;
			__mmask8 msk = vaes_blkmask(nb);
			__m512i x =
			        _mm512_shuffle_epi8(_mm512_maskz_loadu_epi64(msk, in + 64 * g), bs);
			if (g == 0)
				x = _mm512_xor_si512(x, _mm512_zextsi128_si512(s));
			gmulp(&a, x, t + 64 * g, msk);
		}
		s = gacc_final(&a);
		in += 16 * m;
		nblocks -= m;
	}
	return s;
}

VAES_TARGET static void split_ghash(const secho_gcm_key *k, uint8_t y[16], const uint8_t *in,
                                    size_t nblocks)
{
	__m128i s = bswap128(_mm_loadu_si128((const __m128i *)y));
	s = ghash64(k, s, in, nblocks);
	_mm_storeu_si128((__m128i *)y, bswap128(s));
}

/* The GHASH state after the AAD (any length), padded to whole blocks. */
VAES_INLINE __m128i aad_hash(const secho_gcm_key *k, const uint8_t *aad, size_t aad_len)
{
	__m128i s = ghash64(k, _mm_setzero_si128(), aad, aad_len / 16);
	if (aad_len % 16) {
		__m128i x = _mm_maskz_loadu_epi8(bytemask16(aad_len % 16), aad + aad_len / 16 * 16);
		s = gf_dot(_mm_xor_si128(s, bswap128(x)),
		           _mm_loadu_si128((const __m128i *)kpow64(k, 1)));
	}
	return s;
}

/* ---- counter mode ---- */

/*
 * The 12-byte IV in bytes 0..11 of a register, bytes 12..15 zero, read as three 4-byte
 * loads. A caller usually writes the IV just before the call, and the core hands a load
 * the bytes of a store still in flight only when one store covers the whole load: a
 * 4-byte load is covered by any usual way of writing an IV (one 16-byte store, 8 + 4
 * bytes, 4 + 8 bytes as salt and counter, 8 bytes at offset 4), a 12-byte (masked) load by
 * none of them but the first. Otherwise the load, and every AES round after it, waits
 * until the store has reached the cache: about 40 TSC cycles per call on Zen 4, measured
 * with the IV written as 8 bytes at offset 4 (a new counter per message).
 */
VAES_INLINE __m128i iv_load(const uint8_t iv[12])
{
	uint32_t w0, w1, w2;
	memcpy(&w0, iv, 4);
	memcpy(&w1, iv + 4, 4);
	memcpy(&w2, iv + 8, 4);
	return _mm_insert_epi32(_mm_insert_epi32(_mm_cvtsi32_si128((int)w0), (int)w1, 1), (int)w2,
	                        2);
}

/* The IV in bytes 0..11 of every 128-bit lane, the counter field zero. */
VAES_INLINE __m512i iv_lanes(const uint8_t iv[12])
{
	return _mm512_broadcast_i32x4(iv_load(iv));
}

/*
 * n registers of counter blocks ctr, ctr + 1, ... (inc32, SP 800-38D 6.2; big-endian as
 * AES takes them) after the first round-key XOR. The counter field is dword 3 read
 * little-endian, so its last byte is the dword's top byte: while that byte does not wrap
 * within the n registers, ctr + i is the field of ctr plus i << 24. Otherwise (one group
 * in eight) the counters are made byte-reversed, where an add carries, and swapped back.
 */
VAES_INLINE void ctr_regs(__m512i *b, const int n, __m512i ivb, uint32_t ctr, __m512i k0)
{
	if ((ctr & 0xff) <= 256u - 4u * (unsigned)n) {
		const __m512i c = _mm512_mask_set1_epi32(ivb, 0x8888, (int)__builtin_bswap32(ctr));
		/* each register from c directly: no chain of adds */
#pragma GCC unroll 8
		for (int j = 0; j < n; j++)
			b[j] = _mm512_xor_si512(
			        _mm512_add_epi32(c, _mm512_set_epi32((4 * j + 3) << 24, 0, 0, 0,
			                                             (4 * j + 2) << 24, 0, 0, 0,
			                                             (4 * j + 1) << 24, 0, 0, 0,
			                                             (4 * j) << 24, 0, 0, 0)),
			        k0);
	} else {
		const __m512i bs = vaes_bswap_mask(), four = ctr32_four();
		__m512i c = ctr32_first(_mm_insert_epi32(_mm512_castsi512_si128(ivb),
		                                         (int)__builtin_bswap32(ctr), 3));
#pragma GCC unroll 8
		for (int j = 0; j < n; j++) {
			b[j] = _mm512_xor_si512(_mm512_shuffle_epi8(c, bs), k0);
			c = _mm512_add_epi32(c, four);
		}
	}
}

/*
 * AES rounds 1..rounds of the n registers b (round 0 done by ctr_regs), with the GHASH
 * products of the m registers of text at gh (byte-swapped; s added to the first block when
 * xs) times the powers at hp going into a, one register per round in rounds 1..m; the
 * register that takes s goes last, so that the reduction that made s has the most time.
 * n and m are constants (0..8; m < rounds).
 */
VAES_INLINE void rounds_gh(__m512i *b, const int n, const struct vaes_rk *r, const unsigned rounds,
                           struct gacc *a, const uint8_t *gh, const int m, const uint8_t *hp,
                           int xs, __m128i s)
{
	const __m512i bs = vaes_bswap_mask();
#pragma GCC unroll 8
	for (int i = 1; i <= m; i++) {
#pragma GCC unroll 8
		for (int j = 0; j < n; j++)
			b[j] = _mm512_aesenc_epi128(b[j], r->k[i]);
		const int g = i % m;
		__m512i x = _mm512_shuffle_epi8(_mm512_loadu_si512(gh + 64 * g), bs);
		if (g == 0 && xs)
			x = _mm512_xor_si512(x, _mm512_zextsi128_si512(s));
		gmulp(a, x, hp + 64 * g, 0xff);
		gacc_pin(a);
	}
#pragma GCC unroll 14
	for (unsigned i = (unsigned)m + 1; i < rounds; i++)
#pragma GCC unroll 8
		for (int j = 0; j < n; j++)
			b[j] = _mm512_aesenc_epi128(b[j], r->k[i]);
#pragma GCC unroll 8
	for (int j = 0; j < n; j++)
		b[j] = _mm512_aesenclast_epi128(b[j], r->k[rounds]);
}

/* n whole registers (4n blocks) from counter ctr: out = in ^ keystream, with the GHASH of
 * the m registers at gh (see rounds_gh) added to a. */
VAES_INLINE void group(const struct vaes_rk *r, const unsigned rounds, __m512i ivb, uint32_t ctr,
                       uint8_t *out, const uint8_t *in, const int n, struct gacc *a,
                       const uint8_t *gh, const int m, const uint8_t *hp, int xs, __m128i s)
{
	__m512i b[8];
	ctr_regs(b, n, ivb, ctr, r->k[0]);
	rounds_gh(b, n, r, rounds, a, gh, m, hp, xs, s);
#pragma GCC unroll 8
	for (int j = 0; j < n; j++)
		_mm512_storeu_si512(out + 64 * j,
		                    _mm512_xor_si512(b[j], _mm512_loadu_si512(in + 64 * j)));
}

/* ---- messages of up to NSKEW registers: the skewed pipeline ---- */

/* Round keys of AES-256 (the endpoint's cipher) with the round count as a constant, so
 * that every round loop unrolls. */
#define NR256 14

/*
 * Every register of a message starts its AES rounds SKEW_D rounds after the one before
 * it, so that at any time about 14 / SKEW_D registers are in flight at different rounds
 * and one finishes every SKEW_D rounds. Its GHASH products are issued SKEW_G steps after
 * its last round (encryption) or one step after its first (decryption hashes its input),
 * in the rounds of the registers still running; so the multiplier works beside the AES
 * unit from the first finished register on, and after the last AES round only the last
 * register's products (encryption) and one reduction remain. In a schedule of groups
 * (all registers of a group at the same round, the group's GHASH in the next group's
 * rounds) the first group's rounds have no products beside them and the last group's
 * products nothing: measured on Zen 4, 512 bytes took 156 TSC cycles this way against 188
 * that way with the same IV, 1472 bytes 363 against 419. SKEW_D = 2 and SKEW_G = 2 were
 * the best of 1..4 and 0..4 there.
 *
 * Every step is placed at compile time (the register count is a constant), so the code is
 * straight-line; one instantiation per register count.
 */
#define SKEW_D 2
#define SKEW_G 2
#define NSKEW  24 /* registers: 1536 bytes */

/*
 * tag_out() (gcm_vaes.h), with a whole tag sealed by a plain store: a masked store that
 * ends a call holds back the loads of the next one (its IV) until its mask is known, so
 * that back-to-back calls do not overlap (measured: 20 TSC cycles per 64-byte message).
 */
VAES_INLINE int tag_put(__m128i t, int enc, uint8_t *tag, size_t tag_len, uint8_t *out, size_t len)
{
	if (enc && tag_len == 16) {
		_mm_storeu_si128((__m128i *)tag, t);
		return SECHO_OK;
	}
	return tag_out(t, enc, tag, tag_len, out, len);
}

/* For skew_msg(), AAD over 64 bytes (out of line: rare, and the accumulators of the caller
 * stay in registers only if their address is not taken): the products of its blocks, the
 * first times K_top, or its GHASH alone. */
VAES_TARGET __attribute__((noinline)) static struct gacc
aad_products(const secho_gcm_key *k, const uint8_t *aad, size_t aad_len, size_t top)
{
	const size_t na = (aad_len + 15) / 16;
	struct gacc a;
	gacc_zero(&a);
	for (size_t g = 0; 4 * g < na; g++) {
		const size_t m = na - 4 * g < 4 ? na - 4 * g : 4;
		__m512i x = _mm512_maskz_loadu_epi8(bytemask64(aad_len - 64 * g), aad + 64 * g);
		gmulp(&a, _mm512_shuffle_epi8(x, vaes_bswap_mask()), kpow64(k, top - 4 * g),
		      vaes_blkmask(m));
	}
	return a;
}

VAES_TARGET __attribute__((noinline)) static __m128i aad_alone(const secho_gcm_key *k,
                                                               const uint8_t *aad, size_t aad_len)
{
	return aad_hash(k, aad, aad_len);
}

/*
 * One AES-256 message of n = ceil(len / 64) registers (a constant, 0..NSKEW). GHASH
 * windows: with n <= 15 one window holds the AAD (when it fits), the text and the length
 * block; otherwise the registers before l0 = n - 15 (with the AAD when it fits) are one
 * window, reduced when its last product is in, and the last 15 registers and the length
 * block the other, whose first register takes the first window's sum (its product goes
 * with the last register's, when that sum is ready). AAD that does not fit its window is
 * hashed and reduced first, and the sum goes into register 0.
 */
VAES_INLINE int skew_msg(const secho_gcm_key *k, const uint8_t iv[12], const uint8_t *aad,
                         size_t aad_len, uint8_t *out, const uint8_t *in, size_t len, uint8_t *tag,
                         size_t tag_len, const int enc, const int n)
{
	struct vaes_rk r;
	vaes_load_rk_nr(&r, &k->aes, NR256);
	const __m512i bs = vaes_bswap_mask();
	const __m128i ivx = iv_load(iv);
	const __m512i ivb = _mm512_broadcast_i32x4(ivx);
	const size_t nb = (len + 15) / 16, na = (aad_len + 15) / 16;
	const int l0 = n > 15 ? n - 15 : 0;
	/* the last register: its bytes, blocks and masks */
	const size_t lastb = n ? len - 64 * (size_t)(n - 1) : 0;
	const __mmask64 lm = bytemask64(lastb);
	const __mmask8 lq = vaes_blkmask((lastb + 15) / 16);

	struct gacc a, e; /* a: the first (or only) window; e: the last one when l0 */
	gacc_zero(&a);
	gacc_zero(&e);
	__m128i s0 = _mm_setzero_si128();               /* the AAD's GHASH when hashed alone */
	const size_t fw = l0 ? 4 * (size_t)l0 : nb + 1; /* blocks after the AAD in its window */
	if (aad_len <= 64 && na + fw <= NP64) {
		/* the usual case: one register of AAD (lanes past it are masked off) */
		__m512i x = _mm512_maskz_loadu_epi8(bytemask64(aad_len), aad);
		gmulp(&a, _mm512_shuffle_epi8(x, bs), kpow64(k, na + fw), vaes_blkmask(na));
	} else if (na + fw <= NP64) {
		a = aad_products(k, aad, aad_len, na + fw);
	} else {
		s0 = aad_alone(k, aad, aad_len);
	}
	/* the length block (with no text, it also takes the AAD's sum) */
	gmulp(l0 ? &e : &a,
	      _mm512_zextsi128_si512(
	              _mm_xor_si128(lenblk(aad_len, len), n ? _mm_setzero_si128() : s0)),
	      kpow64(k, 1), 0x03);

	/* E(J0) on one block: 14 rounds at half the cost of a full register */
	__m128i j0 =
	        _mm_xor_si128(_mm_insert_epi32(ivx, 0x01000000, 3), _mm512_castsi512_si128(r.k[0]));
	__m512i b[NSKEW + 1], x[NSKEW + 1];
	__m128i s1 = _mm_setzero_si128(); /* the first window's sum, for register l0 */
	const int gdelay = enc ? 14 + SKEW_G : 1;
	const int steps = SKEW_D * (n ? n - 1 : 0) + (enc ? 14 + SKEW_G : 14) + 1;
#pragma GCC unroll 128
	for (int t = 0; t < steps; t++) {
		if (t >= 1 && t <= 13)
			j0 = _mm_aesenc_si128(j0, _mm512_castsi512_si128(r.k[t]));
		if (t == 14)
			j0 = _mm_aesenclast_si128(j0, _mm512_castsi512_si128(r.k[14]));
#pragma GCC unroll 32
		for (int j = 0; j < n; j++) {
			const int rr = t - SKEW_D * j;
			uint8_t *o = out + 64 * j;
			const uint8_t *i = in + 64 * j;
			if (rr == 0) {
				/* counters 2 + 4j..: the counter starts at 2 and its last
				 * byte alone changes within the first 64 blocks, so each
				 * register is the IV ORed with a constant, with no transfer
				 * from a general register */
				b[j] = _mm512_xor_si512(
				        _mm512_or_si512(
				                ivb, _mm512_set_epi32((5 + 4 * j) << 24, 0, 0, 0,
				                                      (4 + 4 * j) << 24, 0, 0, 0,
				                                      (3 + 4 * j) << 24, 0, 0, 0,
				                                      (2 + 4 * j) << 24, 0, 0, 0)),
				        r.k[0]);
				if (!enc)
					x[j] = _mm512_shuffle_epi8(
					        j == n - 1 ? _mm512_maskz_loadu_epi8(lm, i)
					                   : _mm512_loadu_si512(i),
					        bs);
			} else if (rr >= 1 && rr <= 13) {
				b[j] = _mm512_aesenc_epi128(b[j], r.k[rr]);
			} else if (rr == 14) {
				b[j] = _mm512_aesenclast_epi128(b[j], r.k[14]);
				__m512i c;
				if (j == n - 1) {
					c = _mm512_maskz_mov_epi8(
					        lm, _mm512_xor_si512(
					                    b[j], _mm512_maskz_loadu_epi8(lm, i)));
					_mm512_mask_storeu_epi8(o, lm, c);
				} else {
					c = _mm512_xor_si512(b[j], _mm512_loadu_si512(i));
					_mm512_storeu_si512(o, c);
				}
				if (enc)
					x[j] = _mm512_shuffle_epi8(c, bs);
			}
			if (rr == gdelay) {
				if (j == 0)
					x[0] = _mm512_xor_si512(x[0], _mm512_zextsi128_si512(s0));
				if (j < l0) {
					gmulp(&a, x[j], kpow64(k, 4 * (size_t)(l0 - j)), 0xff);
					gacc_pin(&a);
					if (j == l0 - 1)
						s1 = gacc_final(&a);
				} else if (j != l0 || !l0) {
					gmulp(l0 ? &e : &a, x[j], kpow64(k, nb + 1 - 4 * (size_t)j),
					      j == n - 1 ? lq : 0xff);
					if (l0)
						gacc_pin(&e);
					else
						gacc_pin(&a);
				}
				if (l0 && j == n - 1) /* register l0, with the first window's sum */
					gmulp(&e,
					      _mm512_xor_si512(x[l0], _mm512_zextsi128_si512(s1)),
					      kpow64(k, nb + 1 - 4 * (size_t)l0), 0xff);
			}
		}
	}
	const __m128i t = _mm_xor_si128(bswap128(gacc_final(l0 ? &e : &a)), j0);
	return tag_put(t, enc, tag, tag_len, out, len);
}

/* ---- whole messages, 96-bit IV ---- */

/*
 * The plan of a message: the text in ng groups of 8 registers, then P registers and a last
 * group of F (1..4, the last one masked; E(J0) goes with it). GHASH windows of up to 64
 * blocks, counted from the end: the last one holds the length block, the last nt text
 * blocks and, when they fit (last_in), the last group's 32; the groups before go in
 * pairs from the end, so the first window is a single group when their number is odd.
 * The AAD (up to 64 bytes) goes in the first window when it fits (aad_in), otherwise it
 * is hashed and reduced on its own first. Only messages longer than NSKEW registers have a
 * plan (msg96(); the shorter ones take skew_msg()): so at least 25 registers, ng >= 2, P
 * is 1..8 and F is 2, and at least one group is paired.
 */
struct plan {
	size_t ng;     /* groups of 8 registers */
	size_t nt;     /* text blocks after them */
	int P, F;      /* registers after them: a group of P, then the last group of F */
	int last_in;   /* the last group is in the last window */
	int aad_in;    /* the AAD is in the first window */
	size_t paired; /* groups paired from the end (ng, or ng - 1 when last_in) */
};

/* len > 64 * NSKEW (see above). */
VAES_INLINE void make_plan(struct plan *p, size_t aad_len, size_t len)
{
	const size_t R = (len + 63) / 64;
	p->ng = (R - 10 + 7) / 8;
	const size_t T = R - 8 * p->ng; /* 3..10 registers */
	p->P = (int)T - 2;
	p->F = 2;
	p->nt = (len - 512 * p->ng + 15) / 16;
	p->last_in = p->nt + 1 + 32 <= NP64;
	p->paired = p->last_in ? p->ng - 1 : p->ng;
	/* a single first group: 32 + na <= 64 */
	p->aad_in = aad_len <= 64 && p->paired % 2;
}

/*
 * The end of a message after its groups (make_plan(): at least two), from counter ctr (the
 * text at in/out is tbytes long, the P registers first). ga: the products of the current
 * window so far (decryption: the last group's, when it is in the last window). gl
 * (encryption): the last group's ciphertext: its GHASH (role gxs/goff/gends) goes in the P
 * group's rounds, into ga, reduced when its window ends there; decryption hashes the P
 * group's input there instead. The P group's GHASH (encryption) goes in the F group's
 * rounds, and E(J0) is computed with the F group; then the F group's text and the length
 * block under one reduction. sfirst: s goes into the first block of the last window that
 * this function hashes. Returns the tag block (GHASH xor E(J0)). P (1..8) and F constants.
 */
VAES_INLINE __m128i end_msg(const secho_gcm_key *k, const struct vaes_rk *r, const unsigned rounds,
                            __m512i ivb, uint32_t ctr, struct gacc ga, __m128i s, int sfirst,
                            const uint8_t *gl, int gxs, size_t goff, int gends, uint8_t *out,
                            const uint8_t *in, size_t tbytes, size_t aad_len, size_t len,
                            const int enc, const int P, const int F)
{
	const __m512i bs = vaes_bswap_mask();
	const size_t fbytes = tbytes - 64 * (size_t)P, fb = (fbytes + 15) / 16;
	/* powers: F's blocks K_(fb+1)..K_2, P's K_(fb+4P+1)..K_(fb+2) */
	const uint8_t *tf = kpow64(k, fb + 1), *tp = kpow64(k, fb + 4 * (size_t)P + 1);

	__mmask64 bm[4];
	__mmask8 qm[4];
	__m512i hf[4], hkf[4]; /* the F group's powers and their halves, ready before its text */
#pragma GCC unroll 4
	for (int g = 0; g < F; g++) {
		bm[g] = bytemask64(fbytes - 64 * (size_t)g);
		qm[g] = vaes_blkmask(fb - 4 * (size_t)g < 4 ? fb - 4 * (size_t)g : 4);
		hf[g] = _mm512_maskz_loadu_epi64(qm[g], tf + 64 * g);
		hkf[g] = hk_of(hf[g]);
	}

	/* the last window's products: ga's, unless the last group ends the window before */
	struct gacc e = ga;
	if (gl && gends)
		gacc_zero(&e);
	/* the length block, before the rounds: after the last round only the F group's text
	 * remains to be multiplied */
	gmulp(&e, _mm512_zextsi128_si512(lenblk(aad_len, len)), kpow64(k, 1), 0x03);
	__m512i pb[8];
	ctr_regs(pb, P, ivb, ctr, r->k[0]);
	if (gl && gends) {
		/* the last group ends its window: reduce it, s opens the last one */
		rounds_gh(pb, P, r, rounds, &ga, gl, 8, kpow64(k, goff + 32), gxs, s);
		s = gacc_final(&ga);
		sfirst = 1;
	} else if (gl) {
		rounds_gh(pb, P, r, rounds, &e, gl, 8, kpow64(k, goff + 32), gxs, s);
		sfirst = 0;
	} else { /* decryption */
		rounds_gh(pb, P, r, rounds, &e, in, P, tp, sfirst, s);
		sfirst = 0;
	}
#pragma GCC unroll 8
	for (int j = 0; j < P; j++)
		_mm512_storeu_si512(out + 64 * j,
		                    _mm512_xor_si512(pb[j], _mm512_loadu_si512(in + 64 * j)));

	__m512i x[4];
	if (!enc) {
		/* decryption hashes its input: the F group's before its rounds */
#pragma GCC unroll 4
		for (int g = 0; g < F; g++) {
			x[g] = _mm512_maskz_loadu_epi8(bm[g], in + 64 * P + 64 * g);
			__m512i h = _mm512_shuffle_epi8(x[g], bs);
			if (g == 0 && sfirst)
				h = _mm512_xor_si512(h, _mm512_zextsi128_si512(s));
			gacc_mul(&e, h, hf[g], hkf[g]);
		}
	}
	__m512i b[5];
	ctr_regs(b, F, ivb, ctr + 4 * (uint32_t)P, r->k[0]);
	/* J0 = IV || 0^31 || 1 */
	b[F] = _mm512_xor_si512(_mm512_mask_set1_epi32(ivb, 0x8888, 0x01000000), r->k[0]);
	if (enc) {
		rounds_gh(b, F + 1, r, rounds, &e, out, P, tp, sfirst, s);
		sfirst = 0;
	} else {
		rounds_gh(b, F + 1, r, rounds, &e, NULL, 0, NULL, 0, s);
	}
#pragma GCC unroll 4
	for (int g = 0; g < F; g++) {
		uint8_t *o = out + 64 * P + 64 * g;
		if (enc)
			x[g] = _mm512_maskz_loadu_epi8(bm[g], in + 64 * P + 64 * g);
		__m512i y = _mm512_maskz_mov_epi8(bm[g], _mm512_xor_si512(b[g], x[g]));
		_mm512_mask_storeu_epi8(o, bm[g], y);
		if (enc) {
			__m512i h = _mm512_shuffle_epi8(y, bs);
			if (g == 0 && sfirst)
				h = _mm512_xor_si512(h, _mm512_zextsi128_si512(s));
			gacc_mul(&e, h, hf[g], hkf[g]);
		}
	}
	return _mm_xor_si128(bswap128(gacc_final(&e)), _mm512_castsi512_si128(b[F]));
}

/* Encryption: a group of 8 registers (AES-256) hashing, in its rounds, the group before
 * it at gl, whose window ends there (reduced into *s), or alone when there is none. */
VAES_INLINE void group_after(const struct vaes_rk *r, __m512i ivb, uint32_t ctr, uint8_t *out,
                             const uint8_t *in, struct gacc *a, const uint8_t *gl, int gxs,
                             const uint8_t *k32, __m128i *s)
{
	if (gl) {
		group(r, NR256, ivb, ctr, out, in, 8, a, gl, 8, k32, gxs, *s);
		*s = gacc_final(a);
		gacc_zero(a);
	} else {
		group(r, NR256, ivb, ctr, out, in, 8, a, NULL, 0, NULL, 0, *s);
	}
}

/*
 * A whole AES-256 message (see make_plan()): the AAD's products (its window a single
 * group) or its GHASH first, then the groups of 8 registers, each hashing (encryption)
 * the previous group's ciphertext or (decryption) its own input in its rounds, then
 * end_msg(). P and F as planned, constants.
 */
VAES_INLINE int msg(const secho_gcm_key *k, const uint8_t iv[12], const uint8_t *aad,
                    size_t aad_len, uint8_t *out, const uint8_t *in, size_t len, uint8_t *tag,
                    size_t tag_len, const int enc, const int P, const int F, const struct plan *p)
{
	struct vaes_rk r;
	vaes_load_rk_nr(&r, &k->aes, NR256);
	const __m512i ivb = iv_lanes(iv);
	uint8_t *const out0 = out;
	const size_t len0 = len;
	struct gacc a;
	gacc_zero(&a);
	__m128i s = _mm_setzero_si128();
	uint32_t ctr = 2;
	const uint8_t *gl = NULL; /* encryption: the group whose GHASH is due */
	int gxs = 0, gends = 0;
	size_t goff = 0;

	if (!p->aad_in)
		s = aad_hash(k, aad, aad_len);
	const uint8_t *const k32 = kpow64(k, 32), *const k64 = kpow64(k, 64);
#define ADVANCE()                                                                                  \
	do {                                                                                       \
		in += 512;                                                                         \
		out += 512;                                                                        \
		ctr += 32;                                                                         \
	} while (0)
#define REDUCE()                                                                                   \
	do {                                                                                       \
		s = gacc_final(&a);                                                                \
		gacc_zero(&a);                                                                     \
	} while (0)
	size_t j = 0;
	if (p->paired % 2) {
		/* the first window is a single group, with the AAD when it fits */
		if (p->aad_in) {
			const size_t na = (aad_len + 15) / 16;
			__m512i x = _mm512_maskz_loadu_epi8(bytemask64(aad_len), aad);
			gmulp(&a, _mm512_shuffle_epi8(x, vaes_bswap_mask()), kpow64(k, 32 + na),
			      vaes_blkmask(na));
		}
		if (enc) {
			group(&r, NR256, ivb, ctr, out, in, 8, &a, NULL, 0, NULL, 0, s);
			gl = out;
			gxs = 1; /* it takes s (the AAD's GHASH, or zero) and ends its
			            window */
			gends = 1;
		} else {
			group(&r, NR256, ivb, ctr, out, in, 8, &a, in, 8, k32, 1, s);
			REDUCE();
		}
		ADVANCE();
		j = 1;
	}
	/* pairs of groups, one window each: the first (powers K_64..K_33) takes s */
	for (; j < p->paired; j += 2) {
		if (enc) {
			group_after(&r, ivb, ctr, out, in, &a, gl, gxs, k32, &s);
			const uint8_t *first = out;
			ADVANCE();
			group(&r, NR256, ivb, ctr, out, in, 8, &a, first, 8, k64, 1, s);
			gl = out;
			gxs = 0;
			gends = 1;
		} else {
			group(&r, NR256, ivb, ctr, out, in, 8, &a, in, 8, k64, 1, s);
			ADVANCE();
			group(&r, NR256, ivb, ctr, out, in, 8, &a, in, 8, k32, 0, s);
			REDUCE();
		}
		ADVANCE();
	}
	if (p->last_in) {
		/* the last group opens the last window (powers from K_(nt+33)) */
		const uint8_t *kl = kpow64(k, p->nt + 1 + 32);
		if (enc) {
			group_after(&r, ivb, ctr, out, in, &a, gl, gxs, k32, &s);
			gl = out;
			gxs = 1;
			goff = p->nt + 1;
			gends = 0;
		} else {
			group(&r, NR256, ivb, ctr, out, in, 8, &a, in, 8, kl, 1, s);
		}
		ADVANCE();
	}
#undef ADVANCE
#undef REDUCE
	/* the last window's first block takes s unless the last group (which did) opens it */
	const int sfirst = !p->last_in;
	__m128i t = end_msg(k, &r, NR256, ivb, ctr, a, s, sfirst, gl, gxs, goff, gends, out, in,
	                    len - 512 * p->ng, aad_len, len0, enc, P, F);
	return tag_out(t, enc, tag, tag_len, out0, len0);
}

/* One instantiation per (P, F) of a plan and direction, AES-256. */
#define MSG_FN(P, F)                                                                               \
	VAES_TARGET __attribute__((noinline)) static int seal_##P##_##F(                           \
	        const secho_gcm_key *k, const uint8_t iv[12], const uint8_t *aad, size_t aad_len,  \
	        uint8_t *out, const uint8_t *in, size_t len, uint8_t *tag, size_t tag_len,         \
	        const struct plan *p)                                                              \
	{                                                                                          \
		return msg(k, iv, aad, aad_len, out, in, len, tag, tag_len, 1, P, F, p);           \
	}                                                                                          \
	VAES_TARGET __attribute__((noinline)) static int open_##P##_##F(                           \
	        const secho_gcm_key *k, const uint8_t iv[12], const uint8_t *aad, size_t aad_len,  \
	        uint8_t *out, const uint8_t *in, size_t len, uint8_t *tag, size_t tag_len,         \
	        const struct plan *p)                                                              \
	{                                                                                          \
		return msg(k, iv, aad, aad_len, out, in, len, tag, tag_len, 0, P, F, p);           \
	}
MSG_FN(1, 2)
MSG_FN(2, 2)
MSG_FN(3, 2)
MSG_FN(4, 2)
MSG_FN(5, 2)
MSG_FN(6, 2)
MSG_FN(7, 2)
MSG_FN(8, 2)

/* ---- streaming bulk, any key size ---- */

/*
 * nblocks whole blocks of GCTR from the counter block ctr (advanced; inc32), with the GHASH
 * of the ciphertext (enc) or of the input folded into the state y: groups of 8 registers
 * (one window each; encryption hashes a group in the next group's rounds), then the
 * registers left, their GHASH after them (before them when decrypting: in place, the
 * input is gone after).
 */
VAES_INLINE void bulk_blocks(const secho_gcm_key *k, uint8_t ctr[16], uint8_t y[16], uint8_t *out,
                             const uint8_t *in, size_t nblocks, const int enc, const unsigned nr)
{
	struct vaes_rk r;
	vaes_load_rk_nr(&r, &k->aes, nr);
	const unsigned rounds = nr ? nr : r.rounds;
	const __m512i ivb =
	        _mm512_broadcast_i32x4(_mm_maskz_loadu_epi8(0x0fff, ctr)); /* counter field 0 */
	uint32_t c = secho_load_be32(ctr + 12);
	__m128i s = bswap128(_mm_loadu_si128((const __m128i *)y));
	const uint8_t *gl = NULL, *hp = kpow64(k, 32);
	const size_t n0 = nblocks;
	for (; nblocks >= 32; nblocks -= 32, in += 512, out += 512, c += 32) {
		struct gacc a;
		gacc_zero(&a);
		if (!enc) {
			group(&r, rounds, ivb, c, out, in, 8, &a, in, 8, hp, 1, s);
			s = gacc_final(&a);
		} else if (gl) {
			group(&r, rounds, ivb, c, out, in, 8, &a, gl, 8, hp, 1, s);
			s = gacc_final(&a);
		} else {
			group(&r, rounds, ivb, c, out, in, 8, &a, NULL, 0, NULL, 0, s);
		}
		gl = out;
	}
	if (enc && gl)
		s = ghash64(k, s, gl, 32);
	if (!enc) /* the input, before it is overwritten in place */
		s = ghash64(k, s, in, nblocks);
	for (size_t done = 0; done < nblocks; done += 4) {
		const size_t nb = nblocks - done < 4 ? nblocks - done : 4;
		const __mmask8 m = vaes_blkmask(nb);
		__m512i b;
		ctr_regs(&b, 1, ivb, c + (uint32_t)done, r.k[0]);
		rounds_gh(&b, 1, &r, rounds, NULL, NULL, 0, NULL, 0, s);
		_mm512_mask_storeu_epi64(
		        out + 16 * done, m,
		        _mm512_xor_si512(b, _mm512_maskz_loadu_epi64(m, in + 16 * done)));
	}
	if (enc)
		s = ghash64(k, s, out, nblocks);
	_mm_storeu_si128((__m128i *)y, bswap128(s));
	secho_store_be32(ctr + 12, secho_load_be32(ctr + 12) + (uint32_t)n0);
}

VAES_TARGET static void split_enc_blocks(const secho_gcm_key *k, uint8_t ctr[16], uint8_t y[16],
                                         uint8_t *out, const uint8_t *in, size_t nblocks)
{
	if (k->aes.rounds == NR256)
		bulk_blocks(k, ctr, y, out, in, nblocks, 1, NR256);
	else
		bulk_blocks(k, ctr, y, out, in, nblocks, 1, 0);
}

VAES_TARGET static void split_dec_blocks(const secho_gcm_key *k, uint8_t ctr[16], uint8_t y[16],
                                         uint8_t *out, const uint8_t *in, size_t nblocks)
{
	if (k->aes.rounds == NR256)
		bulk_blocks(k, ctr, y, out, in, nblocks, 0, NR256);
	else
		bulk_blocks(k, ctr, y, out, in, nblocks, 0, 0);
}

/* ---- one-shot ---- */

/*
 * Other key sizes (AES-128/192): the streaming composition, in this layout: E(J0), the
 * AAD's GHASH, bulk_blocks() over the whole blocks, the partial block, the length block.
 * open compares in constant time and zeroes out on failure (tag_out()).
 */
VAES_TARGET static int msg_any(const secho_gcm_key *k, const uint8_t iv[12], const uint8_t *aad,
                               size_t aad_len, uint8_t *out, const uint8_t *in, size_t len,
                               uint8_t *tag, size_t tag_len, int enc)
{
	alignas(16) uint8_t ctr[16], y[16];
	memcpy(ctr, iv, 12);
	secho_store_be32(ctr + 12, 1);
	const __m128i ej0 = vaes_enc1(&k->aes, _mm_loadu_si128((const __m128i *)ctr));
	secho_store_be32(ctr + 12, 2);
	_mm_storeu_si128((__m128i *)y, bswap128(aad_hash(k, aad, aad_len)));
	const size_t nb = len / 16, rest = len % 16;
	if (enc)
		split_enc_blocks(k, ctr, y, out, in, nb);
	else
		split_dec_blocks(k, ctr, y, out, in, nb);
	__m128i s = bswap128(_mm_loadu_si128((const __m128i *)y));
	const __m128i k1 = _mm_loadu_si128((const __m128i *)kpow64(k, 1));
	if (rest) {
		const __mmask16 m = bytemask16(rest);
		const __m128i ks = vaes_enc1(&k->aes, _mm_loadu_si128((const __m128i *)ctr));
		const __m128i x = _mm_maskz_loadu_epi8(m, in + 16 * nb);
		const __m128i c = _mm_maskz_mov_epi8(m, _mm_xor_si128(ks, x));
		_mm_mask_storeu_epi8(out + 16 * nb, m, c);
		s = gf_dot(_mm_xor_si128(s, bswap128(enc ? c : x)), k1);
	}
	s = gf_dot(_mm_xor_si128(s, lenblk(aad_len, len)), k1);
	secho_wipe(y, sizeof(y));
	return tag_out(_mm_xor_si128(bswap128(s), ej0), enc, tag, tag_len, out, len);
}

/* One instantiation per register count and direction of skew_msg(). */
#define SKEW_FN(n)                                                                                 \
	VAES_TARGET __attribute__((noinline)) static int skew_seal_##n(                            \
	        const secho_gcm_key *k, const uint8_t iv[12], const uint8_t *aad, size_t aad_len,  \
	        uint8_t *out, const uint8_t *in, size_t len, uint8_t *tag, size_t tag_len)         \
	{                                                                                          \
		return skew_msg(k, iv, aad, aad_len, out, in, len, tag, tag_len, 1, n);            \
	}                                                                                          \
	VAES_TARGET __attribute__((noinline)) static int skew_open_##n(                            \
	        const secho_gcm_key *k, const uint8_t iv[12], const uint8_t *aad, size_t aad_len,  \
	        uint8_t *out, const uint8_t *in, size_t len, uint8_t *tag, size_t tag_len)         \
	{                                                                                          \
		return skew_msg(k, iv, aad, aad_len, out, in, len, tag, tag_len, 0, n);            \
	}
SKEW_FN(0)
SKEW_FN(1)
SKEW_FN(2)
SKEW_FN(3)
SKEW_FN(4)
SKEW_FN(5)
SKEW_FN(6)
SKEW_FN(7)
SKEW_FN(8)
SKEW_FN(9)
SKEW_FN(10)
SKEW_FN(11)
SKEW_FN(12)
SKEW_FN(13)
SKEW_FN(14)
SKEW_FN(15)
SKEW_FN(16)
SKEW_FN(17)
SKEW_FN(18)
SKEW_FN(19)
SKEW_FN(20)
SKEW_FN(21)
SKEW_FN(22)
SKEW_FN(23)
SKEW_FN(24)

typedef int (*skew_fn)(const secho_gcm_key *k, const uint8_t iv[12], const uint8_t *aad,
                       size_t aad_len, uint8_t *out, const uint8_t *in, size_t len, uint8_t *tag,
                       size_t tag_len);
#define SKEW_ROW(n)                                                                                \
	{                                                                                          \
		skew_open_##n, skew_seal_##n                                                       \
	}
static const skew_fn skew_tab[NSKEW + 1][2] = {
        SKEW_ROW(0),  SKEW_ROW(1),  SKEW_ROW(2),  SKEW_ROW(3),  SKEW_ROW(4),
        SKEW_ROW(5),  SKEW_ROW(6),  SKEW_ROW(7),  SKEW_ROW(8),  SKEW_ROW(9),
        SKEW_ROW(10), SKEW_ROW(11), SKEW_ROW(12), SKEW_ROW(13), SKEW_ROW(14),
        SKEW_ROW(15), SKEW_ROW(16), SKEW_ROW(17), SKEW_ROW(18), SKEW_ROW(19),
        SKEW_ROW(20), SKEW_ROW(21), SKEW_ROW(22), SKEW_ROW(23), SKEW_ROW(24),
};

/*
 * One message: AES-256 messages of up to NSKEW registers take skew_msg() (one
 * instantiation per register count, so every branch on the count is resolved at compile
 * time), longer ones the groups of make_plan() (which then has at least two groups of 8),
 * other key sizes msg_any().
 */
VAES_INLINE int msg96(const secho_gcm_key *k, const uint8_t iv[12], const uint8_t *aad,
                      size_t aad_len, uint8_t *out, const uint8_t *in, size_t len, uint8_t *tag,
                      size_t tag_len, int enc)
{
	if (k->aes.rounds != NR256)
		return msg_any(k, iv, aad, aad_len, out, in, len, tag, tag_len, enc);
	if (len <= 64 * NSKEW)
		return skew_tab[(len + 63) / 64][enc != 0](k, iv, aad, aad_len, out, in, len, tag,
		                                           tag_len);
	struct plan p;
	make_plan(&p, aad_len, len);
#define M(P, F)                                                                                    \
	return enc ? seal_##P##_##F(k, iv, aad, aad_len, out, in, len, tag, tag_len, &p)           \
	           : open_##P##_##F(k, iv, aad, aad_len, out, in, len, tag, tag_len, &p)
	switch (p.P) {
	case 1:
		M(1, 2);
	case 2:
		M(2, 2);
	case 3:
		M(3, 2);
	case 4:
		M(4, 2);
	case 5:
		M(5, 2);
	case 6:
		M(6, 2);
	case 7:
		M(7, 2);
	default:
		M(8, 2);
	}
#undef M
}

VAES_TARGET static int split_seal96(const secho_gcm_key *k, const uint8_t iv[12],
                                    const uint8_t *aad, size_t aad_len, uint8_t *out,
                                    const uint8_t *in, size_t len, uint8_t *tag, size_t tag_len)
{
	return msg96(k, iv, aad, aad_len, out, in, len, tag, tag_len, 1);
}

VAES_TARGET static int split_open96(const secho_gcm_key *k, const uint8_t iv[12],
                                    const uint8_t *aad, size_t aad_len, uint8_t *out,
                                    const uint8_t *in, size_t len, const uint8_t *tag,
                                    size_t tag_len)
{
	return msg96(k, iv, aad, aad_len, out, in, len, (uint8_t *)(uintptr_t)tag, tag_len, 0);
}

/* ---- batch: the engine of gcm_vaes_batch.h on this layout ---- */

/*
 * A message goes into a lane when all its blocks fit the 64 powers of K and it is at most
 * LANE_MAX bytes long: longer ones are faster one by one through skew_msg() (measured, a
 * batch of 32, TSC cycles per message: 320 B 127 against 140 in lanes, 384 B 142 against
 * 162, 512 B 168 against 205; 256 B 121 in lanes either way).
 */
#define LANE_MAX 256

static int lane_ok(const secho_gcm_msg *m)
{
	return m->aad_len <= 16 * NP64 && m->len <= LANE_MAX &&
	       (m->aad_len + 15) / 16 + (m->len + 15) / 16 + 1 <= NP64;
}

#define GCM_BATCH_NP NP64
#include "crypto/gcm_vaes_batch.h"

VAES_TARGET static void split_seal_batch(const secho_gcm_key *k, secho_gcm_msg *msgs, size_t n)
{
	batch(k, msgs, n, 1);
}

VAES_TARGET static void split_open_batch(const secho_gcm_key *k, secho_gcm_msg *msgs, size_t n)
{
	batch(k, msgs, n, 0);
}

/* The counter mode of GCM has no key-layout dependency: gcm_vaes.c's. */
static void split_ctr32(const secho_aes_key *k, uint8_t ctr[16], uint8_t *out, const uint8_t *in,
                        size_t nblocks)
{
	secho_gcm_vaes_impl.ctr32(k, ctr, out, in, nblocks);
}

const struct secho_gcm_impl secho_gcm_vaes_split_impl = {
        .name = "vaes-split",
        .id = SECHO_IMPL_VAES_SPLIT,
        .aes = &secho_aes_vaes_split_impl,
        .hinit = split_hinit,
        .ghash = split_ghash,
        .ctr32 = split_ctr32,
        .enc_blocks = split_enc_blocks,
        .dec_blocks = split_dec_blocks,
        .seal96 = split_seal96,
        .open96 = split_open96,
        .seal_batch = split_seal_batch,
        .open_batch = split_open_batch,
};
