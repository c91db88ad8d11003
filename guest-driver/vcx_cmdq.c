// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcx: the command queue (PRM "Command Interface").
 *
 * One 4 KiB DMA-coherent page holds 2^log_cmdq_size entries of 2^log_cmdq_stride bytes,
 * both read from the init segment. Entries 0..n-2 carry regular commands; the last entry
 * is kept for MANAGE_PAGES so that a page request can always be served while regular
 * commands wait for firmware that waits for pages.
 *
 * A command's first 16 bytes of input and output travel inline in the entry; the rest
 * goes through chains of 576-byte mailbox blocks (1 KiB aligned, from a DMA pool), each
 * stamped with its block number and the entry's token. The driver writes the entry,
 * hands it to the device (ownership bit) and rings the doorbell (bit n of iseg 0x18).
 *
 * Completion: in polling mode (until the control EQ exists, and again from just before
 * it is destroyed) the caller polls the ownership bit; in event mode the device reports
 * completed entries in a command EQE and the EQ handler completes the waiters; the
 * ownership bit is then not polled. Each command has a timeout (iseg cmd_exec_to, else
 * 60 s): a timed-out command returns -ETIMEDOUT and its entry (with its mailboxes) is
 * kept out of use until the device hands it back or the function is reset.
 *
 * In the error state (vcx_health.c) new commands fail at once with -EIO and commands in
 * flight are completed with -EIO, so nothing waits for firmware that has died.
 */
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/dmapool.h>
#include <linux/jiffies.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "vcx.h"

/* Entry byte offsets (PRM "Command Queue Entry"). */
#define ENT_STATUS_OWN	VCX_CMDQ_ENT_STATUS_OWN_BYTE
#define ENT_OWNER_HW	0x1

