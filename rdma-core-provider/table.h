/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vcx provider: lookup of QPs and SRQs by their 24-bit PRM number, for CQE processing.
 *
 * Two levels (4096 x 4096) so a context with a handful of QPs costs one small page
 * whatever the numbers are. Callers serialize updates; lookups from poll_cq run without
 * the lock, as in every rdma-core provider: an object is removed from the table only after
 * the kernel destroyed it, so no CQE naming it can still be polled.
 */
#ifndef VCX_TABLE_H
#define VCX_TABLE_H

#include <stdint.h>

#define VCX_TABLE_SHIFT		12
#define VCX_TABLE_LEAF_SIZE	(1u << VCX_TABLE_SHIFT)
#define VCX_TABLE_ROOT_SIZE	(1u << (24 - VCX_TABLE_SHIFT))

struct vcx_table_leaf {
	unsigned int refcnt;
	void *obj[VCX_TABLE_LEAF_SIZE];
};

struct vcx_table {
	struct vcx_table_leaf *leaf[VCX_TABLE_ROOT_SIZE];
};

/* 0 on success, -1 (ENOMEM) if a leaf could not be allocated, -1 (EEXIST) if taken. */
int vcx_table_insert(struct vcx_table *t, uint32_t num, void *obj);
void vcx_table_remove(struct vcx_table *t, uint32_t num);
void vcx_table_cleanup(struct vcx_table *t);

static inline void *vcx_table_find(const struct vcx_table *t, uint32_t num)
{
	const struct vcx_table_leaf *leaf = t->leaf[(num & 0xffffffu) >> VCX_TABLE_SHIFT];

	return leaf ? leaf->obj[num & (VCX_TABLE_LEAF_SIZE - 1)] : (void *)0;
}

#endif /* VCX_TABLE_H */
