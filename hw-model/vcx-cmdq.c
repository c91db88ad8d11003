/*
 * vcx: command queue (PRM "Command Interface").
 *
 * The driver places the queue in host memory (init segment 0x10/0x14): 2^log_cmdq_size
 * entries of 2^log_cmdq_stride bytes, each a 64-byte command queue entry. It fills an
 * entry, sets the ownership bit and writes (1 << index) to the command doorbell (0x18).
 * Inputs longer than the 16 inline bytes continue in a chain of 576-byte mailbox blocks,
 * outputs likewise; every block carries its number in the chain and the entry's token.
 *
 * Each rung entry goes through one pipeline, written so that execution can later move to
 * a worker thread without changing its stages:
 *
 *   fetch entry
 *     -> validate (entry, lengths, signatures, mailbox chains; gather the input)
 *     -> dispatch (command table: HCA state, lengths, op_mod; then the handler)
 *     -> write output (inline bytes and output mailboxes)
 *     -> complete (delivery status, ownership bit cleared, and a command completion EQE
 *        when the driver has an EQ subscribed to command events)
 *
 * A transport fault gives a non-zero delivery status (entry byte 0x3F bits 7:1) and the
 * command is not executed; a command fault gives a command status in output byte 0 with a
 * syndrome in output dword 1. Both log a guest error and a trace event. All guest memory
 * is accessed with pci_dma_read/pci_dma_write and every MemTxResult is checked; every
 * walk is bounded by VCX_CMD_MAX_LEN.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "vcx-cmd.h"
#include "trace.h"

#define VCX_MBOX_TAIL_SIZE (VCX_MBOX_SIZE - VCX_MBOX_DATA_SIZE)

/* One command in flight: the entry as fetched, the gathered input and the output. */
typedef struct VcxCmdqSlot {
    uint32_t index;
    dma_addr_t addr;
    uint8_t ent[VCX_CMDQ_ENT_SIZE];
    uint8_t token;
    bool event_mode;            /* completion by EQE: a command EQ existed at fetch */
    uint32_t in_len;
    uint32_t out_len;
    uint8_t *in;
    uint8_t *out;
    uint32_t n_out_blocks;
    dma_addr_t *out_blocks;     /* output mailbox addresses, in chain order */
    uint8_t *out_tails;         /* their control parts (bytes 0x200..0x23f) as read */
} VcxCmdqSlot;

/*
 * Command table
 */

