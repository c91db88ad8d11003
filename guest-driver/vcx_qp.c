// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcx: queue pairs (RC, UC, UD, XRC initiator and target with vcx_xrc.c, and the GSI QP
 * with vcx_gsi.c).
 *
 * CREATE_QP takes one buffer holding the RQ (at offset 0) and the SQ (64-byte WQEBBs),
 * an 8-byte doorbell record (receive counter, send counter) and the UAR whose doorbell
 * register the SQ rings. The RQ is regular, replaced by the SRQ (rq_type SRQ, srqn_rmpn)
 * when the QP has one. User QPs bring buffer and record (abi.h); kernel QPs get them here.
 *
 * ib_modify_qp() maps to the PRM transition commands as mlx5_ib does: RST2INIT_QP,
 * INIT2INIT_QP, INIT2RTR_QP, RTR2RTS_QP, RTS2RTS_QP, SQERR2RTS_QP, 2ERR_QP and 2RST_QP,
 * each with a QPC built from the attribute mask and the opt_param_mask of the optional
 * attributes the transition accepts. The primary address path comes from the AH
 * attribute: RoCE GRH (destination GID, source GID index = RoCE address table index),
 * the destination MAC ib_core resolved (rmac), the UDP source port for RoCEv2.
 *
 * Kernel post_send writes WQEs per prm-wqe.h into the SQ ring (a WQE may wrap), updates
 * the send counter of the doorbell record and writes the first 8 bytes of the last
 * control segment to the QP's doorbell register in the kernel UAR. post_recv writes data
 * segments and updates the receive counter only.
 *
 * Drains (ib_device_ops.drain_sq/drain_rq, as mlx5_ib's): the QP goes to ERR, one drain
 * WR is posted through the normal path (a signaled NOP on the SQ, an empty receive on
 * the RQ) and its flush completion is waited for. In the error state (a dead function)
 * posting fails with -EIO except for drain WRs, 2ERR and 2RST succeed without the device,
 * and the completions come from poll_cq's software flush (vcx_cq.c): the drain polls an
 * IB_POLL_DIRECT CQ itself and runs the completion handler of any other, since no event
 * will come. A QP on an SRQ entering ERR then gets IB_EVENT_QP_LAST_WQE_REACHED from the
 * driver, the event the device would have raised.
 */
#include <linux/dma-mapping.h>
#include <rdma/ib_cache.h>

#include "vcx_verbs.h"

/* Largest fixed part of a send WQE in front of the data segments, per transport. */
static u32 vcx_sq_fixed_size(enum ib_qp_type type)
{
	switch (type) {
	case IB_QPT_UD:
	case IB_QPT_GSI:
		return VCX_WQE_CTRL_SIZE + VCX_WQE_AV_SIZE;
	case IB_QPT_UC:
		return VCX_WQE_CTRL_SIZE + VCX_WQE_RADDR_SEG_SIZE;
	case IB_QPT_XRC_INI:
		return VCX_WQE_CTRL_SIZE + VCX_WQE_XRC_SEG_SIZE + VCX_WQE_RADDR_SEG_SIZE +
		       VCX_WQE_ATOMIC_SEG_SIZE;
	default:
		return VCX_WQE_CTRL_SIZE + VCX_WQE_RADDR_SEG_SIZE + VCX_WQE_ATOMIC_SEG_SIZE;
	}
}

static u8 vcx_qp_st(enum ib_qp_type type)
{
	switch (type) {
	case IB_QPT_UC:
		return VCX_QP_ST_UC;
	case IB_QPT_UD:
		return VCX_QP_ST_UD;
	case VCX_IB_QPT_REG_UMR:
		return VCX_QP_ST_REG_UMR;
	case IB_QPT_GSI:
		return VCX_QP_ST_QP1;
	case IB_QPT_XRC_INI:
	case IB_QPT_XRC_TGT:
		return VCX_QP_ST_XRC;
	default:
		return VCX_QP_ST_RC;
	}
}

/* ------------------------------------------------------------------------------------
 * Creation
 */
static int vcx_qp_size_kernel(struct vcx_ib_dev *ibd, struct vcx_qp *qp,
			      struct ib_qp_init_attr *attr)
{
	struct vcx_dev *vdev = ibd->vdev;
	u32 max_wqes = 1u << vcx_cap(vdev, LOG_MAX_QP_SZ);
	u32 wqe_size, wqebbs, fixed = vcx_sq_fixed_size(attr->qp_type);

	if (attr->cap.max_inline_data)
		return -EINVAL;		/* kernel QPs post no inline data */
	if (attr->cap.max_send_sge > ibd->max_sge || attr->cap.max_recv_sge > ibd->max_sge ||
	    attr->cap.max_send_wr > max_wqes || attr->cap.max_recv_wr > max_wqes)
		return -EINVAL;

	/* RQ: power-of-two WQEs of power-of-two size (data segments only). */
	if (attr->srq || attr->qp_type == VCX_IB_QPT_REG_UMR ||
	    attr->qp_type == IB_QPT_XRC_INI) {
		qp->rq.wqe_cnt = 0;
		qp->rq.wqe_shift = 4;
		qp->rq.max_gs = 0;
	} else {
		qp->rq.wqe_cnt = roundup_pow_of_two(max_t(u32, attr->cap.max_recv_wr, 1));
		qp->rq.wqe_shift = ilog2(roundup_pow_of_two(
			max_t(u32, attr->cap.max_recv_sge, 1) * VCX_WQE_DATA_SEG_SIZE));
		qp->rq.max_gs = (1u << qp->rq.wqe_shift) / VCX_WQE_DATA_SEG_SIZE;
		qp->rq.max_post = qp->rq.wqe_cnt;
		if ((1u << qp->rq.wqe_shift) > ibd->max_rq_desc || qp->rq.wqe_cnt > max_wqes)
			return -EINVAL;
	}

	/* SQ: every WQE may take the largest shape; counted in WQEBBs. */
	wqe_size = ALIGN(fixed + max_t(u32, attr->cap.max_send_sge, 1) *
			 VCX_WQE_DATA_SEG_SIZE, VCX_SEND_WQEBB);
	if (wqe_size > ibd->max_sq_desc)
		return -EINVAL;
	wqebbs = wqe_size / VCX_SEND_WQEBB;
	/* every WQE may also be a REG_MR UMR, as mlx5 sizes send WQEs */
	if (ibd->frwr)
		wqebbs = max_t(u32, wqebbs, DIV_ROUND_UP(VCX_UMR_REG_WQE_SIZE, VCX_SEND_WQEBB));
	qp->sq.wqe_cnt = roundup_pow_of_two(max_t(u32, attr->cap.max_send_wr, 1) * wqebbs);
	if (qp->sq.wqe_cnt > max_wqes)
		return -EINVAL;
	qp->sq.wqe_shift = VCX_SEND_WQEBB_SHIFT;
	qp->sq.max_gs = (wqe_size - fixed) / VCX_WQE_DATA_SEG_SIZE;
	qp->sq.max_post = qp->sq.wqe_cnt / wqebbs;
	qp->sq.offset = qp->rq.wqe_cnt << qp->rq.wqe_shift;
	qp->buf_size = PAGE_ALIGN(qp->sq.offset + qp->sq.wqe_cnt * VCX_SEND_WQEBB);

	attr->cap.max_send_wr = qp->sq.max_post;
	attr->cap.max_send_sge = qp->sq.max_gs;
	attr->cap.max_recv_wr = qp->rq.wqe_cnt;
	attr->cap.max_recv_sge = qp->rq.max_gs;
	attr->cap.max_inline_data = 0;
	return 0;
}

static int vcx_qp_create_kernel(struct vcx_ib_dev *ibd, struct vcx_qp *qp,
				struct ib_qp_init_attr *attr)
{
	struct vcx_dev *vdev = ibd->vdev;
	int err;

	err = vcx_qp_size_kernel(ibd, qp, attr);
	if (err)
		return err;
	qp->buf = dma_alloc_coherent(vcx_dev(vdev), qp->buf_size, &qp->buf_dma, GFP_KERNEL);
	if (!qp->buf)
		return -ENOMEM;
	err = -ENOMEM;
	qp->sq.wrid = kvcalloc(qp->sq.wqe_cnt, sizeof(*qp->sq.wrid), GFP_KERNEL);
	qp->sq.next_head = kvcalloc(qp->sq.wqe_cnt, sizeof(*qp->sq.next_head), GFP_KERNEL);
	qp->sq.opcode = kvcalloc(qp->sq.wqe_cnt, sizeof(*qp->sq.opcode), GFP_KERNEL);
	qp->scratch = kzalloc(ibd->max_sq_desc, GFP_KERNEL);
	if (!qp->sq.wrid || !qp->sq.next_head || !qp->sq.opcode || !qp->scratch)
		goto err_free;
	if (qp->rq.wqe_cnt) {
		qp->rq.wrid = kvcalloc(qp->rq.wqe_cnt, sizeof(*qp->rq.wrid), GFP_KERNEL);
		if (!qp->rq.wrid)
			goto err_free;
	}
	err = vcx_ib_db_alloc(vdev, &qp->db);
	if (err)
		goto err_free;
	qp->db.db[0] = 0;
	qp->db.db[1] = 0;

	/* One of the kernel UAR's doorbell registers, round robin over the QPs. */
	spin_lock(&ibd->bf_lock);
	qp->bf = vdev->uar + vcx_uar_bf_offset(ibd->kernel_bf++ % VCX_UAR_BFREGS_PER_PAGE, 0);
	spin_unlock(&ibd->bf_lock);
	qp->bf_offset = 0;
	qp->sq_signal_all = attr->sq_sig_type == IB_SIGNAL_ALL_WR;
	spin_lock_init(&qp->sq.lock);
	spin_lock_init(&qp->rq.lock);
	return 0;

err_free:
	kvfree(qp->rq.wrid);
	kfree(qp->scratch);
	kvfree(qp->sq.opcode);
	kvfree(qp->sq.next_head);
	kvfree(qp->sq.wrid);
	dma_free_coherent(vcx_dev(vdev), qp->buf_size, qp->buf, qp->buf_dma);
	qp->buf = NULL;
	return err;
}

static void vcx_qp_free_kernel(struct vcx_dev *vdev, struct vcx_qp *qp)
{
	vcx_ib_db_free(vdev, &qp->db);
	kvfree(qp->rq.wrid);
	kfree(qp->scratch);
	kvfree(qp->sq.opcode);
	kvfree(qp->sq.next_head);
	kvfree(qp->sq.wrid);
	if (qp->buf)
		dma_free_coherent(vcx_dev(vdev), qp->buf_size, qp->buf, qp->buf_dma);
	qp->buf = NULL;
}

static int vcx_qp_create_user(struct vcx_ib_dev *ibd, struct vcx_qp *qp,
			      struct ib_qp_init_attr *attr, struct ib_udata *udata,
			      u32 *uar)
{
	struct vcx_ucontext *uctx = rdma_udata_to_drv_context(udata, struct vcx_ucontext,
							      ibuc);
	u32 max_wqes = 1u << vcx_cap(ibd->vdev, LOG_MAX_QP_SZ);
	struct vcx_create_qp_req req = {};
	size_t size;
	int err;

	if (udata->inlen < offsetofend(struct vcx_create_qp_req, flags))
		return -EINVAL;
	err = ib_copy_from_udata(&req, udata, min(udata->inlen, sizeof(req)));
	if (err)
		return err;
	if (req.flags)
		return -EINVAL;
	if ((req.sq_wqe_count && !is_power_of_2(req.sq_wqe_count)) ||
	    (req.rq_wqe_count && !is_power_of_2(req.rq_wqe_count)) ||
	    req.sq_wqe_count > max_wqes || req.rq_wqe_count > max_wqes ||
	    (req.rq_wqe_count && (req.rq_wqe_shift < 4 || req.rq_wqe_shift > 11)) ||
	    ((attr->srq || attr->qp_type == IB_QPT_XRC_INI) && req.rq_wqe_count) ||
	    !PAGE_ALIGNED(req.buf_addr))
		return -EINVAL;
	qp->rq.wqe_cnt = req.rq_wqe_count;
	/* Without an RQ the library sends shift 0: the stride is unused. */
	qp->rq.wqe_shift = req.rq_wqe_count ? req.rq_wqe_shift : 4;
	qp->sq.wqe_cnt = req.sq_wqe_count;
	qp->sq.wqe_shift = VCX_SEND_WQEBB_SHIFT;
	qp->sq.offset = req.rq_wqe_count << qp->rq.wqe_shift;
	size = PAGE_ALIGN(qp->sq.offset + (size_t)req.sq_wqe_count * VCX_SEND_WQEBB);
	if (!size)
		return -EINVAL;
	err = vcx_ib_user_queue_map(uctx, req.buf_addr, size, 0, req.db_addr, &qp->umem,
				    &qp->db);
	if (err)
		return err;
	qp->bfreg = (u32)atomic_inc_return(&uctx->next_bfreg) %
		    (uctx->num_uars * VCX_UAR_BFREGS_PER_PAGE);
	*uar = uctx->uar_index[qp->bfreg / VCX_UAR_BFREGS_PER_PAGE];
	return 0;
}

static void vcx_qp_free_user(struct vcx_qp *qp, struct ib_udata *udata)
{
	struct vcx_ucontext *uctx = rdma_udata_to_drv_context(udata, struct vcx_ucontext,
							      ibuc);

	vcx_ib_user_queue_unmap(uctx, &qp->umem, &qp->db);
}

static int vcx_qp_cmd_create(struct vcx_ib_dev *ibd, struct vcx_qp *qp,
			     struct ib_qp_init_attr *attr, u32 uar)
{
	struct vcx_dev *vdev = ibd->vdev;
	u8 out[VCX_OBJ_CMD_LEN] = {};
	size_t npages, inlen;
	u8 *in, *qpc, *pas;
	int err;

	npages = qp->umem ? ib_umem_num_dma_blocks(qp->umem, VCX_PAGE_SIZE) :
			    qp->buf_size / VCX_PAGE_SIZE;	/* 0: an XRC target */
	inlen = VCX_CREATE_QP_IN_LEN + npages * VCX_PAS_SIZE;
	in = kvzalloc(inlen, GFP_KERNEL);
	if (!in)
		return -ENOMEM;
	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_CREATE_QP);
	qpc = in + VCX_QP_IN_QPC_AT;
	vcx_set(qpc, VCX_QPC_ST, qp->st);
	vcx_set(qpc, VCX_QPC_PM_STATE, VCX_QP_PM_MIGRATED);
	vcx_set(qpc, VCX_QPC_UAR_PAGE, uar);
	vcx_set(qpc, VCX_QPC_LOG_PAGE_SIZE, 0);		/* 4 KiB pages */
	vcx_set(qpc, VCX_QPC_PAGE_OFFSET, 0);
	if (attr->qp_type == IB_QPT_XRC_TGT) {
		/* no queues, no CQs, no doorbell record: the SRQs of its domain take it all */
		vcx_xrc_tgt_fill_qpc(ibd, attr, qpc);
		goto exec;
	}
	vcx_set(qpc, VCX_QPC_PD, to_vpd(qp->ibqp.pd)->pdn);
	if (attr->srq) {
		vcx_set(qpc, VCX_QPC_RQ_TYPE, VCX_QP_RQ_TYPE_SRQ);
		vcx_set(qpc, VCX_QPC_SRQN_RMPN_XRQN, to_vsrq(attr->srq)->srqn);
	} else if (!qp->rq.wqe_cnt) {
		vcx_set(qpc, VCX_QPC_RQ_TYPE, VCX_QP_RQ_TYPE_ZERO_SIZE);
	} else {
		vcx_set(qpc, VCX_QPC_RQ_TYPE, VCX_QP_RQ_TYPE_REGULAR);
		vcx_set(qpc, VCX_QPC_LOG_RQ_SIZE, ilog2(qp->rq.wqe_cnt));
		vcx_set(qpc, VCX_QPC_LOG_RQ_STRIDE, qp->rq.wqe_shift - 4);
	}
	if (qp->sq.wqe_cnt)
		vcx_set(qpc, VCX_QPC_LOG_SQ_SIZE, ilog2(qp->sq.wqe_cnt));
	else
		vcx_set(qpc, VCX_QPC_NO_SQ, 1);
	vcx_set(qpc, VCX_QPC_CQN_SND, to_vcq(attr->send_cq)->cqn);
	/* an XRC initiator receives nothing: its receive CQ may be absent (cqn 0) */
	if (attr->recv_cq)
		vcx_set(qpc, VCX_QPC_CQN_RCV, to_vcq(attr->recv_cq)->cqn);
	vcx_set64(qpc, VCX_QPC_DBR_ADDR, qp->db.dma);
	pas = in + VCX_CREATE_QP_IN_PAS_AT;
	vcx_ib_fill_pas(pas, qp->umem, qp->buf_dma, npages);
exec:
	err = vcx_cmd_exec(vdev, in, inlen, out, sizeof(out));
	kvfree(in);
	if (!err)
		qp->qpn = vcx_get(out, VCX_CREATE_QP_OUT_QPN);
	return err;
}

