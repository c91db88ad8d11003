// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcx: the driver's own UMR QP (mlx5_ib's umr.c), used to change a memory key in place.
 *
 * ibv_rereg_mr of the PD or the access rights keeps the lkey/rkey on a ConnectX: mlx5_ib
 * posts a UMR WQE on a privileged send-only QP of service type REG_UMR (0xc) that rewrites
 * the key's PD and access fields (UMR control segment mkey_mask PD|LR|LW|RR|RW|A, the new
 * values in the mkey context segment). vcx does the same with one such QP per device:
 * created before the ib_device is registered on a PD and CQ of its own, brought to RTS
 * without a path, one UMR at a time (umr->lock), each signalled and waited for.
 *
 * A UMR that fails (the device refused it: its error CQE) leaves the QP in ERR; it is
 * taken back through RESET to RTS before the next one, as mlx5r_umr_recover() does.
 */
#include "vcx_verbs.h"

#define VCX_UMR_QP_DEPTH	16
#define VCX_UMR_TIMEOUT_MS	10000

struct vcx_umr_wait {
	struct ib_cqe cqe;
	struct completion done;
	enum ib_wc_status status;
};

static void vcx_umr_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct vcx_umr_wait *w = container_of(wc->wr_cqe, struct vcx_umr_wait, cqe);

	w->status = wc->status;
	complete(&w->done);
}

/* RESET -> INIT -> RTR -> RTS, with the port only (mlx5r_umr_qp_rst2rts()). */
static int vcx_umr_qp_to_rts(struct ib_qp *qp)
{
	struct ib_qp_attr attr = {};
	int err;

	attr.qp_state = IB_QPS_RESET;
	err = ib_modify_qp(qp, &attr, IB_QP_STATE);
	if (err)
		return err;
	attr.qp_state = IB_QPS_INIT;
	attr.port_num = VCX_IB_PORT;
	err = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT);
	if (err)
		return err;
	attr.qp_state = IB_QPS_RTR;
	err = ib_modify_qp(qp, &attr, IB_QP_STATE);
	if (err)
		return err;
	attr.qp_state = IB_QPS_RTS;
	return ib_modify_qp(qp, &attr, IB_QP_STATE);
}

int vcx_umr_init(struct vcx_ib_dev *ibd)
{
	struct ib_qp_init_attr init = {};
	struct vcx_umr *umr = &ibd->umr;
	int err;

	mutex_init(&umr->lock);
	if (!ibd->frwr)
		return 0;	/* the device executes no UMR WQEs: rereg makes new keys */
	umr->pd = ib_alloc_pd(&ibd->ibdev, 0);
	if (IS_ERR(umr->pd)) {
		err = PTR_ERR(umr->pd);
		goto err;
	}
	umr->cq = ib_alloc_cq(&ibd->ibdev, NULL, VCX_UMR_QP_DEPTH, 0, IB_POLL_SOFTIRQ);
	if (IS_ERR(umr->cq)) {
		err = PTR_ERR(umr->cq);
		goto err_pd;
	}
	init.send_cq = umr->cq;
	init.recv_cq = umr->cq;
	init.sq_sig_type = IB_SIGNAL_ALL_WR;
	init.cap.max_send_wr = VCX_UMR_QP_DEPTH;
	init.cap.max_send_sge = 1;
	init.qp_type = VCX_IB_QPT_REG_UMR;
	init.port_num = VCX_IB_PORT;
	umr->qp = ib_create_qp(umr->pd, &init);
	if (IS_ERR(umr->qp)) {
		err = PTR_ERR(umr->qp);
		goto err_cq;
	}
	err = vcx_umr_qp_to_rts(umr->qp);
	if (err)
		goto err_qp;
	return 0;

err_qp:
	ib_destroy_qp(umr->qp);
err_cq:
	ib_free_cq(umr->cq);
err_pd:
	ib_dealloc_pd(umr->pd);
err:
	umr->qp = NULL;
	dev_err(&ibd->ibdev.dev, "UMR QP setup failed (%d): rereg makes new keys\n", err);
	return err;
}

void vcx_umr_cleanup(struct vcx_ib_dev *ibd)
{
	struct vcx_umr *umr = &ibd->umr;

	if (!umr->qp)
		return;
	ib_destroy_qp(umr->qp);
	ib_free_cq(umr->cq);
	ib_dealloc_pd(umr->pd);
	umr->qp = NULL;
}

bool vcx_umr_available(struct vcx_ib_dev *ibd)
{
	return ibd->umr.qp && !ibd->umr.broken;
}

/*
 * Give the key of @mr the PD @pd and the rights @access in place: same lkey and rkey.
 * The MR keeps its translation. Returns 0, -EIO when the device refused the UMR, or
 * -ETIMEDOUT (the UMR QP is then left alone for good).
 */
int vcx_umr_rereg_pd_access(struct vcx_ib_dev *ibd, struct vcx_mr *mr, struct ib_pd *pd,
			    int access)
{
	struct vcx_umr *umr = &ibd->umr;
	const struct ib_send_wr *bad;
	struct vcx_umr_wait *w;
	struct vcx_umr_wr uwr = {};
	int err;

	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (!w)
		return -ENOMEM;
	w->cqe.done = vcx_umr_done;
	init_completion(&w->done);
	uwr.wr.opcode = VCX_IB_WR_UMR_PD_ACCESS;
	uwr.wr.wr_cqe = &w->cqe;
	uwr.wr.send_flags = IB_SEND_SIGNALED;
	uwr.mkey = mr->ibmr.lkey;
	uwr.pdn = to_vpd(pd)->pdn;
	uwr.access = access;

	mutex_lock(&umr->lock);
	if (umr->broken) {
		err = -EIO;
		goto out;
	}
	err = ib_post_send(umr->qp, &uwr.wr, &bad);
	if (err)
		goto out;
	if (!wait_for_completion_timeout(&w->done, msecs_to_jiffies(VCX_UMR_TIMEOUT_MS))) {
		/* The completion may still come: w stays allocated, the QP is not reused. */
		umr->broken = true;
		w = NULL;
		err = -ETIMEDOUT;
		goto out;
	}
	if (w->status != IB_WC_SUCCESS) {
		ibdev_warn(&ibd->ibdev, "UMR on key 0x%x failed: %s\n", mr->ibmr.lkey,
			   ib_wc_status_msg(w->status));
		err = -EIO;
		if (vcx_umr_qp_to_rts(umr->qp))
			umr->broken = true;
	}
out:
	mutex_unlock(&umr->lock);
	kfree(w);
	return err;
}
