#ifndef PYB_TRACKED_H
#define PYB_TRACKED_H

#include <Python.h>

/* Adds the type _pyaichat.Tracked to module (tracked.c). */
int pyb_add_tracked_type(PyObject *module);

/* Lines user code has read from the terminal (bridge.c), and one more. */
unsigned long pyb_lines_read(void);
void pyb_line_read(void);

#endif
