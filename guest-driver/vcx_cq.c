// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcx: completion queues (CREATE_CQ / DESTROY_CQ), arming, kernel polling.
 *
 * A CQ is 2^n 64-byte CQEs plus an 8-byte doorbell record (set_ci, arm word). Kernel CQs
 * live in one DMA-coherent buffer; user CQs in the library's buffer (pinned with ib_umem)
 * with the record in a pinned user page, as abi.h describes. CREATE_CQ names the
 * completion EQ of the consumer's comp_vector and the UAR the arm doorbell goes through
 * (the kernel UAR, or UAR page 0 of the user context).
 *
 * A completion EQE names the CQN: the CQ's arm sequence number advances and its
 * comp_handler runs (vcx_cq_event). CQ_ERROR EQEs become IB_EVENT_CQ_ERR.
 *
 * Resize (mlx5_ib_resize_cq): MODIFY_CQ op_mod 1 hands the device a new ring; the device
 * writes a RESIZE_CQ CQE into the old ring at its producer position and produces into
 * the new ring from the next counter on. A user CQ's library does the switch (abi.h); for
 * a kernel CQ either the poller meets the resize CQE first and simply reads on in the new
 * ring, or vcx_resize_cq copies the unpolled CQEs over (old entry i to new entry i + 1,
 * stepping over the resize CQE) under cq->lock.
 *
 * Error state (a dead function, vcx_health.c): the device completes nothing any more, so
 * kernel poll_cq completes the outstanding work itself, as mlx5_ib_poll_sw_comp() does.
 * The CQEs already in the ring are returned first; the first poll that finds the ring
 * empty stops reading it (hw_stopped), and from then on every WQE still outstanding on
 * a kernel QP whose send or receive queue uses the CQ completes with IB_WC_WR_FLUSH_ERR,
 * in posting order, send queues before receive queues. Each CQ keeps the lists of those
 * QPs (send_qps, recv_qps: added at create, removed at destroy, under cq->lock). WQEs of
 * an SRQ belong to no QP and are not completed. vcx_cq_kick_all() runs the completion
 * handler of every kernel CQ with outstanding work when the error state begins.
 */
#include <linux/dma-mapping.h>

#include "vcx_verbs.h"

static u8 *vcx_cq_get_cqe(struct vcx_cq *cq, u32 n)
{
	return cq->buf + (size_t)(n & (BIT(cq->log_nent) - 1)) * VCX_CQE_SIZE;
}

/* The CQE at index n if software owns it, else NULL. */
static u8 *vcx_cq_sw_cqe(struct vcx_cq *cq, u32 n)
{
	u8 *cqe = vcx_cq_get_cqe(cq, n);

	if (!vcx_cqe_is_sw_owned(cqe, n, cq->log_nent))
		return NULL;
	/* Read the CQE body only after its ownership. */
	dma_rmb();
	return cqe;
}

/* Exchange the CQ's ring with *ring (under cq->lock, or before the CQ is live). */
static void vcx_cq_swap_ring(struct vcx_cq *cq, struct vcx_cq_ring *ring)
{
	struct vcx_cq_ring old = {
		.buf = cq->buf, .dma = cq->buf_dma, .size = cq->buf_size,
		.log_nent = cq->log_nent,
	};

	cq->buf = ring->buf;
	cq->buf_dma = ring->dma;
	cq->buf_size = ring->size;
	cq->log_nent = ring->log_nent;
	*ring = old;
}

static void vcx_cq_set_ci(struct vcx_cq *cq)
{
	WRITE_ONCE(cq->db.db[VCX_CQ_DBR_SET_CI / 4],
		   cpu_to_be32(cq->cons_index & VCX_CQ_CI_MASK));
}

static int vcx_cq_cmd_create(struct vcx_dev *vdev, struct vcx_cq *cq, u32 uar,
			     struct ib_umem *umem, size_t npages)
{
	u8 out[VCX_OBJ_CMD_LEN] = {};
	size_t inlen = VCX_CREATE_CQ_IN_LEN + npages * VCX_PAS_SIZE;
	u8 *in, *cqc, *pas;
	int err;

	in = kvzalloc(inlen, GFP_KERNEL);
	if (!in)
		return -ENOMEM;
	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_CREATE_CQ);
	cqc = in + VCX_CREATE_CQ_IN_CQC_AT;
	vcx_set(cqc, VCX_CQC_CQE_SZ, 0);
	vcx_set(cqc, VCX_CQC_LOG_CQ_SIZE, cq->log_nent);
	vcx_set(cqc, VCX_CQC_UAR_PAGE, uar);
	vcx_set(cqc, VCX_CQC_C_EQN, cq->eqn);
	vcx_set(cqc, VCX_CQC_LOG_PAGE_SIZE, 0);		/* 4 KiB pages */
	vcx_set(cqc, VCX_CQC_PAGE_OFFSET, 0);
	vcx_set64(cqc, VCX_CQC_DBR_ADDR, cq->db.dma);
	pas = in + VCX_CREATE_CQ_IN_PAS_AT;
	vcx_ib_fill_pas(pas, umem, cq->buf_dma, npages);
	err = vcx_cmd_exec(vdev, in, inlen, out, sizeof(out));
	kvfree(in);
	if (!err)
		cq->cqn = vcx_get(out, VCX_CREATE_CQ_OUT_CQN);
	return err;
}

