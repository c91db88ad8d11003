// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcx: shared receive queues.
 *
 * As mlx5_ib does, a basic SRQ is an RMP (CREATE_RMP / MODIFY_RMP / QUERY_RMP /
 * DESTROY_RMP) when the function runs ISSI 1, and a PRM SRQ (CREATE_SRQ / ARM_RQ /
 * QUERY_SRQ / DESTROY_SRQ) under ISSI 0. Either way the queue is a linked list of
 * 2^n WQEs of 2^s bytes (a 16-byte next segment, then data segments) with a 4-byte
 * doorbell record holding the running count of posted WQEs; there is no UAR doorbell.
 *
 * The limit (srq_limit, the PRM "lwm") arms an SRQ_RQ_LIMIT event, delivered as
 * IB_EVENT_SRQ_LIMIT_REACHED; the device disarms it when it fires. XRC SRQs (IB_SRQT_XRC,
 * when the device offers XRC) are the same queue with a domain and a CQ of their own:
 * CREATE_XRC_SRQ and its family under ISSI 1 (vcx_xrc.c), a PRM SRQ whose srqc names the
 * domain and the CQ under ISSI 0. Tag-matching SRQs are not supported.
 *
 * Kernel SRQs keep the list as mlx5 does: head is the next free WQE, tail the last one;
 * a completion (or a CQ clean) links the consumed WQE back after the tail.
 */
#include <linux/dma-mapping.h>

#include "vcx_verbs.h"

#define CREATE_TRACE_POINTS
#include "vcx_trace.h"

static u8 *vcx_srq_get_wqe(struct vcx_srq *srq, u32 n)
{
	return srq->buf + ((size_t)n << srq->wqe_shift);
}

static bool vcx_srq_use_rmp(struct vcx_dev *vdev)
{
	return vdev->issi >= 1;
}

static int vcx_srq_cmd_create(struct vcx_dev *vdev, struct vcx_srq *srq, u32 pdn,
			      struct ib_umem *umem, size_t npages)
{
	u8 out[VCX_OBJ_CMD_LEN] = {};
	size_t inlen;
	u8 *in, *ctx, *pas;
	u32 log_size = ilog2(srq->max);
	int err;

	if (srq->is_xrc_srq)
		return vcx_xrc_srq_cmd_create(vdev, srq, pdn, umem, npages);
	inlen = (srq->is_rmp ? VCX_CREATE_RMP_IN_LEN : VCX_CREATE_SRQ_IN_LEN) +
		npages * VCX_PAS_SIZE;
	in = kvzalloc(inlen, GFP_KERNEL);
	if (!in)
		return -ENOMEM;
	if (srq->is_rmp) {
		u8 *wq;

		vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_CREATE_RMP);
		ctx = in + VCX_CREATE_RMP_IN_RMPC_AT;
		vcx_set(ctx, VCX_RMPC_STATE, VCX_RMPC_STATE_RDY);
		wq = ctx + VCX_RMPC_WQ_AT;
		vcx_set(wq, VCX_WQ_WQ_TYPE, VCX_WQ_TYPE_LINKED_LIST);
		vcx_set(wq, VCX_WQ_LOG_WQ_PG_SZ, 0);	/* 4 KiB pages */
		vcx_set(wq, VCX_WQ_LOG_WQ_STRIDE, srq->wqe_shift);
		vcx_set(wq, VCX_WQ_LOG_WQ_SZ, log_size);
		vcx_set(wq, VCX_WQ_PAGE_OFFSET, 0);
		vcx_set(wq, VCX_WQ_LWM, srq->limit);
		vcx_set(wq, VCX_WQ_PD, pdn);
		vcx_set64(wq, VCX_WQ_DBR_ADDR, srq->db.dma);
		pas = wq + VCX_WQ_PAS_AT;
	} else {
		vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_CREATE_SRQ);
		ctx = in + VCX_CREATE_SRQ_IN_SRQC_AT;
		vcx_set(ctx, VCX_SRQC_LOG_SRQ_SIZE, log_size);
		vcx_set(ctx, VCX_SRQC_LOG_RQ_STRIDE, srq->wqe_shift - 4);
		vcx_set(ctx, VCX_SRQC_LOG_PAGE_SIZE, 0);
		vcx_set(ctx, VCX_SRQC_PAGE_OFFSET, 0);
		vcx_set(ctx, VCX_SRQC_LWM, srq->limit);
		vcx_set(ctx, VCX_SRQC_PD, pdn);
		vcx_set64(ctx, VCX_SRQC_DBR_ADDR, srq->db.dma);
		/* ISSI 0 XRC SRQ: the domain it serves and the CQ of its receives */
		vcx_set(ctx, VCX_SRQC_XRCD, srq->xrcdn);
		vcx_set(ctx, VCX_SRQC_CQN, srq->cqn);
		pas = in + VCX_CREATE_SRQ_IN_PAS_AT;
	}
	vcx_ib_fill_pas(pas, umem, srq->buf_dma, npages);
	err = vcx_cmd_exec(vdev, in, inlen, out, sizeof(out));
	kvfree(in);
	if (!err)
		srq->srqn = vcx_get(out, VCX_OBJ_NUMBER);
	return err;
}

