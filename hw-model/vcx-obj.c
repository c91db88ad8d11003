/*
 * vcx: RDMA object tables, queue buffer access and the object command table.
 *
 * The command queue (vcx-cmdq.c) looks an opcode up in its own table first, then in
 * vcx_obj_cmd_table below, which lists every RDMA object command with the same checks:
 * minimum input and output lengths, accepted op_mods and HCA states. Object state lives
 * in VcxObjects (s->objs), created at realize and emptied at every reset and at a force
 * close teardown.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "hw/pci/pci_device.h"
#include "vcx-obj.h"
#include "trace.h"

#define OPM(n)          (1u << (n))
#define CMD(op, fn, in, out, opm) \
    { VCX_CMD_OP_##op, #op, (in), (out), (opm), VCX_HCA_INITIALIZED, \
      VCX_HCA_INITIALIZED, fn }

static const VcxCmdDesc vcx_obj_cmd_table[] = {
    CMD(ALLOC_PD, vcx_cmd_alloc_pd, VCX_OBJ_CMD_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(DEALLOC_PD, vcx_cmd_dealloc_pd, VCX_OBJ_CMD_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(CREATE_MKEY, vcx_cmd_create_mkey, VCX_CREATE_MKEY_IN_LEN, VCX_CREATE_MKEY_OUT_LEN,
        OPM(0)),
    CMD(QUERY_MKEY, vcx_cmd_query_mkey, VCX_OBJ_CMD_LEN, VCX_QUERY_MKEY_OUT_LEN, OPM(0)),
    CMD(DESTROY_MKEY, vcx_cmd_destroy_mkey, VCX_OBJ_CMD_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(CREATE_CQ, vcx_cmd_create_cq, VCX_CREATE_CQ_IN_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(DESTROY_CQ, vcx_cmd_destroy_cq, VCX_OBJ_CMD_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(QUERY_CQ, vcx_cmd_query_cq, VCX_OBJ_CMD_LEN, VCX_QUERY_CQ_OUT_LEN, OPM(0)),
    CMD(MODIFY_CQ, vcx_cmd_modify_cq, VCX_MODIFY_CQ_IN_LEN, VCX_OBJ_CMD_LEN,
        OPM(0) | OPM(1)),
    CMD(CREATE_QP, vcx_cmd_create_qp, VCX_CREATE_QP_IN_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(DESTROY_QP, vcx_cmd_destroy_qp, VCX_OBJ_CMD_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(RST2INIT_QP, vcx_cmd_modify_qp, VCX_MODIFY_QP_IN_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(INIT2INIT_QP, vcx_cmd_modify_qp, VCX_MODIFY_QP_IN_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(INIT2RTR_QP, vcx_cmd_modify_qp, VCX_MODIFY_QP_IN_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(RTR2RTS_QP, vcx_cmd_modify_qp, VCX_MODIFY_QP_IN_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(RTS2RTS_QP, vcx_cmd_modify_qp, VCX_MODIFY_QP_IN_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(2ERR_QP, vcx_cmd_2err_qp, VCX_OBJ_CMD_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(2RST_QP, vcx_cmd_2rst_qp, VCX_OBJ_CMD_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(QUERY_QP, vcx_cmd_query_qp, VCX_OBJ_CMD_LEN, VCX_QUERY_QP_OUT_LEN, OPM(0)),
    CMD(CREATE_SRQ, vcx_cmd_create_srq, VCX_CREATE_SRQ_IN_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(DESTROY_SRQ, vcx_cmd_destroy_srq, VCX_OBJ_CMD_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(QUERY_SRQ, vcx_cmd_query_srq, VCX_OBJ_CMD_LEN, VCX_QUERY_SRQ_OUT_LEN, OPM(0)),
    CMD(ARM_RQ, vcx_cmd_arm_rq, VCX_OBJ_CMD_LEN, VCX_OBJ_CMD_LEN, OPM(1)),
    CMD(CREATE_RMP, vcx_cmd_create_rmp, VCX_CREATE_RMP_IN_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(MODIFY_RMP, vcx_cmd_modify_rmp, VCX_MODIFY_RMP_IN_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(QUERY_RMP, vcx_cmd_query_rmp, VCX_OBJ_CMD_LEN, VCX_QUERY_RMP_OUT_LEN, OPM(0)),
    CMD(DESTROY_RMP, vcx_cmd_destroy_rmp, VCX_OBJ_CMD_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(ALLOC_XRCD, vcx_cmd_alloc_xrcd, VCX_OBJ_CMD_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(DEALLOC_XRCD, vcx_cmd_dealloc_xrcd, VCX_OBJ_CMD_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(CREATE_XRC_SRQ, vcx_cmd_create_xrc_srq, VCX_CREATE_XRC_SRQ_IN_LEN, VCX_OBJ_CMD_LEN,
        OPM(0)),
    CMD(DESTROY_XRC_SRQ, vcx_cmd_destroy_xrc_srq, VCX_OBJ_CMD_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(QUERY_XRC_SRQ, vcx_cmd_query_xrc_srq, VCX_OBJ_CMD_LEN, VCX_QUERY_XRC_SRQ_OUT_LEN,
        OPM(0)),
    CMD(ARM_XRC_SRQ, vcx_cmd_arm_xrc_srq, VCX_OBJ_CMD_LEN, VCX_OBJ_CMD_LEN,
        OPM(VCX_ARM_XRC_SRQ_OP_MOD_XRC_SRQ)),
    CMD(ATTACH_TO_MCG, vcx_cmd_attach_to_mcg, VCX_MCG_IN_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(DETACH_FROM_MCG, vcx_cmd_detach_from_mcg, VCX_MCG_IN_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
};

#undef CMD
#undef OPM

const VcxCmdDesc *vcx_obj_cmd_lookup(uint16_t opcode)
{
    for (size_t i = 0; i < ARRAY_SIZE(vcx_obj_cmd_table); i++) {
        if (vcx_obj_cmd_table[i].opcode == opcode) {
            return &vcx_obj_cmd_table[i];
        }
    }
    return NULL;
}

/*
 * Number tables
 */

