//! Optimizer steps over whole parameter groups in one call (torch's
//! "foreach" steps): SGD, ASGD, Rprop, Adagrad, RMSprop, Adadelta, Adam
//! (and AdamW), NAdam, RAdam and Adamax.
//!
//! Each step updates parameters and their state tensors in place, element
//! by element (in f32 for float32 and the 16-bit floats, in f64 for
//! float64, as torch computes them), and bumps their version counters as
//! any in-place op does. What is not elementwise belongs to the caller
//! (`ferrograd.optim`): the step counts, state allocation, argument checks
//! and scalar state such as ASGD's `eta`; the caller hands each
//! parameter's scalars (its step count, ...) to [`step`]. Steps run under
//! no-grad rules: writing a leaf that requires grad while grad mode is on
//! is refused, as for any in-place op.
//!
//! One engine (`engine.rs`) walks the tensors; each optimizer states only
//! its hyper-parameters and what happens to one element (`sgd.rs`,
//! `adaptive.rs`, `adam.rs`).
//!
//! ```
//! use ferrograd::optim::{step, Adagrad, Update};
//! use ferrograd::Tensor;
//!
//! let p = Tensor::from_slice(&[1.0f64, -2.0], &[2]).unwrap();
//! let g = Tensor::from_slice(&[2.0f64, -4.0], &[2]).unwrap();
//! let sum = p.zeros_like().unwrap();
//! let h = Adagrad { lr: 0.5, lr_decay: 0.0, weight_decay: 0.0, eps: 0.0, maximize: false };
//! // Parameter 0's state list holds its running sum; its step count is 1.
//! step(&Update::Adagrad(h), &[p.clone()], &[g], &[&[sum]], &[&[1.0]]).unwrap();
//! assert_eq!(p.to_vec::<f64>(), vec![0.5, -1.5]);
//! ```

use crate::{Error, Result, Scalar, Tensor};

/// The documentation of a hyper-parameter field, by its (torch's) name:
/// one sentence for every optimizer that has the option.
macro_rules! option_doc {
    (lr) => {
        "Learning rate."
    };
    (lr_decay) => {
        "Learning-rate decay: step `t` uses `lr / (1 + (t - 1) lr_decay)`."
    };
    (momentum) => {
        "Momentum factor (0 for none)."
    };
    (dampening) => {
        "Dampening of the momentum's new contribution."
    };
    (nesterov) => {
        "Nesterov momentum."
    };
    (weight_decay) => {
        "Weight decay (0 for none): an L2 penalty added to the gradient or, with `decoupled`, \
         a decay of the weights."
    };
    (decoupled) => {
        "Decay the weights directly (AdamW's decay) instead of adding an L2 penalty."
    };
    (maximize) => {
        "Ascend the objective instead of descending it."
    };
    (beta1) => {
        "Decay rate of the running mean of the gradient."
    };
    (beta2) => {
        "Decay rate of the running mean of its square (Adamax: of the infinity norm)."
    };
    (eps) => {
        "Added for numerical stability where the update divides or takes a root."
    };
    (amsgrad) => {
        "Use the maximum of past squared-gradient averages (AMSGrad)."
    };
    (momentum_decay) => {
        "How fast the momentum schedule `mu_t` warms up."
    };
    (alpha) => {
        "RMSprop: smoothing constant of the running averages; ASGD: the power in the decay of \
         the step size `eta`."
    };
    (t0) => {
        "The step from which ASGD averages the iterates."
    };
    (centered) => {
        "Normalize by an estimate of the gradient's variance."
    };
    (rho) => {
        "Decay rate of the running averages."
    };
    (lambd) => {
        "Decay term: the parameter is scaled by `1 - lambd eta`."
    };
    (etaminus) => {
        "Factor that shrinks a step size where the gradient's sign flips."
    };
    (etaplus) => {
        "Factor that grows a step size where the sign holds."
    };
    (step_size_min) => {
        "Smallest step size."
    };
    (step_size_max) => {
        "Largest step size."
    };
}

