#!/bin/sh
# Boot base and spf under KVM with 1, 2, 4, ... vCPUs, up to the host's
# CPUs, interleaved (base spf base spf ...), REPS times over, and collect
# the guests' multi-fault-all RESULT lines (guest-init.sh).
# usage: kvm-sweep.sh TARBALL WORKDIR OUTDIR [REPS]
# TARBALL is what prepare.sh packed; OUTDIR gets machine.txt, results.txt
# (one line a run: kernel, vCPUs, repetition, the guest's SWEEP line) and
# each boot's console.
set -u
tgz=${1:?usage: kvm-sweep.sh TARBALL WORKDIR OUTDIR [REPS]}
work=${2:?usage: kvm-sweep.sh TARBALL WORKDIR OUTDIR [REPS]}
out=${3:?usage: kvm-sweep.sh TARBALL WORKDIR OUTDIR [REPS]}
reps=${4:-2}
# ACCEL=tcg (with -cpu max) tries the whole thing where there is no KVM
accel=${ACCEL:-kvm}
cpu=host
[ "$accel" = kvm ] || cpu=max
mkdir -p "$work" "$out" || exit 1
tar xzf "$tgz" -C "$work" || { echo "kvm-sweep.sh: cannot unpack $tgz" >&2; exit 1; }
k=$work/kvm
export QEMU_MODULE_DIR="$k/modules"
[ "$accel" != kvm ] || [ -w /dev/kvm ] || { echo "kvm-sweep.sh: no writable /dev/kvm" >&2; exit 1; }
qemu() {
	"$k/lib/ld-linux-x86-64.so.2" --library-path "$k/lib" \
		"$k/qemu-system-x86_64" -L "$k/share" "$@"
}
ncpu=$(nproc)
{
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "host kernel: $(uname -r)"
	echo "host cpus: $ncpu; $(grep -m1 'model name' /proc/cpuinfo)"
	grep MemTotal /proc/meminfo
	echo "loadavg at start: $(cat /proc/loadavg)"
	echo "qemu: $(qemu -version | head -n 1)"
	echo "repetitions: $reps; accel: $accel, -cpu $cpu"
} >"$out/machine.txt" 2>&1
counts=1
n=2
while [ $n -lt "$ncpu" ]; do
	counts="$counts $n"
	n=$((n * 2))
done
counts="$counts $ncpu"
: >"$out/results.txt"
r=0
while [ $r -lt "$reps" ]; do
	r=$((r + 1))
	for n in $counts; do
		for kern in base spf; do
			con=$out/console-$kern-${n}cpu-rep$r.txt
			start=$(date +%s)
			timeout 120 sh -c '
				k=$1 kern=$2 n=$3 con=$4 accel=$5 cpu=$6
				"$k/lib/ld-linux-x86-64.so.2" --library-path "$k/lib" \
					"$k/qemu-system-x86_64" -L "$k/share" \
					-nodefaults -no-user-config -machine pc -accel "$accel" \
					-cpu "$cpu" -smp "$n,sockets=$n,cores=1,threads=1" -m 4G \
					-display none -no-reboot -serial "file:$con" \
					-kernel "$k/$kern.bzImage" \
					-append "console=ttyS0,115200 root=rootfs rootfstype=9p rootflags=trans=virtio,version=9p2000.L,msize=262144 ro init=/init panic=-1 oops=panic pci=noacpi SWEEP_N=$n SWEEP_SECONDS=1 SWEEP_RUNS=2" \
					-virtfs "local,path=$k/rootfs,mount_tag=rootfs,security_model=none,multidevs=remap,readonly=on"
			' sh "$k" "$kern" "$n" "$con" "$accel" "$cpu" >"$out/qemu-$kern-${n}cpu-rep$r.log" 2>&1
			rc=$?
			echo "boot $kern ${n}cpu rep $r: qemu status $rc, $(( $(date +%s) - start )) s" >>"$out/machine.txt"
			tr -d '\r' <"$con" | grep '^SWEEP' | sed "s/^/$kern ${n}cpu rep$r /" >>"$out/results.txt"
		done
	done
done
echo "loadavg at end: $(cat /proc/loadavg)" >>"$out/machine.txt"
