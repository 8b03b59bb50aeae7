/**
 * `node dist/bench/soak.js [--minutes N | --short] [--sample-s S]`: the guard and the notifier
 * under the full mix for N minutes (default 60; --short is 3), measured per process lifetime.
 * docs/BENCHMARKS.md, "The soak", says what each number means.
 *
 * The mix: direct edits of every kind by a second user who owns the root (echo >, a write in
 * pieces, a write through a hard link, a shared mmap write, a rename over, a delete, chmod,
 * setfacl, setfattr, a new file in orgs/), sanctioned changes by the owner (`warden apply`,
 * `warden edit` with a non-interactive EDITOR), Discord outages (the emulator answers 500 or
 * refuses connections for a stretch), `kill -9` of the guard three times and of the notifier
 * twice, each restarted at once. Edits pause while the guard is down.
 *
 * Every SAMPLE_S seconds one line per daemon: RSS, heap after a full GC and the abort listeners
 * (bench/soak-probe.ts, preloaded), open descriptors, inotify watches. The summary compares,
 * per lifetime, the first sample after the warm-up with the last before the kill or the stop,
 * and judges: abort listeners flat, watches flat within the number of protected directories,
 * RSS growth ≤ 15 MB, every edit alerted, every alert delivered exactly once (by its id, or
 * counted in a storm message whose id list was cut), no duplicate, `warden verify` clean.
 * Runs as root (it makes the second user). Exit status 0 on pass, 1 on fail.
 */
import { chmodSync, chownSync, existsSync, lstatSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { BENCH_DIST, CLI, log, makeRoot, sleep, statusMB, track, waitFor, wardenToml, type BenchRoot } from './lib.js';
import { DiscordEmulator } from '../test/helpers/discord-emulator.js';
import type { Alert } from '../src/store/alert-types.js';

const { values: opt } = parseArgs({ options: { minutes: { type: 'string' }, short: { type: 'boolean', default: false }, 'sample-s': { type: 'string' } } });
const MINUTES = opt.short ? 3 : Number(opt.minutes ?? 60);
const SAMPLE_S = Number(opt['sample-s'] ?? (MINUTES <= 5 ? 10 : 30));
const WARMUP_S = MINUTES <= 5 ? 20 : 60;
const TOTAL_MS = MINUTES * 60_000;
const RSS_GROWTH_MB = 15;
const EDIT_GAP_MS = 1000;
const SANCTIONED_EVERY_MS = 20_000;
const PROBE = join(BENCH_DIST, 'soak-probe.js');

/** Extra org files, so a watch lost per replaced inode would show above the tolerance below. */
const TEAMS = Array.from({ length: 20 }, (_, k) => `orgs/soak-team-${k}.toml`);
const TEAM_TOML = (k: number) => `members = ["${String(300000000000000000 + k)}"]\nchannels = []\nfolders = []\ncommands = []\nhourly_cap = 1\n`;
const TARGETS = ['orgs/bookclub.toml', 'config/guests.toml', 'config/conditions.toml', 'blocks/conditional/nsfw.md', ...TEAMS];
const KINDS = ['echo', 'pieces', 'hardlink', 'mmap', 'rename', 'delete', 'chmod', 'setfacl', 'setfattr', 'newfile'] as const;
type Kind = typeof KINDS[number];
/** Protected directories: the root, config/, orgs/, blocks/, blocks/conditional/ (the watch tolerance). */
const PROTECTED_DIRS = 5;

// The agent's edits, one process per edit (python3 from /usr/bin: the agent cannot read /root).
const AGENT_PY = `
import os, sys, time, mmap, subprocess
kind, path, n, base = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
mark = ("# soak %s\\n" % n).encode()
def cur():
    with open(path, 'rb') as f: return f.read()
if kind == 'echo':
    b = cur()
    with open(path, 'wb') as f: f.write(b + mark)
elif kind == 'pieces':
    b = cur() + mark
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    h = len(b) // 2
    os.write(fd, b[:h]); time.sleep(0.02); os.write(fd, b[h:]); os.close(fd)
elif kind == 'hardlink':
    link = os.path.join(base, 'hl-' + n)
    os.link(path, link)
    with open(link, 'ab') as f: f.write(mark)
    os.unlink(link)
elif kind == 'mmap':
    fd = os.open(path, os.O_RDWR)
    m = mmap.mmap(fd, os.fstat(fd).st_size, mmap.MAP_SHARED)
    m[0:1] = b'Z'; m.flush(); m.close(); os.close(fd)
elif kind == 'rename':
    tmp = os.path.join(base, 'rn-' + n)
    with open(tmp, 'wb') as f: f.write(cur() + mark)
    os.rename(tmp, path)
elif kind == 'delete':
    os.unlink(path)
elif kind == 'chmod':
    os.chmod(path, 0o666)
elif kind == 'setfacl':
    subprocess.run(['setfacl', '-m', 'u:nobody:r', path], check=True)
elif kind == 'setfattr':
    subprocess.run(['setfattr', '-n', 'user.soak', '-v', n, path], check=True)
elif kind == 'newfile':
    with open(path, 'w') as f: f.write('members = []\\n')
print(int(time.time() * 1000))
`;

// ---------------------------------------------------------------- processes

/** Run a command to its end without blocking the event loop (the emulator answers from it). */
function run(cmd: string, args: string[], o: { env?: NodeJS.ProcessEnv; input?: string; uid?: number; gid?: number; cwd?: string } = {}): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const c = track(spawn(cmd, args, { env: o.env, uid: o.uid, gid: o.gid, cwd: o.cwd, stdio: ['pipe', 'pipe', 'pipe'] }));
    let out = '';
    let err = '';
    c.stdout!.on('data', (d: Buffer) => { out += String(d); });
    c.stderr!.on('data', (d: Buffer) => { err += String(d); });
    c.once('error', (e) => { err += String(e); });
    c.once('close', (code) => resolve({ code, out, err }));
    c.stdin!.end(o.input ?? '');
  });
}