static int vcx_cq_cmd_destroy(struct vcx_dev *vdev, u32 cqn)
{
	u8 in[VCX_OBJ_CMD_LEN] = {};
	u8 out[VCX_OBJ_CMD_LEN] = {};

	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_DESTROY_CQ);
	vcx_set(in, VCX_OBJ_NUMBER, cqn);
	return vcx_cmd_exec(vdev, in, sizeof(in), out, sizeof(out));
}

static int vcx_cq_create_user(struct vcx_cq *cq, struct ib_udata *udata, u32 *uar,
			      size_t *npages)
{
	struct vcx_ucontext *uctx = rdma_udata_to_drv_context(udata, struct vcx_ucontext,
							      ibuc);
	struct vcx_create_cq_req req = {};
	int err;

	if (udata->inlen < offsetofend(struct vcx_create_cq_req, flags))
		return -EINVAL;
	err = ib_copy_from_udata(&req, udata, min(udata->inlen, sizeof(req)));
	if (err)
		return err;
	if (req.cqe_size != VCX_CQE_SIZE || req.flags || !PAGE_ALIGNED(req.buf_addr))
		return -EINVAL;
	err = vcx_ib_user_queue_map(uctx, req.buf_addr, (size_t)VCX_CQE_SIZE << cq->log_nent,
				    IB_ACCESS_LOCAL_WRITE, req.db_addr, &cq->umem, &cq->db);
	if (err)
		return err;
	*npages = ib_umem_num_dma_blocks(cq->umem, VCX_PAGE_SIZE);
	*uar = uctx->uar_index[0];
	return 0;
}

static void vcx_cq_free_user(struct vcx_cq *cq, struct ib_udata *udata)
{
	struct vcx_ucontext *uctx = rdma_udata_to_drv_context(udata, struct vcx_ucontext,
							      ibuc);

	vcx_ib_user_queue_unmap(uctx, &cq->umem, &cq->db);
}

static int vcx_cq_create_kernel(struct vcx_dev *vdev, struct vcx_cq *cq, size_t *npages)
{
	u32 i;
	int err;

	cq->buf_size = max_t(size_t, (size_t)VCX_CQE_SIZE << cq->log_nent, VCX_PAGE_SIZE);
	cq->buf = dma_alloc_coherent(vcx_dev(vdev), cq->buf_size, &cq->buf_dma, GFP_KERNEL);
	if (!cq->buf)
		return -ENOMEM;
	for (i = 0; i < BIT(cq->log_nent); i++)
		vcx_cqe_init(vcx_cq_get_cqe(cq, i));
	err = vcx_ib_db_alloc(vdev, &cq->db);
	if (err) {
		dma_free_coherent(vcx_dev(vdev), cq->buf_size, cq->buf, cq->buf_dma);
		cq->buf = NULL;
		return err;
	}
	cq->db.db[0] = 0;
	cq->db.db[1] = 0;
	*npages = DIV_ROUND_UP(cq->buf_size, VCX_PAGE_SIZE);
	return 0;
}

static void vcx_cq_free_kernel(struct vcx_dev *vdev, struct vcx_cq *cq)
{
	vcx_ib_db_free(vdev, &cq->db);
	if (cq->buf)
		dma_free_coherent(vcx_dev(vdev), cq->buf_size, cq->buf, cq->buf_dma);
	cq->buf = NULL;
}

int vcx_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		  VCX_CREATE_CQ_UDATA_ARG)
{
	struct ib_udata *udata = VCX_CREATE_CQ_UDATA;
	struct vcx_dev *vdev = ibdev_to_vdev(ibcq->device);
	struct vcx_cq *cq = to_vcq(ibcq);
	u32 max_log = vcx_cap(vdev, LOG_MAX_CQ_SZ);
	u32 entries, uar = vdev->uar_index;
	size_t npages = 0;
	int err;

	/*
	 * Completion timestamps need no CQ setting: the device stamps every CQE with its
	 * internal timer. Without a timer (device_frequency_khz 0) they are refused, as are
	 * the other flags (ignore-overrun: cq_oi is not offered).
	 */
	if (attr->flags & ~(u32)(vcx_cap(vdev, DEVICE_FREQUENCY_KHZ) ?
				 IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION : 0))
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > (1 << max_log) - 1)
		return -EINVAL;
	if (attr->comp_vector >= vdev->num_comp_eqs)
		return -EINVAL;
	entries = roundup_pow_of_two(attr->cqe + 1);
	cq->vdev = vdev;
	cq->log_nent = ilog2(entries);
	cq->eqn = vdev->comp_eqs[attr->comp_vector].eqn;
	cq->cons_index = 0;
	cq->arm_sn = 0;
	spin_lock_init(&cq->lock);
	mutex_init(&cq->resize_mutex);
	INIT_LIST_HEAD(&cq->send_qps);
	INIT_LIST_HEAD(&cq->recv_qps);
	cq->hw_stopped = false;

	if (udata)
		err = vcx_cq_create_user(cq, udata, &uar, &npages);
	else
		err = vcx_cq_create_kernel(vdev, cq, &npages);
	if (err)
		return err;

	err = vcx_cq_cmd_create(vdev, cq, uar, cq->umem, npages);
	if (err)
		goto err_buf;
	err = xa_insert_irq(&vdev->cq_table, cq->cqn, cq, GFP_KERNEL);
	if (err)
		goto err_cmd;
	ibcq->cqe = entries - 1;

	if (udata) {
		struct vcx_create_cq_resp resp = { .cqn = cq->cqn };

		err = ib_copy_to_udata(udata, &resp, min(udata->outlen, sizeof(resp)));
		if (err)
			goto err_table;
	}
	return 0;

