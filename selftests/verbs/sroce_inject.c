// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * A hostile RoCEv2 peer: sends hand-made packets and prints what comes back.
 *
 *   sroce_inject -s SRC_IP -d DST_IP send SPEC...
 *   sroce_inject -s SRC_IP -d DST_IP send -        (one SPEC per stdin line)
 *   sroce_inject -s SRC_IP listen [-t SECONDS] [-n COUNT]
 *
 * send builds each packet whole (IPv4, UDP to port 4791, BTH and extension
 * headers with kernel/sroce_pkt.c, payload, pad, ICRC with
 * kernel/sroce_icrc.c) and sends it through a raw IP socket, so every byte
 * is ours; the IPv4 header checksum and the ICRC are right unless a SPEC
 * says otherwise. It prints "sent N bytes" per packet, or "error: ..." and
 * exits 1. SPEC is whitespace-separated KEY=VALUE words (numbers in C
 * notation: 0x.. hex, else decimal):
 *
 *   op=NAME|NUM    opcode: a name of kernel/sroce_pkt.c's table with or
 *                  without "SROCE_" (RC_SEND_ONLY, RC_WRITE_FIRST,
 *                  RC_READ_REQUEST, RC_ACK, RC_READ_RESP_LAST, UD_SEND_ONLY,
 *                  ...; case ignored) or its number. Required.
 *   qpn= psn= pkey=(0xffff) ackreq= se= migreq=   BTH fields
 *   va= rkey= dmalen=      RETH (WRITE FIRST/ONLY, READ REQUEST)
 *   syn= msn=              AETH: syn=0x1f ACK, 0x60|code NAK, 0x20|t RNR
 *   imm= ieth= qkey= sqp=  ImmDt, IETH, DETH
 *   len=N                  payload bytes (0)
 *   seed=S off=O           payload byte i is pattern(S, O + i) (see
 *                          pattern_byte; the victim checks the same way);
 *                          without seed=, fill=B makes every byte B
 *   pad=N                  BTH pad count (default: what len needs)
 *   padbytes=N             pad bytes actually appended (default: pad)
 *   extra=N                N more zero bytes before the ICRC
 *   rawop=NUM              after building, overwrite the opcode byte (for
 *                          opcodes the table does not know); ICRC follows
 *   tver=N                 overwrite the BTH transport version
 *   icrc=bad               flip every bit of the ICRC
 *   trunc=N                cut N bytes off the end (IP and UDP lengths
 *                          follow, so the packet is short, not broken)
 *   cut=N                  drop the last N bytes before the ICRC, which
 *                          is computed over what is left: truncated
 *                          headers or payload with a good ICRC
 *   udplen=N               overwrite the UDP length (IP's stays right)
 *   sport=N                UDP source port (0xc000)
 *   count=N psnstep=K      send N copies, PSN K further each time (K=1)
 *
 * listen binds UDP port 4791 on SRC_IP (with a 32 MiB receive buffer, so
 * a burst is not lost) and prints one line per packet received, flushed
 * at once, until SECONDS (default 30) pass or COUNT packets came. It never
 * answers: a test sends the ACKs it wants with send.
 *
 *   rx OPNAME qpn=Q psn=P ackreq=A len=L crc=0xC [syn=0xSS
 *      kind=ACK|NAK|RNR code=C msn=M] [va=V rkey=R dmalen=D] [bad=ERR]
 *
 * Q, P, M and lengths are decimal; kind/code decode the AETH syndrome
 * (code is the NAK code or the credit/timer field); C is the CRC-32
 * (crc32_le from ~0, inverted) of the L payload bytes, pad excluded, for
 * checking what a victim sent. A packet the parser
 * refuses prints "rx bad=ERR opcode=0xNN len=L".
 *
 * Run it where SRC_IP is a local address (a network namespace on the far
 * end of a veth pair is the cheap way) and point the victim's QP at
 * SRC_IP. Raw sockets need CAP_NET_RAW.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sroce_pkt.h"
#include "sroce_icrc.h"
#include "sroce_psn.h"

#define MAX_PAYLOAD	8192
#define MAX_PKT		(SROCE_IPV4_HDR_LEN + SROCE_UDP_HDR_LEN + \
			 SROCE_MAX_HDR_LEN + MAX_PAYLOAD + 64 + SROCE_ICRC_LEN)

