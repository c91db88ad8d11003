// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcx_drain_ulp: in-kernel test of queue drains on vcx.ko (ib_drain_qp, ib_drain_sq,
 * ib_drain_rq), on a live function and on a dead one.
 *
 * Each case is one QP with work that stays outstanding: receives posted to its RQ (or to
 * an SRQ) and sends, unsignaled and signaled in turn, that cannot complete: an RC QP in
 * RTS whose peer stays in INIT (the device keeps retrying, the ACK timeout is long), UC
 * and UD QPs in RTR (nothing is sent before RTS). The case drains the QP, with
 * ib_drain_qp or with ib_drain_sq then ib_drain_rq, and checks: the drain returns within
 * DRAIN_LIMIT_MS; every outstanding WR completes exactly once, with
 * IB_WC_WR_FLUSH_ERR, in posting order per queue; on a CQ shared by both queues every
 * send completes before any receive; nothing more arrives afterwards; SRQ receives stay
 * posted (they are the SRQ's, not the QP's) and IB_EVENT_QP_LAST_WQE_REACHED arrives
 * once. The cases cover RC, UC and UD, a regular RQ and (RC, UD) an SRQ, and CQs polled
 * directly (IB_POLL_DIRECT), from a workqueue and from softirq.
 *
 * mode=alive (default): every case is set up and drained in turn.
 *
 * mode=dead: every case is set up (plus a UD QP in RTS on a direct CQ whose signaled
 * sends complete in the device before the failure, their CQEs left unpolled), then init
 * logs "armed" and waits up to DEAD_WAIT_S for IB_EVENT_DEVICE_FATAL, which
 * tests/guest/verbs-drain-dead.sh causes by forcing a fatal health syndrome into the
 * device. Then: the flush completions of CQs not polled directly must arrive without
 * any drain (the driver runs their handlers); ib_post_send, ib_post_recv and
 * ib_post_srq_recv fail with -EIO; every case is drained and checked as above (the UD
 * QP's sends complete successfully, before the software flushes); everything is
 * destroyed.
 *
 * The result is logged ("vcx_drain_ulp: PASS ..." / "FAIL ..."), kept in the read-only
 * parameter result and returned by module init (0 or the errno of the failing step).
 */
#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "vcx_kmod_common.h"

#define ULP "vcx_drain_ulp"
#define NRECV 3
#define NSEND 4
#define NWR (NRECV + NSEND)
#define BUF_SIZE 4096
#define SGE_LEN 64
#define DRAIN_LIMIT_MS 10000
#define SETTLE_MS 200
#define DEAD_WAIT_S 60
#define KICK_WAIT_MS 5000
#define QKEY 0x11111111

static char *dev_name_param = "vcx_0";
module_param_named(dev, dev_name_param, charp, 0444);
MODULE_PARM_DESC(dev, "ib_device to test");
static char *mode = "alive";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "alive: drain on a working device; dead: wait for a fatal error, then drain");
static char result[160] = "not run";
module_param_string(result, result, sizeof(result), 0444);
MODULE_PARM_DESC(result, "PASS or FAIL with the reason");

struct dcase {
	const char *name;
	enum ib_qp_type type;
	bool srq;
	enum ib_poll_context sctx, rctx;
	bool shared_cq;			/* one CQ for both queues (sctx) */
	bool split;			/* ib_drain_sq, then ib_drain_rq */
	bool hw_sends;			/* dead mode only: UD in RTS, all sends signaled and
					 * done by the device before the failure */
};

