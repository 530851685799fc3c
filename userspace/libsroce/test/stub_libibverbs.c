// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * A stand-in libibverbs exporting the private symbols libsroce imports, so
 * the load-time version check can be exercised against libibverbs file
 * names other than the one the plugin was built for.  Only registration is
 * recorded; any other call is a bug in the test and aborts.  The Makefile
 * builds it with the installed PABI number and symbol version.
 */
#include <stdlib.h>

#define STUB_PASTE_(a, b)	a##b
#define STUB_PASTE(a, b)	STUB_PASTE_(a, b)
#define stub_register_driver \
	STUB_PASTE(verbs_register_driver_, SROCE_PABI_VERSION)

int stub_registered;

void stub_register_driver(const void *ops);
void stub_register_driver(const void *ops)
{
	(void)ops;
	stub_registered++;
}

#define STUB(name) void name(void); void name(void) { abort(); }

STUB(_verbs_init_and_alloc_context)
STUB(ibv_cmd_advise_mr)
STUB(ibv_cmd_alloc_mw)
STUB(ibv_cmd_alloc_pd)
STUB(ibv_cmd_attach_mcast)
STUB(ibv_cmd_close_xrcd)
STUB(ibv_cmd_create_ah)
STUB(ibv_cmd_create_cq)
STUB(ibv_cmd_create_flow)
STUB(ibv_cmd_create_qp_ex)
STUB(ibv_cmd_create_qp_ex2)
STUB(ibv_cmd_create_rwq_ind_table)
STUB(ibv_cmd_create_srq)
STUB(ibv_cmd_create_srq_ex)
STUB(ibv_cmd_create_wq)
STUB(ibv_cmd_dealloc_mw)
STUB(ibv_cmd_dealloc_pd)
STUB(ibv_cmd_dereg_mr)
STUB(ibv_cmd_destroy_ah)
STUB(ibv_cmd_destroy_cq)
STUB(ibv_cmd_destroy_flow)
STUB(ibv_cmd_destroy_qp)
STUB(ibv_cmd_destroy_rwq_ind_table)
STUB(ibv_cmd_destroy_srq)
STUB(ibv_cmd_destroy_wq)
STUB(ibv_cmd_detach_mcast)
STUB(ibv_cmd_get_context)
STUB(ibv_cmd_modify_qp)
STUB(ibv_cmd_modify_srq)
STUB(ibv_cmd_modify_wq)
STUB(ibv_cmd_open_qp)
STUB(ibv_cmd_open_xrcd)
STUB(ibv_cmd_post_send)
STUB(ibv_cmd_query_device_any)
STUB(ibv_cmd_query_mr)
STUB(ibv_cmd_query_port)
STUB(ibv_cmd_query_qp)
STUB(ibv_cmd_query_srq)
STUB(ibv_cmd_reg_mr)
STUB(ibv_cmd_req_notify_cq)
STUB(ibv_cmd_rereg_mr)
STUB(ibv_cmd_resize_cq)
STUB(verbs_set_ops)
STUB(verbs_uninit_context)