static int vcx_qp_cmd_simple(struct vcx_dev *vdev, u16 opcode, u32 qpn)
{
	u8 in[VCX_OBJ_CMD_LEN] = {};
	u8 out[VCX_OBJ_CMD_LEN] = {};

	vcx_set(in, VCX_CMD_IN_OPCODE, opcode);
	vcx_set(in, VCX_OBJ_NUMBER, qpn);
	return vcx_cmd_exec(vdev, in, sizeof(in), out, sizeof(out));
}

int vcx_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *attr, struct ib_udata *udata)
{
	struct vcx_ib_dev *ibd = to_vibdev(ibqp->device);
	struct vcx_dev *vdev = ibd->vdev;
	struct vcx_qp *qp = to_vqp(ibqp);
	u32 uar = vdev->uar_index;
	int err;

	switch (attr->qp_type) {
	case IB_QPT_RC:
		if (!vcx_cap(vdev, RC))
			return -EOPNOTSUPP;
		break;
	case IB_QPT_UC:
		if (!vcx_cap(vdev, UC))
			return -EOPNOTSUPP;
		break;
	case IB_QPT_UD:
		if (!vcx_cap(vdev, UD))
			return -EOPNOTSUPP;
		break;
	case VCX_IB_QPT_REG_UMR:
		/* the driver's own UMR QP (vcx_umr.c) only */
		if (udata || !ibd->frwr)
			return -EOPNOTSUPP;
		break;
	case IB_QPT_GSI:
		if (!vcx_cap(vdev, UD))
			return -EOPNOTSUPP;
		break;
	case IB_QPT_XRC_INI:
	case IB_QPT_XRC_TGT:
		err = vcx_xrc_qp_check(ibd, attr, udata);
		if (err)
			return err;
		break;
	default:
		/* SMI (no QP0 on RoCE), raw packet, driver QPs */
		return -EOPNOTSUPP;
	}
	if (attr->create_flags || attr->rwq_ind_tbl)
		return -EOPNOTSUPP;
	if (attr->qp_type != IB_QPT_XRC_INI && attr->qp_type != IB_QPT_XRC_TGT &&
	    (!attr->send_cq || !attr->recv_cq))
		return -EINVAL;

	qp->vdev = vdev;
	mutex_init(&qp->mutex);
	qp->st = vcx_qp_st(attr->qp_type);
	qp->state = IB_QPS_RESET;
	qp->port = VCX_IB_PORT;
	if (attr->qp_type == IB_QPT_GSI) {
		err = vcx_gsi_claim(ibd, qp, attr, udata);
		if (err)
			return err;
	}
	if (attr->qp_type == IB_QPT_XRC_TGT)
		err = 0;	/* nothing to allocate (vcx_xrc.c) */
	else if (udata)
		err = vcx_qp_create_user(ibd, qp, attr, udata, &uar);
	else
		err = vcx_qp_create_kernel(ibd, qp, attr);
	if (err)
		goto err_gsi;

	err = vcx_qp_cmd_create(ibd, qp, attr, uar);
	if (err)
		goto err_buf;
	err = xa_insert_irq(&vdev->qp_table, qp->qpn, qp, GFP_KERNEL);
	if (err)
		goto err_cmd;
	/* the GSI QP is QP 1 to ib_core and on the wire, whatever its device number */
	ibqp->qp_num = qp->st == VCX_QP_ST_QP1 ? 1 : qp->qpn;
	if (!udata && qp->buf)
		vcx_cq_add_qp(qp);

	if (udata) {
		struct vcx_create_qp_resp resp = { .bfreg_index = qp->bfreg };

		err = ib_copy_to_udata(udata, &resp, min(udata->outlen, sizeof(resp)));
		if (err)
			goto err_table;
	}
	return 0;

err_table:
	xa_erase_irq(&vdev->qp_table, qp->qpn);
err_cmd:
	vcx_qp_cmd_simple(vdev, VCX_CMD_OP_DESTROY_QP, qp->qpn);
err_buf:
	if (udata)
		vcx_qp_free_user(qp, udata);
	else if (qp->buf)
		vcx_qp_free_kernel(vdev, qp);
err_gsi:
	vcx_gsi_release(ibd, qp);
	return err;
}

