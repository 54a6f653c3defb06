# Parlance developer and operator entry points. On a fresh Debian machine:
#   make serve   install everything (Debian packages + npm), build, start the server on embedded defaults
#   make test    install everything, build, lint, typecheck and run the whole test suite
# Both start with `make setup`, which is idempotent: a second run with nothing changed does no work.

SHELL := /bin/bash
.DEFAULT_GOAL := help

NPM_STAMP := node_modules/.parlance-setup-stamp
NATIVE_STAMP := node_modules/.parlance-native-stamp
NATIVE_INPUTS := $(shell find native -name build -prune -o -type f -print 2>/dev/null)
BUILD_STAMP := dist/.parlance-build-stamp
# Narrowband (8 kHz) adaptation of the default English model, estimated from Debian's real recordings.
NARROWBAND_MLLR := build/adaptation/en-us-narrowband.mllr
BUILD_INPUTS := $(shell find src -type d -o -name '*.ts' -not -name '*.test.ts' 2>/dev/null) tsconfig.json tsconfig.build.json
# The web console (console/, Vite) builds into dist-console/, which the server serves at /.
CONSOLE_STAMP := dist-console/.parlance-console-stamp
CONSOLE_INPUTS := $(shell find console 2>/dev/null)

# Debian package groups to skip (scripts/debian-packages.txt tags), e.g. make setup DEBIAN_WITHOUT=test (Dockerfile)
DEBIAN_WITHOUT ?=

# Extra arguments for `make serve`, e.g. make serve SERVE_ARGS="--port 9000 --data-dir /var/lib/parlance"
SERVE_ARGS ?=

.PHONY: help setup deps debian-packages node-modules native build adaptation serve test lint typecheck settings-table readme clean

help:
	@echo "make serve      install everything, build and start the server (PARLANCE_* settings apply; SERVE_ARGS=...)"
	@echo "make test       install everything, build, lint, typecheck and run the whole test suite"
	@echo "make setup      install Debian packages and npm dependencies, then build (idempotent)"
	@echo "make build      compile TypeScript to dist/, the web console to dist-console/ and the native addons"
	@echo "make lint       eslint and the Prettier check (npm run format rewrites)"
	@echo "make typecheck  tsc --noEmit over src, test and bench"
	@echo "make settings-table  regenerate the settings table of docs/guide/configuration.md from src/config/settings.ts"
	@echo "make clean      remove dist/ and the setup stamp (never the data directory)"

setup: deps build adaptation

deps: debian-packages node-modules

debian-packages:
	@bash scripts/install-debian-packages.sh $(if $(DEBIAN_WITHOUT),--without $(DEBIAN_WITHOUT))

node-modules: $(NPM_STAMP)

$(NPM_STAMP): package.json package-lock.json
	@bash scripts/install-node-modules.sh $(NPM_STAMP)

# Native addons under native/ (package.json's build:native script, when there is one).
native: $(NATIVE_STAMP)

$(NATIVE_STAMP): $(NPM_STAMP) $(NATIVE_INPUTS)
	npm run build:native --if-present --silent
	@touch $(NATIVE_STAMP)

build: native $(BUILD_STAMP) $(CONSOLE_STAMP)

adaptation: $(NARROWBAND_MLLR)

$(NARROWBAND_MLLR): $(NPM_STAMP) scripts/adapt-narrowband.mts
	node --import tsx scripts/adapt-narrowband.mts --out $(NARROWBAND_MLLR)

$(BUILD_STAMP): $(NPM_STAMP) $(BUILD_INPUTS)
	npm run build --silent
	@touch $(BUILD_STAMP)

$(CONSOLE_STAMP): $(NPM_STAMP) $(CONSOLE_INPUTS)
	npm run build:console --silent
	@touch $(CONSOLE_STAMP)

serve: setup
	node bin/parlance.js serve $(SERVE_ARGS)

test: setup
	npm run lint --silent
	npm run typecheck --silent
	node scripts/run-tests.mjs

lint: node-modules
	npm run lint --silent
	npm run format:check --silent

typecheck: node-modules
	npm run typecheck --silent

settings-table: node-modules
	node --import tsx scripts/update-settings-table.mjs

# The target's former name (docs/architecture.md still says `make readme`).
readme: settings-table

clean:
	rm -rf dist dist-console build $(NPM_STAMP) $(NATIVE_STAMP)