/// Declares an optimizer's hyper-parameter struct, its fields listed in
/// groups of one type (all public, documented by [`option_doc`]), and its
/// `from_options`, which reads every field by its name.
macro_rules! hyper_parameters {
    (
        $(#[$meta:meta])*
        pub struct $name:ident { $($($field:ident),+: $ty:ty),+ $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq)]
        pub struct $name {
            $($(#[doc = option_doc!($field)] pub $field: $ty,)+)+
        }

        impl $name {
            /// Reads every field from `options` by its name (a flag is
            /// true when its number is nonzero); a missing or unknown name
            /// is a TypeError.
            pub fn from_options(options: &[(&str, f64)]) -> crate::Result<Self> {
                let rule = stringify!($name);
                crate::optim::no_unknown(rule, &[$($(stringify!($field)),+),+], options)?;
                Ok(Self {
                    $($($field: crate::optim::FromOption::read(
                        crate::optim::option(rule, options, stringify!($field))?,
                    ),)+)+
                })
            }
        }
    };
}

mod adam;
mod adaptive;
mod engine;
mod sgd;

pub use adam::{Adam, Adamax, NAdam, RAdam};
pub use adaptive::{Adadelta, Adagrad, RmsProp};
pub use sgd::{Asgd, Rprop, Sgd};

/// A hyper-parameter's type, read from the number [`Update::from_options`]
/// is given.
trait FromOption {
    fn read(v: f64) -> Self;
}

impl FromOption for f64 {
    fn read(v: f64) -> f64 {
        v
    }
}

impl FromOption for bool {
    fn read(v: f64) -> bool {
        v != 0.0
    }
}

/// The value of option `name` for `rule`.
fn option(rule: &str, options: &[(&str, f64)], name: &str) -> Result<f64> {
    match options.iter().find(|(k, _)| *k == name) {
        Some(&(_, v)) => Ok(v),
        None => Err(Error::type_error(format!(
            "{rule}: missing hyper-parameter '{name}'"
        ))),
    }
}

/// Refuses options that `rule` does not have (a misspelt name would
/// otherwise be ignored).
fn no_unknown(rule: &str, names: &[&str], options: &[(&str, f64)]) -> Result<()> {
    match options.iter().find(|(k, _)| !names.contains(k)) {
        Some((k, _)) => Err(Error::type_error(format!(
            "{rule}: unknown hyper-parameter '{k}' (it takes {})",
            names.join(", ")
        ))),
        None => Ok(()),
    }
}

/// Declares [`Update`], its names and [`step`]'s dispatch from one list.
macro_rules! updates {
    ($($variant:ident => $name:literal: $scalars:literal,)*) => {
        /// An optimizer's update rule with its hyper-parameters: what
        /// [`step`] applies to a parameter group.
        #[derive(Debug, Clone, Copy, PartialEq)]
        pub enum Update {
            $(
                #[doc = concat!("`", $name, "`; per parameter scalars: ", $scalars, ".")]
                $variant($variant),
            )*
        }

        impl Update {
            /// The rule called `name` (`"sgd"`, `"adam"`, ... as listed on
            /// the variants), its hyper-parameters read from `options` by
            /// their names (the field names of its struct).
            pub fn from_options(name: &str, options: &[(&str, f64)]) -> Result<Update> {
                match name {
                    $($name => Ok(Update::$variant($variant::from_options(options)?)),)*
                    other => Err(Error::value(format!(
                        "unknown optimizer update '{other}'; expected one of {}",
                        [$($name),*].join(", ")
                    ))),
                }
            }

            /// The rule's name, as [`Update::from_options`] takes it.
            pub fn name(&self) -> &'static str {
                match self {
                    $(Update::$variant(_) => $name,)*
                }
            }
        }

        /// One optimizer step over a parameter group: `params[i]` moves by
        /// the rule applied to `grads[i]`, `states[j][i]` (its `j`-th state
        /// tensor, updated in place) and `scalars[j][i]` (its `j`-th scalar,
        /// as listed on each [`Update`] variant).
        ///
        /// Gradients and states must be contiguous tensors of their
        /// parameter's shape and floating dtype, and must not overlap it or
        /// each other. Everything is checked before anything is written.
        pub fn step(
            update: &Update,
            params: &[Tensor],
            grads: &[Tensor],
            states: &[&[Tensor]],
            scalars: &[&[f64]],
        ) -> Result<()> {
            if crate::compile::records() {
                let states: Vec<Vec<Tensor>> = states.iter().map(|s| s.to_vec()).collect();
                let scalars: Vec<Vec<f64>> = scalars.iter().map(|s| s.to_vec()).collect();
                return Tensor::optimizer_step(update, params, grads, &states, &scalars);
            }
            match *update {
                $(Update::$variant(rule) => engine::run(rule, params, grads, states, scalars),)*
            }
        }
    };
}

/// [`step`] for a rule whose scalars are kept in tensors: the step count
/// (`adam`, `adamax`, `radam`, `adagrad`, `nadam`, `asgd`), kept per
/// parameter in `counts[i]` (a one-element tensor, as `state["step"]` in
/// torch), goes up by one, in place. `kept` holds the rule's other numbers
/// as one-element tensors, and is empty for the rules not named here:
/// - NAdam: the product of its momentum coefficients per parameter
///   (`state["mu_product"]`), multiplied by this step's coefficient in its
///   own dtype (as `mu_product *= mu` does); the step's scalars are the
///   new count and the new product.
/// - ASGD: `eta` of every parameter, then `mu` of every parameter
///   (`state["eta"]`, `state["mu"]`); the step's scalars are their values,
///   and afterwards they are set to [`Asgd::schedule`] of the new count,
///   rounded to their dtype (as `eta.copy_(...)` does).
///
/// The other rules' scalar is the new count. Nothing is written when the
/// step fails its checks. A captured program records the counts and kept
/// numbers as tensors, so its replay counts on from their values then.
pub fn step_counted(
    update: &Update,
    params: &[Tensor],
    grads: &[Tensor],
    states: &[&[Tensor]],
    counts: &[Tensor],
    kept: &[Tensor],
) -> Result<()> {
    if crate::compile::records() {
        let states: Vec<Vec<Tensor>> = states.iter().map(|s| s.to_vec()).collect();
        return Tensor::optimizer_step_counted(update, params, grads, &states, counts, kept);
    }
    let n = params.len();
    let one_each = |what: &str, ts: &[Tensor], per: usize| -> Result<()> {
        if ts.len() != per * n || ts.iter().any(|c| c.numel() != 1) {
            return Err(Error::value(format!(
                "optimizer step: expected {per} one-element {what} per parameter ({n} \
                 parameters), got {} of {:?} elements",
                ts.len(),
                ts.iter().map(Tensor::numel).collect::<Vec<_>>()
            )));
        }
        Ok(())
    };
    one_each("step count", counts, 1)?;
    match update {
        Update::NAdam(_) => one_each("momentum product", kept, 1)?,
        Update::Asgd(_) => one_each("`eta` and `mu`", kept, 2)?,
        _ if !kept.is_empty() => {
            return Err(Error::value(format!(
                "optimizer step: only nadam and asgd keep numbers in tensors besides the step \
                 count, not {}",
                update.name()
            )))
        }
        _ => {}
    }
    let next = counts
        .iter()
        .map(|c| Ok(c.item()?.to_f64() + 1.0))
        .collect::<Result<Vec<f64>>>()?;
    let values =
        |ts: &[Tensor]| -> Result<Vec<f64>> { ts.iter().map(|t| Ok(t.item()?.to_f64())).collect() };
    // The kept numbers' new values, written only once the step has run.
    let (scalars, new_kept): (Vec<Vec<f64>>, Vec<f64>) = match update {
        Update::NAdam(h) => {
            let products = kept
                .iter()
                .zip(&next)
                .map(|(p, &t)| p.mul(&Tensor::scalar(h.mu(t))))
                .collect::<Result<Vec<Tensor>>>()?;
            let products = values(&products)?;
            (vec![next.clone(), products.clone()], products)
        }
        Update::Asgd(h) => {
            let (etas, mus): (Vec<f64>, Vec<f64>) = next.iter().map(|&t| h.schedule(t)).unzip();
            let now = vec![values(&kept[..n])?, values(&kept[n..])?];
            (now, [etas, mus].concat())
        }
        _ => (vec![next.clone()], Vec::new()),
    };
    let scalars: Vec<&[f64]> = scalars.iter().map(Vec::as_slice).collect();
    step(update, params, grads, states, &scalars)?;
    for (t, &v) in kept.iter().zip(&new_kept) {
        t.fill_(Scalar::Float(v))?;
    }
    let one = Tensor::scalar(1i64);
    for c in counts {
        c.add_scaled_(&one, Scalar::Int(1))?;
    }
    Ok(())
}

impl Tensor {
    /// [`step_counted`] as a captured program records it: the rule, and
    /// the tensors' sources (the counts' and products' included).
    fn optimizer_step_counted(
        update: &Update,
        params: &[Tensor],
        grads: &[Tensor],
        states: &[Vec<Tensor>],
        counts: &[Tensor],
        products: &[Tensor],
    ) -> Result<()> {
        crate::autograd::captured!(Tensor::optimizer_step_counted (update: &Update, params: &[Tensor], grads: &[Tensor], states: &[Vec<Tensor>], counts: &[Tensor], products: &[Tensor]) -> () {
            let states: Vec<&[Tensor]> = states.iter().map(Vec::as_slice).collect();
            step_counted(update, params, grads, &states, counts, products)
        })
    }

    /// [`step`] as a captured program records it: the rule, the tensors'
    /// sources and the per-parameter numbers (which the caller's guards
    /// must cover, as they are replayed as recorded).
    fn optimizer_step(
        update: &Update,
        params: &[Tensor],
        grads: &[Tensor],
        states: &[Vec<Tensor>],
        scalars: &[Vec<f64>],
    ) -> Result<()> {
        crate::autograd::captured!(Tensor::optimizer_step (update: &Update, params: &[Tensor], grads: &[Tensor], states: &[Vec<Tensor>], scalars: &[Vec<f64>]) -> () {
            let states: Vec<&[Tensor]> = states.iter().map(Vec::as_slice).collect();
            let scalars: Vec<&[f64]> = scalars.iter().map(Vec::as_slice).collect();
            step(update, params, grads, &states, &scalars)
        })
    }
}

impl<'a> crate::compile::Capturable<'a> for &'a Update {
    type Kept = Update;
    type Owned = Update;
    fn keep(&self, _: &mut crate::compile::Recording) -> Option<Update> {
        Some(**self)
    }
    fn rebuild(kept: &Update, _: &[Tensor]) -> Update {
        *kept
    }
    fn view(owned: &'a Update) -> Self {
        owned
    }
}

