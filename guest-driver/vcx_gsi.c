// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcx: the GSI QP (QP1) of the RoCE port, the QP ib_mad sends and receives MADs on
 * (ib_cm, and through it rdma_cm, rides on it).
 *
 * The device has no set_deth_sqpn capability, so, as mlx5_ib does without it, the GSI
 * QP is one hardware QP of service type QP1 used for both directions: CREATE_QP with st
 * QP1 returns an ordinary QP number (commands, doorbells and CQEs use it), while the
 * transport treats the QP as QP 1 on the wire (source QPN 1, destination QPN 1 reaches
 * it, Q_Key 0x80010000). The ib_qp reports qp_num 1, as mlx5_ib's GSI QP does.
 *
 * Unlike mlx5_ib, the QP completes sends on the consumer's send CQ directly: mlx5_ib's
 * private send CQ and completion relay exist for its per-P_Key transmit QPs, which a
 * device without set_deth_sqpn never creates.
 *
 * Everything else is the UD path of vcx_qp.c (WQEs with a datagram segment, the AH's
 * address vector); the transitions follow mlx5_ib for special QPs: path MTU 256 and
 * log_msg_max 8, the port set at every transition, no optional parameters (mlx5's
 * opt_mask table has no QP1 column). One GSI QP per port; a second is -EBUSY.
 */
#include <rdma/ib_cache.h>

#include "vcx_verbs.h"

int vcx_gsi_claim(struct vcx_ib_dev *ibd, struct vcx_qp *qp,
		  const struct ib_qp_init_attr *attr, struct ib_udata *udata)
{
	/* MADs are the kernel's: no user GSI QP (no ABI for one) */
	if (udata)
		return -EOPNOTSUPP;
	if (attr->port_num != VCX_IB_PORT || attr->srq)
		return -EINVAL;
	if (cmpxchg(&ibd->gsi_qp, NULL, qp)) {
		ibdev_warn(&ibd->ibdev, "GSI QP already exists on port %u\n", attr->port_num);
		return -EBUSY;
	}
	return 0;
}

void vcx_gsi_release(struct vcx_ib_dev *ibd, struct vcx_qp *qp)
{
	cmpxchg(&ibd->gsi_qp, qp, NULL);
}

/* QPC fields mlx5_ib sets for special QPs at every transition. */
void vcx_gsi_fill_qpc(struct vcx_qp *qp, u8 *qpc)
{
	vcx_set(qpc, VCX_QPC_MTU, IB_MTU_256);
	vcx_set(qpc, VCX_QPC_LOG_MSG_MAX, VCX_GSI_LOG_MSG_MAX);
	vcx_set(qpc + VCX_QPC_PRI_PATH_AT, VCX_ADS_VHCA_PORT_NUM, qp->port);
}

/*
 * A GSI receive CQE carries the packet's P_Key (imm_inval_pkey); ib_mad answers with
 * its index. Other QPs have the one P_Key, index 0.
 */
u16 vcx_qp_wc_pkey_index(struct vcx_qp *qp, const u8 *cqe)
{
	u16 pkey = vcx_get(cqe, VCX_CQE_IMM_INVAL_PKEY) & 0xffff;
	u16 index;

	if (qp->st != VCX_QP_ST_QP1 ||
	    ib_find_cached_pkey(qp->ibqp.device, qp->port, pkey, &index))
		return 0;
	return index;
}
