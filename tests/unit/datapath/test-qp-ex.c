// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Extended QPs through the provider's ops table: create_qp_ex's comp_mask, create flag
 * and send_ops_flags handling, and the ibv_wr_* API (rdma-core-provider/sq_wr.c), whose
 * WQEs are compared byte for byte with post_send's for the same requests, run through
 * the device model with payload checks, and checked for rollback on wr_abort and on every
 * error wr_complete reports. Part of the harness of test-datapath.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAP_SHARED_STATE
#include "../tap.h"
#include "harness.h"
#include "model.h"
#include "vcx.h"
#include "vcx/prm-wqe.h"

extern unsigned int ex2_calls;

#define RC_OPS	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
		 IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_RDMA_WRITE | \
		 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ | \
		 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)

/* An extended QP with make_qp's capabilities; comp_mask PD | SEND_OPS_FLAGS. */
static struct ibv_qp *make_qp_ex(enum ibv_qp_type type, struct ibv_cq *scq, struct ibv_cq *rcq,
				 uint32_t nsend, uint32_t nrecv, uint64_t ops)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = scq, .recv_cq = rcq, .qp_type = type,
		.cap = { .max_send_wr = nsend, .max_recv_wr = nrecv,
			 .max_send_sge = 4, .max_recv_sge = 4, .max_inline_data = 64 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd, .send_ops_flags = ops,
	};

	return OPS->create_qp_ex(ctx, &a);
}

static struct ibv_qp_ex *qpx_of(struct ibv_qp *qp)
{
	struct verbs_qp *vqp = &to_vcx_qp(qp)->vqp;

	/* What libibverbs' ibv_qp_to_qp_ex() does. */
	return vqp->comp_mask & VERBS_QP_EX ? &vqp->qp_ex : NULL;
}

static int live_dev_qps(void)
{
	int i, n = 0;

	for (i = 0; i < DEV_MAX_OBJ; i++)
		n += dev.qp[i].valid;
	return n;
}

/* create_qp_ex(attr) must fail with errno want, without leaving a QP in the kernel. */
static void expect_create_fail(struct ibv_qp_init_attr_ex *a, int want, const char *name)
{
	int before = live_dev_qps();
	struct ibv_qp *qp;

	errno = 0;
	qp = OPS->create_qp_ex(ctx, a);
	if (!tap_ok(!qp && errno == want && live_dev_qps() == before, name)) {
		printf("# qp %p errno %d, want %d\n", (void *)qp, errno, want);
		if (qp)
			OPS->destroy_qp(qp);
	}
}

void test_create_qp_ex(void)
{
	struct ibv_cq *cq = make_cq(16);
	struct ibv_qp_init_attr_ex a;
	struct ibv_qp_ex *qpx;
	struct ibv_qp *qp;
	unsigned int ex2_before;
	static const struct {
		enum ibv_qp_type type;
		uint64_t ops;
		const char *name;
	} refused_ops[] = {
		{ IBV_QPT_UD, IBV_QP_EX_WITH_RDMA_WRITE, "UD: RDMA_WRITE" },
		{ IBV_QPT_UD, IBV_QP_EX_WITH_SEND_WITH_INV, "UD: SEND_WITH_INV" },
		{ IBV_QPT_UD, IBV_QP_EX_WITH_TSO, "UD: TSO" },
		{ IBV_QPT_UC, IBV_QP_EX_WITH_RDMA_READ, "UC: RDMA_READ" },
		{ IBV_QPT_UC, IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD, "UC: FETCH_AND_ADD" },
		{ IBV_QPT_UC, IBV_QP_EX_WITH_SEND_WITH_INV, "UC: SEND_WITH_INV" },
		{ IBV_QPT_UD, IBV_QP_EX_WITH_BIND_MW, "UD: BIND_MW" },
		{ IBV_QPT_UD, IBV_QP_EX_WITH_LOCAL_INV, "UD: LOCAL_INV" },
		{ IBV_QPT_RC, IBV_QP_EX_WITH_FLUSH, "RC: FLUSH" },
		{ IBV_QPT_RC, IBV_QP_EX_WITH_ATOMIC_WRITE, "RC: ATOMIC_WRITE" },
		{ IBV_QPT_RC, IBV_QP_EX_WITH_SEND | (1ull << 40), "RC: an unknown op bit" },
	};
	size_t i;

#define BASE_ATTR(t) (struct ibv_qp_init_attr_ex){ \
		.send_cq = cq, .recv_cq = cq, .qp_type = (t), \
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 }, \
		.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = pd }

	if (!tap_ok(cq && OPS->create_qp_ex, "create_qp_ex: in the ops table"))
		return;

	a = BASE_ATTR(IBV_QPT_RC);
	qp = OPS->create_qp_ex(ctx, &a);
	tap_ok(qp && !qpx_of(qp) && qp->qp_type == IBV_QPT_RC && a.cap.max_send_wr == 4 &&
	       a.cap.max_recv_wr == 4 && a.cap.max_send_sge >= 1,
	       "PD only: a plain RC QP (no qp_ex), caps written back");
	if (qp)
		OPS->destroy_qp(qp);

	a = BASE_ATTR(IBV_QPT_UD);
	a.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
	ex2_before = ex2_calls;
	qp = OPS->create_qp_ex(ctx, &a);
	tap_ok(qp && ex2_calls == ex2_before + 1,
	       "CREATE_FLAGS with no flag: created through the extended command");
	if (qp)
		OPS->destroy_qp(qp);

	a = BASE_ATTR(IBV_QPT_RC);
	a.comp_mask = 0;
	expect_create_fail(&a, EINVAL, "no PD in comp_mask: EINVAL");
	a = BASE_ATTR(IBV_QPT_RC);
	a.comp_mask |= IBV_QP_INIT_ATTR_XRCD;
	expect_create_fail(&a, EINVAL, "XRCD on an RC QP (XRC_RECV only): EINVAL");
	a = BASE_ATTR(IBV_QPT_RC);
	a.comp_mask |= IBV_QP_INIT_ATTR_RX_HASH;
	expect_create_fail(&a, EOPNOTSUPP, "RX_HASH (RSS): EOPNOTSUPP");
	a = BASE_ATTR(IBV_QPT_RC);
	a.comp_mask |= IBV_QP_INIT_ATTR_IND_TABLE;
	expect_create_fail(&a, EOPNOTSUPP, "IND_TABLE: EOPNOTSUPP");
	a = BASE_ATTR(IBV_QPT_UD);
	a.comp_mask |= IBV_QP_INIT_ATTR_MAX_TSO_HEADER;
	a.max_tso_header = 64;
	expect_create_fail(&a, EINVAL, "MAX_TSO_HEADER on UD: EINVAL");
	a = BASE_ATTR(IBV_QPT_RC);
	a.comp_mask |= 1u << 20;
	expect_create_fail(&a, EINVAL, "unknown comp_mask bit: EINVAL");
	a = BASE_ATTR(IBV_QPT_XRC_SEND);
	a.comp_mask |= IBV_QP_INIT_ATTR_XRCD;
	expect_create_fail(&a, EINVAL, "XRCD on an XRC_SEND QP (XRC_RECV only): EINVAL");
	a = BASE_ATTR(IBV_QPT_RAW_PACKET);
	expect_create_fail(&a, EOPNOTSUPP, "raw packet QP: EOPNOTSUPP");
	a = BASE_ATTR(IBV_QPT_UD);
	a.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
	a.create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB;
	expect_create_fail(&a, EOPNOTSUPP, "BLOCK_SELF_MCAST_LB (no multicast): EOPNOTSUPP");
	a.create_flags = IBV_QP_CREATE_SCATTER_FCS;
	expect_create_fail(&a, EOPNOTSUPP, "SCATTER_FCS: EOPNOTSUPP");
	a = BASE_ATTR(IBV_QPT_RC);
	a.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
	a.create_flags = IBV_QP_CREATE_SOURCE_QPN;
	expect_create_fail(&a, EINVAL, "SOURCE_QPN on RC: EINVAL (libmlx5)");
	a.create_flags = 1u << 30;
	expect_create_fail(&a, EINVAL, "unknown create flag: EINVAL");

	for (i = 0; i < sizeof(refused_ops) / sizeof(refused_ops[0]); i++) {
		char name[96];

		a = BASE_ATTR(refused_ops[i].type);
		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = refused_ops[i].ops;
		snprintf(name, sizeof(name), "send_ops_flags %s: EOPNOTSUPP", refused_ops[i].name);
		expect_create_fail(&a, EOPNOTSUPP, name);
	}

	a = BASE_ATTR(IBV_QPT_RC);
	a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	a.send_ops_flags = RC_OPS;
	qp = OPS->create_qp_ex(ctx, &a);
	qpx = qp ? qpx_of(qp) : NULL;
	tap_ok(qpx && qpx->wr_start && qpx->wr_complete && qpx->wr_abort && qpx->wr_send &&
	       qpx->wr_send_imm && qpx->wr_send_inv && qpx->wr_rdma_write &&
	       qpx->wr_rdma_write_imm && qpx->wr_rdma_read && qpx->wr_atomic_cmp_swp &&
	       qpx->wr_atomic_fetch_add && qpx->wr_set_sge && qpx->wr_set_sge_list &&
	       qpx->wr_set_inline_data && qpx->wr_set_inline_data_list && qpx->wr_set_ud_addr,
	       "RC with every RC operation: qp_ex with all builders and setters");
	if (qp)
		OPS->destroy_qp(qp);
	a = BASE_ATTR(IBV_QPT_UD);
	a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	a.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
	qp = OPS->create_qp_ex(ctx, &a);
	tap_ok(qp && qpx_of(qp), "UD with SEND and SEND_WITH_IMM: created");
	if (qp)
		OPS->destroy_qp(qp);
	a = BASE_ATTR(IBV_QPT_UC);
	a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	a.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
			   IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
	qp = OPS->create_qp_ex(ctx, &a);
	tap_ok(qp && qpx_of(qp), "UC with sends and writes: created");
	if (qp)
		OPS->destroy_qp(qp);
