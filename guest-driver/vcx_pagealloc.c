// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcx: firmware pages (PRM "QUERY_PAGES", "MANAGE_PAGES", page request event).
 *
 * Firmware runs out of host memory the driver lends it in 4 KiB pages: boot pages before
 * INIT_HCA may start, init pages that INIT_HCA needs, and at run time whatever a page
 * request event asks for (a negative request hands pages back). Every page given is
 * remembered by its device address until firmware returns it; at teardown the driver
 * takes them all back (MANAGE_PAGES take, until none of ours is left on the device) and
 * frees them. In the error state firmware cannot answer, so the pages are simply freed,
 * as mlx5_core does ("no hard feelings, we want our pages back").
 *
 * Each firmware page is one host page mapped for DMA; with pages larger than 4 KiB only
 * the first 4 KiB is lent (wasteful; see docs/driver.md).
 */
#include <linux/dma-mapping.h>
#include <linux/jiffies.h>
#include <linux/slab.h>

#include "vcx.h"

struct vcx_fw_page {
	struct page *page;
	dma_addr_t addr;
};

struct vcx_page_req {
	struct work_struct work;
	struct vcx_dev *vdev;
	u16 func_id;
	s32 npages;
};

static int vcx_alloc_fw_page(struct vcx_dev *vdev, dma_addr_t *addrp)
{
	struct device *dev = vcx_dev(vdev);
	struct vcx_fw_page *fwp;
	int err;

	fwp = kzalloc(sizeof(*fwp), GFP_KERNEL);
	if (!fwp)
		return -ENOMEM;
	fwp->page = alloc_page(GFP_HIGHUSER | __GFP_NOWARN);
	if (!fwp->page)
		goto err_free;
	fwp->addr = dma_map_page(dev, fwp->page, 0, PAGE_SIZE, DMA_BIDIRECTIONAL);
	if (dma_mapping_error(dev, fwp->addr))
		goto err_page;
	if (fwp->addr & (VCX_PAGE_SIZE - 1)) {
		dev_err(dev, "page mapped at unaligned address %pad\n", &fwp->addr);
		goto err_unmap;
	}
	err = xa_insert(&vdev->pages.pages, fwp->addr >> VCX_PAGE_SHIFT, fwp, GFP_KERNEL);
	if (err)
		goto err_unmap;
	*addrp = fwp->addr;
	return 0;

err_unmap:
	dma_unmap_page(dev, fwp->addr, PAGE_SIZE, DMA_BIDIRECTIONAL);
err_page:
	__free_page(fwp->page);
err_free:
	kfree(fwp);
	return -ENOMEM;
}

/* Forget and free the page at addr; false if it is not one of ours. */
static bool vcx_free_fw_page(struct vcx_dev *vdev, dma_addr_t addr)
{
	struct vcx_fw_page *fwp;

	fwp = xa_erase(&vdev->pages.pages, addr >> VCX_PAGE_SHIFT);
	if (!fwp)
		return false;
	dma_unmap_page(vcx_dev(vdev), fwp->addr, PAGE_SIZE, DMA_BIDIRECTIONAL);
	__free_page(fwp->page);
	kfree(fwp);
	return true;
}

static int vcx_query_pages(struct vcx_dev *vdev, u16 op_mod, s32 *npages)
{
	u8 in[VCX_QUERY_PAGES_IN_LEN] = {};
	u8 out[VCX_QUERY_PAGES_OUT_LEN] = {};
	int err;

	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_QUERY_PAGES);
	vcx_set(in, VCX_CMD_IN_OP_MOD, op_mod);
	vcx_set(in, VCX_QUERY_PAGES_IN_EMBEDDED_CPU, vdev->embedded_cpu);
	err = vcx_cmd_exec(vdev, in, sizeof(in), out, sizeof(out));
	if (!err)
		*npages = (s32)vcx_get(out, VCX_QUERY_PAGES_OUT_NUM_PAGES);
	return err;
}

