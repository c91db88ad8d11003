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
 * UD: SEND(_WITH_IMM). XRC_SEND: what RC carries, each WQE with the XRC segment naming the
 * target's SRQ (wr.qp_type.xrc.remote_srqn). Inline data for sends and writes. RC and UC,
 * when the device offers memory windows: BIND_MW and LOCAL_INV as UMR WQEs (libmlx5's
 * set_bind_wr layout; the window's current rkey in the control segment's immediate, the
 * new key byte, range, rights, QP (type 2) and the MR in the UMR segments). Their
 * completions report IBV_WC_BIND_MW / IBV_WC_LOCAL_INV.
 *
 * The steps after the translation of a WR (description checks, overflow check, WQE write
 * and slot bookkeeping, doorbell) are shared with the ibv_wr_* API in sq_wr.c, so both
 * produce the same WQE bytes for the same request.
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

/*
 * The PRM opcode for a verbs opcode on this QP, or -1 if the QP cannot carry it. Both
 * post_send and create_qp_ex (which refuses send_ops_flags outside this set) ask here.
 */
int vcx_sq_opcode(const struct vcx_qp *qp, enum ibv_wr_opcode op)
{
	enum ibv_qp_type type = qp->ibv_qp.qp_type;

	/* an XRC initiator is an RC requester whose WQEs name the remote SRQ */
	if (type == IBV_QPT_XRC_SEND)
		type = IBV_QPT_RC;

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
		return type == IBV_QPT_RC && qp->atomics_enabled ? VCX_OPCODE_ATOMIC_CS : -1;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return type == IBV_QPT_RC && qp->atomics_enabled ? VCX_OPCODE_ATOMIC_FA : -1;
	case IBV_WR_BIND_MW:
	case IBV_WR_LOCAL_INV:
		/* UMR WQEs on the QP, as libmlx5 posts them; the device must offer windows */
		return qp->mw_enabled ? VCX_OPCODE_UMR : -1;
	default:
		/* TSO, ATOMIC_WRITE, FLUSH, driver opcodes */
		return -1;
	}
}

/* Start describing a WR: opcode and the control segment flags. EINVAL if not postable. */
int vcx_sq_desc_start(const struct vcx_qp *qp, enum ibv_wr_opcode op, unsigned int send_flags,
		      struct vcx_send_desc *d)
{
	int opcode = vcx_sq_opcode(qp, op);

	if (opcode < 0)
		return EINVAL;
	memset(d, 0, sizeof(*d));
	d->opcode = opcode;
	d->fm_ce_se = qp->sq_signal_bits |
		      (send_flags & IBV_SEND_SIGNALED ? VCX_WQE_CE_CQE : 0) |
		      (send_flags & IBV_SEND_SOLICITED ? VCX_WQE_SE_SOLICITED : 0) |
		      (send_flags & IBV_SEND_FENCE ? VCX_WQE_FM_SMALL_AND_FENCE : 0);
	/* a UMR carries no data: IBV_SEND_INLINE means nothing to it */
	d->inline_data = opcode != VCX_OPCODE_UMR && (send_flags & IBV_SEND_INLINE);
	return 0;
}

/* The checks on a complete description that the WQE builder does not make. */
int vcx_sq_desc_check(const struct vcx_qp *qp, const struct vcx_send_desc *d)
{
	if (d->num_sge > qp->sq.max_gs)
		return EINVAL;
	/* An atomic returns 8 bytes into exactly one local buffer. */
	if (d->has_atomic && d->num_sge != 1)
		return EINVAL;
	/* Data written into the WQE only makes sense for data the requester sends. */
	if (d->inline_data && (d->opcode == VCX_OPCODE_RDMA_READ || d->has_atomic))
		return EINVAL;
	if (qp->ibv_qp.qp_type == IBV_QPT_UD && !d->av)
		return EINVAL;
	if ((qp->ibv_qp.qp_type == IBV_QPT_XRC_SEND) != d->has_xrc)
		return EINVAL;
	return 0;
}

/*
 * A memory window bind (mr and length > 0; length 0 unbinds a type 1 window) as libmlx5
 * checks it: no zero-based windows, rights among local write / remote read, write,
 * atomic, at most 2 GiB (one KLM entry).
 */
int vcx_sq_desc_bind(struct vcx_send_desc *d, const struct ibv_mw *mw, uint32_t rkey,
		     const struct ibv_mw_bind_info *bi)
{
	unsigned int acc = bi->mw_access_flags;

	if (!mw || (acc & ~(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)))
		return EINVAL;
	if (bi->length && !bi->mr)
		return EINVAL;
	if (bi->length > 1ull << 31)
		return EOPNOTSUPP;
	d->has_mw = true;
	d->mw_type2 = mw->type == IBV_MW_TYPE_2;
	d->mw_key = rkey & 0xff;
	d->imm = mw->rkey;
	d->mw_length = bi->length;
	if (!bi->length)
		return 0;
	d->mw_lkey = bi->mr->lkey;
	d->mw_addr = bi->addr;
	d->mw_access = (acc & IBV_ACCESS_LOCAL_WRITE ? VCX_MW_ACC_LW : 0) |
		       (acc & IBV_ACCESS_REMOTE_READ ? VCX_MW_ACC_RR : 0) |
		       (acc & IBV_ACCESS_REMOTE_WRITE ? VCX_MW_ACC_RW : 0) |
		       (acc & IBV_ACCESS_REMOTE_ATOMIC ? VCX_MW_ACC_A : 0);
	return 0;
}

