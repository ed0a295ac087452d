/*
 * src/cli/speed.c - `secho speed`: our AES implementations against OpenSSL EVP and
 * Intel ipsec-mb, measured in the same run, printed like `openssl speed`.
 *
 * What is timed, per call (one "packet"):
 *  - ours, GCM:   secho_gcm_seal(): 12-byte IV (new each call), 16-byte AAD, 16-byte tag,
 *                 key expanded once; batch rows time secho_gcm_seal_batch() of 16 or 32
 *                 packets and report per-packet figures;
 *  - ours, modes: ECB/CBC/PCBC/CTR/CFB/OFB encryption; the chaining value or counter is
 *                 set from a new IV every call (a stream context is re-initialised);
 *  - EVP:         one EVP_CIPHER_CTX, cipher and key set once; per call only the IV is
 *                 set (EVP_EncryptInit_ex with NULL cipher and key) - the honest fast use;
 *  - ipsec-mb:    IMB_AES256_GCM_PRE once, IMB_AES256_GCM_ENC (direct API) per call.
 * Input and output are distinct 64-byte aligned buffers, warm in cache.
 *
 * Timing: the TSC, read with lfence;rdtsc;lfence before and rdtscp;lfence after a burst
 * of a fixed number of calls lasting about 25 us, so the read cost is amortised. Each
 * cell is measured --repeat times; a repeat keeps its fastest burst (preemption only
 * ever slows a burst) and the median of the repeats is reported. MB/s follows from the
 * median cycles and the TSC frequency calibrated against CLOCK_MONOTONIC_RAW. The TSC ticks
 * at a constant rate, not at the core clock: "cycles" here are TSC cycles.
 */
#include "cli/cli.h"
#include "secho/cpu.h"
#include "secho/tsc.h"

#include <cpuid.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <intel-ipsec-mb.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>

#include "secho/gcm.h"
#include "secho/modes.h"

static const char *const CMD = "speed";

#define MAX_SIZES  16
#define MAX_SIZE   (1u << 20)
#define MAX_REPEAT 101
#define BATCH_MAX  SECHO_GCM_BATCH_MAX

enum alg { A_GCM, A_ECB, A_CBC, A_PCBC, A_CTR, A_CFB, A_OFB, A_COUNT };
static const char *const alg_names[A_COUNT] = {"gcm", "ecb", "cbc", "pcbc", "ctr", "cfb", "ofb"};

enum kind { K_OURS, K_EVP, K_IMB };
static const char *const kind_names[] = {"ours", "openssl-evp", "ipsec-mb"};

/* One row of a table: an algorithm, key size and implementation (and batch size). */
struct row {
	enum alg alg;
	unsigned key_bits;
	enum kind kind;
	secho_impl_id impl; /* K_OURS */
	unsigned batch;     /* packets per call: 1, 16 or 32 */
	char label[40];
	bool avail;            /* could be set up (peer present, impl available) */
	char why[96];          /* reason when !avail */
	double cyc[MAX_SIZES]; /* median TSC cycles per call; < 0: not measured */
};

/* Everything a timed call needs. One context per row, reused for every size. */
struct bench {
	struct row *row;
	uint8_t *in, *out;
	uint8_t iv[16];
	uint8_t aad[16];
	uint8_t tag[BATCH_MAX][16];
	uint8_t ivs[BATCH_MAX][12];
	uint64_t ctr; /* makes every IV new */
	secho_gcm_msg msgs[BATCH_MAX];
	secho_gcm_key gk;
	secho_aes_key ak;
	EVP_CIPHER_CTX *evp;
	IMB_MGR *imb;
	struct gcm_key_data *imb_key; /* 64-byte aligned, ipsec-mb's layout */
	struct gcm_context_data imb_ctx;
};

struct opts {
	bool json, quick;
	bool modes[A_COUNT];
	bool one_impl;
	secho_impl_id impl;
	double seconds;
	unsigned repeat;
	size_t sizes[MAX_SIZES], nsizes; /* 0: the defaults */
};

static const size_t gcm_sizes[] = {16, 64, 256, 512, 1024, 1472, 4096, 16384};
static const size_t mode_sizes[] = {16, 64, 256, 1024, 1472, 4096, 16384};

/* A new IV for the next call: a 64-bit counter in bytes 4..11 (public data). */
static inline void next_iv(struct bench *b)
{
	b->ctr++;
	memcpy(b->iv + 4, &b->ctr, sizeof(b->ctr));
}

