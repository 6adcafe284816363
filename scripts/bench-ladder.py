#!/usr/bin/env python3
"""Start-up ladder of `make bench-handoff` (issue 43): each command run RUNS
times, the commands alternated (one run of each in turn, so a load that comes
and goes hits them alike); prints one markdown row per command:
| `command` | median ms | min ms | ratio to the last command's median |
  bench-ladder.py RUNS LABEL::COMMAND...   (COMMAND split on spaces; stdout and
  stderr to /dev/null; a run that exits non-zero stops the bench)"""
import os
import sys
import time


def once(argv):
    t0 = time.perf_counter()
    pid = os.posix_spawnp(argv[0], argv, os.environ,
                          file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                                        (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)])
    _, status = os.waitpid(pid, 0)
    t1 = time.perf_counter()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("bench-ladder: exit %d: %s" % (os.waitstatus_to_exitcode(status), " ".join(argv)))
    return (t1 - t0) * 1000.0


def main():
    runs = int(sys.argv[1])
    cmds = [a.split("::", 1) for a in sys.argv[2:]]
    times = {label: [] for label, _ in cmds}
    for label, cmd in cmds:  # one warm-up each (page cache, ld.so cache)
        once(cmd.split())
    for _ in range(runs):
        for label, cmd in cmds:
            times[label].append(once(cmd.split()))
    med = {}
    for label, _ in cmds:
        v = sorted(times[label])
        n = len(v)
        med[label] = v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
    base = med[cmds[-1][0]]
    for label, _ in cmds:
        print("| %s | %.1f ms | %.1f ms | %.2f× |" % (label, med[label], min(times[label]),
                                                      med[label] / base))


main()
