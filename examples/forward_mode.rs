//! Forward mode from Rust: a dual level, tangents, and a Jacobian-vector
//! product checked against the hand-derived Jacobian and against reverse
//! mode.
//!
//! Run with `cargo run --release --example forward_mode`.

use ferrograd::autograd::{self, DualLevel};
use ferrograd::{Result, Tensor};

/// f(x) = [x0 x1, sin(x0) + x1^2]
fn f(x: &Tensor) -> Result<Tensor> {
    let (a, b) = (x.select(0, 0)?, x.select(0, 1)?);
    let first = a.mul(&b)?;
    let second = a.sin()?.add(&b.mul(&b)?)?;
    Tensor::stack(&[first, second], 0)
}

fn main() -> Result<()> {
    let (x0, x1) = (0.3f64, -1.2f64);
    let x = Tensor::from_slice(&[x0, x1], &[2])?;
    let v = Tensor::from_slice(&[1.0f64, 2.0], &[2])?;
    // J = [[x1, x0], [cos x0, 2 x1]], J v by hand:
    let want = [x1 + 2.0 * x0, x0.cos() + 4.0 * x1];

    // One forward pass computes f(x) and J v together.
    let jvp = {
        let level = DualLevel::enter()?;
        let y = f(&level.make_dual(&x, &v)?)?;
        let (primal, tangent) = level.unpack(&y)?;
        println!("f(x) = {:?}", primal.to_vec::<f64>());
        tangent.expect("y depends on x").to_vec::<f64>()
    }; // the level closes here
    println!("J v (forward mode) = {jvp:?}");
    for (g, w) in jvp.iter().zip(want) {
        assert!((g - w).abs() < 1e-12);
    }

    // Reverse mode gives rows of J: u^T J for u = e0, e1.
    let xr = x.requires_grad_(true)?;
    let y = f(&xr)?;
    for (row, w) in want.iter().enumerate() {
        let jr = autograd::grad_with(
            &[y.select(0, row as isize)?],
            &[&xr],
            &autograd::GradOptions::new().retain_graph(true),
        )?;
        let jv = jr[0].mul(&v)?.sum(None, false, None)?.item()?.to_f64();
        assert!((jv - w).abs() < 1e-12);
    }
    println!("reverse mode agrees row by row");
    Ok(())
}
