// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vcx provider: send WQE layout (see sq_wqe.h).
 */
#include <errno.h>
#include <string.h>

#include "sq_wqe.h"
#include "vcx/prm-wqe.h"

/* Copy len bytes to ring offset off of the WQE, splitting at the end of the ring. */
static void ring_copy(const struct vcx_sq_ring *sq, uint32_t cur_post, uint32_t off,
		      const void *src, uint32_t len)
{
	const uint8_t *s = src;
	uint8_t *end = sq->buf + sq->wqebb_cnt * 64u;

	while (len) {
		uint8_t *dst = vcx_sq_ring_at(sq, cur_post, off);
		uint32_t chunk = (uint32_t)(end - dst);

		if (chunk > len)
			chunk = len;
		memcpy(dst, s, chunk);
		s += chunk;
		off += chunk;
		len -= chunk;
	}
}

static int build_inline(const struct vcx_sq_ring *sq, uint32_t cur_post, uint32_t off,
			const struct vcx_send_desc *d, uint32_t max_inline, uint32_t *ds)
{
	static const uint8_t zero_pad[VCX_WQE_DS];
	uint32_t data_off = off + VCX_WQE_INLINE_HDR_SIZE;
	uint32_t total = 0;
	uint32_t i;

	for (i = 0; i < d->num_sge; i++) {
		uint32_t len = d->sg_list[i].length;

		if (len > max_inline - total)
			return EINVAL;
		ring_copy(sq, cur_post, data_off + total,
			  (const void *)(uintptr_t)d->sg_list[i].addr, len);
		total += len;
	}
	*ds = total ? vcx_wqe_inline_ds(total) : 0;
	if (!total)
		return 0;
	vcx_wqe_inline_hdr_set(vcx_sq_ring_at(sq, cur_post, off), total);
	/* Zero the padding up to the next 16 bytes: the WQE bytes are deterministic. */
	ring_copy(sq, cur_post, data_off + total, zero_pad,
		  *ds * VCX_WQE_DS - VCX_WQE_INLINE_HDR_SIZE - total);
	return 0;
}

int vcx_sq_build_wqe(const struct vcx_sq_ring *sq, uint32_t cur_post, uint32_t qpn,
		     const struct vcx_send_desc *d, uint32_t max_inline, uint32_t max_ds,
		     uint32_t *ds_cnt)
{
	uint32_t off = VCX_WQE_CTRL_SIZE;
	uint32_t ds = 1;
	uint32_t i;

	if (d->has_mw) {
		uint8_t segs[VCX_WQE_MW_BIND_SIZE];
		uint32_t len = vcx_wqe_mw_segs_set(segs, d->mw_type2, qpn, d->mw_key,
						   d->mw_access, d->mw_lkey, d->mw_addr,
						   d->mw_length);

		ds += len / VCX_WQE_DS;
		if (ds > max_ds)
			return EINVAL;
		ring_copy(sq, cur_post, off, segs, len);
		goto ctrl;
	}
	if (d->has_xrc) {
		uint8_t *seg = vcx_sq_ring_at(sq, cur_post, off);

		memset(seg, 0, VCX_WQE_XRC_SEG_SIZE);
		vcx_set(seg, VCX_XRC_SEG_SRQN, d->xrc_srqn);
		off += VCX_WQE_XRC_SEG_SIZE;
		ds += VCX_WQE_XRC_SEG_SIZE / VCX_WQE_DS;
	}
	if (d->av) {
		uint8_t *seg = vcx_sq_ring_at(sq, cur_post, off);

		memcpy(seg, d->av, VCX_WQE_AV_SIZE);
		vcx_wqe_av_set_dest(seg, d->qkey, d->dqpn);
		off += VCX_WQE_AV_SIZE;
		ds += VCX_WQE_AV_SIZE / VCX_WQE_DS;
	}
	if (d->has_raddr) {
		vcx_wqe_raddr_seg_set(vcx_sq_ring_at(sq, cur_post, off), d->raddr, d->rkey);
		off += VCX_WQE_RADDR_SEG_SIZE;
		ds++;
	}
	if (d->has_atomic) {
		vcx_wqe_atomic_seg_set(vcx_sq_ring_at(sq, cur_post, off), d->swap_add,
				       d->compare);
		off += VCX_WQE_ATOMIC_SEG_SIZE;
		ds++;
	}

	if (d->inline_data) {
		uint32_t inl_ds;
		int err = build_inline(sq, cur_post, off, d, max_inline, &inl_ds);

		if (err)
			return err;
		ds += inl_ds;
	} else {
		for (i = 0; i < d->num_sge; i++) {
			const struct vcx_sge *sge = &d->sg_list[i];

			if (!sge->length)
				continue;	/* a zero-length entry carries nothing */
			if (ds >= max_ds)
				return EINVAL;
			vcx_wqe_data_seg_set(vcx_sq_ring_at(sq, cur_post, off),
					     d->has_atomic ? VCX_ATOMIC_SIZE : sge->length,
					     sge->lkey, sge->addr);
			off += VCX_WQE_DATA_SEG_SIZE;
			ds++;
		}
	}
	if (ds > max_ds)
		return EINVAL;

ctrl:
	vcx_wqe_ctrl_set(vcx_sq_ring_at(sq, cur_post, 0), d->opcode, 0,
			 (uint16_t)(cur_post & VCX_WQE_INDEX_MASK), qpn, (uint8_t)ds,
			 d->fm_ce_se, d->imm);
	*ds_cnt = ds;
	return 0;
}
