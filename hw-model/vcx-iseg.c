/*
 * vcx: initialization segment and health buffer (BAR0 0x0000-0x1fff).
 *
 * Layout from the ConnectX PRM, "Initialization Segment" and "Health Buffer"; constants
 * in include/vcx/prm-iseg.h. All registers are 32-bit big-endian. The decode is a table:
 * each defined dword has a name, a read handler and an optional write handler; anything
 * else is an undefined offset, which reads 0, ignores writes and logs a guest error.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "vcx.h"
#include "trace.h"

typedef struct VcxIsegReg {
    uint32_t offset;
    const char *name;
    uint32_t (*read)(VcxState *s, uint32_t offset);
    void (*write)(VcxState *s, uint32_t offset, uint32_t value);
} VcxIsegReg;

static uint32_t iseg_read_fw_rev(VcxState *s, uint32_t offset)
{
    return (uint32_t)s->params.fw_minor << 16 | s->params.fw_major;
}

static uint32_t iseg_read_cmdif_rev(VcxState *s, uint32_t offset)
{
    return (uint32_t)VCX_ISEG_CMDIF_REV << 16 | s->params.fw_subminor;
}

static uint32_t iseg_read_cmdq_addr_h(VcxState *s, uint32_t offset)
{
    return s->iseg.cmdq_addr >> 32;
}

static void iseg_write_cmdq_addr_h(VcxState *s, uint32_t offset, uint32_t value)
{
    s->iseg.cmdq_addr = (uint64_t)value << 32 | (uint32_t)s->iseg.cmdq_addr;
}

static uint32_t iseg_read_cmdq_addr_l(VcxState *s, uint32_t offset)
{
    return ((uint32_t)s->iseg.cmdq_addr & VCX_ISEG_CMDQ_ADDR_L_MASK) |
           s->iseg.nic_interface << VCX_ISEG_NIC_IF_SHIFT |
           s->params.log_cmdq_size << VCX_ISEG_LOG_CMDQ_SIZE_SHIFT |
           s->params.log_cmdq_stride;
}

/*
 * The low address word carries the nic_interface mode; size and stride are the device's
 * and read-only. Writing the low word is what makes the address take effect, as the
 * driver writes the high word first.
 */
static void iseg_write_cmdq_addr_l(VcxState *s, uint32_t offset, uint32_t value)
{
    uint32_t nic_if = (value >> VCX_ISEG_NIC_IF_SHIFT) & VCX_ISEG_NIC_IF_MASK;

    s->iseg.cmdq_addr = (s->iseg.cmdq_addr & ~0xffffffffULL) |
                        (value & VCX_ISEG_CMDQ_ADDR_L_MASK);
    s->iseg.nic_interface = nic_if;
    trace_vcx_cmdq_addr_set(s->iseg.cmdq_addr, nic_if);
}

static uint32_t iseg_read_zero(VcxState *s, uint32_t offset)
{
    return 0;
}

/* Bit n rings command queue entry n; the commands run before the write returns. */
static void iseg_write_cmd_dbell(VcxState *s, uint32_t offset, uint32_t value)
{
    vcx_cmdq_doorbell(s, value);
}

static uint32_t iseg_read_initializing(VcxState *s, uint32_t offset)
{
    /* nic_interface_supported: full driver and disabled modes only. */
    uint32_t nic_if_supported = (1u << VCX_NIC_IF_FULL_DRIVER) |
                                (1u << VCX_NIC_IF_DISABLED);

    return (s->iseg.initializing ? VCX_ISEG_INITIALIZING_BIT : 0) |
           (nic_if_supported & 0x7) << 24;
}

