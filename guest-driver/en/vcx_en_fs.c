// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcx: receive steering (PRM "Flow Table"; mlx5e's en_fs.c and lib/fs_ttc.c, reduced).
 *
 * Two NIC RX flow tables, created at open:
 *
 *   L2 table (level 0, the NIC RX root; misses are dropped)
 *     group 0, index 0:       no criteria           promiscuous (IFF_PROMISC)
 *     group 1, index 1:       DMAC multicast bit    all-multicast (IFF_ALLMULTI)
 *     group 2, index 2..255:  full DMAC             own MAC, UC list, MC list, broadcast
 *     every entry forwards to the TTC table
 *   TTC table (level 1)
 *     group 0, index 0..3:    ethertype + ip_protocol   IPv4/IPv6 x TCP/UDP
 *     group 1, index 4..5:    ethertype                 IPv4, IPv6 (other protocols)
 *     group 2, index 6:       no criteria               anything else
 *     each entry forwards to the TIR of its traffic type (vcx_en_main.c)
 *
 * rx_mode (ndo_set_rx_mode, atomic) queues a work item that brings the L2 entries and
 * the vport context (UC/MC address lists, promiscuous flags: the embedded switch's
 * filter in front of the root table) in line with the netdev's addresses and flags.
 */
#include <linux/etherdevice.h>
#include <linux/netdevice.h>

#include "vcx_en.h"

#define VCX_EN_TTC_LOG_SIZE	4

struct vcx_en_addrs {
	u8 (*uc)[ETH_ALEN];
	u8 (*mc)[ETH_ALEN];
	u32 nuc, nmc;
	bool promisc, allmulti;
	bool uc_overflow, mc_overflow;
};

/* ------------------------------------------------------------------------------------
 * Flow table commands
 */
static int vcx_en_create_ft(struct vcx_en_priv *priv, struct vcx_en_ft *ft, u32 level,
			    u32 log_size)
{
	u8 in[VCX_CREATE_FT_IN_LEN] = {};
	u8 out[VCX_CREATE_FT_OUT_LEN] = {};
	u8 *ftc = in + VCX_CREATE_FT_IN_CTX_AT;
	int err;

	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_CREATE_FLOW_TABLE);
	vcx_set(in, VCX_FT_IN_TABLE_TYPE, VCX_FLOW_TABLE_TYPE_NIC_RX);
	vcx_set(ftc, VCX_FTC_TABLE_MISS_ACTION, VCX_FT_MISS_ACTION_DEF);
	vcx_set(ftc, VCX_FTC_LEVEL, level);
	vcx_set(ftc, VCX_FTC_LOG_SIZE, log_size);
	err = vcx_cmd_exec(priv->vdev, in, sizeof(in), out, sizeof(out));
	if (err)
		return err;
	ft->id = vcx_get(out, VCX_CREATE_FT_OUT_TABLE_ID);
	ft->level = level;
	ft->log_size = log_size;
	ft->num_groups = 0;
	ft->created = true;
	return 0;
}

static void vcx_en_destroy_ft(struct vcx_en_priv *priv, struct vcx_en_ft *ft)
{
	u8 in[VCX_DESTROY_FT_IN_LEN] = {};
	u8 out[VCX_OBJ_CMD_LEN] = {};
	u8 gin[VCX_DESTROY_FG_IN_LEN];
	u8 gout[VCX_OBJ_CMD_LEN];
	u32 i;

	if (!ft->created)
		return;
	for (i = 0; i < ft->num_groups; i++) {
		memset(gin, 0, sizeof(gin));
		memset(gout, 0, sizeof(gout));
		vcx_set(gin, VCX_CMD_IN_OPCODE, VCX_CMD_OP_DESTROY_FLOW_GROUP);
		vcx_set(gin, VCX_FT_IN_TABLE_TYPE, VCX_FLOW_TABLE_TYPE_NIC_RX);
		vcx_set(gin, VCX_FT_IN_TABLE_ID, ft->id);
		vcx_set(gin, VCX_DESTROY_FG_IN_GROUP_ID, ft->group_id[i]);
		vcx_cmd_exec(priv->vdev, gin, sizeof(gin), gout, sizeof(gout));
	}
	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_DESTROY_FLOW_TABLE);
	vcx_set(in, VCX_FT_IN_TABLE_TYPE, VCX_FLOW_TABLE_TYPE_NIC_RX);
	vcx_set(in, VCX_FT_IN_TABLE_ID, ft->id);
	if (vcx_cmd_exec(priv->vdev, in, sizeof(in), out, sizeof(out)) &&
	    !vcx_in_error(priv->vdev))
		netdev_err(priv->netdev, "DESTROY_FLOW_TABLE 0x%x failed\n", ft->id);
	ft->created = false;
	ft->num_groups = 0;
}

