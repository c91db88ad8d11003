/*
 * vcx: memory keys (PRM "CREATE_MKEY", "QUERY_MKEY", "DESTROY_MKEY") and the translation
 * and access checks the transport engine applies to lkeys and rkeys.
 *
 * Access modes: PA (the key covers guest physical addresses directly; length64 covers
 * everything, as the kernel's DMA MR does) and MTT (a list of 2^log_page_size pages; the
 * IOVA start_addr and the first page share their offset within a page, as the PRM
 * requires). KLM keys must be created free with umr_en (memory windows and indirect MRs,
 * below); KSM, per-page access (pg_access), BSFs, umem and keys created bound to a QP are
 * refused with BAD_PARAM. A key created free (umr_en = 1,
 * free = 1) exists but refuses every access until a UMR WQE (vcx_mkey_umr(), run by the
 * requester in vcx-xport.c) loads its translations and clears free; a UMR setting free
 * (local invalidation) or a SEND with invalidate (responder) disables it again.
 *
 * Memory windows are KLM keys created free with umr_en and no translations, as mlx5_ib
 * allocates them. A bind UMR (vcx_mw_bind()) gives the window a range, rights and one KLM
 * entry naming the MR it lies in; remote access through the window checks the window and
 * then the MR at access time (a window never serves as a local key).
 *
 * Indirect MRs are KLM keys too (mlx5_ib's IB_MR_TYPE_SG_GAPS, which it offers with the
 * memory windows' cap imaicl): a fast-registration UMR (vcx_klm_reg(); its mkey_mask
 * names PAGE_SIZE, which a bind never does) loads a list of KLM entries, each byte_count
 * bytes at an address of an MR of the same PD, and [start, start + len) runs through them
 * in order. Each entry's MR is checked again at access time, as a window's is.
 *
 * The key is (mkey_index << 8) | mkey_7_0; a lookup compares both parts.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "hw/pci/pci_device.h"
#include "system/dma.h"
#include "vcx-obj.h"
#include "trace.h"

enum {
    SYND_MKEY_PG_ACCESS = 1,
    SYND_MKEY_UMEM,
    SYND_MKEY_ACCESS_MODE,
    SYND_MKEY_PD,
    SYND_MKEY_QPN,
    SYND_MKEY_BSF,
    SYND_MKEY_FREE_NO_UMR,
    SYND_MKEY_LOG_PAGE_SIZE,
    SYND_MKEY_XLT_SIZE,
    SYND_MKEY_XLT_SHORT,
    SYND_MKEY_MTT_ALIGN,
    SYND_MKEY_LIMIT,
    SYND_MKEY_NONE,
    SYND_MKEY_RANGE,
    SYND_MKEY_KLM,
};

#define VCX_KLM_MAX_OCTWORDS    (1u << VCX_LOG_MAX_KLM_LIST)   /* KLM entries a key holds */

#define VCX_MKEY_MIN_LOG_PAGE   12
#define VCX_MKEY_MAX_LOG_PAGE   30
#define VCX_MTT_FLAG_MASK       0x7ull  /* low bits: per-page access flags, ignored */

static uint64_t vcx_mkey_page_mask(const VcxMkey *mk)
{
    return (1ull << mk->log_page_size) - 1;
}

