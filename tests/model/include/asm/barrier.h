/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tools' barriers, with smp_load_acquire() and smp_store_release() as
 * C11 acquire and release accesses: the same instructions on x86, and an
 * ordering ThreadSanitizer understands. smp_rmb() and smp_wmb() stay
 * compiler barriers, as on x86 in the kernel: ThreadSanitizer has no
 * model of fences, which is why the racy VMA copy is not instrumented.
 */
#ifndef MODEL_ASM_BARRIER_H
#define MODEL_ASM_BARRIER_H

#include_next <asm/barrier.h>

#undef smp_load_acquire
#undef smp_store_release
#define smp_load_acquire(p)	__atomic_load_n(p, __ATOMIC_ACQUIRE)
#define smp_store_release(p, v)	__atomic_store_n(p, v, __ATOMIC_RELEASE)

#endif