/* A group of [start, end] matching the outer-header bits set in crit (64 bytes). */
static int vcx_en_create_fg(struct vcx_en_priv *priv, struct vcx_en_ft *ft, u32 start,
			    u32 end, const u8 *crit)
{
	u8 out[VCX_OBJ_CMD_LEN] = {};
	u8 *in;
	int err;

	in = kzalloc(VCX_CREATE_FG_IN_LEN, GFP_KERNEL);
	if (!in)
		return -ENOMEM;
	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_CREATE_FLOW_GROUP);
	vcx_set(in, VCX_FT_IN_TABLE_TYPE, VCX_FLOW_TABLE_TYPE_NIC_RX);
	vcx_set(in, VCX_FG_IN_TABLE_ID, ft->id);
	vcx_set(in, VCX_FG_START_FLOW_INDEX, start);
	vcx_set(in, VCX_FG_END_FLOW_INDEX, end);
	if (crit && memchr_inv(crit, 0, VCX_MATCH_SET_SIZE)) {
		vcx_set(in, VCX_FG_MATCH_CRITERIA_ENABLE, VCX_MATCH_CRITERIA_OUTER);
		memcpy(in + VCX_FG_MATCH_CRITERIA_AT + VCX_FTE_MATCH_OUTER_AT, crit, VCX_MATCH_SET_SIZE);
	}
	err = vcx_cmd_exec(priv->vdev, in, VCX_CREATE_FG_IN_LEN, out, sizeof(out));
	kfree(in);
	if (err)
		return err;
	ft->group_id[ft->num_groups++] = vcx_get(out, VCX_CREATE_FG_OUT_GROUP_ID);
	return 0;
}

/* An entry at index of group g: frames matching val forward to one destination. */
static int vcx_en_set_fte(struct vcx_en_priv *priv, struct vcx_en_ft *ft, u32 g, u32 index,
			  const u8 *val, u8 dest_type, u32 dest_id)
{
	size_t inlen = VCX_SET_FTE_IN_LEN + VCX_DEST_SIZE;
	u8 out[VCX_OBJ_CMD_LEN] = {};
	u8 *in, *fc, *dest;
	int err;

	in = kzalloc(inlen, GFP_KERNEL);
	if (!in)
		return -ENOMEM;
	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_SET_FLOW_TABLE_ENTRY);
	vcx_set(in, VCX_FT_IN_TABLE_TYPE, VCX_FLOW_TABLE_TYPE_NIC_RX);
	vcx_set(in, VCX_SET_FTE_IN_TABLE_ID, ft->id);
	vcx_set(in, VCX_SET_FTE_IN_FLOW_INDEX, index);
	fc = in + VCX_SET_FTE_IN_CTX_AT;
	vcx_set(fc, VCX_FTE_GROUP_ID, ft->group_id[g]);
	vcx_set(fc, VCX_FTE_ACTION, VCX_FLOW_ACTION_FWD_DEST);
	vcx_set(fc, VCX_FTE_DESTINATION_LIST_SIZE, 1);
	if (val)
		memcpy(fc + VCX_FTE_MATCH_VALUE_AT + VCX_FTE_MATCH_OUTER_AT, val, VCX_MATCH_SET_SIZE);
	dest = fc + VCX_FTE_DEST_AT;
	vcx_set(dest, VCX_DEST_TYPE, dest_type);
	vcx_set(dest, VCX_DEST_ID, dest_id);
	err = vcx_cmd_exec(priv->vdev, in, inlen, out, sizeof(out));
	kfree(in);
	return err;
}

