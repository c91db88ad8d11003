/*
 * vcx: virtual ConnectX-class RDMA HCA, device state shared by the hw/vcx files.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_VCX_VCX_H
#define HW_VCX_VCX_H

#include "hw/pci/pci_device.h"
#include "net/net.h"
#include "qemu/timer.h"
#include "qom/object.h"
#include "vcx/prm-iseg.h"
#include "vcx/prm-cmd.h"

/*
 * A stack buffer the code fills before it reads it (a frame, a bounce of payload).
 * QEMU builds with -ftrivial-auto-var-init=zero, which otherwise clears the whole
 * buffer at every call: for the packet path's 4 KiB buffers that clearing was a tenth
 * of the device's time (a profile of looped frames).
 */
#if defined(__has_attribute) && __has_attribute(uninitialized)
#define VCX_NOINIT __attribute__((uninitialized))
#else
#define VCX_NOINIT
#endif

#define TYPE_VCX "vcx"
OBJECT_DECLARE_SIMPLE_TYPE(VcxState, VCX)

/* Limits of what the device implements; reported in the capabilities. */
#define VCX_MAX_EQS             64      /* EQ numbers 0..63 (max_num_eqs) */
#define VCX_LOG_MAX_EQ          6
#define VCX_LOG_MAX_EQ_SZ       15      /* up to 32768 EQEs (2 MiB) per EQ */
#define VCX_MAX_LOG_PAGE_SIZE   18      /* EQ buffer pages up to 1 GiB (log_page_size) */
#define VCX_MAX_PAGES           (1u << 18)  /* 1 GiB of firmware pages held at once */
#define VCX_MAX_MTU             9216    /* PMTU max_mtu, bytes including L2 headers */
#define VCX_MIN_MTU             68
#define VCX_CMD_MAX_LEN         (2u << 20)  /* longest command input or output, bytes */
#define VCX_PORT_NUM            1       /* the one physical port */
#define VCX_GID_TABLE_SIZE      256     /* RoCE address table (roce_address_table_size) */

/* User-settable properties (see the header comment of vcx.c). */
typedef struct VcxParams {
    bool     cx5_id;            /* present 15b3:1017 instead of 1af4:10f0 */
    uint16_t fw_major;
    uint16_t fw_minor;
    uint16_t fw_subminor;
    uint32_t msix_vectors;
    uint32_t init_delay_ms;     /* how long the initializing bit stays set after reset */
    uint8_t  log_cmdq_size;     /* command queue geometry the device reports */
    uint8_t  log_cmdq_stride;
    uint32_t boot_pages;        /* pages wanted by QUERY_PAGES boot / init / regular */
    uint32_t init_pages;
    uint32_t regular_pages;
    uint32_t cmd_exec_to_ms;    /* default command timeout reported at iseg 0xff8 */
    bool     loopback_frames;   /* QPs of the port talk through RoCEv2 frames */
} VcxParams;

/* Initialization segment state (PRM "Initialization Segment"). */
typedef struct VcxIseg {
    uint64_t cmdq_addr;         /* as last written, bits 63:12 */
    uint32_t nic_interface;     /* written mode, iseg 0x014 [9:8] */
    bool     initializing;      /* iseg 0x1fc bit 31 */
    uint8_t  health_syndrome;   /* 0: healthy */
    int64_t  health_epoch_ms;   /* counter origin, so it restarts at reset */
    uint32_t cmd_stall;         /* fault injection: rung commands left unanswered */
} VcxIseg;

/* Function state as firmware tracks it (ENABLE/INIT/TEARDOWN/DISABLE_HCA). */
typedef enum VcxHcaState {
    VCX_HCA_DISABLED,
    VCX_HCA_ENABLED,
    VCX_HCA_INITIALIZED,
} VcxHcaState;

/* Capability pages the device reports (QUERY_HCA_CAP) and lets the driver set. */
typedef enum VcxCapSlot {
    VCX_CAP_SLOT_GENERAL,
    VCX_CAP_SLOT_ROCE,
    VCX_CAP_SLOT_ATOMIC,
    VCX_CAP_SLOT_ETH,           /* ETHERNET_OFFLOADS */
    VCX_CAP_SLOT_FT,            /* FLOW_TABLE (NIC) */
    VCX_CAP_SLOTS,
} VcxCapSlot;

