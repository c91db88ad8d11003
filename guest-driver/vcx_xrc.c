// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcx: XRC (IBTA "eXtended Reliable Connected" transport): domains, XRC SRQs and the
 * pieces of XRC initiator / target QPs that differ from RC.
 *
 * Offered only when the general capability xrc is 1: then the ib_device gets
 * alloc_xrcd/dealloc_xrcd (so uverbs offers open_xrcd) and IB_DEVICE_XRC; without it
 * every XRC verb answers -EOPNOTSUPP, as mlx5_ib registers its XRC ops only with the cap.
 *
 * - XRC domain: ALLOC_XRCD / DEALLOC_XRCD. ib_core counts the SRQs and target QPs naming
 *   a domain and refuses to free it while any is left (-EBUSY); the device's own check
 *   (BAD_RES_STATE) is never reached through ib_core.
 * - XRC SRQ (IB_SRQT_XRC): under ISSI 1 CREATE_XRC_SRQ / ARM_XRC_SRQ / QUERY_XRC_SRQ /
 *   DESTROY_XRC_SRQ with the xrc_srqc context; under ISSI 0 a PRM SRQ (CREATE_SRQ) whose
 *   srqc carries the domain and the CQ (vcx_srq.c). Same WQE list, limits and numbers as
 *   a basic SRQ; vcx_srq.c does the sizing, buffers and posting for both.
 * - XRC_INI: an RC send queue with no receive side (rq_type zero size); every send WQE but
 *   NOP carries the 16-byte XRC segment after the control segment, naming the SRQ at the
 *   target. ib_send_wr has no field for that number, so kernel initiators write 0 there,
 *   as mlx5_ib does (no kernel ULP uses XRC); user initiators set it per WR.
 * - XRC_TGT: no send queue and no receive queue at all (no buffer, no doorbell record):
 *   requests are taken by the SRQ the XRC segment names, which must belong to the QP's
 *   domain. ib_core creates target QPs without udata (also for user space) and shares
 *   them: ib_open_qp handles, the event fan-out to every handle and the destruction when
 *   the last one closes are ib_core's (verbs.c); the driver sees one kernel QP. Its PD is
 *   the driver's internal one (the UMR QP's, else one allocated here), as mlx5_ib uses its
 *   p0 PD, since ib_core gives target QPs none.
 */
#include "vcx_verbs.h"

/* ------------------------------------------------------------------------------------
 * Domains
 */
static int vcx_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	struct vcx_ib_dev *ibd = to_vibdev(ibxrcd->device);
	struct vcx_xrcd *xrcd = to_vxrcd(ibxrcd);
	u8 in[VCX_OBJ_CMD_LEN] = {};
	u8 out[VCX_OBJ_CMD_LEN] = {};
	int err;

	if (!ibd->xrc)
		return -EOPNOTSUPP;
	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_ALLOC_XRCD);
	err = vcx_cmd_exec(ibd->vdev, in, sizeof(in), out, sizeof(out));
	if (err)
		return err;
	xrcd->xrcdn = vcx_get(out, VCX_ALLOC_XRCD_OUT_XRCD);
	return 0;
}

static int vcx_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	struct vcx_dev *vdev = ibdev_to_vdev(ibxrcd->device);
	u8 in[VCX_OBJ_CMD_LEN] = {};
	u8 out[VCX_OBJ_CMD_LEN] = {};
	int err;

	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_DEALLOC_XRCD);
	vcx_set(in, VCX_DEALLOC_XRCD_IN_XRCD, to_vxrcd(ibxrcd)->xrcdn);
	err = vcx_cmd_exec(vdev, in, sizeof(in), out, sizeof(out));
	/* In the error state the function is gone: the domain went with it. */
	return vcx_in_error(vdev) ? 0 : err;
}

static const struct ib_device_ops vcx_xrc_dev_ops = {
	.alloc_xrcd = vcx_alloc_xrcd,
	.dealloc_xrcd = vcx_dealloc_xrcd,

	INIT_RDMA_OBJ_SIZE(ib_xrcd, vcx_xrcd, ibxrcd),
};