/* op_mods: bit n set if op_mod n is accepted */
#define OPM(n)          (1u << (n))
#define CMD(op, fn, in, out, opm, lo, hi) \
    { VCX_CMD_OP_##op, #op, (in), (out), (opm), VCX_HCA_##lo, VCX_HCA_##hi, fn }

/*
 * One entry per opcode: handler, minimum input and output lengths (BAD_INPUT_LEN /
 * BAD_OUTPUT_LEN below them), accepted op_mods (BAD_PARAM otherwise) and the HCA states
 * in which the command is accepted (BAD_SYS_STATE otherwise).
 */
static const VcxCmdDesc vcx_cmd_table[] = {
    CMD(QUERY_HCA_CAP, vcx_cmd_query_hca_cap,
        VCX_QUERY_HCA_CAP_IN_LEN, VCX_QUERY_HCA_CAP_OUT_LEN,
        OPM(0) | OPM(1) | OPM(2) | OPM(3) | OPM(6) | OPM(7) | OPM(8) | OPM(9) |
        OPM(14) | OPM(15), ENABLED, INITIALIZED),
    CMD(QUERY_ADAPTER, vcx_cmd_query_adapter,
        VCX_QUERY_ADAPTER_IN_LEN, VCX_QUERY_ADAPTER_OUT_LEN,
        OPM(0), ENABLED, INITIALIZED),
    CMD(INIT_HCA, vcx_cmd_init_hca,
        VCX_INIT_HCA_IN_MIN_LEN, VCX_INIT_HCA_OUT_LEN,
        OPM(0), ENABLED, ENABLED),
    CMD(TEARDOWN_HCA, vcx_cmd_teardown_hca,
        VCX_TEARDOWN_HCA_IN_LEN, VCX_TEARDOWN_HCA_OUT_LEN,
        OPM(0), INITIALIZED, INITIALIZED),
    CMD(ENABLE_HCA, vcx_cmd_enable_hca,
        VCX_ENABLE_HCA_IN_LEN, VCX_ENABLE_HCA_OUT_LEN,
        OPM(0), DISABLED, DISABLED),
    CMD(DISABLE_HCA, vcx_cmd_disable_hca,
        VCX_DISABLE_HCA_IN_LEN, VCX_DISABLE_HCA_OUT_LEN,
        OPM(0), ENABLED, ENABLED),
    CMD(QUERY_PAGES, vcx_cmd_query_pages,
        VCX_QUERY_PAGES_IN_LEN, VCX_QUERY_PAGES_OUT_LEN,
        OPM(1) | OPM(2) | OPM(3), ENABLED, INITIALIZED),
    CMD(MANAGE_PAGES, vcx_cmd_manage_pages,
        VCX_MANAGE_PAGES_IN_LEN, VCX_MANAGE_PAGES_OUT_LEN,
        OPM(0) | OPM(1) | OPM(2), ENABLED, INITIALIZED),
    CMD(SET_HCA_CAP, vcx_cmd_set_hca_cap,
        VCX_SET_HCA_CAP_IN_LEN, VCX_SET_HCA_CAP_OUT_LEN,
        OPM(0) | OPM(6) | OPM(8), ENABLED, ENABLED),
    CMD(QUERY_ISSI, vcx_cmd_query_issi,
        VCX_QUERY_ISSI_IN_LEN, VCX_QUERY_ISSI_OUT_LEN,
        OPM(0), ENABLED, INITIALIZED),
    CMD(SET_ISSI, vcx_cmd_set_issi,
        VCX_SET_ISSI_IN_LEN, VCX_SET_ISSI_OUT_LEN,
        OPM(0), ENABLED, ENABLED),
    CMD(CREATE_EQ, vcx_cmd_create_eq,
        VCX_CREATE_EQ_IN_LEN, VCX_CREATE_EQ_OUT_LEN,
        OPM(0), INITIALIZED, INITIALIZED),
    CMD(DESTROY_EQ, vcx_cmd_destroy_eq,
        VCX_DESTROY_EQ_IN_LEN, VCX_DESTROY_EQ_OUT_LEN,
        OPM(0), INITIALIZED, INITIALIZED),
    CMD(QUERY_EQ, vcx_cmd_query_eq,
        VCX_QUERY_EQ_IN_LEN, VCX_QUERY_EQ_OUT_LEN,
        OPM(0), INITIALIZED, INITIALIZED),
    CMD(QUERY_VPORT_STATE, vcx_cmd_query_vport_state,
        VCX_QUERY_VPORT_STATE_IN_LEN, VCX_QUERY_VPORT_STATE_OUT_LEN,
        OPM(0), INITIALIZED, INITIALIZED),
    CMD(QUERY_HCA_VPORT_PKEY, vcx_cmd_query_hca_vport_pkey,
        VCX_QUERY_HCA_VPORT_PKEY_IN_LEN, VCX_QUERY_HCA_VPORT_PKEY_OUT_LEN,
        OPM(0), INITIALIZED, INITIALIZED),
    CMD(QUERY_NIC_VPORT_CONTEXT, vcx_cmd_query_nic_vport_context,
        VCX_QUERY_NIC_VPORT_CTX_IN_LEN, VCX_QUERY_NIC_VPORT_CTX_OUT_LEN,
        OPM(0), INITIALIZED, INITIALIZED),
    CMD(MODIFY_NIC_VPORT_CONTEXT, vcx_cmd_modify_nic_vport_context,
        VCX_MODIFY_NIC_VPORT_CTX_IN_LEN, VCX_MODIFY_NIC_VPORT_CTX_OUT_LEN,
        OPM(0), INITIALIZED, INITIALIZED),
    CMD(QUERY_ROCE_ADDRESS, vcx_cmd_query_roce_address,
        VCX_QUERY_ROCE_ADDRESS_IN_LEN, VCX_QUERY_ROCE_ADDRESS_OUT_LEN,
        OPM(0), INITIALIZED, INITIALIZED),
    CMD(SET_ROCE_ADDRESS, vcx_cmd_set_roce_address,
        VCX_SET_ROCE_ADDRESS_IN_LEN, VCX_SET_ROCE_ADDRESS_OUT_LEN,
        OPM(0), INITIALIZED, INITIALIZED),
    CMD(ALLOC_UAR, vcx_cmd_alloc_uar,
        VCX_ALLOC_UAR_IN_LEN, VCX_ALLOC_UAR_OUT_LEN,
        OPM(0), INITIALIZED, INITIALIZED),
    CMD(DEALLOC_UAR, vcx_cmd_dealloc_uar,
        VCX_DEALLOC_UAR_IN_LEN, VCX_DEALLOC_UAR_OUT_LEN,
        OPM(0), INITIALIZED, INITIALIZED),
    CMD(ACCESS_REG, vcx_cmd_access_reg,
        VCX_ACCESS_REG_HDR_LEN, VCX_ACCESS_REG_HDR_LEN,
        OPM(0) | OPM(1), ENABLED, INITIALIZED),
};

#undef CMD
#undef OPM

const VcxCmdDesc *vcx_cmd_lookup(uint16_t opcode)
{
    const VcxCmdDesc *desc;

    for (size_t i = 0; i < ARRAY_SIZE(vcx_cmd_table); i++) {
        if (vcx_cmd_table[i].opcode == opcode) {
            return &vcx_cmd_table[i];
        }
    }
    desc = vcx_obj_cmd_lookup(opcode);      /* RDMA object commands (vcx-obj.c) */
    return desc ? desc : vcx_nic_cmd_lookup(opcode);   /* NIC (nic/vcx-nic.c) */
}

static const char *vcx_cmd_status_name(uint8_t status)
{
    switch (status) {
    case VCX_CMD_STAT_OK:               return "OK";
    case VCX_CMD_STAT_INT_ERR:          return "INT_ERR";
    case VCX_CMD_STAT_BAD_OP:           return "BAD_OP";
    case VCX_CMD_STAT_BAD_PARAM:        return "BAD_PARAM";
    case VCX_CMD_STAT_BAD_SYS_STATE:    return "BAD_SYS_STATE";
    case VCX_CMD_STAT_BAD_RES:          return "BAD_RES";
    case VCX_CMD_STAT_RES_BUSY:         return "RES_BUSY";
    case VCX_CMD_STAT_EXCEED_LIM:       return "EXCEED_LIM";
    case VCX_CMD_STAT_BAD_RES_STATE:    return "BAD_RES_STATE";
    case VCX_CMD_STAT_BAD_INDEX:        return "BAD_INDEX";
    case VCX_CMD_STAT_NO_RES:           return "NO_RES";
    case VCX_CMD_STAT_BAD_INPUT_LEN:    return "BAD_INPUT_LEN";
    case VCX_CMD_STAT_BAD_OUTPUT_LEN:   return "BAD_OUTPUT_LEN";
    default:                            return "?";
    }
}

uint8_t vcx_cmd_fail(VcxCmd *cmd, uint8_t status, uint16_t check, const char *fmt, ...)
{
    g_autofree char *msg = NULL;
    va_list ap;

    va_start(ap, fmt);
    msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);

    cmd->syndrome = VCX_SYND(cmd->opcode, check);
    qemu_log_mask(LOG_GUEST_ERROR, "vcx: %s (0x%x) op_mod 0x%x: %s (0x%x), "
                  "syndrome 0x%08x: %s\n", cmd->name, cmd->opcode, cmd->op_mod,
                  vcx_cmd_status_name(status), status, cmd->syndrome, msg);
    trace_vcx_err_cmd_status(cmd->name, cmd->opcode, cmd->op_mod, status,
                             cmd->syndrome, msg);
    return status;
}

