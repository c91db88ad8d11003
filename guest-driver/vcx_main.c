// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcx: PCI probe, removal, shutdown and function reset; load/unload orchestration.
 *
 * Probe follows a ConnectX driver's first steps (PRM "Initialization Segment"): map the
 * initialization segment, read the firmware revision, wait while the device reports
 * "initializing", and refuse a command interface revision other than 5. Then the
 * function is loaded in mlx5_core's order (vcx_load()) and unloaded in reverse
 * (vcx_unload()); a PCI function reset unloads before and loads again after.
 */
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/pci.h>

#include "vcx.h"

/*
 * Bring the function up:
 *   command queue (polling) -> health polling -> ENABLE_HCA -> ISSI -> boot pages ->
 *   HOST_ENDIANNESS -> SET_HCA_CAP -> init pages -> INIT_HCA -> caps -> adapter ->
 *   ALLOC_UAR -> MSI-X + control EQ (commands switch to events) -> completion EQs.
 * On failure everything done so far is undone.
 */
static int vcx_load(struct vcx_dev *vdev)
{
	struct device *dev = vcx_dev(vdev);
	int err;

	vdev->state = VCX_DEV_STATE_UP;
	vdev->hca_enabled = false;
	vdev->hca_initialized = false;

	err = vcx_wait_fw_init(vdev, VCX_FW_PRE_INIT_TIMEOUT_MS);
	if (err) {
		dev_err(dev, "firmware did not finish initializing (%d)\n", err);
		return err;
	}
	err = vcx_cmdq_init(vdev);
	if (err) {
		dev_err(dev, "command queue setup failed (%d)\n", err);
		return err;
	}
	err = vcx_wait_fw_init(vdev, VCX_FW_INIT_TIMEOUT_MS);
	if (err) {
		dev_err(dev, "firmware not ready after command queue setup (%d)\n", err);
		goto err_cmdq;
	}
	vdev->embedded_cpu = !!(vcx_iseg_read(vdev, VCX_ISEG_INITIALIZING) &
				VCX_ISEG_EMBEDDED_CPU_BIT);
	/* Do not start on firmware that has already failed. */
	if (vcx_health_check(vdev)) {
		err = -EIO;
		goto err_cmdq;
	}
	vcx_health_start(vdev);
	err = vcx_pagealloc_init(vdev);
	if (err)
		goto err_health;

	err = vcx_fw_enable_hca(vdev);
	if (err) {
		dev_err(dev, "ENABLE_HCA failed (%d)\n", err);
		goto err_pages;
	}
	err = vcx_fw_set_issi(vdev);
	if (err) {
		dev_err(dev, "ISSI negotiation failed (%d)\n", err);
		goto err_disable;
	}
	err = vcx_satisfy_startup_pages(vdev, true);
	if (err)
		goto err_reclaim;
	err = vcx_fw_set_host_endianness(vdev);
	if (err) {
		dev_err(dev, "setting the host endianness failed (%d)\n", err);
		goto err_reclaim;
	}
	err = vcx_fw_set_hca_caps(vdev);
	if (err)
		goto err_reclaim;
	err = vcx_satisfy_startup_pages(vdev, false);
	if (err)
		goto err_reclaim;
	err = vcx_fw_init_hca(vdev);
	if (err) {
		dev_err(dev, "INIT_HCA failed (%d)\n", err);
		goto err_reclaim;
	}
	err = vcx_fw_query_caps(vdev);
	if (err) {
		dev_err(dev, "querying capabilities failed (%d)\n", err);
		goto err_teardown;
	}
	err = vcx_fw_query_adapter(vdev);
	if (err) {
		dev_err(dev, "QUERY_ADAPTER failed (%d)\n", err);
		goto err_teardown;
	}
	err = vcx_fw_alloc_uar(vdev);
	if (err) {
		dev_err(dev, "allocating the kernel UAR failed (%d)\n", err);
		goto err_teardown;
	}
	err = vcx_eq_table_create(vdev);
	if (err)
		goto err_uar;
	vcx_clock_init(vdev);		/* before the netdev: its timestamps use it */
	/*
	 * The port netdev first, as mlx5_core's Ethernet device comes before mlx5_ib: the
	 * ib_device takes it as its port's netdev. Neither failing stops the function.
	 */
	err = vcx_en_add(vdev);
	if (err)
		dev_err(dev, "port netdev creation failed (%d): no netdev\n", err);
	/* As mlx5_core stays up when mlx5_ib fails: the function works without verbs. */
	err = vcx_ib_add(vdev);
	if (err)
		dev_err(dev, "RDMA device registration failed (%d): no ib_device\n", err);

	dev_dbg(dev, "up: ISSI %u, board id %s, %u firmware pages, %d completion EQs\n",
		vdev->issi, vdev->board_id, vdev->pages.given, vdev->num_comp_eqs);
	vdev->loaded = true;
	return 0;

err_uar:
	vcx_fw_dealloc_uar(vdev);
err_teardown:
	vcx_fw_teardown_hca(vdev);
err_reclaim:
	vcx_pagealloc_stop(vdev);
	vcx_reclaim_startup_pages(vdev);
err_disable:
	vcx_fw_disable_hca(vdev);
err_pages:
	vcx_pagealloc_cleanup(vdev);
err_health:
	vcx_health_stop(vdev);
err_cmdq:
	vcx_cmdq_cleanup(vdev);
	return err;
}

