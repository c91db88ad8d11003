/*
 * vcx: completion queues (PRM "Completion Queue"): CREATE_CQ, DESTROY_CQ, QUERY_CQ,
 * MODIFY_CQ, the CQE writer, arming through the UAR CQ doorbell and completion events.
 *
 * A CQ is 2^log_cq_size CQEs of 64 or 128 bytes (cqe_sz; a 128-byte CQE carries the
 * 64-byte layout in its second half) in guest pages given by PAS, plus an 8-byte doorbell
 * record whose first dword is software's consumer counter (set_ci). The device writes
 * entry (producer & (n - 1)) with owner bit (producer >> log_cq_size) & 1, the op_own
 * byte last. Before each write it reads set_ci: a CQE that would overwrite one software
 * has not consumed is an overrun, which (unless oi is set) puts the CQ in error
 * (status OVERFLOW) and reports a CQ error event (type 0x04, syndrome 1); later CQEs are
 * dropped. An unreadable doorbell record or unwritable ring does the same with
 * syndrome 2 and status WRITE_FAIL.
 *
 * Arming: the UAR doorbell at 0x20 is one 64-bit big-endian write, high dword
 * arm_sn[29:28] | cmd[27:24] | ci[23:0], low dword the CQN. cmd 0 asks for an event on
 * the next CQE, cmd 1 on the next solicited or error CQE. An armed CQ posts one
 * completion EQE (type 0, CQN at EQE byte 0x38) to its c_eqn and is then fired until
 * the next arm. Arming for any CQE while CQEs past ci exist fires at once.
 *
 * Moderation (caps cq_moderation, cq_period_mode_modify and cq_period_start_from_cqe = 1;
 * CREATE_CQ, or MODIFY_CQ op_mod 0 with modify_field_select period, count, period mode;
 * oi too; period modes 2 and 3 are reserved: BAD_PARAM): an armed CQ's event waits until
 * cq_max_count CQEs were written since the last event, or cq_period microseconds
 * (QEMU_CLOCK_VIRTUAL) have passed since the period's start: the last event
 * (cq_period_mode 0, upon event; an idle CQ's first CQE then fires at once) or the
 * first CQE after it (mode 1, upon CQE). 0 turns either bound off; both 0 is an event
 * per CQE, as without moderation. A solicited-only arm and arming with CQEs past ci fire
 * at once, as before. The period's timer only marks the CQ due (objs->modq) for the
 * executor's guarded bottom half, which posts the event (vcx_cq_mod_run): no EQE or
 * MSI-X is written from a timer callback.
 *
 * Resize (MODIFY_CQ op_mod 1, cap cq_resize = 1) swaps the ring for a new one given by
 * log_cq_size, log_page_size, page_offset and PAS, as ConnectX firmware does it: a
 * RESIZE_CQ CQE (opcode 5) is written into the OLD ring at the producer position, and
 * every later CQE goes to the new ring. The producer counter runs on: CQE n lands in
 * entry n & (new size - 1) with owner bit (n >> new log_cq_size) & 1. Software consumes
 * the old ring up to the resize CQE, then moves to the new one; a consumer that copies
 * the CQEs it has not polled (mlx5_ib copy_resize_cqes, libmlx5
 * mlx5_cq_resize_copy_cqes) places old CQE i at new entry i + 1 and steps over the
 * resize CQE, so the counters of both sides stay in step. The new ring must hold what
 * software has not consumed (producer - set_ci) plus the resize CQE, else BAD_SIZE
 * (MLX5_CMD_STAT_BAD_SIZE_OUTS_CQES_ERR).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "hw/pci/pci_device.h"
#include "vcx-obj.h"
#include "trace.h"

#define VCX_CQ_COUNTER_MASK     0x00ffffffu

enum {
    SYND_CQ_UMEM = 1,
    SYND_CQ_LOG_SIZE,
    SYND_CQ_CQE_SZ,
    SYND_CQ_COMPRESSION,
    SYND_CQ_UAR,
    SYND_CQ_EQN,
    SYND_CQ_LOG_PAGE_SIZE,
    SYND_CQ_DBR_ALIGN,
    SYND_CQ_PAS_SHORT,
    SYND_CQ_PAS_ALIGN,
    SYND_CQ_LIMIT,
    SYND_CQ_NONE,
    SYND_CQ_IN_USE,
    SYND_CQ_RESIZE_STATE,
    SYND_CQ_FIELD_SELECT,
    SYND_CQ_RESIZE_OUTSTANDING,
    SYND_CQ_RESIZE_FULL,
    SYND_CQ_RESIZE_CQE_WRITE,
    SYND_CQ_PERIOD_MODE,
    SYND_CQ_SCQE_BREAK,
};

/* cq_period_mode: 0 and 1 are defined (PRM "CQ moderation"); 2 and 3 are reserved. */
static uint8_t vcx_cq_check_period_mode(VcxCmd *cmd, const uint8_t *cqc)
{
    uint32_t mode = vcx_get(cqc, VCX_CQC_CQ_PERIOD_MODE);

    if (mode > VCX_CQ_PERIOD_MODE_UPON_CQE) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_CQ_PERIOD_MODE,
                            "cq_period_mode %u reserved (0: upon event, 1: upon CQE)",
                            mode);
    }
    return VCX_CMD_STAT_OK;
}

