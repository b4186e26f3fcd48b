"""A traced write that changed nothing is said to be blocked only when the sandbox refused it.

Before, every traced write whose call did not succeed was `blocked`, "tried to write X (blocked by
the sandbox)": also an `open` in a folder that does not exist (ENOENT: the sandbox had nothing to do
with it) and a call that never returned (its process ended in it: whether it wrote is unknown).
Now each trace carries the outcome of every write: succeeded, failed with a named error, or never
returned. A call that never returned is `unknown`; a failure where the sandbox lets the run write
(its private /tmp, its scratch folder, its working copy) is `failed` (with the error); a failure
anywhere else is `blocked` under bubblewrap whatever the error (its view is its own: a host folder
it hides fails with ENOENT, as `.git/hooks/x` does here), and under Landlock (the host's own view)
when refused (EROFS, EACCES, EPERM), else `failed`. Shown with real sandboxed runs under both tracers,
on a built site (which `toolcatalog verify` accepts), and piece by piece: what a run's report keeps
and how each is said (what each tracer records: tests/test_trace_outcomes.py).
"""

from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path

import pytest

from manifests import PLATFORM, speccify_tool
from procs import no_leftovers  # noqa: F401 (an autouse fixture)
from sitebuild import build, catalog as site_catalog, catalog_text, mkdocs_project, run_check, tool_of, toolcatalog
from toolcatalog import sandbox
from toolcatalog.conformance.effects import Declared, undeclared
from toolcatalog.observed import ELSEWHERE, WORKSPACE, FileChange, Observed
from toolcatalog.sandbox import trace
from tracers import tracer  # noqa: F401 (a fixture: each test once per tracer)

FACTS = sandbox.probe("auto")
needs_trace = pytest.mark.skipif(FACTS.mechanism != "bwrap" or not FACTS.traced or not sys.platform.startswith("linux"),
                                 reason=f"needs bubblewrap and a tracer; this machine offers {FACTS.mechanism or 'no sandbox'}")

# The tool: one write per example. "never returns" opens a FIFO for writing from a thread (no
# reader: the call sleeps), waits until the kernel shows that thread asleep in the call, prints its
# output and ends the process with the call still under way.
WRITES_PY = """
import errno, json, os, sys, threading, time
data = json.load(sys.stdin)
action = data["do"]
if action == "never returns":
    thread = threading.Thread(target=lambda: os.open(data["path"], os.O_WRONLY), daemon=True)
    thread.start()
    asleep = False
    deadline = time.monotonic() + 20
    while not asleep and time.monotonic() < deadline:
        time.sleep(0.01)
        try:
            call = open(f"/proc/self/task/{thread.native_id}/syscall").read().split()[0]
            stat = open(f"/proc/self/task/{thread.native_id}/stat").read()
        except OSError:
            continue
        asleep = call in ("2", "257") and stat.rpartition(")")[2].split()[0] == "S"  # open, openat
    print(json.dumps({"ok": asleep}), flush=True)
    os._exit(0)
try:
    open(data["path"], "w")
    result = "written"
except OSError as exc:
    result = errno.errorcode[exc.errno]
print(json.dumps({"ok": result == data["expect"]}))
"""
OK = {"ok": True}


def unique(prefix: str) -> str:
    return f"{prefix}-{os.getpid()}-{random.randrange(10**9)}"


def writer(root: Path) -> tuple[Path, Path, Path]:
    """The tool `writes` in `root` (declaring no effects), and the three paths it writes: one in a
    folder that does not exist, a FIFO in the workspace, a file of the workspace (read-only). The
    runs must see the whole workspace (`sandbox_workspace: all`): the tool's own folder is a copy,
    which leaves FIFOs out."""
    missing = Path("/tmp") / unique("tc-no-such-folder") / "x.txt"  # in the run's own /tmp: it may write there
    (root / ".git" / "hooks").mkdir(parents=True)  # on the host; hidden in the sandbox (an empty .git)
    fifo = root / "fifos" / "pipe"
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    owned = root / "OWNED.md"
    speccify_tool(root, "writes", [
        ("missing folder", {"do": "open", "path": str(missing), "expect": "ENOENT"}, OK),
        ("never returns", {"do": "never returns", "path": str(fifo)}, OK),
        ("read-only", {"do": "open", "path": str(owned), "expect": "EROFS"}, OK),
        ("hidden folder", {"do": "open", "path": str(root / ".git" / "hooks" / "post-checkout"), "expect": "ENOENT"}, OK),
    ], files={f"{PLATFORM}.py": WRITES_PY}, effects="none; pure computation")
    return missing, fifo, owned


