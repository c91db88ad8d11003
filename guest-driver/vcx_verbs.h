/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vcx: RDMA verbs (ib_core provider side).
 *
 *   vcx_ib.c    ib_device registration, device/port/GID/P_Key queries, the port netdev,
 *               SET_ROCE_ADDRESS (add_gid/del_gid), ucontext + UAR mmap, doorbell record
 *               pinning, event dispatch from the EQs (completions, async events)
 *   vcx_pd.c    ALLOC_PD / DEALLOC_PD
 *   vcx_mr.c    CREATE_MKEY / DESTROY_MKEY: DMA MR, user MR (ib_umem -> MTT), FRWR
 *   vcx_cq.c    CREATE_CQ / DESTROY_CQ, arm doorbell, kernel poll_cq
 *   vcx_qp.c    CREATE_QP, state transitions, QUERY_QP, DESTROY_QP, kernel post_send/recv
 *   vcx_srq.c   CREATE_RMP/SRQ, MODIFY_RMP/ARM_RQ, QUERY_RMP/SRQ, DESTROY, post_srq_recv
 *   vcx_xrc.c   XRC domains, XRC SRQ commands, what XRC_INI / XRC_TGT QPs add to RC
 *   vcx_ah.c    address handles (RoCE address vectors of UD WQEs)
 */
#ifndef VCX_VERBS_H
#define VCX_VERBS_H

#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/netdevice.h>
#include <linux/version.h>
#include <rdma/ib_umem.h>
#include <rdma/iter.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/ib_verbs.h>

#include "vcx.h"
#include "vcx/abi.h"
#include "vcx/prm-wqe.h"

/* create_cq takes a uverbs_attr_bundle from 6.10 on. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
#define VCX_CREATE_CQ_UDATA_ARG	struct uverbs_attr_bundle *attrs
#define VCX_CREATE_CQ_UDATA	(attrs ? &attrs->driver_udata : NULL)
#else
#define VCX_CREATE_CQ_UDATA_ARG	struct ib_udata *udata_arg
#define VCX_CREATE_CQ_UDATA	udata_arg
#endif

/* The driver's REG_UMR QP and what it runs on (vcx_umr.c). */
struct vcx_umr {
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct mutex lock;		/* one UMR at a time */
	bool broken;			/* a UMR never completed: not used again */
};

/*
 * Driver-private QP type and work request of the UMR QP, in ib_verbs' reserved ranges
 * (as mlx5_ib's MLX5_IB_QPT_REG_UMR): never reachable from userspace.
 */
#define VCX_IB_QPT_REG_UMR	IB_QPT_RESERVED1
#define VCX_IB_WR_UMR_PD_ACCESS	IB_WR_RESERVED1

struct vcx_umr_wr {
	struct ib_send_wr wr;
	u32 mkey;
	u32 pdn;
	int access;			/* IB_ACCESS_* */
};

static inline const struct vcx_umr_wr *to_vcx_umr_wr(const struct ib_send_wr *wr)
{
	return container_of(wr, struct vcx_umr_wr, wr);
}

struct vcx_ib_dev {
	struct ib_device ibdev;
	struct vcx_dev *vdev;
	struct net_device *netdev;	/* the port's (minimal) Ethernet interface */
	u8 mac[ETH_ALEN];
	enum ib_port_state port_state;
	u32 max_sge;			/* data segments in any send or receive WQE */
	u32 max_srq_sge;
	u32 max_sq_desc;
	u32 max_rq_desc;
	u32 max_inline;			/* user QPs */
	u32 atomic_caps;		/* VCX_ATOMIC_CAP_* */
	u32 gid_table_len;
	u32 kernel_bf;			/* kernel doorbell register (round robin) */
	bool frwr;			/* the device executes UMR WQEs: FRWR works */
	u32 frwr_max;			/* pages (or SG entries) per FRWR MR */
	bool mw;			/* memory windows (cap imaicl, with frwr) */
	bool xrc;			/* XRC domains, SRQs and QPs (cap xrc) */
	struct ib_pd *xrc_pd;		/* XRC targets' PD when there is no UMR PD */
	struct vcx_umr umr;
	spinlock_t bf_lock;
	struct vcx_qp *gsi_qp;		/* the port's GSI QP (QP1), at most one */
	/*
	 * The port's Q counter, named by every QP not bound to a counter of its own
	 * (vcx_counters.c); 0: none.
	 */
	u32 q_counter;
	bool q_counter_alloc;
	u32 num_cnt;			/* hw_counters shown */
	struct rdma_stat_desc *cnt_desc;
	struct vcx_fld *cnt_fld;	/* query_q_counter_out field of each */
};

