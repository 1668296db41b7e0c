/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The radix-tree shim's rcupdate.h (liburcu), with what ThreadSanitizer
 * needs to follow RCU:
 *
 *  - rcu_assign_pointer() as a release store (liburcu: a write barrier and
 *    a volatile store, which ThreadSanitizer does not see as publishing
 *    what was written before); rcu_dereference() is already an atomic
 *    consume load in liburcu.
 *
 *  - under ThreadSanitizer, rcu_read_unlock() releases, and every call_rcu()
 *    callback acquires, one token (model_rcu_token): a callback runs after
 *    a grace period, so after every read-side critical section that could
 *    still see the object it frees. liburcu's grace periods, its queue of
 *    callbacks and the thread that runs them are not instrumented.
 */
#ifndef MODEL_LINUX_RCUPDATE_H
#define MODEL_LINUX_RCUPDATE_H

#include_next <linux/rcupdate.h>

#undef rcu_assign_pointer
#define rcu_assign_pointer(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELEASE)

#ifdef __SANITIZE_THREAD__
#include <sanitizer/tsan_interface.h>

extern char model_rcu_token;

static inline void model_rcu_read_unlock(void)
{
	__tsan_release(&model_rcu_token);
	urcu_memb_read_unlock();
}
#undef rcu_read_unlock
#define rcu_read_unlock() model_rcu_read_unlock()

/* call_rcu() through a callback that acquires: spf-model.c */
void model_call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *));
#undef call_rcu
#define call_rcu(head, func) model_call_rcu(head, func)
#endif

#endif
