"""No function or method in the package above cyclomatic complexity 20 (radon's measure).

Nested functions count on their own, as radon counts them (a closure's branches are not its
parent's). Split an offender by concern; do not raise the bound.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from radon.complexity import cc_visit

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "plugin" / "toolcatalog"
LIMIT = 20


def _functions(blocks: list[Any], outer: str = "") -> Iterator[tuple[str, Any]]:
    """(qualified name, block) of every function, method and closure among radon's blocks (a
    class only holds them: its own score is the sum of its methods')."""
    for block in blocks:
        name = f"{outer}{block.fullname if not outer else block.name}"
        if hasattr(block, "methods"):
            yield from _functions(block.methods)
            yield from _functions(block.inner_classes)
        else:
            yield name, block
            yield from _functions(block.closures, f"{name}.")


def offenders(root: Path = PACKAGE, limit: int = LIMIT) -> list[tuple[str, int, str, int]]:
    """(file relative to the repository, line, qualified name, score) of each function above `limit`."""
    found = set()
    for path in sorted(root.rglob("*.py")):
        blocks = cc_visit(path.read_text(encoding="utf-8"))
        for name, function in _functions(blocks):
            if function.complexity > limit:
                where = path.relative_to(REPO if path.is_relative_to(REPO) else root).as_posix()
                found.add((where, function.lineno, name, function.complexity))
    return sorted(found)


def test_no_function_is_above_complexity_20() -> None:
    found = offenders()
    listing = "\n".join(f"  {file}:{line} {name} {score}" for file, line, name, score in found)
    assert not found, f"{len(found)} functions above cyclomatic complexity {LIMIT}:\n{listing}"


def test_the_measure_sees_methods_closures_and_nested_classes(tmp_path: Path) -> None:
    # The walk itself: an offender hidden in a method, a closure or a nested class is still listed.
    branches = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(LIMIT))
    body = "def f(x):\n" + branches + "    return -1\n"
    nested = "".join("    " + line + "\n" for line in body.splitlines())
    (tmp_path / "m.py").write_text(
        body + "def ok(x):\n    return x\n"
        "class C:\n" + nested + "    class D:\n" + "".join("    " + line + "\n" for line in nested.splitlines())
        + "def outer():\n" + nested + "    return f\n",
        encoding="utf-8",
    )
    found = offenders(tmp_path, LIMIT)
    lines = (tmp_path / "m.py").read_text(encoding="utf-8").splitlines()
    offending = [n + 1 for n, line in enumerate(lines) if line.strip() == "def f(x):"]
    assert [(line, name, score) for _file, line, name, score in found] == [
        (offending[0], "f", LIMIT + 1), (offending[1], "C.f", LIMIT + 1), (offending[2], "D.f", LIMIT + 1),
        (offending[3], "outer.f", LIMIT + 1),
    ], found
    assert offenders(tmp_path, LIMIT + 1) == []
