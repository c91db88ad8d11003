/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vcx uverbs ABI: the private udata exchanged between vcx.ko and the rdma-core provider.
 * Shared by guest-driver/ and rdma-core-provider/; grows with each verb that carries
 * driver data. Layouts are fixed-size, naturally aligned (every 64-bit field on an 8-byte
 * offset, every structure a multiple of 8 bytes unless it is a lone u32) and in host byte
 * order. The types are the kernel's __u32/__u64 in spirit; they are spelled uint32_t and
 * uint64_t so the same header compiles in the kernel (linux/types.h provides them) and in
 * userspace (stdint.h).
 *
 * Extension rule (as in mlx5-abi.h): structures only grow at the end; a comp_mask says
 * which optional trailing fields are valid; the kernel copies min(ulen, sizeof) and treats
 * missing request bytes as zero; reserved fields are zero and checked by the kernel.
 *
 * Shape of the ABI (what the kernel must do for each verb):
 *
 * alloc_ucontext  The kernel gives the context num_uars UAR pages (ALLOC_UAR). UAR page i
 *                 of the context is mmap()ed by the library at offset
 *                 vcx_mmap_offset(VCX_MMAP_UAR, i, page_size) and maps, uncached, to BAR0 +
 *                 uar_index * 4 KiB. Each UAR page holds VCX_UAR_BFREGS_PER_PAGE doorbell
 *                 ("bfreg") registers (prm-wqe.h); bfreg b is register b % 4 of page b / 4.
 *                 CQ doorbells of every CQ of the context go through UAR page 0 (its
 *                 uar_page is given to CREATE_CQ). With device_caps COMPLETION_TS the
 *                 library may also map, read only, the page of BAR0 that holds the
 *                 internal timer (VCX_MMAP_CORE_CLOCK, index 0), the timer at
 *                 resp.hca_core_clock_offset in it.
 * alloc_pd        resp.pdn is the PRM PD number (the library puts nothing of it in WQEs
 *                 today, but the field exists for direct-verbs style users).
 * reg_mr          no driver data: lkey/rkey come in the core response.
 * create_cq       The library allocates the CQE ring (2^n CQEs of cqe_size bytes, page
 *                 aligned, every CQE initialised to opcode INVALID / owner 0) and an 8-byte
 *                 doorbell record. The core "cqe" field is 2^n - 1; the kernel uses 2^n =
 *                 roundup_pow_of_two(cqe + 1) entries, pins buf_addr and db_addr and issues
 *                 CREATE_CQ with log_cq_size n, cqe_sz 0 (64 B), uar_page = UAR 0 of the
 *                 context, c_eqn from comp_vector and dbr_addr = the DMA address of db_addr.
 *                 resp.cqn is the CQ number.
 * resize_cq       The library allocates a new ring like create_cq's (2^m CQEs, every
 *                 CQE INVALID / owner 0; the core "cqe" is 2^m - 1) and sends its address.
 *                 The kernel pins it and issues MODIFY_CQ op_mod 1 (resize: log_cq_size m,
 *                 log_page_size 0, page_offset 0, PAS of the new ring; cqe_sz unchanged).
 *                 The device writes a RESIZE_CQ CQE (opcode 5) into the old ring at its
 *                 producer position and produces into the new ring from there on, the
 *                 counter running on (CQE n at entry n & (2^m - 1)). When the command
 *                 succeeds the library copies the CQEs it has not polled from old entry i
 *                 to new entry i + 1 (owner bit of i + 1 in the new size) up to the resize
 *                 CQE, then advances its consumer counter by one (libmlx5
 *                 mlx5_cq_resize_copy_cqes). Refused sizes: EINVAL (also when the CQEs
 *                 not yet consumed, plus the resize CQE, do not fit the new ring). The
 *                 doorbell record stays.
 * create_qp       One buffer holds the RQ (at offset 0, rq_wqe_count WQEs of
 *                 2^rq_wqe_shift bytes) followed by the SQ (sq_wqe_count WQEBBs of 64 bytes);
 *                 the total is rounded up to the page size. db_addr is the 8-byte QP
 *                 doorbell record. The kernel picks a bfreg of the context for the QP's SQ
 *                 doorbells and reports it in resp.bfreg_index (its UAR page goes into the
 *                 QPC uar_page). The QPN comes in the core response. QPC mapping, as
 *                 mlx5_ib does it: log_sq_size = log2(sq_wqe_count) (no_sq when 0),
 *                 log_rq_size = log2(rq_wqe_count), log_rq_stride = rq_wqe_shift - 4,
 *                 rq_type = SRQ (with srqn_rmpn) when the QP has an SRQ, zero-length RQ when
 *                 rq_wqe_count is 0 without one, regular otherwise; dbr_addr = db_addr; PAS
 *                 from buf_addr. A QP attached to an SRQ has rq_wqe_count 0.
 * create_srq      The buffer holds wqe_count (power of two) WQEs of 2^wqe_shift bytes
 *                 linked by the library; db_addr is the 4-byte SRQ doorbell record. The
 *                 kernel issues CREATE_SRQ/CREATE_RMP with log size and stride from these
 *                 two fields (srqc log_srq_size = log2(wqe_count), log_rq_stride =
 *                 wqe_shift - 4; RMP wq log_wq_sz, log_wq_stride = wqe_shift); the core
 *                 max_wr must be below wqe_count and max_sge must fit the stride. The
 *                 device starts consuming at WQE 0. The core srq_limit arms the limit.
 *                 resp.srqn is the PRM SRQ number, which CQEs carry in srqn.
 * create_ah       resp.dmac is the destination MAC resolved by the kernel (RoCE).
 * alloc_mw        Request optional (the library sends none, as libmlx5): struct
 *                 vcx_alloc_mw_req, comp_mask and reserved fields 0, num_klms the KLM
 *                 entries a bind may load (0: 1); the kernel creates a free KLM mkey with
 *                 umr_en and room for roundup(num_klms, 4) entries (mlx5_ib_alloc_mw).
 *                 The rkey comes in the core response. No response data.
 * modify/query/destroy of every object, dereg_mr, destroy_ah: no driver data.
 */
