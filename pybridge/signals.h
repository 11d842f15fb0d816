#ifndef PYB_SIGNALS_H
#define PYB_SIGNALS_H

/* Signals as python3 has them (signals.c). All but pyb_signals_notify run
 * on the interpreter's thread. */

/* Before Py_Initialize: unblocks on this thread the signals Go's threads
 * block, and gives Python python3's dispositions to start from. */
void pyb_signals_before_python(void);

/* Once Python's signal module is set up: Go gets back the handlers it
 * needs, and the fault handlers chain to Go's. */
void pyb_signals_after_python(void);

/* Whether pyaichat was started with SIGINT ignored (python3 then raises no
 * KeyboardInterrupt). */
int pyb_signals_sigint_ignored(void);

/* A descriptor that gets a byte for each SIGINT that reaches user code. */
void pyb_signals_notify(int fd);

/* Around user code: SIGINT, SIGWINCH and SIGURG are Python's inside, Go's
 * outside. */
void pyb_signals_user_begin(void);
void pyb_signals_user_end(void);

/* What user code set SIGINT to, as of the end of its last statement. */
enum { PYB_SIGINT_HANDLED = 0, PYB_SIGINT_DEFAULT = 1, PYB_SIGINT_IGNORED = 2 };
int pyb_signals_sigint_action(void);

/* Whether a SIGINT at the prompt is the user's, done as user code set it
 * (py>), or pyaichat's (ai>, or an answer under way). */
void pyb_signals_sigint_users(int users);

/* Ends the process by SIGINT, as SIG_DFL does. */
void pyb_signals_die_by_sigint(void);

/* The OS thread that runs Python. */
int pyb_signals_python_tid(void);

#endif