static void vcx_en_del_fte(struct vcx_en_priv *priv, struct vcx_en_ft *ft, u32 index)
{
	u8 in[VCX_DELETE_FTE_IN_LEN] = {};
	u8 out[VCX_OBJ_CMD_LEN] = {};

	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_DELETE_FLOW_TABLE_ENTRY);
	vcx_set(in, VCX_FT_IN_TABLE_TYPE, VCX_FLOW_TABLE_TYPE_NIC_RX);
	vcx_set(in, VCX_DELETE_FTE_IN_TABLE_ID, ft->id);
	vcx_set(in, VCX_DELETE_FTE_IN_FLOW_INDEX, index);
	if (vcx_cmd_exec(priv->vdev, in, sizeof(in), out, sizeof(out)) &&
	    !vcx_in_error(priv->vdev))
		netdev_err(priv->netdev, "DELETE_FLOW_TABLE_ENTRY %u of table 0x%x failed\n",
			   index, ft->id);
}

/* SET_FLOW_TABLE_ROOT; op_mod 1 disconnects the root (mlx5_cmd_update_root_ft). */
static int vcx_en_set_root(struct vcx_en_priv *priv, struct vcx_en_ft *ft)
{
	u8 in[VCX_SET_FT_ROOT_IN_LEN] = {};
	u8 out[VCX_OBJ_CMD_LEN] = {};

	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_SET_FLOW_TABLE_ROOT);
	vcx_set(in, VCX_FT_IN_TABLE_TYPE, VCX_FLOW_TABLE_TYPE_NIC_RX);
	if (ft)
		vcx_set(in, VCX_SET_FT_ROOT_IN_TABLE_ID, ft->id);
	else
		vcx_set(in, VCX_SET_FT_ROOT_IN_OP_MOD, 1);	/* disconnect */
	return vcx_cmd_exec(priv->vdev, in, sizeof(in), out, sizeof(out));
}

/* ------------------------------------------------------------------------------------
 * Match values
 */
static void vcx_en_match_dmac(u8 *m, const u8 *mac)
{
	vcx_set(m, VCX_MATCH_DMAC_47_16, (u32)mac[0] << 24 | mac[1] << 16 | mac[2] << 8 | mac[3]);
	vcx_set(m, VCX_MATCH_DMAC_15_0, mac[4] << 8 | mac[5]);
}

/* The TTC table: traffic types to TIRs (mlx5's ttc rules with ethertype matching). */
static int vcx_en_create_ttc(struct vcx_en_priv *priv)
{
	static const struct {
		enum vcx_en_tt tt;
		u16 ethertype;
		u8 proto;
		u8 group;
	} rules[] = {
		{ VCX_EN_TT_IPV4_TCP, ETH_P_IP, IPPROTO_TCP, 0 },
		{ VCX_EN_TT_IPV6_TCP, ETH_P_IPV6, IPPROTO_TCP, 0 },
		{ VCX_EN_TT_IPV4_UDP, ETH_P_IP, IPPROTO_UDP, 0 },
		{ VCX_EN_TT_IPV6_UDP, ETH_P_IPV6, IPPROTO_UDP, 0 },
		{ VCX_EN_TT_IPV4, ETH_P_IP, 0, 1 },
		{ VCX_EN_TT_IPV6, ETH_P_IPV6, 0, 1 },
		{ VCX_EN_TT_ANY, 0, 0, 2 },
	};
	struct vcx_en_ft *ft = &priv->fs.ttc;
	u8 crit[VCX_MATCH_SET_SIZE] = {};
	u8 val[VCX_MATCH_SET_SIZE];
	int i, err;

	err = vcx_en_create_ft(priv, ft, 1, VCX_EN_TTC_LOG_SIZE);
	if (err)
		return err;
	vcx_set(crit, VCX_MATCH_ETHERTYPE, 0xffff);
	vcx_set(crit, VCX_MATCH_IP_PROTOCOL, 0xff);
	err = vcx_en_create_fg(priv, ft, 0, 3, crit);
	if (err)
		return err;
	vcx_set(crit, VCX_MATCH_IP_PROTOCOL, 0);
	err = vcx_en_create_fg(priv, ft, 4, 5, crit);
	if (err)
		return err;
	err = vcx_en_create_fg(priv, ft, 6, 6, NULL);
	if (err)
		return err;
	for (i = 0; i < ARRAY_SIZE(rules); i++) {
		memset(val, 0, sizeof(val));
		vcx_set(val, VCX_MATCH_ETHERTYPE, rules[i].ethertype);
		vcx_set(val, VCX_MATCH_IP_PROTOCOL, rules[i].proto);
		err = vcx_en_set_fte(priv, ft, rules[i].group, i, val, VCX_FLOW_DEST_TYPE_TIR,
				     priv->tirn[rules[i].tt]);
		if (err)
			return err;
	}
	return 0;
}

