#!/usr/bin/env python3
"""Print N distinct TCP ports that are free on 127.0.0.1 now, one a line (default N = 1).

    scripts/free-port.py [N]

Every server or PostgreSQL cluster a test or benchmark script starts takes its port from here
(unless the caller names one), so no run depends on a well-known port such as 8080, 18080 or 5544
being free. Ports are probed at random below the kernel's ephemeral range
(/proc/sys/net/ipv4/ip_local_port_range): a server that restarts on its port in the middle of a
run (PostgreSQL in the outage tests, the service in the kill -9 test) cannot lose it to the local
end of some outgoing connection meanwhile. Each candidate is bound (without SO_REUSEADDR, so a port
with connections lingering in TIME_WAIT is passed over too) and all N are held until every one is
found, so they differ. Falls back to port 0 (the kernel's choice) if the range yields nothing.
"""
import random
import socket
import sys


def ephemeral_low():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    low, high = 20000, min(ephemeral_low(), 32768) - 1
    held = []
    try:
        candidates = random.sample(range(low, high + 1), min(2000, high - low + 1)) if high > low else []
        for port in candidates + [0] * count:
            if len(held) == count:
                break
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                s.close()
                continue
            held.append(s)
        if len(held) < count:
            sys.exit("free-port: found no free port on 127.0.0.1")
        print("\n".join(str(s.getsockname()[1]) for s in held))
    finally:
        for s in held:
            s.close()


if __name__ == "__main__":
    main()
