"""The statistics of the counterfactual TLP sanity check (TLPCF): mean ± Student-t CI, the gap test and a verdict.

A model is scored on the real test split and on distorted copies of it (SHUFFLE, INTENSE), over n runs each. The
paper's operational rule calls a drop *significant* when the two 95 % intervals do not overlap:
``delta = mean_d - mean_r < -(CI_r + CI_d)``. A second flag marks a drop larger than a margin ``epsilon`` (0.05 in
the paper). :func:`compare` reports both, a two-sided Welch t-test p-value as an extra, and one verdict.

The Student-t quantile and distribution function are computed here from the regularised incomplete beta function
(a continued fraction in plain ``math``), so the library does not depend on scipy.
"""

from __future__ import annotations

import math
from typing import TypedDict

import numpy as np
from numpy.typing import ArrayLike

from tgbhub.errors import ScoreError

CAPTURES = "captures-temporal-pattern"
FAILS = "fails-sanity-check"
INCONCLUSIVE = "inconclusive"
VERDICTS = (CAPTURES, FAILS, INCONCLUSIVE)



class GapTest(TypedDict):
    """What :func:`compare_from_summary` returns (its docstring defines every key)."""

    mean_real: float
    ci_real: float
    mean_distorted: float
    ci_distorted: float
    delta: float
    threshold: float
    significant_drop: bool
    margin_drop: bool
    epsilon: float
    verdict: str
    reason: str


class Comparison(GapTest):
    """What :func:`compare` returns: the gap test, the sample sizes and Welch's p-value."""

    n_real: int
    n_distorted: int
    welch_p: float


_BETA_MAX_TERMS = 100_000
_TINY = 1e-300  # keeps the Lentz recursion away from a division by zero


def _beta_continued_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of ``I_x(a, b)`` (without its prefactor), by the modified Lentz method.

    It converges quickly for ``x < (a + 1) / (a + b + 2)``; the caller uses the symmetry relation otherwise.

    Raises:
        ScoreError: if it has not converged after ``_BETA_MAX_TERMS`` terms (never seen for finite a, b).
    """
    c = 1.0
    d = 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, _BETA_MAX_TERMS):
        # the even and the odd coefficient of step m
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1.0) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1.0))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            step = c * d
            h *= step
        if abs(step - 1.0) < 1e-16:
            return h
    raise ScoreError(f"the incomplete beta continued fraction did not converge for a={a!r}, b={b!r}, x={x!r}")


def regularized_beta(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function ``I_x(a, b)`` for ``a, b > 0`` and ``0 <= x <= 1``.

    Accurate to about 1e-14 relative for moderate ``a, b``; the prefactor uses ``math.lgamma``, whose cancellation
    costs digits when ``a`` or ``b`` exceeds ~1e5.

    Raises:
        ScoreError: if ``a`` or ``b`` is not positive and finite, or ``x`` is outside ``[0, 1]``.
    """
    if not (a > 0 and b > 0 and math.isfinite(a) and math.isfinite(b)) or not 0.0 <= x <= 1.0:
        raise ScoreError(f"regularized_beta needs a, b > 0 and 0 <= x <= 1; got a={a!r}, b={b!r}, x={x!r}")
    if x == 0.0 or x == 1.0:
        return x
    if x > (a + 1.0) / (a + b + 2.0):
        # the fraction converges slowly here; I_x(a, b) = 1 - I_{1-x}(b, a), and the result is not tiny
        return 1.0 - regularized_beta(b, a, 1.0 - x)
    log_front = a * math.log(x) + b * math.log1p(-x) - (math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b))
    return math.exp(log_front) / a * _beta_continued_fraction(a, b, x)


def _check_dof(dof: float) -> None:
    if not (dof > 0 and math.isfinite(dof)):
        raise ScoreError(f"degrees of freedom must be positive and finite; got {dof!r}")


def _t_central(t: float, dof: float) -> float:
    """``P(|T| < t)`` for ``t >= 0``: ``I_{t^2 / (dof + t^2)}(1/2, dof/2)``, precise near ``t = 0``."""
    return regularized_beta(0.5, dof / 2.0, t * t / (dof + t * t))


