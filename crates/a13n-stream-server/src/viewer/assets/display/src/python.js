// How the Python reference sees a JSON value: its truthiness, `str()`, `repr()`, string lengths in code points,
// and the length of `json.dumps(value, separators=(",", ":"))`, which the fold compares with its size limits.
//
// A number arrives here as `JSON.parse` made it, so `1.0` and `1` are one value: an integral number is taken as
// a Python `int`, any other as a `float`. Only a size exactly at a limit can tell the two apart.
/** Python's truthiness of a JSON value. */
export function truthy(value) {
    if (value === undefined || value === null)
        return false;
    if (typeof value === "boolean")
        return value;
    if (typeof value === "number")
        return value !== 0;
    if (typeof value === "string")
        return value.length > 0;
    if (Array.isArray(value))
        return value.length > 0;
    return Object.keys(value).length > 0;
}
/** Python's `str()` of a JSON value (`None` for a missing one). */
export function pyStr(value) {
    return typeof value === "string" ? value : pyRepr(value);
}
/** Python's `repr()` of a JSON value, as a dict, list, str, int, float, bool or None. */
export function pyRepr(value) {
    if (value === undefined || value === null)
        return "None";
    if (typeof value === "boolean")
        return value ? "True" : "False";
    if (typeof value === "number")
        return pyNumber(value);
    if (typeof value === "string")
        return reprString(value);
    if (Array.isArray(value))
        return `[${value.map(pyRepr).join(", ")}]`;
    const entries = Object.entries(value).map(([key, item]) => `${reprString(key)}: ${pyRepr(item)}`);
    return `{${entries.join(", ")}}`;
}
// Python's `str.isprintable`: false for controls, format characters, surrogates, private use, unassigned code
// points and every separator but the space.
const NOT_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;
function reprString(text) {
    const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
    let out = quote;
    for (const char of text) {
        if (char === "\\")
            out += "\\\\";
        else if (char === "\n")
            out += "\\n";
        else if (char === "\r")
            out += "\\r";
        else if (char === "\t")
            out += "\\t";
        else if (char === quote)
            out += `\\${char}`;
        else if (char !== " " && NOT_PRINTABLE.test(char))
            out += escapeCode(char.codePointAt(0) ?? 0);
        else
            out += char;
    }
    return out + quote;
}
function escapeCode(code) {
    const hex = code.toString(16);
    if (code < 0x100)
        return `\\x${hex.padStart(2, "0")}`;
    if (code < 0x10000)
        return `\\u${hex.padStart(4, "0")}`;
    return `\\U${hex.padStart(8, "0")}`;
}
/** A number as Python writes it: an integral one as an `int`, any other with `float.__repr__`. */
export function pyNumber(value) {
    if (Number.isInteger(value))
        return Object.is(value, -0) ? "0" : BigInt(value).toString();
    if (!Number.isFinite(value))
        return Number.isNaN(value) ? "NaN" : value > 0 ? "Infinity" : "-Infinity";
    return floatRepr(value);
}
/** `float.__repr__`: the shortest digits that read back, positional for exponents -4 to 15, else `1e-05`. */
export function floatRepr(value) {
    const [mantissa = "0", exponentText = "0"] = value.toExponential().split("e");
    const negative = mantissa.startsWith("-");
    const digits = mantissa.replace("-", "").replace(".", "");
    const exponent = Number(exponentText);
    const sign = negative ? "-" : "";
    if (exponent < -4 || exponent >= 16) {
        const head = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
        const power = Math.abs(exponent).toString().padStart(2, "0");
        return `${sign}${head}e${exponent < 0 ? "-" : "+"}${power}`;
    }
    if (exponent < 0)
        return `${sign}0.${"0".repeat(-exponent - 1)}${digits}`;
    const whole = digits.slice(0, exponent + 1).padEnd(exponent + 1, "0");
    const fraction = digits.slice(exponent + 1);
    return `${sign}${whole}.${fraction || "0"}`;
}
/** `len(text)`: the number of code points. */
export function codePoints(text) {
    let count = text.length;
    for (let index = 0; index < text.length; index++) {
        const unit = text.charCodeAt(index);
        if (unit >= 0xd800 && unit <= 0xdbff && index + 1 < text.length) {
            const next = text.charCodeAt(index + 1);
            if (next >= 0xdc00 && next <= 0xdfff) {
                count--;
                index++;
            }
        }
    }
    return count;
}
/** `text[:limit]`, counting code points. */
export function headCodePoints(text, limit) {
    if (text.length <= limit)
        return text;
    let units = 0;
    for (let taken = 0; taken < limit && units < text.length; taken++) {
        const unit = text.charCodeAt(units);
        const pair = unit >= 0xd800 && unit <= 0xdbff && units + 1 < text.length;
        const next = pair ? text.charCodeAt(units + 1) : 0;
        units += pair && next >= 0xdc00 && next <= 0xdfff ? 2 : 1;
    }
    return text.slice(0, units);
}
/** `len(json.dumps(value, separators=(",", ":")))`: ASCII output, every other character as `\uXXXX`. */
export function jsonSize(value) {
    if (value === undefined || value === null)
        return 4;
    if (typeof value === "boolean")
        return value ? 4 : 5;
    if (typeof value === "number")
        return pyNumber(value).length;
    if (typeof value === "string")
        return stringSize(value);
    if (Array.isArray(value)) {
        let size = 2 + Math.max(value.length - 1, 0);
        for (const item of value)
            size += jsonSize(item);
        return size;
    }
    const keys = Object.keys(value);
    let size = 2 + Math.max(keys.length - 1, 0);
    for (const key of keys)
        size += stringSize(key) + 1 + jsonSize(value[key]);
    return size;
}
/** The size of a JSON string `json.dumps` writes, quotes included. */
export function stringSize(text) {
    let size = 2;
    for (let index = 0; index < text.length; index++) {
        const unit = text.charCodeAt(index);
        if (unit === 0x22 || unit === 0x5c)
            size += 2;
        else if (unit >= 0x20 && unit < 0x7f)
            size += 1;
        else if (unit === 0x0a || unit === 0x0d || unit === 0x09 || unit === 0x08 || unit === 0x0c)
            size += 2;
        else
            size += 6;
    }
    return size;
}
/** `json.dumps(value, ensure_ascii=False, separators=(",", ":"))`: tool-call arguments given as an object. */
export function dumpsUnicode(value) {
    if (value === null)
        return "null";
    if (typeof value === "boolean")
        return value ? "true" : "false";
    if (typeof value === "number")
        return pyNumber(value);
    if (typeof value === "string")
        return dumpString(value);
    if (Array.isArray(value))
        return `[${value.map(dumpsUnicode).join(",")}]`;
    return `{${Object.entries(value)
        .map(([key, item]) => `${dumpString(key)}:${dumpsUnicode(item)}`)
        .join(",")}}`;
}
const SHORT_ESCAPES = {
    0x22: '\\"',
    0x5c: "\\\\",
    0x0a: "\\n",
    0x0d: "\\r",
    0x09: "\\t",
    0x08: "\\b",
    0x0c: "\\f",
};
function dumpString(text) {
    let out = '"';
    for (let index = 0; index < text.length; index++) {
        const unit = text.charCodeAt(index);
        const short = SHORT_ESCAPES[unit];
        if (short !== undefined)
            out += short;
        else if (unit < 0x20)
            out += `\\u${unit.toString(16).padStart(4, "0")}`;
        else
            out += text[index];
    }
    return out + '"';
}