/* Tell firmware we could not allocate what it asked for (op_mod 0, no entries). */
static void vcx_page_alloc_failed(struct vcx_dev *vdev, u16 func_id)
{
	u8 in[VCX_MANAGE_PAGES_IN_LEN] = {};
	u8 out[VCX_MANAGE_PAGES_OUT_LEN] = {};

	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_MANAGE_PAGES);
	vcx_set(in, VCX_CMD_IN_OP_MOD, VCX_MANAGE_PAGES_OP_MOD_ALLOC_FAIL);
	vcx_set(in, VCX_MANAGE_PAGES_IN_EMBEDDED_CPU, vdev->embedded_cpu);
	vcx_set(in, VCX_MANAGE_PAGES_IN_FUNCTION_ID, func_id);
	vcx_set(in, VCX_MANAGE_PAGES_IN_NUM_ENTRIES, 0);
	vcx_cmd_exec(vdev, in, sizeof(in), out, sizeof(out));
}

/* Give npages pages, in commands of at most VCX_MAX_PAGES_PER_CMD addresses. */
static int vcx_give_pages(struct vcx_dev *vdev, u16 func_id, u32 npages, bool notify_fail)
{
	u8 out[VCX_MANAGE_PAGES_OUT_LEN] = {};
	unsigned int inlen;
	u32 n, i;
	u8 *in, *pas;
	int err = 0;

	inlen = VCX_MANAGE_PAGES_IN_LEN + VCX_MAX_PAGES_PER_CMD * VCX_PAS_SIZE;
	in = kvzalloc(inlen, GFP_KERNEL);
	if (!in)
		return -ENOMEM;
	pas = vcx_ptr(in, VCX_MANAGE_PAGES_IN_PAS);

	while (npages) {
		n = min(npages, VCX_MAX_PAGES_PER_CMD);
		memset(in, 0, inlen);
		for (i = 0; i < n; i++) {
			dma_addr_t addr;

			err = vcx_alloc_fw_page(vdev, &addr);
			if (err) {
				dev_warn(vcx_dev(vdev), "failed to allocate firmware page %u of %u\n",
					 i, n);
				break;
			}
			vcx_set64(pas + i * VCX_PAS_SIZE, VCX_FLD(0, 64), addr);
		}
		if (err) {
			while (i--)
				vcx_free_fw_page(vdev, vcx_get64(pas + i * VCX_PAS_SIZE,
								 VCX_FLD(0, 64)));
			if (notify_fail)
				vcx_page_alloc_failed(vdev, func_id);
			break;
		}
		vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_MANAGE_PAGES);
		vcx_set(in, VCX_CMD_IN_OP_MOD, VCX_MANAGE_PAGES_OP_MOD_GIVE);
		vcx_set(in, VCX_MANAGE_PAGES_IN_EMBEDDED_CPU, vdev->embedded_cpu);
		vcx_set(in, VCX_MANAGE_PAGES_IN_FUNCTION_ID, func_id);
		vcx_set(in, VCX_MANAGE_PAGES_IN_NUM_ENTRIES, n);
		err = vcx_cmd_exec(vdev, in, VCX_MANAGE_PAGES_IN_LEN + n * VCX_PAS_SIZE, out,
				   sizeof(out));
		if (err) {
			/* Not given: the device holds none of this batch. */
			for (i = 0; i < n; i++)
				vcx_free_fw_page(vdev, vcx_get64(pas + i * VCX_PAS_SIZE,
								 VCX_FLD(0, 64)));
			break;
		}
		vdev->pages.given += n;
		npages -= n;
	}
	kvfree(in);
	return err;
}

/*
 * Take back up to npages pages; *reclaimed gets how many came back. In the error state
 * nothing is asked: the pages are freed locally.
 */