err_table:
	xa_erase_irq(&vdev->cq_table, cq->cqn);
err_cmd:
	vcx_cq_cmd_destroy(vdev, cq->cqn);
err_buf:
	if (udata)
		vcx_cq_free_user(cq, udata);
	else
		vcx_cq_free_kernel(vdev, cq);
	return err;
}

int vcx_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct vcx_dev *vdev = ibdev_to_vdev(ibcq->device);
	struct vcx_cq *cq = to_vcq(ibcq);
	int err;

	/* No event reaches the CQ once it is out of the table. */
	xa_erase_irq(&vdev->cq_table, cq->cqn);
	err = vcx_cq_cmd_destroy(vdev, cq->cqn);
	if (err && !vcx_in_error(vdev)) {
		/* Still alive on the device: keep it reachable for events. */
		WARN_ON(xa_insert_irq(&vdev->cq_table, cq->cqn, cq, GFP_KERNEL));
		return err;
	}
	if (udata)
		vcx_cq_free_user(cq, udata);
	else
		vcx_cq_free_kernel(vdev, cq);
	return 0;
}

/* ------------------------------------------------------------------------------------
 * The error state: software flush completions
 */

/* Add a kernel QP to the lists of its CQs (after CREATE_QP), remove it (at destroy). */
void vcx_cq_add_qp(struct vcx_qp *qp)
{
	struct vcx_cq *scq = to_vcq(qp->ibqp.send_cq), *rcq = to_vcq(qp->ibqp.recv_cq);
	unsigned long flags;

	spin_lock_irqsave(&scq->lock, flags);
	list_add_tail(&qp->cq_send_link, &scq->send_qps);
	spin_unlock_irqrestore(&scq->lock, flags);
	INIT_LIST_HEAD(&qp->cq_recv_link);
	if (!qp->ibqp.recv_cq)
		return;		/* an XRC initiator: nothing is received */
	spin_lock_irqsave(&rcq->lock, flags);
	list_add_tail(&qp->cq_recv_link, &rcq->recv_qps);
	spin_unlock_irqrestore(&rcq->lock, flags);
}

void vcx_cq_del_qp(struct vcx_qp *qp)
{
	struct vcx_cq *scq = to_vcq(qp->ibqp.send_cq), *rcq = to_vcq(qp->ibqp.recv_cq);
	unsigned long flags;

	spin_lock_irqsave(&scq->lock, flags);
	list_del_init(&qp->cq_send_link);
	spin_unlock_irqrestore(&scq->lock, flags);
	if (!qp->ibqp.recv_cq)
		return;
	spin_lock_irqsave(&rcq->lock, flags);
	list_del_init(&qp->cq_recv_link);
	spin_unlock_irqrestore(&rcq->lock, flags);
}

static bool vcx_wq_outstanding(struct vcx_wq *wq)
{
	return READ_ONCE(wq->head) != READ_ONCE(wq->tail);
}

/*
 * Whether poll_cq in the error state has anything to return: a CQE in the ring (until
 * it stops being read) or a WQE outstanding on a QP of the lists. cq->lock held.
 */
static bool vcx_cq_has_work(struct vcx_cq *cq)
{
	struct vcx_qp *qp;

	if (!cq->hw_stopped && vcx_cq_sw_cqe(cq, cq->cons_index))
		return true;
	list_for_each_entry(qp, &cq->send_qps, cq_send_link)
		if (vcx_wq_outstanding(&qp->sq))
			return true;
	list_for_each_entry(qp, &cq->recv_qps, cq_recv_link)
		if (vcx_wq_outstanding(&qp->rq))
			return true;
	return false;
}

/*
 * Complete up to num outstanding WQEs of one queue of qp with IB_WC_WR_FLUSH_ERR, oldest
 * first; how many. Every send WQE completes, signaled or not, as the device's own flush
 * does; vendor_err stays 0 as in the device's flush CQEs. cq->lock held; the queue's lock
 * orders this against a drain WR being posted.
 */
static int vcx_wq_sw_flush(struct vcx_qp *qp, bool send, int num, struct ib_wc *wc)
{
	struct vcx_wq *wq = send ? &qp->sq : &qp->rq;
	int n = 0;
	u32 idx;

	spin_lock(&wq->lock);
	for (; n < num && wq->tail != wq->head; n++, wc++) {
		idx = wq->tail & (wq->wqe_cnt - 1);
		memset(wc, 0, sizeof(*wc));
		wc->wr_id = wq->wrid[idx];
		wc->status = IB_WC_WR_FLUSH_ERR;
		wc->qp = &qp->ibqp;
		if (send) {
			wc->opcode = wq->opcode[idx];
			wq->tail = wq->next_head[idx];
		} else {
			wc->opcode = IB_WC_RECV;
			wq->tail++;
		}
	}
	spin_unlock(&wq->lock);
	return n;
}

/* Software flush completions for every QP of the lists, send queues first. */
static int vcx_cq_sw_flush(struct vcx_cq *cq, int num, struct ib_wc *wc)
{
	struct vcx_qp *qp;
	int n = 0;

	list_for_each_entry(qp, &cq->send_qps, cq_send_link) {
		n += vcx_wq_sw_flush(qp, true, num - n, wc + n);
		if (n == num)
			return n;
	}
	list_for_each_entry(qp, &cq->recv_qps, cq_recv_link) {
		n += vcx_wq_sw_flush(qp, false, num - n, wc + n);
		if (n == num)
			return n;
	}
	return n;
}

