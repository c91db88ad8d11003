// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vcx provider: completion queues.
 *
 * The CQ is a ring of 2^n 64-byte CQEs in a user buffer the device writes. A CQE belongs
 * to software when its opcode is valid and its owner bit equals the pass bit of the
 * consumer index (prm-wqe.h, vcx_cqe_is_sw_owned). After consuming CQEs the library
 * publishes its consumer index in the doorbell record (set_ci) so the device may reuse
 * the entries. Arming writes the arm word to the doorbell record, then the same word and
 * the CQN to the CQ doorbell of UAR page 0.
 *
 * Requester CQEs are cumulative: a CQE for SQ WQE k retires every unsignaled WQE before
 * it. Responder CQEs name the RQ WQE (in order) or the SRQ WQE (by index) they consumed;
 * an SRQ is found by the CQE's SRQ number (an XRC target's QP is not the library's).
 * One decoder (decode_cqe) turns a CQE into an ibv_wc for poll_cq and for the extended
 * CQ (ibv_create_cq_ex), whose start_poll/next_poll decode one CQE and whose read_*
 * calls return its fields.
 *
 * Resize (abi.h resize_cq, libmlx5 mlx5_resize_cq): the device writes a RESIZE_CQ CQE
 * into the old ring at its producer position and goes on in the new ring with the same
 * counter. After the command the library copies the CQEs not yet polled into the new
 * ring (old entry i to new entry i + 1) and steps over the resize CQE; a poller that meets
 * the resize CQE first (it runs between the command and the copy, the CQ lock being free
 * during the system call) has nothing left to copy and simply reads on in the new ring.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <util/mmio.h>
#include <util/udma_barrier.h>

#include "vcx.h"
#include "vcx-abi.h"
#include "vcx/prm-wqe.h"

enum {
	CQ_OK = 0,
	CQ_EMPTY = -1,
	CQ_POLL_ERR = -2,
};

static uint8_t *get_cqe(struct vcx_cq *cq, uint32_t n)
{
	return (uint8_t *)cq->buf.buf + ((n & ((1u << cq->log_nent) - 1)) * VCX_CQE_SIZE);
}

static uint8_t *next_sw_cqe(struct vcx_cq *cq, uint32_t n)
{
	uint8_t *cqe = get_cqe(cq, n);

	return vcx_cqe_is_sw_owned(cqe, n, cq->log_nent) ? cqe : NULL;
}

static void update_cons_index(struct vcx_cq *cq)
{
	cq->dbrec[0] = htobe32(cq->cons_index & VCX_CQ_CI_MASK);
}

static enum ibv_wc_status syndrome_to_status(uint8_t syndrome)
{
	switch (syndrome) {
	case VCX_CQE_SYND_LOCAL_LENGTH_ERR:
		return IBV_WC_LOC_LEN_ERR;
	case VCX_CQE_SYND_LOCAL_QP_OP_ERR:
		return IBV_WC_LOC_QP_OP_ERR;
	case VCX_CQE_SYND_LOCAL_PROT_ERR:
		return IBV_WC_LOC_PROT_ERR;
	case VCX_CQE_SYND_WR_FLUSH_ERR:
		return IBV_WC_WR_FLUSH_ERR;
	case VCX_CQE_SYND_MW_BIND_ERR:
		return IBV_WC_MW_BIND_ERR;
	case VCX_CQE_SYND_BAD_RESP_ERR:
		return IBV_WC_BAD_RESP_ERR;
	case VCX_CQE_SYND_LOCAL_ACCESS_ERR:
		return IBV_WC_LOC_ACCESS_ERR;
	case VCX_CQE_SYND_REMOTE_INVAL_REQ_ERR:
		return IBV_WC_REM_INV_REQ_ERR;
	case VCX_CQE_SYND_REMOTE_ACCESS_ERR:
		return IBV_WC_REM_ACCESS_ERR;
	case VCX_CQE_SYND_REMOTE_OP_ERR:
		return IBV_WC_REM_OP_ERR;
	case VCX_CQE_SYND_TRANSPORT_RETRY_EXC_ERR:
		return IBV_WC_RETRY_EXC_ERR;
	case VCX_CQE_SYND_RNR_RETRY_EXC_ERR:
		return IBV_WC_RNR_RETRY_EXC_ERR;
	case VCX_CQE_SYND_REMOTE_ABORTED_ERR:
		return IBV_WC_REM_ABORT_ERR;
	default:
		return IBV_WC_GENERAL_ERR;
	}
}

