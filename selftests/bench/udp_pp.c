// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * UDP ping-pong, to tell the cost of the guests' network path from sroce's.
 *
 *   udp_pp -s PORT [-2]                  echo server (runs until killed)
 *   udp_pp -c IP PORT SIZE ITERS [-2]    client: prints usec per round trip
 *
 * With -2 the server answers every datagram with two: a small one first
 * (like a transport ACK) and then the echo, which is the packet pattern of
 * one RC SEND round trip. The client waits for both.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAXSZ 65000

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int serve(int fd, int two)
{
	static char buf[MAXSZ];
	struct sockaddr_in from;
	socklen_t fl;
	ssize_t n;

	for (;;) {
		fl = sizeof(from);
		n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
		if (n < 0)
			return 1;
		if (two && sendto(fd, "a", 1, 0, (struct sockaddr *)&from, fl) != 1)
			return 1;
		if (sendto(fd, buf, n, 0, (struct sockaddr *)&from, fl) != n)
			return 1;
	}
}

/* Wait up to 5 s for one datagram; its length, or -1. */
static ssize_t recv_one(int fd, char *buf)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, 5000) != 1)
		return -1;
	return recv(fd, buf, MAXSZ, 0);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int client(int fd, const char *ip, int port, long size, long iters, int two)
{
	static char out[MAXSZ], in[MAXSZ];
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(port) };
	double t0, t1, t, *rtt;
	long i;

	if (inet_pton(AF_INET, ip, &to.sin_addr) != 1 || size < 1 || size > MAXSZ ||
	    iters < 1 || connect(fd, (struct sockaddr *)&to, sizeof(to))) {
		fprintf(stderr, "udp_pp: bad address or size\n");
		return 2;
	}
	rtt = calloc(iters, sizeof(*rtt));
	if (!rtt)
		return 1;
	for (i = 0; i < size; i++)
		out[i] = (char)i;
	t0 = now_us();
	for (i = 0; i < iters; i++) {
		t = now_us();
		out[0] = (char)i;
		if (send(fd, out, size, 0) != size)
			return 1;
		if (two && recv_one(fd, in) != 1) {
			fprintf(stderr, "udp_pp: iteration %ld: no first reply\n", i);
			return 1;
		}
		if (recv_one(fd, in) != size || memcmp(in, out, size)) {
			fprintf(stderr, "udp_pp: iteration %ld: bad or missing echo\n", i);
			return 1;
		}
		rtt[i] = now_us() - t;
	}
	t1 = now_us();
	qsort(rtt, iters, sizeof(*rtt), cmp_double);
	printf("udp_pp size %ld iters %ld median_usec %.1f usec/iter %.1f\n",
	       size, iters, rtt[iters / 2], (t1 - t0) / iters);
	free(rtt);
	return 0;
}

int main(int argc, char **argv)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET };

	if (fd < 0)
		return 1;
	if (argc >= 3 && !strcmp(argv[1], "-s")) {
		a.sin_port = htons(atoi(argv[2]));
		if (bind(fd, (struct sockaddr *)&a, sizeof(a))) {
			perror("udp_pp: bind");
			return 1;
		}
		return serve(fd, argc > 3 && !strcmp(argv[3], "-2"));
	}
	if (argc >= 6 && !strcmp(argv[1], "-c"))
		return client(fd, argv[2], atoi(argv[3]), atol(argv[4]), atol(argv[5]),
			      argc > 6 && !strcmp(argv[6], "-2"));
	fprintf(stderr, "usage: udp_pp -s PORT [-2] | -c IP PORT SIZE ITERS [-2]\n");
	return 2;
}