/*
 * Run the consumer's completion handler as a completion event would; whether it ran. Not
 * for IB_POLL_DIRECT CQs: their owner polls, and ib_core's handler for them warns.
 */
bool vcx_cq_run_handler(struct vcx_cq *cq)
{
	struct ib_cq *ibcq = &cq->ibcq;

	if (ibcq->poll_ctx == IB_POLL_DIRECT || !ibcq->comp_handler)
		return false;
	ibcq->comp_handler(ibcq, ibcq->cq_context);
	return true;
}

/*
 * The error state has begun: every kernel CQ with something to complete gets its handler
 * run, so that consumers waiting for completions poll and see the flush errors (mlx5_ib's
 * mlx5_ib_handle_internal_error). Any context; returns how many handlers ran.
 */
unsigned int vcx_cq_kick_all(struct vcx_dev *vdev)
{
	unsigned int kicked = 0;
	unsigned long idx, flags;
	struct vcx_cq *cq;
	bool work;

	/* Destroy takes a CQ out of the table before freeing it. */
	xa_lock_irqsave(&vdev->cq_table, flags);
	xa_for_each(&vdev->cq_table, idx, cq) {
		if (!cq->buf)
			continue;	/* a user CQ: the library polls its own ring */
		spin_lock(&cq->lock);
		work = vcx_cq_has_work(cq);
		spin_unlock(&cq->lock);
		if (work && vcx_cq_run_handler(cq))
			kicked++;
	}
	xa_unlock_irqrestore(&vdev->cq_table, flags);
	return kicked;
}

/* Arm: the arm word goes to the doorbell record, then the UAR (mlx5_cq_arm()). */
int vcx_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct vcx_cq *cq = to_vcq(ibcq);
	struct vcx_dev *vdev = cq->vdev;
	u32 cmd = (flags & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED ?
		  VCX_CQ_DB_CMD_NOTIFY_SOLICITED : VCX_CQ_DB_CMD_NOTIFY;
	unsigned long irqflags;
	__be32 doorbell[2];
	u32 word;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	word = vcx_cq_arm_word(cq->arm_sn, cmd, cq->cons_index);
	WRITE_ONCE(cq->db.db[VCX_CQ_DBR_ARM / 4], cpu_to_be32(word));
	/* The record must be visible before the doorbell. */
	wmb();
	doorbell[0] = cpu_to_be32(word);
	doorbell[1] = cpu_to_be32(cq->cqn);
	__raw_writeq(*(u64 *)doorbell, vdev->uar + VCX_UAR_CQ_DOORBELL);
	/*
	 * A dead device raises no event: whatever poll_cq would still return counts as
	 * missed, so that ib_core's pollers come back for it.
	 */
	if (flags & IB_CQ_REPORT_MISSED_EVENTS) {
		if (vcx_in_error(vdev))
			ret = vcx_cq_has_work(cq);
		else
			ret = !!vcx_cq_sw_cqe(cq, cq->cons_index);
	}
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}

static enum ib_wc_status vcx_cqe_status(u8 syndrome)
{
	switch (syndrome) {
	case VCX_CQE_SYND_LOCAL_LENGTH_ERR:		return IB_WC_LOC_LEN_ERR;
	case VCX_CQE_SYND_LOCAL_QP_OP_ERR:		return IB_WC_LOC_QP_OP_ERR;
	case VCX_CQE_SYND_LOCAL_PROT_ERR:		return IB_WC_LOC_PROT_ERR;
	case VCX_CQE_SYND_WR_FLUSH_ERR:			return IB_WC_WR_FLUSH_ERR;
	case VCX_CQE_SYND_MW_BIND_ERR:			return IB_WC_MW_BIND_ERR;
	case VCX_CQE_SYND_BAD_RESP_ERR:			return IB_WC_BAD_RESP_ERR;
	case VCX_CQE_SYND_LOCAL_ACCESS_ERR:		return IB_WC_LOC_ACCESS_ERR;
	case VCX_CQE_SYND_REMOTE_INVAL_REQ_ERR:		return IB_WC_REM_INV_REQ_ERR;
	case VCX_CQE_SYND_REMOTE_ACCESS_ERR:		return IB_WC_REM_ACCESS_ERR;
	case VCX_CQE_SYND_REMOTE_OP_ERR:		return IB_WC_REM_OP_ERR;
	case VCX_CQE_SYND_TRANSPORT_RETRY_EXC_ERR:	return IB_WC_RETRY_EXC_ERR;
	case VCX_CQE_SYND_RNR_RETRY_EXC_ERR:		return IB_WC_RNR_RETRY_EXC_ERR;
	case VCX_CQE_SYND_REMOTE_ABORTED_ERR:		return IB_WC_REM_ABORT_ERR;
	default:					return IB_WC_GENERAL_ERR;
	}
}

/* Requester CQE: the WQE it names completes, and every unsignaled one before it. */
static void vcx_cq_req_wrid(struct vcx_qp *qp, const u8 *cqe, struct ib_wc *wc)
{
	struct vcx_wq *sq = &qp->sq;
	u32 idx = vcx_get(cqe, VCX_CQE_WQE_COUNTER) & (sq->wqe_cnt - 1);

	wc->wr_id = sq->wrid[idx];
	wc->opcode = sq->opcode[idx];
	sq->tail = sq->next_head[idx];
}