updates! {
    Sgd => "sgd": "`fresh` (1 for a momentum buffer created by this step, else 0; with momentum only)",
    Asgd => "asgd": "`eta`, `mu` (their values before this step; with [`step_counted`], kept in tensors)",
    Rprop => "rprop": "none",
    Adagrad => "adagrad": "`step` (the step count after this step: 1 on the first)",
    RmsProp => "rmsprop": "none",
    Adadelta => "adadelta": "none",
    Adam => "adam": "`step`",
    NAdam => "nadam": "`step`, `mu_product` (the momentum product after this step)",
    RAdam => "radam": "`step`",
    Adamax => "adamax": "`step`",
}

/// One SGD step. `bufs` holds a momentum buffer per parameter when
/// `momentum != 0` (empty otherwise); `fresh[i]` says that buffer `i` is
/// new and starts as the (decayed) gradient.
pub fn sgd_step(
    params: &[Tensor],
    grads: &[Tensor],
    bufs: &[Tensor],
    fresh: &[bool],
    h: Sgd,
) -> Result<()> {
    if h.momentum == 0.0 {
        return step(&Update::Sgd(h), params, grads, &[], &[]);
    }
    let fresh: Vec<f64> = fresh.iter().map(|&f| f64::from(u8::from(f))).collect();
    step(&Update::Sgd(h), params, grads, &[bufs], &[&fresh])
}

