/*
 * vcx: virtual ConnectX-class RDMA HCA (PCI glue).
 *
 * The device speaks a subset of the ConnectX programming interface (mlx5 PRM): BAR0 holds
 * the initialization segment, the MSI-X table and PBA and the UAR doorbell pages, laid
 * out as on a ConnectX PF (include/vcx/prm-iseg.h).
 *
 * Files: vcx.c PCI glue, properties, reset and monitor state; vcx-iseg.c init segment;
 * vcx-cmdq.c command queue and command table; vcx-cmd-hca.c HCA lifecycle, ISSI, caps,
 * adapter; vcx-pages.c firmware pages; vcx-eq.c event queues; vcx-uar.c UAR pages;
 * vcx-port.c port registers and vport; vcx-roce.c RoCE address (GID) table; vcx-obj.c
 * and the files it names, RDMA objects and the transport engine.
 *
 * Usage:
 *   -device vcx[,netdev=ID][,cx5-id=on][,fw-major=16,fw-minor=35,fw-subminor=1000]
 *              [,msix-vectors=64][,init-delay-ms=10][,mac=52:54:00:12:34:56]
 *              [,boot-pages=16,init-pages=64,regular-pages=0][,link=on]
 *              [,loopback-frames=off]
 *
 * Properties:
 *   cx5-id         present the PCI id of a ConnectX-5 PF (15b3:1017) instead of the
 *                  experimental id 1af4:10f0 that no stock driver claims (default off)
 *   fw-major, fw-minor, fw-subminor
 *                  firmware revision reported in the init segment and health buffer
 *   msix-vectors   MSI-X table size (2..64, default 64 as on a ConnectX-5)
 *   init-delay-ms  how long the "initializing" bit stays set after a reset (default 10)
 *   mac            permanent MAC address of the port (default: QEMU's next free one)
 *   netdev         the QEMU netdev the port's wire is attached to (any backend: user,
 *                  socket, dgram, tap, hubport, ...), as for virtio-net or e1000e; frames
 *                  the SQs send leave there and frames arriving there go through the
 *                  port's steering (hw-model/nic/). Without it the port has no wire:
 *                  frames only loop back inside the device (to its own MAC, multicast and
 *                  broadcast) and nothing arrives from outside
 *   boot-pages, init-pages, regular-pages
 *                  pages firmware asks for in QUERY_PAGES boot / init / regular
 *                  (defaults 16, 64, 0)
 *   cmd-exec-to-ms   command timeout advertised at init segment 0xff8 (default 0: the
 *                    driver's own default)
 *   loopback-frames  QPs of the port talk to each other through RoCEv2 frames looped
 *                    inside the device (roce/vcx-roce-dev.c) instead of whole messages
 *                    (default off: about ten times the bandwidth)
 *
 * Run-time properties (qom-set / qom-get on the device, e.g. /machine/peripheral/vcx0):
 *   link             bool, port carrier; a change sends a port change EQE (default on).
 *                    The carrier is this AND the netdev's link (set_link on the backend
 *                    or on the device's id) AND PAOS admin up
 *   health-syndrome  uint8, non-zero forces that fatal syndrome into the health buffer;
 *                    firmware then stops answering commands, until reset
 *   page-request     int32, set: ask the driver for (or, negative, return) that many
 *                    pages with a page request EQE; get: pages still missing
 *   cmd-stall        uint32, fault injection: the next N commands rung are never
 *                    answered (the entry stays device-owned), as hung firmware; reset
 *                    clears it
 *   qp-error         uint32, write-only fault injection: the QP of that number fails as
 *                    on a WQ catastrophic error (WQ_CATAS_ERROR event, QP to ERR, its
 *                    work flushed)
 *   state            string, read-only: ISSI, HCA state, pages, UARs, EQs, RDMA objects
 *                    alive per type (pds, mkeys, cqs, qps, srqs, xrcds), UD multicast
 *                    groups in use (mcgs), QP1 counters, the
 *                    transport executor's runs so far and QPs queued for it, the NIC
 *                    objects (tds, tises, tirs, rqts, sqs, rqs, fts, fgs, ftes,
 *                    qcounters) and frame counts (nic_tx, nic_rx, nic_rx_drop,
 *                    roce_rx_drop)
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/module.h"
#include "qapi/error.h"
#include "hw/pci/msix.h"
#include "hw/pci/pcie.h"
#include "hw/qdev-properties.h"
#include "qapi/visitor.h"
#include "migration/vmstate.h"
#include "vcx.h"
#include "vcx-obj.h"
#include "nic/vcx-nic.h"
#include "trace.h"

#define VCX_ISEG_REGION_SIZE   VCX_MSIX_TABLE_OFFSET
#define VCX_UAR_REGION_OFFSET  (VCX_FIRST_UAR_INDEX * VCX_UAR_PAGE_SIZE)
#define VCX_PCIE_CAP_OFFSET    0x60

static void vcx_init_timer_cb(void *opaque)
{
    VcxState *s = opaque;

    s->iseg.initializing = false;
    trace_vcx_init_done();
}

/* Firmware state: no objects, no pages, HCA disabled, ISSI 0, default capabilities. */
static void vcx_firmware_reset(VcxState *s)
{
    vcx_obj_reset(s);
    vcx_eq_reset(s);
    vcx_uar_reset(s);
    vcx_pages_reset(s);
    vcx_caps_init(s);
    vcx_port_reset(s);
    s->issi = 0;
    s->hca_state = VCX_HCA_DISABLED;
}

