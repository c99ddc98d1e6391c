// Event times as the reference writes them: `datetime.fromtimestamp(ms / 1000, UTC)`, serialized by Pydantic as
// `2026-11-29T12:00:00.124000Z` (the fraction only when it is not zero).
const MICROS_PER_SECOND = 1000000n;
// Python's datetime range: year 1 to year 9999.
const MIN_SECONDS = -62_135_596_800;
const MAX_SECONDS = 253_402_300_799;
/** The time of an event whose `timestamp` is `ms` epoch milliseconds, or null when Python cannot hold it. */
export function fromEpochMillis(ms) {
    // The reference divides in binary floating point, then rounds the fraction to microseconds half to even.
    const seconds = ms / 1000;
    let whole = Math.trunc(seconds);
    let fraction = roundHalfEven((seconds - whole) * 1e6);
    if (fraction >= 1e6) {
        fraction -= 1e6;
        whole += 1;
    }
    else if (fraction < 0) {
        fraction += 1e6;
        whole -= 1;
    }
    if (!Number.isFinite(whole) || whole < MIN_SECONDS || whole > MAX_SECONDS)
        return null;
    return formatUtc(BigInt(whole) * MICROS_PER_SECOND + BigInt(fraction));
}
/** The clock's time, as an event time. */
export function clockTime(clock) {
    const now = clock();
    return fromEpochMillis(Math.trunc(now)) ?? formatUtc(0n);
}
function roundHalfEven(value) {
    const floor = Math.floor(value);
    const rest = value - floor;
    if (rest > 0.5)
        return floor + 1;
    if (rest < 0.5)
        return floor;
    return floor % 2 === 0 ? floor : floor + 1;
}
/** Microseconds since the epoch as the host writes a UTC time: to the second, with microseconds when there are any, and
 * `Z`. */
export function formatUtc(micros) {
    let seconds = micros / MICROS_PER_SECOND;
    let fraction = micros % MICROS_PER_SECOND;
    if (fraction < 0n) {
        fraction += MICROS_PER_SECOND;
        seconds -= 1n;
    }
    const date = new Date(Number(seconds) * 1000);
    const pad = (value, width) => value.toString().padStart(width, "0");
    const text = `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1, 2)}-${pad(date.getUTCDate(), 2)}` +
        `T${pad(date.getUTCHours(), 2)}:${pad(date.getUTCMinutes(), 2)}:${pad(date.getUTCSeconds(), 2)}`;
    return fraction === 0n ? `${text}Z` : `${text}.${pad(Number(fraction), 6)}Z`;
}