/* Firmware pages given by MANAGE_PAGES; each address is held at most once. */
typedef struct VcxPages {
    GHashTable *held;           /* uint64_t address -> itself */
    int32_t  runtime_request;   /* pages asked for at run time (page request events) */
} VcxPages;

/* An event queue (PRM "Event Queue"). */
typedef struct VcxEq {
    bool     valid;
    uint8_t  log_size;
    uint8_t  log_page_size;     /* log2(page size) - 12 */
    uint8_t  page_offset;       /* 64-byte units */
    uint8_t  state;             /* VCX_EQ_STATE_ARMED / FIRED / ALWAYS_ARMED */
    uint8_t  status;            /* VCX_EQC_STATUS_* */
    bool     oi;                /* overrun ignore */
    bool     ec;
    uint16_t intr;              /* MSI-X vector */
    uint32_t uar_page;
    uint64_t event_bitmask;     /* bit n: event type n */
    uint32_t cons;              /* consumer counter, 24 bits, from the doorbell */
    uint32_t prod;              /* producer counter, 24 bits */
    uint32_t npas;
    uint64_t *pas;              /* page addresses of the EQ buffer */
} VcxEq;

/* Port and NIC vport state (PAOS, PMTU, PTYS, nic_vport_context). */
typedef struct VcxPort {
    bool     link_up;           /* carrier, from the "link" property */
    uint8_t  admin_status;      /* PAOS admin_status: VCX_PORT_STATUS_UP / DOWN */
    bool     oper_up;           /* last reported operational state */
    uint8_t  paos_e;            /* PAOS event generation mode */
    uint16_t admin_mtu;         /* PMTU */
    uint32_t eth_proto_admin;   /* PTYS */
    bool     an_disable_admin;
    uint8_t  host_endianness;   /* HOST_ENDIANNESS register */
    char     node_desc[64];     /* NODE_DESC register */
    bool     roce_en;           /* nic_vport_context */
    uint16_t vport_mtu;
    uint8_t  mac[6];
    /*
     * RoCE address table: roce_addr_layout entries as SET_ROCE_ADDRESS stored them; an
     * entry is valid when its GID is not all zeros.
     */
    uint8_t  gid[VCX_GID_TABLE_SIZE][VCX_GID_ENTRY_SIZE];
    uint32_t num_gids;          /* valid entries */
} VcxPort;

/*
 * The physical port's counters (nic/vcx-nic-pcnt.c, register PPCNT): raw counts since
 * the device's reset, and per PPCNT group the values at its last clear.
 */
#define VCX_PCNT_BINS           10      /* RFC 2819 frame size bins */
#define VCX_PCNT_GROUPS         6
enum {
    VCX_PC_TX_FRAMES, VCX_PC_TX_OCTETS, VCX_PC_TX_MC, VCX_PC_TX_BC,
    VCX_PC_RX_FRAMES, VCX_PC_RX_OCTETS, VCX_PC_RX_MC, VCX_PC_RX_BC,
    VCX_PC_RX_UNDERSIZE, VCX_PC_RX_TOO_LONG, VCX_PC_RX_ERR_OCTETS, VCX_PC_RX_DISCARDS,
    VCX_PC_RX_BIN,
    /* per priority (VLAN PCP) from here */
    VCX_PC_PRIO_RX_FRAMES = VCX_PC_RX_BIN + VCX_PCNT_BINS,
    VCX_PC_PRIO_RX_OCTETS = VCX_PC_PRIO_RX_FRAMES + 8,
    VCX_PC_PRIO_TX_FRAMES = VCX_PC_PRIO_RX_OCTETS + 8,
    VCX_PC_PRIO_TX_OCTETS = VCX_PC_PRIO_TX_FRAMES + 8,
    VCX_PC_PRIO_RX_DISCARDS = VCX_PC_PRIO_TX_OCTETS + 8,
    VCX_PC_LINK_DOWN = VCX_PC_PRIO_RX_DISCARDS + 8,
    VCX_PC_NUM
};

