/*
 * src/crypto/aes_ct64.c - portable constant-time AES (FIPS-197), bitsliced on 64-bit words.
 *
 * Four blocks are processed together. Their 4 x 16 bytes are spread over eight uint64_t
 * "slices": slice q[b] holds bit b (b = 0 is the least significant bit of each byte) of
 * all 64 bytes. Inside a slice the bit position of state byte (row r, column c) of block
 * n (n = 0..3) is
 *
 *	pos = 16 * r + 4 * c + n
 *
 * so each AES row is one 16-bit lane. With this layout:
 *  - SubBytes is a Boolean circuit evaluated on the eight slices at once: the
 *    Boyar-Peralta depth-16 circuit (113 XOR/XNOR/AND gates) for the forward S-box; the
 *    inverse S-box is the same circuit between two copies of the inverse affine map of
 *    FIPS-197 5.3.2 (InvSbox = InvAff o Sbox o InvAff, since Sbox = Aff o Inv);
 *  - ShiftRows rotates row lane r right by 4r bits (one column = 4 bits);
 *  - MixColumns needs "the byte one row down", which is a rotation of the whole slice by
 *    16 bits; multiplication by x in GF(2^8) is a fixed XOR pattern across slices;
 *  - AddRoundKey XORs eight precomputed words (the round key replicated for the four
 *    blocks and bitsliced), stored in k->u.ct64[8 * round + b].
 *
 * Packing bytes into slices is a fixed permutation of bit positions done with delta swaps
 * (shifts, masks, XOR) whose positions are constants.
 *
 * Why this is constant-time: no memory access has an address that depends on key or data
 * (there are no lookup tables at all), and no branch or loop bound depends on them; the
 * only data-dependent operations are AND, OR, XOR, NOT, shifts and rotations by constant
 * amounts. Loop counts depend only on public values (number of rounds, number of blocks).
 * The key schedule uses the same bitsliced S-box for SubWord. Temporaries that held key or
 * state material are wiped with secho_wipe() before return.
 */
#include "crypto/inner.h"

/* ---- packing: 4 blocks (64 bytes) <-> 8 slices ---- */

/* Spread the 4 bytes of a 32-bit value to the even bytes of a 64-bit value. */
static inline uint64_t spread_even_bytes(uint32_t x)
{
	uint64_t v = x;
	v = (v | (v << 16)) & UINT64_C(0x0000FFFF0000FFFF);
	v = (v | (v << 8)) & UINT64_C(0x00FF00FF00FF00FF);
	return v;
}

/* Inverse of spread_even_bytes: gather the even bytes of v. */
static inline uint32_t gather_even_bytes(uint64_t v)
{
	v &= UINT64_C(0x00FF00FF00FF00FF);
	v = (v | (v >> 8)) & UINT64_C(0x0000FFFF0000FFFF);
	v = (v | (v >> 16)) & UINT64_C(0x00000000FFFFFFFF);
	return (uint32_t)v;
}

static inline uint32_t load_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
	       ((uint32_t)p[3] << 24);
}

static inline void store_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/*
 * View the 512 bits of w[0..7] as indexed by 9 bits: word number (3) and bit position (6).
 * For k = 0, 1, 2, exchange index bit k of the word number with index bit k of the bit
 * position: bit p of word a (a with bit k clear, p with bit k set) trades places with bit
 * p - 2^k of word a + 2^k. Each step is a delta swap with a constant shift and mask; the
 * whole is an involution, so it serves both pack and unpack.
 */
static inline void swap_index_bits(uint64_t w[8])
{
	static const uint64_t m[3] = {UINT64_C(0x5555555555555555), UINT64_C(0x3333333333333333),
	                              UINT64_C(0x0F0F0F0F0F0F0F0F)};
	for (unsigned k = 0; k < 3; k++) {
		unsigned s = 1u << k;
		for (unsigned a = 0; a < 8; a++) {
			if (a & s)
				continue;
			unsigned b = a | s;
			uint64_t t = ((w[a] >> s) ^ w[b]) & m[k];
			w[b] ^= t;
			w[a] ^= t << s;
		}
	}
}

