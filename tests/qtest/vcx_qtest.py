#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Drive the vcx device without a guest, over QEMU's qtest protocol.

QEMU runs with -accel qtest; this module plays the guest: PCI config cycles through
0xcf8/0xcfc, BAR0 and MSI-X programming, MMIO, and guest RAM reads and writes. MSI-X
vectors are pointed at guest RAM, so an interrupt shows up as a memory write the test can
read back. On top sit the command queue helpers (entries, mailbox chains, completion),
EQ helpers and a minimal QMP client for qom-get/qom-set/system_reset.

Layouts are read from include/vcx/prm-cmd.h and prm-iseg.h (VCX_FLD(bit, width) and
plain integer defines) so the tests and the device share names; tests still assert
literal expected values (statuses, syndromes, offsets) so a wrong header cannot hide.

Environment: VCX_QEMU is the QEMU binary (default /tmp/qemu-vcx); VCX_FIRMWARE_DIRS a
colon-separated list of -L directories (default /usr/share/seabios:/usr/share/qemu).
With a sanitizer build of QEMU (suite device-sanitizers), every QEMU's stderr is searched
for ASan, LeakSanitizer and UBSan reports when it is closed; Tap.done() fails the test
and prints them if there was one.
"""
import base64
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# ---------------------------------------------------------------------------------------
# PRM header constants and field accessors (same convention as include/vcx/prm.h)
# ---------------------------------------------------------------------------------------

class Fld:
    def __init__(self, bit, width):
        self.bit, self.width = bit, width

    @property
    def byte(self):
        return self.bit // 8


def load_header_defines(names, base=None):
    """#define VCX_* values and VCX_FLD fields of include/vcx/<names>, on top of base."""
    defs = dict(base or {})
    for name in names:
        text = open(os.path.join(ROOT, "include", "vcx", name)).read()
        for m in re.finditer(r"^#define\s+(VCX_\w+)\s+(.+?)\s*(?:/\*.*)?$", text, re.M):
            key, val = m.group(1), m.group(2).strip()
            f = re.fullmatch(r"VCX_FLD\((0x[0-9a-fA-F]+|\d+),\s*(0x[0-9a-fA-F]+|\d+)\)", val)
            if f:
                defs[key] = Fld(int(f.group(1), 0), int(f.group(2), 0))
                continue
            expr = re.sub(r"\b(0x[0-9a-fA-F]+|\d+)u\b", r"\1", val)
            try:
                defs[key] = int(eval(expr, {}, dict((k, v) for k, v in defs.items()
                                                    if isinstance(v, int))))
            except Exception:
                pass
    return defs


H = load_header_defines(("prm-iseg.h", "prm-cmd.h"))