typedef struct VcxPortCnt {
    uint64_t c[VCX_PC_NUM];
    uint64_t base[VCX_PCNT_GROUPS][VCX_PC_NUM];
    int64_t cleared_ms[VCX_PCNT_GROUPS];        /* QEMU_CLOCK_VIRTUAL */
} VcxPortCnt;

typedef enum VcxPcntRx {
    VCX_PCNT_RX_OK,
    VCX_PCNT_RX_DISCARD,        /* received, then dropped for want of resources */
    VCX_PCNT_RX_RUNT,           /* under 14 bytes */
    VCX_PCNT_RX_TOO_LONG,       /* over the largest frame */
} VcxPcntRx;

struct VcxState {
    PCIDevice parent_obj;

    VcxParams params;
    NICConf conf;               /* netdev= and mac= (the port's permanent address) */
    NICState *nic;              /* the port on a QEMU netdev, NULL without netdev= */

    MemoryRegion bar0;          /* container: iseg, MSI-X table/PBA, UAR pages */
    MemoryRegion iseg_mr;
    MemoryRegion uar_mr;

    VcxIseg iseg;
    QEMUTimer *init_timer;

    /* Firmware state, all dropped at reset. */
    VcxHcaState hca_state;
    uint16_t issi;
    uint8_t cap_max[VCX_CAP_SLOTS][VCX_HCA_CAP_SIZE];
    uint8_t cap_cur[VCX_CAP_SLOTS][VCX_HCA_CAP_SIZE];
    VcxPages pages;
    unsigned long *uars;        /* bitmap over UAR indices */
    uint32_t num_uars;
    VcxEq eqs[VCX_MAX_EQS];
    uint32_t num_eqs;
    VcxPort port;
    VcxPortCnt pcnt;
    struct VcxRoceFault *wire_fault;    /* the wire-fault property (roce/vcx-roce-dev.c) */
    uint64_t cmds_executed;     /* since creation, for the monitor */
    struct VcxObjects *objs;    /* RDMA objects and transport engine (vcx-obj.h) */
    /* A reset that arrived while the device was working (vcx.c vcx_qdev_reset). */
    bool reset_pending;
    QEMUBH *reset_bh;
};

/*
 * The PCI function, for DMA and MSI-X on the data path: PCI_DEVICE() checks the QOM type
 * at every call (QOM type checks took 1.5% of QEMU's samples in a profile of 64 KiB
 * SENDs).
 */
static inline PCIDevice *vcx_pci(VcxState *s)
{
    return &s->parent_obj;
}

/*
 * Firmware with a fatal health syndrome is dead: it answers no command (vcx-cmdq.c), and
 * its data path stops too, as on a failed board: no WQE is executed and no CQE or EQE is
 * written, so a driver that has given up on the function and freed its queues is never
 * written into.
 */
static inline bool vcx_fw_dead(VcxState *s)
{
    return s->iseg.health_syndrome != 0;
}

/*
 * The device is working: in one of its MMIO handlers or its executor bottom half (QEMU's
 * re-entrancy guard is engaged for them), or in monitor work that engaged it the same
 * way (vcx.c). Config writes and resets seen now come from the device's own DMA or
 * MSI-X messages.
 */
static inline bool vcx_busy(VcxState *s)
{
    return DEVICE(s)->mem_reentrancy_guard.engaged_in_io;
}

static inline bool vcx_cmdif_checksum_enabled(VcxState *s)
{
    return vcx_get(s->cap_cur[VCX_CAP_SLOT_GENERAL], VCX_CAP_GEN_CMDIF_CHECKSUM) ==
           VCX_CAP_CMDIF_CHECKSUM_ENABLED;
}

/* vcx-iseg.c */
extern const MemoryRegionOps vcx_iseg_ops;
/* the internal timer's rate (device_frequency_khz): it counts nanoseconds */
#define VCX_TIMER_KHZ           1000000u
uint64_t vcx_internal_timer(VcxState *s);
void vcx_iseg_reset(VcxState *s);
void vcx_health_set_syndrome(VcxState *s, uint8_t synd);