static const struct dcase cases[] = {
	{ "RC RQ direct", IB_QPT_RC, false, IB_POLL_DIRECT, IB_POLL_DIRECT, true, false },
	{ "RC RQ workqueue split", IB_QPT_RC, false, IB_POLL_WORKQUEUE, IB_POLL_WORKQUEUE,
	  false, true },
	{ "RC RQ softirq", IB_QPT_RC, false, IB_POLL_SOFTIRQ, IB_POLL_SOFTIRQ, true, false },
	{ "UC RQ softirq/direct split", IB_QPT_UC, false, IB_POLL_SOFTIRQ, IB_POLL_DIRECT,
	  false, true },
	{ "UC RQ workqueue", IB_QPT_UC, false, IB_POLL_WORKQUEUE, IB_POLL_WORKQUEUE, true,
	  false },
	{ "UD RQ direct split", IB_QPT_UD, false, IB_POLL_DIRECT, IB_POLL_DIRECT, false, true },
	{ "UD RQ workqueue", IB_QPT_UD, false, IB_POLL_WORKQUEUE, IB_POLL_WORKQUEUE, true,
	  false },
	{ "RC SRQ workqueue", IB_QPT_RC, true, IB_POLL_WORKQUEUE, IB_POLL_WORKQUEUE, true,
	  false },
	{ "RC SRQ direct", IB_QPT_RC, true, IB_POLL_DIRECT, IB_POLL_DIRECT, false, false },
	{ "UD SRQ softirq", IB_QPT_UD, true, IB_POLL_SOFTIRQ, IB_POLL_SOFTIRQ, true, false },
	/* dead mode only */
	{ "UD RTS direct, CQEs before the failure", IB_QPT_UD, false, IB_POLL_DIRECT,
	  IB_POLL_DIRECT, true, false, true },
};
#define NCASES ARRAY_SIZE(cases)

struct drun;

struct dwr {
	struct ib_cqe cqe;
	struct drun *r;
	int idx;			/* in posting order, per queue */
	bool send;
	int done;			/* completions seen */
};

struct ulp;

struct drun {
	const struct dcase *c;
	struct ulp *u;
	struct ib_cq *scq, *rcq;
	struct ib_srq *srq;
	struct ib_qp *qp, *peer;
	struct ib_ah *ah;
	u8 *buf;
	u64 dma;
	struct dwr swr[NSEND], rwr[NRECV];
	spinlock_t lock;
	int sorder[NSEND + 1], rorder[NRECV + 1];
	int ns, nr;			/* completions recorded */
	int seq, last_send_seq, first_recv_seq;
	int bad;			/* wrong status, or more than once */
	char bad_why[80];
	atomic_t last_wqe;
	int hw_ok;			/* dead mode: sends the device completed */
};

struct ulp {
	struct ib_device *dev;
	struct ib_pd *pd;
	union ib_gid gid;
	u8 sgid_index;
	struct drun runs[NCASES];
	struct ib_event_handler eh;
	atomic_t fatal;
	wait_queue_head_t wq;
	int flushes;			/* flush completions counted, all cases */
	int early;			/* of them before any drain (dead mode) */
	long max_drain_ms;
	char why[128];
};

static struct ulp *the_ulp;

static __printf(2, 3) void ulp_fail(struct ulp *u, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vcx_kmod_vfail(u->why, sizeof(u->why), ULP, fmt, ap);
	va_end(ap);
}

static bool dead_mode(void)
{
	return !strcmp(mode, "dead");
}

static void ulp_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct dwr *w = container_of(wc->wr_cqe, struct dwr, cqe);
	struct drun *r = w->r;
	enum ib_wc_status want = IB_WC_WR_FLUSH_ERR;
	unsigned long flags;

	if (r->c->hw_sends && w->send)
		want = IB_WC_SUCCESS;
	spin_lock_irqsave(&r->lock, flags);
	if (++w->done > 1 && !r->bad_why[0])
		snprintf(r->bad_why, sizeof(r->bad_why), "%s %d completed %d times",
			 w->send ? "send" : "receive", w->idx, w->done);
	if (wc->status != want && !r->bad_why[0])
		snprintf(r->bad_why, sizeof(r->bad_why), "%s %d: status %s, expected %s",
			 w->send ? "send" : "receive", w->idx, ib_wc_status_msg(wc->status),
			 ib_wc_status_msg(want));
	if (wc->qp != r->qp && !r->bad_why[0])
		snprintf(r->bad_why, sizeof(r->bad_why), "%s %d: completion names another QP",
			 w->send ? "send" : "receive", w->idx);
	if (w->done > 1 || wc->status != want || wc->qp != r->qp)
		r->bad++;
	if (w->send) {
		if (r->ns < NSEND + 1)
			r->sorder[r->ns] = w->idx;
		r->ns++;
		r->last_send_seq = r->seq;
	} else {
		if (r->nr < NRECV + 1)
			r->rorder[r->nr] = w->idx;
		if (!r->nr)
			r->first_recv_seq = r->seq;
		r->nr++;
	}
	r->seq++;
	spin_unlock_irqrestore(&r->lock, flags);
	wake_up(&r->u->wq);
}

