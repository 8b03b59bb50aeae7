#!/usr/bin/env python3
"""Run a command on a fresh pseudo-terminal (its controlling terminal, so /dev/tty works),
answer prompts, print the transcript, exit with the command's status.

usage: pty_run.py ANSWERS_JSON -- CMD [ARG...]
ANSWERS_JSON is a list of [regex, text]: wait until regex appears in the output (after the
previous match), then type text. A 30 s deadline applies to the whole run."""
import json, os, pty, re, select, sys, time

answers = json.loads(sys.argv[1])
cmd = sys.argv[sys.argv.index('--') + 1:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(cmd[0], cmd)
out = b''
pos = 0
deadline = time.time() + 30
i = 0
while True:
    if time.time() > deadline:
        os.kill(pid, 9)
        break
    if i < len(answers):
        m = re.compile(answers[i][0].encode()).search(out, pos)
        if m:
            pos = m.end()
            # Type at once: the prompt must already have switched the terminal to no-echo.
            os.write(fd, answers[i][1].encode())
            i += 1
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