/// One Adam (or AdamW) step. `steps[i]` is parameter i's step count after
/// this step (1 on the first); `max_sqs` holds the running maxima when
/// `amsgrad` (empty otherwise).
pub fn adam_step(
    params: &[Tensor],
    grads: &[Tensor],
    exp_avgs: &[Tensor],
    exp_avg_sqs: &[Tensor],
    max_sqs: &[Tensor],
    steps: &[f64],
    h: Adam,
) -> Result<()> {
    let mut states = vec![exp_avgs, exp_avg_sqs];
    if h.amsgrad {
        states.push(max_sqs);
    }
    step(&Update::Adam(h), params, grads, &states, &[steps])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_read_by_name_and_checked() {
        let options = [
            ("lr", 0.5),
            ("lr_decay", 0.1),
            ("weight_decay", 0.0),
            ("eps", 1e-10),
            ("maximize", 1.0),
        ];
        let u = Update::from_options("adagrad", &options).unwrap();
        let want = Adagrad {
            lr: 0.5,
            lr_decay: 0.1,
            weight_decay: 0.0,
            eps: 1e-10,
            maximize: true,
        };
        assert_eq!(u, Update::Adagrad(want));
        assert_eq!(u.name(), "adagrad");
        let missing = Update::from_options("adagrad", &options[1..]).unwrap_err();
        assert!(missing.to_string().contains("missing hyper-parameter 'lr'"));
        let mut typo = options.to_vec();
        typo.push(("lr_decy", 0.0));
        let unknown = Update::from_options("adagrad", &typo).unwrap_err();
        assert!(unknown
            .to_string()
            .contains("unknown hyper-parameter 'lr_decy'"));
        assert!(Update::from_options("adamm", &options).is_err());
    }

    #[test]
    fn nadam_counts_its_steps_and_multiplies_its_momentum_products() {
        let h = NAdam {
            lr: 0.1,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            weight_decay: 0.0,
            momentum_decay: 4e-3,
            decoupled: false,
            maximize: false,
        };
        let t = |v: &[f32]| Tensor::from_slice(v, &[v.len()]).unwrap();
        let (p, g) = (t(&[1.0, -2.0]), t(&[0.5, 0.25]));
        let (m, v) = (p.zeros_like().unwrap(), p.zeros_like().unwrap());
        let count = Tensor::scalar_tensor(0.0, crate::DType::Float32);
        let product = Tensor::scalar_tensor(1.0, crate::DType::Float32);
        // The oracle: `step` given the numbers, the product kept in float32
        // (mu_t rounded to float32, then the product of two float32s rounded).
        let (q, mq, vq) = (
            t(&[1.0, -2.0]),
            p.zeros_like().unwrap(),
            p.zeros_like().unwrap(),
        );
        let mut want = 1.0f32;
        for k in 1..=3 {
            let states = [std::slice::from_ref(&m), std::slice::from_ref(&v)];
            let (one, update) = (std::slice::from_ref(&count), Update::NAdam(h));
            let prods = std::slice::from_ref(&product);
            step_counted(
                &update,
                std::slice::from_ref(&p),
                std::slice::from_ref(&g),
                &states,
                one,
                prods,
            )
            .unwrap();
            want *= h.mu(f64::from(k)) as f32;
            let states = [std::slice::from_ref(&mq), std::slice::from_ref(&vq)];
            let scalars = [f64::from(k), f64::from(want)];
            step(
                &update,
                std::slice::from_ref(&q),
                std::slice::from_ref(&g),
                &states,
                &[&scalars[..1], &scalars[1..]],
            )
            .unwrap();
            assert_eq!(count.to_vec::<f32>(), vec![k as f32]);
            assert_eq!(product.to_vec::<f32>(), vec![want]);
            assert_eq!(p.to_vec::<f32>(), q.to_vec::<f32>());
        }
        // Products belong to NAdam only, one per parameter.
        let adam = Update::from_options(
            "adam",
            &[
                ("lr", 0.1),
                ("beta1", 0.9),
                ("beta2", 0.999),
                ("eps", 1e-8),
                ("weight_decay", 0.0),
                ("decoupled", 0.0),
                ("amsgrad", 0.0),
                ("maximize", 0.0),
            ],
        )
        .unwrap();
        let states = [std::slice::from_ref(&m), std::slice::from_ref(&v)];
        let one = std::slice::from_ref(&count);
        let err = step_counted(
            &adam,
            std::slice::from_ref(&p),
            std::slice::from_ref(&g),
            &states,
            one,
            std::slice::from_ref(&product),
        )
        .unwrap_err();
        assert!(err.to_string().contains("only nadam"), "{err}");
        let err = step_counted(
            &Update::NAdam(h),
            std::slice::from_ref(&p),
            std::slice::from_ref(&g),
            &states,
            one,
            &[],
        )
        .unwrap_err();
        assert!(err.to_string().contains("momentum product"), "{err}");
        assert_eq!(count.to_vec::<f32>(), vec![3.0]);
    }

    #[test]
    fn list_lengths_are_checked_before_anything_is_written() {
        let p = Tensor::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
        let g = Tensor::from_slice(&[1.0f32, 1.0], &[2]).unwrap();
        let h = Adagrad {
            lr: 0.5,
            lr_decay: 0.0,
            weight_decay: 0.0,
            eps: 0.0,
            maximize: false,
        };
        let sum = p.zeros_like().unwrap();
        // No step counts given.
        let one = std::slice::from_ref(&p);
        let err = step(&Update::Adagrad(h), one, &[g], &[&[sum]], &[]).unwrap_err();
        assert!(err.to_string().contains("1 scalar lists"), "{err}");
        assert_eq!(p.to_vec::<f32>(), vec![1.0, 2.0]);
    }
}