struct spec {
	struct sroce_pkt_hdrs h;
	int have_op;
	u32 len;
	int have_seed;
	u32 seed;
	u32 off;
	u8 fill;
	int pad;		/* -1: what len needs */
	int padbytes;		/* -1: same as pad */
	u32 extra;
	int rawop;		/* -1: none */
	int tver;		/* -1: keep */
	int bad_icrc;
	u32 trunc;
	u32 cut;
	int udplen;		/* -1: right */
	u16 sport;
	u32 count;
	u32 psnstep;
};

static struct in_addr src_ip, dst_ip;

/* The payload pattern sroce_victim checks: cheap, and no byte repeats soon. */
static u8 pattern_byte(u32 seed, u64 off)
{
	return (u8)(seed * 131u + off * 7u + (off >> 8) * 13u + 1u);
}

static int parse_num(const char *s, unsigned long long *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return (errno || end == s || *end) ? -1 : 0;
}

static int parse_op(const char *s, u8 *op)
{
	unsigned long long v;
	int i;

	if (!parse_num(s, &v) && v < 256) {
		*op = (u8)v;
		return 0;
	}
	if (!strncasecmp(s, "SROCE_", 6))
		s += 6;
	for (i = 0; i < 256; i++) {
		const char *n = sroce_opcode_table[i].name;

		if (!n)
			continue;
		if (!strncmp(n, "SROCE_", 6))
			n += 6;
		if (!strcasecmp(n, s)) {
			*op = (u8)i;
			return 0;
		}
	}
	return -1;
}

static void spec_init(struct spec *sp)
{
	memset(sp, 0, sizeof(*sp));
	sp->h.pkey = SROCE_DEFAULT_PKEY;
	sp->h.aeth_syn = SROCE_AETH_ACK_UNLIMITED;
	sp->pad = -1;
	sp->padbytes = -1;
	sp->rawop = -1;
	sp->tver = -1;
	sp->udplen = -1;
	sp->sport = 0xc000;
	sp->count = 1;
	sp->psnstep = 1;
}

static int spec_word(struct spec *sp, const char *w)
{
	const char *eq = strchr(w, '=');
	unsigned long long v = 0;
	char key[32];
	size_t kl;

	if (!eq || eq == w || (size_t)(eq - w) >= sizeof(key))
		return -1;
	kl = eq - w;
	memcpy(key, w, kl);
	key[kl] = 0;
	if (!strcmp(key, "op")) {
		sp->have_op = 1;
		return parse_op(eq + 1, &sp->h.opcode);
	}
	if (!strcmp(key, "icrc"))
		return strcmp(eq + 1, "bad") ? -1 : (sp->bad_icrc = 1, 0);
	if (parse_num(eq + 1, &v))
		return -1;
#define KEY(name, field, max)						\
	do {								\
		if (!strcmp(key, name)) {				\
			if (v > (max))					\
				return -1;				\
			field = v;					\
			return 0;					\
		}							\
	} while (0)
	KEY("qpn", sp->h.qpn, SROCE_24BIT_MASK);
	KEY("psn", sp->h.psn, SROCE_24BIT_MASK);
	KEY("pkey", sp->h.pkey, 0xffff);
	KEY("ackreq", sp->h.ackreq, 1);
	KEY("se", sp->h.se, 1);
	KEY("migreq", sp->h.migreq, 1);
	KEY("va", sp->h.reth_va, ~0ULL);
	KEY("rkey", sp->h.reth_rkey, 0xffffffffULL);
	KEY("dmalen", sp->h.reth_len, 0xffffffffULL);
	KEY("syn", sp->h.aeth_syn, 0xff);
	KEY("msn", sp->h.aeth_msn, SROCE_24BIT_MASK);
	KEY("imm", sp->h.imm, 0xffffffffULL);
	KEY("ieth", sp->h.ieth_rkey, 0xffffffffULL);
	KEY("qkey", sp->h.deth_qkey, 0xffffffffULL);
	KEY("sqp", sp->h.deth_sqp, SROCE_24BIT_MASK);
	KEY("len", sp->len, MAX_PAYLOAD);
	KEY("off", sp->off, 0xffffffffULL);
	KEY("fill", sp->fill, 0xff);
	KEY("pad", sp->pad, 3);
	KEY("padbytes", sp->padbytes, 64);
	KEY("extra", sp->extra, 64);
	KEY("rawop", sp->rawop, 0xff);
	KEY("tver", sp->tver, 15);
	KEY("trunc", sp->trunc, MAX_PKT);
	KEY("cut", sp->cut, MAX_PKT);
	KEY("udplen", sp->udplen, 0xffff);
	KEY("sport", sp->sport, 0xffff);
	KEY("count", sp->count, 1u << 24);
	KEY("psnstep", sp->psnstep, SROCE_24BIT_MASK);
	if (!strcmp(key, "seed")) {
		sp->have_seed = 1;
		sp->seed = (u32)v;
		return 0;
	}
#undef KEY
	return -1;
}