uint8_t vcx_cmd_create_mkey(VcxState *s, VcxCmd *cmd)
{
    const uint8_t *mkc = cmd->in + VCX_CREATE_MKEY_IN_MKC_AT;
    const uint8_t *xlt = cmd->in + VCX_CREATE_MKEY_IN_MTT_AT;
    uint32_t mode = vcx_get(mkc, VCX_MKC_ACCESS_MODE_4_2) << 2 |
                    vcx_get(mkc, VCX_MKC_ACCESS_MODE_1_0);
    uint32_t pdn = vcx_get(mkc, VCX_MKC_PD);
    uint32_t qpn = vcx_get(mkc, VCX_MKC_QPN);
    uint32_t lps = vcx_get(mkc, VCX_MKC_LOG_PAGE_SIZE);
    uint32_t xlt_size = vcx_get(mkc, VCX_MKC_TRANSLATIONS_OCTWORD_SIZE);
    uint32_t xlt_actual = vcx_get(cmd->in, VCX_CREATE_MKEY_IN_XLT_ACTUAL);
    uint64_t start = vcx_get64(mkc, VCX_MKC_START_ADDR);
    uint64_t len = vcx_get64(mkc, VCX_MKC_LEN);
    bool free = vcx_get(mkc, VCX_MKC_FREE);
    bool umr_en = vcx_get(mkc, VCX_MKC_UMR_EN);
    VcxPd *pd = vcx_pd_get(s, pdn);
    uint64_t npages = 0, nmtt = 0;
    VcxMkey *mk;

    if (vcx_get(cmd->in, VCX_CREATE_MKEY_IN_PG_ACCESS)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_MKEY_PG_ACCESS,
                            "pg_access not supported");
    }
    if (vcx_get(cmd->in, VCX_CREATE_MKEY_IN_UMEM_VALID)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_MKEY_UMEM,
                            "mkey_umem_valid: umem not supported");
    }
    if (mode != VCX_MKC_ACCESS_MODE_PA && mode != VCX_MKC_ACCESS_MODE_MTT &&
        mode != VCX_MKC_ACCESS_MODE_KLM) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_MKEY_ACCESS_MODE,
                            "access_mode %u not supported (PA, MTT and KLM are)", mode);
    }
    if (mode == VCX_MKC_ACCESS_MODE_KLM &&
        (!free || !umr_en || xlt_actual || vcx_get(mkc, VCX_MKC_LENGTH64) ||
         !xlt_size || xlt_size > VCX_KLM_MAX_OCTWORDS)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_MKEY_KLM,
                            "KLM keys (windows, indirect MRs) are created free, umr_en, "
                            "no initial KLMs, no length64, translations_octword_size 1..%u "
                            "(got free %d umr_en %d actual %u size %u)",
                            VCX_KLM_MAX_OCTWORDS, free, umr_en, xlt_actual, xlt_size);
    }
    if (!pd) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_MKEY_PD,
                            "pd 0x%x not allocated", pdn);
    }
    if (qpn != VCX_MKC_QPN_UNBOUND) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_MKEY_QPN,
                            "qpn 0x%x: keys bound to a QP not supported", qpn);
    }
    if (vcx_get(mkc, VCX_MKC_BSF_EN) || vcx_get(mkc, VCX_MKC_BSF_OCTWORD_SIZE)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_MKEY_BSF,
                            "BSF not supported");
    }
    if (free && !umr_en) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_MKEY_FREE_NO_UMR,
                            "free key without umr_en could never be used");
    }
    if (mode == VCX_MKC_ACCESS_MODE_MTT) {
        if (lps < VCX_MKEY_MIN_LOG_PAGE || lps > VCX_MKEY_MAX_LOG_PAGE) {
            return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_MKEY_LOG_PAGE_SIZE,
                                "log_page_size %u outside [%u, %u]", lps,
                                VCX_MKEY_MIN_LOG_PAGE, VCX_MKEY_MAX_LOG_PAGE);
        }
        if (vcx_get(mkc, VCX_MKC_LENGTH64)) {
            return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_MKEY_XLT_SIZE,
                                "length64 needs access_mode PA");
        }
        npages = len ? ((start & ((1ull << lps) - 1)) + len + (1ull << lps) - 1) >> lps
                     : 0;
        if ((uint64_t)xlt_size * 2 > VCX_MAX_MTT || xlt_actual > xlt_size ||
            (!free && (uint64_t)xlt_size * 2 < npages)) {
            return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_MKEY_XLT_SIZE,
                                "translations_octword_size %u (actual %u) for %" PRIu64
                                " pages, at most %u entries", xlt_size, xlt_actual,
                                npages, VCX_MAX_MTT);
        }
        if (!free && (uint64_t)xlt_actual * 2 < npages) {
            return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_MKEY_XLT_SIZE,
                                "translations_octword_actual_size %u for %" PRIu64
                                " pages", xlt_actual, npages);
        }
        if (cmd->in_len < VCX_CREATE_MKEY_IN_LEN + (uint64_t)xlt_actual * 16) {
            return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_INPUT_LEN, SYND_MKEY_XLT_SHORT,
                                "%u translation octwords announced, input length %u",
                                xlt_actual, cmd->in_len);
        }
        nmtt = (uint64_t)xlt_actual * 2;
        for (uint64_t i = 0; i < MIN(nmtt, npages); i++) {
            uint64_t a = vcx_get64(xlt + i * VCX_MTT_SIZE, VCX_FLD(0, 64)) &
                         ~VCX_MTT_FLAG_MASK;

            if (a & ((1ull << lps) - 1)) {
                return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_MKEY_MTT_ALIGN,
                                    "MTT entry %" PRIu64 " 0x%" PRIx64 " not aligned "
                                    "to 2^%u", i, a, lps);
            }
        }
    }

    mk = g_new0(VcxMkey, 1);
    if (!vcx_obj_alloc(&s->objs->mkeys, mk, &mk->index)) {
        g_free(mk);
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_EXCEED_LIM, SYND_MKEY_LIMIT,
                            "all %u MKEYs in use", s->objs->mkeys.size - 1);
    }
    mk->key = vcx_get(mkc, VCX_MKC_MKEY_7_0);
    mk->access_mode = mode;
    mk->free = free;
    mk->umr_en = umr_en;
    mk->lr = vcx_get(mkc, VCX_MKC_LR);
    mk->lw = vcx_get(mkc, VCX_MKC_LW);
    mk->rr = vcx_get(mkc, VCX_MKC_RR);
    mk->rw = vcx_get(mkc, VCX_MKC_RW);
    mk->a = vcx_get(mkc, VCX_MKC_A);
    mk->length64 = vcx_get(mkc, VCX_MKC_LENGTH64);
    mk->en_rinval = vcx_get(mkc, VCX_MKC_EN_RINVAL);
    mk->qpn = qpn;
    mk->pdn = pdn;
    mk->start = start;
    mk->len = len;
    mk->log_page_size = mode == VCX_MKC_ACCESS_MODE_MTT ? lps : 0;
    mk->xlt_octwords = xlt_size;
    mk->nmtt = nmtt;
    mk->mtt = g_new(uint64_t, MAX(nmtt, 1));
    for (uint64_t i = 0; i < nmtt; i++) {
        mk->mtt[i] = vcx_get64(xlt + i * VCX_MTT_SIZE, VCX_FLD(0, 64)) & ~VCX_MTT_FLAG_MASK;
    }
    pd->refs++;
    vcx_set(cmd->out, VCX_CREATE_MKEY_OUT_MKEY_INDEX, mk->index);
    trace_vcx_mkey_create(VCX_MKEY(mk->index, mk->key), mode, pdn, start, len, nmtt);
    return VCX_CMD_STAT_OK;
}

static VcxMkey *vcx_mkey_lookup_cmd(VcxState *s, VcxCmd *cmd, uint32_t index,
                                    uint8_t *status)
{
    VcxMkey *mk = vcx_obj_get(&s->objs->mkeys, index);

    if (!mk) {
        *status = vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_MKEY_NONE,
                               "mkey_index 0x%x does not exist", index);
    }
    return mk;
}

uint8_t vcx_cmd_query_mkey(VcxState *s, VcxCmd *cmd)
{
    uint8_t status = VCX_CMD_STAT_OK;
    VcxMkey *mk = vcx_mkey_lookup_cmd(s, cmd, vcx_get(cmd->in,
                                                      VCX_QUERY_MKEY_IN_MKEY_INDEX),
                                      &status);
    uint8_t *mkc = cmd->out + VCX_QUERY_MKEY_OUT_MKC_AT;

    if (!mk) {
        return status;
    }
    if (vcx_get(cmd->in, VCX_QUERY_MKEY_IN_PG_ACCESS)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_MKEY_PG_ACCESS,
                            "pg_access not supported");
    }
    vcx_set(mkc, VCX_MKC_FREE, mk->free);
    vcx_set(mkc, VCX_MKC_ACCESS_MODE_4_2, mk->access_mode >> 2);
    vcx_set(mkc, VCX_MKC_ACCESS_MODE_1_0, mk->access_mode & 3);
    vcx_set(mkc, VCX_MKC_UMR_EN, mk->umr_en);
    vcx_set(mkc, VCX_MKC_A, mk->a);
    vcx_set(mkc, VCX_MKC_RW, mk->rw);
    vcx_set(mkc, VCX_MKC_RR, mk->rr);
    vcx_set(mkc, VCX_MKC_LW, mk->lw);
    vcx_set(mkc, VCX_MKC_LR, mk->lr);
    vcx_set(mkc, VCX_MKC_QPN, mk->qpn);
    vcx_set(mkc, VCX_MKC_MKEY_7_0, mk->key);
    vcx_set(mkc, VCX_MKC_LENGTH64, mk->length64);
    vcx_set(mkc, VCX_MKC_EN_RINVAL, mk->en_rinval);
    vcx_set(mkc, VCX_MKC_PD, mk->pdn);
    vcx_set64(mkc, VCX_MKC_START_ADDR, mk->start);
    vcx_set64(mkc, VCX_MKC_LEN, mk->len);
    vcx_set(mkc, VCX_MKC_TRANSLATIONS_OCTWORD_SIZE, mk->xlt_octwords);
    vcx_set(mkc, VCX_MKC_LOG_PAGE_SIZE, mk->log_page_size);
    for (uint32_t i = 0; i < MIN(mk->nmtt, 4); i++) {
        vcx_set64(cmd->out + VCX_QUERY_MKEY_OUT_MTT_AT + i * VCX_MTT_SIZE, VCX_FLD(0, 64),
                  mk->mtt[i]);
    }
    return VCX_CMD_STAT_OK;
}

