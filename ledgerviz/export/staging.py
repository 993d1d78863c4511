"""All or nothing per export run: part files are written to a staging folder inside the
export folder and moved into place only once every one of them is written.

A run that fails while writing (a full disk, a session that cannot be exported, an
interrupt) removes its staging folder and leaves the dataset and its manifest exactly as
they were. Publishing is one rename per part file, within one file system; the new files
have new names, so none replaces a file the manifest still names.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

STAGING_NAME = ".ledgerviz-staging"
"""The staging folder in an export folder (dot-named: readers and globs skip it)."""


@contextmanager
def staged(root: Path) -> Iterator[Path]:
    """Yield an empty staging folder in ``root``; if the block raises, remove it (and
    ``root`` too, when this run created it) before the error goes on."""
    created = not root.exists()
    staging = root / STAGING_NAME
    shutil.rmtree(staging, ignore_errors=True)  # what a killed run left
    staging.mkdir(parents=True)
    try:
        yield staging
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if created:
            with suppress(OSError):
                root.rmdir()
        raise


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
