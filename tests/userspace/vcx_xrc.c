// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vcx_xrc: XRC on vcx_0 through libibverbs, the provider and vcx.ko (docs/testing.md).
 *
 * An XRC_SEND QP connected in loopback on port 1 (RoCE v2) to an XRC_RECV QP of domain 1:
 * - limits: XRC SRQs with max_wr, max_sge or srq_limit beyond the device's, and a modify
 *   to a limit >= max_wr, are EINVAL;
 * - traffic: SENDs (with and without immediate) naming an XRC SRQ of domain 1 arrive on
 *   that SRQ's CQ with the target's QP number and the SRQ's WQE; an RDMA WRITE through the
 *   target writes memory of the SRQ's PD; every payload compared byte for byte;
 * - the SRQ limit event of an XRC SRQ;
 * - a SEND naming an SRQ of domain 2: the requester completes with
 *   IBV_WC_REM_INV_REQ_ERR and is in ERR, the target is in ERR with IBV_EVENT_QP_REQ_ERR,
 *   the SRQ of domain 2 gets no completion and its buffer is untouched;
 * - ibv_close_xrcd while an SRQ or a target QP uses the domain: EBUSY;
 * - a target created by this process and opened (ibv_open_qp) by a second one through
 *   the domain's file: the creator destroys its handle, the device keeps the QP (its
 *   `state` qps count does not drop), the second process still receives into its own
 *   SRQ of the domain, and the count drops when it closes the last handle.
 * Output is TAP; the exit status is non-zero on any failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "tap.h"

#define DEV_NAME "vcx_0"
#define MSG 1024
#define BUF_SIZE 0x10000

struct env {
	struct ibv_context *ctx;
	struct ibv_device_attr_ex dattr;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct ibv_cq *cq;		/* the initiator's sends */
	int gid_index;
	union ibv_gid gid;
};

static void open_env(struct env *e)
{
	memset(e, 0, sizeof(*e));
	e->ctx = tap_open_device(DEV_NAME);
	if (ibv_query_device_ex(e->ctx, NULL, &e->dattr))
		bail("ibv_query_device_ex");
	e->gid_index = tap_roce_v2_gid(e->ctx, &e->gid);
	if (e->gid_index < 0)
		bail("no RoCE v2 GID");
	e->pd = ibv_alloc_pd(e->ctx);
	if (!e->pd)
		bail("ibv_alloc_pd");
	if (posix_memalign((void **)&e->buf, 4096, BUF_SIZE))
		bail("posix_memalign");
	memset(e->buf, 0, BUF_SIZE);
	e->mr = ibv_reg_mr(e->pd, e->buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!e->mr)
		bail("ibv_reg_mr");
	e->cq = ibv_create_cq(e->ctx, 64, NULL, NULL, 0);
	if (!e->cq)
		bail("ibv_create_cq");
}

static void close_env(struct env *e)
{
	ibv_destroy_cq(e->cq);
	ibv_dereg_mr(e->mr);
	ibv_dealloc_pd(e->pd);
	ibv_close_device(e->ctx);
	free(e->buf);
}

/* A domain on a file, so that other processes opening the file share it. */
static struct ibv_xrcd *open_xrcd(struct env *e, const char *path)
{
	struct ibv_xrcd_init_attr a = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.oflags = O_CREAT,
	};
	struct ibv_xrcd *x;

	a.fd = open(path, O_RDONLY | O_CREAT, S_IRUSR | S_IRGRP);
	if (a.fd < 0)
		bail(path);
	x = ibv_open_xrcd(e->ctx, &a);
	if (!x)
		bail("ibv_open_xrcd");
	close(a.fd);	/* the kernel holds the inode */
	return x;
}

static struct ibv_srq *xsrq(struct env *e, struct ibv_xrcd *x, struct ibv_cq *cq,
			    uint32_t max_wr, uint32_t max_sge, uint32_t limit)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = max_wr, .max_sge = max_sge, .srq_limit = limit },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC,
		.pd = e->pd,
		.xrcd = x,
		.cq = cq,
	};

	return ibv_create_srq_ex(e->ctx, &a);
}

