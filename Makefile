# reflease — leases stored as git refs.
# `make demo` runs the main job on a local store; `make check` runs every test.

PREFIX   ?= /usr/local
LIBDIR   ?= $(PREFIX)/lib
DESTDIR  ?=
CC       ?= cc
PKGS     := libgit2 jansson libcurl
# libcurl is compiled against but not linked (issue 43): lib/store/http.c
# dlopen()s it, by the soname of the development library, on the first
# github: store, so local: and remote: commands never load it or its tree.
LINK_PKGS := libgit2 jansson
CURL_SONAME := $(shell objdump -p "$$(pkg-config --variable=libdir libcurl)/libcurl.so" 2>/dev/null | \
                 awk '$$1 == "SONAME" { print $$2 }')
VERSION  := 0.1.0

WARN := -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -Wpedantic -Wshadow \
        -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 -Wvla
OPT  ?= -O2 -g

BUILD := build
# Shell tests at a time (tests/shell/run.sh): they mostly wait on processes,
# clocks and servers, so 4 fit the 2-core machine (at 6, on a machine of the
# kind where fork and exec cost more, the CPUs were busy throughout, 1.8 of 2,
# and a run fence with a 6 s TTL lost its lease: docs/benchmarks.md); the
# instrumented builds spend CPU on every step, so 3. The quiet tests (real-time
# claims made by tests that use under one CPU) run 2 at a time after those,
# alone in the instrumented builds (their CPU time doubles or more).
SHELL_JOBS := 4
QUIET_JOBS := 2
ifeq ($(SANITIZE),1)
  SHELL_JOBS := 3
  QUIET_JOBS := 1
  BUILD := build-san
  OPT   := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
  SANLD := -fsanitize=address,undefined
endif
ifeq ($(COVERAGE),1)
  SHELL_JOBS := 3
  QUIET_JOBS := 1
  BUILD := build-cov
  OPT   := -O0 -g --coverage
  SANLD := --coverage
endif

PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS))
PKG_LIBS   = $(shell pkg-config --libs $(LINK_PKGS))
CHECK_CFLAGS = $(shell pkg-config --cflags check)
# libgit2 1.5 or newer (GIT_EOWNER, git_refdb ...; Debian 12 has 1.5.1): an
# older one stops the build at once, in one line, instead of a compiler error
# (issue 41: Ubuntu 22.04's libgit2-dev is 1.1.0). Not for the goals that
# compile nothing, and not when pkg-config finds no libgit2 (make deps and
# make check install it first).
LIBGIT2_MIN := 1.5
ifneq ($(filter-out clean deps lint uninstall deb,$(or $(MAKECMDGOALS),all)),)
  LIBGIT2_FOUND := $(shell pkg-config --modversion libgit2 2>/dev/null)
  ifneq ($(LIBGIT2_FOUND),)
    ifneq ($(shell pkg-config --atleast-version=$(LIBGIT2_MIN) libgit2 && echo ok),ok)
      $(error libgit2 $(LIBGIT2_FOUND) found, reflease needs libgit2 $(LIBGIT2_MIN) or newer: install a newer libgit2-dev, or use the prebuilt release reflease-$(VERSION)-linux-$(shell uname -m).tar.gz (README.md "Installing"), which needs no libgit2)
    endif
  endif