static void ulp_qp_event(struct ib_event *ev, void *ctx)
{
	struct drun *r = ctx;

	if (ev->event == IB_EVENT_QP_LAST_WQE_REACHED) {
		atomic_inc(&r->last_wqe);
		wake_up(&r->u->wq);
	} else if (ev->event != IB_EVENT_COMM_EST) {	/* first packet in RTR */
		ulp_fail(r->u, "%s: unexpected QP event %s", r->c->name, ib_event_msg(ev->event));
	}
}

static void ulp_srq_event(struct ib_event *ev, void *ctx)
{
	struct drun *r = ctx;

	ulp_fail(r->u, "%s: unexpected SRQ event %s", r->c->name, ib_event_msg(ev->event));
}

static void ulp_dev_event(struct ib_event_handler *h, struct ib_event *ev)
{
	struct ulp *u = container_of(h, struct ulp, eh);

	if (ev->event == IB_EVENT_DEVICE_FATAL) {
		pr_info(ULP ": IB_EVENT_DEVICE_FATAL received\n");
		atomic_inc(&u->fatal);
		wake_up(&u->wq);
	}
}

/* The port's RoCE v2 GID (the link-local one ib_core builds from the MAC). */
static int ulp_find_gid(struct ulp *u)
{
	return vcx_kmod_roce_gid(u->dev, &u->gid, &u->sgid_index);
}

static void ulp_set_av(struct ulp *u, struct rdma_ah_attr *ah)
{
	vcx_kmod_loopback_av(u->dev, ah, &u->gid, u->sgid_index);
}

static int ulp_to_init(struct ib_qp *qp, enum ib_qp_type type)
{
	struct ib_qp_attr a = { .qp_state = IB_QPS_INIT, .port_num = 1 };
	int mask = IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT;

	if (type == IB_QPT_UD) {
		a.qkey = QKEY;
		mask |= IB_QP_QKEY;
	} else {
		a.qp_access_flags = IB_ACCESS_REMOTE_WRITE;
		mask |= IB_QP_ACCESS_FLAGS;
	}
	return ib_modify_qp(qp, &a, mask);
}

/*
 * INIT -> RTR (and RTS for RC, and for UD when to_rts): RC and UC towards dqpn. RC gets
 * the longest ACK timeout, so that a send to a peer that never gets ready stays in
 * flight for the whole test.
 */
static int ulp_connect(struct ulp *u, struct ib_qp *qp, enum ib_qp_type type, u32 dqpn,
		       bool to_rts)
{
	struct ib_qp_attr a = { .qp_state = IB_QPS_RTR };
	int err;

	if (type == IB_QPT_UD) {
		err = ib_modify_qp(qp, &a, IB_QP_STATE);
	} else {
		a.path_mtu = IB_MTU_1024;
		a.dest_qp_num = dqpn;
		a.max_dest_rd_atomic = 1;
		a.min_rnr_timer = 12;
		ulp_set_av(u, &a.ah_attr);
		err = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
				   IB_QP_DEST_QPN | IB_QP_RQ_PSN |
				   (type == IB_QPT_RC ? IB_QP_MAX_DEST_RD_ATOMIC |
				    IB_QP_MIN_RNR_TIMER : 0));
	}
	if (err || !to_rts)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	if (type != IB_QPT_RC)
		return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_SQ_PSN);
	a.timeout = 28;			/* 4.096 us << 28: about 18 min per try */
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_SQ_PSN | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC);
}

static int ulp_post_recvs(struct drun *r)
{
	int i, err;

	for (i = 0; i < NRECV; i++) {
		struct ib_sge sge = {
			.addr = r->dma + (NSEND + i) * SGE_LEN, .length = SGE_LEN,
			.lkey = r->u->pd->local_dma_lkey,
		};
		struct ib_recv_wr wr = { .wr_cqe = &r->rwr[i].cqe, .sg_list = &sge, .num_sge = 1 };

		err = r->srq ? ib_post_srq_recv(r->srq, &wr, NULL) : ib_post_recv(r->qp, &wr, NULL);
		if (err)
			return err;
	}
	return 0;
}

