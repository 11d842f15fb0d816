# pyaichat: `make run` sets up and starts pyaichat; `make test` runs every test.
#
# PYTHON=/path/to/python3.X builds against that interpreter (3.10 or newer)
# instead of the system's python3-embed; its static libpython is linked when
# it has one (PYAICHAT_LINK=shared links the shared one).
SHELL := /bin/bash
PYTHON ?=

# The Go that scripts/deps.sh found (1.21 or newer), first on PATH for the
# tests that run go themselves; it fetches the toolchain go.mod names.
WITHGO = PATH="$$(dirname "$$(scripts/deps.sh --which-go)"):$$PATH" GOTOOLCHAIN=auto
GO = $(WITHGO) go
# go run TOOL@VERSION picks the toolchain of TOOL's go.mod, not ours, and
# would fetch a second one (staticcheck's go1.26.0); naming the one this
# module builds with keeps it to one.
TOOLGO = $(WITHGO) GOTOOLCHAIN="$$($(GO) env GOVERSION)" go

# The chosen Python's flags, passed to cgo explicitly: they are part of Go's
# build cache key, so builds for two Pythons never mix (see pybridge/pkgconfig.go).
PYCFLAGS = $(shell scripts/python-flags.sh $(PYTHON) | sed -n 1p)
PYLDFLAGS = $(shell scripts/python-flags.sh $(PYTHON) | sed -n 2p)
PYEXE = $(shell scripts/python-flags.sh $(PYTHON) | sed -n 3p)
PYTAGS = pyaichat_python
CGOENV = CGO_ENABLED=1 CGO_CFLAGS="-O2 -g $(PYCFLAGS)" CGO_LDFLAGS="-O2 -g $(PYLDFLAGS)" $(CGOALLOW) \
	GOFLAGS="$(GOFLAGS) -tags=$(PYTAGS) -ldflags=-X=github.com/pyaichat/pyaichat/pybridge.buildPython=$(PYEXE)"

.PHONY: deps browser pyflags assets build run test test-cpython test-under-load test-pythons fresh-debian fresh-debian-test bench bench-repl bench-speed bench-serve vet

# Quiet: it says only what it installs or downloads, so that the README's
# `scripts/deps.sh && make run` says which Go builds pyaichat once.
deps:
	@./scripts/deps.sh --quiet

# Chromium, for the serve page's browser test only (building and running
# pyaichat need no browser).
browser:
	@./scripts/deps.sh --browser

pyflags: deps
	@scripts/python-flags.sh $(PYTHON) >/dev/null

# The xterm.js files `pyaichat serve` embeds (gitignored), fetched from the
# npm registry at the versions its package-lock.json pins when missing or
# older than the lock file; go:embed needs them before anything compiles.
WEBVENDOR = cmd/pyaichat/serve/web/vendor/.stamp
$(WEBVENDOR): cmd/pyaichat/serve/package.json cmd/pyaichat/serve/package-lock.json
	@scripts/web-assets.sh

assets: deps $(WEBVENDOR)

build: pyflags assets
	$(CGOENV) $(GO) build -o pyaichat ./cmd/pyaichat

run: build
	./pyaichat

