#!/bin/bash
# perftest benchmark in one VM boot: the same tools over loopback on vcx_0 (192.168.77.1)
# and on Soft-RoCE rxe0 over eth0 (192.168.78.1), each test on vcx_0 then on rxe0, so both
# devices see the same state of a machine that is shared with other work. Both use their
# IPv4 RoCE v2 GID and their port's active MTU. Prints one CSV line per measurement
#   BENCH,<test>,<device>,<value>,<unit>
# then a table (test | vcx_0 | rxe0 | vcx/rxe) that starts with a line "perftest over
# loopback" and ends with an empty line. Run by `./vcx bench` (BENCH_SECONDS: the length
# of each bandwidth run, default 5; latency runs and the pingpong count iterations in
# proportion). A run that fails or reports no figure fails the script with its output.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/verbs-common.sh"

SECONDS_PER_RUN=${BENCH_SECONDS:-5}
[[ "$SECONDS_PER_RUN" =~ ^[1-9][0-9]*$ ]] || fail "BENCH_SECONDS must be a positive integer"
# perftest's duration mode (-D) prints no t_typical for latency tests, so they and
# ibv_srq_pingpong run a count of iterations, sized to about BENCH_SECONDS each under
# single-threaded TCG (a perftest round trip there is about one guest timer tick, 4 ms;
# a pingpong iteration about 0.5 to 1.5 ms).
LAT_ITERS=$((SECONDS_PER_RUN * 250))
PP_ITERS=$((SECONDS_PER_RUN * 1000))
# Each run is under timeout: the run's own length, perftest's start and end (a few
# seconds under TCG), and a wide margin for a machine busy with other VMs.
RUN_TIMEOUT=$((SECONDS_PER_RUN * 4 + 90))
RXE_ADDR=192.168.78.1
DEVS=(vcx_0 rxe0)

declare -A gid
gid[vcx_0]=$(vcx_ipv4_up 192.168.77.1)
ip link set eth0 up || fail "eth0 up"
ip addr add $RXE_ADDR/24 dev eth0 || fail "address on eth0"
rxe_sched_task_warning_known
modprobe rdma_rxe && rdma link add rxe0 type rxe netdev eth0 || fail "rxe0 on eth0"
gid[rxe0]=$(vcx_roce_v2_gid rxe0 $RXE_ADDR) || fail "no RoCE v2 GID of $RXE_ADDR on rxe0"
for dev in "${DEVS[@]}"; do
	echo "# $dev: GID index ${gid[$dev]} ($(cat /sys/class/infiniband/$dev/ports/1/gids/${gid[$dev]})), $(ibv_devinfo -d "$dev" | grep -m1 -o 'active_mtu:.*' | tr -s ' \t' ' ')"
done

echo "# per run: -D $SECONDS_PER_RUN (bandwidth), -n $LAT_ITERS (latency), -n $PP_ITERS (ibv_srq_pingpong)"

port=18700
# The server on the first vCPU, the client on the last, so that every run on either device
# has the same placement, one busy-polling process per vCPU, whatever the guest's
# scheduler would do; perftest also times with the TSC of the CPU it runs on.
SRV_CPU=0 CLI_CPU=$(($(nproc) - 1))
# pair NAME TOOL ARGS...: the server in the background, then the client to localhost, on
# the next TCP port; both must succeed. The client's output is left in /tmp/bench-cli.out.
pair() {
	local name=$1 i srv
	shift
	port=$((port + 1))
	timeout $RUN_TIMEOUT taskset -c $SRV_CPU "$@" -p $port >/tmp/bench-srv.out 2>&1 &
	srv=$!
	# The client fails at once if nobody listens yet: wait (bounded) for the server's socket.
	for i in $(seq 200); do
		tcp_listening $port && break
		kill -0 $srv 2>/dev/null || break
		sleep 0.05
	done
	if ! timeout $RUN_TIMEOUT taskset -c $CLI_CPU "$@" -p $port localhost >/tmp/bench-cli.out 2>&1; then
		kill $srv 2>/dev/null || true
		wait $srv || true
		echo "--- client: $* localhost" >&2; cat /tmp/bench-cli.out >&2
		echo "--- server" >&2; cat /tmp/bench-srv.out >&2
		fail "$name: client failed"
	fi
	wait $srv || { echo "--- server: $*" >&2; cat /tmp/bench-srv.out >&2; fail "$name: server failed"; }
}

# The report row of SIZE bytes in the client's output, or fail with the output.
report_row() { # NAME SIZE
	local row
	grep -q '^ *#bytes' /tmp/bench-cli.out && row=$(awk -v s="$2" '$1 == s' /tmp/bench-cli.out | head -1)
	[ -n "${row:-}" ] || { cat /tmp/bench-cli.out >&2; fail "$1: no report row for $2 bytes"; }
	echo "$row"
}

declare -A val unit
rows=()
# record TEST LABEL DEV VALUE UNIT: one measurement, which must be a positive number.
record() {
	awk -v v="$4" 'BEGIN { exit !(v ~ /^[0-9]+(\.[0-9]+)?$/ && v + 0 > 0) }' ||
		{ cat /tmp/bench-cli.out >&2; fail "$1 on $3: no positive figure ('$4')"; }
	[ -n "${unit[$1]:-}" ] || rows+=("$1|$2 ($5)")
	val[$1,$3]=$4 unit[$1]=$5
	echo "BENCH,$1,$3,$4,$5"
}

