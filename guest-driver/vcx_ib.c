// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcx: the ib_device.
 *
 * Registered once the function is up (vcx_load() -> vcx_ib_add()) and unregistered
 * first when it goes down, as mlx5_ib sits on top of mlx5_core. One port, Ethernet link
 * layer (RoCE): the port's netdev (en/, created by the core before this device) carries
 * the addresses ib_core's RoCE GID management builds the GID table from; add_gid/del_gid
 * program the device's RoCE address table with SET_ROCE_ADDRESS.
 *
 * Device limits come from QUERY_HCA_CAP (general, RoCE and, if atomics are offered, the
 * atomic page), turned into ib_device_attr the way mlx5_ib_query_device() does.
 *
 * Completion and asynchronous EQEs reach the objects through per-type xarrays in
 * struct vcx_dev (CQN, QPN, SRQN); handlers run under the xarray lock so that a
 * destroy (which erases the entry first) never races with an event.
 */
#include <linux/module.h>
#include <net/addrconf.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>

#include "vcx_verbs.h"

/* ------------------------------------------------------------------------------------
 * Commands of the port: RoCE enable, RoCE addresses
 */
/* MODIFY_NIC_VPORT_CONTEXT roce_en (mlx5_nic_vport_enable_roce()). */
static int vcx_set_roce_en(struct vcx_dev *vdev, bool on)
{
	u8 out[VCX_MODIFY_NIC_VPORT_CTX_OUT_LEN] = {};
	u8 *in;
	int err;

	in = kzalloc(VCX_MODIFY_NIC_VPORT_CTX_IN_LEN, GFP_KERNEL);
	if (!in)
		return -ENOMEM;
	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_MODIFY_NIC_VPORT_CONTEXT);
	vcx_set(in, VCX_MODIFY_NIC_VPORT_CTX_IN_FIELD_SELECT, VCX_NIC_VPORT_FS_ROCE_EN);
	vcx_set(vcx_ptr(in, VCX_MODIFY_NIC_VPORT_CTX_IN_CTX), VCX_NIC_VPORT_CTX_ROCE_EN, on);
	err = vcx_cmd_exec(vdev, in, VCX_MODIFY_NIC_VPORT_CTX_IN_LEN, out, sizeof(out));
	kfree(in);
	return err;
}

static int vcx_set_roce_address(struct vcx_dev *vdev, u16 index, const union ib_gid *gid,
				const u8 *mac, bool vlan, u16 vlan_id, u8 version,
				u8 l3_type)
{
	u8 in[VCX_SET_ROCE_ADDRESS_IN_LEN] = {};
	u8 out[VCX_SET_ROCE_ADDRESS_OUT_LEN] = {};
	u8 *addr = vcx_ptr(in, VCX_SET_ROCE_ADDRESS_IN_ENTRY);

	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_SET_ROCE_ADDRESS);
	vcx_set(in, VCX_ROCE_ADDRESS_IN_INDEX, index);
	vcx_set(in, VCX_ROCE_ADDRESS_IN_VHCA_PORT_NUM, VCX_IB_PORT);
	if (gid) {
		memcpy(vcx_ptr(addr, VCX_GID_L3_ADDRESS), gid->raw, 16);
		vcx_set(addr, VCX_GID_VLAN_VALID, vlan);
		vcx_set(addr, VCX_GID_VLAN_ID, vlan_id);
		vcx_set(addr, VCX_GID_MAC_47_32, mac[0] << 8 | mac[1]);
		vcx_set(addr, VCX_GID_MAC_31_0,
			(u32)mac[2] << 24 | mac[3] << 16 | mac[4] << 8 | mac[5]);
		vcx_set(addr, VCX_GID_L3_TYPE, l3_type);
		vcx_set(addr, VCX_GID_VERSION, version);
	}
	return vcx_cmd_exec(vdev, in, sizeof(in), out, sizeof(out));
}

static int vcx_ib_add_gid(const struct ib_gid_attr *attr, void **context)
{
	struct vcx_dev *vdev = ibdev_to_vdev(attr->device);
	u16 vlan_id = 0xffff;
	u8 mac[ETH_ALEN];
	u8 version, l3;
	int err;

	err = rdma_read_gid_l2_fields(attr, &vlan_id, mac);
	if (err)
		return err;
	switch (attr->gid_type) {
	case IB_GID_TYPE_ROCE:
		version = VCX_GID_VERSION_1;
		break;
	case IB_GID_TYPE_ROCE_UDP_ENCAP:
		version = VCX_GID_VERSION_2;
		break;
	default:
		return -EINVAL;
	}
	l3 = ipv6_addr_v4mapped((const struct in6_addr *)&attr->gid) ?
		VCX_GID_L3_IPV4 : VCX_GID_L3_IPV6;
	return vcx_set_roce_address(vdev, attr->index, &attr->gid, mac, vlan_id < VLAN_CFI_MASK,
				    vlan_id < VLAN_CFI_MASK ? vlan_id : 0, version, l3);
}

static int vcx_ib_del_gid(const struct ib_gid_attr *attr, void **context)
{
	return vcx_set_roce_address(ibdev_to_vdev(attr->device), attr->index, NULL, NULL,
				    false, 0, 0, 0);
}

/* ------------------------------------------------------------------------------------
 * Device and port queries
 */
