"""Sharded conformance: the CI workflow of docs/ci.md, run here, and the results files it passes on.

The workflow's own commands (read from the page) run as real processes: four `toolcatalog check
--shard K/4` at once on one workspace and one cache folder, then the site job's `mkdocs build
--strict`, which must start no example process and publish byte for byte what one unsharded run
publishes. Then a second CI run after an edit: only the edited tool runs. Results files are
versioned and schema-checked, merge alike in any order, and a result whose key no longer matches
is run again, never trusted.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from manifests import PLATFORM, speccify_tool, workspace_all_formats
from sitebuild import QUIET_HOSTS, mkdocs_project, toolcatalog
from toolcatalog import sandbox, sealing
from toolcatalog.conformance import resultsfile, shards
from toolcatalog.conformance.outcome import from_json

REPO = Path(__file__).resolve().parent.parent
ADD = "import json, sys\nd = json.load(sys.stdin)\nprint(json.dumps({'sum': d['a'] + d['b']}))\n"
CHECKED = re.compile(r"checked (\d+) tools in [\d.]+s: (\d+) processes started, (\d+) tools' results from the cache(?:, (\d+) from results files)?")
AGENT_FILES = ("catalog.json", "mcp-tools.json", "llms.txt")

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the workflow's steps are POSIX shell")


def workflow() -> dict[str, Any]:
    text = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.S)
    return yaml.safe_load(next(b for b in blocks if "jobs:" in b))


def recipe_plugin_options() -> dict[str, Any]:
    """The toolcatalog options of the page's `mkdocs.yml` (the block with `plugins:`)."""
    text = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
    config = yaml.safe_load(next(b for b in re.findall(r"```yaml\n(.*?)```", text, re.S) if "plugins:" in b))
    return next(p["toolcatalog"] for p in config["plugins"] if isinstance(p, dict) and "toolcatalog" in p)


def steps(job: dict[str, Any]) -> list[str]:
    return [step["run"] for step in job["steps"] if "run" in step]


SECRET = "a-test-secret-" + "0123456789abcdef" * 2  # what the repository secret holds


