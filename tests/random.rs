//! Range creation and seeded sampling through the public Rust API.

use ferrograd::random::{self, Generator, Mt19937};
use ferrograd::{DType, ErrorKind, Tensor};

#[test]
fn mt19937_matches_the_reference_outputs() {
    // The first outputs of Matsumoto and Nishimura's mt19937ar.c for
    // init_genrand(5489), and the 10000th (4123659995, the value the C++
    // standard requires of std::mt19937).
    let mut mt = Mt19937::new(5489);
    let first: Vec<u32> = (0..5).map(|_| mt.next_u32()).collect();
    assert_eq!(
        first,
        [
            3_499_211_612,
            581_869_302,
            3_890_346_734,
            3_586_334_585,
            545_404_204
        ]
    );
    for _ in 5..9_999 {
        mt.next_u32();
    }
    assert_eq!(mt.next_u32(), 4_123_659_995);
}

#[test]
fn a_generator_draws_the_seeded_stream() {
    // float32 uniforms are the low 24 bits of successive words; float64
    // uniforms the low 53 bits of two words, the first one high.
    let g = Generator::new(5489);
    let u = Tensor::rand(&[2], DType::Float32, Some(&g)).unwrap();
    let words = [3_499_211_612u32, 581_869_302];
    let expect: Vec<f32> = words
        .iter()
        .map(|w| (w & 0xff_ffff) as f32 / 16_777_216.0)
        .collect();
    assert_eq!(u.to_vec::<f32>(), expect);
    let d = Tensor::rand(&[1], DType::Float64, Some(&g)).unwrap();
    let bits = (3_890_346_734u64 << 32) | 3_586_334_585;
    assert_eq!(
        d.to_vec::<f64>(),
        vec![(bits & ((1 << 53) - 1)) as f64 / (1u64 << 53) as f64]
    );
}

#[test]
fn arange_linspace_eye_values() {
    let a = Tensor::arange(0.0, 1.0, 0.25, Some(DType::Float64)).unwrap();
    assert_eq!(a.to_vec::<f64>(), vec![0.0, 0.25, 0.5, 0.75]);
    let b = Tensor::arange(5i64, -1i64, -2i64, None).unwrap();
    assert_eq!(b.dtype(), DType::Int64);
    assert_eq!(b.to_vec::<i64>(), vec![5, 3, 1]);
    assert_eq!(Tensor::arange(3i64, 3i64, 1i64, None).unwrap().numel(), 0);
    let e = Tensor::arange(0i64, 5i64, -1i64, None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Runtime);
    assert!(e.to_string().contains("inconsistent with step sign"));

    let l = Tensor::linspace(-1.0, 1.0, 5, DType::Float32).unwrap();
    assert_eq!(l.to_vec::<f32>(), vec![-1.0, -0.5, 0.0, 0.5, 1.0]);
    assert!(Tensor::linspace(0.0, 1.0, -2, DType::Float32).is_err());

    let i = Tensor::eye(2, Some(3), DType::Int32).unwrap();
    assert_eq!(i.shape(), &[2, 3]);
    assert_eq!(i.to_vec::<i32>(), vec![1, 0, 0, 0, 1, 0]);
}

#[test]
fn private_generators_replay_from_their_seed() {
    let g = Generator::new(42);
    let a = Tensor::randn(&[1000], DType::Float32, Some(&g)).unwrap();
    let b = Tensor::randn(&[1000], DType::Float32, Some(&g)).unwrap();
    assert_ne!(a.to_vec::<f32>(), b.to_vec::<f32>());
    g.manual_seed(42);
    let again = Tensor::randn(&[1000], DType::Float32, Some(&g)).unwrap();
    assert_eq!(a.to_vec::<f32>(), again.to_vec::<f32>());
    let other = Tensor::randn(&[1000], DType::Float32, Some(&Generator::new(43))).unwrap();
    assert_ne!(a.to_vec::<f32>(), other.to_vec::<f32>());
}

#[test]
fn samples_do_not_depend_on_the_thread_count() {
    // Large enough to be split over the pool.
    let n = 200_003;
    let draw = |threads: usize| {
        ferrograd::set_num_threads(threads);
        let g = Generator::new(7);
        let u = Tensor::rand(&[n], DType::Float64, Some(&g)).unwrap();
        let z = Tensor::randn(&[n], DType::Float32, Some(&g)).unwrap();
        let k = Tensor::randint(-5, 5, &[n], DType::Int64, Some(&g)).unwrap();
        (u.to_vec::<f64>(), z.to_vec::<f32>(), k.to_vec::<i64>())
    };
    let one = draw(1);
    let three = draw(3);
    ferrograd::set_num_threads(2);
    assert!(one == three);
}

#[test]
fn uniform_and_integer_ranges_hold() {
    let g = Generator::new(1);
    let u = Tensor::rand(&[100_000], DType::Float32, Some(&g)).unwrap();
    let v = u.to_vec::<f32>();
    assert!(v.iter().all(|&x| (0.0..1.0).contains(&x)));
    let mean = v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64;
    // 5 standard errors of the mean of U(0, 1): 5 * sqrt(1/12 / n).
    assert!((mean - 0.5).abs() < 5.0 * (1.0 / 12.0 / 1e5f64).sqrt());

    let k = Tensor::randint(3, 9, &[10_000], DType::Int32, Some(&g)).unwrap();
    let mut seen = [false; 6];
    for x in k.to_vec::<i64>() {
        assert!((3..9).contains(&x));
        seen[(x - 3) as usize] = true;
    }
    assert!(seen.iter().all(|&s| s));

    let p = Tensor::randperm(50, DType::Int64, Some(&g)).unwrap();
    let mut sorted = p.to_vec::<i64>();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..50).collect::<Vec<_>>());
}

#[test]
fn in_place_samplers_bump_the_version_and_check_arguments() {
    // A private generator: the default one is left to the state test.
    let g = Generator::new(3);
    let g = Some(&g);
    let t = Tensor::zeros(&[3, 4], DType::Float64);
    let v = t.transpose(0, 1).unwrap();
    let before = t.version();
    v.uniform_(2.0, 3.0, g).unwrap();
    assert!(t.version() > before);
    assert!(t.to_vec::<f64>().iter().all(|&x| (2.0..3.0).contains(&x)));
    assert_eq!(
        t.normal_(0.0, -1.0, g).unwrap_err().kind(),
        ErrorKind::Runtime
    );
    let ints = Tensor::zeros(&[4], DType::Int64);
    assert!(ints.uniform_(0.0, 1.0, g).is_err());
    ints.random_(Some(10), Some(12), g).unwrap();
    assert!(ints.to_vec::<i64>().iter().all(|&x| x == 10 || x == 11));
    let e = Tensor::randint(5, 5, &[2], DType::Int64, g).unwrap_err();
    assert!(e
        .to_string()
        .contains("random_ expects 'from' to be less than 'to', but got from=5 >= to=5"));
}

#[test]
fn default_generator_state_round_trips() {
    let state = random::default_generator().get_state();
    let a = Tensor::rand(&[16], DType::Float32, None).unwrap();
    random::default_generator().set_state(&state).unwrap();
    let b = Tensor::rand(&[16], DType::Float32, None).unwrap();
    assert_eq!(a.to_vec::<f32>(), b.to_vec::<f32>());
}
