//! `ferrograd::compile`: captured programs replayed against eager
//! execution of the same closure (bitwise: the same kernels run).

use ferrograd::compile::{capture, capturing, Captured, Program};
use ferrograd::{DType, Result, Tensor};

fn vec_f64(t: &Tensor) -> Vec<f64> {
    t.to_vec::<f64>()
}

fn randn(shape: &[usize], seed: u64) -> Tensor {
    ferrograd::random::manual_seed(seed);
    Tensor::randn(shape, DType::Float64, None).unwrap()
}

fn program(c: Captured) -> Program {
    match c {
        Captured::Program(p) => p,
        Captured::Broken(why) => panic!("capture broken: {why}"),
    }
}

#[test]
fn replay_computes_what_eager_computes_bitwise() {
    let w = randn(&[4, 3], 1);
    let f = |xs: &[Tensor]| -> Result<Vec<Tensor>> {
        let h = xs[0].matmul(&w)?.tanh()?;
        let s = h.mul(&xs[0].sum(Some(&[1]), true, None)?)?;
        Ok(vec![s.exp()?.sum(None, false, None)?, h])
    };
    let x = randn(&[5, 4], 2);
    let (eager, captured) = capture(std::slice::from_ref(&x), f).unwrap();
    let p = program(captured);
    assert!(p.operations().contains(&"mm"), "{:?}", p.operations());
    assert_eq!(p.constants().len(), 1);
    // Same inputs: same bits; new inputs: what eager gives on them.
    let again = p.replay(&[x]).unwrap();
    for (a, b) in again.iter().zip(&eager) {
        assert_eq!(vec_f64(a), vec_f64(b));
    }
    let y = randn(&[5, 4], 3);
    let want = f(std::slice::from_ref(&y)).unwrap();
    let got = p.replay(&[y]).unwrap();
    for (a, b) in got.iter().zip(&want) {
        assert_eq!(vec_f64(a), vec_f64(b));
    }
}

#[test]
fn replay_records_nodes_so_backward_matches_eager() {
    let w = randn(&[3, 3], 4).requires_grad_(true).unwrap();
    let f = |xs: &[Tensor]| -> Result<Vec<Tensor>> {
        Ok(vec![xs[0]
            .matmul(&w)?
            .sigmoid()?
            .mul(&xs[0])?
            .sum(None, false, None)?])
    };
    let x = randn(&[2, 3], 5).requires_grad_(true).unwrap();
    let (_, captured) = capture(&[x], f).unwrap();
    let p = program(captured);
    let x2 = randn(&[2, 3], 6).requires_grad_(true).unwrap();
    p.replay(std::slice::from_ref(&x2)).unwrap()[0]
        .backward()
        .unwrap();
    let (gx, gw) = (x2.grad().unwrap(), w.grad().unwrap());
    w.set_grad(None).unwrap();
    let x3 = x2.detach().requires_grad_(true).unwrap();
    f(std::slice::from_ref(&x3)).unwrap()[0].backward().unwrap();
    assert_eq!(vec_f64(&gx), vec_f64(&x3.grad().unwrap()));
    assert_eq!(vec_f64(&gw), vec_f64(&w.grad().unwrap()));
}

#[test]
fn constants_are_read_by_reference() {
    let b = randn(&[3], 7);
    let (_, captured) = capture(&[randn(&[3], 8)], |xs| Ok(vec![xs[0].add(&b)?])).unwrap();
    let p = program(captured);
    b.mul_(&Tensor::scalar_tensor(2.0, DType::Float64)).unwrap();
    let x = randn(&[3], 9);
    assert_eq!(
        vec_f64(&p.replay(std::slice::from_ref(&x)).unwrap()[0]),
        vec_f64(&x.add(&b).unwrap())
    );
}

