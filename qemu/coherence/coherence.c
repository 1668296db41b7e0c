// SPDX-License-Identifier: GPL-2.0
/*
 * coherence: a QEMU 7.2 TCG plugin that counts the cache lines vCPUs make
 * each other give up, a stand-in for `perf c2c` in TCG guests, which have
 * no PMU. Built by qemu/coherence/Makefile into build/coherence/:
 *
 *   qemu-system-x86_64 ... -plugin build/coherence/coherence.so,map=System.map,out=c2c.txt
 *   qemu-x86_64 -plugin build/coherence/coherence.so,out=c2c.txt ./prog
 *
 * Arguments (NAME=VALUE; an unknown or malformed one fails the install):
 *   out=PATH          write the report to PATH (default: stderr)
 *   map=PATH          a System.map: charge each transfer to the function of
 *                     the instruction that caused it (text symbols T t W w;
 *                     the kernel must run at its link address: no KASLR)
 *   all=on|off        system mode: count user-mode instructions too; off
 *                     counts only instructions at or above
 *                     0xffff800000000000, the kernel's. User mode counts
 *                     everything either way.
 *   top=N             rows of the two top tables (20)
 *   all_lines=on|off  the key-value section lists every line touched, not
 *                     only those with a transfer or an atomic (off; for
 *                     small user-mode programs)
 *   start=boot|marker marker: count nothing until the first phase marker
 *                     (boot: from the start)
 *   model=on|off      the coherence model below (on); off counts no access
 *   insns=on|off      count executed instructions by function (off)
 *
 * Phases. The instruction `xchg %bx,%bx` (bytes 66 87 db, a no-op that
 * no compiler emits), executed in any mode, is a phase marker, recognised
 * at translation time like the atomics: it closes the current phase and
 * starts the next. Phase 0 runs from the start to the first marker, phase
 * N from marker N to marker N+1 or the exit. The report then gives each
 * phase's totals, top functions and top lines (guest/phase-mark executes
 * one). With start=marker phase 0 counts nothing, and the model starts at
 * the first marker with every cache empty.
 *
 * Instructions (insns=on). Each translation block's instructions are
 * charged, by function, to a per-vCPU count as the block starts to run, so
 * the counts need no atomics; an exception inside a block (a user page
 * fault) counts the rest of the block too, a few instructions a fault.
 * With model=off this is all the plugin does, and a guest runs a few
 * times slower than without it, not tens of times: a profile of where
 * instructions go that the guest's clock and host load cannot skew, for
 * guests without a PMU. Functions are those of map= or QEMU's symbols;
 * without a name, all such instructions are one "[unknown]".
 *
 * The model. Memory is 64-byte lines: guest physical addresses in system
 * mode, virtual ones in user mode. Each vCPU has an infinite cache; each
 * line records which vCPUs hold it and which stored to it last. A load by
 * vCPU c is a transfer when c does not hold the line and some vCPU has
 * stored to it: the data comes from another cache (c's copy was
 * invalidated by that store, or c never had one). A store by c is a
 * transfer when any other vCPU holds the line: they give it up. Afterwards
 * c holds the line; after a store, c alone.
 *
 * An atomic read-modify-write (x86: a lock prefix, or xchg with a memory
 * operand, recognised from the instruction's bytes at translation time) is
 * one ownership request. TCG reports its load and its store separately,
 * and another vCPU's access may be reported between the two, so its load
 * is ignored and its store counted, and counted as an atomic; the
 * transfers atomics cause are counted apart too.
 *
 * Each transfer is charged to its line and to the function of the
 * instruction: from map=, else QEMU's symbol for it (user mode, a binary
 * with a symbol table), else the instruction's address in hex.
 *
 * Left out: evictions and capacity. A real cache drops lines and fetches
 * them from memory again, traffic never counted here; and a line dropped
 * before another vCPU asks for it comes from memory there but counts as a
 * transfer here. So the counts are a lower bound on real line traffic,
 * but may overstate cache-to-cache transfers of large working sets (a page
 * cleared on one vCPU long after another freed it). Also left out:
 * prefetchers, store buffers and memory ordering, prefetchw (not an
 * ownership request), DMA and MMIO (device accesses are skipped and
 * counted, as are any QEMU gives no physical address for), the second line
 * an access crosses into (charged to its first), and time: these are
 * events, not cycles. A non-atomic read-modify-write (`addl $1,(%rdi)`) is
 * a load then a store and may count twice where hardware asks for
 * ownership once. A one-vCPU 6.1 guest patches its lock prefixes out at
 * boot, so it has no atomics (and no transfers).
 *
 * Threads: under MTTCG each vCPU is a host thread. Lines live in 256
 * shards by address, each behind its own mutex, so the counts are exact;
 * no state spans two lines. A line's accesses take effect in the order
 * their callbacks take its shard's lock; TCG calls them just after the
 * access, so two racing accesses may be modelled in the other order (the
 * counts are those of a valid interleaving). The lock also makes vCPUs
 * that fight over one line wait for each other, which hands the line over
 * less often than an uninstrumented run would.
 */
#include <errno.h>
#include <glib.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu-plugin-api.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define PROG "coherence"
#define LINE_SHIFT 6
/* Line states are allocated a 4 KiB page (64 lines) at a time. */
#define BLOCK_SHIFT 12
#define LINES_PER_BLOCK (1u << (BLOCK_SHIFT - LINE_SHIFT))
/* The holders of a line are a 64-bit mask. */
#define MAX_VCPUS 64
#define NO_WRITER 0xff
#define KERNEL_START 0xffff800000000000ULL
#define NR_SHARDS 256
#define DEFAULT_TOP 20
/* Markers after the last phase this allows are counted, not obeyed. */
#define MAX_PHASES 64

struct line_state {
	uint64_t holders;	/* bit c: vCPU c has a valid copy */
	uint32_t accesses;	/* saturates at UINT32_MAX */
	uint8_t last_writer;	/* NO_WRITER until the first store */
};

struct block {
	struct line_state line[LINES_PER_BLOCK];
};

/* The transfers of one line that one function caused. */
struct function_charge {
	uint32_t function;
	uint64_t transfers;
	uint64_t atomic_transfers;
};

/* What a line had been charged when marker number @mark ran. */
struct line_mark {
	unsigned int mark;
	uint64_t transfers;
	uint64_t atomic_transfers;
	struct function_charge *charges;
	unsigned int nr_charges;
};

/*
 * A line with a transfer or an atomic: what the report lists. Each marker
 * appends its counts so far to marks[], in marker order, so that a
 * phase's lines are differences, as its functions' are.
 */
struct hot_line {
	uint64_t addr;
	uint64_t transfers;
	uint64_t atomic_transfers;
	uint64_t atomics;
	struct function_charge *charges;
	unsigned int nr_charges;
	struct line_mark *marks;
	unsigned int nr_marks;
};

struct totals {
	uint64_t accesses;
	uint64_t loads;
	uint64_t stores;
	uint64_t transfers;
	uint64_t load_transfers;
	uint64_t store_transfers;
	uint64_t atomics;
	uint64_t atomic_transfers;
	uint64_t io_skipped;
	uint64_t unresolved;	/* no physical address from QEMU */
	uint64_t untracked;	/* by a vCPU index >= MAX_VCPUS */
	unsigned int vcpus;	/* highest vCPU index seen + 1 */
};

