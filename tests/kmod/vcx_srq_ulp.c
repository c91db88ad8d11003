// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcx_srq_ulp: a small in-kernel ULP that exercises vcx.ko's kernel verbs with an SRQ.
 *
 * On load it finds the ib_device named by the "dev" parameter (vcx_0) and runs:
 *
 *  1. Attribute checks that must fail before any command: SRQ max_wr above the device
 *     limit, srq_limit >= max_wr, max_sge above the limit (-EINVAL); a tag-matching SRQ
 *     (-EOPNOTSUPP).
 *  1b. XRC (the device must offer IB_DEVICE_XRC): the same limits on XRC SRQs (-EINVAL);
 *     a domain, an XRC SRQ, an XRC_INI and an XRC_TGT QP connected in loopback. The
 *     kernel's ib_send_wr has no remote SRQ number, so the XRC segment of a kernel
 *     initiator names SRQ 0 (as mlx5_ib leaves it): the SEND must complete with
 *     IB_WC_REM_INV_REQ_ERR, the target report IB_EVENT_QP_REQ_ERR, both QPs be in ERR,
 *     and the XRC SRQ's receive buffer stay untouched with no receive completion.
 *  2. One PD, one CQ per online CPU (ib_alloc_cq, IB_POLL_WORKQUEUE), one SRQ shared by
 *     8 RC QPs connected in loopback pairs (0<->1, 2<->3, ...) on port 1 through the
 *     port's RoCE v2 link-local GID. The device must offer memory management extensions.
 *  3. Every QP sends "msgs" messages to its peer; every receive lands in the SRQ and its
 *     payload is checked byte by byte (sender, sequence number, pattern, length, QP).
 *  3a. A second round while every CQ is resized (ib_resize_cq: grown, then shrunk back);
 *     every message must arrive once, intact.
 *  3b. FRWR: two pages registered with ib_alloc_mr(IB_MR_TYPE_MEM_REG) + ib_map_mr_sg and
 *     an IB_WR_REG_MR (new key byte), used as the source of an RDMA WRITE into its own
 *     second page through the rkey and of a SEND into the SRQ through the lkey (checked
 *     by the receive handler); IB_WR_LOCAL_INV at the end; the written payload compared.
 *  4. The SRQ limit is armed below the number of posted WQEs, reposting stops, a few more
 *     messages consume WQEs: IB_EVENT_SRQ_LIMIT_REACHED must arrive.
 *  5. A second SRQ with no WQE at all: a pair sends into it (RNR NAKs, rnr_retry 7); then
 *     WQEs are posted and every message must arrive intact, no send may fail.
 *  6. Teardown: QPs, SRQs, CQs, buffers, PD.
 *
 * The result is logged ("vcx_srq_ulp: PASS ..." or "vcx_srq_ulp: FAIL ..."), kept in the
 * read-only parameter /sys/module/vcx_srq_ulp/parameters/result, and returned by module
 * init (0, or the errno of the failed step: insmod fails).
 */
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "vcx_kmod_common.h"

#define ULP "vcx_srq_ulp"
#define NQP 8
#define MSG_SIZE 1024
#define NRECV 256
#define RNR_MSGS 16
#define TIMEOUT (30 * HZ)

static char *dev_name_param = "vcx_0";
module_param_named(dev, dev_name_param, charp, 0444);
MODULE_PARM_DESC(dev, "ib_device to test");
static int msgs = 32;
module_param(msgs, int, 0444);
MODULE_PARM_DESC(msgs, "messages sent by each QP");
static char result[128] = "not run";
module_param_string(result, result, sizeof(result), 0444);
MODULE_PARM_DESC(result, "PASS or FAIL with the reason");

struct ulp;

struct ulp_buf {
	struct ib_cqe cqe;
	struct ulp *u;
	struct ib_srq *srq;
	u8 *data;
	u64 dma;
};

struct ulp {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq **cqs;
	int ncq;
	struct ib_srq *srq, *srq2;
	struct ib_qp *qp[NQP + 2];	/* NQP on srq, 2 on srq2 */
	struct ulp_buf rbuf[NRECV + RNR_MSGS];
	struct ulp_buf *sbuf;		/* (NQP + 2) * msgs */
	int nsbuf;
	u8 sgid_index;
	union ib_gid gid;
	bool repost;
	atomic_t posted;		/* WQEs in srq */
	atomic_t recv_ok, recv_bad, send_ok, send_bad;
	atomic_t limit_events;
	struct ib_cqe fr_cqe;		/* FRWR step completions */
	struct ib_cqe xrc_cqe;		/* XRC step: the send */
	atomic_t xrc_send, xrc_recv, xrc_req_err;
	enum ib_wc_status xrc_status;
	atomic_t fr_ok, fr_bad;
	u32 fr_ops;			/* BIT(wc->opcode) of the successful ones */
	wait_queue_head_t wq;
	char why[96];
};

static struct ulp *the_ulp;

static __printf(2, 3) void ulp_fail(struct ulp *u, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vcx_kmod_vfail(u->why, sizeof(u->why), ULP, fmt, ap);
	va_end(ap);
}

static void ulp_fill(u8 *p, int sender, int seq)
{
	int i;

	p[0] = sender;
	p[1] = seq;
	p[2] = seq >> 8;
	for (i = 3; i < MSG_SIZE; i++)
		p[i] = (u8)(sender * 31 + seq * 7 + i);
}

