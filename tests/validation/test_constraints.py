"""The declarative constraint table (quadnet._validation.validate_params) itself."""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

from quadnet import _validation as v


def _table():
    return {"U": v.Factor(full_rank=False), "xi": v.Array(shape=("d", "r")),
            "times": v.TimeGrid(), "rtol": v.Real(0, 1, closed="neither"),
            "steps": v.Integer(0), "method": v.Options("a", "b"), "flag": v.Boolean(),
            "M": v.Optional(v.Symmetric("d", psd=True)), "seed": v.Seed()}


@v.validate_params(_table())
def _target(U, xi, times, *, rtol=1e-10, steps=3, method="a", flag=False, M=None, seed=None):
    """Toy target.

    Parameters
    ----------
    U : array

    Raises
    ------
    TypeError, ValueError
        For bad arguments.
    KeyError
        Never.

    Examples
    --------
    >>> 1
    1
    """
    return U + xi


def _valid():
    return {"U": np.ones((3, 2)), "xi": np.zeros((3, 2)), "times": [0.0, 1.0]}


def test_signature_and_defaults_are_kept():
    assert str(inspect.signature(_target)) == (
        "(U, xi, times, *, rtol=1e-10, steps=3, method='a', flag=False, M=None, seed=None)")
    assert np.array_equal(_target(**_valid()), np.ones((3, 2)))


def _valid_values():
    return _valid() | {"rtol": 1e-10, "steps": 3, "method": "a", "flag": False, "M": None,
                       "seed": 0}


@pytest.mark.parametrize("arg", sorted(_table()))
def test_every_generated_bad_value_is_refused_naming_the_callable_and_the_argument(arg):
    """The one generator (v.bad_values): each bad value of each entry raises its error type,
    and the message starts with the callable's name and names the argument."""
    constraint = _table()[arg]
    cases = list(v.bad_values(constraint, arg, _valid_values()[arg],
                              qualname=_target.__qualname__, optional=arg == "M"))
    assert len(cases) >= 3
    for bad in cases:
        kwargs = _valid() | {arg: bad.value}
        if not bad.refused:         # an int or bool array: accepted, or refused naming arg
            try:
                _target(**kwargs)
            except bad.error as exc:
                assert re.search(bad.match, str(exc)), (bad.label, str(exc))
            continue
        with pytest.raises(bad.error) as info:
            _target(**kwargs)
        assert re.search(bad.match, str(info.value)), (bad.label, str(info.value))
        if bad.label.startswith("table-"):
            assert str(info.value).startswith("_target: "), str(info.value)


def test_an_estimator_error_starts_with_the_class_name():
    class Machine:
        _parameter_constraints = {"iters": v.Integer(0)}

        def __init__(self, iters=1):
            self.iters = iters

        @v.fit_context
        def fit(self):
            return self

    with pytest.raises(ValueError, match=r"^Machine: iters must be >= 0, got -1$"):
        Machine(iters=-1).fit()


def test_a_constructor_error_starts_with_the_class_name():
    class Box:
        @v.validate_params({"size": v.Integer(1)})
        def __init__(self, size):
            self.size = size

    with pytest.raises(ValueError, match=r"^Box: size must be >= 1, got 0$"):
        Box(0)
    with pytest.raises(TypeError, match=r"^Box: size must be an integer, got str$"):
        Box("3")


def test_symbolic_sizes_bind_across_arguments():
    with pytest.raises(ValueError, match=r"xi has d = 4, but U has d = 3"):
        _target(np.ones((3, 2)), np.zeros((4, 2)), [0, 1])
    with pytest.raises(ValueError, match=r"M has d = 2, but U has d = 3"):
        _target(**_valid(), M=np.eye(2))


def test_time_grid_rejects_negative_and_decreasing_times():
    with pytest.raises(ValueError, match=r"times must be >= 0"):
        _target(np.ones((3, 2)), np.zeros((3, 2)), [-1.0, 1.0])
    with pytest.raises(ValueError, match=r"times must be strictly increasing"):
        _target(np.ones((3, 2)), np.zeros((3, 2)), [0.0, 2.0, 1.0])


def test_psd_constraint_refuses_an_indefinite_matrix():
    with pytest.raises(ValueError, match=r"M must be positive semidefinite"):
        _target(**_valid(), M=np.diag([1.0, 1.0, -0.5]))


def test_raises_section_is_generated_from_the_table():
    doc = _target.__doc__
    assert "``rtol``: a finite real number in (0, 1)" in doc
    assert "For bad arguments." not in doc
    assert "KeyError" in doc and "Examples" in doc
    # the numpydoc sections stay in order
    assert doc.index("Raises") < doc.index("KeyError") < doc.index("Examples")


