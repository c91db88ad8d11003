// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vcx provider: doorbell record allocator (see db.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/driver.h>
#include <util/bitmap.h>

#include "db.h"

struct vcx_db_page {
	struct vcx_db_page *next;
	uint8_t *buf;
	uint32_t nslots;
	uint32_t used;
	unsigned long *free;		/* bit set: slot free */
};

void vcx_db_pool_init(struct vcx_db_pool *pool, uint32_t page_size, uint32_t slot_size)
{
	pthread_mutex_init(&pool->mutex, NULL);
	pool->pages = NULL;
	pool->page_size = page_size;
	pool->slot_size = slot_size < 8 ? 8 : slot_size;
}

static void db_page_free(struct vcx_db_page *page, uint32_t page_size)
{
	ibv_dofork_range(page->buf, page_size);
	free(page->buf);
	free(page->free);
	free(page);
}

void vcx_db_pool_cleanup(struct vcx_db_pool *pool)
{
	struct vcx_db_page *page, *next;

	for (page = pool->pages; page; page = next) {
		next = page->next;
		db_page_free(page, pool->page_size);
	}
	pool->pages = NULL;
	pthread_mutex_destroy(&pool->mutex);
}

static struct vcx_db_page *db_page_add(struct vcx_db_pool *pool)
{
	struct vcx_db_page *page = calloc(1, sizeof(*page));
	void *buf;

	if (!page)
		return NULL;
	page->nslots = pool->page_size / pool->slot_size;
	page->free = bitmap_alloc1(page->nslots);
	if (!page->free)
		goto err_page;
	if (posix_memalign(&buf, pool->page_size, pool->page_size))
		goto err_bitmap;
	memset(buf, 0, pool->page_size);
	if (ibv_dontfork_range(buf, pool->page_size))
		goto err_buf;
	page->buf = buf;
	page->next = pool->pages;
	pool->pages = page;
	return page;

err_buf:
	free(buf);
err_bitmap:
	free(page->free);
err_page:
	free(page);
	errno = ENOMEM;
	return NULL;
}

__be32 *vcx_db_alloc(struct vcx_db_pool *pool)
{
	struct vcx_db_page *page;
	unsigned long slot;
	uint8_t *db = NULL;

	pthread_mutex_lock(&pool->mutex);
	for (page = pool->pages; page; page = page->next)
		if (page->used < page->nslots)
			break;
	if (!page)
		page = db_page_add(pool);
	if (page) {
		slot = bitmap_find_first_bit(page->free, 0, page->nslots);
		bitmap_clear_bit(page->free, slot);
		page->used++;
		db = page->buf + slot * pool->slot_size;
		memset(db, 0, pool->slot_size);
	}
	pthread_mutex_unlock(&pool->mutex);
	return (__be32 *)db;
}

void vcx_db_free(struct vcx_db_pool *pool, __be32 *db)
{
	struct vcx_db_page **pp, *page;
	uint8_t *p = (uint8_t *)db;

	pthread_mutex_lock(&pool->mutex);
	for (pp = &pool->pages; (page = *pp); pp = &page->next) {
		if (p < page->buf || p >= page->buf + pool->page_size)
			continue;
		bitmap_set_bit(page->free, (p - page->buf) / pool->slot_size);
		if (!--page->used) {
			*pp = page->next;
			db_page_free(page, pool->page_size);
		}
		break;
	}
	pthread_mutex_unlock(&pool->mutex);
}
