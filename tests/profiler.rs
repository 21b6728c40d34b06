//! The profiler's event recorder from Rust: op, backward and user-range
//! events, nesting, sequence-number links, shapes, and recording nothing
//! when no profiler runs. The profiler is process-wide, so the tests take
//! turns.

use ferrograd::autograd::{backward, BackwardOptions};
use ferrograd::profiler::{record_function, EventKind, Profiler, ProfilerConfig};
use ferrograd::Tensor;
use parking_lot::Mutex;

static TURN: Mutex<()> = Mutex::new(());

fn leaf(values: &[f32], shape: &[usize]) -> Tensor {
    let t = Tensor::from_slice(values, shape).unwrap();
    t.set_requires_grad(true).unwrap();
    t
}

#[test]
fn ops_backward_nodes_and_ranges_are_recorded_and_linked() {
    let _turn = TURN.lock();
    let a = leaf(&[1.0, 2.0, 3.0], &[3]);
    let b = leaf(&[4.0, 5.0, 6.0], &[3]);
    let prof = Profiler::start(ProfilerConfig::default()).unwrap();
    let loss = {
        let _range = record_function("forward");
        a.mul(&b)
            .unwrap()
            .tanh()
            .unwrap()
            .sum(None, false, None)
            .unwrap()
    };
    backward(&[loss], &[], BackwardOptions::default(), None).unwrap();
    let events = prof.stop();

    let names = |kind: EventKind| -> Vec<&str> {
        events
            .iter()
            .filter(|e| e.kind == kind)
            .map(|e| e.name.as_str())
            .collect()
    };
    assert_eq!(names(EventKind::UserRange), ["forward"]);
    let range = events.iter().find(|e| e.name == "forward").unwrap();
    let inside = |outer: &ferrograd::profiler::Event, e: &ferrograd::profiler::Event| {
        e.thread == outer.thread && outer.start_ns <= e.start_ns && e.end_ns <= outer.end_ns
    };
    let forward_ops: Vec<&str> = events
        .iter()
        .filter(|e| e.kind == EventKind::Op && inside(range, e))
        .map(|e| e.name.as_str())
        .collect();
    assert_eq!(forward_ops, ["aten::mul", "aten::tanh", "aten::sum"]);
    let mut backward_names = names(EventKind::Backward);
    backward_names.sort_unstable();
    assert!(backward_names.contains(&"MulBackward0"));
    assert!(backward_names.contains(&"TanhBackward0"));
    assert!(backward_names.contains(&"SumBackward0"));

    // The forward ops ran one level below the range; every other op ran
    // inside a backward node (the ops of the backward formulas), deeper
    // than it on the same thread.
    for op in events.iter().filter(|e| e.kind == EventKind::Op) {
        assert!(op.start_ns <= op.end_ns);
        if inside(range, op) {
            assert_eq!(op.depth, range.depth + 1);
            continue;
        }
        let node = events
            .iter()
            .filter(|n| n.kind == EventKind::Backward && inside(n, op))
            .max_by_key(|n| n.depth)
            .unwrap_or_else(|| panic!("{} outside every span", op.name));
        assert!(op.depth > node.depth);
    }
    // Each forward op and the backward node it recorded share a sequence
    // number.
    for (op, node) in [
        ("aten::mul", "MulBackward0"),
        ("aten::tanh", "TanhBackward0"),
        ("aten::sum", "SumBackward0"),
    ] {
        let f = events.iter().find(|e| e.name == op).unwrap();
        let b = events.iter().find(|e| e.name == node).unwrap();
        assert!(f.sequence_nr.is_some());
        assert_eq!(f.sequence_nr, b.sequence_nr, "{op} -> {node}");
    }
}

#[test]
fn shapes_are_recorded_only_when_asked() {
    let _turn = TURN.lock();
    let a = Tensor::from_slice(&[1.0f32; 6], &[2, 3]).unwrap();
    let b = Tensor::from_slice(&[1.0f32; 3], &[3]).unwrap();
    let prof = Profiler::start(ProfilerConfig {
        record_shapes: true,
    })
    .unwrap();
    a.add(&b).unwrap();
    let events = prof.stop();
    let add = events.iter().find(|e| e.name == "aten::add").unwrap();
    assert_eq!(add.input_shapes, Some(vec![vec![2, 3], vec![3]]));
    // Without grad nothing is recorded as a node, so no sequence number.
    assert_eq!(add.sequence_nr, None);

    let prof = Profiler::start(ProfilerConfig::default()).unwrap();
    a.add(&b).unwrap();
    let events = prof.stop();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].input_shapes, None);
}

#[test]
fn nothing_is_recorded_without_a_running_profiler() {
    let _turn = TURN.lock();
    let a = Tensor::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
    a.exp().unwrap();
    assert!(record_function("outside").is_none());
    let prof = Profiler::start(ProfilerConfig::default()).unwrap();
    let events = prof.stop();
    assert!(events.is_empty(), "{events:?}");
    // A range open across the stop is not carried into the next run.
    let prof = Profiler::start(ProfilerConfig::default()).unwrap();
    let open = record_function("straddles");
    let first = prof.stop();
    let prof = Profiler::start(ProfilerConfig::default()).unwrap();
    drop(open);
    let second = prof.stop();
    assert!(first.is_empty() && second.is_empty());
}

#[test]
fn one_run_at_a_time_and_events_from_other_threads_are_collected() {
    let _turn = TURN.lock();
    let prof = Profiler::start(ProfilerConfig::default()).unwrap();
    assert!(Profiler::start(ProfilerConfig::default()).is_err());
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                let x = Tensor::from_slice(&[0.5f32; 4], &[4]).unwrap();
                x.sin().unwrap();
            });
        }
    });
    let events = prof.stop();
    let sins: Vec<_> = events.iter().filter(|e| e.name == "aten::sin").collect();
    assert_eq!(sins.len(), 3);
    let mut threads: Vec<u64> = sins.iter().map(|e| e.thread).collect();
    threads.sort_unstable();
    threads.dedup();
    assert_eq!(threads.len(), 3);
}
