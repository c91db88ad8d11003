/*
 * vcx: event queues (PRM "Event Queue"): CREATE_EQ, DESTROY_EQ, QUERY_EQ, the EQE writer,
 * MSI-X delivery and the EQ doorbells on UAR pages.
 *
 * An EQ is 2^log_eq_size 64-byte EQEs in guest memory, described by a PAS list of pages
 * of 2^(12 + log_page_size) bytes, starting page_offset 64ths of a page into the first
 * (64 bytes each with 4 KiB pages), as every queue's page_offset counts.
 * The device writes EQE number (producer counter mod size) with owner bit (producer
 * counter >> log_eq_size) & 1, so the driver, which initialises owner bits to 1, sees a
 * new entry when the owner bit equals its consumer counter's pass parity.
 *
 * Interrupts: an armed EQ raises its MSI-X vector once on the next EQE and is then fired
 * (disarmed) until the driver writes its consumer counter to the UAR's arm doorbell
 * (offset 0x40). Arming while EQEs are pending past the consumer counter fires at once.
 * The no-arm doorbell (0x48) only updates the consumer counter. An EQE that would
 * overwrite an entry the driver has not consumed is dropped (unless the EQ ignores
 * overruns) and logged as a guest error.
 *
 * Events are posted to the lowest-numbered EQ subscribed to their type.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/cutils.h"
#include "qemu/log.h"
#include "hw/pci/msix.h"
#include "vcx-cmd.h"
#include "trace.h"

#define VCX_EQ_COUNTER_MASK 0x00ffffffu

enum {
    SYND_LOG_EQ_SIZE = 1,
    SYND_UAR_PAGE,
    SYND_INTR,
    SYND_LOG_PAGE_SIZE,
    SYND_PAS_SHORT,
    SYND_PAS_MISALIGNED,
    SYND_EQ_LIMIT,
    SYND_EQN_RANGE,
    SYND_EQN_FREE,
    SYND_EVENT_TYPES,
    SYND_ST,
    SYND_MSIX_DISABLED,
};

static VcxEq *vcx_eq_get(VcxState *s, uint32_t eqn)
{
    return eqn < VCX_MAX_EQS && s->eqs[eqn].valid ? &s->eqs[eqn] : NULL;
}

static void vcx_eq_free(VcxState *s, uint32_t eqn)
{
    VcxEq *eq = &s->eqs[eqn];

    g_free(eq->pas);
    memset(eq, 0, sizeof(*eq));
    s->num_eqs--;
}

void vcx_eq_reset(VcxState *s)
{
    for (uint32_t eqn = 0; eqn < VCX_MAX_EQS; eqn++) {
        if (s->eqs[eqn].valid) {
            vcx_eq_free(s, eqn);
        }
    }
}

bool vcx_eq_uar_in_use(VcxState *s, uint32_t uar)
{
    for (uint32_t eqn = 0; eqn < VCX_MAX_EQS; eqn++) {
        if (s->eqs[eqn].valid && s->eqs[eqn].uar_page == uar) {
            return true;
        }
    }
    return false;
}

static VcxEq *vcx_eq_subscriber(VcxState *s, uint8_t type, uint32_t *eqn)
{
    for (uint32_t n = 0; n < VCX_MAX_EQS; n++) {
        if (s->eqs[n].valid && (s->eqs[n].event_bitmask & (1ull << type))) {
            *eqn = n;
            return &s->eqs[n];
        }
    }
    return NULL;
}

bool vcx_eq_subscribed(VcxState *s, uint8_t event_type)
{
    uint32_t eqn;

    return vcx_eq_subscriber(s, event_type, &eqn) != NULL;
}

static uint32_t vcx_eq_pending(VcxEq *eq)
{
    return (eq->prod - eq->cons) & VCX_EQ_COUNTER_MASK;
}

static void vcx_eq_interrupt(VcxState *s, uint32_t eqn, VcxEq *eq)
{
    if (eq->state == VCX_EQ_STATE_FIRED) {
        return;
    }
    if (eq->state == VCX_EQ_STATE_ARMED) {
        eq->state = VCX_EQ_STATE_FIRED;
    }
    trace_vcx_eq_msix(eqn, eq->intr);
    msix_notify(vcx_pci(s), eq->intr);
}

/* Write one EQE (type, sub_type, data at byte 0x20) at the producer position. */
static bool vcx_eq_write(VcxState *s, uint32_t eqn, VcxEq *eq, uint8_t type,
                         uint8_t sub_type, const uint8_t *data, size_t len)
{
    uint32_t nent = 1u << eq->log_size;
    uint32_t index = eq->prod & (nent - 1);
    uint32_t page_shift = VCX_PAGE_SHIFT + eq->log_page_size;
    uint64_t off = ((uint64_t)eq->page_offset << (page_shift - 6)) +
                   (uint64_t)index * VCX_EQE_SIZE;
    dma_addr_t addr = eq->pas[off >> page_shift] + (off & ((1ull << page_shift) - 1));
    uint8_t eqe[VCX_EQE_SIZE] = { 0 };
    MemTxResult r;

    if (eq->status != VCX_EQC_STATUS_OK) {
        trace_vcx_dev_err_eq_dropped(eqn, type, "EQ in error");
        return false;
    }
    if (vcx_fw_dead(s)) {
        trace_vcx_dev_err_eq_dropped(eqn, type, "firmware dead");
        return false;
    }
    if (vcx_eq_pending(eq) >= nent && !eq->oi) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: EQ %u overrun (%u EQEs not consumed): "
                      "event type 0x%x dropped\n", eqn, vcx_eq_pending(eq), type);
        trace_vcx_err_eq_dropped(eqn, type, "overrun");
        return false;
    }
    vcx_set(eqe, VCX_EQE_TYPE, type);
    vcx_set(eqe, VCX_EQE_SUB_TYPE, sub_type);
    memcpy(vcx_ptr(eqe, VCX_EQE_DATA), data, MIN(len, VCX_EQE_DATA.width / 8));
    vcx_set(eqe, VCX_EQE_OWNER, (eq->prod >> eq->log_size) & 1);
    /*
     * The owner byte (the EQE's last) goes out after the rest, as for CQEs: a driver
     * polling the EQ on another CPU reads the body only once it sees that byte.
     */
    r = pci_dma_write(vcx_pci(s), addr, eqe, sizeof(eqe) - 1);
    if (r == MEMTX_OK) {
        smp_wmb();
        r = pci_dma_write(vcx_pci(s), addr + sizeof(eqe) - 1, eqe + sizeof(eqe) - 1, 1);
    }
    if (r != MEMTX_OK) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: EQ %u entry %u at 0x%" PRIx64 " not "
                      "writable: EQ goes to error\n", eqn, index, (uint64_t)addr);
        trace_vcx_err_eq_dropped(eqn, type, "write failure");
        eq->status = VCX_EQC_STATUS_EQ_WRITE_FAILURE;
        return false;
    }
    trace_vcx_eqe(eqn, type, sub_type, index, eq->prod);
    eq->prod = (eq->prod + 1) & VCX_EQ_COUNTER_MASK;
    vcx_eq_interrupt(s, eqn, eq);
    return true;
}

