"""The results cache: what a rebuild reuses, what it must not, and entries it must not trust.

A rebuild with nothing changed starts no process; an edit re-runs only the tool it touches; a
result from another checkout, an internal error or an entry of the wrong shape is never
reused; hashing a tool folder never follows links or opens FIFOs. Real files, real
subprocesses; whatever hung before its fix runs in a subprocess with a timeout. Checks run with
`sandbox: off` (SANDBOX_OFF): what is cached does not depend on the sandbox, and the sandbox's
own tests (test_sandbox.py, test_scale.py's warm build) run it; under strace every Python start
costs about a second on a 2-core machine.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from manifests import ECHO_STDIN_PY, PLATFORM, counting_smart_cli, mixed_workspace, smart_tool, speccify_tool, write
from procs import no_leftovers  # noqa: F401 (an autouse fixture)
from sitebuild import build, catalog_text, mkdocs_project, run_check, tool_of, toolcatalog, toolcatalog_process
from toolcatalog import sealing
from toolcatalog.conformance import cache as cache_mod

SANDBOX_OFF = {"sandbox": "off"}

pytestmark = pytest.mark.skipif(os.name != "posix" or not Path("/proc/self/stat").exists(), reason="POSIX process groups and /proc")


# -- reuse -------------------------------------------------------------------------------------------


def test_cache_skips_unchanged_tools_and_survives_corruption(tmp_path: Path) -> None:
    work = tmp_path / "ws"
    mixed_workspace(work)
    options = dict(cache=True, cache_dir=str(tmp_path / "cache"), **SANDBOX_OFF)

    first, stats = run_check(work, **options)
    full = stats.processes
    assert full > 4 and stats.cached == 0
    reference = catalog_text(first)

    second, stats = run_check(work, **options)
    assert stats.processes == 0 and stats.cached == 4
    assert catalog_text(second) == reference

    impl = work / ".agent/tools/adder" / f"{PLATFORM}.py"
    impl.write_text(impl.read_text() + "# touched\n")
    third, stats = run_check(work, **options)
    assert stats.processes == 2 and stats.cached == 3  # only adder's two examples ran again
    assert catalog_text(third) == reference

    files = [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    assert files
    garbage = [b"\x00\xff garbage", b"{\"key\": ", b"null", b"[]", b"{}"]
    for index, path in enumerate(files):
        path.write_bytes(garbage[index % len(garbage)])
    fourth, stats = run_check(work, **options)
    assert stats.processes == full and stats.cached == 0
    assert catalog_text(fourth) == reference
    fifth, stats = run_check(work, **options)  # the rebuilt cache is used again
    assert stats.processes == 0 and catalog_text(fifth) == reference


def test_cache_entries_with_the_right_key_but_a_broken_outcome_are_not_fatal(tmp_path: Path) -> None:
    work = tmp_path / "ws"
    mixed_workspace(work)
    options = dict(cache=True, cache_dir=str(tmp_path / "cache"), **SANDBOX_OFF)
    first, stats = run_check(work, **options)
    full, reference = stats.processes, catalog_text(first)
    # Each of these would crash a naive `apply`, whatever the tool: each must count as a miss.
    broken = ["text", [1], {"status": "passed", "examples": 5}, {"checks": [{"nope": 1}]}, {"capabilities": [7]}]
    for index, path in enumerate(sorted(p for p in (tmp_path / "cache").glob("??/*.json"))):
        key = read_entry(path)["key"]
        write_entry(path, {"key": key, "outcome": broken[index % len(broken)]}, work)
    again, stats = run_check(work, **options)
    assert stats.processes == full and stats.cached == 0
    assert catalog_text(again) == reference


def test_a_second_mkdocs_build_starts_no_process(tmp_path: Path) -> None:
    mixed_workspace(tmp_path)
    mkdocs_project(tmp_path, {"jobs": 2})
    first = build(tmp_path)
    started = re.findall(r"checked 4 tools in [0-9.]+s: (\d+) processes started", first.stderr)
    assert len(started) == 1 and int(started[0]) > 4, first.stderr
    reference = (tmp_path / "site" / "catalog.json").read_text()
    second = build(tmp_path)
    assert re.search(r"checked 4 tools in [0-9.]+s: 0 processes started, 4 tools' results from the cache", second.stderr), second.stderr
    assert (tmp_path / "site" / "catalog.json").read_text() == reference


def test_a_tool_that_writes_into_its_own_folder_is_a_cache_hit_on_the_next_build(tmp_path: Path) -> None:
    impl = textwrap.dedent("""\
        import json, sys
        data = json.load(sys.stdin)
        with open("runs.log", "a") as log:  # cwd is the tool's own folder
            log.write("ran\\n")
        print(json.dumps(data))
        """)
    folder = speccify_tool(tmp_path / "ws", "writer", [("one", {"x": 1}, {"x": 1})], files={f"{PLATFORM}.py": impl})
    options = dict(cache=True, cache_dir=str(tmp_path / "cache"), sandbox="off")  # sandboxed, the write never reaches the folder
    first, stats = run_check(tmp_path / "ws", **options)
    assert stats.processes == 1 and tool_of(first, "writer").status == "passed"
    assert (folder / "runs.log").read_text() == "ran\n"

    second, stats = run_check(tmp_path / "ws", **options)  # what `mkdocs serve` does after seeing the write
    assert stats.processes == 0 and stats.cached == 1
    assert (folder / "runs.log").read_text() == "ran\n"  # nothing ran, nothing written: no rebuild loop
    assert catalog_text(second) == catalog_text(first)

    (folder / "TOOL.md").write_text((folder / "TOOL.md").read_text() + "\n")  # a real edit still runs it
    _, stats = run_check(tmp_path / "ws", **options)
    assert stats.processes == 1


# -- never reused ----------------------------------------------------------------------------------


WHERE_CLI = textwrap.dedent("""\
    import json, os, sys
    args = sys.argv[1:]
    if args in (["--help"], ["-h"]):
        print("Nothing here is model-backed.\\n- `where` [deterministic] -- Runs in " + os.getcwd() + ".")
    elif args == ["where", "--help"]:
        print("help")
    elif args == ["where"]:
        print(json.dumps({"cwd": os.getcwd()}))
    else:
        print(json.dumps({"error": {"code": "unknown", "message": "no such capability", "remedy": "see --help"}}))
        sys.exit(2)
    """)


def test_a_cached_result_from_another_checkout_carries_none_of_its_paths(tmp_path: Path) -> None:
    # A smart tool's key names no path of the checkout (`python3` is found on PATH), so before the
    # fix the second checkout reused the first one's result, capability summary and all.
    first = tmp_path / "checkout-one"
    smart_tool(first, "where", WHERE_CLI, smoke=["where"])
    options = dict(cache=True, cache_dir=str(tmp_path / "shared-cache"), **SANDBOX_OFF)
    one, stats = run_check(first, **options)
    assert stats.processes > 0 and tool_of(one, "where").status == "passed", tool_of(one, "where").checks
    # The raw result, as cached, names checkout one; the model sees it scrubbed.
    assert any(str(first) in p.read_text() for p in (tmp_path / "shared-cache").rglob("*.json"))
    assert tool_of(one, "where").capabilities[0].summary == "Runs in dists/where."

    second = tmp_path / "checkout-two"
    shutil.copytree(first, second, symlinks=True)
    two, stats = run_check(second, **options)
    assert stats.cached == 0 and stats.processes > 0  # not reused across checkouts
    text = catalog_text(two)
    assert str(first) not in text and os.path.realpath(first) not in text
    assert "Runs in dists/where." in text  # its own path, scrubbed

    _, stats = run_check(second, **options)
    assert stats.cached == 1  # the same checkout still hits


def counted_workspace(root: Path, calls_log: Path) -> None:
    speccify_tool(root, "adder", [("one", {"x": 1}, {"x": 1}), ("two", {"x": 2}, {"x": 2})],
                  files={f"{PLATFORM}.py": ECHO_STDIN_PY})
    smart_tool(root, "smarty", counting_smart_cli(2, calls_log), smoke=["cap-0"])


PLANTED = {
    "unknown tool status": lambda o: {**o, "status": "bogus"},
    "exit code as text": lambda o: {**o, "examples": [{**e, "runs": [{**r, "exit_code": "zero"} for r in e["runs"]]} for e in o["examples"]]},
    "exit code as a bool": lambda o: {**o, "examples": [{**e, "runs": [{**r, "exit_code": True} for r in e["runs"]]} for e in o["examples"]]},
    "example status not-run": lambda o: {**o, "examples": [{**e, "status": "not-run"} for e in o["examples"]]},
    "run status unknown": lambda o: {**o, "examples": [{**e, "runs": [{**r, "status": "ok"} for r in e["runs"]]} for e in o["examples"]]},
    "status detail not text": lambda o: {**o, "status_detail": 5},
    "processes as a bool": lambda o: {**o, "processes": True},
    "lone surrogate": lambda o: {**o, "status_detail": "\ud800"},
    "NaN in an output": lambda o: {**o, "examples": [{**e, "runs": [{**r, "actual": float("nan")} for r in e["runs"]]} for e in o["examples"]]},
    "check status unknown": lambda o: {**o, "checks": [{**c, "status": "ok"} for c in o.get("checks", [])] or [{"id": "x", "status": "ok"}]},
    "capability kind unknown": lambda o: {**o, "capabilities": [{"name": "x", "kind": "magic", "summary": None}]},
    "tool kind unknown": lambda o: {**o, "kind": "psychic"},
    "driver reason not text": lambda o: {**o, "drivers": {"d": 1}},
    "too few examples": lambda o: {**o, "examples": o["examples"][:1]} if len(o["examples"]) > 1 else {**o, "examples": [1]},
    "planted internal error": lambda o: {**o, "internal_error": True},
}


def read_entry(path: Path) -> Any:
    """A results cache entry's JSON, its seal line aside."""
    return json.loads(path.read_text(encoding="utf-8").partition("\n")[2])


