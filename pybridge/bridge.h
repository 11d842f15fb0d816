/* C half of pybridge: each function here does one whole operation on the
 * interpreter, so that Go crosses cgo once per job. */
#ifndef PYAICHAT_BRIDGE_H
#define PYAICHAT_BRIDGE_H

#include <stddef.h>

/* A Python exception, rendered at the point it was caught. All fields are
 * malloc'd UTF-8 (or NULL) and freed by pyb_error_free. */
typedef struct {
    char *type;      /* qualified type name, e.g. "ZeroDivisionError" */
    char *message;   /* str(exception) */
    char *traceback; /* the formatted traceback, as Python prints it */
} pyb_error;

void pyb_error_free(pyb_error *err);

/* Sets *err to type and msg (copied), with no traceback. */
void pyb_error_set(pyb_error *err, const char *type, const char *msg);

/* Bytes handed between Go and C (a helper's compiled code). */
typedef struct {
    char *data;
    size_t len;
} pyb_bytes;

/* Initialises the interpreter on the calling OS thread, loads the helper
 * module from source and releases the GIL. Returns 0 or -1 with *err set.
 * argv is a python3 command line, parsed as python3 parses it (options, then
 * -c cmd, -m mod or a file, and sys.argv); nothing in it is run. cache and
 * fresh are as for pyb_load_module. */
int pyb_init(const char *executable, int argc, char **argv, const char *helper_src,
             const pyb_bytes *cache, pyb_bytes *fresh, pyb_error *err);

/* Compiles and runs source as pyaichat's helper module name, kept out of
 * sys.modules with the modules it imports (see pyb_helper). cache (or NULL)
 * is source compiled by an earlier run, used when it suits this Python;
 * otherwise, if fresh is not NULL, fresh->data gets a malloc'd compiled copy
 * to keep for the next run. */
int pyb_load_module(const char *name, const char *source, const pyb_bytes *cache,
                    pyb_bytes *fresh, pyb_error *err);

#ifdef Py_PYTHON_H /* for the C files, which include Python.h first */
/* A new reference to the loaded helper module name, or NULL with
 * ImportError set. Call with the GIL held. */
PyObject *pyb_helper(const char *name);

/* Moves the pending Python exception into *err and clears it. With full
 * set, the type is its __qualname__ and the traceback is formatted by the
 * traceback module, which may import it and read source files into
 * linecache; without, only the type's name and str(exception) are taken,
 * for calls that must change nothing in the session. Call with the GIL
 * held. */
void pyb_error_fetch(pyb_error *err, int full);

/* pyaichat.Refused, the error the isolated copy's guard raises (borrowed;
 * made on first use), or NULL with an exception set. Helpers tell it from
 * a user class of that name by identity: load_module puts it in their
 * globals as _PYAICHAT_REFUSED, where user code cannot replace it. */
PyObject *pyb_refused_type(void);

/* _pyaichat.scrub_environ(names, dicts): in an isolated copy only, wipes
 * the values of the named environment variables (isolate.c). */
PyObject *pyb_scrub_environ(PyObject *names, PyObject *dicts);
#endif

/* What a pyb_call may do. */
enum {
    PYB_CALL_HELPER = 0,    /* a helper of pyaichat's */
    PYB_CALL_USER = 1,      /* may run user code: Go's SIGINT handler is kept */
    PYB_CALL_READ_ONLY = 2, /* a helper that changes nothing; the cyclic GC is
                               off during it, so no user finalizer runs */
};

/* Calls <module>.<func>(arg) (module imported already) with the GIL held and
 * returns its str result as malloc'd UTF-8 (length in *out_len), or NULL
 * with *err set. kind is a PYB_CALL_* value: after user code, a SIGINT
 * handler installed by that code is moved out of Go's way. */
char *pyb_call(const char *module, const char *func, const char *arg, size_t arg_len,
               size_t *out_len, int kind, pyb_error *err);

/* What one REPL step led to (pyb_repl_step). error and partial are
 * malloc'd UTF-8 or NULL, freed by pyb_outcome_free. */
typedef struct {
    int more;      /* the statement is incomplete */
    int exit;      /* the code raised SystemExit */
    int status;    /* its exit status, when exit */
    char *error;   /* the type of the exception the input raised, or NULL */
    char *partial; /* what output left on the terminal's current line */
} pyb_outcome;

/* One REPL step in one crossing: calls the REPL helper's func(arg) (push,
 * run_block, run_file, ...), which compiles the input and may queue code;
 * then runs that code in __main__, from C so that no Python frame sits
 * under user code, and lets the helper show an exception or record the
 * input. Returns 0 with *out set, or -1 with *err set. */
int pyb_repl_step(const char *func, const char *arg, size_t arg_len, pyb_outcome *out,
                  pyb_error *err);

void pyb_outcome_free(pyb_outcome *out);

/* While no user code runs, on the interpreter's thread: runs the Python
 * handlers of the signals that arrived (the wait for input or jobs was
 * interrupted), as python3's prompt does when its read is. What a handler
 * raises is kept for pyb_show_signal_error, and a byte goes to the
 * descriptor given to pyb_signal_errors_notify. */
void pyb_idle_signals(void);
void pyb_signal_errors_notify(int fd);

/* Ctrl-C at the prompt while SIGINT has a Python handler, on the
 * interpreter's thread: runs that handler as the signal would have run it
 * in python3's prompt. Returns PYB_SIGINT_RETURNED when it returned (the
 * line goes on), PYB_SIGINT_RAISED_KI when it raised KeyboardInterrupt
 * (Python's default handler), or PYB_SIGINT_RAISED when it raised
 * something else, kept as pyb_idle_signals keeps it. */
enum { PYB_SIGINT_RETURNED, PYB_SIGINT_RAISED_KI, PYB_SIGINT_RAISED };
int pyb_sigint_at_prompt(void);

/* Shows the exception kept by pyb_idle_signals (or by a handler that ran
 * as user code ended) as python3's prompt shows it, with *out as for a
 * step (exit and status for SystemExit); nothing when none is kept.
 * Returns 0, or -1 with *err set. */
int pyb_show_signal_error(pyb_outcome *out, pyb_error *err);

/* Whether user code may be running now (a REPL step's code, or a
 * PYB_CALL_USER call); from any thread. */
int pyb_busy(void);

/* Whether the interpreter's thread is Python's only thread; from any
 * thread, without the GIL. */
int pyb_sole_thread(void);

/* From any thread: take and drop the GIL once. A GIL request sets the eval
 * breaker of the running thread, which is what makes it look at the signal
 * that PyErr_SetInterrupt tripped (CPython issue 95820). */
void pyb_kick(void);

/* Trips Python's SIGINT flag; async-signal-safe, no GIL needed. */
void pyb_set_interrupt(void);

/* Finalizes the interpreter (joins non-daemon threads, runs atexit) and
 * returns Py_FinalizeEx's result: -1 when the standard streams could not
 * be flushed. A process forked meanwhile (by an atexit handler) ends
 * there, with status (or 120, as above). */
int pyb_finalize(int status);

/* What pyb_finalize is doing, from any thread. */
enum {
    PYB_FINALIZE_NOT = 0,     /* not begun */
    PYB_FINALIZE_THREADS = 1, /* waiting for non-daemon threads */
    PYB_FINALIZE_ATEXIT = 2,  /* running atexit handlers */
    PYB_FINALIZE_REST = 3,    /* the rest of Py_FinalizeEx */
};
int pyb_finalize_phase(void);

int pyb_version_major(void);
int pyb_version_minor(void);
const char *pyb_version_string(void);
const char *pyb_platform(void);

#endif