static int vcx_query_atomic_caps(struct vcx_ib_dev *ibd)
{
	struct vcx_dev *vdev = ibd->vdev;
	u8 in[VCX_QUERY_HCA_CAP_IN_LEN] = {};
	u32 ops, sizes;
	u8 *out;
	int err;

	ibd->atomic_caps = 0;
	if (!vcx_cap(vdev, ATOMIC))
		return 0;
	out = kzalloc(VCX_QUERY_HCA_CAP_OUT_LEN, GFP_KERNEL);
	if (!out)
		return -ENOMEM;
	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_QUERY_HCA_CAP);
	vcx_set(in, VCX_CMD_IN_OP_MOD, VCX_HCA_CAP_OP_MOD(VCX_HCA_CAP_TYPE_ATOMIC,
							   VCX_HCA_CAP_OP_MOD_CUR));
	err = vcx_cmd_exec(vdev, in, sizeof(in), out, VCX_QUERY_HCA_CAP_OUT_LEN);
	if (!err) {
		u8 *cap = vcx_ptr(out, VCX_HCA_CAP_CAPABILITY);

		ops = vcx_get(cap, VCX_CAP_ATOMIC_OPERATIONS);
		sizes = vcx_get(cap, VCX_CAP_ATOMIC_SIZE_QP);
		if (sizes & VCX_ATOMIC_SIZE_8B) {
			if (ops & VCX_ATOMIC_OP_CMP_SWAP)
				ibd->atomic_caps |= VCX_ATOMIC_CAP_CMP_SWP;
			if (ops & VCX_ATOMIC_OP_FETCH_ADD)
				ibd->atomic_caps |= VCX_ATOMIC_CAP_FETCH_ADD;
		}
	}
	kfree(out);
	return err;
}

static void vcx_ib_init_limits(struct vcx_ib_dev *ibd)
{
	struct vcx_dev *vdev = ibd->vdev;
	u32 sq_sg, rq_sg;

	ibd->max_sq_desc = min_t(u32, vcx_cap(vdev, MAX_WQE_SZ_SQ),
				 VCX_SEND_WQE_MAX_WQEBBS * VCX_SEND_WQEBB);
	ibd->max_rq_desc = vcx_cap(vdev, MAX_WQE_SZ_RQ);
	/*
	 * FRWR needs UMR WQEs that load MTT translations into a free key: the device says
	 * so with umr_extended_translation_offset = 1 and umr_modify_entity_size_disabled = 0
	 * (the same bits mlx5_ib checks before loading translations with UMR).
	 */
	ibd->frwr = vcx_cap(vdev, UMR_EXTENDED_TRANSLATION_OFFSET) &&
		    !vcx_cap(vdev, UMR_MODIFY_ENTITY_SIZE_DISABLED) &&
		    ibd->max_sq_desc >= ALIGN(VCX_UMR_REG_WQE_SIZE, VCX_SEND_WQEBB);
	/*
	 * Memory windows: KLM keys the library binds with UMR WQEs, invalidated by UMR or
	 * SEND_WITH_INV; imaicl is the bit mlx5_ib checks before it offers them.
	 */
	ibd->mw = ibd->frwr && vcx_cap(vdev, IMAICL);
	/* 2^log_max_klm_list_size entries per registration, as mlx5_ib reads it */
	ibd->frwr_max = min_t(u32, VCX_FRWR_MAX_PAGES,
			      1u << vcx_cap(vdev, LOG_MAX_KLM_LIST_SIZE));
	/* mlx5_ib_query_device(): a send WQE carries a control and a remote address segment. */
	sq_sg = ibd->max_sq_desc > VCX_WQE_CTRL_SIZE + VCX_WQE_RADDR_SEG_SIZE ?
		(ibd->max_sq_desc - VCX_WQE_CTRL_SIZE - VCX_WQE_RADDR_SEG_SIZE) /
		VCX_WQE_DATA_SEG_SIZE : 0;
	rq_sg = ibd->max_rq_desc / VCX_WQE_DATA_SEG_SIZE;
	ibd->max_sge = min(sq_sg, rq_sg);
	ibd->max_srq_sge = rq_sg ? rq_sg - 1 : 0;	/* the next segment takes one */
	ibd->max_inline = ibd->max_sq_desc > VCX_WQE_CTRL_SIZE + VCX_WQE_AV_SIZE + VCX_WQE_DS ?
		ibd->max_sq_desc - VCX_WQE_CTRL_SIZE - VCX_WQE_AV_SIZE -
		VCX_WQE_INLINE_HDR_SIZE : 0;
	ibd->gid_table_len = vcx_get(vdev->caps.roce, VCX_CAP_ROCE_ADDRESS_TABLE_SIZE);
}

static int vcx_ib_query_device(struct ib_device *ibdev, struct ib_device_attr *props,
			       struct ib_udata *uhw)
{
	struct vcx_ib_dev *ibd = to_vibdev(ibdev);
	struct vcx_dev *vdev = ibd->vdev;
	u32 log_max_qp_sz = vcx_cap(vdev, LOG_MAX_QP_SZ);

	if (uhw && (uhw->inlen || uhw->outlen) &&
	    !ib_is_udata_cleared(uhw, 0, uhw->inlen))
		return -EINVAL;

