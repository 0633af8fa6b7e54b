# Recall: build, test, evaluate, benchmark.
GO       ?= go
BIN      ?= bin/recall
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X github.com/recallhq/recall/commands.Version=$(VERSION)
RACE_PKGS := ./engine/ ./engine/index/... ./engine/source/... ./engine/query/... ./engine/rank/... ./engine/render/... ./engine/live/... ./engine/vectors/... ./commands/... ./lsp/...

.PHONY: all build test test-go test-race test-editors test-live check-tree eval bench fuzz vsix vscode-screenshot clean clean-cache
FUZZTIME ?= 30s
FUZZ_TARGETS := ./engine/query:FuzzParse ./engine/tokens:FuzzSplit ./engine/render:FuzzChatML \
	./engine:FuzzDecodeCursor ./engine:FuzzSearch ./commands:FuzzDecodeParams ./engine/embed:FuzzTokenize

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) .

# Where the tests keep what they download and build once (Neovims, OpenCode,
# code-server, ocgen, artefacts): one directory, removed by make clean-cache.
TEST_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/recall-test

# Everything CI runs, then a check that no test changed the checkout: git
# status after the tests must be what it was before them (tests write to
# the cache or a temp dir, never to tracked files or new untracked ones).
test:
	@mkdir -p $(TEST_CACHE) && (git status --porcelain=v1 --untracked-files=all 2>/dev/null || true) >$(TEST_CACHE)/tree-before.txt
	$(MAKE) test-go test-race test-editors test-live
	@$(MAKE) --no-print-directory check-tree

check-tree:
	@if ! git rev-parse --git-dir >/dev/null 2>&1; then echo "check-tree: not a git checkout; nothing to compare"; exit 0; fi; \
	git status --porcelain=v1 --untracked-files=all >$(TEST_CACHE)/tree-after.txt; \
	touch $(TEST_CACHE)/tree-before.txt; \
	if ! cmp -s $(TEST_CACHE)/tree-before.txt $(TEST_CACHE)/tree-after.txt; then \
		echo "check-tree: the tests changed the checkout (git status before < and after >); write artefacts to \$$XDG_CACHE_HOME/recall-test or a temp dir, or add them to .gitignore:"; \
		diff $(TEST_CACHE)/tree-before.txt $(TEST_CACHE)/tree-after.txt; exit 1; \
	fi; echo "check-tree: git status unchanged by the tests"

test-go:
	$(GO) vet ./...
	$(GO) test -count=1 ./...

test-race:
	$(GO) test -count=1 -race -short $(RACE_PKGS)

# Each editor client against the freshly built server, in its real host:
# Neovim (Debian's), OpenCode (npm opencode-ai, driven by tools/ocgen),
# VS Code (code-server in headless Chromium). Each script installs what it
# needs and prints its phases' timings.
EDITOR_TESTS := editors/nvim/test/run.sh editors/opencode/test/run.sh editors/vscode/test/e2e.sh
# The clients reach recall lsp's shared daemon as users' editors do; a short
# idle time lets the daemons the tests start exit soon after them.
export RECALL_DAEMON_IDLE ?= 15s
test-editors: build
	@for t in $(EDITOR_TESTS); do \
		echo "== $$t"; start=$$(date +%s); \
		RECALL_BIN=$(CURDIR)/$(BIN) bash "$$t" || exit 1; \
		echo "== $$t took $$(( $$(date +%s) - start ))s"; \
	done

# The real OpenCode writes sessions while recall lsp keeps syncing; the
# index kept live must equal a fresh rebuild.
test-live: build
	RECALL_BIN=$(CURDIR)/$(BIN) OCGEN_DIR=$(CURDIR)/tools/ocgen bash test/live-writer.sh

# The VS Code extension: one platform .vsix per target with the server
# inside, plus a target-less one (editors/vscode/dist/).
vsix:
	editors/vscode/build.sh

# The VS Code e2e test, also refreshing the screenshots committed with
# editors/vscode/README.md (a plain run writes only to its cache dir).
vscode-screenshot: build
	RECALL_BIN=$(CURDIR)/$(BIN) RECALL_E2E_SCREENSHOT=$(CURDIR)/editors/vscode/screenshot.png \
		RECALL_E2E_BLAME_SCREENSHOT=$(CURDIR)/editors/vscode/blame.png bash editors/vscode/test/e2e.sh

# Ranking quality on the public corpus (testdata/corpus).
eval:
	$(GO) test -count=1 -run TestPublicEval -v ./engine/eval/ -args -eval.v

# Speed and memory on a large cloned corpus (not part of CI). SCALE=1: the
# growth table over ~2k, ~8k and ~30k-session histories (SCALE=big adds
# ~150k), written into docs/benchmarks.md.
bench:
	SCALE=$(SCALE) bash .ci/bench.sh

# Each fuzz target for FUZZTIME (go test runs their seed corpora in CI).
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; fn=$${t##*:}; \
		echo "== $$fn ($$pkg, $(FUZZTIME))"; \
		$(GO) test $$pkg -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) || exit 1; \
	done

clean:
	rm -rf bin

# The tests' caches: $(TEST_CACHE), and the system temp directory's from
# before they moved there (recall-e2e-cache, ocgen-cache).
clean-cache:
	rm -rf $(TEST_CACHE) $${TMPDIR:-/tmp}/recall-e2e-cache $${TMPDIR:-/tmp}/ocgen-cache
