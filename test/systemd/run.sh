#!/usr/bin/env bash
# The real-systemd end-to-end test (docs/CONTRACT.md §Deployment, last paragraph): `npm run test:systemd`.
#
# HOST side, as root. Boots systemd 252 as PID 1 of an nspawn container (the kit in
# ../shared/systemd-container, read its README), installs warden into it the way the
# README says (`npm pack`, then `npm install -g ./warden-*.tgz`), runs the README's and
# docs/DEPLOY.md's deploy blocks verbatim (they are marked `<!-- systemd-test: … -->`),
# and checks both deployments:
#   A  the agent's user owns the protected files, the guard keeps three capabilities;
#   B  the warden account owns them, the guard runs with no capabilities.
# One line per check (`ok   …` / `FAIL …`), then `N passed, N failed`; exit 1 on any failure.
# Deployment A also runs the owner's commands (status, why, edit, notify test) as root, as the owner and
# as the agent, and ends with the path hardening's attacks as the agent: a root swap, a write through a
# held shared mapping, a directory of root's exchanged onto the root and onto orgs/ (renameat2
# RENAME_EXCHANGE), and (the root moved onto a small tmpfs of its own, FULL_ROOT_MB, with the
# guard stopped) a full file system that the agent filled.
# Environment: WARDEN_SYSD_KIT (the kit's directory), KEEP=1 (leave the container running),
# DEPLOYMENTS="A B" (which deployments to run, in order; for iterating on one).
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)

# ---- every store / state / socket path, and how the owner runs commands (one place) ----
ROOT=/home/agent/agent-root              # the guarded root (the README's example path)
ROOT_ID=$(printf '%s' "$ROOT" | sha256sum | cut -c1-16)   # src/store/location.ts rootId (no symlinks in ROOT)
GUARD_STATE=/var/lib/warden-guard        # the guard's StateDirectory=
STORE=$GUARD_STATE/stores/$ROOT_ID       # the guard's store (docs/DEPLOY.md §8)
KEYS=$GUARD_STATE/keys                   # the baseline's HMAC keys and seals
GUARD_RUN=/run/warden-guard              # the guard's RuntimeDirectory= (manifest.json, socket)
CONTROL=$GUARD_RUN/$ROOT_ID              # the control socket's directory
NOTIFY_STATE=/var/lib/warden-notify      # the notifier's StateDirectory=
WITNESS_STATE=/var/lib/warden-witness    # the witness's StateDirectory= (its record)
# what warden-notify.service's InaccessiblePaths= hide (systemd/warden-notify.service)
HIDDEN_FROM_NOTIFIER="$STORE/secrets $STORE/journal $STORE/quarantine $STORE/pending $STORE/history $STORE/control $KEYS $GUARD_RUN"
TOKEN_FILE=/etc/warden/discord-token
DISCORD_PORT=8099
OWNER=alice                              # docs/DEPLOY.md §2.8's desktop user (deployment A)
SAME_USER=owner                          # docs/DEPLOY.md §10: the agent runs as this user (deployment P)
P_ROOT=/home/$SAME_USER/.claude          # its Claude Code root (install-units --profile claude-code)
P_STORE=$GUARD_STATE/stores/$(printf '%s' "$P_ROOT" | sha256sum | cut -c1-16)
AGENT_HOME=$(dirname "$ROOT")            # the agent's home: the root's parent, the agent's own
FULL_ROOT_MB=${FULL_ROOT_MB:-8}          # deployment A, row 3: the root's own tmpfs, filled by the agent
# The owner's sanctioned commands, as docs/DEPLOY.md §2.6 says to run them: as the warden
# account, which finds the guard's state directory by itself.
owner_cmd() { cin sudo -u warden EDITOR=ed-append warden "$@" --root "$ROOT"; }
# ------------------------------------------------------------------------------------------
approve_with() { [ -n "$1" ] && [ -n "$2" ] && owner_cmd approve "$1" --code "$2"; }

WATCHDOG_S=60          # WatchdogSec= of both units
M=/var/lib/machines/wtest
for k in "${WARDEN_SYSD_KIT:-}" "$REPO/../shared/systemd-container" "$REPO/../../shared/systemd-container"; do
  [ -n "$k" ] && [ -x "$k/host/boot.sh" ] && { KIT=$(cd "$k" && pwd); break; }
done
[ -n "${KIT:-}" ] || { echo "test:systemd: no ../shared/systemd-container kit (set WARDEN_SYSD_KIT)"; exit 2; }
[ "$(id -u)" = 0 ] || { echo "test:systemd: needs root (systemd-nspawn)"; exit 2; }
H=$KIT/host
WORK=$(mktemp -d /tmp/warden-sysd.XXXXXX)
LOG=${WARDEN_SYSD_LOG:-/tmp/warden-test-systemd.log}; : >"$LOG"   # every command's output
PASS=0; FAIL=0; T0=$(date +%s)

cin() { "$H/in" "$@"; }                            # run inside the container, as root
pass() { PASS=$((PASS + 1)); echo "ok   [$DEP] $1"; }
fail() { FAIL=$((FAIL + 1)); echo "FAIL [$DEP] $1${2:+: $2}"; }
check() { # NAME CMD…: pass when CMD succeeds; a failure shows the end of CMD's own output
  local name=$1 out; shift; out=$("$@" 2>&1); local rc=$?
  printf '%s\n' "--- check: $name (rc $rc)" "$out" >>"$LOG"
  if [ $rc -eq 0 ]; then pass "$name"; else fail "$name" "$(printf '%s' "$out" | tail -3 | tr '\n' ' ' | cut -c1-300)"; fi; }
info() { echo "info [$DEP] $*"; }
# wait_for SECONDS CMD…: poll CMD every 0.2 s until it succeeds or the deadline passes.
wait_for() { local end=$(( $(date +%s%N) + $1 * 1000000000 )); shift
  while :; do "$@" >>"$LOG" 2>&1 && return 0; [ "$(date +%s%N)" -ge "$end" ] && return 1; sleep 0.2; done; }
prop() { cin systemctl show -p "$2" --value "$1"; }
running() { [ "$(prop "$1" ActiveState)/$(prop "$1" SubState)" = active/running ]; }
# the marked ```sh block after `<!-- systemd-test: NAME -->` in a doc
doc_block() { awk -v m="<!-- systemd-test: $2 -->" 'f==0 && index($0,m) {f=1; next} f==1 && /^```/ {f=2; next} f==2 && /^```/ {exit} f==2 {print}' "$REPO/$1"; }
sha() { cin sha256sum "$ROOT/$1" | cut -d' ' -f1; }
meta() { cin stat -c '%U:%G %a' "$ROOT/$1"; }
# restored FILE SHA META: the path holds the approved bytes again, with the approved owner and mode
restored() { [ "$(sha "$1" 2>/dev/null)" = "$2" ] && [ "$(meta "$1" 2>/dev/null)" = "$3" ]; }
as_agent() { cin sudo -u agent sh -c "cd $ROOT && $1"; }
dm_count() { cin journalctl -u fake-discord --no-pager -o cat | grep -c 'REQ /api/v10/channels/1/messages' || true; }

# systemd-nspawn's own seccomp filter refuses fanotify_init/fanotify_mark (EPERM), which the
# witness needs (docs/DEPLOY.md §9): allow exactly those two, keeping the rest of the filter,
# through the machine's settings file for this boot (boot.sh names the machine wtest).
NSPAWN_SETTINGS=/run/systemd/nspawn/wtest.nspawn
NSPAWN_MINE=0
if [ ! -e "$NSPAWN_SETTINGS" ]; then
  mkdir -p "$(dirname "$NSPAWN_SETTINGS")" && printf '%s\n' '# warden test:systemd (removed after the run)' '[Exec]' 'SystemCallFilter=fanotify_init fanotify_mark' >"$NSPAWN_SETTINGS" && NSPAWN_MINE=1
fi
cleanup() {
  [ "$NSPAWN_MINE" = 1 ] && rm -f "$NSPAWN_SETTINGS"
  if [ "${KEEP:-0}" != 1 ] && [ -f /tmp/sysd/nspawn.pid ] && kill -0 "$(cat /tmp/sysd/nspawn.pid)" 2>/dev/null; then
    teardown   # the next boot starts clean (no enabled warden units)
    "$H/poweroff.sh" >/dev/null 2>&1 || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# ---- host: the container, and warden installed into it as the README says --------------
DEP=host
"$H/build.sh" >>"$LOG" 2>&1 || { echo "test:systemd: the container build failed:"; tail -20 "$LOG"; exit 1; }
if [ -f /tmp/sysd/nspawn.pid ] && kill -0 "$(cat /tmp/sysd/nspawn.pid)" 2>/dev/null; then "$H/poweroff.sh" >>"$LOG" 2>&1; fi
# README "Install": `npm pack` in a clone, then `sudo npm install -g ./warden-*.tgz`. The
# container has no network (--private-network), so the global install runs from the host
# with the container's /usr/local as npm's global prefix (the same node goes in with it).
install_warden() {
  (cd "$REPO" && npm pack --silent --pack-destination "$WORK" >"$WORK/packed") || return 1
  local tgz; tgz=$WORK/$(tail -1 "$WORK/packed")
  rm -rf "$M/usr/local/lib/node_modules/warden" "$M/usr/local/bin/warden" "$M/root/warden-src"
  npm install -g --silent --no-fund --no-audit --prefer-offline --prefix "$M/usr/local" "$tgz" || return 1
  install -m 0755 "$(readlink -f "$(command -v node)")" "$M/usr/local/bin/node"
  # the example root the test deploys (the checkout's own config/, orgs/, blocks/)
  mkdir -p "$M/root/example" && cp -a "$REPO/config" "$REPO/orgs" "$REPO/blocks" "$M/root/example/"
  [ -L "$M/usr/local/bin/warden" ] && [ -f "$M/usr/local/lib/node_modules/warden/node_modules/unix-dgram/package.json" ]
}
check "npm pack + npm install -g ./warden-*.tgz gives warden on PATH (with unix-dgram)" install_warden
# A desktop's user manager needs pam_systemd (libpam-systemd), which the kit's minbase lacks:
# installed once with the container stopped (chroot, the host's network), for §2.8's desktop case.
[ -e "$M/usr/lib/x86_64-linux-gnu/security/pam_systemd.so" ] || chroot "$M" sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libpam-systemd' >>"$LOG" 2>&1
"$H/boot.sh" >>"$LOG" 2>&1 || { echo "test:systemd: the container did not boot:"; tail -20 "$LOG"; exit 1; }
booted() { case "$(cin systemctl is-system-running --wait)" in running|degraded) return 0;; *) return 1;; esac; }
check "container booted (systemd $(cin systemctl --version | head -1 | cut -d' ' -f2))" booted
check "warden runs inside the container" cin warden --help

