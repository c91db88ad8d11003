// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vcx provider: the ibv_wr_* send API of QPs created with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS.
 *
 * Between wr_start and wr_complete/wr_abort the QP's SQ lock is held (as libmlx5 does, so
 * post_send and ibv_wr_* batches of other threads cannot interleave with the batch). A WR
 * builder (wr_send, wr_rdma_write, ...) starts a struct vcx_send_desc, the description
 * post_send makes of an ibv_send_wr; the setters complete it; once the WR has its data
 * and, on UD, its address, it is written into the SQ by vcx_sq_write_wqe(), the WQE
 * writer post_send uses. So the two APIs produce the same WQE bytes for the same request.
 * A WR without a DATA setter is written when the next builder runs or at wr_complete (a
 * zero-length operation, as post_send with num_sge 0).
 *
 * The builder and setter functions return nothing: the first error (SQ full: ENOMEM;
 * opcode the QP cannot carry, too many gather entries, inline data too long, a setter
 * without a WR, UD without an address: EINVAL) is kept, nothing more is written, and
 * wr_complete returns it after rolling the producer counter back to where wr_start found
 * it, so the whole batch is dropped. Only a successful wr_complete publishes the producer
 * counter in the doorbell record and rings the doorbell register, once for the batch.
 *
 * Before the QP reaches RTS (and again after RESET) wr_complete drops the batch with
 * EINVAL, as libmlx5's does.
 *
 * Inline data is copied by its setter (the application may reuse the buffer at once) into
 * a per-QP staging buffer and from there into the WQE. IBV_SEND_INLINE in wr_flags makes
 * wr_set_sge/wr_set_sge_list inline their buffers, as the flag does for post_send.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <ccan/array_size.h>

#include "vcx.h"
#include "sq_wqe.h"

static struct vcx_qp *wr_qp(struct ibv_qp_ex *qpx)
{
	return to_vcx_qp(&qpx->qp_base);
}

static void wr_fail(struct vcx_qp *qp, int err)
{
	if (!qp->wr.err)
		qp->wr.err = err;
}

/* Write the pending WR into the SQ, or record why it cannot be. */
static void write_pending(struct vcx_qp *qp)
{
	struct vcx_wr_batch *b = &qp->wr;
	int err;

	if (!b->pending)
		return;
	b->pending = false;
	if (b->err)
		return;
	err = vcx_sq_desc_check(qp, &b->desc);
	if (!err)
		err = vcx_sq_write_wqe(qp, &b->desc, b->wr_id, b->nreq, &b->last_ctrl);
	if (err) {
		wr_fail(qp, err);
		return;
	}
	b->nreq++;
}

/*
 * A WR is complete with its data and, on UD, its destination, on XRC_SEND its remote SRQ
 * (libmlx5 counts the same two setters for both), in either order.
 */
static void write_if_complete(struct vcx_qp *qp)
{
	enum ibv_qp_type type = qp->ibv_qp.qp_type;

	if (qp->wr.has_data && (type != IBV_QPT_UD || qp->wr.desc.av) &&
	    (type != IBV_QPT_XRC_SEND || qp->wr.desc.has_xrc))
		write_pending(qp);
}

/* Start WR op with the QP's wr_id and wr_flags; NULL once the batch has failed. */
static struct vcx_send_desc *start_wr(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op)
{
	struct vcx_qp *qp = wr_qp(qpx);
	struct vcx_wr_batch *b = &qp->wr;
	int err;

	write_pending(qp);
	if (b->err)
		return NULL;
	if (!qp->sq.wqe_cnt) {
		wr_fail(qp, EINVAL);
		return NULL;
	}
	if (vcx_sq_overflow(&qp->sq, b->nreq, to_vcx_cq(qp->ibv_qp.send_cq))) {
		wr_fail(qp, ENOMEM);
		return NULL;
	}
	err = vcx_sq_desc_start(qp, op, qpx->wr_flags, &b->desc);
	if (err) {
		wr_fail(qp, err);
		return NULL;
	}
	b->wr_id = qpx->wr_id;
	b->pending = true;
	b->has_data = false;
	return &b->desc;
}

static void set_raddr(struct vcx_send_desc *d, uint32_t rkey, uint64_t remote_addr)
{
	d->has_raddr = true;
	d->raddr = remote_addr;
	d->rkey = rkey;
}