/* Completion events go to the EQ a CQ names (c_eqn), not to a subscriber. */
bool vcx_eq_post_to(VcxState *s, uint32_t eqn, uint8_t type, uint8_t sub_type,
                    const uint8_t *data, size_t len)
{
    VcxEq *eq = vcx_eq_get(s, eqn);

    if (!eq) {
        trace_vcx_dev_err_eq_dropped(eqn, type, "no such EQ");
        return false;
    }
    return vcx_eq_write(s, eqn, eq, type, sub_type, data, len);
}

bool vcx_eq_post_event(VcxState *s, uint8_t type, uint8_t sub_type, const uint8_t *data,
                       size_t len)
{
    uint32_t eqn;
    VcxEq *eq = vcx_eq_subscriber(s, type, &eqn);

    if (!eq) {
        return false;
    }
    return vcx_eq_write(s, eqn, eq, type, sub_type, data, len);
}

/* UAR offsets 0x40 (update consumer counter and arm) and 0x48 (update only). */
void vcx_eq_doorbell(VcxState *s, uint32_t uar, uint32_t offset, uint32_t value)
{
    uint32_t eqn = value >> VCX_UAR_EQ_DB_EQN_SHIFT;
    uint32_t ci = value & VCX_UAR_EQ_DB_CI_MASK;
    bool arm = offset == VCX_UAR_EQ_DOORBELL_ARM;
    VcxEq *eq = vcx_eq_get(s, eqn);

    if (!eq) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: EQ doorbell on UAR %u for EQ %u, which does "
                      "not exist\n", uar, eqn);
        trace_vcx_err_eq_doorbell(uar, eqn, "no such EQ");
        return;
    }
    if (eq->uar_page != uar) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: EQ doorbell for EQ %u on UAR %u, but the EQ "
                      "uses UAR %u: ignored\n", eqn, uar, eq->uar_page);
        trace_vcx_err_eq_doorbell(uar, eqn, "wrong UAR");
        return;
    }
    if (((eq->prod - ci) & VCX_EQ_COUNTER_MASK) > (1u << eq->log_size)) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: EQ %u consumer counter 0x%x beyond producer "
                      "0x%x\n", eqn, ci, eq->prod);
        trace_vcx_err_eq_doorbell(uar, eqn, "consumer beyond producer");
    }
    eq->cons = ci;
    trace_vcx_eq_doorbell(eqn, ci, arm);
    if (arm && eq->state != VCX_EQ_STATE_ALWAYS_ARMED) {
        eq->state = VCX_EQ_STATE_ARMED;
        if (vcx_eq_pending(eq)) {
            vcx_eq_interrupt(s, eqn, eq);
        }
    }
}

