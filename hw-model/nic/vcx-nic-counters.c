/*
 * vcx: Q counters (ALLOC/DEALLOC/QUERY_Q_COUNTER) and the vport counters
 * (QUERY_VPORT_COUNTER), PRM "Counters".
 *
 * A Q counter counts for the RQs that name it (rqc.counter_set_id): out_of_buffer, the
 * frames steered to one of them that found no receive WQE posted; and for the QPs that
 * name it (qpc.counter_set_id) what the transport engines count (vcx_qp_qc(), then
 * vcx_qc_count()): the requests received by kind and out_of_buffer, between QPs of the
 * port (vcx-resp.c) and from the wire (roce/), and the wire engine's out_of_sequence,
 * duplicate_request, rnr_nak_retry_err, packet_seq_err, implied_nak_seq_err,
 * local_ack_timeout_err; and, on both engines, the enhanced error fields (capability
 * enhanced_error_q_counters): the error CQEs of each side where they are written
 * (vcx_req_fail, vcx_post_resp_err, the flushes of vcx-flush.c), by syndrome
 * (vcx_err_qc), the remote access and invalid request NAKs the responder sends, and
 * cq_overflow, a CQE that found its CQ full (vcx_post). A QP context may name only an
 * allocated Q counter (vcx-qp.c), but a Q counter may be deallocated while QPs name it:
 * they count nothing more.
 * The vport counters count the Ethernet traffic of the port by destination address kind
 * (unicast, multicast, broadcast; packets and octets, FCS excluded), frames received
 * that were dropped as malformed or too long (received_errors) and frames the SQs could
 * not send because the link was down (transmit_errors). clear in the input returns the
 * values and zeroes them.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "hw/vcx/trace.h"
#include "vcx-nic.h"

enum {
    SYND_QC_FULL = 0xd0,
    SYND_QC_NONE,
    SYND_QC_BUSY,
    SYND_QC_VPORT,
    SYND_QC_AGGREGATE,
    SYND_VC_VPORT = 0xe0,
    SYND_VC_PORT,
};

uint8_t vcx_cmd_alloc_q_counter(VcxState *s, VcxCmd *cmd)
{
    VcxNic *n = vcx_nic(s);
    VcxQCounter *qc;

    if (n->qcs.count >= VCX_NIC_MAX_QCOUNTERS) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_EXCEED_LIM, SYND_QC_FULL,
                            "all %u Q counters in use (max_qp_cnt)", VCX_NIC_MAX_QCOUNTERS);
    }
    qc = g_new0(VcxQCounter, 1);
    if (!vcx_obj_alloc(&n->qcs, qc, &qc->id)) {
        g_free(qc);
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_EXCEED_LIM, SYND_QC_FULL,
                            "all %u Q counters in use (max_qp_cnt)", VCX_NIC_MAX_QCOUNTERS);
    }
    vcx_set(cmd->out, VCX_ALLOC_Q_COUNTER_OUT_COUNTER_SET_ID, qc->id);
    trace_vcx_nic_obj("Q counter", "alloc", qc->id);
    return VCX_CMD_STAT_OK;
}

void vcx_qc_free(VcxState *s, VcxQCounter *qc)
{
    vcx_obj_remove(&vcx_nic(s)->qcs, qc->id);
    g_free(qc);
}

uint8_t vcx_cmd_dealloc_q_counter(VcxState *s, VcxCmd *cmd)
{
    uint32_t id = vcx_get(cmd->in, VCX_DEALLOC_Q_COUNTER_IN_COUNTER_SET_ID);
    VcxQCounter *qc = vcx_qc_get(s, id);

    if (!qc) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_QC_NONE,
                            "counter_set_id %u is not allocated", id);
    }
    if (qc->refs) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_QC_BUSY,
                            "Q counter %u still counts for %u RQs", id, qc->refs);
    }
    trace_vcx_nic_obj("Q counter", "dealloc", id);
    vcx_qc_free(s, qc);
    return VCX_CMD_STAT_OK;
}

/*
 * n more of a QP's events in the Q counter it names (none, or freed since: nothing). The
 * fields are 32 bits wide in query_q_counter_out and wrap as they do on ConnectX.
 */
void vcx_qc_count(VcxState *s, uint32_t counter_set_id, VcxQcRdma field, uint32_t n)
{
    VcxQCounter *qc = counter_set_id ? vcx_qc_get(s, counter_set_id) : NULL;

    if (qc && field < VCX_QC_RDMA_N) {
        qc->rdma[field] += n;
    }
}