const char *vcx_cmd_opcode_str(u16 opcode)
{
	switch (opcode) {
	case VCX_CMD_OP_QUERY_HCA_CAP:		return "QUERY_HCA_CAP";
	case VCX_CMD_OP_QUERY_ADAPTER:		return "QUERY_ADAPTER";
	case VCX_CMD_OP_INIT_HCA:		return "INIT_HCA";
	case VCX_CMD_OP_TEARDOWN_HCA:		return "TEARDOWN_HCA";
	case VCX_CMD_OP_ENABLE_HCA:		return "ENABLE_HCA";
	case VCX_CMD_OP_DISABLE_HCA:		return "DISABLE_HCA";
	case VCX_CMD_OP_QUERY_PAGES:		return "QUERY_PAGES";
	case VCX_CMD_OP_MANAGE_PAGES:		return "MANAGE_PAGES";
	case VCX_CMD_OP_SET_HCA_CAP:		return "SET_HCA_CAP";
	case VCX_CMD_OP_QUERY_ISSI:		return "QUERY_ISSI";
	case VCX_CMD_OP_SET_ISSI:		return "SET_ISSI";
	case VCX_CMD_OP_SET_DRIVER_VERSION:	return "SET_DRIVER_VERSION";
	case VCX_CMD_OP_CREATE_EQ:		return "CREATE_EQ";
	case VCX_CMD_OP_DESTROY_EQ:		return "DESTROY_EQ";
	case VCX_CMD_OP_QUERY_EQ:		return "QUERY_EQ";
	case VCX_CMD_OP_GEN_EQE:		return "GEN_EQE";
	case VCX_CMD_OP_ALLOC_UAR:		return "ALLOC_UAR";
	case VCX_CMD_OP_DEALLOC_UAR:		return "DEALLOC_UAR";
	case VCX_CMD_OP_ACCESS_REG:		return "ACCESS_REG";
	case VCX_CMD_OP_NOP:			return "NOP";
	case VCX_CMD_OP_QUERY_VPORT_STATE:	return "QUERY_VPORT_STATE";
	case VCX_CMD_OP_QUERY_NIC_VPORT_CONTEXT:	return "QUERY_NIC_VPORT_CONTEXT";
	case VCX_CMD_OP_MODIFY_NIC_VPORT_CONTEXT:	return "MODIFY_NIC_VPORT_CONTEXT";
	case VCX_CMD_OP_CREATE_MKEY:		return "CREATE_MKEY";
	case VCX_CMD_OP_QUERY_MKEY:		return "QUERY_MKEY";
	case VCX_CMD_OP_DESTROY_MKEY:		return "DESTROY_MKEY";
	case VCX_CMD_OP_CREATE_CQ:		return "CREATE_CQ";
	case VCX_CMD_OP_DESTROY_CQ:		return "DESTROY_CQ";
	case VCX_CMD_OP_QUERY_CQ:		return "QUERY_CQ";
	case VCX_CMD_OP_MODIFY_CQ:		return "MODIFY_CQ";
	case VCX_CMD_OP_CREATE_QP:		return "CREATE_QP";
	case VCX_CMD_OP_DESTROY_QP:		return "DESTROY_QP";
	case VCX_CMD_OP_RST2INIT_QP:		return "RST2INIT_QP";
	case VCX_CMD_OP_INIT2RTR_QP:		return "INIT2RTR_QP";
	case VCX_CMD_OP_RTR2RTS_QP:		return "RTR2RTS_QP";
	case VCX_CMD_OP_RTS2RTS_QP:		return "RTS2RTS_QP";
	case VCX_CMD_OP_SQERR2RTS_QP:		return "SQERR2RTS_QP";
	case VCX_CMD_OP_2ERR_QP:		return "2ERR_QP";
	case VCX_CMD_OP_2RST_QP:		return "2RST_QP";
	case VCX_CMD_OP_QUERY_QP:		return "QUERY_QP";
	case VCX_CMD_OP_SQD_RTS_QP:		return "SQD_RTS_QP";
	case VCX_CMD_OP_INIT2INIT_QP:		return "INIT2INIT_QP";
	case VCX_CMD_OP_CREATE_SRQ:		return "CREATE_SRQ";
	case VCX_CMD_OP_DESTROY_SRQ:		return "DESTROY_SRQ";
	case VCX_CMD_OP_QUERY_SRQ:		return "QUERY_SRQ";
	case VCX_CMD_OP_ARM_RQ:			return "ARM_RQ";
	case VCX_CMD_OP_QUERY_ROCE_ADDRESS:	return "QUERY_ROCE_ADDRESS";
	case VCX_CMD_OP_SET_ROCE_ADDRESS:	return "SET_ROCE_ADDRESS";
	case VCX_CMD_OP_ALLOC_PD:		return "ALLOC_PD";
	case VCX_CMD_OP_DEALLOC_PD:		return "DEALLOC_PD";
	case VCX_CMD_OP_CREATE_RMP:		return "CREATE_RMP";
	case VCX_CMD_OP_MODIFY_RMP:		return "MODIFY_RMP";
	case VCX_CMD_OP_DESTROY_RMP:		return "DESTROY_RMP";
	case VCX_CMD_OP_QUERY_RMP:		return "QUERY_RMP";
	default:				return "unknown command opcode";
	}
}

static const char *vcx_cmd_status_str(u8 status)
{
	switch (status) {
	case VCX_CMD_STAT_OK:			return "OK";
	case VCX_CMD_STAT_INT_ERR:		return "internal error";
	case VCX_CMD_STAT_BAD_OP:		return "bad operation";
	case VCX_CMD_STAT_BAD_PARAM:		return "bad parameter";
	case VCX_CMD_STAT_BAD_SYS_STATE:	return "bad system state";
	case VCX_CMD_STAT_BAD_RES:		return "bad resource";
	case VCX_CMD_STAT_RES_BUSY:		return "resource busy";
	case VCX_CMD_STAT_NOT_READY:		return "not ready";
	case VCX_CMD_STAT_EXCEED_LIM:		return "limits exceeded";
	case VCX_CMD_STAT_BAD_RES_STATE:	return "bad resource state";
	case VCX_CMD_STAT_BAD_INDEX:		return "bad index";
	case VCX_CMD_STAT_NO_RES:		return "no resources";
	case VCX_CMD_STAT_BAD_QP_STATE:		return "bad QP state";
	case VCX_CMD_STAT_BAD_PKT:		return "bad packet";
	case VCX_CMD_STAT_BAD_SIZE:		return "bad size";
	case VCX_CMD_STAT_BAD_INPUT_LEN:	return "bad input length";
	case VCX_CMD_STAT_BAD_OUTPUT_LEN:	return "bad output length";
	default:				return "unknown status";
	}
}