static uint32_t iseg_read_health(VcxState *s, uint32_t offset)
{
    switch (offset - VCX_ISEG_HEALTH) {
    case VCX_HEALTH_FW_VER:
        return (uint32_t)s->params.fw_major << 24 | (uint32_t)s->params.fw_minor << 8;
    case VCX_HEALTH_HW_ID:
        return s->params.cx5_id ? VCX_CX5_PCI_DEVICE_ID : VCX_PCI_DEVICE_ID;
    case VCX_HEALTH_RFR_SEVERITY:
        /*
         * A fatal syndrome is reported as valid, severity 2 (critical), with
         * "reset for recovery" set: firmware that stopped answering needs a reset, and
         * a ConnectX driver treats rfr together with a syndrome as fatal.
         */
        return s->iseg.health_syndrome ?
               (VCX_HEALTH_RFR_BIT | 1u << 27 | 2u << 24) : 0;
    case VCX_HEALTH_IRISC_SYND_EXT:
        return (uint32_t)s->iseg.health_syndrome << 16;
    default:
        return 0;
    }
}

/* The command timeout firmware advertises to drivers (0: the driver's default). */
static uint32_t iseg_read_cmd_exec_to(VcxState *s, uint32_t offset)
{
    return s->params.cmd_exec_to_ms;
}

/*
 * The HCA's free-running internal timer: nanoseconds of QEMU's virtual clock, so it
 * ticks at VCX_TIMER_KHZ (device_frequency_khz) and stops with the VM. CQEs carry it
 * (vcx_cq_write_cqe); drivers read it here for their clock (mlx5_core's PTP clock).
 */
uint64_t vcx_internal_timer(VcxState *s)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

static uint32_t iseg_read_timer(VcxState *s, uint32_t offset)
{
    uint64_t t = vcx_internal_timer(s);

    return offset == VCX_ISEG_INTERNAL_TIMER_H ? t >> 32 : (uint32_t)t;
}

/*
 * The counter must move between two health polls (2 s apart) or the driver reports the
 * device as stuck; it advances every 100 ms of virtual time, and stops with a syndrome,
 * as firmware that has died would.
 */
static uint32_t iseg_read_health_counter(VcxState *s, uint32_t offset)
{
    int64_t now = qemu_clock_get_ms(QEMU_CLOCK_VIRTUAL);
    uint32_t count = (now - s->iseg.health_epoch_ms) / 100;

    if (s->iseg.health_syndrome) {
        count = 0;
    }
    return (uint32_t)s->iseg.health_syndrome << VCX_ISEG_HEALTH_SYND_SHIFT |
           (count & VCX_ISEG_HEALTH_COUNTER_MASK);
}

