# Remote backend: `make bench-remote` (part of `make bench`) times acquire and
# heartbeat on git:// and http:// servers it starts on 127.0.0.1, next to the
# git CLI's verified write. remotebench links the test support that starts
# the servers (tests/support/gitserver.c, testrepo.c).
.PHONY: bench-remote
BENCH_TARGETS += bench-remote
bench-remote: $(BUILD)/tools/remotebench
	$(BUILD)/tools/remotebench

$(BUILD)/tools/remotebench: tests/tools/remotebench.c tests/support/gitserver.c \
                            tests/support/gitserver.h tests/support/testrepo.c $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests -o $@ tests/tools/remotebench.c tests/support/gitserver.c \
	      tests/support/testrepo.c $(LIBA) $(SANLD) $(PKG_LIBS)
