#!/bin/bash
# vcx_0 as libibverbs and iproute2 see it: ibv_devinfo -v (device and SRQ limits, port
# ACTIVE, Ethernet link layer), rdma link (netdev), port events when the device's link
# goes down and up (IBV_EVENT_PORT_ERR / PORT_ACTIVE, port state, netdev carrier), and the
# RoCE v2 GID ib_core adds for the port's MAC once the netdev is up (add_gid ->
# SET_ROCE_ADDRESS).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/verbs-common.sh"

ndev=$(vcx_verbs_up)
grep -q "$VCX_IBDEV" <<<"$(ibv_devices)" || fail "ibv_devices does not list $VCX_IBDEV"
ibv_devinfo -v -d $VCX_IBDEV >/tmp/devinfo 2>&1 || { cat /tmp/devinfo; fail "ibv_devinfo -v failed"; }
cat /tmp/devinfo
field() { awk -F: -v k="$1" '$1 ~ "^[ \t]*" k "$" { gsub(/[ \t]/, "", $2); print $2; exit }' /tmp/devinfo; }
[ "$(field hca_id)" = "$VCX_IBDEV" ] || fail "hca_id"
grep -q 'link_layer:.*Ethernet' /tmp/devinfo || fail "link layer is not Ethernet"
grep -q 'state:.*PORT_ACTIVE' /tmp/devinfo || fail "port 1 not ACTIVE"
for f in max_qp max_qp_wr max_sge max_cq max_cqe max_mr max_pd max_srq max_srq_wr max_srq_sge; do
	v=$(field "$f")
	[ -n "$v" ] && [ "$v" -gt 0 ] || fail "$f is '$v'"
done
[ "$(field max_srq_wr)" -ge 1024 ] || fail "max_srq_wr $(field max_srq_wr) < 1024"
grep -q "state ACTIVE.*netdev $ndev" <<<"$(rdma link show $VCX_IBDEV/1)" || fail "rdma link: port not ACTIVE on $ndev"
[ "$(cat /sys/class/infiniband/$VCX_IBDEV/node_type)" = "1: CA" ] || fail "node type"
grep -q "$(vcx_pci_addr)" <<<"$(readlink /sys/class/infiniband/$VCX_IBDEV/device)" || fail "parent is not the PCI device"
# Link down and up on the device side: async events, port state, carrier.
timeout 30 ibv_asyncwatch -d $VCX_IBDEV >/tmp/aw.out 2>&1 &
aw=$!
sleep 1
images/vcx-hostcall hmp 'qom-set /machine/peripheral/vcx0 link false' >/dev/null ||
	fail "cannot take the link down"
sleep 1
grep -q 'state:.*PORT_DOWN' <<<"$(ibv_devinfo -d $VCX_IBDEV)" || fail "port not DOWN without link"
grep -q 'NO-CARRIER' <<<"$(ip link show "$ndev")" || fail "$ndev has carrier without link"
images/vcx-hostcall hmp 'qom-set /machine/peripheral/vcx0 link true' >/dev/null ||
	fail "cannot bring the link up"
sleep 1
grep -q 'state:.*PORT_ACTIVE' <<<"$(ibv_devinfo -d $VCX_IBDEV)" || fail "port not ACTIVE after link up"
sleep 1
kill "$aw" 2>/dev/null || true
wait "$aw" 2>/dev/null || true
cat /tmp/aw.out
grep -q 'IBV_EVENT_PORT_ERR.*port 1' /tmp/aw.out || fail "no IBV_EVENT_PORT_ERR"
grep -q 'IBV_EVENT_PORT_ACTIVE.*port 1' /tmp/aw.out || fail "no IBV_EVENT_PORT_ACTIVE"

gid=$(vcx_roce_v2_gid) || fail "no RoCE v2 GID on $VCX_IBDEV port 1 (GID table: $(cat /sys/class/infiniband/$VCX_IBDEV/ports/1/gids/0 2>&1))"
pass "ibv_devinfo -v on $VCX_IBDEV, SRQ limits, port ACTIVE on $ndev, port events, RoCE v2 GID index $gid"
