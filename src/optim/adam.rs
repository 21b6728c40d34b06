//! Adam and its variants, built on running averages of the gradient and of
//! its square: Adam (AdamW with decoupled weight decay), NAdam, RAdam and
//! Adamax. Their per-step constants (bias corrections, step sizes) are
//! computed in f64 from each parameter's step count, as the Python loops
//! compute them.

use super::engine::{decay, lerp, max_nan, Real, Rule, States};

hyper_parameters! {
    /// Adam's hyper-parameters; `decoupled` gives AdamW's weight decay.
    pub struct Adam {
        lr, beta1, beta2, eps, weight_decay: f64,
        decoupled, amsgrad, maximize: bool,
    }
}

/// The running means of the gradient and of its square (`m`, `v`, stored
/// in `s[0]`, `s[1]`) after a step with gradient `g`.
#[inline(always)]
fn moments<L: Real>(beta1: f64, beta2: f64, g: L, s: &mut States<L>) -> (L, L) {
    let m = lerp(s[0], g, L::c(1.0 - beta1));
    let v = s[1] * L::c(beta2) + L::c(1.0 - beta2) * g * g;
    s[0] = m;
    s[1] = v;
    (m, v)
}

impl Rule for Adam {
    const NAME: &'static str = "adam_step";
    /// The step size `lr / (1 - beta1^t)` and `sqrt(1 - beta2^t)`.
    type Step = (f64, f64);

    /// `exp_avg`, `exp_avg_sq` and, with amsgrad, `max_exp_avg_sq`.
    fn states(&self) -> usize {
        2 + usize::from(self.amsgrad)
    }

    fn scalars(&self) -> usize {
        1
    }

    fn prepare(&self, scalars: &[f64]) -> (f64, f64) {
        let step = scalars[0];
        let step_size = self.lr / (1.0 - self.beta1.powf(step));
        (step_size, (1.0 - self.beta2.powf(step)).powf(0.5))
    }

    #[inline(always)]
    fn update<L: Real>(&self, k: Self::Step, g: L, x: L, s: &mut States<L>) -> L {
        let (step_size, bias2_sqrt) = k;
        let lr = self.decoupled.then_some(self.lr);
        let (g, x) = decay(g, x, self.maximize, self.weight_decay, lr);
        let (m, v) = moments(self.beta1, self.beta2, g, s);
        let v = if self.amsgrad {
            s[2] = max_nan(s[2], v);
            s[2]
        } else {
            v
        };
        x + L::c(-step_size) * m / (v.sqrt() / L::c(bias2_sqrt) + L::c(self.eps))
    }
}

hyper_parameters! {
    /// NAdam's hyper-parameters; `decoupled` gives NAdamW's weight decay.
    pub struct NAdam {
        lr, beta1, beta2, eps, weight_decay, momentum_decay: f64,
        decoupled, maximize: bool,
    }
}

impl NAdam {
    /// The momentum coefficient `mu_t` of step `t`:
    /// `beta1 (1 - 0.96^(t momentum_decay) / 2)`.
    pub fn mu(&self, step: f64) -> f64 {
        self.beta1 * (1.0 - 0.5 * 0.96f64.powf(step * self.momentum_decay))
    }
}

impl Rule for NAdam {
    const NAME: &'static str = "nadam_step";
    /// `1 - beta2^t` and the (negated) factors of the gradient and of the
    /// mean in the update.
    type Step = (f64, f64, f64);

    fn states(&self) -> usize {
        2
    }

    /// The step count and the product of `mu_1 ... mu_t`.
    fn scalars(&self) -> usize {
        2
    }

    fn prepare(&self, scalars: &[f64]) -> (f64, f64, f64) {
        let (step, product) = (scalars[0], scalars[1]);
        let (mu, mu_next) = (self.mu(step), self.mu(step + 1.0));
        (
            1.0 - self.beta2.powf(step),
            -self.lr * (1.0 - mu) / (1.0 - product),
            -self.lr * mu_next / (1.0 - product * mu_next),
        )
    }

    #[inline(always)]
    fn update<L: Real>(&self, k: Self::Step, g: L, x: L, s: &mut States<L>) -> L {
        let (bias2, c_grad, c_avg) = k;
        let lr = self.decoupled.then_some(self.lr);
        let (g, x) = decay(g, x, self.maximize, self.weight_decay, lr);
        let (m, v) = moments(self.beta1, self.beta2, g, s);
        let denom = (v / L::c(bias2)).sqrt() + L::c(self.eps);
        let x = x + L::c(c_grad) * g / denom;
        x + L::c(c_avg) * m / denom
    }
}

