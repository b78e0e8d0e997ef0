//! Test doubles for the collector's sources and clock: a scripted process,
//! a scripted GPU, an NVML backend whose return codes tests set, and a clock
//! that jumps instead of sleeping.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeSet, VecDeque};
use std::rc::Rc;

use super::nvml::{MemoryV2, NvmlBackend};
use super::{GpuReading, GpuSource, ProcessReading, ProcessSource};
use crate::collector::sampler::{Clock, StopFlag};

/// Shared fake time, in monotonic seconds, so sources can "take time".
pub type FakeTime = Rc<Cell<f64>>;

/// A clock that never sleeps: waiting jumps to the wake time, and a stop
/// can be scheduled to arrive at a given instant (a SIGTERM, say).
pub struct FakeClock {
    pub now: FakeTime,
    pub wall_epoch_ns: i64,
    pub stop_at: Option<f64>,
    /// Every wake time the loop asked to wait until.
    pub waits: Vec<f64>,
}

impl FakeClock {
    pub fn new() -> Self {
        Self {
            now: Rc::new(Cell::new(1000.0)),
            wall_epoch_ns: 1_700_000_000_000_000_000,
            stop_at: None,
            waits: Vec::new(),
        }
    }
}

impl Default for FakeClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for FakeClock {
    fn monotonic(&mut self) -> f64 {
        self.now.get()
    }

    fn wall_ns(&mut self) -> i64 {
        self.wall_epoch_ns + (self.now.get() * 1e9) as i64
    }

    fn wait_until(&mut self, wake: f64, stop: &StopFlag) -> bool {
        self.waits.push(wake);
        match self.stop_at {
            Some(at) if at <= wake.max(self.now.get()) => {
                self.now.set(self.now.get().max(at));
                self.stop_at = None;
                stop.set();
            }
            _ => self.now.set(self.now.get().max(wake)),
        }
        stop.is_set()
    }
}

/// A process that answers from a script, then repeats the last answer.
pub struct FakeProcess {
    pub pid: u32,
    pub start_ns: u64,
    pub readings: VecDeque<ProcessReading>,
    pub last: ProcessReading,
    pub descendants: BTreeSet<u32>,
    /// Seconds each read takes, taken from the front; 0 when empty.
    pub costs: VecDeque<f64>,
    pub time: Option<FakeTime>,
    pub reads: usize,
}

impl FakeProcess {
    pub fn new(pid: u32, readings: Vec<ProcessReading>) -> Self {
        Self {
            pid,
            start_ns: 1_795_960_369_849_999_872,
            readings: readings.into(),
            last: ProcessReading::valid(4096),
            descendants: BTreeSet::new(),
            costs: VecDeque::new(),
            time: None,
            reads: 0,
        }
    }
}

impl ProcessSource for FakeProcess {
    fn pid(&self) -> u32 {
        self.pid
    }

    fn start_ns(&self) -> Result<u64, String> {
        Ok(self.start_ns)
    }

    fn read_rss(&mut self) -> ProcessReading {
        self.reads += 1;
        if let (Some(time), Some(cost)) = (&self.time, self.costs.pop_front()) {
            time.set(time.get() + cost);
        }
        if let Some(next) = self.readings.pop_front() {
            self.last = next;
        }
        self.last.clone()
    }

    fn descendants(&mut self) -> BTreeSet<u32> {
        self.descendants.clone()
    }
}

/// A GPU source that answers from a script, then repeats the last answer.
pub struct FakeGpu {
    pub device_uuid: String,
    pub gpu_instance_id: Option<String>,
    pub readings: VecDeque<GpuReading>,
    pub last: GpuReading,
    pub compute_pids: Option<BTreeSet<u32>>,
    pub reads: usize,
}

impl FakeGpu {
    pub fn new(device_uuid: &str, readings: Vec<GpuReading>) -> Self {
        Self {
            device_uuid: device_uuid.into(),
            gpu_instance_id: None,
            readings: readings.into(),
            last: GpuReading::valid(100, 10),
            compute_pids: Some(BTreeSet::new()),
            reads: 0,
        }
    }
}