/* Command status -> errno, as mlx5_cmd_check() does (BAD_OP: -EOPNOTSUPP). */
static int vcx_cmd_status_to_err(u8 status)
{
	switch (status) {
	case VCX_CMD_STAT_OK:			return 0;
	case VCX_CMD_STAT_INT_ERR:		return -EIO;
	case VCX_CMD_STAT_BAD_OP:		return -EOPNOTSUPP;
	case VCX_CMD_STAT_BAD_PARAM:		return -EINVAL;
	case VCX_CMD_STAT_BAD_SYS_STATE:	return -EIO;
	case VCX_CMD_STAT_BAD_RES:		return -EINVAL;
	case VCX_CMD_STAT_RES_BUSY:		return -EBUSY;
	case VCX_CMD_STAT_NOT_READY:		return -EAGAIN;
	case VCX_CMD_STAT_EXCEED_LIM:		return -ENOMEM;
	case VCX_CMD_STAT_BAD_RES_STATE:	return -EINVAL;
	case VCX_CMD_STAT_BAD_INDEX:		return -EINVAL;
	case VCX_CMD_STAT_NO_RES:		return -EAGAIN;
	case VCX_CMD_STAT_BAD_QP_STATE:		return -EINVAL;
	case VCX_CMD_STAT_BAD_PKT:		return -EINVAL;
	case VCX_CMD_STAT_BAD_SIZE:		return -EINVAL;
	case VCX_CMD_STAT_BAD_INPUT_LEN:	return -EIO;
	case VCX_CMD_STAT_BAD_OUTPUT_LEN:	return -EIO;
	default:				return -EIO;
	}
}

static const char *vcx_cmd_deliv_str(u8 deliv)
{
	switch (deliv) {
	case VCX_CMD_DELIV_SIGNATURE_ERR:	return "signature error";
	case VCX_CMD_DELIV_TOKEN_ERR:		return "token error";
	case VCX_CMD_DELIV_BAD_BLOCK_NUM:	return "bad block number";
	case VCX_CMD_DELIV_OUT_PTR_ALIGN_ERR:	return "output pointer not aligned";
	case VCX_CMD_DELIV_IN_PTR_ALIGN_ERR:	return "input pointer not aligned";
	case VCX_CMD_DELIV_FW_ERR:		return "firmware internal error";
	case VCX_CMD_DELIV_IN_LENGTH_ERR:	return "input length error";
	case VCX_CMD_DELIV_OUT_LENGTH_ERR:	return "output length error";
	case VCX_CMD_DELIV_RES_FLD_NOT_CLR:	return "reserved fields not cleared";
	case VCX_CMD_DELIV_BAD_DESC:		return "bad command descriptor";
	default:				return "unknown delivery status";
	}
}

/* Delivery status -> errno, as mlx5_core's deliv_status_to_err(). */
static int vcx_cmd_deliv_to_err(u8 deliv)
{
	switch (deliv) {
	case VCX_CMD_DELIV_OK:			return 0;
	case VCX_CMD_DELIV_SIGNATURE_ERR:
	case VCX_CMD_DELIV_TOKEN_ERR:
	case VCX_CMD_DELIV_BAD_BLOCK_NUM:	return -EBADR;
	case VCX_CMD_DELIV_OUT_PTR_ALIGN_ERR:
	case VCX_CMD_DELIV_IN_PTR_ALIGN_ERR:	return -EFAULT;
	case VCX_CMD_DELIV_IN_LENGTH_ERR:
	case VCX_CMD_DELIV_OUT_LENGTH_ERR:
	case VCX_CMD_DELIV_RES_FLD_NOT_CLR:
	case VCX_CMD_DELIV_BAD_DESC:		return -EINVAL;
	default:				return -EIO;
	}
}

static void *vcx_cmd_ent_lay(struct vcx_cmdq *cmd, unsigned int idx)
{
	return cmd->buf + (idx << cmd->log_stride);
}

/* ------------------------------------------------------------------------------------
 * Mailboxes
 */
static void vcx_cmd_free_mboxes(struct vcx_cmdq *cmd, struct vcx_cmd_mbox *head)
{
	while (head) {
		struct vcx_cmd_mbox *next = head->next;

		dma_pool_free(cmd->mbox_pool, head->buf, head->dma);
		kfree(head);
		head = next;
	}
}