static MemTxResult vcx_cq_write_cqe(VcxState *s, VcxCq *cq, uint8_t *cqe, bool solicited);
static void vcx_cq_error(VcxState *s, VcxCq *cq, uint8_t cq_status, uint8_t synd);
static void vcx_cq_mod_cb(void *opaque);

/* The consumer counter software last published in the doorbell record. */
static uint32_t vcx_cq_read_cons(VcxState *s, VcxCq *cq)
{
    uint32_t ci;

    if (vcx_dbr_read(s, cq->dbr_addr, &ci) == MEMTX_OK) {
        cq->cons = ci & VCX_CQ_COUNTER_MASK;
    }
    return cq->cons;
}

uint8_t vcx_cmd_create_cq(VcxState *s, VcxCmd *cmd)
{
    const uint8_t *cqc = cmd->in + VCX_CREATE_CQ_IN_CQC_AT;
    uint32_t log_size = vcx_get(cqc, VCX_CQC_LOG_CQ_SIZE);
    uint32_t cqe_sz = vcx_get(cqc, VCX_CQC_CQE_SZ);
    uint32_t uar = vcx_get(cqc, VCX_CQC_UAR_PAGE);
    uint32_t eqn = vcx_get(cqc, VCX_CQC_C_EQN);
    uint32_t log_page = vcx_get(cqc, VCX_CQC_LOG_PAGE_SIZE);
    uint64_t dbr = vcx_get64(cqc, VCX_CQC_DBR_ADDR);
    VcxQBuf buf = { 0 };
    uint8_t status;
    VcxCq *cq;

    if (vcx_get(cmd->in, VCX_CREATE_CQ_IN_UMEM_VALID) ||
        vcx_get(cqc, VCX_CQC_DBR_UMEM_VALID)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_CQ_UMEM,
                            "umem not supported");
    }
    if (log_size > VCX_LOG_MAX_CQ_SZ) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_CQ_LOG_SIZE,
                            "log_cq_size %u > log_max_cq_sz %u", log_size,
                            VCX_LOG_MAX_CQ_SZ);
    }
    if (cqe_sz != VCX_CQC_CQE_SZ_64 && cqe_sz != VCX_CQC_CQE_SZ_128) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_CQ_CQE_SZ,
                            "cqe_sz %u not supported (0: 64 B, 1: 128 B)", cqe_sz);
    }
    if (vcx_get(cqc, VCX_CQC_CQE_COMP_EN) || vcx_get(cqc, VCX_CQC_CC) ||
        vcx_get(cqc, VCX_CQC_MINI_CQE_RES_FORMAT)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_CQ_COMPRESSION,
                            "CQE compression / collapsed CQ not supported");
    }
    if (vcx_get(cqc, VCX_CQC_SCQE_BREAK_MODERATION)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_CQ_SCQE_BREAK,
                            "scqe_break_moderation_en: cap scqe_break_moderation is 0");
    }
    status = vcx_cq_check_period_mode(cmd, cqc);
    if (status) {
        return status;
    }
    if (!vcx_uar_allocated(s, uar)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_CQ_UAR,
                            "uar_page %u not allocated", uar);
    }
    if (eqn >= VCX_MAX_EQS || !s->eqs[eqn].valid) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_CQ_EQN,
                            "c_eqn %u does not exist", eqn);
    }
    if (log_page > VCX_MAX_LOG_PAGE_SIZE) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_CQ_LOG_PAGE_SIZE,
                            "log_page_size %u > %u", log_page, VCX_MAX_LOG_PAGE_SIZE);
    }
    if (dbr & (VCX_DBR_ALIGN - 1)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_CQ_DBR_ALIGN,
                            "dbr_addr 0x%" PRIx64 " not 8-byte aligned", dbr);
    }
    status = vcx_qbuf_parse(cmd, &buf, cmd->in + VCX_CREATE_CQ_IN_PAS_AT,
                            cmd->in_len - VCX_CREATE_CQ_IN_PAS_AT, log_page,
                            vcx_get(cqc, VCX_CQC_PAGE_OFFSET),
                            (uint64_t)(VCX_CQE_SIZE << cqe_sz) << log_size,
                            SYND_CQ_PAS_SHORT, SYND_CQ_PAS_ALIGN);
    if (status) {
        return status;
    }
    cq = g_new0(VcxCq, 1);
    if (!vcx_obj_alloc(&s->objs->cqs, cq, &cq->cqn)) {
        vcx_qbuf_free(&buf);
        g_free(cq);
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_EXCEED_LIM, SYND_CQ_LIMIT,
                            "all %u CQs in use", s->objs->cqs.size - 1);
    }
    cq->log_size = log_size;
    cq->cqe_sz = cqe_sz;
    cq->status = VCX_CQC_STATUS_OK;
    cq->st = VCX_CQ_STATE_FIRED;
    cq->oi = vcx_get(cqc, VCX_CQC_OI);
    cq->period_mode = vcx_get(cqc, VCX_CQC_CQ_PERIOD_MODE);
    cq->cq_period = vcx_get(cqc, VCX_CQC_CQ_PERIOD);
    cq->cq_max_count = vcx_get(cqc, VCX_CQC_CQ_MAX_COUNT);
    cq->s = s;
    cq->mod_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, vcx_cq_mod_cb, cq);
    cq->uar_page = uar;
    cq->c_eqn = eqn;
    cq->dbr_addr = dbr;
    cq->buf = buf;
    vcx_set(cmd->out, VCX_CREATE_CQ_OUT_CQN, cq->cqn);
    trace_vcx_cq_create(cq->cqn, log_size, cqe_sz, eqn, uar);
    return VCX_CMD_STAT_OK;
}