void vcx_mkey_free(VcxState *s, VcxMkey *mk)
{
    VcxPd *pd = vcx_pd_get(s, mk->pdn);

    if (pd) {
        pd->refs--;
    }
    vcx_obj_remove(&s->objs->mkeys, mk->index);
    g_free(mk->mtt);
    g_free(mk->klm);
    g_free(mk);
}

uint8_t vcx_cmd_destroy_mkey(VcxState *s, VcxCmd *cmd)
{
    uint8_t status = VCX_CMD_STAT_OK;
    uint32_t index = vcx_get(cmd->in, VCX_DESTROY_MKEY_IN_MKEY_INDEX);
    VcxMkey *mk = vcx_mkey_lookup_cmd(s, cmd, index, &status);

    if (!mk) {
        return status;
    }
    trace_vcx_mkey_destroy(VCX_MKEY(mk->index, mk->key));
    vcx_mkey_free(s, mk);
    return VCX_CMD_STAT_OK;
}

/*
 * Data path: key checks and translation
 */

/* An entry's key can serve bytes [addr, addr + len) for an indirect MR of pdn. */
static bool vcx_klm_entry_ok(VcxState *s, const VcxKlm *e, uint32_t pdn, uint64_t addr,
                             uint64_t len)
{
    VcxMkey *mr = vcx_mkey_get(s, e->mkey);

    return mr && !mr->free && mr->pdn == pdn && mr->access_mode != VCX_MKC_ACCESS_MODE_KLM &&
           (mr->length64 ||
            (addr >= mr->start && len <= mr->len && addr - mr->start <= mr->len - len));
}

/* Indirect MR: the entry holding byte rel of the key (rel < len), by binary search. */
static uint32_t vcx_klm_find(const VcxMkey *mk, uint64_t rel)
{
    uint32_t lo = 0, hi = mk->nklm - 1;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;

        if (mk->klm[mid].off <= rel) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    return lo;
}

/*
 * Indirect MR, at access time: every entry [va, va + len) runs through still names a key
 * of the MR's PD, not free, not indirect, that covers the entry's part (the indirect
 * key's own rights and range are checked by the caller).
 */
static bool vcx_klm_check(VcxState *s, const VcxMkey *mk, uint64_t va, uint64_t len,
                          const char **why)
{
    uint64_t rel = va - mk->start, end = rel + len;

    if (!len) {
        return true;
    }
    if (!mk->nklm) {
        *why = "indirect MR without entries";
        return false;
    }
    for (uint32_t i = vcx_klm_find(mk, rel); i < mk->nklm && mk->klm[i].off < end; i++) {
        const VcxKlm *e = &mk->klm[i];
        uint64_t from = MAX(rel, e->off) - e->off;
        uint64_t to = MIN(end, e->off + e->bcount) - e->off;

        if (!vcx_klm_entry_ok(s, e, mk->pdn, e->addr + from, to - from)) {
            *why = "indirect MR entry's key is gone, free, of another PD or too short";
            return false;
        }
    }
    return true;
}

/* The key, if it exists, is enabled, belongs to pdn and allows access over [va, va+len). */
VcxMkey *vcx_mkey_check(VcxState *s, uint32_t key, uint32_t pdn, uint32_t qpn,
                        uint64_t va, uint64_t len, uint32_t access, const char **why)
{
    VcxMkey *mk = vcx_mkey_get(s, key);

    if (!mk) {
        *why = "no such key";
        return NULL;
    }
    if (mk->free) {
        *why = "key is free";
        return NULL;
    }
    if (mk->pdn != pdn && pdn != VCX_PDN_ANY) {
        *why = "key belongs to another PD";
        return NULL;
    }
    if (mk->qpn != VCX_MKC_QPN_UNBOUND && mk->qpn != qpn) {
        *why = "key bound to another QP";
        return NULL;
    }
    if (((access & VCX_ACC_LOCAL_READ) && !mk->lr) ||
        ((access & VCX_ACC_LOCAL_WRITE) && !mk->lw) ||
        ((access & VCX_ACC_REMOTE_READ) && !mk->rr) ||
        ((access & VCX_ACC_REMOTE_WRITE) && !mk->rw) ||
        ((access & VCX_ACC_REMOTE_ATOMIC) && !mk->a)) {
        *why = "access right missing";
        return NULL;
    }
    if (!mk->length64 &&
        (va < mk->start || len > mk->len || va - mk->start > mk->len - len)) {
        *why = "range outside the key";
        return NULL;
    }
    if (len && va + len - 1 < va) {
        *why = "range wraps";
        return NULL;
    }
    if (mk->access_mode == VCX_MKC_ACCESS_MODE_KLM && mk->indirect) {
        return vcx_klm_check(s, mk, va, len, why) ? mk : NULL;
    }
    if (mk->access_mode == VCX_MKC_ACCESS_MODE_KLM) {
        VcxMkey *mr;

        if (access & (VCX_ACC_LOCAL_READ | VCX_ACC_LOCAL_WRITE)) {
            *why = "memory window used as a local key";
            return NULL;
        }
        /* The bound MR, at access time: it may have been invalidated or destroyed. */
        mr = vcx_mkey_get(s, mk->mw_mkey);
        if (!mr || mr->free || mr->pdn != mk->pdn ||
            mr->access_mode == VCX_MKC_ACCESS_MODE_KLM) {
            *why = "memory window's MR is gone, free or of another PD";
            return NULL;
        }
        if (!mr->length64) {
            uint64_t a = mk->mw_addr + (va - mk->start);

            if (a < mr->start || len > mr->len || a - mr->start > mr->len - len) {
                *why = "memory window range outside its MR";
                return NULL;
            }
        }
    }
    return mk;
}

/*
 * Guest address of va, and how many bytes from there stay contiguous in guest memory (at
 * least to the end of va's MTT page; further pages only while fewer than want bytes).
 */
static bool vcx_mkey_xlate(const VcxMkey *mk, uint64_t va, uint64_t want, uint64_t *pa,
                           uint64_t *room)
{
    uint64_t rel, idx, page;

    if (mk->access_mode == VCX_MKC_ACCESS_MODE_PA) {
        *pa = va;
        *room = UINT64_MAX;
        return true;
    }
    rel = va - (mk->start & ~vcx_mkey_page_mask(mk));
    idx = rel >> mk->log_page_size;
    if (va < (mk->start & ~vcx_mkey_page_mask(mk)) || idx >= mk->nmtt) {
        return false;
    }
    page = 1ull << mk->log_page_size;
    *pa = mk->mtt[idx] + (rel & vcx_mkey_page_mask(mk));
    *room = page - (rel & vcx_mkey_page_mask(mk));
    /*
     * Pages that follow each other in guest memory too are one run: one mapping or DMA
     * for it rather than one per page (at most want / page steps).
     */
    while (*room < want && idx + 1 < mk->nmtt && mk->mtt[idx + 1] == mk->mtt[idx] + page) {
        *room += page;
        idx++;
    }
    return true;
}

