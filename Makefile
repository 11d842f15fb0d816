# pyaichat: `make run` sets up and starts pyaichat; `make test` runs every test.
SHELL := /bin/bash
export PATH := $(PATH):/usr/local/go/bin
GO ?= go

.PHONY: deps build run test bench bench-repl vet

deps:
	@./scripts/deps.sh

build: deps
	$(GO) build -o pyaichat ./cmd/pyaichat

run: build
	./pyaichat

vet:
	@test -z "$$(gofmt -l . | tee /dev/stderr)" || { echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet ./...

# Every test: unit tests over the real interpreter, the fake OpenAI server,
# transcripts against /usr/bin/python3 and PTY end-to-end tests of the binary,
# then pybridge again under the race detector.
test: deps vet
	$(GO) test -count=1 ./...
	$(GO) test -count=1 -race ./pybridge

bench: deps
	$(GO) test -run '^$$' -bench . -benchtime 5x ./e2e
	$(GO) test -run '^$$' -bench . ./capabilities ./agent

# pyaichat beside python3 -q -i under a PTY: first prompt, RSS, 1+1 round trip.
bench-repl: deps
	$(GO) test -count=1 -run '^$$' -bench VersusPython -benchtime 7x ./e2e
