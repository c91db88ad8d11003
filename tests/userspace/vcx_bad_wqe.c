// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vcx_bad_wqe: malformed send WQEs written straight into the provider's SQ ring, and verbs
 * with bad attributes, on vcx_0 (docs/testing.md).
 *
 * For each case a fresh pair of QPs is connected in loopback on port 1 (RoCE v2). One valid
 * RDMA write posted through ibv_post_send checks the ring state; then the test builds the
 * malformed WQE itself at the provider's producer counter (struct vcx_qp from
 * rdma-core-provider/vcx.h, segment encoders from include/vcx/prm-wqe.h), updates the
 * provider's bookkeeping and the doorbell record and rings the doorbell as sq.c does. The
 * requester CQE must carry the status the device documents (docs/device-interface.md
 * "Error syndromes produced"), vendor_err 0; the QP must be in ERR and a WQE posted after it
 * must flush. Then receives and sends posted to a QP moved to ERR must all be flushed
 * (flush_in_err), and CQ moderation through ibv_modify_cq must hold an event back until
 * its count (cq_moderation). Output is TAP; the exit status is non-zero on any failure.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "rdma-core-provider/vcx.h"
#include "tap.h"
#include "vcx/prm-wqe.h"

#define DEV_NAME "vcx_0"
#define BUF_SIZE 0x4000

struct env {
	struct ibv_context *ctx;
	struct ibv_device_attr_ex dattr;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct ibv_cq *scq, *rcq;
	int gid_index;
	union ibv_gid gid;
};

static int connect_qp(struct env *e, struct ibv_qp *qp, uint32_t dqpn)
{
	bool rc = qp->qp_type == IBV_QPT_RC;
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   (rc ? IBV_ACCESS_REMOTE_READ : 0),
	};
	int err;

	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			    IBV_QP_ACCESS_FLAGS);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = e->gid;
	a.ah_attr.grh.sgid_index = e->gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    (rc ? IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER : 0));
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     (rc ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				   IBV_QP_MAX_QP_RD_ATOMIC : 0));
}

static struct ibv_qp *make_qp(struct env *e, enum ibv_qp_type type, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = type,
		.sq_sig_all = 0,
	};
	struct ibv_qp *qp = ibv_create_qp(e->pd, &ia);

	if (!qp)
		bail("ibv_create_qp");
	return qp;
}

/* Poll one CQE within 5 s; 1 if got, 0 on timeout, -1 on a poll error. */
static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	struct timespec ts = { 0, 1000000 };
	int i, n;

	for (i = 0; i < 5000; i++) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n < 0 ? -1 : 1;
		nanosleep(&ts, NULL);
	}
	return 0;
}

static int drain(struct ibv_cq *cq)
{
	struct ibv_wc wc;
	int n = 0;

	while (ibv_poll_cq(cq, 1, &wc) > 0)
		n++;
	return n;
}

static int post_write(struct env *e, struct ibv_qp *qp, uint64_t wr_id, uint32_t rkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)e->buf, .length = 64, .lkey = e->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)e->buf + 0x1000, .rkey = rkey },
	};
	struct ibv_send_wr *bad;

	return ibv_post_send(qp, &wr, &bad);
}

/* What the test puts in the WQE it builds itself. */
struct bad_wqe {
	uint8_t opcode;
	uint8_t ds;		/* the DS count written in the control segment */
	bool raddr;		/* remote address segment */
	uint32_t rkey;
	uint32_t lkey;
	bool data;		/* one data segment */
};

/*
 * Write the WQE at the provider's producer counter, account for it as vcx_post_send()
 * does (wr_id, wqe_head, head, cur_post) and ring the doorbell as ring_sq_doorbell() does.
 */
