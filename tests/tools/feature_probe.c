/*
 * tests/tools/feature_probe.c - does this machine offer a kernel feature a test needs?
 * Asks the kernel directly, so that a test skips (UNAVAILABLE) only for a reason the
 * machine really has, and fails when the feature is there but secho could not use it.
 *
 *   feature_probe afalg       AF_ALG with the "gcm(aes)" AEAD: socket, bind, a 32-byte key
 *   feature_probe xdp IFACE   AF_XDP sockets, and an XDP program attached to IFACE in
 *                             generic (SKB) mode and detached again (give a device no
 *                             test uses, e.g. the namespace's lo)
 *   feature_probe xdp IFACE native
 *                             the same in native (driver) mode: IFACE's driver must offer
 *                             it (a veth does; lo does not), so give the test's own
 *                             interface while nothing else is attached to it
 *
 * Prints one line, "available" or the reason, and exits 0 (available), 3 (the machine
 * lacks it) or 2 (bad usage).
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <linux/if_alg.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef AF_XDP
#define AF_XDP 44
#endif

static int lacks(const char *what, int err)
{
	printf("%s: %s\n", what, strerror(err));
	return 3;
}

static int probe_afalg(void)
{
	struct sockaddr_alg sa = {
	        .salg_family = AF_ALG, .salg_type = "aead", .salg_name = "gcm(aes)"};
	static const unsigned char key[32];
	int fd = socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0), op;

	if (fd < 0)
		return lacks("AF_ALG socket (CONFIG_CRYPTO_USER_API)", errno);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = errno;

		close(fd);
		return lacks(
		        "AF_ALG aead gcm(aes) (CONFIG_CRYPTO_USER_API_AEAD, CONFIG_CRYPTO_GCM)", e);
	}
	if (setsockopt(fd, SOL_ALG, ALG_SET_KEY, key, sizeof(key)) != 0 ||
	    (op = accept(fd, NULL, NULL)) < 0) {
		int e = errno;

		close(fd);
		return lacks("AF_ALG gcm(aes) with a 256-bit key", e);
	}
	close(op);
	close(fd);
	printf("available\n");
	return 0;
}

static int probe_xdp(const char *ifname, bool native)
{
	/* r0 = XDP_PASS; exit */
	const struct bpf_insn prog[] = {
	        {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_PASS},
	        {.code = BPF_JMP | BPF_EXIT},
	};
	unsigned idx = if_nametoindex(ifname);
	int fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0), pfd, rc;

	if (!idx) {
		fprintf(stderr, "feature_probe: no interface %s\n", ifname);
		return 2;
	}
	if (fd < 0)
		return lacks("AF_XDP socket (CONFIG_XDP_SOCKETS)", errno);
	close(fd);
	pfd = bpf_prog_load(BPF_PROG_TYPE_XDP, "probe", "GPL", prog, 2, NULL);
	if (pfd < 0)
		return lacks("loading an XDP program (CONFIG_BPF_SYSCALL, CAP_BPF)", -pfd);
	__u32 mode = native ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE;

	rc = bpf_xdp_attach((int)idx, pfd, mode | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	if (rc < 0) {
		close(pfd);
		return lacks(native ? "attaching an XDP program in native mode"
		                    : "attaching an XDP program in generic mode",
		             -rc);
	}
	rc = bpf_xdp_detach((int)idx, mode, NULL);
	close(pfd);
	if (rc < 0)
		return lacks("detaching the probe's XDP program", -rc);
	printf("available\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "afalg"))
		return probe_afalg();
	if (argc == 3 && !strcmp(argv[1], "xdp"))
		return probe_xdp(argv[2], false);
	if (argc == 4 && !strcmp(argv[1], "xdp") && !strcmp(argv[3], "native"))
		return probe_xdp(argv[2], true);
	fprintf(stderr, "usage: feature_probe afalg | feature_probe xdp IFACE [native]\n");
	return 2;
}