static int vcx_srq_cmd_destroy(struct vcx_dev *vdev, struct vcx_srq *srq)
{
	u8 in[VCX_OBJ_CMD_LEN] = {};
	u8 out[VCX_OBJ_CMD_LEN] = {};

	if (srq->is_xrc_srq)
		return vcx_xrc_srq_cmd_destroy(vdev, srq);
	vcx_set(in, VCX_CMD_IN_OPCODE, srq->is_rmp ? VCX_CMD_OP_DESTROY_RMP :
						     VCX_CMD_OP_DESTROY_SRQ);
	vcx_set(in, VCX_OBJ_NUMBER, srq->srqn);
	return vcx_cmd_exec(vdev, in, sizeof(in), out, sizeof(out));
}

/* Arm the limit: MODIFY_RMP of lwm (ISSI 1), ARM_XRC_SRQ, or ARM_RQ (ISSI 0). */
static int vcx_srq_cmd_arm(struct vcx_dev *vdev, struct vcx_srq *srq, u32 lwm)
{
	u8 out[VCX_CMD_HDR_SIZE] = {};
	int err;

	if (srq->is_xrc_srq)
		return vcx_xrc_srq_cmd_arm(vdev, srq, lwm);
	if (srq->is_rmp) {
		u8 *in, *ctx;

		in = kzalloc(VCX_MODIFY_RMP_IN_LEN, GFP_KERNEL);
		if (!in)
			return -ENOMEM;
		vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_MODIFY_RMP);
		vcx_set(in, VCX_MODIFY_RMP_IN_RMP_STATE, VCX_RMPC_STATE_RDY);
		vcx_set(in, VCX_MODIFY_RMP_IN_RMPN, srq->srqn);
		vcx_set(in, VCX_MODIFY_RMP_IN_BITMASK_LWM, 1);
		ctx = in + VCX_MODIFY_RMP_IN_RMPC_AT;
		vcx_set(ctx, VCX_RMPC_STATE, VCX_RMPC_STATE_RDY);
		vcx_set(ctx + VCX_RMPC_WQ_AT, VCX_WQ_LWM, lwm);
		err = vcx_cmd_exec(vdev, in, VCX_MODIFY_RMP_IN_LEN, out, sizeof(out));
		kfree(in);
	} else {
		u8 in[VCX_OBJ_CMD_LEN] = {};

		vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_ARM_RQ);
		vcx_set(in, VCX_CMD_IN_OP_MOD, VCX_ARM_RQ_OP_MOD_SRQ);
		vcx_set(in, VCX_ARM_RQ_IN_SRQ_NUMBER, srq->srqn);
		vcx_set(in, VCX_ARM_RQ_IN_LWM, lwm);
		err = vcx_cmd_exec(vdev, in, sizeof(in), out, sizeof(out));
	}
	return err;
}

