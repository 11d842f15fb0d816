/* _pyaichat.Tracked: the raw layer of sys.stdout and sys.stdin on a
 * terminal, over the real FileIO. For stdout it remembers the text after
 * the last newline, so that pyaichat's prompt can follow output that did
 * not end its line, where python3's would; for stdin it counts the lines
 * read, whose Enter ended the terminal's line. With the session log's
 * output capture on (capture.c), the layers of sys.stdout and sys.stderr
 * also hand it a copy of each write.
 *
 * It is C, as python3's own raw layer is, for a reason beyond speed: no
 * Python bytecode runs inside a write or a read, and so no signal handler
 * either. A handler of the user's that prints, run inside a raw write of
 * Python code, re-entered the BufferedWriter around it (RuntimeError:
 * reentrant call); python3 runs it after the write. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <string.h>

#include "tracked.h"

#define TAIL_MAX 512

typedef struct {
    PyObject_HEAD
    PyObject *raw;
    int closed;
    int stream; /* 1 stdout, 2 stderr: captured when capture is on; 0 not */
    Py_ssize_t tail_len;
    unsigned long lines_at; /* pyb_lines_read() at the last write */
    Py_ssize_t ahead; /* bytes copied to the capture, not yet written */
    char tail[TAIL_MAX];
} Tracked;

static int tracked_init(Tracked *self, PyObject *args, PyObject *kwds) {
    (void)kwds;
    PyObject *raw;
    int stream = 0;
    if (!PyArg_ParseTuple(args, "O|i:Tracked", &raw, &stream)) return -1;
    self->stream = stream;
    Py_INCREF(raw);
    Py_XSETREF(self->raw, raw);
    return 0;
}

