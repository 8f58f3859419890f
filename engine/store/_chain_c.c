/* engine.store.chain's two hot loops in C: link_python (the hash chain) and marshal's type
 * check of payloads (_marshal_takes). The Python code is the reference: chain.py uses these
 * only after checking at import that they agree, and the tests compare them at length.
 *
 * SHA-256 is done here rather than through hashlib: OpenSSL headers may be missing where this
 * is built, and a Python call per event would cost much of what this saves. On x86-64 the
 * CPU's SHA extensions are used when present; portable C is eight times slower than them.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

/* SHA-256, FIPS 180-4 */

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2,
};

typedef void (*compress_fn)(uint32_t state[8], const unsigned char *blocks, size_t count);

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void
compress_portable(uint32_t state[8], const unsigned char *blocks, size_t count)
{
    uint32_t w[64];
    for (; count; count--, blocks += 64) {
        for (int i = 0; i < 16; i++) {
            const unsigned char *p = blocks + 4 * i;
            w[i] = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
        }
        for (int i = 16; i < 64; i++) {
            uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
            uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }
        uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
        uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
        for (int i = 0; i < 64; i++) {
            uint32_t t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + K[i] +
                          w[i];
            uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
            h = g;
            g = f;
            f = e;
            e = d + t1;
            d = c;
            c = b;
            b = a;
            a = t1 + t2;
        }
        state[0] += a;
        state[1] += b;
        state[2] += c;
        state[3] += d;
        state[4] += e;
        state[5] += f;
        state[6] += g;
        state[7] += h;
    }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_SHA_NI 1
#include <cpuid.h>
#include <immintrin.h>

/* Intel's SHA extensions, after Intel's white paper and its public-domain sample code. The
 * target attribute compiles just this function for them; sha_ni_present() gates its use. */
__attribute__((target("sha,sse4.1,ssse3"))) static void
compress_sha_ni(uint32_t state[8], const unsigned char *blocks, size_t count)
{
    const __m128i byteswap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    /* The instructions keep the state as ABEF and CDGH. */
    __m128i tmp = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&state[0]), 0xB1);
    __m128i cdgh = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&state[4]), 0x1B);
    __m128i abef = _mm_alignr_epi8(tmp, cdgh, 8);
    cdgh = _mm_blend_epi16(cdgh, tmp, 0xF0);

    for (; count; count--, blocks += 64) {
        __m128i abef_before = abef, cdgh_before = cdgh, w[4];
        /* Four rounds at a time; w holds the last 16 words of the message schedule. Unrolled,
         * w stays in registers: a quarter faster. */
#pragma GCC unroll 16
        for (int i = 0; i < 16; i++) {
            if (i < 4) {
                w[i] = _mm_shuffle_epi8(
                    _mm_loadu_si128((const __m128i *)(blocks + 16 * i)), byteswap);
            } else {
                __m128i next = _mm_sha256msg1_epu32(w[i & 3], w[(i - 3) & 3]);
                next = _mm_add_epi32(next, _mm_alignr_epi8(w[(i - 1) & 3], w[(i - 2) & 3], 4));
                w[i & 3] = _mm_sha256msg2_epu32(next, w[(i - 1) & 3]);
            }
            __m128i msg = _mm_add_epi32(w[i & 3], _mm_loadu_si128((const __m128i *)&K[4 * i]));
            cdgh = _mm_sha256rnds2_epu32(cdgh, abef, msg);
            abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(msg, 0x0E));
        }
        abef = _mm_add_epi32(abef, abef_before);
        cdgh = _mm_add_epi32(cdgh, cdgh_before);
    }

    tmp = _mm_shuffle_epi32(abef, 0x1B);
    cdgh = _mm_shuffle_epi32(cdgh, 0xB1);
    _mm_storeu_si128((__m128i *)&state[0], _mm_blend_epi16(tmp, cdgh, 0xF0));
    _mm_storeu_si128((__m128i *)&state[4], _mm_alignr_epi8(cdgh, tmp, 8));
}

static int
sha_ni_present(void)
{
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & bit_SSSE3) || !(ecx & bit_SSE4_1)) {
        return 0;
    }
    return __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) && (ebx & bit_SHA);
}
#endif

static compress_fn best_compress = compress_portable;

static const char hex_digits[] = "0123456789abcdef";

