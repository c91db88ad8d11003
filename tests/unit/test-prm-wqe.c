// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * include/vcx/prm-wqe.h and include/vcx/abi.h: every encoder against bytes written out by
 * hand from the PRM tables (mlx5-prm-facts.md section 6), every decoder against CQEs
 * assembled byte by byte, and the ABI layouts the kernel will implement.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tap.h"
#include "vcx/abi.h"
#include "vcx/prm-wqe.h"

static void test_ctrl_seg(void)
{
	static const uint8_t want[16] = {
		0x00, 0x12, 0x34, 0x0b,		/* opmod 0, wqe index 0x1234, SEND_IMM */
		0xab, 0xcd, 0xef, 0x03,		/* qpn 0xabcdef, 3 DS */
		0x00, 0x00, 0x00, 0x0a,		/* signature 0, CE = 2 (always), SE */
		0xde, 0xad, 0xbe, 0xef,		/* immediate */
	};
	uint8_t seg[16];

	memset(seg, 0x5a, sizeof(seg));
	vcx_wqe_ctrl_set(seg, VCX_OPCODE_SEND_IMM, 0, 0x1234, 0xabcdef, 3,
			 VCX_WQE_CE_CQE | VCX_WQE_SE_SOLICITED, 0xdeadbeef);
	tap_bytes(seg, want, 16, "ctrl segment bytes");
	tap_u64(vcx_get(seg, VCX_WQE_CTRL_OPCODE), 0x0b, "ctrl opcode field");
	tap_u64(vcx_get(seg, VCX_WQE_CTRL_WQE_INDEX), 0x1234, "ctrl wqe index field");
	tap_u64(vcx_get(seg, VCX_WQE_CTRL_QPN), 0xabcdef, "ctrl qpn field");
	tap_u64(vcx_get(seg, VCX_WQE_CTRL_DS_CNT), 3, "ctrl ds field");
	tap_u64(vcx_get(seg, VCX_WQE_CTRL_CE), 2, "ctrl CE field");
	tap_u64(vcx_get(seg, VCX_WQE_CTRL_SE), 1, "ctrl SE field");
	tap_u64(vcx_get(seg, VCX_WQE_CTRL_IMM), 0xdeadbeef, "ctrl imm field");

	vcx_wqe_ctrl_set(seg, VCX_OPCODE_RDMA_READ, 0, 0xffff, 0x1000001, 0x7f,
			 VCX_WQE_FM_SMALL_AND_FENCE, 0);
	tap_u64(vcx_get(seg, VCX_WQE_CTRL_FENCE_MODE), 4, "fence mode 4 = small and fence");
	tap_u64(seg[11], 0x80, "fm_ce_se byte for IBV_SEND_FENCE is 0x80");
	tap_u64(vcx_get(seg, VCX_WQE_CTRL_QPN), 0x000001, "qpn masked to 24 bits");
	tap_u64(seg[6], 0x01, "qpn low byte beside the DS count");
	tap_u64(seg[7], 0x3f, "ds masked to 6 bits");

	vcx_wqe_ctrl_set(seg, VCX_OPCODE_SEND, 0, 7, 0x12, 2, 0, 0);
	seg[8] = vcx_wqe_signature(seg, 1);
	tap_u64(vcx_xor8(seg, 16), 0xff, "signature makes the WQE XOR to 0xff");
}

static void test_data_segs(void)
{
	static const uint8_t want_data[16] = {
		0x00, 0x00, 0x01, 0x00, 0x11, 0x22, 0x33, 0x44,
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
	};
	static const uint8_t want_end[16] = {
		0, 0, 0, 0, 0x00, 0x00, 0x01, 0x00, 0, 0, 0, 0, 0, 0, 0, 0,
	};
	static const uint8_t want_inl[4] = { 0x80, 0x00, 0x00, 0x05 };
	uint8_t seg[16];

	vcx_wqe_data_seg_set(seg, 0x100, 0x11223344, 0x0102030405060708ull);
	tap_bytes(seg, want_data, 16, "data segment bytes");
	tap_u64(vcx_get64(seg, VCX_WQE_DATA_ADDR), 0x0102030405060708ull, "data addr field");
	memset(seg, 0xff, sizeof(seg));
	vcx_wqe_data_seg_set_end(seg);
	tap_bytes(seg, want_end, 16, "receive terminator: 0 bytes, lkey 0x100");
	vcx_wqe_inline_hdr_set(seg, 5);
	tap_bytes(seg, want_inl, 4, "inline header 0x80000000 | 5");
	tap_u64(vcx_get(seg, VCX_WQE_INLINE_BYTE_COUNT), 5, "inline byte count field");
	tap_u64(vcx_wqe_inline_ds(12), 1, "12 inline bytes + header = 1 DS");
	tap_u64(vcx_wqe_inline_ds(13), 2, "13 inline bytes + header = 2 DS");
}

