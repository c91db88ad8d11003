// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The provider's data path end to end against a model of the kernel (fake-uverbs.c) and
 * of the device (device.c): context setup and UAR mapping, CQ/QP/SRQ/AH creation with the
 * vcx udata, post_send for every opcode, post_recv, post_srq_recv, poll_cq across ring
 * wraps, error and flush completions, CQ arming, QP destroy with CQEs pending. Everything
 * goes through the provider's verbs ops table, as libibverbs would call it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../tap.h"
#include "model.h"
#include "vcx.h"
#include "vcx/prm-iseg.h"
#include "vcx/prm-wqe.h"

const struct verbs_device_ops *fk_device_ops(void);
extern const struct verbs_context_ops *fk_ctx_ops;

#define OPS	fk_ctx_ops

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static uint8_t mem[1 << 20];		/* "registered" memory; keys are not translated */

#define LKEY	0x1234u
#define RKEY	0x5678u

static struct ibv_cq *make_cq(int n)
{
	return OPS->create_cq(ctx, n, NULL, 0);
}

static struct ibv_qp *make_qp(enum ibv_qp_type type, struct ibv_cq *scq, struct ibv_cq *rcq,
			      struct ibv_srq *srq, uint32_t nsend, uint32_t nrecv)
{
	struct ibv_qp_init_attr a = {
		.send_cq = scq, .recv_cq = rcq, .srq = srq, .qp_type = type,
		.cap = { .max_send_wr = nsend, .max_recv_wr = srq ? 0 : nrecv,
			 .max_send_sge = 4, .max_recv_sge = srq ? 0 : 4,
			 .max_inline_data = 64 },
	};

	return OPS->create_qp(pd, &a);
}

/* RESET -> INIT -> RTR -> RTS, as a QP must go before it can send. */
static void bring_up(struct ibv_qp *qp)
{
	static const enum ibv_qp_state path[] = { IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS };
	struct ibv_qp_attr attr = {};
	int i;

	for (i = 0; i < 3; i++) {
		attr.qp_state = path[i];
		OPS->modify_qp(qp, &attr, IBV_QP_STATE);
	}
}

/* Bring both up, each the other's loopback partner. */
static void connect(struct ibv_qp *a, struct ibv_qp *b)
{
	dev_qp(a->qp_num)->peer_qpn = b->qp_num;
	dev_qp(b->qp_num)->peer_qpn = a->qp_num;
	bring_up(a);
	bring_up(b);
}

static int post_recv(struct ibv_qp *qp, uint64_t wr_id, void *addr, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)addr, len, LKEY };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	return OPS->post_recv(qp, &wr, &bad);
}

static int post_srq(struct ibv_srq *srq, uint64_t wr_id, void *addr, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)addr, len, LKEY };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	return OPS->post_srq_recv(srq, &wr, &bad);
}

static uint32_t dbrec_value(struct ibv_srq *srq)
{
	return be32toh(to_vcx_srq(srq)->dbrec[0]);
}

static int post_one(struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;

	return OPS->post_send(qp, wr, &bad);
}

static int poll1(struct ibv_cq *cq, struct ibv_wc *wc)
{
	memset(wc, 0xa5, sizeof(*wc));
	return OPS->poll_cq(cq, 1, wc);
}

