#!/usr/bin/env python3
# Copyright 2026 The redlock Authors.
"""Records the wire fuzzer's seed corpus (fuzz/corpus/wire/) from a real
redis-server: what the harness's client sends (a Master's whole handshake and
its user commands, a Subscriber's SUBSCRIBEs) is replayed to redis-server over
its Unix socket, and the server's answer becomes the stream of a seed, in the
input layout of fuzz/wire_invariants.h (ParseWireInput), cut at reply
boundaries and at a few points inside replies.

  scripts/fuzz.sh --build && fuzz/record_wire_seeds.py

Needs build-fuzz/wire_fuzzer and redis-server on PATH.
"""

import os
import random
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FUZZER = os.path.join(ROOT, "build-fuzz", "wire_fuzzer")
OUT = os.path.join(ROOT, "fuzz", "corpus", "wire")


def make_input(mode, pieces):
    out = bytearray([mode, len(pieces) - 1])
    for piece in pieces[:-1]:
        out += len(piece).to_bytes(2, "little")
    for piece in pieces:
        out += piece
    return bytes(out)


def client_requests(tmp, mode):
    """What the harness's client sends for `mode`, one empty piece."""
    dump = os.path.join(tmp, "requests-%d" % mode)
    seed = os.path.join(tmp, "input-%d" % mode)
    with open(seed, "wb") as f:
        f.write(make_input(mode, [b""]))
    if os.path.exists(dump):
        os.unlink(dump)
    env = dict(os.environ, REDLOCK_WIRE_FUZZ_REQUESTS=dump)
    subprocess.run([FUZZER, seed], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(dump, "rb") as f:
        return f.read()


def read_all(sock, idle=0.5):
    sock.settimeout(idle)
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            return data
        if not chunk:
            return data
        data += chunk


def replay(path, requests, publish=None):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.sendall(requests)
    answer = read_all(s)
    if publish is not None:
        p = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        p.connect(path)
        p.sendall(publish)
        read_all(p, 0.2)
        p.close()
        answer += read_all(s)
    s.close()
    return answer


def reply_ends(stream):
    """Offsets just after each top-level reply (RESP2)."""
    ends, pos = [], 0

    def one(pos):
        kind = stream[pos:pos + 1]
        eol = stream.index(b"\r\n", pos)
        head = stream[pos + 1:eol]
        pos = eol + 2
        if kind == b"$":
            n = int(head)
            return pos if n < 0 else pos + n + 2
        if kind == b"*":
            for _ in range(max(int(head), 0)):
                pos = one(pos)
        return pos

    while pos < len(stream):
        pos = one(pos)
        ends.append(pos)
    return ends


def seeds(name, mode, stream, rng):
    """(file name, input) pairs: whole, cut at reply ends, cut inside."""
    yield name + "-whole", make_input(mode, [stream])
    ends = reply_ends(stream)
    cuts = ends[:-1][:15]
    pieces, last = [], 0
    for c in cuts:
        pieces.append(stream[last:c])
        last = c
    pieces.append(stream[last:])
    yield name + "-replies", make_input(mode, pieces)
    inside = sorted(rng.sample(range(1, len(stream)), 15))
    pieces, last = [], 0
    for c in inside:
        pieces.append(stream[last:c])
        last = c
    pieces.append(stream[last:])
    yield name + "-cut", make_input(mode, pieces)


def main():
    if not os.access(FUZZER, os.X_OK):
        sys.exit("build it first: scripts/fuzz.sh --build")
    rng = random.Random(23)
    with tempfile.TemporaryDirectory(prefix="redlock-wire-seeds.") as tmp:
        sock = os.path.join(tmp, "redis.sock")
        server = subprocess.Popen(
            ["redis-server", "--port", "0", "--unixsocket", sock,
             "--save", "", "--appendonly", "no",
             "--user", "fuzzuser", "on", ">fuzzpass", "~*", "&*", "+@all"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(100):
                try:
                    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    probe.connect(sock)
                    probe.close()
                    break
                except OSError:
                    time.sleep(0.05)
            os.makedirs(OUT, exist_ok=True)
            # Master: plain, AUTH, SELECT, both (mode = 0 + 3 * flags).
            for name, mode in [("master", 0), ("master-auth", 3),
                               ("master-select", 6), ("master-auth-select", 9)]:
                stream = replay(sock, client_requests(tmp, mode))
                for file, data in seeds(name, mode, stream, rng):
                    with open(os.path.join(OUT, file), "wb") as f:
                        f.write(data)
            # Master: the release answered NOSCRIPT (the script cache was
            # flushed), as redis-server words it; the Master re-sends it as
            # EVAL behind the extend, so the extend's answer comes first.
            stream = replay(sock, client_requests(tmp, 0))
            ends = reply_ends(stream)
            assert stream[ends[-4]:] == b"+OK\r\n:1\r\n:0\r\n", stream[-20:]
            noscript = replay(sock, b"EVALSHA " + b"0" * 40 + b" 0\r\n")
            assert noscript.startswith(b"-NOSCRIPT"), noscript
            stream = stream[:ends[-3]] + noscript + b":0\r\n:1\r\n"
            for file, data in seeds("master-noscript", 0, stream, rng):
                with open(os.path.join(OUT, file), "wb") as f:
                    f.write(data)
            # Subscriber: plain and AUTH (mode = 1 + 3 * flags); a real
            # release message published on one of its channels.
            publish = (b"*3\r\n$7\r\nPUBLISH\r\n$14\r\nredlock:fuzz:b\r\n"
                       b"$8\r\nreleased\r\n")
            for name, mode in [("subscriber", 1), ("subscriber-auth", 4)]:
                stream = replay(sock, client_requests(tmp, mode), publish)
                for file, data in seeds(name, mode, stream, rng):
                    with open(os.path.join(OUT, file), "wb") as f:
                        f.write(data)
            # ReplyReader: the plain Master's stream (mode 2).
            stream = replay(sock, client_requests(tmp, 0))
            for file, data in seeds("reader", 2, stream, rng):
                with open(os.path.join(OUT, file), "wb") as f:
                    f.write(data)
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