/* Power-on, system reset and function level reset all return the device to this state. */
static void vcx_device_reset(VcxState *s, const char *kind)
{
    trace_vcx_reset(kind);
    vcx_iseg_reset(s);
    vcx_firmware_reset(s);
    msix_unuse_all_vectors(PCI_DEVICE(s));
    for (uint32_t v = 0; v < s->params.msix_vectors; v++) {
        msix_vector_use(PCI_DEVICE(s), v);
    }
    timer_mod(s->init_timer,
              qemu_clock_get_ms(QEMU_CLOCK_VIRTUAL) + s->params.init_delay_ms);
}

/*
 * Resets and the device's own DMA. A DMA or MSI-X write of the device that lands in its
 * own config space (through the host bridge's ECAM window, which QEMU's re-entrancy
 * guard does not cover: the region belongs to the bridge) is refused in
 * vcx_write_config(), so it cannot FLR the device in the middle of a transfer or a
 * command. A reset that still reaches the device while it is working (vcx_busy(): its
 * DMA wrote a bridge's secondary bus reset, say) is deferred: PCI core has reset the
 * config space already (bus mastering off, so further DMA fails), and the device's own
 * state is dropped by reset_bh once the handler or executor run on the stack returned.
 * The executor and the command queue stop early while a reset is pending.
 */
static void vcx_reset_bh(void *opaque)
{
    VcxState *s = opaque;

    if (s->reset_pending) {
        s->reset_pending = false;
        vcx_device_reset(s, "deferred");
    }
}

static void vcx_qdev_reset(DeviceState *dev)
{
    VcxState *s = VCX(dev);

    if (vcx_busy(s)) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: reset while the device executes (reached "
                      "from its own DMA or MSI-X): deferred until the step returns\n");
        trace_vcx_err_reset_deferred();
        s->reset_pending = true;
        qemu_bh_schedule(s->reset_bh);
        return;
    }
    s->reset_pending = false;
    vcx_device_reset(s, "system");
}

static void vcx_write_config(PCIDevice *pci, uint32_t addr, uint32_t val, int len)
{
    VcxState *s = VCX(pci);

    if (vcx_busy(s)) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: config write at 0x%x (%d bytes, 0x%x) by the "
                      "device's own DMA or MSI-X message: refused\n", addr, len, val);
        trace_vcx_err_config_self(addr, val, len);
        return;
    }
    pci_default_write_config(pci, addr, val, len);
    /* Calls pci_device_reset() (and so vcx_qdev_reset) when FLR is initiated. */
    pcie_cap_flr_write_config(pci, addr, val, len);
}

/*
 * Monitor work that can DMA or raise MSI-X (qp-error, link, page-request) runs with the
 * re-entrancy guard engaged, as the executor's guarded bottom half does: its DMA cannot
 * reach the device's own MMIO (a command run from inside it) and its config writes are
 * refused.
 */
static bool vcx_guard_enter(VcxState *s)
{
    MemReentrancyGuard *g = &DEVICE(s)->mem_reentrancy_guard;
    bool was = g->engaged_in_io;

    g->engaged_in_io = true;
    return was;
}

static void vcx_guard_leave(VcxState *s, bool was)
{
    DEVICE(s)->mem_reentrancy_guard.engaged_in_io = was;
}

/*
 * The netdev: frames in are queued for the executor (nic/vcx-nic-rx.c), a link change
 * reaches the port like a change of the "link" property.
 */
