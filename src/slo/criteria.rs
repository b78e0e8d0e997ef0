//! The ten known criteria (docs/slo-policy.md §1): their keys, boundaries, where a
//! per-request value comes from, and the key check shared by `--slo` flags and
//! policy documents (docs/slo-policy.md §2 step 4, §3.2 step 3.8.4).

use std::fmt;

/// Which side measured a value. The two are never mixed or relabelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Boundary {
    Client,
    Server,
}

impl Boundary {
    pub fn as_str(self) -> &'static str {
        match self {
            Boundary::Client => "client",
            Boundary::Server => "server",
        }
    }
}

/// One of the ten criteria; anything else is refused when a policy is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CriterionKey {
    ClientTtft,
    ClientTtftFromIntended,
    ClientE2e,
    ClientE2eFromIntended,
    ClientTpot,
    ServerTtft,
    ServerE2e,
    ServerQueue,
    ServerItl,
    ServerTpot,
}

/// Every criterion, in the reference's definition order.
pub const ALL: [CriterionKey; 10] = [
    CriterionKey::ClientTtft,
    CriterionKey::ClientTtftFromIntended,
    CriterionKey::ClientE2e,
    CriterionKey::ClientE2eFromIntended,
    CriterionKey::ClientTpot,
    CriterionKey::ServerTtft,
    CriterionKey::ServerE2e,
    CriterionKey::ServerQueue,
    CriterionKey::ServerItl,
    CriterionKey::ServerTpot,
];

/// The known keys, sorted, as the "unknown criterion" message lists them.
const KNOWN_SORTED: &str = "client.e2e, client.e2e_from_intended, client.tpot, client.ttft, \
client.ttft_from_intended, server.e2e, server.itl, server.queue, server.tpot, server.ttft";

const CLIENT_ITL: &str = "client.itl does not exist: streamed chunks are not tokens. Use \
client.tpot for a per-token mean, or server.itl for vLLM's own";

impl CriterionKey {
    pub fn boundary(self) -> Boundary {
        use CriterionKey::*;
        match self {
            ClientTtft
            | ClientTtftFromIntended
            | ClientE2e
            | ClientE2eFromIntended
            | ClientTpot => Boundary::Client,
            ServerTtft | ServerE2e | ServerQueue | ServerItl | ServerTpot => Boundary::Server,
        }
    }

    pub fn metric(self) -> &'static str {
        use CriterionKey::*;
        match self {
            ClientTtft | ServerTtft => "ttft",
            ClientTtftFromIntended => "ttft_from_intended",
            ClientE2e | ServerE2e => "e2e",
            ClientE2eFromIntended => "e2e_from_intended",
            ClientTpot | ServerTpot => "tpot",
            ServerQueue => "queue",
            ServerItl => "itl",
        }
    }

    /// `<boundary>.<metric>`.
    pub fn as_str(self) -> &'static str {
        use CriterionKey::*;
        match self {
            ClientTtft => "client.ttft",
            ClientTtftFromIntended => "client.ttft_from_intended",
            ClientE2e => "client.e2e",
            ClientE2eFromIntended => "client.e2e_from_intended",
            ClientTpot => "client.tpot",
            ServerTtft => "server.ttft",
            ServerE2e => "server.e2e",
            ServerQueue => "server.queue",
            ServerItl => "server.itl",
            ServerTpot => "server.tpot",
        }
    }

    /// vLLM reports these only as Prometheus histograms, so no single request
    /// can be judged on them (docs/slo-policy.md §7.4 rule 1).
    pub fn is_aggregate_only(self) -> bool {
        matches!(self, CriterionKey::ServerItl | CriterionKey::ServerTpot)
    }

    /// The span attribute (seconds) a per-request server value is read from.
    pub fn span_attribute(self) -> Option<&'static str> {
        match self {
            CriterionKey::ServerTtft => Some("gen_ai.latency.time_to_first_token"),
            CriterionKey::ServerE2e => Some("gen_ai.latency.e2e"),
            CriterionKey::ServerQueue => Some("gen_ai.latency.time_in_queue"),
            _ => None,
        }
    }

    /// The key named `<boundary>.<metric>`, exactly (case-sensitive).
    pub fn from_key(key: &str) -> Option<CriterionKey> {
        ALL.into_iter().find(|k| k.as_str() == key)
    }

    /// The key check of docs/slo-policy.md §2 step 4 / §3.2: the criterion, or the
    /// message naming why `<boundary>.<metric>` is not one.
    pub fn check(boundary: &str, metric: &str) -> Result<CriterionKey, String> {
        let key = format!("{boundary}.{metric}");
        if let Some(k) = CriterionKey::from_key(&key) {
            return Ok(k);
        }
        if key == "client.itl" {
            return Err(CLIENT_ITL.to_owned());
        }
        Err(format!("unknown criterion {key}; known: {KNOWN_SORTED}"))
    }
}

impl fmt::Display for CriterionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn known_list_is_the_sorted_keys() {
        let mut keys: Vec<&str> = ALL.iter().map(|k| k.as_str()).collect();
        keys.sort_unstable();
        assert_eq!(keys.join(", "), KNOWN_SORTED);
        for k in ALL {
            assert_eq!(
                k.as_str(),
                format!("{}.{}", k.boundary().as_str(), k.metric())
            );
        }
    }

    #[test]
    fn key_check_messages() {
        assert_eq!(
            CriterionKey::check("server", "queue"),
            Ok(CriterionKey::ServerQueue)
        );
        assert_eq!(
            CriterionKey::check("client", "itl").unwrap_err(),
            "client.itl does not exist: streamed chunks are not tokens. Use client.tpot for a \
             per-token mean, or server.itl for vLLM's own"
        );
        assert!(CriterionKey::check("client", "TTFT")
            .unwrap_err()
            .starts_with("unknown criterion client.TTFT; known: client.e2e, "));
    }
}
