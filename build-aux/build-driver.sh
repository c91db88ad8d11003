#!/usr/bin/env bash
# Build vcx.ko out of tree against one kernel's headers, with objects kept outside the
# checkout: the build directory holds symlinks to guest-driver/ and include/.
# Usage: build-driver.sh KERNEL_RELEASE BUILD_DIR REAL_HW(0|1) [OUTPUT_KO]
. "$(dirname "$0")/common.sh"

krel=${1:?kernel release}
bdir=${2:?build dir}
real_hw=${3:-0}
out=${4:-}
kdir="/usr/src/linux-headers-$krel"
[ -d "$kdir" ] || vcx_die "kernel headers for $krel missing: install Debian package linux-headers-$krel (./vcx setup)"

mkdir -p "$bdir"
# Mirror the sources as symlinks; drop links whose source is gone.
find "$bdir" -maxdepth 1 -type l ! -exec test -e {} \; -delete
for f in "$VCX_SRC"/guest-driver/*; do
	ln -sfn "$f" "$bdir/$(basename "$f")"
done
ln -sfn "$VCX_SRC/include" "$bdir/include"

make -s -C "$kdir" M="$bdir" VCX_REAL_HW="$real_hw" modules >"$bdir/build.log" 2>&1 || {
	cat "$bdir/build.log" >&2
	vcx_die "vcx.ko build against $krel failed"
}
# Warnings are errors for our own code: the module must build clean on every kernel.
if grep -q 'warning:' "$bdir/build.log"; then
	cat "$bdir/build.log" >&2
	vcx_die "vcx.ko build against $krel has warnings"
fi
# Copy only a changed module, so what depends on it (guest-modules.tar) stays up to date.
if [ -n "$out" ] && ! cmp -s "$bdir/vcx.ko" "$out"; then
	cp "$bdir/vcx.ko" "$out"
fi
