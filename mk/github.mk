# GitHub backend: the fake GitHub server (tests/support/fakegh.c) needs
# libmicrohttpd, in the Check runner and in the standalone build/tools/fakegh.
MHD_CFLAGS = $(shell pkg-config --cflags libmicrohttpd)
MHD_LIBS   = $(shell pkg-config --libs libmicrohttpd) -lpthread
CHECK_LIBS += $(MHD_LIBS)

$(BUILD)/tools/fakegh: tests/tools/fakegh.c tests/support/fakegh.c tests/support/fakegh.h $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(MHD_CFLAGS) -Itests -o $@ tests/tools/fakegh.c tests/support/fakegh.c \
	      $(LIBA) $(SANLD) $(PKG_LIBS) $(MHD_LIBS)

# `make bench-github-ops` (part of `make bench`): API requests per operation,
# counted at the fake server, against the issue 6 budget.
.PHONY: bench-github-ops
BENCH_TARGETS += bench-github-ops
bench-github-ops: $(BUILD)/tools/ghbench
	$(BUILD)/tools/ghbench

# `make bench-github` (part of `make bench`, not of `make check`; issue 39
# item 6): N concurrent holders on the fake GitHub under libfaketime, the
# requests per held lease-hour and the leases one repository can hold at once
# on GITHUB_TOKEN's budgets (scripts/bench-github.py; about a minute).
#   make bench-github BENCH_GITHUB_N=30 BENCH_GITHUB_HOLD=1800
BENCH_GITHUB_N     ?= 25
BENCH_GITHUB_HOLD  ?= 1200
BENCH_GITHUB_SPEED ?= 20
.PHONY: bench-github
BENCH_TARGETS += bench-github
bench-github: $(BIN) $(BUILD)/tools/fakegh
	@python3 scripts/bench-github.py $(BIN) $(BUILD) $(BENCH_GITHUB_N) $(BENCH_GITHUB_HOLD) \
	    $(BENCH_GITHUB_SPEED)

# `make bench-deadlines` (part of `make bench`, issue 24): the wall time of
# commands under injected faults (--timeout and --wait hold).
.PHONY: bench-deadlines
BENCH_TARGETS += bench-deadlines
bench-deadlines: $(BUILD)/tools/fakegh $(BIN)
	sh scripts/bench-deadlines.sh $(BUILD)

$(BUILD)/tools/ghbench: tests/tools/ghbench.c tests/support/fakegh.c tests/support/fakegh.h $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(MHD_CFLAGS) -Itests -o $@ tests/tools/ghbench.c tests/support/fakegh.c \
	      $(LIBA) $(SANLD) $(PKG_LIBS) $(MHD_LIBS)
