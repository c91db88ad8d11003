/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vcx provider: doorbell records.
 *
 * Every CQ, QP and SRQ has a small big-endian record in host memory (layouts in
 * prm-wqe.h) that the device reads: the library carves them out of shared pages, one per
 * cache line so the device's reads of one queue's record never share a line with another
 * queue's updates. The kernel pins the page of each record it is given.
 */
#ifndef VCX_DB_H
#define VCX_DB_H

#include <pthread.h>
#include <stdint.h>

#include <linux/types.h>

struct vcx_db_page;

struct vcx_db_pool {
	pthread_mutex_t mutex;
	struct vcx_db_page *pages;
	uint32_t page_size;
	uint32_t slot_size;		/* cache line, at least 8 bytes */
};

void vcx_db_pool_init(struct vcx_db_pool *pool, uint32_t page_size, uint32_t slot_size);
void vcx_db_pool_cleanup(struct vcx_db_pool *pool);
/* A zeroed record of slot_size bytes, or NULL with errno set. */
__be32 *vcx_db_alloc(struct vcx_db_pool *pool);
void vcx_db_free(struct vcx_db_pool *pool, __be32 *db);

#endif /* VCX_DB_H */