static int vcx_reclaim_pages(struct vcx_dev *vdev, u16 func_id, u32 npages, u32 *reclaimed)
{
	u8 in[VCX_MANAGE_PAGES_IN_LEN] = {};
	unsigned int outlen;
	u32 n, got, i;
	u8 *out, *pas;
	int err;

	*reclaimed = 0;
	n = min(npages, VCX_MAX_PAGES_PER_CMD);
	outlen = VCX_MANAGE_PAGES_OUT_LEN + n * VCX_PAS_SIZE;
	out = kvzalloc(outlen, GFP_KERNEL);
	if (!out)
		return -ENOMEM;
	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_MANAGE_PAGES);
	vcx_set(in, VCX_CMD_IN_OP_MOD, VCX_MANAGE_PAGES_OP_MOD_TAKE);
	vcx_set(in, VCX_MANAGE_PAGES_IN_EMBEDDED_CPU, vdev->embedded_cpu);
	vcx_set(in, VCX_MANAGE_PAGES_IN_FUNCTION_ID, func_id);
	vcx_set(in, VCX_MANAGE_PAGES_IN_NUM_ENTRIES, n);
	err = vcx_cmd_exec(vdev, in, sizeof(in), out, outlen);
	if (err)
		goto out;

	got = vcx_get(out, VCX_MANAGE_PAGES_OUT_NUM_ENTRIES);
	if (got > n) {
		dev_err(vcx_dev(vdev), "MANAGE_PAGES returned %u pages, %u asked for\n", got, n);
		err = -EIO;
		goto out;
	}
	pas = vcx_ptr(out, VCX_MANAGE_PAGES_OUT_PAS);
	for (i = 0; i < got; i++) {
		u64 addr = vcx_get64(pas + i * VCX_PAS_SIZE, VCX_FLD(0, 64));

		if (!vcx_free_fw_page(vdev, addr)) {
			dev_warn(vcx_dev(vdev), "firmware returned page 0x%llx it was not given\n",
				 addr);
			continue;
		}
		vdev->pages.given--;
		(*reclaimed)++;
	}
out:
	kvfree(out);
	return err;
}

/* Free every page without asking firmware (error state, or after a reset). */
static void vcx_free_all_pages(struct vcx_dev *vdev)
{
	struct vcx_fw_page *fwp;
	unsigned long index;

	xa_for_each(&vdev->pages.pages, index, fwp)
		vcx_free_fw_page(vdev, fwp->addr);
	vdev->pages.given = 0;
}

/* Boot pages (before INIT_HCA's caps) or init pages (before INIT_HCA). */
int vcx_satisfy_startup_pages(struct vcx_dev *vdev, bool boot)
{
	u16 op_mod = boot ? VCX_QUERY_PAGES_OP_MOD_BOOT : VCX_QUERY_PAGES_OP_MOD_INIT;
	s32 npages;
	int err;

	err = vcx_query_pages(vdev, op_mod, &npages);
	if (err)
		return err;
	dev_dbg(vcx_dev(vdev), "firmware asks for %d %s pages\n", npages,
		boot ? "boot" : "init");
	if (npages <= 0)
		return 0;
	err = vcx_give_pages(vdev, 0, npages, false);
	if (err)
		dev_err(vcx_dev(vdev), "giving %d %s pages failed (%d)\n", npages,
			boot ? "boot" : "init", err);
	return err;
}

static void vcx_page_req_work(struct work_struct *work)
{
	struct vcx_page_req *req = container_of(work, struct vcx_page_req, work);
	struct vcx_dev *vdev = req->vdev;
	u32 reclaimed, want, total = 0;
	int err;

	if (req->npages > 0) {
		err = vcx_give_pages(vdev, req->func_id, req->npages, true);
	} else {
		/* Several commands when more pages come back than one command carries. */
		want = -(s64)req->npages;
		do {
			err = vcx_reclaim_pages(vdev, req->func_id, want - total, &reclaimed);
			total += reclaimed;
		} while (!err && reclaimed && total < want);
		if (!err && total != want)
			dev_dbg(vcx_dev(vdev), "firmware returned %u of %u pages\n", total, want);
	}
	if (err && !vcx_in_error(vdev))
		dev_warn(vcx_dev(vdev), "page request of %d pages for function %u failed (%d)\n",
			 req->npages, req->func_id, err);
	kfree(req);
}

