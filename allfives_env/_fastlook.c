/* Optional C accelerator for allfives_env.lookahead.facts_of_moves.

   For every legal move of a view it computes the move facts (lookahead.MoveFacts) exactly as the
   pure-Python facts_of_moves_python does, its floating point in the same order
   (tests/test_lookahead_accelerator.py checks that the two agree value for value). It knows no
   rules: the tables behind the engine's scoring_replies (engine.layout.reply_tables()), the
   tiles' pips and the tile of each action id come from configure(); the layout after each move
   (view.ends_after_moves()), the points of each move (view.move_points()) and the reply models
   (lookahead.context) come with each call. move_facts returns the facts; fill writes the
   observation's lookahead pieces straight into a vector (the tiles each other seat may hold, given
   as masks, and the per-move pieces), at the offsets and scales that configure_pieces() received
   from allfives_env.observation.

   If this module is not built (no C compiler), the Python loop is used instead. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "_fastargs.h"
#include "_fastbits.h"
#include <math.h>

#define NUM_TILES 28
#define NUM_ACTIONS 112
#define MAX_PIP 15
#define MAX_MODULUS 64
#define MAX_VALUE (1L << 24)
#define ALL_TILES ((1L << NUM_TILES) - 1)

/* the fields of MoveFacts, in order; configure() checks the class against them */
enum { F_ACTION, F_POINTS, F_OUT, F_THREAT, F_THREAT_MAX, F_NO_REPLY, F_PARTNER, F_PIPS_LEFT, F_VARIETY,
       F_MOBILITY, F_DOUBLE, NUM_FIELDS };
static const char *FIELD_NAMES[NUM_FIELDS] = {
    "action", "points", "out", "threat", "threat_max", "no_reply", "partner", "pips_left", "variety",
    "mobility", "double",
};
/* the fields of ReplyModel that a model is read by */
static const char *MODEL_FIELDS[] = {"seat", "allowed", "p"};

static int configured = 0;
static PyTypeObject *facts_type = NULL;
static int action_tile[NUM_ACTIONS];
static int tile_pips[NUM_TILES], is_double[NUM_TILES];
static long tile_pip_mask[NUM_TILES];
static int closed, modulus;
static long pip_tiles[MAX_PIP + 1];
static long scoring_on[MAX_PIP][MAX_MODULUS];
static int end_count[NUM_TILES][MAX_PIP + 1];
/* lookahead.TILES_WITH_PIPS: the tiles showing any pip of a 7-bit mask */
static long tiles_with_pips[128];

/* the observation's pieces that fill() writes: the field, its offset and its scale; and where the
   may-hold masks go (NUM_TILES values per seat, for at most may_hold_seats seats) */
static Py_ssize_t num_pieces = 0, vector_size = -1, may_hold_offset = 0, may_hold_seats = 0;
static int piece_field[NUM_FIELDS];
static Py_ssize_t piece_offset[NUM_FIELDS];
static double piece_scale[NUM_FIELDS];

/* ints in [lo, hi] from a tuple or list of exactly ``n`` items */
static int ints_of(PyObject *seq, Py_ssize_t n, long lo, long hi, long *out, const char *what) {
    Py_ssize_t got;
    PyObject **items = items_of(seq, &got, what);
    if (items == NULL)
        return -1;
    if (got != n) {
        PyErr_Format(PyExc_ValueError, "%s must hold %zd items, not %zd", what, n, got);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (int_of(items[i], &out[i], what) < 0)
            return -1;
        if (out[i] < lo || out[i] > hi) {
            PyErr_Format(PyExc_ValueError, "%s must hold ints in %ld..%ld, not %ld", what, lo, hi, out[i]);
            return -1;
        }
    }
    return 0;
}

/* the table ``name`` of the dict ``tables`` */
static PyObject *table(PyObject *tables, const char *name) {
    PyObject *v = PyDict_GetItemString(tables, name);
    if (v == NULL)
        PyErr_Format(PyExc_KeyError, "tables lack %s", name);
    return v;
}