/* WR builders */

static void wr_send(struct ibv_qp_ex *qpx)
{
	start_wr(qpx, IBV_WR_SEND);
}

static void wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm_data)
{
	struct vcx_send_desc *d = start_wr(qpx, IBV_WR_SEND_WITH_IMM);

	if (d)
		d->imm = be32toh(imm_data);
}

static void wr_send_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct vcx_send_desc *d = start_wr(qpx, IBV_WR_SEND_WITH_INV);

	if (d)
		d->imm = invalidate_rkey;
}

static void wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr)
{
	struct vcx_send_desc *d = start_wr(qpx, IBV_WR_RDMA_WRITE);

	if (d)
		set_raddr(d, rkey, remote_addr);
}

static void wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
			      __be32 imm_data)
{
	struct vcx_send_desc *d = start_wr(qpx, IBV_WR_RDMA_WRITE_WITH_IMM);

	if (d) {
		set_raddr(d, rkey, remote_addr);
		d->imm = be32toh(imm_data);
	}
}

static void wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr)
{
	struct vcx_send_desc *d = start_wr(qpx, IBV_WR_RDMA_READ);

	if (d)
		set_raddr(d, rkey, remote_addr);
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
			      uint64_t compare, uint64_t swap)
{
	struct vcx_send_desc *d = start_wr(qpx, IBV_WR_ATOMIC_CMP_AND_SWP);

	if (d) {
		set_raddr(d, rkey, remote_addr);
		d->has_atomic = true;
		d->swap_add = swap;
		d->compare = compare;
	}
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
				uint64_t add)
{
	struct vcx_send_desc *d = start_wr(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD);

	if (d) {
		set_raddr(d, rkey, remote_addr);
		d->has_atomic = true;
		d->swap_add = add;
	}
}

/*
 * Operations this library cannot build (no TSO, atomic write or flush): create_qp_ex
 * refuses to offer them, and if called anyway they fail the batch rather than post
 * something else.
 */
static void wr_refuse(struct ibv_qp_ex *qpx)
{
	struct vcx_qp *qp = wr_qp(qpx);

	write_pending(qp);
	wr_fail(qp, EINVAL);
}

/*
 * Memory windows (RC, UC on a device with windows): complete WRs at once, no setters.
 * wr_bind_mw binds as type 2 whatever the window, as libmlx5's does.
 */
static void wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw, uint32_t rkey,
		       const struct ibv_mw_bind_info *bind_info)
{
	struct vcx_send_desc *d = start_wr(qpx, IBV_WR_BIND_MW);
	struct vcx_qp *qp = wr_qp(qpx);
	int err;

	if (!d)
		return;
	if (!bind_info || (bind_info->mw_access_flags & IBV_ACCESS_ZERO_BASED)) {
		qp->wr.pending = false;
		wr_fail(qp, EINVAL);
		return;
	}
	err = vcx_sq_desc_bind(d, mw, rkey, bind_info);
	if (err) {
		qp->wr.pending = false;
		wr_fail(qp, err);
		return;
	}
	d->mw_type2 = true;
	qp->wr.has_data = true;
	write_pending(qp);
}

static void wr_local_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct vcx_send_desc *d = start_wr(qpx, IBV_WR_LOCAL_INV);
	struct vcx_qp *qp = wr_qp(qpx);

	if (!d)
		return;
	vcx_sq_desc_local_inv(d, invalidate_rkey);
	qp->wr.has_data = true;
	write_pending(qp);
}

static void wr_send_tso(struct ibv_qp_ex *qpx, void *hdr, uint16_t hdr_sz, uint16_t mss)
{
	wr_refuse(qpx);
}

static void wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
			    const void *atomic_wr)
{
	wr_refuse(qpx);
}

static void wr_flush(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr, size_t len,
		     uint8_t type, uint8_t level)
{
	wr_refuse(qpx);
}


/* Setters: they apply to the WR the last builder started. */

static struct vcx_wr_batch *setter(struct vcx_qp *qp)
{
	if (qp->wr.err)
		return NULL;
	if (!qp->wr.pending) {
		wr_fail(qp, EINVAL);
		return NULL;
	}
	return &qp->wr;
}