static int ulp_post_send(struct drun *r, struct dwr *w, bool signaled)
{
	struct ib_sge sge = {
		.addr = r->dma + w->idx * SGE_LEN, .length = SGE_LEN,
		.lkey = r->u->pd->local_dma_lkey,
	};
	struct ib_ud_wr ud = {
		.wr = {
			.wr_cqe = &w->cqe, .sg_list = &sge, .num_sge = 1, .opcode = IB_WR_SEND,
			.send_flags = signaled ? IB_SEND_SIGNALED : 0,
		},
		.ah = r->ah,
		.remote_qpn = r->peer ? r->peer->qp_num : 0xfffff0,
		.remote_qkey = QKEY,
	};

	return ib_post_send(r->qp, &ud.wr, NULL);
}

/* Sends: unsignaled and signaled in turn, the last signaled (all for hw_sends). */
static int ulp_post_sends(struct drun *r)
{
	int i, err;

	for (i = 0; i < NSEND; i++) {
		err = ulp_post_send(r, &r->swr[i], (i & 1) || r->c->hw_sends);
		if (err)
			return err;
	}
	return 0;
}

static struct ib_cq *ulp_cq(struct ulp *u, enum ib_poll_context ctx)
{
	return ib_alloc_cq(u->dev, NULL, 64, 0, ctx);
}

/* One case's objects and its outstanding work. */
static int ulp_setup(struct ulp *u, struct drun *r, const struct dcase *c)
{
	struct ib_qp_init_attr qa = {
		.event_handler = ulp_qp_event,
		.qp_context = r,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = c->type,
	};
	int i, err;

	r->c = c;
	r->u = u;
	spin_lock_init(&r->lock);
	atomic_set(&r->last_wqe, 0);
	r->last_send_seq = -1;
	r->first_recv_seq = -1;
	for (i = 0; i < NSEND; i++)
		r->swr[i] = (struct dwr){ .cqe.done = ulp_done, .r = r, .idx = i, .send = true };
	for (i = 0; i < NRECV; i++)
		r->rwr[i] = (struct dwr){ .cqe.done = ulp_done, .r = r, .idx = i };

	r->buf = kzalloc(BUF_SIZE, GFP_KERNEL);
	if (!r->buf)
		return -ENOMEM;
	r->dma = ib_dma_map_single(u->dev, r->buf, BUF_SIZE, DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(u->dev, r->dma)) {
		kfree(r->buf);
		r->buf = NULL;
		return -ENOMEM;
	}
	r->scq = ulp_cq(u, c->sctx);
	if (IS_ERR(r->scq))
		return PTR_ERR(r->scq);
	if (!c->shared_cq) {
		r->rcq = ulp_cq(u, c->rctx);
		if (IS_ERR(r->rcq))
			return PTR_ERR(r->rcq);
	}
	if (c->srq) {
		struct ib_srq_init_attr sa = {
			.event_handler = ulp_srq_event,
			.srq_context = r,
			.attr = { .max_wr = 16, .max_sge = 1 },
		};

		r->srq = ib_create_srq(u->pd, &sa);
		if (IS_ERR(r->srq))
			return PTR_ERR(r->srq);
		qa.srq = r->srq;
		qa.cap.max_recv_wr = 0;
	}
	qa.send_cq = r->scq;
	qa.recv_cq = c->shared_cq ? r->scq : r->rcq;
	r->qp = ib_create_qp(u->pd, &qa);
	if (IS_ERR(r->qp))
		return PTR_ERR(r->qp);

	if (c->type == IB_QPT_UD) {
		struct rdma_ah_attr aa = {};

		ulp_set_av(u, &aa);
		r->ah = rdma_create_ah(u->pd, &aa, RDMA_CREATE_AH_SLEEPABLE);
		if (IS_ERR(r->ah))
			return PTR_ERR(r->ah);
	} else {
		/* the peer stays in INIT: it never answers */
		struct ib_qp_init_attr pa = {
			.send_cq = r->scq, .recv_cq = r->scq,
			.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1,
				 .max_recv_sge = 1 },
			.qp_type = c->type,
		};

		r->peer = ib_create_qp(u->pd, &pa);
		if (IS_ERR(r->peer))
			return PTR_ERR(r->peer);
		err = ulp_to_init(r->peer, c->type);
		if (err)
			return err;
	}
	err = ulp_to_init(r->qp, c->type);
	if (!err)
		err = ulp_connect(u, r->qp, c->type, r->peer ? r->peer->qp_num : 0,
				  c->type == IB_QPT_RC || c->hw_sends);
	if (err)
		return err;
	err = ulp_post_recvs(r);
	if (err)
		return err;
	return ulp_post_sends(r);
}

