# The runtime's concurrency test execs build/tools/contend: build the tools
# with the test runner.
$(RUNNER): $(TOOLS)
