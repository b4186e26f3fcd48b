"""Contract quality findings: deterministic, explained, each a warning diagnostic with its own code.

What an agent needs to pick and call a tool, checked from the contract alone (docs/coverage.md):

- `quality-property-undescribed`: an input property has no `description`.
- `quality-outputs-undescribed`: the output schema declares fields but describes none of them.
- `quality-description-no-result`: the description never says what the tool returns (no word
  such as returns, prints, outputs, gives, reports, lists, produces).
- `quality-description-no-when`: the description never says when to use it (no "use", "when",
  "for", "if").
- `quality-name-style`: the tool's id is written in another style than most of the catalog's
  (snake_case among kebab-case, camelCase, ...); only judged when one style has a strict majority
  of at least two tools.
- `quality-near-duplicate`: two tools' descriptions share at least `NEAR_DUPLICATE` of their words
  (Jaccard similarity of the word sets, at least `MIN_WORDS` words each): an agent cannot tell
  which to pick.
- `quality-examples-identical`: two examples give exactly the same input.

The findings go on the tools' diagnostics (severity warning: they never make a tool invalid),
so pages, the catalog and `fail_on` see them like any other diagnostic.
"""

from __future__ import annotations

import heapq
import json
import math
import re
from array import array
from collections import Counter
from typing import Any, Iterator

from .model import WARNING, Catalog, Diagnostic, Tool
from .statuses import QUALITY_CODES

CODES = QUALITY_CODES  # listed beside the statuses: the `fail_on` option accepts them
NEAR_DUPLICATE = 0.8
MIN_WORDS = 5
MAX_DEPTH = 4
MAX_PER_TOOL = 50  # undescribed properties named per tool: a huge schema gives one screenful
_RESULT_WORDS = re.compile(r"\b(return(s|ed|ing)?|prints?|outputs?|gives?|reports?|lists?|produces?|yields?|emits?|answers?|"
                           r"writes?|results?|says|tells?|shows?|counts?|finds?|computes?|converts?|renders?)\b", re.IGNORECASE)
_WHEN_WORDS = re.compile(r"\b(use[sd]?|when|for|if|before|after|instead)\b", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9]+")
STYLES = {"kebab-case": re.compile(r"^[a-z0-9]+(-[a-z0-9]+)+$"), "snake_case": re.compile(r"^[a-z0-9]+(_[a-z0-9]+)+$"),
          "camelCase": re.compile(r"^[a-z]+[a-z0-9]*([A-Z][a-z0-9]*)+$"), "PascalCase": re.compile(r"^([A-Z][a-z0-9]+){2,}$")}


def add_findings(catalog: Catalog) -> list[Diagnostic]:
    """Every quality finding of the catalog, appended to its tools' diagnostics (and returned)."""
    found: list[Diagnostic] = []
    for tool in catalog.tools:
        found.extend(_attach(tool, tool_findings(tool)))
    for tool, finding in catalog_findings(catalog.tools):
        found.extend(_attach(tool, [finding]))
    return found


def _attach(tool: Tool, findings: list[Diagnostic]) -> list[Diagnostic]:
    tool.diagnostics.extend(findings)
    return findings


def _line(tool: Tool, *paths: str) -> int | None:
    """The line of the first path that has one, or of its closest ancestor."""
    for path in paths:
        parts = path.split("/")
        while parts:
            line = tool.lines.get("/".join(parts))
            if line is not None:
                return line
            parts.pop()
    return None


def _finding(tool: Tool, code: str, message: str, line: int | None) -> Diagnostic:
    return Diagnostic(WARNING, message, tool.source, line, code)


