/*
 * vcx: firmware command execution, shared by the command queue and the command handlers.
 *
 * A command reaches its handler as two flat byte buffers, the whole input (inline bytes
 * and mailbox data joined) and the whole output, so handlers never see the transport. The
 * dispatcher (vcx-cmdq.c) has already checked the opcode, the HCA state the command needs
 * and the minimum input and output lengths from the command table; a handler checks its
 * own fields and either fills the output and returns VCX_CMD_STAT_OK or returns
 * vcx_cmd_fail(), which records the status and syndrome, logs a guest error and traces.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_VCX_VCX_CMD_H
#define HW_VCX_VCX_CMD_H

#include "vcx.h"

typedef struct VcxCmd {
    const char *name;
    uint16_t opcode;
    uint16_t op_mod;
    const uint8_t *in;
    uint32_t in_len;
    uint8_t *out;
    uint32_t out_len;
    uint32_t syndrome;          /* set with a failing status */
} VcxCmd;

typedef uint8_t (*VcxCmdHandler)(VcxState *s, VcxCmd *cmd);

typedef struct VcxCmdDesc {
    uint16_t opcode;
    const char *name;
    uint32_t min_in_len;
    uint32_t min_out_len;
    uint32_t op_mods;           /* bit n set: op_mod n accepted (BAD_PARAM otherwise) */
    VcxHcaState min_state;      /* BAD_SYS_STATE outside [min_state, max_state] */
    VcxHcaState max_state;
    VcxCmdHandler handler;
} VcxCmdDesc;

/*
 * Syndromes: the high half is the opcode, the low half names the failed check, so a
 * driver log line identifies the exact reason. Checks made by the dispatcher for every
 * opcode use the 0xff00 range.
 */
#define VCX_SYND(op, n)                 ((uint32_t)(op) << 16 | (n))
#define VCX_SYND_BAD_OPCODE             0xff01
#define VCX_SYND_IN_TOO_SHORT           0xff02
#define VCX_SYND_OUT_TOO_SHORT          0xff03
#define VCX_SYND_HCA_DISABLED           0xff04
#define VCX_SYND_HCA_NOT_INITIALIZED    0xff05
#define VCX_SYND_HCA_ENABLED            0xff06
#define VCX_SYND_HCA_INITIALIZED        0xff07
#define VCX_SYND_UID_NOT_ZERO           0xff08
#define VCX_SYND_BAD_OP_MOD             0xff09

uint8_t vcx_cmd_fail(VcxCmd *cmd, uint8_t status, uint16_t check, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);

/* Command table lookup (vcx-cmdq.c). */
const VcxCmdDesc *vcx_cmd_lookup(uint16_t opcode);
/* RDMA object command table (vcx-obj.c), consulted by vcx_cmd_lookup. */
const VcxCmdDesc *vcx_obj_cmd_lookup(uint16_t opcode);
/* Ethernet NIC command table (nic/vcx-nic.c), consulted after it. */
const VcxCmdDesc *vcx_nic_cmd_lookup(uint16_t opcode);

/* vcx-cmd-hca.c */
uint8_t vcx_cmd_enable_hca(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_disable_hca(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_query_issi(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_set_issi(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_query_hca_cap(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_set_hca_cap(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_init_hca(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_teardown_hca(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_query_adapter(VcxState *s, VcxCmd *cmd);

/* vcx-pages.c */
uint8_t vcx_cmd_query_pages(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_manage_pages(VcxState *s, VcxCmd *cmd);
bool vcx_pages_cover_init(VcxState *s);

/* vcx-port.c */
uint8_t vcx_cmd_access_reg(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_query_vport_state(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_query_hca_vport_pkey(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_query_nic_vport_context(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_modify_nic_vport_context(VcxState *s, VcxCmd *cmd);

/* nic/vcx-nic-vport.c: the vport's address lists and promiscuous modes */
uint8_t vcx_nic_lists_check(VcxState *s, VcxCmd *cmd, const uint8_t *ctx, uint32_t fs,
                            uint32_t list_at);
void vcx_nic_lists_apply(VcxState *s, VcxCmd *cmd, const uint8_t *ctx, uint32_t fs,
                         uint32_t list_at);
void vcx_nic_lists_query(VcxState *s, VcxCmd *cmd, uint8_t *ctx, uint32_t type,
                         uint32_t list_at);

/* nic/vcx-nic-pcnt.c: ACCESS_REG PPCNT, the physical port's counters */
uint8_t vcx_reg_ppcnt_read(VcxState *s, VcxCmd *cmd, const uint8_t *in, uint8_t *out);
uint8_t vcx_reg_ppcnt_write(VcxState *s, VcxCmd *cmd, const uint8_t *in, uint8_t *out);

/* vcx-roce.c */
uint8_t vcx_cmd_query_roce_address(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_set_roce_address(VcxState *s, VcxCmd *cmd);

/* vcx-uar.c */
uint8_t vcx_cmd_alloc_uar(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_dealloc_uar(VcxState *s, VcxCmd *cmd);

/* vcx-eq.c */
uint8_t vcx_cmd_create_eq(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_destroy_eq(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_query_eq(VcxState *s, VcxCmd *cmd);

#endif /* HW_VCX_VCX_CMD_H */
