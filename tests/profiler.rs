//! The profiler's event recorder from Rust: op, backward and user-range
//! events, nesting, sequence-number links, shapes, and recording nothing
//! when no profiler runs. The profiler is process-wide, so the tests take
//! turns.

use ferrograd::profiler::{record_function, EventKind, Profiler, ProfilerConfig};
use ferrograd::{DType, Tensor};
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
    loss.backward().unwrap();
    let events = prof.stop().events;

    let names = |kind: EventKind| -> Vec<&str> {
        events
            .iter()
            .filter(|e| e.kind == kind)
            .map(|e| &*e.name)
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
        .map(|e| &*e.name)
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
        ..Default::default()
    })
    .unwrap();
    a.add(&b).unwrap();
    let events = prof.stop().events;
    let add = events.iter().find(|e| e.name == "aten::add").unwrap();
    assert_eq!(add.input_shapes(), Some(vec![vec![2, 3], vec![3]]));
    let dtypes: Vec<_> = add.inputs.iter().flatten().map(|i| i.dtype).collect();
    assert_eq!(dtypes, [Some(DType::Float32), Some(DType::Float32)]);
    // Without grad nothing is recorded as a node, so no sequence number.
    assert_eq!(add.sequence_nr, None);

    let prof = Profiler::start(ProfilerConfig::default()).unwrap();
    a.add(&b).unwrap();
    let events = prof.stop().events;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].inputs, None);
}

#[test]
fn nothing_is_recorded_without_a_running_profiler() {
    let _turn = TURN.lock();
    let a = Tensor::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
    a.exp().unwrap();
    assert!(record_function("outside").is_none());
    let prof = Profiler::start(ProfilerConfig::default()).unwrap();
    let events = prof.stop().events;
    assert!(events.is_empty(), "{events:?}");
    // A range open across the stop is not carried into the next run.
    let prof = Profiler::start(ProfilerConfig::default()).unwrap();
    let open = record_function("straddles");
    let first = prof.stop().events;
    let prof = Profiler::start(ProfilerConfig::default()).unwrap();
    drop(open);
    let second = prof.stop().events;
    assert!(first.is_empty() && second.is_empty());
}

#[test]
fn one_run_at_a_time_and_other_threads_record_only_inside_its_scope() {
    let _turn = TURN.lock();
    let prof = Profiler::start(ProfilerConfig::default()).unwrap();
    assert!(Profiler::start(ProfilerConfig::default()).is_err());
    let scope = prof.scope();
    std::thread::scope(|s| {
        for joined in [true, true, true, false] {
            s.spawn(move || {
                let _guard = joined.then(|| scope.enter());
                ferrograd::profiler::set_thread_label("worker");
                let x = Tensor::from_slice(&[0.5f32; 4], &[4]).unwrap();
                x.sin().unwrap();
            });
        }
    });
    let rec = prof.stop();
    let events = rec.events;
    let sins: Vec<_> = events.iter().filter(|e| e.name == "aten::sin").collect();
    assert_eq!(sins.len(), 3);
    let mut threads: Vec<u64> = sins.iter().map(|e| e.thread).collect();
    threads.sort_unstable();
    threads.dedup();
    assert_eq!(threads.len(), 3);
    // A labelled thread is listed under its label.
    assert!(rec.threads.iter().any(|(_, name)| name == "worker"));
}

