//! A compiled program replayed as one graph node whose backward is a
//! second captured program (`Program::compile_backward`), against eager
//! execution of the same closure.

use ferrograd::compile::{capture, Captured, Program};
use ferrograd::{DType, Result, Tensor};

fn randn(shape: &[usize], seed: u64) -> Tensor {
    ferrograd::random::manual_seed(seed);
    Tensor::randn(shape, DType::Float64, None).unwrap()
}

fn leaf(shape: &[usize], seed: u64) -> Tensor {
    randn(shape, seed).requires_grad_(true).unwrap()
}

fn compiled(inputs: &[Tensor], f: impl FnOnce(&[Tensor]) -> Result<Vec<Tensor>>) -> Program {
    let (_, c) = capture(inputs, f).unwrap();
    let mut p = match c {
        Captured::Program(p) => p,
        Captured::Broken(why) => panic!("capture broken: {why}"),
    };
    p.fuse();
    p.compile_backward();
    p
}

fn grad_of(t: &Tensor) -> Vec<f64> {
    t.grad().unwrap().to_vec::<f64>()
}

fn node_name(t: &Tensor) -> String {
    t.grad_fn().unwrap().node.name()
}

#[test]
fn an_mlp_replays_as_one_node_with_the_eager_gradients() {
    let (w1, b1, w2) = (leaf(&[4, 8], 1), leaf(&[8], 2), leaf(&[8, 3], 3));
    let f = |xs: &[Tensor]| -> Result<Vec<Tensor>> {
        let h = xs[0].matmul(&w1)?.add(&b1)?.relu()?;
        let y = h.matmul(&w2)?.tanh()?;
        Ok(vec![y.mul(&y)?])
    };
    let c = randn(&[5, 3], 5);
    let loss = |y: &Tensor| y.mul(&c).unwrap().sum(None, false, None).unwrap();
    let p = compiled(&[leaf(&[5, 4], 4)], f);
    assert!(p.backward_operations().is_none());
    for seed in 10..14 {
        let x = leaf(&[5, 4], seed);
        let got = p.replay(std::slice::from_ref(&x)).unwrap();
        if seed > 10 {
            assert_eq!(node_name(&got[0]), "CompiledFunctionBackward");
        }
        let params = [&w1, &b1, &w2];
        for w in params {
            w.set_grad(None).unwrap();
        }
        loss(&got[0]).backward().unwrap();
        let mine: Vec<Vec<f64>> = params.iter().map(|w| grad_of(w)).collect();
        let gx = grad_of(&x);
        for w in params {
            w.set_grad(None).unwrap();
        }
        let x2 = x.detach().requires_grad_(true).unwrap();
        let want = f(std::slice::from_ref(&x2)).unwrap();
        assert_eq!(got[0].to_vec::<f64>(), want[0].to_vec::<f64>());
        loss(&want[0]).backward().unwrap();
        for (m, w) in mine.iter().zip(params) {
            assert_eq!(m, &grad_of(w));
        }
        assert_eq!(gx, grad_of(&x2));
    }
    let ops = p.backward_operations().expect("a backward program");
    assert!(ops.contains(&"mm"), "{ops:?}");
}

/// The gradient of `sum(grad(sum(f(x)), x))` with respect to `x` (a
/// second derivative through whatever graph `f` records).
fn second(f: impl Fn(&Tensor) -> Tensor, x: &Tensor) -> Vec<f64> {
    let opts = ferrograd::autograd::GradOptions::new().create_graph(true);
    let s = f(x).sum(None, false, None).unwrap();
    let g = ferrograd::autograd::grad_with(&[s], std::slice::from_ref(x), &opts).unwrap();
    let h = ferrograd::autograd::grad(
        &[g[0].mul(&g[0]).unwrap().sum(None, false, None).unwrap()],
        std::slice::from_ref(x),
    )
    .unwrap();
    h[0].to_vec::<f64>()
}

#[test]
fn second_derivatives_through_the_node_are_the_eager_ones() {
    let w = leaf(&[3, 3], 20);
    let f = |xs: &[Tensor]| -> Result<Vec<Tensor>> {
        Ok(vec![xs[0].matmul(&w)?.sin()?.mul(&xs[0])?.exp()?])
    };
    let p = compiled(&[leaf(&[2, 3], 21)], f);
    let x = leaf(&[2, 3], 22);
    let via = |x: &Tensor| p.replay(std::slice::from_ref(x)).unwrap().remove(0);
    via(&x); // derives the node
    assert_eq!(node_name(&via(&x)), "CompiledFunctionBackward");
    let eager = |x: &Tensor| f(std::slice::from_ref(x)).unwrap().remove(0);
    assert_eq!(second(via, &x), second(eager, &x));
}