static uint32_t srq_num(struct ibv_srq *srq)
{
	uint32_t n = 0;

	if (ibv_get_srq_num(srq, &n))
		bail("ibv_get_srq_num");
	return n;
}

static struct ibv_qp *make_tgt(struct env *e, struct ibv_xrcd *x)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
		.xrcd = x,
	};

	return ibv_create_qp_ex(e->ctx, &a);
}

static struct ibv_qp *make_ini(struct env *e)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_XRC_SEND,
		.send_cq = e->cq,
		.cap = { .max_send_wr = 16, .max_send_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = e->pd,
	};

	return ibv_create_qp_ex(e->ctx, &a);
}

static int to_init(struct ibv_qp *qp, int access)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
		.qp_access_flags = access,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			     IBV_QP_ACCESS_FLAGS);
}

/* INIT to RTR towards dqpn on this port's own GID (loopback), and RTS for initiators. */
static int to_rtr_rts(struct env *e, struct ibv_qp *qp, uint32_t dqpn, bool rts)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = dqpn,
		.rq_psn = 0,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = {
			.is_global = 1,
			.grh = { .dgid = e->gid, .sgid_index = e->gid_index, .hop_limit = 64 },
			.port_num = 1,
		},
	};
	int err;

	/* responder attributes are the target's: an initiator's RTR takes none */
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    (rts ? 0 : IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER));
	if (err || !rts)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* Initiator to RTS and target to RTR, each naming the other. */
static int connect_pair(struct env *e, struct ibv_qp *ini, struct env *te, struct ibv_qp *tgt)
{
	int err;

	err = to_init(ini, 0);
	if (!err)
		err = to_init(tgt, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!err)
		err = to_rtr_rts(te, tgt, ini->qp_num, false);
	if (!err)
		err = to_rtr_rts(e, ini, tgt->qp_num, true);
	return err;
}

