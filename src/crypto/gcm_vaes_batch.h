/*
 * src/crypto/gcm_vaes_batch.h - the batch engine of the VAES implementations, included by
 * gcm_vaes.c and gcm_vaes_split.c after they define GCM_BATCH_NP, the powers of K in
 * their key layout: 32 (gcm_vaes.c: K_32..K_1, the Karatsuba halves at HKOFF; kpow()) or
 * 64 (gcm_vaes_split.c: K_64..K_1, the halves computed when used: kpow64(), hk_of()).
 * The includer defines lane_ok(m) (the message's blocks fit those powers) and msg96()
 * (one message, for those that do not, and for groups too small to pay).
 *
 * Included, not shared through functions, so that each implementation's copy is compiled
 * from exactly its own text: gcm_vaes.c's is the code it always had.
 */
#ifndef GCM_BATCH_NP
#error "define GCM_BATCH_NP (32 or 64) before including gcm_vaes_batch.h"
#endif

/*
 * One message per 128-bit lane, lanes 4q..4q+3 in register q (Q = 1 or 2 registers, up to 8
 * messages). Lane l has A_l AAD blocks and C_l text blocks, total n_l = A_l + C_l + 1 <=
 * GCM_BATCH_NP.
 *
 * Text is right-aligned: at text step u (0..maxC-1) lane l handles its block
 * u - (maxC - C_l) (idle before), so every lane's last text block comes at the last step
 * and every active lane needs the same power, K_(maxC + 1 - u): one broadcast. The counter
 * of lane l at step u is 2 + u - (maxC - C_l); idle lanes compute an unused keystream.
 * AAD is left-aligned with per-lane powers K_(A_l + C_l + 1 - v) (AAD is usually one
 * block, so this costs one small gather per register); then the length block times K_1;
 * then one reduction per register gives four tags.
 *
 * Lanes past cnt are idle throughout (zero lengths, zero masks: no memory touched).
 */
struct lane {
	const uint8_t *aad, *in;
	uint8_t *out;
	size_t aad_len, len;
	unsigned na, nc;
};

/* o[j] = lane j of every input: the 4x4 transpose of 128-bit lanes (its own inverse). */
VAES_INLINE void transpose4(__m512i *o, const __m512i *in)
{
	__m512i t0 = _mm512_shuffle_i64x2(in[0], in[1], 0x44); /* a0 a1 b0 b1 */
	__m512i t1 = _mm512_shuffle_i64x2(in[0], in[1], 0xee); /* a2 a3 b2 b3 */
	__m512i t2 = _mm512_shuffle_i64x2(in[2], in[3], 0x44); /* c0 c1 d0 d1 */
	__m512i t3 = _mm512_shuffle_i64x2(in[2], in[3], 0xee); /* c2 c3 d2 d3 */
	o[0] = _mm512_shuffle_i64x2(t0, t2, 0x88);             /* a0 b0 c0 d0 */
	o[1] = _mm512_shuffle_i64x2(t0, t2, 0xdd);
	o[2] = _mm512_shuffle_i64x2(t1, t3, 0x88);
	o[3] = _mm512_shuffle_i64x2(t1, t3, 0xdd);
}

/* Load lane data: mask m (bytes) of p, or zero. */
#define LANE_LOAD4(dst, m, p)                                                                      \
	do {                                                                                       \
		__m512i z_ = _mm512_castsi128_si512(_mm_maskz_loadu_epi8((m)[0], (p)[0]));         \
		z_ = _mm512_inserti32x4(z_, _mm_maskz_loadu_epi8((m)[1], (p)[1]), 1);              \
		z_ = _mm512_inserti32x4(z_, _mm_maskz_loadu_epi8((m)[2], (p)[2]), 2);              \
		z_ = _mm512_inserti32x4(z_, _mm_maskz_loadu_epi8((m)[3], (p)[3]), 3);              \
		(dst) = z_;                                                                        \
	} while (0)

#define LANE_STORE4(p, m, v)                                                                       \
	do {                                                                                       \
		_mm_mask_storeu_epi8((p)[0], (m)[0], _mm512_castsi512_si128(v));                   \
		_mm_mask_storeu_epi8((p)[1], (m)[1], _mm512_extracti32x4_epi32((v), 1));           \
		_mm_mask_storeu_epi8((p)[2], (m)[2], _mm512_extracti32x4_epi32((v), 2));           \
		_mm_mask_storeu_epi8((p)[3], (m)[3], _mm512_extracti32x4_epi32((v), 3));           \
	} while (0)

