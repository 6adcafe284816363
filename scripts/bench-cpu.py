#!/usr/bin/env python3
"""CPU and wall time of `reflease version` and a `local:` `status` for several
builds, alternated (issue 43 item 2: link flags measured side by side). The
store must exist with lease x held. Prints a markdown row per build and
command: CPU (user + system, from wait4) median and min, wall median and min.
  bench-cpu.py RUNS STORE_DIR REFLEASE_BIN..."""
import os
import statistics
import sys
import time


def once(argv):
    t0 = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, os.environ,
                         file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)])
    _, status, ru = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("bench-cpu: exit %d: %s" % (os.waitstatus_to_exitcode(status), " ".join(argv)))
    return (ru.ru_utime + ru.ru_stime) * 1000.0, (time.perf_counter() - t0) * 1000.0


def main():
    runs, store, bins = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    cmds = [("version", ["version"]), ("status", ["--store", "local:" + store, "status", "x"])]
    res = {}
    for i in range(runs + 1):  # the first round warms up
        for b in bins:
            for name, args in cmds:
                r = once([b] + args)
                if i:
                    res.setdefault((name, b), []).append(r)
    for name, _ in cmds:
        for b in bins:
            cpu = [r[0] for r in res[(name, b)]]
            wall = [r[1] for r in res[(name, b)]]
            print("| %s | %s | %.1f ms | %.1f ms | %.1f ms | %.1f ms |" % (
                name, b, statistics.median(cpu), min(cpu), statistics.median(wall), min(wall)))


main()
