# Reconcile sweep benchmark (issue 4; docs/benchmarks.md): builds a local
# store of BENCH_RECONCILE_N leases, each with a parent commit (git
# fast-import), then times one sweep and reports the peak RSS.
#   make bench-reconcile                      # 10,000 leases
#   make bench-reconcile BENCH_RECONCILE_N=100000
# The store is kept in $(BENCH_RECONCILE_DIR) and reused by later runs.
BENCH_RECONCILE_N   ?= 10000
BENCH_RECONCILE_DIR ?= $(or $(TMPDIR),/tmp)/bench-reconcile-$(BENCH_RECONCILE_N)

.PHONY: bench-reconcile bench-reconcile-report
# `make bench` runs the 10,000- and 100,000-lease sweeps, BENCH_RECONCILE_RUNS
# times each, medians into docs/benchmarks.md (scripts/bench-reconcile.sh).
BENCH_TARGETS += bench-reconcile-report
BENCH_RECONCILE_RUNS ?= 3
bench-reconcile-report: $(BUILD)/tools/bench_reconcile
	@sh scripts/bench-reconcile.sh $(BUILD)/tools/bench_reconcile "10000 100000" \
	    $(BENCH_RECONCILE_RUNS) $(or $(TMPDIR),/tmp)/bench-reconcile

bench-reconcile: $(BUILD)/tools/bench_reconcile
	$(BUILD)/tools/bench_reconcile $(BENCH_RECONCILE_N) $(BENCH_RECONCILE_DIR)