static int open_context(void)
{
	const struct verbs_device_ops *dops = fk_device_ops();
	struct verbs_device *vdev;
	struct verbs_context *vctx;
	struct ibv_alloc_pd *unused = NULL;
	int fd;

	(void)unused;
	if (!tap_ok(dops && !strcmp(dops->name, "vcx"), "provider registered as \"vcx\""))
		return -1;
	tap_ok(dops->match_table[0].vendor == VCX_PCI_VENDOR_ID &&
	       dops->match_table[0].device == VCX_PCI_DEVICE_ID &&
	       dops->match_table[1].kind == 0,
	       "matches 1af4:10f0 only (the ConnectX-5 id is libmlx5's)");
	fd = memfd_create("vcx-uar", 0);
	if (fd < 0 || ftruncate(fd, 2 * VCX_UAR_PAGE_SIZE))
		return -1;
	dev.uar = mmap(NULL, 2 * VCX_UAR_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	vdev = dops->alloc_device(NULL);
	vctx = dops->alloc_context(&vdev->device, fd, NULL);
	if (!tap_ok(vctx && fk_ctx_ops, "context opened, UAR pages mapped"))
		return -1;
	ctx = &vctx->context;
	pd = OPS->alloc_pd(ctx);
	tap_ok(pd && to_vcx_pd(pd)->pdn == 7, "alloc_pd returns the PD number from udata");
	tap_ok(to_vcx_ctx(ctx)->bfregs[5].reg ==
	       (uint8_t *)to_vcx_ctx(ctx)->uar[1] + 0x800 + 512,
	       "bfreg 5 = UAR page 1, register 1");
	return 0;
}

static void test_rc_ops(void)
{
	struct ibv_cq *scq = make_cq(16), *rcq = make_cq(16);
	struct ibv_qp *a = make_qp(IBV_QPT_RC, scq, scq, NULL, 16, 16);
	struct ibv_qp *b = make_qp(IBV_QPT_RC, rcq, rcq, NULL, 16, 16);
	uint8_t *src = mem, *dst = mem + 4096, *remote = mem + 8192;
	struct ibv_sge sge[2];
	struct ibv_send_wr wr;
	struct ibv_wc wc;
	uint64_t *atom = (uint64_t *)(mem + 12288);

	if (!tap_ok(scq && rcq && a && b, "RC: CQs and QPs created"))
		return;
	connect(a, b);

	/* SEND with two gather entries into one receive buffer. */
	memcpy(src, "hello, ", 7);
	memcpy(src + 100, "world", 5);
	sge[0] = (struct ibv_sge){ (uintptr_t)src, 7, LKEY };
	sge[1] = (struct ibv_sge){ (uintptr_t)(src + 100), 5, LKEY };
	post_recv(b, 77, dst, 64);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.sg_list = sge;
	wr.num_sge = 2;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	tap_ok(post_one(a, &wr) == 0 && dev_run() == 1, "SEND posted and executed");
	tap_ok(poll1(scq, &wc) == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == 1 &&
	       wc.opcode == IBV_WC_SEND && wc.qp_num == a->qp_num, "SEND: requester completion");
	tap_ok(poll1(rcq, &wc) == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == 77 &&
	       wc.opcode == IBV_WC_RECV && wc.byte_len == 12 && wc.src_qp == a->qp_num &&
	       (wc.wc_flags & IBV_WC_GRH) && !memcmp(dst, "hello, world", 12),
	       "SEND: responder completion, data gathered and scattered");
	tap_ok(poll1(scq, &wc) == 0 && poll1(rcq, &wc) == 0, "CQs empty afterwards");

	/* SEND_WITH_IMM, solicited. */
	post_recv(b, 78, dst, 64);
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	wr.imm_data = htobe32(0xa1b2c3d4);
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED;
	wr.num_sge = 1;
	post_one(a, &wr);
	dev_run();
	tap_ok(poll1(scq, &wc) == 1 && wc.opcode == IBV_WC_SEND && (wc.wc_flags & IBV_WC_WITH_IMM),
	       "SEND_IMM: requester completion flags the immediate");
	tap_ok(poll1(rcq, &wc) == 1 && wc.opcode == IBV_WC_RECV && wc.wr_id == 78 &&
	       (wc.wc_flags & IBV_WC_WITH_IMM) && wc.imm_data == htobe32(0xa1b2c3d4),
	       "SEND_IMM: immediate arrives in network order as posted");

	/* SEND_WITH_INV. */
	post_recv(b, 79, dst, 64);
	wr.opcode = IBV_WR_SEND_WITH_INV;
	wr.invalidate_rkey = 0xbeef01;
	wr.send_flags = IBV_SEND_SIGNALED;
	post_one(a, &wr);
	dev_run();
	tap_ok(poll1(scq, &wc) == 1 && wc.opcode == IBV_WC_SEND, "SEND_INV: requester completion");
	tap_ok(poll1(rcq, &wc) == 1 && (wc.wc_flags & IBV_WC_WITH_INV) &&
	       wc.invalidated_rkey == 0xbeef01, "SEND_INV: invalidated rkey reported");

	/* RDMA_WRITE, then WRITE_WITH_IMM (consumes a receive). */
	memset(remote, 0, 64);
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)remote;
	wr.wr.rdma.rkey = RKEY;
	wr.sg_list = sge;
	wr.num_sge = 2;
	post_one(a, &wr);
	dev_run();
	tap_ok(poll1(scq, &wc) == 1 && wc.opcode == IBV_WC_RDMA_WRITE &&
	       !memcmp(remote, "hello, world", 12), "RDMA_WRITE: data at the remote address");
	tap_ok(poll1(rcq, &wc) == 0, "RDMA_WRITE: no responder completion");
	post_recv(b, 80, dst, 64);
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.imm_data = htobe32(5);
	post_one(a, &wr);
	dev_run();
	tap_ok(poll1(scq, &wc) == 1 && wc.opcode == IBV_WC_RDMA_WRITE &&
	       (wc.wc_flags & IBV_WC_WITH_IMM), "WRITE_IMM: requester completion");
	tap_ok(poll1(rcq, &wc) == 1 && wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM && wc.wr_id == 80 &&
	       wc.imm_data == htobe32(5) && wc.byte_len == 12,
	       "WRITE_IMM: RECV_RDMA_WITH_IMM with the immediate");

	/* RDMA_READ. */
	memcpy(remote, "read me back", 12);
	memset(dst, 0, 64);
	sge[0] = (struct ibv_sge){ (uintptr_t)dst, 12, LKEY };
	wr.opcode = IBV_WR_RDMA_READ;
	wr.num_sge = 1;
	post_one(a, &wr);
	dev_run();
	tap_ok(poll1(scq, &wc) == 1 && wc.opcode == IBV_WC_RDMA_READ && wc.byte_len == 12 &&
	       !memcmp(dst, "read me back", 12), "RDMA_READ: data and byte_len");

	/* Atomics. */
	*atom = 10;
	sge[0] = (struct ibv_sge){ (uintptr_t)dst, 8, LKEY };
	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.remote_addr = (uintptr_t)atom;
	wr.wr.atomic.rkey = RKEY;
	wr.wr.atomic.compare_add = 10;
	wr.wr.atomic.swap = 99;
	post_one(a, &wr);
	dev_run();
	tap_ok(poll1(scq, &wc) == 1 && wc.opcode == IBV_WC_COMP_SWAP && wc.byte_len == 8 &&
	       *atom == 99 && *(uint64_t *)dst == 10, "ATOMIC_CMP_AND_SWP: swapped, old value back");
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.wr.atomic.compare_add = 5;
	post_one(a, &wr);
	dev_run();
	tap_ok(poll1(scq, &wc) == 1 && wc.opcode == IBV_WC_FETCH_ADD && *atom == 104 &&
	       *(uint64_t *)dst == 99, "ATOMIC_FETCH_AND_ADD: added, old value back");

	/* Inline SEND: the source buffer may change right after posting. */
	memcpy(src, "inline!", 7);
	sge[0] = (struct ibv_sge){ (uintptr_t)src, 7, 0 };
	post_recv(b, 81, dst, 64);
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	post_one(a, &wr);
	memset(src, 0, 7);
	dev_run();
	poll1(scq, &wc);
	tap_ok(poll1(rcq, &wc) == 1 && wc.byte_len == 7 && !memcmp(dst, "inline!", 7),
	       "inline SEND: data copied into the WQE at post time");

	/* Invalid requests never reach the device. */
	wr.opcode = IBV_WR_LOCAL_INV;
	tap_ok(post_one(a, &wr) == EINVAL, "LOCAL_INV (needs UMR) is refused with EINVAL");
	wr.opcode = IBV_WR_RDMA_READ;
	tap_ok(post_one(a, &wr) == EINVAL, "inline RDMA_READ is refused");
	tap_ok(dev_run() == 0, "nothing reached the device");

	OPS->destroy_qp(a);
	OPS->destroy_qp(b);
	OPS->destroy_cq(scq);
	OPS->destroy_cq(rcq);
}