#undef BASE_ATTR
	OPS->destroy_cq(cq);
}

/*
 * Compare the SQ rings of two QPs of the same geometry, posted the same requests, one
 * through post_send and one through ibv_wr_*: every byte equal but the QPN of each
 * control segment.
 */
static int same_sq_bytes(struct ibv_qp *posted, struct ibv_qp *wr, const char *name)
{
	struct vcx_qp *qa = to_vcx_qp(posted), *qb = to_vcx_qp(wr);
	size_t len = (size_t)qa->sq.wqe_cnt * VCX_SEND_WQEBB;
	uint8_t *want = malloc(len);
	uint32_t pos;
	int ok;

	if (qa->sq.wqe_cnt != qb->sq.wqe_cnt || qa->sq.cur_post != qb->sq.cur_post ||
	    qa->sq.head != qb->sq.head || qa->dbrec[1] != qb->dbrec[1]) {
		free(want);
		return tap_ok(0, name);
	}
	memcpy(want, (uint8_t *)qa->buf.buf + qa->sq.offset, len);
	for (pos = 0; pos < qa->sq.cur_post;) {
		uint8_t *ctrl = want + (pos & (qa->sq.wqe_cnt - 1)) * VCX_SEND_WQEBB;

		vcx_set(ctrl, VCX_WQE_CTRL_QPN, wr->qp_num);
		pos += vcx_wqe_wqebbs(vcx_get(ctrl, VCX_WQE_CTRL_DS_CNT));
	}
	ok = tap_bytes((uint8_t *)qb->buf.buf + qb->sq.offset, want, len, name);
	free(want);
	return ok;
}

/* The memory both runs of the twin test use, filled the same way before each run. */
#define TW_SRC		(mem + 0x20000)
#define TW_RECV		(mem + 0x21000)	/* 8 receive buffers of 128 bytes */
#define TW_REMOTE	(mem + 0x22000)
#define TW_READ		(mem + 0x23000)
#define TW_ATOMIC	(mem + 0x24000)	/* [0] the target, [1] CS result, [2] FA result */
#define TW_SIZE		0x5000

static void twin_fill(void)
{
	uint64_t *atom = (uint64_t *)TW_ATOMIC;
	int i;

	memset(TW_SRC, 0, TW_SIZE);
	for (i = 0; i < 256; i++)
		TW_SRC[i] = (uint8_t)(i * 7 + 1);
	memcpy(TW_REMOTE + 512, "remote bytes to read back", 25);
	atom[0] = 10;
}

/*
 * Eleven requests covering every RC operation, both gather styles and all flags, as an
 * ibv_send_wr chain (for post_send) and as ibv_wr_* calls (the same requests).
 */
