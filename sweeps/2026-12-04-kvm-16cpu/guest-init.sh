#!/bin/busybox sh
# shellcheck shell=dash
# PID 1 of a kvm-sweep.sh guest: the variants of multi-fault-all at
# SWEEP_N vCPUs (the kernel hands unknown NAME=VALUE arguments of its
# command line to init as its environment), each run's RESULT line on the
# console with the variant's name before it, then power off.
bb=/bin/busybox
$bb mount -t proc proc /proc
$bb mount -t sysfs sysfs /sys
$bb mount -t devtmpfs devtmpfs /dev 2>/dev/null
$bb mount -t tmpfs tmpfs /tmp
n=${SWEEP_N:-1}
echo "SWEEP kernel=$($bb uname -r) cpus=$($bb nproc) thp=$($bb cat /sys/kernel/mm/transparent_hugepage/enabled)"
echo "SWEEP spf=$($bb cat /proc/sys/vm/speculative_page_fault 2>/dev/null || echo none)"
for v in ${SWEEP_VARIANTS:-serial each writer fresh thp}; do
	t=$n
	case $v in
	serial) args=--madvise=serial ;;
	each) args=--madvise=each ;;
	writer) args='--madvise=serial --writer'; t=$((n - 1)) ;;
	fresh) args='--fresh --madvise=each --vma-per-thread' ;;
	thp) args='--madvise=each --thp' ;;
	*) echo "SWEEP unknown variant $v"; continue ;;
	esac
	[ "$t" -ge 1 ] || continue
	for r in $($bb seq 1 "${SWEEP_RUNS:-2}"); do
		# shellcheck disable=SC2086 # args: words
		/multi-fault-all --seconds="${SWEEP_SECONDS:-1.5}" $args "$t" >/tmp/out 2>&1
		res=$($bb grep '^RESULT' /tmp/out) || res="FAILED $($bb tail -n 1 /tmp/out)"
		echo "SWEEP $v-${t}t run $r $res"
	done
done
echo "SWEEP done"
$bb sync
$bb reboot -f