/// What the rules' unit tests share: one step of a rule on float64 values.
#[cfg(test)]
pub(crate) mod testing {
    use super::{step, Update};
    use crate::Tensor;

    /// The parameter and the states after one step of `update` on one
    /// float64 parameter `p` with gradient `g`, its `states` and its
    /// `scalars`.
    pub(crate) fn one_step(
        update: Update,
        p: &[f64],
        g: &[f64],
        states: &[&[f64]],
        scalars: &[f64],
    ) -> (Vec<f64>, Vec<Vec<f64>>) {
        let t = |v: &[f64]| Tensor::from_slice(v, &[v.len()]).unwrap();
        let (p, g) = (t(p), t(g));
        let states: Vec<[Tensor; 1]> = states.iter().map(|s| [t(s)]).collect();
        let state_lists: Vec<&[Tensor]> = states.iter().map(|s| &s[..]).collect();
        let scalars: Vec<[f64; 1]> = scalars.iter().map(|&v| [v]).collect();
        let scalar_lists: Vec<&[f64]> = scalars.iter().map(|s| &s[..]).collect();
        let before = p.version();
        step(
            &update,
            std::slice::from_ref(&p),
            &[g],
            &state_lists,
            &scalar_lists,
        )
        .unwrap();
        assert!(
            p.version() > before,
            "the step bumps the parameter's version"
        );
        let states = states.iter().map(|[s]| s.to_vec::<f64>()).collect();
        (p.to_vec::<f64>(), states)
    }

    /// Asserts that `got` and `want` agree to a few ulps.
    pub(crate) fn close(got: &[f64], want: &[f64]) {
        assert_eq!(got.len(), want.len());
        for (a, b) in got.iter().zip(want) {
            assert!(
                (a - b).abs() <= 1e-14 * b.abs().max(1.0),
                "{got:?} != {want:?}"
            );
        }
    }
}
