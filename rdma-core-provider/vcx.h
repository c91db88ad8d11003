/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vcx provider: the objects the library keeps per device, context, PD, CQ, QP, SRQ and AH,
 * and the entry points each file implements.
 */
#ifndef VCX_PROVIDER_H
#define VCX_PROVIDER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/driver.h>
#include <ccan/minmax.h>
#include <util/util.h>

#include "buf.h"
#include "db.h"
#include "sq_wqe.h"
#include "srq_list.h"
#include "table.h"

struct vcx_device {
	struct verbs_device ibv_dev;
	uint32_t page_size;
};

/* A per-queue lock that costs nothing when the application promises one thread. */
struct vcx_spinlock {
	pthread_spinlock_t lock;
	bool need_lock;
};

static inline int vcx_spinlock_init(struct vcx_spinlock *l, bool need_lock)
{
	l->need_lock = need_lock;
	return pthread_spin_init(&l->lock, PTHREAD_PROCESS_PRIVATE);
}

static inline void vcx_spinlock_destroy(struct vcx_spinlock *l)
{
	pthread_spin_destroy(&l->lock);
}

static inline void vcx_spin_lock(struct vcx_spinlock *l)
{
	if (l->need_lock)
		pthread_spin_lock(&l->lock);
}

static inline void vcx_spin_unlock(struct vcx_spinlock *l)
{
	if (l->need_lock)
		pthread_spin_unlock(&l->lock);
}

/* One doorbell ("bfreg") register of a UAR page: the SQ doorbells of the QPs using it. */
struct vcx_bfreg {
	void *reg;			/* UAR page + 0x800 + k * bf_reg_size */
	uint32_t offset;		/* current half: 0 or buf_size */
	uint32_t buf_size;		/* bf_reg_size / 2 */
	struct vcx_spinlock lock;	/* QPs sharing the register serialize doorbells */
};

struct vcx_context {
	struct verbs_context ibv_ctx;
	uint32_t page_size;
	bool single_threaded;		/* VCX_SINGLE_THREADED=1: per-queue locks elided */
	bool mw;			/* memory windows: alloc_mw, BIND_MW, LOCAL_INV */
	bool completion_ts;		/* CQEs carry the internal timer (create_cq_ex) */

	/* From the alloc_ucontext response. */
	uint32_t qp_tab_size;
	uint32_t num_uars;
	uint32_t tot_bfregs;
	uint32_t cache_line_size;
	uint32_t max_sq_desc_sz;
	uint32_t max_rq_desc_sz;
	uint32_t max_send_wqebb;
	uint32_t max_recv_wr;
	uint32_t max_srq_recv_wr;
	uint32_t max_cqe;
	uint32_t max_sge;
	uint32_t max_inline_data;
	uint32_t atomic_caps;
	uint8_t num_ports;

	void **uar;			/* num_uars mapped UAR pages */
	void *clock_page;		/* the internal timer's page (read only), or NULL */
	const void *clock;		/* internal_timer_h in it, _l after it */
	struct vcx_bfreg *bfregs;	/* tot_bfregs doorbell registers */

	/* CQEs name QPs and SRQs by number. */
	pthread_mutex_t table_mutex;
	struct vcx_table qp_table;
	struct vcx_table srq_table;

	struct vcx_db_pool db_pool;
};

struct vcx_pd {
	struct ibv_pd ibv_pd;
	uint32_t pdn;
};

/* A CQE ring: 2^log_nent CQEs of 64 bytes. */
struct vcx_cq_ring {
	struct vcx_buf buf;
	uint32_t log_nent;
};

struct vcx_cq {
	union {				/* ibv_create_cq or ibv_create_cq_ex */
		struct ibv_cq ibv_cq;
		struct ibv_cq_ex ibv_cq_ex;
		struct verbs_cq verbs_cq;
	};
	struct vcx_spinlock lock;
	struct vcx_buf buf;		/* the ring polled: 2^log_nent CQEs of 64 bytes */
	uint32_t log_nent;
	uint32_t cqn;
	uint32_t cons_index;		/* CQEs consumed, free running */
	uint32_t arm_sn;		/* arm sequence number, bumped per completion event */
	__be32 *dbrec;			/* [0] set_ci, [1] arm word */
	/* resize: the new ring while the command runs; a poller may switch to it */
	struct vcx_cq_ring *resize;
	bool resize_switched;
	/* ibv_cq_ex: the completion start_poll/next_poll decoded, for the read_* calls */
	struct ibv_wc ex_wc;
	uint64_t ex_ts;			/* ... its timestamp (IBV_WC_EX_WITH_COMPLETION_TIMESTAMP) */
	bool ex_want_ts;
};

