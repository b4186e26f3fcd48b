"""The agent index: mcp-tools.json as a current MCP `tools/list` result, verification and provenance
in every file for agents, digests and `toolcatalog verify`, and an agent-side script that uses
only documented fields.

Sites are real MkDocs builds or real `toolcatalog` runs (in this process, see sitebuild.py) in
temporary folders; git checkouts are made with the real `git`; the agent script runs as its own
process with no site-packages at all, calling the `toolcatalog` command as a process.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import rfc8785

from manifests import ECHO_STDIN_PY, PLATFORM, speccify_tool
from mcprevision import LIST_TOOLS_RESULT, VENDOR, validate_tools_list
from sitebuild import REPO, build, mkdocs_project, toolcatalog, workspace_all_formats, write
from toolcatalog import catalogdiff, checkout, sandbox
from toolcatalog.outputs import integrity

GIT = shutil.which("git")
FACTS = sandbox.probe("auto")
needs_git = pytest.mark.skipif(GIT is None, reason="needs git")

FAILING_TOOL = """
---
name: always-wrong
description: Says four when asked for two plus two, to fail its example.
inputs:
  type: object
  properties:
    a: {type: number}
outputs:
  type: object
effects: none
---

## Examples

### two and two
input: {"a": 2}
output: {"sum": 4}
"""

FAILING_PY = """
import json, sys
json.load(sys.stdin)
print(json.dumps({"sum": 5}))
"""


def run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*args], cwd=cwd, capture_output=True, text=True, timeout=300, env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL)


def git(*args: str, cwd: Path) -> str:
    env = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    result = run(GIT or "git", *args, cwd=cwd, env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def workspace(root: Path) -> Path:
    """One passing tool of every format, plus a speccify tool whose example fails."""
    workspace_all_formats(root)
    write(root / ".agent/tools/always-wrong/TOOL.md", FAILING_TOOL)
    write(root / ".agent/tools/always-wrong/linux.py", FAILING_PY)
    return root


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


# -- mcp-tools.json: revision 2026-07-28 --------------------------------------------------------------
def test_the_vendored_schema_is_the_published_file_with_its_licence() -> None:
    data = (VENDOR / "schema.json").read_bytes()
    blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    assert blob == "213c58f6d9a1c2ce6ad055afe90bbdb095a29ee8"  # schema/2026-07-28/schema.json at tag 2026-07-28
    assert "Apache License" in (VENDOR / "LICENSE").read_text(encoding="utf-8")
    readme = (VENDOR / "README.md").read_text(encoding="utf-8")
    assert "Apache-2.0 AND MIT" in readme and "5f5440bb26a62e2cf3440b92da5a667efa03b267" in readme
    required = LIST_TOOLS_RESULT["$defs"]["ListToolsResult"]["required"]
    assert sorted(required) == ["cacheScope", "resultType", "tools", "ttlMs"]


def test_mcp_tools_json_is_a_list_tools_result_of_revision_2026_07_28(tmp_path: Path) -> None:
    workspace(tmp_path)
    mkdocs_project(tmp_path, {"mcp_ttl_ms": 600000, "mcp_cache_scope": "private", "mcp_exclude": ["failed"]}, repo_url="https://example.org/team/tools")
    build(tmp_path)
    document = load(tmp_path / "site/mcp-tools.json")
    validate_tools_list(document)
    assert (document["ttlMs"], document["cacheScope"]) == (600000, "private")
    catalog = load(tmp_path / "site/catalog.json")
    assert document["_meta"] == {
        "toolcatalog/catalog": "catalog.json",
        "toolcatalog/catalog-digest": catalog["catalog_digest"],
        "toolcatalog/mcp-revision": "2026-07-28",
    }
    # The failing tool is left out because the site asked for it; the catalog says so.
    names = [t["name"] for t in document["tools"]]
    assert names == ["add-numbers", "text.echo", "tiny-smart.count"]  # a smart tool's deterministic capability too
    excluded = [d for d in catalog["diagnostics"] if d["code"] == "mcp-excluded"]
    assert [(d["path"], d["severity"]) for d in excluded] == [(".agent/tools/always-wrong/TOOL.md", "warning")]
    assert "`mcp_exclude`" in excluded[0]["message"]

    entries = {t["entry_digest"]: t for t in catalog["tools"]}
    for tool in document["tools"]:
        entry = entries[tool["_meta"]["toolcatalog/digest"]]
        assert tool["_meta"]["toolcatalog/verification"] == entry["verification"]
        assert tool["_meta"]["toolcatalog/provenance"] == entry["provenance"]
        assert tool.get("annotations", {}) == entry["annotations"]
        assert tool["_meta"].get("toolcatalog/annotation-reasons", {}) == entry["annotation_reasons"]
    echo = document["tools"][1]
    # AIP-14 says enough for all four hints, each with the contract fields it follows from.
    assert echo["annotations"] == {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
    reasons = echo["_meta"]["toolcatalog/annotation-reasons"]
    assert reasons["readOnlyHint"]["fields"] == ["mutates", "risk_level"] and "`mutates: []`" in reasons["readOnlyHint"]["reason"]
    assert echo["inputSchema"]["$schema"] == "https://json-schema.org/draft/2020-12/schema"

    # The schema really checks what the revision requires: without ttlMs, or with a bad scope, it fails.
    for broken in ({k: v for k, v in document.items() if k != "ttlMs"}, {**document, "cacheScope": "shared"},
                   {k: v for k, v in document.items() if k != "resultType"}):
        with pytest.raises(jsonschema.ValidationError):
            validate_tools_list(broken)


def test_mcp_defaults_and_the_export_command_agree(tmp_path: Path) -> None:
    workspace(tmp_path)
    mkdocs_project(tmp_path, {"run_examples": False})
    result = toolcatalog("export", "--no-run", "-o", str(tmp_path / "out"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    document = load(tmp_path / "out/mcp-tools.json")
    validate_tools_list(document)
    assert (document["ttlMs"], document["cacheScope"]) == (3_600_000, "public")
    assert [t["name"] for t in document["tools"]] == ["add-numbers", "always-wrong", "text.echo"]  # nothing excluded by default


# -- verification ----------------------------------------------------------------------------------
def test_verification_counts_what_ran_in_every_file(tmp_path: Path) -> None:
    workspace(tmp_path)
    mkdocs_project(tmp_path)
    build(tmp_path)
    catalog = load(tmp_path / "site/catalog.json")
    tools = {t["id"]: t for t in catalog["tools"]}
    wrong = tools["always-wrong"]["verification"]
    assert wrong["status"] == "failed"
    assert wrong["examples"] == {"total": 1, "passed": 0, "failed": 1, "not_run": 0}
    assert wrong["processes"] == 1
    sandbox = tools["always-wrong"]["sandbox"]  # sandboxed where a sandbox works here, and then observed
    assert wrong["sandboxed"] is sandbox["sandboxed"] and wrong["observed_effects"] == sandbox["observed"]
    assert wrong["page"] == tools["always-wrong"]["page"] == "tools/always-wrong/"
    smart = tools["tiny-smart"]["verification"]
    # A rule whose precondition does not hold (no `requires` to check) is skipped, never passed.
    assert smart["status"] == "passed" and smart["checks"]["failed"] == 0 and smart["checks"]["passed"] > 0
    assert smart["checks"]["passed"] + smart["checks"]["not_run"] == smart["checks"]["total"]
    for tool in catalog["tools"]:
        one = load(tmp_path / "site" / tool["json"])
        assert one["verification"] == tool["verification"] and one["provenance"] == tool["provenance"]
        counts = tool["verification"]["examples"]
        assert counts["total"] == counts["passed"] + counts["failed"] + counts["not_run"] == len(tool["examples"])


WRITES_TMP_PY = """
import json, sys
data = json.load(sys.stdin)
open(data["path"], "w").write("x")
print(json.dumps({"ok": True}))
"""


@pytest.mark.skipif(FACTS.mechanism != "bwrap" or not FACTS.traced, reason=f"needs bubblewrap and strace: {FACTS.reason or FACTS.untraced}")
def test_what_the_sandbox_saw_reaches_the_mcp_list(tmp_path: Path) -> None:
    target = Path("/tmp") / f"tc-agent-index-{os.getpid()}-{tmp_path.name}"
    speccify_tool(tmp_path, "sneaky", [("writes /tmp", {"path": str(target)}, {"ok": True})], files={f"{PLATFORM}.py": WRITES_TMP_PY})
    speccify_tool(tmp_path, "quiet", [("echo", {"x": 1}, {"x": 1})], files={f"{PLATFORM}.py": ECHO_STDIN_PY})
    mkdocs_project(tmp_path, {"mcp_list": "all"})  # by default a caught tool is not listed at all
    build(tmp_path)
    assert not target.exists()
    listed = {t["name"]: t["_meta"]["toolcatalog/verification"] for t in load(tmp_path / "site/mcp-tools.json")["tools"]}
    sneaky, quiet = listed["sneaky"], listed["quiet"]
    # `effects: none`, yet it wrote a file: flagged where agents look, with the path named.
    assert sneaky["status"] == "failed" and sneaky["sandboxed"] is True and sneaky["caught_mutating"] is True
    assert any(str(target) in effect for effect in sneaky["undeclared_effects"]) and sneaky["verified_no_effects"] is False
    assert quiet["status"] == "passed" and quiet["sandboxed"] is True and quiet["verified_no_effects"] is True
    assert quiet["undeclared_effects"] == [] and quiet["observed_effects"]["traced"] is True
    catalog = {t["id"]: t for t in load(tmp_path / "site/catalog.json")["tools"]}
    assert catalog["sneaky"]["verification"] == sneaky and catalog["sneaky"]["sandbox"]["caught_mutating"] is True


def test_nothing_run_is_never_reported_as_verified(tmp_path: Path) -> None:
    workspace(tmp_path)
    result = toolcatalog("validate", "--json", str(tmp_path), cwd=REPO)
    for tool in json.loads(result.stdout)["tools"]:
        verification = tool["verification"]
        assert verification["status"] == "not-run" and verification["processes"] == 0
        assert verification["sandboxed"] is None  # nothing ran, so nothing was (or was not) sandboxed
        assert verification["examples"]["passed"] == verification["examples"]["failed"] == 0


# -- provenance --------------------------------------------------------------------------------------
@needs_git
def test_provenance_names_repository_commit_and_path_in_the_checkout(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    site_dir = repo / "catalog-site"  # mkdocs.yml below the checkout's top folder
    workspace(site_dir)
    mkdocs_project(site_dir, {"run_examples": False}, repo_url="https://example.org/team/tools")
    git("init", "-q", "-b", "main", cwd=repo)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "tools", cwd=repo)
    head = git("rev-parse", "HEAD", cwd=repo)
    build(site_dir)
    catalog = load(site_dir / "site/catalog.json")
    echo = next(t for t in catalog["tools"] if t["id"] == "text.echo")
    assert echo["provenance"] == {"repository": "https://example.org/team/tools", "commit": head, "path": "catalog-site/.tools/text.echo/TOOL.md"}
    assert echo["source"] == ".tools/text.echo/TOOL.md"  # `source` stays relative to mkdocs.yml
    # The command line reads repo_url from mkdocs.yml and gives the same bytes for every file it
    # writes; the catalogs differ only in the digest manifest they name (the site's lists its pages too).
    result = toolcatalog("export", "--no-run", "-o", str(tmp_path / "out"), cwd=site_dir)
    assert result.returncode == 0, result.stderr
    exported = load(tmp_path / "out/catalog.json")
    assert {**exported, "written": None, "catalog_digest": None} == {**catalog, "written": None, "catalog_digest": None}
    published = load(site_dir / "site/catalog.digests.json")["files"]
    for path, digest in load(tmp_path / "out/catalog.digests.json")["files"].items():  # llms.txt's and the MCP list's but
        assert published[path] == digest, path  # for the catalog digest they quote
    mcp = load(site_dir / "site/mcp-tools.json")
    assert all(t["_meta"]["toolcatalog/provenance"]["commit"] == head for t in mcp["tools"])


@needs_git
def test_commit_is_read_from_git_files_in_every_layout(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write(repo / "a.txt", "a")
    git("init", "-q", "-b", "main", cwd=repo)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "one", cwd=repo)
    first = git("rev-parse", "HEAD", cwd=repo)
    assert checkout.find(repo) == checkout.Checkout(repo, first)  # loose ref
    write(repo / "b.txt", "b")
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "two", cwd=repo)
    second = git("rev-parse", "HEAD", cwd=repo)
    git("pack-refs", "--all", cwd=repo)
    assert not (repo / ".git/refs/heads/main").exists()
    assert checkout.find(repo / "sub" / "folder").commit == second  # packed ref, found from below
    git("checkout", "-q", "--detach", first, cwd=repo)
    assert checkout.find(repo).commit == first  # detached HEAD
    git("checkout", "-q", "main", cwd=repo)
    git("worktree", "add", "-q", str(tmp_path / "wt"), "-b", "side", first, cwd=repo)
    assert checkout.find(tmp_path / "wt") == checkout.Checkout(tmp_path / "wt", first)  # a `.git` file, commondir
    unborn = tmp_path / "empty"
    unborn.mkdir()
    git("init", "-q", cwd=unborn)
    assert checkout.find(unborn) == checkout.Checkout(unborn, None)  # no commit yet: absent, not invented
    outside = tmp_path / "plain"
    outside.mkdir()
    assert checkout.find(outside) is None or checkout.find(outside).top != outside


@needs_git
def test_sha256_repositories_give_their_object_name(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write(repo / "a.txt", "a")
    init = run(GIT or "git", "init", "-q", "--object-format=sha256", cwd=repo)
    if init.returncode != 0:
        pytest.skip("this git cannot make SHA-256 repositories")
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "one", cwd=repo)
    head = git("rev-parse", "HEAD", cwd=repo)
    assert len(head) == 64 and checkout.find(repo).commit == head


def test_outside_a_checkout_there_is_no_commit(tmp_path: Path) -> None:
    workspace(tmp_path)
    mkdocs_project(tmp_path, {"run_examples": False}, repo_url="https://example.org/team/tools")
    if checkout.find(tmp_path) is not None:
        pytest.skip("the temporary folder is inside a git checkout")
    build(tmp_path)
    for tool in load(tmp_path / "site/catalog.json")["tools"]:
        assert tool["provenance"] == {"repository": "https://example.org/team/tools", "commit": None, "path": tool["source"]}


def test_a_damaged_git_folder_gives_no_commit(tmp_path: Path) -> None:
    git_dir = tmp_path / ".git"
    write(git_dir / "HEAD", "ref: refs/heads/../../../etc/passwd\n")
    assert checkout.find(tmp_path) == checkout.Checkout(tmp_path, None)
    write(git_dir / "HEAD", "ref: refs/heads/main\n")
    write(git_dir / "refs/heads/main", "not a commit\n")
    assert checkout.find(tmp_path).commit is None
    write(git_dir / "refs/heads/main", "ref: refs/heads/main\n")  # a loop
    assert checkout.find(tmp_path).commit is None
    write(git_dir / "refs/heads/main", "A" * 40 + "\n")  # upper case is not how git writes names
    assert checkout.find(tmp_path).commit is None
    write(git_dir / "refs/heads/main", "a" * 40 + "\n")
    assert checkout.find(tmp_path).commit == "a" * 40
    if hasattr(os, "mkfifo"):
        (git_dir / "refs/heads/main").unlink()
        os.mkfifo(git_dir / "refs/heads/main")  # never blocks
        assert checkout.find(tmp_path).commit is None


def test_the_runner_identity_starts_no_process(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "events = []\n"
        "sys.addaudithook(lambda event, args: events.append(event) if event.startswith(('subprocess.', 'os.posix_spawn', 'os.exec', 'os.fork', 'os.system')) else None)\n"
        "from toolcatalog.outputs.provenance import runner\n"
        "print(runner())\n"
        "print(events)\n"
    )
    result = run(sys.executable, "-c", script, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    identity, events = result.stdout.splitlines()
    assert events == "[]", events
    assert "CPython" in identity or "PyPy" in identity


# -- integrity ---------------------------------------------------------------------------------------
def test_digests_are_sha256_over_rfc_8785(tmp_path: Path) -> None:
    workspace(tmp_path)
    write(tmp_path / ".agent/tools/big-numbers/TOOL.md", """
        ---
        name: big-numbers
        description: Contract data with numbers JSON readers hold as doubles.
        inputs:
          type: object
          properties:
            n: {type: integer, maximum: 9007199254740993, minimum: -10000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000}
        outputs: {type: object}
        effects: none
        ---
        """)
    result = toolcatalog("export", "--no-run", "-o", str(tmp_path / "out"), str(tmp_path), cwd=REPO)
    assert result.returncode == 0, result.stderr
    catalog = load(tmp_path / "out/catalog.json")
    for entry in catalog["tools"]:
        body = {k: v for k, v in entry.items() if k != "entry_digest"}
        as_doubles = json.loads(json.dumps(body), parse_int=lambda text: int(text) if abs(int(text)) < 2**53 else float(text))
        assert entry["entry_digest"] == "sha256:" + hashlib.sha256(rfc8785.dumps(as_doubles)).hexdigest()
    body = {k: v for k, v in catalog.items() if k != "catalog_digest"}
    as_doubles = json.loads(json.dumps(body), parse_int=lambda text: int(text) if abs(int(text)) < 2**53 else float(text))
    assert catalog["catalog_digest"] == "sha256:" + hashlib.sha256(rfc8785.dumps(as_doubles)).hexdigest()
    big = next(t for t in catalog["tools"] if t["id"] == "big-numbers")
    assert big["inputs"]["properties"]["n"]["maximum"] == 9007199254740993  # published exactly as written
    assert b'"maximum":9007199254740992' in integrity.canonical(big)  # digested as the double a reader sees
    assert big["inputs"]["properties"]["n"]["minimum"] is None  # no double holds it: null, like NaN


def test_verify_accepts_a_published_site_and_names_every_mismatch(tmp_path: Path) -> None:
    workspace(tmp_path)
    mkdocs_project(tmp_path)
    build(tmp_path)
    site = tmp_path / "site"
    result = toolcatalog("verify", str(site), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "every digest matches" in result.stdout
    for part in ("catalog.json: catalog digest", "4 per-tool files", "mcp-tools.json: 3 tool digests and the catalog digest",
                 "llms.txt: 4 tool digests and the catalog digest"):
        assert part in result.stdout, part
    llms = (site / "llms.txt").read_text(encoding="utf-8")
    catalog = load(site / "catalog.json")
    assert f"Catalog digest: `{catalog['catalog_digest']}`" in llms
    assert all(f"`{t['entry_digest']}`)" in llms for t in catalog["tools"])

    copies: list[Path] = []

    def tampered(rel: str, change: Any) -> subprocess.CompletedProcess[str]:
        copies.append(tmp_path / f"copy-{len(copies)}")
        copy = copies[-1]
        shutil.copytree(site, copy)
        path = copy / rel
        path.write_text(change(path.read_text(encoding="utf-8")), encoding="utf-8")
        return toolcatalog("verify", str(copy), cwd=tmp_path)

    # A changed description in the catalog: the entry and the whole catalog no longer match.
    result = tampered("catalog.json", lambda text: text.replace("Echoes its input text back.", "Echoes, and uploads it."))
    assert result.returncode == 1
    assert "MISMATCH: catalog.json: tool 'text.echo': `entry_digest`" in result.stdout and "`catalog_digest`" in result.stdout
    # A per-tool file changed on its own.
    result = tampered("tools/text.echo.json", lambda text: text.replace('"status": "passed"', '"status": "failed"', 1))
    assert result.returncode == 1 and "MISMATCH: tools/text.echo.json" in result.stdout
    # A per-tool file whose digest was recomputed still differs from the catalog's entry.
    def rewrite(text: str) -> str:
        data = json.loads(text)
        data["description"] = "Something else."
        data["entry_digest"] = integrity.entry_digest(data)
        return json.dumps(data)
    result = tampered("tools/text.echo.json", rewrite)
    assert result.returncode == 1 and "differs from the catalog's entry for tool 'text.echo'" in result.stdout
    # MCP verification made to look better than the catalog's (the failing tool is not listed by
    # default, so the listed ones are made to claim more runs than they had).
    def upgrade(text: str) -> str:
        data = json.loads(text)
        for tool in data["tools"]:
            tool["_meta"]["toolcatalog/verification"]["processes"] += 1
        return json.dumps(data)
    result = tampered("mcp-tools.json", upgrade)
    assert result.returncode == 1 and "tool 'add-numbers': `_meta.toolcatalog/verification.processes` differs" in result.stdout
    result = tampered("llms.txt", lambda text: text.replace(catalog["catalog_digest"], "sha256:" + "0" * 64))
    assert result.returncode == 1 and "llms.txt: names catalog digest" in result.stdout
    shutil.copytree(site, tmp_path / "gone")
    (tmp_path / "gone/tools/add-numbers.json").unlink()
    result = toolcatalog("verify", str(tmp_path / "gone"), cwd=tmp_path)
    assert result.returncode == 1 and "tools/add-numbers.json" in result.stdout


def test_verify_with_an_absolute_site_url_and_moved_files(tmp_path: Path) -> None:
    workspace(tmp_path)
    plugin = {"catalog_file": "api/catalog.json", "tool_json_dir": "api/tools", "mcp_file": "api/mcp.json", "run_examples": False}
    mkdocs_project(tmp_path, plugin, site_url="https://tools.example.org/docs/")
    build(tmp_path)
    site = tmp_path / "site"
    result = toolcatalog("verify", str(site), "--catalog", "api/catalog.json", "--mcp", "api/mcp.json", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 per-tool files" in result.stdout and "api/mcp.json: 3 tool digests and the catalog digest" in result.stdout
    result = toolcatalog("verify", str(site / "api/catalog.json"), cwd=tmp_path)  # the catalog alone
    assert result.returncode == 0 and "per-tool" not in result.stdout


def test_verify_refuses_what_it_cannot_check(tmp_path: Path) -> None:
    result = toolcatalog("verify", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 2 and "does not exist" in result.stderr
    write(tmp_path / "catalog.json", (REPO / "tests/golden/catalog-v1.json").read_text(encoding="utf-8"))
    result = toolcatalog("verify", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 2 and "version 1 catalog; only version 2 catalogs carry digests" in result.stderr
    write(tmp_path / "catalog.json", "[" * 100_000)
    result = toolcatalog("verify", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 2 and "not a readable JSON file" in result.stderr


# -- versions ----------------------------------------------------------------------------------------
def test_diff_reads_version_1_and_version_2_catalogs(tmp_path: Path) -> None:
    old = catalogdiff.load(REPO / "tests/golden/catalog-v1.json")
    assert old["version"] == 1
    workspace_all_formats(tmp_path)
    write(tmp_path / ".tools/bad.tool/TOOL.md", "---\nname: Bad\nid: bad.tool\ndescription: d\nversion: '1'\ninputs: {}\noutputs: {}\nrunner: x\n---\n")
    write(tmp_path / "new.json", toolcatalog("validate", "--json", str(tmp_path), cwd=REPO).stdout)
    new = catalogdiff.load(tmp_path / "new.json")
    assert new["version"] == 2
    report = catalogdiff.diff(old, new)
    assert not report.breaking and not report.changed  # the same workspace: nothing but the format moved
    result = toolcatalog("diff", str(REPO / "tests/golden/catalog-v1.json"), str(tmp_path / "new.json"), cwd=tmp_path)
    assert result.returncode == 0 and "No tool changed." in result.stdout
    write(tmp_path / "v3.json", json.dumps({**new, "version": 3}))
    result = toolcatalog("diff", str(tmp_path / "new.json"), str(tmp_path / "v3.json"), cwd=tmp_path)
    assert result.returncode == 2 and "reads versions 1 and 2" in result.stderr


# -- an agent ----------------------------------------------------------------------------------------
def test_an_agent_script_keeps_only_verified_tools_and_checks_digests(tmp_path: Path) -> None:
    workspace(tmp_path)
    mkdocs_project(tmp_path)
    build(tmp_path)
    script = REPO / "examples/agent/pick_tools.py"
    source = script.read_text(encoding="utf-8")
    assert "mkdocs" not in source.split('"""', 2)[2] and "import toolcatalog" not in source and "from toolcatalog" not in source
    command = tmp_path / "bin" / "toolcatalog"
    write(command, f"#!/bin/sh\nexec {sys.executable} -m toolcatalog.cli \"$@\"\n")
    command.chmod(0o755)
    env = {"PATH": f"{command.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    # -I -S: no site-packages at all, so the script cannot import MkDocs or the package.
    result = run(sys.executable, "-I", "-S", str(script), str(tmp_path / "site"), cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    kept = [line.split("\t") for line in result.stdout.splitlines()]
    catalog = load(tmp_path / "site/catalog.json")
    by_id = {t["id"]: t for t in catalog["tools"]}
    assert [row[0] for row in kept] == ["add-numbers", "text.echo", "tiny-smart"]  # always-wrong is dropped
    assert all(row[1] == by_id[row[0]]["entry_digest"] for row in kept)
    assert dict((row[0], row[2]) for row in kept) == {"add-numbers": "mcp:add-numbers", "text.echo": "mcp:text.echo", "tiny-smart": "mcp:tiny-smart.count"}
    assert "3 usable, 1 dropped" in result.stderr

    # A catalog edited after the build (a failed tool made to look verified) is refused outright.
    text = (tmp_path / "site/catalog.json").read_text(encoding="utf-8")
    data = json.loads(text)
    for tool in data["tools"]:
        tool["verification"]["status"] = "passed"
        tool["verification"]["examples"]["failed"] = 0
    (tmp_path / "site/catalog.json").write_text(json.dumps(data), encoding="utf-8")
    result = run(sys.executable, "-I", "-S", str(script), str(tmp_path / "site"), cwd=tmp_path, env=env)
    assert result.returncode == 1 and "does not verify" in result.stderr and result.stdout == ""
