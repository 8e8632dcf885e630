# emuprof: the two commands for a fresh machine are `make demo` and `make test`.
GO ?= go
EMUPROF := ./emuprof

.PHONY: all deps build guests demo test vet-portable bench clean

all: build

# Installs what emuprof needs when it is missing: libunicorn (Unicorn 2), gcc,
# musl-gcc (musl-tools) and the Debian programs the tests compare against.
deps:
	@scripts/deps.sh

build:
	$(GO) build -o $(EMUPROF) ./cmd/emuprof

guests:
	$(MAKE) -C testdata -j2

# A demo: run a guest natively-identically, then profile it.
demo: deps build guests
	$(EMUPROF) run --stats -- testdata/bin/glibc-static/hello
	$(EMUPROF) trms --out out/demo -- testdata/bin/glibc-static-O0/tolower

# All tests: unit tests on hand-written traces, guests compared with native runs,
# real Debian programs compared with native runs.
test: deps build guests vet-portable
	$(GO) vet ./...
	$(GO) test -timeout 40m ./...

# Everything but the cgo binding and the CLI must stay portable (macOS, no cgo).
vet-portable:
	GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 $(GO) vet $$($(GO) list ./... | grep -v -e /emu$$ -e /session$$ -e /cmd/)

bench: build guests
	bench/run.sh

clean:
	rm -f $(EMUPROF)
	$(MAKE) -C testdata clean
