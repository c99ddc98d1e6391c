//! `datetime.fromisoformat` as CPython 3.13 reads a string: the rules of its C implementation, step for step,
//! because a Harness host loads `occurred_at` with it and its quirks decide what a line means.
//!
//! What it reads, besides the usual `YYYY-MM-DDTHH:MM:SS.ffffff+HH:MM`:
//! - dates in the basic form (`20261129`) and as ISO weeks (`2026-W48-7`, `2026W487`, `2026-W48`), or alone;
//! - any one character between date and time (a space, `é`, an emoji);
//! - times of one to three two-digit fields, with or without colons (`18`, `1805`, `18:05:39`), a fraction of
//!   any length after `.` or `,` (six digits kept, the rest skipped), and digits straight after the seconds read
//!   as a fraction (`180539123` is 18:05:39.123);
//! - offsets `Z`, `±HH`, `±HHMM`, `±HH:MM[:SS[.ffffff]]`, with minutes up to 99 (`+00:99` is 1:39) and sub-second
//!   parts; an offset of zero seconds is UTC whatever its fraction says;
//! - before an offset, one stray character after the seconds (`18:05:39x+00:00`), a fraction with nothing after
//!   its mark (`39.+00:00`), or anything but `Z`, `+` and `-` after six fraction digits.
//!
//! Not read: `z`, a fraction of one to five digits followed by anything but the offset, a time with nothing in
//! it, any field out of range (hour 24 included), an offset of a day or more, fewer than seven characters.

/// The fields of a date-time as `fromisoformat` read them, before its range checks ([`Fields::checked`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Fields {
    pub(crate) year: i64,
    pub(crate) month: i64,
    pub(crate) day: i64,
    pub(crate) hour: i64,
    pub(crate) minute: i64,
    pub(crate) second: i64,
    pub(crate) micros: i64,
    /// The offset east of UTC in microseconds; `None` for a naive time.
    pub(crate) offset_micros: Option<i64>,
}

const MICROS_PER_DAY: i64 = 86_400_000_000;

/// Why `fromisoformat` refuses a text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// Not a spelling it reads.
    Spelling,
    /// Read, but a field is out of range: which, in short (Python's own messages name the value too).
    Range(&'static str),
}

/// Read `text` as CPython 3.13's `datetime.fromisoformat` does: its fields, or why it raises.
pub(crate) fn fromisoformat(text: &str) -> Result<Fields, Refused> {
    // Every string it reads is at least seven characters long (counted as Python counts them).
    if text.chars().nth(6).is_none() {
        return Err(Refused::Spelling);
    }
    let bytes = text.as_bytes();
    let separator = separator_at(bytes).ok_or(Refused::Spelling)?;
    let mut fields = Fields::default();
    (fields.year, fields.month, fields.day) = date(bytes, separator).ok_or(Refused::Spelling)?;
    if bytes.len() > separator {
        // The separator is any one character, however many bytes it takes.
        let time_at = separator + utf8_width(bytes[separator]);
        let (hour, minute, second, micros, offset) = time(bytes, time_at).ok_or(Refused::Spelling)?;
        (fields.hour, fields.minute, fields.second, fields.micros) = (hour, minute, second, micros);
        fields.offset_micros = offset;
    }
    fields.checked().map_err(Refused::Range)
}

impl Fields {
    /// The fields when `datetime` takes them (a valid date, a time of day, an offset under a day), or what
    /// Python says of the first that is not.
    fn checked(self) -> Result<Fields, &'static str> {
        let checks = [
            ((1..=9999).contains(&self.year), "year is out of range"),
            ((1..=12).contains(&self.month), "month must be in 1..12"),
            ((1..=days_in_month(self.year, self.month)).contains(&self.day), "day is out of range for month"),
            ((0..24).contains(&self.hour), "hour must be in 0..23"),
            ((0..60).contains(&self.minute), "minute must be in 0..59"),
            ((0..60).contains(&self.second), "second must be in 0..59"),
            (
                self.offset_micros.is_none_or(|offset| offset.abs() < MICROS_PER_DAY),
                "offset must be strictly between -24 and 24 hours",
            ),
        ];
        match checks.into_iter().find(|(holds, _)| !holds) {
            Some((_, why)) => Err(why),
            None => Ok(self),
        }
    }
}

/// The byte at `at`, or NUL past the end (the C code reads a NUL-terminated string).
fn at(bytes: &[u8], at: usize) -> u8 {
    bytes.get(at).copied().unwrap_or(0)
}

/// `width` decimal digits at `from`, and where they end.
fn digits(bytes: &[u8], from: usize, width: usize) -> Option<(i64, usize)> {
    let mut value = 0;
    for place in from..from + width {
        let digit = at(bytes, place).wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        value = value * 10 + i64::from(digit);
    }
    Some((value, from + width))
}

/// How many bytes the UTF-8 character starting with `lead` takes (as the C code counts them).
fn utf8_width(lead: u8) -> usize {
    match lead {
        0..0x80 => 1,
        _ if lead & 0xf0 == 0xe0 => 3,
        _ if lead & 0xf0 == 0xf0 => 4,
        _ => 2,
    }
}