/*
 * Many laps of small rings. Each lap posts a 1-WQEBB write, a 2-WQEBB inline write, and
 * two more 1-WQEBB writes (5 WQEBBs on an 8-WQEBB ring, so the inline WQE regularly
 * straddles the end of the ring); only the last is signaled, so one CQE retires four WRs.
 * The CQ has 4 entries and wraps every 4 laps.
 */
static void test_wrap_and_unsignaled(void)
{
	struct ibv_cq *cq = make_cq(3);
	struct ibv_qp *a = make_qp(IBV_QPT_RC, cq, cq, NULL, 4, 4);
	struct ibv_qp *b = make_qp(IBV_QPT_RC, cq, cq, NULL, 4, 4);
	struct ibv_sge sge = { (uintptr_t)mem, 8, LKEY };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE };
	struct ibv_send_wr wrs[4], *bad;
	uint8_t payload[60], *remote = mem + 65536;
	struct ibv_sge inl = { (uintptr_t)payload, sizeof(payload), 0 };
	struct ibv_wc wc[8];
	int lap, ok = 1, data_ok = 1, i;

	if (!tap_ok(cq && a && b && cq->cqe == 3, "wrap: 4-entry CQ and QPs"))
		return;
	tap_ok(to_vcx_qp(a)->sq.wqe_cnt == 8 && to_vcx_qp(a)->sq.max_post == 4,
	       "wrap: 4 WRs of up to 2 WQEBBs make an 8-WQEBB SQ");
	connect(a, b);
	wr.wr.rdma.remote_addr = (uintptr_t)remote;
	for (lap = 0; lap < 50; lap++) {
		for (i = 0; i < 4; i++) {
			wrs[i] = wr;
			wrs[i].wr_id = lap * 4 + i;
			wrs[i].next = i < 3 ? &wrs[i + 1] : NULL;
			wrs[i].send_flags = i == 3 ? IBV_SEND_SIGNALED : 0;
		}
		memset(payload, lap, sizeof(payload));
		wrs[1].sg_list = &inl;
		wrs[1].send_flags = IBV_SEND_INLINE;
		wrs[1].wr.rdma.remote_addr = (uintptr_t)(remote + 128);
		ok &= OPS->post_send(a, wrs, &bad) == 0;
		ok &= dev_run() == 4;
		for (i = 0; i < (int)sizeof(payload); i++)
			data_ok &= remote[128 + i] == (uint8_t)lap;
		ok &= OPS->poll_cq(cq, 8, wc) == 1 && wc[0].wr_id == (uint64_t)lap * 4 + 3 &&
		      wc[0].status == IBV_WC_SUCCESS;
	}
	tap_ok(ok, "50 laps: one CQE per lap retires 3 unsignaled WRs and itself");
	tap_ok(data_ok, "inline data intact also when the WQE wraps the SQ ring");
	tap_ok(dev.protocol_errors == 0, "device saw well-formed WQEs, counters and doorbells");

	wr.send_flags = IBV_SEND_SIGNALED;
	for (i = 0; i < 4; i++) {
		wrs[i] = wr;
		wrs[i].next = &wrs[i + 1];
	}
	wrs[3].next = NULL;
	ok = OPS->post_send(a, wrs, &bad) == 0;
	wr.wr_id = 999;
	tap_ok(ok && post_one(a, &wr) == ENOMEM, "SQ full: the 5th WR gets ENOMEM");
	dev_run();
	tap_ok(OPS->poll_cq(cq, 8, wc) == 4, "4 completions drain it");
	tap_ok(post_one(a, &wr) == 0 && dev_run() == 1 && OPS->poll_cq(cq, 8, wc) == 1 &&
	       wc[0].wr_id == 999, "and it accepts work again");

	OPS->destroy_qp(a);
	OPS->destroy_qp(b);
	OPS->destroy_cq(cq);
}

