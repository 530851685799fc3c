/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The transport engine's per-QP state: requester, completer, responder.
 * Owned by the engine role (sroce_req.c, sroce_comp.c, sroce_resp.c,
 * sroce_net.c).
 */
#ifndef SROCE_ENGINE_H
#define SROCE_ENGINE_H

#include <linux/types.h>
#include <linux/spinlock.h>

struct sroce_qp;
struct ib_qp_attr;

/* Requester/completer progress through one send WQE. */
struct sroce_swqe_state {
	u32 first_psn;
	u32 last_psn;
	u32 sent;			/* bytes handed to the wire */
};

struct sroce_req {
	spinlock_t lock;
};

struct sroce_comp {
	spinlock_t lock;
};

struct sroce_resp {
	spinlock_t lock;
};

int sroce_engine_qp_init(struct sroce_qp *qp);
/* Called by modify_qp after a state change (e.g. start on RTS, stop on ERR). */
void sroce_engine_qp_modified(struct sroce_qp *qp, const struct ib_qp_attr *attr,
			      int mask);
/* Stop timers and wait for in-flight work before the QP is freed. */
void sroce_engine_qp_stop(struct sroce_qp *qp);
/* New send work was posted (kernel post_send or user doorbell). */
void sroce_req_kick(struct sroce_qp *qp);

int sroce_net_init(void);
void sroce_net_exit(void);

#endif /* SROCE_ENGINE_H */
