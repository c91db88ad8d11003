// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The provider's data path end to end against a model of the kernel (fake-uverbs.c) and
 * of the device (device.c): context setup and UAR mapping, CQ/QP/SRQ/AH creation with the
 * vcx udata, post_send for every opcode, post_recv, post_srq_recv, poll_cq across ring
 * wraps, error and flush completions, CQ arming, QP destroy with CQEs pending, resize_cq
 * (copy and poller-switch paths), the extended CQ's start/next/end_poll and read_* calls
 * against poll_cq. Everything
 * goes through the provider's verbs ops table, as libibverbs would call it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define TAP_SHARED_STATE
#define TAP_DEFINE_STATE
#include "../tap.h"
#include "harness.h"
#include "model.h"
#include "vcx.h"
#include "vcx/prm-iseg.h"
#include "vcx/prm-wqe.h"

const struct verbs_device_ops *fk_device_ops(void);

struct ibv_context *ctx;
struct ibv_pd *pd;
uint8_t mem[1 << 20];

struct ibv_cq *make_cq(int n)
{
	return OPS->create_cq(ctx, n, NULL, 0);
}

struct ibv_qp *make_qp(enum ibv_qp_type type, struct ibv_cq *scq, struct ibv_cq *rcq,
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
void bring_up(struct ibv_qp *qp)
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
void connect(struct ibv_qp *a, struct ibv_qp *b)
{
	dev_qp(a->qp_num)->peer_qpn = b->qp_num;
	dev_qp(b->qp_num)->peer_qpn = a->qp_num;
	bring_up(a);
	bring_up(b);
}

int post_recv(struct ibv_qp *qp, uint64_t wr_id, void *addr, uint32_t len)
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

int post_one(struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;

	return OPS->post_send(qp, wr, &bad);
}

int poll1(struct ibv_cq *cq, struct ibv_wc *wc)
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
	wr.opcode = IBV_WR_TSO;
	tap_ok(post_one(a, &wr) == EINVAL, "TSO on an RC QP is refused with EINVAL");
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
 * CQ resize and the extended CQ
 */

static struct ibv_send_wr send_wr(uint64_t wr_id, enum ibv_wr_opcode op, struct ibv_sge *sge)
{
	return (struct ibv_send_wr){ .wr_id = wr_id, .sg_list = sge, .num_sge = 1, .opcode = op,
				     .send_flags = IBV_SEND_SIGNALED,
				     .imm_data = htobe32(0x51000000 | (uint32_t)wr_id) };
}

/* n SEND_WITH_IMMs a -> b, wr_ids first.., b's receive wr_ids 1000 + first.. */
static int send_imms(struct ibv_qp *a, struct ibv_qp *b, uint64_t first, int n)
{
	struct ibv_sge sge = { (uintptr_t)mem, 24, LKEY };
	int i, ok = 1;

	for (i = 0; i < n; i++) {
		struct ibv_send_wr wr = send_wr(first + i, IBV_WR_SEND_WITH_IMM, &sge);

		ok &= post_recv(b, 1000 + first + i, mem + 4096 + 64 * i, 64) == 0;
		ok &= post_one(a, &wr) == 0;
	}
	dev.many_doorbells = true;
	ok &= dev_run() == n;
	dev.many_doorbells = false;
	return ok;
}

/* Poll exactly the given wr_ids in order (requester or responder with imm), then empty. */
static int expect_wr_ids(struct ibv_cq *cq, uint64_t first, int n, bool responder)
{
	struct ibv_wc wc;
	int i, ok = 1;

	for (i = 0; i < n; i++) {
		ok &= poll1(cq, &wc) == 1 && wc.status == IBV_WC_SUCCESS &&
		      wc.wr_id == (responder ? 1000 : 0) + first + i;
		if (responder)
			ok &= wc.opcode == IBV_WC_RECV && wc.byte_len == 24 &&
			      (wc.wc_flags & IBV_WC_WITH_IMM) &&
			      wc.imm_data == htobe32(0x51000000 | (uint32_t)(first + i));
	}
	return ok && poll1(cq, &wc) == 0;
}

static struct ibv_cq *hook_cq;
static struct ibv_wc hook_wc[16];
static int hook_polled;

/* Another thread polls while the resize command runs (CQ lock free during the syscall). */
static void poll_during_resize(struct ibv_cq *cq)
{
	if (cq == hook_cq)
		hook_polled = OPS->poll_cq(cq, 16, hook_wc);
}

static void test_resize(void)
{
	struct ibv_cq *scq = make_cq(3), *rcq = make_cq(31);
	struct ibv_qp *a = make_qp(IBV_QPT_RC, scq, scq, NULL, 64, 0);
	struct ibv_qp *b = make_qp(IBV_QPT_RC, rcq, rcq, NULL, 16, 64);
	struct vcx_cq *vs = to_vcx_cq(scq), *vr = to_vcx_cq(rcq);
	struct dev_cq *ds;
	void *old_ring;
	struct ibv_wc wc;
	int ok = 1, i;

	if (!tap_ok(scq && rcq && a && b && OPS->resize_cq, "resize: CQs, QPs, resize_cq op"))
		return;
	connect(a, b);
	ds = dev_cq(vs->cqn);

	/* Copy path: 3 CQEs in a 4-entry ring, one polled, grow to 8 entries. */
	send_imms(a, b, 1, 3);
	tap_ok(poll1(scq, &wc) == 1 && wc.wr_id == 1, "resize: first requester CQE polled");
	old_ring = vs->buf.buf;
	tap_ok(OPS->resize_cq(scq, 7) == 0 && scq->cqe == 7 && vs->log_nent == 3 &&
	       vs->buf.buf != old_ring && ds->buf == vs->buf.buf,
	       "resize 4 -> 8 with 2 CQEs outstanding: cqe 7, the library and the device on the "
	       "new ring");
	tap_ok(vs->cons_index == 2 && ds->pi == 4,
	       "the consumer stepped over the resize CQE: consumer 2 (1 polled + 1), producer 4");
	tap_ok(expect_wr_ids(scq, 2, 2, false), "the 2 unpolled CQEs come from the new ring, once");
	for (i = 0; i < 3; i++) {
		ok &= send_imms(a, b, 4 + 5 * i, 5);
		ok &= expect_wr_ids(scq, 4 + 5 * i, 5, false);
	}
	tap_ok(ok, "15 more completions across two wraps of the 8-entry ring: in order, none "
	       "lost or duplicated");

	/* Shrink a responder CQ with payload-bearing CQEs outstanding. */
	tap_ok(expect_wr_ids(rcq, 1, 18, true), "18 responder CQEs: wr_id, byte_len, immediate");
	send_imms(a, b, 30, 3);
	expect_wr_ids(scq, 30, 3, false);
	tap_ok(OPS->resize_cq(rcq, 3) == 0 && rcq->cqe == 3 && vr->log_nent == 2,
	       "rcq shrinks 32 -> 4 with 3 CQEs outstanding");
	tap_ok(expect_wr_ids(rcq, 30, 3, true),
	       "copied responder CQEs keep wr_id, byte_len, immediate and flags");

	/* Refused sizes leave the CQ as it was. */
	send_imms(a, b, 40, 3);
	old_ring = vr->buf.buf;
	tap_ok(OPS->resize_cq(rcq, 1) == EINVAL && rcq->cqe == 3 && vr->buf.buf == old_ring,
	       "resize to 2 entries with 3 CQEs outstanding: EINVAL, CQ unchanged");
	tap_ok(OPS->resize_cq(rcq, 0) == EINVAL && OPS->resize_cq(rcq, 1 << 16) == EINVAL,
	       "resize to 0 or max_cqe: EINVAL before any command");
	i = dev_cq(vr->cqn)->pi;
	tap_ok(OPS->resize_cq(rcq, 2) == 0 && dev_cq(vr->cqn)->pi == (uint32_t)i,
	       "resize to the current size: nothing to do, no resize CQE");
	tap_ok(expect_wr_ids(rcq, 40, 3, true), "the 3 CQEs still poll after the refusals");
	expect_wr_ids(scq, 40, 3, false);

	/* Switch path: a poller meets the resize CQE before the library copies. */
	send_imms(a, b, 50, 3);
	hook_cq = scq;
	fk_after_resize = poll_during_resize;
	tap_ok(OPS->resize_cq(scq, 15) == 0 && hook_polled == 3 && scq->cqe == 15 &&
	       vs->log_nent == 4, "a poll during the resize returns the 3 CQEs of the old ring");
	fk_after_resize = NULL;
	hook_cq = NULL;
	ok = 1;
	for (i = 0; i < 3; i++)
		ok &= hook_wc[i].wr_id == (uint64_t)(50 + i) && hook_wc[i].status == IBV_WC_SUCCESS;
	tap_ok(ok && vs->cons_index == ds->pi && hook_polled == 3, "... in order; it stepped over the resize CQE "
	       "and moved to the new ring itself (consumer = producer)");
	ok = expect_wr_ids(rcq, 50, 3, true);
	for (i = 0; i < 4; i++) {
		ok &= send_imms(a, b, 60 + 3 * i, 3);
		ok &= expect_wr_ids(scq, 60 + 3 * i, 3, false);
		ok &= expect_wr_ids(rcq, 60 + 3 * i, 3, true);
	}
	tap_ok(ok, "nothing copied twice: the next 12 completions in order on both CQs");

	OPS->destroy_qp(a);
	OPS->destroy_qp(b);
	OPS->destroy_cq(scq);
	OPS->destroy_cq(rcq);
}

/* Three operations a -> b whose receives land in b's SRQ: SEND_IMM, WRITE_IMM, SEND_INV. */
static int three_ops(struct ibv_qp *a, struct ibv_srq *srq)
{
	struct ibv_sge sge = { (uintptr_t)mem, 24, LKEY };
	struct ibv_send_wr w1 = send_wr(1, IBV_WR_SEND_WITH_IMM, &sge);
	struct ibv_send_wr w2 = send_wr(2, IBV_WR_RDMA_WRITE_WITH_IMM, &sge);
	struct ibv_send_wr w3 = send_wr(3, IBV_WR_SEND_WITH_INV, &sge);
	int i, ok = 1;

	memcpy(mem, "extended CQ payload 24 b", 24);
	w2.wr.rdma.remote_addr = (uintptr_t)(mem + 8192);
	w2.wr.rdma.rkey = RKEY;
	w3.invalidate_rkey = 0xbeef02;
	for (i = 0; i < 3; i++)
		ok &= post_srq(srq, 500 + i, mem + 4096 + 64 * i, 64) == 0;
	ok &= post_one(a, &w1) == 0 && post_one(a, &w2) == 0 && post_one(a, &w3) == 0;
	dev.many_doorbells = true;
	ok &= dev_run() == 3;
	dev.many_doorbells = false;
	return ok;
}

/* Every read_* of the current completion, into an ibv_wc. */
static void read_ex(struct ibv_cq_ex *x, struct ibv_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = x->wr_id;
	wc->status = x->status;
	wc->vendor_err = ibv_wc_read_vendor_err(x);
	wc->wc_flags = ibv_wc_read_wc_flags(x);
	wc->qp_num = ibv_wc_read_qp_num(x);
	if (wc->status != IBV_WC_SUCCESS)
		return;
	wc->opcode = ibv_wc_read_opcode(x);
	wc->byte_len = ibv_wc_read_byte_len(x);
	if (wc->wc_flags & IBV_WC_WITH_INV)
		wc->invalidated_rkey = ibv_wc_read_invalidated_rkey(x);
	else if (wc->wc_flags & IBV_WC_WITH_IMM)
		wc->imm_data = ibv_wc_read_imm_data(x);
	if (wc->opcode & IBV_WC_RECV) {
		wc->src_qp = ibv_wc_read_src_qp(x);
		wc->slid = ibv_wc_read_slid(x);
		wc->sl = ibv_wc_read_sl(x);
		wc->dlid_path_bits = ibv_wc_read_dlid_path_bits(x);
	}
}

/* The fields the same read_ex would give, from an ibv_poll_cq completion. */
static int same_completion(const struct ibv_wc *ex, const struct ibv_wc *wc, uint32_t qp_delta)
{
	bool recv = wc->opcode & IBV_WC_RECV;

	/* byte_len, imm/rkey and the source fields are defined for receives only here. */
	if (!(ex->wr_id == wc->wr_id && ex->status == wc->status &&
	      ex->opcode == wc->opcode && ex->wc_flags == wc->wc_flags &&
	      ex->qp_num + qp_delta == wc->qp_num && ex->vendor_err == wc->vendor_err &&
	      (!recv || (ex->byte_len == wc->byte_len && ex->imm_data == wc->imm_data &&
			 ex->src_qp + qp_delta == wc->src_qp && ex->sl == wc->sl &&
			 ex->slid == wc->slid && ex->dlid_path_bits == wc->dlid_path_bits)))) {
		printf("# ex: wr_id %" PRIu64 " opcode %d flags 0x%x qp 0x%x len %u imm 0x%x\n"
		       "# wc: wr_id %" PRIu64 " opcode %d flags 0x%x qp 0x%x len %u imm 0x%x\n",
		       ex->wr_id, ex->opcode, ex->wc_flags, ex->qp_num, ex->byte_len, ex->imm_data,
		       wc->wr_id, wc->opcode, wc->wc_flags, wc->qp_num, wc->byte_len, wc->imm_data);
		return 0;
	}
	return 1;
}

static struct ibv_cq_ex *make_cq_ex(uint32_t cqe, uint64_t wc_flags, uint32_t comp_mask,
				    uint32_t flags)
{
	struct ibv_cq_init_attr_ex a = { .cqe = cqe, .wc_flags = wc_flags,
					 .comp_mask = comp_mask, .flags = flags };

	errno = 0;
	return OPS->create_cq_ex(ctx, &a);
}

static void test_cq_ex(void)
{
	struct ibv_cq_ex *x = make_cq_ex(15, IBV_WC_STANDARD_FLAGS, 0, 0), *bad;
	struct ibv_cq *xcq = x ? ibv_cq_ex_to_cq(x) : NULL, *ref = make_cq(15);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_srq *srq = OPS->create_srq(pd, &sa), *srq2 = OPS->create_srq(pd, &sa);
	struct ibv_qp *a, *b, *a2, *b2;
	struct ibv_poll_cq_attr pa = {};
	struct ibv_wc got[8], want[8];
	static const uint64_t unsupported[] = {
		IBV_WC_EX_WITH_COMPLETION_TIMESTAMP, IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
		IBV_WC_EX_WITH_CVLAN, IBV_WC_EX_WITH_FLOW_TAG, IBV_WC_EX_WITH_TM_INFO,
	};
	int i, n, ok = 1;

	if (!tap_ok(x && ref && srq && srq2, "cq_ex: created with IBV_WC_STANDARD_FLAGS"))
		return;
	tap_ok(xcq->cqe == 15 && x->read_byte_len && x->read_imm_data && x->read_qp_num &&
	       x->read_src_qp && x->read_slid && x->read_sl && x->read_dlid_path_bits &&
	       x->read_opcode && x->read_vendor_err && x->read_wc_flags &&
	       !x->read_completion_ts && !x->read_cvlan &&
	       !x->read_flow_tag, "cq_ex: the standard readers set, none for what CQEs lack");
	for (i = 0; i < (int)(sizeof(unsupported) / sizeof(unsupported[0])); i++) {
		bad = make_cq_ex(15, IBV_WC_EX_WITH_BYTE_LEN | unsupported[i], 0, 0);
		ok &= !bad && errno == EOPNOTSUPP;
	}
	tap_ok(ok, "cq_ex: timestamps, CVLAN, flow tag, TM info: EOPNOTSUPP at creation");
	bad = make_cq_ex(15, 0, IBV_CQ_INIT_ATTR_MASK_FLAGS, IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN);
	tap_ok(!bad && errno == EOPNOTSUPP, "cq_ex: IGNORE_OVERRUN: EOPNOTSUPP (cq_oi 0)");
	bad = make_cq_ex(15, 0, 1u << 7, 0);
	tap_ok(!bad && errno == EINVAL, "cq_ex: unknown comp_mask bit: EINVAL");
	bad = make_cq_ex(1u << 16, 0, 0, 0);
	tap_ok(!bad && errno == EINVAL, "cq_ex: cqe = max_cqe: EINVAL");
	bad = make_cq_ex(3, 0, IBV_CQ_INIT_ATTR_MASK_FLAGS, IBV_CREATE_CQ_ATTR_SINGLE_THREADED);
	tap_ok(bad && !to_vcx_cq(ibv_cq_ex_to_cq(bad))->lock.need_lock,
	       "cq_ex: SINGLE_THREADED creates a CQ without a lock");
	if (bad)
		OPS->destroy_cq(ibv_cq_ex_to_cq(bad));

	a = make_qp(IBV_QPT_RC, xcq, xcq, NULL, 16, 0);
	b = make_qp(IBV_QPT_RC, xcq, xcq, srq, 16, 0);
	a2 = make_qp(IBV_QPT_RC, ref, ref, NULL, 16, 0);
	b2 = make_qp(IBV_QPT_RC, ref, ref, srq2, 16, 0);
	if (!tap_ok(a && b && a2 && b2, "cq_ex: two RC pairs with SRQs, one on each CQ"))
		return;
	connect(a, b);
	connect(a2, b2);
	tap_ok(three_ops(a, srq) && three_ops(a2, srq2), "cq_ex: the same three operations on both");
	tap_ok(x->start_poll(x, &pa) == 0, "cq_ex: start_poll finds a completion");
	n = 0;
	do
		read_ex(x, &got[n++]);
	while (n < 8 && x->next_poll(x) == 0);
	x->end_poll(x);
	tap_ok(n == 6 && to_vcx_cq(xcq)->cons_index == 6 &&
	       be32toh(to_vcx_cq(xcq)->dbrec[0]) == 6,
	       "cq_ex: six completions, then ENOENT; end_poll publishes set_ci 6");
	tap_ok(got[0].wr_id == 500 && got[0].opcode == IBV_WC_RECV && got[0].byte_len == 24 &&
	       got[0].imm_data == htobe32(0x51000001) && got[0].qp_num == b->qp_num &&
	       got[0].src_qp == a->qp_num && (got[0].wc_flags & IBV_WC_WITH_IMM) &&
	       (got[0].wc_flags & IBV_WC_GRH) && !memcmp(mem + 4096, mem, 24),
	       "cq_ex: SEND_IMM into the SRQ: wr_id of SRQ WQE 500, byte_len, imm, QPNs, flags");
	tap_ok(got[1].wr_id == 1 && got[1].opcode == IBV_WC_SEND && got[1].qp_num == a->qp_num,
	       "cq_ex: its requester completion");
	tap_ok(got[2].wr_id == 501 && got[2].opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
	       got[2].imm_data == htobe32(0x51000002) && !memcmp(mem + 8192, mem, 24),
	       "cq_ex: WRITE_IMM: RECV_RDMA_WITH_IMM, SRQ WQE 501, immediate");
	tap_ok(got[4].wr_id == 502 && (got[4].wc_flags & IBV_WC_WITH_INV) &&
	       got[4].invalidated_rkey == 0xbeef02, "cq_ex: SEND_INV: read_invalidated_rkey");
	for (i = 0; i < 6; i++)
		ok &= poll1(ref, &want[i]) == 1 &&
		      same_completion(&got[i], &want[i], a2->qp_num - a->qp_num);
	tap_ok(ok && poll1(ref, &want[6]) == 0,
	       "cq_ex: every read_* equals what ibv_poll_cq reports for the same CQEs (one decoder)");
	tap_ok(x->start_poll(x, &pa) == ENOENT, "cq_ex: start_poll on an empty CQ: ENOENT");
	pa.comp_mask = 1;
	tap_ok(x->start_poll(x, &pa) == EINVAL, "cq_ex: start_poll with a comp_mask: EINVAL");
	pa.comp_mask = 0;

	/* Resize an extended CQ with completions outstanding; errors through read_*. */
	tap_ok(three_ops(a, srq) && OPS->resize_cq(xcq, 31) == 0 && xcq->cqe == 31,
	       "cq_ex: resized 16 -> 32 with 6 completions outstanding");
	n = 0;
	if (x->start_poll(x, &pa) == 0) {
		do
			read_ex(x, &got[n++]);
		while (n < 8 && x->next_poll(x) == 0);
		x->end_poll(x);
	}
	for (i = 0, ok = n == 6; ok && i < 6; i++)
		ok &= got[i].wr_id == (i % 2 ? (uint64_t)(i / 2 + 1) : (uint64_t)(500 + i / 2)) &&
		      got[i].status == IBV_WC_SUCCESS;
	tap_ok(ok && got[2].opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
	       got[2].imm_data == htobe32(0x51000002),
	       "cq_ex: the 6 read across the resize, in order, fields intact");
	{
		struct ibv_sge sge = { (uintptr_t)mem, 8, LKEY };
		struct ibv_send_wr w = send_wr(9, IBV_WR_SEND, &sge);
		struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };

		post_one(a, &w);
		OPS->modify_qp(a, &qa, IBV_QP_STATE);
	}
	i = x->start_poll(x, &pa);
	tap_ok(i == 0 && x->wr_id == 9 &&
	       x->status == IBV_WC_WR_FLUSH_ERR && ibv_wc_read_vendor_err(x) == 0x42 &&
	       ibv_wc_read_qp_num(x) == a->qp_num,
	       "cq_ex: a flushed WQE: status WR_FLUSH_ERR, the model's vendor syndrome 0x42, "
	       "qp_num");
	x->end_poll(x);

	OPS->destroy_qp(a);
	OPS->destroy_qp(b);
	OPS->destroy_qp(a2);
	OPS->destroy_qp(b2);
	OPS->destroy_srq(srq);
	OPS->destroy_srq(srq2);
	tap_ok(OPS->destroy_cq(xcq) == 0 && OPS->destroy_cq(ref) == 0, "cq_ex: teardown");
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
	test_wr_mw();
	test_arm();
	test_resize();
	test_cq_ex();
	tap_ok(dev.protocol_errors == 0, "no protocol errors seen by the device model");
	return tap_done();
}