void vcx_obj_table_init(VcxObjTable *t, uint32_t size, uint32_t first)
{
    t->size = size;
    t->first = first;
    t->next = first;
    t->count = 0;
    t->slot = g_new0(void *, t->size);
}

void *vcx_obj_get(VcxObjTable *t, uint32_t n)
{
    return n < t->size ? t->slot[n] : NULL;
}

/*
 * The next free number after the last one handed out, wrapping to first: as ConnectX
 * firmware, a freed number is not reused at once. A peer may still hold state for the
 * old object (ib_cm rejects a REQ from a QPN it still knows as "stale connection").
 */
bool vcx_obj_alloc(VcxObjTable *t, void *obj, uint32_t *n)
{
    uint32_t span = t->size - t->first;

    for (uint32_t k = 0; k < span; k++) {
        uint32_t i = t->first + (t->next - t->first + k) % span;

        if (!t->slot[i]) {
            t->slot[i] = obj;
            t->count++;
            t->next = i + 1 < t->size ? i + 1 : t->first;
            *n = i;
            return true;
        }
    }
    return false;
}

void vcx_obj_remove(VcxObjTable *t, uint32_t n)
{
    if (n < t->size && t->slot[n]) {
        t->slot[n] = NULL;
        t->count--;
    }
}

VcxPd *vcx_pd_get(VcxState *s, uint32_t pdn)
{
    return vcx_obj_get(&s->objs->pds, pdn);
}

VcxCq *vcx_cq_get(VcxState *s, uint32_t cqn)
{
    return vcx_obj_get(&s->objs->cqs, cqn);
}

VcxQp *vcx_qp_get(VcxState *s, uint32_t qpn)
{
    return vcx_obj_get(&s->objs->qps, qpn);
}

VcxSrq *vcx_srq_get(VcxState *s, uint32_t srqn)
{
    return vcx_obj_get(&s->objs->srqs, srqn);
}

VcxMkey *vcx_mkey_get(VcxState *s, uint32_t key)
{
    VcxMkey *mk = vcx_obj_get(&s->objs->mkeys, VCX_MKEY_INDEX(key));

    return mk && mk->key == (key & 0xff) ? mk : NULL;
}

/*
 * Queue buffers
 */

/*
 * Validate and copy the PAS list of a queue of size bytes that starts page_offset units of
 * a 64th of its page size into its first page (64 bytes with 4 KiB pages; mlx5_ib
 * quantizes a user buffer's offset so: 16 with 16 KiB pages is 4 KiB). pas_room is the
 * number of PAS bytes the input carries.
 */
