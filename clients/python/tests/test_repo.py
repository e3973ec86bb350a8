"""`read_config_repo` sends what `mt deploy` sends: compared with the CLI's own reader (@maitento/lang's
readConfigRepo, run with node) on the example repo and on a repo with `@json` files outside the folders."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from maitento import read_config_repo
from maitento._repo import json_paths

from .stack import ROOT, node

READER = """
const { readConfigRepo } = await import(process.argv[1]);
process.stdout.write(JSON.stringify(await readConfigRepo(process.argv[2])));
"""


def _cli_files(folder: Path) -> list[dict[str, str]]:
    lang = (ROOT / "packages/lang/dist/index.js").as_uri()
    out = subprocess.run(
        [node(), "--input-type=module", "-e", READER, lang, str(folder)], check=True, capture_output=True, text=True
    )
    files: list[dict[str, str]] = json.loads(out.stdout)
    return files


def test_the_example_repo_reads_as_the_cli_reads_it() -> None:
    assert read_config_repo(ROOT) == _cli_files(ROOT)


def test_json_files_named_by_json_directives_are_sent(tmp_path: Path) -> None:
    (tmp_path / "connectors/open-api").mkdir(parents=True)
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas/order.json").write_text('{"type": "object"}')
    (tmp_path / "schemas/split.json").write_text('{"type": "string"}')
    (tmp_path / "schemas/commented.json").write_text("{}")
    (tmp_path / "schemas/in-a-string.json").write_text("{}")
    (tmp_path / "connectors/open-api/orders.mtr").write_text(
        'method = "POST"\n'
        'url = "https://example.com/orders"\n'
        'description = "@json(\\"schemas/in-a-string.json\\")"\n'
        "// schema.response = @json(\"schemas/commented.json\")\n"
        'schema.request = @json("./schemas/../schemas/order.json",)\n'
        "schema.response = @json( // the answer\n"
        '  "schemas/split.json"\n'
        ")\n"
        'other = @json("schemas/missing.json")\n'
    )
    paths = [f["path"] for f in read_config_repo(tmp_path)]
    assert paths == ["connectors/open-api/orders.mtr", "schemas/order.json", "schemas/split.json"]
    assert read_config_repo(tmp_path) == _cli_files(tmp_path)


def test_json_paths_outside_the_repo_are_left_to_the_compiler() -> None:
    assert json_paths('a = @json("/etc/x.json")\nb = @json("../x.json")\nc = @json("x.txt")') == []
    assert json_paths('a = @json("a.json", "b.json")') == []


def test_auth_providers_schedules_and_triggers_are_part_of_the_repo(tmp_path: Path) -> None:
    for relative in (
        "auth-providers/local-as.mtr",
        "schedules/nightly.mtr",
        "triggers/issues.mtr",
        "agents/helper.mtr",
        "docs/not-a-resource.mtr",
    ):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text("// " + relative + "\n")
    paths = [f["path"] for f in read_config_repo(tmp_path)]
    assert paths == ["agents/helper.mtr", "auth-providers/local-as.mtr", "schedules/nightly.mtr", "triggers/issues.mtr"]
    assert read_config_repo(tmp_path) == _cli_files(tmp_path)
    # A repo of schedules alone is a config repo too.
    (tmp_path / "agents/helper.mtr").unlink()
    (tmp_path / "agents").rmdir()
    alone = tmp_path / "auth-providers"
    for f in alone.iterdir():
        f.unlink()
    alone.rmdir()
    assert [f["path"] for f in read_config_repo(tmp_path)] == ["schedules/nightly.mtr", "triggers/issues.mtr"]