#[test]
fn what_cannot_be_repeated_breaks_the_capture() {
    let x = randn(&[3], 10);
    // A tensor made by a factory function during the capture.
    let (_, c) = capture(std::slice::from_ref(&x), |xs| {
        let z = Tensor::ones(&[3], DType::Float64);
        Ok(vec![xs[0].add(&z)?])
    })
    .unwrap();
    assert!(matches!(c, Captured::Broken(ref why) if why.contains("made during the capture")));
    // A value read into the host.
    let (_, c) = capture(std::slice::from_ref(&x), |xs| {
        let s = xs[0].sum(None, false, None)?;
        let k = if s.item()?.to_f64() > 0.0 { 2.0 } else { 3.0 };
        Ok(vec![xs[0].mul(&Tensor::scalar_tensor(k, DType::Float64))?])
    })
    .unwrap();
    assert!(matches!(c, Captured::Broken(ref why) if why.contains("read into the host")));
    // autograd::grad inside the closure (its results are new tensors the
    // program could not name).
    let w = randn(&[3], 11).requires_grad_(true).unwrap();
    let (_, c) = capture(std::slice::from_ref(&x), |xs| {
        let l = xs[0].mul(&w)?.sum(None, false, None)?;
        ferrograd::autograd::grad(&[&l], &[&w])
    })
    .unwrap();
    assert!(matches!(c, Captured::Broken(ref why) if why.contains("backward")));
    // Nothing stays recording after a capture, broken or not.
    assert!(!capturing());
}

/// One SGD step of a linear model: `.grad` reset, forward, backward, the
/// gradients read, the update.
fn sgd_step(w: &Tensor, xs: &[Tensor]) -> Result<Vec<Tensor>> {
    use ferrograd::optim::{step, Sgd, Update};
    w.set_grad(None)?;
    let h = xs[0].matmul(w)?.tanh()?;
    let loss = h.mul(&h)?.sum(None, false, None)?;
    loss.backward()?;
    let g = w.grad().expect("backward gives w a gradient");
    let rule = Update::Sgd(Sgd {
        lr: 0.1,
        momentum: 0.0,
        dampening: 0.0,
        weight_decay: 0.0,
        nesterov: false,
        maximize: false,
    });
    let _no_grad = ferrograd::autograd::no_grad();
    step(&rule, std::slice::from_ref(w), &[g], &[], &[])?;
    Ok(vec![loss])
}

#[test]
fn a_training_step_replays_backward_and_the_update() {
    let w = randn(&[3, 2], 12).requires_grad_(true).unwrap();
    let w_eager = Tensor::from_slice(&vec_f64(&w), &[3, 2])
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let x = randn(&[4, 3], 13);
    let (first, c) = capture(std::slice::from_ref(&x), |xs| sgd_step(&w, xs)).unwrap();
    let p = program(c);
    let ops = p.operations();
    assert!(
        ops.contains(&"backward_recorded") && ops.contains(&"optimizer_step"),
        "{ops:?}"
    );
    let want = sgd_step(&w_eager, std::slice::from_ref(&x)).unwrap();
    assert_eq!(vec_f64(&first[0]), vec_f64(&want[0]));
    for i in 0..3 {
        let y = randn(&[4, 3], 14 + i);
        assert!(p.holds(std::slice::from_ref(&y)));
        let got = p.replay(std::slice::from_ref(&y)).unwrap();
        let want = sgd_step(&w_eager, std::slice::from_ref(&y)).unwrap();
        assert_eq!(vec_f64(&got[0]), vec_f64(&want[0]));
        assert_eq!(vec_f64(&w), vec_f64(&w_eager));
        assert_eq!(
            vec_f64(&w.grad().unwrap()),
            vec_f64(&w_eager.grad().unwrap())
        );
    }
}

#[test]
fn a_grad_read_before_backward_is_checked_before_a_replay() {
    let w = randn(&[3], 20).requires_grad_(true).unwrap();
    let f = |xs: &[Tensor]| -> Result<Vec<Tensor>> {
        Ok(vec![match w.grad() {
            Some(g) => xs[0].add(&g)?,
            None => xs[0].neg()?,
        }])
    };
    let x = randn(&[3], 21);
    let (_, c) = capture(std::slice::from_ref(&x), f).unwrap();
    let p = program(c);
    assert!(p.holds(std::slice::from_ref(&x)));
    w.set_grad(Some(randn(&[3], 22))).unwrap();
    // The closure would now take the other branch: the program says so
    // and refuses to run.
    assert!(!p.holds(std::slice::from_ref(&x)));
    assert!(p.replay(std::slice::from_ref(&x)).is_err());
}

