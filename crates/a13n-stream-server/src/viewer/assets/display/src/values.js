// Small predicates over JSON values.
/** Whether a value is a JSON object (not an array, not null). */
export function isObject(value) {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}
/** Python's `==` on JSON values: objects compare by their entries in any order, and `True == 1`. */
export function pyEqual(left, right) {
    if (left === right)
        return true;
    if (left === undefined || right === undefined || left === null || right === null)
        return false;
    if (typeof left === "boolean" || typeof left === "number") {
        const other = typeof right === "boolean" ? Number(right) : right;
        return typeof other === "number" && Number(left) === other;
    }
    if (typeof right === "boolean" || typeof right === "number")
        return false;
    if (Array.isArray(left) || Array.isArray(right)) {
        if (!Array.isArray(left) || !Array.isArray(right) || left.length !== right.length)
            return false;
        return left.every((item, index) => pyEqual(item, right[index]));
    }
    if (typeof left === "string" || typeof right === "string")
        return false;
    const keys = Object.keys(left);
    if (keys.length !== Object.keys(right).length)
        return false;
    return keys.every((key) => Object.hasOwn(right, key) && pyEqual(left[key], right[key]));
}
