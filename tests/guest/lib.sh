# Helpers for guest test scripts (sourced inside the VM).
set -euo pipefail

fail() {
	echo "--- dmesg (last 30 lines) ---" >&2
	dmesg | tail -30 >&2
	echo "FAIL: $*" >&2
	# Two VMs: tell the other one, whose vm_wait then fails at once instead of timing out.
	[ -z "${VCX_SHARED:-}" ] || echo "$*" >"$VCX_SHARED/failed.vm${VCX_VM_INDEX:-0}" 2>/dev/null
	exit 1
}

pass() { echo "PASS: $*"; }

# True when a TCP socket of this network namespace listens on PORT, over IPv4 or IPv6.
# Read from /proc/net/tcp{,6} by bash alone: the wait loops that ask this every 0.1 s
# while a server starts used ss, a process of 0.1 to 0.4 s under TCG on the vCPU the
# server was starting on. A line: "sl local_address rem_address st ...", the local
# address as hex IP:PORT, st 0A for LISTEN.
tcp_listening() { # PORT
	local hex f _sl laddr _rem st _rest
	printf -v hex ':%04X' "$1"
	for f in /proc/net/tcp /proc/net/tcp6; do
		[ -r "$f" ] || continue
		while read -r _sl laddr _rem st _rest; do
			[ "$st" = 0A ] && [[ "$laddr" == *"$hex" ]] && return 0
		done <"$f"
	done
	return 1
}

# sleep without a process. Under TCG a fork and exec costs the guest some 50 ms of CPU,
# so a `sleep 0.1` poll loop (vm_wait, the scripts' waits for a state) kept a vCPU half
# busy, and in two-VM tests the waiting VM took host CPU from the working one. This sleep
# is bash's read timing out on a FIFO that no one writes (opened read-write, so the open
# does not block and read never sees end-of-file). Arguments other than one plain number
# of seconds, or no FIFO, go to /bin/sleep. The descriptor is inherited through the
# environment; a process started with its descriptors closed opens its own, and a read
# that ends other than by its timeout (status above 128) falls back to /bin/sleep, so a
# wait loop never spins.
if { [ -z "${VCX_SNOOZE_FD:-}" ] || [ ! -p "/dev/fd/$VCX_SNOOZE_FD" ]; } &&
	{ [ -p /run/vcx-snooze ] || mkfifo /run/vcx-snooze 2>/dev/null; } &&
	exec {VCX_SNOOZE_FD}<>/run/vcx-snooze; then
	export VCX_SNOOZE_FD