interface Sample { t: number; rssMB: number; heapMB: number | null; fds: number; watches: number; maxListeners: number | null; liveListeners: number | null; added: number | null; warnings: number | null; load1: number }
interface Lifetime { who: 'guard' | 'notifier'; n: number; pid: number; readyAt: number; endAt: number; end: 'kill -9' | 'stop' | ''; samples: Sample[] }
interface Daemon { who: 'guard' | 'notifier'; pid: number; exited: Promise<void>; kill(sig: NodeJS.Signals): void; life: Lifetime }

const lifetimes: Lifetime[] = [];

async function startDaemon(r: BenchRoot, who: 'guard' | 'notifier', probeFile: string): Promise<Daemon> {
  const env = { ...r.env, SOAK_PROBE_FILE: probeFile, SOAK_PROBE_S: '5' };
  const c = track(spawn(process.execPath, ['--expose-gc', '--import', PROBE, CLI, 'run', `--${who}`, '--root', r.root], { env, stdio: ['ignore', 'pipe', 'pipe'] }));
  let out = '';
  let err = '';
  c.stdout!.on('data', (d: Buffer) => { out += String(d); });
  c.stderr!.on('data', (d: Buffer) => { err += String(d); if (err.length > 200_000) err = err.slice(-100_000); });
  const exited = new Promise<void>((res) => c.once('exit', () => res()));
  await waitFor(() => out.includes('ready\n') || c.exitCode !== null, 60_000, `${who} ready`, 5);
  if (!out.includes('ready\n')) throw new Error(`${who} exited before ready: ${err.slice(-2000)}`);
  const life: Lifetime = { who, n: lifetimes.filter((l) => l.who === who).length + 1, pid: c.pid!, readyAt: Date.now(), endAt: 0, end: '', samples: [] };
  lifetimes.push(life);
  return { who, pid: c.pid!, exited, kill: (sig) => { try { c.kill(sig); } catch { /* gone */ } }, life };
}

async function endDaemon(d: Daemon, how: 'kill -9' | 'stop'): Promise<void> {
  sample(d); // the last sample of the lifetime
  d.life.endAt = Date.now();
  d.life.end = how;
  d.kill(how === 'stop' ? 'SIGTERM' : 'SIGKILL');
  const t = setTimeout(() => d.kill('SIGKILL'), 5000);
  await d.exited;
  clearTimeout(t);
}