def tool_findings(tool: Tool) -> list[Diagnostic]:
    """The findings about one contract on its own."""
    out: list[Diagnostic] = []
    if isinstance(tool.inputs, dict):
        missing = list(_undescribed(tool.inputs, "inputs", "", 0))
        for where, pointer in missing[:MAX_PER_TOOL]:
            out.append(_finding(tool, "quality-property-undescribed", f"input property `{where}` has no description", _line(tool, pointer)))
        if len(missing) > MAX_PER_TOOL:
            out.append(_finding(tool, "quality-property-undescribed",
                                f"{len(missing) - MAX_PER_TOOL} more input properties have no description", _line(tool, "inputs")))
    if isinstance(tool.outputs, dict):
        fields = list(_properties(tool.outputs, "outputs", "", 0))
        if fields and not any(described for _where, _pointer, described in fields):
            out.append(_finding(tool, "quality-outputs-undescribed",
                                f"the output schema describes none of its {len(fields)} field{'s' if len(fields) != 1 else ''}",
                                _line(tool, "outputs")))
    text = " ".join(x for x in [tool.description, *tool.use_cases] if isinstance(x, str))
    if tool.description.strip():
        line = _line(tool, "description")
        if not _RESULT_WORDS.search(text):
            out.append(_finding(tool, "quality-description-no-result", "the description never says what the tool returns", line))
        if not _WHEN_WORDS.search(text):
            out.append(_finding(tool, "quality-description-no-when", "the description never says when to use the tool", line))
    seen: dict[str, str] = {}
    for example in tool.examples:
        if not example.has_input:
            continue
        try:
            key = json.dumps(example.input, sort_keys=True, default=str)
        except (TypeError, ValueError):  # keys that cannot be sorted together: compare as written
            key = repr(example.input)
        if key in seen:
            out.append(_finding(tool, "quality-examples-identical",
                                f"example `{example.title}` gives the same input as `{seen[key]}`", example.line))
        else:
            seen[key] = example.title
    return out


def _properties(node: Any, pointer: str, path: str, depth: int) -> Iterator[tuple[str, str, bool]]:
    """(dotted path, front-matter pointer, has a description) of each property, nested ones too."""
    if not isinstance(node, dict) or depth >= MAX_DEPTH:
        return
    properties = node.get("properties")
    if isinstance(properties, dict):
        for key, sub in properties.items():
            where = f"{path}.{key}" if path else str(key)
            here = f"{pointer}/properties/{key}"
            described = isinstance(sub, dict) and isinstance(sub.get("description"), str) and bool(sub["description"].strip())
            yield where, here, described or not isinstance(sub, dict) or "$ref" in sub
            yield from _properties(sub, here, where, depth + 1)
    if isinstance(node.get("items"), dict):
        yield from _properties(node["items"], f"{pointer}/items", f"{path}[]", depth + 1)


def _undescribed(node: Any, pointer: str, path: str, depth: int) -> Iterator[tuple[str, str]]:
    for where, here, described in _properties(node, pointer, path, depth):
        if not described:
            yield where, here


# -- across the catalog ------------------------------------------------------------------------------
def style_of(tool_id: str) -> str | None:
    """The naming style of an id's last dotted segment (`units.convert` -> `convert`); None for a
    single lowercase word, which fits every style."""
    last = tool_id.rsplit(".", 1)[-1]
    return next((name for name, pattern in STYLES.items() if pattern.match(last)), None)


def catalog_findings(tools: list[Tool]) -> Iterator[tuple[Tool, Diagnostic]]:
    yield from _name_styles(tools)
    yield from _near_duplicates(tools)


def _name_styles(tools: list[Tool]) -> Iterator[tuple[Tool, Diagnostic]]:
    styles = {id(t): style_of(t.id) for t in tools}
    counts = Counter(s for s in styles.values() if s is not None)
    if not counts:
        return
    (major, n), total = counts.most_common(1)[0], sum(counts.values())
    if n < 2 or n * 2 <= total:
        return
    for tool in tools:
        style = styles[id(tool)]
        if style is not None and style != major:
            yield tool, _finding(tool, "quality-name-style",
                                 f"the id `{tool.id}` is {style} while {n} of the catalog's {total} styled ids are {major}",
                                 _line(tool, "id", "name"))


def words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


def similarity(a: frozenset[str], b: frozenset[str]) -> float:
    shared = len(a & b)  # |a | b| without building it: the same number, half the work
    return shared / (len(a) + len(b) - shared) if a or b else 0.0


