# `make bundle`: build/bundle/ = bin/reflease + lib/ (every shared library it
# needs but glibc's), found through RPATH $ORIGIN/../lib: the GitHub Action's
# cached artifact, which runs on a runner without libgit2, jansson or libcurl
# installed (issue 16; scripts/bundle.sh checks the copy). libcurl is not
# linked but dlopen()ed (issue 43): it is named to bundle.sh, which copies it
# and its dependencies too.
BUNDLE := $(BUILD)/bundle
.PHONY: bundle
bundle: $(BUNDLE)/bin/reflease

# DT_RPATH, not DT_RUNPATH (--disable-new-dtags): it is searched for the
# libraries' own dependencies too (libgit2 -> mbedTLS ...).
# libgit2, jansson and what they need are linked from their static archives
# where the system has them, and the CA bundle's parse waits for the first TLS
# handshake (issue 43: scripts/static-link.sh, cmd/reflease/link/; a local:
# command starts in about 0.6 of the time: docs/benchmarks.md "Start-up").
CA_DEFER_OBJ := $(BUILD)/cmd/reflease/link/git_ca_defer.o
$(BUNDLE)/bin/reflease: $(CMD_OBJ) $(UTIL_OBJ) $(LIBA) $(CA_DEFER_OBJ) scripts/bundle.sh \
                        scripts/static-link.sh
	@mkdir -p $(BUILD)
	$(CC) -o $(BUILD)/reflease-rpath $(CMD_OBJ) $(UTIL_OBJ) $(LIBA) $(SANLD) \
	      $$(sh scripts/static-link.sh $(CA_DEFER_OBJ)) \
	      -Wl,--disable-new-dtags -Wl,-rpath,'$$ORIGIN/../lib'
	sh scripts/bundle.sh $(BUILD)/reflease-rpath $(BUNDLE) \
	   $(if $(CURL_SONAME),"$$(pkg-config --variable=libdir libcurl)/$(CURL_SONAME)")
	@rm -f $(BUILD)/reflease-rpath

# Issue 16's figures in docs/benchmarks.md (make bench; need root and the
# Debian mirror): a cold Debian 13 make check, and the Action's set-up on a
# cache hit and a miss in a clean Debian root.
BENCH_TARGETS += bench-debian13 bench-action
.PHONY: bench-debian13 bench-action
bench-debian13:
	@sh scripts/bench-debroot.sh debian13 $(BUILD)
bench-action: $(BIN) $(BUILD)/tools/fakegh
	@sh scripts/bench-debroot.sh action $(BUILD)
