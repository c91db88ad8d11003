// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rdma-core-provider/srq_list.c: the SRQ WQE chain and wait queue, checked on the WQE
 * buffer bytes (next_wqe_index, big-endian at byte 2 of every WQE), and against a model
 * of the device that consumes WQEs by following those bytes. Also table.c, the QPN/SRQN
 * lookup used by poll_cq.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "srq_list.h"
#include "table.h"

#define SHIFT	5	/* 32-byte WQEs: next segment + one data segment */

static uint8_t buf[64 << SHIFT];

/* next_wqe_index of WQE i, read from the bytes as the device does. */
static unsigned int next_of(unsigned int i)
{
	const uint8_t *w = buf + (i << SHIFT);

	return (unsigned int)w[2] << 8 | w[3];
}

static void test_init(void)
{
	struct vcx_srq_list l;
	int ok = 1;
	unsigned int i;

	memset(buf, 0xcc, sizeof(buf));
	vcx_srq_list_init(&l, buf, SHIFT, 4, 8);
	for (i = 0; i < 3; i++)
		ok &= next_of(i) == i + 1;
	for (i = 4; i < 7; i++)
		ok &= next_of(i) == i + 1;
	tap_ok(ok, "init links 0->1->2->3 and the wait queue 4->5->6->7");
	tap_ok(buf[0] == 0xcc && buf[1] == 0xcc && buf[2] == 0x00 && buf[3] == 0x01,
	       "WQE 0: next_wqe_index 00 01 at bytes 2..3, reserved bytes untouched");
	tap_ok(buf[(3 << SHIFT) + 2] == 0xcc, "the chain tail's next pointer is not written");
	tap_ok(l.head == 0 && l.tail == 3 && l.waitq_head == 4 && l.waitq_tail == 7,
	       "head 0, tail 3, wait queue 4..7");
}

static void test_take_put_waitq(void)
{
	struct vcx_srq_list l;
	int32_t a, b, c;

	memset(buf, 0, sizeof(buf));
	vcx_srq_list_init(&l, buf, SHIFT, 4, 8);
	a = vcx_srq_list_take(&l);
	b = vcx_srq_list_take(&l);
	c = vcx_srq_list_take(&l);
	tap_ok(a == 0 && b == 1 && c == 2, "takes follow the chain: 0, 1, 2");
	tap_ok(vcx_srq_list_take(&l) == -1, "chain of 4 holds 3 posted WQEs: the 4th is refused");

	vcx_srq_list_put(&l, 1);
	tap_ok(next_of(7) == 1 && l.waitq_tail == 1, "completed WQE 1 joins the wait queue end");
	tap_ok(next_of(3) == 4 && l.tail == 4 && l.waitq_head == 5,
	       "the oldest cooled WQE (4) is linked after the tail");
	tap_ok(vcx_srq_list_take(&l) == 3, "the old tail is now postable");
	tap_ok(vcx_srq_list_take(&l) == -1, "and the chain is full again");

	vcx_srq_list_put(&l, 0);
	vcx_srq_list_put(&l, 2);
	tap_ok(vcx_srq_list_take(&l) == 4 && vcx_srq_list_take(&l) == 5,
	       "wait queue WQEs come back in order: 4, 5");
	tap_ok(l.head == 6 && l.tail == 6, "head meets tail: full");
	/* Wait queue is now 7 -> 1 -> 0 -> 2: WQE 1 returns only after 7. */
	vcx_srq_list_put(&l, 3);
	vcx_srq_list_put(&l, 4);
	tap_ok(vcx_srq_list_take(&l) == 6 && vcx_srq_list_take(&l) == 7,
	       "two completions release 7 ...");
	vcx_srq_list_put(&l, 5);
	tap_ok(vcx_srq_list_take(&l) == 1, "... and WQE 1 after a full wait-queue length");
}

