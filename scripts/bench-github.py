#!/usr/bin/env python3
"""`make bench-github` (issue 39 item 6): how many leases one repository can
hold at once on GitHub's budgets.

    python3 scripts/bench-github.py BIN BUILD [N] [HOLD] [SPEED] [TTL] [SET]

Starts the project's fake GitHub (BUILD/tools/fakegh, which counts requests
as GitHub does: 304s free, content-creating = commits, ref creates/updates/
deletes and GraphQL mutations) on 127.0.0.1, then N concurrent holders
`reflease run capI -- sleep HOLD` with the github: defaults (TTL 450 s, the
renewal point of lib/lease/renew.c), all on a clock SPEED times faster
(libfaketime FAKETIME="+0 xSPEED" for the fake, reflease and CMD alike, as
tests/shell/t_github_budget.sh does: the store's time is the fake's Date).
Samples the fake's counters while they hold, and prints in markdown, per held
lease-hour, REST requests, GraphQL points and content-creating requests in
the steady state (renewals: whole renewal paces while all N hold, before the
first release), the largest per-minute burst, and the largest N that stays
inside GITHUB_TOKEN's budgets. Talks only to the fake it starts. Exit 1 when
a holder did not hold throughout (run's exit status not 0: the figures would
not be a held lease's) or, with the default TTL, the largest N is under the
target (25).

Defaults: N 25, HOLD 1200 (s, store time), SPEED 20, TTL 0 (the store's
default; another is passed as `run --ttl TTL`), SET 1 (SET > 1: each holder
runs a set of SET leases, `run capIa capIb ... -- sleep HOLD`, renewed in one
write of SET commits and one updateRefs: the figures are per lease): about a
minute.
"""
import email.utils
import glob
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

# GITHUB_TOKEN's budgets (docs.github.com/en/rest/using-the-rest-api/
# rate-limits-for-the-rest-api: 1,000 REST requests an hour per repository;
# "About secondary rate limits": 80 content-creating requests a minute, 500
# an hour; docs.github.com/en/graphql/overview/
# rate-limits-and-query-limits-for-the-graphql-api: 1,000 points an hour per
# repository, a request without connections costs 1 point)
REST_H, GQL_H, CC_MIN, CC_H = 1000, 1000, 80, 500
TARGET = 25


def ftlib():
    for pat in ("/usr/lib/*/faketime/libfaketimeMT.so.1", "/usr/lib/faketime/libfaketimeMT.so.1",
                "/usr/lib/*/faketime/libfaketime.so.1"):
        hits = sorted(glob.glob(pat))
        if hits:
            return hits[0]
    sys.exit("bench-github: libfaketime is required (scripts/install-deps.sh)")


def renew_pace():
    """The keeper's renewal pace on a budgeted store, seconds (renew.h)."""
    here = os.path.dirname(os.path.abspath(__file__))
    for line in open(os.path.join(here, "..", "lib", "lease", "renew.h")):
        w = line.split()
        if len(w) == 3 and w[:2] == ["#define", "LEASE_RENEW_PACE_BUDGETED"]:
            return int(w[2])
    sys.exit("bench-github: LEASE_RENEW_PACE_BUDGETED not found in lib/lease/renew.h")


def stats(base):
    """The fake's counters and its clock (the store's time, from Date)."""
    with urllib.request.urlopen(base + "/_fakegh/stats", timeout=10) as r:
        s = json.load(r)
        t = email.utils.parsedate_to_datetime(r.headers["Date"]).timestamp()
    by = s["by_endpoint"]
    gql = by["graphql"] + by["updateRefs"]  # 1 point each (no connections)
    return {"t": t, "cc": s["content_creating"], "counted": s["counted"], "gql": gql,
            "rest": s["counted"] - gql, "free": s["not_modified"]}


def start_fake(build, env, tmp):
    port = os.path.join(tmp, "port")
    fake = subprocess.Popen([os.path.join(build, "tools", "fakegh"), "--port-file", port],
                            env=env, stdout=subprocess.DEVNULL,
                            stderr=open(os.path.join(tmp, "fakegh.err"), "w"))
    for _ in range(100):
        if os.path.exists(port) and open(port).read().strip():
            return fake, "http://127.0.0.1:" + open(port).read().strip()
        time.sleep(0.05)
    fake.kill()
    sys.exit("bench-github: fakegh did not start: " + open(os.path.join(tmp, "fakegh.err")).read())


