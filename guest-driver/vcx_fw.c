// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcx: firmware commands of the function's life cycle, in the order mlx5_core sends them:
 * ENABLE_HCA, QUERY_ISSI/SET_ISSI, ACCESS_REG HOST_ENDIANNESS, QUERY_HCA_CAP/SET_HCA_CAP,
 * INIT_HCA, QUERY_HCA_CAP (current values), QUERY_ADAPTER, ALLOC_UAR; and back:
 * DEALLOC_UAR, TEARDOWN_HCA, DISABLE_HCA.
 */
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "vcx.h"

int vcx_wait_fw_init(struct vcx_dev *vdev, unsigned int timeout_ms)
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
		msleep(2);
	}
}

/* A command with a 16-byte input and output whose header is all it needs. */
static int vcx_cmd_simple(struct vcx_dev *vdev, u8 *in, unsigned int inlen)
{
	u8 out[VCX_CMD_HDR_SIZE] = {};

	return vcx_cmd_exec(vdev, in, inlen, out, sizeof(out));
}

int vcx_fw_enable_hca(struct vcx_dev *vdev)
{
	u8 in[VCX_ENABLE_HCA_IN_LEN] = {};
	int err;

	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_ENABLE_HCA);
	vcx_set(in, VCX_ENABLE_HCA_IN_EMBEDDED_CPU, vdev->embedded_cpu);
	vcx_set(in, VCX_ENABLE_HCA_IN_FUNCTION_ID, 0);
	err = vcx_cmd_simple(vdev, in, sizeof(in));
	if (!err)
		vdev->hca_enabled = true;
	return err;
}

int vcx_fw_disable_hca(struct vcx_dev *vdev)
{
	u8 in[VCX_DISABLE_HCA_IN_LEN] = {};
	int err;

	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_DISABLE_HCA);
	vcx_set(in, VCX_DISABLE_HCA_IN_EMBEDDED_CPU, vdev->embedded_cpu);
	vcx_set(in, VCX_DISABLE_HCA_IN_FUNCTION_ID, 0);
	err = vcx_cmd_simple(vdev, in, sizeof(in));
	vdev->hca_enabled = false;
	return err;
}

/*
 * ISSI: use 1 if the device supports it, else 0. A device that refuses QUERY_ISSI
 * (BAD_OP: predates ISSI) is ISSI 0, as mlx5_core treats it.
 */
int vcx_fw_set_issi(struct vcx_dev *vdev)
{
	u8 in[VCX_QUERY_ISSI_IN_LEN] = {};
	u8 out[VCX_QUERY_ISSI_OUT_LEN] = {};
	u8 set_in[VCX_SET_ISSI_IN_LEN] = {};
	u32 supported;
	int err;

	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_QUERY_ISSI);
	err = vcx_cmd_exec(vdev, in, sizeof(in), out, sizeof(out));
	if (err == -EOPNOTSUPP) {
		vdev->issi = 0;
		dev_info(vcx_dev(vdev), "QUERY_ISSI not supported, using ISSI 0\n");
		return 0;
	}
	if (err)
		return err;

	supported = vcx_get(out, VCX_QUERY_ISSI_OUT_SUPPORTED_DW0);
	if (supported & VCX_ISSI_1) {
		vcx_set(set_in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_SET_ISSI);
		vcx_set(set_in, VCX_SET_ISSI_IN_CURRENT_ISSI, 1);
		err = vcx_cmd_simple(vdev, set_in, sizeof(set_in));
		if (err)
			return err;
		vdev->issi = 1;
		return 0;
	}
	if (supported & VCX_ISSI_0 || !supported) {
		vdev->issi = 0;
		return 0;
	}
	dev_err(vcx_dev(vdev), "device supports neither ISSI 0 nor 1 (mask 0x%x)\n", supported);
	return -EOPNOTSUPP;
}

