// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The requester: turns send WQEs into packets.
 *
 * Every fetched WQE stays in a window (req.oldest, req.nfetched) until the
 * completer retires it.  A WQE gets its PSN range when it is first
 * started; PSNs are a pure function of the message length and path MTU,
 * so a retransmission (go-back-N from any PSN) rebuilds byte-identical
 * packets from the WQE and its offset.
 *
 * All of it runs under qp->req.lock with bottom halves disabled, either
 * in the poster's context (direct) or in the engine's work item.
 */
#include <linux/interrupt.h>
#include "sroce.h"
#include "sroce_psn.h"

/*
 * Unacknowledged PSNs in flight per RC QP; ACKs reopen it.  What a QP may
 * queue in the netdev is bounded by the device's transmit budget
 * (sroce_net.c, ~200 frames), so the window only has to cover one ACK
 * round trip at full speed: 128 (rxe's figure) did not, and capped one
 * QP's writes at ~3/4 of what 512 moves on the same link.  It also bounds
 * what a go-back-N resends after a loss.  AckReq goes out often enough
 * that the responder's ACKs keep the window open well before it fills.
 */
#define SROCE_REQ_WINDOW	512
#define SROCE_ACKREQ_EVERY	(SROCE_REQ_WINDOW / 4)
/* Packets one run may send before yielding the CPU to other QPs. */
#define SROCE_REQ_BUDGET	64

static struct sroce_swqe *req_wqe(struct sroce_qp *qp, u32 i)
{
	return &qp->swqe[(qp->req.oldest + i) & (qp->sq.num - 1)];
}

u32 sroce_req_mtu(const struct sroce_qp *qp)
{
	int mtu;

	if (sroce_qp_reliable(qp) || qp->ibqp.qp_type == IB_QPT_UC) {
		if (qp->mtu >= 256 && qp->mtu <= 4096)
			return qp->mtu;
	}
	/* a raw frame may fill the netdev's MTU */
	if (qp->ibqp.qp_type == IB_QPT_RAW_PACKET)
		return qp->mtu;
	mtu = ib_mtu_enum_to_int(qp->dev->active_mtu);
	return mtu > 0 ? mtu : 1024;
}

/* RC or XRC: acknowledged, with READ and atomics */
static bool req_is_rc(const struct sroce_qp *qp)
{
	return sroce_qp_reliable(qp);
}

/* Datagrams: one packet per message, done once sent (raw frames too). */
static bool req_is_ud(const struct sroce_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_UD ||
	       qp->ibqp.qp_type == IB_QPT_GSI ||
	       qp->ibqp.qp_type == IB_QPT_RAW_PACKET;
}

static void req_fail_wqe(struct sroce_qp *qp, struct sroce_swqe *swqe,
			 enum ib_wc_status status)
{
	swqe->st.status = status;
	swqe->st.done = true;
	qp->req.err = true;
	sroce_qp_count(qp, SROCE_CNT_LOCAL_ERRORS);
}

static void req_assign_psns(struct sroce_qp *qp, struct sroce_swqe_state *st)
{
	struct sroce_req *req = &qp->req;

	st->first_psn = req->high_psn;
	st->last_psn = sroce_psn_add(st->first_psn, st->npkts - 1);
	req->high_psn = sroce_psn_add(st->last_psn, 1);
	st->sent = 0;
	st->acked = 0;
}

/* FLUSH and ATOMIC WRITE (sroce_swqe_check() validated them): one PSN. */
static int req_start_one_pkt(struct sroce_qp *qp, struct sroce_swqe *swqe)
{
	struct sroce_swqe_state *st = &swqe->st;

	st->started = true;
	st->len = swqe->wqe.opcode == SROCE_WR_FLUSH ?
		  swqe->wqe.wr.flush.length : sizeof(u64);
	st->npkts = 1;
	req_assign_psns(qp, st);
	qp->req.rd_out++;
	return 0;
}

