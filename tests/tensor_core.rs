//! Integration tests of the tensor core through the public Rust API:
//! views share storage and version counters, promotion follows torch, and
//! bad input gives errors of the right kind.

use ferrograd::{broadcast_shapes, DType, ErrorKind, Scalar, Tensor};

fn t32(data: &[f32], shape: &[usize]) -> Tensor {
    Tensor::from_slice(data, shape).unwrap()
}

#[test]
fn transpose_is_a_view_and_writes_reach_the_base() {
    let a = t32(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let t = a.transpose(0, 1).unwrap();
    assert!(t.storage().same(a.storage()));
    assert_eq!(t.shape(), &[3, 2]);
    assert_eq!(t.strides(), &[1, 3]);
    assert_eq!(t.to_vec::<f32>(), vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    let v0 = a.version();
    t.select(0, 2).unwrap().fill_(0.0).unwrap();
    assert_eq!(a.to_vec::<f32>(), vec![1.0, 2.0, 0.0, 4.0, 5.0, 0.0]);
    assert_eq!(a.version(), v0 + 1);
    assert!(t.shares_version_counter(&a));
    assert!(t.base().unwrap().same(&a));
}

#[test]
fn reshape_copies_only_when_a_view_is_impossible() {
    let a = t32(&(0..12).map(|x| x as f32).collect::<Vec<_>>(), &[3, 4]);
    let v = a.reshape(&[2, 6]).unwrap();
    assert!(v.storage().same(a.storage()));
    let t = a.t().unwrap();
    assert!(t.view(&[12]).is_err());
    let r = t.reshape(&[12]).unwrap();
    assert!(!r.storage().same(a.storage()));
    // Column-major walk of the 3x4 matrix.
    let expected: Vec<f32> = (0..4)
        .flat_map(|c| (0..3).map(move |r| (r * 4 + c) as f32))
        .collect();
    assert_eq!(r.to_vec::<f32>(), expected);
}

#[test]
fn broadcast_add_promotes_like_torch() {
    let i = Tensor::from_slice(&[1i32, 2, 3], &[3, 1]).unwrap();
    let f = t32(&[0.5, 1.5], &[2]);
    let s = i.add(&f).unwrap();
    assert_eq!(s.dtype(), DType::Float32);
    assert_eq!(s.shape(), &[3, 2]);
    assert_eq!(s.to_vec::<f32>(), vec![1.5, 2.5, 2.5, 3.5, 3.5, 4.5]);
    // A wrapped Rust integer keeps int32; a wrapped float goes to the default.
    assert_eq!(i.add(&Tensor::scalar(7i64)).unwrap().dtype(), DType::Int32);
    assert_eq!(i.mul(&Tensor::scalar(0.5)).unwrap().dtype(), DType::Float32);
    // A zero-dim float64 tensor does not widen a float32 tensor.
    let z = Tensor::scalar_tensor(1.0, DType::Float64);
    assert_eq!(f.add(&z).unwrap().dtype(), DType::Float32);
}

#[test]
fn shape_errors_name_the_sizes_and_kinds() {
    let a = t32(&[0.0; 6], &[2, 3]);
    let b = t32(&[0.0; 4], &[4]);
    let e = a.add(&b).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Runtime);
    assert!(
        e.to_string().contains("(3)") && e.to_string().contains("(4)"),
        "{e}"
    );
    let e = a.transpose(0, 2).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Index);
    let e = a.view(&[4, 2]).unwrap_err();
    assert!(
        e.to_string().contains("[4, 2]") && e.to_string().contains('6'),
        "{e}"
    );
    assert!(broadcast_shapes(&[2, 3], &[3, 2]).is_err());
}

