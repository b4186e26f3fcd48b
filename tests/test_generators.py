"""The demo published with Zensical and with MkDocs 2, through `toolcatalog markdown`.

Each generator is installed from the package index into a fresh venv once per session, begun as
soon as the tests are collected (once.ahead: the install mostly waits on the index; skipped, with
the reason, when it cannot be installed) and builds the demo at the domain root and under a
sub-path. Every link and asset in the built HTML must resolve to a file of the site (a link
checker, `linkcheck`), the files for agents must be byte for byte those `mkdocs build` with the
plugin publishes, and each tool page must carry the same verdict as the plugin's page.
The measurements are summed up in docs/hosts.md.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import venv
from html.parser import HTMLParser
from pathlib import Path
from typing import Callable

import pytest
import yaml

from linkcheck import broken
from manifests import write
import once
from once import run_folder, shared
from sitebuild import QUIET_HOSTS, REPO, build, toolcatalog

ZENSICAL = "zensical==0.0.73"  # what `pip install zensical` resolves to (0.0.74+ pin a zensical-ui with no files)
MKDOCS2 = "mkdocs==2.0.dev6"
MOUNTS = {"/": "https://example.org/", "/sub/": "https://example.org/sub/"}
AGENT_FILES = ("catalog.json", "mcp-tools.json", "llms.txt")


def _venv(where: Path, requirement: str) -> Path:
    """A fresh venv with `requirement` installed, or a skip naming why it could not be installed."""
    venv.EnvBuilder(with_pip=False).create(where)  # installed into by `once.installer`: no ensurepip per venv
    env = {**once.ENVIRONMENT, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}  # begun ahead, in a thread
    env.pop("PYTHONPATH", None)
    # Nothing byte-compiled: the generator's Python compiles what it imports when it first runs (into
    # the suite's PYTHONPYCACHEPREFIX where one is set, which never reads the venv's own compiled files).
    done = subprocess.run([*once.installer(where / "bin" / "python"), requirement],
                          capture_output=True, text=True, timeout=300, env=env)
    if done.returncode != 0:
        pytest.skip(f"cannot install {requirement} from the package index: {done.stderr.strip()[-500:]}")
    return where / "bin"


@once.ahead("zensical_bin")
def zensical_venv(factory: pytest.TempPathFactory) -> Path:
    return shared(factory, "venv-zensical", lambda where: _venv(where, ZENSICAL))


@once.ahead("mkdocs2_bin")
def mkdocs2_venv(factory: pytest.TempPathFactory) -> Path:
    return shared(factory, "venv-mkdocs2", lambda where: _venv(where, MKDOCS2))


@pytest.fixture(scope="session")
def zensical_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return zensical_venv(tmp_path_factory) / "bin"


@pytest.fixture(scope="session")
def mkdocs2_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return mkdocs2_venv(tmp_path_factory) / "bin"


def demo(root: Path) -> Path:
    """The project's demo manifests and a home page."""
    shutil.copytree(REPO / "examples", root / "examples")
    write(root / "docs" / "index.md", "# Home\n\nThe demo catalog.\n")
    return root


def run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **QUIET_HOSTS}
    env.pop("PYTHONPATH", None)  # the generator's venv: nothing of ours on its path
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, f"{argv} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module", params=sorted(MOUNTS))
def mount(request: pytest.FixtureRequest) -> str:
    return request.param


# Every generator builds the demo from one workspace (once per test run, for every worker): at the
# domain root, then under the sub-path, each into `site-<mount>`. Every build after the first of
# that workspace reuses the first one's results (the results key holds the workspace's path), so
# the demo's examples run once for the four generators, not once per generator or per mount.


def site_dir(mount: str) -> str:
    return "site-root" if mount == "/" else "site-sub"


def _config(mount: str) -> dict[str, object]:
    return {"site_name": "Demo", "site_url": MOUNTS[mount], "theme": {"name": "mkdocs"},
            "plugins": [{"toolcatalog": {"paths": ["examples"]}}], "site_dir": site_dir(mount)}


def _build_with_mkdocs_and_properdocs(root: Path) -> None:
    """`mkdocs build` (1.6) from a mkdocs.yml, and `properdocs build` from a properdocs.yml, of one
    workspace (`properdocs-<mount>` is the site ProperDocs built)."""
    demo(root)
    for mount in sorted(MOUNTS):
        write(root / "mkdocs.yml", yaml.safe_dump(_config(mount)))
        build(root)
    (root / "mkdocs.yml").unlink()  # ProperDocs reads properdocs.yml, not a mkdocs.yml beside it
    for mount in sorted(MOUNTS):
        write(root / "properdocs.yml", yaml.safe_dump({**_config(mount), "site_dir": "properdocs-" + site_dir(mount)}))
        build(root, host="properdocs")