/* ------------------------------------------------------------------------------------
 * State transitions
 */
enum { VCX_ST_RC, VCX_ST_UC, VCX_ST_UD, VCX_ST_XRC, VCX_ST_NUM };

/*
 * Optional attributes each transition accepts (mlx5_ib's opt_mask table). XRC QPs take
 * those of RC: the same connection, whose requests name an SRQ.
 */
static u32 vcx_qp_opt_mask(enum ib_qp_state cur, enum ib_qp_state new, u8 st)
{
	static const u32 init2init[VCX_ST_NUM] = {
		[VCX_ST_RC] = VCX_QP_OPTPAR_RRE | VCX_QP_OPTPAR_RAE | VCX_QP_OPTPAR_RWE |
			      VCX_QP_OPTPAR_PKEY_INDEX | VCX_QP_OPTPAR_PRI_PORT,
		[VCX_ST_UC] = VCX_QP_OPTPAR_RWE | VCX_QP_OPTPAR_PKEY_INDEX |
			      VCX_QP_OPTPAR_PRI_PORT,
		[VCX_ST_UD] = VCX_QP_OPTPAR_PKEY_INDEX | VCX_QP_OPTPAR_Q_KEY |
			      VCX_QP_OPTPAR_PRI_PORT,
		[VCX_ST_XRC] = VCX_QP_OPTPAR_RRE | VCX_QP_OPTPAR_RAE | VCX_QP_OPTPAR_RWE |
			       VCX_QP_OPTPAR_PKEY_INDEX | VCX_QP_OPTPAR_PRI_PORT,
	};
	static const u32 init2rtr[VCX_ST_NUM] = {
		[VCX_ST_RC] = VCX_QP_OPTPAR_ALT_ADDR_PATH | VCX_QP_OPTPAR_RRE |
			      VCX_QP_OPTPAR_RAE | VCX_QP_OPTPAR_RWE | VCX_QP_OPTPAR_PKEY_INDEX,
		[VCX_ST_UC] = VCX_QP_OPTPAR_ALT_ADDR_PATH | VCX_QP_OPTPAR_RWE |
			      VCX_QP_OPTPAR_PKEY_INDEX,
		[VCX_ST_UD] = VCX_QP_OPTPAR_PKEY_INDEX | VCX_QP_OPTPAR_Q_KEY,
		[VCX_ST_XRC] = VCX_QP_OPTPAR_ALT_ADDR_PATH | VCX_QP_OPTPAR_RRE |
			       VCX_QP_OPTPAR_RAE | VCX_QP_OPTPAR_RWE | VCX_QP_OPTPAR_PKEY_INDEX,
	};
	static const u32 rtr2rts[VCX_ST_NUM] = {
		[VCX_ST_RC] = VCX_QP_OPTPAR_ALT_ADDR_PATH | VCX_QP_OPTPAR_RRE |
			      VCX_QP_OPTPAR_RAE | VCX_QP_OPTPAR_RWE | VCX_QP_OPTPAR_PM_STATE |
			      VCX_QP_OPTPAR_RNR_TIMEOUT,
		[VCX_ST_UC] = VCX_QP_OPTPAR_ALT_ADDR_PATH | VCX_QP_OPTPAR_RWE |
			      VCX_QP_OPTPAR_PM_STATE,
		[VCX_ST_UD] = VCX_QP_OPTPAR_Q_KEY,
		[VCX_ST_XRC] = VCX_QP_OPTPAR_ALT_ADDR_PATH | VCX_QP_OPTPAR_RRE |
			       VCX_QP_OPTPAR_RAE | VCX_QP_OPTPAR_RWE | VCX_QP_OPTPAR_PM_STATE |
			       VCX_QP_OPTPAR_RNR_TIMEOUT,
	};
	static const u32 rts2rts[VCX_ST_NUM] = {
		[VCX_ST_RC] = VCX_QP_OPTPAR_RRE | VCX_QP_OPTPAR_RAE | VCX_QP_OPTPAR_RWE |
			      VCX_QP_OPTPAR_RNR_TIMEOUT | VCX_QP_OPTPAR_PM_STATE |
			      VCX_QP_OPTPAR_ALT_ADDR_PATH,
		[VCX_ST_UC] = VCX_QP_OPTPAR_RWE | VCX_QP_OPTPAR_PM_STATE |
			      VCX_QP_OPTPAR_ALT_ADDR_PATH,
		[VCX_ST_UD] = VCX_QP_OPTPAR_Q_KEY,
		[VCX_ST_XRC] = VCX_QP_OPTPAR_RRE | VCX_QP_OPTPAR_RAE | VCX_QP_OPTPAR_RWE |
			       VCX_QP_OPTPAR_RNR_TIMEOUT | VCX_QP_OPTPAR_PM_STATE |
			       VCX_QP_OPTPAR_ALT_ADDR_PATH,
	};
	static const u32 sqerr2rts[VCX_ST_NUM] = {
		[VCX_ST_RC] = VCX_QP_OPTPAR_RNR_TIMEOUT,
		[VCX_ST_UC] = VCX_QP_OPTPAR_RWE,
		[VCX_ST_UD] = VCX_QP_OPTPAR_Q_KEY,
		[VCX_ST_XRC] = VCX_QP_OPTPAR_RNR_TIMEOUT,
	};

	if (st >= VCX_ST_NUM)
		return 0;	/* QP1 (mlx5's table has no column for it) and REG_UMR */
	if (cur == IB_QPS_INIT && new == IB_QPS_INIT)
		return init2init[st];
	if (cur == IB_QPS_INIT && new == IB_QPS_RTR)
		return init2rtr[st];
	if (cur == IB_QPS_RTR && new == IB_QPS_RTS)
		return rtr2rts[st];
	if (cur == IB_QPS_RTS && new == IB_QPS_RTS)
		return rts2rts[st];
	if (cur == IB_QPS_SQE && new == IB_QPS_RTS)
		return sqerr2rts[st];
	return 0;
}

static u32 vcx_ib_mask_to_optpar(int mask)
{
	u32 opt = 0;

	if (mask & IB_QP_PKEY_INDEX)
		opt |= VCX_QP_OPTPAR_PKEY_INDEX;
	if (mask & IB_QP_PORT)
		opt |= VCX_QP_OPTPAR_PRI_PORT;
	if (mask & IB_QP_QKEY)
		opt |= VCX_QP_OPTPAR_Q_KEY;
	if (mask & IB_QP_AV)
		opt |= VCX_QP_OPTPAR_PRIMARY_ADDR_PATH | VCX_QP_OPTPAR_PRI_PORT;
	if (mask & IB_QP_ALT_PATH)
		opt |= VCX_QP_OPTPAR_ALT_ADDR_PATH;
	if (mask & IB_QP_ACCESS_FLAGS)
		opt |= VCX_QP_OPTPAR_RRE | VCX_QP_OPTPAR_RAE | VCX_QP_OPTPAR_RWE;
	if (mask & IB_QP_TIMEOUT)
		opt |= VCX_QP_OPTPAR_ACK_TIMEOUT;
	if (mask & IB_QP_RETRY_CNT)
		opt |= VCX_QP_OPTPAR_RETRY_COUNT;
	if (mask & IB_QP_RNR_RETRY)
		opt |= VCX_QP_OPTPAR_RNR_RETRY;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		opt |= VCX_QP_OPTPAR_SRA_MAX;
	if (mask & IB_QP_MIN_RNR_TIMER)
		opt |= VCX_QP_OPTPAR_RNR_TIMEOUT;
	/* The responder depth changes what the access flags allow (vcx_qp_fill_qpc()). */
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		opt |= VCX_QP_OPTPAR_RRA_MAX | VCX_QP_OPTPAR_RRE | VCX_QP_OPTPAR_RAE |
		       VCX_QP_OPTPAR_RWE;
	if (mask & IB_QP_PATH_MIG_STATE)
		opt |= VCX_QP_OPTPAR_PM_STATE;
	return opt;
}

