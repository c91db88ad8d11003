/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef VCX_PROVIDER_H
#define VCX_PROVIDER_H

#include <infiniband/driver.h>

struct vcx_device {
	struct verbs_device ibv_dev;
};

static inline struct vcx_device *to_vcx_dev(struct ibv_device *ibdev)
{
	return container_of(ibdev, struct vcx_device, ibv_dev.device);
}

#endif /* VCX_PROVIDER_H */