/* Dispatcher checks common to every opcode, then the handler. */
static uint8_t vcx_cmd_dispatch(VcxState *s, VcxCmd *cmd)
{
    const VcxCmdDesc *desc = vcx_cmd_lookup(cmd->opcode);

    if (!desc) {
        cmd->name = "UNKNOWN";
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_OP, VCX_SYND_BAD_OPCODE,
                            "opcode not supported");
    }
    cmd->name = desc->name;
    trace_vcx_cmd_exec(desc->name, cmd->opcode, cmd->op_mod, cmd->in_len, cmd->out_len);

    if (s->hca_state < desc->min_state) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_SYS_STATE,
                            desc->min_state == VCX_HCA_ENABLED ?
                            VCX_SYND_HCA_DISABLED : VCX_SYND_HCA_NOT_INITIALIZED,
                            "HCA is %s", vcx_hca_state_name(s->hca_state));
    }
    if (s->hca_state > desc->max_state) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_SYS_STATE,
                            s->hca_state == VCX_HCA_ENABLED ?
                            VCX_SYND_HCA_ENABLED : VCX_SYND_HCA_INITIALIZED,
                            "HCA is already %s", vcx_hca_state_name(s->hca_state));
    }
    if (cmd->in_len < desc->min_in_len) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_INPUT_LEN, VCX_SYND_IN_TOO_SHORT,
                            "input length %u < %u", cmd->in_len, desc->min_in_len);
    }
    if (cmd->out_len < desc->min_out_len) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_OUTPUT_LEN, VCX_SYND_OUT_TOO_SHORT,
                            "output length %u < %u", cmd->out_len, desc->min_out_len);
    }
    if (cmd->op_mod >= 32 || !(desc->op_mods & (1u << cmd->op_mod))) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, VCX_SYND_BAD_OP_MOD,
                            "op_mod 0x%x not supported", cmd->op_mod);
    }
    /* No user contexts (log_max_uctx = 0): every object belongs to uid 0. */
    if (vcx_get(cmd->in, VCX_CMD_IN_UID)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, VCX_SYND_UID_NOT_ZERO,
                            "uid 0x%x, user contexts not supported",
                            vcx_get(cmd->in, VCX_CMD_IN_UID));
    }
    return desc->handler(s, cmd);
}

