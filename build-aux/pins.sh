# vcx pinned dependencies: sourced by the build-aux scripts.
# Every artefact vcx downloads comes from Debian's archive through apt and is checked
# against the sha256 recorded here. To move a pin, change the version and its sha256 together
# (docs/building.md, "Changing a pin").

# QEMU source (trixie deb-src); the .debian.tar.xz is not needed, only the upstream tree.
VCX_QEMU_SRC_VERSION="1:10.0.13+ds-0+deb13u1"
VCX_QEMU_ORIG="qemu_10.0.13+ds.orig.tar.xz"
VCX_QEMU_ORIG_SHA256="6a0888e806c2ffc0c5f0733e974f9aea55491950d3c47c98669c8b236dde59ae"
VCX_QEMU_DIR="qemu-10.0.13"

# rdma-core source (trixie deb-src). The mirror lacks rdma-core_56.1-1.dsc, so the orig
# tarball is taken on its own and verified here.
VCX_RDMA_CORE_SRC_VERSION="56.1-1"
VCX_RDMA_CORE_ORIG="rdma-core_56.1.orig.tar.gz"
VCX_RDMA_CORE_ORIG_SHA256="63ce7f2baa7242c2dbc76375dac957c420187dd27f8c5e148efc07971ee522a8"
VCX_RDMA_CORE_DIR="rdma-core-56.1"

# Guest kernel (bookworm-backports) and the headers the module builds against.
VCX_KERNEL_RELEASE="6.12.95+deb12-amd64"
VCX_KERNEL_IMAGE_PKG="linux-image-6.12.95+deb12-amd64"
VCX_KERNEL_IMAGE_VERSION="6.12.95-1~bpo12+1"
VCX_KERNEL_IMAGE_SHA256="5e524b782be67cb0d6a2e7b51816a2ac519e573ef7324b9a63a4124365653ecc"
VCX_KERNEL_HEADERS_PKG="linux-headers-6.12.95+deb12-amd64"
# Compile-only second kernel: bookworm's 6.1.
VCX_KERNEL61_RELEASE="6.1.0-50-amd64"
VCX_KERNEL61_HEADERS_PKG="linux-headers-6.1.0-50-amd64"

# Guest userland: Debian trixie by debootstrap.
VCX_GUEST_SUITE="trixie"
VCX_GUEST_PACKAGES="ibverbs-utils rdmacm-utils perftest python3-pyverbs iproute2 kmod nvme-cli fio pciutils procps util-linux ibverbs-providers iputils-ping nfs-kernel-server targetcli-fb open-iscsi srptools iperf3 ethtool tcpdump"
