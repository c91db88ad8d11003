#!/bin/bash
# TCP throughput between two VMs (./vcx bench --net, docs/performance.md): iperf3 over vcx0
# on the vcx link and over eth0 (virtio-net) on the runner's other link, both the same
# kind of -netdev link (docs/networking.md), in the same boot, at MTU 1500 and 9000, vm0
# sending and receiving (-R). Each test runs BENCH_ROUNDS rounds (default 3) of one run per device,
# vcx0 first in odd rounds and virtio-net first in even ones, so both see the same states
# of a machine shared with other work and neither always runs first; the table gives each
# device's median over the rounds and the ratio of the medians. Both VMs run this
# script: vm1 serves, vm0 measures and prints one CSV line per run
#   BENCH,<test>,<device>,<value>,<unit>,<round>
# then a table (test | vcx0 | virtio-net | vcx/virtio | vcx/virtio min-max over rounds)
# that starts with a line "TCP throughput between two VMs" and ends with an empty line.
# BENCH_SECONDS: the length of each iperf3 run (default 10). No figure is compared with a
# threshold.
. "$(dirname "$0")/lib.sh"

SECS=${BENCH_SECONDS:-10}
ROUNDS=${BENCH_ROUNDS:-3}
[[ "$SECS" =~ ^[1-9][0-9]*$ ]] || fail "BENCH_SECONDS must be a positive integer"
[[ "$ROUNDS" =~ ^[1-9][0-9]?$ ]] || fail "BENCH_ROUNDS must be 1-99"
[ "${VCX_VMS:-1}" = 2 ] || fail "bench-net.sh needs two VMs (./vcx vm --vms 2)"
me=$VCX_VM_INDEX
[ "${VCX_LINK_IF:-}" = vcx0 ] || fail "vm$me: vcx0 is not on the vcx link (found '${VCX_LINK_IF:-none}')"
[ -e /sys/class/net/eth0 ] || fail "vm$me: no eth0"
declare -A peer=([vcx0]=192.168.77.2 [virtio-net]=169.254.77.2)
DEVS=(vcx0 virtio-net)
MTUS=(1500 9000)
WAIT=$((SECS * ROUNDS * 20 + 600))

set_mtu() {
	local d
	for d in vcx0 eth0; do
		ip link set "$d" mtu "$1" || fail "ip link set $d mtu $1"
	done
}

if [ "$me" = 1 ]; then
	iperf3 -s >/tmp/iperf3-server.log 2>&1 &
	vm_signal ready
	for mtu in "${MTUS[@]}"; do
		vm_wait "mtu-$mtu" $WAIT >/dev/null
		set_mtu "$mtu"
		vm_signal "mtu-$mtu"
	done
	vm_wait done $WAIT >/dev/null
	echo "# vm1: served"
	exit 0
fi

vm_wait ready 300 >/dev/null
echo "# iperf3 -t $SECS -O 1 (the first second, slow start, not counted), TCP, one stream, vm0 <-> vm1; vcx0: vcx link, virtio-net: eth0"
declare -A result
tests=()
for mtu in "${MTUS[@]}"; do
	set_mtu "$mtu"
	vm_signal "mtu-$mtu"
	vm_wait "mtu-$mtu" $WAIT >/dev/null
	for dir in send recv; do
		test=tcp-$mtu-$dir
		tests+=("$test")
		for round in $(seq "$ROUNDS"); do
			order=("${DEVS[@]}")
			[ $((round % 2)) = 1 ] || order=("${DEVS[1]}" "${DEVS[0]}")
			for d in "${order[@]}"; do
				opts=()
				[ $dir = send ] || opts=(-R)
				# The path must carry full frames before the run (MTU on both ends).
				ping -M do -s $((mtu - 28)) -c 1 -W 2 -w 20 "${peer[$d]}" >/dev/null ||
					fail "$d: no $mtu-byte path to ${peer[$d]}"
				out=$(timeout $((SECS + 90)) iperf3 -c "${peer[$d]}" -t "$SECS" -O 1 -J "${opts[@]}" 2>&1) ||
					fail "iperf3 $test over $d: $(tail -5 <<<"$out")"
				bps=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"])' <<<"$out") ||
					fail "iperf3 $test over $d: no result in its output: $(head -c 400 <<<"$out")"
				v=$(awk -v b="$bps" 'BEGIN { printf "%.1f", b / 1e6 }')
				awk -v v="$v" 'BEGIN { exit !(v > 0) }' || fail "iperf3 $test over $d: $v Mbit/s"
				result[$test,$d]+="$v "
				echo "BENCH,$test,$d,$v,Mbit/s,$round"
			done
		done
	done
done
vm_signal done

echo
echo "TCP throughput between two VMs (iperf3, Mbit/s, median of $ROUNDS rounds; send: vm0 -> vm1, recv: vm1 -> vm0)"
printf '%-20s %12s %12s %12s %16s\n' test vcx0 virtio-net vcx/virtio "min-max ratio"
for t in "${tests[@]}"; do
	# medians, their ratio, and the lowest and highest per-round ratio
	python3 - "${result[$t,vcx0]}" "${result[$t,virtio-net]}" "$t" <<'PY'
import statistics, sys
a = [float(x) for x in sys.argv[1].split()]
b = [float(x) for x in sys.argv[2].split()]
r = [x / y for x, y in zip(a, b)]
ma, mb = statistics.median(a), statistics.median(b)
print("%-20s %12.1f %12.1f %12.2f %16s" % (sys.argv[3], ma, mb, ma / mb,
                                          "%.2f-%.2f" % (min(r), max(r))))
PY
done
echo