# bw TEST LABEL SIZE [RATE_LABEL] -- TOOL ARGS...: duration mode; MB/s (BW average) and,
# with RATE_LABEL, the message rate (Mpps) as a second row. A run that completed no
# message in its duration (a 1 MiB SEND over rxe in 1 s on a starved guest does not) is
# measured again over BW_RETRY_ITERS iterations, and says so.
BW_RETRY_ITERS=20
bw() {
	local test=$1 label=$2 size=$3 rate_label=$4 dev row
	shift 5
	for dev in "${DEVS[@]}"; do
		pair "$test on $dev" "$@" -d $dev -i 1 -x "${gid[$dev]}" -F -s "$size" -D "$SECONDS_PER_RUN"
		# #bytes #iterations BW_peak[MB/s] BW_average[MB/s] MsgRate[Mpps]
		row=$(report_row "$test on $dev" "$size")
		if ! awk -v v="$(awk '{print $4}' <<<"$row")" 'BEGIN { exit !(v + 0 > 0) }'; then
			echo "# $test on $dev: no message completed in ${SECONDS_PER_RUN} s; measured again over $BW_RETRY_ITERS iterations"
			pair "$test on $dev" "$@" -d $dev -i 1 -x "${gid[$dev]}" -F -s "$size" -n $BW_RETRY_ITERS
			row=$(report_row "$test on $dev" "$size")
		fi
		record "$test" "$label" $dev "$(awk '{print $4}' <<<"$row")" MB/s
		[ -z "$rate_label" ] ||
			record "$test-rate" "$rate_label" $dev "$(awk '{print $5}' <<<"$row")" Mpps
	done
}

# lat TEST LABEL SIZE -- TOOL ARGS...: LAT_ITERS iterations; t_typical (the median).
# perftest converts TSC cycles to microseconds with a CPU clock it measures at start-up
# against gettimeofday; when the fit is poor ("Correlation coefficient r^2: ... < 0.9",
# seen on a host loaded by multi-threaded guests) it takes 0 MHz and every figure reads
# "inf". Such a run measured nothing: it runs again, at most CLOCK_RETRIES more times, and
# says so; any other non-positive figure fails at once.
CLOCK_RETRIES=2
lat() {
	local test=$1 label=$2 size=$3 dev row try
	shift 4
	for dev in "${DEVS[@]}"; do
		for try in $(seq 0 $CLOCK_RETRIES); do
			pair "$test on $dev" "$@" -d $dev -i 1 -x "${gid[$dev]}" -F -s "$size" -n $LAT_ITERS
			# #bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9% [usec]
			row=$(report_row "$test on $dev" "$size")
			[ "$(awk '{print $5}' <<<"$row")" = inf ] &&
				grep -q 'Correlation coefficient' /tmp/bench-cli.out && [ "$try" -lt $CLOCK_RETRIES ] ||
				break
			echo "# $test on $dev: perftest could not measure the CPU clock (figures 'inf'); run again"
		done
		record "$test" "$label" $dev "$(awk '{print $5}' <<<"$row")" usec
	done
}

for size in 64 4096 65536 1048576; do
	bw send_bw-srq-$size "ib_send_bw --use-srq -s $size" $size "" -- ib_send_bw --use-srq
done
bw send_bw-q1-64 "ib_send_bw -s 64 -q 1" 64 "ib_send_bw -s 64 -q 1" -- ib_send_bw -q 1
bw send_bw-q8-64 "ib_send_bw -s 64 -q 8" 64 "ib_send_bw -s 64 -q 8" -- ib_send_bw -q 8
bw write_bw-65536 "ib_write_bw -s 65536" 65536 "" -- ib_write_bw
bw read_bw-65536 "ib_read_bw -s 65536" 65536 "" -- ib_read_bw
for size in 2 4096; do
	lat send_lat-srq-$size "ib_send_lat --use-srq -s $size" $size -- ib_send_lat --use-srq
done
lat write_lat-4096 "ib_write_lat -s 4096" 4096 -- ib_write_lat
# ibv_srq_pingpong (16 QPs on one SRQ, 4096-byte messages): usec/iter of the client.
for dev in "${DEVS[@]}"; do
	pair "srq_pingpong on $dev" ibv_srq_pingpong -q 16 -n $PP_ITERS -d $dev -i 1 -g "${gid[$dev]}"
	grep -q 'iters in' /tmp/bench-srv.out || { cat /tmp/bench-srv.out >&2; fail "srq_pingpong on $dev: no server result"; }
	# "N iters in S seconds = U usec/iter"
	record srq_pingpong-q16 "ibv_srq_pingpong -q 16" $dev \
		"$(sed -n 's/.* iters in .* = \([0-9.]*\) usec\/iter.*/\1/p' /tmp/bench-cli.out | head -1)" usec/iter
done

kernel_log_clean_but_rxe "the benchmark"

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "inf" }'; }
fmt() { awk -v v="$1" 'BEGIN { printf (v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.3g"), v }'; }
echo
printf '%-42s %10s %10s %8s\n' "perftest over loopback, ${SECONDS_PER_RUN} s per run" vcx_0 rxe0 vcx/rxe
for r in "${rows[@]}"; do
	t=${r%%|*}
	printf '%-42s %10s %10s %8s\n' "${r#*|}" "$(fmt "${val[$t,vcx_0]}")" "$(fmt "${val[$t,rxe0]}")" \
		"$(ratio "${val[$t,vcx_0]}" "${val[$t,rxe0]}")"
done
echo
pass "perftest on vcx_0 and rxe0"