/* PF only: tell firmware the host byte order (ACCESS_REG HOST_ENDIANNESS, write). */
int vcx_fw_set_host_endianness(struct vcx_dev *vdev)
{
	u8 in[VCX_ACCESS_REG_HDR_LEN + VCX_REG_HOST_ENDIANNESS_LEN] = {};
	u8 out[VCX_ACCESS_REG_HDR_LEN + VCX_REG_HOST_ENDIANNESS_LEN] = {};
	u8 *data = vcx_ptr(in, VCX_ACCESS_REG_IN_DATA);

	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_ACCESS_REG);
	vcx_set(in, VCX_CMD_IN_OP_MOD, VCX_ACCESS_REG_OP_MOD_WRITE);
	vcx_set(in, VCX_ACCESS_REG_IN_REGISTER_ID, VCX_REG_HOST_ENDIANNESS);
	vcx_set(in, VCX_ACCESS_REG_IN_ARGUMENT, 0);
	vcx_set(data, VCX_HOST_ENDIANNESS_HE, IS_ENABLED(CONFIG_CPU_BIG_ENDIAN) ? 0x80 : 0);
	return vcx_cmd_exec(vdev, in, sizeof(in), out, sizeof(out));
}

/* ACCESS_REG PPCNT (read) of counter group grp of port 1 into reg (VCX_REG_PPCNT_LEN). */
int vcx_query_ppcnt(struct vcx_dev *vdev, u32 grp, u8 *reg)
{
	const unsigned int len = VCX_ACCESS_REG_HDR_LEN + VCX_REG_PPCNT_LEN;
	u8 *in, *out, *data;
	int err;

	in = kzalloc(2 * len, GFP_KERNEL);
	if (!in)
		return -ENOMEM;
	out = in + len;
	data = vcx_ptr(in, VCX_ACCESS_REG_IN_DATA);
	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_ACCESS_REG);
	vcx_set(in, VCX_CMD_IN_OP_MOD, VCX_ACCESS_REG_OP_MOD_READ);
	vcx_set(in, VCX_ACCESS_REG_IN_REGISTER_ID, VCX_REG_PPCNT);
	vcx_set(data, VCX_PPCNT_LOCAL_PORT, 1);
	vcx_set(data, VCX_PPCNT_GRP, grp);
	err = vcx_cmd_exec(vdev, in, len, out, len);
	if (!err)
		memcpy(reg, vcx_ptr(out, VCX_ACCESS_REG_OUT_DATA), VCX_REG_PPCNT_LEN);
	kfree(in);
	return err;
}

/* QUERY_VPORT_COUNTER of the function's own vport: its output (kfree it), or NULL. */
u8 *vcx_query_vport_counter(struct vcx_dev *vdev)
{
	u8 in[VCX_QUERY_VPORT_COUNTER_IN_LEN] = {};
	u8 *out = kzalloc(VCX_QUERY_VPORT_COUNTER_OUT_LEN, GFP_KERNEL);

	if (!out)
		return NULL;
	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_QUERY_VPORT_COUNTER);
	vcx_set(in, VCX_QUERY_VPORT_COUNTER_IN_PORT_NUM, 1);
	if (vcx_cmd_exec(vdev, in, sizeof(in), out, VCX_QUERY_VPORT_COUNTER_OUT_LEN)) {
		kfree(out);
		return NULL;
	}
	return out;
}

/* QUERY_HCA_CAP of one type and mode; cap receives the 4 KiB capability page. */
static int vcx_fw_query_cap(struct vcx_dev *vdev, u16 type, u16 mode, u8 *cap)
{
	u8 in[VCX_QUERY_HCA_CAP_IN_LEN] = {};
	u8 *out;
	int err;

	out = kzalloc(VCX_QUERY_HCA_CAP_OUT_LEN, GFP_KERNEL);
	if (!out)
		return -ENOMEM;
	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_QUERY_HCA_CAP);
	vcx_set(in, VCX_CMD_IN_OP_MOD, VCX_HCA_CAP_OP_MOD(type, mode));
	err = vcx_cmd_exec(vdev, in, sizeof(in), out, VCX_QUERY_HCA_CAP_OUT_LEN);
	if (!err)
		memcpy(cap, vcx_cptr(out, VCX_HCA_CAP_CAPABILITY), VCX_HCA_CAP_SIZE);
	kfree(out);
	return err;
}