/*
 * Load up to four blocks (missing ones are zero) into slices.
 *
 * Before the index swap, word number (3 bits) = [c0 n1 n0] (c0 = low bit of the column,
 * n = block) and bit position (6 bits) = [r1 r0 c1 | b2 b1 b0] (byte lane 2r + c1 of the
 * word holds the byte of row r, column 2 c1 + c0). Swapping word-number bit k with
 * position bit k (k = 0..2) yields word number [b2 b1 b0] and position [r1 r0 c1 c0 n1 n0]
 * = 16 r + 4 c + n, the layout described at the top of the file.
 */
static void pack(uint64_t q[8], const uint8_t *in, size_t nblocks)
{
	uint8_t buf[64];
	const uint8_t *src = in;
	if (nblocks < 4) { /* public count: pad the missing blocks with zeros */
		memset(buf, 0, sizeof(buf));
		memcpy(buf, in, nblocks * 16);
		src = buf;
	}
	for (unsigned c0 = 0; c0 < 2; c0++) {
		for (unsigned n = 0; n < 4; n++) {
			const uint8_t *blk = src + 16 * n;
			uint32_t col_lo = load_le32(blk + 4 * c0);       /* column c0 */
			uint32_t col_hi = load_le32(blk + 4 * (2 + c0)); /* column 2 + c0 */
			q[4 * c0 + n] =
			        spread_even_bytes(col_lo) | (spread_even_bytes(col_hi) << 8);
		}
	}
	swap_index_bits(q);
	if (src == buf)
		secho_wipe(buf, sizeof(buf));
}

/* Inverse of pack: write the first nblocks (1..4) blocks. Destroys q. */
static void unpack(uint8_t *out, uint64_t q[8], size_t nblocks)
{
	uint8_t buf[64];
	uint8_t *dst = nblocks < 4 ? buf : out;
	swap_index_bits(q);
	for (unsigned c0 = 0; c0 < 2; c0++) {
		for (unsigned n = 0; n < 4; n++) {
			uint8_t *blk = dst + 16 * n;
			uint64_t v = q[4 * c0 + n];
			store_le32(blk + 4 * c0, gather_even_bytes(v));
			store_le32(blk + 4 * (2 + c0), gather_even_bytes(v >> 8));
		}
	}
	if (dst == buf) {
		memcpy(out, buf, nblocks * 16);
		secho_wipe(buf, sizeof(buf));
	}
}

/* ---- SubBytes ---- */

/*
 * Forward S-box on eight slices: the Boyar-Peralta circuit ("A depth-16 circuit for the
 * AES S-box", 2011). Its inputs U0..U7 are the byte bits from the most significant down
 * (U0 = bit 7 = q[7]); its outputs S0..S7 likewise (S0 = bit 7). "#" in the paper is
 * XNOR, written ~(a ^ b) here.
 */