/* A chain of enough blocks for len bytes of command (the first 16 are inline). */
static int vcx_cmd_alloc_mboxes(struct vcx_cmdq *cmd, unsigned int len, u8 token,
				struct vcx_cmd_mbox **headp)
{
	unsigned int n = len > VCX_CMDQ_INLINE_SIZE ?
			 DIV_ROUND_UP(len - VCX_CMDQ_INLINE_SIZE, VCX_MBOX_DATA_SIZE) : 0;
	struct vcx_cmd_mbox *head = NULL, *mb;
	int i;

	/* Built back to front so each block can point at the next. */
	for (i = n - 1; i >= 0; i--) {
		mb = kzalloc(sizeof(*mb), GFP_KERNEL);
		if (!mb)
			goto err;
		mb->buf = dma_pool_zalloc(cmd->mbox_pool, GFP_KERNEL, &mb->dma);
		if (!mb->buf) {
			kfree(mb);
			goto err;
		}
		vcx_set64(mb->buf, VCX_MBOX_NEXT_PTR, head ? head->dma : 0);
		vcx_set(mb->buf, VCX_MBOX_BLOCK_NUM, i);
		vcx_set(mb->buf, VCX_MBOX_TOKEN, token);
		mb->next = head;
		head = mb;
	}
	*headp = head;
	return 0;
err:
	vcx_cmd_free_mboxes(cmd, head);
	return -ENOMEM;
}

static void vcx_cmd_copy_to_mboxes(struct vcx_cmd_mbox *mb, const u8 *data,
				   unsigned int len)
{
	for (; mb && len; mb = mb->next) {
		unsigned int n = min_t(unsigned int, len, VCX_MBOX_DATA_SIZE);

		memcpy(mb->buf, data, n);
		data += n;
		len -= n;
	}
}

static void vcx_cmd_copy_from_mboxes(u8 *data, struct vcx_cmd_mbox *mb, unsigned int len)
{
	for (; mb && len; mb = mb->next) {
		unsigned int n = min_t(unsigned int, len, VCX_MBOX_DATA_SIZE);

		memcpy(data, mb->buf, n);
		data += n;
		len -= n;
	}
}

/* ------------------------------------------------------------------------------------
 * Entries
 */

/* Give an entry back for reuse; called with cmd->lock held. */
static void vcx_cmd_release_ent_locked(struct vcx_cmdq *cmd, struct vcx_cmd_ent *ent)
{
	vcx_cmd_free_mboxes(cmd, ent->in_mb);
	vcx_cmd_free_mboxes(cmd, ent->out_mb);
	ent->in_mb = NULL;
	ent->out_mb = NULL;
	ent->state = VCX_CMD_ENT_FREE;
	clear_bit(ent->idx, &cmd->busy);
	if (ent->idx == cmd->max_reg_cmds)
		up(&cmd->pages_sem);
	else
		up(&cmd->sem);
}

/*
 * Polling mode has no EQE to tell us that the device handed back an entry we gave up
 * on: look at the ownership bits of the stale entries before taking a new one.
 */
static void vcx_cmd_reap_stale(struct vcx_dev *vdev)
{
	struct vcx_cmdq *cmd = &vdev->cmd;
	unsigned long flags;
	int i;

	spin_lock_irqsave(&cmd->lock, flags);
	for (i = 0; i <= cmd->max_reg_cmds; i++) {
		struct vcx_cmd_ent *ent = &cmd->ent[i];
		u8 *lay = vcx_cmd_ent_lay(cmd, i);

		if (ent->state != VCX_CMD_ENT_STALE)
			continue;
		if (READ_ONCE(lay[ENT_STATUS_OWN]) & ENT_OWNER_HW)
			continue;
		dev_warn(vcx_dev(vdev), "command entry %d (%s) given back late by the device\n",
			 i, vcx_cmd_opcode_str(ent->opcode));
		vcx_cmd_release_ent_locked(cmd, ent);
	}
	spin_unlock_irqrestore(&cmd->lock, flags);
}

