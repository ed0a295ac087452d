/*
 * bench/naive_peer.c - the endpoint a user might write first, for the benchmark only:
 * an ordinary UDP socket server that answers each datagram with the same wire format as
 * secho (16-byte secure header, AES-256-GCM ciphertext, tag), calling OpenSSL EVP once
 * per packet, one recvfrom() and one sendto() per packet, through the kernel's IP stack.
 * (The honest naive version: one EVP context, cipher and key set again for every packet,
 * as the EVP documentation's examples do.) Sequence numbers come from a counter in memory.
 *
 * usage: naive_peer --key FILE --ip ADDR [--ports 4000,4001] [--seconds S]
 * Prints packets answered and CPU time per packet (getrusage) at exit.
 */
#include "cli/cli.h"
#include <arpa/inet.h>
#include <errno.h>
#include <openssl/evp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "secho/keyfile.h"
#include "sys/clock.h"

static volatile sig_atomic_t stop;
static void on_sig(int s)
{
	(void)s;
	stop = 1;
}

int main(int argc, char **argv)
{
	const char *key_path = NULL, *ip = NULL;
	unsigned ports[2] = {4000, 4001};
	double seconds = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--key") && i + 1 < argc)
			key_path = argv[++i];
		else if (!strcmp(argv[i], "--ip") && i + 1 < argc)
			ip = argv[++i];
		else if (!strcmp(argv[i], "--ports") && i + 1 < argc) {
			char items[2][CLI_ITEM_MAX];
			const char *why;
			uint64_t s, o;
			if (cli_parse_list(argv[++i], items, 2, &why) != 2 ||
			    !cli_parse_u64(items[0], 1, 65535, &s) ||
			    !cli_parse_u64(items[1], 1, 65535, &o) || s == o) {
				fprintf(stderr,
				        "naive_peer: --ports '%s': not two different ports "
				        "S,O in 1..65535\n",
				        argv[i]);
				return 2;
			}
			ports[0] = (unsigned)s;
			ports[1] = (unsigned)o;
		} else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
			if (!cli_parse_double(argv[++i], 0, 86400, &seconds)) {
				fprintf(stderr, "naive_peer: --seconds '%s': not 0..86400\n",
				        argv[i]);
				return 2;
			}
		} else {
			fprintf(stderr, "usage: naive_peer --key FILE --ip ADDR [--ports S,O] "
			                "[--seconds S]\n");
			return 2;
		}
	}
	if (!key_path || !ip) {
		fprintf(stderr, "naive_peer: --key and --ip are required\n");
		return 2;
	}
	struct secho_keyfile k;
	char err[256];
	if (secho_keyfile_load(key_path, &k, err, sizeof(err)) != 0) {
		fprintf(stderr, "naive_peer: %s\n", err);
		return 2;
	}
	int fds[2];
	for (int i = 0; i < 2; i++) {
		struct sockaddr_in a = {.sin_family = AF_INET,
		                        .sin_port = htons((uint16_t)ports[i])};
		fds[i] = socket(AF_INET, SOCK_DGRAM, 0);
		if (fds[i] < 0 || inet_pton(AF_INET, ip, &a.sin_addr) != 1 ||
		    bind(fds[i], (struct sockaddr *)&a, sizeof(a)) < 0) {
			fprintf(stderr, "naive_peer: bind %s:%u: %s\n", ip, ports[i],
			        strerror(errno));
			return 2;
		}
	}
	signal(SIGINT, on_sig);
	signal(SIGTERM, on_sig);
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	uint64_t seq = 1, answered = 0;
	uint8_t in[2048], out[2048];
	double t_end = seconds > 0 ? secho_mono_s() + seconds : 0;
	struct pollfd pf[2] = {{.fd = fds[0], .events = POLLIN}, {.fd = fds[1], .events = POLLIN}};
	while (!stop && (!t_end || secho_mono_s() < t_end)) {
		if (poll(pf, 2, 100) <= 0)
			continue;
		for (int i = 0; i < 2; i++) {
			if (!(pf[i].revents & POLLIN))
				continue;
			struct sockaddr_in from;
			socklen_t fl = sizeof(from);
			ssize_t n = recvfrom(fds[i], in, 1440, MSG_DONTWAIT,
			                     (struct sockaddr *)&from, &fl);
			if (n < 0)
				continue;
			uint8_t *h = out;
			h[0] = 1;
			h[1] = (uint8_t)i; /* engine flag: 0 streaming port, 1 offload port */
			h[2] = (uint8_t)(k.key_id >> 8);
			h[3] = (uint8_t)k.key_id;
			memcpy(h + 4, k.salt, 4);
			for (int b = 0; b < 8; b++)
				h[8 + b] = (uint8_t)(seq >> (56 - 8 * b));
			seq++;
			int l;
			EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, k.key, h + 4);
			EVP_EncryptUpdate(ctx, NULL, &l, h, 16);
			EVP_EncryptUpdate(ctx, out + 16, &l, in, (int)n);
			EVP_EncryptFinal_ex(ctx, out + 16 + n, &l);
			EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, out + 16 + n);
			if (sendto(fds[i], out, (size_t)n + 32, 0, (struct sockaddr *)&from, fl) >
			    0)
				answered++;
		}
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
	             (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
	printf("naive_peer: answered %llu, cpu %.3f s, %.0f ns cpu per packet\n",
	       (unsigned long long)answered, cpu, answered ? cpu * 1e9 / (double)answered : 0.0);
	EVP_CIPHER_CTX_free(ctx);
	secho_keyfile_wipe(&k);
	return 0;
}