#ifndef VCX_ABI_H
#define VCX_ABI_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
#endif

/* ib_device_ops.uverbs_abi_ver; the provider accepts exactly this version. */
#define VCX_UVERBS_ABI_VERSION	1

/* ---------------------------------------------------------------------------------------
 * mmap offsets: offset = ((cmd << VCX_MMAP_CMD_SHIFT) | index) * page size, as libmlx5
 * encodes them (mlx5 "command 0, regular page").
 */
#define VCX_MMAP_CMD_SHIFT	8
#define VCX_MMAP_INDEX_MASK	0xffu
#define VCX_MMAP_UAR		0	/* UAR page <index> of the context, mapped uncached */
/*
 * The page of BAR0 with the internal timer (init segment 0x1000), read only and uncached,
 * index 0; only with device_caps VCX_DEVICE_CAP_COMPLETION_TS. mlx5's command number.
 */
#define VCX_MMAP_CORE_CLOCK	5

static inline uint64_t vcx_mmap_offset(uint32_t cmd, uint32_t index, uint64_t page_size)
{
	return (uint64_t)((cmd << VCX_MMAP_CMD_SHIFT) | (index & VCX_MMAP_INDEX_MASK)) *
	       page_size;
}

static inline uint32_t vcx_mmap_cmd(uint64_t pgoff)
{
	return (uint32_t)(pgoff >> VCX_MMAP_CMD_SHIFT) & 0xffu;
}

static inline uint32_t vcx_mmap_index(uint64_t pgoff)
{
	return (uint32_t)pgoff & VCX_MMAP_INDEX_MASK;
}