#[test]
fn a_bool_read_becomes_a_value_guard() {
    let f = |xs: &[Tensor]| -> Result<Vec<Tensor>> {
        let s = xs[0].sum(None, false, None)?;
        let positive = s.gt(&Tensor::scalar(0.0))?.item()?.to_bool();
        Ok(vec![if positive { xs[0].exp()? } else { xs[0].neg()? }])
    };
    let pos = Tensor::from_slice(&[1.0f64, 2.0], &[2]).unwrap();
    let (_, c) = capture(std::slice::from_ref(&pos), f).unwrap();
    let p = program(c);
    assert!(
        p.operations().contains(&"value_guard"),
        "{:?}",
        p.operations()
    );
    // The same course: the eager values; the other: no replay.
    let pos2 = Tensor::from_slice(&[0.5f64, -0.25], &[2]).unwrap();
    let got = p.try_replay(std::slice::from_ref(&pos2)).unwrap().unwrap();
    assert_eq!(vec_f64(&got[0]), vec_f64(&f(&[pos2]).unwrap()[0]));
    let neg = Tensor::from_slice(&[-1.0f64, 0.5], &[2]).unwrap();
    assert!(p.try_replay(std::slice::from_ref(&neg)).unwrap().is_none());
    assert!(p.replay(&[neg]).is_err());
}

#[test]
fn a_storage_offset_read_becomes_a_value_guard() {
    // Windows made at the argument's own offset, as `unfold` makes them:
    // a view of the same storage further along must not replay them.
    let f = |xs: &[Tensor]| -> Result<Vec<Tensor>> {
        let at = xs[0].storage_offset();
        Ok(vec![xs[0].as_strided(&[2, 2], &[1, 1], Some(at))?])
    };
    let base = Tensor::from_slice(&[0.0f64, 1.0, 2.0, 3.0, 4.0, 5.0], &[6]).unwrap();
    let (_, c) = capture(&[base.narrow(0, 1, 4).unwrap()], f).unwrap();
    let p = program(c);
    assert!(
        p.operations().contains(&"value_guard"),
        "{:?}",
        p.operations()
    );
    let same = base.narrow(0, 1, 4).unwrap();
    let got = p.try_replay(std::slice::from_ref(&same)).unwrap().unwrap();
    assert_eq!(vec_f64(&got[0]), vec![1.0, 2.0, 2.0, 3.0]);
    let later = base.narrow(0, 2, 4).unwrap();
    assert!(p.try_replay(&[later]).unwrap().is_none());
}

#[test]
fn in_place_operations_on_inputs_replay_in_order() {
    let f = |xs: &[Tensor]| -> Result<Vec<Tensor>> {
        xs[0].add_(&xs[1])?;
        xs[0].tanh_()?;
        Ok(vec![xs[0].add(&xs[1])?])
    };
    let (a, b) = (randn(&[4], 12), randn(&[4], 13));
    let (_, c) = capture(&[a, b], f).unwrap();
    let p = program(c);
    let (a2, b2) = (randn(&[4], 14), randn(&[4], 15));
    let (a3, b3) = (a2.copy(), b2.copy());
    let got = p.replay(&[a2.clone(), b2]).unwrap();
    let want = f(&[a3.clone(), b3]).unwrap();
    assert_eq!(vec_f64(&got[0]), vec_f64(&want[0]));
    assert_eq!(vec_f64(&a2), vec_f64(&a3));
}

