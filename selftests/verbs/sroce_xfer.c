// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Two-node verified transfers over one RC, UC or UD QP per side.
 *
 *   sroce_xfer -d DEV -g GID_INDEX [-p TCP_PORT] [-t rc|uc|ud] [-s SIZES]
 *              [-o OPS] [-m PATH_MTU] [SERVER_IP]
 *
 * Without SERVER_IP the program waits for one client on TCP_PORT (IPv4 and
 * IPv6). The two sides swap QP numbers, PSNs, GIDs and a buffer's address
 * and rkey over that socket, then run every op at every size once in each
 * direction, so each side is requester and responder for everything. The
 * client's SIZES and OPS decide the plan; the server's -t must match.
 *
 * Every payload is a pattern seeded by the run, op, size and direction; the
 * receiving (or reading) side checks every byte, the guard bytes around it
 * and all completion fields that the verbs define for it. Atomics check the
 * returned original value and the resulting remote value. Only plain verbs
 * are used, so either side may be any RoCEv2 device (sroce or rdma_rxe).
 *
 * Output: one "ok N - ..."/"not ok N - ..." line per transfer, details of a
 * failure as "# " lines. Exit 0 only if both sides verified everything,
 * 1 on any failure, 2 on bad usage.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#define DEFAULT_PORT	18800
#define DEFAULT_SIZES	"0,1,1023,1024,1025,4096,4097,65536,1048576,8388608"
#define MAX_SIZES	32
#define MAX_XFER	(64u << 20)	/* bounds what a peer's plan may allocate */
#define QKEY		0x5eb0c0deu
#define WAIT_MS		120000		/* one completion; TCG hosts are slow */
/*
 * UC and UD have no retransmission, and the test VMs' virtual wire drops a
 * packet now and then when the host is loaded. A message missing this long
 * after the requester said it was sent (over the same wire, in order) was
 * lost: it is sent again, up to ATTEMPTS times in all.
 */
#define LOSS_WAIT_MS	30000
#define ATTEMPTS	3
#define SOCK_WAIT_S	300		/* the peer may be waiting WAIT_MS too */
#define MAGIC		0x73726f6365786672ull	/* "srocexfr" */
#define VERSION		1
#define GUARD		64		/* checked bytes on each side of a payload */
#define GUARD_BYTE	0xc5
#define GRH_LEN		40
#define DATA_BASE	4096		/* below: atomic targets and scratch */
#define ATOMIC_BASE	64
#define RESULT_BASE	512
#define SCRATCH_BASE	1024
#define ATOMIC_ITERS	3

/*
 * OP_BURST: an RDMA WRITE cut into small WRs posted back to back, each
 * signaled, BURST_DEPTH in flight: posts that find earlier ones still
 * unacknowledged (sroce then skips their doorbell and sends them in a
 * batch), completions checked one by one, in order.
 */
/*
 * OP_AW: ATOMIC WRITE (ibv_wr_atomic_write; rdma_rxe has it from Linux
 * 6.2 on, so only asked for by name, like OP_BURST).
 */
/*
 * OP_RECYCLE: an RDMA WRITE cut into multi-packet WRs that all come from
 * a few source slots: as soon as a WR completes, its slot is overwritten
 * with the next WR's bytes (or junk, at the end) and posted again.  Any
 * byte the requester read from a slot after the WR's completion, such as
 * a zero-copy packet still on its way, would land as another WR's bytes.
 */
/*
 * OP_GATHER: an RDMA WRITE whose WRs gather up to GATHER_SGES pieces of
 * 1 to 1500 bytes each (every other WR: all of 37 bytes), two by two
 * from the main region and from a second one, each pair back to back
 * with a gap before it: one packet's payload then spans anything from
 * one piece to GATHER_SGES.
 */
enum op { OP_SEND, OP_SEND_IMM, OP_WRITE, OP_WRITE_IMM, OP_READ, OP_CAS,
	  OP_FAA, OP_BURST, OP_AW, OP_RECYCLE, OP_GATHER, NUM_OPS };

static const char *const op_names[NUM_OPS] = {
	"send", "send_imm", "write", "write_imm", "read", "cas", "faa", "burst",
	"aw", "recycle", "gather",
};
/* Ops a plan has only when it names them. */
#define NAMED_ONLY_OPS	(1u << OP_BURST | 1u << OP_AW | 1u << OP_RECYCLE | \
			 1u << OP_GATHER)
#define GATHER_SGES	24
#define RECYCLE_SLOTS	4
#define JUNK_BYTE	0xee
#define SQ_DEPTH	64
#define BURST_DEPTH	(SQ_DEPTH - 8)
#define BURST_PIECE_MIN	64
#define BURST_MAX_WRS	512

/* The ops each QP type can carry (IBA 9.7 / 9.8 / 9.9). */
static const unsigned int type_ops[] = {
	[IBV_QPT_RC] = (1u << NUM_OPS) - 1,
	[IBV_QPT_UC] = 1u << OP_SEND | 1u << OP_SEND_IMM | 1u << OP_WRITE |
		       1u << OP_WRITE_IMM,
	[IBV_QPT_UD] = 1u << OP_SEND | 1u << OP_SEND_IMM,
};

/* Control messages: fixed arrays of 64-bit words, big-endian on the wire. */
enum { MSG_PLAN = 1, MSG_HELLO, MSG_READY, MSG_DONE, MSG_VERDICT };
#define PLAN_WORDS	(8 + MAX_SIZES)
#define HELLO_WORDS	12
#define STEP_WORDS	5

struct peer {
	uint32_t qpn, psn, rkey, mtu, qkey, rd_atomic;
	union ibv_gid gid;
	uint64_t addr, len;
};

struct step {
	enum op op;
	uint32_t len;
	int c2s;		/* client is the requester */
	int iter;
	uint64_t seed;
};

static int is_client, sock = -1;
static enum ibv_qp_type qpt = IBV_QPT_RC;
static const char *type_name = "rc";
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_comp_channel *chan;
static struct ibv_cq *scq, *rcq;
static struct ibv_qp *qp;
static struct ibv_ah *ah;
static struct ibv_mr *mr;
static unsigned char *buf;
static size_t buf_len;
static int gid_index = -1;
static union ibv_gid my_gid;
static struct peer me, peer;
static unsigned int mtu;	/* negotiated path MTU in bytes */

static int plan_ops;
static uint32_t plan_sizes[MAX_SIZES];
static int plan_nsizes;
static uint64_t plan_nonce;

static int n_steps, n_failed, n_resent;

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s -d DEV -g GID_INDEX [-p TCP_PORT] [-t rc|uc|ud] [-s SIZES]\n"
		"          [-o OPS] [-m PATH_MTU] [SERVER_IP]\n"
		"  SIZES  comma list of byte counts (default " DEFAULT_SIZES ";\n"
		"         UD caps them at the path MTU)\n"
		"  OPS    comma list of send,send_imm,write,write_imm,read,cas,faa,\n"
		"         burst,aw,recycle,gather (default: all the QP type supports\n"
		"         but burst, aw, recycle and gather)\n"
		"  PATH_MTU  256, 512, 1024, 2048 or 4096 (default: the port's active MTU)\n",
		prog);
}

static long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000L + t.tv_nsec / 1000000;
}

/* ---- patterns ---- */

