// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcx: the port's Ethernet netdev, as mlx5e builds it on a ConnectX function.
 *
 * Created by vcx_load() once the EQs exist and before the ib_device, which takes it as
 * its port's netdev (ib_device_set_netdev); removed after the ib_device. It needs the
 * eth_net_offloads and nic_flow_table capabilities; without them the port keeps a plain
 * address holder (no data path) so that RoCE still has its GIDs, and dmesg says why.
 *
 * Objects (PRM "Ethernet Offloads", "Transport Objects", "Flow Table"):
 *   probe: transport domain, PD, one PA mkey over all memory (local read and write, the
 *          lkey of every data segment), one TIS (prio 0) and a Q counter
 *   open:  per channel a TX CQ and SQ and an RX CQ and RQ with one NAPI context; an RQT
 *          over the channels' RQs; the TIRs of the traffic types (vcx_en.h); the
 *          steering tree (vcx_en_fs.c)
 * Everything is destroyed in reverse at stop and at removal, so a reload leaves the
 * device with no NIC object.
 */
#include <linux/cpumask.h>
#include <linux/dma-mapping.h>
#include <linux/module.h>
#include <linux/rtnetlink.h>

#include "vcx_en.h"

/* ------------------------------------------------------------------------------------
 * Commands of the port and of probe-time objects
 */
/* DESTROY/DEALLOC commands that only carry the object number (at in+0x08). */
void vcx_en_destroy_obj(struct vcx_dev *vdev, u16 opcode, u32 num)
{
	u8 in[VCX_OBJ_CMD_LEN] = {};
	u8 out[VCX_OBJ_CMD_LEN] = {};
	int err;

	vcx_set(in, VCX_CMD_IN_OPCODE, opcode);
	vcx_set(in, VCX_OBJ_NUMBER, num);
	err = vcx_cmd_exec(vdev, in, sizeof(in), out, sizeof(out));
	if (err && !vcx_in_error(vdev))
		dev_err(vcx_dev(vdev), "%s 0x%x failed (%d)\n", vcx_cmd_opcode_str(opcode), num,
			err);
}

int vcx_en_query_vport_state(struct vcx_dev *vdev, u8 *state)
{
	u8 in[VCX_QUERY_VPORT_STATE_IN_LEN] = {};
	u8 out[VCX_QUERY_VPORT_STATE_OUT_LEN] = {};
	int err;

	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_QUERY_VPORT_STATE);
	vcx_set(in, VCX_CMD_IN_OP_MOD, VCX_VPORT_OP_MOD_VNIC_VPORT);
	err = vcx_cmd_exec(vdev, in, sizeof(in), out, sizeof(out));
	if (!err)
		*state = vcx_get(out, VCX_QUERY_VPORT_STATE_OUT_STATE);
	return err;
}

int vcx_en_query_mac(struct vcx_dev *vdev, u8 *mac)
{
	u8 in[VCX_QUERY_NIC_VPORT_CTX_IN_LEN] = {};
	u8 *out, *ctx;
	u32 hi, lo;
	int err;

	out = kzalloc(VCX_QUERY_NIC_VPORT_CTX_OUT_LEN, GFP_KERNEL);
	if (!out)
		return -ENOMEM;
	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_QUERY_NIC_VPORT_CONTEXT);
	err = vcx_cmd_exec(vdev, in, sizeof(in), out, VCX_QUERY_NIC_VPORT_CTX_OUT_LEN);
	if (!err) {
		ctx = vcx_ptr(out, VCX_QUERY_NIC_VPORT_CTX_OUT_CTX);
		hi = vcx_get(ctx, VCX_NIC_VPORT_CTX_MAC_47_32);
		lo = vcx_get(ctx, VCX_NIC_VPORT_CTX_MAC_31_0);
		mac[0] = hi >> 8;
		mac[1] = hi;
		mac[2] = lo >> 24;
		mac[3] = lo >> 16;
		mac[4] = lo >> 8;
		mac[5] = lo;
	}
	kfree(out);
	return err;
}

/* PAOS admin status (mlx5_set_port_admin_status): up at open, down at stop. */
static int vcx_en_set_port_admin(struct vcx_dev *vdev, bool up)
{
	u8 in[VCX_ACCESS_REG_HDR_LEN + VCX_REG_PAOS_LEN] = {};
	u8 out[VCX_ACCESS_REG_HDR_LEN + VCX_REG_PAOS_LEN] = {};
	u8 *data = vcx_ptr(in, VCX_ACCESS_REG_IN_DATA);

	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_ACCESS_REG);
	vcx_set(in, VCX_CMD_IN_OP_MOD, VCX_ACCESS_REG_OP_MOD_WRITE);
	vcx_set(in, VCX_ACCESS_REG_IN_REGISTER_ID, VCX_REG_PAOS);
	vcx_set(data, VCX_PAOS_LOCAL_PORT, 1);
	vcx_set(data, VCX_PAOS_ADMIN_STATUS, up ? VCX_PORT_STATUS_UP : VCX_PORT_STATUS_DOWN);
	vcx_set(data, VCX_PAOS_ASE, 1);
	return vcx_cmd_exec(vdev, in, sizeof(in), out, sizeof(out));
}

/* PMTU max_mtu: the largest frame the port takes, L2 headers included. */
static int vcx_en_query_port_max_mtu(struct vcx_dev *vdev, u32 *max_mtu)
{
	u8 in[VCX_ACCESS_REG_HDR_LEN + VCX_REG_PMTU_LEN] = {};
	u8 out[VCX_ACCESS_REG_HDR_LEN + VCX_REG_PMTU_LEN] = {};
	u8 *data = vcx_ptr(in, VCX_ACCESS_REG_IN_DATA);
	int err;

	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_ACCESS_REG);
	vcx_set(in, VCX_CMD_IN_OP_MOD, VCX_ACCESS_REG_OP_MOD_READ);
	vcx_set(in, VCX_ACCESS_REG_IN_REGISTER_ID, VCX_REG_PMTU);
	vcx_set(data, VCX_PMTU_LOCAL_PORT, 1);
	err = vcx_cmd_exec(vdev, in, sizeof(in), out, sizeof(out));
	if (!err)
		*max_mtu = vcx_get(vcx_ptr(out, VCX_ACCESS_REG_OUT_DATA), VCX_PMTU_MAX_MTU);
	return err;
}