static void twin_chain(struct ibv_send_wr *w, struct ibv_sge *sg)
{
	int i;

	memset(w, 0, 11 * sizeof(*w));
	sg[0] = (struct ibv_sge){ (uintptr_t)TW_SRC, 40, LKEY };
	sg[1] = (struct ibv_sge){ (uintptr_t)(TW_SRC + 100), 0, LKEY };	/* zero length */
	sg[2] = (struct ibv_sge){ (uintptr_t)(TW_SRC + 64), 24, LKEY };
	sg[3] = (struct ibv_sge){ (uintptr_t)TW_READ, 25, LKEY };
	sg[4] = (struct ibv_sge){ (uintptr_t)(TW_ATOMIC + 8), 8, LKEY };
	sg[5] = (struct ibv_sge){ (uintptr_t)(TW_ATOMIC + 16), 8, LKEY };
	sg[6] = (struct ibv_sge){ (uintptr_t)(TW_SRC + 128), 30, 0 };
	sg[7] = (struct ibv_sge){ (uintptr_t)(TW_SRC + 200), 33, 0 };
	for (i = 0; i < 11; i++) {
		w[i].wr_id = 0x1000 + i;
		w[i].next = i < 10 ? &w[i + 1] : NULL;
		w[i].send_flags = IBV_SEND_SIGNALED;
	}
	w[0].opcode = IBV_WR_SEND;			/* 3 SGEs, one of them empty */
	w[0].sg_list = sg;
	w[0].num_sge = 3;
	w[1].opcode = IBV_WR_SEND_WITH_IMM;		/* solicited */
	w[1].send_flags |= IBV_SEND_SOLICITED;
	w[1].imm_data = htobe32(0xa1b2c3d4);
	w[1].sg_list = sg;
	w[1].num_sge = 1;
	w[2].opcode = IBV_WR_SEND_WITH_INV;
	w[2].invalidate_rkey = 0xbeef01;
	w[2].sg_list = sg + 2;
	w[2].num_sge = 1;
	w[3].opcode = IBV_WR_RDMA_WRITE;		/* fenced */
	w[3].send_flags |= IBV_SEND_FENCE;
	w[3].wr.rdma.remote_addr = (uintptr_t)TW_REMOTE;
	w[3].wr.rdma.rkey = RKEY;
	w[3].sg_list = sg;
	w[3].num_sge = 3;
	w[4].opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	w[4].imm_data = htobe32(77);
	w[4].wr.rdma.remote_addr = (uintptr_t)(TW_REMOTE + 256);
	w[4].wr.rdma.rkey = RKEY;
	w[4].sg_list = sg + 2;
	w[4].num_sge = 1;
	w[5].opcode = IBV_WR_RDMA_READ;
	w[5].wr.rdma.remote_addr = (uintptr_t)(TW_REMOTE + 512);
	w[5].wr.rdma.rkey = RKEY;
	w[5].sg_list = sg + 3;
	w[5].num_sge = 1;
	w[6].opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	w[6].wr.atomic.remote_addr = (uintptr_t)TW_ATOMIC;
	w[6].wr.atomic.rkey = RKEY;
	w[6].wr.atomic.compare_add = 10;
	w[6].wr.atomic.swap = 99;
	w[6].sg_list = sg + 4;
	w[6].num_sge = 1;
	w[7].opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	w[7].wr.atomic.remote_addr = (uintptr_t)TW_ATOMIC;
	w[7].wr.atomic.rkey = RKEY;
	w[7].wr.atomic.compare_add = 5;
	w[7].sg_list = sg + 5;
	w[7].num_sge = 1;
	w[8].opcode = IBV_WR_SEND;			/* inline, two buffers */
	w[8].send_flags |= IBV_SEND_INLINE;
	w[8].sg_list = sg + 6;
	w[8].num_sge = 2;
	w[9].opcode = IBV_WR_RDMA_WRITE;		/* inline by flag */
	w[9].send_flags |= IBV_SEND_INLINE;
	w[9].wr.rdma.remote_addr = (uintptr_t)(TW_REMOTE + 1024);
	w[9].wr.rdma.rkey = RKEY;
	w[9].sg_list = sg + 6;
	w[9].num_sge = 2;
	w[10].opcode = IBV_WR_SEND;			/* unsignaled, inline */
	w[10].send_flags = IBV_SEND_INLINE;
	w[10].sg_list = sg + 7;
	w[10].num_sge = 1;
}

static void twin_post_wr(struct ibv_qp_ex *x, const struct ibv_send_wr *w)
{
	struct ibv_data_buf inl[2] = {
		{ (void *)(uintptr_t)w[8].sg_list[0].addr, w[8].sg_list[0].length },
		{ (void *)(uintptr_t)w[8].sg_list[1].addr, w[8].sg_list[1].length },
	};
	int i;

	for (i = 0; i < 11; i++) {
		x->wr_id = w[i].wr_id;
		x->wr_flags = w[i].send_flags;
		switch (i) {
		case 0:
			x->wr_send(x);
			x->wr_set_sge_list(x, 3, w[i].sg_list);
			break;
		case 1:
			x->wr_send_imm(x, w[i].imm_data);
			x->wr_set_sge(x, LKEY, w[i].sg_list[0].addr, w[i].sg_list[0].length);
			break;
		case 2:
			x->wr_send_inv(x, w[i].invalidate_rkey);
			x->wr_set_sge_list(x, 1, w[i].sg_list);
			break;
		case 3:
			x->wr_rdma_write(x, RKEY, w[i].wr.rdma.remote_addr);
			x->wr_set_sge_list(x, 3, w[i].sg_list);
			break;
		case 4:
			x->wr_rdma_write_imm(x, RKEY, w[i].wr.rdma.remote_addr, w[i].imm_data);
			x->wr_set_sge_list(x, 1, w[i].sg_list);
			break;
		case 5:
			x->wr_rdma_read(x, RKEY, w[i].wr.rdma.remote_addr);
			x->wr_set_sge_list(x, 1, w[i].sg_list);
			break;
		case 6:
			x->wr_atomic_cmp_swp(x, RKEY, w[i].wr.atomic.remote_addr, 10, 99);
			x->wr_set_sge_list(x, 1, w[i].sg_list);
			break;
		case 7:
			x->wr_atomic_fetch_add(x, RKEY, w[i].wr.atomic.remote_addr, 5);
			x->wr_set_sge_list(x, 1, w[i].sg_list);
			break;
		case 8:
			x->wr_flags &= ~IBV_SEND_INLINE;	/* the setter says inline */
			x->wr_send(x);
			x->wr_set_inline_data_list(x, 2, inl);
			break;
		case 9:
			x->wr_rdma_write(x, RKEY, w[i].wr.rdma.remote_addr);
			x->wr_set_sge_list(x, 2, w[i].sg_list);
			break;
		case 10:
			x->wr_flags &= ~IBV_SEND_INLINE;
			x->wr_send(x);
			x->wr_set_inline_data(x, (void *)(uintptr_t)w[i].sg_list[0].addr,
					      w[i].sg_list[0].length);
			break;
		}
	}
}

/* Run the twin requests from sender to receiver; the results land in wc and TW_*. */
static int twin_run(struct ibv_qp *sender, struct ibv_qp *receiver, struct ibv_cq *scq,
		    struct ibv_cq *rcq, bool use_wr, struct ibv_wc *swc, struct ibv_wc *rwc)
{
	struct ibv_send_wr w[11], *bad;
	struct ibv_sge sg[8];
	int i, ret, n;

	twin_fill();
	for (i = 0; i < 5; i++)		/* SEND, SEND_IMM, SEND_INV, WRITE_IMM, inline SEND */
		post_recv(receiver, 0x2000 + i, TW_RECV + 128 * i, 128);
	post_recv(receiver, 0x2005, TW_RECV + 128 * 5, 128);	/* the unsignaled SEND */
	twin_chain(w, sg);
	if (use_wr) {
		struct ibv_qp_ex *x = qpx_of(sender);

		x->wr_start(x);
		twin_post_wr(x, w);
		/* The sources may change once the inline setters returned. */
		memset(TW_SRC + 128, 0xee, 128);
		ret = x->wr_complete(x);
	} else {
		ret = OPS->post_send(sender, w, &bad);
	}
	memset(TW_SRC + 128, 0xee, 128);	/* inline data was copied at post time */
	if (ret || dev_run() != 11)
		return -1;
	n = OPS->poll_cq(scq, 16, swc);
	if (n != 10)
		return -1;
	return OPS->poll_cq(rcq, 16, rwc) == 6 ? 0 : -1;
}

