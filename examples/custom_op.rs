//! Custom ops from Rust: an op's forward, its backward (a vector-Jacobian
//! product) and optionally its forward-mode formula, recorded with
//! `Recorder`, the same mechanism every built-in op uses.
//!
//! Run with `cargo run --release --example custom_op`.

use ferrograd::autograd::{self, DualLevel, GradOptions, Recorder};
use ferrograd::{Result, Tensor};

/// softplus(x) = ln(1 + e^x), with d/dx softplus(x) = sigmoid(x).
fn softplus(x: &Tensor) -> Result<Tensor> {
    // Forward mode: the output tangent is sigmoid(x) times the input's.
    let rec = Recorder::new("SoftplusBackward", &[x]).jvp(|t| t.map1(|t| t.mul(&x.sigmoid()?)));
    // The forward computation (ops run here record nothing themselves).
    let out = x.exp()?.log1p()?;
    rec.finish(
        &[&out],
        |saver| saver.save("self", x),
        |ctx, grads| {
            let x = ctx.saved(0)?;
            // Written with ordinary ops, so it can be differentiated again.
            Ok(vec![Some(grads[0].mul(&x.sigmoid()?)?)])
        },
    )?;
    Ok(out)
}

/// round(x) with a straight-through backward: the gradient passes as if
/// the op were the identity (the true derivative is zero almost everywhere).
fn round_straight_through(x: &Tensor) -> Result<Tensor> {
    let rec = Recorder::new("RoundSTEBackward", &[x]);
    let out = x.round()?;
    rec.finish_simple(&out, |_ctx, grads| Ok(vec![Some(grads[0].clone())]))?;
    Ok(out)
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

fn main() -> Result<()> {
    let xs = [-2.0f64, 0.0, 0.5, 3.0];
    let x = Tensor::from_slice(&xs, &[4])?.requires_grad_(true)?;
    let y = softplus(&x)?;
    assert_eq!(y.grad_fn().unwrap().node.name(), "SoftplusBackward");

    // First and second derivative through the custom backward.
    let g = autograd::grad_with(
        &[y.sum(None, false, None)?],
        &[&x],
        &GradOptions::new().create_graph(true),
    )?;
    let h = autograd::grad(&[g[0].sum(None, false, None)?], &[&x])?;
    for (i, &v) in xs.iter().enumerate() {
        let s = sigmoid(v);
        assert!((g[0].to_vec::<f64>()[i] - s).abs() < 1e-12);
        assert!((h[0].to_vec::<f64>()[i] - s * (1.0 - s)).abs() < 1e-12);
    }
    println!("softplus'  = {:?}", g[0].to_vec::<f64>());
    println!("softplus'' = {:?}", h[0].to_vec::<f64>());

    // Forward mode through the custom formula.
    let v = Tensor::from_slice(&[1.0f64, 1.0, 2.0, -1.0], &[4])?;
    let jvp = {
        let level = DualLevel::enter()?;
        let out = softplus(&level.make_dual(&x.detach(), &v)?)?;
        level.tangent(&out).unwrap().to_vec::<f64>()
    };
    for (i, (&x, v)) in xs.iter().zip([1.0, 1.0, 2.0, -1.0]).enumerate() {
        assert!((jvp[i] - sigmoid(x) * v).abs() < 1e-12);
    }
    println!("softplus JVP = {jvp:?}");

    // The straight-through op: forward rounds, backward is the identity.
    let w = Tensor::from_slice(&[0.2f64, 1.7, -0.6], &[3])?.requires_grad_(true)?;
    let q = round_straight_through(&w)?;
    assert_eq!(q.to_vec::<f64>(), vec![0.0, 2.0, -1.0]);
    q.mul(&Tensor::from_slice(&[1.0f64, 2.0, 3.0], &[3])?)?
        .sum(None, false, None)?
        .backward()?;
    assert_eq!(w.grad().unwrap().to_vec::<f64>(), vec![1.0, 2.0, 3.0]);
    println!(
        "straight-through grad = {:?}",
        w.grad().unwrap().to_vec::<f64>()
    );
    Ok(())
}