static inline struct vcx_ib_dev *to_vibdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct vcx_ib_dev, ibdev);
}

/* Doorbell records: kernel ones from a DMA pool, user ones pinned in the caller's page. */
struct vcx_user_db_page {
	struct list_head list;
	struct ib_umem *umem;
	unsigned long user_virt;	/* page address */
	int refcnt;
};

struct vcx_db {
	__be32 *db;			/* kernel objects only */
	dma_addr_t dma;
	struct vcx_user_db_page *upage;	/* user objects only */
};

struct vcx_user_mmap_entry {
	struct rdma_user_mmap_entry rdma_entry;
	struct vcx_dev *vdev;
	u32 uar_index;
};

struct vcx_ucontext {
	struct ib_ucontext ibuc;
	u32 num_uars;
	u32 uar_index[VCX_UCTX_MAX_UARS];
	struct rdma_user_mmap_entry *uar_entry[VCX_UCTX_MAX_UARS];
	atomic_t next_bfreg;
	struct mutex db_lock;
	struct list_head db_pages;
};

static inline struct vcx_ucontext *to_vuctx(struct ib_ucontext *ibuc)
{
	return container_of(ibuc, struct vcx_ucontext, ibuc);
}

struct vcx_pd {
	struct ib_pd ibpd;
	u32 pdn;
};

struct vcx_mw {
	struct ib_mw ibmw;
	u32 mkey_index;
};

static inline struct vcx_mw *to_vmw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct vcx_mw, ibmw);
}

static inline struct vcx_pd *to_vpd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct vcx_pd, ibpd);
}

struct vcx_xrcd {
	struct ib_xrcd ibxrcd;
	u32 xrcdn;
};

static inline struct vcx_xrcd *to_vxrcd(struct ib_xrcd *ibxrcd)
{
	return container_of(ibxrcd, struct vcx_xrcd, ibxrcd);
}

struct vcx_mr {
	struct ib_mr ibmr;
	struct ib_umem *umem;
	u32 mkey_index;
	int access;			/* IB_ACCESS_* of a user MR, for rereg */
	/*
	 * FRWR: the list a REG_MR UMR loads, MTT entries (IB_MR_TYPE_MEM_REG, 8 bytes) or
	 * KLM entries (IB_MR_TYPE_SG_GAPS, an indirect key: 16 bytes, one per SG entry)
	 */
	__be64 *mtt;
	dma_addr_t mtt_dma;
	bool klm;
	u32 max_descs;			/* entries in mtt, 64 bytes of them at least */
	u32 ndescs;			/* entries set by the last map_mr_sg */
};

static inline size_t vcx_mr_desc_size(const struct vcx_mr *mr)
{
	return mr->klm ? VCX_WQE_KLM_SIZE : sizeof(u64);
}

/* FRWR limits: pages per fast-registration MR; the size of a REG_MR UMR WQE. */
#define VCX_FRWR_MAX_PAGES	512u
#define VCX_UMR_REG_WQE_SIZE	(VCX_WQE_CTRL_SIZE + VCX_WQE_UMR_CTRL_SIZE + \
				 VCX_WQE_MKEY_SEG_SIZE + VCX_WQE_DATA_SEG_SIZE)

static inline struct vcx_mr *to_vmr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct vcx_mr, ibmr);
}

/* A kernel CQ's ring: 2^log_nent CQEs of 64 bytes in one DMA-coherent buffer. */
struct vcx_cq_ring {
	void *buf;
	dma_addr_t dma;
	size_t size;
	u32 log_nent;
};

