/*
 * tests/tools/offload_hold.c - a meter that dies holding the interface: attaches the XDP
 * offload program (src/flow/offload/offload.h) to IFACE with a netlink attachment, which, unlike
 * the meter's BPF link, outlives the process (as on kernels without XDP links), prints
 * "attached PROG_ID" and waits to be killed. A test kills it with SIGKILL and checks that
 * the next `secho flow --offload xdp` removes what it left.
 *
 * usage: offload_hold IFACE native|skb      (exit 1 when it cannot attach, 2 bad usage)
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "flow/offload/offload.h"

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[2], "native") != 0 && strcmp(argv[2], "skb") != 0)) {
		fprintf(stderr, "usage: offload_hold IFACE native|skb\n");
		return 2;
	}
	struct secho_flow_offload_cfg cfg = {.ifname = argv[1],
	                                     .mode = !strcmp(argv[2], "skb") ? SECHO_IO_XDP_SKB
	                                                                     : SECHO_IO_XDP_NATIVE,
	                                     .attach_netlink = true};
	struct secho_flow_offload *o;
	char err[300];

	if (secho_flow_offload_open(&o, &cfg, err, sizeof(err))) {
		fprintf(stderr, "offload_hold: %s\n", err);
		return 1;
	}
	printf("attached %u\n", secho_flow_offload_prog_id(o));
	fflush(stdout);
	for (unsigned i = 0; i < 600; i++) /* bounded: 10 minutes at most */
		sleep(1);
	secho_flow_offload_close(o);
	return 0;
}
