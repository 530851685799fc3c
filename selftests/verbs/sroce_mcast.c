// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * UD multicast through the verbs: ibv_attach_mcast/ibv_detach_mcast and
 * datagrams to QPN 0xFFFFFF, every payload checked byte for byte.
 *
 *   sroce_mcast -d DEV -g GIDX -m GROUP -l
 *	one process: two attached QPs each get every datagram once, an
 *	unattached one none; after a detach only the other gets them; bad
 *	attaches are refused; the per-group limit holds.
 *   sroce_mcast -d DEV -g GIDX -m GROUP -r [-n COUNT]
 *	two attached QPs; prints "ready", then expects COUNT datagrams on
 *	each (from another host's -s).
 *   sroce_mcast -d DEV -g GIDX -m GROUP -s [-n COUNT]
 *	sends COUNT datagrams to the group.
 *
 * GROUP is an IPv4 (224.0.0.0/4) or IPv6 (ff00::/8) multicast address.
 * Output is TAP-like ("ok"/"not ok" lines); exit status 1 on any failure.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#define QKEY		0x0badcafeu
#define MC_QPN		0xffffffu
#define MSG_LEN		512u
#define GRH_LEN		40u
#define NRECV		64		/* receives posted per QP */
/* times TSCALE, which make check-debug's slower kernel sets in guests */
#define WAIT_BASE_MS	30000
static long wait_ms = WAIT_BASE_MS;
#define WAIT_MS		wait_ms
#define QUIET_MS	1000		/* how long "nothing arrives" is watched */
#define MAX_PER_GROUP	64		/* SROCE_MAX_MCAST_QP_ATTACH */

static int failures;

static void report(int ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void report(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	failures += !ok;
}

#define CHECK(cond, ...) report(!!(cond), __VA_ARGS__)

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;		/* receivers' completions */
static struct ibv_cq *scq;		/* senders' completions */
static int gid_index = -1;
static union ibv_gid group;

struct rqp {
	struct ibv_qp *qp;
	unsigned char *buf;		/* NRECV slots of GRH_LEN + MSG_LEN */
	struct ibv_mr *mr;
	unsigned int got;		/* datagrams received, in order */
};

static long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

/* Datagram @seq's byte @i: differs per datagram and per position. */
static unsigned char pattern(unsigned int seq, unsigned int i)
{
	return (unsigned char)(seq * 131u + i * 7u + (i >> 8));
}

static int ud_to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = QKEY };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		return -1;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static struct ibv_qp *ud_qp(struct ibv_cq *c)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = c, .recv_cq = c, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 16, .max_recv_wr = NRECV,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	if (qp && ud_to_rts(qp)) {
		ibv_destroy_qp(qp);
		qp = NULL;
	}
	return qp;
}

static int post_slot(struct rqp *r, unsigned int slot)
{
	unsigned char *p = r->buf + slot * (GRH_LEN + MSG_LEN);
	struct ibv_sge sge = { (uintptr_t)p, GRH_LEN + MSG_LEN, r->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge,
				  .num_sge = 1 };
	struct ibv_recv_wr *bad;

	memset(p, 0, GRH_LEN + MSG_LEN);
	return ibv_post_recv(r->qp, &wr, &bad);
}

static int rqp_init(struct rqp *r)
{
	unsigned int i;

	memset(r, 0, sizeof(*r));
	r->qp = ud_qp(cq);
	r->buf = calloc(NRECV, GRH_LEN + MSG_LEN);
	if (!r->qp || !r->buf)
		return -1;
	r->mr = ibv_reg_mr(pd, r->buf, NRECV * (GRH_LEN + MSG_LEN),
			   IBV_ACCESS_LOCAL_WRITE);
	if (!r->mr)
		return -1;
	for (i = 0; i < NRECV; i++)
		if (post_slot(r, i))
			return -1;
	return 0;
}

static void rqp_fini(struct rqp *r)
{
	if (r->qp)
		ibv_destroy_qp(r->qp);
	if (r->mr)
		ibv_dereg_mr(r->mr);
	free(r->buf);
}

/*
 * One receive completion: the datagram must be the next one in order,
 * whole, with the group as the GRH's destination.  -1 on a mismatch.
 */