static bool vcx_net_can_receive(NetClientState *nc)
{
    return vcx_nic_can_receive(qemu_get_nic_opaque(nc));
}

static ssize_t vcx_net_receive(NetClientState *nc, const uint8_t *buf, size_t size)
{
    return vcx_nic_receive(qemu_get_nic_opaque(nc), buf, size);
}

static void vcx_net_link_status_changed(NetClientState *nc)
{
    VcxState *s = qemu_get_nic_opaque(nc);
    bool was = vcx_guard_enter(s);

    vcx_port_link_changed(s);           /* port change EQE */
    vcx_guard_leave(s, was);
    if (!nc->link_down) {
        qemu_flush_queued_packets(nc);
    }
}

static NetClientInfo vcx_net_info = {
    .type = NET_CLIENT_DRIVER_NIC,
    .size = sizeof(NICState),
    .can_receive = vcx_net_can_receive,
    .receive = vcx_net_receive,
    .link_status_changed = vcx_net_link_status_changed,
};

static void vcx_realize(PCIDevice *pci, Error **errp)
{
    VcxState *s = VCX(pci);
    uint16_t vendor = s->params.cx5_id ? VCX_MLX_PCI_VENDOR_ID : VCX_PCI_VENDOR_ID;
    uint16_t device = s->params.cx5_id ? VCX_CX5_PCI_DEVICE_ID : VCX_PCI_DEVICE_ID;
    int ret;

    if (s->params.msix_vectors < 2 || s->params.msix_vectors > VCX_MSIX_VECTORS) {
        error_setg(errp, "vcx: msix-vectors must be 2..%u", VCX_MSIX_VECTORS);
        return;
    }
    if (s->params.log_cmdq_size > 5 ||
        s->params.log_cmdq_stride < 6 ||
        s->params.log_cmdq_size + s->params.log_cmdq_stride > 12) {
        error_setg(errp, "vcx: command queue must fit one 4 KiB page with at most 32 "
                   "entries of at least 64 bytes");
        return;
    }

    qemu_macaddr_default_if_unset(&s->conf.macaddr);

    pci_config_set_vendor_id(pci->config, vendor);
    pci_config_set_device_id(pci->config, device);
    pci_config_set_class(pci->config, PCI_CLASS_NETWORK_ETHERNET);
    pci_config_set_interrupt_pin(pci->config, 1);

    memory_region_init(&s->bar0, OBJECT(s), "vcx-bar0", VCX_BAR0_SIZE);
    memory_region_init_io(&s->iseg_mr, OBJECT(s), &vcx_iseg_ops, s, "vcx-iseg",
                          VCX_ISEG_REGION_SIZE);
    memory_region_add_subregion(&s->bar0, 0, &s->iseg_mr);
    memory_region_init_io(&s->uar_mr, OBJECT(s), &vcx_uar_ops, s, "vcx-uar",
                          VCX_BAR0_SIZE - VCX_UAR_REGION_OFFSET);
    memory_region_add_subregion(&s->bar0, VCX_UAR_REGION_OFFSET, &s->uar_mr);
    pci_register_bar(pci, 0, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64 | PCI_BASE_ADDRESS_MEM_PREFETCH,
                     &s->bar0);

    ret = msix_init(pci, s->params.msix_vectors,
                    &s->bar0, 0, VCX_MSIX_TABLE_OFFSET,
                    &s->bar0, 0, VCX_MSIX_PBA_OFFSET, 0, errp);
    if (ret) {
        return;
    }

    if (pcie_endpoint_cap_init(pci, VCX_PCIE_CAP_OFFSET) < 0) {
        error_setg(errp, "vcx: cannot add the PCIe capability");
        msix_uninit(pci, &s->bar0, &s->bar0);
        return;
    }
    pcie_cap_flr_init(pci);

    vcx_pages_init(s);
    vcx_uar_init(s);
    vcx_obj_init(s);
    if (s->conf.peers.ncs[0]) {
        /* frames arriving re-enter nothing: the callback only queues them */
        s->nic = qemu_new_nic(&vcx_net_info, &s->conf, object_get_typename(OBJECT(s)),
                              DEVICE(s)->id, &DEVICE(s)->mem_reentrancy_guard, s);
        qemu_format_nic_info_str(qemu_get_queue(s->nic), s->conf.macaddr.a);
    }

    s->init_timer = timer_new_ms(QEMU_CLOCK_VIRTUAL, vcx_init_timer_cb, s);
    /* not guarded: it runs outside the device's handlers and does no DMA */
    s->reset_bh = qemu_bh_new(vcx_reset_bh, s);
    trace_vcx_realize(vendor, device, s->params.msix_vectors);
}

