/*
 * vcx: UD multicast groups of the port (IBTA vol 1 10.5, RoCE Annex A16/A17): the
 * ATTACH_TO_MCG (0x806) and DETACH_FROM_MCG (0x807) commands, delivery of a multicast
 * datagram to every attached QP, and the local copies of one a QP of the port sends.
 *
 * A group is a multicast GID: IPv6 ff00::/8, or an IPv4-mapped ::ffff:a.b.c.d with a.b.c.d
 * in 224.0.0.0/4 (how rdma_cm names an IPv4 group on RoCE). Its Ethernet address is the
 * IP multicast MAC of that address: 01:00:5e and the low 23 bits of the IPv4 address
 * (RFC 1112 6.4), or 33:33 and the low 32 bits of the IPv6 address (RFC 2464 7).
 *
 * Table: at most 2^log_max_mcg groups (VCX_LOG_MAX_MCG) of at most max_qp_mcg QPs each
 * (VCX_MAX_QP_MCG), both in QUERY_HCA_CAP. A group exists while a QP is attached to it:
 * the first ATTACH creates it, the last DETACH (or the last member's DESTROY_QP) frees it.
 * Members are named by QP number and looked up at each delivery, so nothing here points
 * at a QP; vcx_qp_free() detaches a QP from every group first. Reset empties the table.
 *
 * Commands (uid 0, op_mod 0, HCA initialized: checked by the dispatcher):
 *   QP missing, not UD (RC, UC, XRC, QP1, REG_UMR)            BAD_PARAM
 *   GID not multicast                                           BAD_PARAM
 *   ATTACH: the QP already in the group                         BAD_RES_STATE
 *   ATTACH: no free group, or the group's member list full      EXCEED_LIM
 *   DETACH: no such group, or the QP not in it                  BAD_RES_STATE
 * each with a guest error and the vcx_err_cmd_status trace (vcx_cmd_fail).
 *
 * Receive (vcx_roce_mcg_rx): a UD SEND whose BTH destination QP is 0xFFFFFF and whose
 * destination GID names a group goes to each member through the UD responder (Q_Key
 * checked per QP, its own receive WQE, CQE and GRH area). Send (vcx_roce_mcg_loopback):
 * a UD WQE to such a GID is copied to every member of the port, the sending QP included
 * when it is attached (block_lb_mc is not offered: cap 0, CREATE_QP refuses the bit), and
 * goes to the wire as well when the port has one (vcx_roce_route). The vport counters
 * take the group's one frame as loopback-frames does: sent once (by the wire engine when
 * it goes there), received once when a member of the port is there to take it.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/bswap.h"
#include "vcx-roce.h"
#include "../nic/vcx-nic.h"
#include "hw/vcx/trace.h"

enum {
    SYND_MCG_QP_NONE = 0x01,
    SYND_MCG_QP_TYPE = 0x02,
    SYND_MCG_GID = 0x03,
    SYND_MCG_ATTACHED = 0x04,
    SYND_MCG_FULL = 0x05,
    SYND_MCG_QP_FULL = 0x06,
    SYND_MCG_NOT_ATTACHED = 0x07,
};

bool vcx_gid_is_mcast(const uint8_t *gid)
{
    static const uint8_t v4_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

    if (gid[0] == 0xff) {
        return true;
    }
    return !memcmp(gid, v4_prefix, sizeof(v4_prefix)) && (gid[12] & 0xf0) == 0xe0;
}

void vcx_gid_mcast_mac(const uint8_t *gid, uint8_t *mac)
{
    if (gid[0] == 0xff) {
        mac[0] = 0x33;
        mac[1] = 0x33;
        memcpy(mac + 2, gid + 12, 4);
    } else {
        mac[0] = 0x01;
        mac[1] = 0x00;
        mac[2] = 0x5e;
        mac[3] = gid[13] & 0x7f;
        mac[4] = gid[14];
        mac[5] = gid[15];
    }
}

static VcxMcg *vcx_mcg_find(VcxRoceDev *r, const uint8_t *gid)
{
    for (uint32_t i = 0; i < ARRAY_SIZE(r->mcg); i++) {
        if (r->mcg[i].nqps && !memcmp(r->mcg[i].gid, gid, 16)) {
            return &r->mcg[i];
        }
    }
    return NULL;
}

static int vcx_mcg_member(const VcxMcg *g, uint32_t qpn)
{
    for (uint32_t i = 0; i < g->nqps; i++) {
        if (g->qpn[i] == qpn) {
            return i;
        }
    }
    return -1;
}

static void vcx_mcg_remove(VcxMcg *g, uint32_t i)
{
    g->qpn[i] = g->qpn[--g->nqps];
}

/* The QP and GID of an ATTACH / DETACH, checked; NULL (status set) if refused. */
static VcxQp *vcx_mcg_cmd_args(VcxState *s, VcxCmd *cmd, uint8_t *gid, uint8_t *status)
{
    uint32_t qpn = vcx_get(cmd->in, VCX_MCG_IN_QPN);
    VcxQp *qp = vcx_qp_get(s, qpn);

    memcpy(gid, cmd->in + VCX_FLD_BYTE(VCX_MCG_IN_GID), 16);
    if (!qp) {
        *status = vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_MCG_QP_NONE,
                               "QP 0x%x does not exist", qpn);
        return NULL;
    }
    if (qp->st != VCX_QP_ST_UD) {
        *status = vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_MCG_QP_TYPE,
                               "QP 0x%x is not a UD QP (st 0x%x)", qpn, qp->st);
        return NULL;
    }
    if (!vcx_gid_is_mcast(gid)) {
        *status = vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_MCG_GID,
                               "GID %02x%02x:...:%02x%02x is not a multicast GID",
                               gid[0], gid[1], gid[14], gid[15]);
        return NULL;
    }
    return qp;
}

