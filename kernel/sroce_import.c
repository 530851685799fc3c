// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Sharing a user context: another process given the uverbs fd (a dup or
 * SCM_RIGHTS) opens it with ibv_import_device() and reaches the owner's
 * PDs and MRs by handle.  It never ran GET_CONTEXT, so it asks for that
 * answer again here; ib_core's QUERY_MR needs nothing from us, and a PD
 * handle is checked by ib_core's own lookup of the attribute.
 */
#define UVERBS_MODULE_NAME sroce_ib
#include <rdma/uverbs_named_ioctl.h>

#include "sroce.h"

static int sroce_query_ucontext(struct ib_ucontext *ibuc,
				struct uverbs_attr_bundle *attrs)
{
	struct sroce_alloc_ucontext_resp resp;

	sroce_ucontext_resp(&resp);
	return uverbs_copy_to_struct_or_zero(attrs,
					     SROCE_ATTR_QUERY_CONTEXT_RESP,
					     &resp, sizeof(resp));
}

ADD_UVERBS_ATTRIBUTES_SIMPLE(
	sroce_query_context, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_CONTEXT,
	UVERBS_ATTR_PTR_OUT(SROCE_ATTR_QUERY_CONTEXT_RESP,
			    UVERBS_ATTR_STRUCT(struct sroce_alloc_ucontext_resp,
					       flags),
			    UA_MANDATORY));

/* ib_core has already found the PD, in this context, or failed the call. */
static int UVERBS_HANDLER(SROCE_METHOD_PD_QUERY)(struct uverbs_attr_bundle *attrs)
{
	return 0;
}

DECLARE_UVERBS_NAMED_METHOD(
	SROCE_METHOD_PD_QUERY,
	UVERBS_ATTR_IDR(SROCE_ATTR_PD_QUERY_HANDLE, UVERBS_OBJECT_PD,
			UVERBS_ACCESS_READ, UA_MANDATORY));

ADD_UVERBS_METHODS(sroce_pd_methods, UVERBS_OBJECT_PD,
		   &UVERBS_METHOD(SROCE_METHOD_PD_QUERY));

static const struct uapi_definition sroce_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DEVICE, &sroce_query_context),
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_PD, &sroce_pd_methods),
	{},
};

static const struct ib_device_ops sroce_import_ops = {
	.query_ucontext = sroce_query_ucontext,
};

void sroce_import_setup(struct ib_device *ibdev)
{
	ib_set_device_ops(ibdev, &sroce_import_ops);
	ibdev->driver_def = sroce_uapi_defs;
}
