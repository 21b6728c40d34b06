//! Shape ops and indexing through the Rust API, checked against hand-derived
//! values.

use ferrograd::ops::TensorIndex;
use ferrograd::{DType, ErrorKind, Scalar, Tensor};

fn arange(n: usize, shape: &[usize]) -> Tensor {
    let v: Vec<i64> = (0..n as i64).collect();
    Tensor::from_slice(&v, shape).unwrap()
}

fn ints(v: &[i64]) -> Tensor {
    Tensor::from_vec(v.to_vec())
}

fn slice(start: Option<i64>, stop: Option<i64>, step: i64) -> TensorIndex {
    TensorIndex::Slice { start, stop, step }
}

#[test]
fn cat_promotes_and_skips_legacy_empty() {
    let a = arange(4, &[2, 2]);
    let b = Tensor::from_slice(&[0.5f32, 1.5], &[2, 1]).unwrap();
    let empty = Tensor::zeros(&[0], DType::Float64);
    let out = Tensor::cat(&[a, empty, b], 1).unwrap();
    assert_eq!(out.shape(), &[2, 3]);
    assert_eq!(out.dtype(), DType::Float64);
    assert_eq!(out.to_vec::<f64>(), vec![0.0, 1.0, 0.5, 2.0, 3.0, 1.5]);
    let err = Tensor::cat(&[arange(6, &[2, 3]), arange(4, &[2, 2])], 0).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Runtime);
    assert!(err.to_string().contains("Expected size 3 but got size 2"));
}

#[test]
fn stack_flip_roll_repeat_by_hand() {
    let a = arange(3, &[3]);
    let s = Tensor::stack(&[a.clone(), a.clone()], 1).unwrap();
    assert_eq!(s.shape(), &[3, 2]);
    assert_eq!(s.to_vec::<i64>(), vec![0, 0, 1, 1, 2, 2]);
    let m = arange(6, &[2, 3]);
    assert_eq!(
        m.flip(&[1]).unwrap().to_vec::<i64>(),
        vec![2, 1, 0, 5, 4, 3]
    );
    assert_eq!(
        m.flip(&[0, 1]).unwrap().to_vec::<i64>(),
        vec![5, 4, 3, 2, 1, 0]
    );
    let t = m.transpose(0, 1).unwrap(); // [[0,3],[1,4],[2,5]]
    assert_eq!(
        t.flip(&[0]).unwrap().to_vec::<i64>(),
        vec![2, 5, 1, 4, 0, 3]
    );
    assert_eq!(
        m.roll(&[1], &[1]).unwrap().to_vec::<i64>(),
        vec![2, 0, 1, 5, 3, 4]
    );
    assert_eq!(
        m.roll(&[-2], &[]).unwrap().to_vec::<i64>(),
        vec![2, 3, 4, 5, 0, 1]
    );
    let r = a.repeat(&[2, 2]).unwrap();
    assert_eq!(r.shape(), &[2, 6]);
    assert_eq!(r.to_vec::<i64>(), vec![0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2]);
    let ri = a.repeat_interleave(&ints(&[2, 0, 1]), Some(0)).unwrap();
    assert_eq!(ri.to_vec::<i64>(), vec![0, 0, 2]);
}

#[test]
fn tril_triu_diag_by_hand() {
    let m = arange(9, &[3, 3]);
    assert_eq!(
        m.tril(0).unwrap().to_vec::<i64>(),
        vec![0, 0, 0, 3, 4, 0, 6, 7, 8]
    );
    assert_eq!(
        m.triu(1).unwrap().to_vec::<i64>(),
        vec![0, 1, 2, 0, 0, 5, 0, 0, 0]
    );
    assert_eq!(m.diag(0).unwrap().to_vec::<i64>(), vec![0, 4, 8]);
    assert_eq!(m.diag(-1).unwrap().to_vec::<i64>(), vec![3, 7]);
    let d = ints(&[1, 2]).diag(1).unwrap();
    assert_eq!(d.shape(), &[3, 3]);
    assert_eq!(d.to_vec::<i64>(), vec![0, 1, 0, 0, 0, 2, 0, 0, 0]);
    let e = ints(&[1, 2]).diag_embed(0, -2, -1).unwrap();
    assert_eq!(e.to_vec::<i64>(), vec![1, 0, 0, 2]);
}

#[test]
fn basic_index_is_a_view_and_advanced_index_copies() {
    let t = arange(24, &[2, 3, 4]);
    let v = t
        .index(&[
            TensorIndex::Int(1),
            slice(None, None, 2),
            TensorIndex::NewAxis,
        ])
        .unwrap();
    assert_eq!(v.shape(), &[2, 1, 4]);
    assert!(v.is_view() && v.shares_version_counter(&t));
    assert_eq!(v.to_vec::<i64>(), vec![12, 13, 14, 15, 20, 21, 22, 23]);

    // Advanced indices separated by a slice: their dim goes first.
    let a = t
        .index(&[
            TensorIndex::Tensor(ints(&[0, 1])),
            TensorIndex::full(),
            TensorIndex::Tensor(ints(&[3, 0])),
        ])
        .unwrap();
    assert_eq!(a.shape(), &[2, 3]);
    assert_eq!(a.to_vec::<i64>(), vec![3, 7, 11, 12, 16, 20]);
    assert!(!a.is_view());

    // Adjacent: in place.
    let b = t
        .index(&[
            TensorIndex::full(),
            TensorIndex::Tensor(ints(&[2, 0])),
            TensorIndex::Tensor(ints(&[1, -1])),
        ])
        .unwrap();
    assert_eq!(b.shape(), &[2, 2]);
    assert_eq!(b.to_vec::<i64>(), vec![9, 3, 21, 15]);

    let mask = Tensor::from_slice(&[true, false, true], &[3]).unwrap();
    let c = t
        .index(&[
            TensorIndex::Ellipsis,
            TensorIndex::Tensor(mask),
            TensorIndex::Int(0),
        ])
        .unwrap();
    assert_eq!(c.shape(), &[2, 2]);
    assert_eq!(c.to_vec::<i64>(), vec![0, 8, 12, 20]);
}