/*
 * Classify a WQE the first time the requester reaches it: length, PSN
 * range, completion opcode, and whether it may start now.  Returns 0 to
 * go ahead (or when the WQE failed and is done), -EBUSY to wait.
 */
static int req_start(struct sroce_qp *qp, struct sroce_swqe *swqe)
{
	const struct sroce_send_wqe *wqe = &swqe->wqe;
	struct sroce_swqe_state *st = &swqe->st;
	struct sroce_req *req = &qp->req;
	u32 mtu = sroce_req_mtu(qp);
	u32 max_rd;
	u64 len = 0;
	u32 i;
	int err;

	switch (wqe->opcode) {
	case IB_UVERBS_WR_SEND:
	case IB_UVERBS_WR_SEND_WITH_IMM:
		st->wc_opcode = IB_UVERBS_WC_SEND;
		break;
	case IB_UVERBS_WR_SEND_WITH_INV:
		st->wc_opcode = IB_UVERBS_WC_SEND;
		if (!req_is_rc(qp))
			goto bad_op;
		break;
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		st->wc_opcode = IB_UVERBS_WC_RDMA_WRITE;
		if (req_is_ud(qp))
			goto bad_op;
		break;
	case IB_UVERBS_WR_RDMA_READ:
		st->wc_opcode = IB_UVERBS_WC_RDMA_READ;
		st->rd_atomic = true;
		if (!req_is_rc(qp))
			goto bad_op;
		break;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
		st->wc_opcode = IB_UVERBS_WC_COMP_SWAP;
		st->rd_atomic = true;
		if (!req_is_rc(qp))
			goto bad_op;
		break;
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		st->wc_opcode = IB_UVERBS_WC_FETCH_ADD;
		st->rd_atomic = true;
		if (!req_is_rc(qp))
			goto bad_op;
		break;
	case SROCE_WR_ATOMIC_WRITE:
	case SROCE_WR_FLUSH:
		st->wc_opcode = wqe->opcode == SROCE_WR_FLUSH ?
				SROCE_WC_FLUSH : SROCE_WC_ATOMIC_WRITE;
		st->one_pkt = true;
		st->rd_res = true;
		/*
		 * Only the provider can post them (ib_send_wr has no fields
		 * for them), and IBA defines them for RC, not XRC.
		 */
		if (qp->ibqp.qp_type != IB_QPT_RC || !qp->is_user)
			goto bad_op;
		break;
	case IB_UVERBS_WR_LOCAL_INV:
		st->wc_opcode = IB_UVERBS_WC_LOCAL_INV;
		st->local = true;
		break;
	case IB_UVERBS_WR_BIND_MW:
		st->wc_opcode = IB_UVERBS_WC_BIND_MW;
		st->local = true;
		break;
	case IB_WR_REG_MR:
		st->wc_opcode = IB_WC_REG_MR;
		st->local = true;
		if (qp->is_user)
			goto bad_op;
		break;
	default:
		goto bad_op;
	}

	/* A fence waits for every earlier READ/atomic to complete. */
	if ((wqe->send_flags & IB_SEND_FENCE) && req->rd_out)
		return -EBUSY;
	st->rd_res |= st->rd_atomic;
	if (st->rd_res) {
		max_rd = max_t(u32, qp->attr.max_rd_atomic, 1);
		if (req->rd_out >= max_rd)
			return -EBUSY;
	}

	if (st->local) {
		switch (wqe->opcode) {
		case IB_UVERBS_WR_LOCAL_INV:
			err = sroce_mr_invalidate(qp->dev, qp->pd,
						  wqe->ex.invalidate_rkey, qp,
						  false);
			break;
		case IB_UVERBS_WR_BIND_MW:
			err = sroce_mw_bind(qp, swqe);
			break;
		default:
			err = sroce_mr_fast_reg(qp, swqe);
			break;
		}
		st->started = true;
		if (err) {
			req_fail_wqe(qp, swqe, wqe->opcode == IB_UVERBS_WR_BIND_MW ?
				     IB_WC_MW_BIND_ERR : IB_WC_LOC_PROT_ERR);
			return 0;
		}
		st->status = IB_WC_SUCCESS;
		st->done = true;
		return 0;
	}

	if (st->one_pkt)
		return req_start_one_pkt(qp, swqe);
	if ((wqe->send_flags & IB_SEND_INLINE) && !st->rd_atomic) {
		len = min_t(u32, wqe->inline_len, SROCE_MAX_INLINE);
	} else {
		for (i = 0; i < min_t(u32, wqe->num_sge, SROCE_MAX_SGE); i++)
			len += swqe->sge[i].length;
	}
	st->started = true;
	if (len > SROCE_MAX_MSG_SIZE || (req_is_ud(qp) && len > mtu)) {
		req_fail_wqe(qp, swqe, IB_WC_LOC_LEN_ERR);
		return 0;
	}
	st->len = len;
	if (st->rd_atomic && wqe->opcode != IB_UVERBS_WR_RDMA_READ) {
		/* the original value lands in the first 8 bytes */
		if (len < sizeof(u64)) {
			req_fail_wqe(qp, swqe, IB_WC_LOC_LEN_ERR);
			return 0;
		}
		st->len = sizeof(u64);
	}
	if (st->rd_atomic && wqe->opcode != IB_UVERBS_WR_RDMA_READ)
		st->npkts = 1;
	else
		st->npkts = len ? DIV_ROUND_UP(len, mtu) : 1;
	req_assign_psns(qp, st);
	if (st->rd_res)
		req->rd_out++;
	return 0;

bad_op:
	st->started = true;
	/* a WQE sroce_sq_fetch() refused completes with the reason it found */
	req_fail_wqe(qp, swqe, swqe->fetch_status ?: IB_WC_LOC_QP_OP_ERR);
	return 0;
}