static VcxCq *vcx_cq_lookup_cmd(VcxState *s, VcxCmd *cmd, uint32_t cqn, uint8_t *status)
{
    VcxCq *cq = vcx_cq_get(s, cqn);

    if (!cq) {
        *status = vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_CQ_NONE,
                               "CQ 0x%x does not exist", cqn);
    }
    return cq;
}

void vcx_cq_free(VcxState *s, VcxCq *cq)
{
    if (cq->mod_due) {
        QTAILQ_REMOVE(&s->objs->modq, cq, mod_link);
    }
    timer_free(cq->mod_timer);
    vcx_obj_remove(&s->objs->cqs, cq->cqn);
    vcx_qbuf_free(&cq->buf);
    g_free(cq);
}

uint8_t vcx_cmd_destroy_cq(VcxState *s, VcxCmd *cmd)
{
    uint8_t status = VCX_CMD_STAT_OK;
    VcxCq *cq = vcx_cq_lookup_cmd(s, cmd, vcx_get(cmd->in, VCX_OBJ_NUMBER), &status);

    if (!cq) {
        return status;
    }
    if (cq->refs) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_CQ_IN_USE,
                            "CQ 0x%x still used by %u QPs", cq->cqn, cq->refs);
    }
    trace_vcx_cq_destroy(cq->cqn);
    vcx_cq_free(s, cq);
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_query_cq(VcxState *s, VcxCmd *cmd)
{
    uint8_t status = VCX_CMD_STAT_OK;
    VcxCq *cq = vcx_cq_lookup_cmd(s, cmd, vcx_get(cmd->in, VCX_OBJ_NUMBER), &status);
    uint8_t *cqc = cmd->out + VCX_QUERY_CQ_OUT_CQC_AT;

    if (!cq) {
        return status;
    }
    vcx_cq_read_cons(s, cq);
    vcx_set(cqc, VCX_CQC_STATUS, cq->status);
    vcx_set(cqc, VCX_CQC_CQE_SZ, cq->cqe_sz);
    vcx_set(cqc, VCX_CQC_OI, cq->oi);
    vcx_set(cqc, VCX_CQC_CQ_PERIOD_MODE, cq->period_mode);
    vcx_set(cqc, VCX_CQC_ST, cq->st);
    vcx_set(cqc, VCX_CQC_PAGE_OFFSET, cq->buf.offset / 64);
    vcx_set(cqc, VCX_CQC_LOG_CQ_SIZE, cq->log_size);
    vcx_set(cqc, VCX_CQC_UAR_PAGE, cq->uar_page);
    vcx_set(cqc, VCX_CQC_CQ_PERIOD, cq->cq_period);
    vcx_set(cqc, VCX_CQC_CQ_MAX_COUNT, cq->cq_max_count);
    vcx_set(cqc, VCX_CQC_C_EQN, cq->c_eqn);
    vcx_set(cqc, VCX_CQC_LOG_PAGE_SIZE, cq->buf.page_shift - VCX_PAGE_SHIFT);
    vcx_set(cqc, VCX_CQC_LAST_NOTIFIED_INDEX, cq->last_notified);
    vcx_set(cqc, VCX_CQC_LAST_SOLICIT_INDEX, cq->last_solicit);
    vcx_set(cqc, VCX_CQC_CONSUMER_COUNTER, cq->cons);
    vcx_set(cqc, VCX_CQC_PRODUCER_COUNTER, cq->prod);
    vcx_set64(cqc, VCX_CQC_DBR_ADDR, cq->dbr_addr);
    vcx_qbuf_query_pas(&cq->buf, cmd->out + VCX_QUERY_CQ_OUT_PAS_AT,
                       cmd->out_len - VCX_QUERY_CQ_OUT_PAS_AT);
    return VCX_CMD_STAT_OK;
}

