// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vcx provider: SRQ WQE chain and wait queue (see srq_list.h).
 */
#include "srq_list.h"
#include "vcx/prm-wqe.h"

static void link_range(struct vcx_srq_list *l, uint32_t first, uint32_t last)
{
	uint32_t i;

	for (i = first; i < last; i++)
		vcx_srq_next_set(vcx_srq_list_wqe(l, i), (uint16_t)(i + 1));
}

void vcx_srq_list_init(struct vcx_srq_list *l, void *buf, uint32_t wqe_shift,
		       uint32_t chain_len, uint32_t nwqe)
{
	l->buf = buf;
	l->wqe_shift = wqe_shift;
	l->nwqe = nwqe;
	l->chain_len = chain_len;
	l->head = 0;
	l->tail = chain_len - 1;
	link_range(l, 0, l->tail);
	if (nwqe > chain_len) {
		l->waitq_head = (int32_t)chain_len;
		l->waitq_tail = (int32_t)nwqe - 1;
		link_range(l, chain_len, nwqe - 1);
	} else {
		l->waitq_head = -1;
		l->waitq_tail = -1;
	}
}

int32_t vcx_srq_list_take(struct vcx_srq_list *l)
{
	uint32_t idx = l->head;

	if (vcx_srq_list_full(l))
		return -1;
	l->head = vcx_srq_next_get(vcx_srq_list_wqe(l, idx));
	return (int32_t)idx;
}

static void link_at_tail(struct vcx_srq_list *l, uint32_t idx)
{
	vcx_srq_next_set(vcx_srq_list_wqe(l, l->tail), (uint16_t)idx);
	l->tail = idx;
}

void vcx_srq_list_put(struct vcx_srq_list *l, uint32_t idx)
{
	uint32_t ready;

	if (l->waitq_head < 0) {
		link_at_tail(l, idx);
		return;
	}
	/* idx cools down at the end of the wait queue; the oldest cooled WQE rejoins. */
	vcx_srq_next_set(vcx_srq_list_wqe(l, (uint32_t)l->waitq_tail), (uint16_t)idx);
	l->waitq_tail = (int32_t)idx;
	ready = (uint32_t)l->waitq_head;
	l->waitq_head = vcx_srq_next_get(vcx_srq_list_wqe(l, ready));
	link_at_tail(l, ready);
}