bool vcx_qc_allocated(VcxState *s, uint32_t counter_set_id)
{
    return vcx_qc_get(s, counter_set_id) != NULL;
}

uint8_t vcx_cmd_query_q_counter(VcxState *s, VcxCmd *cmd)
{
    const struct vcx_fld rdma_at[VCX_QC_RDMA_N] = {
        [VCX_QC_RX_WRITE_REQUESTS] = VCX_QUERY_Q_COUNTER_OUT_RX_WRITE_REQUESTS,
        [VCX_QC_RX_READ_REQUESTS] = VCX_QUERY_Q_COUNTER_OUT_RX_READ_REQUESTS,
        [VCX_QC_RX_ATOMIC_REQUESTS] = VCX_QUERY_Q_COUNTER_OUT_RX_ATOMIC_REQUESTS,
        [VCX_QC_OUT_OF_SEQUENCE] = VCX_QUERY_Q_COUNTER_OUT_OUT_OF_SEQUENCE,
        [VCX_QC_DUPLICATE_REQUEST] = VCX_QUERY_Q_COUNTER_OUT_DUPLICATE_REQUEST,
        [VCX_QC_RNR_NAK_RETRY_ERR] = VCX_QUERY_Q_COUNTER_OUT_RNR_NAK_RETRY_ERR,
        [VCX_QC_PACKET_SEQ_ERR] = VCX_QUERY_Q_COUNTER_OUT_PACKET_SEQ_ERR,
        [VCX_QC_IMPLIED_NAK_SEQ_ERR] = VCX_QUERY_Q_COUNTER_OUT_IMPLIED_NAK_SEQ_ERR,
        [VCX_QC_LOCAL_ACK_TIMEOUT_ERR] = VCX_QUERY_Q_COUNTER_OUT_LOCAL_ACK_TIMEOUT_ERR,
        /* the enhanced error group, at its mlx5_ifc.h offsets (0x3c0 .. 0x600) */
        [VCX_QC_RESP_LOCAL_LENGTH_ERROR] = VCX_QUERY_Q_COUNTER_OUT_RESP_LOCAL_LENGTH_ERROR,
        [VCX_QC_RESP_CQE_ERROR] = VCX_QUERY_Q_COUNTER_OUT_RESP_CQE_ERROR,
        [VCX_QC_REQ_CQE_ERROR] = VCX_QUERY_Q_COUNTER_OUT_REQ_CQE_ERROR,
        [VCX_QC_REQ_REMOTE_INVALID_REQUEST] =
            VCX_QUERY_Q_COUNTER_OUT_REQ_REMOTE_INVALID_REQUEST,
        [VCX_QC_REQ_REMOTE_ACCESS_ERRORS] = VCX_QUERY_Q_COUNTER_OUT_REQ_REMOTE_ACCESS_ERRORS,
        [VCX_QC_RESP_REMOTE_ACCESS_ERRORS] =
            VCX_QUERY_Q_COUNTER_OUT_RESP_REMOTE_ACCESS_ERRORS,
        [VCX_QC_RESP_CQE_FLUSH_ERROR] = VCX_QUERY_Q_COUNTER_OUT_RESP_CQE_FLUSH_ERROR,
        [VCX_QC_REQ_CQE_FLUSH_ERROR] = VCX_QUERY_Q_COUNTER_OUT_REQ_CQE_FLUSH_ERROR,
        [VCX_QC_REQ_TRANSPORT_RETRIES_EXCEEDED] =
            VCX_QUERY_Q_COUNTER_OUT_REQ_TRANSPORT_RETRIES_EXCEEDED,
        [VCX_QC_REQ_RNR_RETRIES_EXCEEDED] = VCX_QUERY_Q_COUNTER_OUT_REQ_RNR_RETRIES_EXCEEDED,
        [VCX_QC_REQ_LOCAL_LENGTH_ERROR] = VCX_QUERY_Q_COUNTER_OUT_REQ_LOCAL_LENGTH_ERROR,
        [VCX_QC_RESP_LOCAL_QP_ERROR] = VCX_QUERY_Q_COUNTER_OUT_RESP_LOCAL_QP_ERROR,
        [VCX_QC_LOCAL_OPERATION_ERROR] = VCX_QUERY_Q_COUNTER_OUT_LOCAL_OPERATION_ERROR,
        [VCX_QC_RESP_LOCAL_PROTECTION] = VCX_QUERY_Q_COUNTER_OUT_RESP_LOCAL_PROTECTION,
        [VCX_QC_REQ_LOCAL_PROTECTION] = VCX_QUERY_Q_COUNTER_OUT_REQ_LOCAL_PROTECTION,
        [VCX_QC_REQ_MW_BINDING] = VCX_QUERY_Q_COUNTER_OUT_REQ_MW_BINDING,
        [VCX_QC_REQ_BAD_RESPONSE] = VCX_QUERY_Q_COUNTER_OUT_REQ_BAD_RESPONSE,
        [VCX_QC_RESP_REMOTE_INVALID_REQUEST] =
            VCX_QUERY_Q_COUNTER_OUT_RESP_REMOTE_INVALID_REQUEST,
        [VCX_QC_REQ_REMOTE_OPERATION_ERRORS] =
            VCX_QUERY_Q_COUNTER_OUT_REQ_REMOTE_OPERATION_ERRORS,
        [VCX_QC_CQ_OVERFLOW] = VCX_QUERY_Q_COUNTER_OUT_CQ_OVERFLOW,
    };
    bool clear;

    uint32_t id = vcx_get(cmd->in, VCX_QUERY_Q_COUNTER_IN_COUNTER_SET_ID);
    VcxQCounter *qc = vcx_qc_get(s, id);

    if (vcx_get(cmd->in, VCX_QUERY_Q_COUNTER_IN_OTHER_VPORT)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_QC_VPORT,
                            "other_vport: no eswitch");
    }
    if (vcx_get(cmd->in, VCX_QUERY_Q_COUNTER_IN_AGGREGATE)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_QC_AGGREGATE,
                            "aggregate: q_counter_aggregation is 0");
    }
    if (!qc) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_QC_NONE,
                            "counter_set_id %u is not allocated", id);
    }
    clear = vcx_get(cmd->in, VCX_QUERY_Q_COUNTER_IN_CLEAR);
    vcx_set(cmd->out, VCX_QUERY_Q_COUNTER_OUT_OUT_OF_BUFFER,
            qc->out_of_buffer + qc->rdma[VCX_QC_OUT_OF_BUFFER]);
    for (uint32_t i = 0; i < VCX_QC_RDMA_N; i++) {
        if (i != VCX_QC_OUT_OF_BUFFER) {
            vcx_set(cmd->out, rdma_at[i], qc->rdma[i]);
        }
    }
    if (clear) {
        /* every field returned, the enhanced error ones included, starts again from 0 */
        qc->out_of_buffer = 0;
        memset(qc->rdma, 0, sizeof(qc->rdma));
    }
    return VCX_CMD_STAT_OK;
}

