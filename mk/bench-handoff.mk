# `make bench-handoff` (part of `make bench`; issue 18): how soon a waiting
# `reflease acquire --wait` holds a released lease, next to `etcdctl lock`
# (etcd started on 127.0.0.1 by the script) and `flock(1)`, plus the github:
# backend against the fake server with the requests it spends while waiting;
# then (issue 43) short holds beside the same etcd and flock: a separate-process
# release, a `run` -> `run --wait` handoff, and the start-up ladder
# (scripts/bench-ladder.py; FAST_HOLD, FAST_RUNS, LADDER_RUNS in the environment),
# each with the reflease of `make` and that of `make bundle` (static libgit2, issue 43).
#   make bench-handoff BENCH_HANDOFF_RUNS=5 BENCH_HANDOFF_HOLDS="2 10 20"
.PHONY: bench-handoff
BENCH_TARGETS += bench-handoff
BENCH_HANDOFF_RUNS  ?= 3
BENCH_HANDOFF_HOLDS ?= 2 10 20
bench-handoff: $(BIN) $(BUILD)/tools/fakegh $(BUNDLE)/bin/reflease
	@sh scripts/bench-handoff.sh $(abspath $(BIN)) $(abspath $(BUILD)) $(BENCH_HANDOFF_RUNS) \
	    "$(BENCH_HANDOFF_HOLDS)" $(abspath $(BUNDLE))/bin/reflease
