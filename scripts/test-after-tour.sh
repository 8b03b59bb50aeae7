#!/usr/bin/env bash
# Proof that the suite never reads the working tree's example files: copy this
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
# Tests run some steps as other users (useradd, nobody): they must reach the copy, as they reach a checkout.
chmod 0755 "$work"
# The copy is a checkout whose HEAD is the tree before the tour, as in a clone where the owner took the tour.
git init -q
git add -A -- .   # node_modules (a link here) is ignored by .gitignore
git -c user.name=after-tour -c user.email=after-tour@localhost -c commit.gpgsign=false commit -qm 'before the tour'
npm run build --silent
export XDG_STATE_HOME="$work/.tour-state"   # the tour's HMAC key stays in the copy
unset STATE_DIRECTORY
warden() { node dist/src/cli/main.js "$@" --root "$work"; }
warden init >/dev/null
sed 's/hourly_cap = 20/hourly_cap = 25/' orgs/bookclub.toml > "$work/new.toml"
# approval = "tty" in the example root: the owner confirms on a terminal, as in the tour.
id="$(warden apply orgs/bookclub.toml --from "$work/new.toml" | sed -n 's/^request \([a-z0-9]*\):.*/\1/p')"
[ -n "$id" ]
python3 test/helpers/pty_run.py '[["\\[y/N\\] ", "y\r"]]' -- node dist/src/cli/main.js approve "$id" --root "$work" >/dev/null
grep -q 'hourly_cap = 25' orgs/bookclub.toml
echo 'members = ["666"]' >> config/guests.toml
echo "test-after-tour: the working tree now differs from HEAD in:"
git -C "$src" diff --no-index --stat "$src/orgs" "$work/orgs" || true
git -C "$src" diff --no-index --stat "$src/config" "$work/config" || true
unset XDG_STATE_HOME
node scripts/run-tests.mjs "$@"