/* the table ``name``: ``rows`` rows (one per ``per``) of ``cols`` ints in 0..hi, row r at out + r * stride */
static int rows_of(PyObject *tables, const char *name, const char *per, long rows, long cols, long hi, long *out,
                   long stride) {
    PyObject *v = table(tables, name);
    Py_ssize_t n;
    PyObject **row = v == NULL ? NULL : items_of(v, &n, name);
    if (row == NULL)
        return -1;
    if (n != rows) {
        PyErr_Format(PyExc_ValueError, "%s must hold one row per %s", name, per);
        return -1;
    }
    char what[64];
    snprintf(what, sizeof what, "a row of %s", name);
    for (long r = 0; r < rows; r++)
        if (ints_of(row[r], cols, 0, hi, out + r * stride, what) < 0)
            return -1;
    return 0;
}

/* whether ``type`` is a tuple subclass with no extra fields whose _fields are ``names`` */
static int check_fields(PyObject *type, const char **names, int n, const char *what) {
    if (!PyType_Check(type) || !PyType_IsSubtype((PyTypeObject *)type, &PyTuple_Type) ||
        ((PyTypeObject *)type)->tp_basicsize != PyTuple_Type.tp_basicsize) {
        PyErr_Format(PyExc_TypeError, "%s must be a NamedTuple class", what);
        return -1;
    }
    PyObject *fields = PyObject_GetAttrString(type, "_fields");
    if (fields == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
    }
    int ok = fields != NULL && PyTuple_Check(fields) && PyTuple_GET_SIZE(fields) == n;
    for (int i = 0; ok && i < n; i++) {
        PyObject *f = PyTuple_GET_ITEM(fields, i);
        ok = PyUnicode_Check(f) && PyUnicode_CompareWithASCIIString(f, names[i]) == 0;
    }
    Py_XDECREF(fields);
    if (!ok) {
        PyErr_Format(PyExc_ValueError, "%s does not have the fields this accelerator was written for", what);
        return -1;
    }
    return 0;
}

/* configure(tables): see the header; changes nothing unless all of it is valid */
static PyObject *configure(PyObject *self, PyObject *args) {
    PyObject *tables;
    if (!PyArg_ParseTuple(args, "O!", &PyDict_Type, &tables))
        return NULL;
    PyObject *facts = table(tables, "move_facts"), *model = facts ? table(tables, "reply_model") : NULL;
    if (model == NULL || check_fields(facts, FIELD_NAMES, NUM_FIELDS, "move_facts") < 0 ||
        check_fields(model, MODEL_FIELDS, 3, "reply_model") < 0)
        return NULL;
    long c, m;
    PyObject *v;
    if ((v = table(tables, "closed")) == NULL || int_of(v, &c, "closed") < 0)
        return NULL;
    if ((v = table(tables, "modulus")) == NULL || int_of(v, &m, "modulus") < 0)
        return NULL;
    if (c < 1 || c > MAX_PIP || m < 1 || m > MAX_MODULUS) {
        PyErr_Format(PyExc_ValueError, "closed must be in 1..%d and modulus in 1..%d", MAX_PIP, MAX_MODULUS);
        return NULL;
    }
    long at[NUM_ACTIONS], pips[NUM_TILES], pip_mask[NUM_TILES], dbl[NUM_TILES], pt[MAX_PIP + 1];
    long on[MAX_PIP][MAX_MODULUS], ec[NUM_TILES][MAX_PIP + 1];
    if ((v = table(tables, "action_tile")) == NULL || ints_of(v, NUM_ACTIONS, 0, NUM_TILES - 1, at, "action_tile") < 0 ||
        (v = table(tables, "tile_pips")) == NULL || ints_of(v, NUM_TILES, 0, MAX_VALUE, pips, "tile_pips") < 0 ||
        (v = table(tables, "tile_pip_mask")) == NULL ||
        ints_of(v, NUM_TILES, 0, (1L << MAX_PIP) - 1, pip_mask, "tile_pip_mask") < 0 ||
        (v = table(tables, "is_double")) == NULL || ints_of(v, NUM_TILES, 0, 1, dbl, "is_double") < 0 ||
        (v = table(tables, "pip_tiles")) == NULL || ints_of(v, c + 1, 0, ALL_TILES, pt, "pip_tiles") < 0)
        return NULL;
    long twp[128];
    if ((v = table(tables, "tiles_with_pips")) == NULL || ints_of(v, 128, 0, ALL_TILES, twp, "tiles_with_pips") < 0)
        return NULL;
    if (rows_of(tables, "scoring_on", "pip", c, m, ALL_TILES, &on[0][0], MAX_MODULUS) < 0 ||
        rows_of(tables, "end_count", "tile", NUM_TILES, c + 1, MAX_VALUE, &ec[0][0], MAX_PIP + 1) < 0)
        return NULL;

    Py_INCREF(facts);
    Py_XSETREF(facts_type, (PyTypeObject *)facts);
    closed = (int)c;
    modulus = (int)m;
    for (int a = 0; a < NUM_ACTIONS; a++)
        action_tile[a] = (int)at[a];
    for (int t = 0; t < NUM_TILES; t++) {
        tile_pips[t] = (int)pips[t];
        tile_pip_mask[t] = pip_mask[t];
        is_double[t] = (int)dbl[t];
        for (long p = 0; p <= c; p++)
            end_count[t][p] = (int)ec[t][p];
    }
    for (long p = 0; p <= c; p++)
        pip_tiles[p] = pt[p];
    for (int m = 0; m < 128; m++)
        tiles_with_pips[m] = twp[m];
    for (long p = 0; p < c; p++)
        for (long r = 0; r < m; r++)
            scoring_on[p][r] = on[p][r];
    configured = 1;
    Py_RETURN_NONE;
}