static void vcx_cmd_execute(VcxState *s, VcxCmdqSlot *slot)
{
    VcxCmd cmd = {
        .opcode = vcx_get(slot->in, VCX_CMD_IN_OPCODE),
        .op_mod = vcx_get(slot->in, VCX_CMD_IN_OP_MOD),
        .in = slot->in,
        .in_len = slot->in_len,
        .out = slot->out,
        .out_len = slot->out_len,
    };
    uint8_t status = vcx_cmd_dispatch(s, &cmd);

    if (status != VCX_CMD_STAT_OK) {
        /* A failed command returns only its status and syndrome. */
        memset(slot->out, 0, slot->out_len);
        vcx_set(slot->out, VCX_CMD_OUT_SYNDROME, cmd.syndrome);
    }
    vcx_set(slot->out, VCX_CMD_OUT_STATUS, status);
    s->cmds_executed++;
    trace_vcx_cmd_done(slot->index, cmd.name, cmd.opcode, status, cmd.syndrome);
}

/*
 * Transport: entry, mailboxes, delivery status
 */

static uint8_t vcx_cmdq_deliv_fail(VcxCmdqSlot *slot, uint8_t deliv, const char *fmt, ...)
    G_GNUC_PRINTF(3, 4);

static uint8_t vcx_cmdq_deliv_fail(VcxCmdqSlot *slot, uint8_t deliv, const char *fmt, ...)
{
    g_autofree char *msg = NULL;
    va_list ap;

    va_start(ap, fmt);
    msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);

    qemu_log_mask(LOG_GUEST_ERROR, "vcx: command entry %u: delivery status 0x%x: %s\n",
                  slot->index, deliv, msg);
    trace_vcx_err_cmdq_delivery(slot->index, deliv, msg);
    return deliv;
}