struct vcx_cq {
	struct ib_cq ibcq;
	struct vcx_dev *vdev;
	u32 cqn;
	u32 log_nent;
	u32 eqn;
	/* kernel CQs */
	void *buf;
	dma_addr_t buf_dma;
	size_t buf_size;
	u32 cons_index;
	u8 arm_sn;
	spinlock_t lock;		/* poll / arm */
	/* user CQs */
	struct ib_umem *umem;
	struct vcx_db db;
	/* resize: one at a time */
	struct mutex resize_mutex;
	struct vcx_cq_ring *resize;	/* a kernel CQ's new ring while MODIFY_CQ runs */
	bool resize_switched;		/* the poller met the resize CQE and switched */
	/*
	 * Kernel CQs: the kernel QPs whose send (receive) queue completes here, for the
	 * software flush completions of the error state (under lock).
	 */
	struct list_head send_qps;	/* vcx_qp.cq_send_link */
	struct list_head recv_qps;	/* vcx_qp.cq_recv_link */
	bool hw_stopped;		/* error state: the ring is no longer read */
};

static inline struct vcx_cq *to_vcq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct vcx_cq, ibcq);
}

struct vcx_srq {
	struct ib_srq ibsrq;
	struct vcx_dev *vdev;
	u32 srqn;
	bool is_rmp;			/* ISSI 1: an RMP; ISSI 0: an SRQ */
	bool is_xrc_srq;		/* ISSI 1 XRC SRQ: the CREATE_XRC_SRQ family */
	u32 xrcdn;			/* XRC SRQs (either ISSI): the domain, else 0 */
	u32 cqn;			/* XRC SRQs: the CQ of their receive completions */
	u32 max;			/* WQEs in the buffer (power of two) */
	u32 max_wr;			/* WRs posted at once (query_srq's max_wr) */
	u32 wqe_shift;
	u32 max_gs;
	u32 limit;
	/* kernel SRQs */
	void *buf;
	dma_addr_t buf_dma;
	size_t buf_size;
	u64 *wrid;
	u16 head, tail;
	u16 wqe_ctr;
	spinlock_t lock;
	/* user SRQs */
	struct ib_umem *umem;
	struct vcx_db db;
};

static inline struct vcx_srq *to_vsrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct vcx_srq, ibsrq);
}

struct vcx_wq {
	u32 wqe_cnt;			/* SQ: WQEBBs; RQ: WQEs (power of two) */
	u32 wqe_shift;
	u32 max_gs;
	u32 max_post;			/* WRs the consumer may have outstanding */
	u32 offset;			/* in the QP buffer */
	u32 head, tail;			/* producer, consumer (free running) */
	u64 *wrid;
	u32 *next_head;			/* SQ: head after the WQE starting at this index */
	u8 *opcode;			/* SQ: ib_wc_opcode of the WQE at this index */
	spinlock_t lock;
};

struct vcx_qp {
	struct ib_qp ibqp;
	struct vcx_dev *vdev;
	u32 qpn;
	u8 st;				/* VCX_QP_ST_* */
	enum ib_qp_state state;
	u8 port;
	bool sq_signal_all;
	u32 qkey;
	u32 access_flags;		/* IB_ACCESS_* of the responder */
	u8 resp_depth;			/* max_dest_rd_atomic */
	/* kernel QPs */
	void *buf;
	dma_addr_t buf_dma;
	size_t buf_size;
	struct vcx_wq sq, rq;
	u8 *scratch;			/* WQE under construction (SQ lock) */
	void __iomem *bf;		/* doorbell register */
	u32 bf_offset;			/* alternating half */
	struct list_head cq_send_link;	/* on send_cq's send_qps */
	struct list_head cq_recv_link;	/* on recv_cq's recv_qps */
	/* user QPs */
	struct ib_umem *umem;
	struct vcx_db db;
	u32 bfreg;
	/*
	 * Serializes state changes with counter binding (vcx_qp_set_counter()), which may
	 * issue its own RTS2RTS; counter_pending: ibqp.counter changed while the QP was
	 * neither in RESET nor in RTS, to be applied when it enters RTS.
	 */
	struct mutex mutex;
	bool counter_pending;
};