/*
 * A KLM key's bytes are another key's: that key and the address in it for va of mk, and
 * in *len how many of the bytes asked from va it serves (a window: all of them or none;
 * an indirect MR: up to the end of va's entry). NULL if they are outside mk or the key
 * cannot serve them.
 */
static VcxMkey *vcx_klm_target(VcxState *s, const VcxMkey *mk, uint64_t va, uint32_t *len,
                               uint64_t *t_va)
{
    VcxMkey *mr;

    if (mk->indirect) {
        uint64_t rel = va - mk->start;
        const VcxKlm *e;

        if (va < mk->start || rel >= mk->len || !mk->nklm) {
            return NULL;
        }
        e = &mk->klm[vcx_klm_find(mk, rel)];
        *len = MIN(*len, e->off + e->bcount - rel);
        *t_va = e->addr + (rel - e->off);
        return vcx_klm_entry_ok(s, e, mk->pdn, *t_va, *len) ? vcx_mkey_get(s, e->mkey) : NULL;
    }
    mr = vcx_mkey_get(s, mk->mw_mkey);
    if (va < mk->start || *len > mk->len || va - mk->start > mk->len - *len ||
        !mr || mr->free || mr->access_mode == VCX_MKC_ACCESS_MODE_KLM) {
        return NULL;
    }
    *t_va = mk->mw_addr + (va - mk->start);
    return mr;
}

/* Read or write len bytes at va through an already checked key. */
MemTxResult vcx_mkey_rw(VcxState *s, VcxMkey *mk, uint64_t va, void *buf, uint32_t len,
                        bool write)
{
    uint8_t *p = buf;

    if (mk->access_mode == VCX_MKC_ACCESS_MODE_KLM) {
        while (len) {
            uint32_t n = len;
            uint64_t t_va;
            VcxMkey *t = vcx_klm_target(s, mk, va, &n, &t_va);
            MemTxResult r = t ? vcx_mkey_rw(s, t, t_va, p, n, write) : MEMTX_ACCESS_ERROR;

            if (r != MEMTX_OK) {
                return r;
            }
            p += n;
            va += n;
            len -= n;
        }
        return MEMTX_OK;
    }
    /*
     * Exactly the key's range: its MTT pages may reach past start + len, but the bytes
     * a transfer touches must not (receive entries are checked here, as they are filled).
     */
    if (!mk->length64 &&
        (va < mk->start || len > mk->len || va - mk->start > mk->len - len)) {
        return MEMTX_ACCESS_ERROR;
    }
    while (len) {
        uint64_t pa, room;
        uint32_t n;
        MemTxResult r;

        if (!vcx_mkey_xlate(mk, va, len, &pa, &room)) {
            return MEMTX_DECODE_ERROR;
        }
        n = MIN(len, room);
        r = write ? pci_dma_write(vcx_pci(s), pa, p, n)
                  : pci_dma_read(vcx_pci(s), pa, p, n);
        if (r != MEMTX_OK) {
            /*
             * Not guest RAM; or the device's own BAR, which QEMU's re-entrancy guard
             * refuses while the device works (MEMTX_ACCESS_ERROR).
             */
            qemu_log_mask(LOG_GUEST_ERROR, "vcx: key 0x%x: DMA %s of %u bytes at 0x%"
                          PRIx64 " failed (MemTxResult 0x%x)\n",
                          VCX_MKEY(mk->index, mk->key), write ? "write" : "read", n,
                          pa, r);
            trace_vcx_err_dma(VCX_MKEY(mk->index, mk->key), pa, n, write, r);
            return r;
        }
        p += n;
        va += n;
        len -= n;
    }
    return MEMTX_OK;
}

/*
 * Zero-copy: the bytes at va of an already checked key as host memory, mapped in place
 * through the device's bus-master address space, when they are guest RAM the device may
 * access directly. *n is how much the mapping covers: at most len, never past the end of
 * a run of MTT pages that are contiguous in guest memory. NULL when they are anything else (MMIO, the device's own BAR, a ROM for a
 * write, unassigned space, bus mastering off, a key outside its range): the caller then
 * takes vcx_mkey_rw, whose bounce copy reports the error. Every mapping is given back
 * with vcx_mkey_unmap before the executor run ends, so no guest page stays mapped
 * across a command that could unplug it.
 */
void *vcx_mkey_map(VcxState *s, VcxMkey *mk, uint64_t va, uint32_t len, bool write,
                   uint32_t *n)
{
    AddressSpace *as = pci_get_address_space(vcx_pci(s));
    uint64_t pa, room;
    hwaddr xlat, plen;
    dma_addr_t dlen;
    MemoryRegion *mr;
    void *p;

    if (mk->access_mode == VCX_MKC_ACCESS_MODE_KLM) {
        uint32_t m = len;
        uint64_t t_va;
        VcxMkey *t = vcx_klm_target(s, mk, va, &m, &t_va);

        return t ? vcx_mkey_map(s, t, t_va, m, write, n) : NULL;
    }
    if (!len || (!mk->length64 &&
                 (va < mk->start || len > mk->len || va - mk->start > mk->len - len)) ||
        !vcx_mkey_xlate(mk, va, len, &pa, &room)) {
        return NULL;
    }
    plen = MIN(len, room);
    /*
     * Only plain RAM: address_space_map would give anything else a bounce buffer of its
     * own, filled by an MMIO read. The BQL is held, so the map cannot change between
     * this look-up and the mapping.
     */
    WITH_RCU_READ_LOCK_GUARD() {
        mr = address_space_translate(as, pa, &xlat, &plen, write, MEMTXATTRS_UNSPECIFIED);
        if (!memory_access_is_direct(mr, write, MEMTXATTRS_UNSPECIFIED)) {
            return NULL;
        }
    }
    dlen = plen;
    p = dma_memory_map(as, pa, &dlen, write ? DMA_DIRECTION_FROM_DEVICE
                                            : DMA_DIRECTION_TO_DEVICE,
                       MEMTXATTRS_UNSPECIFIED);
    if (!p || !dlen) {
        if (p) {
            dma_memory_unmap(as, p, dlen, DMA_DIRECTION_TO_DEVICE, 0);
        }
        return NULL;
    }
    *n = dlen;
    return p;
}