/* RoCE primary address path from the AH attribute (mlx5_set_path()). */
static int vcx_qp_set_path(struct vcx_qp *qp, const struct ib_qp_attr *attr, int mask,
			   u8 *path)
{
	const struct rdma_ah_attr *ah = &attr->ah_attr;
	const struct ib_global_route *grh;
	u32 dqpn = mask & IB_QP_DEST_QPN ? attr->dest_qp_num : 0;
	u32 fl;

	if (ah->type != RDMA_AH_ATTR_TYPE_ROCE || !(rdma_ah_get_ah_flags(ah) & IB_AH_GRH))
		return -EINVAL;
	grh = rdma_ah_read_grh(ah);
	if (!grh->sgid_attr)
		return -EINVAL;
	if (rdma_ah_get_port_num(ah) != VCX_IB_PORT)
		return -EINVAL;
	vcx_set(path, VCX_ADS_GRH, 1);
	vcx_set(path, VCX_ADS_SRC_ADDR_INDEX, grh->sgid_index);
	vcx_set(path, VCX_ADS_HOP_LIMIT, grh->hop_limit);
	vcx_set(path, VCX_ADS_TCLASS, grh->traffic_class);
	vcx_set(path, VCX_ADS_FLOW_LABEL, grh->flow_label);
	memcpy(vcx_ptr(path, VCX_ADS_RGID_RIP), grh->dgid.raw, 16);
	vcx_set(path, VCX_ADS_RMAC_47_32, ah->roce.dmac[0] << 8 | ah->roce.dmac[1]);
	vcx_set(path, VCX_ADS_RMAC_31_0, (u32)ah->roce.dmac[2] << 24 |
		ah->roce.dmac[3] << 16 | ah->roce.dmac[4] << 8 | ah->roce.dmac[5]);
	vcx_set(path, VCX_ADS_ETH_PRIO, rdma_ah_get_sl(ah) & 7);
	vcx_set(path, VCX_ADS_SL, rdma_ah_get_sl(ah) & 0xf);
	vcx_set(path, VCX_ADS_VHCA_PORT_NUM, VCX_IB_PORT);
	if (grh->sgid_attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP) {
		vcx_set(path, VCX_ADS_DSCP, grh->traffic_class >> 2);
		fl = grh->flow_label ? grh->flow_label : rdma_calc_flow_label(qp->qpn, dqpn);
		vcx_set(path, VCX_ADS_UDP_SPORT, rdma_flow_label_to_udp_sport(fl));
	}
	return 0;
}

static u16 vcx_qp_transition_op(enum ib_qp_state cur, enum ib_qp_state new)
{
	if (new == IB_QPS_RESET)
		return VCX_CMD_OP_2RST_QP;
	if (new == IB_QPS_ERR)
		return VCX_CMD_OP_2ERR_QP;
	if (cur == IB_QPS_RESET && new == IB_QPS_INIT)
		return VCX_CMD_OP_RST2INIT_QP;
	if (cur == IB_QPS_INIT && new == IB_QPS_INIT)
		return VCX_CMD_OP_INIT2INIT_QP;
	if (cur == IB_QPS_INIT && new == IB_QPS_RTR)
		return VCX_CMD_OP_INIT2RTR_QP;
	if (cur == IB_QPS_RTR && new == IB_QPS_RTS)
		return VCX_CMD_OP_RTR2RTS_QP;
	if (cur == IB_QPS_RTS && new == IB_QPS_RTS)
		return VCX_CMD_OP_RTS2RTS_QP;
	if (cur == IB_QPS_SQE && new == IB_QPS_RTS)
		return VCX_CMD_OP_SQERR2RTS_QP;
	return 0;	/* SQD transitions: not supported */
}

static int vcx_qp_fill_qpc(struct vcx_ib_dev *ibd, struct vcx_qp *qp,
			   const struct ib_qp_attr *attr, int mask, u8 *qpc)
{
	struct vcx_dev *vdev = ibd->vdev;
	u8 *path = qpc + VCX_QPC_PRI_PATH_AT;
	int err;

	vcx_set(qpc, VCX_QPC_ST, qp->st);
	vcx_set(qpc, VCX_QPC_PM_STATE, VCX_QP_PM_MIGRATED);
	if (qp->st == VCX_QP_ST_UD)
		vcx_set(qpc, VCX_QPC_MTU, IB_MTU_4096);
	else if (qp->st == VCX_QP_ST_REG_UMR)
		vcx_set(qpc, VCX_QPC_MTU, IB_MTU_256);	/* sends nothing; any valid MTU */
	else if (mask & IB_QP_PATH_MTU)
		vcx_set(qpc, VCX_QPC_MTU, attr->path_mtu);
	vcx_set(qpc, VCX_QPC_LOG_MSG_MAX, vcx_cap(vdev, LOG_MAX_MSG));
	if (qp->st == VCX_QP_ST_QP1)
		vcx_gsi_fill_qpc(qp, qpc);
	if (mask & IB_QP_DEST_QPN)
		vcx_set(qpc, VCX_QPC_REMOTE_QPN, attr->dest_qp_num);
	if (mask & IB_QP_PKEY_INDEX)
		vcx_set(path, VCX_ADS_PKEY_INDEX, attr->pkey_index);
	if (mask & IB_QP_PORT)
		vcx_set(path, VCX_ADS_VHCA_PORT_NUM, attr->port_num);
	if (mask & IB_QP_AV) {
		err = vcx_qp_set_path(qp, attr, mask, path);
		if (err)
			return err;
	}
	if (mask & IB_QP_TIMEOUT)
		vcx_set(path, VCX_ADS_ACK_TIMEOUT, attr->timeout);
	if (mask & IB_QP_RETRY_CNT)
		vcx_set(qpc, VCX_QPC_RETRY_COUNT, attr->retry_cnt);
	if (mask & IB_QP_RNR_RETRY)
		vcx_set(qpc, VCX_QPC_RNR_RETRY, attr->rnr_retry);
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) && attr->max_rd_atomic)
		vcx_set(qpc, VCX_QPC_LOG_SRA_MAX, order_base_2(attr->max_rd_atomic));
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) && attr->max_dest_rd_atomic)
		vcx_set(qpc, VCX_QPC_LOG_RRA_MAX, order_base_2(attr->max_dest_rd_atomic));
	/*
	 * Responder access and atomic mode from the current flags whenever the flags or the
	 * responder depth change (mlx5 to_mlx5_access_flags()): without responder resources
	 * only remote writes are allowed.
	 */
	if (mask & (IB_QP_ACCESS_FLAGS | IB_QP_MAX_DEST_RD_ATOMIC)) {
		u32 acc = mask & IB_QP_ACCESS_FLAGS ? attr->qp_access_flags : qp->access_flags;
		u8 depth = mask & IB_QP_MAX_DEST_RD_ATOMIC ? attr->max_dest_rd_atomic :
							     qp->resp_depth;

		if ((acc & IB_ACCESS_REMOTE_ATOMIC) &&
		    ((qp->st != VCX_QP_ST_RC && qp->st != VCX_QP_ST_XRC) ||
		     ibd->atomic_caps != (VCX_ATOMIC_CAP_CMP_SWP | VCX_ATOMIC_CAP_FETCH_ADD)))
			return -EOPNOTSUPP;
		if (!depth)
			acc &= IB_ACCESS_REMOTE_WRITE;
		vcx_set(qpc, VCX_QPC_RRE, !!(acc & IB_ACCESS_REMOTE_READ));
		vcx_set(qpc, VCX_QPC_RWE, !!(acc & IB_ACCESS_REMOTE_WRITE));
		vcx_set(qpc, VCX_QPC_RAE, !!(acc & IB_ACCESS_REMOTE_ATOMIC));
		if (acc & IB_ACCESS_REMOTE_ATOMIC)
			vcx_set(qpc, VCX_QPC_ATOMIC_MODE, VCX_QP_ATOMIC_MODE_IB_COMP);
	}
	if (mask & IB_QP_MIN_RNR_TIMER)
		vcx_set(qpc, VCX_QPC_MIN_RNR_NAK, attr->min_rnr_timer);
	if (mask & IB_QP_SQ_PSN)
		vcx_set(qpc, VCX_QPC_NEXT_SEND_PSN, attr->sq_psn);
	if (mask & IB_QP_RQ_PSN)
		vcx_set(qpc, VCX_QPC_NEXT_RCV_PSN, attr->rq_psn);
	if (mask & IB_QP_QKEY)
		vcx_set(qpc, VCX_QPC_Q_KEY, attr->qkey);
	return 0;
}

/* Back to RESET: the queues restart and the QP's CQEs go (kernel QPs). */
static void vcx_qp_reset_queues(struct vcx_qp *qp)
{
	struct vcx_srq *srq = qp->ibqp.srq ? to_vsrq(qp->ibqp.srq) : NULL;
	unsigned long flags;

	if (!qp->buf)
		return;		/* a user QP, or an XRC target (no queues, no CQs) */
	if (qp->ibqp.recv_cq)	/* an XRC initiator may have none */
		vcx_cq_clean(to_vcq(qp->ibqp.recv_cq), qp->qpn, srq);
	if (qp->ibqp.send_cq != qp->ibqp.recv_cq)
		vcx_cq_clean(to_vcq(qp->ibqp.send_cq), qp->qpn, NULL);
	/* under the queue locks: the error state's software flush reads them */
	spin_lock_irqsave(&qp->sq.lock, flags);
	qp->sq.head = qp->sq.tail = 0;
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	spin_lock_irqsave(&qp->rq.lock, flags);
	qp->rq.head = qp->rq.tail = 0;
	spin_unlock_irqrestore(&qp->rq.lock, flags);
	qp->db.db[0] = 0;
	qp->db.db[1] = 0;
}