static inline struct vcx_qp *to_vqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct vcx_qp, ibqp);
}

/* UD and the GSI QP (st QP1) send datagrams: WQEs with an address vector. */
static inline bool vcx_qp_is_dgram(const struct vcx_qp *qp)
{
	return qp->st == VCX_QP_ST_UD || qp->st == VCX_QP_ST_QP1;
}

struct vcx_ah {
	struct ib_ah ibah;
	u8 av[VCX_WQE_AV_SIZE];		/* address vector, as UD WQEs carry it */
};

static inline struct vcx_ah *to_vah(struct ib_ah *ibah)
{
	return container_of(ibah, struct vcx_ah, ibah);
}

static inline struct vcx_dev *ibdev_to_vdev(struct ib_device *ibdev)
{
	return to_vibdev(ibdev)->vdev;
}

#define vcx_cap(vdev, fld)	vcx_get((vdev)->caps.general, VCX_CAP_GEN_##fld)

/* vcx_mad.c */
int vcx_ib_process_mad(struct ib_device *ibdev, int mad_flags, u32 port_num,
		       const struct ib_wc *in_wc, const struct ib_grh *in_grh,
		       const struct ib_mad *in, struct ib_mad *out, size_t *out_mad_size,
		       u16 *out_mad_pkey_index);

/* vcx_counters.c */
void vcx_counters_init(struct vcx_ib_dev *ibd);
void vcx_counters_cleanup(struct vcx_ib_dev *ibd);
/* vcx_qp.c: counter binding (counter NULL: back to the port's Q counter) */
int vcx_qp_set_counter(struct ib_qp *ibqp, struct rdma_counter *counter);

/* vcx_ib.c */
int vcx_ib_db_alloc(struct vcx_dev *vdev, struct vcx_db *db);
void vcx_ib_db_free(struct vcx_dev *vdev, struct vcx_db *db);
int vcx_ib_db_map_user(struct vcx_ucontext *uctx, u64 virt, struct vcx_db *db);
void vcx_ib_db_unmap_user(struct vcx_ucontext *uctx, struct vcx_db *db);
int vcx_ib_user_queue_map(struct vcx_ucontext *uctx, u64 buf_addr, size_t size, int access,
			  u64 db_addr, struct ib_umem **umem, struct vcx_db *db);
void vcx_ib_user_queue_unmap(struct vcx_ucontext *uctx, struct ib_umem **umem,
			     struct vcx_db *db);
void vcx_ib_fill_pas(u8 *pas, struct ib_umem *umem, dma_addr_t dma, size_t npages);
int vcx_ib_alloc_uar(struct vcx_dev *vdev, u32 *index);
void vcx_ib_dealloc_uar(struct vcx_dev *vdev, u32 index);
int vcx_ib_fill_ah_av(struct vcx_ib_dev *ibd, const struct rdma_ah_attr *ah, u8 *av);

/* vcx_pd.c */
/* vcx_mcast.c */
int vcx_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int vcx_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);

int vcx_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int vcx_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

/* vcx_mr.c */
struct ib_mr *vcx_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *vcx_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length, u64 virt,
			      int access, struct ib_udata *udata);
struct ib_mr *vcx_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start, u64 length,
				u64 virt, int access, struct ib_pd *new_pd,
				struct ib_udata *udata);
int vcx_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
void vcx_mkc_set_access(u8 *mkc, int access);
int vcx_mkey_create(struct vcx_dev *vdev, u8 *in, size_t inlen, u32 *mkey);
int vcx_mkey_destroy(struct vcx_dev *vdev, u32 mkey_index);
int vcx_umr_init(struct vcx_ib_dev *ibd);
void vcx_umr_cleanup(struct vcx_ib_dev *ibd);
bool vcx_umr_available(struct vcx_ib_dev *ibd);
int vcx_umr_rereg_pd_access(struct vcx_ib_dev *ibd, struct vcx_mr *mr, struct ib_pd *pd,
			    int access);
struct ib_mr *vcx_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type, u32 max_num_sg);

