"""The file digests `files.hash_tree` remembers for the life of the process (a file whose identity
has not changed is not read again under `mkdocs serve`): each is kept as two small bytes objects,
not as a tuple of its path and integers and the digest's hex text (issue #21, memory: 4.7 MB at
5,000 tools, alive to the end of every build)."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolcatalog import files


def _tree(root: Path) -> Path:
    for name, text in (("TOOL.md", "# a tool\n"), ("linux.py", "print('hi')\n"), ("data/x.json", "{}\n")):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_a_settled_file_is_read_once_and_remembered_compactly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "_DIGESTS", {})
    monkeypatch.setattr(files, "_SETTLED_NS", -(1 << 62))  # files written just now count as settled
    reads: list[Path] = []
    content_digest = files._content_digest
    monkeypatch.setattr(files, "_content_digest", lambda path: reads.append(path) or content_digest(path))
    root = _tree(tmp_path / "tool")
    first = files.hash_tree(root)
    assert len(reads) == 3
    assert len(files._DIGESTS) == 3
    assert all(type(k) is bytes and len(k) == 16 and type(v) is bytes and len(v) == 32 for k, v in files._DIGESTS.items())
    assert files.hash_tree(root) == first and len(reads) == 3  # remembered: not read again, the same digest
    # ... which is the digest of the files as read (nothing remembered)
    monkeypatch.setattr(files, "_DIGESTS", {})
    monkeypatch.setattr(files, "_SETTLED_NS", 1 << 62)
    assert files.hash_tree(root) == first and len(reads) == 6 and files._DIGESTS == {}


def test_a_changed_file_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "_DIGESTS", {})
    monkeypatch.setattr(files, "_SETTLED_NS", -(1 << 62))
    root = _tree(tmp_path / "tool")
    first = files.hash_tree(root)
    (root / "linux.py").write_text("print('changed')\n")
    second = files.hash_tree(root)
    assert second != first
    (root / "linux.py").write_text("print('hi')\n")
    assert files.hash_tree(root) == first
