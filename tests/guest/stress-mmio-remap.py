#!/usr/bin/env python3
"""MMIO while another vCPU changes the memory map (docs/performance.md, "The MTTCG abort").

Two PCI functions with memory BARs: vcx (vcx.ko not loaded: resource0 must be free to
map) and the edu device the runner adds with `--qemu-arg=-device --qemu-arg=edu`. One
process, pinned to CPU 1, reads register 0 of the function whose BAR lies higher in a
tight loop and checks that every read returns the same value. Another, pinned to CPU 0,
flips the memory-space enable bit of the lower one, so each flip renumbers the sections
of the guest's memory map while the reader's TLB still holds the old translation. On
QEMU with the stale section number some reads land on another MemoryRegion (a wrong
value, or the assertion in iotlb_to_section); on a sound QEMU every read sees the
register.

Usage: stress-mmio-remap.py SECONDS   (the loop is bounded by time and by flip count)
Exits 0 when every read matched; prints reads, flips and mismatches.
"""
import mmap
import multiprocessing as mp
import os
import struct
import sys
import time

VCX_IDS = {("0x1af4", "0x10f0"), ("0x15b3", "0x1017")}
EDU_IDS = {("0x1234", "0x11e8")}
MAX_FLIPS = 200000


def find(ids):
    root = "/sys/bus/pci/devices"
    for dev in sorted(os.listdir(root)):
        def rd(f):
            with open(os.path.join(root, dev, f)) as fh:
                return fh.read().strip()
        if (rd("vendor"), rd("device")) in ids:
            return os.path.join(root, dev)
    return None


def bar0(path):
    with open(os.path.join(path, "resource")) as fh:
        return int(fh.readline().split()[0], 16)


def reader(path, seconds, out):
    os.sched_setaffinity(0, {1})
    fd = os.open(os.path.join(path, "resource0"), os.O_RDWR | os.O_SYNC)
    m = mmap.mmap(fd, 4096, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    first = struct.unpack_from("<I", m, 0)[0]
    reads = bad = 0
    seen = set()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for _ in range(1000):
            v = struct.unpack_from("<I", m, 0)[0]
            if v != first:
                bad += 1
                seen.add(v)
        reads += 1000
    out.put((first, reads, bad, sorted(seen)[:8]))


def flipper(path, seconds, out):
    os.sched_setaffinity(0, {0})
    fd = os.open(os.path.join(path, "config"), os.O_RDWR)
    cmd = struct.unpack("<H", os.pread(fd, 2, 4))[0]
    flips = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end and flips < MAX_FLIPS:
        os.pwrite(fd, struct.pack("<H", cmd & ~0x2), 4)
        os.pwrite(fd, struct.pack("<H", cmd | 0x2), 4)
        flips += 2
        time.sleep(0.0005)   # leave the BQL to the other vCPU now and then
    os.pwrite(fd, struct.pack("<H", cmd), 4)
    out.put(flips)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 30
    vcx, edu = find(VCX_IDS), find(EDU_IDS)
    if not vcx or not edu:
        sys.exit(f"FAIL: need a vcx function ({vcx}) and an edu function ({edu})")
    if os.path.exists(os.path.join(vcx, "driver")):
        sys.exit("FAIL: vcx.ko holds resource0 (boot with --no-load)")
    if os.cpu_count() < 2:
        sys.exit("FAIL: needs two vCPUs")
    q1, q2 = mp.Queue(), mp.Queue()
    # Sections are ordered by address: the reader's region must lie above the one whose
    # enable bit flips, so that the flip renumbers the reader's section.
    lo, hi = sorted((vcx, edu), key=bar0)
    r = mp.Process(target=reader, args=(hi, seconds, q1))
    f = mp.Process(target=flipper, args=(lo, seconds, q2))
    r.start()
    f.start()
    first, reads, bad, seen = q1.get(timeout=seconds + 120)
    flips = q2.get(timeout=seconds + 120)
    r.join()
    f.join()
    print(f"{os.path.basename(hi)} register 0 read 0x{first:08x}: {reads} reads, {flips} memory-map changes, "
          f"{bad} mismatches {['0x%08x' % v for v in seen]}")
    if bad:
        print("FAIL: MMIO reads returned another region's data")
        return 1
    if flips < 100:
        print("FAIL: too few memory-map changes to mean anything")
        return 1
    print("PASS: every MMIO read saw the register")
    return 0


if __name__ == "__main__":
    sys.exit(main())