/* Page request EQE (interrupt context): serve it from the page workqueue. */
void vcx_page_request(struct vcx_dev *vdev, u16 func_id, s32 npages)
{
	struct vcx_page_req *req;

	if (!READ_ONCE(vdev->pages.accept_requests) || !npages)
		return;
	req = kzalloc(sizeof(*req), GFP_ATOMIC);
	if (!req) {
		dev_warn(vcx_dev(vdev), "dropped page request of %d pages: no memory\n", npages);
		return;
	}
	req->vdev = vdev;
	req->func_id = func_id;
	req->npages = npages;
	INIT_WORK(&req->work, vcx_page_req_work);
	queue_work(vdev->pages.wq, &req->work);
}

/* No more page requests; wait for those already queued. */
void vcx_pagealloc_stop(struct vcx_dev *vdev)
{
	WRITE_ONCE(vdev->pages.accept_requests, false);
	if (vdev->pages.wq)
		flush_workqueue(vdev->pages.wq);
}

/*
 * After TEARDOWN_HCA: take back every page firmware holds. Give up if firmware returns
 * nothing for VCX_PAGE_RECLAIM_TIMEOUT_MS; the pages are then leaked rather than freed
 * under a device that may still use them.
 */
int vcx_reclaim_startup_pages(struct vcx_dev *vdev)
{
	unsigned long end = jiffies + msecs_to_jiffies(VCX_PAGE_RECLAIM_TIMEOUT_MS);
	u32 reclaimed;
	int err;

	while (!xa_empty(&vdev->pages.pages)) {
		if (vcx_in_error(vdev)) {
			vcx_free_all_pages(vdev);
			return 0;
		}
		err = vcx_reclaim_pages(vdev, 0, vdev->pages.given, &reclaimed);
		if (err && !vcx_in_error(vdev)) {
			dev_err(vcx_dev(vdev), "reclaiming pages failed (%d), %u pages left\n", err,
				vdev->pages.given);
			return err;
		}
		if (reclaimed)
			end = jiffies + msecs_to_jiffies(VCX_PAGE_RECLAIM_TIMEOUT_MS);
		else if (time_after(jiffies, end)) {
			dev_err(vcx_dev(vdev), "firmware kept %u pages, giving up\n",
				vdev->pages.given);
			return -ETIMEDOUT;
		}
	}
	return 0;
}

int vcx_pagealloc_init(struct vcx_dev *vdev)
{
	xa_init(&vdev->pages.pages);
	vdev->pages.given = 0;
	vdev->pages.wq = alloc_ordered_workqueue("vcx_pages_%s", 0, pci_name(vdev->pdev));
	if (!vdev->pages.wq)
		return -ENOMEM;
	WRITE_ONCE(vdev->pages.accept_requests, true);
	return 0;
}

/*
 * Whatever is still recorded here was either never given, or belongs to a device that
 * was reset or is in the error state: free it. Pages firmware refused to return while
 * healthy are kept (leaked) to stay safe.
 */
void vcx_pagealloc_cleanup(struct vcx_dev *vdev)
{
	vcx_pagealloc_stop(vdev);
	if (vdev->pages.wq) {
		destroy_workqueue(vdev->pages.wq);
		vdev->pages.wq = NULL;
	}
	if (!xa_empty(&vdev->pages.pages)) {
		if (vcx_in_error(vdev) || !vdev->pages.given) {
			vcx_free_all_pages(vdev);
		} else {
			dev_err(vcx_dev(vdev), "leaking %u pages firmware did not return\n",
				vdev->pages.given);
			return;
		}
	}
	xa_destroy(&vdev->pages.pages);
}