static u8 req_service(const struct sroce_qp *qp)
{
	if (req_is_ud(qp))
		return SROCE_OPC_UD;
	return req_is_rc(qp) ? sroce_qp_opc(qp) : SROCE_OPC_UC;
}

/* Opcode of a SEND/WRITE packet; @first/@last select FIRST/MIDDLE/LAST/ONLY. */
static u8 req_data_opcode(const struct sroce_qp *qp, u32 wr, bool first,
			  bool last)
{
	bool write = wr == IB_UVERBS_WR_RDMA_WRITE ||
		     wr == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM;
	bool imm = wr == IB_UVERBS_WR_SEND_WITH_IMM ||
		   wr == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM;
	bool inv = wr == IB_UVERBS_WR_SEND_WITH_INV;
	u8 op;

	if (first && last) {
		if (write)
			op = imm ? SROCE_OP_WRITE_ONLY_IMM : SROCE_OP_WRITE_ONLY;
		else if (inv)
			op = SROCE_OP_SEND_ONLY_INV;
		else
			op = imm ? SROCE_OP_SEND_ONLY_IMM : SROCE_OP_SEND_ONLY;
	} else if (first) {
		op = write ? SROCE_OP_WRITE_FIRST : SROCE_OP_SEND_FIRST;
	} else if (!last) {
		op = write ? SROCE_OP_WRITE_MIDDLE : SROCE_OP_SEND_MIDDLE;
	} else if (write) {
		op = imm ? SROCE_OP_WRITE_LAST_IMM : SROCE_OP_WRITE_LAST;
	} else if (inv) {
		op = SROCE_OP_SEND_LAST_INV;
	} else {
		op = imm ? SROCE_OP_SEND_LAST_IMM : SROCE_OP_SEND_LAST;
	}
	return req_service(qp) | op;
}

/*
 * RC packets go out one behind: whether a packet ends the run, and so
 * must ask for an ACK (AckReq), is known only when the next one is built
 * or the run ends (@last_of_run).  A stream of small messages then draws
 * one ACK per run (and per 32 PSNs), not one per message.  IBA leaves it
 * to the requester where to ask, as long as every packet is eventually
 * covered by an ACK it asked for; RoCE NICs ask far less often still
 * (mlx5's log_ack_req_freq, which UCX sets to every 256 packets).
 */
