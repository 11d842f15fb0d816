/* Running a helper in a fork()ed copy of the interpreter: whatever the call
 * does (user __repr__, properties, an arbitrary expression) happens in the
 * copy, which is sandboxed and killed at a deadline. */
#ifndef PYAICHAT_ISOLATE_H
#define PYAICHAT_ISOLATE_H

#include <stddef.h>
#include <stdint.h>

#include "bridge.h"

/* Guards that were active in the last isolated child (bit flags). */
enum {
    PYB_GUARD_SECCOMP = 1, /* the seccomp syscall filter was installed */
};

/* A ready copy's CPU limit in seconds while it waits; at the call the
 * parent lowers it to what an on-demand copy gets (timeout + 2 s). A call
 * with a longer deadline forks on demand instead. */
enum { PYB_READY_CPU_BACKSTOP = 30 };

/* Outcomes of pyb_call_isolated and pyb_prepare_isolated besides success (0). */
enum {
    PYB_ISO_ERROR = -1,    /* *err says what; nothing ran or the child failed */
    PYB_ISO_TIMEOUT = -2,  /* the deadline passed; the child was killed */
    PYB_ISO_CANCELED = -3, /* cancel_fd became readable; the child was killed */
    PYB_ISO_SKIPPED = 1,   /* pyb_prepare_isolated: other Python threads exist */
};

/* Calls <module>.<func>(arg) (a helper taking and returning str) in a fork()ed
 * copy of the interpreter and returns its str result as malloc'd UTF-8 in
 * *out / *out_len. Call on the interpreter's thread with the GIL released
 * (as between pybridge jobs); the GIL is released again while waiting, so
 * the user's threads keep running. timeout_ms bounds the whole call;
 * cancel_fd (or -1) cuts it short when readable. *guards receives the
 * PYB_GUARD_* flags the kernel reports for the copy. On success *reap is the child's
 * pid, still exiting, which the caller must reap (waitpid) later.
 *
 * ready_pid/ready_fd (or 0/-1) are a ready copy from pyb_prepare_isolated,
 * which the caller vouches is the session as it is now (no job ran since
 * it was made). It answers instead of a new fork unless another Python
 * thread exists or the timeout exceeds its CPU backstop; *used_ready says
 * whether it did. If it did, the copy and its descriptor are consumed as a
 * forked child would be; if not, the caller must discard them. */
int pyb_call_isolated(const char *module, const char *func, const char *arg,
                      size_t arg_len, long long timeout_ms, int cancel_fd,
                      int ready_pid, int ready_fd, int *used_ready,
                      char **out, size_t *out_len, int *guards, int *reap,
                      pyb_error *err);

/* Forks a ready copy of the interpreter: a child that installs every guard
 * of an isolated call and then waits for one request from
 * pyb_call_isolated. Call on the interpreter's thread with the GIL
 * released. Returns 0 with the child's pid and the parent's end of its
 * socket (non-blocking, close-on-exec); PYB_ISO_SKIPPED, making nothing,
 * when other Python threads exist (they could change the session after
 * the fork); or PYB_ISO_ERROR with *err set. The caller discards a copy it
 * no longer wants by closing fd and killing pid (it exits at end of file
 * too), and reaps it. */
int pyb_prepare_isolated(int *pid, int *fd, pyb_error *err);

/* Installs the audit hook that guards copies; call once, before
 * Py_InitializeFromConfig. */
void pyb_install_audit_guard(void);

/* Sets the address range that copies unmap before any Python runs in
 * them: Go's heap, where pyaichat's own secrets live. Only anonymous
 * private mappings inside it are unmapped, and none that C or Python
 * memory is found in. Call once, before the first copy. */
void pyb_set_private_range(uintptr_t lo, uintptr_t hi);

#endif