#[test]
fn grad_mode_of_each_operation_is_replayed() {
    let w = randn(&[3], 16).requires_grad_(true).unwrap();
    let f = |xs: &[Tensor]| -> Result<Vec<Tensor>> {
        let frozen = {
            let _g = ferrograd::autograd::no_grad();
            xs[0].mul(&w)?
        };
        Ok(vec![frozen, xs[0].mul(&w)?])
    };
    let (_, c) = capture(&[randn(&[3], 17)], f).unwrap();
    let out = program(c).replay(&[randn(&[3], 18)]).unwrap();
    assert!(!out[0].requires_grad());
    assert!(out[1].requires_grad());
}

#[test]
fn hand_written_operations_and_factories_are_recorded() {
    let f = |xs: &[Tensor]| -> Result<Vec<Tensor>> {
        let m = xs[0].gt(&Tensor::scalar(0.0))?;
        let z = Tensor::full_of(xs[0].shape(), ferrograd::Scalar::Float(0.5), DType::Float64)?;
        let y = xs[0].mul(&m.to_dtype(DType::Float64))?.add(&z)?;
        y.mul_(&xs[0])?;
        Ok(vec![y.detached()?])
    };
    let (_, c) = capture(&[randn(&[6], 20)], f).unwrap();
    let p = program(c);
    for op in ["gt", "full_of", "mul_", "detached"] {
        assert!(
            p.operations().contains(&op),
            "{op} not in {:?}",
            p.operations()
        );
    }
    let x = randn(&[6], 21);
    assert_eq!(
        vec_f64(&p.replay(std::slice::from_ref(&x)).unwrap()[0]),
        vec_f64(&f(&[x]).unwrap()[0])
    );
}

fn chain(xs: &[Tensor]) -> Result<Vec<Tensor>> {
    let (x, c) = (&xs[0], &xs[1]);
    let mut y = x.clone();
    for _ in 0..6 {
        y = y
            .mul(c)?
            .add(&Tensor::scalar(0.5))?
            .tanh()?
            .sub(c)?
            .sigmoid()?;
    }
    let z = y.div(&c.exp()?)?.neg()?.add(&x.sin()?)?.mul(&x.cos()?)?;
    Ok(vec![z.log()?.sum(None, false, None)?, z])
}

fn close(a: &[f64], b: &[f64], tol: f64) {
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= tol * (1.0 + y.abs()), "{x} vs {y}");
    }
}

#[test]
fn fused_programs_compute_eager_values_and_close_gradients() {
    for dt in [DType::Float64, DType::Float32] {
        for n in [7usize, 5000, 70_000] {
            let mk = |seed| -> Tensor {
                ferrograd::random::manual_seed(seed);
                Tensor::rand(&[n], dt, None)
                    .unwrap()
                    .add(&Tensor::scalar(1.5))
                    .unwrap()
            };
            let (x, c) = (
                mk(30).requires_grad_(true).unwrap(),
                mk(31).requires_grad_(true).unwrap(),
            );
            let (_, cap) = capture(&[x.clone(), c.clone()], chain).unwrap();
            let mut p = program(cap);
            let before = p.operations().len();
            p.fuse();
            assert!(p.operations().contains(&"fused_elementwise"));
            assert!(p.operations().len() < before / 4, "{:?}", p.operations());
            let (x2, c2) = (
                mk(32).requires_grad_(true).unwrap(),
                mk(33).requires_grad_(true).unwrap(),
            );
            let got = p.replay(&[x2.clone(), c2.clone()]).unwrap();
            let (x3, c3) = (
                x2.detach().requires_grad_(true).unwrap(),
                c2.detach().requires_grad_(true).unwrap(),
            );
            let want = chain(&[x3.clone(), c3.clone()]).unwrap();
            // Elementwise values: the same functions, the same bits.
            assert_eq!(vec_f64(&got[1]), vec_f64(&want[1]));
            got[0].backward().unwrap();
            want[0].backward().unwrap();
            let tol = if dt == DType::Float32 { 1e-4 } else { 1e-10 };
            close(
                &vec_f64(&x2.grad().unwrap()),
                &vec_f64(&x3.grad().unwrap()),
                tol,
            );
            close(
                &vec_f64(&c2.grad().unwrap()),
                &vec_f64(&c3.grad().unwrap()),
                tol,
            );
        }
    }
}

