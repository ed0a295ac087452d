/*
 * src/cli/crypt.c - `secho crypt`: one whole message from stdin to stdout, any mode.
 *
 * The message is read completely before anything is written, so that GCM decryption
 * can release plaintext only after its tag verified (and so that a bad block-mode
 * length is refused before any output). The key is parsed into a heap buffer, expanded,
 * and both copies are wiped as soon as the expanded key is no longer needed; the hex text
 * of every --key in argv is overwritten (an earlier one when the next is seen, the last
 * after parsing) so that none lingers in /proc/PID/cmdline longer than necessary. No error message
 * contains key bytes.
 */
#include "cli/cli.h"
#include "secho/fileio.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "secho/gcm.h"
#include "secho/modes.h"

static const char *const CMD = "crypt";

enum mode { M_NONE, M_GCM, M_ECB, M_CBC, M_PCBC, M_CTR, M_CFB, M_OFB };
static const char *const mode_names[] = {"", "gcm", "ecb", "cbc", "pcbc", "ctr", "cfb", "ofb"};

static void help(void)
{
	printf("Usage: secho crypt -e|-d --mode MODE --key HEX [--iv HEX] [--aad HEX]\n"
	       "                   [--impl auto|portable|aesni|vaes|vaes-split]\n\n"
	       "Encrypt (-e) or decrypt (-d) all of stdin to stdout with AES.\n\n"
	       "  -e, --encrypt      encrypt\n"
	       "  -d, --decrypt      decrypt\n"
	       "  -m, --mode MODE    gcm, ecb, cbc, pcbc, ctr, cfb (CFB128) or ofb\n"
	       "  -k, --key HEX      16, 24 or 32 bytes (AES-128/192/256); never printed\n"
	       "  -i, --iv HEX       16 bytes for cbc, pcbc, ctr (initial counter block), cfb,\n"
	       "                     ofb; 1 or more bytes for gcm (12 is the standard size);\n"
	       "                     not used by ecb\n"
	       "  -a, --aad HEX      additional authenticated data (gcm only; default none)\n"
	       "  -I, --impl NAME    implementation (default auto: the best on this CPU)\n"
	       "  -h, --help         this text\n\n"
	       "GCM: encryption writes ciphertext || 16-byte tag; decryption reads\n"
	       "ciphertext || tag and writes the plaintext only when the tag verifies.\n"
	       "ECB, CBC and PCBC take whole 16-byte blocks (no padding is added).\n\n"
	       "Exit status: 0 ok, 1 authentication or I/O failure (no output), 2 bad usage.\n");
}

/* Parse one hex option value; the message names the option (and, unless secret, the
 * value). Returns false after printing the error. */
static bool hex_opt(const char *opt, const char *s, bool secret, uint8_t **out, size_t *len)
{
	const char *why;
	if (cli_parse_hex(s, out, len, &why))
		return true;
	if (secret)
		cli_usage_err(CMD, "%s: %s (value not shown)", opt, why);
	else
		cli_usage_err(CMD, "%s '%.64s%s': %s", opt, s, strlen(s) > 64 ? "..." : "", why);
	return false;
}

/* Overwrite an argument's text in argv (NULL: nothing to do). */
static void wipe_arg(char *s)
{
	if (s)
		secho_wipe(s, strlen(s));
}

/* Run the chosen mode over buf in place. Returns a SECHO_* code. */
static int run_mode(enum mode m, bool enc, const secho_aes_key *k, uint8_t iv[16], uint8_t *buf,
                    size_t n)
{
	secho_stream s;
	int r;
	switch (m) {
	case M_ECB:
		return enc ? secho_ecb_encrypt(k, buf, buf, n) : secho_ecb_decrypt(k, buf, buf, n);
	case M_CBC:
		return enc ? secho_cbc_encrypt(k, iv, buf, buf, n)
		           : secho_cbc_decrypt(k, iv, buf, buf, n);
	case M_PCBC:
		return enc ? secho_pcbc_encrypt(k, iv, buf, buf, n)
		           : secho_pcbc_decrypt(k, iv, buf, buf, n);
	case M_CTR:
		r = secho_ctr_init(&s, k, iv);
		if (r == SECHO_OK)
			r = secho_ctr_update(&s, buf, buf, n);
		break;
	case M_CFB:
		r = secho_cfb_init(&s, k, iv);
		if (r == SECHO_OK)
			r = enc ? secho_cfb_encrypt(&s, buf, buf, n)
			        : secho_cfb_decrypt(&s, buf, buf, n);
		break;
	case M_OFB:
		r = secho_ofb_init(&s, k, iv);
		if (r == SECHO_OK)
			r = secho_ofb_update(&s, buf, buf, n);
		break;
	default:
		return SECHO_EINVAL;
	}
	secho_stream_wipe(&s);
	return r;
}