static struct vcx_wr_batch *data_setter(struct vcx_qp *qp)
{
	struct vcx_wr_batch *b = setter(qp);

	if (b && b->has_data) {
		wr_fail(qp, EINVAL);	/* one DATA setter per WR */
		return NULL;
	}
	return b;
}

static void wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge,
			    const struct ibv_sge *sg_list)
{
	struct vcx_qp *qp = wr_qp(qpx);
	struct vcx_wr_batch *b = data_setter(qp);

	if (!b)
		return;
	if (num_sge > qp->sq.max_gs) {
		wr_fail(qp, EINVAL);
		return;
	}
	if (num_sge)
		memcpy(b->sge, sg_list, num_sge * sizeof(*b->sge));
	b->desc.sg_list = b->sge;
	b->desc.num_sge = num_sge;
	b->has_data = true;
	write_if_complete(qp);
}

static void wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	wr_set_sge_list(qpx, 1, &sge);
}

static void wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t num_buf,
				    const struct ibv_data_buf *buf_list)
{
	struct vcx_qp *qp = wr_qp(qpx);
	struct vcx_wr_batch *b = data_setter(qp);
	size_t total = 0, i;

	if (!b)
		return;
	for (i = 0; i < num_buf; i++) {
		if (buf_list[i].length > qp->max_inline_data - total) {
			wr_fail(qp, EINVAL);
			return;
		}
		memcpy(b->inline_buf + total, buf_list[i].addr, buf_list[i].length);
		total += buf_list[i].length;
	}
	b->inline_sge.addr = (uintptr_t)b->inline_buf;
	b->inline_sge.length = total;
	b->inline_sge.lkey = 0;
	b->desc.sg_list = &b->inline_sge;
	b->desc.num_sge = 1;
	b->desc.inline_data = true;
	b->has_data = true;
	write_if_complete(qp);
}

static void wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	wr_set_inline_data_list(qpx, 1, &buf);
}

static void wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah, uint32_t remote_qpn,
			   uint32_t remote_qkey)
{
	struct vcx_qp *qp = wr_qp(qpx);
	struct vcx_wr_batch *b = setter(qp);

	if (!b)
		return;
	if (qp->ibv_qp.qp_type != IBV_QPT_UD || !ah) {
		wr_fail(qp, EINVAL);
		return;
	}
	b->desc.av = to_vcx_ah(ah)->av;
	b->desc.dqpn = remote_qpn;
	b->desc.qkey = remote_qkey;
	write_if_complete(qp);
}

/* The remote XRC SRQ of an XRC_SEND WR (the XRC segment of its WQE). */
static void wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t remote_srqn)
{
	struct vcx_qp *qp = wr_qp(qpx);
	struct vcx_wr_batch *b = setter(qp);

	if (!b)
		return;
	if (qp->ibv_qp.qp_type != IBV_QPT_XRC_SEND) {
		wr_fail(qp, EINVAL);
		return;
	}
	b->desc.has_xrc = true;
	b->desc.xrc_srqn = remote_srqn;
	write_if_complete(qp);
}

/* The batch */

static void wr_start(struct ibv_qp_ex *qpx)
{
	struct vcx_qp *qp = wr_qp(qpx);

	vcx_spin_lock(&qp->sq.lock);
	qp->wr.cur_post_rb = qp->sq.cur_post;
	qp->wr.nreq = 0;
	qp->wr.err = 0;
	qp->wr.pending = false;
	qp->wr.last_ctrl = NULL;
}

static int wr_complete(struct ibv_qp_ex *qpx)
{
	struct vcx_qp *qp = wr_qp(qpx);
	struct vcx_wr_batch *b = &qp->wr;
	int err;

	write_pending(qp);
	/* Before RTS, libmlx5's wr_complete drops the batch with EINVAL. */
	err = qp->sq_open ? b->err : EINVAL;
	if (err) {
		/* Nothing was published: forgetting the written WQEs drops the batch. */
		qp->sq.cur_post = b->cur_post_rb;
	} else if (b->nreq) {
		qp->sq.head += b->nreq;
		vcx_sq_ring_doorbell(qp, b->last_ctrl);
	}
	vcx_spin_unlock(&qp->sq.lock);
	return err;
}

