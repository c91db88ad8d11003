// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcx: memory regions (CREATE_MKEY / DESTROY_MKEY).
 *
 * - DMA MR (ib_alloc_pd's local_dma_lkey, get_dma_mr): a PA-mode mkey covering all of
 *   memory (length64), as mlx5_ib_get_dma_mr().
 * - User MR: the buffer is pinned with ib_umem, the best page size the mkey can use is
 *   picked, and the DMA block addresses become the MTT list of an MTT-mode mkey.
 *   ibv_rereg_mr builds a new mkey (vcx_rereg_user_mr).
 * - FRWR (IB_MR_TYPE_MEM_REG), when the device executes UMR WQEs (ibd->frwr): alloc_mr
 *   creates a free MTT key with umr_en and room for max_num_sg translations, plus a
 *   coherent DMA buffer for its MTT list; map_mr_sg fills the list (ib_sg_to_pages);
 *   IB_WR_REG_MR / IB_WR_LOCAL_INV become UMR WQEs in vcx_qp.c. Without UMR, alloc_mr
 *   fails with -EOPNOTSUPP and IB_DEVICE_MEM_MGT_EXTENSIONS is not advertised.
 * - SG_GAPS (IB_MR_TYPE_SG_GAPS), offered with memory windows (cap imaicl) as mlx5_ib
 *   offers it: a free KLM key, an indirect MR whose entries are the SG list's elements
 *   through the PD's local DMA key, any offsets and lengths (as mlx5_ib_sg_to_klms).
 *
 * lkey = rkey = mkey index << 8 | variant byte.
 */
#include "vcx_verbs.h"

/* Page sizes an MTT mkey accepts: 4 KiB to 2 GiB (mkc log_page_size, 6 bits). */
#define VCX_MKEY_PAGE_SIZES	GENMASK_ULL(31, 12)

static atomic_t vcx_mkey_variant = ATOMIC_INIT(0);

void vcx_mkc_set_access(u8 *mkc, int access)
{
	vcx_set(mkc, VCX_MKC_A, !!(access & IB_ACCESS_REMOTE_ATOMIC));
	vcx_set(mkc, VCX_MKC_RW, !!(access & IB_ACCESS_REMOTE_WRITE));
	vcx_set(mkc, VCX_MKC_RR, !!(access & IB_ACCESS_REMOTE_READ));
	vcx_set(mkc, VCX_MKC_LW, !!(access & IB_ACCESS_LOCAL_WRITE));
	vcx_set(mkc, VCX_MKC_LR, 1);
}

/*
 * CREATE_MKEY with a fresh variant byte (mkey_7_0) in the mkc of @in: the key of an index
 * that is reused still changes. Returns the whole key (index << 8 | variant) in *mkey.
 * Memory regions and memory windows (vcx_mw.c) are created through here.
 */
int vcx_mkey_create(struct vcx_dev *vdev, u8 *in, size_t inlen, u32 *mkey)
{
	u8 out[VCX_CREATE_MKEY_OUT_LEN] = {};
	u8 key = atomic_inc_return(&vcx_mkey_variant) & 0xff;
	int err;

	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_CREATE_MKEY);
	vcx_set(in + VCX_CREATE_MKEY_IN_MKC_AT, VCX_MKC_MKEY_7_0, key);
	err = vcx_cmd_exec(vdev, in, inlen, out, sizeof(out));
	if (err)
		return err;
	*mkey = VCX_MKEY(vcx_get(out, VCX_CREATE_MKEY_OUT_MKEY_INDEX), key);
	return 0;
}

int vcx_mkey_destroy(struct vcx_dev *vdev, u32 mkey_index)
{
	u8 in[VCX_OBJ_CMD_LEN] = {};
	u8 out[VCX_OBJ_CMD_LEN] = {};
	int err;

	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_DESTROY_MKEY);
	vcx_set(in, VCX_DESTROY_MKEY_IN_MKEY_INDEX, mkey_index);
	err = vcx_cmd_exec(vdev, in, sizeof(in), out, sizeof(out));
	/* In the error state the function is gone: the key went with it. */
	return vcx_in_error(vdev) ? 0 : err;
}

static int vcx_create_mkey(struct vcx_dev *vdev, struct vcx_mr *mr, u8 *in, size_t inlen)
{
	u32 mkey;
	int err;

	err = vcx_mkey_create(vdev, in, inlen, &mkey);
	if (err)
		return err;
	mr->mkey_index = mkey >> 8;
	mr->ibmr.lkey = mkey;
	mr->ibmr.rkey = mkey;
	return 0;
}

