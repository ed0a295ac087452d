/*
 * src/crypto/modes.c - AES modes of operation (include/secho/modes.h): argument checks,
 * then the key's implementation table (k->impl).
 *
 * Every table provides ecb_enc/ecb_dec; ctr128, cbc_enc, cbc_dec, cfb_dec, cfb_enc and ofb are
 * optional. When one is NULL the mode is composed here from the ECB entries, working in
 * chunks of CHUNK blocks on the stack so that parallel implementations still see several
 * independent blocks per call.
 *
 * In place (out == in): every path reads a block (or saves the chunk of input it still
 * needs) before it writes the output covering it, so CBC/PCBC/CFB decryption keep their
 * ciphertext chaining values even when the output overwrites them.
 *
 * Constant time: the control flow depends on lengths and positions only (public); the
 * data go through the implementation's block function. Stack temporaries that held
 * keystream or plaintext are wiped before returning.
 */
#include "crypto/inner.h"

/* Blocks per stack chunk in the generic compositions (8 x 16 = 128 bytes per buffer). */
#define CHUNK 8

/* Private tags in secho_stream.mode; a zeroed or wiped context matches none. */
enum {
	MODE_CTR = 0x43545231, /* "CTR1" */
	MODE_CFB = 0x43464231, /* "CFB1" */
	MODE_OFB = 0x4f464231, /* "OFB1" */
};

/* A key is usable when it is non-NULL and was initialised (wiped keys have no table). */
static bool key_ok(const secho_aes_key *k)
{
	return k && k->impl && k->impl->ecb_enc && k->impl->ecb_dec;
}

/* Common checks for the block modes: EINVAL for a bad key, NULL data with a non-zero
 * length or (need_iv) a NULL IV; ELEN for a partial block. Nothing is written. */
static int block_args(const secho_aes_key *k, const uint8_t *iv, bool need_iv, const uint8_t *out,
                      const uint8_t *in, size_t len)
{
	if (!key_ok(k) || (need_iv && !iv) || (len && (!out || !in)))
		return SECHO_EINVAL;
	if (len % SECHO_AES_BLOCK)
		return SECHO_ELEN;
	return SECHO_OK;
}

/* ---- ECB ---- */

/* SECHO_OK, SECHO_EINVAL or SECHO_ELEN (nothing written on error). */
int secho_ecb_encrypt(const secho_aes_key *k, uint8_t *out, const uint8_t *in, size_t len)
{
	int rc = block_args(k, NULL, false, out, in, len);
	if (rc)
		return rc;
	if (len)
		k->impl->ecb_enc(k, out, in, len / 16);
	return SECHO_OK;
}

/* SECHO_OK, SECHO_EINVAL or SECHO_ELEN (nothing written on error). */
int secho_ecb_decrypt(const secho_aes_key *k, uint8_t *out, const uint8_t *in, size_t len)
{
	int rc = block_args(k, NULL, false, out, in, len);
	if (rc)
		return rc;
	if (len)
		k->impl->ecb_dec(k, out, in, len / 16);
	return SECHO_OK;
}

/* ---- CBC (SP 800-38A 6.2) ---- */

/* C_i = E(P_i ^ C_(i-1)), C_0 = IV. Serial by nature: one block per call. In place is
 * safe because P_i is consumed into t before C_i is stored. */
static void cbc_enc_generic(const secho_aes_key *k, uint8_t iv[16], uint8_t *out, const uint8_t *in,
                            size_t nblocks)
{
	alignas(16) uint8_t t[16];
	for (size_t i = 0; i < nblocks; i++) {
		secho_xor16(t, in + 16 * i, iv);
		k->impl->ecb_enc(k, iv, t, 1);
		memcpy(out + 16 * i, iv, 16);
	}
	secho_wipe(t, sizeof(t));
}

/* P_i = D(C_i) ^ C_(i-1). Each chunk of ciphertext is saved first (it is both the
 * decryption input and the next chaining values), then decrypted into out. */
static void cbc_dec_generic(const secho_aes_key *k, uint8_t iv[16], uint8_t *out, const uint8_t *in,
                            size_t nblocks)
{
	alignas(16) uint8_t c[CHUNK * 16];
	while (nblocks) {
		size_t n = nblocks < CHUNK ? nblocks : CHUNK;
		memcpy(c, in, n * 16);
		k->impl->ecb_dec(k, out, c, n);
		secho_xor16(out, out, iv);
		for (size_t i = 1; i < n; i++)
			secho_xor16(out + 16 * i, out + 16 * i, c + 16 * (i - 1));
		memcpy(iv, c + 16 * (n - 1), 16);
		in += n * 16;
		out += n * 16;
		nblocks -= n;
	}
	secho_wipe(c, sizeof(c));
}

