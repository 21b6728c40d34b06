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
    // Backward inside the closure.
    let w = randn(&[3], 11).requires_grad_(true).unwrap();
    let (_, c) = capture(std::slice::from_ref(&x), |xs| {
        let l = xs[0].mul(&w)?.sum(None, false, None)?;
        l.backward()?;
        Ok(vec![l])
    })
    .unwrap();
    assert!(matches!(c, Captured::Broken(ref why) if why.contains("backward")));
    // Nothing stays recording after a capture, broken or not.
    assert!(!capturing());
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
