# `make deb` (issue 41): build/deb/reflease_*.deb, libreflease0_*.deb and
# libreflease-dev_*.deb with Debian's tooling (debian/, debhelper), in a copy
# of the tree; lintian must find no error (scripts/deb.sh).
.PHONY: deb
deb:
	sh scripts/deb.sh $(VERSION) $(BUILD)/deb
