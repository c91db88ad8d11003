// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A loopback model of the vcx data path, written from the PRM formats in prm-wqe.h and
 * independent of the provider's code: it parses send WQEs by their DS count, gathers and
 * scatters through data segments, follows SRQ next pointers, takes producer counters from
 * the doorbell records, checks the SQ doorbell written to the QP's doorbell register, and
 * writes CQEs with the ownership rule. Memory keys are not translated (addresses are this
 * process's); lkey 0xdead stands for a key the device would reject.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "model.h"
#include "vcx/prm-iseg.h"
#include "vcx/prm-wqe.h"

#define BAD_LKEY	0xdeadu

struct dev dev;
static uint8_t bf_expect_half[64];

void dev_protocol_error(const char *fmt, ...)
{
	va_list ap;

	printf("# device: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	dev.protocol_errors++;
}

struct dev_qp *dev_qp(uint32_t qpn)
{
	int i;

	for (i = 0; i < DEV_MAX_OBJ; i++)
		if (dev.qp[i].valid && dev.qp[i].qpn == qpn)
			return &dev.qp[i];
	return NULL;
}

struct dev_cq *dev_cq(uint32_t cqn)
{
	int i;

	for (i = 0; i < DEV_MAX_OBJ; i++)
		if (dev.cq[i].valid && dev.cq[i].cqn == cqn)
			return &dev.cq[i];
	return NULL;
}

struct dev_srq *dev_srq(uint32_t srqn)
{
	int i;

	for (i = 0; i < DEV_MAX_OBJ; i++)
		if (dev.srq[i].valid && dev.srq[i].srqn == srqn)
			return &dev.srq[i];
	return NULL;
}

static uint32_t dbrec_word(volatile uint32_t *db, int i)
{
	return vcx_be32_load((const uint8_t *)&db[i]);
}

/* ---------------------------------------------------------------------------------------
 * CQE writer
 */
struct cqe_info {
	uint8_t opcode;			/* VCX_CQE_* */
	uint32_t qpn;
	uint16_t wqe_counter;
	uint8_t sop_opcode;		/* requester: the WQE's opcode */
	uint32_t byte_cnt;
	uint32_t imm;
	uint32_t srqn;
	uint32_t rqpn;
	uint8_t syndrome;
	uint8_t vendor_synd;
	bool se;
};

static void write_cqe(struct dev_cq *cq, const struct cqe_info *in)
{
	uint32_t nent = 1u << cq->log_nent;
	uint32_t ci = dbrec_word(cq->dbrec, 0) & VCX_CQ_CI_MASK;
	uint8_t *cqe = cq->buf + (cq->pi & (nent - 1)) * VCX_CQE_SIZE;

	if (((cq->pi - ci) & VCX_CQ_CI_MASK) >= nent) {
		dev_protocol_error("CQ %#x overrun: pi %u, set_ci %u", cq->cqn, cq->pi, ci);
		return;
	}
	memset(cqe, 0, VCX_CQE_SIZE - 1);
	vcx_set(cqe, VCX_CQE_QPN, in->qpn);
	vcx_set(cqe, VCX_CQE_WQE_COUNTER, in->wqe_counter);
	if (in->opcode == VCX_CQE_REQ_ERR || in->opcode == VCX_CQE_RESP_ERR) {
		vcx_set(cqe, VCX_CQE_SYNDROME, in->syndrome);
		vcx_set(cqe, VCX_CQE_VENDOR_ERR_SYND, in->vendor_synd);
		vcx_set(cqe, VCX_CQE_SOP_OPCODE, in->sop_opcode);
		vcx_set(cqe, VCX_CQE_SRQN_UIDX, in->srqn);
	} else {
		vcx_set(cqe, VCX_CQE_SOP_OPCODE, in->opcode == VCX_CQE_REQ ? in->sop_opcode : 0);
		vcx_set(cqe, VCX_CQE_BYTE_CNT, in->byte_cnt);
		vcx_set(cqe, VCX_CQE_IMM_INVAL_PKEY, in->imm);
		vcx_set(cqe, VCX_CQE_SRQN_UIDX, in->srqn);
		vcx_set(cqe, VCX_CQE_RQPN, in->rqpn);
		vcx_set(cqe, VCX_CQE_GRH, in->opcode == VCX_CQE_REQ ? 0 : 2);
	}
	__atomic_thread_fence(__ATOMIC_RELEASE);
	cqe[VCX_CQE_OP_OWN_BYTE] = vcx_cqe_make_op_own(in->opcode, VCX_CQE_FORMAT_NORMAL, in->se,
						       vcx_cqe_owner_for(cq->pi, cq->log_nent));
	cq->pi++;
}

/*
 * MODIFY_CQ resize as the device does it: refuse when the CQEs software has not consumed
 * plus the resize CQE do not fit the new ring (or the old ring has no room for the resize
 * CQE); else write RESIZE_CQ (opcode 5, all other bytes 0) at the producer position of
 * the old ring and go on in the new ring with the same counter.
 */
int dev_resize_cq(struct dev_cq *cq, uint8_t *buf, uint32_t log_nent)
{
	uint32_t ci = dbrec_word(cq->dbrec, 0) & VCX_CQ_CI_MASK;
	uint32_t outstanding = (cq->pi - ci) & VCX_CQ_CI_MASK;
	uint8_t *cqe = cq->buf + (cq->pi & ((1u << cq->log_nent) - 1)) * VCX_CQE_SIZE;

	if (outstanding >= (1u << log_nent) || outstanding >= (1u << cq->log_nent))
		return EINVAL;
	memset(cqe, 0, VCX_CQE_SIZE - 1);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	cqe[VCX_CQE_OP_OWN_BYTE] = vcx_cqe_make_op_own(VCX_CQE_RESIZE_CQ, VCX_CQE_FORMAT_NORMAL,
						       0, vcx_cqe_owner_for(cq->pi, cq->log_nent));
	cq->pi++;
	cq->buf = buf;
	cq->log_nent = log_nent;
	return 0;
}

/* ---------------------------------------------------------------------------------------
 * Gather / scatter
 */
struct sgl {
	struct { uint64_t addr; uint32_t len; uint32_t lkey; } e[64];
	int n;
};

static int sgl_len(const struct sgl *s)
{
	int i, len = 0;

	for (i = 0; i < s->n; i++)
		len += s->e[i].len;
	return len;
}

static bool sgl_bad_key(const struct sgl *s)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (s->e[i].lkey == BAD_LKEY)
			return true;
	return false;
}

static void sgl_copy_out(const struct sgl *s, uint8_t *dst, int max)
{
	int i, off = 0;

	for (i = 0; i < s->n && off < max; i++) {
		int n = (int)s->e[i].len < max - off ? (int)s->e[i].len : max - off;

		memcpy(dst + off, (void *)(uintptr_t)s->e[i].addr, n);
		off += n;
	}
}

/* Scatter len bytes; false if the list is too short (local length error). */
static bool sgl_copy_in(const struct sgl *s, const uint8_t *src, int len)
{
	int i, off = 0;

	for (i = 0; i < s->n && off < len; i++) {
		int n = (int)s->e[i].len < len - off ? (int)s->e[i].len : len - off;

		memcpy((void *)(uintptr_t)s->e[i].addr, src + off, n);
		off += n;
	}
	return off == len;
}

/* Data segments of a receive WQE, up to the terminator or the end of the WQE. */
static void parse_recv_sgl(const uint8_t *seg, int max, struct sgl *s)
{
	s->n = 0;
	for (; max > 0; max--, seg += VCX_WQE_DATA_SEG_SIZE) {
		if (vcx_get(seg, VCX_WQE_DATA_LKEY) == VCX_INVALID_LKEY)
			break;
		s->e[s->n].len = vcx_get(seg, VCX_WQE_DATA_BYTE_COUNT);
		s->e[s->n].lkey = vcx_get(seg, VCX_WQE_DATA_LKEY);
		s->e[s->n].addr = vcx_get64(seg, VCX_WQE_DATA_ADDR);
		s->n++;
	}
}

/* ---------------------------------------------------------------------------------------
 * Receive side
 */
struct recv_wqe {
	struct sgl sgl;
	uint16_t counter;		/* RQ counter or SRQ WQE index, for the CQE */
	uint32_t srqn;
};

static bool take_recv(struct dev_qp *qp, struct recv_wqe *r)
{
	if (qp->srq) {
		struct dev_srq *srq = qp->srq;
		uint16_t posted = (uint16_t)dbrec_word(srq->dbrec, 0);
		const uint8_t *wqe;

		if (posted == srq->consumed)
			return false;
		if (srq->hw_next >= srq->nwqe) {
			dev_protocol_error("SRQ %#x: next index %u out of range", srq->srqn,
					   srq->hw_next);
			return false;
		}
		wqe = srq->buf + ((size_t)srq->hw_next << srq->wqe_shift);
		parse_recv_sgl(wqe + VCX_SRQ_NEXT_SEG_SIZE,
			       ((1 << srq->wqe_shift) - VCX_SRQ_NEXT_SEG_SIZE) / 16, &r->sgl);
		r->counter = (uint16_t)srq->hw_next;
		r->srqn = srq->srqn;
		srq->hw_next = vcx_srq_next_get(wqe);
		srq->consumed++;
		return true;
	}
	if ((uint16_t)dbrec_word(qp->dbrec, 0) == qp->rq_ci)
		return false;
	parse_recv_sgl(qp->rq + ((size_t)(qp->rq_ci & (qp->rq_cnt - 1)) << qp->rq_shift),
		       (1 << qp->rq_shift) / 16, &r->sgl);
	r->counter = qp->rq_ci++;
	r->srqn = 0;
	return true;
}

/* ---------------------------------------------------------------------------------------
 * Send side
 */
struct send_wqe {
	uint8_t opcode;
	uint16_t index;
	uint32_t qpn;
	uint32_t ds;
	uint8_t fm_ce_se;
	uint32_t imm;
	uint64_t raddr;
	uint32_t rkey;
	uint64_t swap_add, compare;
	uint32_t dqpn, qkey;
	struct sgl sgl;
	uint8_t inl[1024];
	int inl_len;			/* -1: not inline */
};

/* Byte off of the WQE at WQEBB idx, wrapped in the ring. */
static const uint8_t *sq_at(struct dev_qp *qp, uint32_t idx, uint32_t off)
{
	uint32_t size = qp->sq_wqebbs * 64;

	return qp->sq + (((idx & (qp->sq_wqebbs - 1)) * 64 + off) & (size - 1));
}

static void parse_send(struct dev_qp *qp, uint32_t idx, struct send_wqe *w)
{
	const uint8_t *ctrl = sq_at(qp, idx, 0);
	uint32_t off = 16, end;

	w->opcode = vcx_get(ctrl, VCX_WQE_CTRL_OPCODE);
	w->index = vcx_get(ctrl, VCX_WQE_CTRL_WQE_INDEX);
	w->qpn = vcx_get(ctrl, VCX_WQE_CTRL_QPN);
	w->ds = vcx_get(ctrl, VCX_WQE_CTRL_DS_CNT);
	w->fm_ce_se = vcx_get(ctrl, VCX_WQE_CTRL_FM_CE_SE);
	w->imm = vcx_get(ctrl, VCX_WQE_CTRL_IMM);
	w->sgl.n = 0;
	w->inl_len = -1;
	end = w->ds * 16;
	if (w->opcode == VCX_OPCODE_UMR)
		return;		/* memory window bind / invalidation: no data segments */

	if (qp->type == IBV_QPT_UD) {
		const uint8_t *av = sq_at(qp, idx, off);

		w->qkey = vcx_get(av, VCX_WQE_AV_QKEY);
		w->dqpn = vcx_get(av, VCX_WQE_AV_DQPN);
		if (!vcx_get(av, VCX_WQE_AV_EXT))
			dev_protocol_error("UD WQE without the extended AV flag");
		off += VCX_WQE_AV_SIZE;
	}
	switch (w->opcode) {
	case VCX_OPCODE_RDMA_WRITE:
	case VCX_OPCODE_RDMA_WRITE_IMM:
	case VCX_OPCODE_RDMA_READ:
	case VCX_OPCODE_ATOMIC_CS:
	case VCX_OPCODE_ATOMIC_FA:
		w->raddr = vcx_get64(sq_at(qp, idx, off), VCX_WQE_RADDR_RADDR);
		w->rkey = vcx_get(sq_at(qp, idx, off), VCX_WQE_RADDR_RKEY);
		off += 16;
		break;
	}
	if (w->opcode == VCX_OPCODE_ATOMIC_CS || w->opcode == VCX_OPCODE_ATOMIC_FA) {
		w->swap_add = vcx_get64(sq_at(qp, idx, off), VCX_WQE_ATOMIC_SWAP_ADD);
		w->compare = vcx_get64(sq_at(qp, idx, off), VCX_WQE_ATOMIC_COMPARE);
		off += 16;
	}
	if (off < end && (vcx_get(sq_at(qp, idx, off), VCX_FLD(0, 32)) & VCX_WQE_INLINE_FLAG)) {
		uint32_t len = vcx_get(sq_at(qp, idx, off), VCX_WQE_INLINE_BYTE_COUNT);
		uint32_t i;

		if (4 + len > end - off || len > sizeof(w->inl)) {
			dev_protocol_error("inline length %u beyond the WQE", len);
			return;
		}
		for (i = 0; i < len; i++)
			w->inl[i] = *sq_at(qp, idx, off + 4 + i);
		w->inl_len = (int)len;
		return;
	}
	for (; off < end; off += 16) {
		const uint8_t *seg = sq_at(qp, idx, off);

		w->sgl.e[w->sgl.n].len = vcx_get(seg, VCX_WQE_DATA_BYTE_COUNT);
		w->sgl.e[w->sgl.n].lkey = vcx_get(seg, VCX_WQE_DATA_LKEY);
		w->sgl.e[w->sgl.n].addr = vcx_get64(seg, VCX_WQE_DATA_ADDR);
		w->sgl.n++;
	}
}

static void complete_req(struct dev_qp *qp, const struct send_wqe *w, uint32_t byte_cnt)
{
	struct cqe_info c = {
		.opcode = VCX_CQE_REQ, .qpn = qp->qpn, .wqe_counter = w->index,
		.sop_opcode = w->opcode, .byte_cnt = byte_cnt,
	};

	if ((w->fm_ce_se & (3u << 2)) == VCX_WQE_CE_CQE)
		write_cqe(qp->scq, &c);
}

static void complete_err(struct dev_cq *cq, uint8_t opcode, uint32_t qpn, uint16_t counter,
			 uint8_t sop, uint8_t synd, uint32_t srqn)
{
	struct cqe_info c = {
		.opcode = opcode, .qpn = qpn, .wqe_counter = counter, .sop_opcode = sop,
		.syndrome = synd, .vendor_synd = 0x42, .srqn = srqn,
	};

	write_cqe(cq, &c);
}

static void execute(struct dev_qp *qp, struct send_wqe *w)
{
	uint8_t data[65536];
	struct dev_qp *dst;
	struct recv_wqe r;
	int len;

	if (w->qpn != qp->qpn)
		dev_protocol_error("WQE names QP %#x, posted on %#x", w->qpn, qp->qpn);
	if (qp->state == IBV_QPS_ERR) {
		complete_err(qp->scq, VCX_CQE_REQ_ERR, qp->qpn, w->index, w->opcode,
			     VCX_CQE_SYND_WR_FLUSH_ERR, 0);
		return;
	}
	if (w->opcode == VCX_OPCODE_UMR) {
		/*
		 * A memory window bind or invalidation completes (byte_cnt 0). The window
		 * itself is the QEMU model's (tests/qtest/test_verbs_mw.py); the harness checks
		 * the provider's WQE bytes (test-qp-ex.c) and its completions.
		 */
		if (qp->type != IBV_QPT_RC && qp->type != IBV_QPT_UC)
			dev_protocol_error("UMR WQE on QP %#x of type %d", qp->qpn, qp->type);
		complete_req(qp, w, 0);
		return;
	}
	if (sgl_bad_key(&w->sgl)) {
		complete_err(qp->scq, VCX_CQE_REQ_ERR, qp->qpn, w->index, w->opcode,
			     VCX_CQE_SYND_LOCAL_PROT_ERR, 0);
		qp->state = IBV_QPS_ERR;
		return;
	}
	dst = dev_qp(qp->type == IBV_QPT_UD ? w->dqpn : qp->peer_qpn);
	if (!dst) {
		dev_protocol_error("no destination QP for %#x", qp->qpn);
		return;
	}
	if (w->inl_len >= 0) {
		len = w->inl_len;
		memcpy(data, w->inl, len);
	} else {
		len = sgl_len(&w->sgl);
		sgl_copy_out(&w->sgl, data, sizeof(data));
	}

	switch (w->opcode) {
	case VCX_OPCODE_RDMA_READ:
		memcpy(data, (void *)(uintptr_t)w->raddr, sgl_len(&w->sgl));
		sgl_copy_in(&w->sgl, data, sgl_len(&w->sgl));
		complete_req(qp, w, sgl_len(&w->sgl));
		return;
	case VCX_OPCODE_ATOMIC_CS:
	case VCX_OPCODE_ATOMIC_FA: {
		uint64_t *target = (uint64_t *)(uintptr_t)w->raddr, old = *target;

		if (w->opcode == VCX_OPCODE_ATOMIC_CS) {
			if (old == w->compare)
				*target = w->swap_add;
		} else {
			*target = old + w->swap_add;
		}
		memcpy((void *)(uintptr_t)w->sgl.e[0].addr, &old, 8);
		complete_req(qp, w, 8);
		return;
	}
	case VCX_OPCODE_RDMA_WRITE:
		memcpy((void *)(uintptr_t)w->raddr, data, len);
		complete_req(qp, w, 0);
		return;
	case VCX_OPCODE_RDMA_WRITE_IMM:
		memcpy((void *)(uintptr_t)w->raddr, data, len);
		break;
	}

	/* Everything below consumes a receive WQE at the destination. */
	if (!take_recv(dst, &r)) {
		complete_err(qp->scq, VCX_CQE_REQ_ERR, qp->qpn, w->index, w->opcode,
			     VCX_CQE_SYND_RNR_RETRY_EXC_ERR, 0);
		return;
	}
	{
		struct cqe_info c = {
			.qpn = dst->qpn, .wqe_counter = r.counter, .srqn = r.srqn,
			.rqpn = qp->qpn, .byte_cnt = len, .se = w->fm_ce_se & VCX_WQE_SE_SOLICITED,
		};

		switch (w->opcode) {
		case VCX_OPCODE_RDMA_WRITE_IMM:
			c.opcode = VCX_CQE_RESP_WR_IMM;
			c.imm = w->imm;
			break;
		case VCX_OPCODE_SEND_IMM:
			c.opcode = VCX_CQE_RESP_SEND_IMM;
			c.imm = w->imm;
			break;
		case VCX_OPCODE_SEND_INVAL:
			c.opcode = VCX_CQE_RESP_SEND_INV;
			c.imm = w->imm;
			break;
		default:
			c.opcode = VCX_CQE_RESP_SEND;
			break;
		}
		if (w->opcode != VCX_OPCODE_RDMA_WRITE_IMM && !sgl_copy_in(&r.sgl, data, len)) {
			complete_err(dst->rcq, VCX_CQE_RESP_ERR, dst->qpn, r.counter, 0,
				     VCX_CQE_SYND_LOCAL_LENGTH_ERR, r.srqn);
			return;
		}
		write_cqe(dst->rcq, &c);
	}
	complete_req(qp, w, 0);
}

/* The doorbell register must hold the first 8 bytes of the last WQE, in the right half. */
static void check_doorbell(struct dev_qp *qp)
{
	uint32_t page = qp->bfreg / dev.bfregs_per_uar, k = qp->bfreg % dev.bfregs_per_uar;
	uint8_t *reg = dev.uar + page * VCX_UAR_PAGE_SIZE + VCX_UAR_BF_OFFSET +
		       k * dev.bf_reg_size;
	uint32_t half = bf_expect_half[qp->bfreg];
	uint8_t *db = reg + half * (dev.bf_reg_size / 2);
	static const uint8_t zero[8];

	if (!memcmp(db, zero, 8)) {
		dev_protocol_error("QP %#x: no doorbell in half %u of bfreg %u", qp->qpn, half,
				   qp->bfreg);
		return;
	}
	if (memcmp(db, sq_at(qp, qp->last_wqe, 0), 8))
		dev_protocol_error("QP %#x: doorbell is not the last WQE's control segment",
				   qp->qpn);
	dev.last_doorbell_off = (uint32_t)(db - dev.uar);
	dev.last_doorbell = (uint64_t)vcx_be32_load(db) << 32 | vcx_be32_load(db + 4);
	memset(db, 0, 8);
	bf_expect_half[qp->bfreg] ^= 1;
}

static int run_sq(struct dev_qp *qp)
{
	uint16_t pi = (uint16_t)dbrec_word(qp->dbrec, 1);
	int n = 0;

	if (pi == qp->sq_ci)
		return 0;
	while (qp->sq_ci != pi) {
		struct send_wqe w;

		parse_send(qp, qp->sq_ci, &w);
		if (w.index != qp->sq_ci) {
			dev_protocol_error("WQE at %u carries index %u", qp->sq_ci, w.index);
			return n;
		}
		if (!w.ds) {
			dev_protocol_error("WQE at %u has DS count 0", qp->sq_ci);
			return n;
		}
		qp->last_wqe = qp->sq_ci;
		execute(qp, &w);
		qp->sq_ci += (w.ds * 16 + 63) / 64;
		n++;
	}
	if (dev.many_doorbells)
		memset(dev.uar, 0, dev.num_uars * VCX_UAR_PAGE_SIZE);
	else
		check_doorbell(qp);
	return n;
}

int dev_run(void)
{
	int i, n = 0;

	for (i = 0; i < DEV_MAX_OBJ; i++)
		if (dev.qp[i].valid && dev.qp[i].sq)
			n += run_sq(&dev.qp[i]);
	return n;
}

void dev_flush_qp(struct dev_qp *qp)
{
	struct recv_wqe r;

	qp->state = IBV_QPS_ERR;
	dev_run();
	if (qp->srq)
		return;		/* SRQ WQEs belong to the SRQ, not to the QP */
	while (take_recv(qp, &r))
		complete_err(qp->rcq, VCX_CQE_RESP_ERR, qp->qpn, r.counter, 0,
			     VCX_CQE_SYND_WR_FLUSH_ERR, 0);
}

uint64_t dev_cq_doorbell(void)
{
	const uint8_t *db = dev.uar + VCX_UAR_CQ_DOORBELL;

	return (uint64_t)vcx_be32_load(db) << 32 | vcx_be32_load(db + 4);
}