void test_wr_twins(void)
{
	struct ibv_cq *scq = make_cq(32), *rcq = make_cq(32);
	struct ibv_qp *a = make_qp(IBV_QPT_RC, scq, rcq, NULL, 16, 16);
	struct ibv_qp *b = make_qp_ex(IBV_QPT_RC, scq, rcq, 16, 16, RC_OPS);
	struct ibv_wc swc_a[16], rwc_a[16], swc_b[16], rwc_b[16];
	uint8_t *after_a = malloc(TW_SIZE);
	uint64_t *atom = (uint64_t *)TW_ATOMIC;
	int i, ok;

	if (!tap_ok(scq && rcq && a && b && qpx_of(b), "twins: RC QP and RC qp_ex QP"))
		return;
	tap_ok(to_vcx_qp(a)->sq.wqe_cnt == to_vcx_qp(b)->sq.wqe_cnt &&
	       to_vcx_qp(a)->sq.max_gs == to_vcx_qp(b)->sq.max_gs &&
	       to_vcx_qp(a)->max_inline_data == to_vcx_qp(b)->max_inline_data,
	       "twins: create_qp and create_qp_ex lay the SQ out the same way");
	connect(a, b);

	/* a posts through post_send to b, then b the same requests through ibv_wr_* to a. */
	tap_ok(twin_run(a, b, scq, rcq, false, swc_a, rwc_a) == 0,
	       "post_send: 11 WRs executed, 10 signaled completions, 6 receives");
	memcpy(after_a, TW_SRC, TW_SIZE);
	tap_ok(twin_run(b, a, scq, rcq, true, swc_b, rwc_b) == 0,
	       "ibv_wr_*: 11 WRs executed, 10 signaled completions, 6 receives");
	same_sq_bytes(a, b, "ibv_wr_* WQEs are byte for byte post_send's (QPN aside)");
	tap_ok(dev.protocol_errors == 0, "twins: doorbell record, doorbell and WQEs well-formed");

	/* Both runs leave exactly the same memory, and it is what the operations do. */
	tap_bytes(TW_SRC, after_a, TW_SIZE, "twins: identical memory after both runs");
	tap_ok(!memcmp(TW_RECV, TW_SRC, 40) && !memcmp(TW_RECV + 40, TW_SRC + 64, 24),
	       "SEND: 3 SGEs (one empty) gathered into the receive buffer");
	tap_ok(!memcmp(TW_REMOTE, TW_SRC, 40) && !memcmp(TW_REMOTE + 40, TW_SRC + 64, 24),
	       "RDMA_WRITE: payload at the remote address");
	tap_ok(!memcmp(TW_READ, "remote bytes to read back", 25), "RDMA_READ: payload read back");
	tap_ok(atom[0] == 104 && atom[1] == 10 && atom[2] == 99,
	       "CS then FA: 10 -> 99 -> 104, old values returned");
	{
		uint8_t want[63];

		for (i = 0; i < 30; i++)
			want[i] = (uint8_t)((128 + i) * 7 + 1);
		for (i = 0; i < 33; i++)
			want[30 + i] = (uint8_t)((200 + i) * 7 + 1);
		tap_ok(!memcmp(TW_RECV + 4 * 128, want, 63) && !memcmp(TW_REMOTE + 1024, want, 63),
		       "inline SEND and inline WRITE: both buffers, copied at post time");
		tap_ok(!memcmp(TW_RECV + 5 * 128, want + 30, 33),
		       "wr_set_inline_data: unsignaled inline SEND delivered");
	}
	ok = 1;
	for (i = 0; i < 10; i++)
		ok &= swc_a[i].wr_id == swc_b[i].wr_id && swc_a[i].opcode == swc_b[i].opcode &&
		      swc_a[i].status == IBV_WC_SUCCESS && swc_b[i].status == IBV_WC_SUCCESS &&
		      swc_a[i].wc_flags == swc_b[i].wc_flags && swc_a[i].wr_id == 0x1000u + i &&
		      /* byte_len is defined for READ and atomics only */
		      (i < 5 || i > 7 || swc_a[i].byte_len == swc_b[i].byte_len);
	tap_ok(ok && swc_b[1].opcode == IBV_WC_SEND && swc_b[5].opcode == IBV_WC_RDMA_READ &&
	       swc_b[5].byte_len == 25 && swc_b[6].opcode == IBV_WC_COMP_SWAP &&
	       swc_b[7].opcode == IBV_WC_FETCH_ADD,
	       "requester completions: wr_id, opcode and flags as post_send's");
	tap_ok(rwc_b[1].wr_id == 0x2001 && (rwc_b[1].wc_flags & IBV_WC_WITH_IMM) &&
	       rwc_b[1].imm_data == htobe32(0xa1b2c3d4) &&
	       (rwc_b[2].wc_flags & IBV_WC_WITH_INV) && rwc_b[2].invalidated_rkey == 0xbeef01 &&
	       rwc_b[3].opcode == IBV_WC_RECV_RDMA_WITH_IMM && rwc_b[3].imm_data == htobe32(77) &&
	       rwc_b[0].byte_len == 64 && rwc_b[4].byte_len == 63 && rwc_b[5].byte_len == 33,
	       "responder completions: immediate, invalidated rkey, lengths");
	free(after_a);
	OPS->destroy_qp(a);
	OPS->destroy_qp(b);
	OPS->destroy_cq(scq);
	OPS->destroy_cq(rcq);
}