/* Target of the idle lanes' (fully masked) loads and stores: see batch_group(). Never
 * written (every store to it has an all-zero mask), so sharing it between threads is safe. */
static alignas(64) uint8_t idle_lane[32 * GCM_BATCH_NP];

VAES_INLINE void batch_group(const secho_gcm_key *k, const struct vaes_rk *r,
                             secho_gcm_msg *const *msgs, unsigned cnt, const int Q, const int enc,
                             const unsigned nr)
{
	const unsigned rounds = nr ? nr : r->rounds; /* nr: the same, as a constant */
	const __m512i bs = vaes_bswap_mask();
	struct lane ln[8];
	alignas(64) uint8_t j0b[8][16];
	alignas(64) uint32_t dlt[8][4];
	alignas(64) uint64_t lb[8][2];
	alignas(64) uint8_t tg[8][16];
	unsigned maxa = 0, maxc = 0;

	/* Every lane is written (idle ones as zero), so no memset is needed. */
	for (int l = 0; l < 8; l++) {
		struct lane *x = &ln[l];
		if ((unsigned)l < cnt) {
			const secho_gcm_msg *m = msgs[l];
			x->aad = m->aad;
			x->in = m->in;
			x->out = m->out;
			x->aad_len = m->aad_len;
			x->len = m->len;
			memcpy(j0b[l], m->iv, 12);
			j0b[l][12] = j0b[l][13] = j0b[l][14] = 0;
			j0b[l][15] = 1;
		} else {
			/* Idle lanes point into a scratch area, never at NULL: their loads and
			 * stores are fully masked off, but a masked access to an unmapped
			 * address still costs a fault-suppression assist of about a thousand
			 * cycles here (measured: a batch of one took 1,400 cycles, not 100).
			 * The text window reaches up to GCM_BATCH_NP - 1 blocks before the
			 * pointer and one 64-byte step after it. */
			x->aad = x->in = idle_lane + 16 * GCM_BATCH_NP;
			x->out = idle_lane + 16 * GCM_BATCH_NP;
			x->aad_len = x->len = 0;
			memset(j0b[l], 0, 16);
		}
		x->na = (unsigned)((x->aad_len + 15) / 16);
		x->nc = (unsigned)((x->len + 15) / 16);
		maxa = x->na > maxa ? x->na : maxa;
		maxc = x->nc > maxc ? x->nc : maxc;
		lb[l][0] = (uint64_t)x->len * 8;
		lb[l][1] = (uint64_t)x->aad_len * 8;
	}
	for (int l = 0; l < 8; l++) {
		dlt[l][0] = ln[l].nc - maxc; /* J0 + this + (u + 1) = 2 + u - (maxc - nc) */
		dlt[l][1] = dlt[l][2] = dlt[l][3] = 0;
	}

	__m512i j0[2], ctr[2], ej[2];
	struct gacc acc[2];
#pragma GCC unroll 4
	for (int q = 0; q < Q; q++) {
		j0[q] = _mm512_load_si512(j0b[4 * q]);
		ctr[q] = _mm512_add_epi32(_mm512_shuffle_epi8(j0[q], bs),
		                          _mm512_load_si512(dlt[4 * q]));
		ej[q] = j0[q];
		gacc_zero(&acc[q]);
	}
	/* E(J0) goes through the rounds with the first text step's counters (one AES chain
	 * for both instead of two one after the other); alone when there is no text. */
	if (!maxc)
		vaes_enc_nr(ej, Q, r, rounds);

	/* AAD, left-aligned, per-lane powers. */
	for (unsigned v = 0; v < maxa; v++) {
#pragma GCC unroll 4
		for (int q = 0; q < Q; q++) {
			__mmask16 m[4];
			const uint8_t *p[4], *h[4];
			for (int i = 0; i < 4; i++) {
				const struct lane *x = &ln[4 * q + i];
				int act = v < x->na;
				m[i] = act ? bytemask16(x->aad_len - 16 * (size_t)v) : 0;
				p[i] = act ? x->aad + 16 * (size_t)v : k->htab;
#if GCM_BATCH_NP == 32
				h[i] = kpow(k, act ? x->na + x->nc + 1 - v : 1);
#else
				h[i] = kpow64(k, act ? x->na + x->nc + 1 - v : 1);
#endif
			}
			__m512i xa, hp, hk;
			LANE_LOAD4(xa, m, p);
			if (h[0] == h[1] && h[0] == h[2] && h[0] == h[3]) {
				/* the usual case: same lengths, one power for all lanes */
				hp = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)h[0]));
#if GCM_BATCH_NP == 32
				hk = _mm512_broadcast_i32x4(
				        _mm_loadu_si128((const __m128i *)(h[0] + HKOFF)));
#else
				hk = hk_of(hp);
#endif
			} else {
				__mmask16 all[4] = {0xffff, 0xffff, 0xffff, 0xffff};
				LANE_LOAD4(hp, all, h);
#if GCM_BATCH_NP == 32
				for (int i = 0; i < 4; i++)
					h[i] += HKOFF;
				LANE_LOAD4(hk, all, h);
#else
				hk = hk_of(hp);
#endif
			}
			gacc_mul(&acc[q], _mm512_shuffle_epi8(xa, bs), hp, hk);
		}
	}

	/*
	 * Text, right-aligned, broadcast powers, four steps at a time: each lane's 64-byte
	 * window (blocks u0 - off .. u0 + 3 - off of its message, masked to the bytes that
	 * exist) is one masked load; a 4x4 transpose of 128-bit lanes turns four such
	 * windows into four step registers (lane = message) and back for the stores.
	 * Window addresses may precede the buffer: those bytes are masked off, and masked
	 * AVX-512 loads and stores neither touch nor fault on masked-off bytes.
	 */
	const __m512i one = _mm512_set_epi32(0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1);
	for (unsigned u0 = 0; u0 < maxc; u0 += 4) {
		__m512i hp[4], hk[4], kb[10];
#pragma GCC unroll 4
		for (int st = 0; st < 4; st++) {
			long pi = (long)maxc + 1 - (long)u0 - st; /* K index of step u0 + st */
#if GCM_BATCH_NP == 32
			const uint8_t *pp = kpow(k, pi < 1 ? 1 : (size_t)pi);
#else
			const uint8_t *pp = kpow64(k, pi < 1 ? 1 : (size_t)pi);
#endif
			hp[st] = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)pp));