/* configure_pieces(pieces, may_hold, size): per per-move piece that fill() writes, (offset, scale,
   index of its field in MoveFacts); may_hold (offset, seats) of the may-hold masks; ``size`` the
   vector's; changes nothing unless all of it is valid */
static PyObject *configure_pieces(PyObject *self, PyObject *args) {
    PyObject *pieces;
    Py_ssize_t size, n, hold_offset, hold_seats;
    if (!PyArg_ParseTuple(args, "O(nn)n", &pieces, &hold_offset, &hold_seats, &size))
        return NULL;
    if (hold_offset < 0 || hold_seats < 0 || hold_seats > 8 || hold_offset + NUM_TILES * hold_seats > size) {
        PyErr_SetString(PyExc_ValueError, "the may-hold masks must lie inside the vector");
        return NULL;
    }
    PyObject **items = items_of(pieces, &n, "pieces");
    if (items == NULL)
        return NULL;
    if (n > NUM_FIELDS) {
        PyErr_Format(PyExc_ValueError, "pieces must hold at most %d entries", NUM_FIELDS);
        return NULL;
    }
    int field[NUM_FIELDS];
    Py_ssize_t offset[NUM_FIELDS];
    double scale[NUM_FIELDS];
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o, *s, *f;
        if (!PyArg_ParseTuple(items[i], "OOO;each piece must be (offset, scale, field index)", &o, &s, &f))
            return NULL;
        long off, idx;
        if (int_of(o, &off, "a piece's offset") < 0 || number_of(s, &scale[i], "a piece's scale") < 0 ||
            int_of(f, &idx, "a piece's field index") < 0)
            return NULL;
        if (off < 0 || off + NUM_ACTIONS > size) {
            PyErr_SetString(PyExc_ValueError, "a piece's 112 values must lie inside the vector");
            return NULL;
        }
        if (!(scale[i] > 0)) {
            PyErr_SetString(PyExc_ValueError, "a piece's scale must be positive");
            return NULL;
        }
        if (idx < 0 || idx >= NUM_FIELDS) {
            PyErr_Format(PyExc_ValueError, "a piece's field index must be in 0..%d", NUM_FIELDS - 1);
            return NULL;
        }
        offset[i] = off;
        field[i] = (int)idx;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        piece_field[i] = field[i];
        piece_offset[i] = offset[i];
        piece_scale[i] = scale[i];
    }
    num_pieces = n;
    may_hold_offset = hold_offset;
    may_hold_seats = hold_seats;
    vector_size = size;
    Py_RETURN_NONE;
}

typedef struct {
    int on;
    long allowed;
    double p;
} model_t;