#[test]
fn in_place_ops_check_overlap_and_dtype() {
    let a = t32(&[1.0, 2.0], &[2, 1]);
    let e = a
        .expand(&[2, 3])
        .unwrap()
        .add_(&Tensor::scalar(1.0))
        .unwrap_err();
    assert!(e.to_string().contains("single memory location"), "{e}");
    let i = Tensor::from_slice(&[1i64, 2], &[2]).unwrap();
    assert!(i.add_(&Tensor::scalar(0.5)).is_err());
    // Aliasing input through another layout is read before being written.
    let m = t32(&[1.0, 2.0, 3.0, 4.0], &[2, 2]);
    m.add_(&m.t().unwrap()).unwrap();
    assert_eq!(m.to_vec::<f32>(), vec![2.0, 5.0, 5.0, 8.0]);
}

#[test]
fn large_elementwise_ops_are_identical_across_thread_counts() {
    let n = 1 << 18;
    let a: Vec<f32> = (0..n).map(|i| (i as f32).sin()).collect();
    let b: Vec<f32> = (0..n).map(|i| (i as f32).cos()).collect();
    let (ta, tb) = (Tensor::from_vec(a.clone()), Tensor::from_vec(b.clone()));
    let before = ferrograd::num_threads();
    ferrograd::set_num_threads(1);
    let one = ta.add(&tb).unwrap().to_vec::<f32>();
    ferrograd::set_num_threads(2);
    let two = ta.add(&tb).unwrap().to_vec::<f32>();
    ferrograd::set_num_threads(before);
    let expected: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    assert_eq!(one, expected);
    assert_eq!(two, expected);
}

#[test]
fn scalars_and_items_round_trip() {
    let t = Tensor::full(&[2, 2], 2.5, DType::Float64);
    assert_eq!(t.get(&[1, 1]).unwrap(), Scalar::Float(2.5));
    assert!(t.item().is_err());
    assert_eq!(Tensor::scalar(true).item().unwrap(), Scalar::Bool(true));
    assert_eq!(t.to_dtype(DType::Int32).to_vec::<i32>(), vec![2, 2, 2, 2]);
}

#[test]
fn sixteen_bit_floats_compute_in_float32_and_round_once() {
    use ferrograd::{bf16, f16};
    let a = Tensor::from_slice(&[f16::from_f32(1.5), f16::from_f32(-2.25)], &[2]).unwrap();
    let b = Tensor::from_slice(&[f16::from_f32(0.1), f16::from_f32(3.0)], &[2]).unwrap();
    let s = a.add(&b).unwrap();
    assert_eq!(s.dtype(), DType::Float16);
    // 1.5 + f16(0.1) and -2.25 + 3, each rounded once from float32.
    let want: Vec<f16> = [(1.5f32, 0.1f32), (-2.25, 3.0)]
        .iter()
        .map(|&(x, y)| f16::from_f32(x + f16::from_f32(y).to_f32()))
        .collect();
    assert_eq!(s.to_vec::<f16>(), want);
    let e = a.exp().unwrap();
    assert_eq!(e.to_vec::<f16>()[0], f16::from_f32(1.5f32.exp()));
    // float16 with bfloat16 promotes to float32; casts round to nearest even.
    let h = Tensor::from_slice(&[bf16::from_f32(2.0)], &[1]).unwrap();
    assert_eq!(a.mul(&h).unwrap().dtype(), DType::Float32);
    assert_eq!(DType::Float16.promote(DType::BFloat16), DType::Float32);
    assert_eq!(DType::UInt8.promote(DType::Int8), DType::Int16);
    let c = t32(&[1.0 + 1.0 / 256.0 + 1.0 / 65536.0], &[1]).to_dtype(DType::BFloat16);
    assert_eq!(c.to_vec::<bf16>()[0].to_f32(), 1.0 + 1.0 / 128.0);
    // A product of 16-bit matrices, and a gradient of the leaf's dtype.
    let m = Tensor::from_slice(
        &[
            f16::from_f32(1.0),
            f16::from_f32(2.0),
            f16::from_f32(3.0),
            f16::from_f32(4.0),
        ],
        &[2, 2],
    )
    .unwrap();
    m.set_requires_grad(true).unwrap();
    let p = m.matmul(&m).unwrap();
    assert_eq!(
        p.to_vec::<f16>()
            .iter()
            .map(|v| v.to_f32())
            .collect::<Vec<_>>(),
        vec![7.0, 10.0, 15.0, 22.0]
    );
    let loss = p.sum(None, false, None).unwrap();
    loss.backward().unwrap();
    let g = m.grad().unwrap();
    assert_eq!(g.dtype(), DType::Float16);
    // d sum(M M) / dM = 1 M^T + M^T 1 (1 the all-ones matrix).
    let ones = [[1.0f32; 2]; 2];
    let mv = [[1.0f32, 2.0], [3.0, 4.0]];
    let mut want = vec![];
    for i in 0..2 {
        for j in 0..2 {
            let mut v = 0.0;
            for k in 0..2 {
                v += ones[i][k] * mv[j][k] + mv[k][i] * ones[k][j];
            }
            want.push(v);
        }
    }
    assert_eq!(
        g.to_vec::<f16>()
            .iter()
            .map(|v| v.to_f32())
            .collect::<Vec<_>>(),
        want
    );
}

