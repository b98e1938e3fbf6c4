//! The standard normal density and quantile, written out rather than pulled from statrs: parametric VaR,
//! prediction intervals and the tests only need these two functions, and AS241 gives the quantile to about
//! 1e-16 relative, which is what scipy's `norm.ppf` agrees with.

use crate::error::Result;
use crate::input;

/// Density φ(x) of the standard normal.
pub fn pdf(x: f64) -> f64 {
    (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

/// Quantile Φ⁻¹(p) of the standard normal for p in (0, 1) (Wichura 1988, algorithm AS241 PPND16).
pub fn quantile(p: f64) -> Result<f64> {
    input::open_unit("probability", p)?;
    Ok(ppnd16(p))
}

fn poly(c: &[f64; 8], r: f64) -> f64 {
    c.iter().rev().fold(0.0, |acc, k| acc * r + k)
}

// The coefficients are printed as Wichura published them, digits beyond f64 precision included.
#[allow(clippy::excessive_precision)]
fn ppnd16(p: f64) -> f64 {
    const A: [f64; 8] = [
        3.387_132_872_796_366_6,
        1.331_416_678_917_843_8e2,
        1.971_590_950_306_551_4e3,
        1.373_169_376_550_946e4,
        4.592_195_393_154_987e4,
        6.726_577_092_700_87e4,
        3.343_057_558_358_813e4,
        2.509_080_928_730_122_7e3,
    ];
    const B: [f64; 8] = [
        1.0,
        4.231_333_070_160_091e1,
        6.871_870_074_920_579e2,
        5.394_196_021_424_751e3,
        2.121_379_430_158_659_7e4,
        3.930_789_580_009_271e4,
        2.872_908_573_572_194_3e4,
        5.226_495_278_852_854e3,
    ];
    const C: [f64; 8] = [
        1.423_437_110_749_683_5,
        4.630_337_846_156_545,
        5.769_497_221_460_691,
        3.647_848_324_763_204_5,
        1.270_458_252_452_368_4,
        2.417_807_251_774_506e-1,
        2.272_384_498_926_918_4e-2,
        7.745_450_142_783_414e-4,
    ];
    const D: [f64; 8] = [
        1.0,
        2.053_191_626_637_759,
        1.676_384_830_183_803_8,
        6.897_673_349_851e-1,
        1.481_039_764_274_800_8e-1,
        1.519_866_656_361_645_7e-2,
        5.475_938_084_995_345e-4,
        1.050_750_071_644_416_9e-9,
    ];
    const E: [f64; 8] = [
        6.657_904_643_501_103,
        5.463_784_911_164_114,
        1.784_826_539_917_291_3,
        2.965_605_718_285_048_7e-1,
        2.653_218_952_657_612_4e-2,
        1.242_660_947_388_078_4e-3,
        2.711_555_568_743_487_6e-5,
        2.010_334_399_292_288_1e-7,
    ];
    const F: [f64; 8] = [
        1.0,
        5.998_322_065_558_879e-1,
        1.369_298_809_227_358e-1,
        1.487_536_129_085_061_5e-2,
        7.868_691_311_456_133e-4,
        1.846_318_317_510_054_8e-5,
        1.421_511_758_316_446e-7,
        2.044_263_103_389_939_7e-15,
    ];
    let q = p - 0.5;
    if q.abs() <= 0.425 {
        let r = 0.180_625 - q * q;
        return q * poly(&A, r) / poly(&B, r);
    }
    let r = if q < 0.0 { p } else { 1.0 - p };
    let r = (-r.ln()).sqrt();
    let v = if r <= 5.0 {
        let r = r - 1.6;
        poly(&C, r) / poly(&D, r)
    } else {
        let r = r - 5.0;
        poly(&E, r) / poly(&F, r)
    };
    if q < 0.0 { -v } else { v }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantile_matches_scipy_at_the_levels_used_for_var_and_mad() {
        assert!((quantile(0.05).unwrap() - -1.644_853_626_951_472_2).abs() < 1e-15);
        assert!((quantile(0.01).unwrap() - -2.326_347_874_040_840_8).abs() < 1e-15);
        assert!((quantile(0.75).unwrap() - 0.674_489_750_196_081_7).abs() < 1e-15);
        assert!((quantile(0.975).unwrap() - 1.959_963_984_540_054).abs() < 1e-15);
        assert!((quantile(1e-12).unwrap() - -7.034_483_825_000_1).abs() < 1e-9);
    }

    #[test]
    fn quantile_refuses_levels_outside_the_open_unit_interval() {
        assert!(quantile(0.0).is_err());
        assert!(quantile(1.0).is_err());
        assert!(quantile(f64::NAN).is_err());
    }
}