/* ---------------------------------------------------------------------------------------
 * alloc_mw (IB_USER_VERBS_CMD_ALLOC_MW); the layout of mlx5_ib_alloc_mw
 */
struct vcx_alloc_mw_req {
	uint32_t comp_mask;		/* 0 */
	uint8_t num_klms;		/* 0: 1 */
	uint8_t reserved1;
	uint16_t reserved2;
};

/* ---------------------------------------------------------------------------------------
 * alloc_ucontext (IB_USER_VERBS_CMD_GET_CONTEXT)
 */

/* Features of the library; the kernel may rely on them when set. None defined yet. */
#define VCX_LIB_CAPS_SUPPORTED	0u

struct vcx_alloc_ucontext_req {
	uint32_t comp_mask;		/* extensions of this request; 0 */
	uint32_t lib_caps;		/* VCX_LIB_CAP_* the library implements; 0 */
	uint32_t max_cqe_version;	/* newest CQE version the library parses (0: srqn in
					 * CQE byte 0x20, no user index) */
	uint32_t num_uars;		/* UAR pages wanted; 0 lets the kernel choose (1) */
};

/* resp.comp_mask bits: which optional trailing fields are valid. None defined yet. */
struct vcx_alloc_ucontext_resp {
	uint32_t comp_mask;		/* valid optional fields; 0 */
	uint32_t qp_tab_size;		/* 2^log_max_qp: QPNs are below this */
	uint32_t num_uars;		/* UAR pages of the context: mmap indices 0..n-1 */
	uint32_t bfregs_per_uar;	/* doorbell registers per UAR page (4) */
	uint32_t bf_reg_size;		/* bytes per register (512); halves of bf_reg_size/2
					 * are written alternately */
	uint32_t tot_bfregs;		/* num_uars * bfregs_per_uar */
	uint32_t cache_line_size;	/* device cache line (64): doorbell record spacing */
	uint32_t max_sq_desc_sz;	/* bytes of the largest send WQE (max_wqe_sz_sq) */
	uint32_t max_rq_desc_sz;	/* bytes of the largest receive WQE (max_wqe_sz_rq) */
	uint32_t max_send_wqebb;	/* SQ size limit in WQEBBs (2^log_max_qp_sz) */
	uint32_t max_recv_wr;		/* RQ size limit in WQEs (2^log_max_qp_sz) */
	uint32_t max_srq_recv_wr;	/* SRQ size limit in WQEs (2^log_max_srq_sz) */
	uint32_t max_cqe;		/* CQ size limit in CQEs (2^log_max_cq_sz) */
	uint32_t max_sge;		/* data segments of a send or receive WQE */
	uint32_t max_inline_data;	/* bytes of inline data per send WQE */
	uint16_t num_ports;		/* 1 */
	uint8_t cqe_version;		/* CQE version in use, <= req.max_cqe_version (0) */
	uint8_t reserved0;
	uint32_t atomic_caps;		/* VCX_ATOMIC_CAP_*: atomics the device executes */
	uint32_t device_caps;		/* VCX_DEVICE_CAP_*: operations the library may post */
	uint32_t hca_core_clock_offset;	/* COMPLETION_TS: byte of internal_timer_h (then _l)
					 * in the page mapped at VCX_MMAP_CORE_CLOCK */
	uint32_t reserved1;
};

/* device_caps: memory windows (alloc_mw; BIND_MW and LOCAL_INV as UMR WQEs on RC/UC). */
#define VCX_DEVICE_CAP_MW		(1u << 0)
/*
 * device_caps: CQEs carry the device's internal timer (device_frequency_khz is not 0;
 * query_device's hca_core_clock gives its rate): completion timestamps of create_cq_ex.
 */
#define VCX_DEVICE_CAP_COMPLETION_TS	(1u << 1)

#define VCX_ATOMIC_CAP_CMP_SWP		(1u << 0)	/* 8-byte compare-and-swap */
#define VCX_ATOMIC_CAP_FETCH_ADD	(1u << 1)	/* 8-byte fetch-and-add */