MAX_NAMED = 5  # other tools a near-duplicate finding names; the count says how many more
MAX_CANDIDATES = 64  # sets each word's index keeps (`_similar_pairs`): what bounds the comparisons
MAX_COMPARED = 4 * MAX_CANDIDATES  # comparisons each set makes at most (`_similar_pairs`), whatever its length


def near_duplicates(tools: list[Tool]) -> list[tuple[Tool, list[Tool]]]:
    """Each tool whose description is a near-duplicate of others', with those others (catalog order).

    Tools with the same word set are one group, compared once: a catalog generated from a few
    templates has thousands of identical descriptions, and comparing each pair of them would be
    quadratic. Groups are then paired with a prefix filter (two sets at least NEAR_DUPLICATE alike
    must share a word among the rarest `len - ceil(t * len) + 1` of each), not by comparing every pair."""
    groups, similar = _similar_groups(tools)
    sets = list(groups)
    out: list[tuple[Tool, list[Tool]]] = []
    for i, ws in enumerate(sets):
        members = sorted(m for j in (i, *similar[i]) for m in groups[sets[j]])
        for own in groups[ws]:
            others = [tools[m] for m in members if m != own]
            if others:
                out.append((tools[own], others))
    return out


def _description_groups(tools: list[Tool]) -> dict[frozenset[str], list[int]]:
    """The tools (their positions) grouped by their descriptions' word sets, long enough ones only."""
    groups: dict[frozenset[str], list[int]] = {}
    for position, tool in enumerate(tools):
        ws = words(tool.description)
        if len(ws) >= MIN_WORDS:
            groups.setdefault(ws, []).append(position)
    return groups


def _similar_pairs(sets: list[frozenset[str]], inexact: list[bool] | None = None) -> Iterator[tuple[int, int]]:
    """The pairs (i, j) of word sets at least NEAR_DUPLICATE alike, once, j < i, each i's in
    increasing j (a prefix index over the rarest words: only sets sharing one are compared).

    Each word's index keeps its first MAX_CANDIDATES sets only: a word thousands of sets share
    adds at most that many comparisons for each set, never one per set, so the work grows with the
    number of sets, not with its square. Every pair is found for a set that was put in the index
    of each of its prefix words (none was full when it came): it and every set alike are compared.
    A set that came to a full index may miss some: `inexact[i]` is then set True (when a list is
    given), and its pairs found are a lower bound.

    A long description has a long prefix, and many words each shared by up to MAX_CANDIDATES
    sets still make every set a candidate of every other (a hundred words each: a quarter of all
    pairs compared): each set is compared with its first MAX_COMPARED candidates only, and when
    it has more, it and each candidate left out are marked inexact (a pair not compared leaves
    both counts a lower bound)."""
    frequency = Counter(w for ws in sets for w in ws)
    index: dict[str, list[int]] = {}
    for i, ws in enumerate(sets):
        ordered = sorted(ws, key=lambda w: (frequency[w], w))
        prefix = ordered[: len(ordered) - math.ceil(NEAR_DUPLICATE * len(ordered)) + 1]
        for j in _compared(i, sorted({j for w in prefix for j in index.get(w, ())}), inexact):
            if similarity(ws, sets[j]) >= NEAR_DUPLICATE:
                yield i, j
        for w in prefix:
            kept = index.setdefault(w, [])
            if len(kept) < MAX_CANDIDATES:
                kept.append(i)
            elif inexact is not None:
                inexact[i] = True


def _compared(i: int, candidates: list[int], inexact: list[bool] | None) -> list[int]:
    """The first MAX_COMPARED of set i's candidates; those left out, and i, marked inexact."""
    if len(candidates) <= MAX_COMPARED:
        return candidates
    if inexact is not None:
        inexact[i] = True
        for j in candidates[MAX_COMPARED:]:
            inexact[j] = True
    return candidates[:MAX_COMPARED]