/* The SHA-256 of data, as 64 lowercase hex digits. */
static void
sha256_hex(compress_fn compress_blocks, const unsigned char *data, size_t length, char hex[64])
{
    uint32_t state[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                         0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    unsigned char tail[128] = {0};
    size_t whole = length / 64, rest = length % 64, tail_size = rest < 56 ? 64 : 128;
    uint64_t bits = (uint64_t)length * 8;

    compress_blocks(state, data, whole);
    memcpy(tail, data + 64 * whole, rest);
    tail[rest] = 0x80;
    for (int i = 0; i < 8; i++) {
        tail[tail_size - 1 - i] = (unsigned char)(bits >> (8 * i));
    }
    compress_blocks(state, tail, tail_size / 64);
    for (int i = 0; i < 64; i++) {
        hex[i] = hex_digits[(state[i / 8] >> (28 - 4 * (i % 8))) & 0xF];
    }
}

/* The envelope, built in a growing byte buffer */

typedef struct {
    char *data;
    size_t length, capacity;
} Buffer;

static int
reserve(Buffer *buffer, size_t more)
{
    if (more <= buffer->capacity - buffer->length) {
        return 0;
    }
    if (more > PY_SSIZE_T_MAX - buffer->length) {
        PyErr_NoMemory();
        return -1;
    }
    size_t capacity = Py_MAX(buffer->length + more, 2 * buffer->capacity);
    char *data = PyMem_Realloc(buffer->data, capacity);
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    buffer->data = data;
    buffer->capacity = capacity;
    return 0;
}

static int
append(Buffer *buffer, const char *bytes, size_t length)
{
    if (reserve(buffer, length) < 0) {
        return -1;
    }
    memcpy(buffer->data + buffer->length, bytes, length);
    buffer->length += length;
    return 0;
}

#define APPEND_LITERAL(buffer, text) append((buffer), (text), sizeof(text) - 1)

static void
append_u_escape(Buffer *buffer, Py_UCS4 c)
{
    char *out = buffer->data + buffer->length;
    out[0] = '\\';
    out[1] = 'u';
    out[2] = hex_digits[(c >> 12) & 0xF];
    out[3] = hex_digits[(c >> 8) & 0xF];
    out[4] = hex_digits[(c >> 4) & 0xF];
    out[5] = hex_digits[c & 0xF];
    buffer->length += 6;
}

/* text as json.dumps(text, ensure_ascii=True) writes it (json's encode_basestring_ascii). */
static int
append_quoted(Buffer *buffer, PyObject *text)
{
    if (!PyUnicode_Check(text)) {
        PyErr_Format(PyExc_TypeError, "first argument must be a string, not %.80s",
                     Py_TYPE(text)->tp_name);
        return -1;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0) {
        return -1;
    }
#endif
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    if (length > (PY_SSIZE_T_MAX - 2) / 12) { /* 12: one character as a surrogate pair */
        PyErr_NoMemory();
        return -1;
    }
    if (reserve(buffer, 12 * (size_t)length + 2) < 0) {
        return -1;
    }
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    buffer->data[buffer->length++] = '"';
    for (Py_ssize_t i = 0; i < length; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c >= ' ' && c <= '~' && c != '"' && c != '\\') {
            buffer->data[buffer->length++] = (char)c;
            continue;
        }
        const char *short_escape = NULL;
        switch (c) {
        case '"': short_escape = "\\\""; break;
        case '\\': short_escape = "\\\\"; break;
        case '\b': short_escape = "\\b"; break;
        case '\f': short_escape = "\\f"; break;
        case '\n': short_escape = "\\n"; break;
        case '\r': short_escape = "\\r"; break;
        case '\t': short_escape = "\\t"; break;
        }
        if (short_escape != NULL) {
            memcpy(buffer->data + buffer->length, short_escape, 2);
            buffer->length += 2;
        } else if (c >= 0x10000) {
            append_u_escape(buffer, Py_UNICODE_HIGH_SURROGATE(c));
            append_u_escape(buffer, Py_UNICODE_LOW_SURROGATE(c));
        } else {
            append_u_escape(buffer, c);
        }
    }
    buffer->data[buffer->length++] = '"';
    return 0;
}

static int
append_long_long(Buffer *buffer, long long value)
{
    char digits[20]; /* LLONG_MIN: a sign and 19 digits */
    size_t start = sizeof digits;
    unsigned long long magnitude = (unsigned long long)value;
    if (value < 0) {
        magnitude = 0ULL - magnitude;
    }
    do {
        digits[--start] = (char)('0' + magnitude % 10);
        magnitude /= 10;
    } while (magnitude);
    if (value < 0) {
        digits[--start] = '-';
    }
    return append(buffer, digits + start, sizeof digits - start);
}

static PyObject *empty_format_spec;