/* Before registration: XRC verbs only when the device says xrc = 1. */
void vcx_xrc_set_ops(struct vcx_ib_dev *ibd)
{
	ibd->xrc = vcx_cap(ibd->vdev, XRC);
	if (ibd->xrc)
		ib_set_device_ops(&ibd->ibdev, &vcx_xrc_dev_ops);
}

/*
 * After vcx_umr_init: the PD of target QPs. The UMR QP's PD when there is one (a PD of
 * the driver that lives as long as the ib_device), else one of our own.
 */
void vcx_xrc_init(struct vcx_ib_dev *ibd)
{
	struct ib_pd *pd;

	if (!ibd->xrc || ibd->umr.qp)
		return;
	pd = ib_alloc_pd(&ibd->ibdev, 0);
	if (IS_ERR(pd)) {
		dev_err(&ibd->ibdev.dev, "internal PD for XRC targets failed (%ld): no XRC\n",
			PTR_ERR(pd));
		ibd->xrc = false;
		return;
	}
	ibd->xrc_pd = pd;
}

void vcx_xrc_cleanup(struct vcx_ib_dev *ibd)
{
	if (ibd->xrc_pd)
		ib_dealloc_pd(ibd->xrc_pd);
	ibd->xrc_pd = NULL;
}

u32 vcx_xrc_tgt_pdn(struct vcx_ib_dev *ibd)
{
	return to_vpd(ibd->xrc_pd ? ibd->xrc_pd : ibd->umr.pd)->pdn;
}

/* ------------------------------------------------------------------------------------
 * XRC SRQ commands (ISSI 1)
 */
int vcx_xrc_srq_cmd_create(struct vcx_dev *vdev, struct vcx_srq *srq, u32 pdn,
			   struct ib_umem *umem, size_t npages)
{
	u8 out[VCX_OBJ_CMD_LEN] = {};
	size_t inlen = VCX_CREATE_XRC_SRQ_IN_PAS + npages * VCX_PAS_SIZE;
	u8 *in, *ctx;
	int err;

	in = kvzalloc(inlen, GFP_KERNEL);
	if (!in)
		return -ENOMEM;
	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_CREATE_XRC_SRQ);
	ctx = in + VCX_CREATE_XRC_SRQ_IN_CTX;
	vcx_set(ctx, VCX_XRC_SRQC_LOG_SIZE, ilog2(srq->max));
	vcx_set(ctx, VCX_XRC_SRQC_LOG_RQ_STRIDE, srq->wqe_shift - 4);
	vcx_set(ctx, VCX_XRC_SRQC_XRCD, srq->xrcdn);
	vcx_set(ctx, VCX_XRC_SRQC_PAGE_OFFSET, 0);
	vcx_set(ctx, VCX_XRC_SRQC_CQN, srq->cqn);
	vcx_set(ctx, VCX_XRC_SRQC_LOG_PAGE_SIZE, 0);	/* 4 KiB pages */
	/* cqe_version 0: CQEs name the SRQ by number; the user index is not used */
	vcx_set(ctx, VCX_XRC_SRQC_USER_INDEX, 0xffffff);
	vcx_set(ctx, VCX_XRC_SRQC_PD, pdn);
	vcx_set(ctx, VCX_XRC_SRQC_LWM, srq->limit);
	vcx_set64(ctx, VCX_XRC_SRQC_DBR_ADDR, srq->db.dma);
	vcx_ib_fill_pas(in + VCX_CREATE_XRC_SRQ_IN_PAS, umem, srq->buf_dma, npages);
	err = vcx_cmd_exec(vdev, in, inlen, out, sizeof(out));
	kvfree(in);
	if (!err)
		srq->srqn = vcx_get(out, VCX_CREATE_XRC_SRQ_OUT_SRQN);
	return err;
}

int vcx_xrc_srq_cmd_destroy(struct vcx_dev *vdev, struct vcx_srq *srq)
{
	u8 in[VCX_OBJ_CMD_LEN] = {};
	u8 out[VCX_OBJ_CMD_LEN] = {};

	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_DESTROY_XRC_SRQ);
	vcx_set(in, VCX_XRC_SRQ_IN_SRQN, srq->srqn);
	return vcx_cmd_exec(vdev, in, sizeof(in), out, sizeof(out));
}

