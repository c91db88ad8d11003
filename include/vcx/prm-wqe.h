/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vcx device interface: data-path formats (PRM "Work Queues", "Completion Queues",
 * "UAR", "Doorbell Records").
 *
 * Send WQE segments, receive and SRQ WQEs, the 64-byte CQE, doorbell records, the UAR page
 * and the CQ arm doorbell. Offsets restate the ConnectX PRM as mirrored by Linux qp.h,
 * device.h, cq.h and doorbell.h. Fields use the VCX_FLD(bit offset, width) scheme of prm.h,
 * each relative to the start of its own segment; the encoders below fill whole segments.
 *
 * All layouts are big-endian. Byte order is handled by the accessors, so the same code runs
 * in the QEMU device, the kernel driver and the rdma-core provider.
 *
 * A note for writers of doorbell records and doorbells: the device may read a doorbell
 * record at any time, so software must update it with one aligned 32-bit store of the
 * big-endian value (not with vcx_set(), which stores byte by byte). WQEs and CQEs are only
 * read after a doorbell or ownership hand-off, so byte stores are fine for them.
 */
#ifndef VCX_PRM_WQE_H
#define VCX_PRM_WQE_H

#include "prm.h"

/* ---------------------------------------------------------------------------------------
 * Work queue geometry
 */
#define VCX_SEND_WQEBB			64u	/* send WQE basic block; SQ counters count these */
#define VCX_SEND_WQEBB_SHIFT		6
#define VCX_WQE_DS			16u	/* every segment is a multiple of 16-byte units */
#define VCX_WQE_DS_SHIFT		4
#define VCX_SEND_WQE_MAX_WQEBBS		16u	/* one WQE spans at most 1 KiB */
#define VCX_WQE_CTRL_DS_MAX		0x3fu	/* the DS count is a 6-bit field */
#define VCX_WQE_INDEX_MASK		0xffffu	/* SQ/RQ/SRQ counters wrap at 16 bits */
#define VCX_RQ_STRIDE_MIN		16u	/* log_rq_stride 0 = one 16-byte data segment */
#define VCX_INVALID_LKEY		0x100u	/* terminates a shorter-than-max receive list */
#define VCX_ATOMIC_SIZE			8u	/* bytes an atomic returns into its data segment */

/* Send opcodes (control segment byte 3). */
#define VCX_OPCODE_NOP			0x00
#define VCX_OPCODE_SEND_INVAL		0x01
#define VCX_OPCODE_RDMA_WRITE		0x08
#define VCX_OPCODE_RDMA_WRITE_IMM	0x09
#define VCX_OPCODE_SEND			0x0a
#define VCX_OPCODE_SEND_IMM		0x0b
#define VCX_OPCODE_LSO			0x0e
#define VCX_OPCODE_RDMA_READ		0x10
#define VCX_OPCODE_ATOMIC_CS		0x11
#define VCX_OPCODE_ATOMIC_FA		0x12
#define VCX_OPCODE_ATOMIC_MASKED_CS	0x14
#define VCX_OPCODE_ATOMIC_MASKED_FA	0x15
#define VCX_OPCODE_BIND_MW		0x18
#define VCX_OPCODE_LOCAL_INVAL		0x1b
#define VCX_OPCODE_SET_PSV		0x20
#define VCX_OPCODE_UMR			0x25	/* UMR: memory-key registration (REG_MR) and
						 * local invalidation; layout below */

/* ---------------------------------------------------------------------------------------
 * Control segment (16 bytes, first in every send WQE)
 */
#define VCX_WQE_CTRL_SIZE		16u
#define VCX_WQE_CTRL_OPMOD		VCX_FLD(0x00, 8)
#define VCX_WQE_CTRL_WQE_INDEX		VCX_FLD(0x08, 16)	/* SQ counter, in WQEBBs */
#define VCX_WQE_CTRL_OPCODE		VCX_FLD(0x18, 8)
#define VCX_WQE_CTRL_QPN		VCX_FLD(0x20, 24)
#define VCX_WQE_CTRL_DS_CNT		VCX_FLD(0x3a, 6)	/* whole WQE, 16-byte units */
#define VCX_WQE_CTRL_SIGNATURE		VCX_FLD(0x40, 8)
#define VCX_WQE_CTRL_FM_CE_SE		VCX_FLD(0x58, 8)
#define VCX_WQE_CTRL_FENCE_MODE		VCX_FLD(0x58, 3)
#define VCX_WQE_CTRL_CE			VCX_FLD(0x5c, 2)
#define VCX_WQE_CTRL_SE			VCX_FLD(0x5e, 1)
#define VCX_WQE_CTRL_IMM		VCX_FLD(0x60, 32)	/* immediate / rkey to invalidate */