static int rqp_take(struct rqp *r, const struct ibv_wc *wc, uint32_t src_qp)
{
	unsigned char *p = r->buf + wc->wr_id * (GRH_LEN + MSG_LEN);
	const unsigned char *dgid = p + 24;	/* IPv6 header's daddr */
	unsigned int i;

	if (wc->status != IBV_WC_SUCCESS || wc->byte_len != GRH_LEN + MSG_LEN ||
	    !(wc->wc_flags & IBV_WC_GRH) || (src_qp && wc->src_qp != src_qp)) {
		printf("# qp %u: status %s len %u flags %#x src %u\n",
		       r->qp->qp_num, ibv_wc_status_str(wc->status),
		       wc->byte_len, wc->wc_flags, wc->src_qp);
		return -1;
	}
	/* IPv4: 20 zero bytes then the IPv4 header, daddr at its end */
	if (IN6_IS_ADDR_V4MAPPED((struct in6_addr *)group.raw) ?
	    memcmp(p + 36, group.raw + 12, 4) : memcmp(dgid, group.raw, 16)) {
		printf("# qp %u: GRH does not name the group\n", r->qp->qp_num);
		return -1;
	}
	for (i = 0; i < MSG_LEN; i++) {
		if (p[GRH_LEN + i] != pattern(r->got, i)) {
			printf("# qp %u: datagram %u byte %u is %#x, not %#x\n",
			       r->qp->qp_num, r->got, i, p[GRH_LEN + i],
			       pattern(r->got, i));
			return -1;
		}
	}
	r->got++;
	return post_slot(r, wc->wr_id);
}

static struct rqp *rqp_of(struct rqp *rs, int n, uint32_t qpn)
{
	int i;

	for (i = 0; i < n; i++)
		if (rs[i].qp->qp_num == qpn)
			return &rs[i];
	return NULL;
}

/*
 * Poll until each of @rs[0..n) has @want datagrams, or for @ms when
 * @want is 0 (then anything arriving is a failure).  Returns 0 if every
 * QP got exactly what it should.
 */
static int collect(struct rqp *rs, int n, unsigned int want, uint32_t src,
		   long ms)
{
	long end = now_ms() + ms;
	struct ibv_wc wc;
	struct rqp *r;
	int i, done;

	for (;;) {
		done = 1;
		for (i = 0; i < n; i++)
			done &= rs[i].got >= want;
		if (want && done)
			return 0;
		if (now_ms() > end)
			return want ? -1 : 0;
		if (ibv_poll_cq(cq, 1, &wc) != 1) {
			usleep(1000);
			continue;
		}
		r = rqp_of(rs, n, wc.qp_num);
		if (!r || r->got >= want || rqp_take(r, &wc, src))
			return -1;
	}
}

static struct ibv_ah *group_ah(void)
{
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = group, .sgid_index = gid_index,
			 .hop_limit = 1 },
	};

	return ibv_create_ah(pd, &aa);
}

/* Send datagrams @first..@first+@n-1 to the group from @qp, one by one. */
static int send_to_group(struct ibv_qp *qp, struct ibv_ah *ah,
			 unsigned int first, unsigned int n)
{
	static unsigned char msg[MSG_LEN];
	static struct ibv_mr *mr;
	struct ibv_sge sge;
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;
	unsigned int s, i;
	long end;

	if (!mr)
		mr = ibv_reg_mr(pd, msg, sizeof(msg), 0);
	if (!mr)
		return -1;
	for (s = first; s < first + n; s++) {
		for (i = 0; i < MSG_LEN; i++)
			msg[i] = pattern(s, i);
		sge = (struct ibv_sge){ (uintptr_t)msg, MSG_LEN, mr->lkey };
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 1000 + s;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_SEND;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = MC_QPN;
		wr.wr.ud.remote_qkey = QKEY;
		if (ibv_post_send(qp, &wr, &bad))
			return -1;
		/* one in flight: the buffer is rewritten for the next one */
		for (end = now_ms() + WAIT_MS;;) {
			if (now_ms() > end)
				return -1;
			if (ibv_poll_cq(scq, 1, &wc) != 1) {
				usleep(200);
				continue;
			}
			if (wc.status != IBV_WC_SUCCESS || wc.wr_id != 1000 + s)
				return -1;
			break;
		}
	}
	return 0;
}