/* value as an f-string writes it, UTF-8 encoded (what link_python's str.encode() does). */
static int
append_formatted(Buffer *buffer, PyObject *value)
{
    if (PyLong_CheckExact(value)) {
        int overflow;
        long long number = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (!overflow) {
            return number == -1 && PyErr_Occurred() ? -1 : append_long_long(buffer, number);
        }
    }
    PyObject *text =
        PyUnicode_CheckExact(value) ? Py_NewRef(value) : PyObject_Format(value, empty_format_spec);
    if (text == NULL) {
        return -1;
    }
    Py_ssize_t size;
    const char *utf8 = PyUnicode_AsUTF8AndSize(text, &size);
    int result = utf8 == NULL ? -1 : append(buffer, utf8, (size_t)size);
    Py_DECREF(text);
    return result;
}

/* The canonical JSON of an event's envelope, its keys in order; link_python's f-string. */
static int
write_envelope(Buffer *out, PyObject *actor, PyObject *payload_json, const Buffer *quoted_prev,
               long long seq, PyObject *stream, PyObject *stream_seq, PyObject *time_ns,
               PyObject *type)
{
    out->length = 0;
    if (APPEND_LITERAL(out, "{\"actor\":") < 0 || append_quoted(out, actor) < 0) {
        return -1;
    }
    if (APPEND_LITERAL(out, ",\"payload\":") < 0 || append_formatted(out, payload_json) < 0) {
        return -1;
    }
    if (APPEND_LITERAL(out, ",\"prev_hash\":") < 0 ||
        append(out, quoted_prev->data, quoted_prev->length) < 0) {
        return -1;
    }
    if (APPEND_LITERAL(out, ",\"seq\":") < 0 || append_long_long(out, seq) < 0) {
        return -1;
    }
    if (APPEND_LITERAL(out, ",\"stream\":") < 0 || append_quoted(out, stream) < 0) {
        return -1;
    }
    if (APPEND_LITERAL(out, ",\"stream_seq\":") < 0 || append_formatted(out, stream_seq) < 0) {
        return -1;
    }
    if (APPEND_LITERAL(out, ",\"time_ns\":") < 0 || append_formatted(out, time_ns) < 0) {
        return -1;
    }
    if (APPEND_LITERAL(out, ",\"type\":") < 0 || append_quoted(out, type) < 0) {
        return -1;
    }
    return APPEND_LITERAL(out, "}");
}

/* link */

static PyObject *name_stream, *name_type, *name_actor, *name_payload, *name_time_ns, *one;

/* The next stream_seq of stream: link_python's
 * (appended_lengths.get(stream) or known_lengths[stream]) + 1, recorded in appended_lengths. */
static PyObject *
next_stream_seq(PyObject *appended_lengths, PyObject *known_lengths, PyObject *stream)
{
    PyObject *length = PyDict_GetItemWithError(appended_lengths, stream); /* borrowed */
    int appended = 0;
    if (length != NULL) {
        appended = PyObject_IsTrue(length);
        if (appended < 0) {
            return NULL;
        }
    } else if (PyErr_Occurred()) {
        return NULL;
    }
    PyObject *base = appended ? Py_NewRef(length) : PyObject_GetItem(known_lengths, stream);
    if (base == NULL) {
        return NULL;
    }
    PyObject *next = PyNumber_Add(base, one);
    Py_DECREF(base);
    if (next != NULL && PyDict_SetItem(appended_lengths, stream, next) < 0) {
        Py_CLEAR(next);
    }
    return next;
}

/* A tuple of tuple_type (tuple or a subclass of it), made as tuple.__new__ makes one. */
static PyObject *
new_tuple(PyTypeObject *tuple_type, PyObject *const items[9])
{
    PyObject *tuple =
        tuple_type == &PyTuple_Type ? PyTuple_New(9) : tuple_type->tp_alloc(tuple_type, 9);
    if (tuple == NULL) {
        return NULL;
    }
    int atomic = tuple_type == &PyTuple_Type;
    for (Py_ssize_t i = 0; i < 9; i++) {
        PyTuple_SET_ITEM(tuple, i, Py_NewRef(items[i]));
        atomic = atomic && (PyUnicode_CheckExact(items[i]) || PyLong_CheckExact(items[i]));
    }
    /* A tuple of str and int can be in no reference cycle, and the garbage collector would
     * untrack it after looking at it once: untracked now, a batch's rows cost it nothing. */
    if (atomic) {
        PyObject_GC_UnTrack(tuple);
    }
    return tuple;
}

