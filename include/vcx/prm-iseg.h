/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vcx device interface: PCI identity, BAR0 layout and the initialization segment.
 *
 * Shared by the QEMU device (hw-model/), the kernel driver (guest-driver/) and the
 * rdma-core provider (rdma-core-provider/). Only constants live here so the one file
 * compiles in all three worlds. Layouts restate the ConnectX programming interface (PRM),
 * "Initialization Segment" and "Health Buffer"; every register is a 32-bit big-endian dword.
 */
#ifndef VCX_PRM_ISEG_H
#define VCX_PRM_ISEG_H

/* PCI identity. 1af4:10f0 sits in the range QEMU keeps for experimental devices, so no
 * stock driver claims it; the device can also present a ConnectX-5 PF (15b3:1017). */
#define VCX_PCI_VENDOR_ID		0x1af4
#define VCX_PCI_DEVICE_ID		0x10f0
#define VCX_MLX_PCI_VENDOR_ID		0x15b3
#define VCX_CX5_PCI_DEVICE_ID		0x1017

/* BAR0: 64-bit prefetchable memory BAR, as on a ConnectX PF. It holds the initialization
 * segment (page 0-1), the MSI-X table and PBA (pages 2 and 3) and the UAR doorbell pages,
 * one 4 KiB page per UAR index. UAR indices below VCX_FIRST_UAR_INDEX are never handed out. */
#define VCX_BAR0_SIZE			(32u << 20)
#define VCX_UAR_PAGE_SIZE		0x1000u
#define VCX_MSIX_TABLE_OFFSET		0x2000u
#define VCX_MSIX_PBA_OFFSET		0x3000u
#define VCX_MSIX_VECTORS		64u
#define VCX_FIRST_UAR_INDEX		4u
#define VCX_NUM_UARS			(VCX_BAR0_SIZE / VCX_UAR_PAGE_SIZE)

/* Initialization segment (PRM "Initialization Segment"), BAR0 offsets. */
#define VCX_ISEG_FW_REV			0x000	/* [31:16] minor, [15:0] major */
#define VCX_ISEG_CMDIF_REV_FW_SUB	0x004	/* [31:16] cmd_interface_rev, [15:0] subminor */
#define VCX_ISEG_CMDQ_ADDR_H		0x010	/* command queue address [63:32] */
#define VCX_ISEG_CMDQ_ADDR_L_SZ		0x014	/* [31:12] address [31:12], [9:8] nic_interface,
						 * [7:4] log_cmdq_size, [3:0] log_cmdq_stride (RO) */
#define VCX_ISEG_CMD_DBELL		0x018	/* bit n rings command queue entry n */
#define VCX_ISEG_INITIALIZING		0x1fc	/* [31] initializing, [26:24] nic_interface_supported,
						 * [23] embedded_cpu */
#define VCX_ISEG_HEALTH			0x200	/* health buffer, 64 bytes */
#define VCX_ISEG_HEALTH_SIZE		0x40
#define VCX_ISEG_CMD_EXEC_TO		0xff8	/* default command timeout, ms (0: driver default) */
#define VCX_ISEG_CMD_Q_INIT_TO		0xffc	/* firmware init timeout, ms (0: driver default) */
#define VCX_ISEG_INTERNAL_TIMER_H	0x1000
#define VCX_ISEG_INTERNAL_TIMER_L	0x1004
#define VCX_ISEG_HEALTH_COUNTER		0x1010	/* [31:24] health syndrome, [23:0] counter */
#define VCX_ISEG_SIZE			0x1014	/* bytes of the segment the device decodes */

#define VCX_ISEG_CMDIF_REV		5	/* the only command interface revision */
#define VCX_ISEG_INITIALIZING_BIT	(1u << 31)
#define VCX_ISEG_EMBEDDED_CPU_BIT	(1u << 23)
#define VCX_ISEG_CMDQ_ADDR_L_MASK	0xfffff000u
#define VCX_ISEG_NIC_IF_SHIFT		8
#define VCX_ISEG_NIC_IF_MASK		0x3u
#define VCX_ISEG_LOG_CMDQ_SIZE_SHIFT	4
#define VCX_ISEG_LOG_CMDQ_SIZE_MASK	0xfu
#define VCX_ISEG_LOG_CMDQ_STRIDE_MASK	0xfu
#define VCX_ISEG_HEALTH_COUNTER_MASK	0x00ffffffu
#define VCX_ISEG_HEALTH_SYND_SHIFT	24

/* nic_interface modes (PRM "Initialization Segment", nic_interface). */
#define VCX_NIC_IF_FULL_DRIVER		0
#define VCX_NIC_IF_DISABLED		1
#define VCX_NIC_IF_NO_DRAM_NIC		2
#define VCX_NIC_IF_SW_RESET		7

/* Health buffer, offsets relative to VCX_ISEG_HEALTH (PRM "Health Buffer"). */
#define VCX_HEALTH_ASSERT_VAR		0x00	/* 6 dwords */
#define VCX_HEALTH_ASSERT_EXIT_PTR	0x20
#define VCX_HEALTH_ASSERT_CALLRA	0x24
#define VCX_HEALTH_TIME			0x2c
#define VCX_HEALTH_FW_VER		0x30	/* ~0 reads as "device gone" */
#define VCX_HEALTH_HW_ID		0x34
#define VCX_HEALTH_RFR_SEVERITY		0x38	/* [31] rfr, [27] valid, [26:24] severity */
#define VCX_HEALTH_IRISC_SYND_EXT	0x3c	/* [31:24] irisc_index, [23:16] synd, [15:0] ext_synd */
#define VCX_HEALTH_RFR_BIT		(1u << 31)
#define VCX_HEALTH_SEVERITY_VALID	(1u << 27)
#define VCX_HEALTH_SEVERITY_SHIFT	24
#define VCX_HEALTH_SEVERITY_MASK	0x7u
#define VCX_HEALTH_SEVERITY_CRIT	2	/* syslog levels: 0 emergency ... 7 debug */
#define VCX_HEALTH_SYND_SHIFT		16	/* in VCX_HEALTH_IRISC_SYND_EXT */
#define VCX_HEALTH_SYND_MASK		0xffu
#define VCX_HEALTH_EXT_SYND_MASK	0xffffu

/* Health syndromes (PRM "Health Buffer", synd; MLX5_INITIAL_SEG_HEALTH_SYNDROME_*). */
#define VCX_HEALTH_SYND_FW_ERR		0x01
#define VCX_HEALTH_SYND_IRISC_ERR	0x07
#define VCX_HEALTH_SYND_HW_INTERNAL_ERR	0x08
#define VCX_HEALTH_SYND_CRC_ERR		0x09
#define VCX_HEALTH_SYND_ICM_FETCH_PCI_ERR	0x0a
#define VCX_HEALTH_SYND_ICM_PAGE_ERR	0x0b
#define VCX_HEALTH_SYND_ASYNC_EQ_OVERRUN	0x0c
#define VCX_HEALTH_SYND_EQ_IN_ERR	0x0d
#define VCX_HEALTH_SYND_EQ_INV		0x0e
#define VCX_HEALTH_SYND_FFSER_ERR	0x0f
#define VCX_HEALTH_SYND_HIGH_TEMP_ERR	0x10
#define VCX_HEALTH_SYND_ICM_PCI_POISONED	0x12

#endif /* VCX_PRM_ISEG_H */