def write_entry(path: Path, entry: Any, workspace: Path) -> None:
    """`entry` sealed with the build's key, as only a holder of the key can write it: what the
    cache checks besides the seal (the shape of an outcome) is tested with these."""
    path.write_text(sealing.build_key(workspace).seal(cache_mod.LABEL, json.dumps(entry)), encoding="utf-8")


def _plant(cache_dir: Path, change: Any, workspace: Path) -> int:
    """Rewrite every cache entry's outcome with `change`, keeping its key and sealing it with the
    build's key; how many it changed."""
    planted = 0
    for path in sorted(cache_dir.glob("??/*.json")):  # parsed manifests are in parse/ (test_scale.py plants those)
        entry = read_entry(path)
        before = json.dumps(entry["outcome"], sort_keys=True)
        after = json.dumps(change(entry["outcome"]), sort_keys=True)
        if after != before:
            write_entry(path, {"key": entry["key"], "outcome": json.loads(after)}, workspace)
            planted += 1
    return planted


@pytest.mark.parametrize("damage", sorted(PLANTED))
def test_a_planted_cache_entry_of_the_wrong_shape_is_a_miss(tmp_path: Path, damage: str) -> None:
    work = tmp_path / "ws"
    counted_workspace(work, tmp_path / "calls.log")
    options = dict(cache=True, cache_dir=str(tmp_path / "cache"), **SANDBOX_OFF)
    first, stats = run_check(work, **options)
    reference = catalog_text(first)
    planted = _plant(tmp_path / "cache", PLANTED[damage], work)
    assert planted >= 1

    again, stats = run_check(work, **options)
    assert stats.cached == 2 - planted and stats.processes > 0  # each planted entry is a miss: run again
    assert catalog_text(again) == reference


