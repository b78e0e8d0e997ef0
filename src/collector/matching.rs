//! Whether NVML shows the server on the GPU being sampled (telemetry spec
//! docs/telemetry.md §5.5). NVML numbers GPUs in PCI order while `CUDA_VISIBLE_DEVICES`
//! renumbers them for the server, so an index can name another GPU; these
//! warnings say so before collection starts. They never stop collection.

use std::collections::BTreeSet;

use super::sources::{GpuSource, ProcessSource};

/// What the check concluded (only an observer would act on it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuMatch {
    Confirmed,
    NotSeen,
    Unknown,
}

/// Explains how `pid` relates to the PIDs NVML lists on `device_uuid`:
/// no message when the server itself is listed, else one message.
pub fn describe_gpu_process_match(
    pid: u32,
    device_uuid: &str,
    gpu_pids: Option<&BTreeSet<u32>>,
    descendant_pids: &BTreeSet<u32>,
) -> Vec<String> {
    let Some(gpu_pids) = gpu_pids else {
        return vec![format!(
            "could not list compute processes on {device_uuid}; cannot confirm that PID {pid} uses this GPU"
        )];
    };
    if gpu_pids.contains(&pid) {
        return Vec::new();
    }
    let workers: Vec<u32> = descendant_pids.intersection(gpu_pids).copied().collect();
    if let Some(first) = workers.first() {
        return vec![format!(
            "PID {pid} has no compute context on {device_uuid}, but its child process(es) {} do. \
             GPU memory is device-wide, but RSS is measured for PID {pid} only; pass --pid {first} \
             to measure the GPU worker instead",
            join(&workers)
        )];
    }
    let seen = if gpu_pids.is_empty() {
        "none".to_string()
    } else {
        join(gpu_pids)
    };
    vec![format!(
        "PID {pid} has no compute context on {device_uuid} (NVML reports PIDs: {seen}). \
         If the server uses a different GPU, pass --device-uuid. Inside a container NVML may \
         report host PIDs, so this check can be wrong there"
    )]
}

fn join<'a>(pids: impl IntoIterator<Item = &'a u32>) -> String {
    pids.into_iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Lists the GPU's compute processes and the server's descendants and
/// describes the match. Without a GPU source there is nothing to check.
pub fn check_gpu_process(
    process: &mut dyn ProcessSource,
    gpu: Option<&mut dyn GpuSource>,
) -> (Vec<String>, GpuMatch) {
    let Some(gpu) = gpu else {
        return (Vec::new(), GpuMatch::Unknown);
    };
    let gpu_pids = gpu.compute_pids();
    let descendants = process.descendants();
    let pid = process.pid();
    let warnings =
        describe_gpu_process_match(pid, gpu.device_uuid(), gpu_pids.as_ref(), &descendants);
    let state = match &gpu_pids {
        None => GpuMatch::Unknown,
        Some(pids) if pids.contains(&pid) || !pids.is_disjoint(&descendants) => GpuMatch::Confirmed,
        Some(_) => GpuMatch::NotSeen,
    };
    (warnings, state)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::collector::sources::fake::{FakeGpu, FakeProcess};

    #[test]
    fn messages_match_the_reference() {
        let none = BTreeSet::new();
        assert_eq!(
            describe_gpu_process_match(5, "GPU-a", None, &none),
            vec!["could not list compute processes on GPU-a; cannot confirm that PID 5 uses this GPU"]
        );
        assert!(
            describe_gpu_process_match(5, "GPU-a", Some(&BTreeSet::from([5, 9])), &none).is_empty()
        );
        assert_eq!(
            describe_gpu_process_match(5, "GPU-a", Some(&BTreeSet::from([12, 7, 99])), &BTreeSet::from([12, 7, 8])),
            vec![
                "PID 5 has no compute context on GPU-a, but its child process(es) 7, 12 do. GPU memory is \
                 device-wide, but RSS is measured for PID 5 only; pass --pid 7 to measure the GPU worker instead"
            ]
        );
        assert_eq!(
            describe_gpu_process_match(5, "GPU-a", Some(&BTreeSet::new()), &none),
            vec![
                "PID 5 has no compute context on GPU-a (NVML reports PIDs: none). If the server uses a \
                 different GPU, pass --device-uuid. Inside a container NVML may report host PIDs, so this \
                 check can be wrong there"
            ]
        );
        assert!(
            describe_gpu_process_match(5, "GPU-a", Some(&BTreeSet::from([30, 4])), &none)[0]
                .contains("(NVML reports PIDs: 4, 30)")
        );
    }

    #[test]
    fn check_states() {
        let mut process = FakeProcess::new(5, vec![]);
        assert_eq!(
            check_gpu_process(&mut process, None),
            (vec![], GpuMatch::Unknown)
        );
        let mut gpu = FakeGpu::new("GPU-a", vec![]);
        gpu.compute_pids = Some(BTreeSet::from([6]));
        process.descendants = BTreeSet::from([6]);
        let (w, state) = check_gpu_process(&mut process, Some(&mut gpu));
        assert_eq!((w.len(), state), (1, GpuMatch::Confirmed));
        process.descendants.clear();
        assert_eq!(
            check_gpu_process(&mut process, Some(&mut gpu)).1,
            GpuMatch::NotSeen
        );
        gpu.compute_pids = Some(BTreeSet::from([5]));
        assert_eq!(
            check_gpu_process(&mut process, Some(&mut gpu)),
            (vec![], GpuMatch::Confirmed)
        );
        gpu.compute_pids = None;
        assert_eq!(
            check_gpu_process(&mut process, Some(&mut gpu)).1,
            GpuMatch::Unknown
        );
    }
}