static uint32_t vcx_mbox_blocks(uint32_t len)
{
    return len > VCX_CMDQ_INLINE_SIZE ?
           DIV_ROUND_UP(len - VCX_CMDQ_INLINE_SIZE, VCX_MBOX_DATA_SIZE) : 0;
}

/*
 * Walk a mailbox chain of nblocks blocks from first. Input chains are read whole and
 * their data copied into slot->in after the inline bytes; output chains only have their
 * control part read, and their addresses and control parts remembered for the output.
 * Block numbers and tokens are always checked, signatures
 * only when the driver enabled cmdif_checksum. A loop in the chain shows as a wrong block
 * number; the walk never goes beyond nblocks.
 */
static uint8_t vcx_mbox_walk(VcxState *s, VcxCmdqSlot *slot, dma_addr_t first,
                             uint32_t nblocks, bool output)
{
    uint8_t ptr_err = output ? VCX_CMD_DELIV_OUT_PTR_ALIGN_ERR :
                               VCX_CMD_DELIV_IN_PTR_ALIGN_ERR;
    const char *dir = output ? "output" : "input";
    bool csum = vcx_cmdif_checksum_enabled(s);
    g_autofree uint8_t *block = g_malloc(VCX_MBOX_SIZE);
    dma_addr_t addr = first;
    uint64_t align = VCX_CMDQ_ENT_PTR_ALIGN;

    for (uint32_t i = 0; i < nblocks; i++) {
        uint32_t off = output ? VCX_MBOX_DATA_SIZE : 0;
        uint8_t *tail = block + VCX_MBOX_DATA_SIZE;

        if (!addr) {
            return vcx_cmdq_deliv_fail(slot, ptr_err, "%s mailbox chain ends at block %u "
                                       "of %u", dir, i, nblocks);
        }
        if (addr & (align - 1)) {
            return vcx_cmdq_deliv_fail(slot, ptr_err, "%s mailbox block %u at 0x%" PRIx64
                                       " not aligned to %" PRIu64, dir, i,
                                       (uint64_t)addr, align);
        }
        if (pci_dma_read(PCI_DEVICE(s), addr + off, block + off, VCX_MBOX_SIZE - off)
            != MEMTX_OK) {
            return vcx_cmdq_deliv_fail(slot, ptr_err, "%s mailbox block %u at 0x%" PRIx64
                                       " not readable", dir, i, (uint64_t)addr);
        }
        if (vcx_get(block, VCX_MBOX_BLOCK_NUM) != i) {
            return vcx_cmdq_deliv_fail(slot, VCX_CMD_DELIV_BAD_BLOCK_NUM,
                                       "%s mailbox block %u has block number %u", dir, i,
                                       vcx_get(block, VCX_MBOX_BLOCK_NUM));
        }
        if (vcx_get(block, VCX_MBOX_TOKEN) != slot->token) {
            return vcx_cmdq_deliv_fail(slot, VCX_CMD_DELIV_TOKEN_ERR,
                                       "%s mailbox block %u token 0x%02x, entry token "
                                       "0x%02x", dir, i, vcx_get(block, VCX_MBOX_TOKEN),
                                       slot->token);
        }
        if (output) {
            slot->out_blocks[i] = addr;
            memcpy(slot->out_tails + i * VCX_MBOX_TAIL_SIZE, tail, VCX_MBOX_TAIL_SIZE);
        } else {
            uint32_t pos = VCX_CMDQ_INLINE_SIZE + i * VCX_MBOX_DATA_SIZE;

            if (csum &&
                (vcx_xor8(block + VCX_MBOX_CTRL_SIG_START, VCX_MBOX_CTRL_SIG_LEN) !=
                 VCX_SIG_GOOD || vcx_xor8(block, VCX_MBOX_SIZE) != VCX_SIG_GOOD)) {
                return vcx_cmdq_deliv_fail(slot, VCX_CMD_DELIV_SIGNATURE_ERR,
                                           "input mailbox block %u: bad signature", i);
            }
            memcpy(slot->in + pos, block, MIN(VCX_MBOX_DATA_SIZE, slot->in_len - pos));
        }
        addr = vcx_get64(block, VCX_MBOX_NEXT_PTR);
        align = VCX_MBOX_ALIGN;
    }
    return VCX_CMD_DELIV_OK;
}

