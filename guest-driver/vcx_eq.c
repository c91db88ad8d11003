// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcx: MSI-X vectors and event queues (PRM "Event Queue").
 *
 * Vector 0 carries the control EQ, subscribed to command completions, page requests and
 * the asynchronous events mlx5_core's async EQ takes; vectors 1..N carry one completion
 * EQ per online CPU (capped by the vectors granted and the device's EQ limit).
 *
 * An EQ is 2^n 64-byte EQEs in one DMA-coherent buffer, described to the device by a
 * list of 4 KiB page addresses. Software initialises every owner bit to 1; an EQE is
 * new when its owner bit equals the pass parity of the consumer index. The consumer
 * index goes to the UAR: offset 0x48 (update only) at least every 128 EQEs during a long
 * poll, offset 0x40 (update and re-arm) when the handler is done.
 */
#include <linux/cpumask.h>
#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/log2.h>
#include <linux/slab.h>

#include "vcx.h"

/* mlx5_core's async EQ mask: the events of QPs, SRQs, CQs and the port. */
#define VCX_ASYNC_EVENT_MASK						\
	(BIT_ULL(VCX_EVENT_TYPE_PATH_MIG) | BIT_ULL(VCX_EVENT_TYPE_COMM_EST) |	\
	 BIT_ULL(VCX_EVENT_TYPE_SQ_DRAINED) | BIT_ULL(VCX_EVENT_TYPE_CQ_ERROR) |	\
	 BIT_ULL(VCX_EVENT_TYPE_WQ_CATAS_ERROR) |				\
	 BIT_ULL(VCX_EVENT_TYPE_PATH_MIG_FAILED) |				\
	 BIT_ULL(VCX_EVENT_TYPE_WQ_INVAL_REQ_ERROR) |				\
	 BIT_ULL(VCX_EVENT_TYPE_WQ_ACCESS_ERROR) |				\
	 BIT_ULL(VCX_EVENT_TYPE_PORT_CHANGE) |					\
	 BIT_ULL(VCX_EVENT_TYPE_SRQ_CATAS_ERROR) |				\
	 BIT_ULL(VCX_EVENT_TYPE_SRQ_LAST_WQE) |					\
	 BIT_ULL(VCX_EVENT_TYPE_SRQ_RQ_LIMIT))

#define VCX_CTRL_EVENT_MASK						\
	(VCX_ASYNC_EVENT_MASK | BIT_ULL(VCX_EVENT_TYPE_CMD) |			\
	 BIT_ULL(VCX_EVENT_TYPE_PAGE_REQUEST))

static const char *vcx_event_type_str(u8 type)
{
	switch (type) {
	case VCX_EVENT_TYPE_COMP:		return "COMP";
	case VCX_EVENT_TYPE_PATH_MIG:		return "PATH_MIG";
	case VCX_EVENT_TYPE_COMM_EST:		return "COMM_EST";
	case VCX_EVENT_TYPE_SQ_DRAINED:		return "SQ_DRAINED";
	case VCX_EVENT_TYPE_CQ_ERROR:		return "CQ_ERROR";
	case VCX_EVENT_TYPE_WQ_CATAS_ERROR:	return "WQ_CATAS_ERROR";
	case VCX_EVENT_TYPE_PATH_MIG_FAILED:	return "PATH_MIG_FAILED";
	case VCX_EVENT_TYPE_INTERNAL_ERROR:	return "INTERNAL_ERROR";
	case VCX_EVENT_TYPE_PORT_CHANGE:	return "PORT_CHANGE";
	case VCX_EVENT_TYPE_CMD:		return "CMD";
	case VCX_EVENT_TYPE_PAGE_REQUEST:	return "PAGE_REQUEST";
	case VCX_EVENT_TYPE_NIC_VPORT_CHANGE:	return "NIC_VPORT_CHANGE";
	case VCX_EVENT_TYPE_WQ_INVAL_REQ_ERROR:	return "WQ_INVAL_REQ_ERROR";
	case VCX_EVENT_TYPE_WQ_ACCESS_ERROR:	return "WQ_ACCESS_ERROR";
	case VCX_EVENT_TYPE_SRQ_CATAS_ERROR:	return "SRQ_CATAS_ERROR";
	case VCX_EVENT_TYPE_SRQ_LAST_WQE:	return "SRQ_LAST_WQE";
	case VCX_EVENT_TYPE_SRQ_RQ_LIMIT:	return "SRQ_RQ_LIMIT";
	default:				return "unknown event";
	}
}

static u8 *vcx_eq_get_eqe(struct vcx_eq *eq, u32 entry)
{
	return eq->buf + (size_t)(entry & (BIT(eq->log_nent) - 1)) * VCX_EQE_SIZE;
}

/* The next EQE if software owns it, else NULL. */
static u8 *vcx_eq_next_eqe(struct vcx_eq *eq)
{
	u8 *eqe = vcx_eq_get_eqe(eq, eq->cons_index);
	u8 owner = READ_ONCE(eqe[VCX_EQE_SIZE - 1]) & 1;

	if (owner != ((eq->cons_index >> eq->log_nent) & 1))
		return NULL;
	/* Read the EQE body only after its owner bit. */
	dma_rmb();
	return eqe;
}

static void vcx_eq_doorbell(struct vcx_eq *eq, bool arm)
{
	u32 val = (u32)eq->eqn << VCX_UAR_EQ_DB_EQN_SHIFT |
		  (eq->cons_index & VCX_UAR_EQ_DB_CI_MASK);

	iowrite32be(val, eq->vdev->uar + (arm ? VCX_UAR_EQ_DOORBELL_ARM :
					     VCX_UAR_EQ_DOORBELL_NOARM));
}

static void vcx_eq_port_event(struct vcx_dev *vdev, const u8 *eqe)
{
	u8 sub = vcx_get(eqe, VCX_EQE_SUB_TYPE);
	u8 port = vcx_get(eqe, VCX_EQE_PORT_CHANGE_PORT);

	switch (sub) {
	case VCX_PORT_CHANGE_SUBTYPE_ACTIVE:
		dev_info(vcx_dev(vdev), "port %u: link up\n", port);
		break;
	case VCX_PORT_CHANGE_SUBTYPE_DOWN:
		dev_info(vcx_dev(vdev), "port %u: link down\n", port);
		break;
	default:
		dev_dbg(vcx_dev(vdev), "port %u: change event, sub type 0x%x\n", port, sub);
		return;
	}
	vcx_en_port_event(vdev, sub == VCX_PORT_CHANGE_SUBTYPE_ACTIVE);
	vcx_ib_async_event(vdev, eqe);
}

static void vcx_eq_dispatch_ctrl(struct vcx_dev *vdev, const u8 *eqe)
{
	u8 type = vcx_get(eqe, VCX_EQE_TYPE);

	switch (type) {
	case VCX_EVENT_TYPE_CMD:
		vcx_cmd_comp_handler(vdev, vcx_get(eqe, VCX_EQE_CMD_VECTOR));
		break;
	case VCX_EVENT_TYPE_PAGE_REQUEST:
		vcx_page_request(vdev, vcx_get(eqe, VCX_EQE_PAGE_REQ_FUNCTION_ID),
				 (s32)vcx_get(eqe, VCX_EQE_PAGE_REQ_NUM_PAGES));
		break;
	case VCX_EVENT_TYPE_PORT_CHANGE:
		vcx_eq_port_event(vdev, eqe);
		break;
	default:
		/* QP, SRQ and CQ events: to their ib objects (vcx_ib.c). */
		dev_dbg(vcx_dev(vdev), "async event %s(0x%x)\n", vcx_event_type_str(type), type);
		vcx_ib_async_event(vdev, eqe);
		break;
	}
}

static void vcx_eq_dispatch_comp(struct vcx_dev *vdev, const u8 *eqe)
{
	u8 type = vcx_get(eqe, VCX_EQE_TYPE);

	if (type != VCX_EVENT_TYPE_COMP) {
		dev_warn_ratelimited(vcx_dev(vdev), "unexpected event %s(0x%x) on a completion EQ\n",
				     vcx_event_type_str(type), type);
		return;
	}
	vcx_cq_event(vdev, vcx_get(eqe, VCX_EQE_COMP_CQN));
}

/*
 * At most VCX_EQ_POLLING_BUDGET EQEs per interrupt (mlx5's MLX5_EQ_POLLING_BUDGET), so a
 * device that keeps producing events cannot hold a CPU in hard interrupt context: the
 * arm doorbell that ends the handler fires the vector again at once while EQEs remain
 * (PRM "Event Queue": arming with EQEs past the consumer counter raises the interrupt).
 * The budget is also what keeps the device's view of free entries within the spare
 * entries (VCX_EQ_SPARE_ENTRIES): the consumer counter is published at least that often.
 */
static irqreturn_t vcx_eq_irq(int irq, void *data)
{
	struct vcx_eq *eq = data;
	struct vcx_dev *vdev = eq->vdev;
	int handled = 0;
	u8 *eqe;

	while (handled < VCX_EQ_POLLING_BUDGET && (eqe = vcx_eq_next_eqe(eq))) {
		if (eq == &vdev->ctrl_eq)
			vcx_eq_dispatch_ctrl(vdev, eqe);
		else
			vcx_eq_dispatch_comp(vdev, eqe);
		eq->cons_index++;
		eq->events++;
		handled++;
	}
	vcx_eq_doorbell(eq, true);
	return handled ? IRQ_HANDLED : IRQ_NONE;
}

static int vcx_create_eq(struct vcx_dev *vdev, struct vcx_eq *eq, u16 vecidx, u32 nent,
			 u64 mask, const char *name)
{
	struct device *dev = vcx_dev(vdev);
	unsigned int npages, inlen, i;
	u8 out[VCX_CREATE_EQ_OUT_LEN] = {};
	u8 *in, *eqc, *pas;
	int err;

	eq->vdev = vdev;
	eq->vecidx = vecidx;
	eq->log_nent = order_base_2(nent);
	eq->cons_index = 0;
	eq->size = (size_t)VCX_EQE_SIZE << eq->log_nent;
	eq->buf = dma_alloc_coherent(dev, eq->size, &eq->dma, GFP_KERNEL);
	if (!eq->buf)
		return -ENOMEM;
	/* Owner bit 1 everywhere: nothing is valid before the device's first pass. */
	for (i = 0; i < BIT(eq->log_nent); i++)
		vcx_set(vcx_eq_get_eqe(eq, i), VCX_EQE_OWNER, 1);

	npages = DIV_ROUND_UP(eq->size, VCX_PAGE_SIZE);
	inlen = VCX_CREATE_EQ_IN_LEN + npages * VCX_PAS_SIZE;
	in = kvzalloc(inlen, GFP_KERNEL);
	if (!in) {
		err = -ENOMEM;
		goto err_buf;
	}
	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_CREATE_EQ);
	eqc = vcx_ptr(in, VCX_CREATE_EQ_IN_EQC);
	vcx_set(eqc, VCX_EQC_LOG_EQ_SIZE, eq->log_nent);
	vcx_set(eqc, VCX_EQC_UAR_PAGE, vdev->uar_index);
	vcx_set(eqc, VCX_EQC_INTR, vecidx);
	vcx_set(eqc, VCX_EQC_LOG_PAGE_SIZE, 0);	/* 4 KiB pages */
	vcx_set(eqc, VCX_EQC_PAGE_OFFSET, 0);
	vcx_set64(in, VCX_CREATE_EQ_IN_EVENT_BITMASK, mask);
	pas = vcx_ptr(in, VCX_CREATE_EQ_IN_PAS);
	for (i = 0; i < npages; i++)
		vcx_set64(pas + i * VCX_PAS_SIZE, VCX_FLD(0, 64),
			  eq->dma + (u64)i * VCX_PAGE_SIZE);

	/* The handler must be in place before the device can raise the vector. */
	snprintf(eq->irq_name, sizeof(eq->irq_name), "vcx_%s@pci:%s", name,
		 pci_name(vdev->pdev));
	err = request_irq(pci_irq_vector(vdev->pdev, vecidx), vcx_eq_irq, 0, eq->irq_name, eq);
	if (err)
		goto err_in;
	eq->irq_requested = true;

	err = vcx_cmd_exec(vdev, in, inlen, out, sizeof(out));
	if (err)
		goto err_irq;
	eq->eqn = vcx_get(out, VCX_CREATE_EQ_OUT_EQN);
	eq->created = true;
	kvfree(in);
	vcx_eq_doorbell(eq, true);
	dev_dbg(dev, "EQ %u (%s): %u entries, vector %u\n", eq->eqn, name, 1u << eq->log_nent,
		vecidx);
	return 0;

err_irq:
	free_irq(pci_irq_vector(vdev->pdev, vecidx), eq);
	eq->irq_requested = false;
err_in:
	kvfree(in);
err_buf:
	dma_free_coherent(dev, eq->size, eq->buf, eq->dma);
	eq->buf = NULL;
	return err;
}

