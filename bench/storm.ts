/** `npm run bench`, section: 5. storm (see bench/run.ts). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DiscordEmulator } from '../test/helpers/discord-emulator.js';
import { BENCH_DIST, log, makeRoot, sleep, startReady, timed, waitFor, wardenSync, wardenToml, type Proc } from './lib.js';
import { STORM_RATE, STORM_S, type Json, node, warden } from './config.js';

// ---------------------------------------------------------------- 5. storm

export function countIn(content: string): number {
  const m = /warden: (\d+) alerts?\b/.exec(content);
  return m ? Number(m[1]) : 1;
}

export async function storm(emu: DiscordEmulator): Promise<Json> {
  const approved = Buffer.from('# storm target: approved content\n');
  const r = makeRoot('storm', (tokenFile) => wardenToml({ protect: ['data/*.txt'], discordApi: emu.api, tokenFile }), { 'data/storm.txt': approved });
  const init = wardenSync(r, ['init']);
  if (init.code !== 0) throw new Error(`warden init failed: ${init.stderr}`);
  const procs: Proc[] = [];
  try {
    const d = await startReady(node, warden(['run', '--root', r.root]), r.env);
    procs.push(d);
    const alertsFile = r.p('snapshots/alerts.jsonl');
    const readAlerts = (): { path: string; action: string; id: string }[] => {
      try { return readFileSync(alertsFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { path: string; action: string; id: string }); } catch { return []; }
    };
    // Wait for the notifier's start-up and any early messages to be over.
    await sleep(500);
    const msgsBefore = emu.messages.length;
    const tStart = Date.now();
    log(`storm: ${STORM_RATE} writes/s for ${STORM_S} s`);
    const wr = await timed(node, [join(BENCH_DIST, 'storm-writer.js'), r.p('data/storm.txt'), String(STORM_RATE), String(STORM_S)], r.env);
    const w = JSON.parse(wr.stdout.trim().split('\n').pop() ?? '{}') as { writes: number; stormMs: number; convergeMs: number };
    log(`storm: ${w.writes} writes in ${w.stormMs.toFixed(0)} ms; converged ${w.convergeMs.toFixed(1)} ms after the last write`);
    // Stays converged?
    await sleep(300);
    const stable = readFileSync(r.p('data/storm.txt')).equals(approved);
    // Every revert recorded, and the notifier catches up (folded, ≤ 1 message per interval).
    const recorded = () => readAlerts().filter((a) => a.path === 'data/storm.txt').length;
    const covered = () => emu.messages.slice(msgsBefore).reduce((a, m) => a + countIn(m.content), 0);
    log('storm: waiting for the notifier to deliver the folded alerts (min_interval_seconds = 10)');
    try { await waitFor(() => covered() >= recorded(), 30_000, 'messages covering every alert', 100); } catch (e) { log(String(e)); }
    await sleep(200);
    const verify = wardenSync(r, ['verify']);
    await d.stop();
    procs.length = 0;
    const journalReverts = (d.stderr().match(/^<4>warden: reverted data\/storm\.txt/gm) ?? []).length;
    const alerts = readAlerts().filter((a) => a.path === 'data/storm.txt');
    const msgs = emu.messages.slice(msgsBefore).filter((m) => m.time >= tStart);
    const gaps = msgs.slice(1).map((m, i) => (m.time - (msgs[i] as { time: number }).time) / 1000);
    return {
      rate: STORM_RATE, seconds: STORM_S, writes: w.writes, stormMs: w.stormMs,
      convergeMs: w.convergeMs, stableAfter300ms: stable, verifyCleanAfter: verify.code === 0,
      journalReverts, alertsRecorded: alerts.length, alertsReverted: alerts.filter((a) => a.action === 'reverted').length,
      messages: msgs.length, messageAlertCounts: msgs.map((m) => countIn(m.content)), minGapSeconds: gaps.length ? Math.min(...gaps) : null,
      minIntervalSeconds: 10,
      met: { converge: w.convergeMs <= 100, everyRevertRecorded: journalReverts === alerts.length, perInterval: gaps.every((g) => g >= 9.5) },
    };
  } finally {
    for (const p of procs) await p.stop();
  }
}