/* QUERY_RMP / QUERY_SRQ: the armed limit and whether the queue is in error. */
static int vcx_srq_cmd_query(struct vcx_dev *vdev, struct vcx_srq *srq, u32 *lwm,
			     bool *error)
{
	u8 in[VCX_OBJ_CMD_LEN] = {};
	size_t outlen = srq->is_rmp ? VCX_QUERY_RMP_OUT_LEN : VCX_QUERY_SRQ_OUT_LEN;
	u8 *out, *ctx;
	int err;

	if (srq->is_xrc_srq)
		return vcx_xrc_srq_cmd_query(vdev, srq, lwm, error);
	out = kzalloc(outlen, GFP_KERNEL);
	if (!out)
		return -ENOMEM;
	vcx_set(in, VCX_CMD_IN_OPCODE, srq->is_rmp ? VCX_CMD_OP_QUERY_RMP :
						     VCX_CMD_OP_QUERY_SRQ);
	vcx_set(in, VCX_OBJ_NUMBER, srq->srqn);
	err = vcx_cmd_exec(vdev, in, sizeof(in), out, outlen);
	if (!err) {
		if (srq->is_rmp) {
			ctx = out + VCX_QUERY_RMP_OUT_RMPC_AT;
			*lwm = vcx_get(ctx + VCX_RMPC_WQ_AT, VCX_WQ_LWM);
			*error = vcx_get(ctx, VCX_RMPC_STATE) != VCX_RMPC_STATE_RDY;
		} else {
			ctx = out + VCX_QUERY_SRQ_OUT_SRQC_AT;
			*lwm = vcx_get(ctx, VCX_SRQC_LWM);
			*error = vcx_get(ctx, VCX_SRQC_STATE) != VCX_SRQC_STATE_GOOD;
		}
	}
	kfree(out);
	return err;
}

static int vcx_srq_create_user(struct vcx_srq *srq, struct ib_srq_init_attr *init_attr,
			       struct ib_udata *udata, size_t *npages)
{
	struct vcx_ucontext *uctx = rdma_udata_to_drv_context(udata, struct vcx_ucontext,
							      ibuc);
	struct vcx_ib_dev *ibd = to_vibdev(srq->ibsrq.device);
	struct vcx_create_srq_req req = {};
	int err;

	if (udata->inlen < offsetofend(struct vcx_create_srq_req, flags))
		return -EINVAL;
	err = ib_copy_from_udata(&req, udata, min(udata->inlen, sizeof(req)));
	if (err)
		return err;
	if (req.flags || req.reserved || !req.wqe_count || !is_power_of_2(req.wqe_count) ||
	    req.wqe_shift < 5 || (1u << req.wqe_shift) > max(ibd->max_rq_desc, 32u) ||
	    !PAGE_ALIGNED(req.buf_addr))
		return -EINVAL;
	if (ilog2(req.wqe_count) > vcx_cap(srq->vdev, LOG_MAX_SRQ_SZ) ||
	    init_attr->attr.max_wr >= req.wqe_count ||
	    init_attr->attr.max_sge > ((1u << req.wqe_shift) - VCX_SRQ_NEXT_SEG_SIZE) /
				      VCX_WQE_DATA_SEG_SIZE)
		return -EINVAL;
	srq->max = req.wqe_count;
	/* The library's chain holds roundup_pow_of_two(max_wr + 1) - 1 posted WQEs. */
	srq->max_wr = roundup_pow_of_two(init_attr->attr.max_wr + 1) - 1;
	srq->wqe_shift = req.wqe_shift;
	srq->max_gs = ((1u << req.wqe_shift) - VCX_SRQ_NEXT_SEG_SIZE) / VCX_WQE_DATA_SEG_SIZE;
	err = vcx_ib_user_queue_map(uctx, req.buf_addr, (size_t)srq->max << srq->wqe_shift, 0,
				    req.db_addr, &srq->umem, &srq->db);
	if (err)
		return err;
	*npages = ib_umem_num_dma_blocks(srq->umem, VCX_PAGE_SIZE);
	return 0;
}

