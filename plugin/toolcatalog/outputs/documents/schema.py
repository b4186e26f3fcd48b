"""schemas/catalog-v2.schema.json: the shipped catalog schema, published whenever the catalog or
per-tool files are. Its bytes are the manifest's to check (it quotes nothing of the build)."""

from __future__ import annotations

from typing import Any

from ...model import Tool
from .. import catalog_json
from ..published import plain
from .base import Check, Draft, Drafting, Output, Plan, quoted_draft


class Writer:
    def __init__(self, path: str) -> None:
        self.path = path

    def entry(self, tool: Tool, entry: dict[str, Any], text: str) -> None:
        return None

    def drafts(self, drafting: Drafting) -> list[Draft]:
        return [quoted_draft(self.path, "the catalog schema", plain(catalog_json.schema_text()))]


def writer(plan: Plan) -> Writer | None:
    return Writer(plan.paths.schema) if plan.paths.schema is not None else None


def verify(check: Check) -> None:
    return None  # byte for byte by the manifest


OUTPUT = Output("(the catalog schema)", writer, verify)