static void sbox(uint64_t q[8])
{
	uint64_t U0 = q[7], U1 = q[6], U2 = q[5], U3 = q[4];
	uint64_t U4 = q[3], U5 = q[2], U6 = q[1], U7 = q[0];

	/* Top linear layer. */
	uint64_t T1 = U0 ^ U3;
	uint64_t T2 = U0 ^ U5;
	uint64_t T3 = U0 ^ U6;
	uint64_t T4 = U3 ^ U5;
	uint64_t T5 = U4 ^ U6;
	uint64_t T6 = T1 ^ T5;
	uint64_t T7 = U1 ^ U2;
	uint64_t T8 = U7 ^ T6;
	uint64_t T9 = U7 ^ T7;
	uint64_t T10 = T6 ^ T7;
	uint64_t T11 = U1 ^ U5;
	uint64_t T12 = U2 ^ U5;
	uint64_t T13 = T3 ^ T4;
	uint64_t T14 = T6 ^ T11;
	uint64_t T15 = T5 ^ T11;
	uint64_t T16 = T5 ^ T12;
	uint64_t T17 = T9 ^ T16;
	uint64_t T18 = U3 ^ U7;
	uint64_t T19 = T7 ^ T18;
	uint64_t T20 = T1 ^ T19;
	uint64_t T21 = U6 ^ U7;
	uint64_t T22 = T7 ^ T21;
	uint64_t T23 = T2 ^ T22;
	uint64_t T24 = T2 ^ T10;
	uint64_t T25 = T20 ^ T17;
	uint64_t T26 = T3 ^ T16;
	uint64_t T27 = T1 ^ T12;

	/* Non-linear middle: inversion in GF(2^8) via the tower field. */
	uint64_t M1 = T13 & T6;
	uint64_t M2 = T23 & T8;
	uint64_t M3 = T14 ^ M1;
	uint64_t M4 = T19 & U7;
	uint64_t M5 = M4 ^ M1;
	uint64_t M6 = T3 & T16;
	uint64_t M7 = T22 & T9;
	uint64_t M8 = T26 ^ M6;
	uint64_t M9 = T20 & T17;
	uint64_t M10 = M9 ^ M6;
	uint64_t M11 = T1 & T15;
	uint64_t M12 = T4 & T27;
	uint64_t M13 = M12 ^ M11;
	uint64_t M14 = T2 & T10;
	uint64_t M15 = M14 ^ M11;
	uint64_t M16 = M3 ^ M2;
	uint64_t M17 = M5 ^ T24;
	uint64_t M18 = M8 ^ M7;
	uint64_t M19 = M10 ^ M15;
	uint64_t M20 = M16 ^ M13;
	uint64_t M21 = M17 ^ M15;
	uint64_t M22 = M18 ^ M13;
	uint64_t M23 = M19 ^ T25;
	uint64_t M24 = M22 ^ M23;
	uint64_t M25 = M22 & M20;
	uint64_t M26 = M21 ^ M25;
	uint64_t M27 = M20 ^ M21;
	uint64_t M28 = M23 ^ M25;
	uint64_t M29 = M28 & M27;
	uint64_t M30 = M26 & M24;
	uint64_t M31 = M20 & M23;
	uint64_t M32 = M27 & M31;
	uint64_t M33 = M27 ^ M25;
	uint64_t M34 = M21 & M22;
	uint64_t M35 = M24 & M34;
	uint64_t M36 = M24 ^ M25;
	uint64_t M37 = M21 ^ M29;
	uint64_t M38 = M32 ^ M33;
	uint64_t M39 = M23 ^ M30;
	uint64_t M40 = M35 ^ M36;
	uint64_t M41 = M38 ^ M40;
	uint64_t M42 = M37 ^ M39;
	uint64_t M43 = M37 ^ M38;
	uint64_t M44 = M39 ^ M40;
	uint64_t M45 = M42 ^ M41;
	uint64_t M46 = M44 & T6;
	uint64_t M47 = M40 & T8;
	uint64_t M48 = M39 & U7;
	uint64_t M49 = M43 & T16;
	uint64_t M50 = M38 & T9;
	uint64_t M51 = M37 & T17;
	uint64_t M52 = M42 & T15;
	uint64_t M53 = M45 & T27;
	uint64_t M54 = M41 & T10;
	uint64_t M55 = M44 & T13;
	uint64_t M56 = M40 & T23;
	uint64_t M57 = M39 & T19;
	uint64_t M58 = M43 & T3;
	uint64_t M59 = M38 & T22;
	uint64_t M60 = M37 & T20;
	uint64_t M61 = M42 & T1;
	uint64_t M62 = M45 & T4;
	uint64_t M63 = M41 & T2;

	/* Bottom linear layer (includes the affine map and its constant 0x63). */
	uint64_t L0 = M61 ^ M62;
	uint64_t L1 = M50 ^ M56;
	uint64_t L2 = M46 ^ M48;
	uint64_t L3 = M47 ^ M55;
	uint64_t L4 = M54 ^ M58;
	uint64_t L5 = M49 ^ M61;
	uint64_t L6 = M62 ^ L5;
	uint64_t L7 = M46 ^ L3;
	uint64_t L8 = M51 ^ M59;
	uint64_t L9 = M52 ^ M53;
	uint64_t L10 = M53 ^ L4;
	uint64_t L11 = M60 ^ L2;
	uint64_t L12 = M48 ^ M51;
	uint64_t L13 = M50 ^ L0;
	uint64_t L14 = M52 ^ M61;
	uint64_t L15 = M55 ^ L1;
	uint64_t L16 = M56 ^ L0;
	uint64_t L17 = M57 ^ L1;
	uint64_t L18 = M58 ^ L8;
	uint64_t L19 = M63 ^ L4;
	uint64_t L20 = L0 ^ L1;
	uint64_t L21 = L1 ^ L7;
	uint64_t L22 = L3 ^ L12;
	uint64_t L23 = L18 ^ L2;
	uint64_t L24 = L15 ^ L9;
	uint64_t L25 = L6 ^ L10;
	uint64_t L26 = L7 ^ L9;
	uint64_t L27 = L8 ^ L10;
	uint64_t L28 = L11 ^ L14;
	uint64_t L29 = L11 ^ L17;

	q[7] = L6 ^ L24;     /* S0 */
	q[6] = ~(L16 ^ L26); /* S1 */
	q[5] = ~(L19 ^ L28); /* S2 */
	q[4] = L6 ^ L21;     /* S3 */
	q[3] = L20 ^ L22;    /* S4 */
	q[2] = L25 ^ L29;    /* S5 */
	q[1] = ~(L13 ^ L27); /* S6 */
	q[0] = ~(L6 ^ L23);  /* S7 */
}