struct vcx_wq {
	uint64_t *wrid;			/* per slot: the wr_id to report */
	uint32_t *wqe_head;		/* SQ, per slot: WRs posted up to and including it */
	uint8_t *wc_opcode;		/* SQ, per slot: UMR WQEs' ibv_wc_opcode (BIND_MW,
					 * LOCAL_INV), as libmlx5's wr_data */
	uint32_t wqe_cnt;		/* slots (WQEBBs for the SQ, WQEs for the RQ) */
	uint32_t max_post;		/* WRs that fit */
	uint32_t head;			/* WRs posted */
	uint32_t tail;			/* WRs completed */
	uint32_t cur_post;		/* SQ only: producer counter in WQEBBs */
	uint32_t max_gs;		/* data segments per WQE */
	uint32_t wqe_shift;		/* log2 of the slot size */
	uint32_t offset;		/* byte offset in the QP buffer */
	struct vcx_spinlock lock;
};

/*
 * The ibv_wr_* batch of a QP created with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS (sq_wr.c): the WR
 * being assembled by a builder and its setters, and what wr_complete/wr_abort need.
 */
struct vcx_wr_batch {
	uint32_t cur_post_rb;		/* SQ producer counter at wr_start: errors roll back */
	uint32_t nreq;			/* WRs written into the SQ since wr_start */
	int err;			/* first error since wr_start, returned by wr_complete */
	bool pending;			/* desc holds a WR not written yet */
	bool has_data;			/* a DATA setter ran for it */
	uint64_t wr_id;
	struct vcx_send_desc desc;
	const uint8_t *last_ctrl;	/* control segment of the last WQE written */
	struct vcx_sge *sge;		/* max_gs gather entries copied from the setter */
	uint8_t *inline_buf;		/* max_inline_data bytes copied by the inline setters */
	struct vcx_sge inline_sge;	/* one entry describing inline_buf */
};

struct vcx_qp {
	union {
		struct ibv_qp ibv_qp;
		struct verbs_qp vqp;	/* qp_ex: the ibv_wr_* entry points (sq_wr.c) */
	};
	struct vcx_buf buf;		/* RQ, then SQ */
	struct vcx_wq sq;
	struct vcx_wq rq;
	__be32 *dbrec;			/* [0] recv counter, [1] send counter */
	struct vcx_bfreg *bfreg;
	uint32_t max_inline_data;
	uint32_t max_wqe_ds;		/* DS units of the largest send WQE */
	uint8_t sq_signal_bits;		/* CE bits for every WQE (sq_sig_all) */
	bool atomics_enabled;
	bool mw_enabled;		/* RC/UC on a device with memory windows */
	/*
	 * What the QP state lets software post (libmlx5's operational state): receives
	 * from INIT on, sends from RTS on; RESET closes both. ERR keeps them open, the
	 * device flushes.
	 */
	bool rq_open;
	bool sq_open;
	/* XRC_RECV (created or opened): no queues, no CQs, not in the QP table (xrc.c) */
	bool xrc_tgt;
	struct vcx_wr_batch wr;		/* only with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS */
};

struct vcx_srq {
	union {				/* ibv_create_srq, or ibv_create_srq_ex (XRC) */
		struct ibv_srq ibv_srq;
		struct verbs_srq vsrq;
	};
	struct vcx_spinlock lock;
	struct vcx_buf buf;
	struct vcx_srq_list list;	/* linked-list WQE management */
	uint64_t *wrid;			/* per WQE index */
	uint32_t srqn;
	uint32_t max_gs;		/* data segments per WQE */
	uint32_t counter;		/* WQEs posted, written to the doorbell record */
	__be32 *dbrec;
};

struct vcx_ah {
	struct ibv_ah ibv_ah;
	uint8_t av[48];			/* datagram segment image, VCX_WQE_AV_SIZE */
};

static inline struct vcx_device *to_vcx_dev(struct ibv_device *ibdev)
{
	return container_of(ibdev, struct vcx_device, ibv_dev.device);
}

static inline struct vcx_context *to_vcx_ctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct vcx_context, ibv_ctx.context);
}

static inline struct vcx_pd *to_vcx_pd(struct ibv_pd *ibpd)
{
	return container_of(ibpd, struct vcx_pd, ibv_pd);
}

static inline struct vcx_cq *to_vcx_cq(struct ibv_cq *ibcq)
{
	return container_of(ibcq, struct vcx_cq, ibv_cq);
}

static inline struct vcx_qp *to_vcx_qp(struct ibv_qp *ibqp)
{
	return container_of(ibqp, struct vcx_qp, ibv_qp);
}

static inline struct vcx_srq *to_vcx_srq(struct ibv_srq *ibsrq)
{
	return container_of(ibsrq, struct vcx_srq, ibv_srq);
}

static inline struct vcx_ah *to_vcx_ah(struct ibv_ah *ibah)
{
	return container_of(ibah, struct vcx_ah, ibv_ah);
}

/* verbs.c */
int vcx_query_device_ex(struct ibv_context *context,
			const struct ibv_query_device_ex_input *input,
			struct ibv_device_attr_ex *attr, size_t attr_size);