def test_the_command_survives_a_planted_cache_entry_without_a_traceback(tmp_path: Path) -> None:
    work = tmp_path / "ws"
    counted_workspace(work, tmp_path / "calls.log")
    mkdocs_project(work, {"cache_dir": str(tmp_path / "cache"), "jobs": 2, "sandbox": "off"})  # calls.log is outside the workspace
    first = toolcatalog("check", str(work), "--json")
    assert first.returncode == 0, first.stderr
    calls = len((tmp_path / "calls.log").read_text().splitlines())
    assert _plant(tmp_path / "cache", PLANTED["unknown tool status"], work) == 2

    again = toolcatalog("check", str(work), "--json")
    assert "Traceback" not in again.stderr
    assert again.returncode == 0, again.stderr
    assert again.stdout == first.stdout
    assert len((tmp_path / "calls.log").read_text().splitlines()) == 2 * calls  # the smart tool ran again


# -- hashing a tool folder (the cache key) -------------------------------------------------------


@pytest.mark.parametrize("special", ["dev-zero-link", "fifo"])
def test_a_link_to_a_device_or_a_fifo_in_a_tool_folder_does_not_hang_the_build(tmp_path: Path, special: str) -> None:
    folder = speccify_tool(tmp_path, "plain", [("one", {"x": 1}, {"x": 1})], files={f"{PLATFORM}.py": ECHO_STDIN_PY})
    if special == "dev-zero-link":
        os.symlink("/dev/zero", folder / "data")
    else:
        os.mkfifo(folder / "pipe")
    write(tmp_path / "mkdocs.yml", yaml.safe_dump({"site_name": "x", "plugins": [{"toolcatalog": {"cache_dir": str(tmp_path / "cache")}}]}))
    result = toolcatalog_process("check", str(tmp_path), "--json", timeout=120)  # a subprocess: a hang fails
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout)["tools"][0]["status"] == "passed"


