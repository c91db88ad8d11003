/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Provider data-path harness: a stand-in for vcx.ko (fake-uverbs.c: the kernel side of
 * include/vcx/abi.h, interposed on libibverbs' ibv_cmd_* helpers) and for the device
 * (device.c: reads the WQEs, doorbell records and UAR doorbells the provider writes,
 * executes them in loopback and writes CQEs in the PRM format). Single-threaded: the
 * "device" runs when the test calls dev_run().
 */
#ifndef VCX_TEST_MODEL_H
#define VCX_TEST_MODEL_H

#include <stdbool.h>
#include <stdint.h>

struct ibv_cq;

#define DEV_MAX_OBJ	16

struct dev_cq {
	bool valid;
	uint32_t cqn;
	uint8_t *buf;
	uint32_t log_nent;
	volatile uint32_t *dbrec;	/* big-endian words */
	uint32_t pi;			/* producer index */
};

struct dev_srq {
	bool valid;
	uint32_t srqn;
	uint8_t *buf;
	uint32_t wqe_shift;
	uint32_t nwqe;
	volatile uint32_t *dbrec;
	uint32_t hw_next;		/* next WQE the device will consume */
	uint16_t consumed;		/* WQEs consumed (16-bit, against the counter) */
};

struct dev_qp {
	bool valid;
	uint32_t qpn;
	int type;			/* enum ibv_qp_type */
	int state;			/* enum ibv_qp_state */
	uint8_t *sq;			/* SQ ring */
	uint32_t sq_wqebbs;
	uint8_t *rq;
	uint32_t rq_cnt;
	uint32_t rq_shift;
	volatile uint32_t *dbrec;
	uint32_t bfreg;
	uint16_t sq_ci;			/* next SQ WQEBB to execute */
	uint16_t rq_ci;			/* next RQ WQE to consume */
	uint32_t last_wqe;		/* WQEBB index of the last executed WQE */
	struct dev_cq *scq, *rcq;
	struct dev_srq *srq;
	uint32_t peer_qpn;		/* RC/UC loopback partner */
};

struct dev {
	uint8_t *uar;			/* the UAR pages (memfd shared with the provider) */
	uint32_t num_uars;
	uint32_t bfregs_per_uar;
	uint32_t bf_reg_size;
	struct dev_cq cq[DEV_MAX_OBJ];
	struct dev_srq srq[DEV_MAX_OBJ];
	struct dev_qp qp[DEV_MAX_OBJ];
	uint32_t last_doorbell_off;	/* UAR offset of the last SQ doorbell seen */
	uint64_t last_doorbell;		/* its 8 bytes, big-endian as read */
	int protocol_errors;		/* what the device saw wrong in what software wrote */
	bool many_doorbells;		/* several posts per dev_run: skip the doorbell check */
	uint32_t srq_limit_events;
};

extern struct dev dev;

struct dev_qp *dev_qp(uint32_t qpn);
struct dev_cq *dev_cq(uint32_t cqn);
struct dev_srq *dev_srq(uint32_t srqn);
void dev_protocol_error(const char *fmt, ...);

/* MODIFY_CQ op_mod 1: the resize CQE into the old ring, then the new ring; 0 or EINVAL. */
int dev_resize_cq(struct dev_cq *cq, uint8_t *buf, uint32_t log_nent);
/* Called by the fake kernel right after a successful resize, before it returns. */
extern void (*fk_after_resize)(struct ibv_cq *cq);
/* Execute every WQE software has published; returns how many ran. */
int dev_run(void);
/* Move a QP to error: flush every outstanding SQ and RQ WQE with a flush CQE. */
void dev_flush_qp(struct dev_qp *qp);
/* The UAR CQ doorbell last written (high dword arm word, low CQN). */
uint64_t dev_cq_doorbell(void);

#endif /* VCX_TEST_MODEL_H */
