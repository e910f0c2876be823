"""What the benchmarks read of a system's processes (`/proc`): CPU time to the nanosecond,
resident memory, and this process's embedded Redis servers. Shared by bench_load.py and
bench_site.py (imported, not run: `make bench` runs bench/bench_*.py)."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path

import grpc

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def stat_fields(pid: int) -> list[str]:
    text = Path(f"/proc/{pid}/stat").read_text()
    return text.rpartition(")")[2].split()  # the fields after "(comm)": state is [0]


def thread_seconds(pid: int) -> float:
    """The CPU time of the process's living threads so far, to the nanosecond (schedstat):
    /proc/<pid>/stat counts in clock ticks (10 ms), too coarse for a few commands."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, IndexError, ValueError):  # a thread that just ended
            continue
    return total / 1e9


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def redis_pids() -> list[int]:
    """This process's redis-server children (the embedded Redis)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            comm = (entry / "comm").read_text().strip()
            parent = int(stat_fields(int(entry.name))[1])
        except (OSError, IndexError, ValueError):
            continue
        if parent == os.getpid() and comm.startswith("redis-server"):
            found.append(int(entry.name))
    return found


def machine() -> str:
    model = "unknown CPU"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.partition(":")[2].strip()
            break
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    return (
        f"machine: nproc {len(os.sched_getaffinity(0))}, {model}; "
        f"python {platform.python_version()}, grpcio {grpc.__version__}\n"
        f"uptime at start: {uptime}"
    )


def process_seconds(pid: int) -> float:
    """User + system CPU time of the process so far, its ended threads' too (clock ticks)."""
    fields = stat_fields(pid)
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