PyDoc_STRVAR(chain_link_doc,
             "link(events, payloads, seq, prev_hash, now_ns, stream_lengths, stored_type)\n--\n\n"
             "engine.store.chain.link_python, in C; seq must fit in 64 bits.");

static PyObject *
chain_link(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *events_arg, *payloads_arg, *prev_hash, *now_ns, *known_lengths;
    PyTypeObject *stored_type;
    long long seq;
    if (!PyArg_ParseTuple(args, "OOLUOO!O!:link", &events_arg, &payloads_arg, &seq, &prev_hash,
                          &now_ns, &PyDict_Type, &known_lengths, &PyType_Type, &stored_type)) {
        return NULL;
    }
    if (!PyType_IsSubtype(stored_type, &PyTuple_Type)) {
        return PyErr_Format(PyExc_TypeError, "stored_type must be a tuple type");
    }
    PyObject *events = NULL, *payloads = NULL, *appended_lengths = NULL, *stored = NULL;
    PyObject *rows = NULL, *result = NULL, *previous = Py_NewRef(prev_hash);
    PyObject *stream = NULL, *type = NULL, *actor = NULL, *payload = NULL, *time_ns = NULL;
    PyObject *seq_object = NULL, *stream_seq = NULL;
    Buffer envelope = {NULL, 0, 0}, quoted_prev = {NULL, 0, 0};

    if (!(events = PySequence_Fast(events_arg, "events must be a sequence")) ||
        !(payloads = PySequence_Fast(payloads_arg, "payloads must be a sequence")) ||
        !(appended_lengths = PyDict_New()) || append_quoted(&quoted_prev, prev_hash) < 0 ||
        reserve(&quoted_prev, 66) < 0) {
        goto done;
    }
    Py_ssize_t n_events = PySequence_Fast_GET_SIZE(events);
    Py_ssize_t n_payloads = PySequence_Fast_GET_SIZE(payloads);
    Py_ssize_t count = Py_MIN(n_events, n_payloads); /* zip(strict=True): see after the loop */
    if (seq > LLONG_MAX - count) {
        PyErr_SetString(PyExc_OverflowError, "seq past 64 bits");
        goto done;
    }
    if (!(stored = PyList_New(count)) || !(rows = PyList_New(count))) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *event = PySequence_Fast_GET_ITEM(events, i);
        PyObject *payload_json = PySequence_Fast_GET_ITEM(payloads, i);
        /* In link_python's order, for events whose attributes have side effects. */
        if (!(stream = PyObject_GetAttr(event, name_stream)) ||
            !(type = PyObject_GetAttr(event, name_type)) ||
            !(actor = PyObject_GetAttr(event, name_actor)) ||
            !(payload = PyObject_GetAttr(event, name_payload)) ||
            !(time_ns = PyObject_GetAttr(event, name_time_ns))) {
            goto done;
        }
        if (time_ns == Py_None) {
            Py_SETREF(time_ns, Py_NewRef(now_ns));
        }
        if (!(stream_seq = next_stream_seq(appended_lengths, known_lengths, stream)) ||
            !(seq_object = PyLong_FromLongLong(++seq)) ||
            write_envelope(&envelope, actor, payload_json, &quoted_prev, seq, stream, stream_seq,
                           time_ns, type) < 0) {
            goto done;
        }
        PyObject *hash = PyUnicode_New(64, 127);
        if (hash == NULL) {
            goto done;
        }
        /* The hex digits go into the new str, and quoted into the next envelope. */
        sha256_hex(best_compress, (const unsigned char *)envelope.data, envelope.length,
                   quoted_prev.data + 1);
        memcpy(PyUnicode_DATA(hash), quoted_prev.data + 1, 64);
        quoted_prev.data[0] = quoted_prev.data[65] = '"';
        quoted_prev.length = 66;

        PyObject *fields[9] = {seq_object, stream,  stream_seq, type, time_ns,
                               actor,      payload, previous,   hash};
        PyObject *stored_event = new_tuple(stored_type, fields);
        fields[6] = payload_json;
        PyObject *row = stored_event == NULL ? NULL : new_tuple(&PyTuple_Type, fields);
        Py_SETREF(previous, hash);
        if (row == NULL) {
            Py_XDECREF(stored_event);
            goto done;
        }
        PyList_SET_ITEM(stored, i, stored_event);
        PyList_SET_ITEM(rows, i, row);
        Py_CLEAR(stream);
        Py_CLEAR(type);
        Py_CLEAR(actor);
        Py_CLEAR(payload);
        Py_CLEAR(time_ns);
        Py_CLEAR(seq_object);
        Py_CLEAR(stream_seq);
    }
    if (n_events != n_payloads) {
        PyErr_Format(PyExc_ValueError, "zip() argument 2 is %s than argument 1",
                     n_payloads < n_events ? "shorter" : "longer");
        goto done;
    }
    result = PyTuple_Pack(2, stored, rows);

