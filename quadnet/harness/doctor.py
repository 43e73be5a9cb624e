"""``quadnet doctor`` and :func:`quadnet.show_config`: what this machine runs quadnet with.

It prints quadnet's version; Python's, numpy's, scipy's, pymanopt's, cvxpy's and the optional
extras' versions; the BLAS/LAPACK libraries loaded and their thread counts (threadpoolctl); the
CPU model and the instruction-set flags that select OpenBLAS's kernels; memory and resource
limits. With ``--probe`` it also runs the crash canaries, each in a child process under a
memory limit, and reports each as ``ok``, ``crashed (SIGSEGV)`` (or another signal), ``failed``
or ``too slow``:

* ``threaded dpotrf n=N``: LAPACK's Cholesky with the default BLAS threads, the call that
  OpenBLAS 0.3.30/0.3.31 crashes in on AVX-512 AMD CPUs from ``n ≈ 16,000``;
* ``blocked Cholesky n=N``: the route quadnet's direct kernel solver takes
  (``quadnet._lapack.cholesky_lower_inplace``), which must be ``ok`` on every machine;
* ``threaded dsyevd n=M``: a symmetric eigensolver with the default threads.

Nothing here raises: a probe that cannot run says why in its line.

Examples
--------
>>> info = config_info()
>>> sorted(info)[:3]
['blas', 'cpu', 'limits']
>>> info["packages"]["numpy"] != ""
True
"""

from __future__ import annotations

import os
import platform
import resource
import signal
import subprocess
import sys
import textwrap
import time

__all__ = ["PROBES", "config_info", "report", "run_probes", "show_config"]

_PACKAGES = ("numpy", "scipy", "threadpoolctl", "autograd", "pymanopt", "matplotlib", "cvxpy",
             "dask", "distributed", "tqdm", "jsonschema", "nbclient", "jupytext", "sphinx",
             "myst-nb", "xrfm", "POT", "geomstats", "mpmath")

#: CPU flags that select OpenBLAS's kernels (the rest of /proc/cpuinfo's list is not shown).
_FLAGS = ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512dq", "avx512bw", "avx512vl",
          "avx512_bf16", "avx512vnni", "amx_tile", "asimd", "sve")


def _version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"
    except Exception as exc:  # noqa: BLE001 - never fail the report
        return f"unknown ({type(exc).__name__})"


def _cpu() -> dict:
    model, flags = platform.processor() or "", set()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                key, _, val = line.partition(":")
                key = key.strip()
                if key in ("model name", "Model") and not model:
                    model = val.strip()
                elif key in ("flags", "Features") and not flags:
                    flags = set(val.split())
    except OSError:
        pass
    return {"model": model or platform.machine(), "machine": platform.machine(),
            "cores": os.cpu_count(), "flags": [f for f in _FLAGS if f in flags]}


def _memory() -> dict:
    out: dict = {}
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                k, _, v = line.partition(":")
                if k in ("MemTotal", "MemAvailable"):
                    out[k] = f"{int(v.split()[0]) / 2**20:.1f} GiB"
    except (OSError, ValueError):
        pass
    return out


def _limits() -> dict:
    out = {}
    for name in ("RLIMIT_AS", "RLIMIT_DATA", "RLIMIT_STACK"):
        try:
            soft, _ = resource.getrlimit(getattr(resource, name))
            out[name] = ("unlimited" if soft == resource.RLIM_INFINITY else
                         f"{soft / 2**30:.1f} GiB" if soft >= 2**30 else f"{soft / 2**20:.0f} MiB")
        except (AttributeError, OSError, ValueError):
            out[name] = "unknown"
    try:
        with open("/sys/fs/cgroup/memory.max") as fh:
            out["cgroup memory.max"] = fh.read().strip()
    except OSError:
        pass
    env = {k: os.environ[k] for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                      "MKL_NUM_THREADS", "OPENBLAS_CORETYPE",
                                      "QUADNET_BLAS_POLICY") if k in os.environ}
    if env:
        out["environment"] = env
    return out


def _blas() -> list:
    try:
        from threadpoolctl import threadpool_info
        return [{k: p.get(k) for k in ("user_api", "internal_api", "version", "num_threads",
                                       "threading_layer", "architecture", "filepath")}
                for p in threadpool_info()]
    except Exception as exc:  # noqa: BLE001
        return [{"error": f"{type(exc).__name__}: {exc}"}]


def config_info() -> dict:
    """Everything :func:`show_config` prints, as a JSON-serialisable dict."""
    try:
        import quadnet
        qv = quadnet.__version__
    except Exception as exc:  # noqa: BLE001
        qv = f"unknown ({exc})"
    try:
        import numpy as np  # noqa: F401 - loads numpy's BLAS so threadpoolctl sees it
        import scipy.linalg  # noqa: F401 - and scipy's
    except Exception:  # noqa: BLE001
        pass
    return {"quadnet": qv,
            "python": f"{platform.python_version()} ({platform.python_implementation()}, "
                      f"{sys.executable})",
            "platform": platform.platform(),
            "packages": {p: _version(p) for p in _PACKAGES},
            "blas": _blas(), "cpu": _cpu(), "memory": _memory(), "limits": _limits()}