int vcx_query_port(struct ibv_context *context, uint8_t port, struct ibv_port_attr *attr);
struct ibv_pd *vcx_alloc_pd(struct ibv_context *context);
int vcx_dealloc_pd(struct ibv_pd *pd);
struct ibv_mr *vcx_reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va,
			  int access);
int vcx_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd, void *addr,
		 size_t length, int access);
int vcx_dereg_mr(struct verbs_mr *vmr);
struct ibv_mw *vcx_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int vcx_dealloc_mw(struct ibv_mw *mw);
int vcx_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind);

struct vcx_xrcd {
	struct verbs_xrcd vxrcd;
};

/* ah.c */
struct ibv_ah *vcx_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
int vcx_destroy_ah(struct ibv_ah *ah);

/* cq.c */
struct ibv_cq *vcx_create_cq(struct ibv_context *context, int cqe,
			     struct ibv_comp_channel *channel, int comp_vector);
struct ibv_cq_ex *vcx_create_cq_ex(struct ibv_context *context,
				   struct ibv_cq_init_attr_ex *attr);
int vcx_resize_cq(struct ibv_cq *cq, int cqe);
int vcx_modify_cq(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);
int vcx_destroy_cq(struct ibv_cq *cq);
int vcx_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
int vcx_req_notify_cq(struct ibv_cq *cq, int solicited_only);
void vcx_cq_event(struct ibv_cq *cq);
void vcx_cq_clean(struct vcx_cq *cq, uint32_t qpn, struct vcx_srq *srq);

/* qp.c */
struct ibv_qp *vcx_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
struct ibv_qp *vcx_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr);
int vcx_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		 struct ibv_qp_init_attr *init_attr);
int vcx_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
int vcx_destroy_qp(struct ibv_qp *qp);
struct vcx_qp *vcx_find_qp(struct vcx_context *ctx, uint32_t qpn);

/* sq.c: post_send, and the SQ producer steps it shares with sq_wr.c */
int vcx_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
int vcx_sq_opcode(const struct vcx_qp *qp, enum ibv_wr_opcode op);
int vcx_sq_desc_start(const struct vcx_qp *qp, enum ibv_wr_opcode op, unsigned int send_flags,
		      struct vcx_send_desc *d);
int vcx_sq_desc_check(const struct vcx_qp *qp, const struct vcx_send_desc *d);
int vcx_sq_desc_bind(struct vcx_send_desc *d, const struct ibv_mw *mw, uint32_t rkey,
		     const struct ibv_mw_bind_info *bi);
void vcx_sq_desc_local_inv(struct vcx_send_desc *d, uint32_t invalidate_rkey);
bool vcx_sq_overflow(struct vcx_wq *wq, uint32_t nreq, struct vcx_cq *cq);
int vcx_sq_write_wqe(struct vcx_qp *qp, const struct vcx_send_desc *d, uint64_t wr_id,
		     uint32_t nreq, const uint8_t **last_ctrl);
void vcx_sq_ring_doorbell(struct vcx_qp *qp, const uint8_t *last_ctrl);

/* sq_wr.c: the ibv_wr_* API */
int vcx_qp_wr_check_ops(const struct vcx_qp *qp, uint64_t send_ops_flags);
int vcx_qp_wr_init(struct vcx_qp *qp);
void vcx_qp_wr_cleanup(struct vcx_qp *qp);

/* rq.c */
int vcx_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);

/* srq.c */
struct ibv_srq *vcx_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr);
int vcx_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int attr_mask);
int vcx_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr);
int vcx_destroy_srq(struct ibv_srq *srq);
int vcx_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr);
void vcx_srq_free_wqe(struct vcx_srq *srq, uint16_t idx);
struct vcx_srq *vcx_find_srq(struct vcx_context *ctx, uint32_t srqn);
struct vcx_srq *vcx_srq_alloc(struct vcx_context *ctx, struct ibv_srq_attr *attr);
struct ibv_srq *vcx_srq_publish(struct vcx_context *ctx, struct vcx_srq *srq, int err,
				uint32_t srqn, struct ibv_srq_attr *attr);
void vcx_srq_free(struct vcx_context *ctx, struct vcx_srq *srq);
void vcx_srq_fill_req(const struct vcx_srq *srq, uint64_t *buf_addr, uint64_t *db_addr,
		      uint32_t *wqe_count, uint32_t *wqe_shift);

/* xrc.c */
struct ibv_xrcd *vcx_open_xrcd(struct ibv_context *context,
			       struct ibv_xrcd_init_attr *xrcd_init_attr);
int vcx_close_xrcd(struct ibv_xrcd *ib_xrcd);
struct ibv_srq *vcx_create_srq_ex(struct ibv_context *context,
				  struct ibv_srq_init_attr_ex *attr);
int vcx_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num);
struct ibv_qp *vcx_create_xrc_recv_qp(struct vcx_context *ctx,
				      struct ibv_qp_init_attr_ex *attr);
struct ibv_qp *vcx_open_qp(struct ibv_context *context, struct ibv_qp_open_attr *attr);

#endif /* VCX_PROVIDER_H */