/* vcx_mw.c */
int vcx_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int vcx_dealloc_mw(struct ib_mw *ibmw);
int vcx_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		  unsigned int *sg_offset);

/* vcx_cq.c */
int vcx_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		  VCX_CREATE_CQ_UDATA_ARG);
int vcx_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int vcx_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int vcx_modify_cq(struct ib_cq *ibcq, u16 cq_count, u16 cq_period);
int vcx_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int vcx_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
void vcx_cq_clean(struct vcx_cq *cq, u32 qpn, struct vcx_srq *srq);
void vcx_cq_add_qp(struct vcx_qp *qp);
void vcx_cq_del_qp(struct vcx_qp *qp);
bool vcx_cq_run_handler(struct vcx_cq *cq);
void vcx_cq_event(struct vcx_dev *vdev, u32 cqn);
void vcx_cq_async_event(struct vcx_dev *vdev, u32 cqn, u8 syndrome);

/* vcx_qp.c */
int vcx_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init_attr,
		  struct ib_udata *udata);
int vcx_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_udata *udata);
int vcx_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		 struct ib_qp_init_attr *init_attr);
int vcx_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int vcx_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		  const struct ib_send_wr **bad_wr);
int vcx_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		  const struct ib_recv_wr **bad_wr);
void vcx_drain_sq(struct ib_qp *ibqp);
void vcx_drain_rq(struct ib_qp *ibqp);
void vcx_qp_async_event(struct vcx_dev *vdev, u32 qpn, u8 type);

/* vcx_gsi.c */
#define VCX_GSI_LOG_MSG_MAX	8	/* MADs: 256 bytes, as mlx5_ib sets for QP1 */
int vcx_gsi_claim(struct vcx_ib_dev *ibd, struct vcx_qp *qp,
		  const struct ib_qp_init_attr *attr, struct ib_udata *udata);
void vcx_gsi_release(struct vcx_ib_dev *ibd, struct vcx_qp *qp);
void vcx_gsi_fill_qpc(struct vcx_qp *qp, u8 *qpc);
u16 vcx_qp_wc_pkey_index(struct vcx_qp *qp, const u8 *cqe);

/* vcx_srq.c */
int vcx_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init_attr,
		   struct ib_udata *udata);
int vcx_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		   enum ib_srq_attr_mask mask, struct ib_udata *udata);
int vcx_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int vcx_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int vcx_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr);
void vcx_srq_free_wqe(struct vcx_srq *srq, u16 wqe_index);
void vcx_srq_async_event(struct vcx_dev *vdev, u32 srqn, u8 type);

/* vcx_xrc.c */
void vcx_xrc_set_ops(struct vcx_ib_dev *ibd);
void vcx_xrc_init(struct vcx_ib_dev *ibd);
void vcx_xrc_cleanup(struct vcx_ib_dev *ibd);
u32 vcx_xrc_tgt_pdn(struct vcx_ib_dev *ibd);
int vcx_xrc_srq_cmd_create(struct vcx_dev *vdev, struct vcx_srq *srq, u32 pdn,
			   struct ib_umem *umem, size_t npages);
int vcx_xrc_srq_cmd_destroy(struct vcx_dev *vdev, struct vcx_srq *srq);
int vcx_xrc_srq_cmd_arm(struct vcx_dev *vdev, struct vcx_srq *srq, u32 lwm);
int vcx_xrc_srq_cmd_query(struct vcx_dev *vdev, struct vcx_srq *srq, u32 *lwm, bool *error);
int vcx_xrc_qp_check(struct vcx_ib_dev *ibd, const struct ib_qp_init_attr *attr,
		     struct ib_udata *udata);
void vcx_xrc_tgt_fill_qpc(struct vcx_ib_dev *ibd, struct ib_qp_init_attr *attr, u8 *qpc);
struct vcx_srq *vcx_xrc_cqe_srq(struct vcx_qp *qp, const u8 *cqe);

/* vcx_ah.c */
int vcx_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		  struct ib_udata *udata);
int vcx_destroy_ah(struct ib_ah *ibah, u32 flags);

#endif /* VCX_VERBS_H */