/* a reply model: None, or a ReplyModel (seat, allowed, p) */
static int model_of(PyObject *obj, model_t *m, const char *what) {
    m->on = obj != Py_None;
    if (!m->on)
        return 0;
    if (!PyTuple_Check(obj) || PyTuple_GET_SIZE(obj) != 3) {
        PyErr_Format(PyExc_TypeError, "%s must be None or a ReplyModel, not %.100s", what, Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (int_of(PyTuple_GET_ITEM(obj, 1), &m->allowed, "a model's allowed") < 0 ||
        number_of(PyTuple_GET_ITEM(obj, 2), &m->p, "a model's p") < 0)
        return -1;
    if (m->allowed < 0 || m->allowed > ALL_TILES) {
        PyErr_Format(PyExc_ValueError, "%s's allowed must be a 28-bit tile mask", what);
        return -1;
    }
    if (!(m->p >= 0.0 && m->p <= 1.0)) {
        PyErr_Format(PyExc_ValueError, "%s's p must be a probability", what);
        return -1;
    }
    return 0;
}

/* the arguments shared by move_facts and fill, and the facts of one move */
typedef struct {
    long hand;
    Py_ssize_t n;
    PyObject **legal, **points, **after;
    model_t next, partner;
} input_t;

typedef struct {
    long action, points, threat_max, pips_left, variety, mobility;
    int out, dbl;
    double threat, no_reply, partner;
} fact_t;

/* args: hand, legal_actions, move_points, ends_after_moves, next_model, partner_model */
static int input_of(PyObject *const *args, input_t *in) {
    if (!configured) {
        PyErr_SetString(PyExc_RuntimeError, "configure() was not called");
        return -1;
    }
    Py_ssize_t n_points, n_after;
    if (int_of(args[0], &in->hand, "hand") < 0)
        return -1;
    if (in->hand < 0 || in->hand > ALL_TILES) {
        PyErr_SetString(PyExc_ValueError, "hand must be a 28-bit tile mask");
        return -1;
    }
    if ((in->legal = items_of(args[1], &in->n, "legal_actions")) == NULL ||
        (in->points = items_of(args[2], &n_points, "move_points")) == NULL ||
        (in->after = items_of(args[3], &n_after, "ends_after_moves")) == NULL)
        return -1;
    if (n_points != in->n || n_after != in->n) {
        PyErr_SetString(PyExc_ValueError, "move_points and ends_after_moves must hold one entry per legal action");
        return -1;
    }
    if (in->n > NUM_ACTIONS) {
        PyErr_SetString(PyExc_ValueError, "legal_actions holds more than 112 actions");
        return -1;
    }
    return model_of(args[4], &in->next, "next_model") < 0 || model_of(args[5], &in->partner, "partner_model") < 0
               ? -1 : 0;
}

/* engine.layout.scoring_replies(pips, values, False, candidates), into ``out``; returns the count */
static int scoring_replies(const long *pips, const long *values, long candidates, long *out) {
    long best[NUM_TILES] = {0};
    long seen = 0;
    long total = values[0] + values[1] + values[2] + values[3];
    for (int e = 0; e < 4; e++) {
        long p = pips[e];
        if (p == closed)
            continue;
        long rest = total - values[e];
        long scoring = candidates & scoring_on[p][rest % modulus];
        while (scoring) {
            int t = low_bit(scoring);
            scoring &= scoring - 1;
            long points = rest + end_count[t][p];
            if (points > best[t]) {
                best[t] = points;
                seen |= 1L << t;
            }
        }
    }
    int n = 0;
    while (seen) {
        out[n++] = best[low_bit(seen)];
        seen &= seen - 1;
    }
    return n;
}

/* lookahead.expected_best: sorted descending, stopping at the first value <= 0 */
static double expected_best(long *values, int n, double p) {
    if (p <= 0.0 || n == 0)
        return 0.0;
    for (int i = 1; i < n; i++) {
        long v = values[i];
        int j = i;
        for (; j > 0 && values[j - 1] < v; j--)
            values[j] = values[j - 1];
        values[j] = v;
    }
    double miss = 1.0, total = 0.0;
    for (int i = 0; i < n; i++) {
        if (values[i] <= 0)
            break;
        total += (double)values[i] * p * miss;
        miss *= 1.0 - p;
    }
    return total;
}

static long max_of(const long *values, int n) {
    long m = values[0];
    for (int i = 1; i < n; i++)
        if (values[i] > m)
            m = values[i];
    return m;
}

/* the facts of move ``i`` of ``in`` */
static int fact_of(const input_t *in, Py_ssize_t i, fact_t *f) {
    if (int_of(in->legal[i], &f->action, "an item of legal_actions") < 0 ||
        int_of(in->points[i], &f->points, "an item of move_points") < 0)
        return -1;
    if (f->action < 0 || f->action >= NUM_ACTIONS) {
        PyErr_SetString(PyExc_ValueError, "legal_actions holds an id outside 0..111");
        return -1;
    }
    int t = action_tile[f->action];
    long left = in->hand & ~(1L << t);
    f->dbl = is_double[t];
    f->threat = f->no_reply = f->partner = 0.0;
    f->threat_max = f->pips_left = f->variety = f->mobility = 0;
    f->out = left == 0;
    if (f->out)
        return 0;
    Py_ssize_t two;
    PyObject **after = items_of(in->after[i], &two, "an item of ends_after_moves");
    if (after == NULL)
        return -1;
    long pips[4], values[4];
    if (two != 2) {
        PyErr_SetString(PyExc_ValueError, "an item of ends_after_moves must be (pips, values)");
        return -1;
    }
    if (ints_of(after[0], 4, 0, closed, pips, "the pips of ends_after_moves") < 0 ||
        ints_of(after[1], 4, 0, MAX_VALUE, values, "the values of ends_after_moves") < 0)
        return -1;
    long fitting = pip_tiles[pips[0]] | pip_tiles[pips[1]] | pip_tiles[pips[2]] | pip_tiles[pips[3]];
    long replies[NUM_TILES];
    if (in->next.on) {
        int n = scoring_replies(pips, values, in->next.allowed, replies);
        if (n) {
            f->threat = expected_best(replies, n, in->next.p);
            f->threat_max = max_of(replies, n);
        }
        f->no_reply = pow(1.0 - in->next.p, (double)bit_count(in->next.allowed & fitting));
    }
    if (in->partner.on) {
        int n = scoring_replies(pips, values, in->partner.allowed, replies);
        if (n)
            f->partner = expected_best(replies, n, in->partner.p);
    }
    long pip_set = 0;
    for (long m = left; m; m &= m - 1) {
        int u = low_bit(m);
        f->pips_left += tile_pips[u];
        pip_set |= tile_pip_mask[u];
    }
    f->variety = bit_count(pip_set);
    f->mobility = bit_count(left & fitting);
    return 0;
}

/* a MoveFacts of ``f`` (a tuple of the configured class, filled as tuple_subtype_new does) */
static PyObject *facts_object(const fact_t *f) {
    PyObject *items[NUM_FIELDS] = {
        PyLong_FromLong(f->action), PyLong_FromLong(f->points), PyBool_FromLong(f->out),
        PyFloat_FromDouble(f->threat), PyLong_FromLong(f->threat_max), PyFloat_FromDouble(f->no_reply),
        PyFloat_FromDouble(f->partner), PyLong_FromLong(f->pips_left), PyLong_FromLong(f->variety),
        PyLong_FromLong(f->mobility), PyBool_FromLong(f->dbl),
    };
    PyObject *obj = NULL;
    for (int k = 0; k < NUM_FIELDS; k++)
        if (items[k] == NULL)
            goto fail;
    obj = facts_type->tp_alloc(facts_type, NUM_FIELDS);
    if (obj == NULL)
        goto fail;
    for (int k = 0; k < NUM_FIELDS; k++)
        PyTuple_SET_ITEM(obj, k, items[k]);
    return obj;
fail:
    for (int k = 0; k < NUM_FIELDS; k++)
        Py_XDECREF(items[k]);
    return NULL;
}

/* move_facts(hand, legal_actions, move_points, ends_after_moves, next_model, partner_model) */
static PyObject *move_facts(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError,
                        "move_facts(hand, legal_actions, move_points, ends_after_moves, next_model, partner_model) "
                        "takes 6 arguments");
        return NULL;
    }
    input_t in;
    if (input_of(args, &in) < 0)
        return NULL;
    /* every item is read before any object is made: making one may run code that changes them */
    fact_t facts[NUM_ACTIONS];
    for (Py_ssize_t i = 0; i < in.n; i++)
        if (fact_of(&in, i, &facts[i]) < 0)
            return NULL;
    PyObject *out = PyList_New(in.n);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < in.n; i++) {
        PyObject *obj = facts_object(&facts[i]);
        if (obj == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, obj);
    }
    return out;
}

