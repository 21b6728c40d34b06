//! torch's aten names for the ops whose Rust method is named otherwise.
//!
//! A derivative-table row names its op span `aten::<method>`; most methods
//! carry torch's name already (`mul`, `tanh`, `mm`). The rest are renamed
//! here at compile time, so the span costs nothing extra.

/// The aten name torch gives the op that table method `raw` (spelled
/// `aten::<method>`) implements.
pub const fn aten_name(raw: &'static str) -> &'static str {
    const RENAMED: [(&str, &str); 30] = [
        ("aten::copied", "aten::copy_"),
        ("aten::filled", "aten::fill_"),
        ("aten::try_copy", "aten::clone"),
        ("aten::try_clone_preserving_strides", "aten::clone"),
        ("aten::try_to_dtype", "aten::_to_copy"),
        ("aten::add_scaled", "aten::add"),
        ("aten::sub_scaled", "aten::sub"),
        ("aten::rsub_scaled", "aten::rsub"),
        ("aten::div_mode", "aten::div"),
        ("aten::clamp_recorded", "aten::clamp"),
        ("aten::round_decimals", "aten::round"),
        ("aten::transpose_named", "aten::transpose"),
        ("aten::alias_named", "aten::alias"),
        ("aten::roll_dims", "aten::roll"),
        ("aten::roll_flat", "aten::roll"),
        ("aten::view_scatter", "aten::as_strided_scatter"),
        ("aten::matmul_vm", "aten::matmul"),
        ("aten::matmul_nd", "aten::matmul"),
        ("aten::max_all", "aten::max"),
        ("aten::min_all", "aten::min"),
        ("aten::max_dim", "aten::max"),
        ("aten::min_dim", "aten::min"),
        ("aten::scatter_value", "aten::scatter"),
        ("aten::masked_fill_tensor", "aten::masked_fill"),
        ("aten::vector_norm", "aten::linalg_vector_norm"),
        ("aten::fft_c2c", "aten::_fft_c2c"),
        ("aten::fft_r2c", "aten::_fft_r2c"),
        ("aten::fft_c2r", "aten::_fft_c2r"),
        ("aten::undefined_grad", "autograd::undefined_grad"),
        ("aten::delayed_error_aliases", "autograd::delayed_error"),
    ];
    let mut i = 0;
    while i < RENAMED.len() {
        if same(RENAMED[i].0, raw) {
            return RENAMED[i].1;
        }
        i += 1;
    }
    raw
}

const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::aten_name;

    #[test]
    fn renamed_methods_get_torch_names_and_others_keep_theirs() {
        assert_eq!(aten_name("aten::try_to_dtype"), "aten::_to_copy");
        assert_eq!(aten_name("aten::max_dim"), "aten::max");
        assert_eq!(aten_name("aten::mul"), "aten::mul");
        assert_eq!(aten_name("aten::mu"), "aten::mu");
    }
}