#define HEALTH_REG(off) \
    { VCX_ISEG_HEALTH + (off), "health" #off, iseg_read_health, NULL }

static const VcxIsegReg vcx_iseg_regs[] = {
    { VCX_ISEG_FW_REV, "fw_rev", iseg_read_fw_rev, NULL },
    { VCX_ISEG_CMDIF_REV_FW_SUB, "cmdif_rev", iseg_read_cmdif_rev, NULL },
    { 0x008, "reserved8", iseg_read_zero, NULL },
    { 0x00c, "reservedc", iseg_read_zero, NULL },
    { VCX_ISEG_CMDQ_ADDR_H, "cmdq_addr_h",
      iseg_read_cmdq_addr_h, iseg_write_cmdq_addr_h },
    { VCX_ISEG_CMDQ_ADDR_L_SZ, "cmdq_addr_l",
      iseg_read_cmdq_addr_l, iseg_write_cmdq_addr_l },
    { VCX_ISEG_CMD_DBELL, "cmd_dbell", iseg_read_zero, iseg_write_cmd_dbell },
    { VCX_ISEG_INITIALIZING, "initializing", iseg_read_initializing, NULL },
    HEALTH_REG(0x00), HEALTH_REG(0x04), HEALTH_REG(0x08), HEALTH_REG(0x0c),
    HEALTH_REG(0x10), HEALTH_REG(0x14), HEALTH_REG(0x18), HEALTH_REG(0x1c),
    HEALTH_REG(0x20), HEALTH_REG(0x24), HEALTH_REG(0x28), HEALTH_REG(0x2c),
    HEALTH_REG(0x30), HEALTH_REG(0x34), HEALTH_REG(0x38), HEALTH_REG(0x3c),
    { VCX_ISEG_CMD_EXEC_TO, "cmd_exec_to", iseg_read_cmd_exec_to, NULL },
    { VCX_ISEG_CMD_Q_INIT_TO, "cmd_q_init_to", iseg_read_zero, NULL },
    { VCX_ISEG_INTERNAL_TIMER_H, "internal_timer_h", iseg_read_timer, NULL },
    { VCX_ISEG_INTERNAL_TIMER_L, "internal_timer_l", iseg_read_timer, NULL },
    { VCX_ISEG_HEALTH_COUNTER, "health_counter", iseg_read_health_counter, NULL },
};

static const VcxIsegReg *vcx_iseg_lookup(uint32_t offset)
{
    for (size_t i = 0; i < ARRAY_SIZE(vcx_iseg_regs); i++) {
        if (vcx_iseg_regs[i].offset == offset) {
            return &vcx_iseg_regs[i];
        }
    }
    return NULL;
}

static uint64_t vcx_iseg_read(void *opaque, hwaddr addr, unsigned size)
{
    VcxState *s = opaque;
    const VcxIsegReg *reg = vcx_iseg_lookup(addr & ~3ULL);
    uint32_t value;

    if (reg && (addr & 3)) {
        /*
         * A narrower read inside a register (mlx5_core reads the health buffer's synd
         * byte with ioread8): the memory core hands it on as a 4-byte read at the
         * unaligned address and keeps the first bytes of the big-endian result, so
         * answer with the bytes from addr on: this register's, then the next one's
         * (0 where none is defined).
         */
        const VcxIsegReg *next = vcx_iseg_lookup((addr & ~3ULL) + 4);
        unsigned shift = (addr & 3) * 8;

        value = reg->read(s, addr & ~3ULL) << shift;
        if (next) {
            value |= next->read(s, (addr & ~3ULL) + 4) >> (32 - shift);
        }
        trace_vcx_iseg_read(reg->name, addr, value);
        return value;
    }
    if (!reg) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: read of undefined init segment "
                      "offset 0x%03" HWADDR_PRIx "\n", addr);
        trace_vcx_err_iseg_undefined("read", addr, 0);
        return 0;
    }
    value = reg->read(s, addr);
    trace_vcx_iseg_read(reg->name, addr, value);
    return value;
}

static void vcx_iseg_write(void *opaque, hwaddr addr, uint64_t data, unsigned size)
{
    VcxState *s = opaque;
    const VcxIsegReg *reg = vcx_iseg_lookup(addr);

    if (!reg) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: write of undefined init segment "
                      "offset 0x%03" HWADDR_PRIx " value 0x%08" PRIx64 "\n",
                      addr, data);
        trace_vcx_err_iseg_undefined("write", addr, data);
        return;
    }
    if (!reg->write) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: write to read-only init segment "
                      "register %s value 0x%08" PRIx64 "\n", reg->name, data);
        trace_vcx_err_iseg_read_only(reg->name, addr, data);
        return;
    }
    trace_vcx_iseg_write(reg->name, addr, data);
    reg->write(s, addr, data);
}

/* Registers are big-endian dwords; narrower or wider accesses are split by the core. */
const MemoryRegionOps vcx_iseg_ops = {
    .read = vcx_iseg_read,
    .write = vcx_iseg_write,
    .endianness = DEVICE_BIG_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 8 },
    .impl = { .min_access_size = 4, .max_access_size = 4 },
};

void vcx_iseg_reset(VcxState *s)
{
    s->iseg.cmdq_addr = 0;
    s->iseg.nic_interface = VCX_NIC_IF_FULL_DRIVER;
    s->iseg.initializing = true;
    s->iseg.health_syndrome = 0;
    s->iseg.cmd_stall = 0;
    s->iseg.health_epoch_ms = qemu_clock_get_ms(QEMU_CLOCK_VIRTUAL);
}

void vcx_health_set_syndrome(VcxState *s, uint8_t synd)
{
    trace_vcx_health_set_syndrome(synd);
    s->iseg.health_syndrome = synd;
}