/* SECHO_OK, SECHO_EINVAL or SECHO_ELEN (nothing written, iv unchanged on error). */
int secho_cbc_encrypt(const secho_aes_key *k, uint8_t iv[16], uint8_t *out, const uint8_t *in,
                      size_t len)
{
	int rc = block_args(k, iv, true, out, in, len);
	if (rc || !len)
		return rc;
	if (k->impl->cbc_enc)
		k->impl->cbc_enc(k, iv, out, in, len / 16);
	else
		cbc_enc_generic(k, iv, out, in, len / 16);
	return SECHO_OK;
}

/* SECHO_OK, SECHO_EINVAL or SECHO_ELEN (nothing written, iv unchanged on error). */
int secho_cbc_decrypt(const secho_aes_key *k, uint8_t iv[16], uint8_t *out, const uint8_t *in,
                      size_t len)
{
	int rc = block_args(k, iv, true, out, in, len);
	if (rc || !len)
		return rc;
	if (k->impl->cbc_dec)
		k->impl->cbc_dec(k, iv, out, in, len / 16);
	else
		cbc_dec_generic(k, iv, out, in, len / 16);
	return SECHO_OK;
}

/* ---- PCBC (Linux kernel pcbc template) ----
 * C_i = E(P_i ^ V_i), P_i = D(C_i) ^ V_i, V_1 = IV, V_(i+1) = P_i ^ C_i.
 * The iv buffer holds V between calls. */

/* SECHO_OK, SECHO_EINVAL or SECHO_ELEN (nothing written, iv unchanged on error). */
int secho_pcbc_encrypt(const secho_aes_key *k, uint8_t iv[16], uint8_t *out, const uint8_t *in,
                       size_t len)
{
	int rc = block_args(k, iv, true, out, in, len);
	if (rc || !len)
		return rc;
	alignas(16) uint8_t p[16], t[16];
	for (size_t i = 0; i < len / 16; i++) {
		memcpy(p, in + 16 * i, 16); /* saved: out may overwrite it */
		secho_xor16(t, p, iv);
		k->impl->ecb_enc(k, out + 16 * i, t, 1);
		secho_xor16(iv, p, out + 16 * i);
	}
	secho_wipe(p, sizeof(p));
	secho_wipe(t, sizeof(t));
	return SECHO_OK;
}

/* SECHO_OK, SECHO_EINVAL or SECHO_ELEN (nothing written, iv unchanged on error).
 * The block decryptions are independent, so they run a chunk at a time; only the XOR
 * chain is serial. */
int secho_pcbc_decrypt(const secho_aes_key *k, uint8_t iv[16], uint8_t *out, const uint8_t *in,
                       size_t len)
{
	int rc = block_args(k, iv, true, out, in, len);
	if (rc || !len)
		return rc;
	alignas(16) uint8_t c[CHUNK * 16];
	size_t nblocks = len / 16;
	while (nblocks) {
		size_t n = nblocks < CHUNK ? nblocks : CHUNK;
		memcpy(c, in, n * 16);
		k->impl->ecb_dec(k, out, c, n);
		for (size_t i = 0; i < n; i++) {
			secho_xor16(out + 16 * i, out + 16 * i, iv); /* P_i = D(C_i) ^ V_i */
			secho_xor16(iv, out + 16 * i, c + 16 * i);   /* V_(i+1) = P_i ^ C_i */
		}
		in += n * 16;
		out += n * 16;
		nblocks -= n;
	}
	secho_wipe(c, sizeof(c));
	return SECHO_OK;
}

/* ---- stream modes ----
 * secho_stream: reg is the mode's register (CTR: next counter block; CFB: last complete
 * ciphertext block; OFB: last output block), ks the current keystream block and used the
 * number of its bytes consumed (16: none left, the next byte needs a new block).
 * CFB keeps the ciphertext bytes of the current block in ks[0..used) as it goes: the
 * keystream byte is no longer needed once used, and the completed block is the next
 * register value. */

/* EINVAL for NULL s or data pointers with a non-zero length; ESTATE when s was not set
 * up for `mode` (never initialised, wiped, or another mode). */
static int stream_args(const secho_stream *s, unsigned mode, const uint8_t *out, const uint8_t *in,
                       size_t len)
{
	if (!s || (len && (!out || !in)))
		return SECHO_EINVAL;
	if (s->mode != mode || !key_ok(s->key) || s->used > 16)
		return SECHO_ESTATE;
	return SECHO_OK;
}

static int stream_init(secho_stream *s, const secho_aes_key *k, const uint8_t iv[16], unsigned mode)
{
	if (!s || !key_ok(k) || !iv)
		return SECHO_EINVAL;
	memset(s, 0, sizeof(*s));
	s->key = k;
	memcpy(s->reg, iv, 16);
	s->used = 16;
	s->mode = mode;
	return SECHO_OK;
}