/* ---------------------------------------------------------------------------------------
 * alloc_pd (IB_USER_VERBS_CMD_ALLOC_PD): no request data
 */
struct vcx_alloc_pd_resp {
	uint32_t pdn;			/* PRM protection domain number */
};

/* ---------------------------------------------------------------------------------------
 * create_cq (IB_USER_VERBS_CMD_CREATE_CQ)
 */
struct vcx_create_cq_req {
	uint64_t buf_addr;		/* CQE ring, page aligned, (cqe + 1) * cqe_size bytes */
	uint64_t db_addr;		/* 8-byte doorbell record (set_ci, arm), 8-aligned */
	uint32_t cqe_size;		/* 64 (128 reserved: refused with EINVAL today) */
	uint32_t flags;			/* none defined: 0, else EINVAL */
};

struct vcx_create_cq_resp {
	uint32_t cqn;			/* PRM CQ number (the UAR arm doorbell names it) */
	uint32_t reserved;
};

/* ---------------------------------------------------------------------------------------
 * resize_cq (IB_USER_VERBS_CMD_RESIZE_CQ), as mlx5's struct mlx5_ib_resize_cq
 */
struct vcx_resize_cq_req {
	uint64_t buf_addr;		/* new CQE ring, page aligned, (cqe + 1) * cqe_size bytes */
	uint32_t cqe_size;		/* 64: the CQ's CQE size (it cannot change), else EINVAL */
	uint32_t reserved;		/* 0, else EINVAL */
};

/* ---------------------------------------------------------------------------------------
 * create_qp (IB_USER_VERBS_CMD_CREATE_QP); RC, UC and UD
 */
#define VCX_QP_FLAG_SIGNATURE		(1u << 0)	/* reserved: WQE signatures; refused */

struct vcx_create_qp_req {
	uint64_t buf_addr;		/* RQ at 0, SQ at rq_wqe_count << rq_wqe_shift */
	uint64_t db_addr;		/* 8-byte doorbell record (recv, send), 8-aligned */
	uint32_t sq_wqe_count;		/* SQ size in 64-byte WQEBBs, power of two */
	uint32_t rq_wqe_count;		/* RQ size in WQEs, power of two; 0 with an SRQ */
	uint32_t rq_wqe_shift;		/* log2 of the RQ stride in bytes (>= 4) */
	uint32_t flags;			/* VCX_QP_FLAG_*; 0 today */
};

struct vcx_create_qp_resp {
	uint32_t bfreg_index;		/* context bfreg for SQ doorbells (see top) */
	uint32_t reserved;
};

/* ---------------------------------------------------------------------------------------
 * create_srq (IB_USER_VERBS_CMD_CREATE_SRQ); basic SRQs
 */
struct vcx_create_srq_req {
	uint64_t buf_addr;		/* wqe_count << wqe_shift bytes, page aligned */
	uint64_t db_addr;		/* 4-byte doorbell record (WQE counter), 8-aligned */
	uint32_t wqe_count;		/* WQEs in the linked list buffer, power of two */
	uint32_t wqe_shift;		/* log2 of the WQE stride in bytes (>= 5: next segment +
					 * at least one data segment) */
	uint32_t flags;			/* none defined: 0, else EINVAL */
	uint32_t reserved;		/* 0 */
};

struct vcx_create_srq_resp {
	uint32_t srqn;			/* PRM SRQ number, as reported in CQEs */
	uint32_t reserved;
};

/* ---------------------------------------------------------------------------------------
 * create_ah (IB_USER_VERBS_CMD_CREATE_AH): no request data
 */
struct vcx_create_ah_resp {
	uint8_t dmac[6];		/* destination MAC (RoCE), from the GID's neighbour */
	uint8_t reserved[2];
};

#endif /* VCX_ABI_H */
