//! Trains a tiny two-layer network from Rust, without Python: fits
//! y = sin(x) on [-3, 3] with a 1-32-1 tanh MLP and plain gradient descent.
//!
//! Run with `cargo run --release --example train_mlp`.

use ferrograd::autograd;
use ferrograd::{DType, Result, Tensor};

fn param(shape: &[usize], scale: f64) -> Result<Tensor> {
    let t = Tensor::randn(shape, DType::Float32, None)?.mul(&Tensor::scalar(scale))?;
    // A parameter is a leaf: drop the history of its initialisation.
    t.detach().requires_grad_(true)
}

fn main() -> Result<()> {
    ferrograd::random::manual_seed(0);
    let x = Tensor::linspace(-3.0, 3.0, 64, DType::Float32)?.reshape(&[64, 1])?;
    let y = x.sin()?;

    let w1 = param(&[1, 32], 1.0)?;
    let b1 = param(&[32], 0.1)?;
    let w2 = param(&[32, 1], 0.2)?;
    let b2 = param(&[1], 0.1)?;
    let params = [&w1, &b1, &w2, &b2];
    let lr = Tensor::scalar(0.02);
    let mut first_loss = None;
    let mut last_loss = f64::NAN;

    for step in 0..=2000 {
        let h = x.matmul(&w1)?.add(&b1)?.tanh()?;
        let pred = h.matmul(&w2)?.add(&b2)?;
        let diff = pred.sub(&y)?;
        let loss = diff.mul(&diff)?.mean(None, false, None)?;
        loss.backward()?;
        {
            // Parameter updates are not part of the model's graph.
            let _g = autograd::no_grad();
            for p in params {
                let g = p.grad().expect("every parameter is used");
                p.sub_(&g.mul(&lr)?)?;
                p.set_grad(None)?;
            }
        }
        last_loss = loss.item()?.to_f64();
        first_loss.get_or_insert(last_loss);
        if step % 500 == 0 {
            println!("step {step:4}  loss {last_loss:.5}");
        }
    }
    // Training must have fit the curve: the loss fell by more than 10x.
    let first_loss = first_loss.unwrap_or(f64::NAN);
    assert!(
        last_loss < first_loss / 10.0 && last_loss < 0.05,
        "loss {first_loss} -> {last_loss}"
    );
    Ok(())
}