	memset(props, 0, sizeof(*props));
	props->fw_ver = (u64)vdev->fw_major << 32 | (u64)vdev->fw_minor << 16 |
			vdev->fw_subminor;
	props->sys_image_guid = ibdev->node_guid;
	props->max_mr_size = ~0ull;
	props->page_size_cap = ~(u64)(SZ_4K - 1);
	props->vendor_id = vdev->pdev->vendor;
	props->vendor_part_id = vdev->pdev->device;
	props->hw_ver = vdev->pdev->revision;
	props->max_qp = 1 << vcx_cap(vdev, LOG_MAX_QP);
	props->max_qp_wr = 1 << log_max_qp_sz;
	props->device_cap_flags = IB_DEVICE_CHANGE_PHY_PORT | IB_DEVICE_PORT_ACTIVE_EVENT |
				  IB_DEVICE_SYS_IMAGE_GUID | IB_DEVICE_RC_RNR_NAK_GEN;
	if (ibd->frwr)
		props->device_cap_flags |= IB_DEVICE_MEM_MGT_EXTENSIONS;
	if (ibd->xrc)
		props->device_cap_flags |= IB_DEVICE_XRC;
	if (ibd->mw) {
		props->device_cap_flags |= IB_DEVICE_MEM_WINDOW |
					   IB_DEVICE_MEM_WINDOW_TYPE_2B;
		props->max_mw = 1 << vcx_cap(vdev, LOG_MAX_MKEY);
		/* indirect (KLM) keys come with windows: gappy registration, as mlx5_ib */
		props->kernel_cap_flags |= IBK_SG_GAPS_REG;
	}
	props->max_send_sge = ibd->max_sge;
	props->max_recv_sge = ibd->max_sge;
	props->max_sge_rd = ibd->max_sge;
	props->max_cq = 1 << vcx_cap(vdev, LOG_MAX_CQ);
	props->max_cqe = (1 << vcx_cap(vdev, LOG_MAX_CQ_SZ)) - 1;
	if (vcx_cap(vdev, CQ_MODERATION)) {
		/* cq_max_count is 16 bits, cq_period 12 (vcx_modify_cq) */
		props->cq_caps.max_cq_moderation_count = U16_MAX;
		props->cq_caps.max_cq_moderation_period = VCX_CQ_MAX_PERIOD;
	}
	props->max_mr = 1 << vcx_cap(vdev, LOG_MAX_MKEY);
	props->max_pd = 1 << vcx_cap(vdev, LOG_MAX_PD);
	props->max_qp_rd_atom = 1 << vcx_cap(vdev, LOG_MAX_RA_RES_QP);
	props->max_qp_init_rd_atom = 1 << vcx_cap(vdev, LOG_MAX_RA_REQ_QP);
	props->max_res_rd_atom = props->max_qp_rd_atom * props->max_qp;
	props->max_srq = 1 << vcx_cap(vdev, LOG_MAX_SRQ);
	props->max_srq_wr = (1 << vcx_cap(vdev, LOG_MAX_SRQ_SZ)) - 1;
	props->max_srq_sge = ibd->max_srq_sge;
	props->local_ca_ack_delay = vcx_cap(vdev, LOCAL_CA_ACK_DELAY);
	props->max_pkeys = 1;
	props->max_ah = INT_MAX;
	props->max_fast_reg_page_list_len = ibd->frwr ? ibd->frwr_max : 0;
	props->atomic_cap = ibd->atomic_caps ==
		(VCX_ATOMIC_CAP_CMP_SWP | VCX_ATOMIC_CAP_FETCH_ADD) ?
		IB_ATOMIC_HCA : IB_ATOMIC_NONE;
	props->masked_atomic_cap = IB_ATOMIC_NONE;
	/* UD multicast groups, as mlx5_ib derives them (vcx_mcast.c) */
	props->max_mcast_grp = 1 << vcx_cap(vdev, LOG_MAX_MCG);
	props->max_mcast_qp_attach = vcx_cap(vdev, MAX_QP_MCG);
	props->max_total_mcast_qp_attach = props->max_mcast_qp_attach * props->max_mcast_grp;
	props->max_pi_fast_reg_page_list_len = 0;
	/*
	 * The internal timer stamps CQEs (mlx5_ib reports the same: the cap's kHz, a 63-bit
	 * mask); a device without one (0 kHz) has no completion timestamps.
	 */
	props->hca_core_clock = vcx_cap(vdev, DEVICE_FREQUENCY_KHZ);
	if (props->hca_core_clock)
		props->timestamp_mask = 0x7fffffffffffffffULL;
	return 0;
}

/* Speed and width from PTYS eth_proto_oper (mlx5 translate_eth_legacy_proto_oper()). */
static void vcx_query_port_speed(struct vcx_dev *vdev, struct ib_port_attr *props)
{
	u8 in[VCX_ACCESS_REG_HDR_LEN + VCX_REG_PTYS_LEN] = {};
	u8 out[VCX_ACCESS_REG_HDR_LEN + VCX_REG_PTYS_LEN] = {};
	u8 *data = vcx_ptr(in, VCX_ACCESS_REG_IN_DATA);
	u32 oper;

	props->active_speed = IB_SPEED_SDR;
	props->active_width = IB_WIDTH_1X;
	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_ACCESS_REG);
	vcx_set(in, VCX_CMD_IN_OP_MOD, VCX_ACCESS_REG_OP_MOD_READ);
	vcx_set(in, VCX_ACCESS_REG_IN_REGISTER_ID, VCX_REG_PTYS);
	vcx_set(data, VCX_PTYS_LOCAL_PORT, VCX_IB_PORT);
	vcx_set(data, VCX_PTYS_PROTO_MASK, VCX_PTYS_PROTO_ETH);
	if (vcx_cmd_exec(vdev, in, sizeof(in), out, sizeof(out)))
		return;
	oper = vcx_get(vcx_ptr(out, VCX_ACCESS_REG_OUT_DATA), VCX_PTYS_ETH_PROTO_OPER);
	if (oper & (BIT(VCX_ETH_LINK_100GBASE_CR4) | BIT(VCX_ETH_LINK_100GBASE_SR4) |
		    BIT(VCX_ETH_LINK_100GBASE_KR4) | BIT(VCX_ETH_LINK_100GBASE_LR4))) {
		props->active_speed = IB_SPEED_EDR;
		props->active_width = IB_WIDTH_4X;
	} else if (oper & (BIT(VCX_ETH_LINK_40GBASE_CR4) | BIT(VCX_ETH_LINK_40GBASE_KR4) |
			   BIT(VCX_ETH_LINK_40GBASE_SR4) | BIT(VCX_ETH_LINK_40GBASE_LR4))) {
		props->active_speed = IB_SPEED_QDR;
		props->active_width = IB_WIDTH_4X;
	} else if (oper & (BIT(VCX_ETH_LINK_25GBASE_CR) | BIT(VCX_ETH_LINK_25GBASE_KR) |
			   BIT(VCX_ETH_LINK_25GBASE_SR))) {
		props->active_speed = IB_SPEED_EDR;
	} else if (oper & (BIT(VCX_ETH_LINK_10GBASE_CR) | BIT(VCX_ETH_LINK_10GBASE_SR) |
			   BIT(VCX_ETH_LINK_10GBASE_KR) | BIT(VCX_ETH_LINK_10GBASE_ER))) {
		props->active_speed = IB_SPEED_QDR;
	}
}

