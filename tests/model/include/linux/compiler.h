/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tools' compiler.h, with READ_ONCE() and WRITE_ONCE() as relaxed
 * atomic accesses: the same instructions on x86, and ThreadSanitizer
 * takes them for the deliberate concurrent accesses they are.
 */
#ifndef MODEL_LINUX_COMPILER_H
#define MODEL_LINUX_COMPILER_H

#include_next <linux/compiler.h>

#undef READ_ONCE
#undef WRITE_ONCE
#define READ_ONCE(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, val)	__atomic_store_n(&(x), (val), __ATOMIC_RELAXED)

#endif
