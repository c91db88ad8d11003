/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vcx provider: the linked list of SRQ WQEs.
 *
 * An SRQ buffer is an array of WQEs chained by the next_wqe_index of their "next" segment
 * (prm-wqe.h). The device consumes WQEs by following the chain and reports each consumed
 * index in a CQE; software fills WQEs at the head of the chain and relinks completed ones
 * at its tail. Two rules shape the code, as in libmlx5:
 *
 * - The tail WQE is never handed out: the device has consumed everything before it and
 *   needs its next pointer to find the following WQE, so the chain always keeps one
 *   unposted WQE at its end. "head == tail" means full.
 * - Completed WQEs cool down in a wait queue (the WQEs beyond the chain's initial length)
 *   before they rejoin the chain: a completed WQE goes to the end of the wait queue and the
 *   wait queue's oldest WQE is linked at the tail instead. A WQE thus returns to use only
 *   after as many further completions as the wait queue is long, which keeps a WQE the
 *   device has just finished with out of software's hands for a while (libmlx5 reserves it
 *   for WQEs that hit a page fault; vcx applies it to every completion: see
 *   docs/provider.md).
 *
 * Pure C on the WQE buffer: no verbs dependency, so tests/unit exercises it directly.
 * Callers serialize (the SRQ lock).
 */
#ifndef VCX_SRQ_LIST_H
#define VCX_SRQ_LIST_H

#include <stdint.h>

struct vcx_srq_list {
	uint8_t *buf;
	uint32_t wqe_shift;		/* log2 WQE stride */
	uint32_t nwqe;			/* WQEs in the buffer: chain + wait queue */
	uint32_t chain_len;		/* WQEs in the chain; chain_len - 1 can be posted */
	uint32_t head;			/* next WQE to fill */
	uint32_t tail;			/* last WQE of the chain, never filled */
	int32_t waitq_head;		/* oldest cooling WQE, -1 without a wait queue */
	int32_t waitq_tail;		/* newest cooling WQE */
};

/*
 * Chain WQEs 0..chain_len-1 and, if nwqe > chain_len, make chain_len..nwqe-1 the wait
 * queue. buf must hold nwqe WQEs of 2^wqe_shift bytes; chain_len >= 2.
 */
void vcx_srq_list_init(struct vcx_srq_list *l, void *buf, uint32_t wqe_shift,
		       uint32_t chain_len, uint32_t nwqe);

static inline void *vcx_srq_list_wqe(const struct vcx_srq_list *l, uint32_t idx)
{
	return l->buf + ((uint64_t)idx << l->wqe_shift);
}

static inline int vcx_srq_list_full(const struct vcx_srq_list *l)
{
	return l->head == l->tail;
}

/* Take the head WQE for a post: its index, or -1 if the chain is full. */
int32_t vcx_srq_list_take(struct vcx_srq_list *l);

/* Give back a WQE the device completed (the CQE's wqe_counter). */
void vcx_srq_list_put(struct vcx_srq_list *l, uint32_t idx);

#endif /* VCX_SRQ_LIST_H */