/* Retire SQ WQEs up to and including the one named by the CQE. */
static void sq_retire(struct vcx_qp *qp, const uint8_t *cqe, struct ibv_wc *wc)
{
	uint32_t idx = vcx_get(cqe, VCX_CQE_WQE_COUNTER) & (qp->sq.wqe_cnt - 1);

	wc->wr_id = qp->sq.wrid[idx];
	qp->sq.tail = qp->sq.wqe_head[idx];
}

static int handle_requester(struct vcx_qp *qp, const uint8_t *cqe, struct ibv_wc *wc)
{
	sq_retire(qp, cqe, wc);
	switch (vcx_get(cqe, VCX_CQE_SOP_OPCODE)) {
	case VCX_OPCODE_RDMA_WRITE_IMM:
		wc->wc_flags |= IBV_WC_WITH_IMM;
		SWITCH_FALLTHROUGH;
	case VCX_OPCODE_RDMA_WRITE:
		wc->opcode = IBV_WC_RDMA_WRITE;
		break;
	case VCX_OPCODE_SEND_IMM:
		wc->wc_flags |= IBV_WC_WITH_IMM;
		SWITCH_FALLTHROUGH;
	case VCX_OPCODE_SEND:
	case VCX_OPCODE_SEND_INVAL:
		wc->opcode = IBV_WC_SEND;
		break;
	case VCX_OPCODE_RDMA_READ:
		wc->opcode = IBV_WC_RDMA_READ;
		wc->byte_len = vcx_get(cqe, VCX_CQE_BYTE_CNT);
		break;
	case VCX_OPCODE_ATOMIC_CS:
		wc->opcode = IBV_WC_COMP_SWAP;
		wc->byte_len = VCX_ATOMIC_SIZE;
		break;
	case VCX_OPCODE_ATOMIC_FA:
		wc->opcode = IBV_WC_FETCH_ADD;
		wc->byte_len = VCX_ATOMIC_SIZE;
		break;
	case VCX_OPCODE_UMR:
		/* memory window bind or local invalidation: what was posted in that slot */
		wc->opcode = qp->sq.wc_opcode[vcx_get(cqe, VCX_CQE_WQE_COUNTER) &
					      (qp->sq.wqe_cnt - 1)];
		break;
	default:
		/* A CQE for an opcode this library never posts: the device is confused. */
		return CQ_POLL_ERR;
	}
	return CQ_OK;
}

/*
 * The receive WQE a responder CQE consumed: its wr_id, and the WQE goes back. SRQ WQEs
 * are named by index; RQ WQEs complete in order, so a flushed one (whose CQE need not
 * carry a meaningful counter) is simply the oldest outstanding.
 */
static int rq_retire(struct vcx_qp *qp, struct vcx_srq *srq, const uint8_t *cqe,
		     bool in_order, struct ibv_wc *wc)
{
	uint32_t wqe_ctr = vcx_get(cqe, VCX_CQE_WQE_COUNTER);

	if (srq) {
		if (wqe_ctr >= srq->list.nwqe)
			return CQ_POLL_ERR;	/* not a WQE of this SRQ */
		wc->wr_id = srq->wrid[wqe_ctr];
		vcx_srq_free_wqe(srq, (uint16_t)wqe_ctr);
		return CQ_OK;
	}
	if (in_order)
		wqe_ctr = qp->rq.tail;
	wc->wr_id = qp->rq.wrid[wqe_ctr & (qp->rq.wqe_cnt - 1)];
	qp->rq.tail++;
	return CQ_OK;
}

