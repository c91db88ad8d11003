/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Provider data-path harness: what the test files share (test-datapath.c defines it):
 * the context, the PD, the "registered" memory and the helpers that create and connect
 * objects and post through the provider's ops table.
 */
#ifndef VCX_TEST_HARNESS_H
#define VCX_TEST_HARNESS_H

#include <stdint.h>

#include <infiniband/driver.h>

extern const struct verbs_context_ops *fk_ctx_ops;
#define OPS	fk_ctx_ops

extern struct ibv_context *ctx;
extern struct ibv_pd *pd;
extern uint8_t mem[1 << 20];		/* "registered" memory; keys are not translated */

#define LKEY	0x1234u
#define RKEY	0x5678u

struct ibv_cq *make_cq(int n);
struct ibv_qp *make_qp(enum ibv_qp_type type, struct ibv_cq *scq, struct ibv_cq *rcq,
		       struct ibv_srq *srq, uint32_t nsend, uint32_t nrecv);
void bring_up(struct ibv_qp *qp);
void connect(struct ibv_qp *a, struct ibv_qp *b);
int post_recv(struct ibv_qp *qp, uint64_t wr_id, void *addr, uint32_t len);
int post_one(struct ibv_qp *qp, struct ibv_send_wr *wr);
int poll1(struct ibv_cq *cq, struct ibv_wc *wc);

/* A posting thread of the threads tests. */
struct poster {
	struct ibv_qp *qp;
	struct ibv_srq *srq;
	int id;
	int failures;
};

/* test-qp-ex.c */
void test_create_qp_ex(void);
void test_wr_twins(void);
void test_wr_ud(void);
void test_wr_abort_and_errors(void);
void test_post_states(void);
void test_wr_threads(void);
void test_wr_mw(void);

#endif /* VCX_TEST_HARNESS_H */