/*
 * Inverse affine map of FIPS-197 5.3.2 on slices:
 *   b'_i = b_(i+2) ^ b_(i+5) ^ b_(i+7) ^ d_i  (indices mod 8), d = 0x05.
 */
static void inv_affine(uint64_t q[8])
{
	uint64_t q0 = q[0], q1 = q[1], q2 = q[2], q3 = q[3];
	uint64_t q4 = q[4], q5 = q[5], q6 = q[6], q7 = q[7];
	q[0] = ~(q2 ^ q5 ^ q7);
	q[1] = q3 ^ q6 ^ q0;
	q[2] = ~(q4 ^ q7 ^ q1);
	q[3] = q5 ^ q0 ^ q2;
	q[4] = q6 ^ q1 ^ q3;
	q[5] = q7 ^ q2 ^ q4;
	q[6] = q0 ^ q3 ^ q5;
	q[7] = q1 ^ q4 ^ q6;
}

/* InvSbox = InvAff o Sbox o InvAff (Sbox = Aff o Inv, and Inv is an involution). */
static void inv_sbox(uint64_t q[8])
{
	inv_affine(q);
	sbox(q);
	inv_affine(q);
}

/* ---- ShiftRows, MixColumns ---- */

/* Row r (16-bit lane r) rotated right by 4r bits: new column c = old column c + r. */
static inline uint64_t shift_rows1(uint64_t x)
{
	return (x & UINT64_C(0x000000000000FFFF)) | ((x & UINT64_C(0x00000000FFF00000)) >> 4) |
	       ((x & UINT64_C(0x00000000000F0000)) << 12) |
	       ((x & UINT64_C(0x0000FF0000000000)) >> 8) |
	       ((x & UINT64_C(0x000000FF00000000)) << 8) |
	       ((x & UINT64_C(0xF000000000000000)) >> 12) |
	       ((x & UINT64_C(0x0FFF000000000000)) << 4);
}

