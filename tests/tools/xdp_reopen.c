/*
 * tests/tools/xdp_reopen.c - the AF_XDP backend's close contract: once secho_io_close()
 * returns, the same interface queue can be bound again at once. Opens the AF_XDP backend
 * on IFACE queue 0 in MODE (native or skb), closes it and reopens it immediately, ROUNDS
 * times, alternating the XDP mode when MODE is "alternate" (as a test that runs native and
 * then generic XDP on one interface does). The kernel releases a closed socket's buffer
 * pool asynchronously; without waiting for that release, a reopen fails with EBUSY.
 *
 * Prints "reopened N of M" and exits 0 when every reopen worked, 1 when one failed (its
 * error on stderr), 3 when AF_XDP cannot be opened here at all, 2 on bad usage.
 *
 * usage: xdp_reopen IFACE native|skb|alternate ROUNDS
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "secho/io.h"

int main(int argc, char **argv)
{
	if (argc != 4 || !strcmp(argv[1], "--help")) {
		fprintf(stderr, "usage: xdp_reopen IFACE native|skb|alternate ROUNDS\n");
		return 2;
	}
	bool alternate = !strcmp(argv[2], "alternate");
	enum secho_io_xdp_mode mode = SECHO_IO_XDP_NATIVE;
	if (!strcmp(argv[2], "skb"))
		mode = SECHO_IO_XDP_SKB;
	else if (strcmp(argv[2], "native") != 0 && !alternate) {
		fprintf(stderr, "xdp_reopen: mode '%s' is not native, skb or alternate\n", argv[2]);
		return 2;
	}
	char *end;
	long rounds = strtol(argv[3], &end, 10);
	if (*end || rounds < 1 || rounds > 1000) {
		fprintf(stderr, "xdp_reopen: ROUNDS '%s' is not in 1..1000\n", argv[3]);
		return 2;
	}
	struct secho_io_cfg cfg = {.kind = SECHO_IO_XDP, .ifname = argv[1], .xdp_copy = true};
	char err[512];
	long ok = 0;
	for (long i = 0; i <= rounds; i++) {
		cfg.xdp_mode = alternate ? (i % 2 ? SECHO_IO_XDP_SKB : SECHO_IO_XDP_NATIVE) : mode;
		struct secho_io *io = secho_io_open(&cfg, err, sizeof(err));
		if (!io) {
			fprintf(stderr, "xdp_reopen: open %ld of %ld: %s\n", i, rounds, err);
			if (i == 0)
				return errno == EOPNOTSUPP || errno == EPROTONOSUPPORT ? 3 : 1;
			break;
		}
		secho_io_close(io);
		if (i > 0)
			ok++;
	}
	printf("reopened %ld of %ld\n", ok, rounds);
	return ok == rounds ? 0 : 1;
}