/* Aligned so that two shards' locks never share a host cache line. */
struct shard {
	GMutex lock;
	GHashTable *blocks;	/* block number -> struct block */
	GHashTable *hot;	/* line address -> struct hot_line */
	struct totals totals;
} __attribute__((aligned(64)));

/* What the memory callback needs of an instruction, made at translation. */
struct insn_site {
	/*
	 * pc << 1 | atomic: with all=on, one user address holds other code
	 * in another process. The pc's bit 63 is lost, harmlessly: canonical
	 * kernel and user addresses differ in bits 47-62 too.
	 */
	uint64_t key;
	uint32_t function;
	bool atomic;
};

struct symbol {
	uint64_t addr;
	char *name;
};

static struct shard shards[NR_SHARDS];
static bool system_mode;
static bool count_user = true;
static bool list_all_lines;
static unsigned int top_rows = DEFAULT_TOP;
static const char *out_path;
static FILE *out_file;
static const char *map_path;
static struct symbol *symbols;
static size_t nr_symbols;
/* start=marker: nothing is counted before the first marker. */
static bool start_at_marker;
static int counting = 1;	/* read and written with __atomic builtins */
static bool model = true;
static bool count_insns;

/*
 * insns=on: instructions by vCPU and function id. Ids from insn_slots up
 * share the last slot, so that the arrays never move: with map= there
 * are fewer functions than that, and user mode names few.
 */
#define INSN_SLOTS_UNMAPPED 65536
static unsigned int insn_slots;
static uint64_t *insn_counts[MAX_VCPUS];	/* [vcpu][slot], published once */
static GMutex insn_lock;			/* allocating a vCPU's array */

/* A translation block's instructions: runs of one function. */
struct tb_insns {
	uint32_t n;
	struct {
		uint32_t slot;
		uint32_t insns;
	} run[];
};

/*
 * What had been counted when a phase ended: totals and, by function id,
 * transfers. A phase's counts are its end's snapshot less its start's.
 */
struct snapshot {
	struct totals totals;
	uint64_t *transfers;		/* by function id */
	uint64_t *atomic_transfers;
	guint nr_functions;
	uint64_t *insns;		/* insns=on: by slot, insn_slots + 1 */
};

static GMutex phase_lock;
static struct snapshot marks[MAX_PHASES - 1];	/* marker N ends phase N-1 */
static unsigned int nr_marks;
static uint64_t markers_ignored;	/* beyond MAX_PHASES phases */

/*
 * Instruction sites and function names, interned: TBs are translated
 * again after a flush, and the sites must not grow with every translation.
 * Translation is rare next to execution, so one lock is enough.
 */
static GMutex sites_lock;
static GHashTable *sites;		/* &site->key -> struct insn_site */
static GHashTable *function_ids;	/* name -> id + 1 */
static GPtrArray *function_names;	/* id -> name */

static void plugin_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void plugin_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- the model ---- */

/*
 * One access by vCPU @vcpu to a line; true when it takes the line, or its
 * data, from another vCPU's cache.
 */
static bool line_model_access(struct line_state *ls, unsigned int vcpu,
			      bool store)
{
	uint64_t me = 1ULL << vcpu;
	bool transfer;

	if (store) {
		transfer = ls->holders & ~me;
		ls->holders = me;
		ls->last_writer = vcpu;
	} else {
		transfer = !(ls->holders & me) && ls->last_writer != NO_WRITER;
		ls->holders |= me;
	}
	if (ls->accesses != UINT32_MAX)
		ls->accesses++;
	return transfer;
}

static struct shard *shard_of(uint64_t line)
{
	/* Fibonacci hashing of the block number spreads neighbouring pages. */
	uint64_t block = line >> BLOCK_SHIFT;

	return &shards[(block * 0x9e3779b97f4a7c15ULL) >> 56];
}

static struct line_state *line_state_get(struct shard *sh, uint64_t line)
{
	gpointer key = (gpointer)(uintptr_t)(line >> BLOCK_SHIFT);
	struct block *b = g_hash_table_lookup(sh->blocks, key);

	if (!b) {
		b = g_new0(struct block, 1);
		for (unsigned int i = 0; i < LINES_PER_BLOCK; i++)
			b->line[i].last_writer = NO_WRITER;
		g_hash_table_insert(sh->blocks, key, b);
	}
	return &b->line[(line >> LINE_SHIFT) & (LINES_PER_BLOCK - 1)];
}

static struct hot_line *hot_line_get(struct shard *sh, uint64_t line)
{
	struct hot_line *hl = g_hash_table_lookup(sh->hot, &line);

	if (!hl) {
		hl = g_new0(struct hot_line, 1);
		hl->addr = line;
		g_hash_table_insert(sh->hot, &hl->addr, hl);
	}
	return hl;
}

/* A line is touched by few functions: a linear search is enough. */
static void hot_line_charge(struct hot_line *hl, uint32_t function, bool atomic)
{
	struct function_charge *c;
	unsigned int i;

	for (i = 0; i < hl->nr_charges; i++)
		if (hl->charges[i].function == function)
			break;
	if (i == hl->nr_charges) {
		hl->charges = g_renew(struct function_charge, hl->charges, i + 1);
		hl->charges[i] = (struct function_charge){ .function = function };
		hl->nr_charges++;
	}
	c = &hl->charges[i];
	c->transfers++;
	if (atomic)
		c->atomic_transfers++;
}

static void line_access(unsigned int vcpu, uint64_t line, bool store,
			const struct insn_site *site)
{
	struct shard *sh = shard_of(line);
	struct totals *t = &sh->totals;
	struct hot_line *hl = NULL;
	bool transfer;

	g_mutex_lock(&sh->lock);
	if (vcpu >= MAX_VCPUS) {
		t->untracked++;
		goto out;
	}
	if (vcpu >= t->vcpus)
		t->vcpus = vcpu + 1;
	transfer = line_model_access(line_state_get(sh, line), vcpu, store);
	t->accesses++;
	if (store)
		t->stores++;
	else
		t->loads++;
	if (site->atomic) {
		hl = hot_line_get(sh, line);
		hl->atomics++;
		t->atomics++;
	}
	if (!transfer)
		goto out;
	if (!hl)
		hl = hot_line_get(sh, line);
	hl->transfers++;
	t->transfers++;
	if (store)
		t->store_transfers++;
	else
		t->load_transfers++;
	if (site->atomic) {
		hl->atomic_transfers++;
		t->atomic_transfers++;
	}
	hot_line_charge(hl, site->function, site->atomic);
out:
	g_mutex_unlock(&sh->lock);
}