static void req_release(struct sroce_qp *qp, bool last_of_run)
{
	struct sroce_req *req = &qp->req;
	struct sk_buff *skb = req->held;

	if (!skb)
		return;
	req->held = NULL;
	if (last_of_run && !req->held_ackreq) {
		/* The BTH leads the packet until sroce_net.c adds UDP/IP. */
		sroce_bth_set_psn((struct sroce_bth *)skb->data,
				  req->held_psn, true);
		req->ackreq_psn = req->held_psn;
	}
	sroce_net_queue(qp, &req->txb, &qp->av, skb);
}

/*
 * @len bytes of the message from @off into @buf.  -EAGAIN: an ODP page
 * is being faulted in, try again later; -EFAULT: the WQE failed.
 */
static int req_copy_payload(struct sroce_qp *qp, struct sroce_swqe *swqe,
			    u32 off, u8 *buf, u32 len)
{
	const struct sroce_send_wqe *wqe = &swqe->wqe;
	int err;

	if (wqe->send_flags & IB_SEND_INLINE) {
		/* inline_len was bounded by req_start() */
		memcpy(buf, swqe->inline_data + off, len);
		return 0;
	}
	err = sroce_sge_copy(qp->dev, qp->pd, swqe->sge, wqe->num_sge, off,
			     buf, len, 0, SROCE_FROM_MR);
	if (!err || err == -EAGAIN)
		return err;
	req_fail_wqe(qp, swqe, IB_WC_LOC_PROT_ERR);
	return -EFAULT;
}

/*
 * Zero-copy transmit (sroce_net.c): below this many bytes a copy costs
 * less than a fragment's page references and the ICRC trailer.
 */
#define SROCE_ZC_MIN_PAYLOAD	256
/* MAX_SKB_FRAGS less one for the trailer; more would be copied. */
#define SROCE_ZC_MAX_FRAGS	(MAX_SKB_FRAGS - 1)

static bool req_zc_ok(struct sroce_qp *qp, const struct sroce_swqe *swqe,
		      u32 paylen)
{
	/* kernel ULPs register DMA and fast-reg regions: never fragments */
	return paylen >= SROCE_ZC_MIN_PAYLOAD && req_is_rc(qp) && qp->is_user &&
	       !swqe->st.no_zc && !(swqe->wqe.send_flags & IB_SEND_INLINE) &&
	       sroce_net_zc_ok(qp->dev);
}

/*
 * The packet with headers @h and @paylen bytes of the message from @off:
 * the payload as page fragments where req_zc_ok() allows (any failure
 * there falls back to the copy, which reports errors), else copied.
 * ERR_PTR(-ENOMEM): no skb, nothing changed; else as req_copy_payload().
 */
static struct sk_buff *req_build(struct sroce_qp *qp, struct sroce_swqe *swqe,
				 const struct sroce_av *av,
				 const struct sroce_pkt_hdrs *h, u32 off,
				 u32 paylen)
{
	u32 hl = sroce_opcode_info(h->opcode)->hdr_len;
	bool zc = req_zc_ok(qp, swqe, paylen);
	u32 tlen = hl + (zc ? 0 : paylen + h->pad);
	struct sk_buff *skb;
	u8 *buf;
	int err;

again:
	skb = sroce_net_alloc_skb(qp, av, tlen);
	if (unlikely(!skb))
		return ERR_PTR(-ENOMEM);
	buf = skb_put(skb, tlen);
	if (unlikely(sroce_pkt_build(buf, tlen, h) != hl)) {
		kfree_skb(skb);
		req_fail_wqe(qp, swqe, IB_WC_LOC_QP_OP_ERR);
		return ERR_PTR(-EFAULT);
	}
	if (zc) {
		err = sroce_sge_frags(qp->dev, qp->pd, swqe->sge,
				      swqe->wqe.num_sge, off, paylen, skb,
				      SROCE_ZC_MAX_FRAGS);
		if (!err)
			err = sroce_net_zc_seal(skb, paylen, h->pad);
		if (likely(!err)) {
			sroce_qp_count(qp, SROCE_CNT_TX_ZCOPY);
			return skb;
		}
		consume_skb(skb);	/* not a drop: built again, copied */
		swqe->st.no_zc = true;
		zc = false;
		tlen = hl + paylen + h->pad;
		goto again;
	}
	if (paylen) {
		err = req_copy_payload(qp, swqe, off, buf + hl, paylen);
		if (err) {
			kfree_skb(skb);
			return ERR_PTR(err);
		}
	}
	memset(buf + hl + paylen, 0, h->pad);
	return skb;
}

