#!/usr/bin/env bash
# Boot stress for multi-threaded TCG (docs/performance.md, "The MTTCG abort"): first the
# memory-map reproducer (tests/guest/stress-mmio-remap.py) for REMAP_S seconds in a boot
# of its own, then BOOTS VM boots one after another, each running RELOADS unload/load
# cycles of vcx.ko. Not part of `./vcx test`; run it with `./vcx stress`.
# Counts QEMU aborts (an assertion or a signal in QEMU's output) apart from guest test
# failures, keeps the serial log of every failed boot, and ends with one summary line.
# Usage: stress-mttcg.sh BUILD_DIR [BOOTS [RELOADS [REMAP_S]]]
set -uo pipefail
build=${1:?usage: stress-mttcg.sh BUILD_DIR [BOOTS [RELOADS [REMAP_S]]]}
boots=${2:-200} reloads=${3:-5} remap_s=${4:-60}
src=$(cd "$(dirname "$0")/../.." && pwd)
qemu="$build/qemu-system-x86_64"
out="$build/stress/$(date +%Y%m%d-%H%M%S)-mttcg"
mkdir -p "$out"
aborts=0 failures=0 start=$SECONDS

# One boot; $1: name, rest: vcx-vm.py arguments. Classifies the result.
boot() {
	local name=$1 log="$out/$1.log" rc=0
	shift
	python3 "$src/images/vcx-vm.py" --qemu "$qemu" --build "$build" --src "$src" \
		--tcg-thread multi --quiet --timeout 600 --log-dir "$out/$name.d" "$@" >"$log" 2>&1 || rc=$?
	if grep -qE 'Assertion .* failed|Aborted|Segmentation fault|core dumped|qemu-system-x86_64: .*(error|abort)' \
		"$log" "$out/$name.d"/*.log 2>/dev/null; then
		aborts=$((aborts + 1))
		echo "$name: QEMU ABORT (log $log)"
		grep -hE 'Assertion|Aborted|Segmentation|qemu-system' "$log" | head -3
	elif [ $rc != 0 ]; then
		failures=$((failures + 1))
		echo "$name: guest test failed, status $rc (log $log)"
	else
		rm -rf "$log" "$out/$name.d"
	fi
}

boot remap --no-load --qemu-arg=-device --qemu-arg=edu -- python3 tests/guest/stress-mmio-remap.py "$remap_s"
for i in $(seq "$boots"); do
	boot "boot-$i" -- bash tests/guest/bringup-reload.sh "$reloads"
	[ $((i % 10)) = 0 ] && echo "$i/$boots boots, $aborts aborts, $failures failures, $((SECONDS - start)) s"
done
echo "stress mttcg: $boots boots x $reloads reloads + ${remap_s} s remap: $aborts QEMU aborts, $failures guest failures in $((SECONDS - start)) s ($out)"
[ $aborts = 0 ] && [ $failures = 0 ]