struct ib_mr *vcx_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct vcx_dev *vdev = ibdev_to_vdev(ibpd->device);
	u8 in[VCX_CREATE_MKEY_IN_LEN] = {};
	struct vcx_mr *mr;
	u8 *mkc;
	int err;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mkc = in + VCX_CREATE_MKEY_IN_MKC_AT;
	vcx_set(mkc, VCX_MKC_ACCESS_MODE_1_0, VCX_MKC_ACCESS_MODE_PA);
	vcx_mkc_set_access(mkc, access);
	vcx_set(mkc, VCX_MKC_LENGTH64, 1);
	vcx_set(mkc, VCX_MKC_PD, to_vpd(ibpd)->pdn);
	vcx_set(mkc, VCX_MKC_QPN, VCX_MKC_QPN_UNBOUND);
	vcx_set64(mkc, VCX_MKC_START_ADDR, 0);
	err = vcx_create_mkey(vdev, mr, in, sizeof(in));
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

#define VCX_USER_MR_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
				 IB_ACCESS_RELAXED_ORDERING)

/*
 * IB_ACCESS_MW_BIND is accepted when windows are offered and, as in mlx5_ib, leaves no
 * trace in the mkc: the PRM has no "bind allowed" bit; the bind UMR checks PD, range and
 * rights against the MR.
 */
static bool vcx_mr_access_ok(struct ib_device *ibdev, int access)
{
	int ok = VCX_USER_MR_ACCESS | (to_vibdev(ibdev)->mw ? IB_ACCESS_MW_BIND : 0);

	return !(access & ~ok);
}

/*
 * An MTT-mode mkey over an already pinned umem: the DMA blocks of the best page size
 * become the translation list. On success the MR owns the umem.
 */
static int vcx_mr_create_user_mkey(struct vcx_dev *vdev, struct vcx_mr *mr, struct ib_pd *ibpd,
				   struct ib_umem *umem, u64 virt, u64 length, int access)
{
	struct ib_block_iter biter;
	unsigned long page_size;
	size_t nmtt, inlen, i = 0;
	u8 *in, *mkc, *mtt;
	int err;

	page_size = ib_umem_find_best_pgsz(umem, VCX_MKEY_PAGE_SIZES, virt);
	if (!page_size)
		return -EINVAL;
	nmtt = ib_umem_num_dma_blocks(umem, page_size);
	inlen = VCX_CREATE_MKEY_IN_LEN + ALIGN(nmtt, 2) * VCX_MTT_SIZE;
	in = kvzalloc(inlen, GFP_KERNEL);
	if (!in)
		return -ENOMEM;
	mtt = in + VCX_CREATE_MKEY_IN_MTT_AT;
	rdma_umem_for_each_dma_block(umem, &biter, page_size)
		vcx_set64(mtt + i++ * VCX_MTT_SIZE, VCX_FLD(0, 64),
			  rdma_block_iter_dma_address(&biter));

	mkc = in + VCX_CREATE_MKEY_IN_MKC_AT;
	vcx_set(mkc, VCX_MKC_ACCESS_MODE_1_0, VCX_MKC_ACCESS_MODE_MTT);
	vcx_mkc_set_access(mkc, access);
	/* the UMR QP may rewrite its PD and rights later (rereg), as mlx5's reg_create() */
	vcx_set(mkc, VCX_MKC_UMR_EN, 1);
	vcx_set(mkc, VCX_MKC_PD, to_vpd(ibpd)->pdn);
	vcx_set(mkc, VCX_MKC_QPN, VCX_MKC_QPN_UNBOUND);
	vcx_set64(mkc, VCX_MKC_START_ADDR, virt);
	vcx_set64(mkc, VCX_MKC_LEN, length);
	vcx_set(mkc, VCX_MKC_LOG_PAGE_SIZE, order_base_2(page_size));
	vcx_set(mkc, VCX_MKC_TRANSLATIONS_OCTWORD_SIZE, DIV_ROUND_UP(nmtt, 2));
	vcx_set(in, VCX_CREATE_MKEY_IN_XLT_ACTUAL, DIV_ROUND_UP(nmtt, 2));
	err = vcx_create_mkey(vdev, mr, in, inlen);
	kvfree(in);
	if (err)
		return err;
	mr->umem = umem;
	mr->access = access;
	mr->ibmr.page_size = page_size;
	return 0;
}

