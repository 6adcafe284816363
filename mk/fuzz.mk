# Fuzzing (libFuzzer + ASan + UBSan, clang). `make fuzz` runs each target for
# FUZZ_SECONDS (60); `make fuzz-ci` (CI) runs each for 10 s. Targets:
# tests/fuzz/fuzz_<name>.c (payload/commit-message parser, name/namespace
# validator, GitHub client response handling); seed corpora are committed in
# tests/fuzz/corpus/<name>/; new findings go to build-fuzz/corpus (not
# committed); a crash leaves build-fuzz/<name>.log and the crashing input in
# build-fuzz/. The recipe is POSIX sh (make runs /bin/sh, dash on Debian).
FUZZ_SECONDS ?= 60
FUZZ_CC      ?= clang
FUZZ_FLAGS   := -std=c11 -D_POSIX_C_SOURCE=200809L -g -O1 -fsanitize=fuzzer,address,undefined \
                -fno-sanitize-recover=all -Ilib/include -Ilib -DREFLEASE_VERSION=\"$(VERSION)\"
FUZZ_TARGETS := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))

.PHONY: fuzz fuzz-ci fuzz-build fuzz-run
fuzz-build: $(FUZZ_TARGETS:%=build-fuzz/fuzz_%)

build-fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(LIB_SRC) $(wildcard lib/*/*.h lib/include/reflease/*.h) \
                   $(BUILD)/migrations/registry.inc
	@mkdir -p build-fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) -I$(BUILD)/migrations $(PKG_CFLAGS) -o $@ $< $(LIB_SRC) $(PKG_LIBS)

fuzz: deps
	@$(MAKE) --no-print-directory fuzz-run FUZZ_SECONDS=$(FUZZ_SECONDS)

fuzz-ci: deps
	@$(MAKE) --no-print-directory fuzz-run FUZZ_SECONDS=10

fuzz-run: fuzz-build
	@set -e; for t in $(FUZZ_TARGETS); do \
	  mkdir -p build-fuzz/corpus/$$t; \
	  echo "fuzz: $$t for $(FUZZ_SECONDS) s"; \
	  if ! build-fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -max_len=20000 -timeout=10 \
	       -print_final_stats=1 -artifact_prefix=build-fuzz/$$t- \
	       build-fuzz/corpus/$$t tests/fuzz/corpus/$$t > build-fuzz/$$t.log 2>&1; then \
	    tail -40 build-fuzz/$$t.log; echo "fuzz: $$t FAILED"; exit 1; fi; \
	  grep -E 'stat::number_of_executed_units' build-fuzz/$$t.log; \
	done
