// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vcx provider: shared receive queues.
 *
 * The SRQ buffer is a linked list of WQEs (srq_list.c): posting fills WQEs at the head of
 * the chain and then writes the running WQE counter into the 4-byte doorbell record.
 * There is no MMIO doorbell for SRQs: the device learns about new WQEs from the record.
 * CQEs name the consumed WQE by index; poll_cq hands it back (vcx_srq_free_wqe).
 *
 * The limit (srq_limit) is armed through the kernel (create, or ibv_modify_srq with
 * IBV_SRQ_LIMIT). When fewer WQEs than the limit remain the device raises
 * IBV_EVENT_SRQ_LIMIT_REACHED once and disarms; the application re-arms with
 * ibv_modify_srq, exactly as with libmlx5. The library keeps no limit state of its own.
 *
 * XRC SRQs (ibv_create_srq_ex, xrc.c) are the same queue and the same udata; only the
 * command differs. Their CQEs come from targets the library has no QP object for, and
 * name the SRQ by number.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <util/udma_barrier.h>

#include "vcx.h"
#include "vcx-abi.h"
#include "vcx/prm-wqe.h"

struct vcx_srq *vcx_find_srq(struct vcx_context *ctx, uint32_t srqn)
{
	return vcx_table_find(&ctx->srq_table, srqn);
}

void vcx_srq_free_wqe(struct vcx_srq *srq, uint16_t idx)
{
	if (idx >= srq->list.nwqe)
		return;		/* not a WQE of this SRQ: nothing to give back */
	vcx_spin_lock(&srq->lock);
	vcx_srq_list_put(&srq->list, idx);
	vcx_spin_unlock(&srq->lock);
}

/*
 * Size the SRQ as libmlx5 does: a chain of 2^k >= max_wr + 1 WQEs (one stays unposted at
 * the tail) and, when the device allows the extra WQEs, a wait queue making the buffer
 * 2^m >= 2 * max_wr + 1 WQEs.
 */
static int size_srq(struct vcx_context *ctx, struct vcx_srq *srq,
		    const struct ibv_srq_attr *attr, uint32_t *wqe_shift,
		    uint32_t *chain_len, uint32_t *nwqe)
{
	uint32_t wqe_size;

	if (!attr->max_wr || attr->max_wr >= ctx->max_srq_recv_wr ||
	    attr->max_sge > ctx->max_sge)
		return EINVAL;
	wqe_size = VCX_SRQ_NEXT_SEG_SIZE +
		   max_t(uint32_t, attr->max_sge, 1) * VCX_WQE_DATA_SEG_SIZE;
	wqe_size = roundup_pow_of_two(wqe_size);
	if (wqe_size > ctx->max_rq_desc_sz)
		return EINVAL;
	*wqe_shift = ilog32(wqe_size - 1);
	srq->max_gs = (wqe_size - VCX_SRQ_NEXT_SEG_SIZE) / VCX_WQE_DATA_SEG_SIZE;

	*chain_len = roundup_pow_of_two(attr->max_wr + 1);
	*nwqe = roundup_pow_of_two(2 * attr->max_wr + 1);
	if (*nwqe > ctx->max_srq_recv_wr)
		*nwqe = *chain_len;	/* no room for a wait queue */
	return 0;
}

void vcx_srq_free(struct vcx_context *ctx, struct vcx_srq *srq)
{
	if (srq->dbrec)
		vcx_db_free(&ctx->db_pool, srq->dbrec);
	vcx_buf_free(&srq->buf);
	free(srq->wrid);
	vcx_spinlock_destroy(&srq->lock);
	free(srq);
}

/*
 * The library's side of a new SRQ, basic or XRC (xrc.c): sized per attr, buffer, list
 * and doorbell record, ready for the kernel command. NULL with errno set.
 */
struct vcx_srq *vcx_srq_alloc(struct vcx_context *ctx, struct ibv_srq_attr *attr)
{
	uint32_t wqe_shift, chain_len, nwqe;
	struct vcx_srq *srq;
	int err;

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	vcx_spinlock_init(&srq->lock, !ctx->single_threaded);
	err = size_srq(ctx, srq, attr, &wqe_shift, &chain_len, &nwqe);
	if (err)
		goto err_free;
	srq->wrid = calloc(nwqe, sizeof(*srq->wrid));
	if (!srq->wrid) {
		err = ENOMEM;
		goto err_free;
	}
	if (vcx_buf_alloc(&srq->buf, (size_t)nwqe << wqe_shift, ctx->page_size)) {
		err = errno;
		goto err_free;
	}
	vcx_srq_list_init(&srq->list, srq->buf.buf, wqe_shift, chain_len, nwqe);
	srq->dbrec = vcx_db_alloc(&ctx->db_pool);
	if (!srq->dbrec) {
		err = errno;
		goto err_free;
	}
	return srq;

err_free:
	vcx_srq_free(ctx, srq);
	errno = err;
	return NULL;
}