struct ib_mr *vcx_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length, u64 virt,
			      int access, struct ib_udata *udata)
{
	struct vcx_dev *vdev = ibdev_to_vdev(ibpd->device);
	struct ib_umem *umem;
	struct vcx_mr *mr;
	int err;

	if (!vcx_mr_access_ok(ibpd->device, access))
		return ERR_PTR(-EOPNOTSUPP);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	umem = ib_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(umem)) {
		err = PTR_ERR(umem);
		goto err_free;
	}
	err = vcx_mr_create_user_mkey(vdev, mr, ibpd, umem, virt, length, access);
	if (err)
		goto err_umem;
	return &mr->ibmr;

err_umem:
	ib_umem_release(umem);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

/*
 * ibv_rereg_mr, as mlx5_ib_rereg_user_mr() decides it:
 * - PD and/or access only, on pages pinned writable enough: one UMR on the driver's UMR
 *   QP rewrites the key in place (vcx_umr.c); lkey and rkey stay, NULL goes back to
 *   uverbs, which updates the PD.
 * - otherwise (new translation, or the rights need write access the pinning lacks, or no
 *   UMR QP): a new mkey built from the old MR with the changes applied is returned;
 *   uverbs puts it in the old MR's handle and deregisters the old one, so the keys change,
 *   which the verbs contract allows. The pinned pages move to the new MR when the
 *   translation stays. On failure the old MR is untouched.
 */
struct ib_mr *vcx_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start, u64 length,
				u64 virt, int access, struct ib_pd *new_pd,
				struct ib_udata *udata)
{
	struct vcx_dev *vdev = ibdev_to_vdev(ibmr->device);
	struct vcx_mr *old = to_vmr(ibmr), *mr;
	struct ib_pd *pd = (flags & IB_MR_REREG_PD) ? new_pd : ibmr->pd;
	struct ib_umem *umem = old->umem;
	bool new_umem;
	int err;

	if (!old->umem || (flags & ~(IB_MR_REREG_TRANS | IB_MR_REREG_PD | IB_MR_REREG_ACCESS)))
		return ERR_PTR(-EOPNOTSUPP);
	if (!(flags & IB_MR_REREG_ACCESS))
		access = old->access;
	else if (!vcx_mr_access_ok(ibmr->device, access))
		return ERR_PTR(-EOPNOTSUPP);
	if (!(flags & IB_MR_REREG_TRANS)) {
		start = umem->address;
		length = umem->length;
		virt = ibmr->iova;
	}
	new_umem = (flags & IB_MR_REREG_TRANS) || (ib_access_writable(access) && !umem->writable);
	if (!new_umem && vcx_umr_available(to_vibdev(ibmr->device))) {
		err = vcx_umr_rereg_pd_access(to_vibdev(ibmr->device), old, pd, access);
		if (err)
			return ERR_PTR(err);
		old->access = access;
		return NULL;
	}

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	if (new_umem) {
		umem = ib_umem_get(ibmr->device, start, length, access);
		if (IS_ERR(umem)) {
			err = PTR_ERR(umem);
			goto err_free;
		}
	}
	err = vcx_mr_create_user_mkey(vdev, mr, pd, umem, virt, length, access);
	if (err)
		goto err_umem;
	if (!new_umem)
		old->umem = NULL;	/* the new MR owns the pinning now */
	return &mr->ibmr;

err_umem:
	if (new_umem)
		ib_umem_release(umem);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

int vcx_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct vcx_mr *mr = to_vmr(ibmr);
	int err;

	err = vcx_mkey_destroy(ibdev_to_vdev(ibmr->device), mr->mkey_index);
	if (err)
		return err;
	ib_umem_release(mr->umem);
	if (mr->mtt)
		dma_free_coherent(vcx_dev(ibdev_to_vdev(ibmr->device)),
				  mr->max_descs * vcx_mr_desc_size(mr), mr->mtt, mr->mtt_dma);
	kfree(mr);
	return 0;
}

struct ib_mr *vcx_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type, u32 max_num_sg)
{
	struct vcx_ib_dev *ibd = to_vibdev(ibpd->device);
	struct vcx_dev *vdev = ibd->vdev;
	u8 in[VCX_CREATE_MKEY_IN_LEN] = {};
	struct vcx_mr *mr;
	u8 *mkc;
	int err;

