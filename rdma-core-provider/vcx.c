// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vcx provider: device matching and context setup.
 *
 * libibverbs loads every provider listed in its driver directory and asks each to match
 * a uverbs device; vcx matches the vcx PCI id (and, like any provider, only when vcx.ko's
 * uverbs ABI version is the one this library speaks). A ConnectX-5 personality of the
 * device (15b3:1017) is libmlx5's to drive, so it is deliberately not in the table.
 *
 * Opening a context sends the library's limits to the kernel (alloc_ucontext udata),
 * keeps the device limits the kernel answers with, and maps the context's UAR pages:
 * CQ doorbells go to UAR page 0, each QP rings the doorbell register ("bfreg") the kernel
 * assigned to it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vcx.h"
#include "vcx-abi.h"
#include "vcx/prm-iseg.h"
#include "vcx/prm-wqe.h"

static const struct verbs_match_ent vcx_match_table[] = {
	VERBS_PCI_MATCH(VCX_PCI_VENDOR_ID, VCX_PCI_DEVICE_ID, NULL),
	{}
};

/*
 * The device is this provider's when vcx.ko drives it: the vcx PCI ID above, or any
 * other function vcx.ko was bound to (a ConnectX board through the driver's new_id),
 * told by the PCI device's driver link. libmlx5 matches ConnectX IDs by table too, and
 * libibverbs tries providers in the order it loaded them, so on such a board libmlx5's
 * configuration must be absent for this one to be tried (docs/provider.md).
 */
static bool vcx_match_device(struct verbs_sysfs_dev *sysfs_dev)
{
	char link[IBV_SYSFS_PATH_MAX + 16], target[IBV_SYSFS_PATH_MAX];
	const char *base;
	ssize_t n;

	if (sysfs_dev->match)
		return true;
	if (snprintf(link, sizeof(link), "%s/device/driver", sysfs_dev->ibdev_path) >=
	    (int)sizeof(link))
		return false;
	n = readlink(link, target, sizeof(target) - 1);
	if (n <= 0)
		return false;
	target[n] = 0;
	base = strrchr(target, '/');
	return base && !strcmp(base + 1, "vcx");
}

static void vcx_free_context(struct ibv_context *ibctx);
static int vcx_query_rt_values(struct ibv_context *ibctx, struct ibv_values_ex *values);

static const struct verbs_context_ops vcx_ctx_ops = {
	.query_device_ex = vcx_query_device_ex,
	.query_port = vcx_query_port,
	.query_rt_values = vcx_query_rt_values,

	.alloc_pd = vcx_alloc_pd,
	.dealloc_pd = vcx_dealloc_pd,
	.reg_mr = vcx_reg_mr,
	.rereg_mr = vcx_rereg_mr,
	.dereg_mr = vcx_dereg_mr,
	.alloc_mw = vcx_alloc_mw,
	.dealloc_mw = vcx_dealloc_mw,
	.bind_mw = vcx_bind_mw,
	.create_ah = vcx_create_ah,
	.destroy_ah = vcx_destroy_ah,

	.create_cq = vcx_create_cq,
	.create_cq_ex = vcx_create_cq_ex,
	.modify_cq = vcx_modify_cq,
	.resize_cq = vcx_resize_cq,
	.poll_cq = vcx_poll_cq,
	.req_notify_cq = vcx_req_notify_cq,
	.cq_event = vcx_cq_event,
	.destroy_cq = vcx_destroy_cq,

	.create_qp = vcx_create_qp,
	.create_qp_ex = vcx_create_qp_ex,
	.query_qp = vcx_query_qp,
	.modify_qp = vcx_modify_qp,
	.destroy_qp = vcx_destroy_qp,
	.post_send = vcx_post_send,
	.post_recv = vcx_post_recv,
	/* UD multicast: the kernel's commands, as libmlx5 (vcx.ko issues ATTACH_TO_MCG) */
	.attach_mcast = ibv_cmd_attach_mcast,
	.detach_mcast = ibv_cmd_detach_mcast,

	.create_srq = vcx_create_srq,
	.modify_srq = vcx_modify_srq,
	.query_srq = vcx_query_srq,
	.destroy_srq = vcx_destroy_srq,
	.post_srq_recv = vcx_post_srq_recv,
	.create_srq_ex = vcx_create_srq_ex,
	.get_srq_num = vcx_get_srq_num,

	.open_xrcd = vcx_open_xrcd,
	.close_xrcd = vcx_close_xrcd,
	.open_qp = vcx_open_qp,

	.free_context = vcx_free_context,
};

