//! Higher-order derivatives from Rust: `create_graph` makes the backward
//! pass differentiable, so gradients can be differentiated again.
//!
//! Run with `cargo run --release --example higher_order`.

use ferrograd::autograd::{self, GradOptions};
use ferrograd::{DType, Result, Tensor};

/// The gradient of `y` with respect to `x`, itself differentiable.
fn d(y: &Tensor, x: &Tensor) -> Result<Tensor> {
    let g = autograd::grad_with(&[y], &[x], &GradOptions::new().create_graph(true))?;
    Ok(g[0].clone())
}

fn main() -> Result<()> {
    // f(x) = sin(x) x^2 and its first three derivatives at x = 0.7, by hand:
    // f'   = cos x x^2 + 2x sin x
    // f''  = -sin x x^2 + 4x cos x + 2 sin x
    // f''' = -cos x x^2 - 6x sin x + 6 cos x
    let x0 = 0.7f64;
    let (s, c) = x0.sin_cos();
    let want = [
        c * x0 * x0 + 2.0 * x0 * s,
        -s * x0 * x0 + 4.0 * x0 * c + 2.0 * s,
        -c * x0 * x0 - 6.0 * x0 * s + 6.0 * c,
    ];
    let x = Tensor::scalar_tensor(x0, DType::Float64).requires_grad_(true)?;
    let mut f = x.sin()?.mul(&x.mul(&x)?)?;
    for (order, want) in want.iter().enumerate() {
        f = d(&f, &x)?;
        let got = f.item()?.to_f64();
        println!("f^({}) (0.7) = {got:.12}  (by hand {want:.12})", order + 1);
        assert!((got - want).abs() < 1e-12);
    }

    // A Hessian-vector product without forming the Hessian:
    // H v = d/dx (grad f(x) . v). For f(x) = sum(x^4)/4 + x0 x1,
    // H = diag(3 x^2) + [[0, 1], [1, 0]].
    let x = Tensor::from_slice(&[1.0f64, 2.0], &[2])?.requires_grad_(true)?;
    let x2 = x.mul(&x)?;
    let quartic = x2
        .mul(&x2)?
        .sum(None, false, None)?
        .div(&Tensor::scalar(4.0))?;
    let cross = x.select(0, 0)?.mul(&x.select(0, 1)?)?;
    let f = quartic.add(&cross)?;
    let g = d(&f, &x)?;
    let v = Tensor::from_slice(&[1.0f64, -1.0], &[2])?;
    let hv = autograd::grad(&[g.mul(&v)?.sum(None, false, None)?], &[&x])?;
    // H = [[3, 1], [1, 12]], H v = [2, -11]
    assert_eq!(hv[0].to_vec::<f64>(), vec![2.0, -11.0]);
    println!("Hessian-vector product: {:?}", hv[0].to_vec::<f64>());
    Ok(())
}