/// Where the date ends and the separator stands, told by the date's form (`YYYY-MM-DD` 10, `YYYYMMDD` 8,
/// `YYYY-Www` 8, `YYYY-Www-D` 10, `YYYYWww` 7, `YYYYWwwD` 8); `None` where no form fits.
fn separator_at(bytes: &[u8]) -> Option<usize> {
    let len = bytes.len();
    if len == 7 {
        return Some(7);
    }
    if at(bytes, 4) != b'-' {
        if at(bytes, 4) != b'W' {
            return Some(8);
        }
        // `YYYYWww` or `YYYYWwwD`: as far as the digits run.
        let end = (7..len).find(|&index| !bytes[index].is_ascii_digit()).unwrap_or(len);
        return Some(match end {
            ..9 => end,
            _ if end % 2 == 0 => 7,
            _ => 8,
        });
    }
    if at(bytes, 5) != b'W' {
        return Some(10);
    }
    if len > 8 && at(bytes, 8) == b'-' {
        if len == 9 {
            return None;
        }
        // `YYYY-Www-` and a digit: the hyphen is taken for the separator.
        return Some(if len > 10 && bytes[10].is_ascii_digit() { 8 } else { 10 });
    }
    Some(8)
}

/// The date before `separator`: year, month and day (an ISO week date converted).
fn date(bytes: &[u8], separator: usize) -> Option<(i64, i64, i64)> {
    let (year, mut p) = digits(bytes, 0, 4)?;
    let hyphens = at(bytes, p) == b'-';
    p += usize::from(hyphens);
    if at(bytes, p) == b'W' {
        let (week, after) = digits(bytes, p + 1, 2)?;
        p = after;
        let mut weekday = 1;
        if p < separator {
            if hyphens {
                (at(bytes, p) == b'-').then_some(())?;
                p += 1;
            }
            weekday = digits(bytes, p, 1)?.0;
        }
        return iso_week_date(year, week, weekday);
    }
    let (month, after) = digits(bytes, p, 2)?;
    p = after;
    if hyphens {
        (at(bytes, p) == b'-').then_some(())?;
        p += 1;
    }
    let (day, _) = digits(bytes, p, 2)?;
    Some((year, month, day))
}

/// The date of weekday `weekday` (1 Monday) of ISO week `week` of `year`.
fn iso_week_date(year: i64, week: i64, weekday: i64) -> Option<(i64, i64, i64)> {
    if !(1..=9999).contains(&year) {
        return None;
    }
    let january_1 = days_from_civil(year, 1, 1);
    // 0 Monday .. 6 Sunday.
    let first_weekday = (january_1 + 3).rem_euclid(7);
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let has_53 = first_weekday == 3 || (first_weekday == 2 && leap);
    let week_in_year = (1..=52).contains(&week) || (week == 53 && has_53);
    if !week_in_year || !(1..=7).contains(&weekday) {
        return None;
    }
    // Monday of week 1 is the Monday on or before January 4th.
    let january_4 = january_1 + 3;
    let monday = january_4 - (january_4 + 3).rem_euclid(7);
    Some(civil_from_days(monday + (week - 1) * 7 + weekday - 1))
}

/// The time from `from` to the end: hour, minute, second, microseconds and the offset in microseconds.
fn time(bytes: &[u8], from: usize) -> Option<(i64, i64, i64, i64, Option<i64>)> {
    let end = bytes.len();
    // The offset starts at the first `Z`, `+` or `-`, looked for from the time's first character on.
    let mut zone = from;
    loop {
        if matches!(at(bytes, zone), b'Z' | b'+' | b'-') {
            break;
        }
        zone += 1;
        if zone >= end {
            break;
        }
    }
    let (hour, minute, second, micros, rest) = clock(bytes, from, zone)?;
    if zone == end {
        // No offset: nothing may follow the time.
        return (!rest).then_some((hour, minute, second, micros, None));
    }
    if bytes[zone] == b'Z' {
        // Nothing may follow, up to a NUL: the C code reads the text as NUL-terminated.
        return (at(bytes, zone + 1) == 0).then_some((hour, minute, second, micros, Some(0)));
    }
    let sign = if bytes[zone] == b'-' { -1 } else { 1 };
    let (hours, minutes, seconds, fraction, rest) = clock(bytes, zone + 1, end)?;
    if rest {
        return None;
    }
    let offset_seconds = sign * (hours * 3600 + minutes * 60 + seconds);
    // An offset of no whole seconds is UTC, whatever its fraction.
    let offset = if offset_seconds == 0 { 0 } else { offset_seconds * 1_000_000 + sign * fraction };
    Some((hour, minute, second, micros, Some(offset)))
}

/// `HH[:?MM[:?SS]][(.|,)f…]` from `from` to `end`: the fields, and whether anything is left before the end's
/// character (what the caller refuses where no offset follows).
fn clock(bytes: &[u8], from: usize, end: usize) -> Option<(i64, i64, i64, i64, bool)> {
    let mut values = [0i64; 3];
    let mut p = from;
    let mut colons = true;
    for (index, value) in values.iter_mut().enumerate() {
        (*value, p) = digits(bytes, p, 2)?;
        let c = at(bytes, p);
        p += 1;
        if index == 0 {
            colons = c == b':';
        }
        if p >= end {
            let [hour, minute, second] = values;
            return Some((hour, minute, second, 0, c != 0));
        }
        match c {
            b':' if colons => continue,
            b'.' | b',' => break,
            _ if !colons => p -= 1,
            _ => return None,
        }
    }
    // What is left up to `end`: up to six digits of a fraction.
    let width = (end - p).min(6);
    let (mut micros, mut p) = digits(bytes, p, width)?;
    for _ in width..6 {
        micros *= 10;
    }
    while at(bytes, p).is_ascii_digit() {
        p += 1;
    }
    let [hour, minute, second] = values;
    Some((hour, minute, second, micros, at(bytes, p) != 0))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
pub(crate) fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_index = (month + 9) % 12;
    let day_of_year = (153 * month_index + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The proleptic Gregorian date `days` after 1970-01-01.
pub(crate) fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let days = days + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days - era * 146_097;
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 { month_index + 3 } else { month_index - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Days in `month` of `year`.
pub(crate) fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}