/* A raw packet QP's SEND: the WQE holds the whole frame (sroce_raw.c). */
static int req_send_raw(struct sroce_qp *qp, struct sroce_swqe *swqe)
{
	struct sroce_swqe_state *st = &swqe->st;
	struct sk_buff *skb;
	int err;

	skb = sroce_raw_alloc_skb(qp, st->len);
	if (unlikely(!skb))
		return -ENOMEM;
	err = req_copy_payload(qp, swqe, 0, skb_put(skb, st->len), st->len);
	if (err) {
		kfree_skb(skb);
		return err;
	}
	st->sent = st->len;
	qp->req.cur++;
	st->status = IB_WC_SUCCESS;
	st->done = true;
	sroce_raw_xmit(qp, skb);
	return 0;
}

/*
 * Build and send the next packet of @swqe.  Returns 0 when a packet was
 * handed to the network, -ENOMEM when no skb could be had (nothing
 * changed; try again later), -EAGAIN while an ODP page is faulted in,
 * or -EFAULT when the WQE failed.
 */
static int req_send_pkt(struct sroce_qp *qp, struct sroce_swqe *swqe)
{
	const struct sroce_send_wqe *wqe = &swqe->wqe;
	struct sroce_swqe_state *st = &swqe->st;
	struct sroce_req *req = &qp->req;
	const struct sroce_av *av = &qp->av;
	struct sroce_pkt_hdrs h = {};
	u32 mtu = sroce_req_mtu(qp);
	u32 off = st->sent, paylen = 0;
	struct sk_buff *skb;
	bool first, last;

	if (qp->ibqp.qp_type == IB_QPT_RAW_PACKET)
		return req_send_raw(qp, swqe);
	h.pkey = SROCE_DEFAULT_PKEY;
	h.psn = sroce_psn_add(st->first_psn, off / mtu);

	if (req_is_ud(qp)) {
		av = swqe->av;
		if (!av) {
			req_fail_wqe(qp, swqe, IB_WC_LOC_QP_OP_ERR);
			return -EFAULT;
		}
		h.qpn = wqe->wr.ud.remote_qpn & SROCE_24BIT_MASK;
		h.deth_sqp = qp->ibqp.qp_num;
		if (qp->ibqp.qp_type == IB_QPT_GSI)
			h.deth_qkey = SROCE_GSI_QKEY;
		else if (wqe->wr.ud.remote_qkey & SROCE_QKEY_PRIV_BIT)
			h.deth_qkey = qp->attr.qkey;
		else
			h.deth_qkey = wqe->wr.ud.remote_qkey;
	} else {
		h.qpn = qp->attr.dest_qp_num & SROCE_24BIT_MASK;
		h.xrc_srqn = wqe->xrc_srqn & SROCE_24BIT_MASK;
	}

	switch (wqe->opcode) {
	case IB_UVERBS_WR_RDMA_READ:
		h.opcode = req_service(qp) | SROCE_OP_READ_REQUEST;
		h.reth_va = wqe->wr.rdma.remote_addr + off;
		h.reth_rkey = wqe->wr.rdma.rkey;
		h.reth_len = st->len - off;
		first = last = true;
		break;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		h.opcode = req_service(qp) |
			   (wqe->opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ?
			    SROCE_OP_CMP_SWAP : SROCE_OP_FETCH_ADD);
		h.atm_va = wqe->wr.atomic.remote_addr;
		h.atm_rkey = wqe->wr.atomic.rkey;
		/* FETCH_ADD leaves Compare unused: send zeros, not the addend */
		if (wqe->opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP) {
			h.atm_swap_add = wqe->wr.atomic.swap;
			h.atm_compare = wqe->wr.atomic.compare_add;
		} else {
			h.atm_swap_add = wqe->wr.atomic.compare_add;
			h.atm_compare = 0;
		}
		first = last = true;
		break;
	case SROCE_WR_FLUSH:
		h.opcode = SROCE_RC_FLUSH;
		h.feth_plt = wqe->wr.flush.type;
		h.feth_sel = wqe->wr.flush.level;
		h.reth_va = wqe->wr.flush.remote_addr;
		h.reth_rkey = wqe->wr.flush.rkey;
		h.reth_len = wqe->wr.flush.length;
		first = last = true;
		break;
	case SROCE_WR_ATOMIC_WRITE:
		h.opcode = SROCE_RC_ATOMIC_WRITE;
		h.reth_va = wqe->wr.rdma.remote_addr;
		h.reth_rkey = wqe->wr.rdma.rkey;
		h.reth_len = sizeof(u64);
		paylen = sizeof(u64);
		first = last = true;
		break;
	default:
		paylen = min(mtu, st->len - off);
		first = off == 0;
		last = off + paylen >= st->len;
		h.opcode = req_data_opcode(qp, wqe->opcode, first, last);
		if (first && (wqe->opcode == IB_UVERBS_WR_RDMA_WRITE ||
			      wqe->opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM)) {
			h.reth_va = wqe->wr.rdma.remote_addr;
			h.reth_rkey = wqe->wr.rdma.rkey;
			h.reth_len = st->len;
		}
		h.imm = wqe->ex.imm_data;
		h.ieth_rkey = wqe->ex.invalidate_rkey;
		h.se = last && (wqe->send_flags & IB_SEND_SOLICITED) &&
		       wqe->opcode != IB_UVERBS_WR_RDMA_WRITE;
		h.pad = sroce_pad_for(paylen);
		break;
	}

	/* The end of a message asks for an ACK only if it ends the run. */
	/* FLUSH and ATOMIC WRITE ask for their response, as rxe's do */
	if (req_is_rc(qp))
		h.ackreq = st->one_pkt ||
			   sroce_psn_diff(h.psn, req->ackreq_psn) >=
			   SROCE_ACKREQ_EVERY ||
			   sroce_psn_diff(sroce_psn_next(h.psn), qp->comp.psn) >=
			   SROCE_REQ_WINDOW;

	skb = req_build(qp, swqe, av, &h, off, paylen);
	if (IS_ERR(skb))
		return PTR_ERR(skb);

	/* Progress is recorded before the send: loopback may ACK at once. */
	if (h.ackreq)
		req->ackreq_psn = h.psn;
	if (st->rd_atomic || st->one_pkt) {
		st->sent = st->len;
		req->psn = sroce_psn_add(st->last_psn, 1);
	} else {
		st->sent = off + paylen;
		req->psn = sroce_psn_next(h.psn);
	}
	/* The most an ACK may cover; a go-back-N resend stays below it. */
	req->sent_psn = sroce_psn_furthest(qp->comp.psn, req->psn,
					   req->sent_psn);
	if (last) {
		req->cur++;
		if (!req_is_rc(qp)) {
			st->status = IB_WC_SUCCESS;
			st->done = true;
		}
	}

	/* A lost RC packet is recovered by the ACK timer like any loss. */
	if (req_is_ud(qp)) {
		sroce_net_xmit(qp, av, skb);
	} else if (req_is_rc(qp)) {
		req_release(qp, false);
		req->held = skb;
		req->held_psn = h.psn;
		req->held_ackreq = h.ackreq;
		sroce_comp_arm_retry(qp, false);
	} else {
		sroce_net_queue(qp, &req->txb, av, skb);
	}
	return 0;
}

