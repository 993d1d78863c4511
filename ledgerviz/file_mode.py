"""The permission bits a file written in place of ``target`` gets (stdlib only)."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def mode_for(target: Path) -> int:
    """Return the permission bits the written file gets: the old file's, else 0o666 - umask."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