/* The hardware MTU into PMTU admin_mtu and the vport context (mlx5e_set_mtu()). */
static int vcx_en_set_hw_mtu(struct vcx_dev *vdev, int mtu)
{
	u8 rin[VCX_ACCESS_REG_HDR_LEN + VCX_REG_PMTU_LEN] = {};
	u8 rout[VCX_ACCESS_REG_HDR_LEN + VCX_REG_PMTU_LEN] = {};
	u8 out[VCX_MODIFY_NIC_VPORT_CTX_OUT_LEN] = {};
	u16 hw_mtu = mtu + VCX_EN_HW_MTU_EXTRA;
	u8 *in;
	int err;

	vcx_set(rin, VCX_CMD_IN_OPCODE, VCX_CMD_OP_ACCESS_REG);
	vcx_set(rin, VCX_CMD_IN_OP_MOD, VCX_ACCESS_REG_OP_MOD_WRITE);
	vcx_set(rin, VCX_ACCESS_REG_IN_REGISTER_ID, VCX_REG_PMTU);
	vcx_set(vcx_ptr(rin, VCX_ACCESS_REG_IN_DATA), VCX_PMTU_LOCAL_PORT, 1);
	vcx_set(vcx_ptr(rin, VCX_ACCESS_REG_IN_DATA), VCX_PMTU_ADMIN_MTU, hw_mtu);
	err = vcx_cmd_exec(vdev, rin, sizeof(rin), rout, sizeof(rout));
	if (err)
		return err;

	in = kzalloc(VCX_MODIFY_NIC_VPORT_CTX_IN_LEN, GFP_KERNEL);
	if (!in)
		return -ENOMEM;
	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_MODIFY_NIC_VPORT_CONTEXT);
	vcx_set(in, VCX_MODIFY_NIC_VPORT_CTX_IN_FIELD_SELECT, VCX_NIC_VPORT_FS_MTU);
	vcx_set(vcx_ptr(in, VCX_MODIFY_NIC_VPORT_CTX_IN_CTX), VCX_NIC_VPORT_CTX_MTU, hw_mtu);
	err = vcx_cmd_exec(vdev, in, VCX_MODIFY_NIC_VPORT_CTX_IN_LEN, out, sizeof(out));
	kfree(in);
	return err;
}

static int vcx_en_alloc_res(struct vcx_en_priv *priv)
{
	struct vcx_dev *vdev = priv->vdev;
	u8 out[VCX_OBJ_CMD_LEN] = {};
	u8 in[VCX_OBJ_CMD_LEN] = {};
	u8 min[VCX_CREATE_MKEY_IN_LEN] = {};
	u8 mout[VCX_CREATE_MKEY_OUT_LEN] = {};
	u8 tin[VCX_CREATE_TIS_IN_LEN] = {};
	u8 tout[VCX_OBJ_CMD_LEN] = {};
	u8 qin[VCX_ALLOC_Q_COUNTER_IN_LEN] = {};
	u8 qout[VCX_OBJ_CMD_LEN] = {};
	u8 *mkc, *tisc;
	int err;

	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_ALLOC_TRANSPORT_DOMAIN);
	err = vcx_cmd_exec(vdev, in, sizeof(in), out, sizeof(out));
	if (err)
		return err;
	priv->tdn = vcx_get(out, VCX_ALLOC_TD_OUT_TD);
	priv->td_alloc = true;

	memset(in, 0, sizeof(in));
	memset(out, 0, sizeof(out));
	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_ALLOC_PD);
	err = vcx_cmd_exec(vdev, in, sizeof(in), out, sizeof(out));
	if (err)
		return err;
	priv->pdn = vcx_get(out, VCX_ALLOC_PD_OUT_PD);
	priv->pd_alloc = true;

	/* One PA mkey over all of memory, as mlx5e's mdev resources: every data segment
	 * carries a DMA address and this lkey. */
	mkc = min + VCX_CREATE_MKEY_IN_MKC_AT;
	vcx_set(min, VCX_CMD_IN_OPCODE, VCX_CMD_OP_CREATE_MKEY);
	vcx_set(mkc, VCX_MKC_ACCESS_MODE_1_0, VCX_MKC_ACCESS_MODE_PA);
	vcx_set(mkc, VCX_MKC_LR, 1);
	vcx_set(mkc, VCX_MKC_LW, 1);
	vcx_set(mkc, VCX_MKC_LENGTH64, 1);
	vcx_set(mkc, VCX_MKC_PD, priv->pdn);
	vcx_set(mkc, VCX_MKC_QPN, VCX_MKC_QPN_UNBOUND);
	vcx_set(mkc, VCX_MKC_MKEY_7_0, 0x42);
	err = vcx_cmd_exec(vdev, min, sizeof(min), mout, sizeof(mout));
	if (err)
		return err;
	priv->mkey = VCX_MKEY(vcx_get(mout, VCX_CREATE_MKEY_OUT_MKEY_INDEX), 0x42);
	priv->mkey_alloc = true;

	/* One TIS for traffic class 0 in the transport domain (mlx5e_create_tises). */
	vcx_set(tin, VCX_CMD_IN_OPCODE, VCX_CMD_OP_CREATE_TIS);
	tisc = tin + VCX_CREATE_TIS_IN_CTX_AT;
	vcx_set(tisc, VCX_TISC_PRIO, 0);
	vcx_set(tisc, VCX_TISC_TRANSPORT_DOMAIN, priv->tdn);
	err = vcx_cmd_exec(vdev, tin, sizeof(tin), tout, sizeof(tout));
	if (err)
		return err;
	priv->tisn = vcx_get(tout, VCX_CREATE_TIS_OUT_TISN);
	priv->tis_alloc = true;

	/* The RQs' Q counter, for rx_out_of_buffer; without one the counter is not shown. */
	if (vcx_get(vdev->caps.general, VCX_CAP_GEN_MAX_QP_CNT)) {
		vcx_set(qin, VCX_CMD_IN_OPCODE, VCX_CMD_OP_ALLOC_Q_COUNTER);
		if (!vcx_cmd_exec(vdev, qin, sizeof(qin), qout, sizeof(qout)))
			priv->q_counter = vcx_get(qout, VCX_ALLOC_Q_COUNTER_OUT_COUNTER_SET_ID);
		else
			netdev_warn(priv->netdev, "no Q counter: rx_out_of_buffer not counted\n");
	}
	return 0;
}

