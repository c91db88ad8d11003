#!/bin/bash
# The guest's RDMA userland works on a stock Soft-RoCE device, and libibverbs loads the
# vcx provider from this checkout without complaint.
. "$(dirname "$0")/lib.sh"

modprobe rdma_rxe || fail "modprobe rdma_rxe failed"
rdma link add rxe0 type rxe netdev eth0 || fail "rdma link add rxe0 failed"
grep -q 'state ACTIVE' <<<"$(rdma link show rxe0/1)" || fail "rxe0 port not ACTIVE"
grep -q 'state:.*PORT_ACTIVE' <<<"$(ibv_devinfo -d rxe0 | tee /tmp/devinfo)" || fail "ibv_devinfo: rxe0 port not active"
grep -q 'transport:.*InfiniBand' /tmp/devinfo || fail "ibv_devinfo: unexpected transport"

# Provider loading: libibverbs dlopen()s every provider listed in /etc/libibverbs.d when a
# device needs matching; ours must load (its private ABI is the guest's) and run its init.
LD_DEBUG=files ibv_devices >/tmp/ibv_devices.out 2>&1 || fail "ibv_devices failed"
grep -q 'calling init: .*/libvcx-rdmav34.so' /tmp/ibv_devices.out ||
	{ cat /tmp/ibv_devices.out >&2; fail "libvcx-rdmav34.so was not loaded"; }
if grep -q "couldn't load driver" /tmp/ibv_devices.out; then
	grep "couldn't load driver" /tmp/ibv_devices.out >&2
	fail "a provider failed to load"
fi

# RC traffic with payload checking over rxe (loopback on one port).
gid=$(ibv_devinfo -d rxe0 -v | awk '/GID\[/ && /::ffff:/ { sub(/.*GID\[ */, ""); sub(/\].*/, ""); print; exit }')
[ -n "$gid" ] || fail "no IPv4 RoCEv2 GID on rxe0"
timeout 60 ibv_rc_pingpong -d rxe0 -g "$gid" -n 100 -c >/tmp/srv.out 2>&1 &
srv=$!
sleep 1
timeout 60 ibv_rc_pingpong -d rxe0 -g "$gid" -n 100 -c localhost >/tmp/cli.out 2>&1 ||
	{ cat /tmp/cli.out /tmp/srv.out >&2; fail "ibv_rc_pingpong client failed"; }
wait "$srv" || { cat /tmp/srv.out >&2; fail "ibv_rc_pingpong server failed"; }
grep -q '100 iters' /tmp/cli.out || fail "pingpong did not complete 100 iterations"
rdma link delete rxe0
pass "rxe userland, vcx provider loads, RC pingpong with payload check"