/* fm_ce_se byte values, to be OR-ed. */
#define VCX_WQE_FM_NONE			(0u << 5)
#define VCX_WQE_FM_INITIATOR_SMALL	(1u << 5)
#define VCX_WQE_FM_FENCE		(2u << 5)
#define VCX_WQE_FM_STRONG_ORDERING	(3u << 5)
#define VCX_WQE_FM_SMALL_AND_FENCE	(4u << 5)	/* what IBV_SEND_FENCE asks for */
#define VCX_WQE_FM_MASK			(7u << 5)
#define VCX_WQE_CE_ERROR_ONLY		(0u << 2)	/* CQE only if the WQE fails */
#define VCX_WQE_CE_CQE			(2u << 2)	/* always a CQE (signaled) */
#define VCX_WQE_CE_CQE_AND_EQE		(3u << 2)
#define VCX_WQE_SE_SOLICITED		(1u << 1)

/*
 * Fill a control segment. imm is the value of the 32-bit field as a number: for an
 * immediate pass the host-order value of the application's big-endian imm_data (so the
 * bytes on the wire are the bytes the application gave); for SEND_INVAL the rkey.
 */
static inline void vcx_wqe_ctrl_set(void *seg, uint8_t opcode, uint8_t opmod,
				    uint16_t wqe_index, uint32_t qpn, uint8_t ds_cnt,
				    uint8_t fm_ce_se, uint32_t imm)
{
	uint8_t *p = (uint8_t *)seg;

	vcx_be32_store(p, (uint32_t)opmod << 24 | (uint32_t)wqe_index << 8 | opcode);
	vcx_be32_store(p + 4, (qpn & 0xffffffu) << 8 | (ds_cnt & VCX_WQE_CTRL_DS_MAX));
	p[8] = 0;		/* signature */
	p[9] = 0;
	p[10] = 0;
	p[11] = fm_ce_se;
	vcx_be32_store(p + 12, imm);
}

/* WQE signature: the byte that makes the XOR of the whole WQE 0xff (wq_signature only). */
static inline uint8_t vcx_wqe_signature(const void *wqe, uint32_t ds_cnt)
{
	return (uint8_t)~vcx_xor8(wqe, ds_cnt * VCX_WQE_DS);
}

/* ---------------------------------------------------------------------------------------
 * UMR WQE (opcode VCX_OPCODE_UMR): control segment (imm = the memory key, whose index
 * names the target; its low byte is not compared), UMR control segment (48 bytes), mkey
 * context segment (64 bytes, the first 64 bytes of the mkc: use the VCX_MKC_* fields of
 * prm-obj.h), then the translation list: inline (VCX_UMR_FLAG_INLINE, padded to 16
 * bytes) or one data segment pointing at it. Fast registration: mask LEN | PAGE_SIZE |
 * START_ADDR | KEY | access bits | FREE with free = 0 and xlt_octowords translations;
 * local invalidation: mask FREE with free = 1 and no translations.
 */
#define VCX_WQE_UMR_CTRL_SIZE		48u
#define VCX_WQE_UMR_FLAGS		VCX_FLD(0x00, 8)
#define VCX_WQE_UMR_XLT_OCTOWORDS	VCX_FLD(0x20, 16)	/* translations, 16-byte units */
#define VCX_UMR_XLT_ALIGN_OCTOWORDS	4u	/* UMR loads translations in 64-byte units */
#define VCX_WQE_UMR_XLT_OFFSET		VCX_FLD(0x30, 16)	/* first octoword, bits 15:0 */
#define VCX_WQE_UMR_MKEY_MASK		VCX_FLD(0x40, 64)
#define VCX_WQE_UMR_XLT_OFFSET_47_16	VCX_FLD(0x80, 32)
#define VCX_WQE_MKEY_SEG_SIZE		64u

/*
 * Memory window bind (a UMR WQE on a KLM key created free with umr_en): one KLM entry
 * (16 bytes) naming the MR and the window's range in it, inline, padded to 64 bytes
 * (VCX_WQE_MW_KLM_OCTOWORDS). Type 1: mkey segment qpn 0xffffff; type 2: the QP's number
 * (mask QPN) and flag CHECK_FREE. Unbind / local invalidation: mask FREE | KEY (| QPN and
 * flag CHECK_QPN for type 2) with free = 1 and no translations.
 */