uint8_t vcx_qbuf_parse(VcxCmd *cmd, VcxQBuf *b, const uint8_t *pas, uint32_t pas_room,
                       uint8_t log_page_size, uint32_t page_offset, uint64_t size,
                       uint16_t synd_len, uint16_t synd_align)
{
    uint32_t shift = VCX_PAGE_SHIFT + log_page_size;
    uint64_t off = (uint64_t)page_offset << (shift - 6);
    uint64_t npas = DIV_ROUND_UP(off + size, 1ull << shift);

    if (npas > VCX_MAX_QUEUE_PAS || npas * VCX_PAS_SIZE > pas_room) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_INPUT_LEN, synd_len,
                            "%" PRIu64 " PAS entries needed, %u present", npas,
                            pas_room / VCX_PAS_SIZE);
    }
    if (off >= (1ull << shift)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, synd_align,
                            "page_offset %u beyond the first page", page_offset);
    }
    for (uint64_t i = 0; i < npas; i++) {
        uint64_t a = vcx_get64(pas + i * VCX_PAS_SIZE, VCX_FLD(0, 64));

        if (a & ((1ull << shift) - 1)) {
            return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, synd_align,
                                "PAS entry %" PRIu64 " 0x%" PRIx64 " not aligned to "
                                "2^%u", i, a, shift);
        }
    }
    b->npas = npas;
    b->pas = g_new(uint64_t, npas);
    b->page_shift = shift;
    b->offset = off;
    b->size = size;
    for (uint64_t i = 0; i < npas; i++) {
        b->pas[i] = vcx_get64(pas + i * VCX_PAS_SIZE, VCX_FLD(0, 64));
    }
    return VCX_CMD_STAT_OK;
}

void vcx_qbuf_free(VcxQBuf *b)
{
    g_free(b->pas);
    b->pas = NULL;
    b->npas = 0;
}

static MemTxResult vcx_qbuf_rw(VcxState *s, const VcxQBuf *b, uint64_t off, void *buf,
                               uint32_t len, bool write)
{
    uint8_t *p = buf;
    uint64_t psz = 1ull << b->page_shift;

    if (off > b->size || len > b->size - off) {
        return MEMTX_DECODE_ERROR;
    }
    off += b->offset;
    while (len) {
        uint64_t page = off >> b->page_shift;
        uint32_t in_page = MIN(len, psz - (off & (psz - 1)));
        dma_addr_t a;
        MemTxResult r;

        if (page >= b->npas) {
            return MEMTX_DECODE_ERROR;
        }
        a = b->pas[page] + (off & (psz - 1));
        r = write ? pci_dma_write(vcx_pci(s), a, p, in_page)
                  : pci_dma_read(vcx_pci(s), a, p, in_page);
        if (r != MEMTX_OK) {
            return r;
        }
        p += in_page;
        off += in_page;
        len -= in_page;
    }
    return MEMTX_OK;
}

MemTxResult vcx_qbuf_read(VcxState *s, const VcxQBuf *b, uint64_t off, void *buf,
                          uint32_t len)
{
    return vcx_qbuf_rw(s, b, off, buf, len, false);
}

MemTxResult vcx_qbuf_write(VcxState *s, const VcxQBuf *b, uint64_t off, const void *buf,
                           uint32_t len)
{
    return vcx_qbuf_rw(s, b, off, (void *)buf, len, true);
}

/* QUERY_* outputs: the PAS list, as far as the output has room; returns entries written. */
uint32_t vcx_qbuf_query_pas(const VcxQBuf *b, uint8_t *out, uint32_t room_bytes)
{
    uint32_t n = MIN(room_bytes / VCX_PAS_SIZE, b->npas);

    for (uint32_t i = 0; i < n; i++) {
        vcx_set64(out + i * VCX_PAS_SIZE, VCX_FLD(0, 64), b->pas[i]);
    }
    return n;
}

/* A doorbell record counter: one aligned big-endian dword in guest memory. */
MemTxResult vcx_dbr_read(VcxState *s, uint64_t addr, uint32_t *val)
{
    uint8_t b[4];
    MemTxResult r = pci_dma_read(vcx_pci(s), addr, b, sizeof(b));

    *val = r == MEMTX_OK ? vcx_be32_load(b) : 0;
    return r;
}

/*
 * Lifecycle
 */