static void wr_abort(struct ibv_qp_ex *qpx)
{
	struct vcx_qp *qp = wr_qp(qpx);

	qp->wr.pending = false;
	qp->sq.cur_post = qp->wr.cur_post_rb;
	vcx_spin_unlock(&qp->sq.lock);
}

/* The send_ops_flags bits and the verbs opcode each stands for. */
static const struct {
	uint64_t flag;
	enum ibv_wr_opcode op;
} send_ops[] = {
	{ IBV_QP_EX_WITH_RDMA_WRITE, IBV_WR_RDMA_WRITE },
	{ IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_WRITE_WITH_IMM },
	{ IBV_QP_EX_WITH_SEND, IBV_WR_SEND },
	{ IBV_QP_EX_WITH_SEND_WITH_IMM, IBV_WR_SEND_WITH_IMM },
	{ IBV_QP_EX_WITH_RDMA_READ, IBV_WR_RDMA_READ },
	{ IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_CMP_AND_SWP },
	{ IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD, IBV_WR_ATOMIC_FETCH_AND_ADD },
	{ IBV_QP_EX_WITH_LOCAL_INV, IBV_WR_LOCAL_INV },
	{ IBV_QP_EX_WITH_BIND_MW, IBV_WR_BIND_MW },
	{ IBV_QP_EX_WITH_SEND_WITH_INV, IBV_WR_SEND_WITH_INV },
	{ IBV_QP_EX_WITH_TSO, IBV_WR_TSO },
	{ IBV_QP_EX_WITH_FLUSH, IBV_WR_FLUSH },
	{ IBV_QP_EX_WITH_ATOMIC_WRITE, IBV_WR_ATOMIC_WRITE },
};

/*
 * EOPNOTSUPP unless this QP (type, atomics) can carry every requested operation, as
 * libmlx5 refuses operations the device lacks. Needs qp_type, atomics_enabled and
 * mw_enabled.
 */
int vcx_qp_wr_check_ops(const struct vcx_qp *qp, uint64_t send_ops_flags)
{
	uint64_t known = 0;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(send_ops); i++) {
		known |= send_ops[i].flag;
		if ((send_ops_flags & send_ops[i].flag) && vcx_sq_opcode(qp, send_ops[i].op) < 0)
			return EOPNOTSUPP;
	}
	return send_ops_flags & ~known ? EOPNOTSUPP : 0;
}

/* Staging for the setters and the qp_ex entry points; needs the SQ geometry. */
int vcx_qp_wr_init(struct vcx_qp *qp)
{
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;

	qp->wr.sge = calloc(max_t(uint32_t, qp->sq.max_gs, 1), sizeof(*qp->wr.sge));
	qp->wr.inline_buf = calloc(max_t(uint32_t, qp->max_inline_data, 1), 1);
	if (!qp->wr.sge || !qp->wr.inline_buf)
		return ENOMEM;

	qpx->wr_start = wr_start;
	qpx->wr_complete = wr_complete;
	qpx->wr_abort = wr_abort;
	/* Every builder is set; those the QP type cannot carry fail the batch (EINVAL). */
	qpx->wr_send = wr_send;
	qpx->wr_send_imm = wr_send_imm;
	qpx->wr_send_inv = wr_send_inv;
	qpx->wr_rdma_write = wr_rdma_write;
	qpx->wr_rdma_write_imm = wr_rdma_write_imm;
	qpx->wr_rdma_read = wr_rdma_read;
	qpx->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	qpx->wr_atomic_fetch_add = wr_atomic_fetch_add;
	qpx->wr_bind_mw = wr_bind_mw;
	qpx->wr_local_inv = wr_local_inv;
	qpx->wr_send_tso = wr_send_tso;
	qpx->wr_atomic_write = wr_atomic_write;
	qpx->wr_flush = wr_flush;
	qpx->wr_set_ud_addr = wr_set_ud_addr;
	qpx->wr_set_xrc_srqn = wr_set_xrc_srqn;
	qpx->wr_set_sge = wr_set_sge;
	qpx->wr_set_sge_list = wr_set_sge_list;
	qpx->wr_set_inline_data = wr_set_inline_data;
	qpx->wr_set_inline_data_list = wr_set_inline_data_list;
	return 0;
}

void vcx_qp_wr_cleanup(struct vcx_qp *qp)
{
	free(qp->wr.sge);
	free(qp->wr.inline_buf);
}
