/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vcx uverbs ABI: the private udata exchanged between vcx.ko and the rdma-core provider.
 * Shared by guest-driver/ and rdma-core-provider/; grows with each verb that carries
 * driver data. Layouts are fixed-size, naturally aligned and little-endian (host order).
 */
#ifndef VCX_ABI_H
#define VCX_ABI_H

/* ib_device_ops.uverbs_abi_ver; the provider accepts exactly this version. */
#define VCX_UVERBS_ABI_VERSION	1

#endif /* VCX_ABI_H */