uint8_t vcx_cmd_attach_to_mcg(VcxState *s, VcxCmd *cmd)
{
    VcxRoceDev *r = vcx_roce(s);
    uint8_t status = VCX_CMD_STAT_OK, gid[16];
    VcxQp *qp = vcx_mcg_cmd_args(s, cmd, gid, &status);
    VcxMcg *g;

    if (!qp) {
        return status;
    }
    g = vcx_mcg_find(r, gid);
    if (g && vcx_mcg_member(g, qp->qpn) >= 0) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_MCG_ATTACHED,
                            "QP 0x%x is already attached to that group", qp->qpn);
    }
    if (!g) {
        for (uint32_t i = 0; i < ARRAY_SIZE(r->mcg) && !g; i++) {
            if (!r->mcg[i].nqps) {
                g = &r->mcg[i];
            }
        }
        if (!g) {
            return vcx_cmd_fail(cmd, VCX_CMD_STAT_EXCEED_LIM, SYND_MCG_FULL,
                                "all %u multicast groups in use", 1u << VCX_LOG_MAX_MCG);
        }
        memcpy(g->gid, gid, 16);
    } else if (g->nqps == VCX_MAX_QP_MCG) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_EXCEED_LIM, SYND_MCG_QP_FULL,
                            "the group has %u QPs already", VCX_MAX_QP_MCG);
    }
    g->qpn[g->nqps++] = qp->qpn;
    trace_vcx_mcg_attach(qp->qpn, ldl_be_p(gid), ldl_be_p(gid + 12), g->nqps);
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_detach_from_mcg(VcxState *s, VcxCmd *cmd)
{
    VcxRoceDev *r = vcx_roce(s);
    uint8_t status = VCX_CMD_STAT_OK, gid[16];
    VcxQp *qp = vcx_mcg_cmd_args(s, cmd, gid, &status);
    VcxMcg *g;
    int i;

    if (!qp) {
        return status;
    }
    g = vcx_mcg_find(r, gid);
    i = g ? vcx_mcg_member(g, qp->qpn) : -1;
    if (i < 0) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_MCG_NOT_ATTACHED,
                            "QP 0x%x is not attached to that group", qp->qpn);
    }
    vcx_mcg_remove(g, i);
    trace_vcx_mcg_detach(qp->qpn, ldl_be_p(gid), ldl_be_p(gid + 12), g->nqps);
    return VCX_CMD_STAT_OK;
}

/* DESTROY_QP (and every QP freed): no group keeps the QP. */
void vcx_roce_mcg_qp_gone(VcxState *s, uint32_t qpn)
{
    VcxRoceDev *r = vcx_roce(s);

    if (!r) {
        return;
    }
    for (uint32_t k = 0; k < ARRAY_SIZE(r->mcg); k++) {
        int i = r->mcg[k].nqps ? vcx_mcg_member(&r->mcg[k], qpn) : -1;

        if (i >= 0) {
            vcx_mcg_remove(&r->mcg[k], i);
            trace_vcx_mcg_detach(qpn, ldl_be_p(r->mcg[k].gid),
                                 ldl_be_p(r->mcg[k].gid + 12), r->mcg[k].nqps);
        }
    }
}

