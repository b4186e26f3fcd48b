"""scrub.py: this machine's paths rewritten in what a tool printed, and only those."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolcatalog.scrub import scrubber


@pytest.mark.parametrize("home", ["/root", "/home/ci"])
def test_the_home_folder_is_rewritten_where_a_path_starts_and_nowhere_inside_another(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: str) -> None:
    """`/proc/thread-self/root/dev/x` holds `/root` (a root build's home) as a component: it read
    `/proc/thread-self~/dev/x`; so did `/srv/home/ci/x` for a home of `/home/ci`."""
    monkeypatch.setenv("HOME", home)
    scrub = scrubber(tmp_path / "ws")
    assert scrub(f"{home}/.cache/x") == "~/.cache/x"
    assert scrub(f"wrote {home}/x, then '{home}' and HOME={home}:file://{home}/y") == "wrote ~/x, then '~' and HOME=~:file://~/y"
    for inside in (f"/proc/thread-self{home}/dev/x", f"/srv{home}/x", f"a{home}", f"/tmp/x.{home}/y", f"/tmp/x-{home}"):
        assert scrub(inside) == inside
    assert scrub(f"{tmp_path}/ws/a and /x{tmp_path}/ws/a") == f"a and /x{tmp_path}/ws/a"
