"""The plugin's typed MkDocs `Config`: one attribute and one docstring per option.

Each option is validated by the library's own rule for it (`options.check_value`),
so MkDocs, ProperDocs and the command line accept and refuse exactly the same
values with the same message; `to_options` hands the validated values to the
library. Only the MkDocs host layer imports this module.
"""

from __future__ import annotations

from typing import Generic, Optional, TypeVar, Union, cast

from mkdocs.config import base
from mkdocs.config.base import ValidationError

from . import inline
from .options import Options, OptionsError, check_value, default


T = TypeVar("T")


class _Rule(Generic[T], base.BaseConfigOption[T]):
    """A config option checked by the library's rule of the same name (`T`: its type once valid)."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self.default = default(name)

    def run_validation(self, value: object) -> T:
        try:
            return cast(T, check_value(self.name, value))  # the rule named `name` returns a `T`
        except OptionsError as exc:
            raise ValidationError(inline.plain(str(exc))) from None  # code spans as their words, as the CLI prints them


class ToolCatalogConfig(base.Config):
    def validate(self) -> tuple[list[tuple[str, Exception]], list[tuple[str, str]]]:
        """Each option by its own rule (MkDocs stops at the first bad one), then the rules across
        options, so that every option problem is a configuration error, as it is for the command line."""
        failed, warnings = super().validate()
        if not failed:
            try:
                to_options(self)
            except OptionsError as exc:
                failed.append((exc.option or "", ValidationError(inline.plain(str(exc)))))
        return failed, warnings

    enabled = _Rule[bool]("enabled")
    """Turn the plugin off without removing it (e.g. `enabled: !ENV [TOOLCATALOG, true]`)."""

    paths = _Rule[list[str]]("paths")
    """Folders or manifest files to harvest, relative to mkdocs.yml. Empty: search the whole
    project for the formats' conventional places (`.agent/tools/*/TOOL.md`, `.tools/**/TOOL.md`,
    `.drivers/**/DRIVER.md`, `**/smart-tool.json`, `**/SMART_TOOL.md`). A listed folder is
    searched for every manifest file name at any depth."""

    exclude = _Rule[list[str]]("exclude")
    """gitignore-style patterns (relative to mkdocs.yml) of files and folders never harvested."""

    page_dir = _Rule[str]("page_dir")
    """Folder of the generated pages inside the site: the index is `<page_dir>/index.md`,
    each tool is `<page_dir>/<id>.md`. A page you write at the same path wins over ours."""

    catalog_file = _Rule[str]("catalog_file")
    """Path of the JSON catalog inside the built site (`""` turns it off). Its JSON Schema is
    published beside the site root as `schemas/catalog-v2.schema.json`; every build validates the
    catalog against it."""

    tool_json_dir = _Rule[str]("tool_json_dir")
    """Folder of the per-tool JSON files inside the site: `<tool_json_dir>/<slug>.json` holds one
    tool's full catalog entry, named like its page. `"."` puts them at the site root; `""` turns
    them off."""

    mcp_file = _Rule[str]("mcp_file")
    """Path of the MCP `tools/list` result (MCP revision 2026-07-28: `resultType`, `tools`, `ttlMs`,
    `cacheScope`) inside the site; `""` turns it off. Invalid tools and tools without an object input
    schema are left out, each with a `mcp-omitted` warning in the catalog."""

    llms_file = _Rule[str]("llms_file")
    """Path of the llms.txt index (title, summary, one link per tool) inside the site; `""` turns
    it off (do that when another plugin writes llms.txt)."""

    source_uri = _Rule[Optional[str]]("source_uri")
    """Link template for manifest files on tool pages: `{path}` is the manifest's path relative to
    mkdocs.yml and `{line}` the line (e.g. `https://github.com/o/r/blob/main/{path}#L{line}`). By
    default it is derived from `repo_url` and `edit_uri`; with neither, paths are shown unlinked."""

    max_manifest_bytes = _Rule[int]("max_manifest_bytes")
    """Manifests larger than this are refused with a diagnostic instead of being parsed."""

    nav_title = _Rule[str]("nav_title")
    """Title of the nav section holding the catalog index and the tool pages."""

    nav_tools = _Rule[Union[bool, int]]("nav_tools")
    """Which tool pages the nav lists, grouped by format: `true` all, `false` none (only the index,
    which links every tool), or a number N: all while the catalog has at most N tools, else none.
    Themes like Material render the whole nav into every page, so a nav with 1,000 tool pages
    makes every page of the site heavier and the build several times slower (see `bench/`)."""

    run_examples = _Rule[bool]("run_examples")
    """Run every runnable example and self-description check against the real implementation
    while building. Off: examples are shown and validated, never run (status `not-run`)."""

    timeout = _Rule[float]("timeout")
    """Seconds each example process may take before its whole process group is killed. A tool's
    own smaller `timeout_ms` (AIP-14) wins."""

    jobs = _Rule[int]("jobs")
    """How many example processes run at once; 0 means one per CPU."""

    cache = _Rule[bool]("cache")
    """Reuse results while nothing they depend on changed (manifest, tool folder, drivers,
    interpreter, platform, options), so a rebuild with nothing changed starts no process; and
    reuse what parsing an unchanged TOOL.md or DRIVER.md gave."""

    cache_dir = _Rule[Optional[str]]("cache_dir")
    """Where cached results and parsed manifests live. By default outside the project, in the user
    cache folder (`$XDG_CACHE_HOME/mkdocs-toolcatalog/cache/<digest of the project's path>`, else
    `~/.cache/...`), where no commit can put a file; a relative path is relative to mkdocs.yml's
    folder. Wherever it is, only entries sealed with the build's key are used (docs/security.md)."""

    allow_mutating = _Rule[list[str]]("allow_mutating")
    """AIP-14 tool ids (shell-style globs) whose examples may run although the contract says they
    mutate something or need approval; no other AIP-14 tool with `mutates` or a non-`auto` approval
    ever runs. speccify and smart tools declare no machine-readable effects, so they are not gated:
    their examples always run (keep them side-effect free, as both formats ask)."""

    env = _Rule[list[str]]("env")
    """Environment variables passed to tools besides the allowlist (PATH, HOME, LANG, TMPDIR, ...).
    Smart tools never receive provider credentials (`*API_KEY*`, `*_TOKEN`, `OPENAI*`, ...)."""

    max_output_bytes = _Rule[int]("max_output_bytes")
    """stdout a process may write before it is stopped (stderr is capped at 64 KiB)."""

    fail_on = _Rule[list[str]]("fail_on")
    """Tool statuses that abort the build with an error, even under `-q`. Without it, failures
    and invalid manifests are warnings, which `mkdocs build --strict` turns into a failed build.
    Also takes contract quality codes (`quality-near-duplicate`, ...) and coverage thresholds:
    `[failed, {coverage_below: 0.6}]`, or `{status: [failed], codes: [...], coverage_below:
    {total: 0.6, failure: 1}}`: a tool whose score is below a threshold fails (docs/coverage.md)."""

    sandbox = _Rule[str]("sandbox")
    """How example processes are isolated: `auto` (the default) runs them in a sandbox where one
    works on this machine and says on every page and in the catalog when it could not; `required`
    never runs a tool outside the sandbox (the tool is `not-run`, with the reason); `bubblewrap` is
    `required` where the Landlock fallback is not enough: nothing runs unless bubblewrap works (for
    CI, where a refused bubblewrap would otherwise pass unnoticed); `off` runs tools as the build's
    own user. See docs/security.md."""

    allow_network = _Rule[list[str]]("allow_network")
    """Tool ids (shell-style globs) whose runs may use the network although their format cannot
    declare it (speccify, smart tools). AIP-14 and AIP-30 contracts declare network access
    themselves (`requires.network`, a `network:*` mutation, `network.egress`)."""

    sandbox_workspace = _Rule["str | list[str]"]("sandbox_workspace")
    """What a sandboxed run sees of the workspace: `tool` (the default) shows only the tool's own
    folders (its folder, a driver's folder, a smart tool's distribution root); `all` shows the whole
    workspace without `.git`; a list of folders (relative to mkdocs.yml) shows those besides the
    tool's own. Every page and the catalog say which (the sandbox profile). See docs/security.md."""

    sandbox_memory_mb = _Rule[int]("sandbox_memory_mb")
    """Memory each sandboxed process may allocate, in MiB (0: not capped). A run that hits it fails
    with "exceeded the memory limit"."""

    sandbox_processes = _Rule[int]("sandbox_processes")
    """Processes a sandboxed run may have at once (0: not capped), where the kernel can count them
    (bubblewrap with a user namespace, a build that is not root; the profile says when not)."""

    sandbox_file_mb = _Rule[int]("sandbox_file_mb")
    """The largest file a sandboxed run may write, in MiB (0: not capped)."""

    mcp_ttl_ms = _Rule[int]("mcp_ttl_ms")
    """`ttlMs` of the MCP `tools/list` result: how many milliseconds a client may reuse it."""

    mcp_cache_scope = _Rule[str]("mcp_cache_scope")
    """`cacheScope` of the MCP `tools/list` result: `public` (the same list for everyone, the
    default) or `private`."""

    mcp_exclude = _Rule[list[str]]("mcp_exclude")
    """Tool statuses left out of `mcp-tools.json` altogether (e.g. `[failed, invalid]`), so agents
    never see a tool whose examples fail. Invalid tools are always left out."""

    mcp_list = _Rule[str]("mcp_list")
    """Which tools `mcp-tools.json` lists: `usable` (the default: valid tools that passed, or were not
    run for a reason that is no failure, and smart tools' deterministic capabilities) or `all`
    (every valid tool with an object input schema, and every capability of a smart tool)."""

    results = _Rule[list[str]]("results")
    """Results files produced elsewhere (`toolcatalog check --results-out`, e.g. by sharded CI jobs):
    files, folders or globs relative to mkdocs.yml. A result is used only while its key still
    matches the tool's content; anything else runs here as usual."""


def to_options(config: ToolCatalogConfig) -> Options:
    """The library's options from a validated plugin config; the rules across options are
    checked here (OptionsError)."""
    return Options.from_mapping({name: config[name] for name in config})
