/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers shared by the in-kernel test modules (vcx_srq_ulp.c, vcx_drain_ulp.c): the
 * first failure's text, and the loopback path on port 1 through the RoCE v2 GID.
 */
#ifndef VCX_KMOD_COMMON_H
#define VCX_KMOD_COMMON_H

#include <linux/kernel.h>
#include <linux/etherdevice.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_cache.h>

/* Keep the first failure in why (len bytes) and log it under the module's name. */
static __printf(4, 0) void vcx_kmod_vfail(char *why, size_t len, const char *module,
					  const char *fmt, va_list ap)
{
	if (why[0])
		return;
	vsnprintf(why, len, fmt, ap);
	pr_err("%s: %s\n", module, why);
}

/* The port's RoCE v2 GID (the link-local one ib_core builds from the MAC) and its index. */
static int vcx_kmod_roce_gid(struct ib_device *dev, union ib_gid *gid, u8 *index)
{
	const struct ib_gid_attr *attr;
	struct ib_port_attr pa;
	int i, err;

	err = ib_query_port(dev, 1, &pa);
	if (err)
		return err;
	for (i = 0; i < pa.gid_tbl_len; i++) {
		attr = rdma_get_gid_attr(dev, 1, i);
		if (IS_ERR(attr))
			continue;
		if (attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP) {
			*gid = attr->gid;
			*index = i;
			rdma_put_gid_attr(attr);
			return 0;
		}
		rdma_put_gid_attr(attr);
	}
	return -ENOENT;
}

/*
 * An address to the port itself: port 1, GRH to its own GID, hop limit 64, and the
 * destination MAC of that GID's netdev. ib_core resolves the MAC only for user QPs: a
 * kernel consumer that does not go through rdma_cm gives it itself, or its RoCE frames
 * go to 00:00:00:00:00:00 and never loop back (on a ConnectX, and on vcx with
 * loopback-frames=on).
 */
static void vcx_kmod_loopback_av(struct ib_device *dev, struct rdma_ah_attr *ah,
				 union ib_gid *gid, u8 index)
{
	const struct ib_gid_attr *attr;

	ah->type = rdma_ah_find_type(dev, 1);
	rdma_ah_set_port_num(ah, 1);
	rdma_ah_set_grh(ah, gid, 0, index, 64, 0);
	attr = rdma_get_gid_attr(dev, 1, index);
	if (IS_ERR(attr))
		return;		/* the modify then fails on the missing GID, as it should */
	if (rdma_read_gid_l2_fields(attr, NULL, ah->roce.dmac))
		eth_zero_addr(ah->roce.dmac);
	rdma_put_gid_attr(attr);
}

#endif