#[test]
fn outputs_without_gradient_and_outputs_read_inside_get_the_eager_gradients() {
    let w = leaf(&[6], 30);
    // `h` is a result and is read again; the second chunk gets no
    // gradient from inside, and the second result none from outside.
    let f = |xs: &[Tensor]| -> Result<Vec<Tensor>> {
        let h = xs[0].mul(&w)?.tanh()?;
        let parts = h.chunk(2, 0)?;
        let y = parts[0].exp()?.mul(&parts[0])?;
        Ok(vec![y, h.cos()?, h])
    };
    let p = compiled(&[leaf(&[6], 31)], f);
    let x = leaf(&[6], 32);
    p.replay(std::slice::from_ref(&x)).unwrap();
    let c = randn(&[6], 33);
    for which in [vec![0], vec![2], vec![0, 2], vec![0, 1, 2]] {
        let run = |outs: Vec<Tensor>| -> (Vec<f64>, Vec<f64>) {
            x.set_grad(None).unwrap();
            w.set_grad(None).unwrap();
            let mut loss = Tensor::scalar(0.0);
            for &k in &which {
                let o = &outs[k];
                let ck = c.narrow(0, 0, o.shape()[0]).unwrap();
                loss = loss
                    .add(&o.mul(&ck).unwrap().sum(None, false, None).unwrap())
                    .unwrap();
            }
            loss.backward().unwrap();
            (grad_of(&x), grad_of(&w))
        };
        let got = p.replay(std::slice::from_ref(&x)).unwrap();
        assert_eq!(node_name(&got[0]), "CompiledFunctionBackward");
        let mine = run(got);
        let want = run(f(std::slice::from_ref(&x)).unwrap());
        assert_eq!(mine, want, "outputs {which:?}");
    }
}

#[test]
fn a_saved_value_written_in_place_fails_backward_as_eagerly() {
    let w = leaf(&[4], 40);
    let f = |xs: &[Tensor]| -> Result<Vec<Tensor>> { Ok(vec![xs[0].mul(&w)?.sin()?]) };
    let p = compiled(&[leaf(&[4], 41)], f);
    let x = leaf(&[4], 42);
    p.replay(std::slice::from_ref(&x)).unwrap();
    let y = p.replay(std::slice::from_ref(&x)).unwrap().remove(0);
    {
        let _g = ferrograd::autograd::no_grad();
        w.add_(&Tensor::scalar(1.0)).unwrap();
    }
    let err = y.sum(None, false, None).unwrap().backward().unwrap_err();
    assert!(
        err.to_string().contains("modified by an inplace operation"),
        "{err}"
    );
}

#[test]
fn another_requires_grad_pattern_replays_operation_by_operation() {
    let w = leaf(&[4], 50);
    let f = |xs: &[Tensor]| -> Result<Vec<Tensor>> { Ok(vec![xs[0].mul(&w)?.tanh()?]) };
    let p = compiled(&[leaf(&[4], 51)], f);
    let x = leaf(&[4], 52);
    p.replay(std::slice::from_ref(&x)).unwrap();
    let plain = randn(&[4], 53);
    let y = p.replay(std::slice::from_ref(&plain)).unwrap().remove(0);
    assert_ne!(node_name(&y), "CompiledFunctionBackward");
    w.set_grad(None).unwrap();
    y.sum(None, false, None).unwrap().backward().unwrap();
    let mine = grad_of(&w);
    w.set_grad(None).unwrap();
    f(std::slice::from_ref(&plain)).unwrap()[0]
        .sum(None, false, None)
        .unwrap()
        .backward()
        .unwrap();
    assert_eq!(mine, grad_of(&w));
}

#[test]
fn the_node_frees_what_it_saved_unless_the_graph_is_retained() {
    let w = leaf(&[5], 60);
    let f = |xs: &[Tensor]| -> Result<Vec<Tensor>> { Ok(vec![xs[0].mul(&w)?.exp()?]) };
    let p = compiled(&[leaf(&[5], 61)], f);
    let x = leaf(&[5], 62);
    p.replay(std::slice::from_ref(&x)).unwrap();
    let s = p.replay(std::slice::from_ref(&x)).unwrap()[0]
        .sum(None, false, None)
        .unwrap();
    let keep = ferrograd::autograd::BackwardOptions::new().retain_graph(true);
    s.backward_with(&keep).unwrap();
    let once = grad_of(&x);
    s.backward().unwrap();
    let twice: Vec<f64> = once.iter().map(|g| g + g).collect();
    assert_eq!(grad_of(&x), twice);
    let err = s.backward().unwrap_err();
    assert!(err.to_string().contains("second time"), "{err}");
}

