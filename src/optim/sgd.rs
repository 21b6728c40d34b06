//! Steps along the gradient or its sign: SGD (with momentum), ASGD and
//! Rprop.

use super::engine::{decay, max_nan, min_nan, sign, Real, Rule, States};

hyper_parameters! {
    /// SGD's hyper-parameters (torch's names).
    pub struct Sgd {
        lr, momentum, dampening, weight_decay: f64,
        nesterov, maximize: bool,
    }
}

impl Rule for Sgd {
    const NAME: &'static str = "sgd_step";
    /// Whether the momentum buffer is new (it then starts as the gradient).
    type Step = bool;

    fn states(&self) -> usize {
        usize::from(self.momentum != 0.0)
    }

    fn scalars(&self) -> usize {
        self.states()
    }

    fn prepare(&self, scalars: &[f64]) -> bool {
        scalars.first().is_some_and(|&fresh| fresh != 0.0)
    }

    #[inline(always)]
    fn update<L: Real>(&self, fresh: bool, g: L, x: L, s: &mut States<L>) -> L {
        let (d, x) = decay(g, x, self.maximize, self.weight_decay, None);
        if self.momentum == 0.0 {
            return x.plus_scaled(L::c(-self.lr), d);
        }
        // b = d on the first step, then momentum b + (1 - dampening) d.
        let b = if fresh {
            d
        } else {
            (s[0] * L::c(self.momentum)).plus_scaled(L::c(1.0 - self.dampening), d)
        };
        s[0] = b;
        let d = if self.nesterov {
            d.plus_scaled(L::c(self.momentum), b)
        } else {
            b
        };
        x.plus_scaled(L::c(-self.lr), d)
    }
}

hyper_parameters! {
    /// ASGD's hyper-parameters. Its step size `eta` and averaging weight
    /// `mu` change every step ([`Asgd::schedule`], torch's) and come with
    /// each parameter as scalars.
    pub struct Asgd {
        lr, lambd, alpha, t0, weight_decay: f64,
        maximize: bool,
    }
}

impl Asgd {
    /// `eta` and `mu` for the step after step `t`: `lr / (1 + lambd lr
    /// t)^alpha` and `1 / max(1, t - t0)`, in float64.
    pub fn schedule(&self, t: f64) -> (f64, f64) {
        let eta = self.lr / (1.0 + self.lambd * self.lr * t).powf(self.alpha);
        (eta, 1.0 / (t - self.t0).max(1.0))
    }
}

impl Rule for Asgd {
    const NAME: &'static str = "asgd_step";
    /// `eta` and `mu`.
    type Step = (f64, f64);

    fn states(&self) -> usize {
        1
    }

    fn scalars(&self) -> usize {
        2
    }

    fn prepare(&self, scalars: &[f64]) -> (f64, f64) {
        (scalars[0], scalars[1])
    }

    #[inline(always)]
    fn update<L: Real>(&self, (eta, mu): (f64, f64), g: L, x: L, s: &mut States<L>) -> L {
        let (g, x) = decay(g, x, self.maximize, self.weight_decay, None);
        let x = (x * L::c(1.0 - self.lambd * eta)).plus_scaled(L::c(-eta), g);
        // The average `ax` follows the parameter until averaging starts.
        s[0] = if mu != 1.0 {
            s[0] + (x - s[0]) * L::c(mu)
        } else {
            x
        };
        x
    }
}

hyper_parameters! {
    /// Rprop's hyper-parameters.
    pub struct Rprop {
        etaminus, etaplus, step_size_min, step_size_max: f64,
        maximize: bool,
    }
}

impl Rule for Rprop {
    const NAME: &'static str = "rprop_step";
    type Step = ();

    /// The previous gradient and the step sizes.
    fn states(&self) -> usize {
        2
    }