static void memory_accessed(unsigned int vcpu, qemu_plugin_meminfo_t info,
			    uint64_t vaddr, void *userdata)
{
	const struct insn_site *site = userdata;
	bool store = qemu_plugin_mem_is_store(info);
	uint64_t addr = vaddr;
	struct qemu_plugin_hwaddr *hw;
	struct shard *sh;

	if (!__atomic_load_n(&counting, __ATOMIC_RELAXED))
		return;
	/* An atomic is one ownership request: counted once, at its store. */
	if (site->atomic && !store)
		return;
	if (system_mode) {
		/* A virtual address would alias other address spaces' lines. */
		hw = qemu_plugin_get_hwaddr(info, vaddr);
		if (!hw || qemu_plugin_hwaddr_is_io(hw)) {
			sh = shard_of(vaddr);
			g_mutex_lock(&sh->lock);
			if (hw)
				sh->totals.io_skipped++;
			else
				sh->totals.unresolved++;
			g_mutex_unlock(&sh->lock);
			return;
		}
		addr = qemu_plugin_hwaddr_phys_addr(hw);
	}
	line_access(vcpu, addr & ~((1ULL << LINE_SHIFT) - 1), store, site);
}

/* ---- translation: sites, atomics, functions ---- */

/*
 * x86: a lock prefix among the legacy prefixes, or xchg (0x86, 0x87) with
 * a memory operand (ModRM mod != 3), which is locked without a prefix.
 * In 64-bit code a REX byte may sit between the prefixes and the opcode;
 * in 32-bit code 0x40-0x4f are one-byte instructions, never followed by
 * an opcode in the same instruction, so skipping one is harmless there.
 */
static bool x86_insn_is_atomic(const uint8_t *code, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		switch (code[i]) {
		case 0xf0:
			return true;
		case 0xf2: case 0xf3: case 0x2e: case 0x36: case 0x3e:
		case 0x26: case 0x64: case 0x65: case 0x66: case 0x67:
			continue;
		}
		break;
	}
	if (i < len && (code[i] & 0xf0) == 0x40)
		i++;
	return i + 1 < len && (code[i] == 0x86 || code[i] == 0x87) &&
	       (code[i + 1] >> 6) != 3;
}

/* The greatest symbol at or below @pc, or NULL below the first one. */
static const char *symbol_lookup(uint64_t pc)
{
	size_t lo = 0, hi = nr_symbols;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (symbols[mid].addr <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? symbols[lo - 1].name : NULL;
}

/* Called with sites_lock held. */
static uint32_t function_id(const char *name)
{
	gpointer id = g_hash_table_lookup(function_ids, name);

	if (!id) {
		char *copy = g_strdup(name);

		/* The key-value section splits at blanks. */
		g_strdelimit(copy, " \t\n", '_');
		g_ptr_array_add(function_names, copy);
		id = GUINT_TO_POINTER(function_names->len);
		g_hash_table_insert(function_ids, copy, id);
	}
	return GPOINTER_TO_UINT(id) - 1;
}

static const char *function_name(const struct qemu_plugin_insn *insn,
				 uint64_t pc, char *buf, size_t size)
{
	const char *name;

	if (map_path) {
		if (system_mode && pc < KERNEL_START)
			return "[user]";
		name = symbol_lookup(pc);
		return name ? name : "[unknown]";
	}
	name = qemu_plugin_insn_symbol(insn);
	if (name && *name)
		return name;
	snprintf(buf, size, "0x%" PRIx64, pc);
	return buf;
}

static struct insn_site *insn_site_get(const struct qemu_plugin_insn *insn)
{
	uint64_t pc = qemu_plugin_insn_vaddr(insn);
	bool atomic = x86_insn_is_atomic(qemu_plugin_insn_data(insn),
					 qemu_plugin_insn_size(insn));
	uint64_t key = pc << 1 | atomic;
	struct insn_site *site;
	char buf[32];

	g_mutex_lock(&sites_lock);
	site = g_hash_table_lookup(sites, &key);
	if (!site) {
		site = g_new0(struct insn_site, 1);
		site->key = key;
		site->atomic = atomic;
		site->function = function_id(function_name(insn, pc, buf, sizeof(buf)));
		g_hash_table_insert(sites, &site->key, site);
	}
	g_mutex_unlock(&sites_lock);
	return site;
}

/* The phase marker: xchg %bx,%bx, exactly. */
static bool x86_insn_is_marker(const uint8_t *code, size_t len)
{
	return len == 3 && code[0] == 0x66 && code[1] == 0x87 && code[2] == 0xdb;
}

static void snapshot_take(struct snapshot *snap, int mark);
static void totals_add(struct totals *sum, const struct totals *t);

/* A marker executed: the current phase ends here. */
static void marker_executed(unsigned int vcpu, void *userdata)
{
	g_mutex_lock(&phase_lock);
	if (nr_marks < G_N_ELEMENTS(marks)) {
		snapshot_take(&marks[nr_marks], nr_marks);
		nr_marks++;
		__atomic_store_n(&counting, 1, __ATOMIC_RELAXED);
	} else {
		markers_ignored++;
	}
	g_mutex_unlock(&phase_lock);
}

/* vCPU @vcpu's instruction counts, allocated on its first block. */
static uint64_t *insn_counts_of(unsigned int vcpu)
{
	uint64_t *c = __atomic_load_n(&insn_counts[vcpu], __ATOMIC_ACQUIRE);

	if (c)
		return c;
	g_mutex_lock(&insn_lock);
	c = insn_counts[vcpu];
	if (!c) {
		c = g_new0(uint64_t, insn_slots + 1);
		__atomic_store_n(&insn_counts[vcpu], c, __ATOMIC_RELEASE);
	}
	g_mutex_unlock(&insn_lock);
	return c;
}

/*
 * Only vCPU @vcpu writes its counts; a marker on another vCPU reads them,
 * hence the relaxed atomic store (a plain one on x86).
 */
static void tb_executed(unsigned int vcpu, void *userdata)
{
	const struct tb_insns *t = userdata;
	uint64_t *c;

	if (!__atomic_load_n(&counting, __ATOMIC_RELAXED) || vcpu >= MAX_VCPUS)
		return;
	c = insn_counts_of(vcpu);
	for (uint32_t i = 0; i < t->n; i++) {
		uint64_t *slot = &c[t->run[i].slot];

		__atomic_store_n(slot, *slot + t->run[i].insns, __ATOMIC_RELAXED);
	}
}

/* The count slot of an instruction's function; sites_lock held. */
static uint32_t insn_slot(const struct qemu_plugin_insn *insn, uint64_t pc)
{
	const char *name;
	uint32_t id;

	if (map_path)
		name = system_mode && pc < KERNEL_START ? "[user]" : symbol_lookup(pc);
	else
		name = qemu_plugin_insn_symbol(insn);
	id = function_id(name && *name ? name : "[unknown]");
	return id < insn_slots ? id : insn_slots;
}

/*
 * insns=on: the block's runs of instructions by function, counted as it
 * starts. QEMU 7.2 says nothing when it drops a block, so each
 * translation's runs are kept to the end: a few bytes a block.
 */
static void tb_insns_register(struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	struct tb_insns *t = g_malloc(sizeof(*t) + n * sizeof(t->run[0]));

	t->n = 0;
	g_mutex_lock(&sites_lock);
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint64_t pc = qemu_plugin_insn_vaddr(insn);
		uint32_t slot;

		if (!count_user && pc < KERNEL_START)
			continue;
		slot = insn_slot(insn, pc);
		if (t->n && t->run[t->n - 1].slot == slot) {
			t->run[t->n - 1].insns++;
		} else {
			t->run[t->n].slot = slot;
			t->run[t->n++].insns = 1;
		}
	}
	g_mutex_unlock(&sites_lock);
	if (!t->n) {
		g_free(t);
		return;
	}
	qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_executed, QEMU_PLUGIN_CB_NO_REGS, t);
}

