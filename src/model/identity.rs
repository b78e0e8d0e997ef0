//! The server identity every telemetry sample carries (the reference's
//! `stormlog.infer.telemetry.ServerIdentity`): one record for the collector
//! that writes it and the loader that reads it, its validation in the
//! reference's order (`ServerIdentity.__post_init__`), its rendering, and the
//! wall-clock domain it names.
use serde_json::{Map, Value};

/// Suffix of every wall-clock domain name.
pub const WALL_CLOCK: &str = "unix_epoch_ns";

/// A server identity was refused; the messages are the reference's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdentityError {
    #[error("host, positive pid, and process_start_ns are required")]
    HostPidStart,
    #[error("host and boot_id cannot contain '/'")]
    Slash,
    #[error("optional server identity fields must be non-empty strings")]
    EmptyOptional,
    #[error("gpu_instance_id requires device_uuid")]
    InstanceWithoutDevice,
    #[error("rank must be non-negative")]
    NegativeRank,
    #[error("world_size requires group_id")]
    WorldSizeWithoutGroup,
    #[error("group_id must be a non-empty string")]
    EmptyGroupId,
    #[error("group members need a positive world_size")]
    WorldSizeNotPositive,
    #[error("group members need a rank below world_size")]
    RankNotBelowWorldSize,
}

/// The group-membership rule: a declared member has a rank in
/// `0..world_size`. `rank >= 0` is the identity's own check, not this one.
pub fn validate_group(
    group_id: Option<&str>,
    rank: Option<i64>,
    world_size: Option<i64>,
) -> Result<(), IdentityError> {
    let Some(group_id) = group_id else {
        return match world_size {
            Some(_) => Err(IdentityError::WorldSizeWithoutGroup),
            None => Ok(()),
        };
    };
    if group_id.is_empty() {
        return Err(IdentityError::EmptyGroupId);
    }
    let world_size = match world_size {
        Some(w) if w > 0 => w,
        _ => return Err(IdentityError::WorldSizeNotPositive),
    };
    match rank {
        Some(r) if r < world_size => Ok(()),
        _ => Err(IdentityError::RankNotBelowWorldSize),
    }
}

/// The process and accelerator one collector observed. Two samples belong
/// to the same server iff all ten fields are equal.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ServerIdentity {
    pub host: String,
    pub pid: i64,
    pub process_start_ns: i64,
    pub device_uuid: Option<String>,
    pub gpu_instance_id: Option<String>,
    pub replica_id: Option<String>,
    pub rank: Option<i64>,
    pub boot_id: Option<String>,
    pub group_id: Option<String>,
    pub world_size: Option<i64>,
}

impl ServerIdentity {
    /// Checks the identity the way the reference's constructor does, in the
    /// same order, so the same flags fail with the same message.
    pub fn validate(&self) -> Result<(), IdentityError> {
        if self.host.is_empty() || self.pid == 0 || self.process_start_ns == 0 {
            return Err(IdentityError::HostPidStart);
        }
        // Both are parts of the clock domain name, which `/` separates.
        if self.host.contains('/') || self.boot_id.as_deref().is_some_and(|b| b.contains('/')) {
            return Err(IdentityError::Slash);
        }
        let optionals = [
            &self.device_uuid,
            &self.gpu_instance_id,
            &self.replica_id,
            &self.boot_id,
            &self.group_id,
        ];
        if optionals.iter().any(|v| v.as_deref() == Some("")) {
            return Err(IdentityError::EmptyOptional);
        }
        if self.gpu_instance_id.is_some() && self.device_uuid.is_none() {
            return Err(IdentityError::InstanceWithoutDevice);
        }
        if self.rank.is_some_and(|r| r < 0) {
            return Err(IdentityError::NegativeRank);
        }
        validate_group(self.group_id.as_deref(), self.rank, self.world_size)
    }

    /// The wall clock this identity's timestamps are on.
    pub fn clock_domain(&self) -> String {
        wall_clock_domain(&self.host, self.boot_id.as_deref())
    }