#[test]
fn fused_groups_take_second_derivatives_and_fall_back_on_other_layouts() {
    let f = |xs: &[Tensor]| -> Result<Vec<Tensor>> {
        Ok(vec![xs[0].mul(&xs[0])?.tanh()?.mul(&xs[1])?.exp()?])
    };
    let x = randn(&[4, 3], 40).requires_grad_(true).unwrap();
    let w = randn(&[4, 3], 41);
    let (_, cap) = capture(&[x.clone(), w.clone()], f).unwrap();
    let mut p = program(cap);
    p.fuse();
    assert_eq!(p.operations(), vec!["fused_elementwise"]);
    // Second derivative through the fused node against the eager graph.
    let gg = |y: &Tensor, x: &Tensor| -> Vec<f64> {
        let opts = ferrograd::autograd::GradOptions::new().create_graph(true);
        let s = y.sum(None, false, None).unwrap();
        let g = ferrograd::autograd::grad_with(&[s], std::slice::from_ref(x), &opts).unwrap();
        let h = ferrograd::autograd::grad(
            &[g[0].sum(None, false, None).unwrap()],
            std::slice::from_ref(x),
        )
        .unwrap();
        vec_f64(&h[0])
    };
    let fused = gg(&p.replay(&[x.clone(), w.clone()]).unwrap()[0], &x);
    let eager = gg(&f(&[x.clone(), w.clone()]).unwrap()[0], &x);
    close(&fused, &eager, 1e-10);
    // A transposed operand: the original operations run, same bits.
    let xt = randn(&[3, 4], 42).t().unwrap();
    let wt = randn(&[3, 4], 43).t().unwrap();
    assert_eq!(
        vec_f64(&p.replay(&[xt.clone(), wt.clone()]).unwrap()[0]),
        vec_f64(&f(&[xt, wt]).unwrap()[0])
    );
}

fn adam_rule() -> ferrograd::optim::Update {
    ferrograd::optim::Update::Adam(ferrograd::optim::Adam {
        lr: 0.05,
        beta1: 0.9,
        beta2: 0.99,
        eps: 1e-8,
        weight_decay: 0.0,
        decoupled: false,
        amsgrad: false,
        maximize: false,
    })
}

/// One Adam step of a linear model, its step count kept in `count`.
fn adam_step(
    w: &Tensor,
    m: &Tensor,
    v: &Tensor,
    count: &Tensor,
    xs: &[Tensor],
) -> Result<Vec<Tensor>> {
    w.set_grad(None)?;
    let loss = xs[0].matmul(w)?.tanh()?.sum(None, false, None)?;
    loss.backward()?;
    let g = w.grad().expect("backward gives w a gradient");
    let _no_grad = ferrograd::autograd::no_grad();
    let states = [m.clone(), v.clone()];
    let states: Vec<&[Tensor]> = states.iter().map(std::slice::from_ref).collect();
    let counts = std::slice::from_ref(count);
    ferrograd::optim::step_counted(
        &adam_rule(),
        std::slice::from_ref(w),
        &[g],
        &states,
        counts,
        &[],
    )?;
    Ok(vec![loss])
}

