"""trace._split_args, the trace parser's hot loop, splits every argument list exactly as the
character-by-character loop it replaced did (kept here as the reference), so that every trace
reads the same and every output byte stays the same: on random text made of the characters that
matter (quotes, backslashes, commas, brackets) and on a real strace log of calls with such paths.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from toolcatalog.sandbox import trace


def reference(text: str) -> list[str]:
    """The former trace._split_args, unchanged."""
    out: list[str] = []
    depth, current, quoted, i = 0, [], False, 0
    while i < len(text):
        c = text[i]
        if quoted:
            current.append(c)
            if c == "\\" and i + 1 < len(text):
                current.append(text[i + 1])
                i += 1
            elif c == '"':
                quoted = False
        elif c == '"':
            quoted = True
            current.append(c)
        elif c in "[{(":
            depth += 1
            current.append(c)
        elif c in "]})":
            depth -= 1
            current.append(c)
        elif c == "," and depth == 0:
            out.append("".join(current).strip())
            current = []
        else:
            current.append(c)
        i += 1
    if "".join(current).strip():
        out.append("".join(current).strip())
    return out


def test_random_text_splits_as_before() -> None:
    rng = random.Random(21)
    alphabet = ['"', "\\", ",", "[", "]", "{", "}", "(", ")", " ", "a", "0", "\n", "é", ".", "|"]
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40)))
        assert trace._split_args(text) == reference(text), repr(text)


@pytest.mark.skipif(shutil.which("strace") is None or not sys.platform.startswith("linux"), reason="needs strace")
def test_a_real_trace_splits_as_before(tmp_path: Path) -> None:
    names = ['a,b', 'q"uote', 'back\\slash', '[br]{ace}(p)', 'tab\tnew\nline', 'ü,"[', 'x' * 200]
    program = ("import os, sys\nbase = sys.argv[1]\nfor n in %r:\n"
               "    p = os.path.join(base, n)\n    open(p, 'w').close(); os.rename(p, p + ',2'); os.unlink(p + ',2')\n"
               "    try: os.execve('/nonexistent/' + n, ['a,b', n], {'K': n})\n    except OSError: pass\n") % names
    log = tmp_path / "trace.log"
    subprocess.run(["strace", *trace._options(str(log)), "--", sys.executable, "-c", program, str(tmp_path)],
                   check=True, capture_output=True, timeout=60)
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    checked = 0
    for line in lines:
        call = trace._CALL.match(line.partition(" ")[2].lstrip())
        if call:
            assert trace._split_args(call.group(2)) == reference(call.group(2)), line
            checked += 1
    assert checked > 4 * len(names), lines[-5:]