static PyObject *write_out(PyObject *out, const long *masks, Py_ssize_t n_hold, const input_t *in);

/* 0 once configure_pieces() was called, else -1 with the error (fill and fill_view need it) */
static int pieces_configured(void) {
    if (vector_size >= 0)
        return 0;
    PyErr_SetString(PyExc_RuntimeError, "configure_pieces() was not called");
    return -1;
}

/* fill(out, may_hold, hand, legal_actions, move_points, ends_after_moves, next_model, partner_model):
   1 for each tile of each may-hold mask (per relative seat from 1 on), and per move that does not
   go out each configured piece's value at its action id (its field / its scale, clipped to 1); the
   rest of ``out`` is left as it is */
static PyObject *fill(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError,
                        "fill(out, may_hold, hand, legal_actions, move_points, ends_after_moves, next_model, "
                        "partner_model) takes 8 arguments");
        return NULL;
    }
    if (pieces_configured() < 0)
        return NULL;
    Py_ssize_t n_hold;
    PyObject **hold = items_of(args[1], &n_hold, "may_hold");
    if (hold == NULL)
        return NULL;
    if (n_hold > may_hold_seats) {
        PyErr_Format(PyExc_ValueError, "may_hold must hold at most %zd masks", may_hold_seats);
        return NULL;
    }
    long masks[8];
    for (Py_ssize_t r = 0; r < n_hold; r++) {
        if (int_of(hold[r], &masks[r], "an item of may_hold") < 0)
            return NULL;
        if (masks[r] < 0 || masks[r] > ALL_TILES) {
            PyErr_SetString(PyExc_ValueError, "may_hold must hold 28-bit tile masks");
            return NULL;
        }
    }
    input_t in;
    if (input_of(args + 2, &in) < 0)
        return NULL;
    return write_out(args[0], masks, n_hold, &in);
}

