"""Files written in place of a target: the permission bits they get, and the atomic
replace through a temporary file of their own (stdlib only)."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO


def mode_for(target: Path) -> int:
    """Return the permission bits the written file gets: the old file's, else 0o666 - umask."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


@contextmanager
def replaced_atomically(target: Path) -> Iterator[BinaryIO]:
    """Yield a binary stream to a temporary file in ``target``'s folder, of a name of its
    own (two writers into one folder never share it); when the block ends, the file takes
    ``target``'s place in one rename, with ``mode_for(target)``. If the block raises, the
    temporary file is removed and ``target`` is left as it was."""
    handle, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    temporary = Path(name)
    try:
        with open(handle, "wb") as stream:
            yield stream
        os.chmod(temporary, mode_for(target))
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)
