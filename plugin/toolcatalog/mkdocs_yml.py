"""Reading the plugin's options from a mkdocs.yml (or a zensical.toml) without running MkDocs.

mkdocs.yml files carry tags such as `!ENV` and `!!python/name:` (Material's
emoji setup). The command line must never import or run what such a tag names,
so they are read as inert values: `!ENV` resolves from the environment (as
MkDocs does), every other tag becomes null.

Zensical reads a `zensical.toml` whose `[project]` table holds the same keys as a mkdocs.yml
(`site_url`, `docs_dir`, `use_directory_urls`, `extra_css`, ...); the plugin options go in
`[project.plugins.toolcatalog]`, which Zensical drops like every plugin it does not know.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from .files import ReadError, read_capped
from .options import Options, OptionsError, RULES
from .outputs.site import Site

PLUGIN_NAME = "toolcatalog"


class ConfigFileError(Exception):
    pass


class _InertLoader(yaml.SafeLoader):
    pass


def _env(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        names, default = [loader.construct_scalar(node)], None
    else:
        values = loader.construct_sequence(cast(yaml.SequenceNode, node))  # it refuses any other node itself
        names, default = values[:-1], values[-1] if len(values) > 1 else None
        if len(values) == 1:
            names = values
    for name in names:
        if isinstance(name, str) and name in os.environ:
            return yaml.safe_load(os.environ[name]) if os.environ[name] else ""
    return default


def _inert(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> None:
    return None


_InertLoader.add_constructor("!ENV", _env)
_InertLoader.add_multi_constructor("!", _inert)
_InertLoader.add_multi_constructor("tag:yaml.org,2002:python/", _inert)


@dataclass
class Project:
    """What the command line needs from a mkdocs.yml."""

    options: Options
    skip: list[Path]  # docs_dir and site_dir: never harvested
    directory_urls: bool = True
    site: Site = field(default_factory=Site)
    docs_dir: Path | None = None
    warnings: list[str] = field(default_factory=list)
    repo_url: str | None = None  # with edit_uri: where manifest lines link to (links.source_links)
    edit_uri: str | None = None  # as MkDocs derives it when unset
    custom_dir: Path | None = None  # the theme's custom_dir: overrides our templates and assets
    extra_assets: frozenset[str] = frozenset()  # extra_css and extra_javascript: the theme loads these itself
    zensical: bool = False  # read from a zensical.toml


MAX_CONFIG_BYTES = 16 * 1024 * 1024  # a config file is small; a huge one is refused, never read whole
# ProperDocs' order, then Zensical's own file (Zensical itself reads zensical.toml first).
CONFIG_NAMES = ("properdocs.yml", "properdocs.yaml", "mkdocs.yml", "mkdocs.yaml", "zensical.toml")


def find_config_file(workspace: Path) -> Path:
    """The config file a host would read in `workspace` (ProperDocs' order; MkDocs reads the last two)."""
    return next((workspace / name for name in CONFIG_NAMES if (workspace / name).exists()), workspace / "mkdocs.yml")


def plugin_options(config_file: Path, required: bool = False) -> Project:
    """The toolcatalog options and the folders never to harvest (docs_dir, site_dir).

    The options go through the same rules as in MkDocs (`Options.from_mapping`), so a value MkDocs
    refuses is refused here with the same message."""
    if not config_file.exists():  # anything else that exists is read (and refused) as a config file
        if required:
            raise ConfigFileError(f"config file {str(config_file)!r} does not exist")
        return Project(Options(), [])
    zensical = config_file.suffix.lower() == ".toml"
    data = _read_toml(config_file) if zensical else _read_yaml(config_file)
    base = config_file.resolve().parent
    docs_dir = base / str(data.get("docs_dir") or "docs")
    skip = [docs_dir, base / str(data.get("site_dir") or "site")]
    raw = _plugin_config(data.get("plugins")) or {}
    warnings = [f"{config_file}: `{key}` is not an option of the toolcatalog plugin; ignored" for key in raw if key not in RULES]
    try:
        options = Options.from_mapping(raw)
    except OptionsError as exc:
        raise ConfigFileError(f"{config_file}: {exc}") from None
    theme = data.get("theme")
    custom_dir = _text(theme.get("custom_dir")) if isinstance(theme, dict) else ""
    repo_url = _text(data.get("repo_url")) or None
    site = Site(
        url=_text(data.get("site_url")) or None, name=_text(data.get("site_name")),
        description=_text(data.get("site_description")), repo_url=repo_url,
    )
    return Project(
        options, skip, data.get("use_directory_urls") is not False, site, docs_dir, warnings,
        repo_url, _edit_uri(repo_url, data.get("edit_uri")), base / custom_dir if custom_dir else None,
        _extra_assets(data), zensical,
    )


def _read_yaml(config_file: Path) -> dict[str, Any]:
    try:
        text = read_capped(config_file, MAX_CONFIG_BYTES).decode("utf-8")
        data = yaml.load(text, Loader=_InertLoader) or {}
    except ReadError as exc:
        raise ConfigFileError(f"cannot read {config_file}: {exc}") from None
    except yaml.MarkedYAMLError as exc:  # one line with the place, not PyYAML's multi-line report
        mark = exc.problem_mark or exc.context_mark
        where = f"{config_file}:{mark.line + 1}:{mark.column + 1}" if mark else str(config_file)
        what = "; ".join(part for part in (exc.context, exc.problem) if part)
        raise ConfigFileError(f"{where}: not valid YAML: {what}") from None
    except (UnicodeDecodeError, yaml.YAMLError, RecursionError) as exc:
        raise ConfigFileError(f"cannot read {config_file}: {' '.join(str(exc).split())}") from None
    if not isinstance(data, dict):
        raise ConfigFileError(f"{config_file} is not a YAML mapping")
    return data


def _read_toml(config_file: Path) -> dict[str, Any]:
    """A zensical.toml's `[project]` table (the whole file when it has none, as Zensical reads it)."""
    try:
        data = tomllib.loads(read_capped(config_file, MAX_CONFIG_BYTES).decode("utf-8"))
    except ReadError as exc:
        raise ConfigFileError(f"cannot read {config_file}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:  # its message names the line and column
        raise ConfigFileError(f"{config_file}: not valid TOML: {exc}") from None
    except (UnicodeDecodeError, RecursionError) as exc:
        raise ConfigFileError(f"cannot read {config_file}: {exc}") from None
    project = data.get("project", data)
    if not isinstance(project, dict):
        raise ConfigFileError(f"{config_file}: `project` is not a table")
    return project


def _extra_assets(data: dict[str, Any]) -> frozenset[str]:
    """The site paths `extra_css` and `extra_javascript` list (an entry may be a mapping with `path`)."""
    found: set[str] = set()
    for key in ("extra_css", "extra_javascript"):
        entries = data.get(key)
        for entry in entries if isinstance(entries, list) else []:
            path = entry.get("path") if isinstance(entry, dict) else entry
            if isinstance(path, str):
                found.add(path.strip().lstrip("/"))
    return frozenset(found)


def _edit_uri(repo_url: str | None, edit_uri: Any) -> str | None:
    """`edit_uri` as MkDocs 1.6 completes it: derived from a GitHub, GitLab or Bitbucket `repo_url`
    when unset, and ending with "/"."""
    value = edit_uri if isinstance(edit_uri, str) else None
    if value is None and repo_url:
        host = urlsplit(repo_url).netloc.lower()
        value = "edit/master/docs/" if host in ("github.com", "gitlab.com") else "src/default/docs/" if host == "bitbucket.org" else None
    if value and not value.endswith("/"):
        value += "/"
    return value


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _plugin_config(plugins: Any) -> dict[str, Any] | None:
    if isinstance(plugins, dict):
        value = plugins.get(PLUGIN_NAME)
        return value if isinstance(value, dict) else {} if PLUGIN_NAME in plugins else None
    if isinstance(plugins, list):
        for item in plugins:
            if item == PLUGIN_NAME:
                return {}
            if isinstance(item, dict) and PLUGIN_NAME in item:
                value = item[PLUGIN_NAME]
                return value if isinstance(value, dict) else {}
    return None