static void vcx_en_destroy_ttc(struct vcx_en_priv *priv)
{
	int i;

	if (!priv->fs.ttc.created)
		return;
	for (i = 0; i < VCX_EN_NUM_TT; i++)
		vcx_en_del_fte(priv, &priv->fs.ttc, i);
	vcx_en_destroy_ft(priv, &priv->fs.ttc);
}

static int vcx_en_create_l2(struct vcx_en_priv *priv)
{
	struct vcx_en_ft *ft = &priv->fs.l2;
	u8 crit[VCX_MATCH_SET_SIZE] = {};
	int err;

	err = vcx_en_create_ft(priv, ft, 0, VCX_EN_L2_LOG_SIZE);
	if (err)
		return err;
	err = vcx_en_create_fg(priv, ft, VCX_EN_L2_PROMISC_IX, VCX_EN_L2_PROMISC_IX, NULL);
	if (err)
		return err;
	vcx_set(crit, VCX_MATCH_DMAC_47_16, 0x01000000);	/* the group bit */
	err = vcx_en_create_fg(priv, ft, VCX_EN_L2_ALLMULTI_IX, VCX_EN_L2_ALLMULTI_IX, crit);
	if (err)
		return err;
	vcx_set(crit, VCX_MATCH_DMAC_47_16, 0xffffffff);
	vcx_set(crit, VCX_MATCH_DMAC_15_0, 0xffff);
	return vcx_en_create_fg(priv, ft, VCX_EN_L2_DMAC_FIRST, BIT(VCX_EN_L2_LOG_SIZE) - 1,
				crit);
}

static void vcx_en_destroy_l2(struct vcx_en_priv *priv)
{
	struct vcx_en_fs *fs = &priv->fs;
	u32 i;

	if (!fs->l2.created)
		return;
	if (fs->promisc_fte)
		vcx_en_del_fte(priv, &fs->l2, VCX_EN_L2_PROMISC_IX);
	if (fs->allmulti_fte)
		vcx_en_del_fte(priv, &fs->l2, VCX_EN_L2_ALLMULTI_IX);
	fs->promisc_fte = fs->allmulti_fte = false;
	for (i = 0; i < fs->num_dmac; i++)
		vcx_en_del_fte(priv, &fs->l2, fs->dmac[i].index);
	fs->num_dmac = 0;
	vcx_en_destroy_ft(priv, &fs->l2);
}

/* ------------------------------------------------------------------------------------
 * The destinations: RQT over the channels' RQs and the TIRs of the traffic types
 * (mlx5e_create_indirect_rqt, mlx5e_create_indirect_tirs)
 */
int vcx_en_create_rqt(struct vcx_en_priv *priv)
{
	size_t inlen = VCX_CREATE_RQT_IN_LEN + VCX_EN_RQT_SIZE * VCX_RQT_ENTRY_SIZE;
	u8 out[VCX_OBJ_CMD_LEN] = {};
	u8 *in, *rqtc;
	u32 i;
	int err;

	in = kvzalloc(inlen, GFP_KERNEL);
	if (!in)
		return -ENOMEM;
	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_CREATE_RQT);
	rqtc = in + VCX_CREATE_RQT_IN_CTX_AT;
	vcx_set(rqtc, VCX_RQTC_RQT_MAX_SIZE, VCX_EN_RQT_SIZE);
	vcx_set(rqtc, VCX_RQTC_RQT_ACTUAL_SIZE, VCX_EN_RQT_SIZE);
	/* ethtool's default spread: entry i -> channel i mod n. */
	for (i = 0; i < VCX_EN_RQT_SIZE; i++)
		vcx_set((rqtc + VCX_RQTC_RQ_NUM_AT) + i * VCX_RQT_ENTRY_SIZE,
			VCX_RQT_RQN, priv->channels[i % priv->open_channels].rq.rqn);
	err = vcx_cmd_exec(priv->vdev, in, inlen, out, sizeof(out));
	kvfree(in);
	if (err)
		return err;
	priv->rqtn = vcx_get(out, VCX_CREATE_RQT_OUT_RQTN);
	priv->rqt_created = true;
	return 0;
}

