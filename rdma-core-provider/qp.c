// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vcx provider: queue pair lifecycle (RC, UC, UD, XRC_SEND; XRC_RECV in xrc.c).
 *
 * The library sizes and allocates the work queues, the kernel pins them and creates the QP
 * (create_qp udata, include/vcx/abi.h). create_qp and create_qp_ex share one path; with
 * IBV_QP_INIT_ATTR_SEND_OPS_FLAGS the QP also gets the ibv_wr_* entry points (sq_wr.c).
 * One buffer holds the RQ (rq.wqe_cnt WQEs of 2^rq.wqe_shift bytes) at offset 0 and the SQ
 * (sq.wqe_cnt 64-byte WQEBBs) after it; an 8-byte doorbell record holds the receive and
 * send counters. Posting lives in sq.c and rq.c; CQEs find the QP through the context's QP
 * table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vcx.h"
#include "vcx-abi.h"
#include "vcx/prm-wqe.h"

struct vcx_qp *vcx_find_qp(struct vcx_context *ctx, uint32_t qpn)
{
	return vcx_table_find(&ctx->qp_table, qpn);
}

/*
 * Bytes of the segments a send WQE of this QP type carries before its data. On a device
 * with memory windows RC and UC WQEs also leave room for a bind (UMR control, mkey, one
 * KLM padded to 64 bytes: 192 bytes with the control segment), as libmlx5's sq_overhead.
 */
static uint32_t sq_overhead(const struct vcx_context *ctx, enum ibv_qp_type type)
{
	uint32_t mw = ctx->mw ? VCX_WQE_MW_BIND_SIZE : 0;

	switch (type) {
	case IBV_QPT_UD:
		return VCX_WQE_CTRL_SIZE + VCX_WQE_AV_SIZE;
	case IBV_QPT_UC:
		return VCX_WQE_CTRL_SIZE + max_t(uint32_t, VCX_WQE_RADDR_SEG_SIZE, mw);
	case IBV_QPT_XRC_SEND:	/* the XRC segment, then what an RC WQE carries */
		return VCX_WQE_CTRL_SIZE + VCX_WQE_XRC_SEG_SIZE + VCX_WQE_RADDR_SEG_SIZE +
		       VCX_WQE_ATOMIC_SEG_SIZE;
	default: /* RC: an atomic needs the remote address and the atomic segment */
		return VCX_WQE_CTRL_SIZE +
		       max_t(uint32_t, VCX_WQE_RADDR_SEG_SIZE + VCX_WQE_ATOMIC_SEG_SIZE, mw);
	}
}

static int size_sq(struct vcx_context *ctx, struct vcx_qp *qp,
		   const struct ibv_qp_init_attr_ex *attr)
{
	const struct ibv_qp_cap *cap = &attr->cap;
	uint32_t overhead = sq_overhead(ctx, attr->qp_type);
	uint32_t data, wqe_size, wqebbs;

	if (!cap->max_send_wr)
		return 0;
	if (cap->max_send_sge > ctx->max_sge || cap->max_inline_data > ctx->max_inline_data)
		return EINVAL;
	data = cap->max_send_sge * VCX_WQE_DATA_SEG_SIZE;
	if (cap->max_inline_data &&
	    vcx_wqe_inline_ds(cap->max_inline_data) * VCX_WQE_DS > data)
		data = vcx_wqe_inline_ds(cap->max_inline_data) * VCX_WQE_DS;
	wqe_size = align(overhead + data, VCX_SEND_WQEBB);
	if (wqe_size > ctx->max_sq_desc_sz ||
	    wqe_size > VCX_SEND_WQE_MAX_WQEBBS * VCX_SEND_WQEBB)
		return EINVAL;
	wqebbs = wqe_size / VCX_SEND_WQEBB;
	if ((uint64_t)cap->max_send_wr * wqebbs > ctx->max_send_wqebb)
		return EINVAL;

	qp->sq.wqe_cnt = roundup_pow_of_two(cap->max_send_wr * wqebbs);
	qp->sq.wqe_shift = VCX_SEND_WQEBB_SHIFT;
	qp->sq.max_post = qp->sq.wqe_cnt / wqebbs;
	/* Everything the largest WQE leaves room for, capped by the DS count field. */
	qp->max_wqe_ds = min_t(uint32_t, wqe_size / VCX_WQE_DS, VCX_WQE_CTRL_DS_MAX);
	data = qp->max_wqe_ds * VCX_WQE_DS - overhead;
	qp->sq.max_gs = min_t(uint32_t, data / VCX_WQE_DATA_SEG_SIZE, ctx->max_sge);
	qp->max_inline_data = min_t(uint32_t, data - VCX_WQE_INLINE_HDR_SIZE,
				    ctx->max_inline_data);
	return 0;
}

