// The Python views of JSON values the fold's sizes and texts depend on, against values Python 3.13 printed.
import assert from "node:assert/strict";
import { test } from "node:test";

import { codePoints, dumpsUnicode, floatRepr, headCodePoints, jsonSize, pyRepr, pyStr } from "../dist/python.js";
import { sha256Hex } from "../dist/sha256.js";
import { fromEpochMillis } from "../dist/time.js";

test("float repr is Python's", () => {
  const cases = [
    [1e-5, "1e-05"], [2.5, "2.5"], [-0.001, "-0.001"], [1.5e16, "1.5e+16"], [123456789.125, "123456789.125"],
    [1e22, "1e+22"], [5e-324, "5e-324"], [0.1, "0.1"], [-1e-7, "-1e-07"], [1e16, "1e+16"],
    [9999999999999998.0, "9999999999999998.0"],
  ];
  for (const [value, expected] of cases) assert.equal(floatRepr(value), expected, String(value));
});

test("repr and str are Python's", () => {
  const value = { a: [1, 2.5, null, true], b: "it's", c: "tab\tnl\n\u0001é\u2028\u00a0 😀\u007f" };
  assert.equal(pyRepr(value), `{'a': [1, 2.5, None, True], 'b': "it's", 'c': 'tab\\tnl\\n\\x01é\\u2028\\xa0 😀\\x7f'}`);
  assert.equal(pyRepr("both ' and \""), `'both \\' and "'`);
  assert.equal(pyStr("plain"), "plain");
  assert.equal(pyStr(undefined), "None");
  assert.equal(pyStr(-0), "0");
});

test("json.dumps sizes and unicode dumps are Python's", () => {
  const value = { k: 'é😀"\\\n\u0001\u007f\u2028 a', n: [1, 2.5, null, false, {}], e: [] };
  assert.equal(jsonSize(value), 85);
  assert.equal(dumpsUnicode({ q: "é\u2028\n\u0001\u007f", n: 2.5, l: [1e-5] }), '{"q":"é\u2028\\n\\u0001\u007f","n":2.5,"l":[1e-05]}');
});

test("lengths and slices count code points", () => {
  assert.equal(codePoints("a😀é"), 3);
  assert.equal(headCodePoints("😀😀😀", 2), "😀😀");
  assert.equal(headCodePoints("ab", 5), "ab");
});

test("sha256 and item times", () => {
  assert.equal(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  assert.equal(sha256Hex("é".repeat(100)), "f42ec48e1e4b487e590e0b3d4e58437c8327efa855d769709f4942a4f73a7eb6");
  assert.equal(fromEpochMillis(1700000000000), "2023-11-14T22:13:20Z");
  assert.equal(fromEpochMillis(1700000000123), "2023-11-14T22:13:20.123000Z");
  assert.equal(fromEpochMillis(-1), "1969-12-31T23:59:59.999000Z");
  assert.equal(fromEpochMillis(1e20), null);
});