static void vcx_en_free_res(struct vcx_en_priv *priv)
{
	struct vcx_dev *vdev = priv->vdev;
	u8 in[VCX_DEALLOC_Q_COUNTER_IN_LEN] = {};
	u8 out[VCX_OBJ_CMD_LEN] = {};
	u8 min[VCX_OBJ_CMD_LEN] = {};
	u8 mout[VCX_OBJ_CMD_LEN] = {};

	if (priv->q_counter) {
		vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_DEALLOC_Q_COUNTER);
		vcx_set(in, VCX_DEALLOC_Q_COUNTER_IN_COUNTER_SET_ID, priv->q_counter);
		vcx_cmd_exec(vdev, in, sizeof(in), out, sizeof(out));
		priv->q_counter = 0;
	}
	if (priv->tis_alloc)
		vcx_en_destroy_obj(vdev, VCX_CMD_OP_DESTROY_TIS, priv->tisn);
	if (priv->mkey_alloc) {
		vcx_set(min, VCX_CMD_IN_OPCODE, VCX_CMD_OP_DESTROY_MKEY);
		vcx_set(min, VCX_DESTROY_MKEY_IN_MKEY_INDEX, VCX_MKEY_INDEX(priv->mkey));
		vcx_cmd_exec(vdev, min, sizeof(min), mout, sizeof(mout));
	}
	if (priv->pd_alloc) {
		memset(min, 0, sizeof(min));
		vcx_set(min, VCX_CMD_IN_OPCODE, VCX_CMD_OP_DEALLOC_PD);
		vcx_set(min, VCX_DEALLOC_PD_IN_PD, priv->pdn);
		vcx_cmd_exec(vdev, min, sizeof(min), mout, sizeof(mout));
	}
	if (priv->td_alloc)
		vcx_en_destroy_obj(vdev, VCX_CMD_OP_DEALLOC_TRANSPORT_DOMAIN, priv->tdn);
	priv->tis_alloc = priv->mkey_alloc = priv->pd_alloc = priv->td_alloc = false;
}

/* ------------------------------------------------------------------------------------
 * Completion queues
 */
static u8 *vcx_en_cqe(struct vcx_en_cq *cq, u32 n)
{
	return cq->buf + (size_t)(n & (BIT(cq->log_nent) - 1)) * VCX_CQE_SIZE;
}

/* The next CQE if software owns it (read after its ownership), else NULL. */
u8 *vcx_en_cq_next(struct vcx_en_cq *cq)
{
	u8 *cqe = vcx_en_cqe(cq, cq->cons_index);

	if (!vcx_cqe_is_sw_owned(cqe, cq->cons_index, cq->log_nent))
		return NULL;
	dma_rmb();
	return cqe;
}

/* Consumer index to the record, arm word to the record and the UAR (mlx5_cq_arm()). */
void vcx_en_cq_arm(struct vcx_en_priv *priv, struct vcx_en_cq *cq)
{
	__be32 doorbell[2];
	u32 word;

	WRITE_ONCE(cq->db[VCX_CQ_DBR_SET_CI / 4], cpu_to_be32(cq->cons_index & VCX_CQ_CI_MASK));
	word = vcx_cq_arm_word(cq->arm_sn, VCX_CQ_DB_CMD_NOTIFY, cq->cons_index);
	WRITE_ONCE(cq->db[VCX_CQ_DBR_ARM / 4], cpu_to_be32(word));
	wmb();
	doorbell[0] = cpu_to_be32(word);
	doorbell[1] = cpu_to_be32(cq->cqn);
	__raw_writeq(*(u64 *)doorbell, priv->vdev->uar + VCX_UAR_CQ_DOORBELL);
}

int vcx_en_create_cq(struct vcx_en_priv *priv, struct vcx_en_channel *ch,
			    struct vcx_en_cq *cq, u32 log_nent, const struct vcx_en_coal *coal)
{
	struct vcx_dev *vdev = priv->vdev;
	struct device *dev = vcx_dev(vdev);
	u8 out[VCX_OBJ_CMD_LEN] = {};
	size_t npages, inlen, i;
	u8 *in, *cqc, *pas;
	int err;