/* Fields each hashing TIR selects (mlx5e's default RSS: IP pair, plus ports for TCP/UDP). */
#define VCX_RX_HASH_IP		(VCX_HASH_FIELD_SEL_SRC_IP | VCX_HASH_FIELD_SEL_DST_IP)
#define VCX_RX_HASH_IP_L4PORTS	(VCX_RX_HASH_IP | VCX_HASH_FIELD_SEL_L4_SPORT | \
				 VCX_HASH_FIELD_SEL_L4_DPORT)

struct vcx_en_tt_hash {
	u8 l3, l4;
	u32 fields;
	bool hash;
};

static const struct vcx_en_tt_hash vcx_en_tt_hash[VCX_EN_NUM_TT] = {
	[VCX_EN_TT_IPV4_TCP] = { VCX_L3_PROT_TYPE_IPV4, VCX_L4_PROT_TYPE_TCP,
				 VCX_RX_HASH_IP_L4PORTS, true },
	[VCX_EN_TT_IPV6_TCP] = { VCX_L3_PROT_TYPE_IPV6, VCX_L4_PROT_TYPE_TCP,
				 VCX_RX_HASH_IP_L4PORTS, true },
	[VCX_EN_TT_IPV4_UDP] = { VCX_L3_PROT_TYPE_IPV4, VCX_L4_PROT_TYPE_UDP,
				 VCX_RX_HASH_IP_L4PORTS, true },
	[VCX_EN_TT_IPV6_UDP] = { VCX_L3_PROT_TYPE_IPV6, VCX_L4_PROT_TYPE_UDP,
				 VCX_RX_HASH_IP_L4PORTS, true },
	[VCX_EN_TT_IPV4] = { VCX_L3_PROT_TYPE_IPV4, 0, VCX_RX_HASH_IP, true },
	[VCX_EN_TT_IPV6] = { VCX_L3_PROT_TYPE_IPV6, 0, VCX_RX_HASH_IP, true },
	[VCX_EN_TT_ANY] = { 0, 0, 0, false },
};

int vcx_en_create_tir(struct vcx_en_priv *priv, enum vcx_en_tt tt)
{
	const struct vcx_en_tt_hash *h = &vcx_en_tt_hash[tt];
	u8 in[VCX_CREATE_TIR_IN_LEN] = {};
	u8 out[VCX_OBJ_CMD_LEN] = {};
	u8 *tirc, *sel;
	int err;

	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_CREATE_TIR);
	tirc = in + VCX_CREATE_TIR_IN_CTX_AT;
	vcx_set(tirc, VCX_TIRC_DISP_TYPE, VCX_TIRC_DISP_TYPE_INDIRECT);
	vcx_set(tirc, VCX_TIRC_INDIRECT_TABLE, priv->rqtn);
	vcx_set(tirc, VCX_TIRC_TRANSPORT_DOMAIN, priv->tdn);
	/* Our own multicast and broadcast frames are not received back (IPv6 DAD). */
	vcx_set(tirc, VCX_TIRC_SELF_LB_BLOCK,
		VCX_TIRC_SELF_LB_BLOCK_UNICAST | VCX_TIRC_SELF_LB_BLOCK_MULTICAST);
	if (h->hash) {
		vcx_set(tirc, VCX_TIRC_RX_HASH_FN, VCX_RX_HASH_FN_TOEPLITZ);
		memcpy(vcx_ptr(tirc, VCX_TIRC_RX_HASH_TOEPLITZ_KEY), priv->rss_key,
		       VCX_EN_RSS_KEY_SIZE);
		sel = tirc + VCX_TIRC_HASH_OUTER_AT;
		vcx_set(sel, VCX_HASH_SEL_L3_PROT_TYPE, h->l3);
		vcx_set(sel, VCX_HASH_SEL_L4_PROT_TYPE, h->l4);
		vcx_set(sel, VCX_HASH_SEL_SELECTED_FIELDS, h->fields);
	}
	err = vcx_cmd_exec(priv->vdev, in, sizeof(in), out, sizeof(out));
	if (err)
		return err;
	priv->tirn[tt] = vcx_get(out, VCX_CREATE_TIR_OUT_TIRN);
	priv->tir_created[tt] = true;
	return 0;
}