static int vcx_cmd_get_ent(struct vcx_dev *vdev, bool page, struct vcx_cmd_ent **entp)
{
	struct vcx_cmdq *cmd = &vdev->cmd;
	struct semaphore *sem = page ? &cmd->pages_sem : &cmd->sem;
	struct vcx_cmd_ent *ent;
	unsigned long flags;
	int idx;

	if (cmd->mode == VCX_CMD_MODE_POLLING)
		vcx_cmd_reap_stale(vdev);
	if (down_timeout(sem, cmd->timeout)) {
		dev_err(vcx_dev(vdev), "no free command entry within %u ms\n",
			jiffies_to_msecs(cmd->timeout));
		return -ETIMEDOUT;
	}
	spin_lock_irqsave(&cmd->lock, flags);
	if (page) {
		idx = cmd->max_reg_cmds;
	} else {
		idx = find_first_zero_bit(&cmd->busy, cmd->max_reg_cmds);
		if (WARN_ON(idx >= cmd->max_reg_cmds)) {
			spin_unlock_irqrestore(&cmd->lock, flags);
			up(sem);
			return -EIO;
		}
	}
	set_bit(idx, &cmd->busy);
	ent = &cmd->ent[idx];
	ent->state = VCX_CMD_ENT_INFLIGHT;
	ent->forced_err = 0;
	if (!++cmd->token)
		cmd->token = 1;
	ent->token = cmd->token;
	spin_unlock_irqrestore(&cmd->lock, flags);
	*entp = ent;
	return 0;
}

/* Wait in polling mode: the device clears the ownership bit when done. */
static int vcx_cmd_wait_polling(struct vcx_dev *vdev, struct vcx_cmd_ent *ent)
{
	struct vcx_cmdq *cmd = &vdev->cmd;
	u8 *lay = vcx_cmd_ent_lay(cmd, ent->idx);
	unsigned long end = jiffies + cmd->timeout;
	unsigned int spins = 0;

	for (;;) {
		if (!(READ_ONCE(lay[ENT_STATUS_OWN]) & ENT_OWNER_HW))
			return 0;
		if (vcx_in_error(vdev))
			return -EIO;
		if (time_after(jiffies, end))
			return -ETIMEDOUT;
		if (++spins < 100)
			cond_resched();
		else
			usleep_range(50, 100);
	}
}

/* Wait in event mode: the control EQ's command EQE completes the entry. */
static int vcx_cmd_wait_event(struct vcx_dev *vdev, struct vcx_cmd_ent *ent)
{
	if (!wait_for_completion_timeout(&ent->done, vdev->cmd.timeout))
		return -ETIMEDOUT;
	return ent->forced_err;
}

/*
 * After a failed wait: if the completion raced in, use it; otherwise the entry becomes
 * stale and keeps its mailboxes until the device gives it back or the queue is freed.
 */
static bool vcx_cmd_abandon(struct vcx_dev *vdev, struct vcx_cmd_ent *ent)
{
	struct vcx_cmdq *cmd = &vdev->cmd;
	unsigned long flags;
	bool done;

	spin_lock_irqsave(&cmd->lock, flags);
	done = ent->state == VCX_CMD_ENT_DONE && !ent->forced_err;
	if (!done)
		ent->state = VCX_CMD_ENT_STALE;
	spin_unlock_irqrestore(&cmd->lock, flags);
	return done;
}

static int vcx_cmd_check(struct vcx_dev *vdev, u16 opcode, u16 op_mod, const u8 *out)
{
	u8 status = vcx_get(out, VCX_CMD_OUT_STATUS);
	u32 syndrome = vcx_get(out, VCX_CMD_OUT_SYNDROME);
	int err = vcx_cmd_status_to_err(status);

	if (status)
		dev_err(vcx_dev(vdev),
			"%s(0x%x) op_mod(0x%x) failed, status %s(0x%x), syndrome (0x%x), err(%d)\n",
			vcx_cmd_opcode_str(opcode), opcode, op_mod, vcx_cmd_status_str(status),
			status, syndrome, err);
	return err;
}

/*
 * Execute one command: in is the whole input (16-byte header first), out receives the
 * whole output. Returns 0, the errno of the command status or delivery status (logged
 * with the command's name), -ETIMEDOUT, or -EIO in the error state.
 */