static void vcx_exit(PCIDevice *pci)
{
    VcxState *s = VCX(pci);

    timer_free(s->init_timer);
    qemu_bh_delete(s->reset_bh);
    if (s->nic) {
        qemu_del_nic(s->nic);
        s->nic = NULL;
    }
    vcx_obj_free(s);
    vcx_eq_reset(s);
    vcx_pages_free(s);
    vcx_uar_free(s);
    pcie_cap_exit(pci);
    msix_uninit(pci, &s->bar0, &s->bar0);
}

static const Property vcx_properties[] = {
    DEFINE_PROP_BOOL("cx5-id", VcxState, params.cx5_id, false),
    DEFINE_PROP_UINT16("fw-major", VcxState, params.fw_major, 16),
    DEFINE_PROP_UINT16("fw-minor", VcxState, params.fw_minor, 35),
    DEFINE_PROP_UINT16("fw-subminor", VcxState, params.fw_subminor, 1000),
    DEFINE_PROP_UINT32("msix-vectors", VcxState, params.msix_vectors, VCX_MSIX_VECTORS),
    DEFINE_PROP_UINT32("init-delay-ms", VcxState, params.init_delay_ms, 10),
    DEFINE_PROP_UINT8("log-cmdq-size", VcxState, params.log_cmdq_size, 5),
    DEFINE_PROP_UINT8("log-cmdq-stride", VcxState, params.log_cmdq_stride, 6),
    DEFINE_PROP_UINT32("boot-pages", VcxState, params.boot_pages, 16),
    DEFINE_PROP_UINT32("init-pages", VcxState, params.init_pages, 64),
    DEFINE_PROP_UINT32("regular-pages", VcxState, params.regular_pages, 0),
    DEFINE_NIC_PROPERTIES(VcxState, conf),     /* "mac" and "netdev" */
    DEFINE_PROP_UINT32("cmd-exec-to-ms", VcxState, params.cmd_exec_to_ms, 0),
    DEFINE_PROP_BOOL("loopback-frames", VcxState, params.loopback_frames, false),
};

/*
 * Monitor: run-time QOM properties
 */

static char *vcx_get_state(Object *obj, Error **errp)
{
    VcxState *s = VCX(obj);
    uint32_t boot, init, regular;
    g_autofree char *nic = vcx_nic_state(s);
    g_autofree char *roce = vcx_roce_state(s);

    vcx_pages_by_stage(s, &boot, &init, &regular);
    return g_strdup_printf("issi=%u hca=%s health=0x%02x link=%s pages=%u "
                           "pages_boot=%u pages_init=%u pages_regular=%u "
                           "pages_wanted=%d uars=%u eqs=%u gids=%u cmds=%" PRIu64
                           " pds=%u mkeys=%u cqs=%u qps=%u srqs=%u xrcds=%u mcgs=%u"
                           " qp1=0x%x qp1_sent=%" PRIu64 " qp1_received=%" PRIu64
                           " xport_runs=%" PRIu64 " xport_queued=%u %s %s",
                           s->issi, vcx_hca_state_name(s->hca_state),
                           s->iseg.health_syndrome, vcx_port_oper_up(s) ? "up" : "down",
                           vcx_pages_held(s), boot, init, regular,
                           vcx_pages_outstanding(s), s->num_uars, s->num_eqs,
                           s->port.num_gids,
                           s->cmds_executed,
                           s->objs->pds.count, s->objs->mkeys.count, s->objs->cqs.count,
                           s->objs->qps.count, s->objs->srqs.count,
                           s->objs->xrcds.count, vcx_roce_mcg_count(s),
                           s->objs->qp1 ? s->objs->qp1->qpn : 0,
                           s->objs->qp1_sent, s->objs->qp1_received,
                           s->objs->runs, vcx_xport_queued(s), nic, roce);
}

static bool vcx_get_link(Object *obj, Error **errp)
{
    return VCX(obj)->port.link_up;
}

static void vcx_set_link(Object *obj, bool value, Error **errp)
{
    VcxState *s = VCX(obj);
    bool was = vcx_guard_enter(s);

    vcx_port_set_link(s, value);        /* port change EQE */
    vcx_guard_leave(s, was);
}

