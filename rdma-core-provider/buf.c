// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vcx provider: queue buffer allocation.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/driver.h>
#include <util/util.h>

#include "buf.h"

int vcx_buf_alloc(struct vcx_buf *buf, size_t length, size_t page_size)
{
	int ret;

	length = align(length, page_size);
	ret = posix_memalign(&buf->buf, page_size, length);
	if (ret) {
		errno = ret;
		return -1;
	}
	memset(buf->buf, 0, length);
	ret = ibv_dontfork_range(buf->buf, length);
	if (ret) {
		free(buf->buf);
		buf->buf = NULL;
		errno = ret;
		return -1;
	}
	buf->length = length;
	return 0;
}

void vcx_buf_free(struct vcx_buf *buf)
{
	if (!buf->buf)
		return;
	ibv_dofork_range(buf->buf, buf->length);
	free(buf->buf);
	buf->buf = NULL;
}