int vcx_cmd_exec(struct vcx_dev *vdev, const void *in, unsigned int inlen, void *out,
		 unsigned int outlen)
{
	struct vcx_cmdq *cmd = &vdev->cmd;
	u16 opcode = vcx_get(in, VCX_CMD_IN_OPCODE);
	u16 op_mod = vcx_get(in, VCX_CMD_IN_OP_MOD);
	struct vcx_cmd_ent *ent;
	unsigned long flags;
	u8 *lay, deliv;
	int err;

	if (WARN_ON(inlen < VCX_CMD_HDR_SIZE || outlen < VCX_CMD_HDR_SIZE))
		return -EINVAL;
	if (vcx_in_error(vdev))
		return -EIO;

	err = vcx_cmd_get_ent(vdev, opcode == VCX_CMD_OP_MANAGE_PAGES, &ent);
	if (err)
		return err;
	ent->opcode = opcode;
	err = vcx_cmd_alloc_mboxes(cmd, inlen, ent->token, &ent->in_mb);
	if (!err)
		err = vcx_cmd_alloc_mboxes(cmd, outlen, ent->token, &ent->out_mb);
	if (err)
		goto out_release;
	vcx_cmd_copy_to_mboxes(ent->in_mb, in + VCX_CMDQ_INLINE_SIZE,
			       inlen - VCX_CMDQ_INLINE_SIZE);

	lay = vcx_cmd_ent_lay(cmd, ent->idx);
	memset(lay, 0, VCX_CMDQ_ENT_SIZE);
	vcx_set(lay, VCX_CMDQ_ENT_TYPE, VCX_CMDQ_TYPE_PCIE);
	vcx_set(lay, VCX_CMDQ_ENT_IN_LEN, inlen);
	vcx_set(lay, VCX_CMDQ_ENT_OUT_LEN, outlen);
	vcx_set64(lay, VCX_CMDQ_ENT_IN_PTR, ent->in_mb ? ent->in_mb->dma : 0);
	vcx_set64(lay, VCX_CMDQ_ENT_OUT_PTR, ent->out_mb ? ent->out_mb->dma : 0);
	memcpy(vcx_ptr(lay, VCX_CMDQ_ENT_IN_INLINE), in, VCX_CMDQ_INLINE_SIZE);
	vcx_set(lay, VCX_CMDQ_ENT_TOKEN, ent->token);
	reinit_completion(&ent->done);
	/* The entry and its mailboxes are complete before the device may own them. */
	dma_wmb();
	WRITE_ONCE(lay[ENT_STATUS_OWN], ENT_OWNER_HW);
	wmb();
	vcx_iseg_write(vdev, VCX_ISEG_CMD_DBELL, BIT(ent->idx));

	if (cmd->mode == VCX_CMD_MODE_EVENTS)
		err = vcx_cmd_wait_event(vdev, ent);
	else
		err = vcx_cmd_wait_polling(vdev, ent);
	if (err && !vcx_cmd_abandon(vdev, ent)) {
		if (err == -ETIMEDOUT)
			dev_err(vcx_dev(vdev),
				"%s(0x%x) op_mod(0x%x) timed out after %u ms (entry %u, token 0x%x)\n",
				vcx_cmd_opcode_str(opcode), opcode, op_mod,
				jiffies_to_msecs(cmd->timeout), ent->idx, ent->token);
		return err;	/* the entry stays out of use */
	}

	/* Read the entry only after the device is done with it. */
	dma_rmb();
	deliv = vcx_get(lay, VCX_CMDQ_ENT_STATUS);
	if (deliv) {
		err = vcx_cmd_deliv_to_err(deliv);
		dev_err(vcx_dev(vdev), "%s(0x%x) op_mod(0x%x) not executed: delivery status %s(0x%x), err(%d)\n",
			vcx_cmd_opcode_str(opcode), opcode, op_mod, vcx_cmd_deliv_str(deliv),
			deliv, err);
		goto out_release;
	}
	memcpy(out, vcx_cptr(lay, VCX_CMDQ_ENT_OUT_INLINE), VCX_CMDQ_INLINE_SIZE);
	vcx_cmd_copy_from_mboxes(out + VCX_CMDQ_INLINE_SIZE, ent->out_mb,
				 outlen - VCX_CMDQ_INLINE_SIZE);
	err = vcx_cmd_check(vdev, opcode, op_mod, out);

out_release:
	spin_lock_irqsave(&cmd->lock, flags);
	vcx_cmd_release_ent_locked(cmd, ent);
	spin_unlock_irqrestore(&cmd->lock, flags);
	return err;
}

/*
 * Command EQE (event mode): vector has bit n set for every entry n the device finished.
 * Runs in the control EQ's interrupt handler.
 */
