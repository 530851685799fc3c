/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * RESET -> INIT -> RTR -> RTS for an RC QP over a RoCE v2 GID: what every
 * verbs test program here does before its first post, in one place.
 */
#ifndef SROCE_RC_CONNECT_H
#define SROCE_RC_CONNECT_H

#include <infiniband/verbs.h>
#include <stdint.h>
#include <string.h>

struct rc_conn {
	union ibv_gid dgid;
	int sgid_index;
	uint32_t dqpn;
	uint32_t rq_psn, sq_psn;
	enum ibv_mtu mtu;
	unsigned int access;	/* the remote accesses the responder allows */
	uint8_t rd_atomic;	/* READs/atomics in flight, both directions */
	uint8_t min_rnr_timer;
	uint8_t timeout, retry_cnt, rnr_retry;
};

/* 0, or the failing ibv_modify_qp's error (errno is left set). */
static inline int rc_connect(struct ibv_qp *qp, const struct rc_conn *c)
{
	struct ibv_qp_attr a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = c->access;
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret)
		return ret;

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
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = c->sq_psn;
	a.timeout = c->timeout;
	a.retry_cnt = c->retry_cnt;
	a.rnr_retry = c->rnr_retry;
	a.max_rd_atomic = c->rd_atomic;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

#endif
