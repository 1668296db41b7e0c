#!/bin/sh
# Pack what kvm-sweep.sh needs on a machine that has /dev/kvm but no QEMU
# and none of this project's userland: this host's QEMU with its shared
# libraries and the firmware a `-machine pc` boot of a bzImage reads, the
# base and spf kernels, and a root for the guest's 9p mount made of
# busybox-static, a static multi-fault-all and guest-init.sh.
# usage: prepare.sh OUT.tar.gz   (run from the project's root)
set -eu
out=${1:?usage: prepare.sh OUT.tar.gz}
here=$(dirname -- "$0")
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/kvm/lib" "$stage/kvm/share" "$stage/kvm/rootfs/bin" \
	"$stage/kvm/rootfs/proc" "$stage/kvm/rootfs/sys" \
	"$stage/kvm/rootfs/dev" "$stage/kvm/rootfs/tmp"
qemu=$(command -v qemu-system-x86_64)
cp "$qemu" "$stage/kvm/"
# every library, the dynamic loader included, to run it with that loader
ldd "$qemu" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
	while read -r l; do cp -L "$l" "$stage/kvm/lib/"; done
for f in /usr/share/seabios/bios-256k.bin /usr/share/qemu/kvmvapic.bin \
	/usr/share/qemu/linuxboot_dma.bin; do
	cp -L "$f" "$stage/kvm/share/"
done
# TCG is a module in Debian's QEMU: for a try without KVM (ACCEL=tcg)
mkdir -p "$stage/kvm/modules"
cp /usr/lib/x86_64-linux-gnu/qemu/accel-tcg-x86_64.so "$stage/kvm/modules/"
for k in base spf; do
	cp "build/kernels/$k/arch/x86/boot/bzImage" "$stage/kvm/$k.bzImage"
done
cp /bin/busybox "$stage/kvm/rootfs/bin/busybox"
gcc -std=gnu11 -O2 -static -pthread -o "$stage/kvm/rootfs/multi-fault-all" \
	bench/multi-fault-all/multi-fault-all.c
cp "$here/guest-init.sh" "$stage/kvm/rootfs/init"
chmod +x "$stage/kvm/rootfs/init"
tar czf "$out" -C "$stage" kvm
ls -la "$out"
