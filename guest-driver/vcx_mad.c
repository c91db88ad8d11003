// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcx: performance management MADs (IBTA 16.1, the port's PMA) answered by the driver,
 * as mlx5_ib answers them on a device whose capability vport_counters is set: ib_core's
 * port counters (/sys/class/infiniband/vcx_N/ports/1/counters, which it reads through
 * this entry point) and PerfMgt GETs from other hosts (perfquery).
 *
 *   ClassPortInfo     capability mask: 64-bit counters (PortCountersExt)
 *   PortCountersExt   QUERY_VPORT_COUNTER's ib unicast and multicast counters, the RoCE
 *                     packets and octets of the port (data in 4-octet words, 16.1.4.10)
 *   PortCounters      PPCNT's InfiniBand port counters group for the error counters,
 *                     and the data and packet counts of PortCountersExt, each stopping
 *                     at its maximum as IBTA's 32-bit counters do
 *
 * Other PerfMgt attributes get the MAD status "unsupported method/attribute"; other
 * classes (CM, SA, ...) and PerfMgt SETs go on to ib_core's agents. Without the
 * capability the driver answers no PMA MAD, and ib_core's counters read nothing.
 */
#include <linux/slab.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_pma.h>
#include <rdma/ib_verbs.h>

#include "vcx.h"
#include "vcx_verbs.h"

/* The PMA's attribute data follow 40 reserved bytes of the MAD's data (IBTA 16.1.1). */
#define VCX_PMA_DATA_AT	40

struct vcx_pma_traffic {
	u64 xmit_octets, rcv_octets;
	u64 uc_xmit, uc_rcv, mc_xmit, mc_rcv;
};

static int vcx_pma_query_traffic(struct vcx_dev *vdev, struct vcx_pma_traffic *t)
{
	u8 *out = vcx_query_vport_counter(vdev);

	if (!out)
		return -EIO;
	t->uc_xmit = vcx_vport_cnt(out, VCX_VPORT_CNT_TX_IB_UNICAST_AT, false);
	t->uc_rcv = vcx_vport_cnt(out, VCX_VPORT_CNT_RX_IB_UNICAST_AT, false);
	t->mc_xmit = vcx_vport_cnt(out, VCX_VPORT_CNT_TX_IB_MULTICAST_AT, false);
	t->mc_rcv = vcx_vport_cnt(out, VCX_VPORT_CNT_RX_IB_MULTICAST_AT, false);
	t->xmit_octets = vcx_vport_cnt(out, VCX_VPORT_CNT_TX_IB_UNICAST_AT, true) +
			 vcx_vport_cnt(out, VCX_VPORT_CNT_TX_IB_MULTICAST_AT, true);
	t->rcv_octets = vcx_vport_cnt(out, VCX_VPORT_CNT_RX_IB_UNICAST_AT, true) +
			vcx_vport_cnt(out, VCX_VPORT_CNT_RX_IB_MULTICAST_AT, true);
	kfree(out);
	return 0;
}

static int vcx_pma_counters_ext(struct vcx_dev *vdev, struct ib_pma_portcounters_ext *c)
{
	struct vcx_pma_traffic t;
	int err = vcx_pma_query_traffic(vdev, &t);

	if (err)
		return err;
	c->port_xmit_data = cpu_to_be64(t.xmit_octets >> 2);
	c->port_rcv_data = cpu_to_be64(t.rcv_octets >> 2);
	c->port_xmit_packets = cpu_to_be64(t.uc_xmit + t.mc_xmit);
	c->port_rcv_packets = cpu_to_be64(t.uc_rcv + t.mc_rcv);
	c->port_unicast_xmit_packets = cpu_to_be64(t.uc_xmit);
	c->port_unicast_rcv_packets = cpu_to_be64(t.uc_rcv);
	c->port_multicast_xmit_packets = cpu_to_be64(t.mc_xmit);
	c->port_multicast_rcv_packets = cpu_to_be64(t.mc_rcv);
	return 0;
}

static __be32 vcx_pma_sat32(u64 v)
{
	return cpu_to_be32(min_t(u64, v, U32_MAX));
}

