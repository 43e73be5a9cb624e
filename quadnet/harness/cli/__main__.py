"""``python -m quadnet.harness.cli ARGS``: the same as ``quadnet ARGS``."""

from quadnet.harness.cli import main

if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
