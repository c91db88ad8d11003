// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vcx provider: address handles.
 *
 * An AH is the 48-byte address vector of a UD datagram segment (prm-wqe.h), built once
 * here and copied into every UD WQE that names the AH (sq.c adds qkey and remote QPN).
 * The port is Ethernet (RoCE), so every AH carries a GRH; the destination MAC comes from
 * the kernel (create_ah udata), which resolves it from the GID's neighbour entry.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vcx.h"
#include "vcx-abi.h"
#include "vcx/prm-wqe.h"

/* RoCEv2 UDP source port: from the flow label (as IBTA suggests), else from the GID. */
static uint16_t roce_udp_sport(const struct ibv_ah_attr *attr)
{
	uint32_t fl = attr->grh.flow_label & IB_GRH_FLOWLABEL_MASK;
	uint32_t h = 0;
	int i;

	if (fl)
		return ibv_flow_label_to_udp_sport(fl);
	for (i = 0; i < 16; i++)
		h = h * 31 + attr->grh.dgid.raw[i];
	return (uint16_t)(IB_ROCE_UDP_ENCAP_VALID_PORT_MIN |
			  (h % (IB_ROCE_UDP_ENCAP_VALID_PORT_MAX -
				IB_ROCE_UDP_ENCAP_VALID_PORT_MIN + 1)));
}

static int build_av(struct ibv_context *context, const struct ibv_ah_attr *attr,
		    uint8_t *av)
{
	enum ibv_gid_type_sysfs gid_type;
	struct ibv_port_attr port_attr;

	if (ibv_query_port(context, attr->port_num, &port_attr))
		return errno;
	memset(av, 0, VCX_WQE_AV_SIZE);
	if (port_attr.link_layer == IBV_LINK_LAYER_ETHERNET) {
		if (!attr->is_global)
			return EINVAL;
		if (ibv_query_gid_type(context, attr->port_num, attr->grh.sgid_index,
				       &gid_type))
			return errno ? errno : EINVAL;
		if (gid_type == IBV_GID_TYPE_SYSFS_ROCE_V2)
			vcx_set(av, VCX_WQE_AV_RLID_UDP_SPORT, roce_udp_sport(attr));
		vcx_set(av, VCX_WQE_AV_SL_ROCE, attr->sl & 0x7);
		/* RoCE always has a GRH: the grh bit is reserved (0) on Ethernet. */
	} else {
		vcx_set(av, VCX_WQE_AV_MLID, attr->src_path_bits & 0x7f);
		vcx_set(av, VCX_WQE_AV_RLID_UDP_SPORT, attr->dlid);
		vcx_set(av, VCX_WQE_AV_SL_IB, attr->sl & 0xf);
		if (attr->is_global)
			vcx_set(av, VCX_WQE_AV_GRH, 1);
	}
	if (attr->is_global) {
		vcx_set(av, VCX_WQE_AV_TCLASS, attr->grh.traffic_class);
		vcx_set(av, VCX_WQE_AV_HOP_LIMIT, attr->grh.hop_limit);
		vcx_set(av, VCX_WQE_AV_SGID_INDEX, attr->grh.sgid_index);
		vcx_set(av, VCX_WQE_AV_FLOW_LABEL, attr->grh.flow_label & IB_GRH_FLOWLABEL_MASK);
		memcpy(vcx_ptr(av, VCX_WQE_AV_RGID), attr->grh.dgid.raw, VCX_WQE_AV_RGID_LEN);
	}
	return 0;
}

struct ibv_ah *vcx_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct vcx_context *ctx = to_vcx_ctx(pd->context);
	struct vcx_create_ah_cmd_resp resp = {};
	struct vcx_ah *ah;
	int err;

	if (attr->port_num < 1 || attr->port_num > ctx->num_ports) {
		errno = EINVAL;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;
	err = build_av(pd->context, attr, ah->av);
	if (err)
		goto err_free;
	if (ibv_cmd_create_ah(pd, &ah->ibv_ah, attr, &resp.ibv_resp, sizeof(resp))) {
		err = errno;
		goto err_free;
	}
	memcpy(vcx_ptr(ah->av, VCX_WQE_AV_RMAC), resp.drv_payload.dmac, VCX_WQE_AV_RMAC_LEN);
	return &ah->ibv_ah;

err_free:
	free(ah);
	errno = err;
	return NULL;
}

int vcx_destroy_ah(struct ibv_ah *ibah)
{
	int ret = ibv_cmd_destroy_ah(ibah);

	if (ret)
		return ret;
	free(to_vcx_ah(ibah));
	return 0;
}
