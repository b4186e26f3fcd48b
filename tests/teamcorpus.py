"""The public corpus placed as a team would place it, in a temporary workspace.

`/work/shared/corpus` (../shared/corpus beside the checkout) keeps every manifest in a flat
folder per source. A team keeps them where their tools look for them: speccify tools at
`.agent/tools/<name>/TOOL.md`, agentproto tools at `.tools/<id>/TOOL.md` and drivers at
`.drivers/<id>/DRIVER.md`, smart tools in a folder each (the catalog's under `smart-tools/`,
the conformance kit's fixtures under `conformance/fixtures/` as upstream keeps them).
`place(dest)` copies them there (never into the repository) and, with `demo`, the project's own
demo catalog (`examples/`) too. Tests call `available()` first and skip when the corpus is absent.
"""

from __future__ import annotations

import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO.parent / "shared" / "corpus"

# corpus folder -> (workspace folder, what each entry is)
PLACES = {
    "speccify": ".agent/tools",
    "agentproto/tools": ".tools",
    "agentproto/drivers": ".drivers",
    "smart-tools-catalog": "smart-tools",
    "smart-tools-conformance": "conformance/fixtures",
}


def available() -> bool:
    return (CORPUS / "SOURCES.md").is_file()


def place(dest: Path, demo: bool = False, corpus: bool = True) -> Path:
    """Copy the corpus's manifests into `dest` at their conventional places (unless not `corpus`);
    with `demo`, also the demo catalog at `dest/examples`. Returns `dest`."""
    for source, target in PLACES.items() if corpus else ():
        for entry in sorted((CORPUS / source).iterdir()):
            if entry.is_dir():
                shutil.copytree(entry, dest / target / entry.name)
    if demo:
        shutil.copytree(REPO / "examples", dest / "examples", ignore=shutil.ignore_patterns("__pycache__", ".toolcatalog-cache"))
    return dest
