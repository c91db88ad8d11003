// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vcx provider: device matching and context setup.
 *
 * libibverbs loads every provider listed in its driver directory and asks each to match
 * a uverbs device; vcx matches the vcx PCI id (and, like any provider, only when vcx.ko's
 * uverbs ABI version is the one this library speaks).
 */
#include <errno.h>
#include <stdlib.h>

#include "vcx.h"
#include "vcx/abi.h"
#include "vcx/prm-iseg.h"

static const struct verbs_match_ent vcx_match_table[] = {
	VERBS_PCI_MATCH(VCX_PCI_VENDOR_ID, VCX_PCI_DEVICE_ID, NULL),
	{}
};

static struct verbs_device *vcx_device_alloc(struct verbs_sysfs_dev *sysfs_dev)
{
	struct vcx_device *dev = calloc(1, sizeof(*dev));

	return dev ? &dev->ibv_dev : NULL;
}

static void vcx_device_free(struct verbs_device *vdev)
{
	free(container_of(vdev, struct vcx_device, ibv_dev));
}

/*
 * vcx.ko does not register an ib_device yet (verbs arrive with the SRQ issue), so there
 * is no context to open: say so rather than pretend.
 */
static struct verbs_context *vcx_alloc_context(struct ibv_device *ibdev, int cmd_fd,
					       void *private_data)
{
	errno = EOPNOTSUPP;
	return NULL;
}

static const struct verbs_device_ops vcx_dev_ops = {
	.name = "vcx",
	.match_min_abi_version = VCX_UVERBS_ABI_VERSION,
	.match_max_abi_version = VCX_UVERBS_ABI_VERSION,
	.match_table = vcx_match_table,
	.alloc_device = vcx_device_alloc,
	.uninit_device = vcx_device_free,
	.alloc_context = vcx_alloc_context,
};

PROVIDER_DRIVER(vcx, vcx_dev_ops);
