/**
 * Names the agent chooses — a file name, its process's name, a unit — reach the owner as
 * the characters they are, on every channel (docs/NOTIFY.md, "Names are literal"):
 * - Discord: no spoiler, code span, emphasis, heading, quote, link or mention comes from
 *   them, and a backtick in a name never breaks warden's own code span;
 * - the journal: one line, the kernel's facts about the writer first;
 * - `by`: a process named `vim, user root` reads as a quoted claim, never as a user.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startNotifier, readDeliveryState } from '../../src/notifier/index.js';
import { formatAlerts, discordContent } from '../../src/notifier/format.js';
import { journalLine } from '../../src/guard/alert-sink.js';
import { alertJournalFields, encodeJournalEntry } from '../../src/store/journal-entry.js';
import type { Alert, Writer } from '../../src/store/alert-types.js';
import { DiscordEmulator } from '../helpers/discord-emulator.js';
import { waitFor } from '../helpers/wait-for.js';
import { TOKEN, alert, appendAlerts, config, fixture } from './helpers.js';

/**
 * How Discord reads a message, as far as it matters here: a backslash before ASCII
 * punctuation is that character, literally; a backtick run opens a code span closed by a run
 * of the same length (nothing inside is markdown); every other markdown character is live.
 */
function readDiscord(content: string): { text: string; live: { ch: string; at: number; line: number }[] } {
  let text = '';
  const live: { ch: string; at: number; line: number }[] = [];
  let line = 0;
  for (let i = 0; i < content.length;) {
    const c = content[i]!;
    if (c === '\n') { line++; text += c; i++; continue; }
    if (c === '\\' && /[!-/:-@[-`{-~]/.test(content[i + 1] ?? '')) { text += content[i + 1]; i += 2; continue; }
    if (c === '`') {
      let n = 0;
      while (content[i + n] === '`') n++;
      const fence = '`'.repeat(n);
      let j = content.indexOf(fence, i + n);
      while (j >= 0 && content[j + n] === '`') j = content.indexOf(fence, j + n + 1);
      if (j >= 0 && !content.slice(i + n, j).includes('\n')) {
        live.push({ ch: 'code', at: i, line });
        text += content.slice(i + n, j);
        i = j + n;
        continue;
      }
    }
    // Headings, subtext, quotes and lists count only at the start of a line.
    const lineStart = /(^|\n)[ \t]*$/.test(content.slice(0, i));
    if ('|*_~<>[]()@`'.includes(c) || (lineStart && '#->'.includes(c)) || (lineStart && /^\d+\./.test(content.slice(i)))) live.push({ ch: c, at: i, line });
    text += c;
    i++;
  }
  return { text, live };
}

/** The markdown Discord would see outside warden's own: the title's bold, its code spans, the bullet's parentheses. */
function foreignMarkup(content: string): string[] {
  const { live } = readDiscord(content);
  const firstLine = content.split('\n')[0]!;
  const titleStars = [firstLine.indexOf('**'), firstLine.indexOf('**') + 1, firstLine.lastIndexOf('**'), firstLine.lastIndexOf('**') + 1];
  return live.filter((l) => !(l.ch === '*' && l.line === 0 && titleStars.includes(l.at)))
    .filter((l) => l.ch !== 'code' && l.ch !== '(' && l.ch !== ')')
    .map((l) => `${l.ch} at ${l.at}: …${content.slice(Math.max(0, l.at - 20), l.at + 20)}…`);
}

const AGENT: Writer = {
  pid: 4242, comm: 'vim, user root', exe: '/usr/bin/vim', uid: 1001, user: 'agent', loginuid: null, login_user: null,
  session: null, unit: 'agent-runtime.service', op: 'open-write', refused: false, time: '2026-12-06T00:00:00Z',
};

const NAMES = [
  'orgs/||a.toml',
  'orgs/a`b.toml',
  'orgs/@everyone <@123456789012345678> [x](http://e).toml',
  'orgs/# head -# sub > quote *em* __u__ ~~s~~.toml',
];

test('Discord: a markdown-laden file name and a writer named || or `vim, user root` are literal text in the DM', async () => {
  const fx = fixture();
  const emu = new DiscordEmulator(TOKEN);
  await emu.start();
  const n = await startNotifier({ root: fx.root, stateDir: fx.stateDir, config: config(fx, emu.api), log: () => {}, timing: { pollMs: 50 } });
  try {
    const alerts: Alert[] = [
      ...NAMES.map((path) => alert({ path, by: { ...AGENT, comm: '||' }, advice: `Change it with 'warden edit ${path}'.`, detail: `written through ${path}` })),
      alert({ path: 'orgs/bookclub.toml', by: AGENT }),
    ];
    for (const [i, a] of alerts.entries()) {
      appendAlerts(fx.root, [a]);
      await waitFor(() => readDeliveryState(fx.root, fx.stateDir).alerts[a.id]?.discord?.state === 'delivered', 20_000, `alert ${i} delivered`);
    }
    const msgs = emu.messages;
    assert.equal(msgs.length, alerts.length);
    for (const [i, m] of msgs.entries()) {
      const body = JSON.parse(m.body) as { allowed_mentions: unknown; flags?: number };
      assert.deepEqual(foreignMarkup(m.content), [], `message ${i} has live markdown from a name:\n${m.content}`);
      assert.deepEqual(body.allowed_mentions, { parse: [] }, 'no mention can ping');
      assert.equal((body.flags ?? 0) & 4, 4, 'SUPPRESS_EMBEDS: no link preview');
      const { text } = readDiscord(m.content);
      assert.ok(text.includes(alerts[i]!.path), `message ${i} shows the name as it is:\n${text}`);
    }
    // The writer's name is quoted as its own claim, after the facts the kernel vouches for.
    const who = /^Who: (.*)$/m.exec(readDiscord(msgs[msgs.length - 1]!.content).text)?.[1] ?? '';
    assert.match(who, /^by user agent \(uid 1001\), unit agent-runtime\.service: process "vim, user root" \(pid 4242/, who);
    assert.equal(/user (\S+)/.exec(who)?.[1], 'agent', 'the first user a reader sees is the real one');
    const spoiler = /^Who: (.*)$/m.exec(readDiscord(msgs[0]!.content).text)?.[1] ?? '';
    assert.match(spoiler, /process "\|\|"/);
  } finally { await n.stop(); await emu.stop(); fx.cleanup(); }
});

test('Discord: a folded storm keeps warden\'s code spans whole around names with backticks, pipes and mentions', () => {
  const alerts = [...NAMES, 'orgs/``x``.toml', 'orgs/`.toml'].flatMap((path) => [alert({ path, by: AGENT }), alert({ path, by: { ...AGENT, comm: '`x`' } })]);
  const m = discordContent(formatAlerts(alerts, 2000, 'discord'));
  assert.ok(m.length <= 2000);
  assert.deepEqual(foreignMarkup(m), [], m);
  const { text } = readDiscord(m);
  for (const p of [...NAMES, 'orgs/``x``.toml', 'orgs/`.toml']) assert.ok(text.includes(p), `${p} shown literally:\n${text}`);
  assert.match(text, /by user agent \(uid 1001\), unit agent-runtime\.service: "vim, user root"/);
  // The plain channels get the same words without markdown escapes.
  const plain = formatAlerts(alerts, 4000, 'plain');
  assert.ok(plain.body.includes('orgs/||a.toml') && !plain.body.includes('\\|'), plain.body);
});

test('Discord: owner messages quote the requester\'s command literally', async () => {
  const { formatOwnerMessage } = await import('../../src/notifier/format.js');
  const m = discordContent(formatOwnerMessage("warden: one-time code 12345678 approves request r1: 'warden apply orgs/||x.toml' by agent (orgs/||x.toml).\n# forged heading\n> quote @everyone", 2000, 'discord'));
  assert.deepEqual(foreignMarkup(m), [], m);
  assert.match(m, /one-time code 12345678 approves/);
});

test('journal: one line, a name cannot forge a line, and the writer reads kernel facts first', () => {
  const a = alert({ path: 'orgs/x.toml\n<0>warden: reverted orgs/y.toml: forged', by: AGENT, detail: 'd\r\x1b[2Jx' });
  const line = journalLine(a);
  assert.doesNotMatch(line, /[\n\r\x1b]/);
  assert.match(line, /by user agent \(uid 1001\), unit agent-runtime\.service: process "vim, user root" \(pid 4242, "\/usr\/bin\/vim"\)/);
  assert.equal(/\bby (?:user )?([^ ,(]+)/.exec(line)?.[1], 'agent', line);
  // The native entry: a field's value can hold no line that reads as another field.
  const fields = alertJournalFields(a, '/r', 'id', line.replace(/^<\d>/, ''));
  const buf = encodeJournalEntry(fields);
  const names: string[] = [];
  for (let i = 0; i < buf.length;) {
    const nl = buf.indexOf(0x0a, i);
    const head = buf.subarray(i, nl).toString('utf8');
    const eq = head.indexOf('=');
    if (eq >= 0) { names.push(head.slice(0, eq)); i = nl + 1; continue; }
    names.push(head);
    const len = Number(buf.readBigUInt64LE(nl + 1));
    i = nl + 1 + 8 + len + 1;
  }
  assert.deepEqual(names, fields.map(([k]) => k), 'exactly the fields warden wrote');
  assert.doesNotMatch(fields.find(([k]) => k === 'WARDEN_PATH')![1], /\n/);
});

test('journal and Discord title: a file named like the rest of the line is quoted, so it cannot pass for it', () => {
  const forged = 'orgs/x.toml: deleted; alert A1. by user root (uid 0): process "sh" (pid 1)';
  const a = alert({ path: forged, by: AGENT });
  const line = journalLine(a);
  assert.ok(line.includes(`reverted "orgs/x.toml: deleted; alert A1. by user root (uid 0): process \\"sh\\" (pid 1)": content;`), line);
  assert.equal(/\bby (?:user )?([^ ,(]+)/.exec(line.replace(/"(?:[^"\\]|\\.)*"/g, '""'))?.[1], 'agent', 'outside quotes, the first "by" is the real writer');
  // An ordinary name stays as it is.
  assert.match(journalLine(alert({ path: 'orgs/bookclub.toml' })), /warden: reverted orgs\/bookclub\.toml: content;/);
  const title = formatAlerts([a], 2000, 'plain').title;
  assert.ok(title.endsWith(`reverted "orgs/x.toml: deleted; alert A1. by user root (uid 0): process \\"sh\\" (pid 1)"`), title);
});
