/*
 * bench/evp_speed.c - a cipher through EVP and a chosen provider, with `openssl speed`'s
 * loop and `secho speed`'s timing, so that the two tools' figures can be told apart.
 *
 * The loop per message is the one `openssl speed -evp` (OpenSSL 3.0) runs: for an AEAD
 * cipher, set the IV length, EVP_CipherInit_ex with key and IV, one update in place over
 * the whole message, final; for the others one update per message on a context set up
 * once. The timing is secho speed's: TSC bursts of about 25 us, each sample keeps its
 * fastest burst (preemption and interrupts only ever slow a burst), the median of the
 * samples is reported. `openssl speed` instead divides the bytes by the process's CPU
 * time over the whole run, which on a shared machine also carries what other jobs'
 * interrupts cost this process.
 *
 *   evp_speed [--provider-path DIR] [--propquery Q] [--alg NAME] [--sizes LIST]
 *             [--repeat N] [--buffer-offset B]
 *
 * Prints one line per size: bytes, TSC cycles per message, MB/s. Defaults: the build
 * tree this binary belongs to (<tree>/secho.so), "provider=secho", AES-256-GCM, sizes 16 64
 * 256 1024 8192 16384, 5 samples, a 64-byte aligned buffer (--buffer-offset moves it).
 */
#include "cli/cli.h"
#include <getopt.h>
#include <libgen.h>
#include <math.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "secho/tsc.h"

static const char usage[] =
        "Usage: evp_speed [--provider-path DIR] [--propquery Q] [--alg NAME] [--sizes LIST]\n"
        "                 [--repeat N] [--buffer-offset B]\n"
        "\n"
        "A cipher through EVP and the provider chosen by Q, with openssl speed's loop (key\n"
        "and IV set again for every AEAD message) and secho speed's timing (fastest ~25 us\n"
        "TSC burst per sample, median of N samples). One line per size: bytes, TSC cycles\n"
        "per message, MB/s.\n"
        "\n"
        "  -p, --provider-path DIR  where secho.so is (default: this build tree)\n"
        "  -q, --propquery Q        property query (default provider=secho)\n"
        "  -a, --alg NAME           cipher (default AES-256-GCM)\n"
        "  -z, --sizes LIST         comma list of message sizes in bytes (default 16,64,256,\n"
        "                           1024,8192,16384; at most 65536)\n"
        "  -r, --repeat N           samples per size, 1..99 (default 5)\n"
        "  -o, --buffer-offset B    bytes past a 64-byte boundary, 0..63 (default 0)\n"
        "  -h, --help               this text\n";

#define BURST_CYC 50000.0 /* ~25 us: shorter than a time slice, long next to the TSC reads */
#define SLICE_CYC 2.0e8   /* per sample */
#define MAXSIZES  16
#define MAXLEN    65536

struct run {
	EVP_CIPHER_CTX *ctx;
	bool aead;
	int ivlen;
	unsigned char key[64], iv[16];
	unsigned char *buf;
};