/* Inverse: row r rotated left by 4r bits. */
static inline uint64_t inv_shift_rows1(uint64_t x)
{
	return (x & UINT64_C(0x000000000000FFFF)) | ((x & UINT64_C(0x000000000FFF0000)) << 4) |
	       ((x & UINT64_C(0x00000000F0000000)) >> 12) |
	       ((x & UINT64_C(0x0000FF0000000000)) >> 8) |
	       ((x & UINT64_C(0x000000FF00000000)) << 8) |
	       ((x & UINT64_C(0x000F000000000000)) << 12) |
	       ((x & UINT64_C(0xFFF0000000000000)) >> 4);
}

static inline void shift_rows(uint64_t q[8])
{
	for (unsigned i = 0; i < 8; i++)
		q[i] = shift_rows1(q[i]);
}

static inline void inv_shift_rows(uint64_t q[8])
{
	for (unsigned i = 0; i < 8; i++)
		q[i] = inv_shift_rows1(q[i]);
}

static inline uint64_t rotr64(uint64_t x, unsigned n)
{
	return (x >> n) | (x << (64 - n));
}

/* d = x * t in GF(2^8) (xtime, modulus x^8 + x^4 + x^3 + x + 1), slice-wise. d != t. */
static inline void xtime(uint64_t d[8], const uint64_t t[8])
{
	d[0] = t[7];
	d[1] = t[0] ^ t[7];
	d[2] = t[1];
	d[3] = t[2] ^ t[7];
	d[4] = t[3] ^ t[7];
	d[5] = t[4];
	d[6] = t[5];
	d[7] = t[6];
}

/*
 * MixColumns: out_r = 2 a_r ^ 3 a_(r+1) ^ a_(r+2) ^ a_(r+3) (rows mod 4). With
 * r1 = rotr(q, 16) (a_(r+1) at row r) and t = q ^ r1:
 *   out = 2 t ^ r1 ^ rotr(t, 32).
 */
static void mix_columns(uint64_t q[8])
{
	uint64_t r1[8], t[8], d[8];
	for (unsigned i = 0; i < 8; i++) {
		r1[i] = rotr64(q[i], 16);
		t[i] = q[i] ^ r1[i];
	}
	xtime(d, t);
	for (unsigned i = 0; i < 8; i++)
		q[i] = d[i] ^ r1[i] ^ rotr64(t[i], 32);
}

/*
 * InvMixColumns = MixColumns o P, where P adds 4 (a_r ^ a_(r+2)) to each row a_r
 * (the factorisation of the inverse matrix {0e 0b 0d 09} = {02 03 01 01} x {05 00 04 00}).
 */
static void inv_mix_columns(uint64_t q[8])
{
	uint64_t t[8], d[8], e[8];
	for (unsigned i = 0; i < 8; i++)
		t[i] = q[i] ^ rotr64(q[i], 32);
	xtime(d, t);
	xtime(e, d);
	for (unsigned i = 0; i < 8; i++)
		q[i] ^= e[i];
	mix_columns(q);
}

static inline void add_round_key(uint64_t q[8], const uint64_t *rk)
{
	for (unsigned i = 0; i < 8; i++)
		q[i] ^= rk[i];
}

/* ---- the cipher on four packed blocks ---- */

static void encrypt4(const secho_aes_key *k, uint64_t q[8])
{
	const uint64_t *rk = k->u.ct64;
	unsigned nr = k->rounds;
	add_round_key(q, rk);
	for (unsigned r = 1; r < nr; r++) {
		sbox(q);
		shift_rows(q);
		mix_columns(q);
		add_round_key(q, rk + 8 * r);
	}
	sbox(q);
	shift_rows(q);
	add_round_key(q, rk + 8 * nr);
}

