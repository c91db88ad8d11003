/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vcx provider: page-aligned queue buffers (CQE rings, QP and SRQ WQE buffers) that the
 * kernel pins and hands to the device, kept out of fork()ed children.
 */
#ifndef VCX_BUF_H
#define VCX_BUF_H

#include <stddef.h>

struct vcx_buf {
	void *buf;
	size_t length;
};

int vcx_buf_alloc(struct vcx_buf *buf, size_t length, size_t page_size);
void vcx_buf_free(struct vcx_buf *buf);

#endif /* VCX_BUF_H */
