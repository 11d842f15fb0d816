#ifndef PYB_TRACKED_H
#define PYB_TRACKED_H

#include <Python.h>

/* Adds the type _pyaichat.Tracked to module (tracked.c). */
int pyb_add_tracked_type(PyObject *module);

/* Lines user code has read from the terminal (bridge.c), and one more. */
unsigned long pyb_lines_read(void);
void pyb_line_read(void);

/* Output capture for the session log (capture.c). */
enum { CAPTURE_OUTPUT = 0, CAPTURE_RESULT = 1, CAPTURE_ERROR = 2 };
int pyb_add_capture(PyObject *module);
int pyb_capture_on(void);
/* Keeps n bytes written to stream (1 stdout, 2 stderr) while capture is on. */
void pyb_capture_add(int stream, const char *data, size_t n);
/* Turns capture on or off; limit bounds the bytes kept per take. */
void pyb_capture_set(int on, size_t limit);
/* What was kept since the last take (malloc'd, n bytes, NULL when none)
 * and how many bytes were written in all; the copy starts again empty. */
char *pyb_capture_take(size_t *n, size_t *total);

#endif