static void vcx_cq_resp_wrid(struct vcx_qp *qp, const u8 *cqe, struct ib_wc *wc)
{
	/* an XRC target's receive consumed a WQE of the SRQ the CQE names */
	if (qp->st == VCX_QP_ST_XRC) {
		struct vcx_srq *srq = vcx_xrc_cqe_srq(qp, cqe);
		u16 idx = vcx_get(cqe, VCX_CQE_WQE_COUNTER);

		if (!srq || !srq->wrid) {
			dev_warn_ratelimited(vcx_dev(qp->vdev), "QP 0x%x: CQE for SRQ 0x%x\n",
					     qp->qpn, vcx_get(cqe, VCX_CQE_SRQN_UIDX));
			return;
		}
		wc->wr_id = srq->wrid[idx & (srq->max - 1)];
		vcx_srq_free_wqe(srq, idx);
	} else if (qp->ibqp.srq) {
		struct vcx_srq *srq = to_vsrq(qp->ibqp.srq);
		u16 idx = vcx_get(cqe, VCX_CQE_WQE_COUNTER);

		wc->wr_id = srq->wrid[idx & (srq->max - 1)];
		vcx_srq_free_wqe(srq, idx);
	} else {
		struct vcx_wq *rq = &qp->rq;

		wc->wr_id = rq->wrid[rq->tail & (rq->wqe_cnt - 1)];
		rq->tail++;
	}
}

static void vcx_cq_responder(struct vcx_qp *qp, const u8 *cqe, u8 opcode, struct ib_wc *wc)
{
	vcx_cq_resp_wrid(qp, cqe, wc);
	wc->status = IB_WC_SUCCESS;
	wc->byte_len = vcx_get(cqe, VCX_CQE_BYTE_CNT);
	switch (opcode) {
	case VCX_CQE_RESP_WR_IMM:
		wc->opcode = IB_WC_RECV_RDMA_WITH_IMM;
		wc->wc_flags |= IB_WC_WITH_IMM;
		wc->ex.imm_data = cpu_to_be32(vcx_get(cqe, VCX_CQE_IMM_INVAL_PKEY));
		break;
	case VCX_CQE_RESP_SEND:
		wc->opcode = IB_WC_RECV;
		break;
	case VCX_CQE_RESP_SEND_IMM:
		wc->opcode = IB_WC_RECV;
		wc->wc_flags |= IB_WC_WITH_IMM;
		wc->ex.imm_data = cpu_to_be32(vcx_get(cqe, VCX_CQE_IMM_INVAL_PKEY));
		break;
	case VCX_CQE_RESP_SEND_INV:
		wc->opcode = IB_WC_RECV;
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
		wc->ex.invalidate_rkey = vcx_get(cqe, VCX_CQE_IMM_INVAL_PKEY);
		break;
	}
	wc->src_qp = vcx_get(cqe, VCX_CQE_RQPN);
	wc->sl = vcx_get(cqe, VCX_CQE_SL);
	wc->pkey_index = vcx_qp_wc_pkey_index(qp, cqe);
	wc->slid = 0;
	wc->dlid_path_bits = 0;
	if (vcx_get(cqe, VCX_CQE_GRH))
		wc->wc_flags |= IB_WC_GRH;
	switch (vcx_get(cqe, VCX_CQE_ROCE_L3_TYPE)) {
	case VCX_CQE_ROCE_L3_IPV4:
		wc->network_hdr_type = RDMA_NETWORK_IPV4;
		break;
	case VCX_CQE_ROCE_L3_IPV6:
		wc->network_hdr_type = RDMA_NETWORK_IPV6;
		break;
	default:
		wc->network_hdr_type = RDMA_NETWORK_ROCE_V1;
		break;
	}
	wc->wc_flags |= IB_WC_WITH_NETWORK_HDR_TYPE;
	if (vcx_get(cqe, VCX_CQE_VLAN_PRESENT)) {
		wc->vlan_id = vcx_get(cqe, VCX_CQE_VLAN_INFO) & VLAN_VID_MASK;
		wc->wc_flags |= IB_WC_WITH_VLAN;
	}
}

