/* Images for the user's terminal: what _pyaichat gives the display helper. */
#ifndef PYAICHAT_DISPLAY_H
#define PYAICHAT_DISPLAY_H

#include <Python.h>

/* Adds graphics() and draw_image() to the _pyaichat module, and the audit
 * hook that tells the REPL helper when matplotlib has loaded. */
int pyb_add_display(PyObject *mod);

#endif
