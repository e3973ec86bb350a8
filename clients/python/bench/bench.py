"""The figures of the README: the import time of `maitento`, and the overhead of `interaction_runs.get` over
raw httpx at concurrency 1 (p50), against a real `mt serve` on PGlite started here.

    python bench/bench.py            # from clients/python, with node on PATH and the CLI built
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.stack import SCRIPTS, Upstream, start_serve, write_repo  # noqa: E402

IMPORTS = 15
CALLS = 300


def _timed(statements: str) -> float:
    code = f"import time; t = time.perf_counter(); {statements}; print((time.perf_counter() - t) * 1000)"
    return float(subprocess.check_output([sys.executable, "-c", code], text=True))


def import_ms(statements: str) -> list[float]:
    """Wall time of `statements` in a fresh interpreter, IMPORTS times (the .pyc files are written by the first)."""
    _timed(statements)
    return [_timed(statements) for _ in range(IMPORTS)]


def main() -> None:
    imports = import_ms("import maitento")
    first_client = import_ms("import maitento; maitento.Maitento('http://127.0.0.1:1', 'k')")
    plain_httpx = import_ms("import httpx")
    from maitento import Maitento

    work = Path(tempfile.mkdtemp(prefix="mt-bench-"))
    scripts = work / "scripted-models"
    scripts.mkdir()
    for name, turns in SCRIPTS.items():
        (scripts / f"{name}.json").write_text(json.dumps(turns))
    (work / "home").mkdir()
    upstream = Upstream(shop_key="bench").start()
    serve = start_serve(work / "home", "pglite", scripts)
    try:
        with Maitento(serve.url, serve.admin_key) as mt, httpx.Client() as raw:
            mt.secrets.create(name="orders-key", value="bench")
            mt.deploy.folder(write_repo(work / "repo", upstream.origin))
            run = mt.interaction_runs.run("quick", inputs={"message": "hi"})
            url = f"{serve.url}/v1/runs/{run.id}"
            headers = {"authorization": f"Bearer {serve.admin_key}", "accept": "application/json"}
            sdk: list[float] = []
            plain: list[float] = []
            for _ in range(20):  # warm both connections up
                mt.interaction_runs.get(run.id)
                raw.get(url, headers=headers).json()
            # Interleaved, one call at a time, so both see the same server and machine.
            for _ in range(CALLS):
                t = time.perf_counter()
                raw.get(url, headers=headers).json()
                plain.append((time.perf_counter() - t) * 1000)
                t = time.perf_counter()
                mt.interaction_runs.get(run.id)
                sdk.append((time.perf_counter() - t) * 1000)
    finally:
        serve.stop()
        upstream.close()
    p50_sdk, p50_raw = statistics.median(sdk), statistics.median(plain)
    for label, times in (
        ("import maitento", imports),
        ("import maitento + the first Maitento() (loads pydantic and the models)", first_client),
        ("import httpx alone, for scale", plain_httpx),
    ):
        print(f"{label}: median {statistics.median(times):.1f} ms, min {min(times):.1f} ms ({IMPORTS} runs)")
    print(f"interaction_runs.get p50 {p50_sdk:.3f} ms, raw httpx GET + json p50 {p50_raw:.3f} ms")
    print(f"overhead p50 {p50_sdk - p50_raw:.3f} ms ({CALLS} calls each, concurrency 1)")


if __name__ == "__main__":
    main()
