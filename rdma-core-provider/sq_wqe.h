/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vcx provider: building one send WQE in the SQ ring.
 *
 * sq.c turns an ibv_send_wr into a struct vcx_send_desc (which segments, which opcode);
 * vcx_sq_build_wqe() lays the segments out in PRM order (prm-wqe.h):
 *
 *     control | [XRC (XRC_SEND)] | [datagram (UD)] | [remote address] | [atomic] |
 *     data segments or inline
 *
 * or, for a memory window bind or invalidation (opcode UMR), control | UMR control |
 * mkey | [one KLM entry padded to 64 bytes] (vcx_wqe_mw_segs_set in prm-wqe.h).
 *
 * starting at WQEBB cur_post and wrapping at the end of the ring. Pure C on the ring
 * buffer, so tests/unit checks its output byte for byte.
 */
#ifndef VCX_SQ_WQE_H
#define VCX_SQ_WQE_H

#include <stdbool.h>
#include <stdint.h>

/* One gather entry; the same layout as struct ibv_sge (checked in sq.c). */
struct vcx_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

struct vcx_sq_ring {
	uint8_t *buf;
	uint32_t wqebb_cnt;		/* power of two */
};

struct vcx_send_desc {
	uint8_t opcode;			/* VCX_OPCODE_* */
	uint8_t fm_ce_se;		/* VCX_WQE_FM_* | VCX_WQE_CE_* | VCX_WQE_SE_* */
	uint32_t imm;			/* control-segment immediate / invalidate rkey */
	bool has_xrc;			/* XRC_SEND: the XRC segment naming the remote SRQ */
	uint32_t xrc_srqn;
	const uint8_t *av;		/* UD: the AH's 48-byte address vector, else NULL */
	uint32_t qkey;			/* UD */
	uint32_t dqpn;			/* UD */
	bool has_raddr;			/* RDMA and atomics */
	uint64_t raddr;
	uint32_t rkey;
	bool has_atomic;
	uint64_t swap_add;
	uint64_t compare;
	bool has_mw;			/* UMR: bind / unbind / invalidate a memory window */
	bool mw_inv;			/* LOCAL_INV (else BIND_MW) */
	bool mw_type2;			/* bound to this QP (CHECK_FREE; invalidate CHECK_QPN) */
	uint8_t mw_key;			/* the window's new key byte */
	uint8_t mw_access;		/* VCX_MW_ACC_* */
	uint32_t mw_lkey;		/* the MR the window lies in */
	uint64_t mw_addr;
	uint64_t mw_length;		/* 0: unbind or invalidate */
	bool inline_data;		/* copy the gather list into the WQE */
	const struct vcx_sge *sg_list;
	uint32_t num_sge;
};

/* Byte pos of WQEBB cur_post (plus off bytes) in the ring, wrapped. */
static inline uint8_t *vcx_sq_ring_at(const struct vcx_sq_ring *sq, uint32_t cur_post,
				      uint32_t off)
{
	uint32_t size = sq->wqebb_cnt * 64u;

	return sq->buf + (((cur_post & (sq->wqebb_cnt - 1)) * 64u + off) & (size - 1));
}

/* WQEBBs taken by a WQE of ds_cnt 16-byte units. */
static inline uint32_t vcx_wqe_wqebbs(uint32_t ds_cnt)
{
	return (ds_cnt * 16u + 63u) / 64u;
}

/*
 * Write the WQE described by d at WQEBB cur_post of the ring, for QP qpn. max_inline
 * bounds inline data, max_ds the whole WQE. Returns 0 and the DS count in *ds_cnt, or
 * EINVAL (inline too long, too many DS).
 */
int vcx_sq_build_wqe(const struct vcx_sq_ring *sq, uint32_t cur_post, uint32_t qpn,
		     const struct vcx_send_desc *d, uint32_t max_inline, uint32_t max_ds,
		     uint32_t *ds_cnt);

#endif /* VCX_SQ_WQE_H */