// ---------------------------------------------------------------- /proc

function fdCount(pid: number): number { return readdirSync(`/proc/${pid}/fd`).length; }

/** inotify watches of a process: the `inotify wd:` lines of every inotify descriptor's fdinfo. */
function inotifyWatches(pid: number): number {
  let n = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let target = '';
    try { target = readlinkSync(`/proc/${pid}/fd/${fd}`); } catch { continue; }
    if (target !== 'anon_inode:inotify') continue;
    try { n += readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8').split('\n').filter((l) => l.startsWith('inotify wd:')).length; } catch { /* closed meanwhile */ }
  }
  return n;
}

let probeFile = '';
interface Probe { pid: number; heapMB: number; maxAbortListeners: number; liveAbortListeners: number; abortListenersAdded: number; listenerWarnings: number }
function probeOf(pid: number): Probe | null {
  let text = '';
  try { text = readFileSync(probeFile, 'utf8'); } catch { return null; }
  const lines = text.trimEnd().split('\n').reverse();
  for (const l of lines) {
    try { const p = JSON.parse(l) as Probe; if (p.pid === pid) return p; } catch { /* torn */ }
  }
  return null;
}

function sample(d: Daemon): Sample | null {
  try {
    const p = probeOf(d.pid);
    const s: Sample = { t: Date.now(), rssMB: +statusMB(d.pid, ['VmRSS']).VmRSS.toFixed(1), heapMB: p?.heapMB ?? null, fds: fdCount(d.pid), watches: inotifyWatches(d.pid), maxListeners: p?.maxAbortListeners ?? null, liveListeners: p?.liveAbortListeners ?? null, added: p?.abortListenersAdded ?? null, warnings: p?.listenerWarnings ?? null, load1: +loadavg()[0]!.toFixed(2) };
    d.life.samples.push(s);
    return s;
  } catch { return null; }
}

// ---------------------------------------------------------------- alerts

class AlertTail {
  alerts: Alert[] = [];
  private offset = 0;
  private rest = '';
  constructor(private file: string) {}
  async poll(): Promise<number> {
    let fh;
    try { fh = await open(this.file, 'r'); } catch { return this.alerts.length; }
    try {
      const buf = Buffer.alloc(1 << 16);
      for (;;) {
        const { bytesRead } = await fh.read(buf, 0, buf.length, this.offset);
        if (!bytesRead) break;
        this.offset += bytesRead;
        this.rest += buf.subarray(0, bytesRead).toString('utf8');
      }
    } finally { await fh.close(); }
    const lines = this.rest.split('\n');
    this.rest = lines.pop()!;
    for (const l of lines) if (l) this.alerts.push(JSON.parse(l) as Alert);
    return this.alerts.length;
  }
}

const names = (a: Alert): string[] => [a.path, ...(a.folded ?? []).map((f) => f.path)];

// ---------------------------------------------------------------- the soak

