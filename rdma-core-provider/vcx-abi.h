/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vcx provider: the uverbs commands that carry vcx udata (include/vcx/abi.h), wrapped
 * around the core command structures the way rdma-core's ibv_cmd_* helpers expect.
 */
#ifndef VCX_PROVIDER_ABI_H
#define VCX_PROVIDER_ABI_H

#include <infiniband/kern-abi.h>

#include "vcx/abi.h"

/* The driver structures are reached through drv_payload only. */
#define _STRUCT_vcx_alloc_ucontext_req	struct {}
#define _STRUCT_vcx_alloc_ucontext_resp	struct {}
#define _STRUCT_vcx_alloc_pd_resp	struct {}
#define _STRUCT_vcx_create_cq_req	struct {}
#define _STRUCT_vcx_create_cq_resp	struct {}
#define _STRUCT_vcx_resize_cq_req	struct {}
#define _STRUCT_vcx_create_qp_req	struct {}
#define _STRUCT_vcx_create_qp_resp	struct {}
#define _STRUCT_vcx_create_srq_req	struct {}
#define _STRUCT_vcx_create_srq_resp	struct {}
#define _STRUCT_vcx_create_ah_resp	struct {}

DECLARE_DRV_CMD(vcx_alloc_ucontext_cmd, IB_USER_VERBS_CMD_GET_CONTEXT,
		vcx_alloc_ucontext_req, vcx_alloc_ucontext_resp);
DECLARE_DRV_CMD(vcx_alloc_pd_cmd, IB_USER_VERBS_CMD_ALLOC_PD, empty, vcx_alloc_pd_resp);
DECLARE_DRV_CMD(vcx_create_cq_cmd, IB_USER_VERBS_CMD_CREATE_CQ, vcx_create_cq_req,
		vcx_create_cq_resp);
DECLARE_DRV_CMD(vcx_create_cq_ex_cmd, IB_USER_VERBS_EX_CMD_CREATE_CQ, vcx_create_cq_req,
		vcx_create_cq_resp);
DECLARE_DRV_CMD(vcx_resize_cq_cmd, IB_USER_VERBS_CMD_RESIZE_CQ, vcx_resize_cq_req, empty);
DECLARE_DRV_CMD(vcx_create_qp_cmd, IB_USER_VERBS_CMD_CREATE_QP, vcx_create_qp_req,
		vcx_create_qp_resp);
/* The same udata behind the extended command (create_qp_ex with create flags). */
DECLARE_DRV_CMD(vcx_create_qp_ex_cmd, IB_USER_VERBS_EX_CMD_CREATE_QP, vcx_create_qp_req,
		vcx_create_qp_resp);
DECLARE_DRV_CMD(vcx_create_srq_cmd, IB_USER_VERBS_CMD_CREATE_SRQ, vcx_create_srq_req,
		vcx_create_srq_resp);
/* XRC SRQs (ibv_create_srq_ex): the basic SRQ's udata behind the extended command. */
DECLARE_DRV_CMD(vcx_create_xsrq_cmd, IB_USER_VERBS_CMD_CREATE_XSRQ, vcx_create_srq_req,
		vcx_create_srq_resp);
DECLARE_DRV_CMD(vcx_create_ah_cmd, IB_USER_VERBS_CMD_CREATE_AH, empty, vcx_create_ah_resp);

#endif /* VCX_PROVIDER_ABI_H */