/*
 * Take the function down in reverse. Each step goes on whatever the previous one
 * returned: in the error state commands fail at once and resources are released
 * locally, so unload works with the device in any state.
 */
static void vcx_unload(struct vcx_dev *vdev)
{
	struct device *dev = vcx_dev(vdev);
	int err;

	vdev->loaded = false;
	vcx_ib_remove(vdev);
	vcx_en_remove(vdev);
	vcx_clock_cleanup(vdev);
	vcx_pagealloc_stop(vdev);
	vcx_eq_table_destroy(vdev);
	vcx_fw_dealloc_uar(vdev);
	err = vcx_fw_teardown_hca(vdev);
	if (err && !vcx_in_error(vdev))
		dev_err(dev, "TEARDOWN_HCA failed (%d)\n", err);
	vcx_reclaim_startup_pages(vdev);
	err = vcx_fw_disable_hca(vdev);
	if (err && !vcx_in_error(vdev))
		dev_err(dev, "DISABLE_HCA failed (%d)\n", err);
	vcx_pagealloc_cleanup(vdev);
	vcx_health_stop(vdev);
	vcx_cmdq_cleanup(vdev);
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
	mutex_init(&vdev->load_lock);
	spin_lock_init(&vdev->ib_lock);
	xa_init_flags(&vdev->cq_table, XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&vdev->qp_table, XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&vdev->srq_table, XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&vdev->en_cq_table, XA_FLAGS_LOCK_IRQ);
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

	mutex_lock(&vdev->load_lock);
	err = vcx_load(vdev);
	mutex_unlock(&vdev->load_lock);
	if (err) {
		dev_err(&pdev->dev, "bring-up failed (%d)\n", err);
		goto err_unmap;
	}
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

	mutex_lock(&vdev->load_lock);
	if (vdev->loaded)
		vcx_unload(vdev);
	mutex_unlock(&vdev->load_lock);
	iounmap(vdev->iseg);
	pci_release_regions(pdev);
	dev_info(&pdev->dev, "removed\n");
}

/* Reboot/kexec: leave the device quiet, with every page back and no DMA in flight. */
static void vcx_shutdown(struct pci_dev *pdev)
{
	struct vcx_dev *vdev = pci_get_drvdata(pdev);

	mutex_lock(&vdev->load_lock);
	if (vdev->loaded)
		vcx_unload(vdev);
	mutex_unlock(&vdev->load_lock);
}

/*
 * PCI function reset (sysfs reset, or a reset requested by another driver): unload
 * before, since the reset drops every firmware object and the command queue address,
 * and load again after. Loading again is also how the function recovers from a fatal
 * firmware error: the reset clears it.
 */
static void vcx_reset_prepare(struct pci_dev *pdev)
{
	struct vcx_dev *vdev = pci_get_drvdata(pdev);

	mutex_lock(&vdev->load_lock);
	if (vdev->loaded)
		vcx_unload(vdev);
	mutex_unlock(&vdev->load_lock);
	dev_info(&pdev->dev, "unloaded for function reset\n");
}

static void vcx_reset_done(struct pci_dev *pdev)
{
	struct vcx_dev *vdev = pci_get_drvdata(pdev);
	int err;

	mutex_lock(&vdev->load_lock);
	err = vcx_load(vdev);
	mutex_unlock(&vdev->load_lock);
	if (err)
		dev_err(&pdev->dev, "bring-up after function reset failed (%d)\n", err);
	else
		dev_info(&pdev->dev, "loaded after function reset\n");
}

static const struct pci_error_handlers vcx_err_handler = {
	.reset_prepare = vcx_reset_prepare,
	.reset_done = vcx_reset_done,
};

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
	.shutdown = vcx_shutdown,
	.err_handler = &vcx_err_handler,
};
module_pci_driver(vcx_pci_driver);

MODULE_DESCRIPTION("vcx virtual ConnectX-class RDMA HCA driver");
MODULE_LICENSE("GPL");
