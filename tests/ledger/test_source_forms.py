"""``ledger.sources`` on every source form: streams read in chunks, globs, special files.

Expected paths, chunks and messages are literals worked out from the files each test
writes.
"""

from __future__ import annotations

import io
import os
import socket
import stat
from pathlib import Path

import pytest
from ledger_lines import HEADER, encode, mark, turn_start

from ledgerviz.ledger import LedgerError, UnreadableSourceError, read_sessions
from ledgerviz.ledger.numbers import exact_loads
from ledgerviz.ledger.sources import _special_kind, expand_path, iter_source_chunks


class MinimalReader:
    """A file-like object with only ``read(size)``: ``size`` must be an int (-1: the rest)."""

    def __init__(self, content: bytes, name: str | None = None) -> None:
        self._content = content
        self.sizes: list[int] = []
        if name is not None:
            self.name = name

    def read(self, size: int) -> bytes:
        self.sizes.append(size)
        if size < 0:
            size = len(self._content)
        piece, self._content = self._content[:size], self._content[size:]
        return piece


class FailingReader:
    name = "remote.jsonl"

    def read(self, size: int) -> bytes:
        raise OSError("connection reset")


def chunks_of(source: object, size: int | None) -> list[tuple[str, list[bytes]]]:
    return [(name, list(chunks)) for name, chunks in iter_source_chunks(source, size)]


def test_a_stream_is_read_in_chunks_of_the_given_size() -> None:
    reader = MinimalReader(b"abcdefghij", name="s.jsonl")
    assert chunks_of(reader, 4) == [("s.jsonl", [b"abcd", b"efgh", b"ij"])]
    assert reader.sizes == [4, 4, 4, 4]


