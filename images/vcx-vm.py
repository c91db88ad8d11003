#!/usr/bin/env python3
"""Boot VMs with the vcx device and run a command in them (the engine of `./vcx vm`).

Each VM boots the pinned kernel with the image's ext4 root (snapshot=on), the checkout and
the build directory shared read-only over 9p, and a per-VM result directory shared
read-write. images/guest-init runs COMMAND there in the checkout directory; its output is
streamed (prefixed with [vmN] when there are several VMs) and kept in a serial log; the
runner exits with the command's status (the first non-zero one over all VMs), 124 on
timeout and 125 when a guest never reported a status.

While a command runs, the guest can ask the host to run monitor commands on its own QEMU
(images/vcx-hostcall writes a request file into the result directory; see hostcall_loop).

Links (docs/networking.md): with --vms 2, eth0 (virtio-net) of the two VMs shares one
link and the vcx ports share a second one (netdev id vcxnet in each QEMU), each a -netdev
stream on a unix socket (--link-transport dgram: UDP on 127.0.0.1, which drops frames); --peer virtio puts a plain virtio-net instead of vcx on VM 2's end of it. One
VM keeps the port without a netdev (loopback only) unless --vcx-netdev gives one. The
guest brings the port's interface up with 192.168.77.N/24 and fd77::N/64 (N = VM index +
1; --vcx-ip) before the command runs. --capture dumps the vcx link as VM 1 sees it
(--capture-peer: as VM 2 does).
"""
import argparse
import ipaddress
import json
import os
import resource
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

# The guest CPU under TCG: every feature TCG has, but the "fast string" ones. With ERMS
# and FSRM (and FSRS, FZRM, FSRC) the kernel copies and clears with REP MOVSB / STOSB,
# which TCG runs one byte per iteration; without them it takes its 8-byte loops.
# Measured in a guest: reading 256 MiB from tmpfs 0.88 s with them, 0.22 s without;
# /dev/zero 3.08 s against 0.33 s; the ulp-iser test 67 s against 59 s.
TCG_CPU = "max,erms=off,fsrm=off,fsrs=off,fzrm=off,fsrc=off"
FIRMWARE_DIRS = ["/usr/share/seabios", "/usr/lib/ipxe/qemu", "/usr/share/qemu"]

# The vcx link's netdev id in every QEMU (set_link, filter-dump and the tests name it).
VCX_NETDEV = "vcxnet"
# The capture filter's object id (/objects/vcxcap; its status property turns it on/off).
VCX_CAPTURE_ID = "vcxcap"
DEFAULT_VCX_IP = "192.168.77.0/24,fd77::/64"


def link_mac(index):
    """The MAC of VM INDEX's end of the vcx link (locally administered QEMU range, distinct
    from eth0's 52:54:00:12:34:NN and from the device's own default)."""
    return f"52:54:00:77:00:{index + 1:02x}"


def link_addresses(spec, index):
    """VM INDEX's addresses from SPEC ('none' or 'P[,P]'), as ADDR/LEN: for a prefix
    (192.168.77.0/24) host N = INDEX + 1; for an address in one (10.1.2.20/24), that
    address + INDEX, so VMs can join a network whose low addresses are taken."""
    if spec == "none":
        return []
    out = []
    for item in spec.split(","):
        iface = ipaddress.ip_interface(item.strip())
        net = iface.network
        base = iface.ip if iface.ip != net.network_address else net.network_address + 1
        addr = base + index
        if addr not in net or (net.version == 4 and net.prefixlen < 31 and
                               addr == net.broadcast_address):
            raise ValueError(f"no address {index + 1} in {net} from {item.strip()}")
        out.append(f"{addr}/{net.prefixlen}")
    return out


def kvm_usable():
    """KVM only where a real (VMX/SVM) KVM module is loaded: a paravirtual one is not."""
    return os.access("/dev/kvm", os.R_OK | os.W_OK) and (
        os.path.isdir("/sys/module/kvm_intel") or os.path.isdir("/sys/module/kvm_amd"))


