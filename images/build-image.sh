#!/usr/bin/env bash
# Build the guest image: Debian trixie (debootstrap) with the RDMA userland, the pinned
# 6.12 kernel and its modules, a small busybox initramfs, and an ext4 root file system
# that VMs open with snapshot=on (so every boot starts from the same state).
#
# Output (in $VCX_CACHE/image/<key>/, key = hash of the recipe and pins):
#   vmlinuz, initrd.img, root.ext4, modules/ (the kernel's module tree, for host depmod)
# Usage: build-image.sh OUTPUT_DIR   (OUTPUT_DIR gets symlinks to the three files)
VCX_SRC="$(cd "$(dirname "$0")/.." && pwd)"
. "$VCX_SRC/build-aux/common.sh"

out=${1:?usage: build-image.sh OUTPUT_DIR}
krel=$VCX_KERNEL_RELEASE

# Everything that changes the image is in the key; editing guest-init does not (it is
# read from the checkout over 9p at boot).
key=$( (cat "$VCX_SRC/build-aux/pins.sh" "$0" "$VCX_SRC/images/initramfs-init") | sha256sum | cut -c1-16)
dir="$VCX_CACHE/image/$key"

if ! [ -e "$dir/.complete" ]; then
	"$VCX_SRC/build-aux/fetch.sh" kernel
	vcx_lock image
fi
if ! [ -e "$dir/.complete" ]; then
	rm -rf "$dir"
	mkdir -p "$dir"
	rootfs="$dir/rootfs"
	mirror=$(vcx_debian_mirror)
	pkgs=${VCX_GUEST_PACKAGES// /,}
	vcx_log "debootstrap $VCX_GUEST_SUITE ($pkgs) from $mirror"
	debootstrap --variant=minbase --include="$pkgs" "$VCX_GUEST_SUITE" "$rootfs" "$mirror" \
		>"$dir/debootstrap.log" 2>&1 || {
		tail -20 "$dir/debootstrap.log" >&2
		vcx_die "debootstrap of $VCX_GUEST_SUITE failed (log: $dir/debootstrap.log); a package named there was refused"
	}
	rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*

	vcx_log "installing kernel $krel into the image"
	dpkg-deb -x "$VCX_DL/${VCX_KERNEL_IMAGE_PKG}_${VCX_KERNEL_IMAGE_VERSION}_amd64.deb" "$rootfs"
	depmod -b "$rootfs" "$krel"
	cp "$rootfs/boot/vmlinuz-$krel" "$dir/vmlinuz"

	# Guest identity and conveniences; the checkout supplies the init (images/guest-init).
	echo vcx-guest >"$rootfs/etc/hostname"
	printf '127.0.0.1 localhost\n127.0.1.1 vcx-guest\n' >"$rootfs/etc/hosts"
	sed -i 's|^root:[^:]*:|root::|' "$rootfs/etc/shadow"

	vcx_log "building the initramfs"
	ird="$dir/initramfs"
	mkdir -p "$ird"/{bin,dev,proc,sys,newroot,lib/modules}
	cp /bin/busybox "$ird/bin/busybox"
	for applet in sh mount umount mkdir insmod switch_root sleep cat echo ls mknod; do
		ln -s busybox "$ird/bin/$applet"
	done
	# Block device, root file system and 9p modules, in dependency order, uncompressed
	# (busybox insmod does not read .ko.xz).
	: >"$ird/lib/modules/load-order"
	for m in virtio_blk ext4 9p 9pnet_virtio; do
		modprobe -d "$rootfs" -S "$krel" --show-depends "$m"
	done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }' | while read -r ko; do
		base=$(basename "$ko" .xz)
		xz -dc "$ko" >"$ird/lib/modules/$base"
		echo "$base" >>"$ird/lib/modules/load-order"
	done
	install -m 0755 "$VCX_SRC/images/initramfs-init" "$ird/init"
	(cd "$ird" && find . | cpio -o -H newc --quiet | gzip -1) >"$dir/initrd.img"

	vcx_log "creating root.ext4"
	size_mb=$(( $(du -sm "$rootfs" | cut -f1) + 768 ))
	mkfs.ext4 -q -L vcxroot -d "$rootfs" "$dir/root.ext4" "${size_mb}M" ||
		vcx_die "mkfs.ext4 -d failed"
	# Keep the kernel's module tree: the host runs depmod over it plus this checkout's
	# modules (build-aux/build-guest-modules.sh), far faster than depmod under TCG.
	mkdir -p "$dir/modules/lib/modules"
	cp -a "$rootfs/lib/modules/$krel" "$dir/modules/lib/modules/"
	rm -rf "$rootfs" "$ird"
	touch "$dir/.complete"
fi
mkdir -p "$out"
for f in vmlinuz initrd.img root.ext4 modules; do
	ln -sfn "$dir/$f" "$out/$f"
done
echo "$krel" >"$out/kernel-release"