static int handle_responder(struct vcx_qp *qp, struct vcx_srq *srq, const uint8_t *cqe,
			    uint8_t opcode, struct ibv_wc *wc)
{
	uint32_t imm = vcx_get(cqe, VCX_CQE_IMM_INVAL_PKEY);

	if (vcx_get(cqe, VCX_CQE_FORMAT) != VCX_CQE_FORMAT_NORMAL)
		return CQ_POLL_ERR;	/* scatter-to-CQE is never requested */
	if (rq_retire(qp, srq, cqe, false, wc))
		return CQ_POLL_ERR;
	wc->byte_len = vcx_get(cqe, VCX_CQE_BYTE_CNT);
	switch (opcode) {
	case VCX_CQE_RESP_WR_IMM:
		wc->opcode = IBV_WC_RECV_RDMA_WITH_IMM;
		wc->wc_flags |= IBV_WC_WITH_IMM;
		wc->imm_data = htobe32(imm);
		break;
	case VCX_CQE_RESP_SEND:
		wc->opcode = IBV_WC_RECV;
		break;
	case VCX_CQE_RESP_SEND_IMM:
		wc->opcode = IBV_WC_RECV;
		wc->wc_flags |= IBV_WC_WITH_IMM;
		wc->imm_data = htobe32(imm);
		break;
	case VCX_CQE_RESP_SEND_INV:
		wc->opcode = IBV_WC_RECV;
		wc->wc_flags |= IBV_WC_WITH_INV;
		wc->invalidated_rkey = imm;
		break;
	}
	wc->src_qp = vcx_get(cqe, VCX_CQE_RQPN);
	wc->sl = vcx_get(cqe, VCX_CQE_SL);
	wc->slid = vcx_get(cqe, VCX_CQE_SLID);
	wc->dlid_path_bits = vcx_get(cqe, VCX_CQE_ML_PATH);
	wc->pkey_index = 0;
	if (vcx_get(cqe, VCX_CQE_GRH))
		wc->wc_flags |= IBV_WC_GRH;
	return CQ_OK;
}

static int handle_error(struct vcx_qp *qp, struct vcx_srq *srq, const uint8_t *cqe,
			uint8_t opcode, struct ibv_wc *wc)
{
	wc->status = syndrome_to_status(vcx_get(cqe, VCX_CQE_SYNDROME));
	wc->vendor_err = vcx_get(cqe, VCX_CQE_VENDOR_ERR_SYND);
	if (opcode == VCX_CQE_REQ_ERR) {
		sq_retire(qp, cqe, wc);
		return CQ_OK;
	}
	return rq_retire(qp, srq, cqe, true, wc);
}

/* The CQE's completion into wc (every field ibv_poll_cq defines for it). */
static int decode_cqe(struct vcx_context *ctx, const uint8_t *cqe, struct ibv_wc *wc)
{
	uint8_t opcode = vcx_cqe_opcode(cqe);
	struct vcx_srq *srq = NULL;
	struct vcx_qp *qp;
	uint32_t srqn;

	wc->qp_num = vcx_get(cqe, VCX_CQE_QPN);
	wc->status = IBV_WC_SUCCESS;
	wc->wc_flags = 0;
	wc->vendor_err = 0;
	qp = vcx_find_qp(ctx, wc->qp_num);
	if (opcode == VCX_CQE_REQ || opcode == VCX_CQE_REQ_ERR) {
		if (!qp || !qp->sq.wqe_cnt)
			return CQ_POLL_ERR;
	} else {
		/*
		 * An SRQ's WQE is found by the SRQ number alone (cqe_version 0, as libmlx5):
		 * the receives of XRC targets name a QP this library has no object for.
		 */
		srqn = vcx_get(cqe, VCX_CQE_SRQN_UIDX);
		if (srqn) {
			srq = vcx_find_srq(ctx, srqn);
			if (!srq)
				return CQ_POLL_ERR;
		} else if (!qp || !qp->rq.wqe_cnt) {
			return CQ_POLL_ERR;
		}
	}

	switch (opcode) {
	case VCX_CQE_REQ:
		return handle_requester(qp, cqe, wc);
	case VCX_CQE_RESP_WR_IMM:
	case VCX_CQE_RESP_SEND:
	case VCX_CQE_RESP_SEND_IMM:
	case VCX_CQE_RESP_SEND_INV:
		return handle_responder(qp, srq, cqe, opcode, wc);
	case VCX_CQE_REQ_ERR:
	case VCX_CQE_RESP_ERR:
		return handle_error(qp, srq, cqe, opcode, wc);
	default:
		/* NO_PACKET, SIG_ERR, a stray RESIZE_CQ: nothing this library asked for. */
		return CQ_POLL_ERR;
	}
}

