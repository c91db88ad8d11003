// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcx: address handles.
 *
 * An AH is the 48-byte address vector UD send WQEs carry (prm-wqe.h): RoCE always has a
 * GRH (destination GID, source GID index, hop limit, traffic class, flow label), the
 * destination MAC ib_core resolved from the GID, the SL in the RoCE position and, for
 * RoCEv2, the UDP source port. No command is involved. User AHs return the MAC in
 * vcx_create_ah_resp (the library builds its own AV).
 */
#include <rdma/ib_cache.h>

#include "vcx_verbs.h"

static u16 vcx_roce_udp_sport(struct vcx_dev *vdev, u32 flow_label)
{
	u16 min = vcx_get(vdev->caps.roce, VCX_CAP_ROCE_R_ROCE_MIN_SRC_UDP_PORT);

	return flow_label ? rdma_flow_label_to_udp_sport(flow_label) : min;
}

int vcx_ib_fill_ah_av(struct vcx_ib_dev *ibd, const struct rdma_ah_attr *ah, u8 *av)
{
	const struct ib_global_route *grh;

	if (ah->type != RDMA_AH_ATTR_TYPE_ROCE || !(rdma_ah_get_ah_flags(ah) & IB_AH_GRH))
		return -EINVAL;
	grh = rdma_ah_read_grh(ah);
	if (!grh->sgid_attr)
		return -EINVAL;
	memset(av, 0, VCX_WQE_AV_SIZE);
	memcpy(vcx_ptr(av, VCX_WQE_AV_RMAC), ah->roce.dmac, VCX_WQE_AV_RMAC_LEN);
	vcx_set(av, VCX_WQE_AV_STAT_RATE, 0);
	vcx_set(av, VCX_WQE_AV_SL_ROCE, rdma_ah_get_sl(ah) & 7);
	if (grh->sgid_attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP)
		vcx_set(av, VCX_WQE_AV_RLID_UDP_SPORT,
			vcx_roce_udp_sport(ibd->vdev, grh->flow_label));
	vcx_set(av, VCX_WQE_AV_GRH, 1);
	vcx_set(av, VCX_WQE_AV_SGID_INDEX, grh->sgid_index);
	vcx_set(av, VCX_WQE_AV_HOP_LIMIT, grh->hop_limit);
	vcx_set(av, VCX_WQE_AV_TCLASS, grh->traffic_class);
	vcx_set(av, VCX_WQE_AV_FLOW_LABEL, grh->flow_label);
	memcpy(vcx_ptr(av, VCX_WQE_AV_RGID), grh->dgid.raw, VCX_WQE_AV_RGID_LEN);
	return 0;
}

int vcx_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		  struct ib_udata *udata)
{
	struct vcx_ib_dev *ibd = to_vibdev(ibah->device);
	struct rdma_ah_attr *attr = init_attr->ah_attr;
	struct vcx_ah *ah = to_vah(ibah);
	int err;

	err = vcx_ib_fill_ah_av(ibd, attr, ah->av);
	if (err)
		return err;
	if (udata) {
		struct vcx_create_ah_resp resp = {};

		memcpy(resp.dmac, attr->roce.dmac, ETH_ALEN);
		err = ib_copy_to_udata(udata, &resp, min(udata->outlen, sizeof(resp)));
		if (err)
			return err;
	}
	return 0;
}

int vcx_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	return 0;
}