/* In SQD only WQEs already begun go on (their rest and resends). */
static bool req_can_send(struct sroce_qp *qp)
{
	enum ib_qp_state s = READ_ONCE(qp->state);

	return (s == IB_QPS_RTS || s == IB_QPS_SQD) && !qp->req.rnr_wait &&
	       !qp->req.err && !qp->req.stopped && qp->sq.num;
}

static bool req_may_start(struct sroce_qp *qp)
{
	return READ_ONCE(qp->state) == IB_QPS_RTS;
}

bool sroce_req_drained(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;

	if (!req->draining || READ_ONCE(qp->state) != IB_QPS_SQD)
		return false;
	/* WQEs begin in order, so the oldest fetched one tells. */
	if (req->nfetched && req_wqe(qp, 0)->st.started)
		return false;
	WRITE_ONCE(req->draining, false);
	return req->drain_notify;
}

/*
 * Send up to @budget packets.  Returns true if the budget ran out while
 * work remained, so the caller reschedules.
 */
static bool req_process(struct sroce_qp *qp, int budget)
{
	struct sroce_req *req = &qp->req;
	bool resumed = req->tx_budget, woken;
	struct sroce_swqe *swqe;
	int err;

	req->blocked = false;
	req->tx_budget = false;
	woken = READ_ONCE(req->tx_woken);
	if (woken)
		WRITE_ONCE(req->tx_woken, false);
	while (req_can_send(qp)) {
		if (!req_may_start(qp) && (req->cur == req->nfetched ||
					   !req_wqe(qp, req->cur)->st.started))
			break;
		if (req->cur == req->nfetched) {
			if (req->nfetched >= qp->sq.num)
				break;
			swqe = sroce_sq_fetch(qp);
			if (!swqe)
				break;
			if (!req->nfetched)
				req->oldest = swqe - qp->swqe;
			req->nfetched++;
			memset(&swqe->st, 0, sizeof(swqe->st));
		}
		swqe = req_wqe(qp, req->cur);
		if (!swqe->st.started && req_start(qp, swqe)) {
			req->blocked = true;
			break;
		}
		if (swqe->st.done || swqe->st.local) {
			req->cur++;
			continue;
		}
		if (req_is_rc(qp) &&
		    sroce_psn_diff(req->psn, qp->comp.psn) >= SROCE_REQ_WINDOW) {
			req->blocked = true;
			break;
		}
		if (budget-- <= 0)
			return true;
		if (sroce_net_tx_busy(qp, woken)) {
			/*
			 * Woken by sroce_net.c.  Until then an ACK timeout
			 * only makes us look again: the wait is ours, not a
			 * loss, and the unsent tail of a message is still to
			 * ask for the ACK that completes it.
			 */
			req->blocked = true;
			req->tx_budget = true;
			sroce_comp_arm_retry(qp, false);
			break;
		}
		err = req_send_pkt(qp, swqe);
		/* The timeout counts from the first send after a wait. */
		if (resumed && !err && req_is_rc(qp))
			sroce_comp_arm_retry(qp, true);
		resumed = false;
		if (err == -ENOMEM)
			return true;
		if (err == -EAGAIN) {
			req->blocked = true;
			sroce_comp_odp_wait(qp, false);
			break;
		}
		if (err)
			req->cur++;
	}
	return false;
}

