// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rdma-core-provider/sq_wqe.c: one send WQE per opcode, compared byte for byte with WQEs
 * written out by hand from the PRM segment tables. The ring is pre-filled with 0xcc so
 * stray writes show up as differences.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "tap.h"
#include "sq_wqe.h"
#include "vcx/prm-wqe.h"

#define QPN		0x000123u
#define FILL		0xcc

static uint8_t ring_buf[4 * 64];
static const struct vcx_sq_ring ring4 = { ring_buf, 4 };

static void ring_reset(void)
{
	memset(ring_buf, FILL, sizeof(ring_buf));
}

static struct vcx_send_desc desc(uint8_t opcode, uint8_t fm_ce_se,
				 const struct vcx_sge *sgl, uint32_t n)
{
	struct vcx_send_desc d;

	memset(&d, 0, sizeof(d));
	d.opcode = opcode;
	d.fm_ce_se = fm_ce_se;
	d.sg_list = sgl;
	d.num_sge = n;
	return d;
}

static const struct vcx_sge sge_a = { 0x12345000ull, 0x40, 0x1001 };

#define DATA_A	0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x10, 0x01, \
		0x00, 0x00, 0x00, 0x00, 0x12, 0x34, 0x50, 0x00
#define FILL16	FILL, FILL, FILL, FILL, FILL, FILL, FILL, FILL, \
		FILL, FILL, FILL, FILL, FILL, FILL, FILL, FILL

static void check(const struct vcx_send_desc *d, uint32_t cur_post, const uint8_t *want,
		  uint32_t want_ds, const char *name)
{
	uint32_t ds = 0;
	int err;
	char label[128];

	ring_reset();
	err = vcx_sq_build_wqe(&ring4, cur_post, QPN, d, 64, 16, &ds);
	snprintf(label, sizeof(label), "%s: built", name);
	tap_u64((uint64_t)err, 0, label);
	snprintf(label, sizeof(label), "%s: ds count", name);
	tap_u64(ds, want_ds, label);
	snprintf(label, sizeof(label), "%s: bytes", name);
	tap_bytes(vcx_sq_ring_at(&ring4, cur_post, 0), want, 64, label);
}

static void test_send_family(void)
{
	static const uint8_t send[64] = {
		0x00, 0x00, 0x00, 0x0a, 0x00, 0x01, 0x23, 0x02,
		0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00,
		DATA_A, FILL16, FILL16,
	};
	static const uint8_t send_imm[64] = {
		0x00, 0x00, 0x05, 0x0b, 0x00, 0x01, 0x23, 0x02,	/* wqe index 5 */
		0x00, 0x00, 0x00, 0x02, 0xaa, 0xbb, 0xcc, 0xdd,	/* solicited, unsignaled */
		DATA_A, FILL16, FILL16,
	};
	static const uint8_t send_inv[64] = {
		0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x23, 0x02,
		0x00, 0x00, 0x00, 0x08, 0x00, 0xc0, 0xff, 0xee,	/* rkey to invalidate */
		DATA_A, FILL16, FILL16,
	};
	struct vcx_send_desc d;

	d = desc(VCX_OPCODE_SEND, VCX_WQE_CE_CQE, &sge_a, 1);
	check(&d, 0, send, 2, "RC SEND");

	d = desc(VCX_OPCODE_SEND_IMM, VCX_WQE_SE_SOLICITED, &sge_a, 1);
	d.imm = 0xaabbccdd;
	check(&d, 5, send_imm, 2, "SEND_IMM at WQEBB 5 (slot 1)");
	tap_ok(ring_buf[64 + 3] == 0x0b, "SEND_IMM landed in slot 1 of the ring");

	d = desc(VCX_OPCODE_SEND_INVAL, VCX_WQE_CE_CQE, &sge_a, 1);
	d.imm = 0x00c0ffee;
	check(&d, 0, send_inv, 2, "SEND_INV");
}

