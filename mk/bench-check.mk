# `make bench-check` (issue 26; not part of `make bench`: about 25 minutes on
# the 2-core machine): `make check-run` on this tree against BENCH_CHECK_BASE in
# one sitting, each built first in a worktree of its own (scripts/bench-check.sh).
#   make bench-check BENCH_CHECK_BASE=efc38ef
.PHONY: bench-check
BENCH_CHECK_BASE ?= efc38ef
bench-check:
	@sh scripts/bench-check.sh $(BENCH_CHECK_BASE)
