# Shared helpers for the project's shell scripts; source it, do not run it.
# shellcheck shell=sh

# The repository root, whatever the caller's directory.
TOP=$(CDPATH='' cd -- "$(dirname -- "$0")/.." && pwd)
while [ ! -f "$TOP/series" ] && [ "$TOP" != / ]; do
	TOP=$(dirname -- "$TOP")
done
# shellcheck disable=SC2034 # for the scripts that source this file
BUILD=$TOP/build
PROG=${PROG:-$(basename -- "$0")}

msg() { printf '%s: %s\n' "$PROG" "$*" >&2; }
die() { printf '%s: error: %s\n' "$PROG" "$*" >&2; exit 1; }
# Bad usage: the same one line, status 2.
die_usage() { printf '%s: error: %s\n' "$PROG" "$*" >&2; exit 2; }
step() { printf '==> %s\n' "$*" >&2; }

# The guest kernels of configs/kernels: NAME | SOURCE | FRAGMENTS | WHAT.
# kernel_names: the names, space-separated; kernel_list: comma-separated.
kernel_names() {
	awk -F'|' '!/^#/ && NF >= 4 { gsub(/ /, "", $1); printf "%s%s", sep, $1; sep = " " }' \
		"$TOP/configs/kernels"
}
kernel_list() { kernel_names | sed 's/ /, /g'; }
# kernel_known NAME: whether configs/kernels has it.
kernel_known() {
	case " $(kernel_names) " in *" $1 "*) return 0 ;; esac
	return 1
}
# kernel_field NAME N: field N of NAME's line, trimmed (2: the source
# directory under build/src, 3: the fragments, 4: what it is).
kernel_field() {
	awk -F'|' -v n="$1" -v f="$2" '!/^#/ && NF >= 4 {
		k = $1; gsub(/ /, "", k)
		if (k != n) next
		v = $f; gsub(/^ +| +$/, "", v); gsub(/  +/, " ", v); print v
	}' "$TOP/configs/kernels"
}

# The benchmark variants of configs/variants:
# NAME | THREADS | QEMU | ARGUMENTS | WHAT. variant_field NAME N: field N
# of NAME's line, trimmed; variant_names: the names, space-separated.
variant_field() {
	awk -F'|' -v n="$1" -v f="$2" '!/^#/ && NF >= 5 {
		k = $1; gsub(/ /, "", k)
		if (k != n) next
		v = $f; gsub(/^ +| +$/, "", v); gsub(/  +/, " ", v); print v
	}' "$TOP/configs/variants"
}
variant_names() {
	awk -F'|' '!/^#/ && NF >= 5 { gsub(/ /, "", $1); printf "%s%s", sep, $1; sep = " " }' \
		"$TOP/configs/variants"
}
# variant_resolve VARIANT VCPUS: VARIANT as NAME-Nt, a short NAME given
# its thread count for VCPUS; or, status 1, why it is not a variant.
variant_resolve() {
	_v=$1 _n='' _threads=''
	_threads=$(variant_field "$_v" 2)
	if [ -z "$_threads" ]; then
		_n=${_v##*-}
		_n=${_n%t}
		case $_v in
		*-*t) _threads=$(variant_field "${_v%-*}" 2) ;;
		esac
		case $_n in '' | *[!0-9]* | 0*) _threads= ;; esac
		if [ -z "$_threads" ]; then
			echo "unknown variant '$_v' ($(variant_names | sed 's/ /, /g'), or NAME-Nt)"
			return 1
		fi
		case $_threads in
		vcpus*) ;;
		*) [ "$_n" = "$_threads" ] || { echo "variant ${_v%-*} runs $_threads thread(s): ${_v%-*}-${_threads}t, not $_v"; return 1; } ;;
		esac
		echo "$_v"
		return 0
	fi
	case $_threads in
	vcpus) _n=$2 ;;
	vcpus-1) _n=$(($2 > 1 ? $2 - 1 : 1)) ;;
	*) _n=$_threads ;;
	esac
	echo "$_v-${_n}t"
}
# variant_qemu_args VARIANT-Nt: what qemu/run needs for it (swap, say).
variant_qemu_args() {
	_q=$(variant_field "${1%-*}" 3)
	[ "$_q" = - ] || echo "$_q"
}
# variant_args VARIANT-Nt: the benchmark's arguments but the thread count.
variant_args() { variant_field "${1%-*}" 4; }

# The version that `series` pins, e.g. 6.1.192.
series_base_version() {
	sed -n 's/^# Base: Linux \([0-9][0-9.]*\).*/\1/p' "$TOP/series" | head -n 1
}