static int vcx_ib_query_port(struct ib_device *ibdev, u32 port, struct ib_port_attr *props)
{
	struct vcx_ib_dev *ibd = to_vibdev(ibdev);
	struct net_device *ndev = ibd->netdev;
	enum ib_mtu ndev_mtu;
	u8 state;
	int err;

	/* props is zeroed by the core. */
	err = vcx_en_query_vport_state(ibd->vdev, &state);
	if (err)
		return err;
	props->state = state == VCX_VPORT_STATE_UP ? IB_PORT_ACTIVE : IB_PORT_DOWN;
	props->phys_state = state == VCX_VPORT_STATE_UP ? IB_PORT_PHYS_STATE_LINK_UP :
			    IB_PORT_PHYS_STATE_DISABLED;
	props->gid_tbl_len = ibd->gid_table_len;
	props->port_cap_flags = IB_PORT_CM_SUP;
	props->max_msg_sz = 1u << vcx_cap(ibd->vdev, LOG_MAX_MSG);
	props->pkey_tbl_len = 1;
	props->bad_pkey_cntr = 0;
	props->qkey_viol_cntr = 0;
	props->max_mtu = IB_MTU_4096;
	props->active_mtu = IB_MTU_4096;
	vcx_query_port_speed(ibd->vdev, props);
	props->max_vl_num = 1;
	if (ndev) {
		ndev_mtu = iboe_get_mtu(READ_ONCE(ndev->mtu));
		props->active_mtu = min(props->max_mtu, ndev_mtu);
		if (!netif_running(ndev) || !netif_carrier_ok(ndev)) {
			props->state = IB_PORT_DOWN;
			props->phys_state = IB_PORT_PHYS_STATE_DISABLED;
		}
	}
	return 0;
}

static int vcx_ib_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey)
{
	if (index > 0)
		return -EINVAL;
	*pkey = 0xffff;
	return 0;
}

static int vcx_ib_get_port_immutable(struct ib_device *ibdev, u32 port,
				     struct ib_port_immutable *immutable)
{
	struct vcx_ib_dev *ibd = to_vibdev(ibdev);
	u32 version = vcx_get(ibd->vdev->caps.roce, VCX_CAP_ROCE_VERSION);

	immutable->pkey_tbl_len = 1;
	immutable->gid_tbl_len = ibd->gid_table_len;
	immutable->core_cap_flags = 0;
	if (version & VCX_ROCE_VERSION_1)
		immutable->core_cap_flags |= RDMA_CORE_PORT_IBA_ROCE;
	if (version & VCX_ROCE_VERSION_2)
		immutable->core_cap_flags |= RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static enum rdma_link_layer vcx_ib_get_link_layer(struct ib_device *ibdev, u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

static void vcx_ib_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	struct vcx_dev *vdev = ibdev_to_vdev(ibdev);

	snprintf(str, IB_FW_VERSION_NAME_MAX, "%u.%u.%u", vdev->fw_major, vdev->fw_minor,
		 vdev->fw_subminor);
}

/* ------------------------------------------------------------------------------------
 * UARs, user contexts and mmap
 */
int vcx_ib_alloc_uar(struct vcx_dev *vdev, u32 *index)
{
	u8 in[VCX_ALLOC_UAR_IN_LEN] = {};
	u8 out[VCX_ALLOC_UAR_OUT_LEN] = {};
	int err;

	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_ALLOC_UAR);
	err = vcx_cmd_exec(vdev, in, sizeof(in), out, sizeof(out));
	if (!err)
		*index = vcx_get(out, VCX_ALLOC_UAR_OUT_UAR);
	return err;
}

void vcx_ib_dealloc_uar(struct vcx_dev *vdev, u32 index)
{
	u8 in[VCX_DEALLOC_UAR_IN_LEN] = {};
	u8 out[VCX_DEALLOC_UAR_OUT_LEN] = {};
	int err;

	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_DEALLOC_UAR);
	vcx_set(in, VCX_DEALLOC_UAR_IN_UAR, index);
	err = vcx_cmd_exec(vdev, in, sizeof(in), out, sizeof(out));
	if (err && !vcx_in_error(vdev))
		dev_warn(vcx_dev(vdev), "DEALLOC_UAR %u failed (%d)\n", index, err);
}