/* Groups in use (the state property). */
uint32_t vcx_roce_mcg_count(VcxState *s)
{
    VcxRoceDev *r = vcx_roce(s);
    uint32_t n = 0;

    for (uint32_t k = 0; r && k < ARRAY_SIZE(r->mcg); k++) {
        n += r->mcg[k].nqps != 0;
    }
    return n;
}

/*
 * A received frame's addresses name a group of the port: its destination MAC is the
 * group's multicast MAC (the steering entry firmware keeps for an attached group, so the
 * vport's own multicast list is not needed).
 */
bool vcx_roce_mcg_wants(VcxState *s, const uint8_t *dmac, const uint8_t *dgid)
{
    VcxRoceDev *r = vcx_roce(s);
    uint8_t mac[6];

    if (!r || !vcx_gid_is_mcast(dgid) || !vcx_mcg_find(r, dgid)) {
        return false;
    }
    vcx_gid_mcast_mac(dgid, mac);
    return !memcmp(mac, dmac, 6);
}

/*
 * A multicast datagram (BTH destination QP 0xFFFFFF) to every member of its group, each
 * through the UD responder; false if no group of the port has that GID.
 */
bool vcx_roce_mcg_rx(VcxState *s, const VcxRocePkt *p)
{
    VcxRoceDev *r = vcx_roce(s);
    VcxMcg *g = vcx_mcg_find(r, p->dgid);
    uint32_t qpns[VCX_MAX_QP_MCG], n;

    if (!g) {
        r->st.bad_qp++;
        trace_vcx_roce_rx_drop(p->opcode, p->dqpn, "no multicast group of that GID");
        return false;
    }
    /* the members as they are now: a delivery that fails a QP must not move the loop */
    n = g->nqps;
    memcpy(qpns, g->qpn, n * sizeof(qpns[0]));
    for (uint32_t i = 0; i < n; i++) {
        VcxQp *qp = vcx_qp_get(s, qpns[i]);

        if (qp) {
            trace_vcx_mcg_deliver(p->sqpn, qp->qpn, p->len);
            vcx_roce_resp_rx(s, qp, p);
        }
    }
    return true;
}

/*
 * The local copies of a UD message to a multicast GID (the requester's VcxPkt, payload in
 * its gather list): every member of the port gets one, as ConnectX loops multicast back
 * to local members; wire: the frame also goes onto the netdev (vcx_roce_route), which
 * counts it as sent. False if the payload could not be read (the WQE fails).
 */
bool vcx_roce_mcg_loopback(VcxState *s, VcxQp *qp, VcxReq *rq, bool wire)
{
    const VcxPkt *m = &rq->pkt;
    uint8_t buf[4096] VCX_NOINIT;
    VcxSglCursor c = { .sgl = &rq->sgl };
    VcxRocePkt p = {
        .opcode = m->opcode, .se = m->se, .pkey = VCX_DEFAULT_PKEY, .dqpn = m->dqpn,
        .psn = m->psn, .qkey = m->qkey, .sqpn = m->sqpn, .imm = m->imm,
        .payload = buf, .len = m->len, .tclass = m->tclass, .hop_limit = m->hop_limit,
        .flow_label = m->flow_label,
    };
    bool member = vcx_roce_mcg_find_any(s, m->dgid);
    uint32_t octets;

    p.flags = vcx_roce_op_flags(p.opcode);
    memcpy(p.sgid, m->sgid, 16);
    memcpy(p.dgid, m->dgid, 16);
    if (member && (m->len > sizeof(buf) ||
                   (m->len && vcx_sgl_io(s, &c, buf, m->len, false) != MEMTX_OK))) {
        vcx_req_fail(s, qp, rq->nbb, rq->opcode, VCX_CQE_SYND_LOCAL_PROT_ERR,
                     "multicast payload not readable");
        return false;
    }
    octets = vcx_roce_frame_len(vcx_roce_frame_outer_gid(s, vcx_get(m->av,
                                                                     VCX_WQE_AV_SGID_INDEX)),
                                m->opcode, m->len);
    if (!wire) {
        vcx_nic_count_roce_n(s, true, 1, octets, true);
    }
    if (member) {
        vcx_nic_count_roce_n(s, true, 1, octets, false);
        vcx_roce_mcg_rx(s, &p);
    }
    return true;
}

bool vcx_roce_mcg_find_any(VcxState *s, const uint8_t *gid)
{
    VcxRoceDev *r = vcx_roce(s);

    return r && vcx_mcg_find(r, gid) != NULL;
}

void vcx_roce_mcg_reset(VcxState *s)
{
    VcxRoceDev *r = vcx_roce(s);

    if (r) {
        memset(r->mcg, 0, sizeof(r->mcg));
    }
}
