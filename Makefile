# Entry points. The README's two commands are `make run` and `make test`.
# Kernels build one at a time (each uses every core): this file is serial.
.NOTPARALLEL:
.SUFFIXES:
.PHONY: run test tree export check-patches kernels bench clean distclean \
	deps-build deps-run deps-test deps-mainline

# Kernels `make run` compares; MAINLINE=1 adds Debian's 6.12 (per-VMA locks).
RUN_KERNELS ?= base spf $(if $(filter 1,$(MAINLINE)),mainline)
TEST_KERNELS ?= base spf spf-debug

deps-build:
	@scripts/deps build
deps-run: deps-build
	@scripts/deps qemu run $(if $(filter mainline,$(RUN_KERNELS)),mainline)
deps-test: deps-build
	@scripts/deps qemu run test

tree: deps-build
	@scripts/tree

export:
	@scripts/export

check-patches: tree
	@scripts/check-patches

kernel-%: tree
	@scripts/build-kernel $*

kernels: $(addprefix kernel-,$(TEST_KERNELS))

bench:
	@$(MAKE) -s -C bench/multi-fault-all

run: deps-run tree $(addprefix kernel-,$(RUN_KERNELS)) bench
	@scripts/compare-kernels $(RUN_KERNELS)

test: deps-test tree $(addprefix kernel-,$(TEST_KERNELS)) bench
	@tests/run

clean:
	rm -rf build/kernels build/qemu
	@$(MAKE) -s -C bench/multi-fault-all clean

distclean:
	rm -rf build
