/**
 * The advice every alert carries (src/guard/classify.ts, adviceFor): how to make the change
 * properly, for a file, a directory and a replaced root. Pure: in `npm run mutate -- guard`
 * (scripts/mutate.mjs).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { adviceFor } from '../../src/guard/classify.js';

describe('advice: how to make the change properly', () => {
  it('names the path, the alert and the sanctioned command', () => {
    assert.equal(adviceFor('orgs/a.toml', 'content', 'A1', 'org'),
      "Change it with 'warden edit orgs/a.toml' (or 'warden apply orgs/a.toml --from FILE'). If it vanished, check the alert first: 'warden why orgs/a.toml'; 'warden accept A1' proposes the rejected content again.");
    assert.equal(adviceFor('orgs/a.toml', 'mode', 'A1', 'credentials'),
      "A file's mode is part of its approved state: change it with 'warden apply orgs/a.toml --mode MODE'. 'warden accept A1' proposes the mode it rejected, on the approved content.");
    assert.equal(adviceFor('config/credentials.toml', 'content', 'A2', 'credentials'),
      "Credentials change only through 'warden cred set GROUP.KEY' or 'warden cred rotate GROUP'. Your rejected file is kept: 'warden accept A2' proposes it again.");
    assert.equal(adviceFor('x.md', 'unexpected-file', 'A3', null),
      "New protected files are added with 'warden apply x.md --from FILE'. The file is kept: 'warden accept A3' proposes it again.");
    assert.equal(adviceFor('x.md', 'refused', 'A3', null),
      "warden's witness refused a direct write (enforce = true): the file is unchanged. Change it with 'warden edit x.md' (or 'warden apply x.md --from FILE').");
    assert.equal(adviceFor('x.md', 'baseline-tampered', 'A3', null),
      "warden's store was edited outside warden and was put back; check who wrote to snapshots/. See 'warden why x.md'.");
    assert.equal(adviceFor('x.md', 'watch-degraded', 'A3', null),
      "warden could not watch all of a tree: the alert's detail names the bound it reached. Past the inotify watch limit warden polls, which is slower: raise fs.inotify.max_user_watches and restart warden. Past the path-length bound (4,096 bytes below the root, which no path can name beyond) nothing below is checked: remove what lies that deep (it is no runtime's own layout).");
  });
  it('a directory: no file command offered for it', () => {
    assert.equal(adviceFor('deep/a', 'deleted', 'A4', 'directory'),
      "deep/a is a directory that holds approved files (or leads to them); it is part of the approved state (where it is, its mode, its owner and, once recorded, its ACLs): warden puts it back. No warden command changes a directory: to stop protecting what is in it, change the [[protect]] entries with 'warden edit config/warden.toml'. What was found in its place is kept: 'warden why deep/a'.");
    assert.match(adviceFor('', 'mode', 'A5', 'directory'), /^The root directory is part of the approved state .* 'warden why \.'\.$/);
    assert.doesNotMatch(adviceFor('orgs', 'symlink', 'A6', 'directory'), /warden edit orgs|warden apply/);
  });
  it('root replaced: the root path said as such', () => {
    const tail = " A root is moved with warden stopped: 'systemctl stop warden-guard', mv, 'warden rehome --from OLD', start. See 'warden alerts'.";
    const head = 'Something renamed the root (or a directory above it) and put another one, a link or a file at its path; warden put the approved tree back at ';
    assert.equal(adviceFor('', 'root-replaced', 'A', null), `${head}the root path.${tail}`);
    assert.equal(adviceFor('.', 'root-replaced', 'A', null), `${head}the root path.${tail}`);
    assert.equal(adviceFor('orgs', 'root-replaced', 'A', null), `${head}orgs.${tail}`);
  });
});