/* the may-hold masks and the per-move pieces of ``in`` into the vector ``out`` (see fill); None, or
   NULL with an error */
static PyObject *write_out(PyObject *out, const long *masks, Py_ssize_t n_hold, const input_t *in) {
    fact_t facts[NUM_ACTIONS];
    for (Py_ssize_t i = 0; i < in->n; i++)
        if (fact_of(in, i, &facts[i]) < 0)
            return NULL;
    Py_buffer buf;
    if (PyObject_GetBuffer(out, &buf, PyBUF_WRITABLE) < 0)
        return NULL;
    if (buf.len != vector_size * (Py_ssize_t)sizeof(float)) {
        PyErr_Format(PyExc_ValueError, "out must hold %zd float32 values", vector_size);
        PyBuffer_Release(&buf);
        return NULL;
    }
    float *o = (float *)buf.buf;
    for (Py_ssize_t r = 0; r < n_hold; r++)
        for (long m = masks[r]; m; m &= m - 1)
            o[may_hold_offset + NUM_TILES * r + low_bit(m)] = 1.0f;
    for (Py_ssize_t i = 0; i < in->n; i++) {
        const fact_t *f = &facts[i];
        if (f->out)
            continue;
        double value[NUM_FIELDS] = {
            (double)f->action, (double)f->points, 0.0, f->threat, (double)f->threat_max, f->no_reply,
            f->partner, (double)f->pips_left, (double)f->variety, (double)f->mobility, (double)f->dbl,
        };
        for (Py_ssize_t k = 0; k < num_pieces; k++) {
            double x = value[piece_field[k]] / piece_scale[k];
            o[piece_offset[k] + f->action] = (float)(x < 1.0 ? x : 1.0);
        }
    }
    PyBuffer_Release(&buf);
    Py_RETURN_NONE;
}

/* lookahead.reply_model of ``seat`` (-1: none) for the viewer ``viewer``, from the unseen tiles */
static void reply_model_of(int seat, int viewer, const long *missing, const long *counts, long unseen, model_t *m) {
    m->on = seat >= 0 && seat != viewer && counts[seat] != 0;
    if (!m->on)
        return;
    m->allowed = unseen & ~tiles_with_pips[missing[seat]];
    int k = bit_count(m->allowed);
    double p = k ? (double)counts[seat] / (double)k : 0.0;
    m->p = p < 1.0 ? p : 1.0;
}