#[test]
fn index_errors_have_torch_kinds() {
    let t = arange(6, &[3, 2]);
    let e = t.index(&[TensorIndex::Int(5)]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Index);
    assert_eq!(
        e.to_string(),
        "index 5 is out of bounds for dimension 0 with size 3"
    );
    let e = t.index(&[slice(None, None, -1)]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Value);
    let bad = Tensor::from_slice(&[true, false], &[2]).unwrap();
    let e = t.index(&[TensorIndex::Tensor(bad)]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Index);
    assert!(e
        .to_string()
        .contains("The shape of the mask [2] at index 0"));
    let f = Tensor::from_slice(&[0.0f32], &[1]).unwrap();
    assert_eq!(
        t.index(&[TensorIndex::Tensor(f)]).unwrap_err().kind(),
        ErrorKind::Index
    );
}

#[test]
fn index_put_writes_through_views_and_scatters() {
    let t = Tensor::zeros(&[2, 3], DType::Float32);
    let v0 = t.version();
    t.index_put_(
        &[TensorIndex::full(), TensorIndex::Int(1)],
        &Tensor::scalar(2.5),
        false,
    )
    .unwrap();
    assert!(t.version() > v0);
    assert_eq!(t.to_vec::<f32>(), vec![0.0, 2.5, 0.0, 0.0, 2.5, 0.0]);
    t.index_put_(
        &[
            TensorIndex::Tensor(ints(&[0, 0])),
            TensorIndex::Tensor(ints(&[2, 2])),
        ],
        &Tensor::from_slice(&[1i64, 2], &[2]).unwrap(),
        true,
    )
    .unwrap();
    assert_eq!(t.to_vec::<f32>(), vec![0.0, 2.5, 3.0, 0.0, 2.5, 0.0]);
}

#[test]
fn gather_scatter_index_ops_by_hand() {
    let m = arange(6, &[2, 3]);
    let idx = Tensor::from_slice(&[2i64, 0, 1, 1], &[2, 2]).unwrap();
    assert_eq!(m.gather(1, &idx).unwrap().to_vec::<i64>(), vec![2, 0, 4, 4]);
    let bad = Tensor::from_slice(&[7i64], &[1, 1]).unwrap();
    let e = m.gather(1, &bad).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Runtime);
    assert_eq!(
        e.to_string(),
        "index 7 is out of bounds for dimension 1 with size 3"
    );
    let i32idx = Tensor::from_slice(&[0i32], &[1, 1]).unwrap();
    assert_eq!(m.gather(1, &i32idx).unwrap_err().kind(), ErrorKind::Runtime);

    let z = Tensor::zeros(&[2, 3], DType::Int64);
    let s = z
        .scatter_add(1, &idx, &Tensor::ones(&[2, 2], DType::Int64))
        .unwrap();
    assert_eq!(s.to_vec::<i64>(), vec![1, 0, 1, 0, 2, 0]);
    let s = z
        .scatter_value(0, &ints(&[1, 0]).view(&[1, 2]).unwrap(), Scalar::Int(9))
        .unwrap();
    assert_eq!(s.to_vec::<i64>(), vec![0, 9, 0, 9, 0, 0]);

    let a = m
        .index_add(0, &ints(&[1, 1]), &arange(6, &[2, 3]), Scalar::Int(10))
        .unwrap();
    assert_eq!(a.to_vec::<i64>(), vec![0, 1, 2, 33, 54, 75]);
    assert_eq!(
        m.index_select(1, &ints(&[2, 2, 0]))
            .unwrap()
            .to_vec::<i64>(),
        vec![2, 2, 0, 5, 5, 3]
    );
    let mask = Tensor::from_slice(&[true, false, true], &[3]).unwrap();
    assert_eq!(
        m.masked_fill(&mask, Scalar::Int(-1))
            .unwrap()
            .to_vec::<i64>(),
        vec![-1, 1, -1, -1, 4, -1]
    );
    assert_eq!(
        m.masked_select(&mask).unwrap().to_vec::<i64>(),
        vec![0, 2, 3, 5]
    );
    assert_eq!(m.take(&ints(&[-1, 0])).unwrap().to_vec::<i64>(), vec![5, 0]);
    let nz = ints(&[0, 3, 0, 1]).view(&[2, 2]).unwrap().nonzero();
    assert_eq!(nz.shape(), &[2, 2]);
    assert_eq!(nz.to_vec::<i64>(), vec![0, 1, 1, 1]);
}

#[test]
fn docs_example_column_view_and_row_gather() {
    let t = Tensor::from_slice(&[0i64, 1, 2, 3, 4, 5], &[2, 3]).unwrap();
    let col = t
        .index(&[TensorIndex::full(), TensorIndex::Int(-1)])
        .unwrap();
    assert_eq!(col.to_vec::<i64>(), vec![2, 5]);
    assert!(col.is_view());
    let picked = t
        .index(&[TensorIndex::Tensor(Tensor::from_vec(vec![1i64, 0]))])
        .unwrap();
    assert_eq!(picked.to_vec::<i64>(), vec![3, 4, 5, 0, 1, 2]);
}