/* Give back a vcx_mkey_map mapping; done bytes were written (marked dirty) or read. */
void vcx_mkey_unmap(VcxState *s, void *p, uint32_t n, bool write, uint32_t done)
{
    dma_memory_unmap(pci_get_address_space(vcx_pci(s)), p, n,
                     write ? DMA_DIRECTION_FROM_DEVICE : DMA_DIRECTION_TO_DEVICE, done);
}

/*
 * Memory window bind / unbind / local invalidation: a UMR WQE on a window (KLM key).
 * Bind = mask FREE with free = 0 and one inline KLM entry naming an MR of the window's PD
 * (not free, not a window) that covers the window; remote write or atomic rights need the
 * MR's local write (IBTA o10-36.2.1-1). Type 2 binds name the QP (mask QPN) and check that
 * the window is free; unbinding (type 1: a zero-length bind) and local invalidation set
 * free, type 2 with CHECK_QPN (the window must be bound to this QP). Checked in full before
 * the window changes; failures are MW bind errors (0x06), malformed WQEs 0x02.
 */
#define VCX_MW_FLAGS_OK     (VCX_UMR_FLAG_TRANSLATION_OFFSET | VCX_UMR_FLAG_CHECK_FREE | \
                             VCX_UMR_FLAG_CHECK_QPN | VCX_UMR_FLAG_INLINE)
#define VCX_MW_MASK_OK      (VCX_UMR_MASK_MW_BIND | VCX_UMR_MASK_QPN | VCX_UMR_MASK_LR | \
                             VCX_UMR_MASK_SMALL_FENCE)

/* The access rights a UMR's mkey_mask selects, from its mkey context segment. */
static void vcx_umr_apply_rights(VcxMkey *n, const uint8_t *seg, uint64_t mask)
{
    const struct {
        uint64_t bit;
        struct vcx_fld fld;
        bool *right;
    } rights[] = {
        { VCX_UMR_MASK_LR, VCX_MKC_LR, &n->lr },
        { VCX_UMR_MASK_LW, VCX_MKC_LW, &n->lw },
        { VCX_UMR_MASK_RR, VCX_MKC_RR, &n->rr },
        { VCX_UMR_MASK_RW, VCX_MKC_RW, &n->rw },
        { VCX_UMR_MASK_A, VCX_MKC_A, &n->a },
    };

    for (size_t i = 0; i < ARRAY_SIZE(rights); i++) {
        if (mask & rights[i].bit) {
            *rights[i].right = vcx_get(seg, rights[i].fld);
        }
    }
}

static uint8_t vcx_mw_bind(VcxState *s, VcxMkey *mw, uint32_t pdn, uint32_t qpn,
                           const uint8_t *w, uint32_t end, const char **why)
{
    const uint8_t *uc = w + VCX_WQE_CTRL_SIZE;
    const uint8_t *seg = uc + VCX_WQE_UMR_CTRL_SIZE;
    uint32_t off = VCX_WQE_CTRL_SIZE + VCX_WQE_UMR_CTRL_SIZE + VCX_WQE_MKEY_SEG_SIZE;
    uint32_t flags = vcx_get(uc, VCX_WQE_UMR_FLAGS);
    uint64_t mask = vcx_get64(uc, VCX_WQE_UMR_MKEY_MASK);
    uint32_t xlt_oct = vcx_get(uc, VCX_WQE_UMR_XLT_OCTOWORDS);
    VcxMkey n = *mw;

    if (flags & ~VCX_MW_FLAGS_OK) {
        *why = "memory window UMR flags not supported";
        return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
    }
    if (mask & ~VCX_MW_MASK_OK) {
        *why = "memory window UMR mkey_mask names fields a bind cannot set";
        return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
    }
    if (!(mask & VCX_UMR_MASK_FREE)) {
        *why = "memory window UMR without mask FREE";
        return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
    }
    if ((flags & VCX_UMR_FLAG_TRANSLATION_OFFSET) &&
        (vcx_get(uc, VCX_WQE_UMR_XLT_OFFSET) || vcx_get(uc, VCX_WQE_UMR_XLT_OFFSET_47_16))) {
        *why = "memory window bind at a translation offset";
        return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
    }
    if (mw->pdn != pdn) {
        *why = "memory window of another PD";
        return VCX_CQE_SYND_MW_BIND_ERR;
    }
    if ((flags & VCX_UMR_FLAG_CHECK_FREE) && !mw->free) {
        *why = "type 2 bind of a window that is bound";
        return VCX_CQE_SYND_MW_BIND_ERR;
    }
    if ((flags & VCX_UMR_FLAG_CHECK_QPN) && (mw->free || mw->qpn != qpn)) {
        *why = "invalidation of a window not bound to this QP";
        return VCX_CQE_SYND_MW_BIND_ERR;
    }
    if (mask & VCX_UMR_MASK_QPN) {
        n.qpn = vcx_get(seg, VCX_MKC_QPN);
        if (n.qpn != VCX_MKC_QPN_UNBOUND && n.qpn != qpn) {
            *why = "memory window bound to a QP other than the one binding it";
            return VCX_CQE_SYND_MW_BIND_ERR;
        }
    }
    if (mask & VCX_UMR_MASK_KEY) {
        n.key = vcx_get(seg, VCX_MKC_MKEY_7_0);
    }
    n.free = vcx_get(seg, VCX_MKC_FREE);
    if (n.free) {
        if (xlt_oct) {
            *why = "memory window unbind with translations";
            return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
        }
        n.qpn = VCX_MKC_QPN_UNBOUND;
        n.start = n.len = n.mw_addr = 0;
        n.mw_mkey = 0;
        n.lw = n.rr = n.rw = n.a = false;
    } else {
        const uint8_t *klm = w + off;
        VcxMkey *mr;

        if (!(flags & VCX_UMR_FLAG_INLINE) || !xlt_oct || xlt_oct > mw->xlt_octwords) {
            *why = "memory window bind needs inline KLM octowords within the window's size";
            return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
        }
        if (end < off + xlt_oct * 16) {
            *why = "memory window KLM list beyond the WQE";
            return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
        }
        if (mask & VCX_UMR_MASK_START_ADDR) {
            n.start = vcx_get64(seg, VCX_MKC_START_ADDR);
        }
        if (mask & VCX_UMR_MASK_LEN) {
            n.len = vcx_get64(seg, VCX_MKC_LEN);
        }
        vcx_umr_apply_rights(&n, seg, mask);
        n.mw_mkey = vcx_get(klm, VCX_WQE_KLM_MKEY);
        n.mw_addr = vcx_get64(klm, VCX_WQE_KLM_ADDR);
        if (vcx_get(klm, VCX_WQE_KLM_BYTE_COUNT) != n.len || !n.len) {
            *why = "memory window KLM byte_count is not the window's length";
            return VCX_CQE_SYND_MW_BIND_ERR;
        }
        if (n.start + n.len < n.start || n.mw_addr + n.len < n.mw_addr) {
            *why = "memory window range wraps";
            return VCX_CQE_SYND_MW_BIND_ERR;
        }
        mr = vcx_mkey_get(s, n.mw_mkey);
        if (!mr || mr->free || mr->access_mode == VCX_MKC_ACCESS_MODE_KLM) {
            *why = "memory window bound to a key that is not a valid MR";
            return VCX_CQE_SYND_MW_BIND_ERR;
        }
        if (mr->pdn != mw->pdn) {
            *why = "memory window and MR in different PDs";
            return VCX_CQE_SYND_MW_BIND_ERR;
        }
        if (!mr->length64 && (n.mw_addr < mr->start || n.len > mr->len ||
                              n.mw_addr - mr->start > mr->len - n.len)) {
            *why = "memory window range outside the MR";
            return VCX_CQE_SYND_MW_BIND_ERR;
        }
        if ((n.rw || n.a) && !mr->lw) {
            *why = "remote write or atomic window on an MR without local write";
            return VCX_CQE_SYND_MW_BIND_ERR;
        }
    }
    *mw = n;
    trace_vcx_mkey_umr(VCX_MKEY(mw->index, mw->key), mw->free, mw->start, mw->len, xlt_oct);
    return 0;
}

