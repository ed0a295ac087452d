/*
 * tests/tools/pcap_send.c - send every frame of a capture file on an interface, raw
 * (AF_PACKET), once, in order. For live tests: the malformed-frame corpus onto the virtual
 * wire. Frames the link cannot carry (shorter than an Ethernet header, longer than the
 * MTU) are skipped and counted. Prints "sent N skipped M" and exits 0 when it sent any.
 *
 * usage: pcap_send IFACE FILE
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 3 || !strcmp(argv[1], "--help")) {
		fprintf(stderr, "usage: pcap_send IFACE FILE\n");
		return 2;
	}
	char eb[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(argv[2], eb);
	if (!p) {
		fprintf(stderr, "pcap_send: %s\n", eb);
		return 2;
	}
	int fd = socket(AF_PACKET, SOCK_RAW, 0); /* protocol 0: send only, receive nothing */
	unsigned idx = if_nametoindex(argv[1]);
	if (fd < 0 || !idx) {
		fprintf(stderr, "pcap_send: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	struct sockaddr_ll sll = {
	        .sll_family = AF_PACKET, .sll_ifindex = (int)idx, .sll_halen = ETH_ALEN};
	struct pcap_pkthdr *h;
	const u_char *d;
	unsigned sent = 0, skipped = 0;
	while (pcap_next_ex(p, &h, &d) == 1) {
		if (h->caplen < ETH_HLEN) {
			skipped++;
			continue;
		}
		memcpy(sll.sll_addr, d, ETH_ALEN);
		if (sendto(fd, d, h->caplen, 0, (struct sockaddr *)&sll, sizeof(sll)) ==
		    (ssize_t)h->caplen)
			sent++;
		else
			skipped++;
		usleep(200); /* keep the order and stay far below any ring's size */
	}
	pcap_close(p);
	close(fd);
	printf("sent %u skipped %u\n", sent, skipped);
	return sent ? 0 : 1;
}