/* Local invalidation: a UMR freeing the window bound to this QP (type 2). */
void vcx_sq_desc_local_inv(struct vcx_send_desc *d, uint32_t invalidate_rkey)
{
	d->has_mw = true;
	d->mw_inv = true;
	d->mw_type2 = true;
	d->imm = invalidate_rkey;
}

/* Translate one WR; EINVAL for what the QP cannot carry. */
static int describe_wr(struct vcx_qp *qp, const struct ibv_send_wr *wr,
		       struct vcx_send_desc *d)
{
	int err;

	if (wr->num_sge < 0)
		return EINVAL;
	err = vcx_sq_desc_start(qp, wr->opcode, wr->send_flags, d);
	if (err)
		return err;
	if (wr->opcode == IBV_WR_BIND_MW) {
		err = vcx_sq_desc_bind(d, wr->bind_mw.mw, wr->bind_mw.rkey,
				       &wr->bind_mw.bind_info);
		return err ? err : vcx_sq_desc_check(qp, d);
	}
	if (wr->opcode == IBV_WR_LOCAL_INV) {
		vcx_sq_desc_local_inv(d, wr->invalidate_rkey);
		return vcx_sq_desc_check(qp, d);
	}
	d->sg_list = (const struct vcx_sge *)wr->sg_list;
	d->num_sge = wr->num_sge;

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

	if (qp->ibv_qp.qp_type == IBV_QPT_XRC_SEND) {
		d->has_xrc = true;
		d->xrc_srqn = wr->qp_type.xrc.remote_srqn;
	}
	if (qp->ibv_qp.qp_type == IBV_QPT_UD && wr->wr.ud.ah) {
		d->av = to_vcx_ah(wr->wr.ud.ah)->av;
		d->qkey = wr->wr.ud.remote_qkey;
		d->dqpn = wr->wr.ud.remote_qpn;
	}
	return vcx_sq_desc_check(qp, d);
}

/* Would one more WR (after nreq of this batch) overrun the SQ? Caller holds the SQ lock. */
bool vcx_sq_overflow(struct vcx_wq *wq, uint32_t nreq, struct vcx_cq *cq)
{
	uint32_t used = wq->head - wq->tail;

	if (used + nreq < wq->max_post)
		return false;
	/* poll_cq advances tail under the CQ lock: look again before refusing. */
	vcx_spin_lock(&cq->lock);
	used = wq->head - wq->tail;
	vcx_spin_unlock(&cq->lock);
	return used + nreq >= wq->max_post;
}

/*
 * Write the WQE for d at the producer counter as WR nreq (0-based) of the current batch:
 * the one WQE builder of both post_send and the ibv_wr_* API. Records the wr_id and the
 * retire count of its slot and advances the producer counter; the caller publishes it.
 */
int vcx_sq_write_wqe(struct vcx_qp *qp, const struct vcx_send_desc *d, uint64_t wr_id,
		     uint32_t nreq, const uint8_t **last_ctrl)
{
	struct vcx_wq *sq = &qp->sq;
	struct vcx_sq_ring ring = {
		.buf = (uint8_t *)qp->buf.buf + sq->offset,
		.wqebb_cnt = sq->wqe_cnt,
	};
	uint32_t idx = sq->cur_post & (sq->wqe_cnt - 1);
	uint32_t ds;
	int err;

	err = vcx_sq_build_wqe(&ring, sq->cur_post, qp->ibv_qp.qp_num, d, qp->max_inline_data,
			       qp->max_wqe_ds, &ds);
	if (err)
		return err;
	sq->wrid[idx] = wr_id;
	sq->wqe_head[idx] = sq->head + nreq + 1;
	sq->wc_opcode[idx] = d->mw_inv ? IBV_WC_LOCAL_INV : IBV_WC_BIND_MW;
	*last_ctrl = vcx_sq_ring_at(&ring, sq->cur_post, 0);
	sq->cur_post += vcx_wqe_wqebbs(ds);
	return 0;
}

/* Publish the producer counter, then ring the doorbell with the last control segment. */
void vcx_sq_ring_doorbell(struct vcx_qp *qp, const uint8_t *last_ctrl)
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
	const uint8_t *last_ctrl = NULL;
	struct vcx_send_desc d;
	uint32_t nreq;
	int err = 0;

	if (!sq->wqe_cnt) {
		*bad_wr = wr;
		return EINVAL;
	}

	vcx_spin_lock(&sq->lock);
	for (nreq = 0; wr; nreq++, wr = wr->next) {
		/* Before RTS libmlx5 answers ENOMEM too (its per-state SGE limit is -1). */
		if (!qp->sq_open || vcx_sq_overflow(sq, nreq, to_vcx_cq(ibqp->send_cq))) {
			err = ENOMEM;
			*bad_wr = wr;
			break;
		}
		err = describe_wr(qp, wr, &d);
		if (!err)
			err = vcx_sq_write_wqe(qp, &d, wr->wr_id, nreq, &last_ctrl);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}

	if (nreq) {
		sq->head += nreq;
		vcx_sq_ring_doorbell(qp, last_ctrl);
	}
	vcx_spin_unlock(&sq->lock);
	return err;
}