static void post_raw(struct env *e, struct ibv_qp *ibqp, const struct bad_wqe *w,
		     uint64_t wr_id)
{
	struct vcx_qp *qp = to_vcx_qp(ibqp);
	struct vcx_wq *sq = &qp->sq;
	uint8_t *ring = (uint8_t *)qp->buf.buf + sq->offset;
	uint32_t idx = sq->cur_post & (sq->wqe_cnt - 1);
	uint8_t *wqe = ring + idx * VCX_SEND_WQEBB;
	uint32_t off = VCX_WQE_CTRL_SIZE;
	struct vcx_bfreg *bf = qp->bfreg;
	uint64_t db;

	vcx_spin_lock(&sq->lock);
	/* One WQEBB is enough for ctrl + raddr + data; keep the rest of it deterministic. */
	memset(wqe, 0, VCX_SEND_WQEBB);
	if (w->raddr) {
		vcx_wqe_raddr_seg_set(wqe + off, (uintptr_t)e->buf + 0x1000, w->rkey);
		off += VCX_WQE_RADDR_SEG_SIZE;
	}
	if (w->data)
		vcx_wqe_data_seg_set(wqe + off, 64, w->lkey, (uintptr_t)e->buf);
	vcx_wqe_ctrl_set(wqe, w->opcode, 0, (uint16_t)(sq->cur_post & VCX_WQE_INDEX_MASK),
			 ibqp->qp_num, w->ds, VCX_WQE_CE_CQE, 0);
	sq->wrid[idx] = wr_id;
	sq->wqe_head[idx] = sq->head + 1;
	sq->head++;
	sq->cur_post += 1;	/* the WQEBBs the WQE really takes */

	/* udma_to_device_barrier(), the doorbell record, then the 8-byte doorbell. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	*(volatile __be32 *)&qp->dbrec[VCX_QP_DBR_SEND / 4] =
		htobe32(sq->cur_post & VCX_WQE_INDEX_MASK);
	memcpy(&db, wqe, sizeof(db));
	vcx_spin_lock(&bf->lock);
	asm volatile("sfence" ::: "memory");		/* mmio_wc_start() */
	*(volatile uint64_t *)((uint8_t *)bf->reg + bf->offset) = db;
	asm volatile("sfence" ::: "memory");		/* mmio_flush_writes() */
	bf->offset ^= bf->buf_size;
	vcx_spin_unlock(&bf->lock);
	vcx_spin_unlock(&sq->lock);
}

struct bad_case {
	const char *name;
	enum ibv_qp_type type;
	struct bad_wqe w;
	enum ibv_wc_status status;
	bool big_ds;		/* ds: one more than the SQ holds (set at run time) */
};

static const char *qps_name(enum ibv_qp_state s)
{
	static const char *n[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };

	return s <= IBV_QPS_ERR ? n[s] : "?";
}

static void run_case(struct env *e, const struct bad_case *c)
{
	struct ibv_qp *a = make_qp(e, c->type, e->scq);
	struct ibv_qp *b = make_qp(e, c->type, e->rcq);
	struct vcx_qp *vqp = to_vcx_qp(a);
	struct bad_wqe w = c->w;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr qa;
	struct ibv_wc wc;
	uint32_t before;
	int n;

	n = connect_qp(e, a, b->qp_num);
	if (!n)
		n = connect_qp(e, b, a->qp_num);
	if (n) {
		ok(0, "%s: connect the QP pair: %s", c->name, strerror(n));
		goto out;
	}
	if (w.lkey == 0)
		w.lkey = e->mr->lkey;
	if (w.rkey == 0)
		w.rkey = e->mr->rkey;
	if (c->big_ds) {
		/* Larger than the whole SQ (the device bounds DS by the SQ size). */
		uint32_t sq_ds = vqp->sq.wqe_cnt * (VCX_SEND_WQEBB / VCX_WQE_DS);

		if (sq_ds >= VCX_WQE_CTRL_DS_MAX) {
			printf("ok %d - %s # SKIP the SQ of %u WQEBBs holds 63 DS\n",
			       ++tests, c->name, vqp->sq.wqe_cnt);
			goto out;
		}
		w.ds = (uint8_t)(sq_ds + 1);
	}

	/* A valid WQE through the provider: the ring is where the provider says. */
	before = vqp->sq.cur_post;
	n = post_write(e, a, 100, e->mr->rkey);
	n = n ? -1 : poll_one(e->scq, &wc);
	ok(n == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == 100 &&
	   vqp->sq.cur_post == before + 1,
	   "%s: valid RDMA write first (%s, cur_post %u -> %u)", c->name,
	   n == 1 ? ibv_wc_status_str(wc.status) : "no CQE", before, vqp->sq.cur_post);

	post_raw(e, a, &w, 200);
	n = poll_one(e->scq, &wc);
	ok(n == 1 && wc.wr_id == 200 && wc.status == c->status && wc.qp_num == a->qp_num,
	   "%s: CQE %s (expected %s), wr_id %" PRIu64, c->name,
	   n == 1 ? ibv_wc_status_str(wc.status) : "none", ibv_wc_status_str(c->status),
	   n == 1 ? wc.wr_id : 0);
	ok(n == 1 && wc.vendor_err == 0, "%s: vendor_err 0x%x (the device reports 0)",
	   c->name, n == 1 ? wc.vendor_err : 0xffffffff);

	memset(&qa, 0, sizeof(qa));
	n = ibv_query_qp(a, &qa, IBV_QP_STATE, &ia);
	ok(!n && qa.qp_state == IBV_QPS_ERR, "%s: QP in %s after the error", c->name,
	   n ? strerror(n) : qps_name(qa.qp_state));

	n = post_write(e, a, 300, e->mr->rkey);
	ok(!n, "%s: ibv_post_send on the QP in ERR: %s", c->name, strerror(n));
	if (!n) {
		n = poll_one(e->scq, &wc);
		ok(n == 1 && wc.wr_id == 300 && wc.status == IBV_WC_WR_FLUSH_ERR,
		   "%s: later WQE flushed (%s)", c->name,
		   n == 1 ? ibv_wc_status_str(wc.status) : "no CQE");
	}
	n = drain(e->scq);
	ok(n == 0, "%s: no other requester CQE (%d extra)", c->name, n);
	/* The responder's side is reported, not checked (the brief is the requester's CQE). */
	memset(&qa, 0, sizeof(qa));
	if (!ibv_query_qp(b, &qa, IBV_QP_STATE, &ia))
		printf("# %s: responder QP in %s, %d responder CQEs\n", c->name,
		       qps_name(qa.qp_state), drain(e->rcq));
out:
	if (ibv_destroy_qp(a) || ibv_destroy_qp(b))
		ok(0, "%s: destroy the QPs: %s", c->name, strerror(errno));
	drain(e->rcq);
}

