//! Reverse mode from Rust: `backward`, `grad`, starting gradients for
//! non-scalar outputs, `retain_graph`, restricting `.grad` to some inputs,
//! and a hook that edits a gradient on its way.
//!
//! Run with `cargo run --release --example reverse_mode`.

use ferrograd::autograd::{self, BackwardOptions, GradOptions};
use ferrograd::{DType, Result, Tensor};

fn close(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() < 1e-12, "{got:?} != {want:?}");
    }
}

fn main() -> Result<()> {
    // A linear model's loss: L = sum((x w + b - y)^2).
    let x = Tensor::from_slice(&[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2])?;
    let y = Tensor::from_slice(&[1.0f64, 0.0, -1.0], &[3, 1])?;
    let w = Tensor::from_slice(&[0.5f64, -0.25], &[2, 1])?.requires_grad_(true)?;
    let b = Tensor::scalar_tensor(0.1, DType::Float64).requires_grad_(true)?;
    let r = x.matmul(&w)?.add(&b)?.sub(&y)?;
    let loss = r.mul(&r)?.sum(None, false, None)?;

    // dL/dw = 2 x^T r, dL/db = 2 sum(r), written out from the residuals.
    let res = r.detach().to_vec::<f64>();
    let xs = x.to_vec::<f64>();
    let want_w: Vec<f64> = (0..2)
        .map(|j| 2.0 * (0..3).map(|i| xs[2 * i + j] * res[i]).sum::<f64>())
        .collect();
    let want_b = 2.0 * res.iter().sum::<f64>();

    // `grad` returns the gradients and leaves `.grad` alone; keep the
    // graph for the backward call below.
    let g = autograd::grad_with(&[&loss], &[&w, &b], &GradOptions::new().retain_graph(true))?;
    close(&g[0].to_vec::<f64>(), &want_w);
    close(&g[1].to_vec::<f64>(), &[want_b]);
    assert!(w.grad().is_none());
    println!(
        "grad:     dL/dw = {:?}, dL/db = {:?}",
        g[0].to_vec::<f64>(),
        g[1].item()?.to_f64()
    );

    // `backward` accumulates into `.grad`; restricted to `w`, `b` gets none.
    loss.backward_with(&BackwardOptions::new().inputs([&w]).retain_graph(true))?;
    close(&w.grad().unwrap().to_vec::<f64>(), &want_w);
    assert!(b.grad().is_none());
    // A second backward adds to what is there.
    loss.backward()?;
    let twice: Vec<f64> = want_w.iter().map(|v| 2.0 * v).collect();
    close(&w.grad().unwrap().to_vec::<f64>(), &twice);
    close(&b.grad().unwrap().to_vec::<f64>(), &[want_b]);
    println!(
        "backward: w.grad = {:?} (two backward calls)",
        w.grad().unwrap().to_vec::<f64>()
    );

    // The graph is freed now: a third backward is an error, not a crash.
    let err = loss.backward().unwrap_err();
    println!(
        "third backward: {}",
        err.to_string().lines().next().unwrap_or("")
    );

    // A non-scalar output needs the vector of the vector-Jacobian product.
    let t = Tensor::from_slice(&[0.0f64, 1.0, 2.0], &[3])?.requires_grad_(true)?;
    let e = t.exp()?;
    let v = Tensor::from_slice(&[1.0f64, 10.0, 100.0], &[3])?;
    e.backward_with(&BackwardOptions::new().gradient(&v))?;
    let want: Vec<f64> = [0.0f64, 1.0, 2.0]
        .iter()
        .zip([1.0, 10.0, 100.0])
        .map(|(t, v)| t.exp() * v)
        .collect();
    close(&t.grad().unwrap().to_vec::<f64>(), &want);
    println!("vjp of exp: {:?}", t.grad().unwrap().to_vec::<f64>());

    // A hook on an intermediate tensor clips its gradient to [-1, 1]
    // before it flows on to the leaf.
    let p = Tensor::from_slice(&[1.0f64, 2.0, 3.0], &[3])?.requires_grad_(true)?;
    let h = p.mul(&Tensor::scalar(5.0))?;
    let (lo, hi) = (Tensor::scalar(-1.0), Tensor::scalar(1.0));
    h.register_hook(move |g| Ok(Some(g.clamp(Some(&lo), Some(&hi))?)))?;
    let out = h.mul(&h)?.sum(None, false, None)?; // dout/dh = 2h = [10, 20, 30]
    out.backward()?;
    assert_eq!(p.grad().unwrap().to_vec::<f64>(), vec![5.0, 5.0, 5.0]);
    println!(
        "clipped by a hook: p.grad = {:?}",
        p.grad().unwrap().to_vec::<f64>()
    );
    Ok(())
}
