"""The stdlib t quantile against scipy, and seed 001's primary endpoint from its summary numbers."""

from __future__ import annotations

import math

import pytest
from scipy import stats as scipy_stats

from hubrelease.evaluation.stats import (
    log_ratio_interval,
    paired_t_interval,
    regularized_beta,
    t_cdf,
    t_interval,
    t_quantile,
    two_sided_p,
)


@pytest.mark.parametrize("df", [1, 2, 3, 5, 7, 15, 30, 120, 10_000])
@pytest.mark.parametrize("p", [0.001, 0.025, 0.3, 0.5, 0.8, 0.95, 0.975, 0.995, 0.99999])
def test_t_quantile_matches_scipy(df: int, p: float) -> None:
    assert t_quantile(p, df) == pytest.approx(scipy_stats.t.ppf(p, df), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("df", [0.5, 1, 4, 7, 60])
@pytest.mark.parametrize("t", [-12.0, -2.0, -0.3, 0.0, 0.7, 2.364624, 40.0])
def test_t_cdf_and_p_value_match_scipy(df: float, t: float) -> None:
    assert t_cdf(t, df) == pytest.approx(scipy_stats.t.cdf(t, df), rel=1e-10, abs=1e-15)
    assert two_sided_p(t, df) == pytest.approx(2 * scipy_stats.t.sf(abs(t), df), rel=1e-10, abs=1e-15)


@pytest.mark.parametrize(
    ("a", "b", "x"), [(0.5, 0.5, 0.2), (3.5, 0.5, 0.9), (50.0, 0.5, 0.99), (2.0, 7.0, 0.4)]
)
def test_regularized_beta_matches_scipy(a: float, b: float, x: float) -> None:
    from scipy.special import betainc

    assert regularized_beta(a, b, x) == pytest.approx(betainc(a, b, x), rel=1e-12)


def test_known_textbook_quantiles() -> None:
    assert t_quantile(0.975, 7) == pytest.approx(2.364624, abs=1e-6)
    assert t_quantile(0.975, 1) == pytest.approx(12.706205, abs=1e-6)
    assert t_quantile(0.5, 9) == pytest.approx(0.0, abs=1e-12)


def test_seed_001_primary_endpoint_from_summary_numbers() -> None:
    result = t_interval(1.315, 1.142, 8)
    assert (round(result.low, 3), round(result.high, 3)) == (0.360, 2.270)
    assert result.p_value == pytest.approx(0.0139, abs=5e-5)


def test_paired_interval_equals_scipy_one_sample_test() -> None:
    baseline = [18.1, 17.9, 18.4, 18.0, 18.3, 17.7, 18.2, 18.5]
    treatment = [24.9, 25.7, 26.1, 24.3, 27.2, 25.0, 26.4, 25.6]
    result = paired_t_interval(baseline, treatment)
    differences = [b - a for a, b in zip(baseline, treatment, strict=True)]
    reference = scipy_stats.ttest_1samp(differences, 0.0)
    low, high = reference.confidence_interval(0.95)
    assert result.low == pytest.approx(low, rel=1e-9) and result.high == pytest.approx(high, rel=1e-9)
    assert result.p_value == pytest.approx(reference.pvalue, rel=1e-8)


def test_log_ratio_interval_is_exponentiated_t_interval_of_logs() -> None:
    baseline = [10.0, 20.0, 40.0]
    treatment = [12.0, 26.0, 44.0]
    result = log_ratio_interval(baseline, treatment)
    logs = [math.log(1.2), math.log(1.3), math.log(1.1)]
    low, high = scipy_stats.ttest_1samp(logs, 0.0).confidence_interval(0.95)
    assert result.ratio == pytest.approx(math.exp(sum(logs) / 3))
    assert result.low == pytest.approx(math.exp(low)) and result.high == pytest.approx(math.exp(high))


def test_refuses_degenerate_input() -> None:
    with pytest.raises(ValueError, match="at least 2 pairs"):
        t_interval(1.0, 0.5, 1)
    with pytest.raises(ValueError, match="differ in length"):
        paired_t_interval([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="positive"):
        log_ratio_interval([0.0, 1.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="probability"):
        t_quantile(1.0, 3)