/*
 * Work posted to a user QP in ERR completes with flush errors: the sends when their
 * doorbell rings, the receives although the provider only writes the doorbell record
 * (the device watches the records of its QPs in ERR). 3 receives and 2 signaled sends
 * must give exactly 5 IBV_WC_WR_FLUSH_ERR completions, each queue's in posting order.
 */
static void flush_in_err(struct env *e)
{
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };
	struct timespec ts = { 0, 1000000 };
	uint64_t want_r = 1, want_s = 11;
	struct ibv_wc wc[8];
	struct ibv_cq *cq;
	struct ibv_qp *a, *b;
	int i, n, got = 0, bad = 0, err, extra = 0, waited;

	cq = ibv_create_cq(e->ctx, 16, NULL, NULL, 0);
	if (!cq)
		bail("ibv_create_cq");
	a = make_qp(e, IBV_QPT_RC, cq);
	b = make_qp(e, IBV_QPT_RC, e->rcq);
	err = connect_qp(e, a, b->qp_num);
	if (!err)
		err = connect_qp(e, b, a->qp_num);
	if (!err)
		err = ibv_modify_qp(a, &qa, IBV_QP_STATE);
	ok(!err, "flush in ERR: QP pair connected, one QP moved to ERR: %s", strerror(err));
	if (err)
		goto out;
	for (i = 0; i < 3 && !err; i++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)e->buf + 0x2000 + i * 64, .length = 64,
			.lkey = e->mr->lkey,
		};
		struct ibv_recv_wr wr = { .wr_id = 1 + i, .sg_list = &sge, .num_sge = 1 };
		struct ibv_recv_wr *badr;

		err = ibv_post_recv(a, &wr, &badr);
	}
	for (i = 0; i < 2 && !err; i++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)e->buf + i * 64, .length = 64, .lkey = e->mr->lkey,
		};
		struct ibv_send_wr wr = {
			.wr_id = 11 + i, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED,
		};
		struct ibv_send_wr *bads;

		err = ibv_post_send(a, &wr, &bads);
	}
	ok(!err, "flush in ERR: 3 receives and 2 signaled sends posted: %s", strerror(err));
	if (err)
		goto out;
	/* Up to 5 s for the five, then 100 ms more for anything extra. */
	for (i = 0; i < 5000 && got < 5; i++) {
		n = ibv_poll_cq(cq, 8, wc);
		if (n < 0)
			break;
		for (int j = 0; j < n; j++, got++) {
			if (wc[j].status != IBV_WC_WR_FLUSH_ERR || wc[j].qp_num != a->qp_num)
				bad++;
			else if (wc[j].wr_id == want_r && want_r <= 3)
				want_r++;
			else if (wc[j].wr_id == want_s && want_s <= 12)
				want_s++;
			else
				bad++;
			printf("# flush in ERR: completion %d: wr_id %" PRIu64 " %s\n", got,
			       wc[j].wr_id, ibv_wc_status_str(wc[j].status));
		}
		if (got < 5)
			nanosleep(&ts, NULL);
	}
	waited = i;
	for (i = 0; i < 100; i++) {
		n = ibv_poll_cq(cq, 8, wc);
		if (n > 0)
			extra += n;
		nanosleep(&ts, NULL);
	}
	ok(got == 5 && !bad && want_r == 4 && want_s == 13 && !extra,
	   "flush in ERR: %d completions within %d ms (expected 5), %d wrong, receives in order %s, sends in order %s, %d extra",
	   got, waited, bad, want_r == 4 ? "yes" : "no", want_s == 13 ? "yes" : "no", extra);