static void ulp_destroy(struct ulp *u, struct drun *r)
{
	if (!IS_ERR_OR_NULL(r->qp))
		ib_destroy_qp(r->qp);
	if (!IS_ERR_OR_NULL(r->peer))
		ib_destroy_qp(r->peer);
	if (!IS_ERR_OR_NULL(r->ah))
		rdma_destroy_ah(r->ah, RDMA_DESTROY_AH_SLEEPABLE);
	if (!IS_ERR_OR_NULL(r->srq))
		ib_destroy_srq(r->srq);
	if (!IS_ERR_OR_NULL(r->rcq))
		ib_free_cq(r->rcq);
	if (!IS_ERR_OR_NULL(r->scq))
		ib_free_cq(r->scq);
	if (r->buf) {
		ib_dma_unmap_single(u->dev, r->dma, BUF_SIZE, DMA_BIDIRECTIONAL);
		kfree(r->buf);
	}
	memset(r, 0, sizeof(*r));
}

/* Completions a case expects from its own queues (the SRQ's receives never flush). */
static int ulp_expected_recvs(const struct drun *r)
{
	return r->c->srq ? 0 : NRECV;
}

static bool ulp_counts_reached(struct drun *r, int ns, int nr)
{
	unsigned long flags;
	bool done;

	spin_lock_irqsave(&r->lock, flags);
	done = r->ns >= ns && r->nr >= nr;
	spin_unlock_irqrestore(&r->lock, flags);
	return done;
}

/* Poll what a direct CQ holds (its owner's job); how many completions. */
static int ulp_poll_direct(struct drun *r)
{
	int n = 0;

	if (r->c->sctx == IB_POLL_DIRECT)
		n += ib_process_cq_direct(r->scq, -1);
	if (!r->c->shared_cq && r->c->rctx == IB_POLL_DIRECT)
		n += ib_process_cq_direct(r->rcq, -1);
	return n;
}

/*
 * Every WR exactly once, in posting order per queue, sends before receives on one CQ;
 * want_r < 0: any number of receive completions so far.
 */
static int ulp_check(struct ulp *u, struct drun *r, int want_s, int want_r, const char *when)
{
	const char *name = r->c->name;
	int i;

	if (r->bad) {
		ulp_fail(u, "%s: %s", name, r->bad_why);
		return -EIO;
	}
	if (r->ns != want_s || (want_r >= 0 && r->nr != want_r)) {
		ulp_fail(u, "%s %s: %d send and %d receive completions, expected %d and %d", name,
			 when, r->ns, r->nr, want_s, want_r);
		return -EIO;
	}
	for (i = 0; i < r->ns; i++)
		if (r->sorder[i] != i) {
			ulp_fail(u, "%s: send completion %d is WR %d", name, i, r->sorder[i]);
			return -EIO;
		}
	for (i = 0; i < r->nr; i++)
		if (r->rorder[i] != i) {
			ulp_fail(u, "%s: receive completion %d is WR %d", name, i, r->rorder[i]);
			return -EIO;
		}
	if (r->c->shared_cq && r->ns && r->nr && r->last_send_seq > r->first_recv_seq) {
		ulp_fail(u, "%s: a receive completed before the last send on the shared CQ", name);
		return -EIO;
	}
	return 0;
}