def in_the_demo_workspace(factory: pytest.TempPathFactory, step: Callable[[Path], None]) -> None:
    """`step(root)` in the workspace MkDocs and ProperDocs built the demo in (built first when it
    is not yet), one step at a time. A step writes its generator's configuration (and removes it
    after): the command reads the first of properdocs.yml, mkdocs.yml, zensical.toml it finds,
    and MkDocs 2 will not run beside a mkdocs.yml. What the exports write into docs/ is replaced
    by the next export, as any generated page is; the sites MkDocs and ProperDocs built stay."""
    root = shared(factory, "gen-mkdocs", _build_with_mkdocs_and_properdocs)
    with open(run_folder(factory) / "gen-workspace.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        (root / "properdocs.yml").unlink(missing_ok=True)  # ProperDocs' builds are done
        step(root)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory, mount: str) -> Path:
    """The demo built by `mkdocs build` (1.6) with the plugin: the site the others must match."""
    return shared(tmp_path_factory, "gen-mkdocs", _build_with_mkdocs_and_properdocs) / site_dir(mount)


@pytest.fixture(scope="module")
def properdocs_site(tmp_path_factory: pytest.TempPathFactory, mount: str) -> Path:
    """The demo built by `properdocs build` with the plugin, from a properdocs.yml."""
    return shared(tmp_path_factory, "gen-mkdocs", _build_with_mkdocs_and_properdocs) / ("properdocs-" + site_dir(mount))


def export(root: Path, *args: str) -> None:
    result = toolcatalog("markdown", str(root), *args, cwd=root)
    assert result.returncode == 0, result.stderr  # no fail_on: failing and invalid tools are published
    assert "not written" not in result.stderr, result.stderr


@pytest.fixture(scope="module")
def zensical_site(tmp_path_factory: pytest.TempPathFactory, zensical_bin: Path, mount: str) -> Path:
    """The demo exported for Zensical (its zensical.toml read for site_url and the options), built by it."""
    def make(folder: Path) -> None:
        def step(root: Path) -> None:
            for each in sorted(MOUNTS):
                write(root / "zensical.toml", f'[project]\nsite_name = "Demo"\nsite_url = "{MOUNTS[each]}"\n\n'
                      '[project.plugins.toolcatalog]\npaths = ["examples"]\n')
                export(root)
                done = run([str(zensical_bin / "zensical"), "build"], cwd=root)
                assert "No issues found" in done.stdout + done.stderr
                (root / "site").rename(folder / site_dir(each))
            (root / "zensical.toml").unlink()

        in_the_demo_workspace(tmp_path_factory, step)

    return shared(tmp_path_factory, "gen-zensical", make) / site_dir(mount)


@pytest.fixture(scope="module")
def mkdocs2_site(tmp_path_factory: pytest.TempPathFactory, mkdocs2_bin: Path, mount: str) -> Path:
    """The demo exported for MkDocs 2 (options in a YAML file of another name, given with -f, since
    MkDocs 2 refuses to run beside a mkdocs.yml), built from that folder."""
    def make(folder: Path) -> None:
        def step(root: Path) -> None:
            for each in sorted(MOUNTS):
                write(root / "toolcatalog.yml", yaml.safe_dump({
                    "site_name": "Demo", "site_url": MOUNTS[each], "plugins": [{"toolcatalog": {"paths": ["examples"]}}],
                }))
                export(root, "-f", str(root / "toolcatalog.yml"), "--generator", "mkdocs2")
                run([str(mkdocs2_bin / "mkdocs"), "build", "--dir", "docs", "--output", str(folder / site_dir(each))], cwd=root)
            (root / "toolcatalog.yml").unlink()

        in_the_demo_workspace(tmp_path_factory, step)

    return shared(tmp_path_factory, "gen-mkdocs2", make) / site_dir(mount)


