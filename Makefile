# Entry points. The README's two commands are `make run` and `make test`.
# Kernels build one at a time (each uses every core): this file is serial.
.NOTPARALLEL:
.SUFFIXES:
.PHONY: help run run-kernels run-check ab ab-check syslatency syslatency-check test soak kcsan tree export check-patches check-bisect kernels bench coherence \
	tests-build clean distclean deps-build deps-run deps-test deps-native \
	native native-check native-report native-sweep native-sweep-check

# `make` alone prints the targets: nothing builds or installs unless a
# target says so.
.DEFAULT_GOAL := help

# EXPERIMENT=NAME: the knobs of experiments/NAME (make syntax), which
# those on the command line override; its EXPERIMENT_TARGET (ab,
# syslatency) makes `make run` run that target instead.
EXPERIMENTS := $(notdir $(wildcard experiments/*))
ifneq ($(EXPERIMENT),)
ifeq ($(filter $(EXPERIMENT),$(EXPERIMENTS)),)
$(error EXPERIMENT=$(EXPERIMENT): no such experiment; known: $(EXPERIMENTS))
endif
include experiments/$(EXPERIMENT)
endif
# One name per concept: the knobs' old names stop here with the new one.
RENAMED_KNOBS := ROUNDS:BOOTS REPEAT:RUNS PROFILE_SECONDS:PROFILE_DURATION \
	SOAK_MINUTES:SOAK_DURATION SPF_MUTATION_SECONDS:SPF_MUTATION_DURATION \
	PAIRS:RUNS VARIANT:VARIANTS
$(foreach r,$(RENAMED_KNOBS),$(if $(filter undefined,$(origin $(firstword $(subst :, ,$(r))))),,\
	$(error $(firstword $(subst :, ,$(r))) is now $(lastword $(subst :, ,$(r))) (README, Knobs))))
# The knobs the scripts read from the environment, exported when set here.
KNOBS := RUN_KERNELS MAINLINE DURATION RUNS BOOTS VARIANTS VCPUS GUEST_MEM \
	THP ICOUNT PROFILE_DURATION RESULTS AB_KERNEL AB_SYSCTL \
	HOLDS HOLD_MB PRESSURE_MB PRESSURE COHERENCE INSNS
export $(foreach k,$(KNOBS),$(if $(filter undefined,$(origin $(k))),,$(k)))

# Kernels `make run` compares; MAINLINE=1 adds Debian's 6.12 (per-VMA locks).
# Items may be NAME, LABEL=NAME, LABEL=PATH/TO/bzImage, each with
# +SYSCTL=VALUE pieces (see scripts/compare-kernels --help).
RUN_KERNELS ?= base spf $(if $(filter 1,$(MAINLINE)),mainline)
# The kernels those items need built here.
run_item_kernel = $(lastword $(subst =, ,$(firstword $(subst +, ,$(1)))))
RUN_KERNEL_NAMES = $(sort $(foreach i,$(RUN_KERNELS),\
	$(if $(findstring /,$(i)),,$(call run_item_kernel,$(i)))))
# The kernels of configs/kernels, for make help.
KERNEL_NAMES := $(shell sed -n 's/^\([a-z0-9-]*\) *|.*/\1/p' configs/kernels)
# Kernels the tests boot.
TEST_KERNELS ?= base spf spf-debug

help:
	@printf '%s\n' \
	'usage: make TARGET [KNOB=VALUE...]   (* installs missing Debian packages first)' \
	'  run *            build base and spf, compare them under QEMU, print the report' \
	'                   (EXPERIMENT=NAME: the knobs of experiments/NAME, listed below)' \
	'  test *           build base, spf, spf-debug and the tests, run every suite' \
	'  ab *             one kernel, two values of a sysctl, compared in one boot' \
	'  native *         LABEL=NAME: the variants on the kernel this machine booted, no' \
	'                   QEMU, into RESULTS/native/LABEL, then the report over its labels' \
	'  native-report    that report again (scripts/compare-native --report)' \
	'  native-sweep *   LABEL=NAME: faults/s at 1, 2, 4, ... threads up to the CPUs,' \
	'                   linear and ratio (RESULTS/native-sweep/)' \
	'  soak *           the race and stress tests on spf-debug for SOAK_DURATION s' \
	'  kcsan *          the race and window tests on spf-kcsan, every data race sorted' \
	'  tree *           build/src/linux: the 6.1 source with the series applied' \
	'  kernel-NAME *    build/kernels/NAME: $(KERNEL_NAMES)' \
	'  kernels *        the kernels the tests boot (TEST_KERNELS)' \
	'  tests-build *    the vm selftests and the in-guest tests' \
	'  check-patches *  every prefix applies, checkpatch --strict has no errors' \
	'  check-bisect *   every prefix builds and boots, option off and on (hours)' \
	'  deps-build deps-run deps-test deps-native *   only install those packages' \
	'  export           write build/src/linux back to the patch files and series' \
	'  bench            the benchmarks (multi-fault-all, syslatency), the slab sampler, the reports' \
	'  coherence        the cache-coherence simulator, a QEMU plugin (build/coherence/coherence.so)' \
	'  clean distclean  remove what was built (distclean: all of build/)' \
	'Knobs (scripts/compare-kernels, compare-syslatency, compare-native, native-sweep --help):' \
	'  run:  RUN_KERNELS="$(strip $(RUN_KERNELS))" MAINLINE=1 DURATION=2 RUNS=2' \
	'        BOOTS=2 VARIANTS VCPUS GUEST_MEM THP ICOUNT PROFILE_DURATION RESULTS' \
	'        COHERENCE=on (the coherence simulator, transfers per fault)' \
	'        INSNS=on (instructions per fault by function, the same plugin)' \
	'  ab:   AB_KERNEL=$(AB_KERNEL) AB_SYSCTL=$(AB_SYSCTL) RUNS=6 (pairs) BOOTS=3' \
	'        VARIANTS=single (one) DURATION VCPUS GUEST_MEM THP ICOUNT RESULTS' \
	'  syslatency (EXPERIMENT=syslatency): RUN_KERNELS BOOTS DURATION HOLDS HOLD_MB' \
	'        PRESSURE_MB PRESSURE VCPUS GUEST_MEM RESULTS' \
	'  native (as root): LABEL DURATION=2 RUNS=2 BOOTS=2 VARIANTS THP PROFILE_DURATION RESULTS' \
	'  native-sweep (as root): LABEL VARIANTS="serial each" DURATION=2 RUNS=2 BOOTS=1 THP RESULTS' \
	'  test: TEST_KERNELS="$(strip $(TEST_KERNELS))"   soak: SOAK_DURATION=1800' \
	'  check-bisect: FROM=N BOOT=0 QUICK=1   tree: FORCE=1' \
	'Experiments (make run EXPERIMENT=NAME):'
	@for e in $(EXPERIMENTS); do \
		printf '  %-10s %s\n' "$$e" "$$(sed -n '1s/^# //p' experiments/$$e)"; done

deps-build:
	@scripts/deps build
deps-run: deps-build
	@scripts/deps qemu run $(if $(filter mainline,$(RUN_KERNEL_NAMES)),mainline)
deps-test: deps-build
	@scripts/deps qemu run test
deps-native:
	@scripts/deps native

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

# The benchmarks, the slab sampler that runs beside them in the guest, the
# coherence plugin's phase marker, and the reports.
bench:
	@$(MAKE) -s -C bench/multi-fault-all
	@$(MAKE) -s -C bench/syslatency
	@$(MAKE) -s -C guest/slab-peak
	@$(MAKE) -s -C guest/phase-mark
	@$(MAKE) -s -C report

# The cache-coherence simulator: a QEMU 7.2 TCG plugin that counts the
# cache lines vCPUs take from each other (qemu/coherence/coherence.c).
coherence:
	@$(MAKE) -s -C qemu/coherence

tests-build: tree
	@scripts/build-tests

# The kernels and knobs are checked before anything is installed or built.
run: $(if $(EXPERIMENT_TARGET),$(EXPERIMENT_TARGET),run-kernels)
run-kernels: run-check deps-run tree $(addprefix kernel-,$(RUN_KERNEL_NAMES)) bench \
	$(if $(filter on,$(COHERENCE) $(INSNS)),coherence)
	@scripts/compare-kernels $(RUN_KERNELS)
run-check:
	@scripts/compare-kernels --check $(RUN_KERNELS)

# One kernel, two values of a sysctl, compared inside the same boots
# (scripts/compare-kernels --paired, see --help): AB_KERNEL, a kernel
# NAME or LABEL=PATH/TO/bzImage, and AB_SYSCTL=NAME=A,B.
AB_KERNEL ?= spf
AB_SYSCTL ?= vm.speculative_page_fault=0,1
ab: ab-check deps-run tree $(if $(findstring /,$(AB_KERNEL)),,kernel-$(AB_KERNEL)) bench
	@scripts/compare-kernels --paired $(AB_SYSCTL) $(AB_KERNEL)
ab-check:
	@scripts/compare-kernels --check --paired $(AB_SYSCTL) $(AB_KERNEL)

# Native mode, on the machine itself after booting the kernel LABEL names
# (scripts/compare-native --help): the label and knobs are checked first.
# LABEL may carry +SYSCTL=VALUE pieces.
# The scripts build the benchmark and the reports themselves.
native: native-check deps-native
	@scripts/compare-native '$(LABEL)'
native-check:
	@scripts/compare-native --check '$(LABEL)'
native-report:
	@scripts/compare-native --report
native-sweep: native-sweep-check deps-native
	@scripts/native-sweep '$(LABEL)'
native-sweep-check:
	@scripts/native-sweep --check '$(LABEL)'

# Wake-up latency under reclaim around held memory, kernel against kernel
# (scripts/compare-syslatency --help); EXPERIMENT=syslatency sets it up.
syslatency: syslatency-check deps-run tree $(addprefix kernel-,$(RUN_KERNEL_NAMES)) bench
	@scripts/compare-syslatency $(RUN_KERNELS)
syslatency-check:
	@scripts/compare-syslatency --check $(RUN_KERNELS)

test: deps-test tree kernels tests-build coherence
	@tests/run

# The stressors and race tests for a chosen time (SOAK_DURATION seconds, default 1800).
soak: deps-test tree kernel-spf-debug tests-build
	@tests/soak

# The race and window tests under the data-race detector (tests/qemu/spf-kcsan):
# run it before every stop that changes the series.
kcsan: deps-test tree kernel-spf-kcsan tests-build
	@tests/run qemu/spf-kcsan

clean:
	rm -rf build/kernels build/qemu build/tests build/model build/coherence
	@$(MAKE) -s -C bench/multi-fault-all clean
	@$(MAKE) -s -C bench/syslatency clean
	@$(MAKE) -s -C report clean
	@$(MAKE) -s -C guest/slab-peak clean
	@$(MAKE) -s -C guest/phase-mark clean

distclean:
	rm -rf build