static void swap_ring(struct vcx_cq *cq, struct vcx_cq_ring *ring)
{
	struct vcx_cq_ring old = { .buf = cq->buf, .log_nent = cq->log_nent };

	cq->buf = ring->buf;
	cq->log_nent = ring->log_nent;
	*ring = old;
}

/* The next completion into wc; called with the CQ lock held. */
static int poll_one(struct vcx_cq *cq, struct vcx_context *ctx, struct ibv_wc *wc,
		    uint8_t **cqe_out)
{
	uint8_t *cqe;

	for (;;) {
		cqe = next_sw_cqe(cq, cq->cons_index);
		if (!cqe)
			return CQ_EMPTY;
		cq->cons_index++;
		/* Read the body only after seeing the owner bit. */
		udma_from_device_barrier();
		if (vcx_cqe_opcode(cqe) != VCX_CQE_RESIZE_CQ) {
			if (cqe_out)
				*cqe_out = cqe;
			return decode_cqe(ctx, cqe, wc);
		}
		/*
		 * Everything before it is consumed: the counter reads on in the new ring and
		 * vcx_resize_cq has nothing to copy (it frees the old ring).
		 */
		if (!cq->resize || cq->resize_switched)
			return CQ_POLL_ERR;
		swap_ring(cq, cq->resize);
		cq->resize_switched = true;
	}
}

int vcx_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct vcx_context *ctx = to_vcx_ctx(ibcq->context);
	struct vcx_cq *cq = to_vcx_cq(ibcq);
	int npolled;
	int err = CQ_OK;

	vcx_spin_lock(&cq->lock);
	for (npolled = 0; npolled < num_entries; npolled++) {
		err = poll_one(cq, ctx, wc + npolled, NULL);
		if (err != CQ_OK)
			break;
	}
	if (npolled || err == CQ_POLL_ERR)
		update_cons_index(cq);
	vcx_spin_unlock(&cq->lock);

	return err == CQ_POLL_ERR ? err : npolled;
}

int vcx_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct vcx_context *ctx = to_vcx_ctx(ibcq->context);
	struct vcx_cq *cq = to_vcx_cq(ibcq);
	uint32_t cmd = solicited_only ? VCX_CQ_DB_CMD_NOTIFY_SOLICITED : VCX_CQ_DB_CMD_NOTIFY;
	uint32_t arm = vcx_cq_arm_word(cq->arm_sn, cmd, cq->cons_index);

	cq->dbrec[1] = htobe32(arm);
	/* The record must be visible before the doorbell that makes the device read it. */
	mmio_wc_start();
	mmio_write64_be((uint8_t *)ctx->uar[0] + VCX_UAR_CQ_DOORBELL,
			htobe64((uint64_t)arm << 32 | cq->cqn));
	mmio_flush_writes();
	return 0;
}

/* A completion event was read for this CQ: the next arm uses the next sequence number. */
void vcx_cq_event(struct ibv_cq *ibcq)
{
	to_vcx_cq(ibcq)->arm_sn++;
}

/*
 * Drop the CQEs of a QP being destroyed (and give back the SRQ WQEs they consumed), so a
 * later poll never meets a QPN that no longer resolves. Entries of other QPs slide up
 * over the removed ones, keeping the owner bit of the slot they land in.
 */