/* ARM_XRC_SRQ op_mod XRC_SRQ: sets the limit and arms the limit event. */
int vcx_xrc_srq_cmd_arm(struct vcx_dev *vdev, struct vcx_srq *srq, u32 lwm)
{
	u8 in[VCX_OBJ_CMD_LEN] = {};
	u8 out[VCX_OBJ_CMD_LEN] = {};

	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_ARM_XRC_SRQ);
	vcx_set(in, VCX_CMD_IN_OP_MOD, VCX_ARM_XRC_SRQ_OP_MOD_XRC_SRQ);
	vcx_set(in, VCX_XRC_SRQ_IN_SRQN, srq->srqn);
	vcx_set(in, VCX_ARM_XRC_SRQ_IN_LWM, lwm);
	return vcx_cmd_exec(vdev, in, sizeof(in), out, sizeof(out));
}

int vcx_xrc_srq_cmd_query(struct vcx_dev *vdev, struct vcx_srq *srq, u32 *lwm, bool *error)
{
	u8 in[VCX_OBJ_CMD_LEN] = {};
	size_t outlen = VCX_QUERY_XRC_SRQ_OUT_PAS;	/* the context; no PAS list needed */
	u8 *out, *ctx;
	int err;

	out = kzalloc(outlen, GFP_KERNEL);
	if (!out)
		return -ENOMEM;
	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_QUERY_XRC_SRQ);
	vcx_set(in, VCX_XRC_SRQ_IN_SRQN, srq->srqn);
	err = vcx_cmd_exec(vdev, in, sizeof(in), out, outlen);
	if (!err) {
		ctx = out + VCX_QUERY_XRC_SRQ_OUT_CTX;
		*lwm = vcx_get(ctx, VCX_XRC_SRQC_LWM);
		*error = vcx_get(ctx, VCX_XRC_SRQC_STATE) != VCX_SRQC_STATE_GOOD;
	}
	kfree(out);
	return err;
}

/* ------------------------------------------------------------------------------------
 * XRC QPs
 */

/* What create_qp accepts for the two XRC types, before anything is allocated. */
int vcx_xrc_qp_check(struct vcx_ib_dev *ibd, const struct ib_qp_init_attr *attr,
		     struct ib_udata *udata)
{
	if (!ibd->xrc)
		return -EOPNOTSUPP;
	if (attr->srq)
		return -EINVAL;		/* the XRC segment names the SRQ, per request */
	if (attr->qp_type == IB_QPT_XRC_INI)
		return attr->send_cq ? 0 : -EINVAL;
	/* XRC_TGT: ib_core creates it without udata, with its domain and nothing else */
	if (udata || !attr->xrcd)
		return -EINVAL;
	return 0;
}

/* The CREATE_QP fields of an XRC target (vcx_qp_cmd_create does the common ones). */
void vcx_xrc_tgt_fill_qpc(struct vcx_ib_dev *ibd, struct ib_qp_init_attr *attr, u8 *qpc)
{
	vcx_set(qpc, VCX_QPC_PD, vcx_xrc_tgt_pdn(ibd));
	vcx_set(qpc, VCX_QPC_NO_SQ, 1);
	vcx_set(qpc, VCX_QPC_RQ_TYPE, VCX_QP_RQ_TYPE_ZERO_SIZE);
	vcx_set(qpc, VCX_QPC_XRCD, to_vxrcd(attr->xrcd)->xrcdn);
}

/*
 * The SRQ a responder CQE of a kernel XRC target consumed, by the CQE's SRQ number (the
 * target has no SRQ of its own). The SRQ outlives the CQE: ib_core keeps an SRQ with QPs
 * of its domain alive only by the domain's count, so a kernel consumer destroys its
 * targets and polls its CQ before it destroys the SRQ, as with mlx5_ib.
 */
struct vcx_srq *vcx_xrc_cqe_srq(struct vcx_qp *qp, const u8 *cqe)
{
	struct vcx_srq *srq;

	srq = xa_load(&qp->vdev->srq_table, vcx_get(cqe, VCX_CQE_SRQN_UIDX));
	if (!srq || !srq->xrcdn)
		return NULL;
	return srq;
}