#if GCM_BATCH_NP == 32
			hk[st] = _mm512_broadcast_i32x4(
			        _mm_loadu_si128((const __m128i *)(pp + HKOFF)));
#else
			hk[st] = hk_of(hp[st]);
#endif
		}
#pragma GCC unroll 16
		for (int j = 0; j < 4 * Q; j++) {
			ctr[j / 4] = _mm512_add_epi32(ctr[j / 4], one);
			kb[j] = _mm512_shuffle_epi8(ctr[j / 4], bs);
		}
		if (u0 == 0) {
#pragma GCC unroll 2
			for (int q = 0; q < Q; q++)
				kb[4 * Q + q] = ej[q];
			vaes_enc_nr(kb, 5 * Q, r, rounds);
#pragma GCC unroll 2
			for (int q = 0; q < Q; q++)
				ej[q] = kb[4 * Q + q];
		} else {
			vaes_enc_nr(kb, 4 * Q, r, rounds);
		}
#pragma GCC unroll 4
		for (int q = 0; q < Q; q++) {
			__mmask64 m64[4], ms[4];
			uintptr_t pin[4], pout[4];
			__m512i w[4], xt[4], y[4];
#pragma GCC unroll 4
			for (int i = 0; i < 4; i++) {
				const struct lane *x = &ln[4 * q + i];
				long b =
				        (long)u0 - (long)(maxc - x->nc); /* first block in window */
				long lo = b < 0 ? -16 * b : 0, hi = (long)x->len - 16 * b;
				lo = lo > 64 ? 64 : lo;
				hi = hi < lo ? lo : hi;
				m64[i] = bytemask64((size_t)hi) & ~bytemask64((size_t)lo);
				pin[i] = (uintptr_t)x->in + (uintptr_t)(16 * b);
				pout[i] = (uintptr_t)x->out + (uintptr_t)(16 * b);
				w[i] = _mm512_maskz_loadu_epi8(m64[i], (const void *)pin[i]);
			}
			{
				/* Step masks: the 4x4 transpose of the 16-bit fields of m64[]. */
				const __m256i idx = _mm256_set_epi16(15, 11, 7, 3, 14, 10, 6, 2, 13,
				                                     9, 5, 1, 12, 8, 4, 0);
				__m256i mv =
				        _mm256_set_epi64x((long long)m64[3], (long long)m64[2],
				                          (long long)m64[1], (long long)m64[0]);
				mv = _mm256_permutexvar_epi16(idx, mv);
				__m128i lo = _mm256_castsi256_si128(mv);
				__m128i hi = _mm256_extracti128_si256(mv, 1);
				ms[0] = (__mmask64)_mm_cvtsi128_si64(lo);
				ms[1] = (__mmask64)_mm_extract_epi64(lo, 1);
				ms[2] = (__mmask64)_mm_cvtsi128_si64(hi);
				ms[3] = (__mmask64)_mm_extract_epi64(hi, 1);
			}
			transpose4(xt, w);
#pragma GCC unroll 4
			for (int st = 0; st < 4; st++)
				y[st] = _mm512_xor_si512(kb[4 * q + st], xt[st]);
			transpose4(w, y);
#pragma GCC unroll 4
			for (int i = 0; i < 4; i++)
				_mm512_mask_storeu_epi8((void *)pout[i], m64[i], w[i]);
#pragma GCC unroll 4
			for (int st = 0; st < 4; st++) {
				__m512i g = enc ? _mm512_maskz_mov_epi8(ms[st], y[st]) : xt[st];
				gacc_mul(&acc[q], _mm512_shuffle_epi8(g, bs), hp[st], hk[st]);
			}
		}
	}
