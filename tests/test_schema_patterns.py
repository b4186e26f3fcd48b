"""`pattern`s in manifest schemas are matched with a time limit, so a catastrophic one never hangs a build.

Matching has a wall-clock limit by design (jsonschemas: one per match, one budget per
validation), so no assertion here depends on how fast the machine is: the runaway patterns
meet inputs no engine can finish in any time (an undecided match is certain, however loaded
the machine), the decided ones are trivial and get the full per-match limit, and the budget
is checked by counting match attempts, which load can only lower. Whatever hung before its
fix runs in a subprocess with a timeout, so a regression fails instead of hanging the suite.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import matchlimits
from manifests import speccify_tool, write
from sitebuild import toolcatalog_process
from toolcatalog import jsonschemas
from toolcatalog.harvest import harvest
from toolcatalog.options import Options

CATASTROPHIC = "^(a|a)*$"  # exponential for every backtracking engine, `regex` included
EVIL_TEXT = "a" * 100 + "!"  # 2**100 steps: never decided, on any machine


def test_a_catastrophic_pattern_does_not_hang_validate(tmp_path: Path) -> None:
    inputs = {
        "type": "object",
        "properties": {
            "nested": {"type": "string", "pattern": "^(a+)+$"},  # the review's reproduction (Python's re hangs)
            "text": {"type": "string", "pattern": CATASTROPHIC},
        },
    }
    speccify_tool(tmp_path, "redos", [("evil", {"nested": "a" * 33 + "!", "text": EVIL_TEXT}, {"ok": True})],
                  inputs=inputs)
    result = toolcatalog_process("validate", str(tmp_path), timeout=120)
    out = result.stdout
    assert result.returncode == 0, out + result.stderr  # example inputs that violate `inputs` are warnings
    assert "pattern '^(a|a)*$' took too long to match (catastrophic backtracking); the value was not checked against it" in out
    assert "does not match '^(a+)+$'" in out  # `regex` decides this one in microseconds


# Every keyword that matches patterns, validated in a fresh interpreter that counts the match
# attempts. `regex` measures its time limit in processor time, which never runs ahead of the clock
# while this one thread matches, so a timed-out attempt lasts at least its limit and the budget
# allows at most 1 + (budget - first limit) / slow limit + 1 attempts per validation, however
# loaded the machine. (Cases run one after another: matching in several threads at once makes the
# process's processor time run faster than the clock.)
# The limits are shrunk tenfold (matchlimits): the same bound on attempts, in a tenth of the time
# (8 validations that each spent up to the 2 s budget: about 6 s of CPU).
SAFE_KEYWORDS_SCRIPT = """
import json, sys
from toolcatalog import jsonschemas
""" + matchlimits.SETTING + """
evil = "a" * 100 + "!"
pat = "^(a|a)*$"
cases = {
    "pattern": ({"type": "string", "pattern": pat}, evil),
    "patternProperties": ({"type": "object", "patternProperties": {pat: {"type": "integer"}}}, {"aa": "y", evil: "x"}),
    "additionalProperties": ({"type": "object", "patternProperties": {pat: {}}, "additionalProperties": False}, {evil: 1, "zz": 2}),
    "unevaluatedProperties": ({"type": "object", "patternProperties": {pat: {}}, "unevaluatedProperties": False}, {evil: 1}),
    "unevaluatedProperties-2019": ({"$schema": "https://json-schema.org/draft/2019-09/schema", "type": "object",
                                    "patternProperties": {pat: {}}, "unevaluatedProperties": False}, {evil: 1}),
    "draft-07": ({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                  "patternProperties": {pat: {}}, "additionalProperties": False}, {evil: 1}),
    "propertyNames": ({"type": "object", "propertyNames": {"pattern": pat}}, {evil: 1}),
    "many-values": ({"type": "array", "items": {"type": "string", "pattern": pat}}, [evil + str(i) for i in range(300)]),
}
attempts = [0]
compile_pattern = jsonschemas.compile_pattern
class Counted:
    def __init__(self, compiled):
        self.compiled = compiled
    def search(self, *args, **kwargs):
        attempts[0] += 1
        return self.compiled.search(*args, **kwargs)
jsonschemas.compile_pattern = lambda pattern: Counted(compile_pattern(pattern))
out = {}
for name, (schema, instance) in cases.items():
    attempts[0] = 0
    problems = jsonschemas.validate(schema, instance, limit=500)
    out[name] = {"attempts": attempts[0], "messages": [p.message for p in problems], "undecided": [p.undecided for p in problems]}
json.dump(out, sys.stdout)
"""


def test_every_keyword_that_matches_patterns_has_a_time_limit() -> None:
    result = subprocess.run([sys.executable, "-c", SAFE_KEYWORDS_SCRIPT], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    slow = "took too long to match (catastrophic backtracking)"
    most = matchlimits.most_attempts()
    for name, found in out.items():
        assert any(slow in m for m in found["messages"]), (name, found["messages"])
        assert 1 <= found["attempts"] <= most, (name, found["attempts"])
    # Patterns that are decided are still applied: "aa" is decided at once (and first, so with the
    # full limit), so its value is checked; the runaway name is not, and is said to be unchecked.
    assert "'y' is not of type 'integer'" in out["patternProperties"]["messages"]
    assert "'x' is not of type 'integer'" not in out["patternProperties"]["messages"]
    # The whole validation has one budget: 300 values, each reported unchecked, far fewer attempts.
    assert len(out["many-values"]["messages"]) == 300 and all(out["many-values"]["undecided"])


def test_check_schema_compiles_patterns_with_the_engine_that_validates() -> None:
    # `\p{L}` is valid ECMA-262 (JSON Schema's dialect) that Python's `re` refuses; `regex` matches it.
    schema = {"type": "string", "pattern": "^\\p{L}+$"}
    assert jsonschemas.check_schema(schema) == []
    assert jsonschemas.validate(schema, "héllo") == []
    assert [p.message for p in jsonschemas.validate(schema, "h3llo")] == ["'h3llo' does not match '^\\\\p{L}+$'"]
    broken = jsonschemas.check_schema({"type": "string", "pattern": "(unclosed"})
    assert broken and "is not a regular expression Python can compile" in broken[0].message


def test_a_pattern_that_runs_out_of_time_is_reported_as_unchecked_not_violated(tmp_path: Path) -> None:
    write(
        tmp_path / ".agent/tools/slow/TOOL.md",
        f"""
        ---
        name: slow
        description: A contract with a runaway pattern.
        inputs: {{type: object, properties: {{s: {{type: string, pattern: "^(a|a)*$"}}}}}}
        outputs: {{type: object}}
        effects: none
        ---
        ## Examples
        ### long input
        input: {{"s": "{EVIL_TEXT}"}}
        output: {{}}
        """,
    )
    [tool] = harvest(tmp_path, Options()).tools
    assert tool.valid
    [diagnostic] = [d for d in tool.diagnostics if d.code.startswith("example-")]
    assert diagnostic.code == "example-undecided" and "could not be fully checked" in diagnostic.message
    assert "violates" not in diagnostic.message