static void vcx_srq_free_user(struct vcx_srq *srq, struct ib_udata *udata)
{
	struct vcx_ucontext *uctx = rdma_udata_to_drv_context(udata, struct vcx_ucontext,
							      ibuc);

	vcx_ib_user_queue_unmap(uctx, &srq->umem, &srq->db);
}

static int vcx_srq_create_kernel(struct vcx_srq *srq, struct ib_srq_init_attr *init_attr,
				 size_t *npages)
{
	struct vcx_dev *vdev = srq->vdev;
	u32 desc = VCX_SRQ_NEXT_SEG_SIZE +
		   max_t(u32, init_attr->attr.max_sge, 1) * VCX_WQE_DATA_SEG_SIZE;
	u32 i;
	int err;

	srq->max = roundup_pow_of_two(init_attr->attr.max_wr + 1);
	srq->max_wr = srq->max - 1;
	if (ilog2(srq->max) > vcx_cap(vdev, LOG_MAX_SRQ_SZ))
		return -EINVAL;
	srq->wqe_shift = ilog2(roundup_pow_of_two(max_t(u32, desc, 32)));
	srq->max_gs = ((1u << srq->wqe_shift) - VCX_SRQ_NEXT_SEG_SIZE) / VCX_WQE_DATA_SEG_SIZE;
	srq->buf_size = max_t(size_t, (size_t)srq->max << srq->wqe_shift, VCX_PAGE_SIZE);
	srq->buf = dma_alloc_coherent(vcx_dev(vdev), srq->buf_size, &srq->buf_dma, GFP_KERNEL);
	if (!srq->buf)
		return -ENOMEM;
	srq->wrid = kvcalloc(srq->max, sizeof(*srq->wrid), GFP_KERNEL);
	if (!srq->wrid) {
		err = -ENOMEM;
		goto err_buf;
	}
	err = vcx_ib_db_alloc(vdev, &srq->db);
	if (err)
		goto err_wrid;
	*srq->db.db = 0;
	/* A circular list through every WQE; the last one is the tail. */
	for (i = 0; i < srq->max; i++)
		vcx_srq_next_set(vcx_srq_get_wqe(srq, i), (i + 1) & (srq->max - 1));
	srq->head = 0;
	srq->tail = srq->max - 1;
	srq->wqe_ctr = 0;
	*npages = DIV_ROUND_UP(srq->buf_size, VCX_PAGE_SIZE);
	return 0;

err_wrid:
	kvfree(srq->wrid);
	srq->wrid = NULL;
err_buf:
	dma_free_coherent(vcx_dev(vdev), srq->buf_size, srq->buf, srq->buf_dma);
	srq->buf = NULL;
	return err;
}

static void vcx_srq_free_kernel(struct vcx_srq *srq)
{
	vcx_ib_db_free(srq->vdev, &srq->db);
	kvfree(srq->wrid);
	srq->wrid = NULL;
	if (srq->buf)
		dma_free_coherent(vcx_dev(srq->vdev), srq->buf_size, srq->buf, srq->buf_dma);
	srq->buf = NULL;
}

int vcx_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init_attr,
		   struct ib_udata *udata)
{
	struct vcx_ib_dev *ibd = to_vibdev(ibsrq->device);
	struct vcx_dev *vdev = ibd->vdev;
	struct vcx_srq *srq = to_vsrq(ibsrq);
	struct ib_srq_attr *attr = &init_attr->attr;
	u32 max_srq_wr = (1u << vcx_cap(vdev, LOG_MAX_SRQ_SZ)) - 1;
	size_t npages = 0;
	int err;

