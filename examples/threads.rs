//! Backward from several threads at once, without Python: each thread
//! builds its own graph over a shared parameter and runs backward, and
//! several threads differentiate one shared graph concurrently.
//!
//! Run with `cargo run --release --example threads`.

use ferrograd::autograd::{self, GradOptions};
use ferrograd::{Result, Tensor};
use std::thread;

const THREADS: usize = 8;
const ROUNDS: usize = 50;

fn main() -> Result<()> {
    let w = Tensor::from_slice(&[0.5f64, -1.0, 2.0], &[3])?.requires_grad_(true)?;

    // Each thread: loss = sum((k w)^2) for its own k, so d loss/dw = 2 k^2 w.
    // Gradients from all threads accumulate into the shared w.grad.
    let handles: Vec<_> = (1..=THREADS)
        .map(|k| {
            let w = w.clone();
            thread::spawn(move || -> Result<()> {
                let k = Tensor::scalar(k as f64);
                for _ in 0..ROUNDS {
                    let kw = w.mul(&k)?;
                    let loss = kw.mul(&kw)?.sum(None, false, None)?;
                    // `grad` in each thread sees only its own graph...
                    let g = autograd::grad_with(
                        &[&loss],
                        &[&w],
                        &GradOptions::new().retain_graph(true),
                    )?;
                    let want = w.mul(&k.mul(&k)?.mul(&Tensor::scalar(2.0))?)?;
                    assert_eq!(g[0].to_vec::<f64>(), want.to_vec::<f64>());
                    // ...and `backward` adds it into the shared `.grad`.
                    loss.backward()?;
                }
                Ok(())
            })
        })
        .collect();
    for h in handles {
        h.join().expect("a worker panicked")?;
    }
    // sum over k of 2 k^2, times ROUNDS; all values are exact in f64.
    let scale: f64 = (1..=THREADS).map(|k| 2.0 * (k * k) as f64).sum::<f64>() * ROUNDS as f64;
    let want: Vec<f64> = [0.5, -1.0, 2.0].iter().map(|w| w * scale).collect();
    assert_eq!(w.grad().unwrap().to_vec::<f64>(), want);
    println!(
        "{THREADS} threads x {ROUNDS} backward calls: w.grad = {:?}",
        want
    );

    // One graph, differentiated from every thread at the same time.
    let x = Tensor::from_slice(&[0.1f64, 0.2, 0.3, 0.4], &[4])?.requires_grad_(true)?;
    let y = x.exp()?.mul(&x.sin()?)?.sum(None, false, None)?;
    let want: Vec<f64> = [0.1f64, 0.2, 0.3, 0.4]
        .iter()
        .map(|x| x.exp() * (x.sin() + x.cos()))
        .collect();
    thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| {
                for _ in 0..ROUNDS {
                    let g =
                        autograd::grad_with(&[&y], &[&x], &GradOptions::new().retain_graph(true))
                            .expect("the graph is kept");
                    for (g, w) in g[0].to_vec::<f64>().iter().zip(&want) {
                        assert!((g - w).abs() < 1e-12);
                    }
                }
            });
        }
    });
    println!("{THREADS} threads differentiated one shared graph {ROUNDS} times each");
    Ok(())
}