static void test_ud(void)
{
	struct ibv_cq *cq = make_cq(64);
	struct ibv_qp *a = make_qp(IBV_QPT_UD, cq, cq, NULL, 8, 64);
	struct ibv_qp *b = make_qp(IBV_QPT_UD, cq, cq, NULL, 8, 64);
	struct ibv_ah_attr ah_attr = {
		.is_global = 1, .port_num = 1, .sl = 3,
		.grh = { .sgid_index = 1, .hop_limit = 64, .flow_label = 0x12345 },
	};
	struct ibv_sge sge = { (uintptr_t)mem, 100, LKEY };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_wc wc;
	struct ibv_ah *ah;
	int i, ok = 1;

	if (!tap_ok(cq && a && b, "UD: CQ and QPs"))
		return;
	memset(ah_attr.grh.dgid.raw, 0x11, 16);
	ah = OPS->create_ah(pd, &ah_attr);
	if (!tap_ok(ah != NULL, "UD: address handle"))
		return;
	tap_ok(!memcmp(vcx_cptr(to_vcx_ah(ah)->av, VCX_WQE_AV_RMAC), "\x02\x00\x00\xaa\xbb\xcc", 6) &&
	       vcx_get(to_vcx_ah(ah)->av, VCX_WQE_AV_SL_ROCE) == 3 &&
	       vcx_get(to_vcx_ah(ah)->av, VCX_WQE_AV_RLID_UDP_SPORT) ==
	       ibv_flow_label_to_udp_sport(0x12345) &&
	       vcx_get(to_vcx_ah(ah)->av, VCX_WQE_AV_SGID_INDEX) == 1 &&
	       vcx_get(to_vcx_ah(ah)->av, VCX_WQE_AV_GRH) == 0,
	       "UD: AV has the kernel's dmac, RoCE SL, UDP sport from the flow label, sgid");
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = b->qp_num;
	wr.wr.ud.remote_qkey = 0x11111111;
	bring_up(a);
	bring_up(b);
	for (i = 0; i < 40; i++) {
		post_recv(b, 500 + i, mem + 8192, 200);
		wr.wr_id = i;
		ok &= post_one(a, &wr) == 0 && dev_run() == 1;
		/* The model completes the receive before the send, as an RC ACK would. */
		ok &= poll1(cq, &wc) == 1 && wc.wr_id == 500u + i && wc.byte_len == 100 &&
		      wc.src_qp == a->qp_num && wc.opcode == IBV_WC_RECV;
		ok &= poll1(cq, &wc) == 1 && wc.wr_id == (uint64_t)i && wc.opcode == IBV_WC_SEND;
	}
	tap_ok(ok, "UD: 40 sends of 2 WQEBBs each, 2.5 laps of the SQ");
	tap_ok(dev.protocol_errors == 0, "UD: WQEs well-formed (extended AV, DS, index)");
	OPS->destroy_ah(ah);
	OPS->destroy_qp(a);
	OPS->destroy_qp(b);
	OPS->destroy_cq(cq);
}

