#!/bin/sh
# The thread sweep kept in this directory: multi-fault-all (a static
# build of bench/multi-fault-all) at 1 to all CPUs on the kernel the
# machine booted, without QEMU and without perf (the machine had neither
# to offer for sure): the benchmark counts its own faults with getrusage().
# usage: sweep.sh BINARY OUTDIR [SECONDS] [REPS]
# Writes OUTDIR/machine.txt (what ran where) and one file of the
# benchmark's output per run, VARIANT-Nt-repR.txt; summary.sh makes the
# table. Repetitions are interleaved: every variant and thread count once,
# then again.
set -u
bin=${1:?usage: sweep.sh BINARY OUTDIR [SECONDS] [REPS]}
out=${2:?usage: sweep.sh BINARY OUTDIR [SECONDS] [REPS]}
secs=${3:-2}
reps=${4:-3}
[ -x "$bin" ] || { echo "sweep.sh: $bin is not an executable" >&2; exit 1; }
mkdir -p "$out" || exit 1
n=$(nproc)
{
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "kernel: $(uname -r) $(uname -v)"
	echo "cpus online to this process: $n (of $(grep -c ^processor /proc/cpuinfo))"
	grep -m1 'model name' /proc/cpuinfo
	lscpu 2>/dev/null | grep -E '^(Socket|Core|Thread|NUMA node\(s\)|Hypervisor|Virtualization)'
	grep MemTotal /proc/meminfo
	echo "cgroup cpu.max: $(cat /sys/fs/cgroup/cpu.max 2>/dev/null || echo none)"
	echo "loadavg at start: $(cat /proc/loadavg)"
	echo "thp enabled: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)"
	echo "thp defrag: $(cat /sys/kernel/mm/transparent_hugepage/defrag 2>/dev/null)"
	echo "numa_balancing: $(cat /proc/sys/kernel/numa_balancing 2>/dev/null)"
	echo "uid: $(id -u)"
	for c in perf qemu-system-x86_64 gcc make; do
		echo "$c: $(command -v $c || echo none)"
	done
	echo "kvm: $(ls -l /dev/kvm 2>&1)"
	echo "seconds per run: $secs; repetitions: $reps"
} >"$out/machine.txt" 2>&1
threads=1
t=2
while [ $t -lt "$n" ]; do
	threads="$threads $t"
	t=$((t * 2))
done
threads="$threads $n"
r=0
while [ $r -lt "$reps" ]; do
	r=$((r + 1))
	for v in serial each writer fresh thp; do
		for t in $threads; do
			case $v in
			serial) args=--madvise=serial ;;
			each) args=--madvise=each ;;
			# one CPU for the writer: t-1 fault threads
			writer) args='--madvise=serial --writer'; t=$((t - 1)) ;;
			fresh) args='--fresh --madvise=each --vma-per-thread' ;;
			thp) args='--madvise=each --thp' ;;
			esac
			[ "$t" -ge 1 ] || continue
			# shellcheck disable=SC2086 # args: words
			"$bin" --seconds="$secs" $args "$t" \
				>"$out/$v-${t}t-rep$r.txt" 2>&1 ||
				echo "sweep.sh: $v ${t}t rep $r failed: $(tail -n 1 "$out/$v-${t}t-rep$r.txt")" >&2
		done
	done
done
