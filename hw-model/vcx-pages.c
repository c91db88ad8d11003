/*
 * vcx: firmware pages (QUERY_PAGES, MANAGE_PAGES, page request events).
 *
 * Firmware asks the driver for host memory in three stages: boot pages before INIT_HCA
 * can start, init pages that INIT_HCA needs, and regular pages at run time. The device's
 * demand per stage comes from the boot-pages / init-pages / regular-pages properties,
 * plus any run-time request made through the "page-request" property, which also sends a
 * page request EQE (type 0x0B) so the driver gives (or, if negative, takes back) pages.
 *
 * QUERY_PAGES answers what is still missing to reach a stage: boot, boot + init, or boot
 * + init + regular (+ run-time requests); a negative answer asks the driver to take pages
 * back. Pages are not tagged with a stage: the held count fills boot, then init, then
 * regular, which is all the monitor reports. Every address is held at most once;
 * MANAGE_PAGES give refuses misaligned and duplicate pages (the whole command,
 * atomically). While the HCA is initialized, take returns only pages beyond the device's
 * demand; once torn down (or before INIT_HCA) every page can be taken back.
 *
 * The device never touches the pages: it only keeps their addresses, as bookkeeping for
 * the driver contract.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qapi/error.h"
#include "vcx-cmd.h"
#include "trace.h"

enum {
    SYND_FUNCTION_ID = 1,
    SYND_EMBEDDED_CPU,
    SYND_NUM_ENTRIES,
    SYND_PAS_MISALIGNED,
    SYND_PAS_DUPLICATE,
    SYND_PAGES_LIMIT,
    SYND_ALLOC_FAIL_ENTRIES,
};

void vcx_pages_init(VcxState *s)
{
    s->pages.held = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
}

void vcx_pages_reset(VcxState *s)
{
    g_hash_table_remove_all(s->pages.held);
    s->pages.runtime_request = 0;
}

void vcx_pages_free(VcxState *s)
{
    g_hash_table_destroy(s->pages.held);
}

uint32_t vcx_pages_held(VcxState *s)
{
    return g_hash_table_size(s->pages.held);
}

/* Pages the device wants in total once it runs (boot + init + regular + run-time). */
static int64_t vcx_pages_demand(VcxState *s)
{
    return (int64_t)s->params.boot_pages + s->params.init_pages +
           s->params.regular_pages + s->pages.runtime_request;
}

bool vcx_pages_cover_init(VcxState *s)
{
    return vcx_pages_held(s) >= (uint64_t)s->params.boot_pages + s->params.init_pages;
}

int32_t vcx_pages_outstanding(VcxState *s)
{
    return vcx_pages_demand(s) - vcx_pages_held(s);
}

void vcx_pages_by_stage(VcxState *s, uint32_t *boot, uint32_t *init, uint32_t *regular)
{
    uint32_t held = vcx_pages_held(s);

    *boot = MIN(held, s->params.boot_pages);
    held -= *boot;
    *init = MIN(held, s->params.init_pages);
    *regular = held - *init;
}

/* The page commands address this function only. */
static uint8_t vcx_pages_check_function(VcxCmd *cmd)
{
    if (vcx_get(cmd->in, VCX_QUERY_PAGES_IN_FUNCTION_ID)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_FUNCTION_ID,
                            "function_id %u: no other functions",
                            vcx_get(cmd->in, VCX_QUERY_PAGES_IN_FUNCTION_ID));
    }
    if (vcx_get(cmd->in, VCX_QUERY_PAGES_IN_EMBEDDED_CPU)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_EMBEDDED_CPU,
                            "embedded_cpu_function set: no embedded CPU");
    }
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_query_pages(VcxState *s, VcxCmd *cmd)
{
    int64_t want;
    uint8_t status = vcx_pages_check_function(cmd);

    if (status) {
        return status;
    }
    switch (cmd->op_mod) {
    case VCX_QUERY_PAGES_OP_MOD_BOOT:
        want = s->params.boot_pages;
        break;
    case VCX_QUERY_PAGES_OP_MOD_INIT:
        want = (int64_t)s->params.boot_pages + s->params.init_pages;
        break;
    default:
        want = vcx_pages_demand(s);
        break;
    }
    want -= vcx_pages_held(s);
    /* Boot and init stages never ask for pages back; only the run-time stage does. */
    if (cmd->op_mod != VCX_QUERY_PAGES_OP_MOD_REGULAR && want < 0) {
        want = 0;
    }
    vcx_set(cmd->out, VCX_QUERY_PAGES_OUT_FUNCTION_ID, 0);
    vcx_set(cmd->out, VCX_QUERY_PAGES_OUT_NUM_PAGES, (uint32_t)(int32_t)want);
    trace_vcx_pages_query(cmd->op_mod, (int32_t)want);
    return VCX_CMD_STAT_OK;
}