/* Check the entry and both chains, and gather the input. Nothing is executed yet. */
static uint8_t vcx_cmdq_validate(VcxState *s, VcxCmdqSlot *slot)
{
    const uint8_t *ent = slot->ent;
    uint8_t type = vcx_get(ent, VCX_CMDQ_ENT_TYPE);
    uint8_t deliv;

    if (type != VCX_CMDQ_TYPE_PCIE) {
        return vcx_cmdq_deliv_fail(slot, VCX_CMD_DELIV_BAD_DESC,
                                   "entry type 0x%x, expected 0x%x", type,
                                   VCX_CMDQ_TYPE_PCIE);
    }
    if (vcx_cmdif_checksum_enabled(s) &&
        vcx_xor8(ent, VCX_CMDQ_ENT_SIZE) != VCX_SIG_GOOD) {
        return vcx_cmdq_deliv_fail(slot, VCX_CMD_DELIV_SIGNATURE_ERR,
                                   "entry signature 0x%02x does not check",
                                   vcx_get(ent, VCX_CMDQ_ENT_SIGNATURE));
    }

    slot->in_len = vcx_get(ent, VCX_CMDQ_ENT_IN_LEN);
    slot->out_len = vcx_get(ent, VCX_CMDQ_ENT_OUT_LEN);
    /* The header's opcode and op_mod, and the output's status and syndrome, must fit. */
    if (slot->in_len < 8 || slot->in_len > VCX_CMD_MAX_LEN) {
        return vcx_cmdq_deliv_fail(slot, VCX_CMD_DELIV_IN_LENGTH_ERR,
                                   "input length %u not in [8, %u]", slot->in_len,
                                   VCX_CMD_MAX_LEN);
    }
    if (slot->out_len < 8 || slot->out_len > VCX_CMD_MAX_LEN) {
        return vcx_cmdq_deliv_fail(slot, VCX_CMD_DELIV_OUT_LENGTH_ERR,
                                   "output length %u not in [8, %u]", slot->out_len,
                                   VCX_CMD_MAX_LEN);
    }

    slot->in = g_malloc0(MAX(slot->in_len, VCX_CMDQ_INLINE_SIZE));
    memcpy(slot->in, vcx_cptr(ent, VCX_CMDQ_ENT_IN_INLINE), VCX_CMDQ_INLINE_SIZE);
    deliv = vcx_mbox_walk(s, slot, vcx_get64(ent, VCX_CMDQ_ENT_IN_PTR),
                          vcx_mbox_blocks(slot->in_len), false);
    if (deliv != VCX_CMD_DELIV_OK) {
        return deliv;
    }

    slot->n_out_blocks = vcx_mbox_blocks(slot->out_len);
    slot->out_blocks = g_new0(dma_addr_t, slot->n_out_blocks);
    slot->out_tails = g_malloc0((size_t)slot->n_out_blocks * VCX_MBOX_TAIL_SIZE);
    deliv = vcx_mbox_walk(s, slot, vcx_get64(ent, VCX_CMDQ_ENT_OUT_PTR),
                          slot->n_out_blocks, true);
    if (deliv != VCX_CMD_DELIV_OK) {
        return deliv;
    }
    slot->out = g_malloc0(MAX(slot->out_len, VCX_CMDQ_INLINE_SIZE));
    return VCX_CMD_DELIV_OK;
}