/* FIPS-197 5.3 inverse cipher, with the same round keys in reverse order. */
static void decrypt4(const secho_aes_key *k, uint64_t q[8])
{
	const uint64_t *rk = k->u.ct64;
	unsigned nr = k->rounds;
	add_round_key(q, rk + 8 * nr);
	for (unsigned r = nr - 1; r > 0; r--) {
		inv_shift_rows(q);
		inv_sbox(q);
		add_round_key(q, rk + 8 * r);
		inv_mix_columns(q);
	}
	inv_shift_rows(q);
	inv_sbox(q);
	add_round_key(q, rk);
}

/* ---- key schedule (FIPS-197 5.2) ---- */

/* SubWord on four words at once (one word per block column 0); w[i] little-endian bytes. */
static void sub_word(uint8_t w[4])
{
	uint8_t blk[16];
	uint64_t q[8];
	memset(blk, 0, sizeof(blk));
	memcpy(blk, w, 4);
	pack(q, blk, 1);
	sbox(q);
	unpack(blk, q, 1);
	memcpy(w, blk, 4);
	secho_wipe(blk, sizeof(blk));
	secho_wipe(q, sizeof(q));
}

/*
 * Contract: key_len is 16, 24 or 32, k->rounds matches. Expands the key as in FIPS-197
 * 5.2 (bytes), then stores each round key replicated for the four block positions and
 * bitsliced in k->u.ct64[8 r .. 8 r + 7]. The same round keys serve decryption.
 */
static void ct64_keysched(secho_aes_key *k, const uint8_t *key, size_t key_len)
{
	uint8_t w[4 * 4 * (SECHO_AES_MAX_ROUNDS + 1)];
	uint8_t tmp[4];
	unsigned nk = (unsigned)(key_len / 4);
	unsigned total = 4 * (k->rounds + 1); /* words */
	uint8_t rcon = 1;

	memcpy(w, key, key_len);
	for (unsigned i = nk; i < total; i++) {
		memcpy(tmp, w + 4 * (i - 1), 4);
		if (i % nk == 0) {
			/* RotWord, SubWord, Rcon (i is public). */
			uint8_t t0 = tmp[0];
			tmp[0] = tmp[1];
			tmp[1] = tmp[2];
			tmp[2] = tmp[3];
			tmp[3] = t0;
			sub_word(tmp);
			tmp[0] ^= rcon;
			rcon = (uint8_t)((rcon << 1) ^ ((rcon >> 7) * 0x1b));
		} else if (nk > 6 && i % nk == 4) {
			sub_word(tmp);
		}
		for (unsigned j = 0; j < 4; j++)
			w[4 * i + j] = (uint8_t)(w[4 * (i - nk) + j] ^ tmp[j]);
	}

	for (unsigned r = 0; r <= k->rounds; r++) {
		uint8_t blk4[64];
		for (unsigned n = 0; n < 4; n++)
			memcpy(blk4 + 16 * n, w + 16 * r, 16);
		pack(k->u.ct64 + 8 * r, blk4, 4);
		secho_wipe(blk4, sizeof(blk4));
	}
	secho_wipe(w, sizeof(w));
	secho_wipe(tmp, sizeof(tmp));
}

/* ---- table entries ---- */

static void ct64_ecb_enc(const secho_aes_key *k, uint8_t *out, const uint8_t *in, size_t nblocks)
{
	uint64_t q[8];
	while (nblocks > 0) {
		size_t n = nblocks < 4 ? nblocks : 4;
		pack(q, in, n);
		encrypt4(k, q);
		unpack(out, q, n);
		in += 16 * n;
		out += 16 * n;
		nblocks -= n;
	}
	secho_wipe(q, sizeof(q));
}

static void ct64_ecb_dec(const secho_aes_key *k, uint8_t *out, const uint8_t *in, size_t nblocks)
{
	uint64_t q[8];
	while (nblocks > 0) {
		size_t n = nblocks < 4 ? nblocks : 4;
		pack(q, in, n);
		decrypt4(k, q);
		unpack(out, q, n);
		in += 16 * n;
		out += 16 * n;
		nblocks -= n;
	}
	secho_wipe(q, sizeof(q));
}

