// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Placeholder until the engine role lands. */
#include "sroce.h"

int sroce_net_init(void)
{
	return 0;
}

void sroce_net_exit(void)
{
}

int sroce_engine_qp_init(struct sroce_qp *qp)
{
	return 0;
}

void sroce_engine_qp_modified(struct sroce_qp *qp, const struct ib_qp_attr *attr,
			      int mask)
{
}

void sroce_engine_qp_stop(struct sroce_qp *qp)
{
}

void sroce_req_kick(struct sroce_qp *qp)
{
}

void sroce_comp_rcv(struct sroce_qp *qp, struct sroce_rx *rx)
{
}

struct sk_buff *sroce_net_alloc_skb(struct sroce_qp *qp,
				    const struct sroce_av *av, u32 tlen)
{
	return NULL;
}

int sroce_net_xmit(struct sroce_qp *qp, const struct sroce_av *av,
		   struct sk_buff *skb)
{
	kfree_skb(skb);
	return -EOPNOTSUPP;
}

u16 sroce_net_src_port(u32 qpn)
{
	return 0xc000;
}