#[test]
fn a_counted_update_replays_with_the_current_step_count() {
    let fresh = |seed| {
        let w = randn(&[3, 2], seed).requires_grad_(true).unwrap();
        let zeros = || Tensor::zeros(&[3, 2], DType::Float64);
        (
            w,
            zeros(),
            zeros(),
            Tensor::scalar_tensor(0.0, DType::Float32),
        )
    };
    let (w, m, v, count) = fresh(21);
    let (we, me, ve, ce) = fresh(21);
    let x = randn(&[4, 3], 22);
    let (_, c) = capture(std::slice::from_ref(&x), |xs| {
        adam_step(&w, &m, &v, &count, xs)
    })
    .unwrap();
    let p = program(c);
    assert!(
        p.operations().contains(&"optimizer_step_counted"),
        "{:?}",
        p.operations()
    );
    adam_step(&we, &me, &ve, &ce, std::slice::from_ref(&x)).unwrap();
    for i in 0..4 {
        let y = randn(&[4, 3], 23 + i);
        p.replay(std::slice::from_ref(&y)).unwrap();
        adam_step(&we, &me, &ve, &ce, std::slice::from_ref(&y)).unwrap();
        // The bias corrections use the count of each step: the parameters
        // agree bitwise only if the replay counted on.
        assert_eq!(vec_f64(&w), vec_f64(&we));
        assert_eq!(vec_f64(&v), vec_f64(&ve));
        assert_eq!(vec_f64(&count), vec![(i + 2) as f64]);
    }
    // A step that fails its checks changes nothing, the counts included.
    let rule = adam_rule();
    let wrong = Tensor::zeros(&[2], DType::Float64);
    let states = [m.clone(), v.clone()];
    let states: Vec<&[Tensor]> = states.iter().map(std::slice::from_ref).collect();
    let before = (vec_f64(&w), vec_f64(&count));
    let r = ferrograd::optim::step_counted(
        &rule,
        std::slice::from_ref(&w),
        &[wrong],
        &states,
        std::slice::from_ref(&count),
        &[],
    );
    assert!(r.is_err());
    assert_eq!((vec_f64(&w), vec_f64(&count)), before);
}

// Bytes of tensor storage alive on this thread, and the most since the
// last reset (told by the storage layer's memory hook).
thread_local! {
    static LIVE: std::cell::Cell<i64> = const { std::cell::Cell::new(0) };
    static PEAK: std::cell::Cell<i64> = const { std::cell::Cell::new(0) };
}

fn count_memory(bytes: i64, _addr: usize) {
    LIVE.with(|l| {
        l.set(l.get() + bytes);
        PEAK.with(|p| p.set(p.get().max(l.get())));
    });
}

/// The most storage `f` holds at once beyond what was alive before it.
fn peak_bytes<R>(f: impl FnOnce() -> R) -> (R, i64) {
    assert!(ferrograd::tensor::set_memory_hook(count_memory));
    let start = LIVE.with(|l| l.get());
    PEAK.with(|p| p.set(start));
    let r = f();
    (r, PEAK.with(|p| p.get()) - start)
}

#[test]
fn replay_lets_go_of_values_no_later_row_reads() {
    // Eight row kernels in a chain over 4 MiB each: eager drops each
    // intermediate as the next is made; so does a replay.
    let f = |xs: &[Tensor]| -> Result<Vec<Tensor>> {
        let mut y = xs[0].clone();
        for _ in 0..8 {
            y = y.softmax(-1, None)?.cumsum(-1, None)?;
        }
        // A view of an intermediate keeps its buffer after the value goes.
        let t = xs[0].exp()?.t()?;
        Ok(vec![y, t.mul(&t)?])
    };
    let x = Tensor::randn(&[1024, 1024], DType::Float32, None).unwrap();
    let (_, captured) = capture(std::slice::from_ref(&x), f).unwrap();
    let p = program(captured);
    let y = Tensor::randn(&[1024, 1024], DType::Float32, None).unwrap();
    let (want, eager_peak) = peak_bytes(|| f(std::slice::from_ref(&y)).unwrap());
    drop(want);
    let (got, replay_peak) = peak_bytes(|| p.replay(std::slice::from_ref(&y)).unwrap());
    let want = f(std::slice::from_ref(&y)).unwrap();
    for (a, b) in got.iter().zip(&want) {
        assert_eq!(a.to_vec::<f32>(), b.to_vec::<f32>());
    }
    // Keeping every value holds 18 buffers of 4 MiB by the end.
    assert!(
        replay_peak <= eager_peak,
        "replay peak {replay_peak} bytes, eager {eager_peak}"
    );
    assert!(eager_peak < 8 * (4 << 20), "eager peak {eager_peak}");
}