class Qmp:
    """A minimal QMP client over the VM's unix socket."""

    def __init__(self, path, timeout=30):
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.connect(path)
                break
            except OSError:
                self.sock.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        self.file = self.sock.makefile("rw")
        self._read()  # greeting
        self.execute("qmp_capabilities")

    def _read(self):
        while True:
            line = self.file.readline()
            if not line:
                raise ConnectionError("QMP socket closed")
            msg = json.loads(line)
            if "event" not in msg:
                return msg

    def execute(self, cmd, args=None):
        req = {"execute": cmd}
        if args:
            req["arguments"] = args
        self.file.write(json.dumps(req) + "\n")
        self.file.flush()
        return self._read()

    def hmp(self, line):
        resp = self.execute("human-monitor-command", {"command-line": line})
        if "error" in resp:
            return "error: " + resp["error"].get("desc", "")
        return resp.get("return", "")

    def close(self):
        self.sock.close()


class Vm:
    def __init__(self, args, index, workdir):
        self.args = args
        self.index = index
        self.workdir = workdir
        self.result = os.path.join(workdir, f"vm{index}")
        os.makedirs(self.result)
        self.qmp_path = os.path.join(workdir, f"qmp{index}.sock")
        log_dir = args.log_dir or workdir
        os.makedirs(log_dir, exist_ok=True)
        self.serial_log = os.path.join(log_dir, f"vm{index}-serial.log")
        self.trace_log = os.path.join(log_dir, f"vm{index}-trace.log")
        self.shared = os.path.join(workdir, "shared")
        os.makedirs(self.shared, exist_ok=True)
        self.proc = None
        self.tail = []

    def qemu_argv(self, interactive):
        a = self.args
        b = a.build
        append = (f"console=ttyS0 rdinit=/init panic=-1 quiet loglevel=4 log_buf_len=4M "
                  f"vcxvm.src={a.src} vcxvm.build={b} vcxvm.index={self.index} vcxvm.vms={a.vms}")
        # Boot-time self-tests that only cost time under TCG, every boot of every test
        # (about 1.5 s of guest CPU; docs/testing.md, "Where the time goes"): the crypto
        # API's self-test of each algorithm it registers, the jitter entropy source's
        # timing test (its RNG is not used here), and SP800-108's one-off KDF self-test.
        append += " cryptomgr.notests initcall_blacklist=jent_mod_init,crypto_kdf108_init"
        if a.no_load:
            append += " vcxvm.noload"
        nic = self.link_nic()
        addrs = link_addresses(a.vcx_ip, self.index)
        if nic:
            # The guest finds the interface by name (the vcx driver's vcx0) or, for a
            # virtio-net peer, by its MAC, and brings it up with these addresses.
            append += " vcxvm.link=" + ("vcx0" if nic == "vcx" else link_mac(self.index))
            if addrs:
                append += " vcxvm.addr=" + ",".join(addrs)
        if not kvm_usable():
            # TCG's TSC is one counter for all vCPUs, derived from the host's: synchronized
            # and monotonic. The kernel's clocksource watchdog, reading the HPET from vCPU
            # threads the host preempts, still sees skew and marks it unstable, and the
            # guest falls back to HPET reads (MMIO under QEMU's BQL) for every clock read.
            append += " tsc=reliable"
            # The IO-APIC setup's check that the timer interrupt works (10 ticks within
            # a busy-wait of the guest's own) fails when the host preempts a TCG vCPU for
            # that long, as with four guests booting on 2 cores, and the kernel then
            # panics ("IO-APIC + timer doesn't work!"). The interrupt routing is QEMU's
            # and known to work; skip the check, as virtualized guests commonly do.
            append += " no_timer_check"
        if a.append:
            append += " " + a.append
        argv = [a.qemu, "-machine", "q35", "-nodefaults", "-no-user-config",
                "-display", "none", "-no-reboot", "-m", str(a.memory), "-smp", str(a.cpus)]
        if kvm_usable():
            argv += ["-accel", "kvm", "-cpu", "host"]
        else:
            # One TCG thread per vCPU (QEMU's default for x86 on a 64-bit host). It needs
            # the QEMU fix in build-aux/qemu-patches/ (docs/performance.md, "The MTTCG
            # abort"); single runs all vCPUs in one thread, as this runner did before.
            argv += ["-accel", "tcg,thread=" + a.tcg_thread, "-cpu", TCG_CPU]
        for d in FIRMWARE_DIRS:
            if os.path.isdir(d):
                argv += ["-L", d]
        argv += ["-kernel", os.path.join(b, "vmlinuz"),
                 "-initrd", os.path.join(b, "initrd.img"), "-append", append,
                 "-drive", f"file={os.path.join(b, 'root.ext4')},if=none,id=root,"
                           "format=raw,snapshot=on",
                 "-device", "virtio-blk-pci,drive=root"]
        shares = [("vcxsrc", a.src, True), ("vcxbuild", b, True),
                  ("vcxresult", self.result, False)]
        if a.vms > 1:
            # One directory both VMs write: where two-VM scripts meet (tests/guest/lib.sh).
            shares.append(("vcxshared", self.shared, False))
        for tag, path, ro in shares:
            argv += ["-fsdev", f"local,id={tag},path={path},security_model=none"
                               + (",readonly=on" if ro else ""),
                     "-device", f"virtio-9p-pci,fsdev={tag},mount_tag={tag}"]
        mac = f"52:54:00:12:34:{self.index + 1:02x}"
        if a.vms == 1:
            # restrict=on: the guest reaches nothing outside this VM.
            argv += ["-netdev", "user,id=net0,restrict=on"]
        else:
            argv += ["-netdev", self.link_netdev("net0", 0)]
        argv += ["-device", f"virtio-net-pci,netdev=net0,mac={mac},romfile="]
        argv += self.link_argv()
        argv += ["-qmp", f"unix:{self.qmp_path},server=on,wait=off"]
        if interactive:
            argv += ["-serial", "mon:stdio"]
        else:
            argv += ["-serial", "stdio"]
        if a.trace:
            # QEMU's log trace backend writes to the -D file, one per VM
            for pattern in a.trace.split(","):
                argv += ["-trace", pattern]
            argv += ["-D", self.trace_log, "-msg", "timestamp=on"]
        argv += a.qemu_arg
        return argv

    def link_netdev(self, netdev_id, link):
        """The -netdev of this VM's end of two-VM link LINK (0: eth0's, 1: the vcx link).

        stream (the default): a unix socket in the run directory, VM 1 listening and VM 2
        connecting (retried until VM 1 listens). A stream does not lose frames: a receiver
        that falls behind stops reading and the sender's frames wait in QEMU's queue.
        dgram: UDP on 127.0.0.1 (ports base + 2 * LINK and the next), as a real wire
        drops what a busy receiver cannot take: the host drops datagrams once a QEMU's
        socket buffer (net.core.rmem_default, 208 KiB on Debian) is full, about 50 frames
        of 4 KiB, which under TCG happens in bursts (UDP RcvbufErrors in /proc/net/snmp)."""
        a = self.args
        if a.link_transport == "dgram":
            base = a.base_port + 2 * link
            me, peer = base + self.index, base + (1 - self.index)
            return (f"dgram,id={netdev_id},local.type=inet,local.host=127.0.0.1,"
                    f"local.port={me},remote.type=inet,remote.host=127.0.0.1,"
                    f"remote.port={peer}")
        path = os.path.join(self.workdir, f"link{link}.sock")
        if self.index == 0:
            return f"stream,id={netdev_id},server=on,addr.type=unix,addr.path={path}"
        return (f"stream,id={netdev_id},server=off,addr.type=unix,addr.path={path},"
                "reconnect-ms=100")

    def link_nic(self):
        """What this VM has on the vcx link: 'vcx', 'virtio' or None (no vcx device)."""
        if self.args.no_vcx:
            return None
        return self.args.link_nics[self.index]

    def link_argv(self):
        """The vcx device (or the virtio-net peer) and the netdev of the vcx link."""
        a = self.args
        nic = self.link_nic()
        if nic is None:
            return []
        argv = []
        netdev = None
        if a.vms > 1:
            netdev = self.link_netdev(VCX_NETDEV, 1)
        elif a.vcx_netdev:
            netdev = f"{a.vcx_netdev},id={VCX_NETDEV}"
        if netdev:
            argv += ["-netdev", netdev]
            capture = a.capture if self.index == 0 else a.capture_peer
            if capture:
                # Frames in both directions as this VM's end sees them, before the NIC.
                argv += ["-object", f"filter-dump,id={VCX_CAPTURE_ID},netdev={VCX_NETDEV},"
                                    f"file={capture},maxlen={a.capture_maxlen}"]
        if nic == "virtio":
            return argv + ["-device", f"virtio-net-pci,netdev={VCX_NETDEV},"
                                      f"mac={link_mac(self.index)},romfile="]
        props = "vcx,id=vcx0"
        if netdev:
            props += f",netdev={VCX_NETDEV}"
            if "mac=" not in a.vcx_props:
                props += f",mac={link_mac(self.index)}"
        if a.vcx_props:
            props += "," + a.vcx_props
        return argv + ["-device", props]

    def start(self, command):
        with open(os.path.join(self.result, "command"), "w") as f:
            f.write(command)
        self.proc = subprocess.Popen(self.qemu_argv(False), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        if self.args.pid_file:
            with open(self.args.pid_file, "w") as f:
                f.write(f"{self.proc.pid}\n")
        self.reader = threading.Thread(target=self.pump, daemon=True)
        self.reader.start()
        self.hostcall = threading.Thread(target=self.hostcall_loop, daemon=True)
        self.hostcall.start()

    def pump(self):
        prefix = f"[vm{self.index}] " if self.args.vms > 1 else ""
        with open(self.serial_log, "wb") as log:
            for raw in iter(self.proc.stdout.readline, b""):
                log.write(raw)
                log.flush()
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                self.tail = (self.tail + [line])[-60:]
                if not self.args.quiet:
                    sys.stdout.write(prefix + line + "\n")
                    sys.stdout.flush()

    def hostcall_loop(self):
        """Serve monitor requests from the guest: a file hostcall-N.req holding
        'hmp LINE' or 'qmp JSON' is answered by hostcall-N.rsp (written atomically)."""
        qmp = None
        while self.proc.poll() is None:
            try:
                reqs = sorted(f for f in os.listdir(self.result) if f.endswith(".req"))
            except OSError:
                reqs = []
            for name in reqs:
                path = os.path.join(self.result, name)
                with open(path) as f:
                    req = f.read().strip()
                os.unlink(path)
                try:
                    if qmp is None:
                        qmp = Qmp(self.qmp_path)
                    kind, _, body = req.partition(" ")
                    if kind == "hmp":
                        rsp = qmp.hmp(body)
                    elif kind == "qmp":
                        msg = json.loads(body)
                        rsp = json.dumps(qmp.execute(msg["execute"], msg.get("arguments")))
                    else:
                        rsp = f"error: unknown hostcall kind {kind!r}"
                except Exception as e:  # report, never kill the run
                    rsp = f"error: {e}"
                tmp = path[:-4] + ".tmp"
                with open(tmp, "w") as f:
                    f.write(rsp)
                os.rename(tmp, path[:-4] + ".rsp")
            time.sleep(0.05)
        if qmp:
            qmp.close()

    def status(self):
        try:
            with open(os.path.join(self.result, "status")) as f:
                return int(f.read().strip())
        except (OSError, ValueError):
            return None

    def kill(self):
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--qemu", required=True)
    p.add_argument("--build", required=True, help="build directory with the image and outputs")
    p.add_argument("--src", required=True, help="checkout to share into the guest")
    p.add_argument("--vms", type=int, default=1)
    p.add_argument("--memory", type=int, default=1024, help="MiB per VM")
    p.add_argument("--cpus", type=int, default=2)
    p.add_argument("--timeout", type=int, default=900, help="seconds for the whole run")
    p.add_argument("--log-dir", help="keep serial logs here")
    p.add_argument("--vcx-props", default="", help="extra -device vcx properties")
    p.add_argument("--append", default="", help="extra kernel parameters")
    p.add_argument("--no-load", action="store_true", help="do not load vcx.ko at boot")
    p.add_argument("--quiet", action="store_true", help="do not stream guest output")
    p.add_argument("--no-vcx", action="store_true",
                   help="boot without -device vcx (a baseline for the device's own cost)")
    p.add_argument("--pid-file", help="write QEMU's pid here (one VM), e.g. to read its CPU time")
    p.add_argument("--qemu-arg", action="append", default=[], help="extra QEMU argument")
    p.add_argument("--trace", default="",
                   help="QEMU trace events to record, comma-separated patterns (vcx_roce_req_*,"
                        "vcx_roce_rx_drop): each VM's go to vmN-trace.log in the log directory")
    p.add_argument("--tcg-thread", choices=("single", "multi"), default="multi",
                   help="TCG threading without KVM (multi: one thread per vCPU, the "
                        "default; single: all vCPUs in one thread)")
    p.add_argument("--link-transport", choices=("stream", "dgram"), default="stream",
                   help="what joins the two VMs' links (--vms 2): stream, a unix socket "
                        "that loses no frames (default), or dgram, UDP on 127.0.0.1 that "
                        "drops frames when a receiver falls behind")
    p.add_argument("--base-port", type=int, default=0,
                   help="first of the 4 UDP ports of --vms 2 --link-transport dgram (eth0 "
                        "link, then the vcx link)")
    p.add_argument("--peer", choices=("vcx", "virtio"), default="vcx",
                   help="what VM 2 has on the vcx link: the vcx device (default) or a "
                        "plain virtio-net and no vcx device")
    p.add_argument("--link-nics", default="",
                   help="per VM, comma-separated, vcx or virtio on the vcx link (e.g. "
                        "virtio,virtio); --peer virtio is vcx,virtio")
    p.add_argument("--vcx-netdev", default="",
                   help="one VM: attach the port to -netdev SPEC,id=vcxnet (e.g. user, or "
                        "tap,ifname=vcxtap0,script=no,downscript=no); default: none "
                        "(loopback only)")
    p.add_argument("--vcx-ip", default=DEFAULT_VCX_IP,
                   help="the port's interface addresses, comma-separated: a prefix gives "
                        "VM N its host N, an address gives VM N that address + N - 1 "
                        f"(default {DEFAULT_VCX_IP}), or none")
    p.add_argument("--capture", default="",
                   help="pcap of the vcx link at VM 1 (QEMU filter-dump; needs a netdev: "
                        "--vms 2 or --vcx-netdev)")
    p.add_argument("--capture-peer", default="",
                   help="pcap of the vcx link at VM 2 (--vms 2): what VM 2's end sends and "
                        "receives, frames the link dropped on the way to it absent")
    p.add_argument("--capture-maxlen", type=int, default=65536,
                   help="bytes kept of each captured frame (filter-dump maxlen)")
    p.add_argument("--dry-run", action="store_true",
                   help="print each VM's QEMU command line (one per line) and exit")
    p.add_argument("command", nargs=argparse.REMAINDER)
    a = p.parse_args()
    a.src, a.build = os.path.realpath(a.src), os.path.realpath(a.build)
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if a.vms < 1 or a.vms > 2:
        sys.exit("vcx vm: --vms must be 1 or 2 (a link of more VMs needs a bridge, "
                 "which vcx does not provide yet)")
    if a.no_vcx and a.vcx_props:
        sys.exit("vcx vm: --vcx-props needs the device (not --no-vcx)")
    if a.pid_file and a.vms != 1:
        sys.exit("vcx vm: --pid-file needs one VM")
    if a.peer != "vcx" and a.vms != 2:
        sys.exit("vcx vm: --peer needs --vms 2")
    nics = [n.strip() for n in a.link_nics.split(",")] if a.link_nics else []
    if nics and (len(nics) != a.vms or any(n not in ("vcx", "virtio") for n in nics)):
        sys.exit(f"vcx vm: --link-nics needs {a.vms} of vcx|virtio")
    if nics and a.peer != "vcx":
        sys.exit("vcx vm: --link-nics and --peer together")
    a.link_nics = nics or (["vcx", a.peer] if a.vms == 2 else ["vcx"])
    if a.vcx_netdev and a.vms != 1:
        sys.exit("vcx vm: --vcx-netdev is for one VM (--vms 2 joins the ports on a link "
                 "of their own)")
    if any(f.startswith("id=") for f in a.vcx_netdev.split(",")):
        sys.exit("vcx vm: --vcx-netdev: the runner names the netdev (id=vcxnet)")
    if a.vms == 1 and a.link_nics[0] == "virtio" and not a.vcx_netdev:
        sys.exit("vcx vm: --link-nics virtio on one VM needs --vcx-netdev")
    if a.capture:
        if a.no_vcx or not (a.vms == 2 or a.vcx_netdev):
            sys.exit("vcx vm: --capture needs a vcx link (--vms 2 or --vcx-netdev)")
        a.capture = os.path.abspath(a.capture)
        if "," in a.capture:
            sys.exit("vcx vm: --capture: no comma in the file name (QEMU option syntax)")
    if a.capture_peer:
        if a.no_vcx or a.vms != 2:
            sys.exit("vcx vm: --capture-peer needs --vms 2")
        a.capture_peer = os.path.abspath(a.capture_peer)
        if "," in a.capture_peer:
            sys.exit("vcx vm: --capture-peer: no comma in the file name (QEMU option syntax)")
    try:
        for i in range(a.vms):
            link_addresses(a.vcx_ip, i)
    except ValueError as e:
        sys.exit(f"vcx vm: --vcx-ip {a.vcx_ip}: {e}")
    if a.vms == 2 and a.link_transport == "dgram" and not a.base_port:
        # Four ports: eth0's link (base, base + 1), the vcx link (base + 2, base + 3).
        a.base_port = 20000 + (os.getpid() % 10000) * 4
    for f in ("vmlinuz", "initrd.img", "root.ext4"):
        if not os.path.exists(os.path.join(a.build, f)):
            sys.exit(f"vcx vm: {f} missing in {a.build}: run ./vcx build")

    workdir = tempfile.mkdtemp(prefix="vcx-vm-")
    rc = 125
    try:
        vms = [Vm(a, i, workdir) for i in range(a.vms)]
        if a.dry_run:
            for vm in vms:
                print(" ".join(shlex.quote(x) for x in vm.qemu_argv(not cmd)))
            rc = 0
            return rc
        if not cmd:
            if a.vms != 1 or not sys.stdin.isatty():
                sys.exit("vcx vm: an interactive shell needs one VM and a terminal")
            print("vcx vm: interactive shell; Ctrl-A x quits QEMU", file=sys.stderr)
            return subprocess.call(vms[0].qemu_argv(True))
        script = "set -o pipefail\n" + " ".join(shlex.quote(c) for c in cmd) + "\n"
        started = time.monotonic()
        for vm in vms:
            vm.start(script)
        deadline = started + a.timeout
        timed_out = False
        told = set()
        while any(vm.proc.poll() is None for vm in vms):
            if time.monotonic() > deadline:
                timed_out = True
                break
            for vm in vms:
                if vm.index not in told and vm.proc.poll() is not None and vm.status() is None:
                    # QEMU gone without the guest's status (it failed to start, or the
                    # guest crashed): a script in the other VM waiting for this one
                    # (vm_wait, tests/guest/lib.sh) fails at once instead of timing out.
                    told.add(vm.index)
                    if a.vms > 1:
                        with open(os.path.join(vm.shared, f"failed.vm{vm.index}"), "w") as f:
                            f.write(f"vm{vm.index}'s QEMU exited (status {vm.proc.returncode}) "
                                    "before its guest reported one\n")
            time.sleep(0.2)
        for vm in vms:
            vm.kill()
            vm.reader.join(timeout=5)
        if a.log_dir:
            # The host CPU the run's QEMUs used (all reaped by now), against its wall time:
            # which tests cost the suite most (docs/testing.md, "Where the time goes").
            ru = resource.getrusage(resource.RUSAGE_CHILDREN)
            with open(os.path.join(a.log_dir, "host-cpu.txt"), "w") as f:
                f.write(f"cpu_s {ru.ru_utime + ru.ru_stime:.1f} "
                        f"wall_s {time.monotonic() - started:.1f} vms {a.vms}\n")
        rc = 0
        for vm in vms:
            st = vm.status()
            if timed_out and st is None:
                why, st = f"timed out after {a.timeout}s", 124
            elif st is None:
                why, st = "the guest reported no exit status", 125
            elif st and a.quiet:
                why = f"command exited with status {st}"
            else:
                why = None
            if why:
                sys.stderr.write(f"vcx vm: vm{vm.index}: {why}; serial log {vm.serial_log}; "
                                 "last lines:\n")
                for line in vm.tail[-40:]:
                    sys.stderr.write(f"  | {line}\n")
            if st and not rc:
                rc = st
        return rc
    finally:
        # Result directories (and serial logs, without --log-dir) are kept on failure.
        if rc == 0 or a.log_dir:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            sys.stderr.write(f"vcx vm: run directory kept: {workdir}\n")


if __name__ == "__main__":
    sys.exit(main())