/* CTR, 128-bit big-endian counter (SP 800-38A 6.5, B.1), four counter blocks per pass. */
static void ct64_ctr128(const secho_aes_key *k, uint8_t ctr[16], uint8_t *out, const uint8_t *in,
                        size_t nblocks)
{
	uint8_t ks[64] = {0}; /* fully written before use; zeroed for the analysers */
	uint64_t q[8];
	uint64_t hi = secho_load_be64(ctr), lo = secho_load_be64(ctr + 8);
	while (nblocks > 0) {
		size_t n = nblocks < 4 ? nblocks : 4;
		for (size_t i = 0; i < n; i++) {
			secho_store_be64(ks + 16 * i, hi);
			secho_store_be64(ks + 16 * i + 8, lo);
			lo++;
			hi += (lo == 0); /* counter values are public */
		}
		pack(q, ks, n);
		encrypt4(k, q);
		unpack(ks, q, n);
		for (size_t i = 0; i < 16 * n; i++)
			out[i] = (uint8_t)(in[i] ^ ks[i]);
		in += 16 * n;
		out += 16 * n;
		nblocks -= n;
	}
	secho_store_be64(ctr, hi);
	secho_store_be64(ctr + 8, lo);
	secho_wipe(ks, sizeof(ks));
	secho_wipe(q, sizeof(q));
}

/* CBC decryption (SP 800-38A 6.2), four blocks per pass; iv becomes the last C block. */
static void ct64_cbc_dec(const secho_aes_key *k, uint8_t iv[16], uint8_t *out, const uint8_t *in,
                         size_t nblocks)
{
	uint8_t c[64], p[64];
	uint64_t q[8];
	while (nblocks > 0) {
		size_t n = nblocks < 4 ? nblocks : 4;
		memcpy(c, in, 16 * n); /* keep C: out may equal in */
		pack(q, c, n);
		decrypt4(k, q);
		unpack(p, q, n);
		secho_xor16(out, p, iv);
		for (size_t i = 16; i < 16 * n; i++)
			out[i] = (uint8_t)(p[i] ^ c[i - 16]);
		memcpy(iv, c + 16 * (n - 1), 16);
		in += 16 * n;
		out += 16 * n;
		nblocks -= n;
	}
	secho_wipe(p, sizeof(p));
	secho_wipe(q, sizeof(q));
}

/* CFB128 decryption (SP 800-38A 6.3): P_i = C_i ^ E(C_(i-1)), C_0 = IV; iv becomes C_n. */
static void ct64_cfb_dec(const secho_aes_key *k, uint8_t iv[16], uint8_t *out, const uint8_t *in,
                         size_t nblocks)
{
	uint8_t x[64], c[64];
	uint64_t q[8];
	while (nblocks > 0) {
		size_t n = nblocks < 4 ? nblocks : 4;
		memcpy(c, in, 16 * n);
		memcpy(x, iv, 16);
		memcpy(x + 16, c, 16 * (n - 1));
		pack(q, x, n);
		encrypt4(k, q);
		unpack(x, q, n);
		for (size_t i = 0; i < 16 * n; i++)
			out[i] = (uint8_t)(c[i] ^ x[i]);
		memcpy(iv, c + 16 * (n - 1), 16);
		in += 16 * n;
		out += 16 * n;
		nblocks -= n;
	}
	secho_wipe(x, sizeof(x));
	secho_wipe(q, sizeof(q));
}

static bool ct64_available(void)
{
	return true;
}

const struct secho_aes_impl secho_aes_ct64_impl = {
        .name = "portable",
        .id = SECHO_IMPL_PORTABLE,
        .available = ct64_available,
        .keysched = ct64_keysched,
        .ecb_enc = ct64_ecb_enc,
        .ecb_dec = ct64_ecb_dec,
        .ctr128 = ct64_ctr128,
        .cbc_enc = NULL,
        .cbc_dec = ct64_cbc_dec,
        .cfb_dec = ct64_cfb_dec,
};
