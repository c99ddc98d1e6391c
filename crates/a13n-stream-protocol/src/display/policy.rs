//! How much content a display keeps, and which observations it shows: the reference's two flags,
//! `full_content` and `retain_content`, as the four policies they make.

/// How much content a [`DisplayFold`](super::DisplayFold) keeps, and which observations it shows.
///
/// The reference spells this as two flags; every combination behaves differently, so there are four policies.
/// [`ContentPolicy::new`] takes the flags, and [`ContentPolicy::full_content`] / [`ContentPolicy::retain_content`]
/// give them back (a checkpoint records `full_content`; `retain_content` is host policy).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ContentPolicy {
    /// Bounded fields and observations: a live display (both flags off).
    #[default]
    Bounded,
    /// Whole fields and observations, the same observations shown: a durable host (`retain_content`).
    Retain,
    /// Whole fields, no native part observations, large observations omitted except summaries: an interactive
    /// host that stores everything elsewhere (`full_content`).
    Full,
    /// Whole fields and observations, no native part observations (both flags).
    FullRetain,
}

impl ContentPolicy {
    /// The policy of the reference's two flags.
    pub fn new(full_content: bool, retain_content: bool) -> ContentPolicy {
        match (full_content, retain_content) {
            (false, false) => ContentPolicy::Bounded,
            (false, true) => ContentPolicy::Retain,
            (true, false) => ContentPolicy::Full,
            (true, true) => ContentPolicy::FullRetain,
        }
    }

    /// The reference's `full_content`: whole fields, and no native part observations.
    pub fn full_content(self) -> bool {
        matches!(self, ContentPolicy::Full | ContentPolicy::FullRetain)
    }

    /// The reference's `retain_content`: whole fields and observations.
    pub fn retain_content(self) -> bool {
        matches!(self, ContentPolicy::Retain | ContentPolicy::FullRetain)
    }

    /// Whether message text, tool arguments and results are kept whole rather than bounded.
    pub(crate) fn whole_fields(self) -> bool {
        self != ContentPolicy::Bounded
    }

    /// Whether an observation over the size bound keeps its value (`summary`: a handoff or compaction summary).
    pub(crate) fn whole_observation(self, summary: bool) -> bool {
        self.retain_content() || (self.full_content() && summary)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flags_round_trip() {
        for full in [false, true] {
            for retain in [false, true] {
                let policy = ContentPolicy::new(full, retain);
                assert_eq!((policy.full_content(), policy.retain_content()), (full, retain));
                assert_eq!(policy.whole_fields(), full || retain);
            }
        }
        assert_eq!(ContentPolicy::default(), ContentPolicy::Bounded);
    }
}
