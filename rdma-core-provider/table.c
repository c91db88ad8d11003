// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vcx provider: number -> object table (see table.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "table.h"

int vcx_table_insert(struct vcx_table *t, uint32_t num, void *obj)
{
	uint32_t root = (num & 0xffffffu) >> VCX_TABLE_SHIFT;
	uint32_t slot = num & (VCX_TABLE_LEAF_SIZE - 1);
	struct vcx_table_leaf *leaf = t->leaf[root];

	if (!leaf) {
		leaf = calloc(1, sizeof(*leaf));
		if (!leaf) {
			errno = ENOMEM;
			return -1;
		}
		t->leaf[root] = leaf;
	}
	if (leaf->obj[slot]) {
		errno = EEXIST;
		return -1;
	}
	leaf->obj[slot] = obj;
	leaf->refcnt++;
	return 0;
}

void vcx_table_remove(struct vcx_table *t, uint32_t num)
{
	uint32_t root = (num & 0xffffffu) >> VCX_TABLE_SHIFT;
	struct vcx_table_leaf *leaf = t->leaf[root];

	if (!leaf || !leaf->obj[num & (VCX_TABLE_LEAF_SIZE - 1)])
		return;
	leaf->obj[num & (VCX_TABLE_LEAF_SIZE - 1)] = NULL;
	if (!--leaf->refcnt) {
		t->leaf[root] = NULL;
		free(leaf);
	}
}

void vcx_table_cleanup(struct vcx_table *t)
{
	uint32_t i;

	for (i = 0; i < VCX_TABLE_ROOT_SIZE; i++) {
		free(t->leaf[i]);
		t->leaf[i] = NULL;
	}
}