	cq->ch = ch;
	cq->tx = cq == &ch->sq.cq;
	vcx_en_dim_init(cq);
	cq->log_nent = log_nent;
	cq->size = max_t(size_t, (size_t)VCX_CQE_SIZE << log_nent, VCX_PAGE_SIZE);
	cq->buf = dma_alloc_coherent(dev, cq->size, &cq->dma, GFP_KERNEL);
	if (!cq->buf)
		return -ENOMEM;
	for (i = 0; i < BIT(log_nent); i++)
		vcx_cqe_init(vcx_en_cqe(cq, i));
	cq->db = dma_alloc_coherent(dev, cache_line_size(), &cq->db_dma, GFP_KERNEL);
	if (!cq->db) {
		err = -ENOMEM;
		goto err_buf;
	}
	npages = DIV_ROUND_UP(cq->size, VCX_PAGE_SIZE);
	inlen = VCX_CREATE_CQ_IN_LEN + npages * VCX_PAS_SIZE;
	in = kvzalloc(inlen, GFP_KERNEL);
	if (!in) {
		err = -ENOMEM;
		goto err_db;
	}
	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_CREATE_CQ);
	cqc = in + VCX_CREATE_CQ_IN_CQC_AT;
	vcx_set(cqc, VCX_CQC_CQE_SZ, VCX_CQC_CQE_SZ_64);
	vcx_set(cqc, VCX_CQC_LOG_CQ_SIZE, log_nent);
	vcx_set(cqc, VCX_CQC_UAR_PAGE, vdev->uar_index);
	vcx_set(cqc, VCX_CQC_C_EQN, ch->eqn);
	vcx_set(cqc, VCX_CQC_LOG_PAGE_SIZE, 0);
	vcx_set(cqc, VCX_CQC_CQ_PERIOD, coal->usecs);
	vcx_set(cqc, VCX_CQC_CQ_MAX_COUNT, coal->frames);
	vcx_set(cqc, VCX_CQC_CQ_PERIOD_MODE, coal->mode);
	vcx_set64(cqc, VCX_CQC_DBR_ADDR, cq->db_dma);
	pas = in + VCX_CREATE_CQ_IN_PAS_AT;
	for (i = 0; i < npages; i++)
		vcx_set64(pas + i * VCX_PAS_SIZE, VCX_FLD(0, 64), cq->dma + i * VCX_PAGE_SIZE);
	err = vcx_cmd_exec(vdev, in, inlen, out, sizeof(out));
	kvfree(in);
	if (err)
		goto err_db;
	cq->cqn = vcx_get(out, VCX_CREATE_CQ_OUT_CQN);
	err = xa_err(xa_store_irq(&vdev->en_cq_table, cq->cqn, cq, GFP_KERNEL));
	if (err) {
		vcx_en_destroy_obj(vdev, VCX_CMD_OP_DESTROY_CQ, cq->cqn);
		goto err_db;
	}
	cq->created = true;
	return 0;

err_db:
	dma_free_coherent(dev, cache_line_size(), cq->db, cq->db_dma);
	cq->db = NULL;
err_buf:
	dma_free_coherent(dev, cq->size, cq->buf, cq->dma);
	cq->buf = NULL;
	return err;
}

void vcx_en_destroy_cq(struct vcx_en_priv *priv, struct vcx_en_cq *cq)
{
	struct vcx_dev *vdev = priv->vdev;

	vcx_en_dim_stop(cq, true);	/* NAPI is disabled: a profile change may be pending */
	if (cq->created) {
		/* Erased first: an EQE racing with the destroy finds nothing. */
		xa_erase_irq(&vdev->en_cq_table, cq->cqn);
		vcx_en_destroy_obj(vdev, VCX_CMD_OP_DESTROY_CQ, cq->cqn);
		cq->created = false;
	}
	if (cq->db)
		dma_free_coherent(vcx_dev(vdev), cache_line_size(), cq->db, cq->db_dma);
	if (cq->buf)
		dma_free_coherent(vcx_dev(vdev), cq->size, cq->buf, cq->dma);
	cq->db = NULL;
	cq->buf = NULL;
}

/* Completion EQE (hard IRQ): the channel's NAPI context polls both of its CQs. */
bool vcx_en_cq_event(struct vcx_dev *vdev, u32 cqn)
{
	struct vcx_en_cq *cq;

	xa_lock(&vdev->en_cq_table);
	cq = xa_load(&vdev->en_cq_table, cqn);
	if (cq) {
		cq->arm_sn++;
		cq->event_ctr++;
		napi_schedule(&cq->ch->napi);
	}
	xa_unlock(&vdev->en_cq_table);
	return cq;
}

/* ------------------------------------------------------------------------------------
 * Work queues: the wq context of SQs and RQs (vcx_en_tx.c, vcx_en_rx.c)
 */
void vcx_en_fill_wq(u8 *wq, u32 pdn, u32 uar, dma_addr_t db, u32 log_stride,
			   u32 log_sz, dma_addr_t buf, size_t npages)
{
	u8 *pas = wq + VCX_WQ_PAS_AT;
	size_t i;

	vcx_set(wq, VCX_WQ_WQ_TYPE, VCX_WQ_TYPE_CYCLIC);
	vcx_set(wq, VCX_WQ_PD, pdn);
	vcx_set(wq, VCX_WQ_UAR_PAGE, uar);
	vcx_set64(wq, VCX_WQ_DBR_ADDR, db);
	vcx_set(wq, VCX_WQ_LOG_WQ_STRIDE, log_stride);
	vcx_set(wq, VCX_WQ_LOG_WQ_PG_SZ, 0);		/* 4 KiB pages */
	vcx_set(wq, VCX_WQ_LOG_WQ_SZ, log_sz);
	for (i = 0; i < npages; i++)
		vcx_set64(pas + i * VCX_PAS_SIZE, VCX_FLD(0, 64), buf + i * VCX_PAGE_SIZE);
}

/* ------------------------------------------------------------------------------------
 * Channels
 */
static int vcx_en_napi_poll(struct napi_struct *napi, int budget)
{
	struct vcx_en_channel *ch = container_of(napi, struct vcx_en_channel, napi);
	struct vcx_en_priv *priv = ch->priv;
	bool tx_busy;
	int work;

	tx_busy = vcx_en_poll_tx(ch, VCX_EN_TX_NAPI_BUDGET);
	work = budget ? vcx_en_poll_rx(ch, budget) : 0;
	if (tx_busy || work >= budget)
		return budget;
	if (napi_complete_done(napi, work)) {
		vcx_en_dim_sample(&ch->sq.cq, ch->sq.stats);
		vcx_en_cq_arm(priv, &ch->sq.cq);
		vcx_en_dim_sample(&ch->rq.cq, ch->rq.stats);
		vcx_en_cq_arm(priv, &ch->rq.cq);
	}
	return work;
}

