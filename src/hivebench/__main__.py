from hivebench.cli import main

raise SystemExit(main())
