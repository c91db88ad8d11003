// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The kernel side of include/vcx/abi.h, as vcx.ko is to implement it, standing in for
 * uverbs: these definitions take the place of libibverbs' ibv_cmd_* helpers for the
 * provider objects linked into the harness. Each checks the request udata the way the
 * kernel must (alignment, powers of two, reserved fields), answers with the response
 * udata, and hands the queue addresses to the device model as the kernel would hand
 * pinned pages to the device.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/driver.h>

#include "model.h"
#include "vcx.h"
#include "vcx-abi.h"
#include "vcx/prm-wqe.h"

#define PAGE		4096u
#define NUM_UARS	2u

static const struct verbs_device_ops *registered_ops;
const struct verbs_context_ops *fk_ctx_ops;
unsigned int ex2_calls;		/* extended create_qp commands seen */
static uint32_t next_cqn = 0x80, next_qpn = 0x100, next_srqn = 0x40, next_bfreg;

const struct verbs_device_ops *fk_device_ops(void)
{
	return registered_ops;
}

static bool pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

static int reject(const char *what)
{
	dev_protocol_error("kernel: %s", what);
	return EINVAL;
}

/* libibverbs plumbing the provider calls at load and context time. */
void verbs_register_driver_34(const struct verbs_device_ops *ops)
{
	registered_ops = ops;
}

void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd, size_t alloc_size,
				    struct verbs_context *context_offset, uint32_t driver_id)
{
	uint8_t *drv = calloc(1, alloc_size);
	struct verbs_context *vctx;

	if (!drv)
		return NULL;
	vctx = (struct verbs_context *)(drv + (uintptr_t)context_offset);
	vctx->context.device = device;
	vctx->context.cmd_fd = cmd_fd;
	return drv;
}

void verbs_uninit_context(struct verbs_context *context)
{
}

void verbs_set_ops(struct verbs_context *vctx, const struct verbs_context_ops *ops)
{
	fk_ctx_ops = ops;
}

