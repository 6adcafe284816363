# The GitHub Action and workflows, validated offline (issue 7): `make lint`
# runs lint-action too (an extra prerequisite of lint; the Makefile's recipe is
# unchanged). The validators are pinned in package.json/package-lock.json and
# installed by `npm ci` into node_modules (gitignored) when missing.
.PHONY: lint-action
lint: lint-action

lint-action:
	@sh scripts/lint-action.sh