def test_a_file_is_read_in_chunks_of_the_given_size(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    path.write_bytes(b"abcdefghij")
    assert chunks_of(path, 4) == [(str(path), [b"abcd", b"efgh", b"ij"])]
    assert chunks_of(path, None) == [(str(path), [b"abcdefghij"])]


def test_a_plain_glob_does_not_descend_into_folders(tmp_path: Path) -> None:
    for name in ("a.jsonl", "sub/b.jsonl"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(encode([HEADER, turn_start(0)]))
    assert [log.path for log in read_sessions(str(tmp_path / "*.jsonl"))] == [
        str(tmp_path / "a.jsonl")
    ]


def test_a_broken_symbolic_link_named_directly_says_so(tmp_path: Path) -> None:
    link = tmp_path / "gone.jsonl"
    link.symlink_to(tmp_path / "missing.jsonl")
    with pytest.raises(UnreadableSourceError) as raised:
        read_sessions(str(link))
    assert str(raised.value) == f"{link}: broken symbolic link"


def test_progress_keeps_the_path_and_the_options(tmp_path: Path) -> None:
    path = tmp_path / "dup.jsonl"
    path.write_bytes(encode([HEADER, b'{"type":"turn/start","seq":0,"seq":0,"data":{"turn":1}}',
                             b"{oops", mark(1)]))
    (log,) = read_sessions(path, progress=lambda size: None, duplicate_keys=True)
    assert log.path == str(path)
    assert sorted((d.line, d.kind) for d in log.diagnostics) == [(2, "duplicate_key"),
                                                                 (3, "invalid_json")]
    with pytest.raises(LedgerError, match=":3: error \\[invalid_json\\]"):
        read_sessions(path, progress=lambda size: None, strict=True)


def test_a_stream_without_a_chunk_size_is_read_whole_once() -> None:
    reader = MinimalReader(b"abcdefghij")
    assert chunks_of(reader, None) == [("<stream>", [b"abcdefghij"])]
    assert reader.sizes == [-1]


def test_a_stream_read_error_names_the_stream() -> None:
    with pytest.raises(UnreadableSourceError) as raised:
        read_sessions(FailingReader())  # type: ignore[arg-type]
    assert str(raised.value) == "remote.jsonl: cannot read: connection reset"


def test_a_text_stream_is_refused_by_name() -> None:
    with pytest.raises(UnreadableSourceError) as raised:
        read_sessions(io.StringIO("{}"))  # type: ignore[arg-type]
    assert str(raised.value) == "<stream>: file object is in text mode; open it with 'rb'"


def test_a_stream_session_is_read_and_keyed_by_its_header() -> None:
    content = encode([HEADER, turn_start(0)])
    (session,) = read_sessions(MinimalReader(content, name="n.jsonl"))  # type: ignore[arg-type]
    assert (session.path, session.key, len(session.events)) == ("n.jsonl", "t", 1)


def test_progress_reports_the_bytes_of_each_chunk(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_bytes(encode([HEADER, turn_start(0)]))
    reported: list[int] = []
    read_sessions(path, progress=reported.append)
    assert reported == [path.stat().st_size]


def test_expand_path_lists_a_folder_in_order(tmp_path: Path) -> None:
    for name in ("b/c.jsonl", "a.jsonl", "b/d.txt", "e.jsonl.gz"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(b"")
    assert expand_path(str(tmp_path)) == [
        tmp_path / "a.jsonl", tmp_path / "b/c.jsonl", tmp_path / "e.jsonl.gz"
    ]


def recursive_tree(root: Path) -> None:
    for name in ("x.jsonl", "s/y.jsonl", "s/t/z.jsonl", "s/n.txt"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(b"")
    (root / "s" / "loop").symlink_to(root / "s")  # a walk must end


def test_a_recursive_glob_matches_at_every_depth_once(tmp_path: Path) -> None:
    recursive_tree(tmp_path)
    assert expand_path(f"{tmp_path}/**/*.jsonl") == [
        tmp_path / "s/t/z.jsonl", tmp_path / "s/y.jsonl", tmp_path / "x.jsonl"
    ]
    assert expand_path(f"{tmp_path}/s/**/z.jsonl") == [tmp_path / "s/t/z.jsonl"]


def test_a_relative_recursive_glob_starts_at_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recursive_tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert expand_path("**/*.jsonl") == [Path("s/t/z.jsonl"), Path("s/y.jsonl"), Path("x.jsonl")]
    with pytest.raises(UnreadableSourceError, match=r"^\*\*/\*\.csv: no file matches"):
        expand_path("**/*.csv")


def test_a_socket_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(path))
        with pytest.raises(UnreadableSourceError) as raised:
            read_sessions(path)
    finally:
        server.close()
    assert str(raised.value) == f"{path}: a socket, not a file"


def test_a_named_pipe_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    os.mkfifo(path)
    with pytest.raises(UnreadableSourceError) as raised:
        read_sessions(path)
    assert str(raised.value) == f"{path}: a named pipe (FIFO), not a file"


def test_special_file_kinds() -> None:
    assert _special_kind(stat.S_IFCHR | 0o600) == "a device"
    assert _special_kind(stat.S_IFBLK | 0o600) == "a device"
    assert _special_kind(stat.S_IFLNK | 0o777) == "not a regular file"


def test_exact_loads_refuses_what_orjson_refuses() -> None:
    assert exact_loads(b'{"n": 1.5, "big": 123456789012345678901}') == {
        "n": 1.5, "big": 123456789012345678901
    }
    for constant in ("NaN", "Infinity", "-Infinity"):
        with pytest.raises(ValueError) as raised:
            exact_loads(f"[{constant}]".encode())
        assert str(raised.value) == f"{constant} is not a JSON number"
    for number in ("1e999", "-1e999"):
        with pytest.raises(ValueError) as raised:
            exact_loads(f"[{number}]".encode())
        assert str(raised.value) == f"number {number} is beyond the range of a double"
    with pytest.raises(ValueError) as raised:  # a long number is quoted by its first 40 chars
        exact_loads(b"[" + b"9" * 400 + b".0]")
    assert str(raised.value) == f"number {'9' * 40} is beyond the range of a double"


def test_exact_loads_errors_are_value_errors() -> None:
    with pytest.raises(ValueError) as raised:
        exact_loads(b"[" * 100_000)
    assert str(raised.value) == "JSON nested too deeply"
    with pytest.raises(ValueError) as raised:
        exact_loads(b'"\xff"')
    assert str(raised.value) == (
        "'utf-8' codec can't decode byte 0xff in position 1: invalid start byte"
    )


def test_a_folder_walk_follows_symlinked_folders_and_goes_on_after_a_loop(
    tmp_path: Path,
) -> None:
    (tmp_path / "root/b").mkdir(parents=True)
    (tmp_path / "root/b/x.jsonl").write_bytes(b"")
    (tmp_path / "other").mkdir()
    (tmp_path / "other/y.jsonl").write_bytes(b"")
    (tmp_path / "root/a_loop").symlink_to(tmp_path / "root")  # walked before b
    (tmp_path / "root/c_link").symlink_to(tmp_path / "other")
    root = tmp_path / "root"
    assert expand_path(str(root)) == [root / "b/x.jsonl", root / "c_link/y.jsonl"]
