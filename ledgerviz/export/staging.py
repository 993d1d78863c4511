"""All or nothing per export run: partitions are written to a staging folder inside the
export folder and moved into place only once every one of them is written.

A run that fails while writing (a full disk, a session that cannot be exported, an
interrupt) removes its staging folder and leaves the dataset and its manifest exactly as
they were. Publishing is one rename per partition file, within one file system.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from ledgerviz.export.parquet import PART_NAME

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
    """Move every partition file staged for ``frames`` to its place under ``root``
    (replacing the old file), then remove the staging folder."""
    for name in frames:
        base = staging / name
        if not base.is_dir():
            continue
        for folder in sorted(base.iterdir()):
            target = root / name / folder.name
            target.mkdir(parents=True, exist_ok=True)
            os.replace(folder / PART_NAME, target / PART_NAME)
    shutil.rmtree(staging)