/* One CQE into wc: 0, -EAGAIN when the CQ is empty. Called with cq->lock held. */
static int vcx_poll_one(struct vcx_cq *cq, struct ib_wc *wc)
{
	struct vcx_qp *qp;
	u8 *cqe, opcode;
	u32 qpn;

again:
	cqe = vcx_cq_sw_cqe(cq, cq->cons_index);
	if (!cqe)
		return -EAGAIN;
	cq->cons_index++;
	opcode = vcx_cqe_opcode(cqe);
	if (opcode == VCX_CQE_RESIZE_CQ) {
		/*
		 * Everything before it is consumed: the counter reads on in the new ring and
		 * vcx_resize_cq has nothing left to copy (it frees the old ring).
		 */
		if (cq->resize && cq->resize->buf && !cq->resize_switched) {
			vcx_cq_swap_ring(cq, cq->resize);
			cq->resize_switched = true;
		} else {
			dev_warn_ratelimited(vcx_dev(cq->vdev), "CQ 0x%x: unexpected resize CQE\n",
					     cq->cqn);
		}
		goto again;
	}
	qpn = vcx_get(cqe, VCX_CQE_QPN);
	/* A QP being destroyed cleans this CQ under cq->lock first: the pointer is safe. */
	qp = xa_load(&cq->vdev->qp_table, qpn);
	if (!qp) {
		dev_warn_ratelimited(vcx_dev(cq->vdev), "CQ 0x%x: CQE for unknown QP 0x%x\n",
				     cq->cqn, qpn);
		goto again;
	}
	memset(wc, 0, sizeof(*wc));
	wc->qp = &qp->ibqp;
	switch (opcode) {
	case VCX_CQE_REQ:
		vcx_cq_req_wrid(qp, cqe, wc);
		wc->status = IB_WC_SUCCESS;
		if (wc->opcode == IB_WC_RDMA_READ)
			wc->byte_len = vcx_get(cqe, VCX_CQE_BYTE_CNT);
		else if (wc->opcode == IB_WC_COMP_SWAP || wc->opcode == IB_WC_FETCH_ADD)
			wc->byte_len = VCX_ATOMIC_SIZE;
		break;
	case VCX_CQE_RESP_WR_IMM:
	case VCX_CQE_RESP_SEND:
	case VCX_CQE_RESP_SEND_IMM:
	case VCX_CQE_RESP_SEND_INV:
		vcx_cq_responder(qp, cqe, opcode, wc);
		break;
	case VCX_CQE_REQ_ERR:
	case VCX_CQE_RESP_ERR:
		if (opcode == VCX_CQE_REQ_ERR)
			vcx_cq_req_wrid(qp, cqe, wc);
		else
			vcx_cq_resp_wrid(qp, cqe, wc);
		wc->status = vcx_cqe_status(vcx_get(cqe, VCX_CQE_SYNDROME));
		wc->vendor_err = vcx_get(cqe, VCX_CQE_VENDOR_ERR_SYND);
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			dev_dbg(vcx_dev(cq->vdev), "QP 0x%x: error CQE syndrome 0x%x vendor 0x%x\n",
				qpn, vcx_get(cqe, VCX_CQE_SYNDROME), wc->vendor_err);
		break;
	default:
		dev_warn_ratelimited(vcx_dev(cq->vdev), "CQ 0x%x: unexpected CQE opcode 0x%x\n",
				     cq->cqn, opcode);
		goto again;
	}
	return 0;
}

int vcx_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct vcx_cq *cq = to_vcq(ibcq);
	unsigned long flags;
	int n = 0;

	spin_lock_irqsave(&cq->lock, flags);
	if (!cq->hw_stopped) {
		while (n < num_entries && !vcx_poll_one(cq, wc + n))
			n++;
		if (n)
			vcx_cq_set_ci(cq);
	}
	if (n < num_entries && vcx_in_error(cq->vdev)) {
		/* The ring is empty: what is still outstanding completes in software. */
		cq->hw_stopped = true;
		n += vcx_cq_sw_flush(cq, num_entries - n, wc + n);
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

/*
 * Drop the CQEs of a QP being reset or destroyed (mlx5's __mlx5_ib_cq_clean), returning
 * the SRQ WQEs they consumed. Kernel CQs only: the library cleans its own.
 */
void vcx_cq_clean(struct vcx_cq *cq, u32 qpn, struct vcx_srq *srq)
{
	u32 prod, nfreed = 0;
	unsigned long flags;
	u8 *cqe, *dest, owner, opcode;

	if (!cq || !cq->buf)
		return;
	spin_lock_irqsave(&cq->lock, flags);
	for (prod = cq->cons_index; vcx_cq_sw_cqe(cq, prod); prod++)
		if (prod == cq->cons_index + BIT(cq->log_nent) - 1)
			break;
	while ((s32)(--prod - cq->cons_index) >= 0) {
		cqe = vcx_cq_get_cqe(cq, prod);
		if (vcx_get(cqe, VCX_CQE_QPN) == qpn) {
			opcode = vcx_cqe_opcode(cqe);
			if (srq && opcode != VCX_CQE_REQ && opcode != VCX_CQE_REQ_ERR)
				vcx_srq_free_wqe(srq, vcx_get(cqe, VCX_CQE_WQE_COUNTER));
			nfreed++;
		} else if (nfreed) {
			dest = vcx_cq_get_cqe(cq, prod + nfreed);
			owner = dest[VCX_CQE_OP_OWN_BYTE] & 1;
			memcpy(dest, cqe, VCX_CQE_SIZE);
			dest[VCX_CQE_OP_OWN_BYTE] = (dest[VCX_CQE_OP_OWN_BYTE] & ~1) | owner;
		}
	}
	if (nfreed) {
		cq->cons_index += nfreed;
		/* The moved CQEs are in place before the device sees the new index. */
		wmb();
		vcx_cq_set_ci(cq);
	}
	spin_unlock_irqrestore(&cq->lock, flags);
}

/* ------------------------------------------------------------------------------------
 * Resize (MODIFY_CQ op_mod 1)
 */

static int vcx_cq_cmd_resize(struct vcx_dev *vdev, struct vcx_cq *cq, u32 log_nent,
			     struct ib_umem *umem, dma_addr_t dma, size_t npages)
{
	u8 out[VCX_CMD_HDR_SIZE] = {};
	size_t inlen = VCX_MODIFY_CQ_IN_LEN + npages * VCX_PAS_SIZE;
	u8 *in, *cqc;
	int err;

	in = kvzalloc(inlen, GFP_KERNEL);
	if (!in)
		return -ENOMEM;
	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_MODIFY_CQ);
	vcx_set(in, VCX_CMD_IN_OP_MOD, VCX_MODIFY_CQ_OP_MOD_RESIZE);
	vcx_set(in, VCX_MODIFY_CQ_IN_CQN, cq->cqn);
	vcx_set(in, VCX_MODIFY_CQ_IN_FIELD_SELECT, VCX_CQ_RESIZE_LOG_SIZE |
		VCX_CQ_RESIZE_PAGE_OFFSET | VCX_CQ_RESIZE_LOG_PAGE_SIZE);
	cqc = in + VCX_MODIFY_CQ_IN_CQC_AT;
	vcx_set(cqc, VCX_CQC_CQE_SZ, 0);			/* the CQE size stays 64 B */
	vcx_set(cqc, VCX_CQC_LOG_CQ_SIZE, log_nent);
	vcx_set(cqc, VCX_CQC_LOG_PAGE_SIZE, 0);		/* 4 KiB pages */
	vcx_set(cqc, VCX_CQC_PAGE_OFFSET, 0);
	vcx_ib_fill_pas(in + VCX_MODIFY_CQ_IN_PAS_AT, umem, dma, npages);
	err = vcx_cmd_exec(vdev, in, inlen, out, sizeof(out));
	kvfree(in);
	return err;
}