static uint64_t mix64(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Byte i of the pattern for @seed; generated 8 at a time, little-endian. */
static void pattern_fill(unsigned char *p, size_t len, uint64_t seed)
{
	uint64_t v = 0, s = mix64(seed) | 1;
	size_t i;

	for (i = 0; i < len; i++) {
		if (!(i & 7)) {
			s ^= s >> 12;
			s ^= s << 25;
			s ^= s >> 27;
			v = s * 0x2545f4914f6cdd1dull;
		}
		p[i] = v >> (8 * (i & 7));
	}
}

/* Returns the offset of the first byte that differs, or -1. */
static long pattern_check(const unsigned char *p, size_t len, uint64_t seed)
{
	uint64_t v = 0, s = mix64(seed) | 1;
	size_t i;

	for (i = 0; i < len; i++) {
		if (!(i & 7)) {
			s ^= s >> 12;
			s ^= s << 25;
			s ^= s >> 27;
			v = s * 0x2545f4914f6cdd1dull;
		}
		if (p[i] != (unsigned char)(v >> (8 * (i & 7))))
			return (long)i;
	}
	return -1;
}

static long guard_check(const unsigned char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != GUARD_BYTE)
			return (long)i;
	return -1;
}

/* ---- control socket ---- */

static int send_words(const uint64_t *w, int n)
{
	uint64_t be[PLAN_WORDS];
	size_t off = 0, len = n * sizeof(uint64_t);
	int i;

	for (i = 0; i < n; i++)
		be[i] = htobe64(w[i]);
	while (off < len) {
		ssize_t r = send(sock, (char *)be + off, len - off, MSG_NOSIGNAL);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			note("control socket send: %s", strerror(errno));
			return -1;
		}
		off += r;
	}
	return 0;
}

static int recv_words(uint64_t *w, int n, uint64_t type)
{
	size_t off = 0, len = n * sizeof(uint64_t);
	int i;

	while (off < len) {
		ssize_t r = recv(sock, (char *)w + off, len - off, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			note("control socket recv: %s", r ? strerror(errno) :
			     "peer closed the connection");
			return -1;
		}
		off += r;
	}
	for (i = 0; i < n; i++)
		w[i] = be64toh(w[i]);
	if (w[0] != type) {
		note("control message type %" PRIu64 ", want %" PRIu64, w[0], type);
		return -1;
	}
	return 0;
}

static int sock_setup(int fd)
{
	struct timeval tv = { .tv_sec = SOCK_WAIT_S };
	int one = 1;

	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one))) {
		note("setsockopt: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int serve_tcp(int port)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6,
				   .sin6_port = htons(port),
				   .sin6_addr = IN6ADDR_ANY_INIT };
	struct sockaddr_in a4 = { .sin_family = AF_INET,
				  .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_ANY) };
	struct pollfd pfd;
	int fd, one = 1, zero = 0, r;

	/* one dual-stack socket; IPv4 only if the host has no IPv6 */
	fd = socket(AF_INET6, SOCK_STREAM, 0);
	if (fd >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
		if (bind(fd, (struct sockaddr *)&a6, sizeof(a6))) {
			close(fd);
			fd = -1;
		}
	}
	if (fd < 0) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0) {
			note("socket: %s", strerror(errno));
			return -1;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&a4, sizeof(a4))) {
			note("bind TCP port %d: %s", port, strerror(errno));
			close(fd);
			return -1;
		}
	}
	if (listen(fd, 1)) {
		note("listen: %s", strerror(errno));
		close(fd);
		return -1;
	}
	note("listening on TCP port %d", port);
	pfd.fd = fd;
	pfd.events = POLLIN;
	r = poll(&pfd, 1, SOCK_WAIT_S * 1000);
	if (r <= 0) {
		note("no client within %d s", SOCK_WAIT_S);
		close(fd);
		return -1;
	}
	sock = accept(fd, NULL, NULL);
	close(fd);
	if (sock < 0) {
		note("accept: %s", strerror(errno));
		return -1;
	}
	return sock_setup(sock);
}

/* Retries refused connections for a while: the server may still be starting. */
static int connect_tcp(const char *host, int port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res, *ai;
	long deadline = now_ms() + 60000;
	char ps[16];
	int r;

	snprintf(ps, sizeof(ps), "%d", port);
	r = getaddrinfo(host, ps, &hints, &res);
	if (r) {
		note("server address %s: %s", host, gai_strerror(r));
		return -1;
	}
	for (;;) {
		for (ai = res; ai; ai = ai->ai_next) {
			sock = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
			if (sock < 0)
				continue;
			if (!connect(sock, ai->ai_addr, ai->ai_addrlen))
				goto connected;
			r = errno;
			close(sock);
			sock = -1;
		}
		if (now_ms() > deadline) {
			note("connect to %s port %d: %s", host, port, strerror(r));
			freeaddrinfo(res);
			return -1;
		}
		poll(NULL, 0, 200);
	}
connected:
	freeaddrinfo(res);
	return sock_setup(sock);
}

/* ---- verbs ---- */

static int mtu_enum(unsigned int bytes)
{
	switch (bytes) {
	case 256: return IBV_MTU_256;
	case 512: return IBV_MTU_512;
	case 1024: return IBV_MTU_1024;
	case 2048: return IBV_MTU_2048;
	case 4096: return IBV_MTU_4096;
	}
	return -1;
}

/*
 * Waits for one completion on @cq through the completion channel: a single
 * vCPU guest must not spin while the kernel side moves the data.
 */
static int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, long ms)
{
	long deadline = now_ms() + ms;

	for (;;) {
		struct ibv_cq *ev_cq;
		struct pollfd pfd;
		void *ev_ctx;
		long left;
		int n;

		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n < 0 ? -1 : 1;
		if (ibv_req_notify_cq(cq, 0))
			return -1;
		/* a completion may have landed before the CQ was armed */
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n < 0 ? -1 : 1;
		left = deadline - now_ms();
		if (left <= 0)
			return 0;
		pfd.fd = chan->fd;
		pfd.events = POLLIN;
		/* bounded, so that a lost event costs a second, not the test */
		if (poll(&pfd, 1, left < 1000 ? left : 1000) > 0 &&
		    !ibv_get_cq_event(chan, &ev_cq, &ev_ctx))
			ibv_ack_cq_events(ev_cq, 1);
	}
}