def get(buf, f, off=0):
    """Read field f (Fld) from buf (bytes-like) whose structure starts at byte off."""
    if f.width == 64:
        return struct.unpack_from(">Q", buf, off + f.byte)[0]
    dw = struct.unpack_from(">I", buf, off + (f.bit // 32) * 4)[0]
    shift = 32 - (f.bit % 32) - f.width
    return (dw >> shift) & ((1 << f.width) - 1)


def put(buf, f, val, off=0):
    """Write field f into bytearray buf (structure at byte off)."""
    if f.width == 64:
        struct.pack_into(">Q", buf, off + f.byte, val)
        return
    pos = off + (f.bit // 32) * 4
    dw = struct.unpack_from(">I", buf, pos)[0]
    shift = 32 - (f.bit % 32) - f.width
    mask = ((1 << f.width) - 1) << shift
    dw = (dw & ~mask) | ((val << shift) & mask)
    struct.pack_into(">I", buf, pos, dw)


def xor8(data):
    x = 0
    for b in data:
        x ^= b
    return x


# ---------------------------------------------------------------------------------------
# TAP output
# ---------------------------------------------------------------------------------------

class Tap:
    """TAP producer: one line per ok()/eq() call, the plan at the end; exit 1 on failure."""

    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, desc, detail=None):
        self.n += 1
        line = "%s %d - %s" % ("ok" if cond else "not ok", self.n, desc)
        print(line, flush=True)
        if not cond:
            self.failed += 1
            if detail:
                print("# " + str(detail), flush=True)
        return cond

    def eq(self, got, want, desc):
        return self.ok(got == want, desc, "got %r, want %r" % (got, want))

    def done(self):
        # QEMUs the test left open are closed here, so their reports count too.
        for q in list(_open_qemus):
            q.close()
        if SANITIZER_REPORTS or _checked_qemus:
            self.ok(not SANITIZER_REPORTS,
                    "no sanitizer report from %d QEMU run(s)" % _checked_qemus)
            for report in SANITIZER_REPORTS:
                for line in report.splitlines()[:80]:
                    print("# " + line, flush=True)
        print("1..%d" % self.n, flush=True)
        sys.exit(1 if self.failed else 0)


# ---------------------------------------------------------------------------------------
# qtest and QMP transport
# ---------------------------------------------------------------------------------------

def _die_with_parent():
    """QEMU gets SIGKILL if the test process dies (Linux PR_SET_PDEATHSIG)."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, 9)
    except Exception:
        pass


# Sanitizer reports found in the stderr of closed QEMUs, and how many were searched (only
# when the binary is a sanitizer build, told by ASAN_OPTIONS or UBSAN_OPTIONS being set).
SANITIZER_REPORTS = []
_checked_qemus = 0
_open_qemus = []
_SANITIZER_RE = re.compile(r"ERROR: (Address|Leak)Sanitizer|runtime error: |"
                           r"SUMMARY: UndefinedBehaviorSanitizer")


def _collect_sanitizer_report(stderr_path):
    global _checked_qemus
    if not (os.environ.get("ASAN_OPTIONS") or os.environ.get("UBSAN_OPTIONS")):
        return
    _checked_qemus += 1
    try:
        text = open(stderr_path, errors="replace").read()
    except OSError:
        return
    m = _SANITIZER_RE.search(text)
    if m:
        # From the line the report starts on; ASan's reports begin with '=='.
        start = text.rfind("\n", 0, m.start()) + 1
        SANITIZER_REPORTS.append(text[start:start + 16000])


class QTest:
    """A QEMU process under -accel qtest, with its qtest and QMP sockets."""

    def __init__(self, device_args="", extra=(), mem="512M", trace=None, devices=None):
        """devices: the -device arguments that place the vcx (default: vcx0 at 00:03.0 on
        the root complex, with device_args); given, they replace that default."""
        self.dir = tempfile.mkdtemp(prefix="vcx-qtest-")
        qsock = os.path.join(self.dir, "qtest.sock")
        msock = os.path.join(self.dir, "qmp.sock")
        self.log_path = os.path.join(self.dir, "qemu.log")
        ls_q = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        ls_q.bind(qsock)
        ls_q.listen(1)
        ls_m = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        ls_m.bind(msock)
        ls_m.listen(1)
        qemu = os.environ.get("VCX_QEMU", "/tmp/qemu-vcx")
        args = [qemu, "-machine", "q35", "-accel", "qtest", "-m", mem,
                "-display", "none", "-nodefaults", "-nographic", "-monitor", "none",
                "-serial", "none", "-qtest", "unix:" + qsock, "-qtest-log", "/dev/null", "-qmp", "unix:" + msock,
                "-D", self.log_path, "-d", "guest_errors,unimp"]
        if devices is None:
            devices = ["-device", "vcx,id=vcx0,addr=03.0" +
                       ("," + device_args if device_args else "")]
        args += list(devices)
        # The machine loads its BIOS into ROM even though qtest never runs it.
        for d in os.environ.get("VCX_FIRMWARE_DIRS",
                                "/usr/share/seabios:/usr/share/qemu").split(":"):
            if d and os.path.isdir(d):
                args += ["-L", d]
        if trace:
            args += ["--trace", trace]
        args += list(extra)
        self.stderr_path = os.path.join(self.dir, "stderr.log")
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL,
                                     stderr=open(self.stderr_path, "wb"),
                                     preexec_fn=_die_with_parent)
        _open_qemus.append(self)
        ls_q.settimeout(30)
        ls_m.settimeout(30)
        try:
            self.qs, _ = ls_q.accept()
            self.ms, _ = ls_m.accept()
        except socket.timeout:
            err = open(self.stderr_path).read()
            raise RuntimeError("QEMU did not connect: " + err)
        ls_q.close()
        ls_m.close()
        self.qr = self.qs.makefile("rb")
        self.qw = self.qs.makefile("wb", buffering=0)
        self.mr = self.ms.makefile("rb")
        self.mw = self.ms.makefile("wb", buffering=0)
        self._qmp_read()  # greeting
        self.qmp("qmp_capabilities")

    # qtest -----------------------------------------------------------------------------
    def cmd(self, line):
        self.qw.write((line + "\n").encode())
        while True:
            resp = self.qr.readline().decode().strip()
            if not resp:
                raise RuntimeError("qtest connection closed (QEMU died?) after: " + line)
            if resp.startswith("IRQ"):
                continue
            if not resp.startswith("OK"):
                raise RuntimeError("qtest %r -> %r" % (line, resp))
            return resp[3:].strip()

    def outl(self, port, val):
        self.cmd("outl 0x%x 0x%x" % (port, val))

    def inl(self, port):
        return int(self.cmd("inl 0x%x" % port), 0)

    def readl(self, addr):
        return int(self.cmd("readl 0x%x" % addr), 0)

    def readb(self, addr):
        return int(self.cmd("readb 0x%x" % addr), 0)

    def readw(self, addr):
        return int(self.cmd("readw 0x%x" % addr), 0)

    def writel(self, addr, val):
        self.cmd("writel 0x%x 0x%x" % (addr, val))

    def writeq(self, addr, val):
        self.cmd("writeq 0x%x 0x%x" % (addr, val))

    def writeb(self, addr, val):
        self.cmd("writeb 0x%x 0x%x" % (addr, val))

    def memread(self, addr, size):
        return base64.b64decode(self.cmd("b64read 0x%x 0x%x" % (addr, size)))

    def memwrite(self, addr, data):
        if data:
            self.cmd("b64write 0x%x 0x%x %s" % (addr, len(data),
                                                base64.b64encode(bytes(data)).decode()))

    def memset(self, addr, size, val=0):
        self.cmd("memset 0x%x 0x%x 0x%x" % (addr, size, val))

    def clock_step(self, ns):
        self.cmd("clock_step %d" % ns)

    # QMP -------------------------------------------------------------------------------
    def _qmp_read(self):
        while True:
            line = self.mr.readline()
            if not line:
                raise RuntimeError("QMP connection closed")
            msg = json.loads(line)
            if "event" in msg:
                continue
            return msg

    def qmp(self, command, **args):
        req = {"execute": command}
        if args:
            req["arguments"] = args
        self.mw.write((json.dumps(req) + "\n").encode())
        return self._qmp_read()

    def qom_get(self, path, prop):
        r = self.qmp("qom-get", path=path, property=prop)
        if "error" in r:
            raise RuntimeError(r["error"])
        return r["return"]

    def qom_set(self, path, prop, value):
        return self.qmp("qom-set", path=path, property=prop, value=value)

    def alive(self):
        return self.proc.poll() is None

    def log(self):
        try:
            return open(self.log_path).read()
        except OSError:
            return ""

    def close(self):
        try:
            self.qmp("quit")
        except Exception:
            pass
        try:
            # A sanitizer build exits slower (LeakSanitizer scans the heap at exit).
            self.proc.wait(timeout=60 if os.environ.get("ASAN_OPTIONS") else 10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self in _open_qemus:
            _open_qemus.remove(self)
            _collect_sanitizer_report(self.stderr_path)
        if not os.environ.get("VCX_QTEST_KEEP"):
            shutil.rmtree(self.dir, ignore_errors=True)


# ---------------------------------------------------------------------------------------
# The device
# ---------------------------------------------------------------------------------------

BAR0 = 0xE0000000
CMDQ = 0x01000000           # command queue page
MBOX = 0x08000000           # mailboxes: 4 MiB per command queue slot
MBOX_SLOT = 0x400000
MSI_BASE = 0x02000000       # MSI-X vector n writes its data at MSI_BASE + 4 n
EQ_BASE = 0x03000000        # EQ buffers
PAGES_BASE = 0x04000000     # pages given to firmware
DEV_PATH = "/machine/peripheral/vcx0"

DELIV = {"OK": 0, "SIG": 1, "TOKEN": 2, "BLOCK": 3, "OUT_PTR": 4, "IN_PTR": 5,
         "FW": 6, "IN_LEN": 7, "OUT_LEN": 8, "DESC": 0x10}


def synd(opcode, check):
    return (opcode << 16) | check


def bswap32(v):
    return struct.unpack("<I", struct.pack(">I", v))[0]


class Result:
    def __init__(self, deliv, out, entry):
        self.deliv = deliv
        self.out = out
        self.entry = entry

    @property
    def status(self):
        return self.out[0] if self.out else None

    @property
    def syndrome(self):
        return struct.unpack_from(">I", self.out, 4)[0] if len(self.out) >= 8 else None

    def u32(self, off):
        return struct.unpack_from(">I", self.out, off)[0]

    def f(self, fld, off=0):
        return get(self.out, fld, off)


MMCONFIG = 0xB0000000        # q35 PCIEXBAR default base (firmware enables it; qtest must)


class Vcx:
    def __init__(self, device_args="", devfn=(3 << 3), setup=True, bus=0, pre_setup=None,
                 **kw):
        """bus/devfn: where the vcx answers config cycles; pre_setup(self) runs before the
        PCI setup (e.g. to program a bridge in front of it)."""
        self.qt = QTest(device_args, **kw)
        self.devfn = devfn
        self.bus = bus
        self.token = 0
        if pre_setup:
            pre_setup(self)
        if setup:
            self.pci_setup()
            self.cmdq_setup()

    # PCI ---------------------------------------------------------------------------------
    def cfg_addr(self, reg, bus=None, devfn=None):
        bus = self.bus if bus is None else bus
        devfn = self.devfn if devfn is None else devfn
        return 0x80000000 | (bus << 16) | (devfn << 8) | (reg & 0xfc)

    def cfg_read_at(self, bus, devfn, reg):
        self.qt.outl(0xcf8, self.cfg_addr(reg, bus, devfn))
        return self.qt.inl(0xcfc)

    def cfg_write_at(self, bus, devfn, reg, val):
        self.qt.outl(0xcf8, self.cfg_addr(reg, bus, devfn))
        self.qt.outl(0xcfc, val)

    def mmconfig_enable(self, base=MMCONFIG):
        """Map the ECAM window (q35 MCH PCIEXBAR at 00:00.0 0x60, 256 MiB, enable bit 0),
        as firmware does; returns its base."""
        self.cfg_write_at(0, 0, 0x64, 0)
        self.cfg_write_at(0, 0, 0x60, base | 1)
        return base

    def ecam(self, reg, bus=None, devfn=None, base=MMCONFIG):
        """ECAM address of config register reg of bus:devfn (default: the vcx)."""
        bus = self.bus if bus is None else bus
        devfn = self.devfn if devfn is None else devfn
        return base + (bus << 20) + (devfn << 12) + reg

    def cfg_read(self, reg):
        self.qt.outl(0xcf8, self.cfg_addr(reg))
        return self.qt.inl(0xcfc)

    def cfg_write(self, reg, val):
        self.qt.outl(0xcf8, self.cfg_addr(reg))
        self.qt.outl(0xcfc, val)

    def find_cap(self, cap_id):
        ptr = self.cfg_read(0x34) & 0xff
        for _ in range(48):
            if not ptr:
                return None
            hdr = self.cfg_read(ptr)
            if hdr & 0xff == cap_id:
                return ptr
            ptr = (hdr >> 8) & 0xff
        return None

    def pci_setup(self, msix=True):
        self.cfg_write(0x10, BAR0)
        self.cfg_write(0x14, 0)
        self.cfg_write(0x04, 0x6)       # memory space + bus master
        if msix:
            self.msix_setup()
        self.qt.clock_step(50 * 1000 * 1000)   # past the initializing delay

    def msix_setup(self, vectors=8):
        cap = self.find_cap(0x11)
        ctl = self.cfg_read(cap)
        self.cfg_write(cap, ctl | (1 << 31))    # message control bit 15: enable
        for v in range(vectors):
            e = BAR0 + H["VCX_MSIX_TABLE_OFFSET"] + 16 * v
            self.qt.writel(e + 0, MSI_BASE + 4 * v)
            self.qt.writel(e + 4, 0)
            self.qt.writel(e + 8, 0x1000 + v)
            self.qt.writel(e + 12, 0)       # unmasked
        self.qt.memset(MSI_BASE, 4 * vectors, 0)

    def msi_count(self, v):
        """Returns the data of vector v's last MSI write (0x1000 + v) and clears it."""
        d = struct.unpack("<I", self.qt.memread(MSI_BASE + 4 * v, 4))[0]
        self.qt.memwrite(MSI_BASE + 4 * v, b"\0\0\0\0")
        return d == 0x1000 + v

    # init segment ----------------------------------------------------------------------
    def iseg_read(self, off):
        return bswap32(self.qt.readl(BAR0 + off))

    def iseg_write(self, off, val):
        self.qt.writel(BAR0 + off, bswap32(val))

    def cmdq_setup(self):
        low = self.iseg_read(H["VCX_ISEG_CMDQ_ADDR_L_SZ"])
        self.log_size = (low >> 4) & 0xf
        self.log_stride = low & 0xf
        self.qt.memset(CMDQ, 4096, 0)
        self.iseg_write(H["VCX_ISEG_CMDQ_ADDR_H"], 0)
        self.iseg_write(H["VCX_ISEG_CMDQ_ADDR_L_SZ"], CMDQ)

    def uar_write(self, uar, off, val):
        self.qt.writel(BAR0 + uar * 4096 + off, bswap32(val))

    def state(self):
        s = self.qt.qom_get(DEV_PATH, "state")
        return dict(kv.split("=", 1) for kv in s.split())

    # command queue -----------------------------------------------------------------------
    def entry_addr(self, slot):
        return CMDQ + (slot << self.log_stride)

    def build_mboxes(self, slot, data, nblocks, token, base=None, csum=False):
        """Write a mailbox chain carrying data (bytes 16.. of a command); returns address."""
        base = base if base is not None else MBOX + slot * MBOX_SLOT
        for i in range(nblocks):
            blk = bytearray(H["VCX_MBOX_SIZE"])
            chunk = data[i * 512:(i + 1) * 512]
            blk[:len(chunk)] = chunk
            nxt = base + (i + 1) * 1024 if i + 1 < nblocks else 0
            put(blk, H["VCX_MBOX_NEXT_PTR"], nxt)
            put(blk, H["VCX_MBOX_BLOCK_NUM"], i)
            put(blk, H["VCX_MBOX_TOKEN"], token)
            if csum:
                blk[0x23e] = (~xor8(blk[0x200:0x23e])) & 0xff
                blk[0x23f] = (~xor8(blk[0:0x23f])) & 0xff
            self.qt.memwrite(base + i * 1024, blk)
        return base if nblocks else 0

    def post(self, inbuf, out_len, slot=0, token=None, entry_hook=None, csum=False,
             ring=True):
        """Fill entry `slot` with command inbuf; entry_hook(entry, in_mbox, out_mbox) may
        corrupt anything before the doorbell. Returns the token used."""
        if token is None:
            self.token = self.token % 255 + 1
            token = self.token
        in_len = len(inbuf)
        nin = max(0, -(-(in_len - 16) // 512))
        nout = max(0, -(-(out_len - 16) // 512))
        base = MBOX + slot * MBOX_SLOT
        in_mb = self.build_mboxes(slot, inbuf[16:], nin, token, base, csum)
        out_base = base + nin * 1024
        out_mb = self.build_mboxes(slot, b"", nout, token, out_base, csum)
        ent = bytearray(64)
        put(ent, H["VCX_CMDQ_ENT_TYPE"], H["VCX_CMDQ_TYPE_PCIE"])
        put(ent, H["VCX_CMDQ_ENT_IN_LEN"], in_len)
        put(ent, H["VCX_CMDQ_ENT_IN_PTR"], in_mb)
        head = bytes(inbuf[:16])
        ent[0x10:0x10 + len(head)] = head
        put(ent, H["VCX_CMDQ_ENT_OUT_PTR"], out_mb)
        put(ent, H["VCX_CMDQ_ENT_OUT_LEN"], out_len)
        put(ent, H["VCX_CMDQ_ENT_TOKEN"], token)
        ent[0x3f] = 1
        if entry_hook:
            entry_hook(ent, in_mb, out_mb)
        if csum:
            ent[0x3d] = 0
            ent[0x3d] = (~xor8(ent)) & 0xff
        self.qt.memwrite(self.entry_addr(slot), ent)
        if ring:
            self.iseg_write(H["VCX_ISEG_CMD_DBELL"], 1 << slot)
        return token

    def collect(self, slot, out_len):
        ent = self.qt.memread(self.entry_addr(slot), 64)
        deliv = ent[0x3f] >> 1
        out = bytearray(ent[0x20:0x30])
        nin_ptr = get(ent, H["VCX_CMDQ_ENT_OUT_PTR"])
        addr = nin_ptr
        nout = max(0, -(-(out_len - 16) // 512))
        for _ in range(nout):
            blk = self.qt.memread(addr, H["VCX_MBOX_SIZE"])
            out += blk[:512]
            addr = get(blk, H["VCX_MBOX_NEXT_PTR"])
        return Result(deliv, bytes(out[:max(out_len, 16)]), ent)

    def owned(self, slot):
        return self.qt.memread(self.entry_addr(slot) + 0x3f, 1)[0] & 1

    def exec_raw(self, inbuf, out_len, slot=0, **kw):
        self.post(inbuf, out_len, slot=slot, **kw)
        if self.owned(slot):
            raise RuntimeError("entry %d still owned by the device" % slot)
        return self.collect(slot, out_len)

    def exec(self, opcode, op_mod=0, in_len=16, out_len=16, fields=(), payload=None,
             slot=0, **kw):
        """Run one command. fields: (Fld, value) pairs; payload: {byte_offset: bytes}."""
        inbuf = bytearray(in_len)
        put(inbuf, H["VCX_CMD_IN_OPCODE"], opcode)
        put(inbuf, H["VCX_CMD_IN_OP_MOD"], op_mod)
        for f, v in fields:
            put(inbuf, f, v)
        for off, data in (payload or {}).items():
            inbuf[off:off + len(data)] = data
        del inbuf[in_len:]      # payloads never extend the announced input length
        return self.exec_raw(inbuf, out_len, slot=slot, **kw)

    # common sequences ----------------------------------------------------------------------
    def give_pages(self, n, base=None):
        base = PAGES_BASE if base is None else base
        pas = b"".join(struct.pack(">Q", base + i * 4096) for i in range(n))
        return self.exec(H["VCX_CMD_OP_MANAGE_PAGES"], 1, in_len=16 + 8 * n,
                         fields=[(H["VCX_MANAGE_PAGES_IN_NUM_ENTRIES"], n)],
                         payload={16: pas})

    def bring_up(self, init=True, issi=1):
        """ENABLE_HCA, SET_ISSI, boot + init pages, INIT_HCA, as mlx5_core does."""
        r = self.exec(H["VCX_CMD_OP_ENABLE_HCA"])
        assert r.deliv == 0 and r.status == 0, "ENABLE_HCA failed"
        r = self.exec(H["VCX_CMD_OP_SET_ISSI"], fields=[(H["VCX_SET_ISSI_IN_CURRENT_ISSI"], issi)])
        assert r.status == 0, "SET_ISSI failed"
        r = self.exec(H["VCX_CMD_OP_QUERY_PAGES"], 2)
        n = r.u32(12)
        if n:
            r = self.give_pages(n)
            assert r.status == 0, "MANAGE_PAGES failed 0x%x" % r.status
        self.pages_given = n
        if init:
            r = self.exec(H["VCX_CMD_OP_INIT_HCA"])
            assert r.status == 0, "INIT_HCA failed"

    def alloc_uar(self):
        r = self.exec(H["VCX_CMD_OP_ALLOC_UAR"])
        assert r.status == 0, "ALLOC_UAR failed 0x%x" % r.status
        return r.f(H["VCX_ALLOC_UAR_OUT_UAR"])

    def create_eq(self, uar, mask, log_size=4, intr=0, base=EQ_BASE, log_page=0,
                  npas=None, extra=None, **kw):
        nbytes = 64 << log_size
        psz = 4096 << log_page
        if npas is None:
            npas = max(1, -(-nbytes // psz))
        inbuf_len = 0x110 + 8 * npas
        eqc = bytearray(64)
        put(eqc, H["VCX_EQC_LOG_EQ_SIZE"], log_size)
        put(eqc, H["VCX_EQC_UAR_PAGE"], uar)
        put(eqc, H["VCX_EQC_INTR"], intr)
        put(eqc, H["VCX_EQC_LOG_PAGE_SIZE"], log_page)
        if extra:
            extra(eqc)
        # the driver initialises EQE owner bits to 1
        init = bytearray(nbytes)
        for i in range(1 << log_size):
            init[i * 64 + 63] = 1
        self.qt.memwrite(base, init)
        pas = b"".join(struct.pack(">Q", base + i * psz) for i in range(npas))
        r = self.exec(H["VCX_CMD_OP_CREATE_EQ"], in_len=inbuf_len,
                      payload={0x10: eqc, 0x58: struct.pack(">Q", mask), 0x110: pas}, **kw)
        return r

    def eqe(self, base, index):
        return self.qt.memread(base + 64 * index, 64)


def run_isolated(tap, name, fn):
    """Run fn(); an exception becomes one failed check instead of aborting the file."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - report any failure as a TAP line
        import traceback
        tap.ok(False, name + ": raised " + type(e).__name__,
               traceback.format_exc().replace("\n", "\n# "))
