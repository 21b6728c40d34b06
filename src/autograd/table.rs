//! Derivative tables: every differentiable op is one row of a table, and
//! the table generates the op's method (and its in-place form).
//!
//! A row states, for one op: the node it records and over which inputs,
//! what it saves, its backward, its forward-mode formula and how its
//! backward handles a batch of gradients (`is_grads_batched`, vmap). The
//! generated method always runs the same steps in the same order:
//!
//! 1. `before`: argument checks and early returns (grad mode still on, so
//!    an op that hands off to another records that op);
//! 2. record: a [`Recorder`](super::Recorder) over the inputs, which turns
//!    grad mode and forward AD off for the compute;
//! 3. `compute`: the kernel call that produces the outputs;
//! 4. only when the recorder is active: the forward formula (run for
//!    inputs with tangents) and the node with its saves and backward.
//!
//! The in-place form runs [`inplace`](super::inplace) first (which records
//! the out-of-place op on the old value when a gradient or tangent is
//! involved, and otherwise checks that the write is allowed) and then its
//! in-place kernel.
//!
//! Each table also yields its rows as data ([`FormulaRow`]) for the
//! generated reference `docs/formulas.md` and for the test that every row
//! has a forward and a batched rule, or says why not.
//!
//! The row syntax (sections in this order; `?` marks optional ones):
//!
//! ```text
//! /// docs
//! pub fn name(&self, other: &Tensor) -> Result<Tensor> {
//!     before { stmt; ... }?                   // grad mode still on
//!     record "NameBackward0", [self, other];  // `opt [..]` for Option<&Tensor>,
//!                                             // `each [xs]` for a &[Tensor] list
//!     configure |r| r.scalar_input(1);?       // adjust the recorder
//!     compute { stmt; ... } => out = expr;    // Tensor, Vec<Tensor> or a pair
//!     save |s, needs| { s.save(...); }        // or `save nothing`
//!     backward |ctx, g| expr;                 // -> Result<Grads>
//!     forward KIND;                           // see below
//!     batched KIND;
//!     inplace name_(self; other) |s| s.name(other);
//!         { stmt; ... } => result;?           // the in-place kernel
//! }
//! ```
//!
//! Forward kinds: `elementwise(f)` (a broadcasting formula; lower-rank
//! tangents are lined up in a batched level), `formula(f)` (handles a
//! leading batch of tangents itself), `batched_if(cond, f)` (handles a
//! batch when `cond` holds, else runs once per row), `rows(f) because
//! "..."` (run once per row of a batch), `none because "..."`. Batched kinds: `broadcast`
//! (the backward broadcasts over a leading batch dim by itself),
//! `formula` (it reads `ctx.batch()`), `formula_if(cond) because "..."`
//! (a batched formula when `cond` holds, else row by row, and why), `rows
//! because "..."` (the engine runs it once per row).

use crate::Tensor;
use smallvec::SmallVec;

