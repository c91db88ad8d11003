// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vcx provider: posting sends.
 *
 * Each ibv_send_wr becomes one send WQE in the SQ ring (layout in sq_wqe.c). After the
 * batch the library publishes the new producer counter (in WQEBBs) in the doorbell record
 * and rings the QP's doorbell register with the first 8 bytes of the last WQE's control
 * segment, alternating between the register's two halves as the PRM requires.
 *
 * Operations: RC: SEND, SEND_WITH_IMM, SEND_WITH_INV, RDMA_WRITE(_WITH_IMM), RDMA_READ,
 * ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD. UC: SEND(_WITH_IMM), RDMA_WRITE(_WITH_IMM).
 * UD: SEND(_WITH_IMM). Inline data for sends and writes. Memory windows and local
 * invalidation need UMR WQEs, which this library does not build: they fail with EINVAL.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <util/mmio.h>
#include <util/udma_barrier.h>

#include "vcx.h"
#include "sq_wqe.h"
#include "vcx/prm-wqe.h"

static_assert(sizeof(struct vcx_sge) == sizeof(struct ibv_sge), "vcx_sge is ibv_sge");
static_assert(offsetof(struct vcx_sge, addr) == offsetof(struct ibv_sge, addr), "addr");
static_assert(offsetof(struct vcx_sge, length) == offsetof(struct ibv_sge, length), "len");
static_assert(offsetof(struct vcx_sge, lkey) == offsetof(struct ibv_sge, lkey), "lkey");

/* The PRM opcode for a verbs opcode on this QP type, or -1 if it cannot be posted. */
static int send_opcode(enum ibv_qp_type type, enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND:
		return VCX_OPCODE_SEND;
	case IBV_WR_SEND_WITH_IMM:
		return VCX_OPCODE_SEND_IMM;
	case IBV_WR_RDMA_WRITE:
		return type == IBV_QPT_UD ? -1 : VCX_OPCODE_RDMA_WRITE;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return type == IBV_QPT_UD ? -1 : VCX_OPCODE_RDMA_WRITE_IMM;
	case IBV_WR_SEND_WITH_INV:
		return type == IBV_QPT_RC ? VCX_OPCODE_SEND_INVAL : -1;
	case IBV_WR_RDMA_READ:
		return type == IBV_QPT_RC ? VCX_OPCODE_RDMA_READ : -1;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return type == IBV_QPT_RC ? VCX_OPCODE_ATOMIC_CS : -1;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return type == IBV_QPT_RC ? VCX_OPCODE_ATOMIC_FA : -1;
	default:
		return -1;
	}
}

/* Translate one WR; EINVAL for what the QP cannot carry. */
static int describe_wr(struct vcx_qp *qp, const struct ibv_send_wr *wr,
		       struct vcx_send_desc *d)
{
	int opcode = send_opcode(qp->ibv_qp.qp_type, wr->opcode);

	if (opcode < 0 || wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->sq.max_gs)
		return EINVAL;
	memset(d, 0, sizeof(*d));
	d->opcode = opcode;
	d->fm_ce_se = qp->sq_signal_bits |
		      (wr->send_flags & IBV_SEND_SIGNALED ? VCX_WQE_CE_CQE : 0) |
		      (wr->send_flags & IBV_SEND_SOLICITED ? VCX_WQE_SE_SOLICITED : 0) |
		      (wr->send_flags & IBV_SEND_FENCE ? VCX_WQE_FM_SMALL_AND_FENCE : 0);
	d->sg_list = (const struct vcx_sge *)wr->sg_list;
	d->num_sge = wr->num_sge;
	d->inline_data = wr->send_flags & IBV_SEND_INLINE;

