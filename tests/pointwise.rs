//! Pointwise ops through the Rust API: promotion, hand-derived values,
//! special values, in-place rules and error kinds.

use ferrograd::ops::RoundingMode;
use ferrograd::{DType, ErrorKind, Scalar, Tensor};

fn t64(v: &[f64], shape: &[usize]) -> Tensor {
    Tensor::from_slice(v, shape).unwrap()
}

#[test]
fn float_functions_give_hand_derived_values() {
    let x = t64(&[0.0, 1.0, 4.0], &[3]);
    assert_eq!(x.sqrt().unwrap().to_vec::<f64>(), vec![0.0, 1.0, 2.0]);
    assert_eq!(x.exp2().unwrap().to_vec::<f64>(), vec![1.0, 2.0, 16.0]);
    let s = x.sigmoid().unwrap().to_vec::<f64>();
    assert_eq!(s[0], 0.5);
    assert!((s[1] - 1.0 / (1.0 + (-1.0f64).exp())).abs() < 1e-15);
    let l = t64(&[1.0, 100.0], &[2]).log10().unwrap().to_vec::<f64>();
    assert_eq!(l, vec![0.0, 2.0]);
}

#[test]
fn int_inputs_of_float_functions_use_the_default_dtype() {
    let i = Tensor::from_vec(vec![1i64, 4]);
    let r = i.sqrt().unwrap();
    assert_eq!(r.dtype(), DType::Float32);
    assert_eq!(r.to_vec::<f32>(), vec![1.0, 2.0]);
    let q = i.div(&Tensor::scalar(8i64)).unwrap();
    assert_eq!(q.dtype(), DType::Float32);
    assert_eq!(q.to_vec::<f32>(), vec![0.125, 0.5]);
}

#[test]
fn integer_division_family_follows_python_signs() {
    let a = Tensor::from_vec(vec![-7i64, 7, -7, 7]);
    let b = Tensor::from_vec(vec![2i64, -2, -2, 2]);
    assert_eq!(
        a.floor_divide(&b).unwrap().to_vec::<i64>(),
        vec![-4, -4, 3, 3]
    );
    assert_eq!(a.remainder(&b).unwrap().to_vec::<i64>(), vec![1, -1, -1, 1]);
    assert_eq!(a.fmod(&b).unwrap().to_vec::<i64>(), vec![-1, 1, -1, 1]);
    let trunc = a.div_mode(&b, Some(RoundingMode::Trunc)).unwrap();
    assert_eq!(trunc.to_vec::<i64>(), vec![-3, -3, 3, 3]);
    assert_eq!(trunc.dtype(), DType::Int64);
}

#[test]
fn integer_zero_divisor_is_a_runtime_error_and_float_gives_inf() {
    let a = Tensor::from_vec(vec![1i32, 2]);
    let z = Tensor::from_vec(vec![1i32, 0]);
    let e = a.floor_divide(&z).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Runtime);
    assert!(e.to_string().contains("ZeroDivisionError"));
    assert!(a.remainder_(&z).is_err());
    assert_eq!(a.to_vec::<i32>(), vec![1, 2]);
    let f = t64(&[1.0, -1.0], &[2]).div(&t64(&[0.0], &[1])).unwrap();
    assert_eq!(f.to_vec::<f64>(), vec![f64::INFINITY, f64::NEG_INFINITY]);
}

#[test]
fn broadcasting_and_promotion_in_binary_ops() {
    let a = Tensor::from_slice(&[1i32, 2, 3], &[3, 1]).unwrap();
    let b = Tensor::from_slice(&[0.5f32, 1.5], &[2]).unwrap();
    let m = a.maximum(&b).unwrap();
    assert_eq!(m.shape(), &[3, 2]);
    assert_eq!(m.dtype(), DType::Float32);
    assert_eq!(m.to_vec::<f32>(), vec![1.0, 1.5, 2.0, 2.0, 3.0, 3.0]);
    let err = a.add(&Tensor::zeros(&[4], DType::Int32)).err();
    assert!(err.is_none(), "(3,1) and (4,) broadcast");
    let bad = Tensor::zeros(&[3], DType::Float32).mul(&Tensor::zeros(&[4], DType::Float32));
    let msg = bad.unwrap_err().to_string();
    assert!(msg.contains('3') && msg.contains('4'));
}