void vcx_cq_clean(struct vcx_cq *cq, uint32_t qpn, struct vcx_srq *srq)
{
	uint32_t nent = 1u << cq->log_nent;
	uint32_t prod, nfreed = 0;

	vcx_spin_lock(&cq->lock);
	for (prod = cq->cons_index; next_sw_cqe(cq, prod); prod++)
		if (prod == cq->cons_index + nent - 1)
			break;
	udma_from_device_barrier();

	while ((int32_t)(--prod - cq->cons_index) >= 0) {
		uint8_t *cqe = get_cqe(cq, prod);
		uint8_t opcode = vcx_cqe_opcode(cqe);

		if (vcx_get(cqe, VCX_CQE_QPN) == qpn) {
			if (srq && opcode != VCX_CQE_REQ && opcode != VCX_CQE_REQ_ERR &&
			    vcx_get(cqe, VCX_CQE_SRQN_UIDX))
				vcx_srq_free_wqe(srq, (uint16_t)vcx_get(cqe, VCX_CQE_WQE_COUNTER));
			nfreed++;
		} else if (nfreed) {
			uint8_t *dest = get_cqe(cq, prod + nfreed);
			uint8_t owner = vcx_cqe_op_own(dest) & 1u;

			memcpy(dest, cqe, VCX_CQE_SIZE);
			dest[VCX_CQE_OP_OWN_BYTE] = (dest[VCX_CQE_OP_OWN_BYTE] & ~1u) | owner;
		}
	}
	if (nfreed) {
		cq->cons_index += nfreed;
		udma_to_device_barrier();
		update_cons_index(cq);
	}
	vcx_spin_unlock(&cq->lock);
}

/*
 * Extended CQ (ibv_create_cq_ex). start_poll takes the CQ lock and decodes the first
 * completion, next_poll the following ones, end_poll publishes the consumer counter and
 * releases the lock, as libmlx5 does; the read_* calls return fields of the completion
 * decoded last.
 */
static int cq_ex_poll(struct vcx_cq *cq)
{
	uint8_t *cqe;
	int err = poll_one(cq, to_vcx_ctx(cq->ibv_cq.context), &cq->ex_wc, &cqe);

	if (err == CQ_EMPTY)
		return ENOENT;
	if (err)
		return EIO;
	/* the internal timer when the device wrote it; an error CQE has none (0) */
	if (cq->ex_want_ts)
		cq->ex_ts = cq->ex_wc.status == IBV_WC_SUCCESS ?
			vcx_get64(cqe, VCX_CQE_TIMESTAMP) : 0;
	cq->ibv_cq_ex.wr_id = cq->ex_wc.wr_id;
	cq->ibv_cq_ex.status = cq->ex_wc.status;
	return 0;
}

static int cq_ex_start_poll(struct ibv_cq_ex *ibcq, struct ibv_poll_cq_attr *attr)
{
	struct vcx_cq *cq = container_of(ibcq, struct vcx_cq, ibv_cq_ex);
	int err;

	if (attr->comp_mask)
		return EINVAL;
	vcx_spin_lock(&cq->lock);
	err = cq_ex_poll(cq);
	if (err) {
		/* No end_poll follows a failed start_poll. */
		if (err != ENOENT)
			update_cons_index(cq);
		vcx_spin_unlock(&cq->lock);
	}
	return err;
}

static int cq_ex_next_poll(struct ibv_cq_ex *ibcq)
{
	return cq_ex_poll(container_of(ibcq, struct vcx_cq, ibv_cq_ex));
}

static void cq_ex_end_poll(struct ibv_cq_ex *ibcq)
{
	struct vcx_cq *cq = container_of(ibcq, struct vcx_cq, ibv_cq_ex);

	update_cons_index(cq);
	vcx_spin_unlock(&cq->lock);
}

static struct ibv_wc *cq_ex_wc(struct ibv_cq_ex *ibcq)
{
	return &container_of(ibcq, struct vcx_cq, ibv_cq_ex)->ex_wc;
}

static enum ibv_wc_opcode cq_ex_read_opcode(struct ibv_cq_ex *ibcq)
{
	return cq_ex_wc(ibcq)->opcode;
}

static uint32_t cq_ex_read_vendor_err(struct ibv_cq_ex *ibcq)
{
	return cq_ex_wc(ibcq)->vendor_err;
}

static uint32_t cq_ex_read_byte_len(struct ibv_cq_ex *ibcq)
{
	return cq_ex_wc(ibcq)->byte_len;
}

/*
 * The CQE's imm_inval_pkey: the immediate as sent (network order) or, for a SEND_INV,
 * the invalidated rkey in host order, which ibv_wc_read_invalidated_rkey() reads through
 * this same call (ibv_wc's imm_data / invalidated_rkey union).
 */
static __be32 cq_ex_read_imm_data(struct ibv_cq_ex *ibcq)
{
	return cq_ex_wc(ibcq)->imm_data;
}

