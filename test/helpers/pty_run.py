#!/usr/bin/env python3
"""Run a command on a fresh pseudo-terminal (its controlling terminal, so /dev/tty works),
answer prompts, print the transcript, exit with the command's status.

usage: pty_run.py [--deadline S] [--repeat-last] ANSWERS_JSON -- CMD [ARG...]
ANSWERS_JSON is a list of [regex, text]: wait until regex appears in the output (after the
previous match), then type text at once (the prompt must already have switched the
terminal to no-echo). --repeat-last: the last answer is given again to every later match
(a tour asks more than once). The deadline (default 30 s) applies to the whole run; past
it the command is killed and the transcript says so. test/helpers/pty.ts drives it."""
import json, os, pty, re, select, sys, time

args = sys.argv[1:sys.argv.index('--')]
cmd = sys.argv[sys.argv.index('--') + 1:]
deadline_s, repeat_last = 30.0, False
while args and args[0].startswith('--'):
    flag = args.pop(0)
    if flag == '--deadline':
        deadline_s = float(args.pop(0))
    elif flag == '--repeat-last':
        repeat_last = True
    else:
        sys.exit('pty_run.py: unknown option ' + flag)
answers = [(re.compile(a[0].encode()), a[1].encode()) for a in json.loads(args[0])]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(cmd[0], cmd)
out = b''
pos = 0
deadline = time.time() + deadline_s
i = 0
while True:
    if time.time() > deadline:
        os.kill(pid, 9)
        out += b'\n[pty_run: deadline passed, killed]\n'
        break
    if i < len(answers):
        m = answers[i][0].search(out, pos)
        if m:
            pos = m.end()
            os.write(fd, answers[i][1])
            if not (repeat_last and i == len(answers) - 1):
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