static void test_refusals(struct ibv_qp *ud)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *rc = ibv_create_qp(pd, &ia);
	struct ibv_qp *many[MAX_PER_GROUP];
	union ibv_gid uni = group, other = group;
	int i, n, err = -1;

	CHECK(rc && ibv_attach_mcast(rc, &group, 0) == EINVAL,
	      "attach of an RC QP: EINVAL");
	if (rc)
		ibv_destroy_qp(rc);
	/* the group's address with its multicast prefix taken off */
	if (IN6_IS_ADDR_V4MAPPED((struct in6_addr *)uni.raw))
		uni.raw[12] = 10;
	else
		uni.raw[0] = 0xfe;
	CHECK(ibv_attach_mcast(ud, &uni, 0) == EINVAL,
	      "attach to a unicast GID: EINVAL");
	other.raw[15] ^= 0x55;
	CHECK(ibv_detach_mcast(ud, &other, 0) == EINVAL,
	      "detach from a group never joined: EINVAL");

	/* @ud is attached already: MAX_PER_GROUP - 1 more fit */
	for (n = 0; n < MAX_PER_GROUP; n++) {
		many[n] = ud_qp(cq);
		if (!many[n])
			break;
		err = ibv_attach_mcast(many[n], &group, 0);
		if (err) {
			ibv_destroy_qp(many[n]);
			break;
		}
	}
	CHECK(n == MAX_PER_GROUP - 1 && err == ENOMEM,
	      "%d QPs fit in a group, the next gets ENOMEM (got %d, err %d)",
	      MAX_PER_GROUP, n + 1, err);
	err = 0;
	for (i = 0; i < n; i++) {
		/* uverbs refuses to destroy an attached QP */
		if (i == 0 && ibv_destroy_qp(many[i]) != EBUSY)
			err = -1;
		err |= ibv_detach_mcast(many[i], &group, 0);
		err |= ibv_destroy_qp(many[i]);
	}
	CHECK(!err, "an attached QP cannot be destroyed; detached it can");
}

static int run_local(void)
{
	struct rqp rs[3];
	struct ibv_qp *tx;
	struct ibv_ah *ah;
	int i, err = 0;

	for (i = 0; i < 3; i++)
		err |= rqp_init(&rs[i]);
	tx = ud_qp(scq);
	ah = group_ah();
	CHECK(!err && tx && ah, "three receiving UD QPs, a sender, its AH");
	if (err || !tx || !ah)
		return 1;
	CHECK(!ibv_attach_mcast(rs[0].qp, &group, 0) &&
	      !ibv_attach_mcast(rs[1].qp, &group, 0),
	      "QPs %u and %u attached", rs[0].qp->qp_num, rs[1].qp->qp_num);
	CHECK(!ibv_attach_mcast(rs[1].qp, &group, 0),
	      "attaching again is accepted (and changes nothing)");

	CHECK(!send_to_group(tx, ah, 0, 20), "20 datagrams sent to the group");
	err = collect(rs, 2, 20, tx->qp_num, WAIT_MS);
	CHECK(!err, "both attached QPs got all 20, in order, byte for byte (%u, %u)",
	      rs[0].got, rs[1].got);
	CHECK(!collect(rs, 3, 0, 0, QUIET_MS) && rs[2].got == 0,
	      "no copy more, none for the unattached QP");

	CHECK(!ibv_detach_mcast(rs[0].qp, &group, 0), "QP %u detached",
	      rs[0].qp->qp_num);
	CHECK(!send_to_group(tx, ah, 20, 10), "10 more sent");
	err = collect(&rs[1], 1, 30, tx->qp_num, WAIT_MS);
	CHECK(!err, "the attached QP got them (%u)", rs[1].got);
	CHECK(!collect(rs, 3, 0, 0, QUIET_MS) && rs[0].got == 20 &&
	      rs[2].got == 0, "the detached QP got none of them");

	test_refusals(rs[1].qp);

	CHECK(!ibv_detach_mcast(rs[1].qp, &group, 0), "last QP detached");
	CHECK(!send_to_group(tx, ah, 30, 5), "5 more sent to the empty group");
	CHECK(!collect(rs, 3, 0, 0, QUIET_MS) && rs[1].got == 30,
	      "nobody gets them");
	ibv_destroy_ah(ah);
	ibv_destroy_qp(tx);
	for (i = 0; i < 3; i++)
		rqp_fini(&rs[i]);
	return 0;
}

