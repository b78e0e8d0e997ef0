//! The text report of `stormlog report`, for people: the reference's text
//! (which the drop-in `infer analyze` prints unchanged) with sizes in MiB or
//! GiB instead of raw bytes, and a hint under every reason the server join
//! gives up for that has a fix on the command line.

/// `text` (the reference's text report) with people's units and hints.
pub fn for_people(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 256);
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        out.push_str(&sizes(body));
        out.push_str(end);
        if let Some(hint) = body
            .strip_prefix("Server telemetry: unjoined (")
            .and_then(|r| r.strip_suffix(')'))
            .and_then(hint)
        {
            out.push_str(&format!("  hint: {hint}\n"));
        }
        // `  SLO NAME: unmeasurable (KEY: REASON)`, a case's line.
        if let Some(hint) = body
            .split_once(": unmeasurable (")
            .filter(|(head, _)| head.trim_start().starts_with("SLO "))
            .and_then(|(_, r)| r.strip_suffix(')'))
            .and_then(|r| r.rsplit_once(": "))
            .and_then(|(_, reason)| slo_hint(reason))
        {
            out.push_str(&format!("    hint: {hint}\n"));
        }
    }
    out
}

/// What to do about a reason the server telemetry was not joined.
fn hint(reason: &str) -> Option<&'static str> {
    Some(match reason {
        "route_not_declared" => {
            "if the client reached this server directly (no proxy or load balancer between them), \
             pass --direct-server"
        }
        "run_id_mismatch" => {
            "the telemetry was collected under another run id; check collect-server's --run-id, \
             or attach it with `stormlog ingest --run RUN FILE`"
        }
        "no_valid_server_samples" => {
            "the telemetry holds no usable sample; check collect-server's --pid and its output"
        }
        "clock_offset_required" | "clock_uncertainty_required" | "clock_flags_ambiguous" => {
            "for a server on another host, pass both --clock-offset-ns and --clock-uncertainty-ns"
        }
        "clock_alignment_required" | "clock_alignment_from_another_run" => {
            "the server's clock is another host's and the run records no alignment to it; pass \
             --clock-offset-ns (server minus client, ns) and --clock-uncertainty-ns"
        }
        "clock_offset_on_shared_clock" => {
            "the server shares the client's clock; drop --clock-offset-ns and --clock-uncertainty-ns"
        }
        "multiple_server_identities" | "undeclared_server_identity" => {
            "the telemetry holds more than one server; give each replica a --replica-id when collecting"
        }
        _ => return None,
    })
}

/// What to do about a reason an SLO criterion could not be measured.
fn slo_hint(reason: &str) -> Option<&'static str> {
    Some(match reason {
        "no_joined_span" => {
            "server.* criteria need the run's vLLM spans: ingest the span file \
             (`stormlog ingest --run RUN spans.jsonl`), or judge client.* criteria"
        }
        _ => return None,
    })
}

/// `max recorded 33095680 bytes` as `max recorded 31.6 MiB`.
fn sizes(line: &str) -> String {
    const KEY: &str = "max recorded ";
    let Some(at) = line.find(KEY) else {
        return line.to_owned();
    };
    let rest = &line[at + KEY.len()..];
    let Some((digits, after)) = rest.split_once(" bytes") else {
        return line.to_owned();
    };
    match digits.parse::<u64>() {
        Ok(n) => format!("{}{KEY}{}{after}", &line[..at], crate::util::human_bytes(n)),
        Err(_) => line.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::for_people;

    #[test]
    fn bytes_become_mib_and_a_route_gets_its_flag() {
        let text = "Server telemetry: unjoined (route_not_declared)\n  \
                    process_rss_bytes (server_process): max recorded 33095680 bytes, 30 samples\n";
        assert_eq!(
            for_people(text),
            "Server telemetry: unjoined (route_not_declared)\n  \
             hint: if the client reached this server directly (no proxy or load balancer between them), pass --direct-server\n  \
             process_rss_bytes (server_process): max recorded 31.6 MiB, 30 samples\n"
        );
        assert_eq!(for_people("no change\n"), "no change\n");
        assert_eq!(
            for_people("  SLO server_side: unmeasurable (server.ttft: no_joined_span)\n"),
            "  SLO server_side: unmeasurable (server.ttft: no_joined_span)\n    hint: server.* \
             criteria need the run's vLLM spans: ingest the span file (`stormlog ingest --run RUN \
             spans.jsonl`), or judge client.* criteria\n"
        );
    }
}
