// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vcx provider: posting receives to a QP's own receive queue.
 *
 * RQ WQEs are arrays of data segments, consumed strictly in order. Posting writes the
 * WQEs, then the new receive counter into the doorbell record; there is no MMIO doorbell
 * for receives.
 */
#include <errno.h>

#include <util/udma_barrier.h>

#include "vcx.h"
#include "vcx/prm-wqe.h"

/*
 * Whether nreq more WRs overflow the queue. The tail moves under the CQ lock (poll_cq),
 * so a full-looking queue is re-read under that lock before giving up.
 */
static bool rq_overflow(struct vcx_wq *wq, uint32_t nreq, struct vcx_cq *cq)
{
	uint32_t used = wq->head - wq->tail;

	if (used + nreq < wq->max_post)
		return false;
	vcx_spin_lock(&cq->lock);
	used = wq->head - wq->tail;
	vcx_spin_unlock(&cq->lock);
	return used + nreq >= wq->max_post;
}

int vcx_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct vcx_qp *qp = to_vcx_qp(ibqp);
	struct vcx_wq *rq = &qp->rq;
	uint32_t nreq, i, j;
	int err = 0;

	if (ibqp->srq || !rq->wqe_cnt) {
		*bad_wr = wr;
		return EINVAL;
	}

	vcx_spin_lock(&rq->lock);
	for (nreq = 0; wr; nreq++, wr = wr->next) {
		uint32_t idx = (rq->head + nreq) & (rq->wqe_cnt - 1);
		uint8_t *wqe;

		if (rq_overflow(rq, nreq, to_vcx_cq(ibqp->recv_cq))) {
			err = ENOMEM;
			*bad_wr = wr;
			break;
		}
		if (!qp->rq_open || wr->num_sge < 0 || (uint32_t)wr->num_sge > rq->max_gs) {
			err = EINVAL;
			*bad_wr = wr;
			break;
		}
		wqe = (uint8_t *)qp->buf.buf + rq->offset + ((size_t)idx << rq->wqe_shift);
		for (i = 0, j = 0; i < (uint32_t)wr->num_sge; i++) {
			if (!wr->sg_list[i].length)
				continue;
			vcx_wqe_data_seg_set(wqe + j++ * VCX_WQE_DATA_SEG_SIZE,
					     wr->sg_list[i].length, wr->sg_list[i].lkey,
					     wr->sg_list[i].addr);
		}
		if (j < rq->max_gs)
			vcx_wqe_data_seg_set_end(wqe + j * VCX_WQE_DATA_SEG_SIZE);
		rq->wrid[idx] = wr->wr_id;
	}

	if (nreq) {
		rq->head += nreq;
		/* WQEs before the counter that hands them to the device. */
		udma_to_device_barrier();
		qp->dbrec[VCX_QP_DBR_RECV / 4] = htobe32(rq->head & VCX_WQE_INDEX_MASK);
	}
	vcx_spin_unlock(&rq->lock);
	return err;
}
