// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The local end of a hostile-peer test: one RC QP connected to a peer that
 * is only a packet injector (sroce_inject), driven by commands on stdin.
 *
 *   sroce_victim -d DEV -g GID_INDEX -r PEER_IP -q PEER_QPN
 *                [-p SQ_PSN] [-P RQ_PSN] [-m MTU] [-s MR_BYTES]
 *                [-t TIMEOUT] [-c RETRY_CNT] [-n RNR_RETRY] [-x]
 *
 * It creates a PD, a CQ, an RC QP and one MR of MR_BYTES (default 1 MiB,
 * local write, remote read and write), moves the QP to RTS towards
 * PEER_IP/PEER_QPN with the given PSNs, path MTU (256..4096, default
 * 1024), local ACK TIMEOUT (IBA exponent, default 0: wait for ever, so a
 * silent peer cannot fail the QP while a test looks at it) and retry
 * counts (7), then prints
 *
 *   qpn=N rkey=0xK va=0xV len=L sq_psn=P rq_psn=R mtu=M
 *
 * and answers each command line with one line starting "ok" or "err":
 *
 *   post_write LEN [LOFF [RVA [RKEY]]]   RDMA WRITE LEN bytes from MR+LOFF
 *                                         (default: 0, this MR's va/rkey)
 *   post_send LEN [LOFF]
 *   post_read LEN [LOFF [RVA [RKEY]]]
 *   post_recv LEN [LOFF]                  a receive WQE on MR+LOFF
 *   poll MS      wait up to MS for one CQE: "ok wc wr_id=I status=S
 *                (STR) opcode=O len=L" or "ok none"
 *   fill LOFF LEN SEED    write sroce_inject's payload pattern (offset 0
 *                         at LOFF) into the MR
 *   zero LOFF LEN
 *   check LOFF LEN SEED [POFF]  "ok" if MR+LOFF holds the pattern
 *                         starting at pattern offset POFF (default 0),
 *                         else "err mismatch at N"
 *   state        "ok state=N" (enum ibv_qp_state: 2 RTR, 3 RTS, 6 ERR)
 *   dereg_mr     "ok dereg_ms=N" once ibv_dereg_mr returned (or "err")
 *   quit
 *
 * With -x the QP is an XRC target (XRC_RECV, in RTR) in its own XRC
 * domain, with an XRC SRQ of that domain whose number ends the first line
 * (" srqn=N"); post_recv posts to the SRQ, whose CQ poll reads, and
 * sends are refused. Two more commands:
 *
 *   destroy_srq  "ok destroy_ms=N" once ibv_destroy_srq returned
 *   new_srq      another XRC SRQ of the domain: "ok srqn=N"
 *
 * Work requests are signaled and numbered from 1 (wr_id). Exit status 0
 * after quit or end of input, 1 if setup failed, 2 on bad usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "rc_connect.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static struct ibv_mr *mr;
static struct ibv_xrcd *xrcd;	/* -x */
static struct ibv_srq *srq;
static unsigned char *buf;
static size_t buf_len = 1 << 20;
static uint64_t next_wr_id = 1;

/* Must match sroce_inject.c's pattern_byte(). */
static unsigned char pattern_byte(uint32_t seed, uint64_t off)
{
	return (unsigned char)(seed * 131u + off * 7u + (off >> 8) * 13u + 1u);
}

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int to_mtu(int m, enum ibv_mtu *out)
{
	switch (m) {
	case 256: *out = IBV_MTU_256; return 0;
	case 512: *out = IBV_MTU_512; return 0;
	case 1024: *out = IBV_MTU_1024; return 0;
	case 2048: *out = IBV_MTU_2048; return 0;
	case 4096: *out = IBV_MTU_4096; return 0;
	}
	return -1;
}

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *c = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			c = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return c;
}

static int range_ok(uint64_t off, uint64_t len)
{
	return off <= buf_len && len <= buf_len - off;
}

/* One signaled WR on the whole of MR+LOFF; returns its wr_id or 0. */
static uint64_t post(enum ibv_wr_opcode op, uint64_t len, uint64_t loff,
		     uint64_t rva, uint32_t rkey, int recv)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf + loff,
		.length = (uint32_t)len,
		.lkey = mr->lkey,
	};
	struct ibv_send_wr swr = {}, *bad;
	struct ibv_recv_wr rwr = {}, *rbad;
	int err;

	if (!range_ok(loff, len))
		return 0;
	if (recv) {
		rwr.wr_id = next_wr_id;
		rwr.sg_list = &sge;
		rwr.num_sge = 1;
		err = srq ? ibv_post_srq_recv(srq, &rwr, &rbad) :
			    ibv_post_recv(qp, &rwr, &rbad);
	} else {
		swr.wr_id = next_wr_id;
		swr.sg_list = &sge;
		swr.num_sge = len ? 1 : 0;
		swr.opcode = op;
		swr.send_flags = IBV_SEND_SIGNALED;
		swr.wr.rdma.remote_addr = rva;
		swr.wr.rdma.rkey = rkey;
		err = ibv_post_send(qp, &swr, &bad);
	}
	if (err) {
		errno = err;
		return 0;
	}
	return next_wr_id++;
}

