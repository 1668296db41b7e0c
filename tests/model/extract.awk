# Copy kernel functions and macros, by name, out of the kernel's headers into
# the model's generated header, so that the model runs the kernel's own
# protocol code.
#
# Usage: awk -v funcs="NAME..." -v macros="NAME..." -f extract.awk HEADER...
#
# A function is copied from the line that declares it (with the return type
# line before it when the name starts a line of its own) to its closing "}"
# at column 0; a macro from its "#define" to the last continued line.
# Definitions in the !CONFIG_SPECULATIVE_PAGE_FAULT branch of a conditional
# (the stubs) are skipped. Every name must be found exactly once, or the
# script says which and exits 1.

function err(msg) {
	print "extract.awk: error: " msg | "cat 1>&2"
	failed = 1
}

# Whether the current line is in a branch where CONFIG_SPECULATIVE_PAGE_FAULT
# is off: the #else of an #ifdef, or an #ifndef.
function in_stub_branch(	i) {
	for (i = 1; i <= depth; i++)
		if (cond[i] == "off")
			return 1
	return 0
}

function start_copy(name, first) {
	if (name in found) {
		err(name " defined twice in the CONFIG_SPECULATIVE_PAGE_FAULT code (" \
		    found[name] " and " FILENAME ":" FNR ")")
		return
	}
	found[name] = FILENAME ":" FNR
	copying = name
	text = "/* " name (kind == "func" ? "()" : "") " from " FILENAME ":" FNR \
	    " */\n" first
}

function end_copy() {
	out = out text "\n"
	copying = ""
}

BEGIN {
	n = split(funcs, fl, " ")
	for (i = 1; i <= n; i++)
		wantf[fl[i]] = 1
	n = split(macros, ml, " ")
	for (i = 1; i <= n; i++)
		wantm[ml[i]] = 1
}

FNR == 1 {
	files = files (files == "" ? "" : ", ") FILENAME
	depth = 0
	prev = ""
}

# Copying a macro: until a line that does not end in a backslash.
copying != "" && kind == "macro" {
	text = text $0 "\n"
	if ($0 !~ /\\$/)
		end_copy()
	next
}

# Copying a function: a prototype ends before any "{", a body at "}".
copying != "" && kind == "func" {
	text = text $0 "\n"
	if (!body && $0 ~ /;[ \t]*$/ && $0 !~ /{/) {
		delete found[copying]
		copying = ""
	} else if ($0 ~ /{/)
		body = 1
	if (body && $0 ~ /^}/)
		end_copy()
	next
}

/^#[ \t]*if/ {
	depth++
	cond[depth] = "other"
	if ($0 ~ /CONFIG_SPECULATIVE_PAGE_FAULT/)
		cond[depth] = ($0 ~ /^#[ \t]*ifndef/ || $0 ~ /!/) ? "off" : "on"
	prev = $0
	next
}
/^#[ \t]*(else|elif)/ {
	if (cond[depth] == "on")
		cond[depth] = "off"
	else if (cond[depth] == "off")
		cond[depth] = "on"
	prev = $0
	next
}
/^#[ \t]*endif/ {
	if (depth > 0)
		depth--
	prev = $0
	next
}

/^#[ \t]*define[ \t]/ && !in_stub_branch() {
	name = $2
	sub(/\(.*/, "", name)
	if (name in wantm) {
		kind = "macro"
		start_copy(name, $0 "\n")
		if ($0 !~ /\\$/)
			end_copy()
		prev = ""
		next
	}
}

# A declaration starts at column 0 with a type or with the name itself.
/^[A-Za-z_]/ && !in_stub_branch() {
	for (name in wantf) {
		if ($0 !~ ("(^|[ \t*])" name "[ \t]*\\("))
			continue
		kind = "func"
		body = 0
		if ($0 ~ ("^" name "[ \t]*\\(") && prev ~ /^static/)
			start_copy(name, prev "\n" $0 "\n")
		else
			start_copy(name, $0 "\n")
		if (copying == "")
			break
		if ($0 ~ /{/)
			body = 1
		# A definition on one line: "... name(...) { ... }"
		if (body && $0 ~ /}[ \t]*$/)
			end_copy()
		else if ($0 ~ /;[ \t]*$/ && !body) {
			delete found[copying]
			copying = ""
		}
		break
	}
}

{ prev = $0 }

END {
	if (copying != "")
		err(copying "() has no closing brace at column 0")
	for (name in wantf)
		if (!(name in found))
			err("function " name "() not found outside the " \
			    "!CONFIG_SPECULATIVE_PAGE_FAULT stubs in " files)
	for (name in wantm)
		if (!(name in found))
			err("macro " name " not found in " files)
	if (failed)
		exit 1
	printf "%s", out
}
