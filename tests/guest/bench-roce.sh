#!/bin/bash
# perftest between two VMs (./vcx bench --vms 2, docs/performance.md): vcx_0 to vcx_0 over
# the vcx link and Soft-RoCE rxe0 to rxe0 over eth0 (virtio-net on the runner's other link,
# the same kind of link, docs/networking.md), in the same boot, each measurement on
# vcx_0 then on rxe0 so both see the same state of a machine shared with other work. Both
# VMs run this script: vm1 serves, vm0 runs the clients and prints one CSV line per
# measurement
#   BENCH,<test>,<device>,<value>,<unit>
# then a table (test | vcx_0 | rxe0 | vcx/rxe) that starts with a line "perftest between
# two VMs" and ends with an empty line. The set: ib_send_bw --use-srq 64 KiB, ib_send_lat
# 2 B (t_typical), ib_write_bw 64 KiB, ib_read_bw 64 KiB. Both ports run at their active
# MTU (1024 with the netdevs' MTU 1500). The connection data of every run goes over eth0.
# vcx_0 first has to carry a short ibv_rc_pingpong across the VMs (60 s at most): when it
# does not, the vcx_0 column reads "-", the rxe0 figures are still measured, and the
# script fails at the end saying so. BENCH_SECONDS: the length of each bandwidth run
# (default 5; the latency run counts iterations in proportion). No figure is compared
# with a threshold.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/verbs-common.sh"

SECS=${BENCH_SECONDS:-5}
[[ "$SECS" =~ ^[1-9][0-9]*$ ]] || fail "BENCH_SECONDS must be a positive integer"
[ "${VCX_VMS:-1}" = 2 ] || fail "bench-roce.sh needs two VMs (./vcx bench --vms 2)"
me=$VCX_VM_INDEX
[ "${VCX_LINK_IF:-}" = vcx0 ] || fail "vm$me: vcx0 is not on the vcx link (found '${VCX_LINK_IF:-none}')"
[ -e /sys/class/net/eth0 ] || fail "vm$me: no eth0"
LAT_ITERS=$((SECS * 250))
RUN_T=$((SECS * 4 + 90))
WAIT=$((RUN_T + 120))
SRV_CTL=169.254.77.2		# vm1's eth0: every run's connection data
DEVS=(vcx_0 rxe0)
declare -A addr=([vcx_0]=192.168.77.$((me + 1)) [rxe0]=169.254.77.$((me + 1))) gid

[ -d /sys/class/infiniband/vcx_0 ] || fail "vm$me: no vcx_0"
rxe_sched_task_warning_known
modprobe rdma_rxe && rdma link add rxe0 type rxe netdev eth0 || fail "vm$me: rxe0 on eth0"
for dev in "${DEVS[@]}"; do
	gid[$dev]=$(vcx_roce_v2_gid $dev "${addr[$dev]}") || fail "vm$me: no RoCE v2 GID ::ffff:${addr[$dev]} on $dev"
	echo "# vm$me $dev: GID index ${gid[$dev]} (::ffff:${addr[$dev]}), $(ibv_devinfo -d "$dev" | grep -m1 -o 'active_mtu:.*' | tr -s ' \t' ' ')"
done

# One run: vm0 names it (RUN n: device and command), vm1 starts the server and says when it
# listens, vm0 runs the client to vm1's eth0, then both report. Returns the client's
# status in vm0; the client's output is in /tmp/bench-cli.out, the server's in
# /tmp/bench-srv.out (of vm1, copied into the shared directory for vm0).
# The device options of a run: perftest's or the pingpong's (-g for the GID index).
devopts() { # perftest|pingpong DEV
	if [ "$1" = perftest ]; then echo "-d $2 -i 1 -x ${gid[$2]} -F"; else echo "-d $2 -i 1 -g ${gid[$2]}"; fi
}
RUN=0
run() { # perftest|pingpong DEV TCP_PORT TIMEOUT_S TOOL ARGS...
	local kind=$1 dev=$2 port=$3 t=$4 rc=0
	shift 4
	RUN=$((RUN + 1))
	vm_signal "run-$RUN" "$kind $dev $port $t $*"
	vm_wait "listen-$RUN" $WAIT >/dev/null
	# shellcheck disable=SC2046
	timeout "$t" "$@" $(devopts "$kind" "$dev") -p "$port" $SRV_CTL >/tmp/bench-cli.out 2>&1 || rc=$?
	vm_wait "served-$RUN" $WAIT >/tmp/bench-srv.out
	return $rc
}

if [ "$me" = 1 ]; then
	vm_signal ready
	n=0
	while :; do
		n=$((n + 1))
		# vm0 names the next run or says done; between runs it waits at most WAIT each.
		for _ in $(seq $((WAIT * 10))); do
			[ ! -e "$VCX_SHARED/done.vm0" ] && [ ! -e "$VCX_SHARED/run-$n.vm0" ] || break
			[ ! -e "$VCX_SHARED/failed.vm0" ] || VCX_SHARED="" fail "vm0 failed: $(cat "$VCX_SHARED/failed.vm0")"
			sleep 0.1
		done
		[ ! -e "$VCX_SHARED/run-$n.vm0" ] || {
			read -r kind dev port t tool_args <"$VCX_SHARED/run-$n.vm0"
			# shellcheck disable=SC2086,SC2046
			timeout "$t" $tool_args $(devopts "$kind" "$dev") -p "$port" >/tmp/bench-srv.out 2>&1 &
			srv=$!
			for _ in $(seq 300); do
				tcp_listening "$port" && break
				kill -0 $srv 2>/dev/null || break
				sleep 0.1
			done
			vm_signal "listen-$n"
			rc=0
			wait $srv || rc=$?
			vm_signal "served-$n" "exit $rc: $(tail -3 /tmp/bench-srv.out | tr '\n' ' ')"
			continue
		}
		[ -e "$VCX_SHARED/done.vm0" ] || fail "vm1: no run $n nor the end from vm0 in $WAIT s"
		break
	done
	echo "# vm1: served $((n - 1)) runs"
	exit 0