#[test]
fn comparisons_produce_bool_and_handle_nan() {
    let a = t64(&[1.0, f64::NAN, 3.0], &[3]);
    let b = Tensor::scalar(1i64);
    assert_eq!(a.eq(&b).unwrap().to_vec::<bool>(), vec![true, false, false]);
    assert_eq!(a.ne(&b).unwrap().to_vec::<bool>(), vec![false, true, true]);
    assert_eq!(a.gt(&b).unwrap().dtype(), DType::Bool);
    assert_eq!(a.isnan().to_vec::<bool>(), vec![false, true, false]);
    assert!(!a.equal(&a).unwrap());
    assert!(a.allclose(&a, 1e-5, 1e-8, true).unwrap());
}

#[test]
fn pow_rules() {
    let i = Tensor::from_vec(vec![2i64, 3]);
    assert_eq!(
        i.pow(&Tensor::scalar(3i64)).unwrap().to_vec::<i64>(),
        vec![8, 27]
    );
    let e = i.pow(&Tensor::scalar(-1i64)).unwrap_err();
    assert!(e
        .to_string()
        .contains("Integers to negative integer powers"));
    let f = i.pow(&Tensor::scalar(0.5)).unwrap();
    assert_eq!(f.dtype(), DType::Float32);
    let base = Tensor::scalar(2i64).pow(&i).unwrap();
    assert_eq!(base.to_vec::<i64>(), vec![4, 8]);
}

#[test]
fn inplace_ops_refuse_wider_results_and_bump_versions() {
    let i = Tensor::from_vec(vec![1i64, 2]);
    let e = i.exp_().unwrap_err();
    assert!(e
        .to_string()
        .contains("result type Float can't be cast to the desired output type Long"));
    assert!(i
        .add_scaled_(&Tensor::scalar(1i64), Scalar::Float(0.5))
        .is_err());
    assert_eq!(i.version(), 0);
    let f = t64(&[1.0, 4.0, 9.0, 16.0], &[2, 2]);
    let col = f.select(1, 0).unwrap();
    col.sqrt_().unwrap();
    assert_eq!(f.to_vec::<f64>(), vec![1.0, 4.0, 3.0, 16.0]);
    assert_eq!(f.version(), 1);
    f.clamp_(Some(&Tensor::scalar(2.0)), Some(&Tensor::scalar(10.0)))
        .unwrap();
    assert_eq!(f.to_vec::<f64>(), vec![2.0, 4.0, 3.0, 10.0]);
}

#[test]
fn ternary_ops() {
    let c = Tensor::from_vec(vec![true, false]);
    let x = t64(&[1.0, 2.0], &[2]);
    let w = x.r#where(&c, &Tensor::scalar(-1i64)).unwrap();
    assert_eq!(w.to_vec::<f64>(), vec![1.0, -1.0]);
    assert!(x.r#where(&x, &x).is_err());
    let l = x
        .lerp(&t64(&[3.0, 6.0], &[2]), &Tensor::scalar(0.5))
        .unwrap();
    assert_eq!(l.to_vec::<f64>(), vec![2.0, 4.0]);
    let m = x.addcmul(&x, &x, Scalar::Int(2)).unwrap();
    assert_eq!(m.to_vec::<f64>(), vec![3.0, 10.0]);
    let d = x
        .addcdiv(&x, &t64(&[2.0, 4.0], &[2]), Scalar::Float(1.0))
        .unwrap();
    assert_eq!(d.to_vec::<f64>(), vec![1.5, 2.5]);
    let i = Tensor::from_vec(vec![1i64]);
    assert!(i.addcdiv(&i, &i, Scalar::Int(1)).is_err());
    assert!(x.clamp(None, None).is_err());
    let nan = t64(&[f64::NAN], &[1])
        .clamp(Some(&Tensor::scalar(0.0)), None)
        .unwrap();
    assert!(nan.to_vec::<f64>()[0].is_nan());
}

#[test]
fn large_inputs_take_the_parallel_path_with_same_results() {
    let n = 100_000;
    let v: Vec<f64> = (0..n).map(|k| k as f64 * 1e-3 - 50.0).collect();
    let a = Tensor::from_vec(v.clone());
    let r = a.remainder(&Tensor::scalar(3.0)).unwrap().to_vec::<f64>();
    for (k, x) in v.iter().enumerate().step_by(997) {
        let want = x - 3.0 * (x / 3.0).floor();
        assert!((r[k] - want).abs() < 1e-9, "{x}");
    }
    // A transposed (non-contiguous) view goes through the strided loop.
    let t = a.reshape(&[400, 250]).unwrap().transpose(0, 1).unwrap();
    let th = t.tanh().unwrap();
    assert_eq!(th.shape(), &[250, 400]);
    assert_eq!(th.get(&[3, 2]).unwrap().to_f64(), v[2 * 250 + 3].tanh());
}