/* fill_view(out, seat, next_seat, partner_seat, hand, played, missing_pips, tile_counts, legal_actions,
   move_points, ends_after_moves): fill() with the may-hold masks and the reply models that
   lookahead.context and allowed_mask give a view: ``seat`` the viewer, ``next_seat`` the next seat
   when it plays for another side, ``partner_seat`` the partner (-1: none), ``missing_pips`` and
   ``tile_counts`` one per seat */
static PyObject *fill_view(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 11) {
        PyErr_SetString(PyExc_TypeError,
                        "fill_view(out, seat, next_seat, partner_seat, hand, played, missing_pips, tile_counts, "
                        "legal_actions, move_points, ends_after_moves) takes 11 arguments");
        return NULL;
    }
    if (pieces_configured() < 0)
        return NULL;
    long seat, nxt, partner, played;
    Py_ssize_t n;
    if (int_of(args[1], &seat, "seat") < 0 || int_of(args[2], &nxt, "next_seat") < 0 ||
        int_of(args[3], &partner, "partner_seat") < 0 || int_of(args[5], &played, "played") < 0)
        return NULL;
    if (played < 0 || played > ALL_TILES) {
        PyErr_SetString(PyExc_ValueError, "played must be a 28-bit tile mask");
        return NULL;
    }
    PyObject **counts_items = items_of(args[7], &n, "tile_counts");
    if (counts_items == NULL)
        return NULL;
    if (n < 2 || n > may_hold_seats + 1) {
        PyErr_Format(PyExc_ValueError, "tile_counts must hold one count per seat (2..%zd)", may_hold_seats + 1);
        return NULL;
    }
    if (seat < 0 || seat >= n || nxt < -1 || nxt >= n || partner < -1 || partner >= n) {
        PyErr_SetString(PyExc_ValueError, "seat, next_seat and partner_seat must be seats (-1: none for the last two)");
        return NULL;
    }
    long missing[16], counts[16];
    if (ints_of(args[6], n, 0, 127, missing, "missing_pips") < 0 ||
        ints_of(args[7], n, 0, NUM_TILES, counts, "tile_counts") < 0)
        return NULL;
    input_t in;
    PyObject *in_args[6] = {args[4], args[8], args[9], args[10], Py_None, Py_None};
    if (input_of(in_args, &in) < 0)
        return NULL;
    long unseen = ALL_TILES & ~in.hand & ~played;
    reply_model_of((int)nxt, (int)seat, missing, counts, unseen, &in.next);
    reply_model_of((int)partner, (int)seat, missing, counts, unseen, &in.partner);
    long masks[8];
    for (Py_ssize_t r = 1; r < n; r++)
        masks[r - 1] = unseen & ~tiles_with_pips[missing[(seat + r) % n]];
    return write_out(args[0], masks, n - 1, &in);
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS,
     "configure(tables): the engine's tables (see allfives_env.lookahead) and the MoveFacts and ReplyModel classes"},
    {"configure_pieces", configure_pieces, METH_VARARGS,
     "configure_pieces(pieces, may_hold, size): (offset, scale, MoveFacts field index) of each per-move piece "
     "fill() writes, (offset, seats) of the may-hold masks"},
    {"move_facts", (PyCFunction)(void (*)(void))move_facts, METH_FASTCALL,
     "move_facts(hand, legal_actions, move_points, ends_after_moves, next_model, partner_model): MoveFacts per move"},
    {"fill", (PyCFunction)(void (*)(void))fill, METH_FASTCALL,
     "fill(out, may_hold, hand, legal_actions, move_points, ends_after_moves, next_model, partner_model): "
     "the lookahead pieces"},
    {"fill_view", (PyCFunction)(void (*)(void))fill_view, METH_FASTCALL,
     "fill_view(out, seat, next_seat, partner_seat, hand, played, missing_pips, tile_counts, legal_actions, "
     "move_points, ends_after_moves): fill() with the may-hold masks and reply models of a view"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_fastlook", "C accelerator for the lookahead's move facts", -1, methods,
};

PyMODINIT_FUNC PyInit__fastlook(void) { return PyModule_Create(&module); }
