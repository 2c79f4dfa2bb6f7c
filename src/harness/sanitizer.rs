//! Reading compute-sanitizer's output: the error count of each tool's summary line and the
//! number of kernels the example used (the harness's closing `kernels used: N` line).

/// What one compute-sanitizer run reported: errors (None if its summary line is missing) and
/// the number of kernels the example used (from the harness's closing line).
pub fn parse_output(tool: &str, text: &str) -> (Option<u64>, Option<u64>) {
    let number_after = |line: &str, key: &str| {
        line.split(key).nth(1).and_then(|rest| rest.split_whitespace().next()).and_then(
            |w| w.trim_matches(|c: char| !c.is_ascii_digit()).parse::<u64>().ok(),
        )
    };
    let errors = text.lines().rev().find_map(|l| {
        if tool == "racecheck" {
            // "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)"
            l.contains("RACECHECK SUMMARY").then(|| number_after(l, "(")).flatten()
        } else {
            l.contains("ERROR SUMMARY")
                .then(|| number_after(l, "ERROR SUMMARY:"))
                .flatten()
        }
    });
    let kernels = text.lines().find_map(|l| {
        l.strip_prefix("kernels used: ")
            .and_then(|r| r.split_whitespace().next())
            .and_then(|n| n.parse().ok())
    });
    (errors, kernels)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitizer_summaries_are_read() {
        let racecheck = "kernels used: 3 (a, b, c)\n========= RACECHECK SUMMARY: 0 hazards displayed (2 errors, 1 warnings)\n";
        assert_eq!(parse_output("racecheck", racecheck), (Some(2), Some(3)));
        let memcheck = "x\n========= ERROR SUMMARY: 0 errors\n";
        assert_eq!(parse_output("memcheck", memcheck), (Some(0), None));
        assert_eq!(parse_output("initcheck", "crashed"), (None, None));
    }
}