uint8_t vcx_cmd_create_eq(VcxState *s, VcxCmd *cmd)
{
    const uint8_t *eqc = vcx_cptr(cmd->in, VCX_CREATE_EQ_IN_EQC);
    const uint8_t *mask = vcx_cptr(cmd->in, VCX_CREATE_EQ_IN_EVENT_BITMASK);
    const uint8_t *pas = vcx_cptr(cmd->in, VCX_CREATE_EQ_IN_PAS);
    uint32_t log_size = vcx_get(eqc, VCX_EQC_LOG_EQ_SIZE);
    uint32_t log_page = vcx_get(eqc, VCX_EQC_LOG_PAGE_SIZE);
    uint32_t page_offset = vcx_get(eqc, VCX_EQC_PAGE_OFFSET);
    uint32_t uar = vcx_get(eqc, VCX_EQC_UAR_PAGE);
    uint32_t intr = vcx_get(eqc, VCX_EQC_INTR);
    uint32_t st = vcx_get(eqc, VCX_EQC_ST);
    uint64_t bytes, npas, eqn;
    VcxEq *eq;

    if (log_size > VCX_LOG_MAX_EQ_SZ) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_LOG_EQ_SIZE,
                            "log_eq_size %u > log_max_eq_sz %u", log_size,
                            VCX_LOG_MAX_EQ_SZ);
    }
    if (!vcx_uar_allocated(s, uar)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_UAR_PAGE,
                            "uar_page %u not allocated", uar);
    }
    if (intr >= s->params.msix_vectors) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_INTR,
                            "intr %u beyond the %u MSI-X vectors", intr,
                            s->params.msix_vectors);
    }
    if (!msix_enabled(vcx_pci(s))) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_MSIX_DISABLED,
                            "intr %u: MSI-X is not enabled", intr);
    }
    if (log_page > VCX_MAX_LOG_PAGE_SIZE) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_LOG_PAGE_SIZE,
                            "log_page_size %u > %u", log_page, VCX_MAX_LOG_PAGE_SIZE);
    }
    if (st != 0 && st != VCX_EQ_STATE_ARMED && st != VCX_EQ_STATE_ALWAYS_ARMED) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_ST,
                            "st 0x%x not a creation state", st);
    }
    /* Event types >= 64 do not exist on this device. */
    if (!buffer_is_zero(mask + 8, 24)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_EVENT_TYPES,
                            "event_bitmask subscribes event types >= 64");
    }
    bytes = ((uint64_t)page_offset << (VCX_PAGE_SHIFT + log_page - 6)) +
            ((uint64_t)VCX_EQE_SIZE << log_size);
    npas = DIV_ROUND_UP(bytes, 1ull << (VCX_PAGE_SHIFT + log_page));
    if (cmd->in_len < VCX_CREATE_EQ_IN_LEN + npas * VCX_PAS_SIZE) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_INPUT_LEN, SYND_PAS_SHORT,
                            "%" PRIu64 " PAS entries needed, input length %u", npas,
                            cmd->in_len);
    }
    for (uint64_t i = 0; i < npas; i++) {
        uint64_t a = vcx_get64(pas + i * VCX_PAS_SIZE, VCX_FLD(0, 64));

        if (a & ((1ull << (VCX_PAGE_SHIFT + log_page)) - 1)) {
            return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_PAS_MISALIGNED,
                                "PAS entry %" PRIu64 " 0x%" PRIx64 " not aligned to the "
                                "page size", i, a);
        }
    }
    for (eqn = 0; eqn < VCX_MAX_EQS && s->eqs[eqn].valid; eqn++) {
        /* find the lowest free EQ number */
    }
    if (eqn == VCX_MAX_EQS) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_EXCEED_LIM, SYND_EQ_LIMIT,
                            "all %u EQs in use", VCX_MAX_EQS);
    }

    eq = &s->eqs[eqn];
    *eq = (VcxEq) {
        .valid = true,
        .log_size = log_size,
        .log_page_size = log_page,
        .page_offset = page_offset,
        .state = st ? st : VCX_EQ_STATE_FIRED,
        .status = VCX_EQC_STATUS_OK,
        .oi = vcx_get(eqc, VCX_EQC_OI),
        .ec = vcx_get(eqc, VCX_EQC_EC),
        .intr = intr,
        .uar_page = uar,
        .event_bitmask = vcx_get64(mask, VCX_FLD(0, 64)),
        .npas = npas,
        .pas = g_new(uint64_t, npas),
    };
    for (uint64_t i = 0; i < npas; i++) {
        eq->pas[i] = vcx_get64(pas + i * VCX_PAS_SIZE, VCX_FLD(0, 64));
    }
    s->num_eqs++;
    vcx_set(cmd->out, VCX_CREATE_EQ_OUT_EQN, eqn);
    trace_vcx_eq_create(eqn, log_size, intr, uar, eq->event_bitmask);
    return VCX_CMD_STAT_OK;
}