static void test_rdma(void)
{
	static const uint8_t write[64] = {
		0x00, 0x00, 0x00, 0x08, 0x00, 0x01, 0x23, 0x03,
		0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x7f, 0x00, 0x00, 0x00, 0x10, 0x00,	/* raddr */
		0x00, 0x00, 0x20, 0x02, 0x00, 0x00, 0x00, 0x00,	/* rkey, reserved */
		DATA_A, FILL16,
	};
	static const uint8_t write_imm[64] = {
		0x00, 0x00, 0x00, 0x09, 0x00, 0x01, 0x23, 0x03,
		0x00, 0x00, 0x00, 0x08, 0x01, 0x02, 0x03, 0x04,
		0x00, 0x00, 0x7f, 0x00, 0x00, 0x00, 0x10, 0x00,
		0x00, 0x00, 0x20, 0x02, 0x00, 0x00, 0x00, 0x00,
		DATA_A, FILL16,
	};
	static const uint8_t read[64] = {
		0x00, 0x00, 0x00, 0x10, 0x00, 0x01, 0x23, 0x03,
		0x00, 0x00, 0x00, 0x88, 0x00, 0x00, 0x00, 0x00,	/* fenced, signaled */
		0x00, 0x00, 0x7f, 0x00, 0x00, 0x00, 0x10, 0x00,
		0x00, 0x00, 0x20, 0x02, 0x00, 0x00, 0x00, 0x00,
		DATA_A, FILL16,
	};
	struct vcx_send_desc d;

	d = desc(VCX_OPCODE_RDMA_WRITE, VCX_WQE_CE_CQE, &sge_a, 1);
	d.has_raddr = true;
	d.raddr = 0x7f0000001000ull;
	d.rkey = 0x2002;
	check(&d, 0, write, 3, "RDMA_WRITE");

	d.opcode = VCX_OPCODE_RDMA_WRITE_IMM;
	d.imm = 0x01020304;
	check(&d, 0, write_imm, 3, "RDMA_WRITE_IMM");

	d.opcode = VCX_OPCODE_RDMA_READ;
	d.imm = 0;
	d.fm_ce_se = VCX_WQE_CE_CQE | VCX_WQE_FM_SMALL_AND_FENCE;
	check(&d, 0, read, 3, "RDMA_READ with fence");
}

static void test_atomics(void)
{
	static const struct vcx_sge result = { 0x9000ull, 8, 0x77 };
	static const uint8_t cs[64] = {
		0x00, 0x00, 0x00, 0x11, 0x00, 0x01, 0x23, 0x04,
		0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xa0, 0x00,	/* raddr 0xa000 */
		0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00,	/* rkey 5 */
		0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,	/* swap */
		0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22,	/* compare */
		0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x77,	/* 8-byte result */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x90, 0x00,
	};
	static const uint8_t fa[64] = {
		0x00, 0x00, 0x00, 0x12, 0x00, 0x01, 0x23, 0x04,
		0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xa0, 0x00,
		0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03,	/* add 3 */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,	/* compare 0 */
		0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x77,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x90, 0x00,
	};
	struct vcx_send_desc d;

	d = desc(VCX_OPCODE_ATOMIC_CS, VCX_WQE_CE_CQE, &result, 1);
	d.has_raddr = true;
	d.raddr = 0xa000;
	d.rkey = 5;
	d.has_atomic = true;
	d.swap_add = 0x1111111111111111ull;
	d.compare = 0x2222222222222222ull;
	check(&d, 0, cs, 4, "ATOMIC_CS");

	d.opcode = VCX_OPCODE_ATOMIC_FA;
	d.swap_add = 3;
	d.compare = 0;
	check(&d, 0, fa, 4, "ATOMIC_FA");
}

