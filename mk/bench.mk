# `make bench`: the benchmark report (issue 8) -> docs/benchmarks.md.
# Each figure is printed with the command that produced it (medians of
# repeated runs). Fragments add their own bench targets to BENCH_TARGETS
# (`BENCH_TARGETS += bench-x`, not `bench: bench-x`); `make bench` runs each
# with its stdout captured into $(BENCH_DIR)/<target>.out, then
# scripts/bench-report.sh writes docs/benchmarks.md from those files.
# BENCH_QUICK=1: fewer runs (a smoke test of the report, figures not kept).
BENCH_DIR     := $(BUILD)/bench
BENCH_TARGETS += bench-local bench-ghlatency
BENCH_RUNS    ?= 7

.PHONY: bench bench-local bench-ghlatency
bench: deps
	@$(MAKE) --no-print-directory all
	@rm -rf $(BENCH_DIR) && mkdir -p $(BENCH_DIR)
	@set -e; for t in $(BENCH_TARGETS); do \
	  echo "bench: make $$t"; \
	  if ! $(MAKE) --no-print-directory -s $$t > $(BENCH_DIR)/$$t.out 2> $(BENCH_DIR)/$$t.err; then \
	    echo "bench: make $$t failed (exit status recorded in the report)"; \
	    echo "$$?" > $(BENCH_DIR)/$$t.failed; tail -5 $(BENCH_DIR)/$$t.err; fi; \
	done
	@sh scripts/bench-report.sh $(BENCH_DIR) "$(BENCH_TARGETS)" > docs/benchmarks.md.tmp
	@mv docs/benchmarks.md.tmp docs/benchmarks.md
	@echo "bench: wrote docs/benchmarks.md"

# Local store: in-process CAS throughput, and one `reflease heartbeat` next
# to the git-plumbing script doing the same verified write (hyperfine).
bench-local: $(BIN) $(BUILD)/tools/bench_cas
	@sh scripts/bench-local.sh $(abspath $(BIN)) $(abspath $(BUILD)) $(BENCH_RUNS)

# GitHub backend: acquire/heartbeat latency at the fake server with an
# injected round-trip delay per request.
bench-ghlatency: $(BUILD)/tools/bench_ghlatency
	$(BUILD)/tools/bench_ghlatency $(BENCH_RUNS) 0 50 100

$(BUILD)/tools/bench_ghlatency: tests/tools/bench_ghlatency.c tests/support/fakegh.c \
                                tests/support/fakegh.h $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(MHD_CFLAGS) -Itests -o $@ tests/tools/bench_ghlatency.c \
	      tests/support/fakegh.c $(LIBA) $(SANLD) $(PKG_LIBS) $(MHD_LIBS)