static int vcx_ib_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct vcx_ucontext *uctx = to_vuctx(ibuc);
	struct vcx_ib_dev *ibd = to_vibdev(ibuc->device);
	struct vcx_dev *vdev = ibd->vdev;
	struct vcx_alloc_ucontext_req req = {};
	struct vcx_alloc_ucontext_resp resp = {};
	struct vcx_user_mmap_entry *entry;
	u32 i;
	int err;

	if (udata->inlen && !ib_is_udata_cleared(udata, sizeof(req),
						 udata->inlen > sizeof(req) ?
						 udata->inlen - sizeof(req) : 0))
		return -EOPNOTSUPP;
	err = ib_copy_from_udata(&req, udata, min(udata->inlen, sizeof(req)));
	if (err)
		return err;
	if (req.comp_mask || (req.lib_caps & ~VCX_LIB_CAPS_SUPPORTED))
		return -EOPNOTSUPP;
	uctx->num_uars = req.num_uars ? req.num_uars : VCX_UCTX_DEFAULT_UARS;
	if (uctx->num_uars > VCX_UCTX_MAX_UARS)
		return -EINVAL;
	mutex_init(&uctx->db_lock);
	INIT_LIST_HEAD(&uctx->db_pages);

	for (i = 0; i < uctx->num_uars; i++) {
		entry = kzalloc(sizeof(*entry), GFP_KERNEL);
		if (!entry) {
			err = -ENOMEM;
			goto err_uars;
		}
		entry->vdev = vdev;
		err = vcx_ib_alloc_uar(vdev, &entry->uar_index);
		if (err) {
			kfree(entry);
			goto err_uars;
		}
		/* The library maps UAR page i at pgoff (VCX_MMAP_UAR << 8) | i. */
		err = rdma_user_mmap_entry_insert_exact(ibuc, &entry->rdma_entry, PAGE_SIZE,
							(VCX_MMAP_UAR << VCX_MMAP_CMD_SHIFT) | i);
		if (err) {
			vcx_ib_dealloc_uar(vdev, entry->uar_index);
			kfree(entry);
			goto err_uars;
		}
		uctx->uar_index[i] = entry->uar_index;
		uctx->uar_entry[i] = &entry->rdma_entry;
	}

	resp.qp_tab_size = 1u << vcx_cap(vdev, LOG_MAX_QP);
	resp.num_uars = uctx->num_uars;
	resp.bfregs_per_uar = VCX_UAR_BFREGS_PER_PAGE;
	resp.bf_reg_size = VCX_UAR_BF_REG_SIZE;
	resp.tot_bfregs = uctx->num_uars * VCX_UAR_BFREGS_PER_PAGE;
	resp.cache_line_size = cache_line_size();
	resp.max_sq_desc_sz = ibd->max_sq_desc;
	resp.max_rq_desc_sz = ibd->max_rq_desc;
	resp.max_send_wqebb = 1u << vcx_cap(vdev, LOG_MAX_QP_SZ);
	resp.max_recv_wr = 1u << vcx_cap(vdev, LOG_MAX_QP_SZ);
	resp.max_srq_recv_wr = 1u << vcx_cap(vdev, LOG_MAX_SRQ_SZ);
	resp.max_cqe = 1u << vcx_cap(vdev, LOG_MAX_CQ_SZ);
	resp.max_sge = ibd->max_sge;
	resp.max_inline_data = ibd->max_inline;
	resp.num_ports = 1;
	resp.cqe_version = 0;
	resp.atomic_caps = ibd->atomic_caps;
	resp.device_caps = ibd->mw ? VCX_DEVICE_CAP_MW : 0;
	if (vcx_cap(ibd->vdev, DEVICE_FREQUENCY_KHZ)) {
		resp.device_caps |= VCX_DEVICE_CAP_COMPLETION_TS;
		resp.hca_core_clock_offset = VCX_ISEG_INTERNAL_TIMER_H & (PAGE_SIZE - 1);
	}
	err = ib_copy_to_udata(udata, &resp, min(udata->outlen, sizeof(resp)));
	if (err)
		goto err_uars;
	return 0;

err_uars:
	while (i--) {
		rdma_user_mmap_entry_remove(uctx->uar_entry[i]);
		uctx->uar_entry[i] = NULL;
	}
	return err;
}

static void vcx_ib_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	struct vcx_ucontext *uctx = to_vuctx(ibuc);
	u32 i;

	/* DEALLOC_UAR happens in mmap_free, once no mapping is left. */
	for (i = 0; i < uctx->num_uars; i++)
		if (uctx->uar_entry[i])
			rdma_user_mmap_entry_remove(uctx->uar_entry[i]);
	WARN_ON(!list_empty(&uctx->db_pages));
}

/*
 * Device removal with user contexts open: ib_core destroys their objects and zaps the UAR
 * mappings itself; having this op tells it not to wait for the processes to close.
 */
static void vcx_ib_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

static void vcx_ib_mmap_free(struct rdma_user_mmap_entry *rdma_entry)
{
	struct vcx_user_mmap_entry *entry =
		container_of(rdma_entry, struct vcx_user_mmap_entry, rdma_entry);

	vcx_ib_dealloc_uar(entry->vdev, entry->uar_index);
	kfree(entry);
}

/*
 * The internal timer's page for ibv_query_rt_values (as mlx5_ib maps its core clock): read
 * only, no entry to track, nothing in the page a read can change.
 */
static int vcx_ib_mmap_clock(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct vcx_dev *vdev = ibdev_to_vdev(ibuc->device);
	phys_addr_t pfn;

	if (!vcx_cap(vdev, DEVICE_FREQUENCY_KHZ) || vcx_mmap_index(vma->vm_pgoff) ||
	    vma->vm_end - vma->vm_start != PAGE_SIZE)
		return -EINVAL;
	if (vma->vm_flags & VM_WRITE)
		return -EPERM;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_clear(vma, VM_MAYWRITE);
#else
	vma->vm_flags &= ~VM_MAYWRITE;
#endif
	pfn = (pci_resource_start(vdev->pdev, 0) + VCX_ISEG_INTERNAL_TIMER_H) >> PAGE_SHIFT;
	return rdma_user_mmap_io(ibuc, vma, pfn, PAGE_SIZE, pgprot_noncached(vma->vm_page_prot),
				 NULL);
}