/*
 * MODIFY_CQ op_mod 1 (PRM "MODIFY_CQ": resize_field_select log_cq_size, page_offset,
 * log_page_size; the PAS list of the new ring at 0x110). Every check is made before
 * anything changes; the CQ keeps its number, EQ, UAR, doorbell record and counters.
 */
static uint8_t vcx_cq_resize(VcxState *s, VcxCmd *cmd, VcxCq *cq)
{
    const uint8_t *cqc = cmd->in + VCX_MODIFY_CQ_IN_CQC_AT;
    uint32_t sel = vcx_get(cmd->in, VCX_MODIFY_CQ_IN_FIELD_SELECT);
    const uint32_t known = VCX_CQ_RESIZE_LOG_SIZE | VCX_CQ_RESIZE_PAGE_OFFSET |
                           VCX_CQ_RESIZE_LOG_PAGE_SIZE;
    uint32_t old_log = cq->log_size;
    uint32_t log_size = sel & VCX_CQ_RESIZE_LOG_SIZE ? vcx_get(cqc, VCX_CQC_LOG_CQ_SIZE)
                                                     : old_log;
    uint32_t log_page = sel & VCX_CQ_RESIZE_LOG_PAGE_SIZE ?
                        vcx_get(cqc, VCX_CQC_LOG_PAGE_SIZE) :
                        (uint32_t)cq->buf.page_shift - VCX_PAGE_SHIFT;
    uint32_t page_offset = sel & VCX_CQ_RESIZE_PAGE_OFFSET ?
                           vcx_get(cqc, VCX_CQC_PAGE_OFFSET) : cq->buf.offset / 64;
    uint32_t cqe_sz = vcx_get(cqc, VCX_CQC_CQE_SZ);
    uint8_t resize_cqe[VCX_CQE_SIZE] = { 0 };
    uint32_t outstanding;
    VcxQBuf buf = { 0 };
    uint8_t status;

    if (sel & ~known) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_CQ_FIELD_SELECT,
                            "resize_field_select 0x%x: bits 0x%x not supported", sel,
                            sel & ~known);
    }
    if (vcx_get(cmd->in, VCX_MODIFY_CQ_IN_UMEM_VALID)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_CQ_UMEM,
                            "umem not supported");
    }
    /* mlx5_ib always sends the CQ's cqe_sz; a resize cannot change the CQE size. */
    if (cqe_sz != cq->cqe_sz) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_CQ_CQE_SZ,
                            "resize: cqe_sz %u differs from the CQ's %u", cqe_sz,
                            cq->cqe_sz);
    }
    if (log_size > VCX_LOG_MAX_CQ_SZ) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_CQ_LOG_SIZE,
                            "resize: log_cq_size %u > log_max_cq_sz %u", log_size,
                            VCX_LOG_MAX_CQ_SZ);
    }
    if (log_page > VCX_MAX_LOG_PAGE_SIZE) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_CQ_LOG_PAGE_SIZE,
                            "resize: log_page_size %u > %u", log_page,
                            VCX_MAX_LOG_PAGE_SIZE);
    }
    if (cq->status != VCX_CQC_STATUS_OK) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_CQ_RESIZE_STATE,
                            "resize of CQ 0x%x in error (status 0x%x)", cq->cqn,
                            cq->status);
    }
    outstanding = (cq->prod - vcx_cq_read_cons(s, cq)) & VCX_CQ_COUNTER_MASK;
    if (outstanding >= (1u << log_size)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_SIZE, SYND_CQ_RESIZE_OUTSTANDING,
                            "resize of CQ 0x%x to %u entries: %u CQEs outstanding plus "
                            "the resize CQE do not fit", cq->cqn, 1u << log_size,
                            outstanding);
    }
    if (outstanding >= (1u << old_log)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_CQ_RESIZE_FULL,
                            "resize of CQ 0x%x: the old ring is full, no room for the "
                            "resize CQE", cq->cqn);
    }
    status = vcx_qbuf_parse(cmd, &buf, cmd->in + VCX_MODIFY_CQ_IN_PAS_AT,
                            cmd->in_len - VCX_MODIFY_CQ_IN_PAS_AT, log_page, page_offset,
                            (uint64_t)(VCX_CQE_SIZE << cq->cqe_sz) << log_size,
                            SYND_CQ_PAS_SHORT, SYND_CQ_PAS_ALIGN);
    if (status) {
        return status;
    }
    /* The resize CQE is the last entry of the old ring software will read. */
    resize_cqe[VCX_CQE_OP_OWN_BYTE] = VCX_CQE_RESIZE_CQ << 4;
    if (vcx_cq_write_cqe(s, cq, resize_cqe, false) != MEMTX_OK) {
        vcx_qbuf_free(&buf);
        trace_vcx_err_cq(cq->cqn, "resize CQE not writable");
        vcx_cq_error(s, cq, VCX_CQC_STATUS_WRITE_FAIL, VCX_CQ_ERR_SYND_ACCESS_VIOLATION);
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_CQ_RESIZE_CQE_WRITE,
                            "resize of CQ 0x%x: old ring entry %u not writable, CQ goes "
                            "to error", cq->cqn, cq->prod & ((1u << old_log) - 1));
    }
    trace_vcx_cqe(cq->cqn, cq->prod, VCX_CQE_RESIZE_CQ, 0, 0, 0);
    cq->prod = (cq->prod + 1) & VCX_CQ_COUNTER_MASK;
    vcx_qbuf_free(&cq->buf);
    cq->buf = buf;
    cq->log_size = log_size;
    trace_vcx_cq_resize(cq->cqn, old_log, log_size, cq->prod, outstanding);
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_modify_cq(VcxState *s, VcxCmd *cmd)
{
    uint8_t status = VCX_CMD_STAT_OK;
    VcxCq *cq = vcx_cq_lookup_cmd(s, cmd, vcx_get(cmd->in, VCX_MODIFY_CQ_IN_CQN), &status);
    const uint8_t *cqc = cmd->in + VCX_MODIFY_CQ_IN_CQC_AT;
    uint32_t sel = vcx_get(cmd->in, VCX_MODIFY_CQ_IN_FIELD_SELECT);
    const uint32_t known = VCX_CQ_MODIFY_PERIOD | VCX_CQ_MODIFY_COUNT |
                           VCX_CQ_MODIFY_OVERRUN | VCX_CQ_MODIFY_PERIOD_MODE;

    if (!cq) {
        return status;
    }
    if (cmd->op_mod == VCX_MODIFY_CQ_OP_MOD_RESIZE) {
        return vcx_cq_resize(s, cmd, cq);
    }
    if (sel & ~known) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_CQ_FIELD_SELECT,
                            "modify_field_select 0x%x: bits 0x%x not supported", sel,
                            sel & ~known);
    }
    if (sel & VCX_CQ_MODIFY_PERIOD_MODE) {
        status = vcx_cq_check_period_mode(cmd, cqc);
        if (status) {
            return status;
        }
    }
    if (sel & VCX_CQ_MODIFY_PERIOD) {
        cq->cq_period = vcx_get(cqc, VCX_CQC_CQ_PERIOD);
    }
    if (sel & VCX_CQ_MODIFY_COUNT) {
        cq->cq_max_count = vcx_get(cqc, VCX_CQC_CQ_MAX_COUNT);
    }
    if (sel & VCX_CQ_MODIFY_OVERRUN) {
        cq->oi = vcx_get(cqc, VCX_CQC_OI);
    }
    if (sel & VCX_CQ_MODIFY_PERIOD_MODE) {
        cq->period_mode = vcx_get(cqc, VCX_CQC_CQ_PERIOD_MODE);
    }
    return VCX_CMD_STAT_OK;
}