static void test_raddr_atomic(void)
{
	static const uint8_t want_raddr[16] = {
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
		0xca, 0xfe, 0xf0, 0x0d, 0, 0, 0, 0,
	};
	static const uint8_t want_atomic[16] = {
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2a,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe,
	};
	uint8_t seg[16];

	memset(seg, 0xee, sizeof(seg));
	vcx_wqe_raddr_seg_set(seg, 0x1122334455667788ull, 0xcafef00d);
	tap_bytes(seg, want_raddr, 16, "remote address segment bytes");
	vcx_wqe_atomic_seg_set(seg, 42, 0xfffffffffffffffeull);
	tap_bytes(seg, want_atomic, 16, "atomic segment: swap_add then compare");
}

static void test_av(void)
{
	uint8_t want[48] = {
		0x11, 0x11, 0x11, 0x11, 0, 0, 0, 0,	/* qkey, reserved */
		0x80, 0x12, 0x34, 0x56,			/* extended AV | dqpn */
		0x0a, 0x00, 0xc1, 0x23,			/* SL 5 (RoCE, bits 3:1), sport */
		0, 0, 0, 0,
		0x02, 0x11, 0x22, 0x33, 0x44, 0x55,	/* rmac */
		0x20, 0x40,				/* tclass, hop limit */
		0x40, 0x31, 0x23, 0x45,			/* grh, sgid 3, flow label */
	};
	uint8_t av[48];
	int i;

	for (i = 0; i < 16; i++)
		want[32 + i] = (uint8_t)(0xf0 + i);
	memset(av, 0, sizeof(av));
	vcx_set(av, VCX_WQE_AV_SL_ROCE, 5);
	vcx_set(av, VCX_WQE_AV_RLID_UDP_SPORT, 0xc123);
	memcpy(vcx_ptr(av, VCX_WQE_AV_RMAC), "\x02\x11\x22\x33\x44\x55", 6);
	vcx_set(av, VCX_WQE_AV_TCLASS, 0x20);
	vcx_set(av, VCX_WQE_AV_HOP_LIMIT, 0x40);
	vcx_set(av, VCX_WQE_AV_GRH, 1);
	vcx_set(av, VCX_WQE_AV_SGID_INDEX, 3);
	vcx_set(av, VCX_WQE_AV_FLOW_LABEL, 0x12345);
	for (i = 0; i < 16; i++)
		((uint8_t *)vcx_ptr(av, VCX_WQE_AV_RGID))[i] = (uint8_t)(0xf0 + i);
	vcx_wqe_av_set_dest(av, 0x11111111, 0x123456);
	tap_bytes(av, want, 48, "datagram segment (address vector) bytes");
	tap_u64(vcx_get(av, VCX_WQE_AV_DQPN), 0x123456, "AV dqpn field");
	tap_u64(vcx_get(av, VCX_WQE_AV_EXT), 1, "AV extended flag");
}

