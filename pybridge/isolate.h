/* Running a helper in a fork()ed copy of the interpreter: whatever the call
 * does (user __repr__, properties, an arbitrary expression) happens in the
 * copy, which is sandboxed and killed at a deadline. */
#ifndef PYAICHAT_ISOLATE_H
#define PYAICHAT_ISOLATE_H

#include <stddef.h>

#include "bridge.h"

/* Guards that were active in the last isolated child (bit flags). */
enum {
    PYB_GUARD_SECCOMP = 1, /* the seccomp syscall filter was installed */
};

/* Outcomes of pyb_call_isolated besides success (0). */
enum {
    PYB_ISO_ERROR = -1,    /* *err says what; nothing ran or the child failed */
    PYB_ISO_TIMEOUT = -2,  /* the deadline passed; the child was killed */
    PYB_ISO_CANCELED = -3, /* cancel_fd became readable; the child was killed */
};

/* Calls <module>.<func>(arg) (a helper taking and returning str) in a fork()ed
 * copy of the interpreter and returns its str result as malloc'd UTF-8 in
 * *out / *out_len. Call on the interpreter's thread with the GIL released
 * (as between pybridge jobs); the GIL is released again while waiting, so
 * the user's threads keep running. timeout_ms bounds the whole call;
 * cancel_fd (or -1) cuts it short when readable. *guards receives the
 * PYB_GUARD_* flags the child reported. On success *reap is the child's
 * pid, still exiting, which the caller must reap (waitpid) later. */
int pyb_call_isolated(const char *module, const char *func, const char *arg,
                      size_t arg_len, long long timeout_ms, int cancel_fd,
                      char **out, size_t *out_len, int *guards, int *reap,
                      pyb_error *err);

#endif