/*
 * UMR WQE execution (requester side, no packet): fast registration and local
 * invalidation of a key created with umr_en. The new context is computed in full and
 * checked before anything is written back, so a failing UMR leaves the key as it was.
 * Returns 0 or the error CQE syndrome, with *why set.
 */
#define VCX_UMR_FLAGS_OK    (VCX_UMR_FLAG_TRANSLATION_OFFSET | VCX_UMR_FLAG_CHECK_NOT_FREE | \
                             VCX_UMR_FLAG_CHECK_FREE | VCX_UMR_FLAG_INLINE | \
                             VCX_UMR_FLAG_CHECK_QPN)
#define VCX_UMR_MASK_OK     (VCX_UMR_MASK_LEN | VCX_UMR_MASK_PAGE_SIZE | \
                             VCX_UMR_MASK_START_ADDR | VCX_UMR_MASK_PD | \
                             VCX_UMR_MASK_EN_RINVAL | VCX_UMR_MASK_KEY | VCX_UMR_MASK_QPN | \
                             VCX_UMR_MASK_LR | VCX_UMR_MASK_LW | VCX_UMR_MASK_RR | \
                             VCX_UMR_MASK_RW | VCX_UMR_MASK_A | VCX_UMR_MASK_SMALL_FENCE | \
                             VCX_UMR_MASK_FREE)

/*
 * The checks every fast registration and invalidation makes (the key in the QP's PD
 * unless the QP is privileged, the free-state flags), then the new context n: mk with
 * the mkey segment's fields its mkey_mask names (length, page size, start, en_rinval,
 * key byte, rights, free). Registering a key that is in use is refused.
 */
static uint8_t vcx_umr_mkey_fields(const VcxMkey *mk, VcxMkey *n, const uint8_t *uc,
                                   uint32_t pdn, bool privileged, const char **why)
{
    const uint8_t *seg = uc + VCX_WQE_UMR_CTRL_SIZE;
    uint32_t flags = vcx_get(uc, VCX_WQE_UMR_FLAGS);
    uint64_t mask = vcx_get64(uc, VCX_WQE_UMR_MKEY_MASK);

    if (!privileged && mk->pdn != pdn) {
        *why = "UMR on a key of another PD";
        return VCX_CQE_SYND_LOCAL_PROT_ERR;
    }
    if (((flags & VCX_UMR_FLAG_CHECK_FREE) && !mk->free) ||
        ((flags & VCX_UMR_FLAG_CHECK_NOT_FREE) && mk->free)) {
        *why = "UMR free-state check failed";
        return VCX_CQE_SYND_LOCAL_PROT_ERR;
    }
    *n = *mk;
    if (mask & VCX_UMR_MASK_LEN) {
        n->len = vcx_get64(seg, VCX_MKC_LEN);
    }
    if (mask & VCX_UMR_MASK_PAGE_SIZE) {
        n->log_page_size = vcx_get(seg, VCX_MKC_LOG_PAGE_SIZE);
    }
    if (mask & VCX_UMR_MASK_START_ADDR) {
        n->start = vcx_get64(seg, VCX_MKC_START_ADDR);
    }
    if (mask & VCX_UMR_MASK_EN_RINVAL) {
        n->en_rinval = vcx_get(seg, VCX_MKC_EN_RINVAL);
    }
    if (mask & VCX_UMR_MASK_KEY) {
        n->key = vcx_get(seg, VCX_MKC_MKEY_7_0);
    }
    vcx_umr_apply_rights(n, seg, mask);
    if (mask & VCX_UMR_MASK_FREE) {
        n->free = vcx_get(seg, VCX_MKC_FREE);
        if (!n->free && !mk->free) {
            *why = "fast registration of a key that is not free";
            return VCX_CQE_SYND_LOCAL_PROT_ERR;
        }
    }
    return 0;
}

/*
 * A UMR's translation list, bytes long: inline after the mkey segment (flag INLINE), or
 * read through the data segment there with the QP's PD (a REG_UMR QP, privileged:
 * mlx5_ib's has no PD, reads it with any PD's key).
 */
static uint8_t vcx_umr_xlt_read(VcxState *s, uint32_t pdn, uint32_t qpn, bool privileged,
                                const uint8_t *w, uint32_t off, uint32_t end, uint8_t *raw,
                                uint32_t bytes, const char **why)
{
    const uint8_t *d = w + off;
    uint64_t addr;
    uint32_t lkey;
    VcxMkey *dm;

    if (vcx_get(w + VCX_WQE_CTRL_SIZE, VCX_WQE_UMR_FLAGS) & VCX_UMR_FLAG_INLINE) {
        if (end < off + bytes) {
            *why = "inline translations beyond the WQE";
            return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
        }
        memcpy(raw, w + off, bytes);
        return 0;
    }
    if (end < off + VCX_WQE_DATA_SEG_SIZE) {
        *why = "UMR without the data segment of its translation list";
        return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
    }
    lkey = vcx_get(d, VCX_WQE_DATA_LKEY);
    addr = vcx_get64(d, VCX_WQE_DATA_ADDR);
    if (vcx_get(d, VCX_WQE_DATA_BYTE_COUNT) < bytes) {
        *why = "translation list data segment shorter than xlt_octowords";
        return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
    }
    dm = vcx_mkey_check(s, lkey, privileged ? VCX_PDN_ANY : pdn, qpn, addr, bytes,
                        VCX_ACC_LOCAL_READ, why);
    if (!dm) {
        return VCX_CQE_SYND_LOCAL_PROT_ERR;
    }
    if (vcx_mkey_rw(s, dm, addr, raw, bytes, false) != MEMTX_OK) {
        *why = "translation list not readable";
        return VCX_CQE_SYND_LOCAL_PROT_ERR;
    }
    return 0;
}

