// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * A hostile RoCEv2 peer: sends hand-made packets and prints what comes back.
 *
 *   sroce_inject -s SRC_IP -d DST_IP send SPEC...
 *   sroce_inject -s SRC_IP -d DST_IP send -        (one SPEC per stdin line)
 *   sroce_inject -s SRC_IP -d DST_IP fuzz [-n COUNT] [-r SEED] [-w SPAN] [-v]
 *       [-q QPN:RQ_PSN:SQ_PSN]... [-k RKEY:VA:LEN]... [-a SRC]...
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
 *   atmva= atmrkey= swap= cmp=   AtomicETH;  orig=  AtomicAckETH
 *   plt= sel=              FETH placement type, selectivity level (FLUSH)
 *   srqn=                  XRCETH: the target's XRC SRQ (XRC_* requests)
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
 *   src=IP                 IPv4 source address (default SRC_IP)
 *   count=N psnstep=K      send N copies, PSN K further each time (K=1)
 *
 * fuzz sends COUNT (10000) random packets as fast as it can: every valid
 * opcode, some overwritten with a random byte; PSNs near a live QP's (-q:
 * the PSN it expects of requests, the next it sends; some up to SPAN
 * (1024) ahead, for a QP that moved on since) or anywhere; rkeys
 * and addresses in and around live MRs (-k) or random; to the live QPNs,
 * QP1, QPN 0 and 0xffffff, and random ones; random lengths, pad, flags,
 * P_Keys, UDP ports, source addresses (-a, else SRC_IP); some cut, some
 * truncated, some with a bad ICRC or UDP length or version. Most are
 * well-formed with a good ICRC, so they reach the QP engine. The first
 * line is "fuzz seed=S ..." (-r S sends the same packets again to the same
 * targets; -v prints each packet's SPEC before sending it), the last
 * "fuzz sent=N send_errors=E ..." with what was drawn. Exit 0 unless it
 * could not build a packet.
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
	struct in_addr src;	/* 0: -s */
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
	if (!strcmp(key, "src"))
		return inet_pton(AF_INET, eq + 1, &sp->src) == 1 ? 0 : -1;
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
	KEY("atmva", sp->h.atm_va, ~0ULL);
	KEY("atmrkey", sp->h.atm_rkey, 0xffffffffULL);
	KEY("swap", sp->h.atm_swap_add, ~0ULL);
	KEY("cmp", sp->h.atm_compare, ~0ULL);
	KEY("orig", sp->h.atmack_orig, ~0ULL);
	KEY("plt", sp->h.feth_plt, 0xf);
	KEY("sel", sp->h.feth_sel, 3);
	KEY("srqn", sp->h.xrc_srqn, SROCE_24BIT_MASK);
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
	memcpy(buf + 12, sp->src.s_addr ? &sp->src : &src_ip, 4);
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

static int parse_spec(char *line, struct spec *sp)
{
	char *w, *save = NULL;

	spec_init(sp);
	for (w = strtok_r(line, " \t\r\n", &save); w;
	     w = strtok_r(NULL, " \t\r\n", &save)) {
		if (spec_word(sp, w)) {
			fprintf(stderr, "error: bad word '%s'\n", w);
			return -1;
		}
	}
	if (!sp->have_op) {
		fprintf(stderr, "error: no op=\n");
		return -1;
	}
	return 0;
}

static int send_spec(int fd, char *line)
{
	static u8 buf[MAX_PKT];
	struct sockaddr_in to = { .sin_family = AF_INET };
	struct spec sp;
	u32 n;
	int len;

	if (parse_spec(line, &sp))
		return -1;
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

/*
 * fuzz: COUNT packets, each a SPEC drawn from a PRNG seeded with SEED, so
 * the same targets and seed send the same bytes again (-v prints every
 * SPEC line first; `send -` replays them one by one). Mostly well-formed
 * packets with good ICRCs, so they reach the parsers and the QP engine;
 * around the live QPs' PSNs and inside the live MRs more often than not.
 */
#define FZ_MAX	16

struct fz_qp {
	u32 qpn;
	u32 rq_psn;		/* next request PSN it expects */
	u32 sq_psn;		/* next PSN it sends */
};

struct fz_mr {
	u32 rkey;
	u64 va;
	u64 len;
};

struct fuzz {
	u64 state;
	struct fz_qp qp[FZ_MAX];
	struct fz_mr mr[FZ_MAX];
	struct in_addr src[FZ_MAX];
	int nqp, nmr, nsrc;
	u32 span;		/* how far ahead of a QP's PSN to aim */
	u8 ops[256];
	int nops;
	/* what was sent, for the summary line */
	u64 sent, errors, raw_op, bad_icrc, cut, trunc, live_qp, qp1, live_key;
};

/* splitmix64: tiny, and every seed gives a good stream */
static u64 fz_next(struct fuzz *f)
{
	u64 z = (f->state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static u32 fz_below(struct fuzz *f, u64 n)
{
	return n ? (u32)(fz_next(f) % n) : 0;
}

static int fz_pct(struct fuzz *f, u32 pct)
{
	return fz_below(f, 100) < pct;
}

/*
 * A PSN near @base most of the time, anywhere otherwise. A QP's PSNs as
 * read at the start move on while its transfer runs: aim up to span ahead.
 */
static u32 fz_psn(struct fuzz *f, u32 base)
{
	u32 r = fz_below(f, 4);

	if (r < 2)
		return sroce_psn_add(base, fz_below(f, 33) - 16);
	if (r == 2)
		return sroce_psn_add(base, fz_below(f, f->span + 33) - 16);
	return fz_below(f, 1u << 24);
}

/* An address in or around a live MR (-1: none picked). */
static int fz_mr(struct fuzz *f, u32 *rkey, u64 *va, u32 align)
{
	const struct fz_mr *m;

	if (!f->nmr || !fz_pct(f, 75)) {
		*rkey = (u32)fz_next(f);
		*va = fz_pct(f, 50) ? fz_next(f) : fz_below(f, 1u << 20);
		return -1;
	}
	m = &f->mr[fz_below(f, f->nmr)];
	*rkey = m->rkey;
	if (fz_pct(f, 90))
		*va = m->va + fz_below(f, m->len) / align * align;
	else		/* just outside, or straddling an end */
		*va = m->va + m->len - 64 + fz_below(f, 128) -
		      (fz_pct(f, 50) ? m->len : 0);
	f->live_key++;
	return (int)(m - f->mr);
}

static u32 fz_len(struct fuzz *f)
{
	static const u32 edges[] = { 256, 512, 1023, 1024, 1025, 1400 };

	switch (fz_below(f, 7)) {
	case 0: case 1: case 2:
		return fz_below(f, 65);
	case 3: case 4:
		return fz_below(f, 1101);
	case 5:
		return edges[fz_below(f, ARRAY_SIZE(edges))];
	default:
		return fz_below(f, 1401);
	}
}

#define FZ_ADD(...)							\
	do {								\
		if (n < size)						\
			n += snprintf(line + n, size - n,		\
				      " " __VA_ARGS__);			\
	} while (0)

/* One random SPEC line into @line. */
static void fz_spec(struct fuzz *f, char *line, size_t size)
{
	const struct sroce_opcode_info *info;
	const struct fz_qp *q = NULL;
	u32 qpn, len, tlen, padbytes, pad, extra = 0, cut = 0, rkey, r;
	u8 op;
	u64 va;
	size_t n;
	int mr;
	bool aw;

	r = fz_below(f, 100);
	if (f->nqp && r < 60) {
		q = &f->qp[fz_below(f, f->nqp)];
		qpn = q->qpn;
		f->live_qp++;
	} else if (r < 70) {
		qpn = 1;
		f->qp1++;
	} else if (r < 73) {
		qpn = r & 1 ? 0 : SROCE_24BIT_MASK;
	} else if (r < 80) {
		qpn = fz_below(f, 64);
	} else {
		qpn = fz_below(f, 1u << 24);
	}
	op = f->ops[fz_below(f, f->nops)];
	info = sroce_opcode_info(op);
	n = (size_t)snprintf(line, size, "op=%u qpn=%u", op, qpn);
	if (q)
		FZ_ADD("psn=%u", fz_psn(f, info->flags & SROCE_OPF_REQ ?
				   q->rq_psn : q->sq_psn));
	else
		FZ_ADD("psn=%u", fz_below(f, 1u << 24));
	if (f->nsrc && fz_pct(f, 80))
		FZ_ADD("src=%s", inet_ntoa(f->src[fz_below(f, f->nsrc)]));
	FZ_ADD("ackreq=%u se=%u migreq=%u", fz_below(f, 2), fz_pct(f, 20),
	       fz_pct(f, 5));
	r = fz_below(f, 100);
	if (r >= 95)
		FZ_ADD("pkey=%u", r == 99 ? fz_below(f, 0x10000) : 0x7fff);
	if (fz_pct(f, 50))
		FZ_ADD("sport=%u", fz_below(f, 0x10000));

	/* most ATOMIC WRITEs well-formed, so that they reach the engine */
	aw = (info->flags & SROCE_OPF_ATOMIC_WRITE) && fz_pct(f, 70);
	if (aw) {
		fz_mr(f, &rkey, &va, 8);
		FZ_ADD("rkey=%u va=%llu dmalen=8", rkey, (unsigned long long)va);
	} else if (info->xhdrs & SROCE_XH_RETH) {
		mr = fz_mr(f, &rkey, &va, 1);
		r = fz_below(f, 5);
		FZ_ADD("rkey=%u va=%llu dmalen=%u", rkey, (unsigned long long)va,
		       r < 3 ? fz_below(f, 2049) :
		       r == 3 && mr >= 0 ? (u32)(f->mr[mr].va + f->mr[mr].len - va) :
		       (u32)fz_next(f));
	}
	if (info->xhdrs & SROCE_XH_ATMETH) {
		fz_mr(f, &rkey, &va, fz_pct(f, 90) ? 8 : 1);
		FZ_ADD("atmrkey=%u atmva=%llu swap=%llu cmp=%llu", rkey,
		       (unsigned long long)va, (unsigned long long)fz_next(f),
		       (unsigned long long)fz_below(f, 4));
	}
	if (info->xhdrs & SROCE_XH_AETH) {
		static const u8 kinds[] = { 0x00, 0x20, 0x60 };
		u8 syn = kinds[fz_below(f, 3)];

		syn |= syn == 0x60 ? fz_below(f, 5) : fz_below(f, 32);
		FZ_ADD("syn=%u msn=%u", fz_pct(f, 10) ? fz_below(f, 256) : syn,
		       fz_pct(f, 50) ? fz_below(f, 64) : fz_below(f, 1u << 24));
	}
	if (info->xhdrs & SROCE_XH_DETH)
		FZ_ADD("qkey=%u sqp=%u", fz_pct(f, 50) ? 0x80010000u :
		       (u32)fz_next(f), fz_below(f, 1u << 24));
	if (info->xhdrs & SROCE_XH_IMMDT)
		FZ_ADD("imm=%u", (u32)fz_next(f));
	if (info->xhdrs & SROCE_XH_IETH) {
		fz_mr(f, &rkey, &va, 1);
		FZ_ADD("ieth=%u", rkey);
	}
	if (info->xhdrs & SROCE_XH_ATMACK)
		FZ_ADD("orig=%llu", (unsigned long long)fz_next(f));
	if (info->xhdrs & SROCE_XH_FETH)
		FZ_ADD("plt=%u sel=%u", fz_pct(f, 70) ? fz_below(f, 4) :
		       fz_below(f, 16), fz_below(f, 4));
	/* XRC SRQ numbers are handed out from 1: low ones may be live */
	if (info->xhdrs & SROCE_XH_XRCETH)
		FZ_ADD("srqn=%u", fz_pct(f, 70) ? fz_below(f, 16) :
		       fz_below(f, 1u << 24));

	if (aw)
		len = 8;
	else
		len = (info->flags & SROCE_OPF_PAYLOAD) || fz_pct(f, 10) ?
		      fz_len(f) : 0;
	FZ_ADD("len=%u", len);
	if (fz_pct(f, 90))
		FZ_ADD("seed=%u off=%u", (u32)fz_next(f), fz_below(f, 1u << 20));
	else
		FZ_ADD("fill=%u", fz_below(f, 256));
	pad = sroce_pad_for(len);
	if (fz_pct(f, 10)) {
		pad = fz_below(f, 4);
		FZ_ADD("pad=%u", pad);
	}
	padbytes = pad;
	if (fz_pct(f, 8)) {
		padbytes = fz_below(f, 8);
		FZ_ADD("padbytes=%u", padbytes);
	}
	if (fz_pct(f, 5)) {
		extra = 1 + fz_below(f, 16);
		FZ_ADD("extra=%u", extra);
	}
	if (fz_pct(f, 12)) {
		FZ_ADD("rawop=%u", fz_below(f, 256));
		f->raw_op++;
	}
	if (fz_pct(f, 2))
		FZ_ADD("tver=%u", fz_below(f, 16));
	tlen = info->hdr_len + len + padbytes + extra;
	if (fz_pct(f, 5)) {
		cut = 1 + fz_below(f, tlen);
		FZ_ADD("cut=%u", cut);
		f->cut++;
	}
	tlen += SROCE_ICRC_LEN - cut;
	if (tlen > 1 && fz_pct(f, 3)) {
		FZ_ADD("trunc=%u", 1 + fz_below(f, tlen - 1));
		f->trunc++;
	}
	if (fz_pct(f, 2))
		FZ_ADD("udplen=%u", fz_below(f, 0x10000));
	if (fz_pct(f, 8)) {
		FZ_ADD("icrc=bad");
		f->bad_icrc++;
	}
}

/* QPN:RQ_PSN:SQ_PSN or RKEY:VA:LEN */
static int fz_triple(const char *s, unsigned long long v[3])
{
	char buf[96], *a, *b;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	a = strchr(buf, ':');
	b = a ? strchr(a + 1, ':') : NULL;
	if (!b)
		return -1;
	*a++ = 0;
	*b++ = 0;
	return parse_num(buf, &v[0]) || parse_num(a, &v[1]) ||
	       parse_num(b, &v[2]) ? -1 : 0;
}

static int cmd_fuzz(int argc, char **argv)
{
	static u8 buf[MAX_PKT];
	struct sockaddr_in to = { .sin_family = AF_INET };
	unsigned long long count = 10000, v[3];
	struct fuzz f;
	char line[1024];
	struct spec sp;
	int fd, i, verbose = 0, len;
	u64 k;

	memset(&f, 0, sizeof(f));
	f.state = (u64)time(NULL) << 20 ^ (u64)getpid();
	f.span = 1024;
	for (i = 0; i < argc; i++) {
		const char *o = argv[i], *a = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(o, "-v")) {
			verbose = 1;
			continue;
		}
		if (!a)
			return 2;
		i++;
		if (!strcmp(o, "-n") && !parse_num(a, &v[0])) {
			count = v[0];
		} else if (!strcmp(o, "-r") && !parse_num(a, &v[0])) {
			f.state = v[0];
		} else if (!strcmp(o, "-w") && !parse_num(a, &v[0]) &&
			   v[0] <= 1u << 22) {
			f.span = v[0];
		} else if (!strcmp(o, "-q") && f.nqp < FZ_MAX &&
			   !fz_triple(a, v) && v[0] <= SROCE_24BIT_MASK &&
			   v[1] <= SROCE_24BIT_MASK && v[2] <= SROCE_24BIT_MASK) {
			f.qp[f.nqp++] = (struct fz_qp){ v[0], v[1], v[2] };
		} else if (!strcmp(o, "-k") && f.nmr < FZ_MAX &&
			   !fz_triple(a, v) && v[0] <= 0xffffffffULL && v[2]) {
			f.mr[f.nmr++] = (struct fz_mr){ v[0], v[1], v[2] };
		} else if (!strcmp(o, "-a") && f.nsrc < FZ_MAX &&
			   inet_pton(AF_INET, a, &f.src[f.nsrc]) == 1) {
			f.nsrc++;
		} else {
			fprintf(stderr, "error: bad fuzz option %s %s\n", o, a);
			return 2;
		}
	}
	for (i = 0; i < 256; i++)
		if (sroce_opcode_valid(i))
			f.ops[f.nops++] = (u8)i;
	fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
	if (fd < 0) {
		fprintf(stderr, "error: raw socket: %s\n", strerror(errno));
		return 1;
	}
	printf("fuzz seed=%llu count=%llu qps=%d mrs=%d\n",
	       (unsigned long long)f.state, count, f.nqp, f.nmr);
	fflush(stdout);
	to.sin_addr = dst_ip;
	for (k = 0; k < count; k++) {
		fz_spec(&f, line, sizeof(line));
		if (verbose)
			printf("%s\n", line);
		if (parse_spec(line, &sp))
			return 1;	/* a fuzzer bug: stop and show it */
		len = build(&sp, buf);
		if (len < 0)
			return 1;
		if (sendto(fd, buf, len, 0, (struct sockaddr *)&to,
			   sizeof(to)) == len)
			f.sent++;
		else
			f.errors++;
	}
	printf("fuzz sent=%llu send_errors=%llu live_qp=%llu qp1=%llu live_key=%llu raw_op=%llu cut=%llu trunc=%llu bad_icrc=%llu\n",
	       (unsigned long long)f.sent, (unsigned long long)f.errors,
	       (unsigned long long)f.live_qp, (unsigned long long)f.qp1,
	       (unsigned long long)f.live_key, (unsigned long long)f.raw_op,
	       (unsigned long long)f.cut, (unsigned long long)f.trunc,
	       (unsigned long long)f.bad_icrc);
	return 0;
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
		"       sroce_inject -s SRC_IP -d DST_IP fuzz [-n COUNT] [-r SEED] [-w SPAN] [-v]\n"
		"            [-q QPN:RQ_PSN:SQ_PSN]... [-k RKEY:VA:LEN]... [-a SRC]...\n"
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
	if (!strcmp(argv[i], "fuzz") && dst_ip.s_addr)
		return cmd_fuzz(argc - i - 1, argv + i + 1);
	if (!strcmp(argv[i], "listen"))
		return cmd_listen(argc - i - 1, argv + i + 1);
	usage();
	return 2;
}