static int size_rq(struct vcx_context *ctx, struct vcx_qp *qp,
		   const struct ibv_qp_init_attr_ex *attr)
{
	const struct ibv_qp_cap *cap = &attr->cap;
	uint32_t wqe_size;

	/* XRC_SEND: nothing is received (libmlx5 ignores the receive capacities too) */
	if (attr->srq || !cap->max_recv_wr || attr->qp_type == IBV_QPT_XRC_SEND)
		return 0;
	if (cap->max_recv_sge > ctx->max_sge || cap->max_recv_wr > ctx->max_recv_wr)
		return EINVAL;
	wqe_size = roundup_pow_of_two(max_t(uint32_t, cap->max_recv_sge, 1) *
				      VCX_WQE_DATA_SEG_SIZE);
	if (wqe_size > ctx->max_rq_desc_sz)
		return EINVAL;
	qp->rq.wqe_cnt = roundup_pow_of_two(cap->max_recv_wr);
	qp->rq.wqe_shift = ilog32(wqe_size - 1);
	qp->rq.max_post = qp->rq.wqe_cnt;
	qp->rq.max_gs = wqe_size / VCX_WQE_DATA_SEG_SIZE;
	return 0;
}

static int alloc_wq_arrays(struct vcx_qp *qp)
{
	if (qp->sq.wqe_cnt) {
		qp->sq.wrid = calloc(qp->sq.wqe_cnt, sizeof(*qp->sq.wrid));
		qp->sq.wqe_head = calloc(qp->sq.wqe_cnt, sizeof(*qp->sq.wqe_head));
		qp->sq.wc_opcode = calloc(qp->sq.wqe_cnt, sizeof(*qp->sq.wc_opcode));
		if (!qp->sq.wrid || !qp->sq.wqe_head || !qp->sq.wc_opcode)
			return ENOMEM;
	}
	if (qp->rq.wqe_cnt) {
		qp->rq.wrid = calloc(qp->rq.wqe_cnt, sizeof(*qp->rq.wrid));
		if (!qp->rq.wrid)
			return ENOMEM;
	}
	return 0;
}

static void free_wq_arrays(struct vcx_qp *qp)
{
	free(qp->sq.wrid);
	free(qp->sq.wqe_head);
	free(qp->sq.wc_opcode);
	free(qp->rq.wrid);
}

static void reset_wq_indices(struct vcx_qp *qp)
{
	qp->sq.head = qp->sq.tail = qp->sq.cur_post = 0;
	qp->rq.head = qp->rq.tail = qp->rq.cur_post = 0;
}

static void qp_free(struct vcx_context *ctx, struct vcx_qp *qp)
{
	if (qp->dbrec)
		vcx_db_free(&ctx->db_pool, qp->dbrec);
	vcx_buf_free(&qp->buf);
	free_wq_arrays(qp);
	vcx_qp_wr_cleanup(qp);
	vcx_spinlock_destroy(&qp->sq.lock);
	vcx_spinlock_destroy(&qp->rq.lock);
	free(qp);
}

/*
 * The create flags libibverbs knows (uverbs refuses other bits with EINVAL). The device
 * implements none of them: no multicast (so no self-loopback blocking), no FCS scatter,
 * no VLAN stripping, no source QPN (underlay) QPs, no end padding. vcx.ko answers
 * EOPNOTSUPP for each, as mlx5_ib does for flags its device lacks; the library refuses
 * them before the round trip.
 */