fi

vm_wait ready 300 >/dev/null
echo "# vm0 <-> vm1: vcx_0 over the vcx link, rxe0 over eth0; per run -D $SECS (bandwidth), -n $LAT_ITERS (latency)"

# Whether vcx_0 reaches the other VM's vcx_0 at all: a short RC pingpong, bounded.
vcx_ok=1
if run pingpong vcx_0 18700 60 ibv_rc_pingpong -n 20 -c -s 4096 -m 1024 &&
	grep -q '20 iters in' /tmp/bench-cli.out; then
	echo "# vcx_0 reaches vm1's vcx_0: $(grep 'iters in' /tmp/bench-cli.out)"
else
	vcx_ok=0
	echo "# vcx_0 does not reach vm1's vcx_0 (ibv_rc_pingpong: $(tail -2 /tmp/bench-cli.out | tr '\n' ' '); server: $(cat /tmp/bench-srv.out))"
fi

declare -A val unit
rows=()
port=18710
record() { # TEST LABEL DEV VALUE UNIT
	awk -v v="$4" 'BEGIN { exit !(v ~ /^[0-9]+(\.[0-9]+)?$/ && v + 0 > 0) }' ||
		{ cat /tmp/bench-cli.out >&2; fail "$1 on $3: no positive figure ('$4')"; }
	[ -n "${unit[$1]:-}" ] || rows+=("$1|$2 ($5)")
	val[$1,$3]=$4 unit[$1]=$5
	echo "BENCH,$1,$3,$4,$5"
}
report_row() { # NAME SIZE
	local row
	grep -q '^ *#bytes' /tmp/bench-cli.out && row=$(awk -v s="$2" '$1 == s' /tmp/bench-cli.out | head -1)
	[ -n "${row:-}" ] || { cat /tmp/bench-cli.out /tmp/bench-srv.out >&2; fail "$1: no report row for $2 bytes"; }
	echo "$row"
}
# measure TEST LABEL SIZE FIELD UNIT TOOL ARGS...: both devices (vcx_0 only when it
# passed the probe); FIELD is the report column (4: BW average MB/s, 5: t_typical usec).
measure() {
	local test=$1 label=$2 size=$3 field=$4 u=$5 dev row
	shift 5
	for dev in "${DEVS[@]}"; do
		if [ $dev = vcx_0 ] && [ $vcx_ok = 0 ]; then
			[ -n "${unit[$test]:-}" ] || rows+=("$test|$label ($u)")
			unit[$test]=$u
			continue
		fi
		port=$((port + 1))
		run perftest $dev $port $RUN_T "$@" -s "$size" ||
			{ cat /tmp/bench-cli.out >&2; echo "server: $(cat /tmp/bench-srv.out)" >&2; fail "$test on $dev: client failed"; }
		row=$(report_row "$test on $dev" "$size")
		record "$test" "$label" $dev "$(awk -v f="$field" '{ print $f }' <<<"$row")" "$u"
	done
}

measure send_bw-srq-65536 "ib_send_bw --use-srq -s 65536" 65536 4 MB/s ib_send_bw --use-srq -D "$SECS"
measure send_lat-2 "ib_send_lat -s 2 (t_typical)" 2 5 usec ib_send_lat -n $LAT_ITERS
measure write_bw-65536 "ib_write_bw -s 65536" 65536 4 MB/s ib_write_bw -D "$SECS"
measure read_bw-65536 "ib_read_bw -s 65536" 65536 4 MB/s ib_read_bw -D "$SECS"
vm_signal done
kernel_log_clean_but_rxe "the benchmark"

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || a == "-") print "-"; else if (b > 0) printf "%.2f", a / b; else print "inf" }'; }
fmt() { awk -v v="$1" 'BEGIN { if (v == "") print "-"; else printf (v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.3g"), v }'; }
echo
printf '%-42s %10s %10s %8s\n' "perftest between two VMs, ${SECS} s per run" vcx_0 rxe0 vcx/rxe
for r in "${rows[@]}"; do
	t=${r%%|*}
	printf '%-42s %10s %10s %8s\n' "${r#*|}" "$(fmt "${val[$t,vcx_0]:-}")" "$(fmt "${val[$t,rxe0]:-}")" \
		"$(ratio "${val[$t,vcx_0]:-}" "${val[$t,rxe0]:-}")"
done
echo
[ $vcx_ok = 1 ] || fail "vcx_0 to vcx_0 across the two VMs carried no RDMA traffic (a 20-message ibv_rc_pingpong failed or timed out), so the vcx_0 column is empty: the device's RoCE v2 wire engine is needed; rxe0 figures above"
pass "perftest between two VMs on vcx_0 and rxe0"