static int vcx_fw_set_cap(struct vcx_dev *vdev, u16 type, const u8 *cap)
{
	u8 out[VCX_SET_HCA_CAP_OUT_LEN] = {};
	u8 *in;
	int err;

	in = kzalloc(VCX_SET_HCA_CAP_IN_LEN, GFP_KERNEL);
	if (!in)
		return -ENOMEM;
	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_SET_HCA_CAP);
	vcx_set(in, VCX_CMD_IN_OP_MOD, VCX_HCA_CAP_OP_MOD(type, 0));
	memcpy(vcx_ptr(in, VCX_HCA_CAP_CAPABILITY), cap, VCX_HCA_CAP_SIZE);
	err = vcx_cmd_exec(vdev, in, VCX_SET_HCA_CAP_IN_LEN, out, sizeof(out));
	kfree(in);
	return err;
}

/* Copy a MAX bit into the settable copy of CUR only if the device offers it. */
static void vcx_cap_set_if_max(u8 *set, const u8 *max, struct vcx_fld f)
{
	if (vcx_get(max, f))
		vcx_set(set, f, 1);
}

/*
 * GENERAL: start from the current values and set what mlx5_core's handle_hca_cap() sets:
 * 128-entry pkey table, log_max_qp within the profile, command checksums off, UAR page
 * size = system page, uar_4k only for pages larger than 4 KiB, 128-byte cache line per
 * the CPU, and the optional features the device offers (release_all_pages, dct, roce
 * when the device can read and write the RoCE setting).
 */
static int vcx_fw_set_general_caps(struct vcx_dev *vdev, u8 *cur, u8 *max)
{
	int err;

	err = vcx_fw_query_cap(vdev, VCX_HCA_CAP_TYPE_GENERAL, VCX_HCA_CAP_OP_MOD_CUR, cur);
	if (!err)
		err = vcx_fw_query_cap(vdev, VCX_HCA_CAP_TYPE_GENERAL, VCX_HCA_CAP_OP_MOD_MAX,
				       max);
	if (err)
		return err;

	vcx_set(cur, VCX_CAP_GEN_PKEY_TABLE_SIZE, 0);
	vcx_set(cur, VCX_CAP_GEN_LOG_MAX_QP,
		min_t(u32, VCX_PROF_LOG_MAX_QP, vcx_get(max, VCX_CAP_GEN_LOG_MAX_QP)));
	vcx_set(cur, VCX_CAP_GEN_CMDIF_CHECKSUM, VCX_CAP_CMDIF_CHECKSUM_DISABLED);
	vcx_set(cur, VCX_CAP_GEN_LOG_UAR_PAGE_SZ, PAGE_SHIFT - VCX_PAGE_SHIFT);
	vcx_set(cur, VCX_CAP_GEN_UAR_4K,
		vcx_get(max, VCX_CAP_GEN_UAR_4K) && PAGE_SIZE > VCX_PAGE_SIZE);
	if (vcx_get(max, VCX_CAP_GEN_CACHE_LINE_128BYTE))
		vcx_set(cur, VCX_CAP_GEN_CACHE_LINE_128BYTE, cache_line_size() >= 128);
	vcx_cap_set_if_max(cur, max, VCX_CAP_GEN_RELEASE_ALL_PAGES);
	vcx_cap_set_if_max(cur, max, VCX_CAP_GEN_DCT);
	vcx_set(cur, VCX_CAP_GEN_NUM_VHCA_PORTS, vcx_get(max, VCX_CAP_GEN_NUM_VHCA_PORTS));
	if (vcx_get(max, VCX_CAP_GEN_ROCE_RW_SUPPORTED))
		vcx_cap_set_if_max(cur, max, VCX_CAP_GEN_ROCE);

	return vcx_fw_set_cap(vdev, VCX_HCA_CAP_TYPE_GENERAL, cur);
}

/* ROCE: set only to turn on the software-chosen UDP source port, when offered. */
static int vcx_fw_set_roce_caps(struct vcx_dev *vdev, u8 *cur, u8 *max)
{
	int err;

	err = vcx_fw_query_cap(vdev, VCX_HCA_CAP_TYPE_ROCE, VCX_HCA_CAP_OP_MOD_CUR, cur);
	if (!err)
		err = vcx_fw_query_cap(vdev, VCX_HCA_CAP_TYPE_ROCE, VCX_HCA_CAP_OP_MOD_MAX, max);
	if (err)
		return err;
	if (!vcx_get(max, VCX_CAP_ROCE_SW_R_ROCE_SRC_UDP_PORT) ||
	    vcx_get(cur, VCX_CAP_ROCE_SW_R_ROCE_SRC_UDP_PORT))
		return 0;
	vcx_set(cur, VCX_CAP_ROCE_SW_R_ROCE_SRC_UDP_PORT, 1);
	return vcx_fw_set_cap(vdev, VCX_HCA_CAP_TYPE_ROCE, cur);
}

