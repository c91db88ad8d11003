#!/usr/bin/env bash
# The VM runner streams the guest command's output and exits with its status.
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
rc=0
out=$("$VCX_SRC/tests/guest/run-in-vm" vm-exit-status 600 -- \
	sh -c 'echo vcx-marker-$((6 * 7)); echo "vcx-devices=$(lspci -nn | grep -c 1af4:10f0)"; exit 3') || rc=$?
echo "$out"
[ "$rc" = 3 ] || fail "exit status $rc, expected 3"
grep -q '^vcx-marker-42' <<<"$out" || fail "guest output not streamed"
grep -q '^vcx-devices=1' <<<"$out" || fail "lspci did not show exactly one vcx device"
echo "PASS: guest output streamed, exit status 3 propagated"
