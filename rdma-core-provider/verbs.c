// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vcx provider: device and port queries, protection domains and memory regions. All
 * of these are plain uverbs commands; only alloc_pd carries vcx udata (the PD number).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vcx.h"
#include "vcx-abi.h"

int vcx_query_device_ex(struct ibv_context *context,
			const struct ibv_query_device_ex_input *input,
			struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct vcx_context *ctx = to_vcx_ctx(context);
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	struct ibv_device_attr *a = &attr->orig_attr;
	uint64_t fw;
	int err;

	err = ibv_cmd_query_device_any(context, input, attr, attr_size, &resp, &resp_size);
	if (err)
		return err;

	/* The kernel reports firmware as major << 32 | minor << 16 | subminor. */
	fw = resp.base.fw_ver;
	snprintf(a->fw_ver, sizeof(a->fw_ver), "%u.%u.%04u", (unsigned int)(fw >> 32),
		 (unsigned int)((fw >> 16) & 0xffff), (unsigned int)(fw & 0xffff));

	/* What this library can post is bounded by the queues it builds (qp.c). */
	if (ctx->max_sge && a->max_sge > (int)ctx->max_sge)
		a->max_sge = ctx->max_sge;
	return 0;
}

int vcx_query_port(struct ibv_context *context, uint8_t port, struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd;

	return ibv_cmd_query_port(context, port, attr, &cmd, sizeof(cmd));
}

struct ibv_pd *vcx_alloc_pd(struct ibv_context *context)
{
	struct vcx_alloc_pd_cmd_resp resp = {};
	struct ibv_alloc_pd cmd;
	struct vcx_pd *pd;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	if (ibv_cmd_alloc_pd(context, &pd->ibv_pd, &cmd, sizeof(cmd), &resp.ibv_resp,
			     sizeof(resp))) {
		free(pd);
		return NULL;
	}
	pd->pdn = resp.drv_payload.pdn;
	return &pd->ibv_pd;
}

int vcx_dealloc_pd(struct ibv_pd *ibpd)
{
	int ret = ibv_cmd_dealloc_pd(ibpd);

	if (ret)
		return ret;
	free(to_vcx_pd(ibpd));
	return 0;
}

struct ibv_mr *vcx_reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va,
			  int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	struct verbs_mr *vmr;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	if (ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd, sizeof(cmd), &resp,
			   sizeof(resp))) {
		free(vmr);
		return NULL;
	}
	return &vmr->ibv_mr;
}

/*
 * The kernel builds a new mkey and hands back its keys, which ibv_cmd_rereg_mr stores in
 * the ibv_mr; libibverbs has already checked the flags and the new range.
 */
int vcx_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd, void *addr,
		 size_t length, int access)
{
	struct ib_uverbs_rereg_mr_resp resp;
	struct ibv_rereg_mr cmd;

	return ibv_cmd_rereg_mr(vmr, flags, addr, length, (uintptr_t)addr, access, pd, &cmd,
				sizeof(cmd), &resp, sizeof(resp));
}

int vcx_dereg_mr(struct verbs_mr *vmr)
{
	int ret = ibv_cmd_dereg_mr(vmr);

	if (ret)
		return ret;
	free(vmr);
	return 0;
}

/*
 * Memory windows (libmlx5 mlx5_alloc_mw / mlx5_bind_mw): the kernel creates a free KLM
 * key (no driver data either way); binding is a UMR WQE on the application's QP.
 */
struct ibv_mw *vcx_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp;
	struct ibv_alloc_mw cmd;
	struct ibv_mw *mw;

	if (!to_vcx_ctx(pd->context)->mw) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return NULL;
	if (ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp, sizeof(resp))) {
		free(mw);
		return NULL;
	}
	return mw;
}

int vcx_dealloc_mw(struct ibv_mw *mw)
{
	int ret = ibv_cmd_dealloc_mw(mw);

	if (ret)
		return ret;
	free(mw);
	return 0;
}

/* ibv_bind_mw (type 1): a BIND_MW WR with the next key byte; the new rkey on success. */
int vcx_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind)
{
	const struct ibv_mw_bind_info *bi = &mw_bind->bind_info;
	struct ibv_send_wr wr = {}, *bad_wr = NULL;
	int ret;

	if (bi->mw_access_flags & IBV_ACCESS_ZERO_BASED)
		return errno = EINVAL;
	if (bi->mr && verbs_get_mr(bi->mr)->mr_type != IBV_MR_TYPE_MR)
		return errno = EOPNOTSUPP;
	wr.opcode = IBV_WR_BIND_MW;
	wr.wr_id = mw_bind->wr_id;
	wr.send_flags = mw_bind->send_flags;
	wr.bind_mw.bind_info = *bi;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	ret = vcx_post_send(qp, &wr, &bad_wr);
	if (ret)
		return ret;
	mw->rkey = wr.bind_mw.rkey;
	return 0;
}