# gofmt; go vet, with cgo and without (a build without cgo compiles and stops
# at start-up: see pybridge/nocgo.go); staticcheck; and no function above
# cyclomatic complexity 15 outside tests; and every package but the
# end-to-end tests vetted for macOS without cgo, which keeps the Linux-only
# parts behind build tags (docs/porting.md).
vet: deps assets
	@unformatted="$$(gofmt -l .)"; test -z "$$unformatted" || { echo "$$unformatted"; echo "gofmt: files above need formatting"; exit 1; }
	$(CGOENV) $(GO) vet ./...
	CGO_ENABLED=0 $(GO) vet ./...
	GOOS=darwin CGO_ENABLED=0 $(GO) vet $$($(GO) list ./... | grep -v /e2e)
	$(CGOENV) $(TOOLGO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
	$(TOOLGO) run github.com/fzipp/gocyclo/cmd/gocyclo@v0.6.0 -over 15 -ignore '_test.go$$' .

# Every test: vet, unit tests over the real interpreter, the fake OpenAI
# server, transcripts against python3 -i of the same version, PTY end-to-end
# tests of the binary, then pybridge again under the race detector, the
# build without cgo, and the Python versions matrix. scripts/test.sh runs
# every step even when one fails and lists the failures at the end.
test: pyflags assets browser
	$(CGOENV) USER_GOFLAGS="$(GOFLAGS)" $(WITHGO) scripts/test.sh

# make test three times in a row with a busy loop on every core (RUNS=N).
RUNS ?= 3
test-under-load:
	scripts/test-under-load.sh $(RUNS) $(if $(PYTHON),PYTHON=$(PYTHON))

# The other CPythons on this machine (pyenv's): each builds, and passes the
# interpreter's own tests and the e2e suite against its own python3 -i.
test-pythons: deps assets
	$(WITHGO) ./scripts/test-pythons.sh

# The README's first command on a minimal Debian 12 in a chroot (as root).
fresh-debian:
	./scripts/fresh-debian.sh

# The same, then the README's second command there (RUNS=3: three times
# with a busy loop per core).
fresh-debian-test:
	RUNS=$(RUNS) ./scripts/fresh-debian.sh --test

# Every benchmark; the figures go into docs/performance.md (its latest-run
# tables, with the date, the machine and the commit).
bench: pyflags assets browser
	set -o pipefail; { $(CGOENV) $(GO) test -run '^$$' -bench . -benchtime 5x ./e2e && \
	  $(CGOENV) $(GO) test -run '^$$' -bench . ./capabilities ./agent/... ./cmd/pyaichat/sessionlog; } | tee bench.out
	$(WITHGO) scripts/bench-doc.sh bench.out

# pyaichat beside python3 -q -i under a PTY: first prompt, RSS, 1+1 round trip.
bench-repl: pyflags assets
	$(CGOENV) $(GO) test -count=1 -run '^$$' -bench '^Benchmark((Print)?VersusPython|LogCost)$$' -benchtime 7x ./e2e

# Python's speed in pyaichat beside python3: pure-Python workloads run as a
# FILE, the light line and key echo under a PTY, private memory at idle.
bench-speed: pyflags assets
	$(CGOENV) $(GO) test -count=1 -run '^$$' -bench '^BenchmarkSpeedVersusPython$$' -benchtime 5x ./e2e

# pyaichat serve: key-to-echo over the WebSocket, a Python loop's output
# through the server beside a plain PTY, the server's memory per idle session.
# CPython's own test_threading, test_atexit, test_signal and test_cmd_line
# with pyaichat as the interpreter, case by case beside python3, for each
# pyenv CPython (scripts/cpython-tests.sh; minutes per version).
test-cpython:
	$(WITHGO) scripts/cpython-tests.sh

bench-serve: pyflags assets browser
	$(CGOENV) $(GO) test -count=1 -run '^$$' -bench '^BenchmarkServe' -benchtime 5x ./e2e

# Installing and packaging (scripts/package.sh): the binary, the bash, zsh
# and fish completions, the man page and the licences of what the binary
# links in. make install PREFIX=DIR [DESTDIR=STAGING] (make uninstall
# removes the same files); make deb writes pyaichat_VERSION_ARCH.deb and
# make dist pyaichat-VERSION-linux-ARCH.tar.gz here; make check-deb
# checks the .deb's metadata and contents.
PREFIX ?= /usr/local
DESTDIR ?=
PACKAGE = $(CGOENV) $(WITHGO) scripts/package.sh

.PHONY: install uninstall deb dist check-deb
install: build
	$(PACKAGE) install "$(DESTDIR)" "$(PREFIX)"

uninstall:
	scripts/package.sh uninstall "$(DESTDIR)" "$(PREFIX)"

deb: build
	$(PACKAGE) deb

dist: build
	$(PACKAGE) dist

check-deb: deb
	$(PACKAGE) check-deb "$$(ls -t pyaichat_*.deb | head -n1)"

# A CPython built for speed (scripts/python-fast.sh): make python-fast
# builds the embedded version from the distribution's source with PGO and
# LTO into a cache directory, once (about 16 minutes on 2 CPUs); FAST=1
# links it (make build FAST=1, make deb FAST=1; the cgo link then runs
# gcc's link-time optimisation over libpython, a few minutes more). Not
# part of make run or make test.
FAST ?=
.PHONY: python-fast
python-fast:
	scripts/python-fast.sh

ifeq ($(FAST),1)
FASTDIR := $(shell scripts/python-fast.sh --dir)
PYCFLAGS = $(shell sed -n 1p "$(FASTDIR)/flags" 2>/dev/null)
PYLDFLAGS = $(shell sed -n 2p "$(FASTDIR)/flags" 2>/dev/null)
PYEXE = $(shell sed -n 3p "$(FASTDIR)/flags" 2>/dev/null)
# pybridge/fastlink.go: the final link's LTO in one partition.
PYTAGS = pyaichat_python,pyaichat_fast
CGOALLOW = CGO_LDFLAGS_ALLOW='-flto-partition=none'
pyflags: $(FASTDIR)/flags
$(FASTDIR)/flags: scripts/python-fast.sh
	scripts/python-fast.sh
endif
