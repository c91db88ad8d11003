// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcx: UD multicast groups (ATTACH_TO_MCG / DETACH_FROM_MCG), the attach_mcast and
 * detach_mcast verbs. On RoCE the group is its multicast GID alone (rdma_cm maps an IPv4
 * group to ::ffff:a.b.c.d, IPv6 ones are ff00::/8); the LID is meaningless and ignored,
 * as mlx5_ib ignores it. The device checks the QP type, the GID, duplicates and its
 * table limits (log_max_mcg groups of max_qp_mcg QPs), and detaches a destroyed QP.
 */
#include "vcx_verbs.h"

static int vcx_mcg_cmd(struct ib_qp *ibqp, union ib_gid *gid, u16 opcode)
{
	struct vcx_qp *qp = to_vqp(ibqp);
	u8 in[VCX_MCG_IN_LEN] = {};
	u8 out[VCX_OBJ_CMD_LEN] = {};

	vcx_set(in, VCX_CMD_IN_OPCODE, opcode);
	vcx_set(in, VCX_MCG_IN_QPN, qp->qpn);
	memcpy(vcx_ptr(in, VCX_MCG_IN_GID), gid->raw, sizeof(gid->raw));
	return vcx_cmd_exec(qp->vdev, in, sizeof(in), out, sizeof(out));
}

int vcx_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	int err = vcx_mcg_cmd(ibqp, gid, VCX_CMD_OP_ATTACH_TO_MCG);

	if (err)
		ibdev_dbg(ibqp->device, "QP 0x%x ATTACH_TO_MCG %pI6: %d\n",
			  to_vqp(ibqp)->qpn, gid->raw, err);
	return err;
}

int vcx_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	int err = vcx_mcg_cmd(ibqp, gid, VCX_CMD_OP_DETACH_FROM_MCG);

	if (err)
		ibdev_dbg(ibqp->device, "QP 0x%x DETACH_FROM_MCG %pI6: %d\n",
			  to_vqp(ibqp)->qpn, gid->raw, err);
	return err;
}