void vcx_en_destroy_tirs_rqt(struct vcx_en_priv *priv)
{
	int tt;

	for (tt = 0; tt < VCX_EN_NUM_TT; tt++) {
		if (priv->tir_created[tt])
			vcx_en_destroy_obj(priv->vdev, VCX_CMD_OP_DESTROY_TIR, priv->tirn[tt]);
		priv->tir_created[tt] = false;
	}
	if (priv->rqt_created)
		vcx_en_destroy_obj(priv->vdev, VCX_CMD_OP_DESTROY_RQT, priv->rqtn);
	priv->rqt_created = false;
}


/* ------------------------------------------------------------------------------------
 * rx_mode: L2 entries and the vport context
 */
static void vcx_en_collect_addrs(struct net_device *ndev, struct vcx_en_addrs *a)
{
	struct netdev_hw_addr *ha;

	a->nuc = a->nmc = 0;
	a->promisc = !!(ndev->flags & IFF_PROMISC);
	a->allmulti = !!(ndev->flags & IFF_ALLMULTI);
	a->uc_overflow = a->mc_overflow = false;
	ether_addr_copy(a->uc[a->nuc++], ndev->dev_addr);
	netif_addr_lock_bh(ndev);
	netdev_for_each_uc_addr(ha, ndev) {
		if (a->nuc == VCX_EN_VPORT_LIST_MAX) {
			a->uc_overflow = true;
			break;
		}
		ether_addr_copy(a->uc[a->nuc++], ha->addr);
	}
	netdev_for_each_mc_addr(ha, ndev) {
		if (a->nmc == VCX_EN_VPORT_LIST_MAX - 1) {
			a->mc_overflow = true;
			break;
		}
		ether_addr_copy(a->mc[a->nmc++], ha->addr);
	}
	netif_addr_unlock_bh(ndev);
	/* Broadcast is in the multicast list, as mlx5e puts it there. */
	eth_broadcast_addr(a->mc[a->nmc++]);
}

static int vcx_en_vport_set_list(struct vcx_en_priv *priv, u8 type, u8 (*list)[ETH_ALEN],
				 u32 n)
{
	size_t inlen = VCX_MODIFY_NIC_VPORT_CTX_IN_LEN + n * VCX_MAC_LAYOUT_SIZE;
	u8 out[VCX_MODIFY_NIC_VPORT_CTX_OUT_LEN] = {};
	u8 *in, *ctx, *addr;
	u32 i;
	int err;

	in = kzalloc(inlen, GFP_KERNEL);
	if (!in)
		return -ENOMEM;
	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_MODIFY_NIC_VPORT_CONTEXT);
	vcx_set(in, VCX_MODIFY_NIC_VPORT_CTX_IN_FIELD_SELECT, VCX_NIC_VPORT_FS_ADDRESSES_LIST);
	ctx = vcx_ptr(in, VCX_MODIFY_NIC_VPORT_CTX_IN_CTX);
	vcx_set(ctx, VCX_NIC_VPORT_CTX_ALLOWED_LIST_TYPE, type);
	vcx_set(ctx, VCX_NIC_VPORT_CTX_ALLOWED_LIST_SIZE, n);
	for (i = 0; i < n; i++) {
		addr = ctx + VCX_NIC_VPORT_CTX_LIST_AT +
		       i * VCX_MAC_LAYOUT_SIZE;
		vcx_set(addr, VCX_MAC_LAYOUT_47_32, list[i][0] << 8 | list[i][1]);
		vcx_set(addr, VCX_MAC_LAYOUT_31_0, (u32)list[i][2] << 24 |
			list[i][3] << 16 | list[i][4] << 8 | list[i][5]);
	}
	err = vcx_cmd_exec(priv->vdev, in, inlen, out, sizeof(out));
	kfree(in);
	return err;
}