/*
 * Data path
 */

static void vcx_cq_error(VcxState *s, VcxCq *cq, uint8_t cq_status, uint8_t synd)
{
    uint8_t eqe[VCX_EQE_SIZE] = { 0 };

    cq->status = cq_status;
    vcx_set(eqe, VCX_EQE_CQ_ERR_CQN, cq->cqn);
    vcx_set(eqe, VCX_EQE_CQ_ERR_SYNDROME, synd);
    vcx_eq_post_event(s, VCX_EVENT_TYPE_CQ_ERROR, 0, vcx_cptr(eqe, VCX_EQE_DATA),
                      VCX_EQE_DATA.width / 8);
}

static void vcx_cq_notify(VcxState *s, VcxCq *cq)
{
    uint8_t eqe[VCX_EQE_SIZE] = { 0 };

    cq->st = VCX_CQ_STATE_FIRED;
    cq->last_notified = cq->prod;
    cq->mod_count = 0;
    cq->mod_start_ns = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    timer_del(cq->mod_timer);
    vcx_set(eqe, VCX_EQE_COMP_CQN, cq->cqn);
    trace_vcx_cq_event(cq->cqn, cq->c_eqn);
    vcx_eq_post_to(s, cq->c_eqn, VCX_EVENT_TYPE_COMP, 0, vcx_cptr(eqe, VCX_EQE_DATA),
                   VCX_EQE_DATA.width / 8);
}