# ---- one deployment ---------------------------------------------------------------------
setup_root() { # the agent's user and its root, from the example (as the agent would have it)
  cin sh -euc "
    id agent >/dev/null 2>&1 || useradd --create-home --user-group --shell /bin/sh agent
    rm -rf $ROOT; mkdir -p $ROOT; cp -a /root/example/. $ROOT/
    cd $ROOT
    # approval = none stands in for the owner who confirms the block's 'warden apply' on the
    # terminal; no [notify.discord]: the block must name token_file itself
    sed -i -e 's/^approval = .*/approval = \"none\"/' -e 's/^min_interval_seconds = .*/min_interval_seconds = 0/' \
        -e '/^\\[notify.desktop\\]/,/^enabled/ s/^enabled = true/enabled = false/' config/warden.toml
    ! grep -q 'notify.discord' config/warden.toml
    chown -R agent:agent $ROOT; chmod 0755 $ROOT; find $ROOT -type f -exec chmod 0644 {} +; chmod 0600 config/credentials.toml
    systemctl reset-failed fake-discord 2>/dev/null || true
    systemd-run --unit=fake-discord --quiet /usr/bin/python3 /root/fake-discord.py $DISCORD_PORT"
}
teardown() {
  cin sh -c "systemctl disable --now warden-witness warden-guard warden-notify 2>/dev/null; systemctl stop fake-discord 2>/dev/null
    rm -f /etc/systemd/system/warden-guard.service /etc/systemd/system/warden-notify.service /etc/systemd/system/warden-witness.service; systemctl daemon-reload
    systemctl reset-failed 2>/dev/null; if mountpoint -q $ROOT; then umount $ROOT || umount -l $ROOT; fi; rm -rf $GUARD_STATE $GUARD_RUN $NOTIFY_STATE $WITNESS_STATE /var/lib/private/warden-* /etc/warden $ROOT
    userdel warden 2>/dev/null
    if id $OWNER >/dev/null 2>&1; then loginctl disable-linger $OWNER; systemctl stop user@\$(id -u $OWNER).service; userdel -r $OWNER 2>/dev/null; fi
    rm -f /etc/systemd/user/warden-desktop.service /usr/local/bin/notify-send /usr/local/bin/warden-test-mmap
    systemctl stop w21-mmap 2>/dev/null; systemctl reset-failed w21-mmap 2>/dev/null
    rm -rf $ROOT.old $AGENT_HOME/evil /root/w21-rootcopy /usr/local/lib/w21-mmap.py
    if id $SAME_USER >/dev/null 2>&1; then userdel -r $SAME_USER 2>/dev/null; fi; true" >>"$LOG" 2>&1
}
run_block() { # DOC NAME: run the doc's marked block as root in the container; stdin = a bot token
  local b; b=$(doc_block "$1" "$2")
  [ -n "$b" ] || { echo "no block '$2' in $1"; return 1; }
  printf '%s\n' "--- $1 $2:" "$b" >>"$LOG"
  echo "fake-bot-token-$(date +%s)" | cin bash -euo pipefail -c "$b"
}

# the owner's command saw the running notifier (its state in the unit's StateDirectory=)
said_sent() { printf '%s' "$1" | grep -q "sent to the owner's Discord" && ! printf '%s' "$1" | grep -q 'no notifier is running'; }

# revert_case NAME FILE 'shell run by WHO in the root' WHO
revert_case() {
  local name=$1 f=$2 act=$3 who=$4 s m
  s=$(sha "$f"); m=$(meta "$f")
  [ -n "$s" ] && [ -n "$m" ] || { fail "$name reverted" "precondition: $f is missing before the edit"; return; }
  if [ "$who" = agent ]; then as_agent "$act" >>"$LOG" 2>&1; else cin sh -c "cd $ROOT && $act" >>"$LOG" 2>&1; fi
  if wait_for 10 restored "$f" "$s" "$m"; then pass "$name reverted, $m kept"; else fail "$name reverted, $m kept" "now $(meta "$f" 2>&1)"; fi
}

# docs/DEPLOY.md §2.8: desktop alerts from a user unit in the owner's session, as the owner
desktop_case() {
  cin sh -c "id $OWNER >/dev/null 2>&1 || useradd --create-home --shell /bin/sh $OWNER" >>"$LOG" 2>&1
  # a stand-in for notify-send that records its calls (who ran it, and the arguments)
  cat >"$M/usr/local/bin/notify-send" <<'SH'
#!/bin/sh
printf '%s|' "$(id -un)" "$@" >> "$HOME/notify-send.calls"; echo >> "$HOME/notify-send.calls"
SH
  chmod 0755 "$M/usr/local/bin/notify-send"
  check "docs/DEPLOY.md desktop block ran as written" run_block docs/DEPLOY.md desktop
  check "…and ran again as written" run_block docs/DEPLOY.md desktop
  local ou; ou=$(cin id -u $OWNER)
  check "warden-desktop.service runs in $OWNER's user manager (linger)" wait_for 20 sh -c "[ \"\$($H/in sudo -u $OWNER XDG_RUNTIME_DIR=/run/user/$ou systemctl --user is-active warden-desktop.service)\" = active ]"
  revert_case "content edit by agent (for the desktop)" orgs/bookclub.toml 'echo "# for the desktop" >> orgs/bookclub.toml' agent
  check "the revert popped up: notify-send ran as $OWNER with the path" wait_for 20 sh -c "$H/in grep -q '^$OWNER|.*orgs/bookclub.toml' /home/$OWNER/notify-send.calls"
  check "…the desktop unit reads no store: the guard's state directory is closed to $OWNER" sh -c "! $H/in sudo -u $OWNER ls $GUARD_STATE"
}

# alerts_with PAT1 PAT2: how many lines of the store's alerts.jsonl hold both fixed strings
alerts_with() { cin sh -c "grep -F '$1' $STORE/alerts.jsonl | grep -cF '$2'" || true; }
more_alerts() { [ "$(alerts_with "$2" "$3")" -gt "$1" ]; }   # N PAT1 PAT2
guard_sees_path_as_host() { # the guard's own mount namespace resolves ROOT to the same inode as the host
  local gp; gp=$(prop warden-guard MainPID)
  [ "$(cin nsenter -t "$gp" -m stat -c %i "$ROOT")" = "$(cin stat -c %i "$ROOT")" ]; }
restored_while_mapped() { # FILE SHA META: restored within 5 s while the agent's mapping unit still runs
  wait_for 5 restored "$1" "$2" "$3" && [ "$(cin systemctl is-active w21-mmap)" = active ]; }
bound_parent() { cin grep -qx "BindPaths=$AGENT_HOME" /etc/systemd/system/warden-guard.service && ! cin grep -qx "BindPaths=$ROOT" /etc/systemd/system/warden-guard.service; }

mmap_writer() { # a python3 that patches one byte through a MAP_SHARED mapping and keeps it open 20 s
  cat >"$M/usr/local/lib/w21-mmap.py" <<'PY'
import mmap, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, 0, mmap.MAP_SHARED)
os.close(fd)
i = m[:].index(b'=')
m[i:i + 1] = b'#'
m.flush()
print('patched byte', i, 'through the mapping; holding it;', sys.argv[2], flush=True)
time.sleep(20)
m.close()
PY
  chmod 0644 "$M/usr/local/lib/w21-mmap.py"; }

