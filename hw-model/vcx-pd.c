/*
 * vcx: protection domains (PRM "ALLOC_PD", "DEALLOC_PD").
 *
 * A PD is a number; MKEYs, QPs and SRQs name one and the device checks that a QP only
 * uses memory keys of its own PD. DEALLOC_PD of a PD still named by an object is refused
 * with BAD_RES_STATE.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "vcx-obj.h"
#include "trace.h"

enum {
    SYND_PD_LIMIT = 1,
    SYND_PD_NONE,
    SYND_PD_IN_USE,
};

uint8_t vcx_cmd_alloc_pd(VcxState *s, VcxCmd *cmd)
{
    VcxPd *pd = g_new0(VcxPd, 1);

    if (!vcx_obj_alloc(&s->objs->pds, pd, &pd->pdn)) {
        g_free(pd);
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_EXCEED_LIM, SYND_PD_LIMIT,
                            "all %u PDs in use", s->objs->pds.size - 1);
    }
    vcx_set(cmd->out, VCX_ALLOC_PD_OUT_PD, pd->pdn);
    trace_vcx_pd_alloc(pd->pdn);
    return VCX_CMD_STAT_OK;
}

void vcx_pd_free(VcxState *s, VcxPd *pd)
{
    vcx_obj_remove(&s->objs->pds, pd->pdn);
    g_free(pd);
}

uint8_t vcx_cmd_dealloc_pd(VcxState *s, VcxCmd *cmd)
{
    uint32_t pdn = vcx_get(cmd->in, VCX_DEALLOC_PD_IN_PD);
    VcxPd *pd = vcx_pd_get(s, pdn);

    if (!pd) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_PD_NONE,
                            "PD 0x%x not allocated", pdn);
    }
    if (pd->refs) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_PD_IN_USE,
                            "PD 0x%x still used by %u objects", pdn, pd->refs);
    }
    trace_vcx_pd_dealloc(pdn);
    vcx_pd_free(s, pd);
    return VCX_CMD_STAT_OK;
}
