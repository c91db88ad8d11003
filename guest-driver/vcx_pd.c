// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcx: protection domains (ALLOC_PD / DEALLOC_PD).
 */
#include "vcx_verbs.h"

int vcx_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct vcx_dev *vdev = ibdev_to_vdev(ibpd->device);
	struct vcx_pd *pd = to_vpd(ibpd);
	u8 in[VCX_OBJ_CMD_LEN] = {};
	u8 out[VCX_OBJ_CMD_LEN] = {};
	int err;

	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_ALLOC_PD);
	err = vcx_cmd_exec(vdev, in, sizeof(in), out, sizeof(out));
	if (err)
		return err;
	pd->pdn = vcx_get(out, VCX_ALLOC_PD_OUT_PD);

	if (udata) {
		struct vcx_alloc_pd_resp resp = { .pdn = pd->pdn };

		err = ib_copy_to_udata(udata, &resp, min(udata->outlen, sizeof(resp)));
		if (err) {
			vcx_dealloc_pd(ibpd, udata);
			return err;
		}
	}
	return 0;
}

int vcx_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct vcx_dev *vdev = ibdev_to_vdev(ibpd->device);
	u8 in[VCX_OBJ_CMD_LEN] = {};
	u8 out[VCX_OBJ_CMD_LEN] = {};
	int err;

	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_DEALLOC_PD);
	vcx_set(in, VCX_DEALLOC_PD_IN_PD, to_vpd(ibpd)->pdn);
	err = vcx_cmd_exec(vdev, in, sizeof(in), out, sizeof(out));
	/* In the error state the function is gone: the PD went with it. */
	return vcx_in_error(vdev) ? 0 : err;
}