#define VCX_QP_CREATE_FLAGS_KNOWN (IBV_QP_CREATE_BLOCK_SELF_MCAST_LB | \
				   IBV_QP_CREATE_SCATTER_FCS | \
				   IBV_QP_CREATE_CVLAN_STRIPPING | \
				   IBV_QP_CREATE_SOURCE_QPN | \
				   IBV_QP_CREATE_PCI_WRITE_END_PADDING)

/* What create_qp_ex accepts in comp_mask (the rest: EINVAL, as libmlx5 for unknown bits). */
#define VCX_QP_INIT_ATTR_SUPPORTED (IBV_QP_INIT_ATTR_PD | \
				    IBV_QP_INIT_ATTR_XRCD | \
				    IBV_QP_INIT_ATTR_CREATE_FLAGS | \
				    IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)

static int check_init_attr(const struct ibv_qp_init_attr_ex *attr)
{
	uint32_t mask = attr->comp_mask;

	/* RSS (hash and indirection tables) and TSO headers need objects and offloads the
	 * device does not have (TIRs, raw packet QPs). */
	if (mask & (IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH))
		return EOPNOTSUPP;
	/* Unknown bits, and a TSO header, which libmlx5 refuses on every QP type but raw
	 * packet (not a vcx QP type). */
	if (mask & ~VCX_QP_INIT_ATTR_SUPPORTED)
		return EINVAL;
	if (!(mask & IBV_QP_INIT_ATTR_PD) || !attr->pd)
		return EINVAL;
	if (attr->qp_type != IBV_QPT_RC && attr->qp_type != IBV_QPT_UC &&
	    attr->qp_type != IBV_QPT_UD && attr->qp_type != IBV_QPT_XRC_SEND)
		return EOPNOTSUPP;
	/* the domain is the target's (XRC_RECV, xrc.c); an initiator has none */
	if (mask & IBV_QP_INIT_ATTR_XRCD)
		return EINVAL;
	/* an initiator's requests name their SRQ; it has none of its own */
	if (attr->qp_type == IBV_QPT_XRC_SEND && attr->srq)
		return EINVAL;
	if (mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) {
		if (attr->create_flags & ~VCX_QP_CREATE_FLAGS_KNOWN)
			return EINVAL;
		if ((attr->create_flags & IBV_QP_CREATE_SOURCE_QPN) &&
		    attr->qp_type != IBV_QPT_UD)
			return EINVAL;	/* libmlx5's own check */
		if (attr->create_flags)
			return EOPNOTSUPP;
	}
	return 0;
}

/* The kernel command: the extended one when the request carries extended fields. */
static int create_qp_cmd(struct vcx_context *ctx, struct vcx_qp *qp,
			 struct ibv_qp_init_attr_ex *attr, const struct vcx_create_qp_req *req,
			 struct vcx_create_qp_resp *out)
{
	struct ibv_context *ibctx = &ctx->ibv_ctx.context;
	int err;

	if (attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) {
		struct vcx_create_qp_ex_cmd_resp resp = {};
		struct vcx_create_qp_ex_cmd cmd = {};

		cmd.drv_payload = *req;
		err = ibv_cmd_create_qp_ex2(ibctx, &qp->vqp, attr, &cmd.ibv_cmd, sizeof(cmd),
					    &resp.ibv_resp, sizeof(resp));
		*out = resp.drv_payload;
	} else {
		struct vcx_create_qp_cmd_resp resp = {};
		struct vcx_create_qp_cmd cmd = {};

		cmd.drv_payload = *req;
		err = ibv_cmd_create_qp_ex(ibctx, &qp->vqp, attr, &cmd.ibv_cmd, sizeof(cmd),
					   &resp.ibv_resp, sizeof(resp));
		*out = resp.drv_payload;
	}
	return err;
}

/* The one QP creation path, for create_qp and create_qp_ex. */
static struct vcx_qp *create_qp(struct vcx_context *ctx, struct ibv_qp_init_attr_ex *attr)
{
	struct vcx_create_qp_resp resp = {};
	struct vcx_create_qp_req req = {};
	bool send_ops = attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	struct vcx_qp *qp;
	size_t rq_bytes;
	int err;

