# Fuzzing (libFuzzer + ASan + UBSan, clang). `make fuzz` runs each target for
# FUZZ_SECONDS (60); CI runs `make fuzz FUZZ_SECONDS=10`. Seed corpora are in
# tests/fuzz/corpus/<target>/; new findings go to build-fuzz/corpus (not committed).
FUZZ_SECONDS ?= 60
FUZZ_CC      ?= clang
FUZZ_FLAGS   := -std=c11 -D_POSIX_C_SOURCE=200809L -g -O1 -fsanitize=fuzzer,address,undefined \
                -fno-sanitize-recover=all -Ilib/include -Ilib -DREFLEASE_VERSION=\"$(VERSION)\"
FUZZ_TARGETS := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_LIB_SRC := $(filter-out migrations/%,$(LIB_SRC))

.PHONY: fuzz fuzz-build
fuzz-build: $(FUZZ_TARGETS:%=build-fuzz/fuzz_%)

build-fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(LIB_SRC)
	@mkdir -p build-fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) $(PKG_CFLAGS) -o $@ $< $(FUZZ_LIB_SRC) $(wildcard migrations/*.c) $(PKG_LIBS)

fuzz: deps
	@$(MAKE) --no-print-directory fuzz-build
	@set -e; for t in $(FUZZ_TARGETS); do \
	  mkdir -p build-fuzz/corpus/$$t; \
	  echo "fuzz: $$t for $(FUZZ_SECONDS) s"; \
	  if ! build-fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -max_len=20000 -print_final_stats=1 \
	       build-fuzz/corpus/$$t tests/fuzz/corpus/$$t > build-fuzz/$$t.log 2>&1; then \
	    tail -40 build-fuzz/$$t.log; echo "fuzz: $$t FAILED"; exit 1; fi; \
	  grep -E 'stat::number_of_executed_units' build-fuzz/$$t.log; \
	done
