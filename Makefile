# Quick start (README.md): `make up` runs a single-node t0fs; `make test` runs the tests.
# Builds are serialised with a lock so two builds never share the two cores.
BUILD ?= build
ASAN_BUILD ?= build-asan
JOBS ?= $(shell nproc)
LOCK = scripts/with-build-lock
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo
WERROR ?= ON

.PHONY: deps build up test unit asan-test bench deb clean format

deps:
	scripts/install-deps

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS) -DT0FS_WERROR=$(WERROR)

build: deps $(BUILD)/build.ninja
	$(LOCK) ninja -C $(BUILD) -j $(JOBS)

up: build
	./$(BUILD)/t0fs up $(UP_ARGS)

test: build
	scripts/run-tests $(BUILD) $(ASAN_BUILD)

unit: build
	cd $(BUILD) && ctest -L unit --output-on-failure -j $(JOBS)

# A Debian package (CPack): build/t0fs_<version>_<arch>.deb
deb: build
	cd $(BUILD) && cpack -G DEB

bench: build
	scripts/bench-foundation $(BUILD)

format:
	git ls-files '*.cc' '*.h' | xargs clang-format -i

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