endif
CHECK_LIBS   = $(shell pkg-config --libs check)
CPPFLAGS += -DREFLEASE_VERSION=\"$(VERSION)\"
CPPFLAGS += $(if $(CURL_SONAME),-DREFLEASE_CURL_SONAME=\"$(CURL_SONAME)\")
INCLUDES = -Ilib/include -Ilib
ALL_CFLAGS = $(WARN) $(OPT) -fPIC $(INCLUDES) $(CPPFLAGS) $(PKG_CFLAGS) $(CFLAGS)

LIB_SRC  := $(sort $(wildcard lib/*/*.c) $(wildcard migrations/*.c))
CMD_SRC  := $(sort $(wildcard cmd/reflease/*.c))
TEST_SRC := $(sort $(wildcard tests/test_*.c))
SUPP_SRC := $(sort $(wildcard tests/support/*.c))
TOOL_SRC := $(sort $(wildcard tests/tools/*.c))

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
CMD_OBJ  := $(CMD_SRC:%.c=$(BUILD)/%.o)
# lib/util: the tier the library and the CLI share (issue 26, as curl's
# lib/curlx): compiled into libreflease and linked into the CLI itself, which
# so needs nothing from the library but its exported API.
UTIL_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(sort $(wildcard lib/util/*.c)))
# The CLI's own formatting is unit-tested too (tests/test_cli.c).
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o) $(SUPP_SRC:%.c=$(BUILD)/%.o) $(BUILD)/tests/runner.o \
            $(BUILD)/cmd/reflease/gha_escape.o $(BUILD)/cmd/reflease/cli_env.o
TOOLS    := $(TOOL_SRC:tests/tools/%.c=$(BUILD)/tools/%)

LIBA   := $(BUILD)/libreflease.a
LIBSO  := $(BUILD)/libreflease.so.0
BIN    := $(BUILD)/reflease
RUNNER := $(BUILD)/test_runner

# Tests run git commands that commit (commit-tree, commit): give them an
# identity on machines without one (a fresh Debian, a clean root, CI); an
# identity set in the environment wins.
export GIT_AUTHOR_NAME ?= reflease tests
export GIT_AUTHOR_EMAIL ?= tests@reflease.invalid
export GIT_COMMITTER_NAME ?= reflease tests
export GIT_COMMITTER_EMAIL ?= tests@reflease.invalid

.PHONY: all deps demo check check-run unit shell-tests coverage lint install uninstall clean
.DEFAULT_GOAL := all

all: $(BIN) $(LIBA) $(LIBSO) $(TOOLS)

deps:
	@sh scripts/install-deps.sh

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

# The layers show in the headers (issue 17): cmd/ sees the public API and
# lib/util only (-Ilib for "util/..."; scripts/lint-includes.sh refuses a
# cmd/ include of lib/lease or lib/store).
$(CMD_OBJ): INCLUDES = -Ilib/include -Ilib
# The library exports its public API only (issue 26): REFLEASE_EXTERN marks
# it in lib/include/reflease/; everything else is hidden (t_exports.sh).
$(LIB_OBJ): ALL_CFLAGS += -fvisibility=hidden

$(LIBA): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(LIBSO): $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,libreflease.so.0 -o $@ $^ $(SANLD) $(LDFLAGS) $(PKG_LIBS)

$(BIN): $(CMD_OBJ) $(UTIL_OBJ) $(LIBA)
	$(CC) -o $@ $(CMD_OBJ) $(UTIL_OBJ) $(LIBA) $(SANLD) $(LDFLAGS) $(PKG_LIBS)

$(BUILD)/tools/%: tests/tools/%.c $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIBA) $(SANLD) $(PKG_LIBS)

# The Check runner adds every tests/test_<module>.c's <module>_suite().
$(BUILD)/tests/suites.inc: $(TEST_SRC) Makefile
	@mkdir -p $(dir $@)
	@for f in $(TEST_SRC); do n=$${f#tests/test_}; echo "SUITE($${n%.c})"; done > $@.tmp && \
	  if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

$(BUILD)/tests/runner.o: tests/runner.c $(BUILD)/tests/suites.inc
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) -I$(BUILD)/tests -c $< -o $@

# The migration registry (migrations/README.md): one MIGRATION(NNNN) line per
# migrations/NNNN_<what>.c, in id order. Regenerated on every run but rewritten
# only when the list changes, so adding or removing a step rebuilds registry.o.
MIGRATION_SRC = $(sort $(wildcard migrations/[0-9][0-9][0-9][0-9]_*.c))
$(BUILD)/migrations/registry.inc: FORCE
	@mkdir -p $(dir $@)
	@for f in $(MIGRATION_SRC); do n=$${f#migrations/}; echo "MIGRATION($${n%%_*})"; done > $@.tmp && \
	  if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

$(BUILD)/migrations/registry.o: $(BUILD)/migrations/registry.inc
$(BUILD)/migrations/registry.o: INCLUDES += -I$(BUILD)/migrations

.PHONY: FORCE
FORCE:

# tests/support/suitefix.h declares every suite from the generated list.
$(BUILD)/tests/%.o: tests/%.c | $(BUILD)/tests/suites.inc
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) -Itests -I$(BUILD)/tests -MMD -MP -c $< -o $@

$(RUNNER): $(TEST_OBJ) $(LIBA)
	$(CC) -o $@ $(TEST_OBJ) $(LIBA) $(SANLD) $(CHECK_LIBS) $(PKG_LIBS)

# The README's commands: each first installs missing Debian packages.
demo: deps
	@$(MAKE) --no-print-directory all
	@sh scripts/demo.sh $(BIN)

check: deps
	@$(MAKE) --no-print-directory check-run

# The Check suites and the shell tests side by side (issue 26): both spend
# most of their time waiting on processes, servers and clocks, not on the CPUs.
check-run: all $(RUNNER)
	@$(MAKE) --no-print-directory -j2 unit shell-tests

unit: $(RUNNER) $(BIN)
	REFLEASE_BIN=$(abspath $(BIN)) REFLEASE_BUILD=$(abspath $(BUILD)) $(RUNNER)

shell-tests: $(BIN)
	@REFLEASE_TEST_JOBS=$${REFLEASE_TEST_JOBS:-$(SHELL_JOBS)} REFLEASE_QUIET_JOBS=$${REFLEASE_QUIET_JOBS:-$(QUIET_JOBS)} sh tests/shell/run.sh $(abspath $(BIN)) $(abspath $(BUILD))

COVERAGE_MIN ?= 95
coverage: deps
	@$(MAKE) --no-print-directory COVERAGE=1 check-run
	gcovr --root . --object-directory build-cov --filter 'lib/lease/primitives.c' --filter 'lib/lease/rotation.c' \
	      --filter 'lib/lease/runtime.c' --filter 'lib/lease/commit.c' --filter 'lib/lease/policy.c' \
	      --print-summary --fail-under-line $(COVERAGE_MIN) build-cov

LINT_SRC = $(LIB_SRC) $(CMD_SRC) $(TEST_SRC) $(SUPP_SRC) $(TOOL_SRC) tests/runner.c $(wildcard tests/fuzz/*.c) \
           $(wildcard tests/install/*.c lib/include/reflease/sys/*.h cmd/reflease/link/*.c) \
           $(wildcard lib/include/reflease/*.h lib/*/*.h cmd/reflease/*.h tests/*.h tests/support/*.h)
lint:
	clang-format --dry-run --Werror $(LINT_SRC)
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability --inline-suppr \
	         --suppress=missingIncludeSystem -Ilib/include -Ilib lib cmd migrations
	@if grep -nE '\b(sprintf|strcpy|strcat|strtok|atoi|gets)\(' $(LINT_SRC); then \
	  echo "lint: banned function (sprintf strcpy strcat strtok atoi gets)"; exit 1; fi
	@sh scripts/lint-extra.sh

# Shell completions (issue 41): generated by the CLI from its own command and
# option tables, so that they name exactly what it accepts.
COMPLETIONS := $(BUILD)/completions/reflease.bash $(BUILD)/completions/_reflease \
               $(BUILD)/completions/reflease.fish
$(BUILD)/completions/reflease.bash: $(BIN)
	@mkdir -p $(dir $@)
	$(BIN) completion bash >$@.tmp && mv $@.tmp $@
$(BUILD)/completions/_reflease: $(BIN)
	@mkdir -p $(dir $@)
	$(BIN) completion zsh >$@.tmp && mv $@.tmp $@
$(BUILD)/completions/reflease.fish: $(BIN)
	@mkdir -p $(dir $@)
	$(BIN) completion fish >$@.tmp && mv $@.tmp $@
BASHCOMPDIR = $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  = $(PREFIX)/share/zsh/site-functions
FISHCOMPDIR = $(PREFIX)/share/fish/vendor_completions.d
# Every file `make install` puts down: what `make uninstall` removes.
INSTALLED = $(PREFIX)/bin/reflease $(LIBDIR)/libreflease.a $(LIBDIR)/libreflease.so.0 \
            $(LIBDIR)/libreflease.so $(LIBDIR)/pkgconfig/reflease.pc \
            $(patsubst lib/%,$(PREFIX)/%,$(wildcard lib/include/reflease.h lib/include/reflease/*.h lib/include/reflease/sys/*.h)) \
            $(PREFIX)/share/man/man1/reflease.1 $(BASHCOMPDIR)/reflease $(ZSHCOMPDIR)/_reflease \
            $(FISHCOMPDIR)/reflease.fish

# (a distribution's package: PREFIX=/usr LIBDIR=/usr/lib/<multiarch>, debian/rules)
install: $(BIN) $(LIBA) $(LIBSO) $(COMPLETIONS)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PREFIX)/include/reflease/sys \
	           $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(PREFIX)/share/man/man1 \
	           $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR)
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/reflease
	install -m 644 $(LIBA) $(DESTDIR)$(LIBDIR)/libreflease.a
	install -m 644 $(LIBSO) $(DESTDIR)$(LIBDIR)/libreflease.so.0
	ln -sf libreflease.so.0 $(DESTDIR)$(LIBDIR)/libreflease.so
	install -m 644 lib/include/reflease.h $(DESTDIR)$(PREFIX)/include/reflease.h
	install -m 644 lib/include/reflease/*.h $(DESTDIR)$(PREFIX)/include/reflease/
	install -m 644 lib/include/reflease/sys/*.h $(DESTDIR)$(PREFIX)/include/reflease/sys/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    reflease.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/reflease.pc
	install -m 644 docs/reflease.1 $(DESTDIR)$(PREFIX)/share/man/man1/reflease.1
	install -m 644 $(BUILD)/completions/reflease.bash $(DESTDIR)$(BASHCOMPDIR)/reflease
	install -m 644 $(BUILD)/completions/_reflease $(DESTDIR)$(ZSHCOMPDIR)/_reflease
	install -m 644 $(BUILD)/completions/reflease.fish $(DESTDIR)$(FISHCOMPDIR)/reflease.fish

# Removes what `make install` put down (the same PREFIX, LIBDIR and DESTDIR),
# and the directories of reflease's own headers once empty; nothing else.
uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	rmdir $(DESTDIR)$(PREFIX)/include/reflease/sys $(DESTDIR)$(PREFIX)/include/reflease 2>/dev/null || true

clean:
	rm -rf build build-san build-cov build-fuzz

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# Feature fragments (model checking, fuzzing, benchmarks, lint extras) live in mk/.
-include $(sort $(wildcard mk/*.mk))
