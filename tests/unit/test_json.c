/* Unit tests of base/json.c: the writer places commas and checks nesting
 * itself, escapes strings, and a line that does not fit or is malformed comes
 * back as 0, never cut. */
#include "base/json.h"
#include "testhelper.h"

#include <math.h>

static char buf[1024];

/* The line written by the calls between begin() and done(), without its newline. */
static enc_json j;
static void begin(size_t cap)
{
    enc_json_init(&j, buf, cap);
}
static const char *done(void)
{
    size_t n = enc_json_finish(&j);
    if (n == 0)
        return NULL;
    buf[n - 1] = '\0';
    return buf;
}

int main(int argc, char **argv)
{
    th_init(argc, argv);

    TEST("json: commas go between keys of an object, never after { or before }") {
        begin(sizeof buf);
        enc_json_object_begin(&j);
        enc_json_kv_u64(&j, "a", 1);
        enc_json_kv_i64(&j, "b", -2);
        enc_json_kv_bool(&j, "c", 1);
        enc_json_object_end(&j);
        EXPECT_STR_EQ(done(), "{\"a\":1,\"b\":-2,\"c\":true}");
    }

    TEST("json: commas go between values of an array, and nesting closes in order") {
        begin(sizeof buf);
        enc_json_object_begin(&j);
        enc_json_key(&j, "list");
        enc_json_array_begin(&j);
        enc_json_u64(&j, 1);
        enc_json_object_begin(&j);
        enc_json_kv_str(&j, "k", "v", 16);
        enc_json_key(&j, "inner");
        enc_json_array_begin(&j);
        enc_json_array_end(&j);
        enc_json_object_end(&j);
        enc_json_str(&j, NULL, 16);
        enc_json_array_end(&j);
        enc_json_key(&j, "empty");
        enc_json_object_begin(&j);
        enc_json_object_end(&j);
        enc_json_kv_double(&j, "x", 2.25, 1);
        enc_json_object_end(&j);
        EXPECT_STR_EQ(done(), "{\"list\":[1,{\"k\":\"v\",\"inner\":[]},null],\"empty\":{},\"x\":2.2}");
    }

    TEST("json: the line ends in one newline and is NUL-terminated") {
        begin(sizeof buf);
        enc_json_array_begin(&j);
        enc_json_array_end(&j);
        size_t n = enc_json_finish(&j);
        EXPECT_EQ_INT(n, 3);
        EXPECT(memcmp(buf, "[]\n", 4) == 0);
    }

    TEST("json: non-finite doubles are null") {
        begin(sizeof buf);
        enc_json_array_begin(&j);
        enc_json_double(&j, NAN, 1);
        enc_json_double(&j, INFINITY, 1);
        enc_json_double(&j, 1.0, 3);
        enc_json_array_end(&j);
        EXPECT_STR_EQ(done(), "[null,null,1.000]");
    }

    TEST("json: strings are escaped, invalid UTF-8 becomes U+FFFD, valid UTF-8 stays") {
        begin(sizeof buf);
        enc_json_array_begin(&j);
        enc_json_str(&j, "q\"b\\t\tn\nr\r\x01\x7f \xff \xc3\xa9 \xe2\x82\xac \xed\xa0\x80", 256);
        enc_json_array_end(&j);
        EXPECT_STR_EQ(done(), "[\"q\\\"b\\\\t\\tn\\nr\\r\\u0001\\u007f \\ufffd \xc3\xa9 \xe2\x82\xac \\ufffd\\ufffd\\ufffd\"]");
    }

    TEST("json: a string longer than its limit is cut on a character boundary and ends in ...") {
        begin(sizeof buf);
        enc_json_array_begin(&j);
        enc_json_str(&j, "abcdef", 4);
        enc_json_str(&j, "ab\xc3\xa9z", 3); /* the 2-byte character does not fit after "ab" */
        enc_json_array_end(&j);
        EXPECT_STR_EQ(done(), "[\"abcd...\",\"ab...\"]");
    }

    TEST("json: a line that does not fit gives 0, never a cut line") {
        begin(16);
        enc_json_object_begin(&j);
        enc_json_kv_str(&j, "key", "a value too long for sixteen bytes", 256);
        enc_json_object_end(&j);
        EXPECT_EQ_INT(enc_json_finish(&j), 0);
        begin(3); /* "{}" fits, the newline and the NUL do not */
        enc_json_object_begin(&j);
        enc_json_object_end(&j);
        EXPECT_EQ_INT(enc_json_finish(&j), 0);
        begin(4);
        enc_json_object_begin(&j);
        enc_json_object_end(&j);
        EXPECT_EQ_INT(enc_json_finish(&j), 3);
    }

    TEST("json: misuse fails the line: a value without a key, a key in an array, a stray end") {
        begin(sizeof buf);
        enc_json_object_begin(&j);
        enc_json_u64(&j, 1); /* an object wants a key */
        enc_json_object_end(&j);
        EXPECT_EQ_INT(enc_json_finish(&j), 0);

        begin(sizeof buf);
        enc_json_array_begin(&j);
        enc_json_key(&j, "k"); /* no keys in an array */
        enc_json_array_end(&j);
        EXPECT_EQ_INT(enc_json_finish(&j), 0);

        begin(sizeof buf);
        enc_json_object_begin(&j);
        enc_json_array_end(&j); /* ] does not close { */
        EXPECT_EQ_INT(enc_json_finish(&j), 0);

        begin(sizeof buf);
        enc_json_object_begin(&j);
        enc_json_key(&j, "k");
        enc_json_object_end(&j); /* a key without its value */
        EXPECT_EQ_INT(enc_json_finish(&j), 0);
    }

    TEST("json: an unclosed object, an empty line or two top-level values fail the line") {
        begin(sizeof buf);
        enc_json_object_begin(&j);
        EXPECT_EQ_INT(enc_json_finish(&j), 0);

        begin(sizeof buf);
        EXPECT_EQ_INT(enc_json_finish(&j), 0);

        begin(sizeof buf);
        enc_json_u64(&j, 1);
        enc_json_u64(&j, 2);
        EXPECT_EQ_INT(enc_json_finish(&j), 0);
    }

    TEST("json: nesting deeper than ENC_JSON_DEPTH fails the line") {
        begin(sizeof buf);
        for (int i = 0; i < ENC_JSON_DEPTH; i++)
            enc_json_array_begin(&j);
        for (int i = 0; i < ENC_JSON_DEPTH; i++)
            enc_json_array_end(&j);
        EXPECT(enc_json_finish(&j) > 0);
        begin(sizeof buf);
        for (int i = 0; i <= ENC_JSON_DEPTH; i++)
            enc_json_array_begin(&j);
        for (int i = 0; i <= ENC_JSON_DEPTH; i++)
            enc_json_array_end(&j);
        EXPECT_EQ_INT(enc_json_finish(&j), 0);
    }

    return th_report();
}
