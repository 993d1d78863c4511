"""All or nothing per export run: part files are written to a staging folder inside the
export folder and moved into place only once every one of them is written.

A run that fails while writing (a full disk, a session that cannot be exported, an
interrupt) removes its staging folder and leaves the dataset and its manifest exactly as
they were. Publishing is one rename per part file, within one file system; the new files
have new names, so none replaces a file the manifest still names.

A run holds its export folder from staging to the manifest: a second run into the same
folder meanwhile is refused at once (``ExportError``), never mixed with the first.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from ledgerviz.export.manifest import ExportError

try:
    import fcntl
except ImportError:  # Windows: folders cannot be locked; two runs at once are not told apart
    fcntl = None  # type: ignore[assignment]

STAGING_NAME = ".ledgerviz-staging"
"""The staging folder in an export folder (dot-named: readers and globs skip it)."""


@contextmanager
def staged(root: Path) -> Iterator[Path]:
    """Yield an empty staging folder in ``root``, ``root`` held by this run until the block
    ends (raise ``ExportError`` when another run holds it); if the block raises, remove the
    staging folder (and ``root`` too, when this run created it) before the error goes on."""
    created = not root.exists()
    root.mkdir(parents=True, exist_ok=True)
    with _held(root):
        staging = root / STAGING_NAME
        shutil.rmtree(staging, ignore_errors=True)  # what a killed run left
        staging.mkdir()
        try:
            yield staging
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            if created:
                with suppress(OSError):
                    root.rmdir()
            raise


@contextmanager
def _held(root: Path) -> Iterator[None]:
    """Hold an exclusive lock on the folder ``root`` while the block runs (released when its
    descriptor closes, so a killed run holds nothing); without ``fcntl``, hold nothing."""
    if fcntl is None:
        yield
        return
    folder = os.open(root, os.O_RDONLY)
    try:
        try:
            fcntl.flock(folder, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ExportError(f"{root} is being written by another export run; wait for it "
                              "to end, or export into another folder") from None
        yield
    finally:
        os.close(folder)


def publish(staging: Path, root: Path, frames: Iterable[str]) -> None:
    """Move every file staged for ``frames`` to its place under ``root``, then remove the
    staging folder."""
    for name in frames:
        base = staging / name
        if not base.is_dir():
            continue
        (root / name).mkdir(exist_ok=True)
        for file in sorted(base.iterdir()):
            os.replace(file, root / name / file.name)
    shutil.rmtree(staging)
