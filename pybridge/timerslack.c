/* Timer slack for every thread of the process.
 *
 * Go's scheduler passes work between threads with very short sleeps (a
 * thread stealing a just-readied goroutine waits 3 us first; sysmon ticks
 * every 20 us while busy). Linux stretches each such sleep by the thread's
 * timer slack, 50 us by default, so each hand-off on the way from a key to
 * Python and back cost up to 50 us more than it should. Threads inherit
 * the slack of the thread that creates them, and in a cgo binary this
 * constructor runs on the main thread before the Go runtime starts any, so
 * every thread of the process, Python's included, gets it. */
#include <sys/prctl.h>

__attribute__((constructor)) static void tight_timer_slack(void) {
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
}