static uint8_t vcx_pages_give(VcxState *s, VcxCmd *cmd, uint32_t n)
{
    const uint8_t *pas = vcx_cptr(cmd->in, VCX_MANAGE_PAGES_IN_PAS);
    g_autoptr(GHashTable) batch = g_hash_table_new(g_int64_hash, g_int64_equal);
    g_autofree uint64_t *addrs = g_new(uint64_t, n);

    if (vcx_pages_held(s) + (uint64_t)n > VCX_MAX_PAGES) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_EXCEED_LIM, SYND_PAGES_LIMIT,
                            "%u pages given, %u held, at most %u", n, vcx_pages_held(s),
                            VCX_MAX_PAGES);
    }
    for (uint32_t i = 0; i < n; i++) {
        addrs[i] = vcx_get64(pas + i * VCX_PAS_SIZE, VCX_FLD(0, 64));
        if (addrs[i] & (VCX_PAGE_SIZE - 1)) {
            return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_PAS_MISALIGNED,
                                "page %u at 0x%" PRIx64 " not 4 KiB aligned", i,
                                addrs[i]);
        }
        if (g_hash_table_contains(s->pages.held, &addrs[i]) ||
            !g_hash_table_add(batch, &addrs[i])) {
            return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_PAS_DUPLICATE,
                                "page %u at 0x%" PRIx64 " given twice", i, addrs[i]);
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        g_hash_table_add(s->pages.held, g_memdup2(&addrs[i], sizeof(addrs[i])));
    }
    trace_vcx_pages_give(n, vcx_pages_held(s));
    return VCX_CMD_STAT_OK;
}

static uint8_t vcx_pages_take(VcxState *s, VcxCmd *cmd, uint32_t n)
{
    uint8_t *pas = vcx_ptr(cmd->out, VCX_MANAGE_PAGES_OUT_PAS);
    uint32_t room = (cmd->out_len - VCX_MANAGE_PAGES_OUT_LEN) / VCX_PAS_SIZE;
    uint32_t spare = vcx_pages_held(s);
    uint32_t taken = 0;
    GHashTableIter it;
    gpointer key;

    if (s->hca_state == VCX_HCA_INITIALIZED) {
        int32_t surplus = -vcx_pages_outstanding(s);

        spare = surplus > 0 ? surplus : 0;
    }
    if (n > room) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_OUTPUT_LEN, SYND_NUM_ENTRIES,
                            "%u pages asked for, output holds %u", n, room);
    }
    n = MIN(n, spare);
    g_hash_table_iter_init(&it, s->pages.held);
    while (taken < n && g_hash_table_iter_next(&it, &key, NULL)) {
        vcx_set64(pas + taken * VCX_PAS_SIZE, VCX_FLD(0, 64), *(uint64_t *)key);
        g_hash_table_iter_remove(&it);
        taken++;
    }
    vcx_set(cmd->out, VCX_MANAGE_PAGES_OUT_NUM_ENTRIES, taken);
    trace_vcx_pages_take(taken, vcx_pages_held(s));
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_manage_pages(VcxState *s, VcxCmd *cmd)
{
    uint32_t n = vcx_get(cmd->in, VCX_MANAGE_PAGES_IN_NUM_ENTRIES);
    uint8_t status = vcx_pages_check_function(cmd);

    if (status) {
        return status;
    }
    switch (cmd->op_mod) {
    case VCX_MANAGE_PAGES_OP_MOD_GIVE:
        if (n == 0 || n > (cmd->in_len - VCX_MANAGE_PAGES_IN_LEN) / VCX_PAS_SIZE) {
            return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_INPUT_LEN, SYND_NUM_ENTRIES,
                                "%u pages announced, input length %u", n, cmd->in_len);
        }
        return vcx_pages_give(s, cmd, n);
    case VCX_MANAGE_PAGES_OP_MOD_TAKE:
        return vcx_pages_take(s, cmd, n);
    default:
        /* The driver could not allocate what was asked: firmware stops asking. */
        if (n) {
            return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_ALLOC_FAIL_ENTRIES,
                                "allocation failure notice carries %u entries", n);
        }
        if (vcx_pages_outstanding(s) > 0) {
            s->pages.runtime_request -= vcx_pages_outstanding(s);
        }
        trace_vcx_pages_alloc_fail(vcx_pages_held(s));
        return VCX_CMD_STAT_OK;
    }
}

/* Run-time page request, from the monitor: adjust the demand and tell the driver. */
bool vcx_pages_request(VcxState *s, int32_t npages, Error **errp)
{
    uint8_t data[8] = { 0 };

    if (s->hca_state != VCX_HCA_INITIALIZED) {
        error_setg(errp, "vcx: page requests need an initialized HCA (it is %s)",
                   vcx_hca_state_name(s->hca_state));
        return false;
    }
    if (npages == 0 || (npages > 0 && vcx_pages_demand(s) + npages > VCX_MAX_PAGES) ||
        (npages < 0 && vcx_pages_demand(s) + npages < 0)) {
        error_setg(errp, "vcx: page request of %d pages out of range", npages);
        return false;
    }
    s->pages.runtime_request += npages;
    /* ec_function 0, function_id 0, num_pages */
    vcx_be32_store(data + 4, (uint32_t)npages);
    trace_vcx_pages_request(npages, vcx_pages_outstanding(s));
    if (!vcx_eq_post_event(s, VCX_EVENT_TYPE_PAGE_REQUEST, 0, data, sizeof(data))) {
        trace_vcx_event_unsubscribed(VCX_EVENT_TYPE_PAGE_REQUEST);
    }
    return true;
}
