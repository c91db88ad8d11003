// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vcx provider: XRC domains, XRC SRQs and the XRC QPs' lifecycle.
 *
 * An XRC domain is a kernel object only (ibv_open_xrcd / ibv_close_xrcd; the kernel
 * shares a domain opened on the same file between processes and refuses to close one an
 * SRQ or target QP still uses, EBUSY).
 *
 * An XRC SRQ (ibv_create_srq_ex, IBV_SRQT_XRC) is a basic SRQ's linked list with the
 * same udata (srq.c); the kernel creates it in the domain with its CQ. The SRQ number
 * remote initiators name comes back in the response (ibv_get_srq_num).
 *
 * XRC_SEND QPs are RC send queues without a receive queue (qp.c; the XRC segment of their
 * WQEs is built in sq_wqe.c from wr.qp_type.xrc.remote_srqn or ibv_wr_set_xrc_srqn).
 * XRC_RECV QPs, created or opened (ibv_open_qp on a domain shared with the creator), are
 * the kernel's: no buffers, no doorbell record, no CQ. Their receive completions go to the
 * CQ of the SRQ that took the message and name it by number, so the library keeps no
 * QP-table entry for them and poll_cq finds the SRQ instead (cq.c). Modifying one is the
 * kernel command alone; destroying one closes this handle, the kernel destroys the QP
 * when the last handle goes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vcx.h"
#include "vcx-abi.h"

struct ibv_xrcd *vcx_open_xrcd(struct ibv_context *context,
			       struct ibv_xrcd_init_attr *xrcd_init_attr)
{
	struct ib_uverbs_open_xrcd_resp resp = {};
	struct ibv_open_xrcd cmd = {};
	struct vcx_xrcd *xrcd;
	int err;

	xrcd = calloc(1, sizeof(*xrcd));
	if (!xrcd)
		return NULL;
	err = ibv_cmd_open_xrcd(context, &xrcd->vxrcd, sizeof(xrcd->vxrcd), xrcd_init_attr,
				&cmd, sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		free(xrcd);
		errno = err;
		return NULL;
	}
	return &xrcd->vxrcd.xrcd;
}

int vcx_close_xrcd(struct ibv_xrcd *ib_xrcd)
{
	struct vcx_xrcd *xrcd = container_of(ib_xrcd, struct vcx_xrcd, vxrcd.xrcd);
	int ret;

	ret = ibv_cmd_close_xrcd(&xrcd->vxrcd);
	if (ret)
		return ret;
	free(xrcd);
	return 0;
}

/* XRC SRQs here; basic ones are ibv_create_srq's (tag matching: not offered). */
struct ibv_srq *vcx_create_srq_ex(struct ibv_context *context,
				  struct ibv_srq_init_attr_ex *attr)
{
	struct vcx_context *ctx = to_vcx_ctx(context);
	struct vcx_create_xsrq_cmd_resp resp = {};
	struct vcx_create_xsrq_cmd cmd = {};
	struct vcx_srq *srq;
	int err;

	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) || attr->srq_type == IBV_SRQT_BASIC) {
		if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd) {
			errno = EINVAL;
			return NULL;
		}
		return vcx_create_srq(attr->pd, (struct ibv_srq_init_attr *)attr);
	}
	if (attr->srq_type != IBV_SRQT_XRC) {
		errno = EOPNOTSUPP;	/* tag matching: the device has no XRQ */
		return NULL;
	}
	/* the PD of the responder's memory checks, the domain and the CQ of its receives */
	if ((attr->comp_mask & (IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD |
				IBV_SRQ_INIT_ATTR_CQ)) !=
	    (IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ) ||
	    !attr->pd || !attr->xrcd || !attr->cq) {
		errno = EINVAL;
		return NULL;
	}

	srq = vcx_srq_alloc(ctx, &attr->attr);
	if (!srq)
		return NULL;
	vcx_srq_fill_req(srq, &cmd.drv_payload.buf_addr, &cmd.drv_payload.db_addr,
			 &cmd.drv_payload.wqe_count, &cmd.drv_payload.wqe_shift);
	err = ibv_cmd_create_srq_ex(context, &srq->vsrq, attr, &cmd.ibv_cmd, sizeof(cmd),
				    &resp.ibv_resp, sizeof(resp));
	return vcx_srq_publish(ctx, srq, err, resp.drv_payload.srqn, &attr->attr);
}

/* The number remote XRC initiators put in their XRC segment: the PRM SRQ number. */
int vcx_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num)
{
	*srq_num = to_vcx_srq(srq)->srqn;
	return 0;
}

/* XRC_RECV: the kernel's QP in the domain, nothing on the library's side. */
struct ibv_qp *vcx_create_xrc_recv_qp(struct vcx_context *ctx,
				      struct ibv_qp_init_attr_ex *attr)
{
	struct vcx_create_qp_cmd_resp resp = {};
	struct vcx_create_qp_cmd cmd = {};
	struct vcx_qp *qp;
	int err;

	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) || !attr->xrcd ||
	    (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)) {
		errno = EINVAL;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	vcx_spinlock_init(&qp->sq.lock, !ctx->single_threaded);
	vcx_spinlock_init(&qp->rq.lock, !ctx->single_threaded);
	qp->xrc_tgt = true;
	/* ib_core ignores the udata of target QPs: an empty request */
	err = ibv_cmd_create_qp_ex(&ctx->ibv_ctx.context, &qp->vqp, attr, &cmd.ibv_cmd,
				   sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (err) {
		vcx_spinlock_destroy(&qp->sq.lock);
		vcx_spinlock_destroy(&qp->rq.lock);
		free(qp);
		errno = err;
		return NULL;
	}
	memset(&attr->cap, 0, sizeof(attr->cap));
	return &qp->ibv_qp;
}

/* Another handle on an XRC target some process created in a domain shared with it. */
struct ibv_qp *vcx_open_qp(struct ibv_context *context, struct ibv_qp_open_attr *attr)
{
	struct ib_uverbs_create_qp_resp resp = {};
	struct ibv_open_qp cmd = {};
	struct vcx_qp *qp;
	int err;

	if (attr->qp_type != IBV_QPT_XRC_RECV) {
		errno = EINVAL;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	vcx_spinlock_init(&qp->sq.lock, !to_vcx_ctx(context)->single_threaded);
	vcx_spinlock_init(&qp->rq.lock, !to_vcx_ctx(context)->single_threaded);
	qp->xrc_tgt = true;
	err = ibv_cmd_open_qp(context, &qp->vqp, sizeof(qp->vqp), attr, &cmd, sizeof(cmd),
			      &resp, sizeof(resp));
	if (err) {
		vcx_spinlock_destroy(&qp->sq.lock);
		vcx_spinlock_destroy(&qp->rq.lock);
		free(qp);
		errno = err;
		return NULL;
	}
	return &qp->ibv_qp;
}
