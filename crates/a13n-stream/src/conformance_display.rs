use crate::conformance::{Case, Report};
pub(crate) fn check_display(_case: &Case, _report: &mut Report) {}
