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

# History per lease (issue 29): 50 leases heartbeating every ttl/3 (TTL 30)
# through a simulated day of store time with this build (heartbeats replace
# heartbeats), and the old format (1.1, appended) for 3 h of it, each then
# maintained (git gc --prune=now: `reflease gc --grace 0`, no writer runs);
# the old-format store is then migrated and heartbeats one more hour.
BENCH_HISTORY_SECONDS ?= 86400
BENCH_HISTORY_OLD_SECONDS ?= 10800
BENCH_TARGETS += bench-history
.PHONY: bench-history
bench-history: $(BUILD)/tools/bench_history
	@d=$$(mktemp -d "$${TMPDIR:-/tmp}/bench-history.XXXXXX") && \
	 printf '## History per lease (issue 29)\n\n' && \
	 printf '`build/tools/bench_history DIR replace 50 %s` and `build/tools/bench_history DIR append 50 %s`:\n\n```\n' \
	        $(BENCH_HISTORY_SECONDS) $(BENCH_HISTORY_OLD_SECONDS) && \
	 $(BUILD)/tools/bench_history $$d/replace replace 50 $(BENCH_HISTORY_SECONDS) && \
	 $(BUILD)/tools/bench_history $$d/append append 50 $(BENCH_HISTORY_OLD_SECONDS) && \
	 printf '```\n' && rm -rf "$$d"