/* Drain one case and check it; the completions counted are added to u->flushes. */
static int ulp_drain_case(struct ulp *u, struct drun *r)
{
	const struct dcase *c = r->c;
	int want_r = ulp_expected_recvs(r);
	ktime_t t0 = ktime_get();
	long ms;
	int err;

	if (c->split) {
		/* ERR flushes the receives too: they may have completed already */
		ib_drain_sq(r->qp);
		err = ulp_check(u, r, NSEND, -1, "after ib_drain_sq");
		if (err)
			return err;
		ib_drain_rq(r->qp);
	} else {
		ib_drain_qp(r->qp);
	}
	ms = ktime_ms_delta(ktime_get(), t0);
	u->max_drain_ms = max(u->max_drain_ms, ms);
	if (ms > DRAIN_LIMIT_MS) {
		ulp_fail(u, "%s: drain took %ld ms", c->name, ms);
		return -ETIMEDOUT;
	}
	err = ulp_check(u, r, NSEND, want_r, "after the drain");
	if (err)
		return err;
	if (c->srq) {
		/* on 6.12 ib_drain_qp waited for it; on older kernels it comes by itself */
		if (!wait_event_timeout(u->wq, atomic_read(&r->last_wqe), 5 * HZ) ||
		    atomic_read(&r->last_wqe) != 1) {
			ulp_fail(u, "%s: %d IB_EVENT_QP_LAST_WQE_REACHED events, expected 1",
				 c->name, atomic_read(&r->last_wqe));
			return -EIO;
		}
	}
	/* Nothing more may come. */
	msleep(SETTLE_MS);
	ulp_poll_direct(r);
	err = ulp_check(u, r, NSEND, want_r, "after the drain settled");
	if (err)
		return err;
	u->flushes += NSEND + want_r - r->hw_ok;
	pr_info(ULP ": %s: %s in %ld ms: %d sends and %d receives flushed in order%s\n",
		c->name, c->split ? "ib_drain_sq + ib_drain_rq" : "ib_drain_qp", ms,
		NSEND - r->hw_ok, want_r,
		c->srq ? ", SRQ receives kept, LAST_WQE_REACHED" :
		r->hw_ok ? ", after the sends the device had completed" : "");
	return 0;
}

static int ulp_run_alive(struct ulp *u)
{
	int i, err;

	for (i = 0; i < NCASES; i++) {
		struct drun *r = &u->runs[i];

		if (cases[i].hw_sends)
			continue;
		err = ulp_setup(u, r, &cases[i]);
		if (err) {
			ulp_fail(u, "%s: setup: %d", cases[i].name, err);
			ulp_destroy(u, r);
			return err;
		}
		err = ulp_drain_case(u, r);
		ulp_destroy(u, r);
		if (err)
			return err;
	}
	return u->why[0] ? -EIO : 0;
}

/* Posting to a dead function fails with -EIO (drains alone may post). */
static int ulp_check_posts_refused(struct ulp *u, struct drun *rq_run, struct drun *srq_run)
{
	struct ib_recv_wr rwr = { .wr_cqe = &rq_run->rwr[0].cqe };
	struct ib_send_wr swr = { .wr_cqe = &rq_run->swr[0].cqe, .opcode = IB_WR_SEND };
	int err;

	err = ib_post_send(rq_run->qp, &swr, NULL);
	if (err != -EIO) {
		ulp_fail(u, "ib_post_send on a dead device: %d, expected -EIO", err);
		return -EIO;
	}
	err = ib_post_recv(rq_run->qp, &rwr, NULL);
	if (err != -EIO) {
		ulp_fail(u, "ib_post_recv on a dead device: %d, expected -EIO", err);
		return -EIO;
	}
	err = ib_post_srq_recv(srq_run->srq, &rwr, NULL);
	if (err != -EIO) {
		ulp_fail(u, "ib_post_srq_recv on a dead device: %d, expected -EIO", err);
		return -EIO;
	}
	pr_info(ULP ": dead device: post_send, post_recv, post_srq_recv refused with -EIO\n");
	return 0;
}

