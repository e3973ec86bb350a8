"""Reads a config repo folder the way `mt deploy` does, to send it to `POST /v1/deploy`."""

from __future__ import annotations

import os
from pathlib import Path

# The resource folders; every `.mtr` and `.json` file under them is part of the repo.
TOP_FOLDERS = ("connectors", "external-operations", "agents", "interactions")
SKIPPED_FOLDERS = frozenset({"node_modules", ".git"})
EXTENSIONS = (".mtr", ".json")


def read_config_repo(folder: str | Path) -> list[dict[str, str]]:
    """Every `.mtr` and `.json` file under the resource folders of `folder` (not in node_modules or .git,
    symbolic links not followed), as `{"path", "content"}` with `/`-separated paths relative to it, sorted.
    Raises ValueError when `folder` holds none of the resource folders."""
    root = Path(folder)
    if not any((root / top).is_dir() for top in TOP_FOLDERS):
        raise ValueError(f"{root} is not a config repo: it has none of the folders {', '.join(TOP_FOLDERS)}")
    files: list[dict[str, str]] = []
    for top in TOP_FOLDERS:
        base = root / top
        if not base.is_dir():
            continue
        for current, dirs, names in os.walk(base):
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED_FOLDERS)
            for name in names:
                full = Path(current) / name
                if name.endswith(EXTENSIONS) and full.is_file() and not full.is_symlink():
                    relative = full.relative_to(root).as_posix()
                    files.append({"path": relative, "content": full.read_text(encoding="utf-8")})
    return sorted(files, key=lambda f: f["path"])
