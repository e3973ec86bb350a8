#!/usr/bin/env bash
# Restore drill (docs/operations.md, "Backup and restore"): proves that a backup of a Maitento database can be
# restored and served. It
#   1. dumps SOURCE with pg_dump (custom format: every schema, Maitento's tables and the job queue's),
#   2. restores the dump into TARGET, a new database it creates (it refuses one that exists),
#   3. compares the row count of every table of TARGET with SOURCE's in the dump's snapshot,
#   4. starts `mt serve` on TARGET with the master key(s) from the environment: it refuses to start when a stored
#      secret is under a key it was not given (api:secrets:key-id-missing), and unwraps one data key per key id,
#   5. with MT_API_KEY (an admin key of namespace default), reads /health, the secrets' names and
#      /v1/admin/secret-key through the API of the restored server and checks every secret is under a key it holds,
#   6. stops the server; TARGET is kept for inspection unless --drop.
#
# Usage: scripts/restore-drill.sh --source URL --target URL [--dump FILE] [--drop]
# Environment: MT_SECRET_KEY (required) and MT_SECRET_KEY_PREVIOUS as the servers have them; MT_API_KEY (optional);
# MT (optional: the mt command, default this checkout's packages/cli/bin/mt.js run with node).
# Exit status: 0 when every step passed; 1 with the failed step's message on stderr otherwise.
set -euo pipefail

SOURCE=""
TARGET=""
DUMP=""
DROP=0
while [ $# -gt 0 ]; do
  case "$1" in
    --source) SOURCE="$2"; shift 2 ;;
    --target) TARGET="$2"; shift 2 ;;
    --dump) DUMP="$2"; shift 2 ;;
    --drop) DROP=1; shift ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "restore-drill: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
fail() { echo "restore-drill: FAILED: $*" >&2; exit 1; }
step() { echo "restore-drill: $*" >&2; }
[ -n "$SOURCE" ] && [ -n "$TARGET" ] || { echo "restore-drill: --source and --target are required (see --help)" >&2; exit 2; }
[ -n "${MT_SECRET_KEY:-}" ] || fail "MT_SECRET_KEY is not set: a restore without the master key cannot open a secret"
for tool in pg_dump pg_restore psql curl; do
  command -v "$tool" >/dev/null || fail "$tool is not installed"
done

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
if [ -n "${MT:-}" ]; then
  read -r -a MT_CMD <<<"$MT"
else
  MT_CMD=(node "$ROOT/packages/cli/bin/mt.js")
fi
WORK="$(mktemp -d)"
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
DUMP="${DUMP:-$WORK/maitento.dump}"

# The target's name and a URL of its server's maintenance database, to create it there.
TARGET_DB="$(node -e 'console.log(decodeURIComponent(new URL(process.argv[1]).pathname.slice(1)))' "$TARGET")"
[ -n "$TARGET_DB" ] || fail "--target names no database"
ADMIN_URL="$(node -e 'const u = new URL(process.argv[1]); u.pathname = "/postgres"; console.log(u.toString())' "$TARGET")"
# (psql interpolates :'name' in its input, not in -c.)
EXISTS="$(psql "$ADMIN_URL" -XAtq -v ON_ERROR_STOP=1 -v name="$TARGET_DB" <<<"SELECT 1 FROM pg_database WHERE datname = :'name'")"
[ -z "$EXISTS" ] || fail "the target database $TARGET_DB exists already; the drill restores into a new one"

COUNT_SQL="SELECT string_agg(format('%s.%s=%s', table_schema, table_name,
  (xpath('/row/n/text()', query_to_xml(format('SELECT count(*) AS n FROM %I.%I', table_schema, table_name), false, true, '')))[1]::text),
  ' ' ORDER BY table_schema, table_name)
  FROM information_schema.tables WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')"

step "1/6 pg_dump of the source"
# The source keeps serving: the dump and the source's row counts are taken in one snapshot, exported by a session
# held open meanwhile, so the counts are those of what was dumped.
coproc SNAPSHOT { psql "$SOURCE" -XAtq -v ON_ERROR_STOP=1; }
echo "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT pg_export_snapshot();" >&"${SNAPSHOT[1]}"
read -r -t 30 SNAPSHOT_ID <&"${SNAPSHOT[0]}" || fail "could not export a snapshot of the source"
pg_dump --snapshot="$SNAPSHOT_ID" --format=custom --no-owner --no-privileges --file "$DUMP" "$SOURCE" ||
  fail "pg_dump of the source failed"