/* Output bytes 16.. go to the output mailboxes, token stamped (and signed if enabled). */
static uint8_t vcx_cmdq_write_output(VcxState *s, VcxCmdqSlot *slot)
{
    bool csum = vcx_cmdif_checksum_enabled(s);
    g_autofree uint8_t *block = g_malloc(VCX_MBOX_SIZE);

    for (uint32_t i = 0; i < slot->n_out_blocks; i++) {
        uint32_t pos = VCX_CMDQ_INLINE_SIZE + i * VCX_MBOX_DATA_SIZE;

        memset(block, 0, VCX_MBOX_DATA_SIZE);
        memcpy(block, slot->out + pos, MIN(VCX_MBOX_DATA_SIZE, slot->out_len - pos));
        memcpy(block + VCX_MBOX_DATA_SIZE, slot->out_tails + i * VCX_MBOX_TAIL_SIZE,
               VCX_MBOX_TAIL_SIZE);
        vcx_set(block, VCX_MBOX_TOKEN, slot->token);
        if (csum) {
            vcx_set(block, VCX_MBOX_CTRL_SIGNATURE, 0);
            vcx_set(block, VCX_MBOX_SIGNATURE, 0);
            vcx_set(block, VCX_MBOX_CTRL_SIGNATURE,
                    (uint8_t)~vcx_xor8(block + VCX_MBOX_CTRL_SIG_START,
                                       VCX_MBOX_CTRL_SIG_LEN));
            vcx_set(block, VCX_MBOX_SIGNATURE,
                    (uint8_t)~vcx_xor8(block, VCX_MBOX_SIZE));
        }
        if (pci_dma_write(PCI_DEVICE(s), slot->out_blocks[i], block, VCX_MBOX_SIZE)
            != MEMTX_OK) {
            return vcx_cmdq_deliv_fail(slot, VCX_CMD_DELIV_OUT_PTR_ALIGN_ERR,
                                       "output mailbox block %u at 0x%" PRIx64
                                       " not writable", i, (uint64_t)slot->out_blocks[i]);
        }
    }
    return VCX_CMD_DELIV_OK;
}

/*
 * Hand the entry back: inline output, delivery status and a cleared ownership bit, the
 * status byte written last so a polling driver never sees a half-written entry.
 */
static bool vcx_cmdq_complete(VcxState *s, VcxCmdqSlot *slot, uint8_t deliv)
{
    uint8_t *ent = slot->ent;

    if (deliv == VCX_CMD_DELIV_OK) {
        memcpy(vcx_ptr(ent, VCX_CMDQ_ENT_OUT_INLINE), slot->out, VCX_CMDQ_INLINE_SIZE);
    }
    vcx_set(ent, VCX_CMDQ_ENT_STATUS, deliv);
    vcx_set(ent, VCX_CMDQ_ENT_OWNERSHIP, 0);
    if (vcx_cmdif_checksum_enabled(s)) {
        vcx_set(ent, VCX_CMDQ_ENT_SIGNATURE, 0);
        vcx_set(ent, VCX_CMDQ_ENT_SIGNATURE, (uint8_t)~vcx_xor8(ent, VCX_CMDQ_ENT_SIZE));
    }
    if (pci_dma_write(PCI_DEVICE(s), slot->addr, ent, VCX_CMDQ_ENT_STATUS_OWN_BYTE)
        != MEMTX_OK ||
        pci_dma_write(PCI_DEVICE(s), slot->addr + VCX_CMDQ_ENT_STATUS_OWN_BYTE,
                      ent + VCX_CMDQ_ENT_STATUS_OWN_BYTE, 1) != MEMTX_OK) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: command entry %u at 0x%" PRIx64
                      " not writable, completion lost\n", slot->index,
                      (uint64_t)slot->addr);
        trace_vcx_err_cmdq_entry_dma(slot->index, slot->addr, "write");
        return false;
    }
    trace_vcx_cmdq_complete(slot->index, deliv, slot->event_mode);
    return true;
}

