#!/usr/bin/env python3
"""Run a command on a fresh pseudo-terminal (its controlling terminal), answer every
prompt matching REGEX with TEXT, print the transcript, exit with the command's status.

usage: pty_script.py DEADLINE_S REGEX TEXT -- CMD [ARG...]
Unlike test/changes/pty_run.py, the same answer is given to every prompt that matches
(the tour asks more than once) and the deadline is a parameter."""
import os, pty, re, select, sys, time

deadline = time.time() + float(sys.argv[1])
prompt = re.compile(sys.argv[2].encode())
answer = sys.argv[3].encode()
cmd = sys.argv[sys.argv.index('--') + 1:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(cmd[0], cmd)
out = b''
pos = 0
while True:
    if time.time() > deadline:
        os.kill(pid, 9)
        sys.stdout.write('\n[pty_script: deadline passed, killed]\n')
        break
    m = prompt.search(out, pos)
    if m:
        pos = m.end()
        os.write(fd, answer)
        continue
    r, _, _ = select.select([fd], [], [], 0.1)
    if r:
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            break
        out += data
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.decode('utf-8', 'replace'))
sys.exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))