/* An affiliated event the driver raises itself (the device cannot). */
static void vcx_qp_sw_event(struct vcx_qp *qp, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = type,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/* The Q counter the QP names: its bound counter's, or the port's. */
static u32 vcx_qp_counter_set(struct vcx_ib_dev *ibd, struct ib_qp *ibqp)
{
	return ibqp->counter ? ibqp->counter->id : ibd->q_counter;
}

/* RTS2RTS changing nothing but counter_set_id (opt_param COUNTER_SET_ID). */
static int vcx_qp_rts2rts_counter(struct vcx_qp *qp, u32 set_id)
{
	u8 out[VCX_CMD_HDR_SIZE] = {};
	u8 *in;
	int err;

	in = kzalloc(VCX_MODIFY_QP_IN_LEN, GFP_KERNEL);
	if (!in)
		return -ENOMEM;
	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_RTS2RTS_QP);
	vcx_set(in, VCX_MODIFY_QP_IN_QPN, qp->qpn);
	vcx_set(in, VCX_QP_IN_OPT_PARAM_MASK, VCX_QP_OPTPAR_COUNTER_SET_ID);
	vcx_set(in + VCX_QP_IN_QPC_AT, VCX_QPC_COUNTER_SET_ID, set_id);
	err = vcx_cmd_exec(qp->vdev, in, VCX_MODIFY_QP_IN_LEN, out, sizeof(out));
	kfree(in);
	return err;
}

/*
 * ib_device_ops counter_bind_qp / counter_unbind_qp (vcx_counters.c), as mlx5_ib binds:
 * a QP in RESET names the counter at its RST2INIT; one in RTS changes to it at once
 * (RTS2RTS, needs the rts2rts_qp_counters_set_id capability); in any other state the
 * binding is remembered and applied right after the QP enters RTS. NULL: back to the
 * port's Q counter. ib_core holds the counter's lock; the QP's mutex orders it with
 * modify_qp.
 */
int vcx_qp_set_counter(struct ib_qp *ibqp, struct rdma_counter *counter)
{
	struct vcx_ib_dev *ibd = to_vibdev(ibqp->device);
	struct vcx_qp *qp = to_vqp(ibqp);
	int err = 0;

	mutex_lock(&qp->mutex);
	if (qp->state == IB_QPS_RESET) {
		ibqp->counter = counter;
		goto out;
	}
	if (!vcx_cap(qp->vdev, RTS2RTS_QP_COUNTERS_SET_ID)) {
		err = -EOPNOTSUPP;
		goto out;
	}
	if (qp->state == IB_QPS_RTS) {
		err = vcx_qp_rts2rts_counter(qp, counter ? counter->id : ibd->q_counter);
		if (!err)
			ibqp->counter = counter;
		goto out;
	}
	qp->counter_pending = true;
	ibqp->counter = counter;
out:
	mutex_unlock(&qp->mutex);
	return err;
}

static int vcx_modify_qp_locked(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
				struct ib_udata *udata)
{
	struct vcx_ib_dev *ibd = to_vibdev(ibqp->device);
	struct vcx_dev *vdev = ibd->vdev;
	struct vcx_qp *qp = to_vqp(ibqp);
	enum ib_qp_state cur, new;
	u8 out[VCX_CMD_HDR_SIZE] = {};
	bool sw_last_wqe = false;
	u32 optpar;
	u16 op;
	u8 *in;
	int err;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;
	if (udata && udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EOPNOTSUPP;
	cur = mask & IB_QP_CUR_STATE ? attr->cur_qp_state : qp->state;
	new = mask & IB_QP_STATE ? attr->qp_state : cur;
	/* ib_core's table knows the IBTA types only; the UMR QP is driven by vcx_umr.c. */
	if (ibqp->qp_type != VCX_IB_QPT_REG_UMR && !ib_modify_qp_is_ok(cur, new, ibqp->qp_type,
								      mask))
		return -EINVAL;
	if ((mask & IB_QP_PORT) && attr->port_num != VCX_IB_PORT)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index)
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > 1u << vcx_cap(vdev, LOG_MAX_RA_REQ_QP))
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > 1u << vcx_cap(vdev, LOG_MAX_RA_RES_QP))
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) && attr->path_mtu > IB_MTU_4096)
		return -EINVAL;
	op = vcx_qp_transition_op(cur, new);
	if (!op)
		return -EOPNOTSUPP;

	if (op == VCX_CMD_OP_2RST_QP || op == VCX_CMD_OP_2ERR_QP) {
		err = vcx_qp_cmd_simple(vdev, op, qp->qpn);
		/*
		 * A dead function executes nothing: to ERR or RESET succeeds without it (as
		 * destroy does), so that drains and teardown go on. The device's last-WQE event
		 * for a QP on an SRQ will not come; raise it here.
		 */
		if (err && !vcx_in_error(vdev))
			return err;
		/* an XRC target gets it too: its receives are the SRQs' (device 0x13) */
		if (err && op == VCX_CMD_OP_2ERR_QP && qp->state != IB_QPS_ERR &&
		    (ibqp->srq || ibqp->qp_type == IB_QPT_XRC_TGT))
			sw_last_wqe = true;
		goto done;
	}

	in = kzalloc(VCX_MODIFY_QP_IN_LEN, GFP_KERNEL);
	if (!in)
		return -ENOMEM;
	err = vcx_qp_fill_qpc(ibd, qp, attr, mask, in + VCX_QP_IN_QPC_AT);
	if (err) {
		kfree(in);
		return err;
	}
	/*
	 * A QP counts in its bound counter (ib_core binds before RST2INIT in auto mode) or
	 * in the port's Q counter (vcx_counters.c), as mlx5_ib's do.
	 */
	if (op == VCX_CMD_OP_RST2INIT_QP)
		vcx_set(in + VCX_QP_IN_QPC_AT, VCX_QPC_COUNTER_SET_ID,
			vcx_qp_counter_set(ibd, ibqp));
	optpar = vcx_ib_mask_to_optpar(mask) & vcx_qp_opt_mask(cur, new, qp->st);
	vcx_set(in, VCX_CMD_IN_OPCODE, op);
	vcx_set(in, VCX_MODIFY_QP_IN_QPN, qp->qpn);
	vcx_set(in, VCX_QP_IN_OPT_PARAM_MASK, optpar);
	err = vcx_cmd_exec(vdev, in, VCX_MODIFY_QP_IN_LEN, out, sizeof(out));
	kfree(in);
	if (err)
		return err;
	if (op == VCX_CMD_OP_RST2INIT_QP)
		qp->counter_pending = false;	/* the binding is in the context now */

done:
	qp->state = new;
	if (mask & IB_QP_QKEY)
		qp->qkey = attr->qkey;
	if (mask & IB_QP_ACCESS_FLAGS)
		qp->access_flags = attr->qp_access_flags;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		qp->resp_depth = attr->max_dest_rd_atomic;
	if (new == IB_QPS_RESET && !udata)
		vcx_qp_reset_queues(qp);
	if (sw_last_wqe)
		vcx_qp_sw_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
	return 0;
}

int vcx_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_udata *udata)
{
	struct vcx_ib_dev *ibd = to_vibdev(ibqp->device);
	struct vcx_qp *qp = to_vqp(ibqp);
	int err;

	mutex_lock(&qp->mutex);
	err = vcx_modify_qp_locked(ibqp, attr, mask, udata);
	/* a counter bound outside RESET and RTS takes effect in RTS (mlx5_ib likewise) */
	if (!err && qp->state == IB_QPS_RTS && qp->counter_pending) {
		err = vcx_qp_rts2rts_counter(qp, vcx_qp_counter_set(ibd, ibqp));
		if (!err)
			qp->counter_pending = false;
		else
			ibdev_warn(ibqp->device, "QP 0x%x in RTS: counter set %u not applied (%d)\n",
				   qp->qpn, vcx_qp_counter_set(ibd, ibqp), err);
	}
	mutex_unlock(&qp->mutex);
	return err;
}

static enum ib_qp_state vcx_to_ib_qp_state(u8 state)
{
	switch (state) {
	case VCX_QP_STATE_RST:	return IB_QPS_RESET;
	case VCX_QP_STATE_INIT:	return IB_QPS_INIT;
	case VCX_QP_STATE_RTR:	return IB_QPS_RTR;
	case VCX_QP_STATE_RTS:	return IB_QPS_RTS;
	case VCX_QP_STATE_SQER:	return IB_QPS_SQE;
	case VCX_QP_STATE_SQD:	return IB_QPS_SQD;
	default:		return IB_QPS_ERR;
	}
}