#if GCM_BATCH_NP == 32
	const __m512i k1 = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)kpow(k, 1)));
	const __m512i k1k =
	        _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(kpow(k, 1) + HKOFF)));
#else
	const __m512i k1 = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)kpow64(k, 1)));
	const __m512i k1k = hk_of(k1);
#endif
#pragma GCC unroll 4
	for (int q = 0; q < Q; q++) {
		gacc_mul(&acc[q], _mm512_load_si512(lb[4 * q]), k1, k1k);
		__m512i s = gacc_final4(&acc[q]);
		_mm512_store_si512(tg[4 * q], _mm512_xor_si512(_mm512_shuffle_epi8(s, bs), ej[q]));
	}

	for (unsigned l = 0; l < cnt; l++) {
		secho_gcm_msg *m = msgs[l];
		__m128i t = _mm_load_si128((const __m128i *)tg[l]);
		if (enc) {
			_mm_storeu_si128((__m128i *)m->tag, t);
			m->status = SECHO_OK;
			continue;
		}
		__m128i d = _mm_xor_si128(t, _mm_loadu_si128((const __m128i *)m->tag));
		if (!_mm_testz_si128(d, d)) { /* all 16 bytes compared, then one branch */
			secho_wipe(m->out, m->len);
			m->status = SECHO_EAUTH;
		} else {
			m->status = SECHO_OK;
		}
	}
	/* Seal's tags are output anyway; open's expected tags must not linger. */
	if (!enc)
		secho_wipe(tg, sizeof(tg));
}

VAES_INLINE void batch(const secho_gcm_key *k, secho_gcm_msg *msgs, size_t n, const int enc)
{
	secho_gcm_msg *sel[SECHO_GCM_BATCH_MAX];
	unsigned ns = 0;
	for (size_t i = 0; i < n; i++) {
		secho_gcm_msg *m = &msgs[i];
		/* arguments were validated by gcm.c (inner.h: the batch entries' contract) */
		if (lane_ok(m)) {
			sel[ns++] = m;
		} else {
			m->status = msg96(k, m->iv, m->aad, m->aad_len, m->out, m->in, m->len,
			                  m->tag, 16, enc);
		}
	}
	if (!ns)
		return;
	struct vaes_rk r;
	vaes_load_rk(&r, &k->aes, 0);
	/* Groups of eight (two registers per step): measured faster here than four
	 * registers, which spill (16 keystream + 12 accumulator registers do not fit in 32). */
	for (unsigned g = 0; g < ns; g += 8) {
		unsigned cnt = ns - g < 8 ? ns - g : 8;
		if (cnt <= 2) {
			/* A group's fixed cost (lane set-up, transposes, one AES chain and one
			 * reduction for all eight lanes) outweighs its gain below three messages:
			 * measured 231 against 105 cycles for one 64-byte message, 116 against
			 * 94 per message for two, 58 against 63 for four. */
			for (unsigned i = g; i < ns; i++) {
				secho_gcm_msg *m = sel[i];
				m->status = msg96(k, m->iv, m->aad, m->aad_len, m->out, m->in,
				                  m->len, m->tag, 16, enc);
			}
			break;
		}
		if (r.rounds == 14) { /* AES-256: rounds unrolled */
			if (cnt <= 4)
				batch_group(k, &r, sel + g, cnt, 1, enc, 14);
			else
				batch_group(k, &r, sel + g, cnt, 2, enc, 14);
		} else {
			if (cnt <= 4)
				batch_group(k, &r, sel + g, cnt, 1, enc, 0);
			else
				batch_group(k, &r, sel + g, cnt, 2, enc, 0);
		}
	}
}