static void vcx_destroy_eq(struct vcx_dev *vdev, struct vcx_eq *eq)
{
	u8 in[VCX_DESTROY_EQ_IN_LEN] = {};
	u8 out[VCX_DESTROY_EQ_OUT_LEN] = {};
	int err;

	if (eq->created) {
		vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_DESTROY_EQ);
		vcx_set(in, VCX_DESTROY_EQ_IN_EQN, eq->eqn);
		err = vcx_cmd_exec(vdev, in, sizeof(in), out, sizeof(out));
		if (err && !vcx_in_error(vdev))
			dev_err(vcx_dev(vdev), "DESTROY_EQ of EQ %u failed (%d)\n", eq->eqn, err);
		eq->created = false;
	}
	if (eq->irq_requested) {
		free_irq(pci_irq_vector(vdev->pdev, eq->vecidx), eq);
		eq->irq_requested = false;
	}
	if (eq->buf) {
		dma_free_coherent(vcx_dev(vdev), eq->size, eq->buf, eq->dma);
		eq->buf = NULL;
	}
}

/* EQs the device lets this function create (mlx5_max_eq_cap_get()). */
static int vcx_max_eqs(struct vcx_dev *vdev)
{
	u32 max_num_eqs = vcx_get(vdev->caps.general, VCX_CAP_GEN_MAX_NUM_EQS);

	if (max_num_eqs)
		return max_num_eqs;
	return (1 << vcx_get(vdev->caps.general, VCX_CAP_GEN_LOG_MAX_EQ)) - VCX_FW_RESERVED_EQS;
}