static void vcx_en_close_channel(struct vcx_en_priv *priv, struct vcx_en_channel *ch)
{
	vcx_en_destroy_rq(priv, &ch->rq);
	vcx_en_destroy_sq(priv, &ch->sq);
	vcx_en_destroy_cq(priv, &ch->rq.cq);
	vcx_en_destroy_cq(priv, &ch->sq.cq);
	netif_napi_del(&ch->napi);
}

static int vcx_en_open_channel(struct vcx_en_priv *priv, struct vcx_en_channel *ch, int ix)
{
	struct vcx_dev *vdev = priv->vdev;
	int err;

	ch->priv = priv;
	ch->ix = ix;
	ch->cpu = cpumask_local_spread(ix, dev_to_node(vcx_dev(vdev)));
	ch->eqn = vdev->comp_eqs[ix % vdev->num_comp_eqs].eqn;
	netif_napi_add(priv->netdev, &ch->napi, vcx_en_napi_poll);

	err = vcx_en_create_cq(priv, ch, &ch->sq.cq, VCX_EN_LOG_SQ_SIZE, &priv->tx_coal);
	if (!err)
		err = vcx_en_create_cq(priv, ch, &ch->rq.cq, VCX_EN_LOG_RQ_SIZE,
				       &priv->rx_coal);
	if (!err)
		err = vcx_en_create_sq(priv, ch);
	if (!err)
		err = vcx_en_create_rq(priv, ch);
	if (!err && priv->tx_dim)
		vcx_en_dim_start(&ch->sq.cq, priv->tx_coal.mode);
	if (!err && priv->rx_dim)
		vcx_en_dim_start(&ch->rq.cq, priv->rx_coal.mode);
	if (err) {
		netdev_err(priv->netdev, "opening channel %d failed (%d)\n", ix, err);
		vcx_en_close_channel(priv, ch);
	}
	return err;
}

/* ------------------------------------------------------------------------------------
 * Open and close (state_lock held)
 */
static void vcx_en_close_locked(struct vcx_en_priv *priv)
{
	int i;

	if (!priv->opened)
		return;
	priv->opened = false;
	netif_carrier_off(priv->netdev);
	netif_tx_disable(priv->netdev);
	/* Steering first: no frame is steered to an RQ that is going away. */
	vcx_en_fs_destroy(priv);
	vcx_en_destroy_tirs_rqt(priv);
	for (i = 0; i < priv->open_channels; i++)
		napi_disable(&priv->channels[i].napi);
	for (i = priv->open_channels - 1; i >= 0; i--)
		vcx_en_close_channel(priv, &priv->channels[i]);
	kfree(priv->channels);
	priv->channels = NULL;
	priv->open_channels = 0;
}

static void vcx_en_update_carrier(struct vcx_en_priv *priv)
{
	u8 state = VCX_VPORT_STATE_DOWN;

	if (priv->opened && !vcx_en_query_vport_state(priv->vdev, &state) &&
	    state == VCX_VPORT_STATE_UP)
		netif_carrier_on(priv->netdev);
	else
		netif_carrier_off(priv->netdev);
}

static int vcx_en_open_locked(struct vcx_en_priv *priv)
{
	struct net_device *ndev = priv->netdev;
	int i, tt, err;

	priv->channels = kcalloc(priv->num_channels, sizeof(*priv->channels), GFP_KERNEL);
	if (!priv->channels)
		return -ENOMEM;
	for (i = 0; i < priv->num_channels; i++) {
		err = vcx_en_open_channel(priv, &priv->channels[i], i);
		if (err)
			goto err_channels;
		priv->open_channels++;
	}
	err = netif_set_real_num_tx_queues(ndev, priv->open_channels);
	if (!err)
		err = netif_set_real_num_rx_queues(ndev, priv->open_channels);
	if (err)
		goto err_channels;
	err = vcx_en_create_rqt(priv);
	if (err)
		goto err_channels;
	for (tt = 0; tt < VCX_EN_NUM_TT; tt++) {
		err = vcx_en_create_tir(priv, tt);
		if (err)
			goto err_tirs;
	}
	err = vcx_en_fs_create(priv);
	if (err)
		goto err_tirs;
	for (i = 0; i < priv->open_channels; i++) {
		struct vcx_en_channel *ch = &priv->channels[i];

		/* TX from a channel's CPU goes to its SQ, completing on the same vector. */
		netif_set_xps_queue(ndev, cpumask_of(ch->cpu), ch->ix);
		netdev_tx_reset_queue(ch->sq.txq);
		napi_enable(&ch->napi);
		vcx_en_cq_arm(priv, &ch->sq.cq);
		vcx_en_cq_arm(priv, &ch->rq.cq);
	}
	priv->opened = true;
	netif_tx_start_all_queues(ndev);
	vcx_en_update_carrier(priv);
	return 0;

err_tirs:
	vcx_en_destroy_tirs_rqt(priv);
err_channels:
	while (priv->open_channels)
		vcx_en_close_channel(priv, &priv->channels[--priv->open_channels]);
	kfree(priv->channels);
	priv->channels = NULL;
	return err;
}

static int vcx_en_open(struct net_device *ndev)
{
	struct vcx_en_priv *priv = vcx_en_priv(ndev);
	int err;

	mutex_lock(&priv->state_lock);
	err = vcx_en_set_port_admin(priv->vdev, true);
	if (!err)
		err = vcx_en_open_locked(priv);
	if (err) {
		netdev_err(ndev, "open failed (%d)\n", err);
		vcx_en_set_port_admin(priv->vdev, false);
	}
	mutex_unlock(&priv->state_lock);
	return err;
}