static struct ibv_srq *new_xsrq(void)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = 64, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC, .pd = pd, .xrcd = xrcd, .cq = cq,
	};

	return ibv_create_srq_ex(ctx, &a);
}

static uint32_t srq_num(void)
{
	uint32_t n = 0;

	return srq && !ibv_get_srq_num(srq, &n) ? n : 0;
}

static void cmd_poll(long ms)
{
	uint64_t end = now_ms() + (ms > 0 ? ms : 0);
	struct ibv_wc wc;
	int n;

	do {
		n = ibv_poll_cq(cq, 1, &wc);
		if (n < 0) {
			printf("err poll_cq %d\n", n);
			return;
		}
		if (n) {
			printf("ok wc wr_id=%" PRIu64 " status=%d (%s) opcode=%d len=%u\n",
			       wc.wr_id, wc.status, ibv_wc_status_str(wc.status),
			       wc.opcode, wc.byte_len);
			return;
		}
		usleep(1000);
	} while (now_ms() < end);
	printf("ok none\n");
}

static void run(char *line)
{
	unsigned long long a[4] = { 0, 0, 0, 0 };
	char cmd[32];
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	enum ibv_wr_opcode op;
	uint64_t id, i, t0;
	int n, rc;

	n = sscanf(line, "%31s %lli %lli %lli %lli", cmd, &a[0], &a[1], &a[2],
		   &a[3]);
	if (n < 1)
		return;
	if (!strcmp(cmd, "post_write") || !strcmp(cmd, "post_send") ||
	    !strcmp(cmd, "post_read") || !strcmp(cmd, "post_recv")) {
		if (n < 2) {
			printf("err usage\n");
			return;
		}
		if (n < 4)
			a[2] = (uintptr_t)buf;
		if (n < 5)
			a[3] = mr->rkey;
		op = !strcmp(cmd, "post_write") ? IBV_WR_RDMA_WRITE :
		     !strcmp(cmd, "post_read") ? IBV_WR_RDMA_READ : IBV_WR_SEND;
		id = post(op, a[0], a[1], a[2], (uint32_t)a[3],
			  !strcmp(cmd, "post_recv"));
		if (id)
			printf("ok wr_id=%" PRIu64 "\n", id);
		else
			printf("err %s\n", strerror(errno ? errno : EINVAL));
	} else if (!strcmp(cmd, "poll")) {
		cmd_poll(n > 1 ? (long)a[0] : 0);
	} else if (!strcmp(cmd, "fill") || !strcmp(cmd, "zero")) {
		if (n < 3 || !range_ok(a[0], a[1])) {
			printf("err range\n");
			return;
		}
		for (i = 0; i < a[1]; i++)
			buf[a[0] + i] = cmd[0] == 'z' ? 0 :
					pattern_byte((uint32_t)a[2], i);
		printf("ok\n");
	} else if (!strcmp(cmd, "check")) {
		if (n < 4 || !range_ok(a[0], a[1])) {
			printf("err range\n");
			return;
		}
		for (i = 0; i < a[1]; i++)
			if (buf[a[0] + i] != pattern_byte((uint32_t)a[2], a[3] + i))
				break;
		if (i == a[1])
			printf("ok\n");
		else
			printf("err mismatch at %" PRIu64 ": 0x%02x, want 0x%02x\n",
			       i, buf[a[0] + i],
			       pattern_byte((uint32_t)a[2], a[3] + i));
	} else if (!strcmp(cmd, "state")) {
		rc = ibv_query_qp(qp, &attr, IBV_QP_STATE, &init);
		if (rc)
			printf("err query_qp %d\n", rc);
		else
			printf("ok state=%d\n", attr.qp_state);
	} else if (!strcmp(cmd, "destroy_srq") && srq) {
		t0 = now_ms();
		rc = ibv_destroy_srq(srq);
		if (rc) {
			printf("err destroy_srq %d\n", rc);
			return;
		}
		srq = NULL;
		printf("ok destroy_ms=%" PRIu64 "\n", now_ms() - t0);
	} else if (!strcmp(cmd, "new_srq") && xrcd && !srq) {
		srq = new_xsrq();
		if (srq)
			printf("ok srqn=%u\n", srq_num());
		else
			printf("err create_srq_ex %s\n", strerror(errno));
	} else if (!strcmp(cmd, "dereg_mr")) {
		if (!mr) {
			printf("err no mr\n");
			return;
		}
		t0 = now_ms();
		rc = ibv_dereg_mr(mr);
		if (rc) {
			printf("err dereg_mr %d after %" PRIu64 " ms\n", rc,
			       now_ms() - t0);
			return;
		}
		mr = NULL;
		printf("ok dereg_ms=%" PRIu64 "\n", now_ms() - t0);
	} else {
		printf("err unknown command %s\n", cmd);
	}
}