static int post_srq(struct env *e, struct ibv_srq *srq, uint64_t wr_id, uint32_t off)
{
	struct ibv_sge sge = { (uintptr_t)e->buf + off, MSG, e->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_srq_recv(srq, &wr, &bad);
}

static int post_xrc(struct env *e, struct ibv_qp *ini, enum ibv_wr_opcode op, uint32_t srqn,
		    uint64_t wr_id, uint32_t off, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)e->buf + off, MSG, e->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;

	wr.qp_type.xrc.remote_srqn = srqn;
	if (op == IBV_WR_SEND_WITH_IMM)
		wr.imm_data = htobe32(0x12345600 | (uint32_t)wr_id);
	if (op == IBV_WR_RDMA_WRITE) {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return ibv_post_send(ini, &wr, &bad);
}

/* One CQE within 5 s: 1, 0 on timeout, -1 on a poll error. */
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

static void fill(uint8_t *p, uint8_t seed)
{
	int i;

	for (i = 0; i < MSG; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

static bool same(const uint8_t *a, const uint8_t *b)
{
	return !memcmp(a, b, MSG);
}

static bool all_bytes(const uint8_t *p, uint8_t v)
{
	int i;

	for (i = 0; i < MSG; i++)
		if (p[i] != v)
			return false;
	return true;
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return (enum ibv_qp_state)-1;
	return a.qp_state;
}

/* Wait up to 3 s for an async event of this type (others are acknowledged and noted). */
static bool wait_event(struct ibv_context *ctx, enum ibv_event_type type, void *element)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	int flags = fcntl(ctx->async_fd, F_GETFL);
	struct ibv_async_event ev;
	bool found = false;
	int i;

	fcntl(ctx->async_fd, F_SETFL, flags | O_NONBLOCK);
	for (i = 0; i < 30 && !found; i++) {
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		while (!ibv_get_async_event(ctx, &ev)) {
			if (ev.event_type == type &&
			    (ev.element.qp == element || ev.element.srq == element))
				found = true;
			else
				printf("# async event %s\n", ibv_event_type_str(ev.event_type));
			ibv_ack_async_event(&ev);
		}
	}
	fcntl(ctx->async_fd, F_SETFL, flags);
	return found;
}

/* The device's qps=N from its `state` over the monitor, -1 if unreadable. */
static int device_qps(void)
{
	FILE *f = popen("images/vcx-hostcall hmp 'qom-get /machine/peripheral/vcx0 state'",
			"r");
	char line[4096], *p;
	int n = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		p = strstr(line, " qps=");
		if (p)
			n = atoi(p + 5);
	}
	pclose(f);
	return n;
}

static void test_limits(struct env *e, struct ibv_xrcd *x, struct ibv_cq *cq)
{
	struct ibv_device_attr *d = &e->dattr.orig_attr;
	struct ibv_srq_attr sa = {};
	struct ibv_srq *srq;

	srq = xsrq(e, x, cq, d->max_srq_wr + 1, 1, 0);
	ok(!srq && errno == EINVAL, "XRC SRQ max_wr %d > max_srq_wr: %s", d->max_srq_wr + 1,
	   srq ? "created" : strerror(errno));
	srq = xsrq(e, x, cq, 8, d->max_srq_sge + 1, 0);
	ok(!srq && errno == EINVAL, "XRC SRQ max_sge %d > max_srq_sge: %s",
	   d->max_srq_sge + 1, srq ? "created" : strerror(errno));
	srq = xsrq(e, x, cq, 8, 1, 8);
	ok(!srq && errno == EINVAL, "XRC SRQ srq_limit 8 >= max_wr 8: %s",
	   srq ? "created" : strerror(errno));
	srq = xsrq(e, x, cq, 8, 1, 0);
	if (!srq)
		bail("XRC SRQ of 8");
	sa.srq_limit = 1000000;
	errno = ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT);
	ok(errno == EINVAL, "modify XRC SRQ srq_limit 1000000 >= max_wr: %s", strerror(errno));
	sa.srq_limit = 3;
	ok(!ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT), "modify XRC SRQ srq_limit 3");
	memset(&sa, 0, sizeof(sa));
	errno = ibv_query_srq(srq, &sa);
	ok(!errno && sa.srq_limit == 3 && sa.max_wr >= 8, "query XRC SRQ: %s, limit %u max_wr %u",
	   strerror(errno), sa.srq_limit, sa.max_wr);
	ok(!ibv_destroy_srq(srq), "destroy XRC SRQ");
}