static int vcx_en_stop(struct net_device *ndev)
{
	struct vcx_en_priv *priv = vcx_en_priv(ndev);

	mutex_lock(&priv->state_lock);
	vcx_en_close_locked(priv);
	if (!vcx_in_error(priv->vdev))
		vcx_en_set_port_admin(priv->vdev, false);
	mutex_unlock(&priv->state_lock);
	return 0;
}

/*
 * New channel count or MTU (either may be 0 for "unchanged"): close and open again if
 * running (mlx5e_safe_switch_params without the spare set of channels). Called with
 * RTNL held.
 */
int vcx_en_reopen(struct vcx_en_priv *priv, int num_channels, int mtu)
{
	struct net_device *ndev = priv->netdev;
	int old_mtu = ndev->mtu, old_ch = priv->num_channels;
	int err = 0;

	mutex_lock(&priv->state_lock);
	if (mtu && mtu != old_mtu) {
		err = vcx_en_set_hw_mtu(priv->vdev, mtu);
		if (err) {
			netdev_err(ndev, "setting the port MTU to %d failed (%d)\n", mtu, err);
			goto out;
		}
		WRITE_ONCE(ndev->mtu, mtu);
	}
	if (num_channels)
		priv->num_channels = num_channels;
	if (priv->opened) {
		vcx_en_close_locked(priv);
		err = vcx_en_open_locked(priv);
		if (err) {
			/* Back to what worked. */
			netdev_err(ndev, "reopen failed (%d), restoring %d channels, MTU %d\n",
				   err, old_ch, old_mtu);
			priv->num_channels = old_ch;
			if (ndev->mtu != old_mtu) {
				vcx_en_set_hw_mtu(priv->vdev, old_mtu);
				WRITE_ONCE(ndev->mtu, old_mtu);
			}
			if (vcx_en_open_locked(priv))
				netdev_err(ndev, "channels could not be opened again\n");
		}
	}
out:
	mutex_unlock(&priv->state_lock);
	return err;
}

static int vcx_en_change_mtu(struct net_device *ndev, int new_mtu)
{
	return vcx_en_reopen(vcx_en_priv(ndev), 0, new_mtu);
}

/* An SQ went to the error state, or a TX queue timed out: start the channels over. */
static void vcx_en_reset_work(struct work_struct *work)
{
	struct vcx_en_priv *priv = container_of(work, struct vcx_en_priv, reset_work);

	rtnl_lock();
	if (netif_running(priv->netdev) && !vcx_in_error(priv->vdev)) {
		netdev_warn(priv->netdev, "reopening the channels after a send queue error\n");
		vcx_en_reopen(priv, 0, 0);
	}
	rtnl_unlock();
}

static void vcx_en_tx_timeout(struct net_device *ndev, unsigned int txqueue)
{
	struct vcx_en_priv *priv = vcx_en_priv(ndev);

	netdev_warn(ndev, "TX queue %u timed out\n", txqueue);
	queue_work(system_long_wq, &priv->reset_work);
}

static void vcx_en_get_stats64(struct net_device *ndev, struct rtnl_link_stats64 *stats)
{
	struct vcx_en_priv *priv = vcx_en_priv(ndev);
	struct vcx_en_ring_stats s;
	int i;

	for (i = 0; i < priv->max_channels; i++) {
		vcx_en_ring_stats_read(&priv->tx_stats[i], &s);
		stats->tx_packets += s.packets;
		stats->tx_bytes += s.bytes;
		stats->tx_dropped += s.dropped;
		vcx_en_ring_stats_read(&priv->rx_stats[i], &s);
		stats->rx_packets += s.packets;
		stats->rx_bytes += s.bytes;
		stats->rx_dropped += s.dropped;
	}
	/* What the device counted (last read by ethtool -S or the carrier work). */
	stats->rx_missed_errors = priv->vport.rx_out_of_buffer;
	stats->multicast = priv->vport.rx_multicast_packets;
	stats->rx_errors = priv->vport.rx_errors;
	stats->tx_errors = priv->vport.tx_errors;
}

void vcx_en_ring_stats_read(struct vcx_en_ring_stats *s, struct vcx_en_ring_stats *out)
{
	unsigned int start;

	do {
		start = u64_stats_fetch_begin(&s->syncp);
		out->packets = s->packets;
		out->bytes = s->bytes;
		out->dropped = s->dropped;
		out->csum_partial = s->csum_partial;
		out->csum_none = s->csum_none;
		out->stopped = s->stopped;
		out->wake = s->wake;
		out->alloc_fail = s->alloc_fail;
		out->tso_packets = s->tso_packets;
		out->tso_bytes = s->tso_bytes;
		out->vlan = s->vlan;
	} while (u64_stats_fetch_retry(&s->syncp, start));
}

/*
 * rxvlan changes each open RQ's vsd (RDY to RDY), as mlx5e does; an RQ opened later takes
 * the new setting from ndev->features. On a failure the RQs already changed go back.
 */
static int vcx_en_set_features(struct net_device *ndev, netdev_features_t features)
{
	struct vcx_en_priv *priv = vcx_en_priv(ndev);
	bool strip = features & NETIF_F_HW_VLAN_CTAG_RX;
	int i, err = 0;

	if (!((ndev->features ^ features) & NETIF_F_HW_VLAN_CTAG_RX))
		return 0;
	mutex_lock(&priv->state_lock);
	for (i = 0; i < priv->open_channels; i++) {
		err = vcx_en_rq_set_vlan_strip(priv, &priv->channels[i].rq, strip);
		if (err)
			break;
	}
	if (err) {
		netdev_err(ndev, "turning VLAN stripping %s failed (%d)\n", strip ? "on" : "off",
			   err);
		while (i--)
			vcx_en_rq_set_vlan_strip(priv, &priv->channels[i].rq, !strip);
	}
	mutex_unlock(&priv->state_lock);
	return err;
}