static int vcx_en_vport_set_promisc(struct vcx_en_priv *priv, bool uc, bool mc, bool all)
{
	u8 out[VCX_MODIFY_NIC_VPORT_CTX_OUT_LEN] = {};
	u8 *in, *ctx;
	int err;

	in = kzalloc(VCX_MODIFY_NIC_VPORT_CTX_IN_LEN, GFP_KERNEL);
	if (!in)
		return -ENOMEM;
	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_MODIFY_NIC_VPORT_CONTEXT);
	vcx_set(in, VCX_MODIFY_NIC_VPORT_CTX_IN_FIELD_SELECT, VCX_NIC_VPORT_FS_PROMISC);
	ctx = vcx_ptr(in, VCX_MODIFY_NIC_VPORT_CTX_IN_CTX);
	vcx_set(ctx, VCX_NIC_VPORT_CTX_PROMISC_UC, uc);
	vcx_set(ctx, VCX_NIC_VPORT_CTX_PROMISC_MC, mc);
	vcx_set(ctx, VCX_NIC_VPORT_CTX_PROMISC_ALL, all);
	err = vcx_cmd_exec(priv->vdev, in, VCX_MODIFY_NIC_VPORT_CTX_IN_LEN, out, sizeof(out));
	kfree(in);
	return err;
}

static bool vcx_en_addr_in(u8 (*list)[ETH_ALEN], u32 n, const u8 *mac)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (ether_addr_equal(list[i], mac))
			return true;
	return false;
}

/* The L2 table's DMAC entries: remove what went, add what came. */
static void vcx_en_sync_dmac(struct vcx_en_priv *priv, struct vcx_en_addrs *a)
{
	struct vcx_en_fs *fs = &priv->fs;
	struct vcx_en_ft *ft = &fs->l2;
	u8 val[VCX_MATCH_SET_SIZE];
	u32 i, j, index;
	u8 *mac;

	for (i = 0; i < fs->num_dmac;) {
		mac = fs->dmac[i].mac;
		if (vcx_en_addr_in(a->uc, a->nuc, mac) || vcx_en_addr_in(a->mc, a->nmc, mac)) {
			i++;
			continue;
		}
		vcx_en_del_fte(priv, ft, fs->dmac[i].index);
		fs->dmac[i] = fs->dmac[--fs->num_dmac];
	}
	for (i = 0; i < a->nuc + a->nmc; i++) {
		mac = i < a->nuc ? a->uc[i] : a->mc[i - a->nuc];
		for (j = 0; j < fs->num_dmac; j++)
			if (ether_addr_equal(fs->dmac[j].mac, mac))
				break;
		if (j < fs->num_dmac)
			continue;
		if (fs->num_dmac == VCX_EN_L2_MAX_DMAC)
			break;
		/* The lowest free index of the DMAC group. */
		for (index = VCX_EN_L2_DMAC_FIRST;; index++) {
			for (j = 0; j < fs->num_dmac; j++)
				if (fs->dmac[j].index == index)
					break;
			if (j == fs->num_dmac)
				break;
		}
		memset(val, 0, sizeof(val));
		vcx_en_match_dmac(val, mac);
		if (vcx_en_set_fte(priv, ft, 2, index, val, VCX_FLOW_DEST_TYPE_FLOW_TABLE,
				   fs->ttc.id)) {
			netdev_warn(priv->netdev, "no L2 steering entry for %pM\n", mac);
			continue;
		}
		ether_addr_copy(fs->dmac[fs->num_dmac].mac, mac);
		fs->dmac[fs->num_dmac++].index = index;
	}
}

static void vcx_en_sync_flag_fte(struct vcx_en_priv *priv, bool want, bool *have, u32 g,
				 u32 index, const u8 *val)
{
	if (want == *have)
		return;
	if (want) {
		if (vcx_en_set_fte(priv, &priv->fs.l2, g, index, val, VCX_FLOW_DEST_TYPE_FLOW_TABLE,
				   priv->fs.ttc.id))
			netdev_warn(priv->netdev, "L2 steering entry %u failed\n", index);
		else
			*have = true;
	} else {
		vcx_en_del_fte(priv, &priv->fs.l2, index);
		*have = false;
	}
}

