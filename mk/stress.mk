# Local store next to git maintenance (issue 14; docs/benchmarks.md): the
# shell test t_local_maintenance.sh (30 s, 16 writers, in `make check`) run
# longer. `make stress` runs STRESS_RUNS runs of STRESS_SECONDS with
# STRESS_WRITERS holders each and prints one line per run; `make bench` adds
# the same as a markdown section (bench-stress).
STRESS_SECONDS ?= 120
STRESS_WRITERS ?= 16
STRESS_RUNS    ?= 3

.PHONY: stress bench-stress
BENCH_TARGETS += bench-stress

stress: $(BIN) $(BUILD)/tools/maint_stress
	@sh scripts/stress-local.sh $(abspath $(BIN)) $(abspath $(BUILD)) $(STRESS_RUNS) \
	    $(STRESS_SECONDS) $(STRESS_WRITERS)

bench-stress: $(BIN) $(BUILD)/tools/maint_stress
	@sh scripts/stress-local.sh $(abspath $(BIN)) $(abspath $(BUILD)) $(STRESS_RUNS) \
	    $(STRESS_SECONDS) $(STRESS_WRITERS) --markdown