#[test]
fn replays_from_eight_threads_give_the_eager_gradients() {
    let w = randn(&[6, 6], 70);
    let f = |xs: &[Tensor]| -> Result<Vec<Tensor>> {
        Ok(vec![xs[0].matmul(&xs[1])?.sigmoid()?.mul(&xs[0])?])
    };
    let p = std::sync::Arc::new(compiled(&[leaf(&[3, 6], 71), leaf(&[6, 6], 72)], f));
    std::thread::scope(|s| {
        for t in 0..8u64 {
            let (p, w) = (p.clone(), w.clone());
            s.spawn(move || {
                for i in 0..20 {
                    let x = leaf(&[3, 6], 100 + t * 50 + i);
                    let wt = w.detach().requires_grad_(true).unwrap();
                    let got = p.replay(&[x.clone(), wt.clone()]).unwrap().remove(0);
                    got.sum(None, false, None).unwrap().backward().unwrap();
                    let (x2, w2) = (
                        x.detach().requires_grad_(true).unwrap(),
                        w.detach().requires_grad_(true).unwrap(),
                    );
                    let want = f(&[x2.clone(), w2.clone()]).unwrap().remove(0);
                    want.sum(None, false, None).unwrap().backward().unwrap();
                    assert_eq!(got.to_vec::<f64>(), want.to_vec::<f64>());
                    assert_eq!(grad_of(&x), grad_of(&x2));
                    assert_eq!(grad_of(&wt), grad_of(&w2));
                }
            });
        }
    });
    assert!(p.backward_operations().is_some());
}

#[test]
fn a_classifier_loss_replays_as_one_node_with_the_eager_gradients() {
    let w = leaf(&[4, 3], 80);
    let f = |xs: &[Tensor]| -> Result<Vec<Tensor>> {
        let z = xs[0].matmul(&w)?.log_softmax(1, None)?;
        Ok(vec![z.nll_loss(
            &xs[1],
            None,
            ferrograd::Reduction::Mean,
            1,
        )?])
    };
    let target = |v: &[i64]| Tensor::from_slice(v, &[5]).unwrap();
    let p = compiled(&[leaf(&[5, 4], 81), target(&[0, 2, 1, 0, 1])], f);
    // The targets are inputs: the total weight (rows not ignored) is
    // taken again from each call's targets.
    for (seed, t) in [
        (82, [0, 2, 1, 0, 1]),
        (83, [1, 1, 2, 0, 1]),
        (84, [2, 1, 1, 1, 0]),
    ] {
        let x = leaf(&[5, 4], seed);
        let ins = [x.clone(), target(&t)];
        let got = p.replay(&ins).unwrap().remove(0);
        w.set_grad(None).unwrap();
        got.backward().unwrap();
        let (gx, gw) = (grad_of(&x), grad_of(&w));
        w.set_grad(None).unwrap();
        let x2 = x.detach().requires_grad_(true).unwrap();
        let want = f(&[x2.clone(), target(&t)]).unwrap().remove(0);
        want.backward().unwrap();
        assert_eq!(got.to_vec::<f64>(), want.to_vec::<f64>());
        assert_eq!((gx, gw), (grad_of(&x2), grad_of(&w)), "targets {t:?}");
    }
    assert_eq!(p.backward_fallback(), None);
    let ops = p.backward_operations().unwrap();
    assert!(ops.contains(&"nll_loss_backward"), "{ops:?}");
}

fn summed(xs: &[Tensor], mean: bool) -> Result<Vec<Tensor>> {
    let (a, b, c) = (&xs[0], &xs[1], &xs[2]);
    let y = a.mul(b)?.add(c)?.tanh()?.mul(a)?;
    Ok(vec![if mean {
        y.mean(None, false, None)?
    } else {
        y.sum(None, false, None)?
    }])
}

fn leaves(dt: DType, n: usize, seed: u64) -> Vec<Tensor> {
    (0..3)
        .map(|k| {
            ferrograd::random::manual_seed(seed + k);
            Tensor::randn(&[n], dt, None)
                .unwrap()
                .requires_grad_(true)
                .unwrap()
        })
        .collect()
}

