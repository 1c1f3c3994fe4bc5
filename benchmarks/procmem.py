"""Process memory figures for the benchmarks (Linux /proc; None elsewhere)."""

from pathlib import Path


def status_mb(field: str) -> float | None:
    """A ``/proc/self/status`` field (``VmRSS``, ``VmHWM``) in MB."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def reset_peak() -> bool:
    """Reset the kernel's peak-RSS mark (``VmHWM``), so memory used before the
    measured work (loading its input) does not count as its peak. False where
    the kernel does not allow it."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False
