"""The plugin's own CPU time on a warm workspace, in process, per phase: what a warm build adds.

    PYTHONPATH=<checkout>/plugin python bench/phases.py <kept toolcatalog workspace> [rounds]

Run it on a workspace kept by `bench/run.py --keep` (its results cache filled). Each round
harvests and checks (`pipeline.prepare` + `pipeline.check`, all results from the cache), renders
every tool page and the index (`Renderer`, inside one `claims.Memo` as the plugin does) and makes
the outputs (`Build.outputs`); it prints the median CPU seconds of this thread per phase (the
first round, which fills the parse cache for this checkout and warms the imports, is not
counted). CPU time, not wall time, so other load on the machine moves it less. Compare two
checkouts by running it for each, alternating (A B A B).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

from toolcatalog import claims, pipeline
from toolcatalog.config import ToolCatalogConfig, to_options
from toolcatalog.outputs.site import Site
from toolcatalog.render import Renderer


def main() -> None:
    workspace = Path(sys.argv[1]).resolve()
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    config = ToolCatalogConfig()
    config.load_dict({"nav_tools": False, "sandbox": "off"})
    config.validate()
    options = to_options(config)
    times: dict[str, list[float]] = {"prepare+check": [], "pages": [], "outputs": []}
    for round_no in range(rounds + 1):
        start = time.thread_time()
        build = pipeline.prepare(workspace, options, site=Site(name="Benchmark catalog"),
                                 skip=[workspace / "docs", workspace / "site"])
        pipeline.check(build)
        checked = time.thread_time()
        renderer = Renderer()
        memo = getattr(claims, "Memo", None)  # older checkouts derive the claims on every read
        scope = memo().active() if memo else None
        if scope is not None:
            scope.__enter__()
        for tool in build.catalog.tools:
            renderer.tool_page(tool, build.catalog, lambda url: url)
        renderer.index_page(build.catalog, lambda url: url)
        paged = time.thread_time()
        build.outputs()
        done = time.thread_time()
        if scope is not None:
            scope.__exit__(None, None, None)
        if round_no:
            for name, seconds in zip(times, (checked - start, paged - checked, done - paged)):
                times[name].append(seconds)
    medians = {name: round(statistics.median(values), 3) for name, values in times.items()}
    total = round(statistics.median([sum(parts) for parts in zip(*times.values())]), 3)
    print(json.dumps({**medians, "total": total, "tools": len(build.catalog.tools)}))


if __name__ == "__main__":
    main()