#: A Gaussian kernel matrix of sparse-parity data plus ridge 1e-3 in one n x n array (the
#: direct solver's matrix), as the first lines of both Cholesky probes.
_KERNEL = """
        import numpy as np
        n = {n}
        rng = np.random.default_rng(0)
        X = rng.choice([-1.0, 1.0], size=(n, 50))
        sq = (X * X).sum(1)
        G = X @ X.T; G *= -2.0; G += sq[:, None]; G += sq[None]   # one n x n array
        np.maximum(G, 0.0, out=G); G /= -98.0; np.exp(G, out=G)
        K = G.T                           # symmetric: the transpose is its Fortran view
        K.reshape(-1, order="F")[::n + 1] += 1e-3
"""

_PROBE_CODE = {
    "threaded dpotrf": _KERNEL + """
        from scipy.linalg import lapack
        _, info = lapack.dpotrf(K, lower=1, clean=0, overwrite_a=1)
        assert info == 0, info
    """,
    "blocked Cholesky": _KERNEL + """
        from quadnet._lapack import cholesky_lower_inplace
        assert cholesky_lower_inplace(K) == 0
    """,
    "threaded dsyevd": """
        import numpy as np
        n = {n}
        A = np.random.default_rng(0).standard_normal((n, n)); A = A + A.T
        w = np.linalg.eigvalsh(A)
        assert np.isfinite(w).all()
    """,
}

#: The canaries ``--probe`` runs: (name, size keyword, default size).
PROBES = (("threaded dpotrf", "n", 16000), ("blocked Cholesky", "n", 16000),
          ("threaded dsyevd", "n", 6000))


def _limit_memory(gib: float):
    def pre():  # pragma: no cover - runs in the child
        b = int(gib * 2**30)
        try:
            resource.setrlimit(resource.RLIMIT_AS, (b, b))
        except (ValueError, OSError):
            pass
    return pre


def run_probes(*, size: int | None = None, timeout: float = 600.0,
               memory_gib: float = 8.0, out=None) -> list[dict]:
    """Run each canary of :data:`PROBES` in a child process; one dict per probe.

    ``size`` replaces the default sizes (useful for a fast look); each child gets ``timeout``
    seconds and an address-space limit of ``memory_gib`` GiB.
    """
    results = []
    env = {k: v for k, v in os.environ.items() if k != "QUADNET_BLAS_POLICY"}
    for name, key, default in PROBES:
        n = int(size or default)
        code = textwrap.dedent(_PROBE_CODE[name]).format(n=n)
        label = f"{name} {key}={n:,}"
        t0 = time.perf_counter()
        try:
            proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                  timeout=timeout, env=env, preexec_fn=_limit_memory(memory_gib))
            wall = time.perf_counter() - t0
            if proc.returncode == 0:
                status = "ok"
            elif proc.returncode < 0:
                try:
                    sig = signal.Signals(-proc.returncode).name
                except ValueError:
                    sig = f"signal {-proc.returncode}"
                status = f"crashed ({sig})"
            else:
                last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
                status = f"failed (exit {proc.returncode}: {last[:120]})"
        except subprocess.TimeoutExpired:
            wall, status = time.perf_counter() - t0, f"too slow (> {timeout:g} s)"
        except OSError as exc:
            wall, status = time.perf_counter() - t0, f"could not start ({exc})"
        row = {"probe": label, "status": status, "wall_s": round(wall, 2)}
        results.append(row)
        if out is not None:
            print(f"  {label:<28} {status} ({wall:.1f} s)", file=out, flush=True)
    return results


def _render(info: dict) -> str:
    lines = [f"quadnet {info['quadnet']}", f"Python {info['python']}",
             f"platform {info['platform']}", "", "packages:"]
    lines += [f"  {k:<14} {v}" for k, v in info["packages"].items()]
    lines += ["", "BLAS / LAPACK (threadpoolctl):"]
    for p in info["blas"]:
        if "error" in p:
            lines.append(f"  {p['error']}")
            continue
        lines.append(f"  {p.get('internal_api')} {p.get('version')} "
                     f"({p.get('user_api')}, {p.get('num_threads')} threads, "
                     f"{p.get('threading_layer')}, kernel {p.get('architecture')})")
        lines.append(f"    {p.get('filepath')}")
    cpu = info["cpu"]
    lines += ["", f"CPU: {cpu['model']} ({cpu['machine']}, {cpu['cores']} logical cores)",
              f"  flags: {' '.join(cpu['flags']) or 'none of ' + ', '.join(_FLAGS[:4])}", "",
              "memory: " + ", ".join(f"{k} {v}" for k, v in info["memory"].items()),
              "limits: " + ", ".join(f"{k} {v}" for k, v in info["limits"].items()
                                     if k != "environment")]
    if "environment" in info["limits"]:
        lines.append("environment: " + " ".join(f"{k}={v}" for k, v in
                                                 info["limits"]["environment"].items()))
    return "\n".join(lines) + "\n"


def report(*, probe: bool = False, size: int | None = None, timeout: float = 600.0,
           out=None) -> dict:
    """:func:`config_info` (and, with ``probe``, :func:`run_probes`), printed to ``out`` as it
    is gathered when ``out`` is a stream; the whole report as a dict."""
    info = config_info()
    if out is not None:
        print(_render(info), end="", file=out)
    if probe:
        if out is not None:
            print("\nprobes (each in a child process):", file=out, flush=True)
        info["probes"] = run_probes(size=size, timeout=timeout, out=out)
    return info


def show_config(*, probe: bool = False, file=None) -> dict:
    """Print quadnet's configuration (versions, BLAS, CPU, memory) and return it as a dict.

    With ``probe=True`` the crash canaries of :func:`run_probes` also run (minutes; each in a
    child process, so a crash is reported, never suffered).
    """
    return report(probe=probe, out=sys.stdout if file is None else file)
