import Foundation

/// The statistics of the experiment report, as plain functions so they can be checked against known
/// values.
public enum Statistics {
    /// The standard normal distribution function Φ(z).
    public static func normalCDF(_ z: Double) -> Double {
        0.5 * erfc(-z / 2.0.squareRoot())
    }

    /// The z with Φ(z) = p (Acklam's rational approximation, refined by one Halley step; accurate to
    /// about 1e-12). −∞ for p ≤ 0, +∞ for p ≥ 1, NaN for NaN: never a crash on a bad argument.
    public static func normalQuantile(_ p: Double) -> Double {
        if p.isNaN { return .nan }
        if p <= 0 { return -.infinity }
        if p >= 1 { return .infinity }
        let a = [
            -3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
            1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00,
        ]
        let b = [
            -5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
            6.680131188771972e+01, -1.328068155288572e+01,
        ]
        let c = [
            -7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
            -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00,
        ]
        let d = [7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00]
        let low = 0.02425
        var x: Double
        if p < low {
            let q = (-2 * log(p)).squareRoot()
            x =
                (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5])
                / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
        } else if p <= 1 - low {
            let q = p - 0.5
            let r = q * q
            x =
                (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q
                / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
        } else {
            let q = (-2 * log(1 - p)).squareRoot()
            x =
                -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5])
                / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
        }
        let e = normalCDF(x) - p
        let u = e * (2 * Double.pi).squareRoot() * exp(x * x / 2)
        x -= u / (1 + x * u / 2)
        return x
    }

    /// The Wilson score interval for `successes` out of `trials` at the given confidence.
    public static func wilsonInterval(successes: Int, trials: Int, confidence: Double = 0.95) -> (
        low: Double, high: Double
    )? {
        guard trials > 0 else { return nil }
        let n = Double(trials)
        let p = Double(successes) / n
        let z = normalQuantile(1 - (1 - confidence) / 2)
        let denominator = 1 + z * z / n
        let centre = (p + z * z / (2 * n)) / denominator
        let half = z * (p * (1 - p) / n + z * z / (4 * n * n)).squareRoot() / denominator
        return (max(0, centre - half), min(1, centre + half))
    }

    /// The pooled two-proportion z-test of arm B against arm A: z (positive when B converts better) and
    /// the two-sided p-value.
    public static func twoProportionTest(
        successesA: Int, trialsA: Int, successesB: Int, trialsB: Int
    ) -> (z: Double, pValue: Double)? {
        guard trialsA > 0, trialsB > 0 else { return nil }
        let pA = Double(successesA) / Double(trialsA)
        let pB = Double(successesB) / Double(trialsB)
        let pooled = Double(successesA + successesB) / Double(trialsA + trialsB)
        let se = (pooled * (1 - pooled) * (1 / Double(trialsA) + 1 / Double(trialsB))).squareRoot()
        guard se > 0 else { return (0, 1) }
        let z = (pB - pA) / se
        return (z, erfc(abs(z) / 2.0.squareRoot()))
    }

    /// Users needed in each of two equal arms to detect an absolute difference `effect` from a baseline
    /// conversion `baseline` with a two-sided test at `alpha` and the given power.
    public static func sampleSizePerArm(baseline: Double, effect: Double, alpha: Double = 0.05, power: Double = 0.8)
        -> Int?
    {
        let p1 = baseline
        let p2 = baseline + effect
        guard effect != 0, p1 > 0, p1 < 1, p2 > 0, p2 < 1 else { return nil }
        let zAlpha = normalQuantile(1 - alpha / 2)
        let zBeta = normalQuantile(power)
        let mean = (p1 + p2) / 2
        let numerator =
            zAlpha * (2 * mean * (1 - mean)).squareRoot() + zBeta * (p1 * (1 - p1) + p2 * (1 - p2)).squareRoot()
        return Int((numerator * numerator / (effect * effect)).rounded(.up))
    }

    /// The `q` quantile (0…1) of `values` by linear interpolation between closest ranks; nil when empty.
    public static func percentile(_ values: [Double], _ q: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let position = q * Double(sorted.count - 1)
        let lower = Int(position.rounded(.down))
        let upper = min(sorted.count - 1, lower + 1)
        let fraction = position - Double(lower)
        return sorted[lower] + (sorted[upper] - sorted[lower]) * fraction
    }
}