def shell(command: str, cwd: Path, secrets: bool = True) -> subprocess.Popen:
    """A workflow step as the runner runs it: bash, in the checkout, this environment's commands
    first, with the workflow's `env` (its secrets given their test values) and a home folder of the
    runner's own beside the checkout, where `~/.cache/mkdocs-toolcatalog` is."""
    env = {**os.environ, **QUIET_HOSTS, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "HOME": str(cwd.parent / "runner-home")}
    env.pop("XDG_CACHE_HOME", None)
    for name, value in workflow().get("env", {}).items():
        env[name] = SECRET if "secrets." in str(value) and secrets else ("" if "secrets." in str(value) else str(value))
    return subprocess.Popen(["bash", "-e", "-c", command], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def workspace(root: Path, extra: int = 5, sandbox: str = "off") -> Path:
    """Tools of every format plus `extra` adders; the sandbox is off except where the documented
    workflow is run as written (what a shard records does not depend on it, and strace makes each
    Python start cost about a second)."""
    workspace_all_formats(root)
    for n in range(extra):  # tools of different weights: 1 to 3 examples
        cases = [(f"case {i}", {"a": n, "b": i}, {"sum": n + i}) for i in range(1 + n % 3)]
        speccify_tool(root, f"add-{n}", cases, files={f"{PLATFORM}.py": ADD})
    mkdocs_project(root, {"results": ["results"], "sandbox": sandbox})
    return root


def agent_files(folder: Path) -> dict[str, bytes]:
    files = {name: (folder / name).read_bytes() for name in AGENT_FILES}
    files.update({f"tools/{p.name}": p.read_bytes() for p in sorted((folder / "tools").glob("*.json"))})
    return files


def run_ci(root: Path) -> tuple[list[tuple[int, str]], str]:
    """The check jobs, all at once, then the site job's steps; what each printed."""
    flow = workflow()
    matrix = flow["jobs"]["check"]["strategy"]["matrix"]["shard"]
    (command,) = [run for run in steps(flow["jobs"]["check"]) if "toolcatalog check" in run]
    jobs = []
    for shard in matrix:
        line = command.replace("${{ matrix.shard }}", str(shard)).replace("${{ strategy.job-total }}", str(len(matrix)))
        jobs.append(shell(line, root))
    checks = [(job.wait(timeout=600), job.stdout.read()) for job in jobs]
    # upload-artifact / download-artifact (merge-multiple): every shard's file lands in results/
    (root / "results").mkdir(exist_ok=True)
    for path in sorted((root / "shard-results").glob("*.json")):
        shutil.copy(path, root / "results" / path.name)
    site_log = []
    for run in steps(flow["jobs"]["site"]):
        if run.startswith(("sudo ", "pip ")):
            continue  # installing: done here already
        job = shell(run, root)
        code, out = job.wait(timeout=600), job.stdout.read()
        assert code == 0, f"{run}:\n{out}"
        site_log.append(out)
    return checks, "\n".join(site_log)


@pytest.mark.skipif(sandbox.probe("bubblewrap").mechanism != "bwrap", reason="the recipe demands bubblewrap (`sandbox: bubblewrap`)")
def test_the_documented_workflow_builds_the_unsharded_catalog_and_starts_no_process(tmp_path: Path) -> None:
    options = recipe_plugin_options()
    assert options["results"] == ["results"]  # where the site job downloads the shards' files
    root = workspace(tmp_path / "ws", sandbox=options["sandbox"])
    # One unsharded run, in the environment the workflow's steps get (the same PATH: the same interpreters).
    reference = shell(f"toolcatalog export --no-cache -o {tmp_path / 'reference'}", root)
    assert reference.wait(timeout=600) == 0, reference.stdout.read()
    tools = len(json.loads((tmp_path / "reference/catalog.json").read_text())["tools"])

    checks, site_log = run_ci(root)
    assert [code for code, _ in checks] == [0, 0, 0, 0], checks
    counted = [sum(int(n) for n in re.findall(r"^(\d+) tools checked", out, re.M)) for _, out in checks]
    assert all(counted) and sum(counted) == tools, "\n\n".join(out for _, out in checks)  # every tool in exactly one shard
    assert sorted(p.name for p in (root / "results").iterdir()) == [f"shard-{k}.json" for k in (1, 2, 3, 4)]
    ((_, processes, cached, given),) = CHECKED.findall(site_log)
    assert (processes, cached, given) == ("0", "0", str(tools)), site_log
    assert agent_files(root / "site") == agent_files(tmp_path / "reference")

    # The next CI run, after an edit: only the edited tool runs, in one shard; the rest is known.
    impl = root / ".agent/tools/add-2" / f"{PLATFORM}.py"
    impl.write_text(impl.read_text() + "# edited\n")
    shutil.rmtree(root / "results")
    shutil.rmtree(root / "shard-results")
    checks, site_log = run_ci(root)
    started = [int(m) for _, out in checks for m in re.findall(r"(\d+) processes started", out)]
    assert sorted(started) == [0, 0, 0, 3], checks  # add-2 has three examples
    ((_, processes, _, given),) = CHECKED.findall(site_log)
    assert (processes, given) == ("0", str(tools))
    assert agent_files(root / "site") == agent_files(tmp_path / "reference")


def test_every_job_splits_alike_and_recorded_times_balance_the_next_split(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws", extra=6)
    outs = [toolcatalog("check", "--no-cache", "--shard", f"{k}/3", "--results-out", f"r/{k}.json", cwd=root) for k in (1, 2, 3)]
    assert all(o.returncode == 0 for o in outs), [o.stderr for o in outs]
    first = [sorted(r["source"] for r in json.loads((root / f"r/{k}.json").read_text())["results"]) for k in (1, 2, 3)]
    every = [source for shard in first for source in shard]
    assert len(every) == len(set(every)) and all(first)
    for k in (1, 2, 3):  # the same inputs, the same split
        toolcatalog("check", "--no-cache", "--shard", f"{k}/3", "--results-out", f"s/{k}.json", cwd=root)
    assert [sorted(r["source"] for r in json.loads((root / f"s/{k}.json").read_text())["results"]) for k in (1, 2, 3)] == first

    # Previous results of older versions of the tools (no key matches): one tool took far longer.
    previous = json.loads((root / "r/1.json").read_text())
    previous["results"] = [r for k in (1, 2, 3) for r in json.loads((root / f"r/{k}.json").read_text())["results"]]
    heavy = ".agent/tools/add-3/TOOL.md"
    for n, item in enumerate(previous["results"]):
        item["key"] = format(n, "064x")
        item["seconds"] = 100.0 if item["source"] == heavy else 1.0
    (root / "previous.json").write_text(json.dumps(previous), encoding="utf-8")
    out = toolcatalog("check", "--no-cache", "--shard", "1/3", "--results", "previous.json", "--results-out", "t/1.json", cwd=root)
    assert out.returncode == 0, out.stderr
    assert [r["source"] for r in json.loads((root / "t/1.json").read_text())["results"]] == [heavy]


# -- results files ------------------------------------------------------------------------------------


def _checked(root: Path, *args: str) -> tuple[int, int, int]:
    out = toolcatalog("check", *args, cwd=root)
    assert out.returncode in (0, 1), out.stderr
    match = re.search(r"(\d+) processes started, (\d+) from the cache(?:, (\d+) from results files)?", out.stderr)
    assert match, out.stderr
    return int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)


def test_a_result_whose_key_no_longer_matches_is_run_again(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws", extra=2)
    assert _checked(root, "--no-cache", "--results-out", "all.json")[0] > 0
    assert _checked(root, "--no-cache", "--results", "all.json")[0] == 0
    impl = root / ".agent/tools/add-1" / f"{PLATFORM}.py"
    impl.write_text(impl.read_text() + "# edited\n")
    processes, cached, given = _checked(root, "--no-cache", "--results", "all.json")
    assert processes == 2 and cached == 0  # add-1's two examples; every other tool from the file
    assert given == len(json.loads((root / "all.json").read_text())["results"]) - 1


def _results(root: Path) -> dict[str, Any]:
    return json.loads((root / "all.json").read_text(encoding="utf-8"))


BAD_FILES = {
    "another version": lambda d: {**d, "version": 1},
    "not a results file": lambda d: {**d, "format": "something-else"},
    "a key that is not a hash": lambda d: {**d, "results": [{**d["results"][0], "key": "x"}]},
    "seconds below zero": lambda d: {**d, "results": [{**d["results"][0], "seconds": -1}]},
    "an unknown field": lambda d: {**d, "extra": 1},
    "a list": lambda d: [d],
}


@pytest.mark.parametrize("damage", BAD_FILES)
def test_a_results_file_of_another_version_or_shape_is_skipped_with_a_note(tmp_path: Path, damage: str) -> None:
    root = workspace(tmp_path / "ws", extra=1)
    _checked(root, "--no-cache", "--results-out", "all.json")
    (root / "bad.json").write_text(json.dumps(BAD_FILES[damage](_results(root))), encoding="utf-8")
    out = toolcatalog("check", "--no-cache", "--results", "bad.json", cwd=root)
    assert "bad.json" in out.stderr and "not used" in out.stderr
    assert "from results files" not in out.stderr


@pytest.mark.parametrize("planted", ["status", "examples", "internal error"])
def test_a_planted_outcome_under_the_right_key_is_not_applied(tmp_path: Path, planted: str) -> None:
    root = workspace(tmp_path / "ws", extra=1)
    _checked(root, "--no-cache", "--results-out", "all.json")
    data = _results(root)
    for item in data["results"]:
        outcome = item["outcome"]
        if planted == "status":
            outcome["status"] = "great"
        elif planted == "examples":
            outcome["examples"] = outcome["examples"] + [{"status": "passed", "detail": "", "runs": []}]
        else:
            outcome["internal_error"] = True
    (root / "all.json").write_text(json.dumps(data), encoding="utf-8")
    processes, _, given = _checked(root, "--no-cache", "--results", "all.json")
    assert given == 0 and processes > 0


def test_results_files_merge_alike_in_any_order(tmp_path: Path) -> None:
    key = sealing.Key.from_text("merge-test-" + "k" * 32, "test")

    def result(digest: str, status: str, seconds: float) -> resultsfile.Result:
        example = {"status": status, "detail": "", "runs": []}
        outcome = from_json({"status": status, "status_detail": "", "examples": [example], "processes": 0})
        return resultsfile.Result(digest, "t", "speccify", "t/TOOL.md", seconds, outcome)

    keys = [format(n, "064x") for n in range(3)]
    files = []
    for n, items in enumerate([[result(keys[0], "passed", 1.0), result(keys[1], "failed", 2.0)],
                               [result(keys[1], "passed", 3.0), result(keys[2], "passed", 0.5)],
                               [result(keys[0], "failed", 9.0)]]):
        path = tmp_path / f"{n}.json"
        resultsfile.write(path, items, key)
        files.append(path)
    merged = []
    for order in ([0, 1, 2], [2, 1, 0], [1, 2, 0]):
        found = resultsfile.ResultSet()
        for index in order:
            assert resultsfile.read_into(files[index], found, key) is None
        merged.append({k: (r.outcome, r.seconds) for k, r in found.by_key.items()})
    assert merged[0] == merged[1] == merged[2]
    assert set(merged[0]) == set(keys)


def test_a_written_results_file_is_read_back_and_matches_its_schema(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws", extra=1)
    _checked(root, "--no-cache", "--shard", "1/1", "--results-out", "all.json")
    found = resultsfile.ResultSet()
    assert resultsfile.read_into(root / "all.json", found, sealing.build_key(root)) is None
    data = _results(root)
    assert data["shard"] == {"index": 1, "count": 1} and data["version"] == resultsfile.VERSION
    assert len(found.by_key) == len(data["results"]) > 0


def test_missing_results_are_only_noted_and_the_build_runs_as_usual(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws", extra=0)
    out = toolcatalog("check", "--no-cache", cwd=root)  # mkdocs.yml names results/, which is not there
    assert out.returncode == 0, out.stderr
    assert "results 'results': nothing there" in out.stderr


# -- the split ---------------------------------------------------------------------------------------------


def test_the_split_is_stable_balanced_and_covers_every_tool_once() -> None:
    import random

    items = [shards.Work(("speccify", f"t{n}/TOOL.md", f"t{n}"), weight) for n, weight in
             enumerate([5.0, 1.0, 1.0, 1.0, 1.0, 4.0, 2.0, 2.0, 0.001, 0.001, 3.0, 3.0])]
    for count in (1, 2, 3, 4, 12, 20):
        parts = shards.assign(items, count)
        assert all(1 <= p <= count for p in parts)
        loads = [sum(i.weight for i, p in zip(items, parts) if p == k) for k in range(1, count + 1)]
        assert max(loads) - min(loads) <= max(i.weight for i in items)
        shuffled = list(range(len(items)))
        random.Random(count).shuffle(shuffled)
        again = shards.assign([items[i] for i in shuffled], count)
        assert [again[shuffled.index(i)] for i in range(len(items))] == parts  # the order given does not matter


@pytest.mark.parametrize("spec", ["0/4", "5/4", "1/0", "a/b", "2", "1/-3"])
def test_a_bad_shard_is_a_usage_error(tmp_path: Path, spec: str) -> None:
    root = workspace(tmp_path / "ws", extra=0)
    out = toolcatalog("check", "--shard", spec, cwd=root)
    assert out.returncode == 2 and "--shard" in out.stderr