static int vcx_alloc_vectors(struct vcx_dev *vdev)
{
	int max_eqs = vcx_max_eqs(vdev);
	int want, nvec;

	if (max_eqs < 2) {
		dev_err(vcx_dev(vdev), "device allows %d EQs, at least 2 needed\n", max_eqs);
		return -ENOMEM;
	}
	want = min_t(int, num_online_cpus() + 1, max_eqs);
	nvec = pci_alloc_irq_vectors(vdev->pdev, 2, want, PCI_IRQ_MSIX);
	if (nvec < 0) {
		dev_err(vcx_dev(vdev), "cannot allocate MSI-X vectors (%d)\n", nvec);
		return nvec;
	}
	vdev->num_vectors = nvec;
	return 0;
}

static int vcx_create_comp_eqs(struct vcx_dev *vdev)
{
	char name[16];
	int i, err;

	vdev->num_comp_eqs = vdev->num_vectors - 1;
	vdev->comp_eqs = kcalloc(vdev->num_comp_eqs, sizeof(*vdev->comp_eqs), GFP_KERNEL);
	if (!vdev->comp_eqs)
		return -ENOMEM;
	for (i = 0; i < vdev->num_comp_eqs; i++) {
		snprintf(name, sizeof(name), "comp%d", i);
		/* Completion EQs take no event types: CQs name their EQ. */
		err = vcx_create_eq(vdev, &vdev->comp_eqs[i], i + 1, VCX_COMP_EQ_ENTRIES, 0,
				    name);
		if (err) {
			dev_err(vcx_dev(vdev), "creating completion EQ %d failed (%d)\n", i, err);
			return err;
		}
		/* Spread completion vectors over the CPUs, nearest NUMA node first. */
		irq_update_affinity_hint(pci_irq_vector(vdev->pdev, i + 1),
					 cpumask_of(cpumask_local_spread(i, dev_to_node(vcx_dev(vdev)))));
	}
	return 0;
}