def test_nested_validated_calls_do_not_validate_again():
    @v.validate_params({"x": v.Array(ndim=1)})
    def inner(x):
        return x.sum()

    @v.validate_params({"x": v.Array(ndim=1)})
    def outer(x):
        return sum(inner(x) for _ in range(5))

    with v.count_validations() as seen:
        assert outer([1.0, 2.0]) == 15.0
    assert seen == [(outer.__qualname__, "x")]
    # called on its own, the inner one validates
    with v.count_validations() as seen:
        inner([1.0])
    assert seen == [(inner.__qualname__, "x")]


def test_nested_flag_is_reset_after_an_error():
    @v.validate_params({"x": v.Real(0)})
    def boom(x):
        raise RuntimeError("inside")

    with pytest.raises(RuntimeError, match="inside"):
        boom(1.0)
    with pytest.raises(ValueError, match=r"x must be finite and >= 0, got -1.0"):
        boom(-1.0)


def test_overflow_from_extreme_finite_input_is_refused_naming_it():
    @v.validate_params({"eta": v.Real(0, None, closed="neither")})
    def step(eta):
        return np.exp(np.array([eta]))

    assert step(1.0)[0] == pytest.approx(np.e)
    with pytest.raises(v.NonFiniteResultError, match=r"extreme arguments: eta=1e\+300"):
        step(1e300)


def test_opting_out_of_the_result_check_returns_inf():
    @v.validate_params({"x": v.Real()}, finite_result=False)
    def f(x):
        return np.inf

    assert f(1.0) == np.inf


def test_variadic_callables_use_the_generic_binder():
    @v.validate_params({"a": v.Integer(1)})
    def f(a, *rest, **kw):
        return a + len(rest) + len(kw)

    assert f(1, 2, 3, z=4) == 4
    with pytest.raises(ValueError, match=r"a must be >= 1, got 0"):
        f(0)


def test_an_unknown_constraint_name_is_refused_at_decoration():
    with pytest.raises(TypeError, match=r"no parameter named nope"):
        v.validate_params({"nope": v.Real()})(lambda x: x)


def test_the_wrapper_binds_like_python_and_keeps_the_signature():
    """The closure of validate_params binds arguments by hand: every way of passing them that
    Python accepts gives the same converted call, and the calls Python refuses are refused
    with Signature.bind's TypeError naming the callable."""
    @v.validate_params({"a": v.Real(), "b": v.Integer(0)})
    def f(a, b=1, *, c=None):
        return a, b, c

    assert f(2, 3) == f(2, b=3) == f(a=2, b=3) == f(b=3, a=2) == (2.0, 3, None)
    assert f(2) == (2.0, 1, None) and f(2, c="x") == (2.0, 1, "x")
    assert type(f(2)[0]) is float
    for call, match in [(lambda: f(), r"f\(\): missing a required argument: 'a'"),
                        (lambda: f(1.0, 2, 3), r"f\(\): too many positional arguments"),
                        (lambda: f(1.0, a=2.0), r"f\(\): multiple values for argument 'a'"),
                        (lambda: f(1.0, d=3), r"f\(\): got an unexpected keyword argument 'd'")]:
        with pytest.raises(TypeError, match=match):
            call()
    assert str(inspect.signature(f)) == "(a, b=1, *, c=None)"
    assert f.__name__ == "f" and f.__wrapped__(1, 2) == (1, 2, None)

    @v.validate_params({"a": v.Real()})
    def g(a, /, b=0):
        return a, b

    assert g(1, 2) == g(1, b=2) == (1.0, 2)
    with pytest.raises(TypeError, match=r"g\(\):"):
        g(a=1)


def test_an_estimator_table_is_checked_in_fit_only():
    class Machine:
        _parameter_constraints = {"iters": v.Integer(0), "warm": v.Integer(0)}
        _parameter_relations = (v.Relation(("iters", "warm"), lambda a: None if a["warm"] <=
                                           a["iters"] else "warm must be <= iters",
                                           "warm <= iters"),)

        def __init__(self, iters=1, warm=0):
            self.iters, self.warm = iters, warm

        @v.fit_context
        def fit(self):
            return v.nested()

    m = Machine(iters=-1)                       # stored, not checked
    with pytest.raises(ValueError, match=r"iters must be >= 0, got -1"):
        m.fit()
    with pytest.raises(ValueError, match=r"warm must be <= iters"):
        Machine(iters=1, warm=2).fit()
    with v.count_validations() as seen:
        assert Machine().fit() is True         # the body runs nested
    assert seen == [(Machine.__qualname__, "iters"), (Machine.__qualname__, "warm")]