int vcx_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		 struct ib_qp_init_attr *init_attr)
{
	struct vcx_qp *qp = to_vqp(ibqp);
	struct vcx_dev *vdev = qp->vdev;
	u8 in[VCX_OBJ_CMD_LEN] = {};
	u8 *out, *qpc, *path;
	int err;

	out = kzalloc(VCX_QUERY_QP_OUT_LEN, GFP_KERNEL);
	if (!out)
		return -ENOMEM;
	mutex_lock(&qp->mutex);	/* qp->state follows the device's */
	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_QUERY_QP);
	vcx_set(in, VCX_OBJ_NUMBER, qp->qpn);
	err = vcx_cmd_exec(vdev, in, sizeof(in), out, VCX_QUERY_QP_OUT_LEN);
	if (err)
		goto out;
	qpc = out + VCX_QUERY_QP_OUT_QPC_AT;
	path = qpc + VCX_QPC_PRI_PATH_AT;

	memset(attr, 0, sizeof(*attr));
	attr->qp_state = vcx_to_ib_qp_state(vcx_get(qpc, VCX_QPC_STATE));
	qp->state = attr->qp_state;
	attr->cur_qp_state = attr->qp_state;
	attr->path_mtu = vcx_get(qpc, VCX_QPC_MTU);
	attr->path_mig_state = IB_MIG_MIGRATED;
	attr->qkey = vcx_get(qpc, VCX_QPC_Q_KEY);
	attr->rq_psn = vcx_get(qpc, VCX_QPC_NEXT_RCV_PSN);
	attr->sq_psn = vcx_get(qpc, VCX_QPC_NEXT_SEND_PSN);
	attr->dest_qp_num = vcx_get(qpc, VCX_QPC_REMOTE_QPN);
	attr->qp_access_flags =
		(vcx_get(qpc, VCX_QPC_RRE) ? IB_ACCESS_REMOTE_READ : 0) |
		(vcx_get(qpc, VCX_QPC_RWE) ? IB_ACCESS_REMOTE_WRITE : 0) |
		(vcx_get(qpc, VCX_QPC_RAE) ? IB_ACCESS_REMOTE_ATOMIC : 0);
	attr->pkey_index = vcx_get(path, VCX_ADS_PKEY_INDEX);
	attr->port_num = VCX_IB_PORT;
	attr->timeout = vcx_get(path, VCX_ADS_ACK_TIMEOUT);
	attr->retry_cnt = vcx_get(qpc, VCX_QPC_RETRY_COUNT);
	attr->rnr_retry = vcx_get(qpc, VCX_QPC_RNR_RETRY);
	attr->min_rnr_timer = vcx_get(qpc, VCX_QPC_MIN_RNR_NAK);
	attr->max_rd_atomic = 1 << vcx_get(qpc, VCX_QPC_LOG_SRA_MAX);
	attr->max_dest_rd_atomic = 1 << vcx_get(qpc, VCX_QPC_LOG_RRA_MAX);
	attr->sq_draining = 0;
	if (qp->st != VCX_QP_ST_UD && vcx_get(path, VCX_ADS_GRH)) {
		union ib_gid dgid;

		memcpy(dgid.raw, vcx_ptr(path, VCX_ADS_RGID_RIP), 16);
		attr->ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
		rdma_ah_set_port_num(&attr->ah_attr, VCX_IB_PORT);
		rdma_ah_set_sl(&attr->ah_attr, vcx_get(path, VCX_ADS_SL));
		rdma_ah_set_grh(&attr->ah_attr, &dgid, vcx_get(path, VCX_ADS_FLOW_LABEL),
				vcx_get(path, VCX_ADS_SRC_ADDR_INDEX),
				vcx_get(path, VCX_ADS_HOP_LIMIT), vcx_get(path, VCX_ADS_TCLASS));
	}

	attr->cap.max_send_wr = qp->buf ? qp->sq.max_post : qp->sq.wqe_cnt;
	attr->cap.max_send_sge = qp->sq.max_gs;
	attr->cap.max_recv_wr = qp->rq.wqe_cnt;
	attr->cap.max_recv_sge = qp->rq.max_gs;
	attr->cap.max_inline_data = 0;
	init_attr->qp_type = ibqp->qp_type;
	init_attr->send_cq = ibqp->send_cq;
	init_attr->recv_cq = ibqp->recv_cq;
	init_attr->srq = ibqp->srq;
	init_attr->cap = attr->cap;
	init_attr->sq_sig_type = qp->sq_signal_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	init_attr->port_num = VCX_IB_PORT;
out:
	mutex_unlock(&qp->mutex);
	kfree(out);
	return err;
}

int vcx_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct vcx_qp *qp = to_vqp(ibqp);
	struct vcx_dev *vdev = qp->vdev;
	int err;

	/* RESET first: no CQE is produced after it; the kernel CQs drop what is left. */
	if (qp->state != IB_QPS_RESET) {
		err = vcx_qp_cmd_simple(vdev, VCX_CMD_OP_2RST_QP, qp->qpn);
		if (err && !vcx_in_error(vdev))
			dev_warn(vcx_dev(vdev), "QP 0x%x: 2RST before destroy failed (%d)\n",
				 qp->qpn, err);
		qp->state = IB_QPS_RESET;
	}
	if (!udata)
		vcx_qp_reset_queues(qp);
	xa_erase_irq(&vdev->qp_table, qp->qpn);
	err = vcx_qp_cmd_simple(vdev, VCX_CMD_OP_DESTROY_QP, qp->qpn);
	if (err && !vcx_in_error(vdev)) {
		/* Still alive on the device: keep it reachable for events. */
		WARN_ON(xa_insert_irq(&vdev->qp_table, qp->qpn, qp, GFP_KERNEL));
		return err;
	}
	if (udata) {
		vcx_qp_free_user(qp, udata);
	} else if (qp->buf) {
		vcx_cq_del_qp(qp);
		vcx_qp_free_kernel(vdev, qp);
	}
	vcx_gsi_release(to_vibdev(ibqp->device), qp);
	return 0;
}

/* ------------------------------------------------------------------------------------
 * Kernel data path
 */

/* Copy a WQE built in qp->scratch into the SQ ring at WQEBB index idx (it may wrap). */
static void *vcx_sq_copy_wqe(struct vcx_qp *qp, u32 idx, u32 nwqebb)
{
	u8 *sq = qp->buf + qp->sq.offset;
	u32 i, slot;

	for (i = 0; i < nwqebb; i++) {
		slot = (idx + i) & (qp->sq.wqe_cnt - 1);
		memcpy(sq + (size_t)slot * VCX_SEND_WQEBB, qp->scratch + i * VCX_SEND_WQEBB,
		       VCX_SEND_WQEBB);
	}
	return sq + (size_t)(idx & (qp->sq.wqe_cnt - 1)) * VCX_SEND_WQEBB;
}

static int vcx_wr_to_opcode(struct vcx_qp *qp, const struct ib_send_wr *wr, u8 *opcode,
			    u8 *wc_opcode, u32 *imm)
{
	struct vcx_ib_dev *ibd = to_vibdev(qp->ibqp.device);

	*imm = 0;
	/* The UMR QP runs the driver's own UMRs and nothing else. */
	if (qp->st == VCX_QP_ST_REG_UMR) {
		if (wr->opcode != VCX_IB_WR_UMR_PD_ACCESS)
			return -EINVAL;
		*opcode = VCX_OPCODE_UMR;
		*wc_opcode = IB_WC_REG_MR;
		*imm = to_vcx_umr_wr(wr)->mkey;
		return 0;
	}
	switch (wr->opcode) {
	case IB_WR_REG_MR:
		if (!ibd->frwr)
			return -EINVAL;
		*opcode = VCX_OPCODE_UMR;
		*wc_opcode = IB_WC_REG_MR;
		*imm = reg_wr(wr)->key;
		return 0;
	case IB_WR_LOCAL_INV:
		if (!ibd->frwr)
			return -EINVAL;
		*opcode = VCX_OPCODE_UMR;
		*wc_opcode = IB_WC_LOCAL_INV;
		*imm = wr->ex.invalidate_rkey;
		return 0;
	case IB_WR_SEND:
		*opcode = VCX_OPCODE_SEND;
		*wc_opcode = IB_WC_SEND;
		return 0;
	case IB_WR_SEND_WITH_IMM:
		*opcode = VCX_OPCODE_SEND_IMM;
		*wc_opcode = IB_WC_SEND;
		*imm = be32_to_cpu(wr->ex.imm_data);
		return 0;
	default:
		break;
	}
	if (vcx_qp_is_dgram(qp))
		return -EINVAL;
	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE:
		*opcode = VCX_OPCODE_RDMA_WRITE;
		*wc_opcode = IB_WC_RDMA_WRITE;
		return 0;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		*opcode = VCX_OPCODE_RDMA_WRITE_IMM;
		*wc_opcode = IB_WC_RDMA_WRITE;
		*imm = be32_to_cpu(wr->ex.imm_data);
		return 0;
	default:
		break;
	}
	if (qp->st != VCX_QP_ST_RC && qp->st != VCX_QP_ST_XRC)
		return -EINVAL;
	switch (wr->opcode) {
	case IB_WR_SEND_WITH_INV:
		*opcode = VCX_OPCODE_SEND_INVAL;
		*wc_opcode = IB_WC_SEND;
		*imm = wr->ex.invalidate_rkey;
		return 0;
	case IB_WR_RDMA_READ:
		*opcode = VCX_OPCODE_RDMA_READ;
		*wc_opcode = IB_WC_RDMA_READ;
		return 0;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		if (!(ibd->atomic_caps & VCX_ATOMIC_CAP_CMP_SWP))
			return -EINVAL;
		*opcode = VCX_OPCODE_ATOMIC_CS;
		*wc_opcode = IB_WC_COMP_SWAP;
		return 0;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		if (!(ibd->atomic_caps & VCX_ATOMIC_CAP_FETCH_ADD))
			return -EINVAL;
		*opcode = VCX_OPCODE_ATOMIC_FA;
		*wc_opcode = IB_WC_FETCH_ADD;
		return 0;
	default:
		return -EINVAL;
	}
}

/*
 * UMR WQE after the control segment: REG_MR loads the MR's MTT or KLM list (by a data
 * segment through the PD's local DMA lkey) and enables the key with the WR's access rights;
 * LOCAL_INV sets the key free; the UMR QP's PD/access change rewrites those fields of a
 * key in use (CHECK_NOT_FREE). The scratch buffer is zeroed by the caller.
 */