/* One timed call of the row at `len` bytes per packet. Returns false on error. */
static bool call(struct bench *b, size_t len)
{
	struct row *r = b->row;
	int l = 0;
	next_iv(b);
	if (r->kind == K_OURS && r->alg == A_GCM) {
		if (r->batch == 1)
			return secho_gcm_seal(&b->gk, b->iv, 12, b->aad, 16, b->out, b->in, len,
			                      b->tag[0], 16) == SECHO_OK;
		for (unsigned i = 0; i < r->batch; i++) {
			memcpy(b->ivs[i] + 4, &b->ctr, sizeof(b->ctr));
			b->ctr++;
			b->msgs[i].len = len;
			b->msgs[i].in = b->in + (size_t)i * len;
			b->msgs[i].out = b->out + (size_t)i * len;
		}
		return secho_gcm_seal_batch(&b->gk, b->msgs, r->batch) == SECHO_OK;
	}
	if (r->kind == K_OURS) {
		uint8_t chain[16];
		secho_stream s;
		memcpy(chain, b->iv, 16);
		switch (r->alg) {
		case A_ECB:
			return secho_ecb_encrypt(&b->ak, b->out, b->in, len) == SECHO_OK;
		case A_CBC:
			return secho_cbc_encrypt(&b->ak, chain, b->out, b->in, len) == SECHO_OK;
		case A_PCBC:
			return secho_pcbc_encrypt(&b->ak, chain, b->out, b->in, len) == SECHO_OK;
		case A_CTR:
			return secho_ctr_init(&s, &b->ak, chain) == SECHO_OK &&
			       secho_ctr_update(&s, b->out, b->in, len) == SECHO_OK;
		case A_CFB:
			return secho_cfb_init(&s, &b->ak, chain) == SECHO_OK &&
			       secho_cfb_encrypt(&s, b->out, b->in, len) == SECHO_OK;
		case A_OFB:
			return secho_ofb_init(&s, &b->ak, chain) == SECHO_OK &&
			       secho_ofb_update(&s, b->out, b->in, len) == SECHO_OK;
		default:
			return false;
		}
	}
	if (r->kind == K_IMB) {
		IMB_AES256_GCM_ENC(b->imb, b->imb_key, &b->imb_ctx, b->out, b->in, (uint64_t)len,
		                   b->iv, b->aad, 16, b->tag[0], 16);
		return true;
	}
	/* EVP: same context; only the IV is set per call. */
	if (r->alg == A_GCM) {
		return EVP_EncryptInit_ex(b->evp, NULL, NULL, NULL, b->iv) == 1 &&
		       EVP_EncryptUpdate(b->evp, NULL, &l, b->aad, 16) == 1 &&
		       EVP_EncryptUpdate(b->evp, b->out, &l, b->in, (int)len) == 1 &&
		       EVP_EncryptFinal_ex(b->evp, b->out + l, &l) == 1 &&
		       EVP_CIPHER_CTX_ctrl(b->evp, EVP_CTRL_GCM_GET_TAG, 16, b->tag[0]) == 1;
	}
	if (r->alg != A_ECB && EVP_EncryptInit_ex(b->evp, NULL, NULL, NULL, b->iv) != 1)
		return false;
	return EVP_EncryptUpdate(b->evp, b->out, &l, b->in, (int)len) == 1;
}

static const EVP_CIPHER *evp_cipher(enum alg a, unsigned bits)
{
	bool k128 = bits == 128;
	switch (a) {
	case A_GCM:
		return k128 ? EVP_aes_128_gcm() : EVP_aes_256_gcm();
	case A_ECB:
		return k128 ? EVP_aes_128_ecb() : EVP_aes_256_ecb();
	case A_CBC:
		return k128 ? EVP_aes_128_cbc() : EVP_aes_256_cbc();
	case A_CTR:
		return k128 ? EVP_aes_128_ctr() : EVP_aes_256_ctr();
	case A_CFB:
		return k128 ? EVP_aes_128_cfb128() : EVP_aes_256_cfb128();
	case A_OFB:
		return k128 ? EVP_aes_128_ofb() : EVP_aes_256_ofb();
	default:
		return NULL; /* PCBC: not in OpenSSL EVP */
	}
}

/* Set up b for its row with key (32 bytes; the first key_bits/8 used). On failure the
 * row is marked unavailable with the reason. */
static void bench_setup(struct bench *b, const uint8_t *key)
{
	struct row *r = b->row;
	size_t kl = r->key_bits / 8;
	int e;
	r->avail = false;
	if (r->kind == K_OURS) {
		e = r->alg == A_GCM ? secho_gcm_key_init(&b->gk, key, kl, r->impl)
		                    : secho_aes_key_init(&b->ak, key, kl, r->impl);
		if (e) {
			snprintf(r->why, sizeof(r->why), "%s", secho_strerror(e));
			return;
		}
		for (unsigned i = 0; i < BATCH_MAX; i++) {
			memcpy(b->ivs[i], b->iv, 12);
			b->msgs[i] = (secho_gcm_msg){
			        .iv = b->ivs[i], .aad = b->aad, .aad_len = 16, .tag = b->tag[i]};
		}
	} else if (r->kind == K_EVP) {
		const EVP_CIPHER *c = evp_cipher(r->alg, r->key_bits);
		if (!c) {
			snprintf(r->why, sizeof(r->why), "OpenSSL has no %s", alg_names[r->alg]);
			return;
		}
		b->evp = EVP_CIPHER_CTX_new();
		if (!b->evp || EVP_EncryptInit_ex(b->evp, c, NULL, key, b->iv) != 1 ||
		    EVP_CIPHER_CTX_set_padding(b->evp, 0) != 1) {
			snprintf(r->why, sizeof(r->why), "EVP setup failed");
			return;
		}
	} else {
		b->imb = alloc_mb_mgr(0);
		if (!b->imb) {
			snprintf(r->why, sizeof(r->why), "alloc_mb_mgr failed");
			return;
		}
		IMB_ARCH arch = IMB_ARCH_NONE;
		init_mb_mgr_auto(b->imb, &arch);
		if (imb_get_errno(b->imb) || !b->imb->gcm256_enc || !b->imb->gcm256_pre) {
			snprintf(r->why, sizeof(r->why), "init_mb_mgr_auto: %s",
			         imb_get_strerror(imb_get_errno(b->imb)));
			return;
		}
		b->imb_key = aligned_alloc(64, (sizeof(*b->imb_key) + 63) & ~(size_t)63);
		if (!b->imb_key) {
			snprintf(r->why, sizeof(r->why), "out of memory");
			return;
		}
		IMB_AES256_GCM_PRE(b->imb, key, b->imb_key);
	}
	r->avail = true;
}