void vcx_obj_init(VcxState *s)
{
    VcxObjects *o = g_new0(VcxObjects, 1);

    vcx_obj_table_init(&o->pds, 1u << VCX_LOG_MAX_PD, 1);
    /*
     * MKEY index 1 is never handed out: with a key byte of 0 it would be 0x100, the lkey
     * that ends a receive scatter list (MLX5_INVALID_LKEY). mlx5e creates its first MKEY
     * with key 0 and posts it in every receive WQE.
     */
    vcx_obj_table_init(&o->mkeys, 1u << VCX_LOG_MAX_MKEY, 2);
    vcx_obj_table_init(&o->cqs, 1u << VCX_LOG_MAX_CQ, 1);
    vcx_obj_table_init(&o->qps, 1u << VCX_LOG_MAX_QP, VCX_FIRST_QPN);
    vcx_obj_table_init(&o->srqs, 1u << VCX_LOG_MAX_SRQ, 1);
    vcx_obj_table_init(&o->xrcds, 1u << VCX_LOG_MAX_XRCD, 1);
    s->objs = o;
    vcx_xport_init(s);
    vcx_nic_init(s);
    vcx_roce_init(s);
}

/* Drop every object, users before what they use. */
void vcx_obj_reset(VcxState *s)
{
    VcxObjects *o = s->objs;

    if (!o) {
        return;
    }
    vcx_nic_reset(s);           /* SQs and RQs hold CQs and PDs */
    vcx_roce_reset(s);
    VCX_OBJ_TABLE_DRAIN(s, &o->qps, vcx_qp_free);
    VCX_OBJ_TABLE_DRAIN(s, &o->srqs, vcx_srq_free);
    VCX_OBJ_TABLE_DRAIN(s, &o->cqs, vcx_cq_free);
    VCX_OBJ_TABLE_DRAIN(s, &o->mkeys, vcx_mkey_free);
    VCX_OBJ_TABLE_DRAIN(s, &o->pds, vcx_pd_free);
    VCX_OBJ_TABLE_DRAIN(s, &o->xrcds, vcx_xrcd_free);
    trace_vcx_obj_reset();
}

void vcx_obj_free(VcxState *s)
{
    VcxObjects *o = s->objs;

    if (!o) {
        return;
    }
    vcx_obj_reset(s);
    vcx_nic_free(s);
    vcx_roce_fini(s);
    vcx_xport_fini(s);
    g_free(o->pds.slot);
    g_free(o->mkeys.slot);
    g_free(o->cqs.slot);
    g_free(o->qps.slot);
    g_free(o->srqs.slot);
    g_free(o->xrcds.slot);
    g_free(o);
    s->objs = NULL;
}

/* For the monitor's state property and TEARDOWN_HCA. */
uint32_t vcx_obj_count(VcxState *s)
{
    VcxObjects *o = s->objs;

    return o ? o->pds.count + o->mkeys.count + o->cqs.count + o->qps.count +
               o->srqs.count + o->xrcds.count + vcx_nic_count(s) : 0;
}

/* The kind of object, if any, created on UAR page uar (DEALLOC_UAR refuses then). */
VcxUarUser vcx_obj_uar_user(VcxState *s, uint32_t uar)
{
    VcxObjects *o = s->objs;

    for (uint32_t n = 0; o && n < o->cqs.size; n++) {
        VcxCq *cq = o->cqs.slot[n];

        if (cq && cq->uar_page == uar) {
            return VCX_UAR_USER_CQ;
        }
    }
    for (uint32_t n = 0; o && n < o->qps.size; n++) {
        VcxQp *qp = o->qps.slot[n];

        /* an XRC target rings no doorbell; mlx5_ib leaves its uar_page 0 */
        if (qp && qp->uar_page == uar && !vcx_qp_is_xrc_tgt(qp)) {
            return VCX_UAR_USER_QP;
        }
    }
    if (o && vcx_nic_uar_in_use(s, uar)) {
        return VCX_UAR_USER_QP;         /* an Ethernet SQ rings it as a QP does */
    }
    return VCX_UAR_USER_NONE;
}

/* UAR doorbells of RDMA objects: the CQ doorbell and the BlueFlame registers. */
bool vcx_obj_uar_write(VcxState *s, uint32_t uar, uint32_t offset, uint64_t data,
                       unsigned size)
{
    if (offset == VCX_UAR_CQ_DOORBELL) {
        if (size != 8) {
            qemu_log_mask(LOG_GUEST_ERROR, "vcx: UAR %u CQ doorbell written with %u bytes, "
                          "expected 8: ignored\n", uar, size);
            trace_vcx_err_uar_access(uar, offset, size);
            return true;
        }
        vcx_cq_doorbell(s, uar, data);
        return true;
    }
    if (offset >= VCX_UAR_BF_OFFSET &&
        offset < VCX_UAR_BF_OFFSET + VCX_UAR_BFREGS_PER_PAGE * VCX_UAR_BF_REG_SIZE) {
        vcx_xport_sq_doorbell(s, uar, offset, data, size);
        return true;
    }
    return false;
}
