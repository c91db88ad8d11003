/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vcx: driver-private state.
 */
#ifndef VCX_H
#define VCX_H

#include <linux/pci.h>
#include <linux/types.h>

#include "vcx/prm-iseg.h"

#define VCX_DRV_NAME "vcx"

struct vcx_dev {
	struct pci_dev *pdev;
	void __iomem *iseg;		/* BAR0 offset 0: the initialization segment */
	u16 fw_major, fw_minor, fw_subminor;
	u16 cmdif_rev;
};

static inline u32 vcx_iseg_read(struct vcx_dev *vdev, u32 offset)
{
	return ioread32be(vdev->iseg + offset);
}

static inline void vcx_iseg_write(struct vcx_dev *vdev, u32 offset, u32 value)
{
	iowrite32be(value, vdev->iseg + offset);
}

#endif /* VCX_H */