static void test_traffic(struct env *e, struct ibv_xrcd *x1, struct ibv_xrcd *x2)
{
	struct ibv_cq *rcq1 = ibv_create_cq(e->ctx, 64, NULL, NULL, 0);
	struct ibv_cq *rcq2 = ibv_create_cq(e->ctx, 64, NULL, NULL, 0);
	struct ibv_srq *srq1, *srq2;
	struct ibv_qp *ini, *tgt;
	uint8_t want[MSG];
	struct ibv_wc wc;
	int i, n, err;

	if (!rcq1 || !rcq2)
		bail("ibv_create_cq");
	test_limits(e, x1, rcq1);
	srq1 = xsrq(e, x1, rcq1, 16, 1, 0);
	srq2 = xsrq(e, x2, rcq2, 16, 1, 0);
	ok(srq1 && srq2, "XRC SRQs in domains 1 and 2: numbers 0x%x 0x%x",
	   srq1 ? srq_num(srq1) : 0, srq2 ? srq_num(srq2) : 0);
	if (!srq1 || !srq2)
		bail("ibv_create_srq_ex");
	tgt = make_tgt(e, x1);
	ini = make_ini(e);
	ok(tgt && ini, "XRC_RECV 0x%x in domain 1, XRC_SEND 0x%x", tgt ? tgt->qp_num : 0,
	   ini ? ini->qp_num : 0);
	if (!tgt || !ini)
		bail("ibv_create_qp_ex");
	err = connect_pair(e, ini, e, tgt);
	ok(!err, "XRC_SEND to RTS, XRC_RECV to RTR: %s", strerror(err));
	if (err)
		bail("connect");

	/* SENDs into SRQ 1: 8 KiB steps, sources at 0x8000 */
	for (i = 0; i < 4; i++)
		if (post_srq(e, srq1, 100 + i, 0x1000 * i))
			bail("ibv_post_srq_recv");
	for (i = 0; i < 3; i++) {
		fill(e->buf + 0x8000 + 0x1000 * i, (uint8_t)(0x10 * (i + 1)));
		if (post_xrc(e, ini, i == 1 ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND, srq_num(srq1),
			     i, 0x8000 + 0x1000 * i, 0, 0))
			bail("ibv_post_send");
		n = poll_one(e->cq, &wc);
		ok(n == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == (uint64_t)i &&
		   wc.opcode == IBV_WC_SEND,
		   "XRC %s %d: requester CQE status %s", i == 1 ? "SEND_WITH_IMM" : "SEND", i,
		   n == 1 ? ibv_wc_status_str(wc.status) : "none");
		n = poll_one(rcq1, &wc);
		ok(n == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == (uint64_t)(100 + i) &&
		   wc.opcode == IBV_WC_RECV && wc.byte_len == MSG && wc.qp_num == tgt->qp_num &&
		   wc.src_qp == ini->qp_num &&
		   (i != 1 || ((wc.wc_flags & IBV_WC_WITH_IMM) &&
			       be32toh(wc.imm_data) == (0x12345600u | (uint32_t)i))),
		   "receive %d on SRQ 1's CQ: status %s wr_id %" PRIu64 " qp 0x%x src 0x%x len %u",
		   i, n == 1 ? ibv_wc_status_str(wc.status) : "none", wc.wr_id, wc.qp_num,
		   wc.src_qp, wc.byte_len);
		ok(same(e->buf + 0x1000 * i, e->buf + 0x8000 + 0x1000 * i),
		   "receive %d: %d bytes equal to the sent ones", i, MSG);
	}
	/* RDMA WRITE through the target: memory of the SRQ's PD */
	fill(e->buf + 0xb000, 0x5a);
	memset(e->buf + 0xc000, 0, MSG);
	if (post_xrc(e, ini, IBV_WR_RDMA_WRITE, srq_num(srq1), 7, 0xb000,
		     (uintptr_t)e->buf + 0xc000, e->mr->rkey))
		bail("ibv_post_send");
	n = poll_one(e->cq, &wc);
	ok(n == 1 && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_WRITE,
	   "XRC RDMA WRITE: %s", n == 1 ? ibv_wc_status_str(wc.status) : "no CQE");
	ok(same(e->buf + 0xc000, e->buf + 0xb000), "RDMA WRITE: %d bytes written", MSG);

	/* the limit event: one WQE left on SRQ 1, limit armed at 2 */
	{
		struct ibv_srq_attr sa = { .srq_limit = 2 };

		ok(!ibv_modify_srq(srq1, &sa, IBV_SRQ_LIMIT), "arm XRC SRQ 1 limit 2");
		fill(e->buf + 0x8000, 0x77);
		post_xrc(e, ini, IBV_WR_SEND, srq_num(srq1), 8, 0x8000, 0, 0);
		n = poll_one(e->cq, &wc);
		ok(n == 1 && wc.status == IBV_WC_SUCCESS, "fourth SEND: %s",
		   n == 1 ? ibv_wc_status_str(wc.status) : "no CQE");
		n = poll_one(rcq1, &wc);
		ok(n == 1 && wc.status == IBV_WC_SUCCESS && same(e->buf + 0x3000, e->buf + 0x8000),
		   "fourth receive, bytes equal");
		ok(wait_event(e->ctx, IBV_EVENT_SRQ_LIMIT_REACHED, srq1),
		   "IBV_EVENT_SRQ_LIMIT_REACHED for XRC SRQ 1");
	}

	/* a SEND naming domain 2's SRQ through domain 1's target */
	memset(e->buf + 0x6000, 0xaa, MSG);
	if (post_srq(e, srq2, 200, 0x6000))
		bail("ibv_post_srq_recv");
	fill(e->buf + 0x8000, 0x33);
	if (post_xrc(e, ini, IBV_WR_SEND, srq_num(srq2), 9, 0x8000, 0, 0))
		bail("ibv_post_send");
	n = poll_one(e->cq, &wc);
	ok(n == 1 && wc.status == IBV_WC_REM_INV_REQ_ERR && wc.wr_id == 9,
	   "SEND to an SRQ of another domain: %s (expected %s)",
	   n == 1 ? ibv_wc_status_str(wc.status) : "no CQE",
	   ibv_wc_status_str(IBV_WC_REM_INV_REQ_ERR));
	ok(qp_state(ini) == IBV_QPS_ERR, "XRC_SEND in ERR (state %d)", qp_state(ini));
	ok(wait_event(e->ctx, IBV_EVENT_QP_REQ_ERR, tgt), "IBV_EVENT_QP_REQ_ERR for the target");
	ok(qp_state(tgt) == IBV_QPS_ERR, "XRC_RECV in ERR (state %d)", qp_state(tgt));
	usleep(200000);
	ok(ibv_poll_cq(rcq2, 1, &wc) == 0, "no completion on domain 2's SRQ CQ");
	ok(all_bytes(e->buf + 0x6000, 0xaa), "domain 2's receive buffer untouched");
	memcpy(want, e->buf + 0x6000, MSG);

	/* the domains are busy while an SRQ or a target QP uses them */
	errno = ibv_close_xrcd(x2);
	ok(errno == EBUSY, "close domain 2 with its SRQ: %s", strerror(errno));
	ok(!ibv_destroy_srq(srq2), "destroy SRQ 2");
	ok(!ibv_destroy_srq(srq1), "destroy SRQ 1");
	errno = ibv_close_xrcd(x1);
	ok(errno == EBUSY, "close domain 1 with its target QP: %s", strerror(errno));
	ok(!ibv_destroy_qp(ini), "destroy XRC_SEND");
	ok(!ibv_destroy_qp(tgt), "destroy XRC_RECV");
	ok(!ibv_close_xrcd(x2), "close domain 2");
	ok(!ibv_close_xrcd(x1), "close domain 1");
	ibv_destroy_cq(rcq1);
	ibv_destroy_cq(rcq2);
}