echo "$(tr '\n' ' ' <<<"$COUNT_SQL");" >&"${SNAPSHOT[1]}"
read -r -t 60 SOURCE_COUNTS <&"${SNAPSHOT[0]}" || fail "could not count the source's rows"
SNAPSHOT_SESSION=$SNAPSHOT_PID
echo "COMMIT;" >&"${SNAPSHOT[1]}"
eval "exec ${SNAPSHOT[1]}>&-"
wait "$SNAPSHOT_SESSION" || fail "the snapshot's session of the source failed"

step "2/6 restore into the new database $TARGET_DB"
psql "$ADMIN_URL" -XAtq -v ON_ERROR_STOP=1 -v name="$TARGET_DB" <<<'CREATE DATABASE :"name"' >/dev/null ||
  fail "could not create $TARGET_DB"
pg_restore --no-owner --no-privileges --exit-on-error --dbname "$TARGET" "$DUMP" || fail "pg_restore failed"

step "3/6 row counts of every table, dumped and restored"
TARGET_COUNTS="$(psql "$TARGET" -XAtq -v ON_ERROR_STOP=1 -c "$COUNT_SQL")"
[ "$SOURCE_COUNTS" = "$TARGET_COUNTS" ] || fail "row counts differ:
  dumped:   $SOURCE_COUNTS
  restored: $TARGET_COUNTS"
echo "$TARGET_COUNTS" | tr ' ' '\n' | grep -E '^public\.mt_(runs|run_events|approvals|secrets|api_keys)=' | sed 's/^/  /' >&2

step "4/6 mt serve on the restored database"
LOG="$WORK/serve.log"
# --no-worker: the drill reads; it executes none of the runs the restored database holds (their tool calls would reach
# the real upstreams again), and no retention job deletes anything there.
DATABASE_URL="$TARGET" "${MT_CMD[@]}" serve --no-worker --port 0 --host 127.0.0.1 >"$LOG" 2>&1 &
SERVER_PID=$!
URL=""
for _ in $(seq 1 600); do
  URL="$(grep -oE 'listening on http://[^ ]+' "$LOG" | head -1 | sed 's/^listening on //; s#/*$##')" || true
  [ -n "$URL" ] && break
  kill -0 "$SERVER_PID" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$URL" ]; then
  cat "$LOG" >&2
  fail "mt serve did not start on the restored database (above: its output; api:secrets:key-id-missing means MT_SECRET_KEY or MT_SECRET_KEY_PREVIOUS lacks a key the secrets are under)"
fi
echo "  serving $URL" >&2

step "5/6 the API of the restored server"
curl -fsS --max-time 10 "$URL/health" >/dev/null || fail "GET /health failed"
if [ -n "${MT_API_KEY:-}" ]; then
  AUTH=(-H "authorization: Bearer $MT_API_KEY")
  SECRETS="$(curl -fsS --max-time 10 "${AUTH[@]}" "$URL/v1/secrets")" || fail "GET /v1/secrets failed (is MT_API_KEY an admin key of the source?)"
  STATUS="$(curl -fsS --max-time 10 "${AUTH[@]}" "$URL/v1/admin/secret-key")" || fail "GET /v1/admin/secret-key failed"
  CHECK="$(node -e '
    const secrets = JSON.parse(process.argv[1]);
    const status = JSON.parse(process.argv[2]);
    const list = Array.isArray(secrets) ? secrets : secrets.items ?? secrets.secrets ?? [];
    const stored = Object.values(status.secretsByKeyId).reduce((a, b) => a + b, 0);
    console.log(`${list.length} secrets of namespace default readable by name; ${stored} stored in all, under key ids ${Object.keys(status.secretsByKeyId).join(", ") || "(none)"}; current key ${status.currentKeyId}`);
  ' "$SECRETS" "$STATUS")" || fail "unexpected answers from the API"
  echo "  $CHECK" >&2
else
  echo "  MT_API_KEY not set: the API checks past /health are skipped" >&2
fi

step "6/6 stop"
kill -TERM "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null || true
SERVER_PID=""
if [ "$DROP" = 1 ]; then
  psql "$ADMIN_URL" -XAtq -v ON_ERROR_STOP=1 -v name="$TARGET_DB" <<<'DROP DATABASE :"name" WITH (FORCE)' >/dev/null
  echo "  dropped $TARGET_DB" >&2
fi
echo "restore-drill: OK: $TARGET_DB restored from the dump and served with the master key given" >&2
