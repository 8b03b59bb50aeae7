#!/usr/bin/env bash
# Proof that the suite never reads the working tree's example files (issue 10): copy this
# checkout, do to the copy's working tree what the README tour does (init, the sanctioned
# `apply` of orgs/bookclub.toml, and a direct edit the daemon would have reverted had it
# been running), then run `npm test` in the copy. Extra arguments filter the test files,
# as for scripts/run-tests.mjs. Exit status: npm test's.
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/warden-after-tour.XXXXXX")"
trap 'rm -rf "$work"' EXIT
(cd "$src" && git ls-files -co --exclude-standard -z | grep -zv "^node_modules$" | xargs -0 cp --parents -t "$work")
ln -s "$src/node_modules" "$work/node_modules"
cd "$work"
npx tsc -p tsconfig.json
export XDG_STATE_HOME="$work/.tour-state"   # the tour's HMAC key stays in the copy
unset STATE_DIRECTORY
warden() { node dist/src/cli/main.js "$@" --root "$work"; }
warden init >/dev/null
sed 's/hourly_cap = 20/hourly_cap = 25/' orgs/bookclub.toml > "$work/new.toml"
# approval = "tty" in the example root: the owner confirms on a terminal, as in the tour.
id="$(warden apply orgs/bookclub.toml --from "$work/new.toml" | sed -n 's/^request \([a-z0-9]*\):.*/\1/p')"
[ -n "$id" ]
python3 test/changes/pty_run.py '[["\\[y/N\\] ", "y\r"]]' -- node dist/src/cli/main.js approve "$id" --root "$work" >/dev/null
grep -q 'hourly_cap = 25' orgs/bookclub.toml
echo 'members = ["666"]' >> config/guests.toml
echo "test-after-tour: the working tree now differs from HEAD in:"
git -C "$src" diff --no-index --stat "$src/orgs" "$work/orgs" || true
git -C "$src" diff --no-index --stat "$src/config" "$work/config" || true
unset XDG_STATE_HOME
node scripts/run-tests.mjs "$@"
