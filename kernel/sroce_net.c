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
