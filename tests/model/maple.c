// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's lib/maple_tree.c, built through the radix-tree test shim
 * (tools/testing/radix-tree) of the kernel tree in KSRC, as the shim's own
 * maple.c builds it, without the test suite. The Makefile passes the path.
 */
#include "test.h"
#include "linux/init.h"

#define module_init(x)
#define module_exit(x)
#define MODULE_AUTHOR(x)
#define MODULE_LICENSE(x)
#define dump_stack()	assert(0)
/* The kernel's compiler_attributes.h has it; the 6.1 tools headers do not. */
#ifndef fallthrough
#define fallthrough	__attribute__((__fallthrough__))
#endif

#include MAPLE_TREE_C