/*
 * Doorbell suppression (uapi SROCE_RING_F_NO_DOORBELL).  A user post costs
 * a system call only to run the requester; while an RC QP awaits an ACK
 * the completer runs anyway when it comes, and fetches what was posted
 * meanwhile (sroce_comp_rcv()), so the doorbell is not needed then.
 * Every post then also waits for the next ACK and goes out in a batch
 * with the others.  Nothing relies on the shared flag: @no_db is ours.
 */
static bool req_awaits_ack(const struct sroce_qp *qp)
{
	const struct sroce_req *req = &qp->req;

	return qp->is_user && qp->sq.ctl && req_is_rc(qp) &&
	       READ_ONCE(qp->state) == IB_QPS_RTS && !req->err &&
	       !req->stopped && sroce_psn_diff(req->psn, qp->comp.psn) > 0;
}

void sroce_req_doorbell(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;
	bool no_db = req_awaits_ack(qp);

	if (no_db == req->no_db)
		return;
	req->no_db = no_db;
	WRITE_ONCE(qp->sq.ctl->flags, no_db ? SROCE_RING_F_NO_DOORBELL : 0);
	if (no_db)
		return;
	/*
	 * A post that saw the bit still set rang no doorbell: look for it.
	 * Pairs with the provider's fence between publishing prod and
	 * reading the flags.
	 */
	smp_mb();
	if (sroce_sq_unfetched(qp))
		sroce_req_schedule(qp);
}