static int vcx_build_umr_wqe(struct vcx_qp *qp, const struct ib_send_wr *wr)
{
	u8 *seg = qp->scratch + VCX_WQE_CTRL_SIZE;
	u8 *mkc = seg + VCX_WQE_UMR_CTRL_SIZE;
	const struct ib_reg_wr *reg;
	struct vcx_mr *mr;
	u64 mask;
	u32 octo;

	if (wr->opcode == VCX_IB_WR_UMR_PD_ACCESS) {
		const struct vcx_umr_wr *u = to_vcx_umr_wr(wr);

		vcx_wqe_umr_ctrl_set(seg, VCX_UMR_FLAG_INLINE | VCX_UMR_FLAG_CHECK_NOT_FREE, 0,
				     VCX_UMR_MASK_PD | VCX_UMR_MASK_LR | VCX_UMR_MASK_LW |
				     VCX_UMR_MASK_RR | VCX_UMR_MASK_RW | VCX_UMR_MASK_A);
		vcx_mkc_set_access(mkc, u->access);
		vcx_set(mkc, VCX_MKC_PD, u->pdn);
		vcx_set(mkc, VCX_MKC_QPN, VCX_MKC_QPN_UNBOUND);
		vcx_set(mkc, VCX_MKC_MKEY_7_0, u->mkey & 0xff);
		return (VCX_WQE_CTRL_SIZE + VCX_WQE_UMR_CTRL_SIZE + VCX_WQE_MKEY_SEG_SIZE) /
		       VCX_WQE_DS;
	}
	if (wr->opcode == IB_WR_LOCAL_INV) {
		vcx_wqe_umr_ctrl_set(seg, VCX_UMR_FLAG_INLINE, 0, VCX_UMR_MASK_FREE);
		vcx_set(mkc, VCX_MKC_FREE, 1);
		return (VCX_WQE_CTRL_SIZE + VCX_WQE_UMR_CTRL_SIZE + VCX_WQE_MKEY_SEG_SIZE) /
		       VCX_WQE_DS;
	}
	reg = reg_wr(wr);
	mr = to_vmr(reg->mr);
	if (!mr->mtt || !mr->ndescs ||
	    reg->access & ~(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			    IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC))
		return -EINVAL;
	/* whole 64-byte units of the list, as mlx5 loads them */
	octo = ALIGN(mr->ndescs * vcx_mr_desc_size(mr), 64) / 16;
	mask = VCX_UMR_MASK_LEN | VCX_UMR_MASK_PAGE_SIZE | VCX_UMR_MASK_START_ADDR |
	       VCX_UMR_MASK_EN_RINVAL | VCX_UMR_MASK_KEY | VCX_UMR_MASK_LR |
	       VCX_UMR_MASK_LW | VCX_UMR_MASK_RR | VCX_UMR_MASK_RW | VCX_UMR_MASK_A |
	       VCX_UMR_MASK_FREE;
	vcx_wqe_umr_ctrl_set(seg, 0, octo, mask);
	vcx_mkc_set_access(mkc, reg->access);
	vcx_set(mkc, VCX_MKC_ACCESS_MODE_1_0,
		mr->klm ? VCX_MKC_ACCESS_MODE_KLM : VCX_MKC_ACCESS_MODE_MTT);
	vcx_set(mkc, VCX_MKC_QPN, VCX_MKC_QPN_UNBOUND);
	vcx_set(mkc, VCX_MKC_MKEY_7_0, reg->key & 0xff);
	vcx_set(mkc, VCX_MKC_EN_RINVAL, 1);
	vcx_set(mkc, VCX_MKC_PD, to_vpd(qp->ibqp.pd)->pdn);
	vcx_set64(mkc, VCX_MKC_START_ADDR, mr->ibmr.iova);
	vcx_set64(mkc, VCX_MKC_LEN, mr->ibmr.length);
	vcx_set(mkc, VCX_MKC_TRANSLATIONS_OCTWORD_SIZE, octo);
	/* set for KLM keys too, as mlx5_ib does; a KLM key does not use it */
	vcx_set(mkc, VCX_MKC_LOG_PAGE_SIZE, ilog2(mr->ibmr.page_size));
	vcx_wqe_data_seg_set(mkc + VCX_WQE_MKEY_SEG_SIZE, octo * 16,
			     qp->ibqp.pd->local_dma_lkey, mr->mtt_dma);
	return VCX_UMR_REG_WQE_SIZE / VCX_WQE_DS;
}

/* Build one WQE in qp->scratch; returns its size in 16-byte units or a negative errno. */
static int vcx_build_send_wqe(struct vcx_qp *qp, const struct ib_send_wr *wr, u8 opcode)
{
	u8 *seg = qp->scratch + VCX_WQE_CTRL_SIZE;
	int i;

	if (opcode == VCX_OPCODE_UMR)
		return vcx_build_umr_wqe(qp, wr);

	if (wr->send_flags & IB_SEND_INLINE)
		return -EINVAL;
	if (wr->num_sge > qp->sq.max_gs)
		return -EINVAL;
	/*
	 * XRC initiator: the XRC segment comes first, naming the SRQ at the target.
	 * ib_send_wr carries no such number: kernel initiators name SRQ 0 (mlx5_ib leaves
	 * the segment zero too), which the target answers as an invalid request.
	 */
	if (qp->st == VCX_QP_ST_XRC) {
		vcx_set(seg, VCX_XRC_SEG_SRQN, 0);
		seg += VCX_WQE_XRC_SEG_SIZE;
	}
	if (vcx_qp_is_dgram(qp)) {
		const struct ib_ud_wr *ud = ud_wr(wr);

		memcpy(seg, to_vah(ud->ah)->av, VCX_WQE_AV_SIZE);
		vcx_wqe_av_set_dest(seg, ud->remote_qkey & 0x80000000 ? qp->qkey :
				    ud->remote_qkey, ud->remote_qpn);
		seg += VCX_WQE_AV_SIZE;
	} else if (opcode == VCX_OPCODE_RDMA_WRITE || opcode == VCX_OPCODE_RDMA_WRITE_IMM ||
		   opcode == VCX_OPCODE_RDMA_READ) {
		vcx_wqe_raddr_seg_set(seg, rdma_wr(wr)->remote_addr, rdma_wr(wr)->rkey);
		seg += VCX_WQE_RADDR_SEG_SIZE;
	} else if (opcode == VCX_OPCODE_ATOMIC_CS || opcode == VCX_OPCODE_ATOMIC_FA) {
		const struct ib_atomic_wr *at = atomic_wr(wr);

		vcx_wqe_raddr_seg_set(seg, at->remote_addr, at->rkey);
		seg += VCX_WQE_RADDR_SEG_SIZE;
		if (opcode == VCX_OPCODE_ATOMIC_CS)
			vcx_wqe_atomic_seg_set(seg, at->swap, at->compare_add);
		else
			vcx_wqe_atomic_seg_set(seg, at->compare_add, 0);
		seg += VCX_WQE_ATOMIC_SEG_SIZE;
	}
	/* Zero-length entries are left out, as mlx5 does. */
	for (i = 0; i < wr->num_sge; i++) {
		if (!wr->sg_list[i].length)
			continue;
		vcx_wqe_data_seg_set(seg, wr->sg_list[i].length, wr->sg_list[i].lkey,
				     wr->sg_list[i].addr);
		seg += VCX_WQE_DATA_SEG_SIZE;
	}
	return (seg - qp->scratch) / VCX_WQE_DS;
}

/*
 * Post send WRs. A drain WR (drain: one WR, from vcx_drain_sq) becomes a NOP WQE of the
 * control segment alone, valid on every QP type; it is the only WR accepted in the error
 * state.
 */
static int vcx_post_send_common(struct vcx_qp *qp, const struct ib_send_wr *wr,
				const struct ib_send_wr **bad_wr, bool drain)
{
	struct vcx_wq *sq = &qp->sq;
	void *ctrl = NULL;
	unsigned long flags;
	u8 opcode, wc_opcode, fm_ce_se;
	u32 imm, nwqebb, idx;
	int ds, err = 0;

	spin_lock_irqsave(&sq->lock, flags);
	if (unlikely(vcx_in_error(qp->vdev)) && !drain) {
		err = -EIO;
		goto out;
	}
	for (; wr; wr = wr->next) {
		memset(qp->scratch, 0, to_vibdev(qp->ibqp.device)->max_sq_desc);
		if (drain) {
			opcode = VCX_OPCODE_NOP;
			wc_opcode = IB_WC_SEND;
			imm = 0;
			ds = VCX_WQE_CTRL_SIZE / VCX_WQE_DS;
		} else {
			err = vcx_wr_to_opcode(qp, wr, &opcode, &wc_opcode, &imm);
			if (err)
				break;
			ds = vcx_build_send_wqe(qp, wr, opcode);
		}
		if (ds < 0) {
			err = ds;
			break;
		}
		nwqebb = DIV_ROUND_UP(ds * VCX_WQE_DS, VCX_SEND_WQEBB);
		if (sq->head - sq->tail + nwqebb > sq->wqe_cnt) {
			err = -ENOMEM;
			break;
		}
		fm_ce_se = (wr->send_flags & IB_SEND_SIGNALED || qp->sq_signal_all) ?
			   VCX_WQE_CE_CQE : VCX_WQE_CE_ERROR_ONLY;
		if (wr->send_flags & IB_SEND_SOLICITED)
			fm_ce_se |= VCX_WQE_SE_SOLICITED;
		if (wr->send_flags & IB_SEND_FENCE)
			fm_ce_se |= VCX_WQE_FM_SMALL_AND_FENCE;
		vcx_wqe_ctrl_set(qp->scratch, opcode, 0, sq->head & VCX_WQE_INDEX_MASK, qp->qpn,
				 ds, fm_ce_se, imm);
		ctrl = vcx_sq_copy_wqe(qp, sq->head, nwqebb);
		idx = sq->head & (sq->wqe_cnt - 1);
		sq->wrid[idx] = wr->wr_id;
		sq->opcode[idx] = wc_opcode;
		sq->next_head[idx] = sq->head + nwqebb;
		sq->head += nwqebb;
	}
out:
	if (err)
		*bad_wr = wr;
	if (ctrl) {
		/* WQEs before the record, the record before the doorbell. */
		wmb();
		WRITE_ONCE(qp->db.db[VCX_QP_DBR_SEND / 4],
			   cpu_to_be32(sq->head & VCX_WQE_INDEX_MASK));
		wmb();
		__raw_writeq(*(u64 *)ctrl, qp->bf + qp->bf_offset);
		qp->bf_offset ^= VCX_UAR_BF_BUF_SIZE;
	}
	spin_unlock_irqrestore(&sq->lock, flags);
	return err;
}