static void test_srq(void)
{
	struct ibv_cq *cq = make_cq(64);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_srq *srq = OPS->create_srq(pd, &sa);
	struct ibv_qp *a, *b, *c;
	struct ibv_sge sge = { (uintptr_t)mem, 16, LKEY };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	uint64_t next_post = 1000, expect = 1000;
	struct ibv_wc wc;
	int round, i, ok = 1;

	if (!tap_ok(cq && srq, "SRQ: created"))
		return;
	tap_ok(sa.attr.max_wr == 15 && sa.attr.max_sge == 1,
	       "SRQ: max_wr 8 rounds to a 16-WQE chain (15 postable), 1 SGE (32-byte WQEs)");
	a = make_qp(IBV_QPT_RC, cq, cq, NULL, 16, 0);
	b = make_qp(IBV_QPT_RC, cq, cq, srq, 16, 0);
	c = make_qp(IBV_QPT_RC, cq, cq, srq, 16, 0);
	if (!tap_ok(a && b && c, "SRQ: two QPs share it"))
		return;
	connect(a, b);
	for (i = 0; i < 15; i++)
		ok &= post_srq(srq, next_post++, mem + 4096 + 64 * (i % 32), 64) == 0;
	tap_ok(ok && post_srq(srq, 1, mem, 64) == ENOMEM, "SRQ: 15 posts fit, the 16th is ENOMEM");
	tap_ok(dbrec_value(srq) == 15, "SRQ: doorbell record counts 15 WQEs");

	/* Consume and repost for many laps; SRQ WQE order must be the posting order. */
	for (round = 0; round < 200; round++) {
		memcpy(mem, &round, sizeof(round));
		wr.wr_id = round;
		ok &= post_one(a, &wr) == 0 && dev_run() == 1;
		ok &= poll1(cq, &wc) == 1 && wc.qp_num == b->qp_num && wc.wr_id == expect++ &&
		      wc.opcode == IBV_WC_RECV && wc.byte_len == 16;
		ok &= poll1(cq, &wc) == 1 && wc.qp_num == a->qp_num && wc.opcode == IBV_WC_SEND;
		ok &= post_srq(srq, next_post, mem + 4096 + 64 * (next_post % 32), 64) == 0;
		next_post++;
	}
	tap_ok(ok, "SRQ: 200 receives in posting order across wait-queue recycling");
	tap_ok(dev.protocol_errors == 0, "SRQ: device followed next pointers within the buffer");

	/* Destroying a QP drops its CQEs and returns their SRQ WQEs. */
	dev_qp(c->qp_num)->peer_qpn = a->qp_num;
	dev_qp(a->qp_num)->peer_qpn = c->qp_num;
	for (i = 0; i < 3; i++) {
		wr.send_flags = 0;
		post_one(a, &wr);
	}
	dev_run();
	OPS->destroy_qp(c);
	tap_ok(poll1(cq, &wc) == 0, "destroy_qp: its 3 pending receive CQEs are gone");
	for (i = 0; i < 3; i++)
		ok &= post_srq(srq, next_post++, mem + 4096, 64) == 0;
	tap_ok(ok && post_srq(srq, 1, mem, 64) == ENOMEM,
	       "destroy_qp: the 3 WQEs they consumed went back to the SRQ");

	tap_ok(OPS->destroy_qp(a) == 0 && OPS->destroy_qp(b) == 0 &&
	       OPS->destroy_srq(srq) == 0 && OPS->destroy_cq(cq) == 0, "SRQ: teardown");
}