async function main(): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error('the soak makes a second user: run it as root');
  const t0 = Date.now();
  const agentName = `wsoak${process.pid % 100000}`;
  execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', agentName]);
  const uid = Number(execFileSync('id', ['-u', agentName], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', agentName], { encoding: 'utf8' }).trim());
  process.on('exit', () => { spawnSync('userdel', [agentName]); });

  const emu = new DiscordEmulator('MTIzNDU2Nzg5MDEyMzQ1Njc4.bench.bot-token-value');
  await emu.start();
  const r = makeRoot('soak', (tokenFile) => wardenToml({ discordApi: emu.api, tokenFile, rescanSeconds: 30 }), Object.fromEntries(TEAMS.map((p, k) => [p, TEAM_TOML(k)])));
  probeFile = join(r.base, 'probe.jsonl');
  const agentPy = join(r.base, 'agent.py');
  writeFileSync(agentPy, AGENT_PY, { mode: 0o644 });
  const editor = join(r.base, 'editor.sh');
  writeFileSync(editor, '#!/bin/sh\nsed -i "/^# soak-sanctioned/d" "$1" && echo "# soak-sanctioned $SOAK_N" >> "$1"\n', { mode: 0o755 });
  // The agent owns the root and its parent (deployment A); the store stays root's.
  chmodSync(r.base, 0o755);
  const give = (p: string): void => { chownSync(p, uid, gid); if (lstatSync(p).isDirectory()) for (const n of readdirSync(p)) give(join(p, n)); };
  chownSync(r.base, uid, gid);
  chownSync(r.root, uid, gid);
  for (const d of ['config', 'orgs', 'blocks']) give(r.p(d));
  const wardenCli = (args: string[], o: { input?: string; env?: NodeJS.ProcessEnv } = {}) => run(process.execPath, [CLI, ...args, '--root', r.root], { env: { ...r.env, ...o.env }, input: o.input });
  const init = await wardenCli(['init']);
  if (init.code !== 0) throw new Error(`warden init: ${init.err}`);

  const approved = new Map<string, { bytes: Buffer; mode: number }>();
  const remember = (rel: string) => approved.set(rel, { bytes: readFileSync(r.p(rel)), mode: lstatSync(r.p(rel)).mode & 0o7777 });
  for (const rel of TARGETS) remember(rel);

  let guard = await startDaemon(r, 'guard', probeFile);
  let notifier = await startDaemon(r, 'notifier', probeFile);
  const tail = new AlertTail(r.p('snapshots/alerts.jsonl'));
  log(`soak: ${MINUTES} min, a sample every ${SAMPLE_S} s, warm-up ${WARMUP_S} s; root ${r.root}; agent ${agentName} (${uid}); guard ${guard.pid}, notifier ${notifier.pid}`);

  interface Edit { n: number; kind: Kind; path: string; t0: number; alerted: boolean; latencyMs: number | null; alerts: number; failed?: string }
  const edits: Edit[] = [];

  // Sampling: at a quiet point of the loop (the last edit reverted, the next not made), so a
  // watch being re-armed is not counted as one lost.
  let nextSample = Date.now() + SAMPLE_S * 1000;
  const takeSamples = () => {
    const g = sample(guard);
    const n = sample(notifier);
    const la = loadavg().map((x) => x.toFixed(2)).join(' ');
    const min = ((Date.now() - t0) / 60_000).toFixed(1);
    const f = (s: Sample | null) => (s ? `rss ${s.rssMB} heap ${s.heapMB ?? '-'} fds ${s.fds} watches ${s.watches} listeners ${s.liveListeners ?? '-'}/${s.added ?? '-'}` : 'down');
    process.stdout.write(`[soak +${min} min] guard#${guard.life.n} ${f(g)} | notifier#${notifier.life.n} ${f(n)} | edits ${edits.length} alerts ${tail.alerts.length} messages ${emu.messages.length} | load ${la}\n`);
  };

  // Discord outages: 8 an hour (2 in a short run), 500 and refused in turn.
  const outages = Math.max(2, Math.round(MINUTES / 7.5));
  const outageMs = Math.min(45_000, TOTAL_MS / (3 * outages));
  let outageCount = 0;
  const timers: NodeJS.Timeout[] = [];
  for (let k = 0; k < outages; k++) {
    timers.push(setTimeout(() => {
      outageCount++;
      const refuse = k % 2 === 1;
      log(`outage ${k + 1}: Discord ${refuse ? 'refuses connections' : 'answers 500'} for ${(outageMs / 1000).toFixed(0)} s`);
      if (refuse) void emu.stop(); else emu.mode = '500';
      timers.push(setTimeout(() => { if (refuse) void emu.start(); else emu.mode = 'ok'; }, outageMs));
    }, ((k + 0.35) * TOTAL_MS) / outages));
  }

  // Kills, at fixed fractions of the run, between two edits.
  const guardKills = [0.25, 0.5, 0.75].map((f) => t0 + f * TOTAL_MS);
  const notifierKills = [1 / 3, 2 / 3].map((f) => t0 + f * TOTAL_MS);

  const extra: Alert[] = [];
  let sanctioned = 0;
  let sanctionedFailed = 0;
  let lastSanctioned = Date.now();
  const end = t0 + TOTAL_MS;

  for (let i = 0; Date.now() < end; i++) {
    if (guardKills.length && Date.now() >= guardKills[0]!) {
      guardKills.shift();
      log(`kill -9 guard ${guard.pid}`);
      await endDaemon(guard, 'kill -9');
      guard = await startDaemon(r, 'guard', probeFile);
      log(`guard restarted: ${guard.pid}`);
    }
    if (notifierKills.length && Date.now() >= notifierKills[0]!) {
      notifierKills.shift();
      log(`kill -9 notifier ${notifier.pid}`);
      await endDaemon(notifier, 'kill -9');
      notifier = await startDaemon(r, 'notifier', probeFile);
      log(`notifier restarted: ${notifier.pid}`);
    }
    const from = await tail.poll();
    if (Date.now() - lastSanctioned >= SANCTIONED_EVERY_MS) {
      // A sanctioned change by the owner: apply (stdin) or edit (a non-interactive EDITOR), in turn.
      lastSanctioned = Date.now();
      const rel = sanctioned % 4 < 2 ? 'orgs/bookclub.toml' : 'config/guests.toml';
      const n = String(sanctioned);
      const res = sanctioned % 2 === 0
        ? await wardenCli(['apply', rel, '--from', '-'], { input: approved.get(rel)!.bytes.toString('utf8').replace(/^# soak-sanctioned.*\n/m, '') + `# soak-sanctioned ${n}\n` })
        : await wardenCli(['edit', rel], { env: { EDITOR: editor, SOAK_N: n } });
      sanctioned++;
      if (res.code !== 0) { sanctionedFailed++; log(`sanctioned ${rel} exited ${res.code}: ${res.err.slice(-400)}`); }
      remember(rel);
      await sleep(300);
      await tail.poll();
      for (const a of tail.alerts.slice(from)) { extra.push(a); log(`an alert after a sanctioned change: ${a.path} ${a.reason}`); }
      continue;
    }
    const kind = KINDS[i % KINDS.length]!;
    const target = kind === 'newfile' ? `orgs/soak-${i}.toml` : TARGETS[Math.floor(i / KINDS.length) % TARGETS.length]!;
    const e: Edit = { n: i, kind, path: target, t0: Date.now(), alerted: false, latencyMs: null, alerts: 0 };
    edits.push(e);
    const res = await run('/usr/bin/python3', ['-c', AGENT_PY, kind, r.p(target), String(i), r.base], { uid, gid, cwd: r.base });
    const done = Number(res.out.trim());
    if (done) e.t0 = done; // the moment the edit was made, not when its process started
    if (res.code !== 0) { e.failed = res.err.trim().split('\n').pop(); log(`edit ${i} ${kind} ${target} failed: ${e.failed}`); }
    // Its alert (40 s: the backstop rescan is 30 s), then its file back as approved.
    const seen = async () => { await tail.poll(); return tail.alerts.slice(from).find((a) => names(a).includes(target)); };
    let got: Alert | undefined;
    try { got = await waitFor(seen, 40_000, `the alert of edit ${i}`, 5); } catch { /* lost: counted below */ }
    if (got) { e.alerted = true; e.latencyMs = Math.max(0, Date.parse(got.time) - e.t0); }
    else log(`LOST: edit ${i} ${kind} ${target}: no alert within 40 s`);
    const back = () => {
      if (kind === 'newfile') return !existsSync(r.p(target));
      try { const a = approved.get(target)!; const st = lstatSync(r.p(target)); return (st.mode & 0o7777) === a.mode && readFileSync(r.p(target)).equals(a.bytes); } catch { return false; }
    };
    try { await waitFor(back, 10_000, `edit ${i} reverted`, 5); } catch { log(`edit ${i} ${kind} ${target}: not back as approved within 10 s`); }
    await sleep(EDIT_GAP_MS);
    if (Date.now() >= nextSample) { takeSamples(); nextSample += SAMPLE_S * 1000; }
    await tail.poll();
    const mine = tail.alerts.slice(from);
    e.alerts = mine.filter((a) => names(a).includes(target)).length;
    for (const a of mine) if (!names(a).includes(target)) { extra.push(a); log(`an alert not of edit ${i} (${target}): ${a.path} ${a.reason}`); }
  }
  for (const t of timers) clearTimeout(t);
  if (emu.mode !== 'ok') emu.mode = 'ok';
  await emu.start().catch(() => { /* already listening */ });
  log(`edits over: ${edits.length} edits, ${sanctioned} sanctioned; waiting for the notifier to deliver everything`);

  // Delivery: every alert line named once in a message, or counted in a storm message whose list was cut.
  const ids = () => tail.alerts.map((a) => a.id);
  const tally = () => {
    const named = new Map<string, number>();
    let unnamedInStorms = 0;
    for (const m of emu.messages) {
      const text = m.content.replace(/\\/g, '');
      const title = /warden: (\d+) alerts on/.exec(text);
      let here = 0;
      for (const id of ids()) if (text.includes(id)) { named.set(id, (named.get(id) ?? 0) + 1); here++; }
      if (title) unnamedInStorms += Math.max(0, Number(title[1]) - here);
    }
    const once = ids().filter((id) => named.get(id) === 1).length;
    const dup = ids().filter((id) => (named.get(id) ?? 0) > 1).length;
    const missing = ids().filter((id) => !named.has(id)).length;
    return { once, dup, missing, unnamedInStorms, covered: missing <= unnamedInStorms };
  };
  await tail.poll();
  try { await waitFor(async () => { await tail.poll(); const t = tally(); return t.missing === 0 || (t.covered && Date.now() > end + 30_000); }, 120_000, 'every alert delivered', 1000); } catch { log('not every alert delivered within 120 s'); }
  takeSamples();
  const verify = await wardenCli(['verify']);
  const alertsJson = await wardenCli(['alerts', '--json']);
  let cliAlerts = NaN;
  try { const j = JSON.parse(alertsJson.out) as unknown; cliAlerts = Array.isArray(j) ? j.length : Array.isArray((j as { alerts?: unknown[] }).alerts) ? (j as { alerts: unknown[] }).alerts.length : NaN; } catch { /* counted NaN */ }
  await endDaemon(guard, 'stop');
  await endDaemon(notifier, 'stop');
  await emu.stop();

  // ------------------------------------------------------------ summary
  const d = tally();
  const lat = edits.filter((e) => e.latencyMs !== null).map((e) => e.latencyMs!).sort((a, b) => a - b);
  const lost = edits.filter((e) => !e.alerted);
  const byKind = Object.fromEntries(KINDS.map((k) => [k, `${edits.filter((e) => e.kind === k && e.alerted).length}/${edits.filter((e) => e.kind === k).length}`]));
  const lifeRows = lifetimes.map((l) => {
    const warm = l.samples.filter((s) => s.t - l.readyAt >= WARMUP_S * 1000);
    const first = l.samples[0];
    const base = warm.length >= 2 ? warm[0]! : first;
    const last = l.samples[l.samples.length - 1];
    if (!first || !base || !last) return { who: `${l.who}#${l.n}`, pid: l.pid, samples: l.samples.length, verdict: 'no samples' };
    const minutes = ((l.endAt || Date.now()) - l.readyAt) / 60_000;
    const rssGrowth = last.rssMB - base.rssMB;
    const watchDelta = last.watches - base.watches;
    const listenerDelta = Math.max((last.maxListeners ?? 0) - (base.maxListeners ?? 0), (last.liveListeners ?? 0) - (base.liveListeners ?? 0));
    const ok = rssGrowth <= RSS_GROWTH_MB && Math.abs(watchDelta) <= PROTECTED_DIRS && listenerDelta <= 2 && !(last.warnings ?? 0);
    const within = (t: number) => t >= l.readyAt && t <= (l.endAt || Date.now());
    const counts = l.who === 'guard'
      ? { edits: edits.filter((e) => within(e.t0)).length, alerted: edits.filter((e) => within(e.t0) && e.alerted).length, alert_lines: tail.alerts.filter((a) => within(Date.parse(a.time))).length }
      : { messages: emu.messages.filter((m) => within(m.time)).length, alerts_in_them: emu.messages.filter((m) => within(m.time)).reduce((n, m) => n + Number(/warden: (\d+) alerts on/.exec(m.content)?.[1] ?? (m.content.includes('warden: 1 alert') ? 1 : 0)), 0) };
    const loads = l.samples.map((s) => s.load1);
    return {
      who: `${l.who}#${l.n}`, pid: l.pid, minutes: +minutes.toFixed(1), end: l.end, samples: l.samples.length,
      rss: `${first.rssMB} → ${base.rssMB} (warm) → ${last.rssMB} MB (${rssGrowth >= 0 ? '+' : ''}${rssGrowth.toFixed(1)})`,
      rssMax: Math.max(...l.samples.map((s) => s.rssMB)),
      heap: `${first.heapMB ?? '-'} → ${base.heapMB ?? '-'} → ${last.heapMB ?? '-'} MB`,
      watches: `${first.watches} → ${base.watches} → ${last.watches} (min ${Math.min(...l.samples.map((s) => s.watches))}, max ${Math.max(...l.samples.map((s) => s.watches))})`,
      fds: `${first.fds} → ${base.fds} → ${last.fds} (max ${Math.max(...l.samples.map((s) => s.fds))})`,
      abortListeners: `live ${first.liveListeners ?? '-'} → ${base.liveListeners ?? '-'} → ${last.liveListeners ?? '-'}; most on one signal ${base.maxListeners ?? '-'} → ${last.maxListeners ?? '-'}; added ${last.added ?? '-'}; warnings ${last.warnings ?? '-'}`,
      ...counts,
      load1: `${Math.min(...loads)}–${Math.max(...loads)}`,
      verdict: ok ? 'pass' : 'FAIL',
    };
  });
  const verifyClean = verify.code === 0;
  const pass = lifeRows.every((l) => l.verdict === 'pass') && lost.length === 0 && d.dup === 0 && d.covered && verifyClean;
  const summary = {
    minutes: MINUTES, started: new Date(t0).toISOString(), finished: new Date().toISOString(), load: loadavg().map((x) => +x.toFixed(2)),
    edits: edits.length, edits_alerted: edits.length - lost.length, edits_failed: edits.filter((e) => e.failed).length, by_kind: byKind,
    alert_latency_ms: { p50: lat[Math.floor(lat.length / 2)] ?? null, p99: lat[Math.floor(lat.length * 0.99)] ?? null, max: lat[lat.length - 1] ?? null },
    alerts_for_edits: edits.reduce((n, e) => n + e.alerts, 0), alerts_other: extra.length, alert_lines: tail.alerts.length, alerts_cli_json: cliAlerts,
    sanctioned, sanctioned_failed: sanctionedFailed, outages: outageCount, guard_kills: 3 - guardKills.length, notifier_kills: 2 - notifierKills.length,
    discord_messages: emu.messages.length, discord_requests: emu.requests.length,
    delivered_once: d.once, delivered_in_storm_unnamed: Math.min(d.missing, d.unnamedInStorms), duplicates: d.dup, undelivered: Math.max(0, d.missing - d.unnamedInStorms),
    verify: verifyClean ? 'clean' : `exit ${verify.code}: ${verify.out.slice(-600)}${verify.err.slice(-600)}`,
    lost: lost.map((e) => `${e.n} ${e.kind} ${e.path}${e.failed ? ` (edit failed: ${e.failed})` : ''}`),
    lifetimes: lifeRows,
    verdict: pass ? 'PASS' : 'FAIL',
  };
  process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
  writeFileSync(join(BENCH_DIST, 'soak-results.json'), JSON.stringify({ summary, samples: lifetimes }, null, 2) + '\n');
  process.exitCode = pass ? 0 : 1;
}

main().catch((err) => { process.stderr.write(`${(err as Error).stack}\n`); process.exitCode = 2; }).finally(() => {
  // lib.ts's exit handler kills what is left and removes the temp root.
  setTimeout(() => process.exit(), 100);
});
