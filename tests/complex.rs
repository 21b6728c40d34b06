//! Complex tensors through the public Rust API: element types, promotion,
//! arithmetic checked against hand-computed values, and gradients under
//! torch's convention (`z.grad = dL/dx + i dL/dy` for a real loss `L`).

use ferrograd::{Complex, ComplexDouble, DType, ErrorKind, Scalar, Tensor};

fn c(re: f64, im: f64) -> ComplexDouble {
    Complex::new(re, im)
}

#[test]
fn complex_elements_round_trip_and_promote() {
    let z = Tensor::from_slice(&[c(1.0, 2.0), c(-3.0, 0.5)], &[2]).unwrap();
    assert_eq!(z.dtype(), DType::Complex128);
    assert_eq!(z.to_vec::<ComplexDouble>(), vec![c(1.0, 2.0), c(-3.0, 0.5)]);
    // To a real dtype: the real part; from one: no imaginary part.
    assert_eq!(z.to_vec::<f64>(), vec![1.0, -3.0]);
    let x = Tensor::from_slice(&[2.0f32], &[1]).unwrap();
    assert_eq!(
        x.to_dtype(DType::Complex64).to_vec::<ComplexDouble>(),
        vec![c(2.0, 0.0)]
    );
    assert_eq!(DType::Complex64.promote(DType::Float64), DType::Complex128);
    assert_eq!(DType::Complex64.promote(DType::Int64), DType::Complex64);
    assert_eq!(x.mul(&z).unwrap().dtype(), DType::Complex128);
    assert_eq!(z.get(&[1]).unwrap(), Scalar::Complex(c(-3.0, 0.5)));
}

#[test]
fn arithmetic_matches_hand_computed_values() {
    let a = Tensor::from_slice(&[c(1.0, 2.0)], &[1]).unwrap();
    let b = Tensor::from_slice(&[c(3.0, -1.0)], &[1]).unwrap();
    // (1+2i)(3-i) = 5+5i; (1+2i)/(3-i) = (1+7i)/10.
    assert_eq!(
        a.mul(&b).unwrap().to_vec::<ComplexDouble>(),
        vec![c(5.0, 5.0)]
    );
    let q = a.div(&b).unwrap().to_vec::<ComplexDouble>()[0];
    assert!((q - c(0.1, 0.7)).norm() < 1e-15);
    assert_eq!(a.abs().unwrap().to_vec::<f64>(), vec![5f64.sqrt()]);
    assert_eq!(
        a.conj().unwrap().to_vec::<ComplexDouble>(),
        vec![c(1.0, -2.0)]
    );
    let m = Tensor::from_slice(
        &[c(0.0, 1.0), c(1.0, 0.0), c(2.0, 0.0), c(0.0, -1.0)],
        &[2, 2],
    )
    .unwrap();
    // [[i, 1], [2, -i]]^2 = [[i*i + 2, i - i], [2i - 2i, 2 + (-i)(-i)]] = [[1, 0], [0, 1]].
    let sq = m.matmul(&m).unwrap().to_vec::<ComplexDouble>();
    assert_eq!(sq, vec![c(1.0, 0.0), c(0.0, 0.0), c(0.0, 0.0), c(1.0, 0.0)]);
}

#[test]
fn ordering_is_refused_with_torchs_error() {
    let z = Tensor::from_slice(&[c(1.0, 2.0)], &[1]).unwrap();
    let e = z.lt(&z).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotImplemented);
    assert!(e
        .to_string()
        .contains("\"lt_cpu\" not implemented for 'ComplexDouble'"));
}

#[test]
fn gradients_follow_the_conjugate_wirtinger_convention() {
    // L = sum |z|^2 = sum x^2 + y^2, so z.grad = 2x + 2iy = 2z.
    let z = Tensor::from_slice(&[c(1.0, 2.0), c(-0.5, 0.25)], &[2]).unwrap();
    z.set_requires_grad(true).unwrap();
    let l = z
        .mul(&z.conj().unwrap())
        .unwrap()
        .real()
        .unwrap()
        .sum(None, false, None)
        .unwrap();
    l.backward().unwrap();
    assert_eq!(
        z.grad().unwrap().to_vec::<ComplexDouble>(),
        vec![c(2.0, 4.0), c(-1.0, 0.5)]
    );
    // A complex scalar needs an explicit gradient.
    let s = z.sum(None, false, None).unwrap();
    let e = s.backward().unwrap_err();
    assert!(e.to_string().contains("only for real scalar outputs"));
}
