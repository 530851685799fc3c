// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Placeholder until the responder lands: requests are dropped. */
#include "sroce.h"

void sroce_resp_rcv(struct sroce_qp *qp, struct sroce_rx *rx)
{
}
