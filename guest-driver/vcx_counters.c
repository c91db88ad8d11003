// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcx: the port's hardware counters in `rdma statistic` and
 * /sys/class/infiniband/vcx_N/ports/1/hw_counters, as mlx5_ib exposes them.
 *
 * One Q counter is allocated for the port (ALLOC_Q_COUNTER, PRM "Counters") before the
 * ib_device registers, and every QP names it in its context at RST2INIT
 * (qpc.counter_set_id, vcx_qp.c), so the device counts all of the port's RDMA traffic in
 * it. Reading the counters is one QUERY_Q_COUNTER of that set. The names are mlx5_ib's,
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
 * from the PPCNT register, neither of which the driver reads; its per-QP counters
 * (`rdma statistic qp`, counter binding) are not offered: the port's set counts all.)
 * Without a Q counter (max_qp_cnt 0, or the allocation fails) the port has no
 * hw_counters and QPs keep counter_set_id 0, as before.
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

static int vcx_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats, u32 port_num,
			    int index)
{
	struct vcx_ib_dev *ibd = to_vibdev(ibdev);
	u8 in[VCX_QUERY_Q_COUNTER_IN_LEN] = {};
	u8 *out;
	u32 i;
	int err;

	if (port_num != VCX_IB_PORT || stats->num_counters != ibd->num_cnt)
		return -EINVAL;
	out = kzalloc(VCX_QUERY_Q_COUNTER_OUT_LEN, GFP_KERNEL);
	if (!out)
		return -ENOMEM;
	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_QUERY_Q_COUNTER);
	vcx_set(in, VCX_QUERY_Q_COUNTER_IN_COUNTER_SET_ID, ibd->q_counter);
	err = vcx_cmd_exec(ibd->vdev, in, sizeof(in), out, VCX_QUERY_Q_COUNTER_OUT_LEN);
	if (!err)
		for (i = 0; i < ibd->num_cnt; i++)
			stats->value[i] = vcx_get(out, ibd->cnt_fld[i]);
	kfree(out);
	return err ? err : ibd->num_cnt;
}

static const struct ib_device_ops vcx_counters_ops = {
	.alloc_hw_port_stats = vcx_alloc_hw_port_stats,
	.get_hw_stats = vcx_get_hw_stats,
};

/* Before ib_register_device() and before the first QP (the UMR QP, QP1). */
void vcx_counters_init(struct vcx_ib_dev *ibd)
{
	struct vcx_dev *vdev = ibd->vdev;
	u8 in[VCX_ALLOC_Q_COUNTER_IN_LEN] = {};
	u8 out[VCX_OBJ_CMD_LEN] = {};
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
	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_ALLOC_Q_COUNTER);
	if (vcx_cmd_exec(vdev, in, sizeof(in), out, sizeof(out))) {
		dev_warn(vcx_dev(vdev), "no Q counter for the RDMA port: no hw_counters\n");
		goto err_free;
	}
	ibd->q_counter = vcx_get(out, VCX_ALLOC_Q_COUNTER_OUT_COUNTER_SET_ID);
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
	u8 in[VCX_DEALLOC_Q_COUNTER_IN_LEN] = {};
	u8 out[VCX_OBJ_CMD_LEN] = {};

	if (ibd->q_counter_alloc && !vcx_in_error(ibd->vdev)) {
		vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_DEALLOC_Q_COUNTER);
		vcx_set(in, VCX_DEALLOC_Q_COUNTER_IN_COUNTER_SET_ID, ibd->q_counter);
		vcx_cmd_exec(ibd->vdev, in, sizeof(in), out, sizeof(out));
	}
	ibd->q_counter_alloc = false;
	ibd->q_counter = 0;
	ibd->num_cnt = 0;
	kfree(ibd->cnt_desc);
	kfree(ibd->cnt_fld);
	ibd->cnt_desc = NULL;
	ibd->cnt_fld = NULL;
}