# docs/ARCHITECTURE.md, invariant 19, under the installed units (deployment A): the agent holds a
# directory of root's (a locked ~/.ssh: 0755, with root's authorized_keys in it) and exchanges it
# with a protected directory's path in one renameat2(RENAME_EXCHANGE), the one step a repair cannot
# race. The guard must move it aside whole, change nothing in it, say where it went, and put the
# approved tree back in a directory it makes itself.
EXCHANGE_PY='import ctypes,sys; l=ctypes.CDLL(None, use_errno=True); sys.exit(0 if l.syscall(316, -100, sys.argv[1].encode(), -100, sys.argv[2].encode(), 2) == 0 else ctypes.get_errno())'
# what stands below DIR: each entry's type, owner and mode, and each file's sha256 (as root)
picture() { cin sh -c "cd '$1' && find . -printf '%P|%y|%u:%g|%m\n' | sort && find . -type f -exec sha256sum {} + | sort"; }
# the approved tree as it stands: the root's owner and mode, then every protected entry's
approved_tree() { cin sh -c "stat -c '%U:%G %a' $ROOT && cd $ROOT && find config orgs blocks -printf '%p|%y|%u:%g|%m\n' | sort && find config orgs blocks -type f -exec sha256sum {} + | sort"; }
tree_is() { [ "$(approved_tree 2>&1)" = "$1" ]; }
same_picture() { [ "$(picture "$1" 2>&1)" = "$2" ]; }   # DIR PICTURE
# the newest alert (reason REASON, path PATH): its "quarantine" (where the foreign object went) and "detail"
alert_field() { cin grep -F "\"reason\":\"$1\"" "$STORE/alerts.jsonl" | grep -F "\"path\":\"$2\"" | tail -n 1 | sed -n "s/.*\"$3\":\"\([^\"]*\)\".*/\1/p"; }
# exchange_case WHAT DIR DECOY TARGET REASON ALERT_PATH: DECOY and TARGET are names in DIR
exchange_case() {
  local what=$1 dir=$2 decoy=$3 target=$4 reason=$5 apath=$6 before ino tree0 n0 kept gpid rc detail
  cin sh -c "rm -rf '$dir/$decoy' && mkdir -m 0755 '$dir/$decoy' && echo 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOWNERSKEY owner@host' > '$dir/$decoy/authorized_keys' && chmod 0644 '$dir/$decoy/authorized_keys'" >>"$LOG" 2>&1
  # root's directories in the agent's home were made long before any attack (the agent cannot make
  # one): let this one age past the guard's birth-time slack (src/guard/dir-repair.ts), as a real one has
  sleep 1
  before=$(picture "$dir/$decoy"); ino=$(cin stat -c %i "$dir/$decoy"); tree0=$(approved_tree); gpid=$(prop warden-guard MainPID)
  n0=$(alerts_with "\"reason\":\"$reason\"" "\"path\":\"$apath\"")
  echo "--- exchange $what: $decoy <-> $target in $dir; picture before:" >>"$LOG"; printf '%s\n' "$before" >>"$LOG"
  cin sh -c "cd '$dir' && setpriv --reuid=\$(id -u agent) --regid=\$(id -g agent) --clear-groups python3 -c \"\$1\" '$decoy' '$target'" sh "$EXCHANGE_PY" >>"$LOG" 2>&1; rc=$?
  check "exchange onto $what: the agent swapped root's locked directory (0755, authorized_keys) with $target in one renameat2(RENAME_EXCHANGE)" [ "$rc" = 0 ]
  check "…the approved tree is back at the path within 10 s (owner, mode, content of every protected entry)" wait_for 10 tree_is "$tree0"
  check "…one $reason alert for $apath" wait_for 10 more_alerts "$n0" "\"reason\":\"$reason\"" "\"path\":\"$apath\""
  check "…and only one (the guard did not repair twice)" sh -c "sleep 1; [ \"\$($H/in grep -F '\"reason\":\"$reason\"' $STORE/alerts.jsonl | grep -cF '\"path\":\"$apath\"')\" = $((n0 + 1)) ]"
  kept=$(alert_field "$reason" "$apath" quarantine); case "$kept" in /*) ;; ?*) kept=$ROOT/$kept;; esac
  info "exchange onto $what: the alert says root's directory went to $kept"
  check "…the alert names where root's directory went, and that is it (inode $ino)" sh -c "[ -n '$kept' ] && [ \"\$($H/in stat -c %i '$kept')\" = '$ino' ]"
  check "…root's directory kept its owner, mode and content (stat and sha256 of every entry)" same_picture "$kept" "$before"
  detail=$(alert_field "$reason" "$apath" detail); echo "detail: $detail" >>"$LOG"
  check "…the alert says warden changed nothing in it and moved it whole" grep -qF "warden changed nothing in it and moved it whole to $kept" <<<"$detail"
  check "…warden verify (the owner's) is clean" owner_cmd verify
  check "…the guard kept running (same pid $gpid)" sh -c "[ \"\$($H/in systemctl show -p MainPID --value warden-guard)\" = '$gpid' ]"
  cin rm -rf "$kept" "$dir/$decoy"   # what the agent held (the old root or orgs/), and root's directory
  revert_case "after the exchange onto $what: content edit by agent in orgs/" orgs/bookclub.toml "echo '# after the exchange' >> orgs/bookclub.toml" agent
}
exchanges_as_agent() {
  exchange_case "the root" "$AGENT_HOME" ssh "$(basename "$ROOT")" root-replaced .
  exchange_case "orgs/" "$ROOT" locked orgs dir-replaced orgs
}

# The path-hardening attacks, as the agent (deployment A), through the installed units: row 2, row 1
# (the swap), row 2 again in the new root, then row 3 on a small file system of its own.
# Rows 1 and 2 run with the root on the container's own disk: on a tmpfs a write through a
# shared mapping need not move mtime/ctime (measured on Linux 6.18), so the stamp poll
# cannot see it there (docs/DEPLOY.md §3).
attacks_as_agent() {
  local f=orgs/bookclub.toml s m n0 avail t0
  check "the guard's unit binds the agent's home $AGENT_HOME (the root's parent), not the root alone" bound_parent
  # Row 2: a write through a shared mapping, the mapping held open (no close: no inotify event)
  s=$(sha "$f"); m=$(meta "$f"); n0=$(alerts_with "\"path\":\"$f\"" '"reason":"content"')
  mmap_writer
  cin systemctl reset-failed w21-mmap >/dev/null 2>&1
  cin systemd-run --quiet --unit=w21-mmap --uid=agent --gid=agent /usr/bin/python3 /usr/local/lib/w21-mmap.py "$ROOT/$f" first >>"$LOG" 2>&1
  check "mmap(MAP_SHARED) write by agent: one byte patched through the mapping" wait_for 10 sh -c "$H/in journalctl -u w21-mmap --no-pager -o cat | grep -q 'patched byte.*first'"
  t0=$(date +%s%N)
  check "…reverted within 5 s, while the agent still holds the mapping, $m" restored_while_mapped "$f" "$s" "$m"
  info "shared mapping: reverted within $(( ($(date +%s%N) - t0) / 1000000 )) ms of the patch being seen in the writer's journal"
  check "…with a content alert for $f" wait_for 10 more_alerts "$n0" "\"path\":\"$f\"" '"reason":"content"'
  cin systemctl stop w21-mmap >/dev/null 2>&1

  # Row 1: the root swapped for the agent's own copy (cp -a, edit, two renames in the parent)
  s=$(sha "$f"); m=$(meta "$f"); n0=$(alerts_with '"reason":"root-replaced"' '"action":"reverted"')
  cin sudo -u agent sh -c "cd $AGENT_HOME && cp -a agent-root evil && echo 'hourly_cap = 777' >> evil/$f && mv agent-root agent-root.old && mv evil agent-root" >>"$LOG" 2>&1
  t0=$(date +%s%N)
  check "root swap by agent (cp -a, edit, mv root root.old, mv evil root): the root path serves the approved $f again, $m" wait_for 10 restored "$f" "$s" "$m"
  info "root swap: approved bytes at the path again $(( ($(date +%s%N) - t0) / 1000000 )) ms after the second mv returned (probes every 0.2 s, each a container exec)"
  check "…and alerts.jsonl has a root-replaced alert" wait_for 10 more_alerts "$n0" '"reason":"root-replaced"' '"action":"reverted"'
  check "…the guard's own mount namespace sees the new directory at the root path" guard_sees_path_as_host
  check "…the guard keeps running" running warden-guard
  cin rm -rf "$ROOT.old"
  revert_case "after the root swap: content edit by agent" config/conditions.toml 'echo "# after the swap" >> config/conditions.toml' agent

  # Row 2 again, in the new root warden made (the swapped-in copy moved aside whole): the poll follows it
  s=$(sha "$f"); m=$(meta "$f")
  cin systemctl reset-failed w21-mmap >/dev/null 2>&1
  cin systemd-run --quiet --unit=w21-mmap --uid=agent --gid=agent /usr/bin/python3 /usr/local/lib/w21-mmap.py "$ROOT/$f" second >>"$LOG" 2>&1
  check "after the root swap: mmap(MAP_SHARED) write by agent patched" wait_for 10 sh -c "$H/in journalctl -u w21-mmap --no-pager -o cat | grep -q 'patched byte.*second'"
  t0=$(date +%s%N)
  check "…reverted within 5 s, while the agent still holds the mapping, $m" restored_while_mapped "$f" "$s" "$m"
  info "after the root swap: a held mapping's write reverted within $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  cin systemctl stop w21-mmap >/dev/null 2>&1

  # A directory of root's exchanged onto the root and onto orgs/ (before row 3: a rename cannot cross
  # into the root's own file system)
  exchanges_as_agent

  # Row 3: the root on a small file system of its own (a tmpfs mounted at the root path with
  # the guard stopped, the files copied back as they were), filled by the agent, then a
  # same-size edit in place. (No loop device in the container: a tmpfs stands in for the
  # small ext4 of test/guard/full-disk.test.ts.)
  # A mount point cannot be moved aside (EBUSY) and warden never adopts a directory it did not
  # make (invariant 19): the guard stays up, touches nothing and says what to run; the owner
  # adopts the new file system with 'warden rehome --here' (guard stopped), then starts it.
  cin systemctl stop warden-guard
  cin sh -c "rm -rf /root/w21-rootcopy && cp -a $ROOT /root/w21-rootcopy && mount -t tmpfs -o size=${FULL_ROOT_MB}m,mode=\$(stat -c %a $ROOT),uid=\$(stat -c %u $ROOT),gid=\$(stat -c %g $ROOT) w21-full $ROOT && cp -a /root/w21-rootcopy/. $ROOT/ && rm -rf /root/w21-rootcopy" >>"$LOG" 2>&1
  cin systemctl start warden-guard
  check "row 3: a tmpfs mounted at the root while stopped: the guard stays up, not adopting it" wait_for 20 sh -c "$H/in journalctl -u warden-guard --no-pager -o cat | grep -q 'cannot be moved aside (EBUSY'"
  pid0=$(prop warden-guard MainPID)
  check "…still running, the same process 3 s later (never down, never restarted)" sh -c "sleep 3; [ \"\$($H/in systemctl show -p MainPID --value warden-guard)\" = $pid0 ] && $H/in systemctl is-active -q warden-guard"
  check "…and its alert names the owner's command" sh -c "$H/in journalctl -u warden-guard --no-pager -o cat | grep -q 'warden rehome --here'"
  cin systemctl stop warden-guard
  check "…the owner adopts it: warden rehome --here" owner_cmd rehome --here
  cin systemctl start warden-guard
  check "row 3 set-up: the root is on its own ${FULL_ROOT_MB} MB tmpfs, the guard running again" sh -c "$H/in mountpoint -q $ROOT && $H/in systemctl is-active -q warden-guard"
  wait_for 20 running warden-guard
  s=$(sha "$f"); m=$(meta "$f")
  cin sudo -u agent sh -c "mkdir -p $ROOT/fill; cat /dev/zero > $ROOT/fill/big 2>/dev/null; i=0; while head -c 4096 /dev/zero > $ROOT/fill/s\$i 2>/dev/null; do i=\$((i+1)); done; true" >>"$LOG" 2>&1
  avail=$(cin df -B1 --output=avail "$ROOT" | tail -1 | tr -d ' ')
  check "full disk: the agent filled the root's file system ($avail bytes free)" test "$avail" = 0
  cin sudo -u agent python3 -c "
f = open('$ROOT/$f', 'r+b'); d = f.read(); f.seek(d.index(b'=')); f.write(b'#'); f.close()" >>"$LOG" 2>&1
  t0=$(date +%s%N)
  check "…a same-size in-place edit by agent on the full disk is reverted, $m" wait_for 5 restored "$f" "$s" "$m"
  info "full disk: reverted $(( ($(date +%s%N) - t0) / 1000000 )) ms after the edit returned"
  check "…and the alert names the full disk" wait_for 10 more_alerts 0 "\"path\":\"$f\"" 'file system is full (ENOSPC)'
  cin rm -rf "$ROOT/fill"
  revert_case "with room again: content edit by agent" "$f" "echo '# room again' >> $f" agent
}

# docs/DEPLOY.md, "Who runs which command", under the installed units (deployment A): status, why,
# edit and notify test run as root, as the owner (the warden account through sudo, as §2.6 says)
# and as the agent each tell the truth about the deployed root (never "not initialised", never a
# second store), and the command each advises works when run as written.
as_root() { cin sh -c "cd / && $1"; }                        # root, in a plain shell
as_agent_here() { cin sudo -u agent sh -c "cd $ROOT && $1"; } # the agent, in the root, as a runtime would
# the command a held-root message advises ("Run it as the guard's account: CMD (docs/…")
advised() { sed -n "s/.*Run it as the guard's account: \(.*\) (docs\/DEPLOY.md.*/\1/p" | head -1; }
# the first 'sudo -u warden warden …' command quoted in OUTPUT that starts with WORDS
quoted_cmd() { grep -oE "'sudo -u warden (--preserve-env=EDITOR,VISUAL )?warden $1[^']*'" | head -1 | tr -d "'"; }
no_second_store() { # nothing a held-root command could have made: no store in the root, none in a caller's home
  ! cin test -e "$ROOT/snapshots" && ! cin test -e /root/.local/state/warden && ! cin test -e "$AGENT_HOME/.local/state/warden" \
    && [ "$(cin ls "$GUARD_STATE/stores")" = "$ROOT_ID" ]; }
said_held() { # OUTPUT: the held-root message, not "not initialised"
  printf '%s' "$1" | grep -q 'is guarded by the deployed warden guard (account warden)' && ! printf '%s' "$1" | grep -qi 'not initialised'; }
status_truth() { # OUTPUT RC: the guard's view: running, every file ok, no drift
  printf '%s' "$1" | grep -q '^daemon: running' && printf '%s' "$1" | grep -q '^files: 6 protected, 6 ok$' && ! printf '%s' "$1" | grep -q DRIFT && [ "$2" = 0 ]; }
desktop_set() { cin cat "$ROOT/config/warden.toml" | sed "/^\[notify.desktop\]/,/^enabled/ s/^enabled = .*/enabled = $1/" | apply_approved config/warden.toml; }
owner_form() { case "$1" in "sudo -u warden warden "*|"sudo -u warden --preserve-env=EDITOR,VISUAL warden edit "*) return 0;; esac; return 1; }
# CALLER held CMD: CALLER's run of a held-root command says who holds it; the advised command,
# run as written by the owner (root, who may sudo), exits 0 and prints what CHECK wants
held_case() { # CALLER 'warden ARGS' CHECK_FN
  local who=$1 cmd=$2 fn=$3 out rc adv
  if [ "$who" = root ]; then out=$(as_root "$cmd --root $ROOT" 2>&1); rc=$?; else out=$(as_agent_here "$cmd" 2>&1); rc=$?; fi
  printf '%s\n' "--- $who: $cmd (rc $rc)" "$out" >>"$LOG"
  check "$cmd as $who: says the deployed guard holds the root (exit 2), not 'not initialised'" sh -c "[ $rc = 2 ] && printf '%s' \"\$1\" | grep -q 'is guarded by the deployed warden guard (account warden)' && ! printf '%s' \"\$1\" | grep -qi 'not initialised'" sh "$out"
  adv=$(printf '%s' "$out" | advised)
  check "…and advises the owner's command ($adv)" owner_form "$adv"
  out=$(as_root "EDITOR=ed-append $adv </dev/null" 2>&1); rc=$?
  printf '%s\n' "--- advised, run as written: $adv (rc $rc)" "$out" >>"$LOG"
  check "…which, run as written, works" "$fn" "$out" "$rc"
}
why_truth() { printf '%s' "$1" | grep -q 'reverted orgs/bookclub.toml: content' && [ "$2" = 0 ]; }
edit_queued() { printf '%s' "$1" | grep -q "sudo -u warden warden approve [A-Za-z0-9-]* .*--root $ROOT" && [ "$2" = 0 ]; }
notify_ok() { # OUTPUT RC: discord ok (through the notifier), nothing FAILed, exit 0, and the DM arrived
  printf '%s' "$1" | grep -q '^ok    discord' && ! printf '%s' "$1" | grep -q '^FAIL' && [ "$2" = 0 ]; }