static void test_errors(void)
{
	struct ibv_cq *cq = make_cq(32);
	struct ibv_qp *a = make_qp(IBV_QPT_RC, cq, cq, NULL, 8, 8);
	struct ibv_qp *b = make_qp(IBV_QPT_RC, cq, cq, NULL, 8, 8);
	struct ibv_sge good = { (uintptr_t)mem, 8, LKEY }, bad = { (uintptr_t)mem, 8, 0xdead };
	struct ibv_send_wr wr = { .sg_list = &bad, .num_sge = 1, .opcode = IBV_WR_SEND };
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc;
	int i, ok = 1;

	if (!tap_ok(cq && a && b, "errors: CQ and QPs"))
		return;
	connect(a, b);
	wr.wr_id = 42;
	post_one(a, &wr);	/* unsignaled, yet an error always completes */
	dev_run();
	tap_ok(poll1(cq, &wc) == 1 && wc.wr_id == 42 && wc.status == IBV_WC_LOC_PROT_ERR &&
	       wc.vendor_err == 0x42, "bad lkey: LOC_PROT_ERR with the vendor syndrome");
	wr.sg_list = &good;
	for (i = 0; i < 3; i++) {
		wr.wr_id = 50 + i;
		post_one(a, &wr);
	}
	dev_run();
	for (i = 0; i < 3; i++)
		ok &= poll1(cq, &wc) == 1 && wc.wr_id == 50u + i &&
		      wc.status == IBV_WC_WR_FLUSH_ERR;
	tap_ok(ok, "QP in error: every later WQE flushes with its own wr_id");

	for (i = 0; i < 4; i++)
		post_recv(b, 60 + i, mem + 4096, 64);
	OPS->modify_qp(b, &err, IBV_QP_STATE);
	ok = 1;
	for (i = 0; i < 4; i++)
		ok &= poll1(cq, &wc) == 1 && wc.wr_id == 60u + i &&
		      wc.status == IBV_WC_WR_FLUSH_ERR && wc.qp_num == b->qp_num;
	tap_ok(ok, "receive flush: each posted receive completes in order");

	{
		struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };

		post_recv(b, 70, mem, 8);
		tap_ok(OPS->modify_qp(b, &reset, IBV_QP_STATE) == 0 &&
		       to_vcx_qp(b)->rq.head == 0 && to_vcx_qp(b)->dbrec[0] == 0,
		       "RESET: queue indices and doorbell record restart at 0");
	}
	OPS->destroy_qp(a);
	OPS->destroy_qp(b);
	OPS->destroy_cq(cq);
}

