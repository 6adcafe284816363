# Local store next to git maintenance (issue 14; docs/benchmarks.md): the
# shell test t_local_maintenance.sh (30 s, 16 writers, in `make check`) run
# longer. `make stress` runs STRESS_RUNS runs of STRESS_SECONDS with
# STRESS_WRITERS holders each and prints one line per run; `make bench` adds
# the same as a markdown section (bench-stress).
STRESS_SECONDS ?= 120
STRESS_WRITERS ?= 16
STRESS_RUNS    ?= 3

.PHONY: stress bench-stress stress-crash
BENCH_TARGETS += bench-stress

stress: $(BIN) $(BUILD)/tools/maint_stress stress-crash
	@sh scripts/stress-local.sh $(abspath $(BIN)) $(abspath $(BUILD)) $(STRESS_RUNS) \
	    $(STRESS_SECONDS) $(STRESS_WRITERS)

bench-stress: $(BIN) $(BUILD)/tools/maint_stress
	@sh scripts/stress-local.sh $(abspath $(BIN)) $(abspath $(BUILD)) $(STRESS_RUNS) \
	    $(STRESS_SECONDS) $(STRESS_WRITERS) --markdown

# Crashed writers (issue 40 done-when; protocol.md §9 "The bound after a
# crash"): tests/shell/t_local_crash_loop.sh (10 s in `make check`) run for
# CRASH_SECONDS: 6 `run` loops over overlapping sets, a seeded random SIGKILL
# every ~0.5 s and strace-placed kills inside and between a set's renames;
# after the loop every name must be acquirable within TTL + 1 s.
CRASH_SECONDS ?= 60
CRASH_SEED    ?= 40

stress-crash: $(BIN)
	@t=$$(mktemp -d) && REFLEASE=$(abspath $(BIN)) BUILD=$(abspath $(BUILD)) TMPDIR=$$t \
	    CRASH_SECONDS=$(CRASH_SECONDS) CRASH_SEED=$(CRASH_SEED) \
	    sh tests/shell/t_local_crash_loop.sh && rm -rf "$$t" || { echo "stress-crash: FAILED (kept $$t)"; exit 1; }