#define VCX_WQE_KLM_SIZE		16u
#define VCX_WQE_KLM_BYTE_COUNT		VCX_FLD(0x00, 32)
#define VCX_WQE_KLM_MKEY		VCX_FLD(0x20, 32)
#define VCX_WQE_KLM_ADDR		VCX_FLD(0x40, 64)
#define VCX_WQE_MW_KLM_OCTOWORDS	4u
#define VCX_UMR_MASK_MW_BIND		(VCX_UMR_MASK_FREE | VCX_UMR_MASK_KEY | VCX_UMR_MASK_LEN | \
					 VCX_UMR_MASK_START_ADDR | VCX_UMR_MASK_LW | VCX_UMR_MASK_RR | \
					 VCX_UMR_MASK_RW | VCX_UMR_MASK_A)
/* The segments after the control segment: bind 176 bytes, unbind / invalidate 112. */
#define VCX_WQE_MW_BIND_SIZE		(VCX_WQE_UMR_CTRL_SIZE + VCX_WQE_MKEY_SEG_SIZE + \
					 VCX_WQE_MW_KLM_OCTOWORDS * 16u)
#define VCX_WQE_MW_UNBIND_SIZE		(VCX_WQE_UMR_CTRL_SIZE + VCX_WQE_MKEY_SEG_SIZE)
/* Window rights: the mkc access byte (mkey segment byte 2) bits. */
#define VCX_MW_ACC_LW			0x08u
#define VCX_MW_ACC_RR			0x10u
#define VCX_MW_ACC_RW			0x20u
#define VCX_MW_ACC_A			0x40u

/* UMR control flags. */
#define VCX_UMR_FLAG_CHECK_QPN		0x08u	/* fail unless the key is bound to this QP */
#define VCX_UMR_FLAG_TRANSLATION_OFFSET	0x10u	/* xlt_offset fields are valid */
/*
 * The free-state check, bits 6:5 (as both stock drivers use them: libmlx5 binds a type 2
 * window with 0x20, mlx5_ib enables a free cached key with 0x20 and changes a live MR's
 * PD or rights with 0x40): 1 the key must be free, 2 it must be in use.
 */
#define VCX_UMR_FLAG_CHECK_FREE		0x20u	/* fail unless the key is free */
#define VCX_UMR_FLAG_CHECK_NOT_FREE	0x40u	/* fail unless the key is in use */
#define VCX_UMR_FLAG_INLINE		0x80u	/* translations follow the mkey segment */

/* mkey_mask: the mkey segment fields the UMR writes. */
#define VCX_UMR_MASK_LEN		(1ull << 0)
#define VCX_UMR_MASK_PAGE_SIZE		(1ull << 1)
#define VCX_UMR_MASK_START_ADDR		(1ull << 6)
#define VCX_UMR_MASK_PD			(1ull << 7)
#define VCX_UMR_MASK_EN_RINVAL		(1ull << 8)
#define VCX_UMR_MASK_KEY		(1ull << 13)
#define VCX_UMR_MASK_QPN		(1ull << 14)
#define VCX_UMR_MASK_LR			(1ull << 17)
#define VCX_UMR_MASK_LW			(1ull << 18)
#define VCX_UMR_MASK_RR			(1ull << 19)
#define VCX_UMR_MASK_RW			(1ull << 20)
#define VCX_UMR_MASK_A			(1ull << 21)
#define VCX_UMR_MASK_SMALL_FENCE	(1ull << 23)
#define VCX_UMR_MASK_FREE		(1ull << 29)

/* Fill a UMR control segment. */
static inline void vcx_wqe_umr_ctrl_set(void *seg, uint8_t flags, uint16_t xlt_octowords,
					uint64_t mkey_mask)
{
	uint8_t *p = (uint8_t *)seg;
	uint32_t i;

	for (i = 0; i < VCX_WQE_UMR_CTRL_SIZE; i++)
		p[i] = 0;
	p[0] = flags;
	vcx_be32_store(p + 4, (uint32_t)xlt_octowords << 16);
	vcx_be32_store(p + 8, (uint32_t)(mkey_mask >> 32));
	vcx_be32_store(p + 12, (uint32_t)mkey_mask);
}

