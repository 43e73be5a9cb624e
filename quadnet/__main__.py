from quadnet.harness.cli import main

raise SystemExit(main())