void vcx_cmd_comp_handler(struct vcx_dev *vdev, u32 vector)
{
	struct vcx_cmdq *cmd = &vdev->cmd;
	unsigned long flags;
	unsigned long bits = vector;
	int i;

	spin_lock_irqsave(&cmd->lock, flags);
	for_each_set_bit(i, &bits, cmd->max_reg_cmds + 1) {
		struct vcx_cmd_ent *ent = &cmd->ent[i];

		switch (ent->state) {
		case VCX_CMD_ENT_INFLIGHT:
			ent->state = VCX_CMD_ENT_DONE;
			complete(&ent->done);
			break;
		case VCX_CMD_ENT_STALE:
			dev_warn(vcx_dev(vdev), "command entry %d (%s) completed after its timeout\n",
				 i, vcx_cmd_opcode_str(ent->opcode));
			vcx_cmd_release_ent_locked(cmd, ent);
			break;
		default:
			dev_warn_ratelimited(vcx_dev(vdev),
					     "command completion for idle entry %d\n", i);
			break;
		}
	}
	spin_unlock_irqrestore(&cmd->lock, flags);
}

/* Error state: complete every command in flight with -EIO. */
void vcx_cmd_trigger_completions(struct vcx_dev *vdev)
{
	struct vcx_cmdq *cmd = &vdev->cmd;
	unsigned long flags;
	int i;

	if (!cmd->buf)
		return;
	spin_lock_irqsave(&cmd->lock, flags);
	for (i = 0; i <= cmd->max_reg_cmds; i++) {
		struct vcx_cmd_ent *ent = &cmd->ent[i];

		if (ent->state == VCX_CMD_ENT_INFLIGHT) {
			ent->forced_err = -EIO;
			complete(&ent->done);
		}
	}
	spin_unlock_irqrestore(&cmd->lock, flags);
}

/*
 * Switching modes waits until no command is in flight, as mlx5_cmd_use_events() does.
 * A stale entry holds its semaphore count until the device gives it back, so the mode
 * switch must not wait for it forever: reap what can be reaped, then wait at most one
 * command timeout in all (not at all in the error state).
 */
static void vcx_cmd_set_mode(struct vcx_dev *vdev, enum vcx_cmd_mode mode)
{
	struct vcx_cmdq *cmd = &vdev->cmd;
	unsigned long deadline = jiffies + cmd->timeout;
	bool pages_held = false;
	int held = 0;

	vcx_cmd_reap_stale(vdev);
	/* In the error state nothing completes: entries in flight are abandoned already. */
	while (!vcx_in_error(vdev) && held < cmd->max_reg_cmds) {
		long left = (long)(deadline - jiffies);

		if (left <= 0 || down_timeout(&cmd->sem, left))
			break;
		held++;
	}
	if (!vcx_in_error(vdev)) {
		long left = (long)(deadline - jiffies);

		pages_held = left > 0 && !down_timeout(&cmd->pages_sem, left);
	}
	if (!vcx_in_error(vdev) && (held < cmd->max_reg_cmds || !pages_held))
		dev_warn(vcx_dev(vdev), "switching command mode with commands outstanding\n");
	cmd->mode = mode;
	if (pages_held)
		up(&cmd->pages_sem);
	while (held--)
		up(&cmd->sem);
}

void vcx_cmd_use_events(struct vcx_dev *vdev)
{
	vcx_cmd_set_mode(vdev, VCX_CMD_MODE_EVENTS);
}

void vcx_cmd_use_polling(struct vcx_dev *vdev)
{
	vcx_cmd_set_mode(vdev, VCX_CMD_MODE_POLLING);
}

/* ------------------------------------------------------------------------------------
 * Setup and teardown
 */