/*
 * Write the UMR control, mkey and (bind) KLM segments of a memory window bind into segs
 * (VCX_WQE_MW_BIND_SIZE bytes), as libmlx5's set_bind_wr lays them out; length 0 unbinds
 * (type 1) or invalidates (type 2, CHECK_QPN). The control segment's imm names the window.
 * Returns the bytes written.
 */
static inline uint32_t vcx_wqe_mw_segs_set(uint8_t *segs, int type2, uint32_t qpn, uint8_t key,
					   uint8_t access, uint32_t mr_lkey, uint64_t addr,
					   uint64_t length)
{
	uint8_t *mkey = segs + VCX_WQE_UMR_CTRL_SIZE;
	uint8_t *klm = mkey + VCX_WQE_MKEY_SEG_SIZE;
	uint64_t mask = VCX_UMR_MASK_FREE | VCX_UMR_MASK_KEY | (type2 ? VCX_UMR_MASK_QPN : 0);
	uint8_t flags = VCX_UMR_FLAG_INLINE | VCX_UMR_FLAG_TRANSLATION_OFFSET;
	uint32_t i;

	for (i = 0; i < VCX_WQE_MW_BIND_SIZE; i++)
		segs[i] = 0;
	if (!length) {
		vcx_wqe_umr_ctrl_set(segs, flags | (type2 ? VCX_UMR_FLAG_CHECK_QPN : 0), 0, mask);
		mkey[0] = 0x40;				/* free */
		vcx_be32_store(mkey + 4, 0xffffff00u | key);
		return VCX_WQE_MW_UNBIND_SIZE;
	}
	vcx_wqe_umr_ctrl_set(segs, flags | (type2 ? VCX_UMR_FLAG_CHECK_FREE : 0),
			     VCX_WQE_MW_KLM_OCTOWORDS, mask | VCX_UMR_MASK_MW_BIND);
	mkey[2] = access;
	vcx_be32_store(mkey + 4, (type2 ? qpn << 8 : 0xffffff00u) | key);
	vcx_be32_store(mkey + 16, (uint32_t)(addr >> 32));
	vcx_be32_store(mkey + 20, (uint32_t)addr);
	vcx_be32_store(mkey + 24, (uint32_t)(length >> 32));
	vcx_be32_store(mkey + 28, (uint32_t)length);
	vcx_be32_store(klm, (uint32_t)length);
	vcx_be32_store(klm + 4, mr_lkey);
	vcx_be32_store(klm + 8, (uint32_t)(addr >> 32));
	vcx_be32_store(klm + 12, (uint32_t)addr);
	return VCX_WQE_MW_BIND_SIZE;
}

/* ---------------------------------------------------------------------------------------
 * Data segment (16 bytes): one scatter/gather entry of a send or receive WQE
 */
#define VCX_WQE_DATA_SEG_SIZE		16u
#define VCX_WQE_DATA_BYTE_COUNT		VCX_FLD(0x00, 32)	/* bit 31 must be 0 */
#define VCX_WQE_DATA_LKEY		VCX_FLD(0x20, 32)
#define VCX_WQE_DATA_ADDR		VCX_FLD(0x40, 64)

static inline void vcx_wqe_data_seg_set(void *seg, uint32_t byte_count, uint32_t lkey,
					uint64_t addr)
{
	uint8_t *p = (uint8_t *)seg;

	vcx_be32_store(p, byte_count & 0x7fffffffu);
	vcx_be32_store(p + 4, lkey);
	vcx_be32_store(p + 8, (uint32_t)(addr >> 32));
	vcx_be32_store(p + 12, (uint32_t)addr);
}

/* The entry that ends a receive scatter list shorter than the WQE's capacity. */
static inline void vcx_wqe_data_seg_set_end(void *seg)
{
	vcx_wqe_data_seg_set(seg, 0, VCX_INVALID_LKEY, 0);
}

/* ---------------------------------------------------------------------------------------
 * Inline data segment: a 4-byte header, then the bytes, padded to 16 bytes. The padded
 * size counts in the DS count like any segment.
 */
#define VCX_WQE_INLINE_HDR_SIZE		4u
#define VCX_WQE_INLINE_FLAG		0x80000000u
#define VCX_WQE_INLINE_BYTE_COUNT	VCX_FLD(0x01, 31)