int vcx_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		  const struct ib_send_wr **bad_wr)
{
	return vcx_post_send_common(to_vqp(ibqp), wr, bad_wr, false);
}

/* Post receive WRs; in the error state only a drain WR (from vcx_drain_rq) is taken. */
static int vcx_post_recv_common(struct vcx_qp *qp, const struct ib_recv_wr *wr,
				const struct ib_recv_wr **bad_wr, bool drain)
{
	struct vcx_wq *rq = &qp->rq;
	unsigned long flags;
	int err = 0, nreq = 0, i;
	u8 *seg;

	/* SRQ QPs and XRC QPs have no receive queue of their own */
	if (qp->ibqp.srq || qp->st == VCX_QP_ST_XRC) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&rq->lock, flags);
	if (unlikely(vcx_in_error(qp->vdev)) && !drain) {
		err = -EIO;
		goto out;
	}
	for (; wr; nreq++, wr = wr->next) {
		if (rq->head - rq->tail >= rq->wqe_cnt) {
			err = -ENOMEM;
			break;
		}
		if (wr->num_sge > rq->max_gs) {
			err = -EINVAL;
			break;
		}
		seg = qp->buf + ((size_t)(rq->head & (rq->wqe_cnt - 1)) << rq->wqe_shift);
		for (i = 0; i < wr->num_sge; i++, seg += VCX_WQE_DATA_SEG_SIZE)
			vcx_wqe_data_seg_set(seg, wr->sg_list[i].length, wr->sg_list[i].lkey,
					     wr->sg_list[i].addr);
		if (i < rq->max_gs)
			vcx_wqe_data_seg_set_end(seg);
		rq->wrid[rq->head & (rq->wqe_cnt - 1)] = wr->wr_id;
		rq->head++;
	}
out:
	if (err)
		*bad_wr = wr;
	if (nreq) {
		/* WQEs before the record that publishes them. */
		wmb();
		WRITE_ONCE(qp->db.db[VCX_QP_DBR_RECV / 4],
			   cpu_to_be32(rq->head & VCX_WQE_INDEX_MASK));
	}
	spin_unlock_irqrestore(&rq->lock, flags);
	return err;
}

int vcx_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		  const struct ib_recv_wr **bad_wr)
{
	return vcx_post_recv_common(to_vqp(ibqp), wr, bad_wr, false);
}

/* ------------------------------------------------------------------------------------
 * Drains (mlx5_ib_drain_sq / mlx5_ib_drain_rq)
 */
struct vcx_drain {
	struct ib_cqe cqe;
	struct completion done;
};

static void vcx_drain_done(struct ib_cq *cq, struct ib_wc *wc)
{
	complete(&container_of(wc->wr_cqe, struct vcx_drain, cqe)->done);
}

#define VCX_DRAIN_WARN_S	30

/*
 * Wait for the drain WR's completion on ibcq. A CQ polled by its owner (IB_POLL_DIRECT)
 * is polled here; any other is polled by ib_core after a completion event, which a dead
 * device never raises: then its handler is run from here (a handler run twice only polls
 * twice). Waits in slices, so that no hung-task report comes, as long as completions take.
 */
static void vcx_drain_wait(struct vcx_qp *qp, struct ib_cq *ibcq, struct vcx_drain *d,
			   const char *which)
{
	unsigned long start = jiffies;
	bool warned = false;

	for (;;) {
		if (ibcq->poll_ctx == IB_POLL_DIRECT) {
			if (wait_for_completion_timeout(&d->done, HZ / 10))
				return;
			ib_process_cq_direct(ibcq, -1);
		} else {
			if (vcx_in_error(qp->vdev))
				vcx_cq_run_handler(to_vcq(ibcq));
			if (wait_for_completion_timeout(&d->done, HZ))
				return;
		}
		if (!warned && time_after(jiffies, start + VCX_DRAIN_WARN_S * HZ)) {
			ibdev_warn(qp->ibqp.device, "QP 0x%x: %s drain still waiting after %d s\n",
				   qp->qpn, which, VCX_DRAIN_WARN_S);
			warned = true;
		}
	}
}

/* To ERR, as the first step of a drain; in the error state this cannot fail. */
static int vcx_drain_to_err(struct vcx_qp *qp, const char *which)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	int err;

	err = ib_modify_qp(&qp->ibqp, &attr, IB_QP_STATE);
	if (err)
		ibdev_warn(qp->ibqp.device, "QP 0x%x: %s drain: moving to ERR failed (%d)\n",
			   qp->qpn, which, err);
	return err;
}

void vcx_drain_sq(struct ib_qp *ibqp)
{
	struct vcx_qp *qp = to_vqp(ibqp);
	struct vcx_drain d = { .cqe.done = vcx_drain_done };
	struct ib_send_wr wr = {
		.wr_cqe = &d.cqe,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	const struct ib_send_wr *bad;
	int err;

	if (!qp->sq.wqe_cnt)
		return;		/* an XRC target: no send queue */
	if (vcx_drain_to_err(qp, "send queue"))
		return;
	init_completion(&d.done);
	err = vcx_post_send_common(qp, &wr, &bad, true);
	if (err) {
		ibdev_warn(ibqp->device, "QP 0x%x: posting the send queue drain WR failed (%d)\n",
			   qp->qpn, err);
		return;
	}
	vcx_drain_wait(qp, ibqp->send_cq, &d, "send queue");
}

void vcx_drain_rq(struct ib_qp *ibqp)
{
	struct vcx_qp *qp = to_vqp(ibqp);
	struct vcx_drain d = { .cqe.done = vcx_drain_done };
	struct ib_recv_wr wr = { .wr_cqe = &d.cqe };
	const struct ib_recv_wr *bad;
	int err;

	/* no receive queue: the SRQs an XRC QP's requests name are not its own */
	if (qp->st == VCX_QP_ST_XRC)
		return;
	if (ibqp->srq) {
		/* the SRQ's WQEs are not the QP's: ib_drain_qp waits for the last-WQE event */
		ibdev_warn(ibqp->device, "QP 0x%x: receive queue drain on a QP with an SRQ\n",
			   qp->qpn);
		return;
	}
	if (vcx_drain_to_err(qp, "receive queue"))
		return;
	init_completion(&d.done);
	err = vcx_post_recv_common(qp, &wr, &bad, true);
	if (err) {
		ibdev_warn(ibqp->device, "QP 0x%x: posting the receive queue drain WR failed (%d)\n",
			   qp->qpn, err);
		return;
	}
	vcx_drain_wait(qp, ibqp->recv_cq, &d, "receive queue");
}

/* ------------------------------------------------------------------------------------
 * Asynchronous events (control EQ, hard IRQ)
 */
void vcx_qp_async_event(struct vcx_dev *vdev, u32 qpn, u8 type)
{
	struct ib_event ev = {};
	struct vcx_qp *qp;

	switch (type) {
	case VCX_EVENT_TYPE_PATH_MIG:		ev.event = IB_EVENT_PATH_MIG; break;
	case VCX_EVENT_TYPE_COMM_EST:		ev.event = IB_EVENT_COMM_EST; break;
	case VCX_EVENT_TYPE_SQ_DRAINED:		ev.event = IB_EVENT_SQ_DRAINED; break;
	case VCX_EVENT_TYPE_SRQ_LAST_WQE:	ev.event = IB_EVENT_QP_LAST_WQE_REACHED; break;
	case VCX_EVENT_TYPE_WQ_CATAS_ERROR:	ev.event = IB_EVENT_QP_FATAL; break;
	case VCX_EVENT_TYPE_PATH_MIG_FAILED:	ev.event = IB_EVENT_PATH_MIG_ERR; break;
	case VCX_EVENT_TYPE_WQ_INVAL_REQ_ERROR:	ev.event = IB_EVENT_QP_REQ_ERR; break;
	case VCX_EVENT_TYPE_WQ_ACCESS_ERROR:	ev.event = IB_EVENT_QP_ACCESS_ERR; break;
	default:
		return;
	}
	xa_lock(&vdev->qp_table);
	qp = xa_load(&vdev->qp_table, qpn);
	if (qp && qp->ibqp.event_handler) {
		ev.device = qp->ibqp.device;
		ev.element.qp = &qp->ibqp;
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
	}
	xa_unlock(&vdev->qp_table);
	if (!qp)
		dev_warn_ratelimited(vcx_dev(vdev), "QP event 0x%x for unknown QP 0x%x\n", type,
				     qpn);
}