hyper_parameters! {
    /// RAdam's hyper-parameters; `decoupled` gives decoupled weight decay.
    pub struct RAdam {
        lr, beta1, beta2, eps, weight_decay: f64,
        decoupled, maximize: bool,
    }
}

impl Rule for RAdam {
    const NAME: &'static str = "radam_step";
    /// `1 - beta1^t`, `sqrt(1 - beta2^t)` and the rectification factor
    /// (`None` while the variance is intractable, `rho_t <= 5`).
    type Step = (f64, f64, Option<f64>);

    fn states(&self) -> usize {
        2
    }

    fn scalars(&self) -> usize {
        1
    }

    fn prepare(&self, scalars: &[f64]) -> (f64, f64, Option<f64>) {
        let step = scalars[0];
        let bias1 = 1.0 - self.beta1.powf(step);
        let bias2 = 1.0 - self.beta2.powf(step);
        // The length of the approximated simple moving average, at t -> infinity and at t.
        let rho_inf = 2.0 / (1.0 - self.beta2) - 1.0;
        let rho_t = rho_inf - 2.0 * step * self.beta2.powf(step) / bias2;
        let rect = (rho_t > 5.0).then(|| {
            ((rho_t - 4.0) * (rho_t - 2.0) * rho_inf / ((rho_inf - 4.0) * (rho_inf - 2.0) * rho_t))
                .powf(0.5)
        });
        (bias1, bias2.powf(0.5), rect)
    }

    #[inline(always)]
    fn update<L: Real>(&self, k: Self::Step, g: L, x: L, s: &mut States<L>) -> L {
        let (bias1, bias2_sqrt, rect) = k;
        let lr = self.decoupled.then_some(self.lr);
        let (g, x) = decay(g, x, self.maximize, self.weight_decay, lr);
        let (m, v) = moments(self.beta1, self.beta2, g, s);
        let step = m / L::c(bias1) * L::c(self.lr);
        match rect {
            Some(rect) => {
                let adaptive = L::c(1.0) / (v.sqrt() + L::c(self.eps)) * L::c(bias2_sqrt);
                x - step * adaptive * L::c(rect)
            }
            // Momentum SGD with a bias-corrected mean.
            None => x - step,
        }
    }
}

hyper_parameters! {
    /// Adamax's hyper-parameters (torch's names).
    pub struct Adamax {
        lr, beta1, beta2, eps, weight_decay: f64,
        maximize: bool,
    }
}

impl Rule for Adamax {
    const NAME: &'static str = "adamax_step";
    /// The step size `lr / (1 - beta1^t)`.
    type Step = f64;

    /// `exp_avg` and `exp_inf`.
    fn states(&self) -> usize {
        2
    }

    fn scalars(&self) -> usize {
        1
    }

    fn prepare(&self, scalars: &[f64]) -> f64 {
        self.lr / (1.0 - self.beta1.powf(scalars[0]))
    }