static void bench_release(struct bench *b)
{
	secho_gcm_key_wipe(&b->gk);
	secho_aes_key_wipe(&b->ak);
	if (b->evp)
		EVP_CIPHER_CTX_free(b->evp); /* OpenSSL clears the key schedule */
	if (b->imb_key) {
		secho_wipe(b->imb_key, sizeof(*b->imb_key));
		free(b->imb_key);
	}
	secho_wipe(&b->imb_ctx, sizeof(b->imb_ctx));
	if (b->imb)
		free_mb_mgr(b->imb);
	b->evp = NULL;
	b->imb = NULL;
	b->imb_key = NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* A burst: the unit timed between two TSC reads. About 25 us at 2 GHz - much shorter than
 * a scheduler time slice, so most bursts run without being preempted, and long enough
 * that the ~40-cycle cost of the serialised TSC reads is negligible. */
#define BURST_CYC 50000.0

/*
 * Median TSC cycles per call for one cell, or -1 on a call error.
 *
 * The per-call cost is first estimated by doubling a loop until it lasts slice_cyc/8.
 * Each of the `repeat` samples then spends about slice_cyc running back-to-back bursts
 * of a fixed call count and keeps its fastest burst: on a shared machine a preempted
 * or interrupted burst is slower, never faster, so the minimum within a sample rejects
 * that noise, and the median across samples is what is reported.
 */
static double measure(struct bench *b, size_t len, double slice_cyc, unsigned repeat)
{
	double samples[MAX_REPEAT];
	uint64_t n = 1, t;
	for (int i = 0; i < 2; i++) /* warm caches, branch predictors, lazy init */
		if (!call(b, len))
			return -1;
	for (;;) {
		uint64_t t0 = secho_tsc_begin();
		for (uint64_t i = 0; i < n; i++)
			if (!call(b, len))
				return -1;
		t = secho_tsc_end() - t0;
		if ((double)t >= slice_cyc / 8 || n >= (UINT64_C(1) << 40))
			break;
		n *= 2;
	}
	double per = (double)t / (double)n;
	if (per < 1)
		per = 1;
	uint64_t burst = (uint64_t)(BURST_CYC / per);
	if (burst < 1)
		burst = 1;
	uint64_t bursts = (uint64_t)(slice_cyc / ((double)burst * per));
	if (bursts < 1)
		bursts = 1;
	for (unsigned r = 0; r < repeat; r++) {
		double best = INFINITY;
		for (uint64_t k = 0; k < bursts; k++) {
			uint64_t t0 = secho_tsc_begin();
			for (uint64_t i = 0; i < burst; i++)
				call(b, len);
			double c = (double)(secho_tsc_end() - t0) / (double)burst;
			if (c < best)
				best = c;
		}
		samples[r] = best;
	}
	qsort(samples, repeat, sizeof(samples[0]), cmp_double);
	return repeat % 2 ? samples[repeat / 2]
	                  : (samples[repeat / 2 - 1] + samples[repeat / 2]) / 2;
}

/* ---- the tables ---- */

struct table {
	const char *title;
	const size_t *sizes;
	size_t nsizes;
	struct row *rows;
	size_t nrows;
};

static bool size_ok(const struct row *r, size_t len)
{
	/* Block modes need whole blocks; batches must fit the buffers (always do). */
	return !((r->alg == A_ECB || r->alg == A_CBC || r->alg == A_PCBC) && len % 16);
}

static double mbps(const struct row *r, double cyc, size_t len, double hz)
{
	return cyc > 0 ? (double)len * r->batch * hz / cyc / 1e6 : -1;
}

static double per_packet(const struct row *r, double cyc)
{
	return cyc > 0 ? cyc / r->batch : -1;
}

/* The peer row for ratios: same alg and key size, given kind. */
static const struct row *peer(const struct table *t, const struct row *r, enum kind k)
{
	for (size_t i = 0; i < t->nrows; i++) {
		const struct row *p = &t->rows[i];
		if (p->kind == k && p->alg == r->alg && p->key_bits == r->key_bits && p->avail)
			return p;
	}
	return NULL;
}

/* Speed ratio ours/peer = peer cycles per packet / our cycles per packet. */
static double ratio(const struct row *ours, const struct row *p, size_t j)
{
	if (!p || ours->cyc[j] <= 0 || p->cyc[j] <= 0)
		return -1;
	return per_packet(p, p->cyc[j]) / per_packet(ours, ours->cyc[j]);
}

static void print_header(const char *title, const struct table *t)
{
	printf("\n%s\n%-26s", title, "type");
	for (size_t j = 0; j < t->nsizes; j++)
		printf(" %5zu bytes", t->sizes[j]);
	putchar('\n');
}

/* One column: v with `decimals` digits, or "-" when not measured (v < 0). */
static void print_cell(double v, int decimals)
{
	if (v < 0)
		printf(" %11s", "-");
	else
		printf(" %11.*f", decimals, v);
}

static void print_table(const struct table *t, double hz)
{
	char title[160];
	snprintf(title, sizeof(title), "%s: MB/s (10^6 bytes per second)", t->title);
	print_header(title, t);
	for (size_t i = 0; i < t->nrows; i++) {
		const struct row *r = &t->rows[i];
		printf("%-26s", r->label);
		if (!r->avail) {
			printf(" unavailable: %s\n", r->why);
			continue;
		}
		for (size_t j = 0; j < t->nsizes; j++)
			print_cell(mbps(r, r->cyc[j], t->sizes[j], hz), 1);
		putchar('\n');
	}
	snprintf(title, sizeof(title), "%s: TSC cycles per packet (batch rows: per packet)",
	         t->title);
	print_header(title, t);
	for (size_t i = 0; i < t->nrows; i++) {
		const struct row *r = &t->rows[i];
		if (!r->avail)
			continue;
		printf("%-26s", r->label);
		for (size_t j = 0; j < t->nsizes; j++)
			print_cell(per_packet(r, r->cyc[j]), 0);
		putchar('\n');
	}
	snprintf(title, sizeof(title),
	         "%s: speed ratio ours/peer (peer cycles / our cycles; above 1.00 = ours faster)",
	         t->title);
	print_header(title, t);
	for (enum kind k = K_EVP; k <= K_IMB; k++) {
		for (size_t i = 0; i < t->nrows; i++) {
			const struct row *r = &t->rows[i];
			const struct row *p = peer(t, r, k);
			if (r->kind != K_OURS || !r->avail || !p)
				continue;
			/* The GCM table has one algorithm: name only who is compared. */
			char lab[64];
			const char *who =
			        r->alg == A_GCM ? r->label + strlen("aes-256-gcm ") : r->label;
			snprintf(lab, sizeof(lab), "%s / %s", who, k == K_EVP ? "evp" : "ipsec-mb");
			printf("%-26s", lab);
			for (size_t j = 0; j < t->nsizes; j++)
				print_cell(ratio(r, p, j), 2);
			putchar('\n');
		}
	}
}

static json_t *table_json(const struct table *t, double hz)
{
	json_t *rows = json_array();
	for (size_t i = 0; i < t->nrows; i++) {
		const struct row *r = &t->rows[i];
		json_t *o = json_object();
		char alg[24];
		snprintf(alg, sizeof(alg), "aes-%u-%s", r->key_bits, alg_names[r->alg]);
		json_object_set_new(o, "label", json_string(r->label));
		json_object_set_new(o, "alg", json_string(alg));
		json_object_set_new(o, "kind", json_string(kind_names[r->kind]));
		json_object_set_new(o, "impl",
		                    json_string(r->kind == K_OURS ? secho_impl_name(r->impl)
		                                                  : kind_names[r->kind]));
		json_object_set_new(o, "batch", json_integer(r->batch));
		json_object_set_new(o, "available", json_boolean(r->avail));
		if (!r->avail)
			json_object_set_new(o, "reason", json_string(r->why));
		json_t *res = json_array();
		const struct row *pe = r->kind == K_OURS ? peer(t, r, K_EVP) : NULL;
		const struct row *pi = r->kind == K_OURS ? peer(t, r, K_IMB) : NULL;
		for (size_t j = 0; r->avail && j < t->nsizes; j++) {
			if (r->cyc[j] <= 0)
				continue;
			json_t *c = json_object();
			json_object_set_new(c, "size", json_integer((json_int_t)t->sizes[j]));
			json_object_set_new(c, "mbps",
			                    json_real(mbps(r, r->cyc[j], t->sizes[j], hz)));
			json_object_set_new(c, "cycles_per_call", json_real(r->cyc[j]));
			json_object_set_new(c, "cycles_per_packet",
			                    json_real(per_packet(r, r->cyc[j])));
			double x = ratio(r, pe, j);
			if (x > 0)
				json_object_set_new(c, "ratio_vs_evp", json_real(x));
			x = ratio(r, pi, j);
			if (x > 0)
				json_object_set_new(c, "ratio_vs_ipsec_mb", json_real(x));
			json_array_append_new(res, c);
		}
		json_object_set_new(o, "results", res);
		json_array_append_new(rows, o);
	}
	json_t *sz = json_array();
	for (size_t j = 0; j < t->nsizes; j++)
		json_array_append_new(sz, json_integer((json_int_t)t->sizes[j]));
	json_t *o = json_object();
	json_object_set_new(o, "title", json_string(t->title));
	json_object_set_new(o, "sizes", sz);
	json_object_set_new(o, "rows", rows);
	return o;
}

static void help(void)
{
	printf("Usage: secho speed [--json] [--impl NAME] [--mode LIST] [--seconds S]\n"
	       "                   [--sizes LIST] [--repeat N] [--quick]\n\n"
	       "Measure AES-256-GCM (16-byte AAD, new 12-byte IV per call, 16-byte tag) and\n"
	       "AES-128/256 ECB, CBC, PCBC, CTR, CFB, OFB encryption for each implementation\n"
	       "of ours beside OpenSSL EVP (context and key set once, only the IV changes) and,\n"
	       "for GCM, Intel ipsec-mb (IMB_AES256_GCM_ENC) and our batch API (16 and 32\n"
	       "packets per call). Prints MB/s, TSC cycles per packet and speed ratios\n"
	       "ours/peer; each value is the median of N repeats.\n\n"
	       "  -j, --json         machine-readable output (same data) instead of tables\n"
	       "  -I, --impl NAME    only this implementation of ours (auto = the best one);\n"
	       "                     default: every available one\n"
	       "  -m, --mode LIST    all (default), or a comma list of gcm ecb cbc pcbc ctr\n"
	       "                     cfb ofb\n"
	       "  -s, --seconds S    total measuring time to spread over all cells (default\n"
	       "                     45; --quick: 4)\n"
	       "  -z, --sizes LIST   comma list of packet sizes in bytes (default GCM: 16 64\n"
	       "                     256 512 1024 1472 4096 16384; modes: the same without\n"
	       "                     512); block modes skip sizes not a multiple of 16\n"
	       "  -r, --repeat N     repeats per cell, median kept (default 5; --quick: 3)\n"
	       "  -q, --quick        short run (about 5 s)\n"
	       "  -h, --help         this text\n");
}

static bool parse_modes(const char *s, struct opts *o)
{
	char items[A_COUNT + 1][CLI_ITEM_MAX];
	const char *why;
	int n = cli_parse_list(s, items, A_COUNT + 1, &why);
	if (n < 0) {
		cli_usage_err(CMD, "--mode '%.32s': %s", s, why);
		return false;
	}
	memset(o->modes, 0, sizeof(o->modes));
	for (int i = 0; i < n; i++) {
		const char *w = items[i];
		bool found = false;
		if (!strcmp(w, "all")) {
			for (int a = 0; a < A_COUNT; a++)
				o->modes[a] = true;
			found = true;
		}
		for (int a = 0; a < A_COUNT; a++)
			if (!strcmp(w, alg_names[a]))
				o->modes[a] = found = true;
		if (!found) {
			cli_usage_err(CMD,
			              "--mode: unknown mode '%.32s' (all, gcm, ecb, cbc, pcbc, "
			              "ctr, cfb, ofb)",
			              w);
			return false;
		}
	}
	return true;
}

static bool parse_sizes(const char *s, struct opts *o)
{
	char items[MAX_SIZES][CLI_ITEM_MAX];
	const char *why;
	int n = cli_parse_list(s, items, MAX_SIZES, &why);
	if (n < 0) {
		cli_usage_err(CMD, "--sizes '%.32s': %s (at most %d sizes)", s, why, MAX_SIZES);
		return false;
	}
	o->nsizes = 0;
	for (int i = 0; i < n; i++) {
		uint64_t v;
		if (!cli_parse_u64(items[i], 1, MAX_SIZE, &v)) {
			cli_usage_err(CMD, "--sizes: '%.32s' is not a size in 1..%u", items[i],
			              MAX_SIZE);
			return false;
		}
		o->sizes[o->nsizes++] = (size_t)v;
	}
	return true;
}

static void add_row(struct row *rows, size_t *n, enum alg a, unsigned bits, enum kind k,
                    secho_impl_id id, unsigned batch)
{
	struct row *r = &rows[(*n)++];
	memset(r, 0, sizeof(*r));
	r->alg = a;
	r->key_bits = bits;
	r->kind = k;
	r->impl = id;
	r->batch = batch;
	const char *who = k == K_OURS ? secho_impl_name(id) : k == K_EVP ? "evp" : "ipsec-mb";
	if (batch > 1)
		snprintf(r->label, sizeof(r->label), "aes-%u-%s %s x%u", bits, alg_names[a], who,
		         batch);
	else
		snprintf(r->label, sizeof(r->label), "aes-%u-%s %s", bits, alg_names[a], who);
	for (size_t j = 0; j < MAX_SIZES; j++)
		r->cyc[j] = -1;
}

/* CPUID vendor string and display family/model (base plus extended fields), for the
 * header: the GCM dispatch depends on them (docs/CRYPTO.md). Zeros when CPUID fails. */
static void cpu_ident(char vendor[13], unsigned *family, unsigned *model)
{
	unsigned a = 0, b = 0, c = 0, d = 0;
	memset(vendor, 0, 13);
	*family = *model = 0;
	if (!__get_cpuid(0, &a, &b, &c, &d))
		return;
	memcpy(vendor, &b, 4);
	memcpy(vendor + 4, &d, 4);
	memcpy(vendor + 8, &c, 4);
	if (!__get_cpuid(1, &a, &b, &c, &d))
		return;
	unsigned fam = (a >> 8) & 0xf, mod = (a >> 4) & 0xf;
	if (fam == 0xf)
		fam += (a >> 20) & 0xff;
	if (fam >= 6)
		mod |= ((a >> 16) & 0xf) << 4;
	*family = fam;
	*model = mod;
}

/* What the run measures on: the machine, as the banner and the JSON describe it. */
struct machine {
	int cpu; /* pinned to, or -1 */
	double hz;
	const char *arch; /* ipsec-mb's */
	char vendor[13];
	unsigned family, model;
	secho_impl_id gcm_auto;
	secho_impl_id ids[SECHO_IMPL_COUNT]; /* our implementations measured */
	size_t nids;
};

/* Parse the options into o. Returns -1 to go on, or the exit status. */
static int speed_parse(int argc, char *argv[], struct opts *o)
{
	static const struct option lopts[] = {
	        {"json", no_argument, NULL, 'j'},
	        {"impl", required_argument, NULL, 'I'},
	        {"mode", required_argument, NULL, 'm'},
	        {"seconds", required_argument, NULL, 's'},
	        {"sizes", required_argument, NULL, 'z'},
	        {"repeat", required_argument, NULL, 'r'},
	        {"quick", no_argument, NULL, 'q'},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	uint64_t u;
	int c;

	*o = (struct opts){.seconds = -1, .repeat = 0};
	for (int a = 0; a < A_COUNT; a++)
		o->modes[a] = true;
	while ((c = getopt_long(argc, argv, ":jI:m:s:z:r:qh", lopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			o->json = true;
			break;
		case 'I':
			if (!cli_parse_impl(CMD, optarg, &o->impl))
				return CLI_USAGE;
			o->impl = secho_impl_resolve(o->impl);
			o->one_impl = true;
			break;
		case 'm':
			if (!parse_modes(optarg, o))
				return CLI_USAGE;
			break;
		case 's':
			if (!cli_parse_double(optarg, 0.01, 3600, &o->seconds))
				return cli_usage_err(CMD,
				                     "--seconds: '%.32s' is not a number in "
				                     "0.01..3600",
				                     optarg);
			break;
		case 'z':
			if (!parse_sizes(optarg, o))
				return CLI_USAGE;
			break;
		case 'r':
			if (!cli_parse_u64(optarg, 1, MAX_REPEAT, &u))
				return cli_usage_err(CMD,
				                     "--repeat: '%.32s' is not a count in 1..%d",
				                     optarg, MAX_REPEAT);
			o->repeat = (unsigned)u;
			break;
		case 'q':
			o->quick = true;
			break;
		case 'h':
			help();
			return CLI_OK;
		default:
			return cli_bad_option(CMD, c, argv);
		}
	}
	if (optind < argc)
		return cli_usage_err(CMD, "unexpected argument '%.64s'", argv[optind]);
	if (o->seconds < 0)
		o->seconds = o->quick ? 4 : 45;
	if (!o->repeat)
		o->repeat = o->quick ? 3 : 5;

	return -1;
}

/* The rows of both tables (GCM, then the modes) for our implementations in m->ids. */
static void speed_rows(const struct opts *o, const struct machine *m, struct table tabs[2])
{
	static struct row grows[SECHO_IMPL_COUNT * 3 + 2],
	        mrows[A_COUNT * 2 * (SECHO_IMPL_COUNT + 1)];
	const secho_impl_id *ids = m->ids;
	size_t nids = m->nids, ng = 0, nm = 0;

	if (o->modes[A_GCM]) {
		for (size_t i = 0; i < nids; i++)
			add_row(grows, &ng, A_GCM, 256, K_OURS, ids[i], 1);
		for (size_t i = 0; i < nids; i++) {
			add_row(grows, &ng, A_GCM, 256, K_OURS, ids[i], 16);
			add_row(grows, &ng, A_GCM, 256, K_OURS, ids[i], 32);
		}
		add_row(grows, &ng, A_GCM, 256, K_EVP, SECHO_IMPL_AUTO, 1);
		add_row(grows, &ng, A_GCM, 256, K_IMB, SECHO_IMPL_AUTO, 1);
	}
	for (int a = A_ECB; a < A_COUNT; a++) {
		if (!o->modes[a])
			continue;
		for (unsigned bits = 128; bits <= 256; bits += 128) {
			for (size_t i = 0; i < nids; i++)
				add_row(mrows, &nm, (enum alg)a, bits, K_OURS, ids[i], 1);
			if (a != A_PCBC)
				add_row(mrows, &nm, (enum alg)a, bits, K_EVP, SECHO_IMPL_AUTO, 1);
		}
	}
	tabs[0] = (struct table){"AES-256-GCM encrypt", o->nsizes ? o->sizes : gcm_sizes,
	                         o->nsizes ? o->nsizes : sizeof(gcm_sizes) / sizeof(gcm_sizes[0]),
	                         grows, ng};
	tabs[1] = (struct table){"AES modes encrypt", o->nsizes ? o->sizes : mode_sizes,
	                         o->nsizes ? o->nsizes : sizeof(mode_sizes) / sizeof(mode_sizes[0]),
	                         mrows, nm};
}

/* The machine: pinned to the CPU we are on (best effort: a measurement stays on one core;
 * "pinned_cpu" is -1 in the JSON when it could not be), the TSC, ipsec-mb's architecture,
 * the CPU's identity. */
static void speed_machine(struct machine *m)
{
	m->cpu = secho_cpu_pin_here();
	if (m->cpu < 0)
		m->cpu = -1;
	m->hz = secho_tsc_hz();
	IMB_ARCH imb_arch = IMB_ARCH_NONE;
	{
		IMB_MGR *mgr = alloc_mb_mgr(0);
		if (mgr) {
			init_mb_mgr_auto(mgr, &imb_arch);
			free_mb_mgr(mgr);
		}
	}
	static const char *const arch_names[] = {"none", "no-aesni", "sse",
	                                         "avx",  "avx2",     "avx512"};
	m->arch = (unsigned)imb_arch < sizeof(arch_names) / sizeof(arch_names[0])
	                  ? arch_names[imb_arch]
	                  : "?";

	cpu_ident(m->vendor, &m->family, &m->model);
	m->gcm_auto = secho_impl_resolve(SECHO_IMPL_AUTO);
}

/* Our implementations to measure: all this CPU has, or the one --impl names. */
static void speed_ids(const struct opts *o, struct machine *m)
{
	m->nids = 0;
	for (int i = SECHO_IMPL_PORTABLE; i < SECHO_IMPL_COUNT; i++)
		if ((!o->one_impl || (secho_impl_id)i == o->impl) &&
		    secho_impl_available((secho_impl_id)i))
			m->ids[m->nids++] = (secho_impl_id)i;
}

/* The banner (text output only). */
static void speed_banner(const struct opts *o, const struct machine *m)
{
	printf("secho speed: %s (%s family %u model %u), TSC %.3f GHz (calibrated against "
	       "CLOCK_MONOTONIC_RAW)",
	       cli_cpu_model(), m->vendor, m->family, m->model, m->hz / 1e9);
	if (m->cpu >= 0)
		printf(", pinned to CPU %d", m->cpu);
	printf("\nGCM dispatch: auto = %s", secho_impl_name(m->gcm_auto));
	if (m->gcm_auto != secho_impl_best())
		printf(" (forced; the CPU's best: %s)", secho_impl_name(secho_impl_best()));
	printf("\npeers: %s, Intel ipsec-mb %s (%s); ours:", OpenSSL_version(OPENSSL_VERSION),
	       imb_get_version_str(), m->arch);
	for (size_t i = 0; i < m->nids; i++)
		printf(" %s", secho_impl_name(m->ids[i]));
	printf("\neach value: median of %u runs, each run the fastest of its ~25 us "
	       "bursts; "
	       "new IV\nevery call; GCM with 16-byte AAD and 16-byte tag; budget %.1f s\n",
	       o->repeat, o->seconds);
	fflush(stdout);
}

/* Measure every row at every size it takes, within the budget. */
static void speed_measure(const struct opts *o, const struct machine *m, struct table tabs[2],
                          struct bench *b, uint8_t *in, uint8_t *out, const uint8_t key[32])
{
	size_t cells = 0;
	for (int t = 0; t < 2; t++)
		for (size_t i = 0; i < tabs[t].nrows; i++)
			for (size_t j = 0; j < tabs[t].nsizes; j++)
				cells += size_ok(&tabs[t].rows[i], tabs[t].sizes[j]);

	/* Each repeat's slice, in TSC cycles; the estimate phase adds about 1/4 more. */
	double slice = o->seconds / (double)(cells ? cells : 1) / (o->repeat + 1.25) * m->hz;
	bool progress = !o->json && isatty(STDERR_FILENO);

	for (int t = 0; t < 2; t++) {
		for (size_t i = 0; i < tabs[t].nrows; i++) {
			struct row *r = &tabs[t].rows[i];
			memset(b, 0, sizeof(*b));
			b->row = r;
			b->in = in;
			b->out = out;
			if (getrandom(b->iv, sizeof(b->iv), 0) != (ssize_t)sizeof(b->iv) ||
			    getrandom(b->aad, sizeof(b->aad), 0) != (ssize_t)sizeof(b->aad))
				memset(b->iv, 0x5c, sizeof(b->iv));
			bench_setup(b, key);
			if (progress) {
				fprintf(stderr, "\r  measuring %-28s", r->label);
				fflush(stderr);
			}
			for (size_t j = 0; r->avail && j < tabs[t].nsizes; j++) {
				size_t len = tabs[t].sizes[j];
				if (!size_ok(r, len))
					continue;
				r->cyc[j] = measure(b, len, slice, o->repeat);
				if (r->cyc[j] < 0) {
					r->avail = false;
					snprintf(r->why, sizeof(r->why), "call failed at %zu bytes",
					         len);
				}
			}
			bench_release(b);
		}
	}
	if (progress)
		fprintf(stderr, "\r%50s\r", "");
}

/* The report as JSON on stdout. Returns the exit status so far. */
static int speed_json(const struct opts *o, const struct machine *m, const struct table tabs[2])
{
	json_t *root = json_object(), *mach = json_object(), *impls = json_array();
	json_object_set_new(mach, "cpu", json_string(cli_cpu_model()));
	json_object_set_new(mach, "vendor", json_string(m->vendor));
	json_object_set_new(mach, "family", json_integer(m->family));
	json_object_set_new(mach, "model", json_integer(m->model));
	json_object_set_new(mach, "gcm_auto", json_string(secho_impl_name(m->gcm_auto)));
	json_object_set_new(mach, "gcm_best", json_string(secho_impl_name(secho_impl_best())));
	json_object_set_new(mach, "tsc_hz", json_real(m->hz));
	json_object_set_new(mach, "tsc_calibration", json_string("CLOCK_MONOTONIC"));
	json_object_set_new(mach, "online_cpus", json_integer(sysconf(_SC_NPROCESSORS_ONLN)));
	json_object_set_new(mach, "pinned_cpu", json_integer(m->cpu));
	for (size_t i = 0; i < m->nids; i++)
		json_array_append_new(impls, json_string(secho_impl_name(m->ids[i])));
	json_t *peers = json_object();
	json_object_set_new(peers, "openssl", json_string(OpenSSL_version(OPENSSL_VERSION)));
	json_object_set_new(peers, "ipsec_mb", json_string(imb_get_version_str()));
	json_object_set_new(peers, "ipsec_mb_arch", json_string(m->arch));
	json_object_set_new(root, "machine", mach);
	json_object_set_new(root, "implementations", impls);
	json_object_set_new(root, "peers", peers);
	json_object_set_new(root, "repeat", json_integer(o->repeat));
	json_object_set_new(root, "seconds", json_real(o->seconds));
	json_object_set_new(root, "statistic", json_string("median"));
	json_object_set_new(root, "ratio",
	                    json_string("peer cycles per packet / our "
	                                "cycles per packet (>1: ours faster)"));
	json_object_set_new(root, "gcm", table_json(&tabs[0], m->hz));
	json_object_set_new(root, "modes", table_json(&tabs[1], m->hz));
	char *s = json_dumps(root, JSON_INDENT(1) | JSON_REAL_PRECISION(6));
	json_decref(root);
	if (!s)
		return cli_err(CMD, "JSON encoding failed");
	printf("%s\n", s);
	free(s);
	return CLI_OK;
}

int cmd_speed(int argc, char *argv[])
{
	struct opts o;
	struct machine mach;
	struct table tabs[2];
	int rc = speed_parse(argc, argv, &o);

	if (rc >= 0)
		return rc;
	if (optind < argc)
		return cli_usage_err(CMD, "unexpected argument '%.64s'", argv[optind]);
	if (o.seconds < 0)
		o.seconds = o.quick ? 4 : 45;
	if (!o.repeat)
		o.repeat = o.quick ? 3 : 5;
	speed_ids(&o, &mach);
	speed_rows(&o, &mach, tabs);

	size_t maxlen = 0;
	for (int t = 0; t < 2; t++)
		for (size_t j = 0; j < tabs[t].nsizes; j++)
			if (tabs[t].sizes[j] > maxlen)
				maxlen = tabs[t].sizes[j];
	size_t bufsz = maxlen * BATCH_MAX + 64;
	uint8_t *in = aligned_alloc(64, (bufsz + 63) & ~(size_t)63);
	uint8_t *out = aligned_alloc(64, (bufsz + 63) & ~(size_t)63);
	uint8_t key[32];
	struct bench *b = calloc(1, sizeof(*b));
	rc = CLI_FAIL;
	if (!in || !out || !b) {
		cli_err(CMD, "out of memory for %zu-byte buffers", bufsz);
		goto out;
	}
	if (getrandom(key, sizeof(key), 0) != (ssize_t)sizeof(key)) {
		cli_err(CMD, "getrandom: %s", strerror(errno));
		goto out;
	}
	for (size_t i = 0; i < bufsz; i++)
		in[i] = (uint8_t)(i * 131 + 7);
	memset(out, 0, bufsz);

	speed_machine(&mach);
	if (!o.json)
		speed_banner(&o, &mach);
	speed_measure(&o, &mach, tabs, b, in, out, key);
	if (o.json) {
		if (speed_json(&o, &mach, tabs) != CLI_OK)
			goto out;
	} else {
		if (tabs[0].nrows)
			print_table(&tabs[0], mach.hz);
		if (tabs[1].nrows)
			print_table(&tabs[1], mach.hz);
	}
	rc = fflush(stdout) == 0 ? CLI_OK : cli_err(CMD, "writing stdout: %s", strerror(errno));
out:
	secho_wipe(key, sizeof(key));
	if (b)
		secho_wipe(b, sizeof(*b));
	free(b);
	free(in);
	free(out);
	return rc;
}