static void tb_translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);

	if (count_insns)
		tb_insns_register(tb);

	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

		/* In any mode: the marker runs in user mode in a guest. */
		if (x86_insn_is_marker(qemu_plugin_insn_data(insn),
				       qemu_plugin_insn_size(insn)))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, marker_executed,
							       QEMU_PLUGIN_CB_NO_REGS,
							       NULL);
		if (!model || (!count_user && qemu_plugin_insn_vaddr(insn) < KERNEL_START))
			continue;
		qemu_plugin_register_vcpu_mem_cb(insn, memory_accessed,
						 QEMU_PLUGIN_CB_NO_REGS,
						 QEMU_PLUGIN_MEM_RW,
						 insn_site_get(insn));
	}
}

/* ---- the report ---- */

struct function_total {
	uint32_t function;
	uint64_t transfers;
	uint64_t atomic_transfers;
};

static int compare_hot_lines(const void *a, const void *b)
{
	const struct hot_line *x = *(struct hot_line *const *)a;
	const struct hot_line *y = *(struct hot_line *const *)b;

	if (x->transfers != y->transfers)
		return x->transfers < y->transfers ? 1 : -1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int compare_function_totals(const void *a, const void *b)
{
	const struct function_total *x = a, *y = b;

	if (x->transfers != y->transfers)
		return x->transfers < y->transfers ? 1 : -1;
	return strcmp(function_names->pdata[x->function],
		      function_names->pdata[y->function]);
}

static void totals_add(struct totals *sum, const struct totals *t)
{
	sum->accesses += t->accesses;
	sum->loads += t->loads;
	sum->stores += t->stores;
	sum->transfers += t->transfers;
	sum->load_transfers += t->load_transfers;
	sum->store_transfers += t->store_transfers;
	sum->atomics += t->atomics;
	sum->atomic_transfers += t->atomic_transfers;
	sum->io_skipped += t->io_skipped;
	sum->unresolved += t->unresolved;
	sum->untracked += t->untracked;
	if (t->vcpus > sum->vcpus)
		sum->vcpus = t->vcpus;
}

/*
 * Everything counted so far, with every shard locked (the caller holds
 * none): the totals and the transfers by function, summed over the hot
 * lines' charges. Costs a walk over the lines with transfers: markers are
 * few.
 */
/* Line @hl's counts as marker @mark ran, on the line's own marks[]. */
static void hot_line_mark(struct hot_line *hl, unsigned int mark)
{
	struct line_mark *lm;

	hl->marks = g_renew(struct line_mark, hl->marks, hl->nr_marks + 1);
	lm = &hl->marks[hl->nr_marks++];
	*lm = (struct line_mark){
		.mark = mark,
		.transfers = hl->transfers,
		.atomic_transfers = hl->atomic_transfers,
		.charges = g_memdup2(hl->charges, hl->nr_charges * sizeof(*hl->charges)),
		.nr_charges = hl->nr_charges,
	};
}

/*
 * The counts so far; @mark >= 0: for marker number @mark, whose lines
 * with transfers also record theirs (the report's phase lines).
 */
static void snapshot_take(struct snapshot *snap, int mark)
{
	*snap = (struct snapshot){ 0 };
	for (unsigned int i = 0; i < NR_SHARDS; i++)
		g_mutex_lock(&shards[i].lock);
	/* Every charge so far is to a function that existed before now. */
	g_mutex_lock(&sites_lock);
	snap->nr_functions = function_names->len;
	g_mutex_unlock(&sites_lock);
	snap->transfers = g_new0(uint64_t, snap->nr_functions);
	snap->atomic_transfers = g_new0(uint64_t, snap->nr_functions);
	for (unsigned int i = 0; i < NR_SHARDS; i++) {
		GHashTableIter it;
		gpointer value;

		totals_add(&snap->totals, &shards[i].totals);
		g_hash_table_iter_init(&it, shards[i].hot);
		while (g_hash_table_iter_next(&it, NULL, &value)) {
			struct hot_line *hl = value;

			for (unsigned int c = 0; c < hl->nr_charges; c++) {
				uint32_t f = hl->charges[c].function;

				snap->transfers[f] += hl->charges[c].transfers;
				snap->atomic_transfers[f] += hl->charges[c].atomic_transfers;
			}
			if (mark >= 0 && hl->transfers)
				hot_line_mark(hl, mark);
		}
	}
	for (unsigned int i = NR_SHARDS; i-- > 0;)
		g_mutex_unlock(&shards[i].lock);
	if (!count_insns)
		return;
	snap->insns = g_new0(uint64_t, insn_slots + 1);
	for (unsigned int c = 0; c < MAX_VCPUS; c++) {
		const uint64_t *counts = __atomic_load_n(&insn_counts[c], __ATOMIC_ACQUIRE);

		for (unsigned int f = 0; counts && f <= insn_slots; f++)
			snap->insns[f] += __atomic_load_n(&counts[f], __ATOMIC_RELAXED);
	}
}

static void snapshot_free(struct snapshot *snap)
{
	g_free(snap->transfers);
	g_free(snap->atomic_transfers);
	g_free(snap->insns);
}

static const char *top_function(const struct hot_line *hl, uint64_t *transfers)
{
	const struct function_charge *best = NULL;

	for (unsigned int i = 0; i < hl->nr_charges; i++)
		if (!best || hl->charges[i].transfers > best->transfers)
			best = &hl->charges[i];
	*transfers = best ? best->transfers : 0;
	return best ? function_names->pdata[best->function] : "-";
}

static uint32_t line_accesses(uint64_t line)
{
	struct shard *sh = shard_of(line);
	gpointer key = (gpointer)(uintptr_t)(line >> BLOCK_SHIFT);
	struct block *b = g_hash_table_lookup(sh->blocks, key);

	return b ? b->line[(line >> LINE_SHIFT) & (LINES_PER_BLOCK - 1)].accesses : 0;
}

static double percent(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * part / whole : 0.0;
}

static void banner(GString *s, const char *title)
{
	g_string_append(s, "=================================================\n");
	g_string_append_printf(s, "  %s\n", title);
	g_string_append(s, "=================================================\n");
}

#define ROW(s, label, fmt, ...) \
	g_string_append_printf(s, "  %-36s: " fmt "\n", label, __VA_ARGS__)

/* Everything the report says, gathered from the shards at exit. */
struct report {
	struct totals totals;
	uint64_t lines_touched;
	uint64_t lines_with_transfers;
	struct function_total *functions;	/* by transfers, descending */
	size_t nr_functions;
	struct hot_line **lines;		/* by transfers, descending */
	size_t nr_lines;
	/* Phase k runs from ends[k - 1] (zero for k = 0) to ends[k]. */
	const struct snapshot *ends;
	unsigned int nr_phases;
};

/* The totals each phase reports, by key. */
static const struct {
	const char *key;
	size_t offset;
} phase_keys[] = {
	{ "accesses", offsetof(struct totals, accesses) },
	{ "loads", offsetof(struct totals, loads) },
	{ "stores", offsetof(struct totals, stores) },
	{ "transfers", offsetof(struct totals, transfers) },
	{ "load_transfers", offsetof(struct totals, load_transfers) },
	{ "store_transfers", offsetof(struct totals, store_transfers) },
	{ "atomics", offsetof(struct totals, atomics) },
	{ "atomic_transfers", offsetof(struct totals, atomic_transfers) },
};

static uint64_t *total_at(struct totals *t, size_t offset)
{
	return (uint64_t *)((char *)t + offset);
}

/* Phase k's counts: the difference of two snapshots. */
static void phase_totals(const struct report *r, unsigned int k, struct totals *t)
{
	struct totals end = r->ends[k].totals;
	struct totals start = { 0 };

	if (k)
		start = r->ends[k - 1].totals;
	*t = (struct totals){ 0 };
	for (size_t i = 0; i < G_N_ELEMENTS(phase_keys); i++) {
		size_t off = phase_keys[i].offset;

		*total_at(t, off) = *total_at(&end, off) - *total_at(&start, off);
	}
}

/* Phase k's functions with transfers, by transfers descending. */
static size_t phase_functions(const struct report *r, unsigned int k,
			      struct function_total **out)
{
	const struct snapshot *end = &r->ends[k];
	const struct snapshot *start = k ? &r->ends[k - 1] : NULL;
	struct function_total *ft = g_new0(struct function_total, end->nr_functions + 1);
	size_t n = 0;

	for (guint f = 0; f < end->nr_functions; f++) {
		bool before = start && f < start->nr_functions;
		uint64_t tr = end->transfers[f] - (before ? start->transfers[f] : 0);
		uint64_t at = end->atomic_transfers[f] - (before ? start->atomic_transfers[f] : 0);

		if (tr)
			ft[n++] = (struct function_total){ f, tr, at };
	}
	if (n)
		qsort(ft, n, sizeof(*ft), compare_function_totals);
	*out = ft;
	return n;
}

struct insn_total {
	const char *name;
	uint64_t insns;
};

static int compare_insn_totals(const void *a, const void *b)
{
	const struct insn_total *x = a, *y = b;

	if (x->insns != y->insns)
		return x->insns < y->insns ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* Phase k's functions with instructions, by instructions descending. */
static size_t phase_insns(const struct report *r, unsigned int k,
			  struct insn_total **out, uint64_t *total)
{
	const uint64_t *end = r->ends[k].insns;
	const uint64_t *start = k ? r->ends[k - 1].insns : NULL;
	struct insn_total *it = g_new0(struct insn_total, insn_slots + 1);
	size_t n = 0;

	*total = 0;
	for (unsigned int f = 0; f <= insn_slots; f++) {
		uint64_t x = end[f] - (start ? start[f] : 0);

		if (!x)
			continue;
		*total += x;
		it[n++] = (struct insn_total){
			f < insn_slots ? (const char *)function_names->pdata[f] : "[other]", x
		};
	}
	if (n)
		qsort(it, n, sizeof(*it), compare_insn_totals);
	*out = it;
	return n;
}

/* insns=on: each phase's instructions and its top functions by them. */
static void report_insns(GString *s, const struct report *r)
{
	unsigned int rows = top_rows < 10 ? top_rows : 10;

	if (!count_insns)
		return;
	g_string_append(s, "\n");
	banner(s, "Instructions by function (insns=on)");
	for (unsigned int k = 0; k < r->nr_phases; k++) {
		struct insn_total *it;
		uint64_t total;
		size_t n = phase_insns(r, k, &it, &total);

		g_string_append_printf(s, "  Phase %u: %" PRIu64 " instructions\n", k, total);
		for (size_t i = 0; i < n && i < rows; i++)
			g_string_append_printf(s, "  %14" PRIu64 " %6.2f%%  %s\n", it[i].insns,
					       percent(it[i].insns, total), it[i].name);
		g_free(it);
	}
}

static void report_summary(GString *s, const struct report *r)
{
	const struct totals *t = &r->totals;

	banner(s, model ? "Coherence simulation summary" : "Instruction count summary");
	ROW(s, "Lines by", "%s",
	    system_mode ? "guest physical address" : "guest virtual address");
	ROW(s, "Instructions counted", "%s", count_user ? "all" : "kernel only");
	ROW(s, "Functions from", "%s",
	    map_path ? map_path : "QEMU's symbols, else addresses");
	ROW(s, "Memory model", "%s", model ? "on" : "off (model=off)");
	ROW(s, "Instructions by function", "%s", count_insns ? "on (insns=on)" : "off");
	if (!model)
		return;
	ROW(s, "vCPUs seen", "%u", t->vcpus);
	ROW(s, "Accesses counted", "%" PRIu64, t->accesses);
	ROW(s, "  Loads", "%" PRIu64, t->loads);
	ROW(s, "  Stores (atomics once)", "%" PRIu64, t->stores);
	ROW(s, "Transfers", "%" PRIu64, t->transfers);
	ROW(s, "  Loads of lines stored elsewhere", "%" PRIu64, t->load_transfers);
	ROW(s, "  Stores to lines held elsewhere", "%" PRIu64, t->store_transfers);
	ROW(s, "Atomic read-modify-writes", "%" PRIu64, t->atomics);
	ROW(s, "  Transfers by atomics", "%" PRIu64, t->atomic_transfers);
	ROW(s, "Lines touched", "%" PRIu64, r->lines_touched);
	ROW(s, "Lines with transfers", "%" PRIu64, r->lines_with_transfers);
	ROW(s, "MMIO accesses (not modelled)", "%" PRIu64, t->io_skipped);
	ROW(s, "No physical address (skipped)", "%" PRIu64, t->unresolved);
	ROW(s, "Accesses by vCPU >= 64 (dropped)", "%" PRIu64, t->untracked);
}

static void report_phases(GString *s, const struct report *r)
{
	if (r->nr_phases < 2 && !start_at_marker)
		return;
	g_string_append(s, "\n");
	banner(s, "Phases (between xchg %bx,%bx markers)");
	g_string_append_printf(s, "  %5s %14s %12s %12s %12s  %s\n", "Phase",
			       "Accesses", "Transfers", "Atomics", "Atomic tr.",
			       "Top function (its transfers)");
	for (unsigned int k = 0; k < r->nr_phases; k++) {
		struct totals t;
		struct function_total *ft;
		size_t n = phase_functions(r, k, &ft);

		phase_totals(r, k, &t);
		g_string_append_printf(s, "  %5u %14" PRIu64 " %12" PRIu64 " %12" PRIu64
				       " %12" PRIu64 "  %s (%" PRIu64 ")\n", k,
				       t.accesses, t.transfers, t.atomics, t.atomic_transfers,
				       n ? (char *)function_names->pdata[ft[0].function] : "-",
				       n ? ft[0].transfers : 0);
		g_free(ft);
	}
	if (start_at_marker)
		g_string_append(s, "  (start=marker: phase 0 is not counted)\n");
	if (markers_ignored)
		g_string_append_printf(s, "  (%" PRIu64 " markers after the %u-th ignored)\n",
				       markers_ignored, MAX_PHASES - 1);
}

static void report_functions(GString *s, const struct report *r)
{
	const struct function_total *ft = r->functions;
	char title[64];

	snprintf(title, sizeof(title), "Top %u functions by transfers", top_rows);
	g_string_append(s, "\n");
	banner(s, title);
	g_string_append_printf(s, "  %12s %7s %12s  %s\n", "Transfers", "Share",
			       "Atomic", "Function");
	for (size_t i = 0; i < r->nr_functions && i < top_rows && ft[i].transfers; i++)
		g_string_append_printf(s, "  %12" PRIu64 " %6.2f%% %12" PRIu64 "  %s\n",
				       ft[i].transfers,
				       percent(ft[i].transfers, r->totals.transfers),
				       ft[i].atomic_transfers,
				       (char *)function_names->pdata[ft[i].function]);
}

static void report_lines(GString *s, const struct report *r)
{
	char title[64];

	snprintf(title, sizeof(title), "Top %u lines by transfers", top_rows);
	g_string_append(s, "\n");
	banner(s, title);
	g_string_append_printf(s, "  %-18s %12s %12s %12s %12s  %s\n", "Line",
			       "Transfers", "Atomic", "Atomics", "Accesses",
			       "Top function (its transfers)");
	for (size_t i = 0; i < r->nr_lines && i < top_rows && r->lines[i]->transfers; i++) {
		const struct hot_line *hl = r->lines[i];
		uint64_t fn_transfers;
		const char *fn = top_function(hl, &fn_transfers);

		g_string_append_printf(s, "  0x%016" PRIx64 " %12" PRIu64 " %12" PRIu64
				       " %12" PRIu64 " %12" PRIu32 "  %s (%" PRIu64 ")\n",
				       hl->addr, hl->transfers, hl->atomic_transfers,
				       hl->atomics, line_accesses(hl->addr), fn,
				       fn_transfers);
	}
}

static void key_value_line(GString *s, uint64_t addr, uint32_t accesses,
			   const struct hot_line *hl)
{
	uint64_t fn_transfers;
	const char *fn = hl ? top_function(hl, &fn_transfers) : "-";

	g_string_append_printf(s, "line 0x%" PRIx64 " accesses %" PRIu32
			       " transfers %" PRIu64 " atomic_transfers %" PRIu64
			       " atomics %" PRIu64 " top_function %s\n",
			       addr, accesses, hl ? hl->transfers : 0,
			       hl ? hl->atomic_transfers : 0, hl ? hl->atomics : 0, fn);
}

struct block_ref {
	uint64_t number;
	const struct block *block;
	GHashTable *hot;
};

static int compare_block_refs(const void *a, const void *b)
{
	const struct block_ref *x = a, *y = b;

	return x->number < y->number ? -1 : x->number > y->number;
}

/* all_lines=on: every line touched, in address order. */
static void key_value_all_lines(GString *s)
{
	GArray *refs = g_array_new(FALSE, FALSE, sizeof(struct block_ref));

	for (unsigned int i = 0; i < NR_SHARDS; i++) {
		GHashTableIter it;
		gpointer key, value;

		g_hash_table_iter_init(&it, shards[i].blocks);
		while (g_hash_table_iter_next(&it, &key, &value)) {
			struct block_ref r = { (uintptr_t)key, value, shards[i].hot };

			g_array_append_val(refs, r);
		}
	}
	if (refs->len)
		qsort(refs->data, refs->len, sizeof(struct block_ref), compare_block_refs);
	for (guint i = 0; i < refs->len; i++) {
		const struct block_ref *r = &g_array_index(refs, struct block_ref, i);

		for (unsigned int l = 0; l < LINES_PER_BLOCK; l++) {
			uint64_t addr = r->number << BLOCK_SHIFT | (uint64_t)l << LINE_SHIFT;

			if (r->block->line[l].accesses)
				key_value_line(s, addr, r->block->line[l].accesses,
					       g_hash_table_lookup(r->hot, &addr));
		}
	}
	g_array_free(refs, TRUE);
}

/* Line @hl's record of marker number @mark; NULL: it had no transfer then. */
static const struct line_mark *line_mark_at(const struct hot_line *hl, unsigned int mark)
{
	for (unsigned int i = 0; i < hl->nr_marks; i++)
		if (hl->marks[i].mark == mark)
			return &hl->marks[i];
	return NULL;
}

/* One line's transfers in one phase, and the function that caused most. */
struct phase_line {
	const struct hot_line *hl;
	uint64_t transfers;
	uint64_t atomic_transfers;
	uint32_t function;
};

static int compare_phase_lines(const void *a, const void *b)
{
	const struct phase_line *x = a, *y = b;

	if (x->transfers != y->transfers)
		return x->transfers < y->transfers ? 1 : -1;
	return x->hl->addr < y->hl->addr ? -1 : x->hl->addr > y->hl->addr;
}

/* The function with most of a line's transfers between two records. */
static uint32_t charges_top(const struct function_charge *end, unsigned int nr_end,
			    const struct line_mark *start)
{
	uint64_t best = 0;
	uint32_t top = 0;

	for (unsigned int i = 0; i < nr_end; i++) {
		uint64_t before = 0;

		for (unsigned int j = 0; start && j < start->nr_charges; j++)
			if (start->charges[j].function == end[i].function)
				before = start->charges[j].transfers;
		if (end[i].transfers - before > best) {
			best = end[i].transfers - before;
			top = end[i].function;
		}
	}
	return top;
}

/*
 * Phase k's lines with transfers, by transfers descending: phase k ends
 * at marker number k (the last phase: now) and starts at marker k - 1.
 */
static size_t phase_lines(const struct report *r, unsigned int k, struct phase_line **out)
{
	struct phase_line *pl = g_new0(struct phase_line, r->nr_lines + 1);
	bool last = k + 1 == r->nr_phases;
	size_t n = 0;

	for (size_t i = 0; i < r->nr_lines; i++) {
		const struct hot_line *hl = r->lines[i];
		const struct line_mark *end = last ? NULL : line_mark_at(hl, k);
		const struct line_mark *start = k ? line_mark_at(hl, k - 1) : NULL;
		uint64_t tr = last ? hl->transfers : end ? end->transfers : 0;
		uint64_t at = last ? hl->atomic_transfers : end ? end->atomic_transfers : 0;

		if (start) {
			tr -= start->transfers;
			at -= start->atomic_transfers;
		}
		if (!tr)
			continue;
		pl[n++] = (struct phase_line){
			.hl = hl, .transfers = tr, .atomic_transfers = at,
			.function = last ? charges_top(hl->charges, hl->nr_charges, start) :
					   charges_top(end->charges, end->nr_charges, start),
		};
	}
	if (n)
		qsort(pl, n, sizeof(*pl), compare_phase_lines);
	*out = pl;
	return n;
}

/*
 * insns=on: "phase.K.insns N", the phase's instructions, and up to top=
 * rows "phase.K.insn_function NAME N".
 */
static void key_value_phase_insns(GString *s, const struct report *r, unsigned int k)
{
	struct insn_total *it;
	uint64_t total;
	size_t n = phase_insns(r, k, &it, &total);

	g_string_append_printf(s, "phase.%u.insns %" PRIu64 "\n", k, total);
	for (size_t i = 0; i < n && i < top_rows; i++)
		g_string_append_printf(s, "phase.%u.insn_function %s %" PRIu64 "\n", k,
				       it[i].name, it[i].insns);
	g_free(it);
}

/*
 * Per phase: "phases N" and "start boot|marker", then for each phase K
 * (insns=on: its instructions first, key_value_phase_insns();
 * model=off: only those) "phase.K.KEY VALUE" totals, up to top= rows "phase.K.function NAME
 * transfers N atomic_transfers N" and up to top= rows "phase.K.line ADDR
 * transfers N atomic_transfers N top_function NAME" (the function with
 * most of the line's transfers in the phase).
 */
static void key_value_phases(GString *s, const struct report *r)
{
	g_string_append_printf(s, "start %s\nphases %u\nmarkers_ignored %" PRIu64 "\n",
			       start_at_marker ? "marker" : "boot", r->nr_phases,
			       markers_ignored);
	for (unsigned int k = 0; k < r->nr_phases; k++) {
		struct totals t;
		struct function_total *ft;
		struct phase_line *pl;
		size_t n = phase_functions(r, k, &ft);

		if (count_insns)
			key_value_phase_insns(s, r, k);
		if (!model) {
			g_free(ft);
			continue;
		}
		phase_totals(r, k, &t);
		for (size_t i = 0; i < G_N_ELEMENTS(phase_keys); i++)
			g_string_append_printf(s, "phase.%u.%s %" PRIu64 "\n", k,
					       phase_keys[i].key,
					       *total_at(&t, phase_keys[i].offset));
		for (size_t i = 0; i < n && i < top_rows; i++)
			g_string_append_printf(s, "phase.%u.function %s transfers %" PRIu64
					       " atomic_transfers %" PRIu64 "\n", k,
					       (char *)function_names->pdata[ft[i].function],
					       ft[i].transfers, ft[i].atomic_transfers);
		g_free(ft);
		n = phase_lines(r, k, &pl);
		for (size_t i = 0; i < n && i < top_rows; i++)
			g_string_append_printf(s, "phase.%u.line 0x%" PRIx64 " transfers %" PRIu64
					       " atomic_transfers %" PRIu64 " top_function %s\n",
					       k, pl[i].hl->addr, pl[i].transfers,
					       pl[i].atomic_transfers,
					       (char *)function_names->pdata[pl[i].function]);
		g_free(pl);
	}
}

/*
 * The key-value section, for tools: "KEY VALUE" totals, then a row per
 * function with transfers ("function NAME transfers N atomic_transfers
 * N") and a row per line of the top table, or per line touched with
 * all_lines=on ("line ADDR accesses N transfers N atomic_transfers N
 * atomics N top_function NAME"), fields after the name as KEY VALUE
 * pairs. Not every line by default: in a guest, lines with transfers run
 * to millions (every page freed on one vCPU and cleared on another).
 */
static void report_key_values(GString *s, const struct report *r)
{
	const struct totals *t = &r->totals;
	const struct { const char *key; uint64_t value; } kv[] = {
		{ "vcpus", t->vcpus },
		{ "accesses", t->accesses },
		{ "loads", t->loads },
		{ "stores", t->stores },
		{ "transfers", t->transfers },
		{ "load_transfers", t->load_transfers },
		{ "store_transfers", t->store_transfers },
		{ "atomics", t->atomics },
		{ "atomic_transfers", t->atomic_transfers },
		{ "io_skipped", t->io_skipped },
		{ "unresolved", t->unresolved },
		{ "untracked", t->untracked },
		{ "lines_touched", r->lines_touched },
		{ "lines_with_transfers", r->lines_with_transfers },
	};
	const struct function_total *ft = r->functions;

	g_string_append(s, "\n");
	banner(s, "Key-value section (coherence format 1)");
	g_string_append_printf(s, "format coherence-1\nmode %s\ncounted %s\nmodel %s\ninsns %s\n",
			       system_mode ? "system" : "user",
			       count_user ? "all" : "kernel",
			       model ? "on" : "off", count_insns ? "on" : "off");
	for (size_t i = 0; i < G_N_ELEMENTS(kv) && model; i++)
		g_string_append_printf(s, "%s %" PRIu64 "\n", kv[i].key, kv[i].value);
	for (size_t i = 0; i < r->nr_functions && ft[i].transfers; i++)
		g_string_append_printf(s, "function %s transfers %" PRIu64
				       " atomic_transfers %" PRIu64 "\n",
				       (char *)function_names->pdata[ft[i].function],
				       ft[i].transfers, ft[i].atomic_transfers);
	key_value_phases(s, r);
	if (!model)
		return;
	if (list_all_lines) {
		key_value_all_lines(s);
		return;
	}
	for (size_t i = 0; i < r->nr_lines && i < top_rows && r->lines[i]->transfers; i++)
		key_value_line(s, r->lines[i]->addr, line_accesses(r->lines[i]->addr),
			       r->lines[i]);
}

/*
 * Without out=, stderr itself: qemu_plugin_outs() writes to QEMU's log,
 * which 7.2 shows only under -d plugin.
 */
static void report_write(const GString *s)
{
	FILE *f = out_file ? out_file : stderr;
	const char *path = out_file ? out_path : "stderr";

	if (fwrite(s->str, 1, s->len, f) != s->len || fflush(f) ||
	    (out_file && fclose(out_file)))
		plugin_error("writing %s: %s", path, strerror(errno));
	out_file = NULL;
}

/* Sums the shards' totals, lines and functions; shard locks held. */
static void report_gather(struct report *r, GPtrArray *hot)
{
	struct function_total *ft = g_new0(struct function_total, function_names->len);

	for (guint f = 0; f < function_names->len; f++)
		ft[f].function = f;
	for (unsigned int i = 0; i < NR_SHARDS; i++) {
		GHashTableIter it;
		gpointer value;

		totals_add(&r->totals, &shards[i].totals);
		g_hash_table_iter_init(&it, shards[i].blocks);
		while (g_hash_table_iter_next(&it, NULL, &value))
			for (unsigned int l = 0; l < LINES_PER_BLOCK; l++)
				r->lines_touched += ((struct block *)value)->line[l].accesses != 0;
		g_hash_table_iter_init(&it, shards[i].hot);
		while (g_hash_table_iter_next(&it, NULL, &value)) {
			struct hot_line *hl = value;

			g_ptr_array_add(hot, hl);
			r->lines_with_transfers += hl->transfers != 0;
			for (unsigned int c = 0; c < hl->nr_charges; c++) {
				struct function_total *f = &ft[hl->charges[c].function];

				f->transfers += hl->charges[c].transfers;
				f->atomic_transfers += hl->charges[c].atomic_transfers;
			}
		}
	}
	qsort(ft, function_names->len, sizeof(*ft), compare_function_totals);
	if (hot->len)
		qsort(hot->pdata, hot->len, sizeof(gpointer), compare_hot_lines);
	r->functions = ft;
	r->nr_functions = function_names->len;
	r->lines = (struct hot_line **)hot->pdata;
	r->nr_lines = hot->len;
}

/*
 * At exit the vCPUs are stopped, but the shard locks are taken anyway:
 * they cost nothing here and keep the report right if that ever changes.
 */
static void report_at_exit(qemu_plugin_id_t id, void *userdata)
{
	struct report r = { 0 };
	GPtrArray *hot = g_ptr_array_new();
	GString *s = g_string_new(NULL);
	struct snapshot *ends;

	/* The markers' snapshots and the last phase's end, now. */
	g_mutex_lock(&phase_lock);
	ends = g_new0(struct snapshot, nr_marks + 1);
	memcpy(ends, marks, nr_marks * sizeof(*ends));
	snapshot_take(&ends[nr_marks], -1);
	r.ends = ends;
	r.nr_phases = nr_marks + 1;
	for (unsigned int i = 0; i < NR_SHARDS; i++)
		g_mutex_lock(&shards[i].lock);
	report_gather(&r, hot);
	report_summary(s, &r);
	if (model)
		report_phases(s, &r);
	report_insns(s, &r);
	if (model) {
		report_functions(s, &r);
		report_lines(s, &r);
	}
	report_key_values(s, &r);
	for (unsigned int i = 0; i < NR_SHARDS; i++)
		g_mutex_unlock(&shards[i].lock);
	g_mutex_unlock(&phase_lock);
	report_write(s);
	g_string_free(s, TRUE);
	g_ptr_array_free(hot, TRUE);
	g_free(r.functions);
	snapshot_free(&ends[nr_marks]);
	g_free(ends);
}

/* ---- installation ---- */

/* By address; aliases by name, so that the one a lookup finds is fixed. */
static int compare_symbols(const void *a, const void *b)
{
	const struct symbol *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* One "ADDRESS TYPE NAME" line; false when it is not one. */
static bool parse_map_line(char *line, uint64_t *addr, char *type, char **name)
{
	char *end;

	errno = 0;
	*addr = strtoull(line, &end, 16);
	if (end == line || errno || *end != ' ' || !end[1] || end[2] != ' ')
		return false;
	*type = end[1];
	*name = end + 3;
	(*name)[strcspn(*name, " \t\n")] = '\0';
	return **name != '\0';
}

/* The text symbols of a System.map (nm's format), sorted by address. */
static bool load_map(const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, allocated = 0;
	unsigned int lineno = 0;
	bool ok = true;

	if (!f) {
		plugin_error("map %s: %s", path, strerror(errno));
		return false;
	}
	while (getline(&line, &cap, f) > 0) {
		uint64_t addr;
		char type, *name;

		lineno++;
		if (!parse_map_line(line, &addr, &type, &name)) {
			plugin_error("map %s:%u: not 'ADDRESS TYPE NAME'", path, lineno);
			ok = false;
			break;
		}
		if (!strchr("TtWw", type))
			continue;
		if (nr_symbols == allocated) {
			allocated = allocated ? 2 * allocated : 4096;
			symbols = g_renew(struct symbol, symbols, allocated);
		}
		symbols[nr_symbols++] = (struct symbol){ addr, g_strdup(name) };
	}
	if (ok && ferror(f)) {
		plugin_error("map %s: %s", path, strerror(errno));
		ok = false;
	}
	if (ok && !nr_symbols) {
		plugin_error("map %s: no text symbols (types T, t, W, w)", path);
		ok = false;
	}
	free(line);
	fclose(f);
	if (ok)
		qsort(symbols, nr_symbols, sizeof(*symbols), compare_symbols);
	return ok;
}

static bool parse_bool(const char *arg, const char *value, bool *result)
{
	if (!strcmp(value, "on") || !strcmp(value, "off")) {
		*result = !strcmp(value, "on");
		return true;
	}
	plugin_error("%s: expected on or off", arg);
	return false;
}

static bool parse_top(const char *arg, const char *value)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(value, &end, 10);
	if (errno || end == value || *end || *value == '-' || n < 1 || n > 100000) {
		plugin_error("%s: expected a number of rows from 1 to 100000", arg);
		return false;
	}
	top_rows = n;
	return true;
}

static bool parse_path(const char *arg, const char *value, const char **path)
{
	if (!*value) {
		plugin_error("%s: a path is needed", arg);
		return false;
	}
	*path = value;
	return true;
}

static bool arg_is(const char *arg, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(arg, name, n) && arg[n] == '=';
}

/* One NAME=VALUE; false, with a message, unless it is one of ours. */
static bool parse_arg(const char *arg)
{
	const char *value = strchr(arg, '=');

	if (!value || value == arg) {
		plugin_error("argument '%s' is not NAME=VALUE", arg);
		return false;
	}
	value++;
	if (arg_is(arg, "out"))
		return parse_path(arg, value, &out_path);
	if (arg_is(arg, "map"))
		return parse_path(arg, value, &map_path);
	if (arg_is(arg, "all"))
		return parse_bool(arg, value, &count_user);
	if (arg_is(arg, "all_lines"))
		return parse_bool(arg, value, &list_all_lines);
	if (arg_is(arg, "model"))
		return parse_bool(arg, value, &model);
	if (arg_is(arg, "insns"))
		return parse_bool(arg, value, &count_insns);
	if (arg_is(arg, "top"))
		return parse_top(arg, value);
	if (arg_is(arg, "start")) {
		if (strcmp(value, "boot") && strcmp(value, "marker")) {
			plugin_error("%s: expected boot or marker", arg);
			return false;
		}
		start_at_marker = !strcmp(value, "marker");
		return true;
	}
	plugin_error("unknown argument '%s' (known: out, map, all, top, all_lines, start, model, insns)", arg);
	return false;
}

static void tables_init(void)
{
	for (unsigned int i = 0; i < NR_SHARDS; i++) {
		g_mutex_init(&shards[i].lock);
		shards[i].blocks = g_hash_table_new(g_direct_hash, g_direct_equal);
		shards[i].hot = g_hash_table_new(g_int64_hash, g_int64_equal);
	}
	g_mutex_init(&sites_lock);
	g_mutex_init(&phase_lock);
	g_mutex_init(&insn_lock);
	sites = g_hash_table_new(g_int64_hash, g_int64_equal);
	function_ids = g_hash_table_new(g_str_hash, g_str_equal);
	function_names = g_ptr_array_new();
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	if (strcmp(info->target_name, "x86_64") && strcmp(info->target_name, "i386")) {
		plugin_error("target %s: atomics are recognised in x86 code only",
			     info->target_name);
		return -1;
	}
	system_mode = info->system_emulation;
	count_user = !system_mode;
	for (int i = 0; i < argc; i++)
		if (!parse_arg(argv[i]))
			return -1;
	/* User mode has no kernel: all=off would count nothing. */
	if (!system_mode)
		count_user = true;
	if (system_mode && info->system.max_vcpus > MAX_VCPUS) {
		plugin_error("%d vCPUs: at most %d are modelled",
			     info->system.max_vcpus, MAX_VCPUS);
		return -1;
	}
	if (!model && !count_insns) {
		plugin_error("model=off without insns=on counts nothing");
		return -1;
	}
	if (map_path && !load_map(map_path))
		return -1;
	/* Every function a map names, [user] and [unknown] have a slot. */
	insn_slots = map_path ? nr_symbols + 2 : INSN_SLOTS_UNMAPPED;
	/* Opened now so that a bad path stops QEMU before the guest runs. */
	if (out_path) {
		out_file = fopen(out_path, "w");
		if (!out_file) {
			plugin_error("out=%s: %s", out_path, strerror(errno));
			return -1;
		}
	}
	tables_init();
	counting = !start_at_marker;
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_translated);
	qemu_plugin_register_atexit_cb(id, report_at_exit, NULL);
	return 0;
}
