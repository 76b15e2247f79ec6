//! Output constraints are checked by the tool layer's checker, shared with tool arguments.
pub(crate) use crate::tool::constraints::violations;