static int vcx_ib_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct vcx_dev *vdev = ibdev_to_vdev(ibuc->device);
	struct rdma_user_mmap_entry *rdma_entry;
	struct vcx_user_mmap_entry *entry;
	phys_addr_t pfn;
	int err;

	if (vcx_mmap_cmd(vma->vm_pgoff) == VCX_MMAP_CORE_CLOCK)
		return vcx_ib_mmap_clock(ibuc, vma);
	if (vcx_mmap_cmd(vma->vm_pgoff) != VCX_MMAP_UAR)
		return -EINVAL;
	if (vma->vm_end - vma->vm_start != PAGE_SIZE)
		return -EINVAL;
	rdma_entry = rdma_user_mmap_entry_get_pgoff(ibuc, vma->vm_pgoff);
	if (!rdma_entry)
		return -EINVAL;
	entry = container_of(rdma_entry, struct vcx_user_mmap_entry, rdma_entry);
	pfn = (pci_resource_start(vdev->pdev, 0) + (u64)entry->uar_index * VCX_PAGE_SIZE) >>
	      PAGE_SHIFT;
	err = rdma_user_mmap_io(ibuc, vma, pfn, PAGE_SIZE, pgprot_noncached(vma->vm_page_prot),
				rdma_entry);
	rdma_user_mmap_entry_put(rdma_entry);
	return err;
}

/* ------------------------------------------------------------------------------------
 * Doorbell records and PAS lists
 */
int vcx_ib_db_alloc(struct vcx_dev *vdev, struct vcx_db *db)
{
	/* One record per 64-byte line, as mlx5 does, from a small coherent allocation. */
	db->db = dma_alloc_coherent(vcx_dev(vdev), cache_line_size(), &db->dma, GFP_KERNEL);
	if (!db->db)
		return -ENOMEM;
	db->upage = NULL;
	return 0;
}

void vcx_ib_db_free(struct vcx_dev *vdev, struct vcx_db *db)
{
	if (db->db)
		dma_free_coherent(vcx_dev(vdev), cache_line_size(), db->db, db->dma);
	db->db = NULL;
}

/* Pin the page holding a user doorbell record (mlx5_ib_db_map_user()). */
int vcx_ib_db_map_user(struct vcx_ucontext *uctx, u64 virt, struct vcx_db *db)
{
	struct vcx_user_db_page *page;
	int err = 0;

	if (!virt || virt & (VCX_DBR_ALIGN - 1))
		return -EINVAL;
	mutex_lock(&uctx->db_lock);
	list_for_each_entry(page, &uctx->db_pages, list)
		if (page->user_virt == (virt & PAGE_MASK))
			goto found;
	page = kzalloc(sizeof(*page), GFP_KERNEL);
	if (!page) {
		err = -ENOMEM;
		goto out;
	}
	page->user_virt = virt & PAGE_MASK;
	page->umem = ib_umem_get(uctx->ibuc.device, virt & PAGE_MASK, PAGE_SIZE, 0);
	if (IS_ERR(page->umem)) {
		err = PTR_ERR(page->umem);
		kfree(page);
		goto out;
	}
	list_add(&page->list, &uctx->db_pages);
found:
	page->refcnt++;
	db->upage = page;
	db->db = NULL;
	db->dma = sg_dma_address(page->umem->sgt_append.sgt.sgl) + (virt & ~PAGE_MASK);
out:
	mutex_unlock(&uctx->db_lock);
	return err;
}

void vcx_ib_db_unmap_user(struct vcx_ucontext *uctx, struct vcx_db *db)
{
	struct vcx_user_db_page *page = db->upage;

	if (!page)
		return;
	mutex_lock(&uctx->db_lock);
	if (!--page->refcnt) {
		list_del(&page->list);
		ib_umem_release(page->umem);
		kfree(page);
	}
	mutex_unlock(&uctx->db_lock);
	db->upage = NULL;
}

/* Pin a user queue buffer and the page of its doorbell record (CQ, QP and SRQ alike). */
int vcx_ib_user_queue_map(struct vcx_ucontext *uctx, u64 buf_addr, size_t size, int access,
			  u64 db_addr, struct ib_umem **umem, struct vcx_db *db)
{
	int err;

	*umem = ib_umem_get(uctx->ibuc.device, buf_addr, size, access);
	if (IS_ERR(*umem)) {
		err = PTR_ERR(*umem);
		*umem = NULL;
		return err;
	}
	err = vcx_ib_db_map_user(uctx, db_addr, db);
	if (err) {
		ib_umem_release(*umem);
		*umem = NULL;
	}
	return err;
}

void vcx_ib_user_queue_unmap(struct vcx_ucontext *uctx, struct ib_umem **umem,
			     struct vcx_db *db)
{
	vcx_ib_db_unmap_user(uctx, db);
	ib_umem_release(*umem);
	*umem = NULL;
}

/*
 * PAS list of the 4 KiB pages of a queue buffer: a pinned user buffer (umem), or a
 * contiguous kernel buffer of npages pages at dma.
 */
void vcx_ib_fill_pas(u8 *pas, struct ib_umem *umem, dma_addr_t dma, size_t npages)
{
	struct ib_block_iter biter;
	size_t i = 0;

	if (umem) {
		rdma_umem_for_each_dma_block(umem, &biter, VCX_PAGE_SIZE)
			vcx_set64(pas + i++ * VCX_PAS_SIZE, VCX_FLD(0, 64),
				  rdma_block_iter_dma_address(&biter));
		return;
	}
	for (i = 0; i < npages; i++)
		vcx_set64(pas + i * VCX_PAS_SIZE, VCX_FLD(0, 64), dma + i * VCX_PAGE_SIZE);
}

/* ------------------------------------------------------------------------------------
 * Events from the EQs
 */
static void vcx_ib_port_event(struct vcx_dev *vdev, u8 sub)
{
	struct vcx_ib_dev *ibd;
	struct ib_event ev = {};
	unsigned long flags;

	spin_lock_irqsave(&vdev->ib_lock, flags);
	ibd = vdev->ib;
	if (ibd) {
		/* The netdev's carrier follows in vcx_en_port_event(). */
		ev.event = sub == VCX_PORT_CHANGE_SUBTYPE_ACTIVE ? IB_EVENT_PORT_ACTIVE :
			   IB_EVENT_PORT_ERR;
		ev.device = &ibd->ibdev;
		ev.element.port_num = VCX_IB_PORT;
		ib_dispatch_event(&ev);
	}
	spin_unlock_irqrestore(&vdev->ib_lock, flags);
}

