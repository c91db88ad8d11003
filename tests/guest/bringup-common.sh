# Helpers for the bringup-*.sh guest tests (sourced inside the VM, after lib.sh).
# The device's monitor view comes from its read-only QOM property "state", e.g.
#   issi=1 hca=initialized health=0x00 link=up pages=80 pages_boot=16 pages_init=64
#   pages_regular=0 pages_wanted=0 uars=1 eqs=3 cmds=21

VCX_QOM=/machine/peripheral/vcx0

# The device state line, without HMP's quotes.
vcx_state() {
	images/vcx-hostcall hmp "qom-get $VCX_QOM state" | tr -d '"\r' ||
		fail "cannot read the device state over the monitor"
}

# One field of a state line: state_field "$state" pages
state_field() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# HMP prints a refused qom-set as "Error: ..." and still succeeds: look at the output.
vcx_qom_set() {
	local out
	out=$(images/vcx-hostcall hmp "qom-set $VCX_QOM $1 $2") || fail "qom-set $1 $2 failed"
	case "$out" in *Error*) fail "qom-set $1 $2: $out" ;; esac
}

# The device holds nothing of the driver's: HCA disabled, no pages, UARs or EQs.
expect_released() { # context
	local s
	s=$(vcx_state)
	[ "$(state_field "$s" hca)" = disabled ] || fail "$1: HCA not disabled: $s"
	[ "$(state_field "$s" pages)" = 0 ] || fail "$1: device still holds pages: $s"
	[ "$(state_field "$s" uars)" = 0 ] || fail "$1: UARs left allocated: $s"
	[ "$(state_field "$s" eqs)" = 0 ] || fail "$1: EQs left: $s"
}

# The function is up as the driver brings it up: ISSI 1, HCA initialized, every page the
# device asked for given, one kernel UAR, the control EQ plus one completion EQ per CPU.
expect_up() { # context
	local s want_eqs
	s=$(vcx_state)
	want_eqs=$(($(nproc) + 1))
	[ "$(state_field "$s" hca)" = initialized ] || fail "$1: HCA not initialized: $s"
	[ "$(state_field "$s" issi)" = 1 ] || fail "$1: ISSI is not 1: $s"
	[ "$(state_field "$s" health)" = 0x00 ] || fail "$1: health syndrome set: $s"
	[ "$(state_field "$s" pages_wanted)" = 0 ] || fail "$1: device still wants pages: $s"
	[ "$(state_field "$s" pages)" -gt 0 ] || fail "$1: no pages given: $s"
	[ "$(state_field "$s" uars)" = 1 ] || fail "$1: expected 1 UAR: $s"
	[ "$(state_field "$s" eqs)" = "$want_eqs" ] || fail "$1: expected $want_eqs EQs: $s"
}

# The driver's messages at warning level or worse (the boot has unrelated ones, e.g. MTRR),
# minus the out-of-tree module taint notes.
kernel_warnings() {
	dmesg --level=emerg,alert,crit,err,warn | grep -E '(^|[] ])vcx[ :]' |
		grep -v -e 'taints kernel' -e 'module verification failed' || true
}

# No oops, BUG or WARN splat anywhere in the log (lib.sh).
expect_no_splat() { # context
	kernel_log_clean || fail "$1: kernel splat"
}

# Wait up to $2 seconds for the count of log lines matching $1 to reach $3.
# Every 0.5 s: one dmesg | grep costs the TCG guest some 75 ms of CPU.
wait_dmesg_count() { # pattern timeout_s count
	local i
	for i in $(seq $(($2 * 2))); do
		[ "$(dmesg_count "$1")" -ge "$3" ] && return 0
		sleep 0.5
	done
	[ "$(dmesg_count "$1")" -ge "$3" ]
}

vcx_bound() { [ "$(basename "$(readlink "/sys/bus/pci/devices/$1/driver" 2>/dev/null)")" = vcx ]; }