/// How an op's forward-mode (jvp) formula is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForwardRule {
    /// A broadcasting elementwise formula.
    Elementwise(&'static str),
    /// A formula that handles a leading batch of tangents.
    Formula(&'static str),
    /// A formula that handles a leading batch of tangents when the
    /// condition (first) holds, and runs once per row otherwise.
    FormulaIf(&'static str, &'static str),
    /// A formula run once per row of a batch of tangents, and why.
    Rows(&'static str, &'static str),
    /// No forward formula, and why.
    Missing(&'static str),
}

/// How an op's backward handles a batch of output gradients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchedRule {
    /// The formula broadcasts over the leading batch dim.
    Broadcast,
    /// The formula reads the batch size and handles it.
    Formula,
    /// The formula handles a batch when the condition (first) holds; the
    /// engine runs it once per row otherwise, and why.
    FormulaIf(&'static str, &'static str),
    /// The engine runs the backward once per row, and why.
    Rows(&'static str),
}

/// One row of a derivative table, as data.
#[derive(Debug, Clone, Copy)]
pub struct FormulaRow {
    /// The table (op family) the row belongs to.
    pub family: &'static str,
    /// The generated method.
    pub op: &'static str,
    /// Its in-place form, if the row generates one.
    pub inplace: Option<&'static str>,
    /// The node name (an expression when it depends on the arguments).
    pub node: &'static str,
    /// The recorded inputs.
    pub inputs: &'static str,
    /// What the node saves.
    pub saves: &'static str,
    /// The backward formula's code.
    pub backward: &'static str,
    /// The forward-mode rule.
    pub forward: ForwardRule,
    /// The batched-backward rule.
    pub batched: BatchedRule,
}

/// The outputs of a table row's compute, as the recorder takes them.
pub trait RecordedOutputs {
    /// The output tensors in order.
    fn outputs(&self) -> SmallVec<[&Tensor; 4]>;
}

impl RecordedOutputs for Tensor {
    fn outputs(&self) -> SmallVec<[&Tensor; 4]> {
        smallvec::smallvec![self]
    }
}

impl RecordedOutputs for Vec<Tensor> {
    fn outputs(&self) -> SmallVec<[&Tensor; 4]> {
        self.iter().collect()
    }
}

impl RecordedOutputs for (Tensor, Tensor, Tensor) {
    fn outputs(&self) -> SmallVec<[&Tensor; 4]> {
        smallvec::smallvec![&self.0, &self.1, &self.2]
    }
}

impl RecordedOutputs for () {
    fn outputs(&self) -> SmallVec<[&Tensor; 4]> {
        SmallVec::new()
    }
}

impl RecordedOutputs for (Tensor, Tensor) {
    fn outputs(&self) -> SmallVec<[&Tensor; 4]> {
        smallvec::smallvec![&self.0, &self.1]
    }
}

/// Defines a derivative table (see the module docs for the row syntax).
///
/// `table NAME("family") for Tensor;` puts the rows' methods in an
/// `impl Tensor` block; `table NAME("family");` makes them free functions.
/// Either way `NAME` becomes a `pub(crate) const` slice of [`FormulaRow`].
macro_rules! derivatives {
    (table $table:ident($family:literal) $(for $ty:ident)?; $($rows:tt)*) => {
        $crate::autograd::derivatives!(@row [$table $family $($ty)?] [] [] $($rows)*);
    };

    // All rows read: emit the items and the table.
    (@row [$table:ident $family:literal Tensor] [$($items:tt)*] [$($done:expr,)*]) => {
        impl $crate::Tensor {
            $($items)*
        }
        $crate::autograd::derivatives!(@table $table [$($done,)*]);
    };
    (@row [$table:ident $family:literal] [$($items:tt)*] [$($done:expr,)*]) => {
        $($items)*
        $crate::autograd::derivatives!(@table $table [$($done,)*]);
    };
    (@table $table:ident [$($done:expr,)*]) => {
        #[allow(dead_code)]
        pub(crate) const $table: &[$crate::autograd::FormulaRow] = &[$($done,)*];
    };

    // One row: its method (and in-place form) and its data.
    (@row [$table:ident $family:literal $($ty:ident)?] [$($items:tt)*] [$($done:expr,)*]
        $(#[$m:meta])*
        $vis:vis fn $name:ident $sig:tt -> Result<$ret:ty> {
            $(before { $($b:stmt;)* })?
            record $node:expr, $($opt:ident)? [$($inp:expr),* $(,)?];
            $(configure |$r:ident| $conf:expr;)?
            compute $({ $($c:stmt;)* })? => $o:ident = $out:expr;
            save $(|$s:ident $(, $needs:ident)?| $save:block)? $(nothing)?
            backward |$ctx:ident, $g:ident| $bw:expr;
            forward $fk:ident $(($($fw:expr),+))? $(because $fwhy:literal)?;
            batched $bk:ident $(($bcond:expr))? $(because $bwhy:literal)?;
            $(inplace $iname:ident ($dst:ident $(; $($io:expr),*)?) |$is:ident| $icall:expr;
                $({ $($ic:stmt;)* })? => $iout:expr;
            )?
        }
        $($rest:tt)*
    ) => {
        $crate::autograd::derivatives!(@row [$table $family $($ty)?] [$($items)*
            $(#[$m])*
            #[allow(redundant_semicolons, clippy::redundant_closure_call)]
            $vis fn $name $sig -> $crate::Result<$ret> {
                let __capture = $crate::compile::capturing()
                    .then(|| $crate::autograd::derivatives!(@keep $sig));
                let __result = (|| -> $crate::Result<$ret> {
                $($($b;)*)?
                const ATEN: &str = $crate::trace::aten_name(concat!("aten::", stringify!($name)));
                #[allow(unused_mut)]
                let mut span = $crate::trace::op_span(
                    ATEN,
                    || $crate::autograd::derivatives!(@shapes $($opt)? [$($inp),*]),
                );
                let rec = $crate::autograd::derivatives!(@new $node, $($opt)? [$($inp),*]);
                let rec = $crate::autograd::derivatives!(@batched rec $bk $(($bcond))?);
                $(let rec = { let $r = rec; $conf };)?
                $($($c;)*)?
                let $o: $ret = $out;
                if rec.active() {
                    $($(let $needs = rec.needs_all();)?)?
                    let rec = $crate::autograd::derivatives!(@forward rec $fk $(($($fw),+))?);
                    rec.finish(
                        &$crate::autograd::RecordedOutputs::outputs(&$o),
                        |_s| { $(let $s = _s; $save)? },
                        #[allow(unused_variables)]
                        move |$ctx, $g| $bw,
                    )?;
                    if span.is_some() {
                        $crate::trace::link_output(
                            &mut span,
                            &$crate::autograd::RecordedOutputs::outputs(&$o),
                        );
                    }
                }
                drop(span);
                Ok($o)
                })();
                if let Some(g) = __capture {
                    let __outs = __result.as_ref().ok().map($crate::autograd::RecordedOutputs::outputs);
                    g.finish(stringify!($name), __outs.as_deref(), $crate::autograd::derivatives!(
                        @replay [$($ty)?] $name $sig));
                }
                __result
            }
            $(
                #[doc = concat!("In-place form of `", stringify!($name), "`.")]
                #[allow(redundant_semicolons, clippy::redundant_closure_call)]
                $vis fn $iname $sig -> $crate::Result<()> {
                    let __capture = $crate::compile::capturing()
                        .then(|| $crate::autograd::derivatives!(@keep $sig));
                    let __result = (|| -> $crate::Result<()> {
                    const ATEN_INPLACE: &str =
                        $crate::trace::aten_name(concat!("aten::", stringify!($iname)));
                    let _span = $crate::trace::inplace_op(ATEN_INPLACE, $dst, &[$($($io),*)?]);
                    if $crate::autograd::inplace(
                        stringify!($iname),
                        $dst,
                        &[$($($io),*)?],
                        |$is| $icall,
                    )? {
                        return Ok(());
                    }
                    $($($ic;)*)?
                    $iout
                    })();
                    if let Some(g) = __capture {
                        let __outs = __result.as_ref().ok().map($crate::autograd::RecordedOutputs::outputs);
                        g.finish(stringify!($iname), __outs.as_deref(), $crate::autograd::derivatives!(
                            @replay [] $iname $sig));
                    }
                    __result
                }
            )?
        ] [$($done,)*
            $crate::autograd::FormulaRow {
                family: $family,
                op: stringify!($name),
                inplace: $crate::autograd::derivatives!(@opt $(stringify!($iname))?),
                node: stringify!($node),
                inputs: stringify!($($opt)? $($inp),*),
                saves: $crate::autograd::derivatives!(@opt_str $(stringify!($save))?),
                backward: stringify!($bw),
                forward: $crate::autograd::derivatives!(
                    @fwrule $fk $(($($fw),+))? $(because $fwhy)?),
                batched: $crate::autograd::derivatives!(@bwrule $bk $(($bcond))? $(because $bwhy)?),
            },
        ] $($rest)*);
    };

    // Capture (see `crate::compile`): copy the arguments as the
    // operation starts, and repeat the call from the copies on replay.
    (@keep (&$me:ident $(, $a:ident : $t:ty)* $(,)?)) => {
        $crate::compile::row_start(|__rec| Some((
            <&$crate::Tensor as $crate::compile::Capturable>::keep(&$me, __rec)?,
            $(<$t as $crate::compile::Capturable>::keep(&$a, __rec)?,)*
        )))
    };
    (@keep ($($a:ident : $t:ty),* $(,)?)) => {
        $crate::compile::row_start(|__rec| Some((
            $(<$t as $crate::compile::Capturable>::keep(&$a, __rec)?,)*
        )))
    };
    (@replay [$($ty:ident)?] $name:ident (&$me:ident $(, $a:ident : $t:ty)* $(,)?)) => {
        |__k, __vals| {
            let (__self, $($a,)*) = __k;
            let __self = <&$crate::Tensor as $crate::compile::Capturable>::rebuild(__self, __vals);
            $(let $a = <$t as $crate::compile::Capturable>::rebuild($a, __vals);)*
            let __r = $crate::Tensor::$name(
                <&$crate::Tensor as $crate::compile::Capturable>::view(&__self),
                $(<$t as $crate::compile::Capturable>::view(&$a),)*
            )?;
            Ok($crate::autograd::RecordedOutputs::outputs(&__r).into_iter().cloned().collect())
        }
    };
    (@replay [$($ty:ident)?] $name:ident ($($a:ident : $t:ty),* $(,)?)) => {
        |__k, __vals| {
            let ($($a,)*) = __k;
            $(let $a = <$t as $crate::compile::Capturable>::rebuild($a, __vals);)*
            let __r = $($crate::$ty::)?$name(
                $(<$t as $crate::compile::Capturable>::view(&$a),)*
            )?;
            Ok($crate::autograd::RecordedOutputs::outputs(&__r).into_iter().cloned().collect())
        }
    };
    (@new $node:expr, [$($inp:expr),*]) => {
        $crate::autograd::Recorder::new($node, &[$($inp),*])
    };
    (@new $node:expr, opt [$($inp:expr),*]) => {
        $crate::autograd::Recorder::new_opt($node, &[$($inp),*])
    };
    (@new $node:expr, each [$inp:expr]) => {
        $crate::autograd::Recorder::new(
            $node,
            &$inp.iter().collect::<::std::vec::Vec<&$crate::Tensor>>(),
        )
    };
    (@shapes [$($inp:expr),*]) => { vec![$($crate::trace::InputInfo::of($inp)),*] };
    (@shapes opt [$($inp:expr),*]) => { vec![$($crate::trace::InputInfo::of_opt($inp)),*] };
    (@shapes each [$inp:expr]) => { $inp.iter().map($crate::trace::InputInfo::of).collect() };
    (@batched $rec:ident broadcast) => { $rec.batched() };
    (@batched $rec:ident formula) => { $rec.batched() };
    (@batched $rec:ident rows) => { $rec };
    (@batched $rec:ident formula_if($cond:expr)) => {
        if $cond { $rec.batched() } else { $rec }
    };
    (@forward $rec:ident elementwise($fw:expr)) => { $rec.jvp_elementwise($fw) };
    (@forward $rec:ident formula($fw:expr)) => { $rec.jvp_batched($fw) };
    (@forward $rec:ident rows($fw:expr)) => { $rec.jvp($fw) };
    (@forward $rec:ident batched_if($cond:expr, $fw:expr)) => { $rec.jvp_batched_if($cond, $fw) };
    (@forward $rec:ident none) => { $rec };
    (@opt) => { None };
    (@opt $e:expr) => { Some($e) };
    (@opt_str) => { "" };
    (@opt_str $e:expr) => { $e };
    (@fwrule elementwise($fw:expr)) => {
        $crate::autograd::ForwardRule::Elementwise(stringify!($fw))
    };
    (@fwrule formula($fw:expr)) => { $crate::autograd::ForwardRule::Formula(stringify!($fw)) };
    (@fwrule rows($fw:expr) because $why:literal) => {
        $crate::autograd::ForwardRule::Rows(stringify!($fw), $why)
    };
    (@fwrule batched_if($cond:expr, $fw:expr)) => {
        $crate::autograd::ForwardRule::FormulaIf(stringify!($cond), stringify!($fw))
    };
    (@fwrule none because $why:literal) => { $crate::autograd::ForwardRule::Missing($why) };
    (@bwrule broadcast) => { $crate::autograd::BatchedRule::Broadcast };
    (@bwrule formula) => { $crate::autograd::BatchedRule::Formula };
    (@bwrule rows because $why:literal) => { $crate::autograd::BatchedRule::Rows($why) };
    (@bwrule formula_if($cond:expr) because $why:literal) => {
        $crate::autograd::BatchedRule::FormulaIf(stringify!($cond), $why)
    };
}
pub(crate) use derivatives;

/// Records a hand-written operation (one that is not a table row) when its
/// thread captures, as the tables' operations record themselves (see
/// `crate::compile`): `captured!(name (&self, other: &Tensor) -> Tensor
/// { body })` is the body of the method `Tensor::name` with that
/// signature (`captured!(Tensor::name ...)` for an associated function,
/// `captured!(name ...)` without `&self` for a free function).
macro_rules! captured {
    ($ty:ident :: $name:ident $sig:tt -> $ret:ty $body:block) => {
        $crate::autograd::captured!(@in [$ty] $name $sig -> $ret $body)
    };
    ($name:ident $sig:tt -> $ret:ty $body:block) => {
        $crate::autograd::captured!(@in [] $name $sig -> $ret $body)
    };
    (@in [$($ty:ident)?] $name:ident $sig:tt -> $ret:ty $body:block) => {{
        let __capture = $crate::compile::capturing()
            .then(|| $crate::autograd::derivatives!(@keep $sig));
        #[allow(clippy::redundant_closure_call)]
        let __result = (|| -> $crate::Result<$ret> { $body })();
        if let Some(g) = __capture {
            let __outs = __result.as_ref().ok().map($crate::autograd::RecordedOutputs::outputs);
            g.finish(stringify!($name), __outs.as_deref(), $crate::autograd::derivatives!(
                @replay [$($ty)?] $name $sig));
        }
        __result
    }};
}
pub(crate) use captured;