/*
 * ATOMIC: requester 8-byte atomics in host byte order when the device supports that mode
 * (mlx5_core's handle_hca_cap_atomic()).
 */
static int vcx_fw_set_atomic_caps(struct vcx_dev *vdev, u8 *cur)
{
	int err;

	err = vcx_fw_query_cap(vdev, VCX_HCA_CAP_TYPE_ATOMIC, VCX_HCA_CAP_OP_MOD_CUR, cur);
	if (err)
		return err;
	if (!vcx_get(cur, VCX_CAP_ATOMIC_SUPPORTED_REQ_8B_ENDIANNESS_MODE_1))
		return 0;
	vcx_set(cur, VCX_CAP_ATOMIC_REQ_8B_ENDIANNESS_MODE, VCX_ATOMIC_REQ_MODE_HOST);
	return vcx_fw_set_cap(vdev, VCX_HCA_CAP_TYPE_ATOMIC, cur);
}

int vcx_fw_set_hca_caps(struct vcx_dev *vdev)
{
	bool atomic, roce;
	u8 *cur, *max;
	int err;

	cur = kzalloc(VCX_HCA_CAP_SIZE, GFP_KERNEL);
	max = kzalloc(VCX_HCA_CAP_SIZE, GFP_KERNEL);
	if (!cur || !max) {
		err = -ENOMEM;
		goto out;
	}
	err = vcx_fw_set_general_caps(vdev, cur, max);
	if (err) {
		dev_err(vcx_dev(vdev), "setting general capabilities failed (%d)\n", err);
		goto out;
	}
	/* The general page just set says whether atomics and RoCE are there. */
	atomic = vcx_get(cur, VCX_CAP_GEN_ATOMIC);
	roce = vcx_get(cur, VCX_CAP_GEN_ROCE);
	if (atomic) {
		err = vcx_fw_set_atomic_caps(vdev, cur);
		if (err) {
			dev_err(vcx_dev(vdev), "setting atomic capabilities failed (%d)\n", err);
			goto out;
		}
	}
	if (roce) {
		err = vcx_fw_set_roce_caps(vdev, cur, max);
		if (err)
			dev_err(vcx_dev(vdev), "setting RoCE capabilities failed (%d)\n", err);
	}
out:
	kfree(cur);
	kfree(max);
	return err;
}

int vcx_fw_init_hca(struct vcx_dev *vdev)
{
	u8 in[VCX_INIT_HCA_IN_LEN] = {};
	int err;

	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_INIT_HCA);
	err = vcx_cmd_simple(vdev, in, sizeof(in));
	if (!err)
		vdev->hca_initialized = true;
	return err;
}

static int vcx_fw_teardown_profile(struct vcx_dev *vdev, u16 profile, u8 *out)
{
	u8 in[VCX_TEARDOWN_HCA_IN_LEN] = {};

	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_TEARDOWN_HCA);
	vcx_set(in, VCX_TEARDOWN_HCA_IN_PROFILE, profile);
	return vcx_cmd_exec(vdev, in, sizeof(in), out, VCX_TEARDOWN_HCA_OUT_LEN);
}

/* Graceful teardown; if firmware refuses it, force close (mlx5_cmd_force_teardown_hca). */
int vcx_fw_teardown_hca(struct vcx_dev *vdev)
{
	u8 out[VCX_TEARDOWN_HCA_OUT_LEN] = {};
	int err;

	err = vcx_fw_teardown_profile(vdev, VCX_TEARDOWN_PROFILE_GRACEFUL, out);
	if (err && !vcx_in_error(vdev)) {
		dev_warn(vcx_dev(vdev), "graceful teardown failed (%d), forcing\n", err);
		memset(out, 0, sizeof(out));
		err = vcx_fw_teardown_profile(vdev, VCX_TEARDOWN_PROFILE_FORCE_CLOSE, out);
		if (!err && vcx_get(out, VCX_TEARDOWN_HCA_OUT_STATE)) {
			dev_err(vcx_dev(vdev), "force teardown reported failure\n");
			err = -EIO;
		}
	}
	vdev->hca_initialized = false;
	return err;
}