@needs_trace
def test_a_write_is_blocked_only_when_refused(tmp_path: Path, tracer: str) -> None:
    missing, _fifo, _owned = writer(tmp_path)
    catalog, _ = run_check(tmp_path, jobs=1, sandbox_workspace="all")
    tool = tool_of(catalog, "writes")
    runs = {e.title: e.runs[0] for e in tool.examples}
    for title, run in runs.items():
        # The tool saw each call fail as planned (the FIFO's: asleep in it when the process ended).
        assert run.actual == OK, (title, run)
        assert run.observed is not None and run.observed.traced and not run.observed.incomplete, (title, run)
    changes = {title: {(f.path, f.where, f.change) for f in run.observed.writes()} for title, run in runs.items()}
    assert changes == {
        "missing folder": {(str(missing), ELSEWHERE, "failed")},
        "never returns": {("fifos/pipe", WORKSPACE, "unknown")},
        "read-only": {("OWNED.md", WORKSPACE, "blocked")},
        "hidden folder": {(".git/hooks/post-checkout", WORKSPACE, "blocked")},  # ENOENT: the sandbox hid it
    }, changes
    assert [f.error for run in runs.values() for f in run.observed.writes()] == ["ENOENT", "", "", ""]
    details = {title: run.detail for title, run in runs.items()}
    assert details["missing folder"].startswith(
        f"undeclared effect: tried to write {missing} (the call failed with ENOENT: nothing was written)"), details
    assert details["never returns"].startswith(
        "undeclared effect: tried to write the workspace file fifos/pipe (the call never returned: whether it wrote is unknown)"), details
    assert details["read-only"].startswith("undeclared effect: tried to write the workspace file OWNED.md (blocked by the sandbox)"), details
    assert details["hidden folder"].startswith("undeclared effect: tried to write the workspace file .git/hooks/post-checkout (blocked by the sandbox)"), details
    assert "blocked" not in details["missing folder"] + details["never returns"]
    # The catalog says the same, the error beside the failed write only.
    entry = next(t for t in json.loads(catalog_text(catalog))["tools"] if t["id"] == "writes")
    files = [f for e in entry["examples"] for r in e["runs"] for f in r["observed"]["files"] if f["where"] != "scratch"]
    assert sorted(files, key=lambda f: f["change"]) == [
        {"path": "OWNED.md", "where": WORKSPACE, "change": "blocked"},
        {"path": ".git/hooks/post-checkout", "where": WORKSPACE, "change": "blocked"},
        {"path": str(missing), "where": ELSEWHERE, "change": "failed", "error": "ENOENT"},
        {"path": "fifos/pipe", "where": WORKSPACE, "change": "unknown"},
    ], files


