"""Reads a config repo folder the way `mt deploy` does, to send it to `POST /v1/deploy`."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

# The resource folders; every `.mtr` and `.json` file under them is part of the repo.
TOP_FOLDERS = (
    "auth-providers",
    "connectors",
    "external-operations",
    "agents",
    "interactions",
    "schedules",
    "triggers",
)
SKIPPED_FOLDERS = frozenset({"node_modules", ".git"})
EXTENSIONS = (".mtr", ".json")

_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_SPACE = re.compile(r"(?:\s|//[^\n]*)*")
_NAME = re.compile(r"@([A-Za-z_][A-Za-z0-9_-]*)")


def _skip(text: str, at: int) -> int:
    match = _SPACE.match(text, at)
    return match.end() if match else at


def json_paths(content: str) -> list[str]:
    """The files the `@json("...")` directives of one `.mtr` text name, with one string argument (a trailing
    comma allowed), outside strings and `//` comments, and with comments and new lines between the parts."""
    found: list[str] = []
    at = 0
    while at < len(content):
        char = content[at]
        if char == '"':
            string = _STRING.match(content, at)
            at = string.end() if string else at + 1
        elif content.startswith("//", at):
            end = content.find("\n", at)
            at = len(content) if end == -1 else end
        elif char == "@":
            name = _NAME.match(content, at)
            at = name.end() if name else at + 1
            if name is None or name.group(1) != "json":
                continue
            open_at = _skip(content, at)
            if not content.startswith("(", open_at):
                continue
            string = _STRING.match(content, _skip(content, open_at + 1))
            if string is None:
                continue
            close_at = _skip(content, string.end())
            if content.startswith(",", close_at):
                close_at = _skip(content, close_at + 1)
            if content.startswith(")", close_at):
                try:
                    value = json.loads(string.group(0))
                except ValueError:
                    continue
                normal = _normalise(value)
                if normal is not None:
                    found.append(normal)
                at = close_at + 1
        else:
            at += 1
    return found


def _normalise(path: str) -> str | None:
    """The repo-relative path an `@json` names, or None for one the compiler refuses (it reports it)."""
    slashed = path.replace("\\", "/")
    if not slashed or slashed.startswith("/") or re.match(r"^[A-Za-z]:", slashed):
        return None
    parts: list[str] = []
    for part in slashed.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(part)
    return "/".join(parts) if parts and parts[-1].endswith(".json") else None


def read_config_repo(folder: str | Path) -> list[dict[str, str]]:
    """Every `.mtr` and `.json` file under the resource folders of `folder` (not in node_modules or .git,
    symbolic links not followed) and every `.json` file an `@json` names, as `{"path", "content"}` with
    `/`-separated paths relative to `folder`, sorted: what `mt deploy` sends. Raises ValueError when
    `folder` holds none of the resource folders."""
    root = Path(folder)
    if not any((root / top).is_dir() for top in TOP_FOLDERS):
        raise ValueError(f"{root} is not a config repo: it has none of the folders {', '.join(TOP_FOLDERS)}")
    files: dict[str, str] = {}
    for top in TOP_FOLDERS:
        base = root / top
        if not base.is_dir() or base.is_symlink():
            continue
        for current, dirs, names in os.walk(base):
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED_FOLDERS and not (Path(current) / d).is_symlink())
            for name in names:
                full = Path(current) / name
                if name.endswith(EXTENSIONS) and full.is_file() and not full.is_symlink():
                    files[full.relative_to(root).as_posix()] = full.read_text(encoding="utf-8")
    for path, content in list(files.items()):
        if not path.endswith(".mtr") or "@json" not in content:
            continue
        for named in json_paths(content):
            if named in files:
                continue
            try:
                files[named] = (root / named).read_text(encoding="utf-8")
            except OSError:
                pass  # A missing file is reported by the compiler at the @json that names it.
    return [{"path": path, "content": files[path]} for path in sorted(files)]