static int run_recv(unsigned int count)
{
	struct rqp rs[2];
	int i, err = 0;

	for (i = 0; i < 2; i++)
		err |= rqp_init(&rs[i]) ?: ibv_attach_mcast(rs[i].qp, &group, 0);
	CHECK(!err, "two UD QPs attached");
	if (err)
		return 1;
	printf("ready\n");
	err = collect(rs, 2, count, 0, WAIT_MS);
	CHECK(!err, "both got all %u datagrams, in order, byte for byte (%u, %u)",
	      count, rs[0].got, rs[1].got);
	CHECK(!collect(rs, 2, 0, 0, QUIET_MS), "and not one more");
	for (i = 0; i < 2; i++) {
		CHECK(!ibv_detach_mcast(rs[i].qp, &group, 0), "detach");
		rqp_fini(&rs[i]);
	}
	return 0;
}

static int run_send(unsigned int count)
{
	struct ibv_qp *tx = ud_qp(scq);
	struct ibv_ah *ah = tx ? group_ah() : NULL;

	CHECK(tx && ah, "sender QP and group AH");
	if (!tx || !ah)
		return 1;
	CHECK(!send_to_group(tx, ah, 0, count), "%u datagrams sent", count);
	ibv_destroy_ah(ah);
	ibv_destroy_qp(tx);
	return 0;
}

static int parse_group(const char *s)
{
	struct in_addr a4;

	memset(&group, 0, sizeof(group));
	if (inet_pton(AF_INET, s, &a4) == 1) {
		group.raw[10] = 0xff;
		group.raw[11] = 0xff;
		memcpy(group.raw + 12, &a4, 4);
		return IN_MULTICAST(ntohl(a4.s_addr)) ? 0 : -1;
	}
	if (inet_pton(AF_INET6, s, group.raw) == 1)
		return group.raw[0] == 0xff ? 0 : -1;
	return -1;
}

int main(int argc, char **argv)
{
	const char *devname = NULL, *grp = NULL, *scale = getenv("TSCALE");
	unsigned int count = 50;
	struct ibv_device **list;
	int i, o, mode = 0, ret;

	if (scale && atoi(scale) > 1 && atoi(scale) < 10)
		wait_ms = WAIT_BASE_MS * atoi(scale);

	while ((o = getopt(argc, argv, "d:g:m:n:lrs")) != -1) {
		switch (o) {
		case 'd':
			devname = optarg;
			break;
		case 'g':
			gid_index = atoi(optarg);
			break;
		case 'm':
			grp = optarg;
			break;
		case 'n':
			count = strtoul(optarg, NULL, 0);
			break;
		case 'l':
		case 'r':
		case 's':
			mode = o;
			break;
		default:
			mode = 0;
			grp = NULL;
			break;
		}
	}
	if (!mode || !grp || gid_index < 0 || parse_group(grp) ||
	    !count || count > NRECV) {
		fprintf(stderr, "usage: %s -d DEV -g GID_INDEX -m GROUP -l|-r|-s [-n COUNT <= %d]\n",
			argv[0], NRECV);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	list = ibv_get_device_list(NULL);
	for (i = 0; list && list[i]; i++)
		if (!devname || !strcmp(devname, ibv_get_device_name(list[i])))
			break;
	ctx = list && list[i] ? ibv_open_device(list[i]) : NULL;
	if (list)
		ibv_free_device_list(list);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	cq = pd ? ibv_create_cq(ctx, 4 * NRECV, NULL, NULL, 0) : NULL;
	scq = cq ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	CHECK(scq, "open %s, PD, CQs", devname ?: "(any)");
	if (!scq)
		return 1;
	if (mode == 'l')
		ret = run_local();
	else if (mode == 'r')
		ret = run_recv(count);
	else
		ret = run_send(count);
	ibv_destroy_cq(scq);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	printf("# %s\n", failures || ret ? "FAILED" : "all passed");
	return failures || ret ? 1 : 0;
}
