/*
 * src/cli/keygen.c - `secho keygen --key-id N --out FILE [--shared] [--force]`.
 *
 * Writes a new key file (format: include/secho/keyfile.h, docs/PROTOCOL.md) with a key and
 * salt from getrandom(2), created 0600 with O_EXCL. Prints only the path and key id.
 */
#include "keygen.h"
#include "cli/cli.h"

#include <secho/keyfile.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void keygen_usage(FILE *f)
{
	fprintf(f, "usage: secho keygen --key-id N --out FILE [--shared] [--force]\n"
	           "\n"
	           "Write a new key file: key id N (0..65535), a 32-byte AES-256 key and a\n"
	           "4-byte IV salt, both from getrandom(2). The file is created with mode 0600\n"
	           "and is never overwritten unless --force is given (then it is replaced\n"
	           "atomically). The key itself is never printed.\n"
	           "\n"
	           "  -k, --key-id N   key id carried in every response's secure header\n"
	           "  -o, --out FILE   the key file to create\n"
	           "  -s, --shared     the key will serve several endpoints at once: each must\n"
	           "                   then run with its own `secho serve --instance N`, which\n"
	           "                   goes into its IVs and headers (docs/PROTOCOL.md)\n"
	           "  -f, --force      replace FILE if it exists\n"
	           "  -h, --help       this text\n");
}

int cmd_keygen(int argc, char *argv[])
{
	static const struct option opts[] = {
	        {"key-id", required_argument, NULL, 'k'}, {"out", required_argument, NULL, 'o'},
	        {"force", no_argument, NULL, 'f'},        {"shared", no_argument, NULL, 's'},
	        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
	};
	const char *out = NULL, *id_arg = NULL;
	bool force = false, shared = false;
	int c;

	optind = 0; /* glibc: full re-initialisation, argv[0] is the command name */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":k:o:fsh", opts, NULL)) != -1) {
		switch (c) {
		case 'k':
			id_arg = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'f':
			force = true;
			break;
		case 's':
			shared = true;
			break;
		case 'h':
			keygen_usage(stdout);
			return 0;
		case ':':
			fprintf(stderr, "secho keygen: option %s needs an argument\n",
			        argv[optind - 1]);
			return 2;
		default:
			fprintf(stderr,
			        "secho keygen: unknown option %s (see secho keygen --help)\n",
			        argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "secho keygen: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (!id_arg || !out) {
		fprintf(stderr, "secho keygen: --key-id and --out are required (see secho keygen "
		                "--help)\n");
		return 2;
	}
	uint64_t id;
	/* As the key file writes it: no leading zeros (see secho_keyfile_parse). */
	if (!cli_parse_u64(id_arg, 0, 65535, &id) || (id_arg[0] == '0' && id_arg[1])) {
		fprintf(stderr, "secho keygen: --key-id '%s' is not a number in 0..65535\n",
		        id_arg);
		return 2;
	}
	if (!*out) {
		fprintf(stderr, "secho keygen: --out is empty\n");
		return 2;
	}

	struct secho_keyfile k;
	char err[512];
	int rc = secho_keyfile_generate(&k, (uint16_t)id);
	if (rc) {
		fprintf(stderr, "secho keygen: getrandom: %s\n", strerror(-rc));
		return 1;
	}
	k.shared = shared ? 1 : 0;
	rc = secho_keyfile_write(out, &k, force, err, sizeof(err));
	secho_keyfile_wipe(&k);
	if (rc) {
		fprintf(stderr, "secho keygen: %s\n", err);
		return 1;
	}
	printf("wrote key id %u to %s (mode 0600%s)\n", (unsigned)id, out,
	       shared ? ", shared" : "");
	return 0;
}