/* UD through ibv_wr_*: address before or after the data, compared with post_send. */
void test_wr_ud(void)
{
	struct ibv_cq *cq = make_cq(64);
	struct ibv_qp *a = make_qp(IBV_QPT_UD, cq, cq, NULL, 8, 8);
	struct ibv_qp *b = make_qp_ex(IBV_QPT_UD, cq, cq, 8, 8,
				      IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM);
	struct ibv_qp *r = make_qp(IBV_QPT_UD, cq, cq, NULL, 8, 16);
	struct ibv_ah_attr ah_attr = { .is_global = 1, .port_num = 1, .sl = 2,
				       .grh = { .sgid_index = 1, .hop_limit = 64 } };
	struct ibv_sge sge = { (uintptr_t)(mem + 0x30000), 100, LKEY };
	struct ibv_send_wr w[3], *bad;
	struct ibv_wc wc[8];
	struct ibv_qp_ex *x = NULL;
	struct ibv_ah *ah;
	int i, ok = 1;

	if (!tap_ok(cq && a && b && r && (x = qpx_of(b)), "wr UD: QPs"))
		return;
	memset(ah_attr.grh.dgid.raw, 0x22, 16);
	ah = OPS->create_ah(pd, &ah_attr);
	bring_up(a);
	bring_up(b);
	bring_up(r);
	for (i = 0; i < 100; i++)
		mem[0x30000 + i] = (uint8_t)(0x40 + i);
	memset(w, 0, sizeof(w));
	for (i = 0; i < 3; i++) {
		w[i].wr_id = 0x300 + i;
		w[i].next = i < 2 ? &w[i + 1] : NULL;
		w[i].send_flags = IBV_SEND_SIGNALED;
		w[i].opcode = i == 1 ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
		w[i].imm_data = htobe32(0x5151);
		w[i].sg_list = &sge;
		w[i].num_sge = 1;
		w[i].wr.ud.ah = ah;
		w[i].wr.ud.remote_qpn = r->qp_num;
		w[i].wr.ud.remote_qkey = 0x11111111;
	}
	w[2].send_flags |= IBV_SEND_INLINE;
	for (i = 0; i < 6; i++)
		post_recv(r, 0x400 + i, mem + 0x31000 + 256 * i, 256);
	ok &= OPS->post_send(a, w, &bad) == 0 && dev_run() == 3;
	ok &= OPS->poll_cq(cq, 8, wc) == 6;

	x->wr_start(x);
	x->wr_flags = IBV_SEND_SIGNALED;
	x->wr_id = 0x300;
	x->wr_send(x);					/* pyverbs' order: address, data */
	x->wr_set_ud_addr(x, ah, r->qp_num, 0x11111111);
	x->wr_set_sge(x, LKEY, sge.addr, 100);
	x->wr_id = 0x301;
	x->wr_send_imm(x, htobe32(0x5151));		/* data first, then the address */
	x->wr_set_sge(x, LKEY, sge.addr, 100);
	x->wr_set_ud_addr(x, ah, r->qp_num, 0x11111111);
	x->wr_id = 0x302;
	x->wr_send(x);					/* inline before the address */
	x->wr_set_inline_data(x, mem + 0x30000, 100);
	x->wr_set_ud_addr(x, ah, r->qp_num, 0x11111111);
	ok &= x->wr_complete(x) == 0;
	same_sq_bytes(a, b, "wr UD: WQEs (address vector, qkey, DQPN) equal post_send's");
	ok &= dev_run() == 3;
	ok &= OPS->poll_cq(cq, 8, wc) == 6;
	for (i = 0; i < 6; i++)
		ok &= !memcmp(mem + 0x31000 + 256 * i, mem + 0x30000, 100);
	tap_ok(ok, "wr UD: six datagrams delivered with their payload");
	tap_ok(wc[0].wr_id == 0x400 + 3 && wc[0].src_qp == b->qp_num && wc[0].byte_len == 100 &&
	       wc[1].wr_id == 0x300 && wc[2].wr_id == 0x404 &&
	       (wc[2].wc_flags & IBV_WC_WITH_IMM) && wc[2].imm_data == htobe32(0x5151) &&
	       wc[3].wr_id == 0x301 && wc[5].wr_id == 0x302,
	       "wr UD: completions in order, immediate, source QPN");

	/* Refused on UD: no address, an RC operation. */
	x->wr_start(x);
	x->wr_send(x);
	x->wr_set_sge(x, LKEY, sge.addr, 10);
	tap_ok(x->wr_complete(x) == EINVAL, "wr UD: a send without wr_set_ud_addr: EINVAL");
	x->wr_start(x);
	x->wr_rdma_write(x, RKEY, 0x1000);
	x->wr_set_ud_addr(x, ah, r->qp_num, 1);
	x->wr_set_sge(x, LKEY, sge.addr, 10);
	tap_ok(x->wr_complete(x) == EINVAL && dev_run() == 0, "wr UD: RDMA_WRITE: EINVAL");
	OPS->destroy_ah(ah);
	OPS->destroy_qp(a);
	OPS->destroy_qp(b);
	OPS->destroy_qp(r);
	OPS->destroy_cq(cq);
}

struct sq_state {
	uint32_t cur_post, head, dbrec, bf_offset;
	uint8_t bfreg[512];
};

static void sq_state(struct ibv_qp *qp, struct sq_state *s)
{
	struct vcx_qp *q = to_vcx_qp(qp);

	s->cur_post = q->sq.cur_post;
	s->head = q->sq.head;
	s->dbrec = q->dbrec[1];
	s->bf_offset = q->bfreg->offset;
	memcpy(s->bfreg, q->bfreg->reg, sizeof(s->bfreg));
}

static int same_sq_state(struct ibv_qp *qp, const struct sq_state *before)
{
	struct sq_state now;

	sq_state(qp, &now);
	return !memcmp(&now, before, sizeof(now));
}

/* wr_abort, and every error wr_complete reports, leave the SQ as wr_start found it. */
void test_wr_abort_and_errors(void)
{
	struct ibv_cq *cq = make_cq(32);
	struct ibv_qp *a = make_qp(IBV_QPT_RC, cq, cq, NULL, 4, 8);
	struct ibv_qp *b = make_qp_ex(IBV_QPT_RC, cq, cq, 4, 8, RC_OPS);
	struct ibv_qp *u = make_qp_ex(IBV_QPT_UC, cq, cq, 4, 8, IBV_QP_EX_WITH_RDMA_WRITE);
	struct ibv_qp *v = make_qp(IBV_QPT_UC, cq, cq, NULL, 4, 8);
	uint8_t *src = mem + 0x40000, *dst = mem + 0x41000;
	struct ibv_sge many[8];
	struct ibv_data_buf big[2];
	struct ibv_qp_ex *x = NULL, *ux = NULL;
	struct sq_state st;
	struct ibv_wc wc[8];
	int i, n, ok;

	if (!tap_ok(cq && a && b && u && v && (x = qpx_of(b)) && (ux = qpx_of(u)),
		    "wr errors: QPs"))
		return;
	connect(a, b);
	memset(src, 0x5a, 4096);
	for (i = 0; i < 8; i++)
		many[i] = (struct ibv_sge){ (uintptr_t)src, 8, LKEY };

	/* Abort after three WRs: nothing published, nothing rung, nothing executed. */
	sq_state(b, &st);
	x->wr_start(x);
	for (i = 0; i < 3; i++) {
		x->wr_id = i;
		x->wr_flags = IBV_SEND_SIGNALED;
		x->wr_rdma_write(x, RKEY, (uintptr_t)dst);
		x->wr_set_sge(x, LKEY, (uintptr_t)src, 64);
	}
	x->wr_abort(x);
	tap_ok(same_sq_state(b, &st) && dev_run() == 0 && OPS->poll_cq(cq, 8, wc) == 0,
	       "wr_abort: producer counter, doorbell record and register as before, no work");

	/* The next batch starts at the same WQEBB and runs. */
	memset(dst, 0, 64);
	x->wr_start(x);
	x->wr_id = 55;
	x->wr_flags = IBV_SEND_SIGNALED;
	x->wr_rdma_write(x, RKEY, (uintptr_t)dst);
	x->wr_set_sge(x, LKEY, (uintptr_t)src, 64);
	tap_ok(x->wr_complete(x) == 0 && to_vcx_qp(b)->sq.cur_post == st.cur_post + 1 &&
	       vcx_get((uint8_t *)to_vcx_qp(b)->buf.buf + to_vcx_qp(b)->sq.offset +
		       (st.cur_post & (to_vcx_qp(b)->sq.wqe_cnt - 1)) * 64,
		       VCX_WQE_CTRL_WQE_INDEX) == st.cur_post,
	       "after abort: the next WQE takes the aborted batch's first WQEBB");
	tap_ok(dev_run() == 1 && OPS->poll_cq(cq, 8, wc) == 1 && wc[0].wr_id == 55 &&
	       wc[0].status == IBV_WC_SUCCESS && dst[0] == 0x5a && dst[63] == 0x5a,
	       "after abort: the batch executes, payload written");

	/* Queue full: max_send_wr 4; a fifth WR fails the whole batch. */
	sq_state(b, &st);
	x->wr_start(x);
	for (i = 0; i < 5; i++) {
		x->wr_id = 100 + i;
		x->wr_rdma_write(x, RKEY, (uintptr_t)dst);
		x->wr_set_sge(x, LKEY, (uintptr_t)src, 8);
	}
	tap_ok(x->wr_complete(x) == ENOMEM && same_sq_state(b, &st) && dev_run() == 0,
	       "queue full: wr_complete returns ENOMEM, the batch is dropped");
	x->wr_start(x);
	for (i = 0; i < 4; i++) {
		x->wr_id = 100 + i;
		x->wr_flags = i == 3 ? IBV_SEND_SIGNALED : 0;
		x->wr_rdma_write(x, RKEY, (uintptr_t)dst);
		x->wr_set_sge(x, LKEY, (uintptr_t)src, 8);
	}
	tap_ok(x->wr_complete(x) == 0 && dev_run() == 4 && OPS->poll_cq(cq, 8, wc) == 1 &&
	       wc[0].wr_id == 103, "queue full: four fit, one CQE retires all four");

	/* EINVAL cases; each leaves the SQ untouched. */
#define EXPECT_EINVAL(body, name) do { \
		sq_state(b, &st); \
		x->wr_start(x); \
		x->wr_id = 1; \
		x->wr_flags = 0; \
		x->wr_send(x); \
		x->wr_set_sge(x, LKEY, (uintptr_t)src, 8);	/* a good WR first */ \
		body; \
		x->wr_send(x);					/* and one after */ \
		x->wr_set_sge(x, LKEY, (uintptr_t)src, 8); \
		tap_ok(x->wr_complete(x) == EINVAL && same_sq_state(b, &st) && \
		       dev_run() == 0, name); \
	} while (0)

	EXPECT_EINVAL({ x->wr_send(x);
			x->wr_set_sge_list(x, to_vcx_qp(b)->sq.max_gs + 1, many); },
		      "more SGEs than max_send_sge: EINVAL");
	EXPECT_EINVAL({ x->wr_send(x);
			x->wr_set_inline_data(x, src, to_vcx_qp(b)->max_inline_data + 1); },
		      "inline data longer than max_inline_data: EINVAL");
	big[0] = (struct ibv_data_buf){ src, to_vcx_qp(b)->max_inline_data - 8 };
	big[1] = (struct ibv_data_buf){ src, 9 };
	EXPECT_EINVAL({ x->wr_send(x); x->wr_set_inline_data_list(x, 2, big); },
		      "inline list one byte too long in total: EINVAL");
	EXPECT_EINVAL({ x->wr_rdma_read(x, RKEY, (uintptr_t)dst);
			x->wr_set_inline_data(x, src, 8); },
		      "inline data for an RDMA_READ: EINVAL");
	EXPECT_EINVAL({ x->wr_atomic_fetch_add(x, RKEY, (uintptr_t)dst, 1);
			x->wr_set_sge_list(x, 2, many); },
		      "atomic with two SGEs: EINVAL");
	EXPECT_EINVAL({ x->wr_set_sge(x, LKEY, (uintptr_t)src, 8); },
		      "a second DATA setter for one WR: EINVAL");
	EXPECT_EINVAL({ x->wr_send(x); x->wr_set_ud_addr(x, NULL, 1, 1); },
		      "wr_set_ud_addr on RC: EINVAL");
	EXPECT_EINVAL({ x->wr_local_inv(x, 0x1234); }, "wr_local_inv without device windows: EINVAL");
	EXPECT_EINVAL({ x->wr_bind_mw(x, NULL, 0x1234, NULL); },
		      "wr_bind_mw without device windows: EINVAL");
	EXPECT_EINVAL({ x->wr_flush(x, RKEY, (uintptr_t)dst, 8, 0, 0); }, "wr_flush: EINVAL");