static void vcx_traffic(uint8_t *out, uint32_t at, uint64_t *pkts, uint64_t *bytes,
                        bool clear)
{
    vcx_set64(out + at, VCX_TRAFFIC_CNT_PACKETS, *pkts);
    vcx_set64(out + at, VCX_TRAFFIC_CNT_OCTETS, *bytes);
    if (clear) {
        *pkts = *bytes = 0;
    }
}

uint8_t vcx_cmd_query_vport_counter(VcxState *s, VcxCmd *cmd)
{
    VcxNicStats *st = &vcx_nic(s)->st;
    bool clear = vcx_get(cmd->in, VCX_QUERY_VPORT_COUNTER_IN_CLEAR);
    uint32_t port = vcx_get(cmd->in, VCX_QUERY_VPORT_COUNTER_IN_PORT_NUM);
    uint8_t *o = cmd->out;
    uint8_t status = vcx_nic_vport_check(cmd, VCX_QUERY_VPORT_COUNTER_IN_OTHER_VPORT,
                                         VCX_QUERY_VPORT_COUNTER_IN_VPORT_NUMBER,
                                         SYND_VC_VPORT);

    if (status) {
        return status;
    }
    if (port > VCX_PORT_NUM) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_VC_PORT,
                            "port_num %u: the device has port %u only", port,
                            VCX_PORT_NUM);
    }
    vcx_traffic(o, VCX_VPORT_CNT_RECEIVED_ERRORS_AT, &st->rx_err_pkts, &st->rx_err_bytes,
                clear);
    vcx_traffic(o, VCX_VPORT_CNT_TRANSMIT_ERRORS_AT, &st->tx_err_pkts, &st->tx_err_bytes,
                clear);
    vcx_traffic(o, VCX_VPORT_CNT_RX_IB_UNICAST_AT, &st->rx_ib_uc_pkts, &st->rx_ib_uc_bytes,
                clear);
    vcx_traffic(o, VCX_VPORT_CNT_TX_IB_UNICAST_AT, &st->tx_ib_uc_pkts, &st->tx_ib_uc_bytes,
                clear);
    vcx_traffic(o, VCX_VPORT_CNT_RX_IB_MULTICAST_AT, &st->rx_ib_mc_pkts, &st->rx_ib_mc_bytes,
                clear);
    vcx_traffic(o, VCX_VPORT_CNT_TX_IB_MULTICAST_AT, &st->tx_ib_mc_pkts, &st->tx_ib_mc_bytes,
                clear);
    vcx_traffic(o, VCX_VPORT_CNT_RX_ETH_BROADCAST_AT, &st->rx_bc_pkts, &st->rx_bc_bytes,
                clear);
    vcx_traffic(o, VCX_VPORT_CNT_TX_ETH_BROADCAST_AT, &st->tx_bc_pkts, &st->tx_bc_bytes,
                clear);
    vcx_traffic(o, VCX_VPORT_CNT_RX_ETH_UNICAST_AT, &st->rx_uc_pkts, &st->rx_uc_bytes,
                clear);
    vcx_traffic(o, VCX_VPORT_CNT_TX_ETH_UNICAST_AT, &st->tx_uc_pkts, &st->tx_uc_bytes,
                clear);
    vcx_traffic(o, VCX_VPORT_CNT_RX_ETH_MULTICAST_AT, &st->rx_mc_pkts, &st->rx_mc_bytes,
                clear);
    vcx_traffic(o, VCX_VPORT_CNT_TX_ETH_MULTICAST_AT, &st->tx_mc_pkts, &st->tx_mc_bytes,
                clear);
    vcx_traffic(o, VCX_VPORT_CNT_LOCAL_LOOPBACK_AT, &st->lb_pkts, &st->lb_bytes, clear);
    return VCX_CMD_STAT_OK;
}

