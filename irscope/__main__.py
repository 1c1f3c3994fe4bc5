from irscope.cli.main import main

raise SystemExit(main())