/* The second process: opens the target, receives into its own SRQ of the domain. */
static int child_main(int rd, int wr, const char *path)
{
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_type = IBV_QPT_XRC_RECV,
	};
	struct ibv_srq *srq;
	struct ibv_xrcd *x;
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	struct ibv_wc wc;
	uint32_t msg[2];
	uint8_t res = 1;
	struct env e;
	int n;

	open_env(&e);
	x = open_xrcd(&e, path);
	cq = ibv_create_cq(e.ctx, 16, NULL, NULL, 0);
	srq = cq ? xsrq(&e, x, cq, 8, 1, 0) : NULL;
	if (!srq || post_srq(&e, srq, 300, 0))
		bail("child: SRQ");
	if (read(rd, &oa.qp_num, 4) != 4)
		bail("child: read qpn");
	oa.xrcd = x;
	qp = ibv_open_qp(e.ctx, &oa);
	msg[0] = qp ? srq_num(srq) : 0;
	msg[1] = qp ? 0 : (uint32_t)errno;
	if (write(wr, msg, sizeof(msg)) != sizeof(msg))
		bail("child: write");
	if (!qp)
		return 1;
	/* the creator destroys its handle and sends; this process receives */
	n = poll_one(cq, &wc);
	if (n == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == 300 &&
	    wc.qp_num == oa.qp_num && wc.byte_len == MSG) {
		uint8_t want[MSG];

		fill(want, 0x42);
		res = same(e.buf, want) ? 0 : 2;
	} else {
		res = n == 1 ? 3 : 4;
	}
	if (write(wr, &res, 1) != 1 || read(rd, msg, 1) != 1)
		bail("child: sync");
	/* the last handle: the kernel destroys the QP now */
	if (ibv_destroy_qp(qp))
		res = 5;
	if (write(wr, &res, 1) != 1 || read(rd, msg, 1) != 1)
		bail("child: sync");
	ibv_destroy_srq(srq);
	ibv_destroy_cq(cq);
	ibv_close_xrcd(x);
	close_env(&e);
	return res;
}