/*
 * Write cqe (its opcode in op_own) at the producer position with the owner bit of that
 * pass. A 128-byte CQE carries the CQE in its second half; op_own goes out last.
 */
static MemTxResult vcx_cq_write_cqe(VcxState *s, VcxCq *cq, uint8_t *cqe, bool solicited)
{
    uint32_t nent = 1u << cq->log_size;
    uint32_t size = VCX_CQE_SIZE << cq->cqe_sz;
    uint64_t off = (uint64_t)(cq->prod & (nent - 1)) * size;
    uint8_t zero[VCX_CQE_SIZE] = { 0 };
    uint8_t opcode = vcx_cqe_opcode(cqe);
    MemTxResult r = MEMTX_OK;

    /*
     * Completion timestamp (cqe64 timestamp_h/_l): the internal timer when the CQE is
     * written. Error CQEs have their syndromes there, and a resize CQE marks a ring
     * switch, so neither carries one.
     */
    if (opcode != VCX_CQE_REQ_ERR && opcode != VCX_CQE_RESP_ERR &&
        opcode != VCX_CQE_RESIZE_CQ) {
        vcx_set64(cqe, VCX_CQE_TIMESTAMP, vcx_internal_timer(s));
    }
    cqe[VCX_CQE_OP_OWN_BYTE] = vcx_cqe_make_op_own(opcode, VCX_CQE_FORMAT_NORMAL,
                                                   solicited,
                                                   vcx_cqe_owner_for(cq->prod,
                                                                     cq->log_size));
    if (cq->cqe_sz) {
        r = vcx_qbuf_write(s, &cq->buf, off, zero, sizeof(zero));
    }
    if (r == MEMTX_OK) {
        r = vcx_qbuf_write(s, &cq->buf, off + size - VCX_CQE_SIZE, cqe, VCX_CQE_SIZE - 1);
    }
    if (r == MEMTX_OK) {
        smp_wmb();
        r = vcx_qbuf_write(s, &cq->buf, off + size - 1, cqe + VCX_CQE_OP_OWN_BYTE, 1);
    }
    return r;
}

