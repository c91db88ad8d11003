// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcx: memory windows (ib_alloc_mw / ib_dealloc_mw), as mlx5_ib_alloc_mw does them.
 *
 * A window is an mkey created free, with umr_en, in KLM access mode, local read, not
 * bound to a QP (qpn 0xffffff), en_rinval for type 2 and room for roundup(num_klms, 4)
 * KLM entries. The library binds it with a UMR WQE on its own QP (one KLM entry naming the
 * MR and the window's range) and invalidates it with a UMR (LOCAL_INV) or, type 2, a
 * SEND_WITH_INV from the peer; the kernel only creates and destroys the key. Offered when
 * the device sets the imaicl capability (ibd->mw); otherwise alloc_mw is -EOPNOTSUPP.
 *
 * rkey = mkey index << 8 | variant byte.
 */
#include "vcx_verbs.h"

int vcx_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct vcx_ib_dev *ibd = to_vibdev(ibmw->device);
	struct vcx_dev *vdev = ibd->vdev;
	struct vcx_mw *mw = to_vmw(ibmw);
	struct vcx_alloc_mw_req req = {};
	u8 in[VCX_CREATE_MKEY_IN_LEN] = {};
	u32 nklm, mkey;
	u8 *mkc;
	int err;

	if (!ibd->mw)
		return -EOPNOTSUPP;
	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;		/* no such type (uverbs refuses it first) */
	if (udata && udata->inlen) {
		err = ib_copy_from_udata(&req, udata, min(udata->inlen, sizeof(req)));
		if (err)
			return err;
		if (req.comp_mask || req.reserved1 || req.reserved2)
			return -EOPNOTSUPP;
		if (udata->inlen > sizeof(req) &&
		    !ib_is_udata_cleared(udata, sizeof(req), udata->inlen - sizeof(req)))
			return -EOPNOTSUPP;
	}
	nklm = roundup(req.num_klms ? req.num_klms : 1, 4);

	mkc = in + VCX_CREATE_MKEY_IN_MKC_AT;
	vcx_set(mkc, VCX_MKC_FREE, 1);
	vcx_set(mkc, VCX_MKC_UMR_EN, 1);
	vcx_set(mkc, VCX_MKC_LR, 1);
	vcx_set(mkc, VCX_MKC_ACCESS_MODE_1_0, VCX_MKC_ACCESS_MODE_KLM);
	vcx_set(mkc, VCX_MKC_EN_RINVAL, ibmw->type == IB_MW_TYPE_2);
	vcx_set(mkc, VCX_MKC_QPN, VCX_MKC_QPN_UNBOUND);
	vcx_set(mkc, VCX_MKC_PD, to_vpd(ibmw->pd)->pdn);
	/* a KLM entry is one octoword */
	vcx_set(mkc, VCX_MKC_TRANSLATIONS_OCTWORD_SIZE, nklm);
	err = vcx_mkey_create(vdev, in, sizeof(in), &mkey);
	if (err)
		return err;
	mw->mkey_index = mkey >> 8;
	ibmw->rkey = mkey;
	return 0;
}

int vcx_dealloc_mw(struct ib_mw *ibmw)
{
	/* A bound window may be destroyed: the device drops its binding with the key. */
	return vcx_mkey_destroy(ibdev_to_vdev(ibmw->device), to_vmw(ibmw)->mkey_index);
}
