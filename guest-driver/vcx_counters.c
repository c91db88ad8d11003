// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcx: the port's hardware counters in `rdma statistic` and
 * /sys/class/infiniband/vcx_N/ports/1/hw_counters, and per-QP counters
 * (`rdma statistic qp`, counter binding), as mlx5_ib exposes them.
 *
 * One Q counter is allocated for the port (ALLOC_Q_COUNTER, PRM "Counters") before the
 * ib_device registers, and every QP names it in its context at RST2INIT
 * (qpc.counter_set_id, vcx_qp.c), so the device counts the port's RDMA traffic in it.
 * Reading the counters is one QUERY_Q_COUNTER of that set. The names are mlx5_ib's,
 * in its groups, each group shown only when the capability that announces it is set,
 * as mlx5_ib does:
 *   always (max_qp_cnt != 0)       rx_write_requests, rx_read_requests,
 *                                  rx_atomic_requests, out_of_buffer
 *   out_of_seq_cnt                 out_of_sequence
 *   retransmission_q_counters      duplicate_request, rnr_nak_retry_err, packet_seq_err,
 *                                  implied_nak_seq_err, local_ack_timeout_err
 *   enhanced_error_q_counters      resp_local_length_error, resp_cqe_error, req_cqe_error,
 *                                  req_remote_invalid_request, req_remote_access_errors,
 *                                  resp_remote_access_errors, resp_cqe_flush_error,
 *                                  req_cqe_flush_error, req_transport_retries_exceeded,
 *                                  req_rnr_retries_exceeded
 *   roce_accl                      roce_adp_retrans, roce_adp_retrans_to,
 *                                  roce_slow_restart, roce_slow_restart_cnps,
 *                                  roce_slow_restart_trans
 * (mlx5_ib's congestion counters come from QUERY_CONG_STATISTICS, its rx_icrc_encapsulated
 * from the PPCNT register, neither of which the driver reads.)
 *
 * Counter binding (ib_device_ops counter_*, as mlx5_ib's counters.c): ib_core's
 * rdma_counter carries the Q counter's counter_set_id as its id. The first QP bound to it
 * (`rdma statistic qp bind`, or auto mode at the QP's RST2INIT) allocates the Q counter;
 * vcx_qp_set_counter() moves the QP to it (RESET: at RST2INIT; RTS: RTS2RTS with the
 * COUNTER_SET_ID optional parameter, capability rts2rts_qp_counters_set_id; other
 * states: once the QP enters RTS). Unbinding moves the QP back to the port's set; the
 * last unbind deallocates the Q counter (counter_dealloc; ib_core first adds the values
 * last read from it to the port's history). A bound counter reads with the port's names;
 * `rdma statistic show` adds the bound counters and that history to the port's set. With
 * every Q counter taken (max_qp_cnt) binding fails with the command's -ENOMEM, in a state
 * other than RESET without the capability with -EOPNOTSUPP.
 * Without a Q counter (max_qp_cnt 0, or the allocation fails) the port has no
 * hw_counters and no counter ops (ib_core then refuses every bind), and QPs keep
 * counter_set_id 0.
 */
#include <rdma/ib_verbs.h>

#include "vcx.h"
#include "vcx_verbs.h"

struct vcx_q_cnt {
	const char *name;
	struct vcx_fld fld;		/* in query_q_counter_out */
};

#define VCX_Q_CNT(name, F)	{ #name, VCX_QUERY_Q_COUNTER_OUT_##F }

static const struct vcx_q_cnt vcx_basic_q_cnts[] = {
	VCX_Q_CNT(rx_write_requests, RX_WRITE_REQUESTS),
	VCX_Q_CNT(rx_read_requests, RX_READ_REQUESTS),
	VCX_Q_CNT(rx_atomic_requests, RX_ATOMIC_REQUESTS),
	VCX_Q_CNT(out_of_buffer, OUT_OF_BUFFER),
};

static const struct vcx_q_cnt vcx_out_of_seq_q_cnts[] = {
	VCX_Q_CNT(out_of_sequence, OUT_OF_SEQUENCE),
};

static const struct vcx_q_cnt vcx_retrans_q_cnts[] = {
	VCX_Q_CNT(duplicate_request, DUPLICATE_REQUEST),
	VCX_Q_CNT(rnr_nak_retry_err, RNR_NAK_RETRY_ERR),
	VCX_Q_CNT(packet_seq_err, PACKET_SEQ_ERR),
	VCX_Q_CNT(implied_nak_seq_err, IMPLIED_NAK_SEQ_ERR),
	VCX_Q_CNT(local_ack_timeout_err, LOCAL_ACK_TIMEOUT_ERR),
};

static const struct vcx_q_cnt vcx_extended_err_q_cnts[] = {
	VCX_Q_CNT(resp_local_length_error, RESP_LOCAL_LENGTH_ERROR),
	VCX_Q_CNT(resp_cqe_error, RESP_CQE_ERROR),
	VCX_Q_CNT(req_cqe_error, REQ_CQE_ERROR),
	VCX_Q_CNT(req_remote_invalid_request, REQ_REMOTE_INVALID_REQUEST),
	VCX_Q_CNT(req_remote_access_errors, REQ_REMOTE_ACCESS_ERRORS),
	VCX_Q_CNT(resp_remote_access_errors, RESP_REMOTE_ACCESS_ERRORS),
	VCX_Q_CNT(resp_cqe_flush_error, RESP_CQE_FLUSH_ERROR),
	VCX_Q_CNT(req_cqe_flush_error, REQ_CQE_FLUSH_ERROR),
	VCX_Q_CNT(req_transport_retries_exceeded, REQ_TRANSPORT_RETRIES_EXCEEDED),
	VCX_Q_CNT(req_rnr_retries_exceeded, REQ_RNR_RETRIES_EXCEEDED),
};

static const struct vcx_q_cnt vcx_roce_accl_q_cnts[] = {
	VCX_Q_CNT(roce_adp_retrans, ROCE_ADP_RETRANS),
	VCX_Q_CNT(roce_adp_retrans_to, ROCE_ADP_RETRANS_TO),
	VCX_Q_CNT(roce_slow_restart, ROCE_SLOW_RESTART),
	VCX_Q_CNT(roce_slow_restart_cnps, ROCE_SLOW_RESTART_CNPS),
	VCX_Q_CNT(roce_slow_restart_trans, ROCE_SLOW_RESTART_TRANS),
};

/* The groups in mlx5_ib's order; cap.width 0: always present. */
static const struct {
	const struct vcx_q_cnt *cnts;
	unsigned int n;
	struct vcx_fld cap;
} vcx_q_cnt_groups[] = {
	{ vcx_basic_q_cnts, ARRAY_SIZE(vcx_basic_q_cnts), VCX_FLD(0, 0) },
	{ vcx_out_of_seq_q_cnts, ARRAY_SIZE(vcx_out_of_seq_q_cnts), VCX_CAP_GEN_OUT_OF_SEQ_CNT },
	{ vcx_retrans_q_cnts, ARRAY_SIZE(vcx_retrans_q_cnts), VCX_CAP_GEN_RETRANSMISSION_Q_COUNTERS },
	{ vcx_extended_err_q_cnts, ARRAY_SIZE(vcx_extended_err_q_cnts),
	  VCX_CAP_GEN_ENHANCED_ERROR_Q_COUNTERS },
	{ vcx_roce_accl_q_cnts, ARRAY_SIZE(vcx_roce_accl_q_cnts), VCX_CAP_GEN_ROCE_ACCL },
};

static bool vcx_q_cnt_group_on(struct vcx_dev *vdev, unsigned int g)
{
	struct vcx_fld cap = vcx_q_cnt_groups[g].cap;

	return !cap.width || vcx_get(vdev->caps.general, cap);
}

static struct rdma_hw_stats *vcx_alloc_hw_port_stats(struct ib_device *ibdev, u32 port_num)
{
	struct vcx_ib_dev *ibd = to_vibdev(ibdev);

	return rdma_alloc_hw_stats_struct(ibd->cnt_desc, ibd->num_cnt,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/* One QUERY_Q_COUNTER of Q counter id into stats (the names of ibd->cnt_desc). */
static int vcx_q_counter_query(struct vcx_ib_dev *ibd, u32 id, struct rdma_hw_stats *stats)
{
	u8 in[VCX_QUERY_Q_COUNTER_IN_LEN] = {};
	u8 *out;
	u32 i;
	int err;

	if (stats->num_counters != ibd->num_cnt)
		return -EINVAL;
	out = kzalloc(VCX_QUERY_Q_COUNTER_OUT_LEN, GFP_KERNEL);
	if (!out)
		return -ENOMEM;
	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_QUERY_Q_COUNTER);
	vcx_set(in, VCX_QUERY_Q_COUNTER_IN_COUNTER_SET_ID, id);
	err = vcx_cmd_exec(ibd->vdev, in, sizeof(in), out, VCX_QUERY_Q_COUNTER_OUT_LEN);
	if (!err)
		for (i = 0; i < ibd->num_cnt; i++)
			stats->value[i] = vcx_get(out, ibd->cnt_fld[i]);
	kfree(out);
	return err;
}

static int vcx_q_counter_alloc(struct vcx_dev *vdev, u32 *id)
{
	u8 in[VCX_ALLOC_Q_COUNTER_IN_LEN] = {};
	u8 out[VCX_OBJ_CMD_LEN] = {};
	int err;

	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_ALLOC_Q_COUNTER);
	err = vcx_cmd_exec(vdev, in, sizeof(in), out, sizeof(out));
	if (!err)
		*id = vcx_get(out, VCX_ALLOC_Q_COUNTER_OUT_COUNTER_SET_ID);
	return err;
}

/* A dead function keeps nothing: freeing succeeds without it. */
static int vcx_q_counter_free(struct vcx_dev *vdev, u32 id)
{
	u8 in[VCX_DEALLOC_Q_COUNTER_IN_LEN] = {};
	u8 out[VCX_OBJ_CMD_LEN] = {};

	if (vcx_in_error(vdev))
		return 0;
	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_DEALLOC_Q_COUNTER);
	vcx_set(in, VCX_DEALLOC_Q_COUNTER_IN_COUNTER_SET_ID, id);
	return vcx_cmd_exec(vdev, in, sizeof(in), out, sizeof(out));
}

static int vcx_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats, u32 port_num,
			    int index)
{
	struct vcx_ib_dev *ibd = to_vibdev(ibdev);
	int err;

	if (port_num != VCX_IB_PORT)
		return -EINVAL;
	err = vcx_q_counter_query(ibd, ibd->q_counter, stats);
	return err ? err : ibd->num_cnt;
}

/*
 * Bound counters (`rdma statistic qp`): ib_core's rdma_counter, whose id is the Q counter's
 * counter_set_id (0 until the first QP binds). Its stats have the port's names and order.
 */
static struct rdma_hw_stats *vcx_counter_alloc_stats(struct rdma_counter *counter)
{
	return vcx_alloc_hw_port_stats(counter->device, counter->port);
}

static int vcx_counter_update_stats(struct rdma_counter *counter)
{
	return vcx_q_counter_query(to_vibdev(counter->device), counter->id, counter->stats);
}

static int vcx_counter_dealloc(struct rdma_counter *counter)
{
	if (!counter->id)
		return 0;
	return vcx_q_counter_free(to_vibdev(counter->device)->vdev, counter->id);
}

/* The first QP bound allocates the Q counter; a failed bind frees only what it allocated. */
static int vcx_counter_bind_qp(struct rdma_counter *counter, struct ib_qp *qp)
{
	struct vcx_dev *vdev = to_vibdev(qp->device)->vdev;
	bool alloc = !counter->id;
	int err;

	if (alloc) {
		err = vcx_q_counter_alloc(vdev, &counter->id);
		if (err) {
			ibdev_dbg(qp->device, "no Q counter for QP 0x%x (%d)\n", qp->qp_num, err);
			return err;
		}
	}
	err = vcx_qp_set_counter(qp, counter);
	if (err && alloc) {
		vcx_q_counter_free(vdev, counter->id);
		counter->id = 0;
	}
	return err;
}

static int vcx_counter_unbind_qp(struct ib_qp *qp)
{
	return vcx_qp_set_counter(qp, NULL);
}

static const struct ib_device_ops vcx_counters_ops = {
	.alloc_hw_port_stats = vcx_alloc_hw_port_stats,
	.get_hw_stats = vcx_get_hw_stats,
	.counter_bind_qp = vcx_counter_bind_qp,
	.counter_unbind_qp = vcx_counter_unbind_qp,
	.counter_dealloc = vcx_counter_dealloc,
	.counter_alloc_stats = vcx_counter_alloc_stats,
	.counter_update_stats = vcx_counter_update_stats,
};

/* Before ib_register_device() and before the first QP (the UMR QP, QP1). */
void vcx_counters_init(struct vcx_ib_dev *ibd)
{
	struct vcx_dev *vdev = ibd->vdev;
	unsigned int g, j, n = 0;

	if (!vcx_cap(vdev, MAX_QP_CNT))
		return;
	for (g = 0; g < ARRAY_SIZE(vcx_q_cnt_groups); g++)
		if (vcx_q_cnt_group_on(vdev, g))
			n += vcx_q_cnt_groups[g].n;
	ibd->cnt_desc = kcalloc(n, sizeof(*ibd->cnt_desc), GFP_KERNEL);
	ibd->cnt_fld = kcalloc(n, sizeof(*ibd->cnt_fld), GFP_KERNEL);
	if (!ibd->cnt_desc || !ibd->cnt_fld)
		goto err_free;
	if (vcx_q_counter_alloc(vdev, &ibd->q_counter)) {
		dev_warn(vcx_dev(vdev), "no Q counter for the RDMA port: no hw_counters\n");
		ibd->q_counter = 0;
		goto err_free;
	}
	for (g = 0; g < ARRAY_SIZE(vcx_q_cnt_groups); g++) {
		if (!vcx_q_cnt_group_on(vdev, g))
			continue;
		for (j = 0; j < vcx_q_cnt_groups[g].n; j++, ibd->num_cnt++) {
			ibd->cnt_desc[ibd->num_cnt].name = vcx_q_cnt_groups[g].cnts[j].name;
			ibd->cnt_fld[ibd->num_cnt] = vcx_q_cnt_groups[g].cnts[j].fld;
		}
	}
	ibd->q_counter_alloc = true;
	ib_set_device_ops(&ibd->ibdev, &vcx_counters_ops);
	return;

err_free:
	kfree(ibd->cnt_desc);
	kfree(ibd->cnt_fld);
	ibd->cnt_desc = NULL;
	ibd->cnt_fld = NULL;
}

/* After every QP is gone (ib_unregister_device(), the UMR QP destroyed). */
void vcx_counters_cleanup(struct vcx_ib_dev *ibd)
{
	if (ibd->q_counter_alloc)
		vcx_q_counter_free(ibd->vdev, ibd->q_counter);
	ibd->q_counter_alloc = false;
	ibd->q_counter = 0;
	ibd->num_cnt = 0;
	kfree(ibd->cnt_desc);
	kfree(ibd->cnt_fld);
	ibd->cnt_desc = NULL;
	ibd->cnt_fld = NULL;
}