    /// The identity as the reference writes it (`asdict`): all ten keys.
    pub fn to_json(&self) -> Value {
        let text = |v: &Option<String>| v.as_ref().map_or(Value::Null, |s| Value::from(s.clone()));
        let int = |v: Option<i64>| v.map_or(Value::Null, Value::from);
        let mut m = Map::new();
        m.insert("host".into(), Value::from(self.host.clone()));
        m.insert("pid".into(), Value::from(self.pid));
        m.insert(
            "process_start_ns".into(),
            Value::from(self.process_start_ns),
        );
        m.insert("device_uuid".into(), text(&self.device_uuid));
        m.insert("gpu_instance_id".into(), text(&self.gpu_instance_id));
        m.insert("replica_id".into(), text(&self.replica_id));
        m.insert("rank".into(), int(self.rank));
        m.insert("boot_id".into(), text(&self.boot_id));
        m.insert("group_id".into(), text(&self.group_id));
        m.insert("world_size".into(), int(self.world_size));
        Value::Object(m)
    }
}

/// `"{host}/{boot_id}/unix_epoch_ns"`, or `"{host}/unix_epoch_ns"` when the
/// host has no boot ID.
pub fn wall_clock_domain(host: &str, boot_id: Option<&str>) -> String {
    match boot_id {
        Some(boot) if !boot.is_empty() => format!("{host}/{boot}/{WALL_CLOCK}"),
        _ => format!("{host}/{WALL_CLOCK}"),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod tests {
    use super::*;

    /// The identity of the spec's example line (the collector's tests use it too).
    pub(crate) fn identity() -> ServerIdentity {
        ServerIdentity {
            host: "vm".into(),
            pid: 8934,
            process_start_ns: 1_795_960_369_849_999_872,
            device_uuid: None,
            gpu_instance_id: None,
            replica_id: None,
            rank: None,
            boot_id: Some("80956652-4182-4e20-8984-7a99c0a0659e".into()),
            group_id: None,
            world_size: None,
        }
    }

    #[test]
    fn clock_domain_names_the_boot_when_known() {
        assert_eq!(
            identity().clock_domain(),
            "vm/80956652-4182-4e20-8984-7a99c0a0659e/unix_epoch_ns"
        );
        assert_eq!(wall_clock_domain("h", None), "h/unix_epoch_ns");
        assert_eq!(wall_clock_domain("h", Some("")), "h/unix_epoch_ns");
    }

    #[test]
    fn identity_checks_in_reference_order() {
        assert_eq!(identity().validate(), Ok(()));
        let with = |f: &dyn Fn(&mut ServerIdentity)| {
            let mut i = identity();
            f(&mut i);
            i.validate()
        };
        assert_eq!(with(&|i| i.host.clear()), Err(IdentityError::HostPidStart));
        assert_eq!(with(&|i| i.host = "a/b".into()), Err(IdentityError::Slash));
        // `/` is checked before emptiness of the optional fields.
        assert_eq!(
            with(&|i| {
                i.boot_id = Some("x/y".into());
                i.replica_id = Some(String::new());
            }),
            Err(IdentityError::Slash)
        );
        assert_eq!(
            with(&|i| i.replica_id = Some(String::new())),
            Err(IdentityError::EmptyOptional)
        );
        assert_eq!(
            with(&|i| i.gpu_instance_id = Some("MIG-1".into())),
            Err(IdentityError::InstanceWithoutDevice)
        );
        assert_eq!(
            with(&|i| i.rank = Some(-1)),
            Err(IdentityError::NegativeRank)
        );
        assert_eq!(with(&|i| i.rank = Some(3)), Ok(()));
        assert_eq!(
            with(&|i| {
                i.group_id = Some("g".into());
                i.rank = Some(0);
                i.world_size = Some(0);
            }),
            Err(IdentityError::WorldSizeNotPositive)
        );
        assert_eq!(
            with(&|i| {
                i.group_id = Some("g".into());
                i.world_size = Some(2);
            }),
            Err(IdentityError::RankNotBelowWorldSize)
        );
    }

    #[test]
    fn group_rule() {
        assert_eq!(validate_group(None, Some(5), None), Ok(()));
        assert_eq!(
            validate_group(Some(""), Some(0), Some(1)),
            Err(IdentityError::EmptyGroupId)
        );
        assert_eq!(validate_group(Some("g"), Some(1), Some(2)), Ok(()));
    }
}
