#!/usr/bin/env python3
"""Verified, bounded TCP transfers between two guests (tests/guest/net-*.sh).

  net-xfer.py serve PORT                 receive connections until killed: each one is read
                                         to EOF, then answered with "BYTES SHA256\\n" of what
                                         came, and the connection closed
  net-xfer.py send HOST PORT SIZE [SEED] send SIZE bytes (K/M/G suffixes) of a seeded
                                         pseudo-random stream, half-close, read the answer
                                         and compare it with the sender's own count and digest

`send` prints "sent BYTES bytes in S s (MB/s), sha256 HEX" and exits 0 only when the
receiver's count and digest equal the sender's; any mismatch, refused connection (after
retries for up to --connect-timeout), stall longer than --timeout between socket operations
or transfer longer than --deadline exits 1 with the reason. The server keeps no data: it
hashes as it reads, so a transfer of any size needs no memory or disk in either guest.
"""
import argparse
import hashlib
import os
import socket
import sys
import threading
import time

CHUNK = 1 << 20


def parse_size(text):
    mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    t = text.strip().lower()
    if t and t[-1] in mult:
        return int(t[:-1]) * mult[t[-1]]
    return int(t)


def block(seed):
    """One pseudo-random 1 MiB block, repeated with a per-chunk counter mixed in so that
    a chunk sent twice or out of order changes the digest (TCP reordering bugs show)."""
    h = hashlib.sha256(str(seed).encode()).digest()
    return (h * (CHUNK // len(h)))[:CHUNK]


def serve(port, timeout):
    ls = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    ls.bind(("::", port))
    ls.listen(8)
    print(f"serving on port {port}", flush=True)

    def one(conn, peer):
        conn.settimeout(timeout)
        h = hashlib.sha256()
        n = 0
        try:
            while True:
                data = conn.recv(CHUNK)
                if not data:
                    break
                h.update(data)
                n += len(data)
            conn.sendall(f"{n} {h.hexdigest()}\n".encode())
        except OSError as e:
            print(f"connection from {peer[0]}: {e} after {n} bytes", flush=True)
        finally:
            conn.close()
        print(f"received {n} bytes from {peer[0]}", flush=True)

    while True:
        conn, peer = ls.accept()
        threading.Thread(target=one, args=(conn, peer), daemon=True).start()


def send(host, port, size, seed, timeout, connect_timeout, deadline):
    start = time.monotonic()
    end_connect = start + connect_timeout
    while True:
        try:
            s = socket.create_connection((host, port), timeout=min(timeout, 5))
            break
        except OSError as e:
            if time.monotonic() > end_connect:
                sys.exit(f"net-xfer: cannot connect to [{host}]:{port} in "
                         f"{connect_timeout} s: {e}")
            time.sleep(0.5)
    s.settimeout(timeout)
    base = block(seed)
    h = hashlib.sha256()
    sent = 0
    t0 = time.monotonic()
    try:
        i = 0
        while sent < size:
            if time.monotonic() - start > deadline:
                sys.exit(f"net-xfer: transfer exceeded {deadline} s after {sent} bytes")
            n = min(CHUNK, size - sent)
            chunk = i.to_bytes(8, "little") + base[8:n] if n >= 8 else base[:n]
            s.sendall(chunk)
            h.update(chunk)
            sent += n
            i += 1
        s.shutdown(socket.SHUT_WR)
        answer = b""
        while not answer.endswith(b"\n"):
            data = s.recv(256)
            if not data:
                break
            answer += data
    except OSError as e:
        sys.exit(f"net-xfer: {e} after {sent} bytes to [{host}]:{port}")
    finally:
        s.close()
    secs = time.monotonic() - t0
    digest = h.hexdigest()
    print(f"sent {sent} bytes in {secs:.1f} s ({sent / secs / 1e6:.1f} MB/s), sha256 {digest}",
          flush=True)
    want = f"{sent} {digest}"
    got = answer.decode(errors="replace").strip()
    if got != want:
        sys.exit(f"net-xfer: the receiver got '{got or 'no answer'}', expected '{want}'")
    print(f"receiver agrees: {got}", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--timeout", type=float, default=30,
                   help="seconds one socket operation may stall")
    p.add_argument("--connect-timeout", type=float, default=30)
    p.add_argument("--deadline", type=float, default=600, help="seconds for one transfer")
    sub = p.add_subparsers(dest="cmd", required=True)
    sv = sub.add_parser("serve")
    sv.add_argument("port", type=int)
    sd = sub.add_parser("send")
    sd.add_argument("host")
    sd.add_argument("port", type=int)
    sd.add_argument("size")
    sd.add_argument("seed", nargs="?", default=str(os.getpid()))
    a = p.parse_args()
    if a.cmd == "serve":
        serve(a.port, a.timeout)
    else:
        send(a.host, a.port, parse_size(a.size), a.seed, a.timeout, a.connect_timeout,
             a.deadline)


if __name__ == "__main__":
    main()