static int setup_verbs(const char *devname)
{
	struct ibv_device **list;
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	int i, access;

	list = ibv_get_device_list(NULL);
	for (i = 0; list && list[i]; i++)
		if (!devname || !strcmp(devname, ibv_get_device_name(list[i])))
			break;
	if (!list || !list[i]) {
		note("RDMA device %s not found", devname ?: "(any)");
		if (list)
			ibv_free_device_list(list);
		return -1;
	}
	ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx) {
		note("open %s: %s", devname, strerror(errno));
		return -1;
	}
	if (ibv_query_device(ctx, &da) || ibv_query_port(ctx, 1, &pa)) {
		note("query device/port: %s", strerror(errno));
		return -1;
	}
	if (pa.state != IBV_PORT_ACTIVE)
		note("warning: port 1 is not ACTIVE (state %d)", pa.state);
	if (ibv_query_gid(ctx, 1, gid_index, &my_gid)) {
		note("query gid index %d: %s", gid_index, strerror(errno));
		return -1;
	}
	if (!my_gid.global.subnet_prefix && !my_gid.global.interface_id) {
		note("gid index %d is empty", gid_index);
		return -1;
	}
	if (!me.mtu)
		me.mtu = 128u << pa.active_mtu;
	me.rd_atomic = da.max_qp_rd_atom < da.max_qp_init_rd_atom ?
		       da.max_qp_rd_atom : da.max_qp_init_rd_atom;
	if (me.rd_atomic > 4)
		me.rd_atomic = 4;

	pd = ibv_alloc_pd(ctx);
	chan = ibv_create_comp_channel(ctx);
	if (!pd || !chan) {
		note("alloc pd / comp channel: %s", strerror(errno));
		return -1;
	}
	scq = ibv_create_cq(ctx, 2 * SQ_DEPTH, NULL, chan, 0);
	rcq = ibv_create_cq(ctx, 32, NULL, chan, 0);
	if (!scq || !rcq) {
		note("create cq: %s", strerror(errno));
		return -1;
	}
	{
		struct ibv_qp_init_attr_ex ia = {
			.send_cq = scq, .recv_cq = rcq, .qp_type = qpt,
			.cap = { .max_send_wr = SQ_DEPTH, .max_recv_wr = 8,
				 .max_send_sge = plan_ops & 1u << OP_GATHER ?
						 GATHER_SGES : 1,
				 .max_recv_sge = 1 },
			.comp_mask = IBV_QP_INIT_ATTR_PD,
			.pd = pd,
		};

		/* the ibv_wr_* API, for ATOMIC WRITE, only when asked for */
		if (plan_ops & 1u << OP_AW) {
			ia.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
			ia.send_ops_flags = IBV_QP_EX_WITH_ATOMIC_WRITE;
		}
		qp = ibv_create_qp_ex(ctx, &ia);
	}
	if (!qp) {
		note("create %s qp: %s", type_name, strerror(errno));
		return -1;
	}
	buf = aligned_alloc(4096, buf_len);
	if (!buf) {
		note("no memory for a %zu byte buffer", buf_len);
		return -1;
	}
	memset(buf, GUARD_BYTE, buf_len);
	access = IBV_ACCESS_LOCAL_WRITE;
	if (qpt == IBV_QPT_RC)
		access |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC;
	else if (qpt == IBV_QPT_UC)
		access |= IBV_ACCESS_REMOTE_WRITE;
	mr = ibv_reg_mr(pd, buf, buf_len, access);
	if (!mr) {
		note("reg_mr %zu bytes: %s", buf_len, strerror(errno));
		return -1;
	}
	/* start just below the 24-bit wrap: every larger run crosses it */
	srand(time(NULL) ^ getpid());
	me.qpn = qp->qp_num;
	me.psn = 0xffffff - 2000 - (rand() & 0xfff);
	me.gid = my_gid;
	me.addr = (uintptr_t)buf;
	me.rkey = mr->rkey;
	me.len = buf_len;
	me.qkey = QKEY;
	return 0;
}