	/* Everything is checked before a command is sent. */
	if (init_attr->srq_type == IB_SRQT_XRC) {
		if (!ibd->xrc)
			return -EOPNOTSUPP;
		if (!init_attr->ext.cq || !init_attr->ext.xrc.xrcd)
			return -EINVAL;
	} else if (init_attr->srq_type != IB_SRQT_BASIC) {
		return -EOPNOTSUPP;
	}
	/* XRC SRQs have the limits of basic ones (the device reports no others). */
	if (!attr->max_wr || attr->max_wr > max_srq_wr || attr->max_sge > ibd->max_srq_sge ||
	    attr->srq_limit >= attr->max_wr)
		return -EINVAL;

	srq->vdev = vdev;
	if (init_attr->srq_type == IB_SRQT_XRC) {
		srq->xrcdn = to_vxrcd(init_attr->ext.xrc.xrcd)->xrcdn;
		srq->cqn = to_vcq(init_attr->ext.cq)->cqn;
		/* mlx5_ib: CREATE_XRC_SRQ under ISSI 1, the PRM SRQ under ISSI 0 */
		srq->is_xrc_srq = vcx_srq_use_rmp(vdev);
	} else {
		srq->is_rmp = vcx_srq_use_rmp(vdev);
	}
	srq->limit = attr->srq_limit;
	spin_lock_init(&srq->lock);
	if (udata)
		err = vcx_srq_create_user(srq, init_attr, udata, &npages);
	else
		err = vcx_srq_create_kernel(srq, init_attr, &npages);
	if (err)
		return err;

	err = vcx_srq_cmd_create(vdev, srq, to_vpd(ibsrq->pd)->pdn, srq->umem, npages);
	if (err)
		goto err_buf;
	err = xa_insert_irq(&vdev->srq_table, srq->srqn, srq, GFP_KERNEL);
	if (err)
		goto err_cmd;
	trace_vcx_srq_create(dev_name(&ibsrq->device->dev), srq->srqn, srq->is_rmp, !!udata,
			     srq->max, 1u << srq->wqe_shift, srq->limit);
	if (srq->limit)
		trace_vcx_srq_arm(srq->srqn, srq->limit);

	if (udata) {
		struct vcx_create_srq_resp resp = { .srqn = srq->srqn };

		err = ib_copy_to_udata(udata, &resp, min(udata->outlen, sizeof(resp)));
		if (err)
			goto err_table;
	} else {
		attr->max_wr = srq->max - 1;
		attr->max_sge = srq->max_gs;
	}
	return 0;

err_table:
	xa_erase_irq(&vdev->srq_table, srq->srqn);
err_cmd:
	vcx_srq_cmd_destroy(vdev, srq);
err_buf:
	if (udata)
		vcx_srq_free_user(srq, udata);
	else
		vcx_srq_free_kernel(srq);
	return err;
}

int vcx_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		   enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct vcx_srq *srq = to_vsrq(ibsrq);
	int err;

	/* No resizing (mlx5 neither). */
	if (mask & IB_SRQ_MAX_WR)
		return -EINVAL;
	if (!(mask & IB_SRQ_LIMIT))
		return 0;
	if (attr->srq_limit >= srq->max_wr)
		return -EINVAL;
	err = vcx_srq_cmd_arm(srq->vdev, srq, attr->srq_limit);
	if (err)
		return err;
	srq->limit = attr->srq_limit;
	trace_vcx_srq_arm(srq->srqn, attr->srq_limit);
	return 0;
}

int vcx_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct vcx_srq *srq = to_vsrq(ibsrq);
	bool error = false;
	u32 lwm = 0;
	int err;

	err = vcx_srq_cmd_query(srq->vdev, srq, &lwm, &error);
	if (err)
		return err;
	if (error)
		return -EINVAL;
	attr->srq_limit = lwm;
	attr->max_wr = srq->max_wr;
	attr->max_sge = srq->max_gs;
	return 0;
}

