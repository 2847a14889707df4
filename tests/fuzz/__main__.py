"""`python -m tests.fuzz --seed S --cases N --out DIR`: the long campaign (see `campaign`)."""

from .campaign import main

raise SystemExit(main())