/* A receive error on an SRQ names the WQE, which goes back to the SRQ. */
static void test_srq_error(void)
{
	struct ibv_cq *cq = make_cq(16);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 2, .max_sge = 1 } };
	struct ibv_srq *srq = OPS->create_srq(pd, &sa);
	struct ibv_qp *a = make_qp(IBV_QPT_RC, cq, cq, NULL, 4, 0);
	struct ibv_qp *b = make_qp(IBV_QPT_RC, cq, cq, srq, 4, 0);
	struct ibv_sge sge = { (uintptr_t)mem, 16, LKEY };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND };
	struct ibv_wc wc;
	int i, ok = 1;

	if (!tap_ok(cq && srq && a && b && sa.attr.max_wr == 3, "SRQ error: objects"))
		return;
	connect(a, b);
	post_srq(srq, 321, mem + 4096, 8);
	post_one(a, &wr);
	dev_run();
	tap_ok(poll1(cq, &wc) == 1 && wc.wr_id == 321 && wc.status == IBV_WC_LOC_LEN_ERR &&
	       wc.qp_num == b->qp_num, "16 bytes into an 8-byte SRQ WQE: LOC_LEN_ERR, its wr_id");
	for (i = 0; i < 3; i++)
		ok &= post_srq(srq, i, mem + 4096, 64) == 0;
	tap_ok(ok && post_srq(srq, 9, mem, 64) == ENOMEM, "the failed WQE went back to the SRQ");
	OPS->destroy_qp(a);
	OPS->destroy_qp(b);
	OPS->destroy_srq(srq);
	OPS->destroy_cq(cq);
}

/* UC carries sends and writes; reads, atomics and SEND_INV are RC operations. */
static void test_uc(void)
{
	struct ibv_cq *cq = make_cq(16);
	struct ibv_qp *a = make_qp(IBV_QPT_UC, cq, cq, NULL, 4, 4);
	struct ibv_qp *b = make_qp(IBV_QPT_UC, cq, cq, NULL, 4, 4);
	struct ibv_sge sge = { (uintptr_t)mem, 16, LKEY };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_wc wc;

	if (!tap_ok(cq && a && b, "UC: objects"))
		return;
	connect(a, b);
	wr.wr.rdma.remote_addr = (uintptr_t)(mem + 8192);
	tap_ok(post_one(a, &wr) == 0 && dev_run() == 1 && poll1(cq, &wc) == 1 &&
	       wc.opcode == IBV_WC_RDMA_WRITE && wc.status == IBV_WC_SUCCESS, "UC: RDMA_WRITE");
	wr.opcode = IBV_WR_RDMA_READ;
	tap_ok(post_one(a, &wr) == EINVAL, "UC: RDMA_READ refused");
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	tap_ok(post_one(a, &wr) == EINVAL, "UC: atomics refused");
	wr.opcode = IBV_WR_SEND_WITH_INV;
	tap_ok(post_one(a, &wr) == EINVAL, "UC: SEND_WITH_INV refused");
	OPS->destroy_qp(a);
	OPS->destroy_qp(b);
	OPS->destroy_cq(cq);
}

/*
 * Four threads post to one QP and one SRQ at once: the per-queue locks must keep every
 * WQE intact and every counter exact (the device then finds 4000 well-formed WQEs in
 * order, and the SRQ chain holds all 2000 receives).
 */
struct poster {
	struct ibv_qp *qp;
	struct ibv_srq *srq;
	int id;
	int failures;
};

static void *poster_main(void *arg)
{
	struct poster *p = arg;
	struct ibv_sge sge = { (uintptr_t)mem, 8, LKEY };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE };
	int i;

	wr.wr.rdma.remote_addr = (uintptr_t)(mem + 65536);
	for (i = 0; i < 1000; i++) {
		wr.wr_id = (uint64_t)p->id << 32 | i;
		p->failures += post_one(p->qp, &wr) != 0;
		p->failures += post_srq(p->srq, wr.wr_id, mem + 4096, 64) != 0;
	}
	return NULL;
}

