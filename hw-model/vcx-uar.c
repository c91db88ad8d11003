/*
 * vcx: UARs (user access regions): ALLOC_UAR, DEALLOC_UAR and the doorbell page decode.
 *
 * UAR index n is the 4 KiB page at BAR0 + n * 4 KiB. Indices below VCX_FIRST_UAR_INDEX
 * overlap the init segment and the MSI-X table and PBA, so they are never handed out;
 * ALLOC_UAR returns the lowest free index above them. Doorbell writes to a page that is
 * not allocated are guest errors and are dropped, as are reads (which return 0: doorbell
 * registers are write-only).
 *
 * Offsets decoded on an allocated page: 0x40 and 0x48, the EQ doorbells (vcx-eq.c); the
 * CQ doorbell (0x20) and the send doorbell / BlueFlame registers (0x800..) go to the
 * object layer (vcx_obj_uar_write). DEALLOC_UAR refuses a page an EQ, CQ or QP was
 * created on, as firmware keeps a reference for each.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/bitmap.h"
#include "qemu/log.h"
#include "vcx-cmd.h"
#include "trace.h"

enum {
    SYND_UAR_LIMIT = 1,
    SYND_UAR_RANGE,
    SYND_UAR_FREE,
    SYND_UAR_IN_USE,
    SYND_UAR_IN_USE_CQ,
    SYND_UAR_IN_USE_QP,
};

void vcx_uar_init(VcxState *s)
{
    s->uars = bitmap_new(VCX_NUM_UARS);
}

void vcx_uar_reset(VcxState *s)
{
    bitmap_zero(s->uars, VCX_NUM_UARS);
    s->num_uars = 0;
}

void vcx_uar_free(VcxState *s)
{
    g_free(s->uars);
}

bool vcx_uar_allocated(VcxState *s, uint32_t index)
{
    return index >= VCX_FIRST_UAR_INDEX && index < VCX_NUM_UARS &&
           test_bit(index, s->uars);
}

uint8_t vcx_cmd_alloc_uar(VcxState *s, VcxCmd *cmd)
{
    unsigned long index = find_next_zero_bit(s->uars, VCX_NUM_UARS, VCX_FIRST_UAR_INDEX);

    if (index >= VCX_NUM_UARS) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_EXCEED_LIM, SYND_UAR_LIMIT,
                            "all %u UARs in use", VCX_NUM_UARS - VCX_FIRST_UAR_INDEX);
    }
    set_bit(index, s->uars);
    s->num_uars++;
    vcx_set(cmd->out, VCX_ALLOC_UAR_OUT_UAR, index);
    trace_vcx_uar_alloc(index);
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_dealloc_uar(VcxState *s, VcxCmd *cmd)
{
    uint32_t index = vcx_get(cmd->in, VCX_DEALLOC_UAR_IN_UAR);

    if (index < VCX_FIRST_UAR_INDEX || index >= VCX_NUM_UARS) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_UAR_RANGE,
                            "UAR %u outside [%u, %u)", index, VCX_FIRST_UAR_INDEX,
                            VCX_NUM_UARS);
    }
    if (!test_bit(index, s->uars)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_UAR_FREE,
                            "UAR %u not allocated", index);
    }
    if (vcx_eq_uar_in_use(s, index)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_UAR_IN_USE,
                            "UAR %u still used by an EQ", index);
    }
    /* Firmware keeps a reference for every CQ and QP created on the page. */
    switch (vcx_obj_uar_user(s, index)) {
    case VCX_UAR_USER_CQ:
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_UAR_IN_USE_CQ,
                            "UAR %u still used by a CQ", index);
    case VCX_UAR_USER_QP:
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_UAR_IN_USE_QP,
                            "UAR %u still used by a QP", index);
    default:
        break;
    }
    clear_bit(index, s->uars);
    s->num_uars--;
    trace_vcx_uar_dealloc(index);
    return VCX_CMD_STAT_OK;
}

/* BAR0 from VCX_FIRST_UAR_INDEX * 4 KiB on: one page per UAR index. */
static uint64_t vcx_uar_read(void *opaque, hwaddr addr, unsigned size)
{
    VcxState *s = opaque;
    uint32_t index = VCX_FIRST_UAR_INDEX + addr / VCX_UAR_PAGE_SIZE;
    uint32_t offset = addr % VCX_UAR_PAGE_SIZE;

    trace_vcx_uar_read(index, offset, size);
    if (!vcx_uar_allocated(s, index)) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: read of UAR %u offset 0x%x: UAR not "
                      "allocated\n", index, offset);
        trace_vcx_err_uar_unallocated(index, offset);
    }
    return 0;
}

static void vcx_uar_write(void *opaque, hwaddr addr, uint64_t data, unsigned size)
{
    VcxState *s = opaque;
    uint32_t index = VCX_FIRST_UAR_INDEX + addr / VCX_UAR_PAGE_SIZE;
    uint32_t offset = addr % VCX_UAR_PAGE_SIZE;

    trace_vcx_uar_write(index, offset, data, size);
    if (!vcx_uar_allocated(s, index)) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: write to UAR %u offset 0x%x: UAR not "
                      "allocated\n", index, offset);
        trace_vcx_err_uar_unallocated(index, offset);
        return;
    }
    switch (offset) {
    case VCX_UAR_EQ_DOORBELL_ARM:
    case VCX_UAR_EQ_DOORBELL_NOARM:
        if (size != 4) {
            qemu_log_mask(LOG_GUEST_ERROR, "vcx: UAR %u EQ doorbell written with %u "
                          "bytes, expected 4: ignored\n", index, size);
            trace_vcx_err_uar_access(index, offset, size);
            return;
        }
        vcx_eq_doorbell(s, index, offset, data);
        return;
    default:
        if (vcx_obj_uar_write(s, index, offset, data, size)) {
            return;     /* CQ doorbell, BlueFlame registers (vcx-obj.c) */
        }
        qemu_log_mask(LOG_UNIMP, "vcx: UAR %u offset 0x%x: doorbell not implemented\n",
                      index, offset);
        trace_vcx_err_uar_access(index, offset, size);
        return;
    }
}

const MemoryRegionOps vcx_uar_ops = {
    .read = vcx_uar_read,
    .write = vcx_uar_write,
    .endianness = DEVICE_BIG_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 8 },
    .impl = { .min_access_size = 1, .max_access_size = 8 },
};