static void vcx_get_health(Object *obj, Visitor *v, const char *name, void *opaque,
                           Error **errp)
{
    uint8_t synd = VCX(obj)->iseg.health_syndrome;

    visit_type_uint8(v, name, &synd, errp);
}

static void vcx_set_health(Object *obj, Visitor *v, const char *name, void *opaque,
                           Error **errp)
{
    uint8_t synd;

    if (visit_type_uint8(v, name, &synd, errp)) {
        vcx_health_set_syndrome(VCX(obj), synd);
    }
}

static void vcx_get_cmd_stall(Object *obj, Visitor *v, const char *name, void *opaque,
                              Error **errp)
{
    visit_type_uint32(v, name, &VCX(obj)->iseg.cmd_stall, errp);
}

static void vcx_set_cmd_stall(Object *obj, Visitor *v, const char *name, void *opaque,
                              Error **errp)
{
    visit_type_uint32(v, name, &VCX(obj)->iseg.cmd_stall, errp);
}

static void vcx_set_qp_error(Object *obj, Visitor *v, const char *name, void *opaque,
                             Error **errp)
{
    VcxState *s = VCX(obj);
    uint32_t qpn;
    bool was, found;

    if (!visit_type_uint32(v, name, &qpn, errp)) {
        return;
    }
    was = vcx_guard_enter(s);
    found = vcx_xport_qp_fault(s, qpn);         /* WQ catastrophic EQE, QP to ERR */
    vcx_guard_leave(s, was);
    if (!found) {
        error_setg(errp, "vcx: no QP 0x%x", qpn);
    }
}

static void vcx_get_page_request(Object *obj, Visitor *v, const char *name, void *opaque,
                                 Error **errp)
{
    int32_t wanted = vcx_pages_outstanding(VCX(obj));

    visit_type_int32(v, name, &wanted, errp);
}

static void vcx_set_page_request(Object *obj, Visitor *v, const char *name, void *opaque,
                                 Error **errp)
{
    VcxState *s = VCX(obj);
    int32_t npages;

    if (visit_type_int32(v, name, &npages, errp)) {
        bool was = vcx_guard_enter(s);

        vcx_pages_request(s, npages, errp);     /* page request EQE */
        vcx_guard_leave(s, was);
    }
}

static void vcx_instance_init(Object *obj)
{
    VCX(obj)->port.link_up = true;
    object_property_add_str(obj, "state", vcx_get_state, NULL);
    object_property_add_bool(obj, "link", vcx_get_link, vcx_set_link);
    object_property_add(obj, "health-syndrome", "uint8", vcx_get_health, vcx_set_health,
                        NULL, NULL);
    object_property_add(obj, "page-request", "int32", vcx_get_page_request,
                        vcx_set_page_request, NULL, NULL);
    object_property_add(obj, "cmd-stall", "uint32", vcx_get_cmd_stall,
                        vcx_set_cmd_stall, NULL, NULL);
    object_property_add(obj, "qp-error", "uint32", NULL, vcx_set_qp_error, NULL, NULL);
    vcx_roce_fault_prop_init(VCX(obj));
}

static void vcx_instance_finalize(Object *obj)
{
    vcx_roce_fault_prop_fini(VCX(obj));
}

/* Guest RAM holds the command queue and, later, all queue state: not migratable yet. */
static const VMStateDescription vcx_vmstate = {
    .name = TYPE_VCX,
    .unmigratable = 1,
};

static void vcx_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(klass);

    pc->realize = vcx_realize;
    pc->exit = vcx_exit;
    pc->config_write = vcx_write_config;
    pc->vendor_id = VCX_PCI_VENDOR_ID;
    pc->device_id = VCX_PCI_DEVICE_ID;
    pc->class_id = PCI_CLASS_NETWORK_ETHERNET;
    pc->revision = 0;

    dc->desc = "vcx virtual ConnectX-class RDMA HCA";
    set_bit(DEVICE_CATEGORY_NETWORK, dc->categories);
    device_class_set_props(dc, vcx_properties);
    device_class_set_legacy_reset(dc, vcx_qdev_reset);
    dc->vmsd = &vcx_vmstate;
}

static const TypeInfo vcx_info = {
    .name = TYPE_VCX,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(VcxState),
    .instance_init = vcx_instance_init,
    .instance_finalize = vcx_instance_finalize,
    .class_init = vcx_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_PCIE_DEVICE },
        { }
    },
};

static void vcx_register_types(void)
{
    type_register_static(&vcx_info);
}

type_init(vcx_register_types)