static void test_ud(void)
{
	uint8_t av[48], want[128];
	struct vcx_send_desc d;
	uint32_t ds;
	int i;

	for (i = 0; i < 48; i++)
		av[i] = (uint8_t)i;
	d = desc(VCX_OPCODE_SEND, VCX_WQE_CE_CQE, &sge_a, 1);
	d.av = av;
	d.qkey = 0x11111111;
	d.dqpn = 0x42;

	memset(want, FILL, sizeof(want));
	memcpy(want, (const uint8_t[16]){ 0x00, 0x00, 0x00, 0x0a, 0x00, 0x01, 0x23, 0x05,
					   0x00, 0x00, 0x00, 0x08, 0, 0, 0, 0 }, 16);
	memcpy(want + 16, av, 48);
	memcpy(want + 16, (const uint8_t[12]){ 0x11, 0x11, 0x11, 0x11, 0, 0, 0, 0,
					       0x80, 0x00, 0x00, 0x42 }, 12);
	memcpy(want + 64, (const uint8_t[16]){ DATA_A }, 16);

	ring_reset();
	tap_u64((uint64_t)vcx_sq_build_wqe(&ring4, 2, QPN, &d, 64, 16, &ds), 0, "UD SEND: built");
	want[2] = 0x02;		/* wqe index 2 */
	tap_u64(ds, 5, "UD SEND: ds = ctrl + 3 (AV) + data");
	tap_bytes(ring_buf + 128, want, 128, "UD SEND: two WQEBBs, AV then data");
	tap_u64(vcx_wqe_wqebbs(ds), 2, "UD SEND takes 2 WQEBBs");
}

static void test_inline(void)
{
	static const struct vcx_sge hello = { (uintptr_t)"hello", 5, 0 };
	static const uint8_t want[64] = {
		0x00, 0x00, 0x00, 0x0a, 0x00, 0x01, 0x23, 0x02,
		0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00,
		0x80, 0x00, 0x00, 0x05, 'h', 'e', 'l', 'l',
		'o', 0, 0, 0, 0, 0, 0, 0,			/* zero padding to 16 */
		FILL16, FILL16,
	};
	struct vcx_send_desc d = desc(VCX_OPCODE_SEND, VCX_WQE_CE_CQE, &hello, 1);
	uint32_t ds;

	d.inline_data = true;
	check(&d, 0, want, 2, "inline SEND of 5 bytes");

	ring_reset();
	tap_u64((uint64_t)vcx_sq_build_wqe(&ring4, 0, QPN, &d, 4, 16, &ds), EINVAL,
		"inline longer than max_inline is refused");
}

/* A 2-WQEBB ring, WQE at WQEBB 1: the inline data runs off the end and wraps to 0. */
static void test_inline_wrap(void)
{
	uint8_t buf[128], want[128], payload[60];
	struct vcx_sq_ring ring2 = { buf, 2 };
	struct vcx_sge sge;
	struct vcx_send_desc d;
	uint32_t ds;
	int i;

	for (i = 0; i < 60; i++)
		payload[i] = (uint8_t)i;
	sge.addr = (uintptr_t)payload;
	sge.length = 60;
	sge.lkey = 0;
	d = desc(VCX_OPCODE_RDMA_WRITE, VCX_WQE_CE_CQE, &sge, 1);
	d.has_raddr = true;
	d.raddr = 0x1000;
	d.rkey = 9;
	d.inline_data = true;

	memset(buf, FILL, sizeof(buf));
	memset(want, FILL, sizeof(want));
	for (i = 0; i < 32; i++)
		want[i] = (uint8_t)(28 + i);
	memcpy(want + 64, (const uint8_t[16]){ 0x00, 0x00, 0x01, 0x08, 0x00, 0x01, 0x23, 0x06,
					       0x00, 0x00, 0x00, 0x08, 0, 0, 0, 0 }, 16);
	memcpy(want + 80, (const uint8_t[16]){ 0, 0, 0, 0, 0, 0, 0x10, 0x00,
					       0, 0, 0, 9, 0, 0, 0, 0 }, 16);
	memcpy(want + 96, (const uint8_t[4]){ 0x80, 0x00, 0x00, 0x3c }, 4);
	for (i = 0; i < 28; i++)
		want[100 + i] = (uint8_t)i;

	tap_u64((uint64_t)vcx_sq_build_wqe(&ring2, 1, QPN, &d, 64, 16, &ds), 0,
		"wrapping inline WRITE: built");
	tap_u64(ds, 6, "wrapping inline WRITE: ds = ctrl + raddr + 4");
	tap_bytes(buf, want, 128, "wrapping inline WRITE: bytes across the ring end");
}