def run_holders(binp, base, env, n, hold, ttl, nset, tmp):
    """N holders; samples of the counters until every one has exited."""
    henv = dict(env, REFLEASE_STORE="github:octo/leases", GITHUB_API_URL=base,
                GITHUB_TOKEN="ghp_benchgithub")
    for k in ("GITHUB_GRAPHQL_URL", "REFLEASE_GITHUB_TOKEN", "REFLEASE_GITHUB_TOKEN_FILE",
              "GITHUB_ACTIONS", "REFLEASE_TTL"):
        henv.pop(k, None)
    t0 = stats(base)
    procs = []
    for i in range(n):
        e = dict(henv, REFLEASE_OWNER="job%d" % i, REFLEASE_HOST="runner-%d" % i)
        ttlopt = ["--ttl", str(ttl)] if ttl else []
        names = ["cap%d" % i] if nset == 1 else ["cap%d%s" % (i, chr(97 + j)) for j in range(nset)]
        procs.append(subprocess.Popen([binp, "--json", "run"] + names + ttlopt +
                                      ["--", "sleep", str(hold)],
                                      env=e, stdout=subprocess.DEVNULL,
                                      stderr=open(os.path.join(tmp, "run%d.err" % i), "w")))
    samples = []
    while any(p.poll() is None for p in procs):
        samples.append(stats(base))
        time.sleep(0.25)
    samples.append(stats(base))
    return t0, samples, [p.returncode for p in procs]


def peak_per_minute(samples, lo, hi):
    """The most content-creating requests in any 60 s of store time whose end
    lies in [lo, hi] (samples a few store seconds apart: the window is up to
    one sample longer, so this errs high)."""
    best, j = 0, 0
    for s in samples:
        if not lo <= s["t"] <= hi:
            continue
        while samples[j + 1]["t"] <= s["t"] - 60:
            j += 1
        best = max(best, s["cc"] - samples[j]["cc"])
    return best