static int vcx_pma_counters(struct vcx_dev *vdev, struct ib_pma_portcounters *c)
{
	const u8 *set;
	struct vcx_pma_traffic t;
	u8 *reg;
	int err;

	reg = kzalloc(VCX_REG_PPCNT_LEN, GFP_KERNEL);
	if (!reg)
		return -ENOMEM;
	err = vcx_query_ppcnt(vdev, VCX_PPCNT_GRP_IB_PORT, reg);
	if (!err)
		err = vcx_pma_query_traffic(vdev, &t);
	if (err)
		goto out;
	set = reg + VCX_PPCNT_COUNTER_SET;
	c->symbol_error_counter = cpu_to_be16(vcx_get(set, VCX_PPCNT_IB_SYMBOL_ERRORS));
	c->link_error_recovery_counter = vcx_get(set, VCX_PPCNT_IB_LINK_ERROR_RECOVERY);
	c->link_downed_counter = vcx_get(set, VCX_PPCNT_IB_LINK_DOWNED);
	c->port_rcv_errors = cpu_to_be16(vcx_get(set, VCX_PPCNT_IB_PORT_RCV_ERRORS));
	c->port_rcv_remphys_errors = cpu_to_be16(vcx_get(set, VCX_PPCNT_IB_RCV_REMPHYS_ERRORS));
	c->port_rcv_switch_relay_errors =
		cpu_to_be16(vcx_get(set, VCX_PPCNT_IB_RCV_SWITCH_RELAY_ERRORS));
	c->port_xmit_discards = cpu_to_be16(vcx_get(set, VCX_PPCNT_IB_XMIT_DISCARDS));
	c->port_xmit_constraint_errors = vcx_get(set, VCX_PPCNT_IB_XMIT_CONSTRAINT_ERRORS);
	c->port_rcv_constraint_errors = vcx_get(set, VCX_PPCNT_IB_RCV_CONSTRAINT_ERRORS);
	c->link_overrun_errors = vcx_get(set, VCX_PPCNT_IB_LINK_OVERRUN_ERRORS);
	c->vl15_dropped = cpu_to_be16(vcx_get(set, VCX_PPCNT_IB_VL15_DROPPED));
	c->port_xmit_wait = cpu_to_be32(vcx_get(set, VCX_PPCNT_IB_XMIT_WAIT));
	c->port_xmit_data = vcx_pma_sat32(t.xmit_octets >> 2);
	c->port_rcv_data = vcx_pma_sat32(t.rcv_octets >> 2);
	c->port_xmit_packets = vcx_pma_sat32(t.uc_xmit + t.mc_xmit);
	c->port_rcv_packets = vcx_pma_sat32(t.uc_rcv + t.mc_rcv);
out:
	kfree(reg);
	return err;
}

int vcx_ib_process_mad(struct ib_device *ibdev, int mad_flags, u32 port_num,
		       const struct ib_wc *in_wc, const struct ib_grh *in_grh,
		       const struct ib_mad *in, struct ib_mad *out, size_t *out_mad_size,
		       u16 *out_mad_pkey_index)
{
	struct vcx_dev *vdev = to_vibdev(ibdev)->vdev;
	void *data = out->data + VCX_PMA_DATA_AT;
	int err = 0;

	if (in->mad_hdr.mgmt_class != IB_MGMT_CLASS_PERF_MGMT ||
	    in->mad_hdr.method != IB_MGMT_METHOD_GET || !vcx_cap(vdev, VPORT_COUNTERS))
		return IB_MAD_RESULT_SUCCESS;	/* not ours: ib_core's agents take it */

	/* the response: the request's header as a GetResp (IBTA 13.4.5) */
	out->mad_hdr = in->mad_hdr;
	out->mad_hdr.method = IB_MGMT_METHOD_GET_RESP;
	out->mad_hdr.status = 0;
	memset(out->data, 0, sizeof(out->data));
	if (in->mad_hdr.attr_id == IB_PMA_CLASS_PORT_INFO) {
		struct ib_class_port_info *cpi = data;

		cpi->base_version = IB_MGMT_BASE_VERSION;
		cpi->class_version = 1;
		cpi->capability_mask = IB_PMA_CLASS_CAP_EXT_WIDTH;
	} else if (in->mad_hdr.attr_id == IB_PMA_PORT_COUNTERS_EXT) {
		err = vcx_pma_counters_ext(vdev, data);
	} else if (in->mad_hdr.attr_id == IB_PMA_PORT_COUNTERS) {
		err = vcx_pma_counters(vdev, data);
	} else {
		out->mad_hdr.status = IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB;
	}
	if (err)
		return IB_MAD_RESULT_FAILURE;
	/* the port_select the request named, as IBTA's PortCounters(Ext) echo it */
	if (in->mad_hdr.attr_id != IB_PMA_CLASS_PORT_INFO)
		((u8 *)data)[1] = in->data[VCX_PMA_DATA_AT + 1];
	return IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_REPLY;
}
