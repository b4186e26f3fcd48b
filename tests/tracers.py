"""The two tracers of a bubblewrap run, as a fixture: the build's own (sandbox/ptracer.py, the
default) and strace (the fallback where ours cannot work). A test that takes `tracer` runs once
with each that works here; under "strace" the build's probe is made to report that ours does not."""

from __future__ import annotations

import dataclasses
from typing import Iterator

import pytest

from toolcatalog import sandbox

FACTS = sandbox.probe("auto")
TRACERS = ("toolcatalog", "strace")


@pytest.fixture(params=TRACERS)
def tracer(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The tracer this run of the test uses (every build it starts, in this process, probes it)."""
    if FACTS.mechanism != "bwrap":
        pytest.skip(f"needs bubblewrap; this machine offers {FACTS.mechanism or 'no sandbox'}")
    if request.param == "toolcatalog" and not FACTS.own_tracer:
        pytest.skip(f"our tracer does not work here: {FACTS.untraced}")
    if request.param == "strace":
        if not FACTS.traced:
            pytest.skip(f"strace does not work here: {FACTS.untraced}")
        real = sandbox.probe
        monkeypatch.setattr(sandbox, "probe", lambda mode: dataclasses.replace(real(mode), ptrace=False))
    yield request.param