static void test_threads(void)
{
	struct ibv_cq *cq = make_cq(4096);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4000, .max_sge = 1 } };
	struct ibv_srq *srq = OPS->create_srq(pd, &sa);
	struct ibv_qp *a = make_qp(IBV_QPT_RC, cq, cq, NULL, 4000, 0);
	struct ibv_qp *b = make_qp(IBV_QPT_RC, cq, cq, srq, 16, 0);
	struct poster p[4];
	pthread_t t[4];
	int i, failures = 0;

	if (!tap_ok(cq && srq && a && b, "threads: objects"))
		return;
	connect(a, b);
	for (i = 0; i < 4; i++) {
		p[i] = (struct poster){ .qp = a, .srq = srq, .id = i };
		pthread_create(&t[i], NULL, poster_main, &p[i]);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		failures += p[i].failures;
	}
	tap_ok(failures == 0, "threads: 4000 sends and 4000 SRQ receives posted");
	tap_ok(to_vcx_qp(a)->sq.cur_post == 4000 && be32toh(to_vcx_qp(a)->dbrec[1]) == 4000,
	       "threads: SQ producer counter exact");
	tap_ok(be32toh(to_vcx_srq(srq)->dbrec[0]) == 4000, "threads: SRQ counter exact");
	dev.many_doorbells = true;
	tap_ok(dev_run() == 4000 && dev.protocol_errors == 0,
	       "threads: the device executes 4000 intact WQEs in order");
	dev.many_doorbells = false;
	OPS->destroy_qp(a);
	OPS->destroy_qp(b);
	OPS->destroy_srq(srq);
	OPS->destroy_cq(cq);
}

/* ---------------------------------------------------------------------------------------
 * create_qp_ex and the ibv_wr_* API (sq_wr.c)
 */
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

static void test_create_qp_ex(void)
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
		{ IBV_QPT_RC, IBV_QP_EX_WITH_BIND_MW, "RC: BIND_MW" },
		{ IBV_QPT_RC, IBV_QP_EX_WITH_LOCAL_INV, "RC: LOCAL_INV" },
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
	expect_create_fail(&a, EOPNOTSUPP, "XRCD: EOPNOTSUPP");
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
	expect_create_fail(&a, EOPNOTSUPP, "XRC_SEND QP: EOPNOTSUPP");
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

static void test_wr_twins(void)
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
static void test_wr_ud(void)
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
static void test_wr_abort_and_errors(void)
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
	EXPECT_EINVAL({ x->wr_local_inv(x, 0x1234); }, "wr_local_inv (needs UMR): EINVAL");
	EXPECT_EINVAL({ x->wr_bind_mw(x, NULL, 0x1234, NULL); },
		      "wr_bind_mw (needs UMR): EINVAL");
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
static void test_post_states(void)
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

static void test_wr_threads(void)
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

static void test_arm(void)
{
	struct ibv_cq *cq = make_cq(8);
	struct vcx_cq *vcq = to_vcx_cq(cq);

	OPS->req_notify_cq(cq, 0);
	tap_u64(dev_cq_doorbell(), (uint64_t)vcx_cq_arm_word(0, 0, 0) << 32 | vcq->cqn,
		"arm: UAR 0x20 gets arm word and CQN");
	tap_u64(be32toh(vcq->dbrec[1]), vcx_cq_arm_word(0, 0, 0), "arm: record dword 1 matches");
	OPS->cq_event(cq);
	vcq->cons_index = 0x1000005;
	OPS->req_notify_cq(cq, 1);
	tap_u64(dev_cq_doorbell() >> 32, 0x11000005,
		"solicited re-arm after an event: sn 1, cmd 1, ci masked to 24 bits");
	vcq->cons_index = 0;
	OPS->destroy_cq(cq);
}

int main(void)
{
	if (open_context()) {
		tap_ok(0, "context setup");
		return tap_done();
	}
	test_rc_ops();
	test_wrap_and_unsignaled();
	test_ud();
	test_srq();
	test_srq_error();
	test_uc();
	test_threads();
	test_errors();
	test_create_qp_ex();
	test_wr_twins();
	test_wr_ud();
	test_wr_abort_and_errors();
	test_post_states();
	test_wr_threads();
	test_arm();
	tap_ok(dev.protocol_errors == 0, "no protocol errors seen by the device model");
	return tap_done();
}
