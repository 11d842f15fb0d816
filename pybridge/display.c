#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>
#include <string.h>

#include "bridge.h"
#include "display.h"
#include "_cgo_export.h"

/* _pyaichat.graphics(): "PROTOCOL CELLW CELLH COLS ROWS" of the terminal
 * (PROTOCOL "-" when it draws no images), asked of Go with the GIL
 * released: the first call waits for the terminal's answers. */
static PyObject *mod_graphics(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    char *s;
    Py_BEGIN_ALLOW_THREADS
    s = pybGraphics();
    Py_END_ALLOW_THREADS
    PyObject *res = PyUnicode_FromString(s != NULL ? s : "-");
    free(s);
    return res;
}

/* _pyaichat.draw_image(png): draws the image at the cursor; None, or the
 * reason it could not. */
static PyObject *mod_draw_image(PyObject *self, PyObject *png) {
    (void)self;
    if (!PyBytes_Check(png)) {
        PyErr_SetString(PyExc_TypeError, "draw_image takes bytes");
        return NULL;
    }
    char *err;
    Py_BEGIN_ALLOW_THREADS
    err = pybDrawImage(PyBytes_AS_STRING(png), (size_t)PyBytes_GET_SIZE(png));
    Py_END_ALLOW_THREADS
    if (err == NULL) Py_RETURN_NONE;
    PyObject *res = PyUnicode_FromString(err);
    free(err);
    return res;
}

/* Whether type (or a base) has attribute name in its own dict: found as
 * Python would find it on the type, without running any code. */
static int type_has(PyTypeObject *type, const char *name) {
    PyObject *mro = type->tp_mro;
    if (mro == NULL || !PyTuple_Check(mro)) return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); i++) {
        PyObject *dict = ((PyTypeObject *)PyTuple_GET_ITEM(mro, i))->tp_dict;
        if (dict != NULL && PyDict_GetItemString(dict, name) != NULL) return 1;
    }
    return 0;
}

/* Whether type's __repr__ is object's own (an object that says nothing of
 * itself in text). */
static int default_repr(PyTypeObject *type) {
    PyObject *mro = type->tp_mro;
    if (mro == NULL || !PyTuple_Check(mro)) return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); i++) {
        PyTypeObject *base = (PyTypeObject *)PyTuple_GET_ITEM(mro, i);
        if (base->tp_dict != NULL && PyDict_GetItemString(base->tp_dict, "__repr__") != NULL)
            return base == &PyBaseObject_Type;
    }
    return 1;
}

/* Whether a value of type is shown as an image (or a saved file) rather
 * than its repr: IPython's display protocol (_repr_png_, _repr_svg_;
 * _repr_html_ only where the repr is object's, as a pandas DataFrame's
 * text table is what a terminal wants), and matplotlib's Figure. */
static int rich_type(PyTypeObject *type) {
    if (type_has(type, "_repr_png_") || type_has(type, "_repr_svg_")) return 1;
    if (type_has(type, "_repr_html_") && default_repr(type)) return 1;
    PyObject *mro = type->tp_mro;
    if (mro == NULL || !PyTuple_Check(mro)) return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); i++) {
        PyTypeObject *base = (PyTypeObject *)PyTuple_GET_ITEM(mro, i);
        PyObject *module = base->tp_dict != NULL ? PyDict_GetItemString(base->tp_dict, "__module__") : NULL;
        if (strcmp(base->tp_name, "Figure") == 0 && module != NULL && PyUnicode_Check(module) &&
            PyUnicode_CompareWithASCIIString(module, "matplotlib.figure") == 0)
            return 1;
    }
    return 0;
}

static PyObject *plain_displayhook; /* sys.__displayhook__ */

/* sys.displayhook at py>: a rich value goes to the REPL helper's
 * show_rich; any other to sys.__displayhook__ itself. It is C so that a
 * repr that raises shows no frame of pyaichat's in its traceback, which
 * stays python3's. */
static PyObject *rich_displayhook(PyObject *self, PyObject *value) {
    (void)self;
    if (value != Py_None && rich_type(Py_TYPE(value))) {
        PyObject *repl = pyb_helper("_pyaichat_repl");
        PyObject *res = repl != NULL ? PyObject_CallMethod(repl, "show_rich", "O", value) : NULL;
        Py_XDECREF(repl);
        int shown = res != NULL && PyObject_IsTrue(res) > 0;
        Py_XDECREF(res);
        if (res == NULL) PyErr_Clear();
        if (shown) {
            PyObject *builtins = PyEval_GetBuiltins(); /* borrowed */
            if (builtins == NULL || PyDict_SetItemString(builtins, "_", value) < 0) return NULL;
            Py_RETURN_NONE;
        }
    }
    if (plain_displayhook == NULL) {
        plain_displayhook = PySys_GetObject("__displayhook__"); /* borrowed */
        Py_XINCREF(plain_displayhook);
    }
    if (plain_displayhook == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "lost sys.displayhook");
        return NULL;
    }
    return PyObject_CallOneArg(plain_displayhook, value);
}

/* Named as sys's own, which is what its repr shows. */
static PyMethodDef rich_displayhook_def = {"displayhook", rich_displayhook, METH_O,
                                           "Show a value at py>: rich ones as images."};

static PyMethodDef display_methods[] = {
    {"graphics", mod_graphics, METH_NOARGS, "What the terminal draws images with."},
    {"draw_image", mod_draw_image, METH_O, "Draw a PNG image at the cursor."},
    {NULL, NULL, 0, NULL},
};

static int matplotlib_seen;

/* Once matplotlib's rcParams exist (at the first import after they are
 * made, still inside matplotlib's own import, before pyplot picks a
 * backend), the REPL helper may choose pyaichat's backend. A C hook costs
 * a string compare per audit event, and user code cannot see it. It
 * never fails the event. */
static int display_audit(const char *event, PyObject *args, void *data) {
    (void)args;
    (void)data;
    if (matplotlib_seen || strcmp(event, "import") != 0) return 0;
    PyObject *modules = PyImport_GetModuleDict(); /* borrowed */
    PyObject *mpl = modules != NULL ? PyDict_GetItemString(modules, "matplotlib") : NULL;
    if (mpl == NULL || !PyModule_Check(mpl)) return 0;
    PyObject *dict = PyModule_GetDict(mpl); /* borrowed */
    if (dict == NULL || PyDict_GetItemString(dict, "rcParams") == NULL) return 0;
    matplotlib_seen = 1;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyObject *repl = pyb_helper("_pyaichat_repl");
    PyObject *res = repl != NULL ? PyObject_CallMethod(repl, "matplotlib_loaded", NULL) : NULL;
    if (res == NULL) PyErr_WriteUnraisable(NULL);
    Py_XDECREF(res);
    Py_XDECREF(repl);
    PyErr_Restore(type, value, tb);
    return 0;
}

int pyb_add_display(PyObject *mod) {
    if (PyModule_AddFunctions(mod, display_methods) < 0) return -1;
    plain_displayhook = PySys_GetObject("__displayhook__"); /* borrowed */
    Py_XINCREF(plain_displayhook);
    PyObject *hook = PyCFunction_New(&rich_displayhook_def, NULL);
    if (hook == NULL || PyModule_AddObject(mod, "rich_displayhook", hook) < 0) {
        Py_XDECREF(hook);
        return -1;
    }
    return PySys_AddAuditHook(display_audit, NULL);
}