def main():
    binp, build = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 25
    hold = int(sys.argv[4]) if len(sys.argv) > 4 else 1200
    speed = int(sys.argv[5]) if len(sys.argv) > 5 else 20
    ttl = int(sys.argv[6]) if len(sys.argv) > 6 else 0
    nset = int(sys.argv[7]) if len(sys.argv) > 7 else 1
    if not 1 <= nset <= 26:
        sys.exit("bench-github: SET is 1 to 26")
    leases = n * nset
    env = dict(os.environ, LD_PRELOAD=ftlib(), FAKETIME="+0 x%d" % speed)
    real0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bench-github.") as tmp:
        fake, base = start_fake(build, env, tmp)
        try:
            t0, samples, rcs = run_holders(binp, base, env, n, hold, ttl, nset, tmp)
        finally:
            # fakegh's SIGTERM may land on its server thread, leaving its
            # main thread in pause(): then SIGKILL
            fake.terminate()
            try:
                fake.wait(timeout=5)
            except subprocess.TimeoutExpired:
                fake.kill()
                fake.wait()
        bad = [(i, rc, open(os.path.join(tmp, "run%d.err" % i)).read()[-300:])
               for i, rc in enumerate(rcs) if rc != 0]
    real = time.monotonic() - real0
    end = samples[-1]
    # steady state: whole renewal paces (lib/lease/renew.h) beginning half a
    # pace after every lease was created (N acquires: commit + create each)
    # and ending 10 s before any hold can end (a release is a commit +
    # updateRefs): a window of k paces holds exactly k renewals of each lease
    # whatever its phase, and the half pace keeps the renewals of leases that
    # started together off the window's edges
    pace = renew_pace()
    # (an acquire of one lease: commit + create; of a set: a commit per
    # member and at least one ref write)
    first = next((s for s in samples if s["cc"] >= n * (nset + 1)), None)
    if not first:
        sys.exit("bench-github: the %d holders never all held" % n)
    k = int((t0["t"] + hold - 10 - (first["t"] + pace / 2)) // pace)
    if k < 1:
        sys.exit("bench-github: HOLD %d s leaves no whole renewal pace (%d s) to measure" % (hold, pace))
    lo = first["t"] + pace / 2
    a = next(s for s in samples if s["t"] >= lo)
    b = next(s for s in samples if s["t"] >= a["t"] + k * pace)
    lease_h = leases * k * pace / 3600.0
    per = {key: (b[key] - a[key]) / lease_h for key in ("rest", "gql", "cc", "free")}
    burst = peak_per_minute(samples, a["t"] + 60, b["t"])
    start_burst = peak_per_minute(samples, t0["t"], a["t"] + 60)
    caps = {"REST requests (1,000/h)": REST_H / per["rest"] if per["rest"] else math.inf,
            "GraphQL points (1,000/h)": GQL_H / per["gql"] if per["gql"] else math.inf,
            "content-creating (500/h)": CC_H / per["cc"] if per["cc"] else math.inf,
            "content-creating (80/min, renewals in step)":
                CC_MIN / (burst / leases) if burst else math.inf}
    nmax = int(min(caps.values()))
    default = not ttl and nset == 1
    args = "".join(" %d" % v for v in (ttl, nset)[: 2 if nset > 1 else 1 if ttl else 0])
    names = "capI" if nset == 1 else "capIa ... capI%s" % chr(96 + nset)
    what = ("`--ttl %d` (renewal point of lib/lease/renew.c)" % ttl if ttl else
            "the `github:` defaults (TTL 450 s, renewal point of lib/lease/renew.c)")
    print("## GitHub: leases one repository can hold at once (issue 39, `make bench-github`)\n")
    print("`python3 scripts/bench-github.py build/reflease build %d %d %d%s`%s: "
          "%d concurrent `reflease run %s%s -- sleep %d` (%d leases%s) against the fake GitHub "
          "(`build/tools/fakegh` on 127.0.0.1, counting as GitHub counts) with %s, every "
          "process on a clock %d times faster (libfaketime `FAKETIME=\"+0 x%d\"`); %.0f s of wall "
          "time. Steady state: %d renewal paces of %d s (from half a pace after all held), "
          "%.2f lease-hours.\n"
          % (n, hold, speed, args, " (`make bench-github`)" if default else "", n, names, " --ttl %d" % ttl if ttl else "", hold, leases,
             ", each holder's %d renewed in one write" % nset if nset > 1 else "", what, speed,
             speed, real, k, pace, lease_h))
    print("| per held lease and hour (steady state) | measured | GITHUB_TOKEN's budget |")
    print("|---|---:|---|")
    print("| REST requests (counted; 304s excluded) | %.1f | 1,000/h per repository |" % per["rest"])
    print("| GraphQL points | %.1f | 1,000/h per repository |" % per["gql"])
    print("| content-creating requests | %.1f | 500/h, 80/min |" % per["cc"])
    print("| free 304 re-reads | %.1f | not counted |" % per["free"])
    print("\nWhole run: %d leases, %d content-creating requests (%.1f each for a %d s hold, "
          "acquire and release included), %d REST requests and %d GraphQL points; %d of %d "
          "holders held throughout and released (run exit 0)."
          % (leases, end["cc"] - t0["cc"], (end["cc"] - t0["cc"]) / leases, hold,
             end["rest"] - t0["rest"], end["gql"] - t0["gql"], n - len(bad), n))
    print("Largest burst: %d content-creating requests in a minute while renewing (all "
          "started together, so they renew in step), %d in the minute they acquired.\n"
          % (burst, start_burst))
    print("| budget (GITHUB_TOKEN) | leases it allows |")
    print("|---|---:|")
    for key, v in caps.items():
        print("| %s | %s |" % (key, "unbounded" if v == math.inf else "%d" % int(v)))
    print("| **leases one repository can hold at once** | **%d**%s |\n"
          % (nmax, " (target: at least %d)" % TARGET if default else ""))
    for i, rc, err in bad:
        print("holder %d: run exit %d: %s" % (i, rc, err.strip()), file=sys.stderr)
    if bad:
        sys.exit("bench-github: %d of %d holders did not hold throughout" % (len(bad), n))
    if default and nmax < TARGET:
        sys.exit("bench-github: %d leases, under the target of %d" % (nmax, TARGET))


if __name__ == "__main__":
    main()