def _t_two_tails(t: float, dof: float) -> float:
    """``P(|T| > t)`` for ``t >= 0``: ``I_{dof / (dof + t^2)}(dof/2, 1/2)``, precise in the tails."""
    return regularized_beta(dof / 2.0, 0.5, dof / (dof + t * t))


def t_sf(t: float, dof: float) -> float:
    """The Student-t upper tail ``P(T > t)`` with ``dof`` degrees of freedom (``dof`` may be fractional).

    Evaluated through the incomplete beta form that keeps relative precision: the two-tail form for ``t^2 > dof``,
    the central form near 0 (where ``dof / (dof + t^2)`` would round to 1).

    Raises:
        ScoreError: if ``dof`` is not positive and finite, or ``t`` is NaN.
    """
    _check_dof(dof)
    if math.isnan(t):
        raise ScoreError("t_sf got t = nan; pass a finite statistic")
    if math.isinf(t):
        return 0.0 if t > 0 else 1.0
    size = abs(t)
    two_tails = _t_two_tails(size, dof) if size * size > dof else 1.0 - _t_central(size, dof)
    return 0.5 * two_tails if t >= 0 else 1.0 - 0.5 * two_tails


def _t_pdf(t: float, dof: float) -> float:
    log_norm = math.lgamma((dof + 1.0) / 2.0) - math.lgamma(dof / 2.0) - 0.5 * math.log(dof * math.pi)
    return math.exp(log_norm - (dof + 1.0) / 2.0 * math.log1p(t * t / dof))


def t_quantile(p: float, dof: float) -> float:
    """The ``p`` quantile of the Student-t distribution with ``dof`` degrees of freedom (scipy's ``t.ppf``).

    Solves for ``t >= 0`` by safeguarded Newton steps inside a bisection bracket, then applies the sign: in the
    tails ``P(|T| > t) = 2 min(p, 1 - p)``, near the centre ``P(|T| < t) = |2p - 1|`` (``2p - 1`` is exact there,
    while ``1 - p`` has already lost the digits that matter). Agrees with scipy to ~1e-13 relative for ``dof``
    1..100.

    Raises:
        ScoreError: if ``p`` is not strictly between 0 and 1, or ``dof`` is not positive and finite.
    """
    _check_dof(dof)
    if not 0.0 < p < 1.0:
        raise ScoreError(f"t_quantile needs 0 < p < 1; got p={p!r}")
    if p == 0.5:
        return 0.0
    central = 0.25 <= p <= 0.75
    # g falls as t grows in both forms, and both have derivative -2 pdf(t)
    target = -abs(2.0 * p - 1.0) if central else 2.0 * min(p, 1.0 - p)

    def g(t: float) -> float:
        return -_t_central(t, dof) if central else _t_two_tails(t, dof)

    lo, hi = 0.0, 1.0
    while g(hi) > target:   # double until the root is bracketed
        lo, hi = hi, 2.0 * hi
    t = 0.5 * (lo + hi)
    for _ in range(200):
        excess = g(t) - target
        if excess > 0:
            lo = t
        else:
            hi = t
        guess = t + excess / (2.0 * _t_pdf(t, dof))
        if not lo < guess < hi:   # Newton left the bracket: bisect instead
            guess = 0.5 * (lo + hi)
        converged = abs(guess - t) <= 4e-16 * abs(guess) or hi - lo <= 4e-16 * hi
        t = guess
        if converged:
            break
    return t if p > 0.5 else -t