/* Asynchronous EQE of the control EQ (everything but commands and page requests). */
void vcx_ib_async_event(struct vcx_dev *vdev, const u8 *eqe)
{
	u8 type = vcx_get(eqe, VCX_EQE_TYPE);

	switch (type) {
	case VCX_EVENT_TYPE_PORT_CHANGE:
		vcx_ib_port_event(vdev, vcx_get(eqe, VCX_EQE_SUB_TYPE));
		break;
	case VCX_EVENT_TYPE_CQ_ERROR:
		vcx_cq_async_event(vdev, vcx_get(eqe, VCX_EQE_CQ_ERR_CQN),
				   vcx_get(eqe, VCX_EQE_CQ_ERR_SYNDROME));
		break;
	case VCX_EVENT_TYPE_SRQ_CATAS_ERROR:
	case VCX_EVENT_TYPE_SRQ_RQ_LIMIT:
		vcx_srq_async_event(vdev, vcx_get(eqe, VCX_EQE_QP_SRQ_NUMBER), type);
		break;
	case VCX_EVENT_TYPE_PATH_MIG:
	case VCX_EVENT_TYPE_COMM_EST:
	case VCX_EVENT_TYPE_SQ_DRAINED:
	case VCX_EVENT_TYPE_SRQ_LAST_WQE:
	case VCX_EVENT_TYPE_WQ_CATAS_ERROR:
	case VCX_EVENT_TYPE_PATH_MIG_FAILED:
	case VCX_EVENT_TYPE_WQ_INVAL_REQ_ERROR:
	case VCX_EVENT_TYPE_WQ_ACCESS_ERROR:
		if (vcx_get(eqe, VCX_EQE_QP_SRQ_TYPE) != VCX_EVENT_QUEUE_TYPE_QP) {
			dev_warn_ratelimited(vcx_dev(vdev), "event 0x%x for queue type %u\n",
					     type, vcx_get(eqe, VCX_EQE_QP_SRQ_TYPE));
			break;
		}
		vcx_qp_async_event(vdev, vcx_get(eqe, VCX_EQE_QP_SRQ_NUMBER), type);
		break;
	default:
		dev_warn_ratelimited(vcx_dev(vdev), "unhandled async event 0x%x\n", type);
		break;
	}
}

/*
 * The function entered the error state (vcx_health.c; timer or process context): kernel
 * CQs with outstanding work get their completion handler run, so that consumers poll and
 * receive their flush completions (vcx_cq.c), and IB_EVENT_DEVICE_FATAL goes to ib_core
 * (mlx5_ib does both on MLX5_DEV_EVENT_SYS_ERROR). User contexts learn of it through
 * that event; their objects go when the function is reset and the device unregistered.
 */
void vcx_ib_fatal(struct vcx_dev *vdev)
{
	struct ib_event ev = { .event = IB_EVENT_DEVICE_FATAL };
	struct vcx_ib_dev *ibd;
	unsigned long flags;
	unsigned int kicked;

	spin_lock_irqsave(&vdev->ib_lock, flags);
	ibd = vdev->ib;
	if (ibd) {
		kicked = vcx_cq_kick_all(vdev);
		ev.device = &ibd->ibdev;
		ev.element.port_num = VCX_IB_PORT;
		ib_dispatch_event(&ev);	/* queued by ib_core: any context */
		dev_info(vcx_dev(vdev), "%s: fatal error event dispatched, completion handlers run on %u CQs with outstanding work\n",
			dev_name(&ibd->ibdev.dev), kicked);
	}
	spin_unlock_irqrestore(&vdev->ib_lock, flags);
}

/* ------------------------------------------------------------------------------------
 * Registration
 */
static const struct ib_device_ops vcx_ib_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = VCX_UVERBS_ABI_VERSION,

	.add_gid = vcx_ib_add_gid,
	.alloc_mr = vcx_alloc_mr,
	.alloc_mw = vcx_alloc_mw,
	.map_mr_sg = vcx_map_mr_sg,
	.alloc_pd = vcx_alloc_pd,
	.attach_mcast = vcx_attach_mcast,
	.alloc_ucontext = vcx_ib_alloc_ucontext,
	.create_ah = vcx_create_ah,
	.create_cq = vcx_create_cq,
	.create_qp = vcx_create_qp,
	.create_srq = vcx_create_srq,
	.create_user_ah = vcx_create_ah,
	.dealloc_pd = vcx_dealloc_pd,
	.dealloc_ucontext = vcx_ib_dealloc_ucontext,
	.del_gid = vcx_ib_del_gid,
	.disassociate_ucontext = vcx_ib_disassociate_ucontext,
	.dealloc_mw = vcx_dealloc_mw,
	.dereg_mr = vcx_dereg_mr,
	.destroy_ah = vcx_destroy_ah,
	.destroy_cq = vcx_destroy_cq,
	.destroy_qp = vcx_destroy_qp,
	.destroy_srq = vcx_destroy_srq,
	.detach_mcast = vcx_detach_mcast,
	.drain_rq = vcx_drain_rq,
	.drain_sq = vcx_drain_sq,
	.get_dev_fw_str = vcx_ib_get_dev_fw_str,
	.get_dma_mr = vcx_get_dma_mr,
	.get_link_layer = vcx_ib_get_link_layer,
	.get_port_immutable = vcx_ib_get_port_immutable,
	.mmap = vcx_ib_mmap,
	.mmap_free = vcx_ib_mmap_free,
	.modify_cq = vcx_modify_cq,
	.modify_qp = vcx_modify_qp,
	.modify_srq = vcx_modify_srq,
	.poll_cq = vcx_poll_cq,
	.post_recv = vcx_post_recv,
	.post_send = vcx_post_send,
	.post_srq_recv = vcx_post_srq_recv,
	.query_device = vcx_ib_query_device,
	.query_pkey = vcx_ib_query_pkey,
	.process_mad = vcx_ib_process_mad,
	.query_port = vcx_ib_query_port,
	.query_qp = vcx_query_qp,
	.query_srq = vcx_query_srq,
	.reg_user_mr = vcx_reg_user_mr,
	.rereg_user_mr = vcx_rereg_user_mr,
	.req_notify_cq = vcx_req_notify_cq,
	.resize_cq = vcx_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, vcx_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, vcx_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, vcx_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, vcx_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, vcx_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, vcx_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, vcx_ucontext, ibuc),
};