static inline void vcx_wqe_inline_hdr_set(void *seg, uint32_t len)
{
	vcx_be32_store((uint8_t *)seg, VCX_WQE_INLINE_FLAG | (len & 0x7fffffffu));
}

/* DS units taken by an inline segment carrying len bytes. */
static inline uint32_t vcx_wqe_inline_ds(uint32_t len)
{
	return (VCX_WQE_INLINE_HDR_SIZE + len + VCX_WQE_DS - 1) / VCX_WQE_DS;
}

/* ---------------------------------------------------------------------------------------
 * Remote address segment (16 bytes): RDMA READ/WRITE and atomics
 */
#define VCX_WQE_RADDR_SEG_SIZE		16u
#define VCX_WQE_RADDR_RADDR		VCX_FLD(0x00, 64)
#define VCX_WQE_RADDR_RKEY		VCX_FLD(0x40, 32)

static inline void vcx_wqe_raddr_seg_set(void *seg, uint64_t raddr, uint32_t rkey)
{
	uint8_t *p = (uint8_t *)seg;

	vcx_be32_store(p, (uint32_t)(raddr >> 32));
	vcx_be32_store(p + 4, (uint32_t)raddr);
	vcx_be32_store(p + 8, rkey);
	vcx_be32_store(p + 12, 0);
}

/* ---------------------------------------------------------------------------------------
 * Atomic segment (16 bytes), after the remote address segment. Compare-and-swap carries
 * swap and compare; fetch-and-add carries the addend in swap_add and 0 in compare.
 */
#define VCX_WQE_ATOMIC_SEG_SIZE		16u
#define VCX_WQE_MASKED_ATOMIC_SEG_SIZE	32u
#define VCX_WQE_ATOMIC_SWAP_ADD		VCX_FLD(0x00, 64)
#define VCX_WQE_ATOMIC_COMPARE		VCX_FLD(0x40, 64)

static inline void vcx_wqe_atomic_seg_set(void *seg, uint64_t swap_add, uint64_t compare)
{
	uint8_t *p = (uint8_t *)seg;

	vcx_be32_store(p, (uint32_t)(swap_add >> 32));
	vcx_be32_store(p + 4, (uint32_t)swap_add);
	vcx_be32_store(p + 8, (uint32_t)(compare >> 32));
	vcx_be32_store(p + 12, (uint32_t)compare);
}

/* ---------------------------------------------------------------------------------------
 * XRC segment (16 bytes, PRM "XRC Segment", mlx5_wqe_xrc_seg): in every send WQE of an XRC
 * initiator QP except NOP and the UMR-opcode WQEs (memory window bind, local
 * invalidate), right after the control segment and counted in its DS count. It names
 * the XRC SRQ at the target (IBTA XRCETH); the other 12 bytes are reserved (0).
 */
#define VCX_WQE_XRC_SEG_SIZE		16u
#define VCX_XRC_SEG_SRQN		VCX_FLD(0x08, 24)	/* dword 0, bits 23:0 */

static inline void vcx_wqe_xrc_seg_set(void *seg, uint32_t srqn)
{
	uint8_t *p = (uint8_t *)seg;

	vcx_be32_store(p, srqn & 0xffffffu);
	vcx_be32_store(p + 4, 0);
	vcx_be32_store(p + 8, 0);
	vcx_be32_store(p + 12, 0);
}

/* ---------------------------------------------------------------------------------------
 * Datagram segment / address vector (48 bytes): UD sends. The same 48 bytes are what an
 * address handle holds: software builds the AV once and copies it, then sets the
 * per-WQE qkey and destination QPN.
 */