/* vcx-cmdq.c */
void vcx_cmdq_doorbell(VcxState *s, uint32_t mask);

/* vcx-cmd-hca.c */
void vcx_caps_init(VcxState *s);
const char *vcx_hca_state_name(VcxHcaState st);

/* vcx-pages.c */
void vcx_pages_init(VcxState *s);
void vcx_pages_reset(VcxState *s);
void vcx_pages_free(VcxState *s);
uint32_t vcx_pages_held(VcxState *s);
void vcx_pages_by_stage(VcxState *s, uint32_t *boot, uint32_t *init, uint32_t *regular);
bool vcx_pages_request(VcxState *s, int32_t npages, Error **errp);
int32_t vcx_pages_outstanding(VcxState *s);

/* vcx-uar.c */
extern const MemoryRegionOps vcx_uar_ops;
void vcx_uar_init(VcxState *s);
void vcx_uar_reset(VcxState *s);
void vcx_uar_free(VcxState *s);
bool vcx_uar_allocated(VcxState *s, uint32_t index);

/* vcx-eq.c */
void vcx_eq_reset(VcxState *s);
bool vcx_eq_uar_in_use(VcxState *s, uint32_t uar);
bool vcx_eq_subscribed(VcxState *s, uint8_t event_type);
bool vcx_eq_post_event(VcxState *s, uint8_t type, uint8_t sub_type, const uint8_t *data,
                       size_t len);
void vcx_eq_doorbell(VcxState *s, uint32_t uar, uint32_t offset, uint32_t value);

/* nic/vcx-nic-pcnt.c: the physical port's counters */
void vcx_pcnt_tx(VcxState *s, const uint8_t *f, uint32_t len);
void vcx_pcnt_rx(VcxState *s, const uint8_t *f, uint32_t len, VcxPcntRx what);
void vcx_pcnt_link_down(VcxState *s);
void vcx_pcnt_reset(VcxState *s);

/* vcx-port.c */
void vcx_port_reset(VcxState *s);
void vcx_port_set_link(VcxState *s, bool up);
void vcx_port_link_changed(VcxState *s);
bool vcx_port_oper_up(VcxState *s);
void vcx_gid_reset(VcxState *s);
const uint8_t *vcx_gid_entry(VcxState *s, uint32_t index);

/*
 * The IEEE 802.1Q TCI of frames from GID entry gid (roce_addr_layout): PCP prio (the
 * RC/UC path's eth_prio or the UD address vector's SL), DEI 0, the entry's vlan_id; the
 * return value says whether the entry has a VLAN (vlan_valid), i.e. whether they carry it.
 */
static inline bool vcx_gid_vlan_tci(const uint8_t *gid, uint8_t prio, uint16_t *tci)
{
    *tci = (prio & 7) << 13 | vcx_get(gid, VCX_GID_VLAN_ID);
    return vcx_get(gid, VCX_GID_VLAN_VALID);
}

/* vcx-cmd-hca.c: byte order of 8-byte atomics (atomic_req_8B_endianness_mode) */
bool vcx_atomic_big_endian(VcxState *s);

/* vcx-obj.c: RDMA objects (PD, MKEY, CQ, QP, SRQ/RMP) and the transport engine */
void vcx_obj_init(VcxState *s);
void vcx_obj_reset(VcxState *s);
void vcx_obj_free(VcxState *s);
uint32_t vcx_obj_count(VcxState *s);
typedef enum VcxUarUser {
    VCX_UAR_USER_NONE,
    VCX_UAR_USER_CQ,
    VCX_UAR_USER_QP,
} VcxUarUser;
VcxUarUser vcx_obj_uar_user(VcxState *s, uint32_t uar);
bool vcx_obj_uar_write(VcxState *s, uint32_t uar, uint32_t offset, uint64_t data,
                       unsigned size);
bool vcx_eq_post_to(VcxState *s, uint32_t eqn, uint8_t type, uint8_t sub_type,
                    const uint8_t *data, size_t len);

#endif /* HW_VCX_VCX_H */