/* Current capabilities, kept for the rest of the driver. */
int vcx_fw_query_caps(struct vcx_dev *vdev)
{
	int err;

	err = vcx_fw_query_cap(vdev, VCX_HCA_CAP_TYPE_GENERAL, VCX_HCA_CAP_OP_MOD_CUR,
			       vdev->caps.general);
	if (err)
		return err;
	if (vcx_get(vdev->caps.general, VCX_CAP_GEN_ROCE))
		err = vcx_fw_query_cap(vdev, VCX_HCA_CAP_TYPE_ROCE, VCX_HCA_CAP_OP_MOD_CUR,
				       vdev->caps.roce);
	/* As mlx5_core reads its Ethernet offload caps: only where the function has them. */
	if (!err && vcx_get(vdev->caps.general, VCX_CAP_GEN_ETH_NET_OFFLOADS))
		err = vcx_fw_query_cap(vdev, VCX_HCA_CAP_TYPE_ETH_OFFLOADS,
				       VCX_HCA_CAP_OP_MOD_CUR, vdev->caps.eth);
	return err;
}

/* The board id (PSID), as mlx5_core reads it at load. */
int vcx_fw_query_adapter(struct vcx_dev *vdev)
{
	u8 in[VCX_QUERY_ADAPTER_IN_LEN] = {};
	u8 *out;
	int err;

	out = kzalloc(VCX_QUERY_ADAPTER_OUT_LEN, GFP_KERNEL);
	if (!out)
		return -ENOMEM;
	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_QUERY_ADAPTER);
	err = vcx_cmd_exec(vdev, in, sizeof(in), out, VCX_QUERY_ADAPTER_OUT_LEN);
	if (!err) {
		const u8 *blk = vcx_cptr(out, VCX_QUERY_ADAPTER_OUT_PARAMS);

		memcpy(vdev->board_id, vcx_cptr(blk, VCX_ADAPTER_PSID), VCX_ADAPTER_PSID_LEN);
		vdev->board_id[VCX_ADAPTER_PSID_LEN] = '\0';
	}
	kfree(out);
	return err;
}

/* The kernel's UAR page: doorbells of the EQs (and later the kernel's CQs). */
int vcx_fw_alloc_uar(struct vcx_dev *vdev)
{
	u8 in[VCX_ALLOC_UAR_IN_LEN] = {};
	u8 out[VCX_ALLOC_UAR_OUT_LEN] = {};
	resource_size_t bar_len = pci_resource_len(vdev->pdev, 0);
	int err;

	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_ALLOC_UAR);
	err = vcx_cmd_exec(vdev, in, sizeof(in), out, sizeof(out));
	if (err)
		return err;
	vdev->uar_index = vcx_get(out, VCX_ALLOC_UAR_OUT_UAR);
	vdev->uar_allocated = true;
	if ((resource_size_t)(vdev->uar_index + 1) * VCX_PAGE_SIZE > bar_len) {
		dev_err(vcx_dev(vdev), "UAR %u lies beyond BAR0\n", vdev->uar_index);
		vcx_fw_dealloc_uar(vdev);
		return -EINVAL;
	}
	vdev->uar = ioremap(pci_resource_start(vdev->pdev, 0) +
			    (resource_size_t)vdev->uar_index * VCX_PAGE_SIZE, VCX_PAGE_SIZE);
	if (!vdev->uar) {
		vcx_fw_dealloc_uar(vdev);
		return -ENOMEM;
	}
	return 0;
}

void vcx_fw_dealloc_uar(struct vcx_dev *vdev)
{
	u8 in[VCX_DEALLOC_UAR_IN_LEN] = {};

	if (vdev->uar) {
		iounmap(vdev->uar);
		vdev->uar = NULL;
	}
	if (!vdev->uar_allocated)
		return;
	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_DEALLOC_UAR);
	vcx_set(in, VCX_DEALLOC_UAR_IN_UAR, vdev->uar_index);
	vcx_cmd_simple(vdev, in, sizeof(in));
	vdev->uar_allocated = false;
}
