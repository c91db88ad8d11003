#!/bin/bash
# The guest side of `./vcx bench`'s idle host CPU figure. With the vcx device (BENCH_VCX=1):
# vcx.ko loaded by the boot and the port up with an address, as bench-perftest.sh has it;
# without it (BENCH_VCX=0, the runner's --no-vcx): no device at all. Then it prints
# "BENCH-IDLE-START", sleeps while the host reads QEMU's CPU time over
# BENCH_IDLE_SECONDS, and prints "BENCH-IDLE-END" (the host checks that its interval
# ended before that line).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/verbs-common.sh"

idle=${BENCH_IDLE_SECONDS:-20}
case "${BENCH_VCX:-}" in
1) vcx_ipv4_up 192.168.77.1 >/dev/null ;;
0) [ ! -d /sys/class/infiniband/$VCX_IBDEV ] || fail "$VCX_IBDEV present in the VM without vcx" ;;
*) fail "BENCH_VCX must be 1 or 0" ;;
esac
# Let the boot's last work (module loads, the new address's neighbour and route work)
# settle before the interval starts.
sleep 3
echo "BENCH-IDLE-START"
# The host's interval plus a margin for the time the line takes to reach it.
sleep $((idle + 10))
echo "BENCH-IDLE-END"
