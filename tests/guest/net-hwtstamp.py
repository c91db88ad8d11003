#!/usr/bin/env python3
"""Hardware timestamps of a netdev, checked against its PTP clock.

  net-hwtstamp.py recv IFACE PORT COUNT    receive COUNT UDP datagrams on PORT
  net-hwtstamp.py send IFACE ADDR PORT COUNT   send COUNT datagrams to ADDR:PORT

Turns on the interface's hardware timestamps (SIOCSHWTSTAMP: transmit on, receive all),
asks the socket for raw hardware timestamps (SO_TIMESTAMPING) and checks that every
datagram gets one (a received one in its control message, a sent one on the error
queue), each between two readings of the interface's PTP clock (ethtool -T) taken before
the first and after the last, in order. Prints one line; exits non-zero on a failure.
"""
import ctypes
import os
import re
import select
import socket
import struct
import subprocess
import sys
import time

SIOCSHWTSTAMP = 0x89b0
HWTSTAMP_TX_ON, HWTSTAMP_FILTER_ALL = 1, 1
SO_TIMESTAMPING = 37
SOF_TX_HARDWARE, SOF_RX_HARDWARE, SOF_RAW_HARDWARE = 1, 4, 64
SOF_OPT_TSONLY = 2048
MSG_ERRQUEUE = 0x2000


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def phc_of(iface):
    out = subprocess.run(["ethtool", "-T", iface], capture_output=True, text=True).stdout
    m = re.search(r"PTP Hardware Clock: (\d+)", out)
    if not m:
        fail("%s has no PTP hardware clock: %s" % (iface, out.strip()))
    return "/dev/ptp" + m.group(1)


def enable_hwtstamp(sock, iface):
    cfg = (ctypes.c_int * 3)(0, HWTSTAMP_TX_ON, HWTSTAMP_FILTER_ALL)
    ifr = struct.pack("16sP", iface.encode(), ctypes.addressof(cfg))
    import fcntl
    try:
        fcntl.ioctl(sock.fileno(), SIOCSHWTSTAMP, ifr)
    except OSError as e:
        fail("SIOCSHWTSTAMP on %s: %s" % (iface, e))
    if (cfg[1], cfg[2]) != (HWTSTAMP_TX_ON, HWTSTAMP_FILTER_ALL):
        fail("SIOCSHWTSTAMP on %s gave tx %d rx %d" % (iface, cfg[1], cfg[2]))


def raw_hw(ancdata):
    """The raw hardware time (ns) of an SCM_TIMESTAMPING control message, or None."""
    for level, typ, data in ancdata:
        if level == socket.SOL_SOCKET and typ == SO_TIMESTAMPING and len(data) >= 48:
            sec, nsec = struct.unpack_from("qq", data, 32)
            return sec * 10**9 + nsec
    return None


def main():
    mode, iface = sys.argv[1], sys.argv[2]
    fd = os.open(phc_of(iface), os.O_RDONLY)
    clk = ((~fd) << 3) | 3      # FD_TO_CLOCKID
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    enable_hwtstamp(s, iface)
    stamps = []
    if mode == "recv":
        port, count = int(sys.argv[3]), int(sys.argv[4])
        s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPING, SOF_RX_HARDWARE | SOF_RAW_HARDWARE)
        lo = time.clock_gettime_ns(clk)     # nothing is received before the bind
        s.bind(("0.0.0.0", port))
        s.settimeout(120)
        for i in range(count):
            _, anc, _, _ = s.recvmsg(2048, 1024)
            stamps.append(raw_hw(anc))
        t1 = time.clock_gettime_ns(clk)
    else:
        addr, port, count = sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
        s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPING,
                     SOF_TX_HARDWARE | SOF_RAW_HARDWARE | SOF_OPT_TSONLY)
        lo = time.clock_gettime_ns(clk)
        errq = select.poll()
        errq.register(s, select.POLLERR)    # the error queue has a timestamp
        for i in range(count):
            s.sendto(b"hwtstamp %d" % i, (addr, port))
            deadline = time.monotonic() + 10
            got = None
            while got is None and time.monotonic() < deadline:
                errq.poll(1000)
                try:
                    _, anc, _, _ = s.recvmsg(64, 1024, MSG_ERRQUEUE | socket.MSG_DONTWAIT)
                    got = raw_hw(anc)
                except BlockingIOError:
                    pass
            stamps.append(got)
            time.sleep(0.02)
        t1 = time.clock_gettime_ns(clk)
    if any(x is None or x == 0 for x in stamps):
        fail("%s on %s: %d of %d datagrams without a hardware time" %
             (mode, iface, sum(x is None or x == 0 for x in stamps), count))
    if stamps != sorted(stamps) or stamps[0] < lo or stamps[-1] > t1:
        fail("%s on %s: hardware times %d..%d not in order within the clock's %d..%d" %
             (mode, iface, stamps[0], stamps[-1], lo, t1))
    print("ok %s on %s: %d hardware timestamps in order over %.3f ms of its PTP clock" %
          (mode, iface, count, (stamps[-1] - stamps[0]) / 1e6))


if __name__ == "__main__":
    main()