static int vcx_en_set_mac(struct net_device *ndev, void *addr)
{
	int err = eth_mac_addr(ndev, addr);

	/* The L2 table and the vport's UC list follow the new address. */
	if (!err)
		vcx_en_set_rx_mode(ndev);
	return err;
}

static const struct net_device_ops vcx_en_netdev_ops = {
	.ndo_open = vcx_en_open,
	.ndo_stop = vcx_en_stop,
	.ndo_start_xmit = vcx_en_xmit,
	.ndo_features_check = vcx_en_features_check,
	.ndo_set_features = vcx_en_set_features,
	.ndo_get_stats64 = vcx_en_get_stats64,
	.ndo_set_rx_mode = vcx_en_set_rx_mode,
	.ndo_set_mac_address = vcx_en_set_mac,
	.ndo_validate_addr = eth_validate_addr,
	.ndo_change_mtu = vcx_en_change_mtu,
	.ndo_tx_timeout = vcx_en_tx_timeout,
	.ndo_eth_ioctl = vcx_en_hwtstamp_ioctl,
};

/* ------------------------------------------------------------------------------------
 * The address holder: the port's netdev when the function has no Ethernet offloads.
 * It carries the MAC and the addresses RoCE builds its GIDs from, and passes no traffic.
 */
static int vcx_holder_open(struct net_device *ndev)
{
	struct vcx_en_priv *priv = vcx_en_priv(ndev);

	priv->opened = true;
	vcx_en_update_carrier(priv);
	netif_start_queue(ndev);
	return 0;
}

static int vcx_holder_stop(struct net_device *ndev)
{
	struct vcx_en_priv *priv = vcx_en_priv(ndev);

	priv->opened = false;
	netif_stop_queue(ndev);
	netif_carrier_off(ndev);
	return 0;
}