out:
	if (ibv_destroy_qp(a) || ibv_destroy_qp(b) || ibv_destroy_cq(cq))
		ok(0, "flush in ERR: destroy: %s", strerror(errno));
	drain(e->rcq);
}

/* ibv_create_srq with si must fail with errno want; an SRQ made anyway is destroyed. */
static void expect_srq_refused(struct env *e, struct ibv_srq_init_attr *si, int want,
			       const char *what)
{
	struct ibv_srq *srq;

	errno = 0;
	srq = ibv_create_srq(e->pd, si);
	ok(!srq && errno == want, "ibv_create_srq %s: %s", what,
	   srq ? "created" : strerror(errno));
	if (srq)
		ibv_destroy_srq(srq);
}

/* Likewise for ibv_create_qp. */
static void expect_qp_refused(struct env *e, struct ibv_qp_init_attr *qi, int want,
			      const char *what)
{
	struct ibv_qp *qp;

	errno = 0;
	qp = ibv_create_qp(e->pd, qi);
	ok(!qp && errno == want, "ibv_create_qp %s: %s", what, qp ? "created" : strerror(errno));
	if (qp)
		ibv_destroy_qp(qp);
}

static void bad_verbs(struct env *e)
{
	struct ibv_srq_init_attr si = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_qp_init_attr qi = {
		.send_cq = e->scq, .recv_cq = e->scq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_srq_attr sa;
	struct ibv_srq *srq;
	struct ibv_cq *cq;
	char what[96];
	int err;

	si.attr.max_wr = e->dattr.orig_attr.max_srq_wr + 1;
	snprintf(what, sizeof(what), "max_wr %u > max_srq_wr %u", si.attr.max_wr,
		 e->dattr.orig_attr.max_srq_wr);
	expect_srq_refused(e, &si, EINVAL, what);

	si.attr.max_wr = 16;
	si.attr.max_sge = e->dattr.orig_attr.max_srq_sge + 1;
	snprintf(what, sizeof(what), "max_sge %u > max_srq_sge %d", si.attr.max_sge,
		 e->dattr.orig_attr.max_srq_sge);
	expect_srq_refused(e, &si, EINVAL, what);

	si.attr.max_sge = 1;
	srq = ibv_create_srq(e->pd, &si);
	ok(srq != NULL, "ibv_create_srq max_wr 16: %s", srq ? "created" : strerror(errno));
	if (srq) {
		memset(&sa, 0, sizeof(sa));
		err = ibv_query_srq(srq, &sa);
		ok(!err && sa.max_wr >= 16, "ibv_query_srq: max_wr %u", sa.max_wr);
		sa.srq_limit = sa.max_wr;
		err = ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT);
		ok(err == EINVAL, "ibv_modify_srq srq_limit %u >= max_wr: %s", sa.srq_limit,
		   err ? strerror(err) : "accepted");
		sa.max_wr = 64;
		err = ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR);
		ok(err == EINVAL, "ibv_modify_srq IBV_SRQ_MAX_WR (no resizing): %s",
		   err ? strerror(err) : "accepted");
		sa.srq_limit = 1;
		err = ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT);
		ok(!err, "ibv_modify_srq srq_limit 1: %s", err ? strerror(err) : "accepted");
		ok(!ibv_destroy_srq(srq), "ibv_destroy_srq");
	}

	/* a QP type the device does not have (XRC is offered: verbs-xrc) */
	qi.qp_type = IBV_QPT_RAW_PACKET;
	expect_qp_refused(e, &qi, EOPNOTSUPP, "IBV_QPT_RAW_PACKET");

	qi.qp_type = IBV_QPT_RC;
	qi.cap.max_send_wr = e->dattr.orig_attr.max_qp_wr + 1;
	snprintf(what, sizeof(what), "max_send_wr %u > max_qp_wr %d", qi.cap.max_send_wr,
		 e->dattr.orig_attr.max_qp_wr);
	expect_qp_refused(e, &qi, EINVAL, what);

	qi.cap.max_send_wr = 4;
	qi.cap.max_send_sge = e->dattr.orig_attr.max_sge + 1;
	snprintf(what, sizeof(what), "max_send_sge %u > max_sge %d", qi.cap.max_send_sge,
		 e->dattr.orig_attr.max_sge);
	expect_qp_refused(e, &qi, EINVAL, what);

	errno = 0;
	cq = ibv_create_cq(e->ctx, e->dattr.orig_attr.max_cqe + 1, NULL, NULL, 0);
	ok(!cq && errno == EINVAL, "ibv_create_cq cqe %d > max_cqe %d: %s",
	   e->dattr.orig_attr.max_cqe + 1, e->dattr.orig_attr.max_cqe,
	   cq ? "created" : strerror(errno));
	if (cq)
		ibv_destroy_cq(cq);
}