static void test_no_waitq(void)
{
	struct vcx_srq_list l;

	memset(buf, 0, sizeof(buf));
	vcx_srq_list_init(&l, buf, SHIFT, 4, 4);
	tap_ok(l.waitq_head == -1, "no wait queue when the buffer is the chain");
	vcx_srq_list_take(&l);
	vcx_srq_list_take(&l);
	vcx_srq_list_put(&l, 0);
	tap_ok(l.tail == 0 && next_of(3) == 0, "without a wait queue a WQE relinks at once");
	tap_ok(vcx_srq_list_take(&l) == 2 && vcx_srq_list_take(&l) == 3 &&
	       vcx_srq_list_take(&l) == -1, "2 and 3 post; 0 is the new tail sentinel");
}

/*
 * The device model: a read pointer that starts at WQE 0, consumes a WQE when software has
 * posted more than it consumed (the doorbell counter) and moves on by reading the
 * consumed WQE's next_wqe_index from the buffer. Completions come back in random order.
 * Whatever software does, the device must consume exactly the WQEs software posted, in
 * posting order, and never one that is still outstanding.
 */
static int simulate(uint32_t chain_len, uint32_t nwqe, unsigned int seed, int steps)
{
	struct vcx_srq_list l;
	uint32_t posted_order[4096], consumed[64];
	uint8_t outstanding[64] = { 0 };
	uint32_t hw = 0, nposted = 0, nconsumed = 0, ndone = 0, ncons_pending = 0;
	int s;

	memset(buf, 0, sizeof(buf));
	vcx_srq_list_init(&l, buf, SHIFT, chain_len, nwqe);
	srand(seed);
	for (s = 0; s < steps; s++) {
		int what = rand() % 3;

		if (what == 0) {
			int32_t idx = vcx_srq_list_take(&l);

			if (idx < 0) {
				if (nposted - ndone < chain_len - 1)
					return 0;	/* refused below capacity */
				continue;
			}
			if (outstanding[idx])
				return 0;		/* handed out twice */
			outstanding[idx] = 1;
			posted_order[nposted++ % 4096] = (uint32_t)idx;
		} else if (what == 1 && nconsumed < nposted) {
			if (hw != posted_order[nconsumed % 4096])
				return 0;		/* device diverged from software */
			consumed[ncons_pending++] = hw;
			hw = next_of(hw);
			nconsumed++;
		} else if (what == 2 && ncons_pending) {
			uint32_t k = (uint32_t)rand() % ncons_pending;
			uint32_t idx = consumed[k];

			consumed[k] = consumed[--ncons_pending];
			outstanding[idx] = 0;
			vcx_srq_list_put(&l, idx);
			ndone++;
		}
	}
	return nposted > 1000 && ndone > 1000;
}

static void test_device_model(void)
{
	tap_ok(simulate(8, 16, 1, 20000), "device model: chain 8 + wait queue 8");
	tap_ok(simulate(4, 8, 2, 20000), "device model: chain 4 + wait queue 4");
	tap_ok(simulate(16, 16, 3, 20000), "device model: chain 16, no wait queue");
	tap_ok(simulate(2, 4, 4, 20000), "device model: smallest SRQ (1 WQE) + wait queue");
}

static void test_table(void)
{
	static struct vcx_table t;
	int a, b;

	tap_ok(vcx_table_find(&t, 0x123456) == NULL, "table: empty lookup");
	tap_ok(vcx_table_insert(&t, 0x123456, &a) == 0 && vcx_table_insert(&t, 0x123457, &b) == 0,
	       "table: two inserts in one leaf");
	tap_ok(vcx_table_find(&t, 0x123456) == &a && vcx_table_find(&t, 0x123457) == &b,
	       "table: both found");
	tap_ok(vcx_table_find(&t, 0xff123456) == &a, "table: lookups use 24 bits");
	tap_ok(vcx_table_insert(&t, 0x123456, &b) == -1, "table: a taken number is refused");
	vcx_table_remove(&t, 0x123456);
	tap_ok(vcx_table_find(&t, 0x123456) == NULL && vcx_table_find(&t, 0x123457) == &b,
	       "table: remove one, the other stays");
	vcx_table_remove(&t, 0x123457);
	tap_ok(t.leaf[0x123] == NULL, "table: the empty leaf is freed");
	vcx_table_cleanup(&t);
}

int main(void)
{
	test_init();
	test_take_put_waitq();
	test_no_waitq();
	test_device_model();
	test_table();
	return tap_done();
}