void __verbs_log(struct verbs_context *ctx, uint32_t level, const char *fmt, ...)
{
	va_list ap;

	printf("# provider: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

int ibv_cmd_get_context(struct verbs_context *context, struct ibv_get_context *cmd,
			size_t cmd_size, struct ib_uverbs_get_context_resp *resp,
			size_t resp_size)
{
	struct vcx_alloc_ucontext_cmd *c = (struct vcx_alloc_ucontext_cmd *)cmd;
	struct vcx_alloc_ucontext_cmd_resp *r = (struct vcx_alloc_ucontext_cmd_resp *)resp;

	if (cmd_size < sizeof(*c) || resp_size < sizeof(*r))
		return reject("short alloc_ucontext udata");
	if (c->drv_payload.comp_mask || c->drv_payload.lib_caps)
		return reject("unknown alloc_ucontext request bits");
	memset(&r->drv_payload, 0, sizeof(r->drv_payload));
	r->drv_payload.qp_tab_size = 1u << 16;
	r->drv_payload.num_uars = NUM_UARS;
	r->drv_payload.bfregs_per_uar = VCX_UAR_BFREGS_PER_PAGE;
	r->drv_payload.bf_reg_size = VCX_UAR_BF_REG_SIZE;
	r->drv_payload.tot_bfregs = NUM_UARS * VCX_UAR_BFREGS_PER_PAGE;
	r->drv_payload.cache_line_size = 64;
	r->drv_payload.max_sq_desc_sz = 512;
	r->drv_payload.max_rq_desc_sz = 512;
	r->drv_payload.max_send_wqebb = 1u << 14;
	r->drv_payload.max_recv_wr = 1u << 14;
	r->drv_payload.max_srq_recv_wr = 1u << 14;
	r->drv_payload.max_cqe = 1u << 16;
	r->drv_payload.max_sge = 16;
	r->drv_payload.max_inline_data = 256;
	r->drv_payload.num_ports = 1;
	r->drv_payload.cqe_version = 0;
	r->drv_payload.atomic_caps = VCX_ATOMIC_CAP_CMP_SWP | VCX_ATOMIC_CAP_FETCH_ADD;
	r->drv_payload.device_caps = 0;	/* test_wr_mw turns memory windows on */
	dev.num_uars = NUM_UARS;
	dev.bfregs_per_uar = VCX_UAR_BFREGS_PER_PAGE;
	dev.bf_reg_size = VCX_UAR_BF_REG_SIZE;
	return 0;
}

int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd, struct ibv_alloc_pd *cmd,
		     size_t cmd_size, struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size)
{
	struct vcx_alloc_pd_cmd_resp *r = (struct vcx_alloc_pd_cmd_resp *)resp;

	if (resp_size < sizeof(*r))
		return reject("short alloc_pd response");
	r->drv_payload.pdn = 7;
	pd->context = context;
	return 0;
}

int ibv_cmd_dealloc_pd(struct ibv_pd *pd)
{
	return 0;
}

static bool ring_initialised(uint64_t addr, uint32_t nent)
{
	uint32_t i;

	for (i = 0; i < nent; i++)
		if (((const uint8_t *)(uintptr_t)addr)[i * 64 + VCX_CQE_OP_OWN_BYTE] != 0xf0)
			return false;
	return true;
}

/* create_cq and create_cq_ex: the same udata and CREATE_CQ. */
static int fk_create_cq(struct ibv_context *context, int cqe, struct ibv_comp_channel *channel,
			const struct vcx_create_cq_req *q, struct ibv_cq *cq, uint32_t *cqn)
{
	uint32_t nent = cqe + 1, i;
	struct dev_cq *dcq = NULL;

	if (!pow2(nent) || q->cqe_size != VCX_CQE_SIZE || q->flags || q->buf_addr % PAGE ||
	    q->db_addr % 8)
		return reject("bad create_cq request");
	if (!ring_initialised(q->buf_addr, nent))
		return reject("CQE not initialised to INVALID/owner 0");
	for (i = 0; i < DEV_MAX_OBJ && !dcq; i++)
		if (!dev.cq[i].valid)
			dcq = &dev.cq[i];
	if (!dcq)
		return ENOMEM;
	memset(dcq, 0, sizeof(*dcq));
	dcq->valid = true;
	dcq->cqn = next_cqn++;
	dcq->buf = (uint8_t *)(uintptr_t)q->buf_addr;
	dcq->log_nent = __builtin_ctz(nent);
	dcq->dbrec = (volatile uint32_t *)(uintptr_t)q->db_addr;

	cq->context = context;
	cq->channel = channel;
	cq->cqe = nent - 1;
	*cqn = dcq->cqn;
	return 0;
}

int ibv_cmd_create_cq(struct ibv_context *context, int cqe, struct ibv_comp_channel *channel,
		      int comp_vector, struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp, size_t resp_size)
{
	struct vcx_create_cq_cmd *c = (struct vcx_create_cq_cmd *)cmd;
	struct vcx_create_cq_cmd_resp *r = (struct vcx_create_cq_cmd_resp *)resp;

	if (cmd_size < sizeof(*c) || resp_size < sizeof(*r))
		return reject("short create_cq udata");
	return fk_create_cq(context, cqe, channel, &c->drv_payload, cq, &r->drv_payload.cqn);
}

int ibv_cmd_create_cq_ex(struct ibv_context *context, const struct ibv_cq_init_attr_ex *attr,
			 struct verbs_cq *cq, struct ibv_create_cq_ex *cmd, size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp, size_t resp_size,
			 uint32_t cmd_flags)
{
	struct vcx_create_cq_ex_cmd *c = (struct vcx_create_cq_ex_cmd *)cmd;
	struct vcx_create_cq_ex_cmd_resp *r = (struct vcx_create_cq_ex_cmd_resp *)resp;

	if (cmd_size < sizeof(*c) || resp_size < sizeof(*r))
		return reject("short create_cq_ex udata");
	/* The kernel sees only flags it has uverbs bits for; vcx.ko supports none. */
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (attr->flags & IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN))
		return EOPNOTSUPP;
	return fk_create_cq(context, attr->cqe, attr->channel, &c->drv_payload, &cq->cq,
			    &r->drv_payload.cqn);
}

void (*fk_after_resize)(struct ibv_cq *cq);

int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe, struct ibv_resize_cq *cmd, size_t cmd_size,
		      struct ib_uverbs_resize_cq_resp *resp, size_t resp_size)
{
	struct vcx_resize_cq_cmd *c = (struct vcx_resize_cq_cmd *)cmd;
	const struct vcx_resize_cq_req *q = &c->drv_payload;
	struct dev_cq *dcq = dev_cq(((struct vcx_cq *)cq)->cqn);
	uint32_t nent = cqe + 1;
	int err;

	if (cmd_size < sizeof(*c) || resp_size < sizeof(*resp))
		return reject("short resize_cq udata");
	if (!pow2(nent) || q->cqe_size != VCX_CQE_SIZE || q->reserved || q->buf_addr % PAGE)
		return reject("bad resize_cq request");
	if (!ring_initialised(q->buf_addr, nent))
		return reject("new ring not initialised to INVALID/owner 0");
	err = dev_resize_cq(dcq, (uint8_t *)(uintptr_t)q->buf_addr, __builtin_ctz(nent));
	if (err)
		return err;
	cq->cqe = nent - 1;
	resp->cqe = nent - 1;
	if (fk_after_resize)
		fk_after_resize(cq);
	return 0;
}