/*
 * Fast registration and local invalidation of an indirect MR: a UMR WQE on a KLM key
 * whose mkey_mask names PAGE_SIZE (mlx5_ib's REG_MR on an SG_GAPS MR), and every later
 * UMR on such a key. The mkey segment gives the range and rights; xlt_octowords KLM
 * entries (16 bytes each, at translation offset 0, inline or by data segment) the bytes:
 * those up to len are used (mlx5_ib pads the list to 64 bytes), each within a key of the
 * MR's PD that is not free and not itself a KLM key. Checked in full before the key
 * changes; malformed WQEs complete with 0x02, refused ones with 0x04 (as for MTT keys).
 */
#define VCX_KLM_FLAGS_OK    (VCX_UMR_FLAG_TRANSLATION_OFFSET | VCX_UMR_FLAG_CHECK_FREE | \
                             VCX_UMR_FLAG_CHECK_NOT_FREE | VCX_UMR_FLAG_INLINE)
#define VCX_KLM_MASK_OK     (VCX_UMR_MASK_LEN | VCX_UMR_MASK_PAGE_SIZE | \
                             VCX_UMR_MASK_START_ADDR | VCX_UMR_MASK_EN_RINVAL | \
                             VCX_UMR_MASK_KEY | VCX_UMR_MASK_LR | VCX_UMR_MASK_LW | \
                             VCX_UMR_MASK_RR | VCX_UMR_MASK_RW | VCX_UMR_MASK_A | \
                             VCX_UMR_MASK_SMALL_FENCE | VCX_UMR_MASK_FREE)

static uint8_t vcx_klm_reg(VcxState *s, VcxMkey *mk, uint32_t pdn, uint32_t qpn,
                           bool privileged, const uint8_t *w, uint32_t end,
                           const char **why)
{
    const uint8_t *uc = w + VCX_WQE_CTRL_SIZE;
    uint32_t off = VCX_WQE_CTRL_SIZE + VCX_WQE_UMR_CTRL_SIZE + VCX_WQE_MKEY_SEG_SIZE;
    uint32_t flags = vcx_get(uc, VCX_WQE_UMR_FLAGS);
    uint32_t xlt_oct = vcx_get(uc, VCX_WQE_UMR_XLT_OCTOWORDS), nklm = 0;
    uint64_t mask = vcx_get64(uc, VCX_WQE_UMR_MKEY_MASK), pos;
    g_autofree uint8_t *raw = NULL;
    g_autofree VcxKlm *klm = NULL;
    VcxMkey n;
    uint8_t synd;

    if (flags & ~VCX_KLM_FLAGS_OK) {
        *why = "indirect MR UMR flags not supported";
        return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
    }
    if (mask & ~VCX_KLM_MASK_OK) {
        *why = "indirect MR UMR mkey_mask names fields it cannot set";
        return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
    }
    if ((flags & VCX_UMR_FLAG_TRANSLATION_OFFSET) &&
        (vcx_get(uc, VCX_WQE_UMR_XLT_OFFSET) || vcx_get(uc, VCX_WQE_UMR_XLT_OFFSET_47_16))) {
        *why = "indirect MR registration at a translation offset";
        return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
    }
    synd = vcx_umr_mkey_fields(mk, &n, uc, pdn, privileged, why);
    if (synd) {
        return synd;
    }
    n.indirect = true;          /* its page size is kept, and unused */
    if (n.free) {
        if (xlt_oct) {
            *why = "invalidation of an indirect MR with translations";
            return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
        }
        *mk = n;
        trace_vcx_mkey_umr(VCX_MKEY(mk->index, mk->key), mk->free, mk->start, mk->len, 0);
        return 0;
    }
    if (!xlt_oct || xlt_oct > mk->xlt_octwords) {
        *why = "indirect MR registration needs 1 to translations_octword_size KLM entries";
        return VCX_CQE_SYND_LOCAL_PROT_ERR;
    }
    if (!n.len || n.start + n.len < n.start) {
        *why = "indirect MR range empty or wrapping";
        return VCX_CQE_SYND_LOCAL_PROT_ERR;
    }
    raw = g_malloc(xlt_oct * VCX_WQE_KLM_SIZE);
    synd = vcx_umr_xlt_read(s, pdn, qpn, privileged, w, off, end, raw,
                            xlt_oct * VCX_WQE_KLM_SIZE, why);
    if (synd) {
        return synd;
    }
    klm = g_new(VcxKlm, xlt_oct);
    for (pos = 0; pos < n.len; pos += klm[nklm++].bcount) {
        const uint8_t *e = raw + nklm * VCX_WQE_KLM_SIZE;

        if (nklm == xlt_oct) {
            *why = "indirect MR's KLM entries cover less than its length";
            return VCX_CQE_SYND_LOCAL_PROT_ERR;
        }
        klm[nklm] = (VcxKlm) {
            .bcount = vcx_get(e, VCX_WQE_KLM_BYTE_COUNT),
            .mkey = vcx_get(e, VCX_WQE_KLM_MKEY),
            .addr = vcx_get64(e, VCX_WQE_KLM_ADDR),
            .off = pos,
        };
        if (!klm[nklm].bcount ||
            !vcx_klm_entry_ok(s, &klm[nklm], n.pdn, klm[nklm].addr, klm[nklm].bcount)) {
            *why = "indirect MR's KLM entry is empty or not within a key of its PD";
            return VCX_CQE_SYND_LOCAL_PROT_ERR;
        }
    }
    g_free(mk->klm);
    n.klm = g_steal_pointer(&klm);
    n.nklm = nklm;
    *mk = n;
    trace_vcx_mkey_umr(VCX_MKEY(mk->index, mk->key), mk->free, mk->start, mk->len, xlt_oct);
    return 0;
}

/*
 * Octowords of translations a UMR may load into the key: translations_octword_size rounded
 * up to 64 bytes, the unit in which UMR copies translations (mlx5_ib pads every list to
 * it and takes keys of 4 MTTs, 2 octowords, from its cache for small MRs).
 */
static uint32_t vcx_mkey_xlt_capacity(const VcxMkey *mk)
{
    return ROUND_UP(mk->xlt_octwords, VCX_UMR_XLT_ALIGN_OCTOWORDS);
}