static int ulp_post_recv(struct ulp *u, struct ulp_buf *b)
{
	struct ib_sge sge = { .addr = b->dma, .length = MSG_SIZE, .lkey = u->pd->local_dma_lkey };
	struct ib_recv_wr wr = { .wr_cqe = &b->cqe, .sg_list = &sge, .num_sge = 1 };
	int err;

	ib_dma_sync_single_for_device(u->dev, b->dma, MSG_SIZE, DMA_FROM_DEVICE);
	err = ib_post_srq_recv(b->srq, &wr, NULL);
	if (!err && b->srq == u->srq)
		atomic_inc(&u->posted);
	return err;
}

static int ulp_qp_index(struct ulp *u, struct ib_qp *qp)
{
	int i;

	for (i = 0; i < NQP + 2; i++)
		if (u->qp[i] == qp)
			return i;
	return -1;
}

static void ulp_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ulp_buf *b = container_of(wc->wr_cqe, struct ulp_buf, cqe);
	struct ulp *u = b->u;
	int me, sender, seq, i;
	u8 *p = b->data;

	if (b->srq == u->srq)
		atomic_dec(&u->posted);
	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR) {
			atomic_inc(&u->recv_bad);
			ulp_fail(u, "receive completion status %s",
				 ib_wc_status_msg(wc->status));
		}
		goto out;
	}
	ib_dma_sync_single_for_cpu(u->dev, b->dma, MSG_SIZE, DMA_FROM_DEVICE);
	me = ulp_qp_index(u, wc->qp);
	sender = p[0];
	seq = p[1] | p[2] << 8;
	if (wc->byte_len != MSG_SIZE || me < 0 || sender != (me ^ 1) ||
	    wc->src_qp != u->qp[sender]->qp_num || seq >= msgs + 8) {
		atomic_inc(&u->recv_bad);
		ulp_fail(u, "bad receive: len %u qp %d sender %d src_qp 0x%x seq %d", wc->byte_len,
			 me, sender, wc->src_qp, seq);
		goto out;
	}
	for (i = 3; i < MSG_SIZE; i++) {
		if (p[i] != (u8)(sender * 31 + seq * 7 + i)) {
			atomic_inc(&u->recv_bad);
			ulp_fail(u, "payload from QP %d seq %d differs at byte %d", sender, seq, i);
			goto out;
		}
	}
	memset(p, 0, MSG_SIZE);
	atomic_inc(&u->recv_ok);
	if (READ_ONCE(u->repost) || b->srq != u->srq)
		if (ulp_post_recv(u, b))
			ulp_fail(u, "repost to the SRQ failed");
out:
	wake_up(&u->wq);
}

static void ulp_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ulp_buf *b = container_of(wc->wr_cqe, struct ulp_buf, cqe);
	struct ulp *u = b->u;

	if (wc->status == IB_WC_SUCCESS) {
		atomic_inc(&u->send_ok);
	} else if (wc->status != IB_WC_WR_FLUSH_ERR) {
		atomic_inc(&u->send_bad);
		ulp_fail(u, "send completion status %s", ib_wc_status_msg(wc->status));
	}
	wake_up(&u->wq);
}

static void ulp_fr_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ulp *u = container_of(wc->wr_cqe, struct ulp, fr_cqe);

	if (wc->status == IB_WC_SUCCESS) {
		if (wc->opcode < 32)
			u->fr_ops |= BIT(wc->opcode);
		atomic_inc(&u->fr_ok);
	} else {
		atomic_inc(&u->fr_bad);
		ulp_fail(u, "FRWR step: completion status %s", ib_wc_status_msg(wc->status));
	}
	wake_up(&u->wq);
}

static void ulp_srq_event(struct ib_event *ev, void *ctx)
{
	struct ulp *u = ctx;

	if (ev->event == IB_EVENT_SRQ_LIMIT_REACHED) {
		atomic_inc(&u->limit_events);
		wake_up(&u->wq);
	} else {
		ulp_fail(u, "unexpected SRQ event %s", ib_event_msg(ev->event));
	}
}

static void ulp_qp_event(struct ib_event *ev, void *ctx)
{
	/*
	 * LAST_WQE_REACHED at teardown is expected, and COMM_EST from a QP that receives
	 * its first packet in RTR (IBTA 11.6.3.1); anything else is reported.
	 */
	if (ev->event != IB_EVENT_QP_LAST_WQE_REACHED && ev->event != IB_EVENT_COMM_EST)
		ulp_fail(ctx, "unexpected QP event %s", ib_event_msg(ev->event));
}

static void ulp_xrc_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ulp *u = container_of(wc->wr_cqe, struct ulp, xrc_cqe);

	u->xrc_status = wc->status;
	atomic_inc(&u->xrc_send);
	wake_up(&u->wq);
}

static void ulp_xrc_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ulp_buf *b = container_of(wc->wr_cqe, struct ulp_buf, cqe);

	atomic_inc(&b->u->xrc_recv);
	wake_up(&b->u->wq);
}

static void ulp_xrc_qp_event(struct ib_event *ev, void *ctx)
{
	struct ulp *u = ctx;

	if (ev->event == IB_EVENT_QP_REQ_ERR) {
		atomic_inc(&u->xrc_req_err);
		wake_up(&u->wq);
	} else if (ev->event != IB_EVENT_QP_LAST_WQE_REACHED &&
		   ev->event != IB_EVENT_COMM_EST) {	/* first packet in RTR */
		ulp_fail(u, "unexpected XRC QP event %s", ib_event_msg(ev->event));
	}
}

static int ulp_send(struct ulp *u, int qpi, int seq)
{
	struct ulp_buf *b = &u->sbuf[qpi * msgs + (seq % msgs)];
	struct ib_sge sge = { .addr = b->dma, .length = MSG_SIZE, .lkey = u->pd->local_dma_lkey };
	struct ib_send_wr wr = {
		.wr_cqe = &b->cqe, .sg_list = &sge, .num_sge = 1,
		.opcode = IB_WR_SEND, .send_flags = IB_SEND_SIGNALED,
	};

	ulp_fill(b->data, qpi, seq);
	ib_dma_sync_single_for_device(u->dev, b->dma, MSG_SIZE, DMA_TO_DEVICE);
	return ib_post_send(u->qp[qpi], &wr, NULL);
}