int ibv_cmd_destroy_cq(struct ibv_cq *cq)
{
	struct dev_cq *d = dev_cq(((struct vcx_cq *)cq)->cqn);

	if (d)
		d->valid = false;
	return 0;
}

/* The kernel side of create_qp, for both the plain and the extended uverbs command. */
static int create_qp(struct verbs_qp *vqp, struct ibv_qp_init_attr_ex *attr,
		     const struct vcx_create_qp_req *q)
{
	struct ibv_qp *qp = &vqp->qp;
	struct dev_qp *dqp = NULL;
	uint8_t *buf = (uint8_t *)(uintptr_t)q->buf_addr;
	int i;

	/* uverbs: an extended request the kernel cannot honour never reaches the driver. */
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD))
		return reject("create_qp without a PD");
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && attr->create_flags)
		return EOPNOTSUPP;	/* vcx.ko implements no create flag */
	if (q->flags || q->buf_addr % PAGE || q->db_addr % 8 ||
	    (q->sq_wqe_count && !pow2(q->sq_wqe_count)) ||
	    (q->rq_wqe_count && (!pow2(q->rq_wqe_count) || q->rq_wqe_shift < 4)) ||
	    (attr->srq && q->rq_wqe_count))
		return reject("bad create_qp request");
	for (i = 0; i < DEV_MAX_OBJ && !dqp; i++)
		if (!dev.qp[i].valid)
			dqp = &dev.qp[i];
	if (!dqp)
		return ENOMEM;
	memset(dqp, 0, sizeof(*dqp));
	dqp->valid = true;
	dqp->qpn = next_qpn++;
	dqp->type = attr->qp_type;
	dqp->state = IBV_QPS_RESET;
	dqp->rq = q->rq_wqe_count ? buf : NULL;
	dqp->rq_cnt = q->rq_wqe_count;
	dqp->rq_shift = q->rq_wqe_shift;
	dqp->sq = q->sq_wqe_count ? buf + ((size_t)q->rq_wqe_count << q->rq_wqe_shift) : NULL;
	dqp->sq_wqebbs = q->sq_wqe_count;
	dqp->dbrec = (volatile uint32_t *)(uintptr_t)q->db_addr;
	dqp->bfreg = next_bfreg++ % (NUM_UARS * VCX_UAR_BFREGS_PER_PAGE);
	dqp->scq = dev_cq(((struct vcx_cq *)attr->send_cq)->cqn);
	dqp->rcq = dev_cq(((struct vcx_cq *)attr->recv_cq)->cqn);
	dqp->srq = attr->srq ? dev_srq(((struct vcx_srq *)attr->srq)->srqn) : NULL;

	/* What libibverbs' set_qp() fills in after the command. */
	qp->context = attr->pd->context;
	qp->pd = attr->pd;
	qp->qp_context = attr->qp_context;
	qp->send_cq = attr->send_cq;
	qp->recv_cq = attr->recv_cq;
	qp->srq = attr->srq;
	qp->qp_type = attr->qp_type;
	qp->qp_num = dqp->qpn;
	qp->state = IBV_QPS_RESET;
	vqp->comp_mask = 0;
	return 0;
}

int ibv_cmd_create_qp_ex(struct ibv_context *context, struct verbs_qp *qp,
			 struct ibv_qp_init_attr_ex *attr_ex, struct ibv_create_qp *cmd,
			 size_t cmd_size, struct ib_uverbs_create_qp_resp *resp, size_t resp_size)
{
	struct vcx_create_qp_cmd *c = (struct vcx_create_qp_cmd *)cmd;
	struct vcx_create_qp_cmd_resp *r = (struct vcx_create_qp_cmd_resp *)resp;
	int err;

	if (cmd_size < sizeof(*c) || resp_size < sizeof(*r))
		return reject("short create_qp udata");
	/* libibverbs: the plain command carries no extended fields. */
	if (attr_ex->comp_mask & ~(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD |
				   IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))
		return reject("extended fields in the plain create_qp command");
	err = create_qp(qp, attr_ex, &c->drv_payload);
	if (!err)
		r->drv_payload.bfreg_index = dev_qp(qp->qp.qp_num)->bfreg;
	return err;
}