	if (attr->qp_type == IBV_QPT_XRC_RECV) {
		struct ibv_qp *ibqp = vcx_create_xrc_recv_qp(ctx, attr);

		return ibqp ? to_vcx_qp(ibqp) : NULL;
	}
	err = check_init_attr(attr);
	if (err) {
		errno = err;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	vcx_spinlock_init(&qp->sq.lock, !ctx->single_threaded);
	vcx_spinlock_init(&qp->rq.lock, !ctx->single_threaded);
	qp->ibv_qp.qp_type = attr->qp_type;
	qp->atomics_enabled = (attr->qp_type == IBV_QPT_RC ||
			       attr->qp_type == IBV_QPT_XRC_SEND) &&
			      (ctx->atomic_caps & VCX_ATOMIC_CAP_CMP_SWP) &&
			      (ctx->atomic_caps & VCX_ATOMIC_CAP_FETCH_ADD);
	qp->mw_enabled = (attr->qp_type == IBV_QPT_RC || attr->qp_type == IBV_QPT_UC) &&
			 ctx->mw;
	qp->sq_signal_bits = attr->sq_sig_all ? VCX_WQE_CE_CQE : VCX_WQE_CE_ERROR_ONLY;

	/* Operations the QP cannot carry fail the creation, before the kernel sees it. */
	err = send_ops ? vcx_qp_wr_check_ops(qp, attr->send_ops_flags) : 0;
	if (!err)
		err = size_sq(ctx, qp, attr);
	if (!err)
		err = size_rq(ctx, qp, attr);
	if (!err)
		err = alloc_wq_arrays(qp);
	if (!err && send_ops)
		err = vcx_qp_wr_init(qp);
	if (err)
		goto err_free;

	rq_bytes = (size_t)qp->rq.wqe_cnt << qp->rq.wqe_shift;
	qp->rq.offset = 0;
	qp->sq.offset = rq_bytes;
	if (vcx_buf_alloc(&qp->buf, max_t(size_t, rq_bytes + (size_t)qp->sq.wqe_cnt *
					  VCX_SEND_WQEBB, 1), ctx->page_size)) {
		err = errno;
		goto err_free;
	}
	qp->dbrec = vcx_db_alloc(&ctx->db_pool);
	if (!qp->dbrec) {
		err = errno;
		goto err_free;
	}

	req.buf_addr = (uintptr_t)qp->buf.buf;
	req.db_addr = (uintptr_t)qp->dbrec;
	req.sq_wqe_count = qp->sq.wqe_cnt;
	req.rq_wqe_count = qp->rq.wqe_cnt;
	req.rq_wqe_shift = qp->rq.wqe_cnt ? qp->rq.wqe_shift : 0;
	err = create_qp_cmd(ctx, qp, attr, &req, &resp);
	if (err)
		goto err_free;
	if (resp.bfreg_index >= ctx->tot_bfregs) {
		verbs_err(&ctx->ibv_ctx, "vcx: QP %u got bfreg %u of %u\n", qp->ibv_qp.qp_num,
			  resp.bfreg_index, ctx->tot_bfregs);
		err = EPROTO;
		goto err_destroy;
	}
	qp->bfreg = &ctx->bfregs[resp.bfreg_index];
	/* After the command: it resets comp_mask. ibv_qp_to_qp_ex() looks at this bit. */
	if (send_ops)
		qp->vqp.comp_mask |= VERBS_QP_EX;

	pthread_mutex_lock(&ctx->table_mutex);
	err = vcx_table_insert(&ctx->qp_table, qp->ibv_qp.qp_num, qp) ? errno : 0;
	pthread_mutex_unlock(&ctx->table_mutex);
	if (err)
		goto err_destroy;

	/* What the application can post, as this library laid the queues out. */
	attr->cap.max_send_wr = qp->sq.max_post;
	attr->cap.max_send_sge = qp->sq.max_gs;
	attr->cap.max_inline_data = qp->sq.wqe_cnt ? qp->max_inline_data : 0;
	attr->cap.max_recv_wr = qp->rq.max_post;
	attr->cap.max_recv_sge = qp->rq.max_gs;
	return qp;

err_destroy:
	ibv_cmd_destroy_qp(&qp->ibv_qp);
err_free:
	qp_free(ctx, qp);
	errno = err;
	return NULL;
}

struct ibv_qp *vcx_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr)
{
	struct vcx_qp *qp = create_qp(to_vcx_ctx(context), attr);