#undef EXPECT_EINVAL
	tap_ok(to_vcx_qp(b)->wr.err == EINVAL && OPS->poll_cq(cq, 8, wc) == 0,
	       "no WR of a failed batch completed");
	x->wr_start(x);
	x->wr_set_sge(x, LKEY, (uintptr_t)src, 8);
	x->wr_send(x);
	x->wr_set_sge(x, LKEY, (uintptr_t)src, 8);
	tap_ok(x->wr_complete(x) == EINVAL && dev_run() == 0,
	       "a setter before any builder: EINVAL");
	x->wr_start(x);
	tap_ok(x->wr_complete(x) == 0 && dev_run() == 0, "an empty batch: 0, no doorbell");

	/* UC: RDMA_READ is an RC operation; the write is carried. */
	connect(u, v);
	ux->wr_start(ux);
	ux->wr_rdma_read(ux, RKEY, (uintptr_t)dst);
	ux->wr_set_sge(ux, LKEY, (uintptr_t)dst, 8);
	tap_ok(ux->wr_complete(ux) == EINVAL && dev_run() == 0, "wr UC: RDMA_READ: EINVAL");
	memset(dst, 0, 64);
	ux->wr_start(ux);
	ux->wr_id = 9;
	ux->wr_flags = IBV_SEND_SIGNALED;
	ux->wr_rdma_write(ux, RKEY, (uintptr_t)dst);
	ux->wr_set_sge(ux, LKEY, (uintptr_t)src, 32);
	n = ux->wr_complete(ux) == 0 && dev_run() == 1;
	ok = n && OPS->poll_cq(cq, 8, wc) == 1 && wc[0].wr_id == 9 &&
	     wc[0].opcode == IBV_WC_RDMA_WRITE && dst[31] == 0x5a && dst[32] == 0;
	tap_ok(ok, "wr UC: RDMA_WRITE executes, 32 bytes written");
	tap_ok(dev.protocol_errors == 0, "wr errors: the device saw only well-formed work");
	OPS->destroy_qp(a);
	OPS->destroy_qp(b);
	OPS->destroy_qp(u);
	OPS->destroy_qp(v);
	OPS->destroy_cq(cq);
}

/* Receives from INIT on, sends from RTS on, neither after RESET (libmlx5's rule). */
void test_post_states(void)
{
	struct ibv_cq *cq = make_cq(16);
	struct ibv_qp *a = make_qp_ex(IBV_QPT_RC, cq, cq, 4, 4, RC_OPS);
	struct ibv_qp *b = make_qp(IBV_QPT_RC, cq, cq, NULL, 4, 4);
	struct ibv_sge sge = { (uintptr_t)mem, 8, LKEY };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND };
	struct ibv_qp_attr attr = {};
	struct ibv_qp_ex *x = NULL;
	struct ibv_wc wc;
	int wr_ret;

	if (!tap_ok(cq && a && b && (x = qpx_of(a)), "states: QPs"))
		return;
	tap_ok(post_recv(a, 1, mem, 8) == EINVAL && post_one(a, &wr) == ENOMEM,
	       "RESET: post_recv EINVAL, post_send ENOMEM");
	x->wr_start(x);
	x->wr_send(x);
	x->wr_set_sge(x, LKEY, (uintptr_t)mem, 8);
	wr_ret = x->wr_complete(x);
	tap_ok(wr_ret == EINVAL && to_vcx_qp(a)->sq.cur_post == 0,
	       "RESET: wr_complete EINVAL, SQ rolled back");
	attr.qp_state = IBV_QPS_INIT;
	OPS->modify_qp(a, &attr, IBV_QP_STATE);
	tap_ok(post_recv(a, 1, mem, 8) == 0 && post_one(a, &wr) == ENOMEM,
	       "INIT: receives accepted, sends not yet");
	attr.qp_state = IBV_QPS_RTR;
	OPS->modify_qp(a, &attr, IBV_QP_STATE);
	tap_ok(post_one(a, &wr) == ENOMEM, "RTR: sends not yet");
	dev_qp(a->qp_num)->peer_qpn = b->qp_num;
	dev_qp(b->qp_num)->peer_qpn = a->qp_num;
	bring_up(b);
	attr.qp_state = IBV_QPS_RTS;
	OPS->modify_qp(a, &attr, IBV_QP_STATE);
	post_recv(b, 2, mem + 4096, 64);
	x->wr_start(x);
	x->wr_id = 3;
	x->wr_flags = IBV_SEND_SIGNALED;
	x->wr_send(x);
	x->wr_set_sge(x, LKEY, (uintptr_t)mem, 8);
	tap_ok(x->wr_complete(x) == 0 && dev_run() == 1 && poll1(cq, &wc) == 1 &&
	       wc.wr_id == 2 && poll1(cq, &wc) == 1 && wc.wr_id == 3,
	       "RTS: the ibv_wr_* send executes");
	attr.qp_state = IBV_QPS_RESET;
	OPS->modify_qp(a, &attr, IBV_QP_STATE);
	tap_ok(post_recv(a, 1, mem, 8) == EINVAL && post_one(a, &wr) == ENOMEM,
	       "back in RESET: both closed again");
	OPS->destroy_qp(a);
	OPS->destroy_qp(b);
	OPS->destroy_cq(cq);
}

