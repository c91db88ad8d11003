#!/usr/bin/env bash
# Build a kernel module out of tree against one kernel's headers, with objects kept outside
# the checkout: the build directory holds symlinks to the sources and include/.
# Usage: build-driver.sh KERNEL_RELEASE BUILD_DIR REAL_HW(0|1) [OUTPUT_KO [SOURCE_DIR [MODULE]]]
#   SOURCE_DIR: a Kbuild directory of the checkout (default guest-driver, i.e. vcx.ko;
#   tests/kmod holds the in-kernel test modules). MODULE: the one module of a directory
#   holding several to build (passed to Kbuild as VCX_KMOD), one build directory each.
. "$(dirname "$0")/common.sh"

krel=${1:?kernel release}
bdir=${2:?build dir}
real_hw=${3:-0}
out=${4:-}
srcdir=${5:-guest-driver}
module=${6:-}
kdir="/usr/src/linux-headers-$krel"
[ -d "$kdir" ] || vcx_die "kernel headers for $krel missing: install Debian package linux-headers-$krel (./vcx setup)"

mkdir -p "$bdir"
# Mirror the sources as symlinks; drop links whose source is gone.
find "$bdir" -maxdepth 1 -type l ! -exec test -e {} \; -delete
for f in "$VCX_SRC/$srcdir"/*; do
	if [ -d "$f" ] && [ ! -L "$f" ]; then
		# A subdirectory (guest-driver/en/) becomes a directory of links, so that its
		# objects too are written here and not into the checkout.
		d="$bdir/$(basename "$f")"
		[ -L "$d" ] && rm -f "$d"
		mkdir -p "$d"
		find "$d" -maxdepth 1 -type l ! -exec test -e {} \; -delete
		for g in "$f"/*; do
			ln -sfn "$g" "$d/$(basename "$g")"
		done
	else
		ln -sfn "$f" "$bdir/$(basename "$f")"
	fi
done
ln -sfn "$VCX_SRC/include" "$bdir/include"

make -s -C "$kdir" M="$bdir" VCX_REAL_HW="$real_hw" ${module:+VCX_KMOD="$module"} modules \
	>"$bdir/build.log" 2>&1 || {
	cat "$bdir/build.log" >&2
	vcx_die "$srcdir build against $krel failed"
}
# Warnings are errors for our own code: the module must build clean on every kernel.
if grep -q 'warning:' "$bdir/build.log"; then
	cat "$bdir/build.log" >&2
	vcx_die "$srcdir build against $krel has warnings"
fi
# Copy only a changed module, so what depends on it (guest-modules.tar) stays up to date.
if [ -n "$module" ]; then
	ko="$bdir/$module.ko"
	[ -f "$ko" ] || vcx_die "$srcdir: $module.ko was not built"
else
	ko=$(find "$bdir" -maxdepth 1 -name '*.ko' ! -type l)
	[ "$(echo "$ko" | wc -w)" = 1 ] || vcx_die "$srcdir: expected one module, found: $ko"
fi
if [ -n "$out" ] && ! cmp -s "$ko" "$out"; then
	cp "$ko" "$out"
fi
