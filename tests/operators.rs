//! Rust's operators on tensors are the methods of the same name: the same
//! values (bitwise), dtypes and gradients.

use ferrograd::{DType, Result, Tensor};

fn t(values: &[f64], shape: &[usize]) -> Tensor {
    Tensor::from_slice(values, shape).unwrap()
}

#[test]
fn operators_match_the_methods_for_every_operand_form() -> Result<()> {
    let a = t(&[1.5, -2.0, 3.25, 0.5, 7.0, -1.0], &[2, 3]);
    let b = t(&[0.5, 4.0, -3.0], &[3]);
    type Case = (fn(&Tensor, &Tensor) -> Result<Tensor>, &'static str);
    let cases: [Case; 4] = [
        (|x, y| x.add(y), "+"),
        (|x, y| x.sub(y), "-"),
        (|x, y| x.mul(y), "*"),
        (|x, y| x.div(y), "/"),
    ];
    for (method, op) in cases {
        let want = method(&a, &b)?.to_vec::<f64>();
        let got = match op {
            "+" => [
                &a + &b,
                a.clone() + &b,
                &a + b.clone(),
                a.clone() + b.clone(),
            ],
            "-" => [
                &a - &b,
                a.clone() - &b,
                &a - b.clone(),
                a.clone() - b.clone(),
            ],
            "*" => [
                &a * &b,
                a.clone() * &b,
                &a * b.clone(),
                a.clone() * b.clone(),
            ],
            _ => [
                &a / &b,
                a.clone() / &b,
                &a / b.clone(),
                a.clone() / b.clone(),
            ],
        };
        for r in got {
            let r = r?;
            assert_eq!(r.shape(), &[2, 3]);
            let bits: Vec<u64> = r.to_vec::<f64>().iter().map(|v| v.to_bits()).collect();
            let want_bits: Vec<u64> = want.iter().map(|v| v.to_bits()).collect();
            assert_eq!(bits, want_bits, "operator {op}");
        }
    }
    assert_eq!((-&a)?.to_vec::<f64>(), a.neg()?.to_vec::<f64>());
    Ok(())
}

#[test]
fn scalars_join_as_wrapped_numbers() -> Result<()> {
    let x = Tensor::from_slice(&[1.0f32, 2.0, 4.0], &[3])?;
    let y = (&x * 2.0)?;
    assert_eq!(
        y.dtype(),
        DType::Float32,
        "a Python-like scalar keeps the tensor's dtype"
    );
    assert_eq!(y.to_vec::<f32>(), vec![2.0, 4.0, 8.0]);
    assert_eq!((1.0 - &x)?.to_vec::<f32>(), vec![0.0, -1.0, -3.0]);
    assert_eq!((8.0 / &x)?.to_vec::<f32>(), vec![8.0, 4.0, 2.0]);
    let i = Tensor::from_slice(&[3i64, 5], &[2])?;
    assert_eq!((&i + 2i64)?.dtype(), DType::Int64);
    assert_eq!(
        (&i * 0.5)?.dtype(),
        DType::Float32,
        "int * float gives the default dtype"
    );
    Ok(())
}

#[test]
fn operators_record_the_graph_and_short_forms_reduce_everything() -> Result<()> {
    // loss = mean(2 * w * x - w) => d/dw_i = (2 x_i - 1) / n
    let w = t(&[1.0, -2.0, 0.5, 3.0], &[2, 2]).requires_grad_(true)?;
    let x = t(&[3.0, 4.0, -1.0, 0.25], &[2, 2]);
    let loss = ((2.0 * (&w * &x)?)? - &w)?.mean_all()?;
    loss.backward()?;
    let want: Vec<f64> = [3.0, 4.0, -1.0, 0.25]
        .iter()
        .map(|xi| (2.0 * xi - 1.0) / 4.0)
        .collect();
    assert_eq!(w.grad().unwrap().to_vec::<f64>(), want);
    let s = x.sum_all()?;
    assert_eq!(s.shape(), &[] as &[usize]);
    assert_eq!(s.to_vec::<f64>(), vec![3.0 + 4.0 - 1.0 + 0.25]);
    Ok(())
}
