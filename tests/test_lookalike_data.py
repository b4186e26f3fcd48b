"""The confusables data the id check reads (issue #21, memory at 5,000 tools): read as the
`confusable-homoglyphs` package reads it, without importing the package's modules (they import
`urllib.request`, 62 modules, and keep the whole data as a module global for the life of the
process), and only the table of prototypes kept."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from toolcatalog import lookalike


def test_checking_ids_imports_neither_the_packages_data_module_nor_urllib() -> None:
    code = ("import json, sys\nfrom toolcatalog import lookalike\n"
            "assert lookalike.skeleton('read-f\\u0456le') == lookalike.skeleton('read-file')\n"
            "print(json.dumps(sorted(m for m in ('confusable_homoglyphs.confusables', 'confusable_homoglyphs.utils', "
            "'urllib.request') if m in sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_the_data_is_the_one_the_package_loads() -> None:
    from confusable_homoglyphs import confusables

    assert lookalike._confusables_data() == confusables.confusables_data


def test_the_data_folder_the_package_honours_is_honoured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from confusable_homoglyphs import utils

    (tmp_path / "confusables.json").write_text(json.dumps({"\u0456": [{"c": "i", "n": "LATIN SMALL LETTER I"}]}))
    monkeypatch.setenv("CONFUSABLE_DATA", str(tmp_path))
    assert lookalike._confusables_data() == utils.load("confusables.json") == {"\u0456": [{"c": "i", "n": "LATIN SMALL LETTER I"}]}
