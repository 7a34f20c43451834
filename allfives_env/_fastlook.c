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

   observe_game goes one step further, for the environments' hot path: it reads an engine Game and
   makes a seat's whole observation and action mask, the legal moves, the points of each and the
   ends each leaves included. Those three mirror engine.layout's actions_for, placements_points
   and ends_after (from the same tables, and the arms a covered spinner opens from
   configure_view()); the engine stays the reference, and tests/test_observe_game.py checks the
   two against each other at every seat of random games.

   If this module is not built (no C compiler), the Python loop is used instead. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "_fastview.h"
#include <math.h>

#define NUM_TILES 28
#define NUM_ACTIONS 112
#define MAX_PIP 15
#define MAX_MODULUS 64
#define MAX_VALUE (1L << 24)
#define ALL_TILES ((1L << NUM_TILES) - 1)

/* the fields of MoveFacts, in order; configure() checks the class against them */
enum { F_ACTION, F_POINTS, F_OUT, F_THREAT, F_THREAT_MAX, F_NO_REPLY, F_PARTNER, F_PIPS_LEFT, F_VARIETY,
       F_MOBILITY, F_DOUBLE, F_FOLLOW_UP, F_FOLLOW_UP_NET, NUM_FIELDS };
static const char *FIELD_NAMES[NUM_FIELDS] = {
    "action", "points", "out", "threat", "threat_max", "no_reply", "partner", "pips_left", "variety",
    "mobility", "double", "follow_up", "follow_up_net",
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
/* the sizes a vector with the lookahead pieces may have (one per observation version that has
   them, ascending; the last is vector_size): a piece is written where it lies inside the vector */
#define MAX_SIZES 4
static Py_ssize_t vector_sizes[MAX_SIZES], num_sizes = 0;
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

/* configure_pieces(pieces, may_hold, sizes): per per-move piece that fill() writes, (offset, scale,
   index of its field in MoveFacts); may_hold (offset, seats) of the may-hold masks; ``sizes`` the
   sizes a vector may have, ascending (each observation version's with these pieces: a vector gets
   the pieces that lie inside it); changes nothing unless all of it is valid */
static PyObject *configure_pieces(PyObject *self, PyObject *args) {
    PyObject *pieces, *size_seq;
    Py_ssize_t size, n, hold_offset, hold_seats, n_sizes;
    if (!PyArg_ParseTuple(args, "O(nn)O", &pieces, &hold_offset, &hold_seats, &size_seq))
        return NULL;
    PyObject **size_items = items_of(size_seq, &n_sizes, "sizes");
    if (size_items == NULL)
        return NULL;
    if (n_sizes < 1 || n_sizes > MAX_SIZES) {
        PyErr_Format(PyExc_ValueError, "sizes must hold 1 to %d vector sizes", MAX_SIZES);
        return NULL;
    }
    long sizes[MAX_SIZES];
    if (ints_of(size_seq, n_sizes, 1, 1L << 20, sizes, "sizes") < 0)
        return NULL;
    for (Py_ssize_t i = 1; i < n_sizes; i++)
        if (sizes[i] <= sizes[i - 1]) {
            PyErr_SetString(PyExc_ValueError, "sizes must be ascending");
            return NULL;
        }
    size = sizes[n_sizes - 1];
    if (hold_offset < 0 || hold_seats < 0 || hold_seats > 8 || hold_offset + NUM_TILES * hold_seats > sizes[0]) {
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
    for (Py_ssize_t i = 0; i < n_sizes; i++)
        vector_sizes[i] = sizes[i];
    num_sizes = n_sizes;
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
    int follow; /* which of the follow-ups the facts work out: 0 neither, 1 follow_up, 2 both */
} input_t;

typedef struct {
    long action, points, threat_max, pips_left, variety, mobility;
    int out, dbl;
    double threat, no_reply, partner, follow_up, follow_up_net;
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
    in->follow = 2;
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
    long best[NUM_TILES]; /* best[t] is set once t is in ``seen`` */
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
            if (points > (seen >> t & 1 ? best[t] : 0)) {
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

/* the most one tile of ``hand`` scores on the ends ``pips``, ``values`` (0: none scores) */
static long best_score(const long *pips, const long *values, long hand) {
    long replies[NUM_TILES];
    int n = scoring_replies(pips, values, hand, replies);
    return n ? max_of(replies, n) : 0;
}

/* engine.layout.end_after_reply: the ends ``pips``, ``values`` once tile ``t`` is placed on end ``e``
   (it fits), into ``after_pips``, ``after_values`` */
static void end_after(const long *pips, const long *values, int t, int e, long *after_pips, long *after_values) {
    for (int k = 0; k < 4; k++) {
        after_pips[k] = pips[k];
        after_values[k] = values[k];
    }
    after_values[e] = end_count[t][pips[e]];
    if (!is_double[t])
        after_pips[e] = after_values[e];
}

/* what tile ``t`` scores placed on end ``e`` (showing ``p``) of ends counting ``total`` in all
   (engine.layout.placements_points) */
static long placed_score(long total, const long *values, int t, int e, long p) {
    long count = total - values[e] + end_count[t][p];
    return count % modulus == 0 ? count : 0;
}

/* ``(score, t, e)`` into the ``n`` entries of ``scores``, ``tiles``, ``ends``, kept the most scoring
   first, after those already there on a tie; returns the new count */
static int insert_ranked(long *scores, int *tiles, int *ends, int n, long score, int t, int e) {
    int j = n;
    for (; j > 0 && scores[j - 1] < score; j--) {
        scores[j] = scores[j - 1];
        tiles[j] = tiles[j - 1];
        ends[j] = ends[j - 1];
    }
    scores[j] = score;
    tiles[j] = t;
    ends[j] = e;
    return n + 1;
}

/* engine.layout.tile_replies: the tiles of ``allowed`` that fit the ends ``pips``, ``values`` into
   ``tiles``, the most scoring first (ties: the lower tile), each with the first end where it scores
   that most into ``ends``; returns their count */
static int ranked_replies(const long *pips, const long *values, long allowed, int *tiles, int *ends) {
    long candidates = allowed & (pip_tiles[pips[0]] | pip_tiles[pips[1]] | pip_tiles[pips[2]] | pip_tiles[pips[3]]);
    long total = values[0] + values[1] + values[2] + values[3];
    long scores[NUM_TILES];
    int n = 0;
    for (long m = candidates; m; m &= m - 1) {
        int t = low_bit(m), end = -1;
        long best = -1;
        for (int e = 0; e < 4; e++) {
            long p = pips[e];
            if (p == closed || !(pip_tiles[p] >> t & 1))
                continue;
            long score = placed_score(total, values, t, e, p);
            if (score > best) {
                best = score;
                end = e;
            }
        }
        n = insert_ranked(scores, tiles, ends, n, best, t, end);
    }
    return n;
}

/* what lookahead.after_next_reply takes the expectation of: a value of the ends ``pips``, ``values``
   to a seat holding ``left`` while the next seat may hold ``allowed``, each with probability ``p`` */
typedef double (*ends_value_t)(const long *pips, const long *values, long left, long allowed, double p);

/* lookahead.after_next_reply: the expected ``value`` of the ends once ``next`` has replied on the
   ends ``pips``, ``values``: its fitting tiles ranked by the most each scores (ranked_replies), the
   first one held (each with probability p) played, and no longer among what it may hold; none held
   (or no next seat) leaves the ends as they are */
static double after_next_reply(const long *pips, const long *values, long left, const model_t *next, ends_value_t value) {
    long allowed = next->on ? next->allowed : 0;
    double p = next->on ? next->p : 0.0;
    int tiles[NUM_TILES], ends[NUM_TILES];
    int n = next->on ? ranked_replies(pips, values, allowed, tiles, ends) : 0;
    double miss = 1.0, expected = 0.0;
    for (int i = 0; i < n; i++) {
        long after_pips[4], after_values[4];
        int t = tiles[i];
        end_after(pips, values, t, ends[i], after_pips, after_values);
        expected += value(after_pips, after_values, left, allowed & ~(1L << t), p) * p * miss;
        miss *= 1.0 - p;
    }
    return expected + value(pips, values, left, allowed, p) * miss;
}

/* follow_up's value of the ends: best_score of ``left`` */
static double best_value(const long *pips, const long *values, long left, long allowed, double p) {
    (void)allowed;
    (void)p;
    return (double)best_score(pips, values, left);
}

/* lookahead.net_after: the seat's best next move on the ends ``pips``, ``values`` judged one exchange
   deep: the most, over the tiles of ``left`` and the ends each fits, of the points it scores there
   minus the expected best scoring reply of a seat holding each tile of ``allowed`` with probability
   ``p`` on the ends it leaves; holding no tile that fits, 0 minus that reply on the ends as they are */
static double net_after(const long *pips, const long *values, long left, long allowed, double p) {
    long total = values[0] + values[1] + values[2] + values[3], replies[NUM_TILES];
    /* the placements, the most scoring first: a placement's value is at most its points (the reply
       is worth 0 or more), so once the points are no more than the best value, no later one beats it */
    long points[4 * NUM_TILES];
    int tiles[4 * NUM_TILES], ends[4 * NUM_TILES], k = 0;
    for (int e = 0; e < 4; e++) {
        long pe = pips[e];
        if (pe == closed)
            continue;
        for (long c = left & pip_tiles[pe]; c; c &= c - 1) {
            int t = low_bit(c);
            k = insert_ranked(points, tiles, ends, k, placed_score(total, values, t, e, pe), t, e);
        }
    }
    if (k == 0) {
        int n = scoring_replies(pips, values, allowed, replies);
        return 0.0 - expected_best(replies, n, p);
    }
    double best = 0.0;
    for (int i = 0; i < k && (i == 0 || (double)points[i] > best); i++) {
        long after_pips[4], after_values[4];
        end_after(pips, values, tiles[i], ends[i], after_pips, after_values);
        int n = scoring_replies(after_pips, after_values, allowed, replies);
        double v = (double)points[i] - expected_best(replies, n, p);
        if (i == 0 || v > best)
            best = v;
    }
    return best;
}


/* the facts of ``action`` (scoring ``points``, leaving the ends ``pips`` and ``values``) for a
   hand ``hand`` against the reply models ``next`` and ``partner``; ``follow``: whether to work out
   follow_up (the costliest fact, left 0 where nothing reads it) */
static void facts_of(long hand, long action, long points, const long *pips, const long *values, const model_t *next,
                     const model_t *partner, int follow, fact_t *f) {
    int t = action_tile[action];
    long left = hand & ~(1L << t);
    f->action = action;
    f->points = points;
    f->dbl = is_double[t];
    f->threat = f->no_reply = f->partner = f->follow_up = f->follow_up_net = 0.0;
    f->threat_max = f->pips_left = f->variety = f->mobility = 0;
    f->out = left == 0;
    if (f->out)
        return;
    long fitting = pip_tiles[pips[0]] | pip_tiles[pips[1]] | pip_tiles[pips[2]] | pip_tiles[pips[3]];
    long replies[NUM_TILES];
    if (next->on) {
        int n = scoring_replies(pips, values, next->allowed, replies);
        if (n) {
            f->threat = expected_best(replies, n, next->p);
            f->threat_max = max_of(replies, n);
        }
        f->no_reply = pow(1.0 - next->p, (double)bit_count(next->allowed & fitting));
    }
    if (partner->on) {
        int n = scoring_replies(pips, values, partner->allowed, replies);
        if (n)
            f->partner = expected_best(replies, n, partner->p);
    }
    long pip_set = 0;
    for (long m = left; m; m &= m - 1) {
        int u = low_bit(m);
        f->pips_left += tile_pips[u];
        pip_set |= tile_pip_mask[u];
    }
    f->variety = bit_count(pip_set);
    f->mobility = bit_count(left & fitting);
    if (follow)
        f->follow_up = after_next_reply(pips, values, left, next, best_value); /* lookahead.follow_up_of */
    if (follow > 1)
        f->follow_up_net = after_next_reply(pips, values, left, next, net_after); /* lookahead.follow_up_net_of */
}

/* the facts of move ``i`` of ``in`` (its Python items read and checked) */
static int fact_of(const input_t *in, Py_ssize_t i, fact_t *f) {
    long action, points;
    if (int_of(in->legal[i], &action, "an item of legal_actions") < 0 ||
        int_of(in->points[i], &points, "an item of move_points") < 0)
        return -1;
    if (action < 0 || action >= NUM_ACTIONS) {
        PyErr_SetString(PyExc_ValueError, "legal_actions holds an id outside 0..111");
        return -1;
    }
    long pips[4] = {0, 0, 0, 0}, values[4] = {0, 0, 0, 0};
    if (in->hand & ~(1L << action_tile[action])) {  /* the ends matter only to a move that does not go out */
        Py_ssize_t two;
        PyObject **after = items_of(in->after[i], &two, "an item of ends_after_moves");
        if (after == NULL)
            return -1;
        if (two != 2) {
            PyErr_SetString(PyExc_ValueError, "an item of ends_after_moves must be (pips, values)");
            return -1;
        }
        if (ints_of(after[0], 4, 0, closed, pips, "the pips of ends_after_moves") < 0 ||
            ints_of(after[1], 4, 0, MAX_VALUE, values, "the values of ends_after_moves") < 0)
            return -1;
    }
    facts_of(in->hand, action, points, pips, values, &in->next, &in->partner, in->follow, f);
    return 0;
}

/* a MoveFacts of ``f`` (a tuple of the configured class, filled as tuple_subtype_new does) */
static PyObject *facts_object(const fact_t *f) {
    PyObject *items[NUM_FIELDS] = {
        PyLong_FromLong(f->action), PyLong_FromLong(f->points), PyBool_FromLong(f->out),
        PyFloat_FromDouble(f->threat), PyLong_FromLong(f->threat_max), PyFloat_FromDouble(f->no_reply),
        PyFloat_FromDouble(f->partner), PyLong_FromLong(f->pips_left), PyLong_FromLong(f->variety),
        PyLong_FromLong(f->mobility), PyBool_FromLong(f->dbl), PyFloat_FromDouble(f->follow_up),
        PyFloat_FromDouble(f->follow_up_net),
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

/* move_facts(hand, legal_actions, move_points, ends_after_moves, next_model, partner_model[, follow_up]):
   ``follow_up`` (default True) false leaves that fact 0.0 */
static PyObject *move_facts(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 6 && nargs != 7) {
        PyErr_SetString(PyExc_TypeError,
                        "move_facts(hand, legal_actions, move_points, ends_after_moves, next_model, partner_model"
                        "[, follow_up]) takes 6 or 7 arguments");
        return NULL;
    }
    input_t in;
    if (input_of(args, &in) < 0)
        return NULL;
    if (nargs == 7) {
        if ((in.follow = PyObject_IsTrue(args[6])) < 0)
            return NULL;
        in.follow *= 2;
    }
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

/* which follow-ups a vector of ``size`` floats holds a configured piece of (input_t's follow) */
static int reads_follow_up(Py_ssize_t size) {
    int level = 0;
    for (Py_ssize_t k = 0; k < num_pieces; k++)
        if (piece_offset[k] + NUM_ACTIONS <= size) {
            if (piece_field[k] == F_FOLLOW_UP_NET)
                level = 2;
            else if (piece_field[k] == F_FOLLOW_UP && level < 1)
                level = 1;
        }
    return level;
}

/* whether a buffer of ``len`` bytes is a vector of one of the configured sizes */
static int lookahead_size(Py_ssize_t len) {
    for (Py_ssize_t i = 0; i < num_sizes; i++)
        if (len == vector_sizes[i] * (Py_ssize_t)sizeof(float))
            return 1;
    return 0;
}

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

/* 1 for each tile of each may-hold mask and each configured piece inside the vector of each fact
   that does not go out, into the vector ``o`` (``size`` floats, one of the configured sizes) */
static void write_pieces(float *o, Py_ssize_t size, const long *masks, Py_ssize_t n_hold, const fact_t *facts,
                         Py_ssize_t n) {
    for (Py_ssize_t r = 0; r < n_hold; r++)
        for (long m = masks[r]; m; m &= m - 1)
            o[may_hold_offset + NUM_TILES * r + low_bit(m)] = 1.0f;
    for (Py_ssize_t i = 0; i < n; i++) {
        const fact_t *f = &facts[i];
        if (f->out)
            continue;
        double value[NUM_FIELDS] = {
            (double)f->action, (double)f->points, 0.0, f->threat, (double)f->threat_max, f->no_reply,
            f->partner, (double)f->pips_left, (double)f->variety, (double)f->mobility, (double)f->dbl,
            f->follow_up, f->follow_up_net,
        };
        for (Py_ssize_t k = 0; k < num_pieces; k++) {
            if (piece_offset[k] + NUM_ACTIONS > size)
                continue;
            double x = value[piece_field[k]] / piece_scale[k];
            o[piece_offset[k] + f->action] = (float)(x < 1.0 ? x : 1.0);
        }
    }
}

/* the may-hold masks and the per-move pieces of ``in`` into the vector ``out`` (see fill); None, or
   NULL with an error */
static PyObject *write_out(PyObject *out, const long *masks, Py_ssize_t n_hold, const input_t *in) {
    Py_buffer buf;
    if (PyObject_GetBuffer(out, &buf, PyBUF_WRITABLE) < 0)
        return NULL;
    if (!lookahead_size(buf.len)) {
        PyErr_Format(PyExc_ValueError, "out must hold %zd float32 values (or another observation version's size)",
                     vector_size);
        PyBuffer_Release(&buf);
        return NULL;
    }
    Py_ssize_t size = buf.len / (Py_ssize_t)sizeof(float);
    input_t sized = *in;
    sized.follow = reads_follow_up(size);
    fact_t facts[NUM_ACTIONS];
    for (Py_ssize_t i = 0; i < in->n; i++)
        if (fact_of(&sized, i, &facts[i]) < 0) {
            PyBuffer_Release(&buf);
            return NULL;
        }
    write_pieces((float *)buf.buf, size, masks, n_hold, facts, in->n);
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

/* lookahead.context and the may-hold masks of the viewer ``seat`` of ``n`` seats, holding ``hand``
   with ``played`` on the table: the reply models of ``nxt`` and ``partner`` (-1: none) into
   ``next_model`` and ``partner_model``, and per other seat from the next one on, the unseen tiles
   it may hold into ``masks`` (``missing`` and ``counts`` one per seat) */
static void context_of(int seat, int nxt, int partner, Py_ssize_t n, long hand, long played, const long *missing,
                       const long *counts, model_t *next_model, model_t *partner_model, long *masks) {
    long unseen = ALL_TILES & ~hand & ~played;
    reply_model_of(nxt, seat, missing, counts, unseen, next_model);
    reply_model_of(partner, seat, missing, counts, unseen, partner_model);
    for (Py_ssize_t r = 1; r < n; r++)
        masks[r - 1] = unseen & ~tiles_with_pips[missing[(seat + r) % n]];
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
    long masks[8];
    context_of((int)seat, (int)nxt, (int)partner, n, in.hand, played, missing, counts, &in.next, &in.partner, masks);
    return write_out(args[0], masks, n - 1, &in);
}

/* where north and south are among the arms (engine.tiles): the arms a covered spinner opens */
static int north_arm = -1, south_arm = -1;

/* configure_view(offsets, scales, size, tiles, spinner_arms): the version-1 pieces (_fastview.h's
   configure_v1) and (north, south), for observe_game */
static PyObject *configure_view(PyObject *self, PyObject *args) {
    PyObject *v1_args, *arms;
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    if (n != 5) {
        PyErr_SetString(PyExc_TypeError, "configure_view(offsets, scales, size, tiles, spinner_arms) takes 5 arguments");
        return NULL;
    }
    long ns[2];
    arms = PyTuple_GET_ITEM(args, 4);
    if (ints_of(arms, 2, 0, 3, ns, "spinner_arms") < 0)
        return NULL;
    if ((v1_args = PyTuple_GetSlice(args, 0, 4)) == NULL)
        return NULL;
    PyObject *r = configure_v1(v1_args);
    Py_DECREF(v1_args);
    if (r != NULL) {
        north_arm = (int)ns[0];
        south_arm = (int)ns[1];
    }
    return r;
}

/* the attributes observe_game reads of a Game and of its layout (interned when the module loads) */
enum {
    G_HANDS, G_MISSING, G_CURRENT, G_FORCED, G_DRAW_POS, G_DRAW_LIMIT, G_OVER, G_BONEYARD, G_LAYOUT, G_SCORES,
    L_PIPS, L_VALUES, L_DOUBLE_ENDS, L_SPINNER, L_SPINNER_SIDES, L_COVERED, L_COUNT, L_LEAD, L_PLAYED, L_NUM_TILES,
    L_OPEN_TILES, NUM_NAMES
};
static const char *NAMES[NUM_NAMES] = {
    "hands", "missing", "current_player", "forced", "draw_pos", "draw_limit", "over", "boneyard", "layout", "scores",
    "pips", "values", "double_ends", "spinner", "spinner_sides", "spinner_covered", "count", "lead", "played",
    "num_tiles", "open_tiles",
};
/* each attribute as the errors name it */
static const char *LABELS[NUM_NAMES] = {
    "game.hands", "game.missing", "game.current_player", "game.forced", "game.draw_pos", "game.draw_limit",
    "game.over", "game.boneyard", "game.layout", "game.scores", "game.layout.pips", "game.layout.values",
    "game.layout.double_ends", "game.layout.spinner", "game.layout.spinner_sides", "game.layout.spinner_covered",
    "game.layout.count", "game.layout.lead", "game.layout.played", "game.layout.num_tiles", "game.layout.open_tiles",
};
static PyObject *names[NUM_NAMES];

/* the attribute ``NAMES[id]`` of ``obj`` (a new reference): from ``dict``, the instance's
   ``__dict__``, when it holds it (a plain attribute of a Game), else by the usual lookup */
static PyObject *attr_of(PyObject *obj, PyObject *dict, int id) {
    if (dict != NULL) {
        PyObject *v = PyDict_GetItemWithError(dict, names[id]);
        if (v != NULL) {
            Py_INCREF(v);
            return v;
        }
        if (PyErr_Occurred())
            return NULL;
    }
    return PyObject_GetAttr(obj, names[id]);
}

/* the int attribute ``NAMES[id]`` of ``obj`` in lo..hi (``dict`` as for attr_of) */
static int int_attr(PyObject *obj, PyObject *dict, int id, long lo, long hi, long *out) {
    PyObject *v = attr_of(obj, dict, id);
    if (v == NULL)
        return -1;
    int rc = int_of(v, out, LABELS[id]);
    Py_DECREF(v);
    if (rc == 0 && (*out < lo || *out > hi)) {
        PyErr_Format(PyExc_ValueError, "%s must be in %ld..%ld, not %ld", LABELS[id], lo, hi, *out);
        return -1;
    }
    return rc;
}

/* the list attribute ``NAMES[id]`` of ``obj``: ``n`` ints in lo..hi (n < 0: 2..4 of them, their count in *got) */
static int ints_attr(PyObject *obj, PyObject *dict, int id, Py_ssize_t n, long lo, long hi, long *out,
                     Py_ssize_t *got) {
    PyObject *v = attr_of(obj, dict, id);
    if (v == NULL)
        return -1;
    Py_ssize_t k = 0;
    PyObject **items = items_of(v, &k, LABELS[id]);
    int rc = items == NULL ? -1 : 0;
    if (rc == 0 && (n >= 0 ? k != n : (k < 2 || k > V1_MAX_SEATS))) {
        PyErr_Format(PyExc_ValueError, "%s must hold %s, not %zd items", LABELS[id], n >= 0 ? "4 arms" : "2..4 seats", k);
        rc = -1;
    }
    if (rc == 0)
        rc = ints_of(v, k, lo, hi, out, LABELS[id]);
    Py_DECREF(v);
    if (got != NULL)
        *got = k;
    return rc;
}

/* the length of the sequence attribute ``NAMES[id]`` of ``obj`` */
static Py_ssize_t len_attr(PyObject *obj, PyObject *dict, int id) {
    PyObject *v = attr_of(obj, dict, id);
    if (v == NULL)
        return -1;
    Py_ssize_t n = PyObject_Length(v);
    Py_DECREF(v);
    return n;
}

/* what observe_game reads of a Game besides the view_t */
typedef struct {
    Py_ssize_t n, boneyard;
    long hands[V1_MAX_SEATS], missing[V1_MAX_SEATS], current, forced, draw_pos, draw_limit, over;
    long spinner_sides, num_tiles, open_tiles;
} game_t;

/* read_game with the game's instance dict ``gd`` (or NULL) */
static int read_game_from(PyObject *game, PyObject *gd, PyObject *rel_sides, long seat, long nxt, long partner,
                          game_t *g, view_t *v) {
    Py_ssize_t n_missing;
    if (ints_attr(game, gd, G_HANDS, -1, 0, ALL_TILES, g->hands, &g->n) < 0 ||
        ints_attr(game, gd, G_MISSING, -1, 0, 127, g->missing, &n_missing) < 0 ||
        int_attr(game, gd, G_CURRENT, -1, g->n - 1, &g->current) < 0 ||
        int_attr(game, gd, G_FORCED, -1, NUM_TILES - 1, &g->forced) < 0 ||
        int_attr(game, gd, G_DRAW_POS, 0, NUM_TILES, &g->draw_pos) < 0 ||
        int_attr(game, gd, G_DRAW_LIMIT, 0, NUM_TILES, &g->draw_limit) < 0 ||
        int_attr(game, gd, G_OVER, 0, 1, &g->over) < 0)
        return -1;
    Py_ssize_t n = g->n;
    if ((g->boneyard = len_attr(game, gd, G_BONEYARD)) < 0)
        return -1;
    if (n_missing != n || seat < 0 || seat >= n || nxt < -1 || nxt >= n || partner < -1 || partner >= n) {
        PyErr_SetString(PyExc_ValueError, "game.missing must hold one mask per seat, and seat, next_seat and "
                                          "partner_seat must be seats of the game (-1: none for the last two)");
        return -1;
    }
    PyObject *layout = attr_of(game, gd, G_LAYOUT);
    if (layout == NULL)
        return -1;
    int bad = ints_attr(layout, NULL, L_PIPS, 4, 0, closed, v->pips, NULL) < 0 ||
              ints_attr(layout, NULL, L_VALUES, 4, 0, MAX_VALUE, v->values, NULL) < 0 ||
              int_attr(layout, NULL, L_DOUBLE_ENDS, 0, 15, &v->double_ends) < 0 ||
              int_attr(layout, NULL, L_SPINNER, -1, 6, &v->spinner) < 0 ||
              int_attr(layout, NULL, L_SPINNER_SIDES, 0, 15, &g->spinner_sides) < 0 ||
              int_attr(layout, NULL, L_COVERED, 0, 2, &v->covered) < 0 ||
              int_attr(layout, NULL, L_COUNT, 0, MAX_VALUE, &v->count) < 0 ||
              int_attr(layout, NULL, L_LEAD, -1, NUM_TILES - 1, &v->lead) < 0 ||
              int_attr(layout, NULL, L_PLAYED, 0, ALL_TILES, &v->played) < 0 ||
              int_attr(layout, NULL, L_NUM_TILES, 0, NUM_TILES, &g->num_tiles) < 0 ||
              int_attr(layout, NULL, L_OPEN_TILES, 0, ALL_TILES, &g->open_tiles) < 0;
    Py_DECREF(layout);
    if (bad)
        return -1;
    v->n = n;
    if (rel_sides == NULL) /* the caller reads no scores */
        return 0;
    PyObject *scores = attr_of(game, gd, G_SCORES);
    if (scores == NULL)
        return -1;
    bad = v1_scores(v, scores, rel_sides, "game.scores") < 0;
    Py_DECREF(scores);
    return bad ? -1 : 0;
}

/* the game's facts into ``g`` and the layout's and scores into ``v``, checked; -1 with the error.
   The game's own attributes are read from its instance dict where it has one (the engine's Game). */
static int read_game(PyObject *game, PyObject *rel_sides, long seat, long nxt, long partner, game_t *g, view_t *v) {
    PyObject *gd = PyObject_GenericGetDict(game, NULL);
    if (gd == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
    } else if (!PyDict_Check(gd)) {
        Py_CLEAR(gd);
    }
    int rc = read_game_from(game, gd, rel_sides, seat, nxt, partner, g, v);
    Py_XDECREF(gd);
    return rc;
}

/* the view_t of ``seat`` from the game ``g`` (its layout already in ``v``): hand, counts, missing
   pips, and the legal moves with the points of each and the ends each leaves (``after_pips``,
   ``after_values``), as engine.Game.legal_actions and Layout.placements_points and ends_after make them */
static void moves_of(const game_t *g, view_t *v, long seat, long after_pips[][4], long after_values[][4]) {
    Py_ssize_t n = g->n;
    const long *hands = g->hands, *missing = g->missing;
    long current = g->current, forced = g->forced, over = g->over;
    long spinner_sides = g->spinner_sides, num_tiles = g->num_tiles, open_tiles = g->open_tiles;
    v->boneyard = (long)g->boneyard - g->draw_pos;
    v->drawable = g->draw_limit - g->draw_pos;
    v->hand = hands[seat];
    v->forced = seat == current ? forced : -1;
    for (Py_ssize_t r = 0; r < n; r++) {
        v->counts[r] = bit_count(hands[(seat + r) % n]);
        v->missing[r] = missing[(seat + r) % n];
    }
    /* engine.Game.legal_actions (Layout.actions_for): ascending action ids */
    v->n_legal = 0;
    if (seat == current && !over) {
        long candidates = forced >= 0 ? 1L << forced : hands[seat];
        if (num_tiles == 0) {
            for (; candidates; candidates &= candidates - 1)
                v->legal[v->n_legal++] = (long)low_bit(candidates) << 2;
        } else {
            for (candidates &= open_tiles; candidates; candidates &= candidates - 1) {
                int t = low_bit(candidates);
                for (int e = 0; e < 4; e++)
                    if (v->pips[e] != closed && tile_pip_mask[t] >> v->pips[e] & 1)
                        v->legal[v->n_legal++] = 4L * t + e;
            }
        }
    }
    /* per move, Layout.placements_points and Layout.ends_after */
    long total = v->values[0] + v->values[1] + v->values[2] + v->values[3];
    for (Py_ssize_t i = 0; i < v->n_legal; i++) {
        long a = v->legal[i];
        int t = action_tile[a], e = (int)(a & 3);
        long *pips = after_pips[i], *values = after_values[i];
        if (num_tiles == 0) {
            long x = v1_tile_a[t], y = v1_tile_b[t];
            v->points[i] = tile_pips[t] % modulus == 0 ? tile_pips[t] : 0;
            pips[0] = x;
            pips[1] = y;
            pips[2] = pips[3] = closed;
            values[0] = is_double[t] ? x + x : x;
            values[1] = is_double[t] ? x + x : y;
            values[2] = values[3] = 0;
            continue;
        }
        v->points[i] = placed_score(total, v->values, t, e, v->pips[e]);
        for (int k = 0; k < 4; k++) {
            pips[k] = v->pips[k];
            values[k] = v->values[k];
        }
        if (spinner_sides >> e & 1 && v->covered == 1)
            pips[north_arm] = pips[south_arm] = v->spinner;
        long p = pips[e];
        values[e] = end_count[t][p];
        if (!is_double[t])
            pips[e] = end_count[t][p];
    }
}

/* observe_game(out, mask, row, template, game, seat, rel_sides, score_scale, next_seat, partner_seat):
   the observation of ``seat`` straight from an engine Game, without a PlayerView: what
   observation.encode_lookahead (a ``template`` of the version-2 size) or observation.encode (of the
   version-1 size) gives for ``game.view(seat)``, written over a copy of ``template`` (the rules'
   pieces, as for fill) into row ``row`` of ``out`` (writable float32 rows of the template's size),
   and the action mask of its legal actions into row ``row`` of ``mask`` (writable rows of 112
   bytes). The legal actions, the points of each and the ends each leaves are made here from the
   game's layout, as engine.layout's actions_for, placements_points and ends_after make them
   (tests/test_observe_game.py checks every seat of random games against the view's encoders).
   Nothing is written unless all of the input is valid. */
static PyObject *observe_game(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 10) {
        PyErr_SetString(PyExc_TypeError, "observe_game(out, mask, row, template, game, seat, rel_sides, score_scale, "
                                         "next_seat, partner_seat) takes 10 arguments");
        return NULL;
    }
    if (!configured || north_arm < 0 || pieces_configured() < 0) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_RuntimeError, "configure() and configure_view() were not called");
        return NULL;
    }
    PyObject *game = args[4];
    view_t v;
    long row, seat, nxt, partner;
    if (int_of(args[2], &row, "row") < 0 || int_of(args[5], &seat, "seat") < 0 ||
        number_of(args[7], &v.score_scale, "score_scale") < 0 || int_of(args[8], &nxt, "next_seat") < 0 ||
        int_of(args[9], &partner, "partner_seat") < 0)
        return NULL;
    if (!(v.score_scale > 0)) {
        PyErr_SetString(PyExc_ValueError, "score_scale must be positive");
        return NULL;
    }
    game_t g;
    if (read_game(game, args[6], seat, nxt, partner, &g, &v) < 0)
        return NULL;
    long after_pips[NUM_ACTIONS][4], after_values[NUM_ACTIONS][4];
    moves_of(&g, &v, seat, after_pips, after_values);
    Py_ssize_t n = g.n;
    long *hands = g.hands, *missing = g.missing;

    Py_buffer buf, mask, tmpl;
    if (PyObject_GetBuffer(args[3], &tmpl, PyBUF_SIMPLE) < 0)
        return NULL;
    int full = lookahead_size(tmpl.len);
    if (!full && tmpl.len != v1_size * (Py_ssize_t)sizeof(float)) {
        PyErr_Format(PyExc_ValueError, "template must hold %zd float32 values or an observation version's size "
                     "with the lookahead pieces (at most %zd)", v1_size, vector_size);
        PyBuffer_Release(&tmpl);
        return NULL;
    }
    if (PyObject_GetBuffer(args[0], &buf, PyBUF_WRITABLE) < 0) {
        PyBuffer_Release(&tmpl);
        return NULL;
    }
    if (PyObject_GetBuffer(args[1], &mask, PyBUF_WRITABLE) < 0) {
        PyBuffer_Release(&buf);
        PyBuffer_Release(&tmpl);
        return NULL;
    }
    if (row < 0 || (row + 1) * tmpl.len > buf.len || (row + 1) * NUM_ACTIONS > mask.len) {
        PyErr_Format(PyExc_ValueError, "row %ld is outside out (rows of %zd float32 values) or mask (rows of %d bytes)",
                     row, tmpl.len / (Py_ssize_t)sizeof(float), NUM_ACTIONS);
        PyBuffer_Release(&mask);
        PyBuffer_Release(&buf);
        PyBuffer_Release(&tmpl);
        return NULL;
    }
    float *o = (float *)((char *)buf.buf + row * tmpl.len);
    memcpy(o, tmpl.buf, tmpl.len);
    write_v1(o, &v);
    if (full) {
        model_t next_model, partner_model;
        long counts[V1_MAX_SEATS], masks[V1_MAX_SEATS];
        for (Py_ssize_t s = 0; s < n; s++)
            counts[s] = bit_count(hands[s]);
        context_of((int)seat, (int)nxt, (int)partner, n, v.hand, v.played, missing, counts, &next_model,
                   &partner_model, masks);
        fact_t facts[NUM_ACTIONS];
        int follow = reads_follow_up(tmpl.len / (Py_ssize_t)sizeof(float));
        for (Py_ssize_t i = 0; i < v.n_legal; i++)
            facts_of(v.hand, v.legal[i], v.points[i], after_pips[i], after_values[i], &next_model, &partner_model,
                     follow, &facts[i]);
        write_pieces(o, tmpl.len / (Py_ssize_t)sizeof(float), masks, n - 1, facts, v.n_legal);
    }
    char *m = (char *)mask.buf + row * NUM_ACTIONS;
    memset(m, 0, NUM_ACTIONS);
    for (Py_ssize_t i = 0; i < v.n_legal; i++)
        m[v.legal[i]] = 1;
    PyBuffer_Release(&mask);
    PyBuffer_Release(&buf);
    PyBuffer_Release(&tmpl);
    Py_RETURN_NONE;
}

/* the game_t and view_t (no scores) of ``game`` and the moves of ``seat``, who must be to act with a
   legal move; -1 with the error */
static int to_act(PyObject *game, long seat, long nxt, long partner, game_t *g, view_t *v, long after_pips[][4],
                  long after_values[][4]) {
    if (!configured || north_arm < 0) {
        PyErr_SetString(PyExc_RuntimeError, "configure() and configure_view() were not called");
        return -1;
    }
    if (read_game(game, NULL, seat, nxt, partner, g, v) < 0)
        return -1;
    moves_of(g, v, seat, after_pips, after_values);
    if (v->n_legal == 0) {
        PyErr_Format(PyExc_ValueError, "seat %ld has no move to choose: it is not to act, or the game is over", seat);
        return -1;
    }
    return 0;
}

/* expert_game(game, seat, next_seat, partner_seat, opponents, target_left, weights): the move
   agents.expert.ExpertAgent (``weights``: its 8 weights in DEFAULT_WEIGHTS' order) chooses for
   ``seat`` of an engine Game, without a PlayerView: the same terms, added in the same order, over the
   move facts of lookahead.move_facts; ``opponents`` the mask of the seats of the other sides,
   ``target_left`` the points the seat's side still needs (tests/test_heuristics_game.py checks every
   decision of random games against ExpertAgent.act) */
static PyObject *expert_game(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "expert_game(game, seat, next_seat, partner_seat, opponents, target_left, "
                                         "weights) takes 7 arguments");
        return NULL;
    }
    long seat, nxt, partner, opponents, target_left;
    double w[8];
    Py_ssize_t n_w;
    PyObject **items;
    if (int_of(args[1], &seat, "seat") < 0 || int_of(args[2], &nxt, "next_seat") < 0 ||
        int_of(args[3], &partner, "partner_seat") < 0 || int_of(args[4], &opponents, "opponents") < 0 ||
        int_of(args[5], &target_left, "target_left") < 0 || (items = items_of(args[6], &n_w, "weights")) == NULL)
        return NULL;
    if (n_w != 8) {
        PyErr_SetString(PyExc_ValueError, "weights must hold the 8 weights of the expert's terms");
        return NULL;
    }
    for (int k = 0; k < 8; k++)
        if (number_of(items[k], &w[k], "an item of weights") < 0)
            return NULL;
    game_t g;
    view_t v;
    long after_pips[NUM_ACTIONS][4], after_values[NUM_ACTIONS][4];
    if (to_act(args[0], seat, nxt, partner, &g, &v, after_pips, after_values) < 0)
        return NULL;
    Py_ssize_t n = g.n;
    if (opponents <= 0 || opponents >= 1L << n || opponents >> seat & 1) {
        PyErr_SetString(PyExc_ValueError, "opponents must be a mask of seats of the game other than seat");
        return NULL;
    }
    if (v.n_legal == 1)
        return PyLong_FromLong(v.legal[0]);
    model_t next_model, partner_model;
    long counts[V1_MAX_SEATS], masks[V1_MAX_SEATS];
    long fewest = NUM_TILES, opp_tiles = 0;
    for (Py_ssize_t s = 0; s < n; s++) {
        counts[s] = bit_count(g.hands[s]);
        if (opponents >> s & 1) {
            opp_tiles += counts[s];
            if (counts[s] < fewest)
                fewest = counts[s];
        }
    }
    context_of((int)seat, (int)nxt, (int)partner, n, v.hand, v.played, g.missing, counts, &next_model, &partner_model,
               masks);
    long unseen = ALL_TILES & ~v.hand & ~v.played, unseen_pips = 0;
    for (long m = unseen; m; m &= m - 1)
        unseen_pips += tile_pips[low_bit(m)];
    int unseen_count = bit_count(unseen);
    double pips_per_unseen = unseen_count ? (double)unseen_pips / (double)unseen_count : 0.0;
    double heavy = w[4] / (double)(1 + fewest);
    long best = 0;
    double best_score = 0.0;
    for (Py_ssize_t i = 0; i < v.n_legal; i++) {
        fact_t f;
        facts_of(v.hand, v.legal[i], v.points[i], after_pips[i], after_values[i], &next_model, &partner_model, 0, &f);
        double score = w[0] * (double)f.points;
        if (f.points && f.points >= target_left)
            score += 1000.0;
        if (f.out) {
            score = score + w[3] * pips_per_unseen * (double)opp_tiles;
        } else {
            if (next_model.on)
                score += -w[1] * f.threat;
            if (partner_model.on)
                score += w[2] * f.partner;
            score -= heavy * (double)f.pips_left;
            score += w[5] * (double)f.variety;
            score += w[6] * (double)f.mobility;
            if (f.dbl)
                score += w[7];
        }
        if (i == 0 || score > best_score) {
            best = v.legal[i];
            best_score = score;
        }
    }
    return PyLong_FromLong(best);
}

/* greedy_game(game, seat): the move agents.greedy.greedy_action chooses for ``seat`` of an engine
   Game: the most points now, then the heavier tile, then a double, then the lower action id */
static PyObject *greedy_game(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "greedy_game(game, seat) takes 2 arguments");
        return NULL;
    }
    long seat;
    if (int_of(args[1], &seat, "seat") < 0)
        return NULL;
    game_t g;
    view_t v;
    long after_pips[NUM_ACTIONS][4], after_values[NUM_ACTIONS][4];
    if (to_act(args[0], seat, -1, -1, &g, &v, after_pips, after_values) < 0)
        return NULL;
    long best = v.legal[0], best_points = v.points[0];
    int best_tile = action_tile[best];
    for (Py_ssize_t i = 1; i < v.n_legal; i++) {
        long a = v.legal[i], points = v.points[i];
        int t = action_tile[a];
        if (points > best_points ||
            (points == best_points && (tile_pips[t] > tile_pips[best_tile] ||
                                       (tile_pips[t] == tile_pips[best_tile] && is_double[t] > is_double[best_tile])))) {
            best = a;
            best_points = points;
            best_tile = t;
        }
    }
    return PyLong_FromLong(best);
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
    {"configure_view", configure_view, METH_VARARGS,
     "configure_view(offsets, scales, size, tiles, spinner_arms): the version-1 pieces and the arms a covered "
     "spinner opens, for observe_game"},
    {"observe_game", (PyCFunction)(void (*)(void))observe_game, METH_FASTCALL,
     "observe_game(out, mask, row, template, game, seat, rel_sides, score_scale, next_seat, partner_seat): the "
     "observation and action mask of a seat of an engine Game, into row ``row`` of out and of mask"},
    {"expert_game", (PyCFunction)(void (*)(void))expert_game, METH_FASTCALL,
     "expert_game(game, seat, next_seat, partner_seat, opponents, target_left, weights): the expert's move"},
    {"greedy_game", (PyCFunction)(void (*)(void))greedy_game, METH_FASTCALL,
     "greedy_game(game, seat): the greedy move"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_fastlook", "C accelerator for the lookahead's move facts", -1, methods,
};

PyMODINIT_FUNC PyInit__fastlook(void) {
    for (int i = 0; i < NUM_NAMES; i++)
        if ((names[i] = PyUnicode_InternFromString(NAMES[i])) == NULL)
            return NULL;
    return PyModule_Create(&module);
}