/* One message as openssl speed does it. */
static bool once(struct run *r, int len)
{
	int outl, fl;
	if (r->aead && (EVP_CIPHER_CTX_ctrl(r->ctx, EVP_CTRL_AEAD_SET_IVLEN, r->ivlen, NULL) <= 0 ||
	                !EVP_CipherInit_ex(r->ctx, NULL, NULL, r->key, r->iv, -1)))
		return false;
	if (!EVP_CipherUpdate(r->ctx, r->buf, &outl, r->buf, len))
		return false;
	return !r->aead || EVP_CipherFinal_ex(r->ctx, r->buf + outl, &fl);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median over `repeat` samples of the fastest burst's cycles per message; -1 on error. */
static double measure(struct run *r, int len, unsigned repeat)
{
	double samples[100];
	uint64_t n = 1, t;
	for (int i = 0; i < 4; i++)
		if (!once(r, len))
			return -1;
	for (;;) {
		uint64_t t0 = secho_tsc_begin();
		for (uint64_t i = 0; i < n; i++)
			once(r, len);
		t = secho_tsc_end() - t0;
		if ((double)t >= SLICE_CYC / 16 || n >= (UINT64_C(1) << 30))
			break;
		n *= 2;
	}
	double per = (double)t / (double)n;
	uint64_t burst = per < BURST_CYC ? (uint64_t)(BURST_CYC / per) : 1;
	uint64_t bursts = (uint64_t)(SLICE_CYC / ((double)burst * per)) + 1;
	for (unsigned s = 0; s < repeat; s++) {
		double best = INFINITY;
		for (uint64_t k = 0; k < bursts; k++) {
			uint64_t t0 = secho_tsc_begin();
			for (uint64_t i = 0; i < burst; i++)
				once(r, len);
			double c = (double)(secho_tsc_end() - t0) / (double)burst;
			if (c < best)
				best = c;
		}
		samples[s] = best;
	}
	qsort(samples, repeat, sizeof(samples[0]), cmp_double);
	return repeat % 2 ? samples[repeat / 2]
	                  : (samples[repeat / 2 - 1] + samples[repeat / 2]) / 2;
}

/* A whole unsigned decimal 0..max (cli_parse_u64, the one parser the commands use). */
static bool parse_uint(const char *s, unsigned long max, unsigned long *v)
{
	uint64_t u;

	if (!cli_parse_u64(s, 0, max, &u))
		return false;
	*v = (unsigned long)u;
	return true;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	        {"provider-path", required_argument, NULL, 'p'},
	        {"propquery", required_argument, NULL, 'q'},
	        {"alg", required_argument, NULL, 'a'},
	        {"sizes", required_argument, NULL, 'z'},
	        {"repeat", required_argument, NULL, 'r'},
	        {"buffer-offset", required_argument, NULL, 'o'},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	char dir[4096] = "", *sizes_arg = NULL;
	const char *prop = "provider=secho", *alg = "AES-256-GCM";
	unsigned long repeat = 5, offset = 0, v;
	int o;
	opterr = 0;
	while ((o = getopt_long(argc, argv, "p:q:a:z:r:o:h", opts, NULL)) != -1) {
		switch (o) {
		case 'p':
			snprintf(dir, sizeof(dir), "%s", optarg);
			break;
		case 'q':
			prop = optarg;
			break;
		case 'a':
			alg = optarg;
			break;
		case 'z':
			sizes_arg = optarg;
			break;
		case 'r':
			if (!parse_uint(optarg, 99, &repeat) || !repeat) {
				fprintf(stderr, "evp_speed: --repeat takes 1..99, not '%s'\n",
				        optarg);
				return 2;
			}
			break;
		case 'o':
			if (!parse_uint(optarg, 63, &offset)) {
				fprintf(stderr,
				        "evp_speed: --buffer-offset takes 0..63, not '%s'\n",
				        optarg);
				return 2;
			}
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fprintf(stderr,
			        "evp_speed: unknown option or missing value: %s (see --help)\n",
			        argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "evp_speed: unexpected argument '%s' (see --help)\n", argv[optind]);
		return 2;
	}
	int sizes[MAXSIZES] = {16, 64, 256, 1024, 8192, 16384}, nsizes = 6;
	if (sizes_arg) {
		char *copy = strdup(sizes_arg), *save = NULL, *tok;
		nsizes = 0;
		for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			if (nsizes == MAXSIZES || !parse_uint(tok, MAXLEN, &v) || !v) {
				fprintf(stderr,
				        "evp_speed: --sizes takes up to %d sizes of 1..%d bytes, "
				        "not "
				        "'%s'\n",
				        MAXSIZES, MAXLEN, sizes_arg);
				free(copy);
				return 2;
			}
			sizes[nsizes++] = (int)v;
		}
		free(copy);
		if (!nsizes) {
			fprintf(stderr, "evp_speed: --sizes is empty\n");
			return 2;
		}
	}
	if (!dir[0]) { /* <tree>/bench/evp_speed -> <tree> */
		char exe[4096];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n > 0) {
			exe[n] = '\0';
			snprintf(dir, sizeof(dir), "%s", dirname(dirname(exe)));
		}
	}
	OSSL_PROVIDER_set_default_search_path(NULL, dir);
	OSSL_PROVIDER *sp = OSSL_PROVIDER_load(NULL, "secho"),
	              *dp = OSSL_PROVIDER_load(NULL, "default");
	EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, alg, prop);
	if (!sp || !dp || !c) {
		fprintf(stderr, "evp_speed: %s with '%s' not available (secho.so from %s): %s\n",
		        alg, prop, dir, ERR_reason_error_string(ERR_peek_last_error()));
		return 1;
	}
	static unsigned char mem[MAXLEN + 128] __attribute__((aligned(64)));
	struct run r = {.ctx = EVP_CIPHER_CTX_new(), .buf = mem + offset};
	r.aead = EVP_CIPHER_get_flags(c) & EVP_CIPH_FLAG_AEAD_CIPHER;
	r.ivlen = EVP_CIPHER_get_iv_length(c);
	for (size_t i = 0; i < sizeof(r.key); i++)
		r.key[i] = (unsigned char)(i * 37 + 1);
	if (!EVP_CipherInit_ex(r.ctx, c, NULL, r.key, r.iv, 1) ||
	    !EVP_CIPHER_CTX_set_padding(r.ctx, 0)) {
		fprintf(stderr, "evp_speed: init failed\n");
		return 1;
	}
	double hz = secho_tsc_hz();
	printf("# evp_speed: %s, %s, %s, TSC %.3f GHz, median of %lu samples\n", alg, prop,
	       OSSL_PROVIDER_get0_name(EVP_CIPHER_get0_provider(c)), hz / 1e9, repeat);
	for (int i = 0; i < nsizes; i++) {
		double cyc = measure(&r, sizes[i], (unsigned)repeat);
		if (cyc < 0) {
			fprintf(stderr, "evp_speed: %s failed at %d bytes\n", alg, sizes[i]);
			return 1;
		}
		printf("%d %.1f %.1f\n", sizes[i], cyc, sizes[i] * hz / cyc / 1e6);
	}
	EVP_CIPHER_CTX_free(r.ctx);
	EVP_CIPHER_free(c);
	OSSL_PROVIDER_unload(sp);
	OSSL_PROVIDER_unload(dp);
	return 0;
}