void sroce_req_raise_error(struct sroce_qp *qp)
{
	bool raise;

	spin_lock_bh(&qp->req.lock);
	raise = qp->req.err && !qp->req.err_raised;
	if (raise)
		qp->req.err_raised = true;
	spin_unlock_bh(&qp->req.lock);
	/* The failed WQE's CQE reports it: no async event (CQ_ERR == 0). */
	if (raise)
		sroce_qp_error(qp, IB_EVENT_CQ_ERR);
}

static void req_run(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;
	bool more, fatal, drained;

	spin_lock_bh(&req->lock);
	if (READ_ONCE(qp->state) == IB_QPS_ERR) {
		sroce_comp_flush(qp);
		spin_unlock_bh(&req->lock);
		return;
	}
	more = req_process(qp, SROCE_REQ_BUDGET);
	req_release(qp, true);
	sroce_net_flush(qp, &req->txb);
	/* UD/UC WQEs are done once sent; so are failed local ones. */
	sroce_comp_complete(qp);
	sroce_req_doorbell(qp);
	if (more)
		sroce_req_schedule(qp);
	fatal = req->err && !req->err_raised;
	drained = !fatal && sroce_req_drained(qp);
	spin_unlock_bh(&req->lock);
	if (fatal)
		sroce_req_raise_error(qp);
	if (drained)
		sroce_qp_sq_drained(qp);
}

void sroce_req_work(struct work_struct *work)
{
	struct sroce_qp *qp = container_of(work, struct sroce_qp, req.work);

	/* The budget's wake-up comes here for the responder too. */
	if (READ_ONCE(qp->resp.tx_paused))
		sroce_resp_tx_resume(qp);
	req_run(qp);
}

void sroce_req_kick(struct sroce_qp *qp)
{
	/*
	 * Posters in atomic context (softirq, IRQs off, or inside our own
	 * completion callbacks) must not take req.lock: defer to the work.
	 */
	if (in_interrupt() || irqs_disabled())
		sroce_req_schedule(qp);
	else
		req_run(qp);
}

void sroce_req_rewind(struct sroce_qp *qp, u32 psn)
{
	struct sroce_req *req = &qp->req;
	u32 mtu = sroce_req_mtu(qp);
	struct sroce_swqe_state *st;
	bool found = false;
	u32 i, k;

	for (i = 0; i < req->nfetched; i++) {
		st = &req_wqe(qp, i)->st;
		if (!st->started)
			break;
		if (st->done || st->local)
			continue;
		if (sroce_psn_before(psn, st->first_psn)) {
			st->sent = 0;
		} else if (sroce_psn_before_eq(psn, st->last_psn)) {
			/* atomics and empty messages have one PSN: k is 0 */
			k = sroce_psn_diff(psn, st->first_psn);
			st->sent = min_t(u64, st->len, (u64)k * mtu);
		} else {
			continue;
		}
		/* a resend may overtake a packet still queued: copy it */
		st->no_zc = true;
		if (!found) {
			req->cur = i;
			found = true;
		}
	}
	if (found)
		req->psn = psn;
}