/* 1 if the channel has an event within ms milliseconds (and takes and acks it). */
static int cq_event_within(struct ibv_comp_channel *ch, int ms)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct ibv_cq *ev_cq;
	void *ev_ctx;

	if (poll(&pfd, 1, ms) != 1 || ibv_get_cq_event(ch, &ev_cq, &ev_ctx))
		return 0;
	ibv_ack_cq_events(ev_cq, 1);
	return 1;
}

/*
 * CQ moderation (ibv_modify_cq; the kernel's vcx_modify_cq, MODIFY_CQ op_mod 0): the
 * limits ibv_query_device_ex reports, a period past them refused, and the effect: with
 * cq_count 2 and no period, an armed CQ raises no event for its first completion and one
 * for its second.
 */
static void cq_moderation(struct env *e)
{
	struct ibv_modify_cq_attr ma = { .attr_mask = IBV_CQ_ATTR_MODERATE };
	struct ibv_comp_channel *ch;
	struct ibv_qp *a, *b;
	struct ibv_cq *cq;
	struct ibv_wc wc;
	int err, n;

	ok(e->dattr.cq_mod_caps.max_cq_count == 65535 &&
	   e->dattr.cq_mod_caps.max_cq_period == 4095,
	   "ibv_query_device_ex cq_mod_caps: max_cq_count %u, max_cq_period %u us",
	   e->dattr.cq_mod_caps.max_cq_count, e->dattr.cq_mod_caps.max_cq_period);
	ch = ibv_create_comp_channel(e->ctx);
	cq = ch ? ibv_create_cq(e->ctx, 16, NULL, ch, 0) : NULL;
	if (!cq)
		bail("ibv_create_cq with a completion channel");
	ma.moderate.cq_count = 2;
	ma.moderate.cq_period = 4096;
	err = ibv_modify_cq(cq, &ma);
	ok(err == EINVAL, "ibv_modify_cq cq_period 4096 us > 4095: %s", strerror(err));
	ma.moderate.cq_period = 0;
	err = ibv_modify_cq(cq, &ma);
	ok(!err, "ibv_modify_cq cq_count 2, cq_period 0: %s", strerror(err));

	a = make_qp(e, IBV_QPT_RC, cq);
	b = make_qp(e, IBV_QPT_RC, e->rcq);
	err = connect_qp(e, a, b->qp_num) ?: connect_qp(e, b, a->qp_num);
	ok(!err, "moderation: QP pair connected: %s", strerror(err));
	if (err)
		bail("connect");
	ibv_req_notify_cq(cq, 0);
	err = post_write(e, a, 1, e->mr->rkey);
	n = err ? -1 : poll_one(cq, &wc);
	ok(n == 1 && wc.status == IBV_WC_SUCCESS, "moderation: first write completed");
	ok(!cq_event_within(ch, 200), "moderation: no event for 1 completion of 2 (200 ms)");
	err = post_write(e, a, 2, e->mr->rkey);
	n = err ? -1 : poll_one(cq, &wc);
	ok(n == 1 && wc.status == IBV_WC_SUCCESS, "moderation: second write completed");
	ok(cq_event_within(ch, 5000), "moderation: the second completion raises the event");
	ma.moderate.cq_count = 0;
	err = ibv_modify_cq(cq, &ma);
	ibv_req_notify_cq(cq, 0);
	err = err ?: post_write(e, a, 3, e->mr->rkey);
	n = err ? -1 : poll_one(cq, &wc);
	ok(n == 1 && cq_event_within(ch, 5000),
	   "moderation off (count 0, period 0): an event for the next completion");
	if (ibv_destroy_qp(a) || ibv_destroy_qp(b) || ibv_destroy_cq(cq) ||
	    ibv_destroy_comp_channel(ch))
		ok(0, "moderation: destroy: %s", strerror(errno));
	drain(e->rcq);
}