#define VCX_WQE_AV_SIZE			48u
#define VCX_WQE_AV_QKEY			VCX_FLD(0x000, 32)
#define VCX_WQE_AV_DQP_DCT		VCX_FLD(0x040, 32)
#define VCX_WQE_AV_EXT			VCX_FLD(0x040, 1)	/* extended AV: always 1 */
#define VCX_WQE_AV_DQPN			VCX_FLD(0x048, 24)
#define VCX_WQE_AV_STAT_RATE		VCX_FLD(0x060, 4)
#define VCX_WQE_AV_SL_IB		VCX_FLD(0x064, 4)
#define VCX_WQE_AV_SL_ROCE		VCX_FLD(0x064, 3)	/* RoCE: SL in bits 3:1 */
#define VCX_WQE_AV_FL			VCX_FLD(0x068, 1)	/* force loopback */
#define VCX_WQE_AV_MLID			VCX_FLD(0x069, 7)
#define VCX_WQE_AV_RLID_UDP_SPORT	VCX_FLD(0x070, 16)
#define VCX_WQE_AV_RMAC			VCX_FLD(0x0a0, 48)	/* byte 0x14, 6 bytes */
#define VCX_WQE_AV_TCLASS		VCX_FLD(0x0d0, 8)
#define VCX_WQE_AV_HOP_LIMIT		VCX_FLD(0x0d8, 8)
#define VCX_WQE_AV_GRH			VCX_FLD(0x0e1, 1)	/* bit 30 of grh_gid_fl */
#define VCX_WQE_AV_SGID_INDEX		VCX_FLD(0x0e4, 8)
#define VCX_WQE_AV_FLOW_LABEL		VCX_FLD(0x0ec, 20)
#define VCX_WQE_AV_RGID			VCX_FLD(0x100, 128)	/* byte 0x20, 16 bytes */
#define VCX_WQE_AV_RMAC_LEN		6u
#define VCX_WQE_AV_RGID_LEN		16u
#define VCX_WQE_AV_EXT_FLAG		0x80000000u

/* Per-WQE part of a datagram segment: the AV bytes must already be in place. */
static inline void vcx_wqe_av_set_dest(void *seg, uint32_t qkey, uint32_t dqpn)
{
	uint8_t *p = (uint8_t *)seg;

	vcx_be32_store(p, qkey);
	vcx_be32_store(p + 4, 0);
	vcx_be32_store(p + 8, VCX_WQE_AV_EXT_FLAG | (dqpn & 0xffffffu));
}

/* ---------------------------------------------------------------------------------------
 * SRQ WQE: a 16-byte "next" segment, then data segments (terminated by VCX_INVALID_LKEY
 * when shorter than the stride). The stride is 2^(log_rq_stride + 4) bytes. The WQEs form
 * a linked list through next_wqe_index; the device follows it and reports the index of the
 * WQE it consumed in the CQE's wqe_counter.
 */
#define VCX_SRQ_NEXT_SEG_SIZE		16u
#define VCX_SRQ_NEXT_WQE_INDEX		VCX_FLD(0x10, 16)
#define VCX_SRQ_NEXT_SIGNATURE		VCX_FLD(0x20, 8)

static inline uint16_t vcx_srq_next_get(const void *wqe)
{
	return (uint16_t)vcx_get(wqe, VCX_SRQ_NEXT_WQE_INDEX);
}

static inline void vcx_srq_next_set(void *wqe, uint16_t next)
{
	vcx_set(wqe, VCX_SRQ_NEXT_WQE_INDEX, next);
}

/* ---------------------------------------------------------------------------------------
 * Doorbell records (host memory, written by software, read by the device). Byte offsets
 * of big-endian 32-bit counters.
 */
#define VCX_QP_DBR_SIZE			8u
#define VCX_QP_DBR_RECV			0u	/* RQ WQEs posted, 16 bits used */
#define VCX_QP_DBR_SEND			4u	/* SQ producer counter in WQEBBs, 16 bits */
#define VCX_SRQ_DBR_SIZE		4u
#define VCX_SRQ_DBR_COUNTER		0u	/* running count of posted SRQ WQEs, 16 bits */
#define VCX_CQ_DBR_SIZE			8u
#define VCX_CQ_DBR_SET_CI		0u	/* consumer index, 24 bits */
#define VCX_CQ_DBR_ARM			4u	/* arm word, as in the UAR CQ doorbell */
#define VCX_CQ_CI_MASK			0xffffffu
#define VCX_DBR_ALIGN			8u	/* every record sits on an 8-byte boundary */

/* ---------------------------------------------------------------------------------------
 * UAR page (4 KiB, BAR0 + index * 4 KiB)
 */
#define VCX_UAR_CQ_DOORBELL		0x020u	/* 64-bit: arm word, then CQN */
#define VCX_UAR_EQ_DOORBELL_ARM		0x040u	/* be32 (eqn << 24) | ci, and re-arm */
#define VCX_UAR_EQ_DOORBELL_NOARM	0x048u	/* same value, no re-arm */
#define VCX_UAR_BF_OFFSET		0x800u	/* first BlueFlame/doorbell register */
#define VCX_UAR_BFREGS_PER_PAGE		4u
#define VCX_UAR_LOG_BF_REG_SIZE		9u	/* each register: 512 bytes ... */
#define VCX_UAR_BF_REG_SIZE		(1u << VCX_UAR_LOG_BF_REG_SIZE)
#define VCX_UAR_BF_BUF_SIZE		(VCX_UAR_BF_REG_SIZE / 2)  /* ... used as two halves */

