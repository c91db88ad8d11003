// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcx: PCI probe and removal.
 *
 * Probe follows a ConnectX driver's first steps (PRM "Initialization Segment"): map the
 * initialization segment, read the firmware revision, wait while the device reports
 * "initializing", and refuse a command interface revision other than 5.
 */
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/pci.h>

#include "vcx.h"

/* A ConnectX may take up to two minutes to come out of reset (pre-init timeout). */
#define VCX_FW_PRE_INIT_TIMEOUT_MS	120000
#define VCX_FW_INIT_WAIT_MS		2

static int vcx_wait_fw_init(struct vcx_dev *vdev, unsigned int timeout_ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(timeout_ms);
	u32 val;

	for (;;) {
		val = vcx_iseg_read(vdev, VCX_ISEG_INITIALIZING);
		if (val == 0xffffffff)
			return -ENODEV;	/* device fell off the bus */
		if (!(val & VCX_ISEG_INITIALIZING_BIT))
			return 0;
		if (time_after(jiffies, end))
			return -ETIMEDOUT;
		msleep(VCX_FW_INIT_WAIT_MS);
	}
}

static int vcx_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct vcx_dev *vdev;
	u32 val;
	int err;

	vdev = devm_kzalloc(&pdev->dev, sizeof(*vdev), GFP_KERNEL);
	if (!vdev)
		return -ENOMEM;
	vdev->pdev = pdev;
	pci_set_drvdata(pdev, vdev);

	err = pcim_enable_device(pdev);
	if (err)
		return dev_err_probe(&pdev->dev, err, "cannot enable PCI device\n");
	if (!(pci_resource_flags(pdev, 0) & IORESOURCE_MEM))
		return dev_err_probe(&pdev->dev, -ENODEV, "BAR0 is not a memory BAR\n");
	err = pci_request_regions(pdev, VCX_DRV_NAME);
	if (err)
		return dev_err_probe(&pdev->dev, err, "cannot request PCI regions\n");
	pci_set_master(pdev);
	err = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (err) {
		dev_err(&pdev->dev, "no usable 64-bit DMA mask\n");
		goto err_regions;
	}

	vdev->iseg = ioremap(pci_resource_start(pdev, 0), VCX_ISEG_SIZE);
	if (!vdev->iseg) {
		err = -ENOMEM;
		dev_err(&pdev->dev, "cannot map the initialization segment\n");
		goto err_regions;
	}

	val = vcx_iseg_read(vdev, VCX_ISEG_FW_REV);
	vdev->fw_major = val & 0xffff;
	vdev->fw_minor = val >> 16;
	val = vcx_iseg_read(vdev, VCX_ISEG_CMDIF_REV_FW_SUB);
	vdev->fw_subminor = val & 0xffff;
	vdev->cmdif_rev = val >> 16;

	err = vcx_wait_fw_init(vdev, VCX_FW_PRE_INIT_TIMEOUT_MS);
	if (err) {
		dev_err(&pdev->dev, "firmware did not finish initializing (%d)\n", err);
		goto err_unmap;
	}
	if (vdev->cmdif_rev != VCX_ISEG_CMDIF_REV) {
		err = -EOPNOTSUPP;
		dev_err(&pdev->dev, "command interface revision %u, driver supports %u\n",
			vdev->cmdif_rev, VCX_ISEG_CMDIF_REV);
		goto err_unmap;
	}

	dev_info(&pdev->dev, "firmware %u.%u.%u, command interface revision %u\n",
		 vdev->fw_major, vdev->fw_minor, vdev->fw_subminor, vdev->cmdif_rev);
	return 0;

err_unmap:
	iounmap(vdev->iseg);
err_regions:
	pci_release_regions(pdev);
	return err;
}

static void vcx_remove(struct pci_dev *pdev)
{
	struct vcx_dev *vdev = pci_get_drvdata(pdev);

	iounmap(vdev->iseg);
	pci_release_regions(pdev);
	dev_info(&pdev->dev, "removed\n");
}

static const struct pci_device_id vcx_pci_table[] = {
	{ PCI_DEVICE(VCX_PCI_VENDOR_ID, VCX_PCI_DEVICE_ID) },
#ifdef VCX_REAL_HW
	/* The real-hardware build also binds ConnectX-5 PFs; nothing else differs. */
	{ PCI_DEVICE(VCX_MLX_PCI_VENDOR_ID, VCX_CX5_PCI_DEVICE_ID) },
#endif
	{ }
};
MODULE_DEVICE_TABLE(pci, vcx_pci_table);

static struct pci_driver vcx_pci_driver = {
	.name = VCX_DRV_NAME,
	.id_table = vcx_pci_table,
	.probe = vcx_probe,
	.remove = vcx_remove,
};
module_pci_driver(vcx_pci_driver);

MODULE_DESCRIPTION("vcx virtual ConnectX-class RDMA HCA driver");
MODULE_LICENSE("GPL");