/*
 * Two threads posting through ibv_wr_* batches and two through post_send, on one QP: the
 * batch holds the SQ lock from wr_start to wr_complete, so WQEs never interleave.
 */
static void *wr_poster_main(void *arg)
{
	struct poster *p = arg;
	struct ibv_qp_ex *x = qpx_of(p->qp);
	struct ibv_sge sge = { (uintptr_t)mem, 8, LKEY };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE };
	int i;

	wr.wr.rdma.remote_addr = (uintptr_t)(mem + 65536);
	for (i = 0; i < 500; i++) {
		if (p->id & 1) {
			x->wr_start(x);
			x->wr_id = (uint64_t)p->id << 32 | 2 * i;
			x->wr_rdma_write(x, RKEY, (uintptr_t)(mem + 65536));
			x->wr_set_sge(x, LKEY, (uintptr_t)mem, 8);
			x->wr_id++;
			x->wr_rdma_write(x, RKEY, (uintptr_t)(mem + 65536));
			x->wr_set_sge(x, LKEY, (uintptr_t)mem, 8);
			p->failures += x->wr_complete(x) != 0;
		} else {
			struct ibv_send_wr two[2] = { wr, wr }, *bad;

			two[0].next = &two[1];
			two[0].wr_id = (uint64_t)p->id << 32 | 2 * i;
			two[1].wr_id = two[0].wr_id + 1;
			p->failures += OPS->post_send(p->qp, two, &bad) != 0;
		}
	}
	return NULL;
}

void test_wr_threads(void)
{
	struct ibv_cq *cq = make_cq(4096);
	struct ibv_qp *a = make_qp_ex(IBV_QPT_RC, cq, cq, 4000, 16, RC_OPS);
	struct ibv_qp *b = make_qp(IBV_QPT_RC, cq, cq, NULL, 16, 16);
	struct poster p[4];
	pthread_t t[4];
	int i, failures = 0;

	if (!tap_ok(cq && a && b, "wr threads: objects"))
		return;
	connect(a, b);
	for (i = 0; i < 4; i++) {
		p[i] = (struct poster){ .qp = a, .id = i };
		pthread_create(&t[i], NULL, wr_poster_main, &p[i]);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		failures += p[i].failures;
	}
	tap_ok(failures == 0 && to_vcx_qp(a)->sq.cur_post == 4000 &&
	       be32toh(to_vcx_qp(a)->dbrec[1]) == 4000,
	       "wr threads: 2000 WRs through ibv_wr_*, 2000 through post_send, counter exact");
	dev.many_doorbells = true;
	tap_ok(dev_run() == 4000 && dev.protocol_errors == 0,
	       "wr threads: the device executes 4000 intact WQEs");
	dev.many_doorbells = false;
	OPS->destroy_qp(a);
	OPS->destroy_qp(b);
	OPS->destroy_cq(cq);
}

/*
 * Memory windows: BIND_MW and LOCAL_INV through post_send (a) and through wr_bind_mw /
 * wr_local_inv (b) on RC QPs: the UMR WQE bytes of the libmlx5 bind layout, field by
 * field (the mkey segment names each QP itself: type 2), their completions (BIND_MW,
 * LOCAL_INV with the wr_ids), and the requests refused before reaching the device.
 */
static int check_mw_wqes(struct ibv_qp *qp, uint32_t first, const char *who)
{
	struct vcx_qp *q = to_vcx_qp(qp);
	uint8_t w[256];
	const uint8_t *uc = w + VCX_WQE_CTRL_SIZE, *mk = uc + VCX_WQE_UMR_CTRL_SIZE;
	const uint8_t *klm = mk + VCX_WQE_MKEY_SEG_SIZE;
	uint8_t *ring = (uint8_t *)q->buf.buf + q->sq.offset;
	uint32_t i, pos = first;
	char name[128];
	int ok;

	for (i = 0; i < sizeof(w); i++)
		w[i] = ring[((pos & (q->sq.wqe_cnt - 1)) * 64 + i) % (q->sq.wqe_cnt * 64)];
	ok = vcx_get(w, VCX_WQE_CTRL_OPCODE) == VCX_OPCODE_UMR &&
	     vcx_get(w, VCX_WQE_CTRL_DS_CNT) == 12 && vcx_get(w, VCX_WQE_CTRL_IMM) == 0xabcd07 &&
	     vcx_get(w, VCX_WQE_CTRL_QPN) == qp->qp_num &&
	     vcx_get(uc, VCX_WQE_UMR_FLAGS) == (VCX_UMR_FLAG_INLINE | VCX_UMR_FLAG_CHECK_FREE |
						 VCX_UMR_FLAG_TRANSLATION_OFFSET) &&
	     vcx_get(uc, VCX_WQE_UMR_XLT_OCTOWORDS) == 4 &&
	     vcx_get64(uc, VCX_WQE_UMR_MKEY_MASK) == (VCX_UMR_MASK_MW_BIND | VCX_UMR_MASK_QPN) &&
	     mk[0] == 0 && mk[2] == (VCX_MW_ACC_RR | VCX_MW_ACC_RW) &&
	     vcx_be32_load(mk + 4) == (qp->qp_num << 8 | 0x08) &&
	     vcx_get64(mk, VCX_FLD(0x80, 64)) == (uintptr_t)TW_REMOTE &&
	     vcx_get64(mk, VCX_FLD(0xc0, 64)) == 256 &&
	     vcx_get(klm, VCX_WQE_KLM_BYTE_COUNT) == 256 && vcx_get(klm, VCX_WQE_KLM_MKEY) == LKEY &&
	     vcx_get64(klm, VCX_WQE_KLM_ADDR) == (uintptr_t)TW_REMOTE;
	for (i = 16; i < 64; i++)
		ok = ok && klm[i] == 0;
	snprintf(name, sizeof(name), "%s: bind WQE (UMR, 12 DS, CHECK_FREE, QPN, KLM) fields",
		 who);
	tap_ok(ok, name);

	pos += 3;
	for (i = 0; i < sizeof(w); i++)
		w[i] = ring[((pos & (q->sq.wqe_cnt - 1)) * 64 + i) % (q->sq.wqe_cnt * 64)];
	ok = vcx_get(w, VCX_WQE_CTRL_OPCODE) == VCX_OPCODE_UMR &&
	     vcx_get(w, VCX_WQE_CTRL_DS_CNT) == 8 && vcx_get(w, VCX_WQE_CTRL_IMM) == 0xabcd08 &&
	     vcx_get(uc, VCX_WQE_UMR_FLAGS) == (VCX_UMR_FLAG_INLINE | VCX_UMR_FLAG_CHECK_QPN |
						 VCX_UMR_FLAG_TRANSLATION_OFFSET) &&
	     vcx_get(uc, VCX_WQE_UMR_XLT_OCTOWORDS) == 0 &&
	     vcx_get64(uc, VCX_WQE_UMR_MKEY_MASK) == (VCX_UMR_MASK_FREE | VCX_UMR_MASK_KEY |
						      VCX_UMR_MASK_QPN) &&
	     mk[0] == 0x40 && vcx_be32_load(mk + 4) == 0xffffff00u;
	snprintf(name, sizeof(name), "%s: LOCAL_INV WQE (UMR, 8 DS, CHECK_QPN, free) fields",
		 who);
	return tap_ok(ok, name);
}

