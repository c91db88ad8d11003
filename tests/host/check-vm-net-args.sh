#!/usr/bin/env bash
# The runner's network wiring (docs/networking.md), from its QEMU command lines
# (vcx-vm.py --dry-run, no boot): one VM keeps the port without a netdev; --vms 2 joins the
# two vcx ports on one stream link (a unix socket vm0 listens on; --link-transport dgram:
# UDP ports crossed), distinct MACs, beside eth0's own link;
# --peer virtio puts a virtio-net and no vcx device in VM 2; --capture adds filter-dump on
# VM 1 only; the guests are told their interface and addresses (vcxvm.link, vcxvm.addr),
# --vcx-ip changes or drops them; bad combinations are refused.
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
vm() { python3 "$VCX_SRC/images/vcx-vm.py" --qemu "$VCX_QEMU" --build "$VCX_BUILD" \
	--src "$VCX_SRC" --dry-run "$@" -- true; }
has() { grep -q -- "$2" <<<"$1" || fail "$3: no '$2' in: $1"; }
hasnt() { ! grep -q -- "$2" <<<"$1" || fail "$3: unexpected '$2' in: $1"; }

one=$(vm)
has "$one" "-device vcx,id=vcx0 " "one VM"
hasnt "$one" "netdev=vcxnet" "one VM"
has "$one" "vcxvm.link=vcx0 vcxvm.addr=192.168.77.1/24,fd77::1/64" "one VM"

out=$(vm --vms 2 --capture /tmp/x.pcap)
[ "$(wc -l <<<"$out")" = 2 ] || fail "--vms 2: not two command lines"
a=$(sed -n 1p <<<"$out") b=$(sed -n 2p <<<"$out")
# stream links: vm0 listens on a unix socket of the run directory, vm1 connects to it.
sock() { grep -o "id=$2,server=$3,addr.type=unix,addr.path=[^ ,]*/link$4.sock" <<<"$1" |
	sed 's/.*addr.path=//'; }
e0=$(sock "$a" net0 on 0) e1=$(sock "$b" net0 off 0)
v0=$(sock "$a" vcxnet on 1) v1=$(sock "$b" vcxnet off 1)
[ -n "$e0" ] && [ "$e0" = "$e1" ] || fail "eth0 link: not one socket, vm0 listening: $a / $b"
[ -n "$v0" ] && [ "$v0" = "$v1" ] || fail "vcx link: not one socket, vm0 listening: $a / $b"
[ "$e0" != "$v0" ] || fail "eth0 and the vcx link share a socket"
has "$b" "link0.sock,reconnect-ms=100" "vm1 eth0 link retries until vm0 listens"
has "$b" "link1.sock,reconnect-ms=100" "vm1 vcx link retries until vm0 listens"
hasnt "$a" "dgram" "stream links"
out=$(vm --vms 2 --link-transport dgram --base-port 31000)
da=$(sed -n 1p <<<"$out") db=$(sed -n 2p <<<"$out")
has "$da" "dgram,id=net0,local.type=inet,local.host=127.0.0.1,local.port=31000,remote.type=inet,remote.host=127.0.0.1,remote.port=31001" "dgram: vm0 eth0 link"
has "$db" "dgram,id=net0,local.type=inet,local.host=127.0.0.1,local.port=31001,remote.type=inet,remote.host=127.0.0.1,remote.port=31000" "dgram: vm1 eth0 link"
has "$da" "dgram,id=vcxnet,local.type=inet,local.host=127.0.0.1,local.port=31002,remote.type=inet,remote.host=127.0.0.1,remote.port=31003" "dgram: vm0 vcx link"
has "$db" "dgram,id=vcxnet,local.type=inet,local.host=127.0.0.1,local.port=31003,remote.type=inet,remote.host=127.0.0.1,remote.port=31002" "dgram: vm1 vcx link"
has "$a" "-device vcx,id=vcx0,netdev=vcxnet,mac=52:54:00:77:00:01 " "vm0 vcx"
has "$b" "-device vcx,id=vcx0,netdev=vcxnet,mac=52:54:00:77:00:02 " "vm1 vcx"
has "$a" "-object filter-dump,id=vcxcap,netdev=vcxnet,file=/tmp/x.pcap" "vm0 capture"
hasnt "$b" "filter-dump" "vm1 capture"
out=$(vm --vms 2 --capture /tmp/x.pcap --capture-peer /tmp/y.pcap)
has "$(sed -n 1p <<<"$out")" "-object filter-dump,id=vcxcap,netdev=vcxnet,file=/tmp/x.pcap" "--capture-peer: vm0"
has "$(sed -n 2p <<<"$out")" "-object filter-dump,id=vcxcap,netdev=vcxnet,file=/tmp/y.pcap" "--capture-peer: vm1"
has "$a" "vcxvm.addr=192.168.77.1/24,fd77::1/64" "vm0 addresses"
has "$b" "vcxvm.addr=192.168.77.2/24,fd77::2/64" "vm1 addresses"
has "$a" "mount_tag=vcxshared" "vm0 shared directory"

out=$(vm --vms 2 --peer virtio --vcx-ip 10.9.0.0/16)
a=$(sed -n 1p <<<"$out") b=$(sed -n 2p <<<"$out")
has "$a" "-device vcx,id=vcx0,netdev=vcxnet" "peer: vm0"
hasnt "$b" "-device vcx" "peer: vm1"
has "$b" "-device virtio-net-pci,netdev=vcxnet,mac=52:54:00:77:00:02,romfile=" "peer: vm1"
has "$b" "vcxvm.link=52:54:00:77:00:02 vcxvm.addr=10.9.0.2/16 " "peer: vm1 addresses"

out=$(vm --vms 2 --vcx-ip 10.1.2.20/24,fd00:1::20/64)
has "$(sed -n 2p <<<"$out")" "vcxvm.addr=10.1.2.21/24,fd00:1::21/64 " "--vcx-ip with addresses: vm1"

none=$(vm --vcx-ip none --vcx-netdev user,restrict=on)
hasnt "$none" "vcxvm.addr" "--vcx-ip none"
has "$none" "-netdev user,restrict=on,id=vcxnet" "--vcx-netdev"
has "$none" "-device vcx,id=vcx0,netdev=vcxnet,mac=52:54:00:77:00:01" "--vcx-netdev"

for bad in "--peer virtio" "--capture /tmp/x.pcap" "--vms 2 --vcx-netdev user" \
	"--vms 2 --vcx-ip 10.0.0.0/31" "--vcx-ip 10.0.0.300/24" "--vms 2 --link-nics vcx" "--capture-peer /tmp/y.pcap" "--vms 2 --link-transport udp"; do
	# shellcheck disable=SC2086
	! vm $bad >/dev/null 2>&1 || fail "accepted: $bad"
done
echo "PASS: runner network wiring (one VM, two VMs, virtio peer, capture, addresses)"
