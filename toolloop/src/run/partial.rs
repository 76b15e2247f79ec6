//! How often a streamed run re-parses a tool call's arguments.

/// Arguments up to this long are parsed for every delta.
const ALWAYS_UP_TO: usize = 2 << 10;

/// Decides which `ToolCallArgumentsDelta` of a streamed run carries the
/// arguments parsed so far: every delta while they are short, and for long
/// ones each time they have grown by an eighth since the last parse. Parsing
/// is linear in the text, so parsing at every delta would make a long
/// argument (a file a coding agent writes) cost the square of its length;
/// this way it costs a constant multiple of it.
#[derive(Debug, Default)]
pub(crate) struct PartialArguments {
    /// Each call's index and its arguments' length when last parsed.
    parsed: Vec<(usize, usize)>,
}

impl PartialArguments {
    /// Whether the arguments of the call at `index`, now `length` bytes
    /// long, are due to be parsed; if so, notes that they were.
    pub(crate) fn due(&mut self, index: usize, length: usize) -> bool {
        match self.parsed.iter_mut().find(|(at, _)| *at == index) {
            None => {
                self.parsed.push((index, length));
                true
            }
            Some((_, last)) if length <= ALWAYS_UP_TO || length >= *last + *last / 8 => {
                *last = length;
                true
            }
            Some(_) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::PartialArguments;

    #[test]
    fn short_arguments_are_parsed_every_time_long_ones_geometrically() {
        let mut partial = PartialArguments::default();
        assert!((1..=2048).step_by(16).all(|length| partial.due(0, length)));
        // 1 MiB arriving 5 bytes at a time: a few dozen parses, not 200,000.
        let parses = (2048..=(1 << 20)).step_by(5).filter(|length| partial.due(0, *length)).count();
        assert!((40..80).contains(&parses), "{parses}");
        // Another call keeps its own count.
        assert!(partial.due(1, 10));
    }
}