static void test_sge_rules(void)
{
	static const struct vcx_sge two[2] = { { 0x5000, 0, 1 }, { 0x12345000ull, 0x40, 0x1001 } };
	static const struct vcx_sge five[5] = {
		{ 1, 1, 1 }, { 2, 1, 1 }, { 3, 1, 1 }, { 4, 1, 1 }, { 5, 1, 1 },
	};
	static const uint8_t want[64] = {
		0x00, 0x00, 0x00, 0x0a, 0x00, 0x01, 0x23, 0x02,
		0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00,
		DATA_A, FILL16, FILL16,
	};
	struct vcx_send_desc d = desc(VCX_OPCODE_SEND, VCX_WQE_CE_CQE, two, 2);
	uint32_t ds;

	check(&d, 0, want, 2, "zero-length gather entry is skipped");
	d = desc(VCX_OPCODE_SEND, VCX_WQE_CE_CQE, five, 5);
	ring_reset();
	tap_u64((uint64_t)vcx_sq_build_wqe(&ring4, 0, QPN, &d, 64, 4, &ds), EINVAL,
		"more DS than the QP's WQE size is refused");
	tap_u64(vcx_wqe_wqebbs(4), 1, "4 DS fit one WQEBB");
	tap_u64(vcx_wqe_wqebbs(5), 2, "5 DS need two WQEBBs");
}

/* XRC_SEND: the XRC segment (remote SRQ number, dword 0 bits 23:0) right after the control
 * segment and counted in the DS, then what RC carries. */
static void test_xrc(void)
{
	static const uint8_t send[64] = {
		0x00, 0x00, 0x00, 0x0a, 0x00, 0x01, 0x23, 0x03,	/* ds 3 */
		0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00,
		0x00, 0xab, 0xcd, 0xef, 0x00, 0x00, 0x00, 0x00,	/* XRC: SRQ 0xabcdef */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		DATA_A, FILL16,
	};
	static const uint8_t write[64] = {
		0x00, 0x00, 0x00, 0x08, 0x00, 0x01, 0x23, 0x04,	/* ds 4 */
		0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x42, 0x00, 0x00, 0x00, 0x00,	/* XRC: SRQ 0x42 */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x7f, 0x00, 0x00, 0x00, 0x10, 0x00,	/* raddr */
		0x00, 0x00, 0x20, 0x02, 0x00, 0x00, 0x00, 0x00,
		DATA_A,
	};
	struct vcx_send_desc d;

	d = desc(VCX_OPCODE_SEND, VCX_WQE_CE_CQE, &sge_a, 1);
	d.has_xrc = true;
	d.xrc_srqn = 0xabcdef;
	check(&d, 0, send, 3, "XRC SEND");

	d = desc(VCX_OPCODE_RDMA_WRITE, VCX_WQE_CE_CQE, &sge_a, 1);
	d.has_xrc = true;
	d.xrc_srqn = 0x42;
	d.has_raddr = true;
	d.raddr = 0x7f0000001000ull;
	d.rkey = 0x2002;
	check(&d, 0, write, 4, "XRC RDMA_WRITE");
}

int main(void)
{
	test_send_family();
	test_rdma();
	test_atomics();
	test_ud();
	test_inline();
	test_inline_wrap();
	test_sge_rules();
	test_xrc();
	return tap_done();
}