#[test]
fn narrow_integers_wrap_like_twos_complement() {
    let a = Tensor::from_slice(&[100i8, -128, 7], &[3]).unwrap();
    let d = a.mul(&a).unwrap();
    assert_eq!(d.dtype(), DType::Int8);
    assert_eq!(d.to_vec::<i8>(), vec![100i8.wrapping_mul(100), 0, 49]);
    let u = Tensor::from_slice(&[0u8, 200], &[2]).unwrap();
    assert_eq!(u.neg().unwrap().to_vec::<u8>(), vec![0, 56]);
    assert_eq!(
        u.add(&Tensor::scalar(Scalar::Int(-1)))
            .unwrap()
            .to_vec::<u8>(),
        vec![255, 199]
    );
    let f = Tensor::from_slice(&[-1.7f32, 300.5], &[2]).unwrap();
    assert_eq!(f.to_dtype(DType::UInt8).to_vec::<u8>(), vec![255, 44]);
    assert_eq!(u.sum(None, false, None).unwrap().dtype(), DType::Int64);
}

#[test]
fn resized_keeps_values_in_memory_and_grows_only_unshared_storage() {
    let a = t32(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[6]);
    let small = a.resized(&[2, 2], None).unwrap();
    assert!(small.storage().same(a.storage()));
    assert!(small.shares_version_counter(&a));
    assert_eq!(small.to_vec::<f32>(), vec![1.0, 2.0, 3.0, 4.0]);
    // `a` and `small` share the storage: growing it is refused.
    let err = small.resized(&[3, 3], None).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Runtime);
    drop(a);
    let grown = small.resized(&[3, 3], None).unwrap();
    assert_eq!(
        grown.to_vec::<f32>(),
        vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 0.0, 0.0, 0.0]
    );
    // Autograd state is shared with the handle it replaces.
    let leaf = t32(&[1.0, 2.0], &[2]);
    let next = leaf.resized(&[1], None).unwrap();
    next.set_requires_grad(true).unwrap();
    assert!(leaf.requires_grad());
    assert!(next.resized(&[2], None).is_err());
}

#[test]
fn set_to_reads_the_source_storage_and_never_past_it() {
    let src = t32(&(0..10).map(|x| x as f32).collect::<Vec<_>>(), &[10]);
    let t = t32(&[0.0], &[1]);
    let v0 = t.version();
    let s = t.set_to(&src, 2, &[2, 2], Some(&[1, 3])).unwrap();
    assert_eq!(s.to_vec::<f32>(), vec![2.0, 5.0, 3.0, 6.0]);
    assert!(s.storage().same(src.storage()) && s.shares_version_counter(&t));
    assert_eq!(s.version(), v0 + 1);
    assert!(!s.is_view());
    let err = t.set_to(&src, 8, &[2, 2], Some(&[1, 3])).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Runtime);
    let ints = Tensor::from_slice(&[1i64, 2], &[2]).unwrap();
    assert!(t.set_to(&ints, 0, &[2], None).is_err());
    let e = t.set_to_empty().unwrap();
    assert_eq!((e.shape(), e.numel()), (&[0usize][..], 0));
}