static void test_shared_target(const char *path)
{
	int to_child[2], to_parent[2], status, q0, q1, q2, n;
	struct ibv_qp *ini, *tgt;
	struct ibv_xrcd *x;
	uint32_t msg[2], qpn;
	struct ibv_wc wc;
	struct env e;
	uint8_t res;
	pid_t pid;

	if (pipe(to_child) || pipe(to_parent))
		bail("pipe");
	/* before any verbs object exists in this process */
	pid = fork();
	if (pid < 0)
		bail("fork");
	if (!pid) {
		close(to_child[1]);
		close(to_parent[0]);
		_exit(child_main(to_child[0], to_parent[1], path));
	}
	close(to_child[0]);
	close(to_parent[1]);
	open_env(&e);
	x = open_xrcd(&e, path);
	tgt = make_tgt(&e, x);
	ini = make_ini(&e);
	if (!tgt || !ini || connect_pair(&e, ini, &e, tgt))
		bail("shared target: QPs");
	qpn = tgt->qp_num;
	if (write(to_child[1], &qpn, 4) != 4 || read(to_parent[0], msg, sizeof(msg)) !=
	    sizeof(msg))
		bail("parent: sync");
	ok(msg[0] != 0, "second process: ibv_open_qp of target 0x%x: %s, its SRQ 0x%x", qpn,
	   msg[0] ? "ok" : strerror((int)msg[1]), msg[0]);
	if (!msg[0]) {
		waitpid(pid, &status, 0);
		return;
	}
	q0 = device_qps();
	ok(!ibv_destroy_qp(tgt), "creator destroys its target handle");
	q1 = device_qps();
	ok(q0 > 0 && q1 == q0, "device qps %d before, %d after: the QP lives on", q0, q1);
	fill(e.buf + 0x8000, 0x42);
	if (post_xrc(&e, ini, IBV_WR_SEND, msg[0], 11, 0x8000, 0, 0))
		bail("ibv_post_send");
	n = poll_one(e.cq, &wc);
	ok(n == 1 && wc.status == IBV_WC_SUCCESS,
	   "SEND to the second process's SRQ through the opened target: %s",
	   n == 1 ? ibv_wc_status_str(wc.status) : "no CQE");
	if (read(to_parent[0], &res, 1) != 1)
		bail("parent: sync");
	ok(res == 0, "second process received it on its SRQ, bytes equal (result %u)", res);
	ok(!ibv_destroy_qp(ini), "destroy XRC_SEND");
	q1 = device_qps();
	if (write(to_child[1], &res, 1) != 1 || read(to_parent[0], &res, 1) != 1)
		bail("parent: sync");
	q2 = device_qps();
	ok(res == 0 && q2 == q1 - 1, "second process closes the last handle: device qps %d -> %d",
	   q1, q2);
	if (write(to_child[1], &res, 1) != 1)
		bail("parent: sync");
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "second process exit status %d",
	   WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	ok(!ibv_close_xrcd(x), "close the shared domain");
	close_env(&e);
}

int main(void)
{
	struct ibv_xrcd *x1, *x2;
	struct env e;

	open_env(&e);
	ok(e.dattr.orig_attr.device_cap_flags & IBV_DEVICE_XRC, "device offers XRC");
	x1 = open_xrcd(&e, "/tmp/vcx-xrc-1");
	x2 = open_xrcd(&e, "/tmp/vcx-xrc-2");
	ok(x1 && x2, "two XRC domains");
	test_traffic(&e, x1, x2);
	close_env(&e);
	test_shared_target("/tmp/vcx-xrc-3");
	return tap_done();
}
