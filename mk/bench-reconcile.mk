# Reconcile sweep benchmark (issue 4; docs/benchmarks.md): builds a local
# store of BENCH_RECONCILE_N leases, each with a parent commit (git
# fast-import), then times one sweep and reports the peak RSS.
#   make bench-reconcile                      # 10,000 leases
#   make bench-reconcile BENCH_RECONCILE_N=100000
# The store is kept in $(BENCH_RECONCILE_DIR) and reused by later runs.
BENCH_RECONCILE_N   ?= 10000
BENCH_RECONCILE_DIR ?= $(or $(TMPDIR),/tmp)/bench-reconcile-$(BENCH_RECONCILE_N)

.PHONY: bench bench-reconcile
bench: bench-reconcile

bench-reconcile: $(BUILD)/tools/bench_reconcile
	$(BUILD)/tools/bench_reconcile $(BENCH_RECONCILE_N) $(BENCH_RECONCILE_DIR)