int vcx_ib_add(struct vcx_dev *vdev)
{
	struct device *dev = vcx_dev(vdev);
	struct vcx_ib_dev *ibd;
	struct ib_device *ibdev;
	unsigned long flags;
	u8 state = VCX_VPORT_STATE_DOWN;
	int err;

	if (!vcx_cap(vdev, ROCE) || vcx_cap(vdev, PORT_TYPE) != VCX_CAP_PORT_TYPE_ETH) {
		dev_info(dev, "no RoCE on this function: no ib_device\n");
		return 0;
	}
	ibd = ib_alloc_device(vcx_ib_dev, ibdev);
	if (!ibd)
		return -ENOMEM;
	ibdev = &ibd->ibdev;
	ibd->vdev = vdev;
	spin_lock_init(&ibd->bf_lock);
	vcx_ib_init_limits(ibd);
	err = vcx_query_atomic_caps(ibd);
	if (err)
		dev_warn(dev, "atomic capabilities unavailable (%d): no atomics\n", err);

	err = vcx_en_query_mac(vdev, ibd->mac);
	if (err) {
		dev_err(dev, "QUERY_NIC_VPORT_CONTEXT failed (%d)\n", err);
		goto err_dealloc;
	}
	err = vcx_set_roce_en(vdev, true);
	if (err) {
		dev_err(dev, "enabling RoCE on the vport failed (%d)\n", err);
		goto err_dealloc;
	}
	/* The port netdev of the core (en/), as mlx5_ib takes mlx5e's. */
	ibd->netdev = vdev->netdev;
	if (!ibd->netdev) {
		dev_err(dev, "the port has no netdev: no ib_device\n");
		err = -ENODEV;
		goto err_roce;
	}
	vcx_en_query_vport_state(vdev, &state);

	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = vdev->num_comp_eqs;
	ibdev->dev.parent = dev;
	addrconf_addr_eui48((u8 *)&ibdev->node_guid, ibd->mac);
	strscpy(ibdev->node_desc, "vcx HCA", sizeof(ibdev->node_desc));
	ib_set_device_ops(ibdev, &vcx_ib_dev_ops);
	/*
	 * Kernel CQs polled from softirq or a workqueue get ib_core's adaptive moderation
	 * (DIM, through vcx_modify_cq), as mlx5_ib opts them in.
	 */
	ibdev->use_cq_dim = !!vcx_cap(vdev, CQ_MODERATION);
	vcx_xrc_set_ops(ibd);
	err = ib_device_set_netdev(ibdev, ibd->netdev, VCX_IB_PORT);
	if (err)
		goto err_roce;

	/* Before any QP: each names the port's Q counter at RST2INIT. */
	vcx_counters_init(ibd);
	spin_lock_irqsave(&vdev->ib_lock, flags);
	vdev->ib = ibd;
	spin_unlock_irqrestore(&vdev->ib_lock, flags);
	/* Without it rereg still works, with new keys: not fatal (mlx5 stage PRE_IB_REG_UMR). */
	vcx_umr_init(ibd);
	vcx_xrc_init(ibd);
	err = ib_register_device(ibdev, "vcx_%d", dev);
	if (err) {
		dev_err(dev, "ib_register_device failed (%d)\n", err);
		goto err_umr;
	}
	dev_info(dev, "%s: port 1 %s, MAC %pM, netdev %s\n", dev_name(&ibdev->dev),
		 state == VCX_VPORT_STATE_UP ? "active" : "down", ibd->mac,
		 netdev_name(ibd->netdev));
	return 0;

err_umr:
	vcx_xrc_cleanup(ibd);
	vcx_umr_cleanup(ibd);
	vcx_counters_cleanup(ibd);
	spin_lock_irqsave(&vdev->ib_lock, flags);
	vdev->ib = NULL;
	spin_unlock_irqrestore(&vdev->ib_lock, flags);
	ib_device_set_netdev(ibdev, NULL, VCX_IB_PORT);
err_roce:
	vcx_set_roce_en(vdev, false);
err_dealloc:
	ib_dealloc_device(ibdev);
	return err;
}

void vcx_ib_remove(struct vcx_dev *vdev)
{
	struct vcx_ib_dev *ibd = vdev->ib;
	unsigned long flags;

	if (!ibd)
		return;
	/* Consumers go first (ULPs are told, user contexts disassociated). */
	ib_unregister_device(&ibd->ibdev);
	vcx_xrc_cleanup(ibd);
	vcx_umr_cleanup(ibd);
	vcx_counters_cleanup(ibd);
	spin_lock_irqsave(&vdev->ib_lock, flags);
	vdev->ib = NULL;
	spin_unlock_irqrestore(&vdev->ib_lock, flags);
	ibd->netdev = NULL;
	if (!vcx_in_error(vdev))
		vcx_set_roce_en(vdev, false);
	ib_dealloc_device(&ibd->ibdev);
	WARN_ON(!xa_empty(&vdev->cq_table) || !xa_empty(&vdev->qp_table) ||
		!xa_empty(&vdev->srq_table));
}