/* The port's RoCE v2 link-local GID (the default GID ib_core builds from the MAC). */
static int ulp_find_gid(struct ulp *u)
{
	return vcx_kmod_roce_gid(u->dev, &u->gid, &u->sgid_index);
}

static struct ib_qp *ulp_create_qp(struct ulp *u, struct ib_srq *srq, struct ib_cq *cq)
{
	struct ib_qp_init_attr attr = {
		.event_handler = ulp_qp_event,
		.qp_context = u,
		.send_cq = cq,
		.recv_cq = cq,
		.srq = srq,
		.cap = { .max_send_wr = msgs + 8, .max_send_sge = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};

	return ib_create_qp(u->pd, &attr);
}

static int ulp_connect(struct ulp *u, struct ib_qp *qp, u32 dqpn)
{
	struct ib_qp_attr a = {};
	int err;

	a.qp_state = IB_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = 1;
	a.qp_access_flags = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	err = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
			   IB_QP_ACCESS_FLAGS);
	if (err)
		return err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = IB_MTU_1024;
	a.dest_qp_num = dqpn;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;		/* 0.01 ms: quick RNR retries */
	vcx_kmod_loopback_av(u->dev, &a.ah_attr, &u->gid, u->sgid_index);
	err = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN |
			   IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (err)
		return err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.sq_psn = 0;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;		/* infinite */
	a.max_rd_atomic = 1;
	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_SQ_PSN | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC);
}

static int ulp_map(struct ulp *u, struct ulp_buf *b, struct ib_srq *srq,
		   enum dma_data_direction dir, void (*done)(struct ib_cq *, struct ib_wc *))
{
	b->u = u;
	b->srq = srq;
	b->cqe.done = done;
	b->data = kzalloc(MSG_SIZE, GFP_KERNEL);
	if (!b->data)
		return -ENOMEM;
	b->dma = ib_dma_map_single(u->dev, b->data, MSG_SIZE, dir);
	if (ib_dma_mapping_error(u->dev, b->dma)) {
		kfree(b->data);
		b->data = NULL;
		return -ENOMEM;
	}
	return 0;
}

static void ulp_unmap(struct ulp *u, struct ulp_buf *b, enum dma_data_direction dir)
{
	if (!b->data)
		return;
	ib_dma_unmap_single(u->dev, b->dma, MSG_SIZE, dir);
	kfree(b->data);
	b->data = NULL;
}

/* Step 1: attributes refused before any command. */
static int ulp_check_refusals(struct ulp *u)
{
	const struct ib_device_attr *da = &u->dev->attrs;
	struct ib_srq_init_attr sa = {};
	struct ib_qp_init_attr qa = {};
	struct ib_srq *srq;
	struct ib_qp *qp;
	int i;
	struct {
		const char *what;
		u32 max_wr, max_sge, limit;
		enum ib_srq_type type;
		int want;
	} cases[] = {
		{ "max_wr > max_srq_wr", da->max_srq_wr + 1, 1, 0, IB_SRQT_BASIC, -EINVAL },
		{ "srq_limit >= max_wr", 16, 1, 16, IB_SRQT_BASIC, -EINVAL },
		{ "max_sge > max_srq_sge", 16, da->max_srq_sge + 1, 0, IB_SRQT_BASIC, -EINVAL },
		{ "tag-matching SRQ", 16, 1, 0, IB_SRQT_TM, -EOPNOTSUPP },
	};

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		memset(&sa, 0, sizeof(sa));
		sa.attr.max_wr = cases[i].max_wr;
		sa.attr.max_sge = cases[i].max_sge;
		sa.attr.srq_limit = cases[i].limit;
		sa.srq_type = cases[i].type;
		sa.ext.cq = u->cqs[0];
		srq = ib_create_srq(u->pd, &sa);
		if (!IS_ERR(srq)) {
			ib_destroy_srq(srq);
			ulp_fail(u, "SRQ with %s was created", cases[i].what);
			return -EINVAL;
		}
		if (PTR_ERR(srq) != cases[i].want) {
			ulp_fail(u, "SRQ with %s: %ld, expected %d", cases[i].what, PTR_ERR(srq),
				 cases[i].want);
			return -EINVAL;
		}
		pr_info(ULP ": SRQ with %s refused (%ld)\n", cases[i].what, PTR_ERR(srq));
	}
	qa.send_cq = u->cqs[0];
	qa.cap.max_send_wr = 4;
	qa.cap.max_send_sge = 1;
	qa.qp_type = IB_QPT_XRC_INI;
	qa.cap.max_inline_data = 64;	/* kernel QPs post no inline data */
	qp = ib_create_qp(u->pd, &qa);
	if (!IS_ERR(qp)) {
		ib_destroy_qp(qp);
		ulp_fail(u, "XRC_INI QP with max_inline_data was created");
		return -EINVAL;
	}
	if (PTR_ERR(qp) != -EINVAL) {
		ulp_fail(u, "XRC_INI QP with inline data: %ld, expected %d", PTR_ERR(qp), -EINVAL);
		return -EINVAL;
	}
	pr_info(ULP ": XRC_INI QP with inline data refused (%ld)\n", PTR_ERR(qp));
	return 0;
}

