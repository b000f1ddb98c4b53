# Shortcuts for the project's checks (see README.md, "Run the tests").
#
#   make test                  go test ./... (needs qemu-user and the cross
#                              toolchains; bash .ci/run installs them)
#   make fuzz                  every fuzz target for FUZZTIME each (3m:
#                              about an hour for all of them)
#   make fuzz FUZZ=ELF         only the targets whose name matches
#   make fuzz FUZZTIME=30s     shorter runs
#   make ci                    bash .ci/run: everything CI runs
#
# A failing fuzz input is written under the package's testdata/fuzz/ and
# stops the run; commit it with the fix as a regression seed.

FUZZTIME ?= 3m
FUZZ ?=

.PHONY: test fuzz ci

test:
	go test ./...

fuzz:
	FUZZTIME=$(FUZZTIME) bash .ci/fuzz $(FUZZ)

ci:
	bash .ci/run