void test_wr_mw(void)
{
	uint64_t ops = RC_OPS | IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV;
	struct ibv_cq *cq = make_cq(32);
	struct ibv_qp *a, *b, *u;
	struct ibv_mr mr = { .lkey = LKEY, .addr = TW_REMOTE, .length = 4096 };
	struct ibv_mw mw = { .type = IBV_MW_TYPE_2, .rkey = 0xabcd07 };
	struct ibv_mw_bind_info bi = {
		.mr = &mr, .addr = (uintptr_t)TW_REMOTE, .length = 256,
		.mw_access_flags = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE,
	};
	struct ibv_send_wr w[2] = {}, *bad;
	struct ibv_qp_ex *x;
	struct ibv_wc wc;
	uint32_t a0, b0;
	int i, n = 0, ok = 1;

	a = make_qp_ex(IBV_QPT_RC, cq, cq, 8, 8, ops);
	tap_ok(!a, "mw: no device_caps MW: create_qp_ex with BIND_MW / LOCAL_INV refused");
	/*
	 * What alloc_ucontext's device_caps says on a kernel with windows (the fake reports
	 * 0, so the other tests keep RC WQEs without room for a bind).
	 */
	to_vcx_ctx(ctx)->mw = true;
	a = make_qp_ex(IBV_QPT_RC, cq, cq, 8, 8, ops);
	b = make_qp_ex(IBV_QPT_RC, cq, cq, 8, 8, ops);
	u = make_qp(IBV_QPT_UD, cq, cq, NULL, 8, 8);
	if (!tap_ok(cq && a && b && u && qpx_of(b), "mw: RC QPs with BIND_MW and LOCAL_INV"))
		return;
	connect(a, b);
	bring_up(u);
	a0 = to_vcx_qp(a)->sq.cur_post;
	b0 = to_vcx_qp(b)->sq.cur_post;
	w[0] = (struct ibv_send_wr){ .wr_id = 0x2000, .next = &w[1], .opcode = IBV_WR_BIND_MW,
				     .send_flags = IBV_SEND_SIGNALED };
	w[0].bind_mw.mw = &mw;
	w[0].bind_mw.rkey = 0xabcd08;
	w[0].bind_mw.bind_info = bi;
	w[1] = (struct ibv_send_wr){ .wr_id = 0x2001, .opcode = IBV_WR_LOCAL_INV,
				     .send_flags = IBV_SEND_SIGNALED, .invalidate_rkey = 0xabcd08 };
	tap_ok(OPS->post_send(a, w, &bad) == 0, "mw: post_send BIND_MW + LOCAL_INV");
	x = qpx_of(b);
	x->wr_start(x);
	x->wr_id = 0x3000;
	x->wr_flags = IBV_SEND_SIGNALED;
	x->wr_bind_mw(x, &mw, 0xabcd08, &bi);
	x->wr_id = 0x3001;
	x->wr_local_inv(x, 0xabcd08);
	tap_ok(x->wr_complete(x) == 0, "mw: wr_bind_mw + wr_local_inv complete");
	tap_ok(to_vcx_qp(a)->max_wqe_ds * VCX_WQE_DS >= VCX_WQE_CTRL_SIZE + VCX_WQE_MW_BIND_SIZE,
	       "mw: RC WQEs leave room for a bind (192 bytes)");
	tap_ok(to_vcx_qp(a)->sq.cur_post - a0 == 5 && to_vcx_qp(b)->sq.cur_post - b0 == 5,
	       "mw: 3 + 2 WQEBBs on each QP");
	check_mw_wqes(a, a0, "post_send");
	check_mw_wqes(b, b0, "ibv_wr");
	tap_ok(dev_run() == 4, "mw: the device takes the four UMR WQEs");
	for (i = 0; i < 4 && poll1(cq, &wc) == 1; i++, n++) {
		uint64_t base = wc.qp_num == a->qp_num ? 0x2000 : 0x3000;

		ok = ok && wc.status == IBV_WC_SUCCESS &&
		     wc.wr_id == base + (wc.opcode == IBV_WC_LOCAL_INV) &&
		     (wc.opcode == IBV_WC_BIND_MW || wc.opcode == IBV_WC_LOCAL_INV);
	}
	tap_ok(n == 4 && ok && poll1(cq, &wc) == 0,
	       "mw: completions IBV_WC_BIND_MW and IBV_WC_LOCAL_INV with their wr_ids");

	/* refused before the device */
	w[0].next = NULL;
	w[0].bind_mw.bind_info.length = 3ull << 30;
	tap_ok(OPS->post_send(a, w, &bad) == EOPNOTSUPP && bad == w,
	       "mw: a window over 2 GiB (one KLM entry): EOPNOTSUPP");
	w[0].bind_mw.bind_info = bi;
	w[0].bind_mw.bind_info.mw_access_flags |= IBV_ACCESS_ZERO_BASED;
	tap_ok(OPS->post_send(a, w, &bad) == EINVAL, "mw: zero-based window: EINVAL");
	w[0].bind_mw.bind_info = bi;
	w[0].bind_mw.bind_info.mr = NULL;
	tap_ok(OPS->post_send(a, w, &bad) == EINVAL, "mw: bind without an MR: EINVAL");
	w[0].bind_mw.bind_info = bi;
	tap_ok(OPS->post_send(u, w, &bad) == EINVAL, "mw: BIND_MW on a UD QP: EINVAL");
	tap_ok(dev_run() == 0, "mw: nothing of the refused requests reached the device");

	OPS->destroy_qp(a);
	OPS->destroy_qp(b);
	OPS->destroy_qp(u);
	OPS->destroy_cq(cq);
	to_vcx_ctx(ctx)->mw = false;
}