    #[inline(always)]
    fn update<L: Real>(&self, clr: f64, g: L, x: L, s: &mut States<L>) -> L {
        let (g, x) = decay(g, x, self.maximize, self.weight_decay, None);
        let m = lerp(s[0], g, L::c(1.0 - self.beta1));
        let u = max_nan(s[1] * L::c(self.beta2), g.abs() + L::c(self.eps));
        s[0] = m;
        s[1] = u;
        x + L::c(-clr) * m / u
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{close, one_step};
    use super::super::Update;
    use super::*;

    fn adam(amsgrad: bool, decoupled: bool) -> Adam {
        Adam {
            lr: 0.1,
            beta1: 0.9,
            beta2: 0.999,
            eps: 0.0,
            weight_decay: 0.5,
            decoupled,
            amsgrad,
            maximize: false,
        }
    }

    #[test]
    fn adam_first_step_moves_each_weight_by_lr_against_its_gradient_sign() {
        // After one step m / sqrt(v) (bias corrected) is g / |g|.
        let h = Adam {
            weight_decay: 0.0,
            ..adam(false, false)
        };
        let (p, s) = one_step(
            Update::Adam(h),
            &[1.0, -2.0, 0.5],
            &[0.3, -4.0, 1e-3],
            &[&[0.0; 3], &[0.0; 3]],
            &[1.0],
        );
        close(&p, &[0.9, -1.9, 0.4]);
        close(&s[0], &[0.03, -0.4, 1e-4]);
    }

    #[test]
    fn adamw_decays_the_weight_and_amsgrad_keeps_the_larger_second_moment() {
        // Step 2 from m = 0, v = 1 (and v_max = 4): with g = 0 the moments only shrink.
        let (p, s) = one_step(
            Update::Adam(adam(true, true)),
            &[2.0],
            &[0.0],
            &[&[0.0], &[1.0], &[4.0]],
            &[2.0],
        );
        close(&s[1], &[0.999]);
        close(&s[2], &[4.0]);
        close(&p, &[2.0 * (1.0 - 0.1 * 0.5)]);
        // Coupled decay adds wd p to the gradient instead: g = 1.
        let (_, s) = one_step(
            Update::Adam(adam(false, false)),
            &[2.0],
            &[0.0],
            &[&[0.0], &[0.0]],
            &[1.0],
        );
        close(&s[0], &[0.1]);
    }

    #[test]
    fn nadam_applies_the_gradient_and_the_mean_with_their_schedule_factors() {
        let h = NAdam {
            lr: 0.1,
            beta1: 0.9,
            beta2: 0.5,
            eps: 0.0,
            weight_decay: 0.0,
            momentum_decay: 0.004,
            decoupled: false,
            maximize: false,
        };
        let mu = 0.9 * (1.0 - 0.5 * 0.96f64.powf(0.004));
        let mu_next = 0.9 * (1.0 - 0.5 * 0.96f64.powf(0.008));
        let (p, _) = one_step(
            Update::NAdam(h),
            &[1.0],
            &[2.0],
            &[&[0.0], &[0.0]],
            &[1.0, mu],
        );
        // m = 0.2, v = 2, denom = sqrt(v / 0.5) = 2.
        let want = 1.0
            - 0.1 * (1.0 - mu) / (1.0 - mu) * 2.0 / 2.0
            - 0.1 * mu_next / (1.0 - mu * mu_next) * 0.2 / 2.0;
        close(&p, &[want]);
    }

    #[test]
    fn radam_is_momentum_sgd_until_rho_t_exceeds_five_then_rectifies() {
        let h = RAdam {
            lr: 0.1,
            beta1: 0.5,
            beta2: 0.9,
            eps: 0.0,
            weight_decay: 0.0,
            decoupled: false,
            maximize: false,
        };
        // Step 1: rho_t = 1, not rectified: p -= lr m / (1 - beta1).
        let (p, _) = one_step(Update::RAdam(h), &[1.0], &[2.0], &[&[0.0], &[0.0]], &[1.0]);
        close(&p, &[1.0 - 0.1 * 2.0]);
        // Step 10: rectified.
        let t = 10.0f64;
        let rho_inf = 2.0 / 0.1 - 1.0;
        let rho_t = rho_inf - 2.0 * t * 0.9f64.powf(t) / (1.0 - 0.9f64.powf(t));
        assert!(rho_t > 5.0);
        let r = ((rho_t - 4.0) * (rho_t - 2.0) * rho_inf
            / ((rho_inf - 4.0) * (rho_inf - 2.0) * rho_t))
            .sqrt();
        let (p, s) = one_step(Update::RAdam(h), &[1.0], &[2.0], &[&[1.0], &[4.0]], &[t]);
        let (m, v) = (s[0][0], s[1][0]);
        close(&[m, v], &[1.5, 0.9 * 4.0 + 0.1 * 4.0]);
        let m_hat = m / (1.0 - 0.5f64.powf(t));
        close(
            &p,
            &[1.0 - 0.1 * m_hat * (1.0 - 0.9f64.powf(t)).sqrt() / v.sqrt() * r],
        );
    }

    #[test]
    fn adamax_divides_by_the_decayed_infinity_norm() {
        let h = Adamax {
            lr: 0.1,
            beta1: 0.9,
            beta2: 0.5,
            eps: 0.25,
            weight_decay: 0.0,
            maximize: false,
        };
        // u = max(0.5 * 8, |2| + 0.25) = 4, then max(0.5 * 1, 2.25) = 2.25.
        let (p, s) = one_step(
            Update::Adamax(h),
            &[1.0, 1.0],
            &[2.0, -2.0],
            &[&[0.0, 0.0], &[8.0, 1.0]],
            &[1.0],
        );
        close(&s[1], &[4.0, 2.25]);
        close(
            &p,
            &[1.0 - 0.1 / 0.1 * 0.2 / 4.0, 1.0 + 0.1 / 0.1 * 0.2 / 2.25],
        );
    }
}