fi
sleep() {
	if [ $# -eq 1 ] && [[ "$1" =~ ^[0-9]+(\.[0-9]+)?$ ]] && [ -n "${VCX_SNOOZE_FD:-}" ]; then
		local rc=0
		read -r -t "$1" -u "$VCX_SNOOZE_FD" _ 2>/dev/null || rc=$?
		[ $rc -gt 128 ] || command sleep "$1"
	else
		command sleep "$@"
	fi
}

# The PCI address of the vcx device (default id), or fail.
vcx_pci_addr() {
	local dev
	for dev in /sys/bus/pci/devices/*; do
		if [ "$(cat "$dev/vendor")" = 0x1af4 ] && [ "$(cat "$dev/device")" = 0x10f0 ]; then
			basename "$dev"
			return 0
		fi
	done
	fail "no vcx device (1af4:10f0) on the PCI bus"
}

# Whether the kernel log has a line matching a (basic) regular expression. The log is
# read whole first: with pipefail, "dmesg | grep -q" fails at random once the log is
# larger than a pipe, when grep exits early and dmesg dies of SIGPIPE.
dmesg_has() {
	local log
	log=$(dmesg)
	grep -q -- "$1" <<<"$log"
}

# Count of lines in the kernel log matching a pattern.
dmesg_count() { dmesg | grep -c -E "$1" || true; }

# Kernel log lines that show a warning, oops, corruption or a hung task (case-sensitive
# on purpose: "loops_per_jiffy" is not an oops), or ib_mad failing to create its QPs on a
# port (then ib_cm and rdma_cm do not run there). Prints each with the lines around it
# (a warning's own text, the modules, registers and call trace follow its first line);
# returns 0 when clean.
KERNEL_LOG_BAD="WARNING:|BUG:|Oops:|general protection fault|refcount_t:|Call Trace:|list_(add|del) corruption|blocked for more than|Couldn't create ib_mad"
kernel_log_clean() {
	local log
	log=$(kernel_log_without_known)
	grep -q -E "$KERNEL_LOG_BAD" <<<"$log" || return 0
	grep -B 3 -A 45 -E "$KERNEL_LOG_BAD" <<<"$log"
	return 1
}

# Known kernel warnings that are not vcx faults, each registered by the step that
# provokes it, right before it does: kernel_log_known WARNING_REGEX CALLER_REGEX. A splat
# ("cut here" to "end trace") with a line matching WARNING_REGEX and one matching
# CALLER_REGEX is cut from the log kernel_log_clean checks; any other warning still
# counts. kernel_log_known_cut prints how many splats the last check cut.
KERNEL_LOG_KNOWN=""
kernel_log_known() { KERNEL_LOG_KNOWN+="$1"$'\t'"$2"$'\n'; }
kernel_log_known_cut() { cat /tmp/kernel-log-known-cut 2>/dev/null || echo 0; }

# Soft-RoCE (6.12) warns in rxe_sched_task when a packet reaches a QP whose last
# reference is being dropped (WARN_ON(rxe_read(task->qp) <= 0) at rxe_task.c:267): a race
# in rdma_rxe when perftest destroys its QPs with packets still in flight (it failed the
# suite's bench-quick once, on 2026-12-07). rxe is the benchmark's baseline, not vcx: the
# benchmarks that run perftest on rxe0 register that splat, and say when it was cut.
rxe_sched_task_warning_known() {
	kernel_log_known 'at drivers/infiniband/sw/rxe/rxe_task.c:[0-9]+ rxe_sched_task' \
		'rxe_sched_task'
}
kernel_log_clean_but_rxe() { # context
	kernel_log_clean || fail "$1: kernel warnings"
	[ "$(kernel_log_known_cut)" = 0 ] ||
		echo "# $1: kernel log clean but for $(kernel_log_known_cut) Soft-RoCE rxe_sched_task warning(s)"
}
kernel_log_without_known() {
	[ -n "$KERNEL_LOG_KNOWN" ] || { rm -f /tmp/kernel-log-known-cut; dmesg; return; }
	dmesg | KNOWN="$KERNEL_LOG_KNOWN" awk '
		BEGIN { n = split(ENVIRON["KNOWN"], k, "\n") - 1
			for (i = 1; i <= n; i++) { split(k[i], f, "\t"); warn[i] = f[1]; caller[i] = f[2] } }
		function is_known(block,   i) {
			for (i = 1; i <= n; i++)
				if (block ~ warn[i] && block ~ caller[i]) return 1
			return 0 }
		/------------\[ cut here \]------------/ { held = $0 "\n"; inside = 1; next }
		inside { held = held $0 "\n"
			if ($0 ~ /---\[ end trace/) {
				if (is_known(held)) cut++; else printf "%s", held
				held = ""; inside = 0 }
			next }
		{ print }
		END { if (inside) printf "%s", held; print cut + 0 > "/tmp/kernel-log-known-cut" }'
}

# Two VMs (--vms 2): both run the same script and meet through the directory they share
# (VCX_SHARED, images/guest-init). vm_signal NAME [TEXT] publishes an event of this VM
# (atomically, with optional TEXT); vm_wait NAME TIMEOUT_S waits for the other VM's event
# NAME, prints its TEXT, and fails when the time is up or the other VM has failed.
vm_signal() {
	[ -n "${VCX_SHARED:-}" ] || fail "vm_signal: not a two-VM run (no VCX_SHARED)"
	printf '%s\n' "${2:-}" >"$VCX_SHARED/.$1.vm$VCX_VM_INDEX.tmp" &&
		mv "$VCX_SHARED/.$1.vm$VCX_VM_INDEX.tmp" "$VCX_SHARED/$1.vm$VCX_VM_INDEX" ||
		fail "vm_signal $1: cannot write to $VCX_SHARED"
}
vm_wait() {
	local other=$((1 - VCX_VM_INDEX)) n=0 limit=$(($2 * 10))
	[ -n "${VCX_SHARED:-}" ] || fail "vm_wait: not a two-VM run (no VCX_SHARED)"
	while ! [ -e "$VCX_SHARED/$1.vm$other" ]; do
		if [ -e "$VCX_SHARED/failed.vm$other" ]; then
			local why
			why=$(cat "$VCX_SHARED/failed.vm$other")
			# Not reported back: the other VM has its own failure.
			VCX_SHARED="" fail "vm$other failed while vm$VCX_VM_INDEX waited for its '$1': $why"
		fi
		[ $n -lt $limit ] || fail "vm$VCX_VM_INDEX: no '$1' from vm$other in $2 s"
		sleep 0.1
		n=$((n + 1))
	done
	cat "$VCX_SHARED/$1.vm$other"
}
