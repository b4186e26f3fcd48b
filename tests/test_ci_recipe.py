"""The GitHub Actions recipe in docs/ci.md runs as pasted: a valid workflow, actions that still run.

GitHub removed Node 20 from its runners on 2026-09-16; an action whose major version runs on Node 20
no longer starts. The recipe's shell steps themselves run locally in tests/test_shards.py.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from sitebuild import REPO

# The first major of each action that runs on Node 24 (what GitHub's runners have since 2026-09-16).
NODE24_MAJORS = {
    "actions/checkout": 5,
    "actions/setup-python": 6,
    "actions/cache": 5,
    "actions/cache/restore": 5,
    "actions/cache/save": 5,
    "actions/upload-artifact": 6,
    "actions/download-artifact": 7,
    "actions/upload-pages-artifact": 5,
    "actions/deploy-pages": 5,
}


def recipe_text() -> str:
    text = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
    return next(b for b in re.findall(r"```yaml\n(.*?)```", text, re.S) if "jobs:" in b)


def recipe() -> dict[str, Any]:
    return yaml.safe_load(recipe_text())


def uses(flow: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(name, step["uses"], step) for name, job in flow["jobs"].items() for step in job.get("steps", []) if "uses" in step]


def test_the_recipe_is_a_valid_github_workflow(tmp_path: Path) -> None:
    path = tmp_path / "docs.yml"
    path.write_text(recipe_text(), encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows", str(path)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_action_runs_on_node_24() -> None:
    for job, action, _ in uses(recipe()):
        name, _, version = action.partition("@")
        assert name in NODE24_MAJORS, f"{job}: {action} is not an action known to run on Node 24"
        major = re.fullmatch(r"v(\d+)(?:\.\d+)*", version)
        assert major, f"{job}: {action} is not pinned to a version tag"
        assert int(major.group(1)) >= NODE24_MAJORS[name], f"{job}: {action} runs on Node 20, which GitHub's runners no longer have"


def test_the_cache_is_saved_even_when_the_build_fails_but_not_when_cancelled() -> None:
    flow = recipe()
    saves = [(job, step) for job, action, step in uses(flow) if action.startswith("actions/cache/save@")]
    assert saves, "the recipe saves the cache"
    for job, step in saves:
        # After a failed build too (`!cancelled()`, no other status function), and only from pushes: a pull
        # request's run, whose workflow the pull request may change, never writes the cache (docs/ci.md).
        condition = re.fullmatch(r"\$\{\{(.*)\}\}", step.get("if", ""))
        assert condition, f"{job}: the cache save has no `if: ${{{{ ... }}}}`, so it is skipped after a failed build"
        terms = [t.strip() for t in condition.group(1).split("&&")]
        assert "!cancelled()" in terms and "||" not in step["if"], f"{job}: the cache save must run after a failed build too"
        assert not any(re.search(r"\b(success|failure|always|cancelled)\(\)", t) for t in terms if t != "!cancelled()"), step["if"]
        assert "github.event_name == 'push'" in terms, f"{job}: only pushes save the cache"
        steps = flow["jobs"][job]["steps"]
        for earlier in steps[steps.index(step) - 1::-1]:
            if "mkdocs build" in earlier.get("run", ""):
                break
            assert earlier.get("if") == "${{ !cancelled() }}", f"{job}: a step between the build and the cache save is skipped on failure: {earlier}"


def test_pages_are_deployed_only_from_the_default_branch_with_pages_permissions() -> None:
    flow = recipe()
    deploy = [job for job, action, _ in uses(flow) if action.startswith("actions/deploy-pages@")]
    assert len(deploy) == 1, "one job deploys the site"
    job = flow["jobs"][deploy[0]]
    assert job["permissions"] == {"pages": "write", "id-token": "write"}
    assert job["environment"]["name"] == "github-pages"
    for name, action, step in uses(flow):
        if action.startswith(("actions/upload-pages-artifact@", "actions/deploy-pages@")):
            condition = step.get("if") or flow["jobs"][name].get("if", "")
            assert "github.ref == 'refs/heads/main'" in condition and "github.event_name == 'push'" in condition, (name, action)
    assert flow["permissions"] == {"contents": "read"}, "everything else runs with a read-only token"


def test_setup_steps_update_apt_lift_the_apparmor_restriction_and_install_the_theme() -> None:
    flow = recipe()
    for name, job in flow["jobs"].items():
        runs = "\n".join(step.get("run", "") for step in job.get("steps", []))
        if "apt-get install" in runs:
            assert runs.index("apt-get update") < runs.index("apt-get install"), name
            assert "kernel.apparmor_restrict_unprivileged_userns=0" in runs, name
        if "mkdocs build" in runs:
            assert "mkdocs-material" in runs, f"{name}: the recipe's mkdocs.yml uses Material, which must be installed"
        for step in job.get("steps", []):
            if step.get("uses", "").startswith("actions/checkout@"):
                assert step.get("with", {}).get("persist-credentials") is False, f"{name}: tools run from the checkout: keep the token out of .git/config"