/* Bring steering and the vport in line with the netdev (state_lock held, open). */
static void vcx_en_sync_rx_mode(struct vcx_en_priv *priv)
{
	struct vcx_en_fs *fs = &priv->fs;
	struct vcx_en_addrs a = {};
	u8 allmulti[VCX_MATCH_SET_SIZE] = {};
	bool puc, pmc, pall;

	a.uc = kcalloc(VCX_EN_VPORT_LIST_MAX, ETH_ALEN, GFP_KERNEL);
	a.mc = kcalloc(VCX_EN_VPORT_LIST_MAX, ETH_ALEN, GFP_KERNEL);
	if (!a.uc || !a.mc)
		goto out;
	vcx_en_collect_addrs(priv->netdev, &a);

	vcx_set(allmulti, VCX_MATCH_DMAC_47_16, 0x01000000);
	vcx_en_sync_flag_fte(priv, a.promisc || a.uc_overflow, &fs->promisc_fte, 0,
			     VCX_EN_L2_PROMISC_IX, NULL);
	vcx_en_sync_flag_fte(priv, a.allmulti || a.mc_overflow, &fs->allmulti_fte, 1,
			     VCX_EN_L2_ALLMULTI_IX, allmulti);
	vcx_en_sync_dmac(priv, &a);

	if (vcx_en_vport_set_list(priv, VCX_NVPRT_LIST_TYPE_UC, a.uc, a.nuc) ||
	    vcx_en_vport_set_list(priv, VCX_NVPRT_LIST_TYPE_MC, a.mc, a.nmc))
		netdev_warn(priv->netdev, "updating the vport address lists failed\n");
	puc = a.uc_overflow;
	pmc = a.allmulti || a.mc_overflow;
	pall = a.promisc;
	if (puc != fs->vport_promisc_uc || pmc != fs->vport_promisc_mc ||
	    pall != fs->vport_promisc_all) {
		if (vcx_en_vport_set_promisc(priv, puc, pmc, pall)) {
			netdev_warn(priv->netdev, "updating the vport promiscuous mode failed\n");
		} else {
			fs->vport_promisc_uc = puc;
			fs->vport_promisc_mc = pmc;
			fs->vport_promisc_all = pall;
		}
	}
out:
	kfree(a.uc);
	kfree(a.mc);
}

void vcx_en_rx_mode_work(struct work_struct *work)
{
	struct vcx_en_priv *priv = container_of(work, struct vcx_en_priv, fs.rx_mode_work);

	mutex_lock(&priv->state_lock);
	if (priv->opened && priv->fs.l2.created)
		vcx_en_sync_rx_mode(priv);
	mutex_unlock(&priv->state_lock);
}

void vcx_en_set_rx_mode(struct net_device *ndev)
{
	struct vcx_en_priv *priv = vcx_en_priv(ndev);

	queue_work(system_wq, &priv->fs.rx_mode_work);
}

/* ------------------------------------------------------------------------------------
 * Creation and destruction (state_lock held)
 */
int vcx_en_fs_create(struct vcx_en_priv *priv)
{
	struct vcx_en_fs *fs = &priv->fs;
	int err;

	fs->dmac = kcalloc(VCX_EN_L2_MAX_DMAC, sizeof(*fs->dmac), GFP_KERNEL);
	if (!fs->dmac)
		return -ENOMEM;
	fs->num_dmac = 0;
	err = vcx_en_create_ttc(priv);
	if (!err)
		err = vcx_en_create_l2(priv);
	if (!err)
		err = vcx_en_set_root(priv, &fs->l2);
	if (err) {
		netdev_err(priv->netdev, "creating the steering tables failed (%d)\n", err);
		vcx_en_fs_destroy(priv);
		return err;
	}
	fs->root_set = true;
	vcx_en_sync_rx_mode(priv);
	return 0;
}

void vcx_en_fs_destroy(struct vcx_en_priv *priv)
{
	struct vcx_en_fs *fs = &priv->fs;

	if (fs->root_set && vcx_en_set_root(priv, NULL) && !vcx_in_error(priv->vdev))
		netdev_err(priv->netdev, "disconnecting the NIC RX root failed\n");
	fs->root_set = false;
	vcx_en_destroy_l2(priv);
	vcx_en_destroy_ttc(priv);
	/* The vport forgets our lists: the addresses are given again at the next open. */
	if (!vcx_in_error(priv->vdev) && (fs->vport_promisc_uc || fs->vport_promisc_mc ||
					  fs->vport_promisc_all)) {
		vcx_en_vport_set_promisc(priv, false, false, false);
		fs->vport_promisc_uc = fs->vport_promisc_mc = fs->vport_promisc_all = false;
	}
	kfree(fs->dmac);
	fs->dmac = NULL;
}
