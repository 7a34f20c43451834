/* Reading Python arguments in the C accelerators (_fastobs.c, _fastlook.c): ints, numbers and the
   items of a tuple or list, each error naming what was read. No __index__ or __float__ calls: they
   could run code that changes the sequences being read. Included by each extension (header only). */

#ifndef ALLFIVES_FASTARGS_H
#define ALLFIVES_FASTARGS_H

#include <Python.h>

/* an int; ``prefix`` and ``name`` say what it is in the error ("an item of " "view.pips") */
static int int_named(PyObject *obj, long *out, const char *prefix, const char *name) {
    if (!PyLong_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s%s must be an int, not %.100s", prefix, name, Py_TYPE(obj)->tp_name);
        return -1;
    }
    *out = PyLong_AsLong(obj);
    return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

/* an int; ``what`` names it in the error */
static inline int int_of(PyObject *obj, long *out, const char *what) { return int_named(obj, out, "", what); }

/* an int or a float as a double; ``what`` names it in the error */
static int number_of(PyObject *obj, double *out, const char *what) {
    if (PyFloat_Check(obj)) {
        *out = PyFloat_AS_DOUBLE(obj);
        return 0;
    }
    if (!PyLong_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be a number, not %.100s", what, Py_TYPE(obj)->tp_name);
        return -1;
    }
    *out = PyLong_AsDouble(obj);
    return (*out == -1.0 && PyErr_Occurred()) ? -1 : 0;
}

/* the items of a tuple or a list, with their count; ``what`` names it in the error */
static PyObject **items_of(PyObject *seq, Py_ssize_t *n, const char *what) {
    static PyObject *none[1];
    if (PyTuple_Check(seq)) {
        *n = PyTuple_GET_SIZE(seq);
        return *n ? &PyTuple_GET_ITEM(seq, 0) : none;
    }
    if (PyList_Check(seq)) {
        *n = PyList_GET_SIZE(seq);
        return *n ? &PyList_GET_ITEM(seq, 0) : none;
    }
    PyErr_Format(PyExc_TypeError, "%s must be a tuple or list, not %.100s", what, Py_TYPE(seq)->tp_name);
    return NULL;
}

#endif