static bool vcx_cmdq_fetch(VcxState *s, VcxCmdqSlot *slot)
{
    slot->addr = s->iseg.cmdq_addr + ((uint64_t)slot->index << s->params.log_cmdq_stride);
    if (pci_dma_read(PCI_DEVICE(s), slot->addr, slot->ent, VCX_CMDQ_ENT_SIZE)
        != MEMTX_OK) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: command entry %u at 0x%" PRIx64
                      " not readable\n", slot->index, (uint64_t)slot->addr);
        trace_vcx_err_cmdq_entry_dma(slot->index, slot->addr, "read");
        return false;
    }
    if (!vcx_get(slot->ent, VCX_CMDQ_ENT_OWNERSHIP)) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: doorbell for command entry %u, which the "
                      "driver owns (ownership bit clear): ignored\n", slot->index);
        trace_vcx_err_cmdq_not_owned(slot->index);
        return false;
    }
    slot->token = vcx_get(slot->ent, VCX_CMDQ_ENT_TOKEN);
    slot->event_mode = vcx_eq_subscribed(s, VCX_EVENT_TYPE_CMD);
    return true;
}

static void vcx_cmdq_slot_free(VcxCmdqSlot *slot)
{
    g_free(slot->in);
    g_free(slot->out);
    g_free(slot->out_blocks);
    g_free(slot->out_tails);
}

/* One entry through the whole pipeline; true if it completed by event. */
static bool vcx_cmdq_process(VcxState *s, uint32_t index)
{
    VcxCmdqSlot slot = { .index = index };
    uint8_t deliv;
    bool event = false;

    if (!vcx_cmdq_fetch(s, &slot)) {
        return false;
    }
    deliv = vcx_cmdq_validate(s, &slot);
    if (deliv == VCX_CMD_DELIV_OK) {
        vcx_cmd_execute(s, &slot);
        deliv = vcx_cmdq_write_output(s, &slot);
    }
    if (vcx_cmdq_complete(s, &slot, deliv)) {
        event = slot.event_mode;
    }
    vcx_cmdq_slot_free(&slot);
    return event;
}

void vcx_cmdq_doorbell(VcxState *s, uint32_t mask)
{
    uint32_t nent = 1u << s->params.log_cmdq_size;
    uint32_t valid = nent >= 32 ? UINT32_MAX : (1u << nent) - 1;
    uint32_t events = 0;

    trace_vcx_cmdq_doorbell(mask);
    if (mask & ~valid) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: command doorbell 0x%08x rings entries "
                      "beyond the queue's %u: ignored for those\n", mask, nent);
        trace_vcx_err_cmdq_doorbell(mask, nent);
        mask &= valid;
    }
    /* Firmware that is still initializing, or has died, does not answer. */
    if (s->iseg.initializing || s->iseg.health_syndrome) {
        trace_vcx_dev_err_cmdq_dropped(mask, s->iseg.initializing,
                                       s->iseg.health_syndrome);
        return;
    }
    for (uint32_t i = 0; i < nent && mask; i++) {
        if (s->reset_pending) {
            break;      /* a reset reached from a command's own DMA: the rest is moot */
        }
        if (mask & (1u << i)) {
            mask &= ~(1u << i);
            if (s->iseg.cmd_stall) {
                /* Fault injection: hung firmware keeps the entry and never answers. */
                s->iseg.cmd_stall--;
                trace_vcx_dev_err_cmd_stalled(i, s->iseg.cmd_stall);
                continue;
            }
            if (vcx_cmdq_process(s, i)) {
                events |= 1u << i;
            }
        }
    }
    if (events) {
        uint8_t data[4];

        vcx_be32_store(data, events);
        vcx_eq_post_event(s, VCX_EVENT_TYPE_CMD, 0, data, sizeof(data));
    }
}
