#ifndef HW_VCX_VCX_H
#define HW_VCX_VCX_H
#include "hw/pci/pci_device.h"
#include "qemu/timer.h"
#include "qom/object.h"
#include "vcx/prm-iseg.h"
#define TYPE_VCX "vcx"
OBJECT_DECLARE_SIMPLE_TYPE(VcxState, VCX)
typedef struct VcxParams {
    bool     cx5_id;
    uint16_t fw_major;
    uint16_t fw_minor;
    uint16_t fw_subminor;
    uint32_t msix_vectors;
    uint32_t init_delay_ms;
    uint8_t  log_cmdq_size;
    uint8_t  log_cmdq_stride;
} VcxParams;
typedef struct VcxIseg {
    uint64_t cmdq_addr;
    uint32_t nic_interface;
    bool     initializing;
    uint8_t  health_syndrome;
    int64_t  health_epoch_ms;
} VcxIseg;
struct VcxState {
    PCIDevice parent_obj;
    VcxParams params;
    MemoryRegion bar0;
    MemoryRegion iseg_mr;
    MemoryRegion uar_mr;
    VcxIseg iseg;
    QEMUTimer *init_timer;
};
extern const MemoryRegionOps vcx_iseg_ops;
void vcx_iseg_reset(VcxState *s);
void vcx_health_set_syndrome(VcxState *s, uint8_t synd);
#endif