static VcxEq *vcx_eq_lookup_cmd(VcxState *s, VcxCmd *cmd, uint32_t eqn, uint8_t *status)
{
    VcxEq *eq = vcx_eq_get(s, eqn);

    if (eqn >= VCX_MAX_EQS) {
        *status = vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_EQN_RANGE,
                               "eq_number %u >= %u", eqn, VCX_MAX_EQS);
    } else if (!eq) {
        *status = vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_EQN_FREE,
                               "EQ %u does not exist", eqn);
    }
    return eq;
}

uint8_t vcx_cmd_destroy_eq(VcxState *s, VcxCmd *cmd)
{
    uint32_t eqn = vcx_get(cmd->in, VCX_DESTROY_EQ_IN_EQN);
    uint8_t status = VCX_CMD_STAT_OK;

    if (!vcx_eq_lookup_cmd(s, cmd, eqn, &status)) {
        return status;
    }
    vcx_eq_free(s, eqn);
    trace_vcx_eq_destroy(eqn);
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_query_eq(VcxState *s, VcxCmd *cmd)
{
    uint32_t eqn = vcx_get(cmd->in, VCX_QUERY_EQ_IN_EQN);
    uint8_t *eqc = vcx_ptr(cmd->out, VCX_QUERY_EQ_OUT_EQC);
    uint8_t *pas = vcx_ptr(cmd->out, VCX_QUERY_EQ_OUT_PAS);
    uint8_t status = VCX_CMD_STAT_OK;
    VcxEq *eq = vcx_eq_lookup_cmd(s, cmd, eqn, &status);
    uint32_t room;

    if (!eq) {
        return status;
    }
    vcx_set(eqc, VCX_EQC_STATUS, eq->status);
    vcx_set(eqc, VCX_EQC_EC, eq->ec);
    vcx_set(eqc, VCX_EQC_OI, eq->oi);
    vcx_set(eqc, VCX_EQC_ST, eq->state);
    vcx_set(eqc, VCX_EQC_PAGE_OFFSET, eq->page_offset);
    vcx_set(eqc, VCX_EQC_LOG_EQ_SIZE, eq->log_size);
    vcx_set(eqc, VCX_EQC_UAR_PAGE, eq->uar_page);
    vcx_set(eqc, VCX_EQC_INTR, eq->intr);
    vcx_set(eqc, VCX_EQC_LOG_PAGE_SIZE, eq->log_page_size);
    vcx_set(eqc, VCX_EQC_CONSUMER_COUNTER, eq->cons);
    vcx_set(eqc, VCX_EQC_PRODUCER_COUNTER, eq->prod);
    vcx_set64(cmd->out, VCX_QUERY_EQ_OUT_EVENT_BITMASK, eq->event_bitmask);
    /* The PAS list follows as far as the output has room for it. */
    room = (cmd->out_len - VCX_QUERY_EQ_OUT_LEN) / VCX_PAS_SIZE;
    for (uint32_t i = 0; i < MIN(room, eq->npas); i++) {
        vcx_set64(pas + i * VCX_PAS_SIZE, VCX_FLD(0, 64), eq->pas[i]);
    }
    return VCX_CMD_STAT_OK;
}
