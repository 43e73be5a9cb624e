"""``register`` makes the check's result: ``run(ctx, res)`` and the older ``run(ctx) ->
CheckResult``, told apart by the signature; what either may return, and the errors that name
the check, its origin and its run function otherwise."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import quadnet.harness as harness
from quadnet.harness import CheckContext, CheckError, CheckResult, register, run_check
from quadnet.harness._registry import registry

CLAIM = "tr(U U^T) equals the squared Frobenius norm of U"


@pytest.fixture
def names():
    """Names registered by a test, forgotten after it."""
    made: list[str] = []
    yield made
    for n in made:
        registry.remove_check(n)


def _trace_row(ctx, res):
    U = ctx.rng("U").standard_normal((6, 2))
    # independent reference: the sum of squares, against the trace of the Gram matrix
    res.add("trace identity", abs(np.trace(U @ U.T) - np.sum(U * U)), 1e-12,
            kind="theorem", source="a textbook identity")


@pytest.mark.parametrize("returns", ["nothing", "res"])
def test_two_argument_form_gets_a_result_with_the_registered_name_and_claim(names, returns):
    name = f"_treg-two-{returns}"
    names.append(name)
    seen = []

    @register(name, CLAIM)
    def run(ctx, res):
        seen.append(res)
        _trace_row(ctx, res)
        return res if returns == "res" else None

    res = run_check(name, CheckContext(seed=4, quick=True))
    assert isinstance(res, CheckResult) and res is seen[0]
    assert (res.name, res.claim, res.status) == (name, CLAIM, "PASS")
    assert res.origin == {"kind": "python", "module": run.__module__}  # not of quadnet
    # called directly, the registered function is run(ctx) -> CheckResult as well
    direct = run(CheckContext(seed=4, quick=True))
    assert direct is not res and direct.name == name
    assert [r.measured for r in direct.rows] == [r.measured for r in res.rows]  # same seed
    # a result given by the caller is the one filled
    mine = CheckResult(name, CLAIM)
    assert run(CheckContext(seed=4), mine) is mine and len(mine.rows) == 1


def test_one_argument_form_keeps_working(names):
    name = "_treg-one"
    names.append(name)

    @register(name, CLAIM)
    def run(ctx):
        res = CheckResult(name, CLAIM)
        _trace_row(ctx, res)
        return res

    both = [run_check(name, CheckContext(seed=2)), run(CheckContext(seed=2))]
    assert [r.status for r in both] == ["PASS", "PASS"]
    assert both[0].rows[0].measured == both[1].rows[0].measured
    assert registry.get_check(name).run.__wrapped__.__name__ == "run"
    with pytest.raises(TypeError, match=r"_treg-one.*takes \(ctx\) and makes its own "
                       r"CheckResult; call it as run\(ctx\)"):
        run(CheckContext(), CheckResult(name, CLAIM))


def test_one_argument_run_returning_something_else_names_the_function(names):
    names.append("_treg-dict")

    @register("_treg-dict", "returns a dict")
    def run_dict(ctx):
        return {"rows": []}

    fn = (r"test_register\.test_one_argument_run_returning_something_else_names_the_function"
          r"\.<locals>\.run_dict")
    for call in (lambda: run_check("_treg-dict"), lambda: run_dict(CheckContext())):
        with pytest.raises(CheckError, match=r"check '_treg-dict' \(module .*test_register\) "
                           r"returned dict, not a CheckResult: its run function " + fn +
                           r" must return the CheckResult it builds"):
            call()


def test_one_argument_run_returning_another_checks_result_names_the_function(names):
    names.append("_treg-other")

    @register("_treg-other", "returns a result of another name")
    def run_other(ctx):
        return CheckResult("something-else", "a claim")

    with pytest.raises(CheckError, match=r"check '_treg-other' \(module .*\) returned a result "
                       r"named 'something-else': its run function .*\.run_other must"):
        run_check("_treg-other")
    assert issubclass(CheckError, RuntimeError)  # as the name check raised before


@pytest.mark.parametrize("out, what", [(3, r"returned int, not a CheckResult"),
                                       (CheckResult("x", "c"), r"returned a result named 'x'")])
def test_two_argument_run_returning_something_else_names_the_function(names, out, what):
    names.append("_treg-two-bad")

    @register("_treg-two-bad", "returns the wrong thing")
    def run_bad(ctx, res):
        return out

    with pytest.raises(CheckError, match=what + r": its run function .*\.run_bad must fill the "
                       r"res it is given and return it or None"):
        run_check("_treg-two-bad")


@pytest.mark.parametrize("src", ["def run(ctx, res, extra): pass",
                                 "def run(ctx, *, verbose): pass",
                                 "def run(a, b, c, d=1): pass"])
def test_other_signatures_are_refused_when_decorated(names, src):
    scope: dict = {}
    exec(src, scope)  # noqa: S102 - a function of a given signature
    with pytest.raises(TypeError, match=r"register\('_treg-sig'\): the check function "
                       r".*run must take \(ctx, res\) or \(ctx\), but its signature is \("):
        register("_treg-sig", "a claim")(scope["run"])
    assert registry.get_check("_treg-sig") is None


def test_defaults_after_ctx_keep_the_one_argument_form(names):
    """``run(ctx, verbose=False)`` is the old form: only required arguments count."""
    names.append("_treg-default")

    @register("_treg-default", "a claim")
    def run(ctx, verbose=False):
        res = CheckResult("_treg-default", "a claim")
        res.report("verbose", float(verbose))
        return res

    assert run_check("_treg-default").rows[0].measured == 0.0


def test_registering_one_function_twice_is_one_check(names):
    names.append("_treg-twice")

    def run(ctx, res):
        res.report("one", 1.0)

    a = register("_treg-twice", "a claim")(run)
    b = register("_treg-twice", "a claim")(run)  # e.g. a cell re-run in a notebook
    assert a is not b and a.__wrapped__ is b.__wrapped__ is run
    assert registry.get_check("_treg-twice").run is b

    def other(ctx, res):  # pragma: no cover - refused
        pass

    with pytest.raises(ValueError, match="check '_treg-twice' is registered twice"):
        register("_treg-twice", "a claim")(other)


def test_a_file_check_in_the_new_form_runs_and_its_wrong_return_names_its_file(tmp_path):
    path = tmp_path / "two_form_checks.py"
    path.write_text(textwrap.dedent('''
        import numpy as np
        from quadnet.harness import register

        @register("_tfile-two", "tr(U U^T) equals the squared Frobenius norm of U")
        def run(ctx, res):
            U = ctx.rng("U").standard_normal((6, 2))
            res.add("trace identity", abs(np.trace(U @ U.T) - np.sum(U * U)), 1e-12,
                    kind="theorem", source="a textbook identity")

        @register("_tfile-bad", "returns a list")
        def run_bad(ctx, res):
            return []
        '''))
    try:
        assert harness.load_checks(path) == ["_tfile-two", "_tfile-bad"]
        res = run_check("_tfile-two", CheckContext(quick=True))
        assert res.status == "PASS" and res.origin["kind"] == "file"
        assert res.claim == "tr(U U^T) equals the squared Frobenius norm of U"
        with pytest.raises(CheckError, match=r"check '_tfile-bad' \(file .*two_form_checks\.py\) "
                           r"returned list, not a CheckResult: its run function "
                           r"two_form_checks\.run_bad must fill the res"):
            run_check("_tfile-bad")
    finally:
        harness.unload_checks(path)