static u16 ip_csum(const u8 *p, u32 len)
{
	u32 sum = 0, i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (u32)p[i] << 8 | p[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (u16)~sum;
}

/* Lay out one packet in @buf; returns its length on the wire or -1. */
static int build(const struct spec *sp, u8 *buf)
{
	u32 bth_off = SROCE_IPV4_HDR_LEN + SROCE_UDP_HDR_LEN;
	struct sroce_pkt_hdrs h = sp->h;
	u32 pad = sp->pad < 0 ? sroce_pad_for(sp->len) : (u32)sp->pad;
	u32 padbytes = sp->padbytes < 0 ? pad : (u32)sp->padbytes;
	u32 tlen, total, icrc, i;
	u8 *p;
	int hl;

	h.pad = (u8)pad;
	hl = sroce_pkt_build(buf + bth_off, MAX_PKT - bth_off, &h);
	if (hl < 0) {
		fprintf(stderr, "error: cannot build opcode 0x%02x: %d\n",
			h.opcode, hl);
		return -1;
	}
	p = buf + bth_off + hl;
	for (i = 0; i < sp->len; i++)
		p[i] = sp->have_seed ? pattern_byte(sp->seed, (u64)sp->off + i) :
				       sp->fill;
	memset(p + sp->len, 0, padbytes + sp->extra);
	if (sp->rawop >= 0)
		buf[bth_off] = (u8)sp->rawop;
	if (sp->tver >= 0)
		buf[bth_off + 1] = (buf[bth_off + 1] & 0xf0) | (u8)sp->tver;
	tlen = hl + sp->len + padbytes + sp->extra;
	if (sp->cut > tlen) {
		fprintf(stderr, "error: cut=%u is more than the %u bytes\n",
			sp->cut, tlen);
		return -1;
	}
	tlen += SROCE_ICRC_LEN - sp->cut;
	total = bth_off + tlen;

	/* IPv4: no options, DF, an ID that is not 0 (the kernel fills 0) */
	buf[0] = 0x45;
	buf[1] = 0;
	buf[2] = total >> 8;
	buf[3] = total & 0xff;
	buf[4] = 0x5e;
	buf[5] = 0x0c;
	buf[6] = 0x40;
	buf[7] = 0;
	buf[8] = 64;
	buf[9] = SROCE_IPPROTO_UDP;
	memcpy(buf + 12, &src_ip, 4);
	memcpy(buf + 16, &dst_ip, 4);
	/* UDP, no checksum (IPv4 allows it; RoCEv2 senders do it) */
	p = buf + SROCE_IPV4_HDR_LEN;
	p[0] = sp->sport >> 8;
	p[1] = sp->sport & 0xff;
	p[2] = SROCE_UDP_PORT >> 8;
	p[3] = SROCE_UDP_PORT & 0xff;
	p[4] = (SROCE_UDP_HDR_LEN + tlen) >> 8;
	p[5] = (SROCE_UDP_HDR_LEN + tlen) & 0xff;

	/* A packet cut inside its BTH has no ICRC, just its last 4 bytes. */
	if (total >= sroce_icrc_hdrs_len(4) + SROCE_ICRC_LEN) {
		if (sroce_icrc_compute(buf, total, 4, &icrc)) {
			fprintf(stderr, "error: ICRC of a %u-byte packet\n",
				total);
			return -1;
		}
		if (sp->bad_icrc)
			icrc = ~icrc;
		icrc = htole32(icrc);
		memcpy(buf + total - SROCE_ICRC_LEN, &icrc, sizeof(icrc));
	}

	if (sp->trunc) {
		if (sp->trunc >= tlen) {
			fprintf(stderr, "error: trunc=%u leaves nothing\n",
				sp->trunc);
			return -1;
		}
		total -= sp->trunc;
		tlen -= sp->trunc;
		buf[2] = total >> 8;
		buf[3] = total & 0xff;
		p[4] = (SROCE_UDP_HDR_LEN + tlen) >> 8;
		p[5] = (SROCE_UDP_HDR_LEN + tlen) & 0xff;
	}
	if (sp->udplen >= 0) {
		p[4] = sp->udplen >> 8;
		p[5] = sp->udplen & 0xff;
	}
	buf[10] = 0;
	buf[11] = 0;
	i = ip_csum(buf, SROCE_IPV4_HDR_LEN);
	buf[10] = i >> 8;
	buf[11] = i & 0xff;
	return (int)total;
}

static int send_spec(int fd, char *line)
{
	static u8 buf[MAX_PKT];
	struct sockaddr_in to = { .sin_family = AF_INET };
	struct spec sp;
	char *w, *save = NULL;
	u32 n;
	int len;

	spec_init(&sp);
	for (w = strtok_r(line, " \t\r\n", &save); w;
	     w = strtok_r(NULL, " \t\r\n", &save)) {
		if (spec_word(&sp, w)) {
			fprintf(stderr, "error: bad word '%s'\n", w);
			return -1;
		}
	}
	if (!sp.have_op) {
		fprintf(stderr, "error: no op=\n");
		return -1;
	}
	to.sin_addr = dst_ip;
	for (n = 0; n < sp.count; n++) {
		len = build(&sp, buf);
		if (len < 0)
			return -1;
		if (sendto(fd, buf, len, 0, (struct sockaddr *)&to,
			   sizeof(to)) != len) {
			fprintf(stderr, "error: sendto: %s\n", strerror(errno));
			return -1;
		}
		printf("sent %d bytes op=0x%02x psn=%u\n", len,
		       buf[SROCE_IPV4_HDR_LEN + SROCE_UDP_HDR_LEN], sp.h.psn);
		sp.h.psn = sroce_psn_add(sp.h.psn, sp.psnstep);
	}
	fflush(stdout);
	return 0;
}

static int cmd_send(int argc, char **argv)
{
	char line[4096];
	size_t used = 0;
	int fd, i, n;

	fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
	if (fd < 0) {
		fprintf(stderr, "error: raw socket: %s\n", strerror(errno));
		return 1;
	}
	if (argc == 1 && !strcmp(argv[0], "-")) {
		while (fgets(line, sizeof(line), stdin)) {
			if (line[0] == '#' || strspn(line, " \t\r\n") == strlen(line))
				continue;
			if (send_spec(fd, line))
				return 1;
		}
		return 0;
	}
	line[0] = 0;
	for (i = 0; i < argc; i++) {
		n = snprintf(line + used, sizeof(line) - used, "%s ", argv[i]);
		if (n < 0 || (size_t)n >= sizeof(line) - used) {
			fprintf(stderr, "error: SPEC too long\n");
			return 1;
		}
		used += n;
	}
	return send_spec(fd, line) ? 1 : 0;
}

static const char *op_name(u8 op)
{
	const char *n = sroce_opcode_table[op].name;

	if (!n)
		return "UNKNOWN";
	return strncmp(n, "SROCE_", 6) ? n : n + 6;
}

static void print_rx(const u8 *p, u32 len)
{
	static const char *const kinds[] = { "ACK", "RNR", "RSVD", "NAK" };
	struct sroce_pkt pkt;
	int err = sroce_pkt_parse(p, len, &pkt);

	if (err && err != -EBADMSG) {
		printf("rx bad=%d opcode=0x%02x len=%u\n", err,
		       len ? p[0] : 0, len);
		return;
	}
	printf("rx %s qpn=%u psn=%u ackreq=%d len=%u crc=0x%08x",
	       op_name(pkt.h.opcode), pkt.h.qpn, pkt.h.psn, pkt.h.ackreq,
	       pkt.payload_len,
	       ~crc32_le(~0U, p + pkt.payload_off, pkt.payload_len));
	if (pkt.info->xhdrs & SROCE_XH_AETH)
		printf(" syn=0x%02x kind=%s code=%u msn=%u", pkt.h.aeth_syn,
		       kinds[(pkt.h.aeth_syn >> 5) & 3],
		       pkt.h.aeth_syn & SROCE_AETH_VALUE_MASK, pkt.h.aeth_msn);
	if (pkt.info->xhdrs & SROCE_XH_RETH)
		printf(" va=0x%llx rkey=0x%x dmalen=%u",
		       (unsigned long long)pkt.h.reth_va, pkt.h.reth_rkey,
		       pkt.h.reth_len);
	if (err)
		printf(" bad=%d", err);
	printf("\n");
}

static int cmd_listen(int argc, char **argv)
{
	struct sockaddr_in me = { .sin_family = AF_INET };
	unsigned long long secs = 30, count = 0, v;
	static u8 buf[65536];
	struct timespec t0, t;
	struct pollfd pfd;
	long left_ms;
	u64 got = 0;
	int fd, i, rcvbuf = 32 << 20;
	ssize_t n;

	for (i = 0; i + 1 < argc; i += 2) {
		if (parse_num(argv[i + 1], &v))
			return 2;
		if (!strcmp(argv[i], "-t"))
			secs = v;
		else if (!strcmp(argv[i], "-n"))
			count = v;
		else
			return 2;
	}
	if (i != argc)
		return 2;
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	/* A window of full-MTU packets arrives at once: do not drop any. */
	if (fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
				  sizeof(rcvbuf)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	me.sin_addr = src_ip;
	me.sin_port = htons(SROCE_UDP_PORT);
	if (fd < 0 || bind(fd, (struct sockaddr *)&me, sizeof(me))) {
		fprintf(stderr, "error: bind UDP %s:%u: %s\n", inet_ntoa(src_ip),
			SROCE_UDP_PORT, strerror(errno));
		return 1;
	}
	printf("listening\n");
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		left_ms = (long)secs * 1000 - ((t.tv_sec - t0.tv_sec) * 1000 +
					       (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left_ms <= 0)
			break;
		pfd.fd = fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, (int)left_ms) <= 0)
			continue;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0)
			continue;
		print_rx(buf, (u32)n);
		fflush(stdout);
		if (count && ++got >= count)
			break;
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: sroce_inject -s SRC_IP -d DST_IP send SPEC...|-\n"
		"       sroce_inject -s SRC_IP listen [-t SECONDS] [-n COUNT]\n"
		"(the comment at the top of sroce_inject.c tells SPEC)\n");
}

int main(int argc, char **argv)
{
	int i = 1;

	for (; i + 1 < argc && argv[i][0] == '-' && argv[i][1]; i += 2) {
		struct in_addr *a;

		if (!strcmp(argv[i], "-s"))
			a = &src_ip;
		else if (!strcmp(argv[i], "-d"))
			a = &dst_ip;
		else
			break;
		if (inet_pton(AF_INET, argv[i + 1], a) != 1) {
			usage();
			return 2;
		}
	}
	if (i >= argc || !src_ip.s_addr) {
		usage();
		return 2;
	}
	if (!strcmp(argv[i], "send") && dst_ip.s_addr)
		return cmd_send(argc - i - 1, argv + i + 1);
	if (!strcmp(argv[i], "listen"))
		return cmd_listen(argc - i - 1, argv + i + 1);
	usage();
	return 2;
}