/// Leaves holding copies of the values of `xs`.
fn twins(xs: &[Tensor]) -> Vec<Tensor> {
    xs.iter()
        .map(|x| x.detach().copy().requires_grad_(true).unwrap())
        .collect()
}

fn grads(xs: &[Tensor]) -> Vec<Vec<f64>> {
    xs.iter().map(grad_of).collect()
}

#[test]
fn a_summed_group_writes_its_derivatives_in_the_forward_loop() {
    for dt in [DType::Float32, DType::Float64] {
        for n in [7usize, 70_000] {
            for mean in [false, true] {
                let f = move |xs: &[Tensor]| summed(xs, mean);
                let p = compiled(&leaves(dt, n, 1), f);
                p.replay(&leaves(dt, n, 4)).unwrap();
                let ops = p.backward_operations().unwrap();
                assert_eq!(ops, vec!["fused_elementwise_scale"], "{dt:?} {n}");
                // The fused group without the node: its own backward loop.
                let (_, c) = capture(&leaves(dt, n, 1), f).unwrap();
                let Captured::Program(mut plain) = c else {
                    panic!("capture broken")
                };
                plain.fuse();
                let xs = leaves(dt, n, 7);
                let got = p.replay(&xs).unwrap().remove(0);
                assert_eq!(node_name(&got), "CompiledFunctionBackward");
                let ys = twins(&xs);
                let want = plain.replay(&ys).unwrap().remove(0);
                // The same loop total, and with a gradient of 1 the same
                // sweep: the same bits.
                assert_eq!(got.to_vec::<f64>(), want.to_vec::<f64>());
                got.backward().unwrap();
                want.backward().unwrap();
                assert_eq!(grads(&xs), grads(&ys));
                // Another gradient scales the derivatives, against the
                // eager operations.
                let g = Tensor::full_of(&[], ferrograd::Scalar::Float(-2.5), dt).unwrap();
                let xs = leaves(dt, n, 8);
                let got = p.replay(&xs).unwrap().remove(0);
                let with_g = ferrograd::autograd::BackwardOptions::new().grad_tensors([&g]);
                got.backward_with(&with_g).unwrap();
                let ys = twins(&xs);
                f(&ys).unwrap()[0].backward_with(&with_g).unwrap();
                let tol = if dt == DType::Float32 { 1e-5 } else { 1e-12 };
                for (m, w) in grads(&xs).iter().zip(grads(&ys)) {
                    for (x, y) in m.iter().zip(&w) {
                        assert!((x - y).abs() <= tol * (1.0 + y.abs()), "{x} vs {y}");
                    }
                }
            }
        }
    }
}

#[test]
fn derivatives_kept_by_a_retained_graph_are_not_handed_out() {
    let f = |xs: &[Tensor]| summed(xs, false);
    let p = compiled(&leaves(DType::Float64, 300, 1), f);
    p.replay(&leaves(DType::Float64, 300, 4)).unwrap();
    let xs = leaves(DType::Float64, 300, 9);
    let s = p.replay(&xs).unwrap().remove(0);
    let keep = ferrograd::autograd::GradOptions::new().retain_graph(true);
    let first = ferrograd::autograd::grad_with(std::slice::from_ref(&s), &xs, &keep).unwrap();
    let want: Vec<Vec<f64>> = first.iter().map(|g| g.to_vec::<f64>()).collect();
    // Writing into what the first call gave changes nothing the graph
    // keeps.
    for g in &first {
        g.mul_(&Tensor::scalar(3.0)).unwrap();
    }
    let again = ferrograd::autograd::grad_with(std::slice::from_ref(&s), &xs, &keep).unwrap();
    let again: Vec<Vec<f64>> = again.iter().map(|g| g.to_vec::<f64>()).collect();
    assert_eq!(again, want);
    // Accumulated twice into the leaves: each twice the gradient.
    let retain = ferrograd::autograd::BackwardOptions::new().retain_graph(true);
    s.backward_with(&retain).unwrap();
    s.backward().unwrap();
    let twice: Vec<Vec<f64>> = want
        .iter()
        .map(|g| g.iter().map(|v| v + v).collect())
        .collect();
    assert_eq!(grads(&xs), twice);
    // An input written in place before backward fails it, as eagerly.
    let s = p.replay(&xs).unwrap().remove(0);
    {
        let _g = ferrograd::autograd::no_grad();
        xs[2].add_(&Tensor::scalar(1.0)).unwrap();
    }
    let err = s.backward().unwrap_err();
    assert!(
        err.to_string().contains("modified by an inplace operation"),
        "{err}"
    );
}