/* The library's new ring (abi.h resize_cq): pin it, resize, drop the old pin. */
static int vcx_cq_resize_user(struct vcx_dev *vdev, struct vcx_cq *cq, u32 log_nent,
			      struct ib_udata *udata)
{
	struct vcx_resize_cq_req req = {};
	struct ib_umem *umem;
	int err;

	if (udata->inlen < offsetofend(struct vcx_resize_cq_req, cqe_size))
		return -EINVAL;
	err = ib_copy_from_udata(&req, udata, min(udata->inlen, sizeof(req)));
	if (err)
		return err;
	if (req.cqe_size != VCX_CQE_SIZE || req.reserved || !PAGE_ALIGNED(req.buf_addr))
		return -EINVAL;
	umem = ib_umem_get(cq->ibcq.device, req.buf_addr, (size_t)VCX_CQE_SIZE << log_nent,
			   IB_ACCESS_LOCAL_WRITE);
	if (IS_ERR(umem))
		return PTR_ERR(umem);
	err = vcx_cq_cmd_resize(vdev, cq, log_nent, umem, 0,
				ib_umem_num_dma_blocks(umem, VCX_PAGE_SIZE));
	if (err) {
		ib_umem_release(umem);
		return err;
	}
	ib_umem_release(cq->umem);
	cq->umem = umem;
	cq->log_nent = log_nent;
	return 0;
}

/*
 * Move the CQEs software has not polled into the new ring (mlx5_ib copy_resize_cqes):
 * old entry i goes to new entry i + 1 with that entry's owner bit, up to the resize CQE,
 * and the consumer steps over the resize CQE, so that consumer and device counters meet
 * again in the new ring. Called with cq->lock held, before the switch.
 */
static int vcx_cq_copy_resize_cqes(struct vcx_cq *cq, struct vcx_cq_ring *to)
{
	u32 mask = BIT(to->log_nent) - 1;
	u32 i;

	for (i = cq->cons_index; i - cq->cons_index < BIT(cq->log_nent); i++) {
		u8 *src = vcx_cq_sw_cqe(cq, i);
		u8 *dst;

		if (!src)
			break;
		if (vcx_cqe_opcode(src) == VCX_CQE_RESIZE_CQ) {
			cq->cons_index++;
			return 0;
		}
		dst = to->buf + (size_t)((i + 1) & mask) * VCX_CQE_SIZE;
		memcpy(dst, src, VCX_CQE_SIZE);
		dst[VCX_CQE_OP_OWN_BYTE] = (src[VCX_CQE_OP_OWN_BYTE] & ~1) |
					   vcx_cqe_owner_for(i + 1, to->log_nent);
	}
	dev_err(vcx_dev(cq->vdev), "CQ 0x%x: resize CQE not found after %u CQEs\n", cq->cqn,
		i - cq->cons_index);
	return -EIO;
}

static int vcx_cq_resize_kernel(struct vcx_dev *vdev, struct vcx_cq *cq, u32 log_nent)
{
	struct vcx_cq_ring ring = { .log_nent = log_nent };
	unsigned long flags;
	u32 i;
	int err;

	ring.size = max_t(size_t, (size_t)VCX_CQE_SIZE << log_nent, VCX_PAGE_SIZE);
	ring.buf = dma_alloc_coherent(vcx_dev(vdev), ring.size, &ring.dma, GFP_KERNEL);
	if (!ring.buf)
		return -ENOMEM;
	for (i = 0; i < BIT(log_nent); i++)
		vcx_cqe_init(ring.buf + (size_t)i * VCX_CQE_SIZE);

	/* From the command on, a poller may meet the resize CQE and switch by itself. */
	spin_lock_irqsave(&cq->lock, flags);
	cq->resize = &ring;
	cq->resize_switched = false;
	spin_unlock_irqrestore(&cq->lock, flags);

	err = vcx_cq_cmd_resize(vdev, cq, log_nent, NULL, ring.dma,
				DIV_ROUND_UP(ring.size, VCX_PAGE_SIZE));

	spin_lock_irqsave(&cq->lock, flags);
	if (!err && !cq->resize_switched) {
		err = vcx_cq_copy_resize_cqes(cq, &ring);
		/* The device is on the new ring either way. */
		vcx_cq_swap_ring(cq, &ring);
	} else if (err && cq->resize_switched) {
		/* Cannot happen: a failed command writes no resize CQE. */
		WARN_ON_ONCE(1);
	}
	cq->resize = NULL;
	spin_unlock_irqrestore(&cq->lock, flags);

	/* ring now holds whichever ring the CQ no longer uses. */
	dma_free_coherent(vcx_dev(vdev), ring.size, ring.buf, ring.dma);
	return err;
}