static bool env_single_threaded(void)
{
	const char *v = getenv("VCX_SINGLE_THREADED");

	return v && strcmp(v, "1") == 0;
}

static void vcx_unmap_uars(struct vcx_context *ctx)
{
	uint32_t i;

	if (!ctx->uar)
		return;
	for (i = 0; i < ctx->num_uars; i++)
		if (ctx->uar[i])
			munmap(ctx->uar[i], ctx->page_size);
	free(ctx->uar);
	ctx->uar = NULL;
}

static int vcx_map_uars(struct vcx_context *ctx, int cmd_fd)
{
	uint32_t i;

	ctx->uar = calloc(ctx->num_uars, sizeof(*ctx->uar));
	if (!ctx->uar)
		return ENOMEM;
	for (i = 0; i < ctx->num_uars; i++) {
		void *p = mmap(NULL, ctx->page_size, PROT_WRITE, MAP_SHARED, cmd_fd,
			       vcx_mmap_offset(VCX_MMAP_UAR, i, ctx->page_size));

		if (p == MAP_FAILED) {
			int err = errno;

			vcx_unmap_uars(ctx);
			return err;
		}
		ctx->uar[i] = p;
	}
	return 0;
}

/*
 * The device's internal timer (ibv_query_rt_values_ex's raw clock), read high, low, high
 * so that a carry between the two reads is seen, as libmlx5 reads it.
 */
static int vcx_query_rt_values(struct ibv_context *ibctx, struct ibv_values_ex *values)
{
	struct vcx_context *ctx = to_vcx_ctx(ibctx);
	const volatile __be32 *t = ctx->clock;
	uint32_t hi, lo, i;

	if (values->comp_mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK)
		return EINVAL;
	if (!(values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK))
		return 0;
	if (!t)
		return EOPNOTSUPP;
	for (i = 0; i < 3; i++) {
		hi = be32toh(t[0]);
		lo = be32toh(t[1]);
		if (be32toh(t[0]) == hi)
			break;
	}
	if (i == 3)
		return EAGAIN;
	values->raw_clock.tv_sec = 0;
	values->raw_clock.tv_nsec = (uint64_t)hi << 32 | lo;
	values->comp_mask = IBV_VALUES_MASK_RAW_CLOCK;
	return 0;
}

/* With completion timestamps, the timer's page; without it raw clock reads fail. */
static void vcx_map_clock(struct vcx_context *ctx, int cmd_fd, uint32_t offset)
{
	void *p;

	if (!ctx->completion_ts || offset > ctx->page_size - 8)
		return;
	p = mmap(NULL, ctx->page_size, PROT_READ, MAP_SHARED, cmd_fd,
		 vcx_mmap_offset(VCX_MMAP_CORE_CLOCK, 0, ctx->page_size));
	if (p == MAP_FAILED)
		return;
	ctx->clock_page = p;
	ctx->clock = (const uint8_t *)p + offset;
}

static int vcx_init_bfregs(struct vcx_context *ctx, uint32_t bfregs_per_uar,
			   uint32_t bf_reg_size)
{
	uint32_t i;

	ctx->bfregs = calloc(ctx->tot_bfregs, sizeof(*ctx->bfregs));
	if (!ctx->bfregs)
		return ENOMEM;
	for (i = 0; i < ctx->tot_bfregs; i++) {
		struct vcx_bfreg *bf = &ctx->bfregs[i];

		bf->reg = (uint8_t *)ctx->uar[i / bfregs_per_uar] + VCX_UAR_BF_OFFSET +
			  (i % bfregs_per_uar) * bf_reg_size;
		bf->buf_size = bf_reg_size / 2;
		vcx_spinlock_init(&bf->lock, !ctx->single_threaded);
	}
	return 0;
}

/* The kernel's answer must describe a UAR layout this library can address. */
static int vcx_check_ucontext_resp(const struct vcx_alloc_ucontext_resp *r,
				   uint32_t page_size)
{
	if (!r->num_uars || !r->bfregs_per_uar ||
	    r->bfregs_per_uar > VCX_UAR_BFREGS_PER_PAGE ||
	    r->tot_bfregs != r->num_uars * r->bfregs_per_uar ||
	    r->bf_reg_size < 2 * VCX_SQ_DOORBELL_SIZE ||
	    VCX_UAR_BF_OFFSET + r->bfregs_per_uar * r->bf_reg_size > page_size ||
	    r->cqe_version != 0 || !r->num_ports)
		return EPROTO;
	return 0;
}

