#ifndef EVENTUAL_TEST_PARALLELISM_H
#define EVENTUAL_TEST_PARALLELISM_H

/// How many tests Swift Testing runs at once in this process (set before `main` by this target).
long eventual_test_parallelism_width(void);

#endif
