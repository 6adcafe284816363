# `make release` (issue 41): build/release/reflease-$(VERSION)-linux-$(ARCH).tar.gz
# (the bundle with the man page, completions and a README) and SHA256SUMS,
# made by scripts/release.sh after scripts/bundle-check.sh (glibc symbols up
# to GLIBC_2.35, no host library but glibc's). Releases are built on Debian 12
# (.github/workflows/release.yml: debian:12 on x86_64 and aarch64).
ARCH        := $(shell uname -m)
RELEASE_DIR := $(BUILD)/release
.PHONY: release
release: $(BUNDLE)/bin/reflease $(COMPLETIONS) scripts/release.sh scripts/bundle-check.sh \
         scripts/release-README.in docs/reflease.1
	sh scripts/release.sh $(VERSION) $(ARCH) $(BUNDLE) $(BUILD)/completions $(RELEASE_DIR)
