/*
 * tests/tools/slow_clients.c - a bounded slowloris: N TCP connections to 127.0.0.1:PORT,
 * each sending the start of an HTTP request and then one more header byte every INTERVAL
 * seconds, never finishing it. Watches for the server closing them.
 *
 *   slow_clients PORT [CLIENTS [INTERVAL [SECONDS]]]     (defaults 200 5 13)
 *
 * Loopback only. Prints "connected N" once every connection was attempted, then at the end
 * "clients N connected C closed K first F last L open O" (F, L: seconds after the start
 * when the server closed the first and the last of them; -1 when none). Exits 0 after
 * SECONDS, 2 on bad usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sys/clock.h"

#define MAX_CLIENTS 1000

/* Whole-string decimal in [lo, hi]. */
static bool num(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	if (!s || !*s || *s < '0' || *s > '9')
		return false;
	v = strtol(s, &end, 10);
	if (*end || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

int main(int argc, char **argv)
{
	static int fd[MAX_CLIENTS];
	static double closed_at[MAX_CLIENTS];
	long port, n = 200, interval = 5, seconds = 13;
	char head[128];
	double t0, next, first = -1, last = -1;
	long connected = 0, closed = 0, open_left = 0;

	if (argc < 2 || argc > 5 || !num(argv[1], 1, 65535, &port) ||
	    (argc > 2 && !num(argv[2], 1, MAX_CLIENTS, &n)) ||
	    (argc > 3 && !num(argv[3], 1, 60, &interval)) ||
	    (argc > 4 && !num(argv[4], 1, 120, &seconds))) {
		fprintf(stderr, "usage: slow_clients PORT [CLIENTS [INTERVAL [SECONDS]]]\n");
		return 2;
	}
	snprintf(head, sizeof(head), "GET /api HTTP/1.1\r\nHost: 127.0.0.1:%ld\r\nX-Slow: ", port);
	t0 = secho_mono_s();
	for (long i = 0; i < n; i++) {
		struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};

		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		closed_at[i] = -1;
		fd[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd[i] < 0 || connect(fd[i], (struct sockaddr *)&a, sizeof(a)) != 0 ||
		    send(fd[i], head, strlen(head), MSG_NOSIGNAL) < 0) {
			if (fd[i] >= 0)
				close(fd[i]);
			fd[i] = -1;
			continue;
		}
		connected++;
	}
	printf("connected %ld\n", connected);
	fflush(stdout);
	next = t0 + (double)interval;
	while (secho_mono_s() - t0 < (double)seconds) {
		struct pollfd p[MAX_CLIENTS];
		char buf[512];

		for (long i = 0; i < n; i++)
			p[i] = (struct pollfd){.fd = fd[i], .events = POLLIN | POLLRDHUP};
		(void)poll(p, (nfds_t)n, 100);
		for (long i = 0; i < n; i++) {
			if (fd[i] < 0 || !p[i].revents)
				continue;
			ssize_t r = recv(fd[i], buf, sizeof(buf), MSG_DONTWAIT);

			if (r > 0 || (r < 0 && (errno == EAGAIN || errno == EINTR)))
				continue; /* an answer (an error status): read on until it closes */
			closed_at[i] = secho_mono_s() - t0;
			close(fd[i]);
			fd[i] = -1;
		}
		if (secho_mono_s() >= next) {
			for (long i = 0; i < n; i++)
				if (fd[i] >= 0)
					(void)send(fd[i], "x", 1, MSG_NOSIGNAL);
			next += (double)interval;
		}
	}
	for (long i = 0; i < n; i++) {
		if (closed_at[i] >= 0) {
			closed++;
			if (first < 0 || closed_at[i] < first)
				first = closed_at[i];
			if (closed_at[i] > last)
				last = closed_at[i];
		}
		if (fd[i] >= 0) {
			open_left++;
			close(fd[i]);
		}
	}
	printf("clients %ld connected %ld closed %ld first %.1f last %.1f open %ld\n", n, connected,
	       closed, first, last, open_left);
	return 0;
}