    #[inline(always)]
    fn update<L: Real>(&self, _: (), g: L, x: L, s: &mut States<L>) -> L {
        let (g, x) = decay(g, x, self.maximize, 0.0, None);
        let agreement = g * s[0];
        let zero = L::c(0.0);
        let factor = if agreement > zero {
            L::c(self.etaplus)
        } else if agreement < zero {
            L::c(self.etaminus)
        } else {
            L::c(1.0)
        };
        let size = min_nan(
            max_nan(s[1] * factor, L::c(self.step_size_min)),
            L::c(self.step_size_max),
        );
        // Where the sign flipped the last step overshot: no step now, and
        // no flip seen next time.
        let g = if agreement < zero { zero } else { g };
        s[0] = g;
        s[1] = size;
        x + L::c(-1.0) * sign(g) * size
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{close, one_step};
    use super::super::Update;
    use super::*;

    #[test]
    fn sgd_with_nesterov_momentum_follows_the_update_rule() {
        let h = Sgd {
            lr: 0.1,
            momentum: 0.9,
            dampening: 0.0,
            weight_decay: 0.0,
            nesterov: true,
            maximize: false,
        };
        // A fresh buffer is g; p -= lr (g + 0.9 g).
        let (p, s) = one_step(
            Update::Sgd(h),
            &[1.0, 2.0],
            &[0.5, -1.0],
            &[&[7.0, 7.0]],
            &[1.0],
        );
        close(&p, &[1.0 - 0.1 * 0.95, 2.0 + 0.1 * 1.9]);
        close(&s[0], &[0.5, -1.0]);
        // An old buffer b becomes 0.9 b + g; p -= lr (g + 0.9 (0.9 b + g)).
        let (p, s) = one_step(Update::Sgd(h), &[1.0], &[0.5], &[&[2.0]], &[0.0]);
        close(&s[0], &[0.9 * 2.0 + 0.5]);
        close(&p, &[1.0 - 0.1 * (0.5 + 0.9 * 2.3)]);
    }

    #[test]
    fn sgd_without_momentum_decays_and_maximizes() {
        let h = Sgd {
            lr: 0.5,
            momentum: 0.0,
            dampening: 0.0,
            weight_decay: 0.25,
            nesterov: false,
            maximize: true,
        };
        // d = -g + wd p
        let (p, _) = one_step(Update::Sgd(h), &[2.0], &[1.0], &[], &[]);
        close(&p, &[2.0 - 0.5 * (-1.0 + 0.25 * 2.0)]);
    }

    #[test]
    fn asgd_scales_steps_and_averages_once_mu_drops_below_one() {
        let h = Asgd {
            lr: 0.5,
            lambd: 0.1,
            alpha: 0.75,
            t0: 1e6,
            weight_decay: 0.0,
            maximize: false,
        };
        let (p, s) = one_step(Update::Asgd(h), &[1.0], &[2.0], &[&[5.0]], &[0.5, 1.0]);
        let moved = 1.0 * (1.0 - 0.1 * 0.5) - 0.5 * 2.0;
        close(&p, &[moved]);
        close(&s[0], &[moved]);
        let (_, s) = one_step(Update::Asgd(h), &[1.0], &[2.0], &[&[5.0]], &[0.5, 0.25]);
        close(&s[0], &[5.0 + (moved - 5.0) * 0.25]);
    }

    #[test]
    fn counted_asgd_reads_and_schedules_eta_and_mu_in_their_tensors() {
        use crate::{DType, Tensor};
        let h = Asgd {
            lr: 0.2,
            lambd: 0.3,
            alpha: 0.75,
            t0: 1.0,
            weight_decay: 0.1,
            maximize: false,
        };
        let scalar = |v: f64| Tensor::scalar_tensor(v, DType::Float32);
        let p = Tensor::from_slice(&[1.0f64, -2.0], &[2]).unwrap();
        let ax = Tensor::zeros(&[2], DType::Float64);
        let (count, eta, mu) = (scalar(0.0), scalar(0.2), scalar(1.0));
        let g = [0.5f64, 0.25];
        let (mut x, mut avg) = ([1.0f64, -2.0], [0.0f64; 2]);
        let (mut eta_now, mut mu_now) = (0.2f32 as f64, 1.0);
        for t in 1..=4 {
            let grad = Tensor::from_slice(&g, &[2]).unwrap();
            super::super::step_counted(
                &Update::Asgd(h),
                std::slice::from_ref(&p),
                &[grad],
                &[std::slice::from_ref(&ax)],
                std::slice::from_ref(&count),
                &[eta.clone(), mu.clone()],
            )
            .unwrap();
            // By hand: the step uses the tensors' values, then they take
            // the schedule of the new count, rounded to float32.
            for i in 0..2 {
                let gi = g[i] + 0.1 * x[i];
                x[i] = x[i] * (1.0 - 0.3 * eta_now) - eta_now * gi;
                avg[i] = if mu_now != 1.0 {
                    avg[i] + (x[i] - avg[i]) * mu_now
                } else {
                    x[i]
                };
            }
            let t = t as f64;
            eta_now = (0.2 / (1.0 + 0.3 * 0.2 * t).powf(0.75)) as f32 as f64;
            mu_now = (1.0 / (t - 1.0).max(1.0)) as f32 as f64;
            close(&p.to_vec::<f64>(), &x);
            close(&ax.to_vec::<f64>(), &avg);
            assert_eq!(count.to_vec::<f32>(), vec![t as f32]);
            assert_eq!(eta.to_vec::<f32>(), vec![eta_now as f32]);
            assert_eq!(mu.to_vec::<f32>(), vec![mu_now as f32]);
        }
        // Averaging started (mu fell below 1 after step 2).
        assert!(mu_now < 1.0 && avg != x);
    }

    #[test]
    fn rprop_grows_holds_and_shrinks_step_sizes_by_the_gradient_sign() {
        let h = Rprop {
            etaminus: 0.5,
            etaplus: 2.0,
            step_size_min: 0.01,
            step_size_max: 0.3,
            maximize: false,
        };
        // Same sign (grows, capped), no previous gradient (holds), a flip
        // (shrinks, and the gradient counts as zero: no step).
        let (p, s) = one_step(
            Update::Rprop(h),
            &[1.0, 1.0, 1.0],
            &[3.0, -1.0, -2.0],
            &[&[1.0, 0.0, 4.0], &[0.2, 0.2, 0.2]],
            &[],
        );
        close(&s[1], &[0.3, 0.2, 0.1]);
        close(&s[0], &[3.0, -1.0, 0.0]);
        close(&p, &[0.7, 1.2, 1.0]);
    }
}
