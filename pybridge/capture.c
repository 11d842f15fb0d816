/* Output capture for the session log (pyaichat --log-output): a copy of
 * what Python writes through the _pyaichat.Tracked layers of sys.stdout
 * and sys.stderr, kept for the input that wrote it. Off unless turned on,
 * and then only a flag test on the write's path when it is off again.
 *
 * The copy is a run of segments, each a tag byte, a 4-byte length and
 * that many bytes; consecutive writes with the same tag grow one segment.
 * Tags: 'o' stdout, 'e' stderr, 'r' the displayhook's repr (on stdout),
 * 'x' a traceback (on stderr). Past the bound the bytes are only counted,
 * so that Go can say how many were dropped. Writers hold the GIL; Go
 * takes the copy from any thread, hence the mutex. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tracked.h"

static struct {
    pthread_mutex_t mu;
    int on;
    int kind; /* CAPTURE_RESULT or CAPTURE_ERROR while a hook writes */
    char *buf;
    size_t len, cap, limit;
    size_t last; /* offset of the last segment's header, or SIZE_MAX */
    size_t total; /* bytes written since the last take, kept or not */
    PyObject *displayhook; /* the hook _pyaichat.displayhook calls */
} capture = {PTHREAD_MUTEX_INITIALIZER, 0, 0, NULL, 0, 0, 0, SIZE_MAX, 0, NULL};

#define HEADER 5

int pyb_capture_on(void) { return __atomic_load_n(&capture.on, __ATOMIC_RELAXED); }

/* The tag of a write to stream (1 stdout, 2 stderr) now. */
static char tag_of(int stream) {
    if (stream == 1) return capture.kind == CAPTURE_RESULT ? 'r' : 'o';
    return capture.kind == CAPTURE_ERROR ? 'x' : 'e';
}

static int reserve(size_t need) {
    if (capture.len + need <= capture.cap) return 0;
    size_t cap = capture.cap ? capture.cap : 4096;
    while (cap < capture.len + need) cap *= 2;
    char *buf = realloc(capture.buf, cap);
    if (buf == NULL) return -1;
    capture.buf = buf;
    capture.cap = cap;
    return 0;
}

void pyb_capture_add(int stream, const char *data, size_t n) {
    char tag = tag_of(stream);
    pthread_mutex_lock(&capture.mu);
    capture.total += n;
    if (capture.on && capture.len < capture.limit) {
        size_t room = capture.limit - capture.len;
        int extend = capture.last != SIZE_MAX && capture.buf[capture.last] == tag;
        if (!extend) room = room > HEADER ? room - HEADER : 0;
        size_t keep = n < room ? n : room;
        if (keep > 0 && reserve(keep + HEADER) == 0) {
            if (!extend) {
                capture.last = capture.len;
                capture.buf[capture.len] = tag;
                memset(capture.buf + capture.len + 1, 0, 4);
                capture.len += HEADER;
            }
            uint32_t size;
            memcpy(&size, capture.buf + capture.last + 1, 4);
            size += (uint32_t)keep;
            memcpy(capture.buf + capture.last + 1, &size, 4);
            memcpy(capture.buf + capture.len, data, keep);
            capture.len += keep;
        }
    }
    pthread_mutex_unlock(&capture.mu);
}

void pyb_capture_set(int on, size_t limit) {
    pthread_mutex_lock(&capture.mu);
    capture.limit = limit;
    __atomic_store_n(&capture.on, on, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&capture.mu);
}

char *pyb_capture_take(size_t *n, size_t *total) {
    pthread_mutex_lock(&capture.mu);
    char *out = NULL;
    *n = capture.len;
    *total = capture.total;
    if (capture.len > 0) {
        out = malloc(capture.len);
        if (out != NULL) memcpy(out, capture.buf, capture.len);
        else *n = 0;
    }
    capture.len = 0;
    capture.total = 0;
    capture.last = SIZE_MAX;
    pthread_mutex_unlock(&capture.mu);
    return out;
}

/* _pyaichat.capture_kind(kind): what the writes until the next call are
 * (0 output, 1 a result's repr, 2 a traceback). */
static PyObject *mod_capture_kind(PyObject *self, PyObject *arg) {
    (void)self;
    long kind = PyLong_AsLong(arg);
    if (kind == -1 && PyErr_Occurred()) return NULL;
    capture.kind = (int)kind;
    Py_RETURN_NONE;
}

/* _pyaichat.set_displayhook(hook): the hook _pyaichat.displayhook calls. */
static PyObject *mod_set_displayhook(PyObject *self, PyObject *hook) {
    (void)self;
    Py_INCREF(hook);
    Py_XSETREF(capture.displayhook, hook);
    Py_RETURN_NONE;
}

/* _pyaichat.displayhook(value): the hook set, its output tagged as a
 * result. It is C so that a repr that raises shows no frame of its own
 * in the traceback, which stays python3's. */
static PyObject *mod_displayhook(PyObject *self, PyObject *value) {
    (void)self;
    if (capture.displayhook == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "no displayhook set");
        return NULL;
    }
    int before = capture.kind;
    capture.kind = CAPTURE_RESULT;
    PyObject *res = PyObject_CallOneArg(capture.displayhook, value);
    if (res != NULL) {
        /* The repr's line is in the buffer: flush it while it is a result. */
        PyObject *out = PySys_GetObject("stdout");
        if (out != NULL && out != Py_None) {
            PyObject *r = PyObject_CallMethod(out, "flush", NULL);
            if (r == NULL) PyErr_Clear();
            Py_XDECREF(r);
        }
    }
    capture.kind = before;
    return res;
}

static PyMethodDef capture_methods[] = {
    {"capture_kind", mod_capture_kind, METH_O, "Tag the output captured until the next call."},
    {"set_displayhook", mod_set_displayhook, METH_O, "The hook displayhook calls."},
    {"displayhook", mod_displayhook, METH_O, "The hook set, its output captured as a result."},
    {NULL, NULL, 0, NULL},
};

/* In a forked copy (isolate.c) capture is off, and its mutex new: the
 * fork may have come while Go held it for a take. */
static void capture_after_fork(void) {
    pthread_mutex_init(&capture.mu, NULL);
    capture.on = 0;
    capture.len = 0;
    capture.total = 0;
    capture.last = SIZE_MAX;
}

int pyb_add_capture(PyObject *module) {
    static int registered;
    if (!registered) {
        registered = 1;
        pthread_atfork(NULL, NULL, capture_after_fork);
    }
    return PyModule_AddFunctions(module, capture_methods);
}