def _sample(values: ArrayLike, name: str) -> np.ndarray:
    """``values`` as a finite 1-D float64 array with at least one entry.

    Raises:
        ScoreError: if it is empty, not 1-D, not numeric, or holds NaN/inf.
    """
    array = np.asarray(values)
    if array.dtype == np.bool_ or not (np.issubdtype(array.dtype, np.floating)
                                       or np.issubdtype(array.dtype, np.integer)):
        raise ScoreError(f"{name} has dtype {array.dtype}; pass metric values as real numbers")
    array = array.astype(np.float64)
    if array.ndim != 1 or array.size == 0:
        raise ScoreError(f"{name} has shape {array.shape}; pass a 1-D array with one metric value per run")
    bad = np.flatnonzero(~np.isfinite(array))
    if bad.size:
        raise ScoreError(f"{name}[{int(bad[0])}] is {float(array[bad[0]])!r}; every run's metric must be finite. "
                         "Drop or rerun that run")
    return array


def mean_ci95(values: ArrayLike) -> tuple[float, float, int]:
    """``(mean, half_width, n)`` of a 95 % Student-t confidence interval for the mean of ``values``.

    ``half_width = t_{0.975, n-1} * s / sqrt(n)`` with the sample standard deviation ``s`` (ddof = 1), as
    ``scipy.stats.sem`` times the t quantile in the paper's notebooks. For the values 1..10 this is
    ``(5.5, 2.16585..., 10)``. With ``n = 1`` the spread is unknown and the half-width is ``inf``, so no comparison
    built on it can be significant.

    Raises:
        ScoreError: if ``values`` is empty, not 1-D, not numeric, or holds NaN/inf.
    """
    array = _sample(values, "values")
    n = int(array.size)
    mean = float(np.mean(array))
    if n == 1:
        return mean, math.inf, 1
    std_error = float(np.std(array, ddof=1)) / math.sqrt(n)
    return mean, t_quantile(0.975, n - 1) * std_error, n


def welch_p(real: ArrayLike, distorted: ArrayLike) -> float:
    """Two-sided p-value of Welch's unequal-variance t-test for equal means of ``real`` and ``distorted``.

    ``t = (mean_d - mean_r) / sqrt(s_r^2/n_r + s_d^2/n_d)`` with Welch-Satterthwaite degrees of freedom; equals
    ``scipy.stats.ttest_ind(distorted, real, equal_var=False).pvalue``. NaN when either sample has fewer than two
    values or both have zero variance (the statistic is undefined), as scipy.

    Raises:
        ScoreError: if either sample is empty, not 1-D, not numeric, or holds NaN/inf.
    """
    r, d = _sample(real, "real"), _sample(distorted, "distorted")
    if r.size < 2 or d.size < 2:
        return math.nan
    var_r, var_d = float(np.var(r, ddof=1)) / r.size, float(np.var(d, ddof=1)) / d.size
    if var_r + var_d == 0.0:
        return math.nan
    t = (float(np.mean(d)) - float(np.mean(r))) / math.sqrt(var_r + var_d)
    dof = (var_r + var_d) ** 2 / (var_r ** 2 / (r.size - 1) + var_d ** 2 / (d.size - 1))
    return min(1.0, 2.0 * t_sf(abs(t), dof))