static netdev_tx_t vcx_holder_xmit(struct sk_buff *skb, struct net_device *ndev)
{
	/* No Ethernet data path on this function: count and drop. */
	ndev->stats.tx_dropped++;
	dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

static const struct net_device_ops vcx_holder_netdev_ops = {
	.ndo_open = vcx_holder_open,
	.ndo_stop = vcx_holder_stop,
	.ndo_start_xmit = vcx_holder_xmit,
	.ndo_set_mac_address = eth_mac_addr,
	.ndo_validate_addr = eth_validate_addr,
};

/* ------------------------------------------------------------------------------------
 * Creation and removal
 */

/* Why the function cannot carry Ethernet, or NULL. */
static const char *vcx_en_missing_cap(struct vcx_dev *vdev)
{
	const u8 *cap = vdev->caps.general;

	if (vcx_get(cap, VCX_CAP_GEN_PORT_TYPE) != VCX_CAP_PORT_TYPE_ETH)
		return "the port is not Ethernet";
	if (!vcx_get(cap, VCX_CAP_GEN_ETH_NET_OFFLOADS))
		return "no eth_net_offloads capability";
	if (!vcx_get(cap, VCX_CAP_GEN_NIC_FLOW_TABLE))
		return "no nic_flow_table capability";
	if (!vdev->num_comp_eqs)
		return "no completion EQ";
	return NULL;
}

static void vcx_en_setup_eth(struct vcx_en_priv *priv, u32 port_max_mtu)
{
	struct net_device *ndev = priv->netdev;
	u32 lso_log = vcx_get(priv->vdev->caps.eth, VCX_CAP_ETH_MAX_LSO_CAP);

	ndev->netdev_ops = &vcx_en_netdev_ops;
	ndev->ethtool_ops = &vcx_en_ethtool_ops;
	ndev->watchdog_timeo = 15 * HZ;
	/* The device computes TX IP/TCP/UDP checksums and checks received ones; RSS. */
	ndev->hw_features = NETIF_F_SG | NETIF_F_IP_CSUM | NETIF_F_IPV6_CSUM |
			    NETIF_F_RXCSUM | NETIF_F_RXHASH;
	ndev->vlan_features = NETIF_F_SG | NETIF_F_IP_CSUM | NETIF_F_IPV6_CSUM;
	/* TCP segmentation in the device (LSO WQEs) where it reports a maximum message size;
	 * the stack keeps every GSO packet within it. */
	if (lso_log) {
		ndev->hw_features |= NETIF_F_TSO | NETIF_F_TSO6;
		ndev->vlan_features |= NETIF_F_TSO | NETIF_F_TSO6;
		netif_set_tso_max_size(ndev, min_t(u32, 1u << min(lso_log, 31u),
						   GSO_LEGACY_MAX_SIZE));
	}
	/* VLAN tags: stripped by the RQ (vlan_cap), inserted by the send WQE (wqe_vlan_insert);
	 * without the caps the stack does both in software. */
	if (vcx_get(priv->vdev->caps.eth, VCX_CAP_ETH_VLAN_CAP))
		ndev->hw_features |= NETIF_F_HW_VLAN_CTAG_RX;
	if (vcx_get(priv->vdev->caps.eth, VCX_CAP_ETH_WQE_VLAN_INSERT))
		ndev->hw_features |= NETIF_F_HW_VLAN_CTAG_TX | NETIF_F_HW_VLAN_STAG_TX;
	ndev->features = ndev->hw_features | NETIF_F_HIGHDMA;
	ndev->priv_flags |= IFF_UNICAST_FLT;
	ndev->min_mtu = ETH_MIN_MTU;
	ndev->max_mtu = port_max_mtu - VCX_EN_HW_MTU_EXTRA;
	ndev->mtu = min_t(int, ETH_DATA_LEN, ndev->max_mtu);
}

int vcx_en_add(struct vcx_dev *vdev)
{
	struct device *dev = vcx_dev(vdev);
	const char *why = vcx_en_missing_cap(vdev);
	struct vcx_en_priv *priv;
	struct net_device *ndev;
	u32 port_max_mtu = 0;
	unsigned long flags;
	int nch, err;
	u8 mac[ETH_ALEN];

	err = vcx_en_query_mac(vdev, mac);
	if (err) {
		dev_err(dev, "QUERY_NIC_VPORT_CONTEXT failed (%d): no netdev\n", err);
		return err;
	}
	if (!why) {
		err = vcx_en_query_port_max_mtu(vdev, &port_max_mtu);
		if (err)
			why = "PMTU cannot be read";
		else if (port_max_mtu < ETH_MIN_MTU + VCX_EN_HW_MTU_EXTRA)
			why = "the port's maximum MTU is too small";
	}
	nch = why ? 1 : max(1, min_t(int, num_online_cpus(), vdev->num_comp_eqs));
	/* "vcx%d": the guest's other NICs keep their ethN names. */
	ndev = alloc_netdev_mqs(sizeof(*priv), "vcx%d", NET_NAME_ENUM, ether_setup, nch, nch);
	if (!ndev)
		return -ENOMEM;
	priv = netdev_priv(ndev);
	priv->vdev = vdev;
	priv->netdev = ndev;
	mutex_init(&priv->state_lock);
	INIT_WORK(&priv->reset_work, vcx_en_reset_work);
	INIT_WORK(&priv->fs.rx_mode_work, vcx_en_rx_mode_work);
	SET_NETDEV_DEV(ndev, dev);
	eth_hw_addr_set(ndev, mac);
	netif_carrier_off(ndev);

	if (!why) {
		priv->max_channels = nch;
		priv->num_channels = nch;
		vcx_en_moderation_defaults(priv);
		priv->tx_stats = kcalloc(nch, sizeof(*priv->tx_stats), GFP_KERNEL);
		priv->rx_stats = kcalloc(nch, sizeof(*priv->rx_stats), GFP_KERNEL);
		if (!priv->tx_stats || !priv->rx_stats) {
			err = -ENOMEM;
			goto err_free;
		}
		for (err = 0; err < nch; err++) {
			u64_stats_init(&priv->tx_stats[err].syncp);
			u64_stats_init(&priv->rx_stats[err].syncp);
		}
		netdev_rss_key_fill(priv->rss_key, VCX_TIRC_TOEPLITZ_KEY_LEN);
		vcx_en_setup_eth(priv, port_max_mtu);
		err = vcx_en_alloc_res(priv);
		if (!err)
			err = vcx_en_set_hw_mtu(vdev, ndev->mtu);
		if (!err)
			/* Never up by itself: the port stays down until the netdev is opened. */
			err = vcx_en_set_port_admin(vdev, false);
		if (err) {
			dev_warn(dev, "Ethernet resources failed (%d): the port netdev is an address holder\n",
				 err);
			vcx_en_free_res(priv);
			why = "resource allocation failed";
		}
	}
	if (why) {
		dev_info(dev, "%s: the port netdev is an address holder without a data path\n",
			 why);
		kfree(priv->tx_stats);
		kfree(priv->rx_stats);
		priv->tx_stats = priv->rx_stats = NULL;
		priv->max_channels = 0;
		ndev->netdev_ops = &vcx_holder_netdev_ops;
		ndev->ethtool_ops = &vcx_en_holder_ethtool_ops;
		ndev->hw_features = ndev->features = 0;
		ndev->min_mtu = ETH_MIN_MTU;
		ndev->max_mtu = 4096;
		ndev->mtu = 4096 - 96;	/* room for RoCE headers, as an IB MTU of 4096 */
	}
	err = register_netdev(ndev);
	if (err) {
		dev_err(dev, "registering the port netdev failed (%d)\n", err);
		goto err_res;
	}
	spin_lock_irqsave(&vdev->ib_lock, flags);
	vdev->netdev = ndev;
	spin_unlock_irqrestore(&vdev->ib_lock, flags);
	if (!why)
		netdev_info(ndev, "Ethernet port, MAC %pM, %d channels, MTU %d (max %d)\n",
			    ndev->dev_addr, nch, ndev->mtu, ndev->max_mtu);
	return 0;

err_res:
	if (!why)
		vcx_en_free_res(priv);
err_free:
	kfree(priv->tx_stats);
	kfree(priv->rx_stats);
	free_netdev(ndev);
	return err;
}

void vcx_en_remove(struct vcx_dev *vdev)
{
	struct net_device *ndev = vdev->netdev;
	struct vcx_en_priv *priv;
	unsigned long flags;

	if (!ndev)
		return;
	priv = netdev_priv(ndev);
	spin_lock_irqsave(&vdev->ib_lock, flags);
	vdev->netdev = NULL;
	spin_unlock_irqrestore(&vdev->ib_lock, flags);
	unregister_netdev(ndev);	/* stops it: channels and steering go */
	cancel_work_sync(&priv->reset_work);
	cancel_work_sync(&priv->fs.rx_mode_work);
	if (priv->max_channels)
		vcx_en_free_res(priv);
	kfree(priv->tx_stats);
	kfree(priv->rx_stats);
	free_netdev(ndev);
	WARN_ON(!xa_empty(&vdev->en_cq_table));
}

/* Port change EQE (hard IRQ): carrier follows the port while the netdev is open. */
void vcx_en_port_event(struct vcx_dev *vdev, bool up)
{
	struct vcx_en_priv *priv;
	unsigned long flags;

	spin_lock_irqsave(&vdev->ib_lock, flags);
	if (vdev->netdev) {
		priv = netdev_priv(vdev->netdev);
		if (up && READ_ONCE(priv->opened))
			netif_carrier_on(vdev->netdev);
		else
			netif_carrier_off(vdev->netdev);
	}
	spin_unlock_irqrestore(&vdev->ib_lock, flags);
}