/* The create_srq udata (abi.h) of a basic or XRC SRQ: the same for both. */
void vcx_srq_fill_req(const struct vcx_srq *srq, uint64_t *buf_addr, uint64_t *db_addr,
		      uint32_t *wqe_count, uint32_t *wqe_shift)
{
	*buf_addr = (uintptr_t)srq->buf.buf;
	*db_addr = (uintptr_t)srq->dbrec;
	*wqe_count = srq->list.nwqe;
	*wqe_shift = srq->list.wqe_shift;
}

/*
 * After the create command, ok or not (err its result, srqn the number it returned):
 * CQEs find the SRQ by number and attr gets what the application can post. Any failure
 * undoes the kernel object and the SRQ, sets errno and returns NULL.
 */
struct ibv_srq *vcx_srq_publish(struct vcx_context *ctx, struct vcx_srq *srq, int err,
				uint32_t srqn, struct ibv_srq_attr *attr)
{
	if (err)
		goto err_free;
	srq->srqn = srqn;
	pthread_mutex_lock(&ctx->table_mutex);
	err = vcx_table_insert(&ctx->srq_table, srq->srqn, srq) ? errno : 0;
	pthread_mutex_unlock(&ctx->table_mutex);
	if (err) {
		ibv_cmd_destroy_srq(&srq->ibv_srq);
		goto err_free;
	}
	attr->max_wr = srq->list.chain_len - 1;
	attr->max_sge = srq->max_gs;
	return &srq->ibv_srq;

err_free:
	vcx_srq_free(ctx, srq);
	errno = err;
	return NULL;
}

struct ibv_srq *vcx_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct vcx_context *ctx = to_vcx_ctx(pd->context);
	struct vcx_create_srq_cmd_resp resp = {};
	struct vcx_create_srq_cmd cmd = {};
	struct vcx_srq *srq;
	int err;

	srq = vcx_srq_alloc(ctx, &attr->attr);
	if (!srq)
		return NULL;
	vcx_srq_fill_req(srq, &cmd.drv_payload.buf_addr, &cmd.drv_payload.db_addr,
			 &cmd.drv_payload.wqe_count, &cmd.drv_payload.wqe_shift);
	err = ibv_cmd_create_srq(pd, &srq->ibv_srq, attr, &cmd.ibv_cmd, sizeof(cmd),
				 &resp.ibv_resp, sizeof(resp));
	return vcx_srq_publish(ctx, srq, err, resp.drv_payload.srqn, &attr->attr);
}

int vcx_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int attr_mask)
{
	struct ibv_modify_srq cmd;

	/* The buffer is sized at creation; only the limit can change. */
	if (attr_mask & IBV_SRQ_MAX_WR)
		return EINVAL;
	return ibv_cmd_modify_srq(srq, attr, attr_mask, &cmd, sizeof(cmd));
}

int vcx_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct vcx_srq *srq = to_vcx_srq(ibsrq);
	struct ibv_query_srq cmd;
	int ret;

	ret = ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	attr->max_wr = srq->list.chain_len - 1;
	attr->max_sge = srq->max_gs;
	return 0;
}

int vcx_destroy_srq(struct ibv_srq *ibsrq)
{
	struct vcx_context *ctx = to_vcx_ctx(ibsrq->context);
	struct vcx_srq *srq = to_vcx_srq(ibsrq);
	int ret;

	ret = ibv_cmd_destroy_srq(ibsrq);
	if (ret)
		return ret;
	pthread_mutex_lock(&ctx->table_mutex);
	vcx_table_remove(&ctx->srq_table, srq->srqn);
	pthread_mutex_unlock(&ctx->table_mutex);
	vcx_srq_free(ctx, srq);
	return 0;
}

int vcx_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr)
{
	struct vcx_srq *srq = to_vcx_srq(ibsrq);
	uint32_t nreq, i;
	int err = 0;

	vcx_spin_lock(&srq->lock);
	for (nreq = 0; wr; nreq++, wr = wr->next) {
		uint8_t *seg;
		int32_t idx;

		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > srq->max_gs) {
			err = EINVAL;
			*bad_wr = wr;
			break;
		}
		idx = vcx_srq_list_take(&srq->list);
		if (idx < 0) {
			err = ENOMEM;
			*bad_wr = wr;
			break;
		}
		srq->wrid[idx] = wr->wr_id;
		seg = (uint8_t *)vcx_srq_list_wqe(&srq->list, idx) + VCX_SRQ_NEXT_SEG_SIZE;
		for (i = 0; i < (uint32_t)wr->num_sge; i++)
			vcx_wqe_data_seg_set(seg + i * VCX_WQE_DATA_SEG_SIZE,
					     wr->sg_list[i].length, wr->sg_list[i].lkey,
					     wr->sg_list[i].addr);
		if (i < srq->max_gs)
			vcx_wqe_data_seg_set_end(seg + i * VCX_WQE_DATA_SEG_SIZE);
	}

	if (nreq) {
		srq->counter += nreq;
		/* WQEs before the counter that hands them to the device. */
		udma_to_device_barrier();
		srq->dbrec[VCX_SRQ_DBR_COUNTER / 4] = htobe32(srq->counter & VCX_WQE_INDEX_MASK);
	}
	vcx_spin_unlock(&srq->lock);
	return err;
}