static void tracked_dealloc(Tracked *self) {
    Py_XDECREF(self->raw);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Records what written (n bytes) leaves on the terminal's line. */
static void remember_tail(Tracked *self, const char *written, Py_ssize_t n) {
    if (written[n - 1] == '\n') {
        self->tail_len = 0; /* the common case, a whole line */
        return;
    }
    Py_ssize_t start = n;
    while (start > 0 && written[start - 1] != '\n' && written[start - 1] != '\r') start--;
    if (start > 0) self->tail_len = 0;
    const char *add = written + start;
    Py_ssize_t add_len = n - start;
    if (add_len >= TAIL_MAX) {
        memcpy(self->tail, add + add_len - TAIL_MAX, TAIL_MAX);
        self->tail_len = TAIL_MAX;
    } else {
        Py_ssize_t keep = self->tail_len + add_len > TAIL_MAX ? TAIL_MAX - add_len : self->tail_len;
        memmove(self->tail, self->tail + self->tail_len - keep, (size_t)keep);
        memcpy(self->tail + keep, add, (size_t)add_len);
        self->tail_len = keep + add_len;
    }
    self->lines_at = pyb_lines_read();
}

/* The byte count a raw call returned, or -1 (None, or an error). */
static Py_ssize_t count_of(PyObject *res) {
    if (res == NULL || res == Py_None) return -1;
    Py_ssize_t n = PyLong_AsSsize_t(res);
    if (n == -1 && PyErr_Occurred()) PyErr_Clear();
    return n;
}

/* Copies what b holds into the session log's capture, before the raw
 * write puts it on the terminal: once it is there the user can answer it,
 * and the next input's capture, begun meanwhile, must not take it. The
 * bytes a write leaves unwritten come back at the front of the next one
 * (BufferedWriter keeps them), and were copied already. */
static void capture_ahead(Tracked *self, const char *data, Py_ssize_t len) {
    Py_ssize_t skip = self->ahead < len ? self->ahead : len;
    if (len > skip) pyb_capture_add(self->stream, data + skip, (size_t)(len - skip));
}

static PyObject *tracked_write(Tracked *self, PyObject *b) {
    Py_buffer view;
    if (PyObject_GetBuffer(b, &view, PyBUF_SIMPLE) != 0) {
        PyErr_Clear();
        return PyObject_CallMethod(self->raw, "write", "O", b);
    }
    int captured = self->stream != 0 && pyb_capture_on();
    if (captured) capture_ahead(self, view.buf, view.len);
    PyObject *res = PyObject_CallMethod(self->raw, "write", "O", b);
    Py_ssize_t n = count_of(res);
    if (n > 0 && n <= view.len && self->stream != 2) remember_tail(self, view.buf, n);
    self->ahead = captured && n < view.len ? view.len - (n > 0 ? n : 0) : 0;
    PyBuffer_Release(&view);
    return res;
}

/* Counts a line read when data (n bytes) ends one. */
static void count_line(const char *data, Py_ssize_t n) {
    if (n > 0 && data[n - 1] == '\n') pyb_line_read();
}

static PyObject *tracked_readinto(Tracked *self, PyObject *b) {
    PyObject *res = PyObject_CallMethod(self->raw, "readinto", "O", b);
    Py_ssize_t n = count_of(res);
    if (n > 0) {
        Py_buffer view;
        if (PyObject_GetBuffer(b, &view, PyBUF_SIMPLE) == 0) {
            if (n <= view.len) count_line(view.buf, n);
            PyBuffer_Release(&view);
        } else {
            PyErr_Clear();
        }
    }
    return res;
}

/* read and readall return bytes; the lines they end are counted too. */
static PyObject *counted(PyObject *res) {
    if (res != NULL && PyBytes_Check(res)) count_line(PyBytes_AS_STRING(res), PyBytes_GET_SIZE(res));
    return res;
}

static PyObject *tracked_read(Tracked *self, PyObject *args) {
    PyObject *read = PyObject_GetAttrString(self->raw, "read");
    if (read == NULL) return NULL;
    PyObject *res = PyObject_Call(read, args, NULL);
    Py_DECREF(read);
    return counted(res);
}

static PyObject *tracked_readall(Tracked *self, PyObject *unused) {
    (void)unused;
    return counted(PyObject_CallMethod(self->raw, "readall", NULL));
}

/* The methods that only pass the call on to the real stream. */
#define PASS(name)                                                        \
    static PyObject *tracked_##name(Tracked *self, PyObject *unused) {    \
        (void)unused;                                                     \
        return PyObject_CallMethod(self->raw, #name, NULL);               \
    }
PASS(readable)
PASS(writable)
PASS(tell)
PASS(flush)

/* fileno and isatty fail once it is closed, as a closed FileIO's do:
 * input() then takes sys.stdin as no terminal and raises as in python3,
 * rather than read the terminal. */
#define PASS_OPEN(name)                                                   \
    static PyObject *tracked_##name(Tracked *self, PyObject *unused) {    \
        (void)unused;                                                     \
        if (self->closed) {                                               \
            PyErr_SetString(PyExc_ValueError, "I/O operation on closed file"); \
            return NULL;                                                  \
        }                                                                 \
        return PyObject_CallMethod(self->raw, #name, NULL);               \
    }
PASS_OPEN(fileno)
PASS_OPEN(isatty)

static PyObject *tracked_seekable(Tracked *self, PyObject *unused) {
    (void)self;
    (void)unused;
    Py_RETURN_FALSE;
}

/* Closing it leaves the real stream (fd 0 or 1) open, as for python3's
 * sys.stdout closed by user code the REPL still writes its prompt. */
static PyObject *tracked_close(Tracked *self, PyObject *unused) {
    (void)unused;
    self->closed = 1;
    Py_RETURN_NONE;
}

static PyObject *get_closed(Tracked *self, void *c) {
    (void)c;
    return PyBool_FromLong(self->closed);
}

static PyObject *get_raw_attr(Tracked *self, void *name) { return PyObject_GetAttrString(self->raw, name); }

static PyObject *get_closefd(Tracked *self, void *c) {
    (void)self;
    (void)c;
    Py_RETURN_FALSE;
}

static PyObject *get_tail(Tracked *self, void *c) {
    (void)c;
    return PyBytes_FromStringAndSize(self->tail, self->tail_len);
}

static int set_tail(Tracked *self, PyObject *value, void *c) {
    (void)c;
    if (value == NULL || !PyBytes_Check(value) || PyBytes_GET_SIZE(value) > TAIL_MAX) {
        PyErr_SetString(PyExc_ValueError, "tail takes bytes of at most 512");
        return -1;
    }
    self->tail_len = PyBytes_GET_SIZE(value);
    memcpy(self->tail, PyBytes_AS_STRING(value), (size_t)self->tail_len);
    return 0;
}

static PyObject *get_lines_at(Tracked *self, void *c) {
    (void)c;
    return PyLong_FromUnsignedLong(self->lines_at);
}

static PyMethodDef tracked_methods[] = {
    {"write", (PyCFunction)tracked_write, METH_O, NULL},
    {"readinto", (PyCFunction)tracked_readinto, METH_O, NULL},
    {"read", (PyCFunction)tracked_read, METH_VARARGS, NULL},
    {"readall", (PyCFunction)tracked_readall, METH_NOARGS, NULL},
    {"fileno", (PyCFunction)tracked_fileno, METH_NOARGS, NULL},
    {"isatty", (PyCFunction)tracked_isatty, METH_NOARGS, NULL},
    {"readable", (PyCFunction)tracked_readable, METH_NOARGS, NULL},
    {"writable", (PyCFunction)tracked_writable, METH_NOARGS, NULL},
    {"seekable", (PyCFunction)tracked_seekable, METH_NOARGS, NULL},
    {"tell", (PyCFunction)tracked_tell, METH_NOARGS, NULL},
    {"flush", (PyCFunction)tracked_flush, METH_NOARGS, NULL},
    {"close", (PyCFunction)tracked_close, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef tracked_getset[] = {
    {"closed", (getter)get_closed, NULL, NULL, NULL},
    {"name", (getter)get_raw_attr, NULL, NULL, "name"},
    {"mode", (getter)get_raw_attr, NULL, NULL, "mode"},
    {"closefd", (getter)get_closefd, NULL, NULL, NULL},
    {"tail", (getter)get_tail, (setter)set_tail, "the text after the last newline written", NULL},
    {"lines_at", (getter)get_lines_at, NULL, "lines read when the tail was written", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject TrackedType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "_pyaichat.Tracked",
    .tp_basicsize = sizeof(Tracked),
    .tp_dealloc = (destructor)tracked_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A raw stream over a real one that remembers its last line's text and counts lines read.",
    .tp_methods = tracked_methods,
    .tp_getset = tracked_getset,
    .tp_init = (initproc)tracked_init,
    .tp_new = PyType_GenericNew,
};

int pyb_add_tracked_type(PyObject *module) {
    if (PyType_Ready(&TrackedType) < 0) return -1;
    Py_INCREF(&TrackedType);
    if (PyModule_AddObject(module, "Tracked", (PyObject *)&TrackedType) < 0) {
        Py_DECREF(&TrackedType);
        return -1;
    }
    return 0;
}
