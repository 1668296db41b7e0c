# Entry points. The README's two commands are `make run` and `make test`.
# Kernels build one at a time (each uses every core): this file is serial.
.NOTPARALLEL:
.SUFFIXES:
.PHONY: run ab test soak tree export check-patches check-bisect kernels bench \
	tests-build clean distclean deps-build deps-run deps-test

# Kernels `make run` compares; MAINLINE=1 adds Debian's 6.12 (per-VMA locks).
# Items may be NAME, LABEL=NAME, LABEL=PATH/TO/bzImage, each with
# +SYSCTL=VALUE pieces (see scripts/compare-kernels --help).
RUN_KERNELS ?= base spf $(if $(filter 1,$(MAINLINE)),mainline)
# The kernels those items need built here.
run_item_kernel = $(lastword $(subst =, ,$(firstword $(subst +, ,$(1)))))
RUN_KERNEL_NAMES = $(sort $(foreach i,$(RUN_KERNELS),\
	$(if $(findstring /,$(i)),,$(call run_item_kernel,$(i)))))
# Kernels the tests boot.
TEST_KERNELS ?= base spf spf-debug

deps-build:
	@scripts/deps build
deps-run: deps-build
	@scripts/deps qemu run $(if $(filter mainline,$(RUN_KERNEL_NAMES)),mainline)
deps-test: deps-build
	@scripts/deps qemu run test

tree: deps-build
	@scripts/tree

export:
	@scripts/export

check-patches: tree
	@scripts/check-patches

# Every prefix of the series compiles with the option on and off (long).
check-bisect: tree
	@scripts/check-bisect

kernel-%: tree
	@scripts/build-kernel $*

kernels: $(addprefix kernel-,$(TEST_KERNELS))

# The benchmark and the slab sampler that runs beside it in the guest.
bench:
	@$(MAKE) -s -C bench/multi-fault-all
	@$(MAKE) -s -C perf-scripts/slab-peak

tests-build: tree
	@scripts/build-tests

run: deps-run tree $(addprefix kernel-,$(RUN_KERNEL_NAMES)) bench
	@$(MAKE) -s -C perf-scripts/report
	@scripts/compare-kernels $(RUN_KERNELS)

# One kernel, two values of a sysctl, compared inside the same boots
# (scripts/compare-sysctl --help): AB_KERNEL and AB_SYSCTL=NAME=A,B.
AB_KERNEL ?= spf
AB_SYSCTL ?= vm.speculative_page_fault=0,1
ab: deps-run tree $(if $(findstring /,$(AB_KERNEL)),,kernel-$(AB_KERNEL)) bench
	@$(MAKE) -s -C perf-scripts/report paired
	@scripts/compare-sysctl $(AB_KERNEL) $(AB_SYSCTL)

test: deps-test tree kernels tests-build
	@tests/run

# The stressors and race tests for a chosen time (SOAK_MINUTES, default 30).
soak: deps-test tree kernel-spf-debug tests-build
	@tests/soak

clean:
	rm -rf build/kernels build/qemu build/tests build/model
	@$(MAKE) -s -C bench/multi-fault-all clean
	@$(MAKE) -s -C perf-scripts/report clean
	@$(MAKE) -s -C perf-scripts/slab-peak clean

distclean:
	rm -rf build