static uint32_t cq_ex_read_qp_num(struct ibv_cq_ex *ibcq)
{
	return cq_ex_wc(ibcq)->qp_num;
}

static uint32_t cq_ex_read_src_qp(struct ibv_cq_ex *ibcq)
{
	return cq_ex_wc(ibcq)->src_qp;
}

static unsigned int cq_ex_read_wc_flags(struct ibv_cq_ex *ibcq)
{
	return cq_ex_wc(ibcq)->wc_flags;
}

static uint32_t cq_ex_read_slid(struct ibv_cq_ex *ibcq)
{
	return cq_ex_wc(ibcq)->slid;
}

static uint8_t cq_ex_read_sl(struct ibv_cq_ex *ibcq)
{
	return cq_ex_wc(ibcq)->sl;
}

static uint8_t cq_ex_read_dlid_path_bits(struct ibv_cq_ex *ibcq)
{
	return cq_ex_wc(ibcq)->dlid_path_bits;
}

/* The device's clock cycles (device_frequency_khz) when the device wrote the CQE. */
static uint64_t cq_ex_read_completion_ts(struct ibv_cq_ex *ibcq)
{
	return container_of(ibcq, struct vcx_cq, ibv_cq_ex)->ex_ts;
}

/*
 * What a CQE carries, plus the completion timestamp on a device whose CQEs carry one;
 * wall-clock timestamps (no clock page is mapped), CVLAN, flow tag and tag matching it
 * does not.
 */
#define VCX_CQ_EX_WC_FLAGS						\
	(IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM |	\
	 IBV_WC_EX_WITH_SRC_QP | IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |	\
	 IBV_WC_EX_WITH_DLID_PATH_BITS)

