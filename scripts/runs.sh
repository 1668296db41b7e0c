# Helpers for the scripts that read finished runs (keep-run, compare-runs);
# source it after scripts/lib.sh.
# shellcheck shell=sh

# run_kind DIR: kernels (make run), paired (make ab) or syslatency, from
# the conditions the driver wrote.
run_kind() {
	if grep -q '^holds=' "$1/conditions"; then
		echo syslatency
	elif grep -q '^sysctl=' "$1/conditions"; then
		echo paired
	else
		echo kernels
	fi
}

# run_labels DIR: the labels of a make run, baseline first: its kernels=
# line, or in runs from before it was written, the order= line's list.
run_labels() {
	_rl=$(sed -n 's/^kernels=//p' "$1/conditions")
	[ -n "$_rl" ] ||
		_rl=$(sed -n 's/^order=interleaved (boots x variants x kernels: \(.*\))$/\1/p' "$1/conditions")
	[ -n "$_rl" ] || die "$1/conditions names no kernels (kernels= or order=)"
	echo "$_rl"
}

# run_report DIR: the report the run's driver printed, from its files.
run_report() {
	case $(run_kind "$1") in
	syslatency) "$TOP/report/syslatency-report" "$1" ;;
	paired) "$TOP/report/paired" "$1" ;;
	kernels)
		_rr=
		for _l in $(run_labels "$1"); do _rr="$_rr $1/$_l"; done
		# shellcheck disable=SC2086 # label directories: plain words
		"$TOP/report/report" $_rr ;;
	esac
}
