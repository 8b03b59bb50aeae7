/**
 * What quarantine costs on disk: BENCH_Q_ENTRIES (default 10,000) edits of one approved file
 * are quarantined the way a revert does it (linkBefore, the restore renames the approved
 * bytes over the path, settle), each rejected content BENCH_Q_BYTES (default 600) bytes.
 * Reports the quarantine's allocated bytes (st_blocks), its inodes and the content bytes,
 * per entry. BENCH_Q_BUDGET (bytes): the store budget prunes as the guard does after each
 * alert (store/prune.ts), and the store's size at the end is reported against it.
 * Alone: `node dist/bench/quarantine-cost.js`.
 */
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../src/store/store.js';
import { Quarantine } from '../src/guard/quarantine.js';
import { newAlertId } from '../src/store/alerts.js';
import { openRoot, safeClose } from '../src/fsx/beneath.js';
import { StoreBudget } from '../src/store/prune.js';

const N = Number(process.env.BENCH_Q_ENTRIES ?? 10_000);
const BYTES = Number(process.env.BENCH_Q_BYTES ?? 600);
const BUDGET = process.env.BENCH_Q_BUDGET ? Number(process.env.BENCH_Q_BUDGET) : null;

/** Allocated bytes, distinct inodes and file sizes under `dir` (never following a link). */
export function diskCost(dir: string): { allocated: number; inodes: number; content: number } {
  const seen = new Set<string>();
  let allocated = 0; let content = 0;
  const walk = (p: string): void => {
    const st = lstatSync(p);
    const key = `${st.dev}:${st.ino}`;
    if (!seen.has(key)) { seen.add(key); allocated += st.blocks * 512; if (st.isFile()) content += st.size; }
    if (st.isDirectory()) for (const n of readdirSync(p)) walk(join(p, n));
  };
  walk(dir);
  return { allocated, inodes: seen.size, content };
}

function main(): void {
  const base = mkdtempSync(join(tmpdir(), 'warden-qcost-'));
  try {
    const root = join(base, 'root');
    mkdirSync(join(root, 'orgs'), { recursive: true });
    const env = { ...process.env, XDG_STATE_HOME: join(base, 'state') };
    const store = Store.open(root, { create: true, env });
    store.ensureLayout();
    const q = new Quarantine(store, () => undefined);
    const dirFd = openRoot(join(root, 'orgs'));
    const path = join(root, 'orgs', 'f.toml');
    const approved = Buffer.from('members = ["approved"]\n');
    writeFileSync(path, approved);
    const empty = diskCost(join(store.dir, 'quarantine'));
    let told = 0;
    const budget = BUDGET === null ? null : new StoreBudget(store, () => BUDGET, () => undefined, () => { told++; });
    budget?.scan();
    let most = 0;
    const t0 = performance.now();
    for (let i = 0; i < N; i++) {
      const bytes = Buffer.alloc(BYTES, `x${i} `);
      writeFileSync(path, bytes);
      const id = newAlertId();
      const linked = q.linkBefore(id, dirFd, 'f.toml', lstatSync(path).ino);
      writeFileSync(join(root, 'orgs', '.f.tmp'), approved);
      renameSync(join(root, 'orgs', '.f.tmp'), path);
      const label = q.settle(id, 'f.toml', linked, bytes, 1 << 20);
      if (budget) {
        budget.afterAlert({ id, time: '', path: 'orgs/f.toml', action: 'reverted', reason: 'content', before: null, after: null, quarantine: label, advice: '' });
        budget.enforce();
        most = Math.max(most, budget.usedBytes);
      }
    }
    const ms = performance.now() - t0;
    safeClose(dirFd);
    const c = diskCost(join(store.dir, 'quarantine'));
    const allocated = c.allocated - empty.allocated; const inodes = c.inodes - empty.inodes;
    const whole = BUDGET === null ? null : { budget: BUDGET, store_allocated: diskCost(store.dir).allocated, store_inodes: diskCost(store.dir).inodes, most_counted: most, told };
    console.log(JSON.stringify({ entries: N, bytes_each: BYTES, allocated, inodes, content: c.content, per_entry: { allocated: allocated / N, inodes: inodes / N, content: c.content / N }, ms: Math.round(ms), ...(whole ? { with_budget: whole } : {}) }));
    store.close();
  } finally { rmSync(base, { recursive: true, force: true }); }
}

main();