static void cq_ex_set_ops(struct vcx_cq *cq, uint64_t wc_flags)
{
	struct ibv_cq_ex *ex = &cq->ibv_cq_ex;

	ex->start_poll = cq_ex_start_poll;
	ex->next_poll = cq_ex_next_poll;
	ex->end_poll = cq_ex_end_poll;
	ex->read_opcode = cq_ex_read_opcode;
	ex->read_vendor_err = cq_ex_read_vendor_err;
	ex->read_wc_flags = cq_ex_read_wc_flags;
	if (wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		ex->read_byte_len = cq_ex_read_byte_len;
	if (wc_flags & IBV_WC_EX_WITH_IMM)
		ex->read_imm_data = cq_ex_read_imm_data;
	if (wc_flags & IBV_WC_EX_WITH_QP_NUM)
		ex->read_qp_num = cq_ex_read_qp_num;
	if (wc_flags & IBV_WC_EX_WITH_SRC_QP)
		ex->read_src_qp = cq_ex_read_src_qp;
	if (wc_flags & IBV_WC_EX_WITH_SLID)
		ex->read_slid = cq_ex_read_slid;
	if (wc_flags & IBV_WC_EX_WITH_SL)
		ex->read_sl = cq_ex_read_sl;
	if (wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		ex->read_dlid_path_bits = cq_ex_read_dlid_path_bits;
	if (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP) {
		ex->read_completion_ts = cq_ex_read_completion_ts;
		cq->ex_want_ts = true;
	}
}

static int ring_alloc(struct vcx_context *ctx, struct vcx_cq_ring *ring, uint32_t nent)
{
	uint32_t i;

	ring->log_nent = ilog32(nent - 1);
	if (vcx_buf_alloc(&ring->buf, (size_t)nent * VCX_CQE_SIZE, ctx->page_size))
		return -1;
	for (i = 0; i < nent; i++)
		vcx_cqe_init((uint8_t *)ring->buf.buf + (size_t)i * VCX_CQE_SIZE);
	return 0;
}

/* create_cq and create_cq_ex alike; attr_ex is NULL for the former. */
static struct vcx_cq *create_cq(struct ibv_context *context, int cqe,
				struct ibv_comp_channel *channel, int comp_vector,
				struct ibv_cq_init_attr_ex *attr_ex)
{
	struct vcx_context *ctx = to_vcx_ctx(context);
	struct vcx_create_cq_cmd_resp resp = {};
	struct vcx_create_cq_cmd cmd = {};
	bool single_threaded = ctx->single_threaded;
	struct vcx_cq_ring ring;
	struct vcx_cq *cq;
	int err;

	if (cqe < 1 || (uint32_t)cqe >= ctx->max_cqe) {
		errno = EINVAL;
		return NULL;
	}
	if (attr_ex && (attr_ex->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS))
		single_threaded |= !!(attr_ex->flags & IBV_CREATE_CQ_ATTR_SINGLE_THREADED);

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	if (vcx_spinlock_init(&cq->lock, !single_threaded))
		goto err_free;
	if (ring_alloc(ctx, &ring, roundup_pow_of_two((uint32_t)cqe + 1)))
		goto err_lock;
	cq->buf = ring.buf;
	cq->log_nent = ring.log_nent;
	cq->dbrec = vcx_db_alloc(&ctx->db_pool);
	if (!cq->dbrec)
		goto err_buf;

	cmd.drv_payload.buf_addr = (uintptr_t)cq->buf.buf;
	cmd.drv_payload.db_addr = (uintptr_t)cq->dbrec;
	cmd.drv_payload.cqe_size = VCX_CQE_SIZE;
	if (attr_ex) {
		struct vcx_create_cq_ex_cmd cmd_ex = {};
		struct vcx_create_cq_ex_cmd_resp resp_ex = {};
		struct ibv_cq_init_attr_ex a = *attr_ex;

		a.cqe = (1u << cq->log_nent) - 1;
		cmd_ex.drv_payload = cmd.drv_payload;
		err = ibv_cmd_create_cq_ex(context, &a, &cq->verbs_cq, &cmd_ex.ibv_cmd,
					   sizeof(cmd_ex), &resp_ex.ibv_resp, sizeof(resp_ex), 0);
		resp.drv_payload = resp_ex.drv_payload;
	} else {
		err = ibv_cmd_create_cq(context, (1 << cq->log_nent) - 1, channel, comp_vector,
					&cq->ibv_cq, &cmd.ibv_cmd, sizeof(cmd), &resp.ibv_resp,
					sizeof(resp));
	}
	if (err) {
		errno = err;
		goto err_db;
	}
	cq->cqn = resp.drv_payload.cqn;
	return cq;

err_db:
	vcx_db_free(&ctx->db_pool, cq->dbrec);
err_buf:
	vcx_buf_free(&cq->buf);
err_lock:
	vcx_spinlock_destroy(&cq->lock);
err_free:
	free(cq);
	return NULL;
}

struct ibv_cq *vcx_create_cq(struct ibv_context *context, int cqe,
			     struct ibv_comp_channel *channel, int comp_vector)
{
	struct vcx_cq *cq = create_cq(context, cqe, channel, comp_vector, NULL);

	return cq ? &cq->ibv_cq : NULL;
}

struct ibv_cq_ex *vcx_create_cq_ex(struct ibv_context *context,
				   struct ibv_cq_init_attr_ex *attr)
{
	struct vcx_cq *cq;

	/* Unknown extensions are refused as libmlx5 refuses them (EINVAL) ... */
	if (attr->comp_mask & ~(uint32_t)IBV_CQ_INIT_ATTR_MASK_FLAGS ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     attr->flags & ~(uint64_t)(IBV_CREATE_CQ_ATTR_SINGLE_THREADED |
				      IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN))) {
		errno = EINVAL;
		return NULL;
	}
	/* ... known features the device lacks with EOPNOTSUPP (cap cq_oi is 0). */
	if (attr->wc_flags & ~(uint64_t)(VCX_CQ_EX_WC_FLAGS |
					 (to_vcx_ctx(context)->completion_ts ?
					  IBV_WC_EX_WITH_COMPLETION_TIMESTAMP : 0)) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     attr->flags & IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	cq = create_cq(context, attr->cqe, attr->channel, attr->comp_vector, attr);
	if (!cq)
		return NULL;
	cq_ex_set_ops(cq, attr->wc_flags);
	return &cq->ibv_cq_ex;
}

/*
 * Resize (libmlx5 mlx5_resize_cq): a new ring, RESIZE_CQ with its address, then the CQEs
 * not yet polled move over (mlx5_cq_resize_copy_cqes) unless a poller already met the
 * resize CQE. The old ring is freed here in either case.
 */
static void copy_resize_cqes(struct vcx_cq *cq, struct vcx_cq_ring *to)
{
	uint32_t mask = (1u << to->log_nent) - 1;
	uint32_t i;

	udma_from_device_barrier();
	for (i = cq->cons_index; i - cq->cons_index < (1u << cq->log_nent); i++) {
		uint8_t *src = next_sw_cqe(cq, i);
		uint8_t *dst;

		if (!src)
			break;
		if (vcx_cqe_opcode(src) == VCX_CQE_RESIZE_CQ) {
			cq->cons_index++;	/* step over the resize CQE */
			return;
		}
		dst = (uint8_t *)to->buf.buf + (size_t)((i + 1) & mask) * VCX_CQE_SIZE;
		memcpy(dst, src, VCX_CQE_SIZE);
		dst[VCX_CQE_OP_OWN_BYTE] = (src[VCX_CQE_OP_OWN_BYTE] & ~1u) |
					   vcx_cqe_owner_for(i + 1, to->log_nent);
	}
	verbs_err(verbs_get_ctx(cq->ibv_cq.context),
		  "vcx: CQ 0x%x: no resize CQE after %u CQEs\n", cq->cqn, i - cq->cons_index);
}

/*
 * Event moderation (libmlx5 mlx5_modify_cq): the kernel sets the CQ's cq_max_count and
 * cq_period (MODIFY_CQ op_mod 0); nothing changes on the library's side of the ring.
 */
int vcx_modify_cq(struct ibv_cq *ibcq, struct ibv_modify_cq_attr *attr)
{
	struct ibv_modify_cq cmd = {};

	return ibv_cmd_modify_cq(ibcq, attr, &cmd, sizeof(cmd));
}

int vcx_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct vcx_context *ctx = to_vcx_ctx(ibcq->context);
	struct vcx_cq *cq = to_vcx_cq(ibcq);
	struct ib_uverbs_resize_cq_resp resp = {};
	struct vcx_resize_cq_cmd cmd = {};
	struct vcx_cq_ring ring;
	uint32_t nent;
	int err;

	if (cqe < 1 || (uint32_t)cqe >= ctx->max_cqe)
		return EINVAL;
	nent = roundup_pow_of_two((uint32_t)cqe + 1);
	if (nent == (uint32_t)ibcq->cqe + 1)
		return 0;
	if (ring_alloc(ctx, &ring, nent))
		return errno ? errno : ENOMEM;

	vcx_spin_lock(&cq->lock);
	if (cq->resize) {
		/* Another thread is resizing this CQ. */
		vcx_spin_unlock(&cq->lock);
		vcx_buf_free(&ring.buf);
		return EBUSY;
	}
	cq->resize = &ring;
	cq->resize_switched = false;
	vcx_spin_unlock(&cq->lock);

	cmd.drv_payload.buf_addr = (uintptr_t)ring.buf.buf;
	cmd.drv_payload.cqe_size = VCX_CQE_SIZE;
	err = ibv_cmd_resize_cq(ibcq, nent - 1, &cmd.ibv_cmd, sizeof(cmd), &resp, sizeof(resp));

	vcx_spin_lock(&cq->lock);
	if (!err && !cq->resize_switched) {
		copy_resize_cqes(cq, &ring);
		swap_ring(cq, &ring);
	}
	/* A failed command wrote no resize CQE, so no poller switched. */
	cq->resize = NULL;
	vcx_spin_unlock(&cq->lock);
	/* ring now holds the ring the CQ no longer uses. */
	vcx_buf_free(&ring.buf);
	return err;
}

int vcx_destroy_cq(struct ibv_cq *ibcq)
{
	struct vcx_context *ctx = to_vcx_ctx(ibcq->context);
	struct vcx_cq *cq = to_vcx_cq(ibcq);
	int ret;

	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;
	vcx_db_free(&ctx->db_pool, cq->dbrec);
	vcx_buf_free(&cq->buf);
	vcx_spinlock_destroy(&cq->lock);
	free(cq);
	return 0;
}