/*
 * A CQE was written to an armed CQ: its event now, or once the count or the period
 * (see the header) is reached.
 */
static void vcx_cq_moderate(VcxState *s, VcxCq *cq)
{
    int64_t now, end;

    if (!cq->cq_period && !cq->cq_max_count) {
        vcx_cq_notify(s, cq);
        return;
    }
    cq->mod_count++;
    if (cq->cq_max_count && cq->mod_count >= cq->cq_max_count) {
        trace_vcx_cq_moderation(cq->cqn, "count reached", cq->mod_count);
        vcx_cq_notify(s, cq);
        return;
    }
    if (!cq->cq_period || timer_pending(cq->mod_timer)) {
        return;
    }
    now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    if (cq->period_mode == VCX_CQ_PERIOD_MODE_UPON_CQE) {
        cq->mod_start_ns = now;
    }
    end = cq->mod_start_ns + (int64_t)cq->cq_period * SCALE_US;
    if (end <= now) {
        trace_vcx_cq_moderation(cq->cqn, "period over", cq->mod_count);
        vcx_cq_notify(s, cq);
        return;
    }
    timer_mod(cq->mod_timer, end);
}

bool vcx_cq_post(VcxState *s, VcxCq *cq, uint8_t *cqe, bool solicited)
{
    uint32_t nent = 1u << cq->log_size;
    uint8_t opcode = vcx_cqe_opcode(cqe);
    bool error = opcode == VCX_CQE_REQ_ERR || opcode == VCX_CQE_RESP_ERR;
    uint32_t ci;

    if (cq->status != VCX_CQC_STATUS_OK) {
        trace_vcx_dev_err_cqe_dropped(cq->cqn, opcode, "CQ in error");
        return false;
    }
    if (vcx_fw_dead(s)) {
        trace_vcx_dev_err_cqe_dropped(cq->cqn, opcode, "firmware dead");
        return false;
    }
    /*
     * The consumer counter only moves forward, so the copy last read is a lower bound:
     * the doorbell record is read again only when that copy says the CQ is full (the
     * poller keeps writing that cache line; an HCA does not fetch it per CQE either).
     */
    if (((cq->prod - cq->cons) & VCX_CQ_COUNTER_MASK) >= nent) {
        if (vcx_dbr_read(s, cq->dbr_addr, &ci) != MEMTX_OK) {
            qemu_log_mask(LOG_GUEST_ERROR, "vcx: CQ 0x%x doorbell record at 0x%" PRIx64
                          " not readable: CQ goes to error\n", cq->cqn, cq->dbr_addr);
            trace_vcx_err_cq(cq->cqn, "doorbell record not readable");
            vcx_cq_error(s, cq, VCX_CQC_STATUS_WRITE_FAIL,
                         VCX_CQ_ERR_SYND_ACCESS_VIOLATION);
            return false;
        }
        cq->cons = ci & VCX_CQ_COUNTER_MASK;
    }
    if (((cq->prod - cq->cons) & VCX_CQ_COUNTER_MASK) >= nent && !cq->oi) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: CQ 0x%x overrun (producer 0x%x consumer "
                      "0x%x, %u entries): CQ goes to error\n", cq->cqn, cq->prod,
                      cq->cons, nent);
        trace_vcx_err_cq(cq->cqn, "overrun");
        vcx_cq_error(s, cq, VCX_CQC_STATUS_OVERFLOW, VCX_CQ_ERR_SYND_OVERRUN);
        return false;
    }
    if (vcx_cq_write_cqe(s, cq, cqe, solicited) != MEMTX_OK) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: CQ 0x%x entry %u not writable: CQ goes to "
                      "error\n", cq->cqn, cq->prod & (nent - 1));
        trace_vcx_err_cq(cq->cqn, "CQE not writable");
        vcx_cq_error(s, cq, VCX_CQC_STATUS_WRITE_FAIL, VCX_CQ_ERR_SYND_ACCESS_VIOLATION);
        return false;
    }
    trace_vcx_cqe(cq->cqn, cq->prod, opcode, vcx_get(cqe, VCX_CQE_QPN),
                  vcx_get(cqe, VCX_CQE_WQE_COUNTER), vcx_get(cqe, VCX_CQE_SYNDROME));
    cq->prod = (cq->prod + 1) & VCX_CQ_COUNTER_MASK;
    if (solicited) {
        cq->last_solicit = cq->prod;
    }
    if (cq->st == VCX_CQ_STATE_ARMED) {
        vcx_cq_moderate(s, cq);
    } else if (cq->st == VCX_CQ_STATE_SOLICITED_ARMED && (solicited || error)) {
        vcx_cq_notify(s, cq);
    }
    return true;
}