int vcx_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct vcx_srq *srq = to_vsrq(ibsrq);
	struct vcx_dev *vdev = srq->vdev;
	int err;

	xa_erase_irq(&vdev->srq_table, srq->srqn);
	err = vcx_srq_cmd_destroy(vdev, srq);
	trace_vcx_srq_destroy(srq->srqn, err);
	if (err && !vcx_in_error(vdev)) {
		/* Still alive on the device: keep it reachable for events. */
		WARN_ON(xa_insert_irq(&vdev->srq_table, srq->srqn, srq, GFP_KERNEL));
		return err;
	}
	if (udata)
		vcx_srq_free_user(srq, udata);
	else
		vcx_srq_free_kernel(srq);
	return 0;
}

/* A consumed WQE goes back to the end of the list (mlx5_ib_free_srq_wqe()). */
void vcx_srq_free_wqe(struct vcx_srq *srq, u16 wqe_index)
{
	unsigned long flags;

	spin_lock_irqsave(&srq->lock, flags);
	vcx_srq_next_set(vcx_srq_get_wqe(srq, srq->tail), wqe_index);
	srq->tail = wqe_index & (srq->max - 1);
	spin_unlock_irqrestore(&srq->lock, flags);
}

int vcx_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr)
{
	struct vcx_srq *srq = to_vsrq(ibsrq);
	unsigned long flags;
	u8 *wqe, *seg;
	int err = 0, nreq, i;

	spin_lock_irqsave(&srq->lock, flags);
	/* A dead function takes no new work (vcx_qp.c: only drains post there). */
	if (unlikely(vcx_in_error(srq->vdev))) {
		*bad_wr = wr;
		spin_unlock_irqrestore(&srq->lock, flags);
		return -EIO;
	}
	for (nreq = 0; wr; nreq++, wr = wr->next) {
		if (unlikely(wr->num_sge > srq->max_gs)) {
			err = -EINVAL;
			*bad_wr = wr;
			break;
		}
		if (unlikely(srq->head == srq->tail)) {
			err = -ENOMEM;
			*bad_wr = wr;
			break;
		}
		srq->wrid[srq->head] = wr->wr_id;
		wqe = vcx_srq_get_wqe(srq, srq->head);
		srq->head = vcx_srq_next_get(wqe);
		seg = wqe + VCX_SRQ_NEXT_SEG_SIZE;
		for (i = 0; i < wr->num_sge; i++, seg += VCX_WQE_DATA_SEG_SIZE)
			vcx_wqe_data_seg_set(seg, wr->sg_list[i].length, wr->sg_list[i].lkey,
					     wr->sg_list[i].addr);
		if (i < srq->max_gs)
			vcx_wqe_data_seg_set_end(seg);
	}
	if (likely(nreq)) {
		srq->wqe_ctr += nreq;
		/* WQEs before the record that publishes them. */
		wmb();
		WRITE_ONCE(*srq->db.db, cpu_to_be32(srq->wqe_ctr));
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	return err;
}

/* SRQ_RQ_LIMIT and SRQ_CATAS_ERROR EQEs (control EQ, hard IRQ). */
void vcx_srq_async_event(struct vcx_dev *vdev, u32 srqn, u8 type)
{
	struct ib_event ev = {};
	struct vcx_srq *srq;

	xa_lock(&vdev->srq_table);
	srq = xa_load(&vdev->srq_table, srqn);
	if (srq) {
		if (type == VCX_EVENT_TYPE_SRQ_RQ_LIMIT) {
			ev.event = IB_EVENT_SRQ_LIMIT_REACHED;
			trace_vcx_srq_limit_reached(srqn, srq->limit);
			srq->limit = 0;		/* the device disarmed it */
		} else {
			ev.event = IB_EVENT_SRQ_ERR;
			trace_vcx_srq_error(srqn, type);
		}
		if (srq->ibsrq.event_handler) {
			ev.device = srq->ibsrq.device;
			ev.element.srq = &srq->ibsrq;
			srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
		}
	}
	xa_unlock(&vdev->srq_table);
	if (!srq)
		dev_warn_ratelimited(vcx_dev(vdev), "SRQ event 0x%x for unknown SRQ 0x%x\n",
				     type, srqn);
}
