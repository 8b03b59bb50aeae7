#!/usr/bin/env bash
# Check the systemd units (docs/CONTRACT.md §Deployment): render both templates in systemd/ with concrete
# paths through `warden install-units`, then require
#   - `systemd-analyze verify` to print nothing for either unit, and
#   - `systemd-analyze security --offline=true` to score the guard <= 1.0 and the
#     notifier <= 1.5,
# for the default guard (with capabilities) and the no-capability guard.
# Needs systemd-analyze (Debian package `systemd`) and a built dist/ (npx tsc -p .).
# Exit 0 when all hold, 1 otherwise. Prints the scores.
set -euo pipefail
cd "$(dirname "$0")/.."

GUARD_MAX=${GUARD_MAX:-1.0}
# The witness keeps uid 0 and CAP_SYS_ADMIN/CAP_SYS_PTRACE/CAP_DAC_READ_SEARCH (docs/DEPLOY.md, "The witness"): 1.8 measured.
WITNESS_MAX=${WITNESS_MAX:-2.0}
NOTIFY_MAX=${NOTIFY_MAX:-1.5}

if ! command -v systemd-analyze >/dev/null 2>&1; then
  echo "check-units: systemd-analyze is missing (apt-get install systemd)" >&2
  exit 1
fi
if [ ! -f dist/src/cli/main.js ]; then
  echo "check-units: dist/ is not built; building" >&2
  npx tsc -p . >/dev/null || true
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/warden-units.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/root"
node=$(command -v node)

fail=0
score() { # unit file → the overall exposure number
  systemd-analyze security --offline=true --no-pager "$1" 2>&1 | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' | tail -1
}
check() { # label prefix-dir unit max
  local label=$1 dir=$2 unit=$3 max=$4 out s
  out=$(cd "$dir" && systemd-analyze verify --man=false "./$unit" 2>&1) || true
  if [ -n "$out" ]; then
    echo "FAIL $label: systemd-analyze verify printed:"; echo "$out" | sed 's/^/    /'; fail=1
  else
    echo "ok   $label: systemd-analyze verify is clean"
  fi
  s=$(cd "$dir" && score "./$unit")
  if [ -z "$s" ]; then
    echo "FAIL $label: no exposure score from systemd-analyze security"; fail=1
  elif awk -v s="$s" -v m="$max" 'BEGIN { exit !(s <= m) }'; then
    echo "ok   $label: exposure $s (target <= $max)"
  else
    echo "FAIL $label: exposure $s is over the target $max"
    (cd "$dir" && systemd-analyze security --offline=true --no-pager "./$unit" | grep -v '✓') | sed 's/^/    /'
    fail=1
  fi
}

render() { # prefix [extra install-units args]
  local prefix=$1; shift
  node dist/src/cli/main.js install-units --root "$work/root" --node "$node" --prefix "$prefix" --write --force "$@" >/dev/null
}

# With every optional line rendered: LoadCredential= (a token file) and, for deployment B,
# SupplementaryGroups= (the protected files' group).
install -m 0600 /dev/null "$work/discord-token"
render "$work/default" --discord-token "$work/discord-token"
render "$work/nocaps" --capabilities none --agent-group daemon --discord-token "$work/discord-token"
units=etc/systemd/system
check "warden-guard.service" "$work/default/$units" warden-guard.service "$GUARD_MAX"
# Deployment A's shape: another user (the agent) owns the root's parent, so the guard's unit
# binds and may write that parent (BindPaths=, docs/DEPLOY.md §3). Needs root to chown.
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$work/home-agent/agent-root" && chown 65534:65534 "$work/home-agent" "$work/home-agent/agent-root"
  node dist/src/cli/main.js install-units --root "$work/home-agent/agent-root" --node "$node" --prefix "$work/parent" --write --force --discord-token none >/dev/null 2>&1
  if grep -qx "BindPaths=$work/home-agent" "$work/parent/$units/warden-guard.service"; then
    check "warden-guard.service (the agent owns the root's parent)" "$work/parent/$units" warden-guard.service "$GUARD_MAX"
  else
    echo "FAIL warden-guard.service (the agent owns the root's parent): BindPaths= is not the parent"; fail=1
  fi
fi
check "warden-notify.service" "$work/default/$units" warden-notify.service "$NOTIFY_MAX"
check "warden-guard.service (--capabilities none)" "$work/nocaps/$units" warden-guard.service "$GUARD_MAX"

# The witness's template, rendered with the same concrete values (install-units does not write it yet).
mkdir -p "$work/witness"
sed -e "s|@NODE@|$node|; s|@CLI@|$PWD/dist/src/cli/main.js|; s|@ROOT@|$work/root|g; s|@WRITABLE@|$work/root|g; s|@GROUP@|daemon|; s|@DOCS@|$PWD/docs/DEPLOY.md|; s|@PROTECT_HOME@|read-only|" \
  systemd/warden-witness.service > "$work/witness/warden-witness.service"
check "warden-witness.service" "$work/witness" warden-witness.service "$WITNESS_MAX"

if [ "$fail" -ne 0 ]; then echo "check-units: FAILED"; exit 1; fi
echo "check-units: all units pass"
