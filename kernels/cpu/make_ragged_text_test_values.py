#!/usr/bin/env python3
"""Prints TensorFlow's values for ragged_text_ops_test.cc: RaggedBincount
(counts, weights, binary_output), StringNGrams (widths, padding,
preserve_short_sequences, separators), UnicodeDecode (the replacement of
each maximal ill-formed subpart, errors "ignore", replaced control
characters, a matrix with int32 splits) and UnicodeEncode (UTF-8, UTF-16-BE,
UTF-32-BE; "replace" and "ignore"; noncharacters), run through tf.raw_ops in
eager mode on the test's own inputs, as the test's C++ literals (strings
with C escapes).

    /work/tfvenv/bin/python kernels/cpu/make_ragged_text_test_values.py
    /work/tfvenv/bin/python kernels/cpu/make_ragged_text_test_values.py --check

--check reads the values ragged_text_ops_test.cc commits (the expected
lists, shapes, the single n-grams and the n-gram count, the splits' dtype,
and the status code and message of the ExpectErrors TensorFlow also gives)
and compares them with TensorFlow's, exactly (exit 1 on a mismatch). A
message passes when the test's text is a part of TensorFlow's, as
ExpectError asks.

Left out: the test's UnicodeDecode of input_encoding "ISO-8859-1", which it
expects to fail (kUnimplemented, "ISO-8859-1"). That is graphrun's choice:
TensorFlow 2.21 decodes ISO-8859-1 ("a" gives splits {0, 1}, code point 97).
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cc_expected import Cases  # noqa: E402
from make_text_test_values import error, shape, string, strings, value  # noqa: E402

raw = tf.raw_ops

# The test's kDecodeInput.
DECODE_INPUT = [b"h\xc3\xa9llo", b"a\x80b", b"\xe2\x82", b"\xf0\x9f\x98\x80\x01", b"\xed\xa0\x80x",
                b"\xef\xbf\xbf", b"\xc0\xaf", b"\xf4\x90\x80\x80", b""]


def strs(v):
    return np.array(v, dtype=object)


def main():
    c = Cases(os.path.join(HERE, "ragged_text_ops_test.cc"))

    splits = np.array([0, 3, 3, 6], np.int64)
    values = np.array([1, 1, 4, 0, 2, 2], np.int32)
    counts = raw.RaggedBincount(splits=splits, values=values, size=np.int32(3),
                                weights=np.array([], np.int64), binary_output=False)
    shape(c, "RaggedBincount shape", counts, "EXPECT_EQ((*counts)[0].shape(),")
    c.case("RaggedBincount", counts, "ToDoubles<int64_t>((*counts)[0]),",
           after="std::vector<double>{")
    c.case("RaggedBincount weighted",
           raw.RaggedBincount(splits=splits, values=values, size=np.int32(5),
                              weights=np.array([.5, 1.5, 2, 3, 4, .25], np.float32),
                              binary_output=False),
           "ToDoubles<float>((*weighted)[0]),", after="std::vector<double>{", kind="d")
    c.case("RaggedBincount binary_output",
           raw.RaggedBincount(splits=splits, values=values, size=np.int32(3),
                              weights=np.array([], np.float32), binary_output=True),
           "ToDoubles<float>((*binary)[0]),", after="std::vector<double>{", kind="d")
    error(c, "RaggedBincount negative value",
          lambda: raw.RaggedBincount(splits=splits, values=np.array([1, -1, 4, 0, 2, 2], np.int32),
                                     size=np.int32(3), weights=np.array([], np.float32),
                                     binary_output=False),
          "Tensor::FromVector<int32_t>({1, -1, 4, 0, 2, 2}),")
    error(c, "RaggedBincount splits short of the values",
          lambda: raw.RaggedBincount(splits=np.array([0, 3, 5], np.int64), values=values,
                                     size=np.int32(3), weights=np.array([], np.float32),
                                     binary_output=False),
          "{Tensor::FromVector<int64_t>({0, 3, 5}),")

    def ngrams(widths, left, right, pad_width, preserve, separator):
        grams, row_splits = raw.StringNGrams(
            data=strs(["a", "b", "c", "d", "e", "f"]),
            data_splits=np.array([0, 1, 4, 6, 6], np.int64),
            separator=separator, ngram_widths=widths, left_pad=left, right_pad=right,
            pad_width=pad_width, preserve_short_sequences=preserve)
        return grams.numpy().tolist(), row_splits

    for widths, left, right, pad_width, preserve, separator in [
            ([1, 2], "", "", 0, False, " "), ([2], "<", ">", -1, False, "|"),
            ([3], "<", ">", 1, False, "|"), ([3], "", "", 0, True, "|"),
            ([4], "<", ">", 1, True, "|")]:
        call = 'g = RunNGrams({%s}, "%s", "%s", %d, %s, "%s");' % (
            ", ".join(map(str, widths)), left, right, pad_width, "true" if preserve else "false",
            separator)
        label = "StringNGrams %s" % call[len("g = RunNGrams("):-2]
        grams, row_splits = ngrams(widths, left, right, pad_width, preserve, separator)
        strings(c, label, grams, call, after="std::vector<std::string>{")
        c.case(label + " splits", row_splits, call, after="std::vector<int>{")

    call = 'g = RunNGrams({5, 6}, "<", ">", -1, true, "|");'
    grams, row_splits = ngrams([5, 6], "<", ">", -1, True, "|")
    c.case("StringNGrams widths 5 and 6 splits", row_splits, call, after="std::vector<int>{")
    value(c, "StringNGrams widths 5 and 6 count", len(grams), "ASSERT_EQ(g.grams.size(),")
    for i in (0, 5, 13, 25, 39, 47):
        string(c, "StringNGrams widths 5 and 6 gram %d" % i, grams[i],
               "EXPECT_EQ(g.grams[%d]," % i)

    def decode(data=DECODE_INPUT, splits_dtype=tf.int64, **attrs):
        return raw.UnicodeDecode(input=strs(data), input_encoding="UTF-8", Tsplits=splits_dtype,
                                 **attrs)

    out = decode()
    c.case("UnicodeDecode replace splits", out.row_splits,
           "{Strings(kDecodeInput)}); ASSERT_TRUE(out.ok()) << out.status();", occurrence=0,
           after="std::vector<int>{")
    c.case("UnicodeDecode replace code points", out.char_values,
           "{Strings(kDecodeInput)}); ASSERT_TRUE(out.ok()) << out.status();", occurrence=0,
           after="std::vector<int>{", skip=1)
    out = decode(errors="ignore")
    c.case("UnicodeDecode ignore splits", out.row_splits, '{"errors", AttrS("ignore")},',
           after="std::vector<int>{")
    c.case("UnicodeDecode ignore code points", out.char_values, '{"errors", AttrS("ignore")},',
           after="std::vector<int>{", skip=1)
    out = decode(replace_control_characters=True, replacement_char=63)
    c.case("UnicodeDecode replace_control_characters code points", out.char_values,
           '{"replace_control_characters", AttrB(true)},', after="std::vector<int>{")
    error(c, "UnicodeDecode strict", lambda: decode(errors="strict"),
          '{"errors", AttrS("strict")},')
    out = decode(np.array([[b"ab", b"c"], [b"", b"d"]], dtype=object), tf.int32)
    value(c, "UnicodeDecode matrix splits dtype", "DT_" + out.row_splits.dtype.name.upper(),
          "EXPECT_EQ((*out)[0].dtype(),")
    matrix = '{Tensor::FromVector<std::string>({"ab", "c", "", "d"}, TensorShape({2, 2}))});'
    c.case("UnicodeDecode matrix splits", out.row_splits, matrix, after="std::vector<int>{")
    c.case("UnicodeDecode matrix code points", out.char_values, matrix, after="std::vector<int>{",
           skip=1)

    code_points = np.array([104, 233, 128512, 0xD800, 0xFFFF, 0x110000, -5, 65], np.int32)

    def encode(encoding, errors, replacement):
        return raw.UnicodeEncode(input_values=code_points,
                                 input_splits=np.array([0, 3, 8], np.int64),
                                 output_encoding=encoding, errors=errors,
                                 replacement_char=replacement)

    strings(c, "UnicodeEncode UTF-8 replace", encode("UTF-8", "replace", 65533),
            'out = encode("UTF-8", "replace", 65533);', after="std::vector<std::string>{")
    strings(c, "UnicodeEncode UTF-8 ignore", encode("UTF-8", "ignore", 65533),
            'out = encode("UTF-8", "ignore", 65533);', after="std::vector<std::string>{")
    strings(c, "UnicodeEncode UTF-16-BE replace", encode("UTF-16-BE", "replace", 63),
            'out = encode("UTF-16-BE", "replace", 63);', after="std::vector<std::string>{")
    error(c, "UnicodeEncode UTF-8 strict", lambda: encode("UTF-8", "strict", 65533),
          'ExpectError(encode("UTF-8", "strict", 65533),')
    strings(c, "UnicodeEncode UTF-32-BE",
            raw.UnicodeEncode(input_values=np.array([104, 233, 128512], np.int32),
                              input_splits=np.array([0, 3], np.int64),
                              output_encoding="UTF-32-BE"),
            '{{"output_encoding", AttrS("UTF-32-BE")}}', after="std::vector<std::string>{")
    strings(c, "UnicodeEncode noncharacters",
            raw.UnicodeEncode(input_values=np.array([0xFDD0, 0x1FFFE, 0xFDCF], np.int32),
                              input_splits=np.array([0, 3], np.int64), output_encoding="UTF-8",
                              replacement_char=63),
            "Tensor::FromVector<int32_t>({0xFDD0, 0x1FFFE, 0xFDCF}),",
            after="std::vector<std::string>{")
    c.finish()


if __name__ == "__main__":
    main()