impl GpuSource for FakeGpu {
    fn device_uuid(&self) -> &str {
        &self.device_uuid
    }

    fn gpu_instance_id(&self) -> Option<&str> {
        self.gpu_instance_id.as_deref()
    }

    fn read(&mut self) -> GpuReading {
        self.reads += 1;
        if let Some(next) = self.readings.pop_front() {
            self.last = next;
        }
        self.last.clone()
    }

    fn compute_pids(&mut self) -> Option<BTreeSet<u32>> {
        self.compute_pids.clone()
    }
}

/// Which handle a fake NVML call is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FakeHandle {
    Watched,
    Parent,
}

/// An NVML whose answers (and return codes) the test sets.
pub struct FakeNvml {
    lookup: RefCell<Result<(), u32>>,
    uuid: RefCell<Result<String, u32>>,
    parent_lookup: RefCell<Result<(), u32>>,
    parent_uuid: RefCell<Result<String, u32>>,
    memory: RefCell<Result<MemoryV2, u32>>,
    last_index: Cell<Option<u32>>,
}

impl FakeNvml {
    pub fn gpu(uuid: &str) -> Self {
        Self {
            lookup: RefCell::new(Ok(())),
            uuid: RefCell::new(Ok(uuid.into())),
            parent_lookup: RefCell::new(Err(2)),
            parent_uuid: RefCell::new(Err(2)),
            memory: RefCell::new(Ok(MemoryV2 {
                used: 1,
                reserved: 1,
            })),
            last_index: Cell::new(None),
        }
    }

    pub fn mig(mig_uuid: &str, parent_uuid: &str) -> Self {
        let nvml = Self::gpu(mig_uuid);
        *nvml.parent_lookup.borrow_mut() = Ok(());
        *nvml.parent_uuid.borrow_mut() = Ok(parent_uuid.into());
        nvml
    }

    pub fn set_lookup(&self, r: Result<(), u32>) {
        *self.lookup.borrow_mut() = r;
    }
    pub fn set_uuid(&self, r: Result<String, u32>) {
        *self.uuid.borrow_mut() = r;
    }
    pub fn set_parent_lookup(&self, r: Result<(), u32>) {
        *self.parent_lookup.borrow_mut() = r;
    }
    pub fn set_parent_uuid(&self, r: Result<String, u32>) {
        *self.parent_uuid.borrow_mut() = r;
    }
    pub fn set_memory(&self, r: Result<MemoryV2, u32>) {
        *self.memory.borrow_mut() = r;
    }
    pub fn last_index(&self) -> Option<u32> {
        self.last_index.get()
    }
}

impl NvmlBackend for &FakeNvml {
    type Device = FakeHandle;

    fn device_by_index(&self, index: u32) -> Result<FakeHandle, u32> {
        self.last_index.set(Some(index));
        self.lookup.borrow().map(|()| FakeHandle::Watched)
    }

    fn device_by_uuid(&self, _uuid: &str) -> Result<FakeHandle, u32> {
        self.lookup.borrow().map(|()| FakeHandle::Watched)
    }

    fn uuid(&self, device: &FakeHandle) -> Result<String, u32> {
        match device {
            FakeHandle::Watched => self.uuid.borrow().clone(),
            FakeHandle::Parent => self.parent_uuid.borrow().clone(),
        }
    }

    fn mig_parent(&self, _device: &FakeHandle) -> Result<FakeHandle, u32> {
        self.parent_lookup.borrow().map(|()| FakeHandle::Parent)
    }

    fn memory_v2(&self, _device: &FakeHandle) -> Result<MemoryV2, u32> {
        *self.memory.borrow()
    }

    fn compute_pids(&self, _device: &FakeHandle) -> Option<BTreeSet<u32>> {
        Some(BTreeSet::new())
    }
}
