//! Using ferrograd's tensors from Rust, without Python.
//!
//! Run with `cargo run --release --example tensor_basics`.

use ferrograd::{DType, Result, Tensor};

fn main() -> Result<()> {
    // A 2x3 float32 tensor and a view of it: the transpose shares memory.
    let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    let at = a.transpose(0, 1)?;
    println!(
        "a = {:?}, a.t() strides {:?}",
        a.to_vec::<f32>(),
        at.strides()
    );
    assert!(!at.is_contiguous());

    // Broadcasting with torch's type promotion: int64 + float32 -> float32,
    // and a Rust scalar acts like a Python number (keeps the tensor's dtype).
    let i = Tensor::from_slice(&[10i64, 20, 30], &[3])?;
    let b = a.add(&i)?.mul(&Tensor::scalar(0.5))?;
    assert_eq!(b.dtype(), DType::Float32);
    println!("(a + [10, 20, 30]) * 0.5 = {:?}", b.to_vec::<f32>());

    // In-place writes through a view are seen by the base and bump the
    // version counter every view shares.
    let row = a.select(0, 1)?;
    row.add_(&Tensor::scalar(100.0))?;
    println!(
        "after a[1] += 100: {:?} (version {})",
        a.to_vec::<f32>(),
        a.version()
    );
    assert_eq!(a.to_vec::<f32>()[3], 104.0);

    // Matrix product and reductions.
    let m = a.matmul(&at)?;
    // a is now [[1, 2, 3], [104, 105, 106]].
    assert_eq!(m.to_vec::<f32>(), vec![14.0, 632.0, 632.0, 33077.0]);
    println!(
        "a @ a.t() = {:?}, sum = {:?}",
        m.to_vec::<f32>(),
        m.sum(None, false, None)?.item()?
    );
    Ok(())
}