test_dms() { cin journalctl -u fake-discord --no-pager -o cat | grep -c 'warden test message' || true; }
owner_day_case() {
  revert_case "for why: content edit by agent" orgs/bookclub.toml 'echo "# for why" >> orgs/bookclub.toml' agent
  local out rc cmd id code n0
  # status
  out=$(owner_cmd status 2>&1); rc=$?; printf '%s\n' "--- owner: status (rc $rc)" "$out" >>"$LOG"
  check "warden status as the owner (sudo -u warden): daemon running, 6 of 6 files ok, no drift, exit 0" status_truth "$out" "$rc"
  cmd=$(printf '%s' "$out" | quoted_cmd why)
  check "…its 'see' command ($cmd) works as written" sh -c "out=\$($H/in sh -c '$cmd' 2>&1) && printf '%s' \"\$out\" | grep -q 'reverted orgs/bookclub.toml: content'"
  held_case root 'warden status' status_truth
  held_case agent 'warden status' status_truth
  # why, after the revert above
  out=$(owner_cmd why orgs/bookclub.toml 2>&1); rc=$?; printf '%s\n' "--- owner: why (rc $rc)" "$out" >>"$LOG"
  check "warden why orgs/bookclub.toml as the owner: the revert, exit 0" why_truth "$out" "$rc"
  cmd=$(printf '%s' "$out" | grep -oE "'sudo -u warden warden diff [^']*'" | tail -1 | tr -d "'")   # the newest alert's
  check "…its 'what was rejected' command ($cmd) works as written and shows the rejected line" sh -c "$H/in sh -c '$cmd' 2>&1 | grep -q '# for why'"
  cmd=$(printf '%s' "$out" | quoted_cmd edit)
  check "…it advises the owner's edit ($cmd)" [ -n "$cmd" ]
  held_case root 'warden why orgs/bookclub.toml' why_truth
  held_case agent 'warden why orgs/bookclub.toml' why_truth
  # edit (EDITOR=ed-append: appends a comment line, no terminal), approved with the code from the DM
  held_case root 'EDITOR=ed-append warden edit orgs/bookclub.toml' edit_queued
  held_case agent 'EDITOR=ed-append warden edit orgs/bookclub.toml' edit_queued
  out=$(owner_cmd edit orgs/bookclub.toml </dev/null 2>&1); rc=$?; printf '%s\n' "--- owner: edit (rc $rc)" "$out" >>"$LOG"
  check "warden edit orgs/bookclub.toml as the owner: a request, with the approve command for this deployment" edit_queued "$out" "$rc"
  id=$(printf '%s' "$out" | grep -oE 'warden approve [A-Za-z0-9-]+' | head -1 | awk '{print $3}')
  wait_for 20 sh -c "$H/in journalctl -u fake-discord --no-pager -o cat | grep -q 'approves request $id'"
  code=$(cin journalctl -u fake-discord --no-pager -o cat | grep -oE 'one-time code [0-9]+ approves request [A-Za-z0-9-]+' | grep -F "request $id" | tail -1 | awk '{print $3}')
  cmd=$(printf '%s' "$out" | quoted_cmd approve)
  case "$cmd" in *'--code CODE'*) cmd=${cmd/--code CODE/--code $code};; *) cmd="$cmd --code $code";; esac
  check "…its approve command, run as written with the code from the DM in place of CODE, applies the edit" sh -c "$H/in sh -c '$cmd' && $H/in grep -q '# sanctioned change' $ROOT/orgs/bookclub.toml"
  owner_cmd deny --all >>"$LOG" 2>&1   # the requests the held-case edits queued
  # notify test: through the notifier (which alone holds the token), desktop off said as off
  n0=$(test_dms)
  out=$(owner_cmd notify test 2>&1); rc=$?; printf '%s\n' "--- owner: notify test (rc $rc)" "$out" >>"$LOG"
  check "warden notify test as the owner: discord ok through the running notifier, nothing failed, exit 0" notify_ok "$out" "$rc"
  check "…and the test message reached the Discord stand-in" wait_for 20 sh -c "[ \$($H/in journalctl -u fake-discord --no-pager -o cat | grep -c 'warden test message') -gt $n0 ]"
  held_case root 'warden notify test' notify_ok
  held_case agent 'warden notify test' notify_ok
  # a channel that cannot run here (desktop, with no session for the warden account) is off, not failed
  check "[notify.desktop] enabled = true through warden apply (approved by code)" desktop_set true
  out=$(owner_cmd notify test 2>&1); rc=$?; printf '%s\n' "--- owner: notify test, desktop on (rc $rc)" "$out" >>"$LOG"
  check "warden notify test with the desktop channel on: 'off   desktop' with its reason, discord ok, exit 0" sh -c "printf '%s' \"\$1\" | grep -q '^off   desktop: ' && [ $rc = 0 ]" sh "$out"
  check "[notify.desktop] enabled = false again" desktop_set false
  check "no command made a second store (none in the root, none in root's or the agent's home; one in the guard's)" no_second_store
}

