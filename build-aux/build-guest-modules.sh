#!/usr/bin/env bash
# Package this checkout's kernel modules for the guest with module indexes made on the host.
# depmod over the whole kernel takes half a minute under TCG but a second natively, so the
# host runs it over the image's module tree plus our modules and the guest only unpacks.
# Usage: build-guest-modules.sh IMAGE_OUTDIR OUTPUT_TAR MODULE.ko...
. "$(dirname "$0")/common.sh"

img=${1:?image output dir}
out=${2:?output tar}
shift 2
krel=$(cat "$img/kernel-release")
tree="$img/modules/lib/modules/$krel"
[ -d "$tree" ] || vcx_die "image module tree $tree missing: rebuild the image (./vcx build)"

# Up to date when the modules and the image's module tree are those of the last run: the
# image target is always stale, so this runs on every build, and packing costs 8 s.
stamp="$out.inputs"
inputs=$({
	echo "$krel"
	stat -c '%n %s %Y' "$tree" "$tree/modules.order" "$tree/modules.builtin"
	sha256sum "$@"
} 2>&1)
if [ -s "$out" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$inputs" ]; then
	exit 0
fi
rm -f "$stamp"

# Hard links (the work tree lives in the cache, on the image's file system): depmod walks
# real directories only.
mkdir -p "$VCX_CACHE/tmp"
work=$(mktemp -d "$VCX_CACHE/tmp/guest-modules.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lib/modules"
cp -al "$tree" "$work/lib/modules/$krel"
rm -f "$work/lib/modules/$krel"/modules.{dep,alias,symbols,softdep,weakdep,devname}* \
	"$work/lib/modules/$krel"/modules.builtin.alias.bin "$work/lib/modules/$krel"/modules.builtin.bin
mkdir -p "$work/lib/modules/$krel/updates"
# Without debug info (vcx.ko: 7.8 MB -> 0.3 MB): every boot reads the tar over 9p, a few
# MB/s under TCG. Oopses still resolve symbols (the symbol table stays); the unstripped
# modules are next to the tar in the build directory for gdb or decode_stacktrace.
for ko in "$@"; do
	strip --strip-debug -o "$work/lib/modules/$krel/updates/$(basename "$ko")" "$ko"
done
depmod -b "$work" "$krel" || vcx_die "depmod for the guest failed"
tar -C "$work/lib/modules/$krel" -cf "$out" updates $(cd "$work/lib/modules/$krel" && ls modules.*)
echo "$inputs" >"$stamp"