int vcx_cmdq_init(struct vcx_dev *vdev)
{
	struct vcx_cmdq *cmd = &vdev->cmd;
	struct device *dev = vcx_dev(vdev);
	u32 val, exec_to;
	int i;

	val = vcx_iseg_read(vdev, VCX_ISEG_CMDQ_ADDR_L_SZ);
	cmd->log_size = (val >> VCX_ISEG_LOG_CMDQ_SIZE_SHIFT) & VCX_ISEG_LOG_CMDQ_SIZE_MASK;
	cmd->log_stride = val & VCX_ISEG_LOG_CMDQ_STRIDE_MASK;
	if ((1u << cmd->log_size) > VCX_CMDQ_MAX_ENTRIES || cmd->log_size < 1) {
		dev_err(dev, "command queue size %u entries not supported (2..%u)\n",
			1u << cmd->log_size, VCX_CMDQ_MAX_ENTRIES);
		return -EINVAL;
	}
	if ((1u << cmd->log_stride) < VCX_CMDQ_ENT_SIZE ||
	    cmd->log_size + cmd->log_stride > ilog2(VCX_CMDQ_PAGE_SIZE)) {
		dev_err(dev, "command queue stride %u bytes with %u entries does not fit a page\n",
			1u << cmd->log_stride, 1u << cmd->log_size);
		return -EINVAL;
	}
	cmd->max_reg_cmds = (1u << cmd->log_size) - 1;

	exec_to = vcx_iseg_read(vdev, VCX_ISEG_CMD_EXEC_TO);
	cmd->timeout = msecs_to_jiffies(exec_to ? exec_to : VCX_CMD_TIMEOUT_MS);

	spin_lock_init(&cmd->lock);
	sema_init(&cmd->sem, cmd->max_reg_cmds);
	sema_init(&cmd->pages_sem, 1);
	cmd->busy = 0;
	cmd->token = 0;
	cmd->mode = VCX_CMD_MODE_POLLING;
	for (i = 0; i < VCX_CMDQ_MAX_ENTRIES; i++) {
		cmd->ent[i].idx = i;
		cmd->ent[i].state = VCX_CMD_ENT_FREE;
		init_completion(&cmd->ent[i].done);
	}

	cmd->mbox_pool = dma_pool_create("vcx_cmd_mbox", dev, VCX_MBOX_SIZE, VCX_MBOX_ALIGN, 0);
	if (!cmd->mbox_pool)
		return -ENOMEM;
	/* dma_alloc_coherent() returns page-aligned memory: address bits 11:0 are 0. */
	cmd->buf = dma_alloc_coherent(dev, VCX_CMDQ_PAGE_SIZE, &cmd->dma, GFP_KERNEL);
	if (!cmd->buf) {
		dma_pool_destroy(cmd->mbox_pool);
		cmd->mbox_pool = NULL;
		return -ENOMEM;
	}
	if (cmd->dma & (VCX_CMDQ_PAGE_SIZE - 1)) {
		dev_err(dev, "command queue at %pad is not 4 KiB aligned\n", &cmd->dma);
		vcx_cmdq_cleanup(vdev);
		return -ENOMEM;
	}

	/* High word first: writing the low word (nic_interface 0, full driver) commits. */
	vcx_iseg_write(vdev, VCX_ISEG_CMDQ_ADDR_H, upper_32_bits(cmd->dma));
	vcx_iseg_write(vdev, VCX_ISEG_CMDQ_ADDR_L_SZ,
		       lower_32_bits(cmd->dma) & VCX_ISEG_CMDQ_ADDR_L_MASK);
	/* Make sure the address reached the device before any doorbell. */
	wmb();
	dev_dbg(dev, "command queue: %u entries of %u bytes, timeout %u ms\n",
		1u << cmd->log_size, 1u << cmd->log_stride, jiffies_to_msecs(cmd->timeout));
	return 0;
}

/*
 * Called once the device no longer owns any entry (after DISABLE_HCA, or with the device
 * in error or reset): stale entries' mailboxes are freed with the queue.
 */
void vcx_cmdq_cleanup(struct vcx_dev *vdev)
{
	struct vcx_cmdq *cmd = &vdev->cmd;
	int i;

	if (!cmd->buf)
		return;
	for (i = 0; i < VCX_CMDQ_MAX_ENTRIES; i++) {
		struct vcx_cmd_ent *ent = &cmd->ent[i];

		vcx_cmd_free_mboxes(cmd, ent->in_mb);
		vcx_cmd_free_mboxes(cmd, ent->out_mb);
		ent->in_mb = NULL;
		ent->out_mb = NULL;
		ent->state = VCX_CMD_ENT_FREE;
	}
	dma_free_coherent(vcx_dev(vdev), VCX_CMDQ_PAGE_SIZE, cmd->buf, cmd->dma);
	cmd->buf = NULL;
	dma_pool_destroy(cmd->mbox_pool);
	cmd->mbox_pool = NULL;
}