static void vcx_destroy_comp_eqs(struct vcx_dev *vdev)
{
	int i;

	if (!vdev->comp_eqs)
		return;
	for (i = vdev->num_comp_eqs - 1; i >= 0; i--) {
		if (vdev->comp_eqs[i].irq_requested)
			irq_update_affinity_hint(pci_irq_vector(vdev->pdev, i + 1), NULL);
		vcx_destroy_eq(vdev, &vdev->comp_eqs[i]);
	}
	kfree(vdev->comp_eqs);
	vdev->comp_eqs = NULL;
	vdev->num_comp_eqs = 0;
}

/*
 * Vectors, control EQ (then commands switch to event mode), completion EQs. On failure
 * everything created here is destroyed again.
 */
int vcx_eq_table_create(struct vcx_dev *vdev)
{
	int err;

	err = vcx_alloc_vectors(vdev);
	if (err)
		return err;
	err = vcx_create_eq(vdev, &vdev->ctrl_eq, 0, VCX_CTRL_EQ_ENTRIES, VCX_CTRL_EVENT_MASK,
			    "ctrl");
	if (err) {
		dev_err(vcx_dev(vdev), "creating the control EQ failed (%d)\n", err);
		goto err_vectors;
	}
	vcx_cmd_use_events(vdev);

	err = vcx_create_comp_eqs(vdev);
	if (err)
		goto err_comp;
	dev_dbg(vcx_dev(vdev), "%d MSI-X vectors, %d completion EQs\n", vdev->num_vectors,
		vdev->num_comp_eqs);
	return 0;

err_comp:
	vcx_destroy_comp_eqs(vdev);
	vcx_cmd_use_polling(vdev);
	vcx_destroy_eq(vdev, &vdev->ctrl_eq);
err_vectors:
	pci_free_irq_vectors(vdev->pdev);
	vdev->num_vectors = 0;
	return err;
}

/* Completion EQs, back to polling, control EQ, vectors. */
void vcx_eq_table_destroy(struct vcx_dev *vdev)
{
	vcx_destroy_comp_eqs(vdev);
	vcx_cmd_use_polling(vdev);
	vcx_destroy_eq(vdev, &vdev->ctrl_eq);
	if (vdev->num_vectors) {
		pci_free_irq_vectors(vdev->pdev);
		vdev->num_vectors = 0;
	}
}