/* Offset in the UAR page of BlueFlame register k (0..3); half h (0, 1) adds h * buf size. */
static inline uint32_t vcx_uar_bf_offset(uint32_t k, uint32_t half)
{
	return VCX_UAR_BF_OFFSET + k * VCX_UAR_BF_REG_SIZE + half * VCX_UAR_BF_BUF_SIZE;
}

/*
 * SQ doorbell: the first 8 bytes of the last WQE's control segment, written as one 64-bit
 * store to the QP's BlueFlame register (or the whole WQE, up to the half's size, for a
 * BlueFlame write). The device takes the producer counter from the doorbell record.
 */
#define VCX_SQ_DOORBELL_SIZE		8u

/* CQ arm doorbell word (high dword of the UAR CQ doorbell and the arm doorbell record). */
#define VCX_CQ_DB_CMD_NOTIFY		0u	/* event on the next completion */
#define VCX_CQ_DB_CMD_NOTIFY_SOLICITED	1u	/* event on the next solicited or error CQE */
#define VCX_CQ_DB_ARM_SN		VCX_FLD(0x02, 2)
#define VCX_CQ_DB_CMD			VCX_FLD(0x04, 4)	/* bits 27:24 */
#define VCX_CQ_DB_CI			VCX_FLD(0x08, 24)
#define VCX_CQ_DB_CQN			VCX_FLD(0x28, 24)	/* low dword of the UAR write */

static inline uint32_t vcx_cq_arm_word(uint32_t arm_sn, uint32_t cmd, uint32_t ci)
{
	return (arm_sn & 3u) << 28 | (cmd & 0xfu) << 24 | (ci & VCX_CQ_CI_MASK);
}

/* ---------------------------------------------------------------------------------------
 * CQE (64 bytes). A queue of 128-byte CQEs places this layout in the second half.
 */
#define VCX_CQE_SIZE			64u
#define VCX_CQE_SIZE_128		128u
#define VCX_CQE_ML_PATH			VCX_FLD(0x089, 7)
#define VCX_CQE_SLID			VCX_FLD(0x0b0, 16)
#define VCX_CQE_FLAGS_RQPN		VCX_FLD(0x0c0, 32)
#define VCX_CQE_GRH			VCX_FLD(0x0c2, 2)	/* non-zero: GRH present */
#define VCX_CQE_SL			VCX_FLD(0x0c4, 4)
#define VCX_CQE_ROCE_L3_TYPE		VCX_FLD(0x0c6, 2)
#define VCX_CQE_RQPN			VCX_FLD(0x0c8, 24)	/* remote (source) QPN */
#define VCX_CQE_VLAN_PRESENT		VCX_FLD(0x0ef, 1)
#define VCX_CQE_VLAN_INFO		VCX_FLD(0x0f0, 16)
#define VCX_CQE_SRQN_UIDX		VCX_FLD(0x108, 24)	/* SRQN (cqe_version 0) */
#define VCX_CQE_IMM_INVAL_PKEY		VCX_FLD(0x120, 32)
#define VCX_CQE_BYTE_CNT		VCX_FLD(0x160, 32)
#define VCX_CQE_TIMESTAMP		VCX_FLD(0x180, 64)
#define VCX_CQE_VENDOR_ERR_SYND		VCX_FLD(0x1b0, 8)	/* error CQEs only */
#define VCX_CQE_SYNDROME		VCX_FLD(0x1b8, 8)	/* error CQEs only */
#define VCX_CQE_SOP_OPCODE		VCX_FLD(0x1c0, 8)	/* requester: send opcode */
#define VCX_CQE_QPN			VCX_FLD(0x1c8, 24)	/* local QPN */
#define VCX_CQE_WQE_COUNTER		VCX_FLD(0x1e0, 16)
#define VCX_CQE_SIGNATURE		VCX_FLD(0x1f0, 8)
#define VCX_CQE_OP_OWN_BYTE		0x3fu
#define VCX_CQE_OPCODE			VCX_FLD(0x1f8, 4)
#define VCX_CQE_FORMAT			VCX_FLD(0x1fc, 2)
#define VCX_CQE_SE			VCX_FLD(0x1fe, 1)
#define VCX_CQE_OWNER			VCX_FLD(0x1ff, 1)