# an owner's sanctioned change of FILE (stdin: the new content), approved with the code from the DM
apply_approved() {
  local f=$1 before out id code; before=$(dm_count)
  out=$(owner_cmd apply "$f" --from - 2>&1); echo "apply $f: $out" >>"$LOG"
  id=$(printf '%s' "$out" | grep -oE 'warden approve [A-Za-z0-9-]+' | head -1 | awk '{print $3}')
  [ -n "$id" ] || { echo "no request: $out"; return 1; }
  wait_for 20 sh -c "[ \$($H/in journalctl -u fake-discord --no-pager -o cat | grep -c 'REQ /api/v10/channels/1/messages') -gt $before ]"
  code=$(cin journalctl -u fake-discord --no-pager -o cat | grep -oE 'one-time code [0-9]+ approves request [A-Za-z0-9-]+' | grep -F "request $id" | tail -1 | awk '{print $3}')
  approve_with "$id" "$code"
}
# the agent, as its own unit (what an agent runtime is): agent_unit NAME 'shell run in the root'
agent_unit() { cin systemd-run --quiet --wait --pipe --collect --unit="$1" -p User=agent -p WorkingDirectory=$ROOT /bin/sh -c "$2"; }
# the newest alert for PATH (reason REASON) names user agent and unit UNIT
alert_by() { # PATH REASON UNIT
  cin grep -F "\"path\":\"$1\"" "$STORE/alerts.jsonl" | grep -F "\"reason\":\"$2\"" | tail -n 1 \
    | grep -F '"user":"agent"' | grep -qF "\"unit\":\"$3\""
}