uint8_t vcx_mkey_umr(VcxState *s, uint32_t pdn, uint32_t qpn, bool privileged,
                     const uint8_t *w, uint32_t end, const char **why)
{
    const uint8_t *uc = w + VCX_WQE_CTRL_SIZE;
    const uint8_t *seg = uc + VCX_WQE_UMR_CTRL_SIZE;
    uint32_t off = VCX_WQE_CTRL_SIZE + VCX_WQE_UMR_CTRL_SIZE + VCX_WQE_MKEY_SEG_SIZE;
    uint32_t key = vcx_get(w, VCX_WQE_CTRL_IMM);
    uint32_t flags, xlt_oct;
    uint64_t mask, xlt_off = 0, nmtt, npages;
    g_autofree uint64_t *mtt = NULL;
    g_autofree uint8_t *raw = NULL;
    VcxMkey *mk, n;
    VcxPd *new_pd = NULL;
    uint8_t synd;

    if (end < off) {
        *why = "UMR WQE shorter than its control, UMR control and mkey segments";
        return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
    }
    flags = vcx_get(uc, VCX_WQE_UMR_FLAGS);
    mask = vcx_get64(uc, VCX_WQE_UMR_MKEY_MASK);
    xlt_oct = vcx_get(uc, VCX_WQE_UMR_XLT_OCTOWORDS);
    if (flags & ~VCX_UMR_FLAGS_OK) {
        *why = "UMR flags not supported";
        return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
    }
    if (mask & ~VCX_UMR_MASK_OK) {
        *why = "UMR mkey_mask names fields that cannot be modified";
        return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
    }
    if (flags & VCX_UMR_FLAG_TRANSLATION_OFFSET) {
        xlt_off = (uint64_t)vcx_get(uc, VCX_WQE_UMR_XLT_OFFSET_47_16) << 16 |
                  vcx_get(uc, VCX_WQE_UMR_XLT_OFFSET);
    }

    mk = vcx_obj_get(&s->objs->mkeys, VCX_MKEY_INDEX(key));
    if (!mk) {
        *why = "UMR on a key that does not exist";
        return VCX_CQE_SYND_LOCAL_PROT_ERR;
    }
    if (!mk->umr_en) {
        *why = "UMR on a key created without umr_en";
        return VCX_CQE_SYND_LOCAL_PROT_ERR;
    }
    if (mk->access_mode == VCX_MKC_ACCESS_MODE_KLM) {
        return mk->indirect || (mask & VCX_UMR_MASK_PAGE_SIZE) ?
               vcx_klm_reg(s, mk, pdn, qpn, privileged, w, end, why) :
               vcx_mw_bind(s, mk, pdn, qpn, w, end, why);
    }
    if (flags & VCX_UMR_FLAG_CHECK_QPN) {
        *why = "UMR flag CHECK_QPN on a key that is not a memory window";
        return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
    }
    synd = vcx_umr_mkey_fields(mk, &n, uc, pdn, privileged, why);
    if (synd) {
        return synd;
    }
    if ((mask & VCX_UMR_MASK_PD) && vcx_get(seg, VCX_MKC_PD) != mk->pdn) {
        if (!privileged) {
            *why = "UMR moves the key to a PD other than the QP's";
            return VCX_CQE_SYND_LOCAL_PROT_ERR;
        }
        new_pd = vcx_pd_get(s, vcx_get(seg, VCX_MKC_PD));
        if (!new_pd) {
            *why = "UMR moves the key to a PD that does not exist";
            return VCX_CQE_SYND_LOCAL_PROT_ERR;
        }
        n.pdn = new_pd->pdn;
    }
    if ((mask & VCX_UMR_MASK_QPN) && vcx_get(seg, VCX_MKC_QPN) != VCX_MKC_QPN_UNBOUND) {
        *why = "UMR binds the key to a QP (not supported)";
        return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
    }

    /* Translations: the current list, with xlt_oct octowords loaded at xlt_off. */
    nmtt = mk->nmtt;
    if (xlt_oct) {
        uint32_t bytes = xlt_oct * 16;

        if (mk->access_mode != VCX_MKC_ACCESS_MODE_MTT) {
            *why = "UMR loads translations into a key that has none";
            return VCX_CQE_SYND_LOCAL_PROT_ERR;
        }
        if (xlt_off + xlt_oct > vcx_mkey_xlt_capacity(mk)) {
            *why = "UMR translations beyond the size the key was created with";
            return VCX_CQE_SYND_LOCAL_PROT_ERR;
        }
        raw = g_malloc(bytes);
        synd = vcx_umr_xlt_read(s, pdn, qpn, privileged, w, off, end, raw, bytes, why);
        if (synd) {
            return synd;
        }
        mtt = g_new0(uint64_t, MAX((uint64_t)vcx_mkey_xlt_capacity(mk) * 2, 1));
        memcpy(mtt, mk->mtt, mk->nmtt * sizeof(uint64_t));
        for (uint32_t i = 0; i < xlt_oct * 2; i++) {
            mtt[xlt_off * 2 + i] = ldq_be_p(raw + i * VCX_MTT_SIZE) & ~VCX_MTT_FLAG_MASK;
        }
        nmtt = MAX(nmtt, (xlt_off + xlt_oct) * 2);
    }

    /* A key that is (or stays) in use must be a consistent translation. */
    if (!n.free && n.access_mode == VCX_MKC_ACCESS_MODE_MTT) {
        const uint64_t *list = mtt ? mtt : mk->mtt;

        if (n.log_page_size < VCX_MKEY_MIN_LOG_PAGE ||
            n.log_page_size > VCX_MKEY_MAX_LOG_PAGE) {
            *why = "UMR log_page_size not supported";
            return VCX_CQE_SYND_LOCAL_PROT_ERR;
        }
        if (n.start + n.len < n.start) {
            *why = "UMR range wraps";
            return VCX_CQE_SYND_LOCAL_PROT_ERR;
        }
        npages = n.len ? ((n.start & vcx_mkey_page_mask(&n)) + n.len +
                          vcx_mkey_page_mask(&n)) >> n.log_page_size : 0;
        if (npages > nmtt) {
            *why = "UMR length needs more translations than the key holds";
            return VCX_CQE_SYND_LOCAL_PROT_ERR;
        }
        for (uint64_t i = 0; i < npages; i++) {
            if (list[i] & vcx_mkey_page_mask(&n)) {
                *why = "UMR translation not aligned to the page size";
                return VCX_CQE_SYND_LOCAL_PROT_ERR;
            }
        }
    }

    /* Commit. */
    if (mtt) {
        g_free(mk->mtt);
        n.mtt = g_steal_pointer(&mtt);
    }
    n.nmtt = nmtt;
    if (new_pd) {
        vcx_pd_get(s, mk->pdn)->refs--;
        new_pd->refs++;
    }
    *mk = n;
    trace_vcx_mkey_umr(VCX_MKEY(mk->index, mk->key), mk->free, mk->start, mk->len, xlt_oct);
    return 0;
}
