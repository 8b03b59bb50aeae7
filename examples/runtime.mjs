// A minimal agent runtime on warden's approved view (docs/RUNTIME.md).
//
//   npm start &                    # warden guards the example root (this repository)
//   node examples/runtime.mjs      # the runtime: answers from approved states only
//
// Edit orgs/bookclub.toml by hand while it runs: warden reverts the edit, and this
// runtime never sees it. Change it with `warden apply` or `warden edit`: it logs the change.
import { openApprovedView, canRead } from 'warden/runtime';
import { fileURLToPath } from 'node:url';

const root = process.argv[2] ?? process.env.WARDEN_ROOT ?? fileURLToPath(new URL('..', import.meta.url));
const view = openApprovedView(root);

const guest = { user: '999999999999999999', ctx: { kind: 'guild', guild: '1', channel: '555555555555555555' } };
const member = { user: '222222222222222222', ctx: { kind: 'guild', guild: '1', channel: '444444444444444444' } };
const questions = [
  ['guest', guest, '/workspace/public/readme.md'],
  ['guest', guest, '/workspace/bookclub/notes.md'],
  ['member', member, '/workspace/bookclub/notes.md'],
  ['member', member, '/memories/private/diary.md'],
];

function report(state) {
  if (!state.ok) {
    console.log(`closed: ${state.reason} (everything is denied, no credentials)`);
    return;
  }
  console.log(`generation ${state.generation}:`);
  for (const [who, { user, ctx }, path] of questions) {
    console.log(`  ${who} may read ${path}: ${canRead(state.policy, user, ctx, path) ? 'yes' : 'no'}`);
  }
  // Names only: a runtime uses the values, it never prints them.
  const groups = Object.entries(state.credentials).map(([g, t]) => `${g} (${Object.keys(t).join(', ')})`);
  console.log(`  credentials: ${groups.join(', ') || 'none'}`);
}

console.log(`watching ${root}, manifest ${view.manifestPath}`);
report(view.current());
view.on('change', (state) => { console.log('change:'); report(state); });
process.on('SIGINT', () => view.close().then(() => process.exit(0)));
process.on('SIGTERM', () => view.close().then(() => process.exit(0)));