int vcx_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct vcx_cq *cq = to_vcq(ibcq);
	struct vcx_dev *vdev = cq->vdev;
	u32 max_log = vcx_cap(vdev, LOG_MAX_CQ_SZ);
	u32 entries;
	int err;

	if (!vcx_cap(vdev, CQ_RESIZE))
		return -EOPNOTSUPP;
	/* As at create: 2^n entries for cqe + 1, at most 2^log_max_cq_sz. */
	if (cqe < 1 || cqe > (1 << max_log) - 1)
		return -EINVAL;
	entries = roundup_pow_of_two(cqe + 1);
	if (entries == ibcq->cqe + 1)
		return 0;

	mutex_lock(&cq->resize_mutex);
	if (udata)
		err = vcx_cq_resize_user(vdev, cq, ilog2(entries), udata);
	else
		err = vcx_cq_resize_kernel(vdev, cq, ilog2(entries));
	if (!err)
		ibcq->cqe = entries - 1;
	mutex_unlock(&cq->resize_mutex);
	return err;
}

/*
 * Event moderation of any CQ of the function, RDMA or Ethernet: MODIFY_CQ op_mod 0 sets
 * cq_max_count and cq_period (microseconds, 12 bits); the device then raises an armed
 * CQ's event after that many CQEs or that time. A period mode other than KEEP is selected
 * too (the period counted from the last event or from the first CQE after it); that
 * needs the cq_period_mode_modify cap, which the callers check.
 */
int vcx_cq_modify_moderation(struct vcx_dev *vdev, u32 cqn, u16 cq_count, u16 cq_period,
			     int period_mode)
{
	u32 sel = VCX_CQ_MODIFY_PERIOD | VCX_CQ_MODIFY_COUNT;
	u8 in[VCX_MODIFY_CQ_IN_LEN] = {};
	u8 out[VCX_CMD_HDR_SIZE] = {};
	u8 *cqc = in + VCX_MODIFY_CQ_IN_CQC_AT;

	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_MODIFY_CQ);
	vcx_set(in, VCX_CMD_IN_OP_MOD, VCX_MODIFY_CQ_OP_MOD_MODIFY);
	vcx_set(in, VCX_MODIFY_CQ_IN_CQN, cqn);
	vcx_set(cqc, VCX_CQC_CQ_PERIOD, cq_period);
	vcx_set(cqc, VCX_CQC_CQ_MAX_COUNT, cq_count);
	if (period_mode != VCX_CQ_PERIOD_MODE_KEEP) {
		sel |= VCX_CQ_MODIFY_PERIOD_MODE;
		vcx_set(cqc, VCX_CQC_CQ_PERIOD_MODE, period_mode);
	}
	vcx_set(in, VCX_MODIFY_CQ_IN_FIELD_SELECT, sel);
	return vcx_cmd_exec(vdev, in, sizeof(in), out, sizeof(out));
}

/*
 * The verb (mlx5_ib_modify_cq). ib_core's adaptive moderation drives it for kernel CQs
 * polled from softirq or a workqueue (use_cq_dim, vcx_ib_add), ibv_modify_cq for others.
 */
int vcx_modify_cq(struct ib_cq *ibcq, u16 cq_count, u16 cq_period)
{
	struct vcx_cq *cq = to_vcq(ibcq);

	if (!vcx_cap(cq->vdev, CQ_MODERATION))
		return -EOPNOTSUPP;
	if (cq_period > VCX_CQ_MAX_PERIOD)
		return -EINVAL;
	return vcx_cq_modify_moderation(cq->vdev, cq->cqn, cq_count, cq_period,
					VCX_CQ_PERIOD_MODE_KEEP);
}

/* Completion EQE (hard IRQ of a completion EQ). */
void vcx_cq_event(struct vcx_dev *vdev, u32 cqn)
{
	struct vcx_cq *cq;

	xa_lock(&vdev->cq_table);
	cq = xa_load(&vdev->cq_table, cqn);
	if (cq) {
		cq->arm_sn++;
		if (cq->ibcq.comp_handler)
			cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	}
	xa_unlock(&vdev->cq_table);
	/* Not a verbs CQ: one of the port netdev's (en/). */
	if (!cq && !vcx_en_cq_event(vdev, cqn))
		dev_warn_ratelimited(vcx_dev(vdev), "completion event for bogus CQ 0x%x\n", cqn);
}

void vcx_cq_async_event(struct vcx_dev *vdev, u32 cqn, u8 syndrome)
{
	struct ib_event ev = {};
	struct vcx_cq *cq;

	dev_warn_ratelimited(vcx_dev(vdev), "CQ 0x%x error, syndrome 0x%x\n", cqn, syndrome);
	xa_lock(&vdev->cq_table);
	cq = xa_load(&vdev->cq_table, cqn);
	if (cq && cq->ibcq.event_handler) {
		ev.device = cq->ibcq.device;
		ev.event = IB_EVENT_CQ_ERR;
		ev.element.cq = &cq->ibcq;
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
	}
	xa_unlock(&vdev->cq_table);
}
