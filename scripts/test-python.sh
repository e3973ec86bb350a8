#!/usr/bin/env bash
# The Python SDK's checks (`npm run test:python`, run by `npm test` after vitest): creates clients/python/.venv
# when it is missing and installs the package with its test dependencies from the configured package index,
# then runs mypy --strict on the package and its examples, pytest (against a real `mt serve` on PostgreSQL and
# on PGlite: the CLI must be built, `npm run build`), and `python -m build` (a wheel and an sdist, to a temp dir).
# `--venv-only` stops after the environment is made.
set -euo pipefail
cd "$(dirname "$0")/.."
PY_DIR=clients/python
VENV=$PY_DIR/.venv

if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
# Installed again when pyproject.toml is newer than the last install (a new dependency).
if [ ! -f "$VENV/.installed" ] || [ "$PY_DIR/pyproject.toml" -nt "$VENV/.installed" ]; then
  # The build backend first, so neither this install nor `python -m build` needs an isolated build environment.
  "$VENV/bin/pip" install --quiet --retries 0 hatchling editables
  "$VENV/bin/pip" install --quiet --retries 0 --no-build-isolation -e "$PY_DIR[test]"
  touch "$VENV/.installed"
fi
# `--venv-only`: .ci/run makes the environment before `npm test`, nothing else.
[ "${1:-}" = "--venv-only" ] && exit 0

# The tests start `mt serve` with the node on PATH (scripts/node.sh puts it there for npm).
echo "=== mypy --strict (clients/python)" >&2
(cd "$PY_DIR" && .venv/bin/mypy --strict src examples bench)
echo "=== pytest (clients/python)" >&2
(cd "$PY_DIR" && .venv/bin/pytest -q)
echo "=== python -m build (clients/python)" >&2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$VENV/bin/python" -m build --no-isolation --outdir "$out" "$PY_DIR" >/dev/null
ls "$out"/maitento-*.whl "$out"/maitento-*.tar.gz >/dev/null
echo "=== built $(cd "$out" && ls | tr '\n' ' ')" >&2