def compare_from_summary(mean_r: float, ci_r: float, mean_d: float, ci_d: float, epsilon: float = 0.05, *,
                         distortion_is_effective: bool = True) -> GapTest:
    """The counterfactual gap test on published numbers: real ``mean_r ± ci_r`` against distorted ``mean_d ± ci_d``.

    Flags (docs/derived.md, "Verdicts"), with ``delta = mean_d - mean_r`` and ``threshold = -(ci_r + ci_d)``:

    - ``significant_drop``: ``delta < threshold``, the paper's rule (the two 95 % intervals do not overlap);
    - ``margin_drop``: ``delta < -epsilon``, the drop is larger than the paper's margin.

    Verdict, first rule that applies:

    1. ``inconclusive`` if ``distortion_is_effective`` is False: the caller's learnability precheck found the
       distortion leaves the stream's distribution unchanged (e.g. SHUFFLE of a stream whose pairs all follow the
       global rate profile, s4 of Prop. 3.1 fails), so no gap, or its absence, says anything about the model;
    2. ``captures-temporal-pattern`` if ``significant_drop``: the paper's operational pass criterion, whatever the
       size of the drop (read ``margin_drop`` too when size matters);
    3. ``fails-sanity-check`` if even the most pessimistic gap the intervals allow, ``delta - (ci_r + ci_d)``, is
       above ``-epsilon``: the data rule out a drop of ``epsilon`` or more, which is the paper's event ``y`` (metric
       below ``alpha - epsilon``) failing, P(y_x | x', y') ≈ 0;
    4. ``inconclusive`` otherwise: no significant drop, but the intervals are too wide to rule one out (this includes
       ``n = 1``, whose infinite half-width makes rules 2 and 3 impossible).

    Returns ``{"mean_real", "ci_real", "mean_distorted", "ci_distorted", "delta", "threshold", "significant_drop",
    "margin_drop", "epsilon", "verdict", "reason"}``.

    Raises:
        ScoreError: if a mean is not finite, a half-width is negative or NaN (``inf`` is allowed), or ``epsilon`` is
            negative or not finite.
    """
    for name, value in (("mean_r", mean_r), ("mean_d", mean_d)):
        if not math.isfinite(value):
            raise ScoreError(f"{name} = {value!r}; a mean metric must be finite")
    for name, value in (("ci_r", ci_r), ("ci_d", ci_d)):
        if math.isnan(value) or value < 0:
            raise ScoreError(f"{name} = {value!r}; a CI half-width must be >= 0 (inf when n = 1)")
    if not (math.isfinite(epsilon) and epsilon >= 0):
        raise ScoreError(f"epsilon = {epsilon!r}; pass a margin >= 0, e.g. the paper's 0.05")
    delta = float(mean_d) - float(mean_r)
    width = float(ci_r) + float(ci_d)
    significant, margin = delta < -width, delta < -epsilon
    if not distortion_is_effective:
        verdict, reason = INCONCLUSIVE, "the distortion does not change this stream (learnability precheck failed)"
    elif significant:
        verdict, reason = CAPTURES, f"delta {delta:+.4g} < -(CI_r + CI_d) = {-width:.4g}: the intervals do not overlap"
    elif delta - width > -epsilon:
        verdict, reason = FAILS, (f"delta - (CI_r + CI_d) = {delta - width:+.4g} > -epsilon = {-epsilon:.4g}: "
                                  "a drop of epsilon or more is ruled out")
    else:
        verdict, reason = INCONCLUSIVE, (f"no significant drop, but delta - (CI_r + CI_d) = {delta - width:+.4g} "
                                         f"<= -epsilon = {-epsilon:.4g}: the intervals are too wide to rule one out")
    return {"mean_real": float(mean_r), "ci_real": float(ci_r), "mean_distorted": float(mean_d),
            "ci_distorted": float(ci_d), "delta": delta, "threshold": -width, "significant_drop": significant,
            "margin_drop": margin, "epsilon": float(epsilon), "verdict": verdict, "reason": reason}


def compare(real: ArrayLike, distorted: ArrayLike, *, epsilon: float = 0.05, distortion_is_effective: bool = True
            ) -> Comparison:
    """The counterfactual gap test on per-run metric values (one value per run or (run, sample) pair).

    Computes :func:`mean_ci95` of each side and applies :func:`compare_from_summary` (flags and verdict rule are
    documented there), and adds ``n_real``, ``n_distorted`` and ``welch_p`` (:func:`welch_p`, two-sided; an extra,
    much more powerful than the paper's CI-overlap rule, which is not used by the verdict).

    Raises:
        ScoreError: if either sample is empty, not 1-D, not numeric or holds NaN/inf, or ``epsilon`` is invalid.
    """
    mean_r, ci_r, n_r = mean_ci95(_sample(real, "real"))
    mean_d, ci_d, n_d = mean_ci95(_sample(distorted, "distorted"))
    # keys in this order: the sizes, the gap test's, then Welch's p-value
    return {"n_real": n_r, "n_distorted": n_d,
            **compare_from_summary(mean_r, ci_r, mean_d, ci_d, epsilon,
                                   distortion_is_effective=distortion_is_effective),
            "welch_p": welch_p(real, distorted)}