done:
    PyMem_Free(envelope.data);
    PyMem_Free(quoted_prev.data);
    Py_XDECREF(events);
    Py_XDECREF(payloads);
    Py_XDECREF(appended_lengths);
    Py_XDECREF(stored);
    Py_XDECREF(rows);
    Py_XDECREF(previous);
    Py_XDECREF(stream);
    Py_XDECREF(type);
    Py_XDECREF(actor);
    Py_XDECREF(payload);
    Py_XDECREF(time_ns);
    Py_XDECREF(seq_object);
    Py_XDECREF(stream_seq);
    return result;
}

/* plain_json_types */

/* Deeper than this orjson refuses a value anyway (and marshal past 2000). */
#define PLAIN_JSON_DEPTH 256

static int
plain_json_types(PyObject *value, int depth)
{
    if (value == Py_None || PyBool_Check(value) || PyLong_CheckExact(value) ||
        PyFloat_CheckExact(value) || PyUnicode_CheckExact(value)) {
        return 1;
    }
    if (depth == 0) {
        return 0;
    }
    if (PyList_CheckExact(value) || PyTuple_CheckExact(value)) {
        /* Nothing here runs Python code, so the list cannot change under the loop. */
        for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(value); i++) {
            if (!plain_json_types(PySequence_Fast_GET_ITEM(value, i), depth - 1)) {
                return 0;
            }
        }
        return 1;
    }
    if (PyDict_CheckExact(value)) {
        Py_ssize_t position = 0;
        PyObject *key, *item;
        while (PyDict_Next(value, &position, &key, &item)) {
            if (!plain_json_types(key, depth - 1) || !plain_json_types(item, depth - 1)) {
                return 0;
            }
        }
        return 1;
    }
    return 0;
}

PyDoc_STRVAR(plain_json_types_doc,
             "plain_json_types(value, /)\n--\n\n"
             "Whether value is made of the exact types dict, list, tuple, str, int, float, bool\n"
             "and None, nested at most 256 deep: values marshal accepts, found faster.");

static PyObject *
plain_json_types_py(PyObject *Py_UNUSED(module), PyObject *value)
{
    return PyBool_FromLong(plain_json_types(value, PLAIN_JSON_DEPTH));
}

PyDoc_STRVAR(sha256_doc,
             "sha256_hex(data, /, portable=False)\n--\n\n"
             "The SHA-256 of data in hex, by the code link uses (or the portable C code).");

static PyObject *
sha256_hex_py(PyObject *Py_UNUSED(module), PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"", "portable", NULL};
    Py_buffer data;
    int portable = 0;
    char hex[64];
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*|p:sha256_hex", keywords, &data,
                                     &portable)) {
        return NULL;
    }
    sha256_hex(portable ? compress_portable : best_compress, data.buf, (size_t)data.len, hex);
    PyBuffer_Release(&data);
    return PyUnicode_FromStringAndSize(hex, 64);
}

static PyMethodDef methods[] = {
    {"link", chain_link, METH_VARARGS, chain_link_doc},
    {"plain_json_types", plain_json_types_py, METH_O, plain_json_types_doc},
    {"sha256_hex", (PyCFunction)(void (*)(void))sha256_hex_py, METH_VARARGS | METH_KEYWORDS,
     sha256_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "engine.store._chain_c",
    .m_doc = "engine.store.chain's hash-chain loop and payload type check, in C.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC
PyInit__chain_c(void)
{
#ifdef HAVE_SHA_NI
    if (sha_ni_present()) {
        best_compress = compress_sha_ni;
    }
#endif
    if (!(name_stream = PyUnicode_InternFromString("stream")) ||
        !(name_type = PyUnicode_InternFromString("type")) ||
        !(name_actor = PyUnicode_InternFromString("actor")) ||
        !(name_payload = PyUnicode_InternFromString("payload")) ||
        !(name_time_ns = PyUnicode_InternFromString("time_ns")) ||
        !(empty_format_spec = PyUnicode_FromString("")) || !(one = PyLong_FromLong(1))) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&module_def);
    PyObject *sha_extensions = best_compress == compress_portable ? Py_False : Py_True;
    if (module != NULL && PyModule_AddObjectRef(module, "SHA_EXTENSIONS", sha_extensions) < 0) {
        Py_CLEAR(module);
    }
    return module;
}
