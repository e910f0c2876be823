"""The open-files limit of a process that holds many connections (each one is a file)."""

from __future__ import annotations

import resource

#: What is asked for when the hard limit is unlimited.
UNLIMITED_WANTED = 1_048_576


def raise_open_files_limit() -> int:
    """Raises this process's soft limit on open files to its hard limit; returns the soft
    limit now in force (unchanged when the system refuses)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = UNLIMITED_WANTED if hard == resource.RLIM_INFINITY else hard
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
        except (ValueError, OSError):
            return soft
        return wanted
    return soft