/* XOR up to `len` bytes of the unused keystream into out; returns how many were done. */
static size_t ks_drain(secho_stream *s, uint8_t *out, const uint8_t *in, size_t len)
{
	size_t n = 0;
	while (s->used < 16 && n < len) {
		out[n] = (uint8_t)(in[n] ^ s->ks[s->used++]);
		n++;
	}
	return n;
}

/* SECHO_OK or SECHO_EINVAL (NULL s, uninitialised key, NULL iv). */
int secho_ctr_init(secho_stream *s, const secho_aes_key *k, const uint8_t iv[16])
{
	return stream_init(s, k, iv, MODE_CTR);
}

/* Generic CTR on whole blocks: counter blocks built a chunk at a time, encrypted with
 * one ecb_enc call, XORed into out. */
static void ctr_generic(const secho_aes_key *k, uint8_t ctr[16], uint8_t *out, const uint8_t *in,
                        size_t nblocks)
{
	alignas(16) uint8_t cb[CHUNK * 16], ks[CHUNK * 16];
	while (nblocks) {
		size_t n = nblocks < CHUNK ? nblocks : CHUNK;
		for (size_t i = 0; i < n; i++) {
			memcpy(cb + 16 * i, ctr, 16);
			secho_inc128(ctr);
		}
		k->impl->ecb_enc(k, ks, cb, n);
		for (size_t i = 0; i < n * 16; i++)
			out[i] = (uint8_t)(in[i] ^ ks[i]);
		in += n * 16;
		out += n * 16;
		nblocks -= n;
	}
	secho_wipe(ks, sizeof(ks));
}

static void ctr_blocks(const secho_aes_key *k, uint8_t ctr[16], uint8_t *out, const uint8_t *in,
                       size_t nblocks)
{
	if (!nblocks)
		return;
	if (k->impl->ctr128)
		k->impl->ctr128(k, ctr, out, in, nblocks);
	else
		ctr_generic(k, ctr, out, in, nblocks);
}

/* SECHO_OK, SECHO_EINVAL or SECHO_ESTATE (nothing written on error). */
int secho_ctr_update(secho_stream *s, uint8_t *out, const uint8_t *in, size_t len)
{
	int rc = stream_args(s, MODE_CTR, out, in, len);
	if (rc)
		return rc;
	size_t n = ks_drain(s, out, in, len);
	in += n;
	out += n;
	len -= n;
	ctr_blocks(s->key, s->reg, out, in, len / 16);
	in += len / 16 * 16;
	out += len / 16 * 16;
	len %= 16;
	if (len) {
		static const uint8_t zero[16];
		/* ks = E(counter), counter advanced: the keystream of one block. */
		ctr_blocks(s->key, s->reg, s->ks, zero, 1);
		s->used = 0;
		ks_drain(s, out, in, len);
	}
	return SECHO_OK;
}

/* SECHO_OK or SECHO_EINVAL (NULL s, uninitialised key, NULL iv). */
int secho_cfb_init(secho_stream *s, const secho_aes_key *k, const uint8_t iv[16])
{
	return stream_init(s, k, iv, MODE_CFB);
}

/* CFB byte step on the current block: ks[used] is replaced by the ciphertext byte; when
 * the block completes, it becomes the register. `enc` selects which side is C. */
static size_t cfb_partial(secho_stream *s, uint8_t *out, const uint8_t *in, size_t len, bool enc)
{
	size_t n = 0;
	while (s->used < 16 && n < len) {
		uint8_t x = in[n];
		uint8_t y = (uint8_t)(x ^ s->ks[s->used]);
		s->ks[s->used++] = enc ? y : x;
		out[n++] = y;
	}
	if (n && s->used == 16)
		memcpy(s->reg, s->ks, 16);
	return n;
}