int ibv_cmd_create_qp_ex2(struct ibv_context *context, struct verbs_qp *qp,
			  struct ibv_qp_init_attr_ex *attr_ex, struct ibv_create_qp_ex *cmd,
			  size_t cmd_size, struct ib_uverbs_ex_create_qp_resp *resp,
			  size_t resp_size)
{
	struct vcx_create_qp_ex_cmd *c = (struct vcx_create_qp_ex_cmd *)cmd;
	struct vcx_create_qp_ex_cmd_resp *r = (struct vcx_create_qp_ex_cmd_resp *)resp;
	int err;

	if (cmd_size < sizeof(*c) || resp_size < sizeof(*r))
		return reject("short create_qp_ex udata");
	err = create_qp(qp, attr_ex, &c->drv_payload);
	if (!err)
		r->drv_payload.bfreg_index = dev_qp(qp->qp.qp_num)->bfreg;
	ex2_calls++;
	return err;
}

int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		      struct ibv_modify_qp *cmd, size_t cmd_size)
{
	struct dev_qp *dqp = dev_qp(qp->qp_num);

	if (!(attr_mask & IBV_QP_STATE))
		return 0;
	qp->state = attr->qp_state;
	if (attr->qp_state == IBV_QPS_ERR) {
		dev_flush_qp(dqp);
	} else if (attr->qp_state == IBV_QPS_RESET) {
		dqp->state = IBV_QPS_RESET;
		dqp->sq_ci = dqp->rq_ci = 0;
	} else {
		dqp->state = attr->qp_state;
	}
	return 0;
}

int ibv_cmd_destroy_qp(struct ibv_qp *qp)
{
	struct dev_qp *dqp = dev_qp(qp->qp_num);

	if (dqp)
		dqp->valid = false;
	return 0;
}

int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq, struct ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp, size_t resp_size)
{
	struct vcx_create_srq_cmd *c = (struct vcx_create_srq_cmd *)cmd;
	struct vcx_create_srq_cmd_resp *r = (struct vcx_create_srq_cmd_resp *)resp;
	const struct vcx_create_srq_req *q = &c->drv_payload;
	struct dev_srq *dsrq = NULL;
	int i;

	if (cmd_size < sizeof(*c) || resp_size < sizeof(*r))
		return reject("short create_srq udata");
	if (q->flags || q->reserved || q->buf_addr % PAGE || q->db_addr % 8 ||
	    !pow2(q->wqe_count) || q->wqe_shift < 5 || attr->attr.max_wr >= q->wqe_count)
		return reject("bad create_srq request");
	for (i = 0; i < DEV_MAX_OBJ && !dsrq; i++)
		if (!dev.srq[i].valid)
			dsrq = &dev.srq[i];
	if (!dsrq)
		return ENOMEM;
	memset(dsrq, 0, sizeof(*dsrq));
	dsrq->valid = true;
	dsrq->srqn = next_srqn++;
	dsrq->buf = (uint8_t *)(uintptr_t)q->buf_addr;
	dsrq->wqe_shift = q->wqe_shift;
	dsrq->nwqe = q->wqe_count;
	dsrq->dbrec = (volatile uint32_t *)(uintptr_t)q->db_addr;
	dsrq->hw_next = 0;		/* the device starts at WQE 0 */

	srq->context = pd->context;
	srq->pd = pd;
	srq->srq_context = attr->srq_context;
	r->drv_payload.srqn = dsrq->srqn;
	return 0;
}

int ibv_cmd_destroy_srq(struct ibv_srq *srq)
{
	struct dev_srq *d = dev_srq(((struct vcx_srq *)srq)->srqn);

	if (d)
		d->valid = false;
	return 0;
}

int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah, struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp, size_t resp_size)
{
	struct vcx_create_ah_cmd_resp *r = (struct vcx_create_ah_cmd_resp *)resp;
	static const uint8_t mac[6] = { 0x02, 0x00, 0x00, 0xaa, 0xbb, 0xcc };

	if (resp_size < sizeof(*r))
		return reject("short create_ah response");
	memcpy(r->drv_payload.dmac, mac, 6);
	ah->context = pd->context;
	ah->pd = pd;
	return 0;
}

int ibv_cmd_destroy_ah(struct ibv_ah *ah)
{
	return 0;
}

#undef ibv_query_port
int ibv_query_port(struct ibv_context *context, uint8_t port_num,
		   struct _compat_ibv_port_attr *port_attr);
int ibv_query_port(struct ibv_context *context, uint8_t port_num,
		   struct _compat_ibv_port_attr *port_attr)
{
	struct ibv_port_attr *a = (struct ibv_port_attr *)port_attr;

	memset(a, 0, sizeof(*a));
	a->state = IBV_PORT_ACTIVE;
	a->link_layer = IBV_LINK_LAYER_ETHERNET;
	return port_num == 1 ? 0 : EINVAL;
}

int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       enum ibv_gid_type_sysfs *type)
{
	*type = IBV_GID_TYPE_SYSFS_ROCE_V2;
	return 0;
}
