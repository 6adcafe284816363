# Model checking (issue 10): SPIN on docs/model/lease.pml, every property on
# the correct model and a counterexample for every broken variant.
# Runs in a temporary directory; `MODEL_KEEP=DIR make model` keeps outputs.
.PHONY: model model-run

model: deps
	@$(MAKE) --no-print-directory model-run

model-run:
	@sh scripts/model-check.sh docs/model/lease.pml
	@sh scripts/model-check.sh docs/model/sets.pml
	@sh scripts/model-check.sh docs/model/slots.pml
	@sh scripts/model-check.sh docs/model/fair.pml
	@sh scripts/model-check.sh docs/model/locks.pml
	@sh scripts/model-check.sh docs/model/setlocks.pml
