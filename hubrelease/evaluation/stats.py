"""Paired-comparison statistics in pure stdlib: Student t quantile, t-interval, p-value, log-ratio interval.

Python's ``statistics`` has no t distribution and scipy is too heavy a runtime dependency for one
quantile, so the t CDF is computed from the regularized incomplete beta function (continued fraction,
modified Lentz) and inverted by bisection. Tests cross-check it against scipy.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

_EPS = 1e-15
_TINY = 1e-300


def _beta_continued_fraction(a: float, b: float, x: float) -> float:
    """Continued fraction of I_x(a, b), evaluated by the modified Lentz method (converges for x < (a+1)/(a+b+2))."""
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    result = d
    for m in range(1, 1000):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            result *= c * d
        if abs(c * d - 1.0) < _EPS:
            break
    return result


def regularized_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b), the regularized incomplete beta function, for a, b > 0 and 0 <= x <= 1."""
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"x must be in [0, 1], got {x}")
    if x in (0.0, 1.0):
        return x
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_continued_fraction(a, b, x) / a
    # Symmetry I_x(a, b) = 1 - I_{1-x}(b, a) keeps the continued fraction in its fast region.
    return 1.0 - math.exp(log_front) * _beta_continued_fraction(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom."""
    if df <= 0:
        raise ValueError(f"degrees of freedom must be positive, got {df}")
    tail = 0.5 * regularized_beta(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom (bisection on ``t_cdf``)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"probability must be in (0, 1), got {p}")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    low, high = 0.0, 1.0
    while t_cdf(high, df) < p:
        low, high = high, high * 2.0
    for _ in range(200):
        middle = (low + high) / 2.0
        if t_cdf(middle, df) < p:
            low = middle
        else:
            high = middle
        if high - low <= 1e-13 * max(1.0, high):
            break
    return (low + high) / 2.0


def two_sided_p(t: float, df: float) -> float:
    """Two-sided p-value of a t statistic."""
    return regularized_beta(df / 2.0, 0.5, df / (df + t * t))


@dataclass(frozen=True)
class TInterval:
    """Summary of a one-sample t analysis of paired differences."""

    mean: float
    sd: float
    n: int
    low: float
    high: float
    p_value: float


def t_interval(mean: float, sd: float, n: int, level: float = 0.95) -> TInterval:
    """Student-t interval and two-sided p-value of a mean, from summary numbers (sd with n - 1)."""
    if n < 2:
        raise ValueError(f"a t-interval needs at least 2 pairs, got {n}")
    se = sd / math.sqrt(n)
    half = t_quantile(0.5 + level / 2.0, n - 1) * se
    # Zero spread makes the statistic 0/0 or infinite; the limits are p = 1 and p = 0.
    p_value = (1.0 if mean == 0 else 0.0) if se == 0 else two_sided_p(mean / se, n - 1)
    return TInterval(mean=mean, sd=sd, n=n, low=mean - half, high=mean + half, p_value=p_value)


def paired_t_interval(
    baseline: Sequence[float], treatment: Sequence[float], level: float = 0.95
) -> TInterval:
    """t analysis of treatment - baseline, paired by position."""
    if len(baseline) != len(treatment):
        raise ValueError(f"paired samples differ in length: {len(baseline)} vs {len(treatment)}")
    differences = [b - a for a, b in zip(baseline, treatment, strict=True)]
    if len(differences) < 2:
        raise ValueError(f"a t-interval needs at least 2 pairs, got {len(differences)}")
    return t_interval(statistics.fmean(differences), statistics.stdev(differences), len(differences), level)


@dataclass(frozen=True)
class RatioInterval:
    """Geometric-mean ratio treatment / baseline with its exponentiated t-interval."""

    ratio: float
    low: float
    high: float


def log_ratio_interval(
    baseline: Sequence[float], treatment: Sequence[float], level: float = 0.95
) -> RatioInterval:
    """Speedup as a ratio: t-interval of the mean of log(treatment / baseline), exponentiated.

    Ratios are the natural scale for speedups (a 2x and a 0.5x cancel); the result is a geometric mean.
    """
    if any(value <= 0 for value in (*baseline, *treatment)):
        raise ValueError("a log-ratio interval needs positive values")
    logs = [math.log(b / a) for a, b in zip(baseline, treatment, strict=True)]
    result = paired_t_interval([0.0] * len(logs), logs, level)
    return RatioInterval(ratio=math.exp(result.mean), low=math.exp(result.low), high=math.exp(result.high))


@dataclass(frozen=True)
class Line:
    """y ~ intercept + slope * x."""

    intercept: float
    slope: float


def least_squares(xs: Sequence[float], ys: Sequence[float]) -> Line:
    """Ordinary least-squares line (``statistics.linear_regression``); needs 2 distinct x values."""
    slope, intercept = statistics.linear_regression(xs, ys)
    return Line(intercept=intercept, slope=slope)