static void test_srq_next(void)
{
	static const uint8_t want[16] = { 0, 0, 0xbe, 0xef, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	uint8_t seg[16] = { 0 };

	vcx_srq_next_set(seg, 0xbeef);
	tap_bytes(seg, want, 16, "SRQ next segment: next_wqe_index at byte 2");
	tap_u64(vcx_srq_next_get(seg), 0xbeef, "SRQ next index read back");
}

static void test_doorbells(void)
{
	tap_u64(vcx_cq_arm_word(2, VCX_CQ_DB_CMD_NOTIFY_SOLICITED, 0x123456), 0x21123456,
		"CQ arm word: sn 2, solicited, ci");
	tap_u64(vcx_cq_arm_word(7, VCX_CQ_DB_CMD_NOTIFY, 0x1000001), 0x30000001,
		"CQ arm word: sn and ci masked");
	{
		uint8_t db[8];

		vcx_be32_store(db, vcx_cq_arm_word(1, 0, 5));
		vcx_be32_store(db + 4, 0x42);
		tap_u64(vcx_get(db, VCX_CQ_DB_ARM_SN), 1, "UAR CQ doorbell sn field");
		tap_u64(vcx_get(db, VCX_CQ_DB_CI), 5, "UAR CQ doorbell ci field");
		tap_u64(vcx_get(db, VCX_CQ_DB_CQN), 0x42, "UAR CQ doorbell cqn field");
	}
	tap_u64(vcx_uar_bf_offset(0, 0), 0x800, "bfreg 0 half 0 at 0x800");
	tap_u64(vcx_uar_bf_offset(1, 1), 0xb00, "bfreg 1 half 1 at 0xb00");
	tap_u64(vcx_uar_bf_offset(3, 1), 0xf00, "bfreg 3 half 1 at 0xf00");
	tap_u64(VCX_QP_DBR_RECV, 0, "QP record: receive counter in dword 0");
	tap_u64(VCX_QP_DBR_SEND, 4, "QP record: send counter in dword 1");
	tap_u64(VCX_CQ_DBR_ARM, 4, "CQ record: arm word in dword 1");
}

/* A responder CQE written out as the PRM table lays it out. */
static void make_resp_cqe(uint8_t *cqe)
{
	memset(cqe, 0, 64);
	cqe[0x11] = 0x05;				/* ml_path */
	cqe[0x16] = 0x12; cqe[0x17] = 0x34;		/* slid */
	cqe[0x18] = 0x23; cqe[0x19] = 0x00; cqe[0x1a] = 0x00; cqe[0x1b] = 0x99;
	cqe[0x20] = 0xff; cqe[0x21] = 0x00; cqe[0x22] = 0x00; cqe[0x23] = 0x05;
	cqe[0x24] = 0x12; cqe[0x25] = 0x34; cqe[0x26] = 0x56; cqe[0x27] = 0x78;
	cqe[0x2c] = 0x00; cqe[0x2d] = 0x01; cqe[0x2e] = 0x00; cqe[0x2f] = 0x40;
	cqe[0x38] = 0x0a; cqe[0x39] = 0x00; cqe[0x3a] = 0x01; cqe[0x3b] = 0x02;
	cqe[0x3c] = 0x00; cqe[0x3d] = 0x07;
	cqe[0x3f] = 0x33;				/* RESP_SEND_IMM, SE, owner 1 */
}

static void test_cqe_fields(void)
{
	uint8_t cqe[64];

	make_resp_cqe(cqe);
	tap_u64(vcx_cqe_opcode(cqe), VCX_CQE_RESP_SEND_IMM, "CQE opcode nibble");
	tap_u64(vcx_get(cqe, VCX_CQE_OWNER), 1, "CQE owner bit");
	tap_u64(vcx_get(cqe, VCX_CQE_SE), 1, "CQE solicited bit");
	tap_u64(vcx_get(cqe, VCX_CQE_FORMAT), 0, "CQE format");
	tap_u64(vcx_get(cqe, VCX_CQE_BYTE_CNT), 0x10040, "CQE byte_cnt");
	tap_u64(vcx_get(cqe, VCX_CQE_IMM_INVAL_PKEY), 0x12345678, "CQE immediate");
	tap_u64(vcx_get(cqe, VCX_CQE_SRQN_UIDX), 5, "CQE srqn (24 bits, top byte ignored)");
	tap_u64(vcx_get(cqe, VCX_CQE_RQPN), 0x99, "CQE remote qpn");
	tap_u64(vcx_get(cqe, VCX_CQE_GRH), 2, "CQE grh bits 29:28");
	tap_u64(vcx_get(cqe, VCX_CQE_SL), 3, "CQE sl bits 27:24");
	tap_u64(vcx_get(cqe, VCX_CQE_SLID), 0x1234, "CQE slid");
	tap_u64(vcx_get(cqe, VCX_CQE_ML_PATH), 5, "CQE path bits");
	tap_u64(vcx_get(cqe, VCX_CQE_SOP_OPCODE), 0x0a, "CQE send opcode byte");
	tap_u64(vcx_get(cqe, VCX_CQE_QPN), 0x102, "CQE local qpn");
	tap_u64(vcx_get(cqe, VCX_CQE_WQE_COUNTER), 7, "CQE wqe_counter");

	memset(cqe, 0, sizeof(cqe));
	cqe[0x36] = 0x93;
	cqe[0x37] = VCX_CQE_SYND_REMOTE_ACCESS_ERR;
	cqe[0x3f] = vcx_cqe_make_op_own(VCX_CQE_REQ_ERR, 0, 0, 1);
	tap_u64(cqe[0x3f], 0xd1, "op_own of a requester error CQE, owner 1");
	tap_u64(vcx_get(cqe, VCX_CQE_SYNDROME), 0x13, "error CQE syndrome at 0x37");
	tap_u64(vcx_get(cqe, VCX_CQE_VENDOR_ERR_SYND), 0x93, "error CQE vendor syndrome at 0x36");
}

/* The device writes entry pi % 4 with owner (pi >> 2) & 1; software polls at ci. */
static void test_cqe_ownership(void)
{
	uint8_t ring[4][64];
	uint32_t pi, ci;
	int ok = 1;

	for (pi = 0; pi < 4; pi++)
		vcx_cqe_init(ring[pi]);
	tap_u64(ring[0][0x3f], 0xf0, "new CQE: opcode INVALID, owner 0");
	for (ci = 0; ci < 4; ci++)
		ok &= !vcx_cqe_is_sw_owned(ring[ci], ci, 2);
	tap_ok(ok, "fresh ring: nothing for software on the first pass");

	ok = 1;
	for (pi = 0, ci = 0; pi < 12; pi++) {
		uint8_t *e = ring[pi & 3];

		/* Before the write the entry is stale for this pass. */
		ok &= !vcx_cqe_is_sw_owned(e, ci, 2);
		memset(e, 0, 63);
		e[0x3f] = vcx_cqe_make_op_own(VCX_CQE_REQ, 0, 0, vcx_cqe_owner_for(pi, 2));
		ok &= vcx_cqe_is_sw_owned(e, ci, 2);
		ci++;
	}
	tap_ok(ok, "three passes: each entry flips to software exactly when written");
	tap_ok(!vcx_cqe_is_sw_owned(ring[0], 12, 2), "fourth pass: pass-3 entry is stale");
	tap_u64(vcx_cqe_owner_for(0x1000000, 24), 1, "owner bit for a 2^24 CQ's second pass");
}

static void test_abi(void)
{
	tap_u64(sizeof(struct vcx_alloc_ucontext_req), 16, "alloc_ucontext req is 16 bytes");
	tap_u64(sizeof(struct vcx_alloc_ucontext_resp), 80, "alloc_ucontext resp is 80 bytes");
	tap_u64(offsetof(struct vcx_alloc_ucontext_resp, hca_core_clock_offset), 72,
		"resp.hca_core_clock_offset at 72");
	tap_u64(offsetof(struct vcx_alloc_ucontext_resp, num_ports), 60, "resp.num_ports at 60");
	tap_u64(offsetof(struct vcx_alloc_ucontext_resp, atomic_caps), 64,
		"resp.atomic_caps at 64");
	tap_u64(sizeof(struct vcx_alloc_pd_resp), 4, "alloc_pd resp is 4 bytes");
	tap_u64(sizeof(struct vcx_create_cq_req), 24, "create_cq req is 24 bytes");
	tap_u64(sizeof(struct vcx_create_cq_resp), 8, "create_cq resp is 8 bytes");
	tap_u64(sizeof(struct vcx_create_qp_req), 32, "create_qp req is 32 bytes");
	tap_u64(offsetof(struct vcx_create_qp_req, rq_wqe_shift), 24, "qp req.rq_wqe_shift at 24");
	tap_u64(sizeof(struct vcx_create_qp_resp), 8, "create_qp resp is 8 bytes");
	tap_u64(sizeof(struct vcx_create_srq_req), 32, "create_srq req is 32 bytes");
	tap_u64(sizeof(struct vcx_create_srq_resp), 8, "create_srq resp is 8 bytes");
	tap_u64(sizeof(struct vcx_create_ah_resp), 8, "create_ah resp is 8 bytes");
	tap_u64(vcx_mmap_offset(VCX_MMAP_UAR, 3, 4096), 0x3000, "mmap offset of UAR 3");
	tap_u64(vcx_mmap_offset(2, 1, 4096), 0x201000, "mmap offset: command in bits 8+");
	tap_u64(vcx_mmap_cmd(0x201), 2, "mmap command decoded from pgoff");
	tap_u64(vcx_mmap_index(0x201), 1, "mmap index decoded from pgoff");
}

int main(void)
{
	test_ctrl_seg();
	test_data_segs();
	test_raddr_atomic();
	test_av();
	test_srq_next();
	test_doorbells();
	test_cqe_fields();
	test_cqe_ownership();
	test_abi();
	return tap_done();
}