static int ulp_xrc_srq(struct ulp *u, struct ib_xrcd *xrcd, u32 max_wr, u32 max_sge,
		       u32 limit, struct ib_srq **srq)
{
	struct ib_srq_init_attr sa = {
		.attr = { .max_wr = max_wr, .max_sge = max_sge, .srq_limit = limit },
		.srq_type = IB_SRQT_XRC,
		.ext.cq = u->cqs[0],
		.ext.xrc.xrcd = xrcd,
	};

	*srq = ib_create_srq(u->pd, &sa);
	if (IS_ERR(*srq)) {
		int err = PTR_ERR(*srq);

		*srq = NULL;
		return err;
	}
	return 0;
}

/* An XRC initiator's RTR takes no responder attributes (ib_core's transition table). */
static int ulp_xrc_connect(struct ulp *u, struct ib_qp *ini, struct ib_qp *tgt)
{
	struct ib_qp_attr a = {};
	int err, i;

	for (i = 0; i < 2; i++) {
		memset(&a, 0, sizeof(a));
		a.qp_state = IB_QPS_INIT;
		a.port_num = 1;
		a.qp_access_flags = i ? IB_ACCESS_REMOTE_WRITE : 0;
		err = ib_modify_qp(i ? tgt : ini, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
				   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
		if (err)
			return err;
		memset(&a, 0, sizeof(a));
		a.qp_state = IB_QPS_RTR;
		a.path_mtu = IB_MTU_1024;
		a.dest_qp_num = i ? ini->qp_num : tgt->qp_num;
		a.max_dest_rd_atomic = 1;
		a.min_rnr_timer = 1;
		vcx_kmod_loopback_av(u->dev, &a.ah_attr, &u->gid, u->sgid_index);
		err = ib_modify_qp(i ? tgt : ini, &a, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
				   IB_QP_DEST_QPN | IB_QP_RQ_PSN |
				   (i ? IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER : 0));
		if (err)
			return err;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ib_modify_qp(ini, &a, IB_QP_STATE | IB_QP_SQ_PSN | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC);
}

static bool ulp_wait(struct ulp *u, atomic_t *v, int n);

static enum ib_qp_state ulp_qp_state(struct ib_qp *qp)
{
	struct ib_qp_init_attr ia;
	struct ib_qp_attr a;

	if (ib_query_qp(qp, &a, IB_QP_STATE, &ia))
		return -1;
	return a.qp_state;
}

/* Step 1b (needs the GID). Returns 0 or an errno (result set). */
static int ulp_xrc(struct ulp *u)
{
	const struct ib_device_attr *da = &u->dev->attrs;
	struct ib_qp_init_attr qa = {};
	struct ib_qp *ini = NULL, *tgt = NULL;
	struct ib_srq *srq = NULL;
	struct ulp_buf rb = {};
	struct ib_xrcd *xrcd;
	struct ib_sge sge;
	int err, i;
	struct {
		const char *what;
		u32 max_wr, max_sge, limit;
	} cases[] = {
		{ "max_wr > max_srq_wr", da->max_srq_wr + 1, 1, 0 },
		{ "srq_limit >= max_wr", 16, 1, 16 },
		{ "max_sge > max_srq_sge", 16, da->max_srq_sge + 1, 0 },
	};

	if (!(da->device_cap_flags & IB_DEVICE_XRC)) {
		ulp_fail(u, "the device does not offer XRC");
		return -EOPNOTSUPP;
	}
	xrcd = ib_alloc_xrcd_user(u->dev, NULL, NULL);
	if (IS_ERR(xrcd)) {
		ulp_fail(u, "ib_alloc_xrcd_user: %ld", PTR_ERR(xrcd));
		return PTR_ERR(xrcd);
	}
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		err = ulp_xrc_srq(u, xrcd, cases[i].max_wr, cases[i].max_sge, cases[i].limit,
				  &srq);
		if (err != -EINVAL) {
			ulp_fail(u, "XRC SRQ with %s: %d, expected %d", cases[i].what, err,
				 -EINVAL);
			err = -EINVAL;
			goto out;
		}
		pr_info(ULP ": XRC SRQ with %s refused (%d)\n", cases[i].what, err);
	}
	err = ulp_xrc_srq(u, xrcd, 4, 1, 0, &srq);
	if (err) {
		ulp_fail(u, "XRC SRQ: %d", err);
		goto out;
	}
	err = ulp_map(u, &rb, srq, DMA_FROM_DEVICE, ulp_xrc_recv_done);
	if (err)
		goto out;
	memset(rb.data, 0xaa, MSG_SIZE);
	ib_dma_sync_single_for_device(u->dev, rb.dma, MSG_SIZE, DMA_FROM_DEVICE);
	{
		struct ib_sge rsge = { .addr = rb.dma, .length = MSG_SIZE,
				       .lkey = u->pd->local_dma_lkey };
		struct ib_recv_wr rwr = { .wr_cqe = &rb.cqe, .sg_list = &rsge, .num_sge = 1 };

		err = ib_post_srq_recv(srq, &rwr, NULL);
		if (err) {
			ulp_fail(u, "ib_post_srq_recv on the XRC SRQ: %d", err);
			goto out;
		}
	}

	qa.event_handler = ulp_xrc_qp_event;
	qa.qp_context = u;
	qa.send_cq = u->cqs[0];		/* no receive CQ: an initiator receives nothing */
	qa.cap.max_send_wr = 4;
	qa.cap.max_send_sge = 1;
	qa.sq_sig_type = IB_SIGNAL_REQ_WR;
	qa.qp_type = IB_QPT_XRC_INI;
	ini = ib_create_qp(u->pd, &qa);
	if (IS_ERR(ini)) {
		err = PTR_ERR(ini);
		ini = NULL;
		ulp_fail(u, "XRC_INI QP: %d", err);
		goto out;
	}
	memset(&qa, 0, sizeof(qa));
	qa.event_handler = ulp_xrc_qp_event;
	qa.qp_context = u;
	qa.qp_type = IB_QPT_XRC_TGT;
	qa.xrcd = xrcd;
	/* ib_create_qp needs a PD to find the device; the driver uses its own for targets */
	tgt = ib_create_qp(u->pd, &qa);
	if (IS_ERR(tgt)) {
		err = PTR_ERR(tgt);
		tgt = NULL;
		ulp_fail(u, "XRC_TGT QP: %d", err);
		goto out;
	}
	err = ulp_xrc_connect(u, ini, tgt);
	if (err) {
		ulp_fail(u, "connecting XRC_INI 0x%x and XRC_TGT 0x%x: %d", ini->qp_num,
			 tgt->qp_num, err);
		goto out;
	}
	pr_info(ULP ": XRC SRQ, XRC_INI 0x%x and XRC_TGT 0x%x connected\n", ini->qp_num,
		tgt->qp_num);

	u->xrc_cqe.done = ulp_xrc_send_done;
	sge.addr = u->sbuf[0].dma;
	sge.length = MSG_SIZE;
	sge.lkey = u->pd->local_dma_lkey;
	{
		struct ib_send_wr wr = {
			.wr_cqe = &u->xrc_cqe, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_SEND, .send_flags = IB_SEND_SIGNALED,
		};

		err = ib_post_send(ini, &wr, NULL);
	}
	if (err) {
		ulp_fail(u, "XRC SEND: %d", err);
		goto out;
	}
	if (!ulp_wait(u, &u->xrc_send, 1) || u->xrc_status != IB_WC_REM_INV_REQ_ERR) {
		ulp_fail(u, "XRC SEND naming SRQ 0: %s, expected %s",
			 atomic_read(&u->xrc_send) ? ib_wc_status_msg(u->xrc_status) : "no CQE",
			 ib_wc_status_msg(IB_WC_REM_INV_REQ_ERR));
		err = -EIO;
		goto out;
	}
	if (!ulp_wait(u, &u->xrc_req_err, 1)) {
		ulp_fail(u, "no IB_EVENT_QP_REQ_ERR for the XRC target");
		err = -EIO;
		goto out;
	}
	msleep(100);
	ib_dma_sync_single_for_cpu(u->dev, rb.dma, MSG_SIZE, DMA_FROM_DEVICE);
	if (memchr_inv(rb.data, 0xaa, MSG_SIZE) || atomic_read(&u->xrc_recv) ||
	    ulp_qp_state(ini) != IB_QPS_ERR || ulp_qp_state(tgt) != IB_QPS_ERR) {
		ulp_fail(u, "XRC invalid request: buffer %s, %d receives, states %d/%d",
			 memchr_inv(rb.data, 0xaa, MSG_SIZE) ? "written" : "untouched",
			 atomic_read(&u->xrc_recv), ulp_qp_state(ini), ulp_qp_state(tgt));
		err = -EIO;
		goto out;
	}
	pr_info(ULP ": XRC: SEND naming SRQ 0 -> %s, target QP_REQ_ERR, both QPs in ERR, SRQ buffer untouched\n",
		ib_wc_status_msg(u->xrc_status));
	err = 0;
out:
	if (tgt)
		ib_destroy_qp(tgt);
	if (ini)
		ib_destroy_qp(ini);
	if (srq)
		ib_destroy_srq(srq);
	ulp_unmap(u, &rb, DMA_FROM_DEVICE);
	if (!err) {
		err = ib_dealloc_xrcd_user(xrcd, NULL);
		if (err)
			ulp_fail(u, "ib_dealloc_xrcd_user: %d", err);
	} else {
		ib_dealloc_xrcd_user(xrcd, NULL);
	}
	return err;
}

/*
 * Step 3b: FRWR on QP 0. Page 0 is the send buffer, page 1 the RDMA WRITE target, both
 * reached only through the fast-registered key. Returns 0 or an errno (result set).
 */
static int ulp_frwr(struct ulp *u, int sent)
{
	struct scatterlist sg[2];
	struct ib_mr *mr = NULL;
	struct page *pages;
	struct ib_sge sge;
	struct ib_reg_wr reg = {};
	struct ib_rdma_wr wwr = {};
	struct ib_send_wr swr = {}, inv = {};
	int n, err = 0;
	u8 *p;

	u->fr_cqe.done = ulp_fr_done;
	pages = alloc_pages(GFP_KERNEL | __GFP_ZERO, 1);
	if (!pages) {
		ulp_fail(u, "FRWR: no pages");
		return -ENOMEM;
	}
	p = page_address(pages);
	ulp_fill(p, 0, msgs);
	sg_init_table(sg, 2);
	sg_set_page(&sg[0], pages, PAGE_SIZE, 0);
	sg_set_page(&sg[1], nth_page(pages, 1), PAGE_SIZE, 0);
	n = ib_dma_map_sg(u->dev, sg, 2, DMA_BIDIRECTIONAL);
	if (!n) {
		ulp_fail(u, "FRWR: ib_dma_map_sg failed");
		err = -ENOMEM;
		goto out_free;
	}
	mr = ib_alloc_mr(u->pd, IB_MR_TYPE_MEM_REG, 2);
	if (IS_ERR(mr)) {
		err = PTR_ERR(mr);
		mr = NULL;
		ulp_fail(u, "FRWR: ib_alloc_mr: %d", err);
		goto out_unmap;
	}
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey) & 0xff);
	err = ib_map_mr_sg(mr, sg, n, NULL, PAGE_SIZE);
	if (err != n) {
		ulp_fail(u, "FRWR: ib_map_mr_sg mapped %d of %d", err, n);
		err = err < 0 ? err : -EINVAL;
		goto out_unmap;
	}

	/* REG_MR, then a WRITE page 0 -> page 1 and a SEND of page 0, all through mr */
	reg.wr.opcode = IB_WR_REG_MR;
	reg.wr.wr_cqe = &u->fr_cqe;
	reg.wr.send_flags = IB_SEND_SIGNALED;
	reg.wr.next = &wwr.wr;
	reg.mr = mr;
	reg.key = mr->rkey;
	reg.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	sge.addr = mr->iova;
	sge.length = MSG_SIZE;
	sge.lkey = mr->lkey;
	wwr.wr.opcode = IB_WR_RDMA_WRITE;
	wwr.wr.wr_cqe = &u->fr_cqe;
	wwr.wr.send_flags = IB_SEND_SIGNALED;
	wwr.wr.sg_list = &sge;
	wwr.wr.num_sge = 1;
	wwr.wr.next = &swr;
	wwr.remote_addr = mr->iova + PAGE_SIZE;
	wwr.rkey = mr->rkey;
	swr.opcode = IB_WR_SEND;
	swr.wr_cqe = &u->fr_cqe;
	swr.send_flags = IB_SEND_SIGNALED;
	swr.sg_list = &sge;
	swr.num_sge = 1;
	err = ib_post_send(u->qp[0], &reg.wr, NULL);
	if (err) {
		ulp_fail(u, "FRWR: ib_post_send REG_MR/WRITE/SEND: %d", err);
		goto out_unmap;
	}
	if (!ulp_wait(u, &u->fr_ok, 3) || !ulp_wait(u, &u->recv_ok, sent + 1) ||
	    atomic_read(&u->fr_bad)) {
		ulp_fail(u, "FRWR: %d/3 completions, %d bad, %d/%d received",
			 atomic_read(&u->fr_ok), atomic_read(&u->fr_bad),
			 atomic_read(&u->recv_ok), sent + 1);
		err = -EIO;
		goto out_unmap;
	}
	inv.opcode = IB_WR_LOCAL_INV;
	inv.wr_cqe = &u->fr_cqe;
	inv.send_flags = IB_SEND_SIGNALED;
	inv.ex.invalidate_rkey = mr->rkey;
	err = ib_post_send(u->qp[0], &inv, NULL);
	if (err) {
		ulp_fail(u, "FRWR: ib_post_send LOCAL_INV: %d", err);
		goto out_unmap;
	}
	if (!ulp_wait(u, &u->fr_ok, 4) || atomic_read(&u->fr_bad)) {
		ulp_fail(u, "FRWR: LOCAL_INV did not complete");
		err = -EIO;
		goto out_unmap;
	}
	if (!(u->fr_ops & BIT(IB_WC_REG_MR)) || !(u->fr_ops & BIT(IB_WC_LOCAL_INV)) ||
	    !(u->fr_ops & BIT(IB_WC_RDMA_WRITE))) {
		ulp_fail(u, "FRWR: completion opcodes 0x%x", u->fr_ops);
		err = -EIO;
		goto out_unmap;
	}
