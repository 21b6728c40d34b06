//! Reductions and scans through the Rust API, against hand-derived values.

use ferrograd::ops::reduce::MatrixOrd;
use ferrograd::{DType, ErrorKind, Tensor};

fn t2(data: &[f64], shape: &[usize]) -> Tensor {
    Tensor::from_slice(data, shape).unwrap()
}

#[test]
fn sum_mean_prod_over_dims() {
    // [[1, 2, 3], [4, 5, 6]]
    let a = t2(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    assert_eq!(
        a.sum(None, false, None).unwrap().to_vec::<f64>(),
        vec![21.0]
    );
    assert_eq!(
        a.sum(Some(&[0]), false, None).unwrap().to_vec::<f64>(),
        vec![5.0, 7.0, 9.0]
    );
    assert_eq!(a.sum(Some(&[-1]), true, None).unwrap().shape(), &[2, 1]);
    assert_eq!(
        a.mean(Some(&[1]), false, None).unwrap().to_vec::<f64>(),
        vec![2.0, 5.0]
    );
    assert_eq!(
        a.prod(Some(&[0]), false, None).unwrap().to_vec::<f64>(),
        vec![4.0, 10.0, 18.0]
    );
    // Transposed view: dim 0 of the view is dim 1 of the data.
    let t = a.transpose(0, 1).unwrap();
    assert_eq!(
        t.sum(Some(&[0]), false, None).unwrap().to_vec::<f64>(),
        vec![6.0, 15.0]
    );
}

#[test]
fn integer_sums_widen_and_mean_rejects_integers() {
    let a = Tensor::from_slice(&[1i32, 2, 3], &[3]).unwrap();
    let s = a.sum(None, false, None).unwrap();
    assert_eq!(s.dtype(), DType::Int64);
    assert_eq!(s.to_vec::<i64>(), vec![6]);
    let e = a.mean(None, false, None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Runtime);
    assert!(e.to_string().contains("Got: Int"));
    let c = a.cumsum(0, None).unwrap();
    assert_eq!(c.dtype(), DType::Int64);
    assert_eq!(c.to_vec::<i64>(), vec![1, 3, 6]);
}

#[test]
fn max_dim_ties_and_nan() {
    let a = t2(&[3.0, 1.0, 3.0, f64::NAN, 2.0, f64::NAN], &[2, 3]);
    let (v, i) = a.max_dim(1, false).unwrap();
    assert_eq!(i.to_vec::<i64>(), vec![0, 0]);
    assert_eq!(v.to_vec::<f64>()[0], 3.0);
    assert!(v.to_vec::<f64>()[1].is_nan());
    assert_eq!(a.argmin(None, false).unwrap().to_vec::<i64>(), vec![3]);
    assert!(a.max_all().unwrap().to_vec::<f64>()[0].is_nan());
}

#[test]
fn empty_and_dim_errors_have_torch_kinds() {
    let e = Tensor::zeros(&[0, 2], DType::Float32);
    assert_eq!(e.max_all().unwrap_err().kind(), ErrorKind::Runtime);
    assert_eq!(e.max_dim(0, false).unwrap_err().kind(), ErrorKind::Index);
    assert_eq!(e.sum(None, false, None).unwrap().to_vec::<f32>(), vec![0.0]);
    assert_eq!(
        e.prod(None, false, None).unwrap().to_vec::<f32>(),
        vec![1.0]
    );
    assert!(e.mean(None, false, None).unwrap().to_vec::<f32>()[0].is_nan());
    let a = Tensor::ones(&[2, 2], DType::Float64);
    assert_eq!(
        a.sum(Some(&[2]), false, None).unwrap_err().kind(),
        ErrorKind::Index
    );
    assert_eq!(
        a.sum(Some(&[0, -2]), false, None).unwrap_err().kind(),
        ErrorKind::Runtime
    );
}

#[test]
fn var_std_and_norms() {
    // Values 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sum of squared deviations 32.
    let a = t2(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0], &[8]);
    assert_eq!(a.var(None, 0.0, false).unwrap().to_vec::<f64>(), vec![4.0]);
    assert_eq!(a.std(None, 0.0, false).unwrap().to_vec::<f64>(), vec![2.0]);
    assert_eq!(
        a.var(None, 1.0, false).unwrap().to_vec::<f64>(),
        vec![32.0 / 7.0]
    );
    let v = t2(&[3.0, -4.0], &[2]);
    assert_eq!(
        v.vector_norm(2.0, None, false, None)
            .unwrap()
            .to_vec::<f64>(),
        vec![5.0]
    );
    assert_eq!(
        v.vector_norm(1.0, None, false, None)
            .unwrap()
            .to_vec::<f64>(),
        vec![7.0]
    );
    assert_eq!(
        v.vector_norm(f64::INFINITY, None, false, None)
            .unwrap()
            .to_vec::<f64>(),
        vec![4.0]
    );
    // diag(3, -2): spectral norm 3, smallest singular value 2, nuclear 5.
    let d = t2(&[3.0, 0.0, 0.0, -2.0], &[2, 2]);
    let norm = |o| {
        d.matrix_norm(o, (-2, -1), false, None)
            .unwrap()
            .to_vec::<f64>()[0]
    };
    assert!((norm(MatrixOrd::P(2.0)) - 3.0).abs() < 1e-12);
    assert!((norm(MatrixOrd::P(-2.0)) - 2.0).abs() < 1e-12);
    assert!((norm(MatrixOrd::Nuc) - 5.0).abs() < 1e-12);
    assert_eq!(norm(MatrixOrd::P(1.0)), 3.0);
    assert_eq!(norm(MatrixOrd::P(-1.0)), 2.0);
}

#[test]
fn softmax_logsumexp_are_stable() {
    let a = t2(&[1000.0, 1000.0], &[2]);
    assert_eq!(a.softmax(0, None).unwrap().to_vec::<f64>(), vec![0.5, 0.5]);
    let l = a.logsumexp(&[0], false).unwrap().to_vec::<f64>()[0];
    assert!((l - (1000.0 + 2f64.ln())).abs() < 1e-9);
}

#[test]
fn sum_does_not_depend_on_thread_count() {
    let data: Vec<f32> = (0..1_000_003u64)
        .map(|i| ((i * 7919) % 1000) as f32 * 0.001 - 0.3)
        .collect();
    let t = Tensor::from_slice(&data, &[data.len()]).unwrap();
    let before = ferrograd::num_threads();
    ferrograd::set_num_threads(1);
    let one = t.sum(None, false, None).unwrap().to_vec::<f32>();
    ferrograd::set_num_threads(3);
    let three = t.sum(None, false, None).unwrap().to_vec::<f32>();
    ferrograd::set_num_threads(before);
    assert_eq!(one[0].to_bits(), three[0].to_bits());
    let exact: f64 = data.iter().map(|&x| x as f64).sum();
    assert!((one[0] as f64 - exact).abs() <= 1e-6 * exact.abs());
}