int main(void)
{
	const struct bad_case cases[] = {
		{ "DS count 0", IBV_QPT_RC,
		  { VCX_OPCODE_SEND, 0, false, 0, 0, true }, IBV_WC_LOC_QP_OP_ERR, false },
		{ "DS count larger than the SQ", IBV_QPT_RC,
		  { VCX_OPCODE_SEND, 0, false, 0, 0, true }, IBV_WC_LOC_QP_OP_ERR, true },
		{ "RDMA write without its remote address segment (DS 1)", IBV_QPT_RC,
		  { VCX_OPCODE_RDMA_WRITE, 1, false, 0, 0, false }, IBV_WC_LOC_QP_OP_ERR,
		  false },
		{ "SEND with an lkey that does not exist", IBV_QPT_RC,
		  { VCX_OPCODE_SEND, 2, false, 0, 0, true }, IBV_WC_LOC_PROT_ERR, false },
		{ "RDMA_READ on a UC QP", IBV_QPT_UC,
		  { VCX_OPCODE_RDMA_READ, 3, true, 0, 0, true }, IBV_WC_LOC_QP_OP_ERR, false },
		{ "undefined opcode 0x3f on RC", IBV_QPT_RC,
		  { 0x3f, 2, false, 0, 0, true }, IBV_WC_LOC_QP_OP_ERR, false },
		{ "LOCAL_INVAL (0x1b, not implemented) on RC", IBV_QPT_RC,
		  { VCX_OPCODE_LOCAL_INVAL, 2, false, 0, 0, true }, IBV_WC_LOC_QP_OP_ERR,
		  false },
		{ "RDMA write with an rkey that does not exist", IBV_QPT_RC,
		  { VCX_OPCODE_RDMA_WRITE, 3, true, 0, 0, true }, IBV_WC_REM_ACCESS_ERR, false },
	};
	struct env e = { 0 };
	unsigned int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	e.ctx = tap_open_device(DEV_NAME);
	if (ibv_query_device_ex(e.ctx, NULL, &e.dattr))
		bail("ibv_query_device_ex");
	e.gid_index = tap_roce_v2_gid(e.ctx, &e.gid);
	if (e.gid_index < 0) {
		printf("Bail out! no RoCE v2 GID on %s port 1\n", DEV_NAME);
		return 2;
	}
	printf("# %s port 1, RoCE v2 GID index %d\n", DEV_NAME, e.gid_index);
	e.pd = ibv_alloc_pd(e.ctx);
	if (!e.pd)
		bail("ibv_alloc_pd");
	if (posix_memalign((void **)&e.buf, 4096, BUF_SIZE))
		bail("posix_memalign");
	memset(e.buf, 0x5a, BUF_SIZE);
	e.mr = ibv_reg_mr(e.pd, e.buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!e.mr)
		bail("ibv_reg_mr");
	e.scq = ibv_create_cq(e.ctx, 64, NULL, NULL, 0);
	e.rcq = ibv_create_cq(e.ctx, 64, NULL, NULL, 0);
	if (!e.scq || !e.rcq)
		bail("ibv_create_cq");

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct bad_case c = cases[i];

		/* Keys that name no mkey: the MR's key with another index byte. */
		if (c.status == IBV_WC_LOC_PROT_ERR)
			c.w.lkey = e.mr->lkey ^ 0x100;
		if (c.status == IBV_WC_REM_ACCESS_ERR)
			c.w.rkey = e.mr->rkey ^ 0x100;
		run_case(&e, &c);
	}
	flush_in_err(&e);
	bad_verbs(&e);
	cq_moderation(&e);

	ibv_destroy_cq(e.scq);
	ibv_destroy_cq(e.rcq);
	ibv_dereg_mr(e.mr);
	ibv_dealloc_pd(e.pd);
	ibv_close_device(e.ctx);
	free(e.buf);
	return tap_done();
}