out_unmap:
	if (mr)
		ib_dereg_mr(mr);
	ib_dma_unmap_sg(u->dev, sg, 2, DMA_BIDIRECTIONAL);
	if (!err && memcmp(p, p + PAGE_SIZE, MSG_SIZE)) {
		ulp_fail(u, "FRWR: RDMA WRITE payload through the rkey differs");
		err = -EIO;
	}
	if (!err)
		pr_info(ULP ": FRWR: REG_MR (key 0x%x, %d pages), RDMA WRITE and SEND through it, "
			"LOCAL_INV, payload checked\n", reg.key, n);
out_free:
	__free_pages(pages, 1);
	return err;
}

static bool ulp_wait(struct ulp *u, atomic_t *v, int n)
{
	return wait_event_timeout(u->wq, atomic_read(v) >= n || u->why[0], TIMEOUT) &&
	       !u->why[0];
}

static int ulp_run(struct ulp *u)
{
	struct ib_srq_init_attr sa = {};
	int i, seq, err, sent, limit;

	init_waitqueue_head(&u->wq);
	u->pd = ib_alloc_pd(u->dev, 0);
	if (IS_ERR(u->pd)) {
		err = PTR_ERR(u->pd);
		u->pd = NULL;
		ulp_fail(u, "ib_alloc_pd: %d", err);
		return err;
	}
	u->ncq = num_online_cpus();
	u->cqs = kcalloc(u->ncq, sizeof(*u->cqs), GFP_KERNEL);
	if (!u->cqs)
		return -ENOMEM;
	for (i = 0; i < u->ncq; i++) {
		u->cqs[i] = ib_alloc_cq(u->dev, u, 2 * (NRECV + RNR_MSGS),
					i % u->dev->num_comp_vectors, IB_POLL_WORKQUEUE);
		if (IS_ERR(u->cqs[i])) {
			err = PTR_ERR(u->cqs[i]);
			u->cqs[i] = NULL;
			ulp_fail(u, "ib_alloc_cq %d: %d", i, err);
			return err;
		}
	}
	err = ulp_check_refusals(u);
	if (err)
		return err;

	if (!(u->dev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS)) {
		ulp_fail(u, "no memory management extensions (FRWR)");
		return -EOPNOTSUPP;
	}

	err = ulp_find_gid(u);
	if (err) {
		ulp_fail(u, "no RoCE v2 GID on port 1 (%d)", err);
		return err;
	}

	sa.event_handler = ulp_srq_event;
	sa.srq_context = u;
	sa.attr.max_wr = NRECV;
	sa.attr.max_sge = 1;
	sa.srq_type = IB_SRQT_BASIC;
	u->srq = ib_create_srq(u->pd, &sa);
	if (IS_ERR(u->srq)) {
		err = PTR_ERR(u->srq);
		u->srq = NULL;
		ulp_fail(u, "ib_create_srq: %d", err);
		return err;
	}
	sa.attr.max_wr = RNR_MSGS;
	u->srq2 = ib_create_srq(u->pd, &sa);
	if (IS_ERR(u->srq2)) {
		err = PTR_ERR(u->srq2);
		u->srq2 = NULL;
		ulp_fail(u, "ib_create_srq (second): %d", err);
		return err;
	}
	for (i = 0; i < NQP + 2; i++) {
		u->qp[i] = ulp_create_qp(u, i < NQP ? u->srq : u->srq2, u->cqs[i % u->ncq]);
		if (IS_ERR(u->qp[i])) {
			err = PTR_ERR(u->qp[i]);
			u->qp[i] = NULL;
			ulp_fail(u, "ib_create_qp %d: %d", i, err);
			return err;
		}
	}
	for (i = 0; i < NQP + 2; i++) {
		err = ulp_connect(u, u->qp[i], u->qp[i ^ 1]->qp_num);
		if (err) {
			ulp_fail(u, "connecting QP %d: %d", i, err);
			return err;
		}
	}

	u->nsbuf = (NQP + 2) * msgs;
	u->sbuf = kcalloc(u->nsbuf, sizeof(*u->sbuf), GFP_KERNEL);
	if (!u->sbuf)
		return -ENOMEM;
	for (i = 0; i < u->nsbuf; i++)
		if (ulp_map(u, &u->sbuf[i], NULL, DMA_TO_DEVICE, ulp_send_done))
			return -ENOMEM;
	for (i = 0; i < NRECV + RNR_MSGS; i++)
		if (ulp_map(u, &u->rbuf[i], i < NRECV ? u->srq : u->srq2, DMA_FROM_DEVICE,
			    ulp_recv_done))
			return -ENOMEM;

	/* Step 1b: XRC (the first send buffer is its payload). */
	err = ulp_xrc(u);
	if (err)
		return err;

	/* Step 3: traffic from every QP into the shared SRQ. */
	WRITE_ONCE(u->repost, true);
	for (i = 0; i < NRECV; i++) {
		err = ulp_post_recv(u, &u->rbuf[i]);
		if (err) {
			ulp_fail(u, "ib_post_srq_recv %d: %d", i, err);
			return err;
		}
	}
	for (seq = 0; seq < msgs; seq++)
		for (i = 0; i < NQP; i++) {
			err = ulp_send(u, i, seq);
			if (err) {
				ulp_fail(u, "ib_post_send QP %d seq %d: %d", i, seq, err);
				return err;
			}
		}
	sent = NQP * msgs;
	if (!ulp_wait(u, &u->recv_ok, sent) || !ulp_wait(u, &u->send_ok, sent)) {
		ulp_fail(u, "traffic: %d/%d received, %d/%d sent", atomic_read(&u->recv_ok), sent,
			 atomic_read(&u->send_ok), sent);
		return -ETIMEDOUT;
	}
	pr_info(ULP ": %d messages of %d bytes from %d QPs through one SRQ, payload checked\n",
		sent, MSG_SIZE, NQP);

	/*
	 * Step 3a: a second round with every kernel CQ resized twice while completions are
	 * in flight (grown, then shrunk back): each completion must arrive exactly once,
	 * intact, whether the poller or vcx_resize_cq moves the CQ to its new ring.
	 */
	for (seq = 0; seq < msgs; seq++) {
		if (seq == msgs / 3 || seq == 2 * msgs / 3) {
			int cqe = (seq == msgs / 3 ? 4 : 2) * (NRECV + RNR_MSGS);

			for (i = 0; i < u->ncq; i++) {
				err = ib_resize_cq(u->cqs[i], cqe);
				if (err || u->cqs[i]->cqe < cqe) {
					ulp_fail(u, "ib_resize_cq %d to %d: %d (cqe %d)", i, cqe,
						 err, u->cqs[i]->cqe);
					return err ? err : -EINVAL;
				}
			}
		}
		for (i = 0; i < NQP; i++) {
			err = ulp_send(u, i, seq);
			if (err) {
				ulp_fail(u, "ib_post_send QP %d seq %d (resize round): %d", i, seq,
					 err);
				return err;
			}
		}
	}
	sent += NQP * msgs;
	if (!ulp_wait(u, &u->recv_ok, sent) || !ulp_wait(u, &u->send_ok, sent)) {
		ulp_fail(u, "resize round: %d/%d received, %d/%d sent",
			 atomic_read(&u->recv_ok), sent, atomic_read(&u->send_ok), sent);
		return -ETIMEDOUT;
	}
	if (atomic_read(&u->recv_ok) != sent || atomic_read(&u->send_ok) != sent) {
		ulp_fail(u, "resize round: %d receive and %d send completions for %d messages",
			 atomic_read(&u->recv_ok), atomic_read(&u->send_ok), sent);
		return -EIO;
	}
	pr_info(ULP ": %d more messages with the %d CQs resized to %d and back to %d CQEs "
		"in flight\n", NQP * msgs, u->ncq, 4 * (NRECV + RNR_MSGS), u->cqs[0]->cqe);

	/* Step 3b: fast registration; its SEND lands in the SRQ like the others. */
	err = ulp_frwr(u, sent);
	if (err)
		return err;
	/* its SEND completed on fr_cqe: count it with the other sends */
	atomic_inc(&u->send_ok);
	sent++;

	/* Step 4: the limit. Reposting stops; 8 more messages take 8 WQEs below it. */
	WRITE_ONCE(u->repost, false);
	limit = atomic_read(&u->posted) - 4;
	err = ib_modify_srq(u->srq, &(struct ib_srq_attr){ .srq_limit = limit }, IB_SRQ_LIMIT);
	if (err) {
		ulp_fail(u, "ib_modify_srq limit %d: %d", limit, err);
		return err;
	}
	for (i = 0; i < 8; i++) {
		err = ulp_send(u, 0, msgs + i);
		if (err) {
			ulp_fail(u, "ib_post_send (limit) %d: %d", i, err);
			return err;
		}
	}
	if (!ulp_wait(u, &u->recv_ok, sent + 8) || !ulp_wait(u, &u->limit_events, 1)) {
		ulp_fail(u, "SRQ limit %d: %d events, %d WQEs left", limit,
			 atomic_read(&u->limit_events), atomic_read(&u->posted));
		return -ETIMEDOUT;
	}
	sent += 8;
	pr_info(ULP ": SRQ_LIMIT_REACHED at limit %d (%d WQEs left)\n", limit,
		atomic_read(&u->posted));

	/* Step 5: an SRQ with no WQE: RNR retries until WQEs come, nothing is lost. */
	for (seq = 0; seq < RNR_MSGS; seq++) {
		err = ulp_send(u, NQP, seq);
		if (err) {
			ulp_fail(u, "ib_post_send (RNR) %d: %d", seq, err);
			return err;
		}
	}
	msleep(500);
	if (atomic_read(&u->recv_ok) != sent || u->why[0]) {
		ulp_fail(u, "receives on an empty SRQ");
		return -EIO;
	}
	for (i = NRECV; i < NRECV + RNR_MSGS; i++) {
		err = ulp_post_recv(u, &u->rbuf[i]);
		if (err) {
			ulp_fail(u, "ib_post_srq_recv (RNR) %d: %d", i, err);
			return err;
		}
	}
	sent += RNR_MSGS;
	if (!ulp_wait(u, &u->recv_ok, sent) || !ulp_wait(u, &u->send_ok, sent) ||
	    atomic_read(&u->send_bad) || atomic_read(&u->recv_bad)) {
		ulp_fail(u, "RNR: %d/%d received, %d/%d sent, %d bad", atomic_read(&u->recv_ok),
			 sent, atomic_read(&u->send_ok), sent, atomic_read(&u->send_bad));
		return -EIO;
	}
	pr_info(ULP ": %d messages into an empty SRQ arrived after RNR retries\n", RNR_MSGS);
	return 0;
}

