// Swift Testing starts every test of the run at once unless told otherwise. On a 2-core machine
// that was some 650 tests, each with its own server, PostgreSQL database or command processes:
// the cores thrashed, tests ran past their time limits and a few never ended (CI hung). This
// sets Swift Testing's width (6 tests per core) before `main`, so that plain `swift test` gets it;
// a width already set in the environment wins.
#include "TestParallelism.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *const width_variable = "SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH";
static const long tests_per_core = 6;

__attribute__((constructor)) static void eventual_limit_test_parallelism(void) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    char width[32];
    snprintf(width, sizeof width, "%ld", (cores < 1 ? 1 : cores) * tests_per_core);
    setenv(width_variable, width, 0);
}

long eventual_test_parallelism_width(void) {
    const char *width = getenv(width_variable);
    return width == NULL ? 0 : strtol(width, NULL, 10);
}