# VERSION.PATCHLEVEL.SUBLEVEL of the kernel source in $1.
source_version() {
	awk -F' = ' '/^VERSION =/ { v = $2 } /^PATCHLEVEL =/ { p = $2 }
		/^SUBLEVEL =/ { s = $2; print v "." p "." s; exit }' "$1/Makefile"
}

# The patch files named by `series`, in order, as paths relative to $TOP.
series_patches() {
	sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$TOP/series"
}

# Hash of everything the series consists of: its order and each patch's text.
series_hash() {
	{
		cat "$TOP/series"
		series_patches | while IFS= read -r p; do
			[ -f "$TOP/$p" ] || die "series names $p, which does not exist"
			cat "$TOP/$p"
		done
	} | git hash-object --stdin
}

ncpus() { getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1; }

# boot_retrying DIR BOOT CLEANUP [ARG...]: call the shell function BOOT
# with the ARGs; it boots a guest once and leaves its console log in
# DIR/console.log. Return its status. A guest that died of QEMU TCG's stale
# int3 (README, Known problems) is not the kernel's fault: keep that
# console log as DIR/console-int3-N.log, call CLEANUP to remove what the
# failed boot left, and boot again, twice at most. Any other failure, or a
# third stale int3, is the caller's to report.
boot_retrying() {
	_br_dir=$1 _br_boot=$2 _br_cleanup=$3 _br_tries=0
	shift 3
	while :; do
		_br_rc=0
		"$_br_boot" "$@" || _br_rc=$?
		[ "$_br_rc" = 125 ] && [ "$_br_tries" -lt 2 ] &&
			"$TOP/qemu/stale-int3" "$_br_dir/console.log" 2>/dev/null || return "$_br_rc"
		_br_tries=$((_br_tries + 1))
		mv "$_br_dir/console.log" "$_br_dir/console-int3-$_br_tries.log"
		msg "warning: the guest died of TCG's stale int3 ($_br_dir/console-int3-$_br_tries.log); booting again"
		"$_br_cleanup"
	done
}

# ICOUNT, empty or a shift for qemu/run --icount, runs one vCPU: check it
# and VCPUS, and set VCPUS=1 with it. Says what is wrong and returns 2.
icount_vcpus() {
	case ${ICOUNT:-} in
	'') return 0 ;;
	[0-9] | 10) ;;
	*) msg "error: ICOUNT must be a shift from 0 to 10, not '$ICOUNT'"; return 2 ;;
	esac
	if [ "${VCPUS:-1}" != 1 ]; then
		msg "error: ICOUNT runs one vCPU, not VCPUS=$VCPUS"
		return 2
	fi
	VCPUS=1
}

# fragments_applied OBJDIR FRAGMENT...: whether every option the fragments
# ask for is in OBJDIR/.config as asked; names each one that is not. A
# later fragment's request for an option replaces an earlier one's, as in
# merge_config.sh (debug.config turns guest.config's preemption model off).
fragments_applied() {
	fa_obj=$1 fa_bad=0
	shift
	while [ $# -gt 0 ]; do
		fa_f=$1
		shift
		while IFS= read -r fa_line; do
			case $fa_line in
			CONFIG_*=*) fa_opt=${fa_line%%=*} ;;
			"# CONFIG_"*" is not set") fa_opt=${fa_line#\# } fa_opt=${fa_opt%% *} ;;
			*) continue ;;
			esac
			[ $# = 0 ] || ! grep -qE "^($fa_opt=|# $fa_opt is not set)" "$@" || continue
			case $fa_line in
			CONFIG_*=*)
				grep -qxF -- "$fa_line" "$fa_obj/.config" && continue
				msg "$(basename "$fa_f"): $fa_line requested, final .config has: $(grep -E "^($fa_opt=|# $fa_opt is not set)" "$fa_obj/.config" || echo "absent")"
				fa_bad=1 ;;
			*)
				grep -q "^$fa_opt=" "$fa_obj/.config" || continue
				msg "$(basename "$fa_f"): $fa_opt requested off, final .config has: $(grep "^$fa_opt=" "$fa_obj/.config")"
				fa_bad=1 ;;
			esac
		done <"$fa_f"
	done
	return $fa_bad
}