/* Step 6: QPs (to ERR, then destroyed), SRQs, CQs, buffers, PD. */
static void ulp_teardown(struct ulp *u)
{
	struct ib_qp_attr a = { .qp_state = IB_QPS_ERR };
	int i;

	for (i = 0; i < NQP + 2; i++)
		if (u->qp[i])
			ib_modify_qp(u->qp[i], &a, IB_QP_STATE);
	for (i = 0; i < NQP + 2; i++)
		if (u->qp[i])
			ib_destroy_qp(u->qp[i]);
	if (u->srq2)
		ib_destroy_srq(u->srq2);
	if (u->srq)
		ib_destroy_srq(u->srq);
	for (i = 0; u->cqs && i < u->ncq; i++)
		if (u->cqs[i])
			ib_free_cq(u->cqs[i]);
	kfree(u->cqs);
	for (i = 0; u->sbuf && i < u->nsbuf; i++)
		ulp_unmap(u, &u->sbuf[i], DMA_TO_DEVICE);
	kfree(u->sbuf);
	for (i = 0; i < NRECV + RNR_MSGS; i++)
		ulp_unmap(u, &u->rbuf[i], DMA_FROM_DEVICE);
	if (u->pd)
		ib_dealloc_pd(u->pd);
}

static int ulp_add(struct ib_device *dev)
{
	if (!the_ulp->dev && !strcmp(dev_name(&dev->dev), dev_name_param))
		the_ulp->dev = dev;
	return 0;
}