static int qp_to_rts(void)
{
	struct ibv_qp_attr at;
	struct ibv_ah_attr av;
	int mask;

	memset(&av, 0, sizeof(av));
	av.is_global = 1;
	av.grh.dgid = peer.gid;
	av.grh.sgid_index = gid_index;
	av.grh.hop_limit = 64;
	av.port_num = 1;

	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_INIT;
	at.port_num = 1;
	mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	if (qpt == IBV_QPT_UD) {
		at.qkey = QKEY;
		mask |= IBV_QP_QKEY;
	} else {
		at.qp_access_flags = qpt == IBV_QPT_RC ?
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_REMOTE_ATOMIC : IBV_ACCESS_REMOTE_WRITE;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	if (ibv_modify_qp(qp, &at, mask)) {
		note("modify qp to INIT: %s", strerror(errno));
		return -1;
	}

	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTR;
	mask = IBV_QP_STATE;
	if (qpt != IBV_QPT_UD) {
		at.path_mtu = mtu_enum(mtu);
		at.dest_qp_num = peer.qpn;
		at.rq_psn = peer.psn;
		at.ah_attr = av;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN;
	}
	if (qpt == IBV_QPT_RC) {
		at.max_dest_rd_atomic = me.rd_atomic;
		at.min_rnr_timer = 1;
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	if (ibv_modify_qp(qp, &at, mask)) {
		note("modify qp to RTR: %s", strerror(errno));
		return -1;
	}

	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTS;
	at.sq_psn = me.psn;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (qpt == IBV_QPT_RC) {
		/* ~1 s ACK timeout: a loaded TCG host is slow, not lossy */
		at.timeout = 18;
		at.retry_cnt = 7;
		at.rnr_retry = 7;
		at.max_rd_atomic = peer.rd_atomic < me.rd_atomic ?
				   peer.rd_atomic : me.rd_atomic;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	if (ibv_modify_qp(qp, &at, mask)) {
		note("modify qp to RTS: %s", strerror(errno));
		return -1;
	}
	if (qpt == IBV_QPT_UD) {
		ah = ibv_create_ah(pd, &av);
		if (!ah) {
			note("create_ah: %s", strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* ---- plan and handshake ---- */

static int parse_sizes(const char *s, uint32_t *out, int *n)
{
	const char *p = s;

	*n = 0;
	while (*p) {
		unsigned long v;
		char *end;

		if (*p < '0' || *p > '9')
			return -1;
		errno = 0;
		v = strtoul(p, &end, 10);
		if (errno || v > MAX_XFER || *n == MAX_SIZES)
			return -1;
		out[(*n)++] = v;
		if (*end == ',' && end[1])
			end++;
		else if (*end)
			return -1;
		p = end;
	}
	return *n ? 0 : -1;
}

static int parse_ops(const char *s)
{
	char tmp[256], *tok, *save;
	int mask = 0, i;

	if (strlen(s) >= sizeof(tmp))
		return -1;
	strcpy(tmp, s);
	for (tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < NUM_OPS; i++)
			if (!strcmp(tok, op_names[i]))
				break;
		if (i == NUM_OPS)
			return -1;
		mask |= 1 << i;
	}
	return mask ?: -1;
}

static int check_plan(void)
{
	int i;

	if (plan_nsizes < 1 || plan_nsizes > MAX_SIZES)
		return -1;
	for (i = 0; i < plan_nsizes; i++)
		if (plan_sizes[i] > MAX_XFER)
			return -1;
	if (!plan_ops || (plan_ops & ~type_ops[qpt]))
		return -1;
	return 0;
}

static size_t plan_buf_len(void)
{
	uint32_t max = 0;
	size_t len;
	int i;

	for (i = 0; i < plan_nsizes; i++)
		if (plan_sizes[i] > max)
			max = plan_sizes[i];
	/* offset slack, a UD GRH and the trailing guard */
	len = DATA_BASE + 64 + GRH_LEN + max + GUARD;
	return (len + 4095) & ~(size_t)4095;
}

static int exchange_plan(void)
{
	uint64_t w[PLAN_WORDS];
	int i;

	memset(w, 0, sizeof(w));
	if (is_client) {
		w[0] = MSG_PLAN;
		w[1] = MAGIC;
		w[2] = VERSION;
		w[3] = qpt;
		w[4] = plan_ops;
		w[5] = plan_nonce;
		w[6] = plan_nsizes;
		for (i = 0; i < plan_nsizes; i++)
			w[8 + i] = plan_sizes[i];
		return send_words(w, PLAN_WORDS);
	}
	if (recv_words(w, PLAN_WORDS, MSG_PLAN))
		return -1;
	if (w[1] != MAGIC || w[2] != VERSION) {
		note("peer is not sroce_xfer version %d", VERSION);
		return -1;
	}
	if (w[3] != (uint64_t)qpt) {
		note("peer runs QP type %" PRIu64 ", we run %s", w[3], type_name);
		return -1;
	}
	plan_ops = w[4] < (1u << NUM_OPS) ? (int)w[4] : 0;
	plan_nonce = w[5];
	plan_nsizes = w[6] <= MAX_SIZES ? (int)w[6] : 0;
	for (i = 0; i < plan_nsizes; i++)
		plan_sizes[i] = w[8 + i] <= MAX_XFER ? w[8 + i] : MAX_XFER + 1;
	if (check_plan()) {
		note("peer sent an invalid plan");
		return -1;
	}
	return 0;
}

static int exchange_hello(void)
{
	uint64_t w[HELLO_WORDS];

	memset(w, 0, sizeof(w));
	w[0] = MSG_HELLO;
	w[1] = me.qpn;
	w[2] = me.psn;
	memcpy(&w[3], me.gid.raw, 16);
	w[3] = be64toh(w[3]);	/* GID bytes travel in their own order */
	w[4] = be64toh(w[4]);
	w[5] = me.addr;
	w[6] = me.rkey;
	w[7] = me.len;
	w[8] = me.mtu;
	w[9] = me.qkey;
	w[10] = me.rd_atomic;
	if (send_words(w, HELLO_WORDS) || recv_words(w, HELLO_WORDS, MSG_HELLO))
		return -1;
	peer.qpn = w[1];
	peer.psn = w[2];
	w[3] = htobe64(w[3]);
	w[4] = htobe64(w[4]);
	memcpy(peer.gid.raw, &w[3], 16);
	peer.addr = w[5];
	peer.rkey = w[6];
	peer.len = w[7];
	peer.mtu = w[8];
	peer.qkey = w[9];
	peer.rd_atomic = w[10];
	if (w[1] > 0xffffff || w[2] > 0xffffff || w[6] > UINT32_MAX ||
	    mtu_enum(w[8]) < 0 || w[10] > 255 || (qpt == IBV_QPT_RC && !w[10]) ||
	    peer.len < plan_buf_len()) {
		note("peer sent invalid QP info");
		return -1;
	}
	mtu = peer.mtu < me.mtu ? peer.mtu : me.mtu;
	return 0;
}

static void gid_str(const union ibv_gid *g, char *s, size_t len)
{
	inet_ntop(AF_INET6, g->raw, s, len);
}

static int gid_is_v4(const union ibv_gid *g)
{
	static const unsigned char v4mapped[12] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return !memcmp(g->raw, v4mapped, 12);
}

/* ---- one transfer ---- */

/* Payloads start at varying, mostly unaligned offsets. */
static uint32_t step_off(int idx)
{
	return DATA_BASE + (idx * 7) % 61;
}

static __be32 step_imm(const struct step *s)
{
	return htobe32((uint32_t)mix64(s->seed ^ 0x1111));
}

static int post_send1(uint64_t id, enum ibv_wr_opcode opc, uint64_t laddr,
		      uint32_t len, uint64_t raddr, __be32 imm)
{
	struct ibv_sge sge = { laddr, len, mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = len ? 1 : 0,
		.opcode = opc, .send_flags = IBV_SEND_SIGNALED,
		.imm_data = imm,
	}, *bad;
	int err;

	if (qpt == IBV_QPT_UD) {
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = peer.qpn;
		wr.wr.ud.remote_qkey = peer.qkey;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = peer.rkey;
	}
	err = ibv_post_send(qp, &wr, &bad);
	if (err)
		note("post_send opcode %d: %s", opc, strerror(err));
	return err ? -1 : 0;
}

static int post_atomic1(uint64_t id, enum ibv_wr_opcode opc, uint64_t laddr,
			uint64_t raddr, uint64_t cmp_add, uint64_t swap)
{
	struct ibv_sge sge = { laddr, 8, mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1,
		.opcode = opc, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	int err;

	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = peer.rkey;
	wr.wr.atomic.compare_add = cmp_add;
	wr.wr.atomic.swap = swap;
	err = ibv_post_send(qp, &wr, &bad);
	if (err)
		note("post atomic: %s", strerror(err));
	return err ? -1 : 0;
}

static int post_atomic_write1(uint64_t id, uint64_t raddr, uint64_t val)
{
	struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(qp);
	int err;

	ibv_wr_start(qx);
	qx->wr_id = id;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(qx, peer.rkey, raddr, &val);
	err = ibv_wr_complete(qx);
	if (err)
		note("post atomic write: %s", strerror(err));
	return err ? -1 : 0;
}

static int post_recv1(uint64_t id, uint64_t addr, uint32_t len)
{
	struct ibv_sge sge = { addr, len, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	int err;

	err = ibv_post_recv(qp, &wr, &bad);
	if (err)
		note("post_recv: %s", strerror(err));
	return err ? -1 : 0;
}

/*
 * Waits up to @ms for the next completion on @cq and checks it is @id with
 * status success and opcode @opc. Returns 0; -2 if none came; or -1 after
 * saying why (which makes the run stop: the QP is no longer usable).
 */
static int expect_wc_ms(struct ibv_cq *cq, uint64_t id, enum ibv_wc_opcode opc,
			struct ibv_wc *wc, const char *what, long ms)
{
	int n;

	memset(wc, 0, sizeof(*wc));
	n = wait_wc(cq, wc, ms);
	if (n <= 0) {
		note("%s: %s", what, n ? "poll_cq failed" :
		     "no completion within the timeout");
		return n ? -1 : -2;
	}
	if (wc->status != IBV_WC_SUCCESS || wc->wr_id != id ||
	    wc->opcode != opc) {
		note("%s: completion wr_id %" PRIu64 " status %s (%d) opcode %d vendor_err %#x, want wr_id %" PRIu64 " success opcode %d",
		     what, wc->wr_id, ibv_wc_status_str(wc->status), wc->status,
		     wc->opcode, wc->vendor_err, id, opc);
		return -1;
	}
	if (wc->qp_num != qp->qp_num) {
		note("%s: completion for qp %u, ours is %u", what, wc->qp_num,
		     qp->qp_num);
		return -1;
	}
	return 0;
}

static int expect_wc(struct ibv_cq *cq, uint64_t id, enum ibv_wc_opcode opc,
		     struct ibv_wc *wc, const char *what)
{
	return expect_wc_ms(cq, id, opc, wc, what, WAIT_MS) ? -1 : 0;
}

static int data_ok(const unsigned char *p, uint32_t len, uint64_t seed,
		   uint32_t before, const char *what)
{
	long bad;

	bad = pattern_check(p, len, seed);
	if (bad >= 0) {
		note("%s: byte %ld of %u differs", what, bad, len);
		return 0;
	}
	bad = guard_check(p - before, before);
	if (bad >= 0) {
		note("%s: guard byte %ld before the data was overwritten", what,
		     bad - (long)before);
		return 0;
	}
	bad = guard_check(p + len, GUARD);
	if (bad >= 0) {
		note("%s: byte %ld after the data was overwritten", what, bad);
		return 0;
	}
	return 1;
}

/* The GRH a UD receive starts with names the peer as source, us as dest. */
static int grh_ok(const unsigned char *g)
{
	if (gid_is_v4(&peer.gid)) {
		/* RoCEv2 over IPv4: the IPv4 header in the GRH's last 20 bytes */
		if (g[20] >> 4 != 4 || memcmp(g + 32, peer.gid.raw + 12, 4) ||
		    memcmp(g + 36, my_gid.raw + 12, 4)) {
			note("UD GRH: IPv4 header %02x src %u.%u.%u.%u dst %u.%u.%u.%u",
			     g[20], g[32], g[33], g[34], g[35], g[36], g[37],
			     g[38], g[39]);
			return 0;
		}
		return 1;
	}
	if (g[0] >> 4 != 6 || memcmp(g + 8, peer.gid.raw, 16) ||
	    memcmp(g + 24, my_gid.raw, 16)) {
		note("UD GRH: version %d, source or destination GID wrong", g[0] >> 4);
		return 0;
	}
	return 1;
}

static int step_msg(uint64_t type, int idx, int ok, int fatal, int lost)
{
	uint64_t w[STEP_WORDS] = { type, idx, ok, fatal, lost };

	return send_words(w, STEP_WORDS);
}

static int step_wait(uint64_t type, int idx, int *ok, int *fatal, int *lost)
{
	uint64_t w[STEP_WORDS];

	if (recv_words(w, STEP_WORDS, type))
		return -1;
	if (w[1] != (uint64_t)idx) {
		note("peer is at step %" PRIu64 ", we are at %d", w[1], idx);
		return -1;
	}
	*ok = w[2] == 1;
	*fatal = w[3] != 0;
	if (lost)
		*lost = w[4] != 0 && qpt != IBV_QPT_RC;
	return 0;
}

static uint64_t atomic_value(const struct step *s, int which)
{
	uint64_t v = mix64(s->seed + which);

	/* the last iteration makes FETCH_ADD carry across all 64 bits */
	if (s->iter == ATOMIC_ITERS - 1 && which == 0)
		v |= 0xffffffffff000000ull;
	return v;
}

/* The requester's half of step @idx; sets *fatal if the QP broke. */
/* OP_BURST's WRs: piece k has wr_id id + (k + 1) << 40, checked in order. */
static int write_burst(uint64_t id, uint64_t laddr, uint32_t len,
		       uint64_t raddr)
{
	uint32_t piece = BURST_PIECE_MIN, n, posted = 0, done = 0;
	struct ibv_wc wc;

	while (len / piece > BURST_MAX_WRS)
		piece *= 2;
	n = len ? (len + piece - 1) / piece : 0;
	while (done < n) {
		while (posted < n && posted - done < BURST_DEPTH) {
			uint32_t o = posted * piece;

			if (post_send1(id + ((uint64_t)(posted + 1) << 40),
				       IBV_WR_RDMA_WRITE, laddr + o,
				       len - o < piece ? len - o : piece,
				       raddr + o, 0))
				return -1;
			posted++;
		}
		if (expect_wc(scq, id + ((uint64_t)(done + 1) << 40),
			      IBV_WC_RDMA_WRITE, &wc, "burst write completion"))
			return -1;
		done++;
	}
	return 0;
}

/*
 * OP_RECYCLE's WRs: piece k has wr_id id + (k + 1) << 40 and comes from
 * slot k % RECYCLE_SLOTS at @laddr; @want is the whole message.
 */
static int write_recycle(uint64_t id, uint64_t laddr, const unsigned char *want,
			 uint32_t len, uint64_t raddr)
{
	/* several packets each, ending off packet and page boundaries */
	uint32_t piece = 3 * mtu / 2 + 7, n, posted = 0, done = 0;
	unsigned char *slot;
	struct ibv_wc wc;

	n = len ? (len + piece - 1) / piece : 0;
	while (done < n) {
		while (posted < n && posted - done < RECYCLE_SLOTS) {
			uint32_t o = posted * piece;
			uint32_t plen = len - o < piece ? len - o : piece;

			slot = (unsigned char *)(uintptr_t)laddr +
			       (posted % RECYCLE_SLOTS) * piece;
			memcpy(slot, want + o, plen);
			if (post_send1(id + ((uint64_t)(posted + 1) << 40),
				       IBV_WR_RDMA_WRITE,
				       (uintptr_t)slot, plen, raddr + o, 0))
				return -1;
			posted++;
		}
		if (expect_wc(scq, id + ((uint64_t)(done + 1) << 40),
			      IBV_WC_RDMA_WRITE, &wc, "recycle write completion"))
			return -1;
		/* the WR is done: its bytes may change at once */
		slot = (unsigned char *)(uintptr_t)laddr +
		       (done % RECYCLE_SLOTS) * piece;
		memset(slot, JUNK_BYTE, len - done * piece < piece ?
		       len - done * piece : piece);
		done++;
	}
	return 0;
}

/*
 * OP_GATHER: @want (the whole message) written to @raddr by WRs of up to
 * GATHER_SGES pieces, pieces 4j and 4j + 1 taken from the main region at
 * @laddr, 4j + 2 and 4j + 3 from @g, each at the next free place there,
 * after a gap of 1 to 7 bytes for the first of each pair.
 */
static int write_gather(uint64_t id, uint64_t laddr, const unsigned char *want,
			uint32_t len, uint64_t raddr, unsigned char *g,
			struct ibv_mr *gmr)
{
	static const uint32_t sizes[] = { 37, 300, 1, 1500, 64, 5, 700, 13 };
	struct ibv_sge sge[GATHER_SGES];
	uint64_t pos[2] = { 0, 0 };
	uint32_t done = 0, k = 0, n;
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;
	int w = 0;

	while (done < len) {
		uint32_t wlen = 0;

		for (n = 0; n < GATHER_SGES && done + wlen < len; n++, k++) {
			/* every other WR: 24 x 37 B, more than an skb's frags */
			uint32_t sz = w & 1 ? 37 : sizes[k % 8], side = k / 2 & 1;
			unsigned char *p;

			if (sz > len - done - wlen)
				sz = len - done - wlen;
			/* pairs of pieces back to back, a gap before each pair */
			if (!(k & 1))
				pos[side] += 1 + k % 7;
			p = side ? g + pos[side] :
			    (unsigned char *)(uintptr_t)laddr + pos[side];
			memcpy(p, want + done + wlen, sz);
			sge[n].addr = (uintptr_t)p;
			sge[n].length = sz;
			sge[n].lkey = side ? gmr->lkey : mr->lkey;
			pos[side] += sz;
			wlen += sz;
		}
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = id + ((uint64_t)++w << 40);
		wr.sg_list = sge;
		wr.num_sge = n;
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.rdma.remote_addr = raddr + done;
		wr.wr.rdma.rkey = peer.rkey;
		if (ibv_post_send(qp, &wr, &bad)) {
			note("post_send of %u gathered pieces failed", n);
			return -1;
		}
		if (expect_wc(scq, wr.wr_id, IBV_WC_RDMA_WRITE, &wc,
			      "gather write completion"))
			return -1;
		done += wlen;
	}
	return 0;
}

/*
 * OP_GATHER's second region: half of the pieces and a gap of at most 7
 * bytes for each pair, with room to spare; the main region's half fits
 * in the step's len bytes plus slack.
 */
static int gather(uint64_t id, uint64_t laddr, const unsigned char *want,
		  uint32_t len, uint64_t raddr)
{
	size_t glen = (size_t)len * 2 + 8 * ((size_t)len + 1) + 4096;
	unsigned char *g = malloc(glen);
	struct ibv_mr *gmr;
	int err;

	if (!g) {
		note("out of memory");
		return -1;
	}
	gmr = ibv_reg_mr(pd, g, glen, IBV_ACCESS_LOCAL_WRITE);
	if (!gmr) {
		note("reg_mr of the gather region: %s", strerror(errno));
		free(g);
		return -1;
	}
	err = write_gather(id, laddr, want, len, raddr, g, gmr);
	ibv_dereg_mr(gmr);
	free(g);
	return err;
}

/*
 * The WRITEs of OP_BURST (from the step's data in place), OP_RECYCLE and
 * OP_GATHER (from a copy of the whole message @s describes).
 */
static int write_pieces(const struct step *s, uint64_t id, uint64_t laddr,
			uint64_t raddr)
{
	unsigned char *want;
	int err;

	if (s->op == OP_BURST)
		return write_burst(id, laddr, s->len, raddr);
	want = malloc(s->len ? s->len : 1);
	if (!want) {
		note("out of memory");
		return -1;
	}
	pattern_fill(want, s->len, s->seed);
	if (s->op == OP_RECYCLE)
		err = write_recycle(id, laddr, want, s->len, raddr);
	else
		err = gather(id, laddr, want, s->len, raddr);
	free(want);
	return err;
}

static int requester(const struct step *s, int idx, int *fatal, long *ms)
{
	uint32_t off = step_off(idx), aoff = ATOMIC_BASE + 8 * (idx % 8);
	uint64_t laddr = (uintptr_t)buf + off, raddr = peer.addr + off;
	uint64_t id = (uint64_t)idx << 4, *res = (uint64_t *)(buf + RESULT_BASE);
	__be32 imm = step_imm(s);
	struct ibv_wc wc;
	int ok = 1;
	long t0;

	*fatal = 1;
	switch (s->op) {
	case OP_SEND:
	case OP_SEND_IMM:
	case OP_WRITE:
	case OP_WRITE_IMM:
	case OP_BURST:
		pattern_fill(buf + off, s->len, s->seed);
		break;
	case OP_READ:
		memset(buf + DATA_BASE, GUARD_BYTE, off - DATA_BASE + s->len + GUARD);
		break;
	case OP_CAS:
	case OP_FAA:
		memset(res, GUARD_BYTE, 16);
		break;
	case OP_AW:
	case OP_RECYCLE:
	case OP_GATHER:
		break;
	default:
		return 0;
	}
	t0 = now_ms();
	switch (s->op) {
	case OP_SEND:
	case OP_SEND_IMM:
		if (post_send1(id, s->op == OP_SEND ? IBV_WR_SEND :
			       IBV_WR_SEND_WITH_IMM, laddr, s->len, 0, imm) ||
		    expect_wc(scq, id, IBV_WC_SEND, &wc, "send completion"))
			return 0;
		break;
	case OP_WRITE:
		/* a zero-byte SEND behind it tells an UC responder it is all there */
		if (post_send1(id, IBV_WR_RDMA_WRITE, laddr, s->len, raddr, 0) ||
		    post_send1(id + 1, IBV_WR_SEND, 0, 0, 0, 0) ||
		    expect_wc(scq, id, IBV_WC_RDMA_WRITE, &wc, "write completion") ||
		    expect_wc(scq, id + 1, IBV_WC_SEND, &wc, "marker send completion"))
			return 0;
		break;
	case OP_BURST:
	case OP_RECYCLE:
	case OP_GATHER:
		if (write_pieces(s, id, laddr, raddr) ||
		    post_send1(id + 1, IBV_WR_SEND, 0, 0, 0, 0) ||
		    expect_wc(scq, id + 1, IBV_WC_SEND, &wc, "marker send completion"))
			return 0;
		break;
	case OP_WRITE_IMM:
		if (post_send1(id, IBV_WR_RDMA_WRITE_WITH_IMM, laddr, s->len,
			       raddr, imm) ||
		    expect_wc(scq, id, IBV_WC_RDMA_WRITE, &wc, "write_imm completion"))
			return 0;
		break;
	case OP_READ:
		if (post_send1(id, IBV_WR_RDMA_READ, laddr, s->len, raddr, 0) ||
		    expect_wc(scq, id, IBV_WC_RDMA_READ, &wc, "read completion"))
			return 0;
		if (wc.byte_len != s->len) {
			note("read completion byte_len %u, want %u", wc.byte_len, s->len);
			ok = 0;
		}
		ok &= data_ok(buf + off, s->len, s->seed, off - DATA_BASE, "read data");
		break;
	case OP_CAS:
		/* a mismatching compare first: it must return but not swap */
		if (post_atomic1(id, IBV_WR_ATOMIC_CMP_AND_SWP, (uintptr_t)res,
				 peer.addr + aoff, atomic_value(s, 0) ^ 0x100,
				 atomic_value(s, 2)) ||
		    post_atomic1(id + 1, IBV_WR_ATOMIC_CMP_AND_SWP,
				 (uintptr_t)(res + 1), peer.addr + aoff,
				 atomic_value(s, 0), atomic_value(s, 1)) ||
		    expect_wc(scq, id, IBV_WC_COMP_SWAP, &wc, "cas (mismatch) completion"))
			return 0;
		if (wc.byte_len != 8) {
			note("cas completion byte_len %u, want 8", wc.byte_len);
			ok = 0;
		}
		if (expect_wc(scq, id + 1, IBV_WC_COMP_SWAP, &wc, "cas (match) completion"))
			return 0;
		if (res[0] != atomic_value(s, 0) || res[1] != atomic_value(s, 0)) {
			note("cas returned %#" PRIx64 " and %#" PRIx64 ", want %#" PRIx64 " twice",
			     res[0], res[1], atomic_value(s, 0));
			ok = 0;
		}
		break;
	case OP_FAA:
		if (post_atomic1(id, IBV_WR_ATOMIC_FETCH_AND_ADD, (uintptr_t)res,
				 peer.addr + aoff, atomic_value(s, 1), 0) ||
		    expect_wc(scq, id, IBV_WC_FETCH_ADD, &wc, "faa completion"))
			return 0;
		if (wc.byte_len != 8) {
			note("faa completion byte_len %u, want 8", wc.byte_len);
			ok = 0;
		}
		if (res[0] != atomic_value(s, 0)) {
			note("faa returned %#" PRIx64 ", want %#" PRIx64, res[0],
			     atomic_value(s, 0));
			ok = 0;
		}
		break;
	case OP_AW:
		if (post_atomic_write1(id, peer.addr + aoff, atomic_value(s, 1)) ||
		    expect_wc(scq, id, IBV_WC_ATOMIC_WRITE, &wc,
			      "atomic write completion"))
			return 0;
		if (wc.byte_len != 8) {
			note("atomic write completion byte_len %u, want 8",
			     wc.byte_len);
			ok = 0;
		}
		break;
	default:
		break;
	}
	*ms = now_ms() - t0;
	*fatal = 0;
	return ok;
}

/*
 * The responder's preparation: memory laid out, and the receive posted
 * unless @post is 0 (a lost message's receive is still there).
 */
static int responder_prep(const struct step *s, int idx, int post)
{
	uint32_t off = step_off(idx), aoff = ATOMIC_BASE + 8 * (idx % 8);
	uint64_t id = (uint64_t)idx << 4;
	uint32_t grh = qpt == IBV_QPT_UD ? GRH_LEN : 0;

	switch (s->op) {
	case OP_SEND:
	case OP_SEND_IMM:
		memset(buf + DATA_BASE, GUARD_BYTE,
		       off - DATA_BASE + grh + s->len + GUARD);
		/* room for exactly GUARD more bytes than are coming */
		return post ? post_recv1(id, (uintptr_t)buf + off,
					 grh + s->len + GUARD) : 0;
	case OP_WRITE:
	case OP_WRITE_IMM:
	case OP_BURST:
	case OP_RECYCLE:
	case OP_GATHER:
		memset(buf + DATA_BASE, GUARD_BYTE, off - DATA_BASE + s->len + GUARD);
		memset(buf + SCRATCH_BASE, GUARD_BYTE, 64);
		return post ? post_recv1(id, (uintptr_t)buf + SCRATCH_BASE, 64) : 0;
	case OP_READ:
		pattern_fill(buf + off, s->len, s->seed);
		return 0;
	case OP_CAS:
	case OP_FAA:
	case OP_AW:
		*(volatile uint64_t *)(buf + aoff) = atomic_value(s, 0);
		return 0;
	default:
		return -1;
	}
}

/*
 * The responder's check once the requester is done. On UC and UD, sets
 * *lost if the message did not arrive whole, and *consumed if its receive
 * completed all the same.
 */
static int responder_check(const struct step *s, int idx, int *fatal,
			   int *lost, int *consumed)
{
	uint32_t off = step_off(idx), aoff = ATOMIC_BASE + 8 * (idx % 8);
	uint64_t id = (uint64_t)idx << 4, want, got;
	int imm = s->op == OP_SEND_IMM || s->op == OP_WRITE_IMM;
	uint32_t grh = qpt == IBV_QPT_UD ? GRH_LEN : 0, want_len;
	enum ibv_wc_opcode opc;
	struct ibv_wc wc;
	int ok = 1, r;
	long bad;

	*fatal = 0;
	*lost = 0;
	*consumed = 0;
	switch (s->op) {
	case OP_SEND:
	case OP_SEND_IMM:
	case OP_WRITE:
	case OP_WRITE_IMM:
	case OP_BURST:
	case OP_RECYCLE:
	case OP_GATHER:
		opc = s->op == OP_WRITE_IMM ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;
		/* WRITE_IMM reports the length written; the marker is empty */
		want_len = s->op == OP_WRITE || s->op == OP_BURST ||
			   s->op == OP_RECYCLE || s->op == OP_GATHER ?
			   0 : s->len + grh;
		r = expect_wc_ms(rcq, id, opc, &wc, "receive completion",
				 qpt == IBV_QPT_RC ? WAIT_MS : LOSS_WAIT_MS);
		if (r == -2 && qpt != IBV_QPT_RC) {
			*lost = 1;
			return 0;
		}
		if (r) {
			*fatal = 1;
			return 0;
		}
		*consumed = 1;
		/*
		 * An UC WRITE that lost a packet: the responder dropped the
		 * rest of the message, so its tail from a packet boundary on
		 * is untouched while the marker behind it arrived.
		 */
		if (qpt == IBV_QPT_UC && s->op == OP_WRITE) {
			bad = pattern_check(buf + off, s->len, s->seed);
			if (bad >= 0 && bad % mtu == 0 &&
			    guard_check(buf + off + bad, s->len - bad) < 0) {
				note("written data ends at byte %ld of %u", bad, s->len);
				*lost = 1;
				return 0;
			}
		}
		if (wc.byte_len != want_len) {
			note("receive byte_len %u, want %u", wc.byte_len, want_len);
			ok = 0;
		}
		if (!!(wc.wc_flags & IBV_WC_WITH_IMM) != imm ||
		    (imm && wc.imm_data != step_imm(s))) {
			note("receive wc_flags %#x imm_data %#x, want %s %#x",
			     wc.wc_flags, be32toh(wc.imm_data),
			     imm ? "WITH_IMM" : "no imm", be32toh(step_imm(s)));
			ok = 0;
		}
		if (qpt == IBV_QPT_UD) {
			if (!(wc.wc_flags & IBV_WC_GRH) || wc.src_qp != peer.qpn) {
				note("UD receive wc_flags %#x src_qp %u, want GRH from %u",
				     wc.wc_flags, wc.src_qp, peer.qpn);
				ok = 0;
			}
			ok &= grh_ok(buf + off);
		}
		if (s->op == OP_WRITE || s->op == OP_WRITE_IMM ||
		    s->op == OP_BURST || s->op == OP_RECYCLE ||
		    s->op == OP_GATHER)
			ok &= guard_check(buf + SCRATCH_BASE, 64) < 0;
		/* in UD the GRH lies between the front guard and the data */
		if (grh && guard_check(buf + DATA_BASE, off - DATA_BASE) >= 0) {
			note("received data: guard bytes before the GRH overwritten");
			ok = 0;
		}
		ok &= data_ok(buf + off + grh, s->len, s->seed,
			      grh ? 0 : off - DATA_BASE,
			      s->op == OP_SEND || s->op == OP_SEND_IMM ?
			      "received data" : "written data");
		break;
	case OP_READ:
		ok &= pattern_check(buf + off, s->len, s->seed) < 0;
		if (!ok)
			note("RDMA READ changed the responder's buffer");
		break;
	case OP_CAS:
	case OP_FAA:
	case OP_AW:
		got = *(volatile uint64_t *)(buf + aoff);
		want = s->op == OP_FAA ? atomic_value(s, 0) + atomic_value(s, 1) :
		       atomic_value(s, 1);
		if (got != want) {
			note("%s target now %#" PRIx64 ", want %#" PRIx64,
			     op_names[s->op], got, want);
			ok = 0;
		}
		break;
	default:
		break;
	}
	return ok;
}

/* Returns 0 to go on, -1 to stop (fatal error or control socket lost). */
static int run_step(const struct step *s, int idx)
{
	int req = s->c2s == is_client;
	int ok_r = 0, ok_p = 0, fatal_r = 0, fatal_p = 0, lost = 0;
	int attempt, post = 1, consumed = 0;
	long ms = -1;

	for (attempt = 1; attempt <= ATTEMPTS; attempt++) {
		if (attempt > 1) {
			note("%s %u B: attempt %d lost on the wire, sending again",
			     op_names[s->op], s->len, attempt - 1);
			n_resent++;
		}
		ok_r = ok_p = 0;
		if (req) {
			if (step_wait(MSG_READY, idx, &ok_p, &fatal_p, NULL))
				return -1;
			if (!fatal_p)
				ok_r = requester(s, idx, &fatal_r, &ms);
			if (step_msg(MSG_DONE, idx, ok_r, fatal_r, 0) ||
			    step_wait(MSG_VERDICT, idx, &ok_p, &fatal_p, &lost))
				return -1;
		} else {
			fatal_p = responder_prep(s, idx, post) != 0;
			if (step_msg(MSG_READY, idx, !fatal_p, fatal_p, 0) ||
			    step_wait(MSG_DONE, idx, &ok_r, &fatal_r, NULL))
				return -1;
			if (!fatal_p && !fatal_r)
				ok_p = responder_check(s, idx, &fatal_p, &lost,
						       &consumed);
			if (step_msg(MSG_VERDICT, idx, ok_p, fatal_p, lost))
				return -1;
			/* a lost message's receive is still posted */
			post = consumed;
		}
		if (!lost || fatal_r || fatal_p)
			break;
	}
	n_steps++;
	if (!(ok_r && ok_p))
		n_failed++;
	printf("%s %d - %s %s %u B %s", ok_r && ok_p ? "ok" : "not ok", idx + 1,
	       type_name, op_names[s->op], s->len,
	       s->c2s ? "client->server" : "server->client");
	if (ms >= 0)
		printf(" (%ld ms)", ms);
	if (attempt > 1)
		printf(" (%d attempts)", attempt > ATTEMPTS ? ATTEMPTS : attempt);
	if (!(ok_r && ok_p))
		printf(" [%s failed]", lost ? "lost every time, so" :
		       !ok_r && !ok_p ? "both sides" :
		       ((!ok_r) == req ? "our side" : "peer side"));
	putchar('\n');
	/* after giving up, a receive may still be posted: stop there */
	return fatal_r || fatal_p || lost ? -1 : 0;
}

static int build_steps(struct step *st, int max)
{
	uint32_t sizes[MAX_SIZES + 1];
	int n = 0, ns = 0, capped = 0, i, j, d, op;

	for (i = 0; i < plan_nsizes; i++) {
		if (qpt == IBV_QPT_UD && plan_sizes[i] > mtu) {
			capped = 1;
			continue;
		}
		sizes[ns++] = plan_sizes[i];
	}
	if (capped) {
		for (i = 0; i < ns && sizes[i] != mtu; i++)
			;
		if (i == ns)
			sizes[ns++] = mtu;
	}
	for (op = 0; op < NUM_OPS; op++) {
		int iters = op == OP_CAS || op == OP_FAA || op == OP_AW ?
			    ATOMIC_ITERS : ns;

		if (!(plan_ops & (1 << op)))
			continue;
		for (i = 0; i < iters; i++) {
			for (d = 1; d >= 0; d--) {
				struct step *s;

				if (n == max)
					return n;
				s = &st[n];
				s->op = op;
				s->len = iters == ns ? sizes[i] : 8;
				s->c2s = d;
				s->iter = i;
				j = n++;
				s->seed = mix64(plan_nonce ^ ((uint64_t)op << 56) ^
						((uint64_t)s->len << 16) ^
						((uint64_t)d << 50) ^ j);
			}
		}
	}
	return n;
}

int main(int argc, char **argv)
{
	const char *devname = NULL, *sizes = DEFAULT_SIZES, *ops = NULL;
	const char *server = NULL;
	struct step *steps;
	char g1[64], g2[64];
	int port = DEFAULT_PORT, o, n, i, stopped = 0;
	long t0;

	while ((o = getopt(argc, argv, "d:g:p:t:s:o:m:h")) != -1) {
		char *end;

		switch (o) {
		case 'd':
			devname = optarg;
			break;
		case 'g':
			gid_index = strtol(optarg, &end, 10);
			if (*end || gid_index < 0 || gid_index > 255)
				gid_index = -2;
			break;
		case 'p':
			port = strtol(optarg, &end, 10);
			if (*end || port < 1 || port > 65535)
				port = -1;
			break;
		case 't':
			if (!strcmp(optarg, "rc"))
				qpt = IBV_QPT_RC;
			else if (!strcmp(optarg, "uc"))
				qpt = IBV_QPT_UC;
			else if (!strcmp(optarg, "ud"))
				qpt = IBV_QPT_UD;
			else
				qpt = -1;
			type_name = optarg;
			break;
		case 's':
			sizes = optarg;
			break;
		case 'o':
			ops = optarg;
			break;
		case 'm':
			me.mtu = strtoul(optarg, &end, 10);
			if (*end || mtu_enum(me.mtu) < 0)
				me.mtu = 1;
			break;
		default:
			usage(argv[0]);
			return 2;
		}
	}
	if (optind < argc - 1 || gid_index < 0 || port < 0 || (int)qpt < 0 ||
	    me.mtu == 1 || parse_sizes(sizes, plan_sizes, &plan_nsizes)) {
		usage(argv[0]);
		return 2;
	}
	plan_ops = ops ? parse_ops(ops) : (int)(type_ops[qpt] & ~NAMED_ONLY_OPS);
	if (plan_ops < 0 || check_plan()) {
		fprintf(stderr, "%s: ops %s: unknown, or not for %s QPs\n",
			argv[0], ops, type_name);
		return 2;
	}
	if (optind < argc) {
		server = argv[optind];
		is_client = 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	{
		struct timespec t;

		clock_gettime(CLOCK_REALTIME, &t);
		plan_nonce = mix64(t.tv_sec ^ ((uint64_t)t.tv_nsec << 20) ^ getpid());
	}

	if (is_client ? connect_tcp(server, port) : serve_tcp(port))
		goto fail;
	if (exchange_plan())
		goto fail;
	buf_len = plan_buf_len();
	if (setup_verbs(devname) || exchange_hello() || qp_to_rts())
		goto fail;
	gid_str(&my_gid, g1, sizeof(g1));
	gid_str(&peer.gid, g2, sizeof(g2));
	note("%s on %s gid %d %s qpn %u psn %#x", is_client ? "client" : "server",
	     ibv_get_device_name(ctx->device), gid_index, g1, me.qpn, me.psn);
	note("peer gid %s qpn %u psn %#x; %s, path MTU %u, run %#" PRIx64,
	     g2, peer.qpn, peer.psn, type_name, mtu, plan_nonce);
	/* for a wire fuzzer that aims at this run's QP and MR */
	note("mr rkey %#x addr %#" PRIx64 " len %" PRIu64, me.rkey,
	     (uint64_t)me.addr, (uint64_t)me.len);
	fflush(stdout);

	steps = calloc(NUM_OPS * 2 * (MAX_SIZES + 1), sizeof(*steps));
	if (!steps)
		goto fail;
	n = build_steps(steps, NUM_OPS * 2 * (MAX_SIZES + 1));
	t0 = now_ms();
	for (i = 0; i < n; i++) {
		if (run_step(&steps[i], i)) {
			stopped = 1;
			break;
		}
	}
	if (stopped && i < n)
		note("stopped after step %d of %d: the QP or the connection is unusable",
		     i + 1, n);
	note("%d of %d transfers verified in %ld ms; %d resent after a loss",
	     n_steps - n_failed, n, now_ms() - t0, n_resent);
	printf("1..%d\n", n);
	free(steps);
	ibv_destroy_qp(qp);
	if (ah)
		ibv_destroy_ah(ah);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(scq);
	ibv_destroy_cq(rcq);
	ibv_destroy_comp_channel(chan);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(buf);
	close(sock);
	return n_failed || n_steps != n ? 1 : 0;
fail:
	printf("not ok - setup failed\n");
	return 1;
}