# kmake SRC OBJ ARG...: make in the kernel source SRC, out of tree in OBJ,
# the way every kernel here is built (ccache, a fixed build user and host).
kmake() {
	_km_src=$1 _km_obj=$2
	shift 2
	CCACHE_BASEDIR=$TOP CCACHE_NOHASHDIR=1 make -C "$_km_src" O="$_km_obj" \
		ARCH=x86_64 CC="ccache gcc" HOSTCC="ccache gcc" \
		KBUILD_BUILD_USER=spf KBUILD_BUILD_HOST=qemu LOCALVERSION= "$@"
}

# kernel_configure SRC OBJ NAME FRAGMENT...: OBJ/.config from tinyconfig
# and the fragments (the kernel's merge_config.sh), the release ending in
# -NAME. The one configuration path of build-kernel and check-bisect:
# status 1 when a step failed (the end of its log shown) or an option a
# fragment asks for is not in the final .config (each one named).
kernel_configure() {
	_kc_src=$1 _kc_obj=$2 _kc_name=$3
	shift 3
	mkdir -p "$_kc_obj" || return 1
	printf 'CONFIG_LOCALVERSION="-%s"\n# CONFIG_LOCALVERSION_AUTO is not set\n' "$_kc_name" \
		>"$_kc_obj/name.config"
	if ! { kmake "$_kc_src" "$_kc_obj" -s tinyconfig &&
		"$_kc_src/scripts/kconfig/merge_config.sh" -m -O "$_kc_obj" "$_kc_obj/.config" \
			"$@" "$_kc_obj/name.config" &&
		kmake "$_kc_src" "$_kc_obj" -s olddefconfig; } >"$_kc_obj/config.log" 2>&1; then
		tail -n 20 "$_kc_obj/config.log" >&2
		msg "configuring $_kc_name failed (log: $_kc_obj/config.log)"
		return 1
	fi
	fragments_applied "$_kc_obj" "$@"
}

# The knobs the drivers (compare-kernels, compare-syslatency) share, defaulted
# and checked alike: DURATION (seconds per run, > 0), BOOTS (boots,
# default $1), ICOUNT, VCPUS, GUEST_MEM, THP, RESULTS. A bad one is bad
# usage: one line, status 2.
isnum() { case $1 in '' | .* | *.*.* | *[!0-9.]* | *.) return 1 ;; esac; }
knob_posint() { case $2 in '' | *[!0-9]* | 0*) die_usage "$1 must be a positive integer, not '$2'" ;; esac; }
# The knobs' old names, refused with the new one: one name per concept
# (BOOTS boots, RUNS runs per boot, *DURATION seconds).
renamed_knobs() {
	for _k in ROUNDS:BOOTS REPEAT:RUNS PROFILE_SECONDS:PROFILE_DURATION \
		SOAK_MINUTES:SOAK_DURATION SPF_MUTATION_SECONDS:SPF_MUTATION_DURATION \
		PAIRS:RUNS VARIANT:VARIANTS; do
		eval "_v=\${${_k%%:*}-}"
		[ -z "$_v" ] || die_usage "${_k%%:*} is now ${_k#*:} (README, Knobs)"
	done
}

guest_knobs() {
	renamed_knobs
	DURATION=${DURATION:-2} BOOTS=${BOOTS:-$1} ICOUNT=${ICOUNT:-}
	icount_vcpus || exit 2
	VCPUS=${VCPUS:-$(ncpus)} GUEST_MEM=${GUEST_MEM:-2G} THP=${THP:-off}
	RESULTS=${RESULTS:-$TOP/results}
	if ! isnum "$DURATION" || [ "$(awk -v d="$DURATION" 'BEGIN { print (d > 0) }')" != 1 ]; then
		die_usage "DURATION must be a positive number of seconds, not '$DURATION'"
	fi
	knob_posint BOOTS "$BOOTS"
	knob_posint VCPUS "$VCPUS"
	case $GUEST_MEM in [1-9]*[0-9MGk] | [1-9]) ;; *) die_usage "GUEST_MEM wants a size such as 2G, not '$GUEST_MEM'" ;; esac
	case $THP in on | off) ;; *) die_usage "THP must be on or off, not '$THP'" ;; esac
}

# How many host seconds a guest second may take under qemu/run --icount
# SHIFT, as a factor for timeouts (1 without SHIFT). At shift 3 the guest
# clock runs at 125 million instructions a second, about what TCG executes
# on the 2-core build host; each lower shift doubles it. Twice that, for
# slower hosts.
icount_slowdown() {
	[ -n "${1:-}" ] || { echo 1; return; }
	if [ "$1" -lt 3 ]; then echo $((2 << (3 - $1))); else echo 2; fi
}