#[test]
fn backward_on_pool_threads_is_recorded_for_the_calling_thread() {
    let _turn = TURN.lock();
    // Wide enough for the engine to hand branches to its pool.
    let x = leaf(&vec![0.25f32; 64 * 64], &[64, 64]);
    let branches = 16;
    let prof = Profiler::start(ProfilerConfig::default()).unwrap();
    let mut total = None::<Tensor>;
    for _ in 0..branches {
        let b = x
            .mm(&x)
            .unwrap()
            .tanh()
            .unwrap()
            .sum(None, false, None)
            .unwrap();
        total = Some(match total {
            None => b,
            Some(t) => t.add(&b).unwrap(),
        });
    }
    (total.unwrap()).backward().unwrap();
    let rec = prof.stop();
    let events = &rec.events;
    let count = |name: &str| {
        events
            .iter()
            .filter(|e| e.kind == EventKind::Backward && e.name == name)
            .count()
    };
    assert_eq!(count("MmBackward0"), branches);
    assert_eq!(count("TanhBackward0"), branches);
    let evaluates = events
        .iter()
        .filter(|e| e.label() == "autograd::engine::evaluate_function: MmBackward0")
        .count();
    assert_eq!(evaluates, branches);
    // Each node event sits inside its evaluate event, on the same thread,
    // with the same sequence number, and knows its forward op's thread.
    let nesting = ferrograd::profiler::nest(events);
    let forward_thread = events.iter().find(|e| e.name == "aten::mm").unwrap().thread;
    for (i, e) in events.iter().enumerate() {
        if e.kind != EventKind::Backward {
            continue;
        }
        let p = &events[nesting[i].parent.expect("node inside evaluate")];
        assert_eq!(p.kind, EventKind::Evaluate);
        assert_eq!(
            p.label(),
            format!("autograd::engine::evaluate_function: {}", e.name)
        );
        assert_eq!(p.sequence_nr, e.sequence_nr);
        if e.name != "torch::autograd::AccumulateGrad" {
            assert_eq!(nesting[i].fwd_thread, Some(forward_thread), "{}", e.name);
        }
    }
    assert!(
        events
            .iter()
            .any(|e| e.kind == EventKind::Backward && e.thread != forward_thread),
        "no node ran on a pool thread"
    );
    // Every recorded thread is named.
    let mut threads: Vec<u64> = events.iter().map(|e| e.thread).collect();
    threads.dedup();
    assert_eq!(rec.threads.iter().map(|t| t.0).collect::<Vec<_>>(), threads);
}

#[test]
fn memory_records_attribute_allocations_to_the_op_that_made_them() {
    let _turn = TURN.lock();
    let a = Tensor::from_slice(&[1.0f32; 1000], &[1000]).unwrap();
    let prof = Profiler::start(ProfilerConfig {
        profile_memory: true,
        ..Default::default()
    })
    .unwrap();
    let b = a.exp().unwrap();
    drop(b);
    let events = prof.stop().events;
    let nesting = ferrograd::profiler::nest(&events);
    let exp = events.iter().position(|e| e.name == "aten::exp").unwrap();
    assert_eq!(nesting[exp].memory, 4000);
    assert_eq!(nesting[exp].self_memory, 4000);
    let frees: Vec<_> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| e.kind == EventKind::Memory && e.bytes < 0)
        .collect();
    assert_eq!(frees.len(), 1);
    let (i, free) = frees[0];
    assert_eq!(free.bytes, -4000);
    assert_eq!(nesting[i].parent, None);
    assert_eq!(free.total_allocated, 0);

    // Without profile_memory nothing is recorded about memory.
    let prof = Profiler::start(ProfilerConfig::default()).unwrap();
    drop(a.exp().unwrap());
    let events = prof.stop().events;
    assert!(events.iter().all(|e| e.kind != EventKind::Memory));
}

#[test]
fn event_times_are_nanoseconds_of_the_monotonic_clock() {
    let _turn = TURN.lock();
    let prof = Profiler::start(ProfilerConfig::default()).unwrap();
    let outer = std::time::Instant::now();
    {
        let _range = record_function("sleep");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let wall = outer.elapsed().as_nanos() as u64;
    let rec = prof.stop();
    let d = rec.events[0].duration_ns();
    // Time-stamp-counter ticks are converted with a rate measured against
    // the monotonic clock over the run, so a duration may miss the sleep
    // and the wall time around it by that estimate's error (a few per
    // mille on a short run); not by 2%.
    assert!(
        (19_600_000..=wall + wall / 50).contains(&d),
        "{d} ns for a 20 ms sleep ({wall} ns around it)"
    );
    assert!(rec.start_ns <= rec.events[0].start_ns);
}