/* -x: an XRC target in RTR towards the peer, and an XRC SRQ. */
static int setup_xrc(const struct rc_conn *c)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1, .oflags = O_CREAT,
	};
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = c->access,
	};

	xrcd = ibv_open_xrcd(ctx, &xa);
	if (!xrcd)
		return -1;
	qa.xrcd = xrcd;
	qp = ibv_create_qp_ex(ctx, &qa);
	srq = new_xsrq();
	if (!qp || !srq || ibv_modify_qp(qp, &a, IBV_QP_STATE |
					 IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					 IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = c->mtu;
	a.dest_qp_num = c->dqpn;
	a.rq_psn = c->rq_psn;
	a.max_dest_rd_atomic = c->rd_atomic;
	a.min_rnr_timer = c->min_rnr_timer;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = c->dgid;
	a.ah_attr.grh.sgid_index = c->sgid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			     IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			     IBV_QP_MIN_RNR_TIMER) ? -1 : 0;
}

static int setup(const char *dev, int gid_index, const char *peer,
		 uint32_t peer_qpn, uint32_t sq_psn, uint32_t rq_psn,
		 enum ibv_mtu mtu, int timeout, int retry, int rnr, int xrc)
{
	struct ibv_qp_init_attr qia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct rc_conn c = {
		.sgid_index = gid_index, .dqpn = peer_qpn,
		.rq_psn = rq_psn, .sq_psn = sq_psn, .mtu = mtu,
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
		.rd_atomic = 1, .min_rnr_timer = 1,
		.timeout = timeout, .retry_cnt = retry, .rnr_retry = rnr,
	};
	struct in_addr ip;

	if (inet_pton(AF_INET, peer, &ip) != 1)
		return -1;
	/* IPv4-mapped GID ::ffff:a.b.c.d */
	c.dgid.raw[10] = 0xff;
	c.dgid.raw[11] = 0xff;
	memcpy(&c.dgid.raw[12], &ip, 4);
	ctx = open_dev(dev);
	if (!ctx)
		return -1;
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 256, NULL, NULL, 0) : NULL;
	if (!cq)
		return -1;
	buf = calloc(1, buf_len ? buf_len : 1);
	mr = buf ? ibv_reg_mr(pd, buf, buf_len, IBV_ACCESS_LOCAL_WRITE |
			      IBV_ACCESS_REMOTE_WRITE |
			      IBV_ACCESS_REMOTE_READ) : NULL;
	if (!mr)
		return -1;
	if (xrc)
		return setup_xrc(&c);
	qia.send_cq = cq;
	qia.recv_cq = cq;
	qp = ibv_create_qp(pd, &qia);
	if (!qp)
		return -1;
	return rc_connect(qp, &c) ? -1 : 0;
}

int main(int argc, char **argv)
{
	const char *dev = NULL, *peer = NULL;
	unsigned long peer_qpn = 0, sq_psn = 0, rq_psn = 0;
	int gid = -1, mtu = 1024, timeout = 0, retry = 7, rnr = 7, opt;
	int xrc = 0;
	enum ibv_mtu m;
	char line[512];

	while ((opt = getopt(argc, argv, "d:g:r:q:p:P:m:s:t:c:n:x")) != -1) {
		switch (opt) {
		case 'd': dev = optarg; break;
		case 'g': gid = atoi(optarg); break;
		case 'r': peer = optarg; break;
		case 'q': peer_qpn = strtoul(optarg, NULL, 0); break;
		case 'p': sq_psn = strtoul(optarg, NULL, 0); break;
		case 'P': rq_psn = strtoul(optarg, NULL, 0); break;
		case 'm': mtu = atoi(optarg); break;
		case 's': buf_len = strtoull(optarg, NULL, 0); break;
		case 't': timeout = atoi(optarg); break;
		case 'c': retry = atoi(optarg); break;
		case 'n': rnr = atoi(optarg); break;
		case 'x': xrc = 1; break;
		default: return 2;
		}
	}
	if (!dev || gid < 0 || !peer || !peer_qpn || peer_qpn > 0xffffff ||
	    sq_psn > 0xffffff || rq_psn > 0xffffff || to_mtu(mtu, &m) ||
	    timeout < 0 || timeout > 31 || retry < 0 || retry > 7 ||
	    rnr < 0 || rnr > 7) {
		fprintf(stderr, "usage: see the comment at the top of sroce_victim.c\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (setup(dev, gid, peer, peer_qpn, sq_psn, rq_psn, m, timeout, retry,
		  rnr, xrc)) {
		fprintf(stderr, "setup failed: %s\n", strerror(errno));
		return 1;
	}
	printf("qpn=%u rkey=0x%x va=0x%" PRIxPTR " len=%zu sq_psn=%lu rq_psn=%lu mtu=%d",
	       qp->qp_num, mr->rkey, (uintptr_t)buf, buf_len, sq_psn, rq_psn,
	       mtu);
	if (srq)
		printf(" srqn=%u", srq_num());
	printf("\n");
	while (fgets(line, sizeof(line), stdin)) {
		if (!strncmp(line, "quit", 4))
			break;
		errno = 0;
		run(line);
	}
	return 0;
}