# docs/DEPLOY.md §9: the witness (deployment A), attribution, then enforce = true
unchanged() { [ "$(sha "$1")" = "$2" ]; }
enforce_on() { { cin cat "$ROOT/config/warden.toml"; printf '\n[witness]\nenforce = true\n'; } | apply_approved config/warden.toml; }
# (the unit fails, so its output is taken first: pipefail would fail a pipeline on it)
refused_echo() { local o; o=$(agent_unit agent-edit-2 'echo "# refused" >> config/conditions.toml' 2>&1); echo "$o"; case "$o" in *'Operation not permitted'*) return 0;; esac; return 1; }
refused_mmap() { local o; o=$(agent_unit agent-mmap 'python3 /usr/local/bin/warden-test-mmap config/conditions.toml' 2>&1); echo "$o"; [ "$o" = EPERM ]; }
refused_save() { ! agent_unit agent-save 'cp config/conditions.toml config/.conditions.toml.swp && echo x >> config/.conditions.toml.swp && mv config/.conditions.toml.swp config/conditions.toml' >>"$LOG" 2>&1; }
refused_save_alert() { cin grep -F '"reason":"refused"' "$STORE/alerts.jsonl" | grep -F 'conditions.toml.swp' | grep -qF '"unit":"agent-save.service"'; }
# By name (the witness's second group): a chmod, a rename away, and a file written in the agent's
# home and moved over a protected one. perl does each in one system call and then waits 0.4 s,
# so its identity is still there to be read (a real short-lived chmod may be gone first: that
# alert then says so, with its pid; test/witness/names.test.ts covers both).
PERL_HOLD='select(undef, undef, undef, 0.4)'
name_alert() { # PATH REASON UNIT OP
  cin grep -F "\"path\":\"$1\"" "$STORE/alerts.jsonl" | grep -F "\"reason\":\"$2\"" | tail -n 1 \
    | grep -F '"user":"agent"' | grep -F "\"op\":\"$4\"" | grep -qF "\"unit\":\"$3\""
}
# The owner's own edit through sudo, from a PAM login session (pam_loginuid sets loginuid there; sudo keeps it).
owner_sudo_alert() { # PATH UID
  # grep | tail, not tac | head: under pipefail, head's early exit fails the pipeline (SIGPIPE) once the file outgrows a pipe
  cin grep -F "\"path\":\"$1\"" "$STORE/alerts.jsonl" | tail -n 1 | grep -F '"user":"root"' | grep -F "\"loginuid\":$2," | grep -qE '"unit":"session-[0-9]+\.scope"'
}
# The owner's own `sudo EDITOR`, from a PAM login session. In this container a login is
# `systemd-run -p PAMName=login --uid=OWNER`: pam_loginuid (the login stack's) sets loginuid
# (nspawn keeps CAP_AUDIT_CONTROL), and pam_systemd (installed above for the desktop) moves
# it into a session-N.scope of logind's. There is no vi in the image: the kit's ed-append (a
# one-line sh script that appends, as an editor would) is the editor, run through sudo.
owner_case() {
  local ou s m
  ou=$(cin id -u $OWNER)
  cin sh -c "printf '%s\n' '$OWNER ALL=(root) NOPASSWD: /usr/local/bin/ed-append' > /etc/sudoers.d/warden-test-owner && chmod 0440 /etc/sudoers.d/warden-test-owner"
  s=$(sha config/conditions.toml); m=$(meta config/conditions.toml)
  local lu; lu=$(cin systemd-run --quiet --wait --pipe --collect --unit=owner-login -p PAMName=login --uid=$OWNER /bin/sh -c "cat /proc/self/loginuid; sudo -n /usr/local/bin/ed-append $ROOT/config/conditions.toml" 2>>"$LOG")
  info "the owner's login session: loginuid $lu (uid $ou)"
  check "a PAM login session gives the owner a loginuid ($OWNER, $ou)" [ "$lu" = "$ou" ]
  check "the owner's sudo edit is reverted" wait_for 10 restored config/conditions.toml "$s" "$m"
  check "…and its alert says user root, loginuid $ou, session-N.scope (the owner's login survives sudo)" wait_for 10 owner_sudo_alert config/conditions.toml "$ou"
  check "…in plain words in warden why: in $OWNER's login session (as root, through sudo or su)" why_says config/conditions.toml "by user root (uid 0), in $OWNER's login session [0-9]* (as root, through sudo or su): process \"ed-append\" (pid"
  cin tac "$STORE/alerts.jsonl" | grep -F '"path":"config/conditions.toml"' | head -3 >>"$LOG"
  cin rm -f /etc/sudoers.d/warden-test-owner
}
why_says() { local o; o=$(cin sudo -u warden warden why "$1" --root "$ROOT" 2>&1); echo "$o"; printf '%s\n' "$o" | grep -q "$2"; }
reverts_of() { cin grep -F "\"path\":\"$1\"" "$STORE/alerts.jsonl" | grep -c '"action":"reverted"'; }
witness_case() {
  install -m 0755 /dev/stdin "$M/usr/local/bin/warden-test-mmap" <<'PY'
import mmap, os, sys
try:
    fd = os.open(sys.argv[1], os.O_RDWR)
except PermissionError:
    print("EPERM"); sys.exit(0)
m = mmap.mmap(fd, 0); m[0:1] = b"#"; m.flush(); print("WROTE")
PY
  check "docs/DEPLOY.md witness block ran as written" run_block docs/DEPLOY.md witness
  check "warden-witness active (running) via READY=1" wait_for 30 running warden-witness
  info "witness status: $(prop warden-witness StatusText)"
  check "warden status says the witness runs (warden-witness)" sh -c "$H/in sudo -u warden warden status --root $ROOT | grep -q 'witness: running (warden-witness), recording'"
  local s m n0
  s=$(sha config/conditions.toml); m=$(meta config/conditions.toml)
  agent_unit agent-edit-1 'echo "# by the agent" >> config/conditions.toml' >>"$LOG" 2>&1
  check "the agent's echo >> is reverted" wait_for 10 restored config/conditions.toml "$s" "$m"
  check "…and the alert names user agent and its unit agent-edit-1.service" wait_for 10 alert_by config/conditions.toml content agent-edit-1.service
  check "…in plain words in warden why" sh -c "$H/in sudo -u warden warden why config/conditions.toml --root $ROOT | grep -q 'by user agent (uid [0-9]*), unit agent-edit-1.service: process \"sh\"'"
  # chmod, a rename away, a file written elsewhere and moved in: each named (the second, notification group)
  check "warden status says the witness sees names too" sh -c "$H/in sudo -u warden warden status --root $ROOT | grep -q 'chmod, chown, deletes and renames'"
  agent_unit agent-chmod "perl -e 'chmod 0600, \$ARGV[0] or die; $PERL_HOLD' config/conditions.toml" >>"$LOG" 2>&1
  check "the agent's chmod is put right" wait_for 10 restored config/conditions.toml "$s" "$m"
  check "…and its alert names user agent, agent-chmod.service (op attrib)" wait_for 10 name_alert config/conditions.toml mode agent-chmod.service attrib
  # "Elsewhere" is a directory of the root's own that nothing protects (the root is on its own
  # tmpfs by now, row 3, and a rename cannot cross file systems).
  cin sudo -u agent mkdir -p $ROOT/scratch
  agent_unit agent-mv "perl -e 'rename \$ARGV[0], \$ARGV[1] or die \"rename: \$!\"; $PERL_HOLD' config/conditions.toml scratch/away.toml" >>"$LOG" 2>&1
  check "the agent's mv-away is put right" wait_for 10 restored config/conditions.toml "$s" "$m"
  check "…and its alert names agent-mv.service (op rename-away)" wait_for 10 name_alert config/conditions.toml deleted agent-mv.service rename-away
  agent_unit agent-mvin "echo 'written = \"elsewhere\"' > scratch/in.toml && perl -e 'rename \$ARGV[0], \$ARGV[1] or die \"rename: \$!\"; $PERL_HOLD' scratch/in.toml config/conditions.toml" >>"$LOG" 2>&1
  check "a file written outside the protected directory and moved over it is put right" wait_for 10 restored config/conditions.toml "$s" "$m"
  check "…and its alert names agent-mvin.service (op rename-in)" wait_for 10 name_alert config/conditions.toml content agent-mvin.service rename-in
  check "…in plain words in warden why" why_says config/conditions.toml 'by user agent (uid [0-9]*), unit agent-mvin.service: process "perl".*renamed another file over it'
  owner_case
  # enforce = true, as a sanctioned change; the witness takes it from the approved copy
  check "[witness] enforce = true through warden apply (approved by code)" enforce_on
  check "the witness took the approved setting (refusing)" wait_for 10 sh -c "$H/in journalctl -u warden-witness --no-pager -o cat | grep -q 're-read the approved warden.toml.*refusing'"
  check "warden status says it refuses, in the witness's own word (its heartbeat)" wait_for 10 sh -c "$H/in sudo -u warden warden status --root $ROOT | grep -q 'witness: running (warden-witness), refusing opens for writing (enforce = true); [1-9][0-9]* director(ies) and [1-9][0-9]* file(s) marked'"
  s=$(sha config/conditions.toml); n0=$(reverts_of config/conditions.toml)
  check "enforce: the agent's echo >> gets EPERM" refused_echo
  check "…and the alert says refused, by user agent, agent-edit-2.service" wait_for 10 alert_by config/conditions.toml refused agent-edit-2.service
  check "enforce: an mmap write (its open O_RDWR) gets EPERM" refused_mmap
  check "…refused alert for the mmap writer (agent-mmap.service)" wait_for 10 alert_by config/conditions.toml refused agent-mmap.service
  check "enforce: a rename-over-save (temp file, then mv over) is refused at the temp file" refused_save
  check "…the refused save names agent-save.service" wait_for 10 refused_save_alert
  check "…conditions.toml never changed through all three" unchanged config/conditions.toml "$s"
  check "…and no content revert was needed for it" sh -c "[ $(reverts_of config/conditions.toml) -le $n0 ]"
  local ws; ws=$(cin systemd-analyze security --no-pager warden-witness.service | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
  info "systemd-analyze security (online): warden-witness $ws"
  check "online exposure: witness $ws <= 2.0" awk -v s="$ws" 'BEGIN { exit !(s != "" && s <= 2.0) }'
  check "no seccomp kill (SIGSYS) in the witness's journal" sh -c "! $H/in journalctl --no-pager -o cat -u warden-witness | grep -qE 'SIGSYS|status=31'"
}

deployment() { # A | B
  DEP=$1
  local t_dep; t_dep=$(date +%s)
  teardown; setup_root >>"$LOG" 2>&1 || fail "agent root set up"
  local doc=README.md block=deploy
  [ "$DEP" = B ] && { doc=docs/DEPLOY.md; block=deploy-b; }
  check "$doc's $block block ran as written" run_block $doc $block
  check "…and ran again as written, changing nothing (idempotent: useradd, init, the token_file apply)" run_block $doc $block
  check "config/warden.toml names token_file, put there by the block's warden apply (one [notify.discord])" \
    sh -c "[ \$($H/in grep -cx 'token_file = \"$TOKEN_FILE\"' $ROOT/config/warden.toml) = 1 ]"
  # The test's own settings, the sanctioned way too: owner codes (by DM), and the stand-in's URL.
  check "the test switches to approval = owner-code and the stand-in's api, through warden apply" sh -c "
    $H/in cat $ROOT/config/warden.toml | sed -e 's/^approval = .*/approval = \"owner-code\"/' -e '/^token_file = /a api = \"http://127.0.0.1:$DISCORD_PORT/api\"' \
    | $H/in sudo -u warden warden apply config/warden.toml --from - --root $ROOT && $H/in systemctl reload warden-notify && $H/in grep -q '^api = ' $ROOT/config/warden.toml"

  check "warden-guard active (running) via READY=1 (Type=notify)" wait_for 30 running warden-guard
  check "warden-notify active (running) via READY=1 (Type=notify)" wait_for 30 running warden-notify
  check "the store is in the guard's state directory ($STORE), as warden status --json says, not in the root" \
    sh -c "$H/in sudo -u warden warden status --json --root $ROOT | tr -d ' \n' | grep -qF '\"store\":{\"dir\":\"$STORE\",\"mode\":\"state\"' && [ \"\$($H/in stat -c '%U %a' $GUARD_STATE $STORE | sort -u)\" = 'warden 700' ] && $H/in test -S $CONTROL/warden.sock && ! $H/in test -e $ROOT/snapshots"
  local gpid npid t_up; gpid=$(prop warden-guard MainPID); npid=$(prop warden-notify MainPID); t_up=$(date +%s)
  info "guard status: $(prop warden-guard StatusText); caps: $(prop warden-guard AmbientCapabilities | cut -c1-80)"
  check "token file stays root-only (0600 root:root), handed over by LoadCredential=" \
    sh -c "[ \"\$($H/in stat -c '%a %U:%G' $TOKEN_FILE)\" = '600 root:root' ] && $H/in grep -q '^LoadCredential=discord-token:$TOKEN_FILE' /etc/systemd/system/warden-notify.service"

  # -- direct edits, reverted with owner and mode kept
  local who=agent
  if [ "$DEP" = B ]; then
    check "the agent cannot even write its configuration (owned by warden)" sh -c "! $H/in sudo -u agent sh -c 'echo x >> $ROOT/config/conditions.toml'"
    who=root   # B: nobody but root (or warden) can write; root's hand stands in for "a direct edit"
  fi
  revert_case "content edit by $who" config/conditions.toml 'echo "# injected" >> config/conditions.toml' "$who"
  revert_case "mode change by $who" config/guests.toml 'chmod 0666 config/guests.toml' "$who"
  revert_case "delete by $who" orgs/bookclub.toml 'rm -f orgs/bookclub.toml' "$who"
  revert_case "rename by $who" config/guests.toml 'mv config/guests.toml config/guests.old' "$who"
  revert_case "owner change by root" orgs/bookclub.toml 'chown nobody orgs/bookclub.toml' root
  revert_case "credentials.toml emptied by $who" config/credentials.toml ': > config/credentials.toml' "$who"
  check "journal has a revert line for each" sh -c "[ \$($H/in journalctl -u warden-guard --no-pager -o cat --since @$t_dep | grep -c 'reverted') -ge 5 ]"

  # -- the owner hears about it
  check "a DM reached the Discord stand-in (fake-discord.py)" wait_for 20 sh -c "[ \$($H/in journalctl -u fake-discord --no-pager -o cat | grep -c 'REQ /api/v10/channels/1/messages') -ge 1 ]"
  check "the DM carried the bot token from the credential" sh -c "$H/in journalctl -u fake-discord --no-pager -o cat | grep -q 'auth=Bot fake'"
  check "journalctl _SYSTEMD_UNIT=warden-guard.service WARDEN_PATH=config/conditions.toml: the revert as a structured entry" sh -c "
    $H/in journalctl --no-pager -o json --since @$t_dep _SYSTEMD_UNIT=warden-guard.service WARDEN_PATH=config/conditions.toml \
    | grep -F '\"WARDEN_ACTION\":\"reverted\"' | grep -F '\"WARDEN_REASON\":\"content\"' | grep -F '\"MESSAGE_ID\":\"fc34d4f1a04e4d1d9cdd6c8daea956d8\"' | grep -qF '\"PRIORITY\":\"4\"'"
  check "…and the line is not in the journal twice (the entry carries it)" sh -c "
    [ \$($H/in journalctl --no-pager -o cat --since @$t_dep -u warden-guard | grep -c 'reverted orgs/bookclub.toml: deleted') = 1 ]"
  [ "$DEP" = A ] && desktop_case

  # -- sanctioned changes, as documented (approval = owner-code: the code comes by DM)
  local before_dm id code out
  before_dm=$(dm_count)
  out=$(owner_cmd edit config/conditions.toml </dev/null 2>&1); echo "edit: $out" >>"$LOG"
  id=$(printf '%s' "$out" | grep -oE 'warden approve [A-Za-z0-9-]+' | head -1 | awk '{print $3}')
  if [ -n "$id" ]; then pass "warden edit (EDITOR) queued request $id for approval"; else fail "warden edit queued a request" "$(printf '%s' "$out" | tail -2 | tr '\n' ' ')"; fi
  check "…and says the code was sent (warden-notify runs), not 'no notifier is running'" said_sent "$out"
  check "the one-time code came by DM" wait_for 20 sh -c "[ \$($H/in journalctl -u fake-discord --no-pager -o cat | grep -c 'REQ /api/v10/channels/1/messages') -gt $before_dm ]"
  code=$(cin journalctl -u fake-discord --no-pager -o cat | grep 'channels/1/messages' | grep -oE 'one-time code [0-9]+ approves request [A-Za-z0-9-]+' | grep -F "request $id" | tail -1 | awk '{print $3}')
  echo "code=$code id=$id" >>"$LOG"

  # -- what the network-facing notifier can see, from inside its own mount namespace, now
  # that quarantine/ (created at the first revert) and pending/ (this request) have entries
  npid=$(prop warden-notify MainPID)
  local wuid wgid; wuid=$(cin id -u warden); wgid=$(cin id -g warden)
  for d in $STORE/quarantine $STORE/pending $STORE/secrets; do
    check "host side: $d is not empty (so the next checks mean something)" sh -c "[ -n \"\$($H/in ls -A $d)\" ]"
  done
  for d in $HIDDEN_FROM_NOTIFIER; do
    check "notifier (uid warden, its mount ns) cannot list $d" sh -c "! $H/in nsenter -t $npid -m -S $wuid -G $wgid ls -A $d"
    check "notifier's mount ns shows $d empty or absent" sh -c "[ -z \"\$($H/in nsenter -t $npid -m ls -A $d 2>/dev/null)\" ]"
  done

  local m_cond; m_cond=$(meta config/conditions.toml)
  check "warden approve ID --code CODE (from the DM) applies the edit" approve_with "$id" "$code"
  check "the approved edit is in place with $m_cond, and stays" sh -c "sleep 2; $H/in grep -q '# sanctioned change' $ROOT/config/conditions.toml && [ \"\$($H/in stat -c '%U:%G %a' $ROOT/config/conditions.toml)\" = '$m_cond' ]"
  # apply --from -: new content for an org file, approved the same way
  local m_org; m_org=$(meta orgs/bookclub.toml); before_dm=$(dm_count)
  out=$({ cin cat "$ROOT/orgs/bookclub.toml"; echo '# applied by the owner'; } | owner_cmd apply orgs/bookclub.toml --from - 2>&1); echo "apply: $out" >>"$LOG"
  id=$(printf '%s' "$out" | grep -oE 'warden approve [A-Za-z0-9-]+' | head -1 | awk '{print $3}')
  wait_for 20 sh -c "[ \$($H/in journalctl -u fake-discord --no-pager -o cat | grep -c 'REQ /api/v10/channels/1/messages') -gt $before_dm ]"
  code=$(cin journalctl -u fake-discord --no-pager -o cat | grep -oE 'one-time code [0-9]+ approves request [A-Za-z0-9-]+' | grep -F "request $id" | tail -1 | awk '{print $3}')
  check "warden apply --from - then approve (code by DM)" approve_with "$id" "$code"
  check "the applied org file is in place with $m_org, and stays" sh -c "sleep 2; $H/in grep -q '# applied by the owner' $ROOT/orgs/bookclub.toml && [ \"\$($H/in stat -c '%U:%G %a' $ROOT/orgs/bookclub.toml)\" = '$m_org' ]"

  # -- the owner's day: status, why, edit, notify test as root, the owner and the agent (deployment A)
  [ "$DEP" = A ] && owner_day_case

  # -- up for more than one watchdog period, same process
  local left=$(( t_up + WATCHDOG_S + 5 - $(date +%s) )); [ "$left" -gt 0 ] && sleep "$left"
  check "guard still up after > ${WATCHDOG_S}s (watchdog fed; same pid $gpid)" sh -c "[ \"\$($H/in systemctl show -p MainPID --value warden-guard)\" = $gpid ] && [ \"\$($H/in systemctl show -p NRestarts --value warden-guard)\" = 0 ]"
  check "notifier still up after > ${WATCHDOG_S}s (same pid $npid)" sh -c "[ \"\$($H/in systemctl show -p NRestarts --value warden-notify)\" = 0 ] && [ \"\$($H/in systemctl show -p ActiveState --value warden-notify)\" = active ]"

  # -- a hidden directory replaced while the notifier runs (the owner clears quarantine/, the
  # guard makes it again at the next revert): that detaches the unit's InaccessiblePaths=
  # mount, so the notifier must notice and get itself restarted with the new one hidden
  npid=$(prop warden-notify MainPID)
  cin rm -rf "$STORE/quarantine"
  revert_case "after quarantine/ was removed: content edit by $who" config/conditions.toml 'echo "# after cleanup" >> config/conditions.toml' "$who"
  check "notifier restarted itself once the new quarantine/ was visible to it" wait_for 15 sh -c "p=\$($H/in systemctl show -p MainPID --value warden-notify); [ \"\$p\" != $npid ] && [ \"\$p\" != 0 ] && [ \"\$($H/in systemctl show -p SubState --value warden-notify)\" = running ]"
  npid=$(prop warden-notify MainPID)
  check "…and in its new mount ns the new quarantine/ is hidden" sh -c "[ -n \"\$($H/in ls -A $STORE/quarantine)\" ] && ! $H/in nsenter -t $npid -m -S $wuid -G $wgid ls -A $STORE/quarantine"

  # -- reload
  check "systemctl reload warden-guard: same pid, config reloaded" sh -c "$H/in systemctl reload warden-guard && sleep 1 && [ \"\$($H/in systemctl show -p MainPID --value warden-guard)\" = $gpid ] && $H/in journalctl -u warden-guard --no-pager -o cat --since @$t_dep | grep -q 'reloaded'"

  # -- stop (timed), an edit while down, start
  local t1 t2 ms s m
  t1=$(date +%s%N); cin systemctl stop warden-guard; t2=$(date +%s%N); ms=$(( (t2 - t1) / 1000000 ))
  info "systemctl stop warden-guard took $ms ms"
  check "stop: clean exit (Result=success) in ${ms} ms (< 2000)" sh -c "[ \"\$($H/in systemctl show -p Result --value warden-guard)\" = success ] && [ $ms -lt 2000 ]"
  s=$(sha config/conditions.toml); m=$(meta config/conditions.toml)
  if [ "$DEP" = A ]; then as_agent 'echo "# while down" >> config/conditions.toml'; else cin sh -c "echo '# while down' >> $ROOT/config/conditions.toml"; fi
  cin systemctl start warden-guard
  check "an edit made while the guard was down is reverted at start" wait_for 20 restored config/conditions.toml "$s" "$m"
  check "…with reason changed-while-stopped" cin grep -q changed-while-stopped "$STORE/alerts.jsonl"

  # -- kill -9: Restart=always brings it back, and it guards again
  gpid=$(prop warden-guard MainPID)
  cin systemctl kill -s KILL warden-guard
  check "kill -9 guard: restarted by Restart=always" wait_for 20 sh -c "[ \"\$($H/in systemctl show -p MainPID --value warden-guard)\" != $gpid ] && [ \"\$($H/in systemctl show -p ActiveState --value warden-guard)/\$($H/in systemctl show -p SubState --value warden-guard)\" = active/running ]"
  revert_case "after kill -9: content edit by $who" config/conditions.toml 'echo "# again" >> config/conditions.toml' "$who"
  npid=$(prop warden-notify MainPID)
  cin systemctl kill -s KILL warden-notify
  check "kill -9 notifier: restarted" wait_for 20 sh -c "[ \"\$($H/in systemctl show -p MainPID --value warden-notify)\" != $npid ] && [ \"\$($H/in systemctl show -p SubState --value warden-notify)\" = running ]"

  # -- a frozen guard: the watchdog kills it, Restart=always brings it back
  gpid=$(prop warden-guard MainPID)
  local nr; nr=$(prop warden-guard NRestarts)
  cin kill -STOP "$gpid"
  check "SIGSTOPped guard killed by the watchdog (<= ${WATCHDOG_S}s + 15s) and restarted" wait_for $((WATCHDOG_S + 15)) sh -c "[ \"\$($H/in systemctl show -p NRestarts --value warden-guard)\" -gt $nr ] && [ \"\$($H/in systemctl show -p SubState --value warden-guard)\" = running ]"
  check "…the journal says watchdog timeout" sh -c "$H/in journalctl -u warden-guard --no-pager -o cat --since @$t_dep | grep -qi 'watchdog timeout'"
  revert_case "after the watchdog restart: mode change by $who" config/guests.toml 'chmod 0666 config/guests.toml' "$who"

  # -- the path-hardening attacks as the agent, under this systemd (deployment A: the agent owns the
  # root's parent and the files, the guard has its three capabilities)
  [ "$DEP" = A ] && attacks_as_agent

  # -- exposure, measured online under this systemd
  local gs ns
  gs=$(cin systemd-analyze security --no-pager warden-guard.service | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
  ns=$(cin systemd-analyze security --no-pager warden-notify.service | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
  info "systemd-analyze security (online): warden-guard $gs, warden-notify $ns"
  check "online exposure: guard $gs <= 1.0" awk -v s="$gs" 'BEGIN { exit !(s != "" && s <= 1.0) }'
  check "online exposure: notifier $ns <= 1.5" awk -v s="$ns" 'BEGIN { exit !(s != "" && s <= 1.5) }'
  check "no seccomp kill (SIGSYS) in either journal" sh -c "! $H/in journalctl --no-pager -o cat --since @$t_dep -u warden-guard -u warden-notify | grep -qE 'SIGSYS|status=31'"
  if [ "$DEP" = B ]; then
    # -- a guard on a root that was never initialised: says so, exits 78, is not restarted
    cin sh -c "systemctl stop warden-notify warden-guard; rm -rf $STORE $KEYS; systemctl reset-failed warden-guard; systemctl start warden-guard" >>"$LOG" 2>&1
    check "not initialised: the guard exits 78 and is not restarted" sh -c "sleep 3; [ \"\$($H/in systemctl show -p ExecMainStatus --value warden-guard)\" = 78 ] && [ \"\$($H/in systemctl show -p ActiveState --value warden-guard)\" = failed ] && [ \"\$($H/in systemctl show -p NRestarts --value warden-guard)\" = 0 ]"
    check "…and its journal says to run warden init" sh -c "$H/in journalctl -u warden-guard --no-pager -o cat --since @$t_dep | grep -q 'not initialised: .*warden init'"
  fi
  [ "$DEP" = A ] && witness_case
  info "deployment $DEP took $(( $(date +%s) - t_dep )) s"
}

# ---- P: an agent that runs as its owner (docs/DEPLOY.md §10), Claude Code's files -------
as_owner() { cin sudo -u $SAME_USER sh -c "cd && $1"; }
p_sha() { cin sha256sum "$P_ROOT/settings.json" | cut -d' ' -f1; }
deployment_profile() {
  DEP=P
  local t_dep; t_dep=$(date +%s)
  teardown
  cin sh -euc "
    useradd --create-home --user-group --shell /bin/sh $SAME_USER
    install -d -o $SAME_USER -g $SAME_USER -m 0700 $P_ROOT
    install -d -m 0700 /etc/warden && printf 'fake-bot-token' > $TOKEN_FILE && chmod 0600 $TOKEN_FILE
    systemctl reset-failed fake-discord 2>/dev/null || true
    systemd-run --unit=fake-discord --quiet /usr/bin/python3 /root/fake-discord.py $DISCORD_PORT" >>"$LOG" 2>&1 || fail "owner and token set up"
  printf '%s\n' '{"permissions":{"allow":["Read"]}}' | as_owner "cat > $P_ROOT/settings.json"
  local out steps
  out=$(cin warden install-units --profile claude-code --user $SAME_USER --discord-id 1 --write 2>&1); echo "install-units: $out" >>"$LOG"
  check "install-units --profile claude-code --user $SAME_USER --write wrote both units" sh -c "printf '%s' \"\$1\" | grep -q 'warden-guard.service' && $H/in grep -qx 'User=warden' /etc/systemd/system/warden-guard.service" _ "$out"
  # The printed commands as root, word for word, but the settings name the Discord stand-in's api.
  steps=$(printf '%s\n' "$out" | awk '/^as root, once:/ {f=1; next} /^then as / {f=0} f' | sed -e 's/^  //' \
    -e "s|'token_file = \"$TOKEN_FILE\"'|& 'api = \"http://127.0.0.1:$DISCORD_PORT/api\"'|")
  printf '%s\n' "--- printed steps:" "$steps" >>"$LOG"
  check "the printed commands ran as written (account, init as warden with --settings -, enable --now)" cin bash -euo pipefail -c "$steps"
  check "warden-guard active (running) for $P_ROOT, as warden" wait_for 30 running warden-guard
  check "warden-notify active (running)" wait_for 30 running warden-notify
  check "the store is warden's, 0700, outside the home; approval = owner-code recorded" sh -c "
    [ \"\$($H/in stat -c '%U %a' $P_STORE)\" = 'warden 700' ] && $H/in systemd-run --wait --pipe --collect --quiet -p User=warden -p AmbientCapabilities=CAP_DAC_READ_SEARCH warden status --json --root $P_ROOT | tr -d ' \n' | grep -qF '\"approval\":\"owner-code\"'"
  local s0 gpid; s0=$(p_sha); gpid=$(prop warden-guard MainPID)
  as_owner "echo '{\"permissions\":{\"allow\":[\"Read\",\"Bash(curl:*)\"]}}' > $P_ROOT/settings.json" >>"$LOG" 2>&1
  check "the owner's user adds permissions.allow \"Bash(curl:*)\" with echo >: reverted" wait_for 10 sh -c "[ \"\$($H/in sha256sum $P_ROOT/settings.json | cut -d' ' -f1)\" = $s0 ]"
  check "…alerted (settings.json reverted)" wait_for 10 sh -c "$H/in grep -F '\"path\":\"settings.json\"' $P_STORE/alerts.jsonl | grep -qF '\"action\":\"reverted\"'"
  cin tail -n 1 $P_STORE/alerts.jsonl >>"$LOG" 2>&1
  # echo > truncates first: the guard may revert the emptied file before the bytes arrive (the
  # alert then says emptied). A whole new version written beside it and renamed over it:
  as_owner "printf '%s' '{\"permissions\":{\"allow\":[\"Read\",\"Bash(curl:*)\"]}}' > $P_ROOT/new.json && mv $P_ROOT/new.json $P_ROOT/settings.json" >>"$LOG" 2>&1
  check "the owner's user renames a version with permissions.allow \"Bash(curl:*)\" over it: reverted" wait_for 10 sh -c "[ \"\$($H/in sha256sum $P_ROOT/settings.json | cut -d' ' -f1)\" = $s0 ]"
  check "…alerted with the grant named" wait_for 10 sh -c "$H/in grep -F '\"path\":\"settings.json\"' $P_STORE/alerts.jsonl | grep -qF 'permissions.allow + \\\"Bash(curl:*)\\\"'"
  cin tail -n 1 $P_STORE/alerts.jsonl >>"$LOG" 2>&1
  check "…and the alert reached the owner's Discord (the stand-in)" wait_for 20 sh -c "$H/in journalctl -u fake-discord --no-pager -o cat | grep -q 'settings.json'"
  check "systemctl stop warden-guard as $SAME_USER is refused" sh -c "! $H/in sudo -u $SAME_USER systemctl stop warden-guard"
  check "kill of the guard as $SAME_USER is refused" sh -c "! $H/in sudo -u $SAME_USER kill $gpid"
  check "…the guard still runs, same pid" sh -c "sleep 1; [ \"\$($H/in systemctl show -p MainPID --value warden-guard)\" = $gpid ]"
  check "$SAME_USER cannot read the store" sh -c "! $H/in sudo -u $SAME_USER ls $P_STORE"
  check "warden status as $SAME_USER names the deployed guard and the command that works" sh -c "$H/in sudo -u $SAME_USER warden status --root $P_ROOT 2>&1 | grep -q 'guarded by the deployed warden guard (account warden).*sudo -u warden warden status'"
  # A sanctioned change: its one-time code comes by DM, never to a file the owner's user can read.
  local before_dm id code
  before_dm=$(dm_count)
  out=$(printf '%s\n' '{"permissions":{"allow":["Read","Bash(ls:*)"]}}' | cin sudo -u warden warden apply settings.json --from - --root $P_ROOT 2>&1); echo "apply: $out" >>"$LOG"
  id=$(printf '%s' "$out" | grep -oE 'warden approve [A-Za-z0-9-]+' | head -1 | awk '{print $3}')
  wait_for 20 sh -c "[ \$($H/in journalctl -u fake-discord --no-pager -o cat | grep -c 'REQ /api/v10/channels/1/messages') -gt $before_dm ]"
  code=$(cin journalctl -u fake-discord --no-pager -o cat | grep -oE 'one-time code [0-9]+ approves request [A-Za-z0-9-]+' | grep -F "request $id" | tail -1 | awk '{print $3}')
  check "a change by warden apply waits for a one-time code sent by DM (request $id)" sh -c "[ -n '$id' ] && [ -n '$code' ]"
  check "…the code is in no file $SAME_USER can read" sh -c "! $H/in sudo -u $SAME_USER grep -rqs -- '$code' /home /tmp /var /run /etc"
  check "…approve ID --code CODE applies it" sh -c "$H/in sudo -u warden warden approve $id --code $code --root $P_ROOT && sleep 1 && $H/in grep -q 'Bash(ls:\*)' $P_ROOT/settings.json"
  check "no seccomp kill (SIGSYS) in either journal" sh -c "! $H/in journalctl --no-pager -o cat --since @$t_dep -u warden-guard -u warden-notify | grep -qE 'SIGSYS|status=31'"
  info "deployment P took $(( $(date +%s) - t_dep )) s"
}

for d in ${DEPLOYMENTS:-A B P}; do if [ "$d" = P ]; then deployment_profile; else deployment "$d"; fi; done
DEP=all
[ "$FAIL" -gt 0 ] && { echo "--- last lines of $LOG:"; tail -40 "$LOG"; }
echo "total $(( $(date +%s) - T0 )) s"
echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