/* CQE opcodes (op_own bits 7:4). */
#define VCX_CQE_REQ			0x0
#define VCX_CQE_RESP_WR_IMM		0x1
#define VCX_CQE_RESP_SEND		0x2
#define VCX_CQE_RESP_SEND_IMM		0x3
#define VCX_CQE_RESP_SEND_INV		0x4
#define VCX_CQE_RESIZE_CQ		0x5
#define VCX_CQE_NO_PACKET		0x6
#define VCX_CQE_SIG_ERR			0xc
#define VCX_CQE_REQ_ERR			0xd
#define VCX_CQE_RESP_ERR		0xe
#define VCX_CQE_INVALID			0xf

/* CQE formats (op_own bits 3:2). */
#define VCX_CQE_FORMAT_NORMAL		0x0
#define VCX_CQE_FORMAT_INLINE_32	0x1	/* received data in the CQE itself */
#define VCX_CQE_FORMAT_INLINE_64	0x2	/* ... in the preceding 64 bytes */
#define VCX_CQE_FORMAT_COMPRESSED	0x3

/* RoCE L3 header type (flags_rqpn bits 25:24). */
#define VCX_CQE_ROCE_L3_GRH		0x0
#define VCX_CQE_ROCE_L3_IPV6		0x1
#define VCX_CQE_ROCE_L3_IPV4		0x2

/* Error CQE syndromes. */
#define VCX_CQE_SYND_LOCAL_LENGTH_ERR		0x01
#define VCX_CQE_SYND_LOCAL_QP_OP_ERR		0x02
#define VCX_CQE_SYND_LOCAL_PROT_ERR		0x04
#define VCX_CQE_SYND_WR_FLUSH_ERR		0x05
#define VCX_CQE_SYND_MW_BIND_ERR		0x06
#define VCX_CQE_SYND_BAD_RESP_ERR		0x10
#define VCX_CQE_SYND_LOCAL_ACCESS_ERR		0x11
#define VCX_CQE_SYND_REMOTE_INVAL_REQ_ERR	0x12
#define VCX_CQE_SYND_REMOTE_ACCESS_ERR		0x13
#define VCX_CQE_SYND_REMOTE_OP_ERR		0x14
#define VCX_CQE_SYND_TRANSPORT_RETRY_EXC_ERR	0x15
#define VCX_CQE_SYND_RNR_RETRY_EXC_ERR		0x16
#define VCX_CQE_SYND_REMOTE_ABORTED_ERR		0x22
#define VCX_CQE_VENDOR_SYND_ODP_PAGE_FAULT	0x93

static inline uint8_t vcx_cqe_op_own(const void *cqe)
{
	return ((const uint8_t *)cqe)[VCX_CQE_OP_OWN_BYTE];
}

static inline uint8_t vcx_cqe_opcode(const void *cqe)
{
	return vcx_cqe_op_own(cqe) >> 4;
}

/* Owner bit the device writes into the entry at producer index pi of a 2^log_nent queue. */
static inline uint8_t vcx_cqe_owner_for(uint32_t pi, uint32_t log_nent)
{
	return (pi >> log_nent) & 1u;
}

/*
 * Whether the CQE at consumer index ci of a 2^log_nent queue belongs to software: its
 * opcode is valid and its owner bit matches the pass of the queue ci is on.
 */
static inline int vcx_cqe_is_sw_owned(const void *cqe, uint32_t ci, uint32_t log_nent)
{
	uint8_t op_own = vcx_cqe_op_own(cqe);

	return (op_own >> 4) != VCX_CQE_INVALID &&
	       (op_own & 1u) == vcx_cqe_owner_for(ci, log_nent);
}

/* Initial state of a CQE in a new CQ: invalid opcode, owner 0 (first pass). */
static inline void vcx_cqe_init(void *cqe)
{
	((uint8_t *)cqe)[VCX_CQE_OP_OWN_BYTE] = VCX_CQE_INVALID << 4;
}

/* op_own byte the device writes: opcode, format, solicited flag, owner. */
static inline uint8_t vcx_cqe_make_op_own(uint8_t opcode, uint8_t format, int se,
					  uint8_t owner)
{
	return (uint8_t)(opcode << 4 | (format & 3u) << 2 | (se ? 2u : 0u) | (owner & 1u));
}

#endif /* VCX_PRM_WQE_H */