static void vcx_count(const uint8_t *f, uint32_t len, uint64_t *uc, uint64_t *ucb,
                      uint64_t *mc, uint64_t *mcb, uint64_t *bc, uint64_t *bcb)
{
    static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

    if (!memcmp(f, bcast, 6)) {
        (*bc)++;
        *bcb += len;
    } else if (f[0] & 1) {
        (*mc)++;
        *mcb += len;
    } else {
        (*uc)++;
        *ucb += len;
    }
}

void vcx_nic_count_rx(VcxState *s, const uint8_t *f, uint32_t len)
{
    VcxNicStats *st = &vcx_nic(s)->st;

    vcx_count(f, len, &st->rx_uc_pkts, &st->rx_uc_bytes, &st->rx_mc_pkts, &st->rx_mc_bytes,
              &st->rx_bc_pkts, &st->rx_bc_bytes);
}

void vcx_nic_count_tx(VcxState *s, const uint8_t *f, uint32_t len)
{
    VcxNicStats *st = &vcx_nic(s)->st;

    vcx_count(f, len, &st->tx_uc_pkts, &st->tx_uc_bytes, &st->tx_mc_pkts, &st->tx_mc_bytes,
              &st->tx_bc_pkts, &st->tx_bc_bytes);
}

/*
 * RoCE frames of the RDMA engine, sent (to the wire or looped) or received and parsed:
 * the vport's ib counters. They have no broadcast pair: a group address is multicast.
 * pkts frames of octets bytes in all, to a group address or not.
 */
void vcx_nic_count_roce_n(VcxState *s, bool group, uint64_t pkts, uint64_t octets, bool tx)
{
    VcxNicStats *st = &vcx_nic(s)->st;
    uint64_t *p = tx ? (group ? &st->tx_ib_mc_pkts : &st->tx_ib_uc_pkts) :
                       (group ? &st->rx_ib_mc_pkts : &st->rx_ib_uc_pkts);
    uint64_t *b = tx ? (group ? &st->tx_ib_mc_bytes : &st->tx_ib_uc_bytes) :
                       (group ? &st->rx_ib_mc_bytes : &st->rx_ib_uc_bytes);

    *p += pkts;
    *b += octets;
}

void vcx_nic_count_roce(VcxState *s, const uint8_t *f, uint32_t len, bool tx)
{
    vcx_nic_count_roce_n(s, f[0] & 1, 1, len, tx);
}

/* Unicast RoCE frames looped inside the port: each sent and received once. */
void vcx_nic_count_roce_looped(VcxState *s, uint64_t pkts, uint64_t octets)
{
    VcxNicStats *st = &vcx_nic(s)->st;

    st->tx_ib_uc_pkts += pkts;
    st->tx_ib_uc_bytes += octets;
    st->rx_ib_uc_pkts += pkts;
    st->rx_ib_uc_bytes += octets;
}
