// SPDX-License-Identifier: MIT
/*
 * Penalties of a domain's users (daemon/penalties.h) and the parsing of
 * a worker thread's /proc stat line (daemon/worker_threads.h): a level
 * rises per revocation and falls per PENALTY_DECAY_NS without one; the
 * known level counts only offences of groups of known cost, never above
 * the level, with the same decay; it
 * belongs to the user, not a connection; a full table makes room by the
 * least penalised; the stat line's comm may hold spaces and parentheses,
 * and the rasterizer's threads are told apart by name.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/penalties.h"
#include "daemon/worker_threads.h"

#define S 1000000000ull

static void a_level_rises_per_revocation_and_decays_per_quiet_period(void **state)
{
	struct penalties p;

	memset(&p, 0, sizeof(p));
	assert_int_equal(penalties_level(&p, 1000, 0), 0);
	assert_int_equal(penalties_offend(&p, 1000, 1 * S, false), 1);
	assert_int_equal(penalties_offend(&p, 1000, 2 * S, false), 2);
	assert_int_equal(penalties_offend(&p, 1000, 3 * S, false), 3);
	/* Another user is not touched. */
	assert_int_equal(penalties_level(&p, 1001, 3 * S), 0);
	assert_int_equal(penalties_level(&p, 1000, 3 * S + PENALTY_DECAY_NS - 1), 3);
	assert_int_equal(penalties_level(&p, 1000, 3 * S + PENALTY_DECAY_NS), 2);
	assert_int_equal(penalties_level(&p, 1000, 3 * S + 2 * PENALTY_DECAY_NS + 1), 1);
	/* An offence during the decay starts from what is left. */
	assert_int_equal(penalties_offend(&p, 1000, 3 * S + 2 * PENALTY_DECAY_NS + 2, false), 2);
	assert_int_equal(penalties_level(&p, 1000, 100 * PENALTY_DECAY_NS), 0);
	assert_int_equal(penalties_offend(&p, 1000, 100 * PENALTY_DECAY_NS, false), 1);
}

static void the_known_level_counts_only_known_cost_offences(void **state)
{
	struct penalties p;

	memset(&p, 0, sizeof(p));
	assert_int_equal(penalties_known(&p, 1000, 0), 0);
	/* Young groups' overruns: the level rises, the known level does not. */
	assert_int_equal(penalties_offend(&p, 1000, 1 * S, false), 1);
	assert_int_equal(penalties_offend(&p, 1000, 2 * S, false), 2);
	assert_int_equal(penalties_known(&p, 1000, 2 * S), 0);
	assert_int_equal(penalties_offend(&p, 1000, 3 * S, true), 3);
	assert_int_equal(penalties_known(&p, 1000, 3 * S), 1);
	assert_int_equal(penalties_offend(&p, 1000, 4 * S, true), 4);
	assert_int_equal(penalties_known(&p, 1000, 4 * S), 2);
	/* Both decay by the same steps. */
	assert_int_equal(penalties_known(&p, 1000, 4 * S + PENALTY_DECAY_NS), 1);
	assert_int_equal(penalties_level(&p, 1000, 4 * S + PENALTY_DECAY_NS), 3);
	assert_int_equal(penalties_known(&p, 1000, 4 * S + 2 * PENALTY_DECAY_NS), 0);
	assert_int_equal(penalties_level(&p, 1000, 4 * S + 2 * PENALTY_DECAY_NS), 2);
	/* Known offences alone raise both; another user is not touched. */
	assert_int_equal(penalties_offend(&p, 1001, 5 * S, true), 1);
	assert_int_equal(penalties_known(&p, 1001, 5 * S), 1);
	assert_int_equal(penalties_known(&p, 1002, 5 * S), 0);
	assert_int_equal(penalties_known(&p, 1001, 100 * PENALTY_DECAY_NS), 0);
}

static void a_full_table_forgets_the_least_penalised_user(void **state)
{
	struct penalties p;

	memset(&p, 0, sizeof(p));
	for (uid_t u = 0; u < PENALTY_SLOTS; u++) {
		for (uid_t k = 0; k <= (u == 7 ? 0 : 2); k++)
			penalties_offend(&p, u, 1 * S, false);
	}
	/* uid 7 has level 1, the others 3: a new user takes its slot. */
	assert_int_equal(penalties_offend(&p, 5000, 2 * S, false), 1);
	assert_int_equal(penalties_level(&p, 7, 2 * S), 0);
	assert_int_equal(penalties_level(&p, 8, 2 * S), 3);
	assert_int_equal(penalties_level(&p, 5000, 2 * S), 1);
}

static void stat_lines_are_summed_rasterizer_apart(void **state)
{
	long ticks = sysconf(_SC_CLK_TCK);
	uint64_t tick_ns = 1000000000ull / (uint64_t)ticks;
	struct worker_cpu cpu;

	memset(&cpu, 0, sizeof(cpu));
	assert_int_equal(worker_threads_add_stat("41 (mediator-worker) S 1 41 41 0 -1 4194560 "
						 "10 0 0 0 7 3 0 0 20 0 4 0 100",
						 &cpu),
			 0);
	assert_int_equal(worker_threads_add_stat("42 (llvmpipe-0) R 1 41 41 0 -1 4194560 "
						 "10 0 0 0 100 20 0 0 39 19 4 0 100",
						 &cpu),
			 0);
	/* A comm with a space and a parenthesis ends at the last ')'. */
	assert_int_equal(worker_threads_add_stat("43 (odd) name)) S 1 41 41 0 -1 4194560 "
						 "10 0 0 0 1 1 0 0 20 0 4 0 100",
						 &cpu),
			 0);
	assert_int_equal(cpu.threads, 3);
	assert_int_equal(cpu.raster_threads, 1);
	assert_int_equal(cpu.raster_ns, 120 * tick_ns);
	assert_int_equal(cpu.total_ns, 132 * tick_ns);
	assert_true(cpu.runnable);
	assert_int_equal(worker_threads_add_stat("44 no comm", &cpu), -EINVAL);
	assert_int_equal(worker_threads_add_stat("45 (x) S 1 2", &cpu), -EINVAL);
	assert_int_equal(cpu.threads, 3);
}

/* This test process itself: one thread at least, none a rasterizer; a gone pid is -ESRCH. */
static void a_live_process_is_read_and_a_gone_one_is_not(void **state)
{
	struct worker_cpu cpu;

	assert_int_equal(worker_threads_cpu(getpid(), &cpu), 0);
	assert_true(cpu.threads >= 1);
	assert_int_equal(cpu.raster_threads, 0);
	assert_true(cpu.runnable); /* this thread, reading */
	assert_int_equal(worker_threads_cpu(0x3fffffff, &cpu), -ESRCH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_level_rises_per_revocation_and_decays_per_quiet_period),
	    cmocka_unit_test(the_known_level_counts_only_known_cost_offences),
	    cmocka_unit_test(a_full_table_forgets_the_least_penalised_user),
	    cmocka_unit_test(stat_lines_are_summed_rasterizer_apart),
	    cmocka_unit_test(a_live_process_is_read_and_a_gone_one_is_not),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