static void ulp_remove(struct ib_device *dev, void *data)
{
}

static struct ib_client ulp_client = {
	.name = ULP,
	.add = ulp_add,
	.remove = ulp_remove,
};

static int __init ulp_init(void)
{
	struct ulp *u;
	int err;

	u = kzalloc(sizeof(*u), GFP_KERNEL);
	if (!u)
		return -ENOMEM;
	the_ulp = u;
	err = ib_register_client(&ulp_client);
	if (err)
		goto out_free;
	if (!u->dev) {
		ulp_fail(u, "no ib_device %s", dev_name_param);
		err = -ENODEV;
	} else {
		err = ulp_run(u);
		if (err && !u->why[0])
			ulp_fail(u, "step failed: %d", err);
		ulp_teardown(u);
	}
	ib_unregister_client(&ulp_client);
	if (err) {
		snprintf(result, sizeof(result), "FAIL %s", u->why);
		pr_err(ULP ": FAIL %s\n", u->why);
		goto out_free;
	}
	snprintf(result, sizeof(result), "PASS %d QPs, SRQ limit, RNR on an empty SRQ", NQP);
	pr_info(ULP ": %s\n", result);
	/* Stay loaded so that the result can be read; nothing is held any more. */
	kfree(u);
	the_ulp = NULL;
	return 0;

out_free:
	kfree(u);
	the_ulp = NULL;
	return err;
}

static void __exit ulp_exit(void)
{
}

module_init(ulp_init);
module_exit(ulp_exit);
MODULE_DESCRIPTION("vcx kernel verbs test: SRQ shared by RC QPs in loopback");
MODULE_LICENSE("GPL");