HASH_SCRIPT = """
import json, os, sys
from pathlib import Path
from toolcatalog.files import hash_tree
root = Path(sys.argv[1])
hashes = {"first": hash_tree(root), "again": hash_tree(root)}
(root / "a.txt").write_text("changed")  # a file's content
hashes["content"] = hash_tree(root)
(root / "link").unlink()
os.symlink("b.txt", root / "link")  # where a link points
hashes["relinked"] = hash_tree(root)
(root / "b.txt").write_text("changed too")  # the file a link points at: not followed
hashes["target-content"] = hash_tree(root)
(root / "pipe").unlink()
(root / "pipe").write_text("")  # a FIFO replaced by an empty file
hashes["kind"] = hash_tree(root)
hashes["zero-root"] = hash_tree(root / "zero")  # a link as the root
hashes["dangling-root"] = hash_tree(root / "dangling")
json.dump(hashes, sys.stdout)
"""


def test_hash_tree_hashes_links_as_their_target_text_and_special_files_by_kind(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    write(root / "a.txt", "one")
    write(root / "b.txt", "two")
    os.symlink("a.txt", root / "link")
    os.symlink("/dev/zero", root / "zero")
    os.symlink("/no/such/target", root / "dangling")
    (root / "sub").mkdir()
    os.symlink("../sub", root / "linked-folder")
    os.mkfifo(root / "pipe")
    result = subprocess.run([sys.executable, "-c", HASH_SCRIPT, str(root)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    h = json.loads(result.stdout)
    assert h["again"] == h["first"]
    assert h["content"] != h["first"]
    assert h["relinked"] != h["content"]
    assert h["target-content"] != h["relinked"]  # b.txt itself is hashed as a file
    assert h["kind"] != h["target-content"]
    assert h["zero-root"] != h["dangling-root"]