int cmd_crypt(int argc, char *argv[])
{
	static const struct option opts[] = {
	        {"encrypt", no_argument, NULL, 'e'},
	        {"decrypt", no_argument, NULL, 'd'},
	        {"mode", required_argument, NULL, 'm'},
	        {"key", required_argument, NULL, 'k'},
	        {"iv", required_argument, NULL, 'i'},
	        {"aad", required_argument, NULL, 'a'},
	        {"impl", required_argument, NULL, 'I'},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	int dir = 0; /* 1 encrypt, -1 decrypt */
	enum mode mode = M_NONE;
	char *key_hex = NULL;
	const char *iv_hex = NULL, *aad_hex = NULL;
	secho_impl_id impl = SECHO_IMPL_AUTO;
	uint8_t *key = NULL, *iv = NULL, *aad = NULL, *buf = NULL;
	size_t key_len = 0, iv_len = 0, aad_len = 0, n = 0;
	int rc = CLI_USAGE, c;

	while ((c = getopt_long(argc, argv, ":edm:k:i:a:I:h", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
		case 'd':
			if (dir && dir != (c == 'e' ? 1 : -1))
				return cli_usage_err(CMD,
				                     "choose one of -e (encrypt) and -d (decrypt)");
			dir = c == 'e' ? 1 : -1;
			break;
		case 'm':
			mode = M_NONE;
			for (int i = M_GCM; i <= M_OFB; i++)
				if (!strcmp(optarg, mode_names[i]))
					mode = (enum mode)i;
			if (mode == M_NONE)
				return cli_usage_err(CMD,
				                     "unknown mode '%.32s' (gcm, ecb, cbc, pcbc, "
				                     "ctr, cfb, ofb)",
				                     optarg);
			break;
		case 'k':
			/* The last --key wins; an earlier one is overwritten in argv at once so
			 * that no key given on the command line lingers in /proc/PID/cmdline. */
			wipe_arg(key_hex);
			key_hex = optarg;
			break;
		case 'i':
			iv_hex = optarg;
			break;
		case 'a':
			aad_hex = optarg;
			break;
		case 'I':
			if (!cli_parse_impl(CMD, optarg, &impl))
				return CLI_USAGE;
			break;
		case 'h':
			help();
			return CLI_OK;
		default:
			return cli_bad_option(CMD, c, argv);
		}
	}
	if (optind < argc)
		return cli_usage_err(CMD, "unexpected argument '%.64s' (input is read from stdin)",
		                     argv[optind]);
	if (!dir)
		return cli_usage_err(CMD, "missing -e (encrypt) or -d (decrypt)");
	if (mode == M_NONE)
		return cli_usage_err(CMD, "missing --mode (gcm, ecb, cbc, pcbc, ctr, cfb, ofb)");
	if (!key_hex)
		return cli_usage_err(CMD, "missing --key");
	if (mode == M_ECB && iv_hex)
		return cli_usage_err(CMD, "--iv: ECB does not use an IV");
	if (mode != M_ECB && !iv_hex)
		return cli_usage_err(CMD, "missing --iv (%s needs one)", mode_names[mode]);
	if (mode != M_GCM && aad_hex)
		return cli_usage_err(CMD, "--aad: only GCM authenticates additional data, not %s",
		                     mode_names[mode]);

	bool ok = hex_opt("--key", key_hex, true, &key, &key_len);
	wipe_arg(key_hex); /* overwrite the argv copy of the key */
	if (!ok)
		goto out;
	if (key_len != 16 && key_len != 24 && key_len != 32) {
		cli_usage_err(CMD, "--key: %zu bytes; AES keys are 16, 24 or 32 bytes", key_len);
		goto out;
	}
	if (iv_hex) {
		if (!hex_opt("--iv", iv_hex, false, &iv, &iv_len))
			goto out;
		if (mode == M_GCM && iv_len == 0) {
			cli_usage_err(CMD,
			              "--iv: GCM needs an IV of at least 1 byte (12 is standard)");
			goto out;
		}
		if (mode != M_GCM && iv_len != 16) {
			cli_usage_err(CMD, "--iv '%.64s': %zu bytes; %s needs 16", iv_hex, iv_len,
			              mode_names[mode]);
			goto out;
		}
	}
	if (aad_hex && !hex_opt("--aad", aad_hex, false, &aad, &aad_len))
		goto out;

	int e = secho_read_all(STDIN_FILENO, &buf, &n);
	if (e) {
		rc = cli_err(CMD, "reading stdin: %s", strerror(-e));
		goto out;
	}
	if ((mode == M_ECB || mode == M_CBC || mode == M_PCBC) && n % SECHO_AES_BLOCK) {
		cli_usage_err(CMD, "input is %zu bytes; %s needs a multiple of 16 (no padding)", n,
		              mode_names[mode]);
		goto out;
	}
	if (mode == M_GCM && dir < 0 && n < SECHO_GCM_TAG_LEN) {
		cli_usage_err(CMD,
		              "input is %zu bytes; GCM decryption needs ciphertext || "
		              "16-byte tag",
		              n);
		goto out;
	}

	size_t out_len = n;
	int r;
	if (mode == M_GCM) {
		secho_gcm_key gk;
		r = secho_gcm_key_init(&gk, key, key_len, impl);
		secho_wipe(key, key_len);
		if (r == SECHO_OK && dir > 0) {
			uint8_t *nb = realloc(buf, n + SECHO_GCM_TAG_LEN);
			if (!nb) {
				secho_gcm_key_wipe(&gk);
				rc = cli_err(CMD, "out of memory");
				goto out;
			}
			buf = nb;
			r = secho_gcm_seal(&gk, iv, iv_len, aad, aad_len, buf, buf, n, buf + n,
			                   SECHO_GCM_TAG_LEN);
			out_len = n + SECHO_GCM_TAG_LEN;
		} else if (r == SECHO_OK) {
			out_len = n - SECHO_GCM_TAG_LEN;
			r = secho_gcm_open(&gk, iv, iv_len, aad, aad_len, buf, buf, out_len,
			                   buf + out_len, SECHO_GCM_TAG_LEN);
		}
		secho_gcm_key_wipe(&gk);
	} else {
		secho_aes_key ak;
		uint8_t chain[16] = {0};
		if (iv)
			memcpy(chain, iv, 16);
		r = secho_aes_key_init(&ak, key, key_len, impl);
		secho_wipe(key, key_len);
		if (r == SECHO_OK)
			r = run_mode(mode, dir > 0, &ak, chain, buf, n);
		secho_aes_key_wipe(&ak);
	}
	if (r == SECHO_EAUTH) {
		rc = cli_err(CMD, "authentication failed: the GCM tag does not verify "
		                  "(wrong key, IV, AAD or tampered input); no output written");
		goto out;
	}
	if (r == SECHO_EUNAVAIL) {
		cli_usage_err(CMD, "implementation '%s' is not available", secho_impl_name(impl));
		goto out;
	}
	if (r != SECHO_OK) {
		rc = cli_err(CMD, "%s %s failed: %s", mode_names[mode],
		             dir > 0 ? "encryption" : "decryption", secho_strerror(r));
		goto out;
	}

	signal(SIGPIPE, SIG_IGN); /* report a closed stdout as an error instead of dying */
	e = secho_write_all(STDOUT_FILENO, buf, out_len);
	rc = e ? cli_err(CMD, "writing stdout: %s", strerror(-e)) : CLI_OK;
out:
	if (key) {
		secho_wipe(key, key_len);
		free(key);
	}
	if (buf) {
		secho_wipe(buf, n);
		free(buf);
	}
	free(iv);
	free(aad);
	return rc;
}