def _similar_groups(tools: list[Tool]) -> tuple[dict[frozenset[str], list[int]], list[array[int]]]:
    """The tools grouped by their descriptions' word sets, and for each group the other groups at
    least NEAR_DUPLICATE alike (compact arrays: a catalog of near-identical descriptions pairs
    thousands of groups with thousands each)."""
    groups = _description_groups(tools)
    sets = list(groups)
    similar: list[array[int]] = [array("l") for _ in sets]
    for i, j in _similar_pairs(sets):
        similar[i].append(j)
        similar[j].append(i)
    return groups, similar


def _near_duplicate_summaries(tools: list[Tool], inexact: list[bool] | None = None) -> Iterator[tuple[Tool, list[Tool], int]]:
    """`near_duplicates`, each tool with only the first MAX_NAMED others and how many there are:
    never a list of every other tool for every tool, nor of every similar group for every group
    (`_similar_counts`). `inexact`, when given, gets one entry per tool yielded: True when its
    count is only a lower bound (see `_similar_pairs`)."""
    groups, counts, lowest, bounds = _bounded_counts(tools)
    sets = list(groups)
    for i, ws in enumerate(sets):
        count = counts[i] + len(groups[ws]) - 1
        if count == 0:
            continue
        near = [groups[sets[j]] for j in sorted(lowest[i])]
        first = heapq.nsmallest(MAX_NAMED + 1, (m for g in (groups[ws], *near) for m in g))
        for own in groups[ws]:
            if inexact is not None:
                inexact.append(bounds[i])
            yield tools[own], [tools[m] for m in first if m != own][:MAX_NAMED], count


def _similar_counts(tools: list[Tool]) -> tuple[dict[frozenset[str], list[int]], list[int], list[list[int]]]:
    """`_bounded_counts` without whether each count is exact."""
    groups, counts, lowest, _inexact = _bounded_counts(tools)
    return groups, counts, lowest


def _bounded_counts(tools: list[Tool]) -> tuple[dict[frozenset[str], list[int]], list[int], list[list[int]], list[bool]]:
    """`_similar_groups` kept small: for each group, how many tools the similar groups hold, and
    the MAX_NAMED + 1 lowest of those groups. Groups are numbered in the order of their first tool,
    so the first tools of any similar groups are among the lowest groups' (a catalog of
    near-identical descriptions pairs thousands of groups with thousands each: the full lists
    took ≈ 70 MB at 5,000 tools); and for each group whether its count is only a lower bound
    (`_similar_pairs`)."""
    groups = _description_groups(tools)
    sets = list(groups)
    sizes = [len(groups[ws]) for ws in sets]
    counts = [0] * len(sets)
    lowest: list[list[int]] = [[] for _ in sets]
    inexact = [False] * len(sets)
    for i, j in _similar_pairs(sets, inexact):  # each i's in increasing j
        counts[i] += sizes[j]
        counts[j] += sizes[i]
        if len(lowest[i]) <= MAX_NAMED:
            lowest[i].append(j)
        if len(lowest[j]) <= MAX_NAMED:
            lowest[j].append(i)
    return groups, counts, lowest, inexact


def _near_duplicates(tools: list[Tool]) -> Iterator[tuple[Tool, Diagnostic]]:
    inexact: list[bool] = []
    for tool, others, count in _near_duplicate_summaries(tools, inexact):
        named = ", ".join(f"`{o.id}`" for o in others[:MAX_NAMED])
        more = _more(count, inexact[-1])
        yield tool, _finding(tool, "quality-near-duplicate",
                             f"the description shares at least {NEAR_DUPLICATE:.0%} of its words with that of {named}{more}: "
                             "an agent cannot tell which to pick", _line(tool, "description"))


def _more(count: int, lower_bound: bool) -> str:
    """How many more near-duplicates than the finding names: exact, or (when the search was
    bounded, see `_similar_pairs`) at least that many, perhaps others."""
    if not lower_bound:
        return f" and {count - MAX_NAMED} more" if count > MAX_NAMED else ""
    return f" and at least {count - MAX_NAMED} more" if count > MAX_NAMED else " and perhaps others"