static int ulp_run_dead(struct ulp *u)
{
	struct drun *rq_run = NULL, *srq_run = NULL;
	unsigned long deadline;
	int i, err, early = 0;

	for (i = 0; i < NCASES; i++) {
		struct drun *r = &u->runs[i];

		err = ulp_setup(u, r, &cases[i]);
		if (err) {
			ulp_fail(u, "%s: setup: %d", cases[i].name, err);
			return err;
		}
		if (!cases[i].srq && !rq_run && cases[i].type == IB_QPT_RC)
			rq_run = r;
		if (cases[i].srq && !srq_run)
			srq_run = r;
	}
	/* The UD QP in RTS: its sends are done in the device, their CQEs left in the ring. */
	msleep(SETTLE_MS);
	for (i = 0; i < NCASES; i++) {
		if (!cases[i].hw_sends)
			continue;
		u->runs[i].hw_ok = NSEND;
		if (u->runs[i].ns) {
			ulp_fail(u, "%s: completions polled before the failure", cases[i].name);
			return -EIO;
		}
	}

	pr_info(ULP ": dead: %zu QPs armed with outstanding work: force a fatal error now\n",
		NCASES);
	if (!wait_event_timeout(u->wq, atomic_read(&u->fatal), DEAD_WAIT_S * HZ)) {
		ulp_fail(u, "no IB_EVENT_DEVICE_FATAL within %d s", DEAD_WAIT_S);
		return -ETIMEDOUT;
	}

	/* CQs not polled directly get their flushes without any drain. */
	deadline = jiffies + msecs_to_jiffies(KICK_WAIT_MS);
	for (i = 0; i < NCASES; i++) {
		struct drun *r = &u->runs[i];
		int ns = r->c->sctx == IB_POLL_DIRECT ? 0 : NSEND;
		int nr = ulp_expected_recvs(r);

		if ((r->c->shared_cq ? r->c->sctx : r->c->rctx) == IB_POLL_DIRECT)
			nr = 0;
		wait_event_timeout(u->wq, ulp_counts_reached(r, ns, nr),
				   max_t(long, deadline - jiffies, 1));
		if (ulp_check(u, r, ns, nr, "after the failure, before any drain"))
			return -EIO;
		early += ns + nr;
	}
	u->early = early;
	pr_info(ULP ": dead: %d flush completions arrived without a drain\n", early);

	err = ulp_check_posts_refused(u, rq_run, srq_run);
	if (err)
		return err;
	for (i = 0; i < NCASES; i++) {
		err = ulp_drain_case(u, &u->runs[i]);
		if (err)
			return err;
	}
	return u->why[0] ? -EIO : 0;
}

static int ulp_run(struct ulp *u)
{
	int err;

	err = ulp_find_gid(u);
	if (err) {
		ulp_fail(u, "no RoCE v2 GID on port 1: %d", err);
		return err;
	}
	u->pd = ib_alloc_pd(u->dev, 0);
	if (IS_ERR(u->pd)) {
		err = PTR_ERR(u->pd);
		u->pd = NULL;
		ulp_fail(u, "ib_alloc_pd: %d", err);
		return err;
	}
	return dead_mode() ? ulp_run_dead(u) : ulp_run_alive(u);
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
	int err, i;

	if (strcmp(mode, "alive") && strcmp(mode, "dead")) {
		pr_err(ULP ": mode must be alive or dead\n");
		return -EINVAL;
	}
	u = kzalloc(sizeof(*u), GFP_KERNEL);
	if (!u)
		return -ENOMEM;
	the_ulp = u;
	init_waitqueue_head(&u->wq);
	atomic_set(&u->fatal, 0);
	err = ib_register_client(&ulp_client);
	if (err)
		goto out_free;
	if (!u->dev) {
		ulp_fail(u, "no ib_device %s", dev_name_param);
		err = -ENODEV;
	} else {
		INIT_IB_EVENT_HANDLER(&u->eh, u->dev, ulp_dev_event);
		ib_register_event_handler(&u->eh);
		err = ulp_run(u);
		if (err && !u->why[0])
			ulp_fail(u, "step failed: %d", err);
		for (i = 0; i < NCASES; i++)
			if (u->runs[i].c)
				ulp_destroy(u, &u->runs[i]);
		if (u->pd)
			ib_dealloc_pd(u->pd);
		if (!err && dead_mode() != !!atomic_read(&u->fatal)) {
			ulp_fail(u, "%d IB_EVENT_DEVICE_FATAL events", atomic_read(&u->fatal));
			err = -EIO;
		}
		ib_unregister_event_handler(&u->eh);
	}
	ib_unregister_client(&ulp_client);
	if (err) {
		snprintf(result, sizeof(result), "FAIL %s", u->why);
		pr_err(ULP ": FAIL %s\n", u->why);
		goto out_free;
	}
	if (dead_mode())
		snprintf(result, sizeof(result),
			 "PASS dead: %zu QPs, %d flush completions (%d before any drain), DEVICE_FATAL seen, longest drain %ld ms",
			 NCASES, u->flushes, u->early, u->max_drain_ms);
	else
		snprintf(result, sizeof(result),
			 "PASS alive: %zu QPs, %d flush completions, longest drain %ld ms",
			 NCASES - 1, u->flushes, u->max_drain_ms);
	pr_info(ULP ": %s\n", result);
	err = 0;
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
MODULE_DESCRIPTION("vcx kernel verbs test: queue drains on a live and on a dead device");
MODULE_LICENSE("GPL");