static struct verbs_context *vcx_alloc_context(struct ibv_device *ibdev, int cmd_fd,
					       void *private_data)
{
	struct vcx_device *dev = to_vcx_dev(ibdev);
	struct vcx_alloc_ucontext_resp *r;
	struct vcx_alloc_ucontext_cmd_resp resp = {};
	struct vcx_alloc_ucontext_cmd cmd = {};
	struct vcx_context *ctx;
	int err;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, ibv_ctx, RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;

	cmd.drv_payload.max_cqe_version = 0;
	cmd.drv_payload.lib_caps = VCX_LIB_CAPS_SUPPORTED;
	if (ibv_cmd_get_context(&ctx->ibv_ctx, &cmd.ibv_cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp)))
		goto err_free;

	r = &resp.drv_payload;
	ctx->page_size = dev->page_size;
	err = vcx_check_ucontext_resp(r, ctx->page_size);
	if (err) {
		verbs_err(&ctx->ibv_ctx, "vcx: unusable alloc_ucontext response\n");
		errno = err;
		goto err_free;
	}
	ctx->single_threaded = env_single_threaded();
	ctx->qp_tab_size = r->qp_tab_size;
	ctx->num_uars = r->num_uars;
	ctx->tot_bfregs = r->tot_bfregs;
	ctx->cache_line_size = r->cache_line_size ? r->cache_line_size : 64;
	ctx->max_sq_desc_sz = r->max_sq_desc_sz;
	ctx->max_rq_desc_sz = r->max_rq_desc_sz;
	ctx->max_send_wqebb = r->max_send_wqebb;
	ctx->max_recv_wr = r->max_recv_wr;
	ctx->max_srq_recv_wr = r->max_srq_recv_wr;
	ctx->max_cqe = r->max_cqe;
	ctx->max_sge = r->max_sge;
	ctx->max_inline_data = r->max_inline_data;
	ctx->atomic_caps = r->atomic_caps;
	ctx->mw = r->device_caps & VCX_DEVICE_CAP_MW;
	ctx->completion_ts = r->device_caps & VCX_DEVICE_CAP_COMPLETION_TS;
	ctx->num_ports = (uint8_t)r->num_ports;

	err = vcx_map_uars(ctx, cmd_fd);
	if (err) {
		errno = err;
		goto err_free;
	}
	err = vcx_init_bfregs(ctx, r->bfregs_per_uar, r->bf_reg_size);
	if (err) {
		errno = err;
		goto err_unmap;
	}
	vcx_map_clock(ctx, cmd_fd, r->hca_core_clock_offset);
	pthread_mutex_init(&ctx->table_mutex, NULL);
	vcx_db_pool_init(&ctx->db_pool, ctx->page_size, ctx->cache_line_size);

	verbs_set_ops(&ctx->ibv_ctx, &vcx_ctx_ops);
	return &ctx->ibv_ctx;

err_unmap:
	vcx_unmap_uars(ctx);
err_free:
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
	return NULL;
}

static void vcx_free_context(struct ibv_context *ibctx)
{
	struct vcx_context *ctx = to_vcx_ctx(ibctx);
	uint32_t i;

	vcx_db_pool_cleanup(&ctx->db_pool);
	vcx_table_cleanup(&ctx->qp_table);
	vcx_table_cleanup(&ctx->srq_table);
	pthread_mutex_destroy(&ctx->table_mutex);
	for (i = 0; i < ctx->tot_bfregs; i++)
		vcx_spinlock_destroy(&ctx->bfregs[i].lock);
	free(ctx->bfregs);
	if (ctx->clock_page)
		munmap(ctx->clock_page, ctx->page_size);
	vcx_unmap_uars(ctx);
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
}

static struct verbs_device *vcx_device_alloc(struct verbs_sysfs_dev *sysfs_dev)
{
	struct vcx_device *dev = calloc(1, sizeof(*dev));

	if (!dev)
		return NULL;
	dev->page_size = sysconf(_SC_PAGESIZE);
	return &dev->ibv_dev;
}

static void vcx_device_free(struct verbs_device *vdev)
{
	free(container_of(vdev, struct vcx_device, ibv_dev));
}

static const struct verbs_device_ops vcx_dev_ops = {
	.name = "vcx",
	.match_min_abi_version = VCX_UVERBS_ABI_VERSION,
	.match_max_abi_version = VCX_UVERBS_ABI_VERSION,
	.match_table = vcx_match_table,
	.match_device = vcx_match_device,
	.alloc_device = vcx_device_alloc,
	.uninit_device = vcx_device_free,
	.alloc_context = vcx_alloc_context,
};

PROVIDER_DRIVER(vcx, vcx_dev_ops);