	switch (wr->opcode) {
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		d->imm = be32toh(wr->imm_data);
		break;
	case IBV_WR_SEND_WITH_INV:
		d->imm = wr->invalidate_rkey;
		break;
	default:
		break;
	}

	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		d->has_raddr = true;
		d->raddr = wr->wr.rdma.remote_addr;
		d->rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		if (!qp->atomics_enabled || wr->num_sge != 1)
			return EINVAL;
		d->has_raddr = true;
		d->raddr = wr->wr.atomic.remote_addr;
		d->rkey = wr->wr.atomic.rkey;
		d->has_atomic = true;
		if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP) {
			d->swap_add = wr->wr.atomic.swap;
			d->compare = wr->wr.atomic.compare_add;
		} else {
			d->swap_add = wr->wr.atomic.compare_add;
		}
		break;
	default:
		break;
	}
	/* Data written into the WQE only makes sense for data the requester sends. */
	if (d->inline_data && (wr->opcode == IBV_WR_RDMA_READ || d->has_atomic))
		return EINVAL;

	if (qp->ibv_qp.qp_type == IBV_QPT_UD) {
		d->av = to_vcx_ah(wr->wr.ud.ah)->av;
		d->qkey = wr->wr.ud.remote_qkey;
		d->dqpn = wr->wr.ud.remote_qpn;
	}
	return 0;
}

static bool sq_overflow(struct vcx_wq *wq, uint32_t nreq, struct vcx_cq *cq)
{
	uint32_t used = wq->head - wq->tail;

	if (used + nreq < wq->max_post)
		return false;
	vcx_spin_lock(&cq->lock);
	used = wq->head - wq->tail;
	vcx_spin_unlock(&cq->lock);
	return used + nreq >= wq->max_post;
}

/* Publish the producer counter, then ring the doorbell with the last control segment. */
static void ring_sq_doorbell(struct vcx_qp *qp, const uint8_t *last_ctrl)
{
	struct vcx_bfreg *bf = qp->bfreg;
	__be64 db;

	udma_to_device_barrier();
	qp->dbrec[VCX_QP_DBR_SEND / 4] = htobe32(qp->sq.cur_post & VCX_WQE_INDEX_MASK);

	memcpy(&db, last_ctrl, sizeof(db));
	vcx_spin_lock(&bf->lock);
	mmio_wc_start();
	mmio_write64_be((uint8_t *)bf->reg + bf->offset, db);
	mmio_flush_writes();
	bf->offset ^= bf->buf_size;
	vcx_spin_unlock(&bf->lock);
}

int vcx_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	struct vcx_qp *qp = to_vcx_qp(ibqp);
	struct vcx_wq *sq = &qp->sq;
	struct vcx_sq_ring ring = {
		.buf = (uint8_t *)qp->buf.buf + sq->offset,
		.wqebb_cnt = sq->wqe_cnt,
	};
	const uint8_t *last_ctrl = NULL;
	struct vcx_send_desc d;
	uint32_t nreq, ds;
	int err = 0;

	if (!sq->wqe_cnt) {
		*bad_wr = wr;
		return EINVAL;
	}

	vcx_spin_lock(&sq->lock);
	for (nreq = 0; wr; nreq++, wr = wr->next) {
		uint32_t idx = sq->cur_post & (sq->wqe_cnt - 1);

		if (sq_overflow(sq, nreq, to_vcx_cq(ibqp->send_cq))) {
			err = ENOMEM;
			*bad_wr = wr;
			break;
		}
		err = describe_wr(qp, wr, &d);
		if (!err)
			err = vcx_sq_build_wqe(&ring, sq->cur_post, ibqp->qp_num, &d,
					       qp->max_inline_data, qp->max_wqe_ds, &ds);
		if (err) {
			*bad_wr = wr;
			break;
		}
		sq->wrid[idx] = wr->wr_id;
		sq->wqe_head[idx] = sq->head + nreq + 1;
		last_ctrl = vcx_sq_ring_at(&ring, sq->cur_post, 0);
		sq->cur_post += vcx_wqe_wqebbs(ds);
	}

	if (nreq) {
		sq->head += nreq;
		ring_sq_doorbell(qp, last_ctrl);
	}
	vcx_spin_unlock(&sq->lock);
	return err;
}