static int cfb_run(secho_stream *s, uint8_t *out, const uint8_t *in, size_t len, bool enc)
{
	int rc = stream_args(s, MODE_CFB, out, in, len);
	if (rc)
		return rc;
	const secho_aes_key *k = s->key;
	size_t n = cfb_partial(s, out, in, len, enc);
	in += n;
	out += n;
	len -= n;
	size_t nblocks = len / 16;
	if (enc && nblocks && k->impl->cfb_enc) {
		k->impl->cfb_enc(k, s->reg, out, in, nblocks);
	} else if (enc) {
		/* C_i = E(C_(i-1)) ^ P_i: serial. reg takes C_i before out is written, so
		 * in place is safe. */
		alignas(16) uint8_t t[16];
		for (size_t i = 0; i < nblocks; i++) {
			k->impl->ecb_enc(k, t, s->reg, 1);
			secho_xor16(s->reg, t, in + 16 * i);
			memcpy(out + 16 * i, s->reg, 16);
		}
		secho_wipe(t, sizeof(t));
	} else if (nblocks && k->impl->cfb_dec) {
		k->impl->cfb_dec(k, s->reg, out, in, nblocks);
	} else if (nblocks) {
		/* P_i = E(C_(i-1)) ^ C_i: the encryptions are independent. Save the chunk
		 * of C (needed as next inputs even when out overwrites it). */
		alignas(16) uint8_t c[CHUNK * 16], x[CHUNK * 16];
		size_t left = nblocks;
		const uint8_t *ip = in;
		uint8_t *op = out;
		while (left) {
			size_t m = left < CHUNK ? left : CHUNK;
			memcpy(c, ip, m * 16);
			memcpy(x, s->reg, 16);
			memcpy(x + 16, c, (m - 1) * 16);
			k->impl->ecb_enc(k, x, x, m);
			for (size_t i = 0; i < m * 16; i++)
				op[i] = (uint8_t)(x[i] ^ c[i]);
			memcpy(s->reg, c + 16 * (m - 1), 16);
			ip += m * 16;
			op += m * 16;
			left -= m;
		}
		secho_wipe(x, sizeof(x));
	}
	in += nblocks * 16;
	out += nblocks * 16;
	len %= 16;
	if (len) {
		k->impl->ecb_enc(k, s->ks, s->reg, 1);
		s->used = 0;
		cfb_partial(s, out, in, len, enc);
	}
	return SECHO_OK;
}

/* SECHO_OK, SECHO_EINVAL or SECHO_ESTATE (nothing written on error). */
int secho_cfb_encrypt(secho_stream *s, uint8_t *out, const uint8_t *in, size_t len)
{
	return cfb_run(s, out, in, len, true);
}

/* SECHO_OK, SECHO_EINVAL or SECHO_ESTATE (nothing written on error). */
int secho_cfb_decrypt(secho_stream *s, uint8_t *out, const uint8_t *in, size_t len)
{
	return cfb_run(s, out, in, len, false);
}

/* SECHO_OK or SECHO_EINVAL (NULL s, uninitialised key, NULL iv). */
int secho_ofb_init(secho_stream *s, const secho_aes_key *k, const uint8_t iv[16])
{
	return stream_init(s, k, iv, MODE_OFB);
}

/* SECHO_OK, SECHO_EINVAL or SECHO_ESTATE (nothing written on error).
 * O_i = E(O_(i-1)), O_0 = IV: serial, one block per call. */
int secho_ofb_update(secho_stream *s, uint8_t *out, const uint8_t *in, size_t len)
{
	int rc = stream_args(s, MODE_OFB, out, in, len);
	if (rc)
		return rc;
	const secho_aes_key *k = s->key;
	size_t n = ks_drain(s, out, in, len);
	in += n;
	out += n;
	len -= n;
	if (len >= 16 && k->impl->ofb) {
		k->impl->ofb(k, s->reg, out, in, len / 16);
		in += len / 16 * 16;
		out += len / 16 * 16;
		len %= 16;
	}
	while (len >= 16) {
		k->impl->ecb_enc(k, s->ks, s->reg, 1);
		memcpy(s->reg, s->ks, 16);
		secho_xor16(out, in, s->ks);
		in += 16;
		out += 16;
		len -= 16;
	}
	if (len) {
		k->impl->ecb_enc(k, s->ks, s->reg, 1);
		memcpy(s->reg, s->ks, 16);
		s->used = 0;
		ks_drain(s, out, in, len);
	}
	return SECHO_OK;
}

/* See modes.h. CTR's reg is already the next counter and OFB's reg the current output
 * block (reg == ks inside a block); CFB inside a block is ks: its first `used` bytes were
 * replaced by ciphertext (cfb_partial), the rest is still E(reg). */
int secho_stream_get_iv(const secho_stream *s, uint8_t iv[16], unsigned *num)
{
	if (!s || !iv)
		return SECHO_EINVAL;
	if ((s->mode != MODE_CTR && s->mode != MODE_CFB && s->mode != MODE_OFB) ||
	    !key_ok(s->key) || s->used > 16)
		return SECHO_ESTATE;
	bool mid = s->used < 16;
	memcpy(iv, s->mode == MODE_CFB && mid ? s->ks : s->reg, 16);
	if (num)
		*num = mid ? s->used : 0;
	return SECHO_OK;
}

/* Zero the whole context (key pointer, register, keystream); later calls get ESTATE. */
void secho_stream_wipe(secho_stream *s)
{
	if (s)
		secho_wipe(s, sizeof(*s));
}
