"""The team site: the demo catalog plus the public corpus placed as a team would place it
(teamcorpus), built with Material (light and dark schemes) and the plain `mkdocs` theme, once per
test run (conftest's `team_site`). Without ../shared/corpus it holds the demo catalog alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

import teamcorpus
from sitebuild import build, write

CORPUS = teamcorpus.available()

MATERIAL = {
    "name": "material", "font": False, "features": ["navigation.sections"],
    # The scheme follows the browser's preference, so a dark context sees the dark (slate) scheme.
    "palette": [
        {"media": "(prefers-color-scheme: light)", "scheme": "default", "toggle": {"icon": "material/brightness-7", "name": "Dark mode"}},
        {"media": "(prefers-color-scheme: dark)", "scheme": "slate", "toggle": {"icon": "material/brightness-4", "name": "Light mode"}},
    ],
}
PLAIN = {"name": "mkdocs", "highlightjs": False}  # its default loads highlight.js from a CDN
THEMES = {"material": MATERIAL, "mkdocs": PLAIN}


def site_config(root: Path, theme: str, **extra: Any) -> str:
    name = f"mkdocs-{theme}.yml"
    config = {
        "site_name": "Team tools", "repo_url": "https://example.invalid/team", "edit_uri": "blob/main/docs/",
        "theme": THEMES[theme], "site_dir": f"site-{theme}",
        "plugins": ["search", {"toolcatalog": {"jobs": 2}}], **extra,
    }
    write(root / name, yaml.safe_dump(config, sort_keys=False))
    return name


# A tool that declares no effects and is caught writing a long path in HOME: its page names the
# write in a badge, which must wrap on a phone (it held the path on one line, 550 px wide, until the
# corpus's smart tools, run where uv is installed, showed it).
CAUGHT_WRITER = ('''---
name: cache-warmer
description: Warms the team's lookup cache. Declares no effects, yet writes its cache file in HOME.
inputs: {type: object, properties: {key: {type: string}}}
outputs: {type: object, required: [ok], properties: {ok: {type: boolean}}}
effects: none
requires: python3
platforms: linux
---

## Examples

### one key
input: {"key": "alpha"}
output: {"ok": true}
''', '''import json, os, sys
json.load(sys.stdin)
folder = os.path.join(os.environ["HOME"], ".cache", "team-lookup-cache-warmer", "a-rather-long-folder-name-no-phone-fits-on-one-line")
os.makedirs(folder, exist_ok=True)
with open(os.path.join(folder, "warmed-entries-index.json"), "w") as stream:
    stream.write("{}")
json.dump({"ok": True}, sys.stdout)
''')


def build_team(root: Path) -> None:
    """The workspace, and its site in each theme (`site-<theme>`, the build log in `build-<theme>.json`)."""
    teamcorpus.place(root, demo=True, corpus=CORPUS)
    tool_md, program = CAUGHT_WRITER
    write(root / ".agent" / "tools" / "cache-warmer" / "TOOL.md", tool_md)
    write(root / ".agent" / "tools" / "cache-warmer" / "linux.py", program)
    write(root / "docs" / "index.md", "# Team tools\n\nThe tools this team's agents may call.\n")
    for theme in THEMES:
        result = build(root, "-f", site_config(root, theme))
        write(root / f"build-{theme}.json", json.dumps(vars(result)))
