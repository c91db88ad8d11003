# Helpers for guest test scripts (sourced inside the VM).
set -euo pipefail

fail() {
	echo "--- dmesg (last 30 lines) ---" >&2
	dmesg | tail -30 >&2
	echo "FAIL: $*" >&2
	exit 1
}

pass() { echo "PASS: $*"; }

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
# port (then ib_cm and rdma_cm do not run there). Prints them; returns 0 when clean.
kernel_log_clean() {
	! dmesg | grep -E "WARNING:|BUG:|Oops:|general protection fault|refcount_t:|Call Trace:|list_(add|del) corruption|blocked for more than|Couldn't create ib_mad"
}