class _Verdicts(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if "tc-tool" in (values.get("class") or "").split() and values.get("data-tool-id"):
            self.found[values["data-tool-id"] or ""] = values.get("data-status") or ""


def verdicts(site: Path) -> dict[str, str]:
    """Each tool page's tool id and verdict, as the built HTML carries them."""
    parser = _Verdicts()
    for page in sorted(site.joinpath("tools").rglob("index.html")):
        parser.feed(page.read_text(encoding="utf-8"))
    return parser.found


def agent_files(site: Path) -> dict[str, bytes]:
    names = [*AGENT_FILES, *(p.relative_to(site).as_posix() for p in site.joinpath("tools").glob("*.json")),
             *(p.relative_to(site).as_posix() for p in site.joinpath("schemas").glob("*.json"))]
    return {name: site.joinpath(name).read_bytes() for name in sorted(names) if site.joinpath(name).is_file()}


def assert_like_reference(site: Path, reference: Path, mount: str) -> None:
    assert broken(site, mount) == []
    assert broken(reference, mount) == []  # the checker's own control: the plugin's site resolves
    expected = agent_files(reference)
    assert len([n for n in expected if n.startswith("tools/")]) >= 10
    assert agent_files(site) == expected
    assert verdicts(site) == verdicts(reference)
    assert len(set(verdicts(reference).values())) >= 4  # passed, failed, invalid, ...: not all alike


def test_properdocs_publishes_the_demo_with_every_link_resolving(properdocs_site: Path, reference: Path, mount: str) -> None:
    assert_like_reference(properdocs_site, reference, mount)


@pytest.mark.slow
def test_zensical_publishes_the_demo_with_every_link_resolving(zensical_site: Path, reference: Path, mount: str) -> None:
    assert_like_reference(zensical_site, reference, mount)
    assert (zensical_site / "toolcatalog/assets/toolcatalog.css").is_file()


@pytest.mark.slow
def test_mkdocs2_publishes_the_demo_with_every_link_resolving(mkdocs2_site: Path, reference: Path, mount: str) -> None:
    assert_like_reference(mkdocs2_site, reference, mount)
    page = (mkdocs2_site / "tools/json-sum/index.html").read_text(encoding="utf-8")
    assert "<title>json-sum</title>" in page.replace("&#45;", "-")  # the heading is the title, front matter none
    assert "title:" not in page and page.count("<h1") == 1


@pytest.mark.slow
def test_pages_written_for_mkdocs_break_under_zensical(tmp_path: Path, zensical_bin: Path) -> None:
    """The checker's control, and why the flavour exists: MkDocs' link rule under Zensical gives
    404s (the per-tool JSON links, and the stylesheet and script under a sub-path)."""
    root = demo(tmp_path)
    write(root / "zensical.toml", '[project]\nsite_name = "Demo"\nsite_url = "https://example.org/sub/"\n\n'
          '[project.plugins.toolcatalog]\npaths = ["examples"]\n')
    assert toolcatalog("markdown", str(root), "--no-run", "--generator", "mkdocs", cwd=root).returncode == 0
    run([str(zensical_bin / "zensical"), "build"], cwd=root)
    missing = {link.url for link in broken(root / "site", "/sub/") if link.in_catalog}
    assert "../../../toolcatalog/assets/toolcatalog.css" in missing and "../../word-count.json" in missing


# -- what the command reads and writes for each generator (no generator needed) ------------------


def small(root: Path) -> Path:
    from manifests import workspace_all_formats

    return workspace_all_formats(root)


def test_zensical_toml_gives_the_site_url_docs_dir_url_style_and_options(tmp_path: Path) -> None:
    root = small(tmp_path)
    write(root / "zensical.toml", '[project]\nsite_url = "https://example.org/sub/"\ndocs_dir = "pages"\n'
          'use_directory_urls = false\n\n[project.plugins.toolcatalog]\npage_dir = "catalog"\n')
    result = toolcatalog("markdown", str(root), "--no-run", cwd=root)
    assert result.returncode == 0, result.stderr
    catalog = json.loads((root / "pages/catalog.json").read_text(encoding="utf-8"))
    tool = next(t for t in catalog["tools"] if t["id"] == "add-numbers")
    assert tool["page"] == "https://example.org/sub/catalog/add-numbers.html"
    page = (root / "pages/catalog/add-numbers.md").read_text(encoding="utf-8")
    # Zensical's rule (relative to the source file pages/catalog/add-numbers.md), with file URLs
    assert 'href="../toolcatalog/assets/toolcatalog.css"' in page


def test_zensical_links_start_from_the_source_file_and_mkdocs_links_from_the_url(tmp_path: Path) -> None:
    root = small(tmp_path)
    write(root / "mkdocs.yml", "site_name: T\nplugins:\n  - toolcatalog\n")
    assert toolcatalog("markdown", str(root), "--no-run", cwd=root).returncode == 0
    mkdocs_page = (root / "docs/tools/add-numbers.md").read_text(encoding="utf-8")
    assert toolcatalog("markdown", str(root), "--no-run", "--generator", "zensical", cwd=root).returncode == 0
    zensical_page = (root / "docs/tools/add-numbers.md").read_text(encoding="utf-8")
    assert 'href="../../toolcatalog/assets/toolcatalog.css"' in mkdocs_page  # from tools/add-numbers/
    assert 'href="../toolcatalog/assets/toolcatalog.css"' in zensical_page  # from tools/add-numbers.md
    assert 'href="../add-numbers.json"' in mkdocs_page and 'href="add-numbers.json"' in zensical_page


def test_assets_listed_in_extra_css_and_extra_javascript_are_not_linked_again(tmp_path: Path) -> None:
    root = small(tmp_path)
    write(root / "zensical.toml", '[project]\nextra_css = ["toolcatalog/assets/toolcatalog.css"]\n'
          'extra_javascript = [{ path = "toolcatalog/assets/toolcatalog.js", defer = true }]\n')
    assert toolcatalog("markdown", str(root), "--no-run", cwd=root).returncode == 0
    page = (root / "docs/tools/index.md").read_text(encoding="utf-8")
    assert "toolcatalog.css" not in page and "toolcatalog.js" not in page
    assert (root / "docs/toolcatalog/assets/toolcatalog.js").is_file()  # still written: the theme loads it


def test_mkdocs2_pages_have_no_front_matter_and_one_title(tmp_path: Path) -> None:
    root = small(tmp_path)
    assert toolcatalog("markdown", str(root), "--no-run", "--generator", "mkdocs2", cwd=root).returncode == 0
    page = (root / "docs/tools/text.echo.md").read_text(encoding="utf-8")
    assert page.startswith("# Echo text\n\n<div") and "title:" not in page
    assert 'id="tc-title"' not in page


@pytest.mark.parametrize("name", ["*bold* _x_ `c` [a](b) <b>", "</title><script>x()</script>", "{{ config }} {% if %}", "ends with # #", "a\\\\b & c"])
def test_mkdocs2_title_heading_reads_as_the_name(name: str) -> None:
    import markdown
    from markupsafe import escape

    from toolcatalog.markdown_pages import _heading_text

    html = markdown.markdown("# " + _heading_text(str(escape(name))))
    assert html.startswith("<h1>") and html.endswith("</h1>") and "{" not in html
    parser = HTMLParser(convert_charrefs=True)
    text: list[str] = []
    parser.handle_data = text.append  # type: ignore[method-assign]
    parser.feed(html)
    assert "".join(text) == name


@pytest.mark.parametrize("config, expected", [
    ("mkdocs.yml", "mkdocs.yml:2:8: not valid YAML: while parsing a flow sequence; expected ',' or ']', but got ':'"),
    ("zensical.toml", "zensical.toml: not valid TOML: Expected ']' at the end of a table declaration (at line 1, column 9)"),
])
def test_config_errors_are_one_readable_line(tmp_path: Path, config: str, expected: str) -> None:
    text = "site_name: [x\nplugins: -\n" if config.endswith(".yml") else "[project\nsite_url = 1\n"
    write(tmp_path / config, text)
    result = toolcatalog("markdown", str(tmp_path), "--no-run", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().endswith(expected) and "\\n" not in result.stderr and result.stderr.count("\n") == 1


def test_mkdocs2_pages_are_replaced_and_removed_by_the_next_run_like_any_generated_page(tmp_path: Path) -> None:
    root = small(tmp_path)
    assert toolcatalog("markdown", str(root), "--no-run", "--generator", "mkdocs2", cwd=root).returncode == 0
    shutil.rmtree(root / ".tools/text.echo")
    write(root / "docs/mine.md", '# Mine\n\n<div class="toolcatalog-page">\n</div>\n')  # the site's own
    result = toolcatalog("markdown", str(root), "--no-run", "--generator", "mkdocs2", cwd=root)
    assert result.returncode == 0 and "kept" not in result.stderr, result.stderr
    assert not (root / "docs/tools/text.echo.md").exists() and (root / "docs/mine.md").is_file()
    assert toolcatalog("markdown", str(root), "--no-run", cwd=root).returncode == 0  # back to front matter: replaced
    assert (root / "docs/tools/add-numbers.md").read_text(encoding="utf-8").startswith("---\ntitle: ")