	if (!ibd->frwr || (type != IB_MR_TYPE_MEM_REG &&
			   (type != IB_MR_TYPE_SG_GAPS || !ibd->mw)))
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > ibd->frwr_max)
		return ERR_PTR(-EINVAL);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->klm = type == IB_MR_TYPE_SG_GAPS;
	/* whole 64-byte units: the UMR loads the list in them */
	mr->max_descs = ALIGN(max_num_sg, 64 / vcx_mr_desc_size(mr));
	mr->mtt = dma_alloc_coherent(vcx_dev(vdev), mr->max_descs * vcx_mr_desc_size(mr),
				     &mr->mtt_dma, GFP_KERNEL);
	if (!mr->mtt) {
		err = -ENOMEM;
		goto err_free;
	}
	mkc = in + VCX_CREATE_MKEY_IN_MKC_AT;
	vcx_set(mkc, VCX_MKC_FREE, 1);
	vcx_set(mkc, VCX_MKC_UMR_EN, 1);
	vcx_set(mkc, VCX_MKC_ACCESS_MODE_1_0,
		mr->klm ? VCX_MKC_ACCESS_MODE_KLM : VCX_MKC_ACCESS_MODE_MTT);
	vcx_set(mkc, VCX_MKC_EN_RINVAL, 1);
	vcx_set(mkc, VCX_MKC_PD, to_vpd(ibpd)->pdn);
	vcx_set(mkc, VCX_MKC_QPN, VCX_MKC_QPN_UNBOUND);
	if (mr->klm) {
		vcx_set(mkc, VCX_MKC_LR, 1);
		vcx_set(mkc, VCX_MKC_LW, 1);
	} else {
		vcx_set(mkc, VCX_MKC_LOG_PAGE_SIZE, PAGE_SHIFT);
	}
	vcx_set(mkc, VCX_MKC_TRANSLATIONS_OCTWORD_SIZE,
		mr->max_descs * vcx_mr_desc_size(mr) / 16);
	err = vcx_create_mkey(vdev, mr, in, sizeof(in));
	if (err)
		goto err_mtt;
	return &mr->ibmr;

err_mtt:
	dma_free_coherent(vcx_dev(vdev), mr->max_descs * vcx_mr_desc_size(mr), mr->mtt,
			  mr->mtt_dma);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

static int vcx_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct vcx_mr *mr = to_vmr(ibmr);

	if (mr->ndescs == mr->max_descs)
		return -ENOMEM;
	mr->mtt[mr->ndescs++] = cpu_to_be64(addr);
	return 0;
}

/*
 * SG_GAPS: one KLM entry per SG element (byte_count, the PD's local DMA key, address),
 * the first from *sg_offset; the MR's iova is where that starts, its length their sum.
 */
static int vcx_sg_to_klms(struct vcx_mr *mr, struct scatterlist *sgl, int sg_nents,
			  unsigned int *sg_offset_p)
{
	unsigned int sg_offset = sg_offset_p ? *sg_offset_p : 0;
	u32 lkey = mr->ibmr.pd->local_dma_lkey;
	struct scatterlist *sg;
	int i;

	mr->ibmr.iova = sg_dma_address(sgl) + sg_offset;
	mr->ibmr.length = 0;
	for_each_sg(sgl, sg, sg_nents, i) {
		u8 *e = (u8 *)mr->mtt + i * VCX_WQE_KLM_SIZE;

		if (i == mr->max_descs)
			break;
		vcx_set(e, VCX_WQE_KLM_BYTE_COUNT, sg_dma_len(sg) - sg_offset);
		vcx_set(e, VCX_WQE_KLM_MKEY, lkey);
		vcx_set64(e, VCX_WQE_KLM_ADDR, sg_dma_address(sg) + sg_offset);
		mr->ibmr.length += sg_dma_len(sg) - sg_offset;
		sg_offset = 0;
	}
	mr->ndescs = i;
	if (sg_offset_p)
		*sg_offset_p = sg_offset;
	return i;
}

int vcx_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		  unsigned int *sg_offset)
{
	struct vcx_mr *mr = to_vmr(ibmr);

	if (!mr->mtt)
		return -EINVAL;
	mr->ndescs = 0;
	memset(mr->mtt, 0, mr->max_descs * vcx_mr_desc_size(mr));
	if (mr->klm)
		return vcx_sg_to_klms(mr, sg, sg_nents, sg_offset);
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, vcx_set_page);
}