/* The period's timer: the event is due; the executor posts it (vcx_cq_mod_run). */
static void vcx_cq_mod_cb(void *opaque)
{
    VcxCq *cq = opaque;
    VcxObjects *o = cq->s->objs;

    if (!cq->mod_due) {
        cq->mod_due = true;
        QTAILQ_INSERT_TAIL(&o->modq, cq, mod_link);
    }
    qemu_bh_schedule(o->bh);
}

void vcx_cq_mod_run(VcxState *s)
{
    VcxObjects *o = s->objs;
    VcxCq *cq;

    /* at most one pass over the CQs: each leaves the queue */
    while ((cq = QTAILQ_FIRST(&o->modq))) {
        QTAILQ_REMOVE(&o->modq, cq, mod_link);
        cq->mod_due = false;
        if (cq->st == VCX_CQ_STATE_ARMED && cq->status == VCX_CQC_STATUS_OK &&
            cq->mod_count) {
            trace_vcx_cq_moderation(cq->cqn, "period ended", cq->mod_count);
            vcx_cq_notify(s, cq);
        }
    }
}

/* UAR offset 0x20: arm word (high dword) and CQN (low dword). */
void vcx_cq_doorbell(VcxState *s, uint32_t uar, uint64_t value)
{
    uint32_t arm = value >> 32;
    uint32_t cqn = (uint32_t)value & VCX_CQ_COUNTER_MASK;
    uint32_t cmd = (arm >> 24) & 0xf;
    VcxCq *cq = vcx_cq_get(s, cqn);

    if (!cq) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: CQ doorbell on UAR %u for CQ 0x%x, which "
                      "does not exist\n", uar, cqn);
        trace_vcx_err_cq_doorbell(uar, cqn, "no such CQ");
        return;
    }
    if (cq->uar_page != uar) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: CQ doorbell for CQ 0x%x on UAR %u, but the "
                      "CQ uses UAR %u: ignored\n", cqn, uar, cq->uar_page);
        trace_vcx_err_cq_doorbell(uar, cqn, "wrong UAR");
        return;
    }
    if (cmd != VCX_CQ_DB_CMD_NOTIFY && cmd != VCX_CQ_DB_CMD_NOTIFY_SOLICITED) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: CQ 0x%x doorbell cmd %u unknown: ignored\n",
                      cqn, cmd);
        trace_vcx_err_cq_doorbell(uar, cqn, "unknown arm command");
        return;
    }
    cq->arm_sn = (arm >> 28) & 3;
    cq->cons = arm & VCX_CQ_COUNTER_MASK;
    cq->st = cmd == VCX_CQ_DB_CMD_NOTIFY ? VCX_CQ_STATE_ARMED
                                         : VCX_CQ_STATE_SOLICITED_ARMED;
    trace_vcx_cq_arm(cqn, cq->arm_sn, cmd, cq->cons, cq->prod);
    if (cq->status == VCX_CQC_STATUS_OK && cmd == VCX_CQ_DB_CMD_NOTIFY &&
        cq->prod != cq->cons) {
        vcx_cq_notify(s, cq);
    }
}