	return qp ? &qp->ibv_qp : NULL;
}

struct ibv_qp *vcx_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex attr_ex = {
		.qp_context = attr->qp_context,
		.send_cq = attr->send_cq,
		.recv_cq = attr->recv_cq,
		.srq = attr->srq,
		.cap = attr->cap,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct vcx_qp *qp = create_qp(to_vcx_ctx(pd->context), &attr_ex);

	if (!qp)
		return NULL;
	attr->cap = attr_ex.cap;
	return &qp->ibv_qp;
}

int vcx_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask,
		 struct ibv_qp_init_attr *init_attr)
{
	struct vcx_qp *qp = to_vcx_qp(ibqp);
	struct ibv_query_qp cmd;
	int ret;

	ret = ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	init_attr->cap.max_send_wr = qp->sq.max_post;
	init_attr->cap.max_send_sge = qp->sq.max_gs;
	init_attr->cap.max_inline_data = qp->sq.wqe_cnt ? qp->max_inline_data : 0;
	init_attr->cap.max_recv_wr = qp->rq.max_post;
	init_attr->cap.max_recv_sge = qp->rq.max_gs;
	attr->cap = init_attr->cap;
	return 0;
}

/* Forget every CQE of the QP and restart its queues from index 0 (RESET, destroy). */
static void qp_flush_cqes(struct vcx_qp *qp)
{
	struct ibv_qp *ibqp = &qp->ibv_qp;
	struct vcx_srq *srq = ibqp->srq ? to_vcx_srq(ibqp->srq) : NULL;

	if (ibqp->recv_cq)	/* an XRC_SEND QP may have none */
		vcx_cq_clean(to_vcx_cq(ibqp->recv_cq), ibqp->qp_num, srq);
	if (ibqp->send_cq != ibqp->recv_cq)
		vcx_cq_clean(to_vcx_cq(ibqp->send_cq), ibqp->qp_num, NULL);
}

int vcx_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask)
{
	struct vcx_qp *qp = to_vcx_qp(ibqp);
	struct ibv_modify_qp cmd;
	int ret;

	ret = ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
	/* an XRC target has no queues here: the command is all */
	if (ret || !(attr_mask & IBV_QP_STATE) || qp->xrc_tgt)
		return ret;
	if (attr->qp_state != IBV_QPS_RESET) {
		vcx_spin_lock(&qp->sq.lock);
		vcx_spin_lock(&qp->rq.lock);
		if (attr->qp_state == IBV_QPS_INIT)
			qp->rq_open = true;
		else if (attr->qp_state == IBV_QPS_RTS)
			qp->sq_open = true;
		vcx_spin_unlock(&qp->rq.lock);
		vcx_spin_unlock(&qp->sq.lock);
		return 0;
	}

	/* Back in RESET the device forgot the queues: so does the library. */
	qp_flush_cqes(qp);
	vcx_spin_lock(&qp->sq.lock);
	vcx_spin_lock(&qp->rq.lock);
	reset_wq_indices(qp);
	qp->rq_open = false;
	qp->sq_open = false;
	qp->dbrec[0] = 0;
	qp->dbrec[1] = 0;
	vcx_spin_unlock(&qp->rq.lock);
	vcx_spin_unlock(&qp->sq.lock);
	return 0;
}

int vcx_destroy_qp(struct ibv_qp *ibqp)
{
	struct vcx_context *ctx = to_vcx_ctx(ibqp->context);
	struct vcx_qp *qp = to_vcx_qp(ibqp);
	int ret;

	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;
	if (qp->xrc_tgt) {
		/* this handle only; its receives were the SRQs' and stay theirs */
		qp_free(ctx, qp);
		return 0;
	}
	/* No CQE can name the QP any more: drop those already written, then unlist it. */
	qp_flush_cqes(qp);
	pthread_mutex_lock(&ctx->table_mutex);
	vcx_table_remove(&ctx->qp_table, ibqp->qp_num);
	pthread_mutex_unlock(&ctx->table_mutex);
	qp_free(ctx, qp);
	return 0;
}