@needs_trace
def test_a_site_shows_failed_and_unknown_writes_and_verifies(tmp_path: Path) -> None:
    missing, _fifo, _owned = writer(tmp_path)
    mkdocs_project(tmp_path, {"cache": False, "sandbox_workspace": "all"})
    build(tmp_path)
    site = tmp_path / "site"
    page = (site / "tools" / "writes" / "index.html").read_text(encoding="utf-8")
    assert f"tried to write {missing} (the call failed with ENOENT: nothing was written)" in page
    assert 'class="tc-change tc-change-failed" title="The call failed: nothing was written">failed</span>' in page
    assert '<small class="tc-change-error">(ENOENT)</small>' in page
    assert 'class="tc-change tc-change-unknown"' in page and "the call never returned: whether it wrote is unknown" in page
    # The badges of the writes outside the working copy name each attempt for what it was.
    assert f">failed to write {missing}</span>" in page and ">maybe wrote the workspace file fifos/pipe</span>" in page
    assert ">blocked from writing the workspace file OWNED.md</span>" in page
    # Each failure's phrases one to a line, none cut inside its own parentheses; and no "differs"
    # beside an output equal to the expected one (these runs fail for their effects alone).
    assert f"<li>undeclared effect: tried to write {missing} (the call failed with ENOENT: nothing was written)</li>" in page
    assert page.count('<ul class="tc-differences">') == 4 and ">differs</span>" not in page
    entry = next(t for t in site_catalog(tmp_path)["tools"] if t["id"] == "writes")
    # Not read-only for agents (outside a sandbox a refused write succeeds), and said as an attempt, not a change.
    hint = entry["annotation_reasons"]["readOnlyHint"]
    assert entry["annotations"]["readOnlyHint"] is False and "an effect, or an attempt at one" in hint["reason"], hint
    observed = entry["sandbox"]["observed"]
    assert {f["change"] for f in observed["files"]} >= {"failed", "unknown", "blocked"}, observed
    result = toolcatalog("verify", str(site), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


# -- what a run's report keeps ------------------------------------------------------------------


def launch(mechanism: str = "landlock") -> sandbox.Launch:
    return sandbox.Launch(argv=[], env={}, cwd=Path("/"), mechanism=mechanism, network=False, workspace="/ws", root=Path("/"),
                          areas=[], log=None, scratch_host="/scratch", cwd_inside="/ws")


def test_each_file_is_listed_once_by_its_weakest_claim() -> None:
    """A path tried more than once: an attempt that wrote wins over one that failed (never "nothing
    was written" for a file a later call wrote), a call that never returned over a refusal."""
    seen = trace.Seen(started=True, writes=[
        trace.Write("/x/a", False, "ENOENT"), trace.Write("/x/a", True),
        trace.Write("/x/b", False, "EROFS"), trace.Write("/x/b", False, trace.UNFINISHED), trace.Write("/x/b", False, "EROFS"),
        trace.Write("/x/c", False, "EEXIST"), trace.Write("/x/c", False, "EPERM"),
        trace.Write("/ws/d", False, "EACCES"), trace.Write("/x/e", False, "ENOTDIR"), trace.Write("/x/f", False, ""),
    ])
    observed = Observed(traced=True, files=[FileChange("done.txt", WORKSPACE, "created")])
    launch()._add_trace(observed, seen, set())
    assert [(f.path, f.where, f.change, f.error) for f in observed.files] == [
        ("done.txt", WORKSPACE, "created", ""),
        ("/x/a", ELSEWHERE, "temporary", ""), ("/x/b", ELSEWHERE, "unknown", ""), ("/x/c", ELSEWHERE, "blocked", ""),
        ("d", WORKSPACE, "blocked", ""), ("/x/e", ELSEWHERE, "failed", "ENOTDIR"), ("/x/f", ELSEWHERE, "failed", ""),
    ], observed.files


def test_under_bubblewrap_the_place_decides_not_the_error() -> None:
    """Outside the places a bubblewrap run may write, its view is its own (a few host folders bound
    read-only, the rest absent or empty): a write there that failed, with whatever error, is the
    sandbox's doing as far as anyone can tell, `blocked`; where it may write, a failure is the call's
    own, `failed`, even `EACCES` (a file's own mode); a call a signal cut short is `unknown`."""
    seen = trace.Seen(started=True, writes=[
        trace.Write("/ws/.git/hooks/post-checkout", False, "ENOENT"),  # a host folder the sandbox hides
        trace.Write("/ws/docs/index.md", False, "EXDEV"),  # a rename onto a read-only file
        trace.Write("/var/tmp/x", False, "ENOENT"),  # not in its view at all
        trace.Write("/tmp/no-such/x", False, "ENOENT"),  # its own /tmp
        trace.Write("/tmp/no-such/ro", False, "EACCES"),
        trace.Write("/x/y", False, "ERESTARTSYS"),
    ])
    observed = Observed(traced=True)
    launch("bwrap")._add_trace(observed, seen, set())
    assert [(f.path, f.where, f.change, f.error) for f in observed.files] == [
        (".git/hooks/post-checkout", WORKSPACE, "blocked", ""), ("docs/index.md", WORKSPACE, "blocked", ""),
        ("/var/tmp/x", ELSEWHERE, "blocked", ""), ("/tmp/no-such/x", ELSEWHERE, "failed", "ENOENT"),
        ("/tmp/no-such/ro", ELSEWHERE, "failed", "EACCES"), ("/x/y", ELSEWHERE, "unknown", ""),
    ], observed.files
    # Under Landlock the run sees the host's own folders: there the error decides.
    observed = Observed(traced=True)
    launch("landlock")._add_trace(observed, seen, set())
    assert [f.change for f in observed.files] == ["failed", "failed", "failed", "failed", "blocked", "unknown"], observed.files


def test_the_words_for_each_attempt() -> None:
    observed = Observed(traced=True, files=[FileChange("/x/e", ELSEWHERE, "failed", "ENOTDIR"), FileChange("/x/f", ELSEWHERE, "failed"),
                                            FileChange("/x/b", ELSEWHERE, "unknown"), FileChange("/x/c", ELSEWHERE, "blocked")])
    assert undeclared(Declared(judged=True, network=False), observed, "/ws") == [
        "tried to write /x/e (the call failed with ENOTDIR: nothing was written)",
        "tried to write /x/f (the call failed: nothing was written)",
        "tried to write /x/b (the call never returned: whether it wrote is unknown)",
        "tried to write /x/c (blocked by the sandbox)",
    ]
    # And back from the JSON the cache and the catalog hold.
    again = Observed.from_json(json.loads(json.dumps(observed.as_dict())))
    assert again.files == observed.files and "error" not in observed.as_dict()["files"][1]
