#!/usr/bin/env bash
# vcx.ko builds for the guest kernel and for 6.1; the default build binds only the vcx id,
# and the real-hardware build (VCX_REAL_HW=1) adds the ConnectX-5 id and nothing else.
set -euo pipefail
ko612=$1 ko61=$2 krel612=$3 krel61=$4
fail() { echo "FAIL: $*" >&2; exit 1; }

vermagic() { modinfo -F vermagic "$1" | cut -d' ' -f1; }
[ "$(vermagic "$ko612")" = "$krel612" ] || fail "$ko612 vermagic $(vermagic "$ko612"), expected $krel612"
[ "$(vermagic "$ko61")" = "$krel61" ] || fail "$ko61 vermagic $(vermagic "$ko61"), expected $krel61"

aliases() { modinfo -F alias "$1" | sort; }
expected_default="pci:v00001AF4d000010F0sv*sd*bc*sc*i*"
[ "$(aliases "$ko612")" = "$expected_default" ] || fail "default build aliases: $(aliases "$ko612")"
[ "$(aliases "$ko61")" = "$expected_default" ] || fail "6.1 build aliases: $(aliases "$ko61")"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$VCX_SRC/build-aux/build-driver.sh" "$krel612" "$tmp/hw" 1 "$tmp/vcx-hw.ko"
expected_hw=$(printf '%s\n' "pci:v000015B3d00001017sv*sd*bc*sc*i*" "$expected_default" | sort)
[ "$(aliases "$tmp/vcx-hw.ko")" = "$expected_hw" ] || fail "real-hw build aliases: $(aliases "$tmp/vcx-hw.ko")"
echo "PASS: 6.12 and 6.1 builds, id tables of both builds"
